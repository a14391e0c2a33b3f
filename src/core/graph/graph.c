/*
 * graph.c — connected components, spanning forest and minimum spanning
 * forest (xxl_graph.h): creation and input, relabeling to dense ids, the
 * semi-external union-find / Kruskal, and the choice of path.  The
 * operator's state and memory plan: graph_internal.h.
 */
#include "core/graph/graph_internal.h"

#include <math.h>
#include <stdlib.h>

/* Creation and input ------------------------------------------------------ */

const char *
xxl_graph_path_name(xxl_graph_path path)
{
	switch (path)
	{
		case XXL_GRAPH_PATH_NONE:
			return "none";
		case XXL_GRAPH_IN_MEMORY:
			return "in-memory";
		case XXL_GRAPH_SEMI_EXTERNAL:
			return "semi-external";
		case XXL_GRAPH_EXTERNAL:
			return "external";
	}
	return "unknown";
}

xxl_graph *
xxl_graph_create(const xxl_graph_config *config, xxl_graph_op op, xxl_error *err)
{
	xxl_graph  *g;

	if (op != XXL_GRAPH_CC && op != XXL_GRAPH_SF && op != XXL_GRAPH_MSF)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "unknown graph operation %d", (int) op);
		return NULL;
	}
	g = xxl_env_new_object(&config->res, &graph_plan, sizeof(*g), offsetof(xxl_graph, env), err);
	if (g == NULL)
		return NULL;
	g->op = op;
	g->seed = config->seed;
	g->max_semi_nodes = config->max_semi_nodes;
	g->wide_queue = config->wide_queue;
	g->expected_edges = config->expected_edges;
	g->t_start = xxl_now_ns();
	idmap_init(&g->idm, g->env.budget.limit);
	pvec_init(&g->ends, 2 * sizeof(uint32_t), g->env.budget.limit);
	pvec_init(&g->ccuf, sizeof(uint32_t), g->env.budget.limit);
	pvec_init(&g->attrs, sizeof(graph_attr), g->env.budget.limit);
	pvec_init(&g->kedges, sizeof(graph_kedge), g->env.budget.limit);
	graph_mem_start(g);
	g->sorted_min = INT64_MAX;
	g->sorted_max = INT64_MIN;
	xxl_spool_init(&g->input, &g->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&g->map, &g->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&g->info, &g->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&g->log, &g->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&g->forest, &g->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&g->special, &g->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&g->basereps, &g->env, XXL_SPOOL_SHARED);
	g->semi_max = (half_share(g) - XXL_ALIGN) / graph_uf_entry(g);
	if (g->semi_max > UINT32_MAX)
		g->semi_max = UINT32_MAX;
	if (g->max_semi_nodes > 0 && g->max_semi_nodes < g->semi_max)
		g->semi_max = g->max_semi_nodes;
	if (!g->in_memory && graph_open_endpoints(g) != XXL_OK)
	{
		xxl_error_set(err, g->env.err.code, g->env.err.sys_errno, "%s", g->env.err.message);
		xxl_graph_destroy(g);
		return NULL;
	}
	g->state = ST_INPUT;
	return g;
}

xxl_status
xxl_graph_put_edge(xxl_graph *g, int64_t source, int64_t target, int64_t id, double cost)
{
	xxl_graph_edge e = {source, target, id, cost};

	return xxl_graph_put_edges(g, &e, 1);
}

xxl_status
xxl_graph_put_edges(xxl_graph *g, const xxl_graph_edge *edges, size_t n)
{
	if (g->state != ST_INPUT)
	{
		if (g->state != ST_FAILED)
			xxl_error_set(&g->env.err, XXL_EINVAL, 0, "edges can only be added before running");
		return gfail(g);
	}
	for (size_t i = 0; i < n; i++)
	{
		const xxl_graph_edge *e = &edges[i];

		if (g->op == XXL_GRAPH_MSF && isnan(e->cost))
		{
			xxl_error_set(&g->env.err, XXL_EINVAL, 0,
						  "edge cost is NaN (edge %lld: %lld - %lld)", (long long) e->id,
						  (long long) e->source, (long long) e->target);
			return gfail(g);
		}
		if (g->in_memory)
		{
			/* kept in memory, or (if it no longer fits) written below by the move */
			if (graph_mem_put(g, e) != XXL_OK)
				return gfail(g);
		}
		else if (graph_put_sorted(g, e->source, e->target, e->id, e->cost) != XXL_OK)
			return gfail(g);
		g->self_loops += e->source == e->target;
		g->m++;
		if (poll_canceled(g))
			return gfail(g);
	}
	return XXL_OK;
}

/*
 * The next edge on the sorting path, numbered in the order they come: for
 * components its endpoints into S1, for the forests its record into the
 * input spool (what their output reports), whose endpoints go to S1 only
 * if their ids are not their own numbers (graph_relabel).  Their numbers
 * are the input positions, except for components that leave components by
 * id, whose links stand in for the edges before.
 */
xxl_status
graph_put_sorted(xxl_graph *g, int64_t source, int64_t target, int64_t id, double cost)
{
	unsigned char io[IO_REC];

	if (g->op == XXL_GRAPH_CC)
		return graph_put_endpoints(&g->env, &g->s1, g->sorted_m++, source, target);
	g->sorted_m++;
	g->sorted_min = source < g->sorted_min ? source : g->sorted_min;
	g->sorted_min = target < g->sorted_min ? target : g->sorted_min;
	g->sorted_max = source > g->sorted_max ? source : g->sorted_max;
	g->sorted_max = target > g->sorted_max ? target : g->sorted_max;
	g_put_edge_rec(io, source, target, id, cost);
	return xxl_spool_write(&g->input, io, IO_REC);
}

/*
 * S1 for the sorting path (at creation, or when memory runs out); the
 * forests' is opened when their input is spooled, if at all.
 */
xxl_status
graph_open_endpoints(xxl_graph *g)
{
	if (g->op != XXL_GRAPH_CC)
		return XXL_OK;
	return xxl_env_sort_open(&g->env, &g->s1, half_share(g), 0, 16, 8, 2 * g->expected_edges,
							 XXL_INPUT_UNBOUNDED);
}

/* Relabeling -------------------------------------------------------------- */

static xxl_status
write_map(void *arg, int64_t id, uint64_t dense, uint64_t *attr)
{
	xxl_graph  *g = arg;

	return xxl_spool_write(&g->map, &id, 8);
}

/*
 * Whether the forests' ids may be their own dense numbers (less the
 * smallest): when they span at most two per edge, as those of a graph
 * numbered 1..n whose nodes all have an edge do.  A forest's output is
 * edges, so ids of the range that no edge has are harmless: they stay
 * alone.  Components list their nodes and are numbered by sorts (serial
 * ids take components by id, graph_split.c).
 */
static bool
pairs_by_id(const xxl_graph *g)
{
	uint64_t	span = (uint64_t) g->sorted_max - (uint64_t) g->sorted_min;

	/*
	 * a bit per id of the range counts the nodes while the pairs are read
	 * the first time, beside the queue or sorter that takes them (half the
	 * pool): up to a quarter
	 */
	return g->op != XXL_GRAPH_CC && g->sorted_m > 0 && span / 2 < g->sorted_m &&
		(span / 64 + 1) * 8 <= g->env.pool / 4;
}

/* By id, the last pair read: the nodes are the ids seen. */
static void
count_present(xxl_graph *g)
{
	uint64_t	count = 0;

	for (size_t i = 0; i < g->present_bytes / 8; i++)
		count += (uint64_t) __builtin_popcountll(g->present[i]);
	g->nodes = count;
	xxl_env_free(&g->env, g->present, g->present_bytes);
	g->present = NULL;
}

/* The forests' endpoints from their input spool into S1. */
static xxl_status
fill_endpoints(xxl_graph *g)
{
	xxl_env  *env = &g->env;
	xxl_spool_reader rd;
	xxl_status	rc = XXL_OK;

	if (xxl_env_sort_open(env, &g->s1, half_share(g), 0, 16, 8, 2 * g->sorted_m,
						  XXL_INPUT_BOUNDED) != XXL_OK ||
		xxl_spool_reader_open(&rd, &g->input, false) != XXL_OK)
		return env->err.code;
	for (uint64_t e = 0; e < g->sorted_m && rc == XXL_OK; e++)
	{
		const unsigned char *io;

		rc = xxl_spool_read(&rd, IO_REC, &io);
		if (rc == XXL_OK)
			rc = graph_put_endpoints(env, &g->s1, e, (int64_t) g_get_u64(io),
									 (int64_t) g_get_u64(io + 8));
		if (rc == XXL_OK && poll_canceled(g))
			rc = env->err.code;
	}
	xxl_spool_reader_close(&rd);
	return rc;
}

/*
 * Sort endpoints by id, number the distinct ids, send them back by edge;
 * or, for the forests by id, read the pairs from the input without S1.
 */
xxl_status
graph_relabel(xxl_graph *g)
{
	if (xxl_spool_finish(&g->input) != XXL_OK)
		return g->env.err.code;
	if (pairs_by_id(g))
	{
		g->pairs_by_id = true;
		g->pairs_pos = 0;
		g->n = (uint64_t) g->sorted_max - (uint64_t) g->sorted_min + 1;
		g->present_bytes = (g->n + 63) / 64 * 8;
		g->present = xxl_env_alloc(&g->env, g->present_bytes);
		if (g->present == NULL)
			return g->env.err.code;
		memset(g->present, 0, g->present_bytes);
		return xxl_spool_reader_open(&g->rd_pairs, &g->input, false);
	}
	if (g->op != XXL_GRAPH_CC && fill_endpoints(g) != XXL_OK)
		return g->env.err.code;
	if (graph_number_ids(&g->env, &g->s1, &g->s2, half_share(g), 2 * g->sorted_m, write_map, g,
						 false, &g->n) != XXL_OK)
		return g->env.err.code;
	return xxl_spool_finish(&g->map);
}

/* The next edge in input order with its dense ends: 1, 0 at the end, -1 on error. */
int
graph_next_pair(xxl_graph *g, uint64_t *e, uint64_t *du, uint64_t *dv)
{
	const unsigned char *io;

	if (!g->pairs_by_id)
		return graph_next_dense_pair(&g->env, &g->s2, e, du, dv, NULL);
	if (g->pairs_pos == g->sorted_m)
		return 0;
	if (xxl_spool_read(&g->rd_pairs, IO_REC, &io) != XXL_OK)
		return -1;
	*e = g->pairs_pos++;
	*du = g_get_u64(io) - (uint64_t) g->sorted_min;
	*dv = g_get_u64(io + 8) - (uint64_t) g->sorted_min;
	if (g->present)
	{
		g->present[*du >> 6] |= UINT64_C(1) << (*du & 63);
		g->present[*dv >> 6] |= UINT64_C(1) << (*dv & 63);
		if (g->pairs_pos == g->sorted_m)
			count_present(g);
	}
	return 1;
}

/* The pairs are read: what held them goes. */
void
graph_pairs_done(xxl_graph *g)
{
	xxl_env_sort_close(&g->env, &g->s2, NULL, NULL);
	xxl_spool_reader_close(&g->rd_pairs);
}

/*
 * MSF: join the dense endpoints with the input and sort by (cost, id); the
 * sort is stable, so ties keep input order and the order is strict.
 */
xxl_status
graph_fill_kruskal_sorter(xxl_graph *g)
{
	xxl_env  *env = &g->env;
	uint64_t	e,
				du,
				dv;
	int			got;

	if (xxl_env_sort_open(env, &g->s3, half_share(g), 0, graph_kruskal_rec(g), 16,
							  g->sorted_m, XXL_INPUT_BOUNDED) != XXL_OK ||
		xxl_spool_reader_open(&g->rd_in, &g->input, false) != XXL_OK)
		return env->err.code;
	while ((got = graph_next_pair(g, &e, &du, &dv)) == 1)
	{
		const unsigned char *io;
		unsigned char r[48];
		double		cost;

		if (xxl_spool_read(&g->rd_in, IO_REC, &io) != XXL_OK)
			return env->err.code;
		memcpy(&cost, io + 24, 8);
		g_put_be(r, g_cost_key(cost));
		g_put_be(r + 8, g_id_key((int64_t) g_get_u64(io + 16)));
		g_put_u64(r + 16, du);
		g_put_u64(r + 24, dv);
		if (!g->pairs_by_id)
			memcpy(r + 32, io, 16);
		if (xxl_env_sort_put(env, &g->s3, r) != XXL_OK)
			return env->err.code;
		if (poll_canceled(g))
			return env->err.code;
	}
	if (got < 0)
		return env->err.code;
	graph_pairs_done(g);
	xxl_spool_reader_close(&g->rd_in);
	xxl_spool_free(&g->input);		/* S3 carries everything now */
	return xxl_env_sort_sort(env, &g->s3);
}

/* Semi-external path ------------------------------------------------------ */

xxl_status
graph_run_semi(xxl_graph *g)
{
	xxl_env  *env = &g->env;
	uint64_t	e,
				du,
				dv;
	int			got;

	g->path = XXL_GRAPH_SEMI_EXTERNAL;
	switch (g->op)
	{
		case XXL_GRAPH_CC:
			if (uf_alloc(g, g->n) != XXL_OK)
				return env->err.code;
			while ((got = graph_next_pair(g, &e, &du, &dv)) == 1)
			{
				uf_union(g->parent, du, dv);
				if (poll_canceled(g))
					return env->err.code;
			}
			if (got < 0)
				return env->err.code;
			graph_pairs_done(g);
			uf_flatten(g->parent, g->n);
			if (xxl_spool_reader_open(&g->rd_map, &g->map, false) != XXL_OK)
				return env->err.code;
			g->out = OUT_CC_SEMI;
			break;
		case XXL_GRAPH_SF:
			/* the union-find pass is the output scan */
			if (graph_uf_alloc(g, g->n) != XXL_OK ||
				xxl_spool_reader_open(&g->rd_in, &g->input, false) != XXL_OK)
				return env->err.code;
			g->out = OUT_SF_SEMI;
			break;
		case XXL_GRAPH_MSF:
			if (graph_fill_kruskal_sorter(g) != XXL_OK || graph_uf_alloc(g, g->n) != XXL_OK)
				return env->err.code;
			g->out = OUT_MSF_SEMI;
			break;
	}
	return XXL_OK;
}

/* Statistics and teardown ------------------------------------------------- */

const xxl_error *
xxl_graph_error(const xxl_graph *g)
{
	return &g->env.err;
}

void
xxl_graph_stats_get(const xxl_graph *g, xxl_graph_stats *st)
{
	const xxl_env *env = &g->env;
	const xxl_env_sorter *sorters[] = {&g->s1, &g->s2, &g->s3, &g->s4, &g->lsort, &g->f1, &g->f2,
	&g->f3, &g->fsort};

	memset(st, 0, sizeof(*st));
	st->path = g->path;
	st->edges = g->m;
	st->self_loops = g->self_loops;
	st->nodes = graph_nodes(g);
	st->semi_nodes_max = g->semi_max;
	st->ids_in_memory = g->mapped && g->path == XXL_GRAPH_SEMI_EXTERNAL;
	st->ids_by_id = g->out == OUT_CC_BY_ID || g->out == OUT_CC_SPLIT || g->pairs_by_id ||
		(st->ids_in_memory && graph_mapped_by_id(g));
	st->id_parts = g->out == OUT_CC_SPLIT ? graph_split_levels(g) :
		g->out == OUT_FOREST_PARTS ? g->parts_levels : st->ids_by_id;
	st->base_nodes = g->path == XXL_GRAPH_EXTERNAL ? g->base_n : 0;
	st->contracted_nodes = g->contracted;
	st->relinked_edges = g->relinked;
	st->parallel_edges = g->parallel;
	st->contraction_passes = g->path == XXL_GRAPH_EXTERNAL ? 1 : 0;
	st->pq_pushes = env->done.pq_pushes;
	st->pq_merges = env->done.pq_merges;
	st->components = g->components;
	st->forest_edges = g->forest_edges;
	st->sorts = env->done.sorts;
	st->sort_runs = env->done.runs;
	st->sort_passes = env->done.passes;
	st->sort_passes_max = env->done.max_passes;
	st->sorted_bytes = env->done.sorted_bytes;
	st->io = env->done.io;
	for (size_t i = 0; i < sizeof(sorters) / sizeof(sorters[0]); i++)
		xxl_env_sort_io(sorters[i], &st->io);
	xxl_env_queue_io(&g->pq, &st->io);
	xxl_env_queue_io(&g->msg, &st->io);
	if (env->disks)
	{
		xxl_io_stats io;

		xxl_disks_stats(env->disks, &io);
		xxl_io_fold(&st->io, &io);
	}
	for (int i = 0; i < st->io.ndisks; i++)
	{
		st->bytes_read += st->io.disk[i].bytes_read;
		st->bytes_written += st->io.disk[i].bytes_written;
	}
	st->memory_peak = xxl_env_used_peak(env);
	st->memory_held = env->budget.used;
	st->memory_limit = env->budget.limit;
	st->run_ns = g->run_ns ? g->run_ns : xxl_now_ns() - g->t_start;
	st->output_ns = gout_clock_ns(&g->out_clock);
}

void
xxl_graph_destroy(xxl_graph *g)
{
	xxl_budget	budget;

	if (g == NULL)
		return;
	graph_release_all(g);
	xxl_env_close(&g->env);
	budget = g->env.budget;
	xxl_budget_free(&budget, g, sizeof(*g));
}

