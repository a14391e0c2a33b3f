/*
 * xxl_output.c — result rows to the caller or into a new table, and the
 * compact row form engines carry (see xxl_output.h).
 *
 * The new table is created by running CREATE TABLE through SPI, so event
 * triggers, utility hooks and permission checks see an ordinary statement.
 * A plain heap created by this transaction gets its pages built here and
 * appended to its files 256 kB at a time (see "Direct page writing");
 * any other table takes its rows through the table AM's multi-insert with a
 * bulk insert state (a ring of buffers, no FSM lookups), as COPY does.
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/xloginsert.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/detoast.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "catalog/namespace.h"
#include "common/relpath.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/fd.h"
#include "storage/smgr.h"
#include "utils/ruleutils.h"
#include "utils/tuplestore.h"
#include "utils/varlena.h"

#include "xxl_input.h"
#include "xxl_output.h"

/* as COPY: at most this many rows or bytes per multi-insert */
#define INSERT_BATCH 1000
#define INSERT_BYTES 65535

/* bytes of a heap tuple header that compact rows leave out */
#define HEAP_SKIP offsetof(HeapTupleHeaderData, t_infomask2)

typedef enum OutputKind
{
	OUTPUT_TABLE,
	OUTPUT_CALLER
} OutputKind;

struct XxlOutput
{
	OutputKind	kind;
	MemoryContext cxt;
	TupleDesc	desc;
	uint64		rows;

	/* table */
	Relation	rel;
	CommandId	cid;
	MemoryContext batch_cxt;	/* per-row allocations (toasting, forming) */

	/* table through its access method (table_multi_insert) */
	BulkInsertState bistate;
	int			options;
	TupleTableSlot **slots;
	int			nbuffered;
	size_t		buffered_bytes;

	/* table written page by page (heap_pages_*) */
	bool		direct;
	bool		started;		/* table: the first row decided how rows go in */
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

	/* caller */
	Tuplestorestate *tupstore;
	TupleTableSlot *slot;
	char	   *buf;			/* MAXALIGNed MinimalTuple under construction */
	size_t		buf_size;
};

/* Descriptors ----------------------------------------------------------- */

TupleDesc
xxl_output_visible_desc(TupleDesc in)
{
	int			n = 0;
	TupleDesc	out;

	for (int i = 0; i < in->natts; i++)
		if (!TupleDescAttr(in, i)->attisdropped)
			n++;
	out = CreateTemplateTupleDesc(n);
	n = 0;
	for (int i = 0; i < in->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(in, i);

		if (att->attisdropped)
			continue;
		TupleDescCopyEntry(out, ++n, in, i + 1);
	}
	return out;
}

AttrNumber *
xxl_output_map_columns(TupleDesc in, TupleDesc out, const char *context)
{
	AttrNumber *map = palloc0(sizeof(AttrNumber) * Max(out->natts, 1));
	int			nin = 0,
				nout = 0;
	bool		identity = (in->natts == out->natts);
	int			j = 0;

	for (int i = 0; i < in->natts; i++)
		if (!TupleDescAttr(in, i)->attisdropped)
			nin++;
	for (int i = 0; i < out->natts; i++)
		if (!TupleDescAttr(out, i)->attisdropped)
			nout++;
	if (nin != nout)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the source has %d columns but %s has %d", nin, context, nout)));

	for (int i = 0; i < out->natts; i++)
	{
		Form_pg_attribute oatt = TupleDescAttr(out, i);
		Form_pg_attribute iatt;

		if (oatt->attisdropped)
		{
			identity = false;
			continue;
		}
		while (TupleDescAttr(in, j)->attisdropped)
			j++;
		iatt = TupleDescAttr(in, j);
		if (iatt->atttypid != oatt->atttypid &&
			!IsBinaryCoercible(iatt->atttypid, oatt->atttypid))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of the source (\"%s\") has type %s but %s says %s",
							nout > 0 ? i + 1 : 0, NameStr(iatt->attname),
							format_type_be(iatt->atttypid), context,
							format_type_be(oatt->atttypid))));
		map[i] = j + 1;
		if (j != i)
			identity = false;
		j++;
	}
	for (int i = 0; i < in->natts; i++)
		if (TupleDescAttr(in, i)->attisdropped)
			identity = false;
	if (identity)
	{
		pfree(map);
		return NULL;
	}
	return map;
}

TupleDesc
xxl_output_caller_desc(FunctionCallInfo fcinfo)
{
	TupleDesc	desc;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("function returning record called in context that cannot accept type record"),
				 errhint("Add a column definition list, e.g. AS s(a int, b text).")));
	return desc;
}

/* Into a new table --------------------------------------------------------- */

static char *
create_table_ddl(const char *nspname, const char *relname, TupleDesc desc)
{
	StringInfoData ddl;
	int			n = 0;

	initStringInfo(&ddl);
	appendStringInfo(&ddl, "CREATE TABLE %s (",
					 quote_qualified_identifier(nspname, relname));
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		appendStringInfo(&ddl, "%s%s %s", n++ > 0 ? ", " : "",
						 quote_identifier(NameStr(att->attname)),
						 format_type_with_typemod(att->atttypid, att->atttypmod));
		if (OidIsValid(att->attcollation) && att->attcollation != get_typcollation(att->atttypid))
			appendStringInfo(&ddl, " COLLATE %s", generate_collation_name(att->attcollation));
	}
	appendStringInfoChar(&ddl, ')');
	return ddl.data;
}

/*
 * Rows go into the new table without the executor: neither the direct page
 * writer nor multi-insert maintains indexes, fires triggers, checks
 * constraints or applies row security and rules.  The table is created
 * bare, but an event trigger (or the source query, which runs once the
 * table exists) can add any of them; refuse then rather than bypass them.
 */
static void
check_target_bare(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	const char *what = NULL;

	if (rel->rd_rel->relhasindex)
		what = "indexes";
	else if (rel->rd_rel->relhastriggers || rel->trigdesc != NULL)
		what = "triggers";
	else if (desc->constr != NULL && desc->constr->num_check > 0)
		what = "check constraints";
	else if (desc->constr != NULL && desc->constr->has_not_null)
		what = "not-null constraints";
	else if (rel->rd_rel->relrowsecurity)
		what = "row-level security";
	else if (rel->rd_rel->relhasrules)
		what = "rules";
	else if (rel->rd_rel->relkind != RELKIND_RELATION)
		what = "a kind other than an ordinary table";
	if (what != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("target table \"%s\" has %s right after its creation",
						RelationGetRelationName(rel), what),
				 errdetail("An event trigger or the source query probably added them; the rows are "
						   "written without index maintenance, triggers, constraint checks, "
						   "row security or rules."),
				 errhint("Add them after the call.")));
}

/*
 * Pages can be written directly when nothing but us can see the table and
 * nothing expects to hear of each row: an empty heap in a relfilenode of
 * this transaction (the source query may have inserted rows into it once
 * it existed; they keep their pages, and ours go in by multi-insert), whose
 * inserts logical decoding need not see (it decodes no page images).
 */
static bool
direct_pages_allowed(Relation rel)
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
batch_page(XxlOutput *out, int i)
{
	return (Page) (out->pages + (Size) i * BLCKSZ);
}

/*
 * When every column has a fixed width, a row without nulls always has the
 * same layout: where each value goes and how long the tuple is can be
 * worked out once (as heap_compute_data_size and heap_fill_tuple would).
 */
static void
plan_fixed_layout(XxlOutput *out)
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

static void
pages_begin(XxlOutput *out)
{
	Relation	rel = out->rel;

	out->direct = true;
	out->xid = GetCurrentTransactionId();
	out->pages = MemoryContextAlloc(out->cxt, (Size) PAGE_BATCH * BLCKSZ);
	out->npages = 0;
	out->first_block = 0;		/* direct_pages_allowed: the relation is empty */
	out->file_path = relpath(RelationGetSmgr(rel)->smgr_rnode, MAIN_FORKNUM);
	out->seg_fd = -1;
	out->save_free = RelationGetTargetPageFreeSpace(rel, HEAP_DEFAULT_FILLFACTOR);
	out->use_wal = RelationNeedsWAL(rel);
	/* nothing asks the checkpointer to sync an unlogged table's file for us */
	out->sync_at_end = out->use_wal || rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED;
	out->has_toast = OidIsValid(rel->rd_rel->reltoastrelid);
	plan_fixed_layout(out);
}

/* The open file of segment seg_no, created when it is new. */
static int
pages_segment(XxlOutput *out, BlockNumber seg_no)
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
pages_write_behind(XxlOutput *out)
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
pages_write(XxlOutput *out, BlockNumber first, int npages)
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
pages_flush(XxlOutput *out)
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
pages_reserve(XxlOutput *out, Size len)
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
pages_put_tuple(XxlOutput *out, HeapTuple tuple)
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
static void
pages_put_values(XxlOutput *out, Datum *values, bool *isnull)
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

		pages_put_tuple(out, heap_form_tuple(desc, values, isnull));
		MemoryContextSwitchTo(old);
		MemoryContextReset(out->batch_cxt);
	}
}

static void
pages_finish(XxlOutput *out)
{
	pages_flush(out);
	if (out->seg_fd >= 0)
		CloseTransientFile(out->seg_fd);
	out->seg_fd = -1;
	/* pages that bypassed shared buffers and the checkpointer: sync them now */
	if (out->sync_at_end)
		smgrimmedsync(RelationGetSmgr(out->rel), MAIN_FORKNUM);
	pgstat_count_heap_insert(out->rel, (PgStat_Counter) out->rows);
	pfree(out->pages);
	out->pages = NULL;
}


XxlOutput *
xxl_output_into_table(const char *target, TupleDesc desc)
{
	XxlOutput  *out = palloc0(sizeof(XxlOutput));
	MemoryContext cxt = CurrentMemoryContext;
	RangeVar   *rv = xxl_source_name(target);
	Oid			nsp;
	char	   *nspname;
	char	   *ddl;
	Oid			relid;
	int			rc;

	if (rv == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("invalid target table name \"%s\"", target),
				 errhint("The target is read as a possibly schema-qualified SQL name: "
						 "write names with spaces, capitals or special characters in double quotes.")));
	nsp = RangeVarGetCreationNamespace(rv);
	nspname = get_namespace_name(nsp);

	/* say it before any work is done; CREATE TABLE would catch a race */
	if (OidIsValid(get_relname_relid(rv->relname, nsp)))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("target relation \"%s\" already exists",
						quote_qualified_identifier(nspname, rv->relname)),
				 errhint("Drop it first or choose another target name.")));

	ddl = create_table_ddl(nspname, rv->relname, desc);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	rc = SPI_execute(ddl, false, 0);
	if (rc != SPI_OK_UTILITY)
		elog(ERROR, "could not create target table: %s", SPI_result_code_string(rc));
	SPI_finish();
	MemoryContextSwitchTo(cxt);

	relid = get_relname_relid(rv->relname, nsp);
	if (!OidIsValid(relid))
		elog(ERROR, "target table \"%s\" vanished after creation", rv->relname);

	out->kind = OUTPUT_TABLE;
	out->cxt = cxt;
	out->rel = table_open(relid, RowExclusiveLock);
	out->desc = RelationGetDescr(out->rel);
	out->batch_cxt = AllocSetContextCreate(cxt, "xxl insert batch", ALLOCSET_DEFAULT_SIZES);
	check_target_bare(out->rel);
	return out;
}

/*
 * The first row (or the end): decide how rows go in, now that the source
 * has been read and nothing else of this statement can touch the table.
 */
static void
table_start(XxlOutput *out)
{
	MemoryContext old = MemoryContextSwitchTo(out->cxt);

	out->started = true;
	check_target_bare(out->rel);
	out->cid = GetCurrentCommandId(true);
	if (direct_pages_allowed(out->rel))
		pages_begin(out);
	else
	{
		out->bistate = GetBulkInsertState();
		out->options = TABLE_INSERT_SKIP_FSM;	/* a new table: no free space to find */
		out->slots = palloc(sizeof(TupleTableSlot *) * INSERT_BATCH);
		for (int i = 0; i < INSERT_BATCH; i++)
			out->slots[i] = MakeSingleTupleTableSlot(out->desc, &TTSOpsHeapTuple);
	}
	MemoryContextSwitchTo(old);
}

static void
flush_batch(XxlOutput *out)
{
	MemoryContext old;

	if (out->nbuffered == 0)
		return;
	/* heap_multi_insert leaves per-call arrays behind, as COPY expects */
	old = MemoryContextSwitchTo(out->batch_cxt);
	table_multi_insert(out->rel, out->slots, out->nbuffered, out->cid, out->options,
					   out->bistate);
	MemoryContextSwitchTo(old);
	for (int i = 0; i < out->nbuffered; i++)
		ExecClearTuple(out->slots[i]);
	MemoryContextReset(out->batch_cxt);
	out->rows += out->nbuffered;
	out->nbuffered = 0;
	out->buffered_bytes = 0;
}

/* To the caller -------------------------------------------------------------- */

XxlOutput *
xxl_output_to_caller(FunctionCallInfo fcinfo, TupleDesc desc)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	XxlOutput  *out;
	MemoryContext old;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	if (!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialize mode required, but it is not allowed in this context")));

	out = palloc0(sizeof(XxlOutput));
	out->kind = OUTPUT_CALLER;
	out->cxt = CurrentMemoryContext;

	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	out->desc = CreateTupleDescCopy(desc);
	out->tupstore = tuplestore_begin_heap((rsinfo->allowedModes & SFRM_Materialize_Random) != 0,
										  false, work_mem);
	MemoryContextSwitchTo(old);

	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = out->tupstore;
	rsinfo->setDesc = out->desc;

	out->slot = MakeSingleTupleTableSlot(out->desc, &TTSOpsMinimalTuple);
	out->buf_size = 1024;
	out->buf = palloc(out->buf_size);
	return out;
}

/* Rows ------------------------------------------------------------------- */

void
xxl_output_put_compact(XxlOutput *out, const void *row, uint32 len)
{
	if (unlikely(out->kind == OUTPUT_TABLE && !out->started))
		table_start(out);
	if (out->kind == OUTPUT_TABLE && out->direct)
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
			pages_put_tuple(out, &tuple);
			MemoryContextSwitchTo(old);
			MemoryContextReset(out->batch_cxt);
			return;
		}
		tup = pages_reserve(out, HEAP_SKIP + len);
		memcpy((char *) tup + HEAP_SKIP, row, len);
		pages_fix_infomask(tup);
		out->rows++;
	}
	else if (out->kind == OUTPUT_TABLE)
	{
		HeapTuple	tup = MemoryContextAlloc(out->batch_cxt, HEAPTUPLESIZE + HEAP_SKIP + len);

		tup->t_len = HEAP_SKIP + len;
		ItemPointerSetInvalid(&tup->t_self);
		tup->t_tableOid = InvalidOid;
		tup->t_data = (HeapTupleHeader) ((char *) tup + HEAPTUPLESIZE);
		memset(tup->t_data, 0, HEAP_SKIP);
		memcpy((char *) tup->t_data + HEAP_SKIP, row, len);
		/* rows copied from a heap carry its hint and HOT bits */
		tup->t_data->t_infomask &= ~HEAP_XACT_MASK;
		tup->t_data->t_infomask2 &= ~HEAP2_XACT_MASK;
		/* the slot owns it, so multi-insert takes it without a copy */
		ExecStoreHeapTuple(tup, out->slots[out->nbuffered++], true);
		out->buffered_bytes += tup->t_len;
		if (out->nbuffered == INSERT_BATCH || out->buffered_bytes >= INSERT_BYTES)
			flush_batch(out);
	}
	else
	{
		size_t		size = MINIMAL_TUPLE_DATA_OFFSET + (size_t) len;
		MinimalTuple mt;

		if (size > out->buf_size)
		{
			while (out->buf_size < size)
				out->buf_size *= 2;
			pfree(out->buf);
			out->buf = MemoryContextAlloc(out->cxt, out->buf_size);
		}
		mt = (MinimalTuple) out->buf;
		memset(mt, 0, MINIMAL_TUPLE_DATA_OFFSET);
		mt->t_len = size;
		memcpy(out->buf + MINIMAL_TUPLE_DATA_OFFSET, row, len);
		mt->t_infomask &= ~HEAP_XACT_MASK;
		mt->t_infomask2 &= ~HEAP2_XACT_MASK;
		ExecStoreMinimalTuple(mt, out->slot, false);
		tuplestore_puttupleslot(out->tupstore, out->slot);
		ExecClearTuple(out->slot);
		out->rows++;
	}
}

void
xxl_output_put_values(XxlOutput *out, Datum *values, bool *isnull)
{
	if (unlikely(out->kind == OUTPUT_TABLE && !out->started))
		table_start(out);
	if (out->kind == OUTPUT_TABLE && out->direct)
		pages_put_values(out, values, isnull);
	else if (out->kind == OUTPUT_TABLE)
	{
		MemoryContext old = MemoryContextSwitchTo(out->batch_cxt);
		HeapTuple	tup = heap_form_tuple(out->desc, values, isnull);

		MemoryContextSwitchTo(old);
		ExecStoreHeapTuple(tup, out->slots[out->nbuffered++], true);
		out->buffered_bytes += tup->t_len;
		if (out->nbuffered == INSERT_BATCH || out->buffered_bytes >= INSERT_BYTES)
			flush_batch(out);
	}
	else
	{
		tuplestore_putvalues(out->tupstore, out->desc, values, isnull);
		out->rows++;
	}
}

uint64
xxl_output_finish(XxlOutput *out)
{
	if (out->kind == OUTPUT_TABLE)
	{
		if (!out->started)
			table_start(out);
		if (out->direct)
			pages_finish(out);
		else
		{
			flush_batch(out);
			FreeBulkInsertState(out->bistate);
			table_finish_bulk_insert(out->rel, out->options);
			for (int i = 0; i < INSERT_BATCH; i++)
				ExecDropSingleTupleTableSlot(out->slots[i]);
		}
		table_close(out->rel, NoLock);
		MemoryContextDelete(out->batch_cxt);
		/* later statements of this transaction see the rows */
		CommandCounterIncrement();
	}
	else
		ExecDropSingleTupleTableSlot(out->slot);
	return out->rows;
}

/* Compact rows -------------------------------------------------------------- */

const char *
xxl_compact_form(StringInfo buf, TupleDesc desc, const Datum *values, const bool *isnull,
				 uint32 *len)
{
	int			natts = desc->natts;
	bool		hasnull = false;
	Datum	   *vals = (Datum *) values;
	Size		hoff,
				data_len,
				total;
	MinimalTuple tup;

	for (int i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (isnull[i])
		{
			hasnull = true;
			continue;
		}
		/* the row must not point into anyone's TOAST table */
		if (att->attlen == -1 && VARATT_IS_EXTERNAL(DatumGetPointer(vals[i])))
		{
			if (vals == values)
			{
				vals = palloc(sizeof(Datum) * natts);
				memcpy(vals, values, sizeof(Datum) * natts);
			}
			vals[i] = PointerGetDatum(detoast_external_attr((struct varlena *) DatumGetPointer(vals[i])));
		}
	}

	/* heap_form_minimal_tuple, into a reused buffer */
	hoff = SizeofMinimalTupleHeader;
	if (hasnull)
		hoff += BITMAPLEN(natts);
	hoff = MAXALIGN(hoff);
	data_len = heap_compute_data_size(desc, vals, (bool *) isnull);
	total = hoff + data_len;

	resetStringInfo(buf);
	enlargeStringInfo(buf, total);
	memset(buf->data, 0, total);
	tup = (MinimalTuple) buf->data;
	tup->t_len = total;
	HeapTupleHeaderSetNatts(tup, natts);
	tup->t_hoff = hoff + MINIMAL_TUPLE_OFFSET;
	heap_fill_tuple(desc, vals, (bool *) isnull, buf->data + hoff, data_len,
					&tup->t_infomask, hasnull ? tup->t_bits : NULL);
	buf->len = total;

	*len = total - MINIMAL_TUPLE_DATA_OFFSET;
	return buf->data + MINIMAL_TUPLE_DATA_OFFSET;
}

const char *
xxl_compact_from_heap(HeapTuple tuple, TupleDesc desc, uint32 *len)
{
	if (HeapTupleHeaderGetNatts(tuple->t_data) != desc->natts || HeapTupleHasExternal(tuple))
		return NULL;
	*len = tuple->t_len - HEAP_SKIP;
	return (const char *) tuple->t_data + HEAP_SKIP;
}
