/*
 * xxl_spill.h — an operator's spill-disk configuration: directories, file
 * names, the temp_file_limit account, and the report of removed files.
 */
#ifndef XXL_PG_SPILL_H
#define XXL_PG_SPILL_H

#include "core/xxl_io.h"

/*
 * Spill-disk configuration.  The strings are palloc'd in the memory context
 * current at the call and must live as long as the engine object using the
 * configuration.
 */
typedef struct XxlDiskSetup
{
	xxl_disk_config config;
	char	  **dirs;
	int			ndisks;
	char		prefix[64];
	xxl_spill_account account;	/* the operator's spill space: temp_file_limit */
	xxl_file_pool *pool;		/* the files all its engine objects share */
	bool		account_live;	/* initialized, not yet reported */
} XxlDiskSetup;

/*
 * Fill setup for one operator: directories from xxl.disks or the pgsql_tmp
 * directories of temp_tablespaces (else of the database's tablespace),
 * created if missing; file prefix "pgsql_tmp<pid>.xxl<n>"; the spill limit
 * from temp_file_limit, kept by one account for all the operator's sets;
 * one file pool, so that all its engine objects allocate their blocks in the
 * same files (the spill peak is then what they hold at once).
 */
extern void xxl_disk_setup(XxlDiskSetup *setup, size_t block_size);

/*
 * The operator's engine objects are gone: remove its pooled files and report
 * each of its files as PostgreSQL reports its own temporary files
 * (pg_stat_database temp_files and temp_bytes, log_temp_files), then free
 * the account.  Once; main thread only.
 */
extern void xxl_disk_report(XxlDiskSetup *setup, bool report);

#endif							/* XXL_PG_SPILL_H */
