/*
 * xxl_sort_run.c — one sort from source rows to sorted rows: the record
 * layout, and the rows read into the sorter (see xxl_sort_run.h for the
 * two record shapes; xxl_sort_run_output.c hands the sorted rows out).
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

#include "pg/runtime/runtime.h"
#include "pg/sort/xxl_key_filter.h"
#include "pg/sort/xxl_sort_new.h"
#include "pg/sort/xxl_sort_run_internal.h"

#define PUT_BATCH 256			/* records encoded per xxl_sorter_reserve */

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

void
xxl_sort_run_encode_fixed(XxlSortRun *run, const Datum *values, const bool *isnull, unsigned char *rec)
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
	const AttrNumber *tuple_map = NULL;
	TupleDesc	tuple_desc = tuples ? xxl_input_tuple_desc(in, &tuple_map) : in_desc;
	bool		runs = !tuples && xxl_input_runs_byval(in);
	XxlRowRun	run_rows = {0};
	int			run_next = 0;
	Datum	   *values = palloc(sizeof(Datum) * Max(in_desc->natts, 1));
	bool	   *isnull = palloc(sizeof(bool) * Max(in_desc->natts, 1));
	/* a Seq Scan's columns picked from its tuples: deformed whole, then picked */
	Datum	   *tvalues = tuple_map ? palloc(sizeof(Datum) * Max(tuple_desc->natts, 1)) : values;
	bool	   *tisnull = tuple_map ? palloc(sizeof(bool) * Max(tuple_desc->natts, 1)) : isnull;
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
				heap_deform_tuple(tuple, tuple_desc, tvalues, tisnull);
				if (tuple_map)
					for (int i = 0; i < run->max_in_attno; i++)
					{
						values[i] = tvalues[tuple_map[i] - 1];
						isnull[i] = tisnull[tuple_map[i] - 1];
					}
				xxl_sort_run_encode_fixed(run, values, isnull, rec);
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
				xxl_sort_run_encode_fixed(run, values, isnull, rec);
			}
			else
			{
				TupleTableSlot *slot = xxl_input_next(in);

				if (slot == NULL)
					break;
				slot_getsomeattrs(slot, run->max_in_attno);
				xxl_sort_run_encode_fixed(run, slot->tts_values, slot->tts_isnull, rec);
			}
			/* a key seen before: the slot is taken by the next row */
			if (run->filter == NULL || !xxl_key_filter_seen(run->filter, rec, run->key_size))
				filled++;
		}
		more = filled == room;
		if (xxl_sorter_commit(run->sorter, filled) != XXL_OK)
			put_failed(run);
	}
	if (tuple_map)
	{
		pfree(tvalues);
		pfree(tisnull);
	}
	pfree(values);
	pfree(isnull);
}

const char *
xxl_sort_run_form_row(XxlSortRun *run, StringInfo buf, const Datum *in_values,
					  const bool *in_isnull, uint32 *len)
{
	TupleDesc	out_desc = run->out_desc;

	if (run->map == NULL && run->restore == NULL)
		return xxl_compact_form(buf, out_desc, in_values, in_isnull, len);
	for (int i = 0; i < out_desc->natts; i++)
	{
		AttrNumber	a = run->map ? run->map[i] : i + 1;

		run->form_values[i] = a ? in_values[a - 1] : (Datum) 0;
		/* what the key restores is stored as a NULL: nothing */
		run->form_isnull[i] = a ? in_isnull[a - 1] || (run->restored && run->restored[i]) : true;
	}
	return xxl_compact_form(buf, out_desc, run->form_values, run->form_isnull, len);
}

static void
read_variable(XxlSortRun *run, XxlInput *in)
{
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext rowcxt = AllocSetContextCreate(cxt, "xxl sort row", ALLOCSET_DEFAULT_SIZES);
	TupleDesc	out_desc = run->out_desc;
	AttrNumber	maxkey = xxl_sortkey_max_attno(run->key);
	StringInfoData rowbuf;

	/*
	 * Heap rows (of a table, or of a Seq Scan child that computes nothing)
	 * are deformed straight from their page, without a slot; a scan's
	 * picked columns are then taken from the deformed tuple
	 */
	bool		tuples = xxl_input_has_tuples(in);
	const AttrNumber *tuple_map = NULL;
	TupleDesc	tuple_desc = tuples ? xxl_input_tuple_desc(in, &tuple_map) : NULL;
	int			in_natts = xxl_input_desc(in)->natts;
	Datum	   *tvalues = tuples ? palloc(sizeof(Datum) * Max(tuple_desc->natts, 1)) : NULL;
	bool	   *tisnull = tuples ? palloc(sizeof(bool) * Max(tuple_desc->natts, 1)) : NULL;
	Datum	   *pvalues = tuple_map ? palloc(sizeof(Datum) * Max(in_natts, 1)) : NULL;
	bool	   *pisnull = tuple_map ? palloc(sizeof(bool) * Max(in_natts, 1)) : NULL;

	initStringInfo(&rowbuf);
	for (;;)
	{
		TupleTableSlot *slot = NULL;
		HeapTuple	tuple = NULL;
		Datum	   *values;
		bool	   *isnull;
		const unsigned char *k;
		uint32		klen;
		const char *row = NULL;
		uint32		rlen;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(rowcxt);
		MemoryContextSwitchTo(rowcxt);
		if (tuples)
		{
			if ((tuple = xxl_input_next_tuple(in)) == NULL)
				break;
			heap_deform_tuple(tuple, tuple_desc, tvalues, tisnull);
			values = tvalues;
			isnull = tisnull;
			if (tuple_map)
			{
				for (int i = 0; i < in_natts; i++)
				{
					pvalues[i] = tvalues[tuple_map[i] - 1];
					pisnull[i] = tisnull[tuple_map[i] - 1];
				}
				values = pvalues;
				isnull = pisnull;
			}
		}
		else
		{
			if ((slot = xxl_input_next(in)) == NULL)
				break;
			slot_getsomeattrs(slot, maxkey);
			values = slot->tts_values;
			isnull = slot->tts_isnull;
		}
		k = xxl_sortkey_encode(run->key, values, isnull, &klen);
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
		if (run->map == NULL && run->restore == NULL)
		{
			HeapTuple	whole = tuples ? (tuple_map ? NULL : tuple) : xxl_input_heap_tuple(in);

			if (whole != NULL)
				row = xxl_compact_from_heap(whole, out_desc, &rlen);
		}
		if (row == NULL)
		{
			if (slot != NULL)
			{
				slot_getallattrs(slot);
				values = slot->tts_values;
				isnull = slot->tts_isnull;
			}
			row = xxl_sort_run_form_row(run, &rowbuf, values, isnull, &rlen);
		}
		if (xxl_sorter_put_var(run->sorter, k, klen, row, rlen) != XXL_OK)
			put_failed(run);
		MemoryContextSwitchTo(cxt);
	}
	MemoryContextSwitchTo(cxt);
	MemoryContextDelete(rowcxt);
	pfree(rowbuf.data);
	if (tuples)
	{
		pfree(tvalues);
		pfree(tisnull);
	}
	if (tuple_map)
	{
		pfree(pvalues);
		pfree(pisnull);
	}
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
 * result column's input and that the key holds losslessly; where several
 * result columns have that input, the later ones copy the first.
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

			if (a != xxl_sortkey_attno(run->key, c) || run->restored[i] ||
				TupleDescAttr(out, i)->attisdropped)
				continue;
			run->restored[i] = true;
			any = true;
			if (run->restore[c] < 0)
			{
				run->restore[c] = i;
				continue;
			}
			/* another result column of the same input: a copy of the first */
			if (run->copies == NULL)
				run->copies = palloc(sizeof(int) * 2 * out->natts);
			run->copies[2 * run->ncopies] = i;
			run->copies[2 * run->ncopies + 1] = run->restore[c];
			run->ncopies++;
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
xxl_sort_run_new(XxlSortKey *key, TupleDesc out_desc, AttrNumber *map, const bool *needed,
				 const XxlSortRunOptions *options)
{
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
	run->form_values = palloc0(sizeof(Datum) * Max(out_desc->natts, 1));
	run->form_isnull = palloc0(sizeof(bool) * Max(out_desc->natts, 1));
	run->fixed = plan_fixed(run);
	if (!run->fixed && options && options->restore_from_key)
		plan_restore(run);
	MemoryContextSwitchTo(old);
	return run;
}

XxlSortRun *
xxl_sort_run_start(XxlInput *in, XxlSortKey *key, TupleDesc out_desc, AttrNumber *map,
				   const bool *needed, const XxlSortRunOptions *options)
{
	size_t		memory = options ? options->memory : 0;
	double		expected;
	XxlSortRun *run = xxl_sort_run_new(key, out_desc, map, needed, options);
	MemoryContext old = MemoryContextSwitchTo(run->cxt);

	if (options && options->distinct)
	{
		/* the filter's share of the budget: a sixteenth, at most 4MB */
		size_t		budget = memory > 0 ? memory : xxl_memory_bytes();
		size_t		share = Min(budget / 16, (size_t) 4 * 1024 * 1024);

		run->filter = xxl_key_filter_create(share);
		memory = budget - share;
	}

	run->op = memory > 0 ? xxl_operator_begin_budget("sort", memory) : xxl_operator_begin("sort");
	expected = options && options->expected_bytes > 0 ? options->expected_bytes :
		run->fixed ? xxl_input_expected_rows(in) * run->record_size : 0;
	if (expected > 0)
		run->op->expected_bytes = expected < (double) PG_UINT64_MAX ? (uint64) expected : PG_UINT64_MAX;
	run->op->output_per_input = !(options && options->distinct);
	xxl_operator_describe(run->op, options ? options->name : NULL, xxl_input_expected_rows(in));
	xxl_operator_detail(run->op, "records", run->fixed ? "\"fixed\"" : "\"variable\"");
	if (run->fixed)
		xxl_operator_detail(run->op, "record_bytes", "%zu", run->record_size);
	if (run->fixed)
	{
		run->sorter = xxl_sort_new(run->op, run->record_size, run->key_size, NULL);
		read_fixed(run, in);
	}
	else
	{
		run->sorter = xxl_sort_new(run->op, 0, 0, xxl_sortkey_compare(run->key));
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
