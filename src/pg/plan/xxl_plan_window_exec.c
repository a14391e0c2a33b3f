/*
 * xxl_plan_window_exec.c — the XxlWindow node: row_number(), rank(),
 * dense_rank(), lag() and first_value() of a WindowAgg computed as its
 * sorted input streams through (which WindowAggs become one: xxl_plan_window.c).
 *
 * Each row of the child is compared with the first row of the current
 * partition and of the current group of peers, with the WindowAgg's own
 * equality operators and collations (NULLs equal to each other, as
 * WindowAgg compares them); only those first rows' key values are kept.
 * lag(x, k) keeps copies of x of the partition's last k rows in a ring,
 * first_value(x) a copy of x of its first row.
 * The scan tuple is the child's row plus the functions' values, and the
 * WindowAgg's target list is projected from it.  No row is stored, so the
 * node offers what WindowAgg offers: forward scans and rescans.
 */
#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"

#include "pg/plan/xxl_plan_window.h"

void
xxl_plan_window_read(const CustomScan *cscan, XxlPlanWindow *window)
{
	List	   *funcs = lthird(cscan->custom_private);

	xxl_plan_cols_read(linitial(cscan->custom_private), &window->part);
	xxl_plan_cols_read(lsecond(cscan->custom_private), &window->order);
	window->nfuncs = list_length(funcs);
	window->funcs = palloc(sizeof(XxlWindowFunc) * Max(window->nfuncs, 1));
	for (int i = 0; i < window->nfuncs; i++)
		window->funcs[i] = (XxlWindowFunc) list_nth_int(funcs, i);
}

/*
 * A lag() or first_value(): its argument expressions and copies of the
 * values it keeps: lag(x, k) the partition's last k, first_value (k = 1)
 * the first row's.
 */
typedef struct KeptValues
{
	ExprState  *value;			/* over the child's row */
	ExprState  *dflt;			/* lag's default at the current row, or NULL: NULL */
	int			k;
	int16		typlen;
	bool		typbyval;
	Datum	   *ring;			/* lag: the value of row r in ring[(r - 1) % k] */
	bool	   *ring_null;		/* true also where the slot owns no copy */
	Datum		held;			/* handed out from the ring: freed at the next row */
	bool		held_valid;
	MemoryContext cxt;			/* the copies */
} KeptValues;

typedef struct WindowState
{
	CustomScanState css;
	XxlPlanWindow window;
	KeptValues **kept;			/* per function: NULL unless lag() or first_value() */
	XxlGroupKey	part;
	XxlGroupKey	order;
	int			nchild;			/* the child's columns, first in the scan tuple */
	bool		started;		/* a partition has begun */
	int64		row_number;
	int64		rank;
	int64		dense_rank;
} WindowState;

static Node *create_window_state(CustomScan *cscan);
static void begin_window(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_window(CustomScanState *node);
static void end_window(CustomScanState *node);
static void rescan_window(CustomScanState *node);
static void explain_window(CustomScanState *node, List *ancestors, ExplainState *es);

const CustomScanMethods xxl_plan_window_methods = {
	.CustomName = XXL_PLAN_WINDOW_NAME,
	.CreateCustomScanState = create_window_state,
};

static const CustomExecMethods window_exec_methods = {
	.CustomName = XXL_PLAN_WINDOW_NAME,
	.BeginCustomScan = begin_window,
	.ExecCustomScan = exec_window,
	.EndCustomScan = end_window,
	.ReScanCustomScan = rescan_window,
	.ExplainCustomScan = explain_window,
};

static Node *
create_window_state(CustomScan *cscan)
{
	WindowState *state = palloc0(sizeof(WindowState));

	NodeSetTag(state, T_CustomScanState);
	state->css.flags = cscan->flags;
	state->css.methods = &window_exec_methods;
	xxl_plan_window_read(cscan, &state->window);
	return (Node *) state;
}

static KeptValues *
kept_init(CustomScanState *node, TargetEntry *tle, EState *estate)
{
	WindowFunc *wfunc = castNode(WindowFunc, tle->expr);
	KeptValues *kv = palloc0(sizeof(KeptValues));
	int			nargs = list_length(wfunc->args);

	kv->value = ExecInitExpr(linitial(wfunc->args), &node->ss.ps);
	/* (first_value has one argument: k = 1) */
	kv->k = nargs >= 2 ? DatumGetInt32(lsecond_node(Const, wfunc->args)->constvalue) : 1;
	kv->dflt = nargs >= 3 ? ExecInitExpr(lthird(wfunc->args), &node->ss.ps) : NULL;
	get_typlenbyval(wfunc->wintype, &kv->typlen, &kv->typbyval);
	kv->ring = palloc0(sizeof(Datum) * Max(kv->k, 1));
	kv->ring_null = palloc(sizeof(bool) * Max(kv->k, 1));
	memset(kv->ring_null, true, sizeof(bool) * Max(kv->k, 1));
	kv->cxt = AllocSetContextCreate(estate->es_query_cxt, "xxl window values", ALLOCSET_SMALL_SIZES);
	return kv;
}

/* A copy of v into the ring's slot, whose own copy (if any) is freed. */
static void
kept_store(KeptValues *kv, int slot, Datum v, bool vnull)
{
	MemoryContext old;

	if (!kv->ring_null[slot] && !kv->typbyval)
		pfree(DatumGetPointer(kv->ring[slot]));
	old = MemoryContextSwitchTo(kv->cxt);
	kv->ring[slot] = vnull || kv->typbyval ? v : datumCopy(v, false, kv->typlen);
	kv->ring_null[slot] = vnull;
	MemoryContextSwitchTo(old);
}

/*
 * lag()'s value at the row_number-th row of a partition (econtext's outer
 * tuple): the value k rows back, else the default.  What is handed out
 * stays valid until the next row.
 */
static void
lag_row(KeptValues *kv, int64 row_number, ExprContext *econtext, Datum *out, bool *isnull)
{
	bool		vnull;
	Datum		v = ExecEvalExpr(kv->value, econtext, &vnull);
	int			slot;

	if (kv->held_valid)
		pfree(DatumGetPointer(kv->held));
	kv->held_valid = false;
	if (kv->k == 0)
	{
		*out = v;
		*isnull = vnull;
		return;
	}
	slot = (int) ((row_number - 1) % kv->k);
	if (row_number > kv->k)
	{
		/* the slot's copy goes out, and is freed at the next row */
		*out = kv->ring[slot];
		*isnull = kv->ring_null[slot];
		kv->held = *out;
		kv->held_valid = !*isnull && !kv->typbyval;
		kv->ring_null[slot] = true;
	}
	else if (kv->dflt)
		*out = ExecEvalExpr(kv->dflt, econtext, isnull);
	else
	{
		*out = (Datum) 0;
		*isnull = true;
	}
	kept_store(kv, slot, v, vnull);
}

/* first_value()'s value at the row_number-th row of a partition: its first row's. */
static void
first_value_row(KeptValues *kv, int64 row_number, ExprContext *econtext, Datum *out, bool *isnull)
{
	if (row_number == 1)
	{
		bool		vnull;
		Datum		v = ExecEvalExpr(kv->value, econtext, &vnull);

		/* the partition before's copy: its last row was handed on already */
		kept_store(kv, 0, v, vnull);
	}
	*out = kv->ring[0];
	*isnull = kv->ring_null[0];
}

static void
begin_window(CustomScanState *node, EState *estate, int eflags)
{
	WindowState *state = (WindowState *) node;
	TupleDesc	child;

	/* as WindowAgg: REWIND passes to the child, nothing else is asked of it */
	Assert(!(eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)));
	outerPlanState(node) = ExecInitNode(outerPlan(node->ss.ps.plan), estate, eflags);
	child = ExecGetResultType(outerPlanState(node));
	state->nchild = child->natts;
	xxl_group_key_init(&state->part, &state->window.part, child, estate);
	xxl_group_key_init(&state->order, &state->window.order, child, estate);
	state->kept = palloc0(sizeof(KeptValues *) * Max(state->window.nfuncs, 1));
	for (int i = 0; i < state->window.nfuncs; i++)
	{
		/* the function's own expression is its scan tuple column's */
		List	   *scan_tlist = ((CustomScan *) node->ss.ps.plan)->custom_scan_tlist;

		if (state->window.funcs[i] == XXL_WINDOW_LAG ||
			state->window.funcs[i] == XXL_WINDOW_FIRST_VALUE)
			state->kept[i] = kept_init(node, list_nth_node(TargetEntry, scan_tlist, state->nchild + i),
									   estate);
	}
}

/* The functions' values for the next row, which begins what it begins. */
static void
count_row(WindowState *state, TupleTableSlot *row)
{
	if (!state->started || !xxl_group_key_match(&state->part, row))
	{
		state->started = true;
		state->row_number = state->rank = state->dense_rank = 1;
		xxl_group_key_keep(&state->part, row);
		xxl_group_key_keep(&state->order, row);
		return;
	}
	state->row_number++;
	/* without ORDER BY, every row of a partition is a peer of the first */
	if (state->order.cols.n > 0 && !xxl_group_key_match(&state->order, row))
	{
		state->rank = state->row_number;
		state->dense_rank++;
		xxl_group_key_keep(&state->order, row);
	}
}

static TupleTableSlot *
exec_window(CustomScanState *node)
{
	WindowState *state = (WindowState *) node;
	TupleTableSlot *scan = node->ss.ss_ScanTupleSlot;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	TupleTableSlot *row;
	MemoryContext old;

	CHECK_FOR_INTERRUPTS();
	ResetExprContext(econtext);
	row = ExecProcNode(outerPlanState(node));
	ExecClearTuple(scan);
	if (TupIsNull(row))
		return node->ss.ps.ps_ProjInfo ? ExecClearTuple(node->ss.ps.ps_ResultTupleSlot) : scan;
	slot_getallattrs(row);

	/* equality functions and lag()'s or first_value()'s expressions may allocate: per row */
	old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	count_row(state, row);
	econtext->ecxt_outertuple = row;
	for (int i = 0; i < state->window.nfuncs; i++)
	{
		Datum	   *v = &scan->tts_values[state->nchild + i];
		bool	   *isnull = &scan->tts_isnull[state->nchild + i];

		*isnull = false;
		switch (state->window.funcs[i])
		{
			case XXL_WINDOW_ROW_NUMBER:
				*v = Int64GetDatum(state->row_number);
				break;
			case XXL_WINDOW_RANK:
				*v = Int64GetDatum(state->rank);
				break;
			case XXL_WINDOW_DENSE_RANK:
				*v = Int64GetDatum(state->dense_rank);
				break;
			case XXL_WINDOW_LAG:
				lag_row(state->kept[i], state->row_number, econtext, v, isnull);
				break;
			case XXL_WINDOW_FIRST_VALUE:
				first_value_row(state->kept[i], state->row_number, econtext, v, isnull);
				break;
		}
	}
	MemoryContextSwitchTo(old);

	memcpy(scan->tts_values, row->tts_values, sizeof(Datum) * state->nchild);
	memcpy(scan->tts_isnull, row->tts_isnull, sizeof(bool) * state->nchild);
	ExecStoreVirtualTuple(scan);
	if (node->ss.ps.ps_ProjInfo == NULL)
		return scan;
	econtext->ecxt_scantuple = scan;
	return ExecProject(node->ss.ps.ps_ProjInfo);
}

static void
end_window(CustomScanState *node)
{
	ExecEndNode(outerPlanState(node));
}

static void
rescan_window(CustomScanState *node)
{
	WindowState *state = (WindowState *) node;
	PlanState  *child = outerPlanState(node);

	ExecScanReScan(&node->ss);
	state->started = false;
	/* a child with changed parameters rescans itself on its next fetch */
	if (child->chgParam == NULL)
		ExecReScan(child);
}

/* EXPLAIN ----------------------------------------------------------------- */

static const char *const func_names[] = {
	[XXL_WINDOW_ROW_NUMBER] = "row_number()",
	[XXL_WINDOW_RANK] = "rank()",
	[XXL_WINDOW_DENSE_RANK] = "dense_rank()",
	[XXL_WINDOW_LAG] = "lag()",
	[XXL_WINDOW_FIRST_VALUE] = "first_value()",
};

static void
explain_window(CustomScanState *node, List *ancestors, ExplainState *es)
{
	WindowState *state = (WindowState *) node;
	List	   *funcs = NIL;

	for (int i = 0; i < state->window.nfuncs; i++)
		funcs = lappend(funcs, (char *) func_names[state->window.funcs[i]]);
	ExplainPropertyList("Window Functions", funcs, es);
	if (state->window.part.n > 0)
		ExplainPropertyList("Partition By", xxl_plan_cols_texts(node, &state->window.part, ancestors, es), es);
	if (state->window.order.n > 0)
		ExplainPropertyList("Order By", xxl_plan_cols_texts(node, &state->window.order, ancestors, es), es);
}
