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

#include "pg/runtime/runtime.h"
#include "pg/text/text.h"

PG_FUNCTION_INFO_V1(xxl_lcp_into);
PG_FUNCTION_INFO_V1(xxl_repeats);
PG_FUNCTION_INFO_V1(xxl_repeats_into);

/* xxl.lcp_into: the LCP operator alone, fed a stored suffix array. ---------- */

/* The suffix array's (rank, pos) rows, in any order, into the operator. */
static void
feed_sa(XxlOperator *op, XxlTextCore *c, const char *sa_source)
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
	XxlTextWants wants = {.stored = true};
	XxlOperator *op = xxl_operator_begin("lcp");
	XxlTextCore *c = xxl_text_core_open(op, XXL_SA_POSITIONS, source, NULL, &wants);
	TupleDesc	desc = xxl_sa_rows_desc(c->docs != NULL, true);
	XxlOutput  *out;

	/* the target is made before the corpus is read: a name clash costs no work */
	out = xxl_output_into_table(target, desc);
	xxl_text_core_build(op, c);
	feed_sa(op, c, sa_source);
	xxl_operator_phase(op, XXL_PHASE_MERGE);
	if (xxl_lcp_run(c->lcp) != XXL_OK)
		xxl_raise_error(xxl_lcp_error(c->lcp), op->name);
	xxl_operator_phase(op, XXL_PHASE_OUTPUT);
	PG_RETURN_INT64((int64) xxl_text_emit(op, c, out, desc, c->docs != NULL, true));
}

/* xxl.repeats and xxl.repeats_into ----------------------------------------- */

static int32
arg_int(FunctionCallInfo fcinfo, int n, const char *name, int32 least)
{
	int32		v;

	xxl_arg_not_null(fcinfo, n, NULL, name);
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
	xxl_text_docs_check(op, c->docs);
	xxl_int8_writer_flush(&w);
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
