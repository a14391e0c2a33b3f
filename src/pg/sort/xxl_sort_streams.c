/*
 * xxl_sort_streams.c — a run whose rows come from streams that are sorted
 * already (xxl_sort_run_merge): each stream's current row becomes a record
 * of the run's own shape (the same encoding as a sort's, xxl_sort_run.c),
 * the engine's merge of stream heads (core/xxl_heads.h) picks the smallest,
 * and the record goes out through the run's usual paths
 * (xxl_sort_run_output.c): rows one at a time, drained into a table,
 * restored from the key.  Streams whose ranges follow one another
 * (options->streams_in_order) go out one after the other instead, each read
 * only once the one before has ended.  Rows of by-value columns go out as
 * the streams gave them.  Memory: one record per stream, whatever the
 * streams' length.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "core/xxl_heads.h"
#include "pg/runtime/runtime.h"
#include "pg/sort/xxl_sort_run_internal.h"

typedef struct StreamHead
{
	XxlSortedStream stream;
	StringInfoData key;			/* the current record: its key ... */
	StringInfoData row;			/* ... and its row part (variable records) */
	Datum	   *values;			/* by_value: the row as the stream gave it */
	bool	   *isnull;
	bool		ended;
} StreamHead;

typedef struct XxlStreamsMerge
{
	int			n;
	StreamHead *heads;
	xxl_heads  *order;			/* NULL: concatenated, in stream order */
	int			current;		/* concatenated: the stream being read */
	int			out;			/* the stream whose record went out last, or -1 */
	TupleDesc	in_desc;
	Datum	   *values;			/* a stream's row */
	bool	   *isnull;
	StringInfoData rowbuf;
	MemoryContext rowcxt;		/* a stream's per-row allocations */
	bool		by_value;		/* fixed records of by-value columns: rows go out as read */
	MemoryContextCallback free_cb;
	XxlStreamsReport report;
	void	   *report_arg;
} XxlStreamsMerge;

static void
free_order(void *arg)
{
	XxlStreamsMerge *m = arg;

	xxl_heads_free(m->order);
	m->order = NULL;
}

/* Stream i's next row as its record, and its place in the merge. */
static void
advance(XxlSortRun *run, int i)
{
	XxlStreamsMerge *m = run->streams;
	StreamHead *h = &m->heads[i];
	MemoryContext old;
	/* rows of by-value columns are read straight into the stream's head */
	Datum	   *values = m->by_value ? h->values : m->values;
	bool	   *isnull = m->by_value ? h->isnull : m->isnull;

	CHECK_FOR_INTERRUPTS();
	MemoryContextReset(m->rowcxt);
	old = MemoryContextSwitchTo(m->rowcxt);
	if (h->ended || !h->stream.next(h->stream.arg, values, isnull))
	{
		MemoryContextSwitchTo(old);
		h->ended = true;
		if (m->order != NULL)
			xxl_heads_end(m->order, i);
		return;
	}
	resetStringInfo(&h->key);
	resetStringInfo(&h->row);
	if (m->by_value)
	{
		/* the row goes out from its values: only its key is encoded, for the merge */
		enlargeStringInfo(&h->key, (int) run->key_size);
		xxl_sortkey_encode_fixed(run->key, values, isnull, (unsigned char *) h->key.data);
		h->key.len = (int) run->key_size;
	}
	else if (run->fixed)
	{
		enlargeStringInfo(&h->key, (int) run->record_size);
		xxl_sort_run_encode_fixed(run, m->values, m->isnull, (unsigned char *) h->key.data);
		h->key.len = (int) run->record_size;
	}
	else
	{
		uint32		klen,
					rlen = 0;
		const unsigned char *k = xxl_sortkey_encode(run->key, m->values, m->isnull, &klen);

		appendBinaryStringInfoNT(&h->key, (const char *) k, (int) klen);
		if (!run->key_only)
		{
			const char *r = xxl_sort_run_form_row(run, &m->rowbuf, m->values, m->isnull, &rlen);

			appendBinaryStringInfoNT(&h->row, r, (int) rlen);
		}
	}
	MemoryContextSwitchTo(old);
	/* no engine polls here: xxl.progress hears of the rows from the merge itself */
	if ((++run->op->rows_in & 1023) == 0)
		xxl_progress_publish(run->op, false);
	if (m->order == NULL)
		return;
	xxl_heads_set(m->order, i, (const unsigned char *) h->key.data,
				  run->fixed ? (uint32) run->key_size : (uint32) h->key.len);
}

XxlSortRun *
xxl_sort_run_merge(XxlSortedStream *streams, int nstreams, XxlSortKey *key, TupleDesc in_desc,
				   TupleDesc out_desc, AttrNumber *map, const XxlSortRunOptions *options,
				   XxlStreamsReport report, void *report_arg)
{
	bool		merge = options == NULL || !options->streams_in_order;
	XxlSortRun *run = xxl_sort_run_new(key, out_desc, map, NULL, options);
	MemoryContext old = MemoryContextSwitchTo(run->cxt);
	XxlStreamsMerge *m = palloc0(sizeof(XxlStreamsMerge));

	run->streams = m;
	m->report = report;
	m->report_arg = report_arg;
	m->n = nstreams;
	m->out = -1;
	m->in_desc = in_desc;
	m->values = palloc0(sizeof(Datum) * Max(in_desc->natts, 1));
	m->isnull = palloc0(sizeof(bool) * Max(in_desc->natts, 1));
	initStringInfo(&m->rowbuf);
	m->rowcxt = AllocSetContextCreate(run->cxt, "xxl merged row", ALLOCSET_DEFAULT_SIZES);
	m->heads = palloc0(sizeof(StreamHead) * Max(nstreams, 1));
	if (merge)
	{
		m->order = xxl_heads_create(nstreams, run->fixed ? NULL : xxl_sortkey_compare(key));
		if (m->order == NULL)
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		m->free_cb.func = free_order;
		m->free_cb.arg = m;
		MemoryContextRegisterResetCallback(run->cxt, &m->free_cb);
	}

	run->op = xxl_operator_begin(options && options->name ? options->name : "sort");
	xxl_operator_describe(run->op, NULL, 0);
	xxl_operator_detail(run->op, "records", run->fixed ? "\"fixed\"" : "\"variable\"");
	xxl_operator_detail(run->op, "streams", "%d", nstreams);
	if (!merge)
		xxl_operator_detail(run->op, "streams_in_order", "true");
	/*
	 * Rows of by-value columns in fixed records go out from the values the
	 * stream gave, not decoded again from the record (its key is encoded
	 * for the merge all the same); by-reference values live only until
	 * the next row of any stream.
	 */
	m->by_value = run->fixed;
	for (int i = 0; i < in_desc->natts; i++)
		m->by_value &= TupleDescAttr(in_desc, i)->attbyval;
	for (int i = 0; i < nstreams; i++)
	{
		m->heads[i].stream = streams[i];
		initStringInfo(&m->heads[i].key);
		initStringInfo(&m->heads[i].row);
		if (m->by_value)
		{
			m->heads[i].values = palloc0(sizeof(Datum) * Max(in_desc->natts, 1));
			m->heads[i].isnull = palloc0(sizeof(bool) * Max(in_desc->natts, 1));
		}
	}
	/* merged: every stream's first row before the first goes out */
	for (int i = 0; i < (merge ? nstreams : Min(nstreams, 1)); i++)
		advance(run, i);
	xxl_operator_phase(run->op, XXL_PHASE_OUTPUT);
	MemoryContextSwitchTo(old);
	return run;
}

/* Concatenated: the stream whose row goes out next, its first row read on the way, or -1. */
static int
current_stream(XxlSortRun *run)
{
	XxlStreamsMerge *m = run->streams;

	while (m->current < m->n && m->heads[m->current].ended)
	{
		if (++m->current < m->n)
			advance(run, m->current);
	}
	return m->current < m->n ? m->current : -1;
}

int
xxl_sort_streams_next(XxlSortRun *run, const void **key, uint32 *klen, const void **payload,
					  uint32 *plen)
{
	XxlStreamsMerge *m = run->streams;
	int			i;
	StreamHead *h;

	/* the record that went out last stays valid until now */
	if (m->out >= 0)
		advance(run, m->out);
	i = m->order != NULL ? xxl_heads_top(m->order) : current_stream(run);
	m->out = i;
	if (i < 0)
		return 0;
	h = &m->heads[i];
	*key = h->key.data;
	*klen = (uint32) h->key.len;
	*payload = run->fixed ? h->key.data : h->row.data;
	*plen = run->fixed ? 0 : (uint32) h->row.len;
	return 1;
}

bool
xxl_sort_streams_values(XxlSortRun *run, Datum *values, bool *isnull)
{
	XxlStreamsMerge *m = run->streams;
	StreamHead *h;

	if (m == NULL || !m->by_value || m->out < 0)
		return false;
	h = &m->heads[m->out];
	for (int i = 0; i < run->out_desc->natts; i++)
	{
		AttrNumber	a = run->map ? run->map[i] : i + 1;

		values[i] = a > 0 ? h->values[a - 1] : (Datum) 0;
		isnull[i] = a > 0 ? h->isnull[a - 1] : true;
	}
	return true;
}

void
xxl_sort_streams_report(XxlSortRun *run)
{
	XxlStreamsMerge *m = run->streams;

	if (m->report != NULL)
		m->report(m->report_arg, run->op);
}
