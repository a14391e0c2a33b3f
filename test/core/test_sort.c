/*
 * test_sort.c — unit tests of the external sorter (xxl_sort.h).
 *
 * Fixed-size records are checked for sortedness, permutation (an
 * order-independent fingerprint of the full records) and stability (each
 * record carries its input index) over many key patterns, record shapes and
 * budgets, from in-memory sorts to budgets that force three or more merge
 * passes.  Variable-length records are compared one by one against an oracle
 * (qsort by key, shorter key first, then input index).  Failures (injected
 * write errors, the spill limit, a missing directory, cancellation) must
 * surface as the right status and leave neither spill files nor threads
 * behind; the budget must hold in every test and the process's own memory
 * growth must stay near it.
 */
#include "xxl_test.h"

#include <malloc.h>
#include <pthread.h>
#include <sys/wait.h>

#include "core/xxl_sort.h"

#define KB 1024
#define MB (1024 * 1024)
#define BS (64 * KB)
/* quick mode (valgrind): smaller blocks give many runs from little data */
#define QUICK_BS (4 * KB)

static pthread_t main_thread;
static int	hook_wrong_thread;	/* cancel hook calls from another thread */
static int	threads_after_warmup = -1;	/* see thread_baseline() */

/* A sort configuration over the first ndisks spill directories. */
static xxl_sort_config
sort_config(size_t memory, size_t block_size, int ndisks, size_t record_size, size_t key_size)
{
	xxl_sort_config c;

	memset(&c, 0, sizeof(c));
	c.res.memory = memory ? memory : xxl_sort_min_memory(block_size);
	c.record_size = record_size;
	c.key_size = key_size;
	c.res.threads = 0;
	c.res.disk.dirs = xt_dirs;
	c.res.disk.ndisks = ndisks;
	c.res.disk.file_prefix = "test_sort";
	c.res.disk.block_size = block_size;
	c.res.disk.try_direct = false;
	c.res.disk.strategy = XXL_ALLOC_RANDOM_CYCLING;
	c.res.disk.seed = 4242;
	return c;
}

static uint64_t
io_bytes_written(const xxl_io_stats *io)
{
	uint64_t	s = 0;

	for (int i = 0; i < io->ndisks; i++)
		s += io->disk[i].bytes_written;
	return s;
}

static uint64_t
io_bytes_read(const xxl_io_stats *io)
{
	uint64_t	s = 0;

	for (int i = 0; i < io->ndisks; i++)
		s += io->disk[i].bytes_read;
	return s;
}

static void
print_stats(const char *label, const xxl_sort_stats *st)
{
	printf("  # %s: %" PRIu64 " records, %" PRIu64 " runs, %d merge passes, fan-in %d, "
		   "memory %" PRIu64 "/%" PRIu64 ", written %" PRIu64 " read %" PRIu64 "\n",
		   label, st->records, st->runs, st->merge_passes, st->fan_in, st->memory_peak,
		   st->memory_limit, io_bytes_written(&st->io), io_bytes_read(&st->io));
}

/* Checks every finished sort must pass. */
static void
check_common_stats(const xxl_sort_stats *st, size_t memory, int expect_passes)
{
	CHECK_EQ(st->memory_limit, memory);
	CHECK_LE(st->memory_peak, st->memory_limit);
	CHECK(st->memory_peak > 0);
	if (expect_passes == 0)
	{
		/* an input that fits is never written */
		CHECK_EQ(st->runs, 0);
		CHECK_EQ(st->merge_passes, 0);
		CHECK_EQ(io_bytes_written(&st->io), 0);
		CHECK_EQ(io_bytes_read(&st->io), 0);
	}
	else
	{
		CHECK_GE(st->runs, 2);
		CHECK_GE(st->merge_passes, expect_passes);
		CHECK_GE(st->fan_in, 2);
		CHECK(st->io.ndisks >= 1);
		CHECK(io_bytes_written(&st->io) > 0);
		/* every block written is read back exactly once by a merge */
		CHECK_EQ(io_bytes_read(&st->io) - st->log_bytes_read,
				 io_bytes_written(&st->io) - st->log_bytes_written);
		/* the runs' bookkeeping on disk is a small fraction of them */
		CHECK(st->log_bytes_written * 32 <= io_bytes_written(&st->io));
		CHECK(st->log_bytes_read * 16 <= io_bytes_read(&st->io));
	}
}

static int	thread_baseline(void);

/* Fixed-size records -------------------------------------------------- */

typedef enum pattern
{
	P_RANDOM,
	P_EQUAL,
	P_SORTED,
	P_REVERSE,
	P_FEW,						/* 3 distinct keys */
	P_SMALLRANGE,				/* 1000 distinct keys: many ties */
	P_PREFIX_TIES,				/* keys > 8 bytes equal in their first 8 */
	P_SORTED_TIES				/* ascending in runs of 7 equal keys: runs of
								 * the sort that touch at equal keys */
} pattern;

static const char *const pattern_names[] = {
	"random", "equal", "sorted", "reverse", "few", "smallrange", "prefix-ties"
};

typedef struct fixed_case
{
	size_t		rec_size;
	size_t		key_size;
	pattern		pat;
	uint64_t	n;
	size_t		memory;			/* 0: the minimum for the block size */
	size_t		block_size;		/* 0: BS */
	int			ndisks;			/* 0: 1 */
	int			threads;
	bool		direct;
	xxl_alloc_strategy strategy;
	int			expect_passes;	/* 0: in memory; else at least this many */
	int			async_merge;	/* as in xxl_sort_config */
} fixed_case;

/* What some cases set beyond a fixed_case: as in xxl_sort_config. */
typedef struct fixed_extra
{
	bool		async_runs;
	uint64_t	expected_bytes;
} fixed_extra;

/* xxl_sort.h: the final merge runs on a worker from a 4 MiB budget on */
#define ASYNC_MERGE_MIN_MEMORY (4 * MB)

/* Write v big-endian into the first len (<= 8) bytes. */
static void
put_be(unsigned char *p, size_t len, uint64_t v)
{
	for (size_t b = 0; b < len; b++)
		p[b] = (unsigned char) (v >> (8 * (len - 1 - b)));
}

static void
gen_fixed(const fixed_case *fc, uint64_t i, unsigned char *rec)
{
	size_t		ks = fc->key_size;
	size_t		kb = ks < 8 ? ks : 8;
	xt_rng		r = {i * 0x1234567 + fc->pat * 77 + fc->rec_size};

	memset(rec, 0, fc->rec_size);
	switch (fc->pat)
	{
		case P_RANDOM:
			for (size_t b = 0; b < ks; b += 8)
			{
				uint64_t	v = xt_next(&r);

				memcpy(rec + b, &v, ks - b < 8 ? ks - b : 8);
			}
			break;
		case P_EQUAL:
			memset(rec, 0x5a, ks);
			break;
		case P_SORTED:
			put_be(rec, kb, i);
			break;
		case P_SORTED_TIES:
			put_be(rec, kb, i / 7);
			break;
		case P_REVERSE:
			put_be(rec, kb, fc->n - 1 - i);
			break;
		case P_FEW:
			{
				static const unsigned char vals[3] = {0x00, 0x80, 0xff};

				memset(rec, vals[xt_below(&r, 3)], ks);
			}
			break;
		case P_SMALLRANGE:
			put_be(rec, kb, xt_below(&r, 1000));
			break;
		case P_PREFIX_TIES:
			memset(rec, xt_below(&r, 2) ? 0x20 : 0x10, kb);
			for (size_t b = 8; b < ks; b++)
				rec[b] = (unsigned char) xt_below(&r, 3);
			break;
	}
	/* payload: the input index, then filler */
	{
		size_t		ps = fc->rec_size - ks;
		uint64_t	idx = i;

		for (size_t b = 0; b < ps && b < 8; b++)
		{
			rec[ks + b] = (unsigned char) idx;
			idx >>= 8;
		}
		for (size_t b = 8; b < ps; b++)
			rec[ks + b] = (unsigned char) (xt_mix64(i + b) >> 3);
	}
}

/* The input index stored in a record, if the payload can hold it. */
static bool
fixed_index(const fixed_case *fc, const unsigned char *rec, uint64_t *idx)
{
	size_t		ps = fc->rec_size - fc->key_size;
	uint64_t	v = 0;

	if (ps < 4)
		return false;
	for (size_t b = (ps < 8 ? ps : 8); b-- > 0;)
		v = (v << 8) | rec[fc->key_size + b];
	*idx = v;
	return true;
}

/* Output position -> expected input index, where the pattern fixes it. */
static bool
expected_index(const fixed_case *fc, uint64_t pos, uint64_t *idx)
{
	switch (fc->pat)
	{
		case P_SORTED:
		case P_SORTED_TIES:
		case P_EQUAL:
			*idx = pos;
			return true;
		case P_REVERSE:
			*idx = fc->n - 1 - pos;
			return true;
		default:
			return false;
	}
}

static void
label_fixed(const fixed_case *fc, char *buf, size_t len)
{
	snprintf(buf, len, "%zu/%zu %s n=%" PRIu64 " mem=%zuK bs=%zuK disks=%d",
			 fc->rec_size, fc->key_size, pattern_names[fc->pat], fc->n,
			 (fc->memory ? fc->memory : xxl_sort_min_memory(fc->block_size ? fc->block_size : BS)) / KB,
			 (fc->block_size ? fc->block_size : BS) / KB, fc->ndisks ? fc->ndisks : 1);
}

/* Sort one case and check everything about the output (extra: NULL, or what it sets). */
static void
run_fixed_case_extra(const fixed_case *fc, const fixed_extra *extra, xxl_sort_stats *stats_out)
{
	size_t		bs = fc->block_size ? fc->block_size : BS;
	xxl_sort_config cfg = sort_config(fc->memory, bs, fc->ndisks ? fc->ndisks : 1,
									  fc->rec_size, fc->key_size);
	xxl_error	err = {0};
	xxl_sorter *s;
	unsigned char rec[XXL_ALIGN];
	unsigned char prev[XXL_ALIGN];
	xt_multiset in = {0},
				out = {0};
	uint64_t	count = 0,
				unsorted = 0,
				unstable = 0,
				misplaced = 0;
	xxl_sort_stats st;
	char		label[200];
	int			rc;
	const void *p;

	label_fixed(fc, label, sizeof(label));
	cfg.res.threads = fc->threads;
	cfg.async_merge = fc->async_merge;
	if (extra)
	{
		cfg.async_runs = extra->async_runs;
		cfg.expected_bytes = extra->expected_bytes;
	}
	cfg.res.disk.try_direct = fc->direct;
	cfg.res.disk.strategy = fc->strategy;
	s = xxl_sorter_create(&cfg, &err);
	REQUIRE_MSG(s != NULL, "[%s] create: %s", label, err.message);
	for (uint64_t i = 0; i < fc->n; i++)
	{
		xxl_status	st_put;

		gen_fixed(fc, i, rec);
		xt_multiset_add(&in, rec, fc->rec_size);
		st_put = xxl_sorter_put(s, rec);
		if (st_put != XXL_OK)
		{
			CHECK_MSG(false, "[%s] put %" PRIu64 ": %s", label, i, xxl_sorter_error(s)->message);
			xxl_sorter_destroy(s);
			return;
		}
	}
	rc = xxl_sorter_sort(s);
	if (rc != XXL_OK)
	{
		CHECK_MSG(false, "[%s] sort: %s", label, xxl_sorter_error(s)->message);
		xxl_sorter_destroy(s);
		return;
	}
	if (fc->async_merge > 0 && cfg.res.memory >= ASYNC_MERGE_MIN_MEMORY && threads_after_warmup > 0)
		CHECK_MSG(xt_thread_count() > threads_after_warmup,
				  "[%s] no merge worker: %d threads, %d before", label, xt_thread_count(),
				  threads_after_warmup);
	while ((rc = xxl_sorter_next(s, &p)) == 1)
	{
		const unsigned char *r = p;
		uint64_t	idx,
					pidx,
					want;

		xt_multiset_add(&out, r, fc->rec_size);
		if (count > 0)
		{
			int			c = memcmp(prev, r, fc->key_size);

			if (c > 0 && unsorted++ < 3)
				printf("  [%s] output %" PRIu64 " is smaller than its predecessor\n", label, count);
			if (c == 0 && fixed_index(fc, r, &idx) && fixed_index(fc, prev, &pidx) && pidx >= idx &&
				unstable++ < 3)
				printf("  [%s] output %" PRIu64 ": input %" PRIu64 " after input %" PRIu64
					   " with an equal key\n", label, count, idx, pidx);
		}
		if (expected_index(fc, count, &want) && fixed_index(fc, r, &idx) && idx != want &&
			misplaced++ < 3)
			printf("  [%s] output %" PRIu64 " is input %" PRIu64 ", expected %" PRIu64 "\n",
				   label, count, idx, want);
		memcpy(prev, r, fc->rec_size);
		count++;
	}
	CHECK_MSG(rc == 0, "[%s] next returned %d: %s", label, rc, xxl_sorter_error(s)->message);
	CHECK_MSG(count == fc->n, "[%s] %" PRIu64 " records out of %" PRIu64, label, count, fc->n);
	CHECK_MSG(unsorted == 0, "[%s] %" PRIu64 " order violations", label, unsorted);
	CHECK_MSG(unstable == 0, "[%s] %" PRIu64 " stability violations", label, unstable);
	CHECK_MSG(misplaced == 0, "[%s] %" PRIu64 " records not where the pattern puts them", label,
			  misplaced);
	CHECK_MSG(xt_multiset_equal(&in, &out), "[%s] output is not a permutation of the input", label);
	/* the end is sticky */
	CHECK_EQ(xxl_sorter_next(s, &p), 0);

	xxl_sorter_stats(s, &st);
	CHECK_EQ(st.records, fc->n);
	CHECK_EQ(st.bytes, fc->n * fc->rec_size);
	check_common_stats(&st, cfg.res.memory, fc->expect_passes);
	if (fc->expect_passes > 0)
		CHECK_EQ(st.io.ndisks, cfg.res.disk.ndisks);
	if (xt_check_failures)
		print_stats(label, &st);
	if (stats_out)
		*stats_out = st;
	xxl_sorter_destroy(s);
	CHECK_MSG(xt_spill_files() == 0, "[%s] spill files left after destroy", label);
	if (threads_after_warmup > 0)
		CHECK_MSG(xt_threads_at_most(threads_after_warmup) <= threads_after_warmup,
				  "[%s] %d threads after destroy, %d before", label, xt_thread_count(),
				  threads_after_warmup);
}

static void
run_fixed_case(const fixed_case *fc, xxl_sort_stats *stats_out)
{
	run_fixed_case_extra(fc, NULL, stats_out);
}

static void
run_all_patterns(size_t rec_size, size_t key_size, uint64_t n, size_t memory, int expect_passes)
{
	static const pattern pats[] = {P_RANDOM, P_EQUAL, P_SORTED, P_REVERSE, P_FEW, P_SMALLRANGE};

	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
	{
		fixed_case	fc = {0};

		fc.rec_size = rec_size;
		fc.key_size = key_size;
		fc.pat = pats[i];
		fc.n = n;
		fc.memory = memory;
		fc.expect_passes = expect_passes;
		run_fixed_case(&fc, NULL);
	}
}

XT_TEST(fixed16_in_memory_patterns)
{
	thread_baseline();			/* later tests check that no thread outlives a sorter */
	run_all_patterns(16, 8, xt_quick() ? 20000 : 200000, 64 * MB, 0);
}

/*
 * A large budget (256MB) and fixed records sorted on the run worker: an
 * input expected beyond one load goes in loads of at most FIXED_LOAD_CAP
 * (64MB halves), within half the budget; not expected, in loads of half
 * the region, which its peak shows.
 */
XT_TEST(fixed_large_budget_caps_loads)
{
	fixed_case	fc = {0};
	fixed_extra extra = {true, 0};
	xxl_sort_stats st;

	if (xt_quick())
	{
		printf("  (skipped in quick mode: the cap needs 150MB of input)\n");
		return;
	}
	fc.rec_size = 16;
	fc.key_size = 8;
	fc.pat = P_RANDOM;
	fc.n = 9 * 1000 * 1000;
	fc.memory = 256 * MB;
	fc.expect_passes = 1;
	extra.expected_bytes = fc.n * fc.rec_size;
	run_fixed_case_extra(&fc, &extra, &st);
	CHECK_EQ(st.runs, 3);
	CHECK_EQ(st.merge_passes, 1);
	CHECK_LE(st.memory_peak, 160 * MB);

	extra.expected_bytes = 0;
	run_fixed_case_extra(&fc, &extra, &st);
	CHECK_EQ(st.runs, 2);
	CHECK_GE(st.memory_peak, 200 * MB);
}

XT_TEST(fixed16_external_patterns)
{
	/* min memory for 64 KiB blocks holds ~16K records per run: 200K make ~12 runs */
	run_all_patterns(16, 8, xt_quick() ? 40000 : 200000, 0, 1);
}

XT_TEST(fixed12_key4_patterns)
{
	run_all_patterns(12, 4, xt_quick() ? 20000 : 100000, 64 * MB, 0);
	run_all_patterns(12, 4, xt_quick() ? 40000 : 200000, 0, 1);
}

XT_TEST(fixed40_key24_patterns)
{
	fixed_case	fc = {40, 24, P_PREFIX_TIES, 100000, 64 * MB, 0, 1, 0, false, 0, 0, 0};

	run_all_patterns(40, 24, xt_quick() ? 10000 : 50000, 64 * MB, 0);
	run_all_patterns(40, 24, xt_quick() ? 20000 : 100000, 0, 1);
	run_fixed_case(&fc, NULL);
	fc.memory = 0;
	fc.expect_passes = 1;
	run_fixed_case(&fc, NULL);
}

/*
 * Input that comes sorted makes runs whose key ranges do not overlap but
 * touch at equal keys: the merge hands out one run's records at a time,
 * as many as precede every other run's head (ties to the earlier run),
 * through one and three merge passes, with 8- and 24-byte keys.
 */
XT_TEST(fixed_presorted_runs)
{
	fixed_case	one = {16, 8, P_SORTED_TIES, 300000, 0, 0, 1, 2, false, 0, 1, 0};
	fixed_case	three = {16, 8, P_SORTED_TIES, 1000000, 0, 16 * KB, 2, 0, false, XXL_ALLOC_STRIPING, 3, 0};
	fixed_case	wide = {40, 24, P_SORTED_TIES, 400000, 0, 16 * KB, 1, 0, false, 0, 3, 0};

	run_fixed_case(&one, NULL);
	run_fixed_case(&three, NULL);
	run_fixed_case(&wide, NULL);
}

XT_TEST(fixed_zero_and_one_record)
{
	static const size_t shapes[][2] = {{16, 8}, {12, 4}, {40, 24}, {8, 8}};

	for (int sh = 0; sh < 4; sh++)
		for (uint64_t n = 0; n <= 1; n++)
			for (int mem = 0; mem < 2; mem++)
			{
				fixed_case	fc = {0};

				fc.rec_size = shapes[sh][0];
				fc.key_size = shapes[sh][1];
				fc.pat = P_RANDOM;
				fc.n = n;
				fc.memory = mem ? 64 * MB : 0;
				run_fixed_case(&fc, NULL);
			}
}

/* Record shapes with their own radix paths, and keys of unusual sizes. */
XT_TEST(fixed_other_shapes)
{
	static const size_t shapes[][2] = {
		{8, 8}, {8, 4}, {13, 5}, {24, 8}, {32, 16}, {32, 9}, {64, 1}, {100, 20}, {16, 0}, {4, 4},
		{1024, 16}
	};

	for (size_t sh = 0; sh < sizeof(shapes) / sizeof(shapes[0]); sh++)
	{
		for (int ext = 0; ext < 2; ext++)
		{
			fixed_case	fc = {0};
			/* at least ~2 MB: several runs with the minimum budget */
			uint64_t	n = 2 * MB / shapes[sh][0] > 60000 ? 2 * MB / shapes[sh][0] : 60000;

			fc.rec_size = shapes[sh][0];
			fc.key_size = shapes[sh][1];
			fc.pat = fc.key_size >= 2 ? P_SMALLRANGE : P_FEW;
			if (shapes[sh][0] >= 100)
				n = 20000;
			fc.n = xt_quick() ? n / 5 : n;
			fc.memory = ext ? 0 : 128 * MB;
			fc.expect_passes = ext;
			run_fixed_case(&fc, NULL);
		}
	}
}

XT_TEST(fixed_single_thread_and_direct)
{
	fixed_case	fc = {16, 8, P_SMALLRANGE, 150000, 0, 0, 1, 1, true, XXL_ALLOC_STRIPING, 1, 0};

	if (xt_quick())
		fc.n = 30000;
	run_fixed_case(&fc, NULL);
	fc.memory = 64 * MB;
	fc.expect_passes = 0;
	run_fixed_case(&fc, NULL);
}

/* Tiny budget, many runs: at least three merge passes. */
XT_TEST(fixed16_three_merge_passes)
{
	fixed_case	fc = {16, 8, P_RANDOM, 2000000, 0, 0, 1, 0, false, 0, 3, 0};
	xxl_sort_stats st;

	if (xt_quick())
	{
		/* small blocks keep the run count with a fraction of the data */
		fc.block_size = QUICK_BS;
		fc.n = 100000;
	}
	memset(&st, 0, sizeof(st));
	run_fixed_case(&fc, &st);
	print_stats("fixed16 3 passes", &st);
	CHECK_GE(st.runs, xt_quick() ? 20 : 50);
	CHECK_GE(st.merge_passes, 3);
}

/*
 * Thousands of runs at the smallest budget and block: the runs and their
 * block tables live on disk, so no input is too large for a budget (an
 * in-memory run list capped this sorter near 90 times its memory).
 */
XT_TEST(fixed_thousands_of_runs_at_minimum_budget)
{
	fixed_case	fc = {16, 8, P_RANDOM, xt_quick() ? 1000000 : 3000000, 0, 4 * KB, 1, 0, false, 0, 3, 0};
	xxl_sort_stats st;

	memset(&st, 0, sizeof(st));
	run_fixed_case(&fc, &st);
	print_stats("fixed16 minimum budget", &st);
	CHECK_GE(st.runs, xt_quick() ? 1000 : 3000);
	/* (quick: a third of the data, for valgrind) */
	CHECK(st.bytes > (xt_quick() ? 120 : 400) * st.memory_limit);
	CHECK(st.memory_peak <= st.memory_limit);
	/* nothing but the budget's floor limits the input */
	CHECK(xxl_sort_fits(UINT64_C(1) << 40, xxl_sort_min_memory(4 * KB), 4 * KB, 16));
	CHECK(xxl_sort_fits(UINT64_C(1) << 40, MB, 64 * KB, 64));
}

XT_TEST(fixed16_three_passes_stability)
{
	/* 16 KiB blocks: hundreds of runs, so three passes whatever the fan-in tuning */
	fixed_case	fc = {16, 8, P_SMALLRANGE, 1000000, 0, 16 * KB, 2, 0, false, XXL_ALLOC_STRIPING, 3, 0};
	xxl_sort_stats st;

	if (xt_quick())
	{
		fc.block_size = QUICK_BS;
		fc.n = 100000;
	}
	memset(&st, 0, sizeof(st));
	run_fixed_case(&fc, &st);
	print_stats("fixed16 few keys 3 passes", &st);
}

XT_TEST(fixed40_key24_three_passes)
{
	fixed_case	fc = {40, 24, P_PREFIX_TIES, 400000, 0, 16 * KB, 1, 0, false, 0, 3, 0};
	xxl_sort_stats st;

	if (xt_quick())
	{
		fc.block_size = QUICK_BS;
		fc.n = 50000;
	}
	memset(&st, 0, sizeof(st));
	run_fixed_case(&fc, &st);
	print_stats("fixed40 3 passes", &st);
}

XT_TEST(fixed12_key4_three_passes)
{
	fixed_case	fc = {12, 4, P_RANDOM, 1000000, 0, 16 * KB, 1, 0, false, 0, 3, 0};
	xxl_sort_stats st;

	if (xt_quick())
	{
		fc.block_size = QUICK_BS;
		fc.n = 100000;
	}
	memset(&st, 0, sizeof(st));
	run_fixed_case(&fc, &st);
	print_stats("fixed12 3 passes", &st);
}

/*
 * Records filled in place (reserve/commit, in chunks of varying size) and
 * taken out many at a time (next_many, varying max) give the same sorted,
 * stable output as put/next: in memory, through a batched merge on the
 * caller's thread and on a worker, and through the loser tree (key > 16).
 */
XT_TEST(fixed_reserve_and_next_many)
{
	struct
	{
		size_t		rec,
					key;
		uint64_t	n;
		size_t		memory;
		int			async_merge;
		int			threads;
	}			cases[] = {
		{16, 8, 20000, 4 * MB, 0, 1},		/* in memory */
		{18, 9, 600000, 4 * MB, 0, 1},		/* batched merge, caller */
		{18, 9, 600000, 4 * MB, 1, 2},		/* batched merge, worker */
		{40, 24, 200000, 4 * MB, 0, 1},		/* loser tree */
		{24, 9, 300000, 4 * MB, 1, 2},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		fixed_case	fc = {.rec_size = cases[c].rec, .key_size = cases[c].key, .pat = P_SMALLRANGE, .n = cases[c].n};
		xxl_sort_config cfg = sort_config(cases[c].memory, 256 * KB, 1, fc.rec_size, fc.key_size);
		xxl_error	err = {0};
		xxl_sorter *srt;
		xt_multiset in = {0},
					out = {0};
		xt_rng		r = {c + 99};
		unsigned char prev[256];
		uint64_t	i = 0,
					count = 0,
					bad = 0;
		size_t		largest = 0;
		int			rc;

		if (xt_quick())
			fc.n /= 4;
		cfg.async_merge = cases[c].async_merge;
		cfg.res.threads = cases[c].threads;
		srt = xxl_sorter_create(&cfg, &err);
		REQUIRE_MSG(srt != NULL, "create: %s", err.message);
		while (i < fc.n)
		{
			size_t		want = 1 + xt_below(&r, 300);
			unsigned char *dst;

			if (want > fc.n - i)
				want = fc.n - i;
			dst = xxl_sorter_reserve(srt, &want);
			REQUIRE_MSG(dst != NULL && want >= 1, "reserve: %s", xxl_sorter_error(srt)->message);
			for (size_t k = 0; k < want; k++, i++)
			{
				gen_fixed(&fc, i, dst + k * fc.rec_size);
				xt_multiset_add(&in, dst + k * fc.rec_size, fc.rec_size);
			}
			REQUIRE(xxl_sorter_commit(srt, want) == XXL_OK);
		}
		REQUIRE_MSG(xxl_sorter_sort(srt) == XXL_OK, "sort: %s", xxl_sorter_error(srt)->message);
		for (;;)
		{
			const void *recs;
			size_t		n = 0,
						max = 1 + xt_below(&r, 2000);

			rc = xxl_sorter_next_many(srt, &recs, max, &n);
			if (rc != 1)
				break;
			CHECK(n >= 1 && n <= max);
			if (n > largest)
				largest = n;
			for (size_t k = 0; k < n; k++)
			{
				const unsigned char *p = (const unsigned char *) recs + k * fc.rec_size;
				uint64_t	idx,
							pidx;

				xt_multiset_add(&out, p, fc.rec_size);
				if (count > 0)
				{
					int			cmp = memcmp(prev, p, fc.key_size);

					if (cmp > 0 || (cmp == 0 && fixed_index(&fc, p, &idx) &&
									fixed_index(&fc, prev, &pidx) && pidx >= idx))
						bad++;
				}
				memcpy(prev, p, fc.rec_size);
				count++;
			}
		}
		CHECK_MSG(rc == 0, "case %zu: next_many returned %d", c, rc);
		CHECK_MSG(count == fc.n, "case %zu: %" PRIu64 " of %" PRIu64 " records", c, count, fc.n);
		CHECK_MSG(bad == 0, "case %zu: %" PRIu64 " order or stability violations", c, bad);
		CHECK_MSG(xt_multiset_equal(&in, &out), "case %zu: not a permutation of the input", c);
		/* batches hand out more than a record at a time, the loser tree one */
		if (fc.key_size <= 16)
			CHECK_MSG(largest > 1, "case %zu: never more than one record at a time", c);
		xxl_sorter_destroy(srt);
		CHECK(xt_spill_files() == 0);
	}
}

/*
 * More runs than a merge of full blocks takes: the final merge reads
 * fractions of blocks instead of adding a pass; records of 24 bytes span
 * the fractions' boundaries; with still more runs, intermediate passes
 * read fractions too and recycle a block after its last fraction.
 */
XT_TEST(merge_reads_partial_blocks)
{
	struct
	{
		size_t		rec,
					key;
		uint64_t	n;
		int			passes;
	}			cases[] = {
		{16, 8, 2500000, 1},
		{24, 9, 1600000, 1},
		{16, 8, 9000000, 2},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		fixed_case	fc = {cases[c].rec, cases[c].key, P_RANDOM, cases[c].n, 4 * MB, 256 * KB, 1,
		1, false, 0, cases[c].passes, 0};
		xxl_sort_stats st;

		if (xt_quick())
		{
			/* (a quarter of the data: one pass fewer where the full input takes two) */
			fc.n /= 4;
			fc.expect_passes = 1;
		}
		memset(&st, 0, sizeof(st));
		run_fixed_case(&fc, &st);
		print_stats("partial blocks", &st);
		if (xt_quick())
			continue;
		/* full 256 kB blocks take about 13 runs at 4 MiB */
		CHECK_GE(st.runs, 20);
		CHECK_EQ(st.merge_passes, cases[c].passes);
		CHECK_MSG(st.read_size < 256 * KB && st.read_size >= 64 * KB,
				  "final merge read %zu-byte frames", st.read_size);
	}
}

/*
 * The final merge on a worker thread or on the caller's, whatever the thread
 * count; 4 MiB is the smallest budget that really runs it asynchronously.
 */
XT_TEST(fixed_async_merge_modes)
{
	for (int mode = 0; mode < 4; mode++)
	{
		fixed_case	fc = {16, 8, P_SMALLRANGE, 1500000, 4 * MB, 0, 2, 0, false, 0, 1, 0};

		fc.threads = mode < 2 ? 1 : 2;
		fc.async_merge = mode % 2;
		fc.pat = mode % 2 ? P_SMALLRANGE : P_RANDOM;
		if (xt_quick())
		{
			fc.block_size = QUICK_BS;
			fc.n = 400000;
		}
		run_fixed_case(&fc, NULL);
		/* with a key longer than 8 bytes the merge compares beyond the prefix */
		fc.rec_size = 40;
		fc.key_size = 24;
		fc.pat = P_PREFIX_TIES;
		fc.n /= 2;
		run_fixed_case(&fc, NULL);
	}
}

/*
 * The final merge on a worker thread (async_merge) for every merge flavour:
 * batched records whose size divides the block size and ones that span
 * blocks, keys of up to 8 and of 9..16 bytes, a long key (one-record loser
 * tree), tiny blocks and dozens of runs.  The worker once took records
 * from a batched merger as if it were a loser tree that had never been
 * built (crash in batch_append, or records lost).  The budget is the
 * smallest that runs the merge asynchronously (4 MiB).
 */
XT_TEST(async_merge_every_record_shape)
{
	static const size_t shapes[][2] = {
		{16, 8}, {13, 9}, {12, 9}, {7, 3}, {15, 3}, {18, 9}, {24, 16}, {40, 24}
	};
	int			baseline = thread_baseline();

	for (size_t sh = 0; sh < sizeof(shapes) / sizeof(shapes[0]); sh++)
	{
		fixed_case	fc = {0};
		xxl_sort_stats st;

		fc.rec_size = shapes[sh][0];
		fc.key_size = shapes[sh][1];
		fc.pat = sh % 2 ? P_SMALLRANGE : P_RANDOM;
		/* some 30 MB: ~16 runs of the 4 MiB budget's half-region loads */
		fc.n = (xt_quick() ? 6 : 30) * (uint64_t) MB / fc.rec_size;
		fc.memory = 4 * MB;
		fc.block_size = sh % 2 ? QUICK_BS : 16 * KB;
		fc.threads = 1 + (int) (sh % 2);
		fc.expect_passes = 1;
		fc.async_merge = 1;
		memset(&st, 0, sizeof(st));
		run_fixed_case(&fc, &st);
		CHECK_MSG(st.runs >= (xt_quick() ? 3 : 10), "%zu/%zu: only %" PRIu64 " runs", fc.rec_size,
				  fc.key_size, st.runs);
		CHECK_LE(xt_threads_at_most(baseline), baseline);
	}
}

/* Three disks: every disk carries a fair share of the traffic. */
XT_TEST(fixed_three_disks)
{
	for (int strat = 0; strat < 2; strat++)
	{
		fixed_case	fc = {16, 8, P_RANDOM, 400000, 2 * MB, 0, 3, 0, strat == 0, 0, 1, 0};
		xxl_sort_stats st;
		uint64_t	total;

		if (xt_quick())
			fc.n = 200000;
		fc.strategy = strat ? XXL_ALLOC_RANDOM_CYCLING : XXL_ALLOC_STRIPING;
		memset(&st, 0, sizeof(st));
		run_fixed_case(&fc, &st);
		total = io_bytes_written(&st.io);
		CHECK_EQ(st.io.ndisks, 3);
		for (int i = 0; i < 3 && i < st.io.ndisks; i++)
		{
			CHECK_MSG(st.io.disk[i].bytes_written * 4 >= total,
					  "disk %d got %" PRIu64 " of %" PRIu64 " bytes written", i,
					  st.io.disk[i].bytes_written, total);
			CHECK(st.io.disk[i].reads > 0);
			CHECK(st.io.disk[i].writes > 0);
		}
	}
}

XT_TEST(fixed_bad_arguments)
{
	xxl_error	err = {0};
	xxl_sort_config cfg = sort_config(0, BS, 1, 16, 8);
	xxl_sorter *s;
	const void *p;
	unsigned char rec[16] = {0};

	cfg.res.memory = xxl_sort_min_memory(BS) - 1;
	s = xxl_sorter_create(&cfg, &err);
	CHECK(s == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	xxl_sorter_destroy(s);

	xxl_error_clear(&err);
	cfg = sort_config(0, BS, 1, 16, 17);	/* key longer than the record */
	s = xxl_sorter_create(&cfg, &err);
	CHECK(s == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	xxl_sorter_destroy(s);

	xxl_error_clear(&err);
	cfg = sort_config(0, 1000, 1, 16, 8);	/* block size not a multiple of 4096 */
	cfg.res.memory = 8 * MB;
	s = xxl_sorter_create(&cfg, &err);
	CHECK(s == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	xxl_sorter_destroy(s);

	/* misuse of a valid sorter: wrong put, next before sort, put after sort */
	xxl_error_clear(&err);
	cfg = sort_config(4 * MB, BS, 1, 16, 8);
	s = xxl_sorter_create(&cfg, &err);
	REQUIRE_MSG(s != NULL, "%s", err.message);
	CHECK_STATUS(xxl_sorter_put_var(s, "a", 1, "b", 1), XXL_EINVAL);
	xxl_sorter_destroy(s);

	s = xxl_sorter_create(&cfg, &err);
	REQUIRE_MSG(s != NULL, "%s", err.message);
	CHECK_STATUS(xxl_sorter_put(s, rec), XXL_OK);
	CHECK(xxl_sorter_next(s, &p) < 0);
	CHECK(xxl_sorter_error(s)->code != XXL_OK);
	xxl_sorter_destroy(s);

	s = xxl_sorter_create(&cfg, &err);
	REQUIRE_MSG(s != NULL, "%s", err.message);
	CHECK_STATUS(xxl_sorter_put(s, rec), XXL_OK);
	CHECK_STATUS(xxl_sorter_sort(s), XXL_OK);
	CHECK(xxl_sorter_put(s, rec) != XXL_OK);
	xxl_sorter_destroy(s);

	/* destroy at every stage of an external sort leaves nothing behind */
	for (int stage = 0; stage < 4; stage++)
	{
		int			rc = 1;

		cfg = sort_config(0, BS, 2, 16, 8);
		s = xxl_sorter_create(&cfg, &err);
		REQUIRE_MSG(s != NULL, "%s", err.message);
		for (uint64_t i = 0; i < 100000 && stage > 0; i++)
		{
			put_be(rec, 8, xt_mix64(i));
			CHECK_STATUS(xxl_sorter_put(s, rec), XXL_OK);
		}
		if (stage >= 2)
			CHECK_STATUS(xxl_sorter_sort(s), XXL_OK);
		for (int i = 0; i < 1000 && stage >= 3 && rc == 1; i++)
			rc = xxl_sorter_next(s, &p);
		CHECK(rc == 1);
		xxl_sorter_destroy(s);
		CHECK_EQ(xt_spill_files(), 0);
	}
}

/* Variable-length records ---------------------------------------------- */

typedef struct var_rec
{
	unsigned char *key;
	unsigned char *payload;
	uint32_t	key_len;
	uint32_t	payload_len;
	uint64_t	idx;
} var_rec;

typedef enum kdist
{
	K_MIXED,					/* prefixy, shared prefixes, random, empty */
	K_PREFIXY,					/* short keys over {0, 'a', 'b', 'c'} */
	K_NAMES,					/* one of 40 long names, then a short tail: a report's keys */
} kdist;

typedef struct var_spec
{
	kdist		keys;
	size_t		n;
	uint32_t	max_key;		/* longest key (huge keys are 'a' runs) */
	uint32_t	max_payload;	/* longest payload */
	int			big_percent;	/* share of huge keys / payloads */
	uint64_t	seed;
} var_spec;

static uint32_t
small_len(xt_rng *r, uint32_t max)
{
	return (uint32_t) xt_below(r, (uint64_t) max + 1);
}

static void
gen_var_key(xt_rng *r, const var_spec *vs, unsigned char *k, uint32_t *len)
{
	static const unsigned char alpha[4] = {0, 'a', 'b', 'c'};
	static const char shared[] = "shared-prefix-20byte";
	uint64_t	c = xt_below(r, 100);
	uint32_t	n;

	if (vs->keys == K_NAMES)
	{
		/*
		 * 43-byte names sharing 9 bytes, some names prefixes of others (cut
		 * at 16, 24 or 37 bytes), then 0-9 random bytes: buckets whose keys
		 * agree far beyond one prefix word
		 */
		uint64_t	name = xt_below(r, 40);
		uint32_t	cut = name % 4 == 0 ? (uint32_t) (16 + 8 * (name % 3) + (name % 5 == 0 ? 13 : 0)) : 43;
		uint32_t	tail = small_len(r, 9);

		memcpy(k, "customer ", 9);
		for (uint32_t i = 9; i < 43; i++)
			k[i] = (unsigned char) ('a' + (name * 7 + i * (name % 3 + 1)) % 26);
		for (uint32_t i = 0; i < tail; i++)
			k[cut + i] = (unsigned char) xt_next(r);
		*len = cut + tail;
		return;
	}
	if (vs->keys == K_PREFIXY)
		c = 10;
	if (c < 5)
		n = 0;
	else if (c < 50)
	{
		n = small_len(r, 10);
		for (uint32_t i = 0; i < n; i++)
			k[i] = alpha[xt_below(r, 4)];
	}
	else if (c < 75)
	{
		uint32_t	tail = small_len(r, 4);

		memcpy(k, shared, 20);
		for (uint32_t i = 0; i < tail; i++)
			k[20 + i] = (unsigned char) "\0xy"[xt_below(r, 3)];
		n = 20 + tail;
	}
	else if (c < 100 - (uint64_t) vs->big_percent)
	{
		n = 1 + small_len(r, 39);
		for (uint32_t i = 0; i < n; i++)
			k[i] = (unsigned char) xt_next(r);
	}
	else
	{
		/* long runs of 'a': prefixes of each other, compared far beyond 8 bytes */
		n = 8 + small_len(r, vs->max_key - 9);
		memset(k, 'a', n);
		if (xt_below(r, 2))
			k[n++] = (unsigned char) "\0ab"[xt_below(r, 3)];
	}
	if (n > vs->max_key)
		n = vs->max_key;
	*len = n;
}

static uint32_t
gen_payload_len(xt_rng *r, const var_spec *vs)
{
	uint64_t	c = xt_below(r, 100);
	uint64_t	n;

	if (c < 10)
		n = 0;
	else if (c < 100 - (uint64_t) vs->big_percent)
		n = 1 + xt_below(r, 100);
	else
		n = xt_below(r, (uint64_t) vs->max_payload + 1);
	return (uint32_t) (n > vs->max_payload ? vs->max_payload : n);
}

static var_rec *
gen_var_records(const var_spec *vs)
{
	var_rec    *recs = calloc(vs->n ? vs->n : 1, sizeof(var_rec));
	unsigned char *kbuf = malloc((size_t) vs->max_key + 2);
	xt_rng		r = {vs->seed};

	for (size_t i = 0; i < vs->n; i++)
	{
		uint32_t	kl,
					pl;

		gen_var_key(&r, vs, kbuf, &kl);
		pl = gen_payload_len(&r, vs);
		recs[i].key = malloc((size_t) kl + pl + 1);
		memcpy(recs[i].key, kbuf, kl);
		recs[i].payload = recs[i].key + kl;
		for (uint32_t b = 0; b < pl; b++)
			recs[i].payload[b] = b < 8 ? (unsigned char) (i >> (8 * b)) : (unsigned char) (xt_mix64(i ^ b) >> 5);
		recs[i].key_len = kl;
		recs[i].payload_len = pl;
		recs[i].idx = i;
	}
	free(kbuf);
	return recs;
}

static void
free_var_records(var_rec *recs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(recs[i].key);
	free(recs);
}

static int
var_cmp(const void *a, const void *b)
{
	const var_rec *x = a,
			   *y = b;
	uint32_t	common = x->key_len < y->key_len ? x->key_len : y->key_len;
	int			c = common ? memcmp(x->key, y->key, common) : 0;

	if (c != 0)
		return c;
	if (x->key_len != y->key_len)
		return x->key_len < y->key_len ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void
dump_bytes(const char *what, const unsigned char *p, uint32_t len)
{
	printf("    %s (%u bytes):", what, len);
	for (uint32_t i = 0; i < len && i < 24; i++)
		printf(" %02x", p[i]);
	printf("%s\n", len > 24 ? " ..." : "");
}

typedef struct var_run_opts
{
	size_t		memory;
	size_t		block_size;
	int			ndisks;
	int			threads;
	xxl_alloc_strategy strategy;
	int			expect_passes;	/* 0: in memory; else at least this many */
	int			async_merge;
	bool		async_runs;
	uint64_t	expected_bytes;
	bool		direct;			/* spill with O_DIRECT where the filesystem takes it */
} var_run_opts;

/* Sort recs through the sorter and compare with the oracle, record by record. */
static void
run_var_case(const char *label, var_rec *recs, size_t n, const var_run_opts *o,
			 xxl_sort_stats *stats_out)
{
	xxl_sort_config cfg = sort_config(o->memory, o->block_size ? o->block_size : BS,
									  o->ndisks ? o->ndisks : 1, 0, 0);
	xxl_error	err = {0};
	xxl_sorter *s;
	var_rec    *oracle;
	size_t		count = 0,
				wrong = 0;
	uint64_t	bytes = 0;
	xxl_sort_stats st;
	int			rc;

	cfg.res.threads = o->threads;
	cfg.async_merge = o->async_merge;
	cfg.async_runs = o->async_runs;
	cfg.expected_bytes = o->expected_bytes;
	cfg.res.disk.strategy = o->strategy;
	cfg.res.disk.try_direct = o->direct;
	s = xxl_sorter_create(&cfg, &err);
	REQUIRE_MSG(s != NULL, "[%s] create: %s", label, err.message);
	for (size_t i = 0; i < n; i++)
	{
		if (xxl_sorter_put_var(s, recs[i].key, recs[i].key_len, recs[i].payload,
							   recs[i].payload_len) != XXL_OK)
		{
			CHECK_MSG(false, "[%s] put %zu: %s", label, i, xxl_sorter_error(s)->message);
			xxl_sorter_destroy(s);
			return;
		}
		bytes += (uint64_t) recs[i].key_len + recs[i].payload_len;
	}
	if (xxl_sorter_sort(s) != XXL_OK)
	{
		CHECK_MSG(false, "[%s] sort: %s", label, xxl_sorter_error(s)->message);
		xxl_sorter_destroy(s);
		return;
	}
	oracle = malloc((n ? n : 1) * sizeof(var_rec));
	memcpy(oracle, recs, n * sizeof(var_rec));
	qsort(oracle, n, sizeof(var_rec), var_cmp);

	for (;;)
	{
		const void *k,
				   *p;
		uint32_t	kl,
					pl;

		rc = xxl_sorter_next_var(s, &k, &kl, &p, &pl);
		if (rc != 1)
			break;
		if (count < n)
		{
			const var_rec *e = &oracle[count];

			if (kl != e->key_len || pl != e->payload_len ||
				(kl && memcmp(k, e->key, kl) != 0) || (pl && memcmp(p, e->payload, pl) != 0))
			{
				if (wrong++ < 3)
				{
					printf("  [%s] output %zu differs from the oracle (input %" PRIu64 ")\n", label,
						   count, e->idx);
					dump_bytes("got key", k, kl);
					dump_bytes("want key", e->key, e->key_len);
					dump_bytes("got payload", p, pl);
					dump_bytes("want payload", e->payload, e->payload_len);
				}
			}
		}
		count++;
	}
	CHECK_MSG(rc == 0, "[%s] next_var returned %d: %s", label, rc, xxl_sorter_error(s)->message);
	CHECK_MSG(count == n, "[%s] %zu records out of %zu", label, count, n);
	CHECK_MSG(wrong == 0, "[%s] %zu records differ from the oracle", label, wrong);
	xxl_sorter_stats(s, &st);
	CHECK_EQ(st.records, n);
	CHECK_EQ(st.bytes, bytes);
	check_common_stats(&st, cfg.res.memory, o->expect_passes);
	if (xt_check_failures)
		print_stats(label, &st);
	if (stats_out)
		*stats_out = st;
	xxl_sorter_destroy(s);
	free(oracle);
}

XT_TEST(var_in_memory_mixed)
{
	var_spec	vs = {K_MIXED, xt_quick() ? 5000 : 40000, 2 * BS, 3 * BS, 1, 1};
	var_rec    *recs = gen_var_records(&vs);
	var_run_opts o = {256 * MB, BS, 1, 0, 0, 0, 0, false, 0, false};

	run_var_case("var in memory", recs, vs.n, &o, NULL);
	free_var_records(recs, vs.n);
}

/*
 * Records about as large as the batch the output gathers sorted records
 * into (256 kB), beside small ones: batches that end early, records
 * handed out from the arena as they do not fit one.
 */
XT_TEST(var_in_memory_records_near_the_gather_batch)
{
	var_spec	vs = {K_MIXED, xt_quick() ? 600 : 3000, 64, 300 * KB, 25, 12};
	var_rec    *recs = gen_var_records(&vs);
	var_run_opts o = {512 * MB, BS, 1, 0, 0, 0, 0, false, 0, false};

	run_var_case("var in memory, records near the gather batch", recs, vs.n, &o, NULL);
	free_var_records(recs, vs.n);
}

/*
 * Inputs past 16MB in a region of 256MB or more: a helper backs the load's
 * pages ahead of its fronts while it fills (sort_touch.c).  The output is
 * still the oracle's, the sort still in memory, the peak within budget.
 */
XT_TEST(in_memory_loads_backed_ahead)
{
	var_spec	vs = {K_MIXED, xt_quick() ? 300000 : 1200000, 24, 40, 0, 13};
	var_rec    *recs = gen_var_records(&vs);
	var_run_opts o = {512 * MB, BS, 1, 2, 0, 0, 0, true, 0, false};
	fixed_case	fc = {.rec_size = 16, .key_size = 8, .pat = P_RANDOM,
	.n = xt_quick() ? 1500000 : 3000000, .memory = 512 * MB, .threads = 2};
	xxl_sort_stats st;

	run_var_case("var in memory, pages backed ahead", recs, vs.n, &o, &st);
	CHECK_EQ(st.runs, 0);
	CHECK(st.memory_peak <= 512 * MB);
	free_var_records(recs, vs.n);
	run_fixed_case(&fc, &st);
	CHECK_EQ(st.runs, 0);
	CHECK(st.memory_peak <= 512 * MB);
}

/* The records of vs sorted in memory (64MB, threads) and externally (striped on 2 disks). */
static void
run_var_memory_and_external(const var_spec *vs, const char *name)
{
	var_rec    *recs = gen_var_records(vs);
	var_run_opts mem = {64 * MB, BS, 1, 0, 0, 0, 0, false, 0, false};
	var_run_opts ext = {0, BS, 2, 0, XXL_ALLOC_STRIPING, 1, 0, false, 0, false};
	char		label[64];

	snprintf(label, sizeof(label), "%s in memory", name);
	run_var_case(label, recs, vs->n, &mem, NULL);
	snprintf(label, sizeof(label), "%s external", name);
	run_var_case(label, recs, vs->n, &ext, NULL);
	free_var_records(recs, vs->n);
}

XT_TEST(var_prefix_keys_in_memory_and_external)
{
	var_spec	vs = {K_PREFIXY, xt_quick() ? 20000 : 100000, 16, 40, 0, 2};

	run_var_memory_and_external(&vs, "prefixy");
}

/*
 * Keys that agree far beyond one prefix word in big buckets (the radix
 * sort refreshes its prefix words many times in one bucket), some names
 * prefixes of others and equal keys in bulk.
 */
XT_TEST(var_long_equal_prefixes)
{
	var_spec	vs = {K_NAMES, xt_quick() ? 40000 : 200000, 64, 40, 0, 4};

	run_var_memory_and_external(&vs, "names");
}

/* Small records, minimum budget: three or more merge passes. */
XT_TEST(var_three_merge_passes)
{
	var_spec	vs = {K_MIXED, xt_quick() ? 30000 : 200000, 40, 100, 0, 3};
	var_rec    *recs = gen_var_records(&vs);
	var_run_opts o = {0, 16 * KB, 1, 0, 0, 3, 0, false, 0, false};
	xxl_sort_stats st;

	if (xt_quick())
		o.block_size = QUICK_BS;
	memset(&st, 0, sizeof(st));
	run_var_case("var 3 passes", recs, vs.n, &o, &st);
	print_stats("var 3 passes", &st);
	free_var_records(recs, vs.n);
}

/*
 * Inputs just past what one final merge takes need one intermediate pass,
 * never two: the pass must leave as many runs as the final merge can take
 * once the pass is over (a run log's page more in memory had made it a
 * run short, and a second pass merged the first's large run again).  About
 * 57 runs against a final fan-in of about 47, at budgets a page apart: the
 * fault showed at one of these eight.
 */
XT_TEST(one_intermediate_pass_where_one_does)
{
	var_spec	vs = {K_MIXED, 600000, 24, 40, 0, 17};
	var_rec    *recs;

	if (xt_quick())
	{
		printf("  (skipped in quick mode: the block logs must outgrow a page)\n");
		return;
	}
	recs = gen_var_records(&vs);
	/* the fan-in's rounding against the budget: budgets a page apart */
	for (int m = 0; m < 8; m++)
	{
		var_run_opts o = {1024 * KB + (size_t) m * 4 * KB, 16 * KB, 1, 0, 0, 2, 0, false, 0, false};
		xxl_sort_stats st;
		char		label[80];

		memset(&st, 0, sizeof(st));
		snprintf(label, sizeof(label), "one pass where one does, %zu bytes", o.memory);
		run_var_case(label, recs, vs.n, &o, &st);
		printf("  %zu bytes: %" PRIu64 " runs, %d merge passes, fan-in %d\n", o.memory, st.runs,
			   st.merge_passes, st.fan_in);
		CHECK_EQ(st.merge_passes, 2);
	}
	free_var_records(recs, vs.n);
}

/* Variable records: thousands of runs at a budget hundreds of times below the input. */
XT_TEST(var_thousands_of_runs_at_small_budget)
{
	var_spec	vs = {K_MIXED, xt_quick() ? 150000 : 400000, 40, 100, 0, 11};
	var_rec    *recs = gen_var_records(&vs);
	var_run_opts o = {xxl_sort_min_memory(4 * KB), 4 * KB, 1, 2, 0, 3, 0, true, 0, false};
	xxl_sort_stats st;

	memset(&st, 0, sizeof(st));
	run_var_case("var minimum budget", recs, vs.n, &o, &st);
	print_stats("var minimum budget", &st);
	CHECK_GE(st.runs, xt_quick() ? 400 : 1000);
	/* (quick: a fraction of the data, for valgrind) */
	CHECK(st.bytes > (xt_quick() ? 40 : 200) * st.memory_limit);
	CHECK(st.memory_peak <= st.memory_limit);
	free_var_records(recs, vs.n);
}

/* Variable records: the final merge reads block fractions instead of a pass. */
XT_TEST(var_merge_reads_partial_blocks)
{
	var_spec	vs = {K_MIXED, xt_quick() ? 100000 : 800000, 40, 100, 0, 7};
	var_rec    *recs = gen_var_records(&vs);
	var_run_opts o = {4 * MB, 256 * KB, 1, 1, 0, 1, 0, false, 0, false};
	xxl_sort_stats st;

	memset(&st, 0, sizeof(st));
	run_var_case("var partial blocks", recs, vs.n, &o, &st);
	print_stats("var partial blocks", &st);
	if (!xt_quick())
	{
		CHECK_GE(st.runs, 20);
		CHECK_EQ(st.merge_passes, 1);
		CHECK(st.read_size < 256 * KB);
	}
	free_var_records(recs, vs.n);
}

XT_TEST(var_async_merge_modes)
{
	/* ~20 MB: several runs of a 4 MiB budget, the smallest that merges asynchronously */
	var_spec	vs = {K_MIXED, xt_quick() ? 80000 : 300000, 40, 300, 0, 12};
	var_rec    *recs = gen_var_records(&vs);

	for (int mode = 0; mode < 4; mode++)
	{
		var_run_opts o = {4 * MB, BS, 2, mode < 2 ? 1 : 2, XXL_ALLOC_STRIPING, 1, mode % 2, false, 0, false};

		if (xt_quick())
			o.block_size = QUICK_BS;
		run_var_case(mode % 2 ? "var async merge" : "var synchronous merge", recs, vs.n, &o, NULL);
	}
	free_var_records(recs, vs.n);
}

/* Keys and payloads of several blocks, external. */
XT_TEST(var_huge_records_external)
{
	var_spec	vs = {K_MIXED, 6000, 2 * BS, 3 * BS, 2, 4};
	var_rec    *recs = gen_var_records(&vs);
	var_run_opts o = {4 * MB, BS, 3, 0, XXL_ALLOC_RANDOM_CYCLING, 1, 0, false, 0, false};
	var_run_opts o1 = {4 * MB, BS, 1, 1, XXL_ALLOC_STRIPING, 1, 0, false, 0, false};
	xxl_sort_stats st;

	memset(&st, 0, sizeof(st));
	run_var_case("var huge external", recs, vs.n, &o, &st);
	print_stats("var huge external", &st);
	run_var_case("var huge external 1 thread", recs, vs.n, &o1, NULL);
	free_var_records(recs, vs.n);
}

/*
 * Asynchronous run formation of variable records: the first load has the
 * whole region and the caller, later ones alternate between the halves on
 * the worker.  Shapes: mixed keys and payloads in many runs, long equal
 * prefixes, one and two threads, and records of several blocks (up to
 * 768 kB, at 4 and 3 MB).  Runs: about twice the synchronous count.
 */
XT_TEST(var_async_runs)
{
	var_spec	mixed = {K_MIXED, xt_quick() ? 60000 : 300000, 40, 300, 0, 21};
	var_spec	names = {K_NAMES, xt_quick() ? 60000 : 200000, 64, 40, 0, 22};
	var_spec	huge = {K_MIXED, 300, 6 * BS, 6 * BS, 30, 23};
	var_rec    *recs = gen_var_records(&mixed);
	xxl_sort_stats sync_st,
				async_st;

	for (int threads = 1; threads <= 2; threads++)
	{
		var_run_opts o = {4 * MB, BS, 2, threads, XXL_ALLOC_STRIPING, 1, threads - 1, false, 0, false};

		if (xt_quick())
			o.block_size = QUICK_BS;
		run_var_case("var sync runs", recs, mixed.n, &o, &sync_st);
		o.async_runs = true;
		run_var_case("var async runs", recs, mixed.n, &o, &async_st);
		/* the first load is whole, the others halves */
		CHECK_GE(async_st.runs, 2 * sync_st.runs - 2);
		CHECK_LE(async_st.runs, 2 * sync_st.runs + 1);
		/* expected beyond twice the region: the first load is a half too */
		{
			xxl_sort_stats exp_st;
			var_run_opts e = o;

			/* beyond twice the region, and few enough halves for one merge */
			e.expected_bytes = 2 * async_st.bytes > 3 * o.memory ? 2 * async_st.bytes : 3 * o.memory;
			run_var_case("var async runs, expected large", recs, mixed.n, &e, &exp_st);
			CHECK_GE(exp_st.runs, async_st.runs);
			CHECK_LE(exp_st.runs, async_st.runs + 2);
			/* ... wrongly: fewer records stay in memory, or spill a run */
			e.expect_passes = 0;
			run_var_case("var async runs, expected large, in memory", recs, 2000, &e, &exp_st);
			CHECK_EQ(exp_st.runs, 0);
			e.expect_passes = 1;
			run_var_case("var async runs, expected large, a half and more", recs,
						 async_st.records / (async_st.runs + 1) * 3 / 2, &e, &exp_st);
			CHECK_GE(exp_st.runs, 1);
		}
		o.memory = 0;			/* the minimum: many runs, more merge passes */
		run_var_case("var async runs, minimum budget", recs, mixed.n, &o, NULL);
		/*
		 * Expected to make more half runs than one merge takes (some 55
		 * frames at 4 MB in 64 kB blocks), where whole loads spare the
		 * intermediate pass a quarter of the data or more, an input keeps
		 * whole loads: the runs of synchronous loads.  Expected fewer, or
		 * so many that a pass merges most of the data either way, it
		 * alternates halves.
		 */
		{
			var_run_opts w = o;
			xxl_sort_stats base_sync;
			bool		whole_seen = false;

			w.memory = 4 * MB;
			w.block_size = BS;
			w.async_runs = false;
			run_var_case("var sync runs, 64 kB blocks", recs, mixed.n, &w, &base_sync);
			w.async_runs = true;
			for (uint64_t k = 1; k <= 64; k *= 2)
			{
				xxl_sort_stats st;

				w.expected_bytes = k * base_sync.bytes;
				run_var_case("var async runs, expected k times", recs, mixed.n, &w, &st);
				if (k == 1 || k == 64)
					CHECK_GE(st.runs, 2 * base_sync.runs - 2);
				if (st.runs <= base_sync.runs + 1)
					whole_seen = true;
			}
			CHECK(whole_seen);
		}
	}
	free_var_records(recs, mixed.n);

	recs = gen_var_records(&names);
	{
		var_run_opts o = {2 * MB, BS, 1, 2, XXL_ALLOC_STRIPING, 1, 0, true, 0, false};

		run_var_case("names, async runs", recs, names.n, &o, NULL);
	}
	free_var_records(recs, names.n);

	recs = gen_var_records(&huge);
	{
		var_run_opts o = {4 * MB, BS, 1, 2, XXL_ALLOC_STRIPING, 1, 1, true, 0, false};

		run_var_case("huge records, async runs", recs, huge.n, &o, NULL);
		o.memory = 3 * MB;
		run_var_case("huge records, async runs, 3 MB", recs, huge.n, &o, NULL);
	}
	free_var_records(recs, huge.n);
}

/*
 * Few runs holding records of several blocks: the final merge must find room
 * for each run's spanning-record scratch however it grows.
 */
/*
 * Merges of direct files prefetch.  A frame that reads part of a block is
 * forecast by its share of the keys between its block's first key and the
 * next block's, not by its block's first key, which every later frame of
 * the block shares: that spent the spare frames on the rest of whichever
 * block a run had just begun, and 38 % of this 25-way merge's reads came
 * unprefetched (the merge waited for each).  And a merge as wide as its
 * budget allows still plans spare frames, a quarter of its runs: with one
 * spare frame, 67 % of the reads here (60 runs, two merges) came
 * unprefetched, and 82 % of a 116-way final merge of 20M rows at 16MB.
 * Counts, not times: the prefetch order is the same on any machine.
 */
/*
 * Direct files only where every frame a merge may read is 128 kB or more:
 * a sixteenth of a block, so from 2 MB blocks on; below 1 MB never.
 */
XT_TEST(direct_files_only_for_large_frames)
{
	CHECK(!xxl_sort_direct_pays(256 * KB));
	CHECK(!xxl_sort_direct_pays(512 * KB));
	CHECK(!xxl_sort_direct_pays(1 * MB));
	CHECK(xxl_sort_direct_pays(2 * MB));
	CHECK(xxl_sort_direct_pays(8 * MB));
}

XT_TEST(var_direct_merge_prefetches)
{
	static const size_t sizes[] = {300000, 700000};

	for (int i = 0; i < 2; i++)
	{
		var_spec	vs = {K_MIXED, sizes[i], 40, 100, 0, 31};
		var_rec    *recs = gen_var_records(&vs);
		var_run_opts o = {3 * MB, 256 * KB, 1, 2, 0, 1, 1, true, 0, true};
		xxl_sort_stats st;

		memset(&st, 0, sizeof(st));
		run_var_case(i == 0 ? "var direct merge" : "var direct merges at the fan-in", recs, vs.n,
					 &o, &st);
		printf("  %" PRIu64 " runs, %d merge passes, fan-in %d, frames of %zu bytes: %" PRIu64
			   " reads, %" PRIu64 " unprefetched\n", st.runs, st.merge_passes, st.fan_in,
			   st.read_size, st.merge_units, st.merge_unprefetched);
		CHECK_GE(st.merge_units, st.runs);
		if (!st.io.direct)
			printf("  (the filesystem refused O_DIRECT: buffered merges plan no prefetch frames)\n");
		else if (i == 0)
		{
			/* one merge, below its fan-in: frames of a quarter block */
			CHECK_EQ(st.merge_passes, 1);
			CHECK(st.read_size < o.block_size);
			CHECK_LE(st.merge_unprefetched * 20, st.merge_units);
		}
		else
		{
			CHECK_GE(st.merge_passes, 2);
			CHECK_LE(st.merge_unprefetched * 2, st.merge_units);
		}
		free_var_records(recs, vs.n);
	}
}

XT_TEST(var_huge_records_few_runs)
{
	var_spec	vs = {K_MIXED, 1500, 2 * BS, 3 * BS, 2, 4};
	var_rec    *recs = gen_var_records(&vs);
	var_run_opts o = {4 * MB, BS, 1, 0, XXL_ALLOC_STRIPING, 1, 0, false, 0, false};

	run_var_case("var huge, 2 runs", recs, vs.n, &o, NULL);
	free_var_records(recs, vs.n);
}

/*
 * xxl_sort_max_block() is the largest block a budget takes: the sorter
 * accepts it and refuses 4 kB more, across the 1 MB step of the slack
 * (at 5.2 MB, (memory - min_memory(0)) / 8 overshot by 32 kB: a checker's
 * sorter of unknown size failed to open).
 */
XT_TEST(max_block_is_accepted)
{
	for (size_t memory = 256 * KB; memory <= 64 * 1024 * KB; memory += memory / 7 + 4 * KB)
	{
		size_t		block = xxl_sort_max_block(memory);
		xxl_sort_config cfg;
		xxl_error	err = {0};
		xxl_sorter *s;

		if (block == 0)
		{
			REQUIRE_MSG(xxl_sort_min_memory(XXL_ALIGN) > memory, "memory %zu: no block", memory);
			continue;
		}
		REQUIRE_MSG(block % XXL_ALIGN == 0, "memory %zu: block %zu", memory, block);
		REQUIRE_MSG(xxl_sort_min_memory(block) <= memory, "memory %zu: block %zu needs %zu",
					memory, block, xxl_sort_min_memory(block));
		REQUIRE_MSG(xxl_sort_min_memory(block + XXL_ALIGN) > memory,
					"memory %zu: block %zu is not the largest", memory, block);
		cfg = sort_config(memory, block, 1, 16, 8);
		s = xxl_sorter_create(&cfg, &err);
		REQUIRE_MSG(s != NULL, "memory %zu, block %zu: %s", memory, block, err.message);
		xxl_sorter_destroy(s);
	}
}

/*
 * xxl_sort_min_memory() is a budget the sorter can actually sort with, for
 * every block size, record shape, thread count and merge mode.
 */
XT_TEST(min_memory_is_enough)
{
	for (size_t bs = XXL_ALIGN; bs <= 256 * KB; bs *= 2)
	{
		for (int mode = 0; mode < 8; mode++)
		{
			bool		var = mode & 1;
			int			threads = mode & 2 ? 2 : 1;
			bool		async = mode & 4;
			xxl_sort_config cfg = sort_config(0, bs, 1, var ? 0 : 16, var ? 0 : 8);
			xxl_error	err = {0};
			xxl_sorter *s;
			/* a few loads' worth: many runs */
			uint64_t	n = cfg.res.memory / 16 * (xt_quick() ? 3 : 5);
			xxl_status	rc = XXL_OK;
			const void *k,
					   *p;
			uint32_t	kl,
						pl;
			uint64_t	count = 0;
			int			nrc;
			xxl_sort_stats st;

			cfg.res.threads = threads;
			cfg.async_merge = async;
			cfg.async_runs = async;		/* its bucket scratch comes out of the load region */
			s = xxl_sorter_create(&cfg, &err);
			REQUIRE_MSG(s != NULL, "block size %zu: create with the minimum budget: %s", bs,
						err.message);
			for (uint64_t i = 0; i < n && rc == XXL_OK; i++)
			{
				unsigned char rec[16];

				put_be(rec, 8, xt_mix64(i));
				memcpy(rec + 8, &i, 8);
				rc = var ? xxl_sorter_put_var(s, rec, 8, rec + 8, 8) : xxl_sorter_put(s, rec);
			}
			if (rc == XXL_OK)
				rc = xxl_sorter_sort(s);
			while (rc == XXL_OK &&
				   (nrc = var ? xxl_sorter_next_var(s, &k, &kl, &p, &pl) : xxl_sorter_next(s, &k)) != 0)
			{
				if (nrc < 0)
					rc = xxl_sorter_error(s)->code;
				else
					count++;
			}
			xxl_sorter_stats(s, &st);
			CHECK_MSG(rc == XXL_OK && count == n,
					  "block size %zu, %s records, %d thread(s), %s merge, budget %zu (the minimum): "
					  "%s after %" PRIu64 " runs: %s", bs, var ? "variable" : "fixed", threads,
					  async ? "async runs and" : "synchronous", cfg.res.memory, xxl_status_name(rc), st.runs,
					  xxl_sorter_error(s)->message);
			CHECK_LE(st.memory_peak, st.memory_limit);
			xxl_sorter_destroy(s);
		}
	}
}

/* The classic prefix cases, many copies each, in memory and external. */
XT_TEST(var_handcrafted_prefix_order)
{
	static const struct
	{
		const char *k;
		uint32_t	len;
	}			keys[] = {
		{"", 0}, {"\0", 1}, {"\0\0", 2}, {"a", 1}, {"ab", 2}, {"ab\0", 3}, {"ab\0\0", 4},
		{"ab\0a", 4}, {"abc", 3}, {"abcdefgh", 8}, {"abcdefgh\0", 9}, {"abcdefgh\0\0", 10},
		{"abcdefghi", 9}, {"abcdefgg\xff", 9}, {"abcdefgh\xff", 9}, {"b", 1}, {"\xff", 1},
		{"\xff\xff\xff\xff\xff\xff\xff\xff", 8}, {"\xff\xff\xff\xff\xff\xff\xff\xff\xff", 9},
		{"\x7f", 1}, {"\x80", 1}
	};
	enum
	{
		NK = sizeof(keys) / sizeof(keys[0])
	};
	size_t		copies = xt_quick() ? 500 : 3000;
	size_t		n = NK * copies;
	var_rec    *recs = calloc(n, sizeof(var_rec));
	xt_rng		r = {11};
	var_run_opts mem = {64 * MB, BS, 1, 0, 0, 0, 0, false, 0, false};
	var_run_opts ext = {0, BS, 1, 0, 0, 1, 0, false, 0, false};

	for (size_t i = 0; i < n; i++)
	{
		size_t		which = xt_below(&r, NK);
		uint32_t	pl = 8;

		recs[i].key = malloc(keys[which].len + pl + 1);
		memcpy(recs[i].key, keys[which].k, keys[which].len);
		recs[i].key_len = keys[which].len;
		recs[i].payload = recs[i].key + keys[which].len;
		memcpy(recs[i].payload, &i, 8);
		recs[i].payload_len = pl;
		recs[i].idx = i;
	}
	run_var_case("handcrafted in memory", recs, n, &mem, NULL);
	run_var_case("handcrafted external", recs, n, &ext, NULL);

	/* spell out the order of the famous three */
	{
		xxl_sort_config cfg = sort_config(4 * MB, BS, 1, 0, 0);
		xxl_error	err = {0};
		xxl_sorter *s = xxl_sorter_create(&cfg, &err);
		const char *want[] = {"", "ab", "ab\0", "abc"};
		uint32_t	want_len[] = {0, 2, 3, 3};
		int			i = 0;
		const void *k,
				   *p;
		uint32_t	kl,
					pl;

		REQUIRE_MSG(s != NULL, "%s", err.message);
		CHECK_STATUS(xxl_sorter_put_var(s, "abc", 3, "3", 1), XXL_OK);
		CHECK_STATUS(xxl_sorter_put_var(s, "ab\0", 3, "2", 1), XXL_OK);
		CHECK_STATUS(xxl_sorter_put_var(s, "ab", 2, "1", 1), XXL_OK);
		CHECK_STATUS(xxl_sorter_put_var(s, NULL, 0, NULL, 0), XXL_OK);
		CHECK_STATUS(xxl_sorter_sort(s), XXL_OK);
		while (xxl_sorter_next_var(s, &k, &kl, &p, &pl) == 1 && i < 4)
		{
			CHECK_EQ(kl, want_len[i]);
			CHECK(kl == want_len[i] && memcmp(k, want[i], kl) == 0);
			CHECK_EQ(pl, i == 0 ? 0 : 1);
			i++;
		}
		CHECK_EQ(i, 4);
		xxl_sorter_destroy(s);
	}
	free_var_records(recs, n);
}

XT_TEST(var_zero_and_one_record)
{
	var_rec		one = {(unsigned char *) "key", (unsigned char *) "payload", 3, 7, 0};
	var_rec		empty = {(unsigned char *) "", (unsigned char *) "", 0, 0, 0};
	var_run_opts mem = {4 * MB, BS, 1, 0, 0, 0, 0, false, 0, false};

	run_var_case("var zero records", NULL, 0, &mem, NULL);
	run_var_case("var one record", &one, 1, &mem, NULL);
	run_var_case("var one empty record", &empty, 1, &mem, NULL);
}

XT_TEST(var_misuse)
{
	xxl_sort_config cfg = sort_config(4 * MB, BS, 1, 0, 0);
	xxl_error	err = {0};
	xxl_sorter *s = xxl_sorter_create(&cfg, &err);
	unsigned char rec[16] = {0};
	const void *p;
	unsigned char *big;

	REQUIRE_MSG(s != NULL, "%s", err.message);
	CHECK_STATUS(xxl_sorter_put(s, rec), XXL_EINVAL);
	xxl_sorter_destroy(s);

	s = xxl_sorter_create(&cfg, &err);
	REQUIRE_MSG(s != NULL, "%s", err.message);
	CHECK_STATUS(xxl_sorter_put_var(s, "a", 1, "b", 1), XXL_OK);
	CHECK_STATUS(xxl_sorter_sort(s), XXL_OK);
	CHECK(xxl_sorter_next(s, &p) < 0);
	xxl_sorter_destroy(s);

	/* a record larger than the whole budget: ENOMEM, not a crash */
	s = xxl_sorter_create(&cfg, &err);
	REQUIRE_MSG(s != NULL, "%s", err.message);
	big = calloc(1, 8 * MB);
	CHECK_STATUS(xxl_sorter_put_var(s, "k", 1, big, 8 * MB), XXL_ENOMEM);
	CHECK_STATUS(xxl_sorter_error(s)->code, XXL_ENOMEM);
	xxl_sorter_destroy(s);
	free(big);
}

/* Failures ------------------------------------------------------------ */

/* Run a fixed sort until the first failure; report where and what. */
typedef struct drive_result
{
	int			phase;			/* 0 no failure, 1 put, 2 sort, 3 next */
	xxl_status	status;
	uint64_t	out;
	uint64_t	unsorted;
} drive_result;

static void
drive_fixed(xxl_sorter *s, const fixed_case *fc, drive_result *res)
{
	unsigned char rec[XXL_ALIGN],
				prev[XXL_ALIGN];
	const void *p;
	int			rc;

	memset(res, 0, sizeof(*res));
	for (uint64_t i = 0; i < fc->n; i++)
	{
		xxl_status	st;

		gen_fixed(fc, i, rec);
		st = xxl_sorter_put(s, rec);
		if (st != XXL_OK)
		{
			res->phase = 1;
			res->status = st;
			/* sticky: the sorter stays failed */
			CHECK(xxl_sorter_put(s, rec) != XXL_OK);
			CHECK(xxl_sorter_sort(s) != XXL_OK);
			CHECK(xxl_sorter_next(s, &p) < 0);
			return;
		}
	}
	rc = xxl_sorter_sort(s);
	if (rc != XXL_OK)
	{
		res->phase = 2;
		res->status = rc;
		CHECK(xxl_sorter_next(s, &p) < 0);
		return;
	}
	while ((rc = xxl_sorter_next(s, &p)) == 1)
	{
		if (res->out > 0 && memcmp(prev, p, fc->key_size) > 0)
			res->unsorted++;
		memcpy(prev, p, fc->rec_size);
		res->out++;
	}
	if (rc < 0)
	{
		res->phase = 3;
		res->status = xxl_sorter_error(s)->code;
		CHECK(xxl_sorter_next(s, &p) < 0);
	}
}

static void
expect_failure(const char *label, const xxl_sort_config *cfg, const fixed_case *fc,
			   xxl_status want, int want_phase)
{
	xxl_error	err = {0};
	xxl_sorter *s = xxl_sorter_create(cfg, &err);
	drive_result res;
	xxl_sort_stats st;

	REQUIRE_MSG(s != NULL, "[%s] create: %s", label, err.message);
	drive_fixed(s, fc, &res);
	CHECK_MSG(res.phase != 0, "[%s] no error surfaced (%" PRIu64 " records out)", label, res.out);
	CHECK_MSG(res.status == want, "[%s] got %s (%s), want %s", label, xxl_status_name(res.status),
			  xxl_sorter_error(s)->message, xxl_status_name(want));
	CHECK_STATUS(xxl_sorter_error(s)->code, want);
	CHECK(xxl_sorter_error(s)->message[0] != '\0');
	if (want_phase)
		CHECK_MSG(res.phase == want_phase, "[%s] failed in phase %d, expected %d", label, res.phase,
				  want_phase);
	CHECK_EQ(res.unsorted, 0);
	xxl_sorter_stats(s, &st);
	CHECK_LE(st.memory_peak, st.memory_limit);
	xxl_sorter_destroy(s);
	CHECK_MSG(xt_spill_files() == 0, "[%s] spill files left", label);
}

XT_TEST(write_failure_in_run_formation)
{
	fixed_case	fc = {16, 8, P_RANDOM, 300000, 0, 0, 2, 0, false, 0, 1, 0};
	xxl_sort_config cfg = sort_config(0, BS, 2, 16, 8);

	cfg.res.disk.fail_write_after = 5 * BS;
	expect_failure("ENOSPC in run formation", &cfg, &fc, XXL_ENOSPC, 0);
	/* direct I/O and one disk */
	cfg = sort_config(0, BS, 1, 16, 8);
	cfg.res.disk.try_direct = true;
	cfg.res.disk.fail_write_after = 1;
	expect_failure("ENOSPC at the first write", &cfg, &fc, XXL_ENOSPC, 0);
}

XT_TEST(write_failure_in_merge_pass)
{
	/* run formation writes ~n*16 bytes; the intermediate passes hit the limit */
	fixed_case	fc = {16, 8, P_RANDOM, 1000000, 0, 0, 1, 0, false, 0, 3, 0};
	xxl_sort_config cfg = sort_config(0, BS, 1, 16, 8);

	if (xt_quick())
	{
		fc.n = 100000;
		cfg.res.disk.block_size = QUICK_BS;
		cfg.res.memory = xxl_sort_min_memory(QUICK_BS);
	}
	cfg.res.disk.fail_write_after = fc.n * 16 + fc.n * 16 / 10;
	expect_failure("ENOSPC in a merge pass", &cfg, &fc, XXL_ENOSPC, 2);
}

XT_TEST(var_write_failure)
{
	/* ~7 MB in ~20 runs with the minimum budget: intermediate passes write */
	var_spec	vs = {K_MIXED, 100000, 40, 100, 0, 9};
	var_rec    *recs;
	xxl_sort_config cfg = sort_config(0, BS, 2, 0, 0);
	xxl_error	err = {0};
	uint64_t	data_bytes = 0;

	recs = gen_var_records(&vs);
	for (size_t i = 0; i < vs.n; i++)
		data_bytes += 8 + recs[i].key_len + recs[i].payload_len;
	for (int variant = 0; variant < 4; variant++)
	{
		xxl_sorter *s;
		xxl_status	rc = XXL_OK;
		int			phase = 0;
		const void *k,
				   *p;
		uint32_t	kl,
					pl;
		int			nrc;

		/*
		 * variant 0: during run formation; 1: in an intermediate merge pass;
		 * 2 and 3: the same with asynchronous runs, 2 a third into the input,
		 * where the worker writes the runs
		 */
		cfg.async_runs = variant >= 2;
		cfg.res.disk.fail_write_after = variant == 0 ? 3 * BS : variant == 2 ? data_bytes / 3
			: data_bytes + data_bytes / 10;
		s = xxl_sorter_create(&cfg, &err);
		REQUIRE_MSG(s != NULL, "%s", err.message);
		for (size_t i = 0; i < vs.n && rc == XXL_OK; i++)
			rc = xxl_sorter_put_var(s, recs[i].key, recs[i].key_len, recs[i].payload,
									recs[i].payload_len);
		if (rc != XXL_OK)
			phase = 1;
		else if ((rc = xxl_sorter_sort(s)) != XXL_OK)
			phase = 2;
		else
		{
			while ((nrc = xxl_sorter_next_var(s, &k, &kl, &p, &pl)) == 1)
				;
			if (nrc < 0)
			{
				phase = 3;
				rc = xxl_sorter_error(s)->code;
			}
		}
		CHECK_MSG(phase != 0, "variant %d: no error surfaced", variant);
		if (variant % 2 == 1)
			CHECK_EQ(phase, 2);
		CHECK_STATUS(rc, XXL_ENOSPC);
		CHECK_STATUS(xxl_sorter_error(s)->code, XXL_ENOSPC);
		xxl_sorter_destroy(s);
		CHECK_EQ(xt_spill_files(), 0);
	}
	free_var_records(recs, vs.n);
}

XT_TEST(spill_limit_surfaces)
{
	fixed_case	fc = {16, 8, P_RANDOM, 300000, 0, 0, 2, 0, false, 0, 1, 0};
	xxl_sort_config cfg = sort_config(0, BS, 2, 16, 8);

	cfg.res.disk.max_spill_bytes = 1 * MB;
	expect_failure("spill limit", &cfg, &fc, XXL_ELIMIT, 1);
}

/*
 * Asynchronous run formation: the worker posts the writes and allocates the
 * blocks, so a full disk or the spill limit hits it; the error must reach
 * the caller (at the next hand-off or in xxl_sorter_sort) with its status,
 * and destroy must still join the worker and remove every file.
 */
XT_TEST(async_runs_failures)
{
	fixed_case	fc = {16, 8, P_RANDOM, 300000, 0, 0, 2, 0, false, 0, 1, 0};
	xxl_sort_config cfg = sort_config(0, BS, 2, 16, 8);
	int			baseline = thread_baseline();

	/* ~20 loads: each error strikes early and must surface while records go in */
	cfg.async_runs = true;
	cfg.res.disk.fail_write_after = 5 * BS;
	expect_failure("async runs: ENOSPC in run formation", &cfg, &fc, XXL_ENOSPC, 1);
	cfg.res.disk.fail_write_after = 1;
	cfg.res.threads = 1;
	expect_failure("async runs: ENOSPC at the first write", &cfg, &fc, XXL_ENOSPC, 1);
	cfg.res.disk.fail_write_after = 0;
	cfg.res.disk.max_spill_bytes = 1 * MB;
	cfg.res.threads = 2;
	expect_failure("async runs: spill limit", &cfg, &fc, XXL_ELIMIT, 1);
	CHECK_LE(xt_threads_at_most(baseline), baseline);
}

/*
 * Destroy at every point of asynchronous run formation, the worker busy or
 * not: after puts[i] records, then at once, after sort, or after reading a
 * little.  Fixed records are 16 bytes, variable ones an 8-byte key and an
 * 8-byte payload (24 bytes with their header).
 */
static void
destroy_anywhere(bool var, const uint64_t *puts, size_t nputs)
{
	int			baseline = thread_baseline();

	for (size_t i = 0; i < nputs; i++)
		for (int then = 0; then < 3; then++)
		{
			xxl_sort_config cfg = sort_config(0, BS, 2, var ? 0 : 16, var ? 0 : 8);
			xxl_error	err = {0};
			xxl_sorter *s;
			unsigned char rec[16];
			const void *k,
					   *p;
			uint32_t	kl,
						pl;

			cfg.async_runs = true;
			cfg.res.threads = 1 + (int) (i % 2);
			s = xxl_sorter_create(&cfg, &err);
			REQUIRE_MSG(s != NULL, "%s", err.message);
			for (uint64_t r = 0; r < puts[i]; r++)
			{
				put_be(rec, 8, xt_mix64(r));
				memcpy(rec + 8, &r, 8);
				CHECK_STATUS(var ? xxl_sorter_put_var(s, rec, 8, rec + 8, 8) : xxl_sorter_put(s, rec),
							 XXL_OK);
			}
			if (then >= 1)
				CHECK_STATUS(xxl_sorter_sort(s), XXL_OK);
			for (int r = 0; then == 2 && r < 1000; r++)
				if ((var ? xxl_sorter_next_var(s, &k, &kl, &p, &pl) : xxl_sorter_next(s, &p)) != 1)
					break;
			xxl_sorter_destroy(s);
			CHECK_MSG(xt_spill_files() == 0, "%s, %" PRIu64 " puts, then %d: spill files left",
					  var ? "var" : "fixed", puts[i], then);
			CHECK_MSG(xt_threads_at_most(baseline) <= baseline,
					  "%s, %" PRIu64 " puts, then %d: %d threads, %d before",
					  var ? "var" : "fixed", puts[i], then, xt_thread_count(), baseline);
		}
}

XT_TEST(async_runs_destroy_anywhere)
{
	/* loads of some 15K records at the minimum budget: a hand-off every 15K puts */
	static const uint64_t puts[] = {0, 1000, 15000, 16000, 31000, 100000, 150000};

	destroy_anywhere(false, puts, sizeof(puts) / sizeof(puts[0]));
}

/* Variable records: the first load is the caller's, the later ones the worker's. */
XT_TEST(var_async_runs_destroy_anywhere)
{
	/* a first load of some 8K records at the minimum budget */
	static const uint64_t puts[] = {0, 1000, 8000, 12000, 30000, 100000};

	destroy_anywhere(true, puts, sizeof(puts) / sizeof(puts[0]));
}

XT_TEST(missing_spill_directory)
{
	fixed_case	fc = {16, 8, P_RANDOM, 200000, 0, 0, 1, 0, false, 0, 1, 0};
	xxl_sort_config cfg = sort_config(0, BS, 1, 16, 8);
	char		missing[4200];
	const char *dirs[1];

	snprintf(missing, sizeof(missing), "%s/no/such/dir", xt_dirs[0]);
	dirs[0] = missing;
	cfg.res.disk.dirs = dirs;
	expect_failure("missing directory", &cfg, &fc, XXL_EOPEN, 1);

	/* an in-memory sort never opens the disks, so it succeeds */
	{
		xxl_error	err = {0};
		xxl_sorter *s;
		drive_result res;

		cfg.res.memory = 64 * MB;
		s = xxl_sorter_create(&cfg, &err);
		REQUIRE_MSG(s != NULL, "%s", err.message);
		drive_fixed(s, &fc, &res);
		CHECK_EQ(res.phase, 0);
		CHECK_EQ(res.out, fc.n);
		xxl_sorter_destroy(s);
	}
}

/* Cancellation --------------------------------------------------------- */

typedef struct cancel_state
{
	int			calls;
	int			limit;			/* say stop from this call on; 0 = never */
} cancel_state;

static bool
cancel_hook(void *arg)
{
	cancel_state *c = arg;

	if (!pthread_equal(pthread_self(), main_thread))
		hook_wrong_thread++;
	c->calls++;
	return c->limit > 0 && c->calls >= c->limit;
}

/*
 * Threads left once OpenMP's pool exists (it outlives every sorter by
 * design): measured after warm-up sorts big enough to start a parallel team.
 */
static int
thread_baseline(void)
{
	static int	baseline = -1;

	if (baseline < 0)
	{
		fixed_case	mem = {16, 8, P_RANDOM, 300000, 64 * MB, 0, 1, 0, false, 0, 0, 0};
		fixed_case	ext = {16, 8, P_RANDOM, 300000, 4 * MB, 0, 1, 0, false, 0, 1, 0};

		run_fixed_case(&mem, NULL);
		run_fixed_case(&ext, NULL);
		baseline = xt_thread_count();
		threads_after_warmup = baseline;
	}
	return baseline;
}

/*
 * Sort with a hook that says stop at call K.  A dry run counts the calls in
 * each phase so every phase (put, sort, next) gets canceled at least once.
 */
static void
cancel_series(const char *label, const fixed_case *fc, xxl_sort_config cfg)
{
	cancel_state cs = {0, 0};
	int			calls_put,
				calls_sort,
				calls_total;
	xxl_error	err = {0};
	xxl_sorter *s;
	drive_result res;
	int			baseline = thread_baseline();
	int			ks[16];
	int			nks = 0;

	hook_wrong_thread = 0;
	cfg.res.cancel = cancel_hook;
	cfg.res.cancel_arg = &cs;

	/* dry run: where do the polls happen? */
	s = xxl_sorter_create(&cfg, &err);
	REQUIRE_MSG(s != NULL, "%s", err.message);
	{
		unsigned char rec[XXL_ALIGN];
		const void *p;
		int			rc;

		for (uint64_t i = 0; i < fc->n; i++)
		{
			gen_fixed(fc, i, rec);
			if (xxl_sorter_put(s, rec) != XXL_OK)
				break;
		}
		calls_put = cs.calls;
		if (xxl_sorter_error(s)->code == XXL_OK)
			xxl_sorter_sort(s);
		if (xxl_sorter_error(s)->code != XXL_OK)
		{
			CHECK_MSG(false, "[%s] dry run failed: %s", label, xxl_sorter_error(s)->message);
			xxl_sorter_destroy(s);
			return;
		}
		calls_sort = cs.calls;
		while ((rc = xxl_sorter_next(s, &p)) == 1)
			;
		CHECK_EQ(rc, 0);
		calls_total = cs.calls;
	}
	xxl_sorter_destroy(s);
	printf("  # %s: cancel hook called %d times in put, %d in sort, %d in next\n", label,
		   calls_put, calls_sort - calls_put, calls_total - calls_sort);
	CHECK_MSG(calls_put >= 2, "[%s] the hook is polled only %d times during input", label, calls_put);
	CHECK_MSG(calls_total - calls_put >= 1, "[%s] the hook is never polled after input", label);

	ks[nks++] = 1;
	if (calls_put >= 2)
		ks[nks++] = calls_put / 2 + 1;
	if (calls_put >= 1)
		ks[nks++] = calls_put;
	if (calls_sort > calls_put)
	{
		ks[nks++] = calls_put + 1;
		ks[nks++] = (calls_put + calls_sort) / 2 + 1;
	}
	if (calls_total > calls_sort)
	{
		ks[nks++] = calls_sort + 1;
		ks[nks++] = calls_total;
	}

	for (int t = 0; t < nks; t++)
	{
		int			k = ks[t];
		int			want_phase = k <= calls_put ? 1 : k <= calls_sort ? 2 : 3;

		cs.calls = 0;
		cs.limit = k;
		s = xxl_sorter_create(&cfg, &err);
		REQUIRE_MSG(s != NULL, "%s", err.message);
		drive_fixed(s, fc, &res);
		CHECK_MSG(res.phase == want_phase && res.status == XXL_ECANCELED,
				  "[%s] stop at call %d: phase %d status %s (%s), want phase %d canceled",
				  label, k, res.phase, xxl_status_name(res.status), xxl_sorter_error(s)->message,
				  want_phase);
		CHECK_EQ(res.unsorted, 0);
		{
			xxl_sort_stats st;

			xxl_sorter_stats(s, &st);
			CHECK_LE(st.memory_peak, st.memory_limit);
		}
		xxl_sorter_destroy(s);
		CHECK_MSG(xt_spill_files() == 0, "[%s] stop at call %d: spill files left", label, k);
		CHECK_MSG(xt_threads_at_most(baseline) <= baseline, "[%s] stop at call %d: %d threads, %d before",
				  label, k, xt_thread_count(), baseline);
	}
	CHECK_MSG(hook_wrong_thread == 0, "[%s] the cancel hook ran %d times on another thread",
			  label, hook_wrong_thread);
}

XT_TEST(cancel_external_fixed)
{
	fixed_case	fc = {16, 8, P_RANDOM, 1000000, 0, 0, 2, 0, false, 0, 3, 0};
	xxl_sort_config cfg = sort_config(0, BS, 2, 16, 8);

	if (xt_quick())
	{
		fc.n = 200000;
		cfg.res.disk.block_size = QUICK_BS;
		cfg.res.memory = xxl_sort_min_memory(QUICK_BS);
	}
	cancel_series("external", &fc, cfg);
	cfg.res.threads = 1;
	cancel_series("external, 1 thread", &fc, cfg);
	cfg.async_runs = true;
	cancel_series("external, async runs, minimum budget", &fc, cfg);
	cfg.async_runs = false;
	/* a budget large enough for the merge to run on its worker */
	cfg.async_merge = true;
	cfg.res.memory = 4 * MB;
	fc.expect_passes = 1;
	if (fc.n < 600000)
		fc.n = 600000;			/* ~10 MB: several runs */
	cancel_series("external, async merge, 1 thread", &fc, cfg);
	cfg.res.threads = 2;
	cancel_series("external, async merge, 2 threads", &fc, cfg);
	cfg.async_runs = true;
	cancel_series("external, async runs and merge", &fc, cfg);
}

XT_TEST(cancel_in_memory_fixed)
{
	fixed_case	fc = {16, 8, P_RANDOM, 400000, 0, 0, 1, 0, false, 0, 0, 0};
	xxl_sort_config cfg = sort_config(64 * MB, BS, 1, 16, 8);

	cancel_series("in memory", &fc, cfg);
}

XT_TEST(cancel_var)
{
	var_spec	vs = {K_MIXED, 200000, 40, 100, 0, 5};
	var_rec    *recs;
	xxl_sort_config cfg = sort_config(0, BS, 1, 0, 0);
	int			baseline = thread_baseline();

	if (xt_quick())
		vs.n = 70000;
	recs = gen_var_records(&vs);
	hook_wrong_thread = 0;
	/* k: the hook call that says stop; the second six with asynchronous runs */
	for (int i = 0; i < 12; i++)
	{
		int			k = 1 + 8 * (i % 6);
		cancel_state cs = {0, k};
		xxl_error	err = {0};
		xxl_sorter *s;
		xxl_status	rc = XXL_OK;
		const void *kp,
				   *pp;
		uint32_t	kl,
					pl;
		int			nrc = 1;

		cfg.res.cancel = cancel_hook;
		cfg.res.cancel_arg = &cs;
		cfg.async_runs = i >= 6;
		s = xxl_sorter_create(&cfg, &err);
		REQUIRE_MSG(s != NULL, "%s", err.message);
		for (size_t r = 0; r < vs.n && rc == XXL_OK; r++)
			rc = xxl_sorter_put_var(s, recs[r].key, recs[r].key_len, recs[r].payload,
									recs[r].payload_len);
		if (rc == XXL_OK)
			rc = xxl_sorter_sort(s);
		if (rc == XXL_OK)
		{
			while ((nrc = xxl_sorter_next_var(s, &kp, &kl, &pp, &pl)) == 1)
				;
			if (nrc < 0)
				rc = xxl_sorter_error(s)->code;
		}
		if (cs.calls >= k)
		{
			CHECK_MSG(rc == XXL_ECANCELED, "stop at call %d: got %s", k, xxl_status_name(rc));
			CHECK_STATUS(xxl_sorter_error(s)->code, XXL_ECANCELED);
		}
		else
			CHECK_STATUS(rc, XXL_OK);	/* the sort ended before call k */
		xxl_sorter_destroy(s);
		CHECK_EQ(xt_spill_files(), 0);
		CHECK_LE(xt_threads_at_most(baseline), baseline);
	}
	CHECK_EQ(hook_wrong_thread, 0);
	free_var_records(recs, vs.n);
}

/* Process memory --------------------------------------------------------- */

static size_t
heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/*
 * Sort ~200 MB with a 16 MiB budget and watch the process: the heap in use
 * (sampled) and the peak RSS must stay within the budget plus 8 MiB slack.
 */
static void
measure_memory(const char *label, bool var, uint64_t data_bytes)
{
	const size_t budget = 16 * MB;
	const size_t slack = 8 * MB;
	size_t		rec_size = var ? 0 : 16;
	xxl_sort_config cfg = sort_config(budget, 1 * MB, 2, rec_size, var ? 0 : 8);
	xxl_error	err = {0};
	xxl_sorter *s;
	size_t		heap0,
				heap_peak,
				h;
	long		rss0,
				hwm;
	bool		hwm_ok;
	uint64_t	n = var ? data_bytes / 100 : data_bytes / 16;
	uint64_t	count = 0,
				unsorted = 0;
	xt_multiset in = {0},
				out = {0};
	unsigned char prev[64];
	size_t		prev_len = 0;
	xxl_sort_stats st;
	int			rc;

	malloc_trim(0);
	heap0 = heap_peak = heap_in_use();
	hwm_ok = xt_reset_hwm();
	rss0 = xt_proc_status_kb("VmRSS");

	s = xxl_sorter_create(&cfg, &err);
	REQUIRE_MSG(s != NULL, "%s", err.message);
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	r = xt_mix64(i + 17);
		unsigned char rec[100];
		xxl_status	ps;

		put_be(rec, 8, r);
		memcpy(rec + 8, &i, 8);
		if (var)
		{
			/* 8..24-byte keys, 100 bytes in all */
			uint32_t	kl = 8 + (uint32_t) (r % 17);

			memset(rec + 16, (int) (i & 0xff), sizeof(rec) - 16);
			ps = xxl_sorter_put_var(s, rec, kl, rec + kl, (uint32_t) (100 - kl));
			xt_multiset_add(&in, rec, 100);
			xt_multiset_add(&in, &kl, 4);
		}
		else
		{
			ps = xxl_sorter_put(s, rec);
			xt_multiset_add(&in, rec, 16);
		}
		if (ps != XXL_OK)
		{
			CHECK_MSG(false, "[%s] put: %s", label, xxl_sorter_error(s)->message);
			xxl_sorter_destroy(s);
			return;
		}
		if ((i & 0xffff) == 0 && (h = heap_in_use()) > heap_peak)
			heap_peak = h;
	}
	if ((h = heap_in_use()) > heap_peak)
		heap_peak = h;
	rc = xxl_sorter_sort(s);
	if (rc != XXL_OK)
	{
		CHECK_MSG(false, "[%s] sort: %s", label, xxl_sorter_error(s)->message);
		xxl_sorter_destroy(s);
		return;
	}
	for (;;)
	{
		const void *k,
				   *p;
		uint32_t	kl = 8,		/* fixed: the key */
					pl;
		unsigned char whole[100];

		if (var)
		{
			rc = xxl_sorter_next_var(s, &k, &kl, &p, &pl);
			if (rc != 1)
				break;
			if (kl + pl == 100)
			{
				memcpy(whole, k, kl);
				memcpy(whole + kl, p, pl);
			}
			xt_multiset_add(&out, whole, 100);
			xt_multiset_add(&out, &kl, 4);
		}
		else
		{
			rc = xxl_sorter_next(s, &k);
			if (rc != 1)
				break;
			xt_multiset_add(&out, k, 16);
		}
		if (count > 0)
		{
			uint32_t	common = kl < prev_len ? kl : (uint32_t) prev_len;
			int			c = memcmp(prev, k, common);

			if (c > 0 || (c == 0 && prev_len > kl))
				unsorted++;
		}
		memcpy(prev, k, kl);
		prev_len = kl;
		count++;
		if ((count & 0xffff) == 0 && (h = heap_in_use()) > heap_peak)
			heap_peak = h;
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(count, n);
	CHECK_EQ(unsorted, 0);
	CHECK(xt_multiset_equal(&in, &out));
	xxl_sorter_stats(s, &st);
	print_stats(label, &st);
	CHECK_LE(st.memory_peak, st.memory_limit);
	CHECK_GE(st.runs, 2);
	xxl_sorter_destroy(s);
	hwm = xt_proc_status_kb("VmHWM");

	printf("  # %s: heap growth %.1f MiB (sampled), peak RSS growth %.1f MiB%s, budget %zu MiB\n",
		   label, (heap_peak - heap0) / (double) MB, hwm_ok ? (hwm - rss0) / 1024.0 : -1.0,
		   hwm_ok ? "" : " (cannot reset VmHWM)", budget / MB);
	CHECK_MSG(heap_peak - heap0 <= budget + slack, "[%s] heap grew by %zu bytes", label,
			  heap_peak - heap0);
	if (hwm_ok && rss0 > 0 && hwm > 0)
		CHECK_MSG((size_t) (hwm - rss0) * 1024 <= budget + slack, "[%s] RSS grew by %ld kB", label,
				  hwm - rss0);
}

/*
 * The measurement runs in a fresh process (this program re-executed): the
 * allocator's state left by earlier tests (raised mmap thresholds, free
 * lists) would otherwise hide or invent growth.
 */
static void
measure_in_child(const char *kind)
{
	pid_t		pid;
	int			status = 0;

	fflush(stdout);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
	{
		execl("/proc/self/exe", "test_sort", "--memory-child", kind, xt_dirs[0], xt_dirs[1],
			  xt_dirs[2], (char *) NULL);
		_exit(127);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			  "memory measurement (%s) failed: status %d", kind, status);
}

XT_TEST(process_memory_within_budget)
{
	if (xt_quick())
	{
		/* valgrind's allocator and RSS say nothing about ours */
		printf("  # quick mode: memory measurement skipped\n");
		return;
	}
	measure_in_child("fixed");
	measure_in_child("var");
}

/* Re-executed as: test_sort --memory-child fixed|var dir0 dir1 dir2 */
static int
memory_child(int argc, char **argv)
{
	bool		var;

	if (argc < 6)
		return 2;
	var = strcmp(argv[2], "var") == 0;
	for (int i = 0; i < XT_NDIRS; i++)
		xt_dirs[i] = argv[3 + i];
	xt_current = var ? "process_memory_within_budget(var)" : "process_memory_within_budget(fixed)";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (var)
		measure_memory("var 100 MB / 16 MiB", true, 100 * (uint64_t) MB);
	else
		measure_memory("fixed 200 MB / 16 MiB", false, 200 * (uint64_t) MB);
	return xt_check_failures ? 1 : 0;
}

int
main(int argc, char **argv)
{
	main_thread = pthread_self();
	if (argc > 1 && strcmp(argv[1], "--memory-child") == 0)
		return memory_child(argc, argv);
	return xt_main(argc, argv);
}
