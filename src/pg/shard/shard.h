/*
 * shard.h — operators over tables sharded with postgres_fdw (folder
 * shard/): a partitioned table whose partitions include foreign tables of
 * postgres_fdw has each of those sorted on its own server by pgxxl, all
 * at once, and the sorted rows merged here (xxl_shard_sort.c).  Other
 * folders see only the set-up at _PG_init.
 */
#ifndef XXL_PG_SHARD_H
#define XXL_PG_SHARD_H

/* Called from _PG_init: sorts of sharded tables go through here. */
extern void xxl_shard_init(void);

#endif							/* XXL_PG_SHARD_H */
