/*
 * test_stream.c — unit tests of runs and the block streams (xxl_stream.h):
 * records of every size written through xxl_bwriter and read back through
 * xxl_breader, the run's bookkeeping (blocks, bytes, the per-block key
 * prefixes the merger predicts with), budgets, and how write failures and
 * the spill limit surface.
 */
#include "xxl_test.h"

#include "core/xxl_stream.h"

#define BS (64 * 1024)

static xxl_disks *
open_disks(int ndisks, size_t block_size, xxl_alloc_strategy strategy, bool direct,
		   uint64_t max_spill, uint64_t fail_after, xxl_error *err)
{
	xxl_disk_config c;

	memset(&c, 0, sizeof(c));
	c.dirs = xt_dirs;
	c.ndisks = ndisks;
	c.file_prefix = "test_stream";
	c.block_size = block_size;
	c.try_direct = direct;
	c.strategy = strategy;
	c.max_spill_bytes = max_spill;
	c.fail_write_after = fail_after;
	c.seed = 99;
	return xxl_disks_open(&c, err);
}

/* Record i of a test stream: its length, prefix and bytes. */
typedef struct rec_plan
{
	uint64_t	start;			/* byte offset in the stream */
	uint32_t	len;
	uint64_t	prefix;
} rec_plan;

static uint32_t
pick_length(xt_rng *r, size_t block_size, uint32_t max_len)
{
	uint64_t	c = xt_below(r, 100);
	uint64_t	len;

	if (c < 5)
		len = 0;
	else if (c < 70)
		len = 1 + xt_below(r, 100);
	else if (c < 90)
		len = xt_below(r, block_size + 1);
	else if (c < 94)
		len = block_size - 1 + xt_below(r, 3);	/* around one block */
	else
		len = xt_below(r, (uint64_t) max_len + 1);	/* up to several blocks */
	return (uint32_t) (len > max_len ? max_len : len);
}

static void
record_bytes(unsigned char *buf, uint64_t index, uint32_t len)
{
	xt_rng		r = {index * 31 + 7};
	uint32_t	i = 0;

	for (; i + 8 <= len; i += 8)
	{
		uint64_t	v = xt_next(&r);

		memcpy(buf + i, &v, 8);
	}
	for (; i < len; i++)
		buf[i] = (unsigned char) (xt_next(&r) >> 17);
}

typedef struct stream_case
{
	int			ndisks;
	xxl_alloc_strategy strategy;
	bool		direct;
	int			write_buffers;
	int			read_buffers;
	int			nrecords;
	uint32_t	max_len;
	int			pieces;			/* write each record in up to this many calls */
	bool		inline_io;		/* writer and reader in the caller's thread */
} stream_case;

/*
 * Write a plan of records, check the run's bookkeeping, read everything back
 * and compare.
 */
static void
run_stream_case(const stream_case *sc)
{
	xxl_error	err = {0};
	xxl_disks  *d = open_disks(sc->ndisks, BS, sc->strategy, sc->direct, 0, 0, &err);
	xxl_budget	budget;
	xxl_run		run;
	xxl_bwriter *w;
	xxl_breader *r;
	rec_plan   *plan = calloc(sc->nrecords, sizeof(rec_plan));
	unsigned char *buf = malloc(sc->max_len + 1);
	xt_rng		rng = {(uint64_t) sc->nrecords * 1000 + sc->max_len};
	uint64_t	total = 0;
	size_t		expect_blocks;
	xxl_bid    *bids;
	uint64_t   *keys;
	int			bad_keys = 0,
				bad_data = 0,
				dup_bids = 0;
	xxl_io_stats st;
	uint64_t	disk_bytes = 0;
	uint64_t	wsum = 0,
				rsum = 0,
				nwrites = 0;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	xxl_budget_init(&budget, 64 << 20);
	xxl_run_init(&run);
	w = xxl_bwriter_create(d, &budget, sc->write_buffers, &run, &err);
	REQUIRE_MSG(w != NULL, "%s", err.message);
	CHECK_GE(budget.used, (size_t) sc->write_buffers * BS);
	xxl_bwriter_inline(w, sc->inline_io);

	for (int i = 0; i < sc->nrecords; i++)
	{
		uint32_t	len = pick_length(&rng, BS, sc->max_len);
		uint32_t	done = 0;
		int			pieces = 1 + (int) xt_below(&rng, sc->pieces);

		plan[i].start = total;
		plan[i].len = len;
		plan[i].prefix = xt_next(&rng);
		record_bytes(buf, (uint64_t) i, len);
		xxl_bwriter_begin_record(w, plan[i].prefix);
		for (int p = 0; p < pieces; p++)
		{
			uint32_t	n = p == pieces - 1 ? len - done : (uint32_t) xt_below(&rng, len - done + 1);

			CHECK_STATUS(xxl_bwriter_write(w, buf + done, n), XXL_OK);
			done += n;
		}
		total += len;
	}
	CHECK_STATUS(xxl_bwriter_finish(w), XXL_OK);
	CHECK_STATUS(xxl_bwriter_error(w)->code, XXL_OK);
	xxl_bwriter_destroy(w);

	/* bookkeeping */
	expect_blocks = (size_t) ((total + BS - 1) / BS);
	CHECK_EQ(run.nbytes, total);
	CHECK_EQ(run.nblocks, expect_blocks);
	CHECK_GE(run.capacity, run.nblocks);
	/* a long run's list moved to a log of its own: read it through a cursor */
	CHECK(run.log == NULL || run.nblocks > XXL_RUN_MEMORY_BLOCKS);
	bids = calloc(run.nblocks + 1, sizeof(xxl_bid));
	keys = calloc(run.nblocks + 1, sizeof(uint64_t));
	{
		xxl_run_cursor c;

		REQUIRE(xxl_run_cursor_open(&c, &run, &budget, &err) == XXL_OK);
		for (size_t b = 0; b < run.nblocks; b++)
		{
			xxl_run_block e;

			CHECK_STATUS(xxl_run_cursor_seek(&c, b, &e, &err), XXL_OK);
			bids[b] = e.bid;
			keys[b] = e.key;
		}
		xxl_run_cursor_close(&c, &budget);
	}
	{
		int			j = 0;

		for (size_t b = 0; b < run.nblocks; b++)
		{
			uint64_t	first = (uint64_t) b * BS;

			/* the record covering the block's first byte (empty records cover none) */
			while (j < sc->nrecords && (plan[j].len == 0 || plan[j].start + plan[j].len <= first))
				j++;
			if (j >= sc->nrecords || keys[b] != plan[j].prefix)
			{
				if (bad_keys++ < 5)
					printf("  block %zu: key %016" PRIx64 ", expected %016" PRIx64 " (record %d)\n",
						   b, keys[b], j < sc->nrecords ? plan[j].prefix : 0, j);
			}
		}
	}
	CHECK_MSG(bad_keys == 0, "%d of %zu block keys wrong", bad_keys, run.nblocks);
	for (size_t a = 0; a < run.nblocks; a++)
		for (size_t b = a + 1; b < run.nblocks && b < a + 200; b++)
			if (bids[a] == bids[b])
				dup_bids++;
	CHECK_EQ(dup_bids, 0);
	/* blocks are spread over all disks */
	if (sc->ndisks > 1 && run.nblocks >= (size_t) sc->ndisks * 4)
	{
		size_t		per[XXL_MAX_DISKS] = {0};

		for (size_t b = 0; b < run.nblocks; b++)
			per[XXL_BID_DISK(bids[b])]++;
		for (int i = 0; i < sc->ndisks; i++)
			CHECK_MSG(per[i] >= run.nblocks / sc->ndisks - 1 && per[i] <= run.nblocks / sc->ndisks + 1,
					  "disk %d holds %zu of %zu blocks", i, per[i], run.nblocks);
	}

	xxl_disks_stats(d, &st);
	for (size_t b = 0; b < run.nblocks; b++)
	{
		uint64_t	len = total - (uint64_t) b * BS < BS ? total - (uint64_t) b * BS : BS;

		disk_bytes += XXL_ROUND_UP(len, XXL_ALIGN);
	}
	for (int i = 0; i < st.ndisks; i++)
	{
		wsum += st.disk[i].bytes_written;
		nwrites += st.disk[i].writes;
	}
	/* and the pages of a long run's list */
	CHECK_EQ(wsum, disk_bytes + (run.log ? run.log->pages_written * XXL_RUN_LOG_PAGE : 0));
	CHECK_EQ(nwrites, run.nblocks + (run.log ? run.log->pages_written : 0));

	/* read back */
	r = xxl_breader_create(d, &budget, sc->read_buffers, &run, &err);
	REQUIRE_MSG(r != NULL, "%s", err.message);
	xxl_breader_inline(r, sc->inline_io);
	CHECK_EQ(xxl_breader_remaining(r), total);
	for (int i = 0; i < sc->nrecords; i++)
	{
		const void *p = NULL;
		xxl_status	rc = xxl_breader_next(r, plan[i].len, &p);

		CHECK_STATUS(rc, XXL_OK);
		if (rc != XXL_OK)
			break;
		record_bytes(buf, (uint64_t) i, plan[i].len);
		if (plan[i].len > 0 && memcmp(p, buf, plan[i].len) != 0)
		{
			if (bad_data++ < 5)
				printf("  record %d (%u bytes at %" PRIu64 ") differs\n", i, plan[i].len,
					   plan[i].start);
		}
		CHECK_EQ(xxl_breader_remaining(r), total - plan[i].start - plan[i].len);
	}
	CHECK_MSG(bad_data == 0, "%d of %d records differ", bad_data, sc->nrecords);
	CHECK_EQ(xxl_breader_remaining(r), 0);
	{
		const void *p;

		CHECK_STATUS(xxl_breader_next(r, 0, &p), XXL_OK);
		CHECK_STATUS(xxl_breader_next(r, 1, &p), XXL_EINVAL);
		CHECK_STATUS(xxl_breader_error(r)->code, XXL_EINVAL);
	}
	xxl_breader_destroy(r);

	xxl_disks_stats(d, &st);
	for (int i = 0; i < st.ndisks; i++)
		rsum += st.disk[i].bytes_read;
	CHECK_EQ(rsum, disk_bytes + (run.log ? run.log->pages_read * XXL_RUN_LOG_PAGE : 0));

	CHECK_LE(budget.peak, budget.limit);
	/*
	 * rings, the scratch for spanning records and the run's arrays (twice
	 * each: growing copies), nothing else
	 */
	CHECK_LE(budget.peak, (size_t) (sc->write_buffers > sc->read_buffers ? sc->write_buffers : sc->read_buffers) * BS
			 + 2 * XXL_ROUND_UP(sc->max_len, XXL_ALIGN)
			 + (run.log ? xxl_run_table_bound(run.nblocks) : 4 * XXL_ROUND_UP(run.capacity * 8, XXL_ALIGN))
			 + 64 * 1024);
	free(bids);
	free(keys);
	xxl_run_release(&run, d, &budget);
	CHECK_EQ(run.nblocks, 0);
	CHECK_EQ(budget.used, 0);
	xxl_disks_close(d);
	free(plan);
	free(buf);
}

XT_TEST(records_one_disk)
{
	stream_case sc = {1, XXL_ALLOC_STRIPING, true, 2, 2, xt_quick() ? 1000 : 5000, 3 * BS, 1, false};

	run_stream_case(&sc);
}

/* Transfers in the caller's thread: buffered files, and O_DIRECT ones (which keep the threads). */
XT_TEST(records_inline_io)
{
	stream_case sc = {2, XXL_ALLOC_STRIPING, false, 2, 3, xt_quick() ? 1000 : 5000, 3 * BS, 3, true};

	run_stream_case(&sc);
	sc.direct = true;
	sc.read_buffers = 1;
	run_stream_case(&sc);
}

XT_TEST(records_split_writes_three_disks)
{
	stream_case sc = {3, XXL_ALLOC_STRIPING, false, 3, 8, xt_quick() ? 1000 : 5000, 3 * BS, 4, false};

	run_stream_case(&sc);
}

XT_TEST(records_random_cycling_one_buffer_reader)
{
	stream_case sc = {2, XXL_ALLOC_RANDOM_CYCLING, true, 4, 1, xt_quick() ? 1000 : 4000, 5 * BS / 2, 3, false};

	run_stream_case(&sc);
}

XT_TEST(small_records_only)
{
	stream_case sc = {3, XXL_ALLOC_RANDOM_CYCLING, false, 2, 3, xt_quick() ? 5000 : 50000, 100, 2, false};

	run_stream_case(&sc);
}

XT_TEST(single_record_and_empty_stream)
{
	stream_case one = {1, XXL_ALLOC_STRIPING, false, 2, 2, 1, 10, 1, false};
	stream_case none = {2, XXL_ALLOC_STRIPING, false, 2, 2, 0, 10, 1, false};

	run_stream_case(&one);
	run_stream_case(&none);
}

/* Records that exactly fill blocks: no block starts inside a record. */
XT_TEST(block_aligned_records)
{
	xxl_error	err = {0};
	xxl_disks  *d = open_disks(2, BS, XXL_ALLOC_STRIPING, true, 0, 0, &err);
	xxl_budget	budget;
	xxl_run		run;
	xxl_bwriter *w;
	xxl_breader *r;
	unsigned char *buf = malloc(BS);

	REQUIRE_MSG(d != NULL, "%s", err.message);
	xxl_budget_init(&budget, 4 << 20);
	xxl_run_init(&run);
	w = xxl_bwriter_create(d, &budget, 2, &run, &err);
	REQUIRE_MSG(w != NULL, "%s", err.message);
	for (int i = 0; i < 10; i++)
	{
		memset(buf, i, BS);
		xxl_bwriter_begin_record(w, (uint64_t) i << 56);
		CHECK_STATUS(xxl_bwriter_write(w, buf, BS / 2), XXL_OK);
		CHECK_STATUS(xxl_bwriter_write(w, buf, BS / 2), XXL_OK);
	}
	CHECK_STATUS(xxl_bwriter_finish(w), XXL_OK);
	xxl_bwriter_destroy(w);
	CHECK_EQ(run.nblocks, 10);
	CHECK_EQ(run.nbytes, 10 * BS);
	for (size_t b = 0; b < run.nblocks && b < 10; b++)
		CHECK_EQ(run.block_keys[b], (uint64_t) b << 56);
	r = xxl_breader_create(d, &budget, 3, &run, &err);
	REQUIRE_MSG(r != NULL, "%s", err.message);
	for (int i = 0; i < 10; i++)
	{
		const void *p;

		memset(buf, i, BS);
		CHECK_STATUS(xxl_breader_next(r, BS, &p), XXL_OK);
		CHECK(memcmp(p, buf, BS) == 0);
	}
	xxl_breader_destroy(r);
	xxl_run_release(&run, d, &budget);
	CHECK_EQ(budget.used, 0);
	xxl_disks_close(d);
	free(buf);
}

/* Two runs read in an interleaved way from the same disks. */
XT_TEST(interleaved_readers)
{
	enum
	{
		N = 30000
	};
	xxl_error	err = {0};
	xxl_disks  *d = open_disks(3, BS, XXL_ALLOC_RANDOM_CYCLING, true, 0, 0, &err);
	xxl_budget	budget;
	xxl_run		run[2];
	xxl_breader *r[2];
	int			bad = 0;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	xxl_budget_init(&budget, 8 << 20);
	for (int k = 0; k < 2; k++)
	{
		xxl_bwriter *w;

		xxl_run_init(&run[k]);
		w = xxl_bwriter_create(d, &budget, 2, &run[k], &err);
		REQUIRE_MSG(w != NULL, "%s", err.message);
		for (uint64_t i = 0; i < N; i++)
		{
			uint64_t	v[3] = {i, (uint64_t) k, i * i};

			xxl_bwriter_begin_record(w, i);
			CHECK_STATUS(xxl_bwriter_write(w, v, sizeof(v)), XXL_OK);
		}
		CHECK_STATUS(xxl_bwriter_finish(w), XXL_OK);
		xxl_bwriter_destroy(w);
	}
	r[0] = xxl_breader_create(d, &budget, 4, &run[0], &err);
	r[1] = xxl_breader_create(d, &budget, 2, &run[1], &err);
	REQUIRE_MSG(r[0] && r[1], "%s", err.message);
	for (uint64_t i = 0; i < N; i++)
	{
		for (int k = 0; k < 2; k++)
		{
			const uint64_t *v;

			if (i % 3 == 0 && k == 1)
				continue;		/* reader 1 falls behind */
			CHECK_STATUS(xxl_breader_next(r[k], 24, (const void **) &v), XXL_OK);
		}
	}
	/* reader 1 catches up */
	while (xxl_breader_remaining(r[1]) > 0)
	{
		const uint64_t *v;

		if (xxl_breader_next(r[1], 24, (const void **) &v) != XXL_OK)
		{
			bad++;
			break;
		}
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(xxl_breader_remaining(r[0]), 0);
	xxl_breader_destroy(r[0]);
	xxl_breader_destroy(r[1]);

	/* and once more checking the values */
	r[0] = xxl_breader_create(d, &budget, 2, &run[1], &err);
	REQUIRE_MSG(r[0] != NULL, "%s", err.message);
	for (uint64_t i = 0; i < N; i++)
	{
		const uint64_t *v;

		if (xxl_breader_next(r[0], 24, (const void **) &v) != XXL_OK ||
			v[0] != i || v[1] != 1 || v[2] != i * i)
			bad++;
	}
	CHECK_EQ(bad, 0);
	xxl_breader_destroy(r[0]);
	xxl_run_release(&run[0], d, &budget);
	xxl_run_release(&run[1], d, &budget);
	CHECK_EQ(budget.used, 0);
	xxl_disks_close(d);
}

/*
 * One writer restarted for three runs (as the sorter's run formation keeps
 * it): each run holds exactly its own records, and the budget holds one
 * ring throughout (only the runs' block lists grow).
 */
XT_TEST(writer_restarted_for_each_run)
{
	enum
	{
		N = 20000
	};
	xxl_error	err = {0};
	xxl_disks  *d = open_disks(2, BS, XXL_ALLOC_STRIPING, true, 0, 0, &err);
	xxl_budget	budget;
	xxl_run		run[3];
	xxl_bwriter *w = NULL;
	size_t		used_after_first = 0;
	int			bad = 0;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	xxl_budget_init(&budget, 8 << 20);
	for (int k = 0; k < 3; k++)
	{
		xxl_run_init(&run[k]);
		if (w == NULL)
		{
			w = xxl_bwriter_create(d, &budget, 2, &run[k], &err);
			REQUIRE_MSG(w != NULL, "%s", err.message);
		}
		else
			xxl_bwriter_restart(w, &run[k]);
		/* runs of different lengths: the last block's fill must not carry over */
		for (uint64_t i = 0; i < N + (uint64_t) k * 777; i++)
		{
			uint64_t	v[3] = {i, (uint64_t) k, i ^ 0x5555};

			xxl_bwriter_begin_record(w, i);
			CHECK_STATUS(xxl_bwriter_write(w, v, sizeof(v)), XXL_OK);
		}
		CHECK_STATUS(xxl_bwriter_finish(w), XXL_OK);
		if (k == 0)
			used_after_first = budget.used;
		CHECK_EQ(run[k].nrecords, N + (uint64_t) k * 777);
		CHECK_EQ(run[k].nbytes, (N + (uint64_t) k * 777) * 24);
	}
	CHECK_LE(budget.used, used_after_first + 3 * sizeof(xxl_bid) * 64);
	xxl_bwriter_destroy(w);
	for (int k = 0; k < 3; k++)
	{
		xxl_breader *r = xxl_breader_create(d, &budget, 2, &run[k], &err);

		REQUIRE_MSG(r != NULL, "%s", err.message);
		for (uint64_t i = 0; i < N + (uint64_t) k * 777; i++)
		{
			const uint64_t *v;

			if (xxl_breader_next(r, 24, (const void **) &v) != XXL_OK ||
				v[0] != i || v[1] != (uint64_t) k || v[2] != (i ^ 0x5555))
				bad++;
		}
		CHECK_EQ(xxl_breader_remaining(r), 0);
		xxl_breader_destroy(r);
		xxl_run_release(&run[k], d, &budget);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(budget.used, 0);
	xxl_disks_close(d);
}

/* Destroying a reader with reads in flight, and a writer with writes in flight. */
XT_TEST(destroy_midway)
{
	xxl_error	err = {0};
	xxl_disks  *d = open_disks(2, BS, XXL_ALLOC_STRIPING, true, 0, 0, &err);
	xxl_budget	budget;
	xxl_run		run;
	xxl_bwriter *w;
	xxl_breader *r;
	unsigned char *buf = calloc(1, 10 * BS);
	const void *p;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	xxl_budget_init(&budget, 4 << 20);
	xxl_run_init(&run);
	w = xxl_bwriter_create(d, &budget, 4, &run, &err);
	REQUIRE_MSG(w != NULL, "%s", err.message);
	CHECK_STATUS(xxl_bwriter_write(w, buf, 10 * BS + 0), XXL_OK);
	CHECK_STATUS(xxl_bwriter_finish(w), XXL_OK);
	xxl_bwriter_destroy(w);

	r = xxl_breader_create(d, &budget, 8, &run, &err);
	REQUIRE_MSG(r != NULL, "%s", err.message);
	CHECK_STATUS(xxl_breader_next(r, 100, &p), XXL_OK);
	xxl_breader_destroy(r);		/* 7 reads still in flight */

	/* a writer destroyed without finish: writes in flight, run keeps its blocks */
	{
		xxl_run		run2;

		xxl_run_init(&run2);
		w = xxl_bwriter_create(d, &budget, 3, &run2, &err);
		REQUIRE_MSG(w != NULL, "%s", err.message);
		CHECK_STATUS(xxl_bwriter_write(w, buf, 5 * BS + 17), XXL_OK);
		xxl_bwriter_destroy(w);
		xxl_run_release(&run2, d, &budget);
	}
	xxl_run_release(&run, d, &budget);
	CHECK_EQ(budget.used, 0);
	xxl_disks_close(d);
	free(buf);
}

/* Releasing a run recycles its blocks: writing again does not grow the files. */
XT_TEST(release_recycles_blocks)
{
	xxl_error	err = {0};
	xxl_disks  *d = open_disks(3, BS, XXL_ALLOC_RANDOM_CYCLING, false, 0, 0, &err);
	xxl_budget	budget;
	unsigned char *buf = calloc(1, BS);
	uint64_t	peak_after_first = 0;
	xxl_io_stats st;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	xxl_budget_init(&budget, 4 << 20);
	for (int round = 0; round < 5; round++)
	{
		xxl_run		run;
		xxl_bwriter *w;

		xxl_run_init(&run);
		w = xxl_bwriter_create(d, &budget, 2, &run, &err);
		REQUIRE_MSG(w != NULL, "%s", err.message);
		for (int i = 0; i < 30; i++)
			CHECK_STATUS(xxl_bwriter_write(w, buf, BS), XXL_OK);
		CHECK_STATUS(xxl_bwriter_finish(w), XXL_OK);
		xxl_bwriter_destroy(w);
		CHECK_EQ(run.nblocks, 30);
		xxl_run_release(&run, d, &budget);
		xxl_disks_stats(d, &st);
		if (round == 0)
			peak_after_first = st.spill_bytes_peak;
		else
			CHECK_EQ(st.spill_bytes_peak, peak_after_first);
	}
	CHECK_EQ(peak_after_first, 30 * BS);
	CHECK_EQ(budget.used, 0);
	xxl_disks_close(d);
	free(buf);
}

/*
 * Write nrec 8-byte records 0, 1, ... (each its own key) as a run; the
 * budget's use when the run's list moved to a log, or 0, in *used_at_move.
 */
static void
write_counting_run(xxl_disks *d, xxl_budget *budget, xxl_run *run, uint64_t nrec,
				   uint64_t *used_at_move)
{
	xxl_error	err = {0};
	xxl_bwriter *w;

	xxl_run_init(run);
	w = xxl_bwriter_create(d, budget, 2, run, &err);
	REQUIRE_MSG(w != NULL, "%s", err.message);
	*used_at_move = 0;
	for (uint64_t i = 0; i < nrec; i++)
	{
		xxl_bwriter_begin_record(w, i);
		CHECK_STATUS(xxl_bwriter_write(w, &i, sizeof(i)), XXL_OK);
		if (run->log != NULL && *used_at_move == 0)
			*used_at_move = budget->used;
	}
	CHECK_STATUS(xxl_bwriter_finish(w), XXL_OK);
	xxl_bwriter_destroy(w);
}

/*
 * A run written through a block writer past XXL_RUN_MEMORY_BLOCKS blocks
 * moves its block list to a log of its own: its memory stops growing, a
 * reader (two at once) reads it back, a consuming reader frees every block
 * it passes and the release the rest, and the spill space is recycled.
 */
XT_TEST(long_run_moves_its_list_to_disk)
{
	xxl_error	err = {0};
	const size_t bs = XXL_ALIGN;
	xxl_disks  *d = open_disks(2, bs, XXL_ALLOC_RANDOM_CYCLING, false, 0, 0, &err);
	xxl_budget	budget;
	const size_t nblocks = 5000;
	const uint64_t nrec = nblocks * bs / 8;
	xxl_run		run;
	xxl_io_stats st;
	uint64_t	used_at_move,
				peak_written;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	xxl_budget_init(&budget, 1 << 20);
	write_counting_run(d, &budget, &run, nrec, &used_at_move);
	CHECK_EQ(run.nblocks, nblocks);
	CHECK(run.log != NULL);
	CHECK_EQ(run.capacity, XXL_RUN_OWNS_LOG);
	/* the list no longer grows in memory: 5000 blocks would be 80 kB of arrays */
	CHECK_LE(budget.used, used_at_move);
	CHECK(budget.used < 16 * 1024);
	CHECK(budget.used <= xxl_run_table_bound(nblocks));
	xxl_disks_stats(d, &st);
	peak_written = st.spill_bytes_peak;
	for (int pass = 0; pass < 2; pass++)
	{
		xxl_breader *r1 = xxl_breader_create(d, &budget, 2, &run, &err);
		xxl_breader *r2 = r1 ? xxl_breader_create(d, &budget, 2, &run, &err) : NULL;
		uint64_t	bad = 0;
		uint64_t	stop = pass == 0 ? nrec : nrec / 3;

		REQUIRE_MSG(r2 != NULL, "%s", err.message);
		if (pass == 1)
			xxl_breader_consume(r2);
		for (uint64_t i = 0; i < stop; i++)
		{
			const void *p;
			uint64_t	v;

			CHECK_STATUS(xxl_breader_next(r2, sizeof(v), &p), XXL_OK);
			memcpy(&v, p, sizeof(v));
			bad += v != i;
			if (pass == 0)
			{
				CHECK_STATUS(xxl_breader_next(r1, sizeof(v), &p), XXL_OK);
				memcpy(&v, p, sizeof(v));
				bad += v != i;
			}
		}
		CHECK_EQ(bad, 0);
		if (pass == 1)
		{
			size_t		freed = xxl_breader_freed(r2);

			CHECK_EQ(freed, stop * 8 / bs - 1 + (stop * 8 % bs != 0));
			xxl_breader_destroy(r1);
			xxl_breader_destroy(r2);
			xxl_run_release_from(&run, freed, d, &budget);
		}
		else
		{
			xxl_breader_destroy(r1);
			xxl_breader_destroy(r2);
		}
	}
	CHECK_EQ(budget.used, 0);
	/*
	 * Every block is free again: runs of the same size reuse them (the
	 * first may place its list's pages one block differently).
	 */
	for (int k = 0; k < 3; k++)
	{
		write_counting_run(d, &budget, &run, nrec, &used_at_move);
		xxl_disks_stats(d, &st);
		if (k == 0)
		{
			CHECK_LE(st.spill_bytes_peak, peak_written + bs);
			peak_written = st.spill_bytes_peak;
		}
		else
			CHECK_EQ(st.spill_bytes_peak, peak_written);
		xxl_run_release(&run, d, &budget);
	}
	CHECK_EQ(budget.used, 0);
	xxl_disks_close(d);
}

XT_TEST(run_arrays)
{
	xxl_error	err = {0};
	xxl_disks  *d = open_disks(1, XXL_ALIGN, XXL_ALLOC_STRIPING, false, 0, 0, &err);
	xxl_budget	budget;
	xxl_run		run;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	xxl_budget_init(&budget, 1 << 20);
	xxl_run_init(&run);
	CHECK_EQ(run.nblocks, 0);
	CHECK_EQ(run.nbytes, 0);
	CHECK_STATUS(xxl_run_reserve(&run, 10, &budget, &err), XXL_OK);
	CHECK_GE(run.capacity, 10);
	for (int i = 0; i < 1000; i++)
	{
		xxl_bid		bid;

		CHECK_STATUS(xxl_block_alloc(d, &bid, &err), XXL_OK);
		CHECK_STATUS(xxl_run_append_block(&run, NULL, bid, (uint64_t) i * 3, &budget, &err), XXL_OK);
	}
	CHECK_EQ(run.nblocks, 1000);
	CHECK_GE(run.capacity, 1000);
	for (int i = 0; i < 1000; i++)
		CHECK_EQ(run.block_keys[i], (uint64_t) i * 3);
	CHECK_LE(budget.used, 2 * 2 * 1000 * 8 + 2 * XXL_ALIGN);

	/* a reservation the budget cannot hold fails cleanly and keeps the run */
	CHECK_STATUS(xxl_run_reserve(&run, 1 << 20, &budget, &err), XXL_ENOMEM);
	CHECK_EQ(run.nblocks, 1000);
	CHECK_EQ(run.block_keys[999], 999 * 3);
	xxl_error_clear(&err);

	xxl_run_release(&run, d, &budget);
	CHECK_EQ(budget.used, 0);
	CHECK_EQ(run.nblocks, 0);
	CHECK(run.bids == NULL);
	xxl_disks_close(d);
}

/* A reader over blocks written by hand (the reader alone, without the writer). */
XT_TEST(reader_over_hand_written_run)
{
	xxl_error	err = {0};
	xxl_disks  *d = open_disks(2, XXL_ALIGN * 2, XXL_ALLOC_STRIPING, true, 0, 0, &err);
	size_t		bs = XXL_ALIGN * 2;
	xxl_budget	budget;
	xxl_run		run;
	xxl_breader *r;
	unsigned char *blk;
	uint64_t	total = 5 * bs + 100;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	xxl_budget_init(&budget, 1 << 20);
	xxl_run_init(&run);
	REQUIRE(posix_memalign((void **) &blk, XXL_ALIGN, bs) == 0);
	for (int b = 0; b < 6; b++)
	{
		xxl_io_request req = {0};
		xxl_bid		bid;

		for (size_t i = 0; i < bs; i++)
			blk[i] = (unsigned char) ((b * bs + i) % 251);
		CHECK_STATUS(xxl_block_alloc(d, &bid, &err), XXL_OK);
		req.bid = bid;
		req.buf = blk;
		req.len = b < 5 ? bs : XXL_ALIGN;
		req.is_write = true;
		xxl_io_post(d, &req);
		CHECK_STATUS(xxl_io_wait(d, &req, &err), XXL_OK);
		CHECK_STATUS(xxl_run_append_block(&run, NULL, bid, 0, &budget, &err), XXL_OK);
	}
	run.nbytes = total;
	r = xxl_breader_create(d, &budget, 2, &run, &err);
	REQUIRE_MSG(r != NULL, "%s", err.message);
	{
		uint64_t	pos = 0;
		int			bad = 0;
		size_t		step = 1;

		while (pos < total)
		{
			const unsigned char *p;
			size_t		n = step < total - pos ? step : (size_t) (total - pos);

			if (xxl_breader_next(r, n, (const void **) &p) != XXL_OK)
			{
				bad++;
				break;
			}
			for (size_t i = 0; i < n; i++)
				if (p[i] != (unsigned char) ((pos + i) % 251))
					bad++;
			pos += n;
			step = step * 3 + 1;	/* 1, 4, 13, 40, ... spanning blocks later */
			if (step > 3 * bs)
				step = 7;
		}
		CHECK_EQ(bad, 0);
	}
	xxl_breader_destroy(r);
	xxl_run_release(&run, d, &budget);
	CHECK_EQ(budget.used, 0);
	xxl_disks_close(d);
	free(blk);
}

XT_TEST(empty_run_reader)
{
	xxl_error	err = {0};
	xxl_disks  *d = open_disks(1, BS, XXL_ALLOC_STRIPING, false, 0, 0, &err);
	xxl_budget	budget;
	xxl_run		run;
	xxl_breader *r;
	const void *p;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	xxl_budget_init(&budget, 1 << 20);
	xxl_run_init(&run);
	r = xxl_breader_create(d, &budget, 2, &run, &err);
	REQUIRE_MSG(r != NULL, "%s", err.message);
	CHECK_EQ(xxl_breader_remaining(r), 0);
	CHECK_STATUS(xxl_breader_next(r, 0, &p), XXL_OK);
	CHECK_STATUS(xxl_breader_next(r, 1, &p), XXL_EINVAL);
	CHECK(xxl_breader_error(r)->message[0] != '\0');
	xxl_breader_destroy(r);
	CHECK_EQ(budget.used, 0);
	xxl_disks_close(d);
}

XT_TEST(budget_too_small_for_buffers)
{
	xxl_error	err = {0};
	xxl_disks  *d = open_disks(1, BS, XXL_ALLOC_STRIPING, false, 0, 0, &err);
	xxl_budget	budget;
	xxl_run		run;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	xxl_budget_init(&budget, 3 * BS);
	xxl_run_init(&run);
	CHECK(xxl_bwriter_create(d, &budget, 4, &run, &err) == NULL);
	CHECK_STATUS(err.code, XXL_ENOMEM);
	CHECK_EQ(budget.used, 0);
	xxl_error_clear(&err);
	CHECK(xxl_breader_create(d, &budget, 4, &run, &err) == NULL);
	CHECK_STATUS(err.code, XXL_ENOMEM);
	CHECK_EQ(budget.used, 0);
	xxl_disks_close(d);
}

/* A spanning record larger than the budget left for the reader's scratch. */
XT_TEST(reader_scratch_out_of_budget)
{
	xxl_error	err = {0};
	xxl_disks  *d = open_disks(1, BS, XXL_ALLOC_STRIPING, false, 0, 0, &err);
	xxl_budget	budget;
	xxl_run		run;
	xxl_bwriter *w;
	xxl_breader *r;
	unsigned char *buf = calloc(1, 8 * BS);
	const void *p;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	xxl_budget_init(&budget, 4 * BS);
	xxl_run_init(&run);
	w = xxl_bwriter_create(d, &budget, 2, &run, &err);
	REQUIRE_MSG(w != NULL, "%s", err.message);
	CHECK_STATUS(xxl_bwriter_write(w, buf, 8 * BS), XXL_OK);
	CHECK_STATUS(xxl_bwriter_finish(w), XXL_OK);
	xxl_bwriter_destroy(w);
	r = xxl_breader_create(d, &budget, 2, &run, &err);
	REQUIRE_MSG(r != NULL, "%s", err.message);
	CHECK_STATUS(xxl_breader_next(r, 8 * BS, &p), XXL_ENOMEM);
	CHECK_STATUS(xxl_breader_error(r)->code, XXL_ENOMEM);
	CHECK_LE(budget.peak, budget.limit);
	xxl_breader_destroy(r);
	xxl_run_release(&run, d, &budget);
	CHECK_EQ(budget.used, 0);
	xxl_disks_close(d);
	free(buf);
}

/* An injected write failure comes back from write or finish as ENOSPC, and sticks. */
XT_TEST(write_failure_surfaces)
{
	for (int variant = 0; variant < 2; variant++)
	{
		xxl_error	err = {0};
		xxl_disks  *d = open_disks(variant ? 3 : 1, BS, XXL_ALLOC_STRIPING, true, 0,
									5 * BS, &err);
		xxl_budget	budget;
		xxl_run		run;
		xxl_bwriter *w;
		unsigned char *buf = calloc(1, BS);
		xxl_status	rc = XXL_OK;
		int			i;

		REQUIRE_MSG(d != NULL, "%s", err.message);
		xxl_budget_init(&budget, 4 << 20);
		xxl_run_init(&run);
		w = xxl_bwriter_create(d, &budget, 2, &run, &err);
		REQUIRE_MSG(w != NULL, "%s", err.message);
		for (i = 0; i < 40 && rc == XXL_OK; i++)
			rc = xxl_bwriter_write(w, buf, BS / 3 + 1);
		if (rc == XXL_OK)
			rc = xxl_bwriter_finish(w);
		CHECK_STATUS(rc, XXL_ENOSPC);
		CHECK_STATUS(xxl_bwriter_error(w)->code, XXL_ENOSPC);
		CHECK_EQ(xxl_bwriter_error(w)->sys_errno, ENOSPC);
		CHECK(xxl_bwriter_error(w)->message[0] != '\0');
		/* sticky */
		CHECK_STATUS(xxl_bwriter_write(w, buf, 10), XXL_ENOSPC);
		CHECK_STATUS(xxl_bwriter_finish(w), XXL_ENOSPC);
		xxl_bwriter_destroy(w);
		xxl_run_release(&run, d, &budget);
		CHECK_EQ(budget.used, 0);
		xxl_disks_close(d);
		CHECK_EQ(xt_spill_files(), 0);
		free(buf);
	}
}

XT_TEST(spill_limit_surfaces)
{
	xxl_error	err = {0};
	xxl_disks  *d = open_disks(2, BS, XXL_ALLOC_STRIPING, false, 3 * BS, 0, &err);
	xxl_budget	budget;
	xxl_run		run;
	xxl_bwriter *w;
	unsigned char *buf = calloc(1, BS);
	xxl_status	rc = XXL_OK;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	xxl_budget_init(&budget, 4 << 20);
	xxl_run_init(&run);
	w = xxl_bwriter_create(d, &budget, 2, &run, &err);
	REQUIRE_MSG(w != NULL, "%s", err.message);
	for (int i = 0; i < 5 && rc == XXL_OK; i++)
		rc = xxl_bwriter_write(w, buf, BS);
	CHECK_STATUS(rc, XXL_ELIMIT);
	CHECK_STATUS(xxl_bwriter_error(w)->code, XXL_ELIMIT);
	CHECK_EQ(run.nblocks, 3);
	xxl_bwriter_destroy(w);
	xxl_run_release(&run, d, &budget);
	xxl_disks_close(d);
	free(buf);
}

XT_TEST(key_prefix)
{
	const unsigned char k[] = "abcdefghij";

	CHECK_EQ(xxl_key_prefix(k, 0), 0);
	CHECK_EQ(xxl_key_prefix(k, 1), UINT64_C(0x6100000000000000));
	CHECK_EQ(xxl_key_prefix(k, 2), UINT64_C(0x6162000000000000));
	CHECK_EQ(xxl_key_prefix(k, 7), UINT64_C(0x6162636465666700));
	CHECK_EQ(xxl_key_prefix(k, 8), UINT64_C(0x6162636465666768));
	CHECK_EQ(xxl_key_prefix(k, 10), UINT64_C(0x6162636465666768));
	{
		const unsigned char hi[] = {0xff, 0x00, 0x80};

		CHECK_EQ(xxl_key_prefix(hi, 3), UINT64_C(0xff00800000000000));
	}
	/* the prefix order agrees with memcmp order where prefixes differ */
	{
		xt_rng		r = {3};
		int			bad = 0;

		for (int i = 0; i < 100000; i++)
		{
			unsigned char a[12],
						b[12];
			size_t		la = xt_below(&r, 13),
						lb = xt_below(&r, 13);
			uint64_t	pa,
						pb;
			int			c;

			for (int j = 0; j < 12; j++)
			{
				a[j] = (unsigned char) xt_below(&r, 3);
				b[j] = (unsigned char) xt_below(&r, 3);
			}
			pa = xxl_key_prefix(a, la);
			pb = xxl_key_prefix(b, lb);
			c = memcmp(a, b, la < lb ? la : lb);
			if (c == 0)
				c = (la > lb) - (la < lb);
			if ((pa < pb && c > 0) || (pa > pb && c < 0))
				bad++;
		}
		CHECK_EQ(bad, 0);
	}
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
