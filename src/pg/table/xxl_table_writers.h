/*
 * xxl_table_writers.h — the writing level of the xxl table access method:
 * rows inserted (xxl_table_write.c), deleted and updated
 * (xxl_table_delete.c), merged by VACUUM (xxl_table_merge.c), and what a
 * statement's and a transaction's ends do to the pending work
 * (xxl_table_ends.c).  Built on the storage level; the planner nodes and
 * the handler build on it.
 */
#ifndef XXL_PG_TABLE_WRITERS_H
#define XXL_PG_TABLE_WRITERS_H

#include "pg/table/xxl_table_storage.h"

/* Writes (xxl_table_write.c) ------------------------------------------------ */

extern void xxl_table_insert(Relation rel, TupleTableSlot *slot, CommandId cid, int options,
							 struct BulkInsertStateData *bistate);
extern void xxl_table_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
								   CommandId cid, int options,
								   struct BulkInsertStateData *bistate);
/*
 * Before a rewrite (VACUUM FULL, CLUSTER) inserts into target with cid:
 * sort by the order key of table key_of, and write the segment frozen
 * (seen by every snapshot) when frozen.
 */
extern void xxl_table_begin_rewrite(Relation target, CommandId cid, Oid key_of, bool frozen);

/*
 * A merge's segment (xxl_table_merge.c): rows put in any order are written
 * at the end of rel in the order of its key, frozen, under segment number
 * segno, and their entry is returned, not appended: the merge switches it
 * in.  Their TOAST pointers stay as they are (the values are rel's own).
 */
typedef struct XxlSegmentWriter XxlSegmentWriter;
extern XxlSegmentWriter *xxl_segment_writer_begin(Relation rel);
extern void xxl_segment_writer_put(XxlSegmentWriter *w, Relation rel, TupleTableSlot *slot);
extern void xxl_segment_writer_end(XxlSegmentWriter *w, Relation rel, uint32 segno,
								   XxlSegment *seg);

/*
 * VACUUM's merge of the segments at rel's end (xxl_table_merge.c), if it
 * gets an ACCESS EXCLUSIVE lock without waiting; what it did at elevel.
 */
extern void xxl_table_merge(Relation rel, TransactionId oldest_xmin,
							BufferAccessStrategy strategy, int elevel);

/* Write the pending rows of rel (all relations: InvalidOid) as segments. */
extern void xxl_table_flush(Oid relid);
/* Statement and transaction ends for the pending rows (called by xxl_table_ends.c). */
extern void xxl_writes_flush(Oid relid, CommandId cid);
extern void xxl_writes_forget(void);
extern void xxl_writes_subxact(SubXactEvent event, SubTransactionId mySubid,
							   SubTransactionId parentSubid);

/*
 * NOTICE that compaction would help rel: message, detail (or NULL), and a
 * hint naming the call and what it does (effect).
 */
extern void xxl_notice_compact(Relation rel, const char *message, const char *detail,
							   const char *effect);




/* Deletes and updates (xxl_table_delete.c) ---------------------------------------- */

extern TM_Result xxl_tuple_delete(Relation rel, ItemPointer tid, CommandId cid,
								  Snapshot snapshot, Snapshot crosscheck, bool wait,
								  TM_FailureData *tmfd, bool changingPart);
extern TM_Result xxl_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot,
								  CommandId cid, Snapshot snapshot, Snapshot crosscheck,
								  bool wait, TM_FailureData *tmfd, LockTupleMode *lockmode,
								  bool *update_indexes);
extern TM_Result xxl_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
								TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
								LockWaitPolicy wait_policy, uint8 flags, TM_FailureData *tmfd);


/* Statement and transaction ends for the pending deletes (called by xxl_table_ends.c). */
extern void xxl_deletes_flush(Oid relid, CommandId cid);
extern void xxl_deletes_forget(void);
extern void xxl_deletes_subxact(SubXactEvent event, SubTransactionId mySubid,
								SubTransactionId parentSubid);


/* Called from xxl_table_init: the statement and transaction ends (xxl_table_ends.c). */
extern void xxl_table_ends_init(void);

/*
 * The handler (xxl_table_am.c), on top of the writers: called from
 * xxl_table_init, the run scan registered with the input module.
 */
extern void xxl_table_am_init(void);

#endif							/* XXL_PG_TABLE_WRITERS_H */
