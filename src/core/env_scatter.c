/*
 * env_scatter.c — the environment's scatter (xxl_env.h): an external
 * permutation charged to the operator's budget with the memory its plan
 * needs, fed in batches and read record by record.
 */
#include "core/xxl_env.h"

#include <string.h>

#define SLOTS_BYTES (XXL_ENV_BATCH_BYTES / 4 * sizeof(uint64_t))

static int
read_scatter(void *part, const void **recs, size_t *count)
{
	return xxl_scatter_read(part, recs, count);
}

static xxl_scatter_config
scatter_config(xxl_env *env, size_t memory, size_t rec_size, uint64_t slots)
{
	xxl_scatter_config c;
	size_t		block = 0;

	memset(&c, 0, sizeof(c));
	c.memory = memory - memory % XXL_ALIGN;
	c.record_size = rec_size;
	c.slots = slots;
	/* as the sorts': the second core places the records */
	c.async = env->threads > 1;
	/* read once: what is read is room for the operator's other parts */
	c.consume = true;
	c.disk = env->disk;
	c.disk.block_size = env->max_block;
	/* small write buffers go through the page cache */
	if (c.disk.try_direct)
	{
		c.disk.try_direct = false;
		if (xxl_scatter_fits(&c, &block) && xxl_direct_pays(block))
		{
			c.disk.try_direct = true;
			if (!xxl_scatter_fits(&c, &block) || !xxl_direct_pays(block))
				c.disk.try_direct = false;
		}
	}
	c.cancel = env->cancel;
	c.cancel_arg = env->cancel_arg;
	return c;
}

bool
xxl_env_scat_fits(xxl_env *env, size_t memory, size_t rec_size, uint64_t slots)
{
	xxl_scatter_config c = scatter_config(env, memory, rec_size, slots);

	return xxl_scatter_fits(&c, NULL);
}

xxl_status
xxl_env_scat_error(xxl_env *env, xxl_env_scatter *ts)
{
	return xxl_env_fail(env, xxl_scatter_error(ts->s));
}

static void
free_batch(xxl_env *env, xxl_env_scatter *ts)
{
	if (ts->batch_slots)
		xxl_env_free(env, ts->batch_slots, SLOTS_BYTES);
	if (ts->batch_recs)
		xxl_env_free(env, ts->batch_recs, XXL_ENV_BATCH_BYTES);
	ts->batch_slots = NULL;
	ts->batch_recs = NULL;
}

xxl_status
xxl_env_scat_open(xxl_env *env, xxl_env_scatter *ts, size_t memory, size_t rec_size,
				  uint64_t slots)
{
	xxl_scatter_config c = scatter_config(env, memory, rec_size, slots);
	xxl_scatter_stats st;
	size_t		need;

	memset(ts, 0, sizeof(*ts));
	if (!xxl_scatter_fits(&c, NULL))
		return xxl_error_set(&env->err, XXL_ENOMEM, 0,
							 "memory budget of %zu bytes is too small for this %s: a permutation "
							 "of %llu records of %zu bytes does not fit %zu bytes",
							 env->budget.limit, env->noun, (unsigned long long) slots, rec_size,
							 c.memory);
	ts->s = xxl_scatter_create(&c, &env->err);
	if (ts->s == NULL)
		return env->err.code;
	/* the batch first: the reservation below must see what it took */
	ts->batch_slots = xxl_env_alloc(env, SLOTS_BYTES);
	ts->batch_recs = ts->batch_slots ? xxl_env_alloc(env, XXL_ENV_BATCH_BYTES) : NULL;
	need = XXL_ROUND_UP(xxl_scatter_memory(ts->s), XXL_ALIGN);
	if (ts->batch_recs == NULL || xxl_env_reserve(env, need, "permutation") != XXL_OK)
	{
		free_batch(env, ts);
		xxl_scatter_destroy(ts->s);
		memset(ts, 0, sizeof(*ts));
		return env->err.code;
	}
	ts->memory = need;
	ts->rec_size = rec_size;
	ts->batch_cap = XXL_ENV_BATCH_BYTES / rec_size;
	if (ts->batch_cap > XXL_ENV_BATCH_BYTES / 4)
		ts->batch_cap = XXL_ENV_BATCH_BYTES / 4;
	xxl_scatter_stats_get(ts->s, &st);
	if (st.block_size > env->largest_block)
		env->largest_block = st.block_size;
	xxl_batch_init(&ts->out, read_scatter, ts->s, rec_size);
	return XXL_OK;
}

xxl_status
xxl_env_scat_flush(xxl_env *env, xxl_env_scatter *ts)
{
	size_t		n = ts->batch;

	ts->batch = 0;
	if (n > 0 && xxl_scatter_put_many(ts->s, ts->batch_slots, ts->batch_recs, n) != XXL_OK)
		return xxl_env_scat_error(env, ts);
	return XXL_OK;
}

xxl_status
xxl_env_scat_finish(xxl_env *env, xxl_env_scatter *ts)
{
	if (ts->batch > 0 && xxl_env_scat_flush(env, ts) != XXL_OK)
		return env->err.code;
	if (xxl_scatter_finish(ts->s) != XXL_OK)
		return xxl_env_scat_error(env, ts);
	return XXL_OK;
}

void
xxl_env_scat_close(xxl_env *env, xxl_env_scatter *ts, uint64_t *io_acc, uint64_t *bytes_acc)
{
	xxl_scatter_stats st;

	if (ts->s == NULL)
		return;
	xxl_scatter_stats_get(ts->s, &st);
	xxl_io_fold(&env->done.io, &st.io);
	if (io_acc)
		for (int i = 0; i < st.io.ndisks; i++)
			*io_acc += st.io.disk[i].bytes_read + st.io.disk[i].bytes_written;
	env->done.scattered_bytes += ts->pushed * ts->rec_size;
	if (bytes_acc)
		*bytes_acc += ts->pushed * ts->rec_size;
	xxl_scatter_destroy(ts->s);
	free_batch(env, ts);
	xxl_env_release(env, ts->memory);
	memset(ts, 0, sizeof(*ts));
}
