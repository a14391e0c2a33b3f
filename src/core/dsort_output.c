/*
 * dsort_output.c — buckets sorted in memory (or by the core sorter when
 * one overflows), read ahead on a worker, and handed out in batches.
 */
#include "core/dsort_internal.h"

/* Output ------------------------------------------------------------------------ */

/* A bucket too large for memory goes through the core sorter. */
static xxl_status
sort_overflow(xxl_dsort *s, ds_chain *b)
{
	xxl_sort_config c;
	uint64_t	nblocks = (b->count + s->bd.per - 1) / s->bd.per;

	ds_free_area(s);
	memset(&c, 0, sizeof(c));
	c.res.memory = xxl_budget_available(&s->part.budget);
	c.res.memory -= c.res.memory % XXL_ALIGN;
	c.record_size = s->rec;
	c.key_size = s->ks;
	c.res.threads = 1;
	c.res.disk = s->cfg.disk;
	c.res.disk.block_size = XXL_ALIGN;
	while (c.res.disk.block_size * 2 * 64 + 64 * 1024 <= c.res.memory && c.res.disk.block_size < ds_max_block_of(&s->cfg))
		c.res.disk.block_size *= 2;
	c.res.disk.try_direct = false;
	c.res.cancel = s->cfg.cancel;
	c.res.cancel_arg = s->cfg.cancel_arg;
	s->over = xxl_sorter_create(&c, &s->part.err);
	if (s->over == NULL)
		return s->part.err.code;
	s->over_memory = c.res.memory;
	if (xxl_budget_reserve(&s->part.budget, c.res.memory, "bucket sorter", &s->part.err) != XXL_OK)
	{
		s->over_memory = 0;
		return s->part.err.code;
	}
	for (uint64_t k = 0; k < nblocks; k++)
	{
		size_t		n;

		if (ds_read_block(s, &s->bd, b, k, s->rbuf, &n, &s->part.err) != XXL_OK)
			return s->part.err.code;
		for (size_t i = 0; i < n; i++)
			if (xxl_sorter_put(s->over, s->rbuf + i * s->rec) != XXL_OK)
				goto sorter_failed;
	}
	if (xxl_sorter_sort(s->over) != XXL_OK)
		goto sorter_failed;
	s->overflows++;
	return XXL_OK;

sorter_failed:
	{
		const xxl_error *e = xxl_sorter_error(s->over);

		return xxl_error_set(&s->part.err, e->code, e->sys_errno, "%s", e->message);
	}
}

void
ds_end_overflow(xxl_dsort *s)
{
	if (s->over == NULL)
		return;
	xxl_sorter_destroy(s->over);
	s->over = NULL;
	xxl_budget_release(&s->part.budget, s->over_memory);
	s->over_memory = 0;
}

/*
 * Sorting one bucket of n records loaded into a, the result going to out:
 * one pass distributes the records into out on the first key byte that
 * varies, and the up to 256 parts that leaves are sorted in place, a's
 * same offsets being their scratch.  The parts are independent, so two
 * threads take them from one counter (ds_job_work, ds_share below): the
 * worker sorting ahead and a caller that would otherwise wait for it, or a
 * caller sorting and its helper.  Keys of more than 8 bytes whose
 * varying bits fit 64 are sorted as 8-byte keys: the bits after the prefix
 * all keys of the bucket share, put back part by part once sorted.
 * (Sorting buckets where up to 72 bits vary on the top 64 and settling ties
 * by the last byte was tried: no fewer instructions than the byte-wise
 * path.)  A job touches nothing of the sort but its shape.
 */
#define JOB_PARTS 256

typedef struct ds_job
{
	const xxl_dsort *s;
	unsigned char *out,
			   *scratch;
	size_t		ks;				/* bytes sorted on: s->ks, or 8 for short keys */
	size_t		depth;			/* the byte the first pass distributed on */
	size_t		start[JOB_PARTS + 1];
	bool		short_key;
	int			common;			/* short keys: the bits every key shares */
	unsigned __int128 prefix;
	int			next;			/* the next part to take (atomic) */
} ds_job;

/* Short keys: the varying bits to the top 8 bytes of records [lo, hi) of a. */
static void
job_shorten(const ds_job *j, unsigned char *a, size_t lo, size_t hi)
{
	size_t		rec = j->s->rec;

	for (size_t i = lo; i < hi; i++)
	{
		unsigned char *p = a + i * rec;
		dkey		k = key_of_rec(p, j->s->ks, rec);
		unsigned __int128 v = (((unsigned __int128) k.hi << 64) | k.lo) << j->common;
		uint64_t	c = __builtin_bswap64((uint64_t) (v >> 64));

		memcpy(p, &c, 8);
	}
}

/* ... and back: bytes 8.. of the key were not touched, records moved whole. */
static void
job_restore(const ds_job *j, unsigned char *a, size_t lo, size_t hi)
{
	size_t		rec = j->s->rec;

	for (size_t i = lo; i < hi; i++)
	{
		unsigned char *p = a + i * rec;
		uint64_t	c;
		unsigned __int128 v;

		memcpy(&c, p, 8);
		v = j->prefix | (((unsigned __int128) __builtin_bswap64(c) << 64) >> j->common);
		c = __builtin_bswap64((uint64_t) (v >> 64));
		memcpy(p, &c, 8);
	}
}

/*
 * The first pass.  Returns false when it finished the bucket (all keys
 * equal: out is a copy of a), true when parts are left for ds_job_work.
 */
static bool
job_start(ds_job *j, const xxl_dsort *s, const ds_chain *b, size_t n, unsigned char *a,
		  unsigned char *out, uint64_t *short_keys)
{
	unsigned __int128 lo = ((unsigned __int128) b->min.hi << 64) | b->min.lo,
				hi = ((unsigned __int128) b->max.hi << 64) | b->max.lo,
				diff = lo ^ hi;
	int			common = diff == 0 ? 128 : (uint64_t) (diff >> 64) ? __builtin_clzll((uint64_t) (diff >> 64))
		: 64 + __builtin_clzll((uint64_t) diff);
	int			varying = 8 * (int) s->ks - common;

	j->s = s;
	j->out = out;
	j->scratch = a;
	j->ks = s->ks;
	j->short_key = s->ks > 8 && varying > 0 && varying <= 64;
	__atomic_store_n(&j->next, 0, __ATOMIC_RELAXED);
	if (s->ks > 8 && varying <= 0)
	{
		memcpy(out, a, n * s->rec);	/* one key: in input order already */
		return false;
	}
	if (j->short_key)
	{
		(*short_keys)++;
		j->ks = 8;
		j->common = common;
		j->prefix = common == 0 ? 0 : lo >> (128 - common) << (128 - common);
		job_shorten(j, a, 0, n);
	}
	j->depth = xxl_radix_distribute_fixed((char *) a, (char *) out, n, s->rec, j->ks, 1, j->start);
	if (j->depth < j->ks)
		return true;
	memcpy(out, a, n * s->rec);
	if (j->short_key)
		job_restore(j, out, 0, n);
	return false;
}

/* Sort parts of a started job until none is left; the number this thread finished. */
static int
ds_job_work(ds_job *j)
{
	size_t		rec = j->s->rec;
	int			mine = 0;
	int			k;

	while ((k = __atomic_fetch_add(&j->next, 1, __ATOMIC_ACQ_REL)) < JOB_PARTS)
	{
		size_t		lo = j->start[k],
					hi = j->start[k + 1];

		if (hi > lo)
		{
			xxl_radix_sort_bucket((char *) j->out + lo * rec, (char *) j->scratch + lo * rec, hi - lo,
								  rec, j->ks, j->depth);
			if (j->short_key)
				job_restore(j, j->out, lo, hi);
		}
		mine++;
	}
	return mine;
}

/* A whole bucket on the calling thread. */
static void
sort_bucket(const xxl_dsort *s, const ds_chain *b, size_t n, unsigned char *a, unsigned char *out,
			uint64_t *short_keys)
{
	ds_job		j;

	if (job_start(&j, s, b, n, a, out, short_keys))
		ds_job_work(&j);
}

/*
 * A job between the thread that started it (the owner: the worker sorting
 * ahead, or the caller sorting with a helper) and one other thread that may
 * take parts of it.  One mutex and two conditions, which the worker sorting
 * ahead also uses for its slots (to_other: the caller's, to_owner: the
 * worker's).
 */
typedef struct ds_share
{
	pthread_mutex_t mu;
	pthread_cond_t to_other;	/* a job opened (or, ahead: a bucket is sorted) */
	pthread_cond_t to_owner;	/* the other stopped helping (or, ahead: a slot came back) */
	bool		stop;
	bool		open;			/* job has parts the other may take */
	int			helpers;		/* 0 or 1: the other is sorting parts */
	bool		leave_all;		/* tests: the owner leaves every part to the other */
	ds_job		job;
} ds_share;

static void
share_init(ds_share *sh, bool leave_all)
{
	pthread_mutex_init(&sh->mu, NULL);
	pthread_cond_init(&sh->to_other, NULL);
	pthread_cond_init(&sh->to_owner, NULL);
	sh->leave_all = leave_all;
}

static void
share_destroy(ds_share *sh)
{
	pthread_mutex_destroy(&sh->mu);
	pthread_cond_destroy(&sh->to_other);
	pthread_cond_destroy(&sh->to_owner);
}

static bool
share_has_parts(ds_share *sh)
{
	return sh->open && __atomic_load_n(&sh->job.next, __ATOMIC_ACQUIRE) < JOB_PARTS;
}

/*
 * The owner, once job_start left parts: open the job to the other thread,
 * sort parts, and wait for the ones the other took.  Returns with mu held.
 */
static void
share_run_locked(ds_share *sh)
{
	pthread_mutex_lock(&sh->mu);
	sh->open = true;
	pthread_cond_broadcast(&sh->to_other);
	while (sh->leave_all && !sh->stop && (share_has_parts(sh) || sh->helpers > 0))
		pthread_cond_wait(&sh->to_owner, &sh->mu);
	pthread_mutex_unlock(&sh->mu);
	ds_job_work(&sh->job);
	pthread_mutex_lock(&sh->mu);
	sh->open = false;
	while (sh->helpers > 0)
		pthread_cond_wait(&sh->to_owner, &sh->mu);
}

/* The other thread, mu held: parts of the open job; -1 if it has none left. */
static int
share_help_locked(ds_share *sh)
{
	int			n;

	if (!share_has_parts(sh))
		return -1;
	sh->helpers++;
	pthread_mutex_unlock(&sh->mu);
	n = ds_job_work(&sh->job);
	pthread_mutex_lock(&sh->mu);
	sh->helpers--;
	pthread_cond_broadcast(&sh->to_owner);
	return n;
}

/*
 * A bucket's blocks into dst, one after the other.  The blocks of an extent
 * lie side by side in the file, so on a buffered file each extent is one
 * read, its records going straight to dst and each block's padding to the
 * read block rbuf (4 kB blocks: 16 times fewer system calls); on a direct
 * file, block by block through rbuf.
 */
static xxl_status
load_bucket(const xxl_dsort *s, ds_disk *d, const ds_chain *b, unsigned char *dst,
			unsigned char *rbuf, xxl_error *err)
{
	uint64_t	nblocks = (b->count + d->per - 1) / d->per;
	bool		vectored = d->bpe > 1 && 2 * d->bpe <= XXL_IO_READV_MAX &&
		!xxl_disks_direct(d->disks);

	for (uint64_t k = 0; k < nblocks;)
	{
		uint64_t	run = d->bpe - k % d->bpe;
		struct iovec iov[XXL_IO_READV_MAX];
		int			iovcnt = 0;
		size_t		len = 0;

		if (run > nblocks - k)
			run = nblocks - k;
		if (!vectored || run == 1)
		{
			size_t		n;

			if (ds_read_block(s, d, b, k, rbuf, &n, err) != XXL_OK)
				return err->code;
			memcpy(dst, rbuf, n * s->rec);
			dst += n * s->rec;
			k++;
			continue;
		}
		for (uint64_t j = k; j < k + run; j++)
		{
			uint64_t	left = b->count - j * d->per;
			size_t		bytes = (size_t) (left < d->per ? left : d->per) * s->rec;
			/* as written: whole pages, a block's padding included */
			size_t		span = XXL_ROUND_UP(bytes, XXL_ALIGN);

			iov[iovcnt].iov_base = dst;
			iov[iovcnt++].iov_len = bytes;
			if (span > bytes)
			{
				iov[iovcnt].iov_base = rbuf;
				iov[iovcnt++].iov_len = span - bytes;
			}
			dst += bytes;
			len += span;
		}
		if (xxl_io_readv_sync(d->disks, ds_block_bid(d, b, k), iov, iovcnt, len, err) != XXL_OK)
			return err->code;
		k += run;
	}
	return XXL_OK;
}

/*
 * Sorting ahead (plan with three areas): a worker loads and sorts the normal
 * buckets in order, each into one of two output slots, while the caller
 * hands out the other; the caller gives a slot back when it moves on.  The
 * worker reads chains (the disk calls are thread-safe) and writes only its
 * slots and its own counters; the caller keeps everything else: equality
 * buckets (read block by block on its side), freeing chains, the budget,
 * cancel polls.  It stops before an overfull bucket, which the caller sorts
 * with the core sorter once the worker has ended, and is started again
 * after it.
 */
struct ds_ahead
{
	xxl_dsort  *s;
	pthread_t	thread;
	bool		running;
	ds_share	sh;				/* to_other: a bucket is sorted or the worker
								 * ended; to_owner: a slot was given back, the
								 * caller stopped helping, or stop */
	/* under sh.mu */
	int			ready;			/* sorted buckets not given back (0..2) */
	int			head;			/* slot of the oldest */
	size_t		bucket[2];		/* physical bucket in each slot */
	bool		ended;
	xxl_status	status;
	xxl_error	err;
	/* the worker's */
	size_t		from;
	unsigned char *load,
			   *out[2],
			   *rbuf;
	uint64_t	short_keys;
};

static void *
ahead_worker(void *arg)
{
	ds_ahead   *a = arg;
	xxl_dsort  *s = a->s;
	xxl_error	e = {0};
	xxl_status	rc = XXL_OK;
	int			w = 0;

	for (size_t j = a->from; j < s->nbk; j++)
	{
		const ds_chain *b = &s->bk[j];
		bool		stop;

		if (j % 2 == 1 || b->count == 0)
			continue;
		if (b->count > s->p.cap)
			break;
		pthread_mutex_lock(&a->sh.mu);
		while (a->ready == 2 && !a->sh.stop)
			pthread_cond_wait(&a->sh.to_owner, &a->sh.mu);
		stop = a->sh.stop;
		pthread_mutex_unlock(&a->sh.mu);
		if (stop || (rc = load_bucket(s, &s->bd, b, a->load, a->rbuf, &e)) != XXL_OK)
			break;
		if (job_start(&a->sh.job, s, b, (size_t) b->count, a->load, a->out[w], &a->short_keys))
			share_run_locked(&a->sh);	/* the caller may take parts */
		else
			pthread_mutex_lock(&a->sh.mu);
		if (a->sh.stop)
		{
			pthread_mutex_unlock(&a->sh.mu);
			break;
		}
		a->bucket[w] = j;
		a->ready++;
		pthread_cond_broadcast(&a->sh.to_other);
		pthread_mutex_unlock(&a->sh.mu);
		w ^= 1;
	}
	pthread_mutex_lock(&a->sh.mu);
	a->ended = true;
	a->status = rc;
	a->err = e;
	pthread_cond_broadcast(&a->sh.to_other);
	pthread_mutex_unlock(&a->sh.mu);
	return NULL;
}

/* Start the worker at physical bucket from, over the current areas. */
xxl_status
ds_ahead_start(xxl_dsort *s, size_t from)
{
	ds_ahead   *a = s->ahead;
	size_t		area = (size_t) s->p.cap * s->rec;
	int			rc;

	if (a == NULL)
	{
		a = s->ahead = xxl_calloc_aligned(sizeof(*a));
		if (a == NULL)
			return xxl_error_set(&s->part.err, XXL_ENOMEM, 0, "could not allocate a sort's worker");
		a->s = s;
		share_init(&a->sh, s->cfg.test_caller_sorts);
		a->rbuf = xxl_part_alloc(&s->part, s->bd.block);
		if (a->rbuf == NULL)
			return s->part.err.code;
	}
	a->ready = a->head = 0;
	a->sh.stop = a->sh.open = a->ended = false;
	a->status = XXL_OK;
	a->from = from;
	a->out[0] = s->area;
	a->out[1] = s->area + area;
	a->load = s->area + 2 * area;
	rc = xxl_thread_start(&a->thread, ahead_worker, a);
	if (rc != 0)
		return xxl_error_set(&s->part.err, XXL_ENOMEM, rc, "could not start a sort's worker");
	a->running = true;
	return XXL_OK;
}

/* Stop the worker (it ends at once, or after the bucket it sorts) and join it. */
static void
ahead_stop(xxl_dsort *s)
{
	ds_ahead   *a = s->ahead;

	if (a == NULL || !a->running)
		return;
	xxl_thread_stop(a->thread, &a->sh.mu, &a->sh.to_owner, &a->sh.stop);
	a->running = false;
	s->short_keys += a->short_keys;
	a->short_keys = 0;
}

/* The sorted records of normal bucket j (the next one), or NULL on an error. */
static const unsigned char *
ahead_take(xxl_dsort *s, size_t j)
{
	ds_ahead   *a = s->ahead;
	const unsigned char *r = NULL;

	if (xxl_part_canceled(&s->part))
		return NULL;
	pthread_mutex_lock(&a->sh.mu);
	if (a->ready == 0 && !a->ended)
	{
		uint64_t	t0 = xxl_now_ns();

		while (a->ready == 0 && !a->ended)
		{
			/* rather than wait, sort parts of the bucket the worker is on */
			int			n = share_help_locked(&a->sh);

			if (n >= 0)
				s->helped_parts += n;
			else
				pthread_cond_wait(&a->sh.to_other, &a->sh.mu);
		}
		s->wait_ns += xxl_now_ns() - t0;
	}
	if (a->ready > 0 && a->bucket[a->head] == j)
		r = a->out[a->head];
	else if (a->status != XXL_OK)
		xxl_error_set(&s->part.err, a->err.code, a->err.sys_errno, "%s", a->err.message);
	else
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "distribution sort: bucket %zu was not sorted ahead", j);
	pthread_mutex_unlock(&a->sh.mu);
	return r;
}

/* The caller is done with the oldest sorted bucket: its slot goes back. */
static void
ahead_give_back(ds_ahead *a)
{
	pthread_mutex_lock(&a->sh.mu);
	a->ready--;
	a->head ^= 1;
	pthread_cond_broadcast(&a->sh.to_owner);
	pthread_mutex_unlock(&a->sh.mu);
}

void
ds_ahead_free(xxl_dsort *s)
{
	ds_ahead   *a = s->ahead;

	if (a == NULL)
		return;
	ahead_stop(s);
	xxl_part_free(&s->part, a->rbuf, s->bd.block);
	share_destroy(&a->sh);
	free(a);
	s->ahead = NULL;
}

/*
 * Sorting with a helper (asynchronous sorts whose output holds two areas,
 * too little to sort ahead): the caller sorts each bucket when it reaches
 * it, and a helper thread takes parts of it (ds_job_work) meanwhile.  The
 * helper touches only the job.
 */
struct ds_helper
{
	pthread_t	thread;
	ds_share	sh;				/* the caller owns the jobs */
	uint64_t	parts;			/* parts the helper sorted */
};

static void *
helper_main(void *arg)
{
	ds_helper  *h = arg;

	pthread_mutex_lock(&h->sh.mu);
	while (!h->sh.stop)
	{
		int			n = share_help_locked(&h->sh);

		if (n >= 0)
			h->parts += n;
		else
			pthread_cond_wait(&h->sh.to_other, &h->sh.mu);
	}
	pthread_mutex_unlock(&h->sh.mu);
	return NULL;
}

/* The helper for a sort that sorts its buckets on the caller's thread; none if it cannot start. */
void
ds_helper_start(xxl_dsort *s)
{
	ds_helper  *h = xxl_calloc_aligned(sizeof(*h));

	if (h == NULL)
		return;
	share_init(&h->sh, s->cfg.test_caller_sorts);
	if (xxl_thread_start(&h->thread, helper_main, h) != 0)
	{
		share_destroy(&h->sh);
		free(h);
		return;
	}
	s->helper = h;
}

void
ds_helper_free(xxl_dsort *s)
{
	ds_helper  *h = s->helper;

	if (h == NULL)
		return;
	xxl_thread_stop(h->thread, &h->sh.mu, &h->sh.to_other, &h->sh.stop);
	s->helped_parts += h->parts;
	share_destroy(&h->sh);
	free(h);
	s->helper = NULL;
}

/* A bucket on the caller's thread, the helper taking parts of it. */
static void
sort_bucket_helped(xxl_dsort *s, const ds_chain *b, size_t n, unsigned char *a, unsigned char *out)
{
	ds_helper  *h = s->helper;

	if (!job_start(&h->sh.job, s, b, n, a, out, &s->short_keys))
		return;
	share_run_locked(&h->sh);
	pthread_mutex_unlock(&h->sh.mu);
}

int
xxl_dsort_read(xxl_dsort *s, const void **recs, size_t *count)
{
	*count = 0;
	if (s->part.failed || s->phase != DS_OUTPUT)
	{
		if (!s->part.failed)
			xxl_error_set(&s->part.err, XXL_EINVAL, 0, "distribution sort: read before sort");
		return -(int) xxl_part_fail(&s->part);
	}
	if (s->p.in_memory)
	{
		if (s->memory_done || s->puts == 0)
			return 0;
		s->memory_done = true;
		*recs = s->area + s->puts * s->rec;
		*count = (size_t) s->puts;
		return 1;
	}
	for (; s->cur < s->nbk; s->cur++, s->cur_started = false, s->cur_block = 0)
	{
		ds_chain   *b = &s->bk[s->cur];

		if (b->count == 0)
			continue;
		if (s->over)
		{
			const void *r;
			int			got = xxl_sorter_next(s->over, &r);

			if (got > 0)
			{
				*recs = r;
				*count = 1;
				return 1;
			}
			if (got < 0)
			{
				const xxl_error *e = xxl_sorter_error(s->over);

				xxl_error_set(&s->part.err, e->code, e->sys_errno, "%s", e->message);
				return -(int) xxl_part_fail(&s->part);
			}
			ds_end_overflow(s);
			ds_free_chain(s, &s->bd, b);
			if (ds_alloc_area(s) != XXL_OK || (s->ahead && ds_ahead_start(s, s->cur + 1) != XXL_OK))
				return -(int) xxl_part_fail(&s->part);
			continue;
		}
		if (s->cur % 2 == 1)
		{
			/* one key: the blocks as they are */
			size_t		n;

			if (s->cur_block * s->bd.per >= b->count)
			{
				ds_free_chain(s, &s->bd, b);
				continue;
			}
			if (ds_read_block(s, &s->bd, b, s->cur_block++, s->rbuf, &n, &s->part.err) != XXL_OK ||
				xxl_part_canceled(&s->part))
				return -(int) xxl_part_fail(&s->part);
			*recs = s->rbuf;
			*count = n;
			return 1;
		}
		if (s->cur_started)
		{
			if (s->ahead)
				ahead_give_back(s->ahead);
			ds_free_chain(s, &s->bd, b);
			continue;
		}
		s->cur_started = true;
		if (b->count > s->p.cap)
		{
			/* the worker stops before it; the core sorter takes the areas' memory */
			ahead_stop(s);
			if (sort_overflow(s, b) != XXL_OK)
				return -(int) xxl_part_fail(&s->part);
			s->cur_started = false;
			s->cur--;			/* the loop's increment brings us back here */
			continue;
		}
		if (s->ahead)
		{
			const unsigned char *sorted = ahead_take(s, s->cur);

			if (sorted == NULL)
				return -(int) xxl_part_fail(&s->part);
			*recs = sorted;
		}
		else
		{
			unsigned char *out = s->area + b->count * s->rec;

			if (load_bucket(s, &s->bd, b, s->area, s->rbuf, &s->part.err) != XXL_OK || xxl_part_canceled(&s->part))
				return -(int) xxl_part_fail(&s->part);
			if (s->helper)
				sort_bucket_helped(s, b, (size_t) b->count, s->area, out);
			else
				sort_bucket(s, b, (size_t) b->count, s->area, out, &s->short_keys);
			*recs = out;
		}
		*count = (size_t) b->count;
		return 1;
	}
	ahead_stop(s);				/* it has ended: its counters join ours */
	ds_helper_free(s);
	return 0;
}

