/*
 * graph_forest_split.c — the forests by id in parts, for ids that a
 * union-find entry each (4 bytes) would take more than the pool for.
 *
 * The mapped path (graph_mapped.c) spools the edges with ids as their own
 * indexes; when an id comes that its union-find could not hold, and every
 * id is a non-negative integer below a few pools' worth of entries, it goes
 * on spooling them as they are and the forest is found here by levels, as
 * components are in graph_split.c.  A level holds a union-find over its
 * first indexes (its low part) and reads its edges once: an edge between
 * two low indexes joins there, and if it joins two sets it is a forest
 * edge; an edge with an end above goes to the level's rest.  At the end of
 * the pass every low set is connected by forest edges already, so it may
 * stand as one index in the next level: the low roots that the rest
 * touches (in index order), then the indexes above the low part.  The rest,
 * rewritten onto those indexes, is the next level's edges.  The last level
 * takes all its indexes in one union-find.  Each edge carries its original
 * ends, id and cost, so a forest edge goes out as it came in.
 *
 * The spanning forest reads the edges in input order.  The edges that join
 * over all levels are a spanning forest of the input (each level's are one
 * of the graph whose low sets are contracted), but not the greedy one in
 * input order of the other semi-external paths: an edge between low ids is
 * taken before earlier edges that reach above.
 *
 * The minimum spanning forest reads them in its strict order (sorted
 * first) and joins two sets only by an edge the cut property proves
 * (level_edge); the rest and the deferred edges stay in that order for the
 * next level, and each level's forest edges are merged into the ones
 * before, so the rows and their order are the other paths'.
 *
 * A level that leaves too much of its low part to the next (its low ids
 * hardly meet each other, or, for the minimum forest, are blocked by
 * lighter edges that reach above), or whose pace would not end the levels
 * in time, gives up: the sorters take the spooled edges, which are kept
 * for this until the levels are done.
 */
#include "core/graph/graph_internal.h"

#include <string.h>

/* Room left beside a level's array and touch bitmap (buffers and spools' bookkeeping). */
#define PARTS_FIXED (64 * 1024)

/* An edge as the level after the first keeps it: the level's indexes, then the edge as it came. */
typedef struct part_edge
{
	uint32_t	a,
				b;
	uint32_t	source,
				target;
	int64_t		id;
	double		cost;
} part_edge;

/* A forest edge, and a first-level edge (graph_mapped.c's record, ids as indexes). */
typedef struct forest_edge
{
	uint32_t	source,
				target;
	int64_t		id;
	double		cost;
} forest_edge;

/* Records buffered for a spool, written a block at a time. */
#define REC_BLOCK (16 * 1024)
typedef struct rec_writer
{
	xxl_spool  *sp;
	size_t		n;
	unsigned char buf[REC_BLOCK];
} rec_writer;

static xxl_status
rw_flush(rec_writer *w)
{
	size_t		n = w->n;

	w->n = 0;
	return n ? xxl_spool_write(w->sp, w->buf, n) : XXL_OK;
}

static inline xxl_status
rw_put(rec_writer *w, const void *rec, size_t len)
{
	if (w->n + len > REC_BLOCK && rw_flush(w) != XXL_OK)
		return XXL_EIO;
	memcpy(w->buf + w->n, rec, len);
	w->n += len;
	return XXL_OK;
}

/*
 * Ids up to this many pools' worth of union-find go by levels (the
 * forests' other way is the sorters: their ids did not fit numbered).
 */
#define PARTS_ROOMS 32

bool
graph_parts_takes(const xxl_graph *g, int64_t id)
{
	uint64_t	cap = PARTS_ROOMS * (uint64_t) (g->env.pool / sizeof(uint32_t));

	return id >= 0 && (uint64_t) id < (cap < SPLIT_FLAG ? cap : SPLIT_FLAG);
}

/* The level's state while its edges are read. */
typedef struct level
{
	uint64_t	space;			/* indexes [0, space) */
	uint32_t	base;			/* the low part [0, base) */
	uint32_t	carried;		/* the first indexes: the previous level's roots */
	uint32_t   *p;				/* union-find over the low part */
	size_t		p_bytes;
	uint64_t   *touch;			/* a bit per low index that the rest reaches */
	uint64_t   *blocked;		/* minimum: a bit per low root that an edge leaves, unresolved */
	size_t		bits_bytes;
	uint64_t	rest;			/* edges left to the next level */
	uint64_t	joined;			/* forest edges found */
} level;

static void
level_free(xxl_graph *g, level *lv)
{
	if (lv->p)
		xxl_env_free(&g->env, lv->p, lv->p_bytes);
	if (lv->touch)
		xxl_env_free(&g->env, lv->touch, lv->bits_bytes);
	lv->p = NULL;
	lv->touch = lv->blocked = NULL;
}

/* The level's arrays: the touch bits and, for the minimum forest, the blocked ones, unless last. */
static xxl_status
level_alloc(xxl_graph *g, level *lv, bool last, bool minimum)
{
	size_t		words = (size_t) (lv->base + 63) / 64 + 1;

	lv->p_bytes = (size_t) (lv->base ? lv->base : 1) * sizeof(uint32_t);
	if ((lv->p = xxl_env_alloc(&g->env, lv->p_bytes)) == NULL)
		return g->env.err.code;
	memset(lv->p, 0xff, lv->p_bytes);	/* IDMAP_NONE: not seen */
	if (last)
		return XXL_OK;
	lv->bits_bytes = words * sizeof(uint64_t) * (minimum ? 2 : 1);
	if ((lv->touch = xxl_env_alloc(&g->env, lv->bits_bytes)) == NULL)
		return g->env.err.code;
	memset(lv->touch, 0, lv->bits_bytes);
	lv->blocked = minimum ? lv->touch + words : NULL;
	return XXL_OK;
}

static inline void
see(uint32_t *p, uint32_t x)
{
	if (p[x] == IDMAP_NONE)
		p[x] = x;
}

/*
 * One edge of the level.  Between two low indexes of different sets it
 * joins them, a forest edge, unless (minimum forest) both sets are
 * blocked.  Otherwise it goes to the rest, its low ends touched, and
 * their sets blocked.
 *
 * Why blocked: the minimum forest reads its edges in its strict order, so
 * every edge seen leaving a set so far is lighter than this one.  A set
 * that no such edge leaves unjoined (none went to the rest) has this edge
 * as the lightest that leaves it in the whole graph: by the cut property,
 * a forest edge.  A set that one leaves stays blocked for the level, and
 * so does any set it joins; two blocked sets never join within a level, so
 * a deferred edge never closes a cycle there.  An edge within a set closes
 * a cycle of lighter forest edges: not a forest edge (the cycle property).
 */
static inline xxl_status
level_edge(level *lv, const part_edge *e, rec_writer *forest, rec_writer *rest)
{
	uint32_t   *p = lv->p;

	if (e->a < lv->base && e->b < lv->base)
	{
		uint32_t	ra,
					rb;

		see(p, e->a);
		see(p, e->b);
		ra = uf32_find(p, e->a);
		rb = uf32_find(p, e->b);
		if (ra == rb)
			return XXL_OK;
		if (lv->blocked == NULL || !bit_get(lv->blocked, ra) || !bit_get(lv->blocked, rb))
		{
			uint32_t	lo = ra < rb ? ra : rb,
						hi = ra ^ rb ^ lo;
			forest_edge f = {e->source, e->target, e->id, e->cost};

			p[hi] = lo;
			if (lv->blocked && bit_get(lv->blocked, hi))
				bit_set(lv->blocked, lo);
			lv->joined++;
			return rw_put(forest, &f, sizeof(f));
		}
	}
	for (int k = 0; k < 2; k++)
	{
		uint32_t	x = k ? e->b : e->a;

		if (x < lv->base)
		{
			see(p, x);
			bit_set(lv->touch, x);
			if (lv->blocked)
				bit_set(lv->blocked, uf32_find(p, x));
		}
	}
	lv->rest++;
	return rw_put(rest, e, sizeof(*e));
}

/*
 * Read a level's m edges (the first level's as forest_edge records, ids as
 * indexes), joining and passing them on; the edges are consumed unless
 * kept.
 */
static xxl_status
level_pass(xxl_graph *g, level *lv, xxl_spool *edges, bool first, bool keep, uint64_t m,
		   rec_writer *forest, rec_writer *rest)
{
	xxl_spool_reader rd;
	const unsigned char *r;

	if (xxl_spool_finish(edges) != XXL_OK || xxl_spool_reader_open(&rd, edges, !keep) != XXL_OK)
		return g->env.err.code;
	for (uint64_t i = 0; i < m; i++)
	{
		part_edge	e;

		if (first)
		{
			forest_edge f;

			if (xxl_spool_read(&rd, sizeof(f), &r) != XXL_OK)
				break;
			memcpy(&f, r, sizeof(f));
			e.a = e.source = f.source;
			e.b = e.target = f.target;
			e.id = f.id;
			e.cost = f.cost;
		}
		else
		{
			if (xxl_spool_read(&rd, sizeof(e), &r) != XXL_OK)
				break;
			memcpy(&e, r, sizeof(e));
		}
		if (level_edge(lv, &e, forest, rest) != XXL_OK ||
			((i & 4095) == 4095 && poll_canceled(g)))
			break;
	}
	xxl_spool_reader_close(&rd);
	return g->env.err.code;
}

/*
 * After the pass: every low index at its root, the nodes first seen here
 * counted, and each root the rest touches given its next-level index
 * (flagged); how many such roots.
 */
static uint32_t
level_settle(xxl_graph *g, level *lv)
{
	uint32_t   *p = lv->p;
	uint32_t	roots = 0;

	/* parents are smaller: one ascending pass */
	for (uint32_t x = 0; x < lv->base; x++)
		if (p[x] != IDMAP_NONE)
		{
			p[x] = p[p[x]];
			g->n += x >= lv->carried;
		}
	if (lv->touch == NULL)
		return 0;
	/* flag the touched roots, then number them in index order */
	for (uint32_t w = 0; w < (lv->base + 63) / 64; w++)
		for (uint64_t bits = lv->touch[w]; bits; bits &= bits - 1)
		{
			uint32_t	r = p[w * 64 + (uint32_t) __builtin_ctzll(bits)] & ~SPLIT_FLAG;

			p[r] |= SPLIT_FLAG;
		}
	for (uint32_t x = 0; x < lv->base; x++)
		if (p[x] != IDMAP_NONE && (p[x] & SPLIT_FLAG) && (p[x] & ~SPLIT_FLAG) == x)
			p[x] = roots++ | SPLIT_FLAG;
	return roots;
}

/* The rest rewritten onto the next level's indexes (consumed). */
static xxl_status
level_rewrite(xxl_graph *g, const level *lv, uint32_t roots, xxl_spool *rest, xxl_spool *next,
			  rec_writer *w)
{
	xxl_spool_reader rd;
	const unsigned char *r;

	w->sp = next;
	w->n = 0;
	if (xxl_spool_finish(rest) != XXL_OK || xxl_spool_reader_open(&rd, rest, true) != XXL_OK)
		return g->env.err.code;
	for (uint64_t i = 0; i < lv->rest; i++)
	{
		part_edge	e;

		if (xxl_spool_read(&rd, sizeof(e), &r) != XXL_OK)
			break;
		memcpy(&e, r, sizeof(e));
		e.a = split_next_index(lv->p, lv->base, roots, e.a);
		e.b = split_next_index(lv->p, lv->base, roots, e.b);
		if (rw_put(w, &e, sizeof(e)) != XXL_OK || ((i & 4095) == 4095 && poll_canceled(g)))
			break;
	}
	xxl_spool_reader_close(&rd);
	if (g->env.err.code == XXL_OK && rw_flush(w) == XXL_OK)
		xxl_spool_finish(next);
	return g->env.err.code;
}

/* Whether forest edge a comes before b in the minimum forest's order: (cost, id). */
static inline bool
forest_before(const forest_edge *a, const forest_edge *b)
{
	uint64_t	ca = g_cost_key(a->cost),
				cb = g_cost_key(b->cost);

	return ca != cb ? ca < cb : g_id_key(a->id) < g_id_key(b->id);
}

/*
 * The minimum forest's edges so far (na of them) and a level's (nb), each
 * in the strict order, merged into parts_forest; both consumed.
 */
static xxl_status
merge_forests(xxl_graph *g, xxl_spool *a, uint64_t na, xxl_spool *b, uint64_t nb, rec_writer *w)
{
	xxl_spool_reader ra,
				rb;
	forest_edge fa,
				fb;
	const unsigned char *r;
	bool		ra_open = false,
				rb_open = false;

	xxl_spool_init(&g->parts_forest, &g->env, XXL_SPOOL_SHARED);
	w->sp = &g->parts_forest;
	w->n = 0;
	if (xxl_spool_reader_open(&ra, a, true) != XXL_OK)
		goto done;
	ra_open = true;
	if (xxl_spool_reader_open(&rb, b, true) != XXL_OK)
		goto done;
	rb_open = true;
	if (na > 0 && xxl_spool_read(&ra, sizeof(fa), &r) == XXL_OK)
		memcpy(&fa, r, sizeof(fa));
	if (nb > 0 && xxl_spool_read(&rb, sizeof(fb), &r) == XXL_OK)
		memcpy(&fb, r, sizeof(fb));
	while ((na > 0 || nb > 0) && g->env.err.code == XXL_OK)
	{
		bool		take_a = nb == 0 || (na > 0 && forest_before(&fa, &fb));

		if (rw_put(w, take_a ? &fa : &fb, sizeof(fa)) != XXL_OK)
			break;
		if (take_a)
		{
			if (--na > 0 && xxl_spool_read(&ra, sizeof(fa), &r) == XXL_OK)
				memcpy(&fa, r, sizeof(fa));
		}
		else if (--nb > 0 && xxl_spool_read(&rb, sizeof(fb), &r) == XXL_OK)
			memcpy(&fb, r, sizeof(fb));
		if (((na + nb) & 4095) == 0 && poll_canceled(g))
			break;
	}
done:
	if (ra_open)
		xxl_spool_reader_close(&ra);
	if (rb_open)
		xxl_spool_reader_close(&rb);
	if (g->env.err.code == XXL_OK && rw_flush(w) == XXL_OK)
		xxl_spool_finish(&g->parts_forest);
	return g->env.err.code;
}

/*
 * Whether a level that leaves `roots` sets of its low part to the next one
 * goes on.  The spanning forest joins every edge between low indexes, so
 * a level that leaves more than half is one whose low ids hardly meet.
 * The minimum forest joins only what the cut property proves, which on a
 * random graph leaves about half (and the first level's share predicts
 * the others').  Levels that could not end within SPLIT_MAX_LEVELS at the
 * pace of this one give up now rather than after the passes.
 */
static bool
level_goes_on(const xxl_graph *g, int k, uint32_t roots, uint32_t base, uint64_t next_space,
			  size_t avail)
{
	uint64_t	next_base = (uint64_t) avail * 8 / 34;

	if (g->op == XXL_GRAPH_SF ? roots > base / 2 :
		k == 0 ? (uint64_t) roots * 10 > (uint64_t) base * 7 : (uint64_t) roots * 8 > (uint64_t) base * 7)
		return false;
	/* and the levels at this pace end in time */
	if (next_space * sizeof(uint32_t) <= avail || next_space <= next_base)
		return true;
	return k + 2 + (next_space - next_base) / (base - roots) < SPLIT_MAX_LEVELS;
}

/* What a level's arrays may take: the pool less its writers and some room. */
static size_t
levels_avail(const xxl_env *env)
{
	size_t		fixed = PARTS_FIXED + 2 * sizeof(rec_writer);

	return env->pool > fixed ? env->pool - fixed : 0;
}

/*
 * Whether the minimum forest's levels may get anywhere, from a pass over
 * the spooled edges: among those that reach the first level's low part,
 * the share between two low ids, which alone can join there.  A random
 * graph whose low part is a third of its ids or less has under a fifth,
 * and its first level stays blocked (the sort and a pass for nothing:
 * about a tenth of the node reduction's time); a graph whose ids follow
 * its structure (a grid, a network numbered along it) has most.
 */
static bool
minimum_levels_promising(xxl_graph *g)
{
	size_t		avail = levels_avail(&g->env);
	uint64_t	base = (uint64_t) avail * 8 / 34,
				inner = 0,
				touching = 0;
	xxl_spool_reader rd;
	const unsigned char *r;

	if (g->parts_high * sizeof(uint32_t) <= avail || base >= g->parts_high)
		return true;
	if (xxl_spool_reader_open(&rd, &g->dense, false) != XXL_OK)
		return false;
	for (uint64_t i = 0; i < g->mapped_m; i++)
	{
		forest_edge f;

		if (xxl_spool_read(&rd, sizeof(f), &r) != XXL_OK)
			break;
		memcpy(&f, r, sizeof(f));
		inner += f.source < base && f.target < base;
		touching += f.source < base || f.target < base;
		if ((i & 65535) == 65535 && poll_canceled(g))
			break;
	}
	xxl_spool_reader_close(&rd);
	return g->env.err.code == XXL_OK && inner * 5 >= touching;
}

/*
 * The levels over the edges (the spanning forest's in input order, the
 * minimum's in the strict order, kept or consumed): the forest into
 * g->parts_forest.  XXL_ENOMEM with no error set when they give up.
 */
static xxl_status
run_levels(xxl_graph *g, xxl_spool *edges, bool keep)
{
	xxl_env    *env = &g->env;
	bool		minimum = g->op == XXL_GRAPH_MSF;
	size_t		avail = levels_avail(env);
	rec_writer *w = xxl_env_alloc(env, 2 * sizeof(rec_writer));
	xxl_spool	store[2],
				found,
				merged;
	xxl_spool  *cur = edges;
	uint64_t	m = g->mapped_m;
	uint64_t	space = g->parts_high;
	uint32_t	carried = 0;
	xxl_status	rc = XXL_OK;

	if (w == NULL)
		return env->err.code;
	memset(store, 0, sizeof(store));
	memset(&found, 0, sizeof(found));
	memset(&merged, 0, sizeof(merged));
	/* the spanning forest's edges go out in any order: one spool for all levels */
	xxl_spool_init(&g->parts_forest, env, XXL_SPOOL_SHARED);
	w[0].sp = &g->parts_forest;
	w[0].n = 0;
	g->n = 0;
	g->parts_m = 0;
	for (int k = 0; env->err.code == XXL_OK; k++)
	{
		level		lv = {0};
		uint64_t	base;
		bool		last = space * sizeof(uint32_t) <= avail;
		uint32_t	roots;

		/* the rest in the store that the level does not read, rewritten into the other */
		xxl_spool  *rest = cur == &store[0] ? &store[1] : &store[0];

		lv.space = space;
		lv.carried = carried;
		/* a union-find entry and one or two bits per low index */
		base = last ? space : (uint64_t) avail * 8 / (minimum ? 34 : 33);
		if (base > space)
			base = space;
		lv.base = (uint32_t) (base < SPLIT_FLAG ? base : SPLIT_FLAG - 1);
		if (lv.base == 0 || k == SPLIT_MAX_LEVELS)
		{
			rc = XXL_ENOMEM;
			break;
		}
		g->parts_levels = k + 1;
		xxl_spool_init(rest, env, XXL_SPOOL_SHARED);
		/* the minimum forest's levels each find theirs in order, merged after */
		if (minimum)
			xxl_spool_init(&found, env, XXL_SPOOL_SHARED);
		if (minimum)
		{
			w[0].sp = &found;
			w[0].n = 0;
		}
		w[1].sp = rest;
		w[1].n = 0;
		if (level_alloc(g, &lv, last, minimum) != XXL_OK ||
			level_pass(g, &lv, cur, k == 0, k == 0 && keep, m, &w[0], &w[1]) != XXL_OK ||
			rw_flush(&w[1]) != XXL_OK || (minimum && rw_flush(&w[0]) != XXL_OK))
		{
			level_free(g, &lv);
			break;
		}
		if (cur != edges)
			xxl_spool_free(cur);
		if (minimum)
		{
			/* this level's forest edges into the ones before, in order */
			if (xxl_spool_finish(&found) != XXL_OK)
			{
				level_free(g, &lv);
				break;
			}
			if (k == 0)
			{
				/* (a finished spool may move) */
				xxl_spool_free(&g->parts_forest);
				g->parts_forest = found;
				memset(&found, 0, sizeof(found));
			}
			else
			{
				merged = g->parts_forest;
				memset(&g->parts_forest, 0, sizeof(g->parts_forest));
				merge_forests(g, &merged, g->parts_m, &found, lv.joined, &w[0]);
				xxl_spool_free(&merged);
				xxl_spool_free(&found);
			}
		}
		g->parts_m += lv.joined;
		roots = level_settle(g, &lv);
		if (last || env->err.code != XXL_OK)
		{
			level_free(g, &lv);
			break;
		}
		if (!level_goes_on(g, k, roots, lv.base, roots + (lv.space - lv.base), avail))
		{
			level_free(g, &lv);
			rc = XXL_ENOMEM;
			break;
		}
		cur = rest == &store[0] ? &store[1] : &store[0];
		xxl_spool_init(cur, env, XXL_SPOOL_SHARED);
		level_rewrite(g, &lv, roots, rest, cur, &w[1]);
		xxl_spool_free(rest);
		level_free(g, &lv);
		m = lv.rest;
		space = roots + (lv.space - lv.base);
		carried = roots;
	}
	if (rc == XXL_OK && env->err.code == XXL_OK && (minimum || rw_flush(&w[0]) == XXL_OK))
		xxl_spool_finish(&g->parts_forest);
	for (int i = 0; i < 2; i++)
		xxl_spool_free(&store[i]);
	xxl_spool_free(&found);
	xxl_spool_free(&merged);
	xxl_env_free(env, w, 2 * sizeof(rec_writer));
	return env->err.code != XXL_OK ? env->err.code : rc;
}

/*
 * The minimum forest's edges in its strict order (cost, id, input
 * position), ids as indexes, sorted with the whole pool from the spool
 * (kept, for a move to the sorters) into `ranked`.
 */
static xxl_status
rank_edges(xxl_graph *g, xxl_spool *ranked)
{
	xxl_env    *env = &g->env;
	rec_writer *w;
	forest_edge f;
	int			got = 0;
	uint64_t	i = 0;

	if (graph_mapped_sort(g, env->pool - PARTS_FIXED - sizeof(rec_writer), true) != XXL_OK)
		return env->err.code;
	if ((w = xxl_env_alloc(env, sizeof(rec_writer))) == NULL)
		return env->err.code;
	w->sp = ranked;
	w->n = 0;
	while ((got = graph_mapped_sorted_next(g, &f.id, &f.cost, &f.source, &f.target)) > 0)
		if (rw_put(w, &f, sizeof(f)) != XXL_OK || ((++i & 4095) == 0 && poll_canceled(g)))
			break;
	if (got == 0 && env->err.code == XXL_OK && rw_flush(w) == XXL_OK)
		xxl_spool_finish(ranked);
	xxl_env_free(env, w, sizeof(rec_writer));
	xxl_env_sort_close(env, &g->s3, NULL, NULL);
	return env->err.code != XXL_OK ? env->err.code : got < 0 ? XXL_EIO : XXL_OK;
}

xxl_status
graph_parts_run(xxl_graph *g)
{
	xxl_env    *env = &g->env;
	xxl_spool	ranked;
	xxl_status	rc;

	g->path = XXL_GRAPH_SEMI_EXTERNAL;
	if (xxl_spool_finish(&g->dense) != XXL_OK)
		return env->err.code;
	if (g->op == XXL_GRAPH_MSF)
	{
		if (!minimum_levels_promising(g))
			rc = env->err.code != XXL_OK ? env->err.code : XXL_ENOMEM;
		else
		{
			xxl_spool_init(&ranked, env, XXL_SPOOL_SHARED);
			rc = rank_edges(g, &ranked);
			if (rc == XXL_OK)
				rc = run_levels(g, &ranked, false);
			xxl_spool_free(&ranked);
		}
	}
	else
		rc = run_levels(g, &g->dense, true);
	if (rc == XXL_OK)
	{
		xxl_spool_free(&g->dense);
		g->out = OUT_FOREST_PARTS;
		g->out_pos = 0;
		return xxl_spool_reader_open(&g->rd_in, &g->parts_forest, true);
	}
	if (rc != XXL_ENOMEM || env->err.code != XXL_OK)
		return rc;
	/* the levels gave up: the spooled edges go to the sorters */
	xxl_spool_free(&g->parts_forest);
	g->parts = false;
	g->in_memory = false;
	g->n = 0;
	g->parts_m = 0;
	if (graph_open_endpoints(g) != XXL_OK)
		return env->err.code;
	return graph_mapped_to_sorter(g);
}

int
graph_parts_next_edge(xxl_graph *g, int64_t *id, int64_t *source, int64_t *target,
					  double *cost)
{
	const unsigned char *r;
	forest_edge f;

	if (g->out_pos == g->parts_m)
		return 0;
	if (xxl_spool_read(&g->rd_in, sizeof(f), &r) != XXL_OK)
		return -1;
	memcpy(&f, r, sizeof(f));
	g->out_pos++;
	*id = f.id;
	*source = (int64_t) f.source;
	*target = (int64_t) f.target;
	*cost = f.cost;
	return 1;
}

void
graph_parts_release(xxl_graph *g)
{
	xxl_spool_free(&g->parts_forest);
}
