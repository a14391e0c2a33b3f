/*
 * xxl_components_sql.c — the SQL functions over components and forests
 * (src/core/graph/xxl_graph.h): xxl.connected_components,
 * xxl.spanning_forest and xxl.minimum_spanning_forest, each returning rows
 * or, as ..._into, writing them straight into a new table, and what a
 * shard sends its coordinator for them (xxl.shard_reduce_edges).  They run
 * through the graph driver (xxl_graph_driver.h); only the engine's
 * operation, the columns read and the result's layout differ.
 */
#include "postgres.h"

#include "catalog/pg_type.h"

#include "core/graph/xxl_graph.h"
#include "pg/graph/xxl_graph_driver.h"

/* the node permutation of the external path: fixed, so results repeat */
#define GRAPH_SEED UINT64_C(0x9e3779b97f4a7c15)

typedef struct GraphFunction
{
	const char *sql_name;		/* for messages */
	const char *op_name;		/* for xxl.last_stats() */
	xxl_graph_op op;
	int			needs;
	XxlEdgeReduce reduce;		/* on the shards of a sharded table */
	int			ncols;
	const char *const *cols;
	const Oid  *types;
} GraphFunction;

static const char *const cc_cols[] = {"node", "component"};
static const Oid cc_types[] = {INT8OID, INT8OID};
static const char *const sf_cols[] = {"source", "target"};
static const Oid sf_types[] = {INT8OID, INT8OID};
static const char *const msf_cols[] = {"id", "source", "target", "cost"};
static const Oid msf_types[] = {INT8OID, INT8OID, INT8OID, FLOAT8OID};

static const GraphFunction graph_cc = {
	"xxl.connected_components", "connected_components", XXL_GRAPH_CC, 0, XXL_REDUCE_COMPONENTS, 2, cc_cols, cc_types
};
static const GraphFunction graph_sf = {
	"xxl.spanning_forest", "spanning_forest", XXL_GRAPH_SF, 0, XXL_REDUCE_FOREST, 2, sf_cols, sf_types
};
static const GraphFunction graph_msf = {
	"xxl.minimum_spanning_forest", "minimum_spanning_forest", XXL_GRAPH_MSF,
	XXL_EDGE_ID | XXL_EDGE_COST, XXL_REDUCE_MIN_FOREST, 4, msf_cols, msf_types
};

/* The engine, as the driver calls it ----------------------------------------- */

static void *
graph_create(void *config, const xxl_resources *res, uint64 expected_edges, xxl_error *err)
{
	const GraphFunction *f = config;
	xxl_graph_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.res = *res;
	cfg.expected_edges = expected_edges;
	cfg.seed = GRAPH_SEED;
	cfg.max_semi_nodes = (uint64) xxl_graph_max_semi_nodes;
	return xxl_graph_create(&cfg, f->op, err);
}

static void
graph_destroy(void *core)
{
	xxl_graph_destroy((xxl_graph *) core);
}

static void
graph_collect(void *core, XxlStats *st)
{
	xxl_graph_stats s;

	xxl_graph_stats_get((const xxl_graph *) core, &s);
	xxl_stats_engine(st, s.edges, XXL_GRAPH_INPUT_BYTES(s.edges), s.memory_peak, s.memory_limit,
					 &s.io);
	st->runs = s.sort_runs;
	st->merge_passes = s.sort_passes_max;

	xxl_stats_detail(st, "path", "\"%s\"", xxl_graph_path_name(s.path));
	xxl_stats_detail(st, "edges", UINT64_FORMAT, s.edges);
	xxl_stats_detail(st, "self_loops", UINT64_FORMAT, s.self_loops);
	xxl_stats_detail(st, "nodes", UINT64_FORMAT, s.nodes);
	xxl_stats_detail(st, "components", UINT64_FORMAT, s.components);
	xxl_stats_detail(st, "forest_edges", UINT64_FORMAT, s.forest_edges);
	xxl_stats_detail(st, "semi_nodes_max", UINT64_FORMAT, s.semi_nodes_max);
	if (s.path == XXL_GRAPH_EXTERNAL)
		xxl_stats_detail(st, "ids", "\"%s\"", s.ids_by_id ? "by id" : "sorted");
	if (s.path == XXL_GRAPH_SEMI_EXTERNAL)
	{
		xxl_stats_detail(st, "ids", "\"%s\"", s.ids_by_id ? "by id" :
						 s.ids_in_memory ? "in memory" : "sorted");
		/* components by id in parts: the levels' union-finds */
		if (s.id_parts > 1)
			xxl_stats_detail(st, "id_parts", "%d", s.id_parts);
	}
	xxl_stats_detail(st, "base_nodes", UINT64_FORMAT, s.base_nodes);
	xxl_stats_detail(st, "contracted_nodes", UINT64_FORMAT, s.contracted_nodes);
	xxl_stats_detail(st, "relinked_edges", UINT64_FORMAT, s.relinked_edges);
	xxl_stats_detail(st, "parallel_edges", UINT64_FORMAT, s.parallel_edges);
	xxl_stats_detail(st, "contraction_passes", UINT64_FORMAT, s.contraction_passes);
	xxl_stats_detail(st, "pq_pushes", UINT64_FORMAT, s.pq_pushes);
	xxl_stats_detail(st, "sorts", UINT64_FORMAT, s.sorts);
	xxl_stats_detail(st, "sort_passes", UINT64_FORMAT, s.sort_passes);
	xxl_stats_detail(st, "sorted_bytes", UINT64_FORMAT, s.sorted_bytes);
	xxl_stats_detail(st, "bytes_read", UINT64_FORMAT, s.bytes_read);
	xxl_stats_detail(st, "bytes_written", UINT64_FORMAT, s.bytes_written);
	xxl_stats_detail(st, "run_ms", "%.3f", s.run_ns / 1e6);
}

static xxl_status
graph_put(void *config, void *core, const XxlEdge *edges, int n, uint64 rows_before)
{
	xxl_graph_edge batch[256];

	Assert(n <= lengthof(batch));
	for (int i = 0; i < n; i++)
		batch[i] = (xxl_graph_edge) {edges[i].source, edges[i].target, edges[i].id, edges[i].cost};
	return xxl_graph_put_edges((xxl_graph *) core, batch, n);
}

static xxl_status
graph_run(void *core)
{
	return xxl_graph_run((xxl_graph *) core);
}

static const xxl_error *
graph_error(void *core)
{
	return xxl_graph_error((xxl_graph *) core);
}

static size_t
graph_memory_held(void *core)
{
	xxl_graph_stats s;

	xxl_graph_stats_get((xxl_graph *) core, &s);
	return s.memory_held;
}

static int
graph_next(void *config, void *core, Datum *values)
{
	const GraphFunction *f = config;
	int64		id,
				source,
				target;
	double		cost;
	int			got;

	got = f->op == XXL_GRAPH_CC ?
		xxl_graph_next_node((xxl_graph *) core, &source, &target) :
		xxl_graph_next_edge((xxl_graph *) core, &id, &source, &target, &cost);
	if (got <= 0)
		return got;
	if (f->op != XXL_GRAPH_MSF)
	{
		values[0] = Int64GetDatum(source);
		values[1] = Int64GetDatum(target);	/* CC: the component */
		return got;
	}
	values[0] = Int64GetDatum(id);
	values[1] = Int64GetDatum(source);
	values[2] = Int64GetDatum(target);
	values[3] = Float8GetDatum(cost);
	return got;
}

static const XxlGraphFamily graph_family = {
	graph_create, xxl_graph_min_memory, graph_destroy, graph_collect,
	graph_put, graph_run, graph_error, graph_memory_held, graph_next
};

/* The SQL functions ----------------------------------------------------------- */

/* f over the first argument's edges, its rows to out. */
static uint64
run_call(FunctionCallInfo fcinfo, const GraphFunction *f, XxlOutput *out)
{
	XxlGraphCall c = {&graph_family, (void *) f, f->sql_name, f->op_name};

	c.edges = xxl_arg_text(fcinfo, 0, f->sql_name, "edges");
	c.needs = f->needs;
	c.reduce = f->reduce;
	c.out = out;
	return xxl_graph_drive(&c);
}

static uint64
graph_call(FunctionCallInfo fcinfo, const GraphFunction *f, bool into)
{
	return run_call(fcinfo, f,
					 xxl_graph_output(fcinfo, into ? xxl_arg_text(fcinfo, 1, f->sql_name, "target") : NULL,
									  xxl_graph_desc(f->ncols, f->cols, f->types)));
}

/* xxl.connected_components(edges text) RETURNS TABLE(node, component) and _into */
XXL_GRAPH_FUNCTIONS(xxl_connected_components, graph_call, &graph_cc)
/* xxl.spanning_forest(edges text) RETURNS TABLE(source, target) and _into */
XXL_GRAPH_FUNCTIONS(xxl_spanning_forest, graph_call, &graph_sf)
/* xxl.minimum_spanning_forest(edges text) RETURNS TABLE(id, source, target, cost) and _into */
XXL_GRAPH_FUNCTIONS(xxl_minimum_spanning_forest, graph_call, &graph_msf)

/*
 * xxl.shard_reduce_edges(edges text, operator text) RETURNS SETOF bytea:
 * what a shard of a sharded edge table sends its coordinator
 * (src/pg/shard/xxl_shard_edges.c): the rows of operator
 * ('connected_components', 'spanning_forest' or 'minimum_spanning_forest')
 * over edges, packed many to a block (xxl_output_packed_to_caller).
 */
PG_FUNCTION_INFO_V1(xxl_shard_reduce_edges);
Datum
xxl_shard_reduce_edges(PG_FUNCTION_ARGS)
{
	static const GraphFunction *const reducers[] = {&graph_cc, &graph_sf, &graph_msf};
	const char *name = xxl_arg_text(fcinfo, 1, "xxl.shard_reduce_edges", "operator");

	for (int i = 0; i < lengthof(reducers); i++)
	{
		if (strcmp(name, reducers[i]->op_name) == 0)
		{
			const GraphFunction *f = reducers[i];

			run_call(fcinfo, f, xxl_output_packed_to_caller(fcinfo, xxl_graph_desc(f->ncols, f->cols, f->types)));
			return (Datum) 0;
		}
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("xxl.shard_reduce_edges: unknown operator \"%s\"", name),
			 errhint("Use connected_components, spanning_forest or minimum_spanning_forest.")));
	return (Datum) 0;
}
