/*
 * xxl_table_delete.c — DELETE, and UPDATE as a delete plus an insert, on
 * an xxl table: the rows each statement deletes, written when it ends as a
 * delete segment, and the sets of deleted rows that readers skip.
 *
 * Segments stay immutable.  A delete segment is a directory entry like a
 * data segment's (the deleting transaction and command decide who sees
 * it) whose pages hold the positions of the rows it deleted as sorted runs
 * (xxl_row_pos; first in the low 40 bits of a word, length - 1 above).  A
 * row is visible when its segment is and no delete segment the snapshot
 * sees names it.  Compaction (xxl.compact, VACUUM FULL) drops deleted rows;
 * until then their index entries stay, and fetches by TID find them gone.
 *
 * Deleters of one table take turns: a statement's first delete (or row
 * lock) takes a lock only they ask for (an object lock on the table, held
 * to the end of the transaction), and only then reads which rows others
 * deleted.  So
 * no two transactions delete one row, and a row some other transaction
 * deleted and committed after the statement's snapshot is found here: the
 * executor gets TM_Deleted (READ COMMITTED skips the row, REPEATABLE READ
 * fails with 40001).  If that transaction updated the row, its new version
 * cannot be followed (there is no chain of versions), so READ COMMITTED
 * fails with 40001 as well rather than lose the update.
 *
 * A statement's deletes are kept in memory as a bitmap per page touched
 * (256 bytes per page, whatever the number of rows deleted on it).
 */
#include "postgres.h"

#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "port/pg_bitutils.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "pg/table/xxl_table.h"

/* The object sub-id of the deleters' lock on a table (no column has it). */
#define XXL_DELETE_LOCK_SUBID (-0x786c)

#define RUN_FIRST_BITS 40
#define RUN_FIRST_MASK ((UINT64CONST(1) << RUN_FIRST_BITS) - 1)
#define RUNS_PER_PAGE ((BLCKSZ - SizeOfPageHeaderData - MAXALIGN(sizeof(XxlPageOpaque))) \
					   / sizeof(uint64))
#define PAGE_WORDS (XXL_PAGE_ROWS / 64)

typedef struct PageBits
{
	BlockNumber page;			/* the hash key */
	uint64		bits[PAGE_WORDS];
} PageBits;

static inline bool
bit_is_set(const PageBits *pb, int row)
{
	return (pb->bits[row / 64] >> (row % 64)) & 1;
}

/*
 * The next run of deleted rows of a page at or after *row: its first row
 * in *start, *row past its end; false when there is none.
 */
static bool
next_bit_run(const PageBits *pb, int *row, int *start)
{
	int			r = *row;

	while (r < XXL_PAGE_ROWS && !bit_is_set(pb, r))
		r = pb->bits[r / 64] >> (r % 64) == 0 ? (r / 64 + 1) * 64 : r + 1;
	if (r >= XXL_PAGE_ROWS)
		return false;
	*start = r;
	while (r < XXL_PAGE_ROWS && bit_is_set(pb, r))
		r++;
	*row = r;
	return true;
}

typedef struct DeleteState
{
	XxlPending	pend;			/* table, command, transaction, memory */
	bool		updates;		/* some rows deleted by UPDATE */
	HTAB	   *pages;			/* of PageBits */
	uint64		nrows;
	/* rows deleted by others or earlier, read once the lock was held */
	XxlDirectory dir;
	XxlDeleted	others;
} DeleteState;

static XxlPending *pending = NULL;

static bool pending_seen(const DeleteState *ds, Oid relid, Snapshot snapshot);

/* Reading delete segments --------------------------------------------------------- */

static void
append_run(XxlDeleted *d, int *cap, uint64 first, uint64 end, uint32 segno)
{
	if (d->nruns == *cap)
	{
		*cap = Max(256, 2 * *cap);
		d->first = d->first ? repalloc_huge(d->first, sizeof(uint64) * *cap) :
			palloc_extended(sizeof(uint64) * *cap, MCXT_ALLOC_HUGE);
		d->end = d->end ? repalloc_huge(d->end, sizeof(uint64) * *cap) :
			palloc_extended(sizeof(uint64) * *cap, MCXT_ALLOC_HUGE);
		d->segno = d->segno ? repalloc_huge(d->segno, sizeof(uint32) * *cap) :
			palloc_extended(sizeof(uint32) * *cap, MCXT_ALLOC_HUGE);
	}
	d->first[d->nruns] = first;
	d->end[d->nruns] = end;
	d->segno[d->nruns] = segno;
	d->nruns++;
}

static void
read_segment(Relation rel, const XxlSegment *seg, uint32 segno, XxlDeleted *d, int *cap)
{
	for (BlockNumber b = seg->first_block; b < seg->first_block + seg->npages; b++)
	{
		Buffer		buf = ReadBuffer(rel, b);
		Page		page;
		const uint64 *runs;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (!xxl_page_is(page, XXL_PAGE_DELS) || XXL_OPAQUE(page)->segno != segno)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("block %u of xxl table \"%s\" is not a page of delete segment %u",
							b, RelationGetRelationName(rel), segno)));
		runs = (const uint64 *) ((char *) page + SizeOfPageHeaderData);
		for (int i = 0; i < XXL_OPAQUE(page)->nrows; i++)
		{
			uint64		first = runs[i] & RUN_FIRST_MASK;

			append_run(d, cap, first, first + (runs[i] >> RUN_FIRST_BITS) + 1, segno);
		}
		UnlockReleaseBuffer(buf);
	}
}

static bool
applies(const XxlSegment *seg, XxlDeletesSeen seen, Snapshot snapshot)
{
	if (!(seg->flags & XXL_SEG_DELETES) || (seg->flags & XXL_SEG_DEAD))
		return false;
	switch (seen)
	{
		case XXL_DELS_NONE:
			return false;
		case XXL_DELS_SNAPSHOT:
			return xxl_segment_visible(seg, snapshot);
		case XXL_DELS_COMMITTED:
			return xxl_segment_committed(seg);
		case XXL_DELS_LIVE:
			return xxl_segment_committed(seg) || TransactionIdIsInProgress(seg->xmin);
	}
	return false;
}

static int
run_cmp(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a,
				y = *(const uint64 *) b;

	return x < y ? -1 : x > y;
}

static inline void
swap_ptr(void **a, void **b)
{
	void	   *t = *a;

	*a = *b;
	*b = t;
}

/* Sort runs [lo, hi) of d by first (a list not yet in order: pending deletes). */
static void
sort_list(XxlDeleted *d, int lo, int hi)
{
	int			n = hi - lo;
	uint64	   *pairs;

	if (n < 2)
		return;
	pairs = palloc_extended(sizeof(uint64) * 2 * n, MCXT_ALLOC_HUGE);
	for (int i = 0; i < n; i++)
	{
		pairs[2 * i] = d->first[lo + i];
		pairs[2 * i + 1] = d->end[lo + i];
	}
	qsort(pairs, n, 2 * sizeof(uint64), run_cmp);
	for (int i = 0; i < n; i++)
	{
		d->first[lo + i] = pairs[2 * i];
		d->end[lo + i] = pairs[2 * i + 1];
	}
	pfree(pairs);
}

/*
 * Runs sorted by first, the lists that start at starts[0..nlists) (each in
 * order: a delete segment's runs are written in order) merged pairwise;
 * then, unless segno is kept, runs that touch are joined.
 */
static void
normalize(XxlDeleted *d, int *starts, int nlists, bool keep_segno)
{
	int			n = 0;

	if (nlists > 1)
	{
		/* each pass merges neighbouring lists from d's arrays into the others, then swaps */
		uint64	   *first = palloc_extended(sizeof(uint64) * d->nruns, MCXT_ALLOC_HUGE);
		uint64	   *end = palloc_extended(sizeof(uint64) * d->nruns, MCXT_ALLOC_HUGE);
		uint32	   *segno = palloc_extended(sizeof(uint32) * d->nruns, MCXT_ALLOC_HUGE);

		starts[nlists] = d->nruns;
		while (nlists > 1)
		{
			int			m = 0;

			for (int l = 0; l < nlists; l += 2)
			{
				int			i = starts[l],
							ie = starts[l + 1],
							j = ie,
							je = l + 1 < nlists ? starts[l + 2] : ie,
							o = i;

				while (i < ie || j < je)
				{
					int			k = (j >= je || (i < ie && d->first[i] <= d->first[j])) ? i++ : j++;

					first[o] = d->first[k];
					end[o] = d->end[k];
					segno[o] = d->segno[k];
					o++;
				}
				starts[m++] = starts[l];
			}
			starts[m] = d->nruns;
			nlists = m;
			swap_ptr((void **) &first, (void **) &d->first);
			swap_ptr((void **) &end, (void **) &d->end);
			swap_ptr((void **) &segno, (void **) &d->segno);
		}
		pfree(first);
		pfree(end);
		pfree(segno);
	}
	if (keep_segno)
		return;
	for (int i = 0; i < d->nruns; i++)
	{
		if (n > 0 && d->first[i] <= d->end[n - 1])
		{
			d->end[n - 1] = Max(d->end[n - 1], d->end[i]);
			continue;
		}
		d->first[n] = d->first[i];
		d->end[n] = d->end[i];
		n++;
	}
	d->nruns = n;
	if (d->segno)
		pfree(d->segno);
	d->segno = NULL;
}

/* Whether a pending delete state is seen by snapshot (as delete segments would be). */
static bool
pending_seen(const DeleteState *ds, Oid relid, Snapshot snapshot)
{
	return ds->pend.relid == relid && snapshot != NULL &&
		snapshot->snapshot_type != SNAPSHOT_ANY &&
		(snapshot->snapshot_type != SNAPSHOT_MVCC || ds->pend.cid < snapshot->curcid);
}

/* This transaction's pending deletes of relid that snapshot sees, as runs. */
static void
add_pending(Oid relid, Snapshot snapshot, XxlDeleted *d, int *cap)
{
	for (DeleteState *ds = (DeleteState *) pending; ds != NULL; ds = (DeleteState *) ds->pend.next)
	{
		HASH_SEQ_STATUS it;
		PageBits   *pb;

		if (!pending_seen(ds, relid, snapshot))
			continue;
		hash_seq_init(&it, ds->pages);
		while ((pb = hash_seq_search(&it)) != NULL)
		{
			uint64		base = xxl_row_pos(pb->page, 0);
			int			row = 0,
						start;

			while (next_bit_run(pb, &row, &start))
				append_run(d, cap, base + start, base + row, PG_UINT32_MAX);
		}
	}
}

void
xxl_deleted_load(Relation rel, const XxlDirectory *dir, XxlDeletesSeen seen, Snapshot snapshot,
				 XxlDeleted *out)
{
	int			cap = 0;
	int		   *starts;
	int			nlists = 0;

	memset(out, 0, sizeof(*out));
	if (seen == XXL_DELS_NONE)
		return;
	starts = palloc(sizeof(int) * (dir->nsegments + 2));
	for (uint32 s = 0; s < dir->nsegments; s++)
		if (applies(&dir->segs[s], seen, snapshot))
		{
			starts[nlists++] = out->nruns;
			read_segment(rel, &dir->segs[s], s, out, &cap);
		}
	/* per-row decisions (LIVE) look at the pending deletes themselves */
	if (seen != XXL_DELS_LIVE && pending != NULL)
	{
		starts[nlists++] = out->nruns;
		add_pending(RelationGetRelid(rel),
					seen == XXL_DELS_COMMITTED ? SnapshotSelf : snapshot, out, &cap);
		sort_list(out, starts[nlists - 1], out->nruns);
	}
	normalize(out, starts, nlists, seen == XXL_DELS_LIVE);
	pfree(starts);
}

void
xxl_deleted_free(XxlDeleted *d)
{
	if (d->first)
		pfree(d->first);
	if (d->end)
		pfree(d->end);
	if (d->segno)
		pfree(d->segno);
	memset(d, 0, sizeof(*d));
}

int
xxl_deleted_seek(const XxlDeleted *d, uint64 pos)
{
	int			lo = 0,
				hi = d->nruns;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (d->end[mid] <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
xxl_deleted_find(const XxlDeleted *d, uint64 pos)
{
	int			k = xxl_deleted_seek(d, pos);

	return k < d->nruns && d->first[k] <= pos ? k : -1;
}

/* Whether this transaction's pending deletes of relid that snapshot sees hold pos. */
static bool
pending_has(Oid relid, uint64 pos, Snapshot snapshot)
{
	BlockNumber page = (BlockNumber) (pos / XXL_PAGE_ROWS);
	int			row = (int) (pos % XXL_PAGE_ROWS);

	for (DeleteState *ds = (DeleteState *) pending; ds != NULL; ds = (DeleteState *) ds->pend.next)
	{
		PageBits   *pb;

		if (!pending_seen(ds, relid, snapshot))
			continue;
		pb = hash_search(ds->pages, &page, HASH_FIND, NULL);
		if (pb != NULL && bit_is_set(pb, row))
			return true;
	}
	return false;
}

bool
xxl_row_deleted(Relation rel, const XxlDeleted *d, const XxlDirectory *dir, uint64 pos,
				Snapshot snapshot)
{
	int			k;
	const XxlSegment *seg;
	TransactionId xmin;

	if (snapshot->snapshot_type == SNAPSHOT_ANY)
		return false;
	/* this transaction's not yet written (all of them for a unique check's snapshot) */
	if (pending != NULL && pending_has(RelationGetRelid(rel), pos, snapshot))
		return true;
	k = xxl_deleted_find(d, pos);
	if (k < 0)
		return false;
	seg = &dir->segs[d->segno[k]];
	xmin = seg->xmin;
	if (snapshot->snapshot_type == SNAPSHOT_DIRTY)
	{
		if (xmin != FrozenTransactionId && !TransactionIdIsCurrentTransactionId(xmin) &&
			TransactionIdIsInProgress(xmin))
		{
			snapshot->xmax = xmin;
			return false;
		}
		return xxl_segment_committed(seg);
	}
	return xxl_segment_visible(seg, snapshot);
}

/* Recording deletes ----------------------------------------------------------------- */

/*
 * The delete state of (rel, cid), made if there is none; NULL when the
 * deleters' lock is taken and wait_policy says not to wait (SKIP LOCKED),
 * 55P03 when it says to fail (NOWAIT).
 */
static DeleteState *
delete_state_for(Relation rel, CommandId cid, LockWaitPolicy wait_policy)
{
	Oid			relid = RelationGetRelid(rel);
	DeleteState *ds;
	HASHCTL		ctl;
	MemoryContext cxt;
	MemoryContext old;
	LOCKTAG		tag;

	ds = (DeleteState *) xxl_pending_find(pending, relid, cid);
	if (ds != NULL)
		return ds;

	/* deleters take turns; then no one else deletes before this transaction ends */
	SET_LOCKTAG_OBJECT(tag, MyDatabaseId, RelationRelationId, relid, XXL_DELETE_LOCK_SUBID);
	if (LockAcquire(&tag, ExclusiveLock, false, wait_policy != LockWaitBlock) ==
		LOCKACQUIRE_NOT_AVAIL)
	{
		if (wait_policy == LockWaitSkip)
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("could not obtain lock on row in relation \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("Another transaction is deleting, updating or locking rows of this xxl table.")));
	}

	ds = MemoryContextAllocZero(TopTransactionContext, sizeof(DeleteState));
	cxt = AllocSetContextCreate(TopTransactionContext, "xxl table delete", ALLOCSET_DEFAULT_SIZES);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(BlockNumber);
	ctl.entrysize = sizeof(PageBits);
	ctl.hcxt = cxt;
	ds->pages = hash_create("xxl table deleted rows", 64, &ctl,
							HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	old = MemoryContextSwitchTo(cxt);
	xxl_dir_load(rel, &ds->dir);
	xxl_deleted_load(rel, &ds->dir, XXL_DELS_LIVE, NULL, &ds->others);
	MemoryContextSwitchTo(old);
	xxl_pending_push(&pending, &ds->pend, relid, cid, cxt);
	return ds;
}

/*
 * Delete the row at tid for command cid (lock_only: only check that it
 * could be; with wait_policy, for row locks).
 */
static TM_Result
delete_row(Relation rel, ItemPointer tid, CommandId cid, TM_FailureData *tmfd, bool update,
		   bool lock_only, LockWaitPolicy wait_policy)
{
	DeleteState *ds = delete_state_for(rel, cid, wait_policy);
	BlockNumber page = xxl_tid_page(tid);
	int			row = xxl_tid_row(tid);
	uint64		pos;
	PageBits   *pb;
	bool		found;
	int			k;

	if (row < 0 || page == XXL_META_BLOCK)
		elog(ERROR, "xxl table \"%s\": no row at TID (%u,%u)", RelationGetRelationName(rel),
			 ItemPointerGetBlockNumberNoCheck(tid), ItemPointerGetOffsetNumberNoCheck(tid));
	pos = xxl_row_pos(page, row);
	memset(tmfd, 0, sizeof(*tmfd));
	tmfd->ctid = *tid;
	if (ds == NULL)
		return TM_WouldBlock;
	pb = hash_search(ds->pages, &page, lock_only ? HASH_FIND : HASH_ENTER, &found);
	if (!found && !lock_only)
		memset(pb->bits, 0, sizeof(pb->bits));
	if (found && bit_is_set(pb, row))
	{
		/* this command deleted it already (a join gave the row twice) */
		tmfd->xmax = ds->pend.xid;
		tmfd->cmax = cid;
		return TM_SelfModified;
	}
	if ((k = xxl_deleted_find(&ds->others, pos)) >= 0)
	{
		const XxlSegment *seg = &ds->dir.segs[ds->others.segno[k]];

		tmfd->xmax = seg->xmin;
		if (TransactionIdIsCurrentTransactionId(seg->xmin))
		{
			/* an earlier command of this transaction (a trigger's, or a cursor's older snapshot) */
			tmfd->cmax = seg->cmin;
			return TM_SelfModified;
		}
		if (seg->flags & XXL_SEG_UPDATES)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not serialize access due to concurrent update of a row of xxl table \"%s\"",
							RelationGetRelationName(rel)),
					 errdetail("Another transaction updated or deleted the row after this statement's snapshot was taken; rows of xxl tables have no version chain to follow."),
					 errhint("Retry the transaction.")));
		tmfd->cmax = InvalidCommandId;
		return TM_Deleted;
	}
	if (lock_only)
		return TM_Ok;
	pb->bits[row / 64] |= UINT64CONST(1) << (row % 64);
	ds->nrows++;
	ds->updates |= update;
	if (update)
		pgstat_count_heap_update(rel, false);
	else
		pgstat_count_heap_delete(rel);
	return TM_Ok;
}

TM_Result
xxl_tuple_delete(Relation rel, ItemPointer tid, CommandId cid, Snapshot snapshot,
				 Snapshot crosscheck, bool wait, TM_FailureData *tmfd, bool changingPart)
{
	return delete_row(rel, tid, cid, tmfd, false, false, LockWaitBlock);
}

TM_Result
xxl_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot, CommandId cid,
				 Snapshot snapshot, Snapshot crosscheck, bool wait, TM_FailureData *tmfd,
				 LockTupleMode *lockmode, bool *update_indexes)
{
	TM_Result	result;

	/*
	 * A row trigger after UPDATE fetches the new version by its TID, which
	 * a sorted row gets only when the statement ends.
	 */
	if (rel->trigdesc != NULL && rel->trigdesc->trig_update_after_row)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("xxl table \"%s\" has AFTER UPDATE row triggers or is referenced by a foreign key",
						RelationGetRelationName(rel)),
				 errdetail("Rows of an xxl table get their place when the statement ends."),
				 errhint("Use a heap table, or drop the triggers.")));
	*lockmode = LockTupleExclusive;
	*update_indexes = false;
	result = delete_row(rel, otid, cid, tmfd, true, false, LockWaitBlock);
	if (result != TM_Ok)
		return result;
	xxl_table_insert(rel, slot, cid, 0, NULL);
	*update_indexes = true;
	return TM_Ok;
}

/*
 * Row locks (SELECT ... FOR UPDATE / SHARE, foreign keys, BEFORE row
 * triggers of UPDATE and DELETE): the deleters' lock on the whole table,
 * whatever the mode, so that no other transaction deletes or updates the
 * row before this one ends; then the row as it is.
 */
TM_Result
xxl_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot, TupleTableSlot *slot,
			   CommandId cid, LockTupleMode mode, LockWaitPolicy wait_policy, uint8 flags,
			   TM_FailureData *tmfd)
{
	TM_Result	result = delete_row(rel, tid, cid, tmfd, false, true, wait_policy);

	tmfd->traversed = false;
	if (result != TM_Ok)
		return result;
	if (!xxl_fetch_row_version(rel, tid, SnapshotAny, slot))
		elog(ERROR, "xxl table \"%s\": no row at TID (%u,%u) to lock",
			 RelationGetRelationName(rel), ItemPointerGetBlockNumberNoCheck(tid),
			 ItemPointerGetOffsetNumberNoCheck(tid));
	return TM_Ok;
}

/* Writing delete segments ----------------------------------------------------------- */

static int
page_cmp(const void *a, const void *b)
{
	BlockNumber x = (*(PageBits *const *) a)->page,
				y = (*(PageBits *const *) b)->page;

	return x < y ? -1 : x > y;
}

static void
dels_page_init(PGAlignedBlock *image, uint32 segno)
{
	xxl_page_init_kind(image->data, XXL_PAGE_DELS, segno)->row_width = sizeof(uint64);
}

/* The longest run one word holds. */
#define RUN_MAX_ROWS (UINT64CONST(1) << (64 - RUN_FIRST_BITS))

/*
 * Run [first, end) onto a delete segment's page image; a full page is
 * written at the end of rel first (extension lock held) and counted in seg.
 */
static void
dels_put_run(Relation rel, PGAlignedBlock *image, XxlSegment *seg, uint32 segno,
			 uint64 first, uint64 end)
{
	while (first < end)
	{
		uint64		len = Min(end - first, RUN_MAX_ROWS);

		if (XXL_OPAQUE(image->data)->nrows == RUNS_PER_PAGE)
		{
			xxl_write_new_page(rel, image, NULL);
			seg->npages++;
			dels_page_init(image, segno);
		}
		((uint64 *) (image->data + SizeOfPageHeaderData))[XXL_OPAQUE(image->data)->nrows++] =
			first | ((len - 1) << RUN_FIRST_BITS);
		((PageHeader) image->data)->pd_lower =
			SizeOfPageHeaderData + XXL_OPAQUE(image->data)->nrows * sizeof(uint64);
		first += len;
	}
}

/* A delete segment's last page, if it holds runs. */
static void
dels_finish(Relation rel, PGAlignedBlock *image, XxlSegment *seg)
{
	if (XXL_OPAQUE(image->data)->nrows > 0)
	{
		xxl_write_new_page(rel, image, NULL);
		seg->npages++;
	}
}

void
xxl_deleted_load_from(Relation rel, const XxlDirectory *dir, uint32 from, XxlDeleted *out,
					  uint16 *flags)
{
	int			cap = 0;
	int		   *starts = palloc(sizeof(int) * (dir->nsegments + 2));
	int			nlists = 0;

	memset(out, 0, sizeof(*out));
	*flags = 0;
	for (uint32 s = from; s < dir->nsegments; s++)
		if ((dir->segs[s].flags & XXL_SEG_DELETES) && !(dir->segs[s].flags & XXL_SEG_DEAD))
		{
			starts[nlists++] = out->nruns;
			read_segment(rel, &dir->segs[s], s, out, &cap);
			*flags |= dir->segs[s].flags & XXL_SEG_UPDATES;
		}
	normalize(out, starts, nlists, false);
	pfree(starts);
}

uint64
xxl_deletes_last(Relation rel, const XxlSegment *seg, uint32 segno)
{
	XxlSegment	last = *seg;
	XxlDeleted	d;
	int			cap = 0;
	uint64		pos = 0;

	if (seg->npages == 0)
		return 0;
	/* its runs are in order: the last page's last one */
	last.first_block = seg->first_block + seg->npages - 1;
	last.npages = 1;
	memset(&d, 0, sizeof(d));
	read_segment(rel, &last, segno, &d, &cap);
	if (d.nruns > 0)
		pos = d.end[d.nruns - 1] - 1;
	xxl_deleted_free(&d);
	return pos;
}

bool
xxl_deletes_write(Relation rel, const XxlDeleted *d, uint64 below, uint32 segno, uint16 flags,
				  XxlSegment *seg)
{
	PGAlignedBlock *image = palloc(sizeof(PGAlignedBlock));

	memset(seg, 0, sizeof(*seg));
	seg->xmin = FrozenTransactionId;
	seg->first_block = RelationGetNumberOfBlocks(rel);
	seg->flags = XXL_SEG_DELETES | flags;
	dels_page_init(image, segno);
	for (int i = 0; i < d->nruns && d->first[i] < below; i++)
	{
		uint64		end = Min(d->end[i], below);

		CHECK_FOR_INTERRUPTS();
		dels_put_run(rel, image, seg, segno, d->first[i], end);
		seg->nrows += end - d->first[i];
	}
	dels_finish(rel, image, seg);
	pfree(image);
	return seg->nrows > 0;
}

/*
 * Readers hold the runs of the deleted rows in memory until compaction
 * drops them: say so when the deleted rows of live delete segments pass
 * XXL_DELETED_NOTICE, 2 * XXL_DELETED_NOTICE, 4 * ... (as a flush does for
 * segments; compaction needs an ACCESS EXCLUSIVE lock, so it is not
 * started here).
 */
#define XXL_DELETED_NOTICE (UINT64CONST(1) << 23)

static void
suggest_compaction(Relation rel, const DeleteState *ds)
{
	uint64		before = 0,
				after;

	for (uint32 s = 0; s < ds->dir.nsegments; s++)
		if ((ds->dir.segs[s].flags & XXL_SEG_DELETES) && !(ds->dir.segs[s].flags & XXL_SEG_DEAD))
			before += ds->dir.segs[s].nrows;
	after = before + ds->nrows;
	if (after < XXL_DELETED_NOTICE ||
		pg_leftmost_one_pos64(after / XXL_DELETED_NOTICE) ==
		(before < XXL_DELETED_NOTICE ? -1 : pg_leftmost_one_pos64(before / XXL_DELETED_NOTICE)))
		return;
	xxl_notice_compact(rel, psprintf("xxl table \"%s\" has " UINT64_FORMAT " deleted rows not yet compacted",
									 RelationGetRelationName(rel), after),
					   "Scans hold the positions of deleted rows in memory until a compaction drops them.",
					   "rewrites the table without them");
}

/* The state's deletes as one delete segment of its table. */
static void
flush_deletes(DeleteState *ds)
{
	Relation	rel;
	PageBits  **order;
	long		npages = hash_get_num_entries(ds->pages),
				n = 0;
	HASH_SEQ_STATUS it;
	PageBits   *pb;
	PGAlignedBlock *image;
	XxlSegment	seg;
	uint32		segno;

	if (ds->nrows == 0)
		return;
	order = palloc_extended(sizeof(PageBits *) * npages, MCXT_ALLOC_HUGE);
	hash_seq_init(&it, ds->pages);
	while ((pb = hash_seq_search(&it)) != NULL)
		order[n++] = pb;
	qsort(order, npages, sizeof(PageBits *), page_cmp);

	image = palloc(sizeof(PGAlignedBlock));
	rel = table_open(ds->pend.relid, NoLock);
	LockRelationForExtension(rel, ExclusiveLock);
	segno = xxl_dir_prepare(rel);
	memset(&seg, 0, sizeof(seg));
	seg.xmin = ds->pend.xid;
	seg.cmin = ds->pend.cid;
	seg.first_block = RelationGetNumberOfBlocks(rel);
	seg.nrows = ds->nrows;
	seg.flags = XXL_SEG_DELETES | (ds->updates ? XXL_SEG_UPDATES : 0);
	dels_page_init(image, segno);
	for (long i = 0; i < npages; i++)
	{
		uint64		base = xxl_row_pos(order[i]->page, 0);
		int			row = 0,
					start;

		CHECK_FOR_INTERRUPTS();
		while (next_bit_run(order[i], &row, &start))
			dels_put_run(rel, image, &seg, segno, base + start, base + row);
	}
	dels_finish(rel, image, &seg);
	if (xxl_dir_append(rel, &seg) != segno)
		elog(ERROR, "xxl table \"%s\": segment %u appended out of turn",
			 RelationGetRelationName(rel), segno);
	UnlockRelationForExtension(rel, ExclusiveLock);
	suggest_compaction(rel, ds);
	table_close(rel, NoLock);
	pfree(image);
	pfree(order);
}

static void
flush_pending(XxlPending *p)
{
	flush_deletes((DeleteState *) p);
}

void
xxl_deletes_flush(Oid relid, CommandId cid)
{
	xxl_pending_flush(&pending, relid, cid, flush_pending);
}

void
xxl_deletes_forget(void)
{
	/* their memory went with TopTransactionContext */
	pending = NULL;
}

void
xxl_deletes_subxact(SubXactEvent event, SubTransactionId mySubid,
					SubTransactionId parentSubid)
{
	xxl_pending_subxact(&pending, event, mySubid, parentSubid);
}
