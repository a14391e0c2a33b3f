/*
 * core_sort_bench.c — the pgxxl half of the core-sorter benchmark: sorts N
 * (u64 key, u64 payload) records with the engine's external sorter
 * (src/core/xxl_sort.h) under a memory budget and reports time per phase,
 * I/O volume and peak memory in the format stxxl_sort_bench.cpp uses, so
 * bench/run_core.sh can set the two side by side.
 *
 *   core_sort_bench N MEM_MIB DIR [BLOCK_KB]
 *   core_sort_bench --block-kb MEM_MIB
 *
 * The second form prints the block size (KiB) the benchmark uses for a
 * budget: STXXL's 2 MiB unless the engine's minimum budget for it
 * (xxl_sort_min_memory) is larger, then the largest smaller power of two,
 * so that both sorters always run with the same block size.
 *
 * The records are the ones stxxl_sort_bench.cpp sorts: splitmix64(SEED)
 * keys, payload = input index (SEED from the environment, default 42).  The
 * engine compares keys as byte strings, so a record is the key in big-endian
 * order followed by the payload; the conversion is part of the timed loop,
 * as STXXL's comparator is part of its.  Every output record is checked:
 * keys non-decreasing, and count, sums and xors of keys and payloads equal
 * to the input's.
 *
 * BLOCK_KB defaults to 2048 (STXXL's default).  Environment knobs (defaults
 * in brackets): SEED [42], XXL_THREADS [0 = OpenMP default],
 * XXL_ASYNC_MERGE [0].
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <omp.h>

#include "core/xxl_sort.h"
#include "bench_util.h"

#define REC_SIZE 16

/*
 * Whether the open files whose path contains `needle` use O_DIRECT:
 * 1 all of them, 0 none, 2 mixed, -1 no such file open.  The same probe as
 * the STXXL side's, so both report the mode the kernel really granted.
 */
static int
open_files_direct(const char *needle)
{
	DIR		   *d = opendir("/proc/self/fd");
	struct dirent *de;
	int			ndirect = 0,
				nplain = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL)
	{
		char		link[300],
					target[4096],
					info[300],
					line[256];
		ssize_t		len;
		FILE	   *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof link, "/proc/self/fd/%s", de->d_name);
		len = readlink(link, target, sizeof target - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (!strstr(target, needle))
			continue;
		snprintf(info, sizeof info, "/proc/self/fdinfo/%s", de->d_name);
		if (!(f = fopen(info, "r")))
			continue;
		while (fgets(line, sizeof line, f))
			if (strncmp(line, "flags:", 6) == 0)
			{
				unsigned long flags = strtoul(line + 6, NULL, 8);

				if (flags & O_DIRECT)
					ndirect++;
				else
					nplain++;
			}
		fclose(f);
	}
	closedir(d);
	if (ndirect + nplain == 0)
		return -1;
	return nplain == 0 ? 1 : ndirect == 0 ? 0 : 2;
}

static const char *
direct_name(int d)
{
	return d == 1 ? "on" : d == 0 ? "off" : d == 2 ? "mixed" : "unknown";
}

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--block-kb") == 0)
	{
		size_t		mem = (size_t) strtoull(argv[2], NULL, 10) << 20;
		size_t		kb = 2048;

		while (kb > 128 && xxl_sort_min_memory(kb << 10) > mem)
			kb /= 2;
		if (xxl_sort_min_memory(kb << 10) > mem)
		{
			fprintf(stderr, "core_sort_bench: %s MiB is below the sorter's minimum budget\n", argv[2]);
			return 2;
		}
		printf("%zu\n", kb);
		return 0;
	}
	if (argc != 4 && argc != 5)
	{
		fprintf(stderr, "usage: %s N MEM_MIB DIR [BLOCK_KB]\n", argv[0]);
		return 2;
	}

	uint64_t	n = strtoull(argv[1], NULL, 10);
	size_t		mem = (size_t) strtoull(argv[2], NULL, 10) << 20;
	const char *dirs[1] = {argv[3]};
	uint64_t	seed = bench_env_u64("SEED", 42);
	char		prefix[64];

	/* The pid keeps concurrent runs in one directory apart. */
	snprintf(prefix, sizeof prefix, "xxlbench.%d", (int) getpid());

	xxl_sort_config cfg;

	memset(&cfg, 0, sizeof cfg);
	cfg.res.memory = mem;
	cfg.record_size = REC_SIZE;
	cfg.key_size = 8;
	cfg.res.threads = (int) bench_env_u64("XXL_THREADS", 0);
	cfg.async_merge = bench_env_u64("XXL_ASYNC_MERGE", 0) != 0;
	cfg.res.disk.dirs = dirs;
	cfg.res.disk.ndisks = 1;
	cfg.res.disk.file_prefix = prefix;
	cfg.res.disk.block_size = (size_t) (argc == 5 ? strtoull(argv[4], NULL, 10) : 2048) << 10;
	cfg.res.disk.try_direct = true;
	cfg.res.disk.strategy = XXL_ALLOC_RANDOM_CYCLING;
	cfg.res.disk.seed = (unsigned) seed;

	xxl_error	err;

	xxl_error_clear(&err);

	uint64_t	in_sum_k = 0,
				in_xor_k = 0,
				in_sum_p = 0,
				in_xor_p = 0;
	uint64_t	out_sum_k = 0,
				out_xor_k = 0,
				out_sum_p = 0,
				out_xor_p = 0,
				out_n = 0;
	bool		sorted = true;
	uint64_t	state = seed;
	uint64_t	t0,
				t1,
				t2,
				t3;
	xxl_sort_stats st;
	int			direct;

	/* Creation is inside the timed region, as STXXL's constructor is. */
	t0 = xxl_now_ns();
	xxl_sorter *s = xxl_sorter_create(&cfg, &err);

	if (s == NULL)
		bench_die("pgxxl", "xxl_sorter_create", &err);
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	key = bench_splitmix64(&state);
		uint64_t	be = __builtin_bswap64(key);
		unsigned char rec[REC_SIZE];

		memcpy(rec, &be, 8);
		memcpy(rec + 8, &i, 8);
		in_sum_k += key;
		in_xor_k ^= key;
		in_sum_p += i;
		in_xor_p ^= i;
		if (xxl_sorter_put(s, rec) != XXL_OK)
			bench_die("pgxxl", "xxl_sorter_put", xxl_sorter_error(s));
	}
	t1 = xxl_now_ns();
	if (xxl_sorter_sort(s) != XXL_OK)
		bench_die("pgxxl", "xxl_sorter_sort", xxl_sorter_error(s));
	t2 = xxl_now_ns();

	uint64_t	prev = 0;

	for (;;)
	{
		const void *rec;
		int			rc = xxl_sorter_next(s, &rec);
		uint64_t	be,
					key,
					payload;

		if (rc == 0)
			break;
		if (rc < 0)
			bench_die("pgxxl", "xxl_sorter_next", xxl_sorter_error(s));
		memcpy(&be, rec, 8);
		memcpy(&payload, (const char *) rec + 8, 8);
		key = __builtin_bswap64(be);
		if (key < prev)
			sorted = false;
		prev = key;
		out_sum_k += key;
		out_xor_k ^= key;
		out_sum_p += payload;
		out_xor_p ^= payload;
		out_n++;
	}
	t3 = xxl_now_ns();
	/* Files are closed by destroy: look at them and the counters first. */
	direct = open_files_direct("xxlbench.");
	xxl_sorter_stats(s, &st);
	xxl_sorter_destroy(s);

	uint64_t	rd = 0,
				wr = 0;

	for (int d = 0; d < st.io.ndisks; d++)
	{
		rd += st.io.disk[d].bytes_read;
		wr += st.io.disk[d].bytes_written;
	}

	bool		ok = sorted && out_n == n && out_sum_k == in_sum_k && out_xor_k == in_xor_k &&
		out_sum_p == in_sum_p && out_xor_p == in_xor_p;
	long		hwm = bench_vm_hwm_kb();
	double		push_s = (t1 - t0) / 1e9,
				sort_s = (t2 - t1) / 1e9,
				cons_s = (t3 - t2) / 1e9,
				tot_s = (t3 - t0) / 1e9;

	/* No spill (input fit in memory): there was no file to probe. */
	if (st.runs == 0)
		direct = -1;
	else if (direct == -1)
		direct = st.io.direct ? 1 : 0;

	printf("pgxxl: %" PRIu64 " records, %zu MiB, block %zu KiB, threads %d, dir %s, async merge %s, "
		   "direct %s (engine says %s)\n",
		   n, mem >> 20, cfg.res.disk.block_size >> 10,
		   cfg.res.threads > 0 ? cfg.res.threads : omp_get_max_threads(), argv[3], cfg.async_merge ? "on" : "off", direct_name(direct),
		   st.runs == 0 ? "no spill" : st.io.direct ? "on" : "off");
	printf("pgxxl: push %.3f s, sort %.3f s, consume %.3f s, total %.3f s\n",
		   push_s, sort_s, cons_s, tot_s);
	printf("pgxxl: %" PRIu64 " runs, %d merge passes, fan-in %d, run formation %.3f s, merge %.3f s\n",
		   st.runs, st.merge_passes, st.fan_in, st.run_formation_ns / 1e9, st.merge_ns / 1e9);
	printf("pgxxl: read %.1f MiB, written %.1f MiB, wait read %.3f s, wait write %.3f s, "
		   "budget peak %.1f of %.1f MiB, VmHWM %.1f MiB\n",
		   rd / 1048576.0, wr / 1048576.0, st.io.wait_read_ns / 1e9, st.io.wait_write_ns / 1e9,
		   st.memory_peak / 1048576.0, st.memory_limit / 1048576.0, hwm / 1024.0);
	printf("pgxxl: check %s (%" PRIu64 " records out, sorted %s)\n", ok ? "ok" : "FAILED",
		   out_n, sorted ? "yes" : "no");
	/* One machine-readable line for run_core.sh. */
	printf("RESULT impl=pgxxl n=%" PRIu64 " mem_mib=%zu block_kb=%zu push_s=%.6f sort_s=%.6f consume_s=%.6f "
		   "total_s=%.6f read_bytes=%" PRIu64 " write_bytes=%" PRIu64 " wait_read_s=%.6f "
		   "wait_write_s=%.6f runs=%" PRIu64 " passes=%d engine_peak_bytes=%" PRIu64
		   " vmhwm_kb=%ld direct=%s ok=%d\n",
		   n, mem >> 20, cfg.res.disk.block_size >> 10, push_s, sort_s, cons_s, tot_s, rd, wr,
		   st.io.wait_read_ns / 1e9, st.io.wait_write_ns / 1e9, st.runs, st.merge_passes,
		   st.memory_peak, hwm, direct_name(direct), ok ? 1 : 0);
	fflush(stdout);
	return ok ? 0 : 1;
}
