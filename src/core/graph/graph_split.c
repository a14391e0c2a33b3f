/*
 * graph_split.c — components by id in parts, for ids whose union-find (4
 * bytes per id, graph_memory.c) outgrows the pool.
 *
 * When the direct array can grow no further, it stays as the first
 * level's low part: edges between low ids still join there, and an edge
 * with an end above it goes to a spool (8 bytes).  At the end of input
 * each low id's root stands for its whole low set, so the spooled edges
 * are rewritten onto the next level's indexes: first the low roots they
 * touch (in id order), then the ids above; those between the next level's
 * first indexes (its array's) apart from the rest, which are the next
 * level's spooled edges.  The next level joins the first in its array and
 * does the same with the rest, until a level's indexes all fit one
 * union-find.  Each level writes, per low index, its root or its
 * root's index in the next level; from the last level back to the first,
 * those become the ids' labels (a set's smallest id: every level keeps
 * its indexes in id order).  A level that joins less than half its low
 * part among itself gives up: the numbered map or the sorters take the
 * graph from the first level's links and the spooled edges, as they would
 * have when the array stopped growing.
 *
 * On a random graph each level's low part joins into a few sets, so a
 * level removes about the ids its array holds; the levels read the
 * remaining edges a few times each, sequentially, where the sorters would
 * sort them several times over.
 */
#include "core/graph/graph_internal.h"

/*
 * Ids up to this many pools' worth of union-find go by levels, and up to
 * SPLIT_ROOMS_DENSE when the row estimate says that the numbered map
 * would not fit them either (a grid's ids at 1MB, say); sparse ids go to
 * the numbered map, which serves them better while it fits.
 */
#define SPLIT_ROOMS 8
#define SPLIT_ROOMS_DENSE 32
/* What the numbered map takes per id at least (its id, table slot and union-find entry). */
#define SPLIT_NUMBERED_BYTES 16

/* Whether the second part numbers id (by its distance from the base). */
static inline bool
split_takes(int64_t id)
{
	return id >= 0 && id < (int64_t) IDMAP_MAX;
}

static inline bool
get_u32(xxl_spool_reader *rd, uint32_t *v)
{
	const unsigned char *r;

	if (xxl_spool_read(rd, sizeof(*v), &r) != XXL_OK)
		return false;
	memcpy(v, r, sizeof(*v));
	return true;
}

/*
 * 4-byte values written to a spool a block at a time (a call per pair
 * took a tenth of the levels' time).
 */
#define U32_BLOCK 2048
typedef struct u32_writer
{
	xxl_spool  *sp;
	size_t		n;
	uint32_t	buf[U32_BLOCK];
} u32_writer;

static inline void
w_init(u32_writer *w, xxl_spool *sp)
{
	w->sp = sp;
	w->n = 0;
}

static xxl_status
w_flush(u32_writer *w)
{
	size_t		n = w->n;

	w->n = 0;
	return n ? xxl_spool_write(w->sp, w->buf, n * sizeof(uint32_t)) : XXL_OK;
}

static inline xxl_status
w_put(u32_writer *w, uint32_t v)
{
	w->buf[w->n++] = v;
	return w->n == U32_BLOCK ? w_flush(w) : XXL_OK;
}

/*
 * The touch bitmap of a level of `base` low indexes (graph_internal.h):
 * it takes an eighth of a byte per index of the sixteenth of the pool that
 * each level leaves free; when even that is not there, the roots are
 * touched by a pass over the edges instead.
 */
static void
touch_alloc(xxl_graph *g, uint64_t base)
{
	size_t		bytes = (size_t) ((base + 63) / 64 + 1) * sizeof(uint64_t);

	if ((g->split_touch = xxl_env_alloc(&g->env, bytes)) == NULL)
	{
		xxl_error_clear(&g->env.err);
		return;
	}
	memset(g->split_touch, 0, bytes);
	g->split_touch_bytes = bytes;
}

static void
touch_free(xxl_graph *g)
{
	if (g->split_touch)
		xxl_env_free(&g->env, g->split_touch, g->split_touch_bytes);
	g->split_touch = NULL;
	g->split_touch_bytes = 0;
}

static inline void
touch_set(xxl_graph *g, uint32_t x)
{
	if (g->split_touch)
		g->split_touch[x >> 6] |= UINT64_C(1) << (x & 63);
}

/*
 * The direct array (the union-find by id) grown to n entries: in place
 * when old and new fit the pool together, else through a spool of its
 * entries, so that it may take the whole pool.  On failure it keeps its
 * entries (at its old size).
 */
static xxl_status
regrow(xxl_graph *g, size_t n)
{
	xxl_env    *env = &g->env;
	idmap	   *m = &g->idm;
	size_t		old = m->dcap;
	uint32_t   *d;
	xxl_spool	links;
	xxl_spool_reader rd;

	if ((old + n) * sizeof(uint32_t) + idmap_table_bytes(m) <= env->pool)
	{
		if ((d = xxl_env_realloc(env, m->direct, old * sizeof(uint32_t), n * sizeof(uint32_t))) == NULL)
			return env->err.code;
	}
	else
	{
		xxl_spool_init(&links, env, XXL_SPOOL_SHARED);
		if (xxl_spool_write(&links, m->direct, old * sizeof(uint32_t)) != XXL_OK ||
			xxl_spool_finish(&links) != XXL_OK)
		{
			xxl_spool_free(&links);
			return env->err.code;
		}
		xxl_env_free(env, m->direct, old * sizeof(uint32_t));
		m->direct = NULL;
		m->dcap = 0;
		if ((d = xxl_env_alloc(env, n * sizeof(uint32_t))) == NULL)
		{
			/* back at the old size: the entries must not be lost */
			xxl_error_clear(&env->err);
			n = old;
			d = xxl_env_alloc(env, n * sizeof(uint32_t));
		}
		if (d != NULL && xxl_spool_reader_open(&rd, &links, true) == XXL_OK)
		{
			xxl_spool_read_exact(&rd, d, old * sizeof(uint32_t));
			xxl_spool_reader_close(&rd);
		}
		xxl_spool_free(&links);
		if (d == NULL || env->err.code != XXL_OK)
			return env->err.code != XXL_OK ? env->err.code : XXL_ENOMEM;
	}
	for (size_t x = old; x < n; x++)
		d[x] = IDMAP_NONE;
	m->direct = d;
	m->dcap = n;
	if (m->dfloor < n)
		m->dfloor = n;
	return n > old ? XXL_OK : XXL_ENOMEM;
}

bool
graph_split_begin(xxl_graph *g, const xxl_graph_edge *e)
{
	idmap	   *m = &g->idm;
	size_t		room = g->env.pool / sizeof(uint32_t);
	size_t		grown;
	int64_t		top = e->source > e->target ? e->source : e->target;

	/*
	 * Only ids that a few levels of the pool's size could hold: the
	 * others are sparse, and the numbered map serves them better.
	 */
	g->split_cap = (g->expected_edges > 0 &&
					2 * g->expected_edges * SPLIT_NUMBERED_BYTES > g->env.pool ?
					SPLIT_ROOMS_DENSE : SPLIT_ROOMS) * (uint64_t) room;
	if (!split_takes(e->source) || !split_takes(e->target) || (uint64_t) top >= g->split_cap)
		return false;
	/* the low part as large as the pool lets it be */
	grown = room - room / 16;
	if (grown >= SPLIT_FLAG)
		grown = SPLIT_FLAG - 1;
	if (m->dcap < grown && regrow(g, grown) != XXL_OK)
	{
		xxl_error_clear(&g->env.err);
		return false;
	}
	/* grown to take the edge after all: on by id in one part */
	if (idmap_in_direct(m, e->source) && idmap_in_direct(m, e->target))
		return true;
	/* the flag bit must stay clear of every low id */
	if (m->dcap == 0 || m->dcap >= SPLIT_FLAG)
		return false;
	g->split = true;
	g->split_base = (uint32_t) m->dcap;
	g->split_high = g->split_base;
	xxl_spool_init(&g->split_edges, &g->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&g->split_out, &g->env, XXL_SPOOL_SHARED);
	for (int k = 0; k < SPLIT_MAX_LEVELS; k++)
		xxl_spool_init(&g->split_lv[k].labels, &g->env, XXL_SPOOL_SHARED);
	touch_alloc(g, g->split_base);
	return true;
}

/* The spooled edges still in the buffer, into the spool. */
static xxl_status
flush_split_edges(xxl_graph *g)
{
	size_t		n = g->split_nbuf;

	g->split_nbuf = 0;
	return n ? xxl_spool_write(&g->split_edges, g->split_buf, n * sizeof(uint32_t)) : XXL_OK;
}

bool
graph_split_put(xxl_graph *g, int64_t source, int64_t target)
{
	uint32_t	e[2];

	if (!split_takes(source) || !split_takes(target))
		return false;
	e[0] = (uint32_t) source;
	e[1] = (uint32_t) target;
	for (int k = 0; k < 2; k++)
		if (e[k] < g->split_base)
		{
			by_id_see(&g->idm, e[k]);
			touch_set(g, e[k]);
		}
		else if (e[k] >= g->split_high)
			g->split_high = (uint64_t) e[k] + 1;
	g->split_buf[g->split_nbuf++] = e[0];
	g->split_buf[g->split_nbuf++] = e[1];
	return g->split_nbuf < SPLIT_BUF || flush_split_edges(g) == XXL_OK;
}

xxl_status
graph_split_replay(xxl_graph *g)
{
	g->split = false;
	touch_free(g);
	if (flush_split_edges(g) != XXL_OK || xxl_spool_finish(&g->split_edges) != XXL_OK)
		return g->env.err.code;
	return graph_replay_pairs(g, &g->split_edges);
}

/* Pairs of a spool, read in order. */
typedef struct pair_reader
{
	xxl_spool_reader rd;
	uint64_t	left;
} pair_reader;

static xxl_status
pairs_open(pair_reader *pr, xxl_spool *sp, bool consume)
{
	pr->left = sp->nbytes / (2 * sizeof(uint32_t));
	return xxl_spool_reader_open(&pr->rd, sp, consume);
}

/* The next pair; false at the end, on an error or on cancel (set in env). */
static bool
pairs_next(xxl_graph *g, pair_reader *pr, uint32_t e[2])
{
	const unsigned char *r;

	if (pr->left == 0 || g->env.err.code != XXL_OK ||
		xxl_spool_read(&pr->rd, 2 * sizeof(uint32_t), &r) != XXL_OK)
		return false;
	memcpy(e, r, 2 * sizeof(uint32_t));
	return (--pr->left & 4095) != 0 || !poll_canceled(g);
}

/* The spooled edges into the numbered map (and the sorters, if it outgrows the pool). */
static xxl_status
replay_numbered(xxl_graph *g)
{
	pair_reader pr;
	uint32_t	e[2];

	g->split = false;
	if (pairs_open(&pr, &g->split_edges, true) != XXL_OK)
		return g->env.err.code;
	while (pairs_next(g, &pr, e))
	{
		xxl_graph_edge edge = {.source = e[0],.target = e[1]};

		if ((g->in_memory ? graph_mem_put(g, &edge) : graph_put_sorted(g, e[0], e[1], 0, 0)) != XXL_OK)
			break;
	}
	xxl_spool_reader_close(&pr.rd);
	xxl_spool_free(&g->split_edges);
	if (g->env.err.code == XXL_OK && g->in_memory)
		graph_mem_flush(g);
	return g->env.err.code;
}

/* Level k's index j as a first-level id (the levels above k hold their roots). */
static inline uint32_t
up_to_id(const xxl_graph *g, int k, uint32_t j)
{
	for (int i = k - 1; i >= 0; i--)
	{
		const split_level *lv = &g->split_lv[i];

		j = j < lv->roots ? lv->root_at[j] : lv->base + (j - lv->roots);
	}
	return j;
}

/* Index x (below the level's base) reached by an edge: its root flagged, counted in *touched. */
static inline void
touch_one(uint32_t *p, uint32_t x, uint32_t *touched)
{
	uint32_t	r;

	/* an index the level's own edges did not reach: a set of its own */
	if (p[x] == IDMAP_NONE)
		p[x] = x;
	r = p[x] & ~SPLIT_FLAG;
	if ((p[r] & SPLIT_FLAG) == 0)
	{
		p[r] |= SPLIT_FLAG;
		(*touched)++;
	}
}

/*
 * A level's array p over [0, base): every index at its root, and each
 * root that an edge's low end reaches flagged; how many.  The low ends
 * are the touch bitmap's (which goes), or else those of a pass over the
 * edges.
 */
static uint32_t
touch_roots(xxl_graph *g, uint32_t *p, uint32_t base, xxl_spool *edges)
{
	pair_reader pr;
	uint32_t	e[2];
	uint32_t	touched = 0;

	/* parents are smaller: one ascending pass */
	for (uint32_t x = 0; x < base; x++)
		if (p[x] != IDMAP_NONE)
			p[x] = p[p[x]];
	if (g->split_touch)
	{
		for (uint32_t w = 0; w < (base + 63) / 64; w++)
			for (uint64_t bits = g->split_touch[w]; bits; bits &= bits - 1)
				touch_one(p, w * 64 + (uint32_t) __builtin_ctzll(bits), &touched);
		touch_free(g);
		return touched;
	}
	if (pairs_open(&pr, edges, false) != XXL_OK)
		return 0;
	while (pairs_next(g, &pr, e))
		for (int k = 0; k < 2; k++)
			if (e[k] < base)
				touch_one(p, e[k], &touched);
	xxl_spool_reader_close(&pr.rd);
	return touched;
}

/*
 * Level k, its roots touched: each root's next index in its entry, the
 * roots' indexes into roots, each low index's label into the level's
 * labels, and the edges rewritten onto the next level's indexes: into
 * inner those the next level's array (its first next_base indexes) joins,
 * into outer the others.
 */
static xxl_status
write_level(xxl_graph *g, int k, uint32_t *p, xxl_spool *edges, bool consume, uint64_t next_base,
			xxl_spool *inner, xxl_spool *outer, xxl_spool *roots)
{
	split_level *lv = &g->split_lv[k];
	uint32_t	idx = 0;
	pair_reader pr;
	uint32_t	e[2];
	u32_writer *w = xxl_env_alloc(&g->env, 2 * sizeof(u32_writer));

	if (w == NULL)
		return g->env.err.code;
	for (uint32_t x = 0; x < lv->base && g->env.err.code == XXL_OK; x++)
		if (p[x] != IDMAP_NONE && (p[x] & SPLIT_FLAG))
		{
			p[x] = idx++ | SPLIT_FLAG;
			xxl_spool_write(roots, &x, sizeof(x));
		}
	w_init(&w[0], inner);
	w_init(&w[1], outer);
	if (g->env.err.code == XXL_OK && pairs_open(&pr, edges, consume) == XXL_OK)
	{
		while (pairs_next(g, &pr, e))
		{
			uint32_t	a,
						b;
			u32_writer *to;

			a = split_next_index(p, lv->base, lv->roots, e[0]);
			b = split_next_index(p, lv->base, lv->roots, e[1]);
			to = &w[a < next_base && b < next_base ? 0 : 1];
			if (to == &w[1])
			{
				/* the next level's edges: their low ends are the roots it touches */
				if (a < next_base)
					touch_set(g, a);
				if (b < next_base)
					touch_set(g, b);
			}
			if (w_put(to, a) != XXL_OK || w_put(to, b) != XXL_OK)
				break;
		}
		xxl_spool_reader_close(&pr.rd);
	}
	if (g->env.err.code == XXL_OK && w_flush(&w[0]) == XXL_OK)
		w_flush(&w[1]);
	/* the labels through the same buffer */
	w_init(&w[0], &lv->labels);
	for (uint32_t x = 0; x < lv->base && g->env.err.code == XXL_OK; x++)
	{
		uint32_t	v = p[x];

		if (v != IDMAP_NONE && !(v & SPLIT_FLAG) && (p[v] & SPLIT_FLAG))
			v = p[v];
		w_put(&w[0], v);
	}
	if (g->env.err.code == XXL_OK)
		w_flush(&w[0]);
	xxl_env_free(&g->env, w, 2 * sizeof(u32_writer));
	if (g->env.err.code == XXL_OK && xxl_spool_finish(&lv->labels) == XXL_OK &&
		xxl_spool_finish(inner) == XXL_OK && xxl_spool_finish(outer) == XXL_OK)
		xxl_spool_finish(roots);
	return g->env.err.code;
}

/* Level k's roots' indexes from their spool into memory. */
static xxl_status
load_roots(xxl_graph *g, int k, xxl_spool *roots)
{
	split_level *lv = &g->split_lv[k];
	xxl_spool_reader rd;

	lv->root_bytes = (size_t) (lv->roots ? lv->roots : 1) * sizeof(uint32_t);
	if ((lv->root_at = xxl_env_alloc(&g->env, lv->root_bytes)) == NULL ||
		xxl_spool_reader_open(&rd, roots, true) != XXL_OK)
		return g->env.err.code;
	xxl_spool_read_exact(&rd, lv->root_at, (size_t) lv->roots * sizeof(uint32_t));
	xxl_spool_reader_close(&rd);
	return g->env.err.code;
}

/* A union-find of n entries over indexes not yet seen. */
static uint32_t *
alloc_uf(xxl_graph *g, uint64_t n)
{
	g->split_uf_bytes = (size_t) (n ? n : 1) * sizeof(uint32_t);
	if ((g->split_uf = xxl_env_alloc(&g->env, g->split_uf_bytes)) == NULL)
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		g->split_uf[i] = IDMAP_NONE;
	return g->split_uf;
}

static void
free_uf(xxl_graph *g)
{
	if (g->split_uf)
		xxl_env_free(&g->env, g->split_uf, g->split_uf_bytes);
	g->split_uf = NULL;
}

/* The next level's array q joins its inner edges (their ends seen). */
static xxl_status
join_inner(xxl_graph *g, uint32_t *q, xxl_spool *inner)
{
	pair_reader pr;
	uint32_t	e[2];

	if (pairs_open(&pr, inner, true) != XXL_OK)
		return g->env.err.code;
	while (pairs_next(g, &pr, e))
	{
		for (int k = 0; k < 2; k++)
			if (q[e[k]] == IDMAP_NONE)
				q[e[k]] = e[k];
		uf32_union(q, e[0], e[1]);
	}
	xxl_spool_reader_close(&pr.rd);
	return g->env.err.code;
}

/*
 * The levels fall short (one joins too little, or they would not end):
 * the sorters take the first level's links (from its labels and roots)
 * and the spooled edges, which are kept for this.
 */
static xxl_status
leave_levels(xxl_graph *g)
{
	split_level *lv = &g->split_lv[0];
	xxl_spool_reader rd;

	free_uf(g);
	for (int k = 1; k < g->split_nlv; k++)
	{
		if (g->split_lv[k].root_at)
			xxl_env_free(&g->env, g->split_lv[k].root_at, g->split_lv[k].root_bytes);
		g->split_lv[k].root_at = NULL;
		xxl_spool_free(&g->split_lv[k].labels);
	}
	g->split_nlv = 1;
	g->in_memory = false;
	g->by_id = false;
	xxl_error_clear(&g->env.err);
	if (graph_open_endpoints(g) != XXL_OK || xxl_spool_reader_open(&rd, &lv->labels, true) != XXL_OK)
		return g->env.err.code;
	for (uint32_t x = 0; x < lv->base; x++)
	{
		uint32_t	v;

		if (!get_u32(&rd, &v))
			break;
		if (v == IDMAP_NONE)
			continue;
		if (v & SPLIT_FLAG)
			v = lv->root_at[v & ~SPLIT_FLAG];
		if (graph_put_sorted(g, x, v, 0, 0) != XXL_OK || poll_canceled(g))
			break;
	}
	xxl_spool_reader_close(&rd);
	if (g->env.err.code == XXL_OK)
		graph_split_replay(g);
	graph_split_release(g);
	return g->env.err.code;
}

/*
 * The labels, from the last level (its union-find in split_uf) back to
 * the first: each level's labels over its indexes, as first-level ids,
 * into outs[k % 2] (the first level's: split_out), from its own labels
 * and the next level's.
 */
static xxl_status
label_levels(xxl_graph *g, int last, xxl_spool *other)
{
	xxl_env    *env = &g->env;
	xxl_spool  *outs[2] = {&g->split_out, other};

	for (int k = last - 1; k >= 0 && env->err.code == XXL_OK; k--)
	{
		split_level *lv = &g->split_lv[k];
		xxl_spool  *out = outs[k % 2],
				   *below = outs[(k + 1) % 2];
		bool		from_uf = k + 1 == last;
		uint32_t   *at = NULL;	/* the next level's labels of this level's roots */
		size_t		at_bytes = (size_t) (lv->roots ? lv->roots : 1) * sizeof(uint32_t);
		xxl_spool_reader rb,
					rl;
		bool		rb_open = false;
		u32_writer *w = xxl_env_alloc(env, sizeof(u32_writer));

		if (w == NULL)
			break;
		xxl_spool_init(out, env, XXL_SPOOL_SHARED);
		w_init(w, out);
		if (!from_uf)
		{
			if ((at = xxl_env_alloc(env, at_bytes)) == NULL ||
				xxl_spool_reader_open(&rb, below, true) != XXL_OK)
				goto done;
			rb_open = true;
			if (xxl_spool_read_exact(&rb, at, (size_t) lv->roots * sizeof(uint32_t)) != XXL_OK)
				goto done;
		}
		if (xxl_spool_reader_open(&rl, &lv->labels, true) != XXL_OK)
			goto done;
		for (uint64_t x = 0; x < lv->space && env->err.code == XXL_OK; x++)
		{
			uint32_t	v;

			if (x < lv->base)
			{
				if (!get_u32(&rl, &v))
					break;
				if (v != IDMAP_NONE)
				{
					if (!(v & SPLIT_FLAG))
						v = up_to_id(g, k, v);
					else if (from_uf)
						v = up_to_id(g, last, g->split_uf[v & ~SPLIT_FLAG]);
					else
						v = at[v & ~SPLIT_FLAG];
				}
			}
			else if (from_uf)
			{
				v = g->split_uf[lv->roots + (x - lv->base)];
				if (v != IDMAP_NONE)
					v = up_to_id(g, last, v);
			}
			else if (!get_u32(&rb, &v))
				break;
			if (k == 0)
				g->n += v != IDMAP_NONE;
			if (w_put(w, v) != XXL_OK || ((x & 65535) == 0 && poll_canceled(g)))
				break;
		}
		xxl_spool_reader_close(&rl);
		if (env->err.code == XXL_OK && w_flush(w) == XXL_OK)
			xxl_spool_finish(out);
done:
		xxl_env_free(env, w, sizeof(u32_writer));
		if (rb_open)
			xxl_spool_reader_close(&rb);
		if (at)
			xxl_env_free(env, at, at_bytes);
		if (from_uf)
			free_uf(g);
		else
			xxl_spool_free(below);
		xxl_spool_free(&lv->labels);
	}
	return env->err.code;
}

xxl_status
graph_split_settle(xxl_graph *g)
{
	xxl_env    *env = &g->env;
	size_t		room = env->pool / sizeof(uint32_t);
	uint32_t   *p = g->idm.direct;
	/* a level's inner edges in store[0]; its edges and the next's in the others, in turn */
	xxl_spool	store[3],
				roots;
	xxl_spool  *cur = &g->split_edges,
			   *inner = &store[0],
			   *outer = &store[1];
	size_t		held = 0;
	int			k = 0;
	xxl_status	rc = XXL_OK;
	bool		settled = false;

	memset(store, 0, sizeof(store));
	memset(&roots, 0, sizeof(roots));
	g->split_lv[0].base = g->split_base;
	g->split_lv[0].space = g->split_high;
	if (flush_split_edges(g) != XXL_OK || xxl_spool_finish(&g->split_edges) != XXL_OK)
		return env->err.code;
	while (env->err.code == XXL_OK)
	{
		split_level *lv = &g->split_lv[k];
		uint64_t	space,
					base;
		size_t		held_next;
		bool		last;

		lv->roots = touch_roots(g, p, lv->base, cur);
		if (env->err.code != XXL_OK)
			break;
		/*
		 * The next level: all its indexes in one union-find if they fit,
		 * else an array over its first ones beside the roots held (at
		 * most half the pool: the labels' pass loads as many again).
		 */
		space = lv->roots + (lv->space - lv->base);
		held_next = held + (size_t) (lv->roots ? lv->roots : 1) * sizeof(uint32_t);
		last = space * sizeof(uint32_t) + held_next <= env->pool;
		base = last ? space : held_next < env->pool / 2 ?
			(env->pool - held_next) / sizeof(uint32_t) - room / 16 : 0;
		if (base > space)
			base = space;
		/*
		 * a level must join at least half its low part among itself, the
		 * next go further, and the levels at this pace end in time
		 */
		if (lv->roots > lv->base / 2 ||
			(!last && (base <= lv->roots ||
					   k + 2 + (space - base) / (lv->base - lv->roots) >= SPLIT_MAX_LEVELS)) ||
			(k == 0 && g->split_high > g->split_cap))
		{
			if (k > 0)
			{
				rc = leave_levels(g);
				goto out;
			}
			/* the first level: the numbered map, or the sorters, from its array */
			for (uint32_t x = 0; x < lv->base; x++)
				if (p[x] != IDMAP_NONE)
					p[x] &= ~SPLIT_FLAG;
			if (graph_mem_leave_by_id(g, g->nbatch) != XXL_OK || !g->in_memory)
				return env->err.code;
			return replay_numbered(g);
		}
		xxl_spool_init(inner, env, XXL_SPOOL_SHARED);
		xxl_spool_init(outer, env, XXL_SPOOL_SHARED);
		xxl_spool_init(&roots, env, XXL_SPOOL_SHARED);
		/* (the last level has no low part of its own: every edge is inner) */
		if (!last)
			touch_alloc(g, base);
		write_level(g, k, p, cur, k > 0, base, inner, outer, &roots);
		if (k > 0)
			xxl_spool_free(cur);
		/* the level's array goes before its roots come into memory */
		if (k == 0)
			idmap_drop_table(env, &g->idm);
		else
			free_uf(g);
		p = NULL;
		if (env->err.code == XXL_OK)
			load_roots(g, k, &roots);
		xxl_spool_free(&roots);
		g->split_nlv = k + 1;
		if (env->err.code != XXL_OK)
			break;
		held += lv->root_bytes;
		k++;
		g->split_lv[k].space = space;
		g->split_lv[k].base = (uint32_t) base;
		if ((p = alloc_uf(g, base)) == NULL || join_inner(g, p, inner) != XXL_OK)
			break;
		xxl_spool_free(inner);
		if (last)
		{
			/* every index at its root: the labels, from this level back to the first */
			for (uint64_t i = 0; i < space; i++)
				if (p[i] != IDMAP_NONE)
					p[i] = p[p[i]];
			xxl_spool_free(outer);
			g->n = 0;
			settled = label_levels(g, k, outer) == XXL_OK;
			break;
		}
		/* the next level's edges are outer; the other store takes the one after */
		cur = outer;
		outer = cur == &store[1] ? &store[2] : &store[1];
	}
	rc = env->err.code;
	if (rc == XXL_OK && settled)
	{
		g->path = XXL_GRAPH_SEMI_EXTERNAL;
		g->out = OUT_CC_SPLIT;
		g->out_pos = 0;
		rc = xxl_spool_reader_open(&g->rd_aux, &g->split_out, true);
	}
out:
	for (int i = 0; i < 3; i++)
		xxl_spool_free(&store[i]);
	xxl_spool_free(&roots);
	return rc != XXL_OK ? rc : env->err.code;
}

int
graph_split_next_node(xxl_graph *g, int64_t *node, int64_t *component)
{
	while (g->out_pos < g->split_high)
	{
		uint32_t	v;

		if (!get_u32(&g->rd_aux, &v))
			return -1;
		if (v == IDMAP_NONE)
		{
			g->out_pos++;
			continue;
		}
		*node = (int64_t) g->out_pos++;
		*component = (int64_t) v;
		return 1;
	}
	return 0;
}

int
graph_split_levels(const xxl_graph *g)
{
	return g->split_nlv + 1;
}

void
graph_split_release(xxl_graph *g)
{
	free_uf(g);
	touch_free(g);
	for (int k = 0; k < SPLIT_MAX_LEVELS; k++)
	{
		split_level *lv = &g->split_lv[k];

		if (lv->root_at)
			xxl_env_free(&g->env, lv->root_at, lv->root_bytes);
		lv->root_at = NULL;
		xxl_spool_free(&lv->labels);
	}
	xxl_spool_free(&g->split_edges);
	xxl_spool_free(&g->split_out);
}
