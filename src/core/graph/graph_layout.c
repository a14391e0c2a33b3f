/*
 * graph_layout.c — how a graph operator splits its budget: the block of its
 * own streams (a power of two: sequential streams need no large blocks),
 * the least memory that keeps half the pool able to take a sorter and a
 * queue, as the plan (xxl_env_plan) the environment is opened on.
 */
#include "core/graph/graph_internal.h"

/* own streams open at once, two buffers each */
#define OWN_BUFFERS (4 * 2)


/* Half the pool must take a sorter and a queue of the smallest block size. */
static size_t
half_pool_min(void)
{
	size_t		s = xxl_sort_min_memory(XXL_ALIGN);
	size_t		q = xxl_pq_min_memory(XXL_ALIGN);

	return (s > q ? s : q) + XXL_ALIGN;
}

size_t
xxl_graph_min_memory(void)
{
	size_t		m = 256 * 1024;

	while (xxl_env_pool_for(m, xxl_env_stream_block(m, XXL_ENV_DEFAULT_BLOCK), OWN_BUFFERS) / 3 <
		   half_pool_min())
		m += 16 * 1024;
	return m;
}

const xxl_env_plan graph_plan = {"graph", OWN_BUFFERS, xxl_graph_min_memory, xxl_env_stream_block};
