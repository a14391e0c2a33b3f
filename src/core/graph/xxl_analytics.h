/*
 * xxl_analytics.h — triangles (listing, counting, per node), maximal
 * independent set, greedy coloring and PageRank over an edge list of
 * arbitrary 64-bit node ids, within a fixed memory budget (thesis §4.2,
 * §4.6, §4.7; PageRank as one sort-and-scan per iteration).
 *
 * Use: create with an operation, put every edge, run, pull the rows, then
 * destroy.  Nothing calls back into the caller except the cancel hook, and
 * that only from the caller's thread.
 *
 * One pipeline serves every operation: sorters and the external priority
 * queue of the operator environment (xxl_env.h), each holding what it is
 * given in memory and spilling only beyond it.  When the graph fits the
 * budget nothing is written ("in-memory" in the stats); when it does not,
 * the same passes run with their sorters, queue and spools on disk
 * ("external").  The choice is made by each part as its input grows.
 *
 * Undirected operations (all but PageRank).  Each edge goes into a sorter
 * in both orientations; a self loop only marks its node.  The sorted,
 * duplicate-free stream S groups every node with its neighbours, in id
 * order (every node, also a node with self loops only).
 *  - MIS: greedy in ascending id order by time-forward processing (thesis
 *    Listing 4.1 on the symmetric list): a node joins unless a smaller
 *    neighbour did, and a joining node sends "excluded" to its larger
 *    neighbours through the queue.
 *  - Coloring: greedy in ascending id order (thesis Fig. 4.7): a node's
 *    smaller neighbours' colors arrive through the queue in color order,
 *    so the smallest color missing is found in one pass; it sends its color
 *    to its larger neighbours.  At most max degree + 1 colors.
 *  - Triangles: the node iterator of [SW05] (thesis §4.6): degrees by a
 *    scan of S, each edge oriented from the lower (degree, id) to the
 *    higher by a sort that brings both ends' degrees together, then for
 *    every node each pair of its out-neighbours is a query "is (u, w) an
 *    edge"; the sorted queries are answered by one merge with the sorted
 *    edges.  A node has at most sqrt(2m) out-neighbours, which are held in
 *    memory.  Counting never lists: the merge counts.
 * PageRank: directed edges, duplicates adding their weights, self loops
 * counting as links; a dangling node's rank is spread over all nodes.  Ids
 * are numbered densely (relabel.c).  When the ranks and the edges fit the
 * budget, the iterations run on arrays; otherwise every iteration joins
 * the ranks with the edges sorted by source (a scan), sorts the
 * contributions by target and sums them (a scan).
 *
 * Memory: every buffer, sorter, queue and spool is charged to the budget;
 * stats.memory_peak <= the budget.  Spill files are removed by
 * xxl_an_destroy, also after an error or a cancel.
 */
#ifndef XXL_ANALYTICS_H
#define XXL_ANALYTICS_H

#include "core/xxl_io.h"

typedef enum xxl_an_op
{
	XXL_AN_TRIANGLES,			/* rows: a < b < c */
	XXL_AN_TRIANGLE_COUNT,		/* one row: v[0] = the count */
	XXL_AN_NODE_TRIANGLES,		/* rows: node, triangles, degree; x = clustering */
	XXL_AN_MIS,					/* rows: node */
	XXL_AN_COLORING,			/* rows: node, color */
	XXL_AN_PAGERANK				/* rows: node; x = rank */
} xxl_an_op;

typedef struct xxl_an_config
{
	xxl_resources res;			/* memory >= xxl_an_min_memory() */
	xxl_an_op	op;
	uint64_t	expected_edges; /* hint; 0 = unknown */
	/* PageRank */
	double		damping;		/* in [0, 1] */
	int			max_iterations; /* >= 0 */
	double		tolerance;		/* L1 change that stops the iteration */
	bool		force_external; /* tests: the external path (PageRank: never on arrays) */
	/*
	 * tests: PageRank's iterations off the arrays take ranges of at most
	 * this many targets (0: as many as the budget holds), or sort the
	 * contributions (UINT64_MAX)
	 */
	uint64_t	rank_range_nodes;

	/*
	 * tests: the external triangle count takes chunks of at most this many
	 * out-lists (0: as many as half the budget holds, while they are few),
	 * or sorts queries (UINT64_MAX)
	 */
	uint64_t	tri_chunk_lists;
} xxl_an_config;

/* A result row; which fields mean what: see xxl_an_op. */
typedef struct xxl_an_row
{
	int64_t		v[3];
	double		x;
} xxl_an_row;

typedef struct xxl_an_stats
{
	xxl_an_op	op;
	const char *path;			/* "in-memory" (nothing spilled) or "external" */
	uint64_t	edges;			/* edges put */
	uint64_t	self_loops;
	uint64_t	duplicates;		/* undirected: edges put more than once (either way) */
	uint64_t	nodes;
	uint64_t	links;			/* undirected: distinct edges; PageRank: edges kept */
	uint64_t	max_degree;
	uint64_t	triangles;
	uint64_t	queries;		/* triangle queries (pairs of out-neighbours) */
	uint64_t	max_out_degree; /* triangles: the most out-neighbours of one node */
	uint64_t	set_size;		/* MIS */
	uint64_t	colors;			/* coloring: colors used */
	uint64_t	iterations;		/* PageRank */
	double		delta;			/* PageRank: the last iteration's L1 change */
	bool		converged;
	uint64_t	dangling;		/* PageRank: nodes without out-weight */
	const char *method;			/* PageRank: "arrays", "streamed" (links past the
								 * arrays read per iteration), "ranged" (the
								 * targets' sums in memory a range at a time) or
								 * "sorted" (a sort per iteration) */
	uint64_t	ranges;			/* PageRank "ranged": target ranges per iteration;
								 * triangles: ranges of out-lists (0: whole) */
	bool		numbering_worker;	/* the in-memory numbering ran on a second thread */
	uint64_t	numbering_wait_ns;	/* ... and the caller waited this long for it */
	uint64_t	pq_pushes;
	uint64_t	sorts;
	uint64_t	sorted_bytes;
	uint64_t	bytes_read;
	uint64_t	bytes_written;
	xxl_io_stats io;
	uint64_t	memory_peak;
	uint64_t	memory_held;	/* the budget held now, sorters' shares whole */
	uint64_t	memory_limit;
	uint64_t	run_ns;
	uint64_t	build_ns;		/* in memory: ranking ids and building the lists */
	uint64_t	compute_ns;		/* in memory: counting triangles; PageRank: iterating */
	uint64_t	output_ns;
} xxl_an_stats;

typedef struct xxl_an xxl_an;

size_t		xxl_an_min_memory(void);

xxl_an	   *xxl_an_create(const xxl_an_config *config, xxl_error *err);

/*
 * Add an edge (undirected but for PageRank).  weight: PageRank's weight of
 * the link (>= 0, finite; 1 without a weight column), ignored otherwise.
 */
xxl_status	xxl_an_put_edge(xxl_an *a, int64_t source, int64_t target, double weight);

/* End of input: compute (the last pass runs while pulling). */
xxl_status	xxl_an_run(xxl_an *a);

/* 1 with a row, 0 at the end, -1 on error (see xxl_an_error). */
int			xxl_an_next(xxl_an *a, xxl_an_row *row);

const xxl_error *xxl_an_error(const xxl_an *a);
/* Any time; an input the host stopped loses its numbering worker first. */
void		xxl_an_stats_get(xxl_an *a, xxl_an_stats *stats);
void		xxl_an_destroy(xxl_an *a);

#endif							/* XXL_ANALYTICS_H */
