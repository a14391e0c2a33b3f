/*
 * graph_external.c — the external path of the graph operators: node
 * reduction with the priority queue until the graph fits the semi-external
 * base, and the expansion of its result (graph_internal.h).
 */
#include "core/graph/graph_internal.h"

#include <math.h>
#include <stdlib.h>

/* External path ----------------------------------------------------------- */

/*
 * Queue records.  The key orders by descending larger end, then by the
 * smaller end (SF, CC; SF's edge number breaks ties) or by the edge's rank
 * in Kruskal order (MSF).  While the nodes and (for MSF) the ranks fit 32
 * bits, the end and what orders after it share one key word: records of 16
 * bytes instead of 24 (8 instead of 16 for CC), and the queue's I/O, most
 * of the reduction's, shrinks by as much.
 */
#define NARROW_MAX UINT32_MAX

static bool
queue_narrow(const xxl_graph *g)
{
	return !g->wide_queue && g->n <= NARROW_MAX &&
		(g->op != XXL_GRAPH_MSF || g->m <= NARROW_MAX);
}

static size_t
queue_rec_size(const xxl_graph *g)
{
	if (g->narrow)
		return g->op == XXL_GRAPH_CC ? 8 : 16;
	return g->op == XXL_GRAPH_CC ? 16 : 24;
}

static size_t
queue_key_size(const xxl_graph *g)
{
	if (g->narrow)
		return g->op == XXL_GRAPH_SF ? 16 : 8;
	return g->op == XXL_GRAPH_SF ? 24 : 16;
}

static inline void
put_queue_rec(const xxl_graph *g, unsigned char *r, uint64_t hi, uint64_t lo, uint64_t edge)
{
	if (g->narrow)
	{
		uint64_t	second = g->op == XXL_GRAPH_MSF ? edge : lo;

		g_put_be(r, (NARROW_MAX - hi) << 32 | second);
		if (g->op == XXL_GRAPH_MSF)
			g_put_u64(r + 8, lo);
		else if (g->op == XXL_GRAPH_SF)
			g_put_be(r + 8, edge);
		return;
	}
	g_put_be(r, UINT64_MAX - hi);
	if (g->op == XXL_GRAPH_MSF)
	{
		g_put_be(r + 8, edge);
		g_put_u64(r + 16, lo);
	}
	else
	{
		g_put_be(r + 8, lo);
		if (g->op == XXL_GRAPH_SF)
			g_put_be(r + 16, edge);
	}
}

/* The larger end of a record (its key's first part). */
static inline uint64_t
queue_rec_hi(const xxl_graph *g, const unsigned char *r)
{
	return g->narrow ? NARROW_MAX - (g_get_be(r) >> 32) : UINT64_MAX - g_get_be(r);
}

static inline void
get_queue_rec(const xxl_graph *g, const unsigned char *r, uint64_t *hi, uint64_t *lo, uint64_t *edge)
{
	*hi = queue_rec_hi(g, r);
	*edge = 0;
	if (g->narrow)
	{
		uint64_t	second = g_get_be(r) & NARROW_MAX;

		if (g->op == XXL_GRAPH_MSF)
		{
			*edge = second;
			*lo = g_get_u64(r + 8);
		}
		else
		{
			*lo = second;
			if (g->op == XXL_GRAPH_SF)
				*edge = g_get_be(r + 8);
		}
		return;
	}
	if (g->op == XXL_GRAPH_MSF)
	{
		*edge = g_get_be(r + 8);
		*lo = g_get_u64(r + 16);
	}
	else
	{
		*lo = g_get_be(r + 8);
		if (g->op == XXL_GRAPH_SF)
			*edge = g_get_be(r + 16);
	}
}

/*
 * The smaller ends already met among one node's queue records (MSF).  They
 * come by rank, so an end met again is a heavier edge parallel to one
 * already taken, never in the forest: dropping it spares the queue and the
 * base's sort its every later copy (the relinking makes many).  A table of
 * a fixed size, cleared per node by a generation stamp; an end it has no
 * room for is kept, which is only slower.
 */
#define SEEN_PROBES 8

static xxl_status
seen_open(xxl_graph *g, seen_set *ss)
{
	size_t		n = 256;

	memset(ss, 0, sizeof(*ss));
	while (n * 2 * (sizeof(uint64_t) + sizeof(uint32_t)) <= g->env.pool / 64)
		n *= 2;
	ss->bytes = n * (sizeof(uint64_t) + sizeof(uint32_t));
	ss->lo = xxl_env_alloc(&g->env, ss->bytes);
	if (ss->lo == NULL)
		return g->env.err.code;
	ss->gen = (uint32_t *) (ss->lo + n);
	memset(ss->gen, 0, n * sizeof(uint32_t));
	ss->mask = n - 1;
	ss->cur = 1;
	return XXL_OK;
}

static void
seen_next_node(seen_set *ss)
{
	if (++ss->cur == 0)
	{
		memset(ss->gen, 0, (ss->mask + 1) * sizeof(uint32_t));
		ss->cur = 1;
	}
}

/* Whether lo was met before for this node; remembers it if there is room. */
static bool
seen_before(seen_set *ss, uint64_t lo)
{
	size_t		h = (size_t) ((lo * UINT64_C(0x9E3779B97F4A7C15)) >> 32);

	for (int i = 0; i < SEEN_PROBES; i++)
	{
		size_t		k = (h + i) & ss->mask;

		if (ss->gen[k] != ss->cur)
		{
			ss->gen[k] = ss->cur;
			ss->lo[k] = lo;
			return false;
		}
		if (ss->lo[k] == lo)
			return true;
	}
	return false;
}

void
graph_seen_close(xxl_graph *g, seen_set *ss)
{
	if (ss->lo)
		xxl_env_free(&g->env, ss->lo, ss->bytes);
	memset(ss, 0, sizeof(*ss));
}

/*
 * An edge of the renamed graph: into the queue, or, if both ends are base
 * nodes already, into the special bucket that goes straight to the base
 * algorithm (thesis §4.3.4) without ever passing through the queue.
 */
static xxl_status
route_edge(xxl_graph *g, uint64_t pu, uint64_t pv, uint64_t edge)
{
	uint64_t	hi = pu > pv ? pu : pv,
				lo = pu > pv ? pv : pu;

	if (hi < g->base_n)
	{
		uint64_t	rec[3] = {hi, lo, edge};

		g->special_count++;
		return xxl_spool_write(&g->special, rec, g->op == XXL_GRAPH_CC ? 16 : 24);
	}
	else
	{
		unsigned char r[24];

		put_queue_rec(g, r, hi, lo, edge);
		return xxl_env_queue_push(&g->env, &g->pq, r);
	}
}

/* Insert every non-loop edge, renamed by the permutation, into the queue. */
static xxl_status
fill_queue(xxl_graph *g)
{
	xxl_env  *env = &g->env;
	int			got;

	g->narrow = queue_narrow(g);
	if (g->op != XXL_GRAPH_MSF)
	{
		uint64_t	e,
					du,
					dv;

		if (xxl_env_queue_open(env, &g->pq, half_share(g), queue_rec_size(g), queue_key_size(g)) != XXL_OK)
			return env->err.code;
		while ((got = graph_next_pair(g, &e, &du, &dv)) == 1)
		{
			uint64_t	pu = gperm_apply(&g->perm, du),
						pv = gperm_apply(&g->perm, dv);

			if (pu != pv && route_edge(g, pu, pv, e) != XXL_OK)
				return env->err.code;
			if (poll_canceled(g))
				return env->err.code;
		}
		if (got < 0)
			return env->err.code;
		graph_pairs_done(g);
	}
	else
	{
		const unsigned char *s;
		uint64_t	rank = 0;

		/* ranks in Kruskal order replace (cost, id) in the queue */
		if (graph_fill_kruskal_sorter(g) != XXL_OK ||
			xxl_env_queue_open(env, &g->pq, half_share(g), queue_rec_size(g), queue_key_size(g)) != XXL_OK)
			return env->err.code;
		while ((got = xxl_env_sort_next(env, &g->s3, &s)) == 1)
		{
			unsigned char io[IO_REC];
			uint64_t	pu = gperm_apply(&g->perm, g_get_u64(s + 16)),
						pv = gperm_apply(&g->perm, g_get_u64(s + 24));
			int64_t		id = g_key_id(g_get_be(s + 8)),
						source,
						target;
			double		cost = g_key_cost(g_get_be(s));

			graph_kruskal_ends(g, s, &source, &target);
			g_put_edge_rec(io, source, target, id, cost);
			if (xxl_spool_write(&g->info, io, IO_REC) != XXL_OK)
				return env->err.code;
			if (pu != pv && route_edge(g, pu, pv, rank) != XXL_OK)
				return env->err.code;
			rank++;
			if (poll_canceled(g))
				return env->err.code;
		}
		if (got < 0)
			return env->err.code;
		xxl_env_sort_close(env, &g->s3, NULL, NULL);
		if (xxl_spool_finish(&g->info) != XXL_OK)
			return env->err.code;
	}
	return xxl_spool_finish(&g->special);
}

/*
 * Node reduction (thesis Fig. 4.1): remove nodes n-1, ..., base_n.  The
 * first queue record of a node is its lightest edge (MSF) or the edge to its
 * smallest neighbour (SF, CC): a forest edge, or the node's parent for CC.
 * Its other edges are relinked to that neighbour, which is smaller, so they
 * come back when their larger end is removed.  Edges that became loops are
 * dropped, and for SF/CC parallel edges too (they arrive side by side).
 */
static xxl_status
contract_nodes(xxl_graph *g, seen_set *ss)
{
	xxl_env  *env = &g->env;
	uint64_t	cur = NONE,
				relink = 0,
				prev_lo = NONE;
	unsigned char r[24],
				nr[24];

	for (;;)
	{
		const unsigned char *t;
		uint64_t	hi,
					lo,
					edge;
		int			got = xxl_env_queue_top(env, &g->pq, &t);

		if (got < 0)
			return env->err.code;
		if (got == 0)
			break;
		if (queue_rec_hi(g, t) < g->base_n)
			break;
		if (xxl_env_queue_pop(env, &g->pq, r) < 0)
			return env->err.code;
		get_queue_rec(g, r, &hi, &lo, &edge);
		if (hi != cur)
		{
			cur = hi;
			relink = lo;
			prev_lo = lo;
			g->contracted++;
			if (ss)
				seen_next_node(ss);
			if (g->op == XXL_GRAPH_CC)
			{
				uint64_t	rec[2] = {hi, lo};

				if (xxl_spool_write(&g->log, rec, sizeof(rec)) != XXL_OK)
					return env->err.code;
			}
			else
			{
				if (xxl_spool_write(&g->forest, &edge, 8) != XXL_OK)
					return env->err.code;
				g->forest_count++;
			}
			continue;
		}
		/* an edge to the forest edge's end would be a loop; a parallel, heavier */
		if (lo == relink || (ss ? seen_before(ss, lo) : lo == prev_lo))
		{
			g->parallel++;
			continue;
		}
		prev_lo = lo;
		put_queue_rec(g, nr, lo > relink ? lo : relink, lo > relink ? relink : lo, edge);
		if (xxl_env_queue_push(env, &g->pq, nr) != XXL_OK)
			return env->err.code;
		g->relinked++;
		if (poll_canceled(g))
			return env->err.code;
	}
	return XXL_OK;
}

static xxl_status
contract(xxl_graph *g)
{
	if (g->op != XXL_GRAPH_MSF)
		return contract_nodes(g, NULL);
	if (seen_open(g, &g->seen) != XXL_OK || contract_nodes(g, &g->seen) != XXL_OK)
		return g->env.err.code;
	graph_seen_close(g, &g->seen);
	return XXL_OK;
}

/* The semi-external algorithm on the base_n nodes the reduction left. */
static xxl_status
solve_base(xxl_graph *g)
{
	xxl_env  *env = &g->env;
	unsigned char r[24];
	int			got;

	if (g->op != XXL_GRAPH_MSF)
	{
		if (graph_uf_alloc(g, g->base_n) != XXL_OK)
			return env->err.code;
		while ((got = xxl_env_queue_pop(env, &g->pq, r)) == 1)
		{
			uint64_t	hi,
						lo,
						edge;

			get_queue_rec(g, r, &hi, &lo, &edge);
			if (graph_uf_union(g, hi, lo) && g->op == XXL_GRAPH_SF)
			{
				if (xxl_spool_write(&g->forest, &edge, 8) != XXL_OK)
					return env->err.code;
				g->forest_count++;
			}
			if (poll_canceled(g))
				return env->err.code;
		}
		if (got < 0)
			return env->err.code;
		xxl_env_queue_close(env, &g->pq);
		if (xxl_spool_reader_open(&g->rd_aux, &g->special, false) != XXL_OK)
			return env->err.code;
		for (uint64_t i = 0; i < g->special_count; i++)
		{
			const unsigned char *p;

			if (xxl_spool_read(&g->rd_aux, g->op == XXL_GRAPH_CC ? 16 : 24, &p) != XXL_OK)
				return env->err.code;
			if (graph_uf_union(g, g_get_u64(p), g_get_u64(p + 8)) && g->op == XXL_GRAPH_SF)
			{
				if (xxl_spool_write(&g->forest, p + 16, 8) != XXL_OK)
					return env->err.code;
				g->forest_count++;
			}
			if (poll_canceled(g))
				return env->err.code;
		}
		xxl_spool_reader_close(&g->rd_aux);
		xxl_spool_free(&g->special);
		if (g->op == XXL_GRAPH_CC)
		{
			uf_flatten(g->parent, g->base_n);
			for (uint64_t x = 0; x < g->base_n; x++)
				if (xxl_spool_write(&g->basereps, &g->parent[x], 8) != XXL_OK)
					return env->err.code;
			if (xxl_spool_finish(&g->basereps) != XXL_OK)
				return env->err.code;
		}
		uf_free(g);
	}
	else
	{
		const unsigned char *s;
		uint64_t	cur = NONE;

		/* Kruskal: the remaining edges by rank, less the heavier parallels */
		if (xxl_env_sort_open(env, &g->s4, half_share(g), 0, 24, 8,
								  xxl_pq_size(g->pq.q) + g->special_count, XXL_INPUT_UNBOUNDED) != XXL_OK ||
			seen_open(g, &g->seen) != XXL_OK)
			return env->err.code;
		while ((got = xxl_env_queue_pop(env, &g->pq, r)) == 1)
		{
			unsigned char s4[24];
			uint64_t	hi,
						lo,
						rank;

			get_queue_rec(g, r, &hi, &lo, &rank);
			if (hi != cur)
			{
				cur = hi;
				seen_next_node(&g->seen);
			}
			if (seen_before(&g->seen, lo))
			{
				g->parallel++;
				continue;
			}
			g_put_be(s4, rank);
			g_put_u64(s4 + 8, hi);
			g_put_u64(s4 + 16, lo);
			if (xxl_env_sort_put(env, &g->s4, s4) != XXL_OK)
				return env->err.code;
			if (poll_canceled(g))
				return env->err.code;
		}
		graph_seen_close(g, &g->seen);
		if (got < 0)
			return env->err.code;
		xxl_env_queue_close(env, &g->pq);
		if (xxl_spool_reader_open(&g->rd_aux, &g->special, false) != XXL_OK)
			return env->err.code;
		for (uint64_t i = 0; i < g->special_count; i++)
		{
			const unsigned char *p;
			unsigned char s4[24];

			if (xxl_spool_read(&g->rd_aux, 24, &p) != XXL_OK)
				return env->err.code;
			g_put_be(s4, g_get_u64(p + 16));
			memcpy(s4 + 8, p, 16);
			if (xxl_env_sort_put(env, &g->s4, s4) != XXL_OK)
				return env->err.code;
			if (poll_canceled(g))
				return env->err.code;
		}
		xxl_spool_reader_close(&g->rd_aux);
		xxl_spool_free(&g->special);
		if (xxl_env_sort_sort(env, &g->s4) != XXL_OK || graph_uf_alloc(g, g->base_n) != XXL_OK)
			return env->err.code;
		while ((got = xxl_env_sort_next(env, &g->s4, &s)) == 1)
		{
			if (graph_uf_union(g, g_get_u64(s + 8), g_get_u64(s + 16)))
			{
				uint64_t	rank = g_get_be(s);

				if (xxl_spool_write(&g->forest, &rank, 8) != XXL_OK)
					return env->err.code;
				g->forest_count++;
			}
			if (poll_canceled(g))
				return env->err.code;
		}
		if (got < 0)
			return env->err.code;
		xxl_env_sort_close(env, &g->s4, NULL, NULL);
		uf_free(g);
	}
	return XXL_OK;
}

/* SF/MSF: the forest's edge numbers (input positions / ranks) in order. */
static xxl_status
sort_forest(xxl_graph *g)
{
	xxl_env  *env = &g->env;
	xxl_spool_reader rd;
	xxl_status	rc = XXL_OK;

	if (xxl_spool_finish(&g->forest) != XXL_OK ||
		xxl_env_sort_open(env, &g->fsort, share(g, 1), 0, 8, 8,
								  g->forest_count, XXL_INPUT_UNBOUNDED) != XXL_OK ||
		xxl_spool_reader_open(&rd, &g->forest, false) != XXL_OK)
		return env->err.code;
	for (uint64_t i = 0; i < g->forest_count && rc == XXL_OK; i++)
	{
		const unsigned char *p;
		unsigned char k[8];

		rc = xxl_spool_read(&rd, 8, &p);
		if (rc == XXL_OK)
		{
			g_put_be(k, g_get_u64(p));
			rc = xxl_env_sort_put(env, &g->fsort, k);
		}
		if (rc == XXL_OK && poll_canceled(g))
			rc = env->err.code;
	}
	xxl_spool_reader_close(&rd);
	if (rc != XXL_OK)
		return rc;
	xxl_spool_free(&g->forest);
	if (xxl_env_sort_sort(env, &g->fsort) != XXL_OK ||
		xxl_spool_reader_open(&g->rd_in, g->op == XXL_GRAPH_SF ? &g->input : &g->info, false) != XXL_OK)
		return env->err.code;
	g->out_pos = 0;
	g->out = OUT_FOREST_EXT;
	return XXL_OK;
}

/*
 * CC: every node's representative by time-forward processing.  Nodes are
 * visited in ascending (permuted) order; a base node's representative is its
 * union-find root, a removed node's is its parent's, delivered by a message
 * in a second queue keyed by the node; a node never removed and above the
 * base is a root.  Then each representative's smallest dense id (= smallest
 * original id) is found by a sort by representative, and original ids are
 * restored by two sort-and-scan joins with the map.
 */
static xxl_status
expand_cc(xxl_graph *g)
{
	xxl_env  *env = &g->env;
	xxl_spool_reader rd;
	const unsigned char *l,
			   *s;
	unsigned char r[16];
	int			lgot,
				got;
	uint64_t	prev = NONE,
				dmin = 0,
				map_idx = 0;
	int64_t		map_val = 0;
	xxl_status	rc = XXL_OK;

	/* contraction records by parent */
	if (xxl_spool_finish(&g->log) != XXL_OK ||
		xxl_env_sort_open(env, &g->lsort, share(g, 3), 0, 16, 16,
								  g->contracted, XXL_INPUT_UNBOUNDED) != XXL_OK ||
		xxl_spool_reader_open(&rd, &g->log, false) != XXL_OK)
		return env->err.code;
	for (uint64_t i = 0; i < g->contracted && rc == XXL_OK; i++)
	{
		const unsigned char *p;

		rc = xxl_spool_read(&rd, 16, &p);
		if (rc == XXL_OK)
		{
			g_put_be(r, g_get_u64(p + 8));
			g_put_be(r + 8, g_get_u64(p));
			rc = xxl_env_sort_put(env, &g->lsort, r);
		}
	}
	xxl_spool_reader_close(&rd);
	if (rc != XXL_OK)
		return rc;
	xxl_spool_free(&g->log);
	if (xxl_env_sort_sort(env, &g->lsort) != XXL_OK ||
		xxl_env_queue_open(env, &g->msg, share(g, 3), 16, 8) != XXL_OK ||
		xxl_env_sort_open(env, &g->f1, share(g, 3), 0, 16, 16,
								  g->n, XXL_INPUT_UNBOUNDED) != XXL_OK ||
		xxl_spool_reader_open(&g->rd_aux, &g->basereps, false) != XXL_OK)
		return env->err.code;
	lgot = xxl_env_sort_next(env, &g->lsort, &l);
	for (uint64_t x = 0; x < g->n; x++)
	{
		uint64_t	rep = x;

		if (x < g->base_n)
		{
			const unsigned char *p;

			if (xxl_spool_read(&g->rd_aux, 8, &p) != XXL_OK)
				return env->err.code;
			rep = g_get_u64(p);
		}
		else
		{
			const unsigned char *t;

			got = xxl_env_queue_top(env, &g->msg, &t);
			if (got < 0)
				return env->err.code;
			if (got == 1 && g_get_be(t) == x)
			{
				rep = g_get_u64(t + 8);
				if (xxl_env_queue_pop(env, &g->msg, NULL) < 0)
					return env->err.code;
			}
		}
		while (lgot == 1 && g_get_be(l) == x)
		{
			g_put_be(r, g_get_be(l + 8));
			g_put_u64(r + 8, rep);
			if (xxl_env_queue_push(env, &g->msg, r) != XXL_OK)
				return env->err.code;
			lgot = xxl_env_sort_next(env, &g->lsort, &l);
		}
		if (lgot < 0)
			return env->err.code;
		g_put_be(r, rep);
		g_put_be(r + 8, gperm_invert(&g->perm, x));
		if (xxl_env_sort_put(env, &g->f1, r) != XXL_OK)
			return env->err.code;
		if (poll_canceled(g))
			return env->err.code;
	}
	xxl_spool_reader_close(&g->rd_aux);
	xxl_spool_free(&g->basereps);
	xxl_env_sort_close(env, &g->lsort, NULL, NULL);
	xxl_env_queue_close(env, &g->msg);

	/* smallest dense id of each representative's component */
	if (xxl_env_sort_sort(env, &g->f1) != XXL_OK ||
		xxl_env_sort_open(env, &g->f2, share(g, 2), 0, 16, 16, g->n, XXL_INPUT_UNBOUNDED) != XXL_OK)
		return env->err.code;
	while ((got = xxl_env_sort_next(env, &g->f1, &s)) == 1)
	{
		uint64_t	rep = g_get_be(s);

		if (rep != prev)
		{
			prev = rep;
			dmin = g_get_be(s + 8);
			g->components++;
		}
		g_put_be(r, dmin);
		memcpy(r + 8, s + 8, 8);
		if (xxl_env_sort_put(env, &g->f2, r) != XXL_OK)
			return env->err.code;
		if (poll_canceled(g))
			return env->err.code;
	}
	if (got < 0)
		return env->err.code;
	xxl_env_sort_close(env, &g->f1, NULL, NULL);

	/* the original id of each minimum, then back in node order */
	if (xxl_env_sort_sort(env, &g->f2) != XXL_OK ||
		xxl_env_sort_open(env, &g->f3, share(g, 2), 0, 16, 8,
								  g->n, XXL_INPUT_UNBOUNDED) != XXL_OK ||
		xxl_spool_reader_open(&g->rd_map, &g->map, false) != XXL_OK)
		return env->err.code;
	while ((got = xxl_env_sort_next(env, &g->f2, &s)) == 1)
	{
		uint64_t	d = g_get_be(s);

		while (map_idx <= d)
		{
			const unsigned char *p;

			if (xxl_spool_read(&g->rd_map, 8, &p) != XXL_OK)
				return env->err.code;
			map_val = (int64_t) g_get_u64(p);
			map_idx++;
		}
		memcpy(r, s + 8, 8);
		g_put_u64(r + 8, (uint64_t) map_val);
		if (xxl_env_sort_put(env, &g->f3, r) != XXL_OK)
			return env->err.code;
		if (poll_canceled(g))
			return env->err.code;
	}
	if (got < 0)
		return env->err.code;
	xxl_spool_reader_close(&g->rd_map);
	xxl_env_sort_close(env, &g->f2, NULL, NULL);
	if (xxl_env_sort_sort(env, &g->f3) != XXL_OK ||
		xxl_spool_reader_open(&g->rd_map, &g->map, false) != XXL_OK)
		return env->err.code;
	g->out_pos = 0;
	g->out = OUT_CC_EXT;
	return XXL_OK;
}

xxl_status
graph_run_external(xxl_graph *g)
{
	xxl_env  *env = &g->env;

	g->path = XXL_GRAPH_EXTERNAL;
	g->base_n = g->semi_max;
	gperm_init(&g->perm, g->n, g->seed);
	if (fill_queue(g) != XXL_OK || contract(g) != XXL_OK || solve_base(g) != XXL_OK)
		return env->err.code;
	if (g->op == XXL_GRAPH_CC)
		return expand_cc(g);
	return sort_forest(g);
}

xxl_status
xxl_graph_run(xxl_graph *g)
{
	xxl_status	rc;

	if (g->state != ST_INPUT)
	{
		if (g->state != ST_FAILED)
			xxl_error_set(&g->env.err, XXL_EINVAL, 0, "xxl_graph_run called twice");
		return gfail(g);
	}
	rc = g->in_memory ? graph_mem_flush(g) : XXL_OK;
	/* components by id in parts: their levels, or a move to the numbered map or the sorters */
	if (rc == XXL_OK && g->in_memory && g->split)
		rc = graph_split_settle(g);
	if (rc == XXL_OK && g->in_memory && g->out != OUT_CC_SPLIT)
		rc = g->mapped ? graph_mapped_run(g) : graph_mem_run(g);
	if (rc == XXL_OK && !g->in_memory)
	{
		rc = graph_relabel(g);
		if (rc == XXL_OK)
			rc = g->n <= g->semi_max ? graph_run_semi(g) : graph_run_external(g);
	}
	g->run_ns = xxl_now_ns() - g->t_start;
	if (rc != XXL_OK)
		return gfail(g);
	g->state = ST_OUTPUT;
	return XXL_OK;
}

