/*
 * xxl_lcp.h — the LCP array of a suffix array, and the repeated substrings
 * it reveals, over texts larger than memory.
 *
 * LCP[r] is the length of the common prefix of the suffixes of ranks r-1
 * and r (0 for the first), never running past the end of a document
 * (xxl_docs.h) when the text is a corpus of documents.
 *
 * Method: the permuted LCP with irreducible values ([KMP09] "Permuted
 * longest-common-prefix array", the Φ method of Kärkkäinen, Manzini and
 * Puglisi that EM-SΦ [KK14] takes to external memory).  With Φ(i) the
 * suffix ranked just before i, PLCP[i] = PLCP[i-1] - 1 whenever
 * T[i-1] = T[Φ(i)-1] (i is reducible); only at irreducible positions — as
 * many as the BWT has runs — are two suffixes compared, and their lengths
 * sum to at most 2n log n.  Whether i is irreducible is known in rank order
 * from the preceding bytes, which the suffix sorter hands out with the
 * positions (or, for a stored suffix array, one text scan derives).
 *   1. rank order: (rank, Φ(i), irreducible) are permuted to text order
 *      (scatter D); irreducible pairs become comparison requests.
 *   2. the requests are answered (lcp_resolve.c): when the text sits in
 *      memory (in the text store, or, deferring, read in at run when it
 *      fits in half of the budget), directly; else in rounds that sort the requests by Φ(i),
 *      copy a chunk of the text at Φ(i) in one sequential pass, sort by i
 *      and compare in a second pass (48, then 512 bytes), and the few
 *      survivors (common prefixes of more than 560 bytes) by random reads;
 *      the requests wait in a spool, so every sort knows its count and is
 *      a distribution sort where it fits.
 *   3. text order: PLCP from the answers and the reducible rule, permuted
 *      back to rank order with the positions (scatter E).
 * I/O: two permutations of n records of 3-4 fields, the requests' sorts
 * and 2 scans of the text per round.  The text lives in an
 * xxl_text_store (xxl_text_store.h) that gets a quarter of the budget (a
 * thirty-second when deferring).  Deferring, the suffix array in rank
 * order also goes through a small store read in order (a write and a read
 * of n records of a position and a byte), so that the suffix sorter keeps
 * nearly the whole budget.
 *
 * Repeats (min_length > 0): maximal runs of ranks whose LCP is at least
 * min_length are the suffixes sharing their first min_length bytes; a run
 * of at least min_count suffixes makes each of their windows [pos, pos +
 * min_length) a repeat that occurs run-size times.  The windows are sorted
 * by position and overlapping ones merge into ranges, each reporting the
 * fewest occurrences among its windows.
 */
#ifndef XXL_LCP_H
#define XXL_LCP_H

#include "core/text/xxl_docs.h"
#include "core/text/xxl_suffix.h"

typedef struct xxl_lcp_config
{
	xxl_resources res;
	const xxl_docs *docs;		/* documents of the text, or NULL: one text */
	uint64_t	internal_max;	/* testing: 0 = compare in memory when the
								 * text store holds the text there; k > 0 =
								 * only for texts of at most k bytes */
	bool		defer;			/* another engine (the suffix sorter feeding it)
								 * uses the budget until xxl_lcp_run, all but
								 * xxl_lcp_defer_memory(): the suffix array is
								 * spooled to disk until then, and every part
								 * opens at run */
	uint64_t	min_length;		/* > 0: repeats (xxl_lcp_next_repeat) */
	uint64_t	min_count;		/* repeats: at least 2 */
} xxl_lcp_config;

#define XXL_LCP_ROUNDS 3		/* rounds of chunked comparisons (lcp_resolve.c) */

typedef struct xxl_lcp_stats
{
	uint64_t	n;
	uint64_t	irreducible;	/* positions whose PLCP was compared */
	uint64_t	irreducible_sum;	/* the sum of their values */
	uint64_t	max_lcp;
	bool		direct;			/* compared in memory */
	bool		text_on_disk;
	int			rounds;			/* external comparison rounds run */
	uint64_t	round_resolved[XXL_LCP_ROUNDS];	/* requests answered by each round */
	uint64_t	random_resolved;	/* ... by random reads after them */
	bool		derived_prev;	/* a stored suffix array: preceding bytes derived */
	int			output_slots;	/* batches the output's worker reads ahead (0: none) */
	int			perms_split;	/* permutations (to text order and back) charged by phase */
	int			perms_sorted;	/* ... sorted by slot: too large for a scatter */
	uint64_t	repeat_groups;	/* runs of at least min_count suffixes */
	uint64_t	repeat_windows;
	uint64_t	repeat_ranges;
	uint64_t	bytes_read;		/* spill I/O, the text store's included */
	uint64_t	bytes_written;
	uint64_t	io_wait_ns;
	bool		io_direct;
	uint64_t	memory_peak;	/* the budget's high-water mark (both parts) */
	uint64_t	memory_limit;
	uint64_t	lcp_ns;			/* from creation; deferring, from xxl_lcp_run */
} xxl_lcp_stats;

typedef struct xxl_lcp xxl_lcp;

xxl_lcp    *xxl_lcp_create(const xxl_lcp_config *cfg, xxl_error *err);
/* The text first, in order (body bytes of all documents back to back). */
xxl_status	xxl_lcp_put_text(xxl_lcp *l, const void *bytes, size_t len);

/*
 * Then the suffix array, either in rank order with the preceding bytes
 * (prev: T[pos-1], or -1 when unknown: the text's or a document's start,
 * or a byte the sorter could not name), or as (rank, pos) pairs in any
 * order (1-based ranks; the preceding bytes are derived).  Positions are
 * 0-based.  Do not mix the two.
 */
xxl_status	xxl_lcp_put_sa(xxl_lcp *l, uint64_t pos, int prev);
/* The same with rem, the bytes from pos to its document's end: no lookup in the map. */
xxl_status	xxl_lcp_put_sa_rem(xxl_lcp *l, uint64_t pos, int prev, uint64_t rem);
xxl_status	xxl_lcp_put_ranked(xxl_lcp *l, uint64_t rank, uint64_t pos);
/* Compute (the repeats too, in repeats mode). */
xxl_status	xxl_lcp_run(xxl_lcp *l);

/* Rank order: the next suffix's position and LCP; 1, 0 at the end, < 0 on error. */
int			xxl_lcp_next(xxl_lcp *l, uint64_t *pos, uint64_t *lcp);
/*
 * The same, and over a paged document map also the suffix's document id
 * and offset in it (*have_doc; else the caller looks them up).
 */
int			xxl_lcp_next_doc(xxl_lcp *l, uint64_t *pos, uint64_t *lcp, bool *have_doc,
							 uint64_t *offset, int64_t *id);
/* Repeats mode, text order: the next range; 1, 0 at the end, < 0 on error. */
int			xxl_lcp_next_repeat(xxl_lcp *l, uint64_t *start, uint64_t *length,
								uint64_t *occurrences);

const xxl_error *xxl_lcp_error(const xxl_lcp *l);
void		xxl_lcp_stats_get(const xxl_lcp *l, xxl_lcp_stats *stats);
/* Removes spill files and frees everything; safe at any point. */
void		xxl_lcp_destroy(xxl_lcp *l);
/* The smallest budget xxl_lcp_create accepts. */
size_t		xxl_lcp_min_memory(void);
/* What a deferring operator of this budget holds before xxl_lcp_run. */
size_t		xxl_lcp_defer_memory(size_t memory);

#endif							/* XXL_LCP_H */
