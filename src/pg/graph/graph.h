/*
 * graph.h — the graph functions' edge reader (folder graph/), the part of
 * the folder others may build on: an edge list given as pgRouting gives
 * it (a table name or a query, columns found by name), read in batches.
 * The folder's SQL functions (components and forests, paths, analytics)
 * run on it through one driver (xxl_graph_driver.h).
 *
 * Edges come from xxl_input (a table read directly, or a query through an
 * SPI cursor).  Columns are matched by name: source and target (smallint,
 * integer or bigint), id (the same types) and cost (real, double precision,
 * numeric, smallint, integer or bigint) when the function needs them,
 * and reverse_cost (the same types) when a function takes it and the edges
 * have it;
 * other columns are ignored.  NULL ids, a NULL or NaN cost, a missing or
 * mistyped column are errors with an SQLSTATE that names the problem (see
 * docs/graph.md).
 */
#ifndef XXL_PG_GRAPH_H
#define XXL_PG_GRAPH_H

#include "access/tupdesc.h"
#include "utils/relcache.h"

#include "pg/runtime/runtime.h"

/* Which columns a graph function reads besides source and target. */
#define XXL_EDGE_ID		0x01
#define XXL_EDGE_COST	0x02
#define XXL_EDGE_RCOST	0x04	/* reverse_cost, when the edges have it */
#define XXL_EDGE_WEIGHT	0x08	/* weight, when the edges have it */

typedef struct XxlEdge
{
	int64		source;
	int64		target;
	int64		id;				/* 0 unless XXL_EDGE_ID */
	double		cost;			/* 0 unless XXL_EDGE_COST */
	double		reverse_cost;	/* -1 unless XXL_EDGE_RCOST finds the column */
	double		weight;			/* 1 unless XXL_EDGE_WEIGHT finds the column */
} XxlEdge;

typedef struct XxlEdgeReader XxlEdgeReader;

/*
 * What a function may have each shard of a sharded edge table do to its
 * own edges first, so that the same function over the union of the
 * shards' results (and the local partitions' edges) gives the answer it
 * gives over all the edges: their components as (node, component) edges,
 * their spanning forest, their minimum spanning forest.
 */
typedef enum XxlEdgeReduce
{
	XXL_REDUCE_NONE,			/* the edges travel as they are: not sharded */
	XXL_REDUCE_COMPONENTS,
	XXL_REDUCE_FOREST,
	XXL_REDUCE_MIN_FOREST
} XxlEdgeReduce;

/*
 * Open the edges argument of function fname (for messages) and find its
 * columns; needs: XXL_EDGE_* flags.  While the reader is open, errors get a
 * context line naming the function and the source.
 */
extern XxlEdgeReader *xxl_edges_open(const char *edges, const char *fname, int needs);

/*
 * The same, for a function whose edges each shard of a sharded table
 * reduces first (XxlEdgeReduce): when edges names a partitioned table with
 * foreign partitions of postgres_fdw, every shard starts its reduction
 * before anything is read, the local partitions are read here while they
 * work, then the shards' results.  Any other edges are read as by
 * xxl_edges_open.
 */
extern XxlEdgeReader *xxl_edges_open_reduced(const char *edges, const char *fname, int needs,
											 XxlEdgeReduce reduce);

/* What the shards sent, as the operator's detail "shards" (nothing when not sharded). */
extern void xxl_edges_report(XxlEdgeReader *r, XxlOperator *op);

/*
 * The shards' side, which the shard folder registers at load time: start
 * every shard's reduction of rel's foreign partitions (the columns of rel
 * that are wanted, by their names here) and list the local leaves in
 * *local; NULL when rel is not sharded.  read: the next edges, 0 at the
 * end; report: as xxl_edges_report.
 */
typedef struct XxlShardedEdges
{
	void	   *(*start) (Relation rel, XxlEdgeReduce reduce, const bool *wanted, List **local);
	int			(*read) (void *sharded, XxlEdge *out, int max);
	void		(*report) (void *sharded, XxlOperator *op);
} XxlShardedEdges;
extern void xxl_edges_register_sharded(const XxlShardedEdges *sharded);

/*
 * The next edges, up to max, into out (the rows of an xxl table's page in
 * one loop); 0 at the end.  Checks for interrupts.
 */
extern int	xxl_edges_read(XxlEdgeReader *r, XxlEdge *out, int max);

/*
 * xxl_edges_read adds the edges it reads to *counter (an operator's
 * rows_in) as it goes, so a statement that fails on a row still reports
 * the rows before it.
 */
extern void xxl_edges_count_into(XxlEdgeReader *r, uint64 *counter);

/* The planner's row estimate of a table source, 0 if unknown (a query). */
extern uint64 xxl_edges_estimate(XxlEdgeReader *r);

extern void xxl_edges_close(XxlEdgeReader *r);

#endif							/* XXL_PG_GRAPH_H */
