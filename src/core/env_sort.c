/*
 * env_sort.c — the environment's sorter (xxl_env.h): a core sorter or a
 * distribution sort, its block size, its thread count and I/O mode, and
 * its memory held in the operator's budget for as long as it lives.
 */
#include "core/xxl_env.h"

#include <string.h>

/* the merge fan-in sorter blocks are sized for (xxl_env_sort_block) */
#define SORT_FAN_IN 64
/* sorters below this share run on one thread (see open_core_sorter) */
#define PARALLEL_SORTER_MIN (64 * 1024 * 1024)

static int
read_core(void *part, const void **recs, size_t *count)
{
	return xxl_sorter_read(part, recs, count);
}

static int
read_dsort(void *part, const void **recs, size_t *count)
{
	return xxl_dsort_read(part, recs, count);
}

xxl_status
xxl_env_sort_block(xxl_env *env, size_t memory, size_t rec_size, uint64_t records,
				   size_t *block_out)
{
	size_t		block = env->max_block;
	uint64_t	nbytes = records * rec_size;

	/*
	 * As large as allowed while the merge keeps a fan-in of about
	 * SORT_FAN_IN, larger only where the sorter's least memory needs it.
	 * With a fan-in of 16, 2 MB blocks at a 60 MB budget merged DC3's
	 * sorters in two passes: 298 bytes of I/O per text byte instead of 230
	 * with 256 kB blocks.
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
								 "memory budget of %zu bytes is too small for this %s: a sorter "
								 "of %zu bytes cannot sort %zu-byte records", env->budget.limit,
								 env->noun, memory, rec_size);
	}
	*block_out = block;
	return XXL_OK;
}

static xxl_dsort_config
dsort_config(xxl_env *env, size_t memory, size_t output_memory, size_t rec_size, size_t key_size,
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
	/* the operator produces the records on its thread: the second core distributes */
	c.async = env->threads > 1;
	c.disk = env->disk;
	c.disk.block_size = env->max_block;
	c.cancel = env->cancel;
	c.cancel_arg = env->cancel_arg;
	return c;
}

static bool
dsort_usable(xxl_env *env, size_t memory, size_t output_memory, size_t rec_size, size_t key_size,
			 uint64_t records, bool presampled)
{
	xxl_dsort_config c = dsort_config(env, memory, output_memory, rec_size, key_size, records,
									  presampled);

	return records > 0 && key_size <= XXL_DSORT_MAX_KEY && rec_size <= XXL_DSORT_MAX_RECORD &&
		xxl_dsort_fits(&c);
}

uint64_t
xxl_env_sort_plan_stride(xxl_env *env, size_t memory, size_t output_memory, size_t rec_size,
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
xxl_env_sort_distributes(xxl_env *env, size_t memory, size_t output_memory, size_t rec_size,
						 size_t key_size, uint64_t records)
{
	if (output_memory == 0 || output_memory > memory)
		output_memory = memory;
	return dsort_usable(env, memory, output_memory, rec_size, key_size, records, false);
}

bool
xxl_env_sort_fits(xxl_env *env, size_t memory, size_t output_memory, size_t rec_size,
				  size_t key_size, uint64_t records)
{
	size_t		block;
	xxl_error	saved = env->err;
	bool		ok;

	if (output_memory == 0 || output_memory > memory)
		output_memory = memory;
	if (dsort_usable(env, memory, output_memory, rec_size, key_size, records, false))
		return true;
	ok = xxl_env_sort_block(env, output_memory - output_memory % XXL_ALIGN, rec_size, records,
							&block) == XXL_OK;
	env->err = saved;
	return ok;
}

xxl_status
xxl_env_sort_error(xxl_env *env, xxl_env_sorter *ts)
{
	return xxl_env_fail(env, ts->d ? xxl_dsort_error(ts->d) : xxl_sorter_error(ts->s));
}

/* rec_size 0: variable-length records of about avg_size bytes. */
static xxl_status
open_core_sorter(xxl_env *env, xxl_env_sorter *ts, size_t memory, size_t rec_size,
				 size_t key_size, uint64_t records, size_t avg_size,
				 void (*combine) (void *, const void *, void *), void *combine_arg)
{
	xxl_sort_config c;
	size_t		block;

	memory -= memory % XXL_ALIGN;
	if (xxl_env_sort_block(env, memory, rec_size ? rec_size : avg_size, records, &block) != XXL_OK)
		return env->err.code;
	if (xxl_env_reserve_share(env, memory, "sorter") != XXL_OK)
		return env->err.code;
	ts->memory = memory;
	memset(&c, 0, sizeof(c));
	c.res.memory = memory;
	c.record_size = rec_size;
	c.key_size = key_size;
	/*
	 * Small sorters sort and merge on one thread: their loads and output
	 * batches are so small that OpenMP's fork/join and its spinning idle
	 * threads (which take the core from the I/O threads and the operator
	 * consuming the output) cost more than the second thread gains.
	 */
	c.res.threads = memory >= PARALLEL_SORTER_MIN ? env->threads : 1;
	c.res.disk = env->disk;
	c.res.disk.block_size = block;
	c.res.disk.try_direct &= xxl_sort_direct_pays(block);
	c.res.cancel = env->cancel;
	c.res.cancel_arg = env->cancel_arg;
	c.combine = combine;
	c.combine_arg = combine_arg;
	ts->s = xxl_sorter_create(&c, &env->err);
	if (ts->s == NULL)
	{
		xxl_env_resize(env, &ts->memory, 0, "sorter");
		return env->err.code;
	}
	if (block > env->largest_block)
		env->largest_block = block;
	if (rec_size > 0)
		xxl_batch_init(&ts->out, read_core, ts->s, rec_size);
	xxl_env_share_add(env, ts->s, XXL_SHARE_SORTER, ts->memory);
	return XXL_OK;
}

xxl_status
xxl_env_sort_put_sorted(xxl_env *env, xxl_env_sorter *ts, const void *rec)
{
	ts->pushed++;
	if (xxl_sorter_put_sorted(ts->s, rec) != XXL_OK)
		return xxl_env_sort_error(env, ts);
	return XXL_OK;
}

xxl_status
xxl_env_sort_end_sorted(xxl_env *env, xxl_env_sorter *ts)
{
	if (xxl_sorter_end_sorted(ts->s) != XXL_OK)
		return xxl_env_sort_error(env, ts);
	return XXL_OK;
}

xxl_status
xxl_env_sort_open_var(xxl_env *env, xxl_env_sorter *ts, size_t memory, size_t avg_size,
					  uint64_t records)
{
	memset(ts, 0, sizeof(*ts));
	return open_core_sorter(env, ts, memory, 0, 0, records, avg_size, NULL, NULL);
}

xxl_status
xxl_env_sort_open_combined(xxl_env *env, xxl_env_sorter *ts, size_t memory, size_t rec_size,
						   size_t key_size, uint64_t records,
						   void (*combine) (void *, const void *, void *), void *combine_arg)
{
	memset(ts, 0, sizeof(*ts));
	ts->rec_size = rec_size;
	return open_core_sorter(env, ts, memory, rec_size, key_size, records, 0, combine, combine_arg);
}

xxl_status
xxl_env_sort_open(xxl_env *env, xxl_env_sorter *ts, size_t memory, size_t output_memory,
				  size_t rec_size, size_t key_size, uint64_t records, xxl_env_input in)
{
	bool		presampled = in == XXL_INPUT_PRESAMPLED || in == XXL_INPUT_PRESAMPLED_CALLER_BUCKETS;

	memset(ts, 0, sizeof(*ts));
	ts->rec_size = rec_size;
	if (output_memory == 0 || output_memory > memory)
		output_memory = memory;
	/* a presampled sort that does not fit is tried staged */
	if (presampled && !dsort_usable(env, memory, output_memory, rec_size, key_size, records, true))
		presampled = false;
	if (in != XXL_INPUT_UNBOUNDED &&
		dsort_usable(env, memory, output_memory, rec_size, key_size, records, presampled))
	{
		xxl_dsort_config c = dsort_config(env, memory, output_memory, rec_size, key_size, records,
										  presampled);
		size_t		input;

		c.caller_buckets = in == XXL_INPUT_PRESAMPLED_CALLER_BUCKETS;
		ts->d = xxl_dsort_create(&c, &env->err);
		if (ts->d == NULL)
			return env->err.code;
		ts->batch_recs = xxl_env_alloc(env, XXL_ENV_BATCH_BYTES);
		if (ts->batch_recs == NULL)
		{
			xxl_dsort_destroy(ts->d);
			ts->d = NULL;
			return env->err.code;
		}
		ts->batch_cap = XXL_ENV_BATCH_BYTES / rec_size;
		xxl_dsort_phase_memory(ts->d, &input, &ts->distribute, &ts->output);
		xxl_batch_init(&ts->out, read_dsort, ts->d, rec_size);
		return xxl_env_resize(env, &ts->memory, input, "sort");
	}
	if (in != XXL_INPUT_UNBOUNDED)
	{
		/*
		 * The core sorter stands in for a distribution sort, which would have
		 * taken output_memory only once the parts it was lent had gone; it
		 * holds its memory from now on, so no more than the pool has free
		 * beside the own streams' reserve (DC3's S0 opens beside ISA).
		 */
		size_t		free = xxl_env_pool_free(env);

		if (free < output_memory && free >= xxl_sort_min_memory(XXL_ALIGN))
			output_memory = free;
	}
	return open_core_sorter(env, ts, output_memory, rec_size, key_size, records, 0, NULL, NULL);
}

xxl_status
xxl_env_sort_flush(xxl_env *env, xxl_env_sorter *ts)
{
	size_t		n = ts->batch;

	ts->batch = 0;
	if (n > 0 && xxl_dsort_put_many(ts->d, ts->batch_recs, n) != XXL_OK)
		return xxl_env_sort_error(env, ts);
	return XXL_OK;
}

xxl_status
xxl_env_sort_sort(xxl_env *env, xxl_env_sorter *ts)
{
	if (ts->batch > 0 && xxl_env_sort_flush(env, ts) != XXL_OK)
		return env->err.code;
	if (ts->s)
	{
		if (xxl_sorter_sort(ts->s) != XXL_OK)
			return xxl_env_sort_error(env, ts);
		return XXL_OK;
	}
	else
	{
		xxl_dsort_stats st;

		if (xxl_env_resize(env, &ts->memory, ts->distribute, "sort") != XXL_OK)
			return env->err.code;
		if (xxl_dsort_sort(ts->d) != XXL_OK)
			return xxl_env_sort_error(env, ts);
		xxl_dsort_stats_get(ts->d, &st);
		if (st.block_size > env->largest_block)
			env->largest_block = st.block_size;
		return xxl_env_resize(env, &ts->memory, ts->output, "sort");
	}
}

void
xxl_env_sort_io(const xxl_env_sorter *ts, xxl_io_stats *acc)
{
	if (ts->s)
	{
		xxl_sort_stats st;

		xxl_sorter_stats(ts->s, &st);
		xxl_io_fold(acc, &st.io);
	}
	else if (ts->d)
	{
		xxl_dsort_stats st;

		xxl_dsort_stats_get(ts->d, &st);
		xxl_io_fold(acc, &st.io);
	}
}

static uint64_t
io_bytes(const xxl_io_stats *io)
{
	uint64_t	n = 0;

	for (int i = 0; i < io->ndisks; i++)
		n += io->disk[i].bytes_read + io->disk[i].bytes_written;
	return n;
}

uint64_t
xxl_env_sort_overfull(const xxl_env_sorter *ts)
{
	xxl_dsort_stats st;

	if (ts->d == NULL)
		return 0;
	xxl_dsort_stats_get(ts->d, &st);
	return st.overflows;
}

void
xxl_env_sort_close(xxl_env *env, xxl_env_sorter *ts, uint64_t *io_acc, uint64_t *sorted_acc)
{
	xxl_env_totals *t = &env->done;

	if (ts->s == NULL && ts->d == NULL)
		return;
	if (ts->s)
	{
		xxl_sort_stats st;

		xxl_sorter_stats(ts->s, &st);
		xxl_io_fold(&t->io, &st.io);
		if (io_acc)
			*io_acc += io_bytes(&st.io);
		t->runs += st.runs;
		t->passes += st.merge_passes;
		if (st.merge_passes > t->max_passes)
			t->max_passes = st.merge_passes;
		xxl_env_share_remove(env, ts->s);
		xxl_sorter_destroy(ts->s);
	}
	else
	{
		xxl_dsort_stats st;

		xxl_dsort_stats_get(ts->d, &st);
		xxl_io_fold(&t->io, &st.io);
		if (io_acc)
			*io_acc += io_bytes(&st.io);
		/* buckets are its runs; each record is distributed once */
		t->runs += st.buckets;
		if (st.buckets > 0)
		{
			t->passes++;
			if (t->max_passes < 1)
				t->max_passes = 1;
		}
		xxl_dsort_destroy(ts->d);
	}
	t->sorts++;
	t->sorted_bytes += ts->pushed * ts->rec_size;
	if (sorted_acc)
		*sorted_acc += ts->pushed * ts->rec_size;
	if (ts->batch_recs)
		xxl_env_free(env, ts->batch_recs, XXL_ENV_BATCH_BYTES);
	xxl_env_release(env, ts->memory);
	memset(ts, 0, sizeof(*ts));
}
