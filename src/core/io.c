/*
 * io.c — the asynchronous I/O layer and block manager.
 *
 * Like STXXL (thesis §3.2) this uses synchronous pread/pwrite in threads
 * instead of POSIX AIO: the threads are started once per disk set, serve
 * their disk's FIFO queue, and mark requests done under one completion lock.
 * Unlike STXXL, a disk may have two threads: today's SSDs and virtual disks
 * only reach their bandwidth with more than one request in flight.
 * Spill files are opened with O_DIRECT when the filesystem accepts it; if it
 * refuses (at open, or with EINVAL at the first transfer), the file falls
 * back to buffered I/O.  The block manager hands out blocks of the set's own
 * files, or, for a set opened with a pool, of the operator's shared files
 * (io_pool.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "core/io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

bool
xxl_io_direct_supported(void)
{
#ifdef O_DIRECT
	return true;
#else
	return false;
#endif
}

/* Some filesystems accept O_DIRECT at open but refuse the transfer. */
static void
drop_direct(xxl_disk *d)
{
#ifdef O_DIRECT
	int			fl = fcntl(d->fd, F_GETFL);

	if (fl >= 0)
		fcntl(d->fd, F_SETFL, fl & ~O_DIRECT);
#endif
	d->direct = false;
}

/*
 * Move len bytes at off between the file and the pieces (one for a
 * request, several for a vectored read), going on after short transfers.
 * Returns 0 or an errno value; injected test failures come first.
 */
static int
transfer_pieces(xxl_disk *d, bool is_write, const struct iovec *iov, int iovcnt, uint64_t off,
				size_t len)
{
	struct iovec rest[XXL_IO_READV_MAX];
	size_t		left = len;
	int			first = 0;

	if (iovcnt < 1 || iovcnt > XXL_IO_READV_MAX)
		return EINVAL;
	if (is_write && d->set->fail_write_after > 0 &&
		__atomic_add_fetch(&d->set->bytes_written_total, len, __ATOMIC_RELAXED) >
		d->set->fail_write_after)
		return ENOSPC;
	if (!is_write && d->set->fail_read_after > 0 &&
		__atomic_add_fetch(&d->set->bytes_read_total, len, __ATOMIC_RELAXED) >
		d->set->fail_read_after)
		return EIO;

	memcpy(rest, iov, sizeof(*iov) * (size_t) iovcnt);
	while (left > 0)
	{
		ssize_t		n = is_write ? pwritev(d->fd, rest + first, iovcnt - first, (off_t) off)
			: preadv(d->fd, rest + first, iovcnt - first, (off_t) off);

		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			if (errno == EINVAL && d->direct)
			{
				drop_direct(d);
				continue;
			}
			return errno;
		}
		if (n == 0)
			return EIO;			/* read past the end: a bug or a truncated file */
		off += (uint64_t) n;
		left -= (size_t) n;
		/* a short transfer: go on from where it stopped */
		while (first < iovcnt && (size_t) n >= rest[first].iov_len)
			n -= (ssize_t) rest[first++].iov_len;
		if (first < iovcnt)
		{
			rest[first].iov_base = (char *) rest[first].iov_base + n;
			rest[first].iov_len -= (size_t) n;
		}
	}
	if (is_write)
	{
		__atomic_add_fetch(&d->stats.bytes_written, len, __ATOMIC_RELAXED);
		__atomic_add_fetch(&d->stats.writes, 1, __ATOMIC_RELAXED);
	}
	else
	{
		__atomic_add_fetch(&d->stats.bytes_read, len, __ATOMIC_RELAXED);
		__atomic_add_fetch(&d->stats.reads, 1, __ATOMIC_RELAXED);
	}
	return 0;
}

static int
transfer(xxl_disk *d, xxl_io_request *req)
{
	struct iovec one = {req->buf, req->len};

	return transfer_pieces(d, req->is_write, &one, 1, XXL_BID_OFFSET(req->bid), req->len);
}

static void *
disk_thread(void *arg)
{
	xxl_disk   *d = arg;

	for (;;)
	{
		xxl_io_request *req;
		int			rc;

		pthread_mutex_lock(&d->lock);
		while (d->head == NULL && !d->stop)
			pthread_cond_wait(&d->wake, &d->lock);
		req = d->head;
		if (req == NULL)
		{
			pthread_mutex_unlock(&d->lock);
			break;				/* stop requested and queue drained */
		}
		d->head = req->next;
		if (d->head == NULL)
			d->tail = NULL;
		pthread_mutex_unlock(&d->lock);

		rc = transfer(d, req);

		pthread_mutex_lock(&d->set->done_lock);
		req->sys_errno = rc;
		/* (the owner may look without the lock: xxl_io_done, xxl_io_wait) */
		__atomic_store_n(&req->state, 2, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&d->set->done_cond);
		pthread_mutex_unlock(&d->set->done_lock);
	}
	return NULL;
}

/* Start a thread that can never receive a signal meant for the process. */
static int
start_thread(xxl_disk *d)
{
	int			rc = xxl_thread_start(&d->thread[d->nthreads], disk_thread, d);

	if (rc == 0)
		d->nthreads++;
	return rc;
}

xxl_disks *
xxl_disks_open(const xxl_disk_config *config, xxl_error *err)
{
	static unsigned file_counter = 0;
	xxl_disks  *set;
	int			n = config->ndisks;
	int			threads_per_disk = config->threads_per_disk > 0 ? config->threads_per_disk : 2;

	if (n < 1 || n > XXL_MAX_DISKS || config->dirs == NULL)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "between 1 and %d spill directories are needed, got %d",
					  XXL_MAX_DISKS, n);
		return NULL;
	}
	if (threads_per_disk > XXL_MAX_THREADS_PER_DISK)
		threads_per_disk = XXL_MAX_THREADS_PER_DISK;
	if (config->block_size < XXL_ALIGN || config->block_size % XXL_ALIGN != 0)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "block size %zu is not a positive multiple of %d",
					  config->block_size, XXL_ALIGN);
		return NULL;
	}
	set = calloc(1, sizeof(xxl_disks) + (size_t) n * sizeof(xxl_disk));
	if (set == NULL)
	{
		xxl_error_set(err, XXL_ENOMEM, errno, "could not allocate disk set");
		return NULL;
	}
	set->pool = config->pool;
	set->ndisks = n;
	set->block_size = config->block_size;
	set->strategy = config->strategy;
	set->max_spill_bytes = config->max_spill_bytes;
	set->account = config->account;
	set->fail_write_after = config->fail_write_after;
	set->fail_read_after = config->fail_read_after;
	set->inline_below = config->inline_below ? config->inline_below : XXL_INLINE_IO_MAX;
	set->rng = config->seed ? config->seed : (unsigned) (xxl_now_ns() ^ (uintptr_t) set);
	pthread_mutex_init(&set->done_lock, NULL);
	pthread_cond_init(&set->done_cond, NULL);

	for (int i = 0; i < n; i++)
	{
		xxl_disk   *d = &set->disk[i];
		unsigned	id = __atomic_add_fetch(&file_counter, 1, __ATOMIC_RELAXED);
		int			rc;

		d->set = set;
		d->index = i;
		d->fd = -1;
		pthread_mutex_init(&d->lock, NULL);
		pthread_cond_init(&d->wake, NULL);
		snprintf(d->dir, sizeof(d->dir), "%s", config->dirs[i]);
		d->tried_direct = config->try_direct;
		snprintf(d->path, sizeof(d->path), "%s/%s.%u.%d",
				 config->dirs[i], config->file_prefix ? config->file_prefix : "xxl",
				 id, i);
		rc = set->pool ? io_pool_attach(set->pool, d) : io_open_file(d, config->try_direct);
		if (rc != 0)
		{
			xxl_error_set(err, rc == ENOSPC ? XXL_ENOSPC : XXL_EOPEN, rc,
						  "could not create spill file \"%s\": %s", d->path, strerror(rc));
			d->path[0] = '\0';
			xxl_disks_close(set);
			return NULL;
		}
		for (int t = 0; t < threads_per_disk; t++)
		{
			rc = start_thread(d);
			if (rc != 0)
			{
				xxl_error_set(err, XXL_ENOMEM, rc, "could not start I/O thread: %s", strerror(rc));
				xxl_disks_close(set);
				return NULL;
			}
		}
	}
	return set;
}

void
xxl_disks_close(xxl_disks *set)
{
	if (set == NULL)
		return;
	for (int i = 0; i < set->ndisks; i++)
	{
		xxl_disk   *d = &set->disk[i];

		if (d->nthreads > 0)
		{
			pthread_mutex_lock(&d->lock);
			d->stop = true;
			pthread_cond_broadcast(&d->wake);
			pthread_mutex_unlock(&d->lock);
			for (int t = 0; t < d->nthreads; t++)
				pthread_join(d->thread[t], NULL);
		}
		if (d->shared != NULL)
			io_pool_detach(d);
		else if (d->fd >= 0)
		{
			close(d->fd);
			if (d->path[0] != '\0')
			{
				unlink(d->path);
				io_account_removed(set->account, d->path, d->file_size);
			}
		}
		free(d->free_offsets);
		pthread_mutex_destroy(&d->lock);
		pthread_cond_destroy(&d->wake);
	}
	pthread_mutex_destroy(&set->done_lock);
	pthread_cond_destroy(&set->done_cond);
	free(set);
}

size_t
xxl_disks_block_size(const xxl_disks *set)
{
	return set->block_size;
}

int
xxl_disks_count(const xxl_disks *set)
{
	return set->ndisks;
}

bool
xxl_disks_direct(const xxl_disks *set)
{
	for (int i = 0; i < set->ndisks; i++)
		if (!set->disk[i].direct)
			return false;
	return true;
}

void
xxl_disks_stats(const xxl_disks *set, xxl_io_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	stats->ndisks = set->ndisks;
	for (int i = 0; i < set->ndisks; i++)
	{
		const xxl_disk_stats *s = &set->disk[i].stats;

		stats->disk[i].bytes_read = __atomic_load_n(&s->bytes_read, __ATOMIC_RELAXED);
		stats->disk[i].bytes_written = __atomic_load_n(&s->bytes_written, __ATOMIC_RELAXED);
		stats->disk[i].reads = __atomic_load_n(&s->reads, __ATOMIC_RELAXED);
		stats->disk[i].writes = __atomic_load_n(&s->writes, __ATOMIC_RELAXED);
	}
	stats->wait_read_ns = set->wait_read_ns;
	stats->wait_write_ns = set->wait_write_ns;
	stats->spill_bytes_peak = set->spill_bytes_peak;
	stats->direct = xxl_disks_direct(set);
}

/* Block manager --------------------------------------------------------- */

static unsigned
next_random(xxl_disks *set)
{
	set->rng = set->rng * 1103515245u + 12345u;
	return set->rng >> 8;
}

/* The disk the next block goes to. */
static int
choose_disk(xxl_disks *set)
{
	int			n = set->ndisks;
	int			pos = (int) (set->alloc_count % (uint64_t) n);

	if (set->strategy == XXL_ALLOC_RANDOM_CYCLING && pos == 0)
	{
		for (int i = 0; i < n; i++)
			set->cycle[i] = i;
		for (int i = n - 1; i > 0; i--)
		{
			int			j = (int) (next_random(set) % (unsigned) (i + 1));
			int			t = set->cycle[i];

			set->cycle[i] = set->cycle[j];
			set->cycle[j] = t;
		}
	}
	set->alloc_count++;
	return set->strategy == XXL_ALLOC_RANDOM_CYCLING ? set->cycle[pos] : pos;
}

xxl_status
xxl_block_alloc(xxl_disks *set, xxl_bid *bid, xxl_error *err)
{
	int			di = choose_disk(set);
	xxl_disk   *d = &set->disk[di];
	uint64_t	off;

	if (d->shared != NULL)
	{
		if (set->max_spill_bytes > 0 && set->spill_bytes + set->block_size > set->max_spill_bytes)
			return xxl_error_set(err, XXL_ELIMIT, 0,
								 "spill files would exceed the limit of %llu bytes",
								 (unsigned long long) set->max_spill_bytes);
		if (io_shared_alloc(d, &off, err) != XXL_OK)
			return err->code;
		*bid = XXL_BID_MAKE(di, off);
		set->spill_bytes += set->block_size;
		if (set->spill_bytes > set->spill_bytes_peak)
			set->spill_bytes_peak = set->spill_bytes;
		return XXL_OK;
	}
	if (d->nfree > 0)
	{
		*bid = XXL_BID_MAKE(di, d->free_offsets[--d->nfree]);
		return XXL_OK;
	}
	if (set->max_spill_bytes > 0 && set->spill_bytes + set->block_size > set->max_spill_bytes)
		return xxl_error_set(err, XXL_ELIMIT, 0,
							 "spill files would exceed the limit of %llu bytes",
							 (unsigned long long) set->max_spill_bytes);
	if (set->account != NULL && d->high_water + set->block_size > d->file_size)
	{
		uint64_t	grow = d->high_water + set->block_size - d->file_size;

		if (!io_account_grow(set->account, grow))
			return xxl_error_set(err, XXL_ELIMIT, 0,
								 "spill files would exceed the limit of %llu bytes",
								 (unsigned long long) set->account->limit);
		d->file_size += grow;
	}
	*bid = XXL_BID_MAKE(di, d->high_water);
	d->high_water += set->block_size;
	set->spill_bytes += set->block_size;
	if (set->spill_bytes > set->spill_bytes_peak)
		set->spill_bytes_peak = set->spill_bytes;
	return XXL_OK;
}

void
xxl_block_free(xxl_disks *set, xxl_bid bid)
{
	xxl_disk   *d = &set->disk[XXL_BID_DISK(bid)];

	if (d->shared != NULL)
	{
		io_shared_free(d, XXL_BID_OFFSET(bid));
		set->spill_bytes -= set->block_size;
		return;
	}
	if (d->nfree == d->free_capacity)
	{
		size_t		cap = d->free_capacity ? d->free_capacity * 2 : 64;
		uint64_t   *grown = realloc(d->free_offsets, cap * sizeof(uint64_t));

		if (grown == NULL)
			return;				/* the block is leaked in the file, not in memory */
		d->free_offsets = grown;
		d->free_capacity = cap;
	}
	d->free_offsets[d->nfree++] = XXL_BID_OFFSET(bid);
}

/* Requests -------------------------------------------------------------- */

void
xxl_io_post(xxl_disks *set, xxl_io_request *req)
{
	xxl_disk   *d = &set->disk[XXL_BID_DISK(req->bid)];

	req->next = NULL;
	if (!d->direct && req->len < set->inline_below)
	{
		/* the caller's time in the transfer counts as its wait */
		uint64_t	t0 = xxl_now_ns();

		req->sys_errno = transfer(d, req);
		req->state = 3;
		__atomic_add_fetch(req->is_write ? &set->wait_write_ns : &set->wait_read_ns,
						   xxl_now_ns() - t0, __ATOMIC_RELAXED);
		return;
	}
	req->state = 1;
	req->sys_errno = 0;
	pthread_mutex_lock(&d->lock);
	if (d->tail)
		d->tail->next = req;
	else
		d->head = req;
	d->tail = req;
	pthread_cond_signal(&d->wake);
	pthread_mutex_unlock(&d->lock);
}

bool
xxl_io_done(const xxl_io_request *req)
{
	return __atomic_load_n(&req->state, __ATOMIC_ACQUIRE) != 1;
}

/* The error of a finished transfer as an xxl_status. */
static xxl_status
transfer_status(xxl_disk *d, bool is_write, int rc, xxl_error *err)
{
	xxl_status	code = (rc == ENOSPC || rc == EDQUOT) ? XXL_ENOSPC : XXL_EIO;

	if (rc == 0)
		return XXL_OK;
	return xxl_error_set(err, code, rc, "could not %s spill file \"%s\": %s",
						 is_write ? "write" : "read", d->path, strerror(rc));
}

static xxl_status
request_status(xxl_disks *set, xxl_io_request *req, int rc, xxl_error *err)
{
	return transfer_status(&set->disk[XXL_BID_DISK(req->bid)], req->is_write, rc, err);
}

xxl_status
xxl_io_sync(xxl_disks *set, xxl_io_request *req, xxl_error *err)
{
	int			rc = transfer(&set->disk[XXL_BID_DISK(req->bid)], req);

	req->state = 0;
	req->sys_errno = rc;
	return request_status(set, req, rc, err);
}

xxl_status
xxl_io_readv_sync(xxl_disks *set, xxl_bid bid, const struct iovec *iov, int iovcnt, size_t len,
				  xxl_error *err)
{
	xxl_disk   *d = &set->disk[XXL_BID_DISK(bid)];
	/* unaligned pieces on an O_DIRECT file would turn the whole disk buffered */
	int			rc = d->direct ? EINVAL
		: transfer_pieces(d, false, iov, iovcnt, XXL_BID_OFFSET(bid), len);

	return transfer_status(d, false, rc, err);
}

xxl_status
xxl_io_wait(xxl_disks *set, xxl_io_request *req, xxl_error *err)
{
	int			rc;

	if (__atomic_load_n(&req->state, __ATOMIC_ACQUIRE) == 0)
		return XXL_OK;
	if (req->state == 3)
	{
		/* done by this thread when it was posted */
		req->state = 0;
		return request_status(set, req, req->sys_errno, err);
	}
	if (__atomic_load_n(&req->state, __ATOMIC_ACQUIRE) != 2)
	{
		uint64_t	t0 = xxl_now_ns();

		pthread_mutex_lock(&set->done_lock);
		while (__atomic_load_n(&req->state, __ATOMIC_ACQUIRE) != 2)
			pthread_cond_wait(&set->done_cond, &set->done_lock);
		pthread_mutex_unlock(&set->done_lock);
		/* (a set may be read by two threads: a sort's caller and its worker) */
		__atomic_add_fetch(req->is_write ? &set->wait_write_ns : &set->wait_read_ns,
						   xxl_now_ns() - t0, __ATOMIC_RELAXED);
	}
	else
	{
		/* pair with the I/O thread's unlock so the buffer contents are visible */
		pthread_mutex_lock(&set->done_lock);
		pthread_mutex_unlock(&set->done_lock);
	}
	req->state = 0;
	rc = req->sys_errno;
	return request_status(set, req, rc, err);
}
