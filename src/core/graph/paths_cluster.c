/*
 * paths_cluster.c — the clusters of the MM BFS (Mehlhorn–Meyer, thesis
 * §4.5) and of Meyer–Osipov's shortest paths (digest-ledasm-sssp.md §2.4),
 * and whether they can be afforded: nodes that lie close together in a
 * spanning forest share a cluster, and the adjacency is stored cluster by
 * cluster, so that the search reads each cluster's arcs once, in one
 * sequential piece, instead of one random read per node.
 *
 *  1. Spanning forest of the links, by the graph operator (xxl_graph.h,
 *     XXL_GRAPH_SF) nested in this operator's budget: in memory when it
 *     fits, external otherwise.  Direction is ignored: the forest only
 *     groups nodes.
 *  2. Euler tour: tree edge k gives arcs 2k (s -> t) and 2k + 1 (t -> s);
 *     the successor of arc (u, v) is v's next arc after (v, u) in v's arc
 *     order (cyclic).  One sort of the arcs by tail finds every successor,
 *     a second by arc id writes them to a page file.
 *  3. The tour is walked (each tree's tour is one cycle) and cut into
 *     chunks of mu arcs; every arc's head is noted with its chunk.  This is
 *     the list ranking, done by following the successors through the page
 *     cache: 2(n - 1) page reads at worst, O(n) I/Os rather than the
 *     O(sort(n)) of pointer doubling, and sequential pages whenever the
 *     forest's edges came out in tour-friendly order.
 *  4. A node's cluster is the chunk of its first occurrence (the smallest
 *     chunk it appears in): the occurrences sorted by (id, chunk) are read
 *     by the numbering (paths_cluster_of), which sends each node's cluster
 *     along with its dense number.  Nodes in one cluster are at most mu
 *     tree edges apart, so a BFS meets them within mu levels of each other
 *     and their arcs stay in the hot pool at most that long.
 *
 * Record layouts:
 *   forest arcs  [tail key BE][arc BE][head id]       24, key 16
 *   successors   [arc BE][succ][head id]              24, key 8
 *   tour         [succ][head id]                      16 (pagefile)
 *   occurrences  [id key BE][chunk BE]                16, key 16
 */
#include "core/graph/paths_internal.h"

#include "core/graph/xxl_graph.h"

#define FOREST_REC 24
#define SUCC_REC 24
#define TOUR_REC 16
#define OCC_REC 16

/* Arcs of adjacency per cluster the chunks aim at: a few pages, one read. */
#define CLUSTER_TARGET_BYTES (4 * 1024)

uint64_t
paths_cluster_mu(const xxl_paths *p)
{
	/* before the numbering: the forest's nodes stand for the graph's */
	double		arcs = p->directed ? (double) p->nlinks : 2.0 * (double) p->nlinks;
	double		per_node = arcs / (double) (p->tree_edges + 1);
	double		nodes = (double) CLUSTER_TARGET_BYTES / PATHS_MM_ADJ_REC / (per_node > 1 ? per_node : 1);

	if (p->cluster_mu)
		return p->cluster_mu;
	/* a tour passes each node about twice */
	return nodes < 1 ? 2 : (uint64_t) (2 * nodes);
}

/* The nested graph operator's share of the budget, 0 when it cannot have one. */
static size_t
forest_share(const xxl_paths *p)
{
	size_t		share = paths_part_share(p, 2);

	if (share < xxl_graph_min_memory())
		share = XXL_ROUND_UP(xxl_graph_min_memory(), XXL_ALIGN);
	return share + paths_part_share(p, 4) <= p->env.pool ? share : 0;
}

/*
 * Why the clusters cannot be built or searched at this budget, or NULL.
 * MM's search must be able to sort a level of nearly every node and the
 * arcs of nearly every cluster at once (a graph of small diameter asks for
 * that), or MR should run instead.  Its budget is not known before the
 * build; 13/16 of the pool is what the caches leave at the least.
 */
const char *
paths_cluster_refusal(xxl_paths *p)
{
	if (forest_share(p) == 0)
		return "the budget cannot hold the spanning forest beside the rest";
	if (p->op == XXL_PATHS_BFS &&
		!paths_mm_fits(p, p->env.pool / 16 * 13, 2 * p->nlinks,
					   p->directed ? p->nlinks : 2 * p->nlinks))
		return "the MM search's sorts would not fit xxl.memory";
	return NULL;
}

static xxl_status
graph_failed(xxl_paths *p, xxl_graph *g, const xxl_error *e)
{
	return xxl_env_fail(&p->env, g ? xxl_graph_error(g) : e);
}

/* 1: the spanning forest of the links, its arcs into t1 by tail. */
static xxl_status
forest_arcs(xxl_paths *p, xxl_env_sorter *t1)
{
	xxl_env    *env = &p->env;
	size_t		share = forest_share(p);
	xxl_graph_config gc;
	xxl_graph  *g = NULL;
	xxl_error	gerr;
	xxl_spool_reader rd;
	const unsigned char *r;
	int64_t		id,
				s,
				t;
	double		c;
	int			got;
	uint64_t	k = 0;

	memset(&gc, 0, sizeof(gc));
	memset(&gerr, 0, sizeof(gerr));
	memset(&rd, 0, sizeof(rd));
	gc.res.memory = share;
	gc.res.threads = env->threads;
	gc.res.disk = env->disk;
	gc.res.disk.pool = NULL;	/* its own files, removed when it is destroyed */
	gc.res.disk.block_size = env->max_block;
	gc.res.cancel = env->host_cancel;
	gc.res.cancel_arg = env->host_cancel_arg;
	gc.expected_edges = p->nlinks;
	gc.seed = UINT64_C(0x9e3779b97f4a7c15);
	if (xxl_env_reserve(env, share, "spanning forest") != XXL_OK)
		return env->err.code;
	g = xxl_graph_create(&gc, XXL_GRAPH_SF, &gerr);
	if (g == NULL)
	{
		graph_failed(p, NULL, &gerr);
		goto out;
	}
	if (xxl_spool_finish(&p->linkspool) != XXL_OK ||
		xxl_spool_reader_open(&rd, &p->linkspool, false) != XXL_OK)
		goto out;
	for (uint64_t i = 0; i < p->nlinks; i++)
	{
		int64_t		u,
					v,
					eid;
		double		w;

		if (xxl_spool_read(&rd, IO_REC, &r) != XXL_OK)
			goto out;
		g_get_edge_rec(r, &u, &v, &eid, &w);
		if (u != v && xxl_graph_put_edge(g, u, v, (int64_t) i, 0.0) != XXL_OK)
		{
			graph_failed(p, g, NULL);
			goto out;
		}
		if (xxl_env_poll(env))
			goto out;
	}
	xxl_spool_reader_close(&rd);
	if (xxl_graph_run(g) != XXL_OK)
	{
		graph_failed(p, g, NULL);
		goto out;
	}
	if (xxl_env_sort_open(env, t1, paths_part_share(p, 4), 0, FOREST_REC, 16, 2 * p->n,
						  XXL_INPUT_UNBOUNDED) != XXL_OK)
		goto out;
	while ((got = xxl_graph_next_edge(g, &id, &s, &t, &c)) == 1)
	{
		unsigned char a[FOREST_REC];

		g_put_be(a, g_id_key(s));
		g_put_be(a + 8, 2 * k);
		g_put_u64(a + 16, (uint64_t) t);
		if (xxl_env_sort_put(env, t1, a) != XXL_OK)
			goto out;
		g_put_be(a, g_id_key(t));
		g_put_be(a + 8, 2 * k + 1);
		g_put_u64(a + 16, (uint64_t) s);
		if (xxl_env_sort_put(env, t1, a) != XXL_OK || xxl_env_poll(env))
			goto out;
		k++;
	}
	if (got < 0)
		graph_failed(p, g, NULL);
	else
	{
		xxl_graph_stats gs;

		xxl_graph_stats_get(g, &gs);
		p->sub_read += gs.bytes_read;
		p->sub_written += gs.bytes_written;
		p->sub_sorts += gs.sorts;
		p->forest_path = gs.path;
	}
out:
	if (rd.sp)
		xxl_spool_reader_close(&rd);
	xxl_graph_destroy(g);
	xxl_env_release(env, share);
	p->tree_edges = k;
	return env->err.code;
}

/* 2: each arc's successor in the tour, into the tour page file by arc. */
static xxl_status
tour_successors(xxl_paths *p, xxl_env_sorter *t1, xxl_env_sorter *t2)
{
	xxl_env    *env = &p->env;
	const unsigned char *r;
	uint64_t	tail = 0,
				first = 0,
				prev = 0,
				narcs = 2 * p->tree_edges;
	bool		open_group = false;
	int			got;

	if (xxl_env_sort_sort(env, t1) != XXL_OK ||
		xxl_env_sort_open(env, t2, paths_part_share(p, 4), 0, SUCC_REC, 8, narcs,
						  XXL_INPUT_UNBOUNDED) != XXL_OK)
		return env->err.code;
	for (;;)
	{
		unsigned char sr[SUCC_REC];
		uint64_t	key = 0,
					arc = 0;

		got = xxl_env_sort_next(env, t1, &r);
		if (got < 0)
			return env->err.code;
		if (got == 1)
		{
			key = g_get_be(r);
			arc = g_get_be(r + 8);
		}
		if (open_group && (got == 0 || key != tail))
		{
			/* the group's last arc wraps around to its first */
			g_put_be(sr, prev ^ 1);
			g_put_u64(sr + 8, first);
			g_put_u64(sr + 16, (uint64_t) g_key_id(tail));
			if (xxl_env_sort_put(env, t2, sr) != XXL_OK)
				return env->err.code;
			open_group = false;
		}
		if (got == 0)
			break;
		if (!open_group)
		{
			tail = key;
			first = arc;
			open_group = true;
		}
		else
		{
			/* the arc into this node over prev's edge continues with arc */
			g_put_be(sr, prev ^ 1);
			g_put_u64(sr + 8, arc);
			g_put_u64(sr + 16, (uint64_t) g_key_id(tail));
			if (xxl_env_sort_put(env, t2, sr) != XXL_OK)
				return env->err.code;
		}
		prev = arc;
		if (xxl_env_poll(env))
			return env->err.code;
	}
	xxl_env_sort_close(env, t1, NULL, NULL);
	if (xxl_env_sort_sort(env, t2) != XXL_OK ||
		xxl_pagefile_open(&p->tour, env, xxl_pagefile_page_for(env, 4096), TOUR_REC) != XXL_OK)
		return env->err.code;
	for (uint64_t i = 0; (got = xxl_env_sort_next(env, t2, &r)) == 1; i++)
	{
		if (g_get_be(r) != i)
			return xxl_error_set(&env->err, XXL_EIO, 0, "tour arc %llu has no successor",
								 (unsigned long long) i);
		if (xxl_pagefile_append(&p->tour, r + 8) != XXL_OK)
			return env->err.code;
	}
	if (got < 0)
		return env->err.code;
	xxl_env_sort_close(env, t2, NULL, NULL);
	return XXL_OK;
}

/* 3: walk each tree's tour, cutting it into chunks of mu arcs. */
static xxl_status
tour_walk(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	uint64_t	narcs = 2 * p->tree_edges,
				mu = paths_cluster_mu(p),
				chunk = 0;
	size_t		bits_bytes = ((narcs + 63) / 64 + 1) * 8;
	uint64_t   *seen;

	if (xxl_pagefile_finish(&p->tour, paths_part_share(p, 4)) != XXL_OK)
		return env->err.code;
	seen = xxl_env_alloc(env, bits_bytes);
	if (seen == NULL)
		return env->err.code;
	memset(seen, 0, bits_bytes);
	/* it stays open through the numbering (paths_ext_build.c: numbering_share) */
	if (xxl_env_sort_open(env, &p->occ, paths_part_share(p, 8), 0, OCC_REC, 16, narcs,
						  XXL_INPUT_UNBOUNDED) != XXL_OK)
		goto out;
	for (uint64_t start = 0; start < narcs; start++)
	{
		uint64_t	a = start,
					len = 0;

		if (bit_get(seen, start))
			continue;
		while (!bit_get(seen, a))
		{
			const unsigned char *r;
			unsigned char o[OCC_REC];

			bit_set(seen, a);
			if (xxl_pagefile_get(&p->tour, a, &r) != XXL_OK)
				goto out;
			g_put_be(o, g_id_key((int64_t) g_get_u64(r + 8)));
			g_put_be(o + 8, chunk);
			if (xxl_env_sort_put(env, &p->occ, o) != XXL_OK)
				goto out;
			a = g_get_u64(r);
			if (++len == mu)
			{
				chunk++;
				len = 0;
				if (xxl_env_poll(env))
					goto out;
			}
		}
		if (len > 0)
			chunk++;
	}
	p->nclusters = chunk;
	p->cache_hits += p->tour.hits;
	p->cache_misses += p->tour.misses;
	xxl_pagefile_close(&p->tour);
	xxl_env_sort_sort(env, &p->occ);
out:
	xxl_env_free(env, seen, bits_bytes);
	return env->err.code;
}

xxl_status
paths_cluster_build(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	xxl_env_sorter t1,
				t2;
	xxl_status	rc;

	uint64_t	t0 = xxl_now_ns();

	memset(&t1, 0, sizeof(t1));
	memset(&t2, 0, sizeof(t2));
	rc = forest_arcs(p, &t1);
	p->forest_ns = xxl_now_ns() - t0;
	if (rc == XXL_OK)
		rc = tour_successors(p, &t1, &t2);
	xxl_env_sort_close(env, &t1, NULL, NULL);
	xxl_env_sort_close(env, &t2, NULL, NULL);
	if (rc == XXL_OK)
		rc = tour_walk(p);
	p->occ_valid = false;
	p->occ_started = false;
	return rc;
}

/*
 * The cluster of id, asked for every distinct id in ascending order (by the
 * numbering); PATHS_NO_CLUSTER for a node in no tree (no link but loops).
 */
xxl_status
paths_cluster_of(xxl_paths *p, int64_t id, uint64_t *cluster)
{
	uint64_t	key = g_id_key(id);

	*cluster = PATHS_NO_CLUSTER;
	for (;;)
	{
		if (!p->occ_valid)
		{
			const unsigned char *r;
			int			got;

			if (p->occ_started && p->occ_done)
				return XXL_OK;
			p->occ_started = true;
			got = xxl_env_sort_next(&p->env, &p->occ, &r);
			if (got < 0)
				return p->env.err.code;
			if (got == 0)
			{
				p->occ_done = true;
				return XXL_OK;
			}
			p->occ_key = g_get_be(r);
			p->occ_chunk = g_get_be(r + 8);
			p->occ_valid = true;
		}
		if (p->occ_key > key)
			return XXL_OK;
		if (p->occ_key == key && *cluster == PATHS_NO_CLUSTER)
			*cluster = p->occ_chunk;	/* the first: the smallest chunk */
		p->occ_valid = false;
	}
}
