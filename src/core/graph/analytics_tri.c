/*
 * analytics_tri.c — triangles by the I/O-efficient node iterator (thesis
 * §4.6, [SW05]; xxl_analytics.h): listing, counting and the count at each
 * node.
 *
 * Passes (record layouts: analytics_internal.h):
 *  1. S in node order: a node's neighbours are gathered (in memory, or in a
 *     spool for a node with more than a spool's share of them), then its
 *     degree is known: (node, degree) to the degree spool, and for each
 *     neighbour v the record (v, node, degree) to the sorter T.
 *  2. T in node order: a node v's neighbours u with their degrees, and v's
 *     degree from the degree spool read alongside.  Each edge is oriented
 *     from the lower (degree, id) to the higher; v's out-neighbours (at most
 *     sqrt(2m) of them) are held, and every pair u < w of them is the query
 *     (u, w, v) to the sorter Q.  Edges with v < u go to the edge spool, in
 *     (v, u) order.
 *  3. Q in (u, w) order merged with the edge spool: a query whose pair is
 *     an edge is a triangle.  Counting adds them up; listing hands them out
 *     as they are found; the count at each node puts (node, count) records
 *     into the sorter C (the merge's first node's count is summed as it
 *     goes), and the output merges C with the degree spool so that every
 *     node has a row.
 * No queries while the out-lists fit in a few chunks: pass 2 writes them
 * to the edge spool, and analytics_tri_chunked.c finds their shared
 * entries instead of pass 3.
 */
#include "core/graph/analytics_internal.h"

#include <stdlib.h>

/* Neighbours held in memory before a node's list moves to a spool. */
static size_t
group_cap(const xxl_an *a)
{
	size_t		c = an_spool_share(a) / 4 / sizeof(uint64_t);

	return c < 512 ? 512 : c;
}

static xxl_status
put_t(xxl_an *a, uint64_t vkey, uint64_t ukey, uint64_t deg)
{
	unsigned char local[24];
	unsigned char *r = xxl_env_sort_room(&a->t, local);

	g_put_be(r, vkey);
	g_put_be(r + 8, ukey);
	g_put_u64(r + 16, deg);
	return xxl_env_sort_push(&a->env, &a->t, r);
}

static void
release_hub(xxl_an *a)
{
	if (a->rd_hub_open)
		xxl_spool_reader_close(&a->rd_hub);
	if (a->hub_live)
		xxl_spool_free(&a->hub);
	a->rd_hub_open = a->hub_live = false;
}

/* Pass 1: degrees, and each neighbour told the node's degree. */
static xxl_status
degree_pass(xxl_an *a)
{
	size_t		cap = group_cap(a);

	a->group_bytes = cap * sizeof(uint64_t);
	a->group = xxl_env_alloc(&a->env, a->group_bytes);
	if (a->group == NULL ||
		xxl_env_sort_open(&a->env, &a->t, an_sort_share(a), 0, 24, 16, 2 * a->m,
						  XXL_INPUT_BOUNDED) != XXL_OK ||
		an_cursor_start(a) != XXL_OK)
		return an_fail(a);
	while (a->cur.has)
	{
		int64_t		u = a->cur.u;
		uint64_t	ukey = g_id_key(u),
					deg = 0;
		bool		spilled = false;
		unsigned char dr[16];

		for (; a->cur.has && a->cur.u == u;)
		{
			if (a->cur.v != u)
			{
				uint64_t	vk = g_id_key(a->cur.v);

				if (deg == cap && !spilled)
				{
					/* a hub: its list goes to a spool of its own */
					xxl_spool_init(&a->hub, &a->env, an_spool_share(a) / 2);
					a->hub_live = spilled = true;
					if (xxl_spool_write(&a->hub, a->group, cap * sizeof(uint64_t)) != XXL_OK)
						return an_fail(a);
				}
				if (spilled)
				{
					if (xxl_spool_write(&a->hub, &vk, sizeof(vk)) != XXL_OK)
						return an_fail(a);
				}
				else
					a->group[deg] = vk;
				deg++;
			}
			if (an_cursor_advance(a) != XXL_OK)
				return an_fail(a);
		}
		a->n++;
		if (deg > a->max_degree)
			a->max_degree = deg;
		/* about half the neighbours are out-neighbours: a node's queries */
		a->tri_wedges += (deg / 2) * (deg / 2 - (deg >= 2)) / 2;
		g_put_u64(dr, ukey);
		g_put_u64(dr + 8, deg);
		if (xxl_spool_write(&a->deg, dr, 16) != XXL_OK)
			return an_fail(a);
		if (!spilled)
		{
			for (uint64_t i = 0; i < deg; i++)
				if (put_t(a, a->group[i], ukey, deg) != XXL_OK)
					return an_fail(a);
		}
		else
		{
			const unsigned char *p;

			if (xxl_spool_finish(&a->hub) != XXL_OK ||
				xxl_spool_reader_open(&a->rd_hub, &a->hub, true) != XXL_OK)
				return an_fail(a);
			a->rd_hub_open = true;
			for (uint64_t i = 0; i < deg; i++)
				if (xxl_spool_read(&a->rd_hub, 8, &p) != XXL_OK ||
					put_t(a, g_get_u64(p), ukey, deg) != XXL_OK)
					return an_fail(a);
			release_hub(a);
		}
		if (xxl_env_poll(&a->env))
			return an_fail(a);
	}
	xxl_env_sort_close(&a->env, &a->s, NULL, NULL);
	xxl_env_free(&a->env, a->group, a->group_bytes);
	a->group = NULL;
	if (xxl_spool_finish(&a->deg) != XXL_OK)
		return an_fail(a);
	return XXL_OK;
}

/* The next (node key, degree) of the degree spool. */
static xxl_status
next_deg(xxl_an *a, uint64_t *key, uint64_t *deg)
{
	const unsigned char *p;

	*key = *deg = 0;
	if (xxl_spool_read(&a->rd_deg, 16, &p) != XXL_OK)
		return an_fail(a);
	*key = g_get_u64(p);
	*deg = g_get_u64(p + 8);
	return XXL_OK;
}

/* (analytics_internal.h) */
xxl_status
an_tri_list_reserve(xxl_an *a, size_t k)
{
	if (k * sizeof(int64_t) > a->list_bytes)
	{
		size_t		want = a->list_bytes ? a->list_bytes * 2 : 4096;
		int64_t    *p;

		while (want < k * sizeof(int64_t))
			want *= 2;
		p = xxl_env_realloc(&a->env, a->list, a->list_bytes, want);
		if (p == NULL)
			return an_fail(a);
		a->list = p;
		a->list_bytes = want;
	}
	return XXL_OK;
}

static xxl_status
list_push(xxl_an *a, size_t k, uint64_t ukey)
{
	if (an_tri_list_reserve(a, k + 1) != XXL_OK)
		return an_fail(a);
	a->list[k] = (int64_t) ukey;
	return XXL_OK;
}

/* v's queries: every pair of its out-neighbours (held as id keys, ascending). */
static xxl_status
put_queries(xxl_an *a, uint64_t vkey, size_t k)
{
	if (k > a->max_out)
		a->max_out = k;
	for (size_t i = 0; i + 1 < k; i++)
	{
		for (size_t j = i + 1; j < k; j++)
		{
			unsigned char local[24];
			unsigned char *r = xxl_env_sort_room(&a->q, local);

			g_put_be(r, (uint64_t) a->list[i]);
			g_put_be(r + 8, (uint64_t) a->list[j]);
			g_put_u64(r + 16, vkey);
			if (xxl_env_sort_push(&a->env, &a->q, r) != XXL_OK)
				return an_fail(a);
		}
		a->queries += k - 1 - i;
		if (xxl_env_poll_n(&a->env, k - 1 - i))
			return an_fail(a);
	}
	return XXL_OK;
}

/* Pass 2: orientation, the queries and the sorted edge list. */
static xxl_status
orient_pass(xxl_an *a)
{
	const unsigned char *r;
	int			got;
	bool		have = false;
	uint64_t	vkey = 0,
				vdeg = 0,
				dkey = 0,
				ddeg = 0;
	size_t		k = 0;
	bool		chunked = an_tri_chunked_choose(a);

	a->tri_chunked = chunked;
	if (xxl_env_sort_sort(&a->env, &a->t) != XXL_OK ||
		(!chunked && xxl_env_sort_open(&a->env, &a->q, an_sort_share(a), 0, 24, 16, 0,
									   XXL_INPUT_UNBOUNDED) != XXL_OK) ||
		xxl_spool_reader_open(&a->rd_deg, &a->deg, false) != XXL_OK)
		return an_fail(a);
	a->rd_deg_open = true;
	while ((got = xxl_env_sort_next(&a->env, &a->t, &r)) == 1)
	{
		uint64_t	k1 = g_get_be(r),
					ukey = g_get_be(r + 8),
					udeg = g_get_u64(r + 16);

		if (!have || k1 != vkey)
		{
			if (have && (chunked ? an_tri_chunked_put(a, vkey, k) : put_queries(a, vkey, k)) != XXL_OK)
				return an_fail(a);
			have = true;
			vkey = k1;
			k = 0;
			/* nodes of degree 0 have no records in T: skip them */
			do
			{
				if (next_deg(a, &dkey, &ddeg) != XXL_OK)
					return an_fail(a);
			} while (dkey != vkey);
			vdeg = ddeg;
		}
		if (vdeg < udeg || (vdeg == udeg && vkey < ukey))
		{
			if (list_push(a, k++, ukey) != XXL_OK)
				return an_fail(a);
		}
		if (!chunked && vkey < ukey)
		{
			unsigned char e[16];

			g_put_be(e, vkey);
			g_put_be(e + 8, ukey);
			if (xxl_spool_write(&a->edges, e, 16) != XXL_OK)
				return an_fail(a);
		}
		if (xxl_env_poll(&a->env))
			return an_fail(a);
	}
	if (got < 0)
		return an_fail(a);
	if (have && (chunked ? an_tri_chunked_put(a, vkey, k) : put_queries(a, vkey, k)) != XXL_OK)
		return an_fail(a);
	xxl_spool_reader_close(&a->rd_deg);
	a->rd_deg_open = false;
	xxl_env_sort_close(&a->env, &a->t, NULL, NULL);
	if (a->list)
		xxl_env_free(&a->env, a->list, a->list_bytes);
	a->list = NULL;
	a->list_bytes = 0;
	if (chunked)
		return XXL_OK;			/* the lists are in the edge spool */
	if (xxl_spool_finish(&a->edges) != XXL_OK ||
		xxl_env_sort_sort(&a->env, &a->q) != XXL_OK ||
		xxl_spool_reader_open(&a->rd_edges, &a->edges, true) != XXL_OK)
		return an_fail(a);
	a->rd_edges_open = true;
	return XXL_OK;
}

/*
 * Pass 3, one step: the next triangle of the merge (a < b from the query,
 * c its node): 1, 0 at the end, -1 on error.
 */
static int
next_triangle(xxl_an *a, uint64_t *ka, uint64_t *kb, uint64_t *kc)
{
	const unsigned char *r;
	int			got;

	while ((got = xxl_env_sort_next(&a->env, &a->q, &r)) == 1)
	{
		int			c = 1;

		if (xxl_env_poll(&a->env))
			return -1;
		while (c > 0)
		{
			if (!a->edge_valid)
			{
				const unsigned char *p;

				if (a->rd_edges.left == 0 && a->rd_edges.avail == 0)
					break;		/* no edges left: no query can match */
				if (xxl_spool_read(&a->rd_edges, 16, &p) != XXL_OK)
					return -1;
				memcpy(a->edge, p, 16);
				a->edge_valid = true;
			}
			c = memcmp(r, a->edge, 16);
			if (c > 0)
				a->edge_valid = false;
		}
		/* (c > 0 here: the edges ran out, no query left can match) */
		if (c == 0)
		{
			*ka = g_get_be(r);
			*kb = g_get_be(r + 8);
			*kc = g_get_u64(r + 16);
			a->triangles++;
			return 1;
		}
	}
	return got;
}

/* (analytics_internal.h) */
xxl_status
an_tri_put_count(xxl_an *a, uint64_t key, uint64_t count)
{
	unsigned char local[16];
	unsigned char *r = xxl_env_sort_room(&a->c, local);

	g_put_be(r, key);
	g_put_u64(r + 8, count);
	return xxl_env_sort_push(&a->env, &a->c, r);
}

/* Node triangles: count in C while merging, then sort C. */
static xxl_status
count_nodes(xxl_an *a)
{
	uint64_t	ka,
				kb,
				kc,
				cur = 0,
				cnt = 0;
	int			got;

	if (xxl_env_sort_open(&a->env, &a->c, an_sort_share(a), 0, 16, 8, 0,
						  XXL_INPUT_UNBOUNDED) != XXL_OK)
		return an_fail(a);
	while ((got = next_triangle(a, &ka, &kb, &kc)) == 1)
	{
		if (cnt > 0 && ka != cur)
		{
			if (an_tri_put_count(a, cur, cnt) != XXL_OK)
				return an_fail(a);
			cnt = 0;
		}
		cur = ka;
		cnt++;
		if (an_tri_put_count(a, kb, 1) != XXL_OK || an_tri_put_count(a, kc, 1) != XXL_OK)
			return an_fail(a);
	}
	if (got < 0)
		return an_fail(a);
	if (cnt > 0 && an_tri_put_count(a, cur, cnt) != XXL_OK)
		return an_fail(a);
	xxl_env_sort_close(&a->env, &a->q, NULL, NULL);
	if (a->rd_edges_open)
		xxl_spool_reader_close(&a->rd_edges);
	a->rd_edges_open = false;
	xxl_spool_free(&a->edges);
	if (xxl_env_sort_sort(&a->env, &a->c) != XXL_OK ||
		xxl_spool_reader_open(&a->rd_deg, &a->deg, true) != XXL_OK)
		return an_fail(a);
	a->rd_deg_open = true;
	return XXL_OK;
}

xxl_status
an_tri_run(xxl_an *a)
{
	if (degree_pass(a) != XXL_OK || orient_pass(a) != XXL_OK)
		return an_fail(a);
	if (a->tri_chunked)
		return an_tri_chunked_count(a);
	if (a->op == XXL_AN_TRIANGLE_COUNT)
	{
		uint64_t	ka,
					kb,
					kc;
		int			got;

		while ((got = next_triangle(a, &ka, &kb, &kc)) == 1)
			;
		if (got < 0)
			return an_fail(a);
	}
	else if (a->op == XXL_AN_NODE_TRIANGLES)
		return count_nodes(a);
	return XXL_OK;
}

/* Node triangles: the next node of the degree spool with its count from C. */
static int
next_node_row(xxl_an *a, xxl_an_row *row)
{
	uint64_t	key = 0,
				deg = 0,
				count = 0;
	const unsigned char *r;

	if (a->rd_deg.left == 0 && a->rd_deg.avail == 0)
		return 0;
	if (next_deg(a, &key, &deg) != XXL_OK)
		return -1;
	for (;;)
	{
		if (!a->c_pending)
		{
			int			got = xxl_env_sort_next(&a->env, &a->c, &r);

			if (got < 0)
				return -1;
			if (got == 0)
				break;
			a->c_pending = true;
			a->c_node = (int64_t) g_get_be(r);
			a->c_count = g_get_u64(r + 8);
		}
		if ((uint64_t) a->c_node != key)
			break;
		count += a->c_count;
		a->c_pending = false;
	}
	row->v[0] = g_key_id(key);
	row->v[1] = (int64_t) count;
	row->v[2] = (int64_t) deg;
	row->x = deg < 2 ? 0.0 : 2.0 * (double) count / ((double) deg * (double) (deg - 1));
	return 1;
}

int
an_tri_next(xxl_an *a, xxl_an_row *row)
{
	switch (a->op)
	{
		case XXL_AN_TRIANGLE_COUNT:
			if (a->count_done)
				return 0;
			a->count_done = true;
			row->v[0] = (int64_t) a->triangles;
			return 1;
		case XXL_AN_NODE_TRIANGLES:
			return next_node_row(a, row);
		default:
			{
				uint64_t	ka,
							kb,
							kc;
				int			got;

				if (a->tri_chunked)
					return an_tri_chunked_next(a, row);
				got = next_triangle(a, &ka, &kb, &kc);

				if (got <= 0)
					return got;
				row->v[0] = g_key_id(ka);
				row->v[1] = g_key_id(kb);
				row->v[2] = g_key_id(kc);
				an_sort3(row->v);
				return 1;
			}
	}
}

void
an_tri_release(xxl_an *a)
{
	release_hub(a);
	if (a->rd_deg_open)
		xxl_spool_reader_close(&a->rd_deg);
	if (a->rd_edges_open)
		xxl_spool_reader_close(&a->rd_edges);
	if (a->rd_tris_open)
		xxl_spool_reader_close(&a->rd_tris);
	a->rd_deg_open = a->rd_edges_open = a->rd_tris_open = false;
	xxl_spool_free(&a->deg);
	xxl_spool_free(&a->edges);
	xxl_spool_free(&a->tris);
	xxl_env_sort_close(&a->env, &a->t, NULL, NULL);
	xxl_env_sort_close(&a->env, &a->q, NULL, NULL);
	xxl_env_sort_close(&a->env, &a->c, NULL, NULL);
	if (a->list)
		xxl_env_free(&a->env, a->list, a->list_bytes);
	if (a->group)
		xxl_env_free(&a->env, a->group, a->group_bytes);
	a->list = NULL;
	a->group = NULL;
}
