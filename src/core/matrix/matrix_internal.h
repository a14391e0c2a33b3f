/*
 * matrix_internal.h — the state of the matrix product (xxl_matrix.h) and
 * what its files share: matrix.c (budget, input, run, output),
 * matrix_rows.c (B's rows in pieces held in memory, A's entries of a piece
 * by row, each row of the result accumulated), matrix_product.c (an inner
 * index whose row of B outgrows a piece: its partial products one by one
 * into the sums' sort) and matrix_dense.c (the dense path's tiles).
 */
#ifndef XXL_MATRIX_INTERNAL_H
#define XXL_MATRIX_INTERNAL_H

#include "core/matrix/xxl_matrix.h"
#include "core/record.h"
#include "core/xxl_env.h"
#include "core/xxl_pagefile.h"

#include <stddef.h>

/* Entries of A and B as sorted: [k][row or column][value], k the key. */
#define ENTRY_REC 24
#define ENTRY_KEY 8
/* Sums of the result: [i][j][sum], 8 bytes of double or 16 of int128. */
#define PRODUCT_KEY 16
/* A's entries of a piece, by row: [i][row of the piece u32][pad][value]. */
#define PIECE_REC 24
#define PIECE_KEY 8
/*
 * Bytes a piece takes per entry of B held: column key and value (16), its
 * dense column (4), a row's key and offset at worst (12 + 4), and the
 * scratch that numbers the columns and then accumulates a row (32).
 */
#define PIECE_ENTRY_BYTES 68

typedef enum matrix_state
{
	M_INPUT,
	M_STREAM,					/* one piece: rows accumulated as they are pulled */
	M_SORTED,					/* the sums come from their sort */
	M_DENSE,					/* C's tiles computed as they are pulled */
	M_FAILED
} matrix_state;

struct xxl_matrix
{
	xxl_env		env;
	matrix_state state;
	bool		integer;
	bool		transpose_a;
	xxl_matrix_method method;
	/* bounding boxes of the nonzero entries: A's rows and inner, B's inner and columns */
	int64_t		lo[4],
				hi[4];
	uint64_t	max_abs[2];		/* integers: the largest magnitude of each matrix */
	size_t		product_rec;
	xxl_env_sorter sa,			/* A's entries by inner index */
				sb,				/* B's */
				sp,				/* A's entries of the piece, by row */
				sc;				/* the sums, by (i, j), folded */
	/* the sorted streams of A and B, as far as the pass has read them */
	const unsigned char *ra,
			   *rb;
	int			got_a,
				got_b;

	/* a piece of B's rows, held (matrix_rows.c) */
	unsigned char *piece;		/* piece_bytes for the arrays below */
	size_t		piece_bytes,
				cap;			/* entries a piece holds */
	uint64_t   *bj;				/* column key of each entry */
	xxl_matrix_value *bv;		/* value of each entry */
	uint32_t   *col;			/* dense column of each entry (in column order) */
	uint64_t   *rk;				/* inner index key of each row */
	uint32_t   *roff;			/* row r's entries: [roff[r], roff[r + 1]) */
	unsigned char *scratch;		/* 32 bytes per entry: numbering, then a row's sums */
	size_t		nrows,
				nent,			/* entries of the complete rows */
				loaded,			/* entries read, a row left incomplete after nent */
				ncols;
	uint64_t	carry_k;		/* the incomplete row's key */
	/* a row of the result being accumulated (scratch, ncols of each) */
	unsigned char *acc;			/* 16 bytes per column */
	uint32_t   *stamp,			/* the row that touched a column last */
			   *touched;		/* the columns this row touched */
	uint64_t   *ckey;			/* column key of each dense column */
	uint32_t	row_no,
				ntouched,
				emitted;		/* of touched, handed out so far */
	/*
	 * A row's sums while it touches few columns: a small open-addressing
	 * table (in the cache, where the per-column arrays above are not), the
	 * arrays once it touches more than half of it
	 */
	uint32_t   *hkeys;			/* dense column, or UINT32_MAX */
	unsigned char *hvals;		/* 16 bytes each */
	uint64_t   *hj;				/* the column's key */
	uint32_t   *tscratch;		/* hcap / 2: sorting a row's columns */
	uint32_t	hcap;			/* slots, a power of two */
	int			hshift;			/* 32 - log2(hcap) */
	bool		row_hashed;		/* the row's sums are in the table */
	uint64_t	cur_i;			/* the row's key */
	const unsigned char *rp;	/* the next record of sp */
	int			got_p;

	/* an inner index whose row of B outgrows a piece (matrix_product.c) */
	xxl_spool	rest;			/* its entries beyond the piece's room */
	uint64_t	nrest;
	bool		overflow;		/* an integer sum left int128 */

	/* the dense path (matrix_dense.c) */
	uint64_t	tile,			/* T */
				nti,			/* tiles along i, k and j */
				ntk,
				ntj,
				ti,				/* C's tile being handed out, and where in it */
				tj,
				li,
				lj;
	int64_t		i0,				/* the boxes' corners: index of tile 0's row/column 0 */
				k0,
				j0;
	xxl_pagefile pa,			/* A's tiles, a row of a tile per record */
				pb;
	unsigned char *ta,			/* a tile of A, of B (8 bytes a cell), of C (8 or 16) */
			   *tb,
			   *tc;
	size_t		tiles_bytes;
	bool		tile_ready;
	uint64_t	tiles;

	/* statistics */
	uint64_t	entries[2],
				zeros[2],
				inner,
				products,
				zero_results,
				largest_row,
				spooled_rows,
				pieces;
	uint64_t	join_ns,
				run_ns;
};

/*
 * A sum as the product keeps it: int128 for integer matrices, double
 * otherwise (16 bytes of room either way).  acc += a·b (an int128 overflow
 * is flagged), a + b into acc, and its value: false when it is 0.
 */
static inline void
mx_add_product(xxl_matrix *m, unsigned char *acc, xxl_matrix_value a, xxl_matrix_value b)
{
	if (m->integer)
	{
		__int128	s;

		memcpy(&s, acc, 16);
		if (__builtin_add_overflow(s, (__int128) a.i * b.i, &s))
			m->overflow = true;
		memcpy(acc, &s, 16);
	}
	else
	{
		double		s;

		memcpy(&s, acc, 8);
		s += a.d * b.d;
		memcpy(acc, &s, 8);
	}
}

static inline void
mx_add_sum(xxl_matrix *m, unsigned char *acc, const unsigned char *sum)
{
	if (m->integer)
	{
		__int128	x,
					y;

		memcpy(&x, acc, 16);
		memcpy(&y, sum, 16);
		if (__builtin_add_overflow(x, y, &x))
			m->overflow = true;
		memcpy(acc, &x, 16);
	}
	else
	{
		double		x,
					y;

		memcpy(&x, acc, 8);
		memcpy(&y, sum, 8);
		x += y;
		memcpy(acc, &x, 8);
	}
}

static inline bool
mx_sum_value(const xxl_matrix *m, const unsigned char *sum, double *v)
{
	if (m->integer)
	{
		__int128	s;

		memcpy(&s, sum, 16);
		*v = (double) s;
		return s != 0;
	}
	memcpy(v, sum, 8);
	return *v != 0;
}

/* The next entry of A's or B's sorted stream. */
static inline void
mx_next_a(xxl_matrix *m)
{
	m->got_a = xxl_env_sort_next(&m->env, &m->sa, &m->ra);
}

static inline void
mx_next_b(xxl_matrix *m)
{
	m->got_b = xxl_env_sort_next(&m->env, &m->sb, &m->rb);
}

/* matrix.c: the pool's twentieths each part has */
#define MX_SHARE_INPUT 3		/* A's and B's sorters, each */
#define MX_SHARE_PIECE 8		/* a piece of B's rows: B in one piece needs no sums' sort */
#define MX_SHARE_PIECE_ROWS 3	/* the sort of A's entries of a piece */
#define MX_SHARE_SUMS 3			/* the sums' sort */
size_t		mx_share(const xxl_matrix *m, int twentieths);
/*
 * One sum (i, j keys) into the sums' sort, which is opened at the first;
 * in_order: it comes after the last in (i, j) order (a piece's run).
 */
xxl_status	mx_push_sum(xxl_matrix *m, uint64_t i, uint64_t j, const unsigned char *sum,
						bool in_order);

/* matrix_rows.c */
xxl_status	mx_rows_open(xxl_matrix *m);
/* Load the next piece of B's rows; *big: the next row alone outgrows a piece. */
xxl_status	mx_piece_load(xxl_matrix *m, bool *big);
/* A's entries of the loaded piece, by row; alone: the piece is all of B (stream its rows). */
xxl_status	mx_piece_pass(xxl_matrix *m, bool alone);
/* The next row's sums pushed (SORTED) or made ready (STREAM): 1, 0 at the end. */
int			mx_piece_row(xxl_matrix *m);
/* STREAM: the next sum of the current row: 1, 0 when the row is done. */
int			mx_row_next(xxl_matrix *m, int64_t *i, int64_t *j, double *v);
void		mx_rows_close(xxl_matrix *m);

/* matrix_product.c: B's row at the current inner index, entries of A past it */
xxl_status	mx_big_row(xxl_matrix *m);

/* matrix_dense.c */
/* Whether the dense path takes this product (the boxes known, the input over). */
bool		mx_dense_wanted(const xxl_matrix *m);
/* A and B (sorted by inner index) into tiles on disk. */
xxl_status	mx_dense_build(xxl_matrix *m);
/* The next nonzero cell of C, computing its tile when needed: 1, 0 at the end, -1. */
int			mx_dense_next(xxl_matrix *m, int64_t *i, int64_t *j, double *v);
void		mx_dense_close(xxl_matrix *m);

#endif							/* XXL_MATRIX_INTERNAL_H */
