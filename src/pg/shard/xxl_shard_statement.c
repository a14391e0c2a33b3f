/*
 * xxl_shard_statement.c — the statements around shard streams: which one
 * is being run (an ExecutorRun hook), whether it runs to its end in one go,
 * and giving a stream's connection back when a statement needs it.
 *
 * postgres_fdw has one connection per server and user, and a stream's COPY
 * holds it until its last row.  A statement that starts while a stream
 * holds the connection to a server it reads (a function in a select list,
 * a trigger, a nested pgxxl call: an ExecutorStart hook looks at its
 * foreign tables) has that stream spooled first.  A call whose rows go out
 * while its streams are read, in a statement that reads one of their
 * servers itself (an initPlan's scan), spools those streams before its
 * first row (xxl_shard_streams_free_for_statement).
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "executor/executor.h"
#include "foreign/foreign.h"

#include "pg/shard/xxl_shard_stream_internal.h"

static ExecutorStart_hook_type prev_executor_start = NULL;
static ExecutorRun_hook_type prev_executor_run = NULL;
static QueryDesc *running_query = NULL; /* the innermost one being run */
static bool running_at_once = true;		/* ... with no row count */

/* The server of a foreign table the statement reads, or InvalidOid. */
static Oid
foreign_server(RangeTblEntry *rte)
{
	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_FOREIGN_TABLE)
		return InvalidOid;
	return GetForeignTable(rte->relid)->serverid;
}

/*
 * Before a statement starts: the connections to the servers its foreign
 * tables are on, freed of any stream.
 */
static void
shard_executor_start(QueryDesc *queryDesc, int eflags)
{
	if (xxl_shard_wire_live() && !(eflags & EXEC_FLAG_EXPLAIN_ONLY))
	{
		ListCell   *lc;

		foreach(lc, queryDesc->plannedstmt->rtable)
		{
			Oid			server = foreign_server(lfirst_node(RangeTblEntry, lc));

			if (OidIsValid(server))
				xxl_shard_wire_free_server(server);
		}
	}
	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

static void
shard_executor_run(QueryDesc *queryDesc, ScanDirection direction, uint64 count,
				   bool execute_once)
{
	QueryDesc  *outer = running_query;
	bool		outer_at_once = running_at_once;

	running_query = queryDesc;
	running_at_once = count == 0;
	PG_TRY();
	{
		if (prev_executor_run)
			prev_executor_run(queryDesc, direction, count, execute_once);
		else
			standard_ExecutorRun(queryDesc, direction, count, execute_once);
	}
	PG_FINALLY();
	{
		running_query = outer;
		running_at_once = outer_at_once;
	}
	PG_END_TRY();
}

bool
xxl_shard_statement_runs_at_once(void)
{
	return running_at_once;
}

/*
 * Whether the statement being run reads a foreign table on server
 * serverid, other than those at range table indexes own.
 */
static bool
statement_reads(Oid serverid, const Bitmapset *own)
{
	ListCell   *lc;

	if (running_query == NULL)
		return false;
	foreach(lc, running_query->plannedstmt->rtable)
	{
		if (!bms_is_member(foreach_current_index(lc) + 1, own) &&
			foreign_server(lfirst_node(RangeTblEntry, lc)) == serverid)
			return true;
	}
	return false;
}

void
xxl_shard_streams_free_for_statement(XxlShardStream **streams, int n, const Bitmapset *own)
{
	for (int i = 0; i < n; i++)
		if (streams[i]->spool == NULL && streams[i]->busy &&
			statement_reads(streams[i]->shard->serverid, own))
			xxl_shard_wire_spool(streams[i]);
}

void
xxl_shard_statement_init(void)
{
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = shard_executor_start;
	prev_executor_run = ExecutorRun_hook;
	ExecutorRun_hook = shard_executor_run;
}
