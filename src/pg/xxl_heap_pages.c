/*
 * xxl_heap_pages.c — the direct page writer (see xxl_heap_pages.h): heap
 * pages built in local memory and appended to a new relation's files.
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "catalog/catalog.h"
#include "common/relpath.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/fd.h"
#include "storage/smgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "pg/xxl_heap_pages.h"
#include "pg/xxl_rowcodec.h"

struct XxlHeapPages
{
	Relation	rel;
	TupleDesc	desc;
	CommandId	cid;
	MemoryContext cxt;
	MemoryContext batch_cxt;	/* per-row allocations (toasting, forming) */
	uint64		rows;
	TransactionId xid;
	char	   *pages;			/* PAGE_BATCH pages, the last one being filled */
	int			npages;			/* pages in the batch, the one being filled included */
	BlockNumber first_block;	/* block number of pages[0] */
	char	   *file_path;		/* the main fork's first segment */
	int			seg_fd;			/* open segment (transient file), or -1 */
	char	   *seg_path;		/* its path */
	BlockNumber seg_no;			/* which one */
	off_t		seg_written;	/* bytes of it written by this call */
	off_t		seg_flushing;	/* ... of which writeback has been started */
	off_t		seg_dropped;	/* ... of which the page cache has been let go */
	Size		save_free;		/* fillfactor: bytes each page keeps free */
	bool		use_wal;
	bool		sync_at_end;
	bool		has_toast;
	/* every column of fixed width: a row without nulls has one layout */
	bool		fixed_layout;
	Size		fixed_hoff;
	Size		fixed_len;		/* hoff + data */
	int32	   *fixed_offsets;	/* of each column in the data */
};

#define HEAP_SKIP XXL_COMPACT_SKIP

/*
 * Pages can be written directly when nothing but us can see the table and
 * nothing expects to hear of each row: an empty heap in a relfilenode of
 * this transaction (the source query may have inserted rows into it once
 * it existed; they keep their pages, and ours go in by multi-insert), whose
 * inserts logical decoding need not see (it decodes no page images).
 */
bool
xxl_heap_pages_allowed(Relation rel)
{
	return rel->rd_tableam == GetHeapamTableAmRoutine() &&
		rel->rd_rel->relkind == RELKIND_RELATION &&
		rel->rd_createSubid != InvalidSubTransactionId &&
		!RelationIsLogicallyLogged(rel) &&
		RelationGetNumberOfBlocks(rel) == 0;
}

/*
 * Direct page writing.  A table created in this transaction is invisible to
 * everyone else, so its pages can be built in local memory and appended to
 * its files without shared buffers, the way CREATE INDEX and CLUSTER write
 * theirs: no buffer, lock, free-space lookup or per-row WAL record.  Rows get
 * this transaction's xmin and the call's command id, exactly what
 * heap_insert() would give them.
 *
 * The pages go to the files in writes of PAGE_BATCH pages rather than
 * through smgrextend(), which takes one 8 kB block per call: appending
 * 4.4 GB to a new file took 2.1-7.9 s in 8 kB writes and 0.56-0.83 s in
 * 256 kB writes on the benchmark machine (1.2-3.2 s in 512 kB-1 MB writes,
 * for which the kernel looks for larger folios), and a suffix array of
 * 100 MB is 4.6 GB of heap.  The files are laid out
 * as md.c lays them out (segments of RELSEG_SIZE blocks, the n-th named
 * "<path>.n"), which is how md.c finds them again by their sizes; nothing
 * else of md.c's state depends on the blocks, since the relation is new and
 * empty when writing starts and no buffer of it exists.
 *
 * Behind the writing, the pages are sent to disk and dropped from the page
 * cache a few megabytes at a time (WRITE_BEHIND), as PostgreSQL's bulk
 * writes keep to a ring of buffers: an output far larger than the operator's
 * memory should not push everything else out of the cache, and page cache
 * that must be found afresh for every page is the dearest part of writing
 * on a virtual machine (appending 4.4 GB to a file: 7.0 s when the kernel
 * had to find new memory, 0.5 s when it reused pages just freed, 1.1 s
 * either way with write-behind).
 *
 * When the relation needs WAL (wal_level above minimal) the pages are logged
 * as full-page images and the files are synced at the end, because a
 * checkpoint during the call cannot flush pages that never were in shared
 * buffers; an unlogged table is synced at the end too, because no fsync
 * request was registered with the checkpointer; at wal_level = minimal the
 * commit's pending sync of new relfilenodes covers a permanent table.  If
 * the transaction aborts, the relfilenode and every segment are unlinked and
 * the transient file is closed.
 */
#define PAGE_BATCH 32			/* pages per write: 256 kB */
#define WRITE_BEHIND ((off_t) 8 * 1024 * 1024)	/* bytes per writeback step */

static inline Page
batch_page(XxlHeapPages *out, int i)
{
	return (Page) (out->pages + (Size) i * BLCKSZ);
}

/*
 * When every column has a fixed width, a row without nulls always has the
 * same layout: where each value goes and how long the tuple is can be
 * worked out once (as heap_compute_data_size and heap_fill_tuple would).
 */
static void
plan_fixed_layout(XxlHeapPages *out)
{
	TupleDesc	desc = out->desc;
	Size		off = 0;

	out->fixed_layout = false;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped || att->attlen <= 0)
			return;
	}
	out->fixed_offsets = MemoryContextAlloc(out->cxt, sizeof(int32) * Max(desc->natts, 1));
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		off = att_align_nominal(off, att->attalign);
		out->fixed_offsets[i] = (int32) off;
		off += att->attlen;
	}
	out->fixed_hoff = MAXALIGN(SizeofHeapTupleHeader);
	out->fixed_len = out->fixed_hoff + off;
	out->fixed_layout = out->fixed_len <= MaxHeapTupleSize;
}

XxlHeapPages *
xxl_heap_pages_begin(Relation rel, CommandId cid)
{
	XxlHeapPages *out = palloc0(sizeof(XxlHeapPages));

	out->rel = rel;
	out->desc = RelationGetDescr(rel);
	out->cid = cid;
	out->cxt = CurrentMemoryContext;
	out->batch_cxt = AllocSetContextCreate(out->cxt, "xxl page rows", ALLOCSET_DEFAULT_SIZES);
	out->xid = GetCurrentTransactionId();
	out->pages = MemoryContextAlloc(out->cxt, (Size) PAGE_BATCH * BLCKSZ);
	out->npages = 0;
	out->first_block = 0;		/* xxl_heap_pages_allowed: the relation is empty */
	out->file_path = relpath(RelationGetSmgr(rel)->smgr_rnode, MAIN_FORKNUM);
	out->seg_fd = -1;
	out->save_free = RelationGetTargetPageFreeSpace(rel, HEAP_DEFAULT_FILLFACTOR);
	out->use_wal = RelationNeedsWAL(rel);
	/* nothing asks the checkpointer to sync an unlogged table's file for us */
	out->sync_at_end = out->use_wal || rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED;
	out->has_toast = OidIsValid(rel->rd_rel->reltoastrelid);
	plan_fixed_layout(out);
	return out;
}

/* The open file of segment seg_no, created when it is new. */
static int
pages_segment(XxlHeapPages *out, BlockNumber seg_no)
{
	if (out->seg_fd >= 0 && out->seg_no == seg_no)
		return out->seg_fd;
	if (out->seg_fd >= 0)
		CloseTransientFile(out->seg_fd);
	out->seg_fd = -1;
	if (out->seg_path)
		pfree(out->seg_path);
	{
		/* rows may be put from a per-row context that is reset right after */
		MemoryContext old = MemoryContextSwitchTo(out->cxt);

		out->seg_path = seg_no == 0 ? pstrdup(out->file_path)
			: psprintf("%s.%u", out->file_path, seg_no);
		MemoryContextSwitchTo(old);
	}
	{
		int			fd = OpenTransientFile(out->seg_path, O_RDWR | O_CREAT | PG_BINARY);

		if (fd < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m", out->seg_path)));
		out->seg_fd = fd;
		out->seg_no = seg_no;
		out->seg_written = out->seg_flushing = out->seg_dropped = 0;
	}
	return out->seg_fd;
}

/*
 * Once WRITE_BEHIND more bytes of the open segment are written, start their
 * writeback, and wait for and drop the step before the one started last
 * time, which has had a step's worth of writing to finish.  Only the page
 * cache changes: what is on disk or in shared buffers is the same either way
 * (PostgreSQL's own pg_flush_data() does nothing when fsync is off, but this
 * is about memory, not durability).
 */
static void
pages_write_behind(XxlHeapPages *out)
{
#if defined(HAVE_SYNC_FILE_RANGE) && defined(USE_POSIX_FADVISE)
	int			fd = out->seg_fd;

	if (out->seg_written - out->seg_flushing < WRITE_BEHIND)
		return;
	if (out->seg_flushing - out->seg_dropped >= WRITE_BEHIND)
	{
		off_t		len = out->seg_flushing - out->seg_dropped;

		/* failures only mean the pages stay cached; the sync at commit reports I/O errors */
		(void) sync_file_range(fd, out->seg_dropped, len,
							   SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
							   SYNC_FILE_RANGE_WAIT_AFTER);
		(void) posix_fadvise(fd, out->seg_dropped, len, POSIX_FADV_DONTNEED);
		out->seg_dropped = out->seg_flushing;
	}
	(void) sync_file_range(fd, out->seg_flushing, out->seg_written - out->seg_flushing,
						   SYNC_FILE_RANGE_WRITE);
	out->seg_flushing = out->seg_written;
#endif
}

/* npages built pages from block first on, in one write per segment they touch */
static void
pages_write(XxlHeapPages *out, BlockNumber first, int npages)
{
	const char *src = out->pages;

	while (npages > 0)
	{
		BlockNumber seg_no = first / RELSEG_SIZE;
		BlockNumber in_seg = first % RELSEG_SIZE;
		int			n = Min((BlockNumber) npages, RELSEG_SIZE - in_seg);
		int			fd = pages_segment(out, seg_no);
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
							out->seg_path, RelationGetRelationName(out->rel)),
					 errhint("Check free disk space.")));
		}
		out->seg_written = (off_t) (in_seg + n) * BLCKSZ;
		pages_write_behind(out);
		src += len;
		first += n;
		npages -= n;
	}
}

static void
pages_flush(XxlHeapPages *out)
{
	if (out->npages == 0)
		return;
	if (out->use_wal)
	{
		/* a log_newpages() record holds at most XLR_MAX_BLOCK_ID pages */
		for (int done = 0; done < out->npages; done += XLR_MAX_BLOCK_ID)
		{
			BlockNumber blknos[XLR_MAX_BLOCK_ID];
			Page		pages[XLR_MAX_BLOCK_ID];
			int			n = Min(XLR_MAX_BLOCK_ID, out->npages - done);

			for (int i = 0; i < n; i++)
			{
				blknos[i] = out->first_block + done + i;
				pages[i] = batch_page(out, done + i);
			}
			log_newpages(&out->rel->rd_node, MAIN_FORKNUM, n, blknos, pages, true);
		}
	}
	/* after logging, which sets the pages' LSN */
	for (int i = 0; i < out->npages; i++)
		PageSetChecksumInplace(batch_page(out, i), out->first_block + i);
	pages_write(out, out->first_block, out->npages);
	out->first_block += out->npages;
	out->npages = 0;
	CHECK_FOR_INTERRUPTS();
}

/*
 * Room for a tuple of len bytes: its header, ready for the caller to fill
 * from t_infomask2 on, with system fields and t_ctid set.
 */
static HeapTupleHeader
pages_reserve(XxlHeapPages *out, Size len)
{
	Size		aligned = MAXALIGN(len);
	Page		page;
	PageHeader	ph;
	OffsetNumber off;
	HeapTupleHeader tup;

	if (len > MaxHeapTupleSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row is too big: size %zu, maximum size %zu",
						(size_t) len, (size_t) MaxHeapTupleSize)));
	if (out->npages > 0)
	{
		page = batch_page(out, out->npages - 1);
		ph = (PageHeader) page;
		off = PageGetMaxOffsetNumber(page) + 1;
		/* as heap_multi_insert: keep the fillfactor's space, but never leave a page empty */
		if (off > MaxHeapTuplesPerPage ||
			(Size) (ph->pd_upper - ph->pd_lower) < aligned + sizeof(ItemIdData) +
			(off > FirstOffsetNumber ? out->save_free : 0))
		{
			if (out->npages == PAGE_BATCH)
				pages_flush(out);
			out->npages++;
			PageInit(batch_page(out, out->npages - 1), BLCKSZ, 0);
		}
	}
	else
	{
		out->npages = 1;
		PageInit(batch_page(out, 0), BLCKSZ, 0);
	}
	page = batch_page(out, out->npages - 1);
	ph = (PageHeader) page;
	off = PageGetMaxOffsetNumber(page) + 1;
	ph->pd_upper -= aligned;
	ItemIdSetNormal(PageGetItemId(page, off), ph->pd_upper, len);
	ph->pd_lower += sizeof(ItemIdData);

	tup = (HeapTupleHeader) ((char *) page + ph->pd_upper);
	HeapTupleHeaderSetXmin(tup, out->xid);
	HeapTupleHeaderSetCmin(tup, out->cid);
	HeapTupleHeaderSetXmax(tup, InvalidTransactionId);
	ItemPointerSet(&tup->t_ctid, out->first_block + out->npages - 1, off);
	return tup;
}

/* Clear what a copied header may carry over and mark xmax invalid, as heap_insert does. */
static inline void
pages_fix_infomask(HeapTupleHeader tup)
{
	tup->t_infomask &= ~HEAP_XACT_MASK;
	tup->t_infomask2 &= ~HEAP2_XACT_MASK;
	tup->t_infomask |= HEAP_XMAX_INVALID;
}

/* A formed heap tuple: toasted first if heap_insert would toast it. */
static void
put_tuple(XxlHeapPages *out, HeapTuple tuple)
{
	HeapTupleHeader tup;

	if (out->has_toast && (HeapTupleHasExternal(tuple) || tuple->t_len > TOAST_TUPLE_THRESHOLD))
	{
		HeapTupleHeaderSetXmin(tuple->t_data, out->xid);
		HeapTupleHeaderSetCmin(tuple->t_data, out->cid);
		HeapTupleHeaderSetXmax(tuple->t_data, InvalidTransactionId);
		pages_fix_infomask(tuple->t_data);
		tuple->t_tableOid = RelationGetRelid(out->rel);
		tuple = heap_toast_insert_or_update(out->rel, tuple, NULL, 0);
	}
	tup = pages_reserve(out, tuple->t_len);
	memcpy((char *) tup + HEAP_SKIP, (char *) tuple->t_data + HEAP_SKIP,
		   tuple->t_len - HEAP_SKIP);
	pages_fix_infomask(tup);
	out->rows++;
}

/*
 * A row given as values, formed straight into its page (heap_form_tuple's
 * work without the palloc and the copy), unless the toaster must see it.
 */
void
xxl_heap_pages_put_values(XxlHeapPages *out, Datum *values, bool *isnull)
{
	TupleDesc	desc = out->desc;
	int			natts = desc->natts;
	bool		hasnull = false;
	Size		hoff;
	Size		data_len;
	Size		len;
	HeapTupleHeader tup;

	for (int i = 0; i < natts; i++)
	{
		if (isnull[i])
			hasnull = true;
		else if (out->has_toast && TupleDescAttr(desc, i)->attlen == -1 &&
				 VARATT_IS_EXTERNAL(DatumGetPointer(values[i])))
			goto toaster;
	}
	if (out->fixed_layout && !hasnull)
	{
		char	   *data;

		/* heap_fill_tuple's work with the layout known: values into place */
		tup = pages_reserve(out, out->fixed_len);
		tup->t_infomask = 0;
		HeapTupleHeaderSetNatts(tup, natts);
		tup->t_hoff = out->fixed_hoff;
		data = (char *) tup + out->fixed_hoff;
		for (int i = 0; i < natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);

			if (att->attbyval)
				store_att_byval(data + out->fixed_offsets[i], values[i], att->attlen);
			else
				memcpy(data + out->fixed_offsets[i], DatumGetPointer(values[i]), att->attlen);
		}
		pages_fix_infomask(tup);
		out->rows++;
		return;
	}
	hoff = MAXALIGN(SizeofHeapTupleHeader + (hasnull ? BITMAPLEN(natts) : 0));
	data_len = heap_compute_data_size(desc, values, isnull);
	len = hoff + data_len;
	if (out->has_toast && len > TOAST_TUPLE_THRESHOLD)
		goto toaster;

	/* a reserved tuple lies in never-used, zeroed page space */
	tup = pages_reserve(out, len);
	tup->t_infomask = 0;
	HeapTupleHeaderSetNatts(tup, natts);
	tup->t_hoff = hoff;
	heap_fill_tuple(desc, values, isnull, (char *) tup + hoff, data_len, &tup->t_infomask,
					hasnull ? tup->t_bits : NULL);
	pages_fix_infomask(tup);
	out->rows++;
	return;

toaster:
	{
		MemoryContext old = MemoryContextSwitchTo(out->batch_cxt);

		put_tuple(out, heap_form_tuple(desc, values, isnull));
		MemoryContextSwitchTo(old);
		MemoryContextReset(out->batch_cxt);
	}
}

uint64
xxl_heap_pages_finish(XxlHeapPages *out)
{
	uint64		rows;

	pages_flush(out);
	if (out->seg_fd >= 0)
		CloseTransientFile(out->seg_fd);
	out->seg_fd = -1;
	/* pages that bypassed shared buffers and the checkpointer: sync them now */
	if (out->sync_at_end)
		smgrimmedsync(RelationGetSmgr(out->rel), MAIN_FORKNUM);
	pgstat_count_heap_insert(out->rel, (PgStat_Counter) out->rows);
	pfree(out->pages);
	MemoryContextDelete(out->batch_cxt);
	rows = out->rows;
	pfree(out);
	return rows;
}

void
xxl_heap_pages_put_compact(XxlHeapPages *out, const void *row, uint32 len)
{
	HeapTupleHeader tup;

	if (out->has_toast && HEAP_SKIP + len > TOAST_TUPLE_THRESHOLD)
	{
		/* wide rows take the toaster's path (rare: needs a formed tuple) */
		MemoryContext old = MemoryContextSwitchTo(out->batch_cxt);
		HeapTupleData tuple;

		tuple.t_len = HEAP_SKIP + len;
		tuple.t_data = palloc0(tuple.t_len);
		ItemPointerSetInvalid(&tuple.t_self);
		memcpy((char *) tuple.t_data + HEAP_SKIP, row, len);
		put_tuple(out, &tuple);
		MemoryContextSwitchTo(old);
		MemoryContextReset(out->batch_cxt);
		return;
	}
	tup = pages_reserve(out, HEAP_SKIP + len);
	memcpy((char *) tup + HEAP_SKIP, row, len);
	pages_fix_infomask(tup);
	out->rows++;
}

/*
 * Rows of one length at once (bigint rows: a suffix array is 100M of them):
 * the first row of each page goes through pages_reserve, which starts pages
 * and batches; the rest that fit the page are laid out in a loop that
 * knows they fit, without its checks and calls.
 */
void
xxl_heap_pages_put_compact_many(XxlHeapPages *out, const char *rows, uint32 len, int n)
{
	Size		size = HEAP_SKIP + len;
	Size		need = MAXALIGN(size) + sizeof(ItemIdData);

	if (out->has_toast && size > TOAST_TUPLE_THRESHOLD)
	{
		for (int i = 0; i < n; i++)
			xxl_heap_pages_put_compact(out, rows + (size_t) i * len, len);
		return;
	}
	while (n > 0)
	{
		HeapTupleHeader tup = pages_reserve(out, size);
		Page		page = batch_page(out, out->npages - 1);
		PageHeader	ph = (PageHeader) page;
		BlockNumber block = out->first_block + out->npages - 1;
		OffsetNumber off = PageGetMaxOffsetNumber(page);
		int			fit;

		memcpy((char *) tup + HEAP_SKIP, rows, len);
		pages_fix_infomask(tup);
		rows += len;
		n--;
		out->rows++;

		/* as pages_reserve decides: room beyond the fillfactor's, and line pointers */
		fit = ph->pd_upper - ph->pd_lower >= need + out->save_free
			? (int) ((ph->pd_upper - ph->pd_lower - out->save_free) / need) : 0;
		fit = Min(fit, (int) (MaxHeapTuplesPerPage - off));
		fit = Min(fit, n);
		for (int i = 0; i < fit; i++)
		{
			ph->pd_upper -= MAXALIGN(size);
			off++;
			ItemIdSetNormal(PageGetItemId(page, off), ph->pd_upper, size);
			tup = (HeapTupleHeader) ((char *) page + ph->pd_upper);
			HeapTupleHeaderSetXmin(tup, out->xid);
			HeapTupleHeaderSetCmin(tup, out->cid);
			HeapTupleHeaderSetXmax(tup, InvalidTransactionId);
			ItemPointerSet(&tup->t_ctid, block, off);
			memcpy((char *) tup + HEAP_SKIP, rows, len);
			pages_fix_infomask(tup);
			rows += len;
		}
		ph->pd_lower += fit * sizeof(ItemIdData);
		n -= fit;
		out->rows += fit;
	}
}
