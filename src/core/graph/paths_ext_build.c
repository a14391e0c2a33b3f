/*
 * paths_ext_build.c — the external path of BFS / shortest paths
 * (xxl_paths.h) up to its search: the links spooled, their ids numbered by
 * two sorts or taken as their numbers, the arcs sorted by tail, and the
 * adjacency lists written to disk in node order with an index (in the
 * clusters' order for the clustered searches).  Record layouts:
 * paths_internal.h.
 */
#include "core/graph/paths_internal.h"

#include <stdlib.h>

#define LINK_REC IO_REC
#define ARC_REC 40
#define MM_ARC_REC 56

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
						  XXL_INPUT_BOUNDED) != XXL_OK ||
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
						  p->directed ? p->nlinks : 2 * p->nlinks, XXL_INPUT_BOUNDED) != XXL_OK ||
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
size_t
paths_ext_search_fixed(const xxl_paths *p, uint64_t n, size_t adj_page, size_t idx_page, size_t cidx_page)
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
	return paths_ext_search_fixed(p, span + 1, page, page, 0) +
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
 * BFS's no cost: (tail, head, edge id[, cost]); with fewer than 2^32
 * nodes, tail and head of 4 bytes (the tail a 4-byte key).
 */
static size_t
arc_by_id_rec(const xxl_paths *p)
{
	return (p->narrow_arcs ? 8 : 16) + 8 + (p->op == XXL_PATHS_BFS ? 0 : 8);
}

static size_t
arc_by_id_key(const xxl_paths *p)
{
	return p->narrow_arcs ? 4 : 8;
}

/* An arc by id: its tail, head and the rest (edge id[, cost]) from a sorted record. */
static inline const unsigned char *
arc_by_id_get(const xxl_paths *p, const unsigned char *r, uint64_t *tail, uint64_t *head)
{
	uint32_t	v;

	if (!p->narrow_arcs)
	{
		*tail = g_get_be(r);
		*head = g_get_u64(r + 8);
		return r + 16;
	}
	memcpy(&v, r, 4);
	*tail = __builtin_bswap32(v);
	memcpy(&v, r + 4, 4);
	*head = v;
	return r + 8;
}

static inline void
arc_by_id_put(const xxl_paths *p, unsigned char *a, uint64_t tail, uint64_t head,
			  const unsigned char *rest)
{
	size_t		ends = p->narrow_arcs ? 8 : 16;

	if (p->narrow_arcs)
	{
		uint32_t	t = __builtin_bswap32((uint32_t) tail),
					h = (uint32_t) head;

		memcpy(a, &t, 4);
		memcpy(a + 4, &h, 4);
	}
	else
	{
		g_put_be(a, tail);
		g_put_u64(a + 8, head);
	}
	memcpy(a + ends, rest, arc_by_id_rec(p) - ends);
}

/* The adjacency being written: the arcs so far and the nodes indexed. */
typedef struct adj_writer
{
	uint64_t	arc,
				node;
} adj_writer;

static xxl_status
adj_open(xxl_paths *p, adj_writer *w)
{
	xxl_env    *env = &p->env;

	w->arc = w->node = 0;
	if (xxl_pagefile_open(&p->adj, env, xxl_pagefile_page_for(env, 4096),
						  paths_adj_rec(p->by_id, p->op == XXL_PATHS_BFS)) != XXL_OK ||
		xxl_pagefile_open(&p->idx, env, xxl_pagefile_page_for(env, 4096), 8) != XXL_OK)
		return env->err.code;
	return XXL_OK;
}

/* S3's arcs (sorted by tail, after those appended before) appended; S3 closed. */
static xxl_status
adj_append(xxl_paths *p, adj_writer *w)
{
	xxl_env    *env = &p->env;
	const unsigned char *r;
	int			got;
	size_t		adj_rec = paths_adj_rec(p->by_id, p->op == XXL_PATHS_BFS);
	unsigned char whole[PATHS_ADJ_REC];

	while ((got = xxl_env_sort_next(env, &p->s3, &r)) == 1)
	{
		uint64_t	from;
		const unsigned char *rec = r + 8;

		if (p->by_id)
		{
			uint64_t	head;

			/* (head, edge id[, cost]) as the arcs were sorted, the head widened */
			memcpy(whole + 8, arc_by_id_get(p, r, &from, &head), adj_rec - 8);
			g_put_u64(whole, head);
			rec = whole;
		}
		else
			from = g_get_be(r);
		for (; w->node <= from; w->node++)
			if (xxl_pagefile_append(&p->idx, &w->arc) != XXL_OK)
				return env->err.code;
		if (xxl_pagefile_append(&p->adj, rec) != XXL_OK || xxl_env_poll(env))
			return env->err.code;
		w->arc++;
	}
	if (got < 0)
		return env->err.code;
	xxl_env_sort_close(env, &p->s3, NULL, NULL);
	return XXL_OK;
}

/* The index's last entries: n + 1 offsets in all. */
static xxl_status
adj_close(xxl_paths *p, adj_writer *w)
{
	for (; w->node <= p->n; w->node++)
		if (xxl_pagefile_append(&p->idx, &w->arc) != XXL_OK)
			return p->env.err.code;
	return XXL_OK;
}

/* S3 -> the adjacency pagefile and its index of n + 1 offsets. */
static xxl_status
write_adjacency(xxl_paths *p)
{
	adj_writer	w;

	if (adj_open(p, &w) != XXL_OK || adj_append(p, &w) != XXL_OK)
		return p->env.err.code;
	return adj_close(p, &w);
}

/*
 * By id, the arcs go to the adjacency in ranges of tails when a
 * distribution sort cannot take them all but can take a range (a sort of
 * all of them would merge); at most this many ranges, each a pass over the
 * links.
 */
#define ARC_RANGES_MAX 4

/* How many ranges of tails the arcs by id are sorted in: 1, or where a range fits a distribution sort. */
static unsigned
arc_ranges(xxl_paths *p, size_t share, uint64_t narcs)
{
	size_t		rec = arc_by_id_rec(p),
				key = arc_by_id_key(p);

	if (xxl_env_sort_distributes(&p->env, share, 0, rec, key, narcs))
		return 1;
	/* (a range of a skewed graph may hold more than its share: half again as many allowed) */
	for (unsigned r = 2; r <= ARC_RANGES_MAX; r *= 2)
		if (xxl_env_sort_distributes(&p->env, share, 0, rec, key, narcs / r + narcs / (2 * r) + 1))
			return r;
	return 1;
}

/*
 * One pass over the links by id, range r of the tails being [bound[r],
 * bound[r + 1]): every id seen (into found, if given), and with counts each
 * arc counted in its range's, else each arc of the range `range` into S3.
 * (Compared with the bounds, not divided: this runs per arc, per pass.)
 */
static xxl_status
arcs_by_id_pass(xxl_paths *p, bool *found, const uint64_t *bound, unsigned ranges, unsigned range,
				uint64_t *counts)
{
	xxl_env    *env = &p->env;
	xxl_spool_reader rd;
	const unsigned char *l;
	unsigned char a[ARC_REC];

	if (xxl_spool_reader_open(&rd, &p->linkspool, false) != XXL_OK)
		return env->err.code;
	for (uint64_t i = 0; i < p->nlinks; i++)
	{
		uint64_t	d[2];

		if (xxl_spool_read(&rd, LINK_REC, &l) != XXL_OK)
			break;
		for (int side = 0; side < 2; side++)
		{
			int64_t		id = (int64_t) g_get_u64(l + 8 * side);

			if (found)
				see_id(p, id, found);
			d[side] = (uint64_t) id - (uint64_t) p->id_min;
		}
		for (int dir = 0; dir < (p->directed ? 1 : 2); dir++)
		{
			uint64_t	tail = d[dir];

			if (counts)
			{
				unsigned	r = 0;

				for (unsigned k = 1; k < ranges; k++)
					r += tail >= bound[k];
				counts[r]++;
			}
			else if (tail >= bound[range] && tail < bound[range + 1])
			{
				/* with the edge id (and cost) */
				arc_by_id_put(p, a, d[dir], d[1 - dir], l + 16);
				if (xxl_env_sort_put(env, &p->s3, a) != XXL_OK)
					break;
			}
		}
		if (env->err.code != XXL_OK || ((i & 4095) == 0 && xxl_env_poll(env)))
			break;
	}
	xxl_spool_reader_close(&rd);
	return env->err.code;
}

/*
 * By id: links -> the adjacency, the arcs with their ends' numbers sorted
 * by tail (in ranges of tails, each with its own sort, if a distribution
 * sort then takes them where it would not take them all).
 */
static xxl_status
fill_arcs_by_id(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	size_t		ns = p->nsources ? p->nsources : 1;
	size_t		share = paths_part_share(p, 4) * 3;
	uint64_t	counts[ARC_RANGES_MAX] = {0},
				bound[ARC_RANGES_MAX + 1];
	unsigned	ranges;
	adj_writer	w;
	bool	   *found;

	p->by_id = true;
	p->n = (uint64_t) p->id_max - (uint64_t) p->id_min + 1;
	p->narrow_arcs = p->n <= UINT32_MAX;
	p->narcs = p->directed ? p->nlinks : 2 * p->nlinks;
	if (alloc_found_sources(p) != XXL_OK || (found = xxl_env_alloc(env, ns)) == NULL)
		return env->err.code;
	memset(found, 0, ns);
	p->arc_ranges = ranges = arc_ranges(p, share, p->narcs);
	for (unsigned r = 0; r <= ranges; r++)
		bound[r] = r == ranges ? p->n : (p->n + ranges - 1) / ranges * r;
	counts[0] = p->narcs;
	if (xxl_spool_finish(&p->linkspool) != XXL_OK ||
		(ranges > 1 && arcs_by_id_pass(p, found, bound, ranges, 0, counts) != XXL_OK) ||
		adj_open(p, &w) != XXL_OK)
		return env->err.code;
	for (unsigned r = 0; r < ranges; r++)
	{
		if (counts[r] == 0)
			continue;
		if (xxl_env_sort_open(env, &p->s3, share, 0, arc_by_id_rec(p), arc_by_id_key(p), counts[r],
							  XXL_INPUT_BOUNDED) != XXL_OK ||
			arcs_by_id_pass(p, ranges == 1 ? found : NULL, bound, ranges, r, NULL) != XXL_OK ||
			xxl_env_sort_sort(env, &p->s3) != XXL_OK ||
			adj_append(p, &w) != XXL_OK)
			return env->err.code;
	}
	if (adj_close(p, &w) != XXL_OK)
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

/*
 * The links as adjacency lists on disk with their index: the arcs by tail,
 * their ids taken as numbers or numbered by sorts, in the clusters' order
 * for the clustered searches.
 */
xxl_status
paths_ext_build(xxl_paths *p)
{
	if (ids_by_id(p))
		return fill_arcs_by_id(p);
	if (fill_numbered_arcs(p) != XXL_OK ||
		(p->clustered ? write_cluster_adjacency(p) : write_adjacency(p)) != XXL_OK)
		return p->env.err.code;
	return XXL_OK;
}
