/*
 * xxl_graph.h — connected components, spanning forest and minimum spanning
 * forest of an undirected edge list with arbitrary 64-bit node ids, within
 * a fixed memory budget (thesis §4.3-4.4).
 *
 * Use: create with an operation, put every edge, run, then pull the result
 * (nodes for XXL_GRAPH_CC, edges for XXL_GRAPH_SF / XXL_GRAPH_MSF), then
 * destroy.  Nothing calls back into the caller except the cancel hook, and
 * that only from the caller's thread.
 *
 * Algorithm.
 *  0. In memory, when the graph fits the budget (checked as the edges
 *     come, and against expected_edges first; with max_semi_nodes unset):
 *     ids are numbered by a hash table as they come (idmap.h), the edges
 *     kept as pairs of dense ids (SF, MSF: with id and cost).  CC: the
 *     distinct ids are sorted once and the union-find of 2a runs on their
 *     ranks; SF: the union-find over the edges in input order is the
 *     output scan; MSF: the (cost, id) keys radix sorted (stable), then
 *     Kruskal as the output scan.  Nothing spills.  The first edge that
 *     would not fit replays the kept edges into step 1 (and the input
 *     spool) and the operator goes on there.
 *  1. Relabeling.  The 2m endpoint ids are sorted (8-byte keys, sign bit
 *     flipped so negative ids come first) and numbered 0..n-1 in id order;
 *     the dense-to-original map is kept as a stream.  The dense ids are sent
 *     back to their edges by a second sort on (edge index, side).
 *     Cost: sort(32m) + sort(32m) bytes, plus a scan of the input for SF/MSF.
 *  2a. Semi-external path, when one 8-byte word per node fits about half the
 *     budget: union-find with union by smaller index and path halving, so a
 *     set's root is its smallest dense id = smallest original id.
 *     CC: component of each node by a scan of the map.  SF: edges in input
 *     order, kept if they join two sets.  MSF: Kruskal over the edges sorted
 *     by (cost, id) (stable: equal (cost, id) in input order).
 *  2b. External path otherwise: node reduction by edge contraction with an
 *     external priority queue, the PQ version of [DSSS04] (thesis §4.3.4,
 *     Fig. 4.1): nodes are renamed by a pseudorandom permutation (a Feistel
 *     network with cycle walking, inverted by computation), then removed in
 *     the order n-1, n-2, ..., n'.  A removed node's first edge in the queue
 *     (MSF: the lightest; SF/CC: to the smallest neighbour, as [Sib97]
 *     suggests) is a forest edge / the node's parent; its other edges are
 *     relinked to that neighbour.  The n' remaining nodes fit the
 *     semi-external algorithm, which runs on the queue's remaining edges.
 *     Expected I/Os: O(sort(m) * ln(n/n')) for the reduction (each of the
 *     expected <= 2m ln(n/n') inspected edges costs a PQ push and pop) plus
 *     O(sort(m)) for relabeling and O(sort(n)) for the output.
 *     CC then labels every node by time-forward processing over the
 *     contraction records (node, parent) with a second priority queue,
 *     and maps each component to its smallest original id with three sorts
 *     of n records.
 *  The choice is automatic; stats say which path ran.
 *
 * Results.
 *  - A node is every id that appears as an endpoint (self loops included).
 *  - CC: one (node, component) per node, in ascending node order; component
 *    = the smallest node id of the node's component.  A node whose only
 *    edges are self loops is its own component.
 *  - SF: a spanning forest (n - components edges), each reported as the
 *    input edge (id, source, target, cost) unchanged, in input order.
 *  - MSF: the minimum spanning forest under the strict order (cost, id,
 *    input position): a unique forest, identical on both paths, in
 *    ascending (cost, id) order.  Costs may be negative or infinite; a NaN
 *    cost is an error (XXL_EINVAL).  -0.0 sorts before +0.0.
 *  - Self loops never appear in a forest; of parallel edges at most one.
 *  - No edges: no result rows.
 *
 * Memory: every buffer, sorter and queue is charged to the budget;
 * stats.memory_peak <= config memory.  Spill files live in the configured
 * directories and are all removed by xxl_graph_destroy, also after an
 * error or a cancel.  Note: max_spill_bytes applies to each spill file set
 * (every sorter and queue has its own), not to the operator's total.
 */
#ifndef XXL_GRAPH_H
#define XXL_GRAPH_H

#include "core/xxl_io.h"

typedef enum xxl_graph_op
{
	XXL_GRAPH_CC,				/* connected components */
	XXL_GRAPH_SF,				/* spanning forest */
	XXL_GRAPH_MSF				/* minimum spanning forest */
} xxl_graph_op;

typedef enum xxl_graph_path
{
	XXL_GRAPH_PATH_NONE,		/* not run yet */
	XXL_GRAPH_IN_MEMORY,		/* nothing spilled */
	XXL_GRAPH_SEMI_EXTERNAL,
	XXL_GRAPH_EXTERNAL
} xxl_graph_path;

typedef struct xxl_graph_config
{
	xxl_resources res;			/* memory >= xxl_graph_min_memory(); disk.block_size:
								 * the largest block to use (0 = 2 MiB) */
	uint64_t	expected_edges; /* hint for block sizes (e.g. the table's row
								 * estimate); 0 = unknown */
	uint64_t	seed;			/* of the external path's node permutation */
	uint64_t	max_semi_nodes; /* testing: cap on the nodes handled semi-externally
								 * (0 = what the budget allows) */
	bool		wide_queue;		/* testing: the external path's queue records as wide
								 * as for more than 2^32 nodes */
} xxl_graph_config;

typedef struct xxl_graph_stats
{
	xxl_graph_path path;
	uint64_t	edges;			/* edges put */
	uint64_t	self_loops;
	uint64_t	nodes;			/* distinct ids */
	uint64_t	semi_nodes_max; /* nodes the semi-external algorithm could take */
	bool		ids_in_memory;	/* semi-external forests: ids numbered by the in-memory map,
								 * not by sorts */
	bool		ids_by_id;		/* small non-negative ids their own union-find index
								 * (components in memory; the semi-external forests),
								 * or the forests' ids their dense numbers on the
								 * sorting path, without sorts */
	int			id_parts;		/* by id: 1, or the levels of components or forests in
								 * parts (semi-external, graph_split.c,
								 * graph_forest_split.c); 0 otherwise */
	uint64_t	base_nodes;		/* external: nodes left to the semi-external base (n') */
	uint64_t	contracted_nodes;	/* external: nodes removed by contraction */
	uint64_t	relinked_edges; /* external: edges re-inserted by contraction */
	uint64_t	parallel_edges; /* external: parallel edges dropped (for the minimum
								 * spanning forest the heavier, as met by rank) */
	uint64_t	contraction_passes; /* external: passes of node reduction (1) */
	uint64_t	pq_pushes;		/* all priority queues */
	uint64_t	pq_merges;
	uint64_t	components;		/* known once the result has been read */
	uint64_t	forest_edges;	/* SF/MSF: known once the result has been read */
	uint64_t	sorts;			/* sorters used */
	uint64_t	sort_runs;		/* runs they formed */
	int			sort_passes_max;	/* most merge passes of one sorter */
	uint64_t	sort_passes;	/* merge passes of all sorters */
	uint64_t	sorted_bytes;	/* record bytes put into sorters */
	uint64_t	bytes_read;		/* all spill I/O: sorters, queues, own streams */
	uint64_t	bytes_written;
	xxl_io_stats io;			/* the same per disk, with wait times; spill peak:
								 * the sum of each file set's peak (an upper bound) */
	uint64_t	memory_peak;
	uint64_t	memory_limit;
	uint64_t	memory_held;	/* the budget held now, sorters' shares whole */
	uint64_t	run_ns;			/* put + run */
	uint64_t	output_ns;		/* producing the result rows */
} xxl_graph_stats;

typedef struct xxl_graph xxl_graph;

/* The smallest budget xxl_graph_create accepts. */
size_t		xxl_graph_min_memory(void);

xxl_graph  *xxl_graph_create(const xxl_graph_config *config, xxl_graph_op op, xxl_error *err);

/*
 * Add an undirected edge.  id and cost are only reported back (SF, MSF) and
 * ordered by (MSF); CC ignores them.  Returns XXL_EINVAL for a NaN cost in
 * MSF (the operator is then failed).
 */
xxl_status	xxl_graph_put_edge(xxl_graph *g, int64_t source, int64_t target, int64_t id,
							   double cost);

typedef struct xxl_graph_edge
{
	int64_t		source,
				target,
				id;
	double		cost;
} xxl_graph_edge;

/* xxl_graph_put_edge for n edges, in one call: a host reading rows hands them over in batches. */
xxl_status	xxl_graph_put_edges(xxl_graph *g, const xxl_graph_edge *edges, size_t n);

/* End of input: compute the result (the last scan runs while pulling). */
xxl_status	xxl_graph_run(xxl_graph *g);

/* CC: 1 with a row, 0 at the end, -1 on error (see xxl_graph_error). */
int			xxl_graph_next_node(xxl_graph *g, int64_t *node, int64_t *component);

/* SF, MSF: 1 with a forest edge, 0 at the end, -1 on error. */
int			xxl_graph_next_edge(xxl_graph *g, int64_t *id, int64_t *source, int64_t *target,
								double *cost);

const xxl_error *xxl_graph_error(const xxl_graph *g);
void		xxl_graph_stats_get(const xxl_graph *g, xxl_graph_stats *stats);
const char *xxl_graph_path_name(xxl_graph_path path);

/* Removes every spill file and frees all memory.  Safe at any point. */
void		xxl_graph_destroy(xxl_graph *g);

#endif							/* XXL_GRAPH_H */
