/*
 * env_queue.c — the environment's external priority queue (xxl_env.h):
 * pq.h with a share of the operator's budget and blocks sized for what it
 * will hold.
 */
#include "core/xxl_env.h"

#include <string.h>

/*
 * Blocks as large as keep about 64 run readers in the queue (a run's block
 * list costs a bounded amount of memory however long it is: xxl_stream.h).
 * A record is rewritten once per merge it takes part in, about
 * log(runs written) / log(readers) times, so readers pay for themselves
 * down to small blocks, which the caller copies through the page cache
 * (xxl_io.h).
 */
static size_t
queue_block(xxl_env *env, size_t memory)
{
	size_t		block = XXL_ALIGN;

	while (block * 2 <= env->max_block && xxl_pq_min_memory(block * 2) <= memory &&
		   block * 2 * 2 * 64 <= memory / 2)
		block *= 2;
	return block;
}

xxl_status
xxl_env_queue_open(xxl_env *env, xxl_env_queue *gq, size_t memory, size_t rec_size,
				   size_t key_size)
{
	xxl_pq_config c;

	memset(gq, 0, sizeof(*gq));
	memory -= memory % XXL_ALIGN;
	if (xxl_env_reserve_share(env, memory, "priority queue") != XXL_OK)
		return env->err.code;
	memset(&c, 0, sizeof(c));
	c.memory = memory;
	c.record_size = rec_size;
	c.key_size = key_size;
	c.threads = env->threads;
	c.disk = env->disk;
	c.disk.block_size = queue_block(env, memory);
	c.disk.try_direct &= xxl_direct_pays(c.disk.block_size);
	c.cancel = env->cancel;
	c.cancel_arg = env->cancel_arg;
	gq->q = xxl_pq_create(&c, &env->err);
	if (gq->q == NULL)
	{
		xxl_env_release(env, memory);
		return env->err.code;
	}
	gq->memory = memory;
	xxl_env_share_add(env, gq->q, XXL_SHARE_QUEUE, memory);
	return XXL_OK;
}

xxl_status
xxl_env_queue_push(xxl_env *env, xxl_env_queue *gq, const void *rec)
{
	if (xxl_pq_push(gq->q, rec) != XXL_OK)
		return xxl_env_fail(env, xxl_pq_error(gq->q));
	return XXL_OK;
}

int
xxl_env_queue_top(xxl_env *env, xxl_env_queue *gq, const unsigned char **rec)
{
	const void *r;
	int			got = xxl_pq_top(gq->q, &r);

	if (got > 0)
		*rec = r;
	else if (got < 0)
		xxl_env_fail(env, xxl_pq_error(gq->q));
	return got;
}

int
xxl_env_queue_pop(xxl_env *env, xxl_env_queue *gq, void *out)
{
	int			got = xxl_pq_pop(gq->q, out);

	if (got < 0)
		xxl_env_fail(env, xxl_pq_error(gq->q));
	return got;
}

void
xxl_env_queue_io(const xxl_env_queue *gq, xxl_io_stats *acc)
{
	xxl_pq_stats st;

	if (gq->q == NULL)
		return;
	xxl_pq_get_stats(gq->q, &st);
	xxl_io_fold(acc, &st.io);
}

void
xxl_env_queue_close(xxl_env *env, xxl_env_queue *gq)
{
	xxl_pq_stats st;

	if (gq->q == NULL)
		return;
	xxl_pq_get_stats(gq->q, &st);
	xxl_io_fold(&env->done.io, &st.io);
	env->done.pq_pushes += st.pushes;
	env->done.pq_merges += st.merges;
	xxl_env_share_remove(env, gq->q);
	xxl_pq_destroy(gq->q);
	xxl_env_release(env, gq->memory);
	memset(gq, 0, sizeof(*gq));
}
