/*
 * xxl_table_ends.c — what a statement's and a transaction's end do to the
 * pending work on xxl tables: the rows inserted (xxl_table_write.c) and the
 * rows deleted (xxl_table_delete.c) are written as segments when the
 * statement that wrote them ends and before a commit, forgotten after the
 * transaction, and follow subtransactions.
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/executor.h"

#include "pg/table/xxl_table_writers.h"

static ExecutorEnd_hook_type prev_executor_end = NULL;

static void
executor_end(QueryDesc *queryDesc)
{
	/*
	 * Only a statement that writes ends a write: a SELECT run inside one (a
	 * function's, through SPI) has es_output_cid 0, which is also the cid
	 * of a transaction's first statement, and flushed its rows and deletes
	 * in the middle, as extra segments.
	 */
	if (queryDesc->estate != NULL && queryDesc->estate->es_output_cid != InvalidCommandId &&
		(queryDesc->operation != CMD_SELECT || queryDesc->plannedstmt->hasModifyingCTE ||
		 queryDesc->plannedstmt->rowMarks != NIL))
	{
		xxl_writes_flush(InvalidOid, queryDesc->estate->es_output_cid);
		xxl_deletes_flush(InvalidOid, queryDesc->estate->es_output_cid);
	}
	if (prev_executor_end)
		prev_executor_end(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

static void
xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			xxl_writes_flush(InvalidOid, InvalidCommandId);
			xxl_deletes_flush(InvalidOid, InvalidCommandId);
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			xxl_writes_forget();
			xxl_deletes_forget();
			break;
	}
}

static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid,
				 void *arg)
{
	xxl_deletes_subxact(event, mySubid, parentSubid);
	xxl_writes_subxact(event, mySubid, parentSubid);
}

void
xxl_table_ends_init(void)
{
	prev_executor_end = ExecutorEnd_hook;
	ExecutorEnd_hook = executor_end;
	RegisterXactCallback(xact_callback, NULL);
	RegisterSubXactCallback(subxact_callback, NULL);
}
