/*
 * bench_suffix.c — measures the suffix-array builder on a file: time,
 * µs per byte, spill I/O against [T]'s sort(30n) + scan(6n), recursion,
 * peak memory; runs the external checker on the result and, when built
 * with -DWITH_DIVSUFSORT (libdivsufsort-dev), compares with divsufsort's
 * suffix array, time and BWT.
 *
 *   bench_suffix FILE [memory_MB] [spill_dir] [block_KB]
 *
 * Build (from the repository root), with the engine's sources
 * src/core/ *.c and src/core/text/ *.c (written with a space here because
 * this is a comment):
 *   gcc -std=gnu11 -O2 -fopenmp -pthread -Isrc/core -Isrc/core/text
 *     [-DWITH_DIVSUFSORT] bench/bench_suffix.c <engine sources>
 *     -o build/bench_suffix [-ldivsufsort]
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_util.h"
#include "core/text/xxl_suffix.h"

#ifdef WITH_DIVSUFSORT
#include <divsufsort.h>
#endif

static double
seconds(void)
{
	return xxl_now_ns() / 1e9;
}

static long
rss_peak_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int
main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : NULL;
	unsigned char *t;
	long		n;
	size_t		memory;
	const char *dir = argc > 3 ? argv[3] : "/tmp";
	const char *dirs[1] = {dir};
	xxl_sa_config cfg;
	xxl_error	err = {0};
	xxl_sa	   *sa;
	xxl_sa_stats st;
	uint64_t   *out;
	uint64_t	pos,
				count = 0;
	double		t0,
				t_build,
				t_total;
	long		rss0;
	bool		ok = false,
				check = getenv("SKIP_CHECK") == NULL || strcmp(getenv("SKIP_CHECK"), "1") != 0;
	char		why[256] = "";
	char		prefix[64];

	if (path == NULL)
	{
		fprintf(stderr, "usage: %s FILE [memory_MB] [spill_dir] [block_KB]\n", argv[0]);
		return 2;
	}
	t = bench_read_file(path, 0, &n);
	memory = argc > 2 ? (size_t) (atof(argv[2]) * 1024 * 1024) : (size_t) n / 8;

	memset(&cfg, 0, sizeof(cfg));
	cfg.res.memory = memory;
	cfg.res.threads = 0;
	cfg.res.disk.dirs = dirs;
	cfg.res.disk.ndisks = 1;
	snprintf(prefix, sizeof(prefix), "bench_suffix%d", (int) getpid());
	cfg.res.disk.file_prefix = prefix;
	cfg.res.disk.block_size = argc > 4 ? (size_t) atol(argv[4]) * 1024 : 2 * 1024 * 1024;
	cfg.res.disk.try_direct = false;
	cfg.res.disk.strategy = XXL_ALLOC_STRIPING;
	/* SA_ALGORITHM=dc3 builds by DC3 at every level; default: the builder chooses */
	if (getenv("SA_ALGORITHM") && strcmp(getenv("SA_ALGORITHM"), "dc3") == 0)
		cfg.algorithm = XXL_SA_DC3;

	out = malloc((n + 1) * sizeof(uint64_t));
	rss0 = rss_peak_kb();
	t0 = seconds();
	sa = xxl_sa_create(&cfg, &err);
	if (sa == NULL)
	{
		fprintf(stderr, "create: %s\n", err.message);
		return 1;
	}
	for (long off = 0; off < n; off += 1 << 20)
		if (xxl_sa_put(sa, t + off, (size_t) (n - off < (1 << 20) ? n - off : (1 << 20))) != XXL_OK)
			break;
	if (xxl_sa_error(sa)->code == XXL_OK)
		xxl_sa_build(sa);
	t_build = seconds() - t0;
	if (xxl_sa_error(sa)->code == XXL_OK)
		while (xxl_sa_next(sa, &pos) > 0)
			out[count++] = pos;
	t_total = seconds() - t0;
	if (xxl_sa_error(sa)->code != XXL_OK)
	{
		fprintf(stderr, "build: %s\n", xxl_sa_error(sa)->message);
		xxl_sa_destroy(sa);
		return 1;
	}
	xxl_sa_stats_get(sa, &st);
	xxl_sa_destroy(sa);

	printf("text %s: n = %ld bytes, memory %.2f MB (n/%.1f), blocks %zu KB (spools) .. %zu KB "
		   "(largest sorter block)\n", path, n, memory / 1048576.0, (double) n / memory,
		   st.block_size / 1024, st.sorter_block_max / 1024);
	printf("DC3: %.2f s (build %.2f s + output %.2f s%s), %.3f us/byte, %d levels (%d external)\n",
		   t_total, t_build, t_total - t_build, st.merge_async ? ", merge on a worker" : "",
		   t_total * 1e6 / n, st.levels, st.external_levels);
	printf("  I/O: read %.1f MB + written %.1f MB = %.1f B/byte; [T] sort(30n)+scan(6n) "
		   "= %.0f B/byte (32-bit words); measured/formula = %.2f\n",
		   st.bytes_read / 1048576.0, st.bytes_written / 1048576.0,
		   (double) (st.bytes_read + st.bytes_written) / n, (double) st.thesis_bytes / n,
		   (double) (st.bytes_read + st.bytes_written) / st.thesis_bytes);
	printf("  sorted %.1f B/byte (one-pass sorts would move %.1f B/byte), runs %" PRIu64
		   ", max merge passes %d\n",
		   (double) st.sorted_bytes / n, 2.0 * st.sorted_bytes / n + (double) st.spool_bytes / n,
		   st.runs, st.max_merge_passes);
	printf("  budget peak %.2f MB of %.2f MB; process max RSS %.1f MB (text + output arrays "
		   "%.1f MB, before build %.1f MB)\n",
		   st.memory_peak / 1048576.0, st.memory_limit / 1048576.0, rss_peak_kb() / 1024.0,
		   (n + (n + 1) * 8.0) / 1048576.0, rss0 / 1024.0);
	for (int l = 0; l < st.levels; l++)
		printf("  level %d: n %" PRIu64 ", alphabet %" PRIu64 ", %d-byte chars, %s%s, "
			   "sorted %.1f MB, I/O %.1f MB\n",
			   l, st.level[l].n, st.level[l].alphabet, st.level[l].char_bytes,
			   st.level[l].internal ? "in memory" : "external",
			   !st.level[l].internal && st.level[l].names_unique ? " (names unique)" : "",
			   st.level[l].sorted_bytes / 1048576.0, st.level[l].io_bytes / 1048576.0);
	if (count != (uint64_t) n)
	{
		printf("WRONG: %" PRIu64 " suffixes\n", count);
		return 1;
	}

	/* the external checker on the result, same budget (SKIP_CHECK=1: not) */
	if (!check)
		ok = true;				/* not checked: the exit status speaks of the rest */
	else
	{
		xxl_sa_checker *c;
		xxl_sa_check_stats cst;

		cfg.size_hint = (uint64_t) n;
		c = xxl_sa_check_create(&cfg, &err);
		if (c == NULL)
		{
			fprintf(stderr, "checker: %s\n", err.message);
			return 1;
		}
		t0 = seconds();
		if (xxl_sa_check_put_text(c, t, n) != XXL_OK || xxl_sa_check_put_sa(c, out, n) != XXL_OK ||
			xxl_sa_check_run(c, &ok, why, sizeof(why)) != XXL_OK)
			snprintf(why, sizeof(why), "error: %s", xxl_sa_check_error(c)->message);
		xxl_sa_check_stats_get(c, &cst);
		printf("checker: %s %s, %.2f s = %.3f us/byte, I/O %.1f B/byte\n", ok ? "OK" : "FAILED",
			   why, seconds() - t0, (seconds() - t0) * 1e6 / n,
			   (double) (cst.bytes_read + cst.bytes_written) / n);
		xxl_sa_check_destroy(c);
	}

#ifdef WITH_DIVSUFSORT
	{
		int32_t    *A = malloc((n + 1) * sizeof(int32_t));
		long		diff = -1;

		t0 = seconds();
		divsufsort(t, A, (int32_t) n);
		printf("divsufsort (in memory, %.0f MB): %.2f s = %.3f us/byte\n",
			   (n + n * 4.0) / 1048576.0, seconds() - t0, (seconds() - t0) * 1e6 / n);
		for (long i = 0; i < n; i++)
			if ((uint64_t) A[i] != out[i])
			{
				diff = i;
				break;
			}
		printf("divsufsort agrees: %s\n", diff < 0 ? "yes" : "NO");
		free(A);
		if (diff >= 0)
			return 1;
	}
#endif
	free(out);
	free(t);
	return ok ? 0 : 1;
}
