/*
 * plan.h — the sorter inside ordinary query plans (folder plan/): XxlSort,
 * XxlAgg and XxlWindow in place of Sort, Agg and WindowAgg, CREATE TABLE
 * AS over an XxlSort, and the custom scan that runs xxl.sort() in FROM.
 * Other folders see three things: the set-up at _PG_init, the paths
 * custom scans over one base relation share (xxl_custom_path.h, which the
 * xxl table's scans use), and the sort keys and MergeAppend hook of
 * xxl_plan_keys.h with the column references of xxl_plan_columns.h
 * (which the shard folder's merge node uses).
 */
#ifndef XXL_PG_PLAN_H
#define XXL_PG_PLAN_H

#include "pg/plan/xxl_custom_path.h"
#include "pg/plan/xxl_plan_columns.h"
#include "pg/plan/xxl_plan_keys.h"

/* Called from _PG_init: the planner hook, the custom nodes, the CTAS hook. */
extern void xxl_plan_init(void);

#endif							/* XXL_PG_PLAN_H */
