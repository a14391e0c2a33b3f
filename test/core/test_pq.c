/*
 * test_pq.c — unit tests of the external priority queue (pq.h).
 *
 * Every record carries a unique key, so the sequence of popped records is
 * fully determined and is compared one by one with an in-memory binary heap.
 * The workloads mix bulk loading (pop everything = sorting), random
 * interleaving, and the monotone pattern of time-forward processing (every
 * push larger than the last pop), at budgets small enough that the insertion
 * heap spills many times and runs are merged.  The budget must hold, the
 * spill space must follow the queue's size, and errors (injected write
 * failures, cancellation) must leave no spill file behind.
 */
#include "xxl_test.h"

#include "core/pq.h"

#define KB 1024
#define MB (1024 * 1024)

static xxl_pq_config
pq_config(size_t memory, size_t block, size_t rec, size_t key)
{
	xxl_pq_config c;

	memset(&c, 0, sizeof(c));
	c.memory = memory;
	c.record_size = rec;
	c.key_size = key;
	c.disk.dirs = xt_dirs;
	c.disk.ndisks = 2;
	c.disk.file_prefix = "test_pq";
	c.disk.block_size = block;
	c.disk.try_direct = false;
	c.disk.strategy = XXL_ALLOC_STRIPING;
	return c;
}

/* Oracle: a binary min-heap of 64-bit keys. */
typedef struct oheap
{
	uint64_t   *a;
	size_t		n;
	size_t		cap;
} oheap;

static void
oh_push(oheap *h, uint64_t v)
{
	size_t		i;

	if (h->n == h->cap)
	{
		h->cap = h->cap ? 2 * h->cap : 1024;
		h->a = realloc(h->a, h->cap * sizeof(uint64_t));
	}
	i = h->n++;
	while (i > 0 && h->a[(i - 1) / 2] > v)
	{
		h->a[i] = h->a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->a[i] = v;
}

static uint64_t
oh_pop(oheap *h)
{
	uint64_t	top = h->a[0],
				last = h->a[--h->n];
	size_t		i = 0;

	for (;;)
	{
		size_t		c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->a[c + 1] < h->a[c])
			c++;
		if (h->a[c] >= last)
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n > 0)
		h->a[i] = last;
	return top;
}

/*
 * A record: the 8-byte big-endian key, then the key again (as a check of
 * the payload), padded to rec bytes with bytes derived from the key.
 */
static void
make_rec(unsigned char *r, size_t rec, uint64_t k)
{
	xt_put_be64(r, k);
	for (size_t i = 8; i < rec; i++)
		r[i] = (unsigned char) (k >> (8 * (i % 8))) ^ (unsigned char) i;
}

static bool
rec_ok(const unsigned char *r, size_t rec, uint64_t k)
{
	unsigned char want[64];

	make_rec(want, rec, k);
	return memcmp(r, want, rec) == 0;
}

typedef enum workload
{
	BULK,						/* push all, pop all */
	RANDOM,						/* interleaved at random */
	MONOTONE					/* pushes never below the last pop */
} workload;

typedef struct pq_case
{
	const char *label;
	workload	kind;
	uint64_t	n;				/* records pushed */
	size_t		memory;
	size_t		block;
	size_t		rec;
	bool		expect_merges;
	double		max_merges_per_record;	/* 0: not checked */
	bool		short_runs_share;	/* more runs open than the longest lists allow */
} pq_case;

static uint64_t
io_total(const xxl_io_stats *io, bool write)
{
	uint64_t	s = 0;

	for (int i = 0; i < io->ndisks; i++)
		s += write ? io->disk[i].bytes_written : io->disk[i].bytes_read;
	return s;
}

static void
run_case(const pq_case *pc, uint64_t seed)
{
	xxl_error	err = {0};
	xxl_pq_config cfg = pq_config(pc->memory, pc->block, pc->rec, 8);
	xxl_pq	   *pq = xxl_pq_create(&cfg, &err);
	oheap		oh = {0};
	xt_rng		rng = {seed};
	uint64_t	pushed = 0,
				popped = 0,
				last = 0,
				seq = 0;
	unsigned char r[64],
				got[64];
	bool		ok = true;
	xxl_pq_stats st;

	REQUIRE_MSG(pq != NULL, "%s: create: %s", pc->label, err.message);
	while (ok && (pushed < pc->n || oh.n > 0))
	{
		bool		do_push;

		if (pushed == pc->n)
			do_push = false;
		else if (pc->kind == BULK)
			do_push = true;
		else if (oh.n == 0)
			do_push = true;
		else
			do_push = xt_below(&rng, 100) < 55;
		if (do_push)
		{
			/* unique keys: random high bits, a sequence number below */
			uint64_t	hi = xt_below(&rng, UINT64_C(1) << 36);
			uint64_t	k;

			if (pc->kind == MONOTONE)
				hi = (last >> 24) + xt_below(&rng, 1 << 16);
			k = (hi << 24) | (seq++ & 0xffffff);
			if (pc->kind == MONOTONE && k < last)
				k = last + 1;
			make_rec(r, pc->rec, k);
			if (xxl_pq_push(pq, r) != XXL_OK)
			{
				xt_fail(__FILE__, __LINE__, "%s: push: %s", pc->label, xxl_pq_error(pq)->message);
				ok = false;
			}
			oh_push(&oh, k);
			pushed++;
		}
		else
		{
			uint64_t	want = oh_pop(&oh);
			const void *top;
			int			rc = xxl_pq_top(pq, &top);

			if (rc != 1 || xt_get_be64(top) != want)
			{
				xt_fail(__FILE__, __LINE__, "%s: top %d at pop %" PRIu64, pc->label, rc, popped);
				ok = false;
				break;
			}
			rc = xxl_pq_pop(pq, got);
			if (rc != 1 || !rec_ok(got, pc->rec, want))
			{
				xt_fail(__FILE__, __LINE__, "%s: pop %" PRIu64 ": rc %d, key %" PRIx64 " want %" PRIx64,
						pc->label, popped, rc, xt_get_be64(got), want);
				ok = false;
				break;
			}
			last = want;
			popped++;
		}
		if (ok && xxl_pq_size(pq) != oh.n)
		{
			xt_fail(__FILE__, __LINE__, "%s: size %" PRIu64 " != %zu", pc->label, xxl_pq_size(pq), oh.n);
			ok = false;
		}
	}
	if (ok)
		CHECK_EQ(xxl_pq_pop(pq, got), 0);
	xxl_pq_get_stats(pq, &st);
	CHECK_LE(st.memory_peak, pc->memory);
	CHECK_EQ(st.pushes, pushed);
	if (pc->expect_merges)
	{
		CHECK_MSG(st.merges > 0, "%s: no merge happened (%" PRIu64 " runs, max %d)",
				  pc->label, st.runs, st.max_runs);
		CHECK(st.runs > (uint64_t) st.max_runs);
	}
	if (pc->short_runs_share)
		CHECK_MSG(st.open_peak > st.max_runs, "%s: %d runs open at most, %d at the longest lists",
				  pc->label, st.open_peak, st.max_runs);
	if (pc->max_merges_per_record > 0)
		CHECK_MSG(st.merged_records <= pc->max_merges_per_record * pushed,
				  "%s: %" PRIu64 " records merged for %" PRIu64 " pushed", pc->label,
				  st.merged_records, pushed);
	printf("  # %s: %" PRIu64 " records, heap %" PRIu64 ", %" PRIu64 " runs (%d open at most, %d at the longest lists), %"
		   PRIu64 " merges (%" PRIu64 " records), memory %" PRIu64 "/%" PRIu64 ", written %" PRIu64
		   ", read %" PRIu64 ", spill peak %" PRIu64 "\n",
		   pc->label, pushed, st.heap_capacity, st.runs, st.open_peak, st.max_runs, st.merges, st.merged_records,
		   st.memory_peak, st.memory_limit, io_total(&st.io, true), io_total(&st.io, false),
		   st.io.spill_bytes_peak);
	xxl_pq_destroy(pq);
	CHECK_EQ(xt_spill_files(), 0);
	free(oh.a);
}

XT_TEST(pq_in_memory)
{
	pq_case		c = {"in memory", RANDOM, 5000, 1 * MB, 4 * KB, 16, false, 0, false};

	run_case(&c, 1);
	CHECK_EQ(xt_spill_files(), 0);
}

XT_TEST(pq_empty)
{
	xxl_error	err = {0};
	xxl_pq_config cfg = pq_config(256 * KB, 4 * KB, 16, 16);
	xxl_pq	   *pq = xxl_pq_create(&cfg, &err);
	const void *top;

	REQUIRE(pq != NULL);
	CHECK_EQ(xxl_pq_top(pq, &top), 0);
	CHECK_EQ(xxl_pq_pop(pq, NULL), 0);
	CHECK_EQ(xxl_pq_size(pq), 0);
	xxl_pq_destroy(pq);
}

XT_TEST(pq_bulk_sort)
{
	pq_case		c = {"bulk", BULK, xt_quick() ? 30000 : 300000, xxl_pq_min_memory(4 * KB), 4 * KB, 16, true, 0, false};

	run_case(&c, 2);
}

XT_TEST(pq_random_interleaved)
{
	pq_case		c = {"random", RANDOM, xt_quick() ? 120000 : 400000, xxl_pq_min_memory(4 * KB), 4 * KB, 24, true, 0, false};

	run_case(&c, 3);
}

XT_TEST(pq_monotone)
{
	pq_case		c = {"monotone", MONOTONE, xt_quick() ? 120000 : 400000, xxl_pq_min_memory(4 * KB), 4 * KB, 24, true, 0, false};

	run_case(&c, 4);
}

/*
 * The runs the heap writes list a few blocks: their readers are charged
 * those lists, not the longest list's bound, so more of them are open
 * before a merge than the longest lists would allow, within the budget.
 */
XT_TEST(pq_short_runs_share_the_run_area)
{
	pq_case		c = {"short runs", BULK, xt_quick() ? 60000 : 300000, 352 * KB, 4 * KB, 16, true, 3.0, true};

	run_case(&c, 7);
}

/*
 * Many open runs whose merged lists outgrow XXL_RUN_MEMORY_BLOCKS: every
 * reader's list (arrays, or its log's page) must fit the budget beside the
 * readers' buffers (a 264 kB queue of connected components once ran out).
 * With a few hundred runs and eight open, a record is merged a few times,
 * not a number of times that grows with the runs.
 */
XT_TEST(pq_long_lists_in_many_runs)
{
	pq_case		c = {"long lists", BULK, xt_quick() ? 400000 : 1000000, 352 * KB, 4 * KB, 16, true, 5.0, false};

	run_case(&c, 6);
}

XT_TEST(pq_odd_record_sizes)
{
	/* records that span blocks and keys shorter than records */
	size_t		sizes[] = {8, 12, 40, 56};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
	{
		pq_case		c = {"odd size", RANDOM, xt_quick() ? 10000 : 60000, xxl_pq_min_memory(4 * KB), 4 * KB, sizes[i], false, 0, false};

		run_case(&c, 10 + i);
	}
}

XT_TEST(pq_larger_budget)
{
	pq_case		c = {"8 MiB", RANDOM, xt_quick() ? 50000 : 1000000, 8 * MB, 64 * KB, 16, false, 0, false};

	run_case(&c, 5);
}

/* Spill space must follow the queue's size, not the number of pushes. */
XT_TEST(pq_spill_space_recycled)
{
	xxl_error	err = {0};
	xxl_pq_config cfg = pq_config(xxl_pq_min_memory(4 * KB), 4 * KB, 16, 8);
	xxl_pq	   *pq = xxl_pq_create(&cfg, &err);
	xt_rng		rng = {77};
	unsigned char r[16];
	uint64_t	n = xt_quick() ? 20000 : 100000;
	uint64_t	seq = 0;
	xxl_pq_stats st;

	REQUIRE(pq != NULL);
	/* keep about n records in the queue while pushing 10 n */
	for (uint64_t i = 0; i < n; i++)
	{
		make_rec(r, 16, (xt_below(&rng, 1u << 30) << 24) | (seq++ & 0xffffff));
		REQUIRE(xxl_pq_push(pq, r) == XXL_OK);
	}
	for (uint64_t i = 0; i < 9 * n; i++)
	{
		uint64_t	base;

		REQUIRE(xxl_pq_pop(pq, r) == 1);
		base = xt_get_be64(r) >> 24;
		make_rec(r, 16, ((base + xt_below(&rng, 1u << 20)) << 24) | (seq++ & 0xffffff));
		REQUIRE(xxl_pq_push(pq, r) == XXL_OK);
	}
	xxl_pq_get_stats(pq, &st);
	printf("  # spill peak %" PRIu64 " bytes for %" PRIu64 " live records (%" PRIu64 " bytes), %"
		   PRIu64 " pushes\n", st.io.spill_bytes_peak, n, n * 16, st.pushes);
	/* live data plus what merges and partially read blocks hold: a few times n */
	CHECK_LE(st.io.spill_bytes_peak, 4 * n * 16 + 64 * 4 * KB);
	xxl_pq_destroy(pq);
}

static int	cancel_after;
static int	cancel_calls;

static bool
cancel_hook(void *arg)
{
	return ++cancel_calls > cancel_after;
}

XT_TEST(pq_cancel)
{
	for (int after = 0; after < 6; after++)
	{
		xxl_error	err = {0};
		xxl_pq_config cfg = pq_config(xxl_pq_min_memory(4 * KB), 4 * KB, 16, 8);
		xxl_pq	   *pq;
		unsigned char r[16];
		xt_rng		rng = {after};
		xxl_status	rc = XXL_OK;
		int			got = 1;

		cancel_after = after;
		cancel_calls = 0;
		cfg.cancel = cancel_hook;
		pq = xxl_pq_create(&cfg, &err);
		REQUIRE(pq != NULL);
		for (int i = 0; i < 300000 && rc == XXL_OK; i++)
		{
			make_rec(r, 16, xt_next(&rng));
			rc = xxl_pq_push(pq, r);
		}
		while (rc == XXL_OK && got == 1)
			got = xxl_pq_pop(pq, r);
		CHECK_MSG(rc == XXL_ECANCELED || (got < 0 && xxl_pq_error(pq)->code == XXL_ECANCELED),
				  "cancel after %d: rc %d got %d", after, rc, got);
		xxl_pq_destroy(pq);
		CHECK_EQ(xt_spill_files(), 0);
	}
}

XT_TEST(pq_write_failure)
{
	xxl_error	err = {0};
	xxl_pq_config cfg = pq_config(xxl_pq_min_memory(4 * KB), 4 * KB, 16, 8);
	xxl_pq	   *pq;
	unsigned char r[16];
	xt_rng		rng = {9};
	xxl_status	rc = XXL_OK;

	cfg.disk.fail_write_after = 256 * KB;
	pq = xxl_pq_create(&cfg, &err);
	REQUIRE(pq != NULL);
	for (int i = 0; i < 200000 && rc == XXL_OK; i++)
	{
		make_rec(r, 16, xt_next(&rng));
		rc = xxl_pq_push(pq, r);
	}
	CHECK_STATUS(rc, XXL_ENOSPC);
	CHECK_EQ(xxl_pq_pop(pq, r), -1);
	xxl_pq_destroy(pq);
	CHECK_EQ(xt_spill_files(), 0);
}

XT_TEST(pq_bad_config)
{
	xxl_error	err = {0};
	xxl_pq_config cfg = pq_config(xxl_pq_min_memory(4 * KB) - 4 * KB, 4 * KB, 16, 8);

	CHECK(xxl_pq_create(&cfg, &err) == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	xxl_error_clear(&err);
	cfg = pq_config(1 * MB, 4 * KB, 16, 17);
	CHECK(xxl_pq_create(&cfg, &err) == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	xxl_error_clear(&err);
	cfg = pq_config(1 * MB, 1000, 16, 8);
	CHECK(xxl_pq_create(&cfg, &err) == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
