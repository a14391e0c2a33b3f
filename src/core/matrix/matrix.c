/*
 * matrix.c — the sparse matrix product (xxl_matrix.h): the budget's
 * split, the entries of A and B into their sorters by the inner index,
 * the one pass over both that holds B's rows a piece at a time
 * (matrix_rows.c, matrix_product.c), the aggregating sort of the pieces'
 * sums, the pull interface, statistics and teardown.
 */
#include "core/matrix/matrix_internal.h"

/* own streams open at once (the spool of a row of B too large to hold), two buffers each */
#define OWN_BUFFERS 2

/* The budget ----------------------------------------------------------------- */


/* Twentieths of the pool (MX_SHARE_*: matrix_internal.h). */
static size_t
twentieths(size_t pool, int n)
{
	size_t		s = pool / 20 * n;

	return s - s % XXL_ALIGN;
}

size_t
mx_share(const xxl_matrix *m, int n)
{
	return twentieths(m->env.pool, n);
}

size_t
xxl_matrix_min_memory(void)
{
	size_t		m = 256 * 1024;

	while (twentieths(xxl_env_pool_for(m, xxl_env_stream_block(m, XXL_ENV_DEFAULT_BLOCK), OWN_BUFFERS),
					  MX_SHARE_PIECE_ROWS) <
		   xxl_sort_min_memory(XXL_ALIGN) + XXL_ALIGN)
		m += 16 * 1024;
	return m;
}

static const xxl_env_plan matrix_plan = {"matrix", OWN_BUFFERS, xxl_matrix_min_memory, xxl_env_stream_block};

/* The partial products' sums ---------------------------------------------------- */

/* The sums' sort's combine: two sums of one key added. */
static void
add_sums(void *acc, const void *rec, void *arg)
{
	mx_add_sum(arg, (unsigned char *) acc + PRODUCT_KEY, (const unsigned char *) rec + PRODUCT_KEY);
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
	m->method = config->method;
	for (int b = 0; b < 4; b++)
	{
		m->lo[b] = INT64_MAX;
		m->hi[b] = INT64_MIN;
	}
	m->product_rec = PRODUCT_KEY + (m->integer ? 16 : 8);
	m->state = M_INPUT;
	share = mx_share(m, MX_SHARE_INPUT);
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
	bool		by_col;

	if (m->state != M_INPUT)
	{
		if (m->env.err.code == XXL_OK)
			xxl_error_set(&m->env.err, XXL_EINVAL, 0, "matrix entry put after run");
		return fail(m);
	}
	m->entries[side]++;
	if (m->integer ? v.i == 0 : v.d == 0)
	{
		m->zeros[side]++;		/* (adds nothing to any sum) */
		return xxl_env_poll(&m->env) ? fail(m) : XXL_OK;
	}
	/* the inner index first: A's column (its row for Aᵀ), B's row */
	by_col = side == XXL_MATRIX_A && !m->transpose_a;
	k = by_col ? col : row;
	other = by_col ? row : col;
	/* the bounding boxes (A: rows 0, inner 1; B: inner 2, columns 3) */
	{
		int			bk = side == XXL_MATRIX_A ? 1 : 2,
					bo = side == XXL_MATRIX_A ? 0 : 3;

		if (k < m->lo[bk])
			m->lo[bk] = k;
		if (k > m->hi[bk])
			m->hi[bk] = k;
		if (other < m->lo[bo])
			m->lo[bo] = other;
		if (other > m->hi[bo])
			m->hi[bo] = other;
		if (m->integer)
		{
			uint64_t	mag = v.i < 0 ? (uint64_t) 0 - (uint64_t) v.i : (uint64_t) v.i;

			if (mag > m->max_abs[side])
				m->max_abs[side] = mag;
		}
	}
	r = xxl_env_sort_room(ts, local);
	xxl_store_be64(r, xxl_signed_key(k));
	xxl_store_be64(r + 8, xxl_signed_key(other));
	memcpy(r + 16, &v, 8);
	if (xxl_env_sort_push(&m->env, ts, r) != XXL_OK || xxl_env_poll(&m->env))
		return fail(m);
	return XXL_OK;
}

/* The pass ------------------------------------------------------------------------ */

xxl_status
mx_push_sum(xxl_matrix *m, uint64_t i, uint64_t j, const unsigned char *sum, bool in_order)
{
	unsigned char local[PRODUCT_KEY + 16],
			   *r;

	if (m->sc.s == NULL &&
		xxl_env_sort_open_combined(&m->env, &m->sc, mx_share(m, MX_SHARE_SUMS), m->product_rec, PRODUCT_KEY, 0,
								   add_sums, m) != XXL_OK)
		return m->env.err.code;
	r = xxl_env_sort_room(&m->sc, local);
	xxl_store_be64(r, i);
	xxl_store_be64(r + 8, j);
	memcpy(r + PRODUCT_KEY, sum, m->product_rec - PRODUCT_KEY);
	if (in_order)
		return xxl_env_sort_put_sorted(&m->env, &m->sc, r);
	return xxl_env_sort_push(&m->env, &m->sc, r);
}

/*
 * One pass over A and B sorted by inner index: B's rows in pieces, each
 * with A's entries that meet it (matrix_rows.c), a row too large for a
 * piece by itself (matrix_product.c).  B in one piece leaves the rows to
 * be accumulated as they are pulled; else the pieces' sums are sorted.
 */
static xxl_status
pass(xxl_matrix *m)
{
	xxl_env    *env = &m->env;

	mx_next_a(m);
	mx_next_b(m);
	while (m->got_a > 0 && (m->got_b > 0 || m->loaded > m->nent))
	{
		bool		big;
		bool		alone;

		if (mx_piece_load(m, &big) != XXL_OK)
			return env->err.code;
		if (big)
		{
			if (mx_big_row(m) != XXL_OK)
				return env->err.code;
			continue;
		}
		if (m->nrows == 0)
			break;
		alone = m->pieces == 0 && m->sc.s == NULL && m->got_b == 0 && m->loaded == m->nent;
		if (mx_piece_pass(m, alone) != XXL_OK)
			return env->err.code;
		if (alone)
			return XXL_OK;
		for (int got; (got = mx_piece_row(m)) != 0;)
			if (got < 0)
				return env->err.code;
		/* the piece's sums came in (i, j) order: one run of the sums' sort */
		if (m->sc.s != NULL && xxl_env_sort_end_sorted(env, &m->sc) != XXL_OK)
			return env->err.code;
		xxl_env_sort_close(env, &m->sp, NULL, NULL);
	}
	if (m->got_a < 0 || m->got_b < 0)
		return env->err.code;
	m->state = M_SORTED;
	return XXL_OK;
}

xxl_status
xxl_matrix_run(xxl_matrix *m)
{
	xxl_env    *env = &m->env;
	uint64_t	t0 = xxl_now_ns();

	if (m->state != M_INPUT)
		return m->state == M_FAILED ? m->env.err.code : XXL_OK;
	if (xxl_env_sort_sort(env, &m->sa) != XXL_OK || xxl_env_sort_sort(env, &m->sb) != XXL_OK)
		return fail(m);
	if (mx_dense_wanted(m))
	{
		xxl_env_step(env, "tiles", 1, 2);
		if (mx_dense_build(m) != XXL_OK)
			return fail(m);
		m->join_ns = m->run_ns = xxl_now_ns() - t0;
		xxl_env_step(env, "tile products", 2, 2);
		return XXL_OK;
	}
	xxl_env_step(env, "products", 1, 2);
	if (mx_rows_open(m) != XXL_OK || pass(m) != XXL_OK)
		return fail(m);
	/* the factors' sorters give their memory back before the sums are sorted */
	xxl_env_sort_close(env, &m->sa, NULL, NULL);
	xxl_env_sort_close(env, &m->sb, NULL, NULL);
	m->join_ns = xxl_now_ns() - t0;
	if (m->state == M_SORTED)
	{
		mx_rows_close(m);
		xxl_env_step(env, "sums", 2, 2);
		if (m->sc.s != NULL && xxl_env_sort_sort(env, &m->sc) != XXL_OK)
			return fail(m);
	}
	m->run_ns = xxl_now_ns() - t0;
	return XXL_OK;
}

/* Output ------------------------------------------------------------------------- */

static int
range_error(xxl_matrix *m)
{
	xxl_error_set(&m->env.err, XXL_ERANGE, 0, "a sum of integer products is out of range for 128 bits");
	fail(m);
	return -1;
}

/* The next sum of the rows accumulated as they are pulled. */
static int
next_streamed(xxl_matrix *m, int64_t *i, int64_t *j, double *v)
{
	for (;;)
	{
		int			got;

		if (mx_row_next(m, i, j, v) > 0)
			return m->overflow ? range_error(m) : 1;
		if ((got = mx_piece_row(m)) <= 0)
		{
			if (got < 0)
				fail(m);
			return got < 0 ? -1 : m->overflow ? range_error(m) : 0;
		}
	}
}

int
xxl_matrix_next(xxl_matrix *m, int64_t *i, int64_t *j, double *v)
{
	const unsigned char *r;
	int			got;

	if (m->state == M_STREAM)
		return next_streamed(m, i, j, v);
	if (m->state == M_DENSE)
	{
		if ((got = mx_dense_next(m, i, j, v)) < 0)
			fail(m);
		return got > 0 && m->overflow ? range_error(m) : got;
	}
	if (m->state != M_SORTED)
	{
		if (m->state == M_INPUT)
			xxl_error_set(&m->env.err, XXL_EINVAL, 0, "xxl_matrix_run must come before the rows");
		fail(m);
		return -1;
	}
	if (m->sc.s == NULL)
		return 0;				/* no sums at all */
	while ((got = xxl_env_sort_next(&m->env, &m->sc, &r)) > 0)
	{
		/* (the sums are folded as they come out: a key's overflow shows by its row) */
		if (m->overflow)
			return range_error(m);
		if (!mx_sum_value(m, r + PRODUCT_KEY, v))
		{
			m->zero_results++;
			continue;
		}
		*i = xxl_key_signed(xxl_load_be64(r));
		*j = xxl_key_signed(xxl_load_be64(r + 8));
		return 1;
	}
	if (got < 0)
		fail(m);
	else if (m->overflow)
		return range_error(m);
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
	st->path = m->tile > 0 ? "dense" :
		m->state == M_STREAM || (m->pieces <= 1 && m->sc.s == NULL) ? "rows" : "pieces";
	st->tile = m->tile;
	st->tiles = m->tiles;
	st->entries_a = m->entries[XXL_MATRIX_A];
	st->entries_b = m->entries[XXL_MATRIX_B];
	st->zeros = m->zeros[XXL_MATRIX_A] + m->zeros[XXL_MATRIX_B];
	st->inner = m->inner;
	st->products = m->products;
	st->zero_results = m->zero_results;
	st->largest_row = m->largest_row;
	st->spooled_rows = m->spooled_rows;
	st->pieces = m->pieces;
	if (m->sc.s != NULL)
	{
		xxl_sort_stats ss;

		xxl_sorter_stats(m->sc.s, &ss);
		st->folded = ss.combined;
		st->result_runs = ss.runs;
		st->result_passes = ss.merge_passes;
	}
	st->sorts = env->done.sorts;
	st->sorted_bytes = env->done.sorted_bytes;
	xxl_env_io(env, &st->io);
	xxl_env_io_sum(env, &st->bytes_read, &st->bytes_written, &wait, &direct);
	memset(&open_io, 0, sizeof(open_io));
	xxl_env_sort_io(&m->sa, &open_io);
	xxl_env_sort_io(&m->sb, &open_io);
	xxl_env_sort_io(&m->sc, &open_io);
	xxl_env_sort_io(&m->sp, &open_io);
	/* the dense path's tile files, while open */
	for (int f = 0; f < 2; f++)
	{
		const xxl_pagefile *pf = f == 0 ? &m->pa : &m->pb;

		if (pf->disks != NULL)
		{
			xxl_io_stats io;

			xxl_disks_stats(pf->disks, &io);
			xxl_io_fold(&open_io, &io);
		}
	}
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
	mx_rows_close(m);
	mx_dense_close(m);
	xxl_env_sort_close(&m->env, &m->sa, NULL, NULL);
	xxl_env_sort_close(&m->env, &m->sb, NULL, NULL);
	xxl_env_sort_close(&m->env, &m->sc, NULL, NULL);
	xxl_env_close(&m->env);
	budget = m->env.budget;
	xxl_budget_free(&budget, m, sizeof(*m));
}
