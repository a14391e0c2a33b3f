/*
 * graph_forest_split.c — the spanning forest by id in parts, for ids that
 * a union-find entry each (4 bytes) would take more than the pool for.
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
 * The edges that join over all levels are a spanning forest of the input
 * (each level's are one of the graph whose low sets are contracted), but
 * not the greedy one in input order of the other semi-external paths: an
 * edge between low ids is taken before earlier edges that reach above.
 *
 * A level that leaves more than half its low part to the next (its low
 * ids hardly meet each other) gives up: the sorters take the spooled
 * edges, which are kept for this until the levels are done.
 */
#include "core/graph/graph_internal.h"

#include <string.h>

/* A touched low root's next-level index (the level's array holds it). */
#define FLAG (UINT32_C(1) << 31)
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

/* Ids up to this many pools' worth of union-find go by levels. */
#define PARTS_ROOMS 8

bool
graph_parts_takes(const xxl_graph *g, int64_t id)
{
	uint64_t	cap = PARTS_ROOMS * (uint64_t) (g->env.pool / sizeof(uint32_t));

	return id >= 0 && (uint64_t) id < (cap < FLAG ? cap : FLAG);
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
	size_t		touch_bytes;
	uint64_t	rest;			/* edges left to the next level */
} level;

static void
level_free(xxl_graph *g, level *lv)
{
	if (lv->p)
		xxl_env_free(&g->env, lv->p, lv->p_bytes);
	if (lv->touch)
		xxl_env_free(&g->env, lv->touch, lv->touch_bytes);
	lv->p = NULL;
	lv->touch = NULL;
}

static xxl_status
level_alloc(xxl_graph *g, level *lv, bool last)
{
	lv->p_bytes = (size_t) (lv->base ? lv->base : 1) * sizeof(uint32_t);
	if ((lv->p = xxl_env_alloc(&g->env, lv->p_bytes)) == NULL)
		return g->env.err.code;
	memset(lv->p, 0xff, lv->p_bytes);	/* IDMAP_NONE: not seen */
	if (last)
		return XXL_OK;
	lv->touch_bytes = (size_t) ((lv->base + 63) / 64 + 1) * sizeof(uint64_t);
	if ((lv->touch = xxl_env_alloc(&g->env, lv->touch_bytes)) == NULL)
		return g->env.err.code;
	memset(lv->touch, 0, lv->touch_bytes);
	return XXL_OK;
}

static inline void
see(uint32_t *p, uint32_t x)
{
	if (p[x] == IDMAP_NONE)
		p[x] = x;
}

/*
 * One edge of the level: joined in its low part (a forest edge if it joins
 * two sets), or to the rest with its low end touched.
 */
static inline xxl_status
level_edge(level *lv, const part_edge *e, rec_writer *forest, rec_writer *rest, uint64_t *joined)
{
	if (e->a < lv->base && e->b < lv->base)
	{
		see(lv->p, e->a);
		see(lv->p, e->b);
		if (!uf32_union(lv->p, e->a, e->b))
			return XXL_OK;
		(*joined)++;
		{
			forest_edge f = {e->source, e->target, e->id, e->cost};

			return rw_put(forest, &f, sizeof(f));
		}
	}
	for (int k = 0; k < 2; k++)
	{
		uint32_t	x = k ? e->b : e->a;

		if (x < lv->base)
		{
			see(lv->p, x);
			lv->touch[x >> 6] |= UINT64_C(1) << (x & 63);
		}
	}
	lv->rest++;
	return rw_put(rest, e, sizeof(*e));
}

/*
 * Read a level's edges (the first level's in graph_mapped.c's records,
 * kept; the others' consumed), joining and passing them on.
 */
static xxl_status
level_pass(xxl_graph *g, level *lv, xxl_spool *edges, bool first, uint64_t m,
		   rec_writer *forest, rec_writer *rest)
{
	xxl_spool_reader rd;
	const unsigned char *r;
	uint64_t	joined = 0;

	if (xxl_spool_reader_open(&rd, edges, !first) != XXL_OK)
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
		if (level_edge(lv, &e, forest, rest, &joined) != XXL_OK ||
			((i & 4095) == 4095 && poll_canceled(g)))
			break;
	}
	xxl_spool_reader_close(&rd);
	g->parts_m += joined;
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
			uint32_t	r = p[w * 64 + (uint32_t) __builtin_ctzll(bits)] & ~FLAG;

			p[r] |= FLAG;
		}
	for (uint32_t x = 0; x < lv->base; x++)
		if (p[x] != IDMAP_NONE && (p[x] & FLAG) && (p[x] & ~FLAG) == x)
			p[x] = roots++ | FLAG;
	return roots;
}

/* Where the next level has index x of this one (an end of its rest). */
static inline uint32_t
next_index(const level *lv, uint32_t roots, uint32_t x)
{
	uint32_t	v;

	if (x >= lv->base)
		return roots + (x - lv->base);
	v = lv->p[x];
	/* a touched root holds its next index; any other low end, its root */
	return (v & FLAG ? v : lv->p[v]) & ~FLAG;
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
		e.a = next_index(lv, roots, e.a);
		e.b = next_index(lv, roots, e.b);
		if (rw_put(w, &e, sizeof(e)) != XXL_OK || ((i & 4095) == 4095 && poll_canceled(g)))
			break;
	}
	xxl_spool_reader_close(&rd);
	if (g->env.err.code == XXL_OK && rw_flush(w) == XXL_OK)
		xxl_spool_finish(next);
	return g->env.err.code;
}

/*
 * The levels over the spooled edges (g->dense, kept): the forest into
 * g->parts_forest.  XXL_ENOMEM with no error set when they give up.
 */
static xxl_status
run_levels(xxl_graph *g)
{
	xxl_env    *env = &g->env;
	size_t		avail = env->pool > PARTS_FIXED + 2 * sizeof(rec_writer) ?
		env->pool - PARTS_FIXED - 2 * sizeof(rec_writer) : 0;
	rec_writer *w = xxl_env_alloc(env, 2 * sizeof(rec_writer));
	xxl_spool	store[2];
	xxl_spool  *cur = &g->dense;
	uint64_t	m = g->mapped_m;
	uint64_t	space = g->parts_high;
	uint32_t	carried = 0;
	xxl_status	rc = XXL_OK;

	if (w == NULL)
		return env->err.code;
	memset(store, 0, sizeof(store));
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
		base = last ? space : (uint64_t) avail * 8 / 33;
		if (base > space)
			base = space;
		lv.base = (uint32_t) (base < FLAG ? base : FLAG - 1);
		if (lv.base == 0 || k == SPLIT_MAX_LEVELS)
		{
			rc = XXL_ENOMEM;
			break;
		}
		g->parts_levels = k + 1;
		xxl_spool_init(rest, env, XXL_SPOOL_SHARED);
		w[1].sp = rest;
		w[1].n = 0;
		if (level_alloc(g, &lv, last) != XXL_OK ||
			level_pass(g, &lv, cur, k == 0, m, &w[0], &w[1]) != XXL_OK ||
			rw_flush(&w[1]) != XXL_OK)
		{
			level_free(g, &lv);
			break;
		}
		if (k > 0)
			xxl_spool_free(cur);
		roots = level_settle(g, &lv);
		if (last)
		{
			level_free(g, &lv);
			break;
		}
		/* a level must settle at least half its low part */
		if (roots > lv.base / 2)
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
	if (rc == XXL_OK && env->err.code == XXL_OK && rw_flush(&w[0]) == XXL_OK)
		xxl_spool_finish(&g->parts_forest);
	for (int i = 0; i < 2; i++)
		xxl_spool_free(&store[i]);
	xxl_env_free(env, w, 2 * sizeof(rec_writer));
	return env->err.code != XXL_OK ? env->err.code : rc;
}

xxl_status
graph_parts_run(xxl_graph *g)
{
	xxl_env    *env = &g->env;
	xxl_status	rc;

	g->path = XXL_GRAPH_SEMI_EXTERNAL;
	if (xxl_spool_finish(&g->dense) != XXL_OK)
		return env->err.code;
	rc = run_levels(g);
	if (rc == XXL_OK)
	{
		xxl_spool_free(&g->dense);
		g->out = OUT_SF_PARTS;
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
