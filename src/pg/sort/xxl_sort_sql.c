/*
 * xxl_sort_sql.c — the SQL sort functions: xxl.sort_into (into a new table),
 * xxl.sort returning SETOF record (column definition list) and the typed
 * xxl.sort(NULL::some_table, ...) returning SETOF some_table.
 *
 * Each function resolves its arguments (source, ORDER BY list, result
 * layout) and hands the sorting to xxl_sort_run.c, which also serves the
 * custom scan that replaces xxl.sort() in FROM (xxl_sort_scan.c).
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "pg/runtime/runtime.h"
#include "pg/io/io.h"
#include "pg/sort/xxl_sort_run.h"
#include "pg/sort/xxl_sort_sql.h"
#include "pg/sort/xxl_sortkey.h"

static XxlShardedSort sharded_sort;

void
xxl_sort_register_sharded(XxlShardedSort sharded)
{
	sharded_sort = sharded;
}

/*
 * The run of a sort of source if source names a sharded table (see
 * xxl_sort_sql.h), else NULL.  out_desc: the result's layout, or NULL for
 * the table's visible columns (then set); map_context: for
 * xxl_map_columns' messages.
 */
static XxlSortRun *
start_sharded(Oid relid, const char *order_by, TupleDesc *out_desc, const char *map_context,
			  const XxlSortRunOptions *options)
{
	Relation	rel;
	TupleDesc	in_desc;
	XxlSortKey *key;
	AttrNumber *map;
	XxlSortRun *run;

	if (sharded_sort == NULL || !OidIsValid(relid) ||
		get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return NULL;
	rel = table_open(relid, AccessShareLock);
	in_desc = CreateTupleDescCopy(RelationGetDescr(rel));
	key = xxl_sortkey_create(in_desc, xxl_parse_order_by(order_by));
	if (*out_desc == NULL)
		*out_desc = xxl_visible_desc(in_desc);
	map = xxl_map_columns(in_desc, *out_desc, map_context);
	run = sharded_sort(rel, key, *out_desc, map, options);
	table_close(rel, NoLock);
	return run;
}

/* The table a source text names, if it does and it exists; else InvalidOid. */
static Oid
source_relid(const char *source)
{
	RangeVar   *rv = xxl_source_name(source);

	return rv != NULL ? RangeVarGetRelid(rv, AccessShareLock, true) : InvalidOid;
}

PG_FUNCTION_INFO_V1(xxl_sort_into);
PG_FUNCTION_INFO_V1(xxl_sort_record);
PG_FUNCTION_INFO_V1(xxl_sort_typed);

/*
 * The sort of in by items, handing out rows laid out as out_desc (NULL: the
 * input's visible columns, set); context names out_desc in messages.
 */
static XxlSortRun *
start_input(XxlInput *in, List *items, TupleDesc *out_desc, const char *context,
			const bool *needed, const XxlSortRunOptions *options)
{
	TupleDesc	in_desc = xxl_input_desc(in);
	XxlSortKey *key = xxl_sortkey_create(in_desc, items);

	if (*out_desc == NULL)
		*out_desc = xxl_visible_desc(in_desc);
	return xxl_sort_run_start(in, key, *out_desc, xxl_map_columns(in_desc, *out_desc, context),
							  needed, options);
}

/* xxl.sort_into(source text, order_by text, target text) RETURNS bigint */
Datum
xxl_sort_into(PG_FUNCTION_ARGS)
{
	char	   *source = xxl_arg_text(fcinfo, 0, NULL, "source");
	char	   *order_by = xxl_arg_text(fcinfo, 1, NULL, "order_by");
	char	   *target = xxl_arg_text(fcinfo, 2, NULL, "target");
	TupleDesc	out_desc = NULL;
	XxlSortRunOptions options = {.name = "sort_into"};
	XxlSortRun *run = start_sharded(source_relid(source), order_by, &out_desc, "the target",
									&options);
	uint64		n;

	if (run == NULL)
	{
		List	   *items = xxl_parse_order_by(order_by);
		XxlInput   *in = xxl_input_open(source);
		TupleDesc	in_desc = xxl_input_desc(in);
		XxlSortKey *key = xxl_sortkey_create(in_desc, items);
		AttrNumber *map;
		XxlOutput  *out;

		/* the target before the sort: a name taken costs no sort */
		out_desc = xxl_visible_desc(in_desc);
		map = xxl_map_columns(in_desc, out_desc, "the target");
		out = xxl_output_into_table(target, out_desc);
		run = xxl_sort_run_start(in, key, out_desc, map, NULL, &options);
		n = xxl_sort_run_drain(run, out);
	}
	else
		n = xxl_sort_run_drain(run, xxl_output_into_table(target, out_desc));
	xxl_sort_run_free(run);
	PG_RETURN_INT64((int64) n);
}

XxlSortRun *
xxl_sort_start_query(const char *source, const char *order_by, TupleDesc out_desc,
					 const bool *needed, const XxlSortRunOptions *options)
{
	XxlSortRun *run = start_sharded(source_relid(source), order_by, &out_desc,
									"the column definition list", options);
	List	   *items;

	if (run != NULL)
		return run;
	items = xxl_parse_order_by(order_by);
	return start_input(xxl_input_open(source), items, &out_desc, "the column definition list",
					   needed, options);
}

/* The table whose row type the typed form's first argument has. */
static Oid
typed_source(Oid type)
{
	Oid			relid = OidIsValid(type) ? typeidTypeRelid(getBaseType(type)) : InvalidOid;

	if (!OidIsValid(relid) || get_rel_relkind(relid) == RELKIND_COMPOSITE_TYPE)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("xxl.sort needs the row type of a table or view, not type %s",
						OidIsValid(type) ? format_type_be(type) : "unknown"),
				 errhint("Pass NULL::table_name, or the source as text with a column definition list.")));
	return relid;
}

XxlSortRun *
xxl_sort_start_typed(Oid type, const char *order_by, TupleDesc out_desc, const bool *needed,
					 const XxlSortRunOptions *options)
{
	Oid			relid = typed_source(type);
	XxlSortRun *run = start_sharded(relid, order_by, &out_desc, "the row type", options);
	List	   *items;

	if (run != NULL)
		return run;
	items = xxl_parse_order_by(order_by);
	return start_input(xxl_input_open_relid(relid), items, &out_desc, "the row type", needed,
					   options);
}

/* Materialize the run's rows for the calling set-returning function. */
static Datum
return_rows(FunctionCallInfo fcinfo, XxlSortRun *run, TupleDesc out_desc)
{
	XxlOutput  *out = xxl_output_to_caller(fcinfo, out_desc);

	xxl_sort_run_drain(run, out);
	xxl_sort_run_free(run);
	return (Datum) 0;
}

/* xxl.sort(source text, order_by text) RETURNS SETOF record */
Datum
xxl_sort_record(PG_FUNCTION_ARGS)
{
	char	   *source = xxl_arg_text(fcinfo, 0, NULL, "source");
	char	   *order_by = xxl_arg_text(fcinfo, 1, NULL, "order_by");
	TupleDesc	out_desc = xxl_output_caller_desc(fcinfo);

	return return_rows(fcinfo, xxl_sort_start_query(source, order_by, out_desc, NULL, NULL), out_desc);
}

/* xxl.sort(source anyelement, order_by text) RETURNS SETOF anyelement */
Datum
xxl_sort_typed(PG_FUNCTION_ARGS)
{
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, 0);
	char	   *order_by;
	TupleDesc	out_desc;

	(void) typed_source(type);	/* its error before any other */
	order_by = xxl_arg_text(fcinfo, 1, NULL, "order_by");
	out_desc = xxl_output_caller_desc(fcinfo);

	return return_rows(fcinfo, xxl_sort_start_typed(type, order_by, out_desc, NULL, NULL), out_desc);
}
