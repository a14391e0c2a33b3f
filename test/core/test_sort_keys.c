/*
 * test_sort_keys.c — unit tests of the sorter's integer paths for fixed
 * records with short keys: radix digits over keys of up to 16 bytes (two
 * words, record.h), the batched merge with (hi, lo) keys, and records that
 * span block boundaries (record sizes that do not divide the block size).
 *
 * Every sort is compared record by record with an oracle: qsort by key
 * (memcmp), ties by input index, so order, permutation and stability are
 * checked at once.  Budgets far below the input force many runs and several
 * merge passes; the budget peak, spill files and threads are checked after
 * each sort.  A guard page after the records catches reads past the end of
 * a short record (a 16-byte key load from a 9-byte record).
 *
 * The same oracle checks asynchronous run formation (async_runs), where a
 * worker thread sorts a load's buckets and writes its blocks while the
 * caller fills the next load, on patterns whose buckets stay with the
 * worker and ones whose buckets are too large for it (the caller sorts
 * those first).
 */
#include "xxl_test.h"

#include <sys/mman.h>

#include "core/radix.h"
#include "core/xxl_sort.h"

#define KB 1024
#define MB (1024 * 1024)

typedef enum key_pattern
{
	KP_RANDOM_DUPS,				/* random keys from n/4 values */
	KP_NULL_FLAG,				/* first byte 0 or 1 (a SQL null flag), then random dups */
	KP_HI_TIES,					/* 3 distinct first words, the rest from few values */
	KP_LO_ONLY,					/* first 8 bytes equal: the word ending the key decides */
	KP_FEW_BYTES,				/* every byte from {00, 7f, 80, ff} */
	KP_SORTED,					/* a counter in the key's last 8 bytes */
	KP_REVERSE,
	KP_SMALL_INTS,				/* a bigint's key far below its range: few bits of its
								 * first varying byte vary (a bitwise distribution) */
	KP_LAST_BITS,				/* the first word varies in its last byte's low bits */
	KP_COUNT
} key_pattern;

static const char *const kp_names[] = {
	"random-dups", "null-flag", "hi-ties", "lo-only", "few-bytes", "sorted", "reverse",
	"small-ints", "last-bits"
};

typedef struct keys_case
{
	size_t		rec_size;
	size_t		key_size;
	key_pattern pat;
	size_t		n;
	size_t		memory;			/* 0: the minimum for the block size */
	size_t		block_size;
	int			threads;
	int			ndisks;
	int			min_passes;		/* 0: must stay in memory; else at least this many */
	bool		async_merge;
	bool		async_runs;
} keys_case;

/* Key i of the case, written to out (key_size bytes). */
static void
fill_key(const keys_case *kc, size_t i, unsigned char *out)
{
	size_t		K = kc->key_size;
	xt_rng		r = {i * 0x9E3779B1u + kc->pat * 1000003u + K * 31 + kc->rec_size};
	uint64_t	v;
	unsigned char key[32];		/* patterns may write a whole word */

	memset(key, 0, sizeof(key));
	switch (kc->pat)
	{
		case KP_RANDOM_DUPS:
		case KP_NULL_FLAG:
			v = xt_below(&r, kc->n / 4 + 1);
			for (size_t b = 0; b < K; b += 8)
			{
				uint64_t	w = xt_mix64(v * 7 + b);

				for (size_t j = 0; j < 8 && b + j < K; j++)
					key[b + j] = (unsigned char) (w >> (56 - 8 * j));
			}
			if (kc->pat == KP_NULL_FLAG)
				key[0] = xt_below(&r, 10) == 0 ? 0 : 1;
			break;
		case KP_HI_TIES:
			v = xt_mix64(xt_below(&r, 3) + 1);
			xt_put_be64(key, v);
			for (size_t b = 8; b < K; b++)
				key[b] = (unsigned char) xt_below(&r, 4);
			break;
		case KP_LO_ONLY:
			memset(key, 0xa5, 8);
			v = xt_below(&r, kc->n / 8 + 1);
			for (size_t b = 8; b < K; b++)
				key[b] = (unsigned char) (xt_mix64(v + b) >> 11);
			break;
		case KP_FEW_BYTES:
			{
				static const unsigned char vals[4] = {0x00, 0x7f, 0x80, 0xff};

				for (size_t b = 0; b < K; b++)
					key[b] = vals[xt_below(&r, b < 6 ? 2 : 4)];
			}
			break;
		case KP_SORTED:
		case KP_REVERSE:
			{
				uint64_t	c = kc->pat == KP_SORTED ? i : kc->n - 1 - i;
				unsigned char be[8];

				xt_put_be64(be, c);
				if (K >= 8)
					memcpy(key + K - 8, be, 8);
				else
					memcpy(key, be + 8 - K, K);
			}
			break;
		case KP_SMALL_INTS:
		case KP_LAST_BITS:
			/* as a signed bigint's key: sign bit flipped, then the value */
			v = kc->pat == KP_SMALL_INTS ? xt_below(&r, 3 * (uint64_t) kc->n + 1)
				: 0x5a00 + xt_below(&r, 3);
			xt_put_be64(key, v ^ (UINT64_C(1) << 63));
			for (size_t b = 8; b < K; b++)
				key[b] = (unsigned char) xt_below(&r, 3);
			break;
		default:
			break;
	}
	memcpy(out, key, K);
}

/* Record i: its key, then the input index (little-endian), then filler. */
static void
fill_record(const keys_case *kc, size_t i, unsigned char *rec)
{
	size_t		K = kc->key_size;

	fill_key(kc, i, rec);
	for (size_t b = K; b < kc->rec_size; b++)
		rec[b] = b - K < 8 ? (unsigned char) (i >> (8 * (b - K))) : (unsigned char) (i * 13 + b);
}

static const unsigned char *oracle_records;
static size_t oracle_rec_size,
			oracle_key_size;

static int
oracle_cmp(const void *a, const void *b)
{
	size_t		x = *(const size_t *) a,
				y = *(const size_t *) b;
	int			c = memcmp(oracle_records + x * oracle_rec_size,
						   oracle_records + y * oracle_rec_size, oracle_key_size);

	if (c != 0)
		return c;
	return (x > y) - (x < y);
}

static void
label_case(const keys_case *kc, char *buf, size_t len)
{
	snprintf(buf, len, "%zu/%zu %s n=%zu mem=%zuK bs=%zuK threads=%d%s%s", kc->rec_size,
			 kc->key_size, kp_names[kc->pat], kc->n,
			 (kc->memory ? kc->memory : xxl_sort_min_memory(kc->block_size)) / KB,
			 kc->block_size / KB, kc->threads, kc->async_merge ? " async merge" : "",
			 kc->async_runs ? " async runs" : "");
}

static int	thread_baseline = -1;

/* Sort one case through the sorter and compare it with the oracle. */
static void
run_keys_case(const keys_case *kc)
{
	size_t		R = kc->rec_size;
	xxl_sort_config cfg;
	xxl_error	err = {0};
	xxl_sorter *s;
	unsigned char *recs = malloc(kc->n * R + 1);
	size_t	   *order = malloc((kc->n + 1) * sizeof(size_t));
	size_t		count = 0,
				wrong = 0;
	xxl_sort_stats st;
	char		label[200];
	const void *p;
	int			rc;

	label_case(kc, label, sizeof(label));
	REQUIRE(recs != NULL && order != NULL);
	for (size_t i = 0; i < kc->n; i++)
	{
		fill_record(kc, i, recs + i * R);
		order[i] = i;
	}
	oracle_records = recs;
	oracle_rec_size = R;
	oracle_key_size = kc->key_size;
	qsort(order, kc->n, sizeof(size_t), oracle_cmp);

	memset(&cfg, 0, sizeof(cfg));
	cfg.res.disk.block_size = kc->block_size;
	cfg.res.memory = kc->memory ? kc->memory : xxl_sort_min_memory(kc->block_size);
	cfg.record_size = R;
	cfg.key_size = kc->key_size;
	cfg.res.threads = kc->threads;
	cfg.async_merge = kc->async_merge;
	cfg.async_runs = kc->async_runs;
	cfg.res.disk.dirs = xt_dirs;
	cfg.res.disk.ndisks = kc->ndisks ? kc->ndisks : 1;
	cfg.res.disk.file_prefix = "test_sort_keys";
	cfg.res.disk.try_direct = false;
	cfg.res.disk.strategy = XXL_ALLOC_RANDOM_CYCLING;
	cfg.res.disk.seed = 7;
	s = xxl_sorter_create(&cfg, &err);
	if (s == NULL)
	{
		CHECK_MSG(false, "[%s] create: %s", label, err.message);
		goto out;
	}
	for (size_t i = 0; i < kc->n; i++)
		if (xxl_sorter_put(s, recs + i * R) != XXL_OK)
		{
			CHECK_MSG(false, "[%s] put %zu: %s", label, i, xxl_sorter_error(s)->message);
			goto out_destroy;
		}
	/* a load or more was handed over: the run formation thread exists */
	if (kc->async_runs && thread_baseline > 0 && kc->n * R > 2 * cfg.res.memory)
		CHECK_MSG(xt_thread_count() > thread_baseline, "[%s] no run formation thread", label);
	if (xxl_sorter_sort(s) != XXL_OK)
	{
		CHECK_MSG(false, "[%s] sort: %s", label, xxl_sorter_error(s)->message);
		goto out_destroy;
	}
	while ((rc = xxl_sorter_next(s, &p)) == 1)
	{
		if (count < kc->n && memcmp(p, recs + order[count] * R, R) != 0 && wrong++ < 3)
		{
			size_t		got = 0;

			for (size_t b = 0; b < 8 && kc->key_size + b < R; b++)
				got |= (size_t) ((const unsigned char *) p)[kc->key_size + b] << (8 * b);
			printf("  [%s] output %zu is not input %zu (payload says %zu)\n", label, count,
				   order[count], got);
		}
		count++;
	}
	CHECK_MSG(rc == 0, "[%s] next returned %d: %s", label, rc, xxl_sorter_error(s)->message);
	CHECK_MSG(count == kc->n, "[%s] %zu records out of %zu", label, count, kc->n);
	CHECK_MSG(wrong == 0, "[%s] %zu records differ from the oracle", label, wrong);
	xxl_sorter_stats(s, &st);
	CHECK_LE(st.memory_peak, st.memory_limit);
	if (kc->min_passes == 0)
		CHECK_MSG(st.runs == 0, "[%s] %" PRIu64 " runs for an in-memory case", label, st.runs);
	else
	{
		CHECK_MSG(st.runs >= 2, "[%s] only %" PRIu64 " runs", label, st.runs);
		CHECK_MSG(st.merge_passes >= kc->min_passes, "[%s] %d merge passes, want >= %d", label,
				  st.merge_passes, kc->min_passes);
	}
	if (xt_check_failures)
		printf("  # [%s] %" PRIu64 " runs, %d passes, fan-in %d, peak %" PRIu64 "/%" PRIu64 "\n",
			   label, st.runs, st.merge_passes, st.fan_in, st.memory_peak, st.memory_limit);
out_destroy:
	xxl_sorter_destroy(s);
	CHECK_MSG(xt_spill_files() == 0, "[%s] spill files left after destroy", label);
	if (thread_baseline > 0)
		CHECK_MSG(xt_threads_at_most(thread_baseline) <= thread_baseline,
				  "[%s] %d threads after destroy, %d before",
				  label, xt_thread_count(), thread_baseline);
out:
	free(recs);
	free(order);
}

static size_t
scaled(size_t n)
{
	return xt_quick() ? n / 8 : n;
}

/* Radix sort alone (in memory), every key size 9..16, payloads of 0..8 bytes. */
XT_TEST(wide_keys_in_memory)
{
	static const size_t payloads[] = {0, 1, 3, 8};

	for (size_t K = 9; K <= 16; K++)
		for (size_t pl = 0; pl < 4; pl++)
			for (int pat = 0; pat < KP_COUNT; pat++)
			{
				keys_case	kc = {K + payloads[pl], K, (key_pattern) pat, scaled(20000), 64 * MB,
					64 * KB, 0, 1, 0, false, false};

				run_keys_case(&kc);
			}
	/*
	 * large enough for the parallel top level and out-of-cache digits (not
	 * scaled: the thread baseline below counts the threads it starts)
	 */
	for (int pat = 0; pat < KP_COUNT; pat++)
	{
		keys_case	kc = {18, 9, (key_pattern) pat, 400000, 64 * MB, 64 * KB, 2, 1, 0,
			false, false};

		run_keys_case(&kc);
		kc.rec_size = 20;
		kc.key_size = 16;
		kc.threads = 1;
		run_keys_case(&kc);
	}
	thread_baseline = xt_thread_count();
}

/*
 * External, minimum budget, small blocks: dozens of runs, several merge
 * passes, and record sizes that do not divide the block size, so records
 * span blocks in every run.
 */
XT_TEST(wide_keys_external_spanning)
{
	static const size_t shapes[][2] = {
		{18, 9}, {10, 10}, {13, 9}, {12, 12}, {20, 16}, {17, 16}, {24, 11}, {100, 14}, {16, 16}
	};

	for (size_t sh = 0; sh < sizeof(shapes) / sizeof(shapes[0]); sh++)
		for (int pat = 0; pat < KP_COUNT; pat++)
		{
			size_t		R = shapes[sh][0];
			keys_case	kc = {R, shapes[sh][1], (key_pattern) pat, 0, 0, 16 * KB,
				1 + (int) ((sh + pat) % 2), 1 + (int) (pat % 2), 2, false, false};

			/* about 2 MB: some 20 runs at the minimum budget */
			kc.n = scaled(2 * MB / R);
			if (xt_quick())
				kc.block_size = 4 * KB;
			run_keys_case(&kc);
		}
}

/*
 * Keys of up to 8 bytes in records that do not divide the block size: once
 * merged one record at a time, now in batches with spanning records.
 */
XT_TEST(short_keys_external_spanning)
{
	static const size_t shapes[][2] = {
		{7, 3}, {13, 8}, {15, 3}, {24, 8}, {12, 4}, {9, 8}, {20, 5}, {5, 5}
	};

	for (size_t sh = 0; sh < sizeof(shapes) / sizeof(shapes[0]); sh++)
		for (int pat = 0; pat < KP_COUNT; pat++)
		{
			size_t		R = shapes[sh][0];
			keys_case	kc = {R, shapes[sh][1], (key_pattern) pat, 0, 0, 16 * KB,
				1 + (int) (pat % 2), 1, 2, false, false};

			if (pat == KP_LO_ONLY)
				continue;		/* needs keys of more than 8 bytes */
			kc.n = scaled(2 * MB / R);
			if (xt_quick())
				kc.block_size = 4 * KB;
			run_keys_case(&kc);
		}
}

/*
 * A budget large enough for output batches of thousands of records: the
 * batches are merged by two threads, split at a splitter key.
 */
XT_TEST(wide_keys_parallel_batches)
{
	static const size_t shapes[][2] = {{18, 9}, {16, 8}, {26, 16}, {13, 10}};

	for (size_t sh = 0; sh < 4; sh++)
		for (int pat = 0; pat < 2; pat++)
		{
			keys_case	kc = {shapes[sh][0], shapes[sh][1], (key_pattern) (sh % 2 + pat), 0, 8 * MB,
				64 * KB, 2, 2, 1, false, false};

			kc.n = scaled(16 * MB / kc.rec_size);
			/* (quick: a fraction of the records, and of the budget, so that they still make runs) */
			if (xt_quick())
				kc.memory = 1 * MB;
			run_keys_case(&kc);
		}
}

/*
 * Asynchronous run formation against the oracle: record shapes with and
 * without their own radix instance, keys for the integer and the byte-wise
 * radix, one and two threads; random keys (every bucket goes to the worker)
 * and few distinct bytes or equal keys (buckets too large for the worker's
 * scratch, or one bucket holding the whole load).
 */
XT_TEST(async_runs_against_oracle)
{
	static const size_t shapes[][2] = {
		{16, 8}, {18, 9}, {13, 9}, {24, 16}, {12, 4}, {40, 24}, {7, 3}
	};

	for (size_t sh = 0; sh < sizeof(shapes) / sizeof(shapes[0]); sh++)
		for (int pat = 0; pat < KP_COUNT; pat++)
		{
			size_t		R = shapes[sh][0];
			keys_case	kc = {R, shapes[sh][1], (key_pattern) pat, 0, 2 * MB, 64 * KB,
				1 + (int) ((sh + pat) % 2), 1 + (int) (sh % 2), 1, false, true};

			if (pat == KP_LO_ONLY && kc.key_size <= 8)
				continue;
			/* ~5 MB: half a dozen loads of the 2 MiB budget's half-region */
			kc.n = (xt_quick() ? 3 : 5) * MB / R;
			run_keys_case(&kc);
		}
	/* many runs and intermediate passes: the minimum budget, small blocks */
	for (int pat = 0; pat < 3; pat++)
	{
		keys_case	kc = {18, 9, (key_pattern) pat, scaled(2 * MB / 18), 0, 16 * KB, 2, 1, 2,
			false, true};

		if (xt_quick())
			kc.block_size = 4 * KB;
		run_keys_case(&kc);
	}
}

/*
 * Short records at the very end of a mapping followed by a page that must
 * not be touched: a key load of 8 or 16 bytes from a record shorter than
 * that would fault.  Both the input and the scratch buffer end at the guard.
 */
XT_TEST(radix_short_records_at_guard_page)
{
	static const size_t shapes[][2] = {
		{9, 9}, {10, 9}, {12, 12}, {11, 10}, {15, 15}, {8, 8}, {13, 13}, {16, 16}, {7, 7}, {5, 3}
	};
	long		page = sysconf(_SC_PAGESIZE);

	for (size_t sh = 0; sh < sizeof(shapes) / sizeof(shapes[0]); sh++)
		for (int threads = 1; threads <= 2; threads++)
			for (int pat = 0; pat < KP_COUNT; pat++)
			{
				size_t		R = shapes[sh][0];
				size_t		n = pat == KP_RANDOM_DUPS ? 100000 : 3000;
				keys_case	kc = {R, shapes[sh][1], (key_pattern) pat, n, 0, 0, threads, 1, 0, false, false};
				size_t		bytes = n * R;
				size_t		map = XXL_ROUND_UP(bytes, (size_t) page) + (size_t) page;
				unsigned char *a = mmap(NULL, map, PROT_READ | PROT_WRITE,
										MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				unsigned char *b = mmap(NULL, map, PROT_READ | PROT_WRITE,
										MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				unsigned char *recs,
						   *scratch,
						   *want;
				size_t	   *order;
				size_t		wrong = 0;

				REQUIRE(a != MAP_FAILED && b != MAP_FAILED);
				REQUIRE(mprotect(a + map - page, page, PROT_NONE) == 0);
				REQUIRE(mprotect(b + map - page, page, PROT_NONE) == 0);
				recs = a + (map - page - bytes);
				scratch = b + (map - page - bytes);
				want = malloc(bytes);
				order = malloc(n * sizeof(size_t));
				for (size_t i = 0; i < n; i++)
				{
					fill_record(&kc, i, want + i * R);
					order[i] = i;
				}
				memcpy(recs, want, bytes);
				oracle_records = want;
				oracle_rec_size = R;
				oracle_key_size = kc.key_size;
				qsort(order, n, sizeof(size_t), oracle_cmp);
				for (int into = 0; into < 2; into++)
				{
					const unsigned char *sorted = into ? scratch : recs;

					memcpy(recs, want, bytes);
					xxl_radix_sort_fixed((char *) recs, (char *) scratch, n, R, kc.key_size, threads,
										 into != 0);
					for (size_t i = 0; i < n; i++)
						if (memcmp(sorted + i * R, want + order[i] * R, R) != 0)
							wrong++;
				}
				CHECK_MSG(wrong == 0, "%zu/%zu %s threads=%d: %zu records out of place", R,
						  kc.key_size, kp_names[pat], threads, wrong);
				free(want);
				free(order);
				munmap(a, map);
				munmap(b, map);
			}
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
