/*
 * text_env.c — the environment of a text operator: how its budget is split
 * (own stream buffers, an allowance for in-memory spools, a pool for sorters
 * and in-memory phases), which block size it uses, sorters charged to the
 * budget, byte spools and their readers.
 *
 * Each sorter owns its memory share for its whole life (the core sorter
 * allocates its load region at creation), so the operator reserves the share
 * in its own budget while the sorter lives: the budget's high-water mark is
 * then an upper bound of what the operator really used.
 */
#include "text_internal.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BLOCK (2 * 1024 * 1024)
#define OWN_SLACK (64 * 1024)
/* the smallest sorter share is 24 % of the pool (S0 of DC3) */
#define MIN_SHARE_DIVISOR 5
/* the merge fan-in sorter blocks are sized for (tsort_pick_block) */
#define SORT_FAN_IN 64
/* smaller sorter blocks use buffered I/O (see tsort_open) */
#define DIRECT_BLOCK_MIN (128 * 1024)
/* sorters below this share run on one thread (see tsort_open) */
#define PARALLEL_SORTER_MIN (64 * 1024 * 1024)

/*
 * Buffers for own streams (two of them at once, two blocks each) and slack
 * for what grows with the recursion depth and with n / B (level structs,
 * block lists of spools).
 */
static size_t
own_reserve(size_t memory, size_t block)
{
	return 4 * block + OWN_SLACK + memory / 32;
}

static size_t
pool_for(size_t memory, size_t block)
{
	size_t		fixed = own_reserve(memory, block) + memory / 16;

	return memory > fixed ? memory - fixed : 0;
}

size_t
text_env_min_memory(void)
{
	size_t		need = xxl_sort_min_memory(XXL_ALIGN) * MIN_SHARE_DIVISOR + own_reserve(0, XXL_ALIGN);

	/* invert pool_for: the spool allowance is memory / 16, the slack memory / 32 */
	return XXL_ROUND_UP(need * 32 / 29 + 1, XXL_ALIGN);
}

size_t
text_env_slack(const text_env *env)
{
	return OWN_SLACK + env->budget.limit / 32;
}

size_t
xxl_sa_min_memory(void)
{
	return text_env_min_memory();
}

/* The hook the environment's sorts and scatters poll (see text_env.cancel). */
static bool
env_cancel(void *arg)
{
	text_env   *env = arg;

	if (!pthread_equal(pthread_self(), env->owner))
		return __atomic_load_n(&env->stop, __ATOMIC_ACQUIRE) != 0;
	return text_env_host_stop(env);
}

xxl_status
text_env_init(text_env *env, const xxl_sa_config *cfg)
{
	size_t		block = cfg->disk.block_size ? cfg->disk.block_size : DEFAULT_BLOCK;
	size_t		memory = cfg->memory;

	memset(env, 0, sizeof(*env));
	if (block < XXL_ALIGN || block % XXL_ALIGN != 0)
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "block size %zu is not a positive multiple of %d", block, XXL_ALIGN);
	if (memory < text_env_min_memory())
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "memory budget of %zu bytes is below the minimum of %zu for text operators",
							 memory, text_env_min_memory());

	/*
	 * The block of the own spools (sorters choose their own): sequential
	 * streams need no large blocks, so their four buffers stay within 1/32
	 * of the budget and the smallest sorter share holds 16 of them.
	 */
	while (block > XXL_ALIGN &&
		   (pool_for(memory, block) / MIN_SHARE_DIVISOR < 16 * block + OWN_SLACK ||
			4 * block > memory / 32))
	{
		block /= 2;
		block -= block % XXL_ALIGN;
		if (block < XXL_ALIGN)
			block = XXL_ALIGN;
	}
	if (pool_for(memory, block) / MIN_SHARE_DIVISOR < xxl_sort_min_memory(block))
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "memory budget of %zu bytes is too small for text operators", memory);
	xxl_budget_init(&env->budget, memory);
	env->disk = cfg->disk;
	env->disk.block_size = block;
	/* the operator's own pool, for every sort's, scatter's and spool's files (none: not reused) */
	env->disk.pool = xxl_file_pool_create();
	env->max_block = cfg->disk.block_size ? cfg->disk.block_size : DEFAULT_BLOCK;
	env->threads = cfg->threads > 0 ? cfg->threads : omp_get_max_threads();
	env->host_cancel = cfg->cancel;
	env->host_cancel_arg = cfg->cancel_arg;
	env->owner = pthread_self();
	if (cfg->cancel)
	{
		env->cancel = env_cancel;
		env->cancel_arg = env;
	}
	env->pool = pool_for(memory, block);
	env->spool_allowance = memory / 16;
	return XXL_OK;
}

void
text_env_close(text_env *env)
{
	xxl_disks_close(env->disks);
	env->disks = NULL;
	xxl_file_pool_destroy(env->disk.pool);
	env->disk.pool = NULL;
}

bool
text_env_host_stop(text_env *env)
{
	if (__atomic_load_n(&env->stop, __ATOMIC_ACQUIRE))
		return true;
	if (env->host_cancel == NULL || !env->host_cancel(env->host_cancel_arg))
		return false;
	__atomic_store_n(&env->stop, 1, __ATOMIC_RELEASE);
	return true;
}

bool
text_env_canceled(text_env *env)
{
	return xxl_poll_cancel(env->cancel, env->cancel_arg, &env->err, "operator");
}

xxl_status
text_env_open_disks(text_env *env)
{
	if (env->disks == NULL)
	{
		env->disks = xxl_disks_open(&env->disk, &env->err);
		if (env->disks == NULL)
			return env->err.code;
	}
	return XXL_OK;
}

void
text_env_io(const text_env *env, uint64_t *read, uint64_t *written)
{
	*read = env->sort_read;
	*written = env->sort_written;
	if (env->disks)
	{
		xxl_io_stats io;

		xxl_disks_stats(env->disks, &io);
		for (int i = 0; i < io.ndisks; i++)
		{
			*read += io.disk[i].bytes_read;
			*written += io.disk[i].bytes_written;
		}
	}
}

uint64_t
text_env_io_wait(const text_env *env)
{
	uint64_t	ns = env->sort_wait_ns;

	if (env->disks)
	{
		xxl_io_stats io;

		xxl_disks_stats(env->disks, &io);
		ns += io.wait_read_ns + io.wait_write_ns;
	}
	return ns;
}

bool
text_env_io_direct(const text_env *env)
{
	int			state = env->sort_direct;

	if (env->disks)
		state = !xxl_disks_direct(env->disks) ? -1 : state == 0 ? 1 : state;
	return state == 1;
}

/* Sorters ---------------------------------------------------------------- */

xxl_status
tsort_pick_block(text_env *env, size_t memory, size_t rec_size, uint64_t records, size_t *block_out)
{
	size_t		block = env->max_block;
	uint64_t	nbytes = records * rec_size;

	/*
	 * As large as allowed while the merge keeps a fan-in of about
	 * SORT_FAN_IN, larger if the run metadata needs it (then the budget is
	 * tight for this input and the fan-in drops).  With a fan-in of 16, 2 MB
	 * blocks at a 60 MB budget merged DC3's sorters in two passes: 298
	 * bytes of I/O per text byte instead of 230 with 256 kB blocks.
	 */
	memory -= memory % XXL_ALIGN;
	if (records == 0)
	{
		/* size unknown: the largest block, which takes the most data */
		block = xxl_sort_max_block(memory);
		if (block > env->max_block)
			block = env->max_block - env->max_block % XXL_ALIGN;
		*block_out = block < XXL_ALIGN ? XXL_ALIGN : block;
		return XXL_OK;
	}
	while (block > XXL_ALIGN && block * SORT_FAN_IN + 64 * 1024 > memory)
		block /= 2;
	block = block < XXL_ALIGN ? XXL_ALIGN : block - block % XXL_ALIGN;
	while (!xxl_sort_fits(nbytes, memory, block, rec_size))
	{
		size_t		largest = xxl_sort_max_block(memory);

		if (block < largest && block * 2 > largest)
			block = largest;	/* the last resort need not be a power of 2 */
		else
			block *= 2;
		if (xxl_sort_min_memory(block) > memory)
			return xxl_error_set(&env->err, XXL_ENOMEM, 0,
								 "memory budget of %zu bytes is too small for this text: a sorter "
								 "of %zu bytes cannot take %llu bytes (the sorter keeps its run "
								 "list in memory)", env->budget.limit, memory,
								 (unsigned long long) nbytes);
	}
	*block_out = block;
	return XXL_OK;
}

static xxl_dsort_config
dsort_config(text_env *env, size_t memory, size_t output_memory, size_t rec_size, size_t key_size,
			 uint64_t records, bool presampled)
{
	xxl_dsort_config c;

	memset(&c, 0, sizeof(c));
	c.memory = memory - memory % XXL_ALIGN;
	c.output_memory = output_memory - output_memory % XXL_ALIGN;
	c.record_size = rec_size;
	c.key_size = key_size;
	c.records = records;
	c.presampled = presampled;
	/* DC3 produces the records on its thread: the second core distributes */
	c.async = env->threads > 1;
	c.disk = env->disk;
	c.disk.block_size = env->max_block;
	c.cancel = env->cancel;
	c.cancel_arg = env->cancel_arg;
	return c;
}

static bool
dsort_usable(text_env *env, size_t memory, size_t output_memory, size_t rec_size, size_t key_size,
			 uint64_t records, bool presampled)
{
	xxl_dsort_config c = dsort_config(env, memory, output_memory, rec_size, key_size, records,
									  presampled);

	return records > 0 && key_size <= XXL_DSORT_MAX_KEY && rec_size <= XXL_DSORT_MAX_RECORD &&
		xxl_dsort_fits(&c);
}

uint64_t
tsort_plan_stride(text_env *env, size_t memory, size_t output_memory, size_t rec_size,
				  size_t key_size, uint64_t records)
{
	xxl_dsort_config c;

	if (output_memory == 0 || output_memory > memory)
		output_memory = memory;
	if (!dsort_usable(env, memory, output_memory, rec_size, key_size, records, true))
		return 0;
	c = dsort_config(env, memory, output_memory, rec_size, key_size, records, true);
	return xxl_dsort_plan_stride(&c);
}

bool
tsort_fits(text_env *env, size_t memory, size_t output_memory, size_t rec_size, size_t key_size,
		   uint64_t records)
{
	size_t		block;
	xxl_error	saved = env->err;
	bool		ok;

	if (output_memory == 0 || output_memory > memory)
		output_memory = memory;
	if (dsort_usable(env, memory, output_memory, rec_size, key_size, records, false))
		return true;
	ok = tsort_pick_block(env, output_memory - output_memory % XXL_ALIGN, rec_size, records,
						  &block) == XXL_OK;
	env->err = saved;
	return ok;
}

xxl_status
tsort_error(text_env *env, text_sorter *ts)
{
	const xxl_error *e = ts->d ? xxl_dsort_error(ts->d) : xxl_sorter_error(ts->s);

	return xxl_error_set(&env->err, e->code ? e->code : XXL_EIO, e->sys_errno, "%s", e->message);
}

/* Hold `want` bytes of the budget for the sort from now on. */
static xxl_status
tsort_charge(text_env *env, text_sorter *ts, size_t want)
{
	xxl_budget *b = &env->budget;

	want = XXL_ROUND_UP(want, XXL_ALIGN);
	if (want > ts->memory)
	{
		if (want - ts->memory > xxl_budget_available(b))
			return xxl_error_set(&env->err, XXL_ENOMEM, 0,
								 "memory budget of %zu bytes exhausted (%zu in use, %zu more for "
								 "a sort)", b->limit, b->used, want - ts->memory);
		b->used += want - ts->memory;
		if (b->used > b->peak)
			b->peak = b->used;
	}
	else
		b->used -= ts->memory - want;
	ts->memory = want;
	return XXL_OK;
}

static xxl_status
open_core_sorter(text_env *env, text_sorter *ts, size_t memory, size_t rec_size, size_t key_size,
				 uint64_t records)
{
	xxl_sort_config c;
	xxl_budget *b = &env->budget;
	size_t		block;

	memory -= memory % XXL_ALIGN;
	if (memory > xxl_budget_available(b))
		return xxl_error_set(&env->err, XXL_ENOMEM, 0,
							 "memory budget of %zu bytes exhausted (%zu in use, %zu more for a sorter)",
							 b->limit, b->used, memory);
	if (tsort_pick_block(env, memory, rec_size, records, &block) != XXL_OK)
		return env->err.code;
	memset(&c, 0, sizeof(c));
	c.memory = memory;
	c.record_size = rec_size;
	c.key_size = key_size;
	/*
	 * Small sorters sort and merge on one thread: their loads and output
	 * batches are so small that OpenMP's fork/join and its spinning idle
	 * threads (which take the core from the I/O threads and the operator
	 * consuming the output) cost more than the second thread gains: a
	 * quarter of the time at 3 MB shares on two cores.
	 */
	c.threads = memory >= PARALLEL_SORTER_MIN ? env->threads : 1;
	c.disk = env->disk;
	c.disk.block_size = block;
	/*
	 * Small blocks (small shares keep a fan-in of 16) go through the page
	 * cache: O_DIRECT requests of a few dozen kB with one or two in flight
	 * are latency-bound, while the kernel's readahead and writeback
	 * coalesce them.
	 */
	if (block < DIRECT_BLOCK_MIN)
		c.disk.try_direct = false;
	c.cancel = env->cancel;
	c.cancel_arg = env->cancel_arg;
	ts->s = xxl_sorter_create(&c, &env->err);
	if (ts->s == NULL)
		return env->err.code;
	if (block > env->largest_block)
		env->largest_block = block;
	return tsort_charge(env, ts, memory);
}

xxl_status
tsort_open(text_env *env, text_sorter *ts, size_t memory, size_t output_memory, size_t rec_size,
		   size_t key_size, uint64_t records, tsort_input in)
{
	bool		presampled = in == TSORT_PRESAMPLED;

	memset(ts, 0, sizeof(*ts));
	ts->rec_size = rec_size;
	if (output_memory == 0 || output_memory > memory)
		output_memory = memory;
	/* a presampled sort that does not fit is tried staged */
	if (presampled && !dsort_usable(env, memory, output_memory, rec_size, key_size, records, true))
		presampled = false;
	if (in != TSORT_UNBOUNDED &&
		dsort_usable(env, memory, output_memory, rec_size, key_size, records, presampled))
	{
		xxl_dsort_config c = dsort_config(env, memory, output_memory, rec_size, key_size, records,
										  presampled);
		size_t		input;

		ts->d = xxl_dsort_create(&c, &env->err);
		if (ts->d == NULL)
			return env->err.code;
		ts->batch_recs = xxl_budget_alloc(&env->budget, TEXT_BATCH_BYTES, &env->err);
		if (ts->batch_recs == NULL)
		{
			xxl_dsort_destroy(ts->d);
			ts->d = NULL;
			return env->err.code;
		}
		ts->batch_cap = TEXT_BATCH_BYTES / rec_size;
		xxl_dsort_phase_memory(ts->d, &input, &ts->distribute, &ts->output);
		return tsort_charge(env, ts, input);
	}
	return open_core_sorter(env, ts, output_memory, rec_size, key_size, records);
}

xxl_status
tsort_flush(text_env *env, text_sorter *ts)
{
	size_t		n = ts->batch;

	ts->batch = 0;
	if (n > 0 && xxl_dsort_put_many(ts->d, ts->batch_recs, n) != XXL_OK)
		return tsort_error(env, ts);
	return XXL_OK;
}

xxl_status
tsort_sort(text_env *env, text_sorter *ts)
{
	if (ts->batch > 0 && tsort_flush(env, ts) != XXL_OK)
		return env->err.code;
	if (ts->s)
	{
		if (xxl_sorter_sort(ts->s) != XXL_OK)
			return tsort_error(env, ts);
		return XXL_OK;
	}
	else
	{
		xxl_dsort_stats st;

		if (tsort_charge(env, ts, ts->distribute) != XXL_OK)
			return env->err.code;
		if (xxl_dsort_sort(ts->d) != XXL_OK)
			return tsort_error(env, ts);
		xxl_dsort_stats_get(ts->d, &st);
		if (st.block_size > env->largest_block)
			env->largest_block = st.block_size;
		return tsort_charge(env, ts, ts->output);
	}
}

int
tsort_refill(text_env *env, text_sorter *ts)
{
	const void *recs;
	size_t		count = 1;
	int			got = ts->d ? xxl_dsort_read(ts->d, &recs, &count)
		: xxl_sorter_next_many(ts->s, &recs, SIZE_MAX, &count);

	if (got < 0)
	{
		tsort_error(env, ts);
		return -1;
	}
	if (got == 0)
		return 0;
	ts->p = recs;
	ts->left = count;
	return 1;
}

static void
add_io(text_env *env, const xxl_io_stats *io, uint64_t *acc)
{
	for (int i = 0; i < io->ndisks; i++)
	{
		env->sort_read += io->disk[i].bytes_read;
		env->sort_written += io->disk[i].bytes_written;
		if (acc)
			*acc += io->disk[i].bytes_read + io->disk[i].bytes_written;
	}
	env->sort_wait_ns += io->wait_read_ns + io->wait_write_ns;
	if (io->ndisks > 0 && (io->disk[0].bytes_written > 0 || io->disk[0].bytes_read > 0))
		env->sort_direct = !io->direct ? -1 : env->sort_direct == 0 ? 1 : env->sort_direct;
}

uint64_t
tsort_overfull(const text_sorter *ts)
{
	xxl_dsort_stats st;

	if (ts->d == NULL)
		return 0;
	xxl_dsort_stats_get(ts->d, &st);
	return st.overflows;
}

void
tsort_close(text_env *env, text_sorter *ts, uint64_t *io_acc, uint64_t *sorted_acc)
{
	if (ts->s == NULL && ts->d == NULL)
		return;
	if (ts->s)
	{
		xxl_sort_stats st;

		xxl_sorter_stats(ts->s, &st);
		add_io(env, &st.io, io_acc);
		env->runs += st.runs;
		if (st.merge_passes > env->max_passes)
			env->max_passes = st.merge_passes;
		xxl_sorter_destroy(ts->s);
	}
	else
	{
		xxl_dsort_stats st;

		xxl_dsort_stats_get(ts->d, &st);
		add_io(env, &st.io, io_acc);
		/* buckets are its runs; each record is distributed once */
		env->runs += st.buckets;
		if (st.buckets > 0 && env->max_passes < 1)
			env->max_passes = 1;
		xxl_dsort_destroy(ts->d);
	}
	env->sorted_bytes += ts->pushed * ts->rec_size;
	if (sorted_acc)
		*sorted_acc += ts->pushed * ts->rec_size;
	xxl_budget_free(&env->budget, ts->batch_recs, TEXT_BATCH_BYTES);
	env->budget.used -= ts->memory;
	memset(ts, 0, sizeof(*ts));
}

/* Scatters --------------------------------------------------------------- */

static xxl_scatter_config
scatter_config(text_env *env, size_t memory, size_t rec_size, uint64_t slots)
{
	xxl_scatter_config c;
	size_t		block = 0;

	memset(&c, 0, sizeof(c));
	c.memory = memory - memory % XXL_ALIGN;
	c.record_size = rec_size;
	c.slots = slots;
	/* as the sorts': the second core places the records */
	c.async = env->threads > 1;
	c.disk = env->disk;
	c.disk.block_size = env->max_block;
	/* small write buffers go through the page cache (see tsort_open) */
	if (c.disk.try_direct)
	{
		c.disk.try_direct = false;
		if (xxl_scatter_fits(&c, &block) && block >= DIRECT_BLOCK_MIN)
		{
			c.disk.try_direct = true;
			if (!xxl_scatter_fits(&c, &block) || block < DIRECT_BLOCK_MIN)
				c.disk.try_direct = false;
		}
	}
	c.cancel = env->cancel;
	c.cancel_arg = env->cancel_arg;
	return c;
}

bool
tscat_fits(text_env *env, size_t memory, size_t rec_size, uint64_t slots)
{
	xxl_scatter_config c = scatter_config(env, memory, rec_size, slots);

	return xxl_scatter_fits(&c, NULL);
}

xxl_status
tscat_error(text_env *env, text_scatter *ts)
{
	const xxl_error *e = xxl_scatter_error(ts->s);

	return xxl_error_set(&env->err, e->code ? e->code : XXL_EIO, e->sys_errno, "%s", e->message);
}

xxl_status
tscat_open(text_env *env, text_scatter *ts, size_t memory, size_t rec_size, uint64_t slots)
{
	xxl_scatter_config c = scatter_config(env, memory, rec_size, slots);
	xxl_budget *b = &env->budget;
	xxl_scatter_stats st;

	memset(ts, 0, sizeof(*ts));
	if (!xxl_scatter_fits(&c, NULL))
		return xxl_error_set(&env->err, XXL_ENOMEM, 0,
							 "memory budget of %zu bytes is too small for this text: a permutation "
							 "of %llu records of %zu bytes does not fit %zu bytes", b->limit,
							 (unsigned long long) slots, rec_size, c.memory);
	ts->s = xxl_scatter_create(&c, &env->err);
	if (ts->s == NULL)
		return env->err.code;
	/* the batch first: the check below must see what it took */
	ts->batch_slots = xxl_budget_alloc(b, TEXT_BATCH_BYTES / 4 * sizeof(uint64_t), &env->err);
	ts->batch_recs = ts->batch_slots ? xxl_budget_alloc(b, TEXT_BATCH_BYTES, &env->err) : NULL;
	ts->memory = XXL_ROUND_UP(xxl_scatter_memory(ts->s), XXL_ALIGN);
	if (ts->batch_recs == NULL || ts->memory > xxl_budget_available(b))
	{
		if (ts->batch_recs != NULL)
			xxl_error_set(&env->err, XXL_ENOMEM, 0,
						  "memory budget of %zu bytes exhausted (%zu in use, %zu more for a "
						  "permutation)", b->limit, b->used, ts->memory);
		xxl_budget_free(b, ts->batch_slots, TEXT_BATCH_BYTES / 4 * sizeof(uint64_t));
		xxl_budget_free(b, ts->batch_recs, TEXT_BATCH_BYTES);
		xxl_scatter_destroy(ts->s);
		memset(ts, 0, sizeof(*ts));
		return env->err.code;
	}
	ts->rec_size = rec_size;
	ts->batch_cap = TEXT_BATCH_BYTES / rec_size;
	if (ts->batch_cap > TEXT_BATCH_BYTES / 4)
		ts->batch_cap = TEXT_BATCH_BYTES / 4;
	xxl_scatter_stats_get(ts->s, &st);
	if (st.block_size > env->largest_block)
		env->largest_block = st.block_size;
	b->used += ts->memory;
	if (b->used > b->peak)
		b->peak = b->used;
	return XXL_OK;
}

xxl_status
tscat_flush(text_env *env, text_scatter *ts)
{
	size_t		n = ts->batch;

	ts->batch = 0;
	if (n > 0 && xxl_scatter_put_many(ts->s, ts->batch_slots, ts->batch_recs, n) != XXL_OK)
		return tscat_error(env, ts);
	return XXL_OK;
}

xxl_status
tscat_finish(text_env *env, text_scatter *ts)
{
	if (ts->batch > 0 && tscat_flush(env, ts) != XXL_OK)
		return env->err.code;
	if (xxl_scatter_finish(ts->s) != XXL_OK)
		return tscat_error(env, ts);
	return XXL_OK;
}

int
tscat_refill(text_env *env, text_scatter *ts)
{
	const void *recs;
	size_t		count;
	int			got = xxl_scatter_read(ts->s, &recs, &count);

	if (got < 0)
	{
		tscat_error(env, ts);
		return -1;
	}
	if (got == 0)
		return 0;
	ts->p = recs;
	ts->left = count;
	return 1;
}

void
tscat_close(text_env *env, text_scatter *ts, uint64_t *io_acc, uint64_t *bytes_acc)
{
	xxl_scatter_stats st;
	uint64_t	io = 0;

	if (ts->s == NULL)
		return;
	xxl_scatter_stats_get(ts->s, &st);
	add_io(env, &st.io, &io);
	env->scattered_bytes += ts->pushed * ts->rec_size;
	if (io_acc)
		*io_acc += io;
	if (bytes_acc)
		*bytes_acc += ts->pushed * ts->rec_size;
	xxl_scatter_destroy(ts->s);
	xxl_budget_free(&env->budget, ts->batch_slots, TEXT_BATCH_BYTES / 4 * sizeof(uint64_t));
	xxl_budget_free(&env->budget, ts->batch_recs, TEXT_BATCH_BYTES);
	env->budget.used -= ts->memory;
	memset(ts, 0, sizeof(*ts));
}

/* Spools ----------------------------------------------------------------- */

void
spool_init(spool *sp, text_env *env, size_t mem_limit)
{
	memset(sp, 0, sizeof(*sp));
	sp->env = env;
	sp->mem_limit = mem_limit;
	/* small allowances get small chunks, so that they can be used at all */
	sp->chunk_size = SPOOL_CHUNK;
	if (mem_limit < 4 * (size_t) SPOOL_CHUNK)
	{
		sp->chunk_size = mem_limit / 4 - (mem_limit / 4) % XXL_ALIGN;
		if (sp->chunk_size < XXL_ALIGN)
			sp->chunk_size = XXL_ALIGN;
	}
	xxl_run_init(&sp->run);
}

static void
spool_free_chunks(spool *sp)
{
	text_env   *env = sp->env;

	for (size_t i = 0; i < sp->nchunks; i++)
		xxl_budget_free(&env->budget, sp->chunks[i], sp->chunk_size);
	xxl_budget_free(&env->budget, sp->chunks, sp->chunks_cap * sizeof(unsigned char *));
	env->spool_mem -= sp->mem_used;
	sp->mem_used = 0;
	sp->chunks = NULL;
	sp->nchunks = 0;
	sp->chunks_cap = 0;
}

static xxl_status
spool_open_writer(spool *sp)
{
	text_env   *env = sp->env;

	if (text_env_open_disks(env) != XXL_OK)
		return env->err.code;
	sp->w = xxl_bwriter_create(env->disks, &env->budget, 2, &sp->run, &env->err);
	if (sp->w == NULL)
		return env->err.code;
	/* spool blocks are small: through the page cache in place (see xxl_bwriter_inline) */
	xxl_bwriter_inline(sp->w, true);
	sp->on_disk = true;
	return XXL_OK;
}

static xxl_status
writer_status(spool *sp, xxl_status rc)
{
	if (rc != XXL_OK)
	{
		const xxl_error *e = xxl_bwriter_error(sp->w);

		xxl_error_set(&sp->env->err, e->code ? e->code : rc, e->sys_errno, "%s", e->message);
		return sp->env->err.code;
	}
	return XXL_OK;
}

xxl_status
spool_spill(spool *sp)
{
	uint64_t	total = sp->nbytes;

	if (sp->on_disk)
		return XXL_OK;
	if (spool_open_writer(sp) != XXL_OK)
		return sp->env->err.code;
	for (size_t i = 0; i < sp->nchunks; i++)
	{
		size_t		len = total - (uint64_t) i * sp->chunk_size;

		if (len > sp->chunk_size)
			len = sp->chunk_size;
		if (writer_status(sp, xxl_bwriter_write(sp->w, sp->chunks[i], len)) != XXL_OK)
			return sp->env->err.code;
	}
	sp->env->spool_bytes += total;
	spool_free_chunks(sp);
	if (sp->finished)
	{
		xxl_status	rc = writer_status(sp, xxl_bwriter_finish(sp->w));

		xxl_bwriter_destroy(sp->w);
		sp->w = NULL;
		return rc;
	}
	return XXL_OK;
}

xxl_status
spool_write(spool *sp, const void *data, size_t len)
{
	text_env   *env = sp->env;
	const unsigned char *src = data;

	if (len == 0)
		return XXL_OK;
	if (!sp->on_disk)
	{
		uint64_t	need = sp->nbytes + len;
		size_t		have = sp->nchunks * sp->chunk_size;

		if (XXL_ROUND_UP(need, sp->chunk_size) > sp->mem_limit)
		{
			if (spool_spill(sp) != XXL_OK)
				return env->err.code;
		}
		else
		{
			while (have < need)
			{
				unsigned char *c;

				if (sp->nchunks == sp->chunks_cap)
				{
					size_t		cap = sp->chunks_cap ? sp->chunks_cap * 2 : 16;
					unsigned char **grown = xxl_budget_realloc(&env->budget, sp->chunks,
															   sp->chunks_cap * sizeof(unsigned char *),
															   cap * sizeof(unsigned char *),
															   &env->err);

					if (grown == NULL)
						return env->err.code;
					sp->chunks = grown;
					sp->chunks_cap = cap;
				}
				c = xxl_budget_alloc(&env->budget, sp->chunk_size, &env->err);
				if (c == NULL)
					return env->err.code;
				sp->chunks[sp->nchunks++] = c;
				sp->mem_used += sp->chunk_size;
				env->spool_mem += sp->chunk_size;
				have += sp->chunk_size;
			}
			while (len > 0)
			{
				size_t		ci = sp->nbytes / sp->chunk_size;
				size_t		off = sp->nbytes % sp->chunk_size;
				size_t		n = sp->chunk_size - off;

				if (n > len)
					n = len;
				memcpy(sp->chunks[ci] + off, src, n);
				sp->nbytes += n;
				src += n;
				len -= n;
			}
			return XXL_OK;
		}
	}
	if (writer_status(sp, xxl_bwriter_write(sp->w, src, len)) != XXL_OK)
		return env->err.code;
	sp->nbytes += len;
	env->spool_bytes += len;
	return XXL_OK;
}

xxl_status
spool_finish(spool *sp)
{
	xxl_status	rc = XXL_OK;

	sp->finished = true;
	if (sp->w)
	{
		rc = writer_status(sp, xxl_bwriter_finish(sp->w));
		xxl_bwriter_destroy(sp->w);
		sp->w = NULL;
	}
	return rc;
}

void
spool_free(spool *sp)
{
	if (sp->env == NULL)
		return;
	if (sp->w)
		xxl_bwriter_destroy(sp->w);
	sp->w = NULL;
	spool_free_chunks(sp);
	if (sp->env->disks)
		xxl_run_release(&sp->run, sp->env->disks, &sp->env->budget);
	sp->env = NULL;
}

xxl_status
spool_reader_open(spool_reader *rd, spool *sp, bool consume)
{
	memset(rd, 0, sizeof(*rd));
	rd->sp = sp;
	rd->left = sp->nbytes;
	rd->consume = consume;
	if (sp->on_disk && sp->nbytes > 0)
	{
		rd->r = xxl_breader_create(sp->env->disks, &sp->env->budget, 2, &sp->run, &sp->env->err);
		if (rd->r == NULL)
			return sp->env->err.code;
		xxl_breader_inline(rd->r, true);
	}
	return XXL_OK;
}

xxl_status
spool_reader_piece(spool_reader *rd, const unsigned char **p, size_t *len)
{
	spool	   *sp = rd->sp;

	if (rd->left == 0)
	{
		*len = 0;
		return XXL_OK;
	}
	if (!sp->on_disk)
	{
		size_t		n = sp->chunk_size;

		if (rd->consume && rd->chunk > 0)
		{
			/* the previous chunk has been handed out completely */
			xxl_budget_free(&sp->env->budget, sp->chunks[rd->chunk - 1], sp->chunk_size);
			sp->chunks[rd->chunk - 1] = NULL;
			sp->mem_used -= sp->chunk_size;
			sp->env->spool_mem -= sp->chunk_size;
		}
		if (n > rd->left)
			n = rd->left;
		*p = sp->chunks[rd->chunk++];
		*len = n;
		rd->left -= n;
		return XXL_OK;
	}
	else
	{
		size_t		bs = sp->env->disk.block_size;
		size_t		n = rd->left < bs ? (size_t) rd->left : bs;
		const void *data;

		/* whole blocks from the start of the run never span two blocks */
		if (xxl_breader_next(rd->r, n, &data) != XXL_OK)
		{
			const xxl_error *e = xxl_breader_error(rd->r);

			return xxl_error_set(&sp->env->err, e->code, e->sys_errno, "%s", e->message);
		}
		sp->env->spool_bytes += n;
		*p = data;
		*len = n;
		rd->left -= n;
		return XXL_OK;
	}
}

void
spool_reader_close(spool_reader *rd)
{
	if (rd->r)
		xxl_breader_destroy(rd->r);
	rd->r = NULL;
	if (rd->consume && rd->sp && !rd->sp->on_disk)
	{
		/* chunks freed while reading are NULL: free the rest */
		spool	   *sp = rd->sp;

		for (size_t i = 0; i < sp->nchunks; i++)
			if (sp->chunks[i])
			{
				xxl_budget_free(&sp->env->budget, sp->chunks[i], sp->chunk_size);
				sp->chunks[i] = NULL;
				sp->mem_used -= sp->chunk_size;
				sp->env->spool_mem -= sp->chunk_size;
			}
		sp->nchunks = 0;
		sp->nbytes = 0;
	}
	rd->sp = NULL;
}

xxl_status
value_reader_open(value_reader *vr, spool *sp, int w, bool consume)
{
	memset(vr, 0, sizeof(*vr));
	vr->w = w;
	return spool_reader_open(&vr->rd, sp, consume);
}

xxl_status
value_reader_slow(value_reader *vr, uint64_t *v)
{
	uint64_t	x = 0;
	int			got = 0;

	while (got < vr->w)
	{
		if (vr->avail == 0)
		{
			xxl_status	rc = spool_reader_piece(&vr->rd, &vr->p, &vr->avail);

			if (rc != XXL_OK)
				return rc;
			if (vr->avail == 0)
				return xxl_error_set(&vr->rd.sp->env->err, XXL_EINVAL, 0,
									 "read past the end of a spool");
		}
		x = (x << 8) | *vr->p;
		vr->p++;
		vr->avail--;
		got++;
	}
	*v = x;
	return XXL_OK;
}
