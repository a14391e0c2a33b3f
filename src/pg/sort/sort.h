/*
 * sort.h — ORDER BY to sorted rows (folder sort/): the SQL operators'
 * sorter factory (xxl_sort_new.h), sort keys from ORDER BY lists
 * (xxl_sortkey.h), one sort from source rows to sorted rows
 * (xxl_sort_run.h), and how the SQL forms of xxl.sort() start one
 * (xxl_sort_sql.h).  Other folders include this header, not the ones it
 * gathers; the sort run's and the key's internals stay in the folder.
 */
#ifndef XXL_PG_SORT_H
#define XXL_PG_SORT_H

#include "pg/sort/xxl_sort_new.h"
#include "pg/sort/xxl_sortkey.h"
#include "pg/sort/xxl_sort_run.h"
#include "pg/sort/xxl_sort_sql.h"

#endif							/* XXL_PG_SORT_H */
