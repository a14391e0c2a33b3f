/*
 * xxl_corpus.c — a corpus (see xxl_text_sql.h): its one text or bytea
 * column found, its values streamed slice by slice into a text engine.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "pg/xxl_error.h"
#include "pg/xxl_text_sql.h"

/* bytes of a value fed to the engine at once (and of a detoasted slice) */
#define FEED_SLICE (1024 * 1024)


static xxl_status
sink_sa_put(void *core, const void *bytes, size_t len)
{
	return xxl_sa_put((xxl_sa *) core, bytes, len);
}

static const xxl_error *
sink_sa_error(void *core)
{
	return xxl_sa_error((xxl_sa *) core);
}

static xxl_status
sink_check_put(void *core, const void *bytes, size_t len)
{
	return xxl_sa_check_put_text((xxl_sa_checker *) core, bytes, len);
}

static const xxl_error *
sink_check_error(void *core)
{
	return xxl_sa_check_error((xxl_sa_checker *) core);
}

static xxl_status
sink_store_put(void *core, const void *bytes, size_t len)
{
	return xxl_text_store_put((xxl_text_store *) core, bytes, len);
}

static const xxl_error *
sink_store_error(void *core)
{
	return xxl_text_store_error((xxl_text_store *) core);
}

void
xxl_corpus_put(XxlCorpusSink *sink, const char *bytes, size_t len)
{
	while (len > 0)
	{
		size_t		k = Min(len, (size_t) FEED_SLICE);

		if (sink->put(sink->core, bytes, k) != XXL_OK)
			xxl_raise_error(sink->error(sink->core), sink->what);
		sink->bytes += k;
		bytes += k;
		len -= k;
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Feed one text or bytea value.  Out-of-line values without compression
 * are fetched slice by slice, so even a value near 1 GB never sits in
 * memory whole; compressed ones have to be decompressed in one piece.
 */
static void
feed_value(XxlCorpusSink *sink, Datum d)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(d);

	if (VARATT_IS_EXTERNAL_ONDISK(v))
	{
		struct varatt_external ptr;

		VARATT_EXTERNAL_GET_POINTER(ptr, v);
		if (!VARATT_EXTERNAL_IS_COMPRESSED(ptr))
		{
			int32		size = VARATT_EXTERNAL_GET_EXTSIZE(ptr);

			for (int32 off = 0; off < size; off += FEED_SLICE)
			{
				int32		len = Min(size - off, FEED_SLICE);
				struct varlena *slice = detoast_attr_slice(v, off, len);

				xxl_corpus_put(sink, VARDATA_ANY(slice), VARSIZE_ANY_EXHDR(slice));
				pfree(slice);
			}
			return;
		}
	}
	v = pg_detoast_datum_packed(v);
	xxl_corpus_put(sink, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
	if (v != (struct varlena *) DatumGetPointer(d))
		pfree(v);
}

/*
 * Open a corpus source and find its column: exactly one (visible) column of
 * type text, varchar or bytea, or a domain over one of them.
 */
XxlInput *
xxl_corpus_open(const char *source, AttrNumber *attno)
{
	XxlInput   *in = xxl_input_open(source);
	TupleDesc	desc = xxl_input_desc(in);
	int			ncols = 0;
	Form_pg_attribute col = NULL;
	Oid			base;

	for (int i = 0; i < desc->natts; i++)
		if (!TupleDescAttr(desc, i)->attisdropped)
		{
			ncols++;
			if (col == NULL)
			{
				col = TupleDescAttr(desc, i);
				*attno = i + 1;
			}
		}
	if (ncols != 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the corpus must have exactly one column, but %s has %d",
						xxl_input_describe(in), ncols),
				 errhint("Select the one text or bytea column: 'SELECT body FROM docs ORDER BY id'.")));
	base = getBaseType(col->atttypid);
	if (base != TEXTOID && base != VARCHAROID && base != BYTEAOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the corpus column \"%s\" has type %s, not text or bytea",
						NameStr(col->attname), format_type_be(col->atttypid)),
				 errhint("Cast it in a query, e.g. 'SELECT %s::text FROM ...'.",
						 quote_identifier(NameStr(col->attname)))));
	return in;
}

/* Read every row of the corpus into sink; closes in.  Returns the rows. */
uint64
xxl_corpus_feed(XxlInput *in, AttrNumber attno, XxlCorpusSink *sink)
{
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext rowcxt = AllocSetContextCreate(cxt, "xxl corpus row", ALLOCSET_DEFAULT_SIZES);
	uint64		rows;

	for (;;)
	{
		TupleTableSlot *slot;
		Datum		d;
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(rowcxt);
		MemoryContextSwitchTo(rowcxt);
		slot = xxl_input_next(in);
		if (slot == NULL)
			break;
		d = slot_getattr(slot, attno, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("row " UINT64_FORMAT " of the corpus is null", xxl_input_rows(in)),
					 errhint("Leave NULLs out (WHERE col IS NOT NULL) or use coalesce(col, '').")));
		feed_value(sink, d);
		MemoryContextSwitchTo(cxt);
	}
	MemoryContextSwitchTo(cxt);
	rows = xxl_input_rows(in);
	xxl_input_close(in);
	MemoryContextDelete(rowcxt);
	return rows;
}


static void
sink_init(XxlCorpusSink *sink, xxl_status (*put) (void *, const void *, size_t),
		  const xxl_error *(*error) (void *), void *core, const char *what)
{
	memset(sink, 0, sizeof(*sink));
	sink->put = put;
	sink->error = error;
	sink->core = core;
	sink->what = what;
}

void
xxl_corpus_sink_sa(XxlCorpusSink *sink, xxl_sa *sa, const char *what)
{
	sink_init(sink, sink_sa_put, sink_sa_error, sa, what);
}

void
xxl_corpus_sink_check(XxlCorpusSink *sink, xxl_sa_checker *checker, const char *what)
{
	sink_init(sink, sink_check_put, sink_check_error, checker, what);
}

void
xxl_corpus_sink_store(XxlCorpusSink *sink, xxl_text_store *store, const char *what)
{
	sink_init(sink, sink_store_put, sink_store_error, store, what);
}
