/*
 * relabel.c — numbering arbitrary 64-bit ids densely with two sorts, the
 * step every external graph path starts with (xxl_graph.h step 1, the
 * external BFS / shortest paths): each edge puts its two endpoints into a
 * sorter S1 as (id key, edge << 1 | side); S1 in id order numbers the
 * distinct ids 0..n-1 (so dense order is id order) and sends each number
 * back by edge into S2; S2 then hands out the edges' dense pairs in edge
 * order, each end optionally with an attribute its id's callback chose (the
 * external BFS sends the node's cluster along that way, for free).  Record
 * layouts: graph_internal.h.
 */
#include "core/graph/graph_internal.h"

xxl_status
graph_put_endpoints(xxl_env *env, xxl_env_sorter *s1, uint64_t e, int64_t source,
					int64_t target)
{
	unsigned char r[16];

	g_put_be(r, g_id_key(source));
	g_put_be(r + 8, e << 1);
	if (xxl_env_sort_put(env, s1, r) != XXL_OK)
		return env->err.code;
	g_put_be(r, g_id_key(target));
	g_put_be(r + 8, (e << 1) | 1);
	return xxl_env_sort_put(env, s1, r);
}

xxl_status
graph_number_ids(xxl_env *env, xxl_env_sorter *s1, xxl_env_sorter *s2, size_t share,
				 uint64_t endpoints, graph_id_fn on_id, void *arg, bool with_attr, uint64_t *n)
{
	const unsigned char *r;
	unsigned char r2[24];
	uint64_t	prev = 0,
				attr = 0;
	int			got;

	*n = 0;
	if (xxl_env_sort_sort(env, s1) != XXL_OK ||
		xxl_env_sort_open(env, s2, share, 0, with_attr ? 24 : 16, 8, endpoints,
						  XXL_INPUT_BOUNDED) != XXL_OK)
		return env->err.code;
	while ((got = xxl_env_sort_next(env, s1, &r)) == 1)
	{
		uint64_t	k = g_get_be(r);

		if (*n == 0 || k != prev)
		{
			if (on_id(arg, g_key_id(k), *n, &attr) != XXL_OK)
				return env->err.code;
			prev = k;
			(*n)++;
		}
		memcpy(r2, r + 8, 8);
		g_put_u64(r2 + 8, *n - 1);
		g_put_u64(r2 + 16, attr);
		if (xxl_env_sort_put(env, s2, r2) != XXL_OK || xxl_env_poll(env))
			return env->err.code;
	}
	if (got < 0)
		return env->err.code;
	xxl_env_sort_close(env, s1, NULL, NULL);
	return xxl_env_sort_sort(env, s2);
}

int
graph_next_dense_pair(xxl_env *env, xxl_env_sorter *s2, uint64_t *e, uint64_t *du, uint64_t *dv,
					  uint64_t *attr)
{
	const unsigned char *r;
	uint64_t	k;
	int			got = xxl_env_sort_next(env, s2, &r);

	if (got <= 0)
		return got;
	k = g_get_be(r);
	*e = k >> 1;
	*du = g_get_u64(r + 8);
	if (attr)
		attr[0] = g_get_u64(r + 16);
	got = xxl_env_sort_next(env, s2, &r);
	if (got <= 0 || g_get_be(r) != (k | 1) || (k & 1))
	{
		if (got >= 0)
			xxl_error_set(&env->err, XXL_EIO, 0, "edge %llu lost an endpoint while relabeling",
						  (unsigned long long) *e);
		return -1;
	}
	*dv = g_get_u64(r + 8);
	if (attr)
		attr[1] = g_get_u64(r + 16);
	return 1;
}
