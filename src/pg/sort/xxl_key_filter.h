/*
 * xxl_key_filter.h — a bounded set of the sort keys a distinct sort has
 * already seen, so that rows whose key came before are dropped before
 * they are sorted (XxlSort under a Unique: xxl_plan_sort.c).
 *
 * Keys are encoded sort keys compared as bytes: equal bytes are equal
 * under the sort's operators and collations (xxl_sortkey.h), so a dropped
 * row is one the Unique above would drop too.  The set keeps what fits
 * the bytes it was given; keys that do not fit pass (the sort's output
 * drops what is left).  When the keys barely repeat (fewer than a quarter
 * of the first 65536 rows dropped) the filter turns itself off, so
 * high-cardinality input pays only that trial.
 */
#ifndef XXL_PG_KEY_FILTER_H
#define XXL_PG_KEY_FILTER_H

#include "postgres.h"

typedef struct XxlKeyFilter XxlKeyFilter;

/* A filter of about bytes, in CurrentMemoryContext. */
extern XxlKeyFilter *xxl_key_filter_create(size_t bytes);

/* Whether key was seen before (the row can go); remembers it if not and it fits. */
extern bool xxl_key_filter_seen(XxlKeyFilter *f, const void *key, uint32 len);

/* Rows dropped so far. */
extern uint64 xxl_key_filter_dropped(const XxlKeyFilter *f);

#endif							/* XXL_PG_KEY_FILTER_H */
