/*
 * sa_induce_internal.h — the top level of the suffix array by induced sorting
 * (SA-IS, Nong, Zhang and Chan 2009, in external memory after eSAIS,
 * Bingmann, Fischer and Osipov 2013), with external DC3 (dc3_level.c) on
 * the reduced string below.
 *
 * Suffix i is S-type if it is smaller than suffix i+1, else L-type; an
 * S-suffix whose predecessor is L-type is an LMS suffix.  Between two
 * consecutive LMS positions q < p the types are S^a L^b: the segment of p,
 * T[q..p-1] (the first segment starts at 0).  The $ at n is an LMS suffix.
 *
 *  1. one scan of the text (by runs of equal characters, which share a
 *     type) spools every LMS position's segment, and puts each LMS
 *     substring T[q..p] (the segment of p and T[p]) with its types into a
 *     distribution sort of 8-byte keys (longer ones into a sorter of
 *     variable-length records);
 *  2. the sorted substrings are named; names in text order are the reduced
 *     string, whose suffix order is the LMS suffixes' order: if the names
 *     are unique they are the ranks, else DC3 sorts the reduced string's
 *     suffixes (an external level 1, as if its parent were DC3's level 0)
 *     and their ranks are permuted into text order;
 *  3. the segments are permuted by their LMS suffix's rank;
 *  4. the L-pass: buckets in increasing order of their first character; a
 *     bucket's L-suffixes come from its queue, each putting its predecessor
 *     (if L-type) into the queue of the predecessor's character; then the
 *     bucket's LMS suffixes put their predecessors.  Every item carries the
 *     characters it still needs (the rest of its L-run and its S-run), so no
 *     pass reads the text.  The L-suffixes are stacked in order;
 *  5. the S-pass: buckets in decreasing order; a bucket's S-suffixes come
 *     from its queue, then its L-suffixes from the stack backwards; each puts
 *     its predecessor, if S-type, into that character's queue.  Suffixes
 *     come out largest first onto a stack, which the output reads
 *     backwards.
 *
 * Steps 1-3 are in sa_induce_lms.c, the passes and the entry points in
 * sa_induce.c.
 *
 * Queues and the stack (is_pages.c) hold a page per bucket.  The scan gives
 * up, and DC3 builds the whole array, where induced sorting would not pay:
 * a segment longer than a page holds, or items whose carried characters
 * would add up to more than CARRY_LIMIT bytes per text byte (long runs:
 * each item of a run carries the rest of it).
 */
#ifndef XXL_SA_INDUCE_INTERNAL_H
#define XXL_SA_INDUCE_INTERNAL_H

#include "core/text/dc3_internal.h"
#include "core/text/is_pages.h"

#include <stdlib.h>
#include <string.h>

/* Carried characters per text character beyond which DC3 is used. */
#define CARRY_LIMIT 8
/* Share of the pool the queues' pages may take. */
#define QUEUE_PCT 30
#define SHARE_SORT_PCT 50
#define SHARE_SCATTER_PCT 25
#define SHARE_SEGMENTS_PCT 45
#define SHARE_LONG_PCT 10
/* a segment: [p][T[p]][T[q-1], 0 if q = 0][a][b][S-run][L-run] */
#define SEG_HEAD(is) ((size_t) (is)->pw + 2 * (is)->cw + 4)
#define SEG_A(is) ((size_t) (is)->pw + 2 * (is)->cw)
#define NOT_END 0xFFFF
/* Key bytes of the LMS substrings' distribution sort. */
#define KEY 8
#define SEGF(is) (SEG_HEAD(is) + (size_t) (is)->F * (is)->cw)

typedef struct sa_induce
{
	uint64_t	n,
				K,
				m;				/* LMS positions before n */
	int			cw,				/* bytes per character in records */
				xw,				/* per character before a run: cw if the
								 * preceding characters are wanted, else 0 */
				pw,				/* per position */
				kw,				/* per LMS index or rank (0..m) */
				eb;				/* bits per character of a substring's key: 2c + type */
	size_t		page,
				seg_cap;		/* most characters in a segment */
	double		carried,		/* characters items will carry */
				carry_max;		/* and at most (CARRY_LIMIT per text character) */
	xxl_spool	seg;			/* segments in text order (SEG_HEAD) */
	xxl_env_sorter subs,		/* LMS substrings of up to KEY key bytes
								 * (padded with 0), then the LMS index */
				subs_long,		/* longer ones: key, LMS index */
				seg_long;		/* by rank: the characters of long segments
								 * beyond the inline ones */
	xxl_env_scatter names,		/* LMS index -> name */
				isa,			/* LMS index -> rank (names not unique) */
				segs;			/* rank -> segment, its first F characters inline */
	int			F;				/* characters inline in segs */
	is_pages	ps;
	is_queues	qs;
	is_stack	lst,			/* the L-suffixes in order */
				out;			/* all suffixes, largest first */
	uint64_t   *nl;				/* L-suffixes per bucket */
	unsigned char *buf;			/* scratch: two segments and two keys */
	size_t		buf_bytes;
	unsigned char *sent;		/* the segment of $ */
	uint64_t	emitted;
} sa_induce;

static inline uint64_t
chr(const sa_induce *is, const unsigned char *p, size_t i)
{
	return is->cw == 1 ? p[i] : get_be(p + 2 * i, 2);
}

static inline uint32_t
get2(const unsigned char *p)
{
	return (uint32_t) get_be(p, 2);
}

static inline size_t
seg_size(const sa_induce *is, const unsigned char *rec)
{
	return SEG_HEAD(is) + (get2(rec + SEG_A(is)) + get2(rec + SEG_A(is) + 2)) * is->cw;
}

/* What the sorts of long substrings and segments get: few records. */
static inline size_t
long_share(const xxl_env *env)
{
	size_t		share = env->pool / 100 * SHARE_LONG_PCT;

	return share > 192 * 1024 ? share : 192 * 1024;
}

/* sa_induce_lms.c: steps 1-3, the LMS suffixes in order */
xxl_status	lms_scan(xxl_sa *sa, sa_induce *is, bool *fits);
xxl_status	lms_name(xxl_sa *sa, sa_induce *is, uint64_t *D);
xxl_status	lms_sort_reduced(xxl_sa *sa, sa_induce *is, uint64_t D);
xxl_status	lms_sort_segments(xxl_sa *sa, sa_induce *is, xxl_env_scatter *ranks, int rw);

#endif							/* XXL_SA_INDUCE_INTERNAL_H */
