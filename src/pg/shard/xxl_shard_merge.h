/*
 * xxl_shard_merge.h — the XxlShardMerge node: a MergeAppend over foreign
 * partitions of postgres_fdw (and local ones) whose foreign partitions'
 * sorted scans all start at once and are merged by the engine; and
 * XxlShardAppend, the same for an ordered Append (range partitions read in
 * their bounds' order), whose children are read one after the other.
 * Which (Merge)Appends become one: xxl_shard_plan.c; the nodes:
 * xxl_shard_merge_exec.c.
 */
#ifndef XXL_PG_SHARD_MERGE_H
#define XXL_PG_SHARD_MERGE_H

#include "nodes/extensible.h"
#include "nodes/plannodes.h"

#define XXL_SHARD_MERGE_NAME "XxlShardMerge"
#define XXL_SHARD_APPEND_NAME "XxlShardAppend"

/* custom_private: the key (xxl_plan_keys_private) */
extern const CustomScanMethods xxl_shard_merge_methods;
/* custom_private: the collations the order depends on (an OID list), in a list */
extern const CustomScanMethods xxl_shard_append_methods;

/*
 * Whether child is a plain sorted scan of a postgres_fdw foreign table
 * (rtable: the statement's): then its table, the SQL postgres_fdw sends
 * for it, and the table's columns that SQL returns, in their order.
 */
extern bool xxl_shard_merge_child_sql(const Plan *child, List *rtable, Oid *relid,
									  const char **sql, List **retrieved);

#endif							/* XXL_PG_SHARD_MERGE_H */
