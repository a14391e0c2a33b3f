/*
 * shard.h — operators over tables sharded with postgres_fdw (folder
 * shard/): a partitioned table whose partitions include foreign tables of
 * postgres_fdw has each of those worked on by pgxxl on its own server,
 * all at once: sorted, with the sorted rows merged here
 * (xxl_shard_sort.c), or reduced to its components or spanning forest,
 * with the graph function run here over the union (xxl_shard_edges.c).
 * Other folders see only the set-up at _PG_init.
 */
#ifndef XXL_PG_SHARD_H
#define XXL_PG_SHARD_H

/* Called from _PG_init: sorts and forests of sharded tables go through here. */
extern void xxl_shard_init(void);

#endif							/* XXL_PG_SHARD_H */
