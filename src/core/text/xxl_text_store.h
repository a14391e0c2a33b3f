/*
 * xxl_text_store.h — a text with random access by position, for pattern
 * search over a suffix array (xxl.locate): the bytes arrive in order, stay
 * in memory while they fit a share of the budget, and go to a spill file of
 * small blocks when they do not; afterwards any window can be compared with
 * a pattern, reading only the blocks the window touches (a few cached).
 *
 * Blocks are small (at most 64 kB) because reads are random: a binary
 * search touches O(log n) windows, each of them about one block.  The LCP
 * operator reads through it too: windows at increasing positions (one
 * block read each) and common prefixes of two suffixes.
 */
#ifndef XXL_TEXT_STORE_H
#define XXL_TEXT_STORE_H

#include "core/text/xxl_suffix.h"

typedef struct xxl_text_store xxl_text_store;

typedef struct xxl_text_store_stats
{
	uint64_t	n;
	bool		on_disk;
	size_t		block_size;
	uint64_t	bytes_read;		/* spill I/O */
	uint64_t	bytes_written;
	uint64_t	block_reads;	/* random block reads (cache misses) */
	uint64_t	windows;		/* compare calls */
	uint64_t	memory_peak;
	uint64_t	memory_limit;
} xxl_text_store_stats;

/* Uses cfg's memory, disk and cancel fields. */
xxl_text_store *xxl_text_store_create(const xxl_sa_config *cfg, xxl_error *err);
xxl_status	xxl_text_store_put(xxl_text_store *s, const void *bytes, size_t len);
/* End of text: flush what is buffered; reads may follow. */
xxl_status	xxl_text_store_finish(xxl_text_store *s);
uint64_t	xxl_text_store_size(const xxl_text_store *s);

/*
 * Compare the suffix T[pos..n) with pattern p[0..len), looking at no more
 * than len bytes of the suffix: *cmp < 0 if the suffix sorts before every
 * string starting with p (a suffix that is a proper prefix of p is
 * smaller), 0 if it starts with p, > 0 if it sorts after them.
 */
xxl_status	xxl_text_store_compare(xxl_text_store *s, uint64_t pos, const unsigned char *p,
								   size_t len, int *cmp);
/* Copy up to len bytes from pos into buf; *got is less than len only at the end. */
xxl_status	xxl_text_store_read(xxl_text_store *s, uint64_t pos, void *buf, size_t len,
								size_t *got);
/*
 * The bytes before pos will not be read again (after finish): the whole
 * blocks below it (all of them at the end of the text) give their memory or
 * spill space back (on disk, by extents of 1 MB); reading them is an error
 * (XXL_EINVAL).
 */
void		xxl_text_store_forget(xxl_text_store *s, uint64_t pos);
/* *m: the length of the common prefix of T[i..] and T[j..], at most limit. */
xxl_status	xxl_text_store_common(xxl_text_store *s, uint64_t i, uint64_t j, uint64_t limit,
								  uint64_t *m);
const xxl_error *xxl_text_store_error(const xxl_text_store *s);
void		xxl_text_store_stats_get(const xxl_text_store *s, xxl_text_store_stats *st);
/* Removes the spill file and frees everything; safe at any point. */
void		xxl_text_store_destroy(xxl_text_store *s);

#endif							/* XXL_TEXT_STORE_H */
