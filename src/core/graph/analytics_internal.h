/*
 * analytics_internal.h — the state the analytics operators share
 * (xxl_analytics.h): the operator environment on the graph plan, the
 * symmetric neighbour stream S every undirected operation starts from, and
 * the parts of each pass.
 *
 * Record layouts (BE = big-endian key bytes, u64 = native payload; ids as
 * order-preserving keys, g_id_key):
 *   S   symmetric edges   [u BE][v BE]                 key 16 (u == v: a node mark)
 *   T   degree join       [v BE][u BE][deg u u64]      key 16
 *   Q   triangle queries  [a BE][b BE][c u64]          key 16 (a < b)
 *   C   triangle counts   [node BE][count u64]         key 8
 *   deg spool             [node key u64][deg u64]      node order
 *   edge spool            [a BE][b BE]                 (a, b) order, a < b
 *                         or, for the chunked count: [v key u64][k u64]
 *                         [k out-neighbour keys u64, ascending], v order
 *   PageRank: see analytics_rank.c.
 *
 * Memory: the pool is split so that two sorters (3/8 each) and the spools
 * (1/10 each, two at once besides a hub's list) live together; a queue
 * takes a sorter's share.  PageRank's five spools take 1/16 each.
 */
#ifndef XXL_ANALYTICS_INTERNAL_H
#define XXL_ANALYTICS_INTERNAL_H

#include "core/graph/graph_internal.h"
#include "core/graph/xxl_analytics.h"
#include "core/graph/numbering.h"

typedef enum an_state
{
	AN_INPUT,
	AN_OUTPUT,
	AN_DONE,
	AN_FAILED
} an_state;

/* An edge as it came, on its way to the numbering. */
typedef struct an_edge
{
	int64_t		u,
				v;
	double		w;
} an_edge;

/* A node of S with one record of lookahead. */
typedef struct an_cursor
{
	bool		has;
	int64_t		u,
				v;
} an_cursor;

struct xxl_an
{
	xxl_env		env;
	xxl_an_op	op;
	an_state	state;
	uint64_t	expected_edges;
	uint64_t	t_start;
	uint64_t	run_ns;
	uint64_t	build_ns;
	uint64_t	compute_ns;
	gout_clock	out_clock;

	/* figures (m and self_loops: see the end) */
	uint64_t	duplicates;
	uint64_t	n;
	uint64_t	links;
	uint64_t	max_degree;
	uint64_t	triangles;
	uint64_t	queries;
	uint64_t	max_out;
	uint64_t	set_size;
	uint64_t	colors;
	uint64_t	iterations;
	double		delta;
	bool		converged;
	uint64_t	dangling;
	uint64_t	pushes;

	/* the symmetric stream */
	xxl_env_sorter s;
	bool		s_sorted;
	bool		s_has_prev;
	unsigned char s_prev[16];
	an_cursor	cur;

	/* parts of the passes */
	xxl_env_sorter t,
				q,
				c;
	xxl_env_queue pq;
	xxl_spool	deg,
				edges,
				tris;			/* the chunked listing's triangles */
	xxl_spool_reader rd_deg,
				rd_edges,
				rd_tris;
	bool		rd_deg_open,
				rd_edges_open,
				rd_tris_open;
	xxl_spool	hub;			/* the neighbours of a node with very many */
	xxl_spool_reader rd_hub;
	bool		hub_live,
				rd_hub_open;
	int64_t    *list;			/* a node's out-neighbours (triangles) */
	size_t		list_bytes;
	uint64_t   *group;			/* a node's neighbours (degree join) */
	size_t		group_bytes;

	/* output state */
	bool		count_done;
	bool		edge_valid;		/* triangles: the current edge of the merge */
	unsigned char edge[16];
	bool		c_pending;		/* node triangles: a count record read ahead */
	int64_t		c_node;
	uint64_t	c_count;

	/* PageRank */
	double		damping;
	double		tolerance;
	int			max_iterations;
	bool		force_external;
	bool		rank_arrays;	/* the iterations ran on arrays */
	bool		rank_streamed;	/* ... with links past them streaming from a spool */
	uint64_t	rank_range_nodes;	/* config: targets per range (tests) */
	uint64_t	rank_ranges;	/* the iterations summed this many target ranges (0: sorted) */
	uint64_t	tri_ranges;		/* triangles: out-lists built and counted in this many ranges
								 * (or chunks, analytics_tri_chunked.c) */
	uint64_t	tri_chunk_lists;	/* config: lists per chunk (tests; UINT64_MAX: queries) */
	bool		tri_chunked;	/* the external count scans chunks of out-lists */
	uint64_t	tri_wedges;		/* the queries the degrees suggest (the choice of the two) */
	bool		stream_lists;	/* MIS, coloring: neighbours from a->s, not from lists */
	bool		semi;			/* ids numbered in memory, links spooled (PageRank) */
	struct an_rank *rank;

	/* undirected operations in memory (analytics_memory.c) */
	bool		in_memory;
	struct an_mem *mem;
	an_edge		batch[256];		/* edges not yet numbered (prefetched together) */
	size_t		nbatch;
	uint64_t	numbered;		/* edges numbered (PageRank: the next one's index) */


	/*
	 * What the caller's thread writes at every edge, a cache line away
	 * from what the numbering worker reads meanwhile: sharing one made
	 * every edge an ownership transfer between the cores.  While the
	 * worker runs (numbering.h), in_memory, mem and every part above are
	 * its own.
	 */
	char		caller_apart[64];
	uint64_t	m;				/* edges put */
	uint64_t	self_loops;
	g_numbering numbering;
	char		caller_end[64];
};

/* Small helpers ------------------------------------------------------------- */

/* A triangle's three ids in ascending order (rows list a < b < c). */
static inline void
an_sort3(int64_t *v)
{
	int64_t		t;

	if (v[0] > v[1])
		t = v[0], v[0] = v[1], v[1] = t;
	if (v[1] > v[2])
		t = v[1], v[1] = v[2], v[2] = t;
	if (v[0] > v[1])
		t = v[0], v[0] = v[1], v[1] = t;
}

static inline xxl_status
an_fail(xxl_an *a)
{
	a->state = AN_FAILED;
	if (a->env.err.code == XXL_OK)
		xxl_error_set(&a->env.err, XXL_EIO, 0, "graph operator failed");
	return a->env.err.code;
}

/* A sorter's share of the pool (3/8), and a spool's (1/10). */
static inline size_t
an_sort_share(const xxl_an *a)
{
	size_t		h = a->env.pool / 8 * 3;

	return h - h % XXL_ALIGN;
}

static inline size_t
an_spool_share(const xxl_an *a)
{
	size_t		h = a->env.pool / 10;

	return h - h % XXL_ALIGN;
}

/*
 * analytics.c: an array of the budget (bytes 0 = 1), *held the bytes it
 * holds; an_free frees it (if any) and clears both.
 */
void	   *an_alloc(xxl_an *a, size_t bytes, size_t *held);
void		an_free(xxl_an *a, void **p, size_t *held);

/* analytics.c: the symmetric stream */
xxl_status	an_open_sym(xxl_an *a);
/* Put an undirected edge (a self loop marks its node) into S. */
xxl_status	an_put_edge_sym(xxl_an *a, int64_t u, int64_t v);
/* The next record of S, duplicates dropped: 1, 0 at the end, -1 on error. */
int			an_s_next(xxl_an *a, int64_t *u, int64_t *v);
/* Load the cursor's first record (after S is sorted). */
xxl_status	an_cursor_start(xxl_an *a);
/* Move the cursor on (an_s_next into it). */
xxl_status	an_cursor_advance(xxl_an *a);

/* analytics_memory.c: the undirected operations in memory */
bool		an_mem_wanted(const xxl_an *a);
xxl_status	an_mem_start(xxl_an *a);
/*
 * Keep an edge (or move everything to the external input when it does not
 * fit: a->in_memory false), on this thread or through the numbering
 * worker (a->numbering), polling the host either way.  weight: PageRank's.
 */
xxl_status	an_mem_put(xxl_an *a, int64_t u, int64_t v, double weight);
/* The end of the input: every edge numbered, the worker gone; then, if still in memory, the build. */
xxl_status	an_mem_run(xxl_an *a);
int			an_mem_next(xxl_an *a, xxl_an_row *row);
void		an_mem_release(xxl_an *a);

/* analytics_tfp.c: maximal independent set and coloring */
xxl_status	an_tfp_start(xxl_an *a);
int			an_tfp_next(xxl_an *a, xxl_an_row *row);

/* analytics_tri.c: triangles */
xxl_status	an_tri_run(xxl_an *a);
/* Room for k out-neighbours in a->list. */
xxl_status	an_tri_list_reserve(xxl_an *a, size_t k);

/* (node key, count) into the sorter C. */
xxl_status	an_tri_put_count(xxl_an *a, uint64_t key, uint64_t count);

/* analytics_tri_chunked.c: external triangles by chunks of out-lists */
/* Whether chunks are taken (after the degree pass: a->n, a->links). */
bool		an_tri_chunked_choose(xxl_an *a);
/* v's out-list, a->list[0, k), to the edge spool. */
xxl_status	an_tri_chunked_put(xxl_an *a, uint64_t vkey, size_t k);
/*
 * The lists' triangles: counted into a->triangles (a->tri_ranges the
 * chunks), and for the listing spooled, for node triangles counted in C.
 */
xxl_status	an_tri_chunked_count(xxl_an *a);
/* The listing's next row: 1, 0 at the end, -1 on an error. */
int			an_tri_chunked_next(xxl_an *a, xxl_an_row *row);
int			an_tri_next(xxl_an *a, xxl_an_row *row);
void		an_tri_release(xxl_an *a);

/* analytics_rank.c: PageRank */
xxl_status	an_rank_open(xxl_an *a);
/* Edge e (numbered from 0 in input order). */
xxl_status	an_rank_put(xxl_an *a, uint64_t e, int64_t source, int64_t target, double weight);
/*
 * Take over the in-memory numbering's arrays (ids in rank order, the links
 * as rank pairs, the weights or NULL; budget-charged) and iterate on them.
 */
xxl_status	an_rank_adopt(xxl_an *a, int64_t *ids, size_t ids_bytes, uint32_t *lu, uint32_t *lv,
						  size_t link_bytes, double *lw, size_t lw_bytes);
/*
 * PageRank numbered in memory whose links were spooled (analytics_memory.c):
 * ids rank -> id, rank dense -> rank (freed here), the spool's 16-byte
 * records [du u32][dv u32][w double] (read once, consumed); the iterations
 * then run.
 */
xxl_status	an_rank_adopt_spool(xxl_an *a, int64_t *ids, size_t ids_bytes, uint32_t *rank,
								size_t rank_bytes, xxl_spool *links, bool weighted);
xxl_status	an_rank_run(xxl_an *a);
int			an_rank_next(xxl_an *a, xxl_an_row *row);
void		an_rank_release(xxl_an *a);

#endif							/* XXL_ANALYTICS_INTERNAL_H */
