/*
 * xxl_plan_group.c — groups of equal keys over a sorted input, for the
 * XxlWindow and XxlAgg plan nodes (see xxl_plan_group.h).
 *
 * Keys are compared as the replaced PostgreSQL node compares them: with its
 * equality operators and collations, NULL equal to NULL, so that numeric
 * 1.0 and 1.00 fall into one group, as they do there.
 */
#include "postgres.h"

#include "commands/explain.h"
#include "executor/tuptable.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"

#include "pg/plan/xxl_plan_group.h"
#include "pg/plan/xxl_plan_columns.h"

List *
xxl_plan_cols_private(int n, const AttrNumber *cols, const Oid *eqops, const Oid *collations)
{
	List	   *c = NIL,
			   *o = NIL,
			   *l = NIL;

	for (int i = 0; i < n; i++)
	{
		c = lappend_int(c, cols[i]);
		o = lappend_oid(o, eqops[i]);
		l = lappend_oid(l, collations[i]);
	}
	return list_make3(c, o, l);
}

void
xxl_plan_cols_read(List *private, XxlPlanCols *cols)
{
	List	   *c = linitial(private);
	List	   *o = lsecond(private);
	List	   *l = lthird(private);
	int			n = list_length(c);

	cols->n = n;
	cols->cols = palloc(sizeof(AttrNumber) * Max(n, 1));
	cols->eqops = palloc(sizeof(Oid) * Max(n, 1));
	cols->collations = palloc(sizeof(Oid) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		cols->cols[i] = (AttrNumber) list_nth_int(c, i);
		cols->eqops[i] = list_nth_oid(o, i);
		cols->collations[i] = list_nth_oid(l, i);
	}
}

/* Where node is in list, by equal(); -1 if nowhere. */
static int
list_index(List *list, Node *node)
{
	ListCell   *lc;

	foreach(lc, list)
	{
		if (equal(lfirst(lc), node))
			return foreach_current_index(lc);
	}
	return -1;
}

typedef struct ScanTupleContext
{
	List	   *computed;
	int			nchild;
} ScanTupleContext;

static Node *
to_scan_tuple(Node *node, ScanTupleContext *cxt)
{
	int			k;

	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varno == OUTER_VAR)
	{
		Var		   *var = (Var *) copyObject(node);

		var->varno = INDEX_VAR;
		return (Node *) var;
	}
	if ((IsA(node, WindowFunc) || IsA(node, Aggref)) &&
		(k = list_index(cxt->computed, node)) >= 0)
		return (Node *) makeVar(INDEX_VAR, cxt->nchild + k + 1, exprType(node), exprTypmod(node),
								exprCollation(node), 0);
	return expression_tree_mutator(node, to_scan_tuple, cxt);
}

Node *
xxl_plan_to_scan_tuple(Node *expr, List *computed, int nchild)
{
	ScanTupleContext cxt = {.computed = computed, .nchild = nchild};

	return to_scan_tuple(expr, &cxt);
}

/*
 * Equality functions of by-value types that hold exactly when the Datums
 * are the same: the key compares those Datums without a function call (a
 * call per row was a tenth of a one-row-per-group GROUP BY's node time).
 */
static bool
bitwise_equality(Oid eqfn)
{
	switch (eqfn)
	{
		case F_BOOLEQ:
		case F_CHAREQ:
		case F_INT2EQ:
		case F_INT4EQ:
		case F_INT8EQ:
		case F_OIDEQ:
		case F_DATE_EQ:
		case F_TIME_EQ:
		case F_TIMESTAMP_EQ:
		case F_TIMESTAMPTZ_EQ:
			return true;
		default:
			return false;
	}
}

/*
 * texteq under a deterministic collation, and byteaeq: equal exactly when
 * the bytes are (texteq itself compares them so), which the key compares
 * in place unless a value is toasted.
 */
static bool
bytewise_equality(Oid eqfn, Oid collation)
{
	if (eqfn == F_BYTEAEQ)
		return true;
	return eqfn == F_TEXTEQ && OidIsValid(collation) && get_collation_isdeterministic(collation);
}

CustomScan *
xxl_plan_group_scan(Plan *replaced, List *computed, List *private, const CustomScanMethods *methods)
{
	Plan	   *child = replaced->lefttree;
	int			nchild = list_length(child->targetlist);
	CustomScan *cscan = makeNode(CustomScan);
	List	   *scan_tlist = xxl_plan_column_refs(child->targetlist, OUTER_VAR);
	ListCell   *lc;

	foreach(lc, computed)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) copyObject(lfirst(lc)),
											 list_length(scan_tlist) + 1, NULL, false));
	cscan->scan.plan = *replaced;
	cscan->scan.plan.type = T_CustomScan;
	cscan->scan.plan.targetlist =
		(List *) xxl_plan_to_scan_tuple((Node *) replaced->targetlist, computed, nchild);
	cscan->scan.plan.qual = (List *) xxl_plan_to_scan_tuple((Node *) replaced->qual, computed, nchild);
	cscan->scan.scanrelid = 0;
	cscan->flags = 0;
	cscan->custom_private = private;
	cscan->custom_scan_tlist = scan_tlist;
	cscan->methods = methods;
	return cscan;
}

void
xxl_group_key_init(XxlGroupKey *key, const XxlPlanCols *cols, TupleDesc child, EState *estate)
{
	int			n = cols->n;

	key->cols = *cols;
	key->eq = palloc(sizeof(FmgrInfo) * Max(n, 1));
	key->bitwise = palloc(sizeof(bool) * Max(n, 1));
	key->bytewise = palloc(sizeof(bool) * Max(n, 1));
	key->typlen = palloc(sizeof(int16) * Max(n, 1));
	key->typbyval = palloc(sizeof(bool) * Max(n, 1));
	key->values = palloc0(sizeof(Datum) * Max(child->natts, 1));
	key->isnull = palloc0(sizeof(bool) * Max(child->natts, 1));
	key->any_byref = false;
	for (int i = 0; i < n; i++)
	{
		Form_pg_attribute att = TupleDescAttr(child, cols->cols[i] - 1);
		Oid			eqfn = get_opcode(cols->eqops[i]);

		fmgr_info_cxt(eqfn, &key->eq[i], estate->es_query_cxt);
		key->bitwise[i] = att->attbyval && bitwise_equality(eqfn);
		key->bytewise[i] = att->attlen == -1 && bytewise_equality(eqfn, cols->collations[i]);
		key->typlen[i] = att->attlen;
		key->typbyval[i] = att->attbyval;
		key->any_byref |= !att->attbyval;
	}
	key->cxt = AllocSetContextCreate(estate->es_query_cxt, "xxl group key", ALLOCSET_SMALL_SIZES);
}

/* The key's i-th column: a (kept or a row's) equal to the row's value b. */
static inline bool
column_equal(XxlGroupKey *key, int i, Datum a, bool anull, Datum b, bool bnull)
{
	if (anull || bnull)
		return anull == bnull;
	if (key->bitwise[i])
		return a == b;
	if (key->bytewise[i])
	{
		struct varlena *x = (struct varlena *) DatumGetPointer(a);
		struct varlena *y = (struct varlena *) DatumGetPointer(b);

		/* (short headers are read in place; toasted values go to the function) */
		if (!VARATT_IS_EXTERNAL(x) && !VARATT_IS_COMPRESSED(x) &&
			!VARATT_IS_EXTERNAL(y) && !VARATT_IS_COMPRESSED(y))
			return VARSIZE_ANY_EXHDR(x) == VARSIZE_ANY_EXHDR(y) &&
				memcmp(VARDATA_ANY(x), VARDATA_ANY(y), VARSIZE_ANY_EXHDR(x)) == 0;
	}
	return DatumGetBool(FunctionCall2Coll(&key->eq[i], key->cols.collations[i], a, b));
}

/* The key columns of values/isnull (at the child's places) equal row's. */
static inline bool
key_equal(XxlGroupKey *key, const Datum *values, const bool *isnull, TupleTableSlot *row)
{
	for (int i = 0; i < key->cols.n; i++)
	{
		int			c = key->cols.cols[i] - 1;

		if (!column_equal(key, i, values[c], isnull[c], row->tts_values[c], row->tts_isnull[c]))
			return false;
	}
	return true;
}

bool
xxl_group_key_match(XxlGroupKey *key, TupleTableSlot *row)
{
	return key_equal(key, key->values, key->isnull, row);
}

bool
xxl_group_key_same(XxlGroupKey *key, TupleTableSlot *first, TupleTableSlot *row)
{
	return key_equal(key, first->tts_values, first->tts_isnull, row);
}

void
xxl_group_key_keep(XxlGroupKey *key, TupleTableSlot *row)
{
	MemoryContext old;

	if (key->cols.n == 0)
		return;
	if (key->any_byref)
		MemoryContextReset(key->cxt);
	old = MemoryContextSwitchTo(key->cxt);
	for (int i = 0; i < key->cols.n; i++)
	{
		int			c = key->cols.cols[i] - 1;

		key->isnull[c] = row->tts_isnull[c];
		key->values[c] = key->isnull[c] || key->typbyval[i] ? row->tts_values[c] :
			datumCopy(row->tts_values[c], false, key->typlen[i]);
	}
	MemoryContextSwitchTo(old);
}

List *
xxl_plan_cols_texts(CustomScanState *node, const XxlPlanCols *cols, List *ancestors,
					ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan, ancestors);
	bool		prefix = list_length(es->rtable) > 1 || es->verbose;
	List	   *result = NIL;

	for (int i = 0; i < cols->n; i++)
	{
		TargetEntry *tle = list_nth_node(TargetEntry, cscan->custom_scan_tlist, cols->cols[i] - 1);

		result = lappend(result, deparse_expression((Node *) xxl_plan_column_ref(tle, INDEX_VAR),
													context, prefix, false));
	}
	return result;
}
