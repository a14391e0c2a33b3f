/*
 * xxl_text_core.c — the suffix-array builder as an operator's engine object
 * (see xxl_text_sql.h): its configuration, its statistics for last_stats(),
 * and text in followed by the build.
 */
#include "postgres.h"

#include "pg/xxl_error.h"
#include "pg/xxl_text_sql.h"

/* The engine's configuration under the operator's settings. */
xxl_sa_config
xxl_text_config(XxlOperator *op, xxl_sa_mode mode)
{
	xxl_sa_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.res = xxl_operator_resources(op);
	cfg.mode = mode;
	return cfg;
}

/* Spread a total over the operator's disks (the engine counts totals only). */
void
xxl_text_spread_io(XxlStats *st, uint64 read, uint64 written)
{
	int			nd = Max(st->ndisks, 1);

	st->io.ndisks = nd;
	for (int i = 0; i < nd; i++)
	{
		st->io.disk[i].bytes_read = read / nd + (i == 0 ? read % nd : 0);
		st->io.disk[i].bytes_written = written / nd + (i == 0 ? written % nd : 0);
	}
}


/* The suffix-array builder as an operator's engine object ------------------- */

static void
sa_core_destroy(void *core)
{
	xxl_sa_destroy(((XxlTextCore *) core)->sa);
}

/*
 * A JSON array of one number per DC3 level.  xxl_stats_detail keeps values
 * of up to 255 characters, so a deep recursion shows its first levels only
 * (the number of levels is in "levels").
 */
static void
detail_array(XxlStats *st, const char *key, int levels, const xxl_sa_level_stats *level,
			 bool io)
{
	char		buf[256];
	int			len = 0;

	buf[len++] = '[';
	for (int i = 0; i < levels && i < XXL_SA_MAX_LEVELS; i++)
	{
		char		num[32];
		int			k = snprintf(num, sizeof(num), "%s" UINT64_FORMAT, i ? ", " : "",
								 io ? level[i].io_bytes : level[i].n);

		if (len + k + 2 > (int) sizeof(buf) - 1)
			break;
		memcpy(buf + len, num, k);
		len += k;
	}
	buf[len++] = ']';
	buf[len] = '\0';
	xxl_stats_detail(st, key, "%s", buf);
}

static void
sa_core_collect(void *core, XxlStats *st)
{
	XxlTextCore	   *c = (XxlTextCore *) core;
	xxl_sa_stats s;
	uint64		io;

	xxl_sa_stats_get(c->sa, &s);
	io = s.bytes_read + s.bytes_written;
	st->record_bytes = s.n;
	st->runs = s.runs;
	st->merge_passes = s.max_merge_passes;
	st->memory_peak = s.memory_peak;
	st->memory_limit = s.memory_limit;
	xxl_text_spread_io(st, s.bytes_read, s.bytes_written);
	st->io.wait_read_ns = s.io_wait_ns;	/* reads and writes together */
	st->io.direct = s.io_direct;

	xxl_stats_detail(st, "n", UINT64_FORMAT, s.n);
	xxl_stats_detail(st, "levels", "%d", s.levels);
	xxl_stats_detail(st, "recursion_depth", "%d", s.recursion_depth);
	xxl_stats_detail(st, "external_levels", "%d", s.external_levels);
	xxl_stats_detail(st, "io_bytes", UINT64_FORMAT, io);
	xxl_stats_detail(st, "io_bytes_per_byte", "%.2f", s.n ? (double) io / s.n : 0.0);
	/* [T] Thm 13: sort(30n) + scan(6n) words of 4 bytes, a sort reading and writing once */
	xxl_stats_detail(st, "thesis_bytes", UINT64_FORMAT, s.thesis_bytes);
	xxl_stats_detail(st, "io_vs_thesis", "%.3f",
					 s.thesis_bytes ? (double) io / s.thesis_bytes : 0.0);
	xxl_stats_detail(st, "sorted_bytes", UINT64_FORMAT, s.sorted_bytes);
	xxl_stats_detail(st, "spool_bytes", UINT64_FORMAT, s.spool_bytes);
	xxl_stats_detail(st, "sorter_block_max", "%zu", s.sorter_block_max);
	if (c->mode == XXL_SA_BWT && c->built)
		xxl_stats_detail(st, "primary_index", UINT64_FORMAT, xxl_sa_bwt_primary(c->sa));

	/* per level: characters and I/O bytes (0: solved in memory) */
	detail_array(st, "level_n", s.levels, s.level, false);
	detail_array(st, "level_io", s.levels, s.level, true);
}

XxlTextCore *
xxl_text_core_begin(XxlOperator *op, xxl_sa_mode mode)
{
	xxl_sa_config cfg = xxl_text_config(op, mode);
	xxl_error	err;
	XxlTextCore	   *c = MemoryContextAllocZero(op->cxt, sizeof(XxlTextCore));

	xxl_error_clear(&err);
	c->mode = mode;
	c->sa = xxl_sa_create(&cfg, &err);
	if (c->sa == NULL)
		xxl_raise_error(&err, op->name);
	xxl_operator_attach(op, c, sa_core_destroy, sa_core_collect);
	return c;
}

/* Text in: the rows of a corpus source, or one bytea value. */
void
xxl_text_core_feed(XxlOperator *op, XxlTextCore *c, const char *source, bytea *data)
{
	XxlCorpusSink	sink;

	xxl_corpus_sink_sa(&sink, c->sa, op->name);
	if (source != NULL)
	{
		AttrNumber	attno;
		XxlInput   *in = xxl_corpus_open(source, &attno);

		op->rows_in = xxl_corpus_feed(in, attno, &sink);
	}
	else
	{
		xxl_corpus_put(&sink, VARDATA_ANY(data), VARSIZE_ANY_EXHDR(data));
		op->rows_in = 1;
	}
	xxl_operator_phase(op, XXL_PHASE_MERGE);
	if (xxl_sa_build(c->sa) != XXL_OK)
		xxl_raise_error(xxl_sa_error(c->sa), op->name);
	c->built = true;
	xxl_operator_phase(op, XXL_PHASE_OUTPUT);
}

