/*
 * xxl_sort_new.h — a sorter for an SQL operator: made on the operator's
 * resources (memory, threads, disks, cancel hook) with run formation and
 * the final merge on another core where it has two, attached to the
 * operator (destroyed with it, its statistics reported as the
 * operator's); an engine error is raised.  record_size 0: variable-length
 * records; compare: column-wise keys (xxl_keycmp.h) or NULL for bytes.
 */
#ifndef XXL_PG_SORT_NEW_H
#define XXL_PG_SORT_NEW_H

#include "core/xxl_sort.h"
#include "pg/runtime/runtime.h"

extern xxl_sorter *xxl_sort_new(XxlOperator *op, size_t record_size, size_t key_size,
								const xxl_key_compare *compare);

#endif							/* XXL_PG_SORT_NEW_H */
