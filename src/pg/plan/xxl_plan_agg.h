/*
 * xxl_plan_agg.h — GROUP BY over a sorted input, aggregated as the rows
 * stream through.
 *
 * xxl_plan_agg.c (planning): which sorted Agg nodes become XxlAgg custom
 * scans; xxl_plan_agg_exec.c (execution): that node.  What the two share is
 * the node's private list, built and read back here.
 */
#ifndef XXL_PG_PLAN_AGG_H
#define XXL_PG_PLAN_AGG_H

#include "nodes/extensible.h"
#include "nodes/plannodes.h"

#include "pg/plan/xxl_plan_group.h"

#define XXL_PLAN_AGG_NAME "XxlAgg"

/* How the node computes an aggregate. */
typedef enum XxlAggKind
{
	XXL_AGG_COUNT_STAR,			/* count(*) */
	XXL_AGG_COUNT,				/* count(x) */
	XXL_AGG_SUM_INT,			/* sum(int2), sum(int4): an int8 */
	XXL_AGG_SUM_INT8,			/* sum(int8): a numeric, summed in 128 bits */
	XXL_AGG_CALLED,				/* through its transition and final functions */
} XxlAggKind;

/* An XxlAgg node's groups and aggregates. */
typedef struct XxlPlanAgg
{
	XxlPlanCols group;
	int			naggs;			/* columns after the child's in the scan tuple, */
								/* whose expressions are the Aggrefs */
	XxlAggKind *kinds;
} XxlPlanAgg;

/* agg, or the XxlAgg node that computes it (after the child is final). */
extern Plan *xxl_plan_agg(Agg *agg);
extern void xxl_plan_agg_read(const CustomScan *cscan, XxlPlanAgg *plan);

/* The node's executor methods (xxl_plan_agg_exec.c). */
extern const CustomScanMethods xxl_plan_agg_methods;

#endif							/* XXL_PG_PLAN_AGG_H */
