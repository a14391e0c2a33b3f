/*
 * test_dsort.c — unit tests of the distribution sort (xxl_dsort.h): key
 * sizes 1..16, uniform, few-valued, heavy-hitter, constant, sorted and
 * reversed inputs, in memory and spilled; stability; buckets overfilled on
 * purpose (a sample that misses the data) sorted by the core sorter;
 * errors, cancel, spill limits and write failures; budget.
 *
 * Oracle: every record carries its input index after the key, so the output
 * is right iff the keys do not decrease, equal keys keep input order, every
 * index comes out once, and the records come out unchanged (an
 * order-independent fingerprint of every byte of input and output).  Odd
 * shapes are put in batches of 1..300 records (xxl_dsort_put_many, what
 * the text engine uses), even shapes one at a time.
 */
#include "xxl_test.h"

#include "core/xxl_dsort.h"

#define KB 1024
#define MB (1024 * 1024)

typedef enum shape
{
	UNIFORM,
	FEW,						/* five values */
	HEAVY,						/* half the records one key */
	CONSTANT,
	ASCENDING,
	DESCENDING,
	NAMES,						/* three names < 2^18 of 3 bytes each (DC3's triples) */
	TIES,						/* 8 random first bytes from few values, then any byte */
	TIES_SHORT,					/* the same from many values (short runs of ties) */
	ADVERSARIAL,				/* the sampled records spread, the rest clustered */
	NSHAPES
} shape;

static const char *const shape_names[] = {"uniform", "few", "heavy", "constant", "ascending",
"descending", "names", "ties", "ties_short", "adversarial"};

static xxl_dsort_config
config(size_t memory, size_t rec, size_t ks, uint64_t n)
{
	xxl_dsort_config c;

	memset(&c, 0, sizeof(c));
	c.memory = memory;
	c.record_size = rec;
	c.key_size = ks;
	c.records = n;
	c.disk.dirs = xt_dirs;
	c.disk.ndisks = 2;
	c.disk.file_prefix = "test_dsort";
	c.disk.block_size = 256 * KB;
	c.disk.try_direct = false;
	c.disk.strategy = XXL_ALLOC_RANDOM_CYCLING;
	c.disk.seed = 5;
	return c;
}

/* Key of record i (ks bytes, big-endian value v truncated to ks bytes). */
static void
make_key(unsigned char *k, size_t ks, shape sh, uint64_t i, uint64_t n, uint64_t stride, xt_rng *r)
{
	uint64_t	v = 0,
				v2 = xt_next(r);

	switch (sh)
	{
		case UNIFORM:
			v = xt_next(r);
			break;
		case FEW:
			v = (xt_below(r, 5) + 1) * UINT64_C(0x0101010101010101);
			v2 = v;
			break;
		case HEAVY:
			v = xt_below(r, 2) ? UINT64_C(0x4242424242424242) : xt_next(r);
			if (v == UINT64_C(0x4242424242424242))
				v2 = v;
			break;
		case CONSTANT:
			v = UINT64_C(0x7777777777777777);
			v2 = v;
			break;
		case ASCENDING:
			v = i << (64 - 40);
			v2 = 0;
			break;
		case DESCENDING:
			v = (n - i) << (64 - 40);
			v2 = 0;
			break;
		case TIES:
		case TIES_SHORT:
			v = xt_mix64(xt_below(r, sh == TIES ? 1000 : 100000));
			v2 = xt_next(r);
			break;
		case NAMES:
			v = xt_below(r, 1 << 18) << 40 | xt_below(r, 1 << 18) << 16 | xt_below(r, 1 << 18) >> 8;
			v2 = xt_below(r, 1 << 18) << 56;
			break;
		case ADVERSARIAL:
			v = i % stride == 0 ? (i << (64 - 40)) : xt_below(r, 1000);
			v2 = 0;
			break;
		default:
			break;
	}
	for (size_t j = 0; j < ks; j++)
		k[j] = (unsigned char) (j < 8 ? v >> (56 - 8 * j) : v2 >> (56 - 8 * (j - 8)));
}

typedef struct dcase
{
	size_t		ks;
	size_t		payload;		/* >= 5: the index */
	uint64_t	n;
	size_t		memory;
	bool		external;
	size_t		output_memory;	/* 0: all of memory */
} dcase;

static void run_mode(const dcase *c, shape sh, int oversample, bool presampled, bool async);

/*
 * dsort_caller_helps: the thread that starts a bucket's sort leaves its parts
 * to the other (the worker sorting ahead to the caller, the caller to its
 * helper)
 */
static bool caller_sorts;
/* dsort_caller_buckets: the caller of a presampled sort finds the buckets */
static bool caller_buckets;

static void
run(const dcase *c, shape sh, int oversample)
{
	run_mode(c, sh, oversample, false, false);
}

/* A record's contribution to the order-independent fingerprint. */
static uint64_t
fingerprint(const unsigned char *p, size_t len)
{
	uint64_t	h = len;

	for (size_t i = 0; i < len; i += 8)
	{
		uint64_t	w = 0;

		memcpy(&w, p + i, len - i < 8 ? len - i : 8);
		h = xt_mix64(h ^ w);
	}
	return h;
}

/* The record of input index i (the generator advances the same way every time). */
static void
make_rec(unsigned char *buf, const dcase *c, shape sh, uint64_t i, uint64_t stride, xt_rng *r)
{
	make_key(buf, c->ks, sh, i, c->n, stride, r);
	memset(buf + c->ks, 0xAB, c->payload);
	for (int j = 0; j < 5; j++)
		buf[c->ks + j] = (unsigned char) (i >> (32 - 8 * j));
}

static void
run_mode(const dcase *c, shape sh, int oversample, bool presampled, bool async)
{
	size_t		rec = c->ks + c->payload;
	xxl_dsort_config cfg = config(c->memory, rec, c->ks, c->n);
	xxl_error	err = {0};
	xxl_dsort  *s;
	xt_rng		r = {c->n * 7 + sh};
	unsigned char buf[64];
	unsigned char prev[64];
	uint8_t    *seen = calloc(c->n + 1, 1);
	unsigned char *batch = malloc(300 * rec);
	size_t		nbatch = 0;
	xt_rng		batch_rng = {c->n + 11};
	size_t		batch_len = 1;
	bool		many = sh % 2 == 1;
	uint64_t	k = 0,
				prev_idx = 0,
				stride = 1,
				in_print = 0,
				out_print = 0;
	const void *recs;
	size_t		count;
	int			got;
	bool		ok = true;
	xxl_dsort_stats st;

	cfg.oversample = oversample;
	cfg.output_memory = c->output_memory;
	cfg.presampled = presampled;
	cfg.async = async;
	cfg.test_caller_sorts = caller_sorts;
	cfg.caller_buckets = caller_buckets;
	if (sh == ADVERSARIAL)
		stride = c->n / ((c->n * rec * 4) / c->memory + 1) / (oversample ? oversample : 32);
	if (stride == 0)
		stride = 1;
	s = xxl_dsort_create(&cfg, &err);
	REQUIRE_MSG(s != NULL, "create: %s", err.message);
	CHECK(xxl_dsort_fits(&cfg));
	CHECK_LE(xxl_dsort_memory(s), c->memory);
	{
		size_t		in,
					dist,
					out;

		xxl_dsort_phase_memory(s, &in, &dist, &out);
		CHECK_LE(in, c->memory);
		CHECK_LE(dist, c->memory);
		CHECK_LE(out, c->output_memory ? c->output_memory : c->memory);
		if (c->external && !presampled)
			CHECK_LE(in, c->memory / 2);	/* staging needs little */
	}
	if (presampled)
	{
		/* a first pass over the same input offers the sample */
		uint64_t	every = xxl_dsort_sample_stride(s);
		xt_rng		r0 = r;

		CHECK_EQ(every, xxl_dsort_plan_stride(&cfg));
		CHECK(every > 0 || !c->external);
		for (uint64_t i = 0; i < c->n && every > 0; i++)
		{
			make_rec(buf, c, sh, i, stride, &r0);
			if (i % every == 0)
				CHECK_STATUS(xxl_dsort_sample(s, buf), XXL_OK);
		}
	}
	for (uint64_t i = 0; i < c->n; i++)
	{
		xxl_status	rc = XXL_OK;

		make_rec(buf, c, sh, i, stride, &r);
		in_print += fingerprint(buf, rec);
		if (!many)
			rc = xxl_dsort_put(s, buf);
		else
		{
			memcpy(batch + nbatch++ * rec, buf, rec);
			if (nbatch == batch_len || i + 1 == c->n)
			{
				rc = xxl_dsort_put_many(s, batch, nbatch);
				nbatch = 0;
				batch_len = 1 + xt_next(&batch_rng) % 300;
			}
		}
		if (rc != XXL_OK)
		{
			CHECK_MSG(false, "put: %s", xxl_dsort_error(s)->message);
			break;
		}
	}
	CHECK_STATUS(xxl_dsort_sort(s), XXL_OK);
	while ((got = xxl_dsort_read(s, &recs, &count)) > 0)
	{
		CHECK(count > 0);
		for (size_t i = 0; i < count && ok; i++, k++)
		{
			const unsigned char *p = (const unsigned char *) recs + i * rec;
			uint64_t	idx = 0;

			for (int j = 0; j < 5; j++)
				idx = (idx << 8) | p[c->ks + j];
			if (idx >= c->n || seen[idx])
			{
				CHECK_MSG(false, "%s ks %zu: index %llu out of range or twice", shape_names[sh], c->ks,
						  (unsigned long long) idx);
				ok = false;
				break;
			}
			seen[idx] = 1;
			out_print += fingerprint(p, rec);
			if (k > 0)
			{
				int			cmp = memcmp(prev, p, c->ks);

				if (cmp > 0 || (cmp == 0 && prev_idx > idx))
				{
					CHECK_MSG(false, "%s ks %zu: record %llu out of order%s", shape_names[sh], c->ks,
							  (unsigned long long) k, cmp == 0 ? " (unstable)" : "");
					ok = false;
				}
			}
			memcpy(prev, p, c->ks);
			prev_idx = idx;
		}
	}
	CHECK_MSG(got == 0, "read: %s", xxl_dsort_error(s)->message);
	CHECK_EQ(k, c->n);
	CHECK_MSG(!ok || in_print == out_print, "%s ks %zu: records changed on the way",
			  shape_names[sh], c->ks);
	xxl_dsort_stats_get(s, &st);
	CHECK_LE(st.output_peak, c->output_memory ? c->output_memory : c->memory);
	/* a worker only where its pipe is small next to the memory */
	CHECK_EQ(st.async, async && c->external && c->memory >= 2 * MB);
	/* an asynchronous sort also sorts ahead where its areas fit */
	if (c->output_memory == 0 || c->output_memory >= 2 * MB)
		CHECK_EQ(st.sorted_ahead, st.async);
	/* the caller finds the buckets where it was asked to and a worker distributes */
	CHECK_EQ(st.caller_buckets, caller_buckets && presampled && st.async);
	/*
	 * Parts of buckets sorted by a second thread: the caller for a worker
	 * sorting ahead, a helper for a caller sorting (asynchronous sorts only)
	 */
	if (!st.async)
		CHECK_EQ(st.helped_parts, 0);
	else if (caller_sorts && sh != CONSTANT && sh != FEW)	/* (few keys: no normal bucket to sort) */
		CHECK_MSG(st.helped_parts > 0, "%s ks %zu: the other thread sorted no part", shape_names[sh],
				  c->ks);
	CHECK_EQ(st.records, c->n);
	CHECK_LE(st.memory_peak, st.memory_limit);
	if (c->external)
	{
		uint64_t	w = 0,
					rd = 0;

		CHECK(st.buckets >= 2);
		for (int d = 0; d < st.io.ndisks; d++)
			w += st.io.disk[d].bytes_written, rd += st.io.disk[d].bytes_read;
		/* staged and distributed: two writes and two reads (an overflow: two more) */
		CHECK_GE(w, (presampled ? 1 : 2) * c->n * rec);
		CHECK_LE(w, ((presampled ? 1 : 2) + (st.overflows ? 2 : 0)) * c->n * rec +
				 (st.buckets + 4) * 2 * st.block_size + 64 * KB);
		CHECK_EQ(rd, w);
		/* (few keys: each a fifth of the records, an equality bucket where that outgrows a bucket) */
		if (sh == CONSTANT || sh == HEAVY || (sh == FEW && c->n / 5 > st.bucket_capacity))
			CHECK_MSG(st.equal_buckets >= 1, "%s: no equality bucket", shape_names[sh]);
		/* sampling noise may overfill a bucket now and then, not more */
		if (oversample == 0)
			CHECK_MSG(st.overflows <= 1 + st.buckets / 50, "%s ks %zu: %llu overflows (largest %llu of %llu)",
					  shape_names[sh], c->ks, (unsigned long long) st.overflows,
					  (unsigned long long) st.largest_bucket, (unsigned long long) st.bucket_capacity);
		else
			CHECK_MSG(st.overflows > 0, "%s: no overflow provoked", shape_names[sh]);
		if ((sh == ASCENDING || sh == NAMES) && c->ks >= 9 && c->ks <= 10)
			CHECK_MSG(st.short_keys > 0, "%s ks %zu: no bucket sorted on 8 bytes", shape_names[sh], c->ks);
		if (sh == UNIFORM)
			printf("  # ks %zu rec %zu n %llu memory %zu: %llu buckets, largest %llu of %llu, blocks "
				   "%zu, peak %llu\n", c->ks, rec, (unsigned long long) c->n, c->memory,
				   (unsigned long long) st.buckets, (unsigned long long) st.largest_bucket,
				   (unsigned long long) st.bucket_capacity, st.block_size,
				   (unsigned long long) st.memory_peak);
	}
	else
		CHECK_EQ(st.buckets, 0);
	xxl_dsort_destroy(s);
	free(seen);
	free(batch);
}

XT_TEST(dsort_in_memory)
{
	static const dcase cases[] = {
		{1, 5, 0, 64 * KB, false, 0},
		{1, 5, 1, 64 * KB, false, 0},
		{8, 5, 3000, 256 * KB, false, 0},
		{16, 8, 10000, 1 * MB, false, 0},
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		for (int sh = 0; sh < ADVERSARIAL; sh++)
			run(&cases[k], (shape) sh, 0);
}

XT_TEST(dsort_external)
{
	static const dcase cases[] = {
		{1, 5, 300000, 512 * KB, true, 0},
		{3, 5, 400000, 512 * KB, true, 0},
		{8, 5, 500000, 1 * MB, true, 0},
		{9, 6, 400000, 768 * KB, true, 0},
		{12, 5, 300000, 512 * KB, true, 0},
		{16, 8, 300000, 1 * MB, true, 0},
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		for (int sh = 0; sh < ADVERSARIAL; sh++)
		{
			dcase		c = cases[k];

			if (xt_quick())
				c.n /= 4;
			run(&c, (shape) sh, 0);
		}
}

/*
 * A staged input gives the stage's space back as it is distributed: in an
 * operator's shared files the spill peak stays well below stage plus
 * buckets (twice the records), and the output is still sorted.
 */
XT_TEST(dsort_stage_freed_as_distributed)
{
	uint64_t	n = xt_quick() ? 200000 : 600000;
	size_t		rec = 16;
	xxl_file_pool *pool = xxl_file_pool_create();
	xxl_spill_account acc;
	xxl_dsort_config cfg = config(1 * MB, rec, 8, n);
	xxl_error	err = {0};
	xxl_dsort  *s;
	xxl_dsort_stats st;
	unsigned char r[16];
	const void *recs;
	size_t		count;
	uint64_t	got = 0,
				prev = 0;
	int			rc;

	REQUIRE(pool != NULL);
	xxl_spill_account_init(&acc, 0);
	cfg.disk.pool = pool;
	cfg.disk.account = &acc;
	s = xxl_dsort_create(&cfg, &err);
	REQUIRE_MSG(s != NULL, "%s", err.message);
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	key = __builtin_bswap64(xt_mix64(i)),
					v = i;

		memcpy(r, &key, 8);
		memcpy(r + 8, &v, 8);
		REQUIRE(xxl_dsort_put(s, r) == XXL_OK);
	}
	REQUIRE(xxl_dsort_sort(s) == XXL_OK);
	xxl_dsort_stats_get(s, &st);
	CHECK(st.io.disk[0].bytes_written + st.io.disk[1].bytes_written >= 2 * n * rec);	/* staged */
	CHECK_MSG(acc.peak < n * rec * 3 / 2, "spill peak %llu for %llu bytes of records",
			  (unsigned long long) acc.peak, (unsigned long long) (n * rec));
	while ((rc = xxl_dsort_read(s, &recs, &count)) > 0)
		for (size_t i = 0; i < count; i++, got++)
		{
			uint64_t	key;

			memcpy(&key, (const unsigned char *) recs + i * rec, 8);
			key = __builtin_bswap64(key);
			CHECK(got == 0 || key >= prev);
			prev = key;
		}
	CHECK_EQ(rc, 0);
	CHECK_EQ(got, n);
	xxl_dsort_destroy(s);
	xxl_file_pool_destroy(pool);
	CHECK_EQ(acc.used, 0);
	xxl_spill_account_destroy(&acc);
}

/* Less memory for the output than for distributing (lent by an operator). */
XT_TEST(dsort_output_memory)
{
	static const dcase cases[] = {
		{8, 6, 500000, 1 * MB, true, 400 * KB},
		{9, 5, 400000, 2 * MB, true, 512 * KB},
		{4, 8, 5000, 1 * MB, false, 200 * KB},
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		for (int sh = 0; sh < ADVERSARIAL; sh++)
			run(&cases[k], (shape) sh, 0);
}

/* The caller offers the sample in a first pass: records are not staged. */
XT_TEST(dsort_presampled)
{
	static const dcase cases[] = {
		{3, 5, 400000, 512 * KB, true, 0},
		{9, 6, 400000, 1 * MB, true, 512 * KB},
		{8, 5, 3000, 1 * MB, false, 0},
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		for (int sh = 0; sh < ADVERSARIAL; sh++)
			run_mode(&cases[k], (shape) sh, 0, true, false);
}

/* Records staged or distributed by a worker thread while the caller puts. */
XT_TEST(dsort_async)
{
	static const dcase cases[] = {
		{8, 5, 3000000, 5 * MB, true, 0},
		{9, 6, 2400000, 6 * MB, true, 2 * MB},
		{8, 5, 600000, 2 * MB, true, 0},	/* batches of 128 kB */
		{8, 5, 5000, 5 * MB, false, 0},	/* in memory: no worker */
		{8, 5, 400000, 512 * KB, true, 0},	/* the pipe would not pay */
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		for (int pre = 0; pre < 2; pre++)
			for (int sh = 0; sh < ADVERSARIAL; sh += 2)
				run_mode(&cases[k], (shape) sh, 0, pre, true);
}

/*
 * The caller, instead of waiting for the bucket the worker sorts ahead, sorts
 * parts of it; where the output has room for two areas only, a helper thread
 * sorts parts of the bucket the caller sorts.  Here the other thread sorts
 * every part, with keys of 8 bytes, short keys (9..16 bytes whose varying
 * bits fit 64) and long ones, and around an overfull bucket, where the
 * worker stops and starts again.
 */
XT_TEST(dsort_caller_helps)
{
	static const dcase cases[] = {
		{8, 5, 1500000, 5 * MB, true, 0},
		{12, 5, 1200000, 5 * MB, true, 0},
		{16, 6, 1000000, 6 * MB, true, 2 * MB},
		{12, 5, 1200000, 5 * MB, true, 512 * KB},	/* two areas: a helper */
	};
	dcase		over = {8, 5, 1500000, 5 * MB, true, 0};

	caller_sorts = true;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		for (int sh = 0; sh < ADVERSARIAL; sh++)
			run_mode(&cases[k], (shape) sh, 0, k == 1, true);
	run_mode(&over, ADVERSARIAL, 1, false, true);
	caller_sorts = false;
}

/*
 * The caller finds each record's bucket and the worker only copies it there
 * (presampled and asynchronous; otherwise the option changes nothing): every
 * shape, short and long keys, records one by one and in batches, and an
 * overfull bucket.
 */
XT_TEST(dsort_caller_buckets)
{
	static const dcase cases[] = {
		{8, 5, 1500000, 5 * MB, true, 0},
		{12, 5, 1200000, 5 * MB, true, 0},
		{16, 6, 1000000, 6 * MB, true, 2 * MB},
		{8, 5, 5000, 5 * MB, false, 0},	/* in memory: no worker */
	};
	dcase		over = {8, 5, 1500000, 5 * MB, true, 0};

	caller_buckets = true;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		for (int sh = 0; sh < ADVERSARIAL; sh++)
			run_mode(&cases[k], (shape) sh, 0, sh % 3 != 2, true);
	run_mode(&over, ADVERSARIAL, 1, true, true);
	caller_buckets = false;
}

/*
 * A sample that misses the data overfills a bucket: the core sorter takes it
 * (sorting ahead, the worker stops before it and starts again after it).
 */
XT_TEST(dsort_overflow)
{
	dcase		c = {8, 5, 400000, 512 * KB, true, 0};
	dcase		ahead = {8, 5, 1500000, 5 * MB, true, 0};

	run(&c, ADVERSARIAL, 1);
	run_mode(&ahead, ADVERSARIAL, 1, false, true);
}

XT_TEST(dsort_errors)
{
	xxl_error	err = {0};
	xxl_dsort_config cfg = config(256 * KB, 12, 8, 1000);
	xxl_dsort  *s;
	unsigned char r[12] = {0};
	const void *recs;
	size_t		count;

	/* more records than announced, in memory and staged */
	for (int ext = 0; ext < 2; ext++)
	{
		cfg = config(256 * KB, 12, 8, ext ? 100000 : 1000);
		s = xxl_dsort_create(&cfg, &err);
		REQUIRE(s != NULL);
		for (uint64_t i = 0; i < cfg.records; i++)
			CHECK_STATUS(xxl_dsort_put(s, r), XXL_OK);
		CHECK_STATUS(xxl_dsort_put(s, r), XXL_EINVAL);
		xxl_dsort_destroy(s);
	}
	/* call order */
	s = xxl_dsort_create(&cfg, &err);
	REQUIRE(s != NULL);
	CHECK(xxl_dsort_read(s, &recs, &count) < 0);
	xxl_dsort_destroy(s);
	s = xxl_dsort_create(&cfg, &err);
	REQUIRE(s != NULL);
	CHECK_EQ(xxl_dsort_sample_stride(s), 0);
	CHECK_STATUS(xxl_dsort_sample(s, r), XXL_EINVAL);	/* not presampled */
	xxl_dsort_destroy(s);
	cfg.presampled = true;
	cfg.records = 100000;
	s = xxl_dsort_create(&cfg, &err);
	REQUIRE(s != NULL);
	CHECK(xxl_dsort_sample_stride(s) > 0);
	CHECK_STATUS(xxl_dsort_sample(s, r), XXL_OK);
	CHECK_STATUS(xxl_dsort_put(s, r), XXL_OK);
	CHECK_STATUS(xxl_dsort_sample(s, r), XXL_EINVAL);	/* after a record */
	xxl_dsort_destroy(s);
	cfg = config(256 * KB, 12, 8, 1000);
	s = xxl_dsort_create(&cfg, &err);
	REQUIRE(s != NULL);
	CHECK_STATUS(xxl_dsort_sort(s), XXL_OK);
	CHECK_STATUS(xxl_dsort_put(s, r), XXL_EINVAL);
	xxl_dsort_destroy(s);
	/* bad shapes, too small a budget */
	err = (xxl_error) {0};
	cfg = config(256 * KB, 12, 17, 10);
	CHECK(!xxl_dsort_fits(&cfg));
	CHECK(xxl_dsort_create(&cfg, &err) == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	cfg = config(256 * KB, 4, 8, 10);
	CHECK(xxl_dsort_create(&cfg, &err) == NULL);
	err = (xxl_error) {0};
	cfg = config(64 * KB, 16, 8, UINT64_C(1) << 34);
	CHECK(!xxl_dsort_fits(&cfg));
	CHECK(xxl_dsort_create(&cfg, &err) == NULL);
	CHECK_STATUS(err.code, XXL_ENOMEM);
}

static int	cancel_after;
static bool cancel_reading;		/* or: cancel once the output is read */
static bool reading;

static bool
cancel_hook(void *arg)
{
	(void) arg;
	return cancel_reading ? reading : --cancel_after < 0;
}

XT_TEST(dsort_cancel_and_limits)
{
	uint64_t	n = 600000;

	for (int where = 0; where < 9; where++)
	{
		/*
		 * 4..6: asynchronous, the worker meets the limit or the failure; 7, 8:
		 * sorting ahead, canceled while the worker sorts, a read failing on
		 * the worker
		 */
		xxl_dsort_config cfg = config(where >= 4 ? 5 * MB : 1 * MB, 12, 8, n);
		xxl_error	err = {0};
		xxl_dsort  *s;
		xxl_status	rc = XXL_OK;
		unsigned char r[12] = {0};
		xt_rng		g = {where};
		const void *recs;
		size_t		count;
		int			got = 1;

		reading = false;
		cancel_reading = where == 7;
		if (where <= 1 || where == 7)
		{
			/* in the input, and in the output */
			cfg.cancel = cancel_hook;
			cancel_after = where == 0 ? 3 : 14;
		}
		else if (where == 2 || where == 4)
			cfg.disk.max_spill_bytes = 4 * MB;
		else if (where == 8)
			cfg.disk.fail_read_after = 2 * MB;	/* presampled: bucket reads only */
		else
			cfg.disk.fail_write_after = 5 * MB;
		cfg.async = where >= 4;
		cfg.presampled = where == 6 || where == 8;
		s = xxl_dsort_create(&cfg, &err);
		REQUIRE(s != NULL);
		if (cfg.presampled)
		{
			xt_rng		g0 = g;

			for (uint64_t i = 0; i < n; i++)
			{
				xt_put_be64(r, xt_next(&g0));
				if (i % xxl_dsort_sample_stride(s) == 0)
					CHECK_STATUS(xxl_dsort_sample(s, r), XXL_OK);
			}
		}
		for (uint64_t i = 0; i < n && rc == XXL_OK; i++)
		{
			xt_put_be64(r, xt_next(&g));
			rc = xxl_dsort_put(s, r);
		}
		if (rc == XXL_OK)
			rc = xxl_dsort_sort(s);
		reading = true;
		while (rc == XXL_OK && (got = xxl_dsort_read(s, &recs, &count)) > 0)
			;
		if (rc == XXL_OK && got < 0)
			rc = xxl_dsort_error(s)->code;
		if (where >= 7)
		{
			xxl_dsort_stats st;

			xxl_dsort_stats_get(s, &st);
			CHECK(st.sorted_ahead);
		}
		CHECK_STATUS(rc, where <= 1 || where == 7 ? XXL_ECANCELED :
					 where == 2 || where == 4 ? XXL_ELIMIT : where == 8 ? XXL_EIO : XXL_ENOSPC);
		/* a failed sort stays failed */
		CHECK(xxl_dsort_read(s, &recs, &count) < 0);
		printf("  # %s\n", xxl_dsort_error(s)->message);
		xxl_dsort_destroy(s);
		CHECK_EQ(xt_spill_files(), 0);
	}
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
