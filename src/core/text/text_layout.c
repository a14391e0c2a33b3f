/*
 * text_layout.c — how a text operator splits its budget: the block of its
 * own spools (sorters choose their own), the least memory that leaves the
 * smallest sorter share (S0 of DC3, a fifth of the pool) room for a core
 * sorter, as the plan (xxl_env_plan) the environment is opened on.
 */
#include "core/text/text_internal.h"

/* the smallest sorter share is 24 % of the pool (S0 of DC3) */
#define MIN_SHARE_DIVISOR 5
/*
 * two own streams open at once, two blocks each, and as much again for the
 * block lists of the spools they read and write: a list past 512 blocks is
 * a log read through a page and a cursor, which nothing else set aside (4
 * MiB of text at 1MB failed in DC3's merge of level 0 for 4 kB of it)
 */
#define OWN_BUFFERS 8

size_t
xxl_sa_min_memory(void)
{
	size_t		need = xxl_sort_min_memory(XXL_ALIGN) * MIN_SHARE_DIVISOR +
		OWN_BUFFERS * XXL_ALIGN + XXL_ENV_SLACK;

	/* invert the pool: the spool allowance is memory / 16, the slack memory / 32 */
	return XXL_ROUND_UP(need * 32 / 29 + 1, XXL_ALIGN);
}

/*
 * The block of the own spools: sequential streams need no large blocks, so
 * their four buffers stay within 1/32 of the budget and the smallest sorter
 * share holds 16 of them.
 */
static size_t
own_block_for(size_t memory, size_t block)
{
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
		return 0;
	return block;
}

const xxl_env_plan text_plan = {"text", OWN_BUFFERS, xxl_sa_min_memory, own_block_for};
