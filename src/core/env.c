/*
 * env.c — the operator environment itself (xxl_env.h): the budget split,
 * reservations and the memory the operator really used, the cancel hook
 * and its owner, the lazily opened own spill files, and the I/O fold.
 * The parts it charges live beside it: env_sort.c, env_scatter.c,
 * env_queue.c, env_spool.c.
 */
#include "core/xxl_env.h"

#include <assert.h>
#include <omp.h>
#include <string.h>

size_t
xxl_env_stream_block(size_t memory, size_t max_block)
{
	size_t		b = XXL_ALIGN;

	while (b * 2 <= max_block && b * 2 <= memory / 128)
		b *= 2;
	return b;
}

size_t
xxl_env_pool_for(size_t memory, size_t block, int own_buffers)
{
	size_t		fixed = (size_t) own_buffers * block + XXL_ENV_SLACK + memory / 32 + memory / 16;

	return memory > fixed ? memory - fixed : 0;
}

size_t
xxl_env_slack(const xxl_env *env)
{
	return XXL_ENV_SLACK + env->budget.limit / 32;
}

size_t
xxl_env_pool_free(const xxl_env *env)
{
	size_t		reserve = env->budget.limit - env->pool,
				avail = xxl_budget_available(&env->budget);

	return avail > reserve ? avail - reserve : 0;
}

/* The hook the environment's parts poll (see xxl_env.cancel). */
static bool
env_cancel(void *arg)
{
	xxl_env    *env = arg;

	if (!pthread_equal(pthread_self(), env->owner))
		return __atomic_load_n(&env->stop, __ATOMIC_ACQUIRE) != 0;
	return xxl_env_host_stop(env);
}

xxl_status
xxl_env_open(xxl_env *env, const xxl_resources *res, const xxl_env_plan *plan)
{
	size_t		max_block = res->disk.block_size ? res->disk.block_size : XXL_ENV_DEFAULT_BLOCK;
	size_t		min_memory = plan->min_memory();
	size_t		block;
	int			own_buffers = plan->own_buffers;

	memset(env, 0, sizeof(*env));
	if (max_block < XXL_ALIGN || max_block % XXL_ALIGN != 0)
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "block size %zu is not a positive multiple of %d", max_block, XXL_ALIGN);
	if (res->memory < min_memory)
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "memory budget of %zu bytes is below the minimum of %zu for %s operators",
							 res->memory, min_memory, plan->noun);
	block = plan->own_block(res->memory, max_block);
	if (block == 0)
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "memory budget of %zu bytes is too small for %s operators",
							 res->memory, plan->noun);
	env->noun = plan->noun;
	xxl_budget_init(&env->budget, res->memory);
	env->disk = res->disk;
	env->disk.block_size = block;
	/*
	 * Every part's files in one pool: the host's, which the operator's other
	 * engine objects share too, or one of its own (none: not shared)
	 */
	env->own_pool = res->disk.pool == NULL;
	if (env->own_pool)
		env->disk.pool = xxl_file_pool_create();
	env->max_block = max_block;
	env->threads = res->threads > 0 ? res->threads : omp_get_max_threads();
	env->host_cancel = res->cancel;
	env->host_cancel_arg = res->cancel_arg;
	env->progress = res->progress;
	env->owner = pthread_self();
	if (res->cancel)
	{
		env->cancel = env_cancel;
		env->cancel_arg = env;
	}
	env->pool = xxl_env_pool_for(res->memory, block, own_buffers);
	env->pool -= env->pool % XXL_ALIGN;
	env->spool_allowance = res->memory / 16;
	return XXL_OK;
}

/* The environment was copied to where it lives now: re-point the cancel hook. */
static void
env_relocate(xxl_env *env)
{
	if (env->cancel == env_cancel)
		env->cancel_arg = env;
}

void *
xxl_env_new_object(const xxl_resources *res, const xxl_env_plan *plan, size_t size,
				   size_t env_offset, xxl_error *err)
{
	xxl_env		env;
	char	   *obj;

	if (xxl_env_open(&env, res, plan) != XXL_OK)
	{
		*err = env.err;
		return NULL;
	}
	obj = xxl_budget_alloc(&env.budget, size, err);
	if (obj == NULL)
	{
		xxl_env_close(&env);
		return NULL;
	}
	memset(obj, 0, size);
	memcpy(obj + env_offset, &env, sizeof(env));
	env_relocate((xxl_env *) (obj + env_offset));
	return obj;
}

void
xxl_env_close(xxl_env *env)
{
	xxl_disks_close(env->disks);
	env->disks = NULL;
	if (env->own_pool)
		xxl_file_pool_destroy(env->disk.pool);
	env->disk.pool = NULL;
}

bool
xxl_env_host_stop(xxl_env *env)
{
	/* the host is never asked from another thread: a worker sees the flag */
	assert(pthread_equal(pthread_self(), env->owner));
	if (__atomic_load_n(&env->stop, __ATOMIC_ACQUIRE))
		return true;
	if (!pthread_equal(pthread_self(), env->owner))
		return false;
	if (env->host_cancel == NULL || !env->host_cancel(env->host_cancel_arg))
		return false;
	__atomic_store_n(&env->stop, 1, __ATOMIC_RELEASE);
	return true;
}

bool
xxl_env_canceled(xxl_env *env)
{
	return xxl_poll_cancel(env->cancel, env->cancel_arg, &env->err, "operator");
}

void
xxl_env_step(xxl_env *env, const char *step, uint32_t step_no, uint32_t steps)
{
	if (env->progress == NULL || !pthread_equal(pthread_self(), env->owner))
		return;
	env->progress->runs = env->done.runs;
	env->progress->memory_peak = xxl_env_used_peak(env);
	xxl_progress_step(env->progress, step, step_no, steps);
}

xxl_status
xxl_env_open_disks(xxl_env *env)
{
	if (env->disks == NULL)
	{
		xxl_disk_config c = env->disk;

		c.try_direct &= xxl_direct_pays(c.block_size);
		env->disks = xxl_disks_open(&c, &env->err);
		if (env->disks == NULL)
			return env->err.code;
	}
	return XXL_OK;
}

xxl_status
xxl_env_fail(xxl_env *env, const xxl_error *e)
{
	return xxl_error_set(&env->err, e->code ? e->code : XXL_EIO, e->sys_errno, "%s", e->message);
}

/* Memory in use --------------------------------------------------------------- */

/* What the operator uses now: the budget in use, live shares at their peaks. */
static uint64_t
used_now(const xxl_env *env)
{
	uint64_t	now = env->budget.used;

	for (int i = 0; i < env->nshares; i++)
	{
		const xxl_env_share *sh = &env->shares[i];
		uint64_t	touched;

		if (sh->kind == XXL_SHARE_QUEUE)
		{
			xxl_pq_stats st;

			xxl_pq_get_stats((xxl_pq *) sh->part, &st);
			touched = st.memory_peak;
		}
		else
		{
			xxl_sort_stats st;

			xxl_sorter_stats((const xxl_sorter *) sh->part, &st);
			touched = st.memory_peak;
		}
		now -= sh->memory;
		now += touched < sh->memory ? touched : sh->memory;
	}
	return now;
}

static void
sample_used(xxl_env *env)
{
	uint64_t	now = used_now(env);

	if (now > env->used_peak)
		env->used_peak = now;
}

uint64_t
xxl_env_used_peak(const xxl_env *env)
{
	uint64_t	now = used_now(env);

	return now > env->used_peak ? now : env->used_peak;
}

void
xxl_env_share_add(xxl_env *env, const void *part, xxl_env_share_kind kind, size_t memory)
{
	/* a share beyond the registry stays counted whole, as reserved */
	if (env->nshares < XXL_ENV_MAX_SHARES)
		env->shares[env->nshares++] = (xxl_env_share) {part, kind, memory};
	sample_used(env);
}

void
xxl_env_share_remove(xxl_env *env, const void *part)
{
	sample_used(env);
	for (int i = 0; i < env->nshares; i++)
		if (env->shares[i].part == part)
		{
			env->shares[i] = env->shares[--env->nshares];
			break;
		}
}

xxl_status
xxl_env_reserve(xxl_env *env, size_t bytes, const char *what)
{
	if (xxl_budget_reserve(&env->budget, bytes, what, &env->err) != XXL_OK)
		return env->err.code;
	sample_used(env);
	return XXL_OK;
}

xxl_status
xxl_env_reserve_share(xxl_env *env, size_t bytes, const char *what)
{
	/* not sampled: the share is counted as touched once it is registered */
	return xxl_budget_reserve(&env->budget, bytes, what, &env->err);
}

void
xxl_env_release(xxl_env *env, size_t bytes)
{
	/* no sample: what is released was sampled when it was reserved or touched */
	xxl_budget_release(&env->budget, bytes);
}

xxl_status
xxl_env_resize(xxl_env *env, size_t *held, size_t want, const char *what)
{
	want = XXL_ROUND_UP(want, XXL_ALIGN);
	if (want > *held)
	{
		if (xxl_env_reserve(env, want - *held, what) != XXL_OK)
			return env->err.code;
	}
	else
		xxl_env_release(env, *held - want);
	*held = want;
	return XXL_OK;
}

void *
xxl_env_alloc(xxl_env *env, size_t bytes)
{
	void	   *p = xxl_budget_alloc(&env->budget, bytes ? bytes : 1, &env->err);

	sample_used(env);
	return p;
}

void
xxl_env_free(xxl_env *env, void *p, size_t bytes)
{
	sample_used(env);
	xxl_budget_free(&env->budget, p, bytes ? bytes : 1);
}

void *
xxl_env_realloc(xxl_env *env, void *p, size_t old_bytes, size_t new_bytes)
{
	return xxl_budget_realloc(&env->budget, p, old_bytes, new_bytes, &env->err);
}

/* I/O --------------------------------------------------------------------------- */

void
xxl_io_fold(xxl_io_stats *acc, const xxl_io_stats *io)
{
	bool		moved = false;

	for (int i = 0; i < io->ndisks; i++)
		moved |= io->disk[i].bytes_read > 0 || io->disk[i].bytes_written > 0;
	if (!moved)
		return;					/* never spilled: its files say nothing */
	acc->direct = acc->ndisks == 0 ? io->direct : acc->direct && io->direct;
	if (io->ndisks > acc->ndisks)
		acc->ndisks = io->ndisks;
	for (int i = 0; i < io->ndisks; i++)
	{
		acc->disk[i].bytes_read += io->disk[i].bytes_read;
		acc->disk[i].bytes_written += io->disk[i].bytes_written;
		acc->disk[i].reads += io->disk[i].reads;
		acc->disk[i].writes += io->disk[i].writes;
	}
	acc->wait_read_ns += io->wait_read_ns;
	acc->wait_write_ns += io->wait_write_ns;
	acc->spill_bytes_peak += io->spill_bytes_peak;
}

void
xxl_env_io(const xxl_env *env, xxl_io_stats *out)
{
	*out = env->done.io;
	if (env->disks)
	{
		xxl_io_stats io;

		xxl_disks_stats(env->disks, &io);
		xxl_io_fold(out, &io);
	}
}

void
xxl_env_io_sum(const xxl_env *env, uint64_t *read, uint64_t *written, uint64_t *wait_ns,
			   bool *direct)
{
	xxl_io_stats io;

	xxl_env_io(env, &io);
	*read = *written = 0;
	for (int i = 0; i < io.ndisks; i++)
	{
		*read += io.disk[i].bytes_read;
		*written += io.disk[i].bytes_written;
	}
	*wait_ns = io.wait_read_ns + io.wait_write_ns;
	*direct = io.ndisks > 0 && io.direct;
}
