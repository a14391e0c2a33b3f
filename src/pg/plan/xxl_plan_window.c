/*
 * xxl_plan_window.c — which WindowAgg nodes become XxlWindow nodes
 * (xxl.window_in_plans), and how.
 *
 * Over a sorted input, row_number(), rank() and dense_rank() need nothing
 * but the current row and where the last partition and the last group of
 * peers began, lag() the values of the last rows of the partition, and
 * first_value() (of frames that start with the partition) its first row's.  PostgreSQL's WindowAgg evaluates them in its general frame
 * machinery instead: every row is copied into a tuplestore and read back,
 * and each function is called through the window API; over an XxlSort that
 * is twice the sort's own time (docs/plans.md).  So a WindowAgg whose
 * functions are all of those becomes an XxlWindow node: the same
 * child, the same output, the functions' values counted as rows pass.  Its
 * input is sorted whatever its child (an XxlSort, a Sort kept for a small
 * input, an index scan, a Gather Merge, another window): WindowAgg itself
 * relies on that, and so does the node.
 *
 * It stays a WindowAgg when it has a run condition or a qual (PostgreSQL 15
 * stops early or filters there), a frame offset (evaluated and checked at
 * start even when no function reads the frame), a lag() or first_value()
 * the node does not take (lag_args_ok, first_value_ok), or any other function, including aggregates over the
 * window.
 *
 * The node's scan tuple is the child's row followed by one column per
 * distinct function; its target list is the WindowAgg's with the child's
 * columns read from the scan tuple and each function replaced by its
 * column.  custom_scan_tlist keeps the WindowFunc itself as that column's
 * expression, so that EXPLAIN VERBOSE names it as it named WindowAgg's.
 */
#include "postgres.h"

#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/fmgroids.h"

#include "pg/runtime/runtime.h"
#include "pg/plan/xxl_plan_window.h"

/*
 * lag's arguments as the node takes them: a value and a default that are
 * not volatile (WindowAgg evaluates the value when the row it lags to is
 * reached again, the node when that row passed: the same only for stable
 * expressions), an offset that is a constant from 0 to XXL_WINDOW_LAG_MAX.
 */
static bool
lag_args_ok(const List *args)
{
	if (list_length(args) < 1 || contain_volatile_functions((Node *) args))
		return false;
	if (list_length(args) >= 2)
	{
		const Const *k = (const Const *) lsecond(args);

		if (!IsA(k, Const) || k->consttype != INT4OID || k->constisnull ||
			DatumGetInt32(k->constvalue) < 0 || DatumGetInt32(k->constvalue) > XXL_WINDOW_LAG_MAX)
			return false;
	}
	return true;
}

/*
 * first_value() is the partition's first row's value when every frame
 * starts there and none excludes rows (frame offsets are refused for the
 * whole node), and its value is not volatile (WindowAgg evaluates it at
 * each row's frame head, the node once).
 */
static bool
first_value_ok(const WindowFunc *wfunc, int frame_options)
{
	return (frame_options & FRAMEOPTION_START_UNBOUNDED_PRECEDING) != 0 &&
		(frame_options & FRAMEOPTION_EXCLUSION) == 0 &&
		list_length(wfunc->args) == 1 && !contain_volatile_functions((Node *) wfunc->args);
}

/* The function wfunc is, or -1 if the node does not compute it. */
static int
window_func(const WindowFunc *wfunc, Index winref, int frame_options)
{
	if (wfunc->winref != winref || wfunc->winagg || wfunc->aggfilter != NULL)
		return -1;
	switch (wfunc->winfnoid)
	{
		case F_ROW_NUMBER:
			return wfunc->args == NIL ? XXL_WINDOW_ROW_NUMBER : -1;
		case F_RANK_:
			return wfunc->args == NIL ? XXL_WINDOW_RANK : -1;
		case F_DENSE_RANK_:
			return wfunc->args == NIL ? XXL_WINDOW_DENSE_RANK : -1;
		case F_LAG_ANYELEMENT:
		case F_LAG_ANYELEMENT_INT4:
		case F_LAG_ANYCOMPATIBLE_INT4_ANYCOMPATIBLE:
			return lag_args_ok(wfunc->args) ? XXL_WINDOW_LAG : -1;
		case F_FIRST_VALUE:
			return first_value_ok(wfunc, frame_options) ? XXL_WINDOW_FIRST_VALUE : -1;
		default:
			return -1;
	}
}

typedef struct FuncsContext
{
	Index		winref;
	int			frame_options;
	List	   *wfuncs;			/* distinct WindowFuncs, in order of appearance */
	bool		ok;
} FuncsContext;

static bool
collect_funcs(Node *node, FuncsContext *cxt)
{
	if (node == NULL)
		return false;
	if (IsA(node, WindowFunc))
	{
		if (window_func((WindowFunc *) node, cxt->winref, cxt->frame_options) < 0)
			cxt->ok = false;
		else if (!list_member(cxt->wfuncs, node))
			cxt->wfuncs = lappend(cxt->wfuncs, node);
		return false;
	}
	return expression_tree_walker(node, collect_funcs, cxt);
}

Plan *
xxl_plan_window(WindowAgg *wagg)
{
	Plan	   *child = wagg->plan.lefttree;
	FuncsContext funcs = {.winref = wagg->winref, .frame_options = wagg->frameOptions, .ok = true};
	CustomScan *cscan;
	List	   *kinds = NIL;
	ListCell   *lc;

	if (!xxl_window_in_plans || child == NULL || wagg->plan.qual != NIL ||
		wagg->runCondition != NIL || wagg->startOffset != NULL || wagg->endOffset != NULL)
		return &wagg->plan;
	(void) collect_funcs((Node *) wagg->plan.targetlist, &funcs);
	if (!funcs.ok)
		return &wagg->plan;

	foreach(lc, funcs.wfuncs)
		kinds = lappend_int(kinds, window_func(lfirst(lc), wagg->winref, wagg->frameOptions));
	cscan = xxl_plan_group_scan(&wagg->plan, funcs.wfuncs,
								list_make3(xxl_plan_cols_private(wagg->partNumCols, wagg->partColIdx,
																 wagg->partOperators,
																 wagg->partCollations),
										   xxl_plan_cols_private(wagg->ordNumCols, wagg->ordColIdx,
																 wagg->ordOperators,
																 wagg->ordCollations),
										   kinds),
								&xxl_plan_window_methods);
	return &cscan->scan.plan;
}
