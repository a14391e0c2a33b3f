/*
 * xxl_plan_sort_exec.c — the XxlSort node: a Sort of a query plan run by
 * the external sorter (which Sorts become one: xxl_plan_sort.c).
 *
 * The first fetch pulls every row of the child into an XxlSortRun
 * (xxl_sort_run.h, reading the child through xxl_input_open_plan) under the
 * node's budget (xxl.memory if set, else work_mem); rows then stream out of
 * the final merge as virtual tuples, valid until the next fetch.
 *
 * What a Sort offers its parent, XxlSort offers too, as Material does over
 * any child.  Marks alone (a merge join's inner side) are kept by the run:
 * it keeps the records handed out since the mark (xxl_mark_buffer.h), one
 * group of equal keys, and replays them after a restore.  A group larger
 * than work_mem moves into a tuplestore, which spills, and the tuplestore
 * keeps the marks from then on, trimmed to the rows since the mark.  When
 * the executor asks for backward fetches (scrollable cursors) or cheap
 * rescans (REWIND), rows go into a tuplestore as they stream out from the
 * start.  Without such a request nothing is kept.  A rescan sorts again,
 * unless the tuplestore holds the rows and the child's parameters did not
 * change.
 *
 * Everything the node holds lives in a memory context of the query: an
 * error or cancel anywhere (the child, the sorter, the parent) drops the
 * run with its threads and spill files when the query's memory goes.
 */
#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/tuplestore.h"

#include "pg/runtime/runtime.h"
#include "pg/io/io.h"
#include "pg/plan/xxl_lazy_slot.h"
#include "pg/plan/xxl_plan_sort.h"
#include "pg/sort/sort.h"

List *
xxl_plan_keys_private(int ncols, const AttrNumber *cols, const Oid *sortops,
					  const Oid *collations, const bool *nulls_first)
{
	List	   *c = NIL;
	List	   *ops = NIL;
	List	   *colls = NIL;
	List	   *nulls = NIL;

	for (int i = 0; i < ncols; i++)
	{
		c = lappend_int(c, cols[i]);
		ops = lappend_oid(ops, sortops[i]);
		colls = lappend_oid(colls, collations[i]);
		nulls = lappend_int(nulls, nulls_first[i] ? 1 : 0);
	}
	return list_make4(c, ops, colls, nulls);
}

void
xxl_plan_keys_read(List *private, XxlPlanSortKeys *keys)
{
	List	   *cols = linitial(private);
	List	   *ops = lsecond(private);
	List	   *colls = lthird(private);
	List	   *nulls = lfourth(private);
	int			n = list_length(cols);

	keys->ncols = n;
	keys->cols = palloc(sizeof(AttrNumber) * Max(n, 1));
	keys->sortops = palloc(sizeof(Oid) * Max(n, 1));
	keys->collations = palloc(sizeof(Oid) * Max(n, 1));
	keys->nulls_first = palloc(sizeof(bool) * Max(n, 1));
	keys->distinct = list_length(private) > 4 && intVal(list_nth(private, 4)) != 0;
	for (int i = 0; i < n; i++)
	{
		keys->cols[i] = (AttrNumber) list_nth_int(cols, i);
		keys->sortops[i] = list_nth_oid(ops, i);
		keys->collations[i] = list_nth_oid(colls, i);
		keys->nulls_first[i] = list_nth_int(nulls, i) != 0;
	}
}

#define RANDOM_ACCESS (EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)

typedef struct PlanSortState
{
	CustomScanState css;
	XxlPlanSortKeys keys;
	int			eflags;			/* what the parent asked of RANDOM_ACCESS */
	size_t		budget;
	MemoryContext run_cxt;		/* the run, cleared by a rescan */
	XxlSortKey *key;
	XxlSortRun *run;
	bool		sorted;			/* the child was read into run */
	bool		eof_underlying; /* run handed out its last row */
	Tuplestorestate *store;		/* eflags != 0 (but marks in the run): rows
								 * handed out */
	TupleTableSlot *stored;		/* a row read back from store */
	TupleTableSlot *out;		/* the slot rows go out in: a lazy one
								 * (xxl_lazy_slot.h), else the scan slot */
	size_t		marks_peak;		/* the run's mark buffer at most */
	bool		marks_spilled;	/* a group outgrew work_mem: store took over */
	/* for EXPLAIN ANALYZE: the last run's statistics */
	bool		have_stats;
	bool		fixed;
	bool		direct;			/* the child Seq Scan was read directly */
	bool		drained;		/* the rows after the first went to a new table's pages */
	XxlStats	stats;
} PlanSortState;

static Node *create_plan_sort_state(CustomScan *cscan);
static void begin_plan_sort(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_plan_sort(CustomScanState *node);
static void end_plan_sort(CustomScanState *node);
static void rescan_plan_sort(CustomScanState *node);
static void mark_plan_sort(CustomScanState *node);
static void restore_plan_sort(CustomScanState *node);
static void explain_plan_sort(CustomScanState *node, List *ancestors, ExplainState *es);

const CustomScanMethods xxl_plan_sort_methods = {
	.CustomName = XXL_PLAN_SORT_NAME,
	.CreateCustomScanState = create_plan_sort_state,
};

static const CustomExecMethods plan_sort_exec_methods = {
	.CustomName = XXL_PLAN_SORT_NAME,
	.BeginCustomScan = begin_plan_sort,
	.ExecCustomScan = exec_plan_sort,
	.EndCustomScan = end_plan_sort,
	.ReScanCustomScan = rescan_plan_sort,
	.MarkPosCustomScan = mark_plan_sort,
	.RestrPosCustomScan = restore_plan_sort,
	.ExplainCustomScan = explain_plan_sort,
};

static Node *
create_plan_sort_state(CustomScan *cscan)
{
	PlanSortState *state = palloc0(sizeof(PlanSortState));

	NodeSetTag(state, T_CustomScanState);
	state->css.flags = cscan->flags;
	state->css.methods = &plan_sort_exec_methods;
	xxl_plan_keys_read(cscan->custom_private, &state->keys);
	return (Node *) state;
}

static void
begin_plan_sort(CustomScanState *node, EState *estate, int eflags)
{
	PlanSortState *state = (PlanSortState *) node;
	Plan	   *plan = node->ss.ps.plan;

	/* as Sort: the child need not support what the parent asks of this node */
	state->eflags = eflags & RANDOM_ACCESS;
	outerPlanState(node) = ExecInitNode(outerPlan(plan), estate, eflags & ~RANDOM_ACCESS);
	state->budget = xxl_plan_sort_memory_bytes();
	/* rows are decoded when the parent reads them, if it does */
	state->out = xxl_lazy_slot_announce(&node->ss.ps, node->ss.ss_ScanTupleSlot->tts_tupleDescriptor);
	if (state->out == NULL)
		state->out = node->ss.ss_ScanTupleSlot;
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	state->key = xxl_sortkey_create_plan(ExecGetResultType(outerPlanState(node)),
										 state->keys.ncols, state->keys.cols,
										 state->keys.sortops, state->keys.collations,
										 state->keys.nulls_first);
	state->run_cxt = AllocSetContextCreate(estate->es_query_cxt, "xxl plan sort",
										   ALLOCSET_SMALL_SIZES);
	if (state->eflags != 0)
		state->stored = ExecInitExtraTupleSlot(estate, node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
											   &TTSOpsMinimalTuple);
}

/*
 * A stored row, handed on in the node's own virtual slot (the type its
 * parent was compiled for), its values pointing into the tuplestore: the
 * row stays there until the next call, as tuplestore_trim keeps the row
 * before the mark.
 */
static bool
next_from_store(PlanSortState *state, bool forward, TupleTableSlot *slot)
{
	int			natts = slot->tts_tupleDescriptor->natts;

	ExecClearTuple(slot);
	if (!tuplestore_gettupleslot(state->store, forward, false, state->stored))
		return false;
	slot_getallattrs(state->stored);
	memcpy(slot->tts_values, state->stored->tts_values, sizeof(Datum) * natts);
	memcpy(slot->tts_isnull, state->stored->tts_isnull, sizeof(bool) * natts);
	ExecStoreVirtualTuple(slot);
	return true;
}

/*
 * Which of the child's columns the run must keep: not those the child's
 * target list fills with a NULL constant (a column nobody above reads, as
 * the planner leaves it), which come back as NULL; NULL when it keeps all.
 * A row that is then all key needs no payload.
 */
static bool *
columns_needed(const Plan *child)
{
	bool	   *needed = NULL;
	ListCell   *lc;
	int			i = 0;

	foreach(lc, child->targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		if (IsA(tle->expr, Const) && ((Const *) tle->expr)->constisnull)
		{
			if (needed == NULL)
			{
				needed = palloc(sizeof(bool) * list_length(child->targetlist));
				memset(needed, true, sizeof(bool) * list_length(child->targetlist));
			}
			needed[i] = false;
		}
		i++;
	}
	return needed;
}

static Node *
strip_relabel(Node *e)
{
	while (e != NULL && IsA(e, RelabelType))
		e = (Node *) ((RelabelType *) e)->arg;
	return e;
}

/*
 * Where a child's column is a table column that a sort key column holds
 * too (ORDER BY v COLLATE "C" adds v relabelled as a column of its own),
 * the run takes its value from the key column, which the key restores, so
 * rows do not carry the value twice.  Only plain column
 * references: an expression could be volatile.  NULL: every column as it
 * is.
 */
static AttrNumber *
columns_from_keys(const Plan *child, const XxlPlanSortKeys *keys)
{
	int			n = list_length(child->targetlist);
	AttrNumber *map = NULL;

	for (int i = 0; i < n; i++)
	{
		Node	   *e = strip_relabel((Node *) list_nth_node(TargetEntry, child->targetlist, i)->expr);
		int			k;

		if (e == NULL || !IsA(e, Var))
			continue;
		for (k = 0; k < keys->ncols && keys->cols[k] != i + 1; k++)
			;
		if (k < keys->ncols)
			continue;			/* a key column itself */
		for (k = 0; k < keys->ncols; k++)
		{
			TargetEntry *kt = list_nth_node(TargetEntry, child->targetlist, keys->cols[k] - 1);

			if (equal(strip_relabel((Node *) kt->expr), e))
			{
				if (map == NULL)
				{
					map = palloc(sizeof(AttrNumber) * n);
					for (int j = 0; j < n; j++)
						map[j] = j + 1;
				}
				map[i] = keys->cols[k];
				break;
			}
		}
	}
	return map;
}

/* Read the child into the sorter: everything before the first row. */
static void
sort_child(PlanSortState *state)
{
	MemoryContext old = MemoryContextSwitchTo(state->run_cxt);
	PlanState  *child = outerPlanState(state);
	XxlInput   *in = xxl_input_open_plan(child, "the plan's rows");
	/*
	 * The planner's rows times their width and a record's overhead (its
	 * key's headers, its entries in the load): a sort expected far beyond
	 * its budget need not keep its first load whole (xxl_sort.h).
	 */
	XxlSortRunOptions options = {.memory = state->budget, .restore_from_key = true,
		.distinct = state->keys.distinct,
	.expected_bytes = child->plan->plan_rows * (child->plan->plan_width + 32),
	.name = XXL_PLAN_SORT_NAME};

	state->direct = xxl_input_plan_direct(in);
	state->run = xxl_sort_run_start(in, state->key, ExecGetResultType(child),
									columns_from_keys(child->plan, &state->keys),
									columns_needed(child->plan), &options);
	state->fixed = xxl_sort_run_fixed(state->run);
	state->sorted = true;
	MemoryContextSwitchTo(old);
}

static void
keep_stats(PlanSortState *state)
{
	if (state->run != NULL)
	{
		size_t		peak;

		xxl_sort_run_stats(state->run, &state->stats);
		state->have_stats = true;
		(void) xxl_sort_run_marked_bytes(state->run, &peak);
		state->marks_peak = Max(state->marks_peak, peak);
	}
}

static void
decode_run_row(void *run, Datum *values, bool *isnull)
{
	xxl_sort_run_decode((XxlSortRun *) run, values, isnull);
}

/*
 * The next row of the run into slot, decoded when first read if slot is
 * lazy; false (slot empty) at the end.
 */
static bool
next_from_run(PlanSortState *state, TupleTableSlot *slot)
{
	ExecClearTuple(slot);
	if (state->eof_underlying)
		return false;
	if (!xxl_sort_run_advance(state->run))
	{
		state->eof_underlying = true;
		keep_stats(state);
		return false;
	}
	if (slot->tts_ops == xxl_lazy_slot_ops())
		xxl_lazy_slot_store(slot, decode_run_row, state->run);
	else
	{
		xxl_sort_run_decode(state->run, slot->tts_values, slot->tts_isnull);
		ExecStoreVirtualTuple(slot);
	}
	return true;
}

int64
xxl_plan_sort_drain(PlanState *ps, XxlOutput *out, uint64 held)
{
	PlanSortState *state = (PlanSortState *) ps;
	int64		n;

	if (!IsA(ps, CustomScanState) ||
		((CustomScanState *) ps)->methods != &plan_sort_exec_methods ||
		ps->ps_ProjInfo != NULL || ps->qual != NULL || state->eflags != 0 ||
		!state->sorted || state->eof_underlying || state->run == NULL)
		return -1;
	if (ps->instrument)
		InstrStartNode(ps->instrument);
	n = (int64) (xxl_sort_run_drain(state->run, out) - held);
	state->eof_underlying = true;
	state->drained = true;
	keep_stats(state);
	ExecClearTuple(state->out);
	if (ps->instrument)
		InstrStopNode(ps->instrument, (double) n);
	return n;
}

static Tuplestorestate *
open_store(PlanSortState *state)
{
	MemoryContext old = MemoryContextSwitchTo(state->css.ss.ps.state->es_query_cxt);
	Tuplestorestate *store = tuplestore_begin_heap(true, false, work_mem);

	tuplestore_set_eflags(store, state->eflags);
	/* read pointer 1 is the mark */
	if (state->eflags & EXEC_FLAG_MARK)
		(void) tuplestore_alloc_read_pointer(store, state->eflags);
	MemoryContextSwitchTo(old);
	return store;
}

/* Marks alone, not yet moved to a tuplestore: the run keeps them. */
static bool
marks_in_run(PlanSortState *state)
{
	return state->eflags == EXEC_FLAG_MARK && state->store == NULL;
}

/*
 * The run's kept rows outgrew work_mem (a big group of equal keys, with
 * slot the last of them, just handed out): they go into a tuplestore,
 * which spills, with the mark before the first and the read pointer after
 * the last, as if they had gone there as they passed; the store keeps the
 * marks from now on.
 */
static void
marks_to_store(PlanSortState *state, TupleTableSlot *slot)
{
	TupleDesc	desc = slot->tts_tupleDescriptor;
	Datum	   *values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	bool	   *isnull = palloc(sizeof(bool) * Max(desc->natts, 1));
	size_t		peak;

	/* the row handed out must outlive the run's buffer */
	ExecMaterializeSlot(slot);
	state->store = open_store(state);
	xxl_sort_run_restore(state->run);
	while (xxl_sort_run_replaying(state->run))
	{
		CHECK_FOR_INTERRUPTS();
		(void) xxl_sort_run_next(state->run, values, isnull);
		tuplestore_putvalues(state->store, desc, values, isnull);
	}
	(void) xxl_sort_run_marked_bytes(state->run, &peak);
	state->marks_peak = Max(state->marks_peak, peak);
	xxl_sort_run_unmark(state->run);
	while (tuplestore_advance(state->store, true))
		;
	state->marks_spilled = true;
	pfree(values);
	pfree(isnull);
}

static TupleTableSlot *
exec_plan_sort(CustomScanState *node)
{
	PlanSortState *state = (PlanSortState *) node;
	TupleTableSlot *slot = state->out;
	bool		forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);
	bool		eof_store;

	if (!state->sorted)
		sort_child(state);
	if (state->eflags == 0 || marks_in_run(state))
	{
		size_t		peak;

		if (!forward)
			elog(ERROR, "XxlSort was not set up for backward scans");
		/* (a row replayed is no new one: the kept rows only grow by those) */
		if (next_from_run(state, slot) && state->eflags != 0 &&
			!xxl_sort_run_replaying(state->run) &&
			xxl_sort_run_marked_bytes(state->run, &peak) > (size_t) work_mem * 1024)
			marks_to_store(state, slot);
		return slot;
	}

	/* the stored rows first, then the run's, stored as they pass */
	if (state->store == NULL)
		state->store = open_store(state);
	eof_store = tuplestore_ateof(state->store);
	if (!forward && eof_store)
	{
		/*
		 * Turning back at the end of the store: its first backward fetch
		 * would return the row just returned, unless the run is done.
		 */
		if (!state->eof_underlying && !tuplestore_advance(state->store, false))
			return ExecClearTuple(slot);
		eof_store = false;
	}
	if (!eof_store)
	{
		if (next_from_store(state, forward, slot))
			return slot;
		if (forward)
			eof_store = true;
	}
	if (eof_store && next_from_run(state, slot))
	{
		tuplestore_puttupleslot(state->store, slot);
		return slot;
	}
	return ExecClearTuple(slot);
}

static void
drop_run(PlanSortState *state)
{
	/* a lazy row must not outlive its run */
	if (state->out != NULL)
		ExecClearTuple(state->out);
	if (state->run != NULL)
	{
		keep_stats(state);
		xxl_sort_run_free(state->run);
		state->run = NULL;
	}
	if (state->run_cxt != NULL)
		MemoryContextReset(state->run_cxt);
	if (state->store != NULL)
		tuplestore_end(state->store);
	state->store = NULL;
	state->sorted = false;
	state->eof_underlying = false;
}

static void
end_plan_sort(CustomScanState *node)
{
	drop_run((PlanSortState *) node);
	ExecEndNode(outerPlanState(node));
}

static void
rescan_plan_sort(CustomScanState *node)
{
	PlanSortState *state = (PlanSortState *) node;
	PlanState  *child = outerPlanState(node);

	ExecScanReScan(&node->ss);
	if (!state->sorted)
		return;					/* the child rescans when it is first read */
	if (state->store != NULL && (state->eflags & EXEC_FLAG_REWIND) && child->chgParam == NULL)
	{
		/* the same rows again: replay what is stored, then go on with the run */
		tuplestore_rescan(state->store);
		return;
	}
	drop_run(state);
	/* a child with changed parameters rescans itself on its next fetch */
	if (child->chgParam == NULL)
		ExecReScan(child);
}

static void
mark_plan_sort(CustomScanState *node)
{
	PlanSortState *state = (PlanSortState *) node;

	if (marks_in_run(state))
	{
		if (state->run != NULL)
			xxl_sort_run_mark(state->run);
		return;
	}
	if (state->store == NULL)
		return;					/* nothing fetched yet: restore finds an empty store */
	tuplestore_copy_read_pointer(state->store, 0, 1);
	tuplestore_trim(state->store);
}

static void
restore_plan_sort(CustomScanState *node)
{
	PlanSortState *state = (PlanSortState *) node;

	if (marks_in_run(state))
	{
		if (state->run == NULL)
			return;
		xxl_sort_run_restore(state->run);
		/* the run may have ended: its kept rows come first */
		if (xxl_sort_run_replaying(state->run))
			state->eof_underlying = false;
		return;
	}
	if (state->store == NULL)
		return;
	tuplestore_copy_read_pointer(state->store, 1, 0);
}

/* EXPLAIN ----------------------------------------------------------------- */

const char *
xxl_plan_keys_refused(List *tlist, int ncols, const AttrNumber *cols, const Oid *sortops,
					  const Oid *collations)
{
	for (int i = 0; i < ncols; i++)
	{
		TargetEntry *tle = list_nth_node(TargetEntry, tlist, cols[i] - 1);
		bool		desc;
		const char *why = xxl_sortkey_plan_column_refused(exprType((Node *) tle->expr), sortops[i],
														  collations[i], &desc);

		if (why != NULL)
			return why;
	}
	return NULL;
}

List *
xxl_plan_key_texts(Plan *plan, const XxlPlanSortKeys *keys, List *ancestors, ExplainState *es)
{
	List	   *context = set_deparse_context_plan(es->deparse_cxt, plan, ancestors);
	bool		prefix = list_length(es->rtable) > 1 || es->verbose;
	List	   *result = NIL;

	for (int i = 0; i < keys->ncols; i++)
	{
		TargetEntry *tle = get_tle_by_resno(plan->targetlist, keys->cols[i]);
		Node	   *expr = (Node *) tle->expr;
		StringInfoData buf;
		bool		desc = false;
		Oid			collation = keys->collations[i];

		initStringInfo(&buf);
		appendStringInfoString(&buf, deparse_expression(expr, context, prefix, true));
		/* as show_sortorder_options: unless the type's default collation */
		if (OidIsValid(collation) && collation != get_typcollation(exprType(expr)))
		{
			char	   *name = get_collation_name(collation);

			if (name != NULL)
				appendStringInfo(&buf, " COLLATE %s", quote_identifier(name));
		}
		(void) xxl_sortkey_plan_column_refused(exprType(expr), keys->sortops[i], collation, &desc);
		if (desc)
			appendStringInfoString(&buf, " DESC");
		if (desc != keys->nulls_first[i])
			appendStringInfoString(&buf, keys->nulls_first[i] ? " NULLS FIRST" : " NULLS LAST");
		result = lappend(result, buf.data);
	}
	return result;
}

static void
explain_plan_sort(CustomScanState *node, List *ancestors, ExplainState *es)
{
	PlanSortState *state = (PlanSortState *) node;

	ExplainPropertyList("Sort Key", xxl_plan_key_texts(state->css.ss.ps.plan, &state->keys, ancestors, es), es);
	ExplainPropertyInteger("Sort Budget", "kB", (int64) (state->budget / 1024), es);
	if (state->keys.distinct)
		ExplainPropertyBool("Distinct Keys", true, es);
	if (es->analyze)
	{
		if (state->run != NULL && !state->eof_underlying)
			keep_stats(state);	/* stopped early: what it did so far */
		if (state->direct)
			ExplainPropertyText("Input", "table pages read directly", es);
		if (state->drained)
			ExplainPropertyText("Output", "new table's pages written from the run", es);
		if (state->have_stats)
			xxl_sort_run_explain(&state->stats, state->fixed, es);
		if (state->eflags == EXEC_FLAG_MARK)
		{
			ExplainPropertyInteger("Marked Rows Peak", "kB",
								   (int64) ((state->marks_peak + 1023) / 1024), es);
			if (state->marks_spilled)
				ExplainPropertyText("Marked Rows", "moved to a tuplestore (a group outgrew work_mem)", es);
		}
		if (state->keys.distinct && state->run != NULL)
			ExplainPropertyInteger("Rows Dropped as Repeats", NULL,
								   (int64) xxl_sort_run_dropped(state->run), es);
	}
}
