/*
 * xxl_docs.h — the documents of a corpus with ids: where each one starts in
 * the concatenation of their bodies, its id, and lookups from a position to
 * its document, in two position spaces:
 *   body space: the bodies back to back (what SQL calls pos, 0-based here);
 *   separated space: every document followed by one separator, the text the
 *   suffix sorter sees when documents must not run into each other, so that
 *   document k's byte at offset o sits at start(k) + k + o and its separator
 *   at start(k) + k + len(k).
 * Lookups are O(1) expected: a directory of one entry per bucket of about
 * the mean document length points into the start array, and a binary search
 * finishes within the bucket.  Memory: 24 bytes per document while they fit
 * the limit given at creation.  Past it, a map made with resources moves its
 * entries (16 bytes a document) to page files in the resources' spill
 * directories, with an index of their pages' starts (docs_paged.c), read
 * through caches within the limit: a lookup then costs a page read where
 * the entries' cache misses.
 * One made without resources fails with XXL_ENOMEM past the limit.
 *
 * A paged read that fails does not stop a lookup: it answers harmless
 * values, and every user checks xxl_docs_failed before it hands out what
 * it found.  Lookups come from the owner thread only.
 */
#ifndef XXL_DOCS_H
#define XXL_DOCS_H

#include "core/xxl_common.h"
#include "core/xxl_io.h"

typedef struct xxl_docs xxl_docs;

/* Within the limit only. */
xxl_docs   *xxl_docs_create(size_t limit, xxl_error *err);
/* Paged past the limit (at least 128 kB; below, as xxl_docs_create). */
xxl_docs   *xxl_docs_create_paging(size_t limit, const xxl_resources *res, xxl_error *err);
/* Append the next document: its id and body length in bytes. */
xxl_status	xxl_docs_add(xxl_docs *d, int64_t id, uint64_t len);
/* No more documents: build the lookup directories. */
xxl_status	xxl_docs_finish(xxl_docs *d);
const xxl_error *xxl_docs_error(const xxl_docs *d);
/* Whether a paged read failed (the error in xxl_docs_error). */
bool		xxl_docs_failed(const xxl_docs *d);
bool		xxl_docs_paged(const xxl_docs *d);
/* Paged: bytes read (pages missed) and written, and the caches' misses. */
void		xxl_docs_io(const xxl_docs *d, uint64_t *read, uint64_t *written, uint64_t *misses);
void		xxl_docs_destroy(xxl_docs *d);

uint64_t	xxl_docs_count(const xxl_docs *d);
/* Total body bytes. */
uint64_t	xxl_docs_bytes(const xxl_docs *d);
size_t		xxl_docs_memory(const xxl_docs *d);

/* Document k's body start, end (exclusive) and id. */
uint64_t	xxl_docs_start(const xxl_docs *d, uint64_t k);
uint64_t	xxl_docs_end(const xxl_docs *d, uint64_t k);
int64_t		xxl_docs_id(const xxl_docs *d, uint64_t k);

/* The document holding body position p (p < xxl_docs_bytes). */
uint64_t	xxl_docs_find(const xxl_docs *d, uint64_t p);

/*
 * Separated position q: false if q is a separator; else true with its body
 * position and document.
 */
bool		xxl_docs_from_separated(const xxl_docs *d, uint64_t q, uint64_t *body,
									uint64_t *doc);

/*
 * A suffix array's positions resolved to documents in rank order
 * (docs_resolve.c), for a paged map: two permutations instead of a random
 * lookup a suffix.  The positions (separated space, every one of them,
 * separators' too) come in rank order with their preceding bytes, into a
 * spool of spool_memory (at least xxl_docs_resolver_min_spool(), from the
 * map's spare: the suffix sorter still holds its budget then); run takes
 * run->memory; next hands out the documents' suffixes in rank order.
 */
typedef struct xxl_docs_resolver xxl_docs_resolver;

typedef struct xxl_docs_suffix
{
	uint64_t	body;			/* body position */
	uint64_t	offset;			/* from its document's start */
	uint64_t	rem;			/* bytes from it to its document's end (> 0) */
	int64_t		id;				/* its document's id */
	int			prev;			/* as put (xxl_sa_next_prev's), 0 as -1 */
} xxl_docs_suffix;

xxl_docs_resolver *xxl_docs_resolver_create(const xxl_docs *d, const xxl_resources *run,
											size_t spool_memory, xxl_error *err);
size_t		xxl_docs_resolver_min_spool(void);
xxl_status	xxl_docs_resolver_put(xxl_docs_resolver *r, uint64_t q, int prev);
xxl_status	xxl_docs_resolver_run(xxl_docs_resolver *r);
/* 1 with *s, 0 at the end, -1 on error. */
int			xxl_docs_resolver_next(xxl_docs_resolver *r, xxl_docs_suffix *s);
const xxl_error *xxl_docs_resolver_error(const xxl_docs_resolver *r);
/* Spill bytes so far, and the high-water mark of its memory (spool and run). */
void		xxl_docs_resolver_io(const xxl_docs_resolver *r, uint64_t *read, uint64_t *written,
								 size_t *peak);
void		xxl_docs_resolver_destroy(xxl_docs_resolver *r);

/* Of the map's limit, what it leaves free (for a resolver's spool). */
size_t		xxl_docs_spare(const xxl_docs *d);

#endif							/* XXL_DOCS_H */
