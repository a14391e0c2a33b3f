/*
 * xxl_table_dir.c — the segment directory of an xxl table: the metapage
 * (block 0, created by the first write) and further directory pages, and
 * which segments a snapshot sees.
 *
 * Appends hold the relation's extension lock (a writer holds it anyway
 * while it extends the relation by its segment's pages) and the metapage's
 * exclusive lock; readers copy the directory under the metapage's share
 * lock.  A changed page is WAL-logged whole, a new directory page before
 * the metapage that counts its entry, so that a crash between the two
 * leaves an entry nobody counts.
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "pg/table/xxl_table.h"

static inline XxlMeta *
meta_of(Page page)
{
	return (XxlMeta *) PageGetContents(page);
}

static inline XxlSegment *
dir_entries(Page page)
{
	return (XxlSegment *) PageGetContents(page);
}

/*
 * A new meta or directory page.  pd_lower covers the contents: a full-page
 * image leaves out the hole between pd_lower and pd_upper, and would drop
 * the directory otherwise.
 */
static void
page_init(Page page, XxlPageKind kind)
{
	XxlPageOpaque *op;

	PageInit(page, BLCKSZ, sizeof(XxlPageOpaque));
	op = XXL_OPAQUE(page);
	op->magic = XXL_TABLE_MAGIC;
	op->kind = kind;
	((PageHeader) page)->pd_lower = SizeOfPageHeaderData +
		(kind == XXL_PAGE_META ? sizeof(XxlMeta) : XXL_DIR_SEGS * sizeof(XxlSegment));
}

static void
check_page(Relation rel, Buffer buf, XxlPageKind kind)
{
	Page		page = BufferGetPage(buf);

	if (!xxl_page_is(page, kind))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("block %u of xxl table \"%s\" is not a %s page",
						BufferGetBlockNumber(buf), RelationGetRelationName(rel),
						kind == XXL_PAGE_META ? "meta" : "directory")));
}

Buffer
xxl_extend(Relation rel, BufferAccessStrategy strategy)
{
	Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_ZERO_AND_LOCK, strategy);

	/* the zeroed page left behind is no xxl page: scans step over it */
	if (BufferGetBlockNumber(buf) >= XXL_MAX_PAGES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("xxl table \"%s\" cannot grow beyond %u pages",
						RelationGetRelationName(rel), XXL_MAX_PAGES),
				 errhint("Compact the table, or keep part of the rows in another table.")));
	return buf;
}

/* A new page at the end of rel, locked exclusively (extension lock held). */
static Buffer
new_page(Relation rel)
{
	return xxl_extend(rel, NULL);
}

static void
log_page(Relation rel, Buffer buf)
{
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
		log_newpage_buffer(buf, true);
}

/*
 * The metapage, pinned and locked in mode; InvalidBuffer when the relation
 * is still empty, unless create (extension lock held): then it is made.
 */
static Buffer
meta_buffer(Relation rel, int mode, bool create)
{
	Buffer		buf;

	if (RelationGetNumberOfBlocks(rel) == 0)
	{
		if (!create)
			return InvalidBuffer;
		buf = new_page(rel);
		if (BufferGetBlockNumber(buf) != XXL_META_BLOCK)
			elog(ERROR, "xxl table \"%s\": metapage created at block %u",
				 RelationGetRelationName(rel), BufferGetBlockNumber(buf));
		START_CRIT_SECTION();
		page_init(BufferGetPage(buf), XXL_PAGE_META);
		meta_of(BufferGetPage(buf))->magic = XXL_TABLE_MAGIC;
		meta_of(BufferGetPage(buf))->version = XXL_TABLE_VERSION;
		log_page(rel, buf);
		END_CRIT_SECTION();
		if (mode != BUFFER_LOCK_EXCLUSIVE)
		{
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			LockBuffer(buf, mode);
		}
		return buf;
	}
	buf = ReadBuffer(rel, XXL_META_BLOCK);
	LockBuffer(buf, mode);
	check_page(rel, buf, XXL_PAGE_META);
	return buf;
}

void
xxl_dir_load(Relation rel, XxlDirectory *dir)
{
	Buffer		meta = meta_buffer(rel, BUFFER_LOCK_SHARE, false);
	XxlMeta    *m;
	uint32		n;

	dir->nsegments = 0;
	dir->segs = NULL;
	if (!BufferIsValid(meta))
		return;
	m = meta_of(BufferGetPage(meta));
	n = m->nsegments;
	dir->nsegments = n;
	dir->segs = palloc(sizeof(XxlSegment) * Max(n, 1));
	memcpy(dir->segs, m->segs, sizeof(XxlSegment) * Min(n, XXL_META_SEGS));
	for (uint32 p = 0; n > XXL_META_SEGS && p * XXL_DIR_SEGS < n - XXL_META_SEGS; p++)
	{
		Buffer		buf = ReadBuffer(rel, m->dirpages[p]);
		uint32		first = XXL_META_SEGS + p * XXL_DIR_SEGS;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		check_page(rel, buf, XXL_PAGE_DIR);
		memcpy(dir->segs + first, dir_entries(BufferGetPage(buf)),
			   sizeof(XxlSegment) * Min(XXL_DIR_SEGS, n - first));
		UnlockReleaseBuffer(buf);
	}
	UnlockReleaseBuffer(meta);
}

uint32
xxl_dir_prepare(Relation rel)
{
	Buffer		meta = meta_buffer(rel, BUFFER_LOCK_SHARE, true);
	uint32		n;

	n = meta_of(BufferGetPage(meta))->nsegments;
	UnlockReleaseBuffer(meta);
	return n;
}

uint32
xxl_dir_append(Relation rel, const XxlSegment *seg)
{
	Buffer		meta = meta_buffer(rel, BUFFER_LOCK_EXCLUSIVE, true);
	XxlMeta    *m = meta_of(BufferGetPage(meta));
	uint32		n = m->nsegments;
	Buffer		dirbuf = InvalidBuffer;
	bool		fresh = false;

	if (n >= XXL_MAX_SEGMENTS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("xxl table \"%s\" has %u segments, the most it can hold",
						RelationGetRelationName(rel), n),
				 errhint("Merge them into one with VACUUM FULL.")));
	if (n >= XXL_META_SEGS)
	{
		uint32		p = (n - XXL_META_SEGS) / XXL_DIR_SEGS;

		if (p == m->ndirpages)
		{
			dirbuf = new_page(rel);
			fresh = true;
		}
		else
		{
			dirbuf = ReadBuffer(rel, m->dirpages[p]);
			LockBuffer(dirbuf, BUFFER_LOCK_EXCLUSIVE);
			check_page(rel, dirbuf, XXL_PAGE_DIR);
		}
	}

	START_CRIT_SECTION();
	if (BufferIsValid(dirbuf))
	{
		Page		page = BufferGetPage(dirbuf);

		if (fresh)
		{
			page_init(page, XXL_PAGE_DIR);
			m->dirpages[m->ndirpages++] = BufferGetBlockNumber(dirbuf);
		}
		dir_entries(page)[(n - XXL_META_SEGS) % XXL_DIR_SEGS] = *seg;
		/* the entry's page before the metapage that counts it */
		log_page(rel, dirbuf);
	}
	else
		m->segs[n] = *seg;
	m->nsegments = n + 1;
	log_page(rel, meta);
	END_CRIT_SECTION();

	if (BufferIsValid(dirbuf))
		UnlockReleaseBuffer(dirbuf);
	UnlockReleaseBuffer(meta);
	return n;
}

void
xxl_dir_update(Relation rel, uint32 segno, const XxlSegment *seg)
{
	Buffer		meta = meta_buffer(rel, BUFFER_LOCK_EXCLUSIVE, false);
	XxlMeta    *m = meta_of(BufferGetPage(meta));
	Buffer		dirbuf = InvalidBuffer;

	if (segno >= m->nsegments)
		elog(ERROR, "xxl table \"%s\": no segment %u to update", RelationGetRelationName(rel), segno);
	if (segno >= XXL_META_SEGS)
	{
		dirbuf = ReadBuffer(rel, m->dirpages[(segno - XXL_META_SEGS) / XXL_DIR_SEGS]);
		LockBuffer(dirbuf, BUFFER_LOCK_EXCLUSIVE);
		check_page(rel, dirbuf, XXL_PAGE_DIR);
	}
	START_CRIT_SECTION();
	if (BufferIsValid(dirbuf))
	{
		dir_entries(BufferGetPage(dirbuf))[(segno - XXL_META_SEGS) % XXL_DIR_SEGS] = *seg;
		log_page(rel, dirbuf);
	}
	else
	{
		m->segs[segno] = *seg;
		log_page(rel, meta);
	}
	END_CRIT_SECTION();
	if (BufferIsValid(dirbuf))
		UnlockReleaseBuffer(dirbuf);
	UnlockReleaseBuffer(meta);
}

bool
xxl_segment_visible(const XxlSegment *seg, Snapshot snapshot)
{
	TransactionId xmin = seg->xmin;

	if (snapshot->snapshot_type == SNAPSHOT_DIRTY)
	{
		snapshot->xmin = snapshot->xmax = InvalidTransactionId;
		snapshot->speculativeToken = 0;
	}
	if ((seg->flags & XXL_SEG_DEAD) || !TransactionIdIsValid(xmin))
		return false;
	switch (snapshot->snapshot_type)
	{
		case SNAPSHOT_ANY:
			return true;
		case SNAPSHOT_MVCC:
			if (xmin == FrozenTransactionId)
				return true;
			if (TransactionIdIsCurrentTransactionId(xmin))
				return seg->cmin < snapshot->curcid;
			if (XidInMVCCSnapshot(xmin, snapshot))
			{
				/*
				 * Compaction replaced every segment by this one, which a
				 * snapshot older than it cannot see: it would read an empty
				 * table.  Heap's VACUUM FULL keeps each row's xmin; one
				 * merged segment has one, so such a snapshot fails loudly.
				 */
				if (seg->flags & XXL_SEG_REWRITE)
					ereport(ERROR,
							(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
							 errmsg("could not serialize access: an xxl table was compacted after this transaction's snapshot was taken"),
							 errdetail("xxl.compact, VACUUM FULL or CLUSTER rewrote it into one segment that snapshots older than the rewrite cannot see."),
							 errhint("Retry the transaction.")));
				return false;
			}
			return TransactionIdDidCommit(xmin);
		case SNAPSHOT_SELF:
			if (xmin == FrozenTransactionId || TransactionIdIsCurrentTransactionId(xmin))
				return true;
			if (TransactionIdIsInProgress(xmin))
				return false;
			return TransactionIdDidCommit(xmin);
		case SNAPSHOT_DIRTY:
			/* (xmin, xmax reset above, as HeapTupleSatisfiesDirty does: callers read them) */
			if (xmin == FrozenTransactionId || TransactionIdIsCurrentTransactionId(xmin))
				return true;
			if (TransactionIdIsInProgress(xmin))
			{
				snapshot->xmin = xmin;
				return true;
			}
			return TransactionIdDidCommit(xmin);
		case SNAPSHOT_TOAST:
		case SNAPSHOT_NON_VACUUMABLE:
			return xmin == FrozenTransactionId || TransactionIdIsCurrentTransactionId(xmin) ||
				TransactionIdIsInProgress(xmin) || TransactionIdDidCommit(xmin);
		case SNAPSHOT_HISTORIC_MVCC:
			break;
	}
	elog(ERROR, "xxl tables do not support snapshot type %d", (int) snapshot->snapshot_type);
	return false;
}

bool
xxl_segment_committed(const XxlSegment *seg)
{
	TransactionId xmin = seg->xmin;

	if ((seg->flags & XXL_SEG_DEAD) || !TransactionIdIsValid(xmin))
		return false;
	return xmin == FrozenTransactionId || TransactionIdIsCurrentTransactionId(xmin) ||
		(!TransactionIdIsInProgress(xmin) && TransactionIdDidCommit(xmin));
}

/*
 * One entry's VACUUM; true when it changed.  A committed delete segment's
 * rows count as dead (until compaction drops them); an aborted one's as
 * nothing, its rows are still there.
 */
static bool
vacuum_entry(XxlSegment *seg, TransactionId freeze_limit, TransactionId *oldest,
			 double *live_rows, BlockNumber *live_pages, double *dead_rows)
{
	TransactionId xmin = seg->xmin;
	bool		deletes = (seg->flags & XXL_SEG_DELETES) != 0;

	if (seg->flags & XXL_SEG_DEAD)
		return false;
	if (xmin != FrozenTransactionId && TransactionIdIsNormal(xmin) &&
		!TransactionIdIsCurrentTransactionId(xmin) && !TransactionIdIsInProgress(xmin) &&
		!TransactionIdDidCommit(xmin))
	{
		seg->flags |= XXL_SEG_DEAD;
		if (!deletes)
			*dead_rows += seg->nrows;
		return true;
	}
	if (deletes)
	{
		*live_rows -= seg->nrows;
		*dead_rows += seg->nrows;
	}
	else
	{
		*live_rows += seg->nrows;
		*live_pages += seg->npages;
	}
	if (xmin == FrozenTransactionId || !TransactionIdIsNormal(xmin))
		return false;
	if (TransactionIdPrecedes(xmin, freeze_limit) && TransactionIdDidCommit(xmin))
	{
		seg->xmin = FrozenTransactionId;
		return true;
	}
	if (TransactionIdPrecedes(xmin, *oldest))
		*oldest = xmin;
	return false;
}

TransactionId
xxl_dir_vacuum(Relation rel, TransactionId freeze_limit, double *live_rows,
			   BlockNumber *live_pages, double *dead_rows)
{
	Buffer		meta = meta_buffer(rel, BUFFER_LOCK_EXCLUSIVE, false);
	TransactionId oldest = freeze_limit;
	XxlMeta    *m;
	bool		changed = false;

	*live_rows = *dead_rows = 0;
	*live_pages = 0;
	if (!BufferIsValid(meta))
		return oldest;
	m = meta_of(BufferGetPage(meta));
	for (uint32 p = 0; p * XXL_DIR_SEGS + XXL_META_SEGS < m->nsegments; p++)
	{
		Buffer		buf = ReadBuffer(rel, m->dirpages[p]);
		uint32		first = XXL_META_SEGS + p * XXL_DIR_SEGS;
		XxlSegment *e;
		bool		page_changed = false;

		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		check_page(rel, buf, XXL_PAGE_DIR);
		e = dir_entries(BufferGetPage(buf));
		START_CRIT_SECTION();
		for (uint32 i = 0; i < XXL_DIR_SEGS && first + i < m->nsegments; i++)
			page_changed |= vacuum_entry(&e[i], freeze_limit, &oldest, live_rows, live_pages,
										 dead_rows);
		if (page_changed)
			log_page(rel, buf);
		END_CRIT_SECTION();
		UnlockReleaseBuffer(buf);
	}
	START_CRIT_SECTION();
	for (uint32 i = 0; i < Min(m->nsegments, XXL_META_SEGS); i++)
		changed |= vacuum_entry(&m->segs[i], freeze_limit, &oldest, live_rows, live_pages,
								dead_rows);
	if (changed)
		log_page(rel, meta);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(meta);
	*live_rows = Max(*live_rows, 0);
	return oldest;
}
