/*
 * xxl_table_index.c — indexes on xxl tables: building one from the rows of
 * committed segments, and fetching a row by the TID an index gives.
 *
 * A row's TID is (page, 1 + its index on the page) and never changes: a
 * segment is immutable once written.  Rows of a table that has indexes are
 * written into shared pages as they are inserted (xxl_table_write.c), so
 * that the executor has their TIDs for the index entries at once, and a
 * unique index's check sees the statement's own earlier rows.
 */
#include "postgres.h"

#include "catalog/pg_am.h"

#include "access/relscan.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "pg/table/xxl_table_storage.h"

double
xxl_index_build_range_scan(Relation table_rel, Relation index_rel, IndexInfo *index_info,
						   bool allow_sync, bool anyvisible, bool progress,
						   BlockNumber start_blockno, BlockNumber numblocks,
						   IndexBuildCallback callback, void *callback_state,
						   TableScanDesc scan)
{
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = table_slot_create(table_rel, NULL);
	ExprState  *predicate;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	double		reltuples = 0;
	XxlDirectory dir;
	XxlDeleted	dels;
	bool		alive;

	/*
	 * BRIN summarizes ranges of heap blocks; an xxl TID's block is a slice
	 * of a page (docs/table.md), and its summaries lost rows.
	 */
	if (start_blockno != 0 || numblocks != InvalidBlockNumber ||
		index_rel->rd_rel->relam == BRIN_AM_OID)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("indexes over block ranges (BRIN) are not supported on xxl table \"%s\"",
						RelationGetRelationName(table_rel)),
				 errhint("Declare an order key with xxl.alter_table_set: ranges of its leading column skip pages.")));
	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(index_info->ii_Predicate, estate);

	/*
	 * Rows that a committed delete (or this transaction's) names are
	 * indexed as heap indexes its recently dead versions: an older
	 * snapshot may still use them, but they are not alive, so a unique
	 * index does not count them (an UPDATE's old version made CREATE
	 * UNIQUE INDEX fail on a key held once).
	 */
	xxl_dir_load(table_rel, &dir);
	xxl_deleted_load(table_rel, &dir, XXL_DELS_COMMITTED, NULL, &dels);
	/* rows of committed segments and this transaction's (a scan with SnapshotAny) */
	if (scan == NULL)
		scan = table_beginscan_strat(table_rel, SnapshotAny, 0, NULL, true, allow_sync);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(econtext->ecxt_per_tuple_memory);
		if (predicate != NULL && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(index_info, slot, estate, values, isnull);
		alive = dels.nruns == 0 ||
			xxl_deleted_find(&dels, xxl_row_pos(xxl_tid_page(&slot->tts_tid),
												xxl_tid_row(&slot->tts_tid))) < 0;
		callback(index_rel, &slot->tts_tid, values, isnull, alive, callback_state);
		if (alive)
			reltuples += 1;
	}
	table_endscan(scan);
	xxl_deleted_free(&dels);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	/* they pointed into the executor state just freed */
	index_info->ii_ExpressionsState = NIL;
	index_info->ii_PredicateState = NULL;
	return reltuples;
}

/* Fetching by TID ------------------------------------------------------------------ */

typedef struct XxlIndexFetch
{
	IndexFetchTableData base;
	XxlDirectory dir;			/* reread when a TID names a newer segment */
	XxlDeleted	dels;			/* of every delete segment not aborted then */
	bool		loaded;
	Buffer		buf;			/* the page of the row last fetched, pinned */
	XxlPageBuf	pbuf;			/* a packed page's row, decoded */
	XxlRowFormat fmt;
	MemoryContext cxt;			/* lives as long as the fetch (calls come in shorter ones) */
	MemoryContext rowcxt;
} XxlIndexFetch;

IndexFetchTableData *
xxl_index_fetch_begin(Relation rel)
{
	XxlIndexFetch *f = palloc0(sizeof(XxlIndexFetch));

	f->base.rel = rel;
	f->buf = InvalidBuffer;
	f->cxt = CurrentMemoryContext;
	f->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "xxl index fetch row",
									  ALLOCSET_SMALL_SIZES);
	xxl_row_format_init(&f->fmt, RelationGetDescr(rel), RelationGetDescr(rel)->natts);
	xxl_page_buf_init(&f->pbuf, f->cxt);
	return &f->base;
}

void
xxl_index_fetch_reset(IndexFetchTableData *data)
{
	XxlIndexFetch *f = (XxlIndexFetch *) data;

	if (BufferIsValid(f->buf))
		ReleaseBuffer(f->buf);
	f->buf = InvalidBuffer;
}

void
xxl_index_fetch_end(IndexFetchTableData *data)
{
	XxlIndexFetch *f = (XxlIndexFetch *) data;

	xxl_index_fetch_reset(data);
	MemoryContextDelete(f->rowcxt);
	xxl_page_buf_free(&f->pbuf);
	if (f->dir.segs)
		pfree(f->dir.segs);
	xxl_deleted_free(&f->dels);
	pfree(f);
}

static void
load_directory(XxlIndexFetch *f)
{
	MemoryContext old = MemoryContextSwitchTo(f->cxt);

	if (f->dir.segs)
		pfree(f->dir.segs);
	xxl_deleted_free(&f->dels);
	xxl_dir_load(f->base.rel, &f->dir);
	xxl_deleted_load(f->base.rel, &f->dir, XXL_DELS_LIVE, NULL, &f->dels);
	f->loaded = true;
	MemoryContextSwitchTo(old);
}

bool
xxl_index_fetch_tuple(IndexFetchTableData *data, ItemPointer tid, Snapshot snapshot,
					  TupleTableSlot *slot, bool *call_again, bool *all_dead)
{
	XxlIndexFetch *f = (XxlIndexFetch *) data;
	Relation	rel = f->base.rel;
	BlockNumber block = xxl_tid_page(tid);
	int			rowno = xxl_tid_row(tid);
	Page		page;
	XxlPageOpaque *op;
	uint32		segno,
				len;
	const char *row;
	bool		found = false;

	*call_again = false;
	if (all_dead)
		*all_dead = false;
	if (block == XXL_META_BLOCK || rowno < 0)
		return false;
	if (!BufferIsValid(f->buf) || BufferGetBlockNumber(f->buf) != block)
	{
		if (BufferIsValid(f->buf))
			ReleaseBuffer(f->buf);
		f->buf = ReadBuffer(rel, block);
	}
	LockBuffer(f->buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(f->buf);
	op = XXL_OPAQUE(page);
	if (!xxl_page_is_data(page) || rowno >= op->nrows)
	{
		LockBuffer(f->buf, BUFFER_LOCK_UNLOCK);
		return false;
	}
	segno = op->segno;
	if (op->natts != f->fmt.natts)
		xxl_row_format_init(&f->fmt, RelationGetDescr(rel), op->natts);
	row = xxl_page_row_at(page, rowno, &f->pbuf, &len);
	LockBuffer(f->buf, BUFFER_LOCK_UNLOCK);

	/* a segment appended since the directory was read: read it again */
	if (!f->loaded || segno >= f->dir.nsegments)
		load_directory(f);
	if (segno < f->dir.nsegments && xxl_segment_holds(&f->dir.segs[segno], block) &&
		xxl_segment_visible(&f->dir.segs[segno], snapshot) &&
		!xxl_row_deleted(rel, &f->dels, &f->dir, xxl_row_pos(block, rowno), snapshot))
	{
		/* rows are only ever appended: this one stays where it is while the page is pinned */
		xxl_slot_store_row(slot, &f->fmt, row, f->rowcxt);
		slot->tts_tid = *tid;
		slot->tts_tableOid = RelationGetRelid(rel);
		found = true;
	}
	return found;
}
