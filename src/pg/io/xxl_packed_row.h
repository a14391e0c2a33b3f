/*
 * xxl_packed_row.h — rows packed without a header, as xxl tables store
 * them (table/), and runs of such rows handed to the engine's inputs by a
 * table's scan without a slot per row.
 *
 * The input module (xxl_input.h) reads the runs of a table access method
 * that registers its run scan (xxl_input_register_runs), so that io/ needs
 * nothing of the access method that stores them.
 */
#ifndef XXL_PG_PACKED_ROW_H
#define XXL_PG_PACKED_ROW_H

#include "access/tupdesc.h"
#include "lib/stringinfo.h"
#include "utils/rel.h"

#include "pg/io/xxl_rowcodec.h"

/*
 * How rows of a descriptor's first natts columns are packed: a null bitmap,
 * then every non-null column's bytes unaligned (fixed-width values as they
 * are, varlenas with a 1-byte header when short, cstrings with their
 * terminator).  When every column has a fixed width the row is always
 * row_width bytes (a NULL keeps its place, zeroed) and pages need no
 * offsets.  A dropped column keeps its place (rows written before the drop
 * hold its value; later ones a NULL); columns added after a page was
 * written are missing from its rows (their default or NULL).
 */
/* Rows of more columns than this take the general unpack. */
#define XXL_BYVAL_MAX_COLS 32

typedef struct XxlRowFormat
{
	TupleDesc	desc;
	int			natts;			/* columns in the rows */
	int			bitmap_bytes;
	int			row_width;		/* 0: variable */
	bool		byval;			/* every column by value and fixed: the fast unpack */
	bool		may_alloc;		/* unpacking may copy values into CurrentMemoryContext */
	uint8		lens[XXL_BYVAL_MAX_COLS];	/* byval: each column's width */
	bool		all8;			/* byval and every width is a Datum's */
} XxlRowFormat;

extern void xxl_row_format_init(XxlRowFormat *fmt, TupleDesc desc, int natts);

/*
 * The unpack of rows whose every column is a fixed-width by-value one
 * (fmt->byval): inline, as it is the full scans' per-row path.
 */
static inline void
xxl_row_unpack_byval(const XxlRowFormat *fmt, const char *row, Datum *values, bool *isnull)
{
	const char *p = row + fmt->bitmap_bytes;
	bool		nulls = false;

	for (int b = 0; b < fmt->bitmap_bytes; b++)
		nulls |= row[b] != 0;
	if (nulls)
		for (int i = 0; i < fmt->natts; i++)
			isnull[i] = (row[i / 8] >> (i % 8)) & 1;
	else
		memset(isnull, 0, fmt->natts);
	if (fmt->all8)
	{
		/* the usual case (bigint, double precision, timestamps): no width switch */
		memcpy(values, p, fmt->natts * sizeof(Datum));
		return;
	}
	for (int i = 0; i < fmt->natts; i++)
	{
		int			len = fmt->lens[i];

		values[i] = xxl_fetch_byval(p, len);
		p += len;
	}
}

/*
 * Varlenas larger than this are compressed and, if still larger, moved to
 * the table's TOAST table when a row is packed for it (as heap does beyond
 * its 2 kB threshold).
 */
#define XXL_TOAST_VALUE 2000

/*
 * Pack values into buf (reset first); returns the packed length.  With
 * toast_rel, large varlenas are compressed or moved to its TOAST table.
 */
extern uint32 xxl_row_pack(const XxlRowFormat *fmt, const Datum *values, const bool *isnull,
						   StringInfo buf, Relation toast_rel);

/*
 * Unpack a row into values/isnull (all of the descriptor's columns).
 * By-reference values point into the row where their alignment allows
 * (varlenas with a 1-byte header, cstrings), else into aligned copies in
 * CurrentMemoryContext.
 */
extern void xxl_row_unpack(const XxlRowFormat *fmt, const char *row, Datum *values,
						   bool *isnull);

/*
 * A run: rows [first, first + n) of one page, packed as fmt says.  Rows of
 * a fixed width (row_width > 0) lie back to back from rows; otherwise rows
 * holds a 2-byte offset (from base) per row, and row i ends where row i-1
 * begins, row 0 at end0.
 */
typedef struct XxlRowRun
{
	const char *base;
	const char *rows;
	uint32		row_width;
	uint16		end0;
	int			first;
	int			n;
	const XxlRowFormat *fmt;
} XxlRowRun;

/* Row i (counted from the page's first row, not the run's) and its length. */
static inline const char *
xxl_run_row(const XxlRowRun *run, int i, uint32 *len)
{
	uint16		at,
				end;

	if (run->row_width > 0)
	{
		*len = run->row_width;
		return run->rows + (Size) i * run->row_width;
	}
	memcpy(&at, run->rows + i * sizeof(uint16), sizeof(uint16));
	if (i == 0)
		end = run->end0;
	else
		memcpy(&end, run->rows + (i - 1) * sizeof(uint16), sizeof(uint16));
	*len = end - at;
	return run->base + at;
}

/*
 * Row i of a run (counted from the run's first) into values/isnull, at
 * least its first natts columns: the by-value unpack when the run's rows
 * have them, else the general one (rows written before columns were added
 * lack them; it fills them in).
 */
static inline const char *
xxl_run_unpack(const XxlRowRun *run, int i, int natts, Datum *values, bool *isnull)
{
	uint32		len;
	const char *row = xxl_run_row(run, run->first + i, &len);

	if (run->fmt->byval && run->fmt->natts >= natts)
		xxl_row_unpack_byval(run->fmt, row, values, isnull);
	else
		xxl_row_unpack(run->fmt, row, values, isnull);
	return row;
}

#endif							/* XXL_PG_PACKED_ROW_H */
