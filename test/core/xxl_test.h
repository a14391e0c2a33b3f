/*
 * xxl_test.h — a tiny header-only test framework for the engine's unit tests:
 * CHECK macros, test registration, a runner, and helpers every test program
 * needs (spill directories, a deterministic random generator, thread and
 * memory probes).
 *
 * Each test program is one .c file that includes this header once, defines
 * tests with XT_TEST(name) { ... } and calls xt_main() from main().  The
 * runner prints one line per failed check, one line per test, and ends with
 * exactly "N passed, N failed" (counting tests); the exit status is non-zero
 * if any test failed.  A test counts as failed if any of its checks failed or
 * if it left a file in the spill directories.
 *
 * Environment:
 *   XXL_TEST_QUICK=1   shrink the big cases (for valgrind)
 *   XXL_TEST_KEEP=1    leave the spill directory behind
 *   TMPDIR             where the per-program spill directory is created
 * Arguments: substrings of test names to run (default: all).
 */
#ifndef XXL_TEST_H
#define XXL_TEST_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/xxl_common.h"

#define XT_MAX_TESTS 256
#define XT_NDIRS 3

typedef void (*xt_fn) (void);

typedef struct xt_test
{
	const char *name;
	xt_fn		fn;
} xt_test;

static xt_test xt_tests[XT_MAX_TESTS];
static int	xt_ntests;
static int	xt_check_failures;	/* failed checks in the current test */
static const char *xt_current = "";
static char xt_base[3800];		/* the program's spill directory */
static char xt_dir_buf[XT_NDIRS][4096];

/* Spill directories of this program: xt_dirs[0..XT_NDIRS) */
static const char *xt_dirs[XT_NDIRS];

static void
xt_register(const char *name, xt_fn fn)
{
	if (xt_ntests >= XT_MAX_TESTS)
	{
		fprintf(stderr, "too many tests\n");
		exit(2);
	}
	xt_tests[xt_ntests].name = name;
	xt_tests[xt_ntests].fn = fn;
	xt_ntests++;
}

/* Tests register themselves before main() runs, in source order. */
#define XT_TEST(name) \
	static void xt_test_##name(void); \
	__attribute__((constructor)) static void xt_reg_##name(void) \
	{ xt_register(#name, xt_test_##name); } \
	static void xt_test_##name(void)

static void
xt_fail(const char *file, int line, const char *fmt,...)
	__attribute__((format(printf, 3, 4)));

static void
xt_fail(const char *file, int line, const char *fmt,...)
{
	va_list		ap;

	/* after many failures in one test the rest is noise */
	if (xt_check_failures < 20)
	{
		fprintf(stdout, "  FAIL %s:%d [%s]: ", file, line, xt_current);
		va_start(ap, fmt);
		vfprintf(stdout, fmt, ap);
		va_end(ap);
		fputc('\n', stdout);
		fflush(stdout);
	}
	xt_check_failures++;
}

#define CHECK(cond) \
	do { if (!(cond)) xt_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); } while (0)

#define CHECK_MSG(cond, ...) \
	do { if (!(cond)) xt_fail(__FILE__, __LINE__, __VA_ARGS__); } while (0)

#define CHECK_EQ(a, b) \
	do { \
		unsigned long long xt_a_ = (unsigned long long) (a); \
		unsigned long long xt_b_ = (unsigned long long) (b); \
		if (xt_a_ != xt_b_) \
			xt_fail(__FILE__, __LINE__, "CHECK_EQ(%s, %s): %llu != %llu", \
					#a, #b, xt_a_, xt_b_); \
	} while (0)

#define CHECK_LE(a, b) \
	do { \
		unsigned long long xt_a_ = (unsigned long long) (a); \
		unsigned long long xt_b_ = (unsigned long long) (b); \
		if (!(xt_a_ <= xt_b_)) \
			xt_fail(__FILE__, __LINE__, "CHECK_LE(%s, %s): %llu > %llu", \
					#a, #b, xt_a_, xt_b_); \
	} while (0)

#define CHECK_GE(a, b) CHECK_LE(b, a)

/* Compare xxl_status values, printing their names. */
#define CHECK_STATUS(got, want) \
	do { \
		int xt_g_ = (int) (got); \
		int xt_w_ = (int) (want); \
		if (xt_g_ != xt_w_) \
			xt_fail(__FILE__, __LINE__, "CHECK_STATUS(%s): got %d (%s), want %d (%s)", \
					#got, xt_g_, xt_status_str(xt_g_), xt_w_, xt_status_str(xt_w_)); \
	} while (0)

/* Like CHECK, but leaves the test on failure (the rest would crash). */
#define REQUIRE(cond) \
	do { if (!(cond)) { xt_fail(__FILE__, __LINE__, "REQUIRE(%s)", #cond); return; } } while (0)

#define REQUIRE_MSG(cond, ...) \
	do { if (!(cond)) { xt_fail(__FILE__, __LINE__, __VA_ARGS__); return; } } while (0)

static inline const char *
xt_status_str(int code)
{
	if (code < 0)
		code = -code;
	return xxl_status_name((xxl_status) code);
}

/* Helpers --------------------------------------------------------------- */

static inline bool
xt_quick(void)
{
	const char *q = getenv("XXL_TEST_QUICK");

	return q != NULL && *q != '\0' && *q != '0';
}

/* Number of regular entries (not . or ..) in a directory, or -1. */
static inline int
xt_dir_count(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;
	int			n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* Files in all spill directories. */
static inline int
xt_spill_files(void)
{
	int			n = 0;

	for (int i = 0; i < XT_NDIRS; i++)
		n += xt_dir_count(xt_dirs[i]);
	return n;
}

/* Remove every entry of a directory (leftovers of a failed test). */
static void
xt_dir_clean(const char *dir, bool report)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;
	char		path[8192];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
	{
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (report)
			printf("  leftover spill file: %s\n", path);
		unlink(path);
	}
	closedir(d);
}

/* Threads of this process (entries of /proc/self/task), or -1. */
static inline int
xt_thread_count(void)
{
	return xt_dir_count("/proc/self/task");
}

/*
 * The thread count once it is at most limit, or after a second: a joined
 * thread has ended for pthread_join (its tid is cleared on exit) but may
 * stay listed in /proc/self/task for a moment until the kernel reaps it.
 */
static inline int
xt_threads_at_most(int limit)
{
	int			n = xt_thread_count();

	for (int i = 0; i < 100 && n > limit; i++)
	{
		struct timespec ms = {0, 10 * 1000 * 1000};

		nanosleep(&ms, NULL);
		n = xt_thread_count();
	}
	return n;
}

/* A value from /proc/self/status in kB (e.g. "VmRSS", "VmHWM"), or -1. */
static inline long
xt_proc_status_kb(const char *field)
{
	FILE	   *f = fopen("/proc/self/status", "r");
	char		line[256];
	size_t		flen = strlen(field);
	long		v = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
	{
		if (strncmp(line, field, flen) == 0 && line[flen] == ':')
		{
			v = strtol(line + flen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* Reset VmHWM to the current RSS (Linux >= 4.0); false if not possible. */
static inline bool
xt_reset_hwm(void)
{
	FILE	   *f = fopen("/proc/self/clear_refs", "w");
	bool		ok;

	if (f == NULL)
		return false;
	ok = fputs("5", f) >= 0;
	ok = (fclose(f) == 0) && ok;
	return ok;
}

static inline double
xt_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* splitmix64: a small deterministic generator. */
typedef struct xt_rng
{
	uint64_t	s;
} xt_rng;

static inline uint64_t
xt_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline uint64_t
xt_next(xt_rng *r)
{
	r->s += UINT64_C(0x9e3779b97f4a7c15);
	return xt_mix64(r->s);
}

/* Uniform in [0, n). */
static inline uint64_t
xt_below(xt_rng *r, uint64_t n)
{
	return n ? xt_next(r) % n : 0;
}

/* 64-bit hash of a byte string (FNV-1a folded through the mixer). */
static inline uint64_t
xt_hash(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t	h = UINT64_C(0xcbf29ce484222325) ^ seed;

	for (size_t i = 0; i < len; i++)
	{
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return xt_mix64(h ^ len);
}

static inline void
xt_put_be64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--)
	{
		p[i] = (unsigned char) v;
		v >>= 8;
	}
}

static inline uint64_t
xt_get_be64(const unsigned char *p)
{
	uint64_t	v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

/* Order-independent fingerprint of a multiset of byte strings. */
typedef struct xt_multiset
{
	uint64_t	count;
	uint64_t	sum;
	uint64_t	xor;
	uint64_t	sumsq;
} xt_multiset;

static inline void
xt_multiset_add(xt_multiset *m, const void *data, size_t len)
{
	uint64_t	h1 = xt_hash(data, len, 1);
	uint64_t	h2 = xt_hash(data, len, 2);

	m->count++;
	m->sum += h1;
	m->xor ^= h2;
	m->sumsq += h1 * h1;
}

static inline bool
xt_multiset_equal(const xt_multiset *a, const xt_multiset *b)
{
	return a->count == b->count && a->sum == b->sum && a->xor == b->xor &&
		a->sumsq == b->sumsq;
}

/* Runner ---------------------------------------------------------------- */

static bool
xt_selected(const char *name, int argc, char **argv)
{
	if (argc <= 1)
		return true;
	for (int i = 1; i < argc; i++)
		if (strstr(name, argv[i]) != NULL)
			return true;
	return false;
}

static void
xt_setup_dirs(const char *program)
{
	const char *tmp = getenv("TMPDIR");
	const char *slash = strrchr(program, '/');

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(xt_base, sizeof(xt_base), "%s/xxl_%s.XXXXXX", tmp, slash ? slash + 1 : program);
	if (mkdtemp(xt_base) == NULL)
	{
		fprintf(stderr, "mkdtemp(%s): %s\n", xt_base, strerror(errno));
		exit(2);
	}
	for (int i = 0; i < XT_NDIRS; i++)
	{
		snprintf(xt_dir_buf[i], sizeof(xt_dir_buf[i]), "%s/d%d", xt_base, i);
		if (mkdir(xt_dir_buf[i], 0700) != 0)
		{
			fprintf(stderr, "mkdir(%s): %s\n", xt_dir_buf[i], strerror(errno));
			exit(2);
		}
		xt_dirs[i] = xt_dir_buf[i];
	}
}

static int
xt_main(int argc, char **argv)
{
	int			passed = 0,
				failed = 0;
	int			leftover;

	setvbuf(stdout, NULL, _IOLBF, 0);
	xt_setup_dirs(argv[0]);
	printf("# spill directory %s%s\n", xt_base, xt_quick() ? " (quick mode)" : "");
	for (int i = 0; i < xt_ntests; i++)
	{
		double		t0;
		int			files;

		if (!xt_selected(xt_tests[i].name, argc, argv))
			continue;
		xt_current = xt_tests[i].name;
		xt_check_failures = 0;
		t0 = xt_seconds();
		xt_tests[i].fn();
		files = xt_spill_files();
		if (files != 0)
		{
			xt_fail(__FILE__, __LINE__, "%d file(s) left in the spill directories", files);
			for (int d = 0; d < XT_NDIRS; d++)
				xt_dir_clean(xt_dirs[d], true);
		}
		if (xt_check_failures == 0)
			passed++;
		else
			failed++;
		printf("%s %s (%.2fs)\n", xt_check_failures ? "not ok" : "ok", xt_current,
			   xt_seconds() - t0);
	}

	/* the spill directory must be empty at the very end */
	leftover = xt_spill_files();
	if (leftover != 0)
	{
		printf("  FAIL: %d file(s) left in %s\n", leftover, xt_base);
		failed++;
	}
	if (getenv("XXL_TEST_KEEP") == NULL)
	{
		for (int d = 0; d < XT_NDIRS; d++)
		{
			xt_dir_clean(xt_dirs[d], false);
			rmdir(xt_dirs[d]);
		}
		if (rmdir(xt_base) != 0)
		{
			printf("  FAIL: could not remove %s: %s\n", xt_base, strerror(errno));
			failed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif							/* XXL_TEST_H */
