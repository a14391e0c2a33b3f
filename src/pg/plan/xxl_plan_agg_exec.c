/*
 * xxl_plan_agg_exec.c — the XxlAgg node: a sorted GROUP BY aggregated as
 * its input streams through (which Aggs become one: xxl_plan_agg.c).
 *
 * A group runs while the child's rows equal its first row's key (the Agg's
 * equality operators, NULLs equal).  The first row's columns are kept for
 * the output, as Agg reads them; each aggregate keeps its running state.
 * The row that ends a group waits in the child's slot until the group's
 * output has been returned, and begins the next group at the next call.
 *
 * count(*), count(x) and integer sums are counted in C.  Other aggregates
 * are called through their transition and final functions with Agg's
 * rules: a strict transition function skips NULL inputs and, with a NULL
 * initial state, takes the first input as the state; a by-reference state
 * the function returns anew is copied into the group's memory and the old
 * one freed.  They are called with no Agg context (fcinfo->context NULL):
 * the functions the planner lets through (no `internal` state) then copy
 * their state rather than change it in place, which is what they do when
 * called directly.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_agg.h"
#include "parser/parse_coerce.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/syscache.h"

#include "pg/plan/xxl_plan_agg.h"

void
xxl_plan_agg_read(const CustomScan *cscan, XxlPlanAgg *plan)
{
	List	   *kinds = lsecond(cscan->custom_private);

	xxl_plan_cols_read(linitial(cscan->custom_private), &plan->group);
	plan->naggs = list_length(kinds);
	plan->kinds = palloc(sizeof(XxlAggKind) * Max(plan->naggs, 1));
	for (int i = 0; i < plan->naggs; i++)
		plan->kinds[i] = (XxlAggKind) list_nth_int(kinds, i);
}

/* One aggregate: its arguments, how it is computed, and its group's state. */
typedef struct AggCalc
{
	XxlAggKind	kind;
	int			nargs;
	ExprState **args;			/* over the child's row */
	Datum	   *argv;
	bool	   *argnull;

	/* counted in C */
	bool		arg_int2;		/* sum(int2), not sum(int4) */
	int64		count;
	int64		isum;
#ifdef PG_INT128_TYPE
	int128		sum;			/* sum(int8) */
#endif

	/* XXL_AGG_CALLED */
	FunctionCallInfo trans;
	FunctionCallInfo final;		/* NULL without a final function */
	Datum		init;
	bool		init_null;
	int16		translen;
	bool		transbyval;
	Datum		state;
	bool		state_null;
	bool		no_state;		/* strict, NULL initial state, no input yet */
} AggCalc;

typedef struct AggNodeState
{
	CustomScanState css;
	XxlPlanAgg	plan;
	AggCalc    *calcs;
	XxlGroupKey key;
	int			nchild;			/* the child's columns, first in the scan tuple */
	int16	   *child_len;
	bool	   *child_byval;
	TupleTableSlot *next;		/* the row that begins the next group, or NULL */
	bool		done;			/* the child is exhausted */
	MemoryContext group_cxt;	/* the group's first row and by-reference states */
	MemoryContext row_cxt;		/* what reading one row allocates */
} AggNodeState;

static Node *create_agg_state(CustomScan *cscan);
static void begin_agg(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_agg(CustomScanState *node);
static void end_agg(CustomScanState *node);
static void rescan_agg(CustomScanState *node);
static void explain_agg(CustomScanState *node, List *ancestors, ExplainState *es);

const CustomScanMethods xxl_plan_agg_methods = {
	.CustomName = XXL_PLAN_AGG_NAME,
	.CreateCustomScanState = create_agg_state,
};

static const CustomExecMethods agg_exec_methods = {
	.CustomName = XXL_PLAN_AGG_NAME,
	.BeginCustomScan = begin_agg,
	.ExecCustomScan = exec_agg,
	.EndCustomScan = end_agg,
	.ReScanCustomScan = rescan_agg,
	.ExplainCustomScan = explain_agg,
};

static Node *
create_agg_state(CustomScan *cscan)
{
	AggNodeState *state = palloc0(sizeof(AggNodeState));

	NodeSetTag(state, T_CustomScanState);
	state->css.flags = cscan->flags;
	state->css.methods = &agg_exec_methods;
	xxl_plan_agg_read(cscan, &state->plan);
	return (Node *) state;
}

/* The aggregate's owner may call fn, as Agg requires. */
static void
check_owner_may_call(Oid aggfnoid, Oid fn)
{
	HeapTuple	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(aggfnoid));
	Oid			owner;
	AclResult	acl;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for function %u", aggfnoid);
	owner = ((Form_pg_proc) GETSTRUCT(tuple))->proowner;
	ReleaseSysCache(tuple);
	acl = pg_proc_aclcheck(fn, owner, ACL_EXECUTE);
	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, OBJECT_FUNCTION, get_func_name(fn));
	InvokeFunctionExecuteHook(fn);
}

/*
 * The transition and final functions of aggref, set up as ExecInitAgg sets
 * them up: resolved state type, expressions for polymorphic functions, the
 * initial value, the owner's right to call them.
 */
static void
calc_init_called(AggCalc *calc, Aggref *aggref, MemoryContext cxt)
{
	HeapTuple	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggref->aggfnoid));
	Form_pg_aggregate form;
	Oid			input_types[FUNC_MAX_ARGS];
	int			ninputs;
	Oid			transtype;
	Expr	   *transexpr,
			   *finalexpr;
	FmgrInfo   *flinfo;
	Datum		initval;
	bool		initnull;
	MemoryContext old = MemoryContextSwitchTo(cxt);

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for aggregate %u", aggref->aggfnoid);
	form = (Form_pg_aggregate) GETSTRUCT(tuple);
	check_owner_may_call(aggref->aggfnoid, form->aggtransfn);
	if (OidIsValid(form->aggfinalfn))
		check_owner_may_call(aggref->aggfnoid, form->aggfinalfn);

	ninputs = get_aggregate_argtypes(aggref, input_types);
	transtype = resolve_aggregate_transtype(aggref->aggfnoid, form->aggtranstype,
											input_types, ninputs);
	get_typlenbyval(transtype, &calc->translen, &calc->transbyval);

	build_aggregate_transfn_expr(input_types, ninputs, 0, aggref->aggvariadic, transtype,
								 aggref->inputcollid, form->aggtransfn, InvalidOid,
								 &transexpr, NULL);
	flinfo = palloc0(sizeof(FmgrInfo));
	fmgr_info(form->aggtransfn, flinfo);
	fmgr_info_set_expr((Node *) transexpr, flinfo);
	calc->trans = palloc0(SizeForFunctionCallInfo(ninputs + 1));
	InitFunctionCallInfoData(*calc->trans, flinfo, ninputs + 1, aggref->inputcollid, NULL, NULL);

	if (OidIsValid(form->aggfinalfn))
	{
		build_aggregate_finalfn_expr(input_types, 1, transtype, aggref->aggtype,
									 aggref->inputcollid, form->aggfinalfn, &finalexpr);
		flinfo = palloc0(sizeof(FmgrInfo));
		fmgr_info(form->aggfinalfn, flinfo);
		fmgr_info_set_expr((Node *) finalexpr, flinfo);
		calc->final = palloc0(SizeForFunctionCallInfo(1));
		InitFunctionCallInfoData(*calc->final, flinfo, 1, aggref->inputcollid, NULL, NULL);
	}

	initval = SysCacheGetAttr(AGGFNOID, tuple, Anum_pg_aggregate_agginitval, &initnull);
	calc->init_null = initnull;
	if (!initnull)
	{
		Oid			typinput,
					typioparam;

		getTypeInputInfo(transtype, &typinput, &typioparam);
		calc->init = OidInputFunctionCall(typinput, TextDatumGetCString(initval), typioparam, -1);
	}
	/* as Agg: a strict function with no initial state takes its first input */
	if (calc->trans->flinfo->fn_strict && calc->init_null &&
		(ninputs < 1 || !IsBinaryCoercible(input_types[0], transtype)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_FUNCTION_DEFINITION),
				 errmsg("aggregate %u needs to have compatible input type and transition type",
						aggref->aggfnoid)));
	ReleaseSysCache(tuple);
	MemoryContextSwitchTo(old);
}

static void
calc_init(CustomScanState *node, AggCalc *calc, XxlAggKind kind, Aggref *aggref, EState *estate)
{
	AclResult	acl = pg_proc_aclcheck(aggref->aggfnoid, GetUserId(), ACL_EXECUTE);
	ListCell   *lc;

	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, OBJECT_AGGREGATE, get_func_name(aggref->aggfnoid));
	InvokeFunctionExecuteHook(aggref->aggfnoid);

	calc->kind = kind;
	calc->nargs = list_length(aggref->args);
	calc->args = palloc(sizeof(ExprState *) * Max(calc->nargs, 1));
	calc->argv = palloc(sizeof(Datum) * Max(calc->nargs, 1));
	calc->argnull = palloc(sizeof(bool) * Max(calc->nargs, 1));
	foreach(lc, aggref->args)
		calc->args[foreach_current_index(lc)] =
			ExecInitExpr(lfirst_node(TargetEntry, lc)->expr, &node->ss.ps);
	calc->arg_int2 = kind == XXL_AGG_SUM_INT &&
		exprType((Node *) linitial_node(TargetEntry, aggref->args)->expr) == INT2OID;
	if (kind == XXL_AGG_CALLED)
		calc_init_called(calc, aggref, estate->es_query_cxt);
}

/* A copy of the non-NULL by-reference v in cxt. */
static Datum
copy_into(MemoryContext cxt, Datum v, int16 len)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);

	v = datumCopy(v, false, len);
	MemoryContextSwitchTo(old);
	return v;
}

/* The aggregate's state before the group's first row (a by-reference one in group_cxt). */
static void
calc_start(AggCalc *calc, MemoryContext group_cxt)
{
	calc->count = 0;
	calc->isum = 0;
#ifdef PG_INT128_TYPE
	calc->sum = 0;
#endif
	if (calc->kind != XXL_AGG_CALLED)
		return;
	/* (the group's memory was reset: nothing to free) */
	calc->state_null = calc->no_state = calc->init_null;
	calc->state = calc->init_null || calc->transbyval ? calc->init :
		copy_into(group_cxt, calc->init, calc->translen);
}

/* Agg's transition step for a called aggregate, the arguments evaluated. */
static void
calc_call(AggCalc *calc, MemoryContext group_cxt)
{
	FunctionCallInfo fcinfo = calc->trans;
	Datum		value;

	if (fcinfo->flinfo->fn_strict)
	{
		for (int i = 0; i < calc->nargs; i++)
			if (calc->argnull[i])
				return;
		if (calc->no_state)
		{
			calc->state = calc->transbyval ? calc->argv[0] :
				copy_into(group_cxt, calc->argv[0], calc->translen);
			calc->state_null = calc->no_state = false;
			return;
		}
		if (calc->state_null)
			return;				/* a strict function's NULL state stays NULL */
	}
	fcinfo->args[0].value = calc->state;
	fcinfo->args[0].isnull = calc->state_null;
	for (int i = 0; i < calc->nargs; i++)
	{
		fcinfo->args[i + 1].value = calc->argv[i];
		fcinfo->args[i + 1].isnull = calc->argnull[i];
	}
	fcinfo->isnull = false;
	value = FunctionCallInvoke(fcinfo);
	if (!calc->transbyval && DatumGetPointer(value) != DatumGetPointer(calc->state))
	{
		Datum		old = calc->state;
		bool		old_null = calc->state_null;

		calc->state = fcinfo->isnull ? (Datum) 0 :
			copy_into(group_cxt, value, calc->translen);
		if (!old_null)
			pfree(DatumGetPointer(old));
	}
	else
		calc->state = value;
	calc->state_null = fcinfo->isnull;
}

/* One row of the group, its arguments evaluated over econtext's outer tuple. */
static void
calc_row(AggCalc *calc, ExprContext *econtext, MemoryContext group_cxt)
{
	for (int i = 0; i < calc->nargs; i++)
		calc->argv[i] = ExecEvalExpr(calc->args[i], econtext, &calc->argnull[i]);
	switch (calc->kind)
	{
		case XXL_AGG_COUNT_STAR:
			calc->count++;
			break;
		case XXL_AGG_COUNT:
			/* count(x) is strict: a row counts when no argument is NULL */
			for (int i = 0; i < calc->nargs; i++)
				if (calc->argnull[i])
					return;
			calc->count++;
			break;
		case XXL_AGG_SUM_INT:
			if (!calc->argnull[0])
			{
				calc->count++;
				/* as int4_sum and int2_sum: no overflow check */
				calc->isum += calc->arg_int2 ? DatumGetInt16(calc->argv[0]) :
					DatumGetInt32(calc->argv[0]);
			}
			break;
		case XXL_AGG_SUM_INT8:
			if (!calc->argnull[0])
			{
				calc->count++;
#ifdef PG_INT128_TYPE
				calc->sum += DatumGetInt64(calc->argv[0]);
#endif
			}
			break;
		case XXL_AGG_CALLED:
			calc_call(calc, group_cxt);
			break;
	}
}

#ifdef PG_INT128_TYPE
/* v as a numeric, in steps of 10^18 when it does not fit 64 bits. */
static Numeric
int128_numeric(int128 v)
{
	const int64 step = INT64CONST(1000000000000000000);

	if (v >= PG_INT64_MIN && v <= PG_INT64_MAX)
		return int64_to_numeric((int64) v);
	return numeric_add_opt_error(numeric_mul_opt_error(int128_numeric(v / step),
													   int64_to_numeric(step), NULL),
								 int64_to_numeric((int64) (v % step)), NULL);
}
#endif

/* The aggregate's value for the group (in the current memory context). */
static void
calc_result(AggCalc *calc, Datum *out, bool *isnull)
{
	*isnull = false;
	switch (calc->kind)
	{
		case XXL_AGG_COUNT_STAR:
		case XXL_AGG_COUNT:
			*out = Int64GetDatum(calc->count);
			return;
		case XXL_AGG_SUM_INT:
			*isnull = calc->count == 0;
			*out = Int64GetDatum(calc->isum);
			return;
		case XXL_AGG_SUM_INT8:
			*isnull = calc->count == 0;
#ifdef PG_INT128_TYPE
			*out = *isnull ? (Datum) 0 : NumericGetDatum(int128_numeric(calc->sum));
#endif
			return;
		case XXL_AGG_CALLED:
			break;
	}
	if (calc->final == NULL)
	{
		*out = calc->state;
		*isnull = calc->state_null;
		return;
	}
	if (calc->final->flinfo->fn_strict && calc->state_null)
	{
		*out = (Datum) 0;
		*isnull = true;
		return;
	}
	calc->final->args[0].value = calc->state;
	calc->final->args[0].isnull = calc->state_null;
	calc->final->isnull = false;
	*out = FunctionCallInvoke(calc->final);
	*isnull = calc->final->isnull;
}

static void
begin_agg(CustomScanState *node, EState *estate, int eflags)
{
	AggNodeState *state = (AggNodeState *) node;
	List	   *scan_tlist = ((CustomScan *) node->ss.ps.plan)->custom_scan_tlist;
	TupleDesc	child;

	/* as Agg: REWIND passes to the child, nothing else is asked of it */
	Assert(!(eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)));
	outerPlanState(node) = ExecInitNode(outerPlan(node->ss.ps.plan), estate, eflags);
	child = ExecGetResultType(outerPlanState(node));
	state->nchild = child->natts;
	state->child_len = palloc(sizeof(int16) * Max(child->natts, 1));
	state->child_byval = palloc(sizeof(bool) * Max(child->natts, 1));
	for (int i = 0; i < child->natts; i++)
	{
		state->child_len[i] = TupleDescAttr(child, i)->attlen;
		state->child_byval[i] = TupleDescAttr(child, i)->attbyval;
	}
	xxl_group_key_init(&state->key, &state->plan.group, child, estate);
	state->group_cxt = AllocSetContextCreate(estate->es_query_cxt, "xxl agg group",
											 ALLOCSET_DEFAULT_SIZES);
	state->row_cxt = AllocSetContextCreate(estate->es_query_cxt, "xxl agg row",
										   ALLOCSET_DEFAULT_SIZES);
	state->calcs = palloc0(sizeof(AggCalc) * Max(state->plan.naggs, 1));
	for (int i = 0; i < state->plan.naggs; i++)
		calc_init(node, &state->calcs[i], state->plan.kinds[i],
				  castNode(Aggref, list_nth_node(TargetEntry, scan_tlist, state->nchild + i)->expr),
				  estate);
}

/* row (its attributes read) begins a group: keep its columns, start the aggregates. */
static void
start_group(AggNodeState *state, TupleTableSlot *row)
{
	TupleTableSlot *scan = state->css.ss.ss_ScanTupleSlot;
	MemoryContext old;

	/* (the resets are inline: a call each was a few percent of a query of one-row groups) */
	if (!state->group_cxt->isReset)
		MemoryContextReset(state->group_cxt);
	ExecClearTuple(scan);
	old = MemoryContextSwitchTo(state->group_cxt);
	for (int i = 0; i < state->nchild; i++)
	{
		scan->tts_isnull[i] = row->tts_isnull[i];
		scan->tts_values[i] = row->tts_isnull[i] || state->child_byval[i] ? row->tts_values[i] :
			datumCopy(row->tts_values[i], false, state->child_len[i]);
	}
	MemoryContextSwitchTo(old);
	for (int i = 0; i < state->plan.naggs; i++)
		calc_start(&state->calcs[i], state->group_cxt);
}

static void
add_row(AggNodeState *state, TupleTableSlot *row)
{
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	MemoryContext old = MemoryContextSwitchTo(state->row_cxt);

	econtext->ecxt_outertuple = row;
	for (int i = 0; i < state->plan.naggs; i++)
		calc_row(&state->calcs[i], econtext, state->group_cxt);
	MemoryContextSwitchTo(old);
}

/* The next row of the child with its attributes read, or NULL at the end. */
static TupleTableSlot *
next_row(AggNodeState *state)
{
	TupleTableSlot *row = ExecProcNode(outerPlanState(state));

	if (TupIsNull(row))
	{
		state->done = true;
		return NULL;
	}
	slot_getallattrs(row);
	return row;
}

static TupleTableSlot *
exec_agg(CustomScanState *node)
{
	AggNodeState *state = (AggNodeState *) node;
	TupleTableSlot *scan = node->ss.ss_ScanTupleSlot;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;

	for (;;)
	{
		TupleTableSlot *row = state->next;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		if (!econtext->ecxt_per_tuple_memory->isReset)
			ResetExprContext(econtext);
		if (row == NULL && (state->done || (row = next_row(state)) == NULL))
			return node->ss.ps.ps_ProjInfo ? ExecClearTuple(node->ss.ps.ps_ResultTupleSlot) :
				ExecClearTuple(scan);
		state->next = NULL;
		start_group(state, row);
		add_row(state, row);
		while ((row = next_row(state)) != NULL)
		{
			bool		same;

			if (!state->row_cxt->isReset)
				MemoryContextReset(state->row_cxt);
			old = MemoryContextSwitchTo(state->row_cxt);
			same = xxl_group_key_same(&state->key, scan, row);
			MemoryContextSwitchTo(old);
			if (!same)
			{
				state->next = row;
				break;
			}
			add_row(state, row);
		}

		/* the group's values, valid until the next call */
		old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		for (int i = 0; i < state->plan.naggs; i++)
			calc_result(&state->calcs[i], &scan->tts_values[state->nchild + i],
						&scan->tts_isnull[state->nchild + i]);
		MemoryContextSwitchTo(old);
		ExecStoreVirtualTuple(scan);
		econtext->ecxt_scantuple = scan;
		econtext->ecxt_outertuple = NULL;
		if (node->ss.ps.qual != NULL && !ExecQual(node->ss.ps.qual, econtext))
		{
			InstrCountFiltered1(node, 1);
			continue;
		}
		if (node->ss.ps.ps_ProjInfo == NULL)
			return scan;
		return ExecProject(node->ss.ps.ps_ProjInfo);
	}
}

static void
end_agg(CustomScanState *node)
{
	ExecEndNode(outerPlanState(node));
}

static void
rescan_agg(CustomScanState *node)
{
	AggNodeState *state = (AggNodeState *) node;
	PlanState  *child = outerPlanState(node);

	ExecScanReScan(&node->ss);
	state->next = NULL;
	state->done = false;
	/* a child with changed parameters rescans itself on its next fetch */
	if (child->chgParam == NULL)
		ExecReScan(child);
}

static void
explain_agg(CustomScanState *node, List *ancestors, ExplainState *es)
{
	AggNodeState *state = (AggNodeState *) node;

	ExplainPropertyList("Group Key", xxl_plan_cols_texts(node, &state->plan.group, ancestors, es),
						es);
}
