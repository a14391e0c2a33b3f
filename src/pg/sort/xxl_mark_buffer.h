/*
 * xxl_mark_buffer.h — the records a sort handed out since a mark, kept so
 * that they can be handed out again: XxlSort's mark/restore for the inner
 * side of a merge join, without a tuplestore.
 *
 * A merge join marks its inner side after the first row of each group of
 * equal keys and restores to the mark for every further outer row of the
 * key.  The buffer keeps the records as the sorter handed them out (one or
 * two pieces each: a fixed record, or a key and a compact row), so a row
 * costs a copy of its record, where a tuplestore forms a tuple from every
 * row.  What came before the mark is dropped at the next record kept: the
 * last row handed out stays valid until the next one, as the caller's
 * contract with its parent says.
 */
#ifndef XXL_PG_MARK_BUFFER_H
#define XXL_PG_MARK_BUFFER_H

#include "utils/palloc.h"

typedef struct XxlMarkBuffer XxlMarkBuffer;

/* An empty buffer in cxt, not marking. */
extern XxlMarkBuffer *xxl_mark_buffer_create(MemoryContext cxt);

/* Mark after the row last handed out; from now on every record is kept. */
extern void xxl_mark_buffer_mark(XxlMarkBuffer *buf);

/* Hand out the rows since the mark again, then go on with new ones. */
extern void xxl_mark_buffer_restore(XxlMarkBuffer *buf);

/*
 * The next kept record to hand out again (blen 0 when it has one piece);
 * false when the kept records are all handed out and the next
 * row is a new one.
 */
extern bool xxl_mark_buffer_next(XxlMarkBuffer *buf, const void **a, uint32 *alen,
								 const void **b, uint32 *blen);

/* Whether xxl_mark_buffer_next has kept records left to hand out. */
extern bool xxl_mark_buffer_replaying(const XxlMarkBuffer *buf);

/*
 * A new record, about to be handed out (only when xxl_mark_buffer_next
 * returned false): kept when a mark is set.
 */
extern void xxl_mark_buffer_keep(XxlMarkBuffer *buf, const void *a, uint32 alen,
								 const void *b, uint32 blen);

/* Bytes kept now, and at most so far. */
extern size_t xxl_mark_buffer_bytes(const XxlMarkBuffer *buf);
extern size_t xxl_mark_buffer_peak(const XxlMarkBuffer *buf);

/* Stop marking and drop what is kept. */
extern void xxl_mark_buffer_clear(XxlMarkBuffer *buf);

#endif							/* XXL_PG_MARK_BUFFER_H */
