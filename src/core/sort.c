/*
 * sort.c — the external sorter (see xxl_sort.h): run formation, the choice
 * of merge passes, and the public API.  The merging itself is merge.c.
 *
 * Memory: during run formation the budget holds one load region plus the run
 * writer's block ring.  Fixed records fill half the region and are radix
 * sorted into the other half; variable-length records go into an arena that
 * grows up from the region's start while their 16-byte sort entries grow down
 * from its end, leaving room for the entries' radix scratch in between.  At
 * the end of input the region is freed and the whole budget goes to merging:
 * one frame per run being merged, the rest as prefetch frames.  On request
 * the final merge runs asynchronously (merge.h).
 *
 * Asynchronous run formation (async_runs, fixed records): when a load is
 * full, the caller distributes it on its first varying key byte into the
 * sorted half (all threads) and sorts the buckets too large for the worker's
 * bucket scratch; then a worker thread sorts the other buckets one by one,
 * in key order, and posts each block of the run as soon as the records
 * before its end are sorted, while the caller refills the input half.  At
 * the next full load the caller waits for the worker and the writes, as it
 * waits for the writes alone in synchronous mode.  During a job the worker
 * owns the sorted half, the run being written, run_writes and the block
 * manager; it never allocates from the budget (the run's block list is
 * reserved up front) and never calls back into the caller.
 */
#include "core/xxl_sort.h"
#include "core/merge.h"
#include "core/radix.h"
#include "core/record.h"
#include "core/xxl_stream.h"

#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define VAR_HEADER 8			/* u32 key_len, u32 payload_len; as in merge.c */
#define POLL_EVERY 65536
#define WRITE_BUFFERS 2
/* structs, trees and run lists: they grow with N/B, so scale with the budget */
#define SLACK_BYTES (64 * 1024)
#define MERGE_SLACK (8 * 1024)	/* merger, writer and batch structs */
#define ASYNC_MERGE_MIN_MEMORY (4 * 1024 * 1024)
#define MIN_READ_SIZE (64 * 1024)	/* merges read frames of at least this */
/* the run worker's bucket scratch: region / 32 within these bounds */
#define BUCKET_SCRATCH_MIN XXL_ALIGN
#define BUCKET_SCRATCH_MAX (4 * 1024 * 1024)
#define SLACK_FOR(memory) xxl_sort_slack(memory)

_Static_assert(XXL_SORT_MAX_FIXED_RECORD == XXL_RADIX_MAX_FIXED,
			   "the public record limit is the radix sort's");

typedef enum sorter_phase
{
	PHASE_INPUT,
	PHASE_MEMORY_OUTPUT,
	PHASE_MERGE_OUTPUT,
	PHASE_DONE
} sorter_phase;

/* The run formation thread and its job (async_runs); from the budget. */
typedef struct run_worker
{
	pthread_t	thread;
	bool		started;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool		job_pending;	/* the worker has a load to finish */
	bool		stop;			/* destroy: abandon the job and exit */
	xxl_run    *run;
	size_t		records;
	size_t		depth;			/* the distribution's key byte */
	size_t		buckets[257];
	char	   *scratch;		/* for one bucket: bucket_scratch_size bytes */
	xxl_error	err;			/* the worker's error, taken over at the next hand-off */
} run_worker;

struct xxl_sorter
{
	xxl_sort_config cfg;
	xxl_part	part;			/* error, budget, cancel hook */
	sorter_phase phase;
	bool		fixed;
	size_t		rec_size;
	size_t		key_size;
	int			threads;
	size_t		block_size;
	size_t		read_size;		/* merges' frame size: block_size or a fraction */
	xxl_disks  *disks;			/* opened at the first spill */

	/* run formation */
	char	   *region;
	size_t		region_size;
	size_t		nloaded;		/* records in the current load */
	size_t		fixed_capacity; /* fixed: records per load */
	size_t		half;			/* fixed: page-aligned size of each region half */
	xxl_io_request *run_writes;	/* fixed: writes of the last run, in flight */
	size_t		nrun_writes;
	size_t		run_writes_capacity;
	size_t		arena_used;		/* variable: arena bytes */
	size_t		region_touched; /* most region bytes a load has used */
	uint64_t	input_peak;		/* budget peak while the region lived, its untouched
								 * part left out (it is mapped, never backed) */
	size_t		max_record;		/* largest record seen (bytes on disk) */
	uint64_t	puts_since_poll;

	/* asynchronous run formation (fixed records, see the head of this file) */
	bool		async_runs;
	size_t		bucket_scratch_size;
	struct run_worker *rw;		/* while loads are formed */

	/* runs on disk */
	xxl_run    *runs;
	size_t		nruns;
	size_t		runs_capacity;

	/* output */
	size_t		out_index;
	xxl_merger *final;

	/* statistics */
	xxl_sort_stats stats;
	uint64_t	t_start;
	uint64_t	t_merge_start;
};

/*
 * Run metadata (block ids and keys, about 24 bytes per block plus 48 per
 * run) lives in the slack the load region leaves, so the slack bounds how
 * much input one sorter takes.  A fixed 1/32 let a 1 MB sorter hold only
 * about 200 runs (some 90x its memory); small budgets get up to 1/8.
 */
size_t
xxl_sort_slack(size_t memory)
{
	size_t		slack = memory / 32;
	size_t		small_budget_slack = memory / 8 < 256 * 1024 ? memory / 8 : 256 * 1024;

	if (memory >= 1024 * 1024 && slack < small_budget_slack)
		slack = small_budget_slack;
	return slack > SLACK_BYTES ? slack : SLACK_BYTES;
}

size_t
xxl_sort_min_memory(size_t block_size)
{
	size_t		memory = 8 * block_size + SLACK_BYTES;

	/* what the load region needs must be left after a larger slack too */
	while (memory - xxl_sort_slack(memory) < 8 * block_size)
		memory += XXL_ALIGN;
	return memory;
}

/*
 * The sorter keeps two 8-byte entries per block of every run, the run array
 * and the write requests of one load in the slack its load region leaves;
 * this is that accounting with margin, at the end of the input and when the
 * run array last doubled.
 */
bool
xxl_sort_fits(uint64_t nbytes, size_t memory, size_t block, size_t rec_size)
{
	size_t		slack = xxl_sort_slack(memory);
	size_t		region,
				half;
	uint64_t	per_run,
				runs,
				cap = 16,
				run_meta,
				meta;
	size_t		nb;

	if (memory < xxl_sort_min_memory(block))
		return false;
	region = memory - XXL_ALIGN - slack;
	half = (region / 2) & ~(size_t) (XXL_ALIGN - 1);
	per_run = half / rec_size * rec_size;
	if (per_run == 0)
		return false;
	if (nbytes <= per_run)
		return true;			/* sorted in memory: no runs */
	runs = nbytes / per_run + 1;
	nb = (size_t) ((per_run + block - 1) / block);
	run_meta = 2 * xxl_budget_charge(nb * sizeof(uint64_t));
	while (cap < runs)
		cap *= 2;
	/* at the end, and when the run array last doubled (old and new copy) */
	meta = runs * run_meta + xxl_budget_charge(cap * sizeof(xxl_run));
	if (cap > 16)
	{
		uint64_t	at_growth = cap / 2 * run_meta + xxl_budget_charge(cap / 2 * sizeof(xxl_run)) +
			xxl_budget_charge(cap * sizeof(xxl_run));

		if (at_growth > meta)
			meta = at_growth;
	}
	meta += xxl_budget_charge((half / block + 1) * sizeof(xxl_io_request));
	return meta + XXL_ALIGN <= slack;
}

size_t
xxl_sort_max_block(size_t memory)
{
	size_t		block;

	if (memory < xxl_sort_min_memory(XXL_ALIGN))
		return 0;
	/*
	 * Down from what the smallest slack would leave: the slack is not
	 * monotonic in the budget (it steps up at 1 MB), so the smallest budget
	 * for a block may have less slack than this one.
	 */
	block = (memory - SLACK_BYTES) / 8;
	block -= block % XXL_ALIGN;
	if (block <= XXL_ALIGN || xxl_sort_min_memory(block) <= memory)
		return block < XXL_ALIGN ? XXL_ALIGN : block;
	/* the minimum grows with the block: the largest that fits, by bisection in pages */
	{
		size_t		lo = 1,		/* pages known to fit */
					hi = block / XXL_ALIGN;	/* pages known not to */

		while (hi - lo > 1)
		{
			size_t		mid = lo + (hi - lo) / 2;

			if (xxl_sort_min_memory(mid * XXL_ALIGN) <= memory)
				lo = mid;
			else
				hi = mid;
		}
		return lo * XXL_ALIGN;
	}
}

static inline xxl_sort_entry *
var_entries(xxl_sorter *s)
{
	return (xxl_sort_entry *) (s->region + s->region_size) - s->nloaded;
}

/* Creation ------------------------------------------------------------- */

xxl_sorter *
xxl_sorter_create(const xxl_sort_config *config, xxl_error *err)
{
	xxl_budget	budget;
	xxl_sorter *s;
	size_t		block_size = config->res.disk.block_size;

	if (config->record_size > 0 &&
		(config->record_size > XXL_RADIX_MAX_FIXED || config->key_size > config->record_size))
	{
		xxl_error_set(err, XXL_EINVAL, 0,
					  "fixed records must be at most %d bytes with a key no longer than the record (got %zu/%zu)",
					  XXL_RADIX_MAX_FIXED, config->record_size, config->key_size);
		return NULL;
	}
	if (block_size < XXL_ALIGN || block_size % XXL_ALIGN != 0)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "block size %zu is not a positive multiple of %d",
					  block_size, XXL_ALIGN);
		return NULL;
	}
	if (config->res.memory < xxl_sort_min_memory(block_size))
	{
		xxl_error_set(err, XXL_EINVAL, 0,
					  "memory budget of %zu bytes is below the minimum of %zu for %zu-byte blocks",
					  config->res.memory, xxl_sort_min_memory(block_size), block_size);
		return NULL;
	}
	xxl_budget_init(&budget, config->res.memory);
	s = xxl_budget_alloc(&budget, sizeof(*s), err);
	if (s == NULL)
		return NULL;
	memset(s, 0, sizeof(*s));
	xxl_part_init(&s->part, "sort", 0, config->res.cancel, config->res.cancel_arg);
	s->part.budget = budget;
	s->cfg = *config;
	s->fixed = config->record_size > 0;
	s->rec_size = config->record_size;
	s->key_size = s->fixed ? config->key_size : 0;
	s->threads = config->res.threads > 0 ? config->res.threads : omp_get_max_threads();
	s->block_size = block_size;
	s->phase = PHASE_INPUT;
	s->max_record = s->rec_size;
	s->stats.memory_limit = config->res.memory;

	/*
	 * The load region: everything but some slack and, for variable-length
	 * records, the run writer's ring.  Fixed records are sorted into the
	 * region's second half and written to disk straight from there.
	 */
	s->region_size = config->res.memory - s->part.budget.used - SLACK_FOR(config->res.memory)
		- (s->fixed ? 0 : WRITE_BUFFERS * block_size);
	s->async_runs = s->fixed && config->async_runs;
	if (s->async_runs)
	{
		size_t		scratch = s->region_size / 32;

		scratch = scratch < BUCKET_SCRATCH_MIN ? BUCKET_SCRATCH_MIN
			: scratch > BUCKET_SCRATCH_MAX ? BUCKET_SCRATCH_MAX : scratch;
		s->bucket_scratch_size = XXL_ROUND_UP(scratch, XXL_ALIGN);
		s->region_size -= s->bucket_scratch_size;
	}
	s->region_size -= s->region_size % 64;
	/* (the failure paths go through destroy: s holds the budget it frees s from) */
	s->region = xxl_budget_alloc(&s->part.budget, s->region_size, err);
	if (s->region == NULL)
		goto fail;
	if (s->fixed)
	{
		s->half = (s->region_size / 2) & ~(size_t) (XXL_ALIGN - 1);
		s->fixed_capacity = s->half / s->rec_size;
		s->run_writes_capacity = s->half / block_size + 1;
		s->run_writes = xxl_budget_alloc(&s->part.budget, s->run_writes_capacity * sizeof(xxl_io_request), err);
		if (s->run_writes == NULL)
			goto fail;
		memset(s->run_writes, 0, s->run_writes_capacity * sizeof(xxl_io_request));
	}
	if (s->async_runs)
	{
		run_worker *rw = xxl_budget_alloc(&s->part.budget, sizeof(run_worker), err);

		if (rw == NULL)
			goto fail;
		memset(rw, 0, sizeof(*rw));
		pthread_mutex_init(&rw->lock, NULL);
		pthread_cond_init(&rw->changed, NULL);
		s->rw = rw;
		rw->scratch = xxl_budget_alloc(&s->part.budget, s->bucket_scratch_size, err);
		if (rw->scratch == NULL)
			goto fail;
	}
	s->t_start = xxl_now_ns();
	return s;

fail:
	xxl_sorter_destroy(s);
	return NULL;
}

/* Run formation --------------------------------------------------------- */

static xxl_status
ensure_disks(xxl_sorter *s)
{
	if (s->disks == NULL)
	{
		s->disks = xxl_disks_open(&s->cfg.res.disk, &s->part.err);
		if (s->disks == NULL)
			return s->part.err.code;
	}
	return XXL_OK;
}

static xxl_status
add_run(xxl_sorter *s, xxl_run **run)
{
	if (s->nruns == s->runs_capacity)
	{
		size_t		cap = s->runs_capacity ? s->runs_capacity * 2 : 16;
		xxl_run    *grown = xxl_budget_realloc(&s->part.budget, s->runs,
											   s->runs_capacity * sizeof(xxl_run),
											   cap * sizeof(xxl_run), &s->part.err);

		if (grown == NULL)
			return s->part.err.code;
		s->runs = grown;
		s->runs_capacity = cap;
	}
	*run = &s->runs[s->nruns++];
	xxl_run_init(*run);
	return XXL_OK;
}

/*
 * The load region is mapped at its full size but backed by memory only
 * where a load writes (xxl_budget_alloc maps without reserving), so a
 * budget far beyond the input costs nothing: the statistics count the
 * bytes loads touched, not the mapping.  Fixed loads are sorted into the
 * region's second half, variable ones keep two entries per record at its
 * end.
 */
static size_t
load_touched(const xxl_sorter *s)
{
	size_t		t = s->fixed ? 2 * s->nloaded * s->rec_size
		: s->arena_used + 2 * s->nloaded * sizeof(xxl_sort_entry);

	if (t < s->region_touched)
		t = s->region_touched;
	return t < s->region_size ? t : s->region_size;
}

static void
note_load(xxl_sorter *s)
{
	s->region_touched = load_touched(s);
}

/* The budget's peak while the region lives, with only its touched part. */
static uint64_t
touched_peak(const xxl_sorter *s)
{
	uint64_t	untouched = s->region_size - load_touched(s);

	return s->part.budget.peak > untouched ? s->part.budget.peak - untouched : 0;
}

/* Where sorted fixed records are: the region's second half. */
static inline char *
fixed_sorted(xxl_sorter *s)
{
	return s->region + s->half;
}

/* Wait for the previous run's writes: the half they come from is reused. */
static xxl_status
wait_run_writes(xxl_sorter *s)
{
	xxl_status	rc = XXL_OK;

	for (size_t i = 0; i < s->nrun_writes; i++)
		if (xxl_io_wait(s->disks, &s->run_writes[i], &s->part.err) != XXL_OK)
			rc = s->part.err.code;
	s->nrun_writes = 0;
	return rc;
}

/* Sort the current load in memory; afterwards records are in output order. */
static void
sort_load(xxl_sorter *s)
{
	if (s->fixed)
		xxl_radix_sort_fixed(s->region, fixed_sorted(s), s->nloaded, s->rec_size, s->key_size,
							 s->threads, true);
	else
	{
		xxl_sort_entry *e = var_entries(s);

		/* entries were pushed downwards: restore input order for stability */
		for (size_t i = 0, j = s->nloaded ? s->nloaded - 1 : 0; i < j; i++, j--)
		{
			xxl_sort_entry t = e[i];

			e[i] = e[j];
			e[j] = t;
		}
		if (s->cfg.compare != NULL)
			xxl_compare_sort_entries(e, e - s->nloaded, s->nloaded, s->region, VAR_HEADER,
									 s->cfg.compare, s->threads);
		else
			xxl_radix_sort_entries(e, e - s->nloaded, s->nloaded, s->region, VAR_HEADER,
								   s->threads);
	}
}

static inline const char *
loaded_record(xxl_sorter *s, size_t i, size_t *len, uint64_t *prefix)
{
	if (s->fixed)
	{
		const char *rec = fixed_sorted(s) + i * s->rec_size;

		*len = s->rec_size;
		*prefix = xxl_key_prefix((const unsigned char *) rec, s->key_size);
		return rec;
	}
	else
	{
		const xxl_sort_entry *e = &var_entries(s)[i];
		const char *rec = s->region + (size_t) e->ref * 8;
		uint32_t	hdr[2];

		memcpy(hdr, rec, sizeof(hdr));
		*len = VAR_HEADER + (size_t) hdr[0] + hdr[1];
		*prefix = xxl_key_prefix((const unsigned char *) rec + VAR_HEADER, hdr[0]);
		return rec;
	}
}

/*
 * Post the write of block b of a sorted fixed-record load of bytes bytes,
 * straight from the sorted half.  The run's block list must have room (it
 * is reserved up front: the run worker must not allocate).
 */
static xxl_status
post_run_block(xxl_sorter *s, xxl_run *run, size_t bytes, size_t b, xxl_error *err)
{
	const unsigned char *data = (unsigned char *) fixed_sorted(s);
	size_t		start = b * s->block_size;
	size_t		len = bytes - start < s->block_size ? bytes - start : s->block_size;
	const unsigned char *first = data + (start / s->rec_size) * s->rec_size;
	xxl_io_request *req = &s->run_writes[s->nrun_writes];
	xxl_bid		bid;

	if (xxl_block_alloc(s->disks, &bid, err) != XXL_OK ||
		xxl_run_append_block(run, bid, xxl_key_prefix(first, s->key_size), &s->part.budget,
							 err) != XXL_OK)
		return err->code;
	req->bid = bid;
	req->buf = (void *) (data + start);
	req->len = XXL_ROUND_UP(len, XXL_ALIGN);
	/* the sorted half has room to the page: pad with zeros, not stale bytes */
	memset((char *) data + start + len, 0, req->len - len);
	req->is_write = true;
	xxl_io_post(s->disks, req);
	s->nrun_writes++;
	return XXL_OK;
}

/* A new run for the current load, its block list reserved. */
static xxl_status
add_load_run(xxl_sorter *s, xxl_run **run)
{
	size_t		bytes = s->nloaded * s->rec_size;

	if (add_run(s, run) != XXL_OK ||
		xxl_run_reserve(*run, (bytes + s->block_size - 1) / s->block_size, &s->part.budget,
						&s->part.err) != XXL_OK)
		return s->part.err.code;
	(*run)->nbytes = bytes;
	(*run)->nrecords = s->nloaded;
	return XXL_OK;
}

/*
 * Post the writes of a sorted fixed-record load straight from the sorted
 * half; they complete while the caller fills the other half.
 */
static xxl_status
write_fixed_run(xxl_sorter *s, xxl_run *run)
{
	size_t		bytes = s->nloaded * s->rec_size;
	size_t		nblocks = (bytes + s->block_size - 1) / s->block_size;

	for (size_t b = 0; b < nblocks; b++)
		if (post_run_block(s, run, bytes, b, &s->part.err) != XXL_OK)
			return s->part.err.code;
	s->stats.runs++;
	note_load(s);
	s->nloaded = 0;
	return XXL_OK;
}

/* Asynchronous run formation -------------------------------------------- */

static bool
runs_stopping(run_worker *rw)
{
	return __atomic_load_n(&rw->stop, __ATOMIC_RELAXED);
}

/*
 * The worker's half of a load: sort the buckets the caller left, in key
 * order, posting every block whose bytes are all sorted.
 */
static void
finish_load(xxl_sorter *s, run_worker *rw)
{
	const size_t R = s->rec_size;
	size_t		bytes = rw->records * R;
	size_t		nblocks = (bytes + s->block_size - 1) / s->block_size;
	size_t		next = 0;		/* first block not yet posted */
	char	   *data = fixed_sorted(s);

	for (int b = 0; b < 256 && !runs_stopping(rw); b++)
	{
		size_t		lo = rw->buckets[b];
		size_t		hi = rw->buckets[b + 1];

		/* larger buckets were sorted by the caller */
		if (hi - lo > 1 && (hi - lo) * R <= s->bucket_scratch_size)
			xxl_radix_sort_bucket(data + lo * R, rw->scratch, hi - lo, R, s->key_size, rw->depth);
		while (next < nblocks && (next + 1) * s->block_size <= hi * R)
			if (post_run_block(s, rw->run, bytes, next++, &rw->err) != XXL_OK)
				return;
	}
	while (next < nblocks && !runs_stopping(rw))
		if (post_run_block(s, rw->run, bytes, next++, &rw->err) != XXL_OK)
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

		finish_load(s, rw);

		pthread_mutex_lock(&rw->lock);
		rw->job_pending = false;
		pthread_cond_broadcast(&rw->changed);
		pthread_mutex_unlock(&rw->lock);
	}
}

/* Wait until the worker is idle; take over its error, if it had one. */
static xxl_status
wait_runs_worker(xxl_sorter *s)
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
static void
end_runs_worker(xxl_sorter *s)
{
	run_worker *rw = s->rw;

	if (rw == NULL)
		return;
	if (rw->started)
		xxl_thread_stop(rw->thread, &rw->lock, &rw->changed, &rw->stop);
	pthread_mutex_destroy(&rw->lock);
	pthread_cond_destroy(&rw->changed);
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
 * The caller's half of a full load: distribute it into the sorted half,
 * sort the buckets too large for the worker, hand the rest over.  The
 * input half is free again when this returns.
 */
static xxl_status
flush_run_async(xxl_sorter *s)
{
	run_worker *rw = s->rw;
	xxl_run    *run = NULL;
	size_t		depth;

	if (xxl_part_canceled(&s->part) || ensure_disks(s) != XXL_OK || wait_runs_worker(s) != XXL_OK ||
		wait_run_writes(s) != XXL_OK || start_runs_worker(s) != XXL_OK ||
		add_load_run(s, &run) != XXL_OK)
		return s->part.err.code;
	depth = xxl_radix_distribute_fixed(s->region, fixed_sorted(s), s->nloaded, s->rec_size,
									   s->key_size, s->threads, rw->buckets);
	if (depth >= s->key_size)
	{
		/* every key equal: input order is the order; one bucket, nothing to sort */
		memcpy(fixed_sorted(s), s->region, s->nloaded * s->rec_size);
		rw->buckets[0] = 0;
		for (int b = 1; b <= 256; b++)
			rw->buckets[b] = s->nloaded;
	}
	else
		xxl_radix_sort_large_buckets(fixed_sorted(s), s->region, rw->buckets, s->rec_size,
									 s->key_size, depth, s->threads, s->bucket_scratch_size);
	rw->run = run;
	rw->records = s->nloaded;
	rw->depth = depth;
	pthread_mutex_lock(&rw->lock);
	rw->job_pending = true;
	pthread_cond_broadcast(&rw->changed);
	pthread_mutex_unlock(&rw->lock);
	s->stats.runs++;
	note_load(s);
	s->nloaded = 0;
	return XXL_OK;
}

/*
 * Sort the load and write it as a new run.  With async_runs, every load but
 * the last is finished by the worker; the last one here, with all threads.
 */
static xxl_status
flush_run(xxl_sorter *s, bool last)
{
	xxl_run    *run = NULL;
	xxl_bwriter *w;
	xxl_status	rc = XXL_OK;

	if (s->nloaded == 0)
		return XXL_OK;
	if (s->async_runs && !last)
		return flush_run_async(s);
	if (xxl_part_canceled(&s->part) || ensure_disks(s) != XXL_OK || wait_runs_worker(s) != XXL_OK ||
		wait_run_writes(s) != XXL_OK)
		return s->part.err.code;
	sort_load(s);
	if (s->fixed)
	{
		if (add_load_run(s, &run) != XXL_OK)
			return s->part.err.code;
		return write_fixed_run(s, run);
	}
	if (add_run(s, &run) != XXL_OK)
		return s->part.err.code;
	w = xxl_bwriter_create(s->disks, &s->part.budget, WRITE_BUFFERS, run, &s->part.err);
	if (w == NULL)
		return s->part.err.code;
	for (size_t i = 0; i < s->nloaded && rc == XXL_OK; i++)
	{
		size_t		len;
		uint64_t	prefix;
		const char *rec = loaded_record(s, i, &len, &prefix);

		xxl_bwriter_begin_record(w, prefix);
		rc = xxl_bwriter_write(w, rec, len);
		if ((i & (POLL_EVERY - 1)) == POLL_EVERY - 1 && xxl_part_canceled(&s->part))
			rc = XXL_ECANCELED;
	}
	if (rc == XXL_OK)
		rc = xxl_bwriter_finish(w);
	if (rc != XXL_OK && rc != XXL_ECANCELED)
		xxl_error_set(&s->part.err, rc, xxl_bwriter_error(w)->sys_errno, "%s",
					  xxl_bwriter_error(w)->message);
	xxl_bwriter_destroy(w);
	s->stats.runs++;
	note_load(s);
	s->nloaded = 0;
	s->arena_used = 0;
	return rc;
}

static bool
check_input_phase(xxl_sorter *s)
{
	if (s->phase == PHASE_INPUT && !s->part.failed)
		return true;
	if (!s->part.failed)
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "records can only be added before sorting");
	return false;
}

/* n more records of bytes in all are loaded; polls every POLL_EVERY records */
static xxl_status
count_puts(xxl_sorter *s, size_t n, size_t bytes)
{
	s->nloaded += n;
	s->stats.records += n;
	s->stats.bytes += bytes;
	s->puts_since_poll += n;
	if (s->puts_since_poll >= POLL_EVERY)
	{
		s->puts_since_poll = 0;
		if (xxl_part_canceled(&s->part))
			return xxl_part_fail(&s->part);
	}
	return XXL_OK;
}

xxl_status
xxl_sorter_put(xxl_sorter *s, const void *rec)
{
	if (!check_input_phase(s) || !s->fixed)
		return s->fixed ? s->part.err.code : xxl_error_set(&s->part.err, XXL_EINVAL, 0,
													  "xxl_sorter_put needs fixed-size records");
	if (s->nloaded == s->fixed_capacity && flush_run(s, false) != XXL_OK)
		return xxl_part_fail(&s->part);
	xxl_copy_small(s->region + s->nloaded * s->rec_size, rec, s->rec_size);
	return count_puts(s, 1, s->rec_size);
}

void *
xxl_sorter_reserve(xxl_sorter *s, size_t *n)
{
	size_t		room;

	if (!check_input_phase(s) || !s->fixed)
	{
		if (!s->fixed)
			xxl_error_set(&s->part.err, XXL_EINVAL, 0, "xxl_sorter_reserve needs fixed-size records");
		return NULL;
	}
	if (s->nloaded == s->fixed_capacity && flush_run(s, false) != XXL_OK)
	{
		xxl_part_fail(&s->part);
		return NULL;
	}
	room = s->fixed_capacity - s->nloaded;
	if (*n > room)
		*n = room;
	return s->region + s->nloaded * s->rec_size;
}

xxl_status
xxl_sorter_commit(xxl_sorter *s, size_t n)
{
	if (!check_input_phase(s))
		return s->part.err.code;
	if (n > s->fixed_capacity - s->nloaded)
		return xxl_error_set(&s->part.err, XXL_EINVAL, 0,
							 "committed %zu records, more than were reserved", n);
	return count_puts(s, n, n * s->rec_size);
}

xxl_status
xxl_sorter_put_var(xxl_sorter *s, const void *key, uint32_t key_len,
				   const void *payload, uint32_t payload_len)
{
	size_t		len = VAR_HEADER + (size_t) key_len + payload_len;
	size_t		need = XXL_ROUND_UP(len, 8);
	uint32_t	hdr[2] = {key_len, payload_len};
	char	   *dst;
	xxl_sort_entry *e;

	if (!check_input_phase(s) || s->fixed)
		return !s->fixed ? s->part.err.code : xxl_error_set(&s->part.err, XXL_EINVAL, 0,
													   "xxl_sorter_put_var needs variable-length records");
	/* each record also needs an entry and the entry's radix scratch */
	if (s->arena_used + need + (s->nloaded + 1) * 2 * sizeof(xxl_sort_entry) > s->region_size)
	{
		if (s->nloaded == 0)
		{
			xxl_error_set(&s->part.err, XXL_ENOMEM, 0,
						  "a record of %zu bytes does not fit the sort memory budget of %zu bytes",
						  len, s->cfg.res.memory);
			return xxl_part_fail(&s->part);
		}
		if (flush_run(s, false) != XXL_OK)
			return xxl_part_fail(&s->part);
	}
	if ((s->arena_used >> 3) > UINT32_MAX)
	{
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "load region larger than 32 GB is not supported");
		return xxl_part_fail(&s->part);
	}
	dst = s->region + s->arena_used;
	memcpy(dst, hdr, VAR_HEADER);
	if (key_len)
		memcpy(dst + VAR_HEADER, key, key_len);
	if (payload_len)
		memcpy(dst + VAR_HEADER + key_len, payload, payload_len);
	e = var_entries(s) - 1;
	e->prefix = xxl_key_prefix(key, key_len);
	e->key_len = key_len;
	e->ref = (uint32_t) (s->arena_used >> 3);
	s->arena_used += need;
	if (len > s->max_record)
		s->max_record = len;
	return count_puts(s, 1, (size_t) key_len + payload_len);
}

/* Merging --------------------------------------------------------------- */

static xxl_merge_env
merge_env(xxl_sorter *s)
{
	xxl_merge_env env = {
		.disks = s->disks,
		.budget = &s->part.budget,
		.err = &s->part.err,
		.fixed = s->fixed,
		.rec_size = s->rec_size,
		.key_size = s->key_size,
		.block_size = s->block_size,
		.read_size = s->read_size,
		.max_record = s->max_record,
		.threads = s->threads,
		.compare = s->fixed ? NULL : s->cfg.compare
	};

	return env;
}

/*
 * The final merge runs on its own thread if asked and the budget is large
 * enough that the batch ring costs little fan-in.  Not the default: with a
 * light consumer the copy into batches and the hand-offs cost more than the
 * overlap gains (50M 16-byte records: 1.7-2.0 s sync, 3.7 s async with the
 * second core busy).
 */
static bool
use_async_merge(const xxl_sorter *s)
{
	return s->cfg.async_merge && s->cfg.res.memory >= ASYNC_MERGE_MIN_MEMORY;
}

/* What an intermediate merge sets aside besides its frames: the writer. */
static size_t
writer_reserve(const xxl_sorter *s)
{
	xxl_merge_env env = merge_env((xxl_sorter *) s);

	return MERGE_SLACK + WRITE_BUFFERS * s->block_size + xxl_merge_output_bytes(&env);
}

/* ... and the final merge: the batch ring when it runs asynchronously. */
static size_t
final_reserve(xxl_sorter *s)
{
	xxl_merge_env env = merge_env(s);

	return MERGE_SLACK + xxl_merge_output_bytes(&env)
		+ (use_async_merge(s) ? xxl_merge_async_bytes(&env) : 0);
}

/* Merge group[0..k) into one new run written to *out. */
static xxl_status
merge_group(xxl_sorter *s, xxl_run *group, int k, xxl_run *out)
{
	xxl_merge_env env = merge_env(s);
	xxl_merger *m;
	xxl_bwriter *w;
	xxl_merge_record rec;
	xxl_status	rc = XXL_OK;
	uint64_t	n = 0;
	size_t		nblocks = 0;
	int			got;

	for (int i = 0; i < k; i++)
		nblocks += group[i].nblocks;
	if (xxl_run_reserve(out, nblocks, &s->part.budget, &s->part.err) != XXL_OK)
		return s->part.err.code;
	m = xxl_merger_create(&env, group, k, true, writer_reserve(s));
	if (m == NULL)
		return s->part.err.code;
	w = xxl_bwriter_create(s->disks, &s->part.budget, WRITE_BUFFERS, out, &s->part.err);
	if (w == NULL)
	{
		xxl_merger_destroy(m);
		return s->part.err.code;
	}
	while ((got = xxl_merger_next(m, &rec)) > 0)
	{
		xxl_bwriter_begin_record(w, rec.prefix);
		if (s->fixed)
			rc = xxl_bwriter_write(w, rec.key, s->rec_size);
		else
		{
			uint32_t	hdr[2] = {rec.key_len, rec.payload_len};

			rc = xxl_bwriter_write(w, hdr, VAR_HEADER);
			if (rc == XXL_OK)
				rc = xxl_bwriter_write(w, rec.key, (size_t) rec.key_len + rec.payload_len);
		}
		if (rc != XXL_OK)
			break;
		if ((++n & (POLL_EVERY - 1)) == 0 && xxl_part_canceled(&s->part))
		{
			rc = XXL_ECANCELED;
			break;
		}
	}
	if (got < 0)
		rc = s->part.err.code;
	if (rc == XXL_OK)
		rc = xxl_bwriter_finish(w);
	if (rc != XXL_OK && s->part.err.code == XXL_OK)
		xxl_error_set(&s->part.err, rc, xxl_bwriter_error(w)->sys_errno, "%s",
					  xxl_bwriter_error(w)->message);
	xxl_bwriter_destroy(w);
	xxl_merger_destroy(m);
	return rc;
}

/*
 * The smallest frames a merge reads: an eighth of a block, not below
 * MIN_READ_SIZE (smaller requests and batches cost more than the fan-in
 * they buy).
 */
static size_t
min_read_size(const xxl_sorter *s)
{
	size_t		u = s->block_size;

	while (u > s->block_size / 8 && u / 2 >= MIN_READ_SIZE && (u / 2) % XXL_ALIGN == 0)
		u /= 2;
	return u;
}

/*
 * The largest frame size, from full blocks down to min_read_size, at which
 * one merge that sets reserve bytes aside takes k runs; 0 if none does.
 * Full blocks merge fastest (larger batches), so smaller frames are only
 * used where they save a pass: 50M 24-byte records at 64 MiB are 37 runs,
 * one more pass over 8 of them with 2 MiB frames (+500 MB of I/O).
 */
static size_t
fitting_read_size(xxl_sorter *s, size_t k, size_t reserve)
{
	xxl_merge_env env = merge_env(s);
	size_t		least = min_read_size(s);

	for (size_t u = s->block_size;; u /= 2)
	{
		env.read_size = u;
		if (xxl_merge_max_fan_in(&env, reserve) >= (int) k)
			return u;
		if (u <= least)
			return 0;
	}
}

/*
 * Intermediate passes: merge groups of consecutive runs (consecutive, so
 * equal keys keep their input order) until one final merge can take them
 * all, reading the smallest frames, which take the most runs at once.
 * Leaves read_size at what the final merge reads.
 */
static xxl_status
reduce_runs(xxl_sorter *s)
{
	for (;;)
	{
		size_t		final_read = fitting_read_size(s, s->nruns, final_reserve(s));
		xxl_merge_env env;
		int			final_fan_in;
		int			fan_in;
		size_t		excess;
		size_t		in = 0,
					out = 0;

		if (final_read > 0)
		{
			s->read_size = final_read;
			return XXL_OK;
		}
		s->read_size = min_read_size(s);
		env = merge_env(s);
		final_fan_in = xxl_merge_max_fan_in(&env, final_reserve(s));
		fan_in = xxl_merge_max_fan_in(&env, writer_reserve(s));
		if (fan_in < 2 || final_fan_in < 1)
			return xxl_error_set(&s->part.err, XXL_ENOMEM, 0,
								 "memory budget of %zu bytes is too small to merge %zu-byte records",
								 s->cfg.res.memory, s->max_record);
		/* each merge of g runs removes g - 1; stop once the final merge can take the rest */
		excess = s->nruns - (size_t) final_fan_in;
		/* merge just enough groups this pass; later runs stay as they are */
		while (in < s->nruns)
		{
			size_t		g = s->nruns - in;
			xxl_run		merged;

			if (excess == 0 || g == 1)
			{
				s->runs[out++] = s->runs[in++];
				continue;
			}
			if (g > (size_t) fan_in)
				g = (size_t) fan_in;
			if (g - 1 > excess)
				g = excess + 1;
			xxl_run_init(&merged);
			if (merge_group(s, &s->runs[in], (int) g, &merged) != XXL_OK)
			{
				xxl_run_release(&merged, s->disks, &s->part.budget);
				return s->part.err.code;
			}
			if ((int) g > s->stats.fan_in)
				s->stats.fan_in = (int) g;
			for (size_t j = in; j < in + g; j++)
			{
				/* their blocks were recycled during the merge */
				s->runs[j].nblocks = 0;
				xxl_run_release(&s->runs[j], s->disks, &s->part.budget);
			}
			s->runs[out++] = merged;
			in += g;
			excess -= g - 1;
		}
		s->nruns = out;
		s->stats.merge_passes++;
	}
}

xxl_status
xxl_sorter_sort(xxl_sorter *s)
{
	if (!check_input_phase(s))
		return s->part.err.code;
	if (s->nruns == 0)
	{
		/* everything fits: sort in memory, never touch a disk */
		sort_load(s);
		s->stats.run_formation_ns = xxl_now_ns() - s->t_start;
		s->t_merge_start = xxl_now_ns();
		s->out_index = 0;
		s->phase = PHASE_MEMORY_OUTPUT;
		return XXL_OK;
	}
	if (flush_run(s, true) != XXL_OK || wait_run_writes(s) != XXL_OK)
		return xxl_part_fail(&s->part);
	/* run formation is over: its thread and buffers give way to merging */
	end_runs_worker(s);
	note_load(s);
	s->input_peak = touched_peak(s);
	xxl_part_free(&s->part, s->region, s->region_size);
	s->region = NULL;
	xxl_budget_restart_peak(&s->part.budget);	/* from here on: what merging charges */
	s->stats.run_formation_ns = xxl_now_ns() - s->t_start;
	s->t_merge_start = xxl_now_ns();
	if (reduce_runs(s) != XXL_OK)
		return xxl_part_fail(&s->part);
	{
		xxl_merge_env env = merge_env(s);

		s->final = xxl_merger_create(&env, s->runs, (int) s->nruns, false, final_reserve(s));
		if (s->final == NULL)
			return xxl_part_fail(&s->part);
		if (use_async_merge(s) && xxl_merger_start_async(s->final) != XXL_OK)
			return xxl_part_fail(&s->part);
	}
	if ((int) s->nruns > s->stats.fan_in)
		s->stats.fan_in = (int) s->nruns;
	s->stats.read_size = s->read_size ? s->read_size : s->block_size;
	s->stats.merge_passes++;
	s->phase = PHASE_MERGE_OUTPUT;
	return XXL_OK;
}

/* Output ---------------------------------------------------------------- */

/* The last record was handed out: the sorter is done, the output time is taken. */
static int
output_done(xxl_sorter *s)
{
	s->phase = PHASE_DONE;
	s->stats.merge_ns = xxl_now_ns() - s->t_merge_start;
	return 0;
}

static int
next_record(xxl_sorter *s, const unsigned char **key, uint32_t *key_len,
			const unsigned char **payload, uint32_t *payload_len)
{
	if (s->part.failed)
		return -(int) s->part.err.code;
	if (s->phase == PHASE_MEMORY_OUTPUT)
	{
		if (s->out_index == s->nloaded)
			return output_done(s);
		if (s->fixed)
		{
			*key = (unsigned char *) fixed_sorted(s) + s->out_index * s->rec_size;
			*key_len = (uint32_t) s->key_size;
			*payload = *key;
			*payload_len = (uint32_t) s->rec_size;
		}
		else
		{
			const xxl_sort_entry *e = &var_entries(s)[s->out_index];
			const unsigned char *rec = (unsigned char *) s->region + (size_t) e->ref * 8;
			uint32_t	hdr[2];

			memcpy(hdr, rec, VAR_HEADER);
			*key = rec + VAR_HEADER;
			*key_len = hdr[0];
			*payload = rec + VAR_HEADER + hdr[0];
			*payload_len = hdr[1];
		}
		s->out_index++;
		if ((s->out_index & (POLL_EVERY - 1)) == 0 && xxl_part_canceled(&s->part))
			return -xxl_part_fail(&s->part);
		return 1;
	}
	if (s->phase == PHASE_MERGE_OUTPUT)
	{
		xxl_merge_record rec;
		int			got = xxl_merger_next(s->final, &rec);

		if (got < 0)
			return -xxl_part_fail(&s->part);
		if (got == 0)
			return output_done(s);
		*key = rec.key;
		*key_len = rec.key_len;
		*payload = rec.payload;
		*payload_len = rec.payload_len;
		if ((++s->out_index & (POLL_EVERY - 1)) == 0 && xxl_part_canceled(&s->part))
			return -xxl_part_fail(&s->part);
		return 1;
	}
	if (s->phase == PHASE_DONE)
		return 0;
	if (s->phase == PHASE_INPUT)
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "xxl_sorter_sort must be called before reading");
	return -(int) xxl_part_fail(&s->part);
}

/* The batch reader contract of xxl_batch.h, for fixed-size records. */
int
xxl_sorter_read(xxl_sorter *s, const void **recs, size_t *count)
{
	return xxl_sorter_next_many(s, recs, SIZE_MAX, count);
}

int
xxl_sorter_next_many(xxl_sorter *s, const void **recs, size_t max, size_t *n)
{
	uint64_t	before = s->out_index;

	if (!s->fixed)
	{
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "xxl_sorter_next_many needs fixed-size records");
		return -xxl_part_fail(&s->part);
	}
	if (max == 0)
		max = 1;
	if (s->part.failed)
		return -(int) s->part.err.code;
	if (s->phase == PHASE_MEMORY_OUTPUT)
	{
		if (s->out_index == s->nloaded)
			return output_done(s);
		*recs = fixed_sorted(s) + s->out_index * s->rec_size;
		*n = s->nloaded - s->out_index < max ? s->nloaded - s->out_index : max;
		s->out_index += *n;
	}
	else if (s->phase == PHASE_MERGE_OUTPUT)
	{
		const unsigned char *p;
		int			got = xxl_merger_next_many(s->final, &p, max, n);

		if (got < 0)
			return -xxl_part_fail(&s->part);
		if (got == 0)
			return output_done(s);
		*recs = p;
		s->out_index += *n;
	}
	else
	{
		const unsigned char *key = NULL,
				   *payload;
		uint32_t	key_len,
					payload_len;
		int			rc = next_record(s, &key, &key_len, &payload, &payload_len);

		if (rc == 1)
		{
			*recs = key;
			*n = 1;
		}
		return rc;
	}
	/* poll as often as record by record: whenever a multiple of POLL_EVERY is passed */
	if (before / POLL_EVERY != s->out_index / POLL_EVERY && xxl_part_canceled(&s->part))
		return -xxl_part_fail(&s->part);
	return 1;
}

int
xxl_sorter_next(xxl_sorter *s, const void **rec)
{
	const unsigned char *key = NULL,
			   *payload;
	uint32_t	key_len,
				payload_len;
	int			rc;

	if (!s->fixed)
	{
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "xxl_sorter_next needs fixed-size records");
		return -xxl_part_fail(&s->part);
	}
	rc = next_record(s, &key, &key_len, &payload, &payload_len);
	if (rc == 1)
		*rec = key;
	return rc;
}

int
xxl_sorter_next_var(xxl_sorter *s, const void **key, uint32_t *key_len,
					const void **payload, uint32_t *payload_len)
{
	const unsigned char *k = NULL,
			   *p = NULL;
	int			rc;

	if (s->fixed)
	{
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "xxl_sorter_next_var needs variable-length records");
		return -xxl_part_fail(&s->part);
	}
	rc = next_record(s, &k, key_len, &p, payload_len);
	if (rc == 1)
	{
		*key = k;
		*payload = p;
	}
	return rc;
}

const xxl_error *
xxl_sorter_error(const xxl_sorter *s)
{
	return &s->part.err;
}

void
xxl_sorter_stats(const xxl_sorter *s, xxl_sort_stats *stats)
{
	*stats = s->stats;
	stats->memory_peak = s->region != NULL ? touched_peak(s)
		: s->input_peak > s->part.budget.peak ? s->input_peak : s->part.budget.peak;
	stats->memory_limit = s->cfg.res.memory;
	if (s->phase == PHASE_MERGE_OUTPUT || s->phase == PHASE_MEMORY_OUTPUT)
		stats->merge_ns = xxl_now_ns() - s->t_merge_start;
	if (s->disks)
		xxl_disks_stats(s->disks, &stats->io);
	else
		memset(&stats->io, 0, sizeof(stats->io));
}

void
xxl_sorter_destroy(xxl_sorter *s)
{
	xxl_budget	budget;

	if (s == NULL)
		return;
	end_runs_worker(s);			/* before the writes it posted are waited for */
	xxl_merger_destroy(s->final);
	if (s->disks)
	{
		xxl_error	ignored = {0};

		for (size_t i = 0; i < s->nrun_writes; i++)
			xxl_io_wait(s->disks, &s->run_writes[i], &ignored);
	}
	xxl_part_free(&s->part, s->run_writes, s->run_writes_capacity * sizeof(xxl_io_request));
	for (size_t i = 0; i < s->nruns; i++)
		xxl_run_release(&s->runs[i], s->disks, &s->part.budget);
	xxl_part_free(&s->part, s->runs, s->runs_capacity * sizeof(xxl_run));
	xxl_part_free(&s->part, s->region, s->region_size);
	xxl_disks_close(s->disks);	/* joins the I/O threads, removes the files */
	budget = s->part.budget;
	xxl_budget_free(&budget, s, sizeof(*s));
}
