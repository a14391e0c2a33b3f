/*
 * pipe.c — the batch pipe to a worker thread (see xxl_pipe.h): a ring of
 * batch buffers, the caller filling one, the worker consuming the ones
 * handed over in order, one mutex and two condition variables between them.
 */
#include "core/xxl_pipe.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/*
 * The caller writes records into a small staging area (in its first-level
 * cache) and moves it into the batch with non-temporal stores: a batch the
 * worker has just read sits in the other core's cache, and storing into it
 * record by record made every cache line an ownership transfer between the
 * cores, which then took most of the caller's time.
 */
#define STAGE_BYTES XXL_PIPE_STAGE_BYTES
#define PIPE_BATCH_MAX (256 * 1024)
#define PIPE_BATCH_MIN (64 * 1024)

struct xxl_pipe
{
	xxl_budget *budget;
	xxl_pipe_fn fn;
	void	   *arg;
	size_t		batch_bytes;
	int			n;
	unsigned char *mem;			/* n batches */
	size_t	   *len;

	/* shared with the worker, under mu */
	pthread_mutex_t mu;
	pthread_cond_t handed;		/* a batch was handed over, or stop */
	pthread_cond_t consumed;	/* a batch was consumed */
	int			head;			/* oldest batch handed over */
	int			count;			/* handed over and not consumed (the worker's one included) */
	bool		stop;
	xxl_status	status;			/* the worker's first error */
	xxl_error	werr;
	pthread_t	thread;
	bool		started;
	uint64_t	wait_ns;

	/* the caller's, written at every call: a cache line apart from the worker's */
	int			cur __attribute__((aligned(64)));	/* the caller's batch (head + count,
													 * kept apart: the worker moves
													 * head and count together) */
	size_t		fill;			/* bytes in it, the staged ones included */
	size_t		staged;			/* bytes in stage, not yet in the batch */
	unsigned char stage[STAGE_BYTES] __attribute__((aligned(64)));
};

static unsigned char *
batch(xxl_pipe *p, int i)
{
	return p->mem + (size_t) i * p->batch_bytes;
}

static void *
worker(void *arg)
{
	xxl_pipe   *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;)
	{
		int			i;
		xxl_status	rc = XXL_OK;

		while (p->count == 0 && !p->stop)
			pthread_cond_wait(&p->handed, &p->mu);
		if (p->count == 0)
			break;				/* stopped, nothing left */
		i = p->head;
		if (p->status == XXL_OK && !p->stop)
		{
			xxl_error	e = {0};

			pthread_mutex_unlock(&p->mu);
			rc = p->fn(p->arg, batch(p, i), p->len[i], &e);
			pthread_mutex_lock(&p->mu);
			if (rc != XXL_OK && p->status == XXL_OK)
			{
				p->status = rc;
				p->werr = e;
			}
		}
		/* after an error (or a stop) the rest is dropped, so the caller never waits forever */
		p->head = (p->head + 1) % p->n;
		p->count--;
		pthread_cond_signal(&p->consumed);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

size_t
xxl_pipe_batch_for(size_t memory)
{
	size_t		b = memory / (8 * XXL_PIPE_BATCHES);

	if (b > PIPE_BATCH_MAX)
		b = PIPE_BATCH_MAX;
	b -= b % 4096;
	return b < PIPE_BATCH_MIN ? 0 : b;
}

xxl_pipe *
xxl_pipe_create(size_t batch_bytes, int nbatches, xxl_pipe_fn fn, void *arg, xxl_budget *budget,
				xxl_error *err)
{
	xxl_pipe   *p;
	int			rc;

	if (nbatches < 2 || batch_bytes == 0)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "a pipe needs at least 2 batches of at least 1 byte");
		return NULL;
	}
	p = xxl_calloc_aligned(sizeof(*p));
	if (p == NULL)
	{
		xxl_error_set(err, XXL_ENOMEM, 0, "could not allocate a pipe");
		return NULL;
	}
	p->budget = budget;
	p->fn = fn;
	p->arg = arg;
	p->batch_bytes = batch_bytes;
	p->n = nbatches;
	p->mem = xxl_budget_alloc(budget, (size_t) nbatches * batch_bytes, err);
	p->len = p->mem ? calloc((size_t) nbatches, sizeof(size_t)) : NULL;
	if (p->len == NULL)
	{
		if (p->mem)
			xxl_error_set(err, XXL_ENOMEM, 0, "could not allocate a pipe");
		xxl_budget_free(budget, p->mem, (size_t) nbatches * batch_bytes);
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->handed, NULL);
	pthread_cond_init(&p->consumed, NULL);
	rc = xxl_thread_start(&p->thread, worker, p);
	if (rc != 0)
	{
		xxl_error_set(err, XXL_ENOMEM, rc, "could not start a pipe's worker");
		xxl_pipe_destroy(p);
		return NULL;
	}
	p->started = true;
	return p;
}

/* Move the staged bytes to the end of the caller's batch, bypassing the caches. */
static void
unstage(xxl_pipe *p)
{
	unsigned char *dst = batch(p, p->cur) + (p->fill - p->staged);
	size_t		n = p->staged;

	if (n == 0)
		return;
#ifdef __SSE2__
	/* whole 16-byte units at aligned destinations (the batch is page aligned) */
	while (n > 0 && ((uintptr_t) dst & 15) != 0)
	{
		size_t		k = 16 - ((uintptr_t) dst & 15);

		if (k > n)
			k = n;
		memcpy(dst, p->stage + (p->staged - n), k);
		dst += k;
		n -= k;
	}
	for (; n >= 16; n -= 16, dst += 16)
		_mm_stream_si128((__m128i *) dst,
						 _mm_loadu_si128((const __m128i *) (p->stage + (p->staged - n))));
	if (n > 0)
		memcpy(dst, p->stage + (p->staged - n), n);
	_mm_sfence();
#else
	memcpy(dst, p->stage, n);
#endif
	p->staged = 0;
}

/* Hand the caller's batch over and wait for a free one. */
static xxl_status
hand_over(xxl_pipe *p, xxl_error *err)
{
	xxl_status	rc;

	unstage(p);
	pthread_mutex_lock(&p->mu);
	if (p->fill > 0)
	{
		p->len[p->cur] = p->fill;
		p->count++;
		pthread_cond_signal(&p->handed);
		p->fill = 0;
		p->cur = (p->cur + 1) % p->n;
	}
	if (p->count == p->n)
	{
		uint64_t	t0 = xxl_now_ns();

		while (p->count == p->n)
			pthread_cond_wait(&p->consumed, &p->mu);
		p->wait_ns += xxl_now_ns() - t0;
	}
	rc = p->status;
	if (rc != XXL_OK)
		*err = p->werr;
	pthread_mutex_unlock(&p->mu);
	return rc;
}

unsigned char *
xxl_pipe_space(xxl_pipe *p, size_t len, xxl_error *err)
{
	unsigned char *at;

	if (len > p->batch_bytes)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "%zu bytes do not fit a pipe's batch of %zu", len,
					  p->batch_bytes);
		return NULL;
	}
	if (p->fill + len > p->batch_bytes && hand_over(p, err) != XXL_OK)
		return NULL;
	if (p->staged + len > STAGE_BYTES)
		unstage(p);
	if (len > STAGE_BYTES)
	{
		at = batch(p, p->cur) + p->fill;	/* too big to stage: in place */
		p->fill += len;
		return at;
	}
	at = p->stage + p->staged;
	p->staged += len;
	p->fill += len;
	return at;
}

xxl_status
xxl_pipe_drain(xxl_pipe *p, xxl_error *err)
{
	xxl_status	rc;

	if (hand_over(p, err) != XXL_OK)
		return err->code ? err->code : XXL_EIO;
	pthread_mutex_lock(&p->mu);
	while (p->count > 0)
		pthread_cond_wait(&p->consumed, &p->mu);
	rc = p->status;
	if (rc != XXL_OK)
		*err = p->werr;
	pthread_mutex_unlock(&p->mu);
	return rc;
}

void
xxl_pipe_destroy(xxl_pipe *p)
{
	if (p == NULL)
		return;
	if (p->started)
		xxl_thread_stop(p->thread, &p->mu, &p->handed, &p->stop);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->handed);
	pthread_cond_destroy(&p->consumed);
	xxl_budget_free(p->budget, p->mem, (size_t) p->n * p->batch_bytes);
	free(p->len);
	free(p);
}

xxl_status
xxl_pipe_finish(xxl_pipe **p, uint64_t *wait_ns, xxl_error *err)
{
	xxl_status	rc = xxl_pipe_drain(*p, err);

	*wait_ns += xxl_pipe_wait_ns(*p);
	xxl_pipe_destroy(*p);
	*p = NULL;
	return rc;
}

uint64_t
xxl_pipe_wait_ns(const xxl_pipe *p)
{
	return p->wait_ns;
}
