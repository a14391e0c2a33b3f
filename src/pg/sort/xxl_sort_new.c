/*
 * xxl_sort_new.c — the sorter factory of the SQL operators (xxl_sort_new.h):
 * an engine sorter on the operator's resources, attached to it so that
 * it is destroyed however the operator ends, and its statistics are the
 * operator's.
 */
#include "postgres.h"

#include "pg/runtime/runtime.h"
#include "pg/sort/xxl_sort_new.h"

static void
sorter_destroy(void *core)
{
	xxl_sorter_destroy((xxl_sorter *) core);
}

static void
sorter_collect(void *core, XxlStats *st)
{
	xxl_sort_stats s;

	xxl_sorter_stats((xxl_sorter *) core, &s);
	if (st->rows_in == 0)
		st->rows_in = s.records;
	st->record_bytes = s.bytes;
	st->runs = s.runs;
	st->merge_passes = s.merge_passes;
	st->fan_in = s.fan_in;
	if (s.read_size > 0 && s.read_size < st->block_size)
		xxl_stats_detail(st, "merge_read_bytes", "%zu", s.read_size);
	if (s.merge_units > 0)
	{
		/* frames the merges read, and those a run waited for unprefetched */
		xxl_stats_detail(st, "merge_reads", UINT64_FORMAT, s.merge_units);
		xxl_stats_detail(st, "merge_reads_unprefetched", UINT64_FORMAT, s.merge_unprefetched);
	}
	st->memory_peak = s.memory_peak;
	st->memory_limit = s.memory_limit;
	st->io = s.io;
}

xxl_sorter *
xxl_sort_new(XxlOperator *op, size_t record_size, size_t key_size,
			 const xxl_key_compare *compare)
{
	xxl_sort_config cfg;
	xxl_error	err;
	xxl_sorter *s;

	memset(&cfg, 0, sizeof(cfg));
	xxl_error_clear(&err);
	cfg.res = xxl_operator_resources(op);
	cfg.res.disk.try_direct &= xxl_sort_direct_pays(op->block_size);
	cfg.record_size = record_size;
	cfg.key_size = key_size;
	cfg.compare = compare;
	/*
	 * A SQL operator's producer (a scan plus key encoding) and consumer
	 * (forming rows, inserting them) are heavy: overlap them with run
	 * formation and the final merge on another core.
	 */
	cfg.async_merge = op->threads > 1;
	cfg.async_runs = op->threads > 1;
	cfg.expected_bytes = op->expected_bytes;

	s = xxl_sorter_create(&cfg, &err);
	if (s == NULL)
		xxl_raise_error(&err, op->name);
	xxl_operator_attach(op, s, sorter_destroy, sorter_collect);
	return s;
}
