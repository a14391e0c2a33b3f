/*
 * xxl_guc.h — the xxl.* settings, all defined in xxl_guc.c, and what an
 * operator derives from them: its memory budget, block size and threads.
 */
#ifndef XXL_PG_GUC_H
#define XXL_PG_GUC_H

#include "core/xxl_io.h"

extern int	xxl_memory_kb;		/* -1: follow maintenance_work_mem */
extern char *xxl_disks_setting;
extern int	xxl_block_size_kb;
extern int	xxl_threads;
extern bool xxl_log_stats;
extern bool xxl_direct_io;
extern bool xxl_sort_scan;	/* xxl.sort() in FROM as a custom scan */
extern bool xxl_ordered_scan;	/* ORDER BY an xxl table's key: merged segments */
extern bool xxl_full_scan;	/* whole xxl tables: the full scan node */
extern bool xxl_table_compression;	/* xxl table writers pack pages */
extern bool xxl_sort_in_plans;	/* big Sorts of query plans become XxlSort nodes */
extern bool xxl_group_in_plans;	/* sorted GROUP BY Aggs become XxlAgg */
extern bool xxl_window_in_plans;	/* ranking WindowAggs become XxlWindow */
extern int	xxl_sort_in_plans_threshold_kb;	/* -1: work_mem */
extern int	xxl_debug_fail_writes_after_kb;	/* tests: simulate a full disk */
extern int	xxl_graph_max_semi_nodes;	/* tests: force the external graph path */
extern int	xxl_bfs_algorithm;	/* xxl_paths_bfs: the external BFS */
extern int	xxl_sssp_algorithm; /* xxl_paths_sssp: the external shortest paths */
extern int	xxl_matmul_method;	/* xxl_matrix_method: the path of xxl.matmul */
extern bool xxl_text_force_external;	/* tests: suffix arrays and LCP external */
extern bool xxl_on_shards;	/* operators over sharded tables work on the shards */
extern bool xxl_graph_force_external;	/* tests: BFS / shortest paths / PageRank never in memory */

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

/*
 * xxl.test_listed_dirpages (superuser, tests only): how many directory
 * pages a new xxl table's metapage lists before their chain begins
 * (XXL_META_DIRPAGES), so that a test reaches the chain with a few
 * hundred segments.
 */
extern int	xxl_test_listed_dirpages;

/* Called from _PG_init. */
extern void xxl_define_gucs(void);

/* At _PG_init: a LOG line with the fix when a preloading server's OpenMP threads would spin. */
extern void xxl_check_omp_wait_policy(void);

/* The operator budget in bytes (xxl.memory, or maintenance_work_mem). */
extern size_t xxl_memory_bytes(void);

/*
 * The budget of an XxlSort node in a query plan: xxl.memory when set, else
 * work_mem, the budget of the Sort node it replaces.
 */
extern size_t xxl_plan_sort_memory_bytes(void);

/* OpenMP threads for an operator (xxl.threads, 0 = every core). */
extern int	xxl_thread_count(void);

/*
 * Block size for an operator with the given budget: xxl.block_size, but
 * never more than 1/16 of the budget (so small budgets still merge many
 * runs at once), rounded down to the engine's 4 kB alignment.
 */
extern size_t xxl_effective_block_size(size_t memory);

#endif							/* XXL_PG_GUC_H */
