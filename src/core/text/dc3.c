/*
 * dc3.c — the suffix-array builder (xxl_suffix.h): pipelined external DC3
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
 * the top level's merge runs on a worker next to the caller (sa_merger).
 *
 * Memory: see "Memory shares" below.  An in-memory subproblem gets what the
 * consumer of its output (the parent's ISA) leaves, all of the pool at level
 * 0.  At most three sorts and permutations live at once.
 */
#include "text_internal.h"

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

static xxl_status
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

static xxl_status
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

static void
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
	uint16_t	map[256];
	uint8_t		unmap[257];
	dc3_level  *top;
	/* the top level's output, handed out one by one */
	uint64_t	out_pos[OUT_BATCH];
	int			out_prev[OUT_BATCH];
	const uint64_t *cur_pos;	/* the batch being handed out */
	const int  *cur_prev;
	int64_t		out_n,
				out_at;
	struct sa_merger *merger;	/* the top level's merge on a worker */
	bool		merge_async;	/* ... was started */
	/* BWT */
	xxl_spool		bwt;
	xxl_spool_reader bwt_rd;
	bool		bwt_open;
	const unsigned char *bwt_p;
	size_t		bwt_avail;
	uint64_t	primary;
	/* statistics */
	int			levels;
	xxl_sa_level_stats lstats[XXL_SA_MAX_LEVELS];
	uint64_t	t_build;
	uint64_t	build_ns;
};

static xxl_status level_build(xxl_sa *sa, dc3_level *lv);
static int64_t level_fill(xxl_sa *sa, dc3_level *lv, uint64_t *pos, int *prev, size_t cap);
static void level_free(xxl_sa *sa, dc3_level *lv);

static inline bool
poll(xxl_sa *sa)
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

static int
mem_char_bytes(uint64_t K)
{
	return K < 256 ? 1 : K < 65536 ? 2 : 4;
}

/* Bytes an in-memory level of n characters over 1..K needs. */
static uint64_t
internal_need(uint64_t n, uint64_t K)
{
	uint64_t	m = n + 1;

	return XXL_ROUND_UP(m * mem_char_bytes(K), XXL_ALIGN) + XXL_ROUND_UP(m * 4, XXL_ALIGN)
		+ text_sais_scratch((int64_t) m, (uint32_t) K) + 64 * 1024;
}

/* Whether n characters over 1..K are sorted in memory next to a consumer of the given share. */
static bool
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

static xxl_status
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

static void
s0_sample_free(xxl_sa *sa, dc3_level *lv)
{
	if (lv->s0_r)
		xxl_budget_free(&sa->env.budget, lv->s0_r, lv->s0_r_bytes);
	lv->s0_r = NULL;
	xxl_spool_free(&lv->s0_t);
}

/* Internal levels ---------------------------------------------------------- */

static xxl_status
build_internal(xxl_sa *sa, dc3_level *lv)
{
	xxl_env   *env = &sa->env;
	uint64_t	n = lv->n;
	int			ts = mem_char_bytes(lv->K);
	char_reader cr = {0};
	xxl_status	rc;

	lv->internal = true;
	lv->ts = ts;
	lv->text_bytes = (size_t) ((n + 1) * ts);
	if (char_reader_open(lv, &cr, true) != XXL_OK)
		return env->err.code;
	lv->text = xxl_budget_alloc(&env->budget, lv->text_bytes, &env->err);
	if (lv->text == NULL)
	{
		char_reader_close(&cr);
		return env->err.code;
	}
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	c = 0;

		if (char_reader_next(&cr, &c) != XXL_OK || poll(sa))
		{
			char_reader_close(&cr);
			return env->err.code;
		}
		if (ts == 1)
			((uint8_t *) lv->text)[i] = (uint8_t) c;
		else if (ts == 2)
			((uint16_t *) lv->text)[i] = (uint16_t) c;
		else
			((uint32_t *) lv->text)[i] = (uint32_t) c;
	}
	memset((char *) lv->text + n * ts, 0, ts);
	char_reader_close(&cr);
	xxl_spool_free(lv->tsp);

	lv->sa_bytes = (size_t) ((n + 1) * 4);
	lv->SA = xxl_budget_alloc(&env->budget, lv->sa_bytes, &env->err);
	if (lv->SA == NULL)
		return env->err.code;
	rc = text_sais(lv->text, ts, lv->SA, (int64_t) n + 1, (uint32_t) lv->K, &env->budget, &env->err);
	if (rc != XXL_OK)
		return rc;
	if (!lv->prev)
	{
		xxl_budget_free(&env->budget, lv->text, lv->text_bytes);
		lv->text = NULL;
	}
	lv->out = 1;				/* SA[0] is the sentinel */
	return XXL_OK;
}

/* External levels ---------------------------------------------------------- */

static size_t
spool_room(const xxl_env *env)
{
	return env->spool_allowance > env->spool_mem ? env->spool_allowance - env->spool_mem : 0;
}

/*
 * T[i], T[i+1], T[i+2] (0 past the end) as i runs over T.  Three scalars, not
 * an array: shifting an array whose last element was just stored made gcc
 * load two elements at once, which waits for that store to retire (store
 * forwarding fails): a third of step 1's time, measured.
 */
typedef struct triple_window
{
	uint64_t	a0,
				a1,
				a2;
} triple_window;

static inline xxl_status
triple_window_open(triple_window *w, char_reader *cr, uint64_t n)
{
	uint64_t	c[3] = {0, 0, 0};
	xxl_status	rc;

	for (uint64_t k = 0; k < 3 && k < n; k++)
		if ((rc = char_reader_next(cr, &c[k])) != XXL_OK)
			return rc;
	w->a0 = c[0];
	w->a1 = c[1];
	w->a2 = c[2];
	return XXL_OK;
}

/* Move from position i to i + 1. */
static inline xxl_status
triple_window_slide(triple_window *w, char_reader *cr, uint64_t i, uint64_t n)
{
	uint64_t	c = 0;
	xxl_status	rc;

	if (i + 3 < n && (rc = char_reader_next(cr, &c)) != XXL_OK)
		return rc;
	w->a0 = w->a1;
	w->a1 = w->a2;
	w->a2 = c;
	return XXL_OK;
}

/*
 * A sort of the triples distributes them as they come if it has a sample of
 * them first: every stride-th triple (in the order they are put) from a scan
 * of T, which costs less than staging them.
 */
static xxl_status
sample_triple_keys(xxl_sa *sa, dc3_level *lv)
{
	xxl_env   *env = &sa->env;
	uint64_t	stride = xxl_env_sort_stride(&lv->TS),
				n = lv->n,
				skip = 0;		/* sample triples before the next one wanted */
	int			cw = lv->cw;
	unsigned char key[64];
	triple_window w;
	char_reader cr = {0};

	if (stride == 0)
		return XXL_OK;
	if (char_reader_open(lv, &cr, false) != XXL_OK)
		return env->err.code;
	if (triple_window_open(&w, &cr, n) != XXL_OK)
		goto failed;
	for (uint64_t i = 0; i < n; i++)
	{
		if (i % 3 != 0 && skip-- == 0)
		{
			put_be(key, w.a0, cw);
			put_be(key + cw, w.a1, cw);
			put_be(key + 2 * cw, w.a2, cw);
			if (xxl_env_sort_sample(env, &lv->TS, key) != XXL_OK)
				goto failed;
			skip = stride - 1;
		}
		if (triple_window_slide(&w, &cr, i, n) != XXL_OK || poll(sa))
			goto failed;
	}
	char_reader_close(&cr);
	if (lv->dummy && skip == 0)
	{
		memset(key, 0, 3 * cw);
		return xxl_env_sort_sample(env, &lv->TS, key);
	}
	return XXL_OK;

failed:
	char_reader_close(&cr);
	return env->err.code;
}

/*
 * Step 1: the triples of the sample, keyed by their characters, each with
 * its R index.
 */
static xxl_status
sample_triples(xxl_sa *sa, dc3_level *lv)
{
	xxl_env   *env = &sa->env;
	uint64_t	n = lv->n;
	int			cw = lv->cw,
				rw = lv->rw;
	unsigned char rec[64];
	triple_window w;
	char_reader cr = {0};
	char_out	co;

	if (xxl_env_sort_open(env, &lv->TS, ts_memory(sa, lv), ts_output(sa, lv), ts_size(lv), 3 * cw,
				   lv->n12, XXL_INPUT_PRESAMPLED) != XXL_OK ||
		sample_triple_keys(sa, lv) != XXL_OK ||
		char_reader_open(lv, &cr, false) != XXL_OK)
		return env->err.code;
	if (triple_window_open(&w, &cr, n) != XXL_OK)
		goto failed;
	co.fill = 0;
	for (uint64_t i = 0; i < n; i++)
	{
		if (i % 3 != 0)
		{
			unsigned char *p = xxl_env_sort_room(&lv->TS, rec);

			put_be(p, w.a0, cw);
			put_be(p + cw, w.a1, cw);
			put_be(p + 2 * cw, w.a2, cw);
			put_be(p + 3 * cw, r_index(lv, i), rw);
			if (xxl_env_sort_push(env, &lv->TS, p) != XXL_OK)
				goto failed;
		}
		else if (s0_sample_char(lv, &co, i, w.a0) != XXL_OK)
			goto failed;
		if (triple_window_slide(&w, &cr, i, n) != XXL_OK || poll(sa))
			goto failed;
	}
	char_reader_close(&cr);
	if (lv->s0_stride && (char_out_flush(&lv->s0_t, &co) != XXL_OK || xxl_spool_finish(&lv->s0_t) != XXL_OK))
		return env->err.code;
	if (lv->dummy)
	{
		unsigned char *p = xxl_env_sort_room(&lv->TS, rec);

		memset(p, 0, 3 * cw);
		put_be(p + 3 * cw, lv->n1 - 1, rw);
		if (xxl_env_sort_push(env, &lv->TS, p) != XXL_OK)
			return env->err.code;
	}
	return xxl_env_sort_sort(env, &lv->TS);

failed:
	char_reader_close(&cr);
	return env->err.code;
}

/*
 * Step 2: dense names of the sorted triples, permuted into R order.  Returns
 * the number of names in *D.
 */
static xxl_status
name_triples(xxl_sa *sa, dc3_level *lv, uint64_t *D)
{
	xxl_env   *env = &sa->env;
	xxl_sa_level_stats *st = &sa->lstats[lv->depth];
	int			cw = lv->cw,
				rw = lv->rw;
	unsigned char last[32];
	uint64_t	name = 0;
	const unsigned char *r;
	int			got;

	if (xxl_env_scat_open(env, &lv->names, share_scatter_a(lv), rw, lv->n12) != XXL_OK)
		return env->err.code;
	while ((got = xxl_env_sort_next(env, &lv->TS, &r)) > 0)
	{
		if (name == 0 || !xxl_equal_small(r, last, 3 * cw))
		{
			name++;
			memcpy(last, r, 3 * cw);
		}
		put_be(xxl_env_scat_room(&lv->names), name, rw);
		if (xxl_env_scat_push(env, &lv->names, get_be(r + 3 * cw, rw)) != XXL_OK || poll(sa))
			return env->err.code;
	}
	if (got < 0)
		return env->err.code;
	st->overfull_buckets += xxl_env_sort_overfull(&lv->TS);
	xxl_env_sort_close(env, &lv->TS, &st->io_bytes, &st->sorted_bytes);
	*D = name;
	return xxl_env_scat_finish(env, &lv->names);
}

/*
 * The names in R order go to spools: the child's text (w bytes each), or,
 * when they are unique and so the ranks, the mod-1 and the mod-2 ranks apart.
 */
static xxl_status
spool_names(xxl_sa *sa, dc3_level *lv, xxl_spool *first, xxl_spool *second, int w)
{
	xxl_env   *env = &sa->env;
	xxl_sa_level_stats *st = &sa->lstats[lv->depth];
	char_out	co;
	const unsigned char *r;
	uint64_t	k = 0;
	int			got;

	co.fill = 0;
	while ((got = xxl_env_scat_next(env, &lv->names, &r)) > 0)
	{
		xxl_spool	   *sp = second && k >= lv->n1 ? second : first;

		if (second)
			s0_sample_rank(lv, k, get_be(r, lv->rw));	/* the names are the ranks */
		if (second && k == lv->n1 && char_out_flush(first, &co) != XXL_OK)
			return env->err.code;
		if (char_out_put(sp, &co, get_be(r, lv->rw), w) != XXL_OK || poll(sa))
			return env->err.code;
		k++;
	}
	if (got < 0 || char_out_flush(second && k > lv->n1 ? second : first, &co) != XXL_OK ||
		xxl_spool_finish(first) != XXL_OK || (second && xxl_spool_finish(second) != XXL_OK))
		return env->err.code;
	xxl_env_scat_close(env, &lv->names, &st->io_bytes, &st->scattered_bytes);
	return XXL_OK;
}

/*
 * Steps 1 and 2 at level 0 without a sort: the characters are at most 256
 * renamed bytes, so every possible triple over 0..K has a bit in a table of
 * (K+1)^3 bits (at most 2.1 MB): one scan marks the triples of the sample, a
 * directory of the bits below each word makes the names dense (a triple's
 * name is 1 + the marked triples below it), and two more scans write the
 * names of the mod-1 and then of the mod-2 positions (table_names).
 * Returns false (and uses no memory) if the table does not fit.
 */
static uint64_t
table_cells(const dc3_level *lv)
{
	uint64_t	k = lv->K + 1;

	return k * k * k;
}

/*
 * The triples of a level's text in order, each as the number
 * T[i]·k² + T[i+1]·k + T[i+2] (k = K+1, $ = 0 past the end): a table's index.
 */
typedef struct triple_reader
{
	char_reader cr;
	uint64_t	n,
				k,
				kk,
				i,
				v;
} triple_reader;

static xxl_status
triple_reader_open(dc3_level *lv, triple_reader *tr)
{
	memset(tr, 0, sizeof(*tr));
	tr->n = lv->n;
	tr->k = lv->K + 1;
	tr->kk = tr->k * tr->k;
	if (char_reader_open(lv, &tr->cr, false) != XXL_OK)
		return lv->tsp->env->err.code;
	for (uint64_t i = 0; i < 2 && i < tr->n; i++)
	{
		uint64_t	c;

		if (char_reader_next(&tr->cr, &c) != XXL_OK)
			return lv->tsp->env->err.code;
		tr->v = tr->v * tr->k + c;
	}
	tr->v *= tr->n >= 2 ? tr->k : tr->kk;
	return XXL_OK;
}

/* The triple at the next position (n calls in all). */
static inline xxl_status
triple_reader_next(triple_reader *tr, uint64_t *triple)
{
	uint64_t	c = 0;
	xxl_status	rc = XXL_OK;

	if (tr->i + 2 < tr->n)
		rc = char_reader_next(&tr->cr, &c);
	tr->v += c;
	*triple = tr->v;
	tr->v = (tr->v % tr->kk) * tr->k;
	tr->i++;
	return rc;
}

static bool
table_fits(xxl_sa *sa, const dc3_level *lv)
{
	uint64_t	cells = table_cells(lv);
	uint64_t	bytes = XXL_ROUND_UP(cells / 8 + 8, XXL_ALIGN) + XXL_ROUND_UP((cells / 64 + 1) * 4, XXL_ALIGN);

	return lv->depth == 0 && lv->K <= 256 && bytes <= sa->env.pool &&
		bytes <= xxl_budget_available(&sa->env.budget);
}

static xxl_status
table_mark(xxl_sa *sa, dc3_level *lv, uint64_t *D)
{
	xxl_env   *env = &sa->env;
	uint64_t	n = lv->n,
				words,
				v,
				names = 0;
	triple_reader tr = {0};
	char_out	co;

	co.fill = 0;
	lv->tbits_bytes = (size_t) (table_cells(lv) / 64 + 1) * 8;
	words = lv->tbits_bytes / 8;
	lv->tdir_bytes = (size_t) words * 4;
	lv->tbits = xxl_budget_alloc(&env->budget, lv->tbits_bytes, &env->err);
	lv->tdir = lv->tbits ? xxl_budget_alloc(&env->budget, lv->tdir_bytes, &env->err) : NULL;
	if (lv->tdir == NULL || triple_reader_open(lv, &tr) != XXL_OK)
		goto failed;
	memset(lv->tbits, 0, lv->tbits_bytes);
	for (uint64_t i = 0; i < n; i++)
	{
		if (triple_reader_next(&tr, &v) != XXL_OK)
			goto failed;
		if (i % 3 != 0)
			lv->tbits[v >> 6] |= UINT64_C(1) << (v & 63);
		else if (s0_sample_char(lv, &co, i, v / tr.kk) != XXL_OK)
			goto failed;
		if (poll(sa))
			goto failed;
	}
	char_reader_close(&tr.cr);
	if (lv->s0_stride && (char_out_flush(&lv->s0_t, &co) != XXL_OK || xxl_spool_finish(&lv->s0_t) != XXL_OK))
		return env->err.code;
	if (lv->dummy)
		lv->tbits[0] |= 1;
	for (uint64_t w = 0; w < words; w++)
	{
		lv->tdir[w] = (uint32_t) names;
		names += (uint64_t) __builtin_popcountll(lv->tbits[w]);
	}
	*D = names;
	return XXL_OK;

failed:
	char_reader_close(&tr.cr);
	return env->err.code;
}

static inline uint64_t
table_name(const dc3_level *lv, uint64_t v)
{
	uint64_t	below = lv->tbits[v >> 6] & ((UINT64_C(1) << (v & 63)) - 1);

	return lv->tdir[v >> 6] + (uint64_t) __builtin_popcountll(below) + 1;
}

/* The names in R order, w bytes each: mod-1 positions to first, mod-2 to second. */
static xxl_status
table_names(xxl_sa *sa, dc3_level *lv, xxl_spool *first, xxl_spool *second, int w)
{
	xxl_env   *env = &sa->env;
	uint64_t	n = lv->n;
	char_out	co;

	for (int cls = 1; cls <= 2; cls++)
	{
		xxl_spool	   *sp = cls == 1 ? first : second;
		triple_reader tr = {0};
		uint64_t	v;

		co.fill = 0;
		if (triple_reader_open(lv, &tr) != XXL_OK)
			goto failed;
		for (uint64_t i = 0; i < n; i++)
		{
			if (triple_reader_next(&tr, &v) != XXL_OK)
				goto failed;
			if (i % 3 == (uint64_t) cls)
			{
				uint64_t	name = table_name(lv, v);

				if (cls == 1)
					s0_sample_rank(lv, i / 3, name);
				if (char_out_put(sp, &co, name, w) != XXL_OK)
					goto failed;
			}
			if (poll(sa))
				goto failed;
		}
		char_reader_close(&tr.cr);
		if (cls == 1 && lv->dummy)
		{
			s0_sample_rank(lv, lv->n1 - 1, table_name(lv, 0));
			if (char_out_put(sp, &co, table_name(lv, 0), w) != XXL_OK)
				return env->err.code;
		}
		if (char_out_flush(sp, &co) != XXL_OK)
			return env->err.code;
		if (first != second)
			if (xxl_spool_finish(sp) != XXL_OK)
				return env->err.code;
		continue;

failed:
		char_reader_close(&tr.cr);
		return env->err.code;
	}
	if (first == second && xxl_spool_finish(first) != XXL_OK)
		return env->err.code;
	xxl_budget_free(&env->budget, lv->tbits, lv->tbits_bytes);
	xxl_budget_free(&env->budget, lv->tdir, lv->tdir_bytes);
	lv->tbits = NULL;
	lv->tdir = NULL;
	return XXL_OK;
}

/* The names in R order to spools, from the table or from NAMES. */
static xxl_status
write_names(xxl_sa *sa, dc3_level *lv, xxl_spool *first, xxl_spool *second, int w)
{
	if (lv->tbits)
		return table_names(sa, lv, first, second ? second : first, w);
	return spool_names(sa, lv, first, second, w);
}

/* Step 3: recursion; leaves the ranks of the sample in text order in ISA. */
static xxl_status
recurse(xxl_sa *sa, dc3_level *lv, uint64_t D)
{
	xxl_env   *env = &sa->env;
	dc3_level  *child;
	uint64_t	k,
				j = 0,
				out[OUT_BATCH];
	int64_t		got;
	xxl_status	rc;

	if (lv->depth + 1 >= XXL_SA_MAX_LEVELS)
		return xxl_error_set(&env->err, XXL_EINVAL, 0, "DC3: recursion deeper than %d levels",
							 XXL_SA_MAX_LEVELS);
	child = xxl_budget_alloc(&env->budget, sizeof(*child), &env->err);
	if (child == NULL)
		return env->err.code;
	memset(child, 0, sizeof(*child));
	lv->child = child;
	child->depth = lv->depth + 1;
	child->n = lv->n12;
	child->K = D;
	child->cw = width_for(D);
	child->tsp = &child->own;
	child->tw = child->cw;
	child->share_cons = lv->share_a;
	xxl_spool_init(&child->own, env, spool_room(env) / 2);
	if (write_names(sa, lv, &child->own, NULL, child->cw) != XXL_OK)
		return env->err.code;
	rc = level_build(sa, child);
	if (rc != XXL_OK)
		return rc;

	/* rank j+1 for R index k = SA12[j], at k's text-order index */
	if (s0_ranks_alloc(sa, lv) != XXL_OK ||
		xxl_env_scat_open(env, &lv->isa, share_scatter_a(lv), lv->rw, lv->n12) != XXL_OK)
		return env->err.code;
	while ((got = level_fill(sa, child, out, NULL, OUT_BATCH)) > 0)
		for (int64_t x = 0; x < got; x++)
		{
			k = out[x];
			s0_sample_rank(lv, k, j + 1);
			put_be(xxl_env_scat_room(&lv->isa), ++j, lv->rw);
			if (xxl_env_scat_push(env, &lv->isa, text_index_of_r(lv, k)) != XXL_OK)
				return env->err.code;
		}
	if (got < 0)
		return env->err.code;
	if (j != lv->n12)
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "DC3: recursion returned %llu suffixes, expected %llu",
							 (unsigned long long) j, (unsigned long long) lv->n12);
	level_free(sa, child);
	xxl_budget_free(&env->budget, child, sizeof(*child));
	lv->child = NULL;
	return xxl_env_scat_finish(env, &lv->isa);
}

/* The ranks of the sample positions in increasing order (0 from n on). */
typedef struct rank_reader
{
	dc3_level  *lv;
	value_reader r[2];			/* names unique: mod-1 and mod-2 ranks */
	bool		open;
} rank_reader;

static xxl_status
rank_reader_open(xxl_sa *sa, dc3_level *lv, rank_reader *rr)
{
	memset(rr, 0, sizeof(*rr));
	rr->lv = lv;
	if (lv->unique)
	{
		if (value_reader_open(&rr->r[0], &lv->rank1, lv->rw, true) != XXL_OK)
			return sa->env.err.code;
		if (value_reader_open(&rr->r[1], &lv->rank2, lv->rw, true) != XXL_OK)
		{
			value_reader_close(&rr->r[0]);
			return sa->env.err.code;
		}
		rr->open = true;
	}
	return XXL_OK;
}

static inline xxl_status
rank_reader_next(xxl_sa *sa, rank_reader *rr, uint64_t j, uint64_t *rank)
{
	dc3_level  *lv = rr->lv;
	const unsigned char *rec;
	int			got;

	if (j >= lv->n)
	{
		*rank = 0;
		return XXL_OK;
	}
	if (lv->unique)
		return value_reader_next(&rr->r[j % 3 == 1 ? 0 : 1], rank);
	got = xxl_env_scat_next(&sa->env, &lv->isa, &rec);
	if (got < 0)
		return sa->env.err.code;
	if (got == 0)
		return xxl_error_set(&sa->env.err, XXL_EINVAL, 0,
							 "DC3: rank of position %llu missing at level %d",
							 (unsigned long long) j, lv->depth);
	*rank = get_be(rec, lv->rw);
	return XXL_OK;
}

static void
rank_reader_close(rank_reader *rr)
{
	if (rr->open)
	{
		value_reader_close(&rr->r[0]);
		value_reader_close(&rr->r[1]);
	}
	rr->open = false;
}

/*
 * S0, presampled from what steps 1 to 3 kept (distributed in step 4 next to
 * ISA and S12), or staged (distributed once ISA is gone).
 */
static xxl_status
open_s0(xxl_sa *sa, dc3_level *lv)
{
	xxl_env   *env = &sa->env;
	value_reader vr;
	unsigned char key[16];

	if (lv->s0_stride == 0)
		return xxl_env_sort_open(env, &lv->S0, s0_memory(sa, lv), s0_output(sa, lv), s0_size(lv),
						  lv->cw + lv->rw, lv->n0, XXL_INPUT_BOUNDED);
	if (xxl_env_sort_open(env, &lv->S0, lv->s0_mem, lv->s0_out, s0_size(lv), lv->cw + lv->rw, lv->n0,
				   XXL_INPUT_PRESAMPLED) != XXL_OK)
		return env->err.code;
	sa->lstats[lv->depth].s0_presampled = true;
	if (xxl_env_sort_stride(&lv->S0) != lv->s0_stride)
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "DC3: S0 at level %d wants a sample every %llu, planned %llu",
							 lv->depth, (unsigned long long) xxl_env_sort_stride(&lv->S0),
							 (unsigned long long) lv->s0_stride);
	if (value_reader_open(&vr, &lv->s0_t, lv->cw, true) != XXL_OK)
		return env->err.code;
	for (uint64_t c = 0; c < lv->s0_count; c++)
	{
		uint64_t	t;

		if (value_reader_next(&vr, &t) != XXL_OK)
		{
			value_reader_close(&vr);
			return env->err.code;
		}
		put_be(key, t, lv->cw);
		put_be(key + lv->cw, lv->s0_r[c], lv->rw);
		if (xxl_env_sort_sample(env, &lv->S0, key) != XXL_OK)
		{
			value_reader_close(&vr);
			return env->err.code;
		}
	}
	value_reader_close(&vr);
	s0_sample_free(sa, lv);
	return XXL_OK;
}

/* Step 4: merge tuples from T and the ranks. */
static xxl_status
merge_tuples(xxl_sa *sa, dc3_level *lv)
{
	xxl_env   *env = &sa->env;
	xxl_sa_level_stats *st = &sa->lstats[lv->depth];
	uint64_t	n = lv->n;
	int			cw = lv->cw,
				rw = lv->rw,
				pw = lv->pw;
	int			pb = lv->prev ? 1 : 0;
	uint64_t	base = lv->dummy ? 2 : 1;	/* the smallest rank of a real sample */
	char_reader cr = {0};
	rank_reader rr;
	unsigned char rec[64];
	uint64_t	t0,
				t1 = 0,
				raw0,
				raw1 = 0,
				rprev = 0;
	uint64_t	ri = 0,
				ri1 = 0,
				ri2 = 0;
	xxl_status	rc = XXL_OK;

	if (xxl_env_scat_open(env, &lv->S12, lv->share_12, s12_size(lv), n - lv->n0) != XXL_OK ||
		open_s0(sa, lv) != XXL_OK)
		return env->err.code;
	if (rank_reader_open(sa, lv, &rr) != XXL_OK)
		return env->err.code;
	/* raw characters (the BWT wants bytes), renamed here */
	cr.map = NULL;
	if (value_reader_open(&cr.vr, lv->tsp, lv->tw, true) != XXL_OK)
	{
		rank_reader_close(&rr);
		return env->err.code;
	}
	cr.open = true;

#define READ_CHAR(raw, c) \
	do { \
		if ((rc = value_reader_next(&cr.vr, &(raw))) != XXL_OK) \
			goto out; \
		(c) = lv->map ? lv->map[(raw)] : (raw); \
	} while (0)

	READ_CHAR(raw0, t0);
	if (n > 1)
		READ_CHAR(raw1, t1);
	if ((rc = rank_reader_next(sa, &rr, 1, &ri1)) != XXL_OK ||
		(rc = rank_reader_next(sa, &rr, 2, &ri2)) != XXL_OK)
		goto out;
	for (uint64_t i = 0; i < n; i++)
	{
		int			cls = (int) (i % 3);
		unsigned char *p;

		if (cls == 0)
		{
			unsigned char *at = p = xxl_env_sort_room(&lv->S0, rec);

			put_be(p, t0, cw), p += cw;
			put_be(p, ri1, rw), p += rw;
			put_be(p, t1, cw), p += cw;
			put_be(p, ri2, rw), p += rw;
			put_be(p, i, pw), p += pw;
			if (pb)
				*p = (unsigned char) rprev;
			if ((rc = xxl_env_sort_push(env, &lv->S0, at)) != XXL_OK)
				goto out;
		}
		else
		{
			p = xxl_env_scat_room(&lv->S12);
			put_be(p, t0, cw), p += cw;
			put_be(p, cls == 1 ? 0 : t1, cw), p += cw;
			put_be(p, cls == 1 ? ri1 : ri2, rw), p += rw;
			put_be(p, i, pw), p += pw;
			if (pb)
				*p = (unsigned char) rprev;
			if (ri < base || ri - base >= n - lv->n0)
			{
				rc = xxl_error_set(&env->err, XXL_EINVAL, 0,
								   "DC3: rank %llu of position %llu out of range at level %d",
								   (unsigned long long) ri, (unsigned long long) i, lv->depth);
				goto out;
			}
			if ((rc = xxl_env_scat_push(env, &lv->S12, ri - base)) != XXL_OK)
				goto out;
		}

		/* slide the window: T[i+1], T[i+2] and r[i+1], r[i+2], r[i+3] */
		rprev = raw0;
		raw0 = raw1;
		t0 = t1;
		raw1 = 0;
		t1 = 0;
		if (i + 2 < n)
			READ_CHAR(raw1, t1);
		ri = ri1;
		ri1 = ri2;
		ri2 = 0;
		if ((i + 3) % 3 != 0 && (rc = rank_reader_next(sa, &rr, i + 3, &ri2)) != XXL_OK)
			goto out;
		if (poll(sa))
		{
			rc = env->err.code;
			goto out;
		}
	}
#undef READ_CHAR

out:
	char_reader_close(&cr);
	rank_reader_close(&rr);
	if (rc != XXL_OK)
		return rc;
	xxl_env_scat_close(env, &lv->isa, &st->io_bytes, &st->scattered_bytes);
	xxl_spool_free(&lv->rank1);
	xxl_spool_free(&lv->rank2);
	xxl_spool_free(lv->tsp);
	/* ISA is gone: S0 distributes in what S12 leaves */
	if (xxl_env_sort_sort(env, &lv->S0) != XXL_OK || xxl_env_scat_finish(env, &lv->S12) != XXL_OK)
		return env->err.code;
	return XXL_OK;
}

/* Budget charge of one spool's block list of b blocks (xxl_run). */
static uint64_t
list_bytes(uint64_t b)
{
	/* two arrays (ids, keys) of up to 2b entries */
	return 2 * (uint64_t) xxl_budget_charge((size_t) (2 * b * 8));
}

/*
 * An upper bound of what the spools' block lists take at once: a capacity
 * of up to twice the blocks, and one list in the middle of doubling.  The
 * text spool and every level's copy of its text live until that level's
 * merge; the deepest external level may spool its unique names as ranks
 * (mod-1 and mod-2 apart); characters below level 0 are names of up to
 * width_for(n12) bytes.  Plus the level structs.
 */
static uint64_t
lists_bound(const xxl_sa *sa, uint64_t n)
{
	uint64_t	B = sa->env.disk.block_size;
	uint64_t	b = n / B + 1;
	uint64_t	total = list_bytes(b),
				largest = b,
				ranks = 0,
				m = n;
	uint64_t	levels = 1;

	/* down to the first level that is solved in memory (it keeps no copy) */
	while (levels < XXL_SA_MAX_LEVELS)
	{
		uint64_t	m12 = (m + 2) / 3 + m / 3;
		uint64_t	r2 = 2 * list_bytes(m12 * width_for(m12) / B / 2 + 1);

		if (r2 > ranks)
			ranks = r2;
		levels++;
		if (fits_internal((xxl_sa *) sa, m12, m12, sa->env.pool / 100 * SHARE_A_PCT))
			break;
		b = m12 * width_for(m12) / B + 1;
		total += list_bytes(b);
		if (b > largest)
			largest = b;
		m = m12;
	}
	/* the largest list doubling: its old arrays next to the new ones */
	return total + ranks + list_bytes(largest) / 2 + levels * sizeof(dc3_level);
}

/*
 * The block lists come out of the environment's slack.  A long text at a
 * small budget needs more: then the sorters' pool gives it up, before any
 * sorter exists (shares are computed from the pool when they are opened),
 * so that the build does not run out of memory halfway; plan_level then
 * judges the smaller pool.
 */
static xxl_status
reserve_lists(xxl_sa *sa, uint64_t n)
{
	xxl_env   *env = &sa->env;
	uint64_t	need = lists_bound(sa, n);
	size_t		slack = xxl_env_slack(env);
	uint64_t	extra;

	if (need <= slack)
		return XXL_OK;
	extra = XXL_ROUND_UP(need - slack, XXL_ALIGN);
	if (extra >= env->pool / 2)
		return xxl_error_set(&env->err, XXL_ENOMEM, 0,
							 "memory budget of %zu bytes is too small for this text: the spools' "
							 "block lists need about %llu bytes", env->budget.limit,
							 (unsigned long long) need);
	env->pool -= (size_t) extra;
	return XXL_OK;
}

/*
 * Fail fast if the budget cannot carry an external level: check its sorters
 * and permutations before any work is done.
 */
/* The least memory a scatter of these records needs (0 if none is enough). */
static size_t
scatter_need(xxl_env *env, size_t rec_size, uint64_t slots)
{
	size_t		lo = XXL_ALIGN,
				hi = env->pool;

	if (!xxl_env_scat_fits(env, hi, rec_size, slots))
		return 0;
	while (hi - lo > XXL_ALIGN)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (xxl_env_scat_fits(env, mid, rec_size, slots))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/*
 * Whether S0 can be presampled: it then distributes in step 4 next to ISA
 * and S12, and keeps that memory for its output unless the consumer needs
 * more; its sample's ranks come out of share_a (they live next to ISA).
 */
static void
plan_s0_sample(xxl_sa *sa, dc3_level *lv, size_t need_a)
{
	xxl_env   *env = &sa->env;
	size_t		rec = s0_size(lv),
				key = lv->cw + lv->rw;
	size_t		taken = lv->share_a + lv->share_12,
				mem,
				out,
				bytes;
	uint64_t	stride;

	lv->s0_stride = 0;
	if (taken >= env->pool)
		return;
	mem = env->pool - taken;
	out = mem < s0_output(sa, lv) ? mem : s0_output(sa, lv);
	stride = xxl_env_sort_plan_stride(env, mem, out, rec, key, lv->n0);
	if (stride == 0)
		return;
	/* room for the ranks: at most this many samples, for a stride at least this long */
	bytes = XXL_ROUND_UP(((lv->n0 + stride - 1) / stride) * sizeof(uint64_t), XXL_ALIGN);
	if (lv->share_a < need_a + bytes)
		return;
	lv->s0_stride = stride;
	lv->s0_every = xxl_modulus_of(stride);
	lv->s0_count = (lv->n0 + stride - 1) / stride;
	lv->s0_r_bytes = bytes;
	lv->s0_mem = mem;
	lv->s0_out = out;
	xxl_spool_init(&lv->s0_t, env, spool_room(env) / 8);
}

/*
 * The level's shares, and a check that the budget carries its sorts and
 * permutations before any work is done.
 */
static xxl_status
plan_level(xxl_sa *sa, dc3_level *lv)
{
	xxl_env   *env = &sa->env;
	size_t		need_a = scatter_need(env, lv->rw, lv->n12),
				need_12 = scatter_need(env, s12_size(lv), lv->n - lv->n0);

	lv->share_a = env->pool / 100 * SHARE_A_PCT;
	lv->share_12 = env->pool / 100 * SHARE_S12_PCT;
	/* a little more than the least, so that the blocks are not all minimal */
	if (need_a && lv->share_a < need_a + need_a / 8)
		lv->share_a = need_a + need_a / 8;
	if (need_12 && lv->share_12 < need_12 + need_12 / 8)
		lv->share_12 = need_12 + need_12 / 8;
	if (need_a == 0 || need_12 == 0 || lv->share_a + lv->share_12 + lv->share_cons >= env->pool ||
		!xxl_env_sort_fits(env, ts_memory(sa, lv), ts_output(sa, lv), ts_size(lv), 3 * lv->cw, lv->n12) ||
		!xxl_env_sort_fits(env, s0_memory(sa, lv), s0_output(sa, lv), s0_size(lv), lv->cw + lv->rw, lv->n0))
		return xxl_error_set(&env->err, XXL_ENOMEM, 0,
							 "memory budget of %zu bytes is too small for this text: the sorts "
							 "and permutations of level %d (%llu characters) do not fit",
							 env->budget.limit, lv->depth, (unsigned long long) lv->n);
	plan_s0_sample(sa, lv, need_a);
	return XXL_OK;
}

/*
 * Fail before any work if a deeper level would not fit: plan every level
 * below the top one as it may come, with as many names as it can have (the
 * names are unknown until then): a level's names are distinct triples of
 * its parent's characters, so at most min(n, (K + 1)^3).
 */
static xxl_status
plan_below(xxl_sa *sa, const dc3_level *top)
{
	uint64_t	m = top->n12,
				K = top->K;
	size_t		consumer = top->share_a;
	xxl_status	rc = XXL_OK;

	for (int depth = 1; depth < XXL_SA_MAX_LEVELS && m > 1 && rc == XXL_OK; depth++)
	{
		dc3_level	lv;

		K = K + 1 < (UINT64_C(1) << 21) && (K + 1) * (K + 1) * (K + 1) < m ? (K + 1) * (K + 1) * (K + 1) : m;
		if (fits_internal(sa, m, K, consumer))
			break;
		memset(&lv, 0, sizeof(lv));
		lv.depth = depth;
		lv.n = m;
		lv.K = K;
		lv.cw = width_for(K);
		lv.share_cons = consumer;
		lv.pw = width_for(m);
		lv.n0 = lv.n1 = (m + 2) / 3;
		lv.n2 = m / 3;
		lv.n12 = lv.n1 + lv.n2;
		lv.dummy = m % 3 == 1;
		lv.rw = width_for(lv.n12);
		rc = plan_level(sa, &lv);
		xxl_spool_free(&lv.s0_t);
		consumer = lv.share_a;
		m = lv.n12;
	}
	return rc;
}

static xxl_status
build_external(xxl_sa *sa, dc3_level *lv)
{
	xxl_env   *env = &sa->env;
	uint64_t	n = lv->n;
	uint64_t	D = 0;

	lv->internal = false;
	lv->pw = width_for(n);
	lv->n0 = (n + 2) / 3;
	lv->n1 = (n + 2) / 3;
	lv->n2 = n / 3;
	lv->n12 = lv->n1 + lv->n2;
	lv->dummy = n % 3 == 1;
	lv->rw = width_for(lv->n12);
	if (lv->depth == 0 && reserve_lists(sa, n) != XXL_OK)
		return env->err.code;
	if (plan_level(sa, lv) != XXL_OK || (lv->depth == 0 && plan_below(sa, lv) != XXL_OK))
		return env->err.code;
	if (table_fits(sa, lv))
	{
		sa->lstats[0].names_by_table = true;
		if (table_mark(sa, lv, &D) != XXL_OK)
			return env->err.code;
	}
	else if (sample_triples(sa, lv) != XXL_OK || name_triples(sa, lv, &D) != XXL_OK)
		return env->err.code;
	lv->unique = D == lv->n12;
	sa->lstats[lv->depth].names_unique = lv->unique;
	if (lv->unique)
	{
		size_t		room = spool_room(env) / 2;

		xxl_spool_init(&lv->rank1, env, room / 2);
		xxl_spool_init(&lv->rank2, env, room / 2);
		if (s0_ranks_alloc(sa, lv) != XXL_OK ||
			write_names(sa, lv, &lv->rank1, &lv->rank2, lv->rw) != XXL_OK)
			return env->err.code;
	}
	else if (recurse(sa, lv, D) != XXL_OK)
		return env->err.code;
	return merge_tuples(sa, lv);
}

static xxl_status
level_build(xxl_sa *sa, dc3_level *lv)
{
	xxl_sa_level_stats *st = &sa->lstats[lv->depth];

	if (lv->depth + 1 > sa->levels)
		sa->levels = lv->depth + 1;
	st->n = lv->n;
	st->alphabet = lv->K;
	st->char_bytes = lv->cw;
	if (fits_internal(sa, lv->n, lv->K, lv->share_cons))
	{
		st->internal = true;
		return build_internal(sa, lv);
	}
	/* an external level 0 keeps at most the spool allowance of text in memory */
	if (lv->depth == 0 && !sa->text.on_disk && sa->text.mem_used > sa->env.spool_allowance &&
		xxl_spool_spill(&sa->text) != XXL_OK)
		return sa->env.err.code;
	return build_external(sa, lv);
}

/* Step 5: the merge --------------------------------------------------------- */

static inline void
decode(const dc3_level *lv, int which, const unsigned char *p, merge_head *h)
{
	int			cw = lv->cw,
				rw = lv->rw;
	uint64_t	t,
				t1,
				r1 = 0,
				r;

	t = get_be(p, cw), p += cw;
	if (which == 0)
		r1 = get_be(p, rw), p += rw;
	t1 = get_be(p, cw), p += cw;
	r = get_be(p, rw), p += rw;	/* S0: r[i+2]; S12: r[i+1] or r[i+2] */
	h->i = get_be(p, lv->pw);
	p += lv->pw;
	h->key = MERGE_KEY(t, t1, r);
	if (which == 0)
		h->key1 = MERGE_KEY(t, 0, r1);
	h->mod1 = h->i % 3 == 1;
	h->prev = lv->prev ? (h->i == 0 ? -1 : *p) : -1;
}

static inline int
fetch(xxl_sa *sa, dc3_level *lv, int which)
{
	const unsigned char *rec;
	int			got = which == 0 ? xxl_env_sort_next(&sa->env, &lv->S0, &rec)
		: xxl_env_scat_next(&sa->env, &lv->S12, &rec);

	if (got < 0)
		return -1;
	lv->have[which] = got > 0;
	if (got > 0)
		decode(lv, which, rec, &lv->h[which]);
	return 0;
}

/*
 * Is the mod-0 suffix a smaller than the sample suffix b?  [T]'s rules: a
 * mod-1 b compares by (T[i], r[i+1]), a mod-2 b by (T[i], T[i+1], r[i+2]).
 * No ties: the ranks of different sample positions differ, and r = 0 only
 * past the end.
 */
static inline bool
less0(const merge_head *a, const merge_head *b)
{
	return (b->mod1 ? a->key1 : a->key) < b->key;
}

/*
 * The next suffixes of a level in order, up to cap of them: their positions
 * and, if prev is not NULL, the bytes before them.  Returns how many, 0 at
 * the end, -1 on error.  The consumers (the parent's ISA, the caller) take
 * them in batches: one call per suffix cost a tenth of the build.
 */
static int64_t
level_fill(xxl_sa *sa, dc3_level *lv, uint64_t *pos, int *prev, size_t cap)
{
	size_t		k = 0;

	if (sa->env.cancel && xxl_env_canceled(&sa->env))
		return -1;
	if (lv->internal)
	{
		for (; k < cap && lv->out <= lv->n; k++)
		{
			int32_t		p = lv->SA[lv->out++];

			pos[k] = (uint64_t) p;
			if (prev)
			{
				if (p == 0 || lv->text == NULL)
					prev[k] = -1;
				else
				{
					uint32_t	c = lv->ts == 1 ? ((uint8_t *) lv->text)[p - 1]
						: ((uint16_t *) lv->text)[p - 1];

					prev[k] = lv->unmap ? lv->unmap[c] : (int) c - 1;
				}
			}
		}
		return (int64_t) k;
	}
	if (!lv->primed)
	{
		for (int c = 0; c < 2; c++)
			if (fetch(sa, lv, c) < 0)
				return -1;
		lv->primed = true;
	}
	/* both sides left: fetch is inlined for each side */
	while (k < cap && lv->have[0] && lv->have[1])
	{
		int			best = less0(&lv->h[0], &lv->h[1]) ? 0 : 1;

		pos[k] = lv->h[best].i;
		if (prev)
			prev[k] = lv->h[best].prev;
		k++;
		lv->emitted++;
		if ((best == 0 ? fetch(sa, lv, 0) : fetch(sa, lv, 1)) < 0)
			return -1;
	}
	while (k < cap)
	{
		int			best;

		if (lv->have[0] || lv->have[1])
			best = lv->have[0] ? 0 : 1;
		else
		{
			if (lv->emitted != lv->n)
			{
				xxl_error_set(&sa->env.err, XXL_EINVAL, 0, "DC3: merge produced %llu of %llu suffixes",
							  (unsigned long long) lv->emitted, (unsigned long long) lv->n);
				return -1;
			}
			break;
		}
		pos[k] = lv->h[best].i;
		if (prev)
			prev[k] = lv->h[best].prev;
		k++;
		lv->emitted++;
		if (fetch(sa, lv, best) < 0)
			return -1;
	}
	return (int64_t) k;
}

static void
level_free(xxl_sa *sa, dc3_level *lv)
{
	xxl_env   *env = &sa->env;
	xxl_sa_level_stats *st = &sa->lstats[lv->depth];

	if (lv->child)
	{
		level_free(sa, lv->child);
		xxl_budget_free(&env->budget, lv->child, sizeof(*lv->child));
		lv->child = NULL;
	}
	st->overfull_buckets += xxl_env_sort_overfull(&lv->TS) + xxl_env_sort_overfull(&lv->S0);
	xxl_env_sort_close(env, &lv->TS, &st->io_bytes, &st->sorted_bytes);
	xxl_env_sort_close(env, &lv->S0, &st->io_bytes, &st->sorted_bytes);
	xxl_env_scat_close(env, &lv->names, &st->io_bytes, &st->scattered_bytes);
	xxl_env_scat_close(env, &lv->isa, &st->io_bytes, &st->scattered_bytes);
	xxl_env_scat_close(env, &lv->S12, &st->io_bytes, &st->scattered_bytes);
	if (lv->depth > 0)
		xxl_spool_free(&lv->own);
	s0_sample_free(sa, lv);
	xxl_spool_free(&lv->rank1);
	xxl_spool_free(&lv->rank2);
	if (lv->tbits)
		xxl_budget_free(&env->budget, lv->tbits, lv->tbits_bytes);
	if (lv->tdir)
		xxl_budget_free(&env->budget, lv->tdir, lv->tdir_bytes);
	lv->tbits = NULL;
	lv->tdir = NULL;
	if (lv->text)
		xxl_budget_free(&env->budget, lv->text, lv->text_bytes);
	lv->text = NULL;
	if (lv->SA)
		xxl_budget_free(&env->budget, lv->SA, lv->sa_bytes);
	lv->SA = NULL;
}

/* Public API ------------------------------------------------------------------ */

/* Longest text the put phase keeps in memory: what an in-memory build can take. */
static uint64_t
put_memory_limit(xxl_sa *sa)
{
	uint64_t	lo = 0,
				hi = sa->env.pool;

	if (sa->cfg.internal_max > 0 && sa->cfg.internal_max < hi)
		hi = sa->cfg.internal_max > sa->env.spool_allowance ? sa->cfg.internal_max
			: sa->env.spool_allowance;
	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo + 1) / 2;

		if (internal_need(mid, 256) <= sa->env.pool)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo > sa->env.spool_allowance ? lo : sa->env.spool_allowance;
}

xxl_sa *
xxl_sa_create(const xxl_sa_config *cfg, xxl_error *err)
{
	xxl_sa	   *sa = calloc(1, sizeof(*sa));

	if (sa == NULL)
	{
		xxl_error_set(err, XXL_ENOMEM, 0, "could not allocate the suffix array builder");
		return NULL;
	}
	if (text_env_init(&sa->env, cfg) != XXL_OK)
	{
		*err = sa->env.err;
		free(sa);
		return NULL;
	}
	sa->cfg = *cfg;
	sa->phase = SA_PUT;
	sa->last_byte = -1;
	xxl_spool_init(&sa->text, &sa->env, (size_t) put_memory_limit(sa));
	return sa;
}

static xxl_status
sa_fail(xxl_sa *sa)
{
	sa->phase = SA_FAILED;
	if (sa->env.err.code == XXL_OK)
		xxl_error_set(&sa->env.err, XXL_EIO, 0, "suffix array construction failed");
	return sa->env.err.code;
}

xxl_status
xxl_sa_put(xxl_sa *sa, const void *bytes, size_t len)
{
	const unsigned char *b = bytes;

	if (sa->phase != SA_PUT)
		return sa->phase == SA_FAILED ? sa->env.err.code
			: xxl_error_set(&sa->env.err, XXL_EINVAL, 0, "text can only be added before xxl_sa_build");
	if (len == 0)
		return XXL_OK;
	if (sa->n + len >= XXL_SA_MAX_TEXT)
	{
		xxl_error_set(&sa->env.err, XXL_EINVAL, 0, "text longer than 2^40 bytes");
		return sa_fail(sa);
	}
	for (size_t i = 0; i < len; i++)
		sa->present[b[i]] = true;
	sa->last_byte = b[len - 1];
	sa->n += len;
	if (xxl_spool_write(&sa->text, bytes, len) != XXL_OK || xxl_env_canceled(&sa->env))
		return sa_fail(sa);
	return XXL_OK;
}

/* Rename bytes to 1..d (d distinct, order kept); 256 distinct need 2 bytes. */
static void
make_map(xxl_sa *sa, uint64_t *K, int *cw)
{
	int			d = 0;

	for (int b = 0; b < 256; b++)
		if (sa->present[b])
			d++;
	if (d <= 255)
	{
		int			c = 0;

		for (int b = 0; b < 256; b++)
		{
			sa->map[b] = sa->present[b] ? (uint16_t) ++c : 0;
			if (sa->present[b])
				sa->unmap[c] = (uint8_t) b;
		}
		*K = d;
		*cw = 1;
	}
	else
	{
		for (int b = 0; b < 256; b++)
			sa->map[b] = (uint16_t) (b + 1);
		*K = 256;
		*cw = 2;
	}
}

static xxl_status
build_bwt(xxl_sa *sa)
{
	xxl_env   *env = &sa->env;
	unsigned char buf[4096];
	size_t		fill = 0;
	uint64_t	j = 0;
	int64_t		got;
	size_t		left = env->spool_allowance > env->spool_mem ? env->spool_allowance - env->spool_mem : 0;

	xxl_spool_init(&sa->bwt, env, left);
	if (sa->n == 0)
		return xxl_spool_finish(&sa->bwt);
	buf[fill++] = (unsigned char) sa->last_byte;
	while ((got = level_fill(sa, sa->top, sa->out_pos, sa->out_prev, OUT_BATCH)) > 0)
		for (int64_t x = 0; x < got; x++)
		{
			if (sa->out_pos[x] == 0)
				sa->primary = j + 1;
			else
			{
				buf[fill++] = (unsigned char) sa->out_prev[x];
				if (fill == sizeof(buf))
				{
					if (xxl_spool_write(&sa->bwt, buf, fill) != XXL_OK)
						return env->err.code;
					fill = 0;
				}
			}
			j++;
		}
	if (got < 0)
		return env->err.code;
	if (fill > 0 && xxl_spool_write(&sa->bwt, buf, fill) != XXL_OK)
		return env->err.code;
	level_free(sa, sa->top);
	if (xxl_spool_finish(&sa->bwt) != XXL_OK)
		return env->err.code;
	if (xxl_spool_reader_open(&sa->bwt_rd, &sa->bwt, true) != XXL_OK)
		return env->err.code;
	sa->bwt_open = true;
	return XXL_OK;
}

/*
 * The top level's merge on a worker (external builds of positions with more
 * than one thread): it fills batches of positions into two slots while the
 * caller hands out the other — the host writes its rows meanwhile, which in
 * SQL cost as much as the merge.  The worker runs level_fill alone: the
 * level's sorts and scatters are its own from then on, it records errors in
 * the environment (read by the caller only once the worker has ended), and
 * its cancel polls see only the environment's stop flag, which the caller
 * sets when the host asks to stop (xxl_env_host_stop) — polled at every
 * batch and while it waits for one.  The slots are charged to the budget; where they do
 * not fit, the caller merges as before.
 */
#define MERGER_BATCH 16384
#define MERGER_POLL_NS (20 * 1000 * 1000)

typedef struct sa_merger
{
	pthread_t	thread;
	pthread_mutex_t mu;
	pthread_cond_t to_worker;	/* a slot was given back, or stop */
	pthread_cond_t to_caller;	/* a batch is ready */
	int			ready,			/* filled slots not given back */
				head;			/* the oldest */
	bool		stop;
	bool		holding;		/* the caller hands out slot head */
	bool		ended;			/* the last batch (0 or an error) was taken */
	int64_t		got[2];
	uint64_t   *pos[2];
	int		   *prev[2];
	size_t		bytes;
} sa_merger;

static void *
merger_main(void *arg)
{
	xxl_sa	   *sa = arg;
	sa_merger  *m = sa->merger;

	for (int w = 0;; w ^= 1)
	{
		int64_t		got;

		pthread_mutex_lock(&m->mu);
		while (m->ready == 2 && !m->stop)
			pthread_cond_wait(&m->to_worker, &m->mu);
		if (m->stop)
		{
			pthread_mutex_unlock(&m->mu);
			break;
		}
		pthread_mutex_unlock(&m->mu);
		got = level_fill(sa, sa->top, m->pos[w], m->prev[w], MERGER_BATCH);
		pthread_mutex_lock(&m->mu);
		m->got[w] = got;
		m->ready++;
		pthread_cond_signal(&m->to_caller);
		pthread_mutex_unlock(&m->mu);
		if (got <= 0)
			break;
	}
	return NULL;
}

/* Start the worker where it pays and fits; false: the caller merges. */
static bool
merger_start(xxl_sa *sa)
{
	xxl_env   *env = &sa->env;
	sa_merger  *m;
	size_t		slot = MERGER_BATCH * (sizeof(uint64_t) + (sa->top->prev ? sizeof(int) : 0)),
				bytes = xxl_budget_charge(2 * slot);
	unsigned char *mem;

	if (env->threads < 2 || sa->top->internal || sa->cfg.mode != XXL_SA_POSITIONS ||
		xxl_budget_available(&env->budget) < bytes + xxl_env_slack(env))
		return false;
	m = xxl_calloc_aligned(sizeof(*m));
	if (m == NULL)
		return false;
	{
		/* a failure here only means the caller merges: it is not the operator's error */
		xxl_error	ignored = {0};

		mem = xxl_budget_alloc(&env->budget, 2 * slot, &ignored);
	}
	if (mem == NULL)
	{
		free(m);
		return false;
	}
	m->bytes = 2 * slot;
	for (int w = 0; w < 2; w++)
	{
		m->pos[w] = (uint64_t *) (mem + w * slot);
		m->prev[w] = sa->top->prev ? (int *) (mem + w * slot + MERGER_BATCH * sizeof(uint64_t)) : NULL;
	}
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->to_worker, NULL);
	pthread_cond_init(&m->to_caller, NULL);
	sa->merger = m;
	if (xxl_thread_start(&m->thread, merger_main, sa) != 0)
	{
		pthread_mutex_destroy(&m->mu);
		pthread_cond_destroy(&m->to_worker);
		pthread_cond_destroy(&m->to_caller);
		xxl_budget_free(&env->budget, mem, m->bytes);
		free(m);
		sa->merger = NULL;
		return false;
	}
	sa->merge_async = true;
	return true;
}

/* The next batch from the worker into cur_pos/cur_prev: its count, 0 at the end, -1 on error. */
static int64_t
merger_next(xxl_sa *sa)
{
	sa_merger  *m = sa->merger;
	int64_t		got;

	/* once a batch, as the caller's own merge polls once a call of level_fill */
	xxl_env_host_stop(&sa->env);
	pthread_mutex_lock(&m->mu);
	if (m->holding)
	{
		m->ready--;
		m->head ^= 1;
		m->holding = false;
		pthread_cond_signal(&m->to_worker);
	}
	while (m->ready == 0)
	{
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += MERGER_POLL_NS;
		if (until.tv_nsec >= 1000000000)
			until.tv_sec++, until.tv_nsec -= 1000000000;
		if (pthread_cond_timedwait(&m->to_caller, &m->mu, &until) != 0 && m->ready == 0)
		{
			/* the worker's polls see the stop; it ends with an error soon */
			pthread_mutex_unlock(&m->mu);
			xxl_env_host_stop(&sa->env);
			pthread_mutex_lock(&m->mu);
		}
	}
	got = m->got[m->head];
	m->holding = true;
	sa->cur_pos = m->pos[m->head];
	sa->cur_prev = m->prev[m->head];
	if (got <= 0)
		m->ended = true;
	pthread_mutex_unlock(&m->mu);
	return got;
}

/* Stop the worker (after the batch it fills) and give its slots back. */
static void
merger_stop(xxl_sa *sa)
{
	sa_merger  *m = sa->merger;

	if (m == NULL)
		return;
	xxl_thread_stop(m->thread, &m->mu, &m->to_worker, &m->stop);
	pthread_mutex_destroy(&m->mu);
	pthread_cond_destroy(&m->to_worker);
	pthread_cond_destroy(&m->to_caller);
	xxl_budget_free(&sa->env.budget, m->pos[0], m->bytes);
	free(m);
	sa->merger = NULL;
}

xxl_status
xxl_sa_build(xxl_sa *sa)
{
	xxl_env   *env = &sa->env;
	dc3_level  *top;
	int			cw;
	uint64_t	K;

	if (sa->phase != SA_PUT)
		return sa->phase == SA_FAILED ? env->err.code
			: xxl_error_set(&env->err, XXL_EINVAL, 0, "xxl_sa_build called twice");
	sa->t_build = xxl_now_ns();
	if (xxl_spool_finish(&sa->text) != XXL_OK)
		return sa_fail(sa);
	make_map(sa, &K, &cw);
	top = xxl_budget_alloc(&env->budget, sizeof(*top), &env->err);
	if (top == NULL)
		return sa_fail(sa);
	memset(top, 0, sizeof(*top));
	sa->top = top;
	top->n = sa->n;
	top->K = K;
	top->cw = cw;
	top->prev = sa->cfg.with_prev || sa->cfg.mode == XXL_SA_BWT;
	top->unmap = cw == 1 ? sa->unmap : NULL;
	top->tsp = &sa->text;
	top->tw = 1;
	top->map = sa->map;
	if (level_build(sa, top) != XXL_OK)
		return sa_fail(sa);
	if (sa->cfg.mode == XXL_SA_BWT && build_bwt(sa) != XXL_OK)
		return sa_fail(sa);
	sa->build_ns = xxl_now_ns() - sa->t_build;
	sa->phase = SA_OUTPUT;
	merger_start(sa);
	return XXL_OK;
}

int
xxl_sa_next_prev(xxl_sa *sa, uint64_t *pos, int *prev)
{
	if (sa->phase == SA_DONE)
		return 0;
	if (sa->phase != SA_OUTPUT || sa->cfg.mode != XXL_SA_POSITIONS)
	{
		if (sa->phase != SA_FAILED)
			xxl_error_set(&sa->env.err, XXL_EINVAL, 0,
						  sa->phase == SA_PUT ? "xxl_sa_build must be called before reading"
						  : "suffix positions are not available in BWT mode");
		return -(int) sa_fail(sa);
	}
	if (prev && !sa->top->prev)
	{
		xxl_error_set(&sa->env.err, XXL_EINVAL, 0, "preceding bytes need with_prev");
		return -(int) sa_fail(sa);
	}
	if (sa->out_at == sa->out_n)
	{
		int64_t		got;

		if (sa->merger)
		{
			got = merger_next(sa);
			if (got <= 0)
				merger_stop(sa);	/* it has ended: its errors are in env */
		}
		else
		{
			got = level_fill(sa, sa->top, sa->out_pos, sa->top->prev ? sa->out_prev : NULL, OUT_BATCH);
			sa->cur_pos = sa->out_pos;
			sa->cur_prev = sa->out_prev;
		}
		if (got < 0)
			return -(int) sa_fail(sa);
		if (got == 0)
		{
			/* release the sorts and their spill files as soon as possible */
			level_free(sa, sa->top);
			sa->build_ns = xxl_now_ns() - sa->t_build;
			sa->phase = SA_DONE;
			return 0;
		}
		sa->out_n = got;
		sa->out_at = 0;
	}
	*pos = sa->cur_pos[sa->out_at];
	if (prev)
		*prev = sa->cur_prev[sa->out_at];
	sa->out_at++;
	return 1;
}

int
xxl_sa_next(xxl_sa *sa, uint64_t *pos)
{
	return xxl_sa_next_prev(sa, pos, NULL);
}

int
xxl_sa_bwt_read(xxl_sa *sa, void *buf, size_t cap, size_t *len)
{
	unsigned char *out = buf;

	*len = 0;
	if (sa->phase == SA_DONE)
		return 0;
	if (sa->phase != SA_OUTPUT || sa->cfg.mode != XXL_SA_BWT)
	{
		if (sa->phase != SA_FAILED)
			xxl_error_set(&sa->env.err, XXL_EINVAL, 0, "the BWT needs mode XXL_SA_BWT and xxl_sa_build");
		return -(int) sa_fail(sa);
	}
	while (*len < cap)
	{
		size_t		n;

		if (sa->bwt_avail == 0)
		{
			if (xxl_spool_reader_piece(&sa->bwt_rd, &sa->bwt_p, &sa->bwt_avail) != XXL_OK)
				return -(int) sa_fail(sa);
			if (sa->bwt_avail == 0)
				break;
		}
		n = cap - *len < sa->bwt_avail ? cap - *len : sa->bwt_avail;
		memcpy(out + *len, sa->bwt_p, n);
		sa->bwt_p += n;
		sa->bwt_avail -= n;
		*len += n;
	}
	if (*len == 0)
	{
		xxl_spool_reader_close(&sa->bwt_rd);
		sa->bwt_open = false;
		xxl_spool_free(&sa->bwt);
		sa->phase = SA_DONE;
		return 0;
	}
	return 1;
}

uint64_t
xxl_sa_bwt_primary(const xxl_sa *sa)
{
	return sa->primary;
}

const xxl_error *
xxl_sa_error(const xxl_sa *sa)
{
	return &sa->env.err;
}

void
xxl_sa_stats_get(const xxl_sa *sa, xxl_sa_stats *st)
{
	const xxl_env *env = &sa->env;

	memset(st, 0, sizeof(*st));
	st->n = sa->n;
	st->levels = sa->levels;
	st->recursion_depth = sa->levels > 0 ? sa->levels - 1 : 0;
	for (int i = 0; i < sa->levels && i < XXL_SA_MAX_LEVELS; i++)
	{
		st->level[i] = sa->lstats[i];
		if (!sa->lstats[i].internal)
			st->external_levels++;
	}
	xxl_env_io_sum(env, &st->bytes_read, &st->bytes_written, &st->io_wait_ns, &st->io_direct);
	st->sorted_bytes = env->done.sorted_bytes;
	st->scattered_bytes = env->done.scattered_bytes;
	st->spool_bytes = env->done.spool_bytes;
	st->runs = env->done.runs;
	st->max_merge_passes = env->done.max_passes;
	st->thesis_bytes = (2 * 30 + 6) * 4 * sa->n;
	st->memory_peak = xxl_env_used_peak(env);
	st->memory_limit = env->budget.limit;
	st->block_size = env->disk.block_size;
	st->sorter_block_max = env->largest_block;
	st->build_ns = sa->build_ns;
	st->merge_async = sa->merge_async;
}

void
xxl_sa_destroy(xxl_sa *sa)
{
	if (sa == NULL)
		return;
	/* a worker still merging stops at its next batch or poll */
	__atomic_store_n(&sa->env.stop, 1, __ATOMIC_RELEASE);
	merger_stop(sa);
	if (sa->top)
	{
		level_free(sa, sa->top);
		xxl_budget_free(&sa->env.budget, sa->top, sizeof(*sa->top));
	}
	if (sa->bwt_open)
		xxl_spool_reader_close(&sa->bwt_rd);
	xxl_spool_free(&sa->bwt);
	xxl_spool_free(&sa->text);
	xxl_env_close(&sa->env);
	free(sa);
}

xxl_status
xxl_bwt_inverse(const unsigned char *bwt, uint64_t n, uint64_t primary, unsigned char *out,
				xxl_error *err)
{
	uint64_t	C[257];
	uint64_t	occ[256];
	uint64_t   *LF;
	uint64_t	row = 0;

	if (n == 0)
		return XXL_OK;
	if (primary < 1 || primary > n)
		return xxl_error_set(err, XXL_EINVAL, 0, "primary index %llu out of range 1..%llu",
							 (unsigned long long) primary, (unsigned long long) n);
	LF = malloc((n + 1) * sizeof(uint64_t));
	if (LF == NULL)
		return xxl_error_set(err, XXL_ENOMEM, 0, "could not allocate the inverse BWT");

	/*
	 * Rows of T$ sorted: row 0 is $T, whose last column holds T[n-1].  The
	 * full last column is bwt with $ inserted at primary.
	 */
	memset(occ, 0, sizeof(occ));
	for (uint64_t i = 0; i < n; i++)
		occ[bwt[i]]++;
	C[0] = 1;					/* $ sorts first */
	for (int c = 0; c < 256; c++)
		C[c + 1] = C[c] + occ[c];
	memset(occ, 0, sizeof(occ));
	for (uint64_t i = 0; i <= n; i++)
	{
		int			c;

		if (i == primary)
		{
			LF[i] = 0;
			continue;
		}
		c = bwt[i < primary ? i : i - 1];
		LF[i] = C[c] + occ[c]++;
	}
	for (uint64_t k = n; k > 0; k--)
	{
		out[k - 1] = bwt[row < primary ? row : row - 1];
		row = LF[row];
	}
	free(LF);
	return XXL_OK;
}
