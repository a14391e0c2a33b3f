/*
 * xxl_shard_ops.h — the operators of the shard folder, each registered at
 * load time with the folder whose calls it takes over for sharded tables
 * (xxl_shard_init in xxl_shard_init.c).
 */
#ifndef XXL_PG_SHARD_OPS_H
#define XXL_PG_SHARD_OPS_H

/* xxl.sort / xxl.sort_into of a sharded table (xxl_shard_sort.c) */
extern void xxl_shard_sort_init(void);

/* components and spanning forests of a sharded edge table (xxl_shard_edges.c) */
extern void xxl_shard_edges_init(void);

/* ORDER BY of a sharded table in plans: XxlShardMerge for MergeAppend (xxl_shard_plan.c) */
extern void xxl_shard_plan_init(void);

#endif							/* XXL_PG_SHARD_OPS_H */
