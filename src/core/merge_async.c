/*
 * merge_async.c — the final merge on a worker thread (async_merge): a ring
 * of batch buffers the worker fills while the caller consumes.
 */
#include "core/merge_internal.h"

#include <omp.h>
#include <signal.h>
#include <string.h>

/* Asynchronous mode ----------------------------------------------------- */

size_t
xxl_merge_async_bytes(const xxl_merge_env *env)
{
	/* a small share of the budget, but room for the largest record */
	size_t		batch = env->budget->limit / 64;

	if (batch > MERGE_BATCH_MAX)
		batch = MERGE_BATCH_MAX;
	if (batch < MERGE_BATCH_MIN)
		batch = MERGE_BATCH_MIN;
	batch = XXL_ROUND_UP(batch, XXL_ALIGN);
	if (batch < XXL_ROUND_UP(env->max_record + VAR_HEADER, XXL_ALIGN))
		batch = XXL_ROUND_UP(env->max_record + VAR_HEADER, XXL_ALIGN);
	return MERGE_BATCHES * batch;
}

/*
 * Append the record at *used bytes into the batch; false if it does not
 * fit.  The fill level stays in the worker's variable until the batch is
 * handed over: b->used shares a cache line with what the caller reads for
 * every record (a store per record made both cores wait on that line).
 */
static bool
batch_append(xxl_merger *m, merge_batch *b, size_t *used, const xxl_merge_record *r)
{
	size_t		len = m->env.fixed ? m->env.rec_size
		: VAR_HEADER + (size_t) r->key_len + r->payload_len;

	if (*used + len > m->batch_size)
		return false;
	if (m->env.fixed)
		memcpy(b->data + *used, r->key, len);
	else
	{
		uint32_t	hdr[2] = {r->key_len, r->payload_len};

		/* a variable record's payload follows its key (source_advance) */
		memcpy(b->data + *used, hdr, VAR_HEADER);
		memcpy(b->data + *used + VAR_HEADER, r->key, len - VAR_HEADER);
	}
	*used += len;
	return true;
}


/*
 * Fill a ring batch of a batched merger by merging straight into it: no
 * record-by-record hand-over, no second copy.  Returns 1 with the batch
 * filled (partly, if the rest cannot hold a record per run), 0 when the
 * merge has ended (the batch may hold its last records), -1 on error.
 */
static int
fill_ring_batch(xxl_merger *m, merge_batch *b)
{
	const size_t R = m->env.rec_size;

	for (;;)
	{
		size_t		room = (m->batch_size - b->used) / R;
		size_t		count = 0;
		int			rc;

		if (room < (size_t) m->k)
			return 1;
		rc = merge_fill_batch(m, (unsigned char *) b->data + b->used, room, &count);
		if (rc <= 0)
			return rc;
		b->used += count * R;
	}
}

/*
 * The worker fills the ring's batches in turn: a batched merger merges into
 * them (fill_ring_batch), the others copy records from the loser tree.  The
 * two must not be mixed: a batched merger's loser tree is never built and
 * its runs' current records are never loaded.
 */
static void *
merge_worker(void *arg)
{
	xxl_merger *m = arg;
	xxl_merge_record rec;
	bool		holding = false;	/* rec did not fit the previous batch */

	for (;;)
	{
		merge_batch *b = &m->batch[m->fill_index];
		xxl_status	status = XXL_OK;
		bool		last = false;

		pthread_mutex_lock(&m->lock);
		while (b->full && !m->stop)
			pthread_cond_wait(&m->changed, &m->lock);
		if (m->stop)
		{
			pthread_mutex_unlock(&m->lock);
			break;
		}
		pthread_mutex_unlock(&m->lock);

		b->used = 0;
		if (m->batched)
		{
			int			rc = fill_ring_batch(m, b);

			if (rc <= 0)
			{
				last = true;
				status = rc < 0 ? m->worker_err.code : XXL_OK;
			}
		}
		if (!m->batched)
		{
			size_t		used = 0;

			for (;;)
			{
				int			rc;

				if (!holding)
				{
					rc = merge_next_sync(m, &rec);
					if (rc <= 0)
					{
						last = true;
						status = rc < 0 ? m->worker_err.code : XXL_OK;
						break;
					}
					holding = true;
				}
				if (!batch_append(m, b, &used, &rec))
					break;
				holding = false;
			}
			b->used = used;
		}

		pthread_mutex_lock(&m->lock);
		b->full = true;
		b->last = last;
		b->status = status;
		pthread_cond_broadcast(&m->changed);
		pthread_mutex_unlock(&m->lock);
		m->fill_index = (m->fill_index + 1) % MERGE_BATCHES;
		if (last)
			break;
	}
	return NULL;
}

xxl_status
xxl_merger_start_async(xxl_merger *m)
{
	int			rc;

	m->batch_size = xxl_merge_async_bytes(&m->env) / MERGE_BATCHES;
	if (m->batched && m->batch_size / m->env.rec_size < (size_t) m->k)
		return XXL_OK;			/* a ring batch must hold a record per run: stay synchronous */
	for (int i = 0; i < MERGE_BATCHES; i++)
	{
		m->batch[i].data = xxl_budget_alloc(m->env.budget, m->batch_size, m->env.err);
		if (m->batch[i].data == NULL)
			return m->env.err->code;
	}
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->changed, NULL);
	m->async = true;
	/* from now on the worker reports into its own record */
	m->caller_err = m->env.err;
	xxl_error_clear(&m->worker_err);
	m->env.err = &m->worker_err;

	rc = xxl_thread_start(&m->worker, merge_worker, m);
	if (rc != 0)
	{
		m->env.err = m->caller_err;
		m->async = false;
		return xxl_error_set(m->env.err, XXL_ENOMEM, rc, "could not start the merge thread");
	}
	m->worker_started = true;
	return XXL_OK;
}

void
merge_stop_worker(xxl_merger *m)
{
	if (!m->worker_started)
		return;
	xxl_thread_stop(m->worker, &m->lock, &m->changed, &m->stop);
	m->worker_started = false;
	m->env.err = m->caller_err;
}

void
merge_free_batches(xxl_merger *m)
{
	for (int i = 0; i < MERGE_BATCHES; i++)
		xxl_budget_free(m->env.budget, m->batch[i].data, m->batch_size);
	if (m->async)
	{
		pthread_mutex_destroy(&m->lock);
		pthread_cond_destroy(&m->changed);
	}
}
