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

	/* the record xxl_sort_run_advance took, until the next call */
	const void *cur_key;
	const void *cur_payload;
	uint32		cur_klen;
	uint32		cur_plen;
};

#endif							/* XXL_PG_SORT_RUN_INTERNAL_H */
