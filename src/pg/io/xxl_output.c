/*
 * xxl_output.c — the output sinks behind one interface (see xxl_output.h):
 * a new table, written by the direct page writer (xxl_heap_pages.c) when
 * it is an empty heap of this transaction and by the table AM's
 * multi-insert otherwise, and the caller's tuplestore, a row per row or
 * many rows packed to a bytea for a server that reads them back.
 *
 * The new table is created by running CREATE TABLE through SPI, so event
 * triggers, utility hooks and permission checks see an ordinary statement.
 * Multi-insert takes rows with a bulk insert state (a ring of buffers, no
 * FSM lookups), as COPY does.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/tuplestore.h"

#include "pg/io/xxl_heap_pages.h"
#include "pg/io/xxl_input.h"
#include "pg/io/xxl_output.h"
#include "pg/io/xxl_rowcodec.h"

/* as COPY: at most this many rows or bytes per multi-insert */
#define INSERT_BATCH 1000
#define INSERT_BYTES 65535

/* What a sink does with rows: the one interface of every output. */
typedef struct XxlSink
{
	void		(*put_compact) (XxlOutput *out, const void *row, uint32 len);
	void		(*put_values) (XxlOutput *out, Datum *values, bool *isnull);
	void		(*finish) (XxlOutput *out);
	/* rows of one length at once; NULL: put_compact, row by row */
	void		(*put_compact_many) (XxlOutput *out, const char *rows, uint32 len, int n);
} XxlSink;

struct XxlOutput
{
	const XxlSink *ops;
	MemoryContext cxt;
	TupleDesc	desc;
	uint64		rows;

	/* table */
	Relation	rel;
	CommandId	cid;
	XxlHeapPages *pages;		/* written page by page, or */
	MemoryContext batch_cxt;	/* through multi-insert: per-batch allocations */
	BulkInsertState bistate;
	int			options;
	TupleTableSlot **slots;
	int			nbuffered;
	size_t		buffered_bytes;

	/* caller */
	ReturnSetInfo *rsinfo;
	Tuplestorestate *tupstore;
	TupleTableSlot *slot;
	char	   *buf;			/* MAXALIGNed MinimalTuple under construction */
	size_t		buf_size;
	bool		all8;			/* every column by value, 8 bytes: rows without NULLs are formed here */

	/* caller, packed */
	int			packed_cols;	/* of each row */
	bytea	   *block;			/* under construction */
	uint32		block_len;		/* its bytes of rows */
};

static const XxlSink table_pending_sink;
static const XxlSink pages_sink;
static const XxlSink insert_sink;
static const XxlSink caller_sink;
static const XxlSink packed_sink;

TupleDesc
xxl_output_caller_desc(FunctionCallInfo fcinfo)
{
	TupleDesc	desc;
	Oid			type;
	TypeFuncClass cls = get_call_result_type(fcinfo, &type, &desc);

	/* RETURNS TABLE of one column is a set of that column's type */
	if (cls == TYPEFUNC_SCALAR)
	{
		desc = CreateTemplateTupleDesc(1);
		TupleDescInitEntry(desc, (AttrNumber) 1, "value", type, -1, 0);
		return BlessTupleDesc(desc);
	}
	if (cls != TYPEFUNC_COMPOSITE)
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

/*
 * Rows go into the new table without the executor: neither the direct page
 * writer nor multi-insert maintains indexes, fires triggers, checks
 * constraints or applies row security and rules.  The table is created
 * bare, but an event trigger (or the source query, which runs once the
 * table exists) can add any of them; refuse then rather than bypass them.
 */
static void
check_target_bare(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	const char *what = NULL;

	if (rel->rd_rel->relhasindex)
		what = "indexes";
	else if (rel->rd_rel->relhastriggers || rel->trigdesc != NULL)
		what = "triggers";
	else if (desc->constr != NULL && desc->constr->num_check > 0)
		what = "check constraints";
	else if (desc->constr != NULL && desc->constr->has_not_null)
		what = "not-null constraints";
	else if (rel->rd_rel->relrowsecurity)
		what = "row-level security";
	else if (rel->rd_rel->relhasrules)
		what = "rules";
	else if (rel->rd_rel->relkind != RELKIND_RELATION)
		what = "a kind other than an ordinary table";
	if (what != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("target table \"%s\" has %s right after its creation",
						RelationGetRelationName(rel), what),
				 errdetail("An event trigger or the source query probably added them; the rows are "
						   "written without index maintenance, triggers, constraint checks, "
						   "row security or rules."),
				 errhint("Add them after the call.")));
}


XxlOutput *
xxl_output_into_table(const char *target, TupleDesc desc)
{
	XxlOutput  *out = palloc0(sizeof(XxlOutput));
	MemoryContext cxt = CurrentMemoryContext;
	RangeVar   *rv = xxl_source_name(target);
	Oid			nsp;
	char	   *nspname;
	char	   *ddl;
	Oid			relid;
	int			rc;

	if (rv == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("invalid target table name \"%s\"", target),
				 errhint("The target is read as a possibly schema-qualified SQL name: "
						 "write names with spaces, capitals or special characters in double quotes.")));
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

	out->ops = &table_pending_sink;
	out->cxt = cxt;
	out->rel = table_open(relid, RowExclusiveLock);
	out->desc = RelationGetDescr(out->rel);
	check_target_bare(out->rel);
	return out;
}

/*
 * The first row (or the end): decide how rows go in, now that the source
 * has been read and nothing else of this statement can touch the table.
 */
static void
table_start(XxlOutput *out)
{
	MemoryContext old = MemoryContextSwitchTo(out->cxt);

	check_target_bare(out->rel);
	out->cid = GetCurrentCommandId(true);
	if (xxl_heap_pages_allowed(out->rel))
	{
		out->pages = xxl_heap_pages_begin(out->rel, out->cid);
		out->ops = &pages_sink;
	}
	else
	{
		out->batch_cxt = AllocSetContextCreate(out->cxt, "xxl insert batch",
											   ALLOCSET_DEFAULT_SIZES);
		out->bistate = GetBulkInsertState();
		out->options = TABLE_INSERT_SKIP_FSM;	/* a new table: no free space to find */
		out->slots = palloc(sizeof(TupleTableSlot *) * INSERT_BATCH);
		for (int i = 0; i < INSERT_BATCH; i++)
			out->slots[i] = MakeSingleTupleTableSlot(out->desc, &TTSOpsHeapTuple);
		out->ops = &insert_sink;
	}
	MemoryContextSwitchTo(old);
}

static void
table_close_out(XxlOutput *out)
{
	table_close(out->rel, NoLock);
	/* later statements of this transaction see the rows */
	CommandCounterIncrement();
}

static void
pending_put_compact(XxlOutput *out, const void *row, uint32 len)
{
	table_start(out);
	out->ops->put_compact(out, row, len);
}

static void
pending_put_values(XxlOutput *out, Datum *values, bool *isnull)
{
	table_start(out);
	out->ops->put_values(out, values, isnull);
}

static void
pending_finish(XxlOutput *out)
{
	table_start(out);
	out->ops->finish(out);
}

static void
pending_put_compact_many(XxlOutput *out, const char *rows, uint32 len, int n)
{
	table_start(out);
	xxl_output_put_compact_many(out, rows, len, n);
}

static const XxlSink table_pending_sink = {pending_put_compact, pending_put_values, pending_finish,
pending_put_compact_many};

/* Page by page ------------------------------------------------------------- */

static void
pages_put_compact(XxlOutput *out, const void *row, uint32 len)
{
	xxl_heap_pages_put_compact(out->pages, row, len);
}

static void
pages_put_values(XxlOutput *out, Datum *values, bool *isnull)
{
	xxl_heap_pages_put_values(out->pages, values, isnull);
}

static void
pages_finish(XxlOutput *out)
{
	out->rows = xxl_heap_pages_finish(out->pages);
	out->pages = NULL;
	table_close_out(out);
}

static void
pages_put_compact_many(XxlOutput *out, const char *rows, uint32 len, int n)
{
	xxl_heap_pages_put_compact_many(out->pages, rows, len, n);
}

static const XxlSink pages_sink = {pages_put_compact, pages_put_values, pages_finish,
pages_put_compact_many};

/* Pages of a table its owner closes: finishing writes the pages out, no more. */
static void
borrowed_pages_finish(XxlOutput *out)
{
	out->rows = xxl_heap_pages_finish(out->pages);
	out->pages = NULL;
}

static const XxlSink borrowed_pages_sink = {pages_put_compact, pages_put_values,
	borrowed_pages_finish, pages_put_compact_many};

XxlOutput *
xxl_output_into_pages(XxlHeapPages *pages, TupleDesc desc)
{
	XxlOutput  *out = palloc0(sizeof(XxlOutput));

	out->cxt = CurrentMemoryContext;
	out->desc = desc;
	out->pages = pages;
	out->ops = &borrowed_pages_sink;
	return out;
}

/* Multi-insert ------------------------------------------------------------- */

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

static void
insert_tuple(XxlOutput *out, HeapTuple tup)
{
	/* the slot owns it, so multi-insert takes it without a copy */
	ExecStoreHeapTuple(tup, out->slots[out->nbuffered++], true);
	out->buffered_bytes += tup->t_len;
	if (out->nbuffered == INSERT_BATCH || out->buffered_bytes >= INSERT_BYTES)
		flush_batch(out);
}

static void
insert_put_compact(XxlOutput *out, const void *row, uint32 len)
{
	HeapTuple	tup = MemoryContextAlloc(out->batch_cxt,
										 HEAPTUPLESIZE + XXL_COMPACT_SKIP + len);

	tup->t_len = XXL_COMPACT_SKIP + len;
	ItemPointerSetInvalid(&tup->t_self);
	tup->t_tableOid = InvalidOid;
	tup->t_data = (HeapTupleHeader) ((char *) tup + HEAPTUPLESIZE);
	memset(tup->t_data, 0, XXL_COMPACT_SKIP);
	memcpy((char *) tup->t_data + XXL_COMPACT_SKIP, row, len);
	/* rows copied from a heap carry its hint and HOT bits */
	tup->t_data->t_infomask &= ~HEAP_XACT_MASK;
	tup->t_data->t_infomask2 &= ~HEAP2_XACT_MASK;
	insert_tuple(out, tup);
}

static void
insert_put_values(XxlOutput *out, Datum *values, bool *isnull)
{
	MemoryContext old = MemoryContextSwitchTo(out->batch_cxt);
	HeapTuple	tup = heap_form_tuple(out->desc, values, isnull);

	MemoryContextSwitchTo(old);
	insert_tuple(out, tup);
}

static void
insert_finish(XxlOutput *out)
{
	flush_batch(out);
	FreeBulkInsertState(out->bistate);
	table_finish_bulk_insert(out->rel, out->options);
	for (int i = 0; i < INSERT_BATCH; i++)
		ExecDropSingleTupleTableSlot(out->slots[i]);
	MemoryContextDelete(out->batch_cxt);
	table_close_out(out);
}

static const XxlSink insert_sink = {insert_put_compact, insert_put_values, insert_finish, NULL};

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
	out->ops = &caller_sink;
	out->cxt = CurrentMemoryContext;

	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	out->desc = CreateTupleDescCopy(desc);
	out->tupstore = tuplestore_begin_heap((rsinfo->allowedModes & SFRM_Materialize_Random) != 0,
										  false, work_mem);
	MemoryContextSwitchTo(old);
	out->rsinfo = rsinfo;

	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = out->tupstore;
	rsinfo->setDesc = out->desc;

	out->slot = MakeSingleTupleTableSlot(out->desc, &TTSOpsMinimalTuple);
	out->buf_size = 1024;
	out->buf = palloc(out->buf_size);
	out->all8 = desc->natts > 0 && desc->natts <= 64;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		out->all8 &= att->attbyval && att->attlen == 8 && !att->attisdropped;
	}
	return out;
}

void
xxl_output_caller_memory(XxlOutput *out, size_t budget, uint64 held)
{
	ReturnSetInfo *rsinfo = out->rsinfo;
	size_t		kb = Min((budget > held ? budget - held : 0) / 1024, (size_t) MAX_KILOBYTES);
	MemoryContext old;

	if ((out->ops != &caller_sink && out->ops != &packed_sink) || out->rows > 0 || kb <= (size_t) work_mem)
		return;
	/* (empty: a store with the larger limit replaces it) */
	tuplestore_end(out->tupstore);
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	out->tupstore = tuplestore_begin_heap((rsinfo->allowedModes & SFRM_Materialize_Random) != 0,
										  false, (int) kb);
	MemoryContextSwitchTo(old);
	rsinfo->setResult = out->tupstore;
}

/* A row formed in out->buf into the store (which copies it). */
static void
caller_store(XxlOutput *out, MinimalTuple mt)
{
	ExecStoreMinimalTuple(mt, out->slot, false);
	tuplestore_puttupleslot(out->tupstore, out->slot);
	ExecClearTuple(out->slot);
	out->rows++;
}

static void
caller_put_compact(XxlOutput *out, const void *row, uint32 len)
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
	caller_store(out, mt);
}

/*
 * Rows of 8-byte by-value columns without NULLs: the header and the values,
 * written here (tuplestore_putvalues forms each row through the generic
 * size and fill loops and a zeroed allocation, a third of a components
 * call's output).
 */
static bool
caller_put_all8(XxlOutput *out, Datum *values, bool *isnull)
{
	int			natts = out->desc->natts;
	size_t		hoff = MAXALIGN(SizeofMinimalTupleHeader);
	MinimalTuple mt = (MinimalTuple) out->buf;

	for (int i = 0; i < natts; i++)
		if (isnull[i])
			return false;
	memset(mt, 0, hoff);
	mt->t_len = hoff + natts * sizeof(Datum);
	HeapTupleHeaderSetNatts(mt, natts);
	mt->t_hoff = hoff + MINIMAL_TUPLE_OFFSET;
	memcpy(out->buf + hoff, values, natts * sizeof(Datum));
	caller_store(out, mt);
	return true;
}

static void
caller_put_values(XxlOutput *out, Datum *values, bool *isnull)
{
	if (out->all8 && caller_put_all8(out, values, isnull))
		return;
	tuplestore_putvalues(out->tupstore, out->desc, values, isnull);
	out->rows++;
}

static void
caller_finish(XxlOutput *out)
{
	ExecDropSingleTupleTableSlot(out->slot);
}

static const XxlSink caller_sink = {caller_put_compact, caller_put_values, caller_finish, NULL};

/* To the caller, packed --------------------------------------------------------- */

XxlOutput *
xxl_output_packed_to_caller(FunctionCallInfo fcinfo, TupleDesc desc)
{
	TupleDesc	blocks = CreateTemplateTupleDesc(1);
	XxlOutput  *out;

	TupleDescInitEntry(blocks, (AttrNumber) 1, "block", BYTEAOID, -1, 0);
	out = xxl_output_to_caller(fcinfo, blocks);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attbyval || att->attlen != 8 || att->attisdropped)
			elog(ERROR, "a packed output takes 8-byte columns only");
	}
	out->ops = &packed_sink;
	out->packed_cols = desc->natts;
	out->block = MemoryContextAlloc(out->cxt, VARHDRSZ + XXL_PACKED_BLOCK_BYTES);
	out->block_len = 0;
	return out;
}

/* The block so far as a row of the store (which copies it). */
static void
packed_flush(XxlOutput *out)
{
	Datum		d = PointerGetDatum(out->block);
	bool		isnull = false;

	if (out->block_len == 0)
		return;
	SET_VARSIZE(out->block, VARHDRSZ + out->block_len);
	tuplestore_putvalues(out->tupstore, out->desc, &d, &isnull);
	out->block_len = 0;
}

static void
packed_put_values(XxlOutput *out, Datum *values, bool *isnull)
{
	uint32		len = (uint32) out->packed_cols * 8;
	char	   *p;

	if (out->block_len + len > XXL_PACKED_BLOCK_BYTES)
		packed_flush(out);
	p = VARDATA(out->block) + out->block_len;
	for (int i = 0; i < out->packed_cols; i++)
	{
		uint64		v = XXL_PACKED_ORDER((uint64) DatumGetInt64(values[i]));

		if (isnull[i])
			elog(ERROR, "a packed output takes no NULLs");
		memcpy(p + i * 8, &v, 8);
	}
	out->block_len += len;
	out->rows++;
}

static void
packed_put_compact(XxlOutput *out, const void *row, uint32 len)
{
	elog(ERROR, "a packed output takes rows as values");
}

static void
packed_finish(XxlOutput *out)
{
	packed_flush(out);
	ExecDropSingleTupleTableSlot(out->slot);
}

static const XxlSink packed_sink = {packed_put_compact, packed_put_values, packed_finish, NULL};

/* The interface ---------------------------------------------------------------- */

void
xxl_output_put_compact(XxlOutput *out, const void *row, uint32 len)
{
	out->ops->put_compact(out, row, len);
}

void
xxl_output_put_compact_many(XxlOutput *out, const char *rows, uint32 len, int n)
{
	if (out->ops->put_compact_many)
		out->ops->put_compact_many(out, rows, len, n);
	else
		for (int i = 0; i < n; i++)
			out->ops->put_compact(out, rows + (size_t) i * len, len);
}

void
xxl_output_put_values(XxlOutput *out, Datum *values, bool *isnull)
{
	out->ops->put_values(out, values, isnull);
}

uint64
xxl_output_finish(XxlOutput *out)
{
	out->ops->finish(out);
	return out->rows;
}
