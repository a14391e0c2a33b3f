/*
 * xxl_plan_columns.h — references to columns, for the plan nodes of plan/.
 */
#ifndef XXL_PG_PLAN_COLUMNS_H
#define XXL_PG_PLAN_COLUMNS_H

#include "nodes/primnodes.h"
#include "nodes/pg_list.h"

/*
 * A Var of varno referring to tle's column (its resno, type, typmod and
 * collation); the list form maps every entry of tlist so.  How the plan
 * nodes here see a child's row (OUTER_VAR) or their own scan tuple
 * (INDEX_VAR).
 */
extern Var *xxl_plan_column_ref(const TargetEntry *tle, int varno);
extern List *xxl_plan_column_refs(List *tlist, int varno);

/*
 * Whether a node with target list tlist projects nothing: its row is its
 * child's, column for column, each a reference to the child's column
 * (OUTER_VAR) or, where that column is a constant (a column nobody
 * reads), the same constant.  So are a Sort's and a MergeAppend's.
 */
extern bool xxl_plan_tlist_passes_through(List *tlist);

#endif							/* XXL_PG_PLAN_COLUMNS_H */
