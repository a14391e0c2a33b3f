/*
 * core_sort_shapes.c — the core sorter on fixed records of any shape (record
 * and key size), with an optional producer that does real work per record:
 * the measurement behind the sorter's fast paths for short keys and its
 * asynchronous run formation (docs/engine.md).  core_sort_bench.c stays the 16/8 benchmark against
 * STXXL; this one asks "what does this shape cost".
 *
 *   core_sort_shapes N MEM_MIB DIR [BLOCK_KB]
 *
 * Environment knobs (defaults in brackets):
 *   REC [16], KEY [8]     record and key size in bytes
 *   NULL_FLAG [0]         1: the key's first byte is a constant 0x01, as a SQL
 *                         layer's null flag is, and the rest is random
 *   DISTINCT [0]          > 0: keys drawn from this many values (duplicates)
 *   WORK_NS [0]           busy work per record in the producer (calibrated
 *                         spin), standing in for a heap scan + key encoding
 *   WORK_ITERS [0]        > 0: that many spin iterations instead (no calibration)
 *   SEED [42], XXL_THREADS [0], XXL_ASYNC_MERGE [0], XXL_ASYNC_RUNS [0]
 *
 * Keys are random big-endian bytes (splitmix64), the payload starts with
 * the input index.  The output is checked: keys non-decreasing (memcmp),
 * equal keys in input order, count and an order-independent fingerprint of
 * the records equal to the input's.  The last line is machine-readable.
 *
 * Build (from the repository root):
 *   gcc -std=gnu11 -O2 -fopenmp -pthread -Isrc/core -o build/core_sort_shapes
 *     bench/core_sort_shapes.c src/core/ *.c -lm     (no space in the glob)
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <omp.h>

#include "core/xxl_sort.h"
#include "bench_util.h"
#include "core/record.h"

#define GEN_BATCH 1024

/* A dependent chain the compiler cannot drop: the producer's "real work". */
static volatile uint64_t work_sink;

static inline void
spin(uint64_t iters)
{
	uint64_t	x = work_sink;

	for (uint64_t i = 0; i < iters; i++)
		x = x * UINT64_C(6364136223846793005) + 1442695040888963407u;
	work_sink = x;
}

/* Spin iterations that take about ns nanoseconds on this machine. */
static uint64_t
calibrate(uint64_t ns)
{
	const uint64_t probe = 50 * 1000 * 1000;
	uint64_t	best = UINT64_MAX;

	if (ns == 0)
		return 0;
	for (int rep = 0; rep < 3; rep++)
	{
		uint64_t	t0 = xxl_now_ns();

		spin(probe);
		t0 = xxl_now_ns() - t0;
		if (t0 < best)
			best = t0;
	}
	return ns * probe / (best ? best : 1);
}

/* Record i: key bytes from splitmix64, payload = the input index, then filler. */
static inline void
make_record(unsigned char *rec, size_t rec_size, size_t key_size, uint64_t i, uint64_t seed,
			bool null_flag, uint64_t distinct)
{
	uint64_t	state = seed + i * UINT64_C(0x9E3779B97F4A7C15);
	size_t		b = 0;
	size_t		pay = rec_size - key_size;

	if (distinct > 0)
		state = seed + bench_mix64(state) % distinct * UINT64_C(0x9E3779B97F4A7C15);
	if (null_flag && key_size > 0)
		rec[b++] = 1;
	while (b < key_size)
	{
		uint64_t	be = __builtin_bswap64(bench_mix64(state += UINT64_C(0x9E3779B97F4A7C15)));

		memcpy(rec + b, &be, key_size - b < 8 ? key_size - b : 8);
		b += 8;
	}
	memcpy(rec + key_size, &i, pay < 8 ? pay : 8);
	for (size_t p = 8; p < pay; p++)
		rec[key_size + p] = (unsigned char) (p * 7 + i);
}

static inline uint64_t
payload_index(const unsigned char *rec, size_t rec_size, size_t key_size)
{
	uint64_t	v = 0;
	size_t		n = rec_size - key_size < 8 ? rec_size - key_size : 8;

	memcpy(&v, rec + key_size, n);
	return v;
}

/*
 * Cheap per-record hash for the order-independent fingerprint: whole-word
 * loads only (the last word overlaps the one before it), since assembling a
 * partial word on the stack stalls on store forwarding and would make odd
 * record sizes look slower than they are.
 */
static inline uint64_t
record_hash(const unsigned char *rec, size_t len)
{
	uint64_t	h = len;
	uint64_t	w;

	if (len < 8)
	{
		for (size_t i = 0; i < len; i++)
			h = (h ^ rec[i]) * UINT64_C(0x9E3779B97F4A7C15);
		return h ^ (h >> 29);
	}
	for (size_t i = 0; i + 8 < len; i += 8)
	{
		memcpy(&w, rec + i, 8);
		h = (h ^ w) * UINT64_C(0x9E3779B97F4A7C15);
		h ^= h >> 29;
	}
	memcpy(&w, rec + len - 8, 8);
	h = (h ^ w) * UINT64_C(0x9E3779B97F4A7C15);
	return h ^ (h >> 29);
}

int
main(int argc, char **argv)
{
	if (argc != 4 && argc != 5)
	{
		fprintf(stderr, "usage: %s N MEM_MIB DIR [BLOCK_KB]\n", argv[0]);
		return 2;
	}

	uint64_t	n = strtoull(argv[1], NULL, 10);
	size_t		mem = (size_t) strtoull(argv[2], NULL, 10) << 20;
	const char *dirs[1] = {argv[3]};
	size_t		rec_size = bench_env_u64("REC", 16);
	size_t		key_size = bench_env_u64("KEY", 8);
	bool		null_flag = bench_env_u64("NULL_FLAG", 0) != 0;
	uint64_t	distinct = bench_env_u64("DISTINCT", 0);
	uint64_t	work_ns = bench_env_u64("WORK_NS", 0);
	uint64_t	seed = bench_env_u64("SEED", 42);
	/* WORK_ITERS pins the spin (comparisons across runs on a busy machine) */
	uint64_t	spin_iters = bench_env_u64("WORK_ITERS", 0) ? bench_env_u64("WORK_ITERS", 0) : calibrate(work_ns);
	char		prefix[64];
	xxl_sort_config cfg;
	xxl_error	err;
	unsigned char *gen = calloc(GEN_BATCH, rec_size);
	unsigned char *prev = calloc(1, rec_size + 8);
	bool		int_keys = key_size >= 8 && key_size <= 16;
	uint64_t	prev_hi = 0,
				prev_lo = 0,
				prev_idx = 0;
	uint64_t	in_sum = 0,
				in_xor = 0,
				out_sum = 0,
				out_xor = 0,
				out_n = 0,
				unsorted = 0,
				unstable = 0;
	uint64_t	t0,
				t1,
				t2,
				t3;
	xxl_sort_stats st;
	uint64_t	rd = 0,
				wr = 0;
	/* equal keys must keep input order: checkable when the payload holds the index */
	bool		check_stability = rec_size - key_size >= 8 ||
		(rec_size - key_size) * 8 >= (size_t) (64 - __builtin_clzll(n | 1));

	snprintf(prefix, sizeof prefix, "xxlshapes.%d", (int) getpid());
	memset(&cfg, 0, sizeof cfg);
	cfg.res.memory = mem;
	cfg.record_size = rec_size;
	cfg.key_size = key_size;
	cfg.res.threads = (int) bench_env_u64("XXL_THREADS", 0);
	cfg.async_merge = bench_env_u64("XXL_ASYNC_MERGE", 0) != 0;
	cfg.async_runs = bench_env_u64("XXL_ASYNC_RUNS", 0) != 0;
	cfg.res.disk.dirs = dirs;
	cfg.res.disk.ndisks = 1;
	cfg.res.disk.file_prefix = prefix;
	cfg.res.disk.block_size = (size_t) (argc == 5 ? strtoull(argv[4], NULL, 10) : 2048) << 10;
	cfg.res.disk.try_direct = true;
	cfg.res.disk.strategy = XXL_ALLOC_RANDOM_CYCLING;
	cfg.res.disk.seed = (unsigned) seed;
	xxl_error_clear(&err);

	t0 = xxl_now_ns();
	xxl_sorter *s = xxl_sorter_create(&cfg, &err);

	if (s == NULL)
		bench_die("core_sort_shapes", "xxl_sorter_create", &err);
	/*
	 * Records are generated GEN_BATCH at a time, so that the sorter's loads
	 * of a record never wait on the generator's just-issued partial stores
	 * (a store-forwarding stall that depends on the record shape).
	 */
	for (uint64_t i0 = 0; i0 < n; i0 += GEN_BATCH)
	{
		uint64_t	m = n - i0 < GEN_BATCH ? n - i0 : GEN_BATCH;

		for (uint64_t j = 0; j < m; j++)
			make_record(gen + j * rec_size, rec_size, key_size, i0 + j, seed, null_flag, distinct);
		for (uint64_t j = 0; j < m; j++)
		{
			uint64_t	h = record_hash(gen + j * rec_size, rec_size);

			in_sum += h;
			in_xor ^= h * UINT64_C(0xD6E8FEB86659FD93);
		}
		for (uint64_t j = 0; j < m; j++)
		{
			spin(spin_iters);
			if (xxl_sorter_put(s, gen + j * rec_size) != XXL_OK)
				bench_die("core_sort_shapes", "xxl_sorter_put", xxl_sorter_error(s));
		}
	}
	t1 = xxl_now_ns();
	if (xxl_sorter_sort(s) != XXL_OK)
		bench_die("core_sort_shapes", "xxl_sorter_sort", xxl_sorter_error(s));
	t2 = xxl_now_ns();
	for (;;)
	{
		const void *p;
		int			rc = xxl_sorter_next(s, &p);
		uint64_t	h;

		if (rc == 0)
			break;
		if (rc < 0)
			bench_die("core_sort_shapes", "xxl_sorter_next", xxl_sorter_error(s));
		if (int_keys)
		{
			/* keys of 8..16 bytes as (first word, last word): no memcmp call */
			uint64_t	hi = xxl_load_be64(p),
						lo = xxl_load_be64((const char *) p + key_size - 8),
						idx = payload_index(p, rec_size, key_size);

			if (out_n > 0 && (hi < prev_hi || (hi == prev_hi && lo < prev_lo)))
				unsorted++;
			else if (out_n > 0 && hi == prev_hi && lo == prev_lo && check_stability && prev_idx >= idx)
				unstable++;
			prev_hi = hi;
			prev_lo = lo;
			prev_idx = idx;
		}
		else
		{
			if (out_n > 0)
			{
				int			c = memcmp(prev, p, key_size);

				if (c > 0)
					unsorted++;
				else if (c == 0 && check_stability &&
						 payload_index(prev, rec_size, key_size) >= payload_index(p, rec_size, key_size))
					unstable++;
			}
			memcpy(prev, p, rec_size);
		}
		h = record_hash(p, rec_size);
		out_sum += h;
		out_xor ^= h * UINT64_C(0xD6E8FEB86659FD93);
		out_n++;
	}
	t3 = xxl_now_ns();
	xxl_sorter_stats(s, &st);
	xxl_sorter_destroy(s);
	for (int d = 0; d < st.io.ndisks; d++)
	{
		rd += st.io.disk[d].bytes_read;
		wr += st.io.disk[d].bytes_written;
	}

	bool		ok = unsorted == 0 && unstable == 0 && out_n == n && out_sum == in_sum &&
		out_xor == in_xor;

	printf("shapes: %" PRIu64 " records of %zu bytes, key %zu%s, %zu MiB, block %zu KiB, threads %d, "
		   "work %" PRIu64 " ns/record (%" PRIu64 " spins), async runs %s, async merge %s\n",
		   n, rec_size, key_size, null_flag ? " (constant first byte)" : "", mem >> 20,
		   cfg.res.disk.block_size >> 10, cfg.res.threads > 0 ? cfg.res.threads : omp_get_max_threads(), work_ns,
		   spin_iters,
		   cfg.async_runs ? "on" : "off", cfg.async_merge ? "on" : "off");
	printf("shapes: push %.3f s, sort %.3f s, consume %.3f s, total %.3f s; %" PRIu64
		   " runs, %d passes, fan-in %d; read %.0f MiB, written %.0f MiB; peak %.1f of %.1f MiB\n",
		   (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9, (t3 - t0) / 1e9, st.runs,
		   st.merge_passes, st.fan_in, rd / 1048576.0, wr / 1048576.0,
		   st.memory_peak / 1048576.0, st.memory_limit / 1048576.0);
	printf("shapes: check %s (%" PRIu64 " out, %" PRIu64 " unsorted, %" PRIu64 " unstable)\n",
		   ok ? "ok" : "FAILED", out_n, unsorted, unstable);
	printf("RESULT rec=%zu key=%zu null_flag=%d n=%" PRIu64 " mem_mib=%zu block_kb=%zu work_ns=%" PRIu64
		   " async_runs=%d push_s=%.6f sort_s=%.6f consume_s=%.6f total_s=%.6f runs=%" PRIu64 " passes=%d ok=%d\n",
		   rec_size, key_size, null_flag, n, mem >> 20, cfg.res.disk.block_size >> 10, work_ns,
		   cfg.async_runs, (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9, (t3 - t0) / 1e9, st.runs,
		   st.merge_passes, ok);
	free(gen);
	free(prev);
	return ok ? 0 : 1;
}
