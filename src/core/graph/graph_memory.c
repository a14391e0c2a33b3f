/*
 * graph_memory.c — the three graph operators in memory (xxl_graph.h, step
 * 0).  Ids are numbered by a hash table as the edges come (idmap.h); the
 * edges are kept as pairs of dense ids, the forests' with id and cost.
 *  - Components: the distinct ids are sorted once so that the union-find of
 *    the semi-external path runs on their ranks (a set's root is then its
 *    smallest id) and the output reads the same arrays.
 *  - Spanning forest: the union-find over the edges in input order is the
 *    output scan, as on the semi-external path (which edges join two sets
 *    does not depend on the numbering).
 *  - Minimum spanning forest: the edges' (cost, id) keys radix sorted
 *    (stable: ties keep input order, the strict order of the other paths),
 *    then Kruskal as the output scan.
 * Nothing spills.  The first edge that would outgrow the budget replays the
 * kept edges onto the sorting path (graph_put_sorted) and the operator goes
 * on as if it had started there.
 */
#include "core/graph/graph_internal.h"
#include "core/radix.h"

#include <stdlib.h>

/* MSF's sort record: cost key BE, id key BE, edge number */
#define KRUSKAL_REC 24

typedef struct id_rank
{
	int64_t		id;
	uint64_t	dense;
} id_rank;

/* What m edges over n nodes with id tables of `tables` bytes need, at input and at run. */
static bool
fits(const xxl_graph *g, uint64_t m, uint64_t n, size_t tables)
{
	size_t		held = pvec_bytes(&g->ends, m) + pvec_bytes(&g->idm.ids, n) +
		(g->op != XXL_GRAPH_CC ? pvec_bytes(&g->attrs, m) : 0);
	size_t		input = held + tables;
	size_t		run = held + n * (g->op != XXL_GRAPH_CC ? sizeof(uint64_t) :
								  sizeof(id_rank) + sizeof(uint32_t) + sizeof(uint64_t));

	/* MSF: the sort's records and its scratch */
	if (g->op == XXL_GRAPH_MSF)
		run += 2 * KRUSKAL_REC * m;

	return n < IDMAP_MAX && input <= graph_mem_limit(&g->env) &&
		run + 64 * 1024 <= graph_mem_limit(&g->env);
}

bool
graph_mem_wanted(const xxl_graph *g)
{
	/* the cap on semi-external nodes is how tests ask for the other paths */
	if (g->max_semi_nodes != 0)
		return false;

	/*
	 * A table's row estimate that already rules memory out (its edges alone,
	 * no node counted) saves starting there and replaying everything into
	 * the sorters midway, which about doubles the time.
	 */
	return g->expected_edges == 0 || fits(g, g->expected_edges, 0, 0);
}

static uint32_t
intern(xxl_graph *g, int64_t id)
{
	size_t		grow = idmap_grow_bytes(&g->idm, id);

	if (grow > 0 && (!fits(g, g->ends.n + 1, g->idm.n + 1, grow) ||
					 idmap_grow(&g->env, &g->idm, id) != XXL_OK))
		return IDMAP_NONE;
	return idmap_intern(&g->env, &g->idm, id);
}

/*
 * Hand the kept edges to the sorting path and leave memory; the batch's
 * edges from `from` on were not kept and follow them.
 */
static xxl_status
to_sorter(xxl_graph *g, size_t from)
{
	xxl_env    *env = &g->env;
	uint64_t	kept = g->ends.n;

	xxl_error_clear(&env->err);
	g->in_memory = false;
	idmap_drop_table(env, &g->idm);
	if (graph_open_endpoints(g) != XXL_OK)
		return env->err.code;
	for (uint64_t e = 0; e < kept; e++)
	{
		const uint32_t *d = pvec_at(&g->ends, e);
		const graph_attr *a = g->op != XXL_GRAPH_CC ? pvec_at(&g->attrs, e) : NULL;

		if (graph_put_sorted(g, e, idmap_id(&g->idm, d[0]), idmap_id(&g->idm, d[1]),
							 a ? a->id : 0, a ? a->cost : 0) != XXL_OK ||
			poll_canceled(g))
			return env->err.code;
	}
	for (size_t i = from; i < g->nbatch; i++)
		if (graph_put_sorted(g, kept + (i - from), g->batch[i].source, g->batch[i].target,
							 g->batch[i].id, g->batch[i].cost) != XXL_OK)
			return env->err.code;
	g->nbatch = 0;
	graph_mem_release(g);
	return XXL_OK;
}

/* Number one edge; false when it does not fit (nothing kept of it). */
static bool
keep(xxl_graph *g, int64_t source, int64_t target, int64_t id, double cost)
{
	uint32_t	du,
				dv,
			   *d;
	graph_attr *a = NULL;

	/* checked once per chunk of edges, for the chunk and the nodes it can bring */
	if ((g->ends.n & ((UINT64_C(1) << g->ends.shift) - 1)) == 0)
	{
		uint64_t	chunk = UINT64_C(1) << g->ends.shift;

		if (!fits(g, g->ends.n + chunk, g->idm.n + 2 * chunk, idmap_table_bytes(&g->idm)))
			return false;
	}
	if ((du = intern(g, source)) == IDMAP_NONE || (dv = intern(g, target)) == IDMAP_NONE ||
		(g->op != XXL_GRAPH_CC && (a = pvec_push(&g->env, &g->attrs)) == NULL) ||
		(d = pvec_push(&g->env, &g->ends)) == NULL)
	{
		if (a)
			g->attrs.n--;
		return false;
	}
	d[0] = du;
	d[1] = dv;
	if (a)
		*a = (graph_attr) {id, cost};
	return true;
}

xxl_status
graph_mem_flush(xxl_graph *g)
{
	for (size_t i = 0; i < g->nbatch; i++)
	{
		idmap_prefetch(&g->idm, g->batch[i].source);
		idmap_prefetch(&g->idm, g->batch[i].target);
	}
	for (size_t i = 0; i < g->nbatch; i++)
		if (!keep(g, g->batch[i].source, g->batch[i].target, g->batch[i].id, g->batch[i].cost))
		{
			if (g->env.err.code != XXL_OK && g->env.err.code != XXL_ENOMEM)
				return g->env.err.code;
			return to_sorter(g, i);
		}
	g->nbatch = 0;
	return XXL_OK;
}

xxl_status
graph_mem_put(xxl_graph *g, int64_t source, int64_t target, int64_t id, double cost)
{
	g->batch[g->nbatch].source = source;
	g->batch[g->nbatch].target = target;
	g->batch[g->nbatch].id = id;
	g->batch[g->nbatch].cost = cost;
	if (++g->nbatch == sizeof(g->batch) / sizeof(g->batch[0]))
		return graph_mem_flush(g);
	return XXL_OK;
}

static int
cmp_id_rank(const void *a, const void *b)
{
	int64_t		x = ((const id_rank *) a)->id,
				y = ((const id_rank *) b)->id;

	return (x > y) - (x < y);
}

/* MSF: the edges in the strict order (cost, id, input position). */
static xxl_status
sort_kruskal(xxl_graph *g)
{
	xxl_env    *env = &g->env;
	uint64_t	m = g->ends.n;
	size_t		bytes = KRUSKAL_REC * (m ? m : 1);
	unsigned char *scratch;

	g->kruskal = xxl_env_alloc(env, bytes);
	if (g->kruskal == NULL)
		return env->err.code;
	g->kruskal_bytes = bytes;
	scratch = xxl_env_alloc(env, bytes);
	if (scratch == NULL)
		return env->err.code;
	for (uint64_t e = 0; e < m; e++)
	{
		const graph_attr *a = pvec_at(&g->attrs, e);
		unsigned char *r = g->kruskal + e * KRUSKAL_REC;

		g_put_be(r, g_cost_key(a->cost));
		g_put_be(r + 8, g_id_key(a->id));
		g_put_u64(r + 16, e);
	}
	xxl_radix_sort_fixed((char *) g->kruskal, (char *) scratch, m, KRUSKAL_REC, 16,
						 env->threads, false);
	xxl_env_free(env, scratch, bytes);
	return poll_canceled(g) ? env->err.code : XXL_OK;
}

xxl_status
graph_mem_run(xxl_graph *g)
{
	xxl_env    *env = &g->env;
	uint64_t	n = g->idm.n;
	id_rank    *pairs;
	uint32_t   *rank;

	g->path = XXL_GRAPH_IN_MEMORY;
	g->n = n;
	idmap_drop_table(env, &g->idm);
	if (g->op == XXL_GRAPH_MSF && sort_kruskal(g) != XXL_OK)
		return env->err.code;
	if (g->op != XXL_GRAPH_CC)
	{
		/* the union-find pass is the output scan (graph_mem_next_edge) */
		if (uf_alloc(g, n) != XXL_OK)
			return env->err.code;
		g->out = g->op == XXL_GRAPH_SF ? OUT_SF_MEM : OUT_MSF_MEM;
		return XXL_OK;
	}
	g->mem_ids_bytes = sizeof(id_rank) * (n ? n : 1);
	pairs = xxl_env_alloc(env, g->mem_ids_bytes);
	rank = pairs ? xxl_env_alloc(env, sizeof(uint32_t) * (n ? n : 1)) : NULL;
	if (rank == NULL)
	{
		if (pairs)
			xxl_env_free(env, pairs, g->mem_ids_bytes);
		return env->err.code;
	}
	for (uint64_t i = 0; i < n; i++)
		pairs[i] = (id_rank) {idmap_id(&g->idm, i), i};
	qsort(pairs, n, sizeof(id_rank), cmp_id_rank);
	for (uint64_t i = 0; i < n; i++)
		rank[pairs[i].dense] = (uint32_t) i;
	/* the sorted ids, in place: slot i is read before it is written */
	g->mem_ids = (int64_t *) pairs;
	for (uint64_t i = 0; i < n; i++)
		g->mem_ids[i] = pairs[i].id;
	pvec_free(env, &g->idm.ids);
	if (uf_alloc(g, n) == XXL_OK)
		for (uint64_t e = 0; e < g->ends.n; e++)
		{
			const uint32_t *d = pvec_at(&g->ends, e);

			uf_union(g->parent, rank[d[0]], rank[d[1]]);
			if (poll_canceled(g))
				break;
		}
	xxl_env_free(env, rank, sizeof(uint32_t) * (n ? n : 1));
	pvec_free(env, &g->ends);
	if (env->err.code != XXL_OK)
		return env->err.code;
	uf_flatten(g->parent, n);
	g->out = OUT_CC_SEMI;
	return XXL_OK;
}

/*
 * SF, MSF: the next kept edge that joins two sets, in input order (SF) or
 * in (cost, id) order (MSF): 1, or 0 at the end.
 */
int
graph_mem_next_edge(xxl_graph *g, int64_t *id, int64_t *source, int64_t *target, double *cost)
{
	while (g->out_pos < g->ends.n)
	{
		uint64_t	e = g->kruskal ? g_get_u64(g->kruskal + g->out_pos * KRUSKAL_REC + 16) :
			g->out_pos;
		const uint32_t *d = pvec_at(&g->ends, e);

		g->out_pos++;

		if (uf_union(g->parent, d[0], d[1]))
		{
			const graph_attr *a = pvec_at(&g->attrs, e);

			*id = a->id;
			*cost = a->cost;
			*source = idmap_id(&g->idm, d[0]);
			*target = idmap_id(&g->idm, d[1]);
			return 1;
		}
	}
	return 0;
}

void
graph_mem_release(xxl_graph *g)
{
	idmap_free(&g->env, &g->idm);
	pvec_free(&g->env, &g->ends);
	pvec_free(&g->env, &g->attrs);
	if (g->kruskal)
		xxl_env_free(&g->env, g->kruskal, g->kruskal_bytes);
	g->kruskal = NULL;
	if (g->mem_ids)
		xxl_env_free(&g->env, g->mem_ids, g->mem_ids_bytes);
	g->mem_ids = NULL;
}
