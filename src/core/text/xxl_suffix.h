/*
 * xxl_suffix.h — suffix arrays, the Burrows–Wheeler transform and the
 * suffix-array checker over texts larger than memory (thesis ch. 5).
 *
 * Builder: the text arrives in chunks (xxl_sa_put), xxl_sa_build runs
 * pipelined external DC3 [KSB06, DKMS06] on the core sorter, recursing on the
 * names of the sample suffixes until a subproblem fits the budget, where an
 * in-memory induced-sorting algorithm (SA-IS) takes over.  The suffix start
 * positions then come out in suffix order (xxl_sa_next), 0-based.  Bytes
 * compare unsigned (0x00 smallest, 0xFF largest); a suffix that is a proper
 * prefix of another is the smaller one.
 *
 * BWT: with mode XXL_SA_BWT the build also produces the Burrows–Wheeler
 * transform in libdivsufsort's divbwt() convention: the BWT of T$ with the $
 * removed (n bytes), and the primary index, the position the $ had (1 + the
 * rank of suffix 0), which the inverse transform needs.  The preceding byte
 * travels with every merge tuple of the top DC3 level, so the BWT costs one
 * extra byte per tuple instead of two more sorts; the bytes are spooled so
 * that the primary index is known before the first byte is read.
 *
 * Checker: the external checker of thesis §5.7 ([BK03]): sort(5n) + scan(2n)
 * in the thesis's words; it needs only the text and the suffix array, both
 * pushed in any interleaving.
 *
 * Texts up to 2^40 bytes.  Every buffer comes out of the configured memory
 * budget; spill files live in the configured directories and are removed by
 * xxl_sa_destroy / xxl_sa_check_destroy at any point.  No call aborts: errors
 * come back as an xxl_status with a message (xxl_sa_error).
 */
#ifndef XXL_SUFFIX_H
#define XXL_SUFFIX_H

#include "core/xxl_io.h"

#define XXL_SA_MAX_TEXT (UINT64_C(1) << 40)
#define XXL_SA_MAX_LEVELS 80

typedef enum xxl_sa_mode
{
	XXL_SA_POSITIONS = 0,		/* xxl_sa_next / xxl_sa_next_prev */
	XXL_SA_BWT					/* xxl_sa_bwt_read + xxl_sa_bwt_primary */
} xxl_sa_mode;

typedef enum xxl_sa_algorithm
{
	XXL_SA_AUTO = 0,			/* induced sorting at the top of an external
								 * text where it suits (sa_induce.c), else DC3 */
	XXL_SA_DC3,					/* DC3 at every level */
	XXL_SA_INDUCED				/* testing: induced sorting at the top
								 * wherever it can run, in-memory texts too */
} xxl_sa_algorithm;

typedef struct xxl_sa_config
{
	xxl_resources res;			/* disk.block_size is an upper bound (0 = 2 MB):
								 * smaller blocks are used when the budget
								 * needs them */
	xxl_sa_mode mode;
	xxl_sa_algorithm algorithm;
	bool		with_prev;		/* positions mode: also carry T[pos-1]
								 * (xxl_sa_next_prev) */
	bool		separated;		/* documents end with xxl_sa_end_doc: a
								 * separator smaller than every byte follows
								 * each, so no common prefix runs from one
								 * document into the next (positions mode) */
	uint64_t	size_hint;		/* checker: expected text length, 0 = unknown
								 * (sizes the blocks of its first sort; when
								 * unknown, the largest blocks are used, which
								 * take the most data but merge with a lower
								 * fan-in) */
	bool		sequential;		/* text store: read in order only (larger
								 * blocks, one cached) */
	int			report_base;	/* checker: positions and entry numbers in
								 * its reasons count from this (0 or 1) */
	uint64_t	internal_max;	/* testing: 0 = the budget decides which
								 * (sub)texts are sorted in memory; k > 0 =
								 * additionally only texts of at most k
								 * characters (1 forces external DC3 almost
								 * everywhere) */
	struct
	{
		int			chars,		/* names, below the top level */
					ranks,
					positions;
	}			widths_min;		/* testing: fields take at least these many
								 * bytes (0: as many as their values need);
								 * the merge is compiled for the widths of
								 * large levels (dc3_merge.c), which small
								 * texts would not reach */
} xxl_sa_config;

typedef struct xxl_sa_level_stats
{
	uint64_t	n;				/* characters at this level (with no dummy) */
	uint64_t	alphabet;		/* largest character value */
	int			char_bytes;		/* bytes per character in records */
	bool		internal;		/* solved in memory (SA-IS) */
	bool		induced;		/* level 0 by external induced sorting, DC3 below */
	bool		names_unique;	/* external: no recursion needed below */
	bool		names_by_table;	/* external level 0: triples named by a table
								 * of all triples, not sorted */
	bool		s0_presampled;	/* external: the mod-0 tuples' sort had its
								 * sample before its input (not staged) */
	int			merge_slots;	/* external: its merge ran on a worker, handing
								 * positions over through a ring of this many
								 * batches (0: on the consumer's thread) */
	uint64_t	overfull_buckets;	/* buckets of its distribution sorts that
									 * sampling noise overfilled */
	uint64_t	sorted_bytes;	/* record bytes pushed into this level's sorters */
	uint64_t	io_bytes;		/* bytes read + written by this level's sorters
								 * and permutations */
	uint64_t	scattered_bytes;	/* record bytes pushed into its permutations */
} xxl_sa_level_stats;

typedef struct xxl_sa_stats
{
	uint64_t	n;				/* text length */
	int			levels;			/* DC3 levels (1 = no recursion) */
	int			recursion_depth;	/* levels - 1 */
	int			external_levels;	/* levels done by external DC3 */
	uint64_t	bytes_read;		/* all spill I/O: sorters and own spools */
	uint64_t	bytes_written;
	uint64_t	io_wait_ns;		/* time the builder waited for that I/O */
	bool		io_direct;		/* every spill file used O_DIRECT */
	uint64_t	sorted_bytes;	/* record bytes pushed into sorters */
	uint64_t	scattered_bytes;	/* record bytes pushed into permutations */
	uint64_t	spool_bytes;	/* bytes written to and read from spools */
	uint64_t	runs;			/* runs formed by all sorters */
	int			max_merge_passes;	/* most merge passes of one sorter */
	uint64_t	thesis_bytes;	/* sort(30n) + scan(6n) of [T] Thm 13 with
								 * 32-bit words: (2*30 + 6) * 4 * n */
	uint64_t	memory_peak;	/* budget high-water mark (sorter shares
								 * count in full) */
	uint64_t	memory_limit;
	size_t		block_size;		/* block size of the own spools */
	size_t		sorter_block_max;	/* largest block size a sorter used */
	uint64_t	build_ns;
	bool		merge_async;	/* the top level's merge ran on a worker while
								 * the caller took the positions */
	int			merge_slots;	/* ... into a ring of this many batches */
	xxl_sa_level_stats level[XXL_SA_MAX_LEVELS];
} xxl_sa_stats;

typedef struct xxl_sa xxl_sa;

xxl_sa	   *xxl_sa_create(const xxl_sa_config *cfg, xxl_error *err);
/* Append len bytes to the text. */
xxl_status	xxl_sa_put(xxl_sa *sa, const void *bytes, size_t len);
/*
 * Separated texts: end the current document.  The separator takes one
 * position, and its suffix is among the suffixes handed out (they come
 * first: the separator is the smallest character); xxl_docs.h maps
 * positions of this separated text to documents.
 */
xxl_status	xxl_sa_end_doc(xxl_sa *sa);
/* End of text: construct the suffix array (and the BWT in XXL_SA_BWT mode). */
xxl_status	xxl_sa_build(xxl_sa *sa);

/*
 * Next suffix start position (0-based) in suffix order: 1 with *pos set, 0
 * at the end, negative on error.  xxl_sa_next_prev also gives the byte
 * before the suffix, T[pos-1], or -1 for pos 0 (needs with_prev).  In a
 * separated text it gives (T[pos-1] + 1) mod 256 instead, 0 standing for
 * a separator or the byte 0xFF alike, and -1 for pos 0.
 */
int			xxl_sa_next(xxl_sa *sa, uint64_t *pos);
int			xxl_sa_next_prev(xxl_sa *sa, uint64_t *pos, int *prev);

/*
 * BWT mode: copy up to cap next BWT bytes into buf; *len gets the number
 * copied.  Returns 1 while bytes come, 0 at the end, negative on error.
 */
int			xxl_sa_bwt_read(xxl_sa *sa, void *buf, size_t cap, size_t *len);
/* divbwt()'s primary index (0 for an empty text); valid after xxl_sa_build. */
uint64_t	xxl_sa_bwt_primary(const xxl_sa *sa);

const xxl_error *xxl_sa_error(const xxl_sa *sa);
void		xxl_sa_stats_get(const xxl_sa *sa, xxl_sa_stats *stats);
/* Joins threads, removes spill files, frees all memory.  Safe at any point. */
void		xxl_sa_destroy(xxl_sa *sa);

/* The smallest budget xxl_sa_create / xxl_sa_check_create accept. */
size_t		xxl_sa_min_memory(void);

/* Inverse BWT in memory (for tests and small texts): out gets n bytes. */
xxl_status	xxl_bwt_inverse(const unsigned char *bwt, uint64_t n, uint64_t primary,
							unsigned char *out, xxl_error *err);

/* Checker ([T] §5.7) ------------------------------------------------------ */

typedef struct xxl_sa_checker xxl_sa_checker;

typedef struct xxl_sa_check_stats
{
	uint64_t	n;
	uint64_t	entries;		/* suffix array entries pushed */
	uint64_t	bytes_read;
	uint64_t	bytes_written;
	uint64_t	io_wait_ns;
	bool		io_direct;
	uint64_t	sorted_bytes;
	uint64_t	memory_peak;
	uint64_t	check_ns;
} xxl_sa_check_stats;

/* Uses cfg's memory, threads, disk and cancel fields. */
xxl_sa_checker *xxl_sa_check_create(const xxl_sa_config *cfg, xxl_error *err);
xxl_status	xxl_sa_check_put_text(xxl_sa_checker *c, const void *bytes, size_t len);
/* Append suffix-array entries (0-based positions) in suffix order. */
xxl_status	xxl_sa_check_put_sa(xxl_sa_checker *c, const uint64_t *pos, size_t count);
/*
 * Or entries with explicit ranks, in any order: rank[k] (1-based) is the
 * rank of the suffix at 0-based position pos[k].  The check then also
 * demands that the ranks be exactly 1..n.  Use one form or the other.
 */
xxl_status	xxl_sa_check_put_ranked(xxl_sa_checker *c, const uint64_t *rank,
									const uint64_t *pos, size_t count);
/*
 * Decide.  *ok is the verdict; on false, why (if not NULL) names the first
 * violation found.  Returns a non-OK status only when the check itself could
 * not run (I/O error, budget, cancel).
 */
xxl_status	xxl_sa_check_run(xxl_sa_checker *c, bool *ok, char *why, size_t why_len);
const xxl_error *xxl_sa_check_error(const xxl_sa_checker *c);
void		xxl_sa_check_stats_get(const xxl_sa_checker *c, xxl_sa_check_stats *stats);
void		xxl_sa_check_destroy(xxl_sa_checker *c);

/*
 * Convenience: the whole check from two pull callbacks.  Each returns the
 * number of items it stored (bytes, resp. positions), 0 at the end, or a
 * negative value to abort (reported as XXL_EINVAL).
 */
typedef long (*xxl_sa_text_fn) (void *arg, unsigned char *buf, size_t cap);
typedef long (*xxl_sa_pos_fn) (void *arg, uint64_t *buf, size_t cap);
xxl_status	xxl_sa_check(const xxl_sa_config *cfg, xxl_sa_text_fn text, void *text_arg,
						 xxl_sa_pos_fn sa, void *sa_arg, bool *ok, char *why, size_t why_len,
						 xxl_error *err);

#endif							/* XXL_SUFFIX_H */
