/*
 * xxl_plan_sort.c — which Sort nodes of a finished plan become XxlSort
 * nodes (xxl.sort_in_plans), and how.
 *
 * The hook runs after the whole planner, on the PlannedStmt: every place a
 * Sort can stand (ORDER BY, DISTINCT and GROUP BY by sorting, window
 * functions, merge join inputs, sorts under Unique or Agg, in subqueries,
 * CTEs and SubPlans) is then one node type in one tree, including the sorts
 * createplan.c adds for merge joins without a path of their own.  The
 * planner's choices and costs stay PostgreSQL's: only the executor of the
 * sort changes, and with it nothing the plan above relies on, since XxlSort
 * returns the same rows in an order equal under the same operators, and
 * supports what Sort supports (rescan, mark/restore, backward scans:
 * xxl_plan_sort_exec.c).
 *
 * A Sort stays PostgreSQL's when
 *  - a Limit can pass it a bound at run time (ExecSetTupleBound reaches it
 *    through Result, SubqueryScan without a qual, Append, MergeAppend,
 *    Gather and Gather Merge) and the top-N heap of twice the bound, which
 *    PostgreSQL then keeps, fits in work_mem: that is cheaper than any full
 *    sort.  A bound the plan does not fix (a parameter, WITH TIES) counts as
 *    one that fits;
 *  - a key column has a type the sorter does not encode, a sort operator
 *    of another operator class than the type's default btree class (e.g.
 *    text_pattern_ops), or a nondeterministic collation, when the sort is
 *    big enough to be replaced otherwise.  EXPLAIN VERBOSE then says which
 *    under the plan, in text format (PostgreSQL 15 has no hook per node);
 *  - its estimated input (rows x width, as cost_sort estimates it) is no
 *    more than xxl.sort_in_plans_threshold (-1: work_mem), i.e. the sort is
 *    expected to fit in memory, where PostgreSQL's quicksort is as good.
 * No key shape or collation is slower here (bench/run_sort_shapes.sh): a
 * key whose leading columns are bytes and whose later ones are in a libc
 * collation sorts faster since the sorter abbreviates it
 * (xxl_key_abbrev), C.UTF-8 compares as bytes, and ICU keys compare a
 * prefix of their sort key first, as PostgreSQL's abbreviated keys do.
 * IncrementalSort nodes are left alone: they sort small groups of an
 * already ordered input.  A WindowAgg of ranking functions only becomes
 * an XxlWindow (xxl_plan_window.c).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "commands/explain.h"
#include "executor/instrument.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/planner.h"
#include "tcop/tcopprot.h"
#include "utils/lsyscache.h"
#include "utils/guc.h"

#include "pg/runtime/runtime.h"
#include "pg/plan/xxl_plan_agg.h"
#include "pg/plan/xxl_plan_columns.h"
#include "pg/plan/xxl_plan_sort.h"
#include "pg/plan/xxl_plan_window.h"
#include "pg/sort/sort.h"

static planner_hook_type prev_planner = NULL;
static ExplainOneQuery_hook_type prev_explain_one_query = NULL;

/* While EXPLAIN plans: why Sorts (and MergeAppends) stayed PostgreSQL's, for EXPLAIN VERBOSE */
static bool collect_kept = false;
static List *kept_sorts = NIL;

/* What stands in a (Merge)Append's place (xxl_plan_keys.h), and the statement's range table */
static XxlPlanAppendHook appends_hook = NULL;
static List *walk_rtable = NIL;

void
xxl_plan_register_appends(XxlPlanAppendHook hook)
{
	appends_hook = hook;
}

#define NO_BOUND (-1.0)		/* no Limit reaches the node */
#define SOME_BOUND (-2.0)		/* one does, with a bound the plan does not fix */

/* What the hook puts in plan's place, its reason to keep plan noted for EXPLAIN VERBOSE. */
static Plan *
replace_append(Plan *plan, double bound)
{
	const char *why = NULL;
	Plan	   *replaced;

	if (appends_hook == NULL || bound != NO_BOUND)
		return plan;
	replaced = appends_hook(plan, walk_rtable, &why);
	if (collect_kept && why != NULL)
		kept_sorts = lappend(kept_sorts, (void *) why);
	return replaced;
}

/* A Sort's rows in memory, as cost_sort estimates them. */
static double
sort_bytes(const Sort *sort, double rows)
{
	return rows * (MAXALIGN(sort->plan.plan_width) + MAXALIGN(SizeofHeapTupleHeader));
}

bool
xxl_plan_rows_beyond_threshold(const Plan *plan)
{
	if (xxl_sort_in_plans_threshold_kb == 0)
		return true;
	return plan->plan_rows * (MAXALIGN(plan->plan_width) + MAXALIGN(SizeofHeapTupleHeader)) >
		1024.0 * (xxl_sort_in_plans_threshold_kb > 0 ? xxl_sort_in_plans_threshold_kb : work_mem);
}

/* Whether the sort is expected to outgrow the threshold, and no top-N heap could do. */
static bool
big_enough(const Sort *sort, double bound)
{
	double		rows = sort->plan.plan_rows;

	if (bound == SOME_BOUND ||
		(bound >= 0 && sort_bytes(sort, 2 * Min(bound, rows)) <= 1024.0 * work_mem))
		return false;
	return xxl_plan_rows_beyond_threshold(&sort->plan);
}

/* The bound a Limit passes down: count + offset, when both are constants. */
static double
limit_bound(const Limit *limit)
{
	const Const *count = (const Const *) limit->limitCount;
	const Const *offset = (const Const *) limit->limitOffset;
	double		bound;

	if (count == NULL)
		return NO_BOUND;		/* OFFSET alone: ExecLimit passes no bound */
	if (limit->limitOption != LIMIT_OPTION_COUNT || !IsA(count, Const) ||
		count->consttype != INT8OID || (offset != NULL && (!IsA(offset, Const) ||
														   offset->consttype != INT8OID)))
		return SOME_BOUND;
	if (count->constisnull)
		return NO_BOUND;
	bound = (double) DatumGetInt64(count->constvalue);
	if (offset != NULL && !offset->constisnull)
		bound += (double) Max(DatumGetInt64(offset->constvalue), 0);
	return Max(bound, 0);
}

/*
 * Whether the sorter sorts sort's rows exactly as it would; where a key
 * column is why not, *why says so (for EXPLAIN VERBOSE).
 */
static bool
replaceable(const Sort *sort, const char **why)
{
	const Plan *child = sort->plan.lefttree;

	if (child == NULL || sort->plan.qual != NIL ||
		list_length(sort->plan.targetlist) != list_length(child->targetlist))
		return false;
	if (!xxl_plan_tlist_passes_through(sort->plan.targetlist))
		return false;
	*why = xxl_plan_keys_refused(sort->plan.targetlist, sort->numCols, sort->sortColIdx,
								 sort->sortOperators, sort->collations);
	return *why == NULL;
}

/*
 * The XxlSort node for sort: its plan fields (costs, node id, parameters,
 * initPlans, parallel safety) and child as they were.  The scan tuple is
 * the child's row (custom_scan_tlist: references to the child's columns,
 * so that EXPLAIN shows the child's expressions); the node returns it as is.
 */
static Plan *
make_plan_sort(Sort *sort)
{
	CustomScan *cscan = makeNode(CustomScan);

	cscan->scan.plan = sort->plan;
	cscan->scan.plan.type = T_CustomScan;
	cscan->scan.plan.targetlist = xxl_plan_column_refs(sort->plan.targetlist, INDEX_VAR);
	cscan->scan.scanrelid = 0;
	cscan->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN | CUSTOMPATH_SUPPORT_MARK_RESTORE;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = NIL;
	cscan->custom_private = xxl_plan_keys_private(sort->numCols, sort->sortColIdx,
												  sort->sortOperators, sort->collations,
												  sort->nullsFirst);
	cscan->custom_scan_tlist = xxl_plan_column_refs(sort->plan.targetlist, OUTER_VAR);
	cscan->custom_relids = NULL;
	cscan->methods = &xxl_plan_sort_methods;
	return &cscan->scan.plan;
}

static List *replace_in_list(List *plans, double bound);

/*
 * An XxlSort right under a Unique whose every column is a key column,
 * compared with the equality of the key's ordering: the sort may drop a
 * row whose key came before (XxlSortRunOptions.distinct), since rows equal
 * in the whole key are equal in the Unique's columns, and which of them
 * the Unique keeps is the sort's choice anyway.
 *
 * When the key has no other column, the Unique has nothing left to do and
 * goes: the key encodings are normalized (xxl_sortkey.c: numeric 1.0 and
 * 1.00, -0 and +0, every NaN, char(n)'s trailing blanks encode alike, and
 * deterministic collations call only identical strings equal), so values
 * equal under the key's equality have equal key bytes, and the sort hands
 * out one row per group in both directions (a backward scan reads its
 * store of rows already handed out).  Returns what stands in the
 * Unique's place.
 */
static Plan *
mark_distinct(Unique *u)
{
	CustomScan *cscan = (CustomScan *) u->plan.lefttree;
	List	   *cols,
			   *ops;
	ListCell   *lc_u,
			   *lc_s;

	if (cscan == NULL || !IsA(cscan, CustomScan) || cscan->methods != &xxl_plan_sort_methods)
		return &u->plan;
	cols = linitial(cscan->custom_private);
	ops = lsecond(cscan->custom_private);
	for (int i = 0; i < u->numCols; i++)
	{
		int			k = 0;
		ListCell   *lc;

		foreach(lc, cols)
		{
			if (lfirst_int(lc) == u->uniqColIdx[i])
				break;
			k++;
		}
		if (lc == NULL ||
			get_equality_op_for_ordering_op(list_nth_oid(ops, k), NULL) != u->uniqOperators[i])
			return &u->plan;
	}
	cscan->custom_private = lappend(cscan->custom_private, makeInteger(1));
	if (list_length(cols) != u->numCols)
		return &u->plan;

	/*
	 * The sort in the Unique's place: its row estimate, initPlans and
	 * parameters, and its target list's names (which name a query's result
	 * columns when it is the top node); the columns are the same.
	 */
	if (list_length(u->plan.targetlist) != list_length(cscan->scan.plan.targetlist))
		return &u->plan;
	forboth(lc_u, u->plan.targetlist, lc_s, cscan->scan.plan.targetlist)
	{
		TargetEntry *from = lfirst_node(TargetEntry, lc_u);
		TargetEntry *to = lfirst_node(TargetEntry, lc_s);

		to->resname = from->resname;
		to->ressortgroupref = from->ressortgroupref;
		to->resorigtbl = from->resorigtbl;
		to->resorigcol = from->resorigcol;
		to->resjunk = from->resjunk;
	}
	cscan->scan.plan.plan_rows = u->plan.plan_rows;
	cscan->scan.plan.total_cost = u->plan.total_cost;
	cscan->scan.plan.initPlan = list_concat(cscan->scan.plan.initPlan, u->plan.initPlan);
	cscan->scan.plan.extParam = bms_union(cscan->scan.plan.extParam, u->plan.extParam);
	cscan->scan.plan.allParam = bms_union(cscan->scan.plan.allParam, u->plan.allParam);
	return &cscan->scan.plan;
}

/*
 * A merge join's inner side without the Material that createplan.c puts
 * over a Sort expected to spill (a spilled Sort's mark/restore costs a
 * random-access final merge): XxlSort keeps the marked rows itself, as
 * encoded records, which costs less than Material's copy of every row into
 * a tuplestore, and it does what else Material does for a parent (rescans,
 * backward fetches).  Material projects nothing, so the join reads the same
 * columns.
 */
static Plan *
inner_without_material(Plan *inner)
{
	Plan	   *child;

	if (inner == NULL || !IsA(inner, Material) || inner->initPlan != NIL)
		return inner;
	child = inner->lefttree;
	if (child == NULL || !IsA(child, CustomScan) ||
		((CustomScan *) child)->methods != &xxl_plan_sort_methods)
		return inner;
	return child;
}

/*
 * plan with its replaceable Sorts replaced.  bound: what a Limit above may
 * pass this node at run time (see the file comment), or NO_BOUND.
 */
static Plan *
replace_sorts(Plan *plan, double bound)
{
	if (plan == NULL)
		return NULL;
	check_stack_depth();
	switch (nodeTag(plan))
	{
		case T_Limit:
			plan->lefttree = replace_sorts(plan->lefttree, limit_bound((Limit *) plan));
			return plan;
		case T_Result:
		case T_Gather:
		case T_GatherMerge:
			plan->lefttree = replace_sorts(plan->lefttree, bound);
			return plan;
		case T_SubqueryScan:
			{
				SubqueryScan *sq = (SubqueryScan *) plan;

				sq->subplan = replace_sorts(sq->subplan, plan->qual == NIL ? bound : NO_BOUND);
				return plan;
			}
		case T_Append:
			((Append *) plan)->appendplans =
				replace_in_list(((Append *) plan)->appendplans, bound);
			return replace_append(plan, bound);
		case T_MergeAppend:
			((MergeAppend *) plan)->mergeplans =
				replace_in_list(((MergeAppend *) plan)->mergeplans, bound);
			return replace_append(plan, bound);
		case T_CustomScan:
			((CustomScan *) plan)->custom_plans =
				replace_in_list(((CustomScan *) plan)->custom_plans, NO_BOUND);
			break;
		case T_Unique:
			plan->lefttree = replace_sorts(plan->lefttree, NO_BOUND);
			return mark_distinct((Unique *) plan);
		case T_Agg:
			plan->lefttree = replace_sorts(plan->lefttree, NO_BOUND);
			return xxl_plan_agg((Agg *) plan);
		case T_WindowAgg:
			plan->lefttree = replace_sorts(plan->lefttree, NO_BOUND);
			return xxl_plan_window((WindowAgg *) plan);
		case T_MergeJoin:
			plan->lefttree = replace_sorts(plan->lefttree, NO_BOUND);
			plan->righttree = inner_without_material(replace_sorts(plan->righttree, NO_BOUND));
			return plan;
		case T_Sort:
			plan->lefttree = replace_sorts(plan->lefttree, NO_BOUND);
			if (big_enough((Sort *) plan, bound))
			{
				const char *why = NULL;

				if (replaceable((Sort *) plan, &why))
					return make_plan_sort((Sort *) plan);
				if (collect_kept && why != NULL)
					kept_sorts = lappend(kept_sorts, psprintf("XxlSort not used for a Sort: %s", why));
			}
			return plan;
		default:
			break;
	}
	plan->lefttree = replace_sorts(plan->lefttree, NO_BOUND);
	plan->righttree = replace_sorts(plan->righttree, NO_BOUND);
	return plan;
}

static List *
replace_in_list(List *plans, double bound)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = replace_sorts((Plan *) lfirst(lc), bound);
	return plans;
}

static PlannedStmt *
plan_sort_planner(Query *parse, const char *query_string, int cursorOptions,
				  ParamListInfo boundParams)
{
	PlannedStmt *stmt;

	if (prev_planner)
		stmt = prev_planner(parse, query_string, cursorOptions, boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions, boundParams);
	if (xxl_sort_in_plans)
	{
		walk_rtable = stmt->rtable;
		stmt->planTree = replace_sorts(stmt->planTree, NO_BOUND);
		/* SubPlans, initPlans and CTEs: entries may be NULL (unused) */
		stmt->subplans = replace_in_list(stmt->subplans, NO_BOUND);
		walk_rtable = NIL;
	}
	return stmt;
}

/*
 * EXPLAIN of a query: ExplainOneQuery's own planning and output (which it
 * does without a hook), with the reasons Sorts stayed PostgreSQL's
 * collected while planning and, under EXPLAIN VERBOSE in text, printed
 * after the plan.
 */
static void
plan_sort_explain(Query *query, int cursorOptions, IntoClause *into, ExplainState *es,
				  const char *queryString, ParamListInfo params, QueryEnvironment *queryEnv)
{
	PlannedStmt *plan;
	instr_time	planstart,
				planduration;
	BufferUsage bufusage_start,
				bufusage;
	List	   *kept;
	ListCell   *lc;

	if (prev_explain_one_query)
	{
		prev_explain_one_query(query, cursorOptions, into, es, queryString, params, queryEnv);
		return;
	}
	if (es->buffers)
		bufusage_start = pgBufferUsage;
	INSTR_TIME_SET_CURRENT(planstart);
	collect_kept = true;
	kept_sorts = NIL;
	PG_TRY();
	{
		plan = pg_plan_query(query, queryString, cursorOptions, params);
	}
	PG_FINALLY();
	{
		collect_kept = false;
	}
	PG_END_TRY();
	kept = kept_sorts;
	kept_sorts = NIL;
	INSTR_TIME_SET_CURRENT(planduration);
	INSTR_TIME_SUBTRACT(planduration, planstart);
	if (es->buffers)
	{
		memset(&bufusage, 0, sizeof(BufferUsage));
		BufferUsageAccumDiff(&bufusage, &pgBufferUsage, &bufusage_start);
	}
	ExplainOnePlan(plan, into, es, queryString, params, queryEnv, &planduration,
				   es->buffers ? &bufusage : NULL);
	if (es->verbose && es->format == EXPLAIN_FORMAT_TEXT)
		foreach(lc, kept)
			appendStringInfo(es->str, "%s\n", (const char *) lfirst(lc));
}

void
xxl_plan_sort_init(void)
{
	RegisterCustomScanMethods(&xxl_plan_sort_methods);
	RegisterCustomScanMethods(&xxl_plan_window_methods);
	RegisterCustomScanMethods(&xxl_plan_agg_methods);
	prev_planner = planner_hook;
	planner_hook = plan_sort_planner;
	prev_explain_one_query = ExplainOneQuery_hook;
	ExplainOneQuery_hook = plan_sort_explain;
}
