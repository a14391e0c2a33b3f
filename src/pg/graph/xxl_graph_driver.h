/*
 * xxl_graph_driver.h — the one way a graph SQL function runs its engine:
 * the result's destination opened first (a name taken is said before any
 * work), the edges read in batches into the engine, the engine run under
 * an XxlOperator (destroyed, spill files and all, however the statement
 * ends), and its rows written to one XxlOutput.  A family of functions
 * (components and forests, paths, analytics) gives its engine as an
 * XxlGraphFamily and its arguments as a config; only those differ.
 */
#ifndef XXL_PG_GRAPH_DRIVER_H
#define XXL_PG_GRAPH_DRIVER_H

#include "fmgr.h"
#include "access/tupdesc.h"

#include "core/xxl_env.h"
#include "pg/graph/graph.h"
#include "pg/io/io.h"
#include "pg/runtime/runtime.h"

/*
 * A graph operator's input as last_stats() counts it (its I/O per input
 * byte): an edge is a pair of 8-byte ids, whatever else it carries.
 */
#define XXL_GRAPH_INPUT_BYTES(edges) ((uint64) (edges) * 16)

/* The most columns a graph function's result has. */
#define XXL_GRAPH_MAX_COLS 6

/* A family's engine, as the driver calls it; config is the call's own. */
typedef struct XxlGraphFamily
{
	/* the engine for the operator's resources; NULL with err set */
	void	   *(*create) (void *config, const xxl_resources *res, uint64 expected_edges,
						   xxl_error *err);
	size_t		(*min_memory) (void);
	XxlCoreDestroy destroy;
	XxlCoreStats collect;
	/* n edges; rows_before: edges read before them (for an error's row number) */
	xxl_status	(*put) (void *config, void *core, const XxlEdge *edges, int n,
						uint64 rows_before);
	xxl_status	(*run) (void *core);
	const xxl_error *(*error) (void *core);
	/* the budget the engine holds while its rows are read */
	size_t		(*memory_held) (void *core);
	/* the next row's columns (never NULL): 1, 0 at the end, -1 on error */
	int			(*next) (void *config, void *core, Datum *values);
} XxlGraphFamily;

/* One call of a graph function. */
typedef struct XxlGraphCall
{
	const XxlGraphFamily *family;
	void	   *config;			/* the family's, from the arguments */
	const char *fname;			/* the SQL name, for messages */
	const char *op_name;		/* xxl.last_stats()'s operator */
	const char *edges;			/* the edges argument */
	int			needs;			/* XXL_EDGE_* */
	XxlEdgeReduce reduce;		/* what shards of a sharded table do first */
	XxlOutput  *out;			/* NULL: the one row's first column is the result */
} XxlGraphCall;

/*
 * Run the call: the rows written (with no output, the bigint the engine
 * returned, as triangle_count's count).
 */
extern uint64 xxl_graph_drive(const XxlGraphCall *call);

/*
 * Result destination: into the new table target when it is not NULL (the
 * columns of desc), else rows to the calling set-returning function.
 */
extern XxlOutput *xxl_graph_output(FunctionCallInfo fcinfo, const char *target, TupleDesc desc);

/* A descriptor of n bigint/double columns named names, typed types. */
extern TupleDesc xxl_graph_desc(int n, const char *const *names, const Oid *types);

/*
 * A graph function cname returning rows and cname_into writing them into
 * a new table, both by call(fcinfo, arg, into), which returns the rows.
 */
#define XXL_GRAPH_FUNCTIONS(cname, call, arg) \
PG_FUNCTION_INFO_V1(cname); \
Datum cname(PG_FUNCTION_ARGS) \
{ \
	call(fcinfo, arg, false); \
	return (Datum) 0; \
} \
PG_FUNCTION_INFO_V1(cname##_into); \
Datum cname##_into(PG_FUNCTION_ARGS) \
{ \
	PG_RETURN_INT64((int64) call(fcinfo, arg, true)); \
}

#endif							/* XXL_PG_GRAPH_DRIVER_H */
