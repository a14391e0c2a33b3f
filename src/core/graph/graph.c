/*
 * graph.c — connected components, spanning forest and minimum spanning
 * forest (xxl_graph.h): relabeling to dense ids, the semi-external
 * union-find / Kruskal, the external node reduction with a priority queue,
 * the expansion of its result, and the pull interface.
 *
 * Record layouts (BE = big-endian key bytes, u64 = native payload):
 *   S1 endpoints       [id key BE][edge<<1|side BE]           key 8
 *   S2 dense endpoints [edge<<1|side BE][dense u64]            key 8
 *   S3 Kruskal order   [cost key BE][id key BE][du][dv][src][tgt] key 16
 *   queue CC           [~hi BE][lo BE]                         key 16
 *   queue SF           [~hi BE][lo BE][edge BE]                key 24
 *   queue MSF          [~hi BE][rank BE][lo u64]               key 16
 *   input / info spool [source][target][id][cost]              32 bytes
 * ~hi = UINT64_MAX - hi, so the queue yields the highest node first.
 *
 * Memory: the pool of the environment is shared so that at most two big
 * consumers (sorters, queues, the union-find array) live at once with half
 * of it each, except in the CC expansion (three thirds) and in the final
 * sorts (all of it).  The union-find array takes 8 bytes per node, so the
 * semi-external path takes n <= (pool/2 - 4 KB) / 8 nodes, and the external
 * path reduces to that many.
 */
#include "core/graph/graph_internal.h"

#include <math.h>
#include <stdlib.h>

typedef enum graph_state
{
	ST_INPUT,
	ST_OUTPUT,
	ST_DONE,
	ST_FAILED
} graph_state;

typedef enum graph_out
{
	OUT_NONE,
	OUT_CC_SEMI,				/* union-find array + map */
	OUT_CC_EXT,					/* F3 (node, original min) + map */
	OUT_SF_SEMI,				/* S2 + input + union-find */
	OUT_MSF_SEMI,				/* S3 + union-find */
	OUT_FOREST_EXT				/* sorted forest edge numbers + input/info */
} graph_out;

#define NONE UINT64_MAX
#define IO_REC 32				/* input / info spool record */

struct xxl_graph
{
	xxl_env	env;
	xxl_graph_op op;
	uint64_t	seed;
	uint64_t	max_semi_nodes;
	graph_state state;
	graph_out	out;
	xxl_graph_path path;
	uint64_t	t_start;
	uint64_t	run_ns;
	uint64_t	output_ns;

	uint64_t	m;
	uint64_t	n;
	uint64_t	self_loops;
	uint64_t	semi_max;
	uint64_t	base_n;
	uint64_t	contracted;
	uint64_t	relinked;
	uint64_t	forest_count;	/* external: forest edges found */
	uint64_t	special_count;	/* external: edges inside the base from the start */
	uint64_t	components;
	uint64_t	forest_edges;	/* returned to the caller */

	xxl_env_sorter		s1,
				s2,
				s3,
				s4,
				lsort,
				f1,
				f2,
				f3,
				fsort;
	xxl_env_queue		pq,
				msg;
	xxl_spool		input,
				map,
				info,
				log,
				forest,
				special,
				basereps;
	xxl_spool_reader rd_in,
				rd_map,
				rd_aux;
	uint64_t   *parent;
	size_t		parent_bytes;
	gperm		perm;
	uint64_t	out_pos;
};

/* Small helpers ----------------------------------------------------------- */

static xxl_status
gfail(xxl_graph *g)
{
	g->state = ST_FAILED;
	if (g->env.err.code == XXL_OK)
		xxl_error_set(&g->env.err, XXL_EIO, 0, "graph operator failed");
	return g->env.err.code;
}

static inline bool
poll_canceled(xxl_graph *g)
{
	return xxl_env_poll(&g->env);
}

static size_t
half_share(const xxl_graph *g)
{
	size_t		h = g->env.pool / 2;

	return h - h % XXL_ALIGN;
}

static size_t
share(const xxl_graph *g, int parts)
{
	size_t		h = g->env.pool / (size_t) parts;

	return h - h % XXL_ALIGN;
}

/* Union-find with union by smaller index: parent[x] <= x, roots are minima. */
static inline uint64_t
uf_find(uint64_t *p, uint64_t x)
{
	while (p[x] != x)
	{
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

static inline bool
uf_union(uint64_t *p, uint64_t a, uint64_t b)
{
	a = uf_find(p, a);
	b = uf_find(p, b);
	if (a == b)
		return false;
	if (a < b)
		p[b] = a;
	else
		p[a] = b;
	return true;
}

static xxl_status
uf_alloc(xxl_graph *g, uint64_t n)
{
	g->parent_bytes = (size_t) (n ? n : 1) * sizeof(uint64_t);
	g->parent = xxl_env_alloc(&g->env, g->parent_bytes);
	if (g->parent == NULL)
		return g->env.err.code;
	for (uint64_t i = 0; i < n; i++)
		g->parent[i] = i;
	return XXL_OK;
}

static void
uf_free(xxl_graph *g)
{
	if (g->parent)
		xxl_env_free(&g->env, g->parent, g->parent_bytes);
	g->parent = NULL;
}

/* Every parent points at its root (parents are smaller: one ascending pass). */
static void
uf_flatten(uint64_t *p, uint64_t n)
{
	for (uint64_t x = 0; x < n; x++)
		p[x] = p[p[x]];
}

/* Creation and input ------------------------------------------------------ */

const char *
xxl_graph_path_name(xxl_graph_path path)
{
	switch (path)
	{
		case XXL_GRAPH_PATH_NONE:
			return "none";
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
	xxl_env	env;
	xxl_graph  *g;

	if (op != XXL_GRAPH_CC && op != XXL_GRAPH_SF && op != XXL_GRAPH_MSF)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "unknown graph operation %d", (int) op);
		return NULL;
	}
	if (xxl_env_open(&env, &config->res, &graph_plan) != XXL_OK)
	{
		xxl_error_set(err, env.err.code, env.err.sys_errno, "%s", env.err.message);
		return NULL;
	}
	g = xxl_budget_alloc(&env.budget, sizeof(*g), err);
	if (g == NULL)
		return NULL;
	memset(g, 0, sizeof(*g));
	g->env = env;
	xxl_env_relocate(&g->env);
	g->op = op;
	g->seed = config->seed;
	g->max_semi_nodes = config->max_semi_nodes;
	g->t_start = xxl_now_ns();
	xxl_spool_init(&g->input, &g->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&g->map, &g->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&g->info, &g->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&g->log, &g->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&g->forest, &g->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&g->special, &g->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&g->basereps, &g->env, XXL_SPOOL_SHARED);
	g->semi_max = (half_share(g) - XXL_ALIGN) / sizeof(uint64_t);
	if (g->max_semi_nodes > 0 && g->max_semi_nodes < g->semi_max)
		g->semi_max = g->max_semi_nodes;
	if (xxl_env_sort_open(&g->env, &g->s1, half_share(g), 0, 16, 8, 2 * config->expected_edges, XXL_INPUT_UNBOUNDED) != XXL_OK)
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
	unsigned char r[16];
	uint64_t	e = g->m;

	if (g->state != ST_INPUT)
	{
		if (g->state != ST_FAILED)
			xxl_error_set(&g->env.err, XXL_EINVAL, 0, "edges can only be added before running");
		return gfail(g);
	}
	if (g->op == XXL_GRAPH_MSF && isnan(cost))
	{
		xxl_error_set(&g->env.err, XXL_EINVAL, 0,
					  "edge cost is NaN (edge %lld: %lld - %lld)", (long long) id,
					  (long long) source, (long long) target);
		return gfail(g);
	}
	g_put_be(r, g_id_key(source));
	g_put_be(r + 8, e << 1);
	if (xxl_env_sort_put(&g->env, &g->s1, r) != XXL_OK)
		return gfail(g);
	g_put_be(r, g_id_key(target));
	g_put_be(r + 8, (e << 1) | 1);
	if (xxl_env_sort_put(&g->env, &g->s1, r) != XXL_OK)
		return gfail(g);
	if (g->op != XXL_GRAPH_CC)
	{
		unsigned char io[IO_REC];

		g_put_u64(io, (uint64_t) source);
		g_put_u64(io + 8, (uint64_t) target);
		g_put_u64(io + 16, (uint64_t) id);
		memcpy(io + 24, &cost, 8);
		if (xxl_spool_write(&g->input, io, IO_REC) != XXL_OK)
			return gfail(g);
	}
	if (source == target)
		g->self_loops++;
	g->m++;
	if (poll_canceled(g))
		return gfail(g);
	return XXL_OK;
}

/* Relabeling -------------------------------------------------------------- */

/* Sort endpoints by id, number the distinct ids, send them back by edge. */
static xxl_status
relabel(xxl_graph *g)
{
	xxl_env  *env = &g->env;
	const unsigned char *r;
	unsigned char r2[16];
	uint64_t	prev = 0;
	uint64_t	n = 0;
	int			got;

	if (xxl_spool_finish(&g->input) != XXL_OK || xxl_env_sort_sort(env, &g->s1) != XXL_OK)
		return env->err.code;
	if (xxl_env_sort_open(env, &g->s2, half_share(g), 0, 16, 8, 2 * g->m, XXL_INPUT_UNBOUNDED) != XXL_OK)
		return env->err.code;
	while ((got = xxl_env_sort_next(env, &g->s1, &r)) == 1)
	{
		uint64_t	k = g_get_be(r);

		if (n == 0 || k != prev)
		{
			int64_t		orig = g_key_id(k);

			if (xxl_spool_write(&g->map, &orig, 8) != XXL_OK)
				return env->err.code;
			prev = k;
			n++;
		}
		memcpy(r2, r + 8, 8);
		g_put_u64(r2 + 8, n - 1);
		if (xxl_env_sort_put(env, &g->s2, r2) != XXL_OK)
			return env->err.code;
		if (poll_canceled(g))
			return env->err.code;
	}
	if (got < 0)
		return env->err.code;
	xxl_env_sort_close(env, &g->s1, NULL, NULL);
	if (xxl_spool_finish(&g->map) != XXL_OK)
		return env->err.code;
	g->n = n;
	return xxl_env_sort_sort(env, &g->s2);
}

/* The next edge from S2 in input order: 1, 0 at the end, -1 on error. */
static int
next_pair(xxl_graph *g, uint64_t *e, uint64_t *du, uint64_t *dv)
{
	const unsigned char *r;
	uint64_t	k;
	int			got = xxl_env_sort_next(&g->env, &g->s2, &r);

	if (got <= 0)
		return got;
	k = g_get_be(r);
	*e = k >> 1;
	*du = g_get_u64(r + 8);
	got = xxl_env_sort_next(&g->env, &g->s2, &r);
	if (got <= 0 || g_get_be(r) != (k | 1) || (k & 1))
	{
		if (got >= 0)
			xxl_error_set(&g->env.err, XXL_EIO, 0, "edge %llu lost an endpoint while relabeling",
						  (unsigned long long) *e);
		return -1;
	}
	*dv = g_get_u64(r + 8);
	return 1;
}

/*
 * MSF: join the dense endpoints with the input and sort by (cost, id); the
 * sort is stable, so ties keep input order and the order is strict.
 */
static xxl_status
fill_kruskal_sorter(xxl_graph *g)
{
	xxl_env  *env = &g->env;
	uint64_t	e,
				du,
				dv;
	int			got;

	if (xxl_env_sort_open(env, &g->s3, half_share(g), 0, 48, 16, g->m, XXL_INPUT_UNBOUNDED) != XXL_OK ||
		xxl_spool_reader_open(&g->rd_in, &g->input, false) != XXL_OK)
		return env->err.code;
	while ((got = next_pair(g, &e, &du, &dv)) == 1)
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
		memcpy(r + 32, io, 16);
		if (xxl_env_sort_put(env, &g->s3, r) != XXL_OK)
			return env->err.code;
		if (poll_canceled(g))
			return env->err.code;
	}
	if (got < 0)
		return env->err.code;
	xxl_env_sort_close(env, &g->s2, NULL, NULL);
	xxl_spool_reader_close(&g->rd_in);
	xxl_spool_free(&g->input);		/* S3 carries everything now */
	return xxl_env_sort_sort(env, &g->s3);
}

/* Semi-external path ------------------------------------------------------ */

static xxl_status
run_semi(xxl_graph *g)
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
			while ((got = next_pair(g, &e, &du, &dv)) == 1)
			{
				uf_union(g->parent, du, dv);
				if (poll_canceled(g))
					return env->err.code;
			}
			if (got < 0)
				return env->err.code;
			xxl_env_sort_close(env, &g->s2, NULL, NULL);
			uf_flatten(g->parent, g->n);
			if (xxl_spool_reader_open(&g->rd_map, &g->map, false) != XXL_OK)
				return env->err.code;
			g->out = OUT_CC_SEMI;
			break;
		case XXL_GRAPH_SF:
			/* the union-find pass is the output scan */
			if (uf_alloc(g, g->n) != XXL_OK ||
				xxl_spool_reader_open(&g->rd_in, &g->input, false) != XXL_OK)
				return env->err.code;
			g->out = OUT_SF_SEMI;
			break;
		case XXL_GRAPH_MSF:
			if (fill_kruskal_sorter(g) != XXL_OK || uf_alloc(g, g->n) != XXL_OK)
				return env->err.code;
			g->out = OUT_MSF_SEMI;
			break;
	}
	return XXL_OK;
}

/* External path ----------------------------------------------------------- */

static inline void
put_queue_rec(const xxl_graph *g, unsigned char *r, uint64_t hi, uint64_t lo, uint64_t edge)
{
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

static size_t
queue_rec_size(const xxl_graph *g)
{
	return g->op == XXL_GRAPH_CC ? 16 : 24;
}

static size_t
queue_key_size(const xxl_graph *g)
{
	return g->op == XXL_GRAPH_SF ? 24 : 16;
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

	if (g->op != XXL_GRAPH_MSF)
	{
		uint64_t	e,
					du,
					dv;

		if (xxl_env_queue_open(env, &g->pq, half_share(g), queue_rec_size(g), queue_key_size(g), g->m) != XXL_OK)
			return env->err.code;
		while ((got = next_pair(g, &e, &du, &dv)) == 1)
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
		xxl_env_sort_close(env, &g->s2, NULL, NULL);
	}
	else
	{
		const unsigned char *s;
		uint64_t	rank = 0;

		/* ranks in Kruskal order replace (cost, id) in the queue */
		if (fill_kruskal_sorter(g) != XXL_OK ||
			xxl_env_queue_open(env, &g->pq, half_share(g), queue_rec_size(g), queue_key_size(g), g->m) != XXL_OK)
			return env->err.code;
		while ((got = xxl_env_sort_next(env, &g->s3, &s)) == 1)
		{
			unsigned char io[IO_REC];
			uint64_t	pu = gperm_apply(&g->perm, g_get_u64(s + 16)),
						pv = gperm_apply(&g->perm, g_get_u64(s + 24));
			int64_t		id = g_key_id(g_get_be(s + 8));
			double		cost = g_key_cost(g_get_be(s));

			memcpy(io, s + 32, 16);
			g_put_u64(io + 16, (uint64_t) id);
			memcpy(io + 24, &cost, 8);
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
contract(xxl_graph *g)
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
		hi = UINT64_MAX - g_get_be(t);
		if (hi < g->base_n)
			break;
		if (xxl_env_queue_pop(env, &g->pq, r) < 0)
			return env->err.code;
		if (g->op == XXL_GRAPH_MSF)
		{
			edge = g_get_be(r + 8);
			lo = g_get_u64(r + 16);
		}
		else
		{
			lo = g_get_be(r + 8);
			edge = g->op == XXL_GRAPH_SF ? g_get_be(r + 16) : 0;
		}
		if (hi != cur)
		{
			cur = hi;
			relink = lo;
			prev_lo = lo;
			g->contracted++;
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
		if (g->op != XXL_GRAPH_MSF)
		{
			if (lo == prev_lo)
				continue;
			prev_lo = lo;
		}
		if (lo == relink)
			continue;
		put_queue_rec(g, nr, lo > relink ? lo : relink, lo > relink ? relink : lo, edge);
		if (xxl_env_queue_push(env, &g->pq, nr) != XXL_OK)
			return env->err.code;
		g->relinked++;
		if (poll_canceled(g))
			return env->err.code;
	}
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
		if (uf_alloc(g, g->base_n) != XXL_OK)
			return env->err.code;
		while ((got = xxl_env_queue_pop(env, &g->pq, r)) == 1)
		{
			uint64_t	hi = UINT64_MAX - g_get_be(r),
						lo = g_get_be(r + 8);

			if (uf_union(g->parent, hi, lo) && g->op == XXL_GRAPH_SF)
			{
				uint64_t	edge = g_get_be(r + 16);

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
			if (uf_union(g->parent, g_get_u64(p), g_get_u64(p + 8)) && g->op == XXL_GRAPH_SF)
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

		/* Kruskal: the remaining edges by rank */
		if (xxl_env_sort_open(env, &g->s4, half_share(g), 0, 24, 8, xxl_pq_size(g->pq.q) + g->special_count, XXL_INPUT_UNBOUNDED) != XXL_OK)
			return env->err.code;
		while ((got = xxl_env_queue_pop(env, &g->pq, r)) == 1)
		{
			unsigned char s4[24];

			memcpy(s4, r + 8, 8);
			g_put_u64(s4 + 8, UINT64_MAX - g_get_be(r));
			memcpy(s4 + 16, r + 16, 8);
			if (xxl_env_sort_put(env, &g->s4, s4) != XXL_OK)
				return env->err.code;
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
		if (xxl_env_sort_sort(env, &g->s4) != XXL_OK || uf_alloc(g, g->base_n) != XXL_OK)
			return env->err.code;
		while ((got = xxl_env_sort_next(env, &g->s4, &s)) == 1)
		{
			if (uf_union(g->parent, g_get_u64(s + 8), g_get_u64(s + 16)))
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
		xxl_env_sort_open(env, &g->fsort, share(g, 1), 0, 8, 8, g->forest_count, XXL_INPUT_UNBOUNDED) != XXL_OK ||
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
		xxl_env_sort_open(env, &g->lsort, share(g, 3), 0, 16, 16, g->contracted, XXL_INPUT_UNBOUNDED) != XXL_OK ||
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
		xxl_env_queue_open(env, &g->msg, share(g, 3), 16, 8, g->contracted) != XXL_OK ||
		xxl_env_sort_open(env, &g->f1, share(g, 3), 0, 16, 16, g->n, XXL_INPUT_UNBOUNDED) != XXL_OK ||
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
		xxl_env_sort_open(env, &g->f3, share(g, 2), 0, 16, 8, g->n, XXL_INPUT_UNBOUNDED) != XXL_OK ||
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

static xxl_status
run_external(xxl_graph *g)
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
	rc = relabel(g);
	if (rc == XXL_OK)
		rc = g->n <= g->semi_max ? run_semi(g) : run_external(g);
	g->run_ns = xxl_now_ns() - g->t_start;
	if (rc != XXL_OK)
		return gfail(g);
	g->state = ST_OUTPUT;
	return XXL_OK;
}

/* Output ------------------------------------------------------------------ */

/* Everything but the statistics can go once the last row is out. */
static void
release_all(xxl_graph *g)
{
	xxl_env  *env = &g->env;

	xxl_spool_reader_close(&g->rd_in);
	xxl_spool_reader_close(&g->rd_map);
	xxl_spool_reader_close(&g->rd_aux);
	xxl_env_sort_close(env, &g->s1, NULL, NULL);
	xxl_env_sort_close(env, &g->s2, NULL, NULL);
	xxl_env_sort_close(env, &g->s3, NULL, NULL);
	xxl_env_sort_close(env, &g->s4, NULL, NULL);
	xxl_env_sort_close(env, &g->lsort, NULL, NULL);
	xxl_env_sort_close(env, &g->f1, NULL, NULL);
	xxl_env_sort_close(env, &g->f2, NULL, NULL);
	xxl_env_sort_close(env, &g->f3, NULL, NULL);
	xxl_env_sort_close(env, &g->fsort, NULL, NULL);
	xxl_env_queue_close(env, &g->pq);
	xxl_env_queue_close(env, &g->msg);
	xxl_spool_free(&g->input);
	xxl_spool_free(&g->map);
	xxl_spool_free(&g->info);
	xxl_spool_free(&g->log);
	xxl_spool_free(&g->forest);
	xxl_spool_free(&g->special);
	xxl_spool_free(&g->basereps);
	uf_free(g);
}

static int
finish_output(xxl_graph *g)
{
	if (g->op != XXL_GRAPH_CC)
		g->components = g->n - g->forest_edges;
	g->state = ST_DONE;
	release_all(g);
	return 0;
}

static bool
check_output(xxl_graph *g, bool want_cc)
{
	if (g->state == ST_OUTPUT && (g->op == XXL_GRAPH_CC) == want_cc)
		return true;
	if (g->state == ST_DONE && (g->op == XXL_GRAPH_CC) == want_cc)
		return false;
	if (g->state == ST_INPUT)
		xxl_error_set(&g->env.err, XXL_EINVAL, 0, "xxl_graph_run must be called before reading");
	else if (g->state != ST_FAILED)
		xxl_error_set(&g->env.err, XXL_EINVAL, 0, "%s returns %s", want_cc ? "xxl_graph_next_node" :
					  "xxl_graph_next_edge", want_cc ? "edges" : "nodes");
	return false;
}

static int
next_node(xxl_graph *g, int64_t *node, int64_t *component)
{
	xxl_env  *env = &g->env;
	const unsigned char *p;

	if (g->out == OUT_CC_SEMI)
	{
		uint64_t	v = g->out_pos,
					r;
		int64_t		orig;

		if (v == g->n)
			return finish_output(g);
		if (xxl_spool_read(&g->rd_map, 8, &p) != XXL_OK)
			return -1;
		orig = (int64_t) g_get_u64(p);
		r = g->parent[v];
		/* a root's slot takes its original id: its members come later */
		if (r == v)
		{
			g->parent[v] = (uint64_t) orig;
			g->components++;
			*component = orig;
		}
		else
			*component = (int64_t) g->parent[r];
		*node = orig;
		g->out_pos++;
	}
	else
	{
		const unsigned char *s;
		int			got = xxl_env_sort_next(env, &g->f3, &s);

		if (got < 0)
			return -1;
		if (got == 0)
			return finish_output(g);
		if (g_get_be(s) != g->out_pos)
		{
			xxl_error_set(&env->err, XXL_EIO, 0, "node %llu lost in the component expansion",
						  (unsigned long long) g->out_pos);
			return -1;
		}
		if (xxl_spool_read(&g->rd_map, 8, &p) != XXL_OK)
			return -1;
		*node = (int64_t) g_get_u64(p);
		*component = (int64_t) g_get_u64(s + 8);
		g->out_pos++;
	}
	if (poll_canceled(g))
		return -1;
	return 1;
}

int
xxl_graph_next_node(xxl_graph *g, int64_t *node, int64_t *component)
{
	uint64_t	t0;
	int			rc;

	if (!check_output(g, true))
		return g->state == ST_DONE ? 0 : -(int) gfail(g);
	t0 = xxl_now_ns();
	rc = next_node(g, node, component);
	g->output_ns += xxl_now_ns() - t0;
	if (rc < 0)
		return -(int) gfail(g);
	return rc;
}

static void
decode_io(const unsigned char *io, int64_t *id, int64_t *source, int64_t *target, double *cost)
{
	*source = (int64_t) g_get_u64(io);
	*target = (int64_t) g_get_u64(io + 8);
	*id = (int64_t) g_get_u64(io + 16);
	memcpy(cost, io + 24, 8);
}

static int
next_edge(xxl_graph *g, int64_t *id, int64_t *source, int64_t *target, double *cost)
{
	xxl_env  *env = &g->env;

	for (;;)
	{
		if (poll_canceled(g))
			return -1;
		if (g->out == OUT_SF_SEMI)
		{
			uint64_t	e,
						du,
						dv;
			const unsigned char *io;
			int			got = next_pair(g, &e, &du, &dv);

			if (got <= 0)
				return got < 0 ? -1 : finish_output(g);
			if (xxl_spool_read(&g->rd_in, IO_REC, &io) != XXL_OK)
				return -1;
			if (uf_union(g->parent, du, dv))
			{
				decode_io(io, id, source, target, cost);
				return 1;
			}
		}
		else if (g->out == OUT_MSF_SEMI)
		{
			const unsigned char *s;
			int			got = xxl_env_sort_next(env, &g->s3, &s);

			if (got <= 0)
				return got < 0 ? -1 : finish_output(g);
			if (uf_union(g->parent, g_get_u64(s + 16), g_get_u64(s + 24)))
			{
				*cost = g_key_cost(g_get_be(s));
				*id = g_key_id(g_get_be(s + 8));
				*source = (int64_t) g_get_u64(s + 32);
				*target = (int64_t) g_get_u64(s + 40);
				return 1;
			}
		}
		else
		{
			const unsigned char *s,
					   *io = NULL;
			uint64_t	want;
			int			got = xxl_env_sort_next(env, &g->fsort, &s);

			if (got <= 0)
				return got < 0 ? -1 : finish_output(g);
			want = g_get_be(s);
			if (want < g->out_pos)
			{
				xxl_error_set(&env->err, XXL_EIO, 0, "forest edge %llu repeated",
							  (unsigned long long) want);
				return -1;
			}
			while (g->out_pos <= want)
			{
				if (xxl_spool_read(&g->rd_in, IO_REC, &io) != XXL_OK)
					return -1;
				g->out_pos++;
			}
			decode_io(io, id, source, target, cost);
			return 1;
		}
	}
}

int
xxl_graph_next_edge(xxl_graph *g, int64_t *id, int64_t *source, int64_t *target, double *cost)
{
	uint64_t	t0;
	int			rc;

	if (!check_output(g, false))
		return g->state == ST_DONE ? 0 : -(int) gfail(g);
	t0 = xxl_now_ns();
	rc = next_edge(g, id, source, target, cost);
	g->output_ns += xxl_now_ns() - t0;
	if (rc < 0)
		return -(int) gfail(g);
	if (rc > 0)
		g->forest_edges++;
	return rc;
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
	st->nodes = g->n;
	st->semi_nodes_max = g->semi_max;
	st->base_nodes = g->path == XXL_GRAPH_EXTERNAL ? g->base_n : 0;
	st->contracted_nodes = g->contracted;
	st->relinked_edges = g->relinked;
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
	st->memory_limit = env->budget.limit;
	st->run_ns = g->run_ns ? g->run_ns : xxl_now_ns() - g->t_start;
	st->output_ns = g->output_ns;
}

void
xxl_graph_destroy(xxl_graph *g)
{
	xxl_budget	budget;

	if (g == NULL)
		return;
	release_all(g);
	xxl_env_close(&g->env);
	budget = g->env.budget;
	xxl_budget_free(&budget, g, sizeof(*g));
}
