/*
 * text_layout.c — how a text operator splits its budget: the block of its
 * own spools (sorters choose their own), the least memory that leaves the
 * smallest sorter share (S0 of DC3, a fifth of the pool) room for a core
 * sorter, and the environment (xxl_env.h) set up on that plan.
 */
#include "text_internal.h"

/* the smallest sorter share is 24 % of the pool (S0 of DC3) */
#define MIN_SHARE_DIVISOR 5
/* two own streams open at once, two blocks each */
#define OWN_BUFFERS 4

size_t
text_env_min_memory(void)
{
	size_t		need = xxl_sort_min_memory(XXL_ALIGN) * MIN_SHARE_DIVISOR +
		OWN_BUFFERS * XXL_ALIGN + XXL_ENV_SLACK;

	/* invert the pool: the spool allowance is memory / 16, the slack memory / 32 */
	return XXL_ROUND_UP(need * 32 / 29 + 1, XXL_ALIGN);
}

size_t
xxl_sa_min_memory(void)
{
	return text_env_min_memory();
}

xxl_status
text_env_init(xxl_env *env, const xxl_sa_config *cfg)
{
	const xxl_resources *res = &cfg->res;
	size_t		block = res->disk.block_size ? res->disk.block_size : XXL_ENV_DEFAULT_BLOCK;
	size_t		memory = res->memory;

	memset(env, 0, sizeof(*env));
	if (block < XXL_ALIGN || block % XXL_ALIGN != 0)
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "block size %zu is not a positive multiple of %d", block, XXL_ALIGN);
	if (memory < text_env_min_memory())
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "memory budget of %zu bytes is below the minimum of %zu for text operators",
							 memory, text_env_min_memory());

	/*
	 * The block of the own spools: sequential streams need no large
	 * blocks, so their four buffers stay within 1/32 of the budget and the
	 * smallest sorter share holds 16 of them.
	 */
	while (block > XXL_ALIGN &&
		   (xxl_env_pool_for(memory, block, OWN_BUFFERS) / MIN_SHARE_DIVISOR <
			16 * block + XXL_ENV_SLACK || OWN_BUFFERS * block > memory / 32))
	{
		block /= 2;
		block -= block % XXL_ALIGN;
		if (block < XXL_ALIGN)
			block = XXL_ALIGN;
	}
	if (xxl_env_pool_for(memory, block, OWN_BUFFERS) / MIN_SHARE_DIVISOR <
		xxl_sort_min_memory(block))
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "memory budget of %zu bytes is too small for text operators", memory);
	return xxl_env_init(env, res, block, OWN_BUFFERS, "text");
}
