/*
 * sort_internal.h — the external sorter's state (struct xxl_sorter), its
 * constants and the helpers its files share: sort.c (creation, run
 * formation, output), sort_async.c (run formation on a worker) and
 * sort_merge.c (merge passes).
 */
#ifndef XXL_SORT_INTERNAL_H
#define XXL_SORT_INTERNAL_H

#include "core/xxl_sort.h"
#include "core/merge.h"
#include "core/radix.h"
#include "core/record.h"
#include "core/xxl_stream.h"

#include <pthread.h>

#define VAR_HEADER 8			/* u32 key_len, u32 payload_len; as in merge.c */
#define POLL_EVERY 65536
#define WRITE_BUFFERS 2
/* structs, write requests and the run logs' pages; more for larger budgets */
#define SLACK_BYTES (64 * 1024)
/* the two run logs' pages: a tail and a read page each */
#define SORT_LOG_BYTES (2 * 2 * XXL_RUN_LOG_PAGE)
#define MERGE_SLACK (8 * 1024)	/* merger, writer and batch structs */
#define ASYNC_MERGE_MIN_MEMORY (4 * 1024 * 1024)
#define MIN_READ_SIZE (64 * 1024)	/* merges read frames of at least this */
#define SORT_DIRECT_READ_MIN (128 * 1024)	/* direct files: frames of at least this */
/* the run worker's bucket scratch: region / 32 within these bounds */
#define BUCKET_SCRATCH_MIN XXL_ALIGN
#define BUCKET_SCRATCH_MAX (4 * 1024 * 1024)
#define SLACK_FOR(memory) xxl_sort_slack(memory)
/* the largest load (half region) of fixed records expected to outgrow one (sort.c) */
#define FIXED_LOAD_CAP ((uint64_t) 64 * 1024 * 1024)

_Static_assert(XXL_SORT_MAX_FIXED_RECORD == XXL_RADIX_MAX_FIXED,
			   "the public record limit is the radix sort's");

typedef enum sorter_phase
{
	PHASE_INPUT,
	PHASE_MEMORY_OUTPUT,
	PHASE_MERGE_OUTPUT,
	PHASE_DONE
} sorter_phase;

/*
 * The run formation thread and its job (async_runs); from the budget.  A
 * fixed job is a load distributed into the sorted half; a variable job is
 * a load half (arena and entries) to sort and write through the sorter's
 * variable-run writer.
 */
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
	size_t		depth;			/* fixed: the distribution's key byte */
	char	   *load;			/* variable: the load's arena ... */
	size_t		load_size;		/* ... and size (its entries end there) */
	size_t		buckets[257];
	char	   *scratch;		/* for one bucket: bucket_scratch_size bytes */
	xxl_error	err;			/* the worker's error, taken over at the next hand-off */
} run_worker;

/*
 * Records of equal keys being folded into one (xxl_sort_config.combine,
 * sort_combine.c): the record held, and the one handed on when a key ends.
 */
typedef struct sort_fold
{
	unsigned char rec[XXL_SORT_MAX_FIXED_RECORD];
	unsigned char done[XXL_SORT_MAX_FIXED_RECORD];
	bool		held;
} sort_fold;

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
	char	   *load;			/* variable: the load being filled (arena at its start,
								 * entries growing down from its end) ... */
	size_t		load_size;		/* ... the whole region, or a half of it once async
								 * loads alternate */
	size_t		arena_used;		/* variable: arena bytes */
	xxl_bwriter *var_writer;	/* variable: writes every run of run formation (the
								 * worker's during its job), its buffers kept */
	size_t		region_touched; /* most region bytes a load has used */
	uint64_t	input_peak;		/* budget peak while the region lived, its untouched
								 * part left out (it is mapped, never backed) */
	size_t		max_record;		/* largest record seen (bytes on disk) */
	uint64_t	puts_since_poll;

	/* asynchronous run formation (see the head of sort.c) */
	bool		async_runs;
	bool		whole_loads;	/* variable: loads keep the whole region, as their
								 * runs spare a merge pass much of the data */
	size_t		bucket_scratch_size;
	struct run_worker *rw;		/* while loads are formed */
	struct sort_toucher *toucher;	/* backs the first load's pages ahead (sort_touch.c) */
	bool		touch_refused;	/* no helper could be had: none is tried again */

	/*
	 * Runs on disk: their block tables in blocks_log, the runs themselves in
	 * runs_log from pass_start on (nruns of them), but for the one being
	 * formed, open_run.  The final merge's runs are read into runs.
	 */
	bool		logs_open;
	xxl_run_log blocks_log;
	xxl_run_log runs_log;
	xxl_run_log_pos pass_start;
	xxl_run		open_run;
	bool		run_open;
	size_t		nruns;
	xxl_run    *runs;
	size_t		runs_capacity;

	/* a run of records put in key order (sort_presorted.c) */
	bool		pre_open;
	xxl_run    *pre_run;
	int			pre_half;		/* the region's half being filled: 0 or 1 */
	size_t		pre_n,			/* records in it */
				pre_cap;		/* records a chunk of whole blocks holds, 0: puts */
	sort_fold  *pre_fold;		/* with combine */

	/* output */
	size_t		out_index;
	/*
	 * Variable records sorted in memory go out through a batch they are
	 * gathered into, in key order, in a tight loop (sort_output.c); the
	 * batch is the sorted load's free space below its entries.
	 */
	char	   *gather;
	size_t		gather_size;
	size_t		gather_used;
	size_t		gather_pos;
	size_t		gathered;		/* entries gathered so far */
	xxl_merger *final;
	/* with combine, the final merge's records folded (sort_combine.c) */
	sort_fold  *fold;
	bool		fold_end;		/* the merge has no more */

	/* statistics */
	xxl_sort_stats stats;
	uint64_t	pass_bytes_done;	/* of the current merge pass (progress) */
	uint64_t	t_start;
	uint64_t	t_merge_start;
};


/* A run as runs_log keeps it. */
typedef struct run_record
{
	xxl_run_log_pos first;
	uint64_t	nblocks;
	uint64_t	nbytes;
	uint64_t	nrecords;
} run_record;

static inline xxl_status
sort_log_run(xxl_sorter *s, const xxl_run *run)
{
	run_record	r = {run->first, run->nblocks, run->nbytes, run->nrecords};

	return xxl_run_log_append(&s->runs_log, &r, &s->part.err);
}

static inline void
sort_run_from_record(xxl_sorter *s, const run_record *r, xxl_run *run)
{
	xxl_run_init_logged(run, &s->blocks_log);
	run->first = r->first;
	run->nblocks = r->nblocks;
	run->nbytes = r->nbytes;
	run->nrecords = r->nrecords;
}

static inline xxl_sort_entry *
var_load_entries(char *load, size_t load_size, size_t n)
{
	return (xxl_sort_entry *) (load + load_size) - n;
}

static inline xxl_sort_entry *
var_entries(xxl_sorter *s)
{
	return var_load_entries(s->load, s->load_size, s->nloaded);
}

/* Where sorted fixed records are: the region's second half. */
static inline char *
sort_fixed_sorted(xxl_sorter *s)
{
	return s->region + s->half;
}

/* Entries ahead whose records a gather in key order fetches. */
#define GATHER_AHEAD 16

/*
 * Fetch the record of entry e ahead of its use: a variable load's records
 * are gathered in key order from an arena in input order, a cache miss
 * each unless fetched ahead.
 */
static inline void
var_fetch_ahead(const char *load, const xxl_sort_entry *e)
{
	const char *rec = load + (size_t) e->ref * 8;

	__builtin_prefetch(rec);
	__builtin_prefetch(rec + 64);
}

/* Bytes of a variable record as on disk: header, key and payload. */
static inline size_t
var_record_len(const char *rec)
{
	uint32_t	hdr[2];

	memcpy(hdr, rec, sizeof(hdr));
	return VAR_HEADER + (size_t) hdr[0] + hdr[1];
}

/*
 * The batch a variable load sorted in memory is gathered into for output
 * (sort_output.c): about an L2 cache; none below the minimum.
 */
#define GATHER_BATCH (256 * 1024)
#define GATHER_BATCH_MIN (4 * 1024)

/* The record of entry e of a variable load: its bytes as on disk. */
static inline const char *
var_record(const char *load, const xxl_sort_entry *e, size_t *len, uint64_t *prefix)
{
	const char *rec = load + (size_t) e->ref * 8;
	uint32_t	hdr[2];

	memcpy(hdr, rec, sizeof(hdr));
	*len = VAR_HEADER + (size_t) hdr[0] + hdr[1];
	*prefix = xxl_key_prefix((const unsigned char *) rec + VAR_HEADER, hdr[0]);
	return rec;
}

/* sort_touch.c */
typedef struct sort_toucher sort_toucher;
void		sort_touch_ahead(xxl_sorter *s);
void		sort_touch_end(xxl_sorter *s);

/* sort_output.c */
void		sort_gather_start(xxl_sorter *s);

/* sort.c: creation, run formation, output */
xxl_status sort_add_load_run(xxl_sorter *s, xxl_run **run);
xxl_status sort_add_run(xxl_sorter *s, xxl_run **run);
xxl_status sort_close_run(xxl_sorter *s);
xxl_status sort_ensure_disks(xxl_sorter *s);
void sort_note_load(xxl_sorter *s);
/* Copy what the host shows of the sorter into its progress (if it has one). */
void		sort_report(xxl_sorter *s);
xxl_status sort_post_run_block(xxl_sorter *s, xxl_run *run, const unsigned char *data, size_t bytes,
							   size_t b, xxl_error *err);
uint64_t sort_touched_peak(const xxl_sorter *s);
xxl_status sort_wait_run_writes(xxl_sorter *s);
xxl_status sort_write_fixed_run(xxl_sorter *s, xxl_run *run);
void sort_load(xxl_sorter *s);
xxl_bwriter *sort_var_writer(xxl_sorter *s, xxl_run *run);
void sort_end_var_writer(xxl_sorter *s);
void sort_var_load(xxl_sorter *s, char *load, size_t load_size, size_t n, int threads);
xxl_status sort_write_var_load(const char *load, const xxl_sort_entry *entries, size_t n,
							   xxl_bwriter *w, bool (*stop) (void *), void *stop_arg,
							   xxl_error *err);

bool sort_check_input_phase(xxl_sorter *s);
xxl_status	sort_note_puts(xxl_sorter *s, size_t n, size_t bytes);
xxl_status sort_flush_run(xxl_sorter *s, bool last);

/* sort_merge.c */
int			sort_final_fan_in_estimate(xxl_sorter *s, size_t held);

/* sort_combine.c: equal keys folded into one (xxl_sort_config.combine) */
size_t		sort_combine_sorted(xxl_sorter *s, char *recs, size_t n);
/*
 * Fold rec into f: the record f held before, when rec's key differs from
 * its, is copied to f->done and true returned (f->done then is the next
 * record out); false while rec was folded or was the first.
 */
bool		sort_fold_next(xxl_sorter *s, sort_fold *f, const void *rec);
/* The record f still holds, into f->done (the end of its input): false if none. */
bool		sort_fold_end(sort_fold *f, size_t rec_size);
xxl_status	sort_combine_output_start(xxl_sorter *s);
int			sort_combine_next(xxl_sorter *s, const void **rec);

/* sort_presorted.c */
void		sort_presorted_free(xxl_sorter *s);

/* sort_async.c: asynchronous run formation */
void sort_end_runs_worker(xxl_sorter *s);
xxl_status sort_flush_run_async(xxl_sorter *s);
xxl_status sort_wait_runs_worker(xxl_sorter *s);

#endif							/* XXL_SORT_INTERNAL_H */
