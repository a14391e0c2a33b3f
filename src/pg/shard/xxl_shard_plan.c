/*
 * xxl_shard_plan.c — which MergeAppends of a finished plan become
 * XxlShardMerge nodes (xxl.sort_in_plans and xxl.on_shards), and how.
 *
 * PostgreSQL plans ORDER BY over a partitioned table with foreign
 * partitions as a MergeAppend over the partitions' sorted scans:
 * postgres_fdw sends each foreign partition's ORDER BY to its server.  The
 * MergeAppend then starts those scans one after the other, each with a
 * cursor fetched in text.  XxlShardMerge starts every foreign partition's
 * statement (the same SQL postgres_fdw would send) at once, as a binary
 * COPY, and merges what arrives with the local partitions' sorted rows in
 * the engine's merge of sorted streams (xxl_shard_merge_exec.c).  Each
 * shard sorts as its own planner chooses: with pgxxl preloaded there, in an
 * XxlSort.
 *
 * A MergeAppend stays PostgreSQL's when a Limit can bound it (the first
 * rows of each partition are then all it reads), when its rows are
 * expected to fit in xxl.sort_in_plans_threshold (as a Sort is kept then:
 * each statement's start costs more than the overlap gains), when it prunes partitions
 * at run time or depends on parameters, when a key column's type is one
 * the engine does not compare, or when a foreign partition's scan is not
 * a plain sorted scan of postgres_fdw (a join or aggregate pushed down,
 * parameters, a local filter, rows locked).  Two foreign partitions on one
 * server keep it too, as does a server that another scan of the query
 * reads (a join of two sharded tables): one connection per server and
 * user cannot carry two statements at once.  (Statements that run
 * between a query's fetches, as under a cursor, are the executor's to
 * see: xxl_shard_merge_exec.c.)  EXPLAIN VERBOSE then says why, after the plan.
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "catalog/pg_class.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"

#include "pg/runtime/runtime.h"
#include "pg/plan/plan.h"
#include "pg/sort/sort.h"
#include "pg/shard/xxl_shard_fdw.h"
#include "pg/shard/xxl_shard_merge.h"
#include "pg/shard/xxl_shard_ops.h"

/* postgres_fdw's fdw_private of a scan (its FdwScanPrivateIndex, PostgreSQL 15) */
#define FDW_PRIVATE_SELECT_SQL 0
#define FDW_PRIVATE_RETRIEVED_ATTRS 1

bool
xxl_shard_merge_child_sql(const Plan *child, List *rtable, Oid *relid, const char **sql,
						  List **retrieved)
{
	const ForeignScan *fs = (const ForeignScan *) child;
	Node	   *sqlnode;
	Node	   *attrs;
	ListCell   *lc;
	int			last = 0;

	*relid = InvalidOid;
	if (!IsA(child, ForeignScan) || fs->scan.scanrelid == 0 || fs->operation != CMD_SELECT ||
		fs->fdw_exprs != NIL || fs->scan.plan.qual != NIL || fs->fdw_private == NIL ||
		list_length(fs->fdw_private) <= FDW_PRIVATE_RETRIEVED_ATTRS)
		return false;
	*relid = rt_fetch(fs->scan.scanrelid, rtable)->relid;
	if (!xxl_shard_is_postgres_fdw(*relid))
		return false;
	sqlnode = list_nth(fs->fdw_private, FDW_PRIVATE_SELECT_SQL);
	attrs = list_nth(fs->fdw_private, FDW_PRIVATE_RETRIEVED_ATTRS);
	if (sqlnode == NULL || !IsA(sqlnode, String) || (attrs != NULL && !IsA(attrs, IntList)))
		return false;
	*sql = strVal(sqlnode);
	/* sorted there, no rows locked */
	if (strstr(*sql, " ORDER BY ") == NULL || strstr(*sql, " FOR UPDATE") != NULL ||
		strstr(*sql, " FOR SHARE") != NULL || strstr(*sql, " FOR NO KEY UPDATE") != NULL ||
		strstr(*sql, " FOR KEY SHARE") != NULL)
		return false;
	/* the table's own columns, in their order (as the select list has them) */
	*retrieved = (List *) attrs;
	foreach(lc, *retrieved)
	{
		if (lfirst_int(lc) <= last)
			return false;
		last = lfirst_int(lc);
	}
	return true;
}

static Plan *
make_merge(MergeAppend *ma)
{
	CustomScan *cscan = makeNode(CustomScan);

	cscan->scan.plan = ma->plan;
	cscan->scan.plan.type = T_CustomScan;
	cscan->scan.plan.targetlist = xxl_plan_column_refs(ma->plan.targetlist, INDEX_VAR);
	/* (EXPLAIN resolves the children's columns through the first, as for a MergeAppend) */
	cscan->scan.plan.lefttree = linitial(ma->mergeplans);
	cscan->scan.plan.righttree = NULL;
	cscan->scan.scanrelid = 0;
	cscan->flags = 0;
	cscan->custom_plans = ma->mergeplans;
	cscan->custom_exprs = NIL;
	cscan->custom_private = xxl_plan_keys_private(ma->numCols, ma->sortColIdx, ma->sortOperators,
												  ma->collations, ma->nullsFirst);
	cscan->custom_scan_tlist = xxl_plan_column_refs(ma->plan.targetlist, OUTER_VAR);
	cscan->custom_relids = ma->apprelids;
	cscan->methods = &xxl_shard_merge_methods;
	return &cscan->scan.plan;
}

#define KEPT "XxlShardMerge not used for a MergeAppend: "

/*
 * A foreign table of the statement, other than the MergeAppend's own
 * partitions (mine: their range table indexes), on one of servers: its
 * scan would need the connection while the merge holds it (a join of two
 * sharded tables, a subquery), or NULL.
 */
static const char *
server_shared(List *rtable, Bitmapset *mine, List *servers)
{
	ListCell   *lc;

	foreach(lc, rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);
		XxlShard   *shard;

		if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_FOREIGN_TABLE ||
			bms_is_member(foreach_current_index(lc) + 1, mine) ||
			!xxl_shard_is_postgres_fdw(rte->relid))
			continue;
		shard = xxl_shard_of_partition(rte->relid, InvalidOid);
		if (list_member_oid(servers, shard->serverid))
			return shard->server;
	}
	return NULL;
}

static Plan *
shard_merge_append(MergeAppend *ma, List *rtable, const char **why)
{
	List	   *servers = NIL;
	Bitmapset  *mine = NULL;
	ListCell   *lc;
	const char *shared;
	const char *refused;

	if (!xxl_on_shards || !xxl_plan_rows_beyond_threshold(&ma->plan) ||
		ma->part_prune_info != NULL || !bms_is_empty(ma->plan.allParam) ||
		ma->plan.initPlan != NIL || ma->plan.qual != NIL ||
		!xxl_plan_tlist_passes_through(ma->plan.targetlist))
		return &ma->plan;
	foreach(lc, ma->mergeplans)
	{
		Plan	   *child = lfirst(lc);
		Oid			relid;
		XxlShard   *shard;
		const char *sql;
		List	   *retrieved;

		if (!IsA(child, ForeignScan))
			continue;			/* a local partition's sorted rows, read here */
		if (!xxl_shard_merge_child_sql(child, rtable, &relid, &sql, &retrieved))
		{
			if (OidIsValid(relid) && xxl_shard_is_postgres_fdw(relid))
				*why = psprintf(KEPT "the scan of foreign partition \"%s\" is not a plain sorted scan",
								get_rel_name(relid));
			return &ma->plan;
		}
		shard = xxl_shard_of_partition(relid, InvalidOid);
		if (list_member_oid(servers, shard->serverid))
		{
			*why = psprintf(KEPT "two of its partitions are on server \"%s\"", shard->server);
			return &ma->plan;
		}
		servers = lappend_oid(servers, shard->serverid);
		mine = bms_add_member(mine, (int) ((Scan *) child)->scanrelid);
	}
	if (servers == NIL)
		return &ma->plan;
	if ((shared = server_shared(rtable, mine, servers)) != NULL)
	{
		*why = psprintf(KEPT "server \"%s\" serves another scan of the query too", shared);
		return &ma->plan;
	}
	refused = xxl_plan_keys_refused(ma->plan.targetlist, ma->numCols, ma->sortColIdx,
									ma->sortOperators, ma->collations);
	if (refused != NULL)
	{
		*why = psprintf(KEPT "%s", refused);
		return &ma->plan;
	}
	return make_merge(ma);
}

void
xxl_shard_plan_init(void)
{
	RegisterCustomScanMethods(&xxl_shard_merge_methods);
	xxl_shard_merge_init();
	xxl_plan_register_merge_append(shard_merge_append);
}
