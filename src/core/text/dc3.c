/*
 * dc3.c — the suffix-array builder (xxl_suffix.h): pipelined external DC3
 * ([T] Fig. 5.6/5.7, [KSB06]) on the core sorter, recursing on the names of
 * the sample suffixes until a subtext fits the budget, where SA-IS (sais.c)
 * takes over; plus the BWT mode and an in-memory inverse BWT.
 *
 * One level, text T[0,n) over characters 1..K (0 is the end marker $):
 *  1. one scan of T: the triples of the sample positions i mod 3 != 0 go to
 *     sorter TS; deeper levels also copy T to a spool (it is needed again
 *     in step 4 and arrives as a stream, [T] §5.5).  If n mod 3 = 1 a dummy
 *     sample at position n with triple ($,$,$) is added ([KSB06]): the mod-1
 *     block of the recursive string then ends with a unique name, so no
 *     comparison of recursive suffixes runs on into the mod-2 block.  For the
 *     other n the last mod-1 triple already contains a $.
 *  2. naming scan of the sorted triples: dense names 1..D go to sorter P
 *     keyed by position.  Sorted by position, P serves both outcomes: if the
 *     names are unique they are the ranks in text order that step 4 needs
 *     (so the "undo the sort" technicality of [T] §5.2 does not arise); if
 *     not, the recursive string (mod-1 names, then mod-2 names; the thesis
 *     sorts by (i mod 3, i div 3) instead) is read from P with the mod-2
 *     names set aside in a spool, a scan of n/3 names instead of a sort.
 *  3. names not unique: recurse (n' = 2n/3 characters over 1..D); entry j
 *     of the child's suffix array, recursive position k, gives rank j+1 to
 *     the parent position of k, into sorter Q keyed by that position (the
 *     inverse suffix array of the sample, [T] line 7).
 *  4. one scan of T with the ranks in text order (R = P or Q) produces the
 *     merge tuples S0 = (T[i], r[i+1] | T[i+1], r[i+2], i) for i mod 3 = 0
 *     and S12 = (r[i] | T[i], T[i+1], r', i) for the sample, where r' is
 *     r[i+1] for i mod 3 = 1 and r[i+2] for i mod 3 = 2, each sorted by the
 *     fields before |.  [T]'s S1 and S2 are both sorted by rank, so one
 *     sorter holds them (one byte more per mod-1 tuple, one sorter less).
 *  5. two-way merge of S0 and S12 with [T]'s comparisons, pulled by the
 *     consumer: the caller at the top level, the parent's Q below.
 *
 * Records are byte-packed big-endian fields sized for the level: characters
 * take 1 byte at level 0 (bytes are renamed to 1..d, d <= 255 distinct; 2
 * bytes if all 256 occur), names and positions as few bytes as their range
 * needs (at most 5 for 2^40).  At level 0 every merge tuple may also carry
 * T[i-1], which yields the BWT straight out of the final merge.
 *
 * Memory: sorters own their share for life, so shares follow the stages'
 * overlap (of the pool: TS 72 % next to the parent's P 28 %; P next to TS;
 * Q 28 % next to the child's S0 24 % and S12 48 %; S0 and S12 next to R).
 * An in-memory subproblem gets 72 % (all of it at level 0).  At most three
 * sorters live at once.
 */
#include "text_internal.h"

#include <stdlib.h>
#include <string.h>

typedef enum sa_phase
{
	SA_PUT,
	SA_OUTPUT,
	SA_DONE,
	SA_FAILED
} sa_phase;

typedef struct merge_head
{
	uint64_t	t,
				t1,
				r,
				r1,
				r2,
				i;
	int			prev;
} merge_head;

typedef struct dc3_level
{
	int			depth;
	uint64_t	n;
	uint64_t	K;				/* characters are 1..K */
	int			cw,				/* bytes per character */
				pw,				/* bytes per position (0..n) */
				rw;				/* bytes per name or rank (0..n12) */
	uint64_t	n1,				/* mod-1 samples, the dummy included */
				n2,
				n12;
	bool		prev;			/* carry T[i-1] (top level, BWT) */
	bool		internal;

	/* internal */
	void	   *text;
	size_t		text_bytes;
	int			ts;
	int32_t    *SA;
	size_t		sa_bytes;
	uint64_t	out;
	const uint8_t *unmap;

	/* external */
	spool		own;			/* this level's copy of T (depth > 0) */
	spool		mod2;			/* mod-2 names on their way to the child */
	text_sorter TS;
	text_sorter P;
	text_sorter Q;
	text_sorter S[2];			/* S0, S12 */
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

static xxl_status
char_out_put(spool *sp, char_out *o, uint64_t c, int w)
{
	if (o->fill + (size_t) w > sizeof(o->buf))
	{
		if (spool_write(sp, o->buf, o->fill) != XXL_OK)
			return sp->env->err.code;
		o->fill = 0;
	}
	put_be(o->buf + o->fill, c, w);
	o->fill += w;
	return XXL_OK;
}

/* Where a level reads its text from. */
typedef struct text_src
{
	bool		bytes;			/* level 0: raw bytes of a spool, renamed */
	spool	   *sp;
	value_reader vr;
	bool		open;
	const uint16_t *map;
	dc3_level  *parent;			/* names: mod-1 from the parent's P, then mod-2 */
	bool		second;			/* reading the mod-2 names back */
	char_out	co;				/* the mod-2 names on their way to the spool */
	xxl_sa_level_stats *pstats;
} text_src;

struct xxl_sa
{
	text_env	env;
	xxl_sa_config cfg;
	sa_phase	phase;
	spool		text;
	uint64_t	n;
	bool		present[256];
	int			last_byte;
	uint16_t	map[256];
	uint8_t		unmap[257];
	dc3_level  *top;
	/* BWT */
	spool		bwt;
	spool_reader bwt_rd;
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

static xxl_status level_build(xxl_sa *sa, dc3_level *lv, text_src *src);
static int	level_next(xxl_sa *sa, dc3_level *lv, uint64_t *pos, int *prev);
static void level_free(xxl_sa *sa, dc3_level *lv);

static inline bool
poll(xxl_sa *sa)
{
	return (++sa->env.polls & POLL_MASK) == 0 && text_env_canceled(&sa->env);
}

/* Sizes -------------------------------------------------------------------- */

/*
 * Memory shares of the sorters, roughly in proportion to what they take
 * (the core sorter's capacity grows with its memory): P and Q (2n/3 pairs)
 * 28 %, S0 (n/3 tuples) 24 %, S12 (2n/3 tuples) the remaining 48 %, TS
 * whatever P leaves.  Live together: TS + P, R + S0 + S12, and the child's
 * S0 + S12 + the parent's Q.
 */
static inline size_t
share_p(const xxl_sa *sa)
{
	return sa->env.pool / 100 * 28;
}

static inline size_t
share_s0(const xxl_sa *sa)
{
	return sa->env.pool / 100 * 24;
}

static inline size_t
share_s12(const xxl_sa *sa)
{
	return sa->env.pool - share_p(sa) - share_s0(sa);
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

static bool
fits_internal(xxl_sa *sa, uint64_t n, uint64_t K, int depth)
{
	uint64_t	avail = depth == 0 ? sa->env.pool : sa->env.pool - share_p(sa);

	if (n <= 1)
		return true;
	if (n + 1 >= INT32_MAX || K >= UINT32_MAX)
		return false;
	if (sa->cfg.internal_max > 0 && n > sa->cfg.internal_max)
		return false;
	return internal_need(n, K) <= avail;
}

/* Text sources ------------------------------------------------------------- */

static xxl_status
src_open(xxl_sa *sa, text_src *src, bool consume)
{
	if (src->bytes && !src->open)
	{
		if (value_reader_open(&src->vr, src->sp, 1, consume) != XXL_OK)
			return sa->env.err.code;
		src->open = true;
	}
	return XXL_OK;
}

/* Next character of the source (the caller knows how many there are). */
static inline xxl_status
src_next(xxl_sa *sa, text_src *src, uint64_t *c)
{
	if (src->bytes)
	{
		uint64_t	b;

		if (value_reader_next(&src->vr, &b) != XXL_OK)
			return sa->env.err.code;
		*c = src->map[b];
		return XXL_OK;
	}
	if (!src->second)
	{
		dc3_level  *p = src->parent;
		const unsigned char *rec;
		int			got;

		while ((got = tsort_next(&sa->env, &p->P, &rec)) > 0)
		{
			uint64_t	i = get_be(rec, p->pw);
			uint64_t	name = get_be(rec + p->pw, p->rw);

			if (i % 3 == 1)
			{
				*c = name;
				return XXL_OK;
			}
			if (char_out_put(&p->mod2, &src->co, name, p->rw) != XXL_OK)
				return sa->env.err.code;
		}
		if (got < 0)
			return sa->env.err.code;
		/* the mod-1 names are through: the mod-2 names follow */
		if ((src->co.fill > 0 && spool_write(&p->mod2, src->co.buf, src->co.fill) != XXL_OK) ||
			spool_finish(&p->mod2) != XXL_OK ||
			value_reader_open(&src->vr, &p->mod2, p->rw, true) != XXL_OK)
			return sa->env.err.code;
		src->co.fill = 0;
		src->open = true;
		src->second = true;
	}
	return value_reader_next(&src->vr, c);
}

static void
src_close(xxl_sa *sa, text_src *src)
{
	if (src->bytes)
	{
		if (src->open)
			value_reader_close(&src->vr);
		src->open = false;
	}
	else if (src->parent)
	{
		if (src->open)
			value_reader_close(&src->vr);
		src->open = false;
		tsort_close(&sa->env, &src->parent->P, &src->pstats->io_bytes,
					&src->pstats->sorted_bytes);
		spool_free(&src->parent->mod2);
	}
}

/* Internal levels ---------------------------------------------------------- */

static xxl_status
build_internal(xxl_sa *sa, dc3_level *lv, text_src *src)
{
	text_env   *env = &sa->env;
	uint64_t	n = lv->n;
	int			ts = mem_char_bytes(lv->K);
	xxl_status	rc;

	lv->internal = true;
	lv->ts = ts;
	lv->text_bytes = (size_t) ((n + 1) * ts);
	if (src_open(sa, src, true) != XXL_OK)
		return env->err.code;
	lv->text = xxl_budget_alloc(&env->budget, lv->text_bytes, &env->err);
	if (lv->text == NULL)
		return env->err.code;
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	c = 0;

		if (src_next(sa, src, &c) != XXL_OK)
			return env->err.code;
		if (ts == 1)
			((uint8_t *) lv->text)[i] = (uint8_t) c;
		else if (ts == 2)
			((uint16_t *) lv->text)[i] = (uint16_t) c;
		else
			((uint32_t *) lv->text)[i] = (uint32_t) c;
		if (poll(sa))
			return env->err.code;
	}
	memset((char *) lv->text + n * ts, 0, ts);
	src_close(sa, src);
	if (lv->depth == 0)
		spool_free(&sa->text);

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

/* Steps 1 and 2: triples, naming.  Returns the number of names in *D. */
static xxl_status
sample_and_name(xxl_sa *sa, dc3_level *lv, text_src *src, uint64_t *D)
{
	text_env   *env = &sa->env;
	xxl_sa_level_stats *st = &sa->lstats[lv->depth];
	uint64_t	n = lv->n;
	int			cw = lv->cw,
				pw = lv->pw;
	size_t		trec = 3 * cw + pw;
	unsigned char rec[64];
	unsigned char last[32];
	uint64_t	a[3];
	uint64_t	name = 0;
	char_out	co;
	const unsigned char *r;
	int			got;

	/* 1: the triples of the sample, and the copy of T */
	if (tsort_open(env, &lv->TS, env->pool - share_p(sa), trec, 3 * cw, lv->n12) != XXL_OK)
		return env->err.code;
	if (src_open(sa, src, false) != XXL_OK)
		return env->err.code;
	co.fill = 0;
	for (int k = 0; k < 3; k++)
	{
		a[k] = 0;
		if ((uint64_t) k < n)
		{
			if (src_next(sa, src, &a[k]) != XXL_OK)
				return env->err.code;
			if (lv->depth > 0 && char_out_put(&lv->own, &co, a[k], cw) != XXL_OK)
				return env->err.code;
		}
	}
	for (uint64_t i = 0; i < n; i++)
	{
		if (i % 3 != 0)
		{
			put_be(rec, a[0], cw);
			put_be(rec + cw, a[1], cw);
			put_be(rec + 2 * cw, a[2], cw);
			put_be(rec + 3 * cw, i, pw);
			if (tsort_put(env, &lv->TS, rec) != XXL_OK)
				return env->err.code;
		}
		a[0] = a[1];
		a[1] = a[2];
		a[2] = 0;
		if (i + 3 < n)
		{
			if (src_next(sa, src, &a[2]) != XXL_OK)
				return env->err.code;
			if (lv->depth > 0 && char_out_put(&lv->own, &co, a[2], cw) != XXL_OK)
				return env->err.code;
		}
		if (poll(sa))
			return env->err.code;
	}
	if (n % 3 == 1)
	{
		memset(rec, 0, 3 * cw);
		put_be(rec + 3 * cw, n, pw);
		if (tsort_put(env, &lv->TS, rec) != XXL_OK)
			return env->err.code;
	}
	src_close(sa, src);
	if (lv->depth > 0)
	{
		if (co.fill > 0 && spool_write(&lv->own, co.buf, co.fill) != XXL_OK)
			return env->err.code;
		if (spool_finish(&lv->own) != XXL_OK)
			return env->err.code;
	}
	if (tsort_sort(env, &lv->TS) != XXL_OK)
		return env->err.code;

	/* 2: dense names into P, keyed by position */
	if (tsort_open(env, &lv->P, share_p(sa), pw + lv->rw, pw, lv->n12) != XXL_OK)
		return env->err.code;
	while ((got = tsort_next(env, &lv->TS, &r)) > 0)
	{
		if (name == 0 || memcmp(r, last, 3 * cw) != 0)
		{
			name++;
			memcpy(last, r, 3 * cw);
		}
		memcpy(rec, r + 3 * cw, pw);
		put_be(rec + pw, name, lv->rw);
		if (tsort_put(env, &lv->P, rec) != XXL_OK)
			return env->err.code;
		if (poll(sa))
			return env->err.code;
	}
	if (got < 0)
		return env->err.code;
	tsort_close(env, &lv->TS, &st->io_bytes, &st->sorted_bytes);
	if (tsort_sort(env, &lv->P) != XXL_OK)
		return env->err.code;
	*D = name;
	return XXL_OK;
}

/* Step 3: recursion; leaves the ranks of the sample in Q. */
static xxl_status
recurse(xxl_sa *sa, dc3_level *lv, uint64_t D)
{
	text_env   *env = &sa->env;
	xxl_sa_level_stats *st = &sa->lstats[lv->depth];
	dc3_level  *child;
	text_src	src;
	unsigned char rec[32];
	uint64_t	k,
				j = 0;
	int			got;
	xxl_status	rc;
	size_t		left = env->spool_allowance > env->spool_mem ? env->spool_allowance - env->spool_mem : 0;

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

	spool_init(&lv->mod2, env, left / 2);
	memset(&src, 0, sizeof(src));
	src.parent = lv;
	src.pstats = st;
	rc = level_build(sa, child, &src);
	src_close(sa, &src);
	if (rc != XXL_OK)
		return rc;

	/* rank j+1 for recursive position k = SA12[j], keyed by k's position here */
	if (tsort_open(env, &lv->Q, share_p(sa), lv->pw + lv->rw, lv->pw, lv->n12) != XXL_OK)
		return env->err.code;
	while ((got = level_next(sa, child, &k, NULL)) > 0)
	{
		uint64_t	i = k < lv->n1 ? 3 * k + 1 : 3 * (k - lv->n1) + 2;

		put_be(rec, i, lv->pw);
		put_be(rec + lv->pw, ++j, lv->rw);
		if (tsort_put(env, &lv->Q, rec) != XXL_OK)
			return env->err.code;
		if (poll(sa))
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
	return tsort_sort(env, &lv->Q);
}

/* Rank of sample position j (0 for j >= n), read in increasing j. */
static inline xxl_status
next_rank(xxl_sa *sa, dc3_level *lv, text_sorter *R, uint64_t j, uint64_t *rank)
{
	const unsigned char *rec;
	int			got;

	if (j >= lv->n)
	{
		*rank = 0;
		return XXL_OK;
	}
	got = tsort_next(&sa->env, R, &rec);
	if (got < 0)
		return sa->env.err.code;
	if (got == 0 || get_be(rec, lv->pw) != j)
		return xxl_error_set(&sa->env.err, XXL_EINVAL, 0,
							 "DC3: rank of position %llu missing at level %d",
							 (unsigned long long) j, lv->depth);
	*rank = get_be(rec + lv->pw, lv->rw);
	return XXL_OK;
}

/* Step 4: merge tuples from T and the ranks. */
static xxl_status
merge_tuples(xxl_sa *sa, dc3_level *lv, text_sorter *R)
{
	text_env   *env = &sa->env;
	xxl_sa_level_stats *st = &sa->lstats[lv->depth];
	uint64_t	n = lv->n;
	int			cw = lv->cw,
				rw = lv->rw,
				pw = lv->pw;
	int			pb = lv->prev ? 1 : 0;
	size_t		size0 = 2 * cw + 2 * rw + pw + pb,
				size12 = 2 * cw + 2 * rw + pw + pb;
	uint64_t	n0 = (n + 2) / 3;
	spool	   *tsp = lv->depth == 0 ? &sa->text : &lv->own;
	value_reader vr;
	bool		vr_open = false;
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

	if (tsort_open(env, &lv->S[0], share_s0(sa), size0, cw + rw, n0) != XXL_OK ||
		tsort_open(env, &lv->S[1], share_s12(sa), size12, rw, n - n0) != XXL_OK)
		return env->err.code;
	if (value_reader_open(&vr, tsp, lv->depth == 0 ? 1 : cw, false) != XXL_OK)
		return env->err.code;
	vr_open = true;

#define READ_CHAR(raw, c) \
	do { \
		if ((rc = value_reader_next(&vr, &(raw))) != XXL_OK) \
			goto out; \
		(c) = lv->depth == 0 ? sa->map[(raw)] : (raw); \
	} while (0)

	READ_CHAR(raw0, t0);
	if (n > 1)
		READ_CHAR(raw1, t1);
	if ((rc = next_rank(sa, lv, R, 1, &ri1)) != XXL_OK ||
		(rc = next_rank(sa, lv, R, 2, &ri2)) != XXL_OK)
		goto out;
	for (uint64_t i = 0; i < n; i++)
	{
		unsigned char *p = rec;
		int			cls = (int) (i % 3);

		if (cls == 0)
		{
			put_be(p, t0, cw), p += cw;
			put_be(p, ri1, rw), p += rw;
			put_be(p, t1, cw), p += cw;
			put_be(p, ri2, rw), p += rw;
		}
		else
		{
			put_be(p, ri, rw), p += rw;
			put_be(p, t0, cw), p += cw;
			put_be(p, cls == 1 ? 0 : t1, cw), p += cw;
			put_be(p, cls == 1 ? ri1 : ri2, rw), p += rw;
		}
		put_be(p, i, pw), p += pw;
		if (pb)
			*p = (unsigned char) rprev;
		if ((rc = tsort_put(env, &lv->S[cls == 0 ? 0 : 1], rec)) != XXL_OK)
			goto out;

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
		if ((i + 3) % 3 != 0 && (rc = next_rank(sa, lv, R, i + 3, &ri2)) != XXL_OK)
			goto out;
		if (poll(sa))
		{
			rc = env->err.code;
			goto out;
		}
	}
#undef READ_CHAR

out:
	if (vr_open)
		value_reader_close(&vr);
	if (rc != XXL_OK)
		return rc;
	tsort_close(env, R, &st->io_bytes, &st->sorted_bytes);
	spool_free(tsp);
	for (int k = 0; k < 2; k++)
		if (tsort_sort(env, &lv->S[k]) != XXL_OK)
			return env->err.code;
	return XXL_OK;
}

/* Budget charge of one spool's block list of b blocks (xxl_run). */
static uint64_t
list_bytes(uint64_t b)
{
	/* two arrays (ids, keys) of up to 2b entries; page-rounded from 4 kB on */
	uint64_t	bytes = 2 * b * 8;

	return 2 * (bytes >= XXL_ALIGN ? XXL_ROUND_UP(bytes, XXL_ALIGN) : XXL_ROUND_UP(bytes, 16));
}

/*
 * An upper bound of what the spools' block lists take at once: a capacity
 * of up to twice the blocks, and one list in the middle of doubling.  The
 * text spool and every level's copy of its text live until that level's
 * merge, next to one spool of mod-2 names; characters below level 0 are
 * names of up to width_for(n12) bytes.  Plus the level structs.
 */
static uint64_t
lists_bound(const xxl_sa *sa, uint64_t n)
{
	uint64_t	B = sa->env.disk.block_size;
	uint64_t	b = n / B + 1;
	uint64_t	total = list_bytes(b),
				largest = b,
				mod2 = 0,
				m = n;
	uint64_t	levels = 1;

	/* down to the first level that is solved in memory (it keeps no copy) */
	while (levels < XXL_SA_MAX_LEVELS)
	{
		uint64_t	m12 = (m + 2) / 3 + m / 3;
		uint64_t	b2 = list_bytes((m / 3) * width_for(m12) / B + 1);

		if (b2 > mod2)
			mod2 = b2;
		levels++;
		if (fits_internal((xxl_sa *) sa, m12, m12, 1))
			break;
		b = m12 * width_for(m12) / B + 1;
		total += list_bytes(b);
		if (b > largest)
			largest = b;
		m = m12;
	}
	/* the largest list doubling: its old arrays next to the new ones */
	return total + mod2 + list_bytes(largest) / 2 + levels * sizeof(dc3_level);
}

/*
 * The block lists come out of the environment's slack.  A long text at a
 * small budget needs more: then the sorters' pool gives it up, before any
 * sorter exists (shares are computed from the pool when they are opened),
 * so that the build does not run out of memory halfway; check_plan then
 * judges the smaller pool.
 */
static xxl_status
reserve_lists(xxl_sa *sa, uint64_t n)
{
	text_env   *env = &sa->env;
	uint64_t	need = lists_bound(sa, n);
	size_t		slack = text_env_slack(env);
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
 * before any work is done.
 */
static xxl_status
check_plan(xxl_sa *sa, const dc3_level *lv)
{
	text_env   *env = &sa->env;
	uint64_t	n = lv->n,
				n0 = (n + 2) / 3;
	int			cw = lv->cw,
				pw = lv->pw,
				rw = lv->rw;
	size_t		s12 = 2 * cw + 2 * rw + pw + (lv->prev ? 1 : 0);
	size_t		block;

	if (tsort_pick_block(env, env->pool - share_p(sa), 3 * cw + pw, lv->n12, &block) != XXL_OK ||
		tsort_pick_block(env, share_p(sa), pw + rw, lv->n12, &block) != XXL_OK ||
		tsort_pick_block(env, share_s0(sa), s12, n0, &block) != XXL_OK ||
		tsort_pick_block(env, share_s12(sa), s12, n - n0, &block) != XXL_OK)
		return env->err.code;
	return XXL_OK;
}

static xxl_status
build_external(xxl_sa *sa, dc3_level *lv, text_src *src)
{
	text_env   *env = &sa->env;
	uint64_t	n = lv->n;
	uint64_t	D;

	lv->internal = false;
	lv->pw = width_for(n);
	lv->n1 = (n + 2) / 3;
	lv->n2 = n / 3;
	lv->n12 = lv->n1 + lv->n2;
	lv->rw = width_for(lv->n12);
	if (lv->depth == 0 && reserve_lists(sa, n) != XXL_OK)
		return env->err.code;
	if (check_plan(sa, lv) != XXL_OK)
		return env->err.code;
	if (lv->depth > 0)
	{
		size_t		left = env->spool_allowance > env->spool_mem
			? env->spool_allowance - env->spool_mem : 0;

		spool_init(&lv->own, env, left / 2);
	}
	if (sample_and_name(sa, lv, src, &D) != XXL_OK)
		return env->err.code;
	sa->lstats[lv->depth].names_unique = (D == lv->n12);
	if (D < lv->n12)
	{
		if (recurse(sa, lv, D) != XXL_OK)
			return env->err.code;
		return merge_tuples(sa, lv, &lv->Q);
	}
	return merge_tuples(sa, lv, &lv->P);
}

static xxl_status
level_build(xxl_sa *sa, dc3_level *lv, text_src *src)
{
	xxl_sa_level_stats *st = &sa->lstats[lv->depth];

	if (lv->depth + 1 > sa->levels)
		sa->levels = lv->depth + 1;
	st->n = lv->n;
	st->alphabet = lv->K;
	st->char_bytes = lv->cw;
	if (fits_internal(sa, lv->n, lv->K, lv->depth))
	{
		st->internal = true;
		return build_internal(sa, lv, src);
	}
	/* an external level 0 keeps at most the spool allowance of text in memory */
	if (lv->depth == 0 && !sa->text.on_disk && sa->text.mem_used > sa->env.spool_allowance &&
		spool_spill(&sa->text) != XXL_OK)
		return sa->env.err.code;
	return build_external(sa, lv, src);
}

/* Step 5: the merge --------------------------------------------------------- */

static void
decode(const dc3_level *lv, int which, const unsigned char *p, merge_head *h)
{
	int			cw = lv->cw,
				rw = lv->rw;

	if (which == 0)
	{
		h->t = get_be(p, cw), p += cw;
		h->r1 = get_be(p, rw), p += rw;
		h->t1 = get_be(p, cw), p += cw;
		h->r2 = get_be(p, rw), p += rw;
	}
	else
	{
		h->r = get_be(p, rw), p += rw;
		h->t = get_be(p, cw), p += cw;
		h->t1 = get_be(p, cw), p += cw;
		h->r2 = get_be(p, rw), p += rw;	/* r[i+1] or r[i+2] */
	}
	h->i = get_be(p, lv->pw);
	p += lv->pw;
	h->prev = lv->prev ? (h->i == 0 ? -1 : *p) : -1;
}

static int
fetch(xxl_sa *sa, dc3_level *lv, int which)
{
	const unsigned char *rec;
	int			got = tsort_next(&sa->env, &lv->S[which], &rec);

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
	if (a->t != b->t)
		return a->t < b->t;
	if (b->i % 3 == 1)
		return a->r1 < b->r2;
	if (a->t1 != b->t1)
		return a->t1 < b->t1;
	return a->r2 < b->r2;
}

static int
level_next(xxl_sa *sa, dc3_level *lv, uint64_t *pos, int *prev)
{
	int			best;

	if (lv->internal)
	{
		int32_t		p;

		if (lv->out > lv->n)
			return 0;
		p = lv->SA[lv->out++];
		*pos = (uint64_t) p;
		if (prev)
		{
			if (p == 0 || lv->text == NULL)
				*prev = -1;
			else
			{
				uint32_t	c = lv->ts == 1 ? ((uint8_t *) lv->text)[p - 1]
					: ((uint16_t *) lv->text)[p - 1];

				*prev = lv->unmap ? lv->unmap[c] : (int) c - 1;
			}
		}
		if (poll(sa))
			return -1;
		return 1;
	}
	if (!lv->primed)
	{
		for (int c = 0; c < 2; c++)
			if (fetch(sa, lv, c) < 0)
				return -1;
		lv->primed = true;
	}
	if (lv->have[0] && lv->have[1])
		best = less0(&lv->h[0], &lv->h[1]) ? 0 : 1;
	else if (lv->have[0] || lv->have[1])
		best = lv->have[0] ? 0 : 1;
	else
	{
		if (lv->emitted != lv->n)
		{
			xxl_error_set(&sa->env.err, XXL_EINVAL, 0, "DC3: merge produced %llu of %llu suffixes",
						  (unsigned long long) lv->emitted, (unsigned long long) lv->n);
			return -1;
		}
		return 0;
	}
	*pos = lv->h[best].i;
	if (prev)
		*prev = lv->h[best].prev;
	lv->emitted++;
	if (fetch(sa, lv, best) < 0 || poll(sa))
		return -1;
	return 1;
}

static void
level_free(xxl_sa *sa, dc3_level *lv)
{
	text_env   *env = &sa->env;
	xxl_sa_level_stats *st = &sa->lstats[lv->depth];

	if (lv->child)
	{
		level_free(sa, lv->child);
		xxl_budget_free(&env->budget, lv->child, sizeof(*lv->child));
		lv->child = NULL;
	}
	tsort_close(env, &lv->TS, &st->io_bytes, &st->sorted_bytes);
	tsort_close(env, &lv->P, &st->io_bytes, &st->sorted_bytes);
	tsort_close(env, &lv->Q, &st->io_bytes, &st->sorted_bytes);
	for (int k = 0; k < 2; k++)
		tsort_close(env, &lv->S[k], &st->io_bytes, &st->sorted_bytes);
	if (lv->depth > 0)
		spool_free(&lv->own);
	spool_free(&lv->mod2);
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
	spool_init(&sa->text, &sa->env, (size_t) put_memory_limit(sa));
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
	if (spool_write(&sa->text, bytes, len) != XXL_OK || text_env_canceled(&sa->env))
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
	text_env   *env = &sa->env;
	unsigned char buf[4096];
	size_t		fill = 0;
	uint64_t	pos,
				j = 0;
	int			prev,
				got;
	size_t		left = env->spool_allowance > env->spool_mem ? env->spool_allowance - env->spool_mem : 0;

	spool_init(&sa->bwt, env, left);
	if (sa->n == 0)
		return spool_finish(&sa->bwt);
	buf[fill++] = (unsigned char) sa->last_byte;
	while ((got = level_next(sa, sa->top, &pos, &prev)) > 0)
	{
		if (pos == 0)
			sa->primary = j + 1;
		else
		{
			buf[fill++] = (unsigned char) prev;
			if (fill == sizeof(buf))
			{
				if (spool_write(&sa->bwt, buf, fill) != XXL_OK)
					return env->err.code;
				fill = 0;
			}
		}
		j++;
	}
	if (got < 0)
		return env->err.code;
	if (fill > 0 && spool_write(&sa->bwt, buf, fill) != XXL_OK)
		return env->err.code;
	level_free(sa, sa->top);
	if (spool_finish(&sa->bwt) != XXL_OK)
		return env->err.code;
	if (spool_reader_open(&sa->bwt_rd, &sa->bwt, true) != XXL_OK)
		return env->err.code;
	sa->bwt_open = true;
	return XXL_OK;
}

xxl_status
xxl_sa_build(xxl_sa *sa)
{
	text_env   *env = &sa->env;
	dc3_level  *top;
	text_src	src;
	int			cw;
	uint64_t	K;

	if (sa->phase != SA_PUT)
		return sa->phase == SA_FAILED ? env->err.code
			: xxl_error_set(&env->err, XXL_EINVAL, 0, "xxl_sa_build called twice");
	sa->t_build = xxl_now_ns();
	if (spool_finish(&sa->text) != XXL_OK)
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
	memset(&src, 0, sizeof(src));
	src.bytes = true;
	src.sp = &sa->text;
	src.map = sa->map;
	if (level_build(sa, top, &src) != XXL_OK)
	{
		src_close(sa, &src);
		return sa_fail(sa);
	}
	src_close(sa, &src);
	if (sa->cfg.mode == XXL_SA_BWT && build_bwt(sa) != XXL_OK)
		return sa_fail(sa);
	sa->build_ns = xxl_now_ns() - sa->t_build;
	sa->phase = SA_OUTPUT;
	return XXL_OK;
}

int
xxl_sa_next_prev(xxl_sa *sa, uint64_t *pos, int *prev)
{
	int			got;

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
	got = level_next(sa, sa->top, pos, prev);
	if (got < 0)
		return -(int) sa_fail(sa);
	if (got == 0)
	{
		/* release the sorters and their spill files as soon as possible */
		level_free(sa, sa->top);
		sa->build_ns = xxl_now_ns() - sa->t_build;
		sa->phase = SA_DONE;
	}
	return got;
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
			if (spool_reader_piece(&sa->bwt_rd, &sa->bwt_p, &sa->bwt_avail) != XXL_OK)
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
		spool_reader_close(&sa->bwt_rd);
		sa->bwt_open = false;
		spool_free(&sa->bwt);
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
	const text_env *env = &sa->env;

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
	text_env_io(env, &st->bytes_read, &st->bytes_written);
	st->io_wait_ns = text_env_io_wait(env);
	st->io_direct = text_env_io_direct(env);
	st->sorted_bytes = env->sorted_bytes;
	st->spool_bytes = env->spool_bytes;
	st->runs = env->runs;
	st->max_merge_passes = env->max_passes;
	st->thesis_bytes = (2 * 30 + 6) * 4 * sa->n;
	st->memory_peak = env->budget.peak;
	st->memory_limit = env->budget.limit;
	st->block_size = env->disk.block_size;
	st->sorter_block_max = env->largest_block;
	st->build_ns = sa->build_ns;
}

void
xxl_sa_destroy(xxl_sa *sa)
{
	if (sa == NULL)
		return;
	if (sa->top)
	{
		level_free(sa, sa->top);
		xxl_budget_free(&sa->env.budget, sa->top, sizeof(*sa->top));
	}
	if (sa->bwt_open)
		spool_reader_close(&sa->bwt_rd);
	spool_free(&sa->bwt);
	spool_free(&sa->text);
	text_env_close(&sa->env);
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
