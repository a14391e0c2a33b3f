/*
 * analytics_memory.h — the in-memory state of the undirected analytics
 * (analytics_memory.c: what fits, numbering, the move to a spool or the
 * sorters, MIS and coloring, PageRank's hand-over;
 * analytics_memory_build.c: passes over the kept edges, ranking, adjacency
 * arrays; analytics_memory_tri.c: triangles) and what the files share.
 */
#ifndef XXL_GRAPH_ANALYTICS_MEMORY_H
#define XXL_GRAPH_ANALYTICS_MEMORY_H

#include "core/graph/analytics_internal.h"

/*
 * Triangles' out-lists in ranges: a range may take as little as
 * 1/AN_TRI_RANGES of them (each range costs a pass over the spooled edges
 * and one over every list), so that ranges filled node by node number at
 * most AN_TRI_RANGES_MAX.
 */
#define AN_TRI_RANGES 16
#define AN_TRI_RANGES_MAX (2 * AN_TRI_RANGES + 2)

typedef struct an_mem
{
	idmap		idm;
	pvec		ends;			/* (dense, dense) per edge, self loops included */
	pvec		weights;		/* PageRank: per edge, once one is not 1 */
	bool		weighted;
	/*
	 * Links that outgrow memory while the ids do not: [du u32][dv u32],
	 * PageRank's with [w double]
	 */
	xxl_spool	dense;
	size_t		dense_rec;
	bool		spooled;		/* the edges go to dense, no longer to ends */
	uint64_t	n;
	int64_t    *ids;			/* rank -> id */
	uint32_t   *off;			/* adjacency of rank r: adj[off[r] .. off[r + 1]) (< 2^32: see fits) */
	uint32_t   *adj;
	uint32_t   *ooff;			/* triangles: out-lists, the same way */
	uint32_t   *oadj;
	uint32_t   *aux;			/* triangles: marks; MIS: excluded; coloring: colors */
	uint32_t   *stamp;			/* coloring: the colors seen, per color */
	uint64_t   *counts;			/* node triangles, by dense id */
	uint32_t   *order;			/* node triangles: rank -> dense id */
	uint32_t   *deg;			/* triangles: every node's degree */
	uint64_t   *bits;			/* triangles: a bitmap of the nodes per thread */
	uint64_t	bit_words;		/* ... of this many words each */
	/*
	 * Triangles whose out-lists do not fit beside the spooled edges
	 * (analytics_memory_tri_ranged.c): the nodes in ranges, range r's
	 * lists in lists[r]; oadj holds one range's (held) at a time, the
	 * streamed ranges come through scratch, the listing's triangles go
	 * to found
	 */
	uint32_t	nranges;
	uint32_t	range_at[AN_TRI_RANGES_MAX + 1];
	uint32_t	held;
	xxl_spool	lists[AN_TRI_RANGES_MAX];
	uint32_t   *scratch;
	xxl_spool	found;
	xxl_spool_reader found_rd;
	bool		found_open;
	size_t		ids_bytes,
				scratch_bytes,
				off_bytes,
				adj_bytes,
				ooff_bytes,
				oadj_bytes,
				aux_bytes,
				stamp_bytes,
				counts_bytes,
				order_bytes,
				deg_bytes,
				bits_bytes;
	/* MIS and coloring streamed (analytics_memory_stream.c): the arc read ahead, the last */
	bool		have_arc;
	uint32_t	arc[2];
	uint64_t	last_arc;
	/* the output pass */
	uint64_t	v,
				i,
				j;
	bool		v_marked;
} an_mem;

/*
 * A pass over the kept edges' ends (the undirected operations), piece by
 * piece: arrays of (dense, dense) pairs that the caller may rewrite in
 * place.  In memory the pieces are the pvec's chunks; spooled, a scratch
 * array that the spool is read into, and with `rewrite` what the caller
 * left in it becomes the spool the next pass reads.
 */
typedef struct an_pass
{
	bool		spooled,
				rewrite;
	uint64_t	e;				/* pairs handed out */
	uint64_t	m;
	xxl_spool_reader rd;
	bool		rd_open;
	uint32_t   *buf;			/* spooled: the scratch, and its last piece's pairs */
	size_t		buf_bytes,
				last;
	xxl_spool	out;			/* rewrite: the pairs as left */
} an_pass;

/* The scratch a pass over spooled edges reads them into. */
#define AN_PASS_SCRATCH (64 * 1024)

/*
 * The memory of a spool of edges (and of a pass's second one): small, for
 * it is spilled whenever the edges are many, and what it holds in memory
 * counts against what the lists may take.
 */
static inline size_t
an_mem_dense_share(const xxl_an *a)
{
	size_t		h = a->env.pool / 64;

	h -= h % XXL_ALIGN;
	return h > XXL_ALIGN ? h : XXL_ALIGN;
}

/* analytics_memory_build.c ----------------------------------------------------- */

/* The kept edges: in the pvec, or spooled. */
uint64_t	an_mem_edges(const an_mem *k);
xxl_status	an_pass_open(xxl_an *a, an_pass *p, bool rewrite);
/* The next piece's pairs and their count (0 at the end, UINT64_MAX on an error). */
uint64_t	an_pass_next(xxl_an *a, an_pass *p, uint32_t **pairs);
/* ok: the pass went through (rewrite: its spool replaces the old). */
xxl_status	an_pass_close(xxl_an *a, an_pass *p, bool ok);
/* The kept edges are no longer needed: their memory or spool goes. */
void		an_mem_drop_edges(xxl_an *a);

/*
 * Coloring's pick for v, whose smaller neighbours' colors are stamped with
 * v: the smallest color none of them has (also kept in aux, and counted).
 */
static inline uint32_t
an_mem_color_pick(xxl_an *a, uint32_t v)
{
	an_mem	   *k = a->mem;
	uint32_t	c = 1;

	while (k->stamp[c] == v)
		c++;
	k->aux[v] = c;
	if (c > a->colors)
		a->colors = c;
	return c;
}

/* analytics_memory_stream.c --------------------------------------------------- */

/* What MIS and coloring need streamed: nodes, the ids' bytes, the spooled ends' */
double		an_mem_stream_need(double nodes, double ids, double ends);
/* The spooled edges both ways into a->s by rank; the greedy pass reads them there. */
xxl_status	an_mem_stream_build(xxl_an *a);
int			an_mem_stream_next(xxl_an *a, xxl_an_row *row);

#define ID_AHEAD 8
/* Array entries ahead that the random-access passes prefetch. */
#define PF_AHEAD 32

/* Bitmaps of nodes (one per thread): set, test, and clear the word of x. */
static inline void
an_bit_set(uint64_t *bm, uint32_t x)
{
	bm[x >> 6] |= UINT64_C(1) << (x & 63);
}

static inline bool
an_bit_has(const uint64_t *bm, uint32_t x)
{
	return (bm[x >> 6] >> (x & 63)) & 1;
}

static inline void
an_bit_clear_word(uint64_t *bm, uint32_t x)
{
	bm[x >> 6] = 0;
}

/*
 * The kept edges into lists by their ends' counts at off[x + 1]: every
 * edge into both ends' lists, or (oriented) only into the list of its
 * first end; the ends are freed, then the lists packed (len the lengths;
 * oriented ones by k->bits, in no order).  Returns the entries,
 * UINT64_MAX when out of budget.
 */
uint64_t	an_mem_build_lists(xxl_an *a, uint32_t *off, uint32_t **adj, size_t *adj_bytes,
							   bool oriented, uint32_t *len);
/* Rank the ids in id order, the edges left alone: k->ids rank -> id, k->order rank -> dense id. */
xxl_status	an_mem_rank_order(xxl_an *a);
/*
 * Rank the ids in id order: k->ids rank -> id, and the dense -> rank array
 * returned (*rank_bytes of the budget; NULL when out of it); the id map is
 * freed.
 */
uint32_t   *an_mem_rank_ids(xxl_an *a, size_t *rank_bytes);
/*
 * Rank the ids in id order (k->ids: rank -> id) and turn the kept edges'
 * ends into ranks; with off (n + 1 counters, zeroed), count each end's
 * edges other than self loops at off[rank + 1].
 */
xxl_status	an_mem_rank_ends(xxl_an *a, uint32_t *off);
/* Rank the ids, and the kept edges become sorted, duplicate-free adjacency lists (k->off, k->adj). */
xxl_status	an_mem_build_csr(xxl_an *a);

/*
 * Pack lists filled up to their ends off[x] (x's start is off[x - 1], 0
 * for the first): repeats out (by bits, a bitmap of `words` words per
 * thread; or by a sort when bits is NULL), len[x] the lengths, off[x] the
 * starts and off[n] the entries, which it returns.
 */
uint64_t	an_mem_pack_lists(uint32_t *off, uint32_t *adj, uint64_t n, uint32_t *len, int threads,
							  uint64_t *bits, uint64_t words);

/* analytics_memory_need.c --------------------------------------------------------- */

/*
 * Triangles over spooled edges: 0 when n nodes' out-lists of `entries`
 * entries fit whole; else the bytes a range of them may take.
 */
size_t		an_mem_tri_list_room(const xxl_an *a, uint64_t entries);
/* What m edges over n nodes with id tables of `tables` bytes need (spooled: without the edges). */
double		an_mem_need_bytes(const xxl_an *a, uint64_t m, uint64_t n, size_t tables, bool spooled);
/* Whether they fit the pool with the edges spooled, or as the path holds them now. */
bool		an_mem_spool_fits(const xxl_an *a, uint64_t m, uint64_t n, size_t tables);
bool		an_mem_fits(const xxl_an *a, uint64_t m, uint64_t n, size_t tables);

/* analytics_memory_tri.c: the triangle operations once the edges are in (t0: when the build began). */
xxl_status	an_mem_tri_run(xxl_an *a, uint64_t t0);
int			an_mem_tri_next(xxl_an *a, xxl_an_row *row);

/*
 * Out-lists of the nodes u in [lo, hi) at adj[ooff[u] - base ...]: all of
 * them (0, n, 0) or a range's.
 */
typedef struct an_tri_side
{
	const uint32_t *ooff;
	const uint32_t *adj;
	uint32_t	lo,
				hi;
	uint64_t	base;
} an_tri_side;

/*
 * The triangles at the nodes [from, to), whose out-lists are at
 * vadj[ooff[v] - ooff[from] ...], with their out-neighbours' lists on the
 * side: blocks on the threads, counts (if any) one at each corner; the
 * triangles and the entries looked up added to *t and *q.
 */
void		an_tri_count_block(xxl_an *a, uint64_t from, uint64_t to, const uint32_t *vadj,
							   const an_tri_side *side, uint64_t *counts, uint64_t *t, uint64_t *q);

/* analytics_memory_tri_ranged.c ------------------------------------------------- */

/*
 * After the orientation (k->ooff[x + 1]: x's out-entries, repeats
 * included): the lists built range by range into k->lists, a range at most
 * `room` bytes (or one node); k->ooff the starts of the packed lists,
 * k->deg the out-degrees.
 */
xxl_status	an_tri_ranged_build(xxl_an *a, size_t room);
/* Count (with counts: at each node) or list (into k->found) the triangles, range by range. */
xxl_status	an_tri_ranged_run(xxl_an *a, uint64_t *counts);
/* The listing's next triangle from k->found. */
int			an_tri_ranged_next(xxl_an *a, xxl_an_row *row);
void		an_tri_ranged_release(xxl_an *a);

#endif							/* XXL_GRAPH_ANALYTICS_MEMORY_H */
