/*
 * xxl_table_bounds.c — which restrictions of a scan bound one column:
 * "column op value" with op in the column type's default btree family
 * (under the column's collation), value a Const or a Param, on either
 * side.  The ordered scan bounds its leading key column with them; the
 * full scan skips packed pages whose least and greatest value of an
 * integer column lie outside them.
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "pg/table/xxl_table_nodes.h"

static int
int_width(Oid type)
{
	return type == INT2OID ? 2 : type == INT4OID ? 4 : type == INT8OID ? 8 : 0;
}

/* Whether a value of type from converts exactly to type to (integers only). */
static bool
widens(Oid from, Oid to)
{
	return int_width(from) > 0 && int_width(to) > int_width(from);
}

static Oid
widening_func(Oid from, Oid to)
{
	if (to == INT8OID)
		return from == INT2OID ? F_INT8_INT2 : F_INT8_INT4;
	return F_INT4_INT2;
}

void
xxl_column_bounds(struct RelOptInfo *rel, AttrNumber attno, Form_pg_attribute att, List **strategies,
				  List **exprs, List **clauses)
{
	TypeCacheEntry *tc = lookup_type_cache(att->atttypid, TYPECACHE_BTREE_OPFAMILY);
	ListCell   *lc;

	if (!OidIsValid(tc->btree_opf))
		return;
	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
		OpExpr	   *op = (OpExpr *) ri->clause;
		Node	   *left,
				   *right,
				   *value;
		bool		commuted;
		int			strategy;

		if (!IsA(op, OpExpr) || list_length(op->args) != 2 ||
			op->inputcollid != att->attcollation)
			continue;
		left = strip_implicit_coercions(linitial(op->args));
		right = strip_implicit_coercions(lsecond(op->args));
		if (IsA(left, Var) && ((Var *) left)->varno == rel->relid &&
			((Var *) left)->varattno == attno)
		{
			value = lsecond(op->args);
			commuted = false;
		}
		else if (IsA(right, Var) && ((Var *) right)->varno == rel->relid &&
				 ((Var *) right)->varattno == attno)
		{
			value = linitial(op->args);
			commuted = true;
		}
		else
			continue;
		if (!(IsA(value, Const) || IsA(value, Param)))
			continue;
		if (exprType(value) != att->atttypid)
		{
			/* an integer literal against a wider integer column: widened exactly */
			if (!widens(exprType(value), att->atttypid))
				continue;
			value = (Node *) makeFuncExpr(widening_func(exprType(value), att->atttypid),
										  att->atttypid, list_make1(value), InvalidOid,
										  InvalidOid, COERCE_IMPLICIT_CAST);
		}
		strategy = get_op_opfamily_strategy(op->opno, tc->btree_opf);
		if (strategy == 0)
			continue;
		if (commuted)
			strategy = BTCommuteStrategyNumber(strategy);
		*strategies = lappend(*strategies, makeInteger(strategy));
		*exprs = lappend(*exprs, value);
		if (clauses)
			*clauses = lappend(*clauses, ri);
	}
}
