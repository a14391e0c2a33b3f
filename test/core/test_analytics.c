/*
 * test_analytics.c — unit tests of the analytics operators
 * (src/core/graph/xxl_analytics.h): triangles, triangle count, node
 * triangles, maximal independent set, coloring and PageRank.
 *
 * Oracles written here on an adjacency matrix of the distinct ids: every
 * triple for triangles and per-node counts; the greedy set and the greedy
 * coloring in ascending id order (the operator's documented answer, so the
 * rows must match exactly); PageRank by a dense power iteration.  Every
 * case runs in memory (a roomy budget, nothing written) and external (the
 * smallest budget; PageRank also forced off its arrays: ranged with one,
 * seven and one range per node, and sorted), and
 * the stats must say which path ran.  Inputs: random graphs with self
 * loops, duplicates both ways and ids at INT64_MIN / INT64_MAX, a clique,
 * a star, no edges.  Also: cancel at fractions of a run and write failures
 * leave no spill file.
 */
#include "xxl_test.h"

#include <math.h>

#include "core/graph/xxl_analytics.h"

#define MB (1024 * 1024)
#define ROOMY (64 * MB)
#define MAXN 320

typedef struct edge
{
	int64_t		s,
				t;
	double		w;
} edge;

typedef struct graph
{
	edge	   *e;
	size_t		m;
	int64_t		ids[MAXN];		/* ascending */
	int			n;
} graph;

static int64_t
id_of(int i)
{
	/* spread over the whole range, both limits included */
	if (i == 0)
		return INT64_MIN;
	if (i == 1)
		return INT64_MAX;
	return (int64_t) (i - MAXN / 2) * INT64_C(25000000000000000) + i;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

static int
index_of(const graph *g, int64_t id)
{
	const int64_t *p = bsearch(&id, g->ids, g->n, sizeof(int64_t), cmp_i64);

	return p ? (int) (p - g->ids) : -1;
}

/* The distinct ids of the edges, ascending. */
static void
collect_ids(graph *g)
{
	int64_t    *all = malloc((2 * g->m + 1) * sizeof(int64_t));
	size_t		k = 0;

	for (size_t i = 0; i < g->m; i++)
	{
		all[k++] = g->e[i].s;
		all[k++] = g->e[i].t;
	}
	qsort(all, k, sizeof(int64_t), cmp_i64);
	g->n = 0;
	for (size_t i = 0; i < k; i++)
		if (i == 0 || all[i] != all[i - 1])
			g->ids[g->n++] = all[i];
	free(all);
}

static graph
random_graph(xt_rng *rng, int nodes, size_t m, bool loops)
{
	graph		g = {0};

	g.e = malloc((m + 1) * sizeof(edge));
	for (size_t i = 0; i < m; i++)
	{
		int			a = (int) xt_below(rng, nodes),
					b = (int) xt_below(rng, nodes);

		if (!loops && a == b)
			b = (a + 1) % nodes;
		g.e[g.m++] = (edge) {id_of(a), id_of(b), (double) (1 + xt_below(rng, 4))};
	}
	collect_ids(&g);
	return g;
}

static graph
clique(int k)
{
	graph		g = {0};

	g.e = malloc((size_t) k * k * sizeof(edge) + 1);
	for (int a = 0; a < k; a++)
		for (int b = 0; b < k; b++)
			if (a != b)
				g.e[g.m++] = (edge) {id_of(a + 2), id_of(b + 2), 1};
	collect_ids(&g);
	return g;
}

/* Oracles ------------------------------------------------------------------------ */

typedef struct oracle
{
	unsigned char adj[MAXN][MAXN];
	int			deg[MAXN];
	uint64_t	tri[MAXN];
	uint64_t	triangles;
	bool		mis[MAXN];
	int			color[MAXN];
	double		rank[MAXN];
} oracle;

static void
make_oracle(const graph *g, oracle *o, int iterations)
{
	double		outw[MAXN] = {0},
				r[MAXN],
				rn[MAXN];

	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < g->m; i++)
	{
		int			a = index_of(g, g->e[i].s),
					b = index_of(g, g->e[i].t);

		if (a != b)
			o->adj[a][b] = o->adj[b][a] = 1;
		outw[a] += g->e[i].w;
	}
	for (int a = 0; a < g->n; a++)
		for (int b = 0; b < g->n; b++)
			o->deg[a] += o->adj[a][b];
	for (int a = 0; a < g->n; a++)
		for (int b = a + 1; b < g->n; b++)
			if (o->adj[a][b])
				for (int c = b + 1; c < g->n; c++)
					if (o->adj[a][c] && o->adj[b][c])
					{
						o->triangles++;
						o->tri[a]++;
						o->tri[b]++;
						o->tri[c]++;
					}
	/* greedy in id order */
	for (int a = 0; a < g->n; a++)
	{
		bool		used[MAXN + 2] = {0};
		int			c = 1;

		o->mis[a] = true;
		for (int b = 0; b < a; b++)
			if (o->adj[a][b])
			{
				if (o->mis[b])
					o->mis[a] = false;
				used[o->color[b]] = true;
			}
		while (used[c])
			c++;
		o->color[a] = c;
	}
	/* PageRank, dense */
	for (int a = 0; a < g->n; a++)
		r[a] = 1.0 / g->n;
	for (int it = 0; it < iterations; it++)
	{
		double		dang = 0;

		for (int a = 0; a < g->n; a++)
		{
			rn[a] = 0;
			if (outw[a] == 0)
				dang += r[a];
		}
		for (size_t i = 0; i < g->m; i++)
		{
			int			a = index_of(g, g->e[i].s),
						b = index_of(g, g->e[i].t);

			rn[b] += r[a] * g->e[i].w / outw[a];
		}
		for (int a = 0; a < g->n; a++)
			r[a] = 0.15 / g->n + 0.85 * (dang / g->n + rn[a]);
	}
	memcpy(o->rank, r, sizeof(r));
}

/* Running ------------------------------------------------------------------------- */

typedef struct result
{
	xxl_status	rc;
	xxl_an_row *rows;
	size_t		n;
	xxl_an_stats st;
} result;

static int	t_threads;		/* 0: the default */
static uint64_t t_range_nodes;	/* PageRank's targets per range (0: the default) */
static uint64_t t_chunk_lists;	/* the external triangle count's lists per chunk (0: the default) */

static xxl_an_config
config(xxl_an_op op, size_t memory)
{
	xxl_an_config c;

	memset(&c, 0, sizeof(c));
	c.op = op;
	c.res.memory = memory;
	c.res.threads = t_threads;
	c.rank_range_nodes = t_range_nodes;
	c.tri_chunk_lists = t_chunk_lists;
	c.res.disk.dirs = xt_dirs;
	c.res.disk.ndisks = 2;
	c.res.disk.file_prefix = "test_analytics";
	c.res.disk.try_direct = false;
	c.res.disk.strategy = XXL_ALLOC_RANDOM_CYCLING;
	c.res.disk.seed = 5;
	c.damping = 0.85;
	c.max_iterations = 30;
	c.tolerance = 0;
	return c;
}

static result
run(const graph *g, const xxl_an_config *cfg)
{
	result		res = {0};
	xxl_error	err = {0};
	xxl_an	   *a = xxl_an_create(cfg, &err);
	size_t		cap = 0;

	if (a == NULL)
	{
		res.rc = err.code;
		return res;
	}
	for (size_t i = 0; i < g->m && res.rc == XXL_OK; i++)
		res.rc = xxl_an_put_edge(a, g->e[i].s, g->e[i].t, g->e[i].w);
	if (res.rc == XXL_OK)
		res.rc = xxl_an_run(a);
	while (res.rc == XXL_OK)
	{
		int			got;

		if (res.n == cap)
		{
			cap = cap ? 2 * cap : 256;
			res.rows = realloc(res.rows, cap * sizeof(xxl_an_row));
		}
		got = xxl_an_next(a, &res.rows[res.n]);
		if (got == 0)
			break;
		if (got < 0)
			res.rc = xxl_an_error(a)->code ? xxl_an_error(a)->code : XXL_EIO;
		else
			res.n++;
	}
	xxl_an_stats_get(a, &res.st);
	xxl_an_destroy(a);
	CHECK_EQ(xt_spill_files(), 0);
	return res;
}

/* Checks ------------------------------------------------------------------------- */

static void
check_op(const graph *g, const oracle *o, xxl_an_op op, size_t memory, bool force, const char *what)
{
	xxl_an_config cfg = config(op, memory);
	result		r;
	size_t		want = 0;

	cfg.force_external = force;
	r = run(g, &cfg);
	CHECK_MSG(r.rc == XXL_OK, "%s op %d: %s", what, (int) op, xxl_status_name(r.rc));
	if (r.rc != XXL_OK)
		return;
	CHECK_LE(r.st.memory_peak, memory);
	/*
	 * (a forced external run of a small graph that spilled nothing says
	 * "in-memory"; so may triangles by chunks, which sort no queries)
	 */
	if (op != XXL_AN_PAGERANK && (force || memory == ROOMY))
		CHECK_MSG(strcmp(r.st.path, force ? "external" : "in-memory") == 0 ||
				  (force && (g->m < 5000 || (op <= XXL_AN_NODE_TRIANGLES && t_chunk_lists != UINT64_MAX)) &&
				   strcmp(r.st.path, "semi-external") != 0),
				  "%s op %d: path %s", what, (int) op, r.st.path);
	switch (op)
	{
		case XXL_AN_TRIANGLES:
			CHECK_EQ(r.n, o->triangles);
			for (size_t i = 0; i < r.n; i++)
			{
				int			a = index_of(g, r.rows[i].v[0]),
							b = index_of(g, r.rows[i].v[1]),
							c = index_of(g, r.rows[i].v[2]);

				CHECK_MSG(a >= 0 && b > a && c > b && o->adj[a][b] && o->adj[a][c] && o->adj[b][c],
						  "%s: not a triangle", what);
			}
			break;
		case XXL_AN_TRIANGLE_COUNT:
			CHECK_EQ(r.n, 1);
			CHECK_EQ((uint64_t) r.rows[0].v[0], o->triangles);
			break;
		case XXL_AN_NODE_TRIANGLES:
			CHECK_EQ(r.n, (size_t) g->n);
			for (size_t i = 0; i < r.n && i < (size_t) g->n; i++)
			{
				int			d = o->deg[i];

				CHECK_EQ(r.rows[i].v[0], g->ids[i]);
				CHECK_EQ((uint64_t) r.rows[i].v[1], o->tri[i]);
				CHECK_EQ(r.rows[i].v[2], d);
				CHECK(fabs(r.rows[i].x - (d < 2 ? 0 : 2.0 * o->tri[i] / ((double) d * (d - 1)))) < 1e-12);
			}
			break;
		case XXL_AN_MIS:
			for (int i = 0; i < g->n; i++)
				if (o->mis[i])
				{
					CHECK_MSG(want < r.n && r.rows[want].v[0] == g->ids[i], "%s: set differs at node %d", what, i);
					want++;
				}
			CHECK_EQ(r.n, want);
			CHECK_EQ(r.st.set_size, want);
			break;
		case XXL_AN_COLORING:
			CHECK_EQ(r.n, (size_t) g->n);
			for (size_t i = 0; i < r.n && i < (size_t) g->n; i++)
			{
				CHECK_EQ(r.rows[i].v[0], g->ids[i]);
				CHECK_EQ(r.rows[i].v[1], o->color[i]);
				CHECK_LE((uint64_t) r.rows[i].v[1], r.st.max_degree + 1);
			}
			break;
		case XXL_AN_PAGERANK:
			{
				double		sum = 0;

				CHECK_EQ(r.n, (size_t) g->n);
				for (size_t i = 0; i < r.n && i < (size_t) g->n; i++)
				{
					CHECK_EQ(r.rows[i].v[0], g->ids[i]);
					CHECK_MSG(fabs(r.rows[i].x - o->rank[i]) < 1e-12, "%s: rank %zu %.15g vs %.15g",
							  what, i, r.rows[i].x, o->rank[i]);
					sum += r.rows[i].x;
				}
				if (r.n)
					CHECK(fabs(sum - 1) < 1e-9);
				if (g->n > 0)
				{
					CHECK_EQ(r.st.iterations, 30);
					/*
					 * (at the smallest budget either may run) forced off the
					 * arrays: ranged, unless a test asks for the sort
					 */
					if (force || memory == ROOMY)
						CHECK_MSG(strcmp(r.st.method, !force ? "arrays" :
										 t_range_nodes == UINT64_MAX ? "sorted" : "ranged") == 0,
								  "%s: method %s", what, r.st.method);
					if (force && t_range_nodes != 0 && t_range_nodes != UINT64_MAX)
						CHECK_EQ(r.st.ranges, ((uint64_t) g->n + t_range_nodes - 1) / t_range_nodes);
				}
			}
			break;
	}
	/* triangles forced external: by chunks of out-lists (their count), or by queries */
	if ((op == XXL_AN_TRIANGLES || op == XXL_AN_TRIANGLE_COUNT || op == XXL_AN_NODE_TRIANGLES) && force)
	{
		CHECK_EQ(r.st.triangles, o->triangles);
		if (t_chunk_lists == UINT64_MAX)
			CHECK_EQ(r.st.ranges, 0);
		else if (t_chunk_lists != 0 && r.st.links > 0)
			CHECK_MSG(r.st.queries == 0 && r.st.ranges >= 2, "%s op %d: %lu chunks, %lu queries", what,
					  (int) op, (unsigned long) r.st.ranges, (unsigned long) r.st.queries);
	}
	free(r.rows);
}

static void
check_all(const graph *g, const char *what)
{
	static oracle o;
	xxl_an_op	ops[] = {XXL_AN_TRIANGLES, XXL_AN_TRIANGLE_COUNT, XXL_AN_NODE_TRIANGLES,
	XXL_AN_MIS, XXL_AN_COLORING, XXL_AN_PAGERANK};

	make_oracle(g, &o, 30);
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
	{
		check_op(g, &o, ops[k], ROOMY, false, what);
		/* (small graphs may stay in memory or semi-external at the least budget) */
		check_op(g, &o, ops[k], xxl_an_min_memory(), false, what);
		check_op(g, &o, ops[k], xxl_an_min_memory(), true, what);
	}
	check_op(g, &o, XXL_AN_PAGERANK, ROOMY, true, what);
	/* PageRank off the arrays: several target ranges, and the sorted iterations */
	if (g->n > 1)
	{
		t_range_nodes = (uint64_t) g->n / 7 + 1;
		check_op(g, &o, XXL_AN_PAGERANK, ROOMY, true, what);
		check_op(g, &o, XXL_AN_PAGERANK, xxl_an_min_memory(), true, what);
		t_range_nodes = 1;
		check_op(g, &o, XXL_AN_PAGERANK, ROOMY, true, what);
	}
	t_range_nodes = UINT64_MAX;
	check_op(g, &o, XXL_AN_PAGERANK, ROOMY, true, what);
	check_op(g, &o, XXL_AN_PAGERANK, xxl_an_min_memory(), true, what);
	t_range_nodes = 0;
	/* external triangles by queries, and by chunks of a few lists (one: every node a chunk) */
	for (int t = 0; t < 3; t++)
	{
		t_chunk_lists = UINT64_MAX;
		check_op(g, &o, ops[t], xxl_an_min_memory(), true, what);
		if (g->n > 2)
		{
			t_chunk_lists = (uint64_t) g->n / 7 + 1;
			check_op(g, &o, ops[t], ROOMY, true, what);
			check_op(g, &o, ops[t], xxl_an_min_memory(), true, what);
			t_chunk_lists = 1;
			check_op(g, &o, ops[t], xxl_an_min_memory(), true, what);
		}
	}
	t_chunk_lists = 0;
}

XT_TEST(analytics_random)
{
	xt_rng		rng = {7};

	for (int round = 0; round < 3; round++)
	{
		graph		g = random_graph(&rng, 300, 6000 + 3000 * round, true);

		check_all(&g, "random");
		free(g.e);
	}
}

XT_TEST(analytics_shapes)
{
	graph		k = clique(40);
	graph		star = {0},
				none = {0},
				one = {0};

	check_all(&k, "clique");
	free(k.e);
	star.e = malloc(20 * sizeof(edge));
	for (int i = 0; i < 20; i++)
		star.e[star.m++] = (edge) {id_of(5), id_of(10 + i), 1};
	collect_ids(&star);
	check_all(&star, "star");
	free(star.e);
	check_all(&none, "no edges");
	one.e = malloc(3 * sizeof(edge));
	one.e[one.m++] = (edge) {id_of(0), id_of(0), 1};
	one.e[one.m++] = (edge) {id_of(1), id_of(0), 2};
	one.e[one.m++] = (edge) {id_of(0), id_of(1), 1};
	collect_ids(&one);
	check_all(&one, "loop and a pair");
	free(one.e);
}

/*
 * The in-memory numbering on a worker thread (two threads) and on the
 * caller's (one): the answers of check_all from both (repeated edges both
 * ways and self loops in bulk, which the triangles' out-lists drop by
 * their bitmaps); then 150000 edges over 50000 ids at 2MB, which the
 * worker moves off the in-memory path midway (semi-external or external): the same rows as one thread.
 */
XT_TEST(analytics_numbering_worker)
{
	xt_rng		rng = {11};
	graph		g = random_graph(&rng, 300, 20000, true);
	xxl_an_op	ops[] = {XXL_AN_TRIANGLE_COUNT, XXL_AN_NODE_TRIANGLES, XXL_AN_COLORING,
	XXL_AN_PAGERANK};
	result		one[4];

	for (t_threads = 1; t_threads <= 2; t_threads++)
	{
		xxl_an_config cfg = config(XXL_AN_TRIANGLE_COUNT, ROOMY);
		result		r;

		check_all(&g, t_threads == 1 ? "one thread" : "two threads");
		r = run(&g, &cfg);
		CHECK_STATUS(r.rc, XXL_OK);
		CHECK_EQ(r.st.numbering_worker, t_threads == 2);
		free(r.rows);
	}
	free(g.e);

	g = (graph) {0};
	g.e = malloc(150000 * sizeof(edge));
	for (; g.m < 150000; g.m++)
		g.e[g.m] = (edge) {(int64_t) xt_below(&rng, 50000), (int64_t) xt_below(&rng, 50000),
		(double) (1 + xt_below(&rng, 3))};
	for (t_threads = 1; t_threads <= 2; t_threads++)
		for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		{
			xxl_an_config cfg = config(ops[k], 2 * MB);
			result		r = run(&g, &cfg);

			CHECK_STATUS(r.rc, XXL_OK);
			CHECK_EQ(r.st.numbering_worker, t_threads == 2);
			CHECK_MSG(strcmp(r.st.path, "in-memory") != 0, "op %d: %s", (int) ops[k], r.st.path);
			CHECK_EQ(r.st.edges, g.m);
			if (t_threads == 1)
			{
				one[k] = r;
				continue;
			}
			CHECK_EQ(r.n, one[k].n);
			for (size_t i = 0; i < r.n && i < one[k].n; i++)
				CHECK_MSG(memcmp(r.rows[i].v, one[k].rows[i].v, sizeof(r.rows[i].v)) == 0 &&
						  fabs(r.rows[i].x - one[k].rows[i].x) < 1e-12,
						  "op %d row %zu differs", (int) ops[k], i);
			free(r.rows);
			free(one[k].rows);
		}
	t_threads = 0;
	free(g.e);
}

/* 100000 edges over 30000 sparse ids (the hash table, whose ranking sorts), weights 1-3. */
static graph
sparse_graph(void)
{
	xt_rng		rng = {13};
	graph		g = {0};

	g.e = malloc(100000 * sizeof(edge));
	for (; g.m < 100000; g.m++)
		g.e[g.m] = (edge) {(int64_t) xt_below(&rng, 30000) * 1000003, (int64_t) xt_below(&rng, 30000) * 1000003,
		(double) (1 + xt_below(&rng, 3))};
	return g;
}

/* Rows in one order: a listing's order is the path's own. */
static int
cmp_row(const void *x, const void *y)
{
	const xxl_an_row *a = x,
			   *b = y;

	return memcmp(a->v, b->v, sizeof(a->v));
}

/* r's rows (then freed), in one order, are the roomy run's (already in that order). */
static void
check_rows_as_roomy(result *r, const result *roomy, xxl_an_op op, size_t memory)
{
	qsort(r->rows, r->n, sizeof(xxl_an_row), cmp_row);
	CHECK_EQ(r->n, roomy->n);
	for (size_t i = 0; i < r->n && i < roomy->n; i++)
		CHECK_MSG(memcmp(r->rows[i].v, roomy->rows[i].v, sizeof(r->rows[i].v)) == 0 &&
				  fabs(r->rows[i].x - roomy->rows[i].x) < 1e-12,
				  "op %d at %zu: row %zu differs", (int) op, memory, i);
	free(r->rows);
}


/* What a sweep of budgets saw: a semi-external run, streamed ones, the least in memory. */
typedef struct sweep_seen
{
	bool		semi;
	int			streamed;
	int			ranged;			/* triangles in ranges of out-lists */
	size_t		first_ranged;	/* ... the least budget they did */
	size_t		first_in_memory;
} sweep_seen;

/*
 * g's op at tenths 1..tenths of the roomy run's peak (from the least budget
 * up): every run completes within its budget with the roomy run's rows
 * (sorted) and, for MIS and coloring, its links and largest degree.
 */
static sweep_seen
sweep_budgets(const graph *g, xxl_an_op op, const result *roomy, int tenths)
{
	sweep_seen	seen = {false, 0, 0, 0, SIZE_MAX};

	for (int step = 1; step <= tenths; step++)
	{
		size_t		memory = roomy->st.memory_peak * step / 10;
		xxl_an_config cfg = config(op, memory);
		result		r;

		if (memory < xxl_an_min_memory())
			continue;
		r = run(g, &cfg);
		CHECK_MSG(r.rc == XXL_OK, "op %d at %zu of peak %zu: %s", (int) op, memory,
				  roomy->st.memory_peak, xxl_status_name(r.rc));
		CHECK_LE(r.st.memory_peak, memory);
		if (strcmp(r.st.path, "in-memory") == 0 && memory < seen.first_in_memory)
			seen.first_in_memory = memory;
		seen.streamed += strcmp(r.st.method, "streamed") == 0;
		seen.semi |= strcmp(r.st.path, "semi-external") == 0;
		if (op != XXL_AN_PAGERANK && r.st.ranges > 0 && seen.ranged++ == 0)
			seen.first_ranged = memory;
		if (op == XXL_AN_COLORING || op == XXL_AN_MIS)
			CHECK_MSG(r.st.links == roomy->st.links && r.st.max_degree == roomy->st.max_degree,
					  "op %d at %zu (%s %s): %llu links, max degree %llu", (int) op, memory,
					  r.st.path, r.st.method, (unsigned long long) r.st.links,
					  (unsigned long long) r.st.max_degree);
		check_rows_as_roomy(&r, roomy, op, memory);
	}
	return seen;
}

/*
 * Around the budget where the in-memory path ends: the need it computes
 * from the edges as they come must be an upper bound (nothing after the
 * input may fail for memory, and the peak stays within the budget) and not
 * far above the peak it then has, so that the external path does not take
 * over budgets the in-memory one fits.  100000 edges over 30000 sparse ids
 * (the hash table, whose ranking sorts), each operation at budgets from a
 * tenth (or the least it takes) to 1.7 times its in-memory peak: every run
 * gives the roomy run's rows, memory is taken from 1.6 times the peak on,
 * at some budget the edges are spooled while the ids stay in memory
 * (semi-external), and at some PageRank's external iterations stream the
 * links past their arrays.
 */
XT_TEST(analytics_memory_boundary)
{
	graph		g = sparse_graph();
	xxl_an_op	ops[] = {XXL_AN_TRIANGLES, XXL_AN_TRIANGLE_COUNT, XXL_AN_NODE_TRIANGLES,
	XXL_AN_MIS, XXL_AN_COLORING, XXL_AN_PAGERANK};

	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
	{
		xxl_an_config cfg = config(ops[k], ROOMY);
		result		roomy = run(&g, &cfg);
		size_t		peak = roomy.st.memory_peak;
		sweep_seen	seen;

		CHECK_STATUS(roomy.rc, XXL_OK);
		CHECK_MSG(strcmp(roomy.st.path, "in-memory") == 0, "op %d: %s", (int) ops[k], roomy.st.path);
		qsort(roomy.rows, roomy.n, sizeof(xxl_an_row), cmp_row);
		seen = sweep_budgets(&g, ops[k], &roomy, 17);
		if (ops[k] == XXL_AN_PAGERANK)
			CHECK_MSG(seen.streamed > 0, "PageRank never streamed its links");
		CHECK_MSG(seen.semi, "op %d never semi-external", (int) ops[k]);
		CHECK_MSG(seen.first_in_memory <= peak * 16 / 10, "op %d: in memory from %zu, its peak %zu",
				  (int) ops[k], seen.first_in_memory, peak);
		free(roomy.rows);
	}
	free(g.e);
}


/*
 * MIS and coloring whose lists do not fit beside the spooled edges while
 * their ids and a word per node do: the edges are sorted by rank both ways
 * and the greedy pass reads them from the sorter (method "streamed").  A
 * dense graph (160000 edges over 4000 ids, repeats and self loops among
 * them) at budgets from a tenth to the whole of the in-memory peak: every
 * run has the roomy run's rows, links and largest degree, some streamed.
 */
XT_TEST(analytics_streamed_lists)
{
	xt_rng		rng = {23};
	graph		g = {0};
	xxl_an_op	ops[] = {XXL_AN_MIS, XXL_AN_COLORING};

	g.e = malloc(160000 * sizeof(edge));
	for (; g.m < 160000; g.m++)
		g.e[g.m] = (edge) {(int64_t) xt_below(&rng, 4000) * 104729, (int64_t) xt_below(&rng, 4000) * 104729, 1};
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
	{
		xxl_an_config cfg = config(ops[k], ROOMY);
		result		roomy = run(&g, &cfg);
		sweep_seen	seen;

		CHECK_STATUS(roomy.rc, XXL_OK);
		qsort(roomy.rows, roomy.n, sizeof(xxl_an_row), cmp_row);
		seen = sweep_budgets(&g, ops[k], &roomy, 10);
		CHECK_MSG(seen.streamed > 0, "op %d never streamed", (int) ops[k]);
		printf("  # op %d: streamed at %d of 10 budgets\n", (int) ops[k], seen.streamed);
		free(roomy.rows);
	}
	free(g.e);
}

/*
 * Edges that leave memory while their ids stay (spooled as dense pairs),
 * and ids that then outgrow memory too: the spool is replayed into the
 * sorters.  80000 edges over 3000 ids, then 40000 edges of new ids each;
 * budgets from a tenth to the whole of each operation's in-memory peak
 * (the replay happens at several of them), every one with the roomy run's
 * rows; PageRank's at one of them semi-external.
 */
XT_TEST(analytics_spooled)
{
	xt_rng		rng = {17};
	graph		g = {0};
	xxl_an_op	ops[] = {XXL_AN_PAGERANK, XXL_AN_NODE_TRIANGLES, XXL_AN_TRIANGLES, XXL_AN_COLORING};
	/* (quick mode: PageRank's replay and the undirected one's) */
	size_t		nops = xt_quick() ? 2 : sizeof(ops) / sizeof(ops[0]);

	g.e = malloc(120000 * sizeof(edge));
	for (; g.m < 80000; g.m++)
		g.e[g.m] = (edge) {(int64_t) xt_below(&rng, 3000) * 7919, (int64_t) xt_below(&rng, 3000) * 7919,
		(double) (1 + xt_below(&rng, 2))};
	for (int64_t i = 0; g.m < 120000; g.m++, i++)
		g.e[g.m] = (edge) {(3000 + 2 * i) * 7919, (3001 + 2 * i) * 7919, 1};
	for (size_t k = 0; k < nops; k++)
	{
		xxl_an_config cfg = config(ops[k], ROOMY);
		result		roomy = run(&g, &cfg);
		sweep_seen	seen;

		CHECK_STATUS(roomy.rc, XXL_OK);
		CHECK_MSG(strcmp(roomy.st.path, "in-memory") == 0, "%s", roomy.st.path);
		qsort(roomy.rows, roomy.n, sizeof(xxl_an_row), cmp_row);
		seen = sweep_budgets(&g, ops[k], &roomy, 10);
		/* (the others' semi-external window lies between these steps: analytics_memory_boundary) */
		if (ops[k] == XXL_AN_PAGERANK)
			CHECK_MSG(seen.semi, "PageRank never semi-external");
		free(roomy.rows);
	}
	free(g.e);
}

/* Cancel and write failures ------------------------------------------------------ */

static uint64_t hook_calls;
static uint64_t hook_limit;

static bool
cancel_hook(void *arg)
{
	(void) arg;
	return ++hook_calls > hook_limit;
}

/*
 * g under cfg stopped: a cancel at each of the given fractions (in
 * quarters, from first) of a whole run's polls, each XXL_ECANCELED; then a
 * write failing after fail_after bytes, XXL_ENOSPC when want_enospc.  No
 * spill file left after any (run() checks).
 */
static void
check_stops(const graph *g, xxl_an_config cfg, int first, size_t fail_after, bool want_enospc,
			const char *what)
{
	uint64_t	total;
	result		r;

	cfg.res.cancel = cancel_hook;
	hook_calls = 0;
	hook_limit = UINT64_MAX;
	r = run(g, &cfg);
	CHECK_STATUS(r.rc, XXL_OK);
	free(r.rows);
	total = hook_calls;
	for (int f = first; f < 4; f++)
	{
		hook_calls = 0;
		hook_limit = total * f / 4;
		r = run(g, &cfg);
		CHECK_MSG(r.rc == XXL_ECANCELED, "%s: cancel at %" PRIu64 "/%" PRIu64 ": %s",
				  what, hook_limit, total, xxl_status_name(r.rc));
		free(r.rows);
	}
	cfg.res.cancel = NULL;
	cfg.res.disk.fail_write_after = fail_after;
	r = run(g, &cfg);
	if (want_enospc)
		CHECK_MSG(r.rc == XXL_ENOSPC, "%s: write failure: %s", what, xxl_status_name(r.rc));
	free(r.rows);
}

XT_TEST(analytics_cancel_and_failures)
{
	xt_rng		rng = {9};
	graph		g = {0};
	xxl_an_op	ops[] = {XXL_AN_TRIANGLES, XXL_AN_NODE_TRIANGLES, XXL_AN_COLORING, XXL_AN_PAGERANK};

	/* no oracle here: 150000 edges over 50000 ids (input polls come every 65536) */
	g.e = malloc(150000 * sizeof(edge));
	for (; g.m < 150000; g.m++)
		g.e[g.m] = (edge) {(int64_t) xt_below(&rng, 50000), (int64_t) xt_below(&rng, 50000), 1};

	/* at the smallest budget (external) and a roomy one (in memory) */
	for (size_t k = 0; k < 2 * sizeof(ops) / sizeof(ops[0]); k++)
	{
		bool		roomy = k >= sizeof(ops) / sizeof(ops[0]);
		char		what[32];

		snprintf(what, sizeof(what), "case %zu", k);
		check_stops(&g, config(ops[k % (sizeof(ops) / sizeof(ops[0]))], roomy ? ROOMY : xxl_an_min_memory()),
					0, 256 * 1024, !roomy, what);
	}
	free(g.e);
}

/*
 * A semi-external run stopped: the budget of each operation where it runs
 * semi-external (the boundary test's graph), then a cancel at a quarter,
 * half and three quarters of its polls and a write that fails; each with
 * its status and no spill file left (run() checks).
 */
XT_TEST(analytics_semi_stops)
{
	graph		g = sparse_graph();
	xxl_an_op	ops[] = {XXL_AN_TRIANGLE_COUNT, XXL_AN_COLORING, XXL_AN_PAGERANK};

	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
	{
		xxl_an_config cfg = config(ops[k], ROOMY);
		result		r = run(&g, &cfg);
		size_t		peak = r.st.memory_peak,
					memory = 0;

		free(r.rows);
		for (int step = 1; step <= 17 && memory == 0; step++)
		{
			cfg = config(ops[k], peak * step / 10);
			if (cfg.res.memory < xxl_an_min_memory())
				continue;
			r = run(&g, &cfg);
			if (r.rc == XXL_OK && strcmp(r.st.path, "semi-external") == 0)
				memory = cfg.res.memory;
			free(r.rows);
		}
		CHECK_MSG(memory > 0, "op %d: no semi-external budget", (int) ops[k]);
		if (memory > 0)
		{
			char		what[32];

			snprintf(what, sizeof(what), "op %d semi-external", (int) ops[k]);
			check_stops(&g, config(ops[k], memory), 1, 4096, true, what);
		}
	}
	free(g.e);
}

/*
 * Triangles whose out-lists do not fit beside their spooled edges are
 * built and counted in ranges (stats' ranges).  20000 ids and 600000 random
 * edges (self loops and repeats among them), and a pair repeated 200000
 * times whose lower end's list, repeats included, outgrows the least range
 * (it is rid of its repeats as it fills), with 500 triangles through it.
 * The roomy run's counts are the naive ones (bitsets of neighbours); at
 * budgets from a tenth to the whole of each operation's in-memory peak
 * every run has the roomy run's rows, and some ran in ranges; at the
 * least of those, cancels and a write failure among the ranges' spools
 * end with their status and no spill file.
 */
XT_TEST(analytics_triangles_ranged)
{
	enum
	{
		NODES = 20000, RANDOM = 600000, REPEATS = 200000
	};
	const int64_t spread = 1;
	const uint64_t words = (NODES + 63) / 64;
	xt_rng		rng = {29};
	graph		g = {0};
	uint64_t   *adj = calloc((size_t) NODES * words, sizeof(uint64_t)),
			   *tri = calloc(NODES, sizeof(uint64_t)),
				count = 0;
	xxl_an_op	ops[] = {XXL_AN_TRIANGLE_COUNT, XXL_AN_NODE_TRIANGLES, XXL_AN_TRIANGLES};

	g.e = malloc((RANDOM + REPEATS + 1200) * sizeof(edge));
	for (; g.m < RANDOM; g.m++)
		g.e[g.m] = (edge) {(int64_t) xt_below(&rng, NODES) * spread, (int64_t) xt_below(&rng, NODES) * spread, 1};
	/* 2 has more neighbours than 1, so 1's list holds 2 as often as the pair repeats */
	for (int i = 0; i < REPEATS; i++)
		g.e[g.m++] = (edge) {1 * spread, 2 * spread, 1};
	for (int i = 0; i < 700; i++)
		g.e[g.m++] = (edge) {2 * spread, (10 + i) * spread, 1};
	for (int i = 0; i < 500; i++)
		g.e[g.m++] = (edge) {(10 + i) * spread, 1 * spread, 1};
	/* the naive count: every pair u < v, its common neighbours w > v */
	for (size_t i = 0; i < g.m; i++)
	{
		int64_t		u = g.e[i].s / spread,
					v = g.e[i].t / spread;

		if (u != v)
		{
			adj[u * words + v / 64] |= UINT64_C(1) << (v % 64);
			adj[v * words + u / 64] |= UINT64_C(1) << (u % 64);
		}
	}
	for (uint64_t u = 0; u < NODES; u++)
		for (uint64_t vw = u / 64; vw < words; vw++)
			for (uint64_t vs = adj[u * words + vw] & (vw == u / 64 ? ~((UINT64_C(2) << (u % 64)) - 1) : ~UINT64_C(0)),
				 v = vw * 64 + (vs ? __builtin_ctzll(vs) : 0); vs; vs &= vs - 1, v = vw * 64 + (vs ? __builtin_ctzll(vs) : 0))
				for (uint64_t i = v / 64; i < words; i++)
				{
					uint64_t	both = adj[u * words + i] & adj[v * words + i];

					if (i == v / 64)
						both &= ~((UINT64_C(2) << (v % 64)) - 1);
					for (; both; both &= both - 1)
					{
						count++;
						tri[u]++;
						tri[v]++;
						tri[i * 64 + __builtin_ctzll(both)]++;
					}
				}
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
	{
		xxl_an_config cfg = config(ops[k], ROOMY);
		result		roomy = run(&g, &cfg);
		sweep_seen	seen;

		CHECK_STATUS(roomy.rc, XXL_OK);
		CHECK_MSG(strcmp(roomy.st.path, "in-memory") == 0, "op %d: %s", (int) ops[k], roomy.st.path);
		CHECK_EQ(roomy.st.triangles, count);
		if (ops[k] == XXL_AN_TRIANGLES)
			CHECK_EQ(roomy.n, count);
		for (size_t i = 0; ops[k] == XXL_AN_NODE_TRIANGLES && i < roomy.n; i++)
			CHECK_EQ((uint64_t) roomy.rows[i].v[1], tri[roomy.rows[i].v[0] / spread]);
		qsort(roomy.rows, roomy.n, sizeof(xxl_an_row), cmp_row);
		seen = sweep_budgets(&g, ops[k], &roomy, 10);
		CHECK_MSG(seen.ranged > 0, "op %d never in ranges", (int) ops[k]);
		printf("  # op %d: in ranges at %d of 10 budgets\n", (int) ops[k], seen.ranged);
		free(roomy.rows);
		/* stopped in ranges: cancels, and a write failing past the spooled edges' two passes */
		if (seen.ranged > 0)
		{
			char		what[32];

			snprintf(what, sizeof(what), "op %d in ranges", (int) ops[k]);
			check_stops(&g, config(ops[k], seen.first_ranged), 1, 16 * g.m + 65536, true, what);
		}
	}
	free(adj);
	free(tri);
	free(g.e);
}

XT_TEST(analytics_bad_config)
{
	xxl_an_config cfg = config(XXL_AN_PAGERANK, ROOMY);
	xxl_error	err = {0};

	cfg.damping = 1.5;
	CHECK(xxl_an_create(&cfg, &err) == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	cfg = config(XXL_AN_PAGERANK, ROOMY);
	{
		xxl_an	   *a = xxl_an_create(&cfg, &err);

		REQUIRE(a != NULL);
		CHECK_STATUS(xxl_an_put_edge(a, 1, 2, -1), XXL_EINVAL);
		xxl_an_destroy(a);
	}
	CHECK_EQ(xt_spill_files(), 0);
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
