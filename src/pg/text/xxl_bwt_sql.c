/*
 * xxl_bwt_sql.c — the Burrows–Wheeler transform: xxl.bwt, xxl.bwt_into and
 * xxl.bwt_inverse.  See docs/text.md.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "pg/runtime/runtime.h"
#include "pg/text/text.h"

PG_FUNCTION_INFO_V1(xxl_bwt_bytea);
PG_FUNCTION_INFO_V1(xxl_bwt_bytea_v2);
PG_FUNCTION_INFO_V1(xxl_bwt_into_bytea);
PG_FUNCTION_INFO_V1(xxl_bwt_into_corpus);
PG_FUNCTION_INFO_V1(xxl_bwt_inverse_sql);

/* bytes per row of a BWT table */
#define BWT_CHUNK (1024 * 1024)

/* BWT ------------------------------------------------------------------------ */

/* Build the BWT of a corpus or value; the bytes are read with xxl_sa_bwt_read. */
static XxlTextCore *
bwt_build(XxlOperator *op, const char *source, bytea *data)
{
	return xxl_text_core_run(op, XXL_SA_BWT, source, data, NULL);
}

/* The transform of data in memory, and its primary index. */
static bytea *
bwt_of(bytea *data, int64 *primary)
{
	size_t		n = VARSIZE_ANY_EXHDR(data);
	bytea	   *result = palloc(VARHDRSZ + n);
	XxlOperator *op = xxl_operator_begin("bwt");
	XxlTextCore	   *c = bwt_build(op, NULL, data);
	size_t		have = 0;
	int			got;

	for (;;)
	{
		size_t		len;

		got = xxl_sa_bwt_read(c->sa, VARDATA(result) + have, n - have, &len);
		if (got <= 0)
			break;
		have += len;
		if (have == n)
		{
			/* read the end, so the engine releases its spool */
			got = xxl_sa_bwt_read(c->sa, VARDATA(result) + have, 0, &len);
			break;
		}
		CHECK_FOR_INTERRUPTS();
	}
	if (got < 0)
		xxl_raise_error(xxl_sa_error(c->sa), op->name);
	if (have != n)
		elog(ERROR, "xxl bwt: %zu bytes of BWT for %zu bytes of text", have, n);
	SET_VARSIZE(result, VARHDRSZ + n);
	*primary = (int64) xxl_sa_bwt_primary(c->sa);
	op->rows_out = 1;
	xxl_operator_end(op);
	return result;
}

/* 0.1's xxl.bwt(data bytea) RETURNS bytea, for databases not yet updated */
Datum
xxl_bwt_bytea(PG_FUNCTION_ARGS)
{
	int64		primary;

	PG_RETURN_BYTEA_P(bwt_of(PG_GETARG_BYTEA_PP(0), &primary));
}

/* xxl.bwt(data bytea, OUT bwt bytea, OUT primary_index bigint) */
Datum
xxl_bwt_bytea_v2(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[2];
	bool		isnull[2] = {false, false};
	int64		primary;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "xxl.bwt must return a row");
	desc = BlessTupleDesc(desc);
	values[0] = PointerGetDatum(bwt_of(PG_GETARG_BYTEA_PP(0), &primary));
	values[1] = Int64GetDatum(primary);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, isnull)));
}

static int64
bwt_into(const char *source, bytea *data, const char *target)
{
	TupleDesc	desc = CreateTemplateTupleDesc(2);
	XxlOutput  *out;
	XxlOperator *op;
	XxlTextCore	   *c;
	bytea	   *chunk = palloc(VARHDRSZ + BWT_CHUNK);
	int64		ordinal = 0;
	int64		primary;
	int			got;

	TupleDescInitEntry(desc, 1, "ordinal", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 2, "chunk", BYTEAOID, -1, 0);
	out = xxl_output_into_table(target, desc);
	op = xxl_operator_begin("bwt");
	c = bwt_build(op, source, data);
	primary = (int64) xxl_sa_bwt_primary(c->sa);
	for (;;)
	{
		size_t		len = 0,
					part;
		Datum		values[2];
		bool		nulls[2] = {false, false};

		got = 1;
		/* fill a whole chunk: the engine hands out pieces of its blocks */
		while (len < BWT_CHUNK &&
			   (got = xxl_sa_bwt_read(c->sa, VARDATA(chunk) + len, BWT_CHUNK - len, &part)) > 0)
			len += part;
		if (got < 0)
			xxl_raise_error(xxl_sa_error(c->sa), op->name);
		if (len == 0)
			break;
		SET_VARSIZE(chunk, VARHDRSZ + len);
		values[0] = Int64GetDatum(++ordinal);
		values[1] = PointerGetDatum(chunk);
		xxl_output_put_values(out, values, nulls);
		CHECK_FOR_INTERRUPTS();
		if (got == 0)
			break;
	}
	op->rows_out = xxl_output_finish(out);
	xxl_operator_end(op);
	return primary;
}

/* xxl.bwt_into(data bytea, target text) RETURNS bigint: the primary index */
Datum
xxl_bwt_into_bytea(PG_FUNCTION_ARGS)
{
	char	   *target = xxl_arg_text(fcinfo, 1, NULL, "target");

	xxl_arg_not_null(fcinfo, 0, NULL, "data");
	PG_RETURN_INT64(bwt_into(NULL, PG_GETARG_BYTEA_PP(0), target));
}

/* xxl.bwt_into(corpus text, target text) RETURNS bigint: the primary index */
Datum
xxl_bwt_into_corpus(PG_FUNCTION_ARGS)
{
	char	   *source = xxl_arg_text(fcinfo, 0, NULL, "corpus");
	char	   *target = xxl_arg_text(fcinfo, 1, NULL, "target");

	PG_RETURN_INT64(bwt_into(source, NULL, target));
}

/* xxl.bwt_inverse(bwt bytea, primary_index bigint) RETURNS bytea (in memory) */
Datum
xxl_bwt_inverse_sql(PG_FUNCTION_ARGS)
{
	bytea	   *bwt = PG_GETARG_BYTEA_PP(0);
	int64		primary = PG_GETARG_INT64(1);
	uint64		n = VARSIZE_ANY_EXHDR(bwt);
	size_t		need = (size_t) (n + 1) * sizeof(uint64) + n;
	bytea	   *result;
	xxl_error	err;

	if (need > xxl_memory_bytes())
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("xxl.bwt_inverse needs %zu bytes of memory for " UINT64_FORMAT
						" bytes, more than xxl.memory", need, n),
				 errhint("The inverse transform runs in memory (9 bytes per byte): raise xxl.memory.")));
	if (primary < 0 || (n > 0 && (primary < 1 || (uint64) primary > n)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("primary index " INT64_FORMAT " is out of range 1.." UINT64_FORMAT,
						primary, n)));
	result = palloc(VARHDRSZ + n);
	xxl_error_clear(&err);
	if (xxl_bwt_inverse((const unsigned char *) VARDATA_ANY(bwt), n, (uint64) primary,
						(unsigned char *) VARDATA(result), &err) != XXL_OK)
		xxl_raise_error(&err, "xxl bwt_inverse");
	SET_VARSIZE(result, VARHDRSZ + n);
	PG_RETURN_BYTEA_P(result);
}

