/*
 * lcp.c — the LCP operator (xxl_lcp.h): its life (create, run, output,
 * statistics, destroy), the text into its store, the rank-order step that
 * puts the suffixes into D, the text-order pass that turns D and the
 * answers into PLCP values, and the rank-order output.  How the suffix
 * array comes in is lcp_input.c.
 */
#include "core/text/lcp_internal.h"

#include <stdlib.h>
#include <string.h>

/* the text store's part of the budget (deferring: smaller), and its least */
#define STORE_DIVISOR 4
#define DEFER_STORE_DIVISOR 32
#define STORE_MIN (64 * 1024)
/* the deferred suffix array's store (its block list grows with n / 256 kB), its buffer */
#define DEFER_SPOOL_DIVISOR 32
#define DEFER_SPOOL_MIN (64 * 1024)

static size_t
store_memory_for(size_t memory, bool defer)
{
	size_t		m = memory / (defer ? DEFER_STORE_DIVISOR : STORE_DIVISOR);

	/* near the least budget the parts keep the text plan's least */
	if (!defer && memory >= xxl_lcp_min_memory() && memory - m < xxl_sa_min_memory())
		m = memory - xxl_sa_min_memory();
	return m < STORE_MIN ? STORE_MIN : m;
}

static size_t
defer_spool_memory(size_t memory)
{
	size_t		m = memory / DEFER_SPOOL_DIVISOR;

	return m < DEFER_SPOOL_MIN ? DEFER_SPOOL_MIN : m;
}

size_t
xxl_lcp_defer_memory(size_t memory)
{
	return store_memory_for(memory, true) + defer_spool_memory(memory) + DEFER_BUFFER;
}

size_t
xxl_lcp_min_memory(void)
{
	/* the parts' least is the text plan's (their sorters keep runs on disk), and the store's */
	return xxl_sa_min_memory() + STORE_MIN;
}

xxl_lcp *
xxl_lcp_create(const xxl_lcp_config *cfg, xxl_error *err)
{
	xxl_lcp    *l;
	xxl_resources res = cfg->res;
	xxl_sa_config store_cfg;
	size_t		store_memory;

	if (cfg->res.memory < xxl_lcp_min_memory())
	{
		xxl_error_set(err, XXL_EINVAL, 0, "memory budget of %zu bytes is below the LCP operator's minimum of %zu",
					  cfg->res.memory, xxl_lcp_min_memory());
		return NULL;
	}
	if (cfg->min_length > 0 && cfg->min_count < 2)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "repeats need a min_count of at least 2");
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (l == NULL)
	{
		xxl_error_set(err, XXL_ENOMEM, 0, "could not allocate the LCP operator");
		return NULL;
	}
	store_memory = store_memory_for(cfg->res.memory, cfg->defer);
	res.memory = cfg->res.memory - (cfg->defer ? xxl_lcp_defer_memory(cfg->res.memory) : store_memory);
	if (xxl_env_open(&l->env, &res, &text_plan) != XXL_OK)
	{
		*err = l->env.err;
		free(l);
		return NULL;
	}
	l->cfg = *cfg;
	memset(&store_cfg, 0, sizeof(store_cfg));
	store_cfg.res = cfg->res;
	store_cfg.res.memory = store_memory;
	l->store = xxl_text_store_create(&store_cfg, err);
	if (cfg->defer && l->store != NULL)
	{
		store_cfg.res.memory = defer_spool_memory(cfg->res.memory);
		store_cfg.sequential = true;
		l->deferred = xxl_text_store_create(&store_cfg, err);
		l->dbuf = l->deferred ? malloc(DEFER_BUFFER) : NULL;
	}
	if (l->store == NULL || (cfg->defer && l->dbuf == NULL))
	{
		if (l->dbuf == NULL && cfg->defer && l->deferred != NULL)
			xxl_error_set(err, XXL_ENOMEM, 0, "could not allocate the LCP operator's buffer");
		xxl_text_store_destroy(l->deferred);
		xxl_text_store_destroy(l->store);
		xxl_env_close(&l->env);
		free(l);
		return NULL;
	}
	l->phase = LCP_TEXT;
	l->last_prev = -1;
	l->t_start = xxl_now_ns();
	return l;
}

xxl_status
lcp_fail(xxl_lcp *l)
{
	l->phase = LCP_FAILED;
	if (l->env.err.code == XXL_OK)
		xxl_error_set(&l->env.err, XXL_EIO, 0, "LCP construction failed");
	return l->env.err.code;
}

xxl_status
lcp_store_fail(xxl_lcp *l)
{
	if (l->env.err.code == XXL_OK)
		l->env.err = *xxl_text_store_error(l->store);
	return lcp_fail(l);
}

xxl_status
xxl_lcp_put_text(xxl_lcp *l, const void *bytes, size_t len)
{
	if (l->phase != LCP_TEXT)
		return l->phase == LCP_FAILED ? l->env.err.code
			: xxl_error_set(&l->env.err, XXL_EINVAL, 0, "text can only be added before the suffix array");
	if (xxl_text_store_put(l->store, bytes, len) != XXL_OK)
		return lcp_store_fail(l);
	l->n += len;
	if (xxl_env_canceled(&l->env))
		return lcp_fail(l);
	return XXL_OK;
}

/* The end of the text: the store is finished and the comparisons' mode chosen. */
xxl_status
lcp_text_done(xxl_lcp *l)
{
	xxl_text_store_stats ss;

	if (xxl_text_store_finish(l->store) != XXL_OK)
		return lcp_store_fail(l);
	if (l->cfg.docs && xxl_docs_bytes(l->cfg.docs) != l->n)
	{
		xxl_error_set(&l->env.err, XXL_EINVAL, 0, "the documents hold %llu bytes, the text %llu",
					  (unsigned long long) xxl_docs_bytes(l->cfg.docs), (unsigned long long) l->n);
		return lcp_fail(l);
	}
	xxl_text_store_stats_get(l->store, &ss);
	l->st.text_on_disk = ss.on_disk;
	l->direct = !ss.on_disk && (l->cfg.internal_max == 0 || l->n <= l->cfg.internal_max);
	l->st.direct = l->direct;
	l->pw = width_for(l->n);
	lcp_set_shares(l, l->env.pool);
	return XXL_OK;
}

void
lcp_set_shares(xxl_lcp *l, size_t avail)
{
	size_t		least = xxl_sort_min_memory(XXL_ALIGN),
				small = avail / 10 > least ? avail / 10 : least;

	/* a tenth (a sorter's least at a small budget) is left to the streams beside them */
	l->share_perm = avail > small ? (avail - small) / 9 * 4 : 0;
	l->share_round = avail / 4;
}

size_t
lcp_perm_share(xxl_lcp *l, size_t rec_size, size_t keep)
{
	size_t		free = xxl_env_pool_free(&l->env),
				least;

	if (xxl_env_scat_fits(&l->env, l->share_perm, rec_size, l->n) || free <= keep + l->share_perm)
		return l->share_perm;
	least = xxl_env_scat_least(&l->env, rec_size, l->n, free - keep);
	return least > l->share_perm ? least : l->share_perm;
}

/*
 * D: rank, the previous suffix's position, flag; comparing in memory over
 * documents, also the previous suffix's remaining length, which the
 * text-order pass would otherwise look up in the map at random.
 */
static bool
d_carries_rem(const xxl_lcp *l)
{
	return l->direct && l->cfg.docs != NULL;
}

static size_t
d_size(const xxl_lcp *l)
{
	return (size_t) ((d_carries_rem(l) ? 3 : 2) * l->pw + 1);
}

/* Length of the common prefix of T[i..] and T[j..], at most limit bytes. */
static xxl_status
lcp_common_at(xxl_lcp *l, uint64_t i, uint64_t j, uint64_t limit, uint64_t *m)
{
	if (l->mem_text)
	{
		*m = text_common_prefix(l->mem_text + i, l->mem_text + j, limit);
		return XXL_OK;
	}
	if (xxl_text_store_common(l->store, i, j, limit, m) != XXL_OK)
		return lcp_store_fail(l);
	return XXL_OK;
}

/*
 * Rank order: the next suffix with its preceding byte into D (step 1); rem,
 * the bytes from pos to its document's end, or LCP_REM_UNKNOWN for a
 * lookup in the map.
 */
xxl_status
lcp_take(xxl_lcp *l, uint64_t pos, int prev, uint64_t rem)
{
	xxl_env    *env = &l->env;
	unsigned char *p;
	int			flag;
	int			w = l->pw;

	if (pos >= l->n || l->r >= l->n)
	{
		if (pos >= l->n)
			xxl_error_set(&env->err, XXL_EINVAL, 0, "suffix array position %llu is outside the text of %llu bytes",
						  (unsigned long long) pos, (unsigned long long) l->n);
		else
			xxl_error_set(&env->err, XXL_EINVAL, 0, "the suffix array has more than %llu entries",
						  (unsigned long long) l->n);
		return lcp_fail(l);
	}
	if (l->r == 0)
		flag = LCP_FIRST;
	else if (prev < 0 || l->last_prev < 0 || prev != l->last_prev)
		flag = LCP_IRREDUCIBLE;
	else
		flag = LCP_REDUCIBLE;
	if (rem == LCP_REM_UNKNOWN)
		rem = lcp_rem(l, pos);
	p = xxl_env_scat_room(&l->D);
	put_be(p, l->r, w);
	put_be(p + w, l->r ? l->last_pos : 0, w);
	p[2 * w] = (unsigned char) flag;
	if (d_carries_rem(l))
		put_be(p + 2 * w + 1, l->r ? l->last_rem : 0, w);
	if (xxl_env_scat_push(env, &l->D, pos) != XXL_OK)
		return lcp_fail(l);
	if (flag == LCP_IRREDUCIBLE)
	{
		uint64_t	limit = rem < l->last_rem ? rem : l->last_rem;

		l->st.irreducible++;
		if (!l->direct && limit > 0 && lcp_request(l, pos, l->last_pos, limit) != XXL_OK)
			return lcp_fail(l);
	}
	l->pos_sum += pos;
	l->last_pos = pos;
	l->last_rem = rem;
	l->last_prev = prev;
	l->r++;
	if (xxl_env_poll(env))
		return lcp_fail(l);
	return XXL_OK;
}

void
lcp_count_perm(xxl_lcp *l, const xxl_env_scatter *ts)
{
	l->st.perms_split += ts->split;
	l->st.perms_sorted += ts->sorted != NULL;
}

/* The least a sorter needs: what a split permutation leaves beside its distribution. */
static size_t
split_keep(void)
{
	return 2 * xxl_sort_min_memory(XXL_ALIGN);
}

/*
 * D or E: a scatter of its share; where that does not fit, one charged by
 * phase (xxl_env_scat_open_split) where that fits: its distribution takes
 * what the pool has free but keep, so that its reading, which comes when
 * other parts have given back theirs, needs as little as it can, at most
 * read_most; else the sort by slot in its share.
 */
static xxl_status
open_perm(xxl_lcp *l, xxl_env_scatter *ts, size_t rec_size, size_t share, size_t keep,
		  size_t read_most)
{
	size_t		free = xxl_env_pool_free(&l->env),
				rd = 0;
	xxl_status	rc;

	if (!xxl_env_scat_fits(&l->env, share, rec_size, l->n) && free > keep)
		rd = xxl_env_scat_least_read(&l->env, rec_size, l->n, free - keep, read_most);
	rc = rd > 0 ? xxl_env_scat_open_split(&l->env, ts, free - keep, rd, rec_size, l->n) :
		xxl_env_scat_open(&l->env, ts, share, rec_size, l->n);
	if (rc == XXL_OK)
		lcp_count_perm(l, ts);
	return rc;
}

xxl_status
lcp_open_rank_order(xxl_lcp *l)
{
	/* beside D: E's share, which opens as D is read, and before that the rounds */
	size_t		rounds = l->direct ? 0 : lcp_rounds_need(l),
				keep = rounds > l->share_perm ? rounds : l->share_perm,
				free = xxl_env_pool_free(&l->env),
				beside = 4 * split_keep();

	/*
	 * Split, D distributes while only the requests' spool is written beside
	 * it, and is finished before the rounds, so its distribution may take
	 * most of the pool and its reading little.  The reading shares the
	 * text-order pass with E (split too where it fits in what D's reading
	 * leaves, else a sort by slot: beside is its least and the answers'
	 * readers).
	 */
	if (open_perm(l, &l->D, d_size(l), lcp_perm_share(l, d_size(l), keep), split_keep(),
				  free > beside ? free - beside : 0) != XXL_OK)
		return lcp_fail(l);
	l->D_open = true;
	if (!l->direct && lcp_resolve_open(l) != XXL_OK)
		return lcp_fail(l);
	return XXL_OK;
}

/*
 * E: position, LCP; over a paged map, for the output, also its document's
 * id and the offset in it, which the text-order pass has from its walk
 * through the map in order and the output would look up at random.
 */
static bool
e_carries_docs(const xxl_lcp *l)
{
	return l->cfg.docs != NULL && xxl_docs_paged(l->cfg.docs) && l->cfg.min_length == 0;
}

static size_t
e_size(const xxl_lcp *l)
{
	return (size_t) (e_carries_docs(l) ? 3 * l->pw + 8 : 2 * l->pw);
}

/* Text order: PLCP from D, the answers and the reducible rule, into E (step 3). */
static xxl_status
text_order(xxl_lcp *l)
{
	xxl_env    *env = &l->env;
	const unsigned char *rec;
	int			w = l->pw;
	uint64_t	prev_l = 0,
				e_doc = UINT64_MAX;
	int64_t		e_id = 0;
	lcp_doc_walk walk;

	if (xxl_env_scat_begin_read(env, &l->D) != XXL_OK || lcp_answers_open(l) != XXL_OK)
		return lcp_fail(l);
	/* E, split, is read when D is gone: its reading may take what D's holds */
	if (open_perm(l, &l->E, e_size(l), lcp_perm_share(l, e_size(l), 0), 0,
				  xxl_env_pool_free(env) + l->D.memory) != XXL_OK)
		return lcp_fail(l);
	l->E_open = true;
	lcp_walk_init(l, &walk);
	for (uint64_t i = 0; i < l->n; i++)
	{
		uint64_t	r,
					j,
					v = 0;
		int			flag;
		uint64_t	end;
		bool		found = false;
		bool		start = lcp_walk_doc(l, &walk, i, &end);
		unsigned char *p;

		if (xxl_env_scat_next(env, &l->D, &rec) <= 0)
			return lcp_fail(l);
		r = get_be(rec, w);
		j = get_be(rec + w, w);
		flag = rec[2 * w];
		if (flag == LCP_REDUCIBLE && prev_l > 0 && !start)
			v = prev_l - 1;
		else if (flag != LCP_FIRST)
		{
			if (flag == LCP_REDUCIBLE)
				l->st.irreducible++;	/* only a broken suffix array gets here */
			if (l->direct)
			{
				uint64_t	ri = end - i,
							rj = d_carries_rem(l) ? get_be(rec + 2 * w + 1, w) : lcp_rem(l, j),
							limit = ri < rj ? ri : rj,
							h = !start && prev_l > 1 ? prev_l - 1 : 0,
							m;

				if (h > limit)
					h = limit;
				if (lcp_common_at(l, i + h, j + h, limit - h, &m) != XXL_OK)
					return l->env.err.code;
				v = h + m;
			}
			else if (lcp_answer_for(l, i, &found, &v) != XXL_OK)
				return l->env.err.code;
			else if (!found && flag == LCP_REDUCIBLE)
			{
				xxl_error_set(&env->err, XXL_EINVAL, 0, "the suffix array is not the suffix array of the text");
				return lcp_fail(l);
			}
			/* else: an irreducible pair with nothing in common (limit 0) */
			if (flag != LCP_REDUCIBLE)
				l->st.irreducible_sum += v;
		}
		if (v > l->st.max_lcp)
			l->st.max_lcp = v;
		prev_l = v;
		p = xxl_env_scat_room(&l->E);
		put_be(p, i, w);
		put_be(p + w, v, w);
		if (e_carries_docs(l))
		{
			if (walk.doc != e_doc)
			{
				e_doc = walk.doc;
				e_id = xxl_docs_id(l->cfg.docs, walk.doc);
			}
			put_be(p + 2 * w, i - walk.start, w);
			memcpy(p + 3 * w, &e_id, 8);
		}
		if (xxl_env_scat_push(env, &l->E, r) != XXL_OK || xxl_env_poll(env))
			return lcp_fail(l);
	}
	xxl_env_scat_close(env, &l->D, NULL, NULL);
	l->D_open = false;
	if (l->mem_text)
	{
		xxl_env_free(env, l->mem_text, (size_t) l->n + 8);
		l->mem_text = NULL;
	}
	lcp_answers_close(l);
	/* E's reading reserved here, on this thread: the output reads it on a worker */
	if (xxl_env_scat_finish(env, &l->E) != XXL_OK || xxl_env_scat_begin_read(env, &l->E) != XXL_OK)
		return lcp_fail(l);
	return XXL_OK;
}

/*
 * The output, (position, LCP) in rank order, is E read back: its buckets
 * are placed on a worker while the host writes the rows of the one before
 * (the host's rows and E's reading cost about as much each).
 */
#define OUT_BATCH 16384

/* An E record into the output's fields: position, LCP, and where E carries them offset and id. */
static inline void
out_fields(const xxl_lcp *l, const unsigned char *rec, uint64_t *f)
{
	f[0] = get_be(rec, l->pw);
	f[1] = get_be(rec + l->pw, l->pw);
	if (l->out_stride > 2)
	{
		f[2] = get_be(rec + 2 * l->pw, l->pw);
		memcpy(&f[3], rec + 3 * l->pw, 8);
	}
}

static int64_t
fill_output(void *arg, void *slot)
{
	xxl_lcp    *l = arg;
	uint64_t   *out = slot;
	int64_t		k = 0;

	while (k < OUT_BATCH)
	{
		const unsigned char *rec;
		int			got = xxl_env_scat_next(&l->env, &l->E, &rec);

		if (got < 0)
			return -1;
		if (got == 0)
			break;
		out_fields(l, rec, out + k * l->out_stride);
		k++;
	}
	return k;
}

xxl_status
xxl_lcp_run(xxl_lcp *l)
{
	if (l->phase == LCP_TEXT && lcp_text_done(l) != XXL_OK)
		return l->env.err.code;
	if (l->phase == LCP_FAILED)
		return l->env.err.code;
	if (l->phase == LCP_OUTPUT || l->phase == LCP_DONE)
		return xxl_error_set(&l->env.err, XXL_EINVAL, 0, "xxl_lcp_run called twice");
	if (l->phase == LCP_RANKED && lcp_derive_prev(l) != XXL_OK)
		return l->env.err.code;
	if (l->phase == LCP_SA && l->cfg.defer)
	{
		/* the operator's own time starts now: the sorter has had the budget till here */
		l->t_start = xxl_now_ns();
		if (lcp_take_deferred(l) != XXL_OK)
			return l->env.err.code;
	}
	if (l->n == 0)
	{
		l->phase = LCP_DONE;
		l->st.lcp_ns = xxl_now_ns() - l->t_start;
		return XXL_OK;
	}
	if (l->r != l->n || l->pos_sum != (l->n % 2 ? l->n * ((l->n - 1) / 2) : (l->n / 2) * (l->n - 1)))
	{
		xxl_error_set(&l->env.err, XXL_EINVAL, 0,
					  "the suffix array has %llu entries for a text of %llu bytes, or repeats positions",
					  (unsigned long long) l->r, (unsigned long long) l->n);
		return lcp_fail(l);
	}
	/* D's distribution ends before the rounds: a split D holds nothing through them */
	if (xxl_env_scat_finish(&l->env, &l->D) != XXL_OK)
		return lcp_fail(l);
	if (!l->direct && lcp_resolve(l) != XXL_OK)
		return lcp_fail(l);
	if (text_order(l) != XXL_OK)
		return l->env.err.code;
	if (l->cfg.min_length > 0 && lcp_repeats_build(l) != XXL_OK)
		return lcp_fail(l);
	l->phase = LCP_OUTPUT;
	l->st.lcp_ns = xxl_now_ns() - l->t_start;
	l->out_stride = e_carries_docs(l) ? 4 : 2;
	if (l->cfg.min_length == 0)
		l->ahead = xxl_ahead_start(&l->env, OUT_BATCH * l->out_stride * sizeof(uint64_t),
								   XXL_AHEAD_SLOTS_MAX, fill_output, l);
	l->st.output_slots = xxl_ahead_slots(l->ahead);
	return XXL_OK;
}

/* The end of the output: E is read, the worker (if any) has ended. */
static int
output_end(xxl_lcp *l)
{
	xxl_ahead_stop(&l->env, l->ahead);
	l->ahead = NULL;
	xxl_env_scat_close(&l->env, &l->E, NULL, NULL);
	l->E_open = false;
	l->phase = LCP_DONE;
	return 0;
}

static int	lcp_next_fields(xxl_lcp *l, uint64_t *f);

int
xxl_lcp_next(xxl_lcp *l, uint64_t *pos, uint64_t *lcp)
{
	uint64_t	f[4];
	int			got = lcp_next_fields(l, f);

	*pos = f[0];
	*lcp = f[1];
	return got;
}

int
xxl_lcp_next_doc(xxl_lcp *l, uint64_t *pos, uint64_t *lcp, bool *have_doc, uint64_t *offset,
				 int64_t *id)
{
	uint64_t	f[4];
	int			got = lcp_next_fields(l, f);

	*pos = f[0];
	*lcp = f[1];
	*have_doc = l->out_stride > 2;
	*offset = f[2];
	*id = (int64_t) f[3];
	return got;
}

static int
lcp_next_fields(xxl_lcp *l, uint64_t *f)
{
	const unsigned char *rec;
	int			got;

	if (l->phase == LCP_DONE)
		return 0;
	if (l->phase != LCP_OUTPUT || l->cfg.min_length > 0)
	{
		if (l->phase != LCP_FAILED)
			xxl_error_set(&l->env.err, XXL_EINVAL, 0, l->cfg.min_length > 0
						  ? "repeats mode hands out ranges (xxl_lcp_next_repeat)"
						  : "xxl_lcp_run must come before reading");
		return -(int) lcp_fail(l);
	}
	if (l->ahead)
	{
		if (l->out_at == l->out_n)
		{
			const void *slot;
			int64_t		n = xxl_ahead_next(&l->env, l->ahead, &slot);

			if (n == 0)
				return output_end(l);
			if (n < 0)
			{
				/* the worker has ended; its error is in the environment */
				xxl_ahead_stop(&l->env, l->ahead);
				l->ahead = NULL;
				return -(int) lcp_fail(l);
			}
			l->out = slot;
			l->out_n = n;
			l->out_at = 0;
		}
		memcpy(f, l->out + l->out_stride * l->out_at, l->out_stride * sizeof(uint64_t));
		l->out_at++;
		return 1;
	}
	got = xxl_env_scat_next(&l->env, &l->E, &rec);
	if (got < 0)
		return -(int) lcp_fail(l);
	if (got == 0)
		return output_end(l);
	out_fields(l, rec, f);
	return 1;
}

int
xxl_lcp_next_repeat(xxl_lcp *l, uint64_t *start, uint64_t *length, uint64_t *occurrences)
{
	int			got;

	if (l->phase == LCP_DONE)
		return 0;
	if (l->phase != LCP_OUTPUT || l->cfg.min_length == 0)
	{
		if (l->phase != LCP_FAILED)
			xxl_error_set(&l->env.err, XXL_EINVAL, 0, l->cfg.min_length == 0
						  ? "ranges need repeats mode (min_length > 0)"
						  : "xxl_lcp_run must come before reading");
		return -(int) lcp_fail(l);
	}
	got = lcp_repeats_next(l, start, length, occurrences);
	if (got < 0)
		return -(int) lcp_fail(l);
	if (got == 0)
		l->phase = LCP_DONE;
	return got;
}

const xxl_error *
xxl_lcp_error(const xxl_lcp *l)
{
	return &l->env.err;
}

void
xxl_lcp_stats_get(const xxl_lcp *l, xxl_lcp_stats *st)
{
	xxl_text_store_stats ss;

	*st = l->st;
	st->n = l->n;
	xxl_env_io_sum(&l->env, &st->bytes_read, &st->bytes_written, &st->io_wait_ns, &st->io_direct);
	xxl_text_store_stats_get(l->store, &ss);
	st->bytes_read += ss.bytes_read;
	st->bytes_written += ss.bytes_written;
	st->memory_peak = xxl_env_used_peak(&l->env) + ss.memory_peak;
	st->bytes_read += l->defer_read;
	st->bytes_written += l->defer_written;
	if (l->deferred)
	{
		xxl_text_store_stats_get(l->deferred, &ss);
		st->bytes_read += ss.bytes_read;
		st->bytes_written += ss.bytes_written;
	}
	if (l->cfg.defer)
		st->memory_peak += defer_spool_memory(l->cfg.res.memory) + DEFER_BUFFER;
	st->memory_limit = l->cfg.res.memory;
	if (l->phase < LCP_OUTPUT)
		st->lcp_ns = xxl_now_ns() - l->t_start;
}

void
xxl_lcp_destroy(xxl_lcp *l)
{
	if (l == NULL)
		return;
	/* first: it reads E */
	xxl_ahead_stop(&l->env, l->ahead);
	l->ahead = NULL;
	if (l->A_open)
		xxl_env_scat_close(&l->env, &l->A, NULL, NULL);
	if (l->D_open)
		xxl_env_scat_close(&l->env, &l->D, NULL, NULL);
	if (l->E_open)
		xxl_env_scat_close(&l->env, &l->E, NULL, NULL);
	if (l->Q_open)
		xxl_spool_free(&l->Q);
	lcp_answers_close(l);
	if (l->W_open)
		xxl_env_sort_close(&l->env, &l->W, NULL, NULL);
	if (l->mem_text)
		xxl_env_free(&l->env, l->mem_text, (size_t) l->n + 8);
	xxl_text_store_destroy(l->store);
	xxl_text_store_destroy(l->deferred);
	free(l->dbuf);
	xxl_env_close(&l->env);
	free(l);
}
