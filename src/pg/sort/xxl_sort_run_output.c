/*
 * xxl_sort_run_output.c — the sorted rows of a run handed out: one at a
 * time (xxl_sort_run_next, with the marks a merge join sets) or drained
 * into an output, and the run's statistics (see xxl_sort_run.h; the
 * fixed record layout is in xxl_sort_run.c).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "commands/explain.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "pg/runtime/runtime.h"
#include "pg/sort/xxl_sort_run_internal.h"

#define GET_BATCH 1024			/* records taken per xxl_sorter_next_many */

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

static void
finish(XxlSortRun *run)
{
	if (run->finished)
		return;
	run->finished = true;
	if (run->streams != NULL)
		xxl_sort_streams_report(run);
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
		xxl_operator_stats(run->op, false, stats);
}

/* The next record of the sorter: 1, 0 at the end, with the pieces set. */
static int
next_sorted(XxlSortRun *run, const void **key, uint32 *klen, const void **payload, uint32 *plen)
{
	int			got;

	if (run->exhausted)
		return 0;
	if (run->streams != NULL)
		got = xxl_sort_streams_next(run, key, klen, payload, plen);
	else if (run->fixed)
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
	run->op->rows_out++;		/* counted where xxl.progress sees it */
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
	/* a merge of streams hands out its rows from the streams' heads, which a replay no longer has */
	if (run->streams != NULL)
		elog(ERROR, "a merge of sorted streams cannot mark its position");
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

/* The result columns the key holds, and their copies. */
static void
restore_from_key(XxlSortRun *run, const void *key, uint32 klen, Datum *values, bool *isnull)
{
	xxl_sortkey_restore_var(run->key, key, klen, run->restore, values, isnull);
	/* per row: only the columns that repeat another, not every column */
	for (int k = 0; k < run->ncopies; k++)
	{
		int			to = run->copies[2 * k],
					from = run->copies[2 * k + 1];

		values[to] = values[from];
		isnull[to] = isnull[from];
	}
}

bool
xxl_sort_run_advance(XxlSortRun *run)
{
	run->cur_klen = run->cur_plen = 0;
	if (!next_out(run, &run->cur_key, &run->cur_klen, &run->cur_payload, &run->cur_plen))
	{
		finish(run);
		return false;
	}
	return true;
}

void
xxl_sort_run_decode(XxlSortRun *run, Datum *values, bool *isnull)
{
	const void *key = run->cur_key,
			   *payload = run->cur_payload;
	uint32		klen = run->cur_klen,
				plen = run->cur_plen;

	if (run->streams != NULL && xxl_sort_streams_values(run, values, isnull))
		return;
	if (run->fixed)
		decode_fixed(run, payload, values, isnull);
	else if (run->key_only)
	{
		for (int i = 0; i < run->out_desc->natts; i++)
		{
			values[i] = (Datum) 0;
			isnull[i] = true;
		}
		restore_from_key(run, key, klen, values, isnull);
	}
	else
	{
		MinimalTuple mt = compact_to_tuple(run, payload, plen);
		HeapTupleData htup;

		htup.t_len = mt->t_len + MINIMAL_TUPLE_OFFSET;
		htup.t_data = (HeapTupleHeader) ((char *) mt - MINIMAL_TUPLE_OFFSET);
		heap_deform_tuple(&htup, run->out_desc, values, isnull);
		if (run->restore != NULL)
			restore_from_key(run, key, klen, values, isnull);
	}
}

bool
xxl_sort_run_next(XxlSortRun *run, Datum *values, bool *isnull)
{
	if (!xxl_sort_run_advance(run))
		return false;
	xxl_sort_run_decode(run, values, isnull);
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
			if (run->streams == NULL || !xxl_sort_streams_values(run, run->values, run->isnull))
				decode_fixed(run, payload, run->values, run->isnull);
			xxl_output_put_values(out, run->values, run->isnull);
		}
		else if (run->restore != NULL)
		{
			/* columns the key holds come back from it (XxlSort's rows) */
			run->cur_key = key;
			run->cur_klen = klen;
			run->cur_payload = payload;
			run->cur_plen = plen;
			xxl_sort_run_decode(run, run->values, run->isnull);
			xxl_output_put_values(out, run->values, run->isnull);
		}
		else
			xxl_output_put_compact(out, payload, plen);
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

void
xxl_sort_run_free(XxlSortRun *run)
{
	if (run == NULL)
		return;
	/* stopped early (a LIMIT above the scan): op->rows_out has the rows it did hand out */
	MemoryContextDelete(run->cxt);
}
