/*
 * matrix.h — the matrix functions' entry reader (folder matrix/): a
 * matrix given as a table name or a query with columns i, j (smallint,
 * integer or bigint) and v (those, real, double precision or numeric),
 * found by name, other columns ignored, read in batches through xxl_input.
 * A NULL or a NaN, a missing or mistyped column is an error with an
 * SQLSTATE that names the problem (docs/matrix.md).  The folder's SQL
 * functions (xxl_matrix_sql.c) run on it.
 */
#ifndef XXL_PG_MATRIX_H
#define XXL_PG_MATRIX_H

#include "postgres.h"

typedef struct XxlMatrixEntry
{
	int64		i;
	int64		j;
	int64		vi;				/* the value, when it is of an integer type */
	double		vd;				/* ... else */
} XxlMatrixEntry;

typedef struct XxlEntryReader XxlEntryReader;

/*
 * Open the matrix argument `name` ("a", "b") of function fname.  While it is
 * open, errors get a context line naming the function, the argument and
 * the source.
 */
extern XxlEntryReader *xxl_entries_open(const char *source, const char *fname, const char *name);
/* Whether the values are of an integer type (then vi holds them, else vd). */
extern bool xxl_entries_integer(XxlEntryReader *r);
/* The planner's row estimate of a table source, 0 if unknown (a query). */
extern uint64 xxl_entries_estimate(XxlEntryReader *r);
/* The next entries, up to max; 0 at the end.  Checks for interrupts. */
extern int	xxl_entries_read(XxlEntryReader *r, XxlMatrixEntry *out, int max);
extern void xxl_entries_close(XxlEntryReader *r);

#endif							/* XXL_PG_MATRIX_H */
