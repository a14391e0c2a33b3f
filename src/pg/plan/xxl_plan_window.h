/*
 * xxl_plan_window.h — ranking window functions computed as an XxlSort's
 * rows stream out.
 *
 * xxl_plan_window.c (planning): which WindowAgg nodes become XxlWindow
 * custom scans; xxl_plan_window_exec.c (execution): that
 * node, which numbers each row as it passes and keeps none.  What the two
 * share is the node's private list, built and read back here.
 */
#ifndef XXL_PG_PLAN_WINDOW_H
#define XXL_PG_PLAN_WINDOW_H

#include "nodes/extensible.h"
#include "nodes/plannodes.h"

#include "pg/plan/xxl_plan_group.h"

#define XXL_PLAN_WINDOW_NAME "XxlWindow"

typedef enum XxlWindowFunc
{
	XXL_WINDOW_ROW_NUMBER,
	XXL_WINDOW_RANK,
	XXL_WINDOW_DENSE_RANK,
	XXL_WINDOW_LAG,				/* lag(x [, k [, default]]), k a constant 0..XXL_WINDOW_LAG_MAX */
	XXL_WINDOW_FIRST_VALUE,		/* first_value(x) of a frame that starts at the partition's */
} XxlWindowFunc;

#define XXL_WINDOW_LAG_MAX 1024

/* An XxlWindow node's window: its partition and order columns, its functions. */
typedef struct XxlPlanWindow
{
	XxlPlanCols part;
	XxlPlanCols order;
	int			nfuncs;			/* columns after the child's in the scan tuple, */
								/* whose expressions are the WindowFuncs */
	XxlWindowFunc *funcs;
} XxlPlanWindow;

/* wagg, or the XxlWindow node that computes it (after the child is final). */
extern Plan *xxl_plan_window(WindowAgg *wagg);
extern void xxl_plan_window_read(const CustomScan *cscan, XxlPlanWindow *window);

/* The node's executor methods (xxl_plan_window_exec.c). */
extern const CustomScanMethods xxl_plan_window_methods;

#endif							/* XXL_PG_PLAN_WINDOW_H */
