/*
 * xxl_paths.h — breadth-first search and single-source shortest paths over
 * an edge list with arbitrary 64-bit node ids and pgRouting's edge
 * semantics, within a fixed memory budget.
 *
 * Use: create with the operation and the sources, put every edge, run,
 * then pull the tree rows (xxl_paths_next) or, with a target, the path
 * (xxl_paths_next_step), then destroy.  Nothing calls back into the caller
 * except the cancel hook, and that only from the caller's thread.
 *
 * Edges (pgRouting's convention).  An edge (id, source, target, cost,
 * reverse_cost) has the direction source -> target when cost >= 0 and
 * target -> source when reverse_cost >= 0 (give -1 for "no reverse").
 * Undirected: each existing direction is an undirected edge of its cost.
 * Costs may be 0 or +Infinity; NaN is an error (XXL_EINVAL).  BFS looks
 * only at which directions exist.
 *
 * Results.
 *  - Tree rows (xxl_paths_next): every node reachable from a source within
 *    max_distance (SSSP) or max_depth edges (BFS), once, in the order the
 *    search settled them (non-decreasing distance), with the distance (BFS:
 *    the depth), the predecessor and the edge it was reached by.  A
 *    source's row has distance 0, pred = itself, edge = -1.  A source that
 *    is in no edge is not a node: no row.  With several sources, the
 *    distance is from the nearest one.
 *  - Path (xxl_paths_next_step, SSSP with a target): the steps from the
 *    source to the target as pgr_dijkstra gives them: (node, edge, cost of
 *    the edge, cost so far), the last step (target, -1, 0, total).  No step
 *    when the target is unreachable or is the source.  The search stops once
 *    the target is settled.
 *
 * Algorithms (docs/graph.md).
 *  - In memory, when the graph fits the budget: ids are numbered densely by
 *    a hash table as the edges come, the adjacency is a compressed sparse
 *    row array, and the search is Dijkstra with an addressable 4-ary heap
 *    (at most one entry per node, so its memory is known in advance) or a
 *    FIFO queue for BFS.  No spill at all.
 *  - Semi-external when the links and lists do not fit but the nodes do
 *    (about 44 bytes per node for BFS, 52 for shortest paths, beside the
 *    id table): the same numbering, heap and queue, the links spooled with
 *    their dense ids, and the adjacency split at one arc: as many arcs as
 *    the rest of the budget holds in memory, the others in a page file read
 *    through a page cache (paths_semi.c).  Shortest paths give the in-memory
 *    path's rows; BFS the same depths (a predecessor may differ).
 *  - External otherwise, semi-external in the weakest sense: one bit per
 *    node in memory.  Ids are numbered by two sorts; the adjacency lists go
 *    to disk in node order with an index of n + 1 offsets, both read through
 *    page caches.  SSSP: Dijkstra without decrease-key on the external
 *    priority queue (each relaxation a push, stale entries dropped by the
 *    settled bit; <= arcs + sources pushes), one adjacency read per settled
 *    node (the block-cache variant: O(n + sort(m)) I/Os in the worst case,
 *    random page reads).  BFS: Munagala-Ranade levels: each level is sorted
 *    by node so its adjacency lists are read in disk order, and the visited
 *    bit replaces the merge with the two previous levels.
 *    Or Mehlhorn-Meyer (MM) BFS: nodes are grouped into clusters of nearby
 *    nodes (chunks of an Euler tour of a spanning forest, paths_cluster.c),
 *    the adjacency is stored cluster by cluster, and each level reads the
 *    clusters of its nodes that are not yet loaded (each cluster once, one
 *    sequential piece) into a hot pool, a sorted run merged with the level.
 *    AUTO takes MR (measured: the clustering costs more than the random
 *    reads it saves while the OS caches the adjacency); MM's bound on how
 *    long arcs wait in the pool holds for undirected graphs only, but its
 *    answers are right for both.
 *    SSSP can run as Meyer-Osipov (MO) on the same clusters: arcs fall into
 *    weight categories (0: cost 0; i >= 1: cost >= w_min 2^(i-1)), a settled
 *    node's category-i arcs are relaxed only once the queue's minimum
 *    reaches its distance + w_min 2^(i-1), in batches sorted by cluster,
 *    read through the cluster-ordered adjacency's page cache (the hot
 *    pools).  AUTO takes the plain external Dijkstra (docs/paths.md).
 *
 * Memory: every buffer, sorter, queue and cache is charged to the budget;
 * stats.memory_peak <= config memory.  Spill files are all removed by
 * xxl_paths_destroy, also after an error or a cancel.
 */
#ifndef XXL_PATHS_H
#define XXL_PATHS_H

#include "core/xxl_io.h"

typedef enum xxl_paths_op
{
	XXL_PATHS_SSSP,				/* Dijkstra: distances are sums of costs */
	XXL_PATHS_BFS				/* distances are depths */
} xxl_paths_op;

typedef enum xxl_paths_path
{
	XXL_PATHS_NONE,				/* not run yet */
	XXL_PATHS_IN_MEMORY,
	XXL_PATHS_EXTERNAL,
	XXL_PATHS_SEMI_EXTERNAL		/* nodes in memory, links and some arcs on disk */
} xxl_paths_path;

/* The external BFS: Munagala-Ranade or Mehlhorn-Meyer (clusters, hot pool). */
typedef enum xxl_paths_bfs
{
	XXL_PATHS_BFS_AUTO,
	XXL_PATHS_BFS_MR,
	XXL_PATHS_BFS_MM
} xxl_paths_bfs;

/*
 * The external shortest paths: Dijkstra reading one adjacency list per
 * settled node through a page cache, or Meyer-Osipov (clusters, weight
 * categories, delayed relaxation in batches sorted by cluster).
 */
typedef enum xxl_paths_sssp
{
	XXL_PATHS_SSSP_AUTO,
	XXL_PATHS_SSSP_DIJKSTRA,
	XXL_PATHS_SSSP_MO
} xxl_paths_sssp;

typedef struct xxl_paths_config
{
	xxl_resources res;			/* memory >= xxl_paths_min_memory() */
	xxl_paths_op op;
	bool		directed;
	const int64_t *sources;		/* at least one; duplicates allowed */
	size_t		nsources;
	bool		has_target;		/* SSSP: the path to target, stop when settled */
	int64_t		target;
	double		max_distance;	/* SSSP: report nodes at most this far (>= 0; Inf) */
	uint64_t	max_depth;		/* BFS: report nodes at most this deep (UINT64_MAX) */
	bool		force_external; /* testing: never the in-memory path */
	xxl_paths_bfs bfs;			/* the external BFS (AUTO: MR) */
	xxl_paths_sssp sssp;		/* the external shortest paths (AUTO: DIJKSTRA) */
	uint64_t	cluster_mu;		/* testing: MM / MO tour arcs per cluster (0: chosen) */
} xxl_paths_config;

typedef struct xxl_paths_stats
{
	xxl_paths_path path;
	uint64_t	edges;			/* edges put */
	uint64_t	links;			/* existing directions */
	uint64_t	arcs;			/* adjacency entries (undirected: 2 per link) */
	uint64_t	nodes;			/* distinct ids; by id, their range */
	bool		ids_by_id;		/* external: the ids less the smallest numbered the
								 * nodes, without sorts */
	unsigned	arc_ranges;		/* external by id: ranges of tails the arcs were sorted in */
	uint64_t	reached;		/* tree rows */
	uint64_t	levels;			/* BFS: levels expanded */
	uint64_t	level_spills;	/* BFS: levels (MM: cluster loads) sorted by a sorter */
	uint64_t	relaxed;		/* arcs looked at from settled nodes */
	uint64_t	pq_pushes;		/* heap / queue insertions */
	uint64_t	pq_merges;		/* external queue: run merges */
	uint64_t	pq_bytes;		/* external queue: spill I/O, both ways */
	uint64_t	arcs_in_memory;	/* semi-external: arcs held in memory (the rest paged) */
	uint64_t	link_passes;	/* semi-external: reads of the spooled links */
	uint32_t	arc_bytes;		/* semi-external: bytes an arc (5: a cost's code, 12: the cost) */
	uint64_t	cache_hits;		/* external: adjacency and index page reads */
	uint64_t	cache_misses;
	xxl_paths_bfs bfs;			/* external BFS: MR or MM (AUTO: none ran) */
	xxl_paths_sssp sssp;		/* external SSSP: DIJKSTRA or MO (AUTO: none ran) */
	uint64_t	categories;		/* MO: weight categories in use */
	uint64_t	mo_batches;		/* MO: category batches relaxed */
	uint64_t	mo_flushes;		/* MO: batches forced early by a full settle log */
	uint64_t	tree_edges;		/* MM: edges of the clustering forest */
	uint64_t	clusters;		/* MM: clusters of the adjacency (chunks holding arcs) */
	uint64_t	cluster_loads;	/* MM: clusters read (each at most once); MO: adjacency
								 * pages read (a cluster is one or two) */
	uint64_t	pool_hits;		/* MM: level nodes whose arcs were in the hot pool;
								 * MO: (node, category) batches served from RAM */
	uint64_t	pool_peak;		/* MM: most arcs in the hot pool */
	const char *forest_path;	/* MM: the path of its spanning forest (xxl_graph.h) */
	const char *cluster_skipped;	/* MM / MO asked for but MR / Dijkstra ran: why (else NULL) */
	uint64_t	sorts;
	uint64_t	sorted_bytes;
	uint64_t	bytes_read;		/* all spill I/O */
	uint64_t	bytes_written;
	xxl_io_stats io;
	uint64_t	memory_peak;
	uint64_t	memory_held;	/* the budget held now, sorters' shares whole */
	uint64_t	memory_limit;
	uint64_t	load_ns;		/* reading edges */
	bool		numbering_worker;	/* the in-memory numbering ran on a second thread */
	bool		search_worker;	/* the in-memory search ran on a second thread, the rows
								 * going out as it settled them */
	uint64_t	numbering_wait_ns;	/* ... and the input's end waited this long for it */
	uint64_t	build_ns;		/* numbering ids, building the adjacency */
	uint64_t	cluster_ns;		/* MM: the clustering (in build_ns) */
	uint64_t	forest_ns;		/* MM: its spanning forest (in cluster_ns) */
	uint64_t	search_ns;
	uint64_t	output_ns;
} xxl_paths_stats;

typedef struct xxl_paths xxl_paths;

size_t		xxl_paths_min_memory(void);

xxl_paths  *xxl_paths_create(const xxl_paths_config *config, xxl_error *err);
xxl_status	xxl_paths_put_edge(xxl_paths *p, int64_t source, int64_t target, int64_t id,
							   double cost, double reverse_cost);
xxl_status	xxl_paths_run(xxl_paths *p);

/* Tree rows: 1 with a row, 0 at the end, -1 on error (see xxl_paths_error). */
int			xxl_paths_next(xxl_paths *p, int64_t *node, double *distance, int64_t *pred,
						   int64_t *edge);
/* Path steps (with a target): 1, 0 at the end, -1 on error. */
int			xxl_paths_next_step(xxl_paths *p, int64_t *node, int64_t *edge, double *cost,
								double *agg_cost);

const xxl_error *xxl_paths_error(const xxl_paths *p);
/* Any time; an input the host stopped loses its numbering worker first. */
void		xxl_paths_stats_get(xxl_paths *p, xxl_paths_stats *stats);
const char *xxl_paths_path_name(xxl_paths_path path);
const char *xxl_paths_bfs_name(xxl_paths_bfs bfs);
const char *xxl_paths_sssp_name(xxl_paths_sssp sssp);
void		xxl_paths_destroy(xxl_paths *p);

#endif							/* XXL_PATHS_H */
