/*
 * xxl_corpus.c — a corpus (see text.h): its text or bytea column
 * (and id column, for documents) found, its values streamed slice by slice
 * into one or two text engines, its documents recorded.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "pg/runtime/runtime.h"
#include "pg/text/text.h"

/* bytes of a value fed to the engine at once (and of a detoasted slice) */
#define FEED_SLICE (1024 * 1024)


static xxl_status
sink_sa_put(void *core, const void *bytes, size_t len)
{
	return xxl_sa_put((xxl_sa *) core, bytes, len);
}

static xxl_status
sink_sa_end_doc(void *core)
{
	return xxl_sa_end_doc((xxl_sa *) core);
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

static xxl_status
sink_lcp_put(void *core, const void *bytes, size_t len)
{
	return xxl_lcp_put_text((xxl_lcp *) core, bytes, len);
}

static const xxl_error *
sink_lcp_error(void *core)
{
	return xxl_lcp_error((xxl_lcp *) core);
}

void
xxl_corpus_put(XxlCorpusSink *sink, const char *bytes, size_t len)
{
	while (len > 0)
	{
		size_t		k = Min(len, (size_t) FEED_SLICE);

		for (int t = 0; t < sink->ntargets; t++)
			if (sink->target[t].put(sink->target[t].core, bytes, k) != XXL_OK)
				xxl_raise_error(sink->target[t].error(sink->target[t].core), sink->op->name);
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

static bool
is_body_type(Oid type)
{
	Oid			base = getBaseType(type);

	return base == TEXTOID || base == VARCHAROID || base == BYTEAOID;
}

/*
 * Open a corpus source and find its columns: exactly one (visible) column
 * of type text, varchar or bytea (or a domain over one of them), or two:
 * an integer id, then such a body.
 */
void
xxl_corpus_open(const char *source, XxlCorpus *corpus)
{
	XxlInput   *in = xxl_input_open(source);
	TupleDesc	desc = xxl_input_desc(in);
	int			ncols = 0;
	Form_pg_attribute col[2] = {NULL, NULL};
	AttrNumber	att[2] = {0, 0};
	Form_pg_attribute body;

	for (int i = 0; i < desc->natts; i++)
		if (!TupleDescAttr(desc, i)->attisdropped)
		{
			if (ncols < 2)
			{
				col[ncols] = TupleDescAttr(desc, i);
				att[ncols] = i + 1;
			}
			ncols++;
		}
	if (ncols != 1 && ncols != 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the corpus must have one column (the text) or two (an id and the text), but %s has %d",
						xxl_input_describe(in), ncols),
				 errhint("Select the text column, with an id before it for documents: 'SELECT id, body FROM docs ORDER BY id'.")));
	memset(corpus, 0, sizeof(*corpus));
	corpus->in = in;
	if (ncols == 2)
	{
		if (!xxl_is_int_type(getBaseType(col[0]->atttypid)))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("the corpus id column \"%s\" has type %s, not an integer type",
							NameStr(col[0]->attname), format_type_be(col[0]->atttypid)),
					 errhint("A corpus of documents is (id bigint, body text or bytea).")));
		corpus->id_att = att[0];
		corpus->id_type = getBaseType(col[0]->atttypid);
		corpus->body_att = att[1];
		body = col[1];
	}
	else
	{
		corpus->body_att = att[0];
		body = col[0];
	}
	if (!is_body_type(body->atttypid))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the corpus column \"%s\" has type %s, not text or bytea",
						NameStr(body->attname), format_type_be(body->atttypid)),
				 errhint("Cast it in a query, e.g. 'SELECT %s::text FROM ...'.",
						 quote_identifier(NameStr(body->attname)))));
}

/* Refuse a corpus of documents where an operator takes one text only. */
void
xxl_corpus_require_single(const XxlCorpus *corpus, const char *func)
{
	if (corpus->id_att != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not take a corpus of documents (id, body)", func),
				 errhint("Pass the body column alone: 'SELECT body FROM docs ORDER BY id'.")));
}

/* Read every row of the corpus into sink; closes its input.  Returns the rows. */
uint64
xxl_corpus_feed(XxlCorpus *corpus, XxlCorpusSink *sink)
{
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext rowcxt = AllocSetContextCreate(cxt, "xxl corpus row", ALLOCSET_DEFAULT_SIZES);
	XxlInput   *in = corpus->in;
	uint64		rows;

	xxl_operator_describe(sink->op, NULL, xxl_input_expected_rows(in));
	for (;;)
	{
		TupleTableSlot *slot;
		Datum		d;
		bool		isnull;
		int64		id = 0;
		uint64		before = sink->bytes;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(rowcxt);
		MemoryContextSwitchTo(rowcxt);
		slot = xxl_input_next(in);
		if (slot == NULL)
			break;
		if (corpus->id_att != 0)
		{
			d = slot_getattr(slot, corpus->id_att, &isnull);
			if (isnull)
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("row " UINT64_FORMAT " of the corpus has a null id", xxl_input_rows(in)),
						 errhint("Every document needs an id.")));
			id = xxl_int_datum(d, corpus->id_type);
		}
		d = slot_getattr(slot, corpus->body_att, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("row " UINT64_FORMAT " of the corpus is null", xxl_input_rows(in)),
					 errhint("Leave NULLs out (WHERE col IS NOT NULL) or use coalesce(col, '').")));
		feed_value(sink, d);
		/* what xxl.progress shows while the text goes in */
		sink->op->rows_in = xxl_input_rows(in);
		sink->op->progress.bytes = sink->bytes;
		if (sink->docs)
		{
			if (xxl_docs_add(sink->docs, id, sink->bytes - before) != XXL_OK)
				xxl_raise_error(xxl_docs_error(sink->docs), sink->op->name);
			for (int t = 0; t < sink->ntargets; t++)
				if (sink->target[t].end_doc &&
					sink->target[t].end_doc(sink->target[t].core) != XXL_OK)
					xxl_raise_error(sink->target[t].error(sink->target[t].core), sink->op->name);
		}
		MemoryContextSwitchTo(cxt);
	}
	MemoryContextSwitchTo(cxt);
	rows = xxl_input_rows(in);
	xxl_input_close(in);
	corpus->in = NULL;
	MemoryContextDelete(rowcxt);
	if (sink->docs && xxl_docs_finish(sink->docs) != XXL_OK)
		xxl_raise_error(xxl_docs_error(sink->docs), sink->op->name);
	return rows;
}

void
xxl_corpus_sink_init(XxlCorpusSink *sink, XxlOperator *op)
{
	memset(sink, 0, sizeof(*sink));
	sink->op = op;
}

static void
sink_add(XxlCorpusSink *sink, xxl_status (*put) (void *, const void *, size_t),
		 xxl_status (*end_doc) (void *), const xxl_error *(*error) (void *), void *core)
{
	XxlCorpusTarget *t = &sink->target[sink->ntargets++];

	Assert(sink->ntargets <= XXL_CORPUS_TARGETS);
	t->put = put;
	t->end_doc = end_doc;
	t->error = error;
	t->core = core;
}

void
xxl_corpus_sink_add_sa(XxlCorpusSink *sink, xxl_sa *sa, bool separated)
{
	sink_add(sink, sink_sa_put, separated ? sink_sa_end_doc : NULL, sink_sa_error, sa);
}

void
xxl_corpus_sink_add_check(XxlCorpusSink *sink, xxl_sa_checker *checker)
{
	sink_add(sink, sink_check_put, NULL, sink_check_error, checker);
}

void
xxl_corpus_sink_add_store(XxlCorpusSink *sink, xxl_text_store *store)
{
	sink_add(sink, sink_store_put, NULL, sink_store_error, store);
}

void
xxl_corpus_sink_add_lcp(XxlCorpusSink *sink, xxl_lcp *lcp)
{
	sink_add(sink, sink_lcp_put, NULL, sink_lcp_error, lcp);
}
