/*
 * xxl_plan.c — the folder's set-up at _PG_init: its custom scan and plan
 * nodes registered, the planner and CREATE TABLE AS hooks installed.
 */
#include "postgres.h"

#include "pg/plan/plan.h"
#include "pg/plan/xxl_plan_ctas.h"
#include "pg/plan/xxl_plan_sort.h"
#include "pg/plan/xxl_sort_scan.h"

void
xxl_plan_init(void)
{
	xxl_sort_scan_init();
	xxl_plan_sort_init();
	xxl_plan_ctas_init();
}
