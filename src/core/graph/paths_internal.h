/*
 * paths_internal.h — the state of the BFS / shortest-path operator
 * (xxl_paths.h) that its three files share: paths.c (input, the choice of
 * path, the pull interface), paths_memory.c (the in-memory path) and
 * paths_ext_build.c and paths_external.c (the external path: numbering and
 * adjacency; Dijkstra and MR BFS), paths_cluster.c (the clusters of the MM BFS) and paths_mm.c (the
 * MM BFS).
 *
 * Record layouts of the external path (BE = big-endian key bytes, u64 =
 * native):
 *   links spool  [u orig][v orig][edge id][cost double]          32 (IO_REC)
 *   S1, S2       the numbering sorts (relabel.c, graph_internal.h)
 *   S3 arcs      [from BE][to][to orig][edge id][cost]           40, key 8
 *   adjacency    [to][to orig][edge id][cost]                    32 (pagefile)
 *   index        [first arc of node]                              8 (pagefile, n + 1)
 *   queue        [dist key BE][node BE][orig][pred][pred orig][edge][cost] 56, key 16
 *   BFS level    [node BE][orig][pred orig][edge]                32, key 8
 *   results      [node orig][distance double][pred orig][edge]   32 (spool)
 *   settle log   [node][pred][orig][edge][cost][distance]        48 (pagefile)
 *   path steps   [orig][edge in][cost in][distance]              32 (pagefile)
 * and of the semi-external path (paths_semi.c; native, dense ids):
 *   links spool  plink_semi: [u][v][cost][edge id]               24
 *   adjacency    parc [to][link] (BFS), psarc [to][link][cost]    8 / 16 (pagefile)
 * and with clusters (MM BFS, MO; paths_cluster.c has the clustering's own):
 *   S2           [e << 1 | side BE][dense][cluster]              24, key 8
 *   S3 arcs      [cluster BE][from BE][to][to cluster][to orig][edge id][cost]
 *                                                                 56, key 16
 *   adjacency    [from][to][to cluster][to orig][edge id][cost]  48 (pagefile,
 *                cluster by cluster), and the same records, keyed by from,
 *                for the clusters loaded and the hot pool
 *   clusters     [first arc of cluster]                            8 (pagefile, C + 1)
 *   MM level     [node BE][cluster][orig]                        24, key 8
 *   MO queue     [dist key BE][node BE][orig][pred][pred orig][edge][cost][cluster]
 *                                                                 64, key 16
 *   MO batch     [cluster BE][settle log index]                  16, key 8
 */
#ifndef XXL_PATHS_INTERNAL_H
#define XXL_PATHS_INTERNAL_H

#include "core/graph/graph_internal.h"
#include "core/graph/numbering.h"
#include "core/graph/idmap.h"
#include "core/graph/xxl_paths.h"
#include "core/xxl_pagefile.h"
#include "core/xxl_pipe.h"

/*
 * An in-memory link: one existing direction (undirected: one edge), in two
 * arrays: its ends, needed only to build the adjacency, and its cost and
 * id, needed by the search and the output.
 */
typedef struct plink_ends
{
	uint32_t	u,
				v;
} plink_ends;

typedef struct plink_cost
{
	double		w;
	int64_t		eid;
} plink_cost;

/*
 * An in-memory adjacency entry.  (Its link's cost here too made Dijkstra a
 * little faster, but 8 more bytes per arc sent undirected graphs out of
 * memory at budgets they fitted before; for directed graphs only, a cost
 * array beside the arcs saved in the search what it cost in the build:
 * neither kept.)
 */
typedef struct parc
{
	uint32_t	to;
	uint32_t	link;
} parc;

/*
 * What the in-memory searches keep of a node and read of every arc's head:
 * one cache line's part instead of a distance and a heap position in two
 * arrays.
 */
typedef struct pnode
{
	double		d;
	uint32_t	pos;			/* heap position, P_UNSEEN or P_SETTLED */
	uint32_t	pred;			/* dense */
} pnode;

/* A link of the semi-external path's spool. */
typedef struct plink_semi
{
	uint32_t	u,
				v;
	double		w;
	int64_t		eid;
} plink_semi;

/*
 * The semi-external path's costs as codes: while the links' costs take at
 * most PCOST_CODES values (unit or small integer costs, the common case),
 * an arc keeps a one-byte code in place of its double, 5 bytes with its
 * head instead of 12, so that a graph at half the in-memory path's budget
 * keeps most or all of its arcs in memory.  Costs are told apart by their
 * bits; the table is an open-addressed hash of their codes.
 */
#define PCOST_CODES 256
#define PCOST_SLOTS (2 * PCOST_CODES)

typedef struct pcost_dict
{
	double		cost[PCOST_CODES];
	uint16_t	slot[PCOST_SLOTS];	/* code + 1, 0 empty */
	unsigned	n;
	bool		wide;			/* more values than codes: arcs keep their doubles */
} pcost_dict;

/* An entry of the in-memory heap: its key and node. */
typedef struct pheap_entry
{
	double		d;
	uint32_t	node;
} pheap_entry;

/* A link as put, waiting for its ids to be numbered in a batch. */
typedef struct plink_in
{
	int64_t		u,
				v,
				eid;
	double		w;
} plink_in;

/*
 * Links are numbered in batches of this many: the hash slots of a batch are
 * prefetched first, so their cache misses overlap (numbering was a third
 * of the in-memory path's time, one miss after the other).
 */
#define P_BATCH 256
#define P_ID_AHEAD 8			/* links ahead whose ends' id map entries are prefetched */
/* Links handed to the numbering worker at once: one pipe staging area. */
#define P_PIPE_LINKS (XXL_PIPE_STAGE_BYTES / sizeof(plink_in))

#define PATHS_MM_ADJ_REC 48

/*
 * An arc of the external adjacency (not clustered): [head][head's
 * id][edge id][cost], each 8 bytes; by id [head][edge id], and the cost for
 * shortest paths (the head's id is head + id_min, a BFS has no cost).
 */
#define PATHS_ADJ_REC 32

static inline size_t
paths_adj_rec(bool by_id, bool bfs)
{
	return by_id ? (bfs ? 16 : 24) : PATHS_ADJ_REC;
}

static inline uint64_t
paths_adj_head(const unsigned char *r)
{
	uint64_t	v;

	memcpy(&v, r, 8);
	return v;
}
#define PATHS_NO_CLUSTER UINT64_MAX

#define P_UNSEEN IDMAP_NONE
#define P_SETTLED (UINT32_MAX - 1)
#define P_MAX_DENSE IDMAP_MAX	/* in memory: dense ids and arcs below this */

/*
 * A set of fixed records sorted by their first 8 bytes, built once per BFS
 * level (paths_level.c): in a buffer kept for the whole search, in an env
 * sorter only when it outgrows the buffer.
 */
typedef struct plevel
{
	size_t		rec,
				share,
				cap;			/* records the buffer holds */
	unsigned char *buf;			/* cap records, then as much radix scratch */
	size_t		buf_bytes;
	size_t		n,
				pos;
	uint64_t	pushed;
	bool		spilled;
	xxl_env_sorter s;
} plevel;

typedef enum paths_state
{
	PS_INPUT,
	PS_OUTPUT,
	PS_FAILED
} paths_state;

struct xxl_paths
{
	xxl_env		env;
	xxl_paths_op op;
	bool		directed;
	bool		has_target;
	int64_t		target;
	double		max_distance;
	uint64_t	max_depth;
	int64_t    *sources;		/* sorted, distinct */
	size_t		nsources;
	size_t		sources_bytes;
	paths_state state;
	xxl_paths_path path;
	bool		external;		/* input goes to the links spool */
	bool		semi;			/* input goes to the semi-external links spool */
	xxl_paths_bfs bfs_choice;	/* as configured */
	xxl_paths_bfs bfs_ran;		/* what the external BFS ran: MR or MM */
	xxl_paths_sssp sssp_choice;
	xxl_paths_sssp sssp_ran;	/* what the external SSSP ran: DIJKSTRA or MO */
	bool		clustered;		/* the external path builds clusters (MM, MO) */
	double		w_min;			/* smallest positive cost of a link (Inf: none) */
	double		w_max;			/* largest cost of a link */
	uint64_t	cluster_mu;		/* configured tour arcs per cluster (0: chosen) */
	plink_in	batch[P_BATCH];	/* in memory: links not yet numbered */
	size_t		nbatch;
	g_numbering numbering;		/* the numbering worker, during the input */

	uint64_t	m;				/* edges put */
	uint64_t	nlinks;
	uint64_t	narcs;
	uint64_t	n;
	int64_t		id_min,			/* external: the links' smallest and largest ids */
				id_max;
	bool		by_id;			/* external: a node's number is its id - id_min */
	bool		narrow_arcs;	/* ... and below 2^32: the arcs sorted with 4-byte ends */
	unsigned	arc_ranges;		/* ... in this many ranges of tails, each sort its own */
	uint64_t	reached;
	uint64_t	levels;
	uint64_t	level_spills;	/* BFS levels (or MM loads) too big for their buffer */
	uint64_t	relaxed;
	uint64_t	pushes;
	uint64_t	t_start,
				load_ns,
				build_ns,
				search_ns;
	gout_clock	out_clock;

	/* in memory */
	idmap		map;			/* id -> dense and back */
	pvec		lends;			/* links: ends, freed once the adjacency is built */
	pvec		lcost;			/* links: cost and id */
	uint32_t   *off;			/* CSR: n + 1 */
	parc	   *arcs;
	pnode	   *node;			/* distance, heap position, pred */
	uint32_t   *plinkv;			/* link to pred (P_UNSEEN for a source; semi-external: found or not) */
	pheap_entry *hent;			/* the heap (BFS: unused) */
	uint32_t   *order;			/* settled nodes in order */
	uint32_t   *steps;			/* path, target first */
	uint64_t	nsteps;
	uint64_t	out_pos;
	uint64_t	target_dense;
	bool		target_found;
	/* the search's sources; with two threads, the worker it runs on (paths_mem_run) */
	uint32_t   *search_src;
	size_t		search_nsrc;
	bool		search_async;	/* the worker runs */
	bool		search_worker;	/* the search ran on a worker */
	pthread_t	search_thread;
	xxl_status	search_rc;
	uint64_t	published;		/* atomic: order[0, published) are final */
	int			search_done;	/* atomic */

	/* semi-external (also off, node, plinkv, hent, order and the map above) */
	xxl_spool	semispool;		/* plink_semi, in link order */
	pvec		semi_deg;		/* uint32_t arcs per node, counted as the links come */
	uint64_t	mem_arcs;		/* arcs [0, mem_arcs) in sto / swc / warc, the rest in adj */
	uint32_t   *sto;			/* the head of each arc in memory */
	uint8_t    *swc;			/* SSSP: its cost's code, or */
	double	   *warc;			/* its cost (costs.wide) */
	pcost_dict	costs;			/* SSSP: the links' costs */
	uint32_t   *level_tmp;		/* BFS: the level sort's scratch (n) */
	int64_t    *eidn;			/* the edge id of each reached node's link, after the search */
	double	   *wn;				/* with a target: the cost of that link */
	uint32_t   *semi_steps;		/* with a target: room for the path (n) */
	uint64_t	link_passes;

	/* external */
	xxl_spool	linkspool,
				results;
	xxl_env_sorter s1,
				s2,
				s3;
	struct mo_state *mo;		/* paths_mo.c */
	uint64_t	categories,
				mo_batches,
				mo_flushes;
	plevel		lv[2];			/* BFS: the level read and the level filled */
	xxl_env_queue pq;
	xxl_pagefile adj,
				idx,
				log,
				steps_file;
	uint64_t   *visited;		/* bitmap */
	size_t		visited_bytes;
	uint64_t   *src_dense;		/* dense ids of the sources found, and */
	int64_t    *src_orig;		/* their ids */
	size_t		nsrc_dense;
	size_t		src_next;		/* numbering: the next source to look for */
	uint64_t	pq_bytes;
	uint64_t	cache_hits,
				cache_misses;
	xxl_spool_reader rd;

	/* clusters (MM BFS, MO shortest paths) */
	uint64_t	tree_edges;
	uint64_t	cluster_ns,		/* the clustering, in build_ns */
				forest_ns;		/* ... of which the spanning forest */
	int			forest_path;	/* the nested spanning forest's xxl_graph_path */
	const char *cluster_skipped;	/* why MM / MO asked for did not run, or NULL */
	uint64_t	sub_read,		/* ... its spill I/O and sorts */
				sub_written,
				sub_sorts;
	xxl_pagefile tour;
	xxl_env_sorter occ;			/* occurrences, read by the numbering */
	bool		occ_valid,
				occ_started,
				occ_done;
	uint64_t	occ_key,
				occ_chunk;
	uint64_t	nclusters;		/* chunks of the tour */
	uint64_t	clusters_used;	/* ... that hold some node's arcs */
	uint64_t   *src_cluster;
	xxl_pagefile cidx;			/* first arc of each cluster */
	uint64_t   *loaded;			/* bitmap of clusters read */
	size_t		loaded_bytes;
	uint64_t	cluster_loads;
	uint64_t	pool_hits;		/* level nodes whose arcs were in the pool */
	uint64_t	pool_peak;		/* most arcs in the pool */
	xxl_spool	pool[2],
				level_copy;
	plevel		fresh;			/* the arcs of the clusters a level loads, by tail */
};

/* Arc r of the external adjacency (paths_adj_rec): the head's id, the edge id, the cost. */
static inline int64_t
paths_adj_orig(const xxl_paths *p, const unsigned char *r)
{
	return p->by_id ? (int64_t) (paths_adj_head(r) + (uint64_t) p->id_min) : (int64_t) g_get_u64(r + 8);
}

static inline int64_t
paths_adj_edge(const xxl_paths *p, const unsigned char *r)
{
	return (int64_t) g_get_u64(r + (p->by_id ? 8 : 16));
}

static inline double
paths_adj_cost(const xxl_paths *p, const unsigned char *r)
{
	double		w = 1;

	if (!p->by_id)
		memcpy(&w, r + 24, 8);
	else if (p->op != XXL_PATHS_BFS)
		memcpy(&w, r + 16, 8);
	return w;
}

/* A share of the pool for one part: 1 / parts, aligned. */
static inline size_t
paths_part_share(const xxl_paths *p, int parts)
{
	size_t		h = p->env.pool / (size_t) parts;

	return h - h % XXL_ALIGN;
}

/* qsort / bsearch order of int64_t ids (the sources). */
static inline int
paths_cmp_id(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

static inline xxl_status
pfail(xxl_paths *p)
{
	/* the numbering worker first: it writes the error and the budget too */
	g_numbering_stop(&p->numbering);
	p->state = PS_FAILED;
	if (p->env.err.code == XXL_OK)
		xxl_error_set(&p->env.err, XXL_EIO, 0, "shortest-path operator failed");
	return p->env.err.code;
}

/*
 * The in-memory heap, shared by the in-memory and semi-external searches.
 * It holds its keys: sifting compares neighbouring entries instead of
 * chasing the nodes' distances at random (twice as fast on 1M nodes).  Ties
 * go to the smaller dense id, so the order is deterministic.
 */
static inline bool
hentry_less(const pheap_entry *a, const pheap_entry *b)
{
	return a->d < b->d || (a->d == b->d && a->node < b->node);
}

static inline void
heap_up(xxl_paths *p, uint32_t i, pheap_entry x)
{
	pheap_entry *h = p->hent;

	while (i > 0)
	{
		uint32_t	parent = (i - 1) / 4;

		if (!hentry_less(&x, &h[parent]))
			break;
		h[i] = h[parent];
		p->node[h[i].node].pos = i;
		i = parent;
	}
	h[i] = x;
	p->node[x.node].pos = i;
}

static inline void
heap_down(xxl_paths *p, uint32_t i, pheap_entry x, uint32_t size)
{
	pheap_entry *h = p->hent;

	for (;;)
	{
		uint32_t	c = 4 * i + 1,
					best;

		if (c >= size)
			break;
		best = c;
		for (uint32_t k = c + 1; k < c + 4 && k < size; k++)
			if (hentry_less(&h[k], &h[best]))
				best = k;
		if (!hentry_less(&h[best], &x))
			break;
		h[i] = h[best];
		p->node[h[i].node].pos = i;
		i = best;
	}
	h[i] = x;
	p->node[x.node].pos = i;
}

/* The smallest of the root's children (size > 1): the likely node after next. */
static inline uint32_t
heap_second(const xxl_paths *p, uint32_t size)
{
	uint32_t	second = 1;

	for (uint32_t k = 2; k <= 4 && k < size; k++)
		if (hentry_less(&p->hent[k], &p->hent[second]))
			second = k;
	return p->hent[second].node;
}

/* v's tree entry: reached at d from pred over link (a source: itself, none). */
static inline void
reach(xxl_paths *p, uint32_t v, double d, uint32_t pred, uint32_t link)
{
	p->node[v].d = d;
	p->node[v].pred = pred;
	p->plinkv[v] = link;
}

/* paths_memory.c */
xxl_status	paths_mem_add(xxl_paths *p, int64_t u, int64_t v, int64_t eid, double w);
size_t		paths_mem_need(const xxl_paths *p);
xxl_status	paths_mem_run(xxl_paths *p);
int			paths_mem_next(xxl_paths *p, int64_t *node, double *d, int64_t *pred, int64_t *edge);
/* Whether the search still runs on its worker; wait for it (stop: ask it to stop first). */
bool		paths_mem_searching(const xxl_paths *p);
xxl_status	paths_mem_join(xxl_paths *p, bool stop);
int			paths_mem_step(xxl_paths *p, int64_t *node, int64_t *edge, double *cost,
						   double *agg);
/* The sources' and the target's dense ids (search_src, target_dense); the id table goes. */
xxl_status	paths_take_sources(xxl_paths *p);
/* The search's node arrays, every node unseen (heap: the heap too). */
xxl_status	paths_alloc_nodes(xxl_paths *p, bool heap);
/* The path to the target, target first, into p->steps = room (n entries). */
void		paths_collect_path(xxl_paths *p, uint32_t *room);
void		paths_mem_release(xxl_paths *p);

/* paths_semi.c */
/* Move the in-memory path's links to the semi-external path: XXL_ENOMEM (no error) if its nodes would not fit. */
xxl_status	paths_semi_begin(xxl_paths *p);
xxl_status	paths_semi_add(xxl_paths *p, int64_t u, int64_t v, int64_t eid, double w);
/* Put the spooled links to the external path's links spool (paths_ext_begin). */
xxl_status	paths_semi_hand_over(xxl_paths *p);
xxl_status	paths_semi_run(xxl_paths *p);
void		paths_semi_release(xxl_paths *p);
size_t		paths_semi_arc_bytes(const xxl_paths *p);

/* paths_ext_build.c */
xxl_status	paths_ext_begin(xxl_paths *p);
xxl_status	paths_ext_add(xxl_paths *p, int64_t u, int64_t v, int64_t eid, double w);
xxl_status	paths_ext_build(xxl_paths *p);
/*
 * What the search holds besides its queue or level sorters, for n nodes and
 * pages of these sizes: one bit per node (and per cluster), the smallest
 * caches, the settle log's and the path's pages, slack.
 */
size_t		paths_ext_search_fixed(const xxl_paths *p, uint64_t n, size_t adj_page,
								   size_t idx_page, size_t cidx_page);

/* paths_external.c */
xxl_status	paths_ext_run(xxl_paths *p);
int			paths_ext_next(xxl_paths *p, int64_t *node, double *d, int64_t *pred, int64_t *edge);
int			paths_ext_step(xxl_paths *p, int64_t *node, int64_t *edge, double *cost,
						   double *agg);
void		paths_ext_release(xxl_paths *p);
xxl_status	paths_ext_emit(xxl_paths *p, int64_t node, double d, int64_t pred, int64_t edge);
xxl_status	paths_ext_queue_open(xxl_paths *p, size_t rest, size_t rec);
xxl_status	paths_ext_push(xxl_paths *p, double d, uint64_t node, int64_t orig, uint64_t pred,
						   int64_t pred_orig, int64_t edge, double w, const void *extra,
						   size_t extra_len);
xxl_status	paths_ext_settle(xxl_paths *p, uint64_t x, int64_t orig, double d, uint64_t pred,
							 int64_t pred_orig, int64_t edge, double cost, bool *stop);
void		paths_ext_queue_close(xxl_paths *p);
/* Puts source i (of src_dense / src_orig / src_cluster) into a BFS level. */
typedef xxl_status (*paths_seed_fn) (xxl_paths *p, plevel *level, size_t i);
xxl_status	paths_ext_seed(xxl_paths *p, plevel *level, paths_seed_fn put);

/* paths_level.c */
xxl_status	plevel_init(xxl_paths *p, plevel *l, size_t rec, size_t share);
/* The memory its sorter gets once a level outgrows the buffer. */
size_t		plevel_sorter_memory(size_t rec, size_t share);
xxl_status	plevel_put(xxl_paths *p, plevel *l, const void *r);
xxl_status	plevel_sort(xxl_paths *p, plevel *l);
int			plevel_next(xxl_paths *p, plevel *l, const unsigned char **r);
bool		plevel_rewind(plevel *l);
void		plevel_clear(xxl_paths *p, plevel *l);
void		plevel_free(xxl_paths *p, plevel *l);

/* paths_cluster.c */
const char *paths_cluster_refusal(xxl_paths *p);
uint64_t	paths_cluster_mu(const xxl_paths *p);
xxl_status	paths_cluster_build(xxl_paths *p);
xxl_status	paths_cluster_of(xxl_paths *p, int64_t id, uint64_t *cluster);

/* paths_mo.c */
xxl_status	paths_mo_sssp(xxl_paths *p, size_t rest);
void		paths_mo_release(xxl_paths *p);

/* paths_mm.c */
xxl_status	paths_mm_bfs(xxl_paths *p, size_t rest);
bool		paths_mm_fits(xxl_paths *p, size_t rest, uint64_t nodes, uint64_t arcs);
void		paths_mm_release(xxl_paths *p);

#endif							/* XXL_PATHS_INTERNAL_H */
