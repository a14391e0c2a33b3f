/*
 * plan.h — the sorter inside ordinary query plans (folder plan/): XxlSort,
 * XxlAgg and XxlWindow in place of Sort, Agg and WindowAgg, CREATE TABLE
 * AS over an XxlSort, and the custom scan that runs xxl.sort() in FROM.
 * Other folders see two things: the set-up at _PG_init, and the paths
 * custom scans over one base relation share (xxl_custom_path.h, which the
 * xxl table's scans use).
 */
#ifndef XXL_PG_PLAN_H
#define XXL_PG_PLAN_H

#include "pg/plan/xxl_custom_path.h"

/* Called from _PG_init: the planner hook, the custom nodes, the CTAS hook. */
extern void xxl_plan_init(void);

#endif							/* XXL_PG_PLAN_H */
