/*
 * test_scatter.c — unit tests of the external permutation (xxl_scatter.h):
 * random permutations of records of several sizes at roomy budgets (placed
 * in memory) and tight ones (many buckets, small write buffers), read twice;
 * the errors a permutation can have (a slot twice, a slot missing, out of
 * range), cancel, spill limits and write failures; budget and I/O volume.
 *
 * Oracle: every record carries bytes derived from its slot, so the output is
 * right iff record k is the one made for slot k.
 */
#include "xxl_test.h"

#include "core/xxl_scatter.h"

#define KB 1024
#define MB (1024 * 1024)

static xxl_scatter_config
config(size_t memory, size_t rec, uint64_t slots)
{
	xxl_scatter_config c;

	memset(&c, 0, sizeof(c));
	c.memory = memory;
	c.record_size = rec;
	c.slots = slots;
	c.disk.dirs = xt_dirs;
	c.disk.ndisks = 2;
	c.disk.file_prefix = "test_scatter";
	c.disk.block_size = 256 * KB;
	c.disk.try_direct = true;
	c.disk.strategy = XXL_ALLOC_STRIPING;
	return c;
}

/* The record made for slot k. */
static void
make_rec(unsigned char *r, size_t rec, uint64_t k)
{
	uint64_t	h = xt_mix64(k + 12345);

	for (size_t i = 0; i < rec; i++)
		r[i] = (unsigned char) (i < 8 ? (k >> (8 * i)) ^ (h >> (8 * i)) : h >> (8 * (i % 8)));
}

/* A random permutation of 0..n-1. */
static uint64_t *
permutation(uint64_t n, uint64_t seed)
{
	uint64_t   *p = malloc((n + 1) * sizeof(uint64_t));
	xt_rng		r = {seed};

	for (uint64_t i = 0; i < n; i++)
		p[i] = i;
	for (uint64_t i = n; i > 1; i--)
	{
		uint64_t	j = xt_below(&r, i);
		uint64_t	t = p[i - 1];

		p[i - 1] = p[j];
		p[j] = t;
	}
	return p;
}

/* Reads the whole output; true if record k is make_rec(k) for every k < n. */
static bool
read_all(xxl_scatter *s, size_t rec, uint64_t n, uint64_t *pieces)
{
	const void *recs;
	size_t		count;
	uint64_t	k = 0;
	unsigned char want[XXL_SCATTER_MAX_RECORD];
	int			got;
	bool		ok = true;

	*pieces = 0;
	while ((got = xxl_scatter_read(s, &recs, &count)) > 0)
	{
		(*pieces)++;
		CHECK(count > 0);
		for (size_t i = 0; i < count; i++, k++)
		{
			make_rec(want, rec, k);
			if (ok && (k >= n || memcmp((const unsigned char *) recs + i * rec, want, rec) != 0))
			{
				CHECK_MSG(false, "record %llu of %llu (size %zu) is wrong", (unsigned long long) k,
						  (unsigned long long) n, rec);
				ok = false;
			}
		}
	}
	CHECK_MSG(got == 0, "read: %s", xxl_scatter_error(s)->message);
	CHECK_EQ(k, n);
	return ok && got == 0 && k == n;
}

typedef struct scatter_case
{
	size_t		rec;
	uint64_t	n;
	size_t		memory;
	bool		external;		/* expected to spill */
} scatter_case;

static void
run_case_mode(const scatter_case *c, uint64_t seed, bool async)
{
	xxl_scatter_config cfg = config(c->memory, c->rec, c->n);
	xxl_error	err = {0};
	xxl_scatter *s;
	uint64_t   *perm = permutation(c->n, seed);
	unsigned char r[XXL_SCATTER_MAX_RECORD];
	xxl_scatter_stats st;
	uint64_t	pieces,
				pieces2;
	size_t		block = 0;
	unsigned char *batch = malloc(300 * c->rec);
	uint64_t	slots[300];
	size_t		nbatch = 0,
				batch_len = 1;
	xt_rng		batch_rng = {seed + 3};

	cfg.async = async;
	s = xxl_scatter_create(&cfg, &err);
	REQUIRE_MSG(s != NULL, "create rec %zu n %llu memory %zu: %s", c->rec,
				(unsigned long long) c->n, c->memory, err.message);
	CHECK(xxl_scatter_fits(&cfg, &block));
	CHECK_LE(xxl_scatter_memory(s), c->memory);
	/* odd seeds put in batches of 1..300 (xxl_scatter_put_many, the text engine's way) */
	for (uint64_t i = 0; i < c->n; i++)
	{
		xxl_status	rc = XXL_OK;

		make_rec(r, c->rec, perm[i]);
		if (seed % 2 == 0)
			rc = xxl_scatter_put(s, perm[i], r);
		else
		{
			memcpy(batch + nbatch * c->rec, r, c->rec);
			slots[nbatch++] = perm[i];
			if (nbatch == batch_len || i + 1 == c->n)
			{
				rc = xxl_scatter_put_many(s, slots, batch, nbatch);
				nbatch = 0;
				batch_len = 1 + xt_next(&batch_rng) % 300;
			}
		}
		if (rc != XXL_OK)
		{
			CHECK_MSG(false, "put: %s", xxl_scatter_error(s)->message);
			break;
		}
	}
	CHECK_STATUS(xxl_scatter_finish(s), XXL_OK);
	read_all(s, c->rec, c->n, &pieces);
	CHECK_STATUS(xxl_scatter_rewind(s), XXL_OK);
	read_all(s, c->rec, c->n, &pieces2);
	CHECK_EQ(pieces, pieces2);
	/* rewind in the middle, after one piece */
	CHECK_STATUS(xxl_scatter_rewind(s), XXL_OK);
	{
		const void *recs;
		size_t		count;

		CHECK(c->n == 0 || xxl_scatter_read(s, &recs, &count) == 1);
	}
	CHECK_STATUS(xxl_scatter_rewind(s), XXL_OK);
	read_all(s, c->rec, c->n, &pieces2);

	xxl_scatter_stats_get(s, &st);
	CHECK_EQ(st.records, c->n);
	/* a worker only where its pipe is small next to the memory */
	CHECK_EQ(st.async, async && c->external && c->memory >= 2 * 1024 * 1024);
	CHECK_LE(st.memory_peak, st.memory_limit);
	CHECK_LE(st.memory_peak, xxl_scatter_memory(s));
	if (c->external)
	{
		uint64_t	w = 0,
					rd = 0;

		CHECK_MSG(st.buckets > 1, "rec %zu n %llu: %llu buckets", c->rec,
				  (unsigned long long) c->n, (unsigned long long) st.buckets);
		CHECK_EQ(block, st.block_size);
		for (int d = 0; d < st.io.ndisks; d++)
		{
			w += st.io.disk[d].bytes_written;
			rd += st.io.disk[d].bytes_read;
		}
		/* each record once, with its offset; blocks and their ends padded */
		CHECK_GE(w, c->n * c->rec);
		CHECK_LE(w, c->n * (c->rec + 4) + st.buckets * (XXL_ALIGN + c->rec + 4) +
				 c->n * (c->rec + 4) / 8);
		/* read three times, plus one bucket and a prefetch after a rewind */
		CHECK_GE(rd, 3 * w);
		CHECK_LE(rd, 4 * w);
		CHECK_EQ(pieces, st.buckets);
		printf("  # rec %zu n %llu memory %zu: %llu buckets of %llu slots, blocks %zu, "
			   "written %.2f B/record, peak %llu\n", c->rec, (unsigned long long) c->n, c->memory,
			   (unsigned long long) st.buckets, (unsigned long long) st.bucket_slots,
			   st.block_size, (double) w / c->n, (unsigned long long) st.memory_peak);
	}
	else
	{
		CHECK_EQ(st.buckets, 0);
		CHECK_EQ(block, 0);
		CHECK_EQ(st.io.disk[0].bytes_written, 0);
		CHECK_EQ(xt_spill_files(), 0);
	}
	xxl_scatter_destroy(s);
	free(perm);
	free(batch);
}

static void
run_case(const scatter_case *c, uint64_t seed)
{
	run_case_mode(c, seed, false);
}

XT_TEST(scatter_in_memory)
{
	static const scatter_case cases[] = {
		{1, 0, 64 * KB, false},
		{1, 1, 64 * KB, false},
		{8, 1000, 64 * KB, false},
		{3, 77777, 1 * MB, false},
		{13, 50000, 1 * MB, false},
		{100, 3000, 1 * MB, false},
		{1024, 500, 1 * MB, false},
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		run_case(&cases[k], k + 1);
}

XT_TEST(scatter_external)
{
	static const scatter_case cases[] = {
		{1, 3000000, 512 * KB, true},
		{2, 1500000, 512 * KB, true},
		{4, 1000000, 256 * KB, true},
		{8, 1000003, 512 * KB, true},
		{11, 777777, 300 * KB, true},
		{13, 2000000, 1 * MB, true},
		{17, 500001, 320 * KB, true},
		{24, 300000, 256 * KB, true},
		{100, 40000, 256 * KB, true},
		{1024, 3000, 512 * KB, true},
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
	{
		run_case(&cases[k], 100 + k);
	}
}

/* Records distributed by a worker thread while the caller puts. */
XT_TEST(scatter_async)
{
	static const scatter_case cases[] = {
		{1, 6000000, 5 * MB, true},
		{7, 4000000, 5 * MB, true},
		{13, 5000000, 6 * MB, true},
		{24, 1000000, 5 * MB, true},
		{13, 600000, 2 * MB, true},	/* batches of 128 kB */
		{13, 3000, 2 * MB, false},	/* in memory: no worker */
		{13, 300000, 512 * KB, true},	/* the pipe would not pay */
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		run_case_mode(&cases[k], 200 + k, true);
}

/* The slots in order, in reverse and interleaved from both ends. */
XT_TEST(scatter_ordered_inputs)
{
	uint64_t	n = xt_quick() ? 100000 : 600000;
	size_t		rec = 10;

	for (int shape = 0; shape < 3; shape++)
	{
		xxl_scatter_config cfg = config(256 * KB, rec, n);
		xxl_error	err = {0};
		xxl_scatter *s = xxl_scatter_create(&cfg, &err);
		unsigned char r[16];
		uint64_t	pieces;

		REQUIRE_MSG(s != NULL, "%s", err.message);
		for (uint64_t i = 0; i < n; i++)
		{
			uint64_t	k = shape == 0 ? i : shape == 1 ? n - 1 - i : (i % 2 ? n - 1 - i / 2 : i / 2);

			make_rec(r, rec, k);
			CHECK_STATUS(xxl_scatter_put(s, k, r), XXL_OK);
		}
		CHECK_STATUS(xxl_scatter_finish(s), XXL_OK);
		read_all(s, rec, n, &pieces);
		CHECK(pieces > 1);
		xxl_scatter_destroy(s);
	}
}

/* Every way a permutation can be wrong is reported, in memory and spilled. */
XT_TEST(scatter_errors)
{
	for (int ext = 0; ext < 3; ext++)
	{
		/* 2: spilled and asynchronous (the worker finds the duplicate) */
		uint64_t	n = ext == 2 ? 8000000 : ext ? 400000 : 1000;
		size_t		memory = ext == 2 ? 5 * MB : ext ? 256 * KB : 1 * MB;
		unsigned char r[8] = {0};
		xxl_error	err = {0};
		xxl_scatter_config cfg = config(memory, sizeof(r), n);
		xxl_scatter *s;
		const void *recs;

		cfg.async = ext == 2;
		size_t		count;
		int			got;

		/*
		 * a slot twice and another one missing, in another bucket (the put
		 * overfills a bucket) or in the same one (the read finds it)
		 */
		for (int same = 0; same < 2; same++)
		{
			xxl_status	rc = XXL_OK;
			uint64_t	missing = same ? 8 : n / 2;

			s = xxl_scatter_create(&cfg, &err);
			REQUIRE(s != NULL);
			for (uint64_t i = 0; i < n && rc == XXL_OK; i++)
				rc = xxl_scatter_put(s, i == missing ? 7 : i, r);
			if (rc == XXL_OK)
				rc = xxl_scatter_finish(s);
			while (rc == XXL_OK && (got = xxl_scatter_read(s, &recs, &count)) != 0)
				if (got < 0)
					rc = xxl_scatter_error(s)->code;
			CHECK_STATUS(rc, XXL_EINVAL);
			printf("  # duplicate (%s): %s\n", ext ? "spilled" : "memory", xxl_scatter_error(s)->message);
			xxl_scatter_destroy(s);
		}

		/* a slot missing: finish fails */
		s = xxl_scatter_create(&cfg, &err);
		REQUIRE(s != NULL);
		for (uint64_t i = 0; i + 1 < n; i++)
			CHECK_STATUS(xxl_scatter_put(s, i, r), XXL_OK);
		CHECK_STATUS(xxl_scatter_finish(s), XXL_EINVAL);
		CHECK(xxl_scatter_read(s, &recs, &count) < 0);
		xxl_scatter_destroy(s);

		/* out of range, and reading before finish / putting after it */
		s = xxl_scatter_create(&cfg, &err);
		REQUIRE(s != NULL);
		CHECK(xxl_scatter_read(s, &recs, &count) < 0);
		xxl_scatter_destroy(s);
		s = xxl_scatter_create(&cfg, &err);
		REQUIRE(s != NULL);
		CHECK_STATUS(xxl_scatter_put(s, n, r), XXL_EINVAL);
		xxl_scatter_destroy(s);
		s = xxl_scatter_create(&cfg, &err);
		REQUIRE(s != NULL);
		for (uint64_t i = 0; i < n; i++)
			CHECK_STATUS(xxl_scatter_put(s, i, r), XXL_OK);
		CHECK_STATUS(xxl_scatter_finish(s), XXL_OK);
		CHECK_STATUS(xxl_scatter_put(s, 0, r), XXL_EINVAL);
		xxl_scatter_destroy(s);
	}

	/* bad configurations */
	{
		xxl_error	err = {0};
		xxl_scatter_config cfg = config(1 * MB, 0, 10);

		CHECK(xxl_scatter_create(&cfg, &err) == NULL);
		CHECK_STATUS(err.code, XXL_EINVAL);
		cfg = config(1 * MB, XXL_SCATTER_MAX_RECORD + 1, 10);
		CHECK(xxl_scatter_create(&cfg, &err) == NULL);
		/* far too many records for the budget */
		err = (xxl_error) {0};
		cfg = config(64 * KB, 16, UINT64_C(1) << 36);
		CHECK(!xxl_scatter_fits(&cfg, NULL));
		CHECK(xxl_scatter_create(&cfg, &err) == NULL);
		CHECK_STATUS(err.code, XXL_ENOMEM);
	}
}

static int	cancel_after;

static bool
cancel_hook(void *arg)
{
	(void) arg;
	return --cancel_after < 0;
}

XT_TEST(scatter_cancel_and_limits)
{
	uint64_t	n = 1000000;
	unsigned char r[12] = {0};

	for (int where = 0; where < 5; where++)
	{
		xxl_scatter_config cfg = config(where >= 3 ? 5 * MB : 512 * KB, sizeof(r), n);
		xxl_error	err = {0};
		xxl_scatter *s;
		xxl_status	rc = XXL_OK;
		const void *recs;
		size_t		count;
		int			got = 1;

		if (where == 0)
		{
			cfg.cancel = cancel_hook;
			cancel_after = 5;
		}
		else if (where == 1 || where == 3)
			cfg.disk.max_spill_bytes = 2 * MB;
		else
			cfg.disk.fail_write_after = 3 * MB;
		/* 3, 4: the worker meets the error */
		cfg.async = where >= 3;
		s = xxl_scatter_create(&cfg, &err);
		REQUIRE(s != NULL);
		for (uint64_t i = 0; i < n && rc == XXL_OK; i++)
			rc = xxl_scatter_put(s, (i * 7919) % n, r);
		if (rc == XXL_OK)
			rc = xxl_scatter_finish(s);
		while (rc == XXL_OK && (got = xxl_scatter_read(s, &recs, &count)) > 0)
			;
		if (rc == XXL_OK && got < 0)
			rc = xxl_scatter_error(s)->code;
		CHECK_STATUS(rc, where == 0 ? XXL_ECANCELED : where == 1 || where == 3 ? XXL_ELIMIT : XXL_ENOSPC);
		printf("  # %s\n", xxl_scatter_error(s)->message);
		CHECK(xt_spill_files() > 0);
		xxl_scatter_destroy(s);
		CHECK_EQ(xt_spill_files(), 0);
	}
}

/*
 * A consumed output gives each bucket's spill space back once it is read:
 * in the operator's shared files, a second permutation written after the
 * first was read takes no new space, a rewind is refused.  Space is taken
 * as records come: half the records put into every bucket hold little more
 * than half the space.
 */
XT_TEST(scatter_consume_frees_as_read)
{
	uint64_t	n = 400000;
	size_t		rec = 12;
	xxl_file_pool *pool = xxl_file_pool_create();
	xxl_spill_account acc;
	xxl_scatter_config cfg = config(512 * KB, rec, n);
	xxl_error	err = {0};
	xxl_scatter *s1,
			   *s2;
	unsigned char r[16];
	uint64_t	pieces,
				full,
				*perm = permutation(n, 77);

	REQUIRE(pool != NULL);
	xxl_spill_account_init(&acc, 0);
	cfg.disk.pool = pool;
	cfg.disk.account = &acc;
	cfg.disk.try_direct = false;
	cfg.consume = true;
	s1 = xxl_scatter_create(&cfg, &err);
	REQUIRE_MSG(s1 != NULL, "%s", err.message);
	for (uint64_t i = 0; i < n / 2; i++)
	{
		make_rec(r, rec, perm[i]);
		CHECK_STATUS(xxl_scatter_put(s1, perm[i], r), XXL_OK);
	}
	full = (n * (rec + 3) + n / 2 * (rec + 3)) / 2;	/* half the entries and some */
	CHECK_MSG(acc.used < full, "half the records took %llu bytes", (unsigned long long) acc.used);
	for (uint64_t i = n / 2; i < n; i++)
	{
		make_rec(r, rec, perm[i]);
		CHECK_STATUS(xxl_scatter_put(s1, perm[i], r), XXL_OK);
	}
	CHECK_STATUS(xxl_scatter_finish(s1), XXL_OK);
	full = acc.used;
	CHECK(full >= n * rec);
	read_all(s1, rec, n, &pieces);
	CHECK(pieces > 1);
	CHECK_STATUS(xxl_scatter_rewind(s1), XXL_EINVAL);

	/* s1 is still open, its space is free */
	s2 = xxl_scatter_create(&cfg, &err);
	REQUIRE_MSG(s2 != NULL, "%s", err.message);
	for (uint64_t i = 0; i < n; i++)
	{
		make_rec(r, rec, perm[n - 1 - i]);
		CHECK_STATUS(xxl_scatter_put(s2, perm[n - 1 - i], r), XXL_OK);
	}
	CHECK_STATUS(xxl_scatter_finish(s2), XXL_OK);
	CHECK_EQ(acc.used, full);
	read_all(s2, rec, n, &pieces);
	xxl_scatter_destroy(s2);
	xxl_scatter_destroy(s1);
	xxl_file_pool_destroy(pool);
	CHECK_EQ(acc.used, 0);
	xxl_spill_account_destroy(&acc);
	free(perm);
}

/* The budget a scatter needs grows with the square root of its data. */
XT_TEST(scatter_min_memory)
{
	size_t		prev = 0;

	for (uint64_t n = 1 << 20; n <= (UINT64_C(1) << 30); n <<= 2)
	{
		size_t		lo = 32 * KB,
					hi = 256 * MB;

		while (lo < hi)
		{
			size_t		mid = lo + (hi - lo) / 2;

			xxl_scatter_config cfg = config(mid, 12, n);

			cfg.disk.block_size = 1 * MB;
			cfg.disk.try_direct = false;
			if (xxl_scatter_fits(&cfg, NULL))
				hi = mid;
			else
				lo = mid + 1;
		}
		printf("  # %llu records of 12 bytes: at least %zu kB\n", (unsigned long long) n, lo / KB);
		if (prev)
			CHECK_MSG(lo < prev * 3, "4x the records needed %zu kB after %zu kB", lo / KB, prev / KB);
		prev = lo;
	}
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
