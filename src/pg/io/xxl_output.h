/*
 * xxl_output.h — where an operator's result rows go: back to the calling
 * query (a set-returning function), or into a new table.  Every operator
 * emits rows through here.
 *
 * A new table gets the given descriptor's column names, types, typmods
 * and collations and is created in the calling transaction (so an error
 * later leaves nothing behind).  Being invisible to everyone else, a heap
 * is filled page by page: tuples are formed straight into pages in local
 * memory, which are appended to the relation file (WAL-logged as full-page
 * images when the relation needs WAL; xxl_heap_pages.c), never through a
 * tuplestore or shared buffers.  Other table access methods get table_multi_insert()
 * with a bulk-insert state.
 *
 * Rows for the caller go into the tuplestore of SFRM_Materialize.  A
 * function in FROM is materialized by the executor in any case
 * (FunctionScan), and value-per-call mode would add a function call, a
 * composite datum and a second copy per row on top; materialize mode puts
 * each row into the tuplestore with a single copy.  xxl.sort() avoids the
 * tuplestore in FROM altogether with a custom scan (xxl_sort_scan.c).
 *
 * The sinks (a new heap written page by page, any other table through
 * multi-insert, the caller's tuplestore) sit behind one interface: a row
 * in compact form (xxl_rowcodec.h) or as values, then finish.
 */
#ifndef XXL_PG_OUTPUT_H
#define XXL_PG_OUTPUT_H

#include "access/htup.h"
#include "access/tupdesc.h"
#include "fmgr.h"
#include "port/pg_bswap.h"

typedef struct XxlOutput XxlOutput;

/*
 * Create table target (text read as a possibly qualified name; unquoted
 * parts fold to lower case) with desc's non-dropped columns and open it for
 * bulk insert.  ERRCODE_DUPLICATE_TABLE if it exists.
 */
extern XxlOutput *xxl_output_into_table(const char *target, TupleDesc desc);

/*
 * Rows into pages begun by another owner of the table (CREATE TABLE AS's
 * receiver, xxl_plan_ctas.c), laid out as desc: xxl_output_finish finishes
 * the pages (xxl_heap_pages_finish, which frees them) and closes nothing.
 */
struct XxlHeapPages;
extern XxlOutput *xxl_output_into_pages(struct XxlHeapPages *pages, TupleDesc desc);

/*
 * Rows to the calling set-returning function in materialize mode; desc is
 * the rows' layout (from xxl_output_caller_desc).
 */
extern XxlOutput *xxl_output_to_caller(FunctionCallInfo fcinfo, TupleDesc desc);

/*
 * Rows for another server that reads them back (a shard's reduction for
 * its coordinator): rows of desc, whose every column is 8 bytes by value
 * (bigint, double precision) and never NULL, packed many to a bytea, each
 * block a row of the calling set-returning function (materialize mode,
 * SETOF bytea).  A row is its columns' values in order, each 8 bytes
 * little-endian whatever this machine's byte order; rows follow each other
 * with nothing between, and a block holds whole rows, at most
 * XXL_PACKED_BLOCK_BYTES.  One message per block instead of one per row
 * saves both servers most of their per-row work.  xxl_output_finish counts
 * rows, not blocks.
 */
#define XXL_PACKED_BLOCK_BYTES (256 * 1024)
#ifdef WORDS_BIGENDIAN
#define XXL_PACKED_ORDER(v) pg_bswap64(v)
#else
#define XXL_PACKED_ORDER(v) (v)
#endif
extern XxlOutput *xxl_output_packed_to_caller(FunctionCallInfo fcinfo, TupleDesc desc);

/* One value of a packed row (a bigint's or a double's bits), at p. */
static inline int64
xxl_packed_get8(const char *p)
{
	uint64		v;

	memcpy(&v, p, sizeof(v));
	return (int64) XXL_PACKED_ORDER(v);
}

/*
 * The row type the calling query expects (a column definition list, or the
 * resolved composite type of a polymorphic result).
 */
extern TupleDesc xxl_output_caller_desc(FunctionCallInfo fcinfo);

/*
 * Rows for the caller may be held in memory up to what the operator's
 * budget leaves beside the held bytes its engine still holds (never less
 * than work_mem, PostgreSQL's rule for a function in materialize mode)
 * before the tuplestore spills: the statement stays within the budget, and
 * a result that fits is not written to a temporary file and read back.  An
 * operator says this when its output starts, before the first row; a table
 * output ignores it.
 */
extern void xxl_output_caller_memory(XxlOutput *out, size_t budget, uint64 held);

/* One row in compact form (xxl_rowcodec.h), laid out as the output's desc. */
extern void xxl_output_put_compact(XxlOutput *out, const void *row, uint32 len);

/* n rows in compact form of len bytes each, back to back. */
extern void xxl_output_put_compact_many(XxlOutput *out, const char *rows, uint32 len, int n);

/* One row as values and nulls of the output's desc. */
extern void xxl_output_put_values(XxlOutput *out, Datum *values, bool *isnull);

/* Flush and close; returns the number of rows written. */
extern uint64 xxl_output_finish(XxlOutput *out);

#endif							/* XXL_PG_OUTPUT_H */
