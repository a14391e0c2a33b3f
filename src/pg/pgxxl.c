/*
 * pgxxl.c — the module's entry point: the magic block PostgreSQL checks when
 * it loads the library, _PG_init (run once per backend on first use), and
 * xxl.version(), which tells which build is installed and what the machine
 * gives it (OpenMP threads, O_DIRECT).
 *
 * PG_MODULE_MAGIC must appear in exactly one file of the library: here.
 */
#include "postgres.h"

#include <omp.h>

#include "fmgr.h"
#include "utils/builtins.h"

#include "core/xxl_io.h"
#include "pg/runtime/runtime.h"
#include "pg/plan/plan.h"
#include "pg/table/table.h"
#include "pg/shard/shard.h"

PG_MODULE_MAGIC;

/* the control file's default_version, passed in by the Makefile */
#ifndef PGXXL_VERSION
#error "PGXXL_VERSION must be defined (the Makefile takes it from pgxxl.control)"
#endif


void		_PG_init(void);

PG_FUNCTION_INFO_V1(pgxxl_version);

void
_PG_init(void)
{
	xxl_define_gucs();
	xxl_check_omp_wait_policy();
	xxl_cancel_init();
	xxl_progress_init();
	xxl_plan_init();
	xxl_table_init();
	xxl_shard_init();
}

/* "2MiB", "512KiB", or bytes when the size is not a round unit. */
static void
format_size(char *buf, size_t len, size_t bytes)
{
	if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0)
		snprintf(buf, len, "%zuMiB", bytes / (1024 * 1024));
	else if (bytes >= 1024 && bytes % 1024 == 0)
		snprintf(buf, len, "%zuKiB", bytes / 1024);
	else
		snprintf(buf, len, "%zuB", bytes);
}

Datum
pgxxl_version(PG_FUNCTION_ARGS)
{
	char		block[32];

	/* the block size operators use now: the setting, not the build's default */
	format_size(block, sizeof(block), (size_t) xxl_block_size_kb * 1024);
	PG_RETURN_TEXT_P(cstring_to_text(psprintf("pgxxl %s (openmp threads=%d, o_direct=%s, block_size=%s)",
											  PGXXL_VERSION,
											  omp_get_max_threads(),
											  xxl_io_direct_supported() ? "yes" : "no",
											  block)));
}
