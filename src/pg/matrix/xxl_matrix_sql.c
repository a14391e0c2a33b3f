/*
 * xxl_matrix_sql.c — the SQL functions over the matrix product
 * (src/core/matrix/xxl_matrix.h): xxl.matmul(a, b, transpose_a) returns
 * the entries of A·B (Aᵀ·B) as rows (i, j, v), xxl.matmul_into writes them
 * into a new table.  The destination is opened first, each matrix read
 * through the entry reader (matrix.h) into the engine, the engine run
 * under an XxlOperator and its rows written to one XxlOutput.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"

#include "core/matrix/xxl_matrix.h"
#include "pg/io/io.h"
#include "pg/matrix/matrix.h"
#include "pg/runtime/runtime.h"

/* last_stats()'s input bytes: an entry is two 8-byte indices and an 8-byte value */
#define ENTRY_INPUT_BYTES 24

static void
matrix_destroy(void *core)
{
	xxl_matrix_destroy((xxl_matrix *) core);
}

static void
matrix_collect(void *core, XxlStats *st)
{
	xxl_matrix_stats s;
	uint64		entries;

	xxl_matrix_stats_get((xxl_matrix *) core, &s);
	entries = s.entries_a + s.entries_b;
	xxl_stats_engine(st, entries, entries * ENTRY_INPUT_BYTES, s.memory_peak, s.memory_limit, &s.io);
	st->runs = s.result_runs;
	st->merge_passes = s.result_passes;
	xxl_stats_detail(st, "path", "\"%s\"", s.path);
	xxl_stats_detail(st, "spilled", "%s", s.in_memory ? "false" : "true");
	xxl_stats_detail(st, "entries_a", UINT64_FORMAT, s.entries_a);
	xxl_stats_detail(st, "entries_b", UINT64_FORMAT, s.entries_b);
	xxl_stats_detail(st, "zero_entries", UINT64_FORMAT, s.zeros);
	xxl_stats_detail(st, "inner_indices", UINT64_FORMAT, s.inner);
	xxl_stats_detail(st, "partial_products", UINT64_FORMAT, s.products);
	xxl_stats_detail(st, "folded", UINT64_FORMAT, s.folded);
	xxl_stats_detail(st, "zero_results", UINT64_FORMAT, s.zero_results);
	xxl_stats_detail(st, "largest_row_of_b", UINT64_FORMAT, s.largest_row);
	xxl_stats_detail(st, "pieces", UINT64_FORMAT, s.pieces);
	if (s.tile > 0)
	{
		xxl_stats_detail(st, "tile", UINT64_FORMAT, s.tile);
		xxl_stats_detail(st, "tile_products", UINT64_FORMAT, s.tiles);
	}
	xxl_stats_detail(st, "spooled_rows", UINT64_FORMAT, s.spooled_rows);
	xxl_stats_detail(st, "sorts", UINT64_FORMAT, s.sorts);
	xxl_stats_detail(st, "bytes_read", UINT64_FORMAT, s.bytes_read);
	xxl_stats_detail(st, "bytes_written", UINT64_FORMAT, s.bytes_written);
	xxl_stats_detail(st, "join_ms", "%.3f", s.join_ns / 1e6);
	xxl_stats_detail(st, "run_ms", "%.3f", s.run_ns / 1e6);
}

/* Whether matrix b's values are of an integer type (its source opened just to see). */
static bool
values_integer(const char *source, const char *fname, const char *name)
{
	XxlEntryReader *r = xxl_entries_open(source, fname, name);
	bool		integer = xxl_entries_integer(r);

	xxl_entries_close(r);
	return integer;
}

/* Every entry of one matrix into the engine. */
static void
put_matrix(xxl_matrix *m, XxlOperator *op, XxlEntryReader *r, xxl_matrix_side side, bool integer,
		   const char *fname)
{
	XxlMatrixEntry batch[256];
	int			n;

	while ((n = xxl_entries_read(r, batch, lengthof(batch))) > 0)
	{
		op->rows_in += n;
		for (int k = 0; k < n; k++)
		{
			xxl_matrix_value v;

			if (integer)
				v.i = batch[k].vi;
			else
				v.d = xxl_entries_integer(r) ? (double) batch[k].vi : batch[k].vd;
			if (xxl_matrix_put(m, side, batch[k].i, batch[k].j, v) != XXL_OK)
				xxl_raise_error(xxl_matrix_error(m), fname);
		}
	}
}

/* One call: the rows written. */
static uint64
run_matmul(FunctionCallInfo fcinfo, bool into)
{
	const char *fname = into ? "xxl.matmul_into" : "xxl.matmul";
	const char *a = xxl_arg_text(fcinfo, 0, fname, "a");
	const char *b = xxl_arg_text(fcinfo, 1, fname, "b");
	const char *target = into ? xxl_arg_text(fcinfo, 2, fname, "target") : NULL;
	int			targ = into ? 3 : 2;
	static const char *const cols[] = {"i", "j", "v"};
	TupleDesc	desc;
	XxlOutput  *out;
	XxlOperator *op;
	xxl_matrix_config cfg;
	XxlEntryReader *ra;
	xxl_matrix *m;
	xxl_error	err;
	Datum		values[3];
	bool		isnull[3] = {false, false, false};
	int64		i,
				j;
	double		v;
	int			got;
	uint64		rows;

	xxl_arg_not_null(fcinfo, targ, fname, "transpose_a");
	memset(&cfg, 0, sizeof(cfg));
	cfg.transpose_a = PG_GETARG_BOOL(targ);
	cfg.method = (xxl_matrix_method) xxl_matmul_method;

	/* the target first: a name taken is said before any work is done */
	desc = CreateTemplateTupleDesc(3);
	TupleDescInitEntry(desc, 1, cols[0], INT8OID, -1, 0);
	TupleDescInitEntry(desc, 2, cols[1], INT8OID, -1, 0);
	TupleDescInitEntry(desc, 3, cols[2], FLOAT8OID, -1, 0);
	out = target != NULL ? xxl_output_into_table(target, desc) :
		xxl_output_to_caller(fcinfo, xxl_output_caller_desc(fcinfo));

	op = xxl_operator_begin("matmul");
	xxl_operator_check_memory(op, fname, xxl_matrix_min_memory());
	/* integer values multiply exactly when both matrices have them */
	cfg.integer = values_integer(b, fname, "b");
	ra = xxl_entries_open(a, fname, "a");
	cfg.integer &= xxl_entries_integer(ra);
	cfg.res = xxl_operator_resources(op);
	cfg.expected_a = xxl_entries_estimate(ra);
	xxl_error_clear(&err);
	m = xxl_matrix_create(&cfg, &err);
	if (m == NULL)
		xxl_raise_error(&err, fname);
	xxl_operator_attach(op, m, matrix_destroy, matrix_collect);
	xxl_operator_describe(op, NULL, cfg.expected_a);

	put_matrix(m, op, ra, XXL_MATRIX_A, cfg.integer, fname);
	xxl_entries_close(ra);
	ra = xxl_entries_open(b, fname, "b");
	put_matrix(m, op, ra, XXL_MATRIX_B, cfg.integer, fname);
	xxl_entries_close(ra);

	xxl_operator_phase(op, XXL_PHASE_MERGE);
	if (xxl_matrix_run(m) != XXL_OK)
		xxl_raise_error(xxl_matrix_error(m), fname);

	xxl_operator_phase(op, XXL_PHASE_OUTPUT);
	if (target == NULL)
		xxl_output_caller_memory(out, cfg.res.memory, xxl_matrix_memory_held(m));
	while ((got = xxl_matrix_next(m, &i, &j, &v)) > 0)
	{
		values[0] = Int64GetDatum(i);
		values[1] = Int64GetDatum(j);
		values[2] = Float8GetDatum(v);
		xxl_output_put_values(out, values, isnull);
		op->rows_out++;
		CHECK_FOR_INTERRUPTS();
	}
	if (got < 0)
		xxl_raise_error(xxl_matrix_error(m), fname);
	rows = op->rows_out = xxl_output_finish(out);
	xxl_operator_end(op);
	return rows;
}

/* xxl.matmul(a text, b text, transpose_a boolean) RETURNS TABLE(i, j, v) */
PG_FUNCTION_INFO_V1(xxl_matmul);
Datum
xxl_matmul(PG_FUNCTION_ARGS)
{
	run_matmul(fcinfo, false);
	return (Datum) 0;
}

/* xxl.matmul_into(a text, b text, target text, transpose_a boolean) RETURNS bigint */
PG_FUNCTION_INFO_V1(xxl_matmul_into);
Datum
xxl_matmul_into(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) run_matmul(fcinfo, true));
}
