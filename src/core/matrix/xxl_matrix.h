/*
 * xxl_matrix.h — the product C = A·B (or Aᵀ·B) of two sparse matrices
 * given as (row, column, value) entries of 64-bit indices, within a fixed
 * memory budget (LEDA-SM's last chapter, made sparse).
 *
 * Sparse path: A's entries are sorted by their inner index k (A's column,
 * or its row for Aᵀ), B's by theirs (B's row), and one pass over both
 * holds B's rows a piece at a time (as many as fit) while A's entries
 * that meet the piece, sorted by row, multiply them row by row
 * (Gustavson): each row i of the result is accumulated per column in
 * memory.  With B in one piece the rows go out as they are made, in (i, j)
 * order, and nothing is sorted but the inputs; with more, each piece's
 * sums go into an aggregating sort (xxl_sort_config.combine) keyed by (i,
 * j), which adds up equal keys as it forms and merges its runs, so the
 * sums are never on disk once per piece in full.  A row of B too large for
 * a piece alone multiplies each of A's entries at its k one product at a
 * time into that sort.  A sum of exactly 0 is left out.
 *
 * Values: integers (both inputs integer-typed) are multiplied and added
 * exactly, in 128 bits; anything else in double precision.  Entries of
 * value 0 are dropped on input (they add nothing); duplicate (i, j)
 * entries of an input add up, as if that input were their sum.
 *
 * Dense path (LEDA-SM's tiling): matrices that fill their bounding boxes
 * are sorted into square tiles of T x T (T from the budget), written as
 * dense tiles to random-access files, and C's tiles computed one at a
 * time, each the sum over the inner tiles of A's tile times B's, with
 * OpenMP over the tile's rows: O(n³/(T·B)) I/Os.  Its rows come tile by
 * tile (row-major within a tile), not in (i, j) order.
 *
 * Memory: sorters for A and B, a piece of B's rows and the sorts of a
 * piece's rows and of the sums hold shares of the budget; the dense path
 * three tiles and the files' caches.  Nothing else grows with the input.
 * Use: create, put every entry of A and of B (in any order), run, pull the
 * rows, destroy (which removes every spill file, also after an error or a
 * cancel).  Only the caller's thread calls the cancel hook.
 */
#ifndef XXL_MATRIX_H
#define XXL_MATRIX_H

#include "core/xxl_io.h"

/* Which path: chosen by density (auto), or forced. */
typedef enum xxl_matrix_method
{
	XXL_MATRIX_AUTO,
	XXL_MATRIX_SPARSE,
	XXL_MATRIX_DENSE
} xxl_matrix_method;

/*
 * Auto takes the dense path when both matrices fill at least this share
 * of their bounding boxes (and the boxes are at least a tile wide).
 */
#define XXL_MATRIX_DENSE_FILL 0.25

typedef struct xxl_matrix_config
{
	xxl_resources res;
	xxl_matrix_method method;
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
	const char *path;			/* "rows" (B in one piece: no sort of the sums),
								 * "pieces" (the pieces' sums sorted) or "dense"
								 * (tiles) */
	uint64_t	tile;			/* dense: the tiles' side */
	uint64_t	tiles;			/* dense: tile products multiplied */
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
