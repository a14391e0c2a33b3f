/*
 * paths_semi.c — the semi-external path of BFS / shortest paths
 * (xxl_paths.h): taken when the in-memory path's links and lists do not
 * fit the budget but its nodes do.  The nodes stay as the in-memory path
 * keeps them (the id table, the distances, the heap or queue, the order
 * settled); the links go to a spool with their dense ids; the adjacency is
 * split at one arc: the first arcs, as many as the rest of the budget
 * holds, in memory, the others in a page file read through a page cache.
 *
 * Why not the external path below "fits": on 1M nodes / 5M edges the
 * in-memory path needs about 220 MB and its nodes 50; the external path
 * numbers the ids and builds the adjacency by three sorts, 4-5x the
 * in-memory time.  Here the ids are numbered and each node's arcs counted
 * as the edges come, and the adjacency is built by passes over the
 * spooled links, each putting the arcs of a range of tails at their slots
 * and keeping one chunk of the page file's (as large as the budget holds
 * before the search's arrays exist), which it then appends; the last pass
 * fills the memory part too.  Arcs keep their links' order within each
 * list, as in memory, so Dijkstra settles the same nodes from the same
 * predecessors (BFS: see semi_bfs).
 *
 * An arc is its head and, for shortest paths, its cost's one-byte code
 * (pcost_dict; the double where the costs take more values): no link, so
 * 4 or 5 bytes instead of the in-memory path's 8 and 16.  After the search
 * one more pass over the links finds each reached node's link: the first
 * in link order from its predecessor whose cost gives its distance, the
 * one the search took (a list holds its arcs in link order, and a
 * relaxation takes only a strictly shorter distance).
 */
#include "core/graph/paths_internal.h"
#include "core/radix.h"

#include <string.h>

#define SEMI_REC sizeof(plink_semi)
/* the sources, the spool's reader and the operator's small state */
#define SEMI_FIXED (64 * 1024)
/* adjacency pages the cache keeps at least */
#define SEMI_CACHE_PAGES 16
/* ... and this part of what the nodes leave, when arcs are paged */
#define CACHE_PART 8
/*
 * The budget is checked once per this many links, for the nodes they can
 * bring: the in-memory path's stride (PVEC_FIT_STRIDE) would ask for room
 * for 64K nodes ahead, more than the whole search at small budgets.
 */
#define SEMI_FIT_STRIDE 1024

/* plinkv of a reached node other than a source: its link not yet found, found */
#define LINK_PENDING 0
#define LINK_FOUND 1

/* Bytes of an arc, in memory or paged: its head, its cost's code or cost. */
size_t
paths_semi_arc_bytes(const xxl_paths *p)
{
	if (p->op != XXL_PATHS_SSSP)
		return 4;
	return p->costs.wide ? 4 + sizeof(double) : 5;
}

/*
 * The code of cost w, added if it is new and add (-1: not there, or no
 * room: the costs are then wide).
 */
static int
cost_code(pcost_dict *d, double w, bool add)
{
	uint64_t	bits;
	size_t		h;

	memcpy(&bits, &w, sizeof(bits));
	h = (size_t) ((bits * UINT64_C(0x9E3779B97F4A7C15)) >> 40) % PCOST_SLOTS;
	for (;; h = (h + 1) % PCOST_SLOTS)
	{
		unsigned	c = d->slot[h];

		if (c == 0)
		{
			if (!add || d->n == PCOST_CODES)
				return -1;
			d->cost[d->n] = w;
			d->slot[h] = (uint16_t) ++d->n;
			return (int) d->n - 1;
		}
		if (memcmp(&d->cost[c - 1], &w, sizeof(w)) == 0)
			return (int) c - 1;
	}
}

static size_t
page_bytes(const xxl_paths *p)
{
	return xxl_pagefile_page_for(&p->env, 4096);
}

/*
 * What the search holds per node beside the ids and offsets: its entry,
 * its link, its place in the order, and the heap (shortest paths) or the
 * level sort's scratch (BFS); with a target, room for the path.  After
 * the search the edge ids (and a path's costs) take the heap's room, or
 * the scratch's and the offsets'.
 */
static size_t
node_bytes(const xxl_paths *p)
{
	return sizeof(pnode) + 4 + 4 + (p->op == XXL_PATHS_SSSP ? sizeof(pheap_entry) : 4) +
		(p->has_target ? 4 : 0);
}

/* The smallest page cache: its frames and their tags. */
static size_t
min_cache_bytes(const xxl_paths *p)
{
	return SEMI_CACHE_PAGES * (page_bytes(p) + sizeof(uint64_t));
}

/* The search's memory without arcs in memory: nodes, offsets, the smallest cache. */
static size_t
search_bytes(const xxl_paths *p, uint64_t n)
{
	return pvec_bytes(&p->map.ids, n) + 4 * (n + 1) + node_bytes(p) * n + min_cache_bytes(p) +
		SEMI_FIXED;
}

/*
 * The semi-external path's idmap_fits_fn: the ids and their tables while
 * the edges come, the search's arrays afterwards (the tables are gone by
 * then), and arcs and links below the dense limit.
 */
static bool
semi_fits(const void *arg, uint64_t n, size_t tables)
{
	const xxl_paths *p = arg;
	uint64_t	links = p->nlinks + 1;
	size_t		input = pvec_bytes(&p->map.ids, n) + tables + pvec_bytes(&p->semi_deg, n) +
		SEMI_FIXED;

	return n < P_MAX_DENSE && (p->directed ? links : 2 * links) < P_MAX_DENSE &&
		input <= p->env.pool && search_bytes(p, n) <= p->env.pool;
}

/* A link to the spool, its arcs counted (its ends numbered already). */
static xxl_status
spool_link(xxl_paths *p, uint32_t u, uint32_t v, double w, int64_t eid)
{
	plink_semi	l = {u, v, w, eid};

	p->n = p->map.n;
	while (p->semi_deg.n < p->n)
	{
		uint32_t   *d = pvec_push(&p->env, &p->semi_deg);

		if (d == NULL)
			return p->env.err.code;
		*d = 0;
	}
	(*(uint32_t *) pvec_at(&p->semi_deg, u))++;
	if (!p->directed)
		(*(uint32_t *) pvec_at(&p->semi_deg, v))++;
	if (p->op == XXL_PATHS_SSSP && !p->costs.wide && cost_code(&p->costs, w, true) < 0)
		p->costs.wide = true;
	if (xxl_spool_write(&p->semispool, &l, SEMI_REC) != XXL_OK)
		return p->env.err.code;
	p->nlinks++;
	return XXL_OK;
}

xxl_status
paths_semi_begin(xxl_paths *p)
{
	uint64_t	links = p->nlinks;

	/* room for the next stride's nodes, as paths_semi_add checks */
	if (!semi_fits(p, p->n + 2 * SEMI_FIT_STRIDE, idmap_table_bytes(&p->map)))
		return XXL_ENOMEM;
	xxl_spool_init(&p->semispool, &p->env, XXL_SPOOL_SHARED);
	p->semi = true;
	p->nlinks = 0;
	for (uint64_t i = 0; i < links; i++)
	{
		const plink_ends *e = pvec_at(&p->lends, i);
		const plink_cost *c = pvec_at(&p->lcost, i);

		if (spool_link(p, e->u, e->v, c->w, c->eid) != XXL_OK)
			return p->env.err.code;
	}
	pvec_free(&p->env, &p->lends);
	pvec_free(&p->env, &p->lcost);
	return XXL_OK;
}

/* Like paths_mem_add: XXL_ENOMEM (no error) when it would not fit, nothing added. */
xxl_status
paths_semi_add(xxl_paths *p, int64_t u, int64_t v, int64_t eid, double w)
{
	uint32_t	du,
				dv;

	if (p->nlinks % SEMI_FIT_STRIDE == 0 &&
		!semi_fits(p, p->n + 2 * SEMI_FIT_STRIDE, idmap_table_bytes(&p->map)))
		return XXL_ENOMEM;
	if ((du = idmap_intern_within(&p->env, &p->map, u, semi_fits, p)) == P_UNSEEN ||
		(dv = idmap_intern_within(&p->env, &p->map, v, semi_fits, p)) == P_UNSEEN ||
		spool_link(p, du, dv, w, eid) != XXL_OK)
	{
		if (p->env.err.code == XXL_ENOMEM)
			xxl_error_clear(&p->env.err);
		return p->env.err.code == XXL_OK ? XXL_ENOMEM : p->env.err.code;
	}
	return XXL_OK;
}

/* What a pass does with a spooled link. */
typedef xxl_status (*link_fn) (xxl_paths *p, const plink_semi *l, void *arg);

/*
 * Each of the first `links` spooled links in order, to fn; stops at the
 * first error.  A pass of the path's own (on the caller's thread) polls
 * and is counted; the hand-over to the external path, which may run on
 * the numbering worker, consumes the spool instead.
 */
static xxl_status
each_link(xxl_paths *p, uint64_t links, bool hand_over, link_fn fn, void *arg)
{
	xxl_env    *env = &p->env;
	xxl_spool_reader rd;
	const unsigned char *r;

	if (xxl_spool_finish(&p->semispool) != XXL_OK ||
		xxl_spool_reader_open(&rd, &p->semispool, hand_over) != XXL_OK)
		return env->err.code;
	for (uint64_t i = 0; i < links; i++)
	{
		plink_semi	l;

		if (xxl_spool_read(&rd, SEMI_REC, &r) != XXL_OK)
			break;
		memcpy(&l, r, SEMI_REC);
		if (fn(p, &l, arg) != XXL_OK)
			break;
		if (!hand_over && (i & 4095) == 4095 && xxl_env_poll(env))
			break;
	}
	xxl_spool_reader_close(&rd);
	p->link_passes += !hand_over;
	return env->err.code;
}

static xxl_status
hand_link(xxl_paths *p, const plink_semi *l, void *arg)
{
	(void) arg;
	return paths_ext_add(p, idmap_id(&p->map, l->u), idmap_id(&p->map, l->v), l->eid, l->w);
}

xxl_status
paths_semi_hand_over(xxl_paths *p)
{
	uint64_t	links = p->nlinks;

	/* paths_ext_add counts them again */
	p->nlinks = 0;
	p->semi = false;
	return each_link(p, links, true, hand_link, NULL);
}

/* The arcs in memory (fewer than the in-memory path's: mem_arcs): heads, and codes or costs. */
static size_t
mem_slots(const xxl_paths *p)
{
	return p->mem_arcs ? p->mem_arcs : 1;
}

static xxl_status
alloc_arcs(xxl_paths *p)
{
	size_t		m = mem_slots(p);

	if ((p->sto = xxl_env_alloc(&p->env, 4 * m)) == NULL ||
		(p->op == XXL_PATHS_SSSP && p->costs.wide &&
		 (p->warc = xxl_env_alloc(&p->env, sizeof(double) * m)) == NULL) ||
		(p->op == XXL_PATHS_SSSP && !p->costs.wide &&
		 (p->swc = xxl_env_alloc(&p->env, m)) == NULL))
		return p->env.err.code;
	return XXL_OK;
}

static void
free_arcs(xxl_paths *p)
{
	size_t		m = mem_slots(p);

	if (p->sto)
		xxl_env_free(&p->env, p->sto, 4 * m);
	p->sto = NULL;
	if (p->warc)
		xxl_env_free(&p->env, p->warc, sizeof(double) * m);
	p->warc = NULL;
	if (p->swc)
		xxl_env_free(&p->env, p->swc, m);
	p->swc = NULL;
}

/* Building the adjacency -------------------------------------------------------- */

/*
 * A placing pass: the slots of the arcs whose tails are in [lo, hi], the
 * nodes that have arcs in the memory part (first pass) or in this pass's
 * chunk; the others are passed over without touching their cursors (a
 * random access each).
 */
typedef struct place_pass
{
	uint32_t   *cur;			/* each node's next slot */
	uint64_t	from,
				to;				/* the chunk: arcs [from, to) */
	uint32_t	lo,
				hi;
	unsigned char *chunk;
	size_t		rec;			/* bytes of a paged arc */
	bool		memory;			/* this pass fills the memory part too */
} place_pass;

/* Arc tail -> head of cost w (code: its code, where the costs have codes). */
static inline void
place(xxl_paths *p, place_pass *pp, uint32_t tail, uint32_t head, double w, uint8_t code)
{
	uint64_t	a;

	if (tail < pp->lo || tail > pp->hi)
		return;
	a = pp->cur[tail]++;

	if (a < p->mem_arcs)
	{
		if (!pp->memory)
			return;
		p->sto[a] = head;
		if (p->warc)
			p->warc[a] = w;
		else if (p->swc)
			p->swc[a] = code;
	}
	else if (a >= pp->from && a < pp->to)
	{
		unsigned char *r = pp->chunk + (a - pp->from) * pp->rec;

		memcpy(r, &head, 4);
		if (p->op != XXL_PATHS_SSSP)
			return;
		if (p->costs.wide)
			memcpy(r + 4, &w, sizeof(w));
		else
			r[4] = code;
	}
}

static xxl_status
place_link(xxl_paths *p, const plink_semi *l, void *arg)
{
	place_pass *pp = arg;
	uint8_t		code = 0;

	if ((l->u < pp->lo || l->u > pp->hi) && (p->directed || l->v < pp->lo || l->v > pp->hi))
		return XXL_OK;
	/* the cost's code once for both arcs */
	if (p->op == XXL_PATHS_SSSP && !p->costs.wide)
		code = (uint8_t) cost_code(&p->costs, l->w, false);
	place(p, pp, l->u, l->v, l->w, code);
	if (!p->directed)
		place(p, pp, l->v, l->u, l->w, code);
	return XXL_OK;
}

/* The node whose list holds arc a (< narcs): the last x with off[x] <= a. */
static uint32_t
tail_of(const xxl_paths *p, uint64_t a)
{
	uint64_t	lo = 0,
				hi = p->n;		/* off[lo] <= a < off[hi] */

	while (hi - lo > 1)
	{
		uint64_t	mid = lo + (hi - lo) / 2;

		if (p->off[mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	return (uint32_t) lo;
}

/* One placing pass: arcs [from, to) to the page file, and the memory part if memory. */
static xxl_status
place_pass_run(xxl_paths *p, place_pass *pp, uint64_t from, uint64_t to, bool memory)
{
	size_t		rec = paths_semi_arc_bytes(p);
	uint64_t	last = memory && p->mem_arcs > to ? p->mem_arcs : to;

	pp->from = from;
	pp->to = to;
	pp->rec = rec;
	pp->memory = memory;
	pp->lo = memory ? 0 : tail_of(p, from);
	pp->hi = last > 0 ? tail_of(p, last - 1) : 0;
	if (p->n > 0)
		memcpy(pp->cur + pp->lo, p->off + pp->lo, 4 * ((uint64_t) pp->hi - pp->lo + 1));
	if (each_link(p, p->nlinks, false, place_link, pp) != XXL_OK)
		return p->env.err.code;
	for (uint64_t a = from; a < to; a++)
		if (xxl_pagefile_append(&p->adj, pp->chunk + (a - from) * rec) != XXL_OK)
			return p->env.err.code;
	return XXL_OK;
}

/*
 * The offsets by counting, then the arcs: the memory part takes what the
 * search's arrays leave of the pool; the paged rest is placed a chunk per
 * pass, a chunk being what the pool holds while those arrays do not exist
 * yet: the memory part too, until the last pass, which fills it beside
 * the last (smaller) chunk.
 */
static xxl_status
build_adjacency(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	size_t		search = search_bytes(p, p->n),
				reserve;
	size_t		rec = paths_semi_arc_bytes(p);
	size_t		min_arcs = page_bytes(p) / rec;
	size_t		held,
				mem_bytes;
	uint64_t	full,
				last;
	place_pass	pp = {0};
	xxl_status	rc = XXL_OK;

	if ((p->off = xxl_env_alloc(env, 4 * (p->n + 1))) == NULL)
		return env->err.code;
	/* the offsets from the counts (a node numbered by the last links has none yet) */
	p->off[0] = 0;
	for (uint64_t x = 0; x < p->n; x++)
		p->off[x + 1] = p->off[x] +
			(x < p->semi_deg.n ? *(const uint32_t *) pvec_at(&p->semi_deg, x) : 0);
	pvec_free(env, &p->semi_deg);
	p->narcs = p->off[p->n];

	/*
	 * The cache keeps 1/CACHE_PART of what the nodes leave when arcs are
	 * paged; when most are, half for BFS and all of it for Dijkstra.  A
	 * wave through a grid reads the pages of one level again in the next
	 * (a 2000 x 2000 grid's BFS at 256MB: 2.5M page reads with the
	 * smallest cache, 25K with an eighth), and Dijkstra's band through it
	 * reads its pages again and again as it sweeps, so that the cache
	 * catches more than the first arcs in memory would save (its shortest
	 * paths at 256MB: 0.71M page reads with all of it, 2.12M with half;
	 * its BFS at 192MB, which reads a level's lists in file order: 2.56M
	 * and 1.82M), while a random graph's reads miss whatever the cache
	 * holds, as many as the arcs in memory would save (1M nodes / 5M edges
	 * at 64MB: 133K and 128K).
	 */
	reserve = search;
	if (search < env->pool && (env->pool - search) / rec < p->narcs)
		reserve += (env->pool - search) /
			((env->pool - search) / rec >= p->narcs / 2 ? CACHE_PART :
			 p->op == XXL_PATHS_SSSP ? 1 : 2);
	p->mem_arcs = reserve < env->pool ? (env->pool - reserve) / rec : 0;
	if (p->mem_arcs > p->narcs)
		p->mem_arcs = p->narcs;
	mem_bytes = rec * p->mem_arcs;
	/* beside every chunk: the ids, the offsets, the cursors, the page being written */
	held = pvec_bytes(&p->map.ids, p->n) + 4 * (p->n + 1) + 4 * p->n + page_bytes(p) + SEMI_FIXED;
	full = env->pool > held ? (env->pool - held) / rec : 0;
	last = env->pool > held + mem_bytes ? (env->pool - held - mem_bytes) / rec : 0;
	if (full < min_arcs)
		full = min_arcs;
	if (last < min_arcs)
		last = min_arcs;
	if (last > p->narcs - p->mem_arcs)
		last = p->narcs - p->mem_arcs;

	if ((pp.cur = xxl_env_alloc(env, 4 * (p->n ? p->n : 1))) == NULL ||
		xxl_pagefile_open(&p->adj, env, page_bytes(p), rec) != XXL_OK)
		rc = env->err.code;
	/* the first chunks, the memory part's room theirs */
	if (rc == XXL_OK && p->mem_arcs + last < p->narcs)
	{
		if ((pp.chunk = xxl_env_alloc(env, full * rec)) == NULL)
			rc = env->err.code;
		for (uint64_t from = p->mem_arcs; rc == XXL_OK && from < p->narcs - last; from += full)
			rc = place_pass_run(p, &pp, from, from + full < p->narcs - last ?
								from + full : p->narcs - last, false);
		if (pp.chunk)
			xxl_env_free(env, pp.chunk, full * rec);
		pp.chunk = NULL;
	}
	/* the last chunk and the memory part */
	if (rc == XXL_OK &&
		(alloc_arcs(p) != XXL_OK ||
		 (last > 0 && (pp.chunk = xxl_env_alloc(env, last * rec)) == NULL)))
		rc = env->err.code;
	if (rc == XXL_OK)
		rc = place_pass_run(p, &pp, p->narcs - last, p->narcs, true);
	if (pp.cur)
		xxl_env_free(env, pp.cur, 4 * (p->n ? p->n : 1));
	if (pp.chunk)
		xxl_env_free(env, pp.chunk, last * rec);
	if (rc != XXL_OK)
		return rc;
	/* the cache: what the search leaves */
	held = search - min_cache_bytes(p) + mem_bytes;
	return xxl_pagefile_finish(&p->adj, env->pool > held + min_cache_bytes(p) ?
							   env->pool - held : min_cache_bytes(p));
}

/* Search ---------------------------------------------------------------------------- */

/* Arc a: in memory, or read through the page cache. */
static inline xxl_status
arc_at(xxl_paths *p, uint64_t a, uint32_t *to, double *w)
{
	const unsigned char *r;

	if (a < p->mem_arcs)
	{
		*to = p->sto[a];
		*w = p->swc ? p->costs.cost[p->swc[a]] : p->warc ? p->warc[a] : 1;
		return XXL_OK;
	}
	if (xxl_pagefile_get(&p->adj, a - p->mem_arcs, &r) != XXL_OK)
	{
		*to = 0;
		*w = 0;
		return p->env.err.code;
	}
	memcpy(to, r, 4);
	if (p->op != XXL_PATHS_SSSP)
		*w = 1;
	else if (p->costs.wide)
		memcpy(w, r + 4, sizeof(*w));
	else
		*w = p->costs.cost[r[4]];
	return XXL_OK;
}

/*
 * A node's arcs are taken a batch at a time, their heads' entries
 * prefetched before any is looked at: the misses overlap, as the
 * in-memory searches' prefetches make them.
 */
#define ARC_BATCH 32

typedef struct arc_batch
{
	uint32_t	to[ARC_BATCH];
	double		w[ARC_BATCH];
} arc_batch;

/* Arcs [a, min(a + ARC_BATCH, end)) into b; how many, or -1 on an error. */
static inline int
gather(xxl_paths *p, uint64_t a, uint64_t end, arc_batch *b)
{
	int			k = end - a < ARC_BATCH ? (int) (end - a) : ARC_BATCH;

	for (int i = 0; i < k; i++)
	{
		if (arc_at(p, a + i, &b->to[i], &b->w[i]) != XXL_OK)
			return -1;
		__builtin_prefetch(&p->node[b->to[i]]);
	}
	return k;
}

/*
 * The in-memory Dijkstra's pipeline of guesses (paths_memory.c): the
 * likely next node's arcs, if in memory (its offset was fetched a node ago
 * as the guess for the node after next), and the offset of the likely node
 * after next, the smallest of the root's children.
 */
static inline void
prefetch_next(const xxl_paths *p, uint32_t size)
{
	uint32_t	next = p->hent[0].node;
	uint64_t	a = p->off[next];

	if (a < p->mem_arcs)
	{
		__builtin_prefetch(&p->sto[a]);
		__builtin_prefetch(p->swc ? (const void *) &p->swc[a] : (const void *) &p->warc[a]);
	}
	if (size > 1)
		__builtin_prefetch(&p->off[heap_second(p, size)]);
}

/* What a search does with arc u -> v (cost w) of a node it settles. */
typedef void (*relax_fn) (xxl_paths *p, uint32_t u, uint32_t v, double w, void *arg);

/* Each arc of u, to relax (a constant at every call: inlined). */
static inline xxl_status
scan_arcs(xxl_paths *p, uint32_t u, relax_fn relax, void *arg)
{
	for (uint64_t a = p->off[u], end = p->off[u + 1]; a < end;)
	{
		arc_batch	b;
		int			k = gather(p, a, end, &b);

		if (k < 0)
			return p->env.err.code;
		a += k;
		for (int i = 0; i < k; i++)
			relax(p, u, b.to[i], b.w[i], arg);
	}
	return XXL_OK;
}

/* Dijkstra's relaxation; arg: the heap's size. */
static inline void
relax_dijkstra(xxl_paths *p, uint32_t u, uint32_t v, double w, void *arg)
{
	uint32_t   *size = arg;
	double		nd = p->node[u].d + w;

	if (p->node[v].pos == P_SETTLED)
		return;
	p->relaxed++;
	if (p->node[v].pos == P_UNSEEN)
	{
		reach(p, v, nd, u, LINK_PENDING);
		heap_up(p, (*size)++, (pheap_entry) {nd, v});
		p->pushes++;
	}
	else if (nd < p->node[v].d)
	{
		reach(p, v, nd, u, LINK_PENDING);
		heap_up(p, p->node[v].pos, (pheap_entry) {nd, v});
	}
}

/* BFS's: an unseen head is the next level's. */
static inline void
relax_bfs(xxl_paths *p, uint32_t u, uint32_t v, double w, void *arg)
{
	(void) w;
	(void) arg;
	p->relaxed++;
	if (p->node[v].pos != P_UNSEEN)
		return;
	reach(p, v, p->node[u].d + 1, u, LINK_PENDING);
	p->node[v].pos = P_SETTLED;
	p->order[p->reached++] = v;
	p->pushes++;
}

/* The in-memory path's Dijkstra over arc_at (paths_memory.c has why the heap). */
static xxl_status
semi_dijkstra(xxl_paths *p)
{
	uint32_t	size = 0;

	for (size_t i = 0; i < p->search_nsrc; i++)
	{
		uint32_t	s = p->search_src[i];

		reach(p, s, 0, s, P_UNSEEN);
		heap_up(p, size++, (pheap_entry) {0.0, s});
		p->pushes++;
	}
	while (size > 0)
	{
		uint32_t	u = p->hent[0].node;
		double		du = p->node[u].d;

		if (!(du <= p->max_distance))
			break;
		if (--size > 0)
		{
			heap_down(p, 0, p->hent[size], size);
			prefetch_next(p, size);
		}
		p->node[u].pos = P_SETTLED;
		p->order[p->reached++] = u;
		if (p->has_target && u == p->target_dense)
		{
			p->target_found = true;
			break;
		}
		if (scan_arcs(p, u, relax_dijkstra, &size) != XXL_OK)
			return p->env.err.code;
		if (xxl_env_poll(&p->env))
			return p->env.err.code;
	}
	return XXL_OK;
}

/*
 * Sort the k node ids of x into increasing order with the engine's radix
 * sort (radix.h), tmp (k entries) its scratch: as big-endian keys there,
 * native again after.
 */
static void
sort_level(uint32_t *x, size_t k, uint32_t *tmp)
{
	if (k < 2)
		return;
	for (size_t i = 0; i < k; i++)
		x[i] = __builtin_bswap32(x[i]);
	xxl_radix_sort_fixed((char *) x, (char *) tmp, k, sizeof(uint32_t), sizeof(uint32_t), 1,
						 false);
	for (size_t i = 0; i < k; i++)
		x[i] = __builtin_bswap32(x[i]);
}

/*
 * The in-memory path's BFS over arc_at, but with paged arcs each level is
 * expanded in node order: the paged lists are then read in file order,
 * each page once per level, not once per node (on 1M nodes / 5M edges
 * with most arcs paged, 0.9M page reads became 60K).  The depths are the
 * in-memory path's; a node's predecessor may be another of the same depth.
 */
static xxl_status
semi_bfs(xxl_paths *p)
{
	uint64_t	head = 0,
				depth_end = 0;

	for (size_t i = 0; i < p->search_nsrc; i++)
	{
		uint32_t	s = p->search_src[i];

		reach(p, s, 0, s, P_UNSEEN);
		p->node[s].pos = P_SETTLED;
		p->order[p->reached++] = s;
	}
	while (head < p->reached)
	{
		uint32_t	u = p->order[head];

		if (head == depth_end)
		{
			p->levels++;
			xxl_env_step(&p->env, "level", (uint32_t) p->levels, 0);
			depth_end = p->reached;
			if (p->mem_arcs < p->narcs)
			{
				sort_level(p->order + head, depth_end - head, p->level_tmp);
				u = p->order[head];
			}
		}
		head++;
		if (p->node[u].d >= (double) p->max_depth)
			continue;
		if (scan_arcs(p, u, relax_bfs, NULL) != XXL_OK)
			return p->env.err.code;
		if (xxl_env_poll(&p->env))
			return p->env.err.code;
	}
	return XXL_OK;
}

/*
 * Whether link l (u -> v) is the one v was reached by, its link not found
 * yet: from v's predecessor and, for shortest paths, giving v's distance
 * (the same sum of the same doubles as the relaxation's).  If so, its id
 * (and cost).
 */
static inline void
note_arc(xxl_paths *p, uint32_t u, uint32_t v, const plink_semi *l)
{
	if (p->plinkv[v] != LINK_PENDING || p->node[v].pred != u ||
		(p->op == XXL_PATHS_SSSP && p->node[u].d + l->w != p->node[v].d))
		return;
	p->plinkv[v] = LINK_FOUND;
	p->eidn[v] = l->eid;
	if (p->wn)
		p->wn[v] = l->w;
}

/* The edge id (and cost) of the links the reached nodes were reached by. */
static xxl_status
note_tree_link(xxl_paths *p, const plink_semi *l, void *arg)
{
	(void) arg;
	note_arc(p, l->u, l->v, l);
	if (!p->directed)
		note_arc(p, l->v, l->u, l);
	return XXL_OK;
}

/* What only the search needs: the offsets, the heap, BFS's level scratch. */
static void
free_search(xxl_paths *p)
{
	size_t		n = p->n ? p->n : 1;

	if (p->off)
		xxl_env_free(&p->env, p->off, 4 * (p->n + 1));
	p->off = NULL;
	if (p->hent)
		xxl_env_free(&p->env, p->hent, sizeof(pheap_entry) * n);
	p->hent = NULL;
	if (p->level_tmp)
		xxl_env_free(&p->env, p->level_tmp, 4 * n);
	p->level_tmp = NULL;
}

xxl_status
paths_semi_run(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	size_t		n = p->n ? p->n : 1;
	uint64_t	t0 = xxl_now_ns();
	xxl_status	rc;

	p->path = XXL_PATHS_SEMI_EXTERNAL;
	if (paths_take_sources(p) != XXL_OK || build_adjacency(p) != XXL_OK ||
		paths_alloc_nodes(p, p->op == XXL_PATHS_SSSP) != XXL_OK)
		return env->err.code;
	p->build_ns = xxl_now_ns() - t0;
	t0 = xxl_now_ns();
	if (p->op == XXL_PATHS_BFS && (p->level_tmp = xxl_env_alloc(env, 4 * n)) == NULL)
		return env->err.code;
	rc = p->op == XXL_PATHS_SSSP ? semi_dijkstra(p) : semi_bfs(p);
	if (rc != XXL_OK)
		return rc;
	/* the adjacency, the offsets and the heap or scratch are done with: their room takes the edge ids */
	p->cache_hits += p->adj.hits;
	p->cache_misses += p->adj.misses;
	xxl_pagefile_close(&p->adj);
	free_arcs(p);
	free_search(p);
	if ((p->eidn = xxl_env_alloc(env, sizeof(int64_t) * n)) == NULL ||
		(p->has_target && (p->wn = xxl_env_alloc(env, sizeof(double) * n)) == NULL) ||
		(p->has_target && (p->semi_steps = xxl_env_alloc(env, 4 * n)) == NULL) ||
		each_link(p, p->nlinks, false, note_tree_link, NULL) != XXL_OK)
		return env->err.code;
	if (p->has_target)
		paths_collect_path(p, p->semi_steps);
	p->search_ns = xxl_now_ns() - t0;
	return XXL_OK;
}

void
paths_semi_release(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	size_t		n = p->n ? p->n : 1;

	if (p->path == XXL_PATHS_SEMI_EXTERNAL)
	{
		free_arcs(p);
		free_search(p);
		xxl_pagefile_close(&p->adj);
	}
	if (p->eidn)
		xxl_env_free(env, p->eidn, sizeof(int64_t) * n);
	p->eidn = NULL;
	if (p->wn)
		xxl_env_free(env, p->wn, sizeof(double) * n);
	p->wn = NULL;
	if (p->semi_steps)
		xxl_env_free(env, p->semi_steps, 4 * n);
	p->semi_steps = NULL;
	p->steps = NULL;
	xxl_spool_free(&p->semispool);
	pvec_free(env, &p->semi_deg);
}
