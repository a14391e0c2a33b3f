/*
 * graph_internal.h — what the graph operators share: the operator
 * environment (xxl_env.h) on the graph plan (graph_layout.c), the node
 * permutation of the external path (graph_perm.c) and the order-preserving
 * encodings of ids and costs.
 */
#ifndef XXL_GRAPH_INTERNAL_H
#define XXL_GRAPH_INTERNAL_H

#include "core/graph/idmap.h"
#include "core/graph/xxl_graph.h"
#include "core/record.h"
#include "core/xxl_env.h"

#include <string.h>

/* Big-endian 64-bit fields: memcmp order is numeric order (record.h). */
static inline void
g_put_be(unsigned char *p, uint64_t v)
{
	xxl_store_be64(p, v);
}

static inline uint64_t
g_get_be(const unsigned char *p)
{
	return xxl_load_be64(p);
}

static inline void
g_put_u64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static inline uint64_t
g_get_u64(const unsigned char *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
	return v;
}

/* int64 -> uint64 preserving order (sign bit flipped). */
static inline uint64_t
g_id_key(int64_t id)
{
	return xxl_signed_key(id);
}

static inline int64_t
g_key_id(uint64_t key)
{
	return xxl_key_signed(key);
}

/* double -> uint64 preserving order (not for NaN); -0.0 < +0.0. */
static inline uint64_t
g_cost_key(double c)
{
	uint64_t	b;

	memcpy(&b, &c, 8);
	return (b >> 63) ? ~b : b | (UINT64_C(1) << 63);
}

static inline double
g_key_cost(uint64_t k)
{
	uint64_t	b = (k >> 63) ? k & ~(UINT64_C(1) << 63) : ~k;
	double		c;

	memcpy(&c, &b, 8);
	return c;
}

/* An edge as the spools keep it: [source][target][id][cost], native. */
#define IO_REC 32

static inline void
g_put_edge_rec(unsigned char *r, int64_t source, int64_t target, int64_t id, double cost)
{
	g_put_u64(r, (uint64_t) source);
	g_put_u64(r + 8, (uint64_t) target);
	g_put_u64(r + 16, (uint64_t) id);
	memcpy(r + 24, &cost, 8);
}

static inline void
g_get_edge_rec(const unsigned char *r, int64_t *source, int64_t *target, int64_t *id,
			   double *cost)
{
	*source = (int64_t) g_get_u64(r);
	*target = (int64_t) g_get_u64(r + 8);
	*id = (int64_t) g_get_u64(r + 16);
	memcpy(cost, r + 24, 8);
}

/* Bitmaps of 64-bit words. */
static inline bool
bit_get(const uint64_t *b, uint64_t i)
{
	return (b[i >> 6] >> (i & 63)) & 1;
}

static inline void
bit_set(uint64_t *b, uint64_t i)
{
	b[i >> 6] |= UINT64_C(1) << (i & 63);
}

/* Numbering ids with two sorts (relabel.c) --------------------------------- */

/*
 * Each distinct id in ascending order with its dense number; *attr (0 when
 * not set) goes with each of the id's endpoints into S2 when asked for.
 */
typedef xxl_status (*graph_id_fn) (void *arg, int64_t id, uint64_t dense, uint64_t *attr);

/* S1 records of edge e: (id key BE, e << 1 | side BE), key 8. */
xxl_status	graph_put_endpoints(xxl_env *env, xxl_env_sorter *s1, uint64_t e, int64_t source,
								int64_t target);

/*
 * Sort S1, number its distinct ids into S2 (opened here with share, for
 * `endpoints` records: (e << 1 | side BE, dense u64[, attr u64]), key 8),
 * close S1 and sort S2; *n: the distinct ids.
 */
xxl_status	graph_number_ids(xxl_env *env, xxl_env_sorter *s1, xxl_env_sorter *s2, size_t share,
							 uint64_t endpoints, graph_id_fn on_id, void *arg, bool with_attr,
							 uint64_t *n);

/*
 * The next edge's dense pair from S2, in edge order, and with attr (S2 made
 * with_attr) the ends' attributes: 1, 0 at the end, -1 on error.
 */
int			graph_next_dense_pair(xxl_env *env, xxl_env_sorter *s2, uint64_t *e, uint64_t *du,
								  uint64_t *dv, uint64_t *attr);

/* The operator environment (xxl_env.h) on the graph operators' plan. ------- */

extern const xxl_env_plan graph_plan;

/* What an in-memory path may hold: the pool and the spool allowance (it has no spools). */
static inline size_t
graph_mem_limit(const xxl_env *env)
{
	return env->pool + env->spool_allowance;
}

/* Node permutation of the external path ----------------------------------- */

/*
 * A pseudorandom bijection of [0, n): a 4-round Feistel network on the
 * smallest even number of bits covering n, with cycle walking (expected
 * fewer than 4 steps).  Inverted by running the rounds backwards.
 */
typedef struct gperm
{
	uint64_t	n;
	int			half_bits;
	uint64_t	mask;
	uint64_t	keys[4];
} gperm;

void		gperm_init(gperm *p, uint64_t n, uint64_t seed);
uint64_t	gperm_apply(const gperm *p, uint64_t x);
uint64_t	gperm_invert(const gperm *p, uint64_t y);

/* The operator's state (graph.c, graph_external.c, graph_output.c) ---------- */

/*
 * The graph operator: connected components, spanning forest and minimum spanning
 * forest (xxl_graph.h): relabeling to dense ids, the semi-external
 * union-find / Kruskal, the external node reduction with a priority queue,
 * the expansion of its result, and the pull interface.
 *
 * Record layouts (BE = big-endian key bytes, u64 = native payload):
 *   S1 endpoints       [id key BE][edge<<1|side BE]           key 8
 *   S2 dense endpoints [edge<<1|side BE][dense u64]            key 8
 *   S3 Kruskal order   [cost key BE][id key BE][du][dv][src][tgt] key 16
 *   queue CC           [~hi BE][lo BE]                         key 16
 *   queue SF           [~hi BE][lo BE][edge BE]                key 24
 *   queue MSF          [~hi BE][rank BE][lo u64]               key 16
 *   input / info spool [source][target][id][cost]              32 bytes
 * ~hi = UINT64_MAX - hi, so the queue yields the highest node first.
 *
 * Memory: the pool of the environment is shared so that at most two big
 * consumers (sorters, queues, the union-find array) live at once with half
 * of it each, except in the CC expansion (three thirds) and in the final
 * sorts (all of it).  The union-find array takes 8 bytes per node for
 * components, 4 for the forests (graph_uf_entry), so the semi-external
 * path takes n <= (pool/2 - 4 KB) / 8 (or / 4) nodes, and the external
 * path reduces to that many.
 */
typedef enum graph_state
{
	ST_INPUT,
	ST_OUTPUT,
	ST_DONE,
	ST_FAILED
} graph_state;

typedef enum graph_out
{
	OUT_NONE,
	OUT_CC_SEMI,				/* union-find array + map */
	OUT_CC_BY_ID,				/* the id map's direct array as union-find */
	OUT_CC_SPLIT,				/* by id in parts: the labels spool (graph_split.c) */
	OUT_CC_EXT,					/* F3 (node, original min) + map */
	OUT_SF_SEMI,				/* S2 + input + union-find */
	OUT_SF_MEM,					/* kept edges + union-find */
	OUT_MSF_MEM,				/* kept edges sorted by (cost, id) + union-find */
	OUT_MSF_SEMI,				/* S3 + union-find */
	OUT_SF_MAPPED,				/* the dense spool + union-find (graph_mapped.c) */
	OUT_MSF_MAPPED,				/* S3 of the dense spool + union-find */
	OUT_FOREST_PARTS,			/* the forest spool of the levels (graph_forest_split.c) */
	OUT_FOREST_EXT				/* sorted forest edge numbers + input/info */
} graph_out;

/*
 * The output clock of the graph operators: from the first row to the end,
 * the consumer's time between rows included (no clock read per row: that
 * costs more than the row).
 */
typedef struct gout_clock
{
	uint64_t	t0,
				ns;
} gout_clock;

static inline void
gout_clock_row(gout_clock *c)
{
	if (c->t0 == 0)
		c->t0 = xxl_now_ns();
}

static inline void
gout_clock_end(gout_clock *c)
{
	if (c->ns == 0)
		c->ns = xxl_now_ns() - c->t0;
}

/* The output time so far (or in all, after gout_clock_end). */
static inline uint64_t
gout_clock_ns(const gout_clock *c)
{
	return c->ns ? c->ns : c->t0 ? xxl_now_ns() - c->t0 : 0;
}

/* What the spanning forest keeps of an edge in memory besides its ends. */
typedef struct graph_attr
{
	int64_t		id;
	double		cost;
} graph_attr;

/*
 * What the minimum spanning forest keeps of an edge in memory: its sort
 * record, sorted in place by its first KEDGE_KEY bytes (pvec_sort), the
 * strict order of the other paths: cost key and id key (big-endian) and
 * the input position.
 */
#define KEDGE_KEY 20
typedef struct graph_kedge
{
	unsigned char key[KEDGE_KEY];
	uint32_t	u,
				v;				/* dense ends */
	uint32_t	pad;
} graph_kedge;

#define NONE UINT64_MAX

/*
 * One level of components by id in parts (graph_split.c): indexes
 * [0, space), the first base of them in its union-find array; its low
 * roots that edges above touch are the next level's first indexes.
 */
#define SPLIT_MAX_LEVELS 32
/* A touched low root's entry: its next-level index, flagged. */
#define SPLIT_FLAG (UINT32_C(1) << 31)

/*
 * Where the next level has index x of a level whose low part [0, base)
 * union-find p holds, after the roots the next level carries were
 * numbered (roots of them): above the low part, shifted past them; a
 * touched root, the index its entry holds; any other low index, its
 * root's.
 */
static inline uint32_t
split_next_index(const uint32_t *p, uint32_t base, uint32_t roots, uint32_t x)
{
	uint32_t	v;

	if (x >= base)
		return roots + (x - base);
	v = p[x];
	return (v & SPLIT_FLAG ? v : p[v]) & ~SPLIT_FLAG;
}
#define SPLIT_BUF 1024			/* values of the spooled edges buffered */
typedef struct split_level
{
	uint64_t	space;
	uint32_t	base;
	uint32_t	roots;
	uint32_t   *root_at;		/* the roots' indexes here, ascending */
	size_t		root_bytes;
	xxl_spool	labels;			/* per index below base: its root here, or next-level index | flag */
} split_level;

/* Smaller ends met among one node's queue records (graph_external.c). */
typedef struct seen_set
{
	uint64_t   *lo;
	uint32_t   *gen;
	size_t		mask;
	size_t		bytes;
	uint32_t	cur;
} seen_set;

struct xxl_graph
{
	xxl_env	env;
	xxl_graph_op op;
	uint64_t	seed;
	uint64_t	max_semi_nodes;
	bool		wide_queue;		/* testing: xxl_graph_config */
	uint64_t	expected_edges;
	graph_state state;
	graph_out	out;
	xxl_graph_path path;
	uint64_t	t_start;
	uint64_t	run_ns;
	gout_clock	out_clock;

	uint64_t	m;
	uint64_t	sorted_m;		/* edges on the sorting path (graph_put_sorted) */
	int64_t		sorted_min,		/* ... the forests': their smallest and largest ids */
				sorted_max;
	bool		pairs_by_id;	/* the forests' dense ends are their ids - sorted_min,
								 * read from the input spool (rd_pairs), not S2 */
	uint64_t	pairs_pos;
	uint64_t   *present;		/* ... by id: the ids some edge has, until counted */
	size_t		present_bytes;
	uint64_t	nodes;			/* by id: the distinct ids counted (graph_nodes) */
	uint64_t	n;
	uint64_t	self_loops;
	uint64_t	semi_max;
	uint64_t	base_n;
	uint64_t	contracted;
	uint64_t	relinked;
	uint64_t	parallel;		/* external: parallel edges dropped */
	uint64_t	forest_count;	/* external: forest edges found */
	uint64_t	special_count;	/* external: edges inside the base from the start */
	bool		narrow;			/* external: queue records of 32-bit ends (graph_external.c) */
	uint64_t	components;
	uint64_t	forest_edges;	/* returned to the caller */

	xxl_env_sorter		s1,
				s2,
				s3,
				s4,
				lsort,
				f1,
				f2,
				f3,
				fsort;
	xxl_env_queue		pq,
				msg;
	xxl_spool		input,
				map,
				info,
				log,
				forest,
				special,
				basereps;
	xxl_spool_reader rd_in,
				rd_map,
				rd_aux,
				rd_pairs;
	uint64_t   *parent;
	size_t		parent_bytes;
	gperm		perm;
	seen_set	seen;			/* external MSF: parallels met by rank */
	uint64_t	out_pos;

	/* CC in memory (graph_memory.c) */
	bool		in_memory;		/* edges go to ends, ids to map */
	/*
	 * components while every id is a small non-negative integer: the id
	 * map's direct array is the union-find itself, indexed by the ids (the
	 * parent's id, IDMAP_NONE for an id not seen), and no edge is kept
	 */
	bool		by_id;
	idmap		idm;
	pvec		ends;			/* (dense, dense) per edge, in input order */
	pvec		ccuf;			/* CC numbered: union-find parent per dense id */
	uint64_t	cc_edges;		/* ... edges numbered so far */
	uint32_t	cc_pairs[256][2];	/* ... numbered, to be joined (prefetched together) */
	size_t		cc_npairs;
	int64_t    *mem_ids;		/* the distinct ids, ascending (output) */
	size_t		mem_ids_bytes;
	pvec		attrs;			/* SF: graph_attr per edge */
	pvec		kedges;			/* MSF: graph_kedge per edge, instead of ends */
	/* the forests with ids in memory, edges spooled (graph_mapped.c) */
	bool		mapped;
	xxl_spool	dense;
	uint64_t	mapped_m;		/* edges in dense */
	/*
	 * ids in [0, direct_base) are their own union-find index, the others
	 * direct_base + their number in idm; direct_base shrinks to direct_top
	 * (1 + the largest such id seen) when the first other id comes, and is
	 * 0 when the edges came numbered from memory
	 */
	uint64_t	direct_base;
	uint64_t	direct_top;
	bool		direct_frozen;
	uint8_t    *direct_seen;	/* a bit per direct id seen */
	size_t		direct_seen_bytes;
	/*
	 * the forests by id in parts (graph_forest_split.c): the
	 * spooled edges' indexes are their ids, which go above what one
	 * union-find holds
	 */
	bool		parts;
	uint64_t	parts_high;		/* 1 + the largest id */
	int			parts_levels;	/* the levels that ran */
	xxl_spool	parts_forest;	/* the forest edges found */
	uint64_t	parts_m;		/* ... how many */
	/*
	 * components by id in parts (graph_split.c): ids below split_base stay
	 * in the direct array; an edge with an end at or above it goes to
	 * split_edges, joined at run level by level
	 */
	bool		split;
	uint32_t	split_base;
	uint64_t	split_high;		/* 1 + the largest id (the first level's space) */
	uint64_t	split_cap;		/* ... at most this (graph_split_begin) */
	xxl_spool	split_edges;	/* (uint32 source, uint32 target), kept to the end */
	uint32_t	split_buf[SPLIT_BUF];	/* ... the last pairs, not yet written */
	size_t		split_nbuf;
	split_level split_lv[SPLIT_MAX_LEVELS];
	int			split_nlv;		/* levels that hold labels and roots */
	uint32_t   *split_uf;		/* a level's union-find */
	size_t		split_uf_bytes;
	/*
	 * a bit per low index of the level whose edges are being written, set
	 * for each end below its base: the roots to touch, without a pass over
	 * the edges (NULL when it did not fit: the pass)
	 */
	uint64_t   *split_touch;
	size_t		split_touch_bytes;
	xxl_spool	split_out;		/* the final label of each id of the first level */
	xxl_graph_edge batch[256];	/* edges not yet numbered (prefetched together) */
	size_t		nbatch;
};


/* Small helpers ----------------------------------------------------------- */

static inline xxl_status
gfail(xxl_graph *g)
{
	g->state = ST_FAILED;
	if (g->env.err.code == XXL_OK)
		xxl_error_set(&g->env.err, XXL_EIO, 0, "graph operator failed");
	return g->env.err.code;
}

static inline bool
poll_canceled(xxl_graph *g)
{
	return xxl_env_poll(&g->env);
}

/*
 * S3's records, in Kruskal order: cost and id keys, the dense ends, and the
 * original ends unless the dense ones are the ids less the smallest.
 */
static inline size_t
graph_kruskal_rec(const xxl_graph *g)
{
	return g->pairs_by_id ? 32 : 48;
}

static inline void
graph_kruskal_ends(const xxl_graph *g, const unsigned char *s, int64_t *source, int64_t *target)
{
	if (g->pairs_by_id)
	{
		*source = (int64_t) (g_get_u64(s + 16) + (uint64_t) g->sorted_min);
		*target = (int64_t) (g_get_u64(s + 24) + (uint64_t) g->sorted_min);
		return;
	}
	*source = (int64_t) g_get_u64(s + 32);
	*target = (int64_t) g_get_u64(s + 40);
}

static inline size_t
half_share(const xxl_graph *g)
{
	size_t		h = g->env.pool / 2;

	return h - h % XXL_ALIGN;
}

static inline size_t
share(const xxl_graph *g, int parts)
{
	size_t		h = g->env.pool / (size_t) parts;

	return h - h % XXL_ALIGN;
}

/*
 * Union-find with union by smaller index: parent[x] <= x, roots are minima
 * (a set's root is its smallest member), path halving.  AT(p, x) is the
 * address of x's parent in the container p: uf_ on an array of 8-byte
 * parents (dense node numbers), uf32_ on 4-byte ones (components by id,
 * the forests' semi-external path), and graph_memory.c's numbered
 * components on a chunked array (pvec).
 */
#define UF_DEFINE_AT(prefix, T, C, AT) \
static inline T \
prefix##_find(C p, T x) \
{ \
	T		   *px = AT(p, x); \
\
	while (*px != x) \
	{ \
		*px = *AT(p, *px); \
		x = *px; \
		px = AT(p, x); \
	} \
	return x; \
} \
\
static inline bool \
prefix##_union(C p, T a, T b) \
{ \
	a = prefix##_find(p, a); \
	b = prefix##_find(p, b); \
	if (a == b) \
		return false; \
	if (a < b) \
		*AT(p, b) = a; \
	else \
		*AT(p, a) = b; \
	return true; \
}

#define UF_ARRAY_AT(p, x) (&(p)[x])

/* Components by id: id x (in the direct array) seen, its own set until joined. */
static inline void
by_id_see(idmap *m, uint32_t x)
{
	if (m->direct[x] == IDMAP_NONE)
	{
		m->direct[x] = x;
		m->n++;
	}
}

UF_DEFINE_AT(uf, uint64_t, uint64_t *, UF_ARRAY_AT)
UF_DEFINE_AT(uf32, uint32_t, uint32_t *, UF_ARRAY_AT)

static inline xxl_status
uf_alloc(xxl_graph *g, uint64_t n)
{
	g->parent_bytes = (size_t) (n ? n : 1) * sizeof(uint64_t);
	g->parent = xxl_env_alloc(&g->env, g->parent_bytes);
	if (g->parent == NULL)
		return g->env.err.code;
	for (uint64_t i = 0; i < n; i++)
		g->parent[i] = i;
	return XXL_OK;
}

/* The same with 4-byte parents in g->parent (dense ids below IDMAP_MAX). */
static inline xxl_status
uf32_alloc(xxl_graph *g, uint64_t n)
{
	uint32_t   *p;

	g->parent_bytes = (size_t) (n ? n : 1) * sizeof(uint32_t);
	g->parent = xxl_env_alloc(&g->env, g->parent_bytes);
	if (g->parent == NULL)
		return g->env.err.code;
	p = (uint32_t *) g->parent;
	for (uint64_t i = 0; i < n; i++)
		p[i] = (uint32_t) i;
	return XXL_OK;
}

/*
 * The sorting path's union-find over the dense ids: 8-byte parents for
 * components (their output keeps the original ids there), 4-byte ones for
 * the forests (only joined, and the dense ids of a semi-external path fit
 * 32 bits), so that the forests' semi-external path takes twice the nodes.
 */
static inline size_t
graph_uf_entry(const xxl_graph *g)
{
	return g->op == XXL_GRAPH_CC ? sizeof(uint64_t) : sizeof(uint32_t);
}

static inline xxl_status
graph_uf_alloc(xxl_graph *g, uint64_t n)
{
	return g->op == XXL_GRAPH_CC ? uf_alloc(g, n) : uf32_alloc(g, n);
}

static inline bool
graph_uf_union(xxl_graph *g, uint64_t a, uint64_t b)
{
	if (g->op == XXL_GRAPH_CC)
		return uf_union(g->parent, a, b);
	return uf32_union((uint32_t *) g->parent, (uint32_t) a, (uint32_t) b);
}

static inline void
uf_free(xxl_graph *g)
{
	if (g->parent)
		xxl_env_free(&g->env, g->parent, g->parent_bytes);
	g->parent = NULL;
}

/* Every parent points at its root (parents are smaller: one ascending pass). */
static inline void
uf_flatten(uint64_t *p, uint64_t n)
{
	for (uint64_t x = 0; x < n; x++)
		p[x] = p[p[x]];
}


/* graph.c: input, relabeling, the semi-external path */
xxl_status	graph_open_endpoints(xxl_graph *g);
xxl_status	graph_put_sorted(xxl_graph *g, int64_t source, int64_t target, int64_t id,
							 double cost);
xxl_status	graph_relabel(xxl_graph *g);
xxl_status	graph_run_semi(xxl_graph *g);
xxl_status	graph_fill_kruskal_sorter(xxl_graph *g);
/* The next edge from S2 in input order: 1, 0 at the end, -1 on error. */
int			graph_next_pair(xxl_graph *g, uint64_t *e, uint64_t *du, uint64_t *dv);
void		graph_pairs_done(xxl_graph *g);

/* The graph's distinct ids: n, or by id those the pairs were seen to have. */
static inline uint64_t
graph_nodes(const xxl_graph *g)
{
	return g->pairs_by_id ? g->nodes : g->n;
}

/* graph_memory.c: CC in memory */
bool		graph_mem_wanted(const xxl_graph *g);
/* Set in_memory (graph_mem_wanted) and whether components start by id. */
void		graph_mem_start(xxl_graph *g);
/* Number the edges put but not yet numbered (may move to the sorters). */
xxl_status	graph_mem_flush(xxl_graph *g);

/*
 * One more edge for the in-memory paths, numbered with its batch: XXL_OK
 * with the edge kept, or with g->in_memory false after moving to the sorters
 */
static inline xxl_status
graph_mem_put(xxl_graph *g, const xxl_graph_edge *e)
{
	g->batch[g->nbatch] = *e;
	if (++g->nbatch == sizeof(g->batch) / sizeof(g->batch[0]))
		return graph_mem_flush(g);
	return XXL_OK;
}
xxl_status	graph_mem_run(xxl_graph *g);
int			graph_mem_next_edge(xxl_graph *g, int64_t *id, int64_t *source, int64_t *target,
								double *cost);
void		graph_mem_release(xxl_graph *g);
/*
 * Components by id leave: into the numbered map if it fits (in_memory
 * stays), else to the sorting path, with the batch's edges from `from` on.
 */
xxl_status	graph_mem_leave_by_id(xxl_graph *g, size_t from);
/* Pairs of 4-byte ids from a spool onto the sorting path (consumed). */
xxl_status	graph_replay_pairs(xxl_graph *g, xxl_spool *links);

/* Components by id in parts (graph_split.c). */
/*
 * Whether they may go on by id from edge e (which the direct array did not
 * take) on: the array grown to take it, or in parts, the array (grown as
 * far as the pool lets it) the first level's low part.
 */
bool		graph_split_begin(xxl_graph *g, const xxl_graph_edge *e);
/* An edge of the batch with an end above the low part: false if its ids cannot be taken. */
bool		graph_split_put(xxl_graph *g, int64_t source, int64_t target);
/* At the end of input: the levels and the labels, or (if they cannot fit) a move on. */
xxl_status	graph_split_settle(xxl_graph *g);
/* The spooled edges, onto the sorting path after the links (a move midway). */
xxl_status	graph_split_replay(xxl_graph *g);
int			graph_split_next_node(xxl_graph *g, int64_t *node, int64_t *component);
/* The levels' union-finds of components by id in parts, 0 if they did not run so. */
int			graph_split_levels(const xxl_graph *g);
void		graph_split_release(xxl_graph *g);

/* graph_mapped.c: the forests with the ids in memory and the edges spooled */
/* Move the kept edges to the spool: XXL_ENOMEM (no error) if the ids would not fit. */
xxl_status	graph_mapped_begin(xxl_graph *g);
/* One more edge: XXL_ENOMEM (no error, nothing added) when its ids would not fit. */
xxl_status	graph_mapped_put(xxl_graph *g, const xxl_graph_edge *e);
/* Put the spooled edges to the sorting path (its endpoint sorter open), in input order. */
xxl_status	graph_mapped_to_sorter(xxl_graph *g);
xxl_status	graph_mapped_run(xxl_graph *g);
int			graph_mapped_next_edge(xxl_graph *g, int64_t *id, int64_t *source, int64_t *target,
								   double *cost);
/*
 * Sort the spooled edges (kept or consumed) into S3 by (cost, id, input
 * position) with a sorter of `share` bytes; then read them in that order.
 */
xxl_status	graph_mapped_sort(xxl_graph *g, size_t share, bool keep);
int			graph_mapped_sorted_next(xxl_graph *g, int64_t *id, double *cost, uint32_t *u,
									 uint32_t *v);
/* Whether some ids are their own index. */
bool		graph_mapped_by_id(const xxl_graph *g);
void		graph_mapped_release(xxl_graph *g);

/* graph_forest_split.c: the forests by id in parts */
/* Whether an id may be its own index of the levels. */
bool		graph_parts_takes(const xxl_graph *g, int64_t id);
/* The levels over the spool, or (if they give up) the move to the sorters. */
xxl_status	graph_parts_run(xxl_graph *g);
int			graph_parts_next_edge(xxl_graph *g, int64_t *id, int64_t *source, int64_t *target,
								  double *cost);
void		graph_parts_release(xxl_graph *g);

/* graph_external.c: node reduction with the priority queue, and expansion */
xxl_status	graph_run_external(xxl_graph *g);
void		graph_seen_close(xxl_graph *g, seen_set *ss);

/* graph_output.c: the pull interface */
void		graph_release_all(xxl_graph *g);

#endif							/* XXL_GRAPH_INTERNAL_H */
