/*
 * xxl_env.h — the operator environment: what every multi-part engine
 * operator (graph, text, and the ones to come) stands on.
 *
 * An operator gets one resource description (memory, threads, disks,
 * cancel hook) and turns it into an environment that owns:
 *
 *   - one budget, from which every part's memory is reserved through one
 *     API (xxl_env_reserve / xxl_env_release): nothing else writes the
 *     budget's counters;
 *   - its own spill files, opened at the first spill, and a file pool that
 *     every sorter, scatter, queue and spool of the operator reuses;
 *   - the cancel hook, which only the owner thread may ask the host about:
 *     parts running on workers see a stop flag the owner sets;
 *   - the parts themselves, each charged to the budget: a sorter (the core
 *     sorter, or a distribution sort when the input is bounded and the key
 *     short), a scatter (external permutation), the external priority queue
 *     and byte spools (memory while small, the own files when not);
 *   - the I/O fold: the counters of every finished part, added disk by disk.
 *
 * The operator's algorithm decides only how to split its budget (the pool
 * for parts, the spool allowance, the block of its own streams) and what
 * to sort.  The environment never calls the host off the owner thread and
 * includes no PostgreSQL header.
 */
#ifndef XXL_ENV_H
#define XXL_ENV_H

#include "core/xxl_batch.h"
#include "core/xxl_dsort.h"
#include "core/xxl_scatter.h"
#include "core/xxl_sort.h"
#include "core/xxl_stream.h"
#include "core/pq.h"

#include <pthread.h>

/* Puts are collected in batches of this many bytes of records (one call each). */
#define XXL_ENV_BATCH_BYTES 2048
/* The default (and largest) block when the resources name none. */
#define XXL_ENV_DEFAULT_BLOCK (2 * 1024 * 1024)
/* Fixed part of the memory kept for what grows with the input (block lists). */
#define XXL_ENV_SLACK (64 * 1024)

/* The parts whose share is reserved whole but backed only where touched. */
typedef enum xxl_env_share_kind
{
	XXL_SHARE_SORTER,			/* an xxl_sorter */
	XXL_SHARE_QUEUE				/* an xxl_pq */
} xxl_env_share_kind;

/* A part holding a share of the budget, for the memory it really touched. */
typedef struct xxl_env_share
{
	const void *part;
	xxl_env_share_kind kind;
	size_t		memory;			/* reserved */
} xxl_env_share;

#define XXL_ENV_MAX_SHARES 16

/* What the environment's finished parts did, added up. */
typedef struct xxl_env_totals
{
	xxl_io_stats io;			/* finished parts, disk by disk */
	uint64_t	sorts;
	uint64_t	runs;			/* core runs, and distribution buckets */
	uint64_t	passes;			/* merge passes of all sorts */
	int			max_passes;
	uint64_t	sorted_bytes;
	uint64_t	scattered_bytes;
	uint64_t	spool_bytes;	/* spool bytes written to and read from disk */
	uint64_t	pq_pushes;
	uint64_t	pq_merges;
} xxl_env_totals;

typedef struct xxl_env
{
	xxl_budget	budget;			/* the operator's whole budget */
	xxl_error	err;
	const char *noun;			/* "graph", "text": in messages */
	xxl_disk_config disk;		/* block_size: of the own spools; pool: the
								 * operator's spill files, shared */
	bool		own_pool;		/* the pool is the environment's, not the host's */
	size_t		max_block;		/* the configured block size: parts' preference */
	size_t		largest_block;	/* largest block a part used */
	xxl_disks  *disks;			/* own spill files, opened at the first spill */
	int			threads;
	/*
	 * What the parts poll: the host's hook on the owner thread; on a worker
	 * only the stop flag, which the owner sets when the host says stop.
	 */
	xxl_cancel_fn cancel;
	void	   *cancel_arg;
	xxl_cancel_fn host_cancel;
	void	   *host_cancel_arg;
	pthread_t	owner;
	xxl_progress *progress;		/* the host's, for the operator's steps; may be NULL */
	int			stop;			/* atomic */
	uint64_t	polls;			/* xxl_env_poll calls */
	size_t		pool;			/* for parts and in-memory phases */
	size_t		spool_allowance;	/* in-memory spool bytes, all spools together */
	size_t		spool_mem;		/* ... currently used */
	/*
	 * Parts reserve their share when they open but back only what they
	 * write: the memory the operator used is sampled, whenever the budget
	 * or the shares change, as the budget in use with each live share at
	 * its own peak so far.
	 */
	xxl_env_share shares[XXL_ENV_MAX_SHARES];
	int			nshares;
	uint64_t	used_peak;
	xxl_env_totals done;
} xxl_env;

/*
 * The budget split every operator uses: own stream buffers (own_buffers
 * blocks), slack (XXL_ENV_SLACK + memory / 32), the spool allowance
 * (memory / 16) and the pool (the rest).
 */
size_t		xxl_env_pool_for(size_t memory, size_t block, int own_buffers);
/*
 * A block for an operator's own sequential streams, which need no large
 * blocks: the largest power of two (from a page) within max_block and
 * 1/128 of the budget.
 */
size_t		xxl_env_stream_block(size_t memory, size_t max_block);
size_t		xxl_env_slack(const xxl_env *env);
/* What the pool has free now: the budget's free bytes beside its non-pool reserve. */
size_t		xxl_env_pool_free(const xxl_env *env);

/* How an operator family splits its budget (graph_layout.c, text_layout.c). */
typedef struct xxl_env_plan
{
	const char *noun;			/* "graph", "text": in messages */
	int			own_buffers;	/* blocks of its own streams open at once */
	size_t		(*min_memory) (void);
	/* the own streams' block for this budget; 0: the budget is too small */
	size_t		(*own_block) (size_t memory, size_t max_block);
} xxl_env_plan;

/*
 * Set up from the resources on the family's plan (XXL_EINVAL in env->err
 * for a block size that is not a multiple of a page, or a budget below the
 * plan's minimum).  The caller's thread becomes the owner.
 */
xxl_status	xxl_env_open(xxl_env *env, const xxl_resources *res, const xxl_env_plan *plan);
void		xxl_env_close(xxl_env *env);

/*
 * An engine object of size bytes, zeroed, allocated from a new
 * environment's budget, with the environment moved into it at env_offset
 * (the one way the graph engines are made).  NULL with err set when the
 * environment cannot be opened or the object not allocated; then nothing
 * is left open.
 */
void	   *xxl_env_new_object(const xxl_resources *res, const xxl_env_plan *plan, size_t size,
							   size_t env_offset, xxl_error *err);

/*
 * Poll for a stop (sets XXL_ECANCELED in env->err): the host's hook on the
 * owner thread, the stop flag on any other.
 */
bool		xxl_env_canceled(xxl_env *env);
/* Poll every XXL_ENV_POLL_MASK + 1 calls: for per-record loops of the owner. */
#define XXL_ENV_POLL_MASK 0xffff
static inline bool
xxl_env_poll(xxl_env *env)
{
	return (++env->polls & XXL_ENV_POLL_MASK) == 0 && xxl_env_canceled(env);
}

/*
 * n polls at once, for a loop that ran where it could not poll (on
 * threads): asks when the count crosses a multiple of XXL_ENV_POLL_MASK + 1,
 * as n single polls would have.
 */
static inline bool
xxl_env_poll_n(xxl_env *env, uint64_t n)
{
	uint64_t	before = env->polls;

	env->polls += n;
	return (before | XXL_ENV_POLL_MASK) != (env->polls | XXL_ENV_POLL_MASK) &&
		xxl_env_canceled(env);
}

/*
 * The operator enters step step_no of steps (0: not known) of its middle
 * phase ("level", "iteration", "round"), with its runs and memory peak so
 * far: the host is told at once (xxl_progress.changed).  Owner thread.
 */
void		xxl_env_step(xxl_env *env, const char *step, uint32_t step_no, uint32_t steps);

/* Owner thread only, while a worker runs: ask the host, pass a stop on (no error recorded). */
bool		xxl_env_host_stop(xxl_env *env);

xxl_status	xxl_env_open_disks(xxl_env *env);

/* Reservations: the only way budget is held for a part. */
xxl_status	xxl_env_reserve(xxl_env *env, size_t bytes, const char *what);
void		xxl_env_release(xxl_env *env, size_t bytes);
/* Reserve a share that xxl_env_share_add registers right after. */
xxl_status	xxl_env_reserve_share(xxl_env *env, size_t bytes, const char *what);
/* Change a holding from *held to want bytes (rounded to pages). */
xxl_status	xxl_env_resize(xxl_env *env, size_t *held, size_t want, const char *what);
/* Budget-charged allocation (bytes 0 = 1), sampled for the peak. */
void	   *xxl_env_alloc(xxl_env *env, size_t bytes);
void		xxl_env_free(xxl_env *env, void *p, size_t bytes);
void	   *xxl_env_realloc(xxl_env *env, void *p, size_t old_bytes, size_t new_bytes);
/* Register a part whose share is reserved whole but backed as it is touched. */
void		xxl_env_share_add(xxl_env *env, const void *part, xxl_env_share_kind kind,
							  size_t memory);
void		xxl_env_share_remove(xxl_env *env, const void *part);
/* The most memory the operator used so far (see shares above). */
uint64_t	xxl_env_used_peak(const xxl_env *env);

/*
 * Add one set's I/O counters to acc, disk by disk (every set of the
 * operator uses the same directories in the same order).  Spill peaks add
 * up: the sets' peaks need not coincide, so the sum is an upper bound.
 */
void		xxl_io_fold(xxl_io_stats *acc, const xxl_io_stats *io);
/* The environment's I/O: finished parts plus the own spill files. */
void		xxl_env_io(const xxl_env *env, xxl_io_stats *out);
/* Bytes read and written, I/O wait, and whether every file was O_DIRECT. */
void		xxl_env_io_sum(const xxl_env *env, uint64_t *read, uint64_t *written,
						   uint64_t *wait_ns, bool *direct);

/* Copy a part's error into the environment's. */
xxl_status	xxl_env_fail(xxl_env *env, const xxl_error *e);

/* Sorters ------------------------------------------------------------------ */

/* What the caller of xxl_env_sort_open promises about its input. */
typedef enum xxl_env_input
{
	XXL_INPUT_UNBOUNDED,		/* maybe more than `records`: the core sorter */
	XXL_INPUT_BOUNDED,			/* at most `records` */
	XXL_INPUT_PRESAMPLED,		/* at most `records`, and a sample first when
								 * xxl_env_sort_stride says so */
	XXL_INPUT_PRESAMPLED_CALLER_BUCKETS	/* the same, from a caller that
										 * produces faster than a worker
										 * distributes: it finds each
										 * record's bucket itself */
} xxl_env_input;

/*
 * A sort charged to the budget.  It is a distribution sort (xxl_dsort.h)
 * when the input is bounded, the key has at most 16 bytes and it fits:
 * then it is charged phase by phase — little while records are put (they
 * are staged), `memory` while it distributes, `output_memory` afterwards —
 * so an operator lends it the shares of parts that are idle or gone when it
 * distributes.  Otherwise it is the core sorter (xxl_sort.h) with
 * output_memory for its whole life; standing in for a distribution sort
 * of a bounded input, at most what the pool has free when it opens (the
 * parts it was lent may still be live).  Its I/O is folded into the
 * environment when it is closed.
 */
typedef struct xxl_env_sorter
{
	xxl_sorter *s;				/* the core sorter, or */
	xxl_dsort  *d;				/* the distribution sort */
	xxl_batch	out;			/* records being handed out */
	size_t		batch,			/* records collected, and room for that many */
				batch_cap;
	unsigned char *batch_recs;	/* XXL_ENV_BATCH_BYTES from the budget */
	size_t		memory;			/* what the budget holds for it now */
	size_t		distribute,		/* distribution sort: its phases' memory */
				output;
	size_t		rec_size;
	uint64_t	pushed;
} xxl_env_sorter;

/*
 * records: how many will be put (sizes the blocks; 0 = unknown).
 * output_memory <= memory (0 = memory).
 */
xxl_status	xxl_env_sort_open(xxl_env *env, xxl_env_sorter *ts, size_t memory,
							  size_t output_memory, size_t rec_size, size_t key_size,
							  uint64_t records, xxl_env_input input);
/*
 * Variable-length records (xxl_sorter_put_var / next_var on ts->s, sorted
 * by xxl_env_sort_sort): always the core sorter, memory for its whole life;
 * avg_size sizes its blocks.
 */
xxl_status	xxl_env_sort_open_var(xxl_env *env, xxl_env_sorter *ts, size_t memory,
								  size_t avg_size, uint64_t records);
/*
 * An aggregating sort (xxl_sort_config.combine): the core sorter with
 * memory for its whole life, records of equal keys folded by combine into
 * one as it goes (on the owner thread).
 */
xxl_status	xxl_env_sort_open_combined(xxl_env *env, xxl_env_sorter *ts, size_t memory,
									   size_t rec_size, size_t key_size, uint64_t records,
									   void (*combine) (void *acc, const void *rec, void *arg),
									   void *combine_arg);
/* A core sorter's runs put in key order (xxl_sorter_put_sorted). */
xxl_status	xxl_env_sort_put_sorted(xxl_env *env, xxl_env_sorter *ts, const void *rec);
xxl_status	xxl_env_sort_end_sorted(xxl_env *env, xxl_env_sorter *ts);
/*
 * The block size for a core sorter of the given memory that will take
 * records records; XXL_ENOMEM if no block size lets the core sorter take
 * them.
 */
xxl_status	xxl_env_sort_block(xxl_env *env, size_t memory, size_t rec_size, uint64_t records,
							   size_t *block);
/*
 * The sample stride xxl_env_sort_open(..., XXL_INPUT_PRESAMPLED) with these
 * figures will ask for (0: it will not want a sample).
 */
uint64_t	xxl_env_sort_plan_stride(xxl_env *env, size_t memory, size_t output_memory,
									 size_t rec_size, size_t key_size, uint64_t records);
/*
 * Whether xxl_env_sort_open with these figures (bounded) would take a
 * distribution sort (no merge) rather than the merge sort.
 */
bool		xxl_env_sort_distributes(xxl_env *env, size_t memory, size_t output_memory,
									 size_t rec_size, size_t key_size, uint64_t records);
/* Whether xxl_env_sort_open with these figures (bounded) would succeed. */
bool		xxl_env_sort_fits(xxl_env *env, size_t memory, size_t output_memory,
							  size_t rec_size, size_t key_size, uint64_t records);
xxl_status	xxl_env_sort_error(xxl_env *env, xxl_env_sorter *ts);
xxl_status	xxl_env_sort_flush(xxl_env *env, xxl_env_sorter *ts);

/*
 * A presampled sort wants the key of every stride-th record of its coming
 * input (xxl_env_sort_sample) before the first record; 0: no sample.
 */
static inline uint64_t
xxl_env_sort_stride(const xxl_env_sorter *ts)
{
	return ts->d ? xxl_dsort_sample_stride(ts->d) : 0;
}

static inline xxl_status
xxl_env_sort_sample(xxl_env *env, xxl_env_sorter *ts, const void *key)
{
	if (xxl_dsort_sample(ts->d, key) != XXL_OK)
		return xxl_env_sort_error(env, ts);
	return XXL_OK;
}

/*
 * Where the caller writes its next record: xxl_env_sort_room, fill it field
 * by field, xxl_env_sort_push.  A record put together on the stack from
 * narrow stores and copied at once with wide loads stalls on store
 * forwarding (a large part of DC3's merge of tuples); written in place it
 * is never read back early.  local is the caller's buffer for a sort that
 * takes records one by one.
 */
static inline unsigned char *
xxl_env_sort_room(xxl_env_sorter *ts, unsigned char *local)
{
	return ts->batch_cap > 0 ? ts->batch_recs + ts->batch * ts->rec_size : local;
}

/* Take the record written at xxl_env_sort_room(ts, rec). */
static inline xxl_status
xxl_env_sort_push(xxl_env *env, xxl_env_sorter *ts, const unsigned char *rec)
{
	ts->pushed++;
	if (ts->batch_cap > 0)
	{
		if (++ts->batch == ts->batch_cap)
			return xxl_env_sort_flush(env, ts);
		return XXL_OK;
	}
	if ((ts->d ? xxl_dsort_put(ts->d, rec) : xxl_sorter_put(ts->s, rec)) != XXL_OK)
		return xxl_env_sort_error(env, ts);
	return XXL_OK;
}

/* Put a record built elsewhere. */
static inline xxl_status
xxl_env_sort_put(xxl_env *env, xxl_env_sorter *ts, const void *rec)
{
	if (ts->batch_cap > 0)
		memcpy(xxl_env_sort_room(ts, NULL), rec, ts->rec_size);
	return xxl_env_sort_push(env, ts, rec);
}

xxl_status	xxl_env_sort_sort(xxl_env *env, xxl_env_sorter *ts);

/* The next record in key order: 1 with *rec, 0 at the end, -1 on error (in env->err). */
static inline int
xxl_env_sort_next(xxl_env *env, xxl_env_sorter *ts, const unsigned char **rec)
{
	int			got = xxl_batch_next(&ts->out, rec);

	if (got < 0)
		xxl_env_sort_error(env, ts);
	return got;
}

/* I/O so far of an open sorter, folded into acc. */
void		xxl_env_sort_io(const xxl_env_sorter *ts, xxl_io_stats *acc);
/* Close; io_acc and sorted_acc (may be NULL) get its I/O bytes and record bytes. */
void		xxl_env_sort_close(xxl_env *env, xxl_env_sorter *ts, uint64_t *io_acc,
							   uint64_t *sorted_acc);
/* Buckets of a distribution sort that were too full for memory (0 for the core sorter). */
uint64_t	xxl_env_sort_overfull(const xxl_env_sorter *ts);

/* Scatters ----------------------------------------------------------------- */

/*
 * A scatter (external permutation, xxl_scatter.h) charged to the budget
 * with the memory its plan needs (at most the share it was given), read
 * record by record.  A permutation too large for the share's buckets (the
 * scatter's memory grows with the square root of its bytes) is sorted by
 * slot instead: the core sorter takes any input at any share of at least
 * its least (xxl_sort_min_memory), so a scatter opens whatever the input,
 * only slower past xxl_env_scat_fits.
 */
typedef struct xxl_env_scat_sorted xxl_env_scat_sorted;

typedef struct xxl_env_scatter
{
	xxl_scatter *s;				/* the scatter, or */
	xxl_env_scat_sorted *sorted;	/* the sort by slot that stands in */
	xxl_batch	out;
	size_t		memory;			/* reserved now */
	size_t		read_need;		/* split: what reading will reserve */
	bool		split,			/* reading and distributing reserve apart */
				reading;		/* split: reading has reserved */
	size_t		rec_size;
	uint64_t	pushed;
	size_t		batch,			/* records collected, and room for that many */
				batch_cap;
	uint64_t   *batch_slots;	/* XXL_ENV_BATCH_BYTES / 4 slots and */
	unsigned char *batch_recs;	/* XXL_ENV_BATCH_BYTES of records, from the budget */
} xxl_env_scatter;

/* Whether a scatter (not the sort that stands in) of the given share can take slots records. */
bool		xxl_env_scat_fits(xxl_env *env, size_t memory, size_t rec_size, uint64_t slots);
/* The least share (at most most) in which a scatter fits; 0: none. */
size_t		xxl_env_scat_least(xxl_env *env, size_t rec_size, uint64_t slots, size_t most);
xxl_status	xxl_env_scat_open(xxl_env *env, xxl_env_scatter *ts, size_t memory,
							  size_t rec_size, uint64_t slots);

/*
 * A scatter whose two phases are charged apart: write_memory from the open
 * to xxl_env_scat_finish, read_memory from the first read (or
 * xxl_env_scat_begin_read) to the close, nothing in between.  For an
 * operator whose permutation is written while one part of it runs and read
 * while another does: the smallest budget of a scatter is
 * write x read >= about slots x record x block, so a large write share
 * buys a small read share.  The caller leaves read_memory free for the
 * reading; where the scatter does not fit, the sort by slot stands in with
 * the smaller of the two.
 */
bool		xxl_env_scat_fits_split(xxl_env *env, size_t write_memory, size_t read_memory,
									size_t rec_size, uint64_t slots);
/* The least read_memory (at most most) with which a scatter fits beside write_memory; 0: none. */
size_t		xxl_env_scat_least_read(xxl_env *env, size_t rec_size, uint64_t slots,
									size_t write_memory, size_t most);
/* (read_memory > 0; 0 opens a scatter of write_memory for both phases) */
xxl_status	xxl_env_scat_open_split(xxl_env *env, xxl_env_scatter *ts, size_t write_memory,
									size_t read_memory, size_t rec_size, uint64_t slots);
/* A split scatter's reading memory, reserved (the first read does it otherwise: owner thread). */
xxl_status	xxl_env_scat_begin_read(xxl_env *env, xxl_env_scatter *ts);
xxl_status	xxl_env_scat_error(xxl_env *env, xxl_env_scatter *ts);
xxl_status	xxl_env_scat_flush(xxl_env *env, xxl_env_scatter *ts);
unsigned char *xxl_env_scat_sorted_room(xxl_env_scatter *ts);
xxl_status	xxl_env_scat_sorted_push(xxl_env *env, xxl_env_scatter *ts, uint64_t slot);

/* As xxl_env_sort_room / push: the next record is written in place. */
static inline unsigned char *
xxl_env_scat_room(xxl_env_scatter *ts)
{
	if (ts->sorted != NULL)
		return xxl_env_scat_sorted_room(ts);
	return ts->batch_recs + ts->batch * ts->rec_size;
}

/* Take the record written at xxl_env_scat_room(ts), bound for slot. */
static inline xxl_status
xxl_env_scat_push(xxl_env *env, xxl_env_scatter *ts, uint64_t slot)
{
	ts->pushed++;
	if (ts->sorted != NULL)
		return xxl_env_scat_sorted_push(env, ts, slot);
	ts->batch_slots[ts->batch] = slot;
	if (++ts->batch == ts->batch_cap)
		return xxl_env_scat_flush(env, ts);
	return XXL_OK;
}

xxl_status	xxl_env_scat_finish(xxl_env *env, xxl_env_scatter *ts);

/* Whether the scatter was opened (and not closed). */
static inline bool
xxl_env_scat_is_open(const xxl_env_scatter *ts)
{
	return ts->s != NULL || ts->sorted != NULL;
}

/* The next record in slot order: 1 with *rec, 0 at the end, -1 on error. */
static inline int
xxl_env_scat_next(xxl_env *env, xxl_env_scatter *ts, const unsigned char **rec)
{
	int			got;

	/* (a split scatter's first batch: its reading reserved) */
	if (ts->out.left == 0 && ts->split && !ts->reading && xxl_env_scat_begin_read(env, ts) != XXL_OK)
		return -1;
	got = xxl_batch_next(&ts->out, rec);

	if (got < 0)
		xxl_env_scat_error(env, ts);
	return got;
}

void		xxl_env_scat_close(xxl_env *env, xxl_env_scatter *ts, uint64_t *io_acc,
							   uint64_t *bytes_acc);

/* Priority queues ---------------------------------------------------------- */

/* The external priority queue (pq.h) with a share of the budget. */
typedef struct xxl_env_queue
{
	xxl_pq	   *q;
	size_t		memory;
} xxl_env_queue;

xxl_status	xxl_env_queue_open(xxl_env *env, xxl_env_queue *gq, size_t memory, size_t rec_size,
							   size_t key_size);
xxl_status	xxl_env_queue_push(xxl_env *env, xxl_env_queue *gq, const void *rec);
/* 1 with *rec (valid until the next push or pop), 0 if empty, -1 on error. */
int			xxl_env_queue_top(xxl_env *env, xxl_env_queue *gq, const unsigned char **rec);
int			xxl_env_queue_pop(xxl_env *env, xxl_env_queue *gq, void *out);
/* I/O so far of an open queue, folded into acc. */
void		xxl_env_queue_io(const xxl_env_queue *gq, xxl_io_stats *acc);
void		xxl_env_queue_close(xxl_env *env, xxl_env_queue *gq);

/* Spools: a byte sequence written once, read any number of times. ----------- */

/* mem_limit of a spool that shares the environment's spool allowance. */
#define XXL_SPOOL_SHARED 0

typedef struct xxl_spool
{
	xxl_env    *env;
	/* in memory: a list of chunks */
	unsigned char **chunks;
	size_t		nchunks;
	size_t		chunks_cap;
	size_t		chunk_size;
	size_t		mem_limit;		/* spill beyond this many bytes (0: the allowance) */
	size_t		mem_used;		/* bytes charged for chunks */
	/* on disk */
	bool		on_disk;
	xxl_run		run;
	xxl_bwriter *w;
	uint64_t	nbytes;
	bool		finished;
} xxl_spool;

void		xxl_spool_init(xxl_spool *sp, xxl_env *env, size_t mem_limit);
xxl_status	xxl_spool_write(xxl_spool *sp, const void *data, size_t len);
xxl_status	xxl_spool_finish(xxl_spool *sp);
/* Move an in-memory spool to disk (frees its memory). */
xxl_status	xxl_spool_spill(xxl_spool *sp);
void		xxl_spool_free(xxl_spool *sp);

typedef struct xxl_spool_reader
{
	xxl_spool  *sp;
	xxl_breader *r;
	size_t		chunk;			/* memory: next chunk index */
	uint64_t	left;			/* bytes not yet handed out */
	bool		consume;		/* free chunks and blocks as they are read */
	/* the current piece, for record and value reads */
	const unsigned char *p;
	size_t		avail;
	unsigned char scratch[64];	/* a record spanning two pieces (at most 64 bytes) */
} xxl_spool_reader;

/*
 * consume: the last read, which frees what it has read as it goes (and the
 * rest at close): the spool is empty afterwards.
 */
xxl_status	xxl_spool_reader_open(xxl_spool_reader *rd, xxl_spool *sp, bool consume);
/* The next contiguous piece: *len > 0 bytes, or 0 at the end. */
xxl_status	xxl_spool_reader_piece(xxl_spool_reader *rd, const unsigned char **p, size_t *len);
xxl_status	xxl_spool_read_slow(xxl_spool_reader *rd, size_t len, const unsigned char **p);

/* The next len (<= 32) bytes; XXL_EINVAL past the end. */
static inline xxl_status
xxl_spool_read(xxl_spool_reader *rd, size_t len, const unsigned char **p)
{
	if (rd->avail >= len)
	{
		*p = rd->p;
		rd->p += len;
		rd->avail -= len;
		return XXL_OK;
	}
	return xxl_spool_read_slow(rd, len, p);
}

/*
 * The next len bytes (any length) copied into dst; *got < len only at the
 * spool's end.  Mixes with xxl_spool_read, not with reading by piece.
 */
xxl_status	xxl_spool_read_upto(xxl_spool_reader *rd, void *dst, size_t len, size_t *got);
/* The next len bytes into dst; XXL_EINVAL if the spool ends first. */
xxl_status	xxl_spool_read_exact(xxl_spool_reader *rd, void *dst, size_t len);

void		xxl_spool_reader_close(xxl_spool_reader *rd);

#endif							/* XXL_ENV_H */
