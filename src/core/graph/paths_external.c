/*
 * paths_external.c — the external path of BFS / shortest paths
 * (xxl_paths.h): ids numbered by two sorts, the adjacency lists written to
 * disk in node order with an index, and the searches over them with one bit
 * per node in memory: Dijkstra on the external priority queue (no
 * decrease-key: a push per relaxation, stale entries dropped by the bit)
 * and Munagala-Ranade BFS (each level sorted by node, so its adjacency
 * lists are read in disk order).  Record layouts: paths_internal.h.
 */
#include "core/graph/paths_internal.h"

#include <math.h>
#include <stdlib.h>

#define LINK_REC IO_REC
#define ARC_REC 40
#define MM_ARC_REC 56
#define ADJ_REC 32
#define PQ_REC 56
#define LEVEL_REC 32
#define RESULT_REC 32
#define LOG_REC 48
#define STEP_REC 32

/* Input -------------------------------------------------------------------- */

xxl_status
paths_ext_add(xxl_paths *p, int64_t u, int64_t v, int64_t eid, double w)
{
	unsigned char r[LINK_REC];

	g_put_edge_rec(r, u, v, eid, w);
	p->id_min = u < p->id_min ? u : p->id_min;
	p->id_min = v < p->id_min ? v : p->id_min;
	p->id_max = u > p->id_max ? u : p->id_max;
	p->id_max = v > p->id_max ? v : p->id_max;
	if (xxl_spool_write(&p->linkspool, r, LINK_REC) != XXL_OK)
		return p->env.err.code;
	p->nlinks++;
	return XXL_OK;
}

/* Move what the in-memory or semi-external path holds to the links spool. */
xxl_status
paths_ext_begin(xxl_paths *p)
{
	uint64_t	links = p->nlinks;

	p->external = true;
	p->id_min = INT64_MAX;
	p->id_max = INT64_MIN;
	if (p->semi)
	{
		/* it counts the links it hands over */
		if (paths_semi_hand_over(p) != XXL_OK)
			return p->env.err.code;
		links = 0;
	}
	else
		p->nlinks = 0;
	for (uint64_t i = 0; i < links; i++)
	{
		const plink_ends *e = pvec_at(&p->lends, i);
		const plink_cost *c = pvec_at(&p->lcost, i);

		if (paths_ext_add(p, idmap_id(&p->map, e->u), idmap_id(&p->map, e->v), c->eid,
						  c->w) != XXL_OK)
			return p->env.err.code;
	}
	paths_mem_release(p);
	p->n = 0;
	return XXL_OK;
}

/* Numbering and adjacency ---------------------------------------------------- */

/*
 * The numbering's two sorters' share: half the pool each (one fills as the
 * other drains), less with clusters, whose occurrences are read alongside.
 */
static size_t
numbering_share(const xxl_paths *p)
{
	size_t		h = p->clustered ? p->env.pool / 8 * 3 : p->env.pool / 2;

	return h - h % XXL_ALIGN;
}

/* S1: every endpoint with its link and side. */
static xxl_status
fill_endpoints(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	xxl_spool_reader rd;
	const unsigned char *r;

	if (xxl_spool_finish(&p->linkspool) != XXL_OK ||
		xxl_env_sort_open(env, &p->s1, numbering_share(p), 0, 16, 8, 2 * p->nlinks,
						  XXL_INPUT_UNBOUNDED) != XXL_OK ||
		xxl_spool_reader_open(&rd, &p->linkspool, false) != XXL_OK)
		return env->err.code;
	for (uint64_t i = 0; i < p->nlinks; i++)
		if (xxl_spool_read(&rd, LINK_REC, &r) != XXL_OK ||
			graph_put_endpoints(env, &p->s1, i, (int64_t) g_get_u64(r),
								(int64_t) g_get_u64(r + 8)) != XXL_OK ||
			xxl_env_poll(env))
			break;
	xxl_spool_reader_close(&rd);
	return env->err.code;
}

/* Each distinct id in order: note the sources' and the target's numbers. */
static xxl_status
find_sources(void *arg, int64_t id, uint64_t dense, uint64_t *cluster)
{
	xxl_paths  *p = arg;

	if (p->clustered && paths_cluster_of(p, id, cluster) != XXL_OK)
		return p->env.err.code;

	/* the sources are sorted and so are the ids: one merge */
	while (p->src_next < p->nsources && p->sources[p->src_next] < id)
		p->src_next++;
	if (p->src_next < p->nsources && p->sources[p->src_next] == id)
	{
		p->src_cluster[p->nsrc_dense] = *cluster;
		p->src_dense[p->nsrc_dense] = dense;
		p->src_orig[p->nsrc_dense++] = id;
	}
	if (p->has_target && id == p->target)
		p->target_dense = dense;
	return XXL_OK;
}

/* The sources found (dense number, id, cluster) and no target yet. */
static xxl_status
alloc_found_sources(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	size_t		ns = 8 * (p->nsources ? p->nsources : 1);

	p->src_dense = xxl_env_alloc(env, ns);
	p->src_orig = p->src_dense ? xxl_env_alloc(env, ns) : NULL;
	p->src_cluster = p->src_orig ? xxl_env_alloc(env, ns) : NULL;
	p->target_dense = UINT64_MAX;
	return p->src_cluster ? XXL_OK : env->err.code;
}

/* Number the distinct ids (S1 -> S2), finding the sources and the target. */
static xxl_status
number_ids(xxl_paths *p)
{
	xxl_env    *env = &p->env;

	if (alloc_found_sources(p) != XXL_OK)
		return env->err.code;
	if (graph_number_ids(env, &p->s1, &p->s2, numbering_share(p), 2 * p->nlinks, find_sources,
						 p, p->clustered, &p->n) != XXL_OK)
		return env->err.code;
	xxl_env_sort_close(env, &p->occ, NULL, NULL);
	return XXL_OK;
}

/* S2 + links -> S3: the arcs with dense ends, by tail. */
static xxl_status
fill_arcs(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	xxl_spool_reader rd;
	const unsigned char *l;
	unsigned char a[MM_ARC_REC];
	bool		mm = p->clustered;

	if (xxl_env_sort_open(env, &p->s3, paths_part_share(p, 2), 0, mm ? MM_ARC_REC : ARC_REC,
						  mm ? 16 : 8,
						  p->directed ? p->nlinks : 2 * p->nlinks, XXL_INPUT_UNBOUNDED) != XXL_OK ||
		xxl_spool_reader_open(&rd, &p->linkspool, false) != XXL_OK)
		return env->err.code;
	for (uint64_t i = 0; i < p->nlinks; i++)
	{
		uint64_t	e,
					d[2],
					cl[2];

		if (graph_next_dense_pair(env, &p->s2, &e, &d[0], &d[1], mm ? cl : NULL) != 1 || e != i)
		{
			if (env->err.code == XXL_OK)
				xxl_error_set(&env->err, XXL_EIO, 0, "link %llu lost while numbering",
							  (unsigned long long) i);
			goto out;
		}
		if (xxl_spool_read(&rd, LINK_REC, &l) != XXL_OK)
			goto out;
		for (int dir = 0; dir < (p->directed ? 1 : 2); dir++)
		{
			unsigned char *t = a;

			if (mm)
			{
				g_put_be(a, cl[dir]);
				g_put_be(a + 8, d[dir]);
				g_put_u64(a + 16, d[1 - dir]);
				g_put_u64(a + 24, cl[1 - dir]);
				t = a + 32;
			}
			else
			{
				g_put_be(a, d[dir]);
				g_put_u64(a + 8, d[1 - dir]);
				t = a + 16;
			}
			memcpy(t, l + 8 * (1 - dir), 8);
			memcpy(t + 8, l + 16, 16);
			if (xxl_env_sort_put(env, &p->s3, a) != XXL_OK)
				goto out;
		}
		if (xxl_env_poll(env))
			goto out;
	}
out:
	xxl_spool_reader_close(&rd);
	if (env->err.code != XXL_OK)
		return env->err.code;
	xxl_env_sort_close(env, &p->s2, NULL, NULL);
	xxl_spool_free(&p->linkspool);
	p->narcs = p->directed ? p->nlinks : 2 * p->nlinks;
	return xxl_env_sort_sort(env, &p->s3);
}

/* S1, S2 and S3: the ids numbered by two sorts, then the arcs by tail. */
static xxl_status
fill_numbered_arcs(xxl_paths *p)
{
	if (fill_endpoints(p) != XXL_OK || number_ids(p) != XXL_OK)
		return p->env.err.code;
	return fill_arcs(p);
}

/*
 * What the search holds besides its queue or level sorters: one bit per
 * node (and per cluster), the smallest caches of the adjacency, its index
 * and the clusters' (pages of these sizes), the settle log's and the
 * path's pages, slack.
 */
static size_t
search_fixed(const xxl_paths *p, uint64_t n, size_t adj_page, size_t idx_page, size_t cidx_page)
{
	size_t		loaded = p->bfs_ran == XXL_PATHS_BFS_MM ? ((p->nclusters + 63) / 64 + 1) * 8 : 0;

	return ((n + 63) / 64 + 1) * 8 + loaded + 2 * (adj_page + idx_page + cidx_page + 24) +
		4 * xxl_pagefile_page_for(&p->env, 16384) + xxl_env_slack(&p->env);
}

/*
 * Whether the links' ids may be their nodes' numbers (less the smallest):
 * when they span at most two per link, as the ids of a graph numbered
 * 1..n whose nodes all have an edge do, the range costs at most what
 * numbering them would save, and the two numbering sorts are skipped.
 * The clustered searches number their nodes along the tour: not by id.
 */
static bool
ids_by_id(const xxl_paths *p)
{
	uint64_t	span;
	size_t		page;

	if (p->clustered || p->nlinks == 0)
		return false;
	span = (uint64_t) p->id_max - (uint64_t) p->id_min;
	if (span / 2 >= p->nlinks)
		return false;
	/* and the search over the whole range fits, as over the distinct ids it must */
	page = xxl_pagefile_page_for(&p->env, 4096);
	return search_fixed(p, span + 1, page, page, 0) +
		2 * xxl_pq_min_memory(XXL_ALIGN) <= p->env.pool;
}

/*
 * One source's or the target's id seen in a link: note it (sources are
 * sorted; a source in no link is no node).
 */
static inline void
see_id(xxl_paths *p, int64_t id, bool *found)
{
	if (p->nsources > 0 && id >= p->sources[0] && id <= p->sources[p->nsources - 1])
	{
		const int64_t *s = bsearch(&id, p->sources, p->nsources, sizeof(int64_t), paths_cmp_id);

		if (s != NULL)
			found[s - p->sources] = true;
	}
	if (p->has_target && id == p->target)
		p->target_dense = (uint64_t) id - (uint64_t) p->id_min;
}

/*
 * By id an arc needs no head id (it is the head's number + id_min), and a
 * BFS's no cost: (tail, head, edge id[, cost]).
 */
static size_t
arc_by_id_rec(const xxl_paths *p)
{
	return p->op == XXL_PATHS_BFS ? 24 : 32;
}

/* By id: links -> S3, the arcs with their ends' numbers, by tail. */
static xxl_status
fill_arcs_by_id(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	size_t		ns = p->nsources ? p->nsources : 1;
	xxl_spool_reader rd;
	const unsigned char *l;
	unsigned char a[ARC_REC];
	size_t		rec = arc_by_id_rec(p);
	bool	   *found;

	p->by_id = true;
	p->n = (uint64_t) p->id_max - (uint64_t) p->id_min + 1;
	if (alloc_found_sources(p) != XXL_OK || (found = xxl_env_alloc(env, ns)) == NULL)
		return env->err.code;
	memset(found, 0, ns);
	if (xxl_spool_finish(&p->linkspool) != XXL_OK ||
		xxl_env_sort_open(env, &p->s3, paths_part_share(p, 4) * 3, 0, rec, 8,
						  p->directed ? p->nlinks : 2 * p->nlinks, XXL_INPUT_UNBOUNDED) != XXL_OK ||
		xxl_spool_reader_open(&rd, &p->linkspool, false) != XXL_OK)
		return env->err.code;
	for (uint64_t i = 0; i < p->nlinks; i++)
	{
		uint64_t	d[2];

		if (xxl_spool_read(&rd, LINK_REC, &l) != XXL_OK)
			break;
		for (int side = 0; side < 2; side++)
		{
			int64_t		id = (int64_t) g_get_u64(l + 8 * side);

			see_id(p, id, found);
			d[side] = (uint64_t) id - (uint64_t) p->id_min;
		}
		for (int dir = 0; dir < (p->directed ? 1 : 2); dir++)
		{
			g_put_be(a, d[dir]);
			g_put_u64(a + 8, d[1 - dir]);
			memcpy(a + 16, l + 16, rec - 16);	/* edge id (and cost) */
			if (xxl_env_sort_put(env, &p->s3, a) != XXL_OK)
				break;
		}
		if (env->err.code != XXL_OK || xxl_env_poll(env))
			break;
	}
	xxl_spool_reader_close(&rd);
	if (env->err.code != XXL_OK)
		return env->err.code;
	for (size_t i = 0; i < p->nsources; i++)
		if (found[i])
		{
			p->src_dense[p->nsrc_dense] = (uint64_t) p->sources[i] - (uint64_t) p->id_min;
			p->src_orig[p->nsrc_dense] = p->sources[i];
			p->src_cluster[p->nsrc_dense++] = 0;
		}
	xxl_env_free(env, found, ns);
	xxl_spool_free(&p->linkspool);
	p->narcs = p->directed ? p->nlinks : 2 * p->nlinks;
	return xxl_env_sort_sort(env, &p->s3);
}

/* S3 -> the adjacency pagefile and its index of n + 1 offsets. */
static xxl_status
write_adjacency(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	const unsigned char *r;
	uint64_t	arc = 0,
				node = 0;
	int			got;
	/* by id, the cost the sorted arcs carry (none for BFS) */
	size_t		cost_bytes = p->by_id ? arc_by_id_rec(p) - 24 : 0;
	unsigned char whole[ADJ_REC] = {0};

	if (xxl_pagefile_open(&p->adj, env, xxl_pagefile_page_for(env, 4096), ADJ_REC) != XXL_OK ||
		xxl_pagefile_open(&p->idx, env, xxl_pagefile_page_for(env, 4096), 8) != XXL_OK)
		return env->err.code;
	while ((got = xxl_env_sort_next(env, &p->s3, &r)) == 1)
	{
		uint64_t	from = g_get_be(r);
		const unsigned char *rec = r + 8;

		for (; node <= from; node++)
			if (xxl_pagefile_append(&p->idx, &arc) != XXL_OK)
				return env->err.code;
		if (p->by_id)
		{
			/* (head, head's id, edge id, cost) from (head, edge id[, cost]) */
			memcpy(whole, r + 8, 8);
			g_put_u64(whole + 8, g_get_u64(r + 8) + (uint64_t) p->id_min);
			memcpy(whole + 16, r + 16, 8 + cost_bytes);
			rec = whole;
		}
		if (xxl_pagefile_append(&p->adj, rec) != XXL_OK || xxl_env_poll(env))
			return env->err.code;
		arc++;
	}
	if (got < 0)
		return env->err.code;
	for (; node <= p->n; node++)
		if (xxl_pagefile_append(&p->idx, &arc) != XXL_OK)
			return env->err.code;
	xxl_env_sort_close(env, &p->s3, NULL, NULL);
	return XXL_OK;
}

/*
 * With clusters: S3 -> the adjacency page file cluster by cluster and the
 * index of nclusters + 1 first arcs.  The loops of nodes in no cluster come
 * last and are left out: no search reads them, and they lead nowhere.
 */
static xxl_status
write_cluster_adjacency(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	const unsigned char *r;
	uint64_t	arc = 0,
				cluster = 0;
	int			got;

	if (xxl_pagefile_open(&p->adj, env, xxl_pagefile_page_for(env, 4096), PATHS_MM_ADJ_REC) != XXL_OK ||
		xxl_pagefile_open(&p->cidx, env, xxl_pagefile_page_for(env, 4096), 8) != XXL_OK)
		return env->err.code;
	while ((got = xxl_env_sort_next(env, &p->s3, &r)) == 1)
	{
		uint64_t	c = g_get_be(r);
		unsigned char rec[PATHS_MM_ADJ_REC];

		if (c >= p->nclusters)
			break;
		if (cluster <= c)
			p->clusters_used++;
		for (; cluster <= c; cluster++)
			if (xxl_pagefile_append(&p->cidx, &arc) != XXL_OK)
				return env->err.code;
		g_put_u64(rec, g_get_be(r + 8));
		memcpy(rec + 8, r + 16, PATHS_MM_ADJ_REC - 8);
		if (xxl_pagefile_append(&p->adj, rec) != XXL_OK || xxl_env_poll(env))
			return env->err.code;
		arc++;
	}
	if (got < 0)
		return env->err.code;
	for (; cluster <= p->nclusters; cluster++)
		if (xxl_pagefile_append(&p->cidx, &arc) != XXL_OK)
			return env->err.code;
	xxl_env_sort_close(env, &p->s3, NULL, NULL);
	return XXL_OK;
}

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
			to = g_get_u64(r);
			if (bit_get(p->visited, to))
				continue;
			memcpy(&w, r + 24, 8);
			if (push_entry(p, d + w, to, (int64_t) g_get_u64(r + 8), x, orig,
						   (int64_t) g_get_u64(r + 16), w) != XXL_OK)
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

static xxl_status
level_put(xxl_paths *p, plevel *s, uint64_t node, int64_t orig, int64_t pred_orig,
		  int64_t edge)
{
	unsigned char r[LEVEL_REC];

	g_put_be(r, node);
	g_put_u64(r + 8, (uint64_t) orig);
	g_put_u64(r + 16, (uint64_t) pred_orig);
	g_put_u64(r + 24, (uint64_t) edge);
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
	return level_put(p, level, p->src_dense[i], p->src_orig[i], p->src_orig[i], -1);
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
				to = g_get_u64(ar);
				if (bit_get(p->visited, to))
					continue;
				bit_set(p->visited, to);
				p->pushes++;
				if (paths_ext_emit(p, (int64_t) g_get_u64(ar + 8), (double) (depth + 1), orig,
						 (int64_t) g_get_u64(ar + 16)) != XXL_OK ||
					level_put(p, next, to, (int64_t) g_get_u64(ar + 8), orig,
							  (int64_t) g_get_u64(ar + 16)) != XXL_OK)
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
	if ((ids_by_id(p) ? fill_arcs_by_id(p) : fill_numbered_arcs(p)) != XXL_OK ||
		(p->clustered ? write_cluster_adjacency(p) : write_adjacency(p)) != XXL_OK)
		return env->err.code;
	p->visited_bytes = ((p->n + 63) / 64 + 1) * 8;
	p->loaded_bytes = p->bfs_ran == XXL_PATHS_BFS_MM ? ((p->nclusters + 63) / 64 + 1) * 8 : 0;
	{
		/*
		 * One bit per node (and per cluster), the smallest caches, the
		 * settle log's and the path's pages, slack, and a queue (or the
		 * level sorters) of the smallest size.
		 */
		size_t		fixed = search_fixed(p, p->n, p->adj.page, p->idx.page, p->cidx.page);
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
