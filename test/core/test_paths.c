/*
 * test_paths.c — unit tests of BFS and shortest paths
 * (src/core/graph/xxl_paths.h) against oracles written here: Dijkstra with
 * an O(n^2) scan and a plain BFS over the distinct ids, with pgRouting's
 * rule for which directions exist.
 *
 * Every case runs on both paths: at a roomy budget (in memory, which must
 * then spill nothing) and forced external at the smallest budget, where the
 * queue spills and the page caches miss; a sweep of budgets runs the
 * semi-external path in between (links spooled, arcs paged).  Checks: the reached set and every
 * distance / depth equal the oracle's; every row's (pred, edge) is an input
 * edge in an allowed direction whose cost adds up (integer costs: exact);
 * a target's path is a chain of such edges ending at the target with edge
 * -1 and the oracle's total; the budget holds; no spill file is left, also
 * after a cancel; NaN costs are rejected.  The external BFS runs as MR and
 * as MM (with the chosen cluster size and with clusters of 3 tour arcs, so
 * that arcs wait in the hot pool), and says which ran.
 */
#include "xxl_test.h"

#include <math.h>

#include "core/graph/xxl_paths.h"

#define MB (1024 * 1024)
#define ROOMY (64 * MB)

typedef struct pedge
{
	int64_t		s,
				t,
				id;
	double		c,
				rc;
} pedge;

typedef struct pgraph
{
	pedge	   *e;
	size_t		n,
				cap;
} pgraph;

static void
padd(pgraph *g, int64_t s, int64_t t, int64_t id, double c, double rc)
{
	if (g->n == g->cap)
	{
		g->cap = g->cap ? 2 * g->cap : 64;
		g->e = realloc(g->e, g->cap * sizeof(pedge));
	}
	g->e[g->n++] = (pedge) {s, t, id, c, rc};
}

/* Oracle --------------------------------------------------------------------- */

typedef struct oarc
{
	size_t		from,
				to;
	double		w;
	int64_t		id;
} oarc;

typedef struct oracle
{
	int64_t    *ids;
	size_t		n;
	oarc	   *arcs;			/* by tail: node x's are [first[x], first[x + 1]) */
	size_t		narcs;
	size_t	   *first;
	double	   *dist;			/* INFINITY: not reached */
} oracle;

static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

static size_t
o_find(const oracle *o, int64_t id)
{
	int64_t    *hit = bsearch(&id, o->ids, o->n, sizeof(int64_t), cmp_i64);

	return hit ? (size_t) (hit - o->ids) : SIZE_MAX;
}

static void
o_arc(oracle *o, int64_t a, int64_t b, double w, int64_t id)
{
	o->arcs[o->narcs++] = (oarc) {o_find(o, a), o_find(o, b), w, id};
}

static void
oracle_build(oracle *o, const pgraph *g, bool directed)
{
	memset(o, 0, sizeof(*o));
	o->ids = malloc((2 * g->n + 1) * sizeof(int64_t));
	for (size_t i = 0; i < g->n; i++)
	{
		o->ids[o->n++] = g->e[i].s;
		o->ids[o->n++] = g->e[i].t;
	}
	qsort(o->ids, o->n, sizeof(int64_t), cmp_i64);
	{
		size_t		k = 0;

		for (size_t i = 0; i < o->n; i++)
			if (k == 0 || o->ids[k - 1] != o->ids[i])
				o->ids[k++] = o->ids[i];
		o->n = k;
	}
	o->arcs = malloc((4 * g->n + 1) * sizeof(oarc));
	for (size_t i = 0; i < g->n; i++)
	{
		const pedge *e = &g->e[i];

		if (e->c >= 0)
		{
			o_arc(o, e->s, e->t, e->c, e->id);
			if (!directed)
				o_arc(o, e->t, e->s, e->c, e->id);
		}
		if (e->rc >= 0)
		{
			o_arc(o, e->t, e->s, e->rc, e->id);
			if (!directed)
				o_arc(o, e->s, e->t, e->rc, e->id);
		}
	}
	o->dist = malloc((o->n + 1) * sizeof(double));
	/* the arcs by tail, stably */
	{
		oarc	   *sorted = malloc((o->narcs + 1) * sizeof(oarc));
		size_t	   *cur = malloc((o->n + 1) * sizeof(size_t));

		o->first = calloc(o->n + 2, sizeof(size_t));
		for (size_t a = 0; a < o->narcs; a++)
			o->first[o->arcs[a].from + 1]++;
		for (size_t x = 0; x < o->n; x++)
			o->first[x + 1] += o->first[x];
		memcpy(cur, o->first, o->n * sizeof(size_t));
		for (size_t a = 0; a < o->narcs; a++)
			sorted[cur[o->arcs[a].from]++] = o->arcs[a];
		free(cur);
		free(o->arcs);
		o->arcs = sorted;
	}
}

/* Dijkstra (bfs: every arc costs 1) from the sources, O(n^2 + m). */
static void
oracle_run(oracle *o, const int64_t *src, size_t nsrc, bool bfs)
{
	bool	   *done = calloc(o->n + 1, 1);
	const size_t *first = o->first;
	const oarc *sorted = o->arcs;

	for (size_t x = 0; x < o->n; x++)
		o->dist[x] = INFINITY;
	for (size_t i = 0; i < nsrc; i++)
		if (o_find(o, src[i]) != SIZE_MAX)
			o->dist[o_find(o, src[i])] = 0;
	for (;;)
	{
		size_t		u = SIZE_MAX;

		for (size_t x = 0; x < o->n; x++)
			if (!done[x] && o->dist[x] < INFINITY && (u == SIZE_MAX || o->dist[x] < o->dist[u]))
				u = x;
		if (u == SIZE_MAX)
			break;
		done[u] = true;
		for (size_t a = first[u]; a < first[u + 1]; a++)
		{
			double		nd = o->dist[u] + (bfs ? 1 : sorted[a].w);

			if (nd < o->dist[sorted[a].to])
				o->dist[sorted[a].to] = nd;
		}
	}
	free(done);
}

static void
oracle_free(oracle *o)
{
	free(o->ids);
	free(o->arcs);
	free(o->first);
	free(o->dist);
}

/* Whether an arc pred -> node with this id exists, of cost w (or any, for BFS). */
static bool
has_arc(const oracle *o, size_t from, size_t to, int64_t id, double *w)
{
	if (from >= o->n)
		return false;
	for (size_t a = o->first[from]; a < o->first[from + 1]; a++)
		if (o->arcs[a].to == to && o->arcs[a].id == id &&
			(isnan(*w) || o->arcs[a].w == *w))
		{
			*w = o->arcs[a].w;
			return true;
		}
	return false;
}

/* Running the operator -------------------------------------------------------- */

static int	cancel_after;

/* The external BFS the next runs ask for, and MM's tour arcs per cluster. */
static xxl_paths_bfs t_bfs = XXL_PATHS_BFS_AUTO;
static xxl_paths_sssp t_sssp = XXL_PATHS_SSSP_AUTO;
static uint64_t t_mu = 0;
/* The threads the next runs may use, and a budget for their in-memory start (0: ROOMY). */
static int	t_threads = 1;
static size_t t_memory = 0;

/* The external budget: the smallest, or what MM's nested spanning forest needs. */
static size_t
ext_memory(void)
{
	return t_bfs == XXL_PATHS_BFS_MM || t_sssp == XXL_PATHS_SSSP_MO ?
		3 * xxl_paths_min_memory() : xxl_paths_min_memory();
}

static bool
cancel_hook(void *arg)
{
	(void) arg;
	return cancel_after > 0 && --cancel_after == 0;
}

static xxl_paths_config
config(size_t memory, bool external, xxl_paths_op op, bool directed, const int64_t *src,
	   size_t nsrc)
{
	xxl_paths_config c;

	memset(&c, 0, sizeof(c));
	c.res.memory = memory;
	c.res.disk.dirs = xt_dirs;
	c.res.disk.ndisks = 2;
	c.res.disk.file_prefix = "test_paths";
	c.res.disk.strategy = XXL_ALLOC_RANDOM_CYCLING;
	c.res.disk.seed = 7;
	c.res.cancel = cancel_hook;
	c.res.threads = t_threads;
	c.op = op;
	c.directed = directed;
	c.sources = src;
	c.nsources = nsrc;
	c.max_distance = INFINITY;
	c.max_depth = UINT64_MAX;
	c.force_external = external;
	c.bfs = t_bfs;
	c.sssp = t_sssp;
	c.cluster_mu = t_mu;
	return c;
}

static xxl_paths *
run_on(const xxl_paths_config *c, const pgraph *g, xxl_status *rc)
{
	xxl_error	err;
	xxl_paths  *p;

	xxl_error_clear(&err);
	p = xxl_paths_create(c, &err);
	*rc = p ? XXL_OK : err.code;
	for (size_t i = 0; p && i < g->n && *rc == XXL_OK; i++)
		*rc = xxl_paths_put_edge(p, g->e[i].s, g->e[i].t, g->e[i].id, g->e[i].c, g->e[i].rc);
	if (p && *rc == XXL_OK)
		*rc = xxl_paths_run(p);
	return p;
}

/* The statistics of check_tree's last run. */
static xxl_paths_stats t_last;

/* Run one case on one path and check it against the oracle. */
static void
check_tree(const pgraph *g, bool directed, xxl_paths_op op, const int64_t *src, size_t nsrc,
		   bool external, double max_distance, uint64_t max_depth)
{
	xxl_paths_config c = config(external ? ext_memory() : t_memory ? t_memory : ROOMY,
								external, op, directed, src, nsrc);
	oracle		o;
	xxl_status	rc;
	xxl_paths  *p;
	xxl_paths_stats st;
	size_t		rows = 0,
				expect = 0;
	bool	   *seen;
	int64_t		node,
				pred,
				edge;
	double		d;
	int			got;

	c.max_distance = max_distance;
	c.max_depth = max_depth;
	oracle_build(&o, g, directed);
	oracle_run(&o, src, nsrc, op == XXL_PATHS_BFS);
	seen = calloc(o.n + 1, 1);
	p = run_on(&c, g, &rc);
	CHECK_MSG(rc == XXL_OK, "run: %s", p ? xxl_paths_error(p)->message : "create failed");
	while (rc == XXL_OK && (got = xxl_paths_next(p, &node, &d, &pred, &edge)) == 1)
	{
		size_t		x = o_find(&o, node),
					y = o_find(&o, pred);
		double		w = op == XXL_PATHS_BFS ? NAN : d - (y != SIZE_MAX ? o.dist[y] : 0);

		rows++;
		REQUIRE_MSG(x != SIZE_MAX && y != SIZE_MAX, "row for unknown node %lld", (long long) node);
		CHECK_MSG(!seen[x], "node %lld twice", (long long) node);
		seen[x] = true;
		CHECK_MSG(d == o.dist[x], "node %lld: distance %g, oracle %g", (long long) node, d,
				  o.dist[x]);
		if (edge == -1)
			CHECK_MSG(d == 0 && pred == node, "root %lld", (long long) node);
		else
			CHECK_MSG(has_arc(&o, y, x, edge, &w) && (op == XXL_PATHS_BFS ? o.dist[y] + 1 == d :
													  o.dist[y] + w == d),
					  "node %lld: %lld via edge %lld is no tree edge", (long long) node,
					  (long long) pred, (long long) edge);
	}
	CHECK(rc != XXL_OK || got == 0);
	for (size_t x = 0; x < o.n; x++)
		if (o.dist[x] < INFINITY &&
			(op == XXL_PATHS_BFS ? o.dist[x] <= (double) max_depth : o.dist[x] <= max_distance))
			expect++;
	CHECK_EQ(rows, expect);
	xxl_paths_stats_get(p, &st);
	if (t_memory == 0)
		CHECK_EQ(st.path, external ? XXL_PATHS_EXTERNAL : XXL_PATHS_IN_MEMORY);
	if (external && op == XXL_PATHS_BFS && t_bfs != XXL_PATHS_BFS_AUTO && st.links > 0)
	{
		CHECK_EQ(st.bfs, t_bfs);
		if (t_bfs == XXL_PATHS_BFS_MM)
			CHECK_LE(st.cluster_loads, st.clusters);
	}
	if (external && op == XXL_PATHS_SSSP && t_sssp != XXL_PATHS_SSSP_AUTO && st.links > 0)
		CHECK_EQ(st.sssp, t_sssp);
	CHECK_LE(st.memory_peak, st.memory_limit);
	if (!external && st.path == XXL_PATHS_IN_MEMORY)
		CHECK_EQ(st.bytes_written, 0);
	xxl_paths_destroy(p);
	CHECK_EQ(xt_spill_files(), 0);
	free(seen);
	oracle_free(&o);
	t_last = st;
}

static void
check_path(const pgraph *g, bool directed, int64_t s, int64_t t, bool external)
{
	xxl_paths_config c = config(external ? ext_memory() : t_memory ? t_memory : ROOMY, external,
								XXL_PATHS_SSSP, directed, &s, 1);
	oracle		o;
	xxl_status	rc;
	xxl_paths  *p;
	int64_t		node,
				edge,
				prev = 0,
				prev_edge = -1;
	double		cost,
				agg,
				prev_agg = 0,
				prev_cost = 0;
	size_t		steps = 0;
	int			got;

	c.has_target = true;
	c.target = t;
	oracle_build(&o, g, directed);
	oracle_run(&o, &s, 1, false);
	p = run_on(&c, g, &rc);
	CHECK_STATUS(rc, XXL_OK);
	while (rc == XXL_OK && (got = xxl_paths_next_step(p, &node, &edge, &cost, &agg)) == 1)
	{
		if (steps == 0)
			CHECK(node == s && agg == 0);
		else
		{
			double		w = prev_cost;

			CHECK_MSG(has_arc(&o, o_find(&o, prev), o_find(&o, node), prev_edge, &w),
					  "step %zu: no edge %lld from %lld to %lld", steps, (long long) prev_edge,
					  (long long) prev, (long long) node);
			CHECK(agg == prev_agg + prev_cost);
		}
		prev = node;
		prev_edge = edge;
		prev_cost = cost;
		prev_agg = agg;
		steps++;
	}
	if (s != t && o_find(&o, t) != SIZE_MAX && o.dist[o_find(&o, t)] < INFINITY)
	{
		CHECK(steps >= 2);
		CHECK(prev == t && prev_edge == -1 && prev_cost == 0);
		CHECK_MSG(prev_agg == o.dist[o_find(&o, t)], "path %lld -> %lld costs %g, oracle %g",
				  (long long) s, (long long) t, prev_agg, o.dist[o_find(&o, t)]);
	}
	else
		CHECK_EQ(steps, 0);
	xxl_paths_destroy(p);
	CHECK_EQ(xt_spill_files(), 0);
	oracle_free(&o);
}

/* The external BFS as MR, as MM, and as MM with tiny clusters. */
static void
check_bfs_variants(const pgraph *g, bool directed, const int64_t *src, size_t nsrc,
				   uint64_t max_depth)
{
	static const xxl_paths_bfs v[3] = {XXL_PATHS_BFS_MR, XXL_PATHS_BFS_MM, XXL_PATHS_BFS_MM};
	static const uint64_t mu[3] = {0, 0, 3};

	for (int i = 0; i < 3; i++)
	{
		t_bfs = v[i];
		t_mu = mu[i];
		check_tree(g, directed, XXL_PATHS_BFS, src, nsrc, true, INFINITY, max_depth);
	}
	t_bfs = XXL_PATHS_BFS_AUTO;
	t_mu = 0;
}

/* The external shortest paths as Meyer-Osipov, with chosen and with tiny clusters. */
static void
check_sssp_variants(const pgraph *g, bool directed, const int64_t *src, size_t nsrc,
					double max_distance)
{
	t_sssp = XXL_PATHS_SSSP_MO;
	for (int i = 0; i < 2; i++)
	{
		t_mu = i ? 3 : 0;
		check_tree(g, directed, XXL_PATHS_SSSP, src, nsrc, true, max_distance, UINT64_MAX);
	}
	t_sssp = XXL_PATHS_SSSP_AUTO;
	t_mu = 0;
}

/* A target's path, external, as Meyer-Osipov. */
static void
check_path_mo(const pgraph *g, bool directed, int64_t s, int64_t t)
{
	t_sssp = XXL_PATHS_SSSP_MO;
	check_path(g, directed, s, t, true);
	t_sssp = XXL_PATHS_SSSP_AUTO;
}

/* Every check on both paths, both directions, SSSP and BFS. */
static void
check_all(const pgraph *g, const int64_t *src, size_t nsrc)
{
	for (int ext = 0; ext < 2; ext++)
		for (int dir = 0; dir < 2; dir++)
		{
			check_tree(g, dir, XXL_PATHS_SSSP, src, nsrc, ext, INFINITY, UINT64_MAX);
			check_tree(g, dir, XXL_PATHS_BFS, src, nsrc, ext, INFINITY, UINT64_MAX);
		}
	for (int dir = 0; dir < 2; dir++)
	{
		check_bfs_variants(g, dir, src, nsrc, UINT64_MAX);
		check_sssp_variants(g, dir, src, nsrc, INFINITY);
	}
}

/* Graphs ------------------------------------------------------------------------ */

static uint64_t rng = 88172645463325252ULL;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A random graph with integer costs (0 included), absent directions, sparse ids. */
static void
random_graph(pgraph *g, int nodes, int edges, int64_t base, int64_t stride)
{
	for (int i = 0; i < edges; i++)
	{
		int64_t		s = base + (int64_t) (rnd() % nodes) * stride,
					t = base + (int64_t) (rnd() % nodes) * stride;
		double		c = (double) (rnd() % 10) - (rnd() % 5 == 0 ? 20 : 0),
					rc = (double) (rnd() % 10) - (rnd() % 3 == 0 ? 20 : 0);

		padd(g, s, t, 1000 + i, c, rc);
	}
}

/* pgRouting's documentation sample graph (3.4), edges id 1..18. */
static void
sample_graph(pgraph *g)
{
	static const double e[18][5] = {
		{1, 5, 6, 1, 1}, {2, 6, 10, -1, 1}, {3, 10, 15, -1, 1}, {4, 6, 7, 1, 1},
		{5, 10, 11, 1, -1}, {6, 1, 3, 1, 1}, {7, 3, 7, 1, 1}, {8, 7, 11, 1, 1},
		{9, 11, 16, 1, 1}, {10, 7, 8, 1, 1}, {11, 11, 12, 1, -1}, {12, 8, 12, 1, -1},
		{13, 12, 17, 1, -1}, {14, 8, 9, 1, 1}, {15, 16, 17, 1, 1}, {16, 15, 16, 1, 1},
		{17, 2, 4, 1, 1}, {18, 13, 14, 1, 1}};

	for (int i = 0; i < 18; i++)
		padd(g, (int64_t) e[i][1], (int64_t) e[i][2], (int64_t) e[i][0], e[i][3], e[i][4]);
}

XT_TEST(sample_graph_every_source)
{
	pgraph		g = {0};

	sample_graph(&g);
	for (int64_t s = 1; s <= 17; s++)
	{
		check_all(&g, &s, 1);
		for (int64_t t = 1; t <= 17; t += 3)
			for (int dir = 0; dir < 2; dir++)
			{
				for (int ext = 0; ext < 2; ext++)
					check_path(&g, dir, s, t, ext);
				check_path_mo(&g, dir, s, t);
			}
	}
	free(g.e);
}

XT_TEST(random_graphs)
{
	for (int round = 0; round < 4; round++)
	{
		pgraph		g = {0};
		int64_t		src[3] = {(int64_t) (rnd() % 300), (int64_t) (rnd() % 300), 5};

		random_graph(&g, 300, 900 + round * 300, 0, 1);
		check_all(&g, src, 1);
		check_all(&g, src, 3);
		for (int ext = 0; ext < 2; ext++)
		{
			check_tree(&g, true, XXL_PATHS_SSSP, src, 1, ext, 7.0, UINT64_MAX);
			check_tree(&g, false, XXL_PATHS_BFS, src, 1, ext, INFINITY, 2);
			check_bfs_variants(&g, false, src, 1, 2);
			check_sssp_variants(&g, true, src, 1, 7.0);
			check_tree(&g, true, XXL_PATHS_BFS, src, 1, ext, INFINITY, 0);
			check_path(&g, round % 2, src[0], src[1], ext);
			check_path(&g, round % 2, src[0], 123456789, ext);
		}
		check_path_mo(&g, round % 2, src[0], src[1]);
		free(g.e);
	}
}

XT_TEST(extreme_ids_self_loops_multi_edges)
{
	pgraph		g = {0};
	int64_t		src[2] = {INT64_MIN, INT64_MAX};

	padd(&g, INT64_MIN, INT64_MAX, 1, 3, -1);
	padd(&g, INT64_MIN, INT64_MAX, 2, 2, -1);	/* parallel, cheaper */
	padd(&g, INT64_MAX, INT64_MAX, 3, 1, 1);	/* self loop */
	padd(&g, INT64_MAX, -1, 4, 0, 0);
	padd(&g, -1, 0, 5, 5, -1);
	padd(&g, 42, 43, 6, 1, 1);	/* another component */
	check_all(&g, src, 1);
	check_all(&g, src + 1, 1);
	check_all(&g, src, 2);
	for (int ext = 0; ext < 2; ext++)
	{
		check_path(&g, true, INT64_MIN, 0, ext);
		check_path(&g, true, INT64_MIN, 42, ext);
		check_path(&g, false, 0, INT64_MIN, ext);
	}
	free(g.e);
}

XT_TEST(source_not_in_graph)
{
	pgraph		g = {0};
	int64_t		src = 99;
	xxl_paths_config c = config(ROOMY, false, XXL_PATHS_SSSP, true, &src, 1);
	xxl_status	rc;
	xxl_paths  *p;
	int64_t		a,
				b,
				e;
	double		d;

	padd(&g, 1, 2, 1, 1, 1);
	p = run_on(&c, &g, &rc);
	CHECK_STATUS(rc, XXL_OK);
	CHECK_EQ(xxl_paths_next(p, &a, &d, &b, &e), 0);
	xxl_paths_destroy(p);
	check_all(&g, &src, 1);
	free(g.e);
}

/*
 * The external path numbers ids that span at most two per link by the ids
 * themselves (less the smallest), without its numbering sorts: ids with a
 * gap, a source in the gap (no node: no row), a node that is only a
 * target, a negative smallest id; and spread ids still numbered by sorts.
 */
XT_TEST(external_ids_by_id)
{
	pgraph		g = {0};
	int64_t		src[3] = {-3, 55, 100};
	int64_t		gap = 55;
	bool		seen[104] = {0};
	uint64_t	distinct = 0;

	for (int i = 0; i < 400; i++)
	{
		int64_t		a = (int64_t) (rnd() % 90),
					b = (int64_t) (rnd() % 90);

		a = a >= 50 ? a + 10 : a;	/* 50..59: no node */
		b = b >= 50 ? b + 10 : b;
		padd(&g, a - 3, b - 3, 1 + i, (double) (rnd() % 7), i % 3 ? 1.0 : -1.0);
	}
	padd(&g, 7, 100, 999, 2, -1);	/* 100: only a target */
	for (int dir = 0; dir < 2; dir++)
		for (int op = 0; op < 2; op++)
		{
			xxl_paths_op o = op ? XXL_PATHS_BFS : XXL_PATHS_SSSP;

			check_tree(&g, dir, o, src, 3, true, INFINITY, UINT64_MAX);
			CHECK(t_last.ids_by_id);
			CHECK_EQ(t_last.nodes, 104);
			check_tree(&g, dir, o, &gap, 1, true, INFINITY, UINT64_MAX);
			CHECK(t_last.ids_by_id);
			CHECK_EQ(t_last.reached, 0);
		}
	check_path(&g, true, -3, 100, true);
	check_path(&g, true, -3, 55, true);
	check_path(&g, false, 100, 0, true);
	/* spread: 400 links over ids 1000 apart */
	for (size_t i = 0; i < g.n; i++)
		for (int side = 0; side < 2; side++)
		{
			int64_t		id = side ? g.e[i].t : g.e[i].s;

			distinct += !seen[id + 3];
			seen[id + 3] = true;
		}
	for (size_t i = 0; i < g.n; i++)
	{
		g.e[i].s *= 1000;
		g.e[i].t *= 1000;
	}
	src[1] = 55000;
	src[2] = 100000;
	check_tree(&g, false, XXL_PATHS_BFS, src, 3, true, INFINITY, UINT64_MAX);
	CHECK(!t_last.ids_by_id);
	CHECK_EQ(t_last.nodes, distinct);
	free(g.e);
}

/* A long path and a grid: large diameters, many BFS levels, external caches. */
XT_TEST(line_and_grid)
{
	pgraph		g = {0};
	int64_t		s = 0;
	const int	side = xt_quick() ? 30 : 60;

	for (int i = 0; i < 3000; i++)
		padd(&g, (int64_t) ((uint64_t) i * 2654435761u % 100003),
			 (int64_t) ((uint64_t) (i + 1) * 2654435761u % 100003), i, 1 + i % 3, -1);
	check_all(&g, &s, 1);
	free(g.e);
	memset(&g, 0, sizeof(g));
	for (int r = 0; r < side; r++)
		for (int q = 0; q < side; q++)
		{
			if (q + 1 < side)
				padd(&g, r * side + q, r * side + q + 1, 2 * (r * side + q), 1 + (r + q) % 4, 1);
			if (r + 1 < side)
				padd(&g, r * side + q, (r + 1) * side + q, 2 * (r * side + q) + 1, 2, 3);
		}
	check_all(&g, &s, 1);
	check_path(&g, false, 0, side * side - 1, true);
	check_path(&g, true, 0, side * side - 1, false);
	check_path_mo(&g, false, 0, side * side - 1);
	free(g.e);
}

/* Enough edges at the smallest budget that the external queue spills runs. */
XT_TEST(external_queue_spills)
{
	pgraph		g = {0};
	int64_t		s = 1;
	xxl_paths_config c = config(xxl_paths_min_memory(), true, XXL_PATHS_SSSP, true, &s, 1);
	xxl_status	rc;
	xxl_paths  *p;
	xxl_paths_stats st;

	random_graph(&g, 6000, 50000, -5000000000LL, 7);
	for (size_t i = 0; i < g.n; i++)
		g.e[i].c = fabs(g.e[i].c) + 1;
	s = g.e[0].s;
	p = run_on(&c, &g, &rc);
	CHECK_STATUS(rc, XXL_OK);
	xxl_paths_stats_get(p, &st);
	CHECK_EQ(st.path, XXL_PATHS_EXTERNAL);
	CHECK(st.pq_bytes > 0);
	CHECK(st.cache_misses > 0);
	CHECK_LE(st.memory_peak, st.memory_limit);
	xxl_paths_destroy(p);
	check_tree(&g, true, XXL_PATHS_SSSP, &s, 1, true, INFINITY, UINT64_MAX);
	check_tree(&g, false, XXL_PATHS_BFS, &s, 1, true, INFINITY, UINT64_MAX);
	/* levels too big for their buffers go through sorters, in MR and in MM */
	for (int v = 0; v < 2; v++)
	{
		t_bfs = v ? XXL_PATHS_BFS_MM : XXL_PATHS_BFS_MR;
		c = config(ext_memory(), true, XXL_PATHS_BFS, false, &s, 1);
		p = run_on(&c, &g, &rc);
		CHECK_STATUS(rc, XXL_OK);
		xxl_paths_stats_get(p, &st);
		CHECK_EQ(st.bfs, t_bfs);
		CHECK(st.level_spills > 0);
		xxl_paths_destroy(p);
		check_bfs_variants(&g, false, &s, 1, UINT64_MAX);
	}
	t_bfs = XXL_PATHS_BFS_AUTO;
	free(g.e);
}

/*
 * MM on a connected grid: the clustering forest spans it, every cluster is
 * read exactly once, and small clusters leave arcs in the hot pool for
 * later levels.
 */
XT_TEST(mm_clusters_and_pool)
{
	pgraph		g = {0};
	int64_t		s = 0;
	const int	side = 40;

	for (int r = 0; r < side; r++)
		for (int q = 0; q < side; q++)
		{
			if (q + 1 < side)
				padd(&g, r * side + q, r * side + q + 1, 2 * (r * side + q), 1, -1);
			if (r + 1 < side)
				padd(&g, r * side + q, (r + 1) * side + q, 2 * (r * side + q) + 1, 1, -1);
		}
	for (uint64_t mu = 4; mu <= 64; mu *= 4)
	{
		xxl_paths_config c;
		xxl_status	rc;
		xxl_paths  *p;
		xxl_paths_stats st;

		t_bfs = XXL_PATHS_BFS_MM;
		t_mu = mu;
		c = config(ext_memory(), true, XXL_PATHS_BFS, false, &s, 1);
		p = run_on(&c, &g, &rc);
		CHECK_STATUS(rc, XXL_OK);
		xxl_paths_stats_get(p, &st);
		CHECK_EQ(st.bfs, XXL_PATHS_BFS_MM);
		CHECK_EQ(st.tree_edges, (uint64_t) side * side - 1);
		/* a tour of 2(n - 1) arcs in chunks of mu, some of them only revisits */
		CHECK_LE(st.clusters, (2 * st.tree_edges + mu - 1) / mu);
		CHECK(st.clusters >= (uint64_t) side * side / mu);
		CHECK_EQ(st.cluster_loads, st.clusters);
		CHECK(st.pool_hits > 0);
		CHECK(st.pool_peak > 0);
		CHECK_EQ(st.reached, (uint64_t) side * side);
		CHECK_EQ(st.levels, 2 * (uint64_t) side - 1);
		xxl_paths_destroy(p);
		check_tree(&g, false, XXL_PATHS_BFS, &s, 1, true, INFINITY, UINT64_MAX);
	}
	t_bfs = XXL_PATHS_BFS_AUTO;
	t_mu = 0;
	CHECK_EQ(xt_spill_files(), 0);
	free(g.e);
}

/* A run canceled at the after-th poll: canceled or done, nothing left behind. */
static void
run_canceled(const xxl_paths_config *c, const pgraph *g, int after)
{
	xxl_status	rc;
	xxl_paths  *p;

	cancel_after = after;
	p = run_on(c, g, &rc);
	cancel_after = 0;
	CHECK(rc == XXL_OK || rc == XXL_ECANCELED);
	xxl_paths_destroy(p);
	CHECK_EQ(xt_spill_files(), 0);
}

/*
 * MO's categories and batches: costs 0 and 1..999 on a grid, plus an edge
 * of cost 10^6 at every node (category 20: never due before the end, so
 * the settle log fills and is flushed), and the answers still the
 * oracle's.
 */
XT_TEST(mo_categories_and_batches)
{
	pgraph		g = {0};
	int64_t		s = 0;
	const int	side = 70;
	xxl_paths_config c;
	xxl_status	rc;
	xxl_paths  *p;
	xxl_paths_stats st;

	for (int r = 0; r < side; r++)
		for (int q = 0; q < side; q++)
		{
			double		w = (r * 7 + q * 13) % 17 == 0 ? 0 : 1 + (double) (rnd() % 1000);

			if (q + 1 < side)
				padd(&g, r * side + q, r * side + q + 1, 2 * (r * side + q), w, w);
			if (r + 1 < side)
				padd(&g, r * side + q, (r + 1) * side + q, 2 * (r * side + q) + 1, 1000 - w, -1);
			padd(&g, r * side + q, (r * side + q + 2 * side) % (side * side),
				 1000000 + r * side + q, 1e6, -1);
		}
	t_sssp = XXL_PATHS_SSSP_MO;
	c = config(ext_memory(), true, XXL_PATHS_SSSP, false, &s, 1);
	p = run_on(&c, &g, &rc);
	CHECK_STATUS(rc, XXL_OK);
	xxl_paths_stats_get(p, &st);
	CHECK_EQ(st.sssp, XXL_PATHS_SSSP_MO);
	CHECK_EQ(st.categories, 21);	/* 0, and 1..20 for costs 1..10^6 */
	CHECK(st.mo_batches > 0);
	CHECK(st.mo_flushes > 0);
	CHECK(st.pool_hits > 0);
	CHECK(st.cluster_loads > 0);
	CHECK_EQ(st.reached, (uint64_t) side * side);
	xxl_paths_destroy(p);
	check_tree(&g, false, XXL_PATHS_SSSP, &s, 1, true, INFINITY, UINT64_MAX);
	check_tree(&g, true, XXL_PATHS_SSSP, &s, 1, true, INFINITY, UINT64_MAX);
	check_tree(&g, false, XXL_PATHS_SSSP, &s, 1, true, 5000, UINT64_MAX);
	check_path(&g, false, 0, side * side - 1, true);
	t_sssp = XXL_PATHS_SSSP_AUTO;
	free(g.e);
}

/* One run's statistics (it must succeed). */
static xxl_paths_stats
run_stats(const xxl_paths_config *c, const pgraph *g)
{
	xxl_status	rc;
	xxl_paths  *p = run_on(c, g, &rc);
	xxl_paths_stats st;

	memset(&st, 0, sizeof(st));
	CHECK_STATUS(rc, XXL_OK);
	if (p)
		xxl_paths_stats_get(p, &st);
	xxl_paths_destroy(p);
	CHECK_EQ(xt_spill_files(), 0);
	return st;
}

/*
 * With two threads the in-memory start numbers the links on a worker: the
 * same answers; a budget the links outgrow mid-input (the worker moves
 * them to the semi-external path); a cancel while the worker runs (the
 * caller's first poll comes at edge 65536).  The adjacency is then built
 * on two threads as well (100000 edges), and the search runs on a worker
 * while the rows go out (20000 nodes); a cancel then comes while the
 * caller waits for rows, or after the search: either way nothing is left.
 */
XT_TEST(numbering_on_a_worker)
{
	pgraph		g = {0};
	int64_t		s = 0;
	xxl_paths_config c;
	xxl_paths_stats st;
	xxl_status	rc;
	uint64_t	links = 0;

	random_graph(&g, 20000, 100000, 0, 1);
	for (size_t i = 0; i < g.n; i++)
		links += (g.e[i].c >= 0) + (g.e[i].rc >= 0);
	t_threads = 2;
	for (int directed = 0; directed < 2; directed++)
	{
		check_tree(&g, directed, XXL_PATHS_SSSP, &s, 1, false, INFINITY, UINT64_MAX);
		check_tree(&g, directed, XXL_PATHS_BFS, &s, 1, false, 3, UINT64_MAX);
	}
	c = config(ROOMY, false, XXL_PATHS_SSSP, true, &s, 1);
	st = run_stats(&c, &g);
	CHECK(st.numbering_worker);
	CHECK(st.search_worker);
	CHECK_EQ(st.path, XXL_PATHS_IN_MEMORY);
	CHECK_EQ(st.links, links);

	t_memory = 2 * MB;
	check_tree(&g, false, XXL_PATHS_SSSP, &s, 1, false, INFINITY, UINT64_MAX);
	check_tree(&g, true, XXL_PATHS_BFS, &s, 1, false, INFINITY, UINT64_MAX);
	c = config(t_memory, false, XXL_PATHS_SSSP, false, &s, 1);
	st = run_stats(&c, &g);
	CHECK(st.numbering_worker);
	CHECK_EQ(st.path, XXL_PATHS_SEMI_EXTERNAL);
	CHECK_EQ(st.links, links);
	t_memory = 0;

	for (int directed = 0; directed < 2; directed++)
	{
		xxl_paths  *p;

		c = config(ROOMY, false, XXL_PATHS_SSSP, directed, &s, 1);
		cancel_after = 1;
		p = run_on(&c, &g, &rc);
		cancel_after = 0;
		CHECK_STATUS(rc, XXL_ECANCELED);
		xxl_paths_destroy(p);
		CHECK_EQ(xt_spill_files(), 0);
	}
	for (int after = 2; after < 40; after += 3)
	{
		xxl_paths  *p;
		int64_t		node,
					pred,
					edge;
		double		d;
		int			got = 1;

		c = config(ROOMY, false, after % 2 ? XXL_PATHS_SSSP : XXL_PATHS_BFS, after % 4 < 2,
				   &s, 1);
		cancel_after = after;
		p = run_on(&c, &g, &rc);
		while (rc == XXL_OK && (got = xxl_paths_next(p, &node, &d, &pred, &edge)) == 1)
			;
		cancel_after = 0;
		CHECK(rc == XXL_OK || rc == XXL_ECANCELED);
		CHECK(got >= 0 || xxl_paths_error(p)->code == XXL_ECANCELED);
		xxl_paths_destroy(p);
		CHECK_EQ(xt_spill_files(), 0);
	}
	t_threads = 1;
	free(g.e);
}

XT_TEST(cancel_leaves_nothing)
{
	pgraph		g = {0};
	int64_t		s = 0;

	random_graph(&g, 3000, 30000, 0, 1);
	for (int ext = 0; ext < 2; ext++)
		for (int after = 1; after < 40; after += 7)
		{
			xxl_paths_config c = config(ext ? xxl_paths_min_memory() : ROOMY, ext,
										after % 2 ? XXL_PATHS_SSSP : XXL_PATHS_BFS, true, &s, 1);

			run_canceled(&c, &g, after);
		}
	/* MM and MO: in the nested spanning forest, the tour, the numbering, the search */
	t_bfs = XXL_PATHS_BFS_MM;
	t_sssp = XXL_PATHS_SSSP_MO;
	t_mu = 8;
	for (int after = 1; after < 400; after += 13)
	{
		xxl_paths_config c = config(ext_memory(), true,
									after % 2 ? XXL_PATHS_SSSP : XXL_PATHS_BFS, false, &s, 1);

		run_canceled(&c, &g, after);
	}
	t_bfs = XXL_PATHS_BFS_AUTO;
	t_sssp = XXL_PATHS_SSSP_AUTO;
	t_mu = 0;
	free(g.e);
}

/*
 * A graph too big for the budget fails with ENOMEM and a message naming
 * the memory it needs: one bit per node is what the search cannot do
 * without (its sorters and spools keep their block lists on disk), 6M
 * nodes at 1MB.
 */
XT_TEST(too_big_for_the_budget)
{
	int64_t		s = 0;
	xxl_paths_config c = config(MB, true, XXL_PATHS_BFS, true, &s, 1);
	xxl_error	err;
	xxl_paths  *p;
	xxl_status	rc = XXL_OK;
	const int64_t pairs = 3000000;

	xxl_error_clear(&err);
	p = xxl_paths_create(&c, &err);
	REQUIRE(p != NULL);
	for (int64_t i = 0; i < pairs && rc == XXL_OK; i++)
		rc = xxl_paths_put_edge(p, 2 * i, 2 * i + 1, i, 1, -1);
	CHECK_STATUS(rc, XXL_OK);
	CHECK_STATUS(xxl_paths_run(p), XXL_ENOMEM);
	CHECK_MSG(strstr(xxl_paths_error(p)->message, "one bit per node") != NULL, "message: %s",
			  xxl_paths_error(p)->message);
	xxl_paths_destroy(p);
	CHECK_EQ(xt_spill_files(), 0);
}

/*
 * The id map's two tables: scattered non-negative ids first beyond the
 * direct array (hashed), then covered by it as more ids are numbered (they
 * move over), negative ids always hashed.  A path of 200000 nodes whose ids
 * are scrambled: node k's depth must be k.
 */
XT_TEST(id_map_direct_and_hashed)
{
	pgraph		g = {0};
	const int64_t n = 200000;
	int64_t		s;
	xxl_paths_config c;
	xxl_status	rc;
	xxl_paths  *p;
	int64_t		node,
				pred,
				edge;
	double		d;
	uint64_t	rows = 0,
				bad = 0;
	int64_t    *depth_of = malloc(sizeof(int64_t) * 600010);

#define SCRAMBLED(k) ((k) % 5 == 0 ? -1 - (k) : ((k) * 7919) % 200003 * 3)
	for (int64_t k = 0; k + 1 < n; k++)
		padd(&g, SCRAMBLED(k), SCRAMBLED(k + 1), k, 1, -1);
	for (int64_t k = 0; k < n; k++)
		if (SCRAMBLED(k) >= 0)
			depth_of[SCRAMBLED(k)] = k;
	s = SCRAMBLED(1);
	c = config(ROOMY, false, XXL_PATHS_BFS, false, &s, 1);
	p = run_on(&c, &g, &rc);
	CHECK_STATUS(rc, XXL_OK);
	while (rc == XXL_OK && xxl_paths_next(p, &node, &d, &pred, &edge) == 1)
	{
		int64_t		k = node < 0 ? -1 - node : depth_of[node];

		rows++;
		if (d != (double) (k > 1 ? k - 1 : 1 - k))
			bad++;
	}
	CHECK_EQ(rows, (uint64_t) n);
	CHECK_EQ(bad, 0);
	xxl_paths_destroy(p);
#undef SCRAMBLED
	free(depth_of);
	free(g.e);
}

/*
 * MM asked for at three times the smallest budget on a random graph of
 * small diameter: its sorts take any level (they were refused, and MR ran,
 * while their run lists were in memory), so MM runs, and its tree is the
 * oracle's.
 */
XT_TEST(mm_runs_where_its_sorts_once_could_not)
{
	pgraph		g = {0};
	int64_t		s = 0;
	xxl_paths_config c;
	xxl_status	rc;
	xxl_paths  *p;
	xxl_paths_stats st;

	random_graph(&g, 20000, 30000, 0, 1);
	t_bfs = XXL_PATHS_BFS_MM;
	c = config(ext_memory(), true, XXL_PATHS_BFS, false, &s, 1);
	p = run_on(&c, &g, &rc);
	CHECK_MSG(rc == XXL_OK, "%s", xxl_paths_error(p)->message);
	xxl_paths_stats_get(p, &st);
	CHECK_EQ(st.bfs, XXL_PATHS_BFS_MM);
	CHECK_MSG(st.cluster_skipped == NULL, "skipped: %s", st.cluster_skipped);
	CHECK(st.reached > 1000);
	xxl_paths_destroy(p);
	check_tree(&g, false, XXL_PATHS_BFS, &s, 1, true, INFINITY, UINT64_MAX);
	CHECK_EQ(xt_spill_files(), 0);
	t_bfs = XXL_PATHS_BFS_AUTO;
	free(g.e);
}

/*
 * Budgets from roomy down to the smallest: the in-memory path, then the
 * semi-external one (the links spooled, fewer and fewer arcs in memory,
 * the rest paged, more and more passes placing them), then the external
 * one; mid-input both moves, memory to semi-external and semi-external to
 * external, on one thread and on the numbering worker.  Every answer is
 * the oracle's, a target's path too.
 */
XT_TEST(semi_external_between_the_paths)
{
	pgraph		g = {0};
	int64_t		s = 0;
	int			in_memory = 0,
				semi = 0,
				paged = 0,
				chunks = 0;

	random_graph(&g, 2000, 150000, 0, 1);
	for (size_t kb = 16384, last = 0; !last; kb = kb * 2 / 3)
		for (int op = 0; op < 2; op++)
		{
			xxl_paths_stats st;

			if (kb * 1024 <= xxl_paths_min_memory())
			{
				kb = xxl_paths_min_memory() / 1024;
				last = 1;
			}
			t_threads = 1 + (kb + op) % 2;
			t_memory = kb * 1024;
			check_tree(&g, op, op ? XXL_PATHS_BFS : XXL_PATHS_SSSP, &s, 1, false, INFINITY,
					   UINT64_MAX);
			st = t_last;
			in_memory += st.path == XXL_PATHS_IN_MEMORY;
			if (st.path == XXL_PATHS_SEMI_EXTERNAL)
			{
				semi++;
				paged += st.arcs_in_memory < st.arcs;
				/* placing (one or more chunks), the tree's edge ids */
				CHECK(st.link_passes >= 2);
				chunks += st.link_passes > 2;
				CHECK(st.bytes_written > 0);
			}
			if (op == 0 && st.path == XXL_PATHS_SEMI_EXTERNAL)
				check_path(&g, false, s, 4321, false);
		}
	t_threads = 1;
	t_memory = 0;
	CHECK(in_memory >= 2);
	CHECK(semi >= 4);
	CHECK(paged >= 3);
	CHECK(chunks >= 2);
	/* a cancel in the input, the placing passes, the search or the edge ids' pass */
	for (int after = 1; after < 400; after = after * 3 + 1)
		for (int op = 0; op < 2; op++)
		{
			xxl_paths_config c = config(1400 * 1024, false, op ? XXL_PATHS_BFS : XXL_PATHS_SSSP,
										false, &s, 1);

			run_canceled(&c, &g, after);
		}
	free(g.e);

	/*
	 * Nodes that do not fit the smallest budget: the links move on twice
	 * mid-input, and every row is the in-memory path's (which the oracle
	 * checked above on smaller graphs; the oracle is quadratic).
	 */
	memset(&g, 0, sizeof(g));
	random_graph(&g, 40000, 60000, 0, 1);
	for (int threads = 1; threads <= 2; threads++)
	{
		xxl_paths_config c = config(ROOMY, false, XXL_PATHS_SSSP, false, &s, 1);
		xxl_paths_stats st;
		uint64_t	rows[2] = {0};
		double		sum[2] = {0};

		t_threads = threads;
		for (int k = 0; k < 2; k++)
		{
			xxl_status	rc;
			xxl_paths  *p;
			int64_t		node,
						pred,
						edge;
			double		d;

			c.res.memory = k ? xxl_paths_min_memory() : ROOMY;
			c.res.threads = threads;
			p = run_on(&c, &g, &rc);
			CHECK_STATUS(rc, XXL_OK);
			while (rc == XXL_OK && xxl_paths_next(p, &node, &d, &pred, &edge) == 1)
			{
				rows[k]++;
				sum[k] += d;
			}
			xxl_paths_stats_get(p, &st);
			CHECK_EQ(st.path, k ? XXL_PATHS_EXTERNAL : XXL_PATHS_IN_MEMORY);
			xxl_paths_destroy(p);
			CHECK_EQ(xt_spill_files(), 0);
		}
		CHECK(rows[0] > 1000);
		CHECK_EQ(rows[1], rows[0]);
		CHECK(sum[1] == sum[0]);
	}
	t_threads = 1;
	free(g.e);
}

XT_TEST(nan_cost_rejected)
{
	int64_t		s = 1;
	xxl_paths_config c = config(ROOMY, false, XXL_PATHS_SSSP, true, &s, 1);
	xxl_error	err;
	xxl_paths  *p;

	xxl_error_clear(&err);
	p = xxl_paths_create(&c, &err);
	REQUIRE(p != NULL);
	CHECK_STATUS(xxl_paths_put_edge(p, 1, 2, 1, 1, NAN), XXL_EINVAL);
	CHECK(strstr(xxl_paths_error(p)->message, "NaN") != NULL);
	xxl_paths_destroy(p);
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
