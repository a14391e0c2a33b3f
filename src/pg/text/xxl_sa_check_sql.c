/*
 * xxl_sa_check_sql.c — xxl.suffix_array_check: whether a table or query of
 * (rank, pos) rows is the suffix array of a corpus, and why not.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "pg/runtime/runtime.h"
#include "pg/text/text.h"

PG_FUNCTION_INFO_V1(xxl_suffix_array_check_bytea);
PG_FUNCTION_INFO_V1(xxl_suffix_array_check_corpus);

/* entries handed to the checker at once */
#define CHECK_BATCH 1024

/* Checker ---------------------------------------------------------------------- */

typedef struct CheckCore
{
	xxl_sa_checker *checker;
	bool		ran;
	bool		ok;
	char		why[256];
} CheckCore;

static void
check_core_destroy(void *core)
{
	xxl_sa_check_destroy(((CheckCore *) core)->checker);
}

static void
check_core_collect(void *core, XxlStats *st)
{
	CheckCore  *c = (CheckCore *) core;
	xxl_sa_check_stats s;
	uint64		io;
	/* [T] §5.7: sort(5n) + scan(2n) words of 4 bytes */
	uint64		thesis;

	xxl_sa_check_stats_get(c->checker, &s);
	io = s.bytes_read + s.bytes_written;
	thesis = (2 * 5 + 2) * 4 * s.n;
	st->record_bytes = s.n;
	st->memory_peak = s.memory_peak;
	xxl_text_spread_io(st, s.bytes_read, s.bytes_written);
	st->io.wait_read_ns = s.io_wait_ns;
	st->io.direct = s.io_direct;
	xxl_stats_detail(st, "n", UINT64_FORMAT, s.n);
	xxl_stats_detail(st, "entries", UINT64_FORMAT, s.entries);
	xxl_stats_detail(st, "io_bytes", UINT64_FORMAT, io);
	xxl_stats_detail(st, "io_bytes_per_byte", "%.2f", s.n ? (double) io / s.n : 0.0);
	xxl_stats_detail(st, "thesis_bytes", UINT64_FORMAT, thesis);
	xxl_stats_detail(st, "io_vs_thesis", "%.3f", thesis ? (double) io / thesis : 0.0);
	if (c->ran)
	{
		xxl_stats_detail(st, "verdict", "%s", c->ok ? "true" : "false");
		if (!c->ok)
			xxl_stats_detail_string(st, "reason", c->why);
	}
}

static void
check_flush(XxlOperator *op, CheckCore *c, uint64 *rank, uint64 *pos, int *fill)
{
	if (*fill > 0 && xxl_sa_check_put_ranked(c->checker, rank, pos, *fill) != XXL_OK)
		xxl_raise_error(xxl_sa_check_error(c->checker), op->name);
	*fill = 0;
}

static bool
suffix_array_check(const char *source, bytea *data, const char *sa_source)
{
	XxlOperator *op = xxl_operator_begin("suffix_array_check");
	xxl_sa_config cfg = xxl_text_config(op, XXL_SA_POSITIONS);
	CheckCore  *c = MemoryContextAllocZero(op->cxt, sizeof(CheckCore));
	xxl_error	err;
	XxlCorpusSink	sink;
	XxlSaReader sa;
	int64		rv,
				pv;
	uint64		rank[CHECK_BATCH],
				pos[CHECK_BATCH];
	int			fill = 0;
	bool		ok;

	xxl_error_clear(&err);
	if (data != NULL)
		cfg.size_hint = VARSIZE_ANY_EXHDR(data);
	cfg.report_base = 1;		/* reasons in SQL's 1-based positions */
	c->checker = xxl_sa_check_create(&cfg, &err);
	if (c->checker == NULL)
		xxl_raise_error(&err, op->name);
	xxl_operator_attach(op, c, check_core_destroy, check_core_collect);

	/* the text */
	xxl_corpus_sink_init(&sink, op);
	xxl_corpus_sink_add_check(&sink, c->checker);
	if (source != NULL)
	{
		XxlCorpus	corpus;

		xxl_corpus_open(source, &corpus);
		xxl_corpus_require_single(&corpus, "xxl.suffix_array_check");
		op->rows_in = xxl_corpus_feed(&corpus, &sink);
	}
	else
		xxl_corpus_put(&sink, VARDATA_ANY(data), VARSIZE_ANY_EXHDR(data));

	/* the suffix array, in any order: the ranks come with it */
	xxl_sa_reader_open(&sa, sa_source);
	while (xxl_sa_reader_next(&sa, &rv, &pv))
	{
		if (rv < 1 || pv < 1)
		{
			/* no suffix array has such an entry: the verdict is in */
			snprintf(c->why, sizeof(c->why), "row " UINT64_FORMAT " has %s " INT64_FORMAT
					 ", below 1", xxl_sa_reader_rows(&sa), rv < 1 ? "rank" : "pos",
					 rv < 1 ? rv : pv);
			c->ran = true;
			break;
		}
		rank[fill] = (uint64) rv;
		pos[fill] = (uint64) (pv - 1);
		if (++fill == CHECK_BATCH)
			check_flush(op, c, rank, pos, &fill);
	}
	if (!c->ran)
		check_flush(op, c, rank, pos, &fill);
	xxl_sa_reader_close(&sa);

	xxl_operator_phase(op, XXL_PHASE_MERGE);
	if (!c->ran &&
		xxl_sa_check_run(c->checker, &c->ok, c->why, sizeof(c->why)) != XXL_OK)
		xxl_raise_error(xxl_sa_check_error(c->checker), op->name);
	c->ran = true;
	ok = c->ok;
	op->rows_out = 1;
	xxl_operator_end(op);
	return ok;
}

/* xxl.suffix_array_check(corpus text, sa text) RETURNS boolean */
Datum
xxl_suffix_array_check_corpus(PG_FUNCTION_ARGS)
{
	char	   *source = xxl_arg_text(fcinfo, 0, NULL, "corpus");
	char	   *sa = xxl_arg_text(fcinfo, 1, NULL, "sa");

	PG_RETURN_BOOL(suffix_array_check(source, NULL, sa));
}

/* xxl.suffix_array_check(data bytea, sa text) RETURNS boolean */
Datum
xxl_suffix_array_check_bytea(PG_FUNCTION_ARGS)
{
	char	   *sa = xxl_arg_text(fcinfo, 1, NULL, "sa");

	xxl_arg_not_null(fcinfo, 0, NULL, "data");
	PG_RETURN_BOOL(suffix_array_check(NULL, PG_GETARG_BYTEA_PP(0), sa));
}

