/*
 * dc3_internal.h — the suffix-array builder (xxl_suffix.h), its shared
 * state and helpers; the steps live in dc3_plan.c, dc3_level.c,
 * dc3_tuples.c, dc3_merge.c, sa_build.c and bwt.c.  The builder is pipelined external DC3
 * ([T] Fig. 5.6/5.7, [KSB06]) whose reorderings by a known index are
 * external permutations (xxl_scatter.h) instead of sorts, recursing on the
 * names of the sample suffixes until a subtext fits the budget, where SA-IS
 * (sais.c) takes over; plus the BWT mode and an in-memory inverse BWT.
 *
 * One level, text T[0,n) over characters 1..K (0 is the end marker $), kept
 * in a spool (level 0: the caller's bytes, renamed on the fly; below: the
 * names the parent wrote).  The sample are the positions i mod 3 != 0; if
 * n mod 3 = 1 a dummy sample at position n with triple ($,$,$) is added
 * ([KSB06]): the mod-1 block of the recursive string then ends with a unique
 * name, so no comparison of recursive suffixes runs on into the mod-2 block
 * (for the other n the last mod-1 triple already contains a $).  Two orders
 * of the sample have dense indexes: the recursive string R (mod-1 positions,
 * then mod-2: index i/3 resp. n1 + i/3) and text order (index 2(i/3) +
 * i mod 3 - 1), and the ranks of the sample suffixes are a permutation of
 * 1..n12 (the dummy, if any, has rank 1: its name is the smallest and unique).
 *  1. one scan of T: the triples of the sample, each with its R index, go to
 *     sort TS.
 *  2. naming scan of the sorted triples: dense names 1..D are permuted into R
 *     order (scatter NAMES), which is the child's text.  If D = n12 the names
 *     are the ranks and are spooled as they come, mod-1 and mod-2 apart.
 *  3. otherwise recurse (n12 characters over 1..D); entry j of the child's
 *     suffix array, R index k, gives rank j+1 to k's text-order index
 *     (scatter ISA, the inverse suffix array of the sample, [T] line 7).
 *  4. one scan of T with the ranks in text order produces the merge tuples
 *     S0 = (T[i], r[i+1] | T[i+1], r[i+2], i) for i mod 3 = 0, sorted by the
 *     fields before | (sort S0), and S12 = (T[i], T[i+1], r', i) for the
 *     sample, r' being r[i+1] for i mod 3 = 1 and r[i+2] for i mod 3 = 2,
 *     permuted by rank (scatter S12: [T]'s S1 and S2 together are sorted by
 *     rank, which is a permutation).
 *  5. two-way merge of S0 and S12 with [T]'s comparisons, pulled by the
 *     consumer: the caller at the top level, the parent's ISA below.
 * So a level sorts 2n/3 + n/3 records and permutes 3 * 2n/3; the thesis
 * sorts all of them (sort(30n) + scan(6n) in all).
 *
 * Records are byte-packed big-endian fields sized for the level: characters
 * take 1 byte at level 0 (bytes are renamed to 1..d, d <= 255 distinct; 2
 * bytes if all 256 occur), names, ranks and positions as few bytes as their
 * range needs (at most 5 for 2^40).  At level 0 every merge tuple may also
 * carry T[i-1], which yields the BWT straight out of the final merge.
 *
 * The sorts are distribution sorts where they fit (xxl_env_sorter): they stage
 * their records while other parts work and distribute when those are gone.
 * With two threads, sorts and scatters take their records on a worker, and
 * each external level's merge runs on a worker next to its consumer
 * (dc3_merger_start, through xxl_ahead.h).
 *
 * Memory: see "Memory shares" below.  An in-memory subproblem gets what the
 * consumer of its output (the parent's ISA) leaves, all of the pool at level
 * 0.  At most three sorts and permutations live at once.
 */
#ifndef XXL_DC3_INTERNAL_H
#define XXL_DC3_INTERNAL_H

#include "core/text/text_internal.h"
#include "core/xxl_ahead.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* suffixes a level hands its consumer at once */
#define OUT_BATCH 1024

typedef enum sa_phase
{
	SA_PUT,
	SA_OUTPUT,
	SA_DONE,
	SA_FAILED
} sa_phase;

/*
 * The head of S0 or S12 in step 5, its comparison fields packed into one
 * integer, 40 bits each (characters and ranks are below 2^40): the merge's
 * comparison ([T]'s rules, less0) is then one compare of two integers.
 */
typedef unsigned __int128 merge_key;

#define MERGE_KEY(t, t1, r) \
	(((merge_key) (t) << 80) | ((merge_key) (t1) << 40) | (merge_key) (r))

typedef struct merge_head
{
	merge_key	key,			/* S0: (T[i], T[i+1], r[i+2]); S12: (T[i], T[i+1]
								 * or 0 if i mod 3 = 1, r') */
				key1;			/* S0: (T[i], 0, r[i+1]), against a mod-1 sample */
	uint64_t	i;
	bool		mod1;			/* S12: i mod 3 = 1 */
	int			prev;
} merge_head;

typedef struct dc3_level
{
	int			depth;
	uint64_t	n;
	uint64_t	K;				/* characters are 1..K */
	int			cw,				/* bytes per character */
				pw,				/* bytes per position (0..n) */
				rw;				/* bytes per name, rank or sample index (0..n12) */
	uint64_t	n0,				/* mod-0 positions */
				n1,				/* mod-1 samples, the dummy included */
				n2,
				n12;
	bool		dummy;			/* n mod 3 = 1: sample n with triple ($,$,$) */
	bool		prev;			/* carry T[i-1] (top level, BWT) */
	bool		internal;
	size_t		share_a,		/* memory of NAMES and ISA (with s0_r) */
				share_12,		/* of S12 */
				share_cons;		/* of the consumer of the output (the parent's ISA) */

	/*
	 * A sample of S0's keys (T[i], r[i+1]) gathered before S0 exists: T[i]
	 * when step 1 scans T, r[i+1] when the child's output becomes ISA (or
	 * the names are the ranks); then S0 distributes its tuples as they come
	 * in step 4 instead of staging them.
	 */
	uint64_t	s0_stride;		/* every s0_stride-th mod-0 position; 0: S0 is staged */
	xxl_modulus s0_every;		/* s0_stride, for the per-position tests */
	uint64_t	s0_count;
	size_t		s0_mem,			/* S0's memory when presampled, and its output's */
				s0_out;
	xxl_spool		s0_t;			/* T[i] of the sampled positions, in order */
	uint64_t   *s0_r;			/* r[i+1] of the sampled positions */
	size_t		s0_r_bytes;

	/* where the text is: the caller's bytes at level 0, own names below */
	xxl_spool	   *tsp;
	int			tw;				/* bytes per character in tsp */
	const uint16_t *map;		/* level 0: byte -> character */
	xxl_spool		own;

	/* internal */
	void	   *text;
	size_t		text_bytes;
	int			ts;
	int32_t    *SA;
	size_t		sa_bytes;
	uint64_t	out;
	const uint8_t *unmap;

	/* external */
	uint64_t   *tbits;			/* naming by table (level 0): a bit per triple */
	uint32_t   *tdir;			/* names below each word of tbits */
	size_t		tbits_bytes,
				tdir_bytes;
	xxl_env_sorter TS;
	xxl_env_scatter names;
	bool		unique;			/* names are ranks: rank1, rank2 hold them */
	xxl_spool		rank1,
				rank2;
	xxl_env_scatter isa;
	xxl_env_sorter S0;
	xxl_env_scatter S12;
	struct dc3_level *child;
	bool		primed;
	bool		have[2];
	merge_head	h[2];
	uint64_t	emitted;
} dc3_level;

/* Buffered writes of fixed-width values to a spool. */
typedef struct char_out
{
	unsigned char buf[4096];
	size_t		fill;
} char_out;

static inline xxl_status
char_out_put(xxl_spool *sp, char_out *o, uint64_t c, int w)
{
	if (o->fill + (size_t) w > sizeof(o->buf))
	{
		if (xxl_spool_write(sp, o->buf, o->fill) != XXL_OK)
			return sp->env->err.code;
		o->fill = 0;
	}
	put_be(o->buf + o->fill, c, w);
	o->fill += w;
	return XXL_OK;
}

static inline xxl_status
char_out_flush(xxl_spool *sp, char_out *o)
{
	if (o->fill > 0 && xxl_spool_write(sp, o->buf, o->fill) != XXL_OK)
		return sp->env->err.code;
	o->fill = 0;
	return XXL_OK;
}

/* Characters of a level's text, in order. */
typedef struct char_reader
{
	value_reader vr;
	const uint16_t *map;
	bool		open;
} char_reader;

static inline xxl_status
char_reader_open(dc3_level *lv, char_reader *cr, bool consume)
{
	cr->map = lv->map;
	if (value_reader_open(&cr->vr, lv->tsp, lv->tw, consume) != XXL_OK)
		return lv->tsp->env->err.code;
	cr->open = true;
	return XXL_OK;
}

static inline xxl_status
char_reader_next(char_reader *cr, uint64_t *c)
{
	xxl_status	rc = value_reader_next(&cr->vr, c);

	if (cr->map)
		*c = cr->map[*c];
	return rc;
}

static inline void
char_reader_close(char_reader *cr)
{
	if (cr->open)
		value_reader_close(&cr->vr);
	cr->open = false;
}

struct xxl_sa
{
	xxl_env	env;
	xxl_sa_config cfg;
	sa_phase	phase;
	xxl_spool		text;
	uint64_t	n;
	bool		present[256];
	int			last_byte;
	uint16_t	map[257];		/* raw value -> character */
	uint8_t		unmap[258];		/* character -> preceding-byte report */
	dc3_level  *top;
	struct sa_induce *is;		/* the top level by induced sorting, if so */
	/* the top level's output, handed out one by one */
	uint64_t	out_pos[OUT_BATCH];
	int			out_prev[OUT_BATCH];
	const uint64_t *cur_pos;	/* the batch being handed out */
	const int  *cur_prev;
	int64_t		out_n,
				out_at;
	xxl_ahead  *merger;			/* a level's merge on a worker (one at a time) */
	dc3_level  *merge_lv;		/* the level it merges */
	/* BWT */
	xxl_spool		bwt;
	xxl_spool_reader bwt_rd;
	bool		bwt_open;
	uint64_t	primary;
	/* statistics */
	int			levels;
	xxl_sa_level_stats lstats[XXL_SA_MAX_LEVELS];
	uint64_t	t_build;
	uint64_t	build_ns;
};


/*
 * The top level's table from characters to the preceding bytes it
 * reports: bytes renamed to 1 byte, or a separated text; NULL where the
 * character is the byte + 1 (all 256 bytes, 2-byte characters).
 */
static inline const uint8_t *
top_unmap(const xxl_sa *sa, int cw)
{
	return cw == 1 || sa->cfg.separated ? sa->unmap : NULL;
}

/* The preceding byte reported for character c >= 1 (xxl_sa_next_prev). */
static inline int
prev_report(const uint8_t *unmap, uint64_t c)
{
	return unmap ? unmap[c] : (int) c - 1;
}

/* Bytes per name (below the top level), rank and position: what max needs, or the test's minimum. */
static inline int
widen(int w, int min)
{
	return w < min ? min : w;
}

static inline int
char_width(const xxl_sa *sa, uint64_t max)
{
	return widen(width_for(max), sa->cfg.widths_min.chars);
}

static inline int
rank_width(const xxl_sa *sa, uint64_t max)
{
	return widen(width_for(max), sa->cfg.widths_min.ranks);
}

static inline int
pos_width(const xxl_sa *sa, uint64_t max)
{
	return widen(width_for(max), sa->cfg.widths_min.positions);
}

static inline bool
dc3_poll(xxl_sa *sa)
{
	return xxl_env_poll(&sa->env);
}


/* Sizes -------------------------------------------------------------------- */

/*
 * Memory shares.  A scatter holds its share for life; a sort that is a
 * distribution sort holds little while it is filled, and then gets what is
 * free when it distributes (see xxl_env_sorter): TS all of the pool (nothing
 * else lives then), S0 what S12 leaves; once sorted they keep what the parts
 * that outlive the sort leave them (a core sorter has that for life).  Live
 * together: TS + NAMES; ISA + S12 (+ S0 filling); S12 + S0 sorting; S0 + S12
 * + the consumer (the parent's ISA) when merging.  The scatters get
 * SHARE_A_PCT and SHARE_S12_PCT of the pool, or what they need at the least
 * if that is more (small budgets), which S0 then does without.
 */
#define SHARE_A_PCT 25			/* NAMES, ISA */
#define SHARE_S12_PCT 40

static inline size_t
ts_memory(const xxl_sa *sa, const dc3_level *lv)
{
	return sa->env.pool;
}

static inline size_t
ts_output(const xxl_sa *sa, const dc3_level *lv)
{
	return sa->env.pool - lv->share_a;
}

static inline size_t
s0_memory(const xxl_sa *sa, const dc3_level *lv)
{
	return sa->env.pool - lv->share_12;
}

static inline size_t
s0_output(const xxl_sa *sa, const dc3_level *lv)
{
	size_t		taken = lv->share_12 + lv->share_cons;

	return sa->env.pool > taken ? sa->env.pool - taken : 0;
}

static inline int
mem_char_bytes(uint64_t K)
{
	return K < 256 ? 1 : K < 65536 ? 2 : 4;
}

/* Bytes an in-memory level of n characters over 1..K needs. */
static inline uint64_t
internal_need(uint64_t n, uint64_t K)
{
	uint64_t	m = n + 1;

	return XXL_ROUND_UP(m * mem_char_bytes(K), XXL_ALIGN) + XXL_ROUND_UP(m * 4, XXL_ALIGN)
		+ text_sais_scratch((int64_t) m, (uint32_t) K) + 64 * 1024;
}

/* Whether n characters over 1..K are sorted in memory next to a consumer of the given share. */
static inline bool
fits_internal(xxl_sa *sa, uint64_t n, uint64_t K, size_t consumer)
{
	uint64_t	avail = sa->env.pool - consumer;

	if (n <= 1)
		return true;
	if (n + 1 >= INT32_MAX || K >= UINT32_MAX)
		return false;
	if (sa->cfg.internal_max > 0 && n > sa->cfg.internal_max)
		return false;
	return internal_need(n, K) <= avail;
}

/* Record sizes of a level. */
static inline size_t
ts_size(const dc3_level *lv)
{
	return 3 * lv->cw + lv->rw;
}

static inline size_t
s0_size(const dc3_level *lv)
{
	return 2 * lv->cw + 2 * lv->rw + lv->pw + (lv->prev ? 1 : 0);
}

static inline size_t
s12_size(const dc3_level *lv)
{
	return 2 * lv->cw + lv->rw + lv->pw + (lv->prev ? 1 : 0);
}

/* Sample indexes: R order and text order of sample position i. */
static inline uint64_t
r_index(const dc3_level *lv, uint64_t i)
{
	return i % 3 == 1 ? i / 3 : lv->n1 + i / 3;
}

static inline uint64_t
text_index_of_r(const dc3_level *lv, uint64_t k)
{
	uint64_t	mod2 = k >= lv->n1;	/* branch-free: k comes in SA order */

	return 2 * (k - (mod2 ? lv->n1 : 0)) + mod2;
}

/* What NAMES and ISA get: share_a less S0's ranks, which live next to them. */
static inline size_t
share_scatter_a(const dc3_level *lv)
{
	return lv->share_a - lv->s0_r_bytes;
}

/* Step 1 sees T[i] of mod-0 position i: keep it if i is sampled for S0. */
static inline xxl_status
s0_sample_char(dc3_level *lv, char_out *co, uint64_t i, uint64_t c)
{
	if (lv->s0_stride && xxl_mod(lv->s0_every, i / 3) == 0)
		return char_out_put(&lv->s0_t, co, c, lv->cw);
	return XXL_OK;
}

/* The rank of mod-1 position 3k+1 (R index k) is known: keep it if 3k is sampled. */
static inline void
s0_sample_rank(dc3_level *lv, uint64_t k, uint64_t rank)
{
	/* k < n1 is a coin toss in SA order: & keeps it out of the branches */
	if (lv->s0_r && ((k < lv->n1) & (xxl_mod(lv->s0_every, k) == 0)))
		lv->s0_r[k / lv->s0_stride] = lv->dummy && k == lv->n1 - 1 ? 0 : rank;	/* r[n] = 0 */
}

static inline xxl_status
s0_ranks_alloc(xxl_sa *sa, dc3_level *lv)
{
	if (lv->s0_stride == 0)
		return XXL_OK;
	lv->s0_r = xxl_budget_alloc(&sa->env.budget, lv->s0_r_bytes, &sa->env.err);
	if (lv->s0_r == NULL)
		return sa->env.err.code;
	memset(lv->s0_r, 0, lv->s0_r_bytes);
	return XXL_OK;
}

static inline void
s0_sample_free(xxl_sa *sa, dc3_level *lv)
{
	if (lv->s0_r)
		xxl_budget_free(&sa->env.budget, lv->s0_r, lv->s0_r_bytes);
	lv->s0_r = NULL;
	xxl_spool_free(&lv->s0_t);
}


static inline size_t
spool_room(const xxl_env *env)
{
	return env->spool_allowance > env->spool_mem ? env->spool_allowance - env->spool_mem : 0;
}

/* The steps, by file ------------------------------------------------------ */

/* dc3_plan.c: the budget's plan for a level and the levels below it */
xxl_status	dc3_reserve_lists(xxl_sa *sa, uint64_t n);
xxl_status	dc3_plan_level(xxl_sa *sa, dc3_level *lv);

/* dc3_level.c: steps 1-3 of a level (4 in dc3_tuples.c), or SA-IS when it fits */
xxl_status	dc3_level_build(xxl_sa *sa, dc3_level *lv);
/* A level below the top, its text in its own spool; and freeing it. */
dc3_level  *dc3_child_new(xxl_sa *sa, int depth, uint64_t n, uint64_t K, size_t share_cons);
void		dc3_child_free(xxl_sa *sa, dc3_level *child);

/* dc3_tuples.c: step 4, the merge tuples from the characters and the sample's ranks */
xxl_status	dc3_merge_tuples(xxl_sa *sa, dc3_level *lv);

/* sa_induce.c: the top level by induced sorting, where it suits */
xxl_status	sa_induce_build(xxl_sa *sa, uint64_t K, int cw, bool *done);
int64_t		sa_induce_next(xxl_sa *sa, uint64_t *pos, int *prev, size_t cap);
void		sa_induce_free(xxl_sa *sa);

/* dc3_merge.c: step 5, pulled by the consumer; a level's merger thread */
int64_t		dc3_level_fill(xxl_sa *sa, dc3_level *lv, uint64_t *pos, int *prev, size_t cap);
void		dc3_level_free(xxl_sa *sa, dc3_level *lv);
bool		dc3_merger_start(xxl_sa *sa, dc3_level *lv);
int64_t		dc3_merge_next(xxl_sa *sa, dc3_level *lv, uint64_t *pos, int *prev, size_t cap);
void		dc3_merger_stop(xxl_sa *sa);
void		dc3_merger_abandon(xxl_sa *sa);

/* sa_build.c: the builder's state machine */
xxl_status	dc3_fail(xxl_sa *sa);

/* bwt.c: the BWT out of the final merge */
xxl_status	dc3_build_bwt(xxl_sa *sa);

#endif							/* XXL_DC3_INTERNAL_H */
