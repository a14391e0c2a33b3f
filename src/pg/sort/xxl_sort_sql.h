/*
 * xxl_sort_sql.h — how the two forms of xxl.sort() start a sort from their
 * arguments, shared by the set-returning functions and the custom scan that
 * replaces them in FROM (xxl_sort_scan.c), so both read the same arguments
 * the same way and raise the same errors.
 */
#ifndef XXL_PG_SORT_SQL_H
#define XXL_PG_SORT_SQL_H

#include "access/tupdesc.h"

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

#endif							/* XXL_PG_SORT_SQL_H */
