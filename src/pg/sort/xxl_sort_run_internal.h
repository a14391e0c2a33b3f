/*
 * xxl_sort_run_internal.h — the state of one sort run, shared by the files
 * that read rows into it (xxl_sort_run.c) and hand sorted rows out of it
 * (xxl_sort_run_output.c).
 */
#ifndef XXL_PG_SORT_RUN_INTERNAL_H
#define XXL_PG_SORT_RUN_INTERNAL_H

#include "pg/sort/xxl_key_filter.h"
#include "pg/sort/xxl_mark_buffer.h"
#include "core/xxl_sort.h"
#include "pg/runtime/runtime.h"
#include "pg/sort/xxl_sort_run.h"

typedef enum ColumnSource
{
	COLUMN_NULL,				/* dropped in the result type */
	COLUMN_KEY,					/* restored from the key */
	COLUMN_STORED				/* stored after the key */
} ColumnSource;

typedef struct ResultColumn
{
	ColumnSource source;
	int			key_column;		/* COLUMN_KEY: which key column */
	int			stored;			/* COLUMN_STORED: index among the stored */
} ResultColumn;

typedef struct StoredColumn
{
	AttrNumber	in_attno;		/* where the value comes from */
	int16		len;
	bool		byval;
	int			offset;			/* in the record */
	int			scratch_offset; /* by reference: where it goes out aligned */
} StoredColumn;

struct XxlSortRun
{
	MemoryContext cxt;
	XxlOperator *op;
	xxl_sorter *sorter;
	XxlSortKey *key;
	TupleDesc	out_desc;
	AttrNumber *map;
	bool		fixed;
	bool		exhausted;		/* the sorter has handed out its last record */
	bool		finished;		/* ... and the operator recorded its statistics */
	XxlStats	stats;			/* what it recorded */

	/* the row handed to an output */
	Datum	   *values;
	bool	   *isnull;

	/* fixed records */
	size_t		key_size;
	size_t		record_size;
	int			bitmap_offset;
	int			nstored;
	StoredColumn *stored;
	ResultColumn *result;
	AttrNumber	max_in_attno;	/* deform the input up to here */
	char	   *scratch;		/* aligned by-reference values going out */
	const unsigned char *batch; /* records taken out, not yet handed on */
	size_t		batch_left;

	/* variable records */
	char	   *tuple;			/* MAXALIGNed MinimalTuple being handed out */
	size_t		tuple_size;
	int		   *restore;		/* per key column: the result column the key
								 * restores, or -1; NULL when none */
	bool	   *restored;		/* per result column: restored, not stored */
	int		   *copies;			/* pairs (result column, the restored column
								 * it repeats), ncopies of them */
	int			ncopies;
	bool		key_only;		/* the key restores every column there is:
								 * records carry no row at all */

	/* distinct runs: the input's filter, and the key last handed out */
	XxlKeyFilter *filter;
	unsigned char *prev_key;
	uint32		prev_len;
	size_t		prev_cap;
	bool		have_prev;
	uint64		dropped_out;

	/* marks (xxl_sort_run_mark): the records handed out since, or NULL */
	XxlMarkBuffer *marks;

	/* a row's values in the result's layout, while its record is formed */
	Datum	   *form_values;
	bool	   *form_isnull;

	/* merging sorted streams (xxl_sort_streams.c) instead of sorting, or NULL */
	struct XxlStreamsMerge *streams;

	/* the record xxl_sort_run_advance took, until the next call */
	const void *cur_key;
	const void *cur_payload;
	uint32		cur_klen;
	uint32		cur_plen;
};

/*
 * A run laid out for key, out_desc, map and needed (see xxl_sort_run_start),
 * its records planned, with no rows yet: xxl_sort_run_start sorts into it,
 * xxl_sort_run_merge merges into it.
 */
extern XxlSortRun *xxl_sort_run_new(XxlSortKey *key, TupleDesc out_desc, AttrNumber *map,
									const bool *needed, const XxlSortRunOptions *options);

/* A fixed record of a row (the input's layout) into rec (record_size bytes). */
extern void xxl_sort_run_encode_fixed(XxlSortRun *run, const Datum *values, const bool *isnull,
									  unsigned char *rec);

/*
 * A variable record's row part, of a row in the input's layout, formed in
 * buf; the columns the key restores are left out.
 */
extern const char *xxl_sort_run_form_row(XxlSortRun *run, StringInfo buf, const Datum *in_values,
										 const bool *in_isnull, uint32 *len);

/* The next merged record (xxl_sort_streams.c): as next_sorted. */
extern int	xxl_sort_streams_next(XxlSortRun *run, const void **key, uint32 *klen,
								  const void **payload, uint32 *plen);
/* Before the run records its statistics: the streams' own. */
extern void xxl_sort_streams_report(XxlSortRun *run);

/*
 * The record that went out last as the row its stream gave, when the
 * streams' rows are of by-value columns in fixed records (their values
 * kept per stream); false otherwise (decode the record).
 */
extern bool xxl_sort_streams_values(XxlSortRun *run, Datum *values, bool *isnull);

#endif							/* XXL_PG_SORT_RUN_INTERNAL_H */
