/*
 * matrix_rows.c — the product row by row (Gustavson's algorithm), B held
 * in pieces: as many of B's rows (by inner index k, in k order) as fit a
 * piece are held in memory with their columns numbered densely in column
 * order; A's entries whose k is in the piece are sorted by their row i;
 * each row i of A then multiplies the rows of B it names into one
 * accumulator per column, and the columns it touched, in column order,
 * are that row's sums over the piece.  With one piece (B fits) those are
 * the result and go out as they are made, in (i, j) order, with no sort of
 * the products at all; with more, each piece's sums go into the sums'
 * aggregating sort, so that what is sorted is per piece already added up.
 */
#include "core/matrix/matrix_internal.h"
#include "core/radix.h"

#include <stdlib.h>

/* Numbering the columns: [column key, big-endian][entry u32][pad]. */
#define NUMBER_REC 16
/* A row's table of sums: at most this many slots, a sixteenth of the piece. */
#define HASH_MAX 16384
#define HASH_MIN 64
/* a slot: its column (4), sum (16) and column key (8); and a radix scratch entry (4) per two */
#define HASH_SLOT (4 + 16 + 8 + 2)
#define EMPTY UINT32_MAX

xxl_status
mx_rows_open(xxl_matrix *m)
{
	size_t		bytes = mx_share(m, MX_SHARE_PIECE),
				cap;
	uint32_t	h = HASH_MIN;
	unsigned char *p;

	while (h * 2 <= HASH_MAX && (size_t) h * 2 * HASH_SLOT <= bytes / 16)
		h *= 2;
	cap = (bytes - (size_t) h * HASH_SLOT) / PIECE_ENTRY_BYTES;
	if (cap > UINT32_MAX - 1)
		cap = UINT32_MAX - 1;
	m->piece = xxl_env_alloc(&m->env, bytes);
	if (m->piece == NULL)
		return m->env.err.code;
	m->piece_bytes = bytes;
	m->cap = cap;
	m->hcap = h;
	m->hshift = 32 - __builtin_ctz(h);
	p = m->piece;
	m->hvals = p;
	p += (size_t) h * 16;
	m->hj = (uint64_t *) p;
	p += (size_t) h * 8;
	m->hkeys = (uint32_t *) p;
	p += (size_t) h * 4;
	m->tscratch = (uint32_t *) p;
	p += (size_t) h / 2 * 4;
	memset(m->hkeys, 0xff, (size_t) h * 4);
	m->row_hashed = false;
	m->bj = (uint64_t *) p;
	p += cap * 8;
	m->bv = (xxl_matrix_value *) p;
	p += cap * 8;
	m->rk = (uint64_t *) p;
	p += cap * 8;
	m->scratch = p;
	p += cap * 32;
	m->col = (uint32_t *) p;
	p += cap * 4;
	m->roff = (uint32_t *) p;
	m->nrows = m->nent = m->loaded = 0;
	return XXL_OK;
}

void
mx_rows_close(xxl_matrix *m)
{
	xxl_env_sort_close(&m->env, &m->sp, NULL, NULL);
	if (m->piece)
		xxl_env_free(&m->env, m->piece, m->piece_bytes);
	m->piece = NULL;
}

/*
 * Number the columns of the piece's entries densely in column order (one
 * radix sort of (column, entry) pairs), and lay the accumulator out in
 * the scratch behind the column keys.
 */
static void
number_columns(xxl_matrix *m)
{
	size_t		n = m->nent;
	unsigned char *recs = m->scratch,
			   *sorted = m->scratch + n * NUMBER_REC;
	uint64_t   *ckey = (uint64_t *) m->scratch;
	size_t		ncols = 0;

	for (size_t e = 0; e < n; e++)
	{
		uint32_t	idx = (uint32_t) e;

		xxl_store_be64(recs + e * NUMBER_REC, m->bj[e]);
		memcpy(recs + e * NUMBER_REC + 8, &idx, 4);
	}
	xxl_radix_sort_fixed((char *) recs, (char *) sorted, n, NUMBER_REC, 8, m->env.threads, true);
	/* (column keys land in the first half, which the sorted records no longer need) */
	for (size_t e = 0; e < n; e++)
	{
		const unsigned char *r = sorted + e * NUMBER_REC;
		uint64_t	j = xxl_load_be64(r);
		uint32_t	idx;

		if (ncols == 0 || ckey[ncols - 1] != j)
			ckey[ncols++] = j;
		memcpy(&idx, r + 8, 4);
		m->col[idx] = (uint32_t) (ncols - 1);
	}
	m->ncols = ncols;
	m->ckey = ckey;
	m->acc = m->scratch + ncols * 8;
	m->stamp = (uint32_t *) (m->scratch + ncols * 24);
	m->touched = (uint32_t *) (m->scratch + ncols * 28);
	memset(m->stamp, 0, ncols * sizeof(uint32_t));
	m->row_no = 0;
}

static void clear_table(xxl_matrix *m);

xxl_status
mx_piece_load(xxl_matrix *m, bool *big)
{
	size_t		carry = m->loaded - m->nent;

	/* the last piece's last row leaves the table (its list of keys is about to go) */
	clear_table(m);
	m->row_hashed = false;
	m->ntouched = 0;
	*big = false;
	/* the row left incomplete by the last piece starts this one */
	if (carry > 0)
	{
		memmove(m->bj, m->bj + m->nent, carry * sizeof(uint64_t));
		memmove(m->bv, m->bv + m->nent, carry * sizeof(xxl_matrix_value));
		m->rk[0] = m->carry_k;
		m->roff[0] = 0;
		m->nrows = 1;
	}
	else
		m->nrows = 0;
	m->loaded = carry;
	m->nent = 0;
	while (m->got_b > 0)
	{
		uint64_t	k = xxl_load_be64(m->rb);

		if (m->nrows == 0 || k != m->rk[m->nrows - 1])
		{
			m->rk[m->nrows] = k;
			m->roff[m->nrows] = (uint32_t) m->loaded;
			m->nrows++;
		}
		if (m->loaded == m->cap)
		{
			/* the last row is incomplete: alone it is a big row, else the next piece's */
			if (m->nrows == 1)
			{
				*big = true;
				return XXL_OK;
			}
			m->nrows--;
			m->nent = m->roff[m->nrows];
			m->carry_k = m->rk[m->nrows];
			break;
		}
		m->bj[m->loaded] = xxl_load_be64(m->rb + 8);
		memcpy(&m->bv[m->loaded], m->rb + 16, 8);
		m->loaded++;
		mx_next_b(m);
		if (xxl_env_poll(&m->env))
			return m->env.err.code;
	}
	if (m->got_b < 0)
		return m->env.err.code;
	if (m->got_b == 0 && !*big && m->nent == 0)
		m->nent = m->loaded;	/* B ended: every row is complete */
	m->roff[m->nrows] = (uint32_t) m->nent;
	if (m->nrows > 0)
	{
		uint64_t	longest = 0;

		for (size_t r = 0; r < m->nrows; r++)
			if (m->roff[r + 1] - m->roff[r] > longest)
				longest = m->roff[r + 1] - m->roff[r];
		if (longest > m->largest_row)
			m->largest_row = longest;
		number_columns(m);
	}
	return XXL_OK;
}

xxl_status
mx_piece_pass(xxl_matrix *m, bool alone)
{
	xxl_env    *env = &m->env;
	uint64_t	last = m->rk[m->nrows - 1];
	size_t		r = 0,
				last_r = SIZE_MAX;

	if (xxl_env_sort_open(env, &m->sp, mx_share(m, MX_SHARE_PIECE_ROWS), 0, PIECE_REC, PIECE_KEY, 0,
						  XXL_INPUT_UNBOUNDED) != XXL_OK)
		return env->err.code;
	for (; m->got_a > 0; mx_next_a(m))
	{
		uint64_t	k = xxl_load_be64(m->ra);
		unsigned char local[PIECE_REC],
				   *p;
		uint32_t	row;

		if (k > last)
			break;
		while (m->rk[r] < k)
			r++;
		if (xxl_env_poll(env))
			return env->err.code;
		if (m->rk[r] != k)
			continue;			/* no row of B at k */
		if (r != last_r)
			m->inner++;
		last_r = r;
		row = (uint32_t) r;
		p = xxl_env_sort_room(&m->sp, local);
		memcpy(p, m->ra + 8, 8);
		memcpy(p + 8, &row, 4);
		memset(p + 12, 0, 4);
		memcpy(p + 16, m->ra + 16, 8);
		if (xxl_env_sort_push(env, &m->sp, p) != XXL_OK)
			return env->err.code;
	}
	if (m->got_a < 0 || xxl_env_sort_sort(env, &m->sp) != XXL_OK)
		return env->err.code;
	m->pieces++;
	m->state = alone ? M_STREAM : M_SORTED;
	m->got_p = xxl_env_sort_next(env, &m->sp, &m->rp);
	return m->got_p < 0 ? env->err.code : XXL_OK;
}

static int
cmp_u32(const void *x, const void *y)
{
	uint32_t	a = *(const uint32_t *) x,
				b = *(const uint32_t *) y;

	return (a > b) - (a < b);
}

/* A column's slot in the row's table. */
static inline uint32_t
slot_of(const xxl_matrix *m, uint32_t c)
{
	uint32_t	h = (c * UINT32_C(0x9E3779B1)) >> m->hshift;

	while (m->hkeys[h] != c && m->hkeys[h] != EMPTY)
		h = (h + 1) & (m->hcap - 1);
	return h;
}

/* The key of column c the row touched. */
static inline uint64_t
key_of(xxl_matrix *m, uint32_t c)
{
	if (m->row_hashed)
		return m->hj[slot_of(m, c)];
	return m->ckey[c];
}

/* Where the row's sum of column c is (a column it touched). */
static inline unsigned char *
sum_of(xxl_matrix *m, uint32_t c)
{
	if (m->row_hashed)
		return m->hvals + (size_t) slot_of(m, c) * 16;
	return m->acc + (size_t) c * 16;
}

/*
 * Sort n columns below ncols (at most the table's half, scratch as many):
 * insertion for a few, else an LSD radix sort of the 8-bit digits ncols
 * needs.
 */
static void
sort_small_u32(uint32_t *v, uint32_t *scratch, uint32_t n, size_t ncols)
{
	uint32_t	cnt[256];
	int			passes = 1;

	if (n <= 64)
	{
		for (uint32_t x = 1; x < n; x++)
		{
			uint32_t	t = v[x],
						y = x;

			for (; y > 0 && v[y - 1] > t; y--)
				v[y] = v[y - 1];
			v[y] = t;
		}
		return;
	}
	while (passes < 4 && (ncols - 1) >> (8 * passes) != 0)
		passes++;
	for (int pass = 0; pass < passes; pass++)
	{
		uint32_t   *src = pass % 2 == 0 ? v : scratch,
				   *dst = pass % 2 == 0 ? scratch : v;
		uint32_t	sum = 0;
		int			shift = pass * 8;

		memset(cnt, 0, sizeof(cnt));
		for (uint32_t x = 0; x < n; x++)
			cnt[(src[x] >> shift) & 255]++;
		for (int d = 0; d < 256; d++)
		{
			uint32_t	c = cnt[d];

			cnt[d] = sum;
			sum += c;
		}
		for (uint32_t x = 0; x < n; x++)
			dst[cnt[(src[x] >> shift) & 255]++] = src[x];
	}
	if (passes % 2 == 1)
		memcpy(v, scratch, n * sizeof(uint32_t));
}

/* The columns the row touched, in column order. */
static void
order_touched(xxl_matrix *m)
{
	/* many of them: a scan of the stamps is cheaper than a sort */
	if (!m->row_hashed && (size_t) m->ntouched * 16 > m->ncols)
	{
		uint32_t	n = 0;

		for (uint32_t c = 0; c < m->ncols; c++)
			if (m->stamp[c] == m->row_no)
				m->touched[n++] = c;
		return;
	}
	if (m->row_hashed)
		sort_small_u32(m->touched, m->tscratch, m->ntouched, m->ncols);
	else
		qsort(m->touched, m->ntouched, sizeof(uint32_t), cmp_u32);
}

/* The row's table outgrew half its slots: its sums move to the per-column arrays. */
static void
leave_table(xxl_matrix *m)
{
	/* (every key looked up before any is cleared: clearing breaks the probe chains) */
	for (uint32_t t = 0; t < m->ntouched; t++)
	{
		uint32_t	c = m->touched[t];

		memcpy(m->acc + (size_t) c * 16, m->hvals + (size_t) slot_of(m, c) * 16, 16);
		m->stamp[c] = m->row_no;
	}
	memset(m->hkeys, 0xff, (size_t) m->hcap * sizeof(uint32_t));
	m->row_hashed = false;
}

/* Empty the table of the last row: its slots found first, then cleared. */
static void
clear_table(xxl_matrix *m)
{
	uint32_t	slots[HASH_MAX / 16];

	if (!m->row_hashed || m->ntouched == 0)
		return;
	if (m->ntouched > m->hcap / 16)
	{
		memset(m->hkeys, 0xff, (size_t) m->hcap * sizeof(uint32_t));
		return;
	}
	for (uint32_t t = 0; t < m->ntouched; t++)
		slots[t] = slot_of(m, m->touched[t]);
	for (uint32_t t = 0; t < m->ntouched; t++)
		m->hkeys[slots[t]] = EMPTY;
}

/* Accumulate A's entries of the next row i times the piece's rows. */
static void
accumulate(xxl_matrix *m)
{
	uint64_t	i = xxl_load_be64(m->rp);

	clear_table(m);
	if (++m->row_no == 0)
	{
		memset(m->stamp, 0, m->ncols * sizeof(uint32_t));
		m->row_no = 1;
	}
	m->ntouched = 0;
	m->emitted = 0;
	m->cur_i = i;
	/* (columns few enough that their arrays stay in the cache need no table) */
	m->row_hashed = m->ncols > (size_t) 4 * m->hcap;
	while (m->got_p > 0 && xxl_load_be64(m->rp) == i)
	{
		uint32_t	r;
		xxl_matrix_value a;

		memcpy(&r, m->rp + 8, 4);
		memcpy(&a, m->rp + 16, 8);
		for (uint32_t e = m->roff[r]; e < m->roff[r + 1]; e++)
		{
			uint32_t	c = m->col[e];
			unsigned char *acc;

			if (m->row_hashed)
			{
				uint32_t	h = slot_of(m, c);

				if (m->hkeys[h] == EMPTY)
				{
					if (m->ntouched + 1 > m->hcap / 2)
					{
						leave_table(m);
						goto per_column;
					}
					m->hkeys[h] = c;
					/* (the key beside the sum: the per-column keys are a cache miss each) */
					m->hj[h] = m->bj[e];
					memset(m->hvals + (size_t) h * 16, 0, 16);
					m->touched[m->ntouched++] = c;
				}
				mx_add_product(m, m->hvals + (size_t) h * 16, a, m->bv[e]);
				continue;
			}
	per_column:
			acc = m->acc + (size_t) c * 16;
			if (m->stamp[c] != m->row_no)
			{
				m->stamp[c] = m->row_no;
				memset(acc, 0, 16);
				m->touched[m->ntouched++] = c;
			}
			mx_add_product(m, acc, a, m->bv[e]);
		}
		m->products += m->roff[r + 1] - m->roff[r];
		m->got_p = xxl_env_sort_next(&m->env, &m->sp, &m->rp);
	}
	order_touched(m);
}

int
mx_piece_row(xxl_matrix *m)
{
	if (m->got_p <= 0)
		return m->got_p < 0 ? -1 : 0;
	accumulate(m);
	if (xxl_env_poll_n(&m->env, m->ntouched + 1))
		return -1;
	if (m->state == M_STREAM)
		return 1;
	for (uint32_t t = 0; t < m->ntouched; t++)
	{
		uint32_t	c = m->touched[t];
		const unsigned char *acc = sum_of(m, c);
		double		v;

		/* a piece's 0 adds nothing to the other pieces' sums */
		if (mx_sum_value(m, acc, &v) && mx_push_sum(m, m->cur_i, key_of(m, c), acc, true) != XXL_OK)
			return -1;
	}
	return 1;
}

int
mx_row_next(xxl_matrix *m, int64_t *i, int64_t *j, double *v)
{
	while (m->emitted < m->ntouched)
	{
		uint32_t	c = m->touched[m->emitted++];

		if (!mx_sum_value(m, sum_of(m, c), v))
		{
			m->zero_results++;
			continue;
		}
		*i = xxl_key_signed(m->cur_i);
		*j = xxl_key_signed(key_of(m, c));
		return 1;
	}
	return 0;
}
