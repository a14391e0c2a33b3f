/*
 * xxl_table_analyze.c — what a statement may not ask of an xxl table,
 * refused when the statement is analyzed, before any row is touched, so
 * that the answer never depends on the data:
 *  - INSERT ... ON CONFLICT: a conflict check needs the new row's TID at
 *    once, and a sorted row gets its place when the statement ends.  It
 *    used to be refused only when a row did not conflict, so DO NOTHING
 *    worked or failed with the data and with unrelated unique indexes.
 *  - RETURNING ctid of INSERT or UPDATE into an xxl table without indexes:
 *    such new rows are sorted and placed when the statement ends, so their
 *    TID is not known when RETURNING is computed (it printed an invalid
 *    one).  With indexes, rows are written as they come and have one.
 * A cached plan is analyzed again when the table changes, and so checked
 * again.
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "access/table.h"
#include "nodes/nodeFuncs.h"
#include "parser/analyze.h"
#include "parser/parsetree.h"
#include "utils/rel.h"

#include "pg/table/xxl_table_nodes.h"

static post_parse_analyze_hook_type prev_post_parse_analyze = NULL;

static bool
returns_ctid_walker(Node *node, int *varno)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;

		return var->varno == *varno && var->varlevelsup == 0 &&
			var->varattno == SelfItemPointerAttributeNumber;
	}
	return expression_tree_walker(node, returns_ctid_walker, varno);
}

static void
check_query(Query *query)
{
	RangeTblEntry *rte;
	Relation	rel;
	bool		xxl;
	bool		has_index;
	int			varno = query->resultRelation;
	ListCell   *lc;

	/* WITH ... AS (INSERT ... RETURNING ...) */
	foreach(lc, query->cteList)
	{
		CommonTableExpr *cte = lfirst_node(CommonTableExpr, lc);

		if (IsA(cte->ctequery, Query))
			check_query((Query *) cte->ctequery);
	}
	if ((query->commandType != CMD_INSERT && query->commandType != CMD_UPDATE) || varno <= 0)
		return;
	if (query->onConflict == NULL && query->returningList == NIL)
		return;
	rte = rt_fetch(varno, query->rtable);
	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_RELATION)
		return;
	/* the statement's analysis has locked the target already */
	rel = table_open(rte->relid, NoLock);
	xxl = xxl_is_table(rel);
	has_index = RelationGetForm(rel)->relhasindex;
	if (xxl && query->onConflict != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("INSERT ... ON CONFLICT is not supported on xxl table \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("Rows of an xxl table get their place when the statement that inserts them ends, and a conflict check needs it at once."),
				 errhint("Insert the rows that are not there yet: INSERT ... SELECT ... WHERE NOT EXISTS (...), or use a heap table.")));
	if (xxl && !has_index &&
		returns_ctid_walker((Node *) query->returningList, &varno))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("RETURNING ctid is not supported for rows written into xxl table \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("The table has no index, so its new rows are sorted and get their place when the statement ends, after RETURNING is computed."),
				 errhint("Return the columns instead, or read ctid in a later statement.")));
	table_close(rel, NoLock);
}

static void
post_parse_analyze(ParseState *pstate, Query *query, JumbleState *jstate)
{
	if (prev_post_parse_analyze)
		prev_post_parse_analyze(pstate, query, jstate);
	check_query(query);
}

void
xxl_table_analyze_init(void)
{
	prev_post_parse_analyze = post_parse_analyze_hook;
	post_parse_analyze_hook = post_parse_analyze;
}
