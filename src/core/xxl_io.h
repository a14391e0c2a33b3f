/*
 * xxl_io.h — asynchronous block I/O over several disks (thesis §3.2) and the
 * block manager on top of it (thesis §3.3).
 *
 * A disk set is a list of directories, one per physical disk.  Opening it
 * creates one spill file per directory (O_DIRECT where the filesystem allows
 * it, buffered otherwise) and starts I/O threads (two by default) serving one
 * FIFO request queue per disk.  Requests are posted without waiting and completed by the disk's
 * thread; the caller waits for them when it needs the data, and the time it
 * waits is counted.  I/O threads block all signals, never allocate from the
 * budget and never call back into the caller.
 *
 * Blocks are fixed-size extents of a spill file, named by an xxl_bid.  The
 * block manager hands them out across the disks (striping or randomized
 * cycling), recycles freed ones, and enforces an optional limit on the total
 * spill size.
 */
#ifndef XXL_IO_H
#define XXL_IO_H

#include <limits.h>

#include "core/xxl_common.h"

#define XXL_MAX_DISKS 64
#define XXL_MAX_THREADS_PER_DISK 8

/*
 * Parts whose blocks (sorters) or write buffers (permutations) are smaller
 * spill through the page cache even when the resources ask for O_DIRECT:
 * with one or two requests in flight, direct requests below about a
 * megabyte are latency-bound while the kernel's readahead and writeback
 * coalesce buffered ones (docs/engine.md, I/O layer).
 */
#define XXL_DIRECT_BLOCK_MIN (1024 * 1024)

/*
 * A request to a buffered file below this size is carried out by the
 * caller when it is posted, not by the disk's thread: it is a copy to or
 * from the page cache, which costs less than handing it over (a lock, a
 * wakeup of the I/O thread, another of the caller) on a machine whose
 * cores the sorters' threads already keep busy (docs/engine.md has the
 * figures).  The price: a read of a page the kernel no longer holds waits
 * on the caller's thread.
 */
#define XXL_INLINE_IO_MAX XXL_DIRECT_BLOCK_MIN

/* Whether O_DIRECT pays for transfers of this many bytes. */
static inline bool
xxl_direct_pays(size_t block)
{
	return block >= XXL_DIRECT_BLOCK_MIN;
}

/*
 * A file read at any place keeps where each of its allocation units is:
 * units of at least this much (a whole number of blocks) keep that table
 * at 8 bytes a MB, whatever the blocks.
 */
#define XXL_EXTENT_MIN (1024 * 1024)

/* The allocation unit of such a file with blocks of this size. */
static inline size_t
xxl_extent_for(size_t block)
{
	return block >= XXL_EXTENT_MIN ? block : XXL_EXTENT_MIN / block * block;
}

typedef enum xxl_alloc_strategy
{
	XXL_ALLOC_STRIPING,			/* round robin over the disks */
	XXL_ALLOC_RANDOM_CYCLING	/* a fresh random permutation per cycle */
} xxl_alloc_strategy;

/*
 * An operator's spill files, shared by its disk sets (io_pool.c): one file
 * per directory and O_DIRECT wish, in which every set opened with the pool
 * allocates its blocks, each at the first free run of space that fits
 * it.  A block a set frees, or still holds when it closes, is space for
 * every set, so the files grow to the most the operator held at once rather
 * than to the sum of its sets' peaks.  The pool removes its files when
 * destroyed, which must come after every set that used it is
 * closed.  Thread-safe.
 */
typedef struct xxl_file_pool xxl_file_pool;

/*
 * The spill space of one operator, over all its disk sets and pooled files:
 * the limit it must keep (temp_file_limit holds for an operator as a
 * whole, however many sorters and sets it opens), what its files occupy
 * now and at most, and the files removed so far with their sizes, which the
 * host reports as it reports its own temporary files.  Counted by bytes the
 * files grew, so a pooled file reused by a later set costs nothing again.
 * Thread-safe.
 */
typedef struct xxl_spill_removal
{
	char		path[PATH_MAX];
	uint64_t	size;
} xxl_spill_removal;

typedef struct xxl_spill_account
{
	uint64_t	limit;			/* bytes; 0 = unlimited */
	uint64_t	used;			/* atomic */
	uint64_t	peak;			/* atomic */
	pthread_mutex_t lock;		/* for the removals */
	xxl_spill_removal *removed;
	size_t		nremoved,
				cap;
} xxl_spill_account;

void		xxl_spill_account_init(xxl_spill_account *acc, uint64_t limit);
/* Frees the removal list; the account may be initialized again. */
void		xxl_spill_account_destroy(xxl_spill_account *acc);

xxl_file_pool *xxl_file_pool_create(void);
void		xxl_file_pool_destroy(xxl_file_pool *pool);
/* The files the pool holds (for tests). */
int			xxl_file_pool_size(xxl_file_pool *pool);

typedef struct xxl_disk_config
{
	const char *const *dirs;	/* spill directories, one per disk */
	int			ndisks;
	const char *file_prefix;	/* e.g. "pgsql_tmp1234.xxl"; a counter is appended */
	size_t		block_size;		/* multiple of XXL_ALIGN */
	bool		try_direct;		/* use O_DIRECT where the filesystem accepts it */
	xxl_alloc_strategy strategy;
	uint64_t	max_spill_bytes;	/* 0 = unlimited; exceeding it gives XXL_ELIMIT */
	uint64_t	fail_write_after;	/* testing: writes past this many bytes fail
									 * with ENOSPC; 0 = never */
	uint64_t	fail_read_after;	/* testing: reads past this many bytes fail
									 * with EIO; 0 = never */
	unsigned	seed;			/* for randomized cycling */
	int			threads_per_disk;	/* I/O threads (requests in flight) per disk; 0 = 2 */
	size_t		inline_below;	/* buffered requests below this many bytes are
								 * done by the caller; 0 = XXL_INLINE_IO_MAX,
								 * 1 = none (tests of the threads) */
	xxl_file_pool *pool;		/* NULL: each set creates and removes its files */
	xxl_spill_account *account; /* the operator's spill space (limit, use,
								 * removals), shared by its sets; NULL: only
								 * this set's max_spill_bytes */
} xxl_disk_config;

/*
 * Where a running operator is, past what the host sees itself (rows it fed,
 * phases it entered): what its own sorter took so far, the step of its
 * middle phase that repeats (a merge pass, a BFS level, a PageRank
 * iteration) and how far that step is.  The host owns it and reads it in
 * its cancel polls; the engine writes it on the owner thread only, once
 * per run, pass, level or poll interval, never per record, and tells the
 * host when a step begins (changed): a step may begin where its work polls
 * rarely.
 */
typedef struct xxl_progress
{
	uint64_t	records;		/* the input its own sorter took (a host that feeds
								 * the engine otherwise counts its input here) */
	uint64_t	bytes;			/* ... and its bytes */
	uint64_t	runs;			/* sorted runs formed so far */
	uint64_t	memory_peak;	/* the most of its budget it used so far; 0: unknown */
	const char *step;			/* "merge pass", "level", "iteration"; NULL: none */
	uint32_t	step_no;		/* from 1 */
	uint32_t	steps;			/* planned steps; 0: not known in advance */
	uint64_t	done;			/* units of the step done (bytes merged) ... */
	uint64_t	total;			/* ... of this many; 0: not known */
	/*
	 * The host's, may be NULL: called on the owner thread when a step
	 * begins.  It only looks (never cancels or waits), so a step is no
	 * cancel point.
	 */
	void		(*changed) (void *arg);
	void	   *changed_arg;
} xxl_progress;

/* Enter step step_no of steps (p may be NULL: nobody asked).  Owner thread. */
static inline void
xxl_progress_step(xxl_progress *p, const char *step, uint32_t step_no, uint32_t steps)
{
	if (p != NULL)
	{
		p->step = step;
		p->step_no = step_no;
		p->steps = steps;
		p->done = p->total = 0;
		if (p->changed != NULL)
			p->changed(p->changed_arg);
	}
}

/* The current step's units done so far, of total. */
static inline void
xxl_progress_done(xxl_progress *p, uint64_t done, uint64_t total)
{
	if (p != NULL)
	{
		p->done = done;
		p->total = total;
	}
}

/*
 * What an operator may use: the one description the host fills (memory,
 * threads, spill disks, cancel hook, progress) and every engine config takes.
 */
typedef struct xxl_resources
{
	size_t		memory;			/* budget in bytes for everything */
	int			threads;		/* OpenMP threads; 0 = default */
	xxl_disk_config disk;		/* where to spill; block_size: the largest
								 * block to use (0 = the part's default) */
	xxl_cancel_fn cancel;		/* polled between blocks of work; may be NULL */
	void	   *cancel_arg;
	xxl_progress *progress;		/* the operator's steps go here; may be NULL.
								 * Only the operator's own top part writes it:
								 * parts made for it get none */
} xxl_resources;

/* Per-disk counters. */
typedef struct xxl_disk_stats
{
	uint64_t	bytes_read;
	uint64_t	bytes_written;
	uint64_t	reads;
	uint64_t	writes;
} xxl_disk_stats;

typedef struct xxl_io_stats
{
	int			ndisks;
	xxl_disk_stats disk[XXL_MAX_DISKS];
	uint64_t	wait_read_ns;	/* time the caller blocked waiting for reads */
	uint64_t	wait_write_ns;	/* ... and for writes */
	uint64_t	spill_bytes_peak;	/* largest total allocated spill space */
	bool		direct;			/* every file is opened with O_DIRECT */
} xxl_io_stats;

/* A block id: disk number in the top 8 bits, byte offset below. */
typedef uint64_t xxl_bid;
#define XXL_BID_DISK(bid) ((int) ((bid) >> 56))
#define XXL_BID_OFFSET(bid) ((bid) & ((UINT64_C(1) << 56) - 1))
#define XXL_BID_MAKE(disk, off) (((uint64_t) (disk) << 56) | (off))
#define XXL_BID_NONE UINT64_MAX

/*
 * One asynchronous request.  The caller owns the struct (usually embedded in
 * a buffer descriptor) and must not touch it or its buffer until
 * xxl_io_wait() has returned.  A small request to a buffered file
 * (XXL_INLINE_IO_MAX) is done by the time xxl_io_post() returns; its
 * error, if any, still comes from xxl_io_wait().
 */
typedef struct xxl_io_request
{
	xxl_bid		bid;
	void	   *buf;
	size_t		len;			/* multiple of XXL_ALIGN */
	bool		is_write;
	/* completion, set by the I/O thread */
	volatile int state;			/* 0 idle, 1 queued, 2 done by a thread, 3 done
								 * by the caller */
	int			sys_errno;
	struct xxl_io_request *next;
} xxl_io_request;

typedef struct xxl_disks xxl_disks;

xxl_disks  *xxl_disks_open(const xxl_disk_config *config, xxl_error *err);
/* Stop the threads (after finishing queued requests), close and remove files. */
void		xxl_disks_close(xxl_disks *disks);
size_t		xxl_disks_block_size(const xxl_disks *disks);
int			xxl_disks_count(const xxl_disks *disks);
bool		xxl_disks_direct(const xxl_disks *disks);
void		xxl_disks_stats(const xxl_disks *disks, xxl_io_stats *stats);

/* Block manager. */
xxl_status	xxl_block_alloc(xxl_disks *disks, xxl_bid *bid, xxl_error *err);
void		xxl_block_free(xxl_disks *disks, xxl_bid bid);

/* Post a request; the request's bid, buf, len and is_write must be set. */
void		xxl_io_post(xxl_disks *disks, xxl_io_request *req);
/* Wait for one request; returns its error as an xxl_status. */
xxl_status	xxl_io_wait(xxl_disks *disks, xxl_io_request *req, xxl_error *err);
bool		xxl_io_done(const xxl_io_request *req);
/*
 * Carry a request out in the calling thread, now, and return its error.  A
 * small transfer to or from a buffered file is a copy into or out of the
 * page cache, cheaper than the two thread wake-ups an asynchronous request
 * costs.
 */
xxl_status	xxl_io_sync(xxl_disks *disks, xxl_io_request *req, xxl_error *err);

/*
 * One read of len bytes at bid on the calling thread, scattered over the
 * given buffers (buffered files only: the pieces need no alignment).  For
 * callers that read several adjacent blocks into one place with their
 * padding cut out: one system call instead of one per block.
 */
#define XXL_IO_READV_MAX 64
struct iovec;
xxl_status	xxl_io_readv_sync(xxl_disks *disks, xxl_bid bid, const struct iovec *iov, int iovcnt,
							  size_t len, xxl_error *err);

/* Whether O_DIRECT is compiled in on this platform. */
bool		xxl_io_direct_supported(void);

#endif							/* XXL_IO_H */
