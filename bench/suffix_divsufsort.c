/*
 * suffix_divsufsort.c — the in-memory peer of xxl.suffix_array_into in the
 * suffix-array benchmark (bench/run_suffix.sh): libdivsufsort (Debian
 * libdivsufsort-dev) on the first LEN bytes of a file, 32-bit indexes
 * (divsufsort: 5n bytes) or 64-bit ones (divsufsort64: 9n bytes, what texts
 * beyond 2 GB need).
 *
 *   suffix_divsufsort FILE [LEN] [32|64]
 *
 * Timed: divsufsort alone (the text is read into memory first, untimed).
 * Then sufcheck verifies the array (untimed).  Prints one line
 *   RESULT tool=divsufsort32 n=... secs=... us_per_byte=... maxrss_kb=... ok=1
 * where maxrss_kb is the process's peak resident memory (getrusage), text
 * and suffix array included.
 */
#define _GNU_SOURCE
#include <divsufsort.h>
#include <divsufsort64.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_util.h"

int
main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : NULL;
	long		len = argc > 2 ? atol(argv[2]) : 0;
	int			bits = argc > 3 ? atoi(argv[3]) : 32;
	long		n;
	unsigned char *t;
	double		t0,
				secs;
	int			bad;
	struct rusage ru;

	if (path == NULL || (bits != 32 && bits != 64))
	{
		fprintf(stderr, "usage: %s FILE [LEN] [32|64]\n", argv[0]);
		return 2;
	}
	t = bench_read_file(path, len, &n);
	if (bits == 32 && n >= INT32_MAX)
	{
		fprintf(stderr, "%ld bytes need the 64-bit version\n", n);
		return 2;
	}

	if (bits == 32)
	{
		saidx_t    *sa = malloc(((size_t) n + 1) * sizeof(saidx_t));

		t0 = bench_now();
		if (divsufsort(t, sa, (saidx_t) n) != 0)
			return 1;
		secs = bench_now() - t0;
		bad = sufcheck(t, sa, (saidx_t) n, 0);
		free(sa);
	}
	else
	{
		saidx64_t  *sa = malloc(((size_t) n + 1) * sizeof(saidx64_t));

		t0 = bench_now();
		if (divsufsort64(t, sa, (saidx64_t) n) != 0)
			return 1;
		secs = bench_now() - t0;
		bad = sufcheck64(t, sa, (saidx64_t) n, 0);
		free(sa);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("RESULT tool=divsufsort%d n=%ld secs=%.3f us_per_byte=%.4f maxrss_kb=%ld ok=%d\n",
		   bits, n, secs, secs * 1e6 / (n > 0 ? n : 1), ru.ru_maxrss, bad == 0);
	free(t);
	return bad == 0 ? 0 : 1;
}
