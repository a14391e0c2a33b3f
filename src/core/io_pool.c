/*
 * io_pool.c — where an operator's spill space lives: its account (the limit
 * it keeps as a whole, what its files occupy, the files removed) and its
 * pool of spill files.
 *
 * The pool holds one file per directory, which every disk set of the
 * operator opened with the pool allocates its blocks in; the sets that want
 * O_DIRECT use a second descriptor of it (the kernel keeps the page cache
 * coherent with direct transfers).  A bitmap of the file's XXL_ALIGN-byte
 * units says what is in use, and a block goes to the first run of free
 * units big enough: parts use blocks of many sizes, and freed neighbours
 * merge by themselves.  A block one set frees, or still holds when it
 * closes, is space for any set, so the files grow to the most the operator
 * held at once, not to the sum of what each of its sets ever held: a DC3
 * build keeps sorters and permutations of many levels whose peaks do not
 * coincide.  The files are kept until the pool is destroyed: removing a
 * large file with its cached pages takes time, and writing over cached
 * pages is cheaper than filling new ones.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "core/io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct shared_file
{
	int			fd;				/* buffered */
	int			fd_direct;		/* for sets that want O_DIRECT: -1 until one
								 * comes, fd if the filesystem refuses it */
	bool		direct;			/* fd_direct is O_DIRECT */
	char		path[PATH_MAX];
	char		dir[PATH_MAX];
	uint64_t	size;			/* bytes its account charged: the most ever in use */
	xxl_spill_account *account;
	uint64_t   *used;			/* a bit per XXL_ALIGN bytes of size: in use */
	size_t		words;			/* of used */
	uint64_t	hint;			/* no free unit below this one */
	/*
	 * Per block size (in units), where its next first-fit search starts: no
	 * run of that many free units begins below.  Parts of different block
	 * sizes leave holes too small for each other; without these, every
	 * allocation scanned them all again from the lowest free unit, under
	 * the pool's lock.
	 */
	struct fit_class
	{
		uint64_t	k,
					hint;
	}		   *fit;
	int			nfit,
				capfit;
	int			users;			/* disks attached */
};

struct xxl_file_pool
{
	pthread_mutex_t lock;		/* the files and their maps */
	int			n,
				cap;
	shared_file **file;
};

int
io_open_file(xxl_disk *d, bool try_direct)
{
	int			flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC;

#ifdef O_DIRECT
	if (try_direct)
	{
		d->fd = open(d->path, flags | O_DIRECT, 0600);
		if (d->fd >= 0)
		{
			d->direct = true;
			return 0;
		}
		if (errno != EINVAL)
			return errno;
	}
#else
	(void) try_direct;
#endif
	d->fd = open(d->path, flags, 0600);
	d->direct = false;
	return d->fd >= 0 ? 0 : errno;
}

/* The operator's spill account -------------------------------------------- */

void
xxl_spill_account_init(xxl_spill_account *acc, uint64_t limit)
{
	memset(acc, 0, sizeof(*acc));
	acc->limit = limit;
	pthread_mutex_init(&acc->lock, NULL);
}

void
xxl_spill_account_destroy(xxl_spill_account *acc)
{
	free(acc->removed);
	acc->removed = NULL;
	acc->nremoved = acc->cap = 0;
	pthread_mutex_destroy(&acc->lock);
}

bool
io_account_grow(xxl_spill_account *acc, uint64_t bytes)
{
	uint64_t	now = __atomic_add_fetch(&acc->used, bytes, __ATOMIC_RELAXED);
	uint64_t	peak = __atomic_load_n(&acc->peak, __ATOMIC_RELAXED);

	if (acc->limit > 0 && now > acc->limit)
	{
		__atomic_sub_fetch(&acc->used, bytes, __ATOMIC_RELAXED);
		return false;
	}
	while (now > peak &&
		   !__atomic_compare_exchange_n(&acc->peak, &peak, now, true, __ATOMIC_RELAXED,
										__ATOMIC_RELAXED))
		;
	return true;
}

void
io_account_removed(xxl_spill_account *acc, const char *path, uint64_t size)
{
	if (acc == NULL)
		return;
	__atomic_sub_fetch(&acc->used, size, __ATOMIC_RELAXED);
	pthread_mutex_lock(&acc->lock);
	if (acc->nremoved == acc->cap)
	{
		size_t		cap = acc->cap ? 2 * acc->cap : 16;
		xxl_spill_removal *grown = realloc(acc->removed, cap * sizeof(*grown));

		if (grown != NULL)
		{
			acc->removed = grown;
			acc->cap = cap;
		}
	}
	if (acc->nremoved < acc->cap)
	{
		xxl_spill_removal *r = &acc->removed[acc->nremoved++];

		snprintf(r->path, sizeof(r->path), "%s", path);
		r->size = size;
	}
	pthread_mutex_unlock(&acc->lock);
}

/* The pool ------------------------------------------------------------------ */

xxl_file_pool *
xxl_file_pool_create(void)
{
	xxl_file_pool *pool = calloc(1, sizeof(*pool));

	if (pool)
		pthread_mutex_init(&pool->lock, NULL);
	return pool;
}

void
xxl_file_pool_destroy(xxl_file_pool *pool)
{
	if (pool == NULL)
		return;
	for (int i = 0; i < pool->n; i++)
		if (pool->file[i]->users > 0)
		{
			/*
			 * A set is still open (a caller's bug): its files go from the
			 * directory, but the pool stays for the set to close against.
			 */
			for (int k = 0; k < pool->n; k++)
				if (pool->file[k]->path[0] != '\0')
				{
					unlink(pool->file[k]->path);
					io_account_removed(pool->file[k]->account, pool->file[k]->path, pool->file[k]->size);
					pool->file[k]->path[0] = '\0';
				}
			return;
		}
	for (int i = 0; i < pool->n; i++)
	{
		shared_file *f = pool->file[i];

		if (f->fd_direct >= 0 && f->fd_direct != f->fd)
			close(f->fd_direct);
		close(f->fd);
		unlink(f->path);
		io_account_removed(f->account, f->path, f->size);
		free(f->used);
		free(f->fit);
		free(f);
	}
	free(pool->file);
	pthread_mutex_destroy(&pool->lock);
	free(pool);
}

int
xxl_file_pool_size(xxl_file_pool *pool)
{
	int			n;

	pthread_mutex_lock(&pool->lock);
	n = pool->n;
	pthread_mutex_unlock(&pool->lock);
	return n;
}

/* f's descriptor for sets that want O_DIRECT (caller holds the pool lock). */
static int
direct_fd(shared_file *f)
{
#ifdef O_DIRECT
	if (f->fd_direct < 0)
	{
		f->fd_direct = open(f->path, O_RDWR | O_CLOEXEC | O_DIRECT);
		if (f->fd_direct >= 0)
			f->direct = true;
		else if (errno == EINVAL)
			f->fd_direct = f->fd;
		else
			return errno;
	}
	return 0;
#else
	f->fd_direct = f->fd;
	return 0;
#endif
}

int
io_pool_attach(xxl_file_pool *pool, xxl_disk *d)
{
	shared_file *f = NULL;
	int			rc = 0;

	pthread_mutex_lock(&pool->lock);
	for (int i = 0; i < pool->n && f == NULL; i++)
		if (strcmp(pool->file[i]->dir, d->dir) == 0)
			f = pool->file[i];
	if (f == NULL)
	{
		if (pool->n == pool->cap)
		{
			int			cap = pool->cap ? 2 * pool->cap : 4;
			shared_file **grown = realloc(pool->file, (size_t) cap * sizeof(*grown));

			if (grown == NULL)
			{
				pthread_mutex_unlock(&pool->lock);
				return ENOMEM;
			}
			pool->file = grown;
			pool->cap = cap;
		}
		f = calloc(1, sizeof(*f));
		if (f == NULL)
			rc = ENOMEM;
		else if ((rc = io_open_file(d, false)) != 0)
		{
			free(f);
			f = NULL;
		}
		else
		{
			f->fd = d->fd;
			f->fd_direct = -1;
			f->account = d->set->account;
			memcpy(f->path, d->path, sizeof(f->path));
			memcpy(f->dir, d->dir, sizeof(f->dir));
			pool->file[pool->n++] = f;
		}
	}
	if (f != NULL && d->tried_direct)
		rc = direct_fd(f);
	if (f != NULL && rc == 0)
	{
		f->users++;
		d->shared = f;
		d->fd = d->tried_direct ? f->fd_direct : f->fd;
		d->direct = d->tried_direct && f->direct;
		memcpy(d->path, f->path, sizeof(d->path));
	}
	else
		d->fd = -1;
	pthread_mutex_unlock(&pool->lock);
	return rc;
}

/* Blocks held by a disk ------------------------------------------------------- */

#define HELD_EMPTY UINT64_MAX

static inline size_t
held_hash(uint64_t off, size_t cap)
{
	return (size_t) ((off / XXL_ALIGN) * UINT64_C(0x9E3779B97F4A7C15) >> 20) & (cap - 1);
}

static bool
held_add(held_blocks *h, uint64_t off)
{
	size_t		i;

	if ((h->n + 1) * 2 > h->cap)
	{
		size_t		cap = h->cap ? 2 * h->cap : 256;
		uint64_t   *slot = malloc(cap * sizeof(uint64_t));

		if (slot == NULL)
			return false;
		memset(slot, 0xFF, cap * sizeof(uint64_t));
		for (size_t k = 0; k < h->cap; k++)
			if (h->slot[k] != HELD_EMPTY)
			{
				for (i = held_hash(h->slot[k], cap); slot[i] != HELD_EMPTY; i = (i + 1) & (cap - 1))
					;
				slot[i] = h->slot[k];
			}
		free(h->slot);
		h->slot = slot;
		h->cap = cap;
	}
	for (i = held_hash(off, h->cap); h->slot[i] != HELD_EMPTY; i = (i + 1) & (h->cap - 1))
		;
	h->slot[i] = off;
	h->n++;
	return true;
}

/* Remove off (linear probing: the entries after it move back into the hole). */
static void
held_remove(held_blocks *h, uint64_t off)
{
	size_t		i,
				j;

	if (h->cap == 0)
		return;
	for (i = held_hash(off, h->cap); h->slot[i] != off; i = (i + 1) & (h->cap - 1))
		if (h->slot[i] == HELD_EMPTY)
			return;
	h->slot[i] = HELD_EMPTY;
	h->n--;
	for (j = (i + 1) & (h->cap - 1); h->slot[j] != HELD_EMPTY; j = (j + 1) & (h->cap - 1))
	{
		size_t		home = held_hash(h->slot[j], h->cap);

		/* j's entry may fill the hole at i unless its home lies in (i, j] */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
		{
			h->slot[i] = h->slot[j];
			h->slot[j] = HELD_EMPTY;
			i = j;
		}
	}
}

/* Shared blocks ---------------------------------------------------------------- */

/* Mark units [u, u + k) of f in use or free, a word at a time. */
static void
mark(shared_file *f, uint64_t u, uint64_t k, bool in_use)
{
	uint64_t	end = u + k;

	while (u < end)
	{
		uint64_t	bits = end - u < 64 - u % 64 ? end - u : 64 - u % 64;
		uint64_t	mask = (bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1) << (u % 64);

		if (in_use)
			f->used[u / 64] |= mask;
		else
			f->used[u / 64] &= ~mask;
		u += bits;
	}
}

/* The search start kept for runs of k units (NULL: out of memory for another size). */
static uint64_t *
fit_hint(shared_file *f, uint64_t k)
{
	for (int i = 0; i < f->nfit; i++)
		if (f->fit[i].k == k)
			return &f->fit[i].hint;
	if (f->nfit == f->capfit)
	{
		int			cap = f->capfit ? 2 * f->capfit : 16;
		struct fit_class *grown = realloc(f->fit, (size_t) cap * sizeof(*grown));

		/* (without one, the search starts from the lowest free unit) */
		if (grown == NULL)
			return NULL;
		f->fit = grown;
		f->capfit = cap;
	}
	f->fit[f->nfit].k = k;
	f->fit[f->nfit].hint = 0;
	return &f->fit[f->nfit++].hint;
}

/* The first unit at or after u in use (or the file's end). */
static uint64_t
free_run_end(const shared_file *f, uint64_t u)
{
	uint64_t	units = f->size / XXL_ALIGN;

	while (u < units)
	{
		uint64_t	w = f->used[u / 64] >> (u % 64);

		if (w)
		{
			u += (uint64_t) __builtin_ctzll(w);
			return u < units ? u : units;
		}
		u += 64 - u % 64;
	}
	return units;
}

/* The first unit of the run of free units that ends at unit u - 1 (u if u - 1 is in use). */
static uint64_t
free_run_start(const shared_file *f, uint64_t u)
{
	while (u > 0)
	{
		uint64_t	i = u - 1;
		uint64_t	low = i % 64 == 63 ? ~UINT64_C(0) : (UINT64_C(1) << (i % 64 + 1)) - 1;
		uint64_t	used = f->used[i / 64] & low;

		if (used)
			return i - i % 64 + (63 - (uint64_t) __builtin_clzll(used)) + 1;
		u = i - i % 64;
	}
	return 0;
}

/*
 * The first run of k free units of f, at or above the hint; a run that
 * reaches the end of the file may go on past it (the file then grows by
 * what is missing).
 */
static uint64_t
first_fit(const shared_file *f, uint64_t k, uint64_t from)
{
	uint64_t	units = f->size / XXL_ALIGN,
				start = from,
				run = 0;

	/* a run of used or free units at a time, found with a bit scan */
	for (uint64_t i = from; i < units;)
	{
		uint64_t	w = f->used[i / 64] >> (i % 64);	/* bit 0: unit i */
		uint64_t	avail = 64 - i % 64,
					n;

		if (avail > units - i)
			avail = units - i;
		if (w & 1)
		{
			n = ~w ? (uint64_t) __builtin_ctzll(~w) : 64;
			run = 0;
		}
		else
		{
			n = w ? (uint64_t) __builtin_ctzll(w) : 64;
			if (run == 0)
				start = i;
			run += n < avail ? n : avail;
			if (run >= k)
				return start;
		}
		i += n < avail ? n : avail;
	}
	return run > 0 ? start : units;
}

xxl_status
io_shared_alloc(xxl_disk *d, uint64_t *off, xxl_error *err)
{
	xxl_disks  *set = d->set;
	shared_file *f = d->shared;
	uint64_t	k = set->block_size / XXL_ALIGN,
				u,
				end,
			   *hint;
	xxl_file_pool *pool = set->pool;
	xxl_status	rc = XXL_OK;

	pthread_mutex_lock(&pool->lock);
	hint = fit_hint(f, k);
	u = first_fit(f, k, hint && *hint > f->hint ? *hint : f->hint);
	end = (u + k) * XXL_ALIGN;
	if (end > f->size)
	{
		size_t		words = (size_t) ((u + k + 63) / 64);

		if (words > f->words)
		{
			size_t		cap = words > 2 * f->words ? words : 2 * f->words;
			uint64_t   *grown = realloc(f->used, cap * sizeof(uint64_t));

			if (grown == NULL)
				rc = xxl_error_set(err, XXL_ENOMEM, errno, "could not track spill space");
			else
			{
				memset(grown + f->words, 0, (cap - f->words) * sizeof(uint64_t));
				f->used = grown;
				f->words = cap;
			}
		}
		if (rc == XXL_OK && f->account != NULL && !io_account_grow(f->account, end - f->size))
			rc = xxl_error_set(err, XXL_ELIMIT, 0, "spill files would exceed the limit of %llu bytes",
							   (unsigned long long) f->account->limit);
		if (rc == XXL_OK)
			f->size = end;
	}
	if (rc == XXL_OK)
	{
		mark(f, u, k, true);
		if (u == f->hint)
			f->hint = u + k;
		/* no run of k free units began below u, nor can one begin inside the block */
		if (hint)
			*hint = u + k;
		*off = u * XXL_ALIGN;
	}
	pthread_mutex_unlock(&pool->lock);
	if (rc == XXL_OK && !held_add(&d->held, *off))
	{
		io_shared_free(d, *off);
		rc = xxl_error_set(err, XXL_ENOMEM, errno, "could not track a spill block");
	}
	return rc;
}

/* Units of a block at off free again (caller holds the pool lock). */
static void
shared_release(shared_file *f, size_t size, uint64_t off)
{
	uint64_t	u = off / XXL_ALIGN,
				r,
				e;

	mark(f, u, size / XXL_ALIGN, false);
	if (u < f->hint)
		f->hint = u;
	/*
	 * the free run around the block is the only one that changed: runs of
	 * the sizes it now takes may begin where it begins (any size, if it
	 * reaches the file's end, past which a run may grow)
	 */
	r = free_run_start(f, u);
	e = free_run_end(f, u + size / XXL_ALIGN);
	for (int i = 0; i < f->nfit; i++)
		if ((f->fit[i].k <= e - r || e == f->size / XXL_ALIGN) && r < f->fit[i].hint)
			f->fit[i].hint = r;
}

void
io_shared_free(xxl_disk *d, uint64_t off)
{
	xxl_file_pool *pool = d->set->pool;

	held_remove(&d->held, off);
	pthread_mutex_lock(&pool->lock);
	shared_release(d->shared, d->set->block_size, off);
	pthread_mutex_unlock(&pool->lock);
}

void
io_pool_detach(xxl_disk *d)
{
	xxl_file_pool *pool = d->set->pool;

	pthread_mutex_lock(&pool->lock);
	for (size_t i = 0; i < d->held.cap; i++)
		if (d->held.slot[i] != HELD_EMPTY)
			shared_release(d->shared, d->set->block_size, d->held.slot[i]);
	d->shared->users--;
	pthread_mutex_unlock(&pool->lock);
	free(d->held.slot);
	memset(&d->held, 0, sizeof(d->held));
	d->shared = NULL;
	d->fd = -1;
}
