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
#include "pg/shard/xxl_shard_ops.h"
#include "pg/shard/xxl_shard_fdw.h"
#include "pg/shard/xxl_shard_stream.h"

/* What a shard runs over its partitions' edges (a query, quoted, for %s). */
static const char *const remote_call[] = {
	[XXL_REDUCE_COMPONENTS] = "SELECT node, component FROM xxl.connected_components(%s)",
	[XXL_REDUCE_FOREST] = "SELECT source, target FROM xxl.spanning_forest(%s)",
	[XXL_REDUCE_MIN_FOREST] = "SELECT id, source, target, cost FROM xxl.minimum_spanning_forest(%s)",
};

typedef struct ShardedEdges
{
	XxlEdgeReduce reduce;
	int			nshards;
	XxlShardStream **shards;
	bool		ended;			/* every shard's rows read */
	int			at;				/* the shard read last */
	Datum		values[4];
	bool		isnull[4];
} ShardedEdges;

/* The layout of what a shard sends. */
static TupleDesc
result_desc(XxlEdgeReduce reduce)
{
	TupleDesc	desc = CreateTemplateTupleDesc(reduce == XXL_REDUCE_MIN_FOREST ? 4 : 2);

	for (int i = 0; i < desc->natts; i++)
		TupleDescInitEntry(desc, (AttrNumber) (i + 1), psprintf("c%d", i + 1),
						   i == 3 ? FLOAT8OID : INT8OID, -1, 0);
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
	TupleDesc	desc;

	Assert(reduce > XXL_REDUCE_NONE && reduce < lengthof(remote_call));
	if (!xxl_shard_split(rel, local, &servers))
		return NULL;
	se = palloc0(sizeof(ShardedEdges));
	se->reduce = reduce;
	se->shards = palloc(sizeof(XxlShardStream *) * list_length(servers));
	desc = result_desc(reduce);
	/* every shard at work before anything is read */
	group = xxl_shard_group_create();
	foreach(lc, servers)
	{
		XxlShard   *shard = lfirst(lc);
		char	   *edges = edges_there(shard, RelationGetDescr(rel), wanted);

		se->shards[se->nshards++] =
			xxl_shard_stream_start_query(group, shard, desc,
										 psprintf(remote_call[reduce], quote_literal_cstr(edges)));
	}
	return se;
}

static int
read_edges(void *sharded, XxlEdge *out, int max)
{
	ShardedEdges *se = sharded;
	int			n = 0;

	/* (in no order: the operator takes the union of the shards' edges) */
	while (n < max && !se->ended)
	{
		XxlEdge    *e = &out[n];
		const Datum *v = se->values;

		if (!xxl_shard_streams_next_any(se->shards, se->nshards, &se->at, se->values, se->isnull))
		{
			se->ended = true;
			continue;
		}
		/* (the shards' functions return no NULLs) */
		memset(e, 0, sizeof(*e));
		e->reverse_cost = -1;
		e->weight = 1;
		if (se->reduce == XXL_REDUCE_MIN_FOREST)
		{
			e->id = DatumGetInt64(v[0]);
			e->source = DatumGetInt64(v[1]);
			e->target = DatumGetInt64(v[2]);
			e->cost = DatumGetFloat8(v[3]);
		}
		else
		{
			e->source = DatumGetInt64(v[0]);
			e->target = DatumGetInt64(v[1]);
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
