/*
 * xxl_suffix_sql.c — xxl.suffix_array and xxl.suffix_array_into: a corpus
 * or a bytea value in, (rank, pos) rows out.  See docs/text.md.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/builtins.h"

#include "pg/xxl_error.h"
#include "pg/xxl_text_sql.h"

PG_FUNCTION_INFO_V1(xxl_suffix_array_bytea);
PG_FUNCTION_INFO_V1(xxl_suffix_array_corpus);
PG_FUNCTION_INFO_V1(xxl_suffix_array_into_bytea);
PG_FUNCTION_INFO_V1(xxl_suffix_array_into_corpus);

/* Drain the builder into out; returns the rows written. */
static uint64
sa_emit(XxlOperator *op, XxlTextCore *c, XxlOutput *out, TupleDesc desc)
{
	XxlPairWriter	w;
	uint64		pos;
	int64		rank = 0;
	int			got;
	uint64		n;

	xxl_pair_writer_init(&w, out, desc);
	while ((got = xxl_sa_next(c->sa, &pos)) > 0)
	{
		xxl_pair_writer_put(&w, ++rank, (int64) pos + 1);
		if ((rank & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (got < 0)
		xxl_raise_error(xxl_sa_error(c->sa), op->name);
	n = xxl_output_finish(out);
	op->rows_out = n;
	xxl_operator_end(op);
	return n;
}

/* xxl.suffix_array(data bytea) RETURNS TABLE(rank bigint, pos bigint) */
Datum
xxl_suffix_array_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *data = PG_GETARG_BYTEA_PP(0);
	TupleDesc	desc = xxl_output_caller_desc(fcinfo);
	XxlOutput  *out = xxl_output_to_caller(fcinfo, desc);
	XxlOperator *op = xxl_operator_begin("suffix_array");
	XxlTextCore	   *c = xxl_text_core_begin(op, XXL_SA_POSITIONS);

	xxl_text_core_feed(op, c, NULL, data);
	sa_emit(op, c, out, desc);
	return (Datum) 0;
}

/* xxl.suffix_array(corpus text) RETURNS TABLE(rank bigint, pos bigint) */
Datum
xxl_suffix_array_corpus(PG_FUNCTION_ARGS)
{
	char	   *source = xxl_arg_text(fcinfo, 0, NULL, "corpus");
	TupleDesc	desc = xxl_output_caller_desc(fcinfo);
	XxlOutput  *out = xxl_output_to_caller(fcinfo, desc);
	XxlOperator *op = xxl_operator_begin("suffix_array");
	XxlTextCore	   *c = xxl_text_core_begin(op, XXL_SA_POSITIONS);

	xxl_text_core_feed(op, c, source, NULL);
	sa_emit(op, c, out, desc);
	return (Datum) 0;
}

static int64
suffix_array_into(const char *source, bytea *data, const char *target)
{
	TupleDesc	desc = xxl_sa_rows_desc();
	XxlOutput  *out;
	XxlOperator *op;
	XxlTextCore	   *c;

	/* the target is made first: a name clash is reported before any work */
	out = xxl_output_into_table(target, desc);
	op = xxl_operator_begin("suffix_array");
	c = xxl_text_core_begin(op, XXL_SA_POSITIONS);
	xxl_text_core_feed(op, c, source, data);
	return (int64) sa_emit(op, c, out, desc);
}

/* xxl.suffix_array_into(data bytea, target text) RETURNS bigint */
Datum
xxl_suffix_array_into_bytea(PG_FUNCTION_ARGS)
{
	char	   *target = xxl_arg_text(fcinfo, 1, NULL, "target");

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("data must not be null")));
	PG_RETURN_INT64(suffix_array_into(NULL, PG_GETARG_BYTEA_PP(0), target));
}

/* xxl.suffix_array_into(corpus text, target text) RETURNS bigint */
Datum
xxl_suffix_array_into_corpus(PG_FUNCTION_ARGS)
{
	char	   *source = xxl_arg_text(fcinfo, 0, NULL, "corpus");
	char	   *target = xxl_arg_text(fcinfo, 1, NULL, "target");

	PG_RETURN_INT64(suffix_array_into(source, NULL, target));
}

