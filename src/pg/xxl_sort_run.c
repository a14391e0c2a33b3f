/*
 * xxl_sort_run.c — one sort from source rows to sorted rows (see
 * xxl_sort_run.h for the two record shapes).
 *
 * Fixed record layout, all fields unaligned:
 *     key (xxl_sortkey_fixed_size bytes) | null bitmap of the stored columns |
 *     the stored columns' bytes, each attlen long
 * A result column is either restored from the key, stored, or NULL (a
 * dropped column of the result type).  By-value columns are copied through
 * integers of their width; by-reference fixed-width values (uuid, name,
 * interval, ...) are copied to an aligned scratch area on the way out,
 * because a Datum must point at memory aligned for its type.
 *
 * Per-row allocations of the variable path (detoasted values) go into a
 * small context reset every row, which costs nothing when nothing was
 * allocated.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "commands/explain.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "pg/xxl_error.h"
#include "pg/xxl_guc.h"
#include "pg/xxl_key_filter.h"
#include "pg/xxl_mark_buffer.h"
#include "pg/xxl_operator.h"
#include "pg/xxl_sort_run.h"
#include "pg/table/xxl_table.h"

#define PUT_BATCH 256			/* records encoded per xxl_sorter_reserve */
#define GET_BATCH 1024			/* records taken per xxl_sorter_next_many */

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
	uint64		rows_out;

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
};

/* Record layout ---------------------------------------------------------- */

/*
 * Plan the fixed layout; false if the rows do not allow one (a key or a
 * column of variable width, or records too large for the engine).
 */
static bool
plan_fixed(XxlSortRun *run)
{
	TupleDesc	out = run->out_desc;
	int			key_size = xxl_sortkey_fixed_size(run->key);
	size_t		size;
	size_t		scratch = 0;

	if (key_size <= 0)
		return false;
	run->result = palloc0(sizeof(ResultColumn) * Max(out->natts, 1));
	run->stored = palloc0(sizeof(StoredColumn) * Max(out->natts, 1));
	run->max_in_attno = xxl_sortkey_max_attno(run->key);
	for (int i = 0; i < out->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(out, i);
		AttrNumber	in_attno = run->map ? run->map[i] : i + 1;
		int			key_column;

		if (att->attisdropped || in_attno == 0)
		{
			run->result[i].source = COLUMN_NULL;
			continue;
		}
		if (att->attlen <= 0)
			return false;
		key_column = xxl_sortkey_restorable_column(run->key, in_attno);
		if (key_column >= 0)
		{
			run->result[i].source = COLUMN_KEY;
			run->result[i].key_column = key_column;
			continue;
		}
		run->result[i].source = COLUMN_STORED;
		run->result[i].stored = run->nstored;
		run->stored[run->nstored].in_attno = in_attno;
		run->stored[run->nstored].len = att->attlen;
		run->stored[run->nstored].byval = att->attbyval;
		if (!att->attbyval)
		{
			run->stored[run->nstored].scratch_offset = scratch;
			scratch += MAXALIGN(att->attlen);
		}
		run->nstored++;
		run->max_in_attno = Max(run->max_in_attno, in_attno);
	}

	run->key_size = key_size;
	run->bitmap_offset = key_size;
	size = key_size + (run->nstored + 7) / 8;
	for (int s = 0; s < run->nstored; s++)
	{
		run->stored[s].offset = size;
		size += run->stored[s].len;
	}
	if (size > XXL_SORT_MAX_FIXED_RECORD)
		return false;
	run->record_size = size;
	run->scratch = scratch > 0 ? palloc(scratch) : NULL;
	return true;
}

static void
encode_fixed(XxlSortRun *run, const Datum *values, const bool *isnull, unsigned char *rec)
{
	unsigned char *bitmap = rec + run->bitmap_offset;

	xxl_sortkey_encode_fixed(run->key, values, isnull, rec);
	memset(bitmap, 0, (run->nstored + 7) / 8);
	for (int s = 0; s < run->nstored; s++)
	{
		const StoredColumn *c = &run->stored[s];
		int			a = c->in_attno - 1;
		unsigned char *p = rec + c->offset;

		if (isnull[a])
		{
			bitmap[s / 8] |= (unsigned char) (1 << (s % 8));
			memset(p, 0, c->len);
			continue;
		}
		if (!c->byval)
			memcpy(p, DatumGetPointer(values[a]), c->len);
		else
			xxl_store_byval(p, values[a], c->len);
	}
}

static void
decode_fixed(XxlSortRun *run, const unsigned char *rec, Datum *values, bool *isnull)
{
	TupleDesc	out = run->out_desc;
	const unsigned char *bitmap = rec + run->bitmap_offset;

	for (int i = 0; i < out->natts; i++)
	{
		const ResultColumn *r = &run->result[i];
		const StoredColumn *c;
		const unsigned char *p;

		switch (r->source)
		{
			case COLUMN_NULL:
				values[i] = (Datum) 0;
				isnull[i] = true;
				continue;
			case COLUMN_KEY:
				values[i] = xxl_sortkey_restore(run->key, r->key_column, rec,
													 &isnull[i]);
				continue;
			case COLUMN_STORED:
				break;
		}
		c = &run->stored[r->stored];
		if (bitmap[r->stored / 8] & (1 << (r->stored % 8)))
		{
			values[i] = (Datum) 0;
			isnull[i] = true;
			continue;
		}
		isnull[i] = false;
		p = rec + c->offset;
		if (!c->byval)
		{
			char	   *dst = run->scratch + c->scratch_offset;

			memcpy(dst, p, c->len);
			values[i] = PointerGetDatum(dst);
			continue;
		}
		values[i] = xxl_fetch_byval(p, c->len);
	}
}

/* Input ----------------------------------------------------------------------- */

static void
put_failed(XxlSortRun *run)
{
	xxl_raise_error(xxl_sorter_error(run->sorter), "xxl sort");
}

/*
 * Records are encoded straight into the sorter's load, a batch of slots at
 * a time (xxl_sorter_reserve), with no copy and no call per record.
 */
static void
read_fixed(XxlSortRun *run, XxlInput *in)
{
	/*
	 * Heap rows are deformed straight from their page, without a slot; xxl
	 * tables of by-value columns hand out runs of packed rows likewise.
	 */
	bool		tuples = xxl_input_has_tuples(in);
	TupleDesc	in_desc = xxl_input_desc(in);
	bool		runs = !tuples && xxl_input_runs_byval(in);
	XxlRowRun	run_rows = {0};
	int			run_next = 0;
	Datum	   *values = palloc(sizeof(Datum) * Max(in_desc->natts, 1));
	bool	   *isnull = palloc(sizeof(bool) * Max(in_desc->natts, 1));
	bool		more = true;

	while (more)
	{
		size_t		room = PUT_BATCH;
		unsigned char *dst = xxl_sorter_reserve(run->sorter, &room);
		size_t		filled = 0;

		if (dst == NULL)
			put_failed(run);
		while (filled < room)
		{
			unsigned char *rec = dst + filled * run->record_size;

			CHECK_FOR_INTERRUPTS();
			if (tuples)
			{
				HeapTuple	tuple = xxl_input_next_tuple(in);

				if (tuple == NULL)
					break;
				heap_deform_tuple(tuple, in_desc, values, isnull);
				encode_fixed(run, values, isnull, rec);
			}
			else if (runs)
			{
				if (run_next >= run_rows.n)
				{
					if (!xxl_input_next_run(in, &run_rows))
						break;
					run_next = 0;
				}
				xxl_run_unpack(&run_rows, run_next++, run->max_in_attno, values, isnull);
				encode_fixed(run, values, isnull, rec);
			}
			else
			{
				TupleTableSlot *slot = xxl_input_next(in);

				if (slot == NULL)
					break;
				slot_getsomeattrs(slot, run->max_in_attno);
				encode_fixed(run, slot->tts_values, slot->tts_isnull, rec);
			}
			/* a key seen before: the slot is taken by the next row */
			if (run->filter == NULL || !xxl_key_filter_seen(run->filter, rec, run->key_size))
				filled++;
		}
		more = filled == room;
		if (xxl_sorter_commit(run->sorter, filled) != XXL_OK)
			put_failed(run);
	}
	pfree(values);
	pfree(isnull);
}

static void
read_variable(XxlSortRun *run, XxlInput *in)
{
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext rowcxt = AllocSetContextCreate(cxt, "xxl sort row", ALLOCSET_DEFAULT_SIZES);
	TupleDesc	out_desc = run->out_desc;
	int			natts = out_desc->natts;
	Datum	   *values = palloc(sizeof(Datum) * Max(natts, 1));
	bool	   *isnull = palloc(sizeof(bool) * Max(natts, 1));
	AttrNumber	maxkey = xxl_sortkey_max_attno(run->key);
	StringInfoData rowbuf;

	initStringInfo(&rowbuf);
	for (;;)
	{
		TupleTableSlot *slot;
		const unsigned char *k;
		uint32		klen;
		const char *row = NULL;
		uint32		rlen;
		HeapTuple	tuple;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(rowcxt);
		MemoryContextSwitchTo(rowcxt);
		slot = xxl_input_next(in);
		if (slot == NULL)
			break;
		slot_getsomeattrs(slot, maxkey);
		k = xxl_sortkey_encode(run->key, slot->tts_values, slot->tts_isnull, &klen);
		if (run->filter && xxl_key_filter_seen(run->filter, k, klen))
		{
			MemoryContextSwitchTo(cxt);
			continue;
		}
		if (run->key_only)
		{
			/* the key is the whole record */
			if (xxl_sorter_put_var(run->sorter, k, klen, NULL, 0) != XXL_OK)
				put_failed(run);
			MemoryContextSwitchTo(cxt);
			continue;
		}

		/* a heap row whose bytes can be taken as they are is not re-formed */
		if (run->map == NULL && run->restore == NULL &&
			(tuple = xxl_input_heap_tuple(in)) != NULL)
			row = xxl_compact_from_heap(tuple, out_desc, &rlen);
		if (row == NULL)
		{
			slot_getallattrs(slot);
			if (run->map == NULL && run->restore == NULL)
				row = xxl_compact_form(&rowbuf, out_desc, slot->tts_values, slot->tts_isnull,
									   &rlen);
			else
			{
				for (int i = 0; i < natts; i++)
				{
					AttrNumber	a = run->map ? run->map[i] : i + 1;

					values[i] = a ? slot->tts_values[a - 1] : (Datum) 0;
					/* what the key restores is stored as a NULL: nothing */
					isnull[i] = a ? slot->tts_isnull[a - 1] || (run->restored && run->restored[i]) : true;
				}
				row = xxl_compact_form(&rowbuf, out_desc, values, isnull, &rlen);
			}
		}
		if (xxl_sorter_put_var(run->sorter, k, klen, row, rlen) != XXL_OK)
			put_failed(run);
		MemoryContextSwitchTo(cxt);
	}
	MemoryContextSwitchTo(cxt);
	MemoryContextDelete(rowcxt);
	pfree(rowbuf.data);
	pfree(values);
	pfree(isnull);
}

/*
 * The map with the columns nobody reads mapped to no input column (NULL):
 * they are then neither encoded nor stored, and a column of variable width
 * no longer rules out fixed records.  map itself if every column is needed.
 */
static AttrNumber *
only_needed(AttrNumber *map, TupleDesc out_desc, const bool *needed)
{
	AttrNumber *narrowed;
	bool		all = true;

	for (int i = 0; needed != NULL && i < out_desc->natts; i++)
		all &= needed[i];
	if (all)
		return map;
	narrowed = palloc(sizeof(AttrNumber) * out_desc->natts);
	for (int i = 0; i < out_desc->natts; i++)
		narrowed[i] = !needed[i] ? 0 : map ? map[i] : i + 1;
	return narrowed;
}

/*
 * Which result columns a variable key restores: each key column that is a
 * result column's input and that the key holds losslessly.
 */
static void
plan_restore(XxlSortRun *run)
{
	TupleDesc	out = run->out_desc;
	int			nkeycols = xxl_sortkey_ncols(run->key);
	bool		any = false;

	run->restore = palloc(sizeof(int) * Max(nkeycols, 1));
	run->restored = palloc0(sizeof(bool) * Max(out->natts, 1));
	for (int c = 0; c < nkeycols; c++)
	{
		run->restore[c] = -1;
		if (!xxl_sortkey_var_restorable(run->key, c))
			continue;
		for (int i = 0; i < out->natts; i++)
		{
			AttrNumber	a = run->map ? run->map[i] : i + 1;

			if (a == xxl_sortkey_attno(run->key, c) && !run->restored[i] &&
				!TupleDescAttr(out, i)->attisdropped)
			{
				run->restore[c] = i;
				run->restored[i] = true;
				any = true;
				break;
			}
		}
	}
	if (!any)
	{
		pfree(run->restore);
		pfree(run->restored);
		run->restore = NULL;
		run->restored = NULL;
		return;
	}
	run->key_only = true;
	for (int i = 0; i < out->natts; i++)
		if (!run->restored[i] && (run->map ? run->map[i] : i + 1) != 0 &&
			!TupleDescAttr(out, i)->attisdropped)
			run->key_only = false;
}

XxlSortRun *
xxl_sort_run_start(XxlInput *in, XxlSortKey *key, TupleDesc out_desc, AttrNumber *map,
				   const bool *needed, const XxlSortRunOptions *options)
{
	size_t		memory = options ? options->memory : 0;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "xxl sort run",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	XxlSortRun *run = palloc0(sizeof(XxlSortRun));

	run->cxt = cxt;
	run->key = key;
	run->out_desc = out_desc;
	run->map = only_needed(map, out_desc, needed);
	run->values = palloc0(sizeof(Datum) * Max(out_desc->natts, 1));
	run->isnull = palloc0(sizeof(bool) * Max(out_desc->natts, 1));
	run->fixed = plan_fixed(run);
	if (options && options->distinct)
	{
		/* the filter's share of the budget: a sixteenth, at most 4MB */
		size_t		budget = memory > 0 ? memory : xxl_memory_bytes();
		size_t		share = Min(budget / 16, (size_t) 4 * 1024 * 1024);

		run->filter = xxl_key_filter_create(share);
		memory = budget - share;
	}

	run->op = memory > 0 ? xxl_operator_begin_budget("sort", memory) : xxl_operator_begin("sort");
	xxl_operator_detail(run->op, "records", run->fixed ? "\"fixed\"" : "\"variable\"");
	if (run->fixed)
		xxl_operator_detail(run->op, "record_bytes", "%zu", run->record_size);
	if (run->fixed)
	{
		run->sorter = xxl_operator_new_sorter(run->op, run->record_size, run->key_size, NULL);
		read_fixed(run, in);
	}
	else
	{
		if (options && options->restore_from_key)
			plan_restore(run);
		run->sorter = xxl_operator_new_sorter(run->op, 0, 0, xxl_sortkey_compare(run->key));
		read_variable(run, in);
	}
	run->op->rows_in = xxl_input_rows(in);
	xxl_input_close(in);

	xxl_operator_phase(run->op, XXL_PHASE_MERGE);
	if (xxl_sorter_sort(run->sorter) != XXL_OK)
		xxl_raise_error(xxl_sorter_error(run->sorter), "xxl sort");
	xxl_operator_phase(run->op, XXL_PHASE_OUTPUT);
	MemoryContextSwitchTo(old);
	return run;
}

bool
xxl_sort_run_fixed(const XxlSortRun *run)
{
	return run->fixed;
}

/* Output ------------------------------------------------------------------------ */

static void
finish(XxlSortRun *run)
{
	if (run->finished)
		return;
	run->finished = true;
	run->op->rows_out = run->rows_out;
	xxl_operator_end(run->op);
	run->stats = *xxl_operator_last_stats();
	run->sorter = NULL;
}

void
xxl_sort_run_stats(XxlSortRun *run, XxlStats *stats)
{
	if (run->finished)
		*stats = run->stats;
	else
	{
		run->op->rows_out = run->rows_out;
		xxl_operator_stats(run->op, false, stats);
	}
}

/* The next record of the sorter: 1, 0 at the end, with the pieces set. */
static int
next_sorted(XxlSortRun *run, const void **key, uint32 *klen, const void **payload, uint32 *plen)
{
	int			got;

	if (run->exhausted)
		return 0;
	if (run->fixed)
	{
		/* a batch at a time from the sorter, handed on record by record */
		if (run->batch_left == 0)
		{
			const void *recs;

			got = xxl_sorter_next_many(run->sorter, &recs, GET_BATCH, &run->batch_left);
			run->batch = recs;
		}
		else
			got = 1;
		if (got == 1)
		{
			*key = *payload = run->batch;
			run->batch += run->record_size;
			run->batch_left--;
		}
	}
	else
		got = xxl_sorter_next_var(run->sorter, key, klen, payload, plen);
	if (got < 0)
		xxl_raise_error(xxl_sorter_error(run->sorter), "xxl sort");
	if (got == 0)
	{
		run->exhausted = true;
		return 0;
	}
	return 1;
}

/*
 * The next record to hand out: 1, 0 at the end, with the pieces set; a
 * distinct run skips the records whose key equals the last one's (the
 * filter let some through).
 */
static int
next_record(XxlSortRun *run, const void **key, uint32 *klen, const void **payload, uint32 *plen)
{
	for (;;)
	{
		uint32		len;

		if (next_sorted(run, key, klen, payload, plen) == 0)
			return 0;
		if (run->filter == NULL)
			break;
		len = run->fixed ? (uint32) run->key_size : *klen;
		if (run->have_prev && len == run->prev_len && memcmp(*key, run->prev_key, len) == 0)
		{
			run->dropped_out++;
			continue;
		}
		if (len > run->prev_cap)
		{
			run->prev_cap = Max(len, 2 * run->prev_cap);
			run->prev_key = run->prev_key ? repalloc(run->prev_key, run->prev_cap) :
				MemoryContextAlloc(run->cxt, run->prev_cap);
		}
		memcpy(run->prev_key, *key, len);
		run->prev_len = len;
		run->have_prev = true;
		break;
	}
	run->rows_out++;
	return 1;
}

/*
 * The next record to hand out: again from the mark buffer after a
 * restore, else the sorter's, kept while a mark is set.
 */
static int
next_out(XxlSortRun *run, const void **key, uint32 *klen, const void **payload, uint32 *plen)
{
	if (run->marks == NULL)
		return next_record(run, key, klen, payload, plen);
	if (xxl_mark_buffer_next(run->marks, key, klen, payload, plen))
	{
		if (run->fixed)
			*payload = *key;
		return 1;
	}
	if (!next_record(run, key, klen, payload, plen))
		return 0;
	if (run->fixed)
		xxl_mark_buffer_keep(run->marks, *payload, (uint32) run->record_size, NULL, 0);
	else
		xxl_mark_buffer_keep(run->marks, *key, *klen, *payload, *plen);
	return 1;
}

void
xxl_sort_run_mark(XxlSortRun *run)
{
	if (run->marks == NULL)
		run->marks = xxl_mark_buffer_create(run->cxt);
	xxl_mark_buffer_mark(run->marks);
}

void
xxl_sort_run_restore(XxlSortRun *run)
{
	if (run->marks != NULL)
		xxl_mark_buffer_restore(run->marks);
}

bool
xxl_sort_run_replaying(const XxlSortRun *run)
{
	return run->marks != NULL && xxl_mark_buffer_replaying(run->marks);
}

size_t
xxl_sort_run_marked_bytes(const XxlSortRun *run, size_t *peak)
{
	if (run->marks == NULL)
	{
		*peak = 0;
		return 0;
	}
	*peak = xxl_mark_buffer_peak(run->marks);
	return xxl_mark_buffer_bytes(run->marks);
}

void
xxl_sort_run_unmark(XxlSortRun *run)
{
	if (run->marks != NULL)
		xxl_mark_buffer_clear(run->marks);
}

uint64
xxl_sort_run_dropped(const XxlSortRun *run)
{
	return (run->filter ? xxl_key_filter_dropped(run->filter) : 0) + run->dropped_out;
}

/* The compact row as a MinimalTuple in the run's buffer. */
static MinimalTuple
compact_to_tuple(XxlSortRun *run, const void *row, uint32 len)
{
	size_t		size = MINIMAL_TUPLE_DATA_OFFSET + (size_t) len;
	MinimalTuple mt;

	if (size > run->tuple_size)
	{
		size_t		cap = Max(run->tuple_size, 1024);

		while (cap < size)
			cap *= 2;
		if (run->tuple)
			pfree(run->tuple);
		run->tuple = MemoryContextAlloc(run->cxt, cap);
		run->tuple_size = cap;
	}
	mt = (MinimalTuple) run->tuple;
	memset(mt, 0, MINIMAL_TUPLE_DATA_OFFSET);
	mt->t_len = size;
	memcpy(run->tuple + MINIMAL_TUPLE_DATA_OFFSET, row, len);
	return mt;
}

bool
xxl_sort_run_next(XxlSortRun *run, Datum *values, bool *isnull)
{
	const void *key,
			   *payload;
	uint32		klen = 0,
				plen = 0;

	if (!next_out(run, &key, &klen, &payload, &plen))
	{
		finish(run);
		return false;
	}
	if (run->fixed)
		decode_fixed(run, payload, values, isnull);
	else if (run->key_only)
	{
		for (int i = 0; i < run->out_desc->natts; i++)
		{
			values[i] = (Datum) 0;
			isnull[i] = true;
		}
		xxl_sortkey_restore_var(run->key, key, klen, run->restore, values, isnull);
	}
	else
	{
		MinimalTuple mt = compact_to_tuple(run, payload, plen);
		HeapTupleData htup;

		htup.t_len = mt->t_len + MINIMAL_TUPLE_OFFSET;
		htup.t_data = (HeapTupleHeader) ((char *) mt - MINIMAL_TUPLE_OFFSET);
		heap_deform_tuple(&htup, run->out_desc, values, isnull);
		if (run->restore != NULL)
			xxl_sortkey_restore_var(run->key, key, klen, run->restore, values, isnull);
	}
	return true;
}

uint64
xxl_sort_run_drain(XxlSortRun *run, XxlOutput *out)
{
	const void *key,
			   *payload;
	uint32		klen = 0,
				plen = 0;
	uint64		n;

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (!next_record(run, &key, &klen, &payload, &plen))
			break;
		if (run->fixed)
		{
			decode_fixed(run, payload, run->values, run->isnull);
			xxl_output_put_values(out, run->values, run->isnull);
		}
		else
		{
			/* rows restored from keys go out by xxl_sort_run_next only */
			Assert(run->restore == NULL);
			xxl_output_put_compact(out, payload, plen);
		}
	}
	/* the table is complete before the operator reports itself done */
	n = xxl_output_finish(out);
	finish(run);
	return n;
}

void
xxl_sort_run_explain(const XxlStats *stats, bool fixed, ExplainState *es)
{
	uint64		written = 0;
	uint64		read = 0;

	for (int d = 0; d < stats->io.ndisks; d++)
	{
		written += stats->io.disk[d].bytes_written;
		read += stats->io.disk[d].bytes_read;
	}
	ExplainPropertyText("Records", fixed ? "fixed" : "variable", es);
	ExplainPropertyInteger("Runs", NULL, (int64) stats->runs, es);
	ExplainPropertyInteger("Merge Passes", NULL, stats->merge_passes, es);
	ExplainPropertyInteger("Peak Memory", "kB", (int64) (stats->memory_peak / 1024), es);
	ExplainPropertyInteger("Spilled", "kB", (int64) (stats->io.spill_bytes_peak / 1024), es);
	ExplainPropertyInteger("Spill Written", "kB", (int64) (written / 1024), es);
	ExplainPropertyInteger("Spill Read", "kB", (int64) (read / 1024), es);
}

uint64
xxl_sort_run_rows_out(const XxlSortRun *run)
{
	return run->rows_out;
}

void
xxl_sort_run_free(XxlSortRun *run)
{
	if (run == NULL)
		return;
	/* stopped early (a LIMIT above the scan): the rows it did hand out */
	if (!run->finished && run->op != NULL)
		run->op->rows_out = run->rows_out;
	MemoryContextDelete(run->cxt);
}
