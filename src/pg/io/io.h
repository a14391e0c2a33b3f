/*
 * io.h — rows in and out (folder io/): the one way to read input
 * (xxl_input.h: a table, a query, a child plan node, runs of packed rows
 * an access method registers), the one way to emit rows (xxl_output.h:
 * the caller's tuplestore, new heap pages written directly, or inserts),
 * the row codec both sides share (xxl_rowcodec.h), the direct page writer
 * and its file part (xxl_heap_pages.h, xxl_relfile.h), and rows packed
 * without a header (xxl_packed_row.h).  Other folders include this
 * header, not the ones it gathers.
 */
#ifndef XXL_PG_IO_H
#define XXL_PG_IO_H

#include "pg/io/xxl_rowcodec.h"
#include "pg/io/xxl_packed_row.h"
#include "pg/io/xxl_input.h"
#include "pg/io/xxl_output.h"
#include "pg/io/xxl_relfile.h"
#include "pg/io/xxl_heap_pages.h"

#endif							/* XXL_PG_IO_H */
