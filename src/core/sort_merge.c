/*
 * sort_merge.c — the sorter's merge passes: how many runs each pass
 * merges, the intermediate passes, and the final merge that hands records
 * out (merge.c does the merging itself).  State: sort_internal.h.
 */
#include "core/sort_internal.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

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
 * overlap gains, the more so when the second core is busy.
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

/* The bytes a pass moves, all the records', for its share done (progress only). */
static uint64_t
pass_bytes(const xxl_sorter *s)
{
	return s->fixed ? s->stats.records * s->rec_size : s->stats.bytes + s->stats.records * VAR_HEADER;
}

/* Add a finished intermediate merge's reads to the sorter's statistics. */
static void
count_units(xxl_sorter *s, const xxl_merger *m)
{
	uint64_t	read,
				unprefetched;

	xxl_merger_units(m, &read, &unprefetched);
	s->stats.merge_units += read;
	s->stats.merge_unprefetched += unprefetched;
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
	sort_fold	fold;				/* with combine */

	fold.held = false;
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
		if (s->cfg.combine != NULL)
		{
			/* the record before, once rec's key is another */
			if (sort_fold_next(s, &fold, rec.key))
			{
				xxl_bwriter_begin_record(w, xxl_key_prefix(fold.done, s->key_size));
				rc = xxl_bwriter_write(w, fold.done, s->rec_size);
			}
		}
		else if (s->fixed)
		{
			xxl_bwriter_begin_record(w, rec.prefix);
			rc = xxl_bwriter_write(w, rec.key, s->rec_size);
		}
		else
		{
			uint32_t	hdr[2] = {rec.key_len, rec.payload_len};

			xxl_bwriter_begin_record(w, rec.prefix);
			rc = xxl_bwriter_write(w, hdr, VAR_HEADER);
			if (rc == XXL_OK)
				rc = xxl_bwriter_write(w, rec.key, (size_t) rec.key_len + rec.payload_len);
		}
		if (rc != XXL_OK)
			break;
		if ((++n & (POLL_EVERY - 1)) == 0)
		{
			/* the writer counts the merged run's bytes */
			xxl_progress_done(s->cfg.res.progress, s->pass_bytes_done + out->nbytes, pass_bytes(s));
			if (xxl_part_canceled(&s->part))
			{
				rc = XXL_ECANCELED;
				break;
			}
		}
	}
	if (got < 0)
		rc = s->part.err.code;
	if (rc == XXL_OK && s->cfg.combine != NULL && sort_fold_end(&fold, s->rec_size))
	{
		xxl_bwriter_begin_record(w, xxl_key_prefix(fold.done, s->key_size));
		rc = xxl_bwriter_write(w, fold.done, s->rec_size);
	}
	if (rc == XXL_OK)
		rc = xxl_bwriter_finish(w);
	if (rc != XXL_OK && s->part.err.code == XXL_OK)
		xxl_error_set(&s->part.err, rc, xxl_bwriter_error(w)->sys_errno, "%s",
					  xxl_bwriter_error(w)->message);
	xxl_bwriter_destroy(w);
	count_units(s, m);
	xxl_merger_destroy(m);
	return rc;
}

/*
 * The smallest frames a merge reads: a sixteenth of a block, not below
 * MIN_READ_SIZE (smaller requests and batches cost more than the fan-in
 * they buy).  A sixteenth takes 137 runs of 20M rows at 16MB (1 MB
 * blocks) in one merge with prefetch frames to spare, where an eighth
 * needed a pass over some of them first.
 */
static size_t
block_min_read_size(size_t block)
{
	size_t		u = block;

	while (u > block / 16 && u / 2 >= MIN_READ_SIZE && (u / 2) % XXL_ALIGN == 0)
		u /= 2;
	return u;
}

static size_t
min_read_size(const xxl_sorter *s)
{
	return block_min_read_size(s->block_size);
}

/*
 * Direct spill files pay for blocks of a megabyte and more (xxl_io.h), but
 * a sorter's merges may read frames of a sixteenth of a block, and direct
 * requests that small are latency-bound: 50M rows of (bigint, md5) at
 * 16MB, whose merges read 64 kB frames of 1 MB blocks, took 22.4 s direct
 * against 15.3 s buffered; at 32MB (2 MB blocks, 128 kB frames) 13.5
 * against 13.7 s; at 64MB (256 kB frames) 10.7 against 13.7 s.
 */
bool
xxl_sort_direct_pays(size_t block)
{
	return xxl_direct_pays(block) && block_min_read_size(block) >= SORT_DIRECT_READ_MIN;
}

/*
 * What a merge of k runs holds besides frames: the runs themselves, read
 * from the log (through a cursor's page).
 */
static size_t
runs_bytes(size_t k)
{
	return xxl_budget_charge(k * sizeof(xxl_run)) + XXL_RUN_LOG_CURSOR;
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

	reserve += runs_bytes(k);
	for (size_t u = s->block_size;; u /= 2)
	{
		env.read_size = u;
		if (xxl_merge_max_fan_in(&env, reserve) >= (int) k)
			return u;
		if (u <= least)
			return 0;
	}
}

/* The most runs one merge in env takes with reserve bytes set aside, were avail bytes free. */
static int
fan_in_of(const xxl_merge_env *env, size_t avail, size_t reserve)
{
	int			k = xxl_merge_fan_in_of(env, avail, reserve + runs_bytes(0));

	/* the runs' own bytes take a little from what frames would have */
	while (k > 0 && xxl_merge_fan_in_of(env, avail, reserve + runs_bytes((size_t) k)) < k)
		k--;
	return k;
}

/* ... at the frames set, with the budget as it is. */
static int
fan_in_with(xxl_sorter *s, size_t reserve)
{
	xxl_merge_env env = merge_env(s);

	return fan_in_of(&env, xxl_budget_available(&s->part.budget), reserve);
}

/*
 * During run formation: about how many runs the final merge will take, at
 * the smallest frames, once the held bytes (what run formation has and
 * merging gets back) are free.  For the choice of loads' size.
 */
int
sort_final_fan_in_estimate(xxl_sorter *s, size_t held)
{
	xxl_merge_env env = merge_env(s);

	env.read_size = min_read_size(s);
	return fan_in_of(&env, xxl_budget_available(&s->part.budget) + held, final_reserve(s));
}

/* Read the next n runs of the log into runs[0..n). */
static xxl_status
read_runs(xxl_sorter *s, xxl_run_log_cursor *c, xxl_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
	{
		const void *rec;

		if (xxl_run_log_next(c, &rec, &s->part.err) != XXL_OK)
			return s->part.err.code;
		sort_run_from_record(s, rec, &runs[i]);
	}
	return XXL_OK;
}

/*
 * One intermediate pass: the runs of the log from pass_start on, merged in
 * groups of consecutive runs (consecutive, so equal keys keep their input
 * order) of at most fan_in, just enough groups that excess runs go; the
 * pass's runs are appended to the log and are the next pass's.
 */
static xxl_status
merge_pass(xxl_sorter *s, int fan_in, size_t excess)
{
	xxl_run_log_cursor c;
	xxl_run_log_pos next_start = xxl_run_log_tail(&s->runs_log);
	size_t		group_bytes = (size_t) fan_in * sizeof(xxl_run);
	xxl_run    *group;
	size_t		in = 0,
				out = 0;
	xxl_status	rc = XXL_OK;

	s->pass_bytes_done = 0;
	group = xxl_part_alloc(&s->part, group_bytes);
	if (group == NULL)
		return s->part.err.code;
	if (xxl_run_log_cursor_open(&c, &s->runs_log, s->pass_start, &s->part.budget,
								&s->part.err) != XXL_OK)
	{
		xxl_part_free(&s->part, group, group_bytes);
		return s->part.err.code;
	}
	while (in < s->nruns && rc == XXL_OK)
	{
		size_t		g = s->nruns - in;
		xxl_run		merged;

		if (excess == 0 || g == 1)
			g = 1;
		else
		{
			if (g > (size_t) fan_in)
				g = (size_t) fan_in;
			if (g - 1 > excess)
				g = excess + 1;
		}
		rc = read_runs(s, &c, group, g);
		if (rc != XXL_OK)
			break;
		if (g == 1)
		{
			/* as it is, into this pass's runs */
			s->pass_bytes_done += group[0].nbytes;
			rc = sort_log_run(s, &group[0]);
			in++, out++;
			continue;
		}
		xxl_run_init_logged(&merged, &s->blocks_log);
		rc = merge_group(s, group, (int) g, &merged);
		if (rc == XXL_OK)
			rc = sort_log_run(s, &merged);
		if ((int) g > s->stats.fan_in)
			s->stats.fan_in = (int) g;
		s->pass_bytes_done += merged.nbytes;
		in += g;
		out++;
		excess -= g - 1;
		xxl_progress_done(s->cfg.res.progress, s->pass_bytes_done, pass_bytes(s));
	}
	xxl_run_log_cursor_close(&c, &s->part.budget);
	xxl_part_free(&s->part, group, group_bytes);
	if (rc != XXL_OK)
		return rc;
	s->pass_start = next_start;
	s->nruns = out;
	s->stats.merge_passes++;
	return XXL_OK;
}

/*
 * The passes still to come for nruns runs, the final merge included: a
 * pass leaves at least one run per fan_in it merges.  For progress only.
 */
static int
passes_left(size_t nruns, int fan_in, int final_fan_in)
{
	int			passes = 1;

	while (nruns > (size_t) final_fan_in)
	{
		nruns = (nruns + fan_in - 1) / fan_in;
		passes++;
	}
	return passes;
}

/*
 * Run log pages a merge pass may leave in memory: the blocks' log and the
 * runs' each take a page for reading at their first read (run_log.c,
 * page_at), which the first pass makes.
 */
#define PASS_LOG_PAGES 2

/*
 * Intermediate passes until one final merge can take every run, reading
 * the smallest frames, which take the most runs at once.  Leaves read_size
 * at what the final merge reads.
 */
static xxl_status
reduce_runs(xxl_sorter *s)
{
	for (;;)
	{
		size_t		final_read = fitting_read_size(s, s->nruns, final_reserve(s));
		int			final_fan_in;
		int			fan_in;

		if (final_read > 0)
		{
			s->read_size = final_read;
			return XXL_OK;
		}
		s->read_size = min_read_size(s);
		/*
		 * The pass may leave each run log a page more in memory than now
		 * (PASS_LOG_PAGES): a final fan-in planned without them came out a
		 * run short (225 runs left for a final merge that then took 224),
		 * and a second pass merged the first's large run again.
		 */
		final_fan_in = fan_in_with(s, final_reserve(s) + PASS_LOG_PAGES * XXL_RUN_LOG_PAGE);
		fan_in = fan_in_with(s, writer_reserve(s));
		if (fan_in < 2 || final_fan_in < 1)
			return xxl_error_set(&s->part.err, XXL_ENOMEM, 0,
								 "memory budget of %zu bytes is too small to merge %zu-byte records",
								 s->cfg.res.memory, s->max_record);
		xxl_progress_step(s->cfg.res.progress, "merge pass", (uint32_t) s->stats.merge_passes + 1,
						  (uint32_t) (s->stats.merge_passes + passes_left(s->nruns, fan_in, final_fan_in)));
		/* each merge of g runs removes g - 1; stop once the final merge can take the rest */
		if (merge_pass(s, fan_in, s->nruns - (size_t) final_fan_in) != XXL_OK)
			return s->part.err.code;
	}
}

/* The final merge's runs, from the log. */
static xxl_status
load_final_runs(xxl_sorter *s)
{
	xxl_run_log_cursor c;
	xxl_status	rc;

	s->runs = xxl_part_alloc(&s->part, s->nruns * sizeof(xxl_run));
	if (s->runs == NULL)
		return s->part.err.code;
	s->runs_capacity = s->nruns;
	if (xxl_run_log_cursor_open(&c, &s->runs_log, s->pass_start, &s->part.budget,
								&s->part.err) != XXL_OK)
		return s->part.err.code;
	rc = read_runs(s, &c, s->runs, s->nruns);
	xxl_run_log_cursor_close(&c, &s->part.budget);
	return rc;
}

xxl_status
xxl_sorter_sort(xxl_sorter *s)
{
	if (!sort_check_input_phase(s) || xxl_sorter_end_sorted(s) != XXL_OK)
		return s->part.err.code;
	sort_touch_end(s);
	sort_report(s);
	if (s->nruns == 0)
	{
		/* everything fits: sort in memory, never touch a disk */
		sort_load(s);
		if (!s->fixed)
			sort_gather_start(s);
		s->stats.run_formation_ns = xxl_now_ns() - s->t_start;
		s->t_merge_start = xxl_now_ns();
		s->out_index = 0;
		s->phase = PHASE_MEMORY_OUTPUT;
		return XXL_OK;
	}
	if (sort_flush_run(s, true) != XXL_OK || sort_wait_run_writes(s) != XXL_OK ||
		sort_close_run(s) != XXL_OK)
		return xxl_part_fail(&s->part);
	/* run formation is over: its thread and buffers give way to merging */
	sort_end_runs_worker(s);
	sort_end_var_writer(s);
	sort_note_load(s);
	s->input_peak = sort_touched_peak(s);
	xxl_part_free(&s->part, s->region, s->region_size);
	s->region = NULL;
	xxl_budget_restart_peak(&s->part.budget);	/* from here on: what merging charges */
	s->stats.run_formation_ns = xxl_now_ns() - s->t_start;
	s->t_merge_start = xxl_now_ns();
	if (reduce_runs(s) != XXL_OK || load_final_runs(s) != XXL_OK)
		return xxl_part_fail(&s->part);
	{
		xxl_merge_env env = merge_env(s);

		s->final = xxl_merger_create(&env, s->runs, (int) s->nruns, false, final_reserve(s));
		if (s->final == NULL)
			return xxl_part_fail(&s->part);
		if (use_async_merge(s) && xxl_merger_start_async(s->final) != XXL_OK)
			return xxl_part_fail(&s->part);
		if (s->cfg.combine != NULL && sort_combine_output_start(s) != XXL_OK)
			return xxl_part_fail(&s->part);
	}
	if ((int) s->nruns > s->stats.fan_in)
		s->stats.fan_in = (int) s->nruns;
	s->stats.read_size = s->read_size ? s->read_size : s->block_size;
	s->stats.merge_passes++;
	s->phase = PHASE_MERGE_OUTPUT;
	return XXL_OK;
}

