/*
 * analytics_memory_stream.c — MIS and coloring, semi-external without the
 * lists: where the ids and a word per node fit but the compressed
 * adjacency (8 bytes per edge) does not, the spooled edges go both ways,
 * as pairs of ranks, into a sorter (a->s), and the greedy pass reads each
 * node's neighbours from its output in ascending rank order instead of
 * from the lists.  The pass is the in-memory one (an_mem_next): the same
 * order, the same answer; duplicate arcs are skipped as the lists drop
 * them, and a self loop is no arc.
 */
#include "core/graph/analytics_memory.h"

#include <string.h>

/* what the sorter must have at least beside the nodes' arrays */
#define STREAM_SORT_LEAST (256 * 1024)

double
an_mem_stream_need(double nodes, double ids, double ends)
{
	/* ranking: rank -> id and the ranks beside the ends; then the marks or colors; the sort */
	return ends + ids + 4 * nodes + 4 * nodes + STREAM_SORT_LEAST;
}

/* The arc (u, v) into a->s, big-endian so that it sorts by u, then v. */
static inline xxl_status
push_arc(xxl_an *a, unsigned char *local, uint32_t u, uint32_t v)
{
	uint32_t	be[2] = {__builtin_bswap32(u), __builtin_bswap32(v)};
	unsigned char *r = xxl_env_sort_room(&a->s, local);

	memcpy(r, be, 8);
	return xxl_env_sort_push(&a->env, &a->s, r);
}

xxl_status
an_mem_stream_build(xxl_an *a)
{
	an_mem	   *k = a->mem;
	xxl_env    *env = &a->env;
	size_t		rank_bytes,
				share;
	uint32_t   *rank,
			   *pairs;
	uint64_t	got = 0;
	an_pass		pass;
	unsigned char local[8];
	xxl_status	rc = XXL_OK;

	if ((rank = an_mem_rank_ids(a, &rank_bytes)) == NULL)
		return an_fail(a);
	k->aux = an_alloc(a, k->n * sizeof(uint32_t), &k->aux_bytes);
	if (k->aux == NULL)
		goto fail;
	memset(k->aux, 0, k->aux_bytes);
	/* the sorter has the rest of the pool, for life (a core sorter) */
	share = env->pool > env->budget.used + 64 * 1024 ? env->pool - env->budget.used - 64 * 1024 : 0;
	if (xxl_env_sort_open(env, &a->s, share, 0, 8, 8, 2 * an_mem_edges(k), XXL_INPUT_BOUNDED) != XXL_OK ||
		an_pass_open(a, &pass, false) != XXL_OK)
		goto fail;
	while (rc == XXL_OK && (got = an_pass_next(a, &pass, &pairs)) != 0 && got != UINT64_MAX)
	{
		for (uint64_t i = 0; rc == XXL_OK && i < got; i++)
		{
			uint32_t	u = rank[pairs[2 * i]],
						v = rank[pairs[2 * i + 1]];

			if (u != v && (rc = push_arc(a, local, u, v)) == XXL_OK)
				rc = push_arc(a, local, v, u);
		}
		if (rc == XXL_OK && xxl_env_poll_n(env, got))
			rc = env->err.code;
	}
	if (an_pass_close(a, &pass, rc == XXL_OK && got == 0) != XXL_OK || rc != XXL_OK || got != 0)
		goto fail;
	xxl_env_free(env, rank, rank_bytes);
	an_mem_drop_edges(a);
	if (xxl_env_sort_sort(env, &a->s) != XXL_OK)
		return an_fail(a);
	a->stream_lists = true;
	k->have_arc = false;
	k->last_arc = UINT64_MAX;
	return XXL_OK;

fail:
	xxl_env_free(env, rank, rank_bytes);
	return an_fail(a);
}

/*
 * The next arc from v (its other end in *u): 1, 0 when v has no more, -1
 * on an error.  Repeats of an arc are skipped.
 */
static int
next_arc(xxl_an *a, uint32_t v, uint32_t *u)
{
	an_mem	   *k = a->mem;

	for (;;)
	{
		const unsigned char *r;
		uint32_t	be[2];
		uint64_t	key;
		int			got;

		if (!k->have_arc)
		{
			if ((got = xxl_env_sort_next(&a->env, &a->s, &r)) < 0)
				return -1;
			if (got == 0)
				return 0;
			memcpy(be, r, 8);
			k->arc[0] = __builtin_bswap32(be[0]);
			k->arc[1] = __builtin_bswap32(be[1]);
			k->have_arc = true;
		}
		if (k->arc[0] != v)
			return 0;
		k->have_arc = false;
		key = ((uint64_t) k->arc[0] << 32) | k->arc[1];
		if (key == k->last_arc)
			continue;
		k->last_arc = key;
		a->links++;
		*u = k->arc[1];
		return 1;
	}
}

/* Room for colors up to c in the stamps (they grow with the colors used). */
static bool
stamp_room(xxl_an *a, uint32_t c)
{
	an_mem	   *k = a->mem;
	size_t		have = k->stamp_bytes / sizeof(uint32_t),
				want = have ? have : 64;
	uint32_t   *fresh;

	if (c < have)
		return true;
	while (want <= c)
		want *= 2;
	fresh = xxl_env_realloc(&a->env, k->stamp, k->stamp_bytes, want * sizeof(uint32_t));
	if (fresh == NULL)
		return false;
	memset(fresh + have, 0xff, (want - have) * sizeof(uint32_t));
	k->stamp = fresh;
	k->stamp_bytes = want * sizeof(uint32_t);
	return true;
}

int
an_mem_stream_next(xxl_an *a, xxl_an_row *row)
{
	an_mem	   *k = a->mem;
	uint32_t	u;
	int			got;

	while (k->v < k->n)
	{
		uint32_t	v = (uint32_t) k->v++,
					degree = 0;

		row->v[0] = k->ids[v];
		if (a->op == XXL_AN_MIS)
		{
			bool		in = k->aux[v] == 0;

			while ((got = next_arc(a, v, &u)) == 1)
			{
				degree++;
				if (in)
					k->aux[u] = 1;
			}
		}
		else
		{
			/* coloring: stamp the smaller neighbours' colors */
			if (!stamp_room(a, a->colors + 2))
				return -1;
			while ((got = next_arc(a, v, &u)) == 1)
			{
				degree++;
				if (u < v)
					k->stamp[k->aux[u]] = v;
			}
			row->v[1] = an_mem_color_pick(a, v);
		}
		if (got < 0 || xxl_env_poll_n(&a->env, degree + 1))
			return -1;
		if (degree > a->max_degree)
			a->max_degree = degree;
		if (a->op == XXL_AN_MIS)
		{
			if (k->aux[v])
				continue;
			a->set_size++;
		}
		return 1;
	}
	return 0;
}
