/*
 * xxl_plan_sort.h — the external sorter inside ordinary query plans.
 *
 * xxl_plan_sort.c (planning): a planner hook that, after PostgreSQL has
 * planned a query, replaces each big enough Sort node it can by an XxlSort
 * custom scan over the same child; xxl_plan_sort_exec.c (execution): that
 * node, which pulls the child's rows into the external sorter and streams
 * them back sorted.  What the two share is the node's private list: its
 * key (xxl_plan_keys_private, read back by xxl_plan_keys_read).
 */
#ifndef XXL_PG_PLAN_SORT_H
#define XXL_PG_PLAN_SORT_H

#include "nodes/extensible.h"
#include "nodes/plannodes.h"

#include "pg/plan/xxl_plan_keys.h"

#define XXL_PLAN_SORT_NAME "XxlSort"

/* The node's executor methods (xxl_plan_sort_exec.c). */
extern const CustomScanMethods xxl_plan_sort_methods;

/* Called from _PG_init: the planner hook and the node's methods. */
extern void xxl_plan_sort_init(void);

#endif							/* XXL_PG_PLAN_SORT_H */
