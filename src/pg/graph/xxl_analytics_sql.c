/*
 * xxl_analytics_sql.c — the SQL functions over the analytics operators
 * (src/core/graph/xxl_analytics.h): xxl.triangles, xxl.triangle_count,
 * xxl.node_triangles, xxl.maximal_independent_set, xxl.coloring and
 * xxl.pagerank, each (but the count) also _into a new table.
 *
 * Edges are read with the graph functions' reader (graph.h): source and
 * target by name, and for PageRank an optional weight column.  They run
 * through the graph driver (xxl_graph_driver.h).
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"

#include "core/graph/xxl_analytics.h"
#include "pg/graph/xxl_graph_driver.h"

typedef struct AnalyticsFunction
{
	const char *sql_name;
	const char *op_name;		/* last_stats()'s operator */
	xxl_an_op	op;
	int			ncols;
	const char *const *cols;
	const Oid  *types;
} AnalyticsFunction;

static const char *const tri_cols[] = {"a", "b", "c"};
static const Oid tri_types[] = {INT8OID, INT8OID, INT8OID};
static const char *const node_tri_cols[] = {"node", "triangles", "degree", "clustering"};
static const Oid node_tri_types[] = {INT8OID, INT8OID, INT8OID, FLOAT8OID};
static const char *const mis_cols[] = {"node"};
static const Oid mis_types[] = {INT8OID};
static const char *const color_cols[] = {"node", "color"};
static const Oid color_types[] = {INT8OID, INT8OID};
static const char *const rank_cols[] = {"node", "rank"};
static const Oid rank_types[] = {INT8OID, FLOAT8OID};

static const AnalyticsFunction fn_triangles = {
	"xxl.triangles", "triangles", XXL_AN_TRIANGLES, 3, tri_cols, tri_types
};
static const AnalyticsFunction fn_triangle_count = {
	"xxl.triangle_count", "triangle_count", XXL_AN_TRIANGLE_COUNT, 0, NULL, NULL
};
static const AnalyticsFunction fn_node_triangles = {
	"xxl.node_triangles", "node_triangles", XXL_AN_NODE_TRIANGLES, 4, node_tri_cols,
	node_tri_types
};
static const AnalyticsFunction fn_mis = {
	"xxl.maximal_independent_set", "maximal_independent_set", XXL_AN_MIS, 1, mis_cols,
	mis_types
};
static const AnalyticsFunction fn_coloring = {
	"xxl.coloring", "coloring", XXL_AN_COLORING, 2, color_cols, color_types
};
static const AnalyticsFunction fn_pagerank = {
	"xxl.pagerank", "pagerank", XXL_AN_PAGERANK, 2, rank_cols, rank_types
};

static void
an_destroy(void *core)
{
	xxl_an_destroy((xxl_an *) core);
}

static void
an_collect(void *core, XxlStats *st)
{
	xxl_an_stats s;

	xxl_an_stats_get((xxl_an *) core, &s);
	xxl_stats_engine(st, s.edges, XXL_GRAPH_INPUT_BYTES(s.edges), s.memory_peak, s.memory_limit,
					 &s.io);

	xxl_stats_detail(st, "path", "\"%s\"", s.path);
	xxl_stats_detail(st, "edges", UINT64_FORMAT, s.edges);
	xxl_stats_detail(st, "self_loops", UINT64_FORMAT, s.self_loops);
	xxl_stats_detail(st, "nodes", UINT64_FORMAT, s.nodes);
	xxl_stats_detail(st, "links", UINT64_FORMAT, s.links);
	if (s.op != XXL_AN_PAGERANK)
	{
		xxl_stats_detail(st, "duplicates", UINT64_FORMAT, s.duplicates);
		xxl_stats_detail(st, "max_degree", UINT64_FORMAT, s.max_degree);
	}
	if (s.op == XXL_AN_TRIANGLES || s.op == XXL_AN_TRIANGLE_COUNT || s.op == XXL_AN_NODE_TRIANGLES)
	{
		xxl_stats_detail(st, "triangles", UINT64_FORMAT, s.triangles);
		xxl_stats_detail(st, "queries", UINT64_FORMAT, s.queries);
		xxl_stats_detail(st, "max_out_degree", UINT64_FORMAT, s.max_out_degree);
		if (s.ranges > 0)
			xxl_stats_detail(st, "ranges", UINT64_FORMAT, s.ranges);
	}
	if (s.op == XXL_AN_MIS)
		xxl_stats_detail(st, "set_size", UINT64_FORMAT, s.set_size);
	if (s.op == XXL_AN_COLORING)
		xxl_stats_detail(st, "colors", UINT64_FORMAT, s.colors);
	if ((s.op == XXL_AN_MIS || s.op == XXL_AN_COLORING) && s.method[0] != '\0')
		xxl_stats_detail(st, "method", "\"%s\"", s.method);
	if (s.op == XXL_AN_PAGERANK)
	{
		xxl_stats_detail(st, "method", "\"%s\"", s.method);
		if (s.ranges > 0)
			xxl_stats_detail(st, "ranges", UINT64_FORMAT, s.ranges);
		xxl_stats_detail(st, "iterations", UINT64_FORMAT, s.iterations);
		xxl_stats_detail(st, "delta", "%.6g", s.delta);
		xxl_stats_detail(st, "converged", "%s", s.converged ? "true" : "false");
		xxl_stats_detail(st, "dangling", UINT64_FORMAT, s.dangling);
	}
	xxl_stats_detail(st, "numbering", "\"%s\"", s.numbering_worker ? "worker" : "caller");
	xxl_stats_detail(st, "pq_pushes", UINT64_FORMAT, s.pq_pushes);
	xxl_stats_detail(st, "sorts", UINT64_FORMAT, s.sorts);
	xxl_stats_detail(st, "sorted_bytes", UINT64_FORMAT, s.sorted_bytes);
	xxl_stats_detail(st, "bytes_read", UINT64_FORMAT, s.bytes_read);
	xxl_stats_detail(st, "bytes_written", UINT64_FORMAT, s.bytes_written);
	xxl_stats_detail(st, "run_ms", "%.3f", s.run_ns / 1e6);
	xxl_stats_detail(st, "build_ms", "%.3f", s.build_ns / 1e6);
	xxl_stats_detail(st, "compute_ms", "%.3f", s.compute_ns / 1e6);
	xxl_stats_detail(st, "output_ms", "%.3f", s.output_ns / 1e6);
}

/* PageRank's arguments 1.. (after edges and, for _into, the target). */
static void
rank_args(FunctionCallInfo fcinfo, int a, xxl_an_config *cfg, const char *fname)
{
	const char *names[] = {"damping", "max_iterations", "tolerance"};

	for (int i = 0; i < 3; i++)
		if (PG_ARGISNULL(a + i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s: %s must not be null", fname, names[i])));
	cfg->damping = PG_GETARG_FLOAT8(a);
	cfg->max_iterations = PG_GETARG_INT32(a + 1);
	cfg->tolerance = PG_GETARG_FLOAT8(a + 2);
	if (isnan(cfg->damping) || cfg->damping < 0 || cfg->damping > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: damping must be between 0 and 1, not %g", fname, cfg->damping),
				 errhint("0.85 is the usual value.")));
	if (cfg->max_iterations < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: max_iterations must be >= 0, not %d", fname, cfg->max_iterations)));
	if (isnan(cfg->tolerance) || cfg->tolerance < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: tolerance must be a number >= 0, not %g", fname, cfg->tolerance)));
}

/* One call: the function and its PageRank settings. */
typedef struct AnalyticsCall
{
	const AnalyticsFunction *f;
	const char *fname;
	xxl_an_config cfg;			/* but res and expected_edges */
} AnalyticsCall;

static void *
an_create(void *config, const xxl_resources *res, uint64 expected_edges, xxl_error *err)
{
	AnalyticsCall *c = config;

	c->cfg.res = *res;
	c->cfg.expected_edges = expected_edges;
	c->cfg.force_external = xxl_graph_force_external;
	return xxl_an_create(&c->cfg, err);
}

static xxl_status
an_put(void *config, void *core, const XxlEdge *edges, int n, uint64 rows_before)
{
	const AnalyticsCall *c = config;

	for (int i = 0; i < n; i++)
	{
		const XxlEdge *e = &edges[i];
		xxl_status	st;

		if (c->f->op == XXL_AN_PAGERANK && (e->weight < 0 || isinf(e->weight)))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: column \"weight\" of the edges must be finite and >= 0, not %g, in row " UINT64_FORMAT,
							c->fname, e->weight, rows_before + i + 1),
					 errhint("Leave such edges out in the edges query.")));
		if ((st = xxl_an_put_edge((xxl_an *) core, e->source, e->target, e->weight)) != XXL_OK)
			return st;
	}
	return XXL_OK;
}

static xxl_status
an_run(void *core)
{
	return xxl_an_run((xxl_an *) core);
}

static const xxl_error *
an_error(void *core)
{
	return xxl_an_error((xxl_an *) core);
}

static size_t
an_memory_held(void *core)
{
	xxl_an_stats s;

	xxl_an_stats_get((xxl_an *) core, &s);
	return s.memory_held;
}

static int
an_next(void *config, void *core, Datum *values)
{
	const AnalyticsFunction *f = ((AnalyticsCall *) config)->f;
	xxl_an_row	row;
	int			got = xxl_an_next((xxl_an *) core, &row);

	if (got <= 0)
		return got;
	if (f->ncols == 0)
		values[0] = Int64GetDatum(row.v[0]);	/* the count */
	for (int i = 0; i < f->ncols; i++)
		values[i] = f->types[i] == FLOAT8OID ? Float8GetDatum(row.x) : Int64GetDatum(row.v[i]);
	return got;
}

static const XxlGraphFamily an_family = {
	an_create, xxl_an_min_memory, an_destroy, an_collect,
	an_put, an_run, an_error, an_memory_held, an_next
};

/* The rows written (triangle_count: the count). */
static uint64
run_analytics(FunctionCallInfo fcinfo, const AnalyticsFunction *f, bool into)
{
	char		fname[NAMEDATALEN + 16];
	char	   *target = NULL;
	AnalyticsCall ac;
	XxlGraphCall c = {&an_family, &ac, fname, f->op_name};

	snprintf(fname, sizeof(fname), "%s%s", f->sql_name, into ? "_into" : "");
	memset(&ac, 0, sizeof(ac));
	ac.f = f;
	ac.fname = fname;
	ac.cfg.op = f->op;
	c.edges = xxl_arg_text(fcinfo, 0, fname, "edges");
	if (into)
		target = xxl_arg_text(fcinfo, 1, fname, "target");
	if (f->op == XXL_AN_PAGERANK)
		rank_args(fcinfo, into ? 2 : 1, &ac.cfg, fname);
	/* the target first: a name taken is said before any work is done */
	if (f->ncols > 0)
		c.out = xxl_graph_output(fcinfo, target, xxl_graph_desc(f->ncols, f->cols, f->types));
	c.needs = f->op == XXL_AN_PAGERANK ? XXL_EDGE_WEIGHT : 0;
	return xxl_graph_drive(&c);
}

XXL_GRAPH_FUNCTIONS(xxl_triangles, run_analytics, &fn_triangles)
XXL_GRAPH_FUNCTIONS(xxl_node_triangles, run_analytics, &fn_node_triangles)
XXL_GRAPH_FUNCTIONS(xxl_maximal_independent_set, run_analytics, &fn_mis)
XXL_GRAPH_FUNCTIONS(xxl_coloring, run_analytics, &fn_coloring)
XXL_GRAPH_FUNCTIONS(xxl_pagerank, run_analytics, &fn_pagerank)

/* xxl.triangle_count(edges) */
PG_FUNCTION_INFO_V1(xxl_triangle_count);
Datum
xxl_triangle_count(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) run_analytics(fcinfo, &fn_triangle_count, false));
}
