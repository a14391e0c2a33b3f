/*
 * xxl_plan_agg.c — which sorted Agg nodes become XxlAgg nodes
 * (xxl.group_in_plans), and how.
 *
 * PostgreSQL's GroupAggregate copies the first row of every group into a
 * heap tuple, resets the aggregates' memory, runs the transition
 * expressions and projects through a generic per-group machinery; with
 * many small groups over an XxlSort that costs as much as the sort itself
 * (docs/plans.md).  An Agg that groups sorted input (AGG_SORTED, no
 * grouping sets or GROUPING(), not split for parallel aggregation) and
 * whose aggregates are all plain ones (no DISTINCT, ORDER BY or FILTER
 * inside) that the node computes becomes an XxlAgg over the same child:
 * count(*), count(x) and sum() of integers are counted in C, and every
 * other aggregate whose state is not `internal` is called through its own
 * transition and final functions, as Agg calls them, when those are
 * PostgreSQL's own or not written in C (callable_fn).  An aggregate with an
 * `internal` state (numeric sums, array_agg, string_agg, ...) keeps the
 * node an Agg: such functions insist on being called by an Agg
 * (AggCheckCallContext).
 *
 * The node's scan tuple is the child's row (the group's first, as Agg
 * reads grouping columns and columns that depend on them) followed by one
 * column per distinct aggregate; its target list and qual (HAVING) are the
 * Agg's over that tuple.  custom_scan_tlist keeps each Aggref as its
 * column's expression, so that EXPLAIN VERBOSE names it as Agg's did.
 */
#include "postgres.h"

#include "access/transam.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "utils/fmgroids.h"
#include "utils/syscache.h"

#include "pg/runtime/runtime.h"
#include "pg/plan/xxl_plan_agg.h"

/*
 * fn may be called outside an Agg: PostgreSQL's own functions (those of
 * aggregates without an `internal` state copy their state when not called
 * by an Agg, and none refuses), and functions not written in C, which
 * cannot ask.  A C function of an extension might insist on an Agg caller
 * (AggCheckCallContext), so its aggregate stays Agg's.
 */
static bool
callable_fn(Oid fn)
{
	HeapTuple	tuple;
	Oid			lang;

	if (!OidIsValid(fn) || fn < FirstNormalObjectId)
		return true;
	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
	if (!HeapTupleIsValid(tuple))
		return false;
	lang = ((Form_pg_proc) GETSTRUCT(tuple))->prolang;
	ReleaseSysCache(tuple);
	return lang != ClanguageId && lang != INTERNALlanguageId;
}

/* Whether the node can call the aggregate's own functions without an Agg. */
static bool
callable(Oid aggfnoid)
{
	HeapTuple	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	Form_pg_aggregate form;
	bool		ok;

	if (!HeapTupleIsValid(tuple))
		return false;
	form = (Form_pg_aggregate) GETSTRUCT(tuple);
	ok = form->aggkind == AGGKIND_NORMAL && form->aggtranstype != INTERNALOID &&
		!form->aggfinalextra && callable_fn(form->aggtransfn) && callable_fn(form->aggfinalfn);
	ReleaseSysCache(tuple);
	return ok;
}

/* How the node computes aggref, or -1 if it does not. */
static int
agg_kind(const Aggref *aggref)
{
	if (aggref->aggdistinct != NIL || aggref->aggorder != NIL || aggref->aggfilter != NULL ||
		aggref->aggdirectargs != NIL || aggref->agglevelsup != 0 ||
		aggref->aggsplit != AGGSPLIT_SIMPLE || aggref->aggkind != AGGKIND_NORMAL)
		return -1;
	switch (aggref->aggfnoid)
	{
		case F_COUNT_:
			return XXL_AGG_COUNT_STAR;
		case F_COUNT_ANY:
			return XXL_AGG_COUNT;
		case F_SUM_INT2:
		case F_SUM_INT4:
			return XXL_AGG_SUM_INT;
#ifdef PG_INT128_TYPE
		case F_SUM_INT8:
			return XXL_AGG_SUM_INT8;
#endif
		default:
			return callable(aggref->aggfnoid) ? XXL_AGG_CALLED : -1;
	}
}

typedef struct AggrefsContext
{
	List	   *aggrefs;		/* distinct Aggrefs, in order of appearance */
	bool		ok;
} AggrefsContext;

static bool
collect_aggrefs(Node *node, AggrefsContext *cxt)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		if (agg_kind((Aggref *) node) < 0)
			cxt->ok = false;
		else if (!list_member(cxt->aggrefs, node))
			cxt->aggrefs = lappend(cxt->aggrefs, node);
		return false;			/* (arguments hold no Aggref of this level) */
	}
	if (IsA(node, GroupingFunc))
	{
		cxt->ok = false;		/* Agg evaluates it */
		return false;
	}
	return expression_tree_walker(node, collect_aggrefs, cxt);
}

Plan *
xxl_plan_agg(Agg *agg)
{
	Plan	   *child = agg->plan.lefttree;
	AggrefsContext aggrefs = {.ok = true};
	CustomScan *cscan;
	List	   *kinds = NIL;
	ListCell   *lc;

	if (!xxl_group_in_plans || child == NULL || agg->aggstrategy != AGG_SORTED ||
		agg->aggsplit != AGGSPLIT_SIMPLE || agg->numCols == 0 ||
		agg->groupingSets != NIL || agg->chain != NIL)
		return &agg->plan;
	(void) collect_aggrefs((Node *) agg->plan.targetlist, &aggrefs);
	(void) collect_aggrefs((Node *) agg->plan.qual, &aggrefs);
	if (!aggrefs.ok)
		return &agg->plan;

	foreach(lc, aggrefs.aggrefs)
		kinds = lappend_int(kinds, agg_kind(lfirst(lc)));
	cscan = xxl_plan_group_scan(&agg->plan, aggrefs.aggrefs,
								list_make2(xxl_plan_cols_private(agg->numCols, agg->grpColIdx,
																 agg->grpOperators, agg->grpCollations),
										   kinds),
								&xxl_plan_agg_methods);
	return &cscan->scan.plan;
}
