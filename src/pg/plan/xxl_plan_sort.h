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

#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "nodes/plannodes.h"

#include "pg/plan/xxl_plan_keys.h"

#define XXL_PLAN_SORT_NAME "XxlSort"

/* The node's executor methods (xxl_plan_sort_exec.c). */
extern const CustomScanMethods xxl_plan_sort_methods;

/*
 * CREATE TABLE AS over an XxlSort (xxl_plan_ctas.c): the rows the node
 * would hand out next go into out (which holds `held` rows already),
 * finished, not through the executor, and the node is at its end.  Returns
 * how many went in, or -1 (nothing done)
 * where they cannot go so: the node projects, keeps rows for marks or
 * backward fetches, or has not handed out its first row.  The node's
 * instrumentation counts them.
 */
struct XxlOutput;
extern int64 xxl_plan_sort_drain(PlanState *ps, struct XxlOutput *out, uint64 held);

/* Called from _PG_init: the planner hook and the node's methods. */
extern void xxl_plan_sort_init(void);

#endif							/* XXL_PG_PLAN_SORT_H */
