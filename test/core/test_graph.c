/*
 * test_graph.c — unit tests of connected components, spanning forest and
 * minimum spanning forest (src/core/graph/xxl_graph.h).
 *
 * Every case runs on both paths: at a roomy budget (in memory, with no
 * spill) and at
 * the smallest budget or with a cap on the semi-external node count
 * (external node reduction), and the stats must say which path ran.  The
 * oracles are written here: an in-memory union-find over the distinct ids
 * for CC (labels must match exactly: the smallest id of each component),
 * validity for SF (input edges, no cycle, n - components edges, the same
 * components), and Kruskal for MSF (under the strict order (cost, id, input
 * position) the forest is unique, so the edge sequences must match exactly).
 * Inputs: random graphs with many components, paths, stars, cliques, self
 * loops, parallel edges, ids at INT64_MIN/MAX and negative, an empty edge
 * set, single edges, isolated self-loop nodes, equal costs, infinities.
 * Also: the budget holds, spill files are gone after destroy (also after a
 * cancel at any point and after a write failure), NaN costs are rejected.
 */
#include "xxl_test.h"

#include <math.h>

#include "core/graph/xxl_graph.h"
#include "core/graph/graph_internal.h"

#define KB 1024
#define MB (1024 * 1024)
#define ROOMY (64 * MB)

/* Input ------------------------------------------------------------------- */

typedef struct edge
{
	int64_t		src;
	int64_t		tgt;
	int64_t		id;
	double		cost;
} edge;

typedef struct edges
{
	edge	   *e;
	size_t		n;
	size_t		cap;
} edges;

static void
add_edge(edges *es, int64_t s, int64_t t, int64_t id, double cost)
{
	if (es->n == es->cap)
	{
		es->cap = es->cap ? 2 * es->cap : 64;
		es->e = realloc(es->e, es->cap * sizeof(edge));
	}
	es->e[es->n++] = (edge) {s, t, id, cost};
}

/* Oracles ----------------------------------------------------------------- */

static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

typedef struct oracle
{
	int64_t    *ids;			/* distinct ids, ascending */
	size_t		n;
	size_t	   *parent;
	size_t		components;
} oracle;

static size_t
o_index(const oracle *o, int64_t id)
{
	size_t		lo = 0,
				hi = o->n;

	while (lo < hi)
	{
		size_t		mid = (lo + hi) / 2;

		if (o->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t
uf_find_t(size_t *p, size_t x)
{
	while (p[x] != x)
	{
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

static bool
uf_union_t(size_t *p, size_t a, size_t b)
{
	a = uf_find_t(p, a);
	b = uf_find_t(p, b);
	if (a == b)
		return false;
	if (a < b)
		p[b] = a;
	else
		p[a] = b;
	return true;
}

static void
oracle_build(oracle *o, const edges *es)
{
	int64_t    *all = malloc((2 * es->n + 1) * sizeof(int64_t));
	size_t		k = 0;

	for (size_t i = 0; i < es->n; i++)
	{
		all[k++] = es->e[i].src;
		all[k++] = es->e[i].tgt;
	}
	qsort(all, k, sizeof(int64_t), cmp_i64);
	o->n = 0;
	for (size_t i = 0; i < k; i++)
		if (i == 0 || all[i] != all[i - 1])
			all[o->n++] = all[i];
	o->ids = all;
	o->parent = malloc((o->n + 1) * sizeof(size_t));
	for (size_t i = 0; i < o->n; i++)
		o->parent[i] = i;
	o->components = o->n;
	for (size_t i = 0; i < es->n; i++)
		if (uf_union_t(o->parent, o_index(o, es->e[i].src), o_index(o, es->e[i].tgt)))
			o->components--;
}

static void
oracle_free(oracle *o)
{
	free(o->ids);
	free(o->parent);
}

/* Kruskal under (cost, id, input position): the unique MSF, in that order. */
static const edges *kr_es;

static int
cmp_kruskal(const void *a, const void *b)
{
	size_t		i = *(const size_t *) a,
				j = *(const size_t *) b;
	const edge *x = &kr_es->e[i],
			   *y = &kr_es->e[j];
	uint64_t	cx = g_cost_key(x->cost),
				cy = g_cost_key(y->cost);

	if (cx != cy)
		return cx < cy ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return i < j ? -1 : i > j;
}

static size_t
oracle_msf(const edges *es, size_t **out)
{
	oracle		o;
	size_t	   *order = malloc((es->n + 1) * sizeof(size_t));
	size_t		k = 0;

	oracle_build(&o, es);
	for (size_t i = 0; i < o.n; i++)
		o.parent[i] = i;
	for (size_t i = 0; i < es->n; i++)
		order[i] = i;
	kr_es = es;
	qsort(order, es->n, sizeof(size_t), cmp_kruskal);
	for (size_t i = 0; i < es->n; i++)
	{
		const edge *e = &es->e[order[i]];

		if (uf_union_t(o.parent, o_index(&o, e->src), o_index(&o, e->tgt)))
			order[k++] = order[i];
	}
	oracle_free(&o);
	*out = order;
	return k;
}

/* Running the operator ---------------------------------------------------- */

static xxl_graph_config
graph_config(size_t memory, uint64_t max_semi)
{
	xxl_graph_config c;

	memset(&c, 0, sizeof(c));
	c.res.memory = memory;
	c.res.disk.dirs = xt_dirs;
	c.res.disk.ndisks = 2;
	c.res.disk.file_prefix = "test_graph";
	c.res.disk.block_size = 0;
	c.res.disk.try_direct = false;
	c.res.disk.strategy = XXL_ALLOC_RANDOM_CYCLING;
	c.res.disk.seed = 11;
	c.seed = 12345;
	c.max_semi_nodes = max_semi;
	return c;
}

typedef struct result
{
	xxl_status	rc;				/* of put/run/next */
	/* CC */
	int64_t    *node;
	int64_t    *comp;
	/* SF, MSF */
	edge	   *fe;
	size_t		n;
	xxl_graph_stats st;
} result;

static void
result_free(result *r)
{
	free(r->node);
	free(r->comp);
	free(r->fe);
	memset(r, 0, sizeof(*r));
}

static result
run_graph(const edges *es, xxl_graph_op op, const xxl_graph_config *cfg)
{
	result		res;
	xxl_error	err = {0};
	xxl_graph  *g = xxl_graph_create(cfg, op, &err);
	size_t		cap = 0;

	memset(&res, 0, sizeof(res));
	if (g == NULL)
	{
		res.rc = err.code;
		return res;
	}
	for (size_t i = 0; i < es->n && res.rc == XXL_OK; i++)
		res.rc = xxl_graph_put_edge(g, es->e[i].src, es->e[i].tgt, es->e[i].id, es->e[i].cost);
	if (res.rc == XXL_OK)
		res.rc = xxl_graph_run(g);
	while (res.rc == XXL_OK)
	{
		int			got;

		if (res.n == cap)
		{
			cap = cap ? 2 * cap : 256;
			if (op == XXL_GRAPH_CC)
			{
				res.node = realloc(res.node, cap * sizeof(int64_t));
				res.comp = realloc(res.comp, cap * sizeof(int64_t));
			}
			else
				res.fe = realloc(res.fe, cap * sizeof(edge));
		}
		if (op == XXL_GRAPH_CC)
			got = xxl_graph_next_node(g, &res.node[res.n], &res.comp[res.n]);
		else
		{
			edge	   *f = &res.fe[res.n];

			got = xxl_graph_next_edge(g, &f->id, &f->src, &f->tgt, &f->cost);
		}
		if (got == 0)
			break;
		if (got < 0)
			res.rc = xxl_graph_error(g)->code ? xxl_graph_error(g)->code : XXL_EIO;
		else
			res.n++;
	}
	if (res.rc == XXL_OK)
	{
		int64_t		a,
					b,
					c;
		double		d;

		/* past the end stays at the end */
		if (op == XXL_GRAPH_CC)
			CHECK_EQ(xxl_graph_next_node(g, &a, &b), 0);
		else
			CHECK_EQ(xxl_graph_next_edge(g, &a, &b, &c, &d), 0);
	}
	xxl_graph_stats_get(g, &res.st);
	xxl_graph_destroy(g);
	CHECK_EQ(xt_spill_files(), 0);
	return res;
}

/* Checks ------------------------------------------------------------------ */

static void
check_cc(const char *label, const edges *es, const result *r)
{
	oracle		o;
	size_t		bad = 0;

	oracle_build(&o, es);
	CHECK_MSG(r->n == o.n, "%s: %zu nodes, want %zu", label, r->n, o.n);
	for (size_t i = 0; i < r->n && i < o.n && bad < 5; i++)
	{
		int64_t		want = o.ids[uf_find_t(o.parent, i)];

		if (r->node[i] != o.ids[i] || r->comp[i] != want)
		{
			xt_fail(__FILE__, __LINE__, "%s: row %zu = (%" PRId64 ", %" PRId64 "), want (%" PRId64 ", %" PRId64 ")",
					label, i, r->node[i], r->comp[i], o.ids[i], want);
			bad++;
		}
	}
	CHECK_MSG(r->st.components == o.components, "%s: stats say %" PRIu64 " components, want %zu",
			  label, r->st.components, o.components);
	CHECK_EQ(r->st.nodes, o.n);
	oracle_free(&o);
}

static int
cmp_edge_id(const void *a, const void *b)
{
	const edge *x = a,
			   *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* SF: input edges (ids are unique here), no cycle, spanning, input order. */
static void
check_sf(const char *label, const edges *es, const result *r)
{
	oracle		o;
	edge	   *byid = malloc((es->n + 1) * sizeof(edge));
	size_t	   *pos = malloc((es->n + 1) * sizeof(size_t));
	size_t		bad = 0;
	size_t		prev = 0;

	oracle_build(&o, es);
	memcpy(byid, es->e, es->n * sizeof(edge));
	/* the input position rides in cost's place for the lookup */
	for (size_t i = 0; i < es->n; i++)
		byid[i].cost = (double) i;
	qsort(byid, es->n, sizeof(edge), cmp_edge_id);
	for (size_t i = 0; i < o.n; i++)
		o.parent[i] = i;
	CHECK_MSG(r->n + o.components == o.n, "%s: %zu forest edges for %zu nodes in %zu components",
			  label, r->n, o.n, o.components);
	for (size_t i = 0; i < r->n && bad < 5; i++)
	{
		const edge *f = &r->fe[i];
		edge		key = {0, 0, f->id, 0};
		edge	   *in = bsearch(&key, byid, es->n, sizeof(edge), cmp_edge_id);
		size_t		p;

		if (in == NULL || in->src != f->src || in->tgt != f->tgt)
		{
			xt_fail(__FILE__, __LINE__, "%s: forest edge %" PRId64 " (%" PRId64 ", %" PRId64 ") is not an input edge",
					label, f->id, f->src, f->tgt);
			bad++;
			continue;
		}
		p = (size_t) in->cost;
		if (f->cost != es->e[p].cost && !(isnan(f->cost) && isnan(es->e[p].cost)))
		{
			xt_fail(__FILE__, __LINE__, "%s: forest edge %" PRId64 " has cost %g, input %g", label,
					f->id, f->cost, es->e[p].cost);
			bad++;
		}
		if (i > 0 && p <= prev)
		{
			xt_fail(__FILE__, __LINE__, "%s: forest edges not in input order at %zu", label, i);
			bad++;
		}
		prev = p;
		if (!uf_union_t(o.parent, o_index(&o, f->src), o_index(&o, f->tgt)))
		{
			xt_fail(__FILE__, __LINE__, "%s: forest edge %" PRId64 " closes a cycle", label, f->id);
			bad++;
		}
	}
	/* spanning: every input edge's ends are connected in the forest */
	for (size_t i = 0; i < es->n && bad < 5; i++)
		if (uf_find_t(o.parent, o_index(&o, es->e[i].src)) != uf_find_t(o.parent, o_index(&o, es->e[i].tgt)))
		{
			xt_fail(__FILE__, __LINE__, "%s: edge %zu's ends are not connected by the forest", label, i);
			bad++;
		}
	CHECK_EQ(r->st.forest_edges, r->n);
	CHECK_EQ(r->st.components, o.components);
	oracle_free(&o);
	free(byid);
	free(pos);
}

static bool
same_edge(const edge *a, const edge *b)
{
	return a->src == b->src && a->tgt == b->tgt && a->id == b->id &&
		memcmp(&a->cost, &b->cost, sizeof(double)) == 0;
}

/* MSF: exactly the oracle's forest, in (cost, id) order, same weight. */
static void
check_msf(const char *label, const edges *es, const result *r)
{
	size_t	   *want;
	size_t		k = oracle_msf(es, &want);
	size_t		bad = 0;
	long double w_got = 0,
				w_want = 0;

	CHECK_MSG(r->n == k, "%s: %zu forest edges, want %zu", label, r->n, k);
	for (size_t i = 0; i < k && i < r->n; i++)
	{
		w_want += es->e[want[i]].cost;
		w_got += r->fe[i].cost;
		if (!same_edge(&r->fe[i], &es->e[want[i]]) && bad++ < 5)
			xt_fail(__FILE__, __LINE__, "%s: forest edge %zu = (%" PRId64 ": %" PRId64 "-%" PRId64 ", %g), want (%" PRId64 ": %" PRId64 "-%" PRId64 ", %g)",
					label, i, r->fe[i].id, r->fe[i].src, r->fe[i].tgt, r->fe[i].cost,
					es->e[want[i]].id, es->e[want[i]].src, es->e[want[i]].tgt, es->e[want[i]].cost);
	}
	if (!isinf((double) w_want) && !isnan((double) w_want))
		CHECK_MSG(w_got == w_want, "%s: weight %Lg, want %Lg", label, w_got, w_want);
	free(want);
}

/*
 * Run every operation on a graph at a roomy budget and forced external,
 * check against the oracles and the stats.  ext_cfg forces the external
 * path: by the smallest budget if the graph is large enough, else by the
 * node cap.  Graphs forced by the cap run external a second time with the
 * queue's records as wide as for more than 2^32 nodes.
 */
static void
check_all_ops(const char *label, const edges *es, bool tiny_budget, uint64_t semi_cap)
{
	xxl_graph_op ops[] = {XXL_GRAPH_CC, XXL_GRAPH_SF, XXL_GRAPH_MSF};
	oracle		o;
	size_t		nodes;

	oracle_build(&o, es);
	nodes = o.n;
	oracle_free(&o);
	for (int pass = 0; pass < (semi_cap > 0 ? 3 : 2); pass++)
	{
		xxl_graph_config cfg = pass == 0 ? graph_config(ROOMY, 0) :
			graph_config(tiny_budget ? xxl_graph_min_memory() : ROOMY, semi_cap);

		cfg.wide_queue = pass == 2;

		for (int k = 0; k < 3; k++)
		{
			char		l[200];
			result		r = run_graph(es, ops[k], &cfg);
			/*
			 * A single node always fits; every other forced case must go
			 * external.  Every operation runs in memory when it fits and no
			 * node cap asks for the other paths (at the tiny budget it starts
			 * there and moves to the sorters midway).
			 */
			bool		mem = pass == 0 || semi_cap == 0;
			xxl_graph_path want = pass == 0 || nodes <= 1 ?
				(mem ? XXL_GRAPH_IN_MEMORY : XXL_GRAPH_SEMI_EXTERNAL) : XXL_GRAPH_EXTERNAL;

			/*
			 * without a cap, small non-negative ids keep components in
			 * memory and the forests semi-external, by id, wherever their 4
			 * bytes per id fit
			 */
			if (pass >= 1 && semi_cap == 0 && r.st.ids_by_id)
				want = ops[k] == XXL_GRAPH_CC && r.st.id_parts == 1 ? XXL_GRAPH_IN_MEMORY :
					XXL_GRAPH_SEMI_EXTERNAL;
			snprintf(l, sizeof(l), "%s/%s/%s", label, ops[k] == XXL_GRAPH_CC ? "cc" :
					 ops[k] == XXL_GRAPH_SF ? "sf" : "msf", pass == 0 ? "roomy" : pass == 1 ? "external" : "external wide");
			CHECK_MSG(r.rc == XXL_OK, "%s: status %s", l, xxl_status_name(r.rc));
			if (r.rc != XXL_OK)
			{
				result_free(&r);
				continue;
			}
			CHECK_MSG(r.st.path == want, "%s: path %s, want %s (n %" PRIu64 ", semi max %" PRIu64 ")",
					  l, xxl_graph_path_name(r.st.path), xxl_graph_path_name(want), r.st.nodes,
					  r.st.semi_nodes_max);
			CHECK_LE(r.st.memory_peak, cfg.res.memory);
			CHECK_EQ(r.st.edges, es->n);
			/* (by id, an array regrown through a spool to take the pool: 4 bytes per id once) */
			if (r.st.path == XXL_GRAPH_IN_MEMORY)
				CHECK_LE(r.st.bytes_written, r.st.ids_by_id ? 4 * r.st.nodes + 256 * 1024 : 0);
			if (r.st.path == XXL_GRAPH_EXTERNAL)
			{
				CHECK_EQ(r.st.contraction_passes, 1);
				CHECK_LE(r.st.base_nodes, r.st.nodes);
			}
			if (ops[k] == XXL_GRAPH_CC)
				check_cc(l, es, &r);
			else if (ops[k] == XXL_GRAPH_SF)
				check_sf(l, es, &r);
			else
				check_msf(l, es, &r);
			result_free(&r);
		}
	}
}

/* Generators -------------------------------------------------------------- */

/* A pool of distinct ids: negative, positive, the extremes. */
static int64_t *
id_pool(xt_rng *rng, size_t n)
{
	int64_t    *ids = malloc((n + 4) * sizeof(int64_t));

	for (size_t i = 0; i < n; i++)
	{
		switch (i)
		{
			case 0:
				ids[i] = INT64_MIN;
				break;
			case 1:
				ids[i] = INT64_MAX;
				break;
			case 2:
				ids[i] = -1;
				break;
			case 3:
				ids[i] = 0;
				break;
			default:
				/* unique: a random high part and i below */
				ids[i] = (int64_t) ((xt_next(rng) << 24) | (uint64_t) i);
				if (ids[i] == INT64_MIN || ids[i] == INT64_MAX || ids[i] == -1 || ids[i] == 0)
					ids[i] = (int64_t) (((uint64_t) 5 << 32) | i);
				break;
		}
	}
	/* shuffle so that the extremes land anywhere */
	for (size_t i = n; i > 1; i--)
	{
		size_t		j = xt_below(rng, i);
		int64_t		t = ids[i - 1];

		ids[i - 1] = ids[j];
		ids[j] = t;
	}
	return ids;
}

static double
random_cost(xt_rng *rng, int kind)
{
	switch (kind)
	{
		case 0:					/* few distinct values: many ties */
			return (double) xt_below(rng, 8);
		case 1:
			return ((double) xt_below(rng, 2000000) - 1000000.0) / 1024.0;
		default:
			{
				uint64_t	k = xt_below(rng, 20);

				return k == 0 ? -INFINITY : k == 1 ? INFINITY : k == 2 ? -0.0 : k == 3 ? 0.0 :
					(double) xt_below(rng, 100) - 50.0;
			}
	}
}

/*
 * A random graph on n nodes in `clusters` groups (edges stay inside a
 * group, so there are at least that many components), with self loops and
 * parallel edges.  Edge ids are unique, in scrambled order.
 */
static void
random_graph(edges *es, xt_rng *rng, size_t n, size_t m, size_t clusters, int cost_kind)
{
	int64_t    *ids = id_pool(rng, n);
	size_t		per = (n + clusters - 1) / clusters;

	for (size_t i = 0; i < m; i++)
	{
		size_t		c = xt_below(rng, clusters);
		size_t		lo = c * per,
					hi = lo + per > n ? n : lo + per;
		size_t		a,
					b;

		if (lo >= hi)
			lo = 0, hi = n;
		a = lo + xt_below(rng, hi - lo);
		b = xt_below(rng, 50) == 0 ? a : lo + xt_below(rng, hi - lo);
		add_edge(es, ids[a], ids[b], (int64_t) (i * 2654435761u % 1000003u) - 500000 +
				 (int64_t) i * 1000003, random_cost(rng, cost_kind));
		if (xt_below(rng, 30) == 0)
		{
			/* a parallel edge, maybe reversed */
			i++;
			if (i < m)
				add_edge(es, xt_below(rng, 2) ? ids[b] : ids[a], xt_below(rng, 2) ? ids[a] : ids[b],
						 (int64_t) (i * 2654435761u % 1000003u) - 500000 + (int64_t) i * 1000003,
						 random_cost(rng, cost_kind));
		}
	}
	free(ids);
}

/* Tests ------------------------------------------------------------------- */

XT_TEST(graph_permutation)
{
	uint64_t	sizes[] = {1, 2, 3, 4, 5, 17, 100, 1000, 65537, 100003};

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
	{
		uint64_t	n = sizes[s];
		unsigned char *seen = calloc(n, 1);
		gperm		p;
		size_t		fixed = 0;

		gperm_init(&p, n, 99 + s);
		for (uint64_t x = 0; x < n; x++)
		{
			uint64_t	y = gperm_apply(&p, x);

			REQUIRE_MSG(y < n && !seen[y], "n %" PRIu64 ": not a bijection at %" PRIu64, n, x);
			seen[y] = 1;
			CHECK_EQ(gperm_invert(&p, y), x);
			fixed += y == x;
		}
		if (n >= 1000)
			CHECK_LE(fixed, n / 50);
		free(seen);
	}
	{
		gperm		p;
		xt_rng		rng = {5};

		gperm_init(&p, (UINT64_C(1) << 62) + 12345, 7);
		for (int i = 0; i < 10000; i++)
		{
			uint64_t	x = xt_below(&rng, p.n);
			uint64_t	y = gperm_apply(&p, x);

			CHECK(y < p.n);
			CHECK_EQ(gperm_invert(&p, y), x);
		}
	}
}

XT_TEST(graph_empty)
{
	edges		es = {0};

	check_all_ops("empty", &es, true, 1);
	free(es.e);
}

XT_TEST(graph_single_edge)
{
	edges		es = {0};

	add_edge(&es, 7, -3, 42, 1.5);
	check_all_ops("single", &es, false, 1);
	free(es.e);
}

XT_TEST(graph_self_loops)
{
	edges		es = {0};

	/* isolated self-loop nodes, a repeated loop, and loops on a path */
	add_edge(&es, 5, 5, 1, 1.0);
	add_edge(&es, INT64_MIN, INT64_MIN, 2, 0.0);
	add_edge(&es, 9, 9, 3, -2.0);
	add_edge(&es, 9, 9, 4, -3.0);
	add_edge(&es, 1, 2, 5, 3.0);
	add_edge(&es, 2, 2, 6, -9.0);
	add_edge(&es, 2, 3, 7, 1.0);
	add_edge(&es, INT64_MAX, INT64_MAX, 8, 1.0);
	check_all_ops("self loops", &es, false, 1);
	/* only one self loop */
	es.n = 1;
	check_all_ops("one loop", &es, false, 1);
	free(es.e);
}

XT_TEST(graph_extreme_ids)
{
	edges		es = {0};

	add_edge(&es, INT64_MIN, INT64_MAX, -1, 1.0);
	add_edge(&es, INT64_MAX, 0, INT64_MIN, 1.0);
	add_edge(&es, -1, 1, INT64_MAX, 2.0);
	add_edge(&es, INT64_MIN + 1, -1, 0, -1.0);
	add_edge(&es, INT64_MAX - 1, INT64_MIN + 1, 3, INFINITY);
	add_edge(&es, 1, 0, 4, 5.0);
	for (uint64_t cap = 1; cap <= 4; cap++)
		check_all_ops("extremes", &es, false, cap);
	free(es.e);
}

XT_TEST(graph_parallel_edges)
{
	edges		es = {0};

	/* the same pair many times, both orientations, equal and unequal costs */
	for (int i = 0; i < 40; i++)
		add_edge(&es, i % 2 ? 10 : 20, i % 2 ? 20 : 10, 100 + i, (double) (i % 5));
	add_edge(&es, 20, 30, 1, 2.0);
	add_edge(&es, 30, 20, 2, 2.0);
	add_edge(&es, 10, 30, 3, 1.0);
	for (uint64_t cap = 1; cap <= 2; cap++)
		check_all_ops("parallel", &es, false, cap);
	free(es.e);
}

XT_TEST(graph_equal_costs_dup_ids)
{
	edges		es = {0};
	xt_rng		rng = {21};

	/* MSF ties: equal costs and equal ids; the input order decides */
	for (int i = 0; i < 300; i++)
		add_edge(&es, (int64_t) xt_below(&rng, 40), (int64_t) xt_below(&rng, 40),
				 (int64_t) xt_below(&rng, 3), (double) xt_below(&rng, 2));
	for (uint64_t cap = 3; cap <= 30; cap += 9)
	{
		xxl_graph_config a = graph_config(ROOMY, 0),
					b = graph_config(ROOMY, cap);
		result		r1 = run_graph(&es, XXL_GRAPH_MSF, &a),
					r2 = run_graph(&es, XXL_GRAPH_MSF, &b);

		REQUIRE(r1.rc == XXL_OK && r2.rc == XXL_OK);
		CHECK_EQ(r2.st.path, XXL_GRAPH_EXTERNAL);
		check_msf("ties roomy", &es, &r1);
		check_msf("ties external", &es, &r2);
		CHECK_EQ(r1.n, r2.n);
		for (size_t i = 0; i < r1.n && i < r2.n; i++)
			CHECK(same_edge(&r1.fe[i], &r2.fe[i]));
		result_free(&r1);
		result_free(&r2);
		r1 = run_graph(&es, XXL_GRAPH_CC, &b);
		check_cc("ties cc", &es, &r1);
		result_free(&r1);
	}
	free(es.e);
}

XT_TEST(graph_path_star_clique)
{
	edges		es = {0};
	xt_rng		rng = {3};
	int64_t    *ids = id_pool(&rng, 3000);

	/* a path in scrambled id order */
	for (int i = 0; i + 1 < 2000; i++)
		add_edge(&es, ids[i], ids[i + 1], i, (double) (i % 7));
	check_all_ops("path", &es, false, 100);
	es.n = 0;
	/* a star: the center's id is in the middle */
	for (int i = 1; i < 2000; i++)
		add_edge(&es, ids[0], ids[i], i, (double) xt_below(&rng, 1000));
	check_all_ops("star", &es, false, 50);
	es.n = 0;
	/* a clique */
	for (int i = 0; i < 60; i++)
		for (int j = i + 1; j < 60; j++)
			add_edge(&es, ids[j], ids[i], i * 100 + j, (double) xt_below(&rng, 50));
	check_all_ops("clique", &es, false, 10);
	es.n = 0;
	/* many disjoint small stars and pairs */
	for (int i = 0; i + 3 < 3000; i += 4)
	{
		add_edge(&es, ids[i], ids[i + 1], i, 1);
		add_edge(&es, ids[i], ids[i + 2], i + 1, 2);
		if (i % 8 == 0)
			add_edge(&es, ids[i + 3], ids[i + 3], i + 2, 3);
	}
	check_all_ops("small stars", &es, false, 200);
	free(es.e);
	free(ids);
}

XT_TEST(graph_random_small_caps)
{
	/* small random graphs with the node cap at several fractions of n */
	for (int t = 0; t < 12; t++)
	{
		edges		es = {0};
		xt_rng		rng = {100 + t};
		size_t		n = 20 + xt_below(&rng, 400);
		size_t		m = xt_below(&rng, 3 * n);
		char		label[64];

		oracle		o;

		random_graph(&es, &rng, n, m, 1 + xt_below(&rng, 8), t % 3);
		oracle_build(&o, &es);
		snprintf(label, sizeof(label), "random small %d", t);
		check_all_ops(label, &es, false, 1 + xt_below(&rng, o.n / 2));
		oracle_free(&o);
		free(es.e);
	}
}

/*
 * Renumber a graph's ids to base + stride * (rank of the id): small
 * non-negative ids, as most tables have, take components by id.
 */
static void
densify(edges *es, int64_t base, int64_t stride)
{
	oracle		o;

	oracle_build(&o, es);
	for (size_t i = 0; i < es->n; i++)
	{
		es->e[i].src = base + stride * (int64_t) o_index(&o, es->e[i].src);
		es->e[i].tgt = base + stride * (int64_t) o_index(&o, es->e[i].tgt);
	}
	oracle_free(&o);
}

/* From 3/4 of the edges on, every 97th edge's target is late ... late ± 4 (0: none). */
static void
late_ids(edges *es, int64_t late)
{
	if (late != 0)
		for (size_t i = es->n * 3 / 4; i < es->n; i += 97)
			es->e[i].tgt = late + (late < 0 || late == INT64_MAX ? -1 : 1) * (int64_t) (i % 5);
}

/*
 * Components by id (the id map's array as the union-find, no edge kept),
 * and each way out of it: ids of the array all along; a negative id, a
 * huge one, or ids too sparse for the array arriving midway (the links so
 * far become the numbered map's edges); a budget too small for the array
 * (the links go to the sorters).
 */
XT_TEST(graph_components_by_id)
{
	/* more nodes than the semi-external base takes at the smallest budget */
	size_t		n = xt_quick() ? 40000 : 100000;
	struct
	{
		const char *label;
		int64_t		base,
					stride;
		int64_t		late;		/* an id for one end of the edges from 3/4 on, 0: none */
		size_t		m_per_2n;	/* edges per half node */
	}			cases[] = {
		{"by id", 0, 1, 0, 4},
		{"by id from 1", 1, 1, 0, 4},
		{"by id, stride 3", 5, 3, 0, 4},
		{"by id, then negative", 0, 1, -7, 4},
		{"by id, then huge", 0, 1, INT64_MAX, 4},
		{"by id, then 2^32", 1, 1, (int64_t) 1 << 32, 4},
		/* more ids than edges when the links move on */
		{"by id, few edges, then huge", 0, 1, INT64_MAX, 1},
		{"sparse", 0, 40, 0, 4},
	};
	/*
	 * budgets at which the links so far no longer fit the numbered map
	 * (the roomy one: by id to the end)
	 */
	size_t		budgets[] = {ROOMY, 1 * MB, 3 * MB / 2, 2 * MB, 3 * MB};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		edges		es = {0};
		xt_rng		rng = {31 + c};

		random_graph(&es, &rng, n, n * cases[c].m_per_2n / 2, 1 + c * 40, (int) c % 3);
		densify(&es, cases[c].base, cases[c].stride);
		late_ids(&es, cases[c].late);
		/* the forests on the same ids (by id too): once is enough */
		if (c < 2)
			check_all_ops(cases[c].label, &es, true, 0);
		for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++)
		{
			char		l[100];
			xxl_graph_config cfg = graph_config(budgets[b], 0);
			result		r;

			/* the row estimate SQL gives lets the array reach the top ids at once */
			cfg.expected_edges = es.n;
			r = run_graph(&es, XXL_GRAPH_CC, &cfg);
			snprintf(l, sizeof(l), "%s/cc/%zu kB", cases[c].label, budgets[b] / KB);
			CHECK_MSG(r.rc == XXL_OK, "%s: status %s", l, xxl_status_name(r.rc));
			if (r.rc == XXL_OK)
			{
				CHECK_LE(r.st.memory_peak, cfg.res.memory);
				check_cc(l, &es, &r);
				/* the array may take most of the pool (its links spool if they move on) */
				if (c < 2 && budgets[b] >= 3 * MB / 2)
					CHECK_MSG(r.st.path == XXL_GRAPH_IN_MEMORY && r.st.ids_by_id, "%s: path %d", l,
							  (int) r.st.path);
			}
			result_free(&r);
		}
		free(es.e);
	}
}

/*
 * Components by id in parts: serial ids whose union-find outgrows the pool
 * keep the ids below in the array and join the rest level by level at run
 * (semi-external, by id).  Each way out of it too: low ids that join
 * little among themselves (the first level gives up: the sorters), a
 * second level that joins little (the sorters from the first level's
 * links), and a negative or huge id arriving midway.
 */
XT_TEST(graph_components_in_parts)
{
	size_t		n = 300000;
	struct
	{
		const char *label;
		int			kind;		/* 0 random, 1 low-high pairs only, 2 below, 3 paths */
		int64_t		late;
	}			cases[] = {
		{"random", 0, 0},
		/* ids in ascending order: the array grows as they come, then regrows to the pool */
		{"paths in id order", 3, 0},
		{"low ids joined only through high ones", 1, 0},
		/* the first level joins, the second does not: the sorters from the first's links */
		{"joined low ids, then a matching", 2, 0},
		{"random, then negative", 0, -7},
		{"random, then huge", 0, INT64_MAX},
	};
	size_t		budgets[] = {1 * MB, 3 * MB / 2};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		edges		es = {0};
		xt_rng		rng = {71 + c};
		int			split = 0;
		bool		way_out;

		if (cases[c].kind == 0)
		{
			random_graph(&es, &rng, n, 4 * n, 1 + c * 40, 0);
			densify(&es, 0, 1);
		}
		else if (cases[c].kind == 1)
			/* ids below 4n/5 (beyond the first level's array at 1MB) only with those above */
			for (size_t i = 0; i < n; i++)
				add_edge(&es, (int64_t) xt_below(&rng, 4 * n / 5),
						 (int64_t) (4 * n / 5 + xt_below(&rng, n / 5)), (int64_t) i, 0);
		else if (cases[c].kind == 3)
			for (int64_t i = 1; i < (int64_t) n; i++)
			{
				if (i % 1000 != 0)
					add_edge(&es, i, i + 1, i, 0);
			}
		else
		{
			/* ids [0, h) joined by 5 random edges each, [h, 2h) paired i with 2h - 1 - i */
			int64_t		h = 250000;

			for (int64_t i = 0; i < 5 * h; i++)
				add_edge(&es, (int64_t) xt_below(&rng, h), (int64_t) xt_below(&rng, h), i, 0);
			for (int64_t i = 0; i < h / 2; i++)
				add_edge(&es, h + i, 2 * h - 1 - i, 5 * h + i, 0);
			add_edge(&es, 0, 2 * h - 1, 6 * h, 0);
		}
		late_ids(&es, cases[c].late);
		/* (the ways out at the least budget only: the sorters take their time) */
		way_out = cases[c].kind == 1 || cases[c].kind == 2 || cases[c].late != 0;
		for (size_t b = 0; b < (!way_out ? sizeof(budgets) / sizeof(budgets[0]) : 1); b++)
			for (int estimate = 0; estimate < 2; estimate++)
			{
				char		l[120];
				xxl_graph_config cfg = graph_config(budgets[b], 0);
				result		r;

				cfg.expected_edges = estimate ? es.n : 0;
				r = run_graph(&es, XXL_GRAPH_CC, &cfg);
				snprintf(l, sizeof(l), "%s/%zu kB/%s", cases[c].label, budgets[b] / KB,
						 estimate ? "estimate" : "no estimate");
				CHECK_MSG(r.rc == XXL_OK, "%s: status %s", l, xxl_status_name(r.rc));
				if (r.rc == XXL_OK)
				{
					bool		two = r.st.id_parts >= 2;

					if (two)
						CHECK(r.st.ids_by_id && r.st.path == XXL_GRAPH_SEMI_EXTERNAL);
					CHECK_LE(r.st.memory_peak, cfg.res.memory);
					check_cc(l, &es, &r);
					split += two;
					/* the ways out: a late id, or low ids joined little at 1MB: the sorters */
					if (way_out)
						CHECK_MSG(!two && r.st.path == XXL_GRAPH_EXTERNAL, "%s: path %s", l,
								  xxl_graph_path_name(r.st.path));
					/* the parts write the spooled edges, not the sorters' volume */
					if (two)
						CHECK_LE(r.st.bytes_written, 40 * es.n);
				}
				result_free(&r);
			}
		/* 1.2 MB of union-find: in parts at 1MB at least, with and without the estimate */
		if (!way_out)
			CHECK_MSG(split >= 2, "%s: in parts %d times", cases[c].label, split);
		free(es.e);
	}

	/* 2 MB of union-find at 1MB, 10 edges per id: several levels */
	{
		edges		es = {0};
		xt_rng		rng = {97};

		random_graph(&es, &rng, 500000, 2500000, 1, 0);
		densify(&es, 0, 1);
		for (int estimate = 0; estimate < 2; estimate++)
		{
			xxl_graph_config cfg = graph_config(1 * MB, 0);
			result		r;

			cfg.expected_edges = estimate ? es.n : 0;
			r = run_graph(&es, XXL_GRAPH_CC, &cfg);
			CHECK_MSG(r.rc == XXL_OK, "levels: status %s", xxl_status_name(r.rc));
			if (r.rc == XXL_OK)
			{
				CHECK_LE(r.st.memory_peak, cfg.res.memory);
				check_cc("levels", &es, &r);
				CHECK_MSG(r.st.id_parts >= 3, "levels: %d parts, path %s", r.st.id_parts,
						  xxl_graph_path_name(r.st.path));
				CHECK_LE(r.st.bytes_written, 40 * es.n);
			}
			result_free(&r);
		}
		free(es.e);
	}
}

/* Large enough that the smallest budget forces the external path. */
XT_TEST(graph_random_tiny_budget)
{
	/*
	 * (no smaller in quick mode: the least budget's semi-external base
	 * takes 48640 nodes for components, 97280 for the forests)
	 */
	size_t		n = 120000;
	struct
	{
		size_t		m_per_n;
		size_t		clusters;
		int			cost;
	}			cases[] = {{2, 1, 0}, {4, 50, 1}, {1, 5000, 2}};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		edges		es = {0};
		xt_rng		rng = {7 + c};
		char		label[64];

		random_graph(&es, &rng, n, n * cases[c].m_per_n, cases[c].clusters, cases[c].cost);
		snprintf(label, sizeof(label), "random tiny %zu", c);
		check_all_ops(label, &es, true, 0);
		free(es.e);
	}
}

/*
 * The forests between memory and the sorters: few nodes and many edges
 * from the budget where the kept edges no longer fit down to the smallest
 * (the ids numbered in memory, the edges spooled, the minimum forest's
 * sorted by one sorter); with a row estimate that rules memory out from
 * the start; and a graph whose ids outgrow the smallest budget midway
 * (the spooled edges then go to the sorting path).  Every forest is the
 * oracle's.
 */
XT_TEST(graph_forests_ids_in_memory)
{
	edges		es = {0};
	xt_rng		rng = {77};
	int			mapped = 0,
				in_memory = 0;

	random_graph(&es, &rng, 4000, 120000, 1, 1);
	for (size_t kb = 8192, last = 0; !last; kb = kb / 2)
		for (int k = 0; k < 2; k++)
			for (int estimate = 0; estimate < 2; estimate++)
			{
				xxl_graph_op op = k ? XXL_GRAPH_MSF : XXL_GRAPH_SF;
				xxl_graph_config cfg;
				result		r;

				if (kb * 1024 <= xxl_graph_min_memory())
				{
					kb = xxl_graph_min_memory() / 1024;
					last = 1;
				}
				cfg = graph_config(kb * 1024, 0);
				cfg.expected_edges = estimate ? es.n : 0;
				r = run_graph(&es, op, &cfg);
				REQUIRE_MSG(r.rc == XXL_OK, "%zu kB: %s", kb, xxl_status_name(r.rc));
				if (op == XXL_GRAPH_SF)
					check_sf("ids in memory", &es, &r);
				else
					check_msf("ids in memory", &es, &r);
				CHECK_LE(r.st.memory_peak, cfg.res.memory);
				in_memory += r.st.path == XXL_GRAPH_IN_MEMORY;
				if (r.st.ids_in_memory)
				{
					mapped++;
					CHECK_EQ(r.st.path, XXL_GRAPH_SEMI_EXTERNAL);
					CHECK(r.st.bytes_written > 0);
				}
				result_free(&r);
			}
	CHECK(in_memory >= 2);
	CHECK(mapped >= 8);
	free(es.e);

	/* ids that do not fit the smallest budget */
	memset(&es, 0, sizeof(es));
	random_graph(&es, &rng, 80000, 100000, 1, 1);
	for (int k = 0; k < 2; k++)
	{
		xxl_graph_config cfg = graph_config(xxl_graph_min_memory(), 0);
		result		r = run_graph(&es, k ? XXL_GRAPH_MSF : XXL_GRAPH_SF, &cfg);

		REQUIRE(r.rc == XXL_OK);
		if (k)
			check_msf("ids outgrown", &es, &r);
		else
			check_sf("ids outgrown", &es, &r);
		CHECK(!r.st.ids_in_memory);
		CHECK(r.st.path != XXL_GRAPH_IN_MEMORY);
		result_free(&r);
	}
	free(es.e);
}

/*
 * The forests with small non-negative ids, their own union-find index:
 * down to budgets where numbered ids would not fit, and each way out (a
 * negative or huge id midway: the ids after it numbered; ids too sparse
 * for the room), with and without the row estimate.  Every forest is the
 * oracle's.
 */
XT_TEST(graph_forests_by_id)
{
	size_t		n = xt_quick() ? 20000 : 40000;
	struct
	{
		const char *label;
		int64_t		stride;
		int64_t		late;
	}			cases[] = {
		{"by id", 1, 0},
		{"by id, then negative", 1, -7},
		{"by id, then huge", 1, INT64_MAX},
		{"sparse", 4000, 0},
	};
	size_t		budgets[] = {4 * MB, 2 * MB, 1 * MB, 0};
	int			by_id_small = 0;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		edges		es = {0};
		xt_rng		rng = {501 + c};
		oracle		o;

		random_graph(&es, &rng, n, 4 * n, 1 + c * 7, 1);
		densify(&es, 0, cases[c].stride);
		late_ids(&es, cases[c].late);
		oracle_build(&o, &es);
		for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++)
			for (int k = 0; k < 2; k++)
			{
				xxl_graph_op op = k ? XXL_GRAPH_MSF : XXL_GRAPH_SF;
				size_t		mem = budgets[b] ? budgets[b] : xxl_graph_min_memory();
				xxl_graph_config cfg = graph_config(mem, 0);
				result		r;
				char		l[100];

				cfg.expected_edges = b % 2 ? es.n : 0;
				r = run_graph(&es, op, &cfg);
				snprintf(l, sizeof(l), "%s/%s/%zu kB", cases[c].label, k ? "msf" : "sf", mem / KB);
				REQUIRE_MSG(r.rc == XXL_OK, "%s: %s", l, xxl_status_name(r.rc));
				if (k)
					check_msf(l, &es, &r);
				else
					check_sf(l, &es, &r);
				CHECK_LE(r.st.memory_peak, cfg.res.memory);
				CHECK_EQ(r.st.nodes, o.n);
				if (c == 0 && mem <= 1 * MB)
				{
					/* 8 bytes of id and a table entry per node would not fit here */
					CHECK_MSG(r.st.ids_by_id && r.st.path == XXL_GRAPH_SEMI_EXTERNAL,
							  "%s: path %d", l, (int) r.st.path);
					by_id_small++;
				}
				if (c == 3)
					CHECK(!r.st.ids_by_id || r.st.path == XXL_GRAPH_SEMI_EXTERNAL);
				result_free(&r);
			}
		oracle_free(&o);
		free(es.e);
	}
	CHECK(by_id_small >= 2);
}

/*
 * The forests on the sorting path with ids that span at most two per edge
 * take them as their dense numbers, without the numbering sorts: a gap in
 * the ids, a node with only a self loop at the top, a negative smallest id,
 * at the smallest budget (more ids than a union-find by id takes there);
 * ids ten apart are numbered by sorts.
 */
XT_TEST(graph_forests_sorted_by_id)
{
	size_t		n = 250000;
	edges		es = {0};
	xt_rng		rng = {777};
	oracle		o;

	random_graph(&es, &rng, n, 3 * n, 5, 1);
	densify(&es, -5, 1);
	for (size_t i = 0; i < es.n; i++)
	{
		/* ids 995..1994: none */
		es.e[i].src += es.e[i].src >= 995 ? 1000 : 0;
		es.e[i].tgt += es.e[i].tgt >= 995 ? 1000 : 0;
	}
	add_edge(&es, (int64_t) n + 2000, (int64_t) n + 2000, 7, 1.0);
	oracle_build(&o, &es);
	for (int spread = 0; spread < 2; spread++)
	{
		for (int k = 0; k < 2; k++)
		{
			xxl_graph_op op = k ? XXL_GRAPH_MSF : XXL_GRAPH_SF;
			xxl_graph_config cfg = graph_config(xxl_graph_min_memory(), 0);
			result		r = run_graph(&es, op, &cfg);
			char		l[100];

			snprintf(l, sizeof(l), "%s/%s", spread ? "spread" : "by id", k ? "msf" : "sf");
			REQUIRE_MSG(r.rc == XXL_OK, "%s: %s", l, xxl_status_name(r.rc));
			if (k)
				check_msf(l, &es, &r);
			else
				check_sf(l, &es, &r);
			CHECK_EQ(r.st.nodes, o.n);
			CHECK_MSG(r.st.path == XXL_GRAPH_EXTERNAL && r.st.ids_by_id == !spread,
					  "%s: path %d, by id %d", l, (int) r.st.path, (int) r.st.ids_by_id);
			CHECK_LE(r.st.memory_peak, cfg.res.memory);
			result_free(&r);
		}
		for (size_t i = 0; i < es.n; i++)
		{
			es.e[i].src *= 10;
			es.e[i].tgt *= 10;
		}
	}
	oracle_free(&o);
	free(es.e);
}

/* The external path on a larger graph: stats, spill I/O and the budget. */
XT_TEST(graph_external_stats)
{
	edges		es = {0};
	xt_rng		rng = {31};
	/* (quick: still above the 48640 nodes the least budget's semi-external base takes) */
	size_t		n = xt_quick() ? 60000 : 150000;
	xxl_graph_config cfg = graph_config(xxl_graph_min_memory(), 0);
	result		r;

	random_graph(&es, &rng, n, 3 * n, 3, 1);
	r = run_graph(&es, XXL_GRAPH_CC, &cfg);
	REQUIRE(r.rc == XXL_OK);
	check_cc("external stats", &es, &r);
	CHECK_EQ(r.st.path, XXL_GRAPH_EXTERNAL);
	CHECK(r.st.contracted_nodes > 0);
	CHECK(r.st.bytes_written > 0 && r.st.bytes_read > 0);
	CHECK(r.st.sort_passes > 0);
	CHECK_LE(r.st.memory_peak, cfg.res.memory);
	printf("  # cc external: n %" PRIu64 " m %" PRIu64 ", base %" PRIu64 ", contracted %" PRIu64
		   ", relinked %" PRIu64 ", pq pushes %" PRIu64 " merges %" PRIu64 ", sorts %" PRIu64
		   " (max passes %d), written %.1f MB, read %.1f MB, memory %" PRIu64 "/%" PRIu64 "\n",
		   r.st.nodes, r.st.edges, r.st.base_nodes, r.st.contracted_nodes, r.st.relinked_edges,
		   r.st.pq_pushes, r.st.pq_merges, r.st.sorts, r.st.sort_passes_max,
		   r.st.bytes_written / 1e6, r.st.bytes_read / 1e6, r.st.memory_peak, r.st.memory_limit);
	result_free(&r);
	free(es.e);
}

XT_TEST(graph_nan_cost)
{
	xxl_graph_config cfg = graph_config(4 * MB, 0);
	xxl_error	err = {0};
	xxl_graph  *g = xxl_graph_create(&cfg, XXL_GRAPH_MSF, &err);
	int64_t		a,
				b,
				c;
	double		d;

	REQUIRE(g != NULL);
	CHECK_STATUS(xxl_graph_put_edge(g, 1, 2, 1, 1.0), XXL_OK);
	CHECK_STATUS(xxl_graph_put_edge(g, 2, 3, 2, NAN), XXL_EINVAL);
	CHECK(strstr(xxl_graph_error(g)->message, "NaN") != NULL);
	CHECK_STATUS(xxl_graph_run(g), XXL_EINVAL);
	CHECK(xxl_graph_next_edge(g, &a, &b, &c, &d) < 0);
	xxl_graph_destroy(g);
	/* CC and SF ignore the cost */
	g = xxl_graph_create(&cfg, XXL_GRAPH_CC, &err);
	REQUIRE(g != NULL);
	CHECK_STATUS(xxl_graph_put_edge(g, 2, 3, 2, NAN), XXL_OK);
	CHECK_STATUS(xxl_graph_run(g), XXL_OK);
	CHECK_EQ(xxl_graph_next_node(g, &a, &b), 1);
	CHECK(a == 2 && b == 2);
	xxl_graph_destroy(g);
}

XT_TEST(graph_api_misuse)
{
	xxl_graph_config cfg = graph_config(4 * MB, 0);
	xxl_error	err = {0};
	xxl_graph  *g;
	int64_t		a,
				b,
				c;
	double		d;

	cfg.res.memory = xxl_graph_min_memory() - 4096;
	CHECK(xxl_graph_create(&cfg, XXL_GRAPH_CC, &err) == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	xxl_error_clear(&err);
	cfg.res.memory = 4 * MB;
	CHECK(xxl_graph_create(&cfg, (xxl_graph_op) 9, &err) == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	xxl_error_clear(&err);

	g = xxl_graph_create(&cfg, XXL_GRAPH_SF, &err);
	REQUIRE(g != NULL);
	CHECK(xxl_graph_next_edge(g, &a, &b, &c, &d) < 0);	/* before run */
	xxl_graph_destroy(g);

	g = xxl_graph_create(&cfg, XXL_GRAPH_SF, &err);
	REQUIRE(g != NULL);
	CHECK_STATUS(xxl_graph_put_edge(g, 1, 2, 1, 0), XXL_OK);
	CHECK_STATUS(xxl_graph_run(g), XXL_OK);
	CHECK(xxl_graph_next_node(g, &a, &b) < 0);	/* wrong kind */
	xxl_graph_destroy(g);

	g = xxl_graph_create(&cfg, XXL_GRAPH_CC, &err);
	REQUIRE(g != NULL);
	CHECK_STATUS(xxl_graph_run(g), XXL_OK);
	CHECK(xxl_graph_put_edge(g, 1, 2, 1, 0) != XXL_OK);	/* after run */
	xxl_graph_destroy(g);
	/* destroy right after create, and of NULL */
	g = xxl_graph_create(&cfg, XXL_GRAPH_MSF, &err);
	xxl_graph_destroy(g);
	xxl_graph_destroy(NULL);
}

/* Cancel ------------------------------------------------------------------ */

static uint64_t hook_calls;
static uint64_t hook_limit;

static bool
cancel_hook(void *arg)
{
	return ++hook_calls > hook_limit;
}

XT_TEST(graph_cancel)
{
	edges		es = {0};
	edges		dense = {0};
	xt_rng		rng = {55};
	/* the last: components by id (the same graph, its ids renumbered 0..n-1) */
	xxl_graph_op ops[] = {XXL_GRAPH_CC, XXL_GRAPH_SF, XXL_GRAPH_MSF, XXL_GRAPH_CC};

	random_graph(&es, &rng, xt_quick() ? 20000 : 40000, xt_quick() ? 50000 : 100000, 4, 1);
	dense.n = dense.cap = es.n;
	dense.e = malloc(es.n * sizeof(edge));
	memcpy(dense.e, es.e, es.n * sizeof(edge));
	densify(&dense, 0, 1);
	late_ids(&dense, INT64_MAX);
	for (int k = 0; k < 4; k++)
	{
		/*
		 * in memory, and at the smallest budget (components by id: at
		 * 1.5MB, where its links move to the sorters at the late ids)
		 */
		for (int pass = 0; pass < 2; pass++)
		{
			xxl_graph_config cfg = graph_config(pass ? (k == 3 ? 3 * MB / 2 : xxl_graph_min_memory()) : 8 * MB, 0);
			uint64_t	total;
			result		r;

			/* count the polls of a full run, then stop at fractions of it */
			cfg.res.cancel = cancel_hook;
			hook_calls = 0;
			hook_limit = UINT64_MAX;
			r = run_graph(k == 3 ? &dense : &es, ops[k], &cfg);
			CHECK_STATUS(r.rc, XXL_OK);
			total = hook_calls;
			result_free(&r);
			for (int f = 0; f < 6; f++)
			{
				hook_calls = 0;
				hook_limit = total * f / 6;
				r = run_graph(k == 3 ? &dense : &es, ops[k], &cfg);
				CHECK_MSG(r.rc == XXL_ECANCELED, "op %d pass %d: cancel at %" PRIu64 "/%" PRIu64 ": %s",
						  k, pass, hook_limit, total, xxl_status_name(r.rc));
				result_free(&r);
				CHECK_EQ(xt_spill_files(), 0);
			}
		}
	}
	free(es.e);
	free(dense.e);
}

XT_TEST(graph_write_failure)
{
	edges		es = {0};
	xt_rng		rng = {66};
	xxl_graph_op ops[] = {XXL_GRAPH_CC, XXL_GRAPH_SF, XXL_GRAPH_MSF};

	random_graph(&es, &rng, 50000, 120000, 2, 1);
	for (int k = 0; k < 3; k++)
	{
		uint64_t	limits[] = {64 * KB, 1 * MB, 4 * MB};

		for (int i = 0; i < 3; i++)
		{
			xxl_graph_config cfg = graph_config(xxl_graph_min_memory(), 0);
			result		r;

			cfg.res.disk.fail_write_after = limits[i];
			r = run_graph(&es, ops[k], &cfg);
			CHECK_MSG(r.rc == XXL_ENOSPC, "op %d limit %" PRIu64 ": %s", k, limits[i],
					  xxl_status_name(r.rc));
			result_free(&r);
			CHECK_EQ(xt_spill_files(), 0);
		}
	}
	free(es.e);
}

/* pvec_sort ---------------------------------------------------------------- */

static size_t sort_elem;

static int
cmp_whole(const void *a, const void *b)
{
	return memcmp(a, b, sort_elem);
}

/*
 * The in-place sort of the MSF's records: keys non-decreasing and the same
 * records as before, on sizes around the insertion-sort cut, keys with long
 * constant prefixes (a cost's sign and exponent), few distinct keys and all
 * keys equal.
 */
XT_TEST(pvec_sort_orders_in_place)
{
	xxl_graph_config cfg = graph_config(ROOMY, 0);
	xxl_env		env;
	xt_rng		rng = {77};
	uint64_t	sizes[] = {0, 1, 2, 31, 32, 33, 1000, 70000, 120000};
	size_t		elems[] = {24, 32, 40};
	size_t		keys[] = {20, 8, 3};

	REQUIRE(xxl_env_open(&env, &cfg.res, &graph_plan) == XXL_OK);
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
		for (int k = 0; k < 3; k++)
			for (int shape = 0; shape < 4; shape++)
			{
				pvec		v;
				uint64_t	n = sizes[si];
				size_t		elem = elems[k],
							key = keys[k];
				unsigned char *before = malloc(n * elem + 1),
						   *after = malloc(n * elem + 1);
				bool		sorted = true;

				REQUIRE(before != NULL && after != NULL);
				pvec_init(&v, elem, 0);
				for (uint64_t i = 0; i < n; i++)
				{
					unsigned char *r = pvec_push(&env, &v);

					REQUIRE(r != NULL);
					for (size_t b = 0; b < elem; b++)
						r[b] = (unsigned char) xt_next(&rng);
					if (shape == 1)		/* constant prefix of 3 bytes */
						memset(r, 0xBF, 3 < key ? 3 : key - 1);
					else if (shape == 2)	/* a few distinct keys */
						memset(r, (int) xt_below(&rng, 3), key);
					else if (shape == 3)	/* all keys equal */
						memset(r, 7, key);
					memcpy(before + i * elem, r, elem);
				}
				pvec_sort(&v, key, 2);
				for (uint64_t i = 0; i < n; i++)
				{
					memcpy(after + i * elem, pvec_at(&v, i), elem);
					if (i > 0 && memcmp(after + (i - 1) * elem, after + i * elem, key) > 0)
						sorted = false;
				}
				CHECK_MSG(sorted, "n %" PRIu64 " elem %zu key %zu shape %d: keys out of order",
						  n, elem, key, shape);
				sort_elem = elem;
				qsort(before, n, elem, cmp_whole);
				qsort(after, n, elem, cmp_whole);
				CHECK_MSG(n == 0 || memcmp(before, after, n * elem) == 0,
						  "n %" PRIu64 " elem %zu key %zu shape %d: records changed",
						  n, elem, key, shape);
				pvec_free(&env, &v);
				free(before);
				free(after);
			}
	xxl_env_close(&env);
}

int
main(int argc, char **argv)
{
	printf("# graph minimum memory %zu bytes\n", xxl_graph_min_memory());
	return xt_main(argc, argv);
}
