/*
 * xxl_guc.c — every xxl.* setting, defined in one place (see xxl_guc.h),
 * and the per-operator values derived from them: budget, threads, block.
 */
#include "postgres.h"

#include <limits.h>
#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>

#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/varlena.h"

#include "core/graph/xxl_paths.h"
#include "core/matrix/xxl_matrix.h"
#include "pg/runtime/xxl_guc.h"

int			xxl_memory_kb = -1;
char	   *xxl_disks_setting = NULL;
int			xxl_block_size_kb = 2048;
int			xxl_threads = 0;
bool		xxl_log_stats = false;
bool		xxl_direct_io = true;
bool		xxl_sort_scan = true;
bool		xxl_ordered_scan = true;
bool		xxl_full_scan = true;
bool		xxl_table_compression = true;
bool		xxl_sort_in_plans = true;
bool		xxl_window_in_plans = true;
bool		xxl_group_in_plans = true;
int			xxl_sort_in_plans_threshold_kb = -1;
int			xxl_debug_fail_writes_after_kb = 0;
int			xxl_test_hold = XXL_HOLD_NONE;
int			xxl_test_listed_dirpages = 256;
int			xxl_graph_max_semi_nodes = 0;
bool		xxl_graph_force_external = false;
bool		xxl_on_shards = true;
bool		xxl_text_force_external = false;
int			xxl_bfs_algorithm = XXL_PATHS_BFS_AUTO;
int			xxl_sssp_algorithm = XXL_PATHS_SSSP_AUTO;
int			xxl_matmul_method = XXL_MATRIX_AUTO;

static const struct config_enum_entry hold_options[] = {
	{"none", XXL_HOLD_NONE, false},
	{"input", XXL_HOLD_INPUT, false},
	{"merge", XXL_HOLD_MERGE, false},
	{"output", XXL_HOLD_OUTPUT, false},
	{NULL, 0, false}
};

static const struct config_enum_entry bfs_options[] = {
	{"auto", XXL_PATHS_BFS_AUTO, false},
	{"mr", XXL_PATHS_BFS_MR, false},
	{"mm", XXL_PATHS_BFS_MM, false},
	{NULL, 0, false}
};

static const struct config_enum_entry sssp_options[] = {
	{"auto", XXL_PATHS_SSSP_AUTO, false},
	{"dijkstra", XXL_PATHS_SSSP_DIJKSTRA, false},
	{"mo", XXL_PATHS_SSSP_MO, false},
	{NULL, 0, false}
};

static const struct config_enum_entry matmul_options[] = {
	{"auto", XXL_MATRIX_AUTO, false},
	{"sparse", XXL_MATRIX_SPARSE, false},
	{"dense", XXL_MATRIX_DENSE, false},
	{NULL, 0, false}
};

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

/*
 * libgomp reads OMP_WAIT_POLICY once, when a process loads it: without
 * "passive", an operator's idle OpenMP threads spin before they sleep and
 * take the core from the thread they wait for, or from other backends.
 * Said once, in the postmaster's log, when the library is preloaded (a
 * library loaded by each backend would say it in every one).
 */
void
xxl_check_omp_wait_policy(void)
{
	const char *policy = getenv("OMP_WAIT_POLICY");

	if (!process_shared_preload_libraries_in_progress || IsUnderPostmaster)
		return;
	if (policy != NULL && pg_strcasecmp(policy, "passive") == 0)
		return;
	ereport(LOG,
			(errmsg("pgxxl: the server's environment does not set OMP_WAIT_POLICY=passive"),
			 errdetail("Idle OpenMP threads of pgxxl's operators then spin, taking CPU from the threads they wait for and from other backends."),
			 errhint("Set OMP_WAIT_POLICY=passive in the server's environment (on Debian, the line OMP_WAIT_POLICY = 'passive' in /etc/postgresql/15/main/environment) and restart the server.")));
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
	DefineCustomBoolVariable("xxl.ordered_scan",
							 "Let ORDER BY an xxl table's order key read its segments merged, without a Sort.",
							 "Off: the planner sorts as for any table.",
							 &xxl_ordered_scan,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("xxl.full_scan",
							 "Read whole xxl tables with a scan node that returns only the columns the plan needs.",
							 "Used where a query reads every row of an xxl table with no condition on it "
							 "and locks none.  Off: PostgreSQL's sequential scan.",
							 &xxl_full_scan,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("xxl.table_compression",
							 "Let xxl table writers pack pages column by column, integers in the bits they need.",
							 "Pages of rows of a fixed width, whose columns shrink so (integers, dates, "
							 "timestamps: frame of reference or delta), hold more rows packed.  Pages already "
							 "written keep their form.  Off: plain rows.",
							 &xxl_table_compression,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("xxl.sort_in_plans",
							 "Let the planner run big sorts of ordinary queries with the external sorter.",
							 "A Sort node whose input is expected to exceed xxl.sort_in_plans_threshold "
							 "becomes an XxlSort node (ORDER BY, DISTINCT, GROUP BY, window functions, "
							 "merge joins).  Off: PostgreSQL's Sort everywhere.",
							 &xxl_sort_in_plans,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("xxl.window_in_plans",
							 "Let the planner compute ranking window functions as sorted rows stream by.",
							 "With xxl.sort_in_plans, a WindowAgg whose functions are all row_number(), "
							 "rank(), dense_rank(), lag() or first_value() becomes an XxlWindow node, which keeps no rows.  "
							 "Off: PostgreSQL's WindowAgg.",
							 &xxl_window_in_plans,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("xxl.group_in_plans",
							 "Let the planner aggregate sorted groups as rows stream by.",
							 "With xxl.sort_in_plans, a sorted GroupAggregate whose aggregates are all plain "
							 "(no DISTINCT, ORDER BY or FILTER) and have no internal state, or are count() "
							 "or sum() of integers, becomes an XxlAgg node.  Off: PostgreSQL's Agg.",
							 &xxl_group_in_plans,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("xxl.sort_in_plans_threshold",
							"Estimated sort input above which xxl.sort_in_plans replaces a Sort.",
							"-1 uses work_mem, the size beyond which PostgreSQL's Sort spills; "
							"0 replaces every Sort that can be replaced, also those PostgreSQL "
							"is expected to sort faster (keys in ICU collations).",
							&xxl_sort_in_plans_threshold_kb,
							-1, -1, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
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
							 "which the engine then sees.  VACUUM's merge of an xxl table "
							 "holds after its steps: input, the merged rows written and "
							 "indexed; merge, switched in; output, copied down.",
							 &xxl_test_hold,
							 XXL_HOLD_NONE, hold_options,
							 PGC_SUSET, GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("xxl.test_listed_dirpages",
							"Testing only: directory pages a new xxl table's metapage lists before their chain begins.",
							"A table keeps the number it was created with.",
							&xxl_test_listed_dirpages,
							256, 1, 256,
							PGC_SUSET, GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
	DefineCustomIntVariable("xxl.graph_max_semi_nodes",
							"Testing only: most nodes the graph functions handle semi-externally.",
							"Graphs with more nodes take the fully external path (edge "
							"contraction) even when xxl.memory would hold them.  0: no cap.",
							&xxl_graph_max_semi_nodes,
							0, 0, INT_MAX,
							PGC_SUSET, GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("xxl.on_shards",
							 "Operators over a partitioned table with partitions on other servers work on every server at once.",
							 "Sorts and spanning forests of a table whose partitions include foreign tables of "
							 "postgres_fdw run on each of those servers with pgxxl, all at once, and combine "
							 "their results here; off reads the rows through postgres_fdw and works on them here.",
							 &xxl_on_shards,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("xxl.graph_force_external",
							 "Testing only: BFS, shortest paths and the analytics operators take the external path.",
							 "They do so even when xxl.memory would hold the graph (PageRank: its iterations off its arrays).",
							 &xxl_graph_force_external,
							 false,
							 PGC_SUSET, GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("xxl.text_force_external",
							 "Testing only: suffix arrays and LCP values take their external paths.",
							 "Suffix sorting runs external DC3 down to the smallest texts, and the "
							 "LCP operator compares in sorted rounds even when the text is in memory.",
							 &xxl_text_force_external,
							 false,
							 PGC_SUSET, GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
	DefineCustomEnumVariable("xxl.bfs_algorithm",
							 "The external breadth-first search: mr (Munagala-Ranade), mm "
							 "(Mehlhorn-Meyer, clusters and a hot pool) or auto.",
							 "auto takes mr, the faster of the two wherever the operating system "
							 "caches the spill files.  Only a BFS that does not fit xxl.memory "
							 "uses either; mm falls back to mr when the budget cannot hold its "
							 "spanning forest.",
							 &xxl_bfs_algorithm,
							 XXL_PATHS_BFS_AUTO, bfs_options,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomEnumVariable("xxl.sssp_algorithm",
							 "The external shortest paths: dijkstra (one adjacency read per "
							 "settled node) or mo (Meyer-Osipov: clusters, weight categories, "
							 "delayed relaxation) or auto.",
							 "auto takes dijkstra, the faster of the two wherever the operating "
							 "system caches the spill files.  Only shortest paths that do not "
							 "fit xxl.memory use either; mo falls back to dijkstra when the "
							 "budget cannot hold its spanning forest.",
							 &xxl_sssp_algorithm,
							 XXL_PATHS_SSSP_AUTO, sssp_options,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomEnumVariable("xxl.matmul_method",
							 "The path of xxl.matmul: sparse (row by row over pieces of B) "
							 "or dense (tiles) or auto.",
							 "auto takes dense when both matrices fill at least a quarter "
							 "of their bounding boxes and the product takes at least 4M "
							 "multiplications (docs/matrix.md).",
							 &xxl_matmul_method,
							 XXL_MATRIX_AUTO, matmul_options,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	/* last: every xxl.* setting is defined, the rest of the prefix is an error */
	MarkGUCPrefixReserved("xxl");
}

size_t
xxl_memory_bytes(void)
{
	int			kb = xxl_memory_kb >= 0 ? xxl_memory_kb : maintenance_work_mem;

	return (size_t) kb * 1024;
}

size_t
xxl_plan_sort_memory_bytes(void)
{
	/* the engine wants 1MB at least, as xxl.memory does */
	int			kb = xxl_memory_kb >= 0 ? xxl_memory_kb : Max(work_mem, 1024);

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

