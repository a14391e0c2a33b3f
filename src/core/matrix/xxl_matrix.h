/*
 * xxl_matrix.h — the product C = A·B (or Aᵀ·B) of two sparse matrices
 * given as (row, column, value) entries of 64-bit indices, within a fixed
 * memory budget (LEDA-SM's last chapter, made sparse).
 *
 * Sparse path: A's entries are sorted by their inner index k (A's column,
 * or its row for Aᵀ), B's by theirs (B's row); one merge of the two meets,
 * for every k, A's column k with B's row k, and each pair gives a partial
 * product (i, j, a·b).  The partial products go into an aggregating sort
 * (xxl_sort_config.combine) keyed by (i, j), which adds up equal keys as
 * it forms its runs and merges them, so that the intermediate result is
 * never on disk at its full size: each run holds a key once.  The sums
 * come out in (i, j) order; a sum of exactly 0 is left out.
 *
 * Values: integers (both inputs integer-typed) are multiplied and added
 * exactly, in 128 bits; anything else in double precision.  Entries of
 * value 0 are dropped on input (they add nothing); duplicate (i, j)
 * entries of an input add up, as if that input were their sum.
 *
 * Memory: three sorters (A, B and the products) hold shares of the budget
 * and one inner index's row of B is held while its column of A streams
 * past; a row of B larger than its share goes on to a spool and is read
 * again per entry of A.  Nothing else grows with the input.
 * Use: create, put every entry of A and of B (in any order), run, pull the
 * rows, destroy (which removes every spill file, also after an error or a
 * cancel).  Only the caller's thread calls the cancel hook.
 */
#ifndef XXL_MATRIX_H
#define XXL_MATRIX_H

#include "core/xxl_io.h"

typedef struct xxl_matrix_config
{
	xxl_resources res;
	bool		integer;		/* both inputs' values are integers: exact sums */
	bool		transpose_a;	/* C = Aᵀ·B */
	uint64_t	expected_a;		/* entries expected, 0: unknown (sizes blocks) */
	uint64_t	expected_b;
} xxl_matrix_config;

/* One entry's value: int64 in integer mode, double otherwise. */
typedef union xxl_matrix_value
{
	int64_t		i;
	double		d;
} xxl_matrix_value;

typedef enum xxl_matrix_side
{
	XXL_MATRIX_A,
	XXL_MATRIX_B
} xxl_matrix_side;

typedef struct xxl_matrix_stats
{
	const char *path;			/* "rows" (B in one piece: no sort of the sums) or
								 * "pieces" (the pieces' sums sorted) */
	bool		in_memory;		/* nothing spilled */
	uint64_t	entries_a;		/* entries put, zeros included */
	uint64_t	entries_b;
	uint64_t	zeros;			/* entries of value 0, dropped */
	uint64_t	inner;			/* inner indices that both matrices have */
	uint64_t	products;		/* partial products formed */
	uint64_t	folded;			/* partial products added into another */
	uint64_t	zero_results;	/* sums of exactly 0, left out */
	uint64_t	largest_row;	/* the most entries of B at one inner index */
	uint64_t	spooled_rows;	/* rows of B beyond a piece, spooled */
	uint64_t	pieces;			/* pieces of B's rows held in turn */
	uint64_t	result_runs;	/* runs of the products' sort */
	int			result_passes;	/* its merge passes */
	uint64_t	sorts;
	uint64_t	sorted_bytes;
	uint64_t	bytes_read;
	uint64_t	bytes_written;
	xxl_io_stats io;
	uint64_t	memory_peak;
	uint64_t	memory_held;
	uint64_t	memory_limit;
	uint64_t	join_ns;		/* sorting A and B and forming the products */
	uint64_t	run_ns;			/* all of run */
} xxl_matrix_stats;

typedef struct xxl_matrix xxl_matrix;

size_t		xxl_matrix_min_memory(void);
xxl_matrix *xxl_matrix_create(const xxl_matrix_config *config, xxl_error *err);
/* An entry (row, column, value) of A or B. */
xxl_status	xxl_matrix_put(xxl_matrix *m, xxl_matrix_side side, int64_t row, int64_t col,
						   xxl_matrix_value v);
/* End of input: the products formed and summed. */
xxl_status	xxl_matrix_run(xxl_matrix *m);
/* The next entry of C in (i, j) order: 1, 0 at the end, -1 on error. */
int			xxl_matrix_next(xxl_matrix *m, int64_t *i, int64_t *j, double *v);
const xxl_error *xxl_matrix_error(const xxl_matrix *m);
void		xxl_matrix_stats_get(xxl_matrix *m, xxl_matrix_stats *st);
/* The budget held now (the sorters' shares whole). */
size_t		xxl_matrix_memory_held(const xxl_matrix *m);
void		xxl_matrix_destroy(xxl_matrix *m);

#endif							/* XXL_MATRIX_H */
