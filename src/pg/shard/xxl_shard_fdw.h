/*
 * xxl_shard_fdw.h — postgres_fdw's side of a shard: which partitions are
 * its foreign tables, what they are called on their server, and their
 * connections.  Connections are postgres_fdw's own (its user mappings, its
 * connection cache, the remote transaction it opens for the local one and
 * commits, aborts or cancels with it), reached through the functions its
 * library exports; pgxxl keeps no connection of its own.
 */
#ifndef XXL_PG_SHARD_FDW_H
#define XXL_PG_SHARD_FDW_H

#include "libpq-fe.h"
#include "utils/relcache.h"

/* A foreign partition of postgres_fdw, as its server names it. */
typedef struct XxlShardTable
{
	Oid			relid;
	char	   *remote_table;	/* quoted and qualified, as postgres_fdw names it */
	char	  **remote_columns; /* per column of the parent: quoted, or NULL (dropped) */
} XxlShardTable;

/*
 * A server with foreign partitions of one table: it is sent one statement
 * for all of them, as postgres_fdw has one connection per server and user.
 */
typedef struct XxlShard
{
	Oid			serverid;
	char	   *server;			/* its name */
	char	   *where;			/* for messages: partition "p1", or partitions "p1", "p2" */
	List	   *tables;			/* XxlShardTable */
	Oid			userid;			/* whose user mapping; InvalidOid: the current user's */
} XxlShard;

/* Whether relid is a foreign table served by postgres_fdw. */
extern bool xxl_shard_is_postgres_fdw(Oid relid);

/*
 * The leaves of partitioned table rel (locked, AccessShareLock): local ones
 * (OIDs) into *local, foreign ones grouped by server (XxlShard) into
 * *shards.  False when the table is not sharded as pgxxl works on it: no
 * leaf is foreign, a leaf is another wrapper's, row security is in force
 * on rel, or xxl.on_shards is off.
 */
extern bool xxl_shard_split(Relation rel, List **local, List **shards);

/*
 * The shard of one foreign partition relid of postgres_fdw alone (a scan of
 * it in a plan), for user userid (InvalidOid: the current user).
 */
extern XxlShard *xxl_shard_of_partition(Oid relid, Oid userid);

/*
 * postgres_fdw's connection to the shard's server as its user, in
 * the remote transaction it keeps for the local one; an error if the user
 * has no user mapping or the server cannot be reached.
 */
extern PGconn *xxl_shard_connect(XxlShard *shard);
/* Give the connection back to postgres_fdw's cache. */
extern void xxl_shard_release(PGconn *conn);

#endif							/* XXL_PG_SHARD_FDW_H */
