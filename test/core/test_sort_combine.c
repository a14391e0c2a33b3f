/*
 * test_sort_combine.c — the aggregating sort (xxl_sort_config.combine):
 * records with repeated keys, summed, against a naive sum per key, in
 * memory and at the smallest budget with enough runs for three merge
 * passes, with every key of the output once, in order.
 */
#include "xxl_test.h"

#include "core/xxl_sort.h"

#define KB 1024

/* 24-byte records: a 16-byte key (two big-endian words), an int64 to sum. */
#define REC 24
#define KEY 16

static void
sum_into(void *acc, const void *rec, void *arg)
{
	int64_t		a,
				b;

	memcpy(&a, (char *) acc + KEY, 8);
	memcpy(&b, (const char *) rec + KEY, 8);
	a += b;
	memcpy((char *) acc + KEY, &a, 8);
	(*(uint64_t *) arg)++;
}

/* Record r of key k (as the words k / 1000, k % 1000) and value v. */
static void
make_rec(unsigned char *r, uint64_t k, int64_t v)
{
	xt_put_be64(r, k / 1000);
	xt_put_be64(r + 8, k % 1000);
	memcpy(r + KEY, &v, 8);
}

/* The key of record r (as make_rec made it), its value in *v. */
static uint64_t
rec_key(const void *r, int64_t *v)
{
	memcpy(v, (const char *) r + KEY, 8);
	return xt_get_be64(r) * 1000 + xt_get_be64((const unsigned char *) r + 8);
}

static xxl_sort_config
combine_config(size_t memory, size_t block_size, uint64_t *calls)
{
	xxl_sort_config c;

	memset(&c, 0, sizeof(c));
	c.res.disk.block_size = block_size;
	c.res.memory = memory ? memory : xxl_sort_min_memory(block_size);
	c.record_size = REC;
	c.key_size = KEY;
	c.res.disk.dirs = xt_dirs;
	c.res.disk.ndisks = 2;
	c.res.disk.file_prefix = "test_sort_combine";
	c.res.disk.try_direct = false;
	c.res.disk.strategy = XXL_ALLOC_RANDOM_CYCLING;
	c.res.disk.seed = 7;
	c.async_runs = true;		/* (turned off by combine) */
	c.combine = sum_into;
	c.combine_arg = calls;
	return c;
}

/*
 * n records over `keys` distinct keys (key k as the words (k / 1000, k %
 * 1000), values that may be negative); the output against the naive sums.
 */
static void
run_combine(uint64_t n, uint64_t keys, size_t memory, size_t block, int min_passes,
			xxl_sort_stats *st)
{
	uint64_t	calls = 0;
	xxl_sort_config cfg = combine_config(memory, block, &calls);
	xxl_error	err = {0};
	xxl_sorter *s = xxl_sorter_create(&cfg, &err);
	int64_t    *sums = calloc(keys, sizeof(int64_t));
	unsigned char *seen = calloc(keys, 1);
	xt_rng		rng = {12345};
	uint64_t	distinct = 0,
				out = 0,
				last = 0;
	const void *rec;
	int			got;

	REQUIRE(s != NULL && sums != NULL && seen != NULL);
	for (uint64_t i = 0; i < n; i++)
	{
		unsigned char r[REC];
		/* a skew: every fourth record on the first hundredth of the keys */
		uint64_t	k = (i % 4 == 0) ? xt_below(&rng, keys / 100 + 1) : xt_below(&rng, keys);
		int64_t		v = (int64_t) xt_below(&rng, 2001) - 1000;

		make_rec(r, k, v);
		REQUIRE(xxl_sorter_put(s, r) == XXL_OK);
		sums[k] += v;
		distinct += !seen[k];
		seen[k] = 1;
	}
	REQUIRE(xxl_sorter_sort(s) == XXL_OK);
	while ((got = xxl_sorter_next(s, &rec)) > 0)
	{
		int64_t		v;
		uint64_t	k = rec_key(rec, &v);

		REQUIRE(k < keys);
		CHECK(out == 0 || k > last);	/* each key once, in order */
		CHECK(seen[k] == 1);
		CHECK_EQ(v, sums[k]);
		seen[k] = 2;
		last = k;
		out++;
	}
	CHECK_EQ(got, 0);
	CHECK_EQ(out, distinct);
	xxl_sorter_stats(s, st);
	CHECK_EQ(st->combined, n - distinct);
	CHECK_EQ(calls, n - distinct);
	CHECK(st->merge_passes >= min_passes);
	CHECK(st->memory_peak <= st->memory_limit);
	printf("  # %" PRIu64 " records over %" PRIu64 " keys: %" PRIu64 " runs, %d passes, "
		   "%" PRIu64 " folded\n", n, distinct, st->runs, st->merge_passes, st->combined);
	xxl_sorter_destroy(s);
	free(sums);
	free(seen);
}

XT_TEST(combine_in_memory)
{
	xxl_sort_stats st;

	run_combine(200000, 50000, 64 * 1024 * KB, 64 * KB, 0, &st);
	CHECK_EQ(st.runs, 0);
}

/* The smallest budget, 4 kB blocks: hundreds of runs, three passes, folded at each. */
XT_TEST(combine_three_passes)
{
	xxl_sort_stats st;
	uint64_t	written = 0;

	run_combine(xt_quick() ? 300000 : 1500000, 400000, 0, 4 * KB, 3, &st);
	CHECK_GE(st.runs, 100);
	for (int d = 0; d < st.io.ndisks; d++)
		written += st.io.disk[d].bytes_written;
	/* the passes write folded runs: less than the records, once per pass */
	CHECK(written < st.records * REC * (uint64_t) st.merge_passes);
}

/* Every record the same key: each load folds to one record. */
XT_TEST(combine_one_key)
{
	xxl_sort_stats st;

	run_combine(300000, 1, 0, 4 * KB, 0, &st);
}

/*
 * Runs put in key order (xxl_sorter_put_sorted): `pieces` pieces, each the
 * records of a random slice of the keys sorted, with repeats, between
 * ordinary puts; with combine every key's sum once, without every record.
 */
static int
cmp_key(const void *x, const void *y)
{
	return memcmp(x, y, KEY);
}

static void
run_presorted(size_t memory, size_t block, int pieces, size_t per_piece, bool combine)
{
	uint64_t	calls = 0;
	xxl_sort_config cfg = combine_config(memory, block, &calls);
	xxl_error	err = {0};
	xxl_sorter *s;
	uint64_t	keys = per_piece,
				n = 0,
				out = 0,
				distinct = 0,
				last = 0;
	int64_t    *sums = calloc(keys, sizeof(int64_t));
	uint64_t   *count = calloc(keys, sizeof(uint64_t));
	unsigned char *piece = malloc(per_piece * REC);
	xt_rng		rng = {99};
	xxl_sort_stats st;
	const void *rec;
	int			got;

	if (!combine)
	{
		cfg.combine = NULL;
		cfg.async_runs = false;	/* (runs put sorted need the loads' halves) */
	}
	s = xxl_sorter_create(&cfg, &err);
	REQUIRE(s != NULL && sums != NULL && count != NULL && piece != NULL);
	for (int p = 0; p < pieces; p++)
	{
		for (size_t x = 0; x < per_piece; x++)
		{
			uint64_t	k = xt_below(&rng, keys);
			int64_t		v = (int64_t) xt_below(&rng, 201) - 100;
			unsigned char *r = piece + x * REC;

			make_rec(r, k, v);
			sums[k] += v;
			count[k]++;
		}
		n += per_piece;
		/* every third piece goes in unsorted, as ordinary puts */
		if (p % 3 == 2)
		{
			for (size_t x = 0; x < per_piece; x++)
				REQUIRE(xxl_sorter_put(s, piece + x * REC) == XXL_OK);
			continue;
		}
		qsort(piece, per_piece, REC, cmp_key);
		for (size_t x = 0; x < per_piece; x++)
			REQUIRE(xxl_sorter_put_sorted(s, piece + x * REC) == XXL_OK);
		REQUIRE(xxl_sorter_end_sorted(s) == XXL_OK);
	}
	for (uint64_t k = 0; k < keys; k++)
		distinct += count[k] > 0;
	REQUIRE(xxl_sorter_sort(s) == XXL_OK);
	while ((got = xxl_sorter_next(s, &rec)) > 0)
	{
		int64_t		v;
		uint64_t	k = rec_key(rec, &v);

		REQUIRE(k < keys);
		CHECK(out == 0 || k >= last);
		if (combine)
		{
			CHECK(out == 0 || k > last);
			CHECK_EQ(v, sums[k]);
		}
		else
		{
			REQUIRE(count[k] > 0);
			count[k]--;
			sums[k] -= v;
		}
		last = k;
		out++;
	}
	CHECK_EQ(got, 0);
	CHECK_EQ(out, combine ? distinct : n);
	if (!combine)
		for (uint64_t k = 0; k < keys; k++)
			CHECK(count[k] == 0 && sums[k] == 0);
	xxl_sorter_stats(s, &st);
	CHECK_EQ(st.records, n);
	CHECK(st.memory_peak <= st.memory_limit);
	printf("  # %d pieces of %zu%s: %" PRIu64 " runs, %d passes, %" PRIu64 " folded\n", pieces,
		   per_piece, combine ? ", combined" : "", st.runs, st.merge_passes, st.combined);
	xxl_sorter_destroy(s);
	free(sums);
	free(count);
	free(piece);
}

XT_TEST(presorted_runs)
{
	/* roomy: one run per piece */
	run_presorted(16 * 1024 * KB, 64 * KB, 9, 200000, true);
	run_presorted(16 * 1024 * KB, 64 * KB, 9, 200000, false);
	/* the smallest budget: chunks of a few blocks, many passes */
	run_presorted(0, 4 * KB, 7, xt_quick() ? 20000 : 100000, true);
	run_presorted(0, 4 * KB, 7, xt_quick() ? 20000 : 100000, false);
	/* 64 kB blocks at the least budget for them: too little room for chunks, ordinary puts */
	run_presorted(0, 64 * KB, 4, 30000, true);
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
