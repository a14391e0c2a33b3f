/*
 * test_matrix.c — the sparse matrix product (xxl_matrix.h) against a
 * naive dense product written here: integer (exact) and floating-point
 * values, Aᵀ·B, indices near both ends of bigint, a row of B too large to
 * hold (spooled), a result that cancels to zero, empty inputs, and the
 * smallest budget with several merge passes over the partial products.
 */
#include "xxl_test.h"

#include <math.h>

#include "core/matrix/xxl_matrix.h"

#define KB 1024

/* The path the next products are forced to take (auto: by density). */
static xxl_matrix_method t_method = XXL_MATRIX_AUTO;

typedef struct entry
{
	int			r,
				c;
	int64_t		v;
} entry;

/* A problem: dims (rows of the result, inner, columns) and the entries of A and B. */
typedef struct problem
{
	int			rows,
				inner,
				cols;
	entry	   *a,
			   *b;
	size_t		na,
				nb;
	int64_t		base;			/* added to every index */
	bool		transpose_a;	/* a holds Aᵀ's entries: (inner, row) */
	bool		integer;
} problem;

static xxl_matrix_config
config(size_t memory, bool integer, bool transpose_a)
{
	xxl_matrix_config c;

	memset(&c, 0, sizeof(c));
	c.res.memory = memory ? memory : xxl_matrix_min_memory();
	c.res.threads = 2;
	c.res.disk.block_size = 64 * KB;
	c.res.disk.dirs = xt_dirs;
	c.res.disk.ndisks = 2;
	c.res.disk.file_prefix = "test_matrix";
	c.res.disk.try_direct = false;
	c.res.disk.strategy = XXL_ALLOC_RANDOM_CYCLING;
	c.res.disk.seed = 11;
	c.integer = integer;
	c.transpose_a = transpose_a;
	c.method = t_method;
	return c;
}

/* Random entries: n of them over rows x cols, values in [-9, 9] (zeros too). */
static entry *
random_entries(xt_rng *rng, size_t n, int rows, int cols)
{
	entry	   *e = malloc(n * sizeof(entry));

	for (size_t i = 0; i < n; i++)
	{
		e[i].r = (int) xt_below(rng, rows);
		e[i].c = (int) xt_below(rng, cols);
		e[i].v = (int64_t) xt_below(rng, 19) - 9;
	}
	return e;
}

static double
value_of(const problem *p, int64_t v)
{
	/* floating-point values: the integers scaled, so that sums round */
	return p->integer ? (double) v : (double) v * 0.1;
}

/* The entries of one side into the product, their indices moved by base. */
static void
put_entries(xxl_matrix *m, const problem *p, xxl_matrix_side side, const entry *e, size_t n)
{
	for (size_t x = 0; x < n; x++)
	{
		xxl_matrix_value v;

		if (p->integer)
			v.i = e[x].v;
		else
			v.d = value_of(p, e[x].v);
		REQUIRE(xxl_matrix_put(m, side, p->base + e[x].r, p->base + e[x].c, v) == XXL_OK);
	}
}

/*
 * Run the product at memory and compare with the naive one; returns the
 * stats.
 */
static void
check_product(const problem *p, size_t memory, xxl_matrix_stats *st)
{
	xxl_matrix_config cfg = config(memory, p->integer, p->transpose_a);
	xxl_error	err = {0};
	xxl_matrix *m = xxl_matrix_create(&cfg, &err);
	double	   *want = calloc((size_t) p->rows * p->cols, sizeof(double));
	unsigned char *seen = calloc((size_t) p->rows * p->cols, 1);
	int64_t		gi,
				gj;
	double		gv;
	uint64_t	expected = 0,
				got_rows = 0;
	int			got;

	REQUIRE_MSG(m != NULL, "%s", err.message);
	/* the naive product: B's entries listed by row, A's entries through them */
	{
		size_t	   *start = calloc(p->inner + 1, sizeof(size_t));
		size_t	   *at;
		entry	   *by_row = malloc((p->nb + 1) * sizeof(entry));

		for (size_t e = 0; e < p->nb; e++)
			start[p->b[e].r + 1]++;
		for (int k = 0; k < p->inner; k++)
			start[k + 1] += start[k];
		at = malloc((p->inner + 1) * sizeof(size_t));
		memcpy(at, start, (p->inner + 1) * sizeof(size_t));
		for (size_t e = 0; e < p->nb; e++)
			by_row[at[p->b[e].r]++] = p->b[e];
		for (size_t e = 0; e < p->na; e++)
		{
			int			r = p->transpose_a ? p->a[e].c : p->a[e].r;
			int			k = p->transpose_a ? p->a[e].r : p->a[e].c;
			double		a = value_of(p, p->a[e].v);

			for (size_t x = start[k]; x < start[k + 1]; x++)
				want[(size_t) r * p->cols + by_row[x].c] += a * value_of(p, by_row[x].v);
		}
		free(start);
		free(at);
		free(by_row);
	}
	for (size_t x = 0; x < (size_t) p->rows * p->cols; x++)
		expected += p->integer ? want[x] != 0 : fabs(want[x]) > 1e-9;

	put_entries(m, p, XXL_MATRIX_A, p->a, p->na);
	put_entries(m, p, XXL_MATRIX_B, p->b, p->nb);
	REQUIRE_MSG(xxl_matrix_run(m) == XXL_OK, "%s", xxl_matrix_error(m)->message);
	while ((got = xxl_matrix_next(m, &gi, &gj, &gv)) > 0)
	{
		int64_t		i = gi - p->base,
					j = gj - p->base;
		double		w;

		REQUIRE(i >= 0 && i < p->rows && j >= 0 && j < p->cols);
		w = want[(size_t) i * p->cols + j];
		CHECK(!seen[(size_t) i * p->cols + j]);
		seen[(size_t) i * p->cols + j] = 1;
		if (p->integer)
			CHECK_MSG(gv == w, "(%" PRId64 ", %" PRId64 "): %g, want %g", i, j, gv, w);
		else
			CHECK_MSG(fabs(gv - w) <= 1e-9 * (fabs(w) + 1), "(%" PRId64 ", %" PRId64 "): %g, want %g",
					  i, j, gv, w);
		/* in (i, j) order */
		got_rows++;
	}
	CHECK_EQ(got, 0);
	/* floating-point sums that cancel may leave a tiny rest: those may come out */
	if (p->integer)
		CHECK_EQ(got_rows, expected);
	else
		CHECK(got_rows >= expected);
	xxl_matrix_stats_get(m, st);
	CHECK(st->memory_peak <= st->memory_limit);
	printf("  # %zu x %zu entries: %s (tile %" PRIu64 ", %" PRIu64 " tile products), %" PRIu64 " pieces, %" PRIu64 " products, %" PRIu64
		   " folded, %" PRIu64 " rows, %" PRIu64 " runs, %d passes, %" PRIu64 " spooled rows, %"
		   PRIu64 " kB written\n", p->na, p->nb, st->path, st->tile, st->tiles, st->pieces, st->products, st->folded,
		   got_rows, st->result_runs, st->result_passes, st->spooled_rows, st->bytes_written / 1024);
	xxl_matrix_destroy(m);
	free(want);
	free(seen);
}

static problem
random_problem(uint64_t seed, int rows, int inner, int cols, size_t na, size_t nb, bool integer)
{
	xt_rng		rng = {seed};
	problem		p = {rows, inner, cols, NULL, NULL, na, nb, 0, false, integer};

	p.a = random_entries(&rng, na, rows, inner);
	p.b = random_entries(&rng, nb, inner, cols);
	return p;
}

static void
free_problem(problem *p)
{
	free(p->a);
	free(p->b);
}

XT_TEST(matrix_in_memory_integer)
{
	problem		p = random_problem(1, 60, 80, 70, 2000, 2000, true);
	xxl_matrix_stats st;

	check_product(&p, 64 * 1024 * KB, &st);
	CHECK(st.in_memory);
	CHECK(st.zeros > 0);
	CHECK(strcmp(st.path, "rows") == 0);
	free_problem(&p);
}

XT_TEST(matrix_in_memory_double_transposed)
{
	problem		p = random_problem(2, 60, 80, 70, 2000, 2000, false);
	xxl_matrix_stats st;

	/* A's entries as Aᵀ's: (inner, row) */
	for (size_t e = 0; e < p.na; e++)
	{
		int			t = p.a[e].r;

		p.a[e].r = p.a[e].c % p.inner;
		p.a[e].c = t;
	}
	p.transpose_a = true;
	check_product(&p, 64 * 1024 * KB, &st);
	free_problem(&p);
}

/*
 * The smallest budget: B in many pieces whose sums take several merge
 * passes, and B's row 0 (30000 entries) outgrows a piece.
 */
XT_TEST(matrix_smallest_budget)
{
	bool		quick = xt_quick();
	problem		p = random_problem(3, 150, 300, 30000, quick ? 6000 : 20000, quick ? 8000 : 30000, true);
	xxl_matrix_stats st;
	size_t		hub = 30000;

	p.b = realloc(p.b, (p.nb + hub) * sizeof(entry));
	for (size_t h = 0; h < hub; h++)
		p.b[p.nb + h] = (entry) {0, (int) h, (int64_t) (h % 7) + 1};
	p.nb += hub;
	p.base = INT64_MIN + 3;		/* indices at the bottom of bigint */
	check_product(&p, 0, &st);
	CHECK(!st.in_memory);
	CHECK_GE(st.spooled_rows, 1);
	CHECK_GE(st.pieces, quick ? 2 : 3);
	CHECK_GE(st.result_passes, 2);
	CHECK(st.folded > 0);
	/* each run holds a key once: less on disk than every product once per pass */
	CHECK(st.bytes_written < st.products * 32 * (uint64_t) st.result_passes);
	free_problem(&p);
}

XT_TEST(matrix_double_external_top_indices)
{
	problem		p = random_problem(4, 100, 200, 300, 8000, 8000, false);
	xxl_matrix_stats st;

	p.base = INT64_MAX - 400;	/* indices at the top of bigint */
	check_product(&p, 0, &st);
	CHECK(!st.in_memory);
	free_problem(&p);
}

/* A·B = 0 although neither is: every sum cancels, nothing comes out. */
XT_TEST(matrix_cancels_to_zero)
{
	entry		a[] = {{0, 0, 1}, {0, 1, 1}};
	entry		b[] = {{0, 0, 5}, {1, 0, -5}, {0, 1, 2}, {1, 1, -2}};
	problem		p = {1, 2, 2, a, b, 2, 4, -1, false, true};
	xxl_matrix_stats st;

	check_product(&p, 0, &st);
	CHECK_EQ(st.zero_results, 2);
	CHECK_EQ(st.products, 4);
}

XT_TEST(matrix_empty)
{
	entry		b[] = {{0, 0, 5}};
	problem		p = {1, 1, 1, NULL, b, 0, 1, 0, false, true};
	xxl_matrix_stats st;

	check_product(&p, 0, &st);
	CHECK_EQ(st.products, 0);
	p.na = 0;
	p.nb = 0;
	check_product(&p, 0, &st);
}

/* Integer products beyond 64 bits are exact in 128. */
XT_TEST(matrix_wide_integers)
{
	xxl_matrix_config cfg = config(0, true, false);
	xxl_error	err = {0};
	xxl_matrix *m = xxl_matrix_create(&cfg, &err);
	xxl_matrix_value big = {.i = INT64_MAX},
				neg = {.i = -INT64_MAX},
				one = {.i = 1};
	int64_t		i,
				j;
	double		v;

	REQUIRE(m != NULL);
	/* C[0][0] = MAX*MAX - MAX*MAX + 1 = 1, exactly */
	REQUIRE(xxl_matrix_put(m, XXL_MATRIX_A, 0, 0, big) == XXL_OK);
	REQUIRE(xxl_matrix_put(m, XXL_MATRIX_A, 0, 1, neg) == XXL_OK);
	REQUIRE(xxl_matrix_put(m, XXL_MATRIX_A, 0, 2, one) == XXL_OK);
	REQUIRE(xxl_matrix_put(m, XXL_MATRIX_B, 0, 0, big) == XXL_OK);
	REQUIRE(xxl_matrix_put(m, XXL_MATRIX_B, 1, 0, big) == XXL_OK);
	REQUIRE(xxl_matrix_put(m, XXL_MATRIX_B, 2, 0, one) == XXL_OK);
	REQUIRE(xxl_matrix_run(m) == XXL_OK);
	CHECK_EQ(xxl_matrix_next(m, &i, &j, &v), 1);
	CHECK(i == 0 && j == 0 && v == 1.0);
	CHECK_EQ(xxl_matrix_next(m, &i, &j, &v), 0);
	xxl_matrix_destroy(m);
}

/*
 * Many columns (more than the rows' tables hold four times over) and rows
 * of the result touching about a hundred of them per piece: sums in the
 * table, sorted by radix, in three pieces at 4MB.
 */
XT_TEST(matrix_rows_in_tables)
{
	xt_rng		rng = {8};
	problem		p = {300, 2000, 100000, NULL, NULL, 3000, 60000, 0, false, false};
	xxl_matrix_stats st;

	p.a = random_entries(&rng, p.na, p.rows, p.inner);
	p.b = random_entries(&rng, p.nb, p.inner, p.cols);
	check_product(&p, 4 * 1024 * KB, &st);
	CHECK(strcmp(st.path, "pieces") == 0 || strcmp(st.path, "rows") == 0);
	p.integer = true;
	check_product(&p, 64 * 1024 * KB, &st);
	free_problem(&p);
}

/* Dense matrices: auto takes the tiles; the sparse path gives the same. */
XT_TEST(matrix_dense_auto_and_forced)
{
	xt_rng		rng = {5};
	problem		p = {300, 200, 250, NULL, NULL, 0, 0, -100, false, true};
	xxl_matrix_stats st;

	/* three quarters of every cell (repeats add up), values with zeros */
	p.na = 300 * 200;
	p.nb = 200 * 250;
	p.a = random_entries(&rng, p.na, p.rows, p.inner);
	p.b = random_entries(&rng, p.nb, p.inner, p.cols);
	for (int integer = 1; integer >= 0; integer--)
	{
		p.integer = integer;
		check_product(&p, 64 * 1024 * KB, &st);
		CHECK(strcmp(st.path, "dense") == 0);
		CHECK(st.tile >= 64);
		t_method = XXL_MATRIX_SPARSE;
		check_product(&p, 64 * 1024 * KB, &st);
		CHECK(strcmp(st.path, "dense") != 0);
		t_method = XXL_MATRIX_AUTO;
	}
	/* the smallest budget: small tiles, many of them, on disk */
	check_product(&p, 0, &st);
	CHECK(strcmp(st.path, "dense") == 0);
	CHECK(st.tiles >= 27);
	CHECK(!st.in_memory);
	free_problem(&p);
}

/* Forced onto sparse input, the dense path gives the same answer. */
XT_TEST(matrix_dense_forced_sparse_input)
{
	problem		p = random_problem(6, 100, 150, 120, 3000, 3000, false);
	xxl_matrix_stats st;

	t_method = XXL_MATRIX_DENSE;
	p.base = INT64_MAX - 200;
	check_product(&p, 0, &st);
	CHECK(strcmp(st.path, "dense") == 0);
	p.transpose_a = true;
	for (size_t e = 0; e < p.na; e++)
	{
		int			t = p.a[e].r;

		p.a[e].r = p.a[e].c % p.inner;
		p.a[e].c = t;
	}
	check_product(&p, 0, &st);
	t_method = XXL_MATRIX_AUTO;
	free_problem(&p);
}

/*
 * Inputs 200 times the smallest budget (7M entries of 24 bytes): the
 * sorts of A and B take several merge passes and B about a thousand
 * pieces; A·B of a permutation-like pattern against its closed form.
 */
XT_TEST(matrix_inputs_200x_budget)
{
	xxl_matrix_config cfg = config(0, true, false);
	xxl_error	err = {0};
	xxl_matrix *m = xxl_matrix_create(&cfg, &err);
	uint64_t	n = xt_quick() ? 300000 : 3500000,
				got_rows = 0;
	xxl_matrix_stats st;
	int64_t		i,
				j;
	double		v;
	int			got;

	REQUIRE(m != NULL);
	/* A: (x, x) = x % 5 + 1; B: (x, 7x mod n) = 2 - x % 3 (so 0 for some) */
	for (uint64_t x = 0; x < n; x++)
	{
		xxl_matrix_value a = {.i = (int64_t) (x % 5) + 1},
					b = {.i = 2 - (int64_t) (x % 3)};

		REQUIRE(xxl_matrix_put(m, XXL_MATRIX_A, (int64_t) x, (int64_t) x, a) == XXL_OK);
		REQUIRE(xxl_matrix_put(m, XXL_MATRIX_B, (int64_t) x, (int64_t) (x * 7 % n), b) == XXL_OK);
	}
	REQUIRE_MSG(xxl_matrix_run(m) == XXL_OK, "%s", xxl_matrix_error(m)->message);
	while ((got = xxl_matrix_next(m, &i, &j, &v)) > 0)
	{
		REQUIRE(i >= 0 && (uint64_t) i < n);
		CHECK_EQ(j, (int64_t) ((uint64_t) i * 7 % n));
		CHECK(v == (double) (((i % 5) + 1) * (2 - i % 3)));
		got_rows++;
	}
	CHECK_EQ(got, 0);
	/* every x but those with x % 3 == 2 (B's value 0) */
	CHECK_EQ(got_rows, n - (n + 0) / 3);
	xxl_matrix_stats_get(m, &st);
	CHECK((st.entries_a + st.entries_b) * 24 >= 200 * st.memory_limit / (xt_quick() ? 12 : 1));
	CHECK(st.memory_peak <= st.memory_limit);
	CHECK_GE(st.pieces, xt_quick() ? 20 : 100);
	printf("  # %" PRIu64 " + %" PRIu64 " entries at %" PRIu64 " kB: %s, %" PRIu64 " pieces, %" PRIu64
		   " MB written\n", st.entries_a, st.entries_b, st.memory_limit / 1024, st.path, st.pieces,
		   st.bytes_written >> 20);
	xxl_matrix_destroy(m);
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
