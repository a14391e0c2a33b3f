/*
 * xxl_shard_merge_exec.c — the XxlShardMerge and XxlShardAppend nodes
 * (xxl_shard_merge.h): a MergeAppend, or an ordered Append, whose foreign
 * partitions' sorted scans all start at once.
 *
 * The node's children are the MergeAppend's.  The foreign ones are
 * initialised as postgres_fdw's scans (which takes their connection and
 * opens the remote transaction) but never run: at the first fetch, every
 * one's SQL, the statement postgres_fdw would have sent through a cursor,
 * goes to its server at once as a binary COPY (xxl_shard_stream.h), after
 * the collations of the key's text columns were checked there.  A row
 * received fills the scan's tuple and goes through the scan's own
 * projection; the local children are run as the MergeAppend ran them.
 * The engine's merge of sorted streams (xxl_sort_run_merge) then holds one
 * row per child and hands them out in order; XxlShardAppend reads its
 * children one after the other instead, as the Append did, and a shard
 * whose turn has not come holds its sorted rows until it is read.  The
 * foreign children's instrumentation counts their rows and the time spent
 * waiting for them, so that EXPLAIN ANALYZE shows each shard's figures
 * under it.
 *
 * A rescan stops the streams (dropping them cancels what still runs) and
 * starts over; an error or cancel stops them through the transaction.
 *
 * A statement holds its connection until its last row is read, and a
 * connection carries one statement at a time.  So the streams start only
 * when the query runs to its end in one go (xxl_shard_statement_runs_at_once;
 * execute_once is no sign of it: a simple query's run comes with it
 * false).  A query whose rows are fetched a few at a time, with other statements in
 * between (a PL/pgSQL FOR loop fetches ten, a client may ask for a few),
 * runs its foreign children through postgres_fdw's own cursors instead,
 * one after the other, as the MergeAppend would.
 */
#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "parser/parsetree.h"
#include "utils/memutils.h"

#include "pg/runtime/runtime.h"
#include "pg/plan/plan.h"
#include "pg/sort/sort.h"
#include "pg/shard/xxl_shard_fdw.h"
#include "pg/shard/xxl_shard_merge.h"
#include "pg/shard/xxl_shard_stream.h"

typedef struct MergeChild
{
	PlanState  *ps;
	/* a foreign partition's scan */
	XxlShard   *shard;
	const char *sql;
	List	   *retrieved;
	XxlShardStream *stream;		/* while the merge runs */
	int			nout;			/* columns of its rows */
	int		   *project;		/* per column, the scan tuple's it is (-1: a constant), or NULL */
	Datum	   *consts;			/* ... the constants' values */
	bool	   *const_null;
	bool		identity;		/* ... every column the scan tuple's, in its place */
	Datum	   *scan_values;	/* ... and the scan tuple, received */
	bool	   *scan_isnull;
} MergeChild;

typedef struct ShardMergeState
{
	CustomScanState css;
	bool		in_order;		/* XxlShardAppend: the children one after the other */
	XxlPlanSortKeys keys;		/* XxlShardMerge's key */
	int			ncollations;	/* the collations the shards' order depends on */
	Oid		   *collations;
	int			nchildren;
	MergeChild *children;
	TupleDesc	desc;			/* the children's rows, and the node's */
	XxlSortKey *key;
	MemoryContext run_cxt;		/* the merge and its streams, cleared by a rescan */
	XxlSortedStream *streams;	/* per child: how its rows are read */
	XxlSortRun *run;			/* XxlShardMerge's merge */
	XxlOperator *op;			/* XxlShardAppend's figures, until its end */
	int			current;		/* XxlShardAppend: the child being read */
	MemoryContext row_cxt;		/* ... and what its row needed */
	int			nshards;
	XxlShardStream **shards;	/* the foreign children's streams */
	bool		started;
} ShardMergeState;

static Node *create_shard_merge_state(CustomScan *cscan);
static void begin_shard_merge(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_shard_merge(CustomScanState *node);
static void end_shard_merge(CustomScanState *node);
static void rescan_shard_merge(CustomScanState *node);
static void explain_shard_merge(CustomScanState *node, List *ancestors, ExplainState *es);

const CustomScanMethods xxl_shard_merge_methods = {
	.CustomName = XXL_SHARD_MERGE_NAME,
	.CreateCustomScanState = create_shard_merge_state,
};

const CustomScanMethods xxl_shard_append_methods = {
	.CustomName = XXL_SHARD_APPEND_NAME,
	.CreateCustomScanState = create_shard_merge_state,
};

static const CustomExecMethods shard_merge_exec_methods = {
	.CustomName = XXL_SHARD_MERGE_NAME,
	.BeginCustomScan = begin_shard_merge,
	.ExecCustomScan = exec_shard_merge,
	.EndCustomScan = end_shard_merge,
	.ReScanCustomScan = rescan_shard_merge,
	.ExplainCustomScan = explain_shard_merge,
};

static Node *
create_shard_merge_state(CustomScan *cscan)
{
	ShardMergeState *state = palloc0(sizeof(ShardMergeState));

	NodeSetTag(state, T_CustomScanState);
	state->css.flags = cscan->flags;
	state->css.methods = &shard_merge_exec_methods;
	state->in_order = cscan->methods == &xxl_shard_append_methods;
	if (state->in_order)
	{
		List	   *collations = linitial(cscan->custom_private);
		ListCell   *lc;

		state->collations = palloc(sizeof(Oid) * Max(list_length(collations), 1));
		foreach(lc, collations)
			state->collations[state->ncollations++] = lfirst_oid(lc);
	}
	else
	{
		xxl_plan_keys_read(cscan->custom_private, &state->keys);
		state->ncollations = state->keys.ncols;
		state->collations = state->keys.collations;
	}
	return (Node *) state;
}

static void
begin_shard_merge(CustomScanState *node, EState *estate, int eflags)
{
	ShardMergeState *state = (ShardMergeState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	ListCell   *lc;

	state->desc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	state->nchildren = list_length(cscan->custom_plans);
	state->children = palloc0(sizeof(MergeChild) * state->nchildren);
	state->shards = palloc0(sizeof(XxlShardStream *) * state->nchildren);
	foreach(lc, cscan->custom_plans)
	{
		Plan	   *plan = lfirst(lc);
		MergeChild *c = &state->children[foreach_current_index(lc)];
		Oid			relid;

		c->ps = ExecInitNode(plan, estate, eflags);
		node->custom_ps = lappend(node->custom_ps, c->ps);
		if (xxl_shard_merge_child_sql(plan, estate->es_range_table, &relid, &c->sql, &c->retrieved))
		{
			RangeTblEntry *rte = exec_rt_fetch(((Scan *) plan)->scanrelid, estate);

			/* the user postgres_fdw connects as for this scan */
			c->shard = xxl_shard_of_partition(relid, rte->checkAsUser);
		}
	}
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	if (!state->in_order)
		state->key = xxl_sortkey_create_plan(state->desc, state->keys.ncols, state->keys.cols,
											 state->keys.sortops, state->keys.collations,
											 state->keys.nulls_first);
	state->run_cxt = AllocSetContextCreate(estate->es_query_cxt, "xxl shard merge",
										   ALLOCSET_SMALL_SIZES);
}

/* A child's row (the node's input row, column for column) into values. */
static void
copy_row(TupleTableSlot *slot, Datum *values, bool *isnull)
{
	int			natts = slot->tts_tupleDescriptor->natts;

	slot_getallattrs(slot);
	memcpy(values, slot->tts_values, sizeof(Datum) * natts);
	memcpy(isnull, slot->tts_isnull, sizeof(bool) * natts);
}

/*
 * A local child's next row, as the MergeAppend read it: in the query's
 * memory, where plan nodes keep their state (the merge calls streams in a
 * context of its own, reset row by row).
 */
static bool
local_next(void *arg, Datum *values, bool *isnull)
{
	MergeChild *c = arg;
	MemoryContext old = MemoryContextSwitchTo(c->ps->state->es_query_cxt);
	TupleTableSlot *slot = ExecProcNode(c->ps);

	MemoryContextSwitchTo(old);
	if (TupIsNull(slot))
		return false;
	copy_row(slot, values, isnull);
	return true;
}

/*
 * Per column of a foreign child's rows, the scan tuple's column it is, or
 * -1 for a constant (the planner's NULL in place of a column the query
 * does not use), when its projection is only that (plain Vars of the scan
 * tuple and constants, as postgres_fdw's scans have: the table's row with
 * the columns the SQL returns); false otherwise, and the projection runs
 * row by row.
 */
static bool
simple_projection(MergeChild *c, int scan_natts)
{
	PlanState  *ps = c->ps;
	List	   *tlist = ps->plan->targetlist;
	int			n = list_length(tlist);
	ListCell   *lc;

	c->identity = false;
	if (ps->ps_ProjInfo == NULL)
	{
		/* no projection: the scan tuple is the row */
		c->identity = true;
		c->nout = scan_natts;
		return true;
	}
	if (tlist == NIL)
		return false;
	c->project = palloc(sizeof(int) * n);
	c->consts = palloc0(sizeof(Datum) * n);
	c->const_null = palloc0(sizeof(bool) * n);
	c->identity = n == scan_natts;
	foreach(lc, tlist)
	{
		Node	   *e = (Node *) ((TargetEntry *) lfirst(lc))->expr;
		int			i = foreach_current_index(lc);

		if (IsA(e, Const))
		{
			c->project[i] = -1;
			c->consts[i] = ((Const *) e)->constvalue;
			c->const_null[i] = ((Const *) e)->constisnull;
			c->identity = false;
			continue;
		}
		if (!IsA(e, Var) || ((Var *) e)->varlevelsup != 0 || ((Var *) e)->varattno <= 0 ||
			((Var *) e)->varattno > scan_natts)
		{
			c->project = NULL;
			c->identity = false;
			return false;
		}
		c->project[i] = ((Var *) e)->varattno - 1;
		c->identity &= c->project[i] == i;
	}
	c->nout = n;
	return true;
}

/* A foreign child's next row: received, then through its scan's projection. */
static bool
foreign_next(void *arg, Datum *values, bool *isnull)
{
	MergeChild *c = arg;
	ScanState  *scan = (ScanState *) c->ps;
	TupleTableSlot *slot = scan->ss_ScanTupleSlot;
	bool		got;

	if (c->ps->instrument)
		InstrStartNode(c->ps->instrument);
	if (c->identity)
	{
		/* (the received row is the child's row) */
		got = xxl_shard_stream_next(c->stream, values, isnull);
		if (c->ps->instrument)
			InstrStopNode(c->ps->instrument, got ? 1.0 : 0.0);
		return got;
	}
	if (c->project != NULL)
	{
		/* (the projection's columns taken from the received row directly) */
		got = xxl_shard_stream_next(c->stream, c->scan_values, c->scan_isnull);
		for (int i = 0; got && i < c->nout; i++)
		{
			int			a = c->project[i];

			values[i] = a >= 0 ? c->scan_values[a] : c->consts[i];
			isnull[i] = a >= 0 ? c->scan_isnull[a] : c->const_null[i];
		}
		if (c->ps->instrument)
			InstrStopNode(c->ps->instrument, got ? 1.0 : 0.0);
		return got;
	}
	ExecClearTuple(slot);
	got = xxl_shard_stream_next(c->stream, slot->tts_values, slot->tts_isnull);
	if (got)
	{
		ExecStoreVirtualTuple(slot);
		if (c->ps->ps_ProjInfo != NULL)
		{
			ResetExprContext(c->ps->ps_ExprContext);
			c->ps->ps_ExprContext->ecxt_scantuple = slot;
			slot = ExecProject(c->ps->ps_ProjInfo);
		}
		copy_row(slot, values, isnull);
	}
	if (c->ps->instrument)
		InstrStopNode(c->ps->instrument, got ? 1.0 : 0.0);
	return got;
}

static void
report_shards(void *arg, XxlOperator *op)
{
	ShardMergeState *state = arg;

	xxl_shard_streams_report(op, state->shards, state->nshards);
}

/* Every foreign child's statement sent, then the merge's first rows. */
static void
start_merge(ShardMergeState *state)
{
	MemoryContext old = MemoryContextSwitchTo(state->run_cxt);
	XxlShardGroup *group = xxl_shard_group_create();
	XxlSortedStream *streams = state->streams = palloc0(sizeof(XxlSortedStream) * state->nchildren);
	XxlSortRunOptions options = {.name = XXL_SHARD_MERGE_NAME};
	bool		at_once = xxl_shard_statement_runs_at_once();
	Bitmapset  *own = NULL;		/* the streams' partitions (range table indexes) */

	state->nshards = 0;
	for (int i = 0; i < state->nchildren; i++)
	{
		MergeChild *c = &state->children[i];
		TupleDesc	desc;
		int		   *result_col;
		ListCell   *lc;

		streams[i].arg = c;
		streams[i].next = c->shard != NULL && at_once ? foreign_next : local_next;
		if (c->shard == NULL || !at_once)
			continue;
		/* the table's columns, those the SQL returns in their places */
		desc = ((ScanState *) c->ps)->ss_ScanTupleSlot->tts_tupleDescriptor;
		result_col = palloc(sizeof(int) * Max(desc->natts, 1));
		for (int a = 0; a < desc->natts; a++)
			result_col[a] = -1;
		foreach(lc, c->retrieved)
			result_col[lfirst_int(lc) - 1] = foreach_current_index(lc);
		own = bms_add_member(own, (int) ((Scan *) c->ps->plan)->scanrelid);
		if (simple_projection(c, desc->natts))
		{
			c->scan_values = palloc0(sizeof(Datum) * Max(desc->natts, 1));
			c->scan_isnull = palloc0(sizeof(bool) * Max(desc->natts, 1));
		}
		c->stream = xxl_shard_stream_open(group, c->shard, desc, result_col);
		xxl_shard_stream_check_collations(c->stream, state->collations, state->ncollations);
		xxl_shard_stream_send(c->stream, c->sql, true);
		state->shards[state->nshards++] = c->stream;
	}
	/* (another scan of the statement on one of those servers: given the connection) */
	xxl_shard_streams_free_for_statement(state->shards, state->nshards, own);
	if (state->in_order)
	{
		state->op = xxl_operator_begin(XXL_SHARD_APPEND_NAME);
		xxl_operator_describe(state->op, NULL, 0);
		xxl_operator_detail(state->op, "streams", "%d", state->nchildren);
		xxl_operator_detail(state->op, "streams_in_order", "true");
		xxl_operator_phase(state->op, XXL_PHASE_OUTPUT);
		state->row_cxt = AllocSetContextCreate(state->run_cxt, "xxl shard append row",
											   ALLOCSET_DEFAULT_SIZES);
		state->current = 0;
	}
	else
		state->run = xxl_sort_run_merge(streams, state->nchildren, state->key, state->desc,
										state->desc, NULL, &options, report_shards, state);
	MemoryContextSwitchTo(old);
	state->started = true;
}

/*
 * XxlShardAppend's next row: the current child's, or the next child's once
 * it has ended; at the end, its figures recorded.
 */
static bool
next_in_order(ShardMergeState *state, Datum *values, bool *isnull)
{
	while (state->current < state->nchildren)
	{
		XxlSortedStream *st = &state->streams[state->current];
		MemoryContext old;
		bool		got;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(state->row_cxt);
		old = MemoryContextSwitchTo(state->row_cxt);
		got = st->next(st->arg, values, isnull);
		MemoryContextSwitchTo(old);
		if (got)
		{
			if ((++state->op->rows_in & 1023) == 0)
				xxl_progress_publish(state->op, false);
			state->op->rows_out++;
			return true;
		}
		state->current++;
		/* (what was read so far, shown while the next child is waited for) */
		xxl_progress_publish(state->op, true);
	}
	if (state->op != NULL)
	{
		report_shards(state, state->op);
		xxl_operator_end(state->op);
		state->op = NULL;
	}
	return false;
}

static TupleTableSlot *
exec_shard_merge(CustomScanState *node)
{
	ShardMergeState *state = (ShardMergeState *) node;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;

	if (!state->started)
		start_merge(state);
	ExecClearTuple(slot);
	if (state->in_order ? !next_in_order(state, slot->tts_values, slot->tts_isnull) :
		(state->run == NULL || !xxl_sort_run_next(state->run, slot->tts_values, slot->tts_isnull)))
		return slot;
	return ExecStoreVirtualTuple(slot);
}

/* The merge and its streams gone: statements still running are stopped. */
static void
stop_merge(ShardMergeState *state)
{
	if (state->run_cxt != NULL)
		MemoryContextReset(state->run_cxt);
	state->run = NULL;
	state->streams = NULL;
	state->op = NULL;
	state->row_cxt = NULL;
	state->started = false;
	for (int i = 0; i < state->nchildren; i++)
		state->children[i].stream = NULL;
}

static void
end_shard_merge(CustomScanState *node)
{
	ShardMergeState *state = (ShardMergeState *) node;

	stop_merge(state);
	for (int i = 0; i < state->nchildren; i++)
		ExecEndNode(state->children[i].ps);
}

static void
rescan_shard_merge(CustomScanState *node)
{
	ShardMergeState *state = (ShardMergeState *) node;

	stop_merge(state);
	/* (a foreign scan that never ran, its rows streamed, has no cursor to reset) */
	for (int i = 0; i < state->nchildren; i++)
		ExecReScan(state->children[i].ps);
}

/*
 * The key (XxlShardMerge's); the shards, and under ANALYZE what each
 * sent: its rows, bytes and the time to its first row (its sort's).
 */
static void
explain_shard_merge(CustomScanState *node, List *ancestors, ExplainState *es)
{
	ShardMergeState *state = (ShardMergeState *) node;
	List	   *shards = NIL;

	if (!state->in_order)
		ExplainPropertyList("Sort Key",
							xxl_plan_key_texts(node->ss.ps.plan, &state->keys, ancestors, es), es);
	for (int i = 0; i < state->nchildren; i++)
		if (state->children[i].shard != NULL)
			shards = lappend(shards, state->children[i].shard->server);
	ExplainPropertyList("Shards Started at Once", shards, es);
	if (!es->analyze)
		return;
	ExplainOpenGroup("Shard Streams", "Shard Streams", false, es);
	for (int i = 0; i < state->nchildren; i++)
	{
		MergeChild *c = &state->children[i];
		uint64		rows,
					bytes;
		double		first_ms;

		if (c->stream == NULL)
			continue;
		xxl_shard_stream_figures(c->stream, &rows, &bytes, &first_ms);
		if (es->format == EXPLAIN_FORMAT_TEXT)
		{
			appendStringInfoSpaces(es->str, es->indent * 2);
			appendStringInfo(es->str, "Shard %s (%s): " UINT64_FORMAT " rows, " UINT64_FORMAT
							 " kB, first row after %.1f ms\n", c->shard->server, c->shard->where,
							 rows, (bytes + 1023) / 1024, Max(first_ms, 0));
			continue;
		}
		ExplainOpenGroup("Shard", NULL, true, es);
		ExplainPropertyText("Server", c->shard->server, es);
		ExplainPropertyText("Partition", c->shard->where, es);
		ExplainPropertyUInteger("Rows", NULL, rows, es);
		ExplainPropertyUInteger("Received", "kB", (bytes + 1023) / 1024, es);
		ExplainPropertyFloat("First Row", "ms", Max(first_ms, 0), 1, es);
		ExplainCloseGroup("Shard", NULL, true, es);
	}
	ExplainCloseGroup("Shard Streams", "Shard Streams", false, es);
}
