/*
 * xxl_output.c — result rows to the caller or into a new table, and the
 * compact row form engines carry (see xxl_output.h).
 *
 * The new table is created by running CREATE TABLE through SPI, so event
 * triggers, utility hooks and permission checks see an ordinary statement;
 * the rows then go in through the table AM's multi-insert with a bulk
 * insert state (a ring of buffers, no FSM lookups), as COPY does.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/detoast.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/tuplestore.h"
#include "utils/varlena.h"

#include "xxl_output.h"

/* as COPY: at most this many rows or bytes per multi-insert */
#define INSERT_BATCH 1000
#define INSERT_BYTES 65535

/* bytes of a heap tuple header that compact rows leave out */
#define HEAP_SKIP offsetof(HeapTupleHeaderData, t_infomask2)

typedef enum OutputKind
{
	OUTPUT_TABLE,
	OUTPUT_CALLER
} OutputKind;

struct XxlOutput
{
	OutputKind	kind;
	MemoryContext cxt;
	TupleDesc	desc;
	uint64		rows;

	/* table */
	Relation	rel;
	MemoryContext batch_cxt;	/* the buffered rows and what inserting them allocates */
	BulkInsertState bistate;
	CommandId	cid;
	int			options;
	TupleTableSlot **slots;
	int			nbuffered;
	size_t		buffered_bytes;

	/* caller */
	Tuplestorestate *tupstore;
	TupleTableSlot *slot;
	char	   *buf;			/* MAXALIGNed MinimalTuple under construction */
	size_t		buf_size;
};

/* Descriptors ----------------------------------------------------------- */

TupleDesc
xxl_output_visible_desc(TupleDesc in)
{
	int			n = 0;
	TupleDesc	out;

	for (int i = 0; i < in->natts; i++)
		if (!TupleDescAttr(in, i)->attisdropped)
			n++;
	out = CreateTemplateTupleDesc(n);
	n = 0;
	for (int i = 0; i < in->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(in, i);

		if (att->attisdropped)
			continue;
		TupleDescCopyEntry(out, ++n, in, i + 1);
	}
	return out;
}

AttrNumber *
xxl_output_map_columns(TupleDesc in, TupleDesc out, const char *context)
{
	AttrNumber *map = palloc0(sizeof(AttrNumber) * Max(out->natts, 1));
	int			nin = 0,
				nout = 0;
	bool		identity = (in->natts == out->natts);
	int			j = 0;

	for (int i = 0; i < in->natts; i++)
		if (!TupleDescAttr(in, i)->attisdropped)
			nin++;
	for (int i = 0; i < out->natts; i++)
		if (!TupleDescAttr(out, i)->attisdropped)
			nout++;
	if (nin != nout)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the source has %d columns but %s has %d", nin, context, nout)));

	for (int i = 0; i < out->natts; i++)
	{
		Form_pg_attribute oatt = TupleDescAttr(out, i);
		Form_pg_attribute iatt;

		if (oatt->attisdropped)
		{
			identity = false;
			continue;
		}
		while (TupleDescAttr(in, j)->attisdropped)
			j++;
		iatt = TupleDescAttr(in, j);
		if (iatt->atttypid != oatt->atttypid &&
			!IsBinaryCoercible(iatt->atttypid, oatt->atttypid))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of the source (\"%s\") has type %s but %s says %s",
							nout > 0 ? i + 1 : 0, NameStr(iatt->attname),
							format_type_be(iatt->atttypid), context,
							format_type_be(oatt->atttypid))));
		map[i] = j + 1;
		if (j != i)
			identity = false;
		j++;
	}
	for (int i = 0; i < in->natts; i++)
		if (TupleDescAttr(in, i)->attisdropped)
			identity = false;
	if (identity)
	{
		pfree(map);
		return NULL;
	}
	return map;
}

TupleDesc
xxl_output_caller_desc(FunctionCallInfo fcinfo)
{
	TupleDesc	desc;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("function returning record called in context that cannot accept type record"),
				 errhint("Add a column definition list, e.g. AS s(a int, b text).")));
	return desc;
}

/* Into a new table --------------------------------------------------------- */

static char *
create_table_ddl(const char *nspname, const char *relname, TupleDesc desc)
{
	StringInfoData ddl;
	int			n = 0;

	initStringInfo(&ddl);
	appendStringInfo(&ddl, "CREATE TABLE %s (",
					 quote_qualified_identifier(nspname, relname));
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		appendStringInfo(&ddl, "%s%s %s", n++ > 0 ? ", " : "",
						 quote_identifier(NameStr(att->attname)),
						 format_type_with_typemod(att->atttypid, att->atttypmod));
		if (OidIsValid(att->attcollation) && att->attcollation != get_typcollation(att->atttypid))
			appendStringInfo(&ddl, " COLLATE %s", generate_collation_name(att->attcollation));
	}
	appendStringInfoChar(&ddl, ')');
	return ddl.data;
}

XxlOutput *
xxl_output_into_table(const char *target, TupleDesc desc)
{
	XxlOutput  *out = palloc0(sizeof(XxlOutput));
	MemoryContext cxt = CurrentMemoryContext;
	char	   *copy = pstrdup(target);
	List	   *names;
	RangeVar   *rv;
	Oid			nsp;
	char	   *nspname;
	char	   *ddl;
	Oid			relid;
	int			rc;

	if (!SplitIdentifierString(copy, '.', &names) || names == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("invalid target table name \"%s\"", target),
				 errhint("The target is read as a possibly schema-qualified SQL name: "
						 "write names with spaces, capitals or special characters in double quotes.")));
	rv = makeRangeVarFromNameList(stringToQualifiedNameList(target));
	nsp = RangeVarGetCreationNamespace(rv);
	nspname = get_namespace_name(nsp);

	/* say it before any work is done; CREATE TABLE would catch a race */
	if (OidIsValid(get_relname_relid(rv->relname, nsp)))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("target relation \"%s\" already exists",
						quote_qualified_identifier(nspname, rv->relname)),
				 errhint("Drop it first or choose another target name.")));

	ddl = create_table_ddl(nspname, rv->relname, desc);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	rc = SPI_execute(ddl, false, 0);
	if (rc != SPI_OK_UTILITY)
		elog(ERROR, "could not create target table: %s", SPI_result_code_string(rc));
	SPI_finish();
	MemoryContextSwitchTo(cxt);

	relid = get_relname_relid(rv->relname, nsp);
	if (!OidIsValid(relid))
		elog(ERROR, "target table \"%s\" vanished after creation", rv->relname);

	out->kind = OUTPUT_TABLE;
	out->cxt = cxt;
	out->rel = table_open(relid, RowExclusiveLock);
	out->desc = RelationGetDescr(out->rel);
	out->bistate = GetBulkInsertState();
	out->cid = GetCurrentCommandId(true);
	/* the table is new: its free space map has nothing to offer */
	out->options = TABLE_INSERT_SKIP_FSM;
	out->batch_cxt = AllocSetContextCreate(cxt, "xxl insert batch", ALLOCSET_DEFAULT_SIZES);
	out->slots = palloc(sizeof(TupleTableSlot *) * INSERT_BATCH);
	for (int i = 0; i < INSERT_BATCH; i++)
		out->slots[i] = MakeSingleTupleTableSlot(out->desc, &TTSOpsHeapTuple);
	return out;
}

static void
flush_batch(XxlOutput *out)
{
	MemoryContext old;

	if (out->nbuffered == 0)
		return;
	/* heap_multi_insert leaves per-call arrays behind, as COPY expects */
	old = MemoryContextSwitchTo(out->batch_cxt);
	table_multi_insert(out->rel, out->slots, out->nbuffered, out->cid, out->options,
					   out->bistate);
	MemoryContextSwitchTo(old);
	for (int i = 0; i < out->nbuffered; i++)
		ExecClearTuple(out->slots[i]);
	MemoryContextReset(out->batch_cxt);
	out->rows += out->nbuffered;
	out->nbuffered = 0;
	out->buffered_bytes = 0;
}

/* To the caller -------------------------------------------------------------- */

XxlOutput *
xxl_output_to_caller(FunctionCallInfo fcinfo, TupleDesc desc)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	XxlOutput  *out;
	MemoryContext old;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	if (!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialize mode required, but it is not allowed in this context")));

	out = palloc0(sizeof(XxlOutput));
	out->kind = OUTPUT_CALLER;
	out->cxt = CurrentMemoryContext;

	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	out->desc = CreateTupleDescCopy(desc);
	out->tupstore = tuplestore_begin_heap((rsinfo->allowedModes & SFRM_Materialize_Random) != 0,
										  false, work_mem);
	MemoryContextSwitchTo(old);

	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = out->tupstore;
	rsinfo->setDesc = out->desc;

	out->slot = MakeSingleTupleTableSlot(out->desc, &TTSOpsMinimalTuple);
	out->buf_size = 1024;
	out->buf = palloc(out->buf_size);
	return out;
}

/* Rows ------------------------------------------------------------------- */

void
xxl_output_put_compact(XxlOutput *out, const void *row, uint32 len)
{
	if (out->kind == OUTPUT_TABLE)
	{
		HeapTuple	tup = MemoryContextAlloc(out->batch_cxt, HEAPTUPLESIZE + HEAP_SKIP + len);

		tup->t_len = HEAP_SKIP + len;
		ItemPointerSetInvalid(&tup->t_self);
		tup->t_tableOid = InvalidOid;
		tup->t_data = (HeapTupleHeader) ((char *) tup + HEAPTUPLESIZE);
		memset(tup->t_data, 0, HEAP_SKIP);
		memcpy((char *) tup->t_data + HEAP_SKIP, row, len);
		/* rows copied from a heap carry its hint and HOT bits */
		tup->t_data->t_infomask &= ~HEAP_XACT_MASK;
		tup->t_data->t_infomask2 &= ~HEAP2_XACT_MASK;
		/* the slot owns it, so multi-insert takes it without a copy */
		ExecStoreHeapTuple(tup, out->slots[out->nbuffered++], true);
		out->buffered_bytes += tup->t_len;
		if (out->nbuffered == INSERT_BATCH || out->buffered_bytes >= INSERT_BYTES)
			flush_batch(out);
	}
	else
	{
		size_t		size = MINIMAL_TUPLE_DATA_OFFSET + (size_t) len;
		MinimalTuple mt;

		if (size > out->buf_size)
		{
			while (out->buf_size < size)
				out->buf_size *= 2;
			pfree(out->buf);
			out->buf = MemoryContextAlloc(out->cxt, out->buf_size);
		}
		mt = (MinimalTuple) out->buf;
		memset(mt, 0, MINIMAL_TUPLE_DATA_OFFSET);
		mt->t_len = size;
		memcpy(out->buf + MINIMAL_TUPLE_DATA_OFFSET, row, len);
		mt->t_infomask &= ~HEAP_XACT_MASK;
		mt->t_infomask2 &= ~HEAP2_XACT_MASK;
		ExecStoreMinimalTuple(mt, out->slot, false);
		tuplestore_puttupleslot(out->tupstore, out->slot);
		ExecClearTuple(out->slot);
		out->rows++;
	}
}

void
xxl_output_put_values(XxlOutput *out, Datum *values, bool *isnull)
{
	if (out->kind == OUTPUT_TABLE)
	{
		MemoryContext old = MemoryContextSwitchTo(out->batch_cxt);
		HeapTuple	tup = heap_form_tuple(out->desc, values, isnull);

		MemoryContextSwitchTo(old);
		ExecStoreHeapTuple(tup, out->slots[out->nbuffered++], true);
		out->buffered_bytes += tup->t_len;
		if (out->nbuffered == INSERT_BATCH || out->buffered_bytes >= INSERT_BYTES)
			flush_batch(out);
	}
	else
	{
		tuplestore_putvalues(out->tupstore, out->desc, values, isnull);
		out->rows++;
	}
}

uint64
xxl_output_finish(XxlOutput *out)
{
	if (out->kind == OUTPUT_TABLE)
	{
		flush_batch(out);
		FreeBulkInsertState(out->bistate);
		table_finish_bulk_insert(out->rel, out->options);
		for (int i = 0; i < INSERT_BATCH; i++)
			ExecDropSingleTupleTableSlot(out->slots[i]);
		table_close(out->rel, NoLock);
		MemoryContextDelete(out->batch_cxt);
		/* later statements of this transaction see the rows */
		CommandCounterIncrement();
	}
	else
		ExecDropSingleTupleTableSlot(out->slot);
	return out->rows;
}

/* Compact rows -------------------------------------------------------------- */

const char *
xxl_compact_form(StringInfo buf, TupleDesc desc, const Datum *values, const bool *isnull,
				 uint32 *len)
{
	int			natts = desc->natts;
	bool		hasnull = false;
	Datum	   *vals = (Datum *) values;
	Size		hoff,
				data_len,
				total;
	MinimalTuple tup;

	for (int i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (isnull[i])
		{
			hasnull = true;
			continue;
		}
		/* the row must not point into anyone's TOAST table */
		if (att->attlen == -1 && VARATT_IS_EXTERNAL(DatumGetPointer(vals[i])))
		{
			if (vals == values)
			{
				vals = palloc(sizeof(Datum) * natts);
				memcpy(vals, values, sizeof(Datum) * natts);
			}
			vals[i] = PointerGetDatum(detoast_external_attr((struct varlena *) DatumGetPointer(vals[i])));
		}
	}

	/* heap_form_minimal_tuple, into a reused buffer */
	hoff = SizeofMinimalTupleHeader;
	if (hasnull)
		hoff += BITMAPLEN(natts);
	hoff = MAXALIGN(hoff);
	data_len = heap_compute_data_size(desc, vals, (bool *) isnull);
	total = hoff + data_len;

	resetStringInfo(buf);
	enlargeStringInfo(buf, total);
	memset(buf->data, 0, total);
	tup = (MinimalTuple) buf->data;
	tup->t_len = total;
	HeapTupleHeaderSetNatts(tup, natts);
	tup->t_hoff = hoff + MINIMAL_TUPLE_OFFSET;
	heap_fill_tuple(desc, vals, (bool *) isnull, buf->data + hoff, data_len,
					&tup->t_infomask, hasnull ? tup->t_bits : NULL);
	buf->len = total;

	*len = total - MINIMAL_TUPLE_DATA_OFFSET;
	return buf->data + MINIMAL_TUPLE_DATA_OFFSET;
}

const char *
xxl_compact_from_heap(HeapTuple tuple, TupleDesc desc, uint32 *len)
{
	if (HeapTupleHeaderGetNatts(tuple->t_data) != desc->natts || HeapTupleHasExternal(tuple))
		return NULL;
	*len = tuple->t_len - HEAP_SKIP;
	return (const char *) tuple->t_data + HEAP_SKIP;
}
