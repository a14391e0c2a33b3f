/*
 * matrix.c — the sparse matrix product (xxl_matrix.h): the budget's
 * split, the entries of A and B into their sorters by the inner index, the
 * merge that meets A's column k with B's row k and forms the partial
 * products, their aggregating sort by (i, j), the pull interface,
 * statistics and teardown.
 */
#include "core/matrix/xxl_matrix.h"
#include "core/xxl_env.h"

#include <stddef.h>

/* Entries of A and B as sorted: [k][row or column][value], k the key. */
#define ENTRY_REC 24
#define ENTRY_KEY 8
/* Partial products: [i][j][sum], 8 bytes of double or 16 of int128. */
#define PRODUCT_KEY 16
/* B's row at one inner index, held: [column][value]. */
#define HELD_REC 16

/* own streams open at once (the spool of a row of B too large to hold), two buffers each */
#define OWN_BUFFERS 2

typedef enum matrix_state
{
	M_INPUT,
	M_OUTPUT,
	M_FAILED
} matrix_state;

struct xxl_matrix
{
	xxl_env		env;
	matrix_state state;
	bool		integer;
	bool		transpose_a;
	size_t		product_rec;
	xxl_env_sorter sa,
				sb,
				sc;
	/* the row of B at the inner index being joined */
	unsigned char *held;
	size_t		held_bytes,
				held_cap,		/* entries */
				nheld;
	xxl_spool	rest;			/* its entries beyond held_cap */
	uint64_t	nrest;
	bool		overflow;		/* an integer sum left int128 */
	/* statistics */
	uint64_t	entries[2],
				zeros,
				inner,
				products,
				zero_results,
				largest_row,
				spooled_rows,
				result_runs;
	int			result_passes;
	uint64_t	join_ns,
				run_ns;
};

static inline void
put_be(unsigned char *p, uint64_t v)
{
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
}

static inline uint64_t
get_be(const unsigned char *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

/* Signed indices as unsigned keys of the same order. */
static inline uint64_t
index_key(int64_t x)
{
	return (uint64_t) x ^ (UINT64_C(1) << 63);
}

static inline int64_t
key_index(uint64_t k)
{
	return (int64_t) (k ^ (UINT64_C(1) << 63));
}

/* The budget ----------------------------------------------------------------- */

static size_t
own_block_for(size_t memory, size_t max_block)
{
	size_t		b = XXL_ALIGN;

	while (b * 2 <= max_block && b * 2 <= memory / 128)
		b *= 2;
	return b;
}

/* A sorter's share: three of them, and a tenth of the pool for B's row. */
static size_t
sorter_share(size_t pool)
{
	size_t		s = pool / 10 * 3;

	return s - s % XXL_ALIGN;
}

size_t
xxl_matrix_min_memory(void)
{
	size_t		m = 256 * 1024;

	while (sorter_share(xxl_env_pool_for(m, own_block_for(m, XXL_ENV_DEFAULT_BLOCK), OWN_BUFFERS)) <
		   xxl_sort_min_memory(XXL_ALIGN) + XXL_ALIGN)
		m += 16 * 1024;
	return m;
}

static const xxl_env_plan matrix_plan = {"matrix", OWN_BUFFERS, xxl_matrix_min_memory, own_block_for};

/* The partial products' sums ---------------------------------------------------- */

static void
sum_double(void *acc, const void *rec, void *arg)
{
	double		a,
				b;

	(void) arg;
	memcpy(&a, (char *) acc + PRODUCT_KEY, 8);
	memcpy(&b, (const char *) rec + PRODUCT_KEY, 8);
	a += b;
	memcpy((char *) acc + PRODUCT_KEY, &a, 8);
}

static void
sum_int128(void *acc, const void *rec, void *arg)
{
	__int128	a,
				b;

	memcpy(&a, (char *) acc + PRODUCT_KEY, 16);
	memcpy(&b, (const char *) rec + PRODUCT_KEY, 16);
	if (__builtin_add_overflow(a, b, &a))
		((xxl_matrix *) arg)->overflow = true;
	memcpy((char *) acc + PRODUCT_KEY, &a, 16);
}

/* Creation and input --------------------------------------------------------------- */

static xxl_status
fail(xxl_matrix *m)
{
	m->state = M_FAILED;
	return m->env.err.code != XXL_OK ? m->env.err.code :
		xxl_error_set(&m->env.err, XXL_EINVAL, 0, "matrix product failed");
}

xxl_matrix *
xxl_matrix_create(const xxl_matrix_config *config, xxl_error *err)
{
	xxl_matrix *m = xxl_env_new_object(&config->res, &matrix_plan, sizeof(*m),
									   offsetof(xxl_matrix, env), err);
	size_t		share;

	if (m == NULL)
		return NULL;
	m->integer = config->integer;
	m->transpose_a = config->transpose_a;
	m->product_rec = PRODUCT_KEY + (m->integer ? 16 : 8);
	m->state = M_INPUT;
	share = sorter_share(m->env.pool);
	xxl_spool_init(&m->rest, &m->env, XXL_SPOOL_SHARED);
	if (xxl_env_sort_open(&m->env, &m->sa, share, 0, ENTRY_REC, ENTRY_KEY, config->expected_a,
						  XXL_INPUT_UNBOUNDED) != XXL_OK ||
		xxl_env_sort_open(&m->env, &m->sb, share, 0, ENTRY_REC, ENTRY_KEY, config->expected_b,
						  XXL_INPUT_UNBOUNDED) != XXL_OK)
	{
		*err = m->env.err;
		xxl_matrix_destroy(m);
		return NULL;
	}
	return m;
}

xxl_status
xxl_matrix_put(xxl_matrix *m, xxl_matrix_side side, int64_t row, int64_t col, xxl_matrix_value v)
{
	xxl_env_sorter *ts = side == XXL_MATRIX_A ? &m->sa : &m->sb;
	unsigned char local[ENTRY_REC],
			   *r;
	int64_t		k,
				other;

	if (m->state != M_INPUT)
	{
		if (m->env.err.code == XXL_OK)
			xxl_error_set(&m->env.err, XXL_EINVAL, 0, "matrix entry put after run");
		return fail(m);
	}
	m->entries[side]++;
	if (m->integer ? v.i == 0 : v.d == 0)
	{
		m->zeros++;				/* (adds nothing to any sum) */
		return xxl_env_poll(&m->env) ? fail(m) : XXL_OK;
	}
	/* the inner index first: A's column (its row for Aᵀ), B's row */
	if (side == XXL_MATRIX_A && !m->transpose_a)
		k = col, other = row;
	else if (side == XXL_MATRIX_A)
		k = row, other = col;
	else
		k = row, other = col;
	r = xxl_env_sort_room(ts, local);
	put_be(r, index_key(k));
	put_be(r + 8, index_key(other));
	memcpy(r + 16, &v, 8);
	if (xxl_env_sort_push(&m->env, ts, r) != XXL_OK || xxl_env_poll(&m->env))
		return fail(m);
	return XXL_OK;
}

/* The join ------------------------------------------------------------------------ */

/* Hold B's entry (column, value) of the current inner index, or spool it past the held ones. */
static xxl_status
hold(xxl_matrix *m, const unsigned char *rec)
{
	if (m->nheld < m->held_cap)
	{
		memcpy(m->held + m->nheld * HELD_REC, rec + 8, HELD_REC);
		m->nheld++;
		return XXL_OK;
	}
	m->nrest++;
	return xxl_spool_write(&m->rest, rec + 8, HELD_REC);
}

/* One partial product (row i of A's entry, held entry h) into the products' sort. */
static inline xxl_status
emit(xxl_matrix *m, const unsigned char *i_key, xxl_matrix_value a, const unsigned char *h)
{
	unsigned char local[PRODUCT_KEY + 16],
			   *r = xxl_env_sort_room(&m->sc, local);
	xxl_matrix_value b;

	memcpy(r, i_key, 8);
	memcpy(r + 8, h, 8);
	memcpy(&b, h + 8, 8);
	if (m->integer)
	{
		__int128	p = (__int128) a.i * b.i;

		memcpy(r + PRODUCT_KEY, &p, 16);
	}
	else
	{
		double		p = a.d * b.d;

		memcpy(r + PRODUCT_KEY, &p, 8);
	}
	return xxl_env_sort_push(&m->env, &m->sc, r);
}

/* A's entry (its row's key, value) times every entry of B's row held and spooled. */
static xxl_status
multiply(xxl_matrix *m, const unsigned char *i_key, xxl_matrix_value a)
{
	xxl_spool_reader rd;
	xxl_status	rc = XXL_OK;

	for (size_t h = 0; h < m->nheld; h++)
		if (emit(m, i_key, a, m->held + h * HELD_REC) != XXL_OK)
			return m->env.err.code;
	m->products += m->nheld + m->nrest;
	if (m->nrest == 0)
		return xxl_env_poll_n(&m->env, m->nheld) ? m->env.err.code : XXL_OK;
	if (xxl_spool_reader_open(&rd, &m->rest, false) != XXL_OK)
		return m->env.err.code;
	for (uint64_t h = 0; h < m->nrest && rc == XXL_OK; h++)
	{
		const unsigned char *p;

		if ((rc = xxl_spool_read(&rd, HELD_REC, &p)) == XXL_OK)
			rc = emit(m, i_key, a, p);
		if (rc == XXL_OK && xxl_env_poll(&m->env))
			rc = m->env.err.code;
	}
	xxl_spool_reader_close(&rd);
	return rc;
}

/*
 * Both sorted streams merged by the inner index: where both have k, B's
 * row k is held (and spooled past its share) and each entry of A's column
 * k multiplies it.
 */
static xxl_status
join(xxl_matrix *m)
{
	xxl_env    *env = &m->env;
	const unsigned char *ra = NULL,
			   *rb = NULL;
	int			got_a = xxl_env_sort_next(env, &m->sa, &ra),
				got_b = got_a >= 0 ? xxl_env_sort_next(env, &m->sb, &rb) : 0;

	while (got_a > 0 && got_b > 0)
	{
		uint64_t	ka = get_be(ra),
					kb = get_be(rb);

		if (ka != kb)
		{
			if (ka < kb)
				got_a = xxl_env_sort_next(env, &m->sa, &ra);
			else
				got_b = xxl_env_sort_next(env, &m->sb, &rb);
			if (xxl_env_poll(env))
				return env->err.code;
			continue;
		}
		m->inner++;
		m->nheld = 0;
		m->nrest = 0;
		for (; got_b > 0 && get_be(rb) == kb; got_b = xxl_env_sort_next(env, &m->sb, &rb))
			if (hold(m, rb) != XXL_OK)
				return env->err.code;
		if (got_b < 0)
			break;
		if (m->nheld + m->nrest > m->largest_row)
			m->largest_row = m->nheld + m->nrest;
		if (m->nrest > 0)
		{
			m->spooled_rows++;
			if (xxl_spool_finish(&m->rest) != XXL_OK)
				return env->err.code;
		}
		for (; got_a > 0 && get_be(ra) == ka; got_a = xxl_env_sort_next(env, &m->sa, &ra))
		{
			xxl_matrix_value a;

			memcpy(&a, ra + 16, 8);
			if (multiply(m, ra + 8, a) != XXL_OK)
				return env->err.code;
		}
		if (m->nrest > 0)
		{
			xxl_spool_free(&m->rest);
			xxl_spool_init(&m->rest, env, XXL_SPOOL_SHARED);
		}
	}
	return got_a < 0 || got_b < 0 ? env->err.code : XXL_OK;
}

xxl_status
xxl_matrix_run(xxl_matrix *m)
{
	xxl_env    *env = &m->env;
	uint64_t	t0 = xxl_now_ns();
	xxl_sort_stats st;

	if (m->state != M_INPUT)
		return m->state == M_FAILED ? m->env.err.code : XXL_OK;
	if (xxl_env_sort_sort(env, &m->sa) != XXL_OK || xxl_env_sort_sort(env, &m->sb) != XXL_OK)
		return fail(m);
	xxl_env_step(env, "products", 1, 2);
	m->held_cap = (env->pool / 10) / HELD_REC;
	m->held = xxl_env_alloc(env, m->held_cap * HELD_REC);
	m->held_bytes = m->held_cap * HELD_REC;
	if (m->held == NULL ||
		xxl_env_sort_open_combined(env, &m->sc, sorter_share(env->pool), m->product_rec, PRODUCT_KEY, 0,
								   m->integer ? sum_int128 : sum_double, m) != XXL_OK ||
		join(m) != XXL_OK)
		return fail(m);
	/* the factors' sorters and B's row give their memory back before the sums are sorted */
	xxl_env_sort_close(env, &m->sa, NULL, NULL);
	xxl_env_sort_close(env, &m->sb, NULL, NULL);
	xxl_env_free(env, m->held, m->held_bytes);
	m->held = NULL;
	m->join_ns = xxl_now_ns() - t0;
	xxl_env_step(env, "sums", 2, 2);
	if (xxl_env_sort_sort(env, &m->sc) != XXL_OK)
		return fail(m);
	xxl_sorter_stats(m->sc.s, &st);
	m->result_runs = st.runs;
	m->result_passes = st.merge_passes;
	m->run_ns = xxl_now_ns() - t0;
	m->state = M_OUTPUT;
	return XXL_OK;
}

/* Output ------------------------------------------------------------------------- */

int
xxl_matrix_next(xxl_matrix *m, int64_t *i, int64_t *j, double *v)
{
	const unsigned char *r;
	int			got;

	if (m->state != M_OUTPUT)
	{
		if (m->state == M_INPUT)
			xxl_error_set(&m->env.err, XXL_EINVAL, 0, "xxl_matrix_run must come before the rows");
		fail(m);
		return -1;
	}
	while ((got = xxl_env_sort_next(&m->env, &m->sc, &r)) > 0)
	{
		/* (the sums are folded as they come out: a key's overflow shows by its row) */
		if (m->overflow)
		{
			xxl_error_set(&m->env.err, XXL_ERANGE, 0,
						  "a sum of integer products is out of range for 128 bits");
			fail(m);
			return -1;
		}
		if (m->integer)
		{
			__int128	s;

			memcpy(&s, r + PRODUCT_KEY, 16);
			if (s == 0)
			{
				m->zero_results++;
				continue;
			}
			*v = (double) s;
		}
		else
		{
			memcpy(v, r + PRODUCT_KEY, 8);
			if (*v == 0)
			{
				m->zero_results++;
				continue;
			}
		}
		*i = key_index(get_be(r));
		*j = key_index(get_be(r + 8));
		return 1;
	}
	if (got < 0)
		fail(m);
	else if (m->overflow)
	{
		xxl_error_set(&m->env.err, XXL_ERANGE, 0,
					  "a sum of integer products is out of range for 128 bits");
		fail(m);
		return -1;
	}
	return got;
}

const xxl_error *
xxl_matrix_error(const xxl_matrix *m)
{
	return &m->env.err;
}

size_t
xxl_matrix_memory_held(const xxl_matrix *m)
{
	return m->env.budget.used;
}

void
xxl_matrix_stats_get(xxl_matrix *m, xxl_matrix_stats *st)
{
	xxl_env    *env = &m->env;
	xxl_io_stats open_io;
	uint64_t	wait;
	bool		direct;

	memset(st, 0, sizeof(*st));
	st->path = "sparse";
	st->entries_a = m->entries[XXL_MATRIX_A];
	st->entries_b = m->entries[XXL_MATRIX_B];
	st->zeros = m->zeros;
	st->inner = m->inner;
	st->products = m->products;
	st->zero_results = m->zero_results;
	st->largest_row = m->largest_row;
	st->spooled_rows = m->spooled_rows;
	st->result_runs = m->result_runs;
	st->result_passes = m->result_passes;
	if (m->sc.s != NULL)
	{
		xxl_sort_stats ss;

		xxl_sorter_stats(m->sc.s, &ss);
		st->folded = ss.combined;
	}
	st->sorts = env->done.sorts;
	st->sorted_bytes = env->done.sorted_bytes;
	xxl_env_io(env, &st->io);
	xxl_env_io_sum(env, &st->bytes_read, &st->bytes_written, &wait, &direct);
	memset(&open_io, 0, sizeof(open_io));
	xxl_env_sort_io(&m->sa, &open_io);
	xxl_env_sort_io(&m->sb, &open_io);
	xxl_env_sort_io(&m->sc, &open_io);
	for (int d = 0; d < open_io.ndisks; d++)
	{
		st->bytes_read += open_io.disk[d].bytes_read;
		st->bytes_written += open_io.disk[d].bytes_written;
	}
	xxl_io_fold(&st->io, &open_io);
	st->in_memory = st->bytes_written == 0;
	st->memory_peak = xxl_env_used_peak(env);
	st->memory_held = env->budget.used;
	st->memory_limit = env->budget.limit;
	st->join_ns = m->join_ns;
	st->run_ns = m->run_ns;
}

void
xxl_matrix_destroy(xxl_matrix *m)
{
	xxl_budget	budget;

	if (m == NULL)
		return;
	xxl_spool_free(&m->rest);
	if (m->held)
		xxl_env_free(&m->env, m->held, m->held_bytes);
	xxl_env_sort_close(&m->env, &m->sa, NULL, NULL);
	xxl_env_sort_close(&m->env, &m->sb, NULL, NULL);
	xxl_env_sort_close(&m->env, &m->sc, NULL, NULL);
	xxl_env_close(&m->env);
	budget = m->env.budget;
	xxl_budget_free(&budget, m, sizeof(*m));
}
