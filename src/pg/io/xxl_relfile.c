/*
 * xxl_relfile.c — whole pages appended to a relation's main fork outside
 * shared buffers (see xxl_relfile.h).
 *
 * Callers build their pages in the writer's batch (xxl_relfile_page), which
 * goes to the files in one write of 256 kB rather than through
 * smgrextend(), which takes one 8 kB block per call: small writes cost a
 * system call and a page-cache lookup each, and larger ones than 256 kB
 * make the kernel look for larger folios, which was slower (a suffix
 * array's table is some fifty times its text).  The files are laid out as md.c lays them out (segments of
 * RELSEG_SIZE blocks, the n-th named "<path>.n"), which is how md.c finds
 * them again by their sizes: md.c keeps no size of its own outside
 * recovery, so a relation it also has open (an xxl table's metapage goes
 * through buffers) sees the new blocks at its next look.
 *
 * Behind the writing, the pages are sent to disk and dropped from the page
 * cache a few megabytes at a time (WRITE_BEHIND), as PostgreSQL's bulk
 * writes keep to a ring of buffers: an output far larger than the operator's
 * memory should not push everything else out of the cache, and page cache
 * that must be found afresh for every page is the dearest part of writing
 * on a virtual machine, where write-behind keeps the cost the same whether
 * the kernel has free memory or not.  Only the page cache changes: what is
 * on disk or in shared buffers is the same either way.  A writer whose
 * pages are likely read soon (an xxl table's segment) keeps them instead,
 * for the scan that follows a load (docs/table.md).
 *
 * When the relation needs WAL (wal_level above minimal, or a relation not
 * new in this transaction) the pages are logged as full-page images
 * (log_newpages).  A checkpoint cannot flush pages that never were in
 * shared buffers, so they must reach the disk before a checkpoint whose redo
 * point lies after their WAL completes.  If no checkpoint began while they
 * were written, asking the checkpointer to fsync the segments written
 * (RegisterSyncRequest, as md.c does for every write through buffers)
 * guarantees that: the next checkpoint syncs them before it completes, and
 * a crash before then replays their images from the redo point before.
 * Otherwise, or when the checkpointer's queue is full, the fork is synced
 * at the end.  (PostgreSQL 17's bulk_write.c decides the same way: a
 * segment's fsync at the end of a large COPY is what it spares.)  An unlogged
 * relation is synced at the end, as PostgreSQL's own bulk writes do; at
 * wal_level = minimal the commit's pending sync of new relfilenodes covers
 * a permanent one.
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "common/relpath.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufpage.h"
#include "storage/fd.h"
#include "storage/proc.h"
#include "storage/smgr.h"
#include "storage/sync.h"
#include "utils/rel.h"

#include "pg/io/xxl_relfile.h"

#define WRITE_BEHIND ((off_t) 8 * 1024 * 1024)	/* bytes per writeback step */
#define BATCH_PAGES 32			/* pages per write: 256 kB */

struct XxlRelFile
{
	Relation	rel;
	MemoryContext cxt;
	char	   *file_path;		/* the main fork's first segment */
	int			seg_fd;			/* open segment (transient file), or -1 */
	char	   *seg_path;		/* its path */
	BlockNumber seg_no;			/* which one */
	off_t		seg_written;	/* bytes of it written up to here by this writer, */
	off_t		seg_flushing;	/* ... of which writeback has been started up to here, */
	off_t		seg_dropped;	/* ... of which the page cache has been let go up to here */
	bool		drop_behind;
	bool		wal;			/* pages logged as full-page images */
	XLogRecPtr	redo_at_start;	/* the redo point when writing began */
	BlockNumber seg_lo,			/* segments written: seg_lo .. seg_hi, */
				seg_hi;			/* ... none while seg_lo > seg_hi */
	char	   *batch;			/* BATCH_PAGES pages: the built ones, then the one being built */
	int			nbuilt;			/* built pages in it */
	BlockNumber batch_first;	/* block of its first page */
};

XxlRelFile *
xxl_relfile_begin(Relation rel, BlockNumber first, bool drop_behind)
{
	XxlRelFile *f = palloc0(sizeof(XxlRelFile));

	f->rel = rel;
	f->batch = palloc((Size) BATCH_PAGES * BLCKSZ);
	f->batch_first = first;
	f->drop_behind = drop_behind;
	f->wal = RelationNeedsWAL(rel);
	f->redo_at_start = GetRedoRecPtr();
	f->seg_lo = InvalidBlockNumber;
	f->seg_hi = 0;
	f->cxt = CurrentMemoryContext;
	f->file_path = relpath(RelationGetSmgr(rel)->smgr_rnode, MAIN_FORKNUM);
	f->seg_fd = -1;
	return f;
}

/* The open file of segment seg_no, created when it is new; start: this writer's first byte in it. */
static int
segment(XxlRelFile *f, BlockNumber seg_no, off_t start)
{
	MemoryContext old;
	int			fd;

	if (f->seg_fd >= 0 && f->seg_no == seg_no)
		return f->seg_fd;
	if (f->seg_fd >= 0)
		CloseTransientFile(f->seg_fd);
	f->seg_fd = -1;
	if (f->seg_path)
		pfree(f->seg_path);
	/* rows may be put from a per-row context that is reset right after */
	old = MemoryContextSwitchTo(f->cxt);
	f->seg_path = seg_no == 0 ? pstrdup(f->file_path) : psprintf("%s.%u", f->file_path, seg_no);
	MemoryContextSwitchTo(old);
	fd = OpenTransientFile(f->seg_path, O_RDWR | O_CREAT | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", f->seg_path)));
	f->seg_fd = fd;
	f->seg_no = seg_no;
	f->seg_lo = Min(f->seg_lo, seg_no);
	f->seg_hi = Max(f->seg_hi, seg_no);
	f->seg_written = f->seg_flushing = f->seg_dropped = start;
	return fd;
}

/*
 * Once WRITE_BEHIND more bytes of the open segment are written, start their
 * writeback, and wait for and drop the step before the one started last
 * time, which has had a step's worth of writing to finish.  (PostgreSQL's
 * own pg_flush_data() does nothing when fsync is off, but this is about
 * memory, not durability.)
 */
static void
write_behind(XxlRelFile *f)
{
#if defined(HAVE_SYNC_FILE_RANGE) && defined(USE_POSIX_FADVISE)
	int			fd = f->seg_fd;

	if (!f->drop_behind || f->seg_written - f->seg_flushing < WRITE_BEHIND)
		return;
	if (f->seg_flushing - f->seg_dropped >= WRITE_BEHIND)
	{
		off_t		len = f->seg_flushing - f->seg_dropped;

		/* failures only mean the pages stay cached; a sync reports I/O errors */
		(void) sync_file_range(fd, f->seg_dropped, len,
							   SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
							   SYNC_FILE_RANGE_WAIT_AFTER);
		(void) posix_fadvise(fd, f->seg_dropped, len, POSIX_FADV_DONTNEED);
		f->seg_dropped = f->seg_flushing;
	}
	(void) sync_file_range(fd, f->seg_flushing, f->seg_written - f->seg_flushing,
						   SYNC_FILE_RANGE_WRITE);
	f->seg_flushing = f->seg_written;
#endif
}

/* npages pages at blocks first..: WAL images where needed, checksums, the writes */
static void
write_pages(XxlRelFile *f, BlockNumber first, char *pages, int npages)
{
	const char *src = pages;

	if (f->wal)
	{
		/* a log_newpages() record holds at most XLR_MAX_BLOCK_ID pages */
		for (int done = 0; done < npages; done += XLR_MAX_BLOCK_ID)
		{
			BlockNumber blknos[XLR_MAX_BLOCK_ID];
			Page		images[XLR_MAX_BLOCK_ID];
			int			n = Min(XLR_MAX_BLOCK_ID, npages - done);

			for (int i = 0; i < n; i++)
			{
				blknos[i] = first + done + i;
				images[i] = pages + (Size) (done + i) * BLCKSZ;
			}
			log_newpages(&f->rel->rd_node, MAIN_FORKNUM, n, blknos, images, true);
		}
	}
	/* after logging, which sets the pages' LSN */
	for (int i = 0; i < npages; i++)
		PageSetChecksumInplace(pages + (Size) i * BLCKSZ, first + i);

	/* one write per segment the pages touch */
	while (npages > 0)
	{
		BlockNumber seg_no = first / RELSEG_SIZE;
		BlockNumber in_seg = first % RELSEG_SIZE;
		int			n = Min((BlockNumber) npages, RELSEG_SIZE - in_seg);
		int			fd = segment(f, seg_no, (off_t) in_seg * BLCKSZ);
		size_t		len = (size_t) n * BLCKSZ;
		ssize_t		done;

		pgstat_report_wait_start(WAIT_EVENT_DATA_FILE_EXTEND);
		done = pg_pwrite(fd, src, len, (off_t) in_seg * BLCKSZ);
		pgstat_report_wait_end();
		if (done != (ssize_t) len)
		{
			/* a short write sets no errno: the disk is full (as mdextend says) */
			if (done >= 0)
				errno = ENOSPC;
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not extend file \"%s\" of relation \"%s\": %m",
							f->seg_path, RelationGetRelationName(f->rel)),
					 errhint("Check free disk space.")));
		}
		f->seg_written = (off_t) (in_seg + n) * BLCKSZ;
		write_behind(f);
		src += len;
		first += n;
		npages -= n;
	}
}

char *
xxl_relfile_page(XxlRelFile *f, BlockNumber *blkno)
{
	if (blkno)
		*blkno = f->batch_first + f->nbuilt;
	return f->batch + (Size) f->nbuilt * BLCKSZ;
}

/* The built pages of the batch to the file; the batch starts again. */
static void
write_batch(XxlRelFile *f)
{
	if (f->nbuilt == 0)
		return;
	write_pages(f, f->batch_first, f->batch, f->nbuilt);
	f->batch_first += f->nbuilt;
	f->nbuilt = 0;
	CHECK_FOR_INTERRUPTS();
}

void
xxl_relfile_page_done(XxlRelFile *f)
{
	if (++f->nbuilt == BATCH_PAGES)
		write_batch(f);
}

/*
 * Ask the checkpointer to fsync the segments written, if that is enough
 * (see the file's head comment); false when the caller must sync them.
 */
static bool
register_syncs(XxlRelFile *f)
{
	bool		registered = true;

	/* no checkpoint may begin between the look at the redo point and the requests */
	Assert((MyProc->delayChkptFlags & DELAY_CHKPT_START) == 0);
	MyProc->delayChkptFlags |= DELAY_CHKPT_START;
	if (GetRedoRecPtr() != f->redo_at_start)
		registered = false;
	for (BlockNumber seg = f->seg_lo; registered && seg <= f->seg_hi; seg++)
	{
		FileTag		tag;

		memset(&tag, 0, sizeof(tag));
		tag.handler = SYNC_HANDLER_MD;
		tag.forknum = MAIN_FORKNUM;
		tag.rnode = f->rel->rd_node;
		tag.segno = seg;
		registered = RegisterSyncRequest(&tag, SYNC_REQUEST, false);
	}
	MyProc->delayChkptFlags &= ~DELAY_CHKPT_START;
	return registered;
}

void
xxl_relfile_end(XxlRelFile *f)
{
	write_batch(f);
	if (f->seg_fd >= 0)
		CloseTransientFile(f->seg_fd);
	f->seg_fd = -1;
	if ((f->wal && !register_syncs(f)) ||
		f->rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED)
		smgrimmedsync(RelationGetSmgr(f->rel), MAIN_FORKNUM);
	if (f->seg_path)
		pfree(f->seg_path);
	pfree(f->file_path);
	pfree(f->batch);
	pfree(f);
}
