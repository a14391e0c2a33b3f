/*
 * xxl_custom_path.c — the custom scans' shared path set-up (see
 * xxl_custom_path.h).
 */
#include "postgres.h"

#include "nodes/pg_list.h"

#include "pg/plan/xxl_custom_path.h"

CustomPath *
xxl_custom_path(RelOptInfo *rel, const CustomPathMethods *methods)
{
	CustomPath *cpath = makeNode(CustomPath);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = rel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = false;
	cpath->path.parallel_workers = 0;
	cpath->path.rows = rel->rows;
	cpath->path.pathkeys = NIL;
	cpath->flags = 0;
	cpath->custom_paths = NIL;
	cpath->custom_private = NIL;
	cpath->methods = methods;
	return cpath;
}

Path *
xxl_seqscan_path(RelOptInfo *rel)
{
	ListCell   *lc;

	foreach(lc, rel->pathlist)
	{
		Path	   *p = lfirst(lc);

		if (p->pathtype == T_SeqScan && p->param_info == NULL)
			return p;
	}
	return NULL;
}
