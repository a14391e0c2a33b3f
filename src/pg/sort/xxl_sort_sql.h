/*
 * xxl_sort_sql.h — how the two forms of xxl.sort() start a sort from their
 * arguments, shared by the set-returning functions and the custom scan that
 * replaces them in FROM (xxl_sort_scan.c), so both read the same arguments
 * the same way and raise the same errors.
 */
#ifndef XXL_PG_SORT_SQL_H
#define XXL_PG_SORT_SQL_H

#include "access/tupdesc.h"
#include "utils/relcache.h"

#include "pg/sort/xxl_sort_run.h"

/*
 * xxl.sort(source text, order_by text): a table name or a query.  needed,
 * options: see xxl_sort_run_start (NULL: every column; defaults).
 */
extern XxlSortRun *xxl_sort_start_query(const char *source, const char *order_by,
										TupleDesc out_desc, const bool *needed,
										const XxlSortRunOptions *options);

/* xxl.sort(NULL::tbl, order_by): the table whose row type type is. */
extern XxlSortRun *xxl_sort_start_typed(Oid type, const char *order_by, TupleDesc out_desc,
										const bool *needed, const XxlSortRunOptions *options);

/*
 * Sorts of a partitioned table with partitions on other servers (the shard
 * folder registers this at load time): given the table (locked), its key
 * and layouts, a run that merges the partitions' rows sorted where they
 * live (xxl_sort_run_merge), or NULL when the table is not sharded, and
 * then the table is read and sorted here as any other.
 */
typedef XxlSortRun *(*XxlShardedSort) (Relation rel, XxlSortKey *key, TupleDesc out_desc,
									   AttrNumber *map, const XxlSortRunOptions *options);
extern void xxl_sort_register_sharded(XxlShardedSort sharded);

#endif							/* XXL_PG_SORT_SQL_H */
