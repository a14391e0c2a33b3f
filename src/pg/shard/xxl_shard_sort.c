/*
 * xxl_shard_sort.c — xxl.sort and xxl.sort_into of a sharded table: a
 * partitioned table (hash, range or list, any depth) with leaves that are
 * foreign tables of postgres_fdw.  Every foreign leaf is sorted on its
 * server (xxl_shard_stream.h), all of them started before anything is
 * read; the local leaves are sorted here, as one input, while they work;
 * then the engine's merge of sorted streams (xxl_sort_run_merge) hands out
 * the rows, holding one row per stream.  A table partitioned by ranges of
 * the key needs no merge: its sources (each shard, the local leaves) are
 * read one after the other in the order of their partitions' bounds
 * (streams_in_order), all of them sorting from the start.
 *
 * The privileges are those of a query of the partitioned table: SELECT on
 * it, and a user mapping for every server.  A table with row security in
 * force, or a leaf that is another wrapper's foreign table, is read and
 * sorted here as before (xxl_input's query of the table).
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "partitioning/partbounds.h"
#include "partitioning/partdesc.h"
#include "utils/lsyscache.h"
#include "utils/partcache.h"
#include "utils/rel.h"

#include "pg/runtime/runtime.h"
#include "pg/io/io.h"
#include "pg/sort/sort.h"
#include "pg/shard/xxl_shard_ops.h"
#include "pg/shard/xxl_shard_fdw.h"
#include "pg/shard/xxl_shard_stream.h"

typedef struct ShardedSort
{
	int			nshards;
	XxlShardStream **shards;
	XxlSortRun *local;			/* the local leaves' sort, or NULL */
} ShardedSort;

static bool
local_next(void *run, Datum *values, bool *isnull)
{
	return xxl_sort_run_next((XxlSortRun *) run, values, isnull);
}

/* Every shard's figures, as the operator's detail "shards". */
static void
report_shards(void *arg, XxlOperator *op)
{
	ShardedSort *ss = arg;

	xxl_shard_streams_report(op, ss->shards, ss->nshards);
	if (ss->local != NULL)
	{
		XxlStats	stats;

		xxl_sort_run_stats(ss->local, &stats);
		xxl_operator_detail(op, "local_rows", UINT64_FORMAT, stats.rows_in);
	}
}

/*
 * Whether the first columns of rel's partitioning (all of them, or as many
 * as key has) are key's first columns: ranges, each column ascending in
 * its type's default order and in the key's collation.  Rows with equal
 * key are then in one partition, and the partitions' bounds order the key.
 */
static bool
ranges_of_key(Relation rel, XxlSortKey *key)
{
	PartitionKey pk = RelationGetPartitionKey(rel);

	if (pk->strategy != PARTITION_STRATEGY_RANGE)
		return false;
	for (int i = 0; i < Min(pk->partnatts, xxl_sortkey_ncols(key)); i++)
	{
		Oid			opclass = GetDefaultOpClass(pk->parttypid[i], BTREE_AM_OID);
		bool		desc,
					nulls_first;
		Oid			collation;

		xxl_sortkey_column_order(key, i, &desc, &nulls_first, &collation);
		if (pk->partattrs[i] == 0 || pk->partattrs[i] != xxl_sortkey_attno(key, i) || desc ||
			!OidIsValid(opclass) || get_opclass_family(opclass) != pk->partopfamily[i] ||
			collation != pk->partcollation[i])
			return false;
	}
	return true;
}

/* The shard in shards that serves partition relid, or NULL (a local one). */
static XxlShard *
shard_serving(List *shards, Oid relid)
{
	ListCell   *lc;

	foreach(lc, shards)
	{
		XxlShard   *shard = lfirst(lc);
		ListCell   *t;

		foreach(t, shard->tables)
		{
			if (((XxlShardTable *) lfirst(t))->relid == relid)
				return shard;
		}
	}
	return NULL;
}

/*
 * When rel's partitions hold ranges of key that follow one another and
 * each source's partitions are next to each other: the sources in their
 * partitions' order (an XxlShard, or NULL for the local leaves), else NIL.
 * A default partition (rows between the bounds) or a partition that is
 * partitioned again (sorted as one source with others) rules it out.
 */
static List *
sources_in_key_order(Relation rel, XxlSortKey *key, List *shards)
{
	PartitionDesc pd = RelationGetPartitionDesc(rel, false);
	List	   *order = NIL;

	if (!ranges_of_key(rel, key) || partition_bound_has_default(pd->boundinfo))
		return NIL;
	for (int i = 0; i < pd->nparts; i++)
	{
		XxlShard   *source;

		if (get_rel_relkind(pd->oids[i]) == RELKIND_PARTITIONED_TABLE)
			return NIL;
		source = shard_serving(shards, pd->oids[i]);
		if (order != NIL && llast(order) == source)
			continue;
		if (list_member_ptr(order, source))
			return NIL;			/* its partitions are not next to each other */
		order = lappend(order, source);
	}
	return order;
}

static XxlSortRun *
sharded_sort(Relation rel, XxlSortKey *key, TupleDesc out_desc, AttrNumber *map,
			 const XxlSortRunOptions *options)
{
	List	   *local;
	List	   *servers;
	List	   *sources;
	ListCell   *lc;
	ShardedSort *ss;
	XxlSortedStream *streams;
	XxlShardGroup *group;
	XxlSortRunOptions merge = {0};
	TupleDesc	desc = RelationGetDescr(rel);
	int			local_at = -1;

	if (!xxl_shard_split(rel, &local, &servers))
		return NULL;
	/* what a query of the table needs: SELECT on it */
	xxl_input_check_select(rel, 0, NULL);
	ss = palloc0(sizeof(ShardedSort));
	ss->shards = palloc(sizeof(XxlShardStream *) * list_length(servers));
	streams = palloc0(sizeof(XxlSortedStream) * (list_length(servers) + 1));
	if (options != NULL)
		merge = *options;
	/* in the partitions' order where that is the key's, else shards first */
	sources = sources_in_key_order(rel, key, servers);
	merge.streams_in_order = sources != NIL;
	if (!merge.streams_in_order)
	{
		sources = list_copy(servers);
		if (local != NIL)
			sources = lappend(sources, NULL);
	}
	/* every shard at work before anything is read */
	group = xxl_shard_group_create();
	foreach(lc, sources)
	{
		XxlSortedStream *st = &streams[foreach_current_index(lc)];

		if (lfirst(lc) == NULL)
		{
			local_at = foreach_current_index(lc);
			continue;
		}
		st->next = xxl_shard_stream_next;
		st->arg = ss->shards[ss->nshards++] = xxl_shard_stream_start(group, lfirst(lc), desc, key);
	}
	/* the local leaves sorted here meanwhile, as one input */
	if (local_at >= 0)
	{
		XxlSortRunOptions lopt = {.memory = merge.memory, .name = "sort"};

		ss->local = xxl_sort_run_start(xxl_input_open_leaves(rel, local), key, desc, NULL, NULL,
									   &lopt);
		streams[local_at].next = local_next;
		streams[local_at].arg = ss->local;
	}
	/* (the shards' rows go out while they are read: the statement may scan those servers too) */
	xxl_shard_streams_free_for_statement(ss->shards, ss->nshards, NULL);
	return xxl_sort_run_merge(streams, list_length(sources), key, desc, out_desc, map, &merge,
							  report_shards, ss);
}

void
xxl_shard_sort_init(void)
{
	xxl_sort_register_sharded(sharded_sort);
}
