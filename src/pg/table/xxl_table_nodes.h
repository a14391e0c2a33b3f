/*
 * xxl_table_nodes.h — the planner level of the xxl table access method:
 * its custom scans (the full scan, the ordered scan split into paths and
 * plan, and execution) and the statements refused at parse analysis.
 * Each is set up by xxl_table_init (xxl_table_am.c).
 */
#ifndef XXL_PG_TABLE_NODES_H
#define XXL_PG_TABLE_NODES_H

#include "pg/table/xxl_table_writers.h"

struct PlannerInfo;
struct RelOptInfo;

/*
 * The ordered scan: its paths and plans (xxl_table_ordered.c), its
 * execution (xxl_table_ordered_exec.c).  The plan's private list: the
 * order key's text, then the bounds' strategies (their values are
 * custom_exprs).
 */
#define XXL_ORDERED_SCAN_NAME "XxlOrderedScan"
extern void xxl_table_ordered_init(void);
extern const struct CustomScanMethods xxl_ordered_scan_methods;
/* The attribute an order key item (xxl_sortkey.h) names, or InvalidAttrNumber. */
struct XxlSortItem;
extern AttrNumber xxl_ordered_item_attno(TupleDesc desc, const struct XxlSortItem *item);
/* The full scan (xxl_table_fullscan.c). */
extern void xxl_table_fullscan_init(void);
/*
 * Whether the full scan may read base relation rel (range table entry
 * rti): an xxl table, no row mark, no TABLESAMPLE, only plain columns
 * wanted by the plan and by its conditions.
 */
extern bool xxl_full_scan_allowed(struct PlannerInfo *root, struct RelOptInfo *rel, Index rti,
								  RangeTblEntry *rte);

/* The aggregate scan (xxl_table_aggscan.c). */
extern void xxl_table_aggscan_init(void);

/*
 * The restrictions of rel that bound column attno (att): "column op
 * value", op in the default btree family of its type with its collation,
 * value a Const or a Param (an integer of a narrower type widened).
 * Appends their strategies (Integer, the column on the left), value
 * expressions and clauses (clauses may be NULL) (xxl_table_bounds.c).
 */
extern void xxl_column_bounds(struct RelOptInfo *rel, AttrNumber attno, Form_pg_attribute att,
							  List **strategies, List **exprs, List **clauses);

/* Whether a type's values are integers whose order is the type's (smallint .. timestamptz). */
extern bool xxl_integer_ordered(Oid type);

/*
 * The bounds of rel's restrictions on its integer-ordered columns, for
 * packed pages' least and greatest values: (attribute numbers, strategies,
 * value expressions), NIL if none; the clauses they came from into
 * *clauses (if given).
 */
extern List *xxl_page_ranges(struct RelOptInfo *rel, Oid relid, List **clauses);

/*
 * The bounds' values (their ExprStates) as each bounded column's [lo, hi]
 * into *ranges (palloc'd); their number, or -1 when no row qualifies (a
 * NULL value, contradicting bounds).
 */
struct ExprContext;
extern int	xxl_ranges_evaluate(List *attnos, List *strategies, List *states,
								struct ExprContext *econtext, TupleDesc desc,
								XxlColumnRange **ranges);


/* Statements refused at parse analysis (xxl_table_analyze.c). */
extern void xxl_table_analyze_init(void);

#endif							/* XXL_PG_TABLE_NODES_H */
