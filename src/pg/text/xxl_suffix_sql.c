/*
 * xxl_suffix_sql.c — xxl.suffix_array and xxl.suffix_array_into: a corpus
 * or a bytea value in, (rank, pos) rows out, with the document and offset
 * of each suffix for a corpus of documents and its LCP value on request.
 * See docs/text.md.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/builtins.h"

#include "pg/runtime/runtime.h"
#include "pg/text/text.h"

PG_FUNCTION_INFO_V1(xxl_suffix_array_bytea);
PG_FUNCTION_INFO_V1(xxl_suffix_array_corpus);
PG_FUNCTION_INFO_V1(xxl_suffix_array_into_bytea);
PG_FUNCTION_INFO_V1(xxl_suffix_array_into_corpus);

/* xxl.suffix_array(data bytea) RETURNS TABLE(rank bigint, pos bigint) */
Datum
xxl_suffix_array_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *data = PG_GETARG_BYTEA_PP(0);
	TupleDesc	desc = xxl_output_caller_desc(fcinfo);
	XxlOutput  *out = xxl_output_to_caller(fcinfo, desc);
	XxlOperator *op = xxl_operator_begin("suffix_array");
	XxlTextCore *c = xxl_text_core_run(op, XXL_SA_POSITIONS, NULL, data, NULL);

	xxl_text_emit(op, c, out, desc, false, false);
	return (Datum) 0;
}

/*
 * xxl.suffix_array(corpus text)
 *   RETURNS TABLE(rank bigint, pos bigint, doc_id bigint, doc_offset bigint)
 */
Datum
xxl_suffix_array_corpus(PG_FUNCTION_ARGS)
{
	char	   *source = xxl_arg_text(fcinfo, 0, NULL, "corpus");
	TupleDesc	desc = xxl_output_caller_desc(fcinfo);
	XxlOutput  *out = xxl_output_to_caller(fcinfo, desc);
	XxlOperator *op = xxl_operator_begin("suffix_array");
	XxlTextCore *c = xxl_text_core_run(op, XXL_SA_POSITIONS, source, NULL, NULL);

	xxl_text_emit(op, c, out, desc, desc->natts >= 4, false);
	return (Datum) 0;
}

static int64
suffix_array_into(const char *source, bytea *data, const char *target, bool lcp)
{
	XxlTextWants wants = {.lcp = lcp};
	XxlOperator *op = xxl_operator_begin("suffix_array");
	XxlTextCore *c = xxl_text_core_open(op, XXL_SA_POSITIONS, source, data, &wants);
	TupleDesc	desc = xxl_sa_rows_desc(c->docs != NULL, lcp);
	XxlOutput  *out;

	/* the target is made before the corpus is read: a name clash costs no work */
	out = xxl_output_into_table(target, desc);
	xxl_text_core_build(op, c);
	return (int64) xxl_text_emit(op, c, out, desc, c->docs != NULL, lcp);
}

static bool
arg_lcp(FunctionCallInfo fcinfo)
{
	if (PG_NARGS() < 3)
		return false;
	xxl_arg_not_null(fcinfo, 2, NULL, "lcp");
	return PG_GETARG_BOOL(2);
}

/* xxl.suffix_array_into(data bytea, target text, lcp boolean DEFAULT false) RETURNS bigint */
Datum
xxl_suffix_array_into_bytea(PG_FUNCTION_ARGS)
{
	char	   *target = xxl_arg_text(fcinfo, 1, NULL, "target");

	xxl_arg_not_null(fcinfo, 0, NULL, "data");
	PG_RETURN_INT64(suffix_array_into(NULL, PG_GETARG_BYTEA_PP(0), target, arg_lcp(fcinfo)));
}

/* xxl.suffix_array_into(corpus text, target text, lcp boolean DEFAULT false) RETURNS bigint */
Datum
xxl_suffix_array_into_corpus(PG_FUNCTION_ARGS)
{
	char	   *source = xxl_arg_text(fcinfo, 0, NULL, "corpus");
	char	   *target = xxl_arg_text(fcinfo, 1, NULL, "target");

	PG_RETURN_INT64(suffix_array_into(source, NULL, target, arg_lcp(fcinfo)));
}
