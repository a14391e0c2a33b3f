/*
 * matrix_dense.c — the dense path of the matrix product (LEDA-SM's
 * tiling, ../shared/papers/digest-ledasm-sssp.md §1.8): A and B, each
 * sorted by inner index as the sparse path has them, are sorted again into
 * square tiles of T x T cells (T a power of two, three tiles fitting half
 * the pool) and written as dense tiles, a row of a tile per record, to
 * random-access files (xxl_pagefile.h); every tile of the boxes is written,
 * empty ones as zeros.  C's tile (ti, tj) is then the sum over tk of A's
 * tile (ti, tk) times B's (tk, tj), multiplied with OpenMP over the tile's
 * rows; C's tiles are computed one at a time as the rows are pulled, so C
 * is never stored: O(n³/(T·B)) I/Os for n x n.
 */
#include "core/matrix/matrix_internal.h"

#include <math.h>

/*
 * The tiles' side: a power of two between these (a block of 256 of B's
 * rows of a 512-tile, 1 MB, stays in L2; of a 1024-tile it did not, and the
 * product was slower by a third although it reads half as much)
 */
#define TILE_MIN 32
#define TILE_MAX 512
/* A record of the tile sort: [tile row be32][tile column be32][row u32][column u32][value]. */
#define TILE_REC 24
#define TILE_KEY 8
/* Auto takes the dense path only for a product of at least this many multiplications. */
#define DENSE_MIN_CELLS (4.0 * 1024 * 1024)
/* The most bytes of tiles the dense path writes (a forced dense path over a sparse box). */
#define DENSE_MAX_BYTES (UINT64_C(1) << 40)

/* Cells of a box side from lo to hi (hi >= lo). */
static inline uint64_t
side(int64_t lo, int64_t hi)
{
	return (uint64_t) hi - (uint64_t) lo + 1;
}

bool
mx_dense_wanted(const xxl_matrix *m)
{
	double		na = (double) (m->entries[XXL_MATRIX_A] - m->zeros[XXL_MATRIX_A]),
				nb = (double) (m->entries[XXL_MATRIX_B] - m->zeros[XXL_MATRIX_B]);
	double		ni,
				nk,
				nj;

	if (m->method == XXL_MATRIX_SPARSE || na == 0 || nb == 0)
		return false;
	ni = (double) side(m->lo[0], m->hi[0]);
	nk = (double) side(m->lo[1] < m->lo[2] ? m->lo[1] : m->lo[2], m->hi[1] > m->hi[2] ? m->hi[1] : m->hi[2]);
	nj = (double) side(m->lo[3], m->hi[3]);
	/* integer sums of a tile must stay within int128 (the sparse path checks each) */
	if (m->integer && log2((double) m->max_abs[0] + 1) + log2((double) m->max_abs[1] + 1) +
		log2(nk) + 1 >= 127)
		return false;
	if (m->method == XXL_MATRIX_DENSE)
		return true;
	/* (small products are as quick without tiles on disk) */
	return ni * nk * nj >= DENSE_MIN_CELLS &&
		na >= XXL_MATRIX_DENSE_FILL * ni * nk && nb >= XXL_MATRIX_DENSE_FILL * nk * nj;
}

/* Bytes of a tile's cells in C (int128 sums for integers). */
static inline size_t
c_cell(const xxl_matrix *m)
{
	return m->integer ? 16 : 8;
}

/* The largest tile whose three tiles and files' pages fit half the pool and whose rows fit a page. */
static uint64_t
tile_for(xxl_matrix *m, uint64_t longest)
{
	size_t		room = mx_share(m, 10);
	uint64_t	t = TILE_MIN;

	/* (no larger than the longest side needs) */
	/* (three tiles, and two files each caching four pages and writing one, a page a tile's row) */
	while (t * 2 <= TILE_MAX && t < longest &&
		   (t * 2) * (t * 2) * (16 + c_cell(m)) + 2 * 5 * 8 * (t * 2) <= room &&
		   xxl_pagefile_page_for(&m->env, 8 * t * 2) >= 8 * t * 2)
		t *= 2;
	return t;
}

/* Append a tile (T x T cells of 8 bytes at tile) to f, a row per record. */
static xxl_status
append_tile(xxl_matrix *m, xxl_pagefile *f, const unsigned char *tile)
{
	for (uint64_t r = 0; r < m->tile; r++)
		if (xxl_pagefile_append(f, tile + r * m->tile * 8) != XXL_OK)
			return m->env.err.code;
	/* (a tile is much work: the host is asked at every one) */
	return xxl_env_canceled(&m->env) ? m->env.err.code : XXL_OK;
}

/*
 * One matrix into tiles: the entries of ts (sorted by inner index; the
 * row index at row_at, the column's at col_at) sorted by tile, then every
 * tile of the nr x nc tile box appended to f in row-major tile order.
 */
static xxl_status
build_side(xxl_matrix *m, xxl_env_sorter *ts, size_t row_at, size_t col_at, int64_t r0, int64_t c0,
		   uint64_t nr, uint64_t nc, xxl_pagefile *f)
{
	xxl_env    *env = &m->env;
	xxl_env_sorter tiles;
	const unsigned char *rec;
	uint64_t	T = m->tile,
				written = 0,
				cur = UINT64_MAX;
	unsigned char *buf = m->ta;
	int			got;

	if (xxl_env_sort_open(env, &tiles, mx_share(m, MX_SHARE_INPUT), 0, TILE_REC, TILE_KEY, 0,
						  XXL_INPUT_UNBOUNDED) != XXL_OK)
		return env->err.code;
	while ((got = xxl_env_sort_next(env, ts, &rec)) > 0)
	{
		uint64_t	r = (uint64_t) xxl_key_signed(xxl_load_be64(rec + row_at)) - (uint64_t) r0,
					c = (uint64_t) xxl_key_signed(xxl_load_be64(rec + col_at)) - (uint64_t) c0;
		uint32_t	tr = (uint32_t) (r / T),
					tc = (uint32_t) (c / T),
					lr = (uint32_t) (r % T),
					lc = (uint32_t) (c % T);
		unsigned char local[TILE_REC],
				   *p = xxl_env_sort_room(&tiles, local);

		tr = __builtin_bswap32(tr);
		tc = __builtin_bswap32(tc);
		memcpy(p, &tr, 4);
		memcpy(p + 4, &tc, 4);
		memcpy(p + 8, &lr, 4);
		memcpy(p + 12, &lc, 4);
		memcpy(p + 16, rec + 16, 8);
		if (xxl_env_sort_push(env, &tiles, p) != XXL_OK || xxl_env_poll(env))
			goto fail;
	}
	xxl_env_sort_close(env, ts, NULL, NULL);
	if (got < 0 || xxl_env_sort_sort(env, &tiles) != XXL_OK ||
		xxl_pagefile_open(f, env, xxl_pagefile_page_for(env, 8 * T), 8 * T) != XXL_OK)
		goto fail;
	while ((got = xxl_env_sort_next(env, &tiles, &rec)) > 0)
	{
		uint64_t	idx = (uint64_t) __builtin_bswap32(*(const uint32_t *) rec) * nc +
			__builtin_bswap32(*(const uint32_t *) (rec + 4));
		uint32_t	lr,
					lc;
		unsigned char *cell;

		if (idx != cur)
		{
			if (cur != UINT64_MAX && append_tile(m, f, buf) != XXL_OK)
				goto fail;
			if (cur != UINT64_MAX)
				written++;
			memset(buf, 0, T * T * 8);
			/* the empty tiles before this one */
			for (; written < idx; written++)
				if (append_tile(m, f, buf) != XXL_OK)
					goto fail;
			cur = idx;
		}
		memcpy(&lr, rec + 8, 4);
		memcpy(&lc, rec + 12, 4);
		cell = buf + ((size_t) lr * T + lc) * 8;
		/* (duplicate entries add up) */
		if (m->integer)
		{
			int64_t		x,
						y;

			memcpy(&x, cell, 8);
			memcpy(&y, rec + 16, 8);
			if (__builtin_add_overflow(x, y, &x))
				m->overflow = true;
			memcpy(cell, &x, 8);
		}
		else
		{
			double		x,
						y;

			memcpy(&x, cell, 8);
			memcpy(&y, rec + 16, 8);
			x += y;
			memcpy(cell, &x, 8);
		}
	}
	if (got < 0)
		goto fail;
	if (cur != UINT64_MAX)
	{
		if (append_tile(m, f, buf) != XXL_OK)
			goto fail;
		written++;
	}
	memset(buf, 0, T * T * 8);
	for (; written < nr * nc; written++)
		if (append_tile(m, f, buf) != XXL_OK)
			goto fail;
	xxl_env_sort_close(env, &tiles, NULL, NULL);
	/* a tile's rows are read in order: a few pages of cache are enough */
	return xxl_pagefile_finish(f, 4 * f->page);

fail:
	xxl_env_sort_close(env, &tiles, NULL, NULL);
	return env->err.code != XXL_OK ? env->err.code : XXL_EINVAL;
}

xxl_status
mx_dense_build(xxl_matrix *m)
{
	xxl_env    *env = &m->env;
	int64_t		klo = m->lo[1] < m->lo[2] ? m->lo[1] : m->lo[2],
				khi = m->hi[1] > m->hi[2] ? m->hi[1] : m->hi[2];
	uint64_t	T;
	double		bytes;

	uint64_t	longest = side(m->lo[0], m->hi[0]);

	if (side(klo, khi) > longest)
		longest = side(klo, khi);
	if (side(m->lo[3], m->hi[3]) > longest)
		longest = side(m->lo[3], m->hi[3]);
	m->tile = T = tile_for(m, longest);
	m->i0 = m->lo[0];
	m->k0 = klo;
	m->j0 = m->lo[3];
	m->nti = (side(m->lo[0], m->hi[0]) - 1) / T + 1;
	m->ntk = (side(klo, khi) - 1) / T + 1;
	m->ntj = (side(m->lo[3], m->hi[3]) - 1) / T + 1;
	bytes = ((double) m->nti * m->ntk + (double) m->ntk * m->ntj) * T * T * 8;
	if (bytes > (double) DENSE_MAX_BYTES)
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "the dense path would write %.0f GB of tiles for these bounding boxes; "
							 "take the sparse path", bytes / 1e9);
	m->tiles_bytes = T * T * (16 + c_cell(m));
	m->ta = xxl_env_alloc(env, m->tiles_bytes);
	if (m->ta == NULL)
		return env->err.code;
	m->tb = m->ta + T * T * 8;
	m->tc = m->tb + T * T * 8;
	/* A: row at +8 (its row), column at +0 (inner); B: row at +0 (inner), column at +8 */
	if (build_side(m, &m->sa, 8, 0, m->i0, m->k0, m->nti, m->ntk, &m->pa) != XXL_OK ||
		build_side(m, &m->sb, 0, 8, m->k0, m->j0, m->ntk, m->ntj, &m->pb) != XXL_OK)
		return env->err.code;
	m->ti = m->tj = 0;
	m->tile_ready = false;
	m->state = M_DENSE;
	return XXL_OK;
}

/* Tile idx of f into buf (T rows of 8T bytes). */
static xxl_status
load_tile(xxl_matrix *m, xxl_pagefile *f, uint64_t idx, unsigned char *buf)
{
	uint64_t	T = m->tile;

	for (uint64_t r = 0; r < T; r++)
	{
		const unsigned char *row;

		if (xxl_pagefile_get(f, idx * T + r, &row) != XXL_OK)
			return m->env.err.code;
		memcpy(buf + r * T * 8, row, T * 8);
	}
	return XXL_OK;
}

/*
 * The double tile product in blocks of C of MR x NR cells held in
 * registers (4 x 32: sixteen AVX-512 registers) while K_BLOCK rows of B
 * pass (256 x 32 cells of B, 64 kB, stay in L1/L2 for the next block of
 * rows of C): each cell of B loaded once per MR multiply-adds, each cell
 * of C once per K_BLOCK.  T is a power of two from 32, a multiple of both.
 */
#define MR 4
#define NR 32
#define K_BLOCK 256
_Static_assert(TILE_MIN % MR == 0 && TILE_MIN % NR == 0, "a tile is whole blocks");

/* C[0..MR) x [0..NR) += A[0..MR) x [k0..k1) times B[k0..k1) x [0..NR) (row strides T). */
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
static void
block_product(double *restrict c, const double *restrict a, const double *restrict b, size_t T,
			  size_t k0, size_t k1)
{
	double		acc[MR][NR];

	for (int r = 0; r < MR; r++)
		for (int j = 0; j < NR; j++)
			acc[r][j] = c[r * T + j];
	for (size_t k = k0; k < k1; k++)
	{
		const double *bk = b + k * T;

		for (int r = 0; r < MR; r++)
		{
			double		x = a[r * T + k];

			for (int j = 0; j < NR; j++)
				acc[r][j] += x * bk[j];
		}
	}
	for (int r = 0; r < MR; r++)
		for (int j = 0; j < NR; j++)
			c[r * T + j] = acc[r][j];
}

/* C += A·B over one tile each, blocks of rows of C on the threads. */
static void
multiply_double(double *restrict c, const double *restrict a, const double *restrict b, size_t T,
				int threads)
{
	XXL_OMP_PARALLEL(num_threads(threads))
	for (size_t k0 = 0; k0 < T; k0 += K_BLOCK)
	{
		size_t		k1 = k0 + K_BLOCK < T ? k0 + K_BLOCK : T;

#pragma omp for schedule(static)
		for (size_t i = 0; i < T; i += MR)
			for (size_t j = 0; j < T; j += NR)
				block_product(c + i * T + j, a + i * T, b + j, T, k0, k1);
	}
}

static void
multiply_int(__int128 *restrict c, const int64_t *restrict a, const int64_t *restrict b, size_t T,
			 int threads)
{
	XXL_OMP_PARALLEL(for schedule(static) num_threads(threads))
	for (size_t i = 0; i < T; i++)
	{
		__int128   *ci = c + i * T;

		for (size_t k = 0; k < T; k++)
		{
			__int128	x = a[i * T + k];
			const int64_t *bk = b + k * T;

			if (x == 0)
				continue;
			for (size_t j = 0; j < T; j++)
				ci[j] += x * bk[j];
		}
	}
}

/* C's tile (ti, tj): the sum over the inner tiles. */
static xxl_status
compute_tile(xxl_matrix *m)
{
	uint64_t	T = m->tile;

	memset(m->tc, 0, T * T * c_cell(m));
	for (uint64_t tk = 0; tk < m->ntk; tk++)
	{
		if (load_tile(m, &m->pa, m->ti * m->ntk + tk, m->ta) != XXL_OK ||
			load_tile(m, &m->pb, tk * m->ntj + m->tj, m->tb) != XXL_OK)
			return m->env.err.code;
		if (m->integer)
			multiply_int((__int128 *) m->tc, (const int64_t *) m->ta, (const int64_t *) m->tb, T,
						 m->env.threads);
		else
			multiply_double((double *) m->tc, (const double *) m->ta, (const double *) m->tb, T,
							m->env.threads);
		m->tiles++;
		m->products += T * T * T;
		if (xxl_env_canceled(&m->env))
			return m->env.err.code;
	}
	m->li = m->lj = 0;
	m->tile_ready = true;
	return XXL_OK;
}

int
mx_dense_next(xxl_matrix *m, int64_t *i, int64_t *j, double *v)
{
	uint64_t	T = m->tile,
				ni = side(m->lo[0], m->hi[0]),
				nj = side(m->lo[3], m->hi[3]);

	while (m->ti < m->nti)
	{
		if (!m->tile_ready && compute_tile(m) != XXL_OK)
			return -1;
		for (; m->li < T && m->ti * T + m->li < ni; m->li++, m->lj = 0)
			while (m->lj < T && m->tj * T + m->lj < nj)
			{
				size_t		cell = m->li * T + m->lj++;

				if (!mx_sum_value(m, m->tc + cell * c_cell(m), v))
					continue;
				*i = (int64_t) ((uint64_t) m->i0 + m->ti * T + m->li);
				*j = (int64_t) ((uint64_t) m->j0 + m->tj * T + m->lj - 1);
				return 1;
			}
		m->tile_ready = false;
		if (++m->tj == m->ntj)
		{
			m->tj = 0;
			m->ti++;
		}
	}
	return 0;
}

void
mx_dense_close(xxl_matrix *m)
{
	if (m->ta)
		xxl_env_free(&m->env, m->ta, m->tiles_bytes);
	m->ta = NULL;
	if (m->pa.env)
		xxl_pagefile_close(&m->pa);
	if (m->pb.env)
		xxl_pagefile_close(&m->pb);
}
