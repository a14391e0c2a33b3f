/*
 * xxl_table_fullscan.c — reading every row of an xxl table: a custom scan
 * that hands its parent the columns the plan needs, straight from the
 * pages, with no call through the table AM and no per-row executor work
 * it does not need.
 *
 * Why: a full scan of a (bigint, bigint) table is mostly executor
 * overhead around the rows (an aggregate's transition, the scan node, the
 * per-row memory context reset), and a sequential scan over an xxl table
 * spends a third of its own share on the AM call and the slot.  This node
 * fills its scan slot, which holds exactly the needed columns, and returns
 * it: no projection, no reset, no qual.
 *
 * Where: a table that is an xxl table (a partition too), with no row mark
 * (not the target of UPDATE or DELETE, not locked, so EvalPlanQual never
 * asks this node for a row), no TABLESAMPLE, and only plain columns of it
 * wanted, by the plan and by its conditions.  The path costs a sequential
 * scan with half its per-row CPU, so it wins over it (the ordered scan's
 * key bounds, costed at their selectivity, win over both).  It projects
 * and filters as a sequential scan does, then through ExecScan.
 *
 * Page ranges: conditions "integer column op value" (xxl_column_bounds;
 * smallint, integer, bigint, date, time, timestamp, timestamptz: types
 * whose order is their integer's) bound the column; a packed page whose
 * least and greatest value of the column both lie on one side of the
 * range is skipped unread.  The conditions stay in the qual.
 *
 * It is not parallel-aware
 * (Parallel Seq Scan stays for parallel plans), cannot mark, restore or
 * scan backwards (the planner adds a Material node where that is needed).
 * xxl.full_scan = off turns it off.
 */
#include "postgres.h"

#include "access/table.h"
#include "access/nbtree.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/prep.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "utils/rel.h"

#include "pg/table/xxl_table_nodes.h"
#include "pg/plan/plan.h"
#include "pg/runtime/runtime.h"

#define SCAN_NAME "XxlFullScan"

typedef struct FullScanState
{
	CustomScanState css;
	TableScanDesc scan;
	AttrNumber *cols;			/* the scan slot's columns, as the table's attribute numbers */
	int			ncols;
	Oid			relid;
	bool		direct;			/* no projection, no qual: the scan slot is the result */
	/* page ranges: the bounded columns and strategies, their values' states */
	List	   *range_attnos;
	List	   *range_strategies;
	List	   *range_states;
	bool		ranges_set;		/* this scan's values evaluated */
} FullScanState;

static set_rel_pathlist_hook_type prev_set_rel_pathlist = NULL;

static Plan *plan_full_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							List *tlist, List *clauses, List *custom_plans);
static Node *create_full_state(CustomScan *cscan);
static void begin_full(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_full(CustomScanState *node);
static void end_full(CustomScanState *node);
static void rescan_full(CustomScanState *node);
static void explain_full(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomPathMethods full_path_methods = {
	.CustomName = SCAN_NAME,
	.PlanCustomPath = plan_full_path,
};

static const CustomScanMethods full_scan_methods = {
	.CustomName = SCAN_NAME,
	.CreateCustomScanState = create_full_state,
};

static const CustomExecMethods full_exec_methods = {
	.CustomName = SCAN_NAME,
	.BeginCustomScan = begin_full,
	.ExecCustomScan = exec_full,
	.EndCustomScan = end_full,
	.ReScanCustomScan = rescan_full,
	.ExplainCustomScan = explain_full,
};

/* Planning ----------------------------------------------------------------------------- */

/* Whether rel is a whole xxl table this node may read (see the head comment). */
bool
xxl_full_scan_allowed(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	ListCell   *lc;
	Relation	r;
	bool		is_xxl;

	if (!xxl_full_scan || rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_RELATION ||
		rte->inh || rte->tablesample != NULL ||
		(rel->reloptkind != RELOPT_BASEREL && rel->reloptkind != RELOPT_OTHER_MEMBER_REL) ||
		IS_DUMMY_REL(rel) ||
		rti == (Index) root->parse->resultRelation || bms_is_member(rti, root->all_result_relids) ||
		get_plan_rowmark(root->rowMarks, rti) != NULL)
		return false;
	foreach(lc, rel->reltarget->exprs)
	{
		Var		   *v = lfirst(lc);

		if (!IsA(v, Var) || v->varno != (int) rti || v->varattno <= 0 || v->varlevelsup != 0)
			return false;
	}
	/* the conditions' columns join the scan tuple: plain columns only */
	foreach(lc, rel->baserestrictinfo)
	{
		List	   *vars = pull_var_clause((Node *) lfirst_node(RestrictInfo, lc)->clause,
										   PVC_RECURSE_PLACEHOLDERS);
		ListCell   *lv;

		foreach(lv, vars)
		{
			Var		   *v = lfirst(lv);

			if (!IsA(v, Var) || v->varno != (int) rti || v->varattno <= 0 || v->varlevelsup != 0)
				return false;
		}
	}
	r = table_open(rte->relid, NoLock);
	is_xxl = xxl_is_table(r);
	table_close(r, NoLock);
	return is_xxl;
}

static void
full_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	CustomPath *cpath;
	Path	   *seq;

	if (prev_set_rel_pathlist)
		prev_set_rel_pathlist(root, rel, rti, rte);
	if (!xxl_full_scan_allowed(root, rel, rti, rte) || (seq = xxl_seqscan_path(rel)) == NULL)
		return;
	cpath = xxl_custom_path(rel, &full_path_methods);
	cpath->path.startup_cost = seq->startup_cost;
	cpath->path.total_cost = seq->total_cost - 0.5 * cpu_tuple_cost * rel->tuples;
	cpath->custom_private = xxl_page_ranges(rel, rte->relid, NULL);
	/* a projection above it runs in it (through ExecScan), as a sequential scan's does */
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	add_path(rel, &cpath->path);
}

/* Add the plain columns clauses use to tlist (scan tuple entries), if not there. */
static List *
add_clause_columns(List *tlist, List *clauses)
{
	List	   *vars = pull_var_clause((Node *) clauses, PVC_RECURSE_PLACEHOLDERS);
	ListCell   *lc;

	foreach(lc, vars)
	{
		Var		   *v = lfirst(lc);

		if (tlist_member((Expr *) v, tlist) == NULL)
			tlist = lappend(tlist, makeTargetEntry((Expr *) copyObject(v), list_length(tlist) + 1,
												   NULL, false));
	}
	return tlist;
}

/*
 * The scan tuple is the path's columns (custom_scan_tlist, from the path
 * target: the tlist given is empty when a projection is to replace it), so
 * that a plan that returns them as they are needs no projection; no
 * columns at all (count(*)) leave the table's row type, and a projection
 * to nothing.
 */
static Plan *
plan_full_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
			   List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	ListCell   *lc;

	cscan->scan.plan.qual = extract_actual_clauses(clauses, false);
	cscan->scan.scanrelid = rel->relid;
	cscan->flags = best_path->flags;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = NIL;
	foreach(lc, best_path->path.pathtarget->exprs)
	{
		Var		   *v = lfirst(lc);

		Assert(IsA(v, Var) && v->varattno > 0);
		cscan->custom_scan_tlist = lappend(cscan->custom_scan_tlist,
										   makeTargetEntry((Expr *) copyObject(v),
														   list_length(cscan->custom_scan_tlist) + 1,
														   NULL, false));
	}
	cscan->scan.plan.targetlist = tlist != NIL ? tlist : copyObject(cscan->custom_scan_tlist);
	/* the conditions read their columns from the scan tuple too */
	cscan->custom_scan_tlist = add_clause_columns(cscan->custom_scan_tlist,
												  cscan->scan.plan.qual);
	cscan->custom_private = NIL;
	if (best_path->custom_private != NIL)
	{
		/* the ranges' values, so that setrefs resolves their parameters */
		cscan->custom_private = list_make2(copyObject(linitial(best_path->custom_private)),
										   copyObject(lsecond(best_path->custom_private)));
		cscan->custom_exprs = copyObject(lthird(best_path->custom_private));
	}
	cscan->methods = &full_scan_methods;
	return &cscan->scan.plan;
}

/* Execution ---------------------------------------------------------------------------- */

static Node *
create_full_state(CustomScan *cscan)
{
	FullScanState *st = palloc0(sizeof(FullScanState));
	ListCell   *lc;

	NodeSetTag(st, T_CustomScanState);
	st->css.flags = cscan->flags;
	st->css.methods = &full_exec_methods;
	/* the scan slot's columns: the table's columns its entries name */
	st->cols = palloc(sizeof(AttrNumber) * Max(list_length(cscan->custom_scan_tlist), 1));
	foreach(lc, cscan->custom_scan_tlist)
		st->cols[st->ncols++] = castNode(Var, lfirst_node(TargetEntry, lc)->expr)->varattno;
	if (cscan->custom_private != NIL)
	{
		st->range_attnos = linitial(cscan->custom_private);
		st->range_strategies = lsecond(cscan->custom_private);
	}
	return (Node *) st;
}

static void
begin_full(CustomScanState *node, EState *estate, int eflags)
{
	FullScanState *st = (FullScanState *) node;
	Relation	rel = node->ss.ss_currentRelation;

	st->relid = RelationGetRelid(rel);
	/* no columns asked for: the scan slot has the table's row type, left unfilled */
	st->direct = node->ss.ps.ps_ProjInfo == NULL && node->ss.ps.qual == NULL;
	if (st->range_attnos != NIL)
		st->range_states = ExecInitExprList(((CustomScan *) node->ss.ps.plan)->custom_exprs,
											&node->ss.ps);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	st->scan = table_beginscan(rel, estate->es_snapshot, 0, NULL);
}

/* The ranges' values for this scan, given to the table's scan. */
static void
set_ranges(FullScanState *st)
{
	XxlColumnRange *ranges;
	int			n;

	st->ranges_set = true;
	if (st->range_attnos == NIL || st->scan == NULL)
		return;
	n = xxl_ranges_evaluate(st->range_attnos, st->range_strategies, st->range_states,
							st->css.ss.ps.ps_ExprContext,
							RelationGetDescr(st->css.ss.ss_currentRelation), &ranges);
	xxl_scan_set_ranges(st->scan, ranges, n);
	/* (the scan keeps its own copy; a rescan evaluates them again) */
	pfree(ranges);
}

/* The next row into the scan slot, or the slot cleared at the end. */
static TupleTableSlot *
next_row(FullScanState *st)
{
	TupleTableSlot *slot = st->css.ss.ss_ScanTupleSlot;

	if (!xxl_scan_next_columns(st->scan, st->cols, st->ncols, slot->tts_values,
							   slot->tts_isnull, &slot->tts_tid))
		return ExecClearTuple(slot);
	/* the slot is virtual and owns nothing: what ExecStoreVirtualTuple does */
	slot->tts_flags &= ~TTS_FLAG_EMPTY;
	slot->tts_nvalid = st->ncols;
	slot->tts_tableOid = st->relid;
	return slot;
}

static TupleTableSlot *
scan_next(ScanState *ss)
{
	return next_row((FullScanState *) ss);
}

static bool
scan_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
exec_full(CustomScanState *node)
{
	FullScanState *st = (FullScanState *) node;

	if (unlikely(!st->ranges_set))
		set_ranges(st);
	/* (ExecCustomScan has checked for interrupts) */
	if (st->direct)
		return next_row(st);
	return ExecScan(&node->ss, scan_next, scan_recheck);
}

static void
end_full(CustomScanState *node)
{
	FullScanState *st = (FullScanState *) node;

	if (st->scan)
		table_endscan(st->scan);
	st->scan = NULL;
}

static void
rescan_full(CustomScanState *node)
{
	FullScanState *st = (FullScanState *) node;

	if (st->scan)
		table_rescan(st->scan, NULL);
	/* parameters may have changed */
	st->ranges_set = false;
}

static void
explain_full(CustomScanState *node, List *ancestors, ExplainState *es)
{
	FullScanState *st = (FullScanState *) node;

	if (st->range_attnos == NIL)
		return;
	ExplainPropertyInteger("Page Bounds", NULL, list_length(st->range_attnos), es);
	if (es->analyze && st->scan)
		ExplainPropertyInteger("Pages Skipped", NULL, (int64) xxl_scan_pages_skipped(st->scan), es);
}

void
xxl_table_fullscan_init(void)
{
	RegisterCustomScanMethods(&full_scan_methods);
	prev_set_rel_pathlist = set_rel_pathlist_hook;
	set_rel_pathlist_hook = full_set_rel_pathlist;
}
