/*
 * sort.c — the external sorter (see xxl_sort.h): run formation, the choice
 * of merge passes, and the public API but the output (sort_output.c).  The
 * merging itself is merge.c.
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
 * Asynchronous run formation (async_runs): a worker thread finishes each
 * full load but the last while the caller fills the next.
 *   - Fixed records: the caller distributes the load on its first varying
 *     key byte into the sorted half (all threads) and sorts the buckets too
 *     large for the worker's bucket scratch; then the worker sorts the other
 *     buckets one by one, in key order, and posts each block of the run as
 *     soon as the records before its end are sorted, while the caller
 *     refills the input half.
 *   - Variable records: the first load has the whole region and is sorted
 *     and written by the caller, so an input that fits the budget stays in
 *     memory as before (unless the caller expects more than twice the
 *     region: then the first load is a half too).  After it, loads
 *     alternate between the region's two halves: the worker sorts a full
 *     half's entries (one thread, or all of them for compared keys) and
 *     writes its records in key order through the sorter's block writer,
 *     which the caller aims at the run, while the caller fills the other
 *     half.  Runs are half as long; the merge takes twice as many.  Where
 *     that is more than one merge takes and whole loads' runs would spare
 *     an intermediate pass much of the data (the input expected over the
 *     first load's bytes), loads keep the whole region and the caller
 *     sorts each: the wait costs less than that part of a pass.
 * At the next full load the caller waits for the worker and the writes, as
 * it waits for the writes alone in synchronous mode.  During a job the
 * worker owns its load, the run being written, its writes and the block
 * manager and appends to the block log; it never allocates from the
 * budget (the run's log pages exist, the writer is made by the caller) and
 * never calls back into the caller.
 *
 * Runs and their block lists live on disk, in two run logs (xxl_stream.h):
 * blocks_log holds every run's (block id, first key) entries, runs_log the
 * runs themselves, appended as each is complete.  Memory holds the run
 * being formed, and each merge the runs it takes, so no input is too large
 * for a budget; a merge pass reads runs_log from the pass's start and
 * appends the runs it leaves (sort_merge.c).
 */
#include "core/sort_internal.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

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
 * Whether a sorter of memory bytes with blocks of block bytes takes nbytes
 * of rec_size-byte records: what it keeps beside its load region is the
 * write requests of one load and two pages per run log, whatever the input
 * (the runs and their block tables are on disk), so any input it can
 * form runs of.
 */
bool
xxl_sort_fits(uint64_t nbytes, size_t memory, size_t block, size_t rec_size)
{
	size_t		slack = xxl_sort_slack(memory);
	size_t		region,
				half;
	uint64_t	meta;

	(void) nbytes;
	if (memory < xxl_sort_min_memory(block))
		return false;
	region = memory - XXL_ALIGN - slack;
	half = (region / 2) & ~(size_t) (XXL_ALIGN - 1);
	if (half / rec_size == 0)
		return false;
	meta = xxl_budget_charge((half / block + 1) * sizeof(xxl_io_request)) + SORT_LOG_BYTES;
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


/* Creation ------------------------------------------------------------- */

/*
 * The region of fixed records sorted on the worker: input expected beyond
 * one load runs in loads of at most FIXED_LOAD_CAP while their runs still
 * fit one merge (a quarter of the frames the budget holds).  A large load
 * costs more than the runs it saves: its radix sort leaves the caches, and
 * the last one, which nothing overlaps, is sorted while the caller waits.
 * An input expected to fit one load keeps the whole region, and stays in
 * memory.
 */
static size_t
fixed_region_cap(const xxl_sort_config *config, size_t region, size_t block_size)
{
	uint64_t	frames = config->res.memory / block_size,
				half_for_one_merge = config->expected_bytes / (frames / 4 > 0 ? frames / 4 : 1),
				half = half_for_one_merge > FIXED_LOAD_CAP ? half_for_one_merge : FIXED_LOAD_CAP;

	if (config->expected_bytes <= region / 2 || 2 * half >= region)
		return region;
	return (size_t) (2 * half);
}

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
	if (config->combine != NULL && config->record_size == 0)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "only fixed records can be combined");
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
	if (s->fixed && config->async_runs && config->combine == NULL)
		s->region_size = fixed_region_cap(config, s->region_size, block_size);
	/* (a load's keys are folded once it is sorted, which the worker's streaming of blocks is not) */
	s->async_runs = config->async_runs && config->combine == NULL;
	if (s->async_runs && s->fixed)
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
	s->load = s->region;
	s->load_size = s->region_size;
	if (!s->fixed && s->async_runs && config->expected_bytes / 2 > s->region_size)
		s->load_size = (s->region_size / 2) & ~(size_t) 63;
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
		if (s->fixed)
		{
			rw->scratch = xxl_budget_alloc(&s->part.budget, s->bucket_scratch_size, err);
			if (rw->scratch == NULL)
				goto fail;
		}
	}
	s->t_start = xxl_now_ns();
	return s;

fail:
	xxl_sorter_destroy(s);
	return NULL;
}

/* Run formation --------------------------------------------------------- */

xxl_status
sort_ensure_disks(xxl_sorter *s)
{
	if (s->disks == NULL)
	{
		s->disks = xxl_disks_open(&s->cfg.res.disk, &s->part.err);
		if (s->disks == NULL)
			return s->part.err.code;
	}
	if (!s->logs_open)
	{
		if (xxl_run_log_open(&s->blocks_log, s->disks, sizeof(xxl_run_block), &s->part.budget,
							 &s->part.err) != XXL_OK)
			return s->part.err.code;
		if (xxl_run_log_open(&s->runs_log, s->disks, sizeof(run_record), &s->part.budget,
							 &s->part.err) != XXL_OK)
		{
			xxl_run_log_close(&s->blocks_log);
			return s->part.err.code;
		}
		s->pass_start = xxl_run_log_tail(&s->runs_log);
		s->logs_open = true;
	}
	return XXL_OK;
}

/*
 * The run formed so far, complete (its writes may be in flight), goes to
 * the runs' log.  Caller's thread, the worker idle.
 */
xxl_status
sort_close_run(xxl_sorter *s)
{
	if (!s->run_open)
		return XXL_OK;
	if (sort_log_run(s, &s->open_run) != XXL_OK)
		return s->part.err.code;
	s->run_open = false;
	return XXL_OK;
}

/*
 * A new, empty run: the one formed before it is complete (the worker and
 * its writes are waited for before a load is flushed) and goes to the
 * log, so memory holds one run whatever their number.
 */
xxl_status
sort_add_run(xxl_sorter *s, xxl_run **run)
{
	if (sort_close_run(s) != XXL_OK)
		return s->part.err.code;
	xxl_run_init_logged(&s->open_run, &s->blocks_log);
	s->run_open = true;
	s->nruns++;
	*run = &s->open_run;
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

void
sort_note_load(xxl_sorter *s)
{
	s->region_touched = load_touched(s);
	sort_report(s);
}

void
sort_report(xxl_sorter *s)
{
	xxl_progress *p = s->cfg.res.progress;

	if (p == NULL)
		return;
	p->records = s->stats.records;
	p->bytes = s->stats.bytes;
	p->runs = s->stats.runs;
	p->memory_peak = s->region != NULL ? sort_touched_peak(s) : s->part.budget.peak;
}

/* The budget's peak while the region lives, with only its touched part. */
uint64_t
sort_touched_peak(const xxl_sorter *s)
{
	uint64_t	untouched = s->region_size - load_touched(s);

	return s->part.budget.peak > untouched ? s->part.budget.peak - untouched : 0;
}


/* Wait for the previous run's writes: the half they come from is reused. */
xxl_status
sort_wait_run_writes(xxl_sorter *s)
{
	xxl_status	rc = XXL_OK;

	for (size_t i = 0; i < s->nrun_writes; i++)
		if (xxl_io_wait(s->disks, &s->run_writes[i], &s->part.err) != XXL_OK)
			rc = s->part.err.code;
	s->nrun_writes = 0;
	return rc;
}

/* Sort the current load in memory; afterwards records are in output order. */
void
sort_load(xxl_sorter *s)
{
	if (s->fixed)
	{
		xxl_radix_sort_fixed(s->region, sort_fixed_sorted(s), s->nloaded, s->rec_size, s->key_size,
							 s->threads, true);
		if (s->cfg.combine != NULL)
			s->nloaded = sort_combine_sorted(s, sort_fixed_sorted(s), s->nloaded);
	}
	else
		sort_var_load(s, s->load, s->load_size, s->nloaded, s->threads);
}

/*
 * Sort the n entries of a variable load into key order.  Runs on the run
 * worker too: it reads only the configuration.
 */
void
sort_var_load(xxl_sorter *s, char *load, size_t load_size, size_t n, int threads)
{
	xxl_sort_entry *e = var_load_entries(load, load_size, n);

	/* entries were pushed downwards: restore input order for stability */
	for (size_t i = 0, j = n ? n - 1 : 0; i < j; i++, j--)
	{
		xxl_sort_entry t = e[i];

		e[i] = e[j];
		e[j] = t;
	}
	if (s->cfg.compare != NULL)
		xxl_compare_sort_entries(e, e - n, n, load, VAR_HEADER, s->cfg.compare, threads);
	else
		xxl_radix_sort_entries(e, e - n, n, load, VAR_HEADER, threads);
}

/*
 * Write the records of a sorted variable load, in key order, through w;
 * stop is polled every POLL_EVERY records.  A write failure is copied from
 * the writer into err (cancel is only returned).
 */
xxl_status
sort_write_var_load(const char *load, const xxl_sort_entry *entries, size_t n, xxl_bwriter *w,
					bool (*stop) (void *), void *stop_arg, xxl_error *err)
{
	xxl_status	rc = XXL_OK;

	for (size_t i = 0; i < n && rc == XXL_OK; i++)
	{
		size_t		len;
		uint64_t	prefix;
		const char *rec;

		if (i + GATHER_AHEAD < n)
			var_fetch_ahead(load, &entries[i + GATHER_AHEAD]);
		rec = var_record(load, &entries[i], &len, &prefix);
		xxl_bwriter_begin_record(w, prefix);
		rc = xxl_bwriter_write(w, rec, len);
		if ((i & (POLL_EVERY - 1)) == POLL_EVERY - 1 && stop(stop_arg))
			rc = XXL_ECANCELED;
	}
	if (rc == XXL_OK)
		rc = xxl_bwriter_finish(w);
	if (rc != XXL_OK && rc != XXL_ECANCELED)
		xxl_error_set(err, rc, xxl_bwriter_error(w)->sys_errno, "%s", xxl_bwriter_error(w)->message);
	return rc;
}


/*
 * Post the write of block b of bytes bytes of fixed records in key order at
 * data (the sorted half, or a presorted chunk) as the run's next block,
 * straight from where they are; the block's padding is zeroed.  (On the
 * run worker too: the block's entry goes to the block log, which
 * allocates nothing.)
 */
xxl_status
sort_post_run_block(xxl_sorter *s, xxl_run *run, const unsigned char *data, size_t bytes,
					size_t b, xxl_error *err)
{
	size_t		start = b * s->block_size;
	size_t		len = bytes - start < s->block_size ? bytes - start : s->block_size;
	const unsigned char *first = data + (start / s->rec_size) * s->rec_size;
	xxl_io_request *req = &s->run_writes[s->nrun_writes];
	xxl_bid		bid;

	if (xxl_block_alloc(s->disks, &bid, err) != XXL_OK ||
		xxl_run_append_block(run, s->disks, bid, xxl_key_prefix(first, s->key_size), &s->part.budget,
							 err) != XXL_OK)
		return err->code;
	req->bid = bid;
	req->buf = (void *) (data + start);
	req->len = XXL_ROUND_UP(len, XXL_ALIGN);
	/* the half has room to the page: pad with zeros, not stale bytes */
	memset((char *) data + start + len, 0, req->len - len);
	req->is_write = true;
	xxl_io_post(s->disks, req);
	s->nrun_writes++;
	return XXL_OK;
}

/* A new run for the current load, its block list reserved. */
xxl_status
sort_add_load_run(xxl_sorter *s, xxl_run **run)
{
	size_t		bytes = s->nloaded * s->rec_size;

	if (sort_add_run(s, run) != XXL_OK ||
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
xxl_status
sort_write_fixed_run(xxl_sorter *s, xxl_run *run)
{
	size_t		bytes = s->nloaded * s->rec_size;
	size_t		nblocks = (bytes + s->block_size - 1) / s->block_size;

	for (size_t b = 0; b < nblocks; b++)
		if (sort_post_run_block(s, run, (unsigned char *) sort_fixed_sorted(s), bytes, b,
								&s->part.err) != XXL_OK)
			return s->part.err.code;
	s->stats.runs++;
	sort_note_load(s);
	s->nloaded = 0;
	return XXL_OK;
}

/* Input --------------------------------------------------------------- */

/*
 * The writer of variable runs, aimed at run: made at the first run, its
 * buffers kept until run formation ends (a block writer's ring of fresh
 * mappings per run cost the run worker the kernel's clearing of their
 * pages).  Caller's thread, worker idle.
 */
xxl_bwriter *
sort_var_writer(xxl_sorter *s, xxl_run *run)
{
	if (s->var_writer != NULL)
		xxl_bwriter_restart(s->var_writer, run);
	else
		s->var_writer = xxl_bwriter_create(s->disks, &s->part.budget, WRITE_BUFFERS, run,
										   &s->part.err);
	return s->var_writer;
}

/* Free the variable runs' writer (waiting for its writes); the worker is gone. */
void
sort_end_var_writer(xxl_sorter *s)
{
	xxl_bwriter_destroy(s->var_writer);
	s->var_writer = NULL;
}

/* Variable records: past the first load, which had the whole region. */
static bool
loads_alternate(const xxl_sorter *s)
{
	return s->load_size < s->region_size;
}

/*
 * The share of the data, in thousandths, that one intermediate pass
 * merges before a final merge of fan_in can take runs runs (consecutive
 * groups, each merge of g runs leaving one); above a thousand where one
 * pass does not do.
 */
static uint64_t
pass_share(uint64_t runs, uint64_t fan_in)
{
	if (runs <= fan_in)
		return 0;
	if (runs / fan_in > fan_in)
		return 1000 + pass_share(runs / fan_in, fan_in);
	return (runs - fan_in) * 1000 / runs;
}

/*
 * Variable records, at the end of the first load (async_runs): whether
 * whole loads would spare at least a quarter of the data an intermediate
 * pass over half loads' runs would merge.  Then loads keep the whole
 * region and the caller sorts each: the time the input waits costs less
 * than that share of a merge pass.  Where whole loads save less (both
 * need passes over most of the data), the overlap of halves is worth
 * more.
 */
static bool
whole_loads_spare_a_pass(xxl_sorter *s)
{
	size_t		half_load = loads_alternate(s) ? s->arena_used : s->arena_used / 2;
	size_t		held = s->region_size + (s->var_writer != NULL ? WRITE_BUFFERS * s->block_size : 0);
	uint64_t	half_runs,
				whole_runs,
				fan_in;

	if (s->cfg.expected_bytes == 0 || half_load == 0)
		return false;
	half_runs = s->cfg.expected_bytes / half_load + 1;
	whole_runs = half_runs / 2 + 1;
	fan_in = (uint64_t) sort_final_fan_in_estimate(s, held);
	return fan_in >= 2 && whole_runs <= fan_in * fan_in &&
		pass_share(half_runs, fan_in) >= pass_share(whole_runs, fan_in) + 250;
}

static bool
caller_canceled(void *arg)
{
	return xxl_part_canceled(&((xxl_sorter *) arg)->part);
}

/*
 * Sort the load and write it as a new run.  With async_runs, every load but
 * the last (and a variable input's first) is finished by the worker; those
 * here, with all threads.
 */
xxl_status
sort_flush_run(xxl_sorter *s, bool last)
{
	xxl_run    *run = NULL;
	xxl_bwriter *w;
	xxl_status	rc;

	if (s->nloaded == 0)
		return XXL_OK;
	sort_touch_end(s);
	if (s->async_runs && !last && !s->fixed && s->nruns == 0)
		s->whole_loads = whole_loads_spare_a_pass(s);
	if (s->async_runs && !last && (s->fixed || (loads_alternate(s) && !s->whole_loads)))
		return sort_flush_run_async(s);
	if (xxl_part_canceled(&s->part) || sort_ensure_disks(s) != XXL_OK || sort_wait_runs_worker(s) != XXL_OK ||
		sort_wait_run_writes(s) != XXL_OK)
		return s->part.err.code;
	sort_load(s);
	if (s->fixed)
	{
		if (sort_add_load_run(s, &run) != XXL_OK)
			return s->part.err.code;
		return sort_write_fixed_run(s, run);
	}
	if (sort_add_run(s, &run) != XXL_OK)
		return s->part.err.code;
	w = sort_var_writer(s, run);
	if (w == NULL)
		return s->part.err.code;
	rc = sort_write_var_load(s->load, var_entries(s), s->nloaded, w, caller_canceled, s,
							 &s->part.err);
	s->stats.runs++;
	sort_note_load(s);
	s->nloaded = 0;
	s->arena_used = 0;
	s->load = s->region;
	if (s->async_runs && !last && !s->whole_loads)
	{
		/* from now on loads alternate between the halves */
		s->load_size = (s->region_size / 2) & ~(size_t) 63;
	}
	else
		s->load_size = s->region_size;
	return rc;
}

bool
sort_check_input_phase(xxl_sorter *s)
{
	if (s->phase == PHASE_INPUT && !s->part.failed)
		return true;
	if (!s->part.failed)
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "records can only be added before sorting");
	return false;
}

/* n more records of bytes in all were put: counted, the host asked every POLL_EVERY */
xxl_status
sort_note_puts(xxl_sorter *s, size_t n, size_t bytes)
{
	s->stats.records += n;
	s->stats.bytes += bytes;
	s->puts_since_poll += n;
	if (s->puts_since_poll >= POLL_EVERY)
	{
		s->puts_since_poll = 0;
		sort_touch_ahead(s);
		sort_report(s);
		if (xxl_part_canceled(&s->part))
			return xxl_part_fail(&s->part);
	}
	return XXL_OK;
}

/* n more records of bytes in all are loaded */
static xxl_status
count_puts(xxl_sorter *s, size_t n, size_t bytes)
{
	s->nloaded += n;
	return sort_note_puts(s, n, bytes);
}

xxl_status
xxl_sorter_put(xxl_sorter *s, const void *rec)
{
	if (!sort_check_input_phase(s) || !s->fixed)
		return s->fixed ? s->part.err.code : xxl_error_set(&s->part.err, XXL_EINVAL, 0,
													  "xxl_sorter_put needs fixed-size records");
	if (s->nloaded == s->fixed_capacity && sort_flush_run(s, false) != XXL_OK)
		return xxl_part_fail(&s->part);
	xxl_copy_small(s->region + s->nloaded * s->rec_size, rec, s->rec_size);
	return count_puts(s, 1, s->rec_size);
}

void *
xxl_sorter_reserve(xxl_sorter *s, size_t *n)
{
	size_t		room;

	if (!sort_check_input_phase(s) || !s->fixed)
	{
		if (!s->fixed)
			xxl_error_set(&s->part.err, XXL_EINVAL, 0, "xxl_sorter_reserve needs fixed-size records");
		return NULL;
	}
	if (s->nloaded == s->fixed_capacity && sort_flush_run(s, false) != XXL_OK)
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
	if (!sort_check_input_phase(s))
		return s->part.err.code;
	if (n > s->fixed_capacity - s->nloaded)
		return xxl_error_set(&s->part.err, XXL_EINVAL, 0,
							 "committed %zu records, more than were reserved", n);
	return count_puts(s, n, n * s->rec_size);
}

/* Whether the load has room for a record of need bytes, its entry and the entry's radix scratch. */
static bool
var_fits(const xxl_sorter *s, size_t need)
{
	return s->arena_used + need + (s->nloaded + 1) * 2 * sizeof(xxl_sort_entry) <= s->load_size;
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

	if (!sort_check_input_phase(s) || s->fixed)
		return !s->fixed ? s->part.err.code : xxl_error_set(&s->part.err, XXL_EINVAL, 0,
													   "xxl_sorter_put_var needs variable-length records");
	if (!var_fits(s, need))
	{
		if (s->nloaded > 0 && sort_flush_run(s, false) != XXL_OK)
			return xxl_part_fail(&s->part);
		if (!var_fits(s, need))
		{
			xxl_error_set(&s->part.err, XXL_ENOMEM, 0,
						  "a record of %zu bytes does not fit the sort memory budget of %zu bytes",
						  len, s->cfg.res.memory);
			return xxl_part_fail(&s->part);
		}
	}
	if ((s->arena_used >> 3) > UINT32_MAX)
	{
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "load region larger than 32 GB is not supported");
		return xxl_part_fail(&s->part);
	}
	dst = s->load + s->arena_used;
	memcpy(dst, hdr, VAR_HEADER);
	if (key_len)
		memcpy(dst + VAR_HEADER, key, key_len);
	if (payload_len)
		memcpy(dst + VAR_HEADER + key_len, payload, payload_len);
	e = var_entries(s) - 1;
	/* a compared key's abbreviation now, while the key is in the cache */
	e->prefix = s->cfg.compare != NULL ? xxl_key_abbrev(s->cfg.compare, key, key_len)
		: xxl_key_prefix(key, key_len);
	e->key_len = key_len;
	e->ref = (uint32_t) (s->arena_used >> 3);
	s->arena_used += need;
	if (len > s->max_record)
		s->max_record = len;
	return count_puts(s, 1, (size_t) key_len + payload_len);
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
	stats->memory_peak = s->region != NULL ? sort_touched_peak(s)
		: s->input_peak > s->part.budget.peak ? s->input_peak : s->part.budget.peak;
	stats->memory_limit = s->cfg.res.memory;
	if (s->phase == PHASE_MERGE_OUTPUT || s->phase == PHASE_MEMORY_OUTPUT)
		stats->merge_ns = xxl_now_ns() - s->t_merge_start;
	if (s->final != NULL)
	{
		uint64_t	read,
					unprefetched;

		xxl_merger_units(s->final, &read, &unprefetched);
		stats->merge_units += read;
		stats->merge_unprefetched += unprefetched;
	}
	if (s->disks)
		xxl_disks_stats(s->disks, &stats->io);
	else
		memset(&stats->io, 0, sizeof(stats->io));
	if (s->logs_open)
	{
		stats->log_bytes_read = (s->blocks_log.pages_read + s->runs_log.pages_read) * XXL_RUN_LOG_PAGE;
		stats->log_bytes_written = (s->blocks_log.pages_written + s->runs_log.pages_written)
			* XXL_RUN_LOG_PAGE;
	}
}

void
xxl_sorter_destroy(xxl_sorter *s)
{
	xxl_budget	budget;

	if (s == NULL)
		return;
	sort_touch_end(s);
	sort_end_runs_worker(s);			/* before the writes it posted are waited for */
	sort_end_var_writer(s);
	xxl_merger_destroy(s->final);
	if (s->disks)
	{
		xxl_error	ignored = {0};

		for (size_t i = 0; i < s->nrun_writes; i++)
			xxl_io_wait(s->disks, &s->run_writes[i], &ignored);
	}
	xxl_part_free(&s->part, s->run_writes, s->run_writes_capacity * sizeof(xxl_io_request));
	xxl_part_free(&s->part, s->runs, s->runs_capacity * sizeof(xxl_run));
	if (s->fold)
		xxl_part_free(&s->part, s->fold, sizeof(sort_fold));
	sort_presorted_free(s);
	if (s->logs_open)
	{
		xxl_run_log_close(&s->blocks_log);
		xxl_run_log_close(&s->runs_log);
	}
	xxl_part_free(&s->part, s->region, s->region_size);
	xxl_disks_close(s->disks);	/* joins the I/O threads, removes the files */
	budget = s->part.budget;
	xxl_budget_free(&budget, s, sizeof(*s));
}

