/*
 * xxl_lcp_sql.c — LCP arrays and repeats: xxl.lcp_into (the LCP values of a
 * stored suffix array), xxl.repeats and xxl.repeats_into (repeated
 * substrings of a corpus).  suffix_array_into(..., lcp => true) is in
 * xxl_suffix_sql.c.  See docs/text.md.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "pg/xxl_error.h"
#include "pg/xxl_text_sql.h"

PG_FUNCTION_INFO_V1(xxl_lcp_into);
PG_FUNCTION_INFO_V1(xxl_repeats);
PG_FUNCTION_INFO_V1(xxl_repeats_into);

/* xxl.lcp_into: the LCP operator alone, fed a stored suffix array. ---------- */

typedef struct LcpCore
{
	xxl_lcp    *lcp;
	xxl_docs   *docs;
	size_t		memory;
} LcpCore;

static void
lcp_core_destroy(void *core)
{
	LcpCore    *c = (LcpCore *) core;

	xxl_lcp_destroy(c->lcp);
	c->lcp = NULL;
	xxl_docs_destroy(c->docs);
	c->docs = NULL;
}

static void
lcp_core_collect(void *core, XxlStats *st)
{
	LcpCore    *c = (LcpCore *) core;
	xxl_lcp_stats s;

	if (c->lcp == NULL)
		return;
	xxl_lcp_stats_get(c->lcp, &s);
	st->record_bytes = s.n;
	st->memory_peak = s.memory_peak + (c->docs ? xxl_docs_memory(c->docs) : 0);
	st->memory_limit = c->memory;
	st->io.wait_read_ns = s.io_wait_ns;
	st->io.direct = s.io_direct;
	xxl_text_spread_io(st, s.bytes_read, s.bytes_written);
	xxl_stats_detail(st, "n", UINT64_FORMAT, s.n);
	if (c->docs)
		xxl_stats_detail(st, "documents", UINT64_FORMAT, xxl_docs_count(c->docs));
	xxl_text_lcp_collect(c->lcp, st);
}

/* The suffix array's (rank, pos) rows, in any order, into the operator. */
static void
feed_sa(XxlOperator *op, LcpCore *c, const char *sa_source)
{
	XxlSaReader sa;
	int64		rv,
				pv;

	xxl_sa_reader_open(&sa, sa_source);
	while (xxl_sa_reader_next(&sa, &rv, &pv))
	{
		if (rv < 1 || pv < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("row " UINT64_FORMAT " of the suffix array has %s " INT64_FORMAT ", below 1",
							xxl_sa_reader_rows(&sa), rv < 1 ? "rank" : "pos", rv < 1 ? rv : pv),
					 errhint("Ranks and positions are 1-based, as xxl.suffix_array_into writes them.")));
		if (xxl_lcp_put_ranked(c->lcp, (uint64) rv, (uint64) pv - 1) != XXL_OK)
			xxl_raise_error(xxl_lcp_error(c->lcp), op->name);
	}
	xxl_sa_reader_close(&sa);
}

/* xxl.lcp_into(corpus text, sa text, target text) RETURNS bigint */
Datum
xxl_lcp_into(PG_FUNCTION_ARGS)
{
	char	   *source = xxl_arg_text(fcinfo, 0, NULL, "corpus");
	char	   *sa_source = xxl_arg_text(fcinfo, 1, NULL, "sa");
	char	   *target = xxl_arg_text(fcinfo, 2, NULL, "target");
	XxlOperator *op = xxl_operator_begin("lcp");
	LcpCore    *c = MemoryContextAllocZero(op->cxt, sizeof(LcpCore));
	xxl_resources res = xxl_operator_resources(op);
	size_t		memory = res.memory;
	xxl_lcp_config cfg;
	xxl_error	err;
	XxlCorpus	corpus;
	XxlCorpusSink sink;
	TupleDesc	desc;
	XxlOutput  *out;
	XxlInt8Writer w;
	uint64		pos,
				lcp;
	int64		rank = 0;
	int			got;

	xxl_error_clear(&err);
	c->memory = memory;
	xxl_operator_attach(op, c, lcp_core_destroy, lcp_core_collect);
	xxl_corpus_open(source, &corpus);
	if (corpus.id_att != 0)
	{
		c->docs = xxl_docs_create(memory / 8, &err);
		if (c->docs == NULL)
			xxl_raise_error(&err, op->name);
		memory -= memory / 8;
	}
	cfg = xxl_text_lcp_config(op, memory, c->docs);
	c->lcp = xxl_lcp_create(&cfg, &err);
	if (c->lcp == NULL)
		xxl_raise_error(&err, op->name);
	desc = xxl_sa_rows_desc(c->docs != NULL, true);
	/* the target is made before the corpus is read: a name clash costs no work */
	out = xxl_output_into_table(target, desc);

	xxl_corpus_sink_init(&sink, op->name);
	xxl_corpus_sink_add_lcp(&sink, c->lcp);
	sink.docs = c->docs;
	op->rows_in = xxl_corpus_feed(&corpus, &sink);
	feed_sa(op, c, sa_source);
	xxl_operator_phase(op, XXL_PHASE_MERGE);
	if (xxl_lcp_run(c->lcp) != XXL_OK)
		xxl_raise_error(xxl_lcp_error(c->lcp), op->name);
	xxl_operator_phase(op, XXL_PHASE_OUTPUT);

	xxl_int8_writer_init(&w, out, desc);
	while ((got = xxl_lcp_next(c->lcp, &pos, &lcp)) > 0)
	{
		int64		v[5];
		int			k = 2;

		v[0] = ++rank;
		v[1] = (int64) pos + 1;
		if (c->docs)
		{
			xxl_text_doc_of(c->docs, pos, &v[2], &v[3]);
			k = 4;
		}
		v[k] = (int64) lcp;
		xxl_int8_writer_put(&w, v, NULL);
		if ((rank & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (got < 0)
		xxl_raise_error(xxl_lcp_error(c->lcp), op->name);
	op->rows_out = xxl_output_finish(out);
	xxl_operator_end(op);
	PG_RETURN_INT64((int64) op->rows_out);
}

/* xxl.repeats and xxl.repeats_into ----------------------------------------- */

static int32
arg_int(FunctionCallInfo fcinfo, int n, const char *name, int32 least)
{
	int32		v;

	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
	v = PG_GETARG_INT32(n);
	if (v < least)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be at least %d, not %d", name, least, v)));
	return v;
}

/* (doc_id, doc_offset, length, occurrences) rows; doc_id is NULL for one text. */
static TupleDesc
repeats_desc(void)
{
	TupleDesc	desc = CreateTemplateTupleDesc(4);

	TupleDescInitEntry(desc, 1, "doc_id", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 2, "doc_offset", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 3, "length", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 4, "occurrences", INT8OID, -1, 0);
	return desc;
}

static uint64
repeats_run(const char *source, int32 min_length, int32 min_count, const char *target,
			FunctionCallInfo fcinfo)
{
	XxlTextWants wants = {.min_length = (uint64) min_length,.min_count = (uint64) min_count};
	XxlOperator *op = xxl_operator_begin("repeats");
	TupleDesc	desc = target ? repeats_desc() : xxl_output_caller_desc(fcinfo);
	XxlOutput  *out = target ? xxl_output_into_table(target, desc) : xxl_output_to_caller(fcinfo, desc);
	XxlTextCore *c = xxl_text_core_run(op, XXL_SA_POSITIONS, source, NULL, &wants);
	XxlInt8Writer w;
	bool		nulls[4] = {c->docs == NULL, false, false, false};
	uint64		start,
				length,
				occ,
				k = 0;
	int			got;

	xxl_int8_writer_init(&w, out, desc);
	while ((got = xxl_lcp_next_repeat(c->lcp, &start, &length, &occ)) > 0)
	{
		int64		v[4] = {0, (int64) start + 1, (int64) length, (int64) occ};

		if (c->docs)
			xxl_text_doc_of(c->docs, start, &v[0], &v[1]);
		xxl_int8_writer_put(&w, v, nulls);
		if ((++k & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (got < 0)
		xxl_raise_error(xxl_lcp_error(c->lcp), op->name);
	op->rows_out = xxl_output_finish(out);
	xxl_operator_end(op);
	return op->rows_out;
}

/*
 * xxl.repeats(corpus text, min_length integer, min_count integer DEFAULT 2)
 *   RETURNS TABLE(doc_id bigint, doc_offset bigint, length bigint, occurrences bigint)
 */
Datum
xxl_repeats(PG_FUNCTION_ARGS)
{
	char	   *source = xxl_arg_text(fcinfo, 0, NULL, "corpus");
	int32		min_length = arg_int(fcinfo, 1, "min_length", 1);
	int32		min_count = arg_int(fcinfo, 2, "min_count", 2);

	repeats_run(source, min_length, min_count, NULL, fcinfo);
	return (Datum) 0;
}

/*
 * xxl.repeats_into(corpus text, target text, min_length integer,
 *                  min_count integer DEFAULT 2) RETURNS bigint
 */
Datum
xxl_repeats_into(PG_FUNCTION_ARGS)
{
	char	   *source = xxl_arg_text(fcinfo, 0, NULL, "corpus");
	char	   *target = xxl_arg_text(fcinfo, 1, NULL, "target");
	int32		min_length = arg_int(fcinfo, 2, "min_length", 1);
	int32		min_count = arg_int(fcinfo, 3, "min_count", 2);

	PG_RETURN_INT64((int64) repeats_run(source, min_length, min_count, target, fcinfo));
}
