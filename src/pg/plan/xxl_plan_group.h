/*
 * xxl_plan_group.h — what the plan nodes that read groups of equal keys
 * from a sorted input share: XxlWindow (partitions and peers) and XxlAgg
 * (GROUP BY).
 *
 * Planning: the key columns in a node's private list, and the node's
 * target list over its scan tuple (the child's row followed by one column
 * per computed expression).  Execution: a group's key, kept from the row
 * that began it and compared with each next row by the plan's own equality
 * operators.  EXPLAIN: the key columns as the child's expressions.
 */
#ifndef XXL_PG_PLAN_GROUP_H
#define XXL_PG_PLAN_GROUP_H

#include "fmgr.h"
#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "nodes/plannodes.h"

/* Columns compared for equality: in the child's rows, as the plan node has them. */
typedef struct XxlPlanCols
{
	int			n;
	AttrNumber *cols;
	Oid		   *eqops;
	Oid		   *collations;
} XxlPlanCols;

extern List *xxl_plan_cols_private(int n, const AttrNumber *cols, const Oid *eqops,
								   const Oid *collations);
extern void xxl_plan_cols_read(List *private, XxlPlanCols *cols);

/*
 * The custom scan that takes replaced's place over the same child: its plan
 * fields (costs, node id, parameters, initPlans), and a scan tuple of the
 * child's columns followed by one column per member of computed (whose
 * expressions custom_scan_tlist keeps, so that EXPLAIN VERBOSE names them
 * as before); the target list and qual are replaced's over that tuple.  No
 * backward scan or mark/restore, as the nodes it replaces.
 */
extern CustomScan *xxl_plan_group_scan(Plan *replaced, List *computed, List *private,
									   const CustomScanMethods *methods);

/*
 * expr (a plan node's target list or qual over its child's row, OUTER_VAR)
 * over the node's scan tuple: the child's columns first, then one column
 * per member of computed (WindowFuncs, Aggrefs), each occurrence of which
 * (by equal()) becomes a reference to its column.
 */
extern Node *xxl_plan_to_scan_tuple(Node *expr, List *computed, int nchild);

/* Key columns and the values they had in the row that began the group. */
typedef struct XxlGroupKey
{
	XxlPlanCols cols;
	FmgrInfo   *eq;
	bool	   *bitwise;		/* by value, equal exactly when the Datums are */
	bool	   *bytewise;		/* varlena, equal exactly when the bytes are */
	int16	   *typlen;
	bool	   *typbyval;
	bool		any_byref;
	Datum	   *values;			/* at the child's column places, as a row has them */
	bool	   *isnull;
	MemoryContext cxt;			/* the by-reference values */
} XxlGroupKey;

extern void xxl_group_key_init(XxlGroupKey *key, const XxlPlanCols *cols, TupleDesc child,
							   EState *estate);
/* The row's key is the group's: equal in every column, NULL equal to NULL. */
extern bool xxl_group_key_match(XxlGroupKey *key, TupleTableSlot *row);
/*
 * The same, against a copy of the group's first row (first: the child's
 * columns at their places, as row has them) rather than kept key values.
 */
extern bool xxl_group_key_same(XxlGroupKey *key, TupleTableSlot *first, TupleTableSlot *row);
/* The row begins a group: keep its key values. */
extern void xxl_group_key_keep(XxlGroupKey *key, TupleTableSlot *row);

/* For EXPLAIN: the key columns as the child's expressions. */
extern List *xxl_plan_cols_texts(CustomScanState *node, const XxlPlanCols *cols,
								 List *ancestors, struct ExplainState *es);

#endif							/* XXL_PG_PLAN_GROUP_H */
