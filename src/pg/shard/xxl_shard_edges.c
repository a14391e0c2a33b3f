/*
 * xxl_shard_edges.c — components and spanning forests of a sharded edge
 * table (graph.h's XxlShardedEdges): every server with foreign partitions
 * of the table reduces its own edges with pgxxl, all servers at once, and
 * the graph function here runs over the union of what they send and the
 * local partitions' edges.
 *
 * Why the answer is the one over all the edges:
 *   - components: a shard sends its components as (node, component)
 *     edges, a star per component.  Two nodes are joined by the stars
 *     exactly when they are joined by the shard's edges, and every node of
 *     the shard comes (a node alone in its component as a self loop), so
 *     the union has the nodes and the components of all the edges; the
 *     label, a component's smallest node, is then the same too.
 *   - spanning forest: a shard's forest joins what its edges join, so the
 *     union's forest spans the components of all the edges, with input
 *     edges only.  Which forest it is may differ from the one-server call.
 *   - minimum spanning forest: an edge a shard leaves out is the largest,
 *     in the strict order (cost, id), on a cycle of the shard's edges, so
 *     it is in no minimum forest of all the edges (the cycle property);
 *     under distinct (cost, id) the forest is the one-server call's, row
 *     for row.  Equal (cost, id) on two servers break by server order.
 * A shard sends at most its nodes' count of edges, whatever its edges.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/rel.h"

#include "pg/graph/graph.h"
#include "pg/io/io.h"
#include "pg/shard/xxl_shard_ops.h"
#include "pg/shard/xxl_shard_fdw.h"
#include "pg/shard/xxl_shard_stream.h"

/* What a shard runs over its partitions' edges (a query, quoted, for %s). */
static const char *const remote_call[] = {
	[XXL_REDUCE_COMPONENTS] = "SELECT node, component FROM xxl.connected_components(%s)",
	[XXL_REDUCE_FOREST] = "SELECT source, target FROM xxl.spanning_forest(%s)",
	[XXL_REDUCE_MIN_FOREST] = "SELECT id, source, target, cost FROM xxl.minimum_spanning_forest(%s)",
};

/*
 * The same rows packed, from a shard whose pgxxl has the function (0.9
 * on): a message per block of rows, not per row.
 */
static const char *const remote_operator[] = {
	[XXL_REDUCE_COMPONENTS] = "connected_components",
	[XXL_REDUCE_FOREST] = "spanning_forest",
	[XXL_REDUCE_MIN_FOREST] = "minimum_spanning_forest",
};
#define PACKED_CALL "SELECT * FROM xxl.shard_reduce_edges(%s, %s)"

typedef struct ShardedEdges
{
	XxlEdgeReduce reduce;
	int			ncols;			/* of a row */
	int			nshards;
	XxlShardStream **shards;
	bool	   *packed;			/* per shard: its rows come packed */
	bool		ended;			/* every shard's rows read */
	int			at;				/* the shard read last */
	Datum		values[4];
	bool		isnull[4];
	bytea	   *block;			/* packed rows being read, or NULL */
	const char *pos;			/* the next of them */
	const char *end;
} ShardedEdges;

/* The layout of the rows a shard sends one by one. */
static TupleDesc
result_desc(XxlEdgeReduce reduce)
{
	TupleDesc	desc = CreateTemplateTupleDesc(reduce == XXL_REDUCE_MIN_FOREST ? 4 : 2);

	for (int i = 0; i < desc->natts; i++)
		TupleDescInitEntry(desc, (AttrNumber) (i + 1), psprintf("c%d", i + 1),
						   i == 3 ? FLOAT8OID : INT8OID, -1, 0);
	return desc;
}

/* ... and of its packed blocks. */
static TupleDesc
packed_desc(void)
{
	TupleDesc	desc = CreateTemplateTupleDesc(1);

	TupleDescInitEntry(desc, (AttrNumber) 1, "block", BYTEAOID, -1, 0);
	return desc;
}

/*
 * The edges as the shard's function reads them: its table by name when it
 * is one whose columns are named as here (read there directly, as a table
 * is, not through a query), else a query of its partitions.
 */
static char *
edges_there(XxlShard *shard, TupleDesc parent, const bool *wanted)
{
	XxlShardTable *t = linitial(shard->tables);

	if (list_length(shard->tables) != 1)
		return xxl_shard_partitions_sql(shard, parent, wanted);
	for (int i = 0; i < parent->natts; i++)
		if (wanted[i] && strcmp(t->remote_columns[i],
								quote_identifier(NameStr(TupleDescAttr(parent, i)->attname))) != 0)
			return xxl_shard_partitions_sql(shard, parent, wanted);
	return t->remote_table;
}

static void *
start(Relation rel, XxlEdgeReduce reduce, const bool *wanted, List **local)
{
	List	   *servers;
	ListCell   *lc;
	ShardedEdges *se;
	XxlShardGroup *group;
	TupleDesc	rows = result_desc(reduce);
	TupleDesc	blocks = packed_desc();

	Assert(reduce > XXL_REDUCE_NONE && reduce < lengthof(remote_call));
	if (!xxl_shard_split(rel, local, &servers))
		return NULL;
	se = palloc0(sizeof(ShardedEdges));
	se->reduce = reduce;
	se->ncols = rows->natts;
	se->shards = palloc(sizeof(XxlShardStream *) * list_length(servers));
	se->packed = palloc0(sizeof(bool) * list_length(servers));
	/* every shard at work before anything is read */
	group = xxl_shard_group_create();
	foreach(lc, servers)
	{
		XxlShard   *shard = lfirst(lc);
		char	   *edges = quote_literal_cstr(edges_there(shard, RelationGetDescr(rel), wanted));
		XxlShardStream *s = xxl_shard_stream_open(group, shard, NULL, NULL);

		se->packed[se->nshards] = xxl_shard_stream_may_call(s, "xxl.shard_reduce_edges(text,text)");
		if (se->packed[se->nshards])
		{
			xxl_shard_stream_layout(s, blocks, NULL);
			xxl_shard_stream_send(s, psprintf(PACKED_CALL, edges,
											  quote_literal_cstr(remote_operator[reduce])), false);
		}
		else
		{
			xxl_shard_stream_layout(s, rows, NULL);
			xxl_shard_stream_send(s, psprintf(remote_call[reduce], edges), false);
		}
		se->shards[se->nshards++] = s;
	}
	return se;
}

/* The next row's values from the block in hand, or false when it is read. */
static bool
next_packed(ShardedEdges *se, int64 *v)
{
	if (se->block == NULL)
		return false;
	if (se->pos >= se->end)
	{
		pfree(se->block);
		se->block = NULL;
		return false;
	}
	for (int i = 0; i < se->ncols; i++)
		v[i] = xxl_packed_get8(se->pos + i * 8);
	se->pos += se->ncols * 8;
	return true;
}

/* The next row of any shard into v (a double as its bits), or false at the end. */
static bool
next_row(ShardedEdges *se, int64 *v)
{
	while (!next_packed(se, v))
	{
		if (!xxl_shard_streams_next_any(se->shards, se->nshards, &se->at, se->values, se->isnull))
			return false;
		/* (the shards' functions return no NULLs) */
		if (!se->packed[se->at])
		{
			for (int i = 0; i < se->ncols; i++)
				v[i] = DatumGetInt64(se->values[i]);
			return true;
		}
		se->block = DatumGetByteaPP(se->values[0]);
		se->pos = VARDATA_ANY(se->block);
		se->end = se->pos + VARSIZE_ANY_EXHDR(se->block);
		if (se->end == se->pos || (se->end - se->pos) % (se->ncols * 8) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("a shard sent a block of packed rows that is not whole rows")));
		xxl_shard_stream_packed_rows(se->shards[se->at], (se->end - se->pos) / (se->ncols * 8));
	}
	return true;
}

static int
read_edges(void *sharded, XxlEdge *out, int max)
{
	ShardedEdges *se = sharded;
	int			n = 0;
	int64		v[4];

	/* (in no order: the operator takes the union of the shards' edges) */
	while (n < max && !se->ended)
	{
		XxlEdge    *e = &out[n];

		if (!next_row(se, v))
		{
			se->ended = true;
			continue;
		}
		memset(e, 0, sizeof(*e));
		e->reverse_cost = -1;
		e->weight = 1;
		if (se->reduce == XXL_REDUCE_MIN_FOREST)
		{
			union
			{
				int64		i;
				double		d;
			}			cost = {.i = v[3]};

			e->id = v[0];
			e->source = v[1];
			e->target = v[2];
			e->cost = cost.d;
		}
		else
		{
			e->source = v[0];
			e->target = v[1];
		}
		n++;
	}
	return n;
}

static void
report(void *sharded, XxlOperator *op)
{
	ShardedEdges *se = sharded;

	xxl_shard_streams_report(op, se->shards, se->nshards);
}

static const XxlShardedEdges sharded_edges = {start, read_edges, report};

void
xxl_shard_edges_init(void)
{
	xxl_edges_register_sharded(&sharded_edges);
}
