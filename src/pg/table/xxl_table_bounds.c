/*
 * xxl_table_bounds.c — which restrictions of a scan bound one column:
 * "column op value" with op in the column type's default btree family
 * (under the column's collation), value a Const or a Param, on either
 * side.  The ordered scan bounds its leading key column with them; the
 * full scan skips packed pages whose least and greatest value of an
 * integer column lie outside them, and the aggregate scan also filters
 * its rows by them (xxl_page_ranges, xxl_ranges_evaluate).
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "executor/executor.h"
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

/* Whether rows of type hold it as an integer whose order is the type's (packed pages' least and greatest). */
bool
xxl_integer_ordered(Oid type)
{
	return type == INT2OID || type == INT4OID || type == INT8OID || type == DATEOID ||
		type == TIMEOID || type == TIMESTAMPOID || type == TIMESTAMPTZOID;
}

List *
xxl_page_ranges(RelOptInfo *rel, Oid relid, List **clauses)
{
	Relation	r;
	TupleDesc	desc;
	List	   *attnos = NIL,
			   *strategies = NIL,
			   *exprs = NIL;

	if (clauses)
		*clauses = NIL;
	if (rel->baserestrictinfo == NIL)
		return NIL;
	r = table_open(relid, NoLock);
	desc = RelationGetDescr(r);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		int			before = list_length(strategies);

		if (att->attisdropped || !xxl_integer_ordered(att->atttypid))
			continue;
		xxl_column_bounds(rel, i + 1, att, &strategies, &exprs, clauses);
		for (int k = before; k < list_length(strategies); k++)
			attnos = lappend_int(attnos, i + 1);
	}
	table_close(r, NoLock);
	if (attnos == NIL)
		return NIL;
	return list_make3(attnos, strategies, exprs);
}

/* A bound's value as the integer packed pages compare (by the column's width). */
static int64
bound_int(Datum d, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
		case DATEOID:
			return DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

int
xxl_ranges_evaluate(List *attnos, List *strategies, List *states, ExprContext *econtext,
					TupleDesc desc, XxlColumnRange **out)
{
	int			n = list_length(attnos);
	XxlColumnRange *ranges = palloc(sizeof(XxlColumnRange) * Max(n, 1));
	int			nranges = 0;
	bool		empty = false;
	ListCell   *la,
			   *ls,
			   *le;

	forthree(la, attnos, ls, strategies, le, states)
	{
		AttrNumber	attno = lfirst_int(la);
		int			strategy = intVal(lfirst(ls));
		bool		isnull;
		Datum		d = ExecEvalExprSwitchContext(lfirst(le), econtext, &isnull);
		XxlColumnRange *r = NULL;
		int64		v;

		if (isnull)
		{
			empty = true;
			break;
		}
		v = bound_int(d, TupleDescAttr(desc, attno - 1)->atttypid);
		for (int k = 0; k < nranges; k++)
			if (ranges[k].attno == attno)
				r = &ranges[k];
		if (r == NULL)
		{
			r = &ranges[nranges++];
			r->attno = attno;
			r->lo = PG_INT64_MIN;
			r->hi = PG_INT64_MAX;
		}
		switch (strategy)
		{
			case BTLessStrategyNumber:
				if (v == PG_INT64_MIN)
					empty = true;
				else
					r->hi = Min(r->hi, v - 1);
				break;
			case BTLessEqualStrategyNumber:
				r->hi = Min(r->hi, v);
				break;
			case BTEqualStrategyNumber:
				r->lo = Max(r->lo, v);
				r->hi = Min(r->hi, v);
				break;
			case BTGreaterEqualStrategyNumber:
				r->lo = Max(r->lo, v);
				break;
			case BTGreaterStrategyNumber:
				if (v == PG_INT64_MAX)
					empty = true;
				else
					r->lo = Max(r->lo, v + 1);
				break;
		}
		if (r->lo > r->hi)
			empty = true;
	}
	ResetExprContext(econtext);
	*out = ranges;
	return empty ? -1 : nranges;
}

