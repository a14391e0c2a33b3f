/*
 * xxl_table_merge.c — VACUUM's merge of the segments at an xxl table's end.
 *
 * A table fed one row per statement gets a segment, a page and a
 * directory entry per row.  VACUUM (and so autovacuum, which inserts
 * wake) folds the newest segments into one, sorted by the table's key,
 * gives their pages back to the file system and their entries back to
 * the directory.  It merges only segments every snapshot sees the same
 * way (committed before the oldest running snapshot, or aborted), whose
 * rows no delete segment before them can name (a delete names rows that
 * were there before it), and only under an ACCESS EXCLUSIVE lock it gets without waiting, as
 * heap's VACUUM does to truncate: a table in use is merged another time.
 *
 * Rows move, so their TIDs change, and every step leaves a table that is
 * right if the server stops there:
 *  1. the rows are written as a new frozen segment at the end, numbered
 *     like the oldest entry merged, and indexed at their new places (no
 *     one sees those pages yet: they lie outside every entry's extent);
 *     rows that a merged delete segment names are left out, and what the
 *     merged deletes name of older segments becomes one delete segment
 *     after it;
 *  2. one WAL record makes that segment the entry and drops the merged
 *     entries after it (xxl_dir_truncate); the index entries of the old
 *     places go (index bulk delete);
 *  3. the new segment's pages are copied down to where the merged ones
 *     began, indexed there, the entry points to the copy, the index
 *     entries of the first copy go, and the file is cut after the copy.
 * A crash between steps leaves pages no entry holds (xxl_segment_holds),
 * which the next VACUUM FULL gives back.  Tiering (a segment is merged
 * only with newer ones of at least its size) keeps the rewriting of any
 * row to a logarithmic number of merges.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/transam.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "catalog/storage.h"
#include "commands/vacuum.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "utils/memutils.h"

#include "pg/table/xxl_table_writers.h"
#include "pg/runtime/runtime.h"

/* Pages one merge reads at most (the rest waits for the next merge). */
#define MERGE_MAX_PAGES 16384

typedef struct BlockRange
{
	BlockNumber lo;
	BlockNumber hi;
} BlockRange;

/* Whether a segment is seen the same way by every snapshot: frozen, or committed before all of them. */
static bool
all_visible(const XxlSegment *seg, TransactionId oldest_xmin)
{
	TransactionId xmin = seg->xmin;

	if (xmin == FrozenTransactionId)
		return true;
	return TransactionIdIsNormal(xmin) && TransactionIdPrecedes(xmin, oldest_xmin) &&
		TransactionIdDidCommit(xmin);
}

/* The block after seg's last page; InvalidBlockNumber when not known. */
static BlockNumber
extent_end(const XxlSegment *seg)
{
	if (seg->flags & XXL_SEG_SCATTERED)
		return seg->end_block ? seg->end_block : InvalidBlockNumber;
	return seg->first_block + seg->npages;
}

/*
 * The first entry of the merge [*a, n), and the block where its pages
 * begin; false when there is nothing worth merging.
 */
static bool
choose(const XxlDirectory *dir, TransactionId oldest_xmin, uint32 *a, BlockNumber *from)
{
	uint32		n = dir->nsegments;
	uint64		newer_pages = 0;
	uint32		first = n;

	for (uint32 i = n; i-- > 0;)
	{
		const XxlSegment *seg = &dir->segs[i];

		if (!(seg->flags & XXL_SEG_DEAD))
		{
			if (!all_visible(seg, oldest_xmin) || extent_end(seg) == InvalidBlockNumber)
				break;
			/* tiering: an older segment joins newer ones of at least its size */
			if (newer_pages > 0 && seg->npages > newer_pages)
				break;
			if (newer_pages + seg->npages > MERGE_MAX_PAGES && newer_pages > 0)
				break;
			newer_pages += seg->npages;
		}
		first = i;
	}

	/*
	 * The merged pages are the table's last ones: no live entry before the
	 * merge may have pages after the first of them (writers that ran side
	 * by side interleave their pages).  before[i]: the end of the pages of
	 * the live entries before i; from[i]: the first page of entries i on.
	 */
	if (n - first >= 2)
	{
		BlockNumber *before = palloc(sizeof(BlockNumber) * (n + 1));
		BlockNumber *after = palloc(sizeof(BlockNumber) * (n + 1));
		bool		found = false;

		before[0] = XXL_META_BLOCK + 1;
		for (uint32 i = 0; i < n; i++)
		{
			const XxlSegment *seg = &dir->segs[i];

			before[i + 1] = before[i];
			if (!(seg->flags & XXL_SEG_DEAD))
				before[i + 1] = Max(before[i], extent_end(seg));	/* unknown: the most */
		}
		after[n] = InvalidBlockNumber;
		for (uint32 i = n; i-- > first;)
			after[i] = Min(after[i + 1], dir->segs[i].first_block);
		for (; first + 1 < n && !found; first++)
			if (before[first] <= after[first])
			{
				*a = first;
				*from = after[first];
				found = true;
			}
		pfree(before);
		pfree(after);
		return found;
	}
	return false;
}

/*
 * Whether merging [a, n), whose pages begin at block lo, changes anything:
 * it would not when it is one data segment and the deletes of older rows
 * a merge left after it.
 */
static bool
worth_merging(Relation rel, const XxlDirectory *dir, uint32 a, BlockNumber lo)
{
	int			data = 0,
				deletes = 0;
	bool		own_rows = false;

	for (uint32 i = a; i < dir->nsegments; i++)
	{
		const XxlSegment *seg = &dir->segs[i];

		if (seg->flags & XXL_SEG_DEAD)
			return true;
		if (seg->flags & XXL_SEG_DELETES)
		{
			deletes++;
			own_rows |= xxl_deletes_last(rel, seg, i) >= xxl_row_pos(lo, 0);
		}
		else
			data++;
	}
	return data > 1 || deletes > 1 || own_rows;
}

/* A merge's rows on their way to its segment writer. */
typedef struct MergeInput
{
	Relation	rel;
	XxlSegmentWriter *w;
} MergeInput;

static void
put_merged_row(void *arg, TupleTableSlot *slot)
{
	MergeInput *in = arg;

	CHECK_FOR_INTERRUPTS();
	xxl_segment_writer_put(in->w, in->rel, slot);
}

/*
 * Index entries for the rows on pages [lo, hi) (a merged segment's, which
 * no reader sees yet).  Uniqueness is not checked: these rows are the ones
 * already in, at new places.
 */
static void
index_rows(Relation rel, BlockRange r)
{
	List	   *ids = RelationGetIndexList(rel);
	int			nindexes = list_length(ids);
	Relation   *indexes = palloc(sizeof(Relation) * Max(nindexes, 1));
	IndexInfo **infos = palloc(sizeof(IndexInfo *) * Max(nindexes, 1));
	ExprState **preds = palloc(sizeof(ExprState *) * Max(nindexes, 1));
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleDesc	desc = RelationGetDescr(rel);
	TupleTableSlot *slot = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
	XxlRowFormat fmt;
	XxlPageBuf	pbuf;
	XxlRowRun	run;
	int			i = 0;
	ListCell   *lc;

	if (nindexes == 0)
		goto done;
	foreach(lc, ids)
	{
		indexes[i] = index_open(lfirst_oid(lc), RowExclusiveLock);
		infos[i] = BuildIndexInfo(indexes[i]);
		preds[i] = ExecPrepareQual(infos[i]->ii_Predicate, estate);
		i++;
	}
	econtext->ecxt_scantuple = slot;
	xxl_row_format_init(&fmt, desc, desc->natts);
	xxl_page_buf_init(&pbuf, CurrentMemoryContext);
	for (BlockNumber b = r.lo; b < r.hi; b++)
	{
		Buffer		buf = ReadBuffer(rel, b);
		Page		page = BufferGetPage(buf);
		XxlPageOpaque *op = XXL_OPAQUE(page);

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		if (op->natts != fmt.natts)
			xxl_row_format_init(&fmt, desc, op->natts);
		xxl_page_open(page, &pbuf, &run);
		for (int row = 0; row < op->nrows; row++)
		{
			MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
			uint32		len;

			ExecClearTuple(slot);
			xxl_row_unpack(&fmt, xxl_run_row(&run, row, &len), slot->tts_values,
						   slot->tts_isnull);
			ExecStoreVirtualTuple(slot);
			xxl_tid_set(&slot->tts_tid, b, row);
			for (int k = 0; k < nindexes; k++)
			{
				Datum		values[INDEX_MAX_KEYS];
				bool		isnull[INDEX_MAX_KEYS];

				if (!indexes[k]->rd_index->indisready ||
					(preds[k] != NULL && !ExecQual(preds[k], econtext)))
					continue;
				FormIndexDatum(infos[k], slot, estate, values, isnull);
				index_insert(indexes[k], values, isnull, &slot->tts_tid, rel, UNIQUE_CHECK_NO,
							 false, infos[k]);
			}
			MemoryContextSwitchTo(old);
			ResetExprContext(econtext);
		}
		ReleaseBuffer(buf);
	}
	for (int k = 0; k < nindexes; k++)
		index_close(indexes[k], NoLock);
	xxl_page_buf_free(&pbuf);
done:
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	list_free(ids);
}

static bool
tid_in_range(ItemPointer tid, void *state)
{
	BlockRange *r = state;
	BlockNumber page = xxl_tid_page(tid);

	return page >= r->lo && page < r->hi;
}

/* Remove the index entries that name rows on pages [lo, hi). */
static void
unindex_pages(Relation rel, BlockRange r, BufferAccessStrategy strategy)
{
	Relation   *indexes;
	int			nindexes;

	vac_open_indexes(rel, RowExclusiveLock, &nindexes, &indexes);
	for (int i = 0; i < nindexes; i++)
	{
		IndexVacuumInfo ivinfo;
		IndexBulkDeleteResult *stats;

		memset(&ivinfo, 0, sizeof(ivinfo));
		ivinfo.index = indexes[i];
		ivinfo.estimated_count = true;
		ivinfo.message_level = DEBUG2;
		ivinfo.num_heap_tuples = Max(rel->rd_rel->reltuples, 0);
		ivinfo.strategy = strategy;
		stats = index_bulk_delete(&ivinfo, NULL, tid_in_range, &r);
		stats = index_vacuum_cleanup(&ivinfo, stats);
		if (stats)
			pfree(stats);
	}
	vac_close_indexes(nindexes, indexes, NoLock);
}

/* Copy pages [from, from + n) down to [to, to + n) (all below the end), WAL-logged. */
static void
copy_pages(Relation rel, BlockNumber from, BlockNumber to, BlockNumber n)
{
	for (BlockNumber i = 0; i < n; i++)
	{
		Buffer		src = ReadBuffer(rel, from + i);
		Buffer		dst = ReadBufferExtended(rel, MAIN_FORKNUM, to + i, RBM_ZERO_AND_LOCK, NULL);

		CHECK_FOR_INTERRUPTS();
		LockBuffer(src, BUFFER_LOCK_SHARE);
		START_CRIT_SECTION();
		memcpy(BufferGetPage(dst), BufferGetPage(src), BLCKSZ);
		MarkBufferDirty(dst);
		if (RelationNeedsWAL(rel))
			log_newpage_buffer(dst, true);
		END_CRIT_SECTION();
		UnlockReleaseBuffer(dst);
		UnlockReleaseBuffer(src);
	}
}

/* Where the copy of n pages goes: from from up, clear of the directory pages kept. */
static BlockNumber
copy_target(Relation rel, BlockNumber from, BlockNumber n, BlockNumber *dir_end)
{
	BlockNumber *blocks;
	int			ndir = xxl_dir_pages(rel, &blocks);
	bool		moved = true;

	*dir_end = XXL_META_BLOCK + 1;
	for (int i = 0; i < ndir; i++)
		*dir_end = Max(*dir_end, blocks[i] + 1);
	while (moved)
	{
		moved = false;
		for (int i = 0; i < ndir; i++)
			if (blocks[i] >= from && blocks[i] < from + n)
			{
				from = blocks[i] + 1;
				moved = true;
			}
	}
	if (blocks)
		pfree(blocks);
	return from;
}

/*
 * One merge of the segments at rel's end (ACCESS EXCLUSIVE lock held);
 * false when there was nothing to merge.
 */
static bool
merge_once(Relation rel, TransactionId oldest_xmin, BufferAccessStrategy strategy, int elevel)
{
	XxlDirectory dir;
	uint32		a;
	BlockRange	old,
				copy;
	XxlDeleted	dels;
	uint16		dels_flags;
	MergeInput	in;
	TupleTableSlot *slot;
	XxlSegment	segs[2];
	int			nsegs = 1;
	BlockNumber to,
				dir_end,
				end;
	uint32		merged;

	xxl_dir_load(rel, &dir);
	if (!choose(&dir, oldest_xmin, &a, &old.lo) || !worth_merging(rel, &dir, a, old.lo))
	{
		if (dir.segs)
			pfree(dir.segs);
		return false;
	}
	merged = dir.nsegments - a;
	old.hi = RelationGetNumberOfBlocks(rel);

	/*
	 * 1: the rows no merged delete names, sorted, as a new segment a at the
	 * end; the merged deletes of older rows after it as segment a + 1; the
	 * rows indexed.
	 */
	in.rel = rel;
	in.w = xxl_segment_writer_begin(rel);
	slot = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsVirtual);
	/*
	 * The region holds only the merged segments' pages (and dead ones): its
	 * committed rows that no committed delete names are theirs, as the
	 * merge takes them (a delete before them cannot name them).
	 */
	(void) xxl_scan_committed(rel, old.lo, old.hi, slot, put_merged_row, &in);
	ExecDropSingleTupleTableSlot(slot);
	xxl_segment_writer_end(in.w, rel, a, &segs[0]);
	xxl_deleted_load_from(rel, &dir, a, &dels, &dels_flags);
	LockRelationForExtension(rel, ExclusiveLock);
	if (xxl_deletes_write(rel, &dels, xxl_row_pos(old.lo, 0), a + 1, dels_flags, &segs[1]))
		nsegs = 2;
	UnlockRelationForExtension(rel, ExclusiveLock);
	xxl_deleted_free(&dels);
	copy.lo = segs[0].first_block;
	copy.hi = RelationGetNumberOfBlocks(rel);
	index_rows(rel, (BlockRange) {segs[0].first_block, segs[0].first_block + segs[0].npages});
	xxl_hold_point(XXL_HOLD_INPUT);

	/* 2: switched in; the old places unindexed */
	xxl_dir_truncate(rel, a, segs, nsegs);
	unindex_pages(rel, old, strategy);
	xxl_hold_point(XXL_HOLD_MERGE);

	/* 3: copied down, indexed there, switched, the first copy unindexed, the file cut */
	to = copy_target(rel, old.lo, copy.hi - copy.lo, &dir_end);
	if (to + (copy.hi - copy.lo) <= copy.lo)
	{
		copy_pages(rel, copy.lo, to, copy.hi - copy.lo);
		for (int i = 0; i < nsegs; i++)
			segs[i].first_block = to + (segs[i].first_block - copy.lo);
		index_rows(rel, (BlockRange) {segs[0].first_block, segs[0].first_block + segs[0].npages});
		xxl_hold_point(XXL_HOLD_OUTPUT);
		xxl_dir_truncate(rel, a, segs, nsegs);
		end = Max(to + (copy.hi - copy.lo), dir_end);
		unindex_pages(rel, (BlockRange) {end, InvalidBlockNumber}, strategy);
		RelationTruncate(rel, end);
	}
	else
		end = RelationGetNumberOfBlocks(rel);
	ereport(elevel,
			(errmsg("xxl table \"%s\": merged %u segments into %d; %u pages before, %u after",
					RelationGetRelationName(rel), merged, nsegs, old.hi, end)));
	pfree(dir.segs);
	return true;
}

void
xxl_table_merge(Relation rel, TransactionId oldest_xmin, BufferAccessStrategy strategy,
				int elevel)
{
	if (!ConditionalLockRelation(rel, AccessExclusiveLock))
	{
		ereport(elevel,
				(errmsg("xxl table \"%s\": segments not merged, the table is in use",
						RelationGetRelationName(rel))));
		return;
	}
	/* a serializable transaction's locks on rows that move cover the table instead */
	TransferPredicateLocksToHeapRelation(rel);
	while (merge_once(rel, oldest_xmin, strategy, elevel))
	{
		/* someone waits for the table: the rest another time */
		if (LockHasWaitersRelation(rel, AccessExclusiveLock))
			break;
	}
	UnlockRelation(rel, AccessExclusiveLock);
}
