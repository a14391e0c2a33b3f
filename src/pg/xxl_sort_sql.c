/*
 * xxl_sort_sql.c — the SQL sort functions: xxl.sort_into (into a new table),
 * xxl.sort returning SETOF record (column definition list) and the typed
 * xxl.sort(NULL::some_table, ...) returning SETOF some_table.
 *
 * Each row becomes one variable-length engine record: key = the normalized
 * sort key (xxl_sortkey.c), payload = the row in compact MinimalTuple form
 * (xxl_output.h) with out-of-line values fetched, so the output never
 * reaches back into the source's TOAST table.  When a source row's heap
 * tuple can be taken as it is, its bytes are copied without deforming and
 * re-forming it.  Per-row allocations (detoasted values) go into a small
 * context reset every row, which costs nothing when nothing was allocated.
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "xxl_error.h"
#include "xxl_input.h"
#include "xxl_operator.h"
#include "xxl_output.h"
#include "xxl_sortkey.h"

PG_FUNCTION_INFO_V1(xxl_sort_into);
PG_FUNCTION_INFO_V1(xxl_sort_record);
PG_FUNCTION_INFO_V1(xxl_sort_typed);

static char *
text_arg(FunctionCallInfo fcinfo, int n, const char *name)
{
	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
	return text_to_cstring(PG_GETARG_TEXT_PP(n));
}

/*
 * Read every row of in, sort by key, write to out in out_desc's layout
 * (map: see xxl_output_map_columns).  Closes in.  Returns the rows written.
 */
static uint64
run_sort(XxlInput *in, XxlSortKey *key, XxlOutput *out, TupleDesc out_desc, AttrNumber *map)
{
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext rowcxt = AllocSetContextCreate(cxt, "xxl sort row", ALLOCSET_DEFAULT_SIZES);
	XxlOperator *op = xxl_operator_begin("sort");
	xxl_sorter *sorter = xxl_operator_new_sorter(op, 0, 0);
	AttrNumber	maxkey = xxl_sortkey_max_attno(key);
	int			natts = out_desc->natts;
	Datum	   *values = palloc(sizeof(Datum) * Max(natts, 1));
	bool	   *isnull = palloc(sizeof(bool) * Max(natts, 1));
	StringInfoData rowbuf;
	uint64		n;

	initStringInfo(&rowbuf);

	for (;;)
	{
		TupleTableSlot *slot;
		const unsigned char *k;
		uint32		klen;
		const char *row = NULL;
		uint32		rlen;
		HeapTuple	tuple;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(rowcxt);
		MemoryContextSwitchTo(rowcxt);
		slot = xxl_input_next(in);
		if (slot == NULL)
			break;
		slot_getsomeattrs(slot, maxkey);
		k = xxl_sortkey_encode(key, slot->tts_values, slot->tts_isnull, &klen);

		if (map == NULL && (tuple = xxl_input_heap_tuple(in)) != NULL)
			row = xxl_compact_from_heap(tuple, out_desc, &rlen);
		if (row == NULL)
		{
			slot_getallattrs(slot);
			if (map == NULL)
				row = xxl_compact_form(&rowbuf, out_desc, slot->tts_values, slot->tts_isnull,
									   &rlen);
			else
			{
				for (int i = 0; i < natts; i++)
				{
					values[i] = map[i] ? slot->tts_values[map[i] - 1] : (Datum) 0;
					isnull[i] = map[i] ? slot->tts_isnull[map[i] - 1] : true;
				}
				row = xxl_compact_form(&rowbuf, out_desc, values, isnull, &rlen);
			}
		}
		if (xxl_sorter_put_var(sorter, k, klen, row, rlen) != XXL_OK)
			xxl_raise_error(xxl_sorter_error(sorter), "xxl sort");
		MemoryContextSwitchTo(cxt);
	}
	MemoryContextSwitchTo(cxt);
	op->rows_in = xxl_input_rows(in);
	xxl_input_close(in);
	MemoryContextDelete(rowcxt);

	xxl_operator_phase(op, XXL_PHASE_MERGE);
	if (xxl_sorter_sort(sorter) != XXL_OK)
		xxl_raise_error(xxl_sorter_error(sorter), "xxl sort");

	xxl_operator_phase(op, XXL_PHASE_OUTPUT);
	for (;;)
	{
		const void *k,
				   *payload;
		uint32		klen,
					plen;
		int			got = xxl_sorter_next_var(sorter, &k, &klen, &payload, &plen);

		if (got < 0)
			xxl_raise_error(xxl_sorter_error(sorter), "xxl sort");
		if (got == 0)
			break;
		xxl_output_put_compact(out, payload, plen);
		CHECK_FOR_INTERRUPTS();
	}
	n = xxl_output_finish(out);
	op->rows_out = n;
	xxl_operator_end(op);
	return n;
}

/* xxl.sort_into(source text, order_by text, target text) RETURNS bigint */
Datum
xxl_sort_into(PG_FUNCTION_ARGS)
{
	char	   *source = text_arg(fcinfo, 0, "source");
	char	   *order_by = text_arg(fcinfo, 1, "order_by");
	char	   *target = text_arg(fcinfo, 2, "target");
	List	   *items = xxl_parse_order_by(order_by);
	XxlInput   *in = xxl_input_open(source);
	TupleDesc	in_desc = xxl_input_desc(in);
	XxlSortKey *key = xxl_sortkey_create(in_desc, items);
	TupleDesc	out_desc = xxl_output_visible_desc(in_desc);
	AttrNumber *map = xxl_output_map_columns(in_desc, out_desc, "the target");
	XxlOutput  *out = xxl_output_into_table(target, out_desc);

	PG_RETURN_INT64((int64) run_sort(in, key, out, out_desc, map));
}

/* xxl.sort(source text, order_by text) RETURNS SETOF record */
Datum
xxl_sort_record(PG_FUNCTION_ARGS)
{
	char	   *source = text_arg(fcinfo, 0, "source");
	char	   *order_by = text_arg(fcinfo, 1, "order_by");
	List	   *items = xxl_parse_order_by(order_by);
	TupleDesc	out_desc = xxl_output_caller_desc(fcinfo);
	XxlInput   *in = xxl_input_open(source);
	TupleDesc	in_desc = xxl_input_desc(in);
	XxlSortKey *key = xxl_sortkey_create(in_desc, items);
	AttrNumber *map = xxl_output_map_columns(in_desc, out_desc, "the column definition list");
	XxlOutput  *out = xxl_output_to_caller(fcinfo, out_desc);

	run_sort(in, key, out, out_desc, map);
	return (Datum) 0;
}

/* xxl.sort(source anyelement, order_by text) RETURNS SETOF anyelement */
Datum
xxl_sort_typed(PG_FUNCTION_ARGS)
{
	Oid			type = get_fn_expr_argtype(fcinfo->flinfo, 0);
	Oid			relid = OidIsValid(type) ? typeidTypeRelid(getBaseType(type)) : InvalidOid;
	char	   *order_by;
	List	   *items;
	TupleDesc	out_desc;
	XxlInput   *in;
	TupleDesc	in_desc;
	XxlSortKey *key;
	AttrNumber *map;
	XxlOutput  *out;

	if (!OidIsValid(relid) || get_rel_relkind(relid) == RELKIND_COMPOSITE_TYPE)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("xxl.sort needs the row type of a table or view, not type %s",
						OidIsValid(type) ? format_type_be(type) : "unknown"),
				 errhint("Pass NULL::table_name, or the source as text with a column definition list.")));
	order_by = text_arg(fcinfo, 1, "order_by");
	items = xxl_parse_order_by(order_by);
	out_desc = xxl_output_caller_desc(fcinfo);
	in = xxl_input_open_relid(relid);
	in_desc = xxl_input_desc(in);
	key = xxl_sortkey_create(in_desc, items);
	map = xxl_output_map_columns(in_desc, out_desc, "the row type");
	out = xxl_output_to_caller(fcinfo, out_desc);

	run_sort(in, key, out, out_desc, map);
	return (Datum) 0;
}
