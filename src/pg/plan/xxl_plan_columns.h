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

#endif							/* XXL_PG_PLAN_COLUMNS_H */
