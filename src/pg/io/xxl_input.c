/*
 * xxl_input.c — opening a source and iterating its rows (see xxl_input.h
 * for the table-or-query rule and the privilege model).
 *
 * A query is read through a read-only SPI cursor in batches of up to
 * FETCH_BATCH rows: big enough that the per-fetch overhead vanishes.  A
 * batch of wide rows shrinks the next one towards FETCH_BYTES, so the rows
 * held outside the operator's budget stay a modest amount of memory.  SPI leaves CurrentMemoryContext pointing at its
 * own context after most calls, so every function here restores the
 * context that was current when it was called.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "access/tupconvert.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "optimizer/plancat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "parser/scansup.h"
#include "pgstat.h"
#include "utils/plancache.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

#include "pg/io/xxl_input.h"

#define FETCH_BATCH 1000
#define FETCH_BYTES (4 * 1024 * 1024)	/* shrink batches of wide rows to about this */

typedef enum InputKind
{
	INPUT_TABLE,
	INPUT_QUERY,
	INPUT_PLAN,					/* a child plan node's rows (xxl_input_open_plan) */
	INPUT_LEAVES				/* partitions' rows one after another (xxl_input_open_leaves) */
} InputKind;

struct XxlInput
{
	InputKind	kind;
	char	   *description;
	MemoryContext cxt;			/* the caller's, at open */
	TupleDesc	desc;
	TupleTableSlot *slot;
	uint64		rows;
	bool		done;

	/* table */
	Relation	rel;
	TableScanDesc scan;
	Snapshot	snapshot;
	/* heap tables: page at a time (see next_heap_row) */
	bool		pagewise;
	BlockNumber next_block;
	int			next_index;		/* in the current page's visible tuples */
	HeapTupleData tuple;

	/* query */
	bool		spi_connected;
	Portal		portal;
	SPITupleTable *batch;
	uint64		batch_pos;
	uint64		batch_rows;
	long		batch_size;		/* rows to ask for next */

	/* plan */
	PlanState  *child;
	/* a Seq Scan child read directly (open_plan_scan): its qual, projection */
	ExprState  *qual;
	ProjectionInfo *proj;
	ExprContext *econtext;
	/* a projection of the table's columns only: output column i is attno tuple_map[i] */
	AttrNumber *tuple_map;

	/* leaves: those still to read, the one being read and its conversion */
	List	   *leaves;
	XxlInput   *leaf;
	TupleConversionMap *leaf_map;
};

static XxlInput *open_query(const char *query, char *description);
static HeapTuple next_page_tuple(XxlInput *in);
static bool begin_scan(XxlInput *in, Relation rel, Snapshot snapshot);

RangeVar *
xxl_source_name(const char *source)
{
	char	   *copy = pstrdup(source);
	List	   *parts = NIL;
	List	   *names = NIL;
	ListCell   *lc;

	/* folds and dequotes as regclass input does; never raises */
	if (!SplitIdentifierString(copy, '.', &parts) ||
		list_length(parts) < 1 || list_length(parts) > 3)
		return NULL;
	foreach(lc, parts)
		names = lappend(names, makeString(pstrdup((char *) lfirst(lc))));
	list_free(parts);
	pfree(copy);
	return makeRangeVarFromNameList(names);
}

Relation
xxl_input_open_named(const char *source)
{
	RangeVar   *rv = xxl_source_name(source);

	if (rv == NULL)
		return NULL;
	return table_open(RangeVarGetRelidExtended(rv, AccessShareLock, 0, NULL, NULL), NoLock);
}

void
xxl_input_check_select(Relation rel, int ncols, const AttrNumber *cols)
{
	Oid			relid = RelationGetRelid(rel);
	AclResult	acl = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);
	bool		ok = acl == ACLCHECK_OK;

	if (!ok && ncols > 0)
	{
		ok = true;
		for (int i = 0; i < ncols; i++)
			ok &= pg_attribute_aclcheck(relid, cols[i], GetUserId(), ACL_SELECT) == ACLCHECK_OK;
	}
	if (!ok)
		aclcheck_error(acl, get_relkind_objtype(rel->rd_rel->relkind),
					   RelationGetRelationName(rel));
}

bool
xxl_input_rls_in_force(Relation rel)
{
	return check_enable_rls(RelationGetRelid(rel), InvalidOid, false) == RLS_ENABLED;
}

static XxlInput *open_relation_checked(Relation rel);

static XxlInput *
open_relation(Relation rel)
{
	xxl_input_check_select(rel, 0, NULL);
	return open_relation_checked(rel);
}

/* rel, whose privileges the caller checked */
static XxlInput *
open_relation_checked(Relation rel)
{
	XxlInput   *in;
	char		relkind = rel->rd_rel->relkind;
	char	   *qualified;

	qualified = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
										   RelationGetRelationName(rel));

	if (relkind == RELKIND_MATVIEW && !RelationIsPopulated(rel))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("materialized view \"%s\" has not been populated",
						RelationGetRelationName(rel)),
				 errhint("Use the REFRESH MATERIALIZED VIEW command.")));

	/*
	 * Only a plain heap whose rows are all the answer may be scanned
	 * directly: views need their rule, partitioned and inheritance parents
	 * their children, and row-level security its policies.
	 */
	if ((relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW) ||
		rel->rd_rel->relhassubclass || xxl_input_rls_in_force(rel))
	{
		char	   *description = psprintf("%s \"%s\"",
										   relkind == RELKIND_VIEW ? "view" : "table",
										   RelationGetRelationName(rel));

		table_close(rel, NoLock);
		return open_query(psprintf("SELECT * FROM %s", qualified), description);
	}

	in = palloc0(sizeof(XxlInput));
	in->kind = INPUT_TABLE;
	in->cxt = CurrentMemoryContext;
	in->description = psprintf("table %s", qualified);
	in->rel = rel;
	in->desc = RelationGetDescr(rel);
	in->snapshot = RegisterSnapshot(ActiveSnapshotSet() ? GetActiveSnapshot()
									: GetTransactionSnapshot());
	if (!begin_scan(in, rel, in->snapshot))
		in->slot = table_slot_create(rel, NULL);
	return in;
}

/*
 * Begin the scan of rel from its first block (a synchronized scan would
 * start anywhere); a heap in page mode is read a page at a time
 * (next_page_tuple) through a heap-tuple slot: true then.
 */
static bool
begin_scan(XxlInput *in, Relation rel, Snapshot snapshot)
{
	in->scan = table_beginscan_strat(rel, snapshot, 0, NULL, true, false);
	in->pagewise = rel->rd_tableam == GetHeapamTableAmRoutine() &&
		(in->scan->rs_flags & SO_ALLOW_PAGEMODE) != 0;
	if (in->pagewise)
	{
		in->slot = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsHeapTuple);
		in->tuple.t_tableOid = RelationGetRelid(rel);
		in->next_index = 0;
		in->next_block = 0;
	}
	return in->pagewise;
}

static XxlInput *
open_query(const char *query, char *description)
{
	XxlInput   *in = palloc0(sizeof(XxlInput));
	MemoryContext cxt = CurrentMemoryContext;
	SPIPlanPtr	plan;
	List	   *sources;
	CachedPlanSource *ps;
	Node	   *stmt;

	in->kind = INPUT_QUERY;
	in->cxt = cxt;
	in->description = description;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	in->spi_connected = true;
	MemoryContextSwitchTo(cxt);

	plan = SPI_prepare(query, 0, NULL);
	MemoryContextSwitchTo(cxt);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));

	sources = SPI_plan_get_plan_sources(plan);
	if (list_length(sources) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("source query must be a single statement"),
				 errdetail("The source was: %s", query)));
	ps = (CachedPlanSource *) linitial(sources);
	stmt = ps->raw_parse_tree ? ps->raw_parse_tree->stmt : NULL;
	if (stmt == NULL || !IsA(stmt, SelectStmt) || ((SelectStmt *) stmt)->intoClause != NULL ||
		ps->resultDesc == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("source must be a table name or a query that returns rows"),
				 errdetail("The source query is of type %s.", GetCommandTagName(ps->commandTag)),
				 errhint("Use SELECT, TABLE or VALUES.")));
	{
		ListCell   *lc;

		foreach(lc, ps->query_list)
		{
			Query	   *q = lfirst_node(Query, lc);

			if (q->hasModifyingCTE)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("source query must not modify data"),
						 errdetail("It has a data-modifying WITH clause.")));
		}
	}

	/* read-only: the statement's snapshot, and no writes */
	in->portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	MemoryContextSwitchTo(cxt);
	if (in->portal == NULL)
		elog(ERROR, "SPI_cursor_open failed: %s", SPI_result_code_string(SPI_result));
	in->desc = CreateTupleDescCopy(in->portal->tupDesc);
	in->slot = MakeSingleTupleTableSlot(in->desc, &TTSOpsHeapTuple);
	in->batch_size = FETCH_BATCH;
	return in;
}

XxlInput *
xxl_input_open(const char *source)
{
	const char *p = source;
	Relation	rel;

	while (*p && scanner_isspace(*p))
		p++;
	if (*p == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("source must not be empty"),
				 errhint("Pass a table name or a query.")));

	rel = xxl_input_open_named(source);
	if (rel != NULL)
		return open_relation(rel);
	return open_query(source, "query");
}

XxlInput *
xxl_input_open_relid(Oid relid)
{
	LockRelationOid(relid, AccessShareLock);
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	return open_relation(table_open(relid, NoLock));
}

XxlInput *
xxl_input_open_leaves(Relation parent, List *leaves)
{
	XxlInput   *in = palloc0(sizeof(XxlInput));

	xxl_input_check_select(parent, 0, NULL);
	in->kind = INPUT_LEAVES;
	in->cxt = CurrentMemoryContext;
	in->description = psprintf("table \"%s\"", RelationGetRelationName(parent));
	in->desc = CreateTupleDescCopy(RelationGetDescr(parent));
	in->slot = MakeSingleTupleTableSlot(in->desc, &TTSOpsVirtual);
	in->leaves = list_copy(leaves);
	return in;
}

/* The next row of the leaves, in the parent's layout. */
static TupleTableSlot *
next_leaf_row(XxlInput *in)
{
	for (;;)
	{
		TupleTableSlot *slot;

		if (in->leaf == NULL)
		{
			Oid			relid;
			MemoryContext old;

			if (in->leaves == NIL)
				return NULL;
			relid = linitial_oid(in->leaves);
			in->leaves = list_delete_first(in->leaves);
			old = MemoryContextSwitchTo(in->cxt);
			LockRelationOid(relid, AccessShareLock);
			in->leaf = open_relation_checked(table_open(relid, NoLock));
			in->leaf_map = convert_tuples_by_name(in->leaf->desc, in->desc);
			MemoryContextSwitchTo(old);
		}
		slot = xxl_input_next(in->leaf);
		if (slot != NULL)
		{
			in->rows++;
			if (in->leaf_map == NULL)
				return slot;
			return execute_attr_map_slot(in->leaf_map->attrMap, slot, in->slot);
		}
		xxl_input_close(in->leaf);
		in->leaf = NULL;
	}
}

/*
 * Columns of a table a deform of its whole tuple may pass beyond the last
 * one a projection picks, and still cost less than the slot's partial
 * deform and the projection (a few nanoseconds a column, against some
 * tens a row).
 */
#define TUPLE_SPARE_COLUMNS 8

/*
 * A Seq Scan's projection that picks columns of its table and computes
 * nothing: for each output column its attribute number; NULL otherwise
 * (an expression, a system column, a whole-row Var, or a wide table whose
 * columns past the picked ones are many).
 */
static AttrNumber *
columns_of_scan(PlanState *child, Relation rel, int natts)
{
	Index		scanrelid = ((Scan *) child->plan)->scanrelid;
	AttrNumber *map;
	AttrNumber	last = 0;
	int			i = 0;
	ListCell   *lc;

	if (list_length(child->plan->targetlist) != natts)
		return NULL;
	map = palloc(sizeof(AttrNumber) * Max(natts, 1));
	foreach(lc, child->plan->targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *var = (Var *) tle->expr;

		if (!IsA(var, Var) || var->varno != scanrelid || var->varlevelsup != 0 ||
			var->varattno <= 0)
		{
			pfree(map);
			return NULL;
		}
		map[i++] = var->varattno;
		last = Max(last, var->varattno);
	}
	if (RelationGetDescr(rel)->natts - last > TUPLE_SPARE_COLUMNS)
	{
		pfree(map);
		return NULL;
	}
	return map;
}

/*
 * A Seq Scan child is read directly: its heap a page at a time, as a table
 * input reads it (next_page_tuple), its qual and projection evaluated as
 * ExecScan evaluates them, in its expression context.  That saves the node
 * call, the buffer slot and the scan's per-row steps, which cost as much
 * as a tenth of a big sort's time.  The node itself is never run (EXPLAIN
 * ANALYZE's counts are kept for it).  Not under EvalPlanQual (ExecScan
 * substitutes the row being rechecked), for a parallel-aware scan (the
 * workers share its blocks), another table AM or a snapshot that is not
 * MVCC (no page mode).
 */
static bool
open_plan_scan(XxlInput *in, PlanState *child)
{
	ScanState  *ss = (ScanState *) child;
	EState	   *estate = child->state;
	Relation	rel = ss->ss_currentRelation;

	if (!IsA(child, SeqScanState) || child->plan->parallel_aware ||
		estate->es_epq_active != NULL ||
		rel->rd_tableam != GetHeapamTableAmRoutine() || !IsMVCCSnapshot(estate->es_snapshot))
		return false;
	/* what ExecProcNode would do first: a rescan with new parameters */
	if (child->chgParam != NULL)
		ExecReScan(child);
	in->rel = rel;
	if (!begin_scan(in, rel, estate->es_snapshot))
	{
		table_endscan(in->scan);
		in->scan = NULL;
		return false;
	}
	in->qual = child->qual;
	in->proj = child->ps_ProjInfo;
	in->econtext = child->ps_ExprContext;
	if (in->proj != NULL)
		in->tuple_map = columns_of_scan(child, rel, in->desc->natts);
	return true;
}

XxlInput *
xxl_input_open_plan(PlanState *child, const char *description)
{
	XxlInput   *in = palloc0(sizeof(XxlInput));

	in->kind = INPUT_PLAN;
	in->description = pstrdup(description);
	in->cxt = CurrentMemoryContext;
	in->desc = ExecGetResultType(child);
	in->child = child;
	(void) open_plan_scan(in, child);
	return in;
}

bool
xxl_input_plan_direct(XxlInput *in)
{
	return in->kind == INPUT_PLAN && in->pagewise;
}

Relation
xxl_input_relation(XxlInput *in)
{
	return in->kind == INPUT_TABLE ? in->rel : NULL;
}

TupleDesc
xxl_input_desc(XxlInput *in)
{
	return in->desc;
}

const char *
xxl_input_describe(XxlInput *in)
{
	return in->description;
}

/*
 * The next visible row of a heap, a page at a time as a heap scan in page
 * mode does (heapgetpage() collects the page's visible tuples and keeps it
 * pinned), but handing out the tuples from the pinned page directly instead
 * of through a buffer slot: no pin and unpin per row.  This leans on PG15's
 * heap scan internals (heapgetpage, rs_vistuples, rs_ntuples).
 */
static TupleTableSlot *
next_heap_row(XxlInput *in)
{
	HeapTuple	tuple = xxl_input_next_tuple(in);

	if (tuple == NULL)
		return NULL;
	ExecStoreHeapTuple(tuple, in->slot, false);
	return in->slot;
}

/*
 * The next row of a Seq Scan child read directly: the next tuple its qual
 * passes, projected as the node projects it.
 */
static TupleTableSlot *
next_plan_scan_row(XxlInput *in)
{
	ExprContext *econtext = in->econtext;
	Instrumentation *instr = in->child->instrument;
	TupleTableSlot *result = NULL;

	/* EXPLAIN ANALYZE counts the node's rows and time as ExecProcNode would */
	if (instr != NULL)
		InstrStartNode(instr);
	for (;;)
	{
		HeapTuple	tuple = next_page_tuple(in);

		if (tuple == NULL)
			break;
		ExecStoreHeapTuple(tuple, in->slot, false);
		if (!econtext->ecxt_per_tuple_memory->isReset)
			ResetExprContext(econtext);
		econtext->ecxt_scantuple = in->slot;
		if (in->qual != NULL && !ExecQual(in->qual, econtext))
		{
			InstrCountFiltered1(in->child, 1);
			continue;
		}
		in->rows++;
		result = in->proj != NULL ? ExecProject(in->proj) : in->slot;
		break;
	}
	if (instr != NULL)
		InstrStopNode(instr, result != NULL ? 1.0 : 0.0);
	return result;
}

/*
 * A Seq Scan child read directly hands out its table's tuples as they are
 * when it has no qual to test and its projection, if any, only picks
 * columns (xxl_input_tuple_desc), and no EXPLAIN ANALYZE counts its rows
 * one by one.
 */
bool
xxl_input_has_tuples(XxlInput *in)
{
	if (in->kind == INPUT_PLAN)
		return in->pagewise && in->qual == NULL && (in->proj == NULL || in->tuple_map != NULL) &&
			in->child->instrument == NULL;
	return in->kind == INPUT_TABLE && in->pagewise;
}

TupleDesc
xxl_input_tuple_desc(XxlInput *in, const AttrNumber **map)
{
	*map = in->kind == INPUT_PLAN && in->proj != NULL ? in->tuple_map : NULL;
	return in->kind == INPUT_PLAN ? RelationGetDescr(in->rel) : in->desc;
}

HeapTuple
xxl_input_next_tuple(XxlInput *in)
{
	HeapTuple	tuple;

	Assert(xxl_input_has_tuples(in));
	tuple = next_page_tuple(in);
	if (tuple != NULL)
		in->rows++;
	return tuple;
}

static HeapTuple
next_page_tuple(XxlInput *in)
{
	HeapScanDesc hscan = (HeapScanDesc) in->scan;
	Page		page;
	OffsetNumber off;
	ItemId		lp;

	if (in->done)
		return NULL;
	while (!BufferIsValid(hscan->rs_cbuf) || in->next_index >= hscan->rs_ntuples)
	{
		if (in->next_block >= hscan->rs_nblocks)
		{
			in->done = true;
			return NULL;
		}
		heapgetpage(in->scan, in->next_block++);
		in->next_index = 0;
	}
	page = BufferGetPage(hscan->rs_cbuf);
	off = hscan->rs_vistuples[in->next_index++];
	lp = PageGetItemId(page, off);
	in->tuple.t_data = (HeapTupleHeader) PageGetItem(page, lp);
	in->tuple.t_len = ItemIdGetLength(lp);
	ItemPointerSet(&in->tuple.t_self, hscan->rs_cblock, off);
	/* as heap_getnextslot counts it (pg_stat_user_tables.seq_tup_read) */
	pgstat_count_heap_getnext(in->scan->rs_rd);
	return &in->tuple;
}

/* The access method whose tables hand out runs, and how (one: the xxl tables'). */
static const TableAmRoutine *runs_am;
static XxlRunScan runs_next;

void
xxl_input_register_runs(const TableAmRoutine *am, XxlRunScan next_run)
{
	runs_am = am;
	runs_next = next_run;
}

bool
xxl_input_has_runs(XxlInput *in)
{
	return in->kind == INPUT_TABLE && runs_am != NULL && in->rel->rd_tableam == runs_am;
}

bool
xxl_input_runs_byval(XxlInput *in)
{
	XxlRowFormat fmt;

	if (!xxl_input_has_runs(in))
		return false;
	xxl_row_format_init(&fmt, in->desc, in->desc->natts);
	return fmt.byval;
}

bool
xxl_input_next_run(XxlInput *in, XxlRowRun *run)
{
	Assert(xxl_input_has_runs(in));
	if (in->done || !runs_next(in->scan, run))
	{
		in->done = true;
		return false;
	}
	in->rows += run->n;
	return true;
}

TupleTableSlot *
xxl_input_next(XxlInput *in)
{
	if (in->done)
		return NULL;
	if (in->kind == INPUT_LEAVES)
	{
		TupleTableSlot *slot = next_leaf_row(in);

		in->done = slot == NULL;
		return slot;
	}
	if (in->kind == INPUT_TABLE && in->pagewise)
		return next_heap_row(in);
	if (in->kind == INPUT_PLAN && in->pagewise)
	{
		TupleTableSlot *slot = next_plan_scan_row(in);

		if (slot == NULL)
			in->done = true;
		return slot;
	}
	if (in->kind == INPUT_PLAN)
	{
		/*
		 * Nodes set themselves up at their first fetch (a scan opens its
		 * table scan then) in the current context: the query's, as the
		 * executor would have it, not a caller's per-row context.
		 */
		MemoryContext old = MemoryContextSwitchTo(in->child->state->es_query_cxt);
		TupleTableSlot *slot = ExecProcNode(in->child);

		MemoryContextSwitchTo(old);

		if (TupIsNull(slot))
		{
			in->done = true;
			return NULL;
		}
		in->slot = slot;
		in->rows++;
		return slot;
	}
	if (in->kind == INPUT_TABLE)
	{
		if (table_scan_getnextslot(in->scan, ForwardScanDirection, in->slot))
		{
			in->rows++;
			return in->slot;
		}
		in->done = true;
		return NULL;
	}

	if (in->batch_pos >= in->batch_rows)
	{
		MemoryContext cur = CurrentMemoryContext;

		if (in->batch)
			SPI_freetuptable(in->batch);
		in->batch = NULL;
		SPI_cursor_fetch(in->portal, true, in->batch_size);
		MemoryContextSwitchTo(cur);
		in->batch = SPI_tuptable;
		in->batch_rows = SPI_processed;
		in->batch_pos = 0;
		if (in->batch_rows == 0)
		{
			in->done = true;
			return NULL;
		}
		else
		{
			uint64		bytes = 0;

			for (uint64 i = 0; i < in->batch_rows; i++)
				bytes += in->batch->vals[i]->t_len;
			in->batch_size = (long) Max(1, Min(FETCH_BATCH, FETCH_BYTES * in->batch_rows / Max(bytes, 1)));
		}
	}
	ExecStoreHeapTuple(in->batch->vals[in->batch_pos++], in->slot, false);
	in->rows++;
	return in->slot;
}

HeapTuple
xxl_input_heap_tuple(XxlInput *in)
{
	/* a plan's slot may hold a table's whole row while the plan shows fewer columns */
	if (in->kind == INPUT_PLAN || in->kind == INPUT_LEAVES || TTS_EMPTY(in->slot))
		return NULL;
	if (TTS_IS_BUFFERTUPLE(in->slot) || TTS_IS_HEAPTUPLE(in->slot))
		return ExecFetchSlotHeapTuple(in->slot, false, NULL);
	return NULL;
}

uint64
xxl_input_rows(XxlInput *in)
{
	return in->rows;
}

uint64
xxl_input_expected_rows(XxlInput *in)
{
	double		rows = 0;

	if (in->child != NULL)
		rows = in->child->plan->plan_rows;
	else if (in->rel != NULL)
	{
		BlockNumber pages;
		double		allvisfrac;

		/* what the planner would take: reltuples, scaled to the table's size now */
		estimate_rel_size(in->rel, NULL, &pages, &rows, &allvisfrac);
	}
	else if (in->kind == INPUT_LEAVES)
	{
		ListCell   *lc;

		foreach(lc, in->leaves)
		{
			Relation	leaf = table_open(lfirst_oid(lc), AccessShareLock);
			BlockNumber pages;
			double		leaf_rows,
						allvisfrac;

			estimate_rel_size(leaf, NULL, &pages, &leaf_rows, &allvisfrac);
			rows += Max(leaf_rows, 0);
			table_close(leaf, NoLock);
		}
	}
	else if (in->portal != NULL && list_length(in->portal->stmts) == 1 &&
			 IsA(linitial(in->portal->stmts), PlannedStmt))
		rows = linitial_node(PlannedStmt, in->portal->stmts)->planTree->plan_rows;
	return rows > 0 && rows < (double) PG_UINT64_MAX ? (uint64) rows : 0;
}

void
xxl_input_close(XxlInput *in)
{
	if (in->kind == INPUT_LEAVES)
	{
		if (in->leaf != NULL)
			xxl_input_close(in->leaf);
		in->leaf = NULL;
		ExecDropSingleTupleTableSlot(in->slot);
	}
	else if (in->kind == INPUT_PLAN)
	{
		/* the child plan is its owner's to end; a direct scan is ours */
		if (in->scan != NULL)
		{
			ExecDropSingleTupleTableSlot(in->slot);
			table_endscan(in->scan);
			in->scan = NULL;
		}
	}
	else if (in->kind == INPUT_TABLE)
	{
		ExecDropSingleTupleTableSlot(in->slot);
		table_endscan(in->scan);
		UnregisterSnapshot(in->snapshot);
		table_close(in->rel, NoLock);
	}
	else
	{
		MemoryContext cur = CurrentMemoryContext;

		ExecDropSingleTupleTableSlot(in->slot);
		if (in->batch)
			SPI_freetuptable(in->batch);
		in->batch = NULL;
		SPI_cursor_close(in->portal);
		if (in->spi_connected)
			SPI_finish();
		in->spi_connected = false;
		MemoryContextSwitchTo(cur);
	}
	in->slot = NULL;
}
