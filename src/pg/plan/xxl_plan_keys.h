/*
 * xxl_plan_keys.h — sort keys of the nodes this folder puts in plans, and
 * the hook another folder uses to put its own node in place of a
 * MergeAppend or Append (the shard folder's nodes over shards' sorted
 * streams).
 *
 * A node keeps its key in its custom_private (xxl_plan_keys_private,
 * read back by xxl_plan_keys_read) and shows it in EXPLAIN as a Sort shows
 * its own (xxl_plan_key_texts).
 */
#ifndef XXL_PG_PLAN_KEYS_H
#define XXL_PG_PLAN_KEYS_H

#include "commands/explain.h"
#include "nodes/plannodes.h"

/* A node's key, as the Sort or MergeAppend it replaces had it. */
typedef struct XxlPlanSortKeys
{
	int			ncols;
	AttrNumber *cols;			/* in the node's input rows */
	Oid		   *sortops;
	Oid		   *collations;
	bool	   *nulls_first;
	bool		distinct;		/* a Unique on key columns reads it: see XxlSortRunOptions */
} XxlPlanSortKeys;

/* The key as the first four members of a custom_private list. */
extern List *xxl_plan_keys_private(int ncols, const AttrNumber *cols, const Oid *sortops,
								   const Oid *collations, const bool *nulls_first);
/* ... and read back from one (a fifth member, when there, is distinct). */
extern void xxl_plan_keys_read(List *private, XxlPlanSortKeys *keys);

/*
 * Why the engine cannot order rows of target list tlist by the key
 * (ncols columns at cols of tlist, by sortops, in collations) exactly as
 * the plan would (a type it does not encode, another operator class, a
 * nondeterministic collation), for EXPLAIN VERBOSE; NULL when it can.
 */
extern const char *xxl_plan_keys_refused(List *tlist, int ncols, const AttrNumber *cols,
										 const Oid *sortops, const Oid *collations);

/* "a DESC NULLS LAST", "b COLLATE \"C\"": plan's keys as EXPLAIN shows a Sort's. */
extern List *xxl_plan_key_texts(Plan *plan, const XxlPlanSortKeys *keys, List *ancestors,
								ExplainState *es);

/*
 * Whether plan's rows (its estimate of rows and width, as cost_sort counts
 * them) are more than xxl.sort_in_plans_threshold (-1: work_mem): what
 * makes a Sort worth replacing, and a merge of shards too.
 */
extern bool xxl_plan_rows_beyond_threshold(const Plan *plan);

/*
 * Offered each MergeAppend and Append of a finished plan that no Limit
 * bounds (after its children's Sorts were replaced): the node to stand in
 * its place, or plan itself; rtable is the statement's.  Where it keeps
 * plan for a reason EXPLAIN VERBOSE should show, it sets *why.
 */
typedef Plan *(*XxlPlanAppendHook) (Plan *plan, List *rtable, const char **why);
extern void xxl_plan_register_appends(XxlPlanAppendHook hook);

#endif							/* XXL_PG_PLAN_KEYS_H */
