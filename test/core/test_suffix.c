/*
 * test_suffix.c — unit tests of the text engine (xxl_suffix.h): suffix
 * arrays by external DC3 / in-memory SA-IS, the BWT mode and the §5.7
 * checker.
 *
 * Oracles: a naive suffix sort (qsort of positions with memcmp) on small
 * texts; on texts too long for it (unary and periodic texts make naive
 * comparisons quadratic) the in-memory build, itself checked against the
 * naive sort on the small cases, plus the external checker.  Every small
 * case runs three ways: a roomy budget (in memory), a roomy budget with
 * external DC3 forced at every level, and the smallest budget with external
 * DC3 forced; longer texts run at a tiny budget where sorters really spill
 * and the recursion really goes deep.  The statistics must show which path
 * ran, the budget must hold, and the spill directories must be empty after
 * every test (the framework checks).
 */
#include <limits.h>

#include "xxl_test.h"

#include "core/text/xxl_suffix.h"

#define KB 1024
#define MB (1024 * 1024)

typedef enum run_mode
{
	RUN_ROOMY,					/* in memory */
	RUN_FORCED,					/* roomy budget, external DC3 everywhere */
	RUN_TINY_FORCED,			/* smallest budget, external DC3 everywhere */
	RUN_TINY					/* smallest budget, the budget decides */
} run_mode;

static const char *const mode_names[] = {"roomy", "forced", "tiny-forced", "tiny"};

/* the suffix sorter the corpus tests run: DC3 everywhere unless a test says */
static xxl_sa_algorithm test_algorithm = XXL_SA_DC3;
static int	induced_builds;		/* builds whose top level was induced */

static xxl_sa_config
sa_config(run_mode mode)
{
	xxl_sa_config c;

	memset(&c, 0, sizeof(c));
	c.res.memory = (mode == RUN_ROOMY || mode == RUN_FORCED) ? 64 * MB : xxl_sa_min_memory();
	c.res.threads = 2;
	c.res.disk.dirs = xt_dirs;
	c.res.disk.ndisks = 2;
	c.res.disk.file_prefix = "test_suffix";
	c.res.disk.block_size = 64 * KB;
	c.res.disk.try_direct = false;
	c.res.disk.strategy = XXL_ALLOC_RANDOM_CYCLING;
	c.res.disk.seed = 77;
	c.internal_max = (mode == RUN_FORCED || mode == RUN_TINY_FORCED) ? 1 : 0;
	c.algorithm = test_algorithm;
	return c;
}

/* Naive oracle ------------------------------------------------------------ */

static const unsigned char *naive_text;
static uint64_t naive_n;

static int
naive_cmp(const void *a, const void *b)
{
	uint64_t	i = *(const uint64_t *) a,
				j = *(const uint64_t *) b;
	uint64_t	li = naive_n - i,
				lj = naive_n - j;
	int			c = memcmp(naive_text + i, naive_text + j, li < lj ? li : lj);

	if (c != 0)
		return c;
	return li < lj ? -1 : li > lj ? 1 : 0;
}

static uint64_t *
naive_sa(const unsigned char *t, uint64_t n)
{
	uint64_t   *sa = malloc((n + 1) * sizeof(uint64_t));

	for (uint64_t i = 0; i < n; i++)
		sa[i] = i;
	naive_text = t;
	naive_n = n;
	qsort(sa, n, sizeof(uint64_t), naive_cmp);
	return sa;
}

/* divbwt's convention: T[n-1], then T[SA[j]-1] for SA[j] != 0. */
static unsigned char *
bwt_from_sa(const unsigned char *t, const uint64_t *sa, uint64_t n, uint64_t *primary)
{
	unsigned char *b = malloc(n + 1);
	uint64_t	k = 0;

	*primary = 0;
	if (n == 0)
		return b;
	b[k++] = t[n - 1];
	for (uint64_t j = 0; j < n; j++)
	{
		if (sa[j] == 0)
			*primary = j + 1;
		else
			b[k++] = t[sa[j] - 1];
	}
	return b;
}

/* Texts -------------------------------------------------------------------- */

typedef struct text
{
	char		name[64];
	unsigned char *data;
	uint64_t	n;
} text;

#define MAX_TEXTS 400
static text corpus[MAX_TEXTS];
static int	ncorpus;

static text *
add_text(const char *name, uint64_t n)
{
	text	   *t = &corpus[ncorpus++];

	snprintf(t->name, sizeof(t->name), "%s/%llu", name, (unsigned long long) n);
	t->data = malloc(n + 1);
	t->n = n;
	return t;
}

static void
gen_random(unsigned char *d, uint64_t n, int sigma, uint64_t seed)
{
	xt_rng		r = {seed};

	for (uint64_t i = 0; i < n; i++)
		d[i] = (unsigned char) (sigma == 256 ? xt_below(&r, 256) : 'a' + xt_below(&r, sigma));
}

static void
gen_fibonacci(unsigned char *d, uint64_t n)
{
	/* S1 = b, S2 = a, Sk = S(k-1) S(k-2): the prefix of length n */
	unsigned char *prev = malloc(n + 2),
			   *cur = malloc(n + 2);
	uint64_t	lp = 1,
				lc = 1;

	prev[0] = 'b';
	cur[0] = 'a';
	while (lc < n)
	{
		unsigned char *next = malloc(n + 2);
		uint64_t	take = lp < n - lc ? lp : n - lc;

		memcpy(next, cur, lc);
		memcpy(next + lc, prev, take);
		free(prev);
		prev = cur;
		lp = lc;
		cur = next;
		lc += take;
	}
	memcpy(d, cur, n);
	free(prev);
	free(cur);
}

static void
gen_periodic(unsigned char *d, uint64_t n, const char *unit)
{
	size_t		u = unit[0] ? strlen(unit) : 1;	/* "" stands for "\0" */

	for (uint64_t i = 0; i < n; i++)
		d[i] = (unsigned char) unit[i % u];
}

static void
build_corpus(void)
{
	static const uint64_t lens[] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 31, 32, 33,
	100, 101, 102, 257, 1000, 1001, 1002, 3000};
	text	   *t;

	if (ncorpus > 0)
		return;
	add_text("empty", 0);
	t = add_text("byte00", 1), t->data[0] = 0x00;
	t = add_text("byteFF", 1), t->data[0] = 0xFF;
	t = add_text("a", 1), t->data[0] = 'a';
	t = add_text("00ff00", 3), memcpy(t->data, "\0\xff\0", 3);
	t = add_text("ff00ff00", 4), memcpy(t->data, "\xff\0\xff\0", 4);
	t = add_text("0000ff", 3), memcpy(t->data, "\0\0\xff", 3);
	t = add_text("ffff00", 3), memcpy(t->data, "\xff\xff\0", 3);
	t = add_text("banana", 6), memcpy(t->data, "banana", 6);
	t = add_text("mississippi", 11), memcpy(t->data, "mississippi", 11);
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
	{
		uint64_t	n = lens[k];

		gen_random(add_text("rand2", n)->data, n, 2, 11 + n);
		gen_random(add_text("rand4", n)->data, n, 4, 22 + n);
		gen_random(add_text("rand256", n)->data, n, 256, 33 + n);
		gen_periodic(add_text("unary", n)->data, n, "a");
		gen_periodic(add_text("zeros", n)->data, n, "");
		if (n >= 3)
		{
			gen_periodic(add_text("abc", n)->data, n, "abc");
			gen_periodic(add_text("ab", n)->data, n, "ab");
			gen_fibonacci(add_text("fib", n)->data, n);
			t = add_text("00ff", n);
			for (uint64_t i = 0; i < n; i++)
				t->data[i] = (i % 5 == 2) ? 0xFF : 0x00;
			/* a random text that uses all 256 byte values (2-byte characters) */
			t = add_text("all256", n + 256);
			gen_random(t->data, n + 256, 256, 44 + n);
			for (int b = 0; b < 256; b++)
				t->data[(b * 7919) % (n + 256)] = (unsigned char) b;
			for (int b = 0; b < 256; b++)
				t->data[b] = (unsigned char) b;
			/* random with long repeats: Random2-like */
			t = add_text("random2x", 2 * n);
			gen_random(t->data, n, 3, 55 + n);
			memcpy(t->data + n, t->data, n);
		}
	}
}

/* Running the builder ------------------------------------------------------- */

typedef struct built
{
	uint64_t   *sa;
	uint64_t	count;
	int		   *prev;
	xxl_sa_stats st;
	xxl_status	rc;
} built;

/* Push the text in chunks of chunk bytes (0: one piece; -1: random sizes). */
static built
run_sa(const xxl_sa_config *cfg, const unsigned char *t, uint64_t n, long chunk)
{
	built		b;
	xxl_error	err = {0};
	xxl_sa	   *sa;
	uint64_t	pos;
	int			prev;
	int			got;
	xt_rng		r = {n * 31 + 7};

	memset(&b, 0, sizeof(b));
	b.sa = malloc((n + 1) * sizeof(uint64_t));
	b.prev = malloc((n + 1) * sizeof(int));
	sa = xxl_sa_create(cfg, &err);
	if (sa == NULL)
	{
		b.rc = err.code;
		printf("  # create: %s\n", err.message);
		return b;
	}
	for (uint64_t off = 0; off < n;)
	{
		uint64_t	len = chunk == 0 ? n - off : chunk > 0 ? (uint64_t) chunk : 1 + xt_below(&r, 300);

		if (len > n - off)
			len = n - off;
		if ((b.rc = xxl_sa_put(sa, t + off, len)) != XXL_OK)
			goto out;
		off += len;
	}
	if ((b.rc = xxl_sa_build(sa)) != XXL_OK)
		goto out;
	while ((got = cfg->with_prev ? xxl_sa_next_prev(sa, &pos, &prev) : xxl_sa_next(sa, &pos)) > 0)
	{
		if (b.count <= n)
		{
			b.sa[b.count] = pos;
			b.prev[b.count] = cfg->with_prev ? prev : -2;
		}
		b.count++;
	}
	if (got < 0)
		b.rc = xxl_sa_error(sa)->code;
out:
	if (b.rc != XXL_OK)
		printf("  # error: %s\n", xxl_sa_error(sa)->message);
	xxl_sa_stats_get(sa, &b.st);
	xxl_sa_destroy(sa);
	return b;
}

static void
built_free(built *b)
{
	free(b->sa);
	free(b->prev);
}

static bool
same_sa(const uint64_t *a, const uint64_t *b, uint64_t n, uint64_t *where)
{
	for (uint64_t i = 0; i < n; i++)
		if (a[i] != b[i])
		{
			*where = i;
			return false;
		}
	return true;
}

/* Checks every finished build must pass. */
static void
check_stats(const built *b, run_mode mode, uint64_t n, const char *name)
{
	const xxl_sa_stats *st = &b->st;

	CHECK_EQ(st->n, n);
	CHECK_LE(st->memory_peak, st->memory_limit);
	CHECK_GE(st->levels, 1);
	CHECK_EQ(st->recursion_depth, st->levels - 1);
	if (test_algorithm == XXL_SA_INDUCED && n >= 2)
	{
		/* the top level's queues and stack spill whatever the budget */
		/* texts with long runs, and 256 characters at the smallest budget, fall back to DC3 */
		if (st->level[0].induced)
			induced_builds++;
		CHECK_GE(st->bytes_read, st->bytes_written);
		return;
	}
	if (mode == RUN_ROOMY)
	{
		CHECK_MSG(st->levels == 1 && st->external_levels == 0,
				  "%s: roomy build used %d levels, %d external", name, st->levels,
				  st->external_levels);
		CHECK_EQ(st->bytes_written, 0);
	}
	if ((mode == RUN_FORCED || mode == RUN_TINY_FORCED) && n >= 2)
		CHECK_MSG(st->external_levels >= 1 && !st->level[0].internal,
				  "%s: forced build did not run external DC3", name);
	/* level 0 names its triples by a table when it fits, else by a sort */
	if (mode == RUN_FORCED && n >= 2)
		CHECK_MSG(st->level[0].names_by_table, "%s: roomy level 0 sorted its triples", name);
	if (mode == RUN_TINY_FORCED && n >= 2 && st->level[0].alphabet >= 255)
		CHECK_MSG(!st->level[0].names_by_table, "%s: a table of 2 MB at a tiny budget", name);
	if (mode == RUN_FORCED && st->external_levels > 0)
		CHECK_EQ(st->bytes_written, 0);	/* everything fits the sorters */
	/*
	 * sorters and permutations read what they write; spools of text are
	 * read up to four times (spool_bytes counts their writes and reads)
	 */
	CHECK_GE(st->bytes_read, st->bytes_written);
	CHECK_LE(st->bytes_read,
			 st->bytes_written + st->spool_bytes / 4 * 3 + 2 * st->levels * st->block_size);
}

/* Tests ---------------------------------------------------------------------- */

/* widths: the testing minimum of names, ranks and positions, or NULL */
static void
run_corpus_widths(run_mode mode, long chunk, bool with_prev, const int *widths)
{
	xxl_sa_config cfg = sa_config(mode);
	int			deep = 0;

	cfg.with_prev = with_prev;
	if (widths)
	{
		cfg.widths_min.chars = widths[0];
		cfg.widths_min.ranks = widths[1];
		cfg.widths_min.positions = widths[2];
	}
	build_corpus();
	for (int k = 0; k < ncorpus; k++)
	{
		text	   *t = &corpus[k];
		uint64_t   *oracle = naive_sa(t->data, t->n);
		built		b = run_sa(&cfg, t->data, t->n, chunk);
		uint64_t	where = 0;

		CHECK_MSG(b.rc == XXL_OK, "%s [%s]: status %s", t->name, mode_names[mode],
				  xxl_status_name(b.rc));
		CHECK_MSG(b.count == t->n, "%s [%s]: %llu suffixes for n = %llu", t->name,
				  mode_names[mode], (unsigned long long) b.count, (unsigned long long) t->n);
		if (b.rc == XXL_OK && b.count == t->n)
			CHECK_MSG(same_sa(b.sa, oracle, t->n, &where),
					  "%s [%s]: SA[%llu] = %llu, naive %llu", t->name, mode_names[mode],
					  (unsigned long long) where, (unsigned long long) b.sa[where],
					  (unsigned long long) oracle[where]);
		if (with_prev && b.count == t->n)
			for (uint64_t j = 0; j < t->n; j++)
			{
				int			want = b.sa[j] == 0 ? -1 : t->data[b.sa[j] - 1];

				if (b.prev[j] != want)
				{
					CHECK_MSG(false, "%s [%s]: prev at %llu is %d, want %d", t->name,
							  mode_names[mode], (unsigned long long) j, b.prev[j], want);
					break;
				}
			}
		check_stats(&b, mode, t->n, t->name);
		if (widths && b.st.levels > 1 && !b.st.level[1].internal)
			CHECK_MSG(b.st.level[1].char_bytes == widths[0], "%s: level 1's names take %d bytes, not %d",
					  t->name, b.st.level[1].char_bytes, widths[0]);
		if (b.st.levels > 2)
			deep++;
		built_free(&b);
		free(oracle);
	}
	if ((mode == RUN_FORCED || mode == RUN_TINY_FORCED) && test_algorithm == XXL_SA_DC3)
		CHECK_MSG(deep > 20, "only %d texts recursed more than once", deep);
	printf("  # %d texts, %d with recursion depth >= 2\n", ncorpus, deep);
}

static void
run_corpus(run_mode mode, long chunk, bool with_prev)
{
	run_corpus_widths(mode, chunk, with_prev, NULL);
}

XT_TEST(sa_naive_roomy)
{
	run_corpus(RUN_ROOMY, 0, false);
}

XT_TEST(sa_naive_forced_external)
{
	run_corpus(RUN_FORCED, 0, false);
}

XT_TEST(sa_naive_tiny_forced_external)
{
	run_corpus(RUN_TINY_FORCED, 0, false);
}

XT_TEST(sa_naive_small_chunks)
{
	/* one byte at a time, then random chunk sizes, with the preceding bytes */
	run_corpus(RUN_ROOMY, 1, true);
	run_corpus(RUN_FORCED, -1, true);
}

/*
 * The merge is compiled for the field widths of large levels (merge_level
 * in dc3_merge.c), which these texts reach only with the testing minimum:
 * each of those instances, at the top with 1- and 2-byte characters (the
 * corpus has both) and below, against the naive sort, with the preceding
 * bytes.
 */
XT_TEST(sa_merge_widths)
{
	static const int widths[][3] = {{3, 3, 3}, {3, 3, 4}, {3, 4, 4}, {4, 4, 4}};

	for (size_t k = 0; k < sizeof(widths) / sizeof(widths[0]); k++)
	{
		printf("  # names %d, ranks %d, positions %d bytes\n", widths[k][0], widths[k][1],
			   widths[k][2]);
		run_corpus_widths(RUN_FORCED, 0, true, widths[k]);
	}
}

/*
 * The top level by induced sorting (sa_induce.c) over every text of the
 * corpus, in memory and external below, at a roomy and the smallest budget,
 * in one piece and in random chunks, against the naive sort.
 */
XT_TEST(sa_induced)
{
	static const run_mode modes[] = {RUN_ROOMY, RUN_FORCED, RUN_TINY, RUN_TINY_FORCED};

	test_algorithm = XXL_SA_INDUCED;
	for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++)
	{
		induced_builds = 0;
		/* with the preceding bytes in two of the modes */
		run_corpus(modes[k], modes[k] == RUN_FORCED ? -1 : 0, k % 2 == 1);
		CHECK_MSG(induced_builds >= ncorpus * 4 / 5, "[%s] only %d of %d builds were induced",
				  mode_names[modes[k]], induced_builds, ncorpus);
		printf("  # [%s] %d of %d induced\n", mode_names[modes[k]], induced_builds, ncorpus);
	}
	test_algorithm = XXL_SA_DC3;
}

/* Long texts at a tiny budget ------------------------------------------------ */

typedef struct big_case
{
	const char *name;
	uint64_t	n;
	int			min_levels;		/* recursion expected */
} big_case;

static unsigned char *
make_big(const char *name, uint64_t n)
{
	unsigned char *d = malloc(n + 1);

	if (strcmp(name, "rand4") == 0)
		gen_random(d, n, 4, 1234);
	else if (strcmp(name, "rand256") == 0)
		gen_random(d, n, 256, 99);
	else if (strcmp(name, "rand100") == 0)
		gen_random(d, n, 100, 555);
	else if (strcmp(name, "unary") == 0)
		gen_periodic(d, n, "a");
	else if (strcmp(name, "fib") == 0)
		gen_fibonacci(d, n);
	else if (strcmp(name, "abc") == 0)
		gen_periodic(d, n, "abc");
	else
	{
		/* random2x: a random string twice */
		gen_random(d, n / 2, 2, 4321);
		memcpy(d + n / 2, d, n - n / 2);
	}
	return d;
}

static bool
run_check(const xxl_sa_config *cfg, const unsigned char *t, uint64_t n, const uint64_t *sa,
		  uint64_t count, char *why, size_t why_len, xxl_sa_check_stats *st)
{
	xxl_error	err = {0};
	xxl_sa_checker *c = xxl_sa_check_create(cfg, &err);
	bool		ok = false;

	if (c == NULL)
	{
		snprintf(why, why_len, "create: %s", err.message);
		return false;
	}
	/* interleave the two inputs the way a caller may */
	for (uint64_t off = 0, j = 0; off < n || j < count;)
	{
		if (off < n)
		{
			uint64_t	len = n - off < 7777 ? n - off : 7777;

			if (xxl_sa_check_put_text(c, t + off, len) != XXL_OK)
				break;
			off += len;
		}
		if (j < count)
		{
			uint64_t	len = count - j < 5000 ? count - j : 5000;

			if (xxl_sa_check_put_sa(c, sa + j, len) != XXL_OK)
				break;
			j += len;
		}
	}
	if (xxl_sa_check_error(c)->code == XXL_OK)
	{
		xxl_status	rc = xxl_sa_check_run(c, &ok, why, why_len);

		if (rc != XXL_OK)
		{
			snprintf(why, why_len, "error: %s", xxl_sa_check_error(c)->message);
			ok = false;
		}
	}
	else
		snprintf(why, why_len, "error: %s", xxl_sa_check_error(c)->message);
	if (st)
		xxl_sa_check_stats_get(c, st);
	xxl_sa_check_destroy(c);
	return ok;
}

XT_TEST(sa_tiny_budget_long_texts)
{
	int			presampled = 0;

	static const big_case cases[] = {
		{"rand4", 300000, 2},
		{"rand256", 300000, 1},
		{"unary", 120000, 3},
		{"fib", 150000, 3},
		{"abc", 100000, 3},
		{"random2x", 200000, 3},
		/* texts larger than the whole budget */
		{"rand4", 1200000, 3},
		{"random2x", 1000000, 4},
	};
	xxl_sa_config roomy = sa_config(RUN_ROOMY);
	xxl_sa_config tiny = sa_config(RUN_TINY);

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
	{
		const big_case *c = &cases[k];
		uint64_t	n = c->n;	/* (smaller ones now fit the least budget in memory) */
		unsigned char *t = make_big(c->name, n);
		built		ref = run_sa(&roomy, t, n, 0);
		built		b = run_sa(&tiny, t, n, 65536 + 17);
		uint64_t	where = 0;
		char		why[256];
		xxl_sa_check_stats cst;

		CHECK_STATUS(ref.rc, XXL_OK);
		CHECK_STATUS(b.rc, XXL_OK);
		CHECK_EQ(ref.count, n);
		CHECK_EQ(b.count, n);
		if (b.count == n && ref.count == n)
			CHECK_MSG(same_sa(b.sa, ref.sa, n, &where), "%s: SA[%llu] differs", c->name,
					  (unsigned long long) where);
		check_stats(&ref, RUN_ROOMY, n, c->name);
		check_stats(&b, RUN_TINY, n, c->name);
		/* the tiny budget really went external: runs on disk, recursion */
		CHECK_MSG(b.st.external_levels >= 1 && b.st.bytes_written > 0 && b.st.runs > 0,
				  "%s: tiny budget stayed in memory", c->name);
		CHECK_MSG(b.st.levels >= c->min_levels, "%s: %d levels, expected >= %d", c->name,
				  b.st.levels, c->min_levels);
		/* the sorts' samples, gathered ahead where possible, represent their input */
		for (int l = 0; l < b.st.levels; l++)
		{
			CHECK_MSG(b.st.level[l].overfull_buckets == 0, "%s: level %d overfilled %llu buckets",
					  c->name, l, (unsigned long long) b.st.level[l].overfull_buckets);
			presampled += b.st.level[l].s0_presampled;
		}
		CHECK_GE(b.st.max_merge_passes, 1);
		if (n >= 1000000 && !xt_quick())
			CHECK_MSG(n > b.st.memory_limit, "%s: the budget is not below n", c->name);
		CHECK_MSG(run_check(&tiny, t, n, b.sa, b.count, why, sizeof(why), &cst),
				  "%s: checker rejected: %s", c->name, why);
		CHECK(cst.bytes_written > 0);
		printf("  # %s n=%llu: %d levels (%d external), blocks %zu..%zu, io %.1f B/char "
			   "(thesis %.0f), sorted %.1f B/char, runs %llu, passes %d, peak %llu/%llu\n",
			   c->name, (unsigned long long) n, b.st.levels, b.st.external_levels,
			   b.st.block_size, b.st.sorter_block_max, (double) (b.st.bytes_read + b.st.bytes_written) / n,
			   (double) b.st.thesis_bytes / n, (double) b.st.sorted_bytes / n,
			   (unsigned long long) b.st.runs, b.st.max_merge_passes,
			   (unsigned long long) b.st.memory_peak, (unsigned long long) b.st.memory_limit);
		built_free(&ref);
		built_free(&b);
		free(t);
	}
	CHECK_MSG(presampled >= 8, "only %d levels presampled S0", presampled);
}

/* BWT ---------------------------------------------------------------------- */

static void
run_bwt(const xxl_sa_config *base, const unsigned char *t, uint64_t n, const char *name,
		const uint64_t *oracle_sa)
{
	xxl_sa_config cfg = *base;
	xxl_error	err = {0};
	xxl_sa	   *sa;
	uint64_t	want_primary;
	unsigned char *want = bwt_from_sa(t, oracle_sa, n, &want_primary);
	unsigned char *got = malloc(n + 1);
	unsigned char *back = malloc(n + 1);
	uint64_t	len = 0;
	unsigned char buf[1000];
	size_t		l;
	int			rc;

	cfg.mode = XXL_SA_BWT;
	sa = xxl_sa_create(&cfg, &err);
	REQUIRE(sa != NULL);
	CHECK_STATUS(xxl_sa_put(sa, t, n), XXL_OK);
	CHECK_STATUS(xxl_sa_build(sa), XXL_OK);
	CHECK_MSG(xxl_sa_bwt_primary(sa) == want_primary, "%s: primary %llu, want %llu", name,
			  (unsigned long long) xxl_sa_bwt_primary(sa), (unsigned long long) want_primary);
	while ((rc = xxl_sa_bwt_read(sa, buf, 1 + (len % sizeof(buf)), &l)) > 0)
	{
		if (len + l <= n)
			memcpy(got + len, buf, l);
		len += l;
	}
	CHECK_EQ(rc, 0);
	CHECK_MSG(len == n, "%s: BWT of %llu bytes for n = %llu", name, (unsigned long long) len,
			  (unsigned long long) n);
	if (len == n)
	{
		CHECK_MSG(memcmp(got, want, n) == 0, "%s: BWT differs", name);
		CHECK_STATUS(xxl_bwt_inverse(got, n, xxl_sa_bwt_primary(sa), back, &err), XXL_OK);
		CHECK_MSG(n == 0 || memcmp(back, t, n) == 0, "%s: inverse BWT differs", name);
	}
	xxl_sa_destroy(sa);
	free(want);
	free(got);
	free(back);
}

XT_TEST(bwt_vs_naive)
{
	const run_mode modes[] = {RUN_ROOMY, RUN_FORCED, RUN_TINY_FORCED};

	build_corpus();
	for (int m = 0; m < 3; m++)
	{
		xxl_sa_config cfg = sa_config(modes[m]);

		for (int k = 0; k < ncorpus; k += (m == 0 ? 1 : 3))
		{
			uint64_t   *oracle = naive_sa(corpus[k].data, corpus[k].n);

			run_bwt(&cfg, corpus[k].data, corpus[k].n, corpus[k].name, oracle);
			free(oracle);
		}
	}
}

XT_TEST(bwt_tiny_budget)
{
	uint64_t	n = xt_quick() ? 50000 : 250000;
	unsigned char *t = make_big("rand4", n);
	xxl_sa_config roomy = sa_config(RUN_ROOMY);
	built		ref = run_sa(&roomy, t, n, 0);

	REQUIRE(ref.count == n);
	run_bwt(&roomy, t, n, "rand4-roomy", ref.sa);
	{
		xxl_sa_config tiny = sa_config(RUN_TINY);

		run_bwt(&tiny, t, n, "rand4-tiny", ref.sa);
	}
	built_free(&ref);
	free(t);
}

/* Checker ------------------------------------------------------------------- */

XT_TEST(checker_accepts_and_rejects)
{
	xxl_sa_config cfgs[2] = {sa_config(RUN_ROOMY), sa_config(RUN_TINY)};
	const char *const names[] = {"rand4", "unary", "fib", "rand256"};

	for (int m = 0; m < 2; m++)
		for (int k = 0; k < 4; k++)
		{
			uint64_t	n = m == 0 ? 2000 : 150000;
			unsigned char *t = make_big(names[k], n);
			xxl_sa_config roomy = sa_config(RUN_ROOMY);
			built		ref = run_sa(&roomy, t, n, 0);
			uint64_t   *bad = malloc((n + 1) * sizeof(uint64_t));
			char		why[256];
			xt_rng		r = {k + 100 * m};
			uint64_t	a,
						b,
						tmp;

			REQUIRE(ref.count == n);
			CHECK_MSG(run_check(&cfgs[m], t, n, ref.sa, n, why, sizeof(why), NULL),
					  "%s: correct SA rejected: %s", names[k], why);

			/* swap two adjacent entries */
			memcpy(bad, ref.sa, n * sizeof(uint64_t));
			a = xt_below(&r, n - 1);
			tmp = bad[a], bad[a] = bad[a + 1], bad[a + 1] = tmp;
			CHECK_MSG(!run_check(&cfgs[m], t, n, bad, n, why, sizeof(why), NULL),
					  "%s: adjacent swap accepted", names[k]);
			printf("  # %s swap: %s\n", names[k], why);

			/* swap two distant entries */
			memcpy(bad, ref.sa, n * sizeof(uint64_t));
			a = xt_below(&r, n / 2);
			b = n / 2 + xt_below(&r, n / 2);
			tmp = bad[a], bad[a] = bad[b], bad[b] = tmp;
			CHECK_MSG(!run_check(&cfgs[m], t, n, bad, n, why, sizeof(why), NULL),
					  "%s: distant swap accepted", names[k]);

			/* duplicate an entry */
			memcpy(bad, ref.sa, n * sizeof(uint64_t));
			a = xt_below(&r, n);
			b = (a + 1 + xt_below(&r, n - 1)) % n;
			bad[b] = bad[a];
			CHECK_MSG(!run_check(&cfgs[m], t, n, bad, n, why, sizeof(why), NULL),
					  "%s: duplicate accepted", names[k]);
			printf("  # %s duplicate: %s\n", names[k], why);

			/* off by one: every position + 1 (n becomes out of range) ... */
			for (uint64_t i = 0; i < n; i++)
				bad[i] = ref.sa[i] + 1;
			CHECK_MSG(!run_check(&cfgs[m], t, n, bad, n, why, sizeof(why), NULL),
					  "%s: shifted SA accepted", names[k]);
			/* ... and 1-based positions taken for 0-based: one entry off */
			memcpy(bad, ref.sa, n * sizeof(uint64_t));
			a = xt_below(&r, n);
			bad[a] = bad[a] + 1 < n ? bad[a] + 1 : bad[a] - 1;
			CHECK_MSG(!run_check(&cfgs[m], t, n, bad, n, why, sizeof(why), NULL),
					  "%s: one entry off by one accepted", names[k]);

			/* the SA rotated by one rank: a permutation, wrong order */
			for (uint64_t i = 0; i < n; i++)
				bad[i] = ref.sa[(i + 1) % n];
			CHECK_MSG(!run_check(&cfgs[m], t, n, bad, n, why, sizeof(why), NULL),
					  "%s: rotated SA accepted", names[k]);
			printf("  # %s rotated: %s\n", names[k], why);

			/* wrong lengths, out of range */
			CHECK(!run_check(&cfgs[m], t, n, ref.sa, n - 1, why, sizeof(why), NULL));
			memcpy(bad, ref.sa, n * sizeof(uint64_t));
			bad[n] = 0;
			CHECK(!run_check(&cfgs[m], t, n, bad, n + 1, why, sizeof(why), NULL));
			bad[n / 3] = UINT64_MAX;
			CHECK(!run_check(&cfgs[m], t, n, bad, n, why, sizeof(why), NULL));
			printf("  # %s out of range: %s\n", names[k], why);

			built_free(&ref);
			free(bad);
			free(t);
		}
}

XT_TEST(checker_small_texts)
{
	xxl_sa_config cfg = sa_config(RUN_ROOMY);
	char		why[256];

	build_corpus();
	for (int k = 0; k < ncorpus; k++)
	{
		text	   *t = &corpus[k];
		uint64_t   *oracle = naive_sa(t->data, t->n);

		CHECK_MSG(run_check(&cfg, t->data, t->n, oracle, t->n, why, sizeof(why), NULL),
				  "%s: correct SA rejected: %s", t->name, why);
		if (t->n >= 2)
		{
			/* any transposition of a correct suffix array is wrong */
			uint64_t	tmp = oracle[0];

			oracle[0] = oracle[t->n - 1];
			oracle[t->n - 1] = tmp;
			CHECK_MSG(!run_check(&cfg, t->data, t->n, oracle, t->n, why, sizeof(why), NULL),
					  "%s: swapped SA accepted", t->name);
		}
		free(oracle);
	}
}

/* Callback form of the checker. */
typedef struct feed
{
	const unsigned char *t;
	const uint64_t *sa;
	uint64_t	n,
				toff,
				soff;
} feed;

static long
feed_text(void *arg, unsigned char *buf, size_t cap)
{
	feed	   *f = arg;
	size_t		k = f->n - f->toff < cap ? f->n - f->toff : cap;

	memcpy(buf, f->t + f->toff, k);
	f->toff += k;
	return (long) k;
}

static long
feed_sa(void *arg, uint64_t *buf, size_t cap)
{
	feed	   *f = arg;
	size_t		k = f->n - f->soff < cap ? f->n - f->soff : cap;

	memcpy(buf, f->sa + f->soff, k * sizeof(uint64_t));
	f->soff += k;
	return (long) k;
}

XT_TEST(checker_callbacks)
{
	uint64_t	n = 40000;
	unsigned char *t = make_big("fib", n);
	uint64_t   *sa = naive_sa(t, 2000);	/* a wrong array for the full text */
	xxl_sa_config cfg = sa_config(RUN_TINY);
	built		ref = run_sa(&cfg, t, n, 0);
	feed		f = {t, ref.sa, n, 0, 0};
	xxl_error	err = {0};
	bool		ok = false;
	char		why[200];

	CHECK_STATUS(xxl_sa_check(&cfg, feed_text, &f, feed_sa, &f, &ok, why, sizeof(why), &err), XXL_OK);
	CHECK(ok);
	f = (feed) {t, sa, 2000, 0, 0};
	CHECK_STATUS(xxl_sa_check(&cfg, feed_text, &f, feed_sa, &f, &ok, why, sizeof(why), &err), XXL_OK);
	CHECK(ok);
	f = (feed) {t, ref.sa, 2000, 0, 0};
	CHECK_STATUS(xxl_sa_check(&cfg, feed_text, &f, feed_sa, &f, &ok, why, sizeof(why), &err), XXL_OK);
	CHECK(!ok);
	built_free(&ref);
	free(sa);
	free(t);
}

/* Errors, cancel, limits ------------------------------------------------------ */

static int	cancel_after;

static bool
cancel_hook(void *arg)
{
	(void) arg;
	return --cancel_after < 0;
}

/*
 * The top level's merge on a worker: the naive oracle's positions, and the
 * same preceding bytes as the caller's merge; a cancel while the caller takes positions reaches the
 * worker; a builder destroyed halfway stops it; nothing is left on disk.
 */
static bool cancel_now;

static bool
cancel_flag(void *arg)
{
	(void) arg;
	return cancel_now;
}

XT_TEST(sa_merge_on_worker)
{
	uint64_t	n = xt_quick() ? 60000 : 300000;
	unsigned char *t = make_big("rand4", n);
	xxl_sa_config cfg = sa_config(RUN_FORCED);
	built		ref,
				b;
	uint64_t	where = 0;
	int			polls;

	cfg.res.threads = 1;
	cfg.with_prev = true;
	ref = run_sa(&cfg, t, n, 0);
	cfg.res.threads = 2;
	b = run_sa(&cfg, t, n, 0);
	CHECK_STATUS(ref.rc, XXL_OK);
	CHECK_STATUS(b.rc, XXL_OK);
	CHECK(!ref.st.merge_async);
	CHECK(b.st.merge_async);
	CHECK(b.st.merge_slots >= 2);
	/* the levels below merge on a worker too, the parent filling its ISA */
	CHECK(b.st.levels >= 3);
	for (int l = 0; l < b.st.levels; l++)
	{
		CHECK_EQ(ref.st.level[l].merge_slots, 0);
		if (!b.st.level[l].internal)
			CHECK_MSG(b.st.level[l].merge_slots >= 2, "level %d merged on the caller", l);
	}
	CHECK_EQ(b.count, n);
	{
		uint64_t   *oracle = naive_sa(t, n);

		CHECK_MSG(b.count == n && same_sa(b.sa, oracle, n, &where), "SA[%llu] differs",
				  (unsigned long long) where);
		free(oracle);
	}
	CHECK(b.count == n && ref.count == n && memcmp(b.prev, ref.prev, n * sizeof(int)) == 0);
	free(ref.sa), free(ref.prev), free(b.sa), free(b.prev);

	for (int stop = 0; stop < 2; stop++)
	{
		xxl_error	err = {0};
		xxl_sa	   *sa;
		uint64_t	pos,
					k = 0;
		int			got;

		cfg.with_prev = false;
		cfg.res.cancel = stop == 0 ? cancel_flag : NULL;
		cancel_now = false;
		sa = xxl_sa_create(&cfg, &err);
		REQUIRE(sa != NULL);
		CHECK_STATUS(xxl_sa_put(sa, t, n), XXL_OK);
		CHECK_STATUS(xxl_sa_build(sa), XXL_OK);
		while ((got = xxl_sa_next(sa, &pos)) > 0 && ++k < n / 2)
			;
		CHECK_EQ(got, 1);
		if (stop == 0)
		{
			/* canceled: the worker ends with an error, which the caller reports */
			cancel_now = true;
			while ((got = xxl_sa_next(sa, &pos)) > 0)
				k++;
			CHECK(got < 0);
			CHECK_STATUS(xxl_sa_error(sa)->code, XXL_ECANCELED);
			CHECK(k < n);
		}
		/* stop == 1: destroyed halfway, the worker still merging */
		xxl_sa_destroy(sa);
		CHECK_EQ(xt_spill_files(), 0);
	}

	/*
	 * Failures and cancels during the build, where levels below the top
	 * merge on a worker while their parent fills ISA: a write failing (in
	 * the parent's ISA or in the child's sorts), a cancel at many points.
	 */
	cfg.with_prev = false;
	{
		/* the build's own polls (the merger's waits may add some: a margin) */
		xxl_error	err = {0};
		xxl_sa	   *sa;

		cfg.res.cancel = cancel_hook;
		cancel_after = INT_MAX;
		sa = xxl_sa_create(&cfg, &err);
		REQUIRE(sa != NULL);
		CHECK_STATUS(xxl_sa_put(sa, t, n), XXL_OK);
		CHECK_STATUS(xxl_sa_build(sa), XXL_OK);
		polls = INT_MAX - cancel_after;
		xxl_sa_destroy(sa);
	}
	{
		/* at 16n bytes the levels spill, and their merges still run on a worker */
		xxl_sa_config small = cfg;

		small.res.cancel = NULL;
		small.res.memory = n * 16;
		b = run_sa(&small, t, n, 0);
		CHECK_STATUS(b.rc, XXL_OK);
		CHECK(b.st.bytes_written > 0 || b.st.level[0].io_bytes > 0);
		CHECK(b.st.levels >= 2 && b.st.level[1].merge_slots >= 2);
		free(b.sa), free(b.prev);
	}
	for (int k = 0; k < 12; k++)
	{
		xxl_error	err = {0};
		xxl_sa	   *sa;
		xxl_status	rc;

		/*
		 * canceled at an eighth, ... three quarters of the build's polls; a
		 * write failing once a sort's or permutation's disks took n/10
		 * bytes, 2n/10, ... 32n/10
		 */
		cfg.res.cancel = k < 6 ? cancel_hook : NULL;
		cancel_after = polls * (k + 1) / 8;
		cfg.res.disk.fail_write_after = k < 6 ? 0 : (n / 10) << (k - 6);
		/* writes go to disk at a small budget, where the mergers' rings still fit */
		cfg.res.memory = k < 6 ? 64 * MB : n * 16;
		sa = xxl_sa_create(&cfg, &err);
		REQUIRE(sa != NULL);
		rc = xxl_sa_put(sa, t, n);
		if (rc == XXL_OK)
			rc = xxl_sa_build(sa);
		if (k < 6)
			CHECK_STATUS(rc, XXL_ECANCELED);
		else
			CHECK_MSG(rc == XXL_ENOSPC || rc == XXL_EIO, "write failure after %llu bytes: %s",
					  (unsigned long long) cfg.res.disk.fail_write_after, xxl_sa_error(sa)->message);
		xxl_sa_destroy(sa);
		CHECK_EQ(xt_spill_files(), 0);
	}
	free(t);
}

XT_TEST(sa_errors)
{
	xxl_sa_config cfg = sa_config(RUN_ROOMY);
	xxl_error	err = {0};
	xxl_sa	   *sa;
	uint64_t	pos;

	/* too small a budget */
	cfg.res.memory = xxl_sa_min_memory() - 1;
	CHECK(xxl_sa_create(&cfg, &err) == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	CHECK(xxl_sa_check_create(&cfg, &err) == NULL);

	/* wrong call order */
	cfg = sa_config(RUN_ROOMY);
	sa = xxl_sa_create(&cfg, &err);
	REQUIRE(sa != NULL);
	CHECK(xxl_sa_next(sa, &pos) < 0);
	xxl_sa_destroy(sa);
	sa = xxl_sa_create(&cfg, &err);
	REQUIRE(sa != NULL);
	CHECK_STATUS(xxl_sa_put(sa, "abc", 3), XXL_OK);
	CHECK_STATUS(xxl_sa_build(sa), XXL_OK);
	CHECK(xxl_sa_put(sa, "d", 1) != XXL_OK);
	xxl_sa_destroy(sa);

	/* destroy in the middle of the output of a spilled build */
	{
		uint64_t	n = 200000;
		unsigned char *t = make_big("rand4", n);
		xxl_sa_config tiny = sa_config(RUN_TINY);

		sa = xxl_sa_create(&tiny, &err);
		REQUIRE(sa != NULL);
		CHECK_STATUS(xxl_sa_put(sa, t, n), XXL_OK);
		CHECK_STATUS(xxl_sa_build(sa), XXL_OK);
		for (int i = 0; i < 1000; i++)
			CHECK_EQ(xxl_sa_next(sa, &pos), 1);
		CHECK(xt_spill_files() > 0);
		xxl_sa_destroy(sa);
		CHECK_EQ(xt_spill_files(), 0);
		free(t);
	}
}

/*
 * The smallest budget the engine accepts builds these texts (a permutation
 * too large for its buckets is sorted instead: xxl_env_scatter), and the
 * build is right (against a roomy build).  Should a budget be too small for
 * some level, it is refused before any work: the build fails with
 * XXL_ENOMEM having written nothing but the text.
 */
XT_TEST(sa_smallest_budget_builds)
{
	const char *const names[] = {"rand4", "rand256", "random2x"};

	for (int k = 0; k < 3; k++)
	{
		uint64_t	n = xt_quick() ? 400000 : 1500000;
		unsigned char *t = make_big(names[k], n);
		size_t		lo = xxl_sa_min_memory(),
					hi = 8 * MB;
		xxl_sa_config cfg = sa_config(RUN_TINY);
		xxl_sa_config roomy = sa_config(RUN_ROOMY);
		built		b,
					ref;
		int			failures = 0;
		uint64_t	where = 0;

		/* the smallest budget first: the search is for budgets that fail */
		cfg.res.memory = lo;
		b = run_sa(&cfg, t, n, 0);
		if (b.rc == XXL_OK)
			hi = lo;
		built_free(&b);
		while (hi - lo > 16 * KB)
		{
			size_t		mid = lo + (hi - lo) / 2;

			cfg.res.memory = mid;
			b = run_sa(&cfg, t, n, 0);
			if (b.rc == XXL_OK)
				hi = mid;
			else
			{
				CHECK_STATUS(b.rc, XXL_ENOMEM);
				failures++;
				/* the text may have been spilled, nothing else */
				CHECK_MSG(b.st.bytes_written <= n + 2 * b.st.block_size && b.st.runs == 0,
						  "%s at %zu bytes: failed after %llu bytes of work", names[k], mid,
						  (unsigned long long) b.st.bytes_written);
				lo = mid;
			}
			built_free(&b);
		}
		printf("  # %s n=%llu: builds from %zu kB\n", names[k], (unsigned long long) n, hi / KB);
		CHECK_MSG(failures == 0, "%s: %zu bytes did not build", names[k], xxl_sa_min_memory());
		cfg.res.memory = hi;
		b = run_sa(&cfg, t, n, 0);
		ref = run_sa(&roomy, t, n, 0);
		CHECK_STATUS(b.rc, XXL_OK);
		CHECK_STATUS(ref.rc, XXL_OK);
		if (b.count == n && ref.count == n)
			CHECK_MSG(same_sa(b.sa, ref.sa, n, &where), "%s at %zu bytes: SA[%llu] differs",
					  names[k], hi, (unsigned long long) where);
		else
			CHECK_MSG(false, "%s: %llu and %llu suffixes", names[k], (unsigned long long) b.count,
					  (unsigned long long) ref.count);
		built_free(&b);
		built_free(&ref);
		free(t);
	}
}

/*
 * 4 MiB over an alphabet of 95 at 1MB (the least SQL allows): the merge of
 * level 0 reads the text spool, whose list of 1024 blocks is in a log, beside
 * the sample sorter and the scatter; the text plan's reserve for its own
 * streams must hold their blocks and their block lists (it held only the
 * blocks: 53200).  The array equals the roomy build's.
 */
XT_TEST(sa_wide_alphabet_at_1mb)
{
	uint64_t	n = 4 * MB;
	unsigned char *t = malloc(n + 1);
	xxl_sa_config roomy = sa_config(RUN_ROOMY);
	xxl_sa_config cfg = sa_config(RUN_TINY);
	built		ref,
				b;
	uint64_t	where = 0;

	gen_random(t, n, 95, 5);
	ref = run_sa(&roomy, t, n, 0);
	REQUIRE(ref.rc == XXL_OK);
	cfg.res.memory = MB;
	cfg.res.disk.block_size = 0;	/* the engine's own choice, as from SQL */
	b = run_sa(&cfg, t, n, 0);
	CHECK_MSG(b.rc == XXL_OK, "at 1MB: %s", xxl_status_name(b.rc));
	if (b.rc == XXL_OK)
	{
		CHECK(b.count == n);
		CHECK_MSG(same_sa(b.sa, ref.sa, n, &where), "SA[%llu] differs", (unsigned long long) where);
		CHECK_LE(b.st.memory_peak, MB);
	}
	built_free(&b);
	built_free(&ref);
	free(t);
}

/*
 * An alphabet of 160 (too wide for the induced sorter's queues at these
 * budgets, so DC3 builds) at small budgets, with SQL's blocks (a sixteenth):
 * 4 MiB at 0.8 MB (about what the suffix sorter gets beside the LCP
 * operator at 1MB), where the text level's scatter, raised to its least,
 * left level 1 less than its base shares, and 8 MiB at 1.5 MB,
 * where S0 fell to a core sorter holding its whole output share while ISA
 * still lived (53200).  The arrays equal the roomy builds'.
 */
XT_TEST(sa_wide_alphabet_small_budgets)
{
	static const struct
	{
		uint64_t	n;
		size_t		memory;
	}			cases[] = {{4 * MB, 4 * MB / 5}, {8 * MB, 1536 * KB}};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
	{
		uint64_t	n = cases[k].n,
					where = 0;
		unsigned char *t = malloc(n + 1);
		xxl_sa_config roomy = sa_config(RUN_ROOMY);
		xxl_sa_config cfg = sa_config(RUN_TINY);
		built		ref,
					b;

		REQUIRE(t != NULL);
		gen_random(t, n, 160, 11 + (uint64_t) k);
		ref = run_sa(&roomy, t, n, 0);
		REQUIRE(ref.rc == XXL_OK);
		cfg.res.memory = cases[k].memory;
		cfg.res.disk.block_size = cases[k].memory / 16 / (4 * KB) * (4 * KB);
		cfg.res.disk.ndisks = 1;
		cfg.res.threads = 0;
		b = run_sa(&cfg, t, n, 0);
		CHECK_MSG(b.rc == XXL_OK, "%llu bytes at %zu: %s", (unsigned long long) n, cases[k].memory,
				  xxl_status_name(b.rc));
		if (b.rc == XXL_OK)
		{
			CHECK(b.count == n);
			CHECK_MSG(same_sa(b.sa, ref.sa, n, &where), "SA[%llu] differs", (unsigned long long) where);
			CHECK_LE(b.st.memory_peak, cases[k].memory);
		}
		built_free(&b);
		built_free(&ref);
		free(t);
	}
}

/*
 * A build of t stopped by cfg: a cancel at several points (every step-th
 * poll from 0 to 40), the spill limit, a failing write; each with its
 * status, and nothing left on disk.
 */
static void
check_stopped_builds(const xxl_sa_config *base, const unsigned char *t, uint64_t n, int step)
{
	for (int k = -2; k < 40; k += k < 0 ? 1 : step)
	{
		xxl_sa_config cfg = *base;
		xxl_error	err = {0};
		xxl_sa	   *sa;
		xxl_status	rc;

		if (k == -2)
			cfg.res.disk.max_spill_bytes = 256 * KB;
		else if (k == -1)
			cfg.res.disk.fail_write_after = 300 * KB;
		else
		{
			cfg.res.cancel = cancel_hook;
			cancel_after = k;
		}
		sa = xxl_sa_create(&cfg, &err);
		REQUIRE(sa != NULL);
		rc = xxl_sa_put(sa, t, n);
		if (rc == XXL_OK)
			rc = xxl_sa_build(sa);
		if (k == -2)
			CHECK_STATUS(rc, XXL_ELIMIT);
		else if (k == -1)
			CHECK(rc == XXL_ENOSPC || rc == XXL_EIO);
		else
			CHECK_STATUS(rc, XXL_ECANCELED);
		if (k < 0)
			printf("  # %s: %s\n", k == -2 ? "limit" : "write failure", xxl_sa_error(sa)->message);
		xxl_sa_destroy(sa);
		CHECK_EQ(xt_spill_files(), 0);
	}
}

XT_TEST(sa_cancel_and_limits)
{
	uint64_t	n = 200000;
	unsigned char *t = make_big("unary", n);
	xxl_sa_config cfg = sa_config(RUN_TINY);

	check_stopped_builds(&cfg, t, n, 7);
	free(t);
}

/*
 * Induced sorting on long texts at the smallest budget: against DC3 and the
 * checker; a text of one repeated byte falls back to DC3 (each item of its
 * one long run would carry the rest of it), and so do 256 distinct bytes
 * (a page per bucket does not fit this budget), while 100 distinct bytes
 * take pages of 1 kB.  Then cancel at several points,
 * the spill limit and a failing write, with nothing left on disk.
 */
XT_TEST(sa_induced_long_texts)
{
	static const big_case cases[] = {
		{"rand4", 300000, 1},
		{"rand256", 300000, 1},
		{"unary", 120000, 1},
		{"fib", 150000, 2},
		{"random2x", 1000000, 2},
		{"rand100", 300000, 1},
	};
	xxl_sa_config roomy = sa_config(RUN_ROOMY);
	xxl_sa_config tiny = sa_config(RUN_TINY);
	unsigned char *t;
	uint64_t	n = 200000;

	tiny.algorithm = XXL_SA_AUTO;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
	{
		const big_case *c = &cases[k];
		uint64_t	m = xt_quick() ? c->n / 2 : c->n,
					where = 0;
		built		ref,
					b;
		char		why[256];

		t = make_big(c->name, m);
		ref = run_sa(&roomy, t, m, 0);
		tiny.with_prev = k % 2 == 1;
		b = run_sa(&tiny, t, m, 65536 + 17);
		CHECK_STATUS(b.rc, XXL_OK);
		CHECK_EQ(b.count, m);
		if (b.count == m && ref.count == m)
			CHECK_MSG(same_sa(b.sa, ref.sa, m, &where), "%s: SA[%llu] differs", c->name,
					  (unsigned long long) where);
		if (tiny.with_prev && b.count == m)
			for (uint64_t j = 0; j < m; j++)
				if (b.prev[j] != (b.sa[j] == 0 ? -1 : t[b.sa[j] - 1]))
				{
					CHECK_MSG(false, "%s: prev at %llu", c->name, (unsigned long long) j);
					break;
				}
		/*
		 * unary falls back, and so does rand256: 257 pages do not fit the
		 * smallest budget; rand100's 101 do, of 1 kB each
		 */
		CHECK_MSG(b.st.level[0].induced == (strcmp(c->name, "unary") != 0 && strcmp(c->name, "rand256") != 0),
				  "%s: induced %d", c->name, b.st.level[0].induced);
		CHECK_MSG(b.st.levels >= c->min_levels && b.st.bytes_written > 0, "%s: %d levels", c->name,
				  b.st.levels);
		CHECK_LE(b.st.memory_peak, b.st.memory_limit);
		CHECK_MSG(run_check(&tiny, t, m, b.sa, b.count, why, sizeof(why), NULL),
				  "%s: checker rejected: %s", c->name, why);
		printf("  # %s n=%llu: induced %d, %d levels, io %.1f B/char, peak %llu/%llu\n", c->name,
			   (unsigned long long) m, b.st.level[0].induced, b.st.levels,
			   (double) (b.st.bytes_read + b.st.bytes_written) / m,
			   (unsigned long long) b.st.memory_peak, (unsigned long long) b.st.memory_limit);
		built_free(&ref);
		built_free(&b);
		free(t);
	}

	t = make_big("random2x", n);
	tiny.with_prev = false;
	check_stopped_builds(&tiny, t, n, 3);
	free(t);
}

int
main(int argc, char **argv)
{
	int			rc = xt_main(argc, argv);

	for (int k = 0; k < ncorpus; k++)
		free(corpus[k].data);
	return rc;
}
