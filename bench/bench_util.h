/*
 * bench_util.h — what the engine's C benchmark programs share: the
 * splitmix64 generator (the same sequence stxxl_sort_bench.cpp draws),
 * environment knobs, a monotonic clock, reading a text file, the process's
 * peak memory and the exit on an engine error.  Header-only, so each
 * program still builds from one command line.
 */
#ifndef PGXXL_BENCH_UTIL_H
#define PGXXL_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/xxl_common.h"

/* splitmix64's finaliser: a well-mixed 64-bit value from any counter. */
static inline uint64_t
bench_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* The next value of the splitmix64 sequence in *state. */
static inline uint64_t
bench_splitmix64(uint64_t *state)
{
	return bench_mix64(*state += UINT64_C(0x9E3779B97F4A7C15));
}

/* An unsigned environment knob, dflt when unset or empty. */
static inline uint64_t
bench_env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 10) : dflt;
}

/* Seconds on the monotonic clock. */
static inline double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The first len bytes of a file (all of it if len is 0 or more than it
 * has) in a new buffer with one spare byte; *n gets their number.  Exits
 * with a message when the file cannot be read.
 */
static inline unsigned char *
bench_read_file(const char *path, long len, long *n)
{
	FILE	   *f = fopen(path, "rb");
	unsigned char *t;

	if (f == NULL)
	{
		perror(path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	*n = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (len > 0 && len < *n)
		*n = len;
	t = malloc((size_t) *n + 1);
	if (t == NULL || fread(t, 1, (size_t) *n, f) != (size_t) *n)
	{
		fprintf(stderr, "could not read %ld bytes of %s\n", *n, path);
		exit(2);
	}
	fclose(f);
	return t;
}

/* VmHWM of this process in KiB (peak resident set), or -1. */
static inline long
bench_vm_hwm_kb(void)
{
	FILE	   *f = fopen("/proc/self/status", "r");
	char		line[256];
	long		kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

/* An engine call failed: say which and why (prefixed by prog), exit 1. */
static inline void
bench_die(const char *prog, const char *what, const xxl_error *err)
{
	fprintf(stderr, "%s: %s failed: %s: %s (errno %d)\n", prog, what,
			xxl_status_name(err->code), err->message, err->sys_errno);
	exit(1);
}

#endif							/* PGXXL_BENCH_UTIL_H */
