/*
 * xxl_guc.h — the xxl.* settings and what an operator derives from them:
 * its memory budget, block size, thread count, and the spill-disk
 * configuration (directories, file names, size limit) plus the cancel hook
 * the engine polls.
 */
#ifndef XXL_PG_GUC_H
#define XXL_PG_GUC_H

#include "xxl_io.h"

extern int	xxl_memory_kb;		/* -1: follow maintenance_work_mem */
extern char *xxl_disks_setting;
extern int	xxl_block_size_kb;
extern int	xxl_threads;
extern bool xxl_log_stats;
extern bool xxl_direct_io;
extern bool xxl_sort_scan;	/* xxl.sort() in FROM as a custom scan */
extern int	xxl_debug_fail_writes_after_kb;	/* tests: simulate a full disk */

/*
 * xxl.test_hold (superuser, tests only): the phase in which the engine's
 * cancel hook holds the operator until a cancel arrives, so that a test
 * reaches a phase deterministically, whatever the machine's speed.  The
 * operator lifecycle sets xxl_hold_phase_now as it enters each phase.
 */
typedef enum XxlHold
{
	XXL_HOLD_NONE = -1,
	XXL_HOLD_INPUT = 0,			/* = XXL_PHASE_INPUT ... */
	XXL_HOLD_MERGE,
	XXL_HOLD_OUTPUT
} XxlHold;
extern int	xxl_test_hold;
extern int	xxl_hold_phase_now;

/* Called from _PG_init. */
extern void xxl_define_gucs(void);

/* The operator budget in bytes (xxl.memory, or maintenance_work_mem). */
extern size_t xxl_memory_bytes(void);

/* OpenMP threads for an operator (xxl.threads, 0 = every core). */
extern int	xxl_thread_count(void);

/*
 * Block size for an operator with the given budget: xxl.block_size, but
 * never more than 1/16 of the budget (so small budgets still merge many
 * runs at once), rounded down to the engine's 4 kB alignment.
 */
extern size_t xxl_effective_block_size(size_t memory);

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
	bool		account_live;	/* initialized, not yet reported */
} XxlDiskSetup;

/*
 * Fill setup for one operator: directories from xxl.disks or the pgsql_tmp
 * directories of temp_tablespaces (else of the database's tablespace),
 * created if missing; file prefix "pgsql_tmp<pid>.xxl<n>"; the spill limit
 * from temp_file_limit, kept by one account for all the operator's sets.
 */
extern void xxl_disk_setup(XxlDiskSetup *setup, size_t block_size);

/*
 * The operator's spill files are gone: report each as PostgreSQL reports
 * its own temporary files (pg_stat_database temp_files and temp_bytes,
 * log_temp_files), then free the account.  Once; main thread only.
 */
extern void xxl_disk_report(XxlDiskSetup *setup, bool report);

/*
 * The engine's cancel hook: true when a query cancel, statement timeout or
 * termination is pending.  Only reads the signal flags, and the engine
 * calls it on the backend's own thread.
 */
extern bool xxl_cancel_requested(void *arg);

#endif							/* XXL_PG_GUC_H */
