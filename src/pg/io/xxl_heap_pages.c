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

#include "pg/io/xxl_heap_pages.h"
#include "pg/io/xxl_relfile.h"
#include "pg/io/xxl_rowcodec.h"

struct XxlHeapPages
{
	Relation	rel;
	TupleDesc	desc;
	CommandId	cid;
	MemoryContext cxt;
	MemoryContext batch_cxt;	/* per-row allocations (toasting, forming) */
	uint64		rows;
	TransactionId xid;
	XxlRelFile *file;			/* where the pages go, in batches */
	Page		page;			/* the page being filled, or NULL */
	BlockNumber block;			/* its number */
	Size		save_free;		/* fillfactor: bytes each page keeps free */
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
 * The pages go to the files in batches, with write-behind
 * (xxl_relfile.c); nothing else of md.c's state depends on
 * the blocks, since the relation is new and empty when writing starts and
 * no buffer of it exists.
 *
 * WAL images and the sync at the end are xxl_relfile.c's.  If the
 * transaction aborts, the relfilenode and every segment are unlinked and
 * the transient file is closed.
 */
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
	/* xxl_heap_pages_allowed: the relation is empty */
	out->file = xxl_relfile_begin(rel, 0, true);
	out->save_free = RelationGetTargetPageFreeSpace(rel, HEAP_DEFAULT_FILLFACTOR);
	out->has_toast = OidIsValid(rel->rd_rel->reltoastrelid);
	plan_fixed_layout(out);
	return out;
}

/* A new page to fill, the one filled so far (if any) built. */
static void
pages_next(XxlHeapPages *out)
{
	if (out->page)
		xxl_relfile_page_done(out->file);
	out->page = (Page) xxl_relfile_page(out->file, &out->block);
	PageInit(out->page, BLCKSZ, 0);
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
	if (out->page)
	{
		ph = (PageHeader) out->page;
		off = PageGetMaxOffsetNumber(out->page) + 1;
		/* as heap_multi_insert: keep the fillfactor's space, but never leave a page empty */
		if (off > MaxHeapTuplesPerPage ||
			(Size) (ph->pd_upper - ph->pd_lower) < aligned + sizeof(ItemIdData) +
			(off > FirstOffsetNumber ? out->save_free : 0))
			pages_next(out);
	}
	else
		pages_next(out);
	page = out->page;
	ph = (PageHeader) page;
	off = PageGetMaxOffsetNumber(page) + 1;
	ph->pd_upper -= aligned;
	ItemIdSetNormal(PageGetItemId(page, off), ph->pd_upper, len);
	ph->pd_lower += sizeof(ItemIdData);

	tup = (HeapTupleHeader) ((char *) page + ph->pd_upper);
	HeapTupleHeaderSetXmin(tup, out->xid);
	HeapTupleHeaderSetCmin(tup, out->cid);
	HeapTupleHeaderSetXmax(tup, InvalidTransactionId);
	ItemPointerSet(&tup->t_ctid, out->block, off);
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

	if (out->page)
		xxl_relfile_page_done(out->file);
	xxl_relfile_end(out->file);	/* written, and synced if nothing else will */
	out->file = NULL;
	pgstat_count_heap_insert(out->rel, (PgStat_Counter) out->rows);
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
		Page		page = out->page;
		PageHeader	ph = (PageHeader) page;
		BlockNumber block = out->block;
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
