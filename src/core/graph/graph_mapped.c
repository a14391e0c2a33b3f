/*
 * graph_mapped.c — the forests' semi-external path with the ids in memory
 * (xxl_graph.h): taken when the kept edges of the in-memory path (24
 * bytes each for the spanning forest, 32 for the minimum one) do not fit
 * but a union-find entry per node (4 bytes) and the ids' numbering do.
 * Ids from 0 up to what the union-find can hold are their own index (no
 * table, a bit each to count the nodes), as tables keyed by serial ids
 * have them; the others are numbered by an id map (idmap.h) after them.
 * The edges go to a spool with their indexes, in input order; the
 * spanning forest is then the union-find over that spool (the in-memory
 * path's output scan), and the minimum spanning forest sorts it by (cost,
 * id, input position) with one environment sorter and runs Kruskal over
 * the sorted stream.
 *
 * Why: the sorting path numbers the ids by two sorts of the endpoints
 * before its union-find, which cost more than the forest itself.  If the
 * ids outgrow the budget after all, the forest goes on by id in parts
 * (graph_forest_split.c) while they are non-negative and within its
 * reach, the edges spooled so far rewritten with their ids; otherwise the
 * spooled edges are put to the sorting path with their original ids, in
 * input order, and the operator goes on as if it had started there.
 */
#include "core/graph/graph_internal.h"

#include <string.h>

/* A spooled edge: dense ends, id, cost. */
typedef struct mapped_edge
{
	uint32_t	u,
				v;
	int64_t		id;
	double		cost;
} mapped_edge;

/* Its Kruskal record: cost key, id key, input position (big-endian), then the ends. */
#define KR_KEY 24
#define KR_REC 32

/*
 * The budget is checked once per this many edges, for the nodes they can
 * bring (the in-memory path's stride asks for room for 64K nodes ahead).
 */
#define MAPPED_FIT_STRIDE 1024
#define MAPPED_FIXED (64 * 1024)

/*
 * Room for the union-find and the ids at run: the minimum forest's sorter
 * takes the rest of the pool, at least a quarter of it (a small sorter
 * merges more runs, which costs far less than the sorting path).
 */
static size_t
mapped_room(const xxl_graph *g)
{
	return g->op == XXL_GRAPH_MSF ? g->env.pool - g->env.pool / 4 : g->env.pool;
}

/*
 * Whether n numbered nodes with id tables of `tables` bytes fit beside the
 * direct ids: the numbered ids and tables while the edges come; a
 * union-find entry per index and the numbered ids at run.
 */
static bool
mapped_fits(const void *arg, uint64_t n, size_t tables)
{
	const xxl_graph *g = arg;
	size_t		fixed = MAPPED_FIXED + g->direct_seen_bytes;
	size_t		input = pvec_bytes(&g->idm.ids, n) + tables + fixed;
	size_t		run = pvec_bytes(&g->idm.ids, n) + (g->direct_base + n) * sizeof(uint32_t) + fixed;

	return g->direct_base + n < IDMAP_MAX && input <= g->env.pool && run <= mapped_room(g);
}

/* Indexes below this are direct ids, the others direct_end + their number. */
static inline uint64_t
direct_end(const xxl_graph *g)
{
	return g->direct_frozen ? g->direct_base : g->direct_top;
}

static inline int64_t
index_id(const xxl_graph *g, uint32_t x)
{
	uint64_t	d = direct_end(g);

	return x < d ? (int64_t) x : idmap_id(&g->idm, x - d);
}

/*
 * The forest by id in parts from here on (graph_forest_split.c):
 * every index spooled so far is its id, below high, and so will the later
 * ones be; no seen bits (the levels count the nodes).
 */
static void
parts_begin(xxl_graph *g, uint64_t high)
{
	if (g->direct_seen)
		xxl_env_free(&g->env, g->direct_seen, g->direct_seen_bytes);
	g->direct_seen = NULL;
	g->direct_seen_bytes = 0;
	g->parts = true;
	g->parts_high = high;
	/* every index below direct_end: index_id gives it back as the id */
	g->direct_base = UINT32_MAX;
	g->direct_frozen = true;
}

/* An id's index: IDMAP_NONE when it does not fit (env->err says why, or nothing for the budget). */
static uint32_t
id_index(xxl_graph *g, int64_t id)
{
	uint32_t	d;

	if (g->parts)
	{
		if (!graph_parts_takes(g, id))
			return IDMAP_NONE;
		if ((uint64_t) id >= g->parts_high)
			g->parts_high = (uint64_t) id + 1;
		return (uint32_t) id;
	}
	if (id >= 0 && (uint64_t) id < g->direct_base)
	{
		if ((uint64_t) id >= g->direct_top)
			g->direct_top = (uint64_t) id + 1;
		g->direct_seen[id >> 3] |= (uint8_t) (1 << (id & 7));
		return (uint32_t) id;
	}
	if (!g->direct_frozen)
	{
		/* the direct ids end here: the seen bits shrink to them */
		size_t		bytes = (g->direct_top + 7) / 8;
		uint8_t    *seen = xxl_env_realloc(&g->env, g->direct_seen, g->direct_seen_bytes,
										   bytes ? bytes : 1);

		if (seen == NULL)
			return IDMAP_NONE;
		g->direct_seen = seen;
		g->direct_seen_bytes = bytes ? bytes : 1;
		g->direct_base = g->direct_top;
		g->direct_frozen = true;
		if (!mapped_fits(g, g->idm.n + 2 * MAPPED_FIT_STRIDE, idmap_table_bytes(&g->idm)))
			return IDMAP_NONE;
	}
	if ((d = idmap_intern_within(&g->env, &g->idm, id, mapped_fits, g)) == IDMAP_NONE)
		return IDMAP_NONE;
	return (uint32_t) g->direct_base + d;
}

static xxl_status
spool_edge(xxl_graph *g, uint32_t u, uint32_t v, int64_t id, double cost)
{
	mapped_edge e = {u, v, id, cost};

	if (xxl_spool_write(&g->dense, &e, sizeof(e)) != XXL_OK)
		return g->env.err.code;
	g->mapped_m++;
	return XXL_OK;
}

/*
 * Direct ids up to what the room holds (4 bytes of union-find and a bit
 * each), if every id numbered so far is one of them: false, and nothing
 * changed, if not.
 */
static bool
direct_begin(xxl_graph *g)
{
	size_t		room = mapped_room(g);
	uint64_t	base = room > MAPPED_FIXED ? (uint64_t) (room - MAPPED_FIXED) * 8 / 33 : 0;

	if (base == 0)
		return false;
	if (base >= IDMAP_MAX)
		base = IDMAP_MAX - 1;
	for (uint64_t i = 0; i < g->idm.n; i++)
	{
		int64_t		id = idmap_id(&g->idm, i);

		if (id < 0 || (uint64_t) id >= base)
			return false;
	}
	g->direct_seen_bytes = (base + 7) / 8 + 1;
	if ((g->direct_seen = xxl_env_alloc(&g->env, g->direct_seen_bytes)) == NULL)
	{
		xxl_error_clear(&g->env.err);
		g->direct_seen_bytes = 0;
		return false;
	}
	memset(g->direct_seen, 0, g->direct_seen_bytes);
	g->direct_base = base;
	return true;
}

/* A kept edge of the in-memory path into the spool, by the indexes of its ends. */
static xxl_status
spool_kept(xxl_graph *g, bool direct, uint32_t du, uint32_t dv, int64_t id, double cost)
{
	if (direct)
	{
		du = id_index(g, idmap_id(&g->idm, du));
		dv = id_index(g, idmap_id(&g->idm, dv));
	}
	return spool_edge(g, du, dv, id, cost);
}

xxl_status
graph_mapped_begin(xxl_graph *g)
{
	bool		direct;

	if (g->op == XXL_GRAPH_CC)
		return XXL_ENOMEM;
	direct = direct_begin(g);
	if (!direct)
	{
		/* numbered from the start: ids in memory as the in-memory path had them */
		g->direct_frozen = true;
		if (!mapped_fits(g, g->idm.n + 2 * MAPPED_FIT_STRIDE, idmap_table_bytes(&g->idm)))
			return XXL_ENOMEM;
	}
	g->mapped = true;
	xxl_spool_init(&g->dense, &g->env, XXL_SPOOL_SHARED);
	if (g->op == XXL_GRAPH_SF)
		for (uint64_t e = 0; e < g->ends.n; e++)
		{
			const uint32_t *d = pvec_at(&g->ends, e);
			const graph_attr *a = pvec_at(&g->attrs, e);

			if (spool_kept(g, direct, d[0], d[1], a->id, a->cost) != XXL_OK)
				return g->env.err.code;
		}
	else
	{
		/* the kept records, in input order (their position is in the key) */
		for (uint64_t e = 0; e < g->kedges.n; e++)
		{
			const graph_kedge *k = pvec_at(&g->kedges, e);

			if (spool_kept(g, direct, k->u, k->v, g_key_id(g_get_be(k->key + 8)),
						   g_key_cost(g_get_be(k->key))) != XXL_OK)
				return g->env.err.code;
		}
	}
	pvec_free(&g->env, &g->ends);
	pvec_free(&g->env, &g->attrs);
	pvec_free(&g->env, &g->kedges);
	if (direct)
	{
		/* the direct ids need no map */
		idmap_free(&g->env, &g->idm);
		idmap_init(&g->idm, g->env.budget.limit);
	}
	return XXL_OK;
}

/*
 * The forest's ids do not fit numbered, but all are within the
 * levels' reach: by id in parts after all, the edges spooled so far
 * rewritten with their ids as indexes.  XXL_ENOMEM (no error) if an id is
 * not.
 */
static xxl_status
parts_from_numbered(xxl_graph *g)
{
	uint64_t	high = direct_end(g);
	xxl_spool	numbered;
	xxl_spool_reader rd;
	const unsigned char *r;

	for (uint64_t i = 0; i < g->idm.n; i++)
	{
		int64_t		id = idmap_id(&g->idm, i);

		if (!graph_parts_takes(g, id))
			return XXL_ENOMEM;
		if ((uint64_t) id >= high)
			high = (uint64_t) id + 1;
	}
	if (g->idm.n > 0)
	{
		/* (a finished spool may move; one being written may not) */
		if (xxl_spool_finish(&g->dense) != XXL_OK)
			return g->env.err.code;
		numbered = g->dense;
		xxl_spool_init(&g->dense, &g->env, XXL_SPOOL_SHARED);
		if (xxl_spool_reader_open(&rd, &numbered, true) != XXL_OK)
		{
			xxl_spool_free(&numbered);
			return g->env.err.code;
		}
		for (uint64_t i = 0; i < g->mapped_m; i++)
		{
			mapped_edge e;

			if (xxl_spool_read(&rd, sizeof(e), &r) != XXL_OK)
				break;
			memcpy(&e, r, sizeof(e));
			e.u = (uint32_t) index_id(g, e.u);
			e.v = (uint32_t) index_id(g, e.v);
			if (xxl_spool_write(&g->dense, &e, sizeof(e)) != XXL_OK ||
				((i & 4095) == 4095 && poll_canceled(g)))
				break;
		}
		xxl_spool_reader_close(&rd);
		xxl_spool_free(&numbered);
		if (g->env.err.code != XXL_OK)
			return g->env.err.code;
	}
	idmap_free(&g->env, &g->idm);
	idmap_init(&g->idm, g->env.budget.limit);
	parts_begin(g, high);
	return XXL_OK;
}

static xxl_status
mapped_put(xxl_graph *g, const xxl_graph_edge *e)
{
	uint32_t	du,
				dv;

	/* (direct ids need no room; numbered ones are checked ahead, per stride of edges) */
	if (g->direct_frozen && !g->parts && g->mapped_m % MAPPED_FIT_STRIDE == 0 &&
		!mapped_fits(g, g->idm.n + 2 * MAPPED_FIT_STRIDE, idmap_table_bytes(&g->idm)))
		return XXL_ENOMEM;
	if ((du = id_index(g, e->source)) == IDMAP_NONE || (dv = id_index(g, e->target)) == IDMAP_NONE)
	{
		if (g->env.err.code == XXL_ENOMEM)
			xxl_error_clear(&g->env.err);
		return g->env.err.code == XXL_OK ? XXL_ENOMEM : g->env.err.code;
	}
	return spool_edge(g, du, dv, e->id, e->cost);
}

xxl_status
graph_mapped_put(xxl_graph *g, const xxl_graph_edge *e)
{
	xxl_status	rc = mapped_put(g, e);

	/* the forests' ids outgrow the budget: in parts, if they may */
	if (rc == XXL_ENOMEM && g->env.err.code == XXL_OK && !g->parts &&
		graph_parts_takes(g, e->source) && graph_parts_takes(g, e->target) &&
		(rc = parts_from_numbered(g)) == XXL_OK)
		rc = mapped_put(g, e);
	return rc;
}

/*
 * Each spooled edge i in input order to fn, the spool consumed and freed
 * unless kept; stops at the first error.
 */
static xxl_status
drain_spool(xxl_graph *g, xxl_status (*fn) (xxl_graph *g, uint64_t i, const mapped_edge *e),
			bool keep)
{
	xxl_env    *env = &g->env;
	xxl_spool_reader rd;
	const unsigned char *r;

	if (xxl_spool_finish(&g->dense) != XXL_OK ||
		xxl_spool_reader_open(&rd, &g->dense, !keep) != XXL_OK)
		return env->err.code;
	for (uint64_t i = 0; i < g->mapped_m; i++)
	{
		mapped_edge e;

		if (xxl_spool_read(&rd, sizeof(e), &r) != XXL_OK)
			break;
		memcpy(&e, r, sizeof(e));
		if (fn(g, i, &e) != XXL_OK || poll_canceled(g))
			break;
	}
	xxl_spool_reader_close(&rd);
	if (!keep)
		xxl_spool_free(&g->dense);
	return env->err.code;
}

static xxl_status
put_sorted(xxl_graph *g, uint64_t i, const mapped_edge *e)
{
	(void) i;
	return graph_put_sorted(g, index_id(g, e->u), index_id(g, e->v), e->id, e->cost);
}

xxl_status
graph_mapped_to_sorter(xxl_graph *g)
{
	g->mapped = false;
	g->parts = false;
	return drain_spool(g, put_sorted, false);
}

/* Edge i's Kruskal record into S3. */
static xxl_status
put_kruskal(xxl_graph *g, uint64_t i, const mapped_edge *e)
{
	unsigned char k[KR_REC];

	g_put_be(k, g_cost_key(e->cost));
	g_put_be(k + 8, g_id_key(e->id));
	g_put_be(k + 16, i);
	memcpy(k + 24, &e->u, 4);
	memcpy(k + 28, &e->v, 4);
	return xxl_env_sort_put(&g->env, &g->s3, k);
}

xxl_status
graph_mapped_sort(xxl_graph *g, size_t share, bool keep)
{
	xxl_env    *env = &g->env;

	share -= share % XXL_ALIGN;
	if (xxl_env_sort_open(env, &g->s3, share, 0, KR_REC, KR_KEY, g->mapped_m,
						  XXL_INPUT_UNBOUNDED) != XXL_OK ||
		drain_spool(g, put_kruskal, keep) != XXL_OK)
		return env->err.code;
	return xxl_env_sort_sort(env, &g->s3);
}

int
graph_mapped_sorted_next(xxl_graph *g, int64_t *id, double *cost, uint32_t *u, uint32_t *v)
{
	const unsigned char *r;
	int			got = xxl_env_sort_next(&g->env, &g->s3, &r);

	if (got <= 0)
		return got;
	*cost = g_key_cost(g_get_be(r));
	*id = g_key_id(g_get_be(r + 8));
	memcpy(u, r + 24, 4);
	memcpy(v, r + 28, 4);
	return 1;
}

xxl_status
graph_mapped_run(xxl_graph *g)
{
	xxl_env    *env = &g->env;
	size_t		share;

	if (g->parts)
		return graph_parts_run(g);
	g->path = XXL_GRAPH_SEMI_EXTERNAL;
	g->n = g->idm.n;
	for (size_t i = 0; i < g->direct_seen_bytes; i++)
		g->n += (uint64_t) __builtin_popcount(g->direct_seen[i]);
	idmap_drop_table(env, &g->idm);
	if (xxl_spool_finish(&g->dense) != XXL_OK ||
		uf32_alloc(g, direct_end(g) + g->idm.n) != XXL_OK)
		return env->err.code;
	if (g->op == XXL_GRAPH_SF)
	{
		g->out = OUT_SF_MAPPED;
		return xxl_spool_reader_open(&g->rd_in, &g->dense, true);
	}

	/* the rest of the pool sorts the edges by (cost, id, input position) */
	share = env->pool - pvec_bytes(&g->idm.ids, g->idm.n) - g->parent_bytes - MAPPED_FIXED -
		g->direct_seen_bytes;
	g->out = OUT_MSF_MAPPED;
	return graph_mapped_sort(g, share, false);
}

int
graph_mapped_next_edge(xxl_graph *g, int64_t *id, int64_t *source, int64_t *target,
					   double *cost)
{
	for (;;)
	{
		const unsigned char *r;
		uint32_t	u,
					v;

		if (g->out == OUT_SF_MAPPED)
		{
			mapped_edge e;

			if (g->out_pos == g->mapped_m)
				return 0;
			if (xxl_spool_read(&g->rd_in, sizeof(e), &r) != XXL_OK)
				return -1;
			memcpy(&e, r, sizeof(e));
			u = e.u;
			v = e.v;
			*id = e.id;
			*cost = e.cost;
		}
		else
		{
			int			got = graph_mapped_sorted_next(g, id, cost, &u, &v);

			if (got <= 0)
				return got;
		}
		g->out_pos++;
		if (uf32_union((uint32_t *) g->parent, u, v))
		{
			*source = index_id(g, u);
			*target = index_id(g, v);
			return 1;
		}
		if ((g->out_pos & 4095) == 0 && poll_canceled(g))
			return -1;
	}
}

bool
graph_mapped_by_id(const xxl_graph *g)
{
	return direct_end(g) > 0;
}

void
graph_mapped_release(xxl_graph *g)
{
	xxl_spool_free(&g->dense);
	if (g->direct_seen)
		xxl_env_free(&g->env, g->direct_seen, g->direct_seen_bytes);
	g->direct_seen = NULL;
	g->direct_seen_bytes = 0;
}
