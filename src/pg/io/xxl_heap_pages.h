/*
 * xxl_heap_pages.h — the direct page writer: rows of a heap created in this
 * transaction, formed straight into pages in local memory and appended to
 * the relation's files in 256 kB writes (WAL-logged as full-page images
 * when the relation needs WAL), never through shared buffers.  Used by the
 * table sink of xxl_output.c when xxl_heap_pages_allowed() says so.
 */
#ifndef XXL_PG_HEAP_PAGES_H
#define XXL_PG_HEAP_PAGES_H

#include "access/htup.h"
#include "utils/relcache.h"

typedef struct XxlHeapPages XxlHeapPages;

/* An empty heap of this transaction that logical decoding need not see. */
extern bool xxl_heap_pages_allowed(Relation rel);

/* Start writing rel's pages; rows get this transaction's xmin and cid. */
extern XxlHeapPages *xxl_heap_pages_begin(Relation rel, CommandId cid);

/* One row in compact form (xxl_rowcodec.h). */
extern void xxl_heap_pages_put_compact(XxlHeapPages *pw, const void *row, uint32 len);

/* n rows in compact form of len bytes each, back to back. */
extern void xxl_heap_pages_put_compact_many(XxlHeapPages *pw, const char *rows, uint32 len, int n);

/* One row as values and nulls of rel's descriptor. */
extern void xxl_heap_pages_put_values(XxlHeapPages *pw, Datum *values, bool *isnull);

/* Write the last pages, sync if needed; returns the rows written. */
extern uint64 xxl_heap_pages_finish(XxlHeapPages *pw);

#endif							/* XXL_PG_HEAP_PAGES_H */
