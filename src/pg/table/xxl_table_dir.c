/*
 * xxl_table_dir.c — the segment directory of an xxl table: the metapage
 * (block 0, created by the first write) and further directory pages, and
 * which segments a snapshot sees.
 *
 * The metapage holds the first entries and lists the first directory
 * pages; the pages after those form a chain through their special space,
 * so the directory has no size limit.  Appends hold the relation's
 * extension lock (a writer holds it anyway while it extends the relation
 * by its segment's pages) and the metapage's exclusive lock; readers copy
 * the directory under the metapage's share lock.  A changed page is
 * WAL-logged whole, a new directory page (and the link to it) before the
 * metapage that counts its entry, so that a crash between the two leaves
 * an entry nobody counts.  A merge's switch changes an entry and the
 * count in one record (xxl_dir_truncate).
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "catalog/pg_control.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "pg/table/xxl_table_storage.h"
#include "pg/runtime/runtime.h"

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

/* Directory pages the metapage lists (a table created before 0.7: all of them). */
static inline uint32
listed_of(const XxlMeta *m)
{
	return m->listed ? m->listed : XXL_META_DIRPAGES;
}

/* Directory pages that n entries take. */
static inline uint32
dirpages_for(uint32 n)
{
	return n <= XXL_META_SEGS ? 0 : (n - XXL_META_SEGS + XXL_DIR_SEGS - 1) / XXL_DIR_SEGS;
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

/*
 * The metapage's format is the one this library writes: a table written by
 * a later format is not read by guesswork (nor one whose metapage is not
 * an xxl table's at all).
 */
static void
check_format(Relation rel, const XxlMeta *m)
{
	if (m->magic != XXL_TABLE_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("xxl table \"%s\" has no valid metapage", RelationGetRelationName(rel))));
	if (m->version != XXL_TABLE_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("xxl table \"%s\" has format version %u, this pgxxl library reads version %u",
						RelationGetRelationName(rel), m->version, XXL_TABLE_VERSION),
				 errhint("Install the pgxxl library that wrote the table.")));
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

void
xxl_write_new_page(Relation rel, PGAlignedBlock *image, BufferAccessStrategy strategy)
{
	Buffer		buf;

	buf = xxl_extend(rel, strategy);
	START_CRIT_SECTION();
	memcpy(BufferGetPage(buf), image->data, BLCKSZ);
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
		log_newpage_buffer(buf, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buf);
}

/* A new page at the end of rel, locked exclusively (extension lock held). */
static Buffer
new_page(Relation rel)
{
	return xxl_extend(rel, NULL);
}

/*
 * Pages changed together, WAL-logged whole in one record, so that a crash
 * keeps all or none of the changes (in a critical section).  A metapage
 * written before 0.7 gets the pd_lower that covers the fields 0.7 added.
 */
static void
log_pages(Relation rel, Buffer *bufs, int n)
{
	for (int i = 0; i < n; i++)
	{
		Page		page = BufferGetPage(bufs[i]);

		if (xxl_page_is(page, XXL_PAGE_META))
			((PageHeader) page)->pd_lower = Max(((PageHeader) page)->pd_lower,
												SizeOfPageHeaderData + sizeof(XxlMeta));
		MarkBufferDirty(bufs[i]);
	}
	if (RelationNeedsWAL(rel))
	{
		XLogRecPtr	lsn;

		XLogBeginInsert();
		for (int i = 0; i < n; i++)
			XLogRegisterBuffer(i, bufs[i], REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
		lsn = XLogInsert(RM_XLOG_ID, XLOG_FPI);
		for (int i = 0; i < n; i++)
			PageSetLSN(BufferGetPage(bufs[i]), lsn);
	}
}

static void
log_page(Relation rel, Buffer buf)
{
	log_pages(rel, &buf, 1);
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
		XxlMeta    *m;

		if (!create)
			return InvalidBuffer;
		buf = new_page(rel);
		if (BufferGetBlockNumber(buf) != XXL_META_BLOCK)
			elog(ERROR, "xxl table \"%s\": metapage created at block %u",
				 RelationGetRelationName(rel), BufferGetBlockNumber(buf));
		START_CRIT_SECTION();
		page_init(BufferGetPage(buf), XXL_PAGE_META);
		m = meta_of(BufferGetPage(buf));
		m->magic = XXL_TABLE_MAGIC;
		m->version = XXL_TABLE_VERSION;
		m->listed = xxl_test_listed_dirpages;
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
	check_format(rel, meta_of(BufferGetPage(buf)));
	return buf;
}

/* The block of the chained directory page after the one at block (its special space names it). */
static BlockNumber
next_dirpage(Relation rel, BlockNumber block)
{
	Buffer		buf = ReadBuffer(rel, block);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	check_page(rel, buf, XXL_PAGE_DIR);
	block = XXL_OPAQUE(BufferGetPage(buf))->segno;
	UnlockReleaseBuffer(buf);
	return block;
}

/*
 * Directory page p (0-based), pinned and locked in mode; after is page
 * p - 1's block when the caller has it (InvalidBlockNumber: walk the chain
 * from the last listed page).
 */
static Buffer
dir_buffer(Relation rel, const XxlMeta *m, uint32 p, BlockNumber after, int mode)
{
	uint32		listed = listed_of(m);
	BlockNumber block;
	Buffer		buf;

	if (p >= m->ndirpages)
		elog(ERROR, "xxl table \"%s\" has no directory page %u", RelationGetRelationName(rel), p);
	if (p < listed)
		block = m->dirpages[p];
	else if (p == m->ndirpages - 1 && m->lastdir != 0)
		block = m->lastdir;
	else
	{
		uint32		q = after != InvalidBlockNumber ? p - 1 : listed - 1;

		block = after != InvalidBlockNumber ? after : m->dirpages[listed - 1];
		for (; q < p && block != XXL_META_BLOCK; q++)
			block = next_dirpage(rel, block);
	}
	if (block == XXL_META_BLOCK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("xxl table \"%s\": directory page %u is missing",
						RelationGetRelationName(rel), p)));
	buf = ReadBuffer(rel, block);
	LockBuffer(buf, mode);
	check_page(rel, buf, XXL_PAGE_DIR);
	return buf;
}

/* The entry of segno, on the metapage or on its directory page (pinned and locked). */
static XxlSegment *
entry_of(Relation rel, XxlMeta *m, uint32 segno, Buffer *dirbuf)
{
	*dirbuf = InvalidBuffer;
	if (segno < XXL_META_SEGS)
		return &m->segs[segno];
	*dirbuf = dir_buffer(rel, m, (segno - XXL_META_SEGS) / XXL_DIR_SEGS, InvalidBlockNumber,
						 BUFFER_LOCK_EXCLUSIVE);
	return &dir_entries(BufferGetPage(*dirbuf))[(segno - XXL_META_SEGS) % XXL_DIR_SEGS];
}

void
xxl_dir_load(Relation rel, XxlDirectory *dir)
{
	Buffer		meta = meta_buffer(rel, BUFFER_LOCK_SHARE, false);
	XxlMeta    *m;
	uint32		n;
	BlockNumber block = InvalidBlockNumber;

	dir->nsegments = 0;
	dir->segs = NULL;
	if (!BufferIsValid(meta))
		return;
	m = meta_of(BufferGetPage(meta));
	n = m->nsegments;
	dir->nsegments = n;
	dir->segs = palloc(sizeof(XxlSegment) * Max(n, 1));
	memcpy(dir->segs, m->segs, sizeof(XxlSegment) * Min(n, XXL_META_SEGS));
	for (uint32 p = 0; p < dirpages_for(n); p++)
	{
		Buffer		buf = dir_buffer(rel, m, p, block, BUFFER_LOCK_SHARE);
		uint32		first = XXL_META_SEGS + p * XXL_DIR_SEGS;

		memcpy(dir->segs + first, dir_entries(BufferGetPage(buf)),
			   sizeof(XxlSegment) * Min(XXL_DIR_SEGS, n - first));
		block = BufferGetBlockNumber(buf);
		UnlockReleaseBuffer(buf);
	}
	UnlockReleaseBuffer(meta);
}

int
xxl_dir_pages(Relation rel, BlockNumber **blocks)
{
	Buffer		meta = meta_buffer(rel, BUFFER_LOCK_SHARE, false);
	XxlMeta    *m;
	BlockNumber block = InvalidBlockNumber;
	int			n;

	*blocks = NULL;
	if (!BufferIsValid(meta))
		return 0;
	m = meta_of(BufferGetPage(meta));
	n = m->ndirpages;
	*blocks = palloc(sizeof(BlockNumber) * Max(n, 1));
	for (int p = 0; p < n; p++)
	{
		Buffer		buf = dir_buffer(rel, m, p, block, BUFFER_LOCK_SHARE);

		block = (*blocks)[p] = BufferGetBlockNumber(buf);
		UnlockReleaseBuffer(buf);
	}
	UnlockReleaseBuffer(meta);
	return n;
}

/*
 * A new directory page, counted in ndirpages before any entry is on it
 * (metapage locked exclusively, extension lock held): linked from the
 * chain's last page, or listed.  The page and the link are logged before
 * the metapage, so a crash between them leaves a page nobody counts.
 */
static void
add_dirpage(Relation rel, Buffer meta)
{
	XxlMeta    *m = meta_of(BufferGetPage(meta));
	uint32		p = m->ndirpages;
	Buffer		prevbuf = InvalidBuffer;
	Buffer		buf;
	BlockNumber block;

	if (p >= listed_of(m))
		prevbuf = dir_buffer(rel, m, p - 1, InvalidBlockNumber, BUFFER_LOCK_EXCLUSIVE);
	buf = new_page(rel);
	block = BufferGetBlockNumber(buf);
	START_CRIT_SECTION();
	page_init(BufferGetPage(buf), XXL_PAGE_DIR);
	log_page(rel, buf);
	if (BufferIsValid(prevbuf))
	{
		XXL_OPAQUE(BufferGetPage(prevbuf))->segno = block;
		log_page(rel, prevbuf);
		m->lastdir = block;
	}
	else
		m->dirpages[p] = block;
	m->ndirpages++;
	log_page(rel, meta);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buf);
	if (BufferIsValid(prevbuf))
		UnlockReleaseBuffer(prevbuf);
}

/*
 * Whether the entry of segment n needs a directory page not there yet.
 */
static inline bool
needs_dirpage(const XxlMeta *m, uint32 n)
{
	return dirpages_for(n + 1) > m->ndirpages;
}

uint32
xxl_dir_prepare(Relation rel)
{
	Buffer		meta = meta_buffer(rel, BUFFER_LOCK_EXCLUSIVE, true);
	uint32		n;

	/*
	 * The directory page the entry will need comes now, before the
	 * segment's pages: directory pages then never lie among the pages of
	 * the segments after them, which a merge rewrites.
	 */
	n = meta_of(BufferGetPage(meta))->nsegments;
	if (needs_dirpage(meta_of(BufferGetPage(meta)), n))
		add_dirpage(rel, meta);
	UnlockReleaseBuffer(meta);
	return n;
}

uint32
xxl_dir_append(Relation rel, const XxlSegment *seg)
{
	Buffer		meta = meta_buffer(rel, BUFFER_LOCK_EXCLUSIVE, true);
	XxlMeta    *m = meta_of(BufferGetPage(meta));
	uint32		n = m->nsegments;
	Buffer		dirbuf;
	XxlSegment *e;

	if (n == PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("xxl table \"%s\" has %u segments, the most it can hold",
						RelationGetRelationName(rel), n),
				 errhint("Merge them with VACUUM.")));
	if (needs_dirpage(m, n))
		add_dirpage(rel, meta);
	e = entry_of(rel, m, n, &dirbuf);

	START_CRIT_SECTION();
	*e = *seg;
	/* the entry's page before the metapage that counts it */
	if (BufferIsValid(dirbuf))
		log_page(rel, dirbuf);
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
	Buffer		dirbuf;
	XxlSegment *e;

	if (segno >= m->nsegments)
		elog(ERROR, "xxl table \"%s\": no segment %u to update", RelationGetRelationName(rel), segno);
	e = entry_of(rel, m, segno, &dirbuf);
	START_CRIT_SECTION();
	*e = *seg;
	log_page(rel, BufferIsValid(dirbuf) ? dirbuf : meta);
	END_CRIT_SECTION();
	if (BufferIsValid(dirbuf))
		UnlockReleaseBuffer(dirbuf);
	UnlockReleaseBuffer(meta);
}

void
xxl_dir_truncate(Relation rel, uint32 segno, const XxlSegment *segs, int nsegs)
{
	Buffer		meta = meta_buffer(rel, BUFFER_LOCK_EXCLUSIVE, false);
	XxlMeta    *m = meta_of(BufferGetPage(meta));
	uint32		keep = dirpages_for(segno + nsegs);
	BlockNumber lastdir = 0;
	Buffer		bufs[3];
	int			nbufs = 1;
	XxlSegment *e[2];

	Assert(nsegs >= 1 && nsegs <= 2);
	if (segno + nsegs > m->nsegments)
		elog(ERROR, "xxl table \"%s\": no segments %u to %u to merge into",
			 RelationGetRelationName(rel), segno, segno + nsegs - 1);
	bufs[0] = meta;
	for (int i = 0; i < nsegs; i++)
	{
		Buffer		dirbuf = InvalidBuffer;

		/* the second entry may share the first one's page */
		if (i > 0 && segno + i >= XXL_META_SEGS && segno >= XXL_META_SEGS &&
			(segno + i - XXL_META_SEGS) / XXL_DIR_SEGS == (segno - XXL_META_SEGS) / XXL_DIR_SEGS)
		{
			e[i] = e[0] + i;
			continue;
		}
		e[i] = entry_of(rel, m, segno + i, &dirbuf);
		if (BufferIsValid(dirbuf))
			bufs[nbufs++] = dirbuf;
	}
	/* the chain's new last page: the page of the last entry kept, if chained */
	if (keep > listed_of(m))
		lastdir = BufferGetBlockNumber(bufs[nbufs - 1]);
	START_CRIT_SECTION();
	for (int i = 0; i < nsegs; i++)
		*e[i] = segs[i];
	m->nsegments = segno + nsegs;
	m->ndirpages = keep;
	m->lastdir = lastdir;
	log_pages(rel, bufs, nbufs);
	END_CRIT_SECTION();
	for (int i = 1; i < nbufs; i++)
		UnlockReleaseBuffer(bufs[i]);
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
	BlockNumber block = InvalidBlockNumber;

	*live_rows = *dead_rows = 0;
	*live_pages = 0;
	if (!BufferIsValid(meta))
		return oldest;
	m = meta_of(BufferGetPage(meta));
	for (uint32 p = 0; p < dirpages_for(m->nsegments); p++)
	{
		Buffer		buf = dir_buffer(rel, m, p, block, BUFFER_LOCK_EXCLUSIVE);
		uint32		first = XXL_META_SEGS + p * XXL_DIR_SEGS;
		XxlSegment *e;
		bool		page_changed = false;

		block = BufferGetBlockNumber(buf);
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
