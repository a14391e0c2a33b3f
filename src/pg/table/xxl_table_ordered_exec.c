/*
 * xxl_table_ordered_exec.c — the ordered scan's execution (which paths and
 * plans it takes: xxl_table_ordered.c): a cursor per visible segment that
 * was sorted by the planned key, read page by page; the rows of every other
 * visible segment (written before the key, under another key, or over the
 * cursor limit) go through an external sorter first and form one more
 * cursor.  The cursors merge in a binary heap on their current rows'
 * encoded keys (xxl_sortkey_encode, compared as the sorter compares them).
 * A single cursor is read straight, with no key encoded.  Deleted rows are
 * skipped as the sequential scan skips them.  Key bounds (the node's
 * private list: the key's text, the bounds' strategies; their values in
 * custom_exprs) start each sorted segment's cursor at the page a binary
 * search over the pages' first rows finds, and stop it at the first row
 * past the range.
 *
 * Rows carry their TIDs (sorted ones their position in the sorter's
 * record), so DELETE and UPDATE by key ranges, row locks and ctid use it
 * too.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"

#include "pg/table/xxl_table_nodes.h"
#include "pg/plan/plan.h"
#include "pg/runtime/runtime.h"
#include "pg/sort/sort.h"

/* Segments merged by cursors at most (each pins a buffer); the rest are sorted. */
#define MAX_CURSORS 256

typedef struct Cursor
{
	bool		from_sorter;
	/* a segment: its pages left, the current one pinned */
	BlockNumber next_block,
				end_block;
	uint32		segno;
	Buffer		buf;
	XxlRowRun	run;			/* the pinned page's rows */
	XxlPageBuf	pbuf;			/* where a packed page's are decoded */
	int			row,
				nrows;
	int			del_k,			/* deleted rows: as a sequential scan skips them */
				stop;
	XxlRowFormat fmt;
	MemoryContext cxt;			/* the current row's decoded values */
	/* the current row */
	const char *rowp;
	uint32		rowlen;
	const unsigned char *key;
	uint32		keylen;
	StringInfoData keybuf;
	bool		past_start;		/* bounds: a row at or after the start was seen */
	bool		scattered;		/* skip pages of other segments instead of failing */
	const bool *accept;			/* scattered: the segments taken (by number), or NULL */
	const XxlSegment *segs;		/* scattered: their entries (whose pages they are) */
	uint32		naccept;
} Cursor;

typedef struct OrderedScanState
{
	CustomScanState css;
	char	   *order_by;
	XxlSortKey *key;
	const xxl_key_compare *kc;
	bool		started;
	int			ncursors;
	Cursor	   *cursors;
	int		   *heap;			/* cursor numbers, smallest current key first */
	int			nheap;
	int			last;			/* the cursor whose row went out last, -1 */
	XxlDeleted	dels;			/* the deleted rows the snapshot sees */
	XxlOperator *op;
	xxl_sorter *sorter;
	MemoryContext rowcxt;		/* the output row's copies */
	XxlRowFormat full;			/* rows with every column (the sorter's) */
	StringInfoData packed;
	StringInfoData with_pos;	/* a sorter row: its position, then the packed row */
	Datum	   *values;
	bool	   *isnull;
	uint64		segments_merged;
	uint64		segments_sorted;
	uint64		rows_sorted;
	uint64		pages_read;

	/* bounds on the leading key column, in encoded-key order */
	List	   *bound_strategies;	/* of Integer: BT*StrategyNumber, column on the left */
	List	   *bound_states;	/* ExprState of each bound's value */
	XxlSortKey *key1;			/* the leading column alone */
	XxlSortItem *first;			/* its item and attribute (parsed once, not per rescan) */
	AttrNumber	first_attno;
	const xxl_key_compare *kc1;	/* key1's comparison (NULL: memcmp) */
	bool		empty;			/* a bound is NULL: no row qualifies */
	StringInfoData start;		/* rows before it are skipped (len 0: none) */
	StringInfoData stop;		/* rows after it end a cursor (len 0: none) */
	bool		has_start,
				has_stop;
} OrderedScanState;

static Node *create_ordered_state(CustomScan *cscan);
static void begin_ordered(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_ordered(CustomScanState *node);
static void end_ordered(CustomScanState *node);
static void rescan_ordered(CustomScanState *node);
static void explain_ordered(CustomScanState *node, List *ancestors, ExplainState *es);

const CustomScanMethods xxl_ordered_scan_methods = {
	.CustomName = XXL_ORDERED_SCAN_NAME,
	.CreateCustomScanState = create_ordered_state,
};

static const CustomExecMethods ordered_exec_methods = {
	.CustomName = XXL_ORDERED_SCAN_NAME,
	.BeginCustomScan = begin_ordered,
	.ExecCustomScan = exec_ordered,
	.EndCustomScan = end_ordered,
	.ReScanCustomScan = rescan_ordered,
	.ExplainCustomScan = explain_ordered,
};

/* The attribute an order key item names, or InvalidAttrNumber. */
AttrNumber
xxl_ordered_item_attno(TupleDesc desc, const XxlSortItem *item)
{
	int			visible = 0;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		visible++;
		if (item->colname ? strcmp(NameStr(att->attname), item->colname) == 0 :
			visible == item->position)
			return i + 1;
	}
	return InvalidAttrNumber;
}

/* Cursors ----------------------------------------------------------------------------- */

static Node *
create_ordered_state(CustomScan *cscan)
{
	OrderedScanState *st = palloc0(sizeof(OrderedScanState));

	NodeSetTag(st, T_CustomScanState);
	st->css.flags = cscan->flags;
	st->css.methods = &ordered_exec_methods;
	st->order_by = strVal(linitial(cscan->custom_private));
	st->bound_strategies = lsecond(cscan->custom_private);
	return (Node *) st;
}

static void
begin_ordered(CustomScanState *node, EState *estate, int eflags)
{
	OrderedScanState *st = (OrderedScanState *) node;
	TupleDesc	desc = RelationGetDescr(node->ss.ss_currentRelation);

	st->key = xxl_sortkey_create(desc, xxl_parse_order_by(st->order_by));
	st->kc = xxl_sortkey_compare(st->key);
	st->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "xxl ordered scan row",
									   ALLOCSET_SMALL_SIZES);
	st->values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	xxl_row_format_init(&st->full, desc, desc->natts);
	initStringInfo(&st->packed);
	initStringInfo(&st->with_pos);
	st->isnull = palloc(sizeof(bool) * Max(desc->natts, 1));
	st->last = -1;
	if (st->bound_strategies != NIL)
	{
		CustomScan *cscan = (CustomScan *) node->ss.ps.plan;

		st->first = linitial(xxl_parse_order_by(st->order_by));
		st->first_attno = xxl_ordered_item_attno(desc, st->first);
		st->key1 = xxl_sortkey_create(desc, list_make1(st->first));
		st->kc1 = xxl_sortkey_compare(st->key1);
		st->bound_states = ExecInitExprList(cscan->custom_exprs, &node->ss.ps);
		initStringInfo(&st->start);
		initStringInfo(&st->stop);
	}
}

/* Two encoded keys as the sorter orders them: by kc, or as bytes where it is NULL. */
static int
compare_encoded_by(const xxl_key_compare *kc, const unsigned char *a, uint32 alen,
				   const unsigned char *b, uint32 blen)
{
	int			c;

	if (kc != NULL)
		return xxl_key_compare_keys(kc, a, alen, b, blen);
	c = memcmp(a, b, Min(alen, blen));
	return c != 0 ? c : (alen > blen) - (alen < blen);
}

/* Encoded keys of the leading column, in the order its rows are stored. */
static int
compare_encoded(const OrderedScanState *st, const unsigned char *a, uint32 alen,
				const unsigned char *b, uint32 blen)
{
	return compare_encoded_by(st->kc1, a, alen, b, blen);
}

/*
 * The bounds' values, encoded by the leading column's key: the start is
 * the largest encoding a bound puts rows at or after, the stop the
 * smallest one they stay at or before (under DESC a lower bound on the
 * value limits how far the rows go, not where they start).
 */
static void
evaluate_bounds(OrderedScanState *st)
{
	TupleDesc	desc = RelationGetDescr(st->css.ss.ss_currentRelation);
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	XxlSortItem *first = st->first;
	AttrNumber	attno = st->first_attno;
	ListCell   *ls,
			   *le;

	st->has_start = st->has_stop = st->empty = false;
	if (st->key1 == NULL)
		return;					/* no bounds */
	resetStringInfo(&st->start);
	resetStringInfo(&st->stop);
	for (int i = 0; i < desc->natts; i++)
		st->isnull[i] = true;
	forboth(ls, st->bound_strategies, le, st->bound_states)
	{
		int			strategy = intVal(lfirst(ls));
		bool		isnull;
		Datum		v = ExecEvalExprSwitchContext(lfirst(le), econtext, &isnull);
		const unsigned char *enc;
		uint32		len;
		bool		lower = strategy == BTGreaterStrategyNumber ||
			strategy == BTGreaterEqualStrategyNumber;
		bool		upper = strategy == BTLessStrategyNumber ||
			strategy == BTLessEqualStrategyNumber;

		if (isnull)
		{
			st->empty = true;
			return;
		}
		st->values[attno - 1] = v;
		st->isnull[attno - 1] = false;
		enc = xxl_sortkey_encode(st->key1, st->values, st->isnull, &len);
		st->isnull[attno - 1] = true;
		if (strategy == BTEqualStrategyNumber)
			lower = upper = true;
		if (first->desc)
		{
			bool		t = lower;

			lower = upper;
			upper = t;
		}
		if (lower && (!st->has_start ||
					  compare_encoded(st, enc, len, (unsigned char *) st->start.data, st->start.len) > 0))
		{
			resetStringInfo(&st->start);
			appendBinaryStringInfo(&st->start, (const char *) enc, len);
			st->has_start = true;
		}
		if (upper && (!st->has_stop ||
					  compare_encoded(st, enc, len, (unsigned char *) st->stop.data, st->stop.len) < 0))
		{
			resetStringInfo(&st->stop);
			appendBinaryStringInfo(&st->stop, (const char *) enc, len);
			st->has_stop = true;
		}
	}
}

/* Where a packed row stands against the range: <0 before, 0 in, >0 after. */
static int
against_range(OrderedScanState *st, const XxlRowFormat *fmt, const char *row)
{
	const unsigned char *enc;
	uint32		len;

	xxl_row_unpack(fmt, row, st->values, st->isnull);
	enc = xxl_sortkey_encode(st->key1, st->values, st->isnull, &len);
	if (st->has_start && compare_encoded(st, enc, len, (unsigned char *) st->start.data, st->start.len) < 0)
		return -1;
	if (st->has_stop && compare_encoded(st, enc, len, (unsigned char *) st->stop.data, st->stop.len) > 0)
		return 1;
	return 0;
}

static int
compare_keys(const OrderedScanState *st, const Cursor *a, const Cursor *b)
{
	return compare_encoded_by(st->kc, a->key, a->keylen, b->key, b->keylen);
}

/* Whether cursor i's row sorts before cursor j's (ties: the lower cursor). */
static bool
before(const OrderedScanState *st, int i, int j)
{
	int			c = compare_keys(st, &st->cursors[i], &st->cursors[j]);

	return c < 0 || (c == 0 && i < j);
}

/* Move a segment cursor to its next row; false at its end. */
static bool
segment_next(OrderedScanState *st, Cursor *cur)
{
	Relation	rel = st->css.ss.ss_currentRelation;

	for (;;)
	{
		Page		page;
		XxlPageOpaque *op;

		if (BufferIsValid(cur->buf) && cur->row < cur->stop)
		{
			cur->rowp = xxl_run_row(&cur->run, cur->row++, &cur->rowlen);
			return true;
		}
		if (BufferIsValid(cur->buf) && cur->row < cur->nrows)
		{
			cur->row = xxl_deleted_skip(&st->dels, &cur->del_k,
										xxl_row_pos(BufferGetBlockNumber(cur->buf), 0),
										cur->row, cur->nrows, &cur->stop);
			continue;
		}
		if (BufferIsValid(cur->buf))
			ReleaseBuffer(cur->buf);
		cur->buf = InvalidBuffer;
		if (cur->next_block >= cur->end_block)
			return false;
		CHECK_FOR_INTERRUPTS();
		cur->buf = ReadBufferExtended(rel, MAIN_FORKNUM, cur->next_block++, RBM_NORMAL, NULL);
		st->pages_read++;
		LockBuffer(cur->buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(cur->buf);
		op = XXL_OPAQUE(page);
		if (cur->scattered &&
			!(xxl_page_is_data(page) && op->segno < cur->naccept && cur->accept[op->segno] &&
			  xxl_segment_holds(&cur->segs[op->segno], cur->next_block - 1)))
		{
			UnlockReleaseBuffer(cur->buf);
			cur->buf = InvalidBuffer;
			continue;
		}
		if (!cur->scattered && !(xxl_page_is_data(page) && op->segno == cur->segno))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("block %u of xxl table \"%s\" is not a page of segment %u",
							cur->next_block - 1, RelationGetRelationName(rel), cur->segno)));
		cur->nrows = op->nrows;
		cur->row = xxl_deleted_page_start(&st->dels, &cur->del_k,
										  xxl_row_pos(cur->next_block - 1, 0), cur->nrows,
										  &cur->stop);
		if (cur->fmt.natts != op->natts)
			xxl_row_format_init(&cur->fmt, RelationGetDescr(rel), op->natts);
		LockBuffer(cur->buf, BUFFER_LOCK_UNLOCK);
		xxl_page_open(page, &cur->pbuf, &cur->run);
	}
}

/* Move a cursor to its next row and, when it merges, encode that row's key. */
static bool
cursor_next(OrderedScanState *st, Cursor *cur)
{
	if (cur->from_sorter)
	{
		const void *key,
				   *row;
		int			got = xxl_sorter_next_var(st->sorter, &key, &cur->keylen, &row, &cur->rowlen);

		if (got < 0)
			xxl_raise_error(xxl_sorter_error(st->sorter), "xxl ordered scan");
		cur->key = key;
		cur->rowp = row;
		return got == 1;
	}
	for (;;)
	{
		MemoryContext old;
		int			where;

		if (!segment_next(st, cur))
			return false;
		if (!st->has_start && !st->has_stop)
			break;
		if (cur->past_start && !st->has_stop)
			break;
		old = MemoryContextSwitchTo(cur->cxt);
		MemoryContextReset(cur->cxt);
		where = against_range(st, &cur->fmt, cur->rowp);
		MemoryContextSwitchTo(old);
		if (where > 0)
		{
			/* past the range: this segment has nothing more */
			if (BufferIsValid(cur->buf))
				ReleaseBuffer(cur->buf);
			cur->buf = InvalidBuffer;
			cur->next_block = cur->end_block;
			return false;
		}
		if (where == 0)
		{
			cur->past_start = true;
			break;
		}
	}
	if (st->ncursors > 1)
	{
		MemoryContext old = MemoryContextSwitchTo(cur->cxt);
		const unsigned char *k;

		MemoryContextReset(cur->cxt);
		xxl_row_unpack(&cur->fmt, cur->rowp, st->values, st->isnull);
		k = xxl_sortkey_encode(st->key, st->values, st->isnull, &cur->keylen);
		resetStringInfo(&cur->keybuf);
		appendBinaryStringInfo(&cur->keybuf, (const char *) k, cur->keylen);
		cur->key = (const unsigned char *) cur->keybuf.data;
		MemoryContextSwitchTo(old);
	}
	return true;
}

/* The rows of the segments that do not merge as they are, through the sorter. */
static void
sort_rest(OrderedScanState *st, const XxlDirectory *dir, const bool *rest)
{
	Cursor		tmp;
	bool	   *scattered;
	BlockNumber scattered_from = InvalidBlockNumber;
	MemoryContext rowcxt = AllocSetContextCreate(CurrentMemoryContext, "xxl ordered scan sort",
												 ALLOCSET_SMALL_SIZES);

	st->op = xxl_operator_begin("table ordered scan");
	st->sorter = xxl_sort_new(st->op, 0, 0, st->kc);
	/*
	 * Contiguous segments one at a time; the scattered ones (rows written
	 * as they came) together, in one pass from the first of their pages.
	 */
	scattered = palloc0(sizeof(bool) * Max(dir->nsegments, 1));
	for (uint32 s = 0; s <= dir->nsegments; s++)
	{
		if (s < dir->nsegments)
		{
			if (!rest[s])
				continue;
			st->segments_sorted++;
			if (dir->segs[s].flags & XXL_SEG_SCATTERED)
			{
				scattered[s] = true;
				scattered_from = Min(scattered_from, dir->segs[s].first_block);
				continue;
			}
		}
		memset(&tmp, 0, sizeof(tmp));
		tmp.buf = InvalidBuffer;
		if (s < dir->nsegments)
		{
			tmp.segno = s;
			tmp.next_block = dir->segs[s].first_block;
			tmp.end_block = dir->segs[s].first_block + dir->segs[s].npages;
		}
		else if (scattered_from != InvalidBlockNumber)
		{
			tmp.scattered = true;
			tmp.accept = scattered;
			tmp.segs = dir->segs;
			tmp.naccept = dir->nsegments;
			tmp.next_block = scattered_from;
			tmp.end_block = RelationGetNumberOfBlocks(st->css.ss.ss_currentRelation);
		}
		else
			break;
		while (segment_next(st, &tmp))
		{
			MemoryContext old = MemoryContextSwitchTo(rowcxt);
			const unsigned char *k;
			uint32		klen,
						len;
			uint64		pos;

			if ((st->has_start || st->has_stop) && against_range(st, &tmp.fmt, tmp.rowp) != 0)
			{
				MemoryContextSwitchTo(old);
				MemoryContextReset(rowcxt);
				continue;
			}
			/* repacked with every column: pages written before a column was added lack it */
			xxl_row_unpack(&tmp.fmt, tmp.rowp, st->values, st->isnull);
			k = xxl_sortkey_encode(st->key, st->values, st->isnull, &klen);
			len = xxl_row_pack(&st->full, st->values, st->isnull, &st->packed, NULL);
			/* the row's position first: its TID for DML and row locks */
			pos = xxl_row_pos(BufferGetBlockNumber(tmp.buf), tmp.row - 1);
			resetStringInfo(&st->with_pos);
			appendBinaryStringInfo(&st->with_pos, (const char *) &pos, sizeof(pos));
			appendBinaryStringInfo(&st->with_pos, st->packed.data, len);
			if (xxl_sorter_put_var(st->sorter, k, klen, st->with_pos.data, st->with_pos.len) != XXL_OK)
				xxl_raise_error(xxl_sorter_error(st->sorter), "xxl ordered scan");
			st->rows_sorted++;
			MemoryContextSwitchTo(old);
			MemoryContextReset(rowcxt);
		}
		xxl_page_buf_free(&tmp.pbuf);
	}
	pfree(scattered);
	MemoryContextDelete(rowcxt);
	st->op->rows_in = st->rows_sorted;
	xxl_operator_phase(st->op, XXL_PHASE_MERGE);
	if (xxl_sorter_sort(st->sorter) != XXL_OK)
		xxl_raise_error(xxl_sorter_error(st->sorter), "xxl ordered scan");
	xxl_operator_phase(st->op, XXL_PHASE_OUTPUT);
}

/*
 * A sorted segment's first page that can hold rows of the range: the last
 * page whose first row is before the start (binary search over the pages'
 * first rows), or its first page.
 */
static BlockNumber
first_page_in_range(OrderedScanState *st, const XxlSegment *seg, uint32 segno)
{
	Relation	rel = st->css.ss.ss_currentRelation;
	BlockNumber lo = seg->first_block,
				hi = seg->first_block + seg->npages;	/* [lo, hi): candidates after lo */
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "xxl range search",
											  ALLOCSET_SMALL_SIZES);

	while (hi - lo > 1)
	{
		BlockNumber mid = lo + (hi - lo) / 2;
		Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, mid, RBM_NORMAL, NULL);
		Page		page;
		XxlRowFormat fmt;
		XxlPageBuf	pbuf;
		uint32		len;
		int			where;
		MemoryContext old;

		st->pages_read++;
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (XXL_OPAQUE(page)->segno != segno || XXL_OPAQUE(page)->nrows == 0)
			elog(ERROR, "block %u of xxl table \"%s\" is not a page of segment %u",
				 mid, RelationGetRelationName(rel), segno);
		xxl_row_format_init(&fmt, RelationGetDescr(rel), XXL_OPAQUE(page)->natts);
		old = MemoryContextSwitchTo(cxt);
		xxl_page_buf_init(&pbuf, cxt);
		where = against_range(st, &fmt, xxl_page_row_at(page, 0, &pbuf, &len));
		MemoryContextSwitchTo(old);
		MemoryContextReset(cxt);
		UnlockReleaseBuffer(buf);
		if (where < 0)
			lo = mid;
		else
			hi = mid;
	}
	MemoryContextDelete(cxt);
	return lo;
}

static void
sift_down(OrderedScanState *st, int i)
{
	for (;;)
	{
		int			l = 2 * i + 1,
					r = l + 1,
					m = i;
		int			t;

		if (l < st->nheap && before(st, st->heap[l], st->heap[m]))
			m = l;
		if (r < st->nheap && before(st, st->heap[r], st->heap[m]))
			m = r;
		if (m == i)
			return;
		t = st->heap[i];
		st->heap[i] = st->heap[m];
		st->heap[m] = t;
		i = m;
	}
}

static void
start(OrderedScanState *st)
{
	Relation	rel = st->css.ss.ss_currentRelation;
	Snapshot	snapshot = st->css.ss.ps.state->es_snapshot;
	uint32		key_hash = xxl_key_hash(RelationGetDescr(rel), st->order_by);
	XxlDirectory dir;
	bool	   *rest;
	int			nsorted = 0;
	bool		any_rest = false;

	evaluate_bounds(st);
	xxl_dir_load(rel, &dir);
	if (st->empty)
		dir.nsegments = 0;
	xxl_deleted_load(rel, &dir, XXL_DELS_SNAPSHOT, snapshot, &st->dels);
	rest = palloc0(sizeof(bool) * Max(dir.nsegments, 1));
	st->cursors = palloc0(sizeof(Cursor) * (Min(dir.nsegments, MAX_CURSORS) + 1));
	for (uint32 s = 0; s < dir.nsegments; s++)
	{
		const XxlSegment *seg = &dir.segs[s];

		if (seg->nrows == 0 || (seg->flags & XXL_SEG_DELETES) ||
			!xxl_segment_visible(seg, snapshot))
			continue;
		if ((seg->flags & XXL_SEG_SORTED) && seg->key_hash == key_hash && nsorted < MAX_CURSORS)
		{
			Cursor	   *cur = &st->cursors[nsorted++];

			cur->segno = s;
			cur->next_block = st->has_start ? first_page_in_range(st, seg, s) : seg->first_block;
			cur->end_block = seg->first_block + seg->npages;
			cur->buf = InvalidBuffer;
			xxl_page_buf_init(&cur->pbuf, CurrentMemoryContext);
			cur->cxt = AllocSetContextCreate(CurrentMemoryContext, "xxl ordered scan cursor",
											 ALLOCSET_SMALL_SIZES);
			initStringInfo(&cur->keybuf);
		}
		else
			rest[s] = any_rest = true;
	}
	st->segments_merged = nsorted;
	st->ncursors = nsorted + (any_rest ? 1 : 0);
	if (any_rest)
	{
		sort_rest(st, &dir, rest);
		st->cursors[nsorted].from_sorter = true;
	}
	st->heap = palloc(sizeof(int) * Max(st->ncursors, 1));
	st->nheap = 0;
	for (int i = 0; i < st->ncursors; i++)
		if (cursor_next(st, &st->cursors[i]))
			st->heap[st->nheap++] = i;
	for (int i = st->nheap / 2 - 1; i >= 0; i--)
		sift_down(st, i);
	st->last = -1;
	st->started = true;
	pfree(rest);
	if (dir.segs)
		pfree(dir.segs);
}

/* The next row in key order into the scan slot, or an empty slot. */
static TupleTableSlot *
ordered_next(ScanState *ss)
{
	OrderedScanState *st = (OrderedScanState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	Cursor	   *cur;

	if (!st->started)
		start(st);
	/* the cursor whose row went out last moves on now: that row is no longer needed */
	if (st->last >= 0)
	{
		if (!cursor_next(st, &st->cursors[st->last]))
			st->heap[0] = st->heap[--st->nheap];
		if (st->nheap > 0)
			sift_down(st, 0);
		st->last = -1;
	}
	ExecClearTuple(slot);
	if (st->nheap == 0)
		return slot;
	st->last = st->heap[0];
	cur = &st->cursors[st->last];
	MemoryContextReset(st->rowcxt);
	{
		MemoryContext old = MemoryContextSwitchTo(st->rowcxt);
		uint64		pos;

		if (cur->from_sorter)
		{
			memcpy(&pos, cur->rowp, sizeof(pos));
			xxl_row_unpack(&st->full, cur->rowp + sizeof(pos), slot->tts_values, slot->tts_isnull);
		}
		else
		{
			pos = xxl_row_pos(BufferGetBlockNumber(cur->buf), cur->row - 1);
			xxl_row_unpack(&cur->fmt, cur->rowp, slot->tts_values, slot->tts_isnull);
		}
		MemoryContextSwitchTo(old);
		ExecStoreVirtualTuple(slot);
		xxl_tid_set(&slot->tts_tid, (BlockNumber) (pos / XXL_PAGE_ROWS), (int) (pos % XXL_PAGE_ROWS));
	}
	slot->tts_tableOid = RelationGetRelid(ss->ss_currentRelation);
	return slot;
}

static bool
ordered_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
exec_ordered(CustomScanState *node)
{
	return ExecScan(&node->ss, ordered_next, ordered_recheck);
}

static void
release(OrderedScanState *st)
{
	for (int i = 0; i < st->ncursors; i++)
	{
		Cursor	   *cur = &st->cursors[i];

		if (BufferIsValid(cur->buf))
			ReleaseBuffer(cur->buf);
		cur->buf = InvalidBuffer;
		if (cur->cxt)
			MemoryContextDelete(cur->cxt);
		cur->cxt = NULL;
		xxl_page_buf_free(&cur->pbuf);
	}
	if (st->op != NULL)
	{
		st->op->rows_out = st->rows_sorted;
		xxl_operator_end(st->op);
	}
	st->op = NULL;
	st->sorter = NULL;
	xxl_deleted_free(&st->dels);
	st->ncursors = st->nheap = 0;
	st->started = false;
}

static void
end_ordered(CustomScanState *node)
{
	release((OrderedScanState *) node);
}

static void
rescan_ordered(CustomScanState *node)
{
	OrderedScanState *st = (OrderedScanState *) node;

	release(st);
	st->segments_merged = st->segments_sorted = st->rows_sorted = st->pages_read = 0;
}

static void
explain_ordered(CustomScanState *node, List *ancestors, ExplainState *es)
{
	OrderedScanState *st = (OrderedScanState *) node;

	ExplainPropertyText("Order Key", st->order_by, es);
	if (st->bound_strategies != NIL)
		ExplainPropertyInteger("Key Bounds", NULL, list_length(st->bound_strategies), es);
	if (es->analyze)
	{
		ExplainPropertyUInteger("Segments Merged", NULL, st->segments_merged, es);
		ExplainPropertyUInteger("Segments Sorted", NULL, st->segments_sorted, es);
		ExplainPropertyUInteger("Rows Sorted", NULL, st->rows_sorted, es);
		ExplainPropertyUInteger("Pages Read", NULL, st->pages_read, es);
	}
}
