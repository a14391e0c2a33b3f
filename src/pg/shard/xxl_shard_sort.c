/*
 * xxl_shard_sort.c — xxl.sort and xxl.sort_into of a sharded table: a
 * partitioned table (hash, range or list, any depth) with leaves that are
 * foreign tables of postgres_fdw.  Every foreign leaf is sorted on its
 * server (xxl_shard_stream.h), all of them started before anything is
 * read; the local leaves are sorted here, as one input, while they work;
 * then the engine's merge of sorted streams (xxl_sort_run_merge) hands out
 * the rows, holding one row per stream.
 *
 * The privileges are those of a query of the partitioned table: SELECT on
 * it, and a user mapping for every server.  A table with row security in
 * force, or a leaf that is another wrapper's foreign table, is read and
 * sorted here as before (xxl_input's query of the table).
 */
#include "postgres.h"

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

static XxlSortRun *
sharded_sort(Relation rel, XxlSortKey *key, TupleDesc out_desc, AttrNumber *map,
			 const XxlSortRunOptions *options)
{
	List	   *local;
	List	   *servers;
	ListCell   *lc;
	ShardedSort *ss;
	XxlSortedStream *streams;
	XxlShardGroup *group;
	TupleDesc	desc = RelationGetDescr(rel);
	int			n = 0;

	if (!xxl_shard_split(rel, &local, &servers))
		return NULL;
	/* what a query of the table needs: SELECT on it */
	xxl_input_check_select(rel, 0, NULL);
	ss = palloc0(sizeof(ShardedSort));
	ss->shards = palloc(sizeof(XxlShardStream *) * list_length(servers));
	streams = palloc0(sizeof(XxlSortedStream) * (list_length(servers) + 1));
	/* every shard at work before anything is read */
	group = xxl_shard_group_create();
	foreach(lc, servers)
	{
		XxlShardStream *s = xxl_shard_stream_start(group, lfirst(lc), desc, key);

		ss->shards[ss->nshards++] = s;
		streams[n].next = xxl_shard_stream_next;
		streams[n].arg = s;
		n++;
	}
	if (local != NIL)
	{
		XxlSortRunOptions lopt = {.memory = options ? options->memory : 0, .name = "sort"};

		ss->local = xxl_sort_run_start(xxl_input_open_leaves(rel, local), key, desc, NULL, NULL,
									   &lopt);
		streams[n].next = local_next;
		streams[n].arg = ss->local;
		n++;
	}
	return xxl_sort_run_merge(streams, n, key, desc, out_desc, map, options, report_shards, ss);
}

void
xxl_shard_sort_init(void)
{
	xxl_sort_register_sharded(sharded_sort);
}
