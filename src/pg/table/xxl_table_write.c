/*
 * xxl_table_write.c — how rows get into an xxl table: each statement's rows
 * for a table collect in an external sorter (by the table's order key, or
 * in arrival order) and become one segment when the statement ends.
 *
 * A write state belongs to (table, command id).  It is flushed (and so
 * are the statement's deletes, xxl_table_delete.c; the hooks that do it
 * are in xxl_table_ends.c):
 *  - when the executor ends the statement (INSERT, INSERT ... SELECT);
 *  - at finish_bulk_insert (COPY, CREATE TABLE AS, ALTER TABLE rewrites);
 *  - before commit or prepare, whatever is still pending.
 * A subtransaction that aborts drops the states it created; a transaction
 * that aborts drops them all (their memory context goes with it, and the
 * operator's reset callback removes the sorter's spill files).
 *
 * Flushing writes the sorted rows onto new pages at the end of the
 * relation while holding its extension lock, so a segment's pages are
 * contiguous, then appends its directory entry (xxl_table_dir.c).  Its
 * rows are seen by snapshots that see the inserting transaction, and by
 * the inserting transaction's commands after the inserting one.  A large
 * segment's pages go to the file directly in 256 kB writes (xxl_relfile.c),
 * the way CREATE INDEX writes its pages (nbtsort.c), instead of a new
 * buffer each: no block exists beyond the relation's end, and nobody
 * extends it while we hold the lock.  They are WAL-logged whole when the
 * relation needs WAL, and the file is synced where it must be before the
 * directory entry is appended, because a checkpoint during the writing
 * could not flush pages it never saw.
 *
 * A table with indexes cannot wait: the executor inserts each row's index
 * entries right after the row, by its TID, and a unique index checks
 * against the rows already in.  Its rows are written as they come, in
 * arrival order, into shared pages of a segment whose entry is made with
 * the first row (marked scattered: other writers' pages may lie between
 * its pages).  A new page is WAL-logged when it is made and again, whole,
 * when the statement ends, so that a torn write in between restores a
 * page no one sees.
 */
#include "postgres.h"

#include "access/table.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_bswap.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "pg/table/xxl_table_writers.h"
#include "pg/runtime/runtime.h"
#include "pg/io/io.h"
#include "pg/sort/sort.h"

struct XxlSegmentWriter
{
	XxlPending	pend;			/* table, command, transaction, memory */
	TransactionId xmin;			/* the segment's: xid, or frozen for a rewrite */
	bool		rewrite;		/* compaction's segment (XXL_SEG_REWRITE unless frozen) */
	bool		merge;			/* a merge's: not pending, not counted, TOAST kept */
	MemoryContext rowcxt;		/* detoasted values of one row */
	XxlOperator *op;
	xxl_sorter *sorter;
	XxlSortKey *key;			/* NULL: arrival order */
	uint32		key_hash;
	/* fixed records (key and row of fixed width): key bytes, then the row */
	size_t		key_size;		/* 0: variable records */
	size_t		record_size;
	unsigned char *record;
	/* a table with indexes: rows written as they come */
	bool		direct;
	XxlSegment	seg;			/* direct: its entry, made with the first page */
	uint32		segno;
	BlockNumber cur_block;		/* direct: the page being filled */
	BlockNumber *blocks;		/* direct: its pages, logged whole at the end */
	int			nblocks,
				maxblocks;
	XxlRowFormat fmt;
	StringInfoData row;
	uint64		nrows;
};
typedef struct XxlSegmentWriter WriteState;

/* Segment counts from which a flush suggests compaction (at each power of two). */
#define XXL_SEGMENTS_NOTICE 64

/* Fixed records up to this size (the engine's radix sort moves them whole). */
#define XXL_TABLE_MAX_FIXED_RECORD 1024

static XxlPending *pending = NULL;

/* States ------------------------------------------------------------------------ */

/*
 * A new write state of rel, with the order key of table key_of (rel
 * itself, or the table a rewrite copies); a merge's writes sorted whatever
 * indexes rel has.
 */
static WriteState *
state_new(Relation rel, CommandId cid, Oid key_of, bool merge)
{
	Oid			relid = RelationGetRelid(rel);
	WriteState *ws;
	MemoryContext cxt;
	MemoryContext old;
	char	   *order_by;

	/*
	 * Row triggers and foreign keys would fetch the new rows by the TID
	 * they are given now, and the rows have none until the statement ends.
	 */
	if (!merge && rel->trigdesc != NULL && (rel->trigdesc->trig_insert_after_row ||
								  rel->trigdesc->trig_insert_new_table))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("xxl table \"%s\" has AFTER INSERT row triggers or a foreign key",
						RelationGetRelationName(rel)),
				 errdetail("Rows of an xxl table get their place when the statement ends."),
				 errhint("Use a heap table, or drop the triggers.")));

	order_by = xxl_table_order_by(key_of);
	ws = MemoryContextAllocZero(TopTransactionContext, sizeof(WriteState));
	cxt = AllocSetContextCreate(TopTransactionContext, "xxl table write", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	ws->merge = merge;
	ws->pend.relid = relid;
	ws->pend.cid = cid;
	ws->pend.cxt = cxt;
	ws->xmin = merge ? FrozenTransactionId : GetCurrentTransactionId();
	ws->rowcxt = AllocSetContextCreate(cxt, "xxl table row", ALLOCSET_SMALL_SIZES);
	{
		TupleDesc	desc = CreateTupleDescCopy(RelationGetDescr(rel));

		xxl_row_format_init(&ws->fmt, desc, desc->natts);
	}
	if (order_by != NULL)
	{
		ws->key = xxl_sortkey_create(ws->fmt.desc, xxl_parse_order_by(order_by));
		ws->key_hash = xxl_key_hash(ws->fmt.desc, order_by);
	}
	initStringInfo(&ws->row);
	ws->direct = RelationGetForm(rel)->relhasindex && !merge;
	ws->cur_block = InvalidBlockNumber;
	ws->op = xxl_operator_begin(merge ? "table merge" : "table insert");

	/*
	 * Rows of fixed width under a fixed-size key (integers, floats, dates,
	 * no key at all) travel as fixed records: radix-sorted runs and no
	 * per-record lengths, against variable records' comparison sorts.
	 */
	ws->key_size = ws->key ? xxl_sortkey_fixed_size(ws->key) : sizeof(uint64);
	if (ws->direct)
		ws->key_size = 0;		/* no sorter: rows go to pages as they come */
	else if (ws->key_size > 0 && ws->fmt.row_width > 0 &&
		ws->key_size + ws->fmt.row_width <= XXL_TABLE_MAX_FIXED_RECORD)
	{
		ws->record_size = ws->key_size + ws->fmt.row_width;
		ws->record = palloc(ws->record_size);
		ws->sorter = xxl_sort_new(ws->op, ws->record_size, ws->key_size, NULL);
	}
	else
	{
		ws->key_size = 0;
		ws->sorter = xxl_sort_new(ws->op, 0, 0,
											 ws->key ? xxl_sortkey_compare(ws->key) : NULL);
	}
	xxl_operator_detail(ws->op, "records", ws->direct ? "\"direct\"" :
						ws->key_size ? "\"fixed\"" : "\"variable\"");
	MemoryContextSwitchTo(old);
	return ws;
}

/* The write state of (rel, cid), made if there is none (key_of as for state_new). */
static WriteState *
state_for(Relation rel, CommandId cid, Oid key_of)
{
	WriteState *ws = (WriteState *) xxl_pending_find(pending, RelationGetRelid(rel), cid);

	if (ws == NULL)
	{
		ws = state_new(rel, cid, key_of, false);
		xxl_pending_push(&pending, &ws->pend, RelationGetRelid(rel), cid, ws->pend.cxt);
	}
	return ws;
}

/* Direct writes ------------------------------------------------------------------- */

static void
log_direct_page(Relation rel, Buffer buf)
{
	START_CRIT_SECTION();
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
		log_newpage_buffer(buf, true);
	END_CRIT_SECTION();
}

/* A new page for a direct segment (its entry made with the first one). */
static void
new_direct_page(WriteState *ws, Relation rel)
{
	Buffer		buf;

	LockRelationForExtension(rel, ExclusiveLock);
	if (ws->nblocks == 0)
	{
		ws->segno = xxl_dir_prepare(rel);
		memset(&ws->seg, 0, sizeof(ws->seg));
		ws->seg.xmin = ws->xmin;
		ws->seg.cmin = ws->pend.cid;
		ws->seg.first_block = RelationGetNumberOfBlocks(rel);
		ws->seg.flags = XXL_SEG_SCATTERED;
		if (xxl_dir_append(rel, &ws->seg) != ws->segno)
			elog(ERROR, "xxl table \"%s\": segment %u appended out of turn",
				 RelationGetRelationName(rel), ws->segno);
	}
	buf = xxl_extend(rel, NULL);
	UnlockRelationForExtension(rel, ExclusiveLock);
	xxl_page_init(BufferGetPage(buf), &ws->fmt, ws->segno);
	log_direct_page(rel, buf);
	ws->cur_block = BufferGetBlockNumber(buf);
	UnlockReleaseBuffer(buf);
	if (ws->nblocks == ws->maxblocks)
	{
		ws->maxblocks = Max(64, 2 * ws->maxblocks);
		ws->blocks = ws->blocks ? repalloc(ws->blocks, sizeof(BlockNumber) * ws->maxblocks) :
			MemoryContextAlloc(ws->pend.cxt, sizeof(BlockNumber) * ws->maxblocks);
	}
	ws->blocks[ws->nblocks++] = ws->cur_block;
	ws->seg.npages++;
}

/* Write a row into the segment's current page now; its TID into tid. */
static void
direct_put(WriteState *ws, Relation rel, const char *row, uint32 len, ItemPointer tid)
{
	for (;;)
	{
		if (ws->cur_block != InvalidBlockNumber)
		{
			Buffer		buf = ReadBuffer(rel, ws->cur_block);
			int			pos;

			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			pos = xxl_page_add(BufferGetPage(buf), row, len);
			if (pos > 0)
				MarkBufferDirty(buf);
			UnlockReleaseBuffer(buf);
			if (pos > 0)
			{
				xxl_tid_set(tid, ws->cur_block, pos - 1);
				ws->seg.nrows++;
				return;
			}
		}
		new_direct_page(ws, rel);
	}
}

/* The end of a direct segment: its pages logged whole, its entry completed. */
static void
flush_direct(WriteState *ws)
{
	Relation	rel;

	if (ws->nblocks == 0)
		return;
	rel = table_open(ws->pend.relid, NoLock);
	for (int i = 0; i < ws->nblocks; i++)
	{
		Buffer		buf = ReadBuffer(rel, ws->blocks[i]);

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		log_direct_page(rel, buf);
		UnlockReleaseBuffer(buf);
		ws->seg.end_block = Max(ws->seg.end_block, ws->blocks[i] + 1);
	}
	xxl_dir_update(rel, ws->segno, &ws->seg);
	table_close(rel, NoLock);
}

static void
put_row(WriteState *ws, Relation rel, TupleTableSlot *slot)
{
	MemoryContext old = MemoryContextSwitchTo(ws->rowcxt);
	const unsigned char *key;
	uint32		klen;
	uint64		seq;
	uint32		len;

	slot_getallattrs(slot);
	len = xxl_row_pack(&ws->fmt, slot->tts_values, slot->tts_isnull, &ws->row,
					   ws->merge ? NULL : rel);
	if (len > xxl_page_max_row(ws->fmt.row_width))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row of %u bytes is too big for an xxl table page", len),
				 errdetail("An xxl table row must fit one page (%u bytes) once its values over %d bytes are compressed or moved to its TOAST table.",
						   xxl_page_max_row(ws->fmt.row_width), XXL_TOAST_VALUE)));
	/* without a key: arrival order, the row's number big-endian */
	seq = pg_hton64(ws->nrows);
	if (ws->direct)
		direct_put(ws, rel, ws->row.data, len, &slot->tts_tid);
	else if (ws->key_size > 0)
	{
		if (ws->key != NULL)
			xxl_sortkey_encode_fixed(ws->key, slot->tts_values, slot->tts_isnull, ws->record);
		else
			memcpy(ws->record, &seq, sizeof(seq));
		memcpy(ws->record + ws->key_size, ws->row.data, len);
		if (xxl_sorter_put(ws->sorter, ws->record) != XXL_OK)
			xxl_raise_error(xxl_sorter_error(ws->sorter), "xxl table insert");
	}
	else
	{
		if (ws->key != NULL)
			key = xxl_sortkey_encode(ws->key, slot->tts_values, slot->tts_isnull, &klen);
		else
		{
			key = (const unsigned char *) &seq;
			klen = sizeof(seq);
		}
		if (xxl_sorter_put_var(ws->sorter, key, klen, ws->row.data, len) != XXL_OK)
			xxl_raise_error(xxl_sorter_error(ws->sorter), "xxl table insert");
	}
	ws->nrows++;
	MemoryContextSwitchTo(old);
	MemoryContextReset(ws->rowcxt);
	if (!ws->merge)
		pgstat_count_heap_insert(rel, 1);
	/* a sorted row's place is known when the statement ends */
	if (!ws->direct)
		ItemPointerSetInvalid(&slot->tts_tid);
	slot->tts_tableOid = ws->pend.relid;
}

void
xxl_table_insert(Relation rel, TupleTableSlot *slot, CommandId cid, int options,
				 struct BulkInsertStateData *bistate)
{
	put_row(state_for(rel, cid, RelationGetRelid(rel)), rel, slot);
}

void
xxl_table_begin_rewrite(Relation target, CommandId cid, Oid key_of, bool frozen)
{
	WriteState *ws = state_for(target, cid, key_of);

	if (frozen)
		ws->xmin = FrozenTransactionId;
	else
		ws->rewrite = true;
}

void
xxl_table_multi_insert(Relation rel, TupleTableSlot **slots, int nslots, CommandId cid,
					   int options, struct BulkInsertStateData *bistate)
{
	WriteState *ws = state_for(rel, cid, RelationGetRelid(rel));

	for (int i = 0; i < nslots; i++)
	{
		CHECK_FOR_INTERRUPTS();
		put_row(ws, rel, slots[i]);
	}
}

/* Flushing ----------------------------------------------------------------------- */

void
xxl_notice_compact(Relation rel, const char *message, const char *detail, const char *effect)
{
	ereport(NOTICE,
			(errmsg_internal("%s", message),
			 detail ? errdetail_internal("%s", detail) : 0,
			 errhint("SELECT xxl.compact('%s') %s.",
					 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
												RelationGetRelationName(rel)),
					 effect)));
}

/* segments from this many bytes of records on bypass shared buffers */
#define BULK_SEGMENT_MIN ((uint64) 8 * 1024 * 1024)

/*
 * A segment's page is built: it goes to the file's batch (a large
 * segment) or through shared buffers.  The page to build next.
 */
static char *
segment_page_done(Relation rel, XxlRelFile *file, PGAlignedBlock *pb, BufferAccessStrategy strategy)
{
	if (file)
	{
		xxl_relfile_page_done(file);
		return xxl_relfile_page(file, NULL);
	}
	xxl_write_new_page(rel, pb, strategy);
	return pb->data;
}

/* Sort the state's rows (before the extension lock is taken). */
static void
sort_rows(WriteState *ws)
{
	xxl_operator_phase(ws->op, XXL_PHASE_MERGE);
	if (xxl_sorter_sort(ws->sorter) != XXL_OK)
		xxl_raise_error(xxl_sorter_error(ws->sorter), ws->op->name);
	xxl_operator_phase(ws->op, XXL_PHASE_OUTPUT);
}

/*
 * The sorted rows onto new pages at the end of rel, as segment segno
 * (extension lock held); their entry into seg.
 */
static void
write_segment(WriteState *ws, Relation rel, uint32 segno, XxlSegment *seg)
{
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKWRITE);
	PGAlignedBlock *pb = palloc(sizeof(PGAlignedBlock));
	int			got;
	xxl_sort_stats sst;
	XxlRelFile *file = NULL;	/* a large segment's pages go to the file */
	XxlPacker  *packer;			/* NULL: plain pages */
	char	   *page;

	memset(seg, 0, sizeof(*seg));
	seg->xmin = ws->xmin;
	seg->cmin = ws->pend.cid;
	seg->first_block = RelationGetNumberOfBlocks(rel);
	seg->flags = ws->key ? XXL_SEG_SORTED : 0;
	if (ws->rewrite)
		seg->flags |= XXL_SEG_REWRITE;
	seg->key_hash = ws->key_hash;
	xxl_sorter_stats(ws->sorter, &sst);
	if (sst.bytes >= BULK_SEGMENT_MIN && rel->rd_rel->relpersistence != RELPERSISTENCE_TEMP)
		file = xxl_relfile_begin(rel, seg->first_block, false);
	page = file ? xxl_relfile_page(file, NULL) : pb->data;
	packer = xxl_packer_begin(&ws->fmt);
	xxl_page_init(page, &ws->fmt, segno);
	for (;;)
	{
		const void *key,
				   *recs;
		const char *row;
		uint32		klen,
					len;
		size_t		n = 1;

		if (ws->key_size > 0)
			got = xxl_sorter_next_many(ws->sorter, &recs, 1024, &n);
		else
			got = xxl_sorter_next_var(ws->sorter, &key, &klen, &recs, &len);
		if (got < 0)
			xxl_raise_error(xxl_sorter_error(ws->sorter), ws->op->name);
		if (got == 0)
			break;
		for (size_t i = 0; i < n; i++)
		{
			if (ws->key_size > 0)
			{
				row = (const char *) recs + i * ws->record_size + ws->key_size;
				len = ws->fmt.row_width;
			}
			else
				row = recs;
			if (packer)
			{
				if (!xxl_packer_add(packer, row, len))
				{
					CHECK_FOR_INTERRUPTS();
					xxl_packer_finish(packer, page, segno);
					page = segment_page_done(rel, file, pb, strategy);
					seg->npages++;
					if (!xxl_packer_add(packer, row, len))
						elog(ERROR, "row of %u bytes does not fit an empty page", len);
				}
			}
			else if (!xxl_page_add(page, row, len))
			{
				CHECK_FOR_INTERRUPTS();
				page = segment_page_done(rel, file, pb, strategy);
				seg->npages++;
				xxl_page_init(page, &ws->fmt, segno);
				if (!xxl_page_add(page, row, len))
					elog(ERROR, "row of %u bytes does not fit an empty page", len);
			}
			seg->nrows++;
		}
	}
	if (packer && xxl_packer_rows(packer) > 0)
		xxl_packer_finish(packer, page, segno);
	if (XXL_OPAQUE(page)->nrows > 0)
	{
		(void) segment_page_done(rel, file, pb, strategy);
		seg->npages++;
	}
	if (packer)
		xxl_packer_end(packer);
	/* synced where it must be: on disk before the entry that makes them count */
	if (file)
		xxl_relfile_end(file);
	FreeAccessStrategy(strategy);
	pfree(pb);
	ws->op->rows_in = ws->op->rows_out = seg->nrows;
	xxl_operator_detail(ws->op, "segment", "%u", segno);
	xxl_operator_detail(ws->op, "pages", "%u", seg->npages);
}

/* The state's rows as one segment of its table. */
static void
flush_state(WriteState *ws)
{
	Relation	rel;
	XxlSegment	seg;
	uint32		segno;

	sort_rows(ws);
	rel = table_open(ws->pend.relid, NoLock);
	LockRelationForExtension(rel, ExclusiveLock);
	segno = xxl_dir_prepare(rel);
	write_segment(ws, rel, segno, &seg);
	if (xxl_dir_append(rel, &seg) != segno)
		elog(ERROR, "xxl table \"%s\": segment %u appended out of turn",
			 RelationGetRelationName(rel), segno);

	/*
	 * Many segments cost an ordered scan a cursor each and every scan a
	 * directory entry each: say so when their number passes 64, 128, ...
	 * (compaction needs an ACCESS EXCLUSIVE lock, so it is not started here;
	 * VACUUM merges small segments at the table's end).
	 */
	if (segno + 1 >= XXL_SEGMENTS_NOTICE && ((segno + 1) & segno) == 0)
		xxl_notice_compact(rel, psprintf("xxl table \"%s\" has %u segments",
										 RelationGetRelationName(rel), segno + 1),
						   NULL, "merges them into one sorted segment");
	UnlockRelationForExtension(rel, ExclusiveLock);
	table_close(rel, NoLock);
	xxl_operator_end(ws->op);
}

/* Merges (xxl_table_merge.c) ------------------------------------------------------ */

XxlSegmentWriter *
xxl_segment_writer_begin(Relation rel)
{
	return state_new(rel, InvalidCommandId, RelationGetRelid(rel), true);
}

void
xxl_segment_writer_put(XxlSegmentWriter *w, Relation rel, TupleTableSlot *slot)
{
	put_row(w, rel, slot);
}

void
xxl_segment_writer_end(XxlSegmentWriter *w, Relation rel, uint32 segno, XxlSegment *seg)
{
	WriteState *ws = w;

	sort_rows(ws);
	LockRelationForExtension(rel, ExclusiveLock);
	write_segment(ws, rel, segno, seg);
	UnlockRelationForExtension(rel, ExclusiveLock);
	xxl_operator_end(ws->op);
	MemoryContextDelete(ws->pend.cxt);
	pfree(ws);
}

/* Write a state's rows as its segment. */
static void
flush_pending(XxlPending *p)
{
	WriteState *ws = (WriteState *) p;

	if (ws->direct)
	{
		flush_direct(ws);
		ws->op->rows_in = ws->op->rows_out = ws->seg.nrows;
		xxl_operator_end(ws->op);
	}
	else
		flush_state(ws);
}

/* Flush and forget the states that match (relid InvalidOid: any; cid InvalidCommandId: any). */
void
xxl_writes_flush(Oid relid, CommandId cid)
{
	xxl_pending_flush(&pending, relid, cid, flush_pending);
}

void
xxl_table_flush(Oid relid)
{
	xxl_writes_flush(relid, InvalidCommandId);
}

void
xxl_writes_forget(void)
{
	/* their memory went with TopTransactionContext */
	pending = NULL;
}

void
xxl_writes_subxact(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid)
{
	xxl_pending_subxact(&pending, event, mySubid, parentSubid);
}
