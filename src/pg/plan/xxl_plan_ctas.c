/*
 * xxl_plan_ctas.c — CREATE TABLE AS (and SELECT INTO) whose rows come out
 * of an XxlSort (or of XxlWindow nodes over one, which number them): the
 * rows go into the new table's pages directly
 * (xxl_heap_pages.c), as xxl.sort_into writes its target, instead of one
 * heap_insert per row.
 *
 * Why: with the sort itself external and fast, inserting 50M rows one by
 * one through shared buffers is most of such a statement (docs/plans.md,
 * "floor").  The table was created by the statement itself, so nobody else
 * can see it, and the page writer gives every row what heap_insert would:
 * this transaction's xmin, the statement's command id, the toaster's
 * treatment of long values.
 *
 * How: an ExecutorRun hook wraps the statement's DestIntoRel receiver.
 * PostgreSQL's receiver still creates and opens the table (its startup) and
 * closes it (its shutdown); only the rows bypass it.  Where the XxlSort is
 * the top node and its rows are the table's as they stand, only the first
 * row comes through the executor: the receiver then has the node drain its
 * run into the pages (xxl_plan_sort_drain) and counts those rows in the
 * statement's.  Its fields are private
 * to createas.c, so their PostgreSQL 15 layout is mirrored here and checked
 * against each other before use; anything unexpected (WITH NO DATA, a
 * materialized view, a table AM other than heap, logical decoding, a
 * non-empty relation) leaves the rows to PostgreSQL's receiver.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "catalog/objectaddress.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "nodes/extensible.h"
#include "nodes/primnodes.h"
#include "tcop/dest.h"
#include "utils/rel.h"

#include "pg/io/io.h"
#include "pg/plan/xxl_plan_ctas.h"
#include "pg/plan/xxl_plan_sort.h"
#include "pg/plan/xxl_plan_window.h"

/* createas.c's DR_intorel, PostgreSQL 15 */
typedef struct IntoRelMirror
{
	DestReceiver pub;
	IntoClause *into;
	Relation	rel;			/* filled by its startup */
	ObjectAddress reladdr;
	CommandId	output_cid;
	int			ti_options;
	BulkInsertState bistate;
} IntoRelMirror;

typedef struct PageReceiver
{
	DestReceiver pub;
	DestReceiver *into;			/* PostgreSQL's, which owns the table */
	XxlHeapPages *pages;		/* NULL: rows go to PostgreSQL's receiver */
	XxlOutput  *out;			/* the rows' way into pages */
	uint64		received;		/* rows that came through the executor */
	/*
	 * The statement's top node when it is an XxlSort whose rows are the
	 * table's as they stand: after its first row, the rest go from its run
	 * to the pages directly (xxl_plan_sort_drain), as sort_into's do
	 */
	PlanState  *sort;
	EState	   *estate;
	bool		drained;
} PageReceiver;

static ExecutorRun_hook_type prev_executor_run = NULL;

static void
pages_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	PageReceiver *r = (PageReceiver *) self;
	IntoRelMirror *into = (IntoRelMirror *) r->into;
	Relation	rel;

	r->into->rStartup(r->into, operation, typeinfo);
	rel = into->rel;
	if (into->into == NULL || into->into->skipData || into->into->viewQuery != NULL ||
		rel == NULL || RelationGetRelid(rel) != into->reladdr.objectId ||
		into->bistate == NULL || RelationGetDescr(rel)->natts != typeinfo->natts ||
		!xxl_heap_pages_allowed(rel))
		return;
	r->pages = xxl_heap_pages_begin(rel, into->output_cid);
	r->out = xxl_output_into_pages(r->pages, typeinfo);
	elog(DEBUG1, "xxl: rows of \"%s\" go to its pages directly", RelationGetRelationName(rel));
}

static bool
pages_receive(TupleTableSlot *slot, DestReceiver *self)
{
	PageReceiver *r = (PageReceiver *) self;
	int64		drained;

	if (r->drained)
		elog(ERROR, "XxlSort handed out a row after its last");
	if (r->pages == NULL)
		return r->into->receiveSlot(slot, r->into);
	slot_getallattrs(slot);
	xxl_output_put_values(r->out, slot->tts_values, slot->tts_isnull);
	r->received++;
	if (r->sort == NULL)
		return true;
	/* the first row came through the executor; the others need not */
	drained = xxl_plan_sort_drain(r->sort, r->out, r->received);
	r->sort = NULL;
	if (drained >= 0)
	{
		/* (the pages are finished; the statement counts the rows it reports) */
		r->estate->es_processed += (uint64) drained;
		r->pages = NULL;
		r->out = NULL;
		r->drained = true;
	}
	return true;
}

static void
pages_shutdown(DestReceiver *self)
{
	PageReceiver *r = (PageReceiver *) self;

	if (r->out != NULL)
		(void) xxl_output_finish(r->out);
	r->out = NULL;
	r->pages = NULL;
	r->into->rShutdown(r->into);
}

static void
pages_destroy(DestReceiver *self)
{
	pfree(self);
}

/*
 * The statement's rows are an XxlSort's output, or its output numbered by
 * XxlWindow nodes over it.
 */
static bool
rows_from_xxl_sort(QueryDesc *queryDesc)
{
	Plan	   *top = queryDesc->plannedstmt->planTree;

	while (top != NULL && IsA(top, CustomScan) &&
		   ((CustomScan *) top)->methods == &xxl_plan_window_methods)
		top = outerPlan(top);
	return top != NULL && IsA(top, CustomScan) &&
		((CustomScan *) top)->methods == &xxl_plan_sort_methods;
}

static void
ctas_executor_run(QueryDesc *queryDesc, ScanDirection direction, uint64 count, bool execute_once)
{
	DestReceiver *dest = queryDesc->dest;
	PageReceiver *r = NULL;

	if (dest != NULL && dest->mydest == DestIntoRel &&
		queryDesc->operation == CMD_SELECT && rows_from_xxl_sort(queryDesc))
	{
		r = palloc0(sizeof(PageReceiver));
		r->pub.receiveSlot = pages_receive;
		r->pub.rStartup = pages_startup;
		r->pub.rShutdown = pages_shutdown;
		r->pub.rDestroy = pages_destroy;
		r->pub.mydest = DestIntoRel;
		r->into = dest;
		/* the top node's rows are the table's as they stand: no junk to filter, no limit */
		if (IsA(queryDesc->planstate->plan, CustomScan) &&
			((CustomScan *) queryDesc->planstate->plan)->methods == &xxl_plan_sort_methods &&
			queryDesc->estate->es_junkFilter == NULL && count == 0 &&
			ScanDirectionIsForward(direction))
		{
			r->sort = queryDesc->planstate;
			r->estate = queryDesc->estate;
		}
		queryDesc->dest = &r->pub;
	}
	if (prev_executor_run)
		prev_executor_run(queryDesc, direction, count, execute_once);
	else
		standard_ExecutorRun(queryDesc, direction, count, execute_once);
	if (r != NULL)
	{
		queryDesc->dest = dest;
		pfree(r);
	}
}

void
xxl_plan_ctas_init(void)
{
	prev_executor_run = ExecutorRun_hook;
	ExecutorRun_hook = ctas_executor_run;
}
