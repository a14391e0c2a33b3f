/*
 * xxl_table_delete.c — DELETE, and UPDATE as a delete plus an insert, on
 * an xxl table: who may delete a row, the rows each statement deletes
 * (bitmaps per page touched, in xxl_pending_deletes), and the delete
 * segment they become when it ends.  Readers' sets of deleted rows are
 * xxl_table_deleted.c's.
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

#include "pg/table/xxl_table_writers.h"

/* The object sub-id of the deleters' lock on a table (no column has it). */
#define XXL_DELETE_LOCK_SUBID (-0x786c)

/* A statement's deletes of one table: what readers see, and what the writer needs. */
typedef struct DeleteState
{
	XxlPendingDeletes base;		/* table, command, transaction, memory; the bitmaps */
	bool		updates;		/* some rows deleted by UPDATE */
	uint64		nrows;
	/* rows deleted by others or earlier, read once the lock was held */
	XxlDirectory dir;
	XxlDeleted	others;
} DeleteState;

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

	ds = (DeleteState *) xxl_pending_find(xxl_pending_deletes, relid, cid);
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
	ctl.entrysize = sizeof(XxlPageBits);
	ctl.hcxt = cxt;
	ds->base.pages = hash_create("xxl table deleted rows", 64, &ctl,
							HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	old = MemoryContextSwitchTo(cxt);
	xxl_dir_load(rel, &ds->dir);
	xxl_deleted_load(rel, &ds->dir, XXL_DELS_LIVE, NULL, &ds->others);
	MemoryContextSwitchTo(old);
	xxl_pending_push(&xxl_pending_deletes, &ds->base.pend, relid, cid, cxt);
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
	XxlPageBits   *pb;
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
	pb = hash_search(ds->base.pages, &page, lock_only ? HASH_FIND : HASH_ENTER, &found);
	if (!found && !lock_only)
		memset(pb->bits, 0, sizeof(pb->bits));
	if (found && xxl_page_bit(pb, row))
	{
		/* this command deleted it already (a join gave the row twice) */
		tmfd->xmax = ds->base.pend.xid;
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
	BlockNumber x = (*(XxlPageBits *const *) a)->page,
				y = (*(XxlPageBits *const *) b)->page;

	return x < y ? -1 : x > y;
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
	XxlPageBits  **order;
	long		npages = hash_get_num_entries(ds->base.pages),
				n = 0;
	HASH_SEQ_STATUS it;
	XxlPageBits   *pb;
	PGAlignedBlock *image;
	XxlSegment	seg;
	uint32		segno;

	if (ds->nrows == 0)
		return;
	order = palloc_extended(sizeof(XxlPageBits *) * npages, MCXT_ALLOC_HUGE);
	hash_seq_init(&it, ds->base.pages);
	while ((pb = hash_seq_search(&it)) != NULL)
		order[n++] = pb;
	qsort(order, npages, sizeof(XxlPageBits *), page_cmp);

	image = palloc(sizeof(PGAlignedBlock));
	rel = table_open(ds->base.pend.relid, NoLock);
	LockRelationForExtension(rel, ExclusiveLock);
	segno = xxl_dir_prepare(rel);
	memset(&seg, 0, sizeof(seg));
	seg.xmin = ds->base.pend.xid;
	seg.cmin = ds->base.pend.cid;
	seg.first_block = RelationGetNumberOfBlocks(rel);
	seg.nrows = ds->nrows;
	seg.flags = XXL_SEG_DELETES | (ds->updates ? XXL_SEG_UPDATES : 0);
	xxl_dels_page_init(image, segno);
	for (long i = 0; i < npages; i++)
	{
		uint64		base = xxl_row_pos(order[i]->page, 0);
		int			row = 0,
					start;

		CHECK_FOR_INTERRUPTS();
		while (xxl_page_bit_run(order[i], &row, &start))
			xxl_dels_put_run(rel, image, &seg, segno, base + start, base + row);
	}
	xxl_dels_finish(rel, image, &seg);
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
	xxl_pending_flush(&xxl_pending_deletes, relid, cid, flush_pending);
}

void
xxl_deletes_forget(void)
{
	/* their memory went with TopTransactionContext */
	xxl_pending_deletes = NULL;
}

void
xxl_deletes_subxact(SubXactEvent event, SubTransactionId mySubid,
					SubTransactionId parentSubid)
{
	xxl_pending_subxact(&xxl_pending_deletes, event, mySubid, parentSubid);
}

