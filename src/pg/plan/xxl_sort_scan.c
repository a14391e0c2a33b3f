/*
 * xxl_sort_scan.c — xxl.sort() in FROM without a tuplestore.
 *
 * PostgreSQL runs a set-returning function in FROM through a FunctionScan,
 * which puts the whole result into a tuplestore before the first row moves
 * on; beyond work_mem that tuplestore spills, i.e. a second round of I/O of
 * the size of the sort itself.  For a call of either form of xxl.sort() that
 * is the only item of its FROM entry (no ORDINALITY, no LATERAL reference),
 * the planner hook below replaces the FunctionScan by a custom scan that
 * runs the same sort (xxl_sort_sql.h) and hands each row to its parent as it
 * leaves the final merge.  Arguments are evaluated once at the first fetch,
 * as FunctionScan evaluates them; a rescan sorts again (the planner costs a
 * rescan as the whole path and puts a Material above it where that is
 * cheaper).  xxl.sort_scan = off keeps the FunctionScan.
 *
 * The hook exists only once the library is loaded, and parsing a call does
 * not load it.  The functions' planner support function (xxl.sort_support)
 * is called while the FROM entry's size is estimated, before paths are
 * built, so the first query of a session that calls xxl.sort() already
 * plans with the hook.  The support function also estimates the row count
 * from the source table's statistics.
 *
 * Rows leave as virtual tuples: for fixed-size records the values come
 * straight from the record, otherwise from the deformed compact row.  They
 * stay valid until the next fetch, as a scan's rows do.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parse_type.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/plancache.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
#include "utils/varlena.h"

#include "pg/plan/xxl_custom_path.h"
#include "pg/runtime/runtime.h"
#include "pg/plan/xxl_sort_scan.h"
#include "pg/sort/sort.h"

#define SCAN_NAME "xxl sort"

/* Which xxl.sort() a call is: its C symbol. */
typedef enum SortForm
{
	FORM_NONE,
	FORM_QUERY,					/* xxl.sort(text, text) AS s(...) */
	FORM_TYPED					/* xxl.sort(NULL::tbl, text) */
} SortForm;

typedef struct SortScanState
{
	CustomScanState css;
	SortForm	form;
	Oid			funcid;
	List	   *args;			/* ExprStates of source and order_by */
	TupleDesc	result_desc;	/* the function's result type */
	bool		whole_row;		/* the row is also wanted as one composite value */
	Index		rti;			/* the FROM entry's range table index */
	TupleTableSlot *epq_slot;	/* an EvalPlanQual row fetched by its rowmark */
	MemoryContext run_cxt;		/* lives as long as the node */
	XxlSortRun *run;
	bool	   *needed;			/* result columns the plan references */
	AttrNumber *pick;			/* simple projection: result slot column i is
								 * scan column pick[i] (0-based), or NULL */
	/* what EXPLAIN ANALYZE shows, kept when the run ends */
	bool		have_stats;
	bool		fixed;
	XxlStats	stats;
} SortScanState;

static set_rel_pathlist_hook_type prev_set_rel_pathlist = NULL;

static Plan *plan_sort_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							List *tlist, List *clauses, List *custom_plans);
static Node *create_sort_scan_state(CustomScan *cscan);
static void begin_sort_scan(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_sort_scan(CustomScanState *node);
static void end_sort_scan(CustomScanState *node);
static void rescan_sort_scan(CustomScanState *node);
static void explain_sort_scan(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomPathMethods sort_path_methods = {
	.CustomName = SCAN_NAME,
	.PlanCustomPath = plan_sort_path,
};

static const CustomScanMethods sort_scan_methods = {
	.CustomName = SCAN_NAME,
	.CreateCustomScanState = create_sort_scan_state,
};

static const CustomExecMethods sort_exec_methods = {
	.CustomName = SCAN_NAME,
	.BeginCustomScan = begin_sort_scan,
	.ExecCustomScan = exec_sort_scan,
	.EndCustomScan = end_sort_scan,
	.ReScanCustomScan = rescan_sort_scan,
	.ExplainCustomScan = explain_sort_scan,
};

/*
 * Which form of xxl.sort() funcid is: a C function of this extension (a
 * member of it in pg_depend), by the symbol it runs.
 */
static SortForm
sort_form(Oid funcid)
{
	HeapTuple	tp = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	SortForm	form = FORM_NONE;

	if (!HeapTupleIsValid(tp))
		return FORM_NONE;
	if (((Form_pg_proc) GETSTRUCT(tp))->prolang == ClanguageId)
	{
		bool		src_null;
		Datum		src = SysCacheGetAttr(PROCOID, tp, Anum_pg_proc_prosrc, &src_null);

		if (!src_null)
		{
			char	   *symbol = TextDatumGetCString(src);

			if (strcmp(symbol, "xxl_sort_record") == 0)
				form = FORM_QUERY;
			else if (strcmp(symbol, "xxl_sort_typed") == 0)
				form = FORM_TYPED;
			pfree(symbol);
		}
	}
	ReleaseSysCache(tp);
	if (form != FORM_NONE &&
		getExtensionOfObject(ProcedureRelationId, funcid) != get_extension_oid("pgxxl", true))
		form = FORM_NONE;
	return form;
}

/* Planning ------------------------------------------------------------------ */

static void
sort_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	RangeTblFunction *rtfunc;
	FuncExpr   *fexpr;
	CustomPath *cpath;
	SortForm	form;

	if (prev_set_rel_pathlist)
		prev_set_rel_pathlist(root, rel, rti, rte);

	if (!xxl_sort_scan || rte->rtekind != RTE_FUNCTION || IS_DUMMY_REL(rel) ||
		list_length(rte->functions) != 1 || rte->funcordinality ||
		!bms_is_empty(rel->lateral_relids))
		return;
	rtfunc = linitial_node(RangeTblFunction, rte->functions);
	if (!IsA(rtfunc->funcexpr, FuncExpr))
		return;
	fexpr = (FuncExpr *) rtfunc->funcexpr;
	if (list_length(fexpr->args) != 2 || contain_subplans((Node *) fexpr->args))
		return;
	form = sort_form(fexpr->funcid);
	if (form == FORM_NONE)
		return;
	/* a call that cannot return rows (NULL::int) fails in the function, as usual */
	{
		Oid			rettype;
		TupleDesc	desc;
		TypeFuncClass cls = get_expr_result_type((Node *) fexpr, &rettype, &desc);

		if (cls != TYPEFUNC_COMPOSITE && !(cls == TYPEFUNC_RECORD && rtfunc->funccolnames != NIL))
			return;
	}

	cpath = xxl_custom_path(rel, &sort_path_methods);
	/* the same work as the FunctionScan it replaces, less the tuplestore */
	if (rel->pathlist != NIL)
	{
		Path	   *fs = (Path *) linitial(rel->pathlist);

		cpath->path.startup_cost = fs->startup_cost;
		cpath->path.total_cost = fs->total_cost;
	}
	cpath->custom_private = list_make2(makeInteger((int) form), fexpr);

	/*
	 * The same rows in the same order, without the tuplestore: no reason to
	 * keep the FunctionScan.
	 */
	rel->pathlist = NIL;
	add_path(rel, &cpath->path);
}

/* The function's result type (column definition list or polymorphic row type). */
static TupleDesc
result_desc_of(FuncExpr *fexpr, RangeTblFunction *rtfunc)
{
	TupleDesc	desc;
	Oid			rettype;
	TypeFuncClass cls = get_expr_result_type((Node *) fexpr, &rettype, &desc);

	if (cls == TYPEFUNC_COMPOSITE)
		return CreateTupleDescCopy(desc);
	if (cls == TYPEFUNC_RECORD && rtfunc != NULL && rtfunc->funccolnames != NIL)
		return BuildDescFromLists(rtfunc->funccolnames, rtfunc->funccoltypes,
								  rtfunc->funccoltypmods, rtfunc->funccolcollations);
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("function returning record called in context that cannot accept type record"),
			 errhint("Add a column definition list, e.g. AS s(a int, b text).")));
	return NULL;
}

static Plan *
plan_sort_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
			   List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	RangeTblFunction *rtfunc = linitial_node(RangeTblFunction, rte->functions);
	FuncExpr   *fexpr = (FuncExpr *) lsecond(best_path->custom_private);
	TupleDesc	desc = result_desc_of(fexpr, rtfunc);
	List	   *scan_tlist = NIL;
	Bitmapset  *attrs = NULL;
	bool		whole_row;

	/* does anything above refer to the row as a whole? */
	pull_varattnos((Node *) tlist, rel->relid, &attrs);
	pull_varattnos((Node *) extract_actual_clauses(clauses, false), rel->relid, &attrs);
	whole_row = bms_is_member(InvalidAttrNumber - FirstLowInvalidHeapAttributeNumber, attrs);

	/*
	 * The scan tuple is the function's whole row, plus the row as one
	 * composite value if that is referenced; upper references are resolved
	 * against it (scanrelid 0: there is no relation to open).
	 */
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Expr	   *col;

		if (att->attisdropped)
			col = (Expr *) makeNullConst(INT4OID, -1, InvalidOid);
		else
			col = (Expr *) makeVar(rel->relid, i + 1, att->atttypid, att->atttypmod,
								   att->attcollation, 0);
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry(col, i + 1, pstrdup(NameStr(att->attname)), false));
	}
	if (whole_row)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) makeWholeRowVar(rte, rel->relid, 0, false),
											 desc->natts + 1, pstrdup(rte->eref->aliasname),
											 false));

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = extract_actual_clauses(clauses, false);
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = NIL;
	cscan->custom_scan_tlist = scan_tlist;
	/* the arguments, so that setrefs resolves their parameters */
	cscan->custom_exprs = copyObject(fexpr->args);
	cscan->custom_private = list_make3(copyObject(linitial(best_path->custom_private)),
									   copyObject(rtfunc), makeBoolean(whole_row));
	cscan->methods = &sort_scan_methods;
	return &cscan->scan.plan;
}

/* Execution ----------------------------------------------------------------- */

static Node *
create_sort_scan_state(CustomScan *cscan)
{
	SortScanState *state = palloc0(sizeof(SortScanState));

	NodeSetTag(state, T_CustomScanState);
	state->css.flags = cscan->flags;
	state->css.methods = &sort_exec_methods;
	state->form = (SortForm) intVal(linitial(cscan->custom_private));
	return (Node *) state;
}

/*
 * Which result columns the plan reads (the sort need not decode the others)
 * and whether its projection only picks columns, which exec_sort_scan then
 * does itself, without ExecScan's per-row expression machinery.
 */
static void
plan_columns(SortScanState *state, CustomScan *cscan)
{
	int			natts = state->result_desc->natts;
	Bitmapset  *used = NULL;
	bool		all;
	ListCell   *lc;
	int			i = 0;

	pull_varattnos((Node *) cscan->scan.plan.targetlist, INDEX_VAR, &used);
	pull_varattnos((Node *) cscan->scan.plan.qual, INDEX_VAR, &used);
	/* a whole-row reference (attno 0, or the appended composite) needs all */
	all = state->whole_row ||
		bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, used);
	state->needed = palloc(sizeof(bool) * Max(natts, 1));
	for (int a = 0; a < natts; a++)
		state->needed[a] = all ||
			bms_is_member(a + 1 - FirstLowInvalidHeapAttributeNumber, used);

	if (state->whole_row || state->css.ss.ps.ps_ProjInfo == NULL)
		return;
	state->pick = palloc(sizeof(AttrNumber) * Max(list_length(cscan->scan.plan.targetlist), 1));
	foreach(lc, cscan->scan.plan.targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *var = (Var *) tle->expr;

		if (!IsA(var, Var) || var->varno != INDEX_VAR || var->varattno < 1 ||
			var->varattno > natts)
		{
			pfree(state->pick);
			state->pick = NULL;
			return;
		}
		state->pick[i++] = var->varattno - 1;
	}
}

/*
 * The row type as it is now, checked against the one the plan was made
 * for.  A cached plan outlives ALTER TABLE on the typed form's table (the
 * row type is no relation the plan cache tracks), and the scan tuple and
 * every reference above were built for the planned columns: reject what
 * the executor's own Var checks (CheckVarSlotCompatibility) reject, with
 * their SQLSTATEs, and a column count that changed (the run would fill
 * a row of another shape than the scan tuple).  Before it raises, every
 * cached plan of the session is reset: the plan cache cannot see this
 * dependency, and the statement's analyzed form (its expanded columns) is
 * as stale as its plan, so the next run analyzes it again and the hint
 * holds.
 */
#define ROW_TYPE_CHANGED_HINT \
	"The row type changed after the query was planned. Cached plans were reset, so the query is planned anew when run again; a prepared statement whose result columns changed must be prepared again."

static TupleDesc
planned_result_desc(TupleDesc now, CustomScan *cscan, bool whole_row)
{
	int			planned = list_length(cscan->custom_scan_tlist) - (whole_row ? 1 : 0);
	ListCell   *lc;

	foreach(lc, cscan->custom_scan_tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *var = (Var *) tle->expr;
		int			i = tle->resno - 1;
		Form_pg_attribute att;

		if (i >= planned || !IsA(var, Var))
			continue;			/* the appended row, or dropped when planned */
		att = i < now->natts ? TupleDescAttr(now, i) : NULL;
		if (att == NULL || att->attisdropped)
		{
			ResetPlanCache();
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("attribute %d of type %s has been dropped",
							i + 1, format_type_be(now->tdtypeid)),
					 errhint(ROW_TYPE_CHANGED_HINT)));
		}
		if (att->atttypid != var->vartype)
		{
			ResetPlanCache();
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("attribute %d of type %s has wrong type",
							i + 1, format_type_be(now->tdtypeid)),
					 errdetail("Table has type %s, but query expects %s.",
							   format_type_be(att->atttypid), format_type_be(var->vartype)),
					 errhint(ROW_TYPE_CHANGED_HINT)));
		}
	}
	if (now->natts != planned)
	{
		ResetPlanCache();
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("function return row and query-specified return row do not match"),
				 errdetail("Returned row contains %d attributes, but query expects %d.",
						   now->natts, planned),
				 errhint(ROW_TYPE_CHANGED_HINT)));
	}
	return now;
}

static void
begin_sort_scan(CustomScanState *node, EState *estate, int eflags)
{
	SortScanState *state = (SortScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	RangeTblFunction *rtfunc = lsecond_node(RangeTblFunction, cscan->custom_private);
	FuncExpr   *fexpr = (FuncExpr *) rtfunc->funcexpr;
	AclResult	acl;

	/* what ExecInitFunc checks before a function may run */
	state->funcid = fexpr->funcid;
	acl = pg_proc_aclcheck(state->funcid, GetUserId(), ACL_EXECUTE);
	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, OBJECT_FUNCTION, get_func_name(state->funcid));
	InvokeFunctionExecuteHook(state->funcid);

	state->args = ExecInitExprList(cscan->custom_exprs, &node->ss.ps);
	state->whole_row = boolVal(lthird(cscan->custom_private));
	state->result_desc = planned_result_desc(result_desc_of(fexpr, rtfunc), cscan,
											 state->whole_row);
	/* composite values of a column definition list need a registered typmod */
	if (state->whole_row && state->result_desc->tdtypeid == RECORDOID)
		BlessTupleDesc(state->result_desc);
	/* custom_relids, unlike rel->relid, follows the flattened range table */
	state->rti = (Index) bms_singleton_member(cscan->custom_relids);
	state->run_cxt = AllocSetContextCreate(estate->es_query_cxt, "xxl sort scan",
										   ALLOCSET_SMALL_SIZES);
	plan_columns(state, cscan);
}

static char *
text_argument(SortScanState *state, ExprContext *econtext, int n, const char *name,
			  Datum *value)
{
	ExprState  *arg = (ExprState *) list_nth(state->args, n);
	bool		isnull;

	*value = ExecEvalExpr(arg, econtext, &isnull);
	if (isnull && name != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
	return isnull || name == NULL ? NULL : TextDatumGetCString(*value);
}

/* Evaluate the arguments and sort: everything before the first row. */
static void
start_run(SortScanState *state)
{
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	MemoryContext old = MemoryContextSwitchTo(state->run_cxt);
	Datum		value;
	char	   *order_by;
	XxlSortRunOptions options = {.memory = 0, .restore_from_key = true};

	ResetExprContext(econtext);
	order_by = text_argument(state, econtext, 1, "order_by", &value);
	if (state->form == FORM_QUERY)
	{
		char	   *source = text_argument(state, econtext, 0, "source", &value);

		state->run = xxl_sort_start_query(source, order_by, state->result_desc,
										  state->needed, &options);
	}
	else
	{
		ExprState  *arg = (ExprState *) linitial(state->args);

		state->run = xxl_sort_start_typed(exprType((Node *) arg->expr), order_by,
										  state->result_desc, state->needed, &options);
	}
	state->fixed = xxl_sort_run_fixed(state->run);
	MemoryContextSwitchTo(old);
}

/* The composite value of the row in slot, as ExecEvalWholeRowVar builds it. */
static void
fill_whole_row(SortScanState *state, TupleTableSlot *slot)
{
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	int			natts = slot->tts_tupleDescriptor->natts - 1;

	slot->tts_values[natts] = HeapTupleGetDatum(heap_form_tuple(state->result_desc,
																slot->tts_values,
																slot->tts_isnull));
	slot->tts_isnull[natts] = false;
	MemoryContextSwitchTo(old);
}

static TupleTableSlot *
next_sorted_row(ScanState *ss)
{
	SortScanState *state = (SortScanState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;

	if (state->run == NULL)
		start_run(state);
	ExecClearTuple(slot);
	if (!xxl_sort_run_next(state->run, slot->tts_values, slot->tts_isnull))
	{
		xxl_sort_run_stats(state->run, &state->stats);
		state->have_stats = true;
		return slot;
	}
	if (state->whole_row)
		fill_whole_row(state, slot);
	return ExecStoreVirtualTuple(slot);
}

/*
 * EvalPlanQual: an UPDATE, DELETE or SELECT FOR UPDATE that found a row of
 * another relation changed rechecks its join against the new version, and
 * every other FROM entry must then return the one row it contributed, not
 * scan again.  PostgreSQL's scans do that in ExecScanFetch, by range table
 * index; a custom scan without a relation (scanrelid 0) is asked to do it
 * itself, here: the row comes from the EPQ test slot or, as for a
 * FunctionScan, from the whole-row copy the rowmark kept.
 */
static bool
recheck_sorted_row(ScanState *ss, TupleTableSlot *slot)
{
	SortScanState *state = (SortScanState *) ss;
	EPQState   *epq = ss->ps.state->es_epq_active;
	Index		i = state->rti - 1;
	TupleTableSlot *row;
	int			natts;

	if (epq == NULL)
		return true;
	if (epq->relsubs_done[i] ||
		(epq->epqExtra != NULL && epq->epqExtra->relsubs_blocked != NULL &&
		 epq->epqExtra->relsubs_blocked[i]))
		return false;
	epq->relsubs_done[i] = true;
	if (epq->relsubs_slot[i] != NULL)
		row = epq->relsubs_slot[i];
	else if (epq->relsubs_rowmark[i] != NULL)
	{
		if (state->epq_slot == NULL)
			state->epq_slot = ExecInitExtraTupleSlot(ss->ps.state, state->result_desc,
													 &TTSOpsHeapTuple);
		row = state->epq_slot;
		if (!EvalPlanQualFetchRowMark(epq, state->rti, row))
			return false;
	}
	else
		return false;
	if (TupIsNull(row))
		return false;

	natts = state->result_desc->natts;
	slot_getsomeattrs(row, natts);
	ExecClearTuple(slot);
	memcpy(slot->tts_values, row->tts_values, sizeof(Datum) * natts);
	memcpy(slot->tts_isnull, row->tts_isnull, sizeof(bool) * natts);
	if (state->whole_row)
		fill_whole_row(state, slot);
	ExecStoreVirtualTuple(slot);
	return true;
}

static TupleTableSlot *
exec_sort_scan(CustomScanState *node)
{
	SortScanState *state = (SortScanState *) node;

	/*
	 * With nothing to filter, at most columns to pick, no per-row allocation
	 * and no EvalPlanQual recheck in progress, skip ExecScan's per-row
	 * context reset and expression evaluation: rows go up as they come.
	 */
	if (node->ss.ps.qual == NULL && !state->whole_row &&
		node->ss.ps.state->es_epq_active == NULL)
	{
		TupleTableSlot *row;
		TupleTableSlot *out;
		int			n;

		if (node->ss.ps.ps_ProjInfo == NULL)
			return next_sorted_row(&node->ss);
		if (state->pick != NULL)
		{
			/* a projection that only picks columns of the row */
			row = next_sorted_row(&node->ss);
			out = node->ss.ps.ps_ResultTupleSlot;
			ExecClearTuple(out);
			if (TupIsNull(row))
				return out;
			n = out->tts_tupleDescriptor->natts;
			for (int i = 0; i < n; i++)
			{
				out->tts_values[i] = row->tts_values[state->pick[i]];
				out->tts_isnull[i] = row->tts_isnull[state->pick[i]];
			}
			return ExecStoreVirtualTuple(out);
		}
	}
	return ExecScan(&node->ss, next_sorted_row, recheck_sorted_row);
}

static void
drop_run(SortScanState *state)
{
	if (state->run != NULL)
	{
		xxl_sort_run_free(state->run);
		state->run = NULL;
	}
	MemoryContextReset(state->run_cxt);
}

static void
end_sort_scan(CustomScanState *node)
{
	drop_run((SortScanState *) node);
}

static void
rescan_sort_scan(CustomScanState *node)
{
	drop_run((SortScanState *) node);
	ExecScanReScan(&node->ss);
}

static void
explain_sort_scan(CustomScanState *node, List *ancestors, ExplainState *es)
{
	SortScanState *state = (SortScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Node	   *order_by = lsecond(cscan->custom_exprs);

	if (IsA(order_by, Const) && !((Const *) order_by)->constisnull)
		ExplainPropertyText("Order By",
							TextDatumGetCString(((Const *) order_by)->constvalue), es);
	if (es->analyze && state->have_stats)
		xxl_sort_run_explain(&state->stats, state->fixed, es);
}

/* Planner support ------------------------------------------------------------- */

/* The table a constant source argument names, if it names one. */
static Oid
source_table(SortForm form, Node *arg)
{
	if (form == FORM_TYPED)
	{
		Oid			relid = typeidTypeRelid(getBaseType(exprType(arg)));

		return OidIsValid(relid) && get_rel_relkind(relid) == RELKIND_RELATION ? relid : InvalidOid;
	}
	if (IsA(arg, Const) && !((Const *) arg)->constisnull)
	{
		RangeVar   *rv = xxl_source_name(TextDatumGetCString(((Const *) arg)->constvalue));

		/* planning raises no errors: a missing table is the executor's to report */
		if (rv != NULL && rv->catalogname == NULL)
			return RangeVarGetRelid(rv, NoLock, true);
	}
	return InvalidOid;
}

PG_FUNCTION_INFO_V1(xxl_sort_support);

/*
 * xxl.sort_support(internal) RETURNS internal: rows estimate for
 * SupportRequestRows; being called at all loads the library, which
 * installs the planner hook in time for the query being planned.
 */
Datum
xxl_sort_support(PG_FUNCTION_ARGS)
{
	Node	   *req = (Node *) PG_GETARG_POINTER(0);

	if (IsA(req, SupportRequestRows))
	{
		SupportRequestRows *rr = (SupportRequestRows *) req;
		FuncExpr   *fexpr = (FuncExpr *) rr->node;
		SortForm	form;
		Oid			relid;

		if (fexpr == NULL || !IsA(fexpr, FuncExpr) || list_length(fexpr->args) != 2)
			PG_RETURN_POINTER(NULL);
		form = sort_form(fexpr->funcid);
		if (form == FORM_NONE)
			PG_RETURN_POINTER(NULL);
		relid = source_table(form, linitial(fexpr->args));
		if (OidIsValid(relid))
		{
			HeapTuple	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));

			if (HeapTupleIsValid(tp))
			{
				float4		reltuples = ((Form_pg_class) GETSTRUCT(tp))->reltuples;

				ReleaseSysCache(tp);
				if (reltuples >= 0)
				{
					rr->rows = Max(reltuples, 1);
					PG_RETURN_POINTER(req);
				}
			}
		}
	}
	PG_RETURN_POINTER(NULL);
}

void
xxl_sort_scan_init(void)
{
	RegisterCustomScanMethods(&sort_scan_methods);
	prev_set_rel_pathlist = set_rel_pathlist_hook;
	set_rel_pathlist_hook = sort_set_rel_pathlist;
}
