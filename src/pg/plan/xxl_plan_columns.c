/*
 * xxl_plan_columns.c — references to a child's or a scan tuple's columns
 * for the plan nodes' target lists (see xxl_plan_columns.h).
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"

#include "pg/plan/xxl_plan_columns.h"

Var *
xxl_plan_column_ref(const TargetEntry *tle, int varno)
{
	Node	   *expr = (Node *) tle->expr;

	return makeVar(varno, tle->resno, exprType(expr), exprTypmod(expr), exprCollation(expr), 0);
}

List *
xxl_plan_column_refs(List *tlist, int varno)
{
	List	   *refs = NIL;
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		TargetEntry *ref = flatCopyTargetEntry(tle);

		ref->expr = (Expr *) xxl_plan_column_ref(tle, varno);
		refs = lappend(refs, ref);
	}
	return refs;
}

bool
xxl_plan_tlist_passes_through(List *tlist)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *var = (Var *) tle->expr;

		if (IsA(var, Const))
			continue;
		if (!IsA(var, Var) || var->varno != OUTER_VAR || var->varattno != tle->resno)
			return false;
	}
	return true;
}
