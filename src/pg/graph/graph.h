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
 * Open the edges argument of function fname (for messages) and find its
 * columns; needs: XXL_EDGE_* flags.  While the reader is open, errors get a
 * context line naming the function and the source.
 */
extern XxlEdgeReader *xxl_edges_open(const char *edges, const char *fname, int needs);

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
