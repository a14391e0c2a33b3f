/*
 * xxl_table_scan.c — reading an xxl table: sequential and parallel scans
 * (page by page, each page's segment looked up in a copy of the directory
 * made when the scan starts), ANALYZE's sampling, fetching one row by TID
 * and the visibility questions the executor asks about a row.
 *
 * Rows that delete segments name (xxl_table_delete.c) are skipped: a scan
 * reads the runs of deleted rows its snapshot sees when it starts, and
 * returns the rows of a page between them without a check per row.
 *
 * A row's TID names its page and index (xxl_tid_set).  Rows are decoded into
 * virtual slots; their by-reference values point into the pinned page
 * where alignment allows (pages never change once written), so the page
 * stays pinned until the scan moves on.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "pg/table/xxl_table_storage.h"

typedef enum XxlVisibility
{
	VIS_SNAPSHOT,				/* as the scan's snapshot says */
	VIS_COMMITTED,				/* committed or this transaction's (ANALYZE, rewrites) */
	VIS_ANY,					/* as VIS_COMMITTED, deleted rows too (index builds) */
	VIS_NONE					/* decided by the caller, for the one segment it reads */
} XxlVisibility;

typedef struct XxlScanDescData
{
	TableScanDescData base;
	XxlDirectory dir;
	bool	   *visible;		/* per segment */
	XxlDeleted	dels;			/* the deleted rows it skips */
	int			del_k;			/* the first run that ends after the current page's start */
	int			stop;			/* the current page's rows [row, stop) are not deleted */
	TupleDesc	desc;			/* the row type rows are decoded by (see use_slot_desc) */
	XxlRowFormat fmt;
	BlockNumber nblocks;
	BlockNumber next_block;
	Buffer		buf;			/* the page being read, pinned */
	BlockNumber block;
	XxlRowRun	run;			/* its rows, once opened (open_page) */
	bool		opened;
	XxlPageBuf	pbuf;			/* where a packed page's rows are decoded */
	Oid			relid;
	int			row;
	int			nrows;
	/*
	 * The current page's rows when every column is 8 bytes by value and
	 * at most 8 (the fact and edge rows): row i at rows8 + i * width8,
	 * a null byte then the values.  NULL otherwise.
	 */
	const char *rows8;
	int			width8;
	/* xxl_scan_next_columns: a whole row of another layout, unpacked */
	Datum	   *all_values;
	bool	   *all_isnull;
	/*
	 * xxl_scan_next_columns: the columns it asks for, and, on a packed
	 * page whose columns those are all bit-packed integers, their values
	 * decoded column by column (col_page), no rows formed.
	 */
	AttrNumber *want_cols;
	int			want_n;
	Datum	   *col_values;
	bool	   *col_nulls;
	bool		col_page;
	/* xxl_scan_set_ranges: packed pages outside them are skipped */
	XxlColumnRange *ranges;
	int			nranges;		/* -1: every page */
	uint64		pages_skipped;
	BufferAccessStrategy strategy;
	MemoryContext rowcxt;
	bool		parallel_started;
	ParallelBlockTableScanWorkerData pwork;
	/* bitmap scans: the rows of the current page to return (-1: all) */
	OffsetNumber bm_offsets[MaxHeapTuplesPerPage];
	int			bm_first,		/* the slice's first row */
				bm_count,
				bm_next;
} XxlScanDescData;

typedef XxlScanDescData *XxlScanDesc;

static void
decide_visibility(XxlScanDesc scan, XxlVisibility how)
{
	scan->visible = palloc0(sizeof(bool) * Max(scan->dir.nsegments, 1));
	for (uint32 s = 0; how != VIS_NONE && s < scan->dir.nsegments; s++)
		scan->visible[s] = how == VIS_SNAPSHOT ?
			xxl_segment_visible(&scan->dir.segs[s], scan->base.rs_snapshot) :
			xxl_segment_committed(&scan->dir.segs[s]);
	/* (SnapshotAny sees deleted rows: RETURNING, row triggers, row locks fetch them) */
	xxl_deleted_load(scan->base.rs_rd, &scan->dir,
					 how == VIS_SNAPSHOT ? XXL_DELS_SNAPSHOT :
					 how == VIS_COMMITTED ? XXL_DELS_COMMITTED :
					 how == VIS_ANY || scan->base.rs_snapshot->snapshot_type == SNAPSHOT_ANY ?
					 XXL_DELS_NONE : XXL_DELS_LIVE,
					 scan->base.rs_snapshot, &scan->dels);
}

static XxlScanDesc
scan_make(Relation rel, Snapshot snapshot, int nkeys, struct ScanKeyData *key,
		  ParallelTableScanDesc pscan, uint32 flags, XxlVisibility how)
{
	XxlScanDesc scan = palloc0(sizeof(XxlScanDescData));

	RelationIncrementReferenceCount(rel);
	scan->base.rs_rd = rel;
	scan->base.rs_snapshot = snapshot;
	scan->base.rs_nkeys = nkeys;
	scan->base.rs_key = key;
	scan->base.rs_flags = flags;
	scan->base.rs_parallel = pscan;
	scan->relid = RelationGetRelid(rel);
	xxl_dir_load(rel, &scan->dir);
	decide_visibility(scan, how);
	scan->desc = RelationGetDescr(rel);
	xxl_row_format_init(&scan->fmt, scan->desc, scan->desc->natts);
	scan->nblocks = RelationGetNumberOfBlocks(rel);
	scan->next_block = XXL_META_BLOCK + 1;
	scan->buf = InvalidBuffer;
	if (flags & SO_TYPE_SEQSCAN)
		scan->strategy = GetAccessStrategy(BAS_BULKREAD);
	scan->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "xxl scan row",
										 ALLOCSET_SMALL_SIZES);
	xxl_page_buf_init(&scan->pbuf, CurrentMemoryContext);
	return scan;
}

TableScanDesc
xxl_scan_begin(Relation rel, Snapshot snapshot, int nkeys, struct ScanKeyData *key,
			   ParallelTableScanDesc pscan, uint32 flags)
{
	/*
	 * SnapshotAny (index builds): rows of committed segments, not of aborted
	 * ones, deleted or not (a snapshot older than the delete may use the
	 * index); ANALYZE: deleted rows are dead ones.
	 */
	XxlVisibility how = (flags & SO_TYPE_ANALYZE) ? VIS_COMMITTED :
		snapshot == NULL || snapshot->snapshot_type == SNAPSHOT_ANY ? VIS_ANY : VIS_SNAPSHOT;

	return (TableScanDesc) scan_make(rel, snapshot, nkeys, key, pscan, flags, how);
}

static void
drop_page(XxlScanDesc scan)
{
	if (BufferIsValid(scan->buf))
		ReleaseBuffer(scan->buf);
	scan->buf = InvalidBuffer;
	scan->row = scan->nrows = 0;
	scan->rows8 = NULL;
	scan->opened = false;
	scan->col_page = false;
}

void
xxl_scan_end(TableScanDesc sscan)
{
	XxlScanDesc scan = (XxlScanDesc) sscan;

	drop_page(scan);
	if (scan->strategy)
		FreeAccessStrategy(scan->strategy);
	MemoryContextDelete(scan->rowcxt);
	xxl_page_buf_free(&scan->pbuf);
	RelationDecrementReferenceCount(scan->base.rs_rd);
	if (scan->base.rs_flags & SO_TEMP_SNAPSHOT)
		UnregisterSnapshot(scan->base.rs_snapshot);
	if (scan->dir.segs)
		pfree(scan->dir.segs);
	pfree(scan->visible);
	xxl_deleted_free(&scan->dels);
	pfree(scan);
}

void
xxl_scan_rescan(TableScanDesc sscan, struct ScanKeyData *key, bool set_params,
				bool allow_strat, bool allow_sync, bool allow_pagemode)
{
	XxlScanDesc scan = (XxlScanDesc) sscan;

	drop_page(scan);
	scan->next_block = XXL_META_BLOCK + 1;
	scan->parallel_started = false;
}

/* The next block to read, or InvalidBlockNumber at the end. */
static BlockNumber
next_block(XxlScanDesc scan)
{
	Relation	rel = scan->base.rs_rd;
	ParallelBlockTableScanDesc pbscan = (ParallelBlockTableScanDesc) scan->base.rs_parallel;

	if (pbscan == NULL)
		return scan->next_block < scan->nblocks ? scan->next_block++ : InvalidBlockNumber;
	if (!scan->parallel_started)
	{
		table_block_parallelscan_startblock_init(rel, &scan->pwork, pbscan);
		scan->parallel_started = true;
	}
	return table_block_parallelscan_nextpage(rel, &scan->pwork, pbscan);
}

/*
 * Pin block and make it the current page if it is a data page of a segment
 * the scan sees (all_rows: of any segment, for ANALYZE's dead rows);
 * returns its segment or -1.
 */
static int64
take_page(XxlScanDesc scan, BlockNumber block, BufferAccessStrategy strategy)
{
	Buffer		buf = ReadBufferExtended(scan->base.rs_rd, MAIN_FORKNUM, block, RBM_NORMAL,
										 strategy);
	Page		page;
	XxlPageOpaque *op;
	int64		segno = -1;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	op = XXL_OPAQUE(page);
	if (xxl_page_is_data(page) && op->segno < scan->dir.nsegments &&
		xxl_segment_holds(&scan->dir.segs[op->segno], block))
	{
		segno = op->segno;
		scan->nrows = op->nrows;
		/* rows written before columns were added have fewer */
		if (op->natts != scan->fmt.natts)
			xxl_row_format_init(&scan->fmt, scan->desc, op->natts);
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	if (segno < 0)
	{
		ReleaseBuffer(buf);
		return -1;
	}
	scan->buf = buf;
	scan->block = block;
	scan->rows8 = NULL;
	scan->opened = false;
	scan->col_page = false;
	scan->row = xxl_deleted_page_start(&scan->dels, &scan->del_k, xxl_row_pos(block, 0),
									   scan->nrows, &scan->stop);
	return segno;
}

/*
 * The current page's rows made readable: a plain page's where they lie, a
 * packed page's decoded (only once the scan knows it reads the page).
 */
static void
open_page(XxlScanDesc scan)
{
	if (scan->opened)
		return;
	scan->opened = true;
	if (scan->want_cols &&
		xxl_packed_columns(BufferGetPage(scan->buf), scan->want_cols, scan->want_n,
						   scan->col_values, scan->col_nulls))
	{
		scan->col_page = true;
		return;
	}
	xxl_page_open(BufferGetPage(scan->buf), &scan->pbuf, &scan->run);
	if (scan->fmt.all8 && scan->fmt.natts <= 8 && scan->fmt.bitmap_bytes == 1 &&
		scan->run.row_width == 1 + scan->fmt.natts * sizeof(Datum))
	{
		scan->rows8 = scan->run.rows;
		scan->width8 = scan->run.row_width;
	}
}

/*
 * Row i of the current page's 8-byte rows (rows8) as the columns cols
 * (attribute numbers; NULL: every column in order) into values and
 * isnull; false when the page has another layout or the row has a NULL.
 * Everything it needs was looked up when the page was taken: finding the
 * page and its layout again for every row was a third of a full scan's
 * own time.
 */
static pg_attribute_always_inline bool
fetch_row8(XxlScanDesc scan, int i, const AttrNumber *cols, int ncols, Datum *values,
		   bool *isnull)
{
	const char *row;

	if (scan->rows8 == NULL)
		return false;
	row = scan->rows8 + i * scan->width8;
	if (row[0] != 0)
		return false;
	/* (a value at a time: a copy of a variable length was a call) */
	for (int c = 0; c < ncols; c++)
	{
		memcpy(&values[c], row + 1 + (cols ? cols[c] - 1 : c) * sizeof(Datum), sizeof(Datum));
		isnull[c] = false;
	}
	return true;
}

/* Row i of the current page by the general unpack (by-reference values valid until the next row). */
static void
unpack_row(XxlScanDesc scan, int i, Datum *values, bool *isnull)
{
	uint32		len;
	const char *row = xxl_run_row(&scan->run, i, &len);

	if (scan->fmt.may_alloc)
	{
		MemoryContext old;

		MemoryContextReset(scan->rowcxt);
		old = MemoryContextSwitchTo(scan->rowcxt);
		xxl_row_unpack(&scan->fmt, row, values, isnull);
		MemoryContextSwitchTo(old);
	}
	else
		xxl_row_unpack(&scan->fmt, row, values, isnull);
}

/* Row i of the current page into slot. */
static pg_attribute_always_inline void
store_row(XxlScanDesc scan, int i, TupleTableSlot *slot)
{
	/*
	 * Rows of by-value columns go straight into a virtual slot that holds
	 * nothing of its own: what ExecClearTuple and ExecStoreVirtualTuple
	 * would do, without their calls (a quarter of a full scan's time).
	 */
	if (scan->fmt.byval && slot->tts_ops == &TTSOpsVirtual &&
		!(slot->tts_flags & TTS_FLAG_SHOULDFREE))
	{
		if (!fetch_row8(scan, i, NULL, scan->fmt.natts, slot->tts_values, slot->tts_isnull))
		{
			uint32		len;

			xxl_row_unpack_byval(&scan->fmt, xxl_run_row(&scan->run, i, &len),
								 slot->tts_values, slot->tts_isnull);
		}
		slot->tts_flags &= ~TTS_FLAG_EMPTY;
		slot->tts_nvalid = scan->fmt.natts;
		xxl_tid_set(&slot->tts_tid, scan->block, i);
		slot->tts_tableOid = scan->relid;
		return;
	}
	ExecClearTuple(slot);
	unpack_row(scan, i, slot->tts_values, slot->tts_isnull);
	ExecStoreVirtualTuple(slot);
	xxl_tid_set(&slot->tts_tid, scan->block, i);
	slot->tts_tableOid = scan->relid;
}

/* Whether the current page holds no row within the scan's ranges (as its packing tells). */
static bool
outside_ranges(XxlScanDesc scan)
{
	Page		page = BufferGetPage(scan->buf);
	XxlPageOpaque *op = XXL_OPAQUE(page);

	if (scan->nranges < 0)
		return true;
	if (op->kind != XXL_PAGE_PACKED)
		return false;
	for (int k = 0; k < scan->nranges; k++)
	{
		const XxlColumnRange *r = &scan->ranges[k];
		const XxlPackedCol *pc;

		/* a column added after the page: its rows hold the default, not known here */
		if (r->attno > op->natts)
			continue;
		pc = (const XxlPackedCol *) ((const char *) page + SizeOfPageHeaderData) + (r->attno - 1);
		if (pc->enc == XXL_PACKED_RAW)
			continue;
		/* (every row NULL: min > max, outside any range) */
		if (pc->max < r->lo || pc->min > r->hi || pc->min > pc->max)
			return true;
	}
	return false;
}

void
xxl_scan_set_ranges(TableScanDesc sscan, const XxlColumnRange *ranges, int n)
{
	XxlScanDesc scan = (XxlScanDesc) sscan;

	if (scan->ranges)
		pfree(scan->ranges);
	scan->ranges = NULL;
	scan->nranges = n;
	if (n > 0)
	{
		scan->ranges = MemoryContextAlloc(GetMemoryChunkContext(scan), sizeof(XxlColumnRange) * n);
		memcpy(scan->ranges, ranges, sizeof(XxlColumnRange) * n);
	}
}

uint64
xxl_scan_pages_skipped(TableScanDesc sscan)
{
	return ((XxlScanDesc) sscan)->pages_skipped;
}

/*
 * Row i of the current page into slot, decoded alone when the page is
 * packed (a few rows of it wanted: fetches, sparse bitmaps); valid until
 * the next row.
 */
static void
store_one(XxlScanDesc scan, int i, TupleTableSlot *slot)
{
	uint32		len;

	xxl_slot_store_row(slot, &scan->fmt,
					   xxl_page_row_at(BufferGetPage(scan->buf), i, &scan->pbuf, &len),
					   scan->rowcxt);
	xxl_tid_set(&slot->tts_tid, scan->block, i);
	slot->tts_tableOid = scan->relid;
}

/*
 * Move the scan to its next rows: [row, stop) of the pinned page, past runs
 * of deleted rows and the pages it does not see; false at the end.
 */
static bool
next_rows(XxlScanDesc scan)
{
	for (;;)
	{
		BlockNumber block;
		int64		segno;

		if (BufferIsValid(scan->buf))
		{
			if (scan->row < scan->stop)
				return true;
			if (scan->row < scan->nrows)
			{
				/* a run of deleted rows */
				scan->row = xxl_deleted_skip(&scan->dels, &scan->del_k,
											 xxl_row_pos(scan->block, 0), scan->row,
											 scan->nrows, &scan->stop);
				continue;
			}
		}
		drop_page(scan);
		CHECK_FOR_INTERRUPTS();
		block = next_block(scan);
		if (block == InvalidBlockNumber)
			return false;
		segno = take_page(scan, block, scan->strategy);
		if (segno >= 0 && !scan->visible[segno])
			drop_page(scan);
		else if (segno >= 0 && scan->nranges != 0 && outside_ranges(scan))
		{
			scan->pages_skipped++;
			drop_page(scan);
		}
		else if (segno >= 0)
			open_page(scan);
	}
}

/*
 * Rows are decoded by the row type of the slot they go into.  It is the
 * relation's, except in ALTER TABLE's rewrite: the old relation is read
 * into slots of its old row type while the relation's descriptor already
 * has the new one (a retyped column, a column added with a volatile
 * default), and decoding by that would read the old bytes as new types.
 */
static pg_noinline void
use_slot_desc(XxlScanDesc scan, TupleDesc desc)
{
	scan->desc = desc;
	xxl_row_format_init(&scan->fmt, desc, BufferIsValid(scan->buf) ? scan->fmt.natts : desc->natts);
}

bool
xxl_scan_getnextslot(TableScanDesc sscan, ScanDirection direction, TupleTableSlot *slot)
{
	XxlScanDesc scan = (XxlScanDesc) sscan;

	if (unlikely(slot->tts_tupleDescriptor != scan->desc))
		use_slot_desc(scan, slot->tts_tupleDescriptor);

	/* (the rows of a page between deleted runs go out with no more than this test) */
	if ((BufferIsValid(scan->buf) && scan->row < scan->stop) || next_rows(scan))
	{
		store_row(scan, scan->row++, slot);
		return true;
	}
	ExecClearTuple(slot);
	return false;
}

bool
xxl_scan_next_run(TableScanDesc sscan, XxlRowRun *run)
{
	XxlScanDesc scan = (XxlScanDesc) sscan;

	if (!next_rows(scan))
		return false;
	*run = scan->run;
	run->first = scan->row;
	run->n = scan->stop - scan->row;
	run->fmt = &scan->fmt;
	scan->row = scan->stop;
	return true;
}

/* The columns a scan reads by xxl_scan_next_columns: packed pages are decoded for them alone. */
static pg_noinline void
want_columns(XxlScanDesc scan, const AttrNumber *cols, int ncols)
{
	MemoryContext cxt = GetMemoryChunkContext(scan);

	scan->want_cols = MemoryContextAlloc(cxt, sizeof(AttrNumber) * Max(ncols, 1));
	memcpy(scan->want_cols, cols, sizeof(AttrNumber) * ncols);
	scan->want_n = ncols;
	scan->col_values = MemoryContextAlloc(cxt, sizeof(Datum) * XXL_PAGE_ROWS * Max(ncols, 1));
	scan->col_nulls = MemoryContextAlloc(cxt, sizeof(bool) * XXL_PAGE_ROWS * Max(ncols, 1));
}

bool
xxl_scan_next_columns(TableScanDesc sscan, const AttrNumber *cols, int ncols, Datum *values,
					  bool *isnull, ItemPointer tid)
{
	XxlScanDesc scan = (XxlScanDesc) sscan;
	int			i;

	if (unlikely(scan->want_cols == NULL))
		want_columns(scan, cols, ncols);
	if (!((BufferIsValid(scan->buf) && scan->row < scan->stop) || next_rows(scan)))
		return false;
	i = scan->row++;
	xxl_tid_set(tid, scan->block, i);
	if (scan->col_page)
	{
		for (int k = 0; k < ncols; k++)
		{
			values[k] = scan->col_values[k * XXL_PAGE_ROWS + i];
			isnull[k] = scan->col_nulls[k * XXL_PAGE_ROWS + i];
		}
		return true;
	}
	if (fetch_row8(scan, i, cols, ncols, values, isnull))
		return true;
	/* the whole row, then the columns asked for */
	if (scan->all_values == NULL)
	{
		int			natts = RelationGetDescr(scan->base.rs_rd)->natts;

		scan->all_values = MemoryContextAlloc(GetMemoryChunkContext(scan), natts * sizeof(Datum));
		scan->all_isnull = MemoryContextAlloc(GetMemoryChunkContext(scan), natts * sizeof(bool));
	}
	unpack_row(scan, i, scan->all_values, scan->all_isnull);
	for (int c = 0; c < ncols; c++)
	{
		values[c] = scan->all_values[cols[c] - 1];
		isnull[c] = scan->all_isnull[cols[c] - 1];
	}
	return true;
}

bool
xxl_scan_next_column_run(TableScanDesc sscan, const AttrNumber *cols, int ncols,
						 Datum **values, bool **isnull, int *first, int *n)
{
	XxlScanDesc scan = (XxlScanDesc) sscan;
	int			i;
	ItemPointerData tid;

	if (unlikely(scan->want_cols == NULL))
		want_columns(scan, cols, ncols);
	if (!((BufferIsValid(scan->buf) && scan->row < scan->stop) || next_rows(scan)))
		return false;
	*values = scan->col_values;
	*isnull = scan->col_nulls;
	*first = scan->row;
	*n = scan->stop - scan->row;
	if (!scan->col_page)
	{
		/* rows of a plain page, into the same arrays, by the row path */
		for (i = scan->row; i < scan->stop; i++)
		{
			Datum		v[XXL_BYVAL_MAX_COLS];
			bool		nl[XXL_BYVAL_MAX_COLS];

			Assert(ncols <= XXL_BYVAL_MAX_COLS);
			scan->row = i;
			(void) xxl_scan_next_columns(sscan, cols, ncols, v, nl, &tid);
			for (int k = 0; k < ncols; k++)
			{
				scan->col_values[k * XXL_PAGE_ROWS + i] = v[k];
				scan->col_nulls[k * XXL_PAGE_ROWS + i] = nl[k];
			}
		}
	}
	scan->row = scan->stop;
	return true;
}

/* Bitmap scans ---------------------------------------------------------------------- */

/* Whether row of the current page is one of the deleted rows the scan skips. */
static inline bool
deleted(XxlScanDesc scan, int row)
{
	return scan->dels.nruns > 0 &&
		xxl_deleted_find(&scan->dels, xxl_row_pos(scan->block, row)) >= 0;
}

bool
xxl_scan_bitmap_next_block(TableScanDesc sscan, TBMIterateResult *tbmres)
{
	XxlScanDesc scan = (XxlScanDesc) sscan;
	BlockNumber block = tbmres->blockno / XXL_TID_SLICES;
	int			first = (tbmres->blockno % XXL_TID_SLICES) * XXL_TID_ROWS;
	int64		segno;

	/* a slice of the page just read: no new pin */
	if (!BufferIsValid(scan->buf) || scan->block != block)
	{
		drop_page(scan);
		if (block == XXL_META_BLOCK || block >= scan->nblocks)
			return false;
		segno = take_page(scan, block, NULL);
		if (segno < 0 || !scan->visible[segno])
		{
			drop_page(scan);
			return false;
		}
		/* a few rows of a packed page: each decoded alone (store_one), not the page */
		if (!(XXL_OPAQUE(BufferGetPage(scan->buf))->kind == XXL_PAGE_PACKED &&
			  tbmres->ntuples >= 0 && tbmres->ntuples * 16 < scan->nrows))
			open_page(scan);
	}
	else if (!scan->opened && tbmres->ntuples < 0)
		open_page(scan);
	scan->bm_first = first;
	scan->row = first;
	scan->bm_next = 0;
	if (tbmres->ntuples >= 0)
	{
		scan->bm_count = tbmres->ntuples;
		memcpy(scan->bm_offsets, tbmres->offsets, sizeof(OffsetNumber) * tbmres->ntuples);
	}
	else
		scan->bm_count = -1;	/* lossy: every row of the slice */
	return true;
}

bool
xxl_scan_bitmap_next_tuple(TableScanDesc sscan, TBMIterateResult *tbmres, TupleTableSlot *slot)
{
	XxlScanDesc scan = (XxlScanDesc) sscan;

	if (!BufferIsValid(scan->buf))
		return false;
	if (scan->bm_count < 0)
	{
		while (scan->row < scan->nrows && scan->row < scan->bm_first + XXL_TID_ROWS)
		{
			if (deleted(scan, scan->row))
			{
				scan->row++;
				continue;
			}
			if (!scan->opened)
				open_page(scan);
			store_row(scan, scan->row++, slot);
			return true;
		}
		return false;
	}
	while (scan->bm_next < scan->bm_count)
	{
		OffsetNumber off = scan->bm_offsets[scan->bm_next++];

		if (off >= 1 && off <= XXL_TID_ROWS && scan->bm_first + off - 1 < scan->nrows &&
			!deleted(scan, scan->bm_first + off - 1))
		{
			if (scan->opened)
				store_row(scan, scan->bm_first + off - 1, slot);
			else
				store_one(scan, scan->bm_first + off - 1, slot);
			return true;
		}
	}
	return false;
}

/* ANALYZE ----------------------------------------------------------------------- */

bool
xxl_scan_analyze_next_block(TableScanDesc sscan, BlockNumber blockno,
							BufferAccessStrategy bstrategy)
{
	XxlScanDesc scan = (XxlScanDesc) sscan;

	drop_page(scan);
	if (blockno == XXL_META_BLOCK || blockno >= scan->nblocks)
		return false;
	if (take_page(scan, blockno, bstrategy) >= 0)
		open_page(scan);
	return true;
}

bool
xxl_scan_analyze_next_tuple(TableScanDesc sscan, TransactionId OldestXmin, double *liverows,
							double *deadrows, TupleTableSlot *slot)
{
	XxlScanDesc scan = (XxlScanDesc) sscan;

	if (!BufferIsValid(scan->buf))
		return false;
	{
		uint32		segno = XXL_OPAQUE(BufferGetPage(scan->buf))->segno;

		while (scan->visible[segno] && scan->row < scan->nrows)
		{
			int			row = scan->row;

			if (row < scan->stop)
			{
				store_row(scan, scan->row++, slot);
				*liverows += 1;
				return true;
			}
			/* deleted rows: dead ones */
			scan->row = xxl_deleted_skip(&scan->dels, &scan->del_k,
										 xxl_row_pos(scan->block, 0), row, scan->nrows,
										 &scan->stop);
			*deadrows += scan->row - row;
		}
		if (!scan->visible[segno] && !xxl_segment_committed(&scan->dir.segs[segno]) &&
			!TransactionIdIsInProgress(scan->dir.segs[segno].xmin))
			*deadrows += scan->nrows - scan->row;
	}
	drop_page(scan);
	ExecClearTuple(slot);
	return false;
}

/* Every row of segments committed (or this transaction's) to cb. */
double
xxl_scan_committed(Relation rel, BlockNumber lo, BlockNumber hi, TupleTableSlot *slot,
				   XxlRowCallback cb, void *arg)
{
	XxlScanDesc scan = scan_make(rel, NULL, 0, NULL, NULL, SO_TYPE_SEQSCAN, VIS_COMMITTED);
	double		rows = 0;

	scan->next_block = Max(lo, XXL_META_BLOCK + 1);
	scan->nblocks = Min(hi, scan->nblocks);

	while (xxl_scan_getnextslot((TableScanDesc) scan, ForwardScanDirection, slot))
	{
		cb(arg, slot);
		rows++;
	}
	xxl_scan_end((TableScanDesc) scan);
	return rows;
}

/* Rows by TID --------------------------------------------------------------------- */

/*
 * The segment of the row at tid, with the page pinned as scan's current
 * page, or -1 when there is no such row.
 */
static int64
row_at(XxlScanDesc scan, ItemPointer tid)
{
	BlockNumber block = xxl_tid_page(tid);
	int			row = xxl_tid_row(tid);
	int64		segno;

	if (block == XXL_META_BLOCK || block >= scan->nblocks || row < 0)
		return -1;
	segno = take_page(scan, block, NULL);
	if (segno >= 0 && row >= scan->nrows)
	{
		drop_page(scan);
		return -1;
	}
	return segno;
}

/* Whether the row at tid (of segment segno, -1: none) is visible to snapshot and not deleted. */
static bool
row_visible(XxlScanDesc scan, int64 segno, ItemPointer tid, Snapshot snapshot)
{
	return segno >= 0 && xxl_segment_visible(&scan->dir.segs[segno], snapshot) &&
		!xxl_row_deleted(scan->base.rs_rd, &scan->dels, &scan->dir,
						 xxl_row_pos(xxl_tid_page(tid), xxl_tid_row(tid)), snapshot);
}

bool
xxl_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot, TupleTableSlot *slot)
{
	XxlScanDesc scan = scan_make(rel, snapshot, 0, NULL, NULL, 0, VIS_NONE);
	int64		segno = row_at(scan, tid);
	bool		found = row_visible(scan, segno, tid, snapshot);

	if (found)
	{
		/*
		 * The one row, decoded alone (UPDATE fetches every row it changes:
		 * a packed page decoded whole per row was most of its time).
		 */
		store_one(scan, xxl_tid_row(tid), slot);
		/* the values must outlive the page's pin and the scan's memory */
		ExecMaterializeSlot(slot);
	}
	xxl_scan_end((TableScanDesc) scan);
	return found;
}

bool
xxl_tid_valid(TableScanDesc sscan, ItemPointer tid)
{
	XxlScanDesc scan = (XxlScanDesc) sscan;

	return ItemPointerIsValid(tid) && xxl_tid_row(tid) >= 0 &&
		xxl_tid_page(tid) != XXL_META_BLOCK && xxl_tid_page(tid) < scan->nblocks;
}

bool
xxl_satisfies_snapshot(Relation rel, TupleTableSlot *slot, Snapshot snapshot)
{
	XxlScanDesc scan = scan_make(rel, snapshot, 0, NULL, NULL, 0, VIS_NONE);
	ItemPointer tid = &slot->tts_tid;
	int64		segno = row_at(scan, tid);
	bool		visible = row_visible(scan, segno, tid, snapshot);

	xxl_scan_end((TableScanDesc) scan);
	return visible;
}
