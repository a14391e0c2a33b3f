/*
 * graph_split.c — components by id in two parts, for ids whose union-find
 * (4 bytes per id, graph_memory.c) outgrows the pool only a little.
 *
 * When the direct array can grow no further, it stays as the low part:
 * edges between low ids still join there, and an edge with an end above
 * it goes to a spool (8 bytes).  At the end of input the low sets are
 * final apart from those spooled edges, so each low id's root stands for
 * its whole low set: the spooled edges are rewritten onto a second
 * union-find over the low roots they touch (by index, in id order) and
 * the ids above, which takes the pool once the low array has written
 * each low id's label (its root, or its root's index) to a second spool.
 * The output reads those labels in id order, then the ids above.  A set's
 * root is still its smallest id: the roots' indexes keep their ids' order
 * and sit below the ids above.
 *
 * On a random graph the low part joins nearly all its ids into a few
 * sets, so the second part holds about the ids above; where it does not
 * fit (the low ids joined little among themselves), the operator moves to
 * the sorters with the low part's links and the spooled edges, as it
 * would have when the array stopped growing.
 */
#include "core/graph/graph_internal.h"

/* A touched low root (at settle) or a root's index (in the labels). */
#define SPLIT_FLAG (UINT32_C(1) << 31)

/* Whether the second part numbers id (by its distance from the base). */
static inline bool
split_takes(int64_t id)
{
	return id >= 0 && id < (int64_t) IDMAP_MAX;
}

bool
graph_split_begin(xxl_graph *g, const xxl_graph_edge *e)
{
	idmap	   *m = &g->idm;
	size_t		room = g->env.pool / sizeof(uint32_t);
	size_t		grown;
	int64_t		top = e->source > e->target ? e->source : e->target;

	/*
	 * Only ids that two parts of the pool's size could hold: the others
	 * are sparse, and the numbered map serves them better.
	 */
	if (!split_takes(e->source) || !split_takes(e->target) || (uint64_t) top >= 2 * (uint64_t) room)
		return false;
	/* the low part as large as the pool lets the array grow (old and new at once) */
	grown = m->dcap * sizeof(uint32_t) + idmap_table_bytes(m) < g->env.pool
		? (g->env.pool - m->dcap * sizeof(uint32_t) - idmap_table_bytes(m)) / sizeof(uint32_t) : 0;
	if (grown > room - room / 16)
		grown = room - room / 16;
	if (m->dcap < grown && grown < SPLIT_FLAG)
	{
		if (m->dfloor < grown)
			m->dfloor = grown;
		if (idmap_grow(&g->env, m, (int64_t) grown - 1) != XXL_OK)
		{
			xxl_error_clear(&g->env.err);
			return false;
		}
	}
	/* grown to take the edge after all: on by id in one part */
	if (idmap_in_direct(m, e->source) && idmap_in_direct(m, e->target))
		return true;
	/* the flag bit must stay clear of every low id */
	if (m->dcap == 0 || m->dcap >= SPLIT_FLAG || (uint64_t) top >= m->dcap + (uint64_t) room)
		return false;
	g->split = true;
	g->split_base = (uint32_t) m->dcap;
	g->split_high = g->split_base;
	xxl_spool_init(&g->split_edges, &g->env, XXL_SPOOL_SHARED);
	xxl_spool_init(&g->split_labels, &g->env, XXL_SPOOL_SHARED);
	return true;
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
			by_id_see(&g->idm, e[k]);
		else if (e[k] >= g->split_high)
			g->split_high = (uint64_t) e[k] + 1;
	return xxl_spool_write(&g->split_edges, e, sizeof(e)) == XXL_OK;
}

xxl_status
graph_split_replay(xxl_graph *g)
{
	xxl_spool_reader rd;
	const unsigned char *r;
	uint64_t	n = g->split_edges.nbytes / (2 * sizeof(uint32_t));

	g->split = false;
	if (xxl_spool_finish(&g->split_edges) != XXL_OK ||
		xxl_spool_reader_open(&rd, &g->split_edges, true) != XXL_OK)
		return g->env.err.code;
	for (uint64_t i = 0; i < n; i++)
	{
		uint32_t	e[2];

		if (xxl_spool_read(&rd, sizeof(e), &r) != XXL_OK)
			break;
		memcpy(e, r, sizeof(e));
		if (graph_put_sorted(g, e[0], e[1], 0, 0) != XXL_OK || poll_canceled(g))
			break;
	}
	xxl_spool_reader_close(&rd);
	return g->env.err.code;
}

/* The spooled edges into the numbered map (and the sorters, if it outgrows the pool). */
static xxl_status
replay_numbered(xxl_graph *g)
{
	xxl_spool_reader rd;
	const unsigned char *r;
	uint64_t	n = g->split_edges.nbytes / (2 * sizeof(uint32_t));

	g->split = false;
	if (xxl_spool_reader_open(&rd, &g->split_edges, true) != XXL_OK)
		return g->env.err.code;
	for (uint64_t i = 0; i < n; i++)
	{
		uint32_t	e[2];
		xxl_graph_edge edge = {0};
		xxl_status	rc;

		if (xxl_spool_read(&rd, sizeof(e), &r) != XXL_OK)
			break;
		memcpy(e, r, sizeof(e));
		edge.source = e[0];
		edge.target = e[1];
		rc = g->in_memory ? graph_mem_put(g, &edge) : graph_put_sorted(g, e[0], e[1], 0, 0);
		if (rc != XXL_OK || poll_canceled(g))
			break;
	}
	xxl_spool_reader_close(&rd);
	xxl_spool_free(&g->split_edges);
	if (g->env.err.code == XXL_OK && g->in_memory)
		graph_mem_flush(g);
	return g->env.err.code;
}

/*
 * Run f(g, end, arg) for each end of each spooled edge, in order; consume:
 * the last reading.
 */
static xxl_status
each_end(xxl_graph *g, bool consume, void (*f) (xxl_graph *, uint32_t, void *), void *arg)
{
	xxl_spool_reader rd;
	const unsigned char *r;
	uint64_t	n = g->split_edges.nbytes / (2 * sizeof(uint32_t));

	if (xxl_spool_reader_open(&rd, &g->split_edges, consume) != XXL_OK)
		return g->env.err.code;
	for (uint64_t i = 0; i < n; i++)
	{
		uint32_t	e[2];

		if (xxl_spool_read(&rd, sizeof(e), &r) != XXL_OK)
			break;
		memcpy(e, r, sizeof(e));
		f(g, e[0], arg);
		f(g, e[1], arg);
		if ((i & 4095) == 0 && poll_canceled(g))
			break;
	}
	xxl_spool_reader_close(&rd);
	return g->env.err.code;
}

/* Flag the low root of a low end (every low id points at its root by now). */
static void
touch_root(xxl_graph *g, uint32_t x, void *arg)
{
	uint32_t   *p = g->idm.direct;
	uint32_t   *touched = arg;
	uint32_t	r;

	if (x >= g->split_base)
		return;
	r = p[x] & ~SPLIT_FLAG;
	if ((p[r] & SPLIT_FLAG) == 0)
	{
		p[r] |= SPLIT_FLAG;
		(*touched)++;
	}
}

/* Where the second union-find has an end: its low root's index, or past the roots. */
static inline uint32_t
second_index(const xxl_graph *g, uint32_t x)
{
	const uint32_t *p = g->idm.direct;
	uint32_t	v;

	if (x >= g->split_base)
		return g->split_roots + (x - g->split_base);
	v = p[x];
	/* a touched root holds its index; any other low end, its root */
	return (v & SPLIT_FLAG ? v : p[v]) & ~SPLIT_FLAG;
}

static void
write_second(xxl_graph *g, uint32_t x, void *arg)
{
	xxl_spool  *second = arg;
	uint32_t	i = second_index(g, x);

	if (g->env.err.code == XXL_OK)
		xxl_spool_write(second, &i, sizeof(i));
}

/* Each low id's label, in id order: its root, or its touched root's index | SPLIT_FLAG. */
static xxl_status
write_labels(xxl_graph *g)
{
	const uint32_t *p = g->idm.direct;

	for (uint32_t x = 0; x < g->split_base; x++)
	{
		uint32_t	v = p[x];

		if (v != IDMAP_NONE && !(v & SPLIT_FLAG) && (p[v] & SPLIT_FLAG))
			v = p[v];
		if (xxl_spool_write(&g->split_labels, &v, sizeof(v)) != XXL_OK)
			return g->env.err.code;
		if ((x & 65535) == 0 && poll_canceled(g))
			return g->env.err.code;
	}
	return xxl_spool_finish(&g->split_labels);
}

/* The second union-find over the rewritten edges (pairs of indexes), flattened. */
static xxl_status
join_second(xxl_graph *g, xxl_spool *second, uint64_t size)
{
	xxl_spool_reader rd;
	const unsigned char *r;
	uint64_t	n = second->nbytes / (2 * sizeof(uint32_t));
	uint32_t   *q = g->split_uf;

	for (uint64_t i = 0; i < size; i++)
		q[i] = IDMAP_NONE;
	if (xxl_spool_reader_open(&rd, second, true) != XXL_OK)
		return g->env.err.code;
	for (uint64_t i = 0; i < n; i++)
	{
		uint32_t	e[2];

		if (xxl_spool_read(&rd, sizeof(e), &r) != XXL_OK)
			break;
		memcpy(e, r, sizeof(e));
		for (int k = 0; k < 2; k++)
			if (q[e[k]] == IDMAP_NONE)
				q[e[k]] = e[k];
		uf32_union(q, e[0], e[1]);
		if ((i & 4095) == 0 && poll_canceled(g))
			break;
	}
	xxl_spool_reader_close(&rd);
	/* parents are smaller: one ascending pass puts each at its root */
	for (uint64_t i = 0; i < size; i++)
		if (q[i] != IDMAP_NONE)
			q[i] = q[q[i]];
	return g->env.err.code;
}

xxl_status
graph_split_settle(xxl_graph *g)
{
	xxl_env    *env = &g->env;
	uint32_t   *p = g->idm.direct;
	uint32_t	touched = 0;
	uint64_t	high = g->split_high - g->split_base;
	uint64_t	size;
	size_t		need;
	xxl_spool	second;
	uint64_t	low_seen = g->idm.n;

	/* every low id at its low root (parents are smaller: one ascending pass) */
	for (uint32_t x = 0; x < g->split_base; x++)
		if (p[x] != IDMAP_NONE)
			p[x] = p[p[x]];
	if (xxl_spool_finish(&g->split_edges) != XXL_OK ||
		each_end(g, false, touch_root, &touched) != XXL_OK)
		return env->err.code;
	size = (uint64_t) touched + high;
	need = (size_t) (size + touched) * sizeof(uint32_t);
	if (size >= IDMAP_MAX || need > env->pool)
	{
		/*
		 * The second part does not fit: the numbered map, or the sorters,
		 * as when the array stopped, with the spooled edges after the links.
		 */
		for (uint32_t x = 0; x < g->split_base; x++)
			if (p[x] != IDMAP_NONE)
				p[x] &= ~SPLIT_FLAG;
		if (!graph_mem_leave_by_id(g))
			return env->err.code != XXL_OK ? env->err.code : graph_mem_to_sorter(g);
		return replay_numbered(g);
	}

	/* the touched roots' indexes, in id order, in their entries */
	g->split_roots = touched;
	g->split_root_ids_bytes = (size_t) (touched ? touched : 1) * sizeof(uint32_t);
	xxl_spool_init(&second, env, XXL_SPOOL_SHARED);
	{
		uint32_t	k = 0;
		xxl_spool	roots;

		xxl_spool_init(&roots, env, XXL_SPOOL_SHARED);
		for (uint32_t x = 0; x < g->split_base; x++)
			if (p[x] != IDMAP_NONE && (p[x] & SPLIT_FLAG))
			{
				p[x] = k++ | SPLIT_FLAG;
				if (xxl_spool_write(&roots, &x, sizeof(x)) != XXL_OK)
					break;
			}
		/* the edges as index pairs, and the low labels; then the low array goes */
		if (env->err.code == XXL_OK)
			xxl_spool_finish(&roots);
		if (env->err.code == XXL_OK)
			each_end(g, true, write_second, &second);
		if (env->err.code == XXL_OK && xxl_spool_finish(&second) == XXL_OK)
			write_labels(g);
		idmap_drop_table(env, &g->idm);
		if (env->err.code == XXL_OK &&
			(g->split_root_ids = xxl_env_alloc(env, g->split_root_ids_bytes)) != NULL)
		{
			xxl_spool_reader rd;
			const unsigned char *r;

			if (xxl_spool_reader_open(&rd, &roots, true) == XXL_OK)
			{
				for (uint32_t i = 0; i < touched; i++)
				{
					if (xxl_spool_read(&rd, sizeof(uint32_t), &r) != XXL_OK)
						break;
					memcpy(&g->split_root_ids[i], r, sizeof(uint32_t));
				}
				xxl_spool_reader_close(&rd);
			}
		}
		xxl_spool_free(&roots);
	}
	g->split_uf_bytes = (size_t) (size ? size : 1) * sizeof(uint32_t);
	if (env->err.code == XXL_OK && (g->split_uf = xxl_env_alloc(env, g->split_uf_bytes)) != NULL)
		join_second(g, &second, size);
	xxl_spool_free(&second);
	if (env->err.code != XXL_OK)
		return env->err.code;

	g->n = low_seen;
	for (uint64_t i = touched; i < size; i++)
		g->n += g->split_uf[i] != IDMAP_NONE;
	g->path = XXL_GRAPH_SEMI_EXTERNAL;
	g->out = OUT_CC_SPLIT;
	g->out_pos = 0;
	return xxl_spool_reader_open(&g->rd_aux, &g->split_labels, true);
}

/* The smallest id of the set of second-part index i. */
static inline int64_t
second_label(const xxl_graph *g, uint32_t i)
{
	uint32_t	f = g->split_uf[i];

	return f < g->split_roots ? (int64_t) g->split_root_ids[f]
		: (int64_t) g->split_base + (f - g->split_roots);
}

int
graph_split_next_node(xxl_graph *g, int64_t *node, int64_t *component)
{
	const unsigned char *r;

	while (g->out_pos < g->split_base)
	{
		uint32_t	v;

		if (xxl_spool_read(&g->rd_aux, sizeof(v), &r) != XXL_OK)
			return -1;
		memcpy(&v, r, sizeof(v));
		if (v == IDMAP_NONE)
		{
			g->out_pos++;
			continue;
		}
		*node = (int64_t) g->out_pos++;
		*component = v & SPLIT_FLAG ? second_label(g, v & ~SPLIT_FLAG) : (int64_t) v;
		return 1;
	}
	while (g->out_pos < g->split_high)
	{
		uint32_t	i = g->split_roots + (uint32_t) (g->out_pos - g->split_base);

		if (g->split_uf[i] == IDMAP_NONE)
		{
			g->out_pos++;
			continue;
		}
		*node = (int64_t) g->out_pos++;
		*component = second_label(g, i);
		return 1;
	}
	return 0;
}

void
graph_split_release(xxl_graph *g)
{
	if (g->split_uf)
		xxl_env_free(&g->env, g->split_uf, g->split_uf_bytes);
	if (g->split_root_ids)
		xxl_env_free(&g->env, g->split_root_ids, g->split_root_ids_bytes);
	g->split_uf = NULL;
	g->split_root_ids = NULL;
	xxl_spool_free(&g->split_edges);
	xxl_spool_free(&g->split_labels);
}
