/*
 * paths_external.c — the external path of BFS / shortest paths
 * (xxl_paths.h): the searches over the adjacency lists paths_ext_build.c
 * writes, with one bit per node in memory: Dijkstra on the external
 * priority queue (no decrease-key: a push per relaxation, stale entries
 * dropped by the bit) and Munagala-Ranade BFS (each level sorted by node,
 * so its adjacency lists are read in disk order), the path to a target,
 * and the rows out.  Record layouts: paths_internal.h.
 */
#include "core/graph/paths_internal.h"

#include <math.h>
#include <stdlib.h>

#define PQ_REC 56
#define LEVEL_REC 16
#define RESULT_REC 32
#define LOG_REC 48
#define STEP_REC 32

/* Search ----------------------------------------------------------------------- */

xxl_status
paths_ext_emit(xxl_paths *p, int64_t node, double d, int64_t pred, int64_t edge)
{
	unsigned char r[RESULT_REC];

	g_put_u64(r, (uint64_t) node);
	memcpy(r + 8, &d, 8);
	g_put_u64(r + 16, (uint64_t) pred);
	g_put_u64(r + 24, (uint64_t) edge);
	p->reached++;
	return xxl_spool_write(&p->results, r, RESULT_REC);
}

/* The arcs of node x: [first, end). */
static xxl_status
arc_range(xxl_paths *p, uint64_t x, uint64_t *first, uint64_t *end)
{
	const unsigned char *r;

	if (xxl_pagefile_get(&p->idx, x, &r) != XXL_OK)
		return p->env.err.code;
	*first = g_get_u64(r);
	if (xxl_pagefile_get(&p->idx, x + 1, &r) != XXL_OK)
		return p->env.err.code;
	*end = g_get_u64(r);
	return XXL_OK;
}

/*
 * Push a queue entry (PQ_REC bytes; MO's records append the node's cluster,
 * extra: up to 8 bytes more).
 */
xxl_status
paths_ext_push(xxl_paths *p, double d, uint64_t node, int64_t orig, uint64_t pred,
			   int64_t pred_orig, int64_t edge, double w, const void *extra, size_t extra_len)
{
	unsigned char q[PQ_REC + 8];

	g_put_be(q, g_cost_key(d));
	g_put_be(q + 8, node);
	g_put_u64(q + 16, (uint64_t) orig);
	g_put_u64(q + 24, pred);
	g_put_u64(q + 32, (uint64_t) pred_orig);
	g_put_u64(q + 40, (uint64_t) edge);
	memcpy(q + 48, &w, 8);
	if (extra_len > 0)
		memcpy(q + PQ_REC, extra, extra_len);
	p->pushes++;
	return xxl_env_queue_push(&p->env, &p->pq, q);
}

static xxl_status
push_entry(xxl_paths *p, double d, uint64_t node, int64_t orig, uint64_t pred, int64_t pred_orig,
		   int64_t edge, double w)
{
	return paths_ext_push(p, d, node, orig, pred, pred_orig, edge, w, NULL, 0);
}

/* The queue (records of rec bytes, key 16) and, with a target, the settle log. */
xxl_status
paths_ext_queue_open(xxl_paths *p, size_t rest, size_t rec)
{
	xxl_env    *env = &p->env;

	if (xxl_env_queue_open(env, &p->pq, rest, rec, 16) != XXL_OK)
		return env->err.code;
	if (p->has_target &&
		xxl_pagefile_open(&p->log, env, xxl_pagefile_page_for(env, 16384), LOG_REC) != XXL_OK)
		return env->err.code;
	return XXL_OK;
}

/*
 * Node x settled at distance d, reached from pred by edge of this cost:
 * its row, its settle log record (with a target), *stop when it is the
 * target.
 */
xxl_status
paths_ext_settle(xxl_paths *p, uint64_t x, int64_t orig, double d, uint64_t pred,
				 int64_t pred_orig, int64_t edge, double cost, bool *stop)
{
	*stop = false;
	bit_set(p->visited, x);
	if (paths_ext_emit(p, orig, d, pred_orig, edge) != XXL_OK)
		return p->env.err.code;
	if (p->has_target)
	{
		unsigned char lg[LOG_REC];

		g_put_u64(lg, x);
		g_put_u64(lg + 8, pred);
		g_put_u64(lg + 16, (uint64_t) orig);
		g_put_u64(lg + 24, (uint64_t) edge);
		memcpy(lg + 32, &cost, 8);
		memcpy(lg + 40, &d, 8);
		if (xxl_pagefile_append(&p->log, lg) != XXL_OK)
			return p->env.err.code;
		if (x == p->target_dense)
		{
			p->target_found = true;
			*stop = true;
		}
	}
	return XXL_OK;
}

/* The queue's spill I/O into the statistics, and the queue closed. */
void
paths_ext_queue_close(xxl_paths *p)
{
	xxl_io_stats io;

	memset(&io, 0, sizeof(io));
	xxl_env_queue_io(&p->pq, &io);
	for (int i = 0; i < io.ndisks; i++)
		p->pq_bytes += io.disk[i].bytes_read + io.disk[i].bytes_written;
	xxl_env_queue_close(&p->env, &p->pq);
}

static xxl_status
dijkstra(xxl_paths *p, size_t rest)
{
	xxl_env    *env = &p->env;
	unsigned char q[PQ_REC];
	int			got;

	if (paths_ext_queue_open(p, rest, PQ_REC) != XXL_OK)
		return env->err.code;
	for (size_t i = 0; i < p->nsrc_dense; i++)
		if (push_entry(p, 0.0, p->src_dense[i], p->src_orig[i], p->src_dense[i], p->src_orig[i],
					   -1, 0.0) != XXL_OK)
			return env->err.code;
	while ((got = xxl_env_queue_pop(env, &p->pq, q)) == 1)
	{
		double		d = g_key_cost(g_get_be(q));
		uint64_t	x = g_get_be(q + 8);
		int64_t		orig = (int64_t) g_get_u64(q + 16);
		uint64_t	first = 0,
					end = 0;
		double		w;
		bool		stop;

		if (bit_get(p->visited, x))
			continue;
		if (!(d <= p->max_distance))
			break;
		memcpy(&w, q + 48, 8);
		if (paths_ext_settle(p, x, orig, d, g_get_u64(q + 24), (int64_t) g_get_u64(q + 32),
							 (int64_t) g_get_u64(q + 40), w, &stop) != XXL_OK)
			return env->err.code;
		if (stop)
			break;
		if (arc_range(p, x, &first, &end) != XXL_OK)
			return env->err.code;
		for (uint64_t a = first; a < end; a++)
		{
			const unsigned char *r;
			uint64_t	to;

			if (xxl_pagefile_get(&p->adj, a, &r) != XXL_OK)
				return env->err.code;
			p->relaxed++;
			to = paths_adj_head(r);
			if (bit_get(p->visited, to))
				continue;
			w = paths_adj_cost(p, r);
			if (push_entry(p, d + w, to, paths_adj_orig(p, r), x, orig, paths_adj_edge(p, r),
						   w) != XXL_OK)
				return env->err.code;
		}
		if (xxl_env_poll(env))
			return env->err.code;
	}
	if (got < 0)
		return env->err.code;
	paths_ext_queue_close(p);
	return XXL_OK;
}

/*
 * A node of the next MR level: its number (the sort key) and its id, the
 * predecessor its children's rows name.  Its own row went out when it was
 * reached.
 */
static xxl_status
level_put(xxl_paths *p, plevel *s, uint64_t node, int64_t orig)
{
	unsigned char r[LEVEL_REC];

	g_put_be(r, node);
	g_put_u64(r + 8, (uint64_t) orig);
	return plevel_put(p, s, r);
}

/*
 * Level 0 of a BFS: each source once, marked visited, its row emitted, and
 * put (by put, in the BFS's own level record) into level.
 */
xxl_status
paths_ext_seed(xxl_paths *p, plevel *level, paths_seed_fn put)
{
	for (size_t i = 0; i < p->nsrc_dense; i++)
	{
		if (bit_get(p->visited, p->src_dense[i]))
			continue;
		bit_set(p->visited, p->src_dense[i]);
		if (paths_ext_emit(p, p->src_orig[i], 0, p->src_orig[i], -1) != XXL_OK ||
			put(p, level, i) != XXL_OK)
			return p->env.err.code;
	}
	return XXL_OK;
}

static xxl_status
seed_put(xxl_paths *p, plevel *level, size_t i)
{
	return level_put(p, level, p->src_dense[i], p->src_orig[i]);
}

static xxl_status
bfs(xxl_paths *p, size_t rest)
{
	xxl_env    *env = &p->env;
	size_t		share = rest / 2 - (rest / 2) % XXL_ALIGN;
	int			cur = 0;
	uint64_t	depth = 0;

	if (plevel_init(p, &p->lv[0], LEVEL_REC, share) != XXL_OK ||
		plevel_init(p, &p->lv[1], LEVEL_REC, share) != XXL_OK ||
		paths_ext_seed(p, &p->lv[cur], seed_put) != XXL_OK)
		return env->err.code;
	while (p->lv[cur].pushed > 0 && depth < p->max_depth)
	{
		plevel	   *now = &p->lv[cur],
				   *next = &p->lv[1 - cur];
		const unsigned char *r;
		int			got;

		if (plevel_sort(p, now) != XXL_OK)
			return env->err.code;
		p->levels++;
		xxl_env_step(&p->env, "level", (uint32_t) p->levels, 0);
		while ((got = plevel_next(p, now, &r)) == 1)
		{
			uint64_t	x = g_get_be(r);
			int64_t		orig = (int64_t) g_get_u64(r + 8);
			uint64_t	first = 0,
						end = 0;

			if (arc_range(p, x, &first, &end) != XXL_OK)
				return env->err.code;
			for (uint64_t a = first; a < end; a++)
			{
				const unsigned char *ar;
				uint64_t	to;

				if (xxl_pagefile_get(&p->adj, a, &ar) != XXL_OK)
					return env->err.code;
				p->relaxed++;
				to = paths_adj_head(ar);
				if (bit_get(p->visited, to))
					continue;
				bit_set(p->visited, to);
				p->pushes++;
				if (paths_ext_emit(p, paths_adj_orig(p, ar), (double) (depth + 1), orig,
								   paths_adj_edge(p, ar)) != XXL_OK ||
					level_put(p, next, to, paths_adj_orig(p, ar)) != XXL_OK)
					return env->err.code;
			}
			if (xxl_env_poll(env))
				return env->err.code;
		}
		if (got < 0)
			return env->err.code;
		plevel_clear(p, now);
		cur = 1 - cur;
		depth++;
	}
	return XXL_OK;
}

/*
 * The path to the target: the settle log read backwards finds each node's
 * predecessor before it (a predecessor settles first), target first into
 * the steps file, which the output reads backwards again.
 */
static xxl_status
collect_path(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	uint64_t	want = p->target_dense;

	if (!p->target_found)
		return XXL_OK;
	if (xxl_pagefile_finish(&p->log, paths_part_share(p, 8)) != XXL_OK ||
		xxl_pagefile_open(&p->steps_file, env, xxl_pagefile_page_for(env, 16384), STEP_REC) != XXL_OK)
		return env->err.code;
	for (uint64_t i = p->log.records; i-- > 0;)
	{
		const unsigned char *r;
		unsigned char s[STEP_REC];

		if (xxl_pagefile_get(&p->log, i, &r) != XXL_OK)
			return env->err.code;
		if (g_get_u64(r) != want)
			continue;
		memcpy(s, r + 16, 8);	/* orig */
		memcpy(s + 8, r + 24, 16);	/* edge in, cost in */
		memcpy(s + 24, r + 40, 8);	/* distance */
		if (xxl_pagefile_append(&p->steps_file, s) != XXL_OK)
			return env->err.code;
		if (g_get_u64(r + 8) == want)
			break;				/* a source */
		want = g_get_u64(r + 8);
		if (xxl_env_poll(env))
			return env->err.code;
	}
	if (xxl_pagefile_finish(&p->steps_file, paths_part_share(p, 8)) != XXL_OK)
		return env->err.code;
	p->nsteps = p->steps_file.records > 1 ? p->steps_file.records : 0;	/* target = source: none */
	return XXL_OK;
}

/* The external algorithm: clustered (MM, MO) or plain (MR, Dijkstra), and why not clustered. */
static void
use_external(xxl_paths *p, bool clustered, const char *why_not)
{
	p->bfs_ran = XXL_PATHS_BFS_AUTO;
	p->sssp_ran = XXL_PATHS_SSSP_AUTO;
	if (p->op == XXL_PATHS_BFS)
		p->bfs_ran = clustered ? XXL_PATHS_BFS_MM : XXL_PATHS_BFS_MR;
	else
		p->sssp_ran = clustered ? XXL_PATHS_SSSP_MO : XXL_PATHS_SSSP_DIJKSTRA;
	p->clustered = clustered;
	p->cluster_skipped = why_not;
}

/*
 * MR or MM for the BFS, Dijkstra or MO for the shortest paths.  AUTO takes
 * MR and Dijkstra: MM and MO read each cluster together instead of one
 * random page per node, but their clustering (a spanning forest at the
 * same budget) costs more than those reads where the OS caches the
 * adjacency file, as on every machine measured so far (docs/paths.md).
 * Both need room for the nested spanning forest; without it MR / Dijkstra
 * runs.
 */
static void
choose_external(xxl_paths *p)
{
	bool		asked = (p->op == XXL_PATHS_BFS && p->bfs_choice == XXL_PATHS_BFS_MM) ||
		(p->op == XXL_PATHS_SSSP && p->sssp_choice == XXL_PATHS_SSSP_MO);
	const char *refusal = asked && p->nlinks > 0 ? paths_cluster_refusal(p) : NULL;

	use_external(p, asked && p->nlinks > 0 && refusal == NULL, refusal);
}

xxl_status
paths_ext_run(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	uint64_t	t0 = xxl_now_ns();
	size_t		rest;

	p->path = XXL_PATHS_EXTERNAL;
	choose_external(p);
	if (p->clustered)
	{
		if (paths_cluster_build(p) != XXL_OK)
		{
			/*
			 * Too big for the nested spanning forest at this budget: the
			 * plain algorithms need less (the links are still there).
			 */
			if (env->err.code != XXL_ENOMEM)
				return env->err.code;
			xxl_error_clear(&env->err);
			xxl_pagefile_close(&p->tour);
			xxl_env_sort_close(env, &p->occ, NULL, NULL);
			use_external(p, false, "the spanning forest did not fit xxl.memory");
		}
		p->cluster_ns = xxl_now_ns() - t0;
	}
	if (paths_ext_build(p) != XXL_OK)
		return env->err.code;
	p->visited_bytes = ((p->n + 63) / 64 + 1) * 8;
	p->loaded_bytes = p->bfs_ran == XXL_PATHS_BFS_MM ? ((p->nclusters + 63) / 64 + 1) * 8 : 0;
	{
		/*
		 * One bit per node (and per cluster), the smallest caches, the
		 * settle log's and the path's pages, slack, and a queue (or the
		 * level sorters) of the smallest size.
		 */
		size_t		fixed = paths_ext_search_fixed(p, p->n, p->adj.page, p->idx.page, p->cidx.page);
		size_t		need = fixed + (p->clustered ? 4 : 2) * xxl_pq_min_memory(XXL_ALIGN);

		if (need > env->pool)
			return xxl_error_set(&env->err, XXL_ENOMEM, 0,
								 "the search over %llu nodes needs %zu kB of memory (one bit per "
								 "node, a queue and page caches), more than the %zu kB the "
								 "budget leaves it", (unsigned long long) p->n,
								 (need + (env->budget.limit - env->pool) + 1023) / 1024,
								 env->pool / 1024);
		p->visited = xxl_env_alloc(env, p->visited_bytes);
		p->loaded = p->visited && p->loaded_bytes ? xxl_env_alloc(env, p->loaded_bytes) : NULL;
		if (p->visited == NULL || (p->loaded_bytes && p->loaded == NULL))
			return env->err.code;
		memset(p->visited, 0, p->visited_bytes);
		if (p->loaded)
			memset(p->loaded, 0, p->loaded_bytes);
		rest = env->pool - fixed;
		/*
		 * The caches take 3/16: the queue or the level sorters want the
		 * rest.  MM reads clusters in order, one piece each: small caches;
		 * MO's adjacency cache is its hot pool: a quarter.
		 */
		if ((p->clustered ? xxl_pagefile_finish(&p->cidx, rest / 64) != XXL_OK ||
			 xxl_pagefile_finish(&p->adj, p->sssp_ran == XXL_PATHS_SSSP_MO ? rest / 4 : rest / 32) != XXL_OK :
			 xxl_pagefile_finish(&p->idx, rest / 16) != XXL_OK ||
			 xxl_pagefile_finish(&p->adj, rest / 8) != XXL_OK))
			return env->err.code;
		rest -= p->idx.cache_bytes + p->adj.cache_bytes + p->cidx.cache_bytes +
			(p->idx.nframes + p->adj.nframes + p->cidx.nframes) * 8;
		rest -= rest % XXL_ALIGN;
	}
	p->build_ns = xxl_now_ns() - t0;
	t0 = xxl_now_ns();
	if ((p->op == XXL_PATHS_SSSP ? (p->clustered ? paths_mo_sssp(p, rest) : dijkstra(p, rest)) :
		 p->clustered ? paths_mm_bfs(p, rest) : bfs(p, rest)) != XXL_OK)
		return env->err.code;
	p->cache_hits += p->adj.hits + p->idx.hits + p->cidx.hits;
	p->cache_misses += p->adj.misses + p->idx.misses + p->cidx.misses;
	xxl_pagefile_close(&p->adj);
	xxl_pagefile_close(&p->idx);
	xxl_pagefile_close(&p->cidx);
	if (p->has_target && collect_path(p) != XXL_OK)
		return env->err.code;
	p->search_ns = xxl_now_ns() - t0;
	if (xxl_spool_finish(&p->results) != XXL_OK)
		return env->err.code;
	return xxl_spool_reader_open(&p->rd, &p->results, true);
}

int
paths_ext_next(xxl_paths *p, int64_t *node, double *d, int64_t *pred, int64_t *edge)
{
	const unsigned char *r;

	if (p->out_pos >= p->reached)
		return 0;
	if (xxl_spool_read(&p->rd, RESULT_REC, &r) != XXL_OK)
		return -1;
	*node = (int64_t) g_get_u64(r);
	memcpy(d, r + 8, 8);
	*pred = (int64_t) g_get_u64(r + 16);
	*edge = (int64_t) g_get_u64(r + 24);
	p->out_pos++;
	return 1;
}

int
paths_ext_step(xxl_paths *p, int64_t *node, int64_t *edge, double *cost, double *agg)
{
	const unsigned char *r;
	uint64_t	i;

	if (p->out_pos >= p->nsteps)
		return 0;
	i = p->nsteps - 1 - p->out_pos;
	if (i > 0)
	{
		if (xxl_pagefile_get(&p->steps_file, i - 1, &r) != XXL_OK)
			return -1;
		*edge = (int64_t) g_get_u64(r + 8);
		memcpy(cost, r + 16, 8);
	}
	else
	{
		*edge = -1;
		*cost = 0;
	}
	if (xxl_pagefile_get(&p->steps_file, i, &r) != XXL_OK)
		return -1;
	*node = (int64_t) g_get_u64(r);
	memcpy(agg, r + 24, 8);
	p->out_pos++;
	return 1;
}

void
paths_ext_release(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	xxl_env_sorter *sorters[] = {&p->s1, &p->s2, &p->s3};
	size_t		ns = p->nsources ? p->nsources : 1;

	if (p->rd.sp)
		xxl_spool_reader_close(&p->rd);
	for (size_t i = 0; i < sizeof(sorters) / sizeof(sorters[0]); i++)
		xxl_env_sort_close(env, sorters[i], NULL, NULL);
	plevel_free(p, &p->lv[0]);
	plevel_free(p, &p->lv[1]);
	xxl_env_queue_close(env, &p->pq);
	xxl_pagefile_close(&p->adj);
	xxl_pagefile_close(&p->idx);
	xxl_pagefile_close(&p->log);
	xxl_pagefile_close(&p->steps_file);
	xxl_pagefile_close(&p->cidx);
	xxl_pagefile_close(&p->tour);
	xxl_env_sort_close(env, &p->occ, NULL, NULL);
	paths_mm_release(p);
	paths_mo_release(p);
	xxl_spool_free(&p->linkspool);
	xxl_spool_free(&p->results);
	if (p->visited)
		xxl_env_free(env, p->visited, p->visited_bytes);
	p->visited = NULL;
	if (p->src_dense)
		xxl_env_free(env, p->src_dense, 8 * ns);
	if (p->src_orig)
		xxl_env_free(env, p->src_orig, 8 * ns);
	if (p->src_cluster)
		xxl_env_free(env, p->src_cluster, 8 * ns);
	p->src_dense = NULL;
	p->src_orig = NULL;
	p->src_cluster = NULL;
}
