/*
 * dc3_level.c — one DC3 level, steps 1-3 (dc3_internal.h): the sample's
 * triples sorted and named, recursion on the names; then step 4
 * (dc3_tuples.c) forms the merge tuples.  SA-IS instead when the level
 * fits in memory.
 */
#include "core/text/dc3_internal.h"

#include <stdlib.h>
#include <string.h>

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

		if (char_reader_next(&cr, &c) != XXL_OK || dc3_poll(sa))
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


/*
 * T[i], T[i+1], T[i+2] (0 past the end) as i runs over T.  Three scalars, not
 * an array: shifting an array whose last element was just stored made gcc
 * load two elements at once, which waits for that store to retire (store
 * forwarding fails), the largest cost of step 1.
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
		if (triple_window_slide(&w, &cr, i, n) != XXL_OK || dc3_poll(sa))
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
				   lv->n12, XXL_INPUT_PRESAMPLED_CALLER_BUCKETS) != XXL_OK ||
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
		if (triple_window_slide(&w, &cr, i, n) != XXL_OK || dc3_poll(sa))
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
		if (xxl_env_scat_push(env, &lv->names, get_be(r + 3 * cw, rw)) != XXL_OK || dc3_poll(sa))
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
		if (char_out_put(sp, &co, get_be(r, lv->rw), w) != XXL_OK || dc3_poll(sa))
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
				c1,				/* T[i+1], T[i+2] of the triple handed out next */
				c2;
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
	if (tr->n > 0 && char_reader_next(&tr->cr, &tr->c1) != XXL_OK)
		return lv->tsp->env->err.code;
	if (tr->n > 1 && char_reader_next(&tr->cr, &tr->c2) != XXL_OK)
		return lv->tsp->env->err.code;
	return XXL_OK;
}

/* The triple at the next position (n calls in all); the window slides without a division. */
static inline xxl_status
triple_reader_next(triple_reader *tr, uint64_t *triple)
{
	uint64_t	c = 0;
	xxl_status	rc = XXL_OK;

	if (tr->i + 2 < tr->n)
		rc = char_reader_next(&tr->cr, &c);
	*triple = tr->c1 * tr->kk + tr->c2 * tr->k + c;
	tr->c1 = tr->c2;
	tr->c2 = c;
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

/*
 * The table's passes count bits: with the CPU's popcnt where it has one
 * (the baseline x86-64 the server is built for lacks it, and gcc then calls
 * a library routine per name).
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define WITH_POPCNT __attribute__((target_clones("popcnt", "default")))
#else
#define WITH_POPCNT
#endif

WITH_POPCNT static xxl_status
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
		if (dc3_poll(sa))
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
WITH_POPCNT static xxl_status
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
			if (dc3_poll(sa))
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

/*
 * A level below the top: n characters over 1..K (names), written by its
 * parent into its own spool; its output goes to a consumer holding
 * share_cons of the pool.  NULL on error (in env).
 */
dc3_level *
dc3_child_new(xxl_sa *sa, int depth, uint64_t n, uint64_t K, size_t share_cons)
{
	xxl_env    *env = &sa->env;
	dc3_level  *child = xxl_budget_alloc(&env->budget, sizeof(*child), &env->err);

	if (child == NULL)
		return NULL;
	memset(child, 0, sizeof(*child));
	child->depth = depth;
	child->n = n;
	child->K = K;
	child->cw = char_width(sa, K);
	child->tsp = &child->own;
	child->tw = child->cw;
	child->share_cons = share_cons;
	xxl_spool_init(&child->own, env, spool_room(env) / 2);
	return child;
}

void
dc3_child_free(xxl_sa *sa, dc3_level *child)
{
	dc3_level_free(sa, child);
	xxl_budget_free(&sa->env.budget, child, sizeof(*child));
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
	child = dc3_child_new(sa, lv->depth + 1, lv->n12, D, lv->share_a);
	if (child == NULL)
		return env->err.code;
	lv->child = child;
	if (write_names(sa, lv, &child->own, NULL, child->cw) != XXL_OK)
		return env->err.code;
	rc = dc3_level_build(sa, child);
	if (rc != XXL_OK)
		return rc;
	xxl_env_step(env, "building level", (uint32_t) lv->depth + 1, 0);	/* back up here */

	/* rank j+1 for R index k = SA12[j], at k's text-order index */
	if (s0_ranks_alloc(sa, lv) != XXL_OK ||
		xxl_env_scat_open(env, &lv->isa, share_scatter_a(lv), lv->rw, lv->n12) != XXL_OK)
		return env->err.code;

	/*
	 * The child's merge runs on a worker where the budget has room for its
	 * ring, this thread filling ISA meanwhile: merging and filling each take
	 * about half of this thread's time.
	 */
	(void) dc3_merger_start(sa, child);	/* else dc3_merge_next merges here */
	while ((got = dc3_merge_next(sa, child, out, NULL, OUT_BATCH)) > 0)
	{
		for (int64_t x = 0; x < got; x++)
		{
			k = sa->cur_pos[x];
			s0_sample_rank(lv, k, j + 1);
			put_be(xxl_env_scat_room(&lv->isa), ++j, lv->rw);
			if (xxl_env_scat_push(env, &lv->isa, text_index_of_r(lv, k)) != XXL_OK)
			{
				dc3_merger_abandon(sa);
				return env->err.code;
			}
		}
	}
	if (got < 0)
		return env->err.code;
	if (j != lv->n12)
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "DC3: recursion returned %llu suffixes, expected %llu",
							 (unsigned long long) j, (unsigned long long) lv->n12);
	dc3_child_free(sa, child);
	lv->child = NULL;
	return xxl_env_scat_finish(env, &lv->isa);
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
		lv.cw = char_width(sa, K);
		lv.share_cons = consumer;
		lv.pw = pos_width(sa, m);
		lv.n0 = lv.n1 = (m + 2) / 3;
		lv.n2 = m / 3;
		lv.n12 = lv.n1 + lv.n2;
		lv.dummy = m % 3 == 1;
		lv.rw = rank_width(sa, lv.n12);
		rc = dc3_plan_level(sa, &lv);
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
	lv->pw = pos_width(sa, n);
	lv->n0 = (n + 2) / 3;
	lv->n1 = (n + 2) / 3;
	lv->n2 = n / 3;
	lv->n12 = lv->n1 + lv->n2;
	lv->dummy = n % 3 == 1;
	lv->rw = rank_width(sa, lv->n12);
	if (lv->depth == 0 && dc3_reserve_lists(sa, n) != XXL_OK)
		return env->err.code;
	if (dc3_plan_level(sa, lv) != XXL_OK || (lv->depth == 0 && plan_below(sa, lv) != XXL_OK))
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
	return dc3_merge_tuples(sa, lv);
}

xxl_status
dc3_level_build(xxl_sa *sa, dc3_level *lv)
{
	xxl_sa_level_stats *st = &sa->lstats[lv->depth];

	if (lv->depth + 1 > sa->levels)
		sa->levels = lv->depth + 1;
	xxl_env_step(&sa->env, "building level", (uint32_t) lv->depth + 1, 0);
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

