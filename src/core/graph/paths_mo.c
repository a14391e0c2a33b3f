/*
 * paths_mo.c — Meyer–Osipov shortest paths (digest-ledasm-sssp.md §2.5)
 * over the MM clusters (paths_cluster.c) and the cluster-ordered adjacency
 * that paths_ext_build.c writes for them.
 *
 * Dijkstra with one bit per node and no decrease-key, as the external
 * Dijkstra, but a settled node's arcs are not read at once:
 *
 *  - Weight categories.  Category 0 holds the arcs of cost 0, category
 *    i >= 1 those of cost >= delta_i = w_min 2^(i-1) (w_min: the smallest
 *    positive cost; i = floor(log2(w / w_min)) + 1, at most 63, checked so
 *    that w >= delta_i holds in floating point).
 *  - Delayed relaxation.  Settled nodes go to one settle log; category i
 *    keeps a cursor into it.  Before each deletion from the queue, category
 *    i relaxes the whole batch after its cursor once the oldest entry's
 *    distance + delta_i <= the queue's minimum (or the queue is empty):
 *    every arc not yet relaxed ends beyond the minimum, so the node
 *    deleted next is final.  Relaxing early is always correct, which bounds
 *    the log: a full log relaxes everything at once (mo_flushes).
 *  - Batches sorted by cluster.  A batch is sorted by cluster, so each
 *    cluster's arcs (one or two pages) are read together; the first batch
 *    that meets a node finds its arcs in its cluster (binary search on the
 *    tail) and notes their range and category mask in the log, so later
 *    categories go straight to them, and only to nodes that have them.
 *  - Hot pools.  The arcs of the clusters read stay in the adjacency's
 *    page cache, a quarter of the search's budget: the pools of all
 *    categories at once ("uniform" in the paper's terms), evicted by the
 *    cache rather than written back, since the adjacency file is never
 *    rewritten and a cluster read again costs one sequential piece.  A
 *    settled node's arcs, once found, are copied to a pool in memory (a
 *    sixteenth of the budget) until every category is past it, so its
 *    other categories read none again; without room they are read again.
 *
 * The paper's bound needs undirected graphs; directed ones get the right
 * answers without it.  Record layouts: paths_internal.h.
 */
#include "core/graph/paths_internal.h"

#include <math.h>

#define MO_CATS 64
#define MO_PQ_REC 64
#define MO_BATCH_REC 16
#define ADJ_REC PATHS_MM_ADJ_REC
#define RANGE_UNKNOWN UINT64_MAX

/* A settled node waiting for its categories' relaxation. */
typedef struct mo_entry
{
	uint64_t	node,
				cluster,
				first,			/* its arcs [first, end) once found, else RANGE_UNKNOWN */
				end,
				mask;			/* categories its arcs have (all, while unknown) */
	int64_t		orig;
	double		d;
	unsigned char *arcs;		/* their copy in the pool, or NULL: read them again */
} mo_entry;

struct mo_state
{
	mo_entry   *log;			/* ring: entry k at log[k % cap] */
	size_t		cap,
				log_bytes;
	uint64_t	len;			/* entries appended */
	uint64_t	head;			/* entries before it are done with */
	uint64_t	cursor[MO_CATS];
	uint64_t	used;			/* categories the graph has */
	size_t		pool_used,		/* bytes of arcs copied */
				pool_limit;
	plevel		batch;
};

static double
delta(const xxl_paths *p, int i)
{
	return i == 0 ? 0.0 : ldexp(p->w_min, i - 1);
}

static int
category(const xxl_paths *p, double w)
{
	int			i;

	if (!(w > 0))
		return 0;
	if (isinf(w) || isinf(w / p->w_min))
		return MO_CATS - 1;
	i = ilogb(w / p->w_min) + 1;
	if (i < 1)
		i = 1;
	if (i > MO_CATS - 1)
		i = MO_CATS - 1;
	while (i > 1 && w < delta(p, i))
		i--;
	return i;
}

static xxl_status
push(xxl_paths *p, double d, uint64_t node, int64_t orig, uint64_t pred, int64_t pred_orig,
	 int64_t edge, double w, uint64_t cluster)
{
	unsigned char c[8];

	g_put_u64(c, cluster);
	return paths_ext_push(p, d, node, orig, pred, pred_orig, edge, w, c, 8);
}

/*
 * The arcs of e's node in its cluster (binary search on the tail), their
 * categories, and a copy in the pool when it has room: the node's other
 * categories then need no second read.
 */
static xxl_status
find_arcs(xxl_paths *p, struct mo_state *s, mo_entry *e)
{
	const unsigned char *r;
	uint64_t	lo,
				hi,
				first,
				end;

	e->first = e->end = 0;
	e->mask = 0;
	if (e->cluster == PATHS_NO_CLUSTER)
		return XXL_OK;
	if (xxl_pagefile_get(&p->cidx, e->cluster, &r) != XXL_OK)
		return p->env.err.code;
	lo = g_get_u64(r);
	if (xxl_pagefile_get(&p->cidx, e->cluster + 1, &r) != XXL_OK)
		return p->env.err.code;
	hi = g_get_u64(r);
	/* the first arc with tail >= node */
	first = lo;
	end = hi;
	while (first < end)
	{
		uint64_t	mid = first + (end - first) / 2;

		if (xxl_pagefile_get(&p->adj, mid, &r) != XXL_OK)
			return p->env.err.code;
		if (g_get_u64(r) < e->node)
			first = mid + 1;
		else
			end = mid;
	}
	e->first = first;
	for (end = first; end < hi; end++)
	{
		double		w;

		if (xxl_pagefile_get(&p->adj, end, &r) != XXL_OK)
			return p->env.err.code;
		if (g_get_u64(r) != e->node)
			break;
		memcpy(&w, r + 40, 8);
		e->mask |= UINT64_C(1) << category(p, w);
	}
	e->end = end;
	if (end > first && s->pool_used + (end - first) * ADJ_REC <= s->pool_limit)
	{
		e->arcs = xxl_env_alloc(&p->env, (end - first) * ADJ_REC);
		if (e->arcs == NULL)
			return p->env.err.code;
		s->pool_used += (end - first) * ADJ_REC;
		for (uint64_t a = first; a < end; a++)
		{
			if (xxl_pagefile_get(&p->adj, a, &r) != XXL_OK)
				return p->env.err.code;
			memcpy(e->arcs + (a - first) * ADJ_REC, r, ADJ_REC);
		}
	}
	return XXL_OK;
}

/* Entries every category is past: their pool copies go. */
static void
advance_head(xxl_paths *p, struct mo_state *s)
{
	uint64_t	h = s->len;

	for (int i = 0; i < MO_CATS; i++)
		if (((s->used >> i) & 1) && s->cursor[i] < h)
			h = s->cursor[i];
	for (; s->head < h; s->head++)
	{
		mo_entry   *e = &s->log[s->head % s->cap];

		if (e->arcs)
		{
			xxl_env_free(&p->env, e->arcs, (e->end - e->first) * ADJ_REC);
			s->pool_used -= (e->end - e->first) * ADJ_REC;
			e->arcs = NULL;
		}
	}
}

/* Category i's batch: every log entry after its cursor, by cluster. */
static xxl_status
relax_batch(xxl_paths *p, struct mo_state *s, int i)
{
	xxl_env    *env = &p->env;
	const unsigned char *b;
	/* category i is the costs in [lo, hi): one compare per arc, not a log */
	double		lo = delta(p, i),
				hi = i == MO_CATS - 1 ? INFINITY : delta(p, i + 1);
	int			got;

	plevel_clear(p, &s->batch);
	for (uint64_t k = s->cursor[i]; k < s->len; k++)
	{
		const mo_entry *e = &s->log[k % s->cap];
		unsigned char r[MO_BATCH_REC];

		if (!((e->mask >> i) & 1))
			continue;
		g_put_be(r, e->cluster);
		g_put_u64(r + 8, k);
		if (plevel_put(p, &s->batch, r) != XXL_OK)
			return env->err.code;
	}
	s->cursor[i] = s->len;
	if (s->batch.pushed == 0)
		return XXL_OK;
	p->mo_batches++;
	if (plevel_sort(p, &s->batch) != XXL_OK)
		return env->err.code;
	while ((got = plevel_next(p, &s->batch, &b)) == 1)
	{
		mo_entry   *e = &s->log[g_get_u64(b + 8) % s->cap];
		bool		known = e->first != RANGE_UNKNOWN;

		if (!known && find_arcs(p, s, e) != XXL_OK)
			return env->err.code;
		if (!((e->mask >> i) & 1))
			continue;
		if (known && e->arcs)
			p->pool_hits++;		/* found by an earlier category's batch, kept in RAM */
		for (uint64_t a = e->first; a < e->end; a++)
		{
			const unsigned char *r;
			uint64_t	to;
			double		w;

			if (e->arcs)
				r = e->arcs + (a - e->first) * ADJ_REC;
			else if (xxl_pagefile_get(&p->adj, a, &r) != XXL_OK)
				return env->err.code;
			memcpy(&w, r + 40, 8);
			if (i == 0 ? w > 0 : !(w >= lo && (w < hi || i == MO_CATS - 1)))
				continue;
			p->relaxed++;
			to = g_get_u64(r + 8);
			if (bit_get(p->visited, to))
				continue;
			if (push(p, e->d + w, to, (int64_t) g_get_u64(r + 24), e->node, e->orig,
					 (int64_t) g_get_u64(r + 32), w, g_get_u64(r + 16)) != XXL_OK)
				return env->err.code;
		}
		if (xxl_env_poll(env))
			return env->err.code;
	}
	if (got < 0)
		return env->err.code;
	plevel_clear(p, &s->batch);
	return XXL_OK;
}

/* The queue's minimum distance, +Inf when it is empty. */
static xxl_status
queue_min(xxl_paths *p, double *dtop)
{
	const unsigned char *q;
	int			got = xxl_env_queue_top(&p->env, &p->pq, &q);

	if (got < 0)
		return p->env.err.code;
	*dtop = got == 1 ? g_key_cost(g_get_be(q)) : INFINITY;
	return XXL_OK;
}

/*
 * Every category whose oldest waiting entry is due against the queue's
 * minimum (all of them when force) relaxes its batch.  One pass is enough:
 * a batch only lowers the minimum, which makes no other category due.
 */
static xxl_status
relax_due(xxl_paths *p, struct mo_state *s, bool force)
{
	double		dtop = INFINITY;

	if (queue_min(p, &dtop) != XXL_OK)
		return p->env.err.code;
	for (int i = 0; i < MO_CATS; i++)
	{
		if (!((s->used >> i) & 1) || s->cursor[i] == s->len)
			continue;
		if (force || s->log[s->cursor[i] % s->cap].d + delta(p, i) <= dtop)
		{
			if (relax_batch(p, s, i) != XXL_OK || queue_min(p, &dtop) != XXL_OK)
				return p->env.err.code;
		}
	}
	advance_head(p, s);
	return XXL_OK;
}

/* The settle log, the batch and the pool of arcs take what they are given. */
static xxl_status
mo_open(xxl_paths *p, size_t log, size_t batch, size_t pool)
{
	struct mo_state *s = xxl_env_alloc(&p->env, sizeof(*s));

	if (s == NULL)
		return p->env.err.code;
	memset(s, 0, sizeof(*s));
	p->mo = s;
	/* the categories the costs span (0 always: it costs nothing unused) */
	s->used = 1;
	if (p->w_min < INFINITY)
	{
		int			top = category(p, p->w_max);

		for (int i = 1; i <= top; i++)
			s->used |= UINT64_C(1) << i;
	}
	for (int i = 0; i < MO_CATS; i++)
		p->categories += (s->used >> i) & 1;
	s->pool_limit = pool;
	s->cap = log / sizeof(mo_entry);
	if (s->cap < 16)
		s->cap = 16;
	s->log_bytes = s->cap * sizeof(mo_entry);
	s->log = xxl_env_alloc(&p->env, s->log_bytes);
	if (s->log == NULL)
		return p->env.err.code;
	return plevel_init(p, &s->batch, MO_BATCH_REC, batch);
}

xxl_status
paths_mo_sssp(xxl_paths *p, size_t rest)
{
	xxl_env    *env = &p->env;
	size_t		eighth = rest / 8 - (rest / 8) % XXL_ALIGN,
				sixteenth = rest / 16 - (rest / 16) % XXL_ALIGN;
	struct mo_state *s;
	unsigned char q[MO_PQ_REC];

	/*
	 * The settle log and the pool of arcs: a sixteenth each; the batch (a
	 * sorter when it outgrows its buffer): an eighth; the queue: the rest,
	 * since a queue with half of it spills several times as much.
	 */
	if (mo_open(p, sixteenth, eighth, sixteenth) != XXL_OK ||
		paths_ext_queue_open(p, rest - eighth - 2 * sixteenth, MO_PQ_REC) != XXL_OK)
		return env->err.code;
	s = p->mo;
	for (size_t i = 0; i < p->nsrc_dense; i++)
		if (push(p, 0.0, p->src_dense[i], p->src_orig[i], p->src_dense[i], p->src_orig[i], -1,
				 0.0, p->src_cluster[i]) != XXL_OK)
			return env->err.code;
	for (;;)
	{
		double		d,
					w;
		uint64_t	x;
		mo_entry   *e;
		bool		stop;
		int			got;

		if (relax_due(p, s, false) != XXL_OK)
			return env->err.code;
		got = xxl_env_queue_pop(env, &p->pq, q);
		if (got < 0)
			return env->err.code;
		if (got == 0)
		{
			/* the queue ran dry: what waits in the log may still refill it */
			if (s->head == s->len)
				break;
			if (relax_due(p, s, true) != XXL_OK)
				return env->err.code;
			continue;
		}
		d = g_key_cost(g_get_be(q));
		x = g_get_be(q + 8);
		if (bit_get(p->visited, x))
			continue;
		if (!(d <= p->max_distance))
			break;
		memcpy(&w, q + 48, 8);
		if (paths_ext_settle(p, x, (int64_t) g_get_u64(q + 16), d, g_get_u64(q + 24),
							 (int64_t) g_get_u64(q + 32), (int64_t) g_get_u64(q + 40), w,
							 &stop) != XXL_OK)
			return env->err.code;
		if (stop)
			break;
		if (s->len - s->head == s->cap)
		{
			/* a full log: relax everything now (early is always right) */
			p->mo_flushes++;
			if (relax_due(p, s, true) != XXL_OK)
				return env->err.code;
		}
		e = &s->log[s->len % s->cap];
		e->node = x;
		e->cluster = g_get_u64(q + 56);
		e->first = e->end = RANGE_UNKNOWN;
		e->arcs = NULL;
		e->mask = s->used;
		e->orig = (int64_t) g_get_u64(q + 16);
		e->d = d;
		s->len++;
		if (xxl_env_poll(env))
			return env->err.code;
	}
	paths_ext_queue_close(p);
	/* pages of clusters read: each miss of the adjacency's cache */
	p->cluster_loads = p->adj.misses;
	return XXL_OK;
}

void
paths_mo_release(xxl_paths *p)
{
	struct mo_state *s = p->mo;

	if (s == NULL)
		return;
	for (uint64_t k = s->head; k < s->len; k++)
	{
		mo_entry   *e = &s->log[k % s->cap];

		if (e->arcs)
			xxl_env_free(&p->env, e->arcs, (e->end - e->first) * ADJ_REC);
	}
	plevel_free(p, &s->batch);
	if (s->log)
		xxl_env_free(&p->env, s->log, s->log_bytes);
	xxl_env_free(&p->env, s, sizeof(*s));
	p->mo = NULL;
}
