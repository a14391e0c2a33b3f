/*
 * paths.c — BFS and shortest paths (xxl_paths.h): creation, the edge
 * semantics (which directions exist), the choice between the in-memory and
 * the external path, the pull interface, statistics and teardown.  The
 * paths themselves: paths_memory.c and paths_external.c.
 */
#include "core/graph/paths_internal.h"
#include "core/graph/xxl_graph.h"

#include <math.h>
#include <stdlib.h>

/* Creation and input ---------------------------------------------------------- */

static void start_numbering(xxl_paths *p, size_t memory);

const char *
xxl_paths_path_name(xxl_paths_path path)
{
	switch (path)
	{
		case XXL_PATHS_NONE:
			return "none";
		case XXL_PATHS_IN_MEMORY:
			return "in-memory";
		case XXL_PATHS_EXTERNAL:
			return "external";
		case XXL_PATHS_SEMI_EXTERNAL:
			return "semi-external";
	}
	return "unknown";
}

size_t
xxl_paths_min_memory(void)
{
	return xxl_graph_min_memory();
}

xxl_paths *
xxl_paths_create(const xxl_paths_config *config, xxl_error *err)
{
	xxl_paths  *p;
	size_t		ns = config->nsources;

	if (config->nsources == 0 || (config->has_target && config->op != XXL_PATHS_SSSP) ||
		isnan(config->max_distance) || config->max_distance < 0)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "invalid shortest-path configuration");
		return NULL;
	}
	p = xxl_env_new_object(&config->res, &graph_plan, sizeof(*p), offsetof(xxl_paths, env), err);
	if (p == NULL)
		return NULL;
	p->op = config->op;
	p->directed = config->directed;
	p->has_target = config->has_target;
	p->target = config->target;
	p->max_distance = config->max_distance;
	p->max_depth = config->max_depth;
	p->bfs_choice = config->bfs;
	p->sssp_choice = config->sssp;
	p->w_min = INFINITY;
	p->w_max = 0;
	p->cluster_mu = config->cluster_mu;
	p->t_start = xxl_now_ns();
	idmap_init(&p->map, p->env.budget.limit);
	pvec_init(&p->lends, sizeof(plink_ends), p->env.budget.limit);
	pvec_init(&p->lcost, sizeof(plink_cost), p->env.budget.limit);
	pvec_init(&p->semi_deg, sizeof(uint32_t), p->env.budget.limit);
	xxl_spool_init(&p->linkspool, &p->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&p->results, &p->env, XXL_SPOOL_SHARED);
	p->sources_bytes = ns * sizeof(int64_t);
	p->sources = xxl_env_alloc(&p->env, p->sources_bytes);
	if (p->sources == NULL)
		goto fail;
	memcpy(p->sources, config->sources, ns * sizeof(int64_t));
	qsort(p->sources, ns, sizeof(int64_t), paths_cmp_id);
	p->nsources = 0;
	for (size_t i = 0; i < ns; i++)
		if (p->nsources == 0 || p->sources[p->nsources - 1] != p->sources[i])
			p->sources[p->nsources++] = p->sources[i];
	if (config->force_external && paths_ext_begin(p) != XXL_OK)
		goto fail;
	p->state = PS_INPUT;
	start_numbering(p, config->res.memory);
	return p;

fail:
	*err = p->env.err;
	xxl_paths_destroy(p);
	return NULL;
}

/*
 * Leave the in-memory path for the semi-external one, or for the external
 * one when not even the nodes fit.
 */
static xxl_status
leave_memory(xxl_paths *p)
{
	xxl_status	rc = p->semi ? XXL_ENOMEM : paths_semi_begin(p);

	if (rc == XXL_ENOMEM && p->env.err.code == XXL_OK)
		rc = paths_ext_begin(p);
	return rc;
}

/*
 * Number links in memory (all of them, or the nodes only: semi-external),
 * or move everything on when they do not fit.  On the caller's thread, or
 * on the numbering worker (see start_numbering): then nothing else touches
 * the operator's budget or its in-memory state until the worker is done.
 */
static xxl_status
number_links(xxl_paths *p, const plink_in *links, size_t n)
{
	size_t		i = 0;

	/* a rolling prefetch, as the graph operators' numbering does */
	for (size_t k = 0; k < n && k < P_ID_AHEAD; k++)
	{
		idmap_prefetch(&p->map, links[k].u);
		idmap_prefetch(&p->map, links[k].v);
	}
	while (i < n && !p->external)
	{
		const plink_in *l = &links[i];
		xxl_status	rc;

		if (i + P_ID_AHEAD < n)
		{
			idmap_prefetch(&p->map, links[i + P_ID_AHEAD].u);
			idmap_prefetch(&p->map, links[i + P_ID_AHEAD].v);
		}
		rc = p->semi ? paths_semi_add(p, l->u, l->v, l->eid, l->w) :
			paths_mem_add(p, l->u, l->v, l->eid, l->w);
		if (rc == XXL_OK)
		{
			i++;
			continue;
		}
		if (rc != XXL_ENOMEM || p->env.err.code != XXL_OK)
			return rc;
		/* it outgrew its path: the same link again on the next one */
		if (leave_memory(p) != XXL_OK)
			return p->env.err.code;
	}
	for (; i < n; i++)
	{
		const plink_in *l = &links[i];

		if (paths_ext_add(p, l->u, l->v, l->eid, l->w) != XXL_OK)
			return p->env.err.code;
	}
	return XXL_OK;
}

/* The numbering worker's side of the pipe. */
static xxl_status
number_batch(void *arg, const unsigned char *batch, size_t len, xxl_error *err)
{
	xxl_paths  *p = arg;

	if (number_links(p, (const plink_in *) batch, len / sizeof(plink_in)) != XXL_OK)
		*err = p->env.err;
	return err->code;
}

/*
 * Number the links on a second core while the caller reads the next ones
 * (numbering.h; on 1M nodes / 5M edges the numbering was a third of the
 * input's time): only for the in-memory start.
 */
static void
start_numbering(xxl_paths *p, size_t memory)
{
	if (!p->external)
		g_numbering_start(&p->numbering, &p->env, memory, sizeof(plink_in), number_batch, p);
}

/* The staged links: to the worker, or numbered here. */
static xxl_status
flush_batch(xxl_paths *p)
{
	xxl_status	rc;

	if (p->numbering.pipe)
	{
		unsigned char *at;

		if (p->nbatch == 0)
			return XXL_OK;
		at = g_numbering_space(&p->numbering, &p->env, p->nbatch * sizeof(plink_in));
		if (at == NULL)
			return p->env.err.code;
		memcpy(at, p->batch, p->nbatch * sizeof(plink_in));
		p->nbatch = 0;
		return XXL_OK;
	}
	rc = number_links(p, p->batch, p->nbatch);
	p->nbatch = 0;
	return rc;
}

/* The end of the input: every link numbered, the worker gone. */
static xxl_status
finish_numbering(xxl_paths *p)
{
	if (flush_batch(p) != XXL_OK)
		return p->env.err.code;
	return g_numbering_finish(&p->numbering, &p->env);
}

static xxl_status
add_link(xxl_paths *p, int64_t u, int64_t v, int64_t eid, double w)
{
	/* the range of the costs: Meyer-Osipov's weight categories */
	if (w > 0 && w < p->w_min)
		p->w_min = w;
	if (w > p->w_max)
		p->w_max = w;
	/* with the worker, only it knows whether the links went external */
	if (p->numbering.pipe == NULL && p->external)
		return paths_ext_add(p, u, v, eid, w);
	p->batch[p->nbatch++] = (plink_in) {u, v, eid, w};
	if (p->nbatch == (p->numbering.pipe ? P_PIPE_LINKS : P_BATCH))
		return flush_batch(p);
	return XXL_OK;
}

xxl_status
xxl_paths_put_edge(xxl_paths *p, int64_t source, int64_t target, int64_t id, double cost,
				   double reverse_cost)
{
	if (p->state != PS_INPUT)
	{
		if (p->state != PS_FAILED)
			xxl_error_set(&p->env.err, XXL_EINVAL, 0, "edges can only be added before running");
		return pfail(p);
	}
	if (isnan(cost) || isnan(reverse_cost))
	{
		g_numbering_stop(&p->numbering);
		xxl_error_set(&p->env.err, XXL_EINVAL, 0, "edge %lld (%lld - %lld) has a NaN cost",
					  (long long) id, (long long) source, (long long) target);
		return pfail(p);
	}
	p->m++;
	/* pgRouting: a negative cost means that direction does not exist */
	if (cost >= 0 && add_link(p, source, target, id, cost) != XXL_OK)
		return pfail(p);
	if (reverse_cost >= 0 && add_link(p, target, source, id, reverse_cost) != XXL_OK)
		return pfail(p);
	if (p->numbering.pipe == NULL ? xxl_env_poll(&p->env) :
		g_numbering_poll(&p->numbering, &p->env))
		return pfail(p);
	return XXL_OK;
}

xxl_status
xxl_paths_run(xxl_paths *p)
{
	xxl_status	rc;

	if (p->state != PS_INPUT)
	{
		if (p->state != PS_FAILED)
			xxl_error_set(&p->env.err, XXL_EINVAL, 0, "the search has already run");
		return pfail(p);
	}
	if (finish_numbering(p) != XXL_OK)
		return pfail(p);
	p->load_ns = xxl_now_ns() - p->t_start;
	/* the search's arrays may not fit although the input did */
	if (!p->external && !p->semi && paths_mem_need(p) > graph_mem_limit(&p->env) &&
		leave_memory(p) != XXL_OK)
		return pfail(p);
	rc = p->external ? paths_ext_run(p) : p->semi ? paths_semi_run(p) : paths_mem_run(p);
	if (rc != XXL_OK)
		return pfail(p);
	p->out_pos = 0;
	p->state = PS_OUTPUT;
	return XXL_OK;
}

/* Output ------------------------------------------------------------------------ */

static bool
output_ready(xxl_paths *p)
{
	if (p->state == PS_OUTPUT)
		return true;
	if (p->state == PS_INPUT)
	{
		xxl_error_set(&p->env.err, XXL_EINVAL, 0, "rows can only be read after running");
		pfail(p);
	}
	return false;
}

int
xxl_paths_next(xxl_paths *p, int64_t *node, double *distance, int64_t *pred, int64_t *edge)
{
	int			got;

	if (!output_ready(p))
		return -1;
	gout_clock_row(&p->out_clock);
	/* while the search runs on its worker, paths_mem_next asks the host */
	if (!paths_mem_searching(p) && xxl_env_poll(&p->env))
	{
		pfail(p);
		return -1;
	}
	got = p->external ? paths_ext_next(p, node, distance, pred, edge) :
		paths_mem_next(p, node, distance, pred, edge);
	if (got < 0)
		pfail(p);
	if (got == 0)
		gout_clock_end(&p->out_clock);
	return got;
}

int
xxl_paths_next_step(xxl_paths *p, int64_t *node, int64_t *edge, double *cost, double *agg_cost)
{
	int			got;

	if (!output_ready(p))
		return -1;
	got = p->external ? paths_ext_step(p, node, edge, cost, agg_cost) :
		paths_mem_step(p, node, edge, cost, agg_cost);
	if (got < 0)
		pfail(p);
	return got;
}

/* Statistics and teardown ---------------------------------------------------------- */

const xxl_error *
xxl_paths_error(const xxl_paths *p)
{
	return &p->env.err;
}

void
xxl_paths_stats_get(xxl_paths *p, xxl_paths_stats *st)
{
	const xxl_env *env = &p->env;

	/* (an input stopped by the host leaves the worker running) */
	g_numbering_stop(&p->numbering);

	memset(st, 0, sizeof(*st));
	st->path = p->path;
	st->edges = p->m;
	st->links = p->nlinks;
	st->arcs = p->narcs;
	st->nodes = p->n;
	st->ids_by_id = p->by_id;
	st->arc_ranges = p->arc_ranges;
	st->reached = p->reached;
	st->levels = p->levels;
	st->level_spills = p->level_spills;
	st->relaxed = p->relaxed;
	st->pq_pushes = p->pushes;
	st->pq_merges = env->done.pq_merges;
	st->pq_bytes = p->pq_bytes;
	st->arcs_in_memory = p->path == XXL_PATHS_SEMI_EXTERNAL ? p->mem_arcs :
		p->path == XXL_PATHS_IN_MEMORY ? p->narcs : 0;
	st->link_passes = p->link_passes;
	st->arc_bytes = p->path == XXL_PATHS_SEMI_EXTERNAL ? paths_semi_arc_bytes(p) : 0;
	st->cache_hits = p->cache_hits + p->adj.hits + p->idx.hits;
	st->cache_misses = p->cache_misses + p->adj.misses + p->idx.misses;
	st->bfs = p->bfs_ran;
	st->sssp = p->sssp_ran;
	st->categories = p->categories;
	st->mo_batches = p->mo_batches;
	st->mo_flushes = p->mo_flushes;
	st->tree_edges = p->tree_edges;
	st->clusters = p->clusters_used;
	st->cluster_loads = p->cluster_loads;
	st->pool_hits = p->pool_hits;
	st->pool_peak = p->pool_peak;
	st->forest_path = xxl_graph_path_name((xxl_graph_path) p->forest_path);
	st->cluster_skipped = p->cluster_skipped;
	st->sorts = env->done.sorts + p->sub_sorts;
	st->sorted_bytes = env->done.sorted_bytes;
	xxl_env_io(env, &st->io);
	{
		uint64_t	wait;
		bool		direct;

		xxl_env_io_sum(env, &st->bytes_read, &st->bytes_written, &wait, &direct);
		/* the nested spanning forest of the clustering */
		st->bytes_read += p->sub_read;
		st->bytes_written += p->sub_written;
	}
	st->memory_peak = xxl_env_used_peak(env);
	st->memory_held = env->budget.used;
	st->memory_limit = env->budget.limit;
	st->load_ns = p->load_ns;
	st->numbering_worker = p->numbering.used;
	st->search_worker = p->search_worker;
	st->numbering_wait_ns = p->numbering.wait_ns;
	st->build_ns = p->build_ns;
	st->cluster_ns = p->cluster_ns;
	st->forest_ns = p->forest_ns;
	st->search_ns = p->search_ns;
	st->output_ns = gout_clock_ns(&p->out_clock);
}

const char *
xxl_paths_sssp_name(xxl_paths_sssp sssp)
{
	switch (sssp)
	{
		case XXL_PATHS_SSSP_DIJKSTRA:
			return "dijkstra";
		case XXL_PATHS_SSSP_MO:
			return "mo";
		default:
			return "auto";
	}
}

const char *
xxl_paths_bfs_name(xxl_paths_bfs bfs)
{
	switch (bfs)
	{
		case XXL_PATHS_BFS_MR:
			return "mr";
		case XXL_PATHS_BFS_MM:
			return "mm";
		default:
			return "auto";
	}
}

void
xxl_paths_destroy(xxl_paths *p)
{
	xxl_budget	budget;

	if (p == NULL)
		return;
	g_numbering_stop(&p->numbering);
	paths_mem_release(p);
	paths_ext_release(p);
	if (p->sources)
		xxl_env_free(&p->env, p->sources, p->sources_bytes);
	xxl_env_close(&p->env);
	budget = p->env.budget;
	xxl_budget_free(&budget, p, sizeof(*p));
}
