/*
 * xxl_spill.c — where an operator's spill files go, and how their removal
 * is reported (see xxl_spill.h).
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

#include <sys/stat.h>
#include <unistd.h>

#include "commands/tablespace.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"
#include "utils/guc.h"
#include "utils/varlena.h"

#include "pg/runtime/xxl_guc.h"
#include "pg/runtime/xxl_spill.h"

/* operators started by this backend: part of each spill file's name */
static unsigned operator_counter = 0;

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
	/* (none if malloc fails: each set then has files of its own) */
	setup->pool = xxl_file_pool_create();
	setup->config.pool = setup->pool;
	setup->config.max_spill_bytes = 0;
	setup->config.fail_write_after = (uint64) xxl_debug_fail_writes_after_kb * 1024;
	setup->config.seed = (unsigned) MyProcPid ^ operator_counter;
}

void
xxl_disk_report(XxlDiskSetup *setup, bool report)
{
	xxl_spill_account *acc = &setup->account;

	if (!setup->account_live)
		return;
	setup->account_live = false;
	xxl_file_pool_destroy(setup->pool);
	setup->pool = NULL;
	setup->config.pool = NULL;
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
