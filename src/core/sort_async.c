/*
 * sort_async.c — asynchronous run formation (xxl_sort_config.async_runs):
 * a worker sorts and writes each full load while the caller fills the
 * next, for fixed and variable records (the head of sort.c says how each
 * load is split between them); see docs/engine.md.  The sorter's state:
 * sort_internal.h.
 */
#include "core/sort_internal.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Asynchronous run formation -------------------------------------------- */

static bool
runs_stopping(run_worker *rw)
{
	return __atomic_load_n(&rw->stop, __ATOMIC_RELAXED);
}

static bool
worker_stopping(void *arg)
{
	return runs_stopping(arg);
}

/*
 * The worker's share of a variable load: all of it.  Sort the entries
 * (while the caller fills the other half) and write the records in key
 * order.
 */
static void
finish_var_load(xxl_sorter *s, run_worker *rw)
{
	/*
	 * Keys that lead with a collation's strings make sorting the load cost
	 * far more than filling the next one, so the worker takes every thread
	 * and the caller's filling shares them.  Byte keys radix sort in less
	 * time than the caller fills, and so do compared keys that lead with
	 * bytes (their abbreviations decide): one thread leaves the caller a
	 * core.
	 */
	const xxl_key_compare *kc = s->cfg.compare;
	bool		costly = kc != NULL && kc->ncols > 0 && kc->cols[0].kind == XXL_KEYCOL_COLLATED;

	sort_var_load(s, rw->load, rw->load_size, rw->records, costly ? s->threads : 1);
	if (!runs_stopping(rw))
		(void) sort_write_var_load(rw->load, var_load_entries(rw->load, rw->load_size, rw->records),
								   rw->records, s->var_writer, worker_stopping, rw, &rw->err);
}

/*
 * The worker's half of a fixed load: sort the buckets the caller left, in
 * key order, posting every block whose bytes are all sorted.
 */
static void
finish_load(xxl_sorter *s, run_worker *rw)
{
	const size_t R = s->rec_size;
	size_t		bytes = rw->records * R;
	size_t		nblocks = (bytes + s->block_size - 1) / s->block_size;
	size_t		next = 0;		/* first block not yet posted */
	char	   *data = sort_fixed_sorted(s);

	for (int b = 0; b < 256 && !runs_stopping(rw); b++)
	{
		size_t		lo = rw->buckets[b];
		size_t		hi = rw->buckets[b + 1];

		/* larger buckets were sorted by the caller */
		if (hi - lo > 1 && (hi - lo) * R <= s->bucket_scratch_size)
			xxl_radix_sort_bucket(data + lo * R, rw->scratch, hi - lo, R, s->key_size, rw->depth);
		while (next < nblocks && (next + 1) * s->block_size <= hi * R)
			if (sort_post_run_block(s, rw->run, (unsigned char *) data, bytes, next++, &rw->err) != XXL_OK)
				return;
	}
	while (next < nblocks && !runs_stopping(rw))
		if (sort_post_run_block(s, rw->run, (unsigned char *) data, bytes, next++, &rw->err) != XXL_OK)
			return;
}

static void *
runs_worker_main(void *arg)
{
	xxl_sorter *s = arg;
	run_worker *rw = s->rw;

	for (;;)
	{
		pthread_mutex_lock(&rw->lock);
		while (!rw->job_pending && !rw->stop)
			pthread_cond_wait(&rw->changed, &rw->lock);
		if (!rw->job_pending)
		{
			pthread_mutex_unlock(&rw->lock);
			return NULL;
		}
		pthread_mutex_unlock(&rw->lock);

		if (s->fixed)
			finish_load(s, rw);
		else
			finish_var_load(s, rw);

		pthread_mutex_lock(&rw->lock);
		rw->job_pending = false;
		pthread_cond_broadcast(&rw->changed);
		pthread_mutex_unlock(&rw->lock);
	}
}

/* Wait until the worker is idle; take over its error, if it had one. */
xxl_status
sort_wait_runs_worker(xxl_sorter *s)
{
	run_worker *rw = s->rw;

	if (rw == NULL || !rw->started)
		return XXL_OK;
	pthread_mutex_lock(&rw->lock);
	while (rw->job_pending)
		pthread_cond_wait(&rw->changed, &rw->lock);
	pthread_mutex_unlock(&rw->lock);
	if (rw->err.code != XXL_OK)
		return xxl_error_set(&s->part.err, rw->err.code, rw->err.sys_errno, "%s", rw->err.message);
	return XXL_OK;
}

/* Stop and join the worker (abandoning its job), free what it had. */
void
sort_end_runs_worker(xxl_sorter *s)
{
	run_worker *rw = s->rw;

	if (rw == NULL)
		return;
	if (rw->started)
		xxl_thread_stop(rw->thread, &rw->lock, &rw->changed, &rw->stop);
	pthread_mutex_destroy(&rw->lock);
	pthread_cond_destroy(&rw->changed);
	if (rw->scratch != NULL)
		xxl_part_free(&s->part, rw->scratch, s->bucket_scratch_size);
	xxl_part_free(&s->part, rw, sizeof(*rw));
	s->rw = NULL;
}

static xxl_status
start_runs_worker(xxl_sorter *s)
{
	int			rc;

	if (s->rw->started)
		return XXL_OK;
	rc = xxl_thread_start(&s->rw->thread, runs_worker_main, s);
	if (rc != 0)
		return xxl_error_set(&s->part.err, XXL_ENOMEM, rc, "could not start the run formation thread");
	s->rw->started = true;
	return XXL_OK;
}

/*
 * Hand the load over to the worker as run's job (the rest of the job set up
 * in rw); the caller's load is empty again.
 */
static void
hand_over(xxl_sorter *s, xxl_run *run)
{
	run_worker *rw = s->rw;

	rw->run = run;
	rw->records = s->nloaded;
	pthread_mutex_lock(&rw->lock);
	rw->job_pending = true;
	pthread_cond_broadcast(&rw->changed);
	pthread_mutex_unlock(&rw->lock);
	s->stats.runs++;
	sort_note_load(s);
	s->nloaded = 0;
}

/*
 * The caller's share of a full variable load: a run with its block list
 * reserved and the writer aimed at it; the worker does the rest while the
 * caller goes on in the other half.
 */
static xxl_status
flush_var_async(xxl_sorter *s)
{
	run_worker *rw = s->rw;
	xxl_run    *run = NULL;
	size_t		half = s->load_size;

	/* the arena's bytes bound the records' (each is padded to 8 there) */
	if (sort_add_run(s, &run) != XXL_OK ||
		xxl_run_reserve(run, (s->arena_used + s->block_size - 1) / s->block_size, &s->part.budget,
						&s->part.err) != XXL_OK)
		return s->part.err.code;
	if (sort_var_writer(s, run) == NULL)
		return s->part.err.code;
	rw->load = s->load;
	rw->load_size = half;
	hand_over(s, run);
	s->arena_used = 0;
	s->load = s->load == s->region ? s->region + half : s->region;
	return XXL_OK;
}

/*
 * The caller's share of a full load.  Fixed: distribute it into the sorted
 * half, sort the buckets too large for the worker, hand the rest over.
 * The input half is free again when this returns.
 */
xxl_status
sort_flush_run_async(xxl_sorter *s)
{
	run_worker *rw = s->rw;
	xxl_run    *run = NULL;
	size_t		depth;

	if (xxl_part_canceled(&s->part) || sort_ensure_disks(s) != XXL_OK || sort_wait_runs_worker(s) != XXL_OK ||
		sort_wait_run_writes(s) != XXL_OK || start_runs_worker(s) != XXL_OK)
		return s->part.err.code;
	if (!s->fixed)
		return flush_var_async(s);
	if (sort_add_load_run(s, &run) != XXL_OK)
		return s->part.err.code;
	depth = xxl_radix_distribute_fixed(s->region, sort_fixed_sorted(s), s->nloaded, s->rec_size,
									   s->key_size, s->threads, rw->buckets);
	if (depth >= s->key_size)
	{
		/* every key equal: input order is the order; one bucket, nothing to sort */
		memcpy(sort_fixed_sorted(s), s->region, s->nloaded * s->rec_size);
		rw->buckets[0] = 0;
		for (int b = 1; b <= 256; b++)
			rw->buckets[b] = s->nloaded;
	}
	else
		xxl_radix_sort_large_buckets(sort_fixed_sorted(s), s->region, rw->buckets, s->rec_size,
									 s->key_size, depth, s->threads, s->bucket_scratch_size);
	rw->depth = depth;
	hand_over(s, run);
	return XXL_OK;
}
