/*
 * matrix_product.c — an inner index k whose row of B alone outgrows a
 * piece (matrix_rows.c): the entries read so far stay in the piece, the
 * rest go to a spool, and each of A's entries at k multiplies them all,
 * every partial product going into the sums' aggregating sort.  The
 * spool is read again per entry of A; that costs no more than the
 * partial products it makes.
 */
#include "core/matrix/matrix_internal.h"

/* One partial product (A's row key, value) times B's entry (column key, value) into the sums. */
static inline xxl_status
emit(xxl_matrix *m, uint64_t i, xxl_matrix_value a, uint64_t j, xxl_matrix_value b)
{
	unsigned char sum[16] = {0};

	mx_add_product(m, sum, a, b);
	return mx_push_sum(m, i, j, sum, false);
}

/* A's entry at k times every entry of B's row k, held and spooled. */
static xxl_status
multiply(xxl_matrix *m, uint64_t i, xxl_matrix_value a)
{
	xxl_spool_reader rd;
	xxl_status	rc = XXL_OK;

	for (size_t h = 0; h < m->loaded; h++)
		if (emit(m, i, a, m->bj[h], m->bv[h]) != XXL_OK)
			return m->env.err.code;
	m->products += m->loaded + m->nrest;
	if (m->nrest == 0)
		return xxl_env_poll_n(&m->env, m->loaded) ? m->env.err.code : XXL_OK;
	if (xxl_spool_reader_open(&rd, &m->rest, false) != XXL_OK)
		return m->env.err.code;
	for (uint64_t h = 0; h < m->nrest && rc == XXL_OK; h++)
	{
		const unsigned char *p;
		xxl_matrix_value b;

		if ((rc = xxl_spool_read(&rd, 16, &p)) != XXL_OK)
			break;
		memcpy(&b, p + 8, 8);
		rc = emit(m, i, a, xxl_load_be64(p), b);
		if (rc == XXL_OK && xxl_env_poll(&m->env))
			rc = m->env.err.code;
	}
	xxl_spool_reader_close(&rd);
	return rc;
}

xxl_status
mx_big_row(xxl_matrix *m)
{
	xxl_env    *env = &m->env;
	uint64_t	k = m->rk[0];
	bool		met = false;

	m->nrest = 0;
	xxl_spool_init(&m->rest, env, XXL_SPOOL_SHARED);
	for (; m->got_b > 0 && xxl_load_be64(m->rb) == k; mx_next_b(m))
	{
		if (xxl_spool_write(&m->rest, m->rb + 8, 16) != XXL_OK)
			return env->err.code;
		m->nrest++;
	}
	if (m->got_b < 0 || xxl_spool_finish(&m->rest) != XXL_OK)
		return env->err.code;
	m->spooled_rows++;
	if (m->loaded + m->nrest > m->largest_row)
		m->largest_row = m->loaded + m->nrest;
	for (; m->got_a > 0 && xxl_load_be64(m->ra) <= k; mx_next_a(m))
	{
		xxl_matrix_value a;

		if (xxl_load_be64(m->ra) < k)
			continue;			/* no row of B there */
		met = true;
		memcpy(&a, m->ra + 16, 8);
		if (multiply(m, xxl_load_be64(m->ra + 8), a) != XXL_OK)
			return env->err.code;
	}
	m->inner += met;
	xxl_spool_free(&m->rest);
	m->nrows = m->nent = m->loaded = 0;
	return m->got_a < 0 ? env->err.code : XXL_OK;
}
