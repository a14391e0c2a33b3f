/*
 * paths_mm.c — the Mehlhorn–Meyer BFS (thesis §4.5, MM_BFS) over the
 * cluster-ordered adjacency that paths_cluster.c and paths_ext_build.c
 * build.  Each level, sorted by node, carries its nodes' clusters:
 *
 *  1. the level is sorted in its buffer (paths_level.c; a level too big for
 *     it is copied to a spool, as it is read twice), and
 *  2. the clusters of its nodes that are not loaded yet (one bit per
 *     cluster) are read, each once and in one sequential piece, their arcs
 *     sorted by tail;
 *  3. the hot pool (a run of arcs sorted by tail, from clusters loaded
 *     earlier) and the fresh arcs are merged with the level: arcs of level
 *     nodes are relaxed (the visited bit replaces MR's merge with the two
 *     previous levels), the others go to the next pool.
 *
 * A cluster's nodes are at most mu tree edges apart, so in an undirected
 * graph its arcs wait in the pool at most about mu levels, so each arc is
 * scanned O(mu) times in the pool, and the clusters cost O(n / mu +
 * scan(m)) I/Os in all, against MR's one random read per node.  Directed graphs run too
 * (the arcs are right), without that bound on the pool's residence.
 * Record layouts: paths_internal.h.
 */
#include "core/graph/paths_internal.h"

#define LEVEL_REC 24
#define ADJ_REC PATHS_MM_ADJ_REC

static xxl_status
level_put(xxl_paths *p, plevel *s, uint64_t node, uint64_t cluster, int64_t orig)
{
	unsigned char r[LEVEL_REC];

	g_put_be(r, node);
	g_put_u64(r + 8, cluster);
	g_put_u64(r + 16, (uint64_t) orig);
	return plevel_put(p, s, r);
}

/*
 * 1 and 2: the level sorted (and copied to a spool if it is too big to be
 * read twice); each of its nodes' clusters not loaded yet is read (in one
 * sequential piece) into p->fresh, sorted by tail.  The clusters are read
 * in the order the level meets them: each is one piece wherever it lies.
 */
static xxl_status
load_level(xxl_paths *p, plevel *now, bool *copied)
{
	xxl_env    *env = &p->env;
	const unsigned char *r;
	int			got;

	if (plevel_sort(p, now) != XXL_OK)
		return env->err.code;
	*copied = !plevel_rewind(now);
	if (*copied)
		xxl_spool_init(&p->level_copy, env, XXL_SPOOL_SHARED);
	while ((got = plevel_next(p, now, &r)) == 1)
	{
		uint64_t	c = g_get_u64(r + 8);

		if (*copied && xxl_spool_write(&p->level_copy, r, LEVEL_REC) != XXL_OK)
			return env->err.code;
		if (c != PATHS_NO_CLUSTER && !bit_get(p->loaded, c))
		{
			const unsigned char *x;
			uint64_t	first,
						end;

			bit_set(p->loaded, c);
			if (xxl_pagefile_get(&p->cidx, c, &x) != XXL_OK)
				return env->err.code;
			first = g_get_u64(x);
			if (xxl_pagefile_get(&p->cidx, c + 1, &x) != XXL_OK)
				return env->err.code;
			end = g_get_u64(x);
			if (end > first)
				p->cluster_loads++; /* directed: a cluster's nodes may have no arcs out */
			for (uint64_t a = first; a < end; a++)
			{
				unsigned char rec[ADJ_REC];

				if (xxl_pagefile_get(&p->adj, a, &x) != XXL_OK)
					return env->err.code;
				/* the sort key: the tail, big-endian */
				g_put_be(rec, g_get_u64(x));
				memcpy(rec + 8, x + 8, ADJ_REC - 8);
				if (plevel_put(p, &p->fresh, rec) != XXL_OK)
					return env->err.code;
			}
		}
		if (xxl_env_poll(env))
			return env->err.code;
	}
	if (got < 0)
		return env->err.code;
	if (*copied)
	{
		plevel_clear(p, now);
		if (xxl_spool_finish(&p->level_copy) != XXL_OK)
			return env->err.code;
	}
	else
		plevel_rewind(now);
	return plevel_sort(p, &p->fresh);
}

/* The next arc of the pool (0) or the fresh arcs (1), by tail; -1 at the end of both. */
typedef struct arc_streams
{
	xxl_spool_reader pool;
	uint64_t	pool_left;
	const unsigned char *head[2];
	bool		fresh_done;
} arc_streams;

static xxl_status
advance(xxl_paths *p, arc_streams *st, int which)
{
	if (which == 0)
	{
		st->head[0] = NULL;
		if (st->pool_left > 0)
		{
			if (xxl_spool_read(&st->pool, ADJ_REC, &st->head[0]) != XXL_OK)
				return p->env.err.code;
			st->pool_left--;
		}
	}
	else
	{
		int			got = st->fresh_done ? 0 : plevel_next(p, &p->fresh, &st->head[1]);

		if (got < 0)
			return p->env.err.code;
		if (got == 0)
		{
			st->fresh_done = true;
			st->head[1] = NULL;
		}
	}
	return XXL_OK;
}

static int
smaller(const arc_streams *st)
{
	if (st->head[0] == NULL)
		return st->head[1] ? 1 : -1;
	if (st->head[1] == NULL)
		return 0;
	return g_get_be(st->head[1]) < g_get_be(st->head[0]) ? 1 : 0;
}

/*
 * 3: merge the pool and the fresh arcs with the level (read again from
 * memory, or from its copy): relax the level's arcs into next, keep the
 * rest as the next pool.
 */
static xxl_status
expand_level(xxl_paths *p, int pool_cur, uint64_t pool_n, plevel *now, uint64_t level_n,
			 bool copied, plevel *next, size_t pool_share, uint64_t depth, uint64_t *pool_next_n)
{
	xxl_env    *env = &p->env;
	xxl_spool  *out = &p->pool[1 - pool_cur];
	xxl_spool_reader lv;
	arc_streams st;
	const unsigned char *x = NULL;
	uint64_t	level_left = level_n,
				x_node = 0,
				last_hit = UINT64_MAX;
	int			which;

	memset(&st, 0, sizeof(st));
	memset(&lv, 0, sizeof(lv));
	*pool_next_n = 0;
	xxl_spool_init(out, env, pool_share);
	if (copied && xxl_spool_reader_open(&lv, &p->level_copy, true) != XXL_OK)
		return env->err.code;
	st.pool_left = pool_n;
	if ((pool_n > 0 && xxl_spool_reader_open(&st.pool, &p->pool[pool_cur], true) != XXL_OK) ||
		advance(p, &st, 0) != XXL_OK || advance(p, &st, 1) != XXL_OK)
		goto out;
	while ((which = smaller(&st)) >= 0)
	{
		const unsigned char *a = st.head[which];
		uint64_t	from = g_get_be(a);

		while ((x == NULL || x_node < from) && level_left > 0)
		{
			if (copied ? xxl_spool_read(&lv, LEVEL_REC, &x) != XXL_OK :
				plevel_next(p, now, &x) != 1)
			{
				if (env->err.code == XXL_OK)
					xxl_error_set(&env->err, XXL_EIO, 0, "BFS level %llu ended early",
								  (unsigned long long) depth);
				goto out;
			}
			x_node = g_get_be(x);
			level_left--;
		}
		if (x != NULL && x_node == from)
		{
			uint64_t	to = g_get_u64(a + 8);

			if (which == 0 && last_hit != from)
			{
				p->pool_hits++;
				last_hit = from;
			}
			p->relaxed++;
			if (!bit_get(p->visited, to))
			{
				bit_set(p->visited, to);
				p->pushes++;
				if (paths_ext_emit(p, (int64_t) g_get_u64(a + 24), (double) (depth + 1),
								   (int64_t) g_get_u64(x + 16), (int64_t) g_get_u64(a + 32)) != XXL_OK ||
					level_put(p, next, to, g_get_u64(a + 16), (int64_t) g_get_u64(a + 24)) != XXL_OK)
					goto out;
			}
		}
		else
		{
			if (xxl_spool_write(out, a, ADJ_REC) != XXL_OK)
				goto out;
			(*pool_next_n)++;
		}
		if (advance(p, &st, which) != XXL_OK || xxl_env_poll(env))
			goto out;
	}
	xxl_spool_finish(out);
out:
	if (copied)
	{
		xxl_spool_reader_close(&lv);
		xxl_spool_free(&p->level_copy);
	}
	if (st.pool.sp)
		xxl_spool_reader_close(&st.pool);
	xxl_spool_free(&p->pool[pool_cur]);
	plevel_clear(p, now);
	plevel_clear(p, &p->fresh);
	return env->err.code;
}

/* The search's budget: each level, the fresh arcs, each of the two pools. */
typedef struct mm_split
{
	size_t		level,
				fresh,
				pool;
} mm_split;

static size_t
part(size_t rest, size_t num, size_t den)
{
	size_t		b = rest / den * num;

	return b - b % XXL_ALIGN;
}

/*
 * The two levels: 1/8 each; the fresh arcs, the largest sort (a level of a
 * random graph loads nearly every cluster at once): 1/4; the pool (old and
 * new, written and read in order): 3/16 each.
 */
static mm_split
split(size_t rest)
{
	return (mm_split) {part(rest, 1, 8), part(rest, 1, 4), part(rest, 3, 16)};
}

/*
 * Whether the search with rest bytes could sort a level of `nodes` nodes
 * and the arcs of every cluster at once, which a graph of small diameter
 * asks for.
 */
bool
paths_mm_fits(xxl_paths *p, size_t rest, uint64_t nodes, uint64_t arcs)
{
	mm_split	sp = split(rest);

	return xxl_env_sort_fits(&p->env, plevel_sorter_memory(ADJ_REC, sp.fresh), 0, ADJ_REC, 8,
							 arcs) &&
		xxl_env_sort_fits(&p->env, plevel_sorter_memory(LEVEL_REC, sp.level), 0, LEVEL_REC, 8,
						  nodes);
}

static xxl_status
seed_put(xxl_paths *p, plevel *level, size_t i)
{
	return level_put(p, level, p->src_dense[i], p->src_cluster[i], p->src_orig[i]);
}

xxl_status
paths_mm_bfs(xxl_paths *p, size_t rest)
{
	xxl_env    *env = &p->env;
	mm_split	sp = split(rest);
	int			cur = 0,
				pool_cur = 0;
	uint64_t	depth = 0,
				pool_n = 0;
	bool		copied = false;

	if (plevel_init(p, &p->lv[0], LEVEL_REC, sp.level) != XXL_OK ||
		plevel_init(p, &p->lv[1], LEVEL_REC, sp.level) != XXL_OK ||
		plevel_init(p, &p->fresh, ADJ_REC, sp.fresh) != XXL_OK ||
		paths_ext_seed(p, &p->lv[cur], seed_put) != XXL_OK)
		return env->err.code;
	while (p->lv[cur].pushed > 0 && depth < p->max_depth)
	{
		uint64_t	level_n = p->lv[cur].pushed,
					pool_next_n;

		p->levels++;
		xxl_env_step(&p->env, "level", (uint32_t) p->levels, 0);
		if (load_level(p, &p->lv[cur], &copied) != XXL_OK ||
			expand_level(p, pool_cur, pool_n, &p->lv[cur], level_n, copied, &p->lv[1 - cur],
						 sp.pool, depth, &pool_next_n) != XXL_OK)
			return env->err.code;
		pool_cur = 1 - pool_cur;
		pool_n = pool_next_n;
		if (pool_n > p->pool_peak)
			p->pool_peak = pool_n;
		cur = 1 - cur;
		depth++;
	}
	xxl_spool_free(&p->pool[pool_cur]);
	return XXL_OK;
}

void
paths_mm_release(xxl_paths *p)
{
	xxl_env    *env = &p->env;

	xxl_spool_free(&p->pool[0]);
	xxl_spool_free(&p->pool[1]);
	xxl_spool_free(&p->level_copy);
	plevel_free(p, &p->fresh);
	if (p->loaded)
		xxl_env_free(env, p->loaded, p->loaded_bytes);
	p->loaded = NULL;
}
