/*
 * xxl_table_aggscan.c — whole-table aggregates of an xxl table computed in
 * the scan: a custom scan that replaces Aggregate over the full scan for
 * count(*), count(column), sum, avg, min and max of integer columns, and
 * works a column and a page at a time (xxl_scan_next_column_run): a packed
 * page's columns are decoded into arrays and summed there, with no row,
 * slot or transition call per row.
 *
 * Why: over a (bigint, bigint) table, Aggregate's per-row work (fetching
 * the row from its child, the transition functions, the per-row memory
 * reset) costs three times what the full scan's own does, so a faster
 * scan alone cannot make such a query much faster.
 *
 * Where: the grouping stage of a query over one xxl table that the full
 * scan may read (xxl_full_scan_allowed), whose conditions are all bounds
 * on integer-ordered columns (xxl_page_ranges: they skip packed pages and
 * filter the rows a column at a time), with no GROUP BY, grouping sets or
 * HAVING, and whose aggregates are all of: count(*),
 * count(column) of any column, sum and avg of smallint, integer and
 * bigint, min and max of those, date, time, timestamp and timestamptz,
 * without DISTINCT, ORDER BY or FILTER.  Results are those of
 * PostgreSQL's own aggregates (sum of bigint and avg are numeric; a sum
 * over no rows is NULL).  xxl.full_scan = off turns it off with the full
 * scan.
 */
#include "postgres.h"

#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/cost.h"
#include "optimizer/pathnode.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/numeric.h"
#include "utils/rel.h"

#include "pg/table/xxl_table_nodes.h"
#include "pg/plan/plan.h"
#include "pg/runtime/runtime.h"

#define SCAN_NAME "XxlAggScan"

typedef enum AggKind
{
	AGG_COUNT_STAR,
	AGG_COUNT,
	AGG_SUM,
	AGG_AVG,
	AGG_MIN,
	AGG_MAX
} AggKind;

/* One aggregate's state. */
typedef struct AggAcc
{
	AggKind		kind;
	Oid			result;			/* its result type */
	int			col;			/* the scan column it reads (-1: none) */
	int64		count;			/* rows it saw (non-null ones, but for count(*)) */
	int128		sum;
	int64		min;
	int64		max;
} AggAcc;

typedef struct AggScanState
{
	CustomScanState css;
	Relation	rel;
	TableScanDesc scan;
	AttrNumber *cols;			/* the table columns the aggregates read */
	int			ncols;
	AggAcc	   *accs;			/* one per custom_scan_tlist entry */
	int			naccs;
	bool		done;
	int64		rows;
	/* the conditions' bounds: columns, strategies, values' states; scan column of each range */
	List	   *range_attnos;
	List	   *range_strategies;
	List	   *range_states;
	XxlColumnRange *ranges;
	int			nranges;		/* -1: no row qualifies */
	int		   *range_cols;
	bool	   *sel;			/* the rows of a run the bounds keep */
	bool	   *kept_nulls;		/* each scan column's NULLs, the rows the bounds drop among them */
} AggScanState;

static create_upper_paths_hook_type prev_create_upper_paths = NULL;

static Plan *plan_agg_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
						   List *tlist, List *clauses, List *custom_plans);
static Node *create_agg_state(CustomScan *cscan);
static void begin_agg(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_agg(CustomScanState *node);
static void end_agg(CustomScanState *node);
static void rescan_agg(CustomScanState *node);
static void explain_agg(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomPathMethods agg_path_methods = {
	.CustomName = SCAN_NAME,
	.PlanCustomPath = plan_agg_path,
};

static const CustomScanMethods agg_scan_methods = {
	.CustomName = SCAN_NAME,
	.CreateCustomScanState = create_agg_state,
};

static const CustomExecMethods agg_exec_methods = {
	.CustomName = SCAN_NAME,
	.BeginCustomScan = begin_agg,
	.ExecCustomScan = exec_agg,
	.EndCustomScan = end_agg,
	.ReScanCustomScan = rescan_agg,
	.ExplainCustomScan = explain_agg,
};

/* Planning ------------------------------------------------------------------------------ */

/* Whether an aggregate's kind is one this node computes; its kind. */
static bool
agg_kind(Oid fn, AggKind *kind)
{
	switch (fn)
	{
		case F_COUNT_:
			*kind = AGG_COUNT_STAR;
			return true;
		case F_COUNT_ANY:
			*kind = AGG_COUNT;
			return true;
		case F_SUM_INT2:
		case F_SUM_INT4:
		case F_SUM_INT8:
			*kind = AGG_SUM;
			return true;
		case F_AVG_INT2:
		case F_AVG_INT4:
		case F_AVG_INT8:
			*kind = AGG_AVG;
			return true;
		case F_MIN_INT2:
		case F_MIN_INT4:
		case F_MIN_INT8:
		case F_MIN_DATE:
		case F_MIN_TIME:
		case F_MIN_TIMESTAMP:
		case F_MIN_TIMESTAMPTZ:
			*kind = AGG_MIN;
			return true;
		case F_MAX_INT2:
		case F_MAX_INT4:
		case F_MAX_INT8:
		case F_MAX_DATE:
		case F_MAX_TIME:
		case F_MAX_TIMESTAMP:
		case F_MAX_TIMESTAMPTZ:
			*kind = AGG_MAX;
			return true;
	}
	return false;
}

/*
 * The column an aggregate reads (0: none, count(*)), or -1 when this node
 * cannot compute it (rti 0: the plan's, whose Vars name the table however
 * setrefs numbered it).
 */
static AttrNumber
agg_column(Aggref *agg, Index rti)
{
	AggKind		kind;
	Var		   *v;

	if (agg->aggfilter != NULL || agg->aggdistinct != NIL || agg->aggorder != NIL ||
		agg->aggkind != AGGKIND_NORMAL || agg->agglevelsup != 0 || agg->aggvariadic ||
		agg->aggsplit != AGGSPLIT_SIMPLE || !agg_kind(agg->aggfnoid, &kind))
		return -1;
	if (kind == AGG_COUNT_STAR)
		return 0;
	if (list_length(agg->args) != 1)
		return -1;
	v = (Var *) linitial_node(TargetEntry, agg->args)->expr;
	if (!IsA(v, Var) || (rti != 0 && v->varno != (int) rti) || v->varattno <= 0 ||
		v->varlevelsup != 0)
		return -1;
	/* (the function's argument type is the column's: no cast in between) */
	return v->varattno;
}

static void
agg_upper_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
				RelOptInfo *output_rel, void *extra)
{
	Query	   *parse = root->parse;
	List	   *aggs;
	ListCell   *lc;
	RangeTblEntry *rte;
	CustomPath *cpath;
	Bitmapset  *cols = NULL;
	List	   *ranges,
			   *clauses;

	if (prev_create_upper_paths)
		prev_create_upper_paths(root, stage, input_rel, output_rel, extra);
	if (stage != UPPERREL_GROUP_AGG || !xxl_full_scan || !parse->hasAggs ||
		parse->groupClause != NIL || parse->groupingSets != NIL || parse->havingQual != NULL ||
		parse->hasTargetSRFs || input_rel->reloptkind != RELOPT_BASEREL ||
		bms_membership(input_rel->relids) != BMS_SINGLETON)
		return;
	rte = root->simple_rte_array[input_rel->relid];
	if (!xxl_full_scan_allowed(root, input_rel, input_rel->relid, rte))
		return;
	/* every condition a bound this node applies itself */
	ranges = xxl_page_ranges(input_rel, rte->relid, &clauses);
	foreach(lc, input_rel->baserestrictinfo)
		if (!list_member_ptr(clauses, lfirst(lc)))
			return;
	/* every aggregate one this node computes, no column outside them */
	aggs = pull_var_clause((Node *) output_rel->reltarget->exprs,
						   PVC_INCLUDE_AGGREGATES | PVC_RECURSE_PLACEHOLDERS);
	if (aggs == NIL)
		return;
	foreach(lc, aggs)
	{
		AttrNumber	attno;

		if (!IsA(lfirst(lc), Aggref) || (attno = agg_column(lfirst(lc), input_rel->relid)) < 0)
			return;
		if (attno > 0)
			cols = bms_add_member(cols, attno);
	}
	if (ranges != NIL)
		foreach(lc, (List *) linitial(ranges))
			cols = bms_add_member(cols, lfirst_int(lc));
	/* (the scan's column runs take that many) */
	if (bms_num_members(cols) > XXL_BYVAL_MAX_COLS)
		return;
	cpath = xxl_custom_path(output_rel, &agg_path_methods);
	cpath->path.rows = 1;
	/*
	 * Every page read (the pages the bounds skip are not known here), and a
	 * fifth of a row's CPU for each row, its aggregates and bounds: the
	 * arrays are worked a page at a time.  Paths that read less (the
	 * ordered scan's key bounds, an index) cost less when the bounds are
	 * narrow, and keep the Aggregate above them.
	 */
	cpath->path.startup_cost = cpath->path.total_cost =
		input_rel->pages * seq_page_cost +
		input_rel->tuples * 0.2 * (cpu_tuple_cost +
								   cpu_operator_cost * (list_length(aggs) +
														(ranges ? list_length(linitial(ranges)) : 0)));
	/* it reads the table as a sequential scan does: enable_seqscan = off holds for it too */
	if (!enable_seqscan)
		cpath->path.startup_cost = cpath->path.total_cost += disable_cost;
	cpath->custom_private = list_make3(makeInteger(input_rel->relid), aggs, ranges);
	add_path(output_rel, &cpath->path);
}

/*
 * The scan tuple is the aggregates' values (custom_scan_tlist), which
 * the plan's target list refers to.  The private list names the table by
 * OID: the plan of an upper relation has no scanrelid, and a range table
 * index would move when a subquery's plan joins its parent's (the entry
 * stays in the range table, so executor start locks and checks it).
 */
static Plan *
plan_agg_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
			  List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	List	   *ranges = lthird(best_path->custom_private);
	ListCell   *lc;

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = NIL;
	cscan->custom_private =
		list_make1(list_make1_oid(planner_rt_fetch(intVal(linitial(best_path->custom_private)),
												   root)->relid));
	if (ranges != NIL)
	{
		/* the bounds' values in custom_exprs, so that setrefs resolves their parameters */
		cscan->custom_private = lappend(cscan->custom_private, copyObject(linitial(ranges)));
		cscan->custom_private = lappend(cscan->custom_private, copyObject(lsecond(ranges)));
		cscan->custom_exprs = copyObject(lthird(ranges));
	}
	foreach(lc, (List *) lsecond(best_path->custom_private))
		cscan->custom_scan_tlist = lappend(cscan->custom_scan_tlist,
										   makeTargetEntry(copyObject(lfirst(lc)),
														   list_length(cscan->custom_scan_tlist) + 1,
														   NULL, false));
	cscan->methods = &agg_scan_methods;
	return &cscan->scan.plan;
}

/* Execution ----------------------------------------------------------------------------- */

/* The scan column that reads table column attno, added if none does (at the node's creation). */
static int
scan_column(AggScanState *st, AttrNumber attno)
{
	for (int k = 0; k < st->ncols; k++)
		if (st->cols[k] == attno)
			return k;
	st->cols[st->ncols] = attno;
	return st->ncols++;
}

static Node *
create_agg_state(CustomScan *cscan)
{
	AggScanState *st = palloc0(sizeof(AggScanState));
	int			n = list_length(cscan->custom_scan_tlist);
	ListCell   *lc;

	NodeSetTag(st, T_CustomScanState);
	st->css.flags = cscan->flags;
	st->css.methods = &agg_exec_methods;
	st->accs = palloc0(sizeof(AggAcc) * Max(n, 1));
	/* (columns of the aggregates and of the bounds) */
	st->cols = palloc(sizeof(AttrNumber) *
					  (Max(n, 1) + (list_length(cscan->custom_private) > 1 ?
									list_length(lsecond(cscan->custom_private)) : 0)));
	foreach(lc, cscan->custom_scan_tlist)
	{
		Aggref	   *agg = (Aggref *) lfirst_node(TargetEntry, lc)->expr;
		AggAcc	   *acc = &st->accs[st->naccs++];
		AttrNumber	attno = agg_column(agg, 0);

		(void) agg_kind(agg->aggfnoid, &acc->kind);
		acc->result = agg->aggtype;
		acc->col = -1;
		if (attno > 0)
			acc->col = scan_column(st, attno);
	}
	if (list_length(cscan->custom_private) > 1)
	{
		ListCell   *la;

		st->range_attnos = lsecond(cscan->custom_private);
		st->range_strategies = lthird(cscan->custom_private);
		st->range_cols = palloc(sizeof(int) * list_length(st->range_attnos));
		/* every bounded column read, whichever bounds a rescan's values leave */
		foreach(la, st->range_attnos)
			(void) scan_column(st, lfirst_int(la));
		st->sel = palloc(sizeof(bool) * XXL_PAGE_ROWS);
		st->kept_nulls = palloc(sizeof(bool) * XXL_PAGE_ROWS * st->ncols);
	}
	return (Node *) st;
}

static void
reset_accs(AggScanState *st)
{
	for (int i = 0; i < st->naccs; i++)
	{
		st->accs[i].count = 0;
		st->accs[i].sum = 0;
		st->accs[i].min = PG_INT64_MAX;
		st->accs[i].max = PG_INT64_MIN;
	}
	st->rows = 0;
	st->done = false;
}

static void
begin_agg(CustomScanState *node, EState *estate, int eflags)
{
	AggScanState *st = (AggScanState *) node;

	/* (locked by the executor's start, as every relation of the range table) */
	st->rel = table_open(linitial_oid(linitial(((CustomScan *) node->ss.ps.plan)->custom_private)),
						 NoLock);
	reset_accs(st);
	if (st->range_attnos != NIL)
		st->range_states = ExecInitExprList(((CustomScan *) node->ss.ps.plan)->custom_exprs,
											&node->ss.ps);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	st->scan = table_beginscan(st->rel, estate->es_snapshot, 0, NULL);
}

/*
 * Which rows of a run the bounds keep, into st->sel (a row whose bounded
 * column is NULL compares true with nothing); how many.
 */
static int
select_rows(AggScanState *st, const Datum *values, const bool *isnull, int first, int n)
{
	int			kept = 0;

	memset(st->sel, true, n);
	for (int r = 0; r < st->nranges; r++)
	{
		const Datum *v = values + (Size) st->range_cols[r] * XXL_PAGE_ROWS + first;
		const bool *nl = isnull + (Size) st->range_cols[r] * XXL_PAGE_ROWS + first;
		int64		lo = st->ranges[r].lo,
					hi = st->ranges[r].hi;

		for (int i = 0; i < n; i++)
			st->sel[i] &= !nl[i] && (int64) v[i] >= lo && (int64) v[i] <= hi;
	}
	for (int i = 0; i < n; i++)
		kept += st->sel[i];
	return kept;
}

/*
 * One run of rows into every aggregate.  With bounds, the rows they drop
 * count as NULLs: each column's flags are formed once per run, whatever
 * the number of aggregates over it.
 */
static void
accumulate(AggScanState *st, const Datum *values, const bool *isnull, int first, int n)
{
	int			kept = n;

	if (st->nranges > 0)
	{
		kept = select_rows(st, values, isnull, first, n);
		for (int k = 0; k < st->ncols; k++)
		{
			const bool *nl = isnull + (Size) k * XXL_PAGE_ROWS + first;
			bool	   *out = st->kept_nulls + (Size) k * XXL_PAGE_ROWS;

			for (int i = 0; i < n; i++)
				out[i] = nl[i] || !st->sel[i];
		}
	}
	st->rows += kept;
	for (int a = 0; a < st->naccs; a++)
	{
		AggAcc	   *acc = &st->accs[a];
		const Datum *v;
		const bool *nl;

		if (acc->kind == AGG_COUNT_STAR)
		{
			acc->count += kept;
			continue;
		}
		v = values + (Size) acc->col * XXL_PAGE_ROWS + first;
		nl = st->nranges > 0 ? st->kept_nulls + (Size) acc->col * XXL_PAGE_ROWS :
			isnull + (Size) acc->col * XXL_PAGE_ROWS + first;
		switch (acc->kind)
		{
			case AGG_COUNT:
				for (int i = 0; i < n; i++)
					acc->count += !nl[i];
				break;
			case AGG_SUM:
			case AGG_AVG:
				{
					/* a page's sum fits 64 bits (2048 values of 32 bits) only for narrow columns: sum in 128 */
					int128		s = 0;
					int64		c = 0;

					for (int i = 0; i < n; i++)
						if (!nl[i])
						{
							s += (int64) v[i];
							c++;
						}
					acc->sum += s;
					acc->count += c;
				}
				break;
			case AGG_MIN:
			case AGG_MAX:
				/* (both kept: the result takes its own) */
				for (int i = 0; i < n; i++)
					if (!nl[i])
					{
						acc->min = Min(acc->min, (int64) v[i]);
						acc->max = Max(acc->max, (int64) v[i]);
						acc->count++;
					}
				break;
			case AGG_COUNT_STAR:
				break;
		}
	}
}

/* A 128-bit integer as numeric (through its digits: PostgreSQL exports no such cast). */
static Datum
int128_numeric(int128 v)
{
	char		buf[48];
	char	   *p = buf + sizeof(buf) - 1;
	bool		neg = v < 0;
	uint128		u = neg ? -(uint128) v : (uint128) v;

	if (v >= PG_INT64_MIN && v <= PG_INT64_MAX)
		return NumericGetDatum(int64_to_numeric((int64) v));
	*p = '\0';
	do
	{
		*--p = '0' + (int) (u % 10);
		u /= 10;
	} while (u != 0);
	if (neg)
		*--p = '-';
	return DirectFunctionCall3(numeric_in, CStringGetDatum(p), ObjectIdGetDatum(InvalidOid),
							   Int32GetDatum(-1));
}

/* An aggregate's result, as PostgreSQL's aggregate gives it. */
static Datum
agg_result(const AggAcc *acc, bool *isnull)
{
	*isnull = false;
	switch (acc->kind)
	{
		case AGG_COUNT_STAR:
		case AGG_COUNT:
			return Int64GetDatum(acc->count);
		case AGG_SUM:
			if (acc->count == 0)
				break;
			if (acc->result == INT8OID)
			{
				/* sum(smallint), sum(integer): bigint, as int2_sum and int4_sum */
				if (acc->sum < PG_INT64_MIN || acc->sum > PG_INT64_MAX)
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("bigint out of range")));
				return Int64GetDatum((int64) acc->sum);
			}
			return int128_numeric(acc->sum);
		case AGG_AVG:
			if (acc->count == 0)
				break;
			return DirectFunctionCall2(numeric_div, int128_numeric(acc->sum),
									   NumericGetDatum(int64_to_numeric(acc->count)));
		case AGG_MIN:
			if (acc->count == 0)
				break;
			return (Datum) acc->min;
		case AGG_MAX:
			if (acc->count == 0)
				break;
			return (Datum) acc->max;
	}
	*isnull = true;
	return (Datum) 0;
}

static TupleTableSlot *
exec_agg(CustomScanState *node)
{
	AggScanState *st = (AggScanState *) node;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	Datum	   *values;
	bool	   *isnull;
	int			first,
				n;

	if (st->done)
		return ExecClearTuple(slot);
	if (st->range_attnos != NIL && st->ranges == NULL)
	{
		st->nranges = xxl_ranges_evaluate(st->range_attnos, st->range_strategies,
										  st->range_states, node->ss.ps.ps_ExprContext,
										  RelationGetDescr(st->rel), &st->ranges);
		/* (every page skipped when no row qualifies) */
		xxl_scan_set_ranges(st->scan, st->ranges, st->nranges);
		for (int r = 0; r < st->nranges; r++)
			st->range_cols[r] = scan_column(st, st->ranges[r].attno);
	}
	while (xxl_scan_next_column_run(st->scan, st->cols, st->ncols, &values, &isnull, &first, &n))
	{
		CHECK_FOR_INTERRUPTS();
		accumulate(st, values, isnull, first, n);
	}
	st->done = true;
	ExecClearTuple(slot);
	for (int a = 0; a < st->naccs; a++)
		slot->tts_values[a] = agg_result(&st->accs[a], &slot->tts_isnull[a]);
	ExecStoreVirtualTuple(slot);
	/* the target list's expressions over the aggregates */
	if (node->ss.ps.ps_ProjInfo)
	{
		node->ss.ps.ps_ExprContext->ecxt_scantuple = slot;
		return ExecProject(node->ss.ps.ps_ProjInfo);
	}
	return slot;
}

static void
end_agg(CustomScanState *node)
{
	AggScanState *st = (AggScanState *) node;

	if (st->scan)
		table_endscan(st->scan);
	st->scan = NULL;
	if (st->rel)
		table_close(st->rel, NoLock);
	st->rel = NULL;
}

static void
rescan_agg(CustomScanState *node)
{
	AggScanState *st = (AggScanState *) node;

	if (st->scan)
		table_rescan(st->scan, NULL);
	reset_accs(st);
	/* parameters may have changed */
	if (st->ranges)
		pfree(st->ranges);
	st->ranges = NULL;
}

static void
explain_agg(CustomScanState *node, List *ancestors, ExplainState *es)
{
	AggScanState *st = (AggScanState *) node;

	ExplainPropertyText("Table", RelationGetRelationName(st->rel), es);
	if (st->range_attnos != NIL)
		ExplainPropertyInteger("Bounds", NULL, list_length(st->range_attnos), es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Rows Aggregated", NULL, st->rows, es);
		if (st->range_attnos != NIL && st->scan)
			ExplainPropertyInteger("Pages Skipped", NULL,
								   (int64) xxl_scan_pages_skipped(st->scan), es);
	}
}

void
xxl_table_aggscan_init(void)
{
	RegisterCustomScanMethods(&agg_scan_methods);
	prev_create_upper_paths = create_upper_paths_hook;
	create_upper_paths_hook = agg_upper_paths;
}
