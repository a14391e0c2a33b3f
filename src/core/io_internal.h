/*
 * io_internal.h — what io.c (requests, I/O threads, the block manager) and
 * io_pool.c (the operator's spill account and its shared spill files) both
 * see: a disk set, its disks, and the pool's calls.
 */
#ifndef XXL_IO_INTERNAL_H
#define XXL_IO_INTERNAL_H

#include "core/xxl_io.h"

#include <pthread.h>

typedef struct shared_file shared_file;

/*
 * The blocks a set holds in a shared file (owner thread only): an
 * open-addressing set of offsets, so that closing gives back what the set
 * never freed.
 */
typedef struct held_blocks
{
	uint64_t   *slot;			/* HELD_EMPTY or an offset */
	size_t		cap,			/* a power of two, or 0 */
				n;
} held_blocks;

typedef struct xxl_disk
{
	struct xxl_disks *set;
	int			index;
	int			fd;
	bool		direct;
	bool		tried_direct;	/* the set asked for O_DIRECT */
	char		dir[PATH_MAX];	/* where: the pool matches files by it */
	int			nthreads;		/* started so far */
	char		path[PATH_MAX];
	pthread_t	thread[XXL_MAX_THREADS_PER_DISK];
	pthread_mutex_t lock;
	pthread_cond_t wake;
	xxl_io_request *head;
	xxl_io_request *tail;
	bool		stop;

	/* block manager state (owner thread only) */
	shared_file *shared;		/* the pool's file this disk allocates in, or NULL */
	held_blocks held;			/* ... and the blocks it holds there */
	/* without a pool: the set's own file */
	uint64_t	high_water;		/* file size handed out so far */
	uint64_t	file_size;		/* bytes the account charged for the file */
	uint64_t   *free_offsets;
	size_t		nfree;
	size_t		free_capacity;

	/* counters, updated by the I/O thread with atomics */
	xxl_disk_stats stats;
} xxl_disk;

struct xxl_disks
{
	xxl_file_pool *pool;
	xxl_spill_account *account;
	int			ndisks;
	size_t		block_size;
	xxl_alloc_strategy strategy;
	uint64_t	max_spill_bytes;
	uint64_t	fail_write_after;
	uint64_t	bytes_written_total;	/* atomic; for fail_write_after */
	uint64_t	fail_read_after;
	uint64_t	bytes_read_total;	/* atomic; for fail_read_after */
	size_t		inline_below;	/* buffered requests below: done by the caller */
	uint64_t	spill_bytes;	/* the set's blocks: high waters, or held in shared files */
	uint64_t	spill_bytes_peak;
	uint64_t	wait_read_ns;
	uint64_t	wait_write_ns;

	/* allocation cursor */
	uint64_t	alloc_count;
	int			cycle[XXL_MAX_DISKS];
	unsigned	rng;

	pthread_mutex_t done_lock;
	pthread_cond_t done_cond;
	xxl_disk	disk[];
};

/* Open a new spill file at d->path (O_DIRECT if asked and accepted): 0 or errno. */
int			io_open_file(xxl_disk *d, bool try_direct);

/* Charge bytes a file grows by; false (nothing charged) past the limit. */
bool		io_account_grow(xxl_spill_account *acc, uint64_t bytes);
/* A file of the account was removed: its space is free, the host hears of it. */
void		io_account_removed(xxl_spill_account *acc, const char *path, uint64_t size);

/*
 * Give d the pool's file of its directory and O_DIRECT wish, creating it at
 * d->path if there is none yet: 0 or errno.
 */
int			io_pool_attach(xxl_file_pool *pool, xxl_disk *d);
/* d is done with its shared file: the blocks it still holds are free. */
void		io_pool_detach(xxl_disk *d);
/* A block of the set's size in d's shared file, at *off. */
xxl_status	io_shared_alloc(xxl_disk *d, uint64_t *off, xxl_error *err);
void		io_shared_free(xxl_disk *d, uint64_t off);

#endif							/* XXL_IO_INTERNAL_H */
