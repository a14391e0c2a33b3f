/*
 * xxl_lazy_slot.h — a virtual tuple slot whose values are made only when
 * someone asks for them.  A node whose rows cost something to turn into
 * values (XxlSort's records: strings restored from the key, a compact row
 * deformed) stores each row as a decode callback; the parent's first
 * slot_getsomeattrs, copy or materialize calls it once.  A parent that
 * never looks at the columns (count(*), EXISTS) pays nothing for them, as
 * over PostgreSQL's Sort, whose minimal tuples are deformed by the reader.
 *
 * The callback's row must stay valid until the slot is cleared, as a
 * scan's rows do until the next fetch.  A node that returns such a slot
 * announces the slot type as its result type (xxl_lazy_slot_announce), so
 * that its parent's expressions fetch attributes instead of reading a
 * virtual slot's arrays directly; that is only right when the node's own
 * qual and projection do not read its scan slot.
 */
#ifndef XXL_PG_LAZY_SLOT_H
#define XXL_PG_LAZY_SLOT_H

#include "executor/tuptable.h"
#include "nodes/execnodes.h"

typedef void (*XxlSlotDecode) (void *arg, Datum *values, bool *isnull);

/* The slot type (a virtual slot's, but for how values are made). */
extern const TupleTableSlotOps *xxl_lazy_slot_ops(void);

/*
 * A new slot of the type for the node ps, announced as its result type, or
 * NULL when ps has a qual or projection of its own (then it keeps its
 * virtual scan slot).
 */
extern TupleTableSlot *xxl_lazy_slot_announce(PlanState *ps, TupleDesc desc);

/* Store a row as decode(arg, ...) in the empty lazy slot. */
extern void xxl_lazy_slot_store(TupleTableSlot *slot, XxlSlotDecode decode, void *arg);

#endif							/* XXL_PG_LAZY_SLOT_H */
