/*
 * xxl_shard_plan.c — which MergeAppends and Appends of a finished plan
 * become XxlShardMerge and XxlShardAppend nodes (xxl.sort_in_plans and
 * xxl.on_shards), and how.
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
 * XxlSort.  Where the order is that of range partitions, PostgreSQL plans
 * an ordered Append instead, which needs no merge but still runs its
 * children one after the other; XxlShardAppend starts them at once too and
 * reads them in the Append's order.
 *
 * A MergeAppend (or ordered Append) stays PostgreSQL's when a Limit can
 * bound it (the first rows of each partition are then all it reads), when
 * its rows are expected to fit in xxl.sort_in_plans_threshold (as a Sort
 * is kept then: each statement's start costs more than the overlap gains),
 * when it prunes partitions at run time or depends on parameters, when a
 * key column's type is one the engine does not compare, or when a foreign
 * partition's scan is not a plain sorted scan of postgres_fdw (a join or
 * aggregate pushed down, parameters, a local filter, rows locked).  Two
 * foreign partitions on one server keep it too: one connection per server
 * and user cannot carry two statements at once.  EXPLAIN VERBOSE then says
 * why, after the plan.  (A server that another scan of the statement
 * reads has its stream spooled when the node starts, and statements that
 * start meanwhile get their connections from spooled streams:
 * xxl_shard_statement.c; statements that run between a query's fetches,
 * as under a cursor, are the executor's to see: xxl_shard_merge_exec.c.)
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/partcache.h"
#include "utils/rel.h"

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

/*
 * The node of methods in place of plan (a MergeAppend or Append): children
 * its children, its rows theirs.
 */
static Plan *
make_node(Plan *plan, List *children, Bitmapset *relids, List *private,
		  const CustomScanMethods *methods)
{
	CustomScan *cscan = makeNode(CustomScan);

	cscan->scan.plan = *plan;
	cscan->scan.plan.type = T_CustomScan;
	cscan->scan.plan.targetlist = xxl_plan_column_refs(plan->targetlist, INDEX_VAR);
	/* (EXPLAIN resolves the children's columns through the first, as for a MergeAppend) */
	cscan->scan.plan.lefttree = linitial(children);
	cscan->scan.plan.righttree = NULL;
	cscan->scan.scanrelid = 0;
	cscan->flags = 0;
	cscan->custom_plans = children;
	cscan->custom_exprs = NIL;
	cscan->custom_private = private;
	cscan->custom_scan_tlist = xxl_plan_column_refs(plan->targetlist, OUTER_VAR);
	cscan->custom_relids = relids;
	cscan->methods = methods;
	return &cscan->scan.plan;
}

/*
 * Whether the foreign children of plan (a MergeAppend or an Append, not
 * pruned at run time) may all start at once: plain sorted scans of
 * postgres_fdw, one per server, and enough rows.  kept: the message's
 * start, for *why.
 */
static bool
start_at_once(Plan *plan, List *children, bool prunes, List *rtable, const char *kept,
			  const char **why)
{
	List	   *servers = NIL;
	ListCell   *lc;

	if (!xxl_on_shards || !xxl_plan_rows_beyond_threshold(plan) || prunes ||
		!bms_is_empty(plan->allParam) || plan->initPlan != NIL || plan->qual != NIL ||
		!xxl_plan_tlist_passes_through(plan->targetlist))
		return false;
	foreach(lc, children)
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
				*why = psprintf("%sthe scan of foreign partition \"%s\" is not a plain sorted scan",
								kept, get_rel_name(relid));
			return false;
		}
		shard = xxl_shard_of_partition(relid, InvalidOid);
		if (list_member_oid(servers, shard->serverid))
		{
			*why = psprintf("%stwo of its partitions are on server \"%s\"", kept, shard->server);
			return false;
		}
		servers = lappend_oid(servers, shard->serverid);
	}
	return servers != NIL;
}

#define KEPT_MERGE "XxlShardMerge not used for a MergeAppend: "

static Plan *
shard_merge_append(MergeAppend *ma, List *rtable, const char **why)
{
	const char *refused;

	if (!start_at_once(&ma->plan, ma->mergeplans, ma->part_prune_info != NULL, rtable,
					   KEPT_MERGE, why))
		return &ma->plan;
	refused = xxl_plan_keys_refused(ma->plan.targetlist, ma->numCols, ma->sortColIdx,
									ma->sortOperators, ma->collations);
	if (refused != NULL)
	{
		*why = psprintf(KEPT_MERGE "%s", refused);
		return &ma->plan;
	}
	return make_node(&ma->plan, ma->mergeplans, ma->apprelids,
					 xxl_plan_keys_private(ma->numCols, ma->sortColIdx, ma->sortOperators,
										   ma->collations, ma->nullsFirst),
					 &xxl_shard_merge_methods);
}

/*
 * The collations the order of the partitioned table of an ordered Append
 * (its apprelids) depends on: its partitioning columns' (the query's order
 * is a prefix of them).
 */
static List *
partitioning_collations(Bitmapset *apprelids, List *rtable)
{
	List	   *collations = NIL;
	RangeTblEntry *rte;
	Relation	rel;
	PartitionKey pk;

	if (bms_num_members(apprelids) != 1)
		return NIL;
	rte = rt_fetch(bms_singleton_member(apprelids), rtable);
	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_PARTITIONED_TABLE)
		return NIL;
	rel = table_open(rte->relid, NoLock);
	pk = RelationGetPartitionKey(rel);
	for (int i = 0; i < pk->partnatts; i++)
		if (OidIsValid(pk->partcollation[i]))
			collations = lappend_oid(collations, pk->partcollation[i]);
	table_close(rel, NoLock);
	return collations;
}

/*
 * An Append whose foreign children are sorted is PostgreSQL's ordered
 * Append over range partitions: its children one after the other, in
 * their bounds' order.  XxlShardAppend starts the foreign ones at once
 * and reads them in the same order.
 */
static Plan *
shard_append(Append *ap, List *rtable, const char **why)
{
	ListCell   *lc;
	Plan	   *first_foreign = NULL;
	Oid			relid;
	const char *sql;
	List	   *retrieved;

	if (ap->nasyncplans > 0 || ap->first_partial_plan < list_length(ap->appendplans))
		return &ap->plan;
	/* an ordered Append when its foreign children are sorted: all are, or none */
	foreach(lc, ap->appendplans)
	{
		if (IsA(lfirst(lc), ForeignScan))
		{
			first_foreign = lfirst(lc);
			break;
		}
	}
	if (first_foreign == NULL ||
		!xxl_shard_merge_child_sql(first_foreign, rtable, &relid, &sql, &retrieved) ||
		!start_at_once(&ap->plan, ap->appendplans, ap->part_prune_info != NULL, rtable,
					   "XxlShardAppend not used for an Append: ", why))
		return &ap->plan;
	return make_node(&ap->plan, ap->appendplans, ap->apprelids,
					 list_make1(partitioning_collations(ap->apprelids, rtable)),
					 &xxl_shard_append_methods);
}

static Plan *
shard_appends(Plan *plan, List *rtable, const char **why)
{
	if (IsA(plan, MergeAppend))
		return shard_merge_append((MergeAppend *) plan, rtable, why);
	return shard_append((Append *) plan, rtable, why);
}

void
xxl_shard_plan_init(void)
{
	RegisterCustomScanMethods(&xxl_shard_merge_methods);
	RegisterCustomScanMethods(&xxl_shard_append_methods);
	xxl_plan_register_appends(shard_appends);
}
