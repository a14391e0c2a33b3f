/*
 * xxl_table_am.c — the table access method xxl: its routine table, the
 * storage callbacks (new files, truncation, copies, sizes, VACUUM,
 * rewrites), the operations it refuses, and xxl.alter_table_set.
 *
 * Rows are written by xxl_table_write.c, deleted by xxl_table_delete.c
 * and read by xxl_table_scan.c; the directory of segments is
 * xxl_table_dir.c (docs/table.md).
 *
 * Not supported, each with SQLSTATE 0A000 and a hint: INSERT ... ON
 * CONFLICT, TABLESAMPLE, CREATE INDEX CONCURRENTLY, AFTER row triggers on
 * INSERT and UPDATE (foreign keys from an xxl table).  Segments are
 * immutable and sorted rows get their place when the statement ends, so
 * there is no TID at insert time.
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "catalog/storage.h"
#include "catalog/storage_xlog.h"
#include "commands/cluster.h"
#include "commands/vacuum.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "pg/table/xxl_table_writers.h"
#include "pg/io/io.h"
#include "pg/sort/sort.h"

PG_FUNCTION_INFO_V1(xxl_table_am_handler);
PG_FUNCTION_INFO_V1(xxl_alter_table_set);
PG_FUNCTION_INFO_V1(xxl_compact);

static const TableAmRoutine xxl_routine;

bool
xxl_is_table(Relation rel)
{
	return rel->rd_tableam == &xxl_routine;
}

/* The engine's inputs read these tables' rows in runs (io/xxl_input.h). */
void
xxl_table_am_init(void)
{
	xxl_input_register_runs(&xxl_routine, xxl_scan_next_run);
}

static void pg_attribute_noreturn()
refuse(Relation rel, const char *what, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s is not supported on xxl table \"%s\"", what,
					rel ? RelationGetRelationName(rel) : "?"),
			 errdetail("Segments of an xxl table are immutable, and rows get their place when the statement that inserts them ends."),
			 errhint("%s", hint)));
}

#define REWRITE_HINT "Rewrite the rows into a new table (CREATE TABLE ... USING xxl AS SELECT ...), or use a heap table."

static const TupleTableSlotOps *
xxl_slot_callbacks(Relation rel)
{
	return &TTSOpsVirtual;
}

/* Refused operations ------------------------------------------------------------ */

static void
xxl_get_latest_tid(TableScanDesc scan, ItemPointer tid)
{
	/* an updated row's new version is not linked from the old one */
}

/*
 * Index entries whose rows are gone: none are reported (btree asks before
 * it splits a page; it then splits).  Deleted rows' entries go when
 * compaction rebuilds the indexes.
 */
static TransactionId
xxl_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate)
{
	for (int i = 0; i < delstate->ndeltids; i++)
		delstate->status[delstate->deltids[i].id].knowndeletable = false;
	delstate->ndeltids = 0;
	return InvalidTransactionId;
}

static void
xxl_insert_speculative(Relation rel, TupleTableSlot *slot, CommandId cid, int options,
					   struct BulkInsertStateData *bistate, uint32 specToken)
{
	refuse(rel, "INSERT ... ON CONFLICT", "Insert without ON CONFLICT.");
}

static void
xxl_complete_speculative(Relation rel, TupleTableSlot *slot, uint32 specToken, bool succeeded)
{
	refuse(rel, "INSERT ... ON CONFLICT", "Insert without ON CONFLICT.");
}

static void
xxl_index_validate_scan(Relation table_rel, Relation index_rel, struct IndexInfo *index_info,
						Snapshot snapshot, struct ValidateIndexState *state)
{
	refuse(table_rel, "CREATE INDEX CONCURRENTLY", "Create the index without CONCURRENTLY.");
}

static bool
xxl_scan_sample_next_block(TableScanDesc scan, struct SampleScanState *scanstate)
{
	refuse(scan->rs_rd, "TABLESAMPLE", "Sample with WHERE random() < fraction instead.");
}

static bool
xxl_scan_sample_next_tuple(TableScanDesc scan, struct SampleScanState *scanstate,
						   TupleTableSlot *slot)
{
	refuse(scan->rs_rd, "TABLESAMPLE", "Sample with WHERE random() < fraction instead.");
}

/* Writes ---------------------------------------------------------------------- */

static void
xxl_finish_bulk_insert(Relation rel, int options)
{
	xxl_table_flush(RelationGetRelid(rel));
}

/* Storage ------------------------------------------------------------------------ */

static void
xxl_relation_set_new_filenode(Relation rel, const RelFileNode *newrnode, char persistence,
							  TransactionId *freezeXid, MultiXactId *minmulti)
{
	SMgrRelation srel;

	/* every segment written from now on has a newer xmin */
	*freezeXid = RecentXmin;
	*minmulti = GetOldestMultiXactId();
	srel = RelationCreateStorage(*newrnode, persistence, true);
	if (persistence == RELPERSISTENCE_UNLOGGED)
	{
		smgrcreate(srel, INIT_FORKNUM, false);
		log_smgrcreate(newrnode, INIT_FORKNUM);
		smgrimmedsync(srel, INIT_FORKNUM);
	}
	smgrclose(srel);
	/* the metapage comes with the first segment */

	/*
	 * A relation being created (not a TRUNCATE or rewrite of one, which
	 * get a new file node) has no settings: a row under its OID is a
	 * dropped table's that the drop hook did not see.
	 */
	if (RelFileNodeEquals(*newrnode, rel->rd_node))
		xxl_table_options_forget(RelationGetRelid(rel));
}

static void
xxl_relation_nontransactional_truncate(Relation rel)
{
	RelationTruncate(rel, 0);
}

static void
xxl_relation_copy_data(Relation rel, const RelFileNode *newrnode)
{
	SMgrRelation dstrel = smgropen(*newrnode, rel->rd_backend);

	FlushRelationBuffers(rel);
	RelationCreateStorage(*newrnode, rel->rd_rel->relpersistence, true);
	RelationCopyStorage(RelationGetSmgr(rel), dstrel, MAIN_FORKNUM,
						rel->rd_rel->relpersistence);
	for (ForkNumber fork = MAIN_FORKNUM + 1; fork <= MAX_FORKNUM; fork++)
	{
		if (!smgrexists(RelationGetSmgr(rel), fork))
			continue;
		smgrcreate(dstrel, fork, false);
		if (RelationIsPermanent(rel) ||
			(rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED && fork == INIT_FORKNUM))
			log_smgrcreate(newrnode, fork);
		RelationCopyStorage(RelationGetSmgr(rel), dstrel, fork, rel->rd_rel->relpersistence);
	}
	RelationDropStorage(rel);
	smgrclose(dstrel);
}

typedef struct CopyState
{
	Relation	target;
	CommandId	cid;
} CopyState;

static void
copy_row(void *arg, TupleTableSlot *slot)
{
	CopyState  *cs = arg;

	CHECK_FOR_INTERRUPTS();
	xxl_table_insert(cs->target, slot, cs->cid, 0, NULL);
}

/*
 * VACUUM FULL and CLUSTER: the rows of committed segments, merged into one
 * new segment in the order of the table's key (an index given to CLUSTER
 * plays no part: xxl tables have none).  When every segment copied is seen
 * by every snapshot still running (committed before OldestXmin), the new
 * one is written frozen, so they still see the rows; otherwise it gets
 * this transaction's xid, and snapshots older than it see an empty table,
 * as after TRUNCATE.
 */
static void
xxl_relation_copy_for_cluster(Relation OldTable, Relation NewTable, Relation OldIndex,
							  bool use_sort, TransactionId OldestXmin,
							  TransactionId *xid_cutoff, MultiXactId *multi_cutoff,
							  double *num_tuples, double *tups_vacuumed,
							  double *tups_recently_dead)
{
	CopyState	cs = {NewTable, GetCurrentCommandId(true)};
	TupleTableSlot *slot = MakeSingleTupleTableSlot(RelationGetDescr(OldTable), &TTSOpsVirtual);
	XxlDirectory dir;
	bool		all_old = true;

	xxl_dir_load(OldTable, &dir);
	for (uint32 s = 0; s < dir.nsegments; s++)
	{
		TransactionId xmin = dir.segs[s].xmin;

		if ((dir.segs[s].flags & XXL_SEG_DEAD) || xmin == FrozenTransactionId)
			continue;
		if (TransactionIdIsCurrentTransactionId(xmin) || !TransactionIdPrecedes(xmin, OldestXmin))
			all_old = false;
	}
	xxl_table_begin_rewrite(NewTable, cs.cid, RelationGetRelid(OldTable), all_old);

	*num_tuples = xxl_scan_committed(OldTable, 0, InvalidBlockNumber, slot, copy_row, &cs);
	ExecDropSingleTupleTableSlot(slot);
	xxl_table_flush(RelationGetRelid(NewTable));
	*tups_vacuumed = 0;
	*tups_recently_dead = 0;
}

static void
xxl_relation_vacuum(Relation rel, struct VacuumParams *params, BufferAccessStrategy bstrategy)
{
	TransactionId oldest_xmin,
				freeze_limit,
				frozenxid;
	MultiXactId oldest_mxact,
				multi_cutoff;
	double		live_rows,
				dead_rows;
	BlockNumber live_pages;
	bool		frozenxid_updated,
				minmulti_updated;

	vacuum_set_xid_limits(rel, params->freeze_min_age, params->freeze_table_age,
						  params->multixact_freeze_min_age, params->multixact_freeze_table_age,
						  &oldest_xmin, &oldest_mxact, &freeze_limit, &multi_cutoff);
	frozenxid = xxl_dir_vacuum(rel, freeze_limit, &live_rows, &live_pages, &dead_rows);
	/* the merge truncates and maintains indexes: not when VACUUM is told not to */
	if (params->truncate != VACOPTVALUE_DISABLED &&
		params->index_cleanup != VACOPTVALUE_DISABLED)
		xxl_table_merge(rel, oldest_xmin, bstrategy,
						(params->options & VACOPT_VERBOSE) ? INFO : DEBUG2);
	vac_update_relstats(rel, RelationGetNumberOfBlocks(rel), live_rows, 0,
						RelationGetForm(rel)->relhasindex, frozenxid, oldest_mxact,
						&frozenxid_updated, &minmulti_updated, false);
	pgstat_report_vacuum(RelationGetRelid(rel), rel->rd_rel->relisshared, live_rows, dead_rows);
}

static uint64
xxl_relation_size(Relation rel, ForkNumber forkNumber)
{
	return table_block_relation_size(rel, forkNumber);
}

/* A TOAST table when some column can hold large values (heap's rule, without its size estimate). */
static bool
xxl_relation_needs_toast_table(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && att->attlen == -1 && att->attstorage != TYPSTORAGE_PLAIN)
			return true;
	}
	return false;
}

static Oid
xxl_relation_toast_am(Relation rel)
{
	return HEAP_TABLE_AM_OID;
}

static void
xxl_relation_estimate_size(Relation rel, int32 *attr_widths, BlockNumber *pages,
						   double *tuples, double *allvisfrac)
{
	/*
	 * A row's overhead is its null bitmap; at least a byte, as the estimate
	 * divides by the row's width (a zero-column table has rows too).
	 */
	table_block_relation_estimate_size(rel, attr_widths, pages, tuples, allvisfrac,
									   Max(1, (RelationGetDescr(rel)->natts + 7) / 8),
									   BLCKSZ - SizeOfPageHeaderData -
									   MAXALIGN(sizeof(XxlPageOpaque)));
}

static const TableAmRoutine xxl_routine = {
	.type = T_TableAmRoutine,

	.slot_callbacks = xxl_slot_callbacks,

	.scan_begin = xxl_scan_begin,
	.scan_end = xxl_scan_end,
	.scan_rescan = xxl_scan_rescan,
	.scan_getnextslot = xxl_scan_getnextslot,

	.parallelscan_estimate = table_block_parallelscan_estimate,
	.parallelscan_initialize = table_block_parallelscan_initialize,
	.parallelscan_reinitialize = table_block_parallelscan_reinitialize,

	.index_fetch_begin = xxl_index_fetch_begin,
	.index_fetch_reset = xxl_index_fetch_reset,
	.index_fetch_end = xxl_index_fetch_end,
	.index_fetch_tuple = xxl_index_fetch_tuple,

	.tuple_fetch_row_version = xxl_fetch_row_version,
	.tuple_tid_valid = xxl_tid_valid,
	.tuple_get_latest_tid = xxl_get_latest_tid,
	.tuple_satisfies_snapshot = xxl_satisfies_snapshot,
	.index_delete_tuples = xxl_index_delete_tuples,

	.tuple_insert = xxl_table_insert,
	.tuple_insert_speculative = xxl_insert_speculative,
	.tuple_complete_speculative = xxl_complete_speculative,
	.multi_insert = xxl_table_multi_insert,
	.tuple_delete = xxl_tuple_delete,
	.tuple_update = xxl_tuple_update,
	.tuple_lock = xxl_tuple_lock,
	.finish_bulk_insert = xxl_finish_bulk_insert,

	.relation_set_new_filenode = xxl_relation_set_new_filenode,
	.relation_nontransactional_truncate = xxl_relation_nontransactional_truncate,
	.relation_copy_data = xxl_relation_copy_data,
	.relation_copy_for_cluster = xxl_relation_copy_for_cluster,
	.relation_vacuum = xxl_relation_vacuum,
	.scan_analyze_next_block = xxl_scan_analyze_next_block,
	.scan_analyze_next_tuple = xxl_scan_analyze_next_tuple,
	.index_build_range_scan = xxl_index_build_range_scan,
	.index_validate_scan = xxl_index_validate_scan,

	.relation_size = xxl_relation_size,
	.relation_needs_toast_table = xxl_relation_needs_toast_table,
	.relation_toast_am = xxl_relation_toast_am,

	.relation_estimate_size = xxl_relation_estimate_size,

	.scan_bitmap_next_block = xxl_scan_bitmap_next_block,
	.scan_bitmap_next_tuple = xxl_scan_bitmap_next_tuple,
	.scan_sample_next_block = xxl_scan_sample_next_block,
	.scan_sample_next_tuple = xxl_scan_sample_next_tuple,
};

Datum
xxl_table_am_handler(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(&xxl_routine);
}

/* The table relid names, locked in mode, if it is an xxl table its caller owns. */
static Relation
open_own_xxl_table(Oid relid, LOCKMODE mode)
{
	Relation	rel = table_open(relid, mode);

	if (rel->rd_rel->relkind != RELKIND_RELATION || !xxl_is_table(rel))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an xxl table", RelationGetRelationName(rel)),
				 errhint("Create it with CREATE TABLE ... USING xxl, or convert it with ALTER TABLE ... SET ACCESS METHOD xxl.")));
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(rel));
	return rel;
}

/* xxl.compact: VACUUM FULL's rewrite, callable in a transaction and from SQL. */
Datum
xxl_compact(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel = open_own_xxl_table(relid, AccessExclusiveLock);
	ClusterParams params = {0};
	XxlDirectory dir;
	int64		merged = 0;

	xxl_table_flush(relid);
	xxl_deletes_flush(relid, InvalidCommandId);
	xxl_dir_load(rel, &dir);
	/* the segments whose rows it keeps: committed ones and this transaction's */
	for (uint32 s = 0; s < dir.nsegments; s++)
		if (dir.segs[s].nrows > 0 && !(dir.segs[s].flags & XXL_SEG_DELETES) &&
			xxl_segment_visible(&dir.segs[s], SnapshotSelf))
			merged++;
	table_close(rel, NoLock);
	cluster_rel(relid, InvalidOid, &params);
	PG_RETURN_INT64(merged);
}

/* xxl.alter_table_set ---------------------------------------------------------------- */

Datum
xxl_alter_table_set(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *order_by;
	Relation	rel;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("xxl.alter_table_set: relation must not be NULL")));
	relid = PG_GETARG_OID(0);
	order_by = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));

	rel = open_own_xxl_table(relid, ShareUpdateExclusiveLock);
	/* the key must resolve against the table as the sorter would take it */
	if (order_by != NULL)
		order_by = xxl_order_by_canonical(RelationGetDescr(rel), order_by);
	/* plans that merged segments by the old key are made again */
	CacheInvalidateRelcache(rel);
	table_close(rel, NoLock);
	xxl_table_options_set_order_by(relid, order_by);
	PG_RETURN_VOID();
}
