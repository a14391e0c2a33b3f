/*
 * xxl_guc.c — the xxl.* settings (see xxl_guc.h) and the per-operator
 * values derived from them.
 *
 * Spill files go where PostgreSQL puts its own temporary files: the
 * pgsql_tmp directories of temp_tablespaces, else of the database's
 * tablespace, under names starting with PG_TEMP_FILE_PREFIX, so that the
 * postmaster's RemovePgTempFiles() deletes whatever a crashed backend left.
 * xxl.disks overrides the directories (one per physical disk); files there
 * are removed by the operator on success, error and cancel, but a crash
 * leaves them for the administrator, so tablespaces are the better choice.
 */
#include "postgres.h"

#include <limits.h>
#include <omp.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands/tablespace.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/varlena.h"

#include "xxl_guc.h"

int			xxl_memory_kb = -1;
char	   *xxl_disks_setting = NULL;
int			xxl_block_size_kb = 2048;
int			xxl_threads = 0;
bool		xxl_log_stats = false;
bool		xxl_direct_io = true;
bool		xxl_sort_scan = true;
int			xxl_debug_fail_writes_after_kb = 0;
int			xxl_test_hold = XXL_HOLD_NONE;
int			xxl_hold_phase_now = XXL_HOLD_NONE;

static const struct config_enum_entry hold_options[] = {
	{"none", XXL_HOLD_NONE, false},
	{"input", XXL_HOLD_INPUT, false},
	{"merge", XXL_HOLD_MERGE, false},
	{"output", XXL_HOLD_OUTPUT, false},
	{NULL, 0, false}
};

/* the backend's own thread: the only one that may wait on its latch */
static pthread_t backend_thread;

/* operators started by this backend: part of each spill file's name */
static unsigned operator_counter = 0;

static bool
check_memory(int *newval, void **extra, GucSource source)
{
	if (*newval == -1 || *newval >= 1024)
		return true;
	GUC_check_errdetail("xxl.memory must be -1 (use maintenance_work_mem) or at least 1MB.");
	return false;
}

static bool
check_block_size(int *newval, void **extra, GucSource source)
{
	if (*newval % (XXL_ALIGN / 1024) == 0)
		return true;
	GUC_check_errdetail("xxl.block_size must be a multiple of %dkB.", XXL_ALIGN / 1024);
	return false;
}

static bool
check_disks(char **newval, void **extra, GucSource source)
{
	char	   *raw;
	List	   *dirs;
	ListCell   *lc;
	bool		ok = true;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	raw = pstrdup(*newval);
	if (!SplitDirectoriesString(raw, ',', &dirs))
	{
		GUC_check_errdetail("xxl.disks must be a comma-separated list of directories.");
		return false;
	}
	if (list_length(dirs) > XXL_MAX_DISKS)
	{
		GUC_check_errdetail("xxl.disks may list at most %d directories.", XXL_MAX_DISKS);
		ok = false;
	}
	foreach(lc, dirs)
	{
		const char *dir = (const char *) lfirst(lc);

		if (ok && !is_absolute_path(dir))
		{
			GUC_check_errdetail("Directory \"%s\" in xxl.disks is not an absolute path.", dir);
			ok = false;
		}
	}
	list_free_deep(dirs);
	pfree(raw);
	return ok;
}

void
xxl_define_gucs(void)
{
	DefineCustomIntVariable("xxl.memory",
							"Memory an xxl operator may use (like work_mem, per operator).",
							"-1 uses maintenance_work_mem.  Inputs larger than this are "
							"spilled to xxl.disks and merged.",
							&xxl_memory_kb,
							-1, -1, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							check_memory, NULL, NULL);
	DefineCustomStringVariable("xxl.disks",
							   "Directories xxl operators spill to, one per physical disk.",
							   "A comma-separated list of absolute paths.  Empty: the "
							   "pgsql_tmp directories of temp_tablespaces, else of the "
							   "database's tablespace.",
							   &xxl_disks_setting,
							   "",
							   PGC_SUSET, GUC_LIST_INPUT,
							   check_disks, NULL, NULL);
	DefineCustomIntVariable("xxl.block_size",
							"Size of the blocks xxl operators read and write.",
							"A multiple of 4kB; capped at 1/16 of the operator's memory.",
							&xxl_block_size_kb,
							2048, XXL_ALIGN / 1024, 256 * 1024,
							PGC_USERSET, GUC_UNIT_KB,
							check_block_size, NULL, NULL);
	DefineCustomIntVariable("xxl.threads",
							"Threads an xxl operator may use for in-memory work.",
							"0 uses every core.",
							&xxl_threads,
							0, 0, 1024,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("xxl.log_stats",
							 "Report each xxl operator's statistics in a NOTICE.",
							 NULL,
							 &xxl_log_stats,
							 false,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("xxl.direct_io",
							 "Open spill files with O_DIRECT where the filesystem allows it.",
							 NULL,
							 &xxl_direct_io,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("xxl.sort_scan",
							 "Run xxl.sort() in FROM as a custom scan that streams its rows.",
							 "Off: PostgreSQL's function scan, which collects all rows in a "
							 "tuplestore (spilled beyond work_mem) before passing them on.",
							 &xxl_sort_scan,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("xxl.debug_fail_writes_after",
							"Testing only: spill writes beyond this amount fail as if the disk were full.",
							"0 disables it.",
							&xxl_debug_fail_writes_after_kb,
							0, 0, MAX_KILOBYTES,
							PGC_SUSET, GUC_UNIT_KB | GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
	DefineCustomEnumVariable("xxl.test_hold",
							 "Testing only: hold every operator inside the engine in this phase until it is canceled.",
							 "The first time the engine polls for a cancel in the named "
							 "phase (input, merge or output), the backend waits with wait "
							 "event \"Extension\" until a cancel or termination arrives, "
							 "which the engine then sees.",
							 &xxl_test_hold,
							 XXL_HOLD_NONE, hold_options,
							 PGC_SUSET, GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
	backend_thread = pthread_self();
	MarkGUCPrefixReserved("xxl");
}

size_t
xxl_memory_bytes(void)
{
	int			kb = xxl_memory_kb >= 0 ? xxl_memory_kb : maintenance_work_mem;

	return (size_t) kb * 1024;
}

int
xxl_thread_count(void)
{
	return xxl_threads > 0 ? xxl_threads : omp_get_max_threads();
}

size_t
xxl_effective_block_size(size_t memory)
{
	size_t		block = (size_t) xxl_block_size_kb * 1024;
	size_t		cap = memory / 16;

	if (block > cap)
		block = cap;
	block -= block % XXL_ALIGN;
	if (block < XXL_ALIGN)
		block = XXL_ALIGN;
	return block;
}

/* PostgreSQL's way: create a missing pgsql_tmp directory on first use. */
static void
ensure_temp_dir(const char *path)
{
	if (MakePGDirectory(path) < 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", path)));
}

static void
check_user_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("spill directory \"%s\" in xxl.disks is not accessible: %m", path)));
	if (!S_ISDIR(st.st_mode))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("spill directory \"%s\" in xxl.disks is not a directory", path)));
}

void
xxl_disk_setup(XxlDiskSetup *setup, size_t block_size)
{
	int			n = 0;

	memset(setup, 0, sizeof(*setup));
	setup->dirs = palloc0(sizeof(char *) * XXL_MAX_DISKS);

	if (xxl_disks_setting != NULL && xxl_disks_setting[0] != '\0')
	{
		char	   *raw = pstrdup(xxl_disks_setting);
		List	   *dirs;
		ListCell   *lc;

		if (!SplitDirectoriesString(raw, ',', &dirs))
			elog(ERROR, "invalid xxl.disks: \"%s\"", xxl_disks_setting);
		foreach(lc, dirs)
		{
			char	   *dir = (char *) lfirst(lc);

			if (n >= XXL_MAX_DISKS)
				break;
			check_user_dir(dir);
			setup->dirs[n++] = pstrdup(dir);
		}
	}
	else
	{
		Oid			spaces[XXL_MAX_DISKS];
		int			nspaces = 0;

		/* the same choice PostgreSQL makes for its own temporary files */
		PrepareTempTablespaces();
		if (TempTablespacesAreSet())
			nspaces = GetTempTablespaces(spaces, XXL_MAX_DISKS);
		if (nspaces == 0)
			spaces[nspaces++] = InvalidOid;
		for (int i = 0; i < nspaces; i++)
		{
			Oid			ts = OidIsValid(spaces[i]) ? spaces[i] : MyDatabaseTableSpace;
			char		path[MAXPGPATH];
			bool		dup = false;

			TempTablespacePath(path, ts);
			for (int j = 0; j < n; j++)
				dup |= strcmp(setup->dirs[j], path) == 0;
			if (dup)
				continue;
			ensure_temp_dir(path);
			setup->dirs[n++] = pstrdup(path);
		}
	}
	setup->ndisks = n;

	snprintf(setup->prefix, sizeof(setup->prefix), "%s%d.xxl%u",
			 PG_TEMP_FILE_PREFIX, MyProcPid, ++operator_counter);

	setup->config.dirs = (const char *const *) setup->dirs;
	setup->config.ndisks = n;
	setup->config.file_prefix = setup->prefix;
	setup->config.block_size = block_size;
	setup->config.try_direct = xxl_direct_io;
	setup->config.strategy = XXL_ALLOC_RANDOM_CYCLING;
	/*
	 * temp_file_limit is in kB; -1 is unlimited, 0 allows nothing.  It holds
	 * for the operator's files together, in every set it opens.
	 */
	xxl_spill_account_init(&setup->account,
						   temp_file_limit < 0 ? 0 :
						   temp_file_limit == 0 ? 1 : (uint64) temp_file_limit * 1024);
	setup->account_live = true;
	setup->config.account = &setup->account;
	setup->config.max_spill_bytes = 0;
	setup->config.fail_write_after = (uint64) xxl_debug_fail_writes_after_kb * 1024;
	setup->config.seed = (unsigned) MyProcPid ^ operator_counter;
}

static inline bool
cancel_pending(void)
{
	return InterruptPending && (QueryCancelPending || ProcDiePending);
}

/*
 * xxl.test_hold: wait here, inside the engine's poll, until a cancel is
 * pending.  Signals set the latch, so the wait ends as soon as one comes;
 * the timeout only guards against a lost wake-up.  Once per phase.
 */
static void
hold_until_canceled(void)
{
	xxl_hold_phase_now = XXL_HOLD_NONE;
	while (!cancel_pending())
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

void
xxl_disk_report(XxlDiskSetup *setup, bool report)
{
	xxl_spill_account *acc = &setup->account;

	if (!setup->account_live)
		return;
	setup->account_live = false;
	for (size_t i = 0; report && i < acc->nremoved; i++)
	{
		const xxl_spill_removal *r = &acc->removed[i];

		pgstat_report_tempfile((size_t) r->size);
		if (log_temp_files >= 0 && r->size / 1024 >= (uint64) log_temp_files)
			ereport(LOG,
					(errmsg("temporary file: path \"%s\", size %llu",
							r->path, (unsigned long long) r->size)));
	}
	xxl_spill_account_destroy(acc);
}

bool
xxl_cancel_requested(void *arg)
{
	if (unlikely(xxl_test_hold != XXL_HOLD_NONE) && xxl_hold_phase_now == xxl_test_hold &&
		pthread_equal(pthread_self(), backend_thread))
		hold_until_canceled();
	return cancel_pending();
}
