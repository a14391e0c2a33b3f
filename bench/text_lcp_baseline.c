/*
 * text_lcp_baseline.c — the in-RAM peer of xxl's LCP array and repeats in
 * the text benchmark (bench/run_text_lcp.sh): what google-research's
 * deduplicate-text-datasets does on one machine, in C.  libdivsufsort
 * (32-bit indexes) builds the suffix array, Kasai's algorithm over the Φ
 * array (PLCP in place) the LCP array, and a scan over the LCP array finds
 * the repeats with xxl.repeats' definition: every window of K bytes whose
 * suffix-array run of LCP >= K has at least 2 suffixes, overlapping windows
 * merged into ranges.
 *
 *   text_lcp_baseline FILE lcp            suffix array + LCP
 *   text_lcp_baseline FILE repeats K      suffix array + LCP + repeats
 *
 * The text is read untimed.  Prints one line
 *   RESULT mode=... n=... secs=... sa_secs=... lcp_secs=... maxrss_kb=...
 *          [ranges=... covered=...]
 * maxrss_kb: the process's peak resident memory (text, suffix array, PLCP
 * and, for repeats, a bit per position, included).
 */
#define _GNU_SOURCE
#include <divsufsort.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_util.h"

int
main(int argc, char **argv)
{
	const char *path = argc > 2 ? argv[1] : NULL;
	const char *mode = argc > 2 ? argv[2] : "";
	long		k = argc > 3 ? atol(argv[3]) : 0;
	long		n;
	unsigned char *t;
	int32_t    *sa,
			   *plcp;
	double		t0,
				t1,
				t2,
				t3;
	struct rusage ru;
	long		ranges = 0,
				covered = 0;

	if (path == NULL || (strcmp(mode, "lcp") != 0 && (strcmp(mode, "repeats") != 0 || k < 1)))
	{
		fprintf(stderr, "usage: %s FILE lcp | FILE repeats K\n", argv[0]);
		return 2;
	}
	t = bench_read_file(path, 0, &n);
	if (n >= INT32_MAX)
	{
		fprintf(stderr, "%s: at most 2 GB\n", path);
		return 2;
	}
	sa = malloc((size_t) n * sizeof(int32_t));
	plcp = malloc((size_t) n * sizeof(int32_t));
	if (sa == NULL || plcp == NULL)
		return 2;

	t0 = bench_now();
	if (divsufsort(t, sa, (saidx_t) n) != 0)
		return 1;
	t1 = bench_now();
	/* Φ: the suffix ranked before each position; then PLCP in place (Kasai) */
	plcp[sa[0]] = -1;
	for (long r = 1; r < n; r++)
		plcp[sa[r]] = sa[r - 1];
	for (long i = 0, h = 0; i < n; i++)
	{
		long		j = plcp[i];

		if (j < 0)
		{
			plcp[i] = 0;
			h = 0;
			continue;
		}
		while (i + h < n && j + h < n && t[i + h] == t[j + h])
			h++;
		plcp[i] = (int32_t) h;
		if (h > 0)
			h--;
	}
	t2 = bench_now();
	t3 = t2;
	if (k > 0)
	{
		/* windows: runs of LCP >= k in rank order; then ranges in text order */
		uint8_t    *mark = calloc((size_t) n / 8 + 1, 1);
		long		run_start = 0;

		for (long r = 1; r <= n; r++)
			if (r == n || plcp[sa[r]] < k)
			{
				if (r - run_start >= 2)
					for (long x = run_start; x < r; x++)
						mark[sa[x] / 8] |= (uint8_t) (1 << (sa[x] % 8));
				run_start = r;
			}
		for (long p = 0, end = -1; p < n; p++)
			if (mark[p / 8] & (1 << (p % 8)))
			{
				if (p >= end)
				{
					ranges++;
					covered += k;
				}
				else
					covered += p + k - end;
				end = p + k;
			}
		t3 = bench_now();
		free(mark);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("RESULT mode=%s n=%ld secs=%.3f sa_secs=%.3f lcp_secs=%.3f maxrss_kb=%ld",
		   mode, n, t3 - t0, t1 - t0, t2 - t1, ru.ru_maxrss);
	if (k > 0)
		printf(" ranges=%ld covered=%ld", ranges, covered);
	printf("\n");
	return 0;
}
