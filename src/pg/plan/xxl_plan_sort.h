/*
 * xxl_plan_sort.h — the external sorter inside ordinary query plans.
 *
 * xxl_plan_sort.c (planning): a planner hook that, after PostgreSQL has
 * planned a query, replaces each big enough Sort node it can by an XxlSort
 * custom scan over the same child; xxl_plan_sort_exec.c (execution): that
 * node, which pulls the child's rows into the external sorter and streams
 * them back sorted.  What the two share is the node's private list, built by
 * xxl_plan_sort_private and read back by xxl_plan_sort_keys.
 */
#ifndef XXL_PG_PLAN_SORT_H
#define XXL_PG_PLAN_SORT_H

#include "nodes/extensible.h"
#include "nodes/plannodes.h"

#define XXL_PLAN_SORT_NAME "XxlSort"

/* The key of an XxlSort node, as its Sort had it. */
typedef struct XxlPlanSortKeys
{
	int			ncols;
	AttrNumber *cols;			/* in the child's rows */
	Oid		   *sortops;
	Oid		   *collations;
	bool	   *nulls_first;
	bool		distinct;		/* a Unique on key columns reads it: see XxlSortRunOptions */
} XxlPlanSortKeys;

/* custom_private of an XxlSort node made from sort */
extern List *xxl_plan_sort_private(const Sort *sort);
extern void xxl_plan_sort_keys(const CustomScan *cscan, XxlPlanSortKeys *keys);

/*
 * A Var of varno referring to tle's column (its resno, type, typmod and
 * collation); the list form maps every entry of tlist so.  How the plan
 * nodes here see a child's row (OUTER_VAR) or their own scan tuple
 * (INDEX_VAR).
 */
extern Var *xxl_plan_column_ref(const TargetEntry *tle, int varno);
extern List *xxl_plan_column_refs(List *tlist, int varno);

/* The node's executor methods (xxl_plan_sort_exec.c). */
extern const CustomScanMethods xxl_plan_sort_methods;

/* Called from _PG_init: the planner hook and the node's methods. */
extern void xxl_plan_sort_init(void);

/*
 * xxl_plan_ctas.c: CREATE TABLE AS over an XxlSort writes its pages
 * directly (an ExecutorRun hook; called by xxl_plan_sort_init).
 */
extern void xxl_plan_ctas_init(void);

#endif							/* XXL_PG_PLAN_SORT_H */
