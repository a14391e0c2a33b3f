/*
 * xxl_table_ordered.c — ORDER BY an xxl table's order key without a Sort:
 * a custom scan whose path carries the key's pathkeys, and which merges
 * the table's segments, each already sorted by the key.
 *
 * Planning: for a base relation that is an xxl table with an order key,
 * the longest prefix of the key that PostgreSQL's pathkeys can express
 * (default NULLS placement, the column's own collation, a btree ordering
 * operator) becomes the path's pathkeys, if the query has a use for them
 * (ORDER BY, merge joins, grouping).  The path costs a sequential scan plus
 * a comparison per row, and starts at once, so ORDER BY key LIMIT n reads
 * n rows.
 *
 * Key ranges: restrictions "leading key column op constant" (<, <=, =,
 * >=, > with a Const or a Param of the column's type and collation) become
 * bounds, encoded and compared as the sorter compares keys (bytes, or a
 * collation's comparison for libc and ICU strings).  A path that takes them is offered even without ORDER BY (no
 * pathkeys), costed at the bounds' selectivity.  Each sorted segment's
 * cursor then starts at the page a binary search over the pages' first
 * rows finds, and stops at the first row past the range; rows of the other
 * segments outside it are not sorted.  The restrictions stay in the plan's
 * quals, so the bounds only save reading.
 *
 * Execution: xxl_table_ordered_exec.c.
 */
#include "postgres.h"

#include "access/table.h"
#include "utils/fmgroids.h"
#include "nodes/makefuncs.h"
#include "access/nbtree.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "pg/table/xxl_table_nodes.h"
#include "pg/plan/plan.h"
#include "pg/runtime/runtime.h"
#include "pg/sort/sort.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist = NULL;

static Plan *plan_ordered_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							   List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods ordered_path_methods = {
	.CustomName = XXL_ORDERED_SCAN_NAME,
	.PlanCustomPath = plan_ordered_path,
};

/* Planning ---------------------------------------------------------------------- */

/*
 * The pathkeys of the longest prefix of the key PostgreSQL can express and
 * already has an equivalence class for (no class: no query use).
 */
static List *
key_pathkeys(PlannerInfo *root, RelOptInfo *rel, TupleDesc desc, const char *order_by)
{
	List	   *pathkeys = NIL;
	ListCell   *lc;

	foreach(lc, xxl_parse_order_by(order_by))
	{
		XxlSortItem *item = lfirst(lc);
		AttrNumber	attno = xxl_ordered_item_attno(desc, item);
		Form_pg_attribute att;
		TypeCacheEntry *tc;
		Oid			opno;
		List	   *pk;

		if (attno == InvalidAttrNumber)
			break;
		att = TupleDescAttr(desc, attno - 1);
		if (item->nulls_first != item->desc ||
			(OidIsValid(item->collation) && item->collation != att->attcollation))
			break;
		tc = lookup_type_cache(att->atttypid, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
		opno = item->desc ? tc->gt_opr : tc->lt_opr;
		if (!OidIsValid(opno))
			break;
		pk = build_expression_pathkey(root,
									  (Expr *) makeVar(rel->relid, attno, att->atttypid,
													   att->atttypmod, att->attcollation, 0),
									  NULL, opno, rel->relids, false);
		if (pk == NIL)
			break;
		pathkeys = list_concat(pathkeys, pk);
	}
	return pathkeys;
}

/*
 * Restrictions on the leading key column that bound it: their strategies
 * (the column on the left), value expressions and clauses.
 */
static void
key_bounds(RelOptInfo *rel, TupleDesc desc, const char *order_by, List **strategies,
		   List **exprs, List **clauses)
{
	XxlSortItem *first = linitial(xxl_parse_order_by(order_by));
	AttrNumber	attno = xxl_ordered_item_attno(desc, first);
	Form_pg_attribute att;

	*strategies = *exprs = *clauses = NIL;
	if (attno == InvalidAttrNumber)
		return;
	att = TupleDescAttr(desc, attno - 1);
	if (OidIsValid(first->collation) && first->collation != att->attcollation)
		return;
	xxl_column_bounds(rel, attno, att, strategies, exprs, clauses);
}

static CustomPath *
make_path(RelOptInfo *rel, Path *seq, List *pathkeys, double fraction, char *order_by,
		  List *strategies, List *exprs)
{
	CustomPath *cpath = xxl_custom_path(rel, &ordered_path_methods);

	/*
	 * A sequential scan's work (the part the bounds leave), a comparison per
	 * row, a binary search per segment, and nothing before the first row.
	 */
	cpath->path.startup_cost = 0;
	cpath->path.total_cost = seq->startup_cost +
		fraction * (seq->total_cost - seq->startup_cost + rel->tuples * 2 * cpu_operator_cost) +
		(strategies ? 20 * random_page_cost : 0);
	cpath->path.pathkeys = pathkeys;
	/* the bounds' value expressions travel in the private list too: copied by the plan */
	cpath->custom_private = list_make3(makeString(order_by), strategies, exprs);
	return cpath;
}

static void
ordered_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	Relation	r;
	char	   *order_by = NULL;
	List	   *pathkeys = NIL;
	List	   *strategies = NIL,
			   *exprs = NIL,
			   *clauses = NIL;
	Path	   *seq;
	double		fraction = 1.0;

	if (prev_set_rel_pathlist)
		prev_set_rel_pathlist(root, rel, rti, rte);
	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_RELATION ||
		rte->inh || rel->reloptkind != RELOPT_BASEREL || IS_DUMMY_REL(rel))
		return;
	if (!xxl_ordered_scan)
		return;

	r = table_open(rte->relid, NoLock);
	if (xxl_is_table(r) && (order_by = xxl_table_order_by(rte->relid)) != NULL)
	{
		if (root->query_pathkeys != NIL || rel->has_eclass_joins)
			pathkeys = truncate_useless_pathkeys(root, rel,
												 key_pathkeys(root, rel, RelationGetDescr(r),
															  order_by));
		key_bounds(rel, RelationGetDescr(r), order_by, &strategies, &exprs, &clauses);
	}
	table_close(r, NoLock);
	if (pathkeys == NIL && strategies == NIL)
		return;
	if ((seq = xxl_seqscan_path(rel)) == NULL)
		return;
	if (clauses != NIL)
		fraction = clauselist_selectivity(root, clauses, rel->relid, JOIN_INNER, NULL);
	if (pathkeys != NIL)
		add_path(rel, &make_path(rel, seq, pathkeys, fraction, order_by, strategies, exprs)->path);
	if (strategies != NIL)
		add_path(rel, &make_path(rel, seq, NIL, fraction, order_by, strategies, exprs)->path);
}

static Plan *
plan_ordered_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
				  List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = extract_actual_clauses(clauses, false);
	cscan->scan.scanrelid = rel->relid;
	cscan->flags = best_path->flags;
	cscan->custom_plans = NIL;
	/* the bounds' values, so that setrefs resolves their parameters */
	cscan->custom_exprs = copyObject(lthird(best_path->custom_private));
	cscan->custom_private = list_make2(copyObject(linitial(best_path->custom_private)),
									   copyObject(lsecond(best_path->custom_private)));
	cscan->methods = &xxl_ordered_scan_methods;
	return &cscan->scan.plan;
}

void
xxl_table_ordered_init(void)
{
	RegisterCustomScanMethods(&xxl_ordered_scan_methods);
	prev_set_rel_pathlist = set_rel_pathlist_hook;
	set_rel_pathlist_hook = ordered_set_rel_pathlist;
}
