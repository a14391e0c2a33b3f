/*
 * xxl_paths_sql.c — the SQL functions over BFS and shortest paths
 * (src/core/graph/xxl_paths.h): xxl.shortest_paths, xxl.bfs (each from one
 * source or the nearest of several, as rows or _into a new table) and
 * xxl.dijkstra (one path, pgr_dijkstra's rows).
 *
 * Edges are read with the graph functions' reader (graph.h):
 * columns id, source, target, cost and an optional reverse_cost found by
 * name, pgRouting's meaning (a negative cost: that direction does not
 * exist).  They run through the graph driver (xxl_graph_driver.h).
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "core/graph/xxl_paths.h"
#include "pg/graph/xxl_graph_driver.h"

typedef enum PathsShape
{
	SHAPE_TREE,					/* shortest_paths: node, distance, pred, edge */
	SHAPE_BFS,					/* bfs: node, depth, pred, edge */
	SHAPE_PATH					/* dijkstra: seq, path_seq, node, edge, cost, agg_cost */
} PathsShape;

static const char *const tree_cols[] = {"node", "distance", "pred", "edge"};
static const Oid tree_types[] = {INT8OID, FLOAT8OID, INT8OID, INT8OID};
static const char *const bfs_cols[] = {"node", "depth", "pred", "edge"};
static const Oid bfs_types[] = {INT8OID, INT8OID, INT8OID, INT8OID};

/* What one call asks for, from its arguments. */
typedef struct PathsCall
{
	const char *fname;
	PathsShape	shape;
	char	   *edges;
	char	   *target_table;	/* _into */
	int64	   *sources;
	int			nsources;
	bool		has_target;
	int64		target_node;
	bool		directed;
	double		max_distance;
	uint64		max_depth;
	int32		seq;			/* dijkstra: the rows handed out */
} PathsCall;

static void
null_arg(const char *fname, const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
			 errmsg("%s: %s must not be null", fname, name)));
}

/* The sources argument n: one bigint, or an array of them (many). */
static void
get_sources(FunctionCallInfo fcinfo, PathsCall *c, int n, bool many)
{
	if (PG_ARGISNULL(n))
		null_arg(c->fname, many ? "sources" : "source");
	if (!many)
	{
		c->sources = palloc(sizeof(int64));
		c->sources[0] = PG_GETARG_INT64(n);
		c->nsources = 1;
		return;
	}
	{
		ArrayType  *a = PG_GETARG_ARRAYTYPE_P(n);
		Datum	   *elems;
		bool	   *nulls;

		deconstruct_array(a, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls,
						  &c->nsources);
		c->sources = palloc(sizeof(int64) * (c->nsources ? c->nsources : 1));
		for (int i = 0; i < c->nsources; i++)
		{
			if (nulls[i])
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("%s: sources must not contain null", c->fname)));
			c->sources[i] = DatumGetInt64(elems[i]);
		}
	}
}

static bool
get_bool(FunctionCallInfo fcinfo, const PathsCall *c, int n, const char *name)
{
	if (PG_ARGISNULL(n))
		null_arg(c->fname, name);
	return PG_GETARG_BOOL(n);
}

static void
get_max_distance(FunctionCallInfo fcinfo, PathsCall *c, int n)
{
	if (PG_ARGISNULL(n))
		null_arg(c->fname, "max_distance");
	c->max_distance = PG_GETARG_FLOAT8(n);
	if (isnan(c->max_distance) || c->max_distance < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: max_distance must be a number >= 0, not %g", c->fname,
						c->max_distance),
				 errhint("Leave it out (or pass 'Infinity') for no limit.")));
}

static void
get_max_depth(FunctionCallInfo fcinfo, PathsCall *c, int n)
{
	int64		d;

	c->max_depth = UINT64_MAX;
	if (PG_ARGISNULL(n))
		return;
	d = PG_GETARG_INT64(n);
	if (d < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: max_depth must be >= 0, not " INT64_FORMAT, c->fname, d),
				 errhint("Leave it out (or pass NULL) for no limit.")));
	c->max_depth = (uint64) d;
}

static void
paths_destroy(void *core)
{
	xxl_paths_destroy((xxl_paths *) core);
}

static void
paths_collect(void *core, XxlStats *st)
{
	xxl_paths_stats s;

	xxl_paths_stats_get((xxl_paths *) core, &s);
	xxl_stats_engine(st, s.edges, XXL_GRAPH_INPUT_BYTES(s.edges), s.memory_peak, s.memory_limit,
					 &s.io);

	xxl_stats_detail(st, "path", "\"%s\"", xxl_paths_path_name(s.path));
	xxl_stats_detail(st, "edges", UINT64_FORMAT, s.edges);
	xxl_stats_detail(st, "links", UINT64_FORMAT, s.links);
	xxl_stats_detail(st, "arcs", UINT64_FORMAT, s.arcs);
	xxl_stats_detail(st, "nodes", UINT64_FORMAT, s.nodes);
	xxl_stats_detail(st, "reached", UINT64_FORMAT, s.reached);
	xxl_stats_detail(st, "levels", UINT64_FORMAT, s.levels);
	xxl_stats_detail(st, "level_spills", UINT64_FORMAT, s.level_spills);
	if (s.arc_ranges > 0)
		xxl_stats_detail(st, "arc_ranges", "%u", s.arc_ranges);
	xxl_stats_detail(st, "relaxed", UINT64_FORMAT, s.relaxed);
	xxl_stats_detail(st, "pq_pushes", UINT64_FORMAT, s.pq_pushes);
	xxl_stats_detail(st, "pq_merges", UINT64_FORMAT, s.pq_merges);
	xxl_stats_detail(st, "pq_io_bytes", UINT64_FORMAT, s.pq_bytes);
	if (s.path == XXL_PATHS_SEMI_EXTERNAL)
	{
		xxl_stats_detail(st, "arcs_in_memory", UINT64_FORMAT, s.arcs_in_memory);
		xxl_stats_detail(st, "link_passes", UINT64_FORMAT, s.link_passes);
		xxl_stats_detail(st, "arc_bytes", "%u", s.arc_bytes);
	}
	xxl_stats_detail(st, "cache_hits", UINT64_FORMAT, s.cache_hits);
	xxl_stats_detail(st, "cache_misses", UINT64_FORMAT, s.cache_misses);
	if (s.path == XXL_PATHS_EXTERNAL)
		xxl_stats_detail(st, "ids", "\"%s\"", s.ids_by_id ? "by id" : "numbered");
	if (s.bfs != XXL_PATHS_BFS_AUTO)
		xxl_stats_detail(st, "bfs", "\"%s\"", xxl_paths_bfs_name(s.bfs));
	if (s.cluster_skipped)
		xxl_stats_detail(st, "clustering", "\"skipped: %s\"", s.cluster_skipped);
	if (s.sssp != XXL_PATHS_SSSP_AUTO)
		xxl_stats_detail(st, "sssp", "\"%s\"", xxl_paths_sssp_name(s.sssp));
	if (s.sssp == XXL_PATHS_SSSP_MO)
	{
		xxl_stats_detail(st, "categories", UINT64_FORMAT, s.categories);
		xxl_stats_detail(st, "mo_batches", UINT64_FORMAT, s.mo_batches);
		xxl_stats_detail(st, "mo_flushes", UINT64_FORMAT, s.mo_flushes);
	}
	if (s.bfs == XXL_PATHS_BFS_MM || s.sssp == XXL_PATHS_SSSP_MO)
	{
		xxl_stats_detail(st, "tree_edges", UINT64_FORMAT, s.tree_edges);
		xxl_stats_detail(st, "clusters", UINT64_FORMAT, s.clusters);
		xxl_stats_detail(st, "cluster_loads", UINT64_FORMAT, s.cluster_loads);
		xxl_stats_detail(st, "pool_hits", UINT64_FORMAT, s.pool_hits);
		if (s.bfs == XXL_PATHS_BFS_MM)
			xxl_stats_detail(st, "pool_peak_arcs", UINT64_FORMAT, s.pool_peak);
		xxl_stats_detail(st, "forest_path", "\"%s\"", s.forest_path);
		xxl_stats_detail(st, "forest_ms", "%.3f", s.forest_ns / 1e6);
		xxl_stats_detail(st, "cluster_ms", "%.3f", s.cluster_ns / 1e6);
	}
	xxl_stats_detail(st, "sorts", UINT64_FORMAT, s.sorts);
	xxl_stats_detail(st, "spill_peak_bytes", UINT64_FORMAT, s.io.spill_bytes_peak);
	xxl_stats_detail(st, "bytes_read", UINT64_FORMAT, s.bytes_read);
	xxl_stats_detail(st, "bytes_written", UINT64_FORMAT, s.bytes_written);
	xxl_stats_detail(st, "load_ms", "%.3f", s.load_ns / 1e6);
	xxl_stats_detail(st, "numbering", "\"%s\"", s.numbering_worker ? "worker" : "caller");
	xxl_stats_detail(st, "numbering_wait_ms", "%.3f", s.numbering_wait_ns / 1e6);
	xxl_stats_detail(st, "search", "\"%s\"", s.search_worker ? "worker" : "caller");
	xxl_stats_detail(st, "build_ms", "%.3f", s.build_ns / 1e6);
	xxl_stats_detail(st, "search_ms", "%.3f", s.search_ns / 1e6);
	xxl_stats_detail(st, "output_ms", "%.3f", s.output_ns / 1e6);
}

static void *
paths_create(void *config, const xxl_resources *res, uint64 expected_edges, xxl_error *err)
{
	const PathsCall *c = config;
	xxl_paths_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.res = *res;
	cfg.op = c->shape == SHAPE_BFS ? XXL_PATHS_BFS : XXL_PATHS_SSSP;
	cfg.directed = c->directed;
	cfg.sources = c->sources;
	cfg.nsources = (size_t) c->nsources;
	cfg.has_target = c->has_target;
	cfg.target = c->target_node;
	cfg.max_distance = c->max_distance;
	cfg.max_depth = c->max_depth;
	cfg.force_external = xxl_graph_force_external;
	cfg.bfs = (xxl_paths_bfs) xxl_bfs_algorithm;
	cfg.sssp = (xxl_paths_sssp) xxl_sssp_algorithm;
	return xxl_paths_create(&cfg, err);
}

static xxl_status
paths_put(void *config, void *core, const XxlEdge *edges, int n, uint64 rows_before)
{
	for (int i = 0; i < n; i++)
	{
		xxl_status	st = xxl_paths_put_edge((xxl_paths *) core, edges[i].source,
										edges[i].target, edges[i].id, edges[i].cost,
										edges[i].reverse_cost);

		if (st != XXL_OK)
			return st;
	}
	return XXL_OK;
}

static xxl_status
paths_run(void *core)
{
	return xxl_paths_run((xxl_paths *) core);
}

static const xxl_error *
paths_error(void *core)
{
	return xxl_paths_error((xxl_paths *) core);
}

static size_t
paths_memory_held(void *core)
{
	xxl_paths_stats s;

	xxl_paths_stats_get((xxl_paths *) core, &s);
	return s.memory_held;
}

static int
paths_next(void *config, void *core, Datum *values)
{
	PathsCall  *c = config;
	int64		node,
				pred,
				edge;
	double		d,
				cost;
	int			got;

	got = c->shape == SHAPE_PATH ?
		xxl_paths_next_step((xxl_paths *) core, &node, &edge, &cost, &d) :
		xxl_paths_next((xxl_paths *) core, &node, &d, &pred, &edge);
	if (got <= 0)
		return got;
	if (c->shape == SHAPE_PATH)
	{
		c->seq++;
		values[0] = Int32GetDatum(c->seq);
		values[1] = Int32GetDatum(c->seq);
		values[2] = Int64GetDatum(node);
		values[3] = Int64GetDatum(edge);
		values[4] = Float8GetDatum(cost);
		values[5] = Float8GetDatum(d);
		return got;
	}
	values[0] = Int64GetDatum(node);
	values[1] = c->shape == SHAPE_BFS ? Int64GetDatum((int64) d) : Float8GetDatum(d);
	values[2] = Int64GetDatum(pred);
	values[3] = Int64GetDatum(edge);
	return got;
}

static const XxlGraphFamily paths_family = {
	paths_create, xxl_paths_min_memory, paths_destroy, paths_collect,
	paths_put, paths_run, paths_error, paths_memory_held, paths_next
};

/* Read the edges, run the search, write its rows; returns the rows written. */
static uint64
run_paths(FunctionCallInfo fcinfo, PathsCall *c)
{
	XxlGraphCall call = {&paths_family, c, c->fname};

	/* the target first: a name taken is said before any work is done */
	if (c->shape == SHAPE_PATH)
		call.out = xxl_output_to_caller(fcinfo, xxl_output_caller_desc(fcinfo));
	else
		call.out = xxl_graph_output(fcinfo, c->target_table,
									xxl_graph_desc(4, c->shape == SHAPE_BFS ? bfs_cols : tree_cols,
												   c->shape == SHAPE_BFS ? bfs_types : tree_types));
	if (c->nsources == 0)
		return xxl_output_finish(call.out); /* pgRouting: no sources, no rows */
	call.op_name = c->shape == SHAPE_BFS ? "bfs" :
		c->shape == SHAPE_PATH ? "dijkstra" : "shortest_paths";
	call.edges = c->edges;
	call.needs = XXL_EDGE_ID | XXL_EDGE_COST | XXL_EDGE_RCOST;
	return xxl_graph_drive(&call);
}

/*
 * Arguments: (edges, source(s), [target table,] directed, max_distance |
 * max_depth); the _into forms put the table name third.
 */
typedef struct TreeFunction
{
	PathsShape	shape;			/* SHAPE_TREE or SHAPE_BFS */
	bool		many;			/* sources bigint[] */
} TreeFunction;

static const TreeFunction sssp_one = {SHAPE_TREE, false};
static const TreeFunction sssp_many = {SHAPE_TREE, true};
static const TreeFunction bfs_one = {SHAPE_BFS, false};
static const TreeFunction bfs_many = {SHAPE_BFS, true};

static uint64
tree_call(FunctionCallInfo fcinfo, const TreeFunction *f, bool into)
{
	PathsShape	shape = f->shape;
	PathsCall	c;
	int			a = 2;

	memset(&c, 0, sizeof(c));
	c.shape = shape;
	c.fname = shape == SHAPE_BFS ? (into ? "xxl.bfs_into" : "xxl.bfs") :
		(into ? "xxl.shortest_paths_into" : "xxl.shortest_paths");
	c.edges = xxl_arg_text(fcinfo, 0, c.fname, "edges");
	get_sources(fcinfo, &c, 1, f->many);
	if (into)
		c.target_table = xxl_arg_text(fcinfo, a++, c.fname, "target");
	c.directed = get_bool(fcinfo, &c, a++, "directed");
	c.max_distance = INFINITY;
	c.max_depth = UINT64_MAX;
	if (shape == SHAPE_BFS)
		get_max_depth(fcinfo, &c, a);
	else
		get_max_distance(fcinfo, &c, a);
	return run_paths(fcinfo, &c);
}

/* xxl.shortest_paths(edges, source bigint, directed, max_distance) and _into */
XXL_GRAPH_FUNCTIONS(xxl_shortest_paths, tree_call, &sssp_one)
/* xxl.shortest_paths(edges, sources bigint[], directed, max_distance) and _into */
XXL_GRAPH_FUNCTIONS(xxl_shortest_paths_many, tree_call, &sssp_many)
/* xxl.bfs(edges, source bigint, directed, max_depth) and _into */
XXL_GRAPH_FUNCTIONS(xxl_bfs, tree_call, &bfs_one)
/* xxl.bfs(edges, sources bigint[], directed, max_depth) and _into */
XXL_GRAPH_FUNCTIONS(xxl_bfs_many, tree_call, &bfs_many)

/* xxl.dijkstra(edges, source bigint, target bigint, directed) */
PG_FUNCTION_INFO_V1(xxl_dijkstra);
Datum
xxl_dijkstra(PG_FUNCTION_ARGS)
{
	PathsCall	c;

	memset(&c, 0, sizeof(c));
	c.shape = SHAPE_PATH;
	c.fname = "xxl.dijkstra";
	c.edges = xxl_arg_text(fcinfo, 0, c.fname, "edges");
	get_sources(fcinfo, &c, 1, false);
	if (PG_ARGISNULL(2))
		null_arg(c.fname, "target");
	c.has_target = true;
	c.target_node = PG_GETARG_INT64(2);
	c.directed = get_bool(fcinfo, &c, 3, "directed");
	c.max_distance = INFINITY;
	c.max_depth = UINT64_MAX;
	run_paths(fcinfo, &c);
	return (Datum) 0;
}
