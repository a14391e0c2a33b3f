/*
 * xxl_lazy_slot.c — virtual slots whose values are decoded on first use
 * (see xxl_lazy_slot.h).  Everything but how values come to be is
 * PostgreSQL's virtual slot: the operations that read the arrays decode
 * first, then do what TTSOpsVirtual does.
 */
#include "postgres.h"

#include "executor/executor.h"

#include "pg/plan/xxl_lazy_slot.h"

typedef struct LazySlot
{
	VirtualTupleTableSlot base;
	XxlSlotDecode decode;		/* the row not yet decoded, or NULL */
	void	   *arg;
} LazySlot;

static TupleTableSlotOps lazy_ops;
static bool lazy_ops_made;

/* The stored row's values, once. */
static void
decode_row(TupleTableSlot *slot)
{
	LazySlot   *ls = (LazySlot *) slot;

	Assert(!TTS_EMPTY(slot));
	if (ls->decode != NULL)
	{
		XxlSlotDecode decode = ls->decode;

		ls->decode = NULL;
		decode(ls->arg, slot->tts_values, slot->tts_isnull);
	}
	slot->tts_nvalid = slot->tts_tupleDescriptor->natts;
}

static void
lazy_getsomeattrs(TupleTableSlot *slot, int natts)
{
	decode_row(slot);
}

static void
lazy_clear(TupleTableSlot *slot)
{
	((LazySlot *) slot)->decode = NULL;
	TTSOpsVirtual.clear(slot);
}

static void
lazy_materialize(TupleTableSlot *slot)
{
	if (!TTS_EMPTY(slot))
		decode_row(slot);
	TTSOpsVirtual.materialize(slot);
}

static void
lazy_copyslot(TupleTableSlot *dst, TupleTableSlot *src)
{
	((LazySlot *) dst)->decode = NULL;
	TTSOpsVirtual.copyslot(dst, src);
}

static HeapTuple
lazy_copy_heap_tuple(TupleTableSlot *slot)
{
	decode_row(slot);
	return TTSOpsVirtual.copy_heap_tuple(slot);
}

static MinimalTuple
lazy_copy_minimal_tuple(TupleTableSlot *slot)
{
	decode_row(slot);
	return TTSOpsVirtual.copy_minimal_tuple(slot);
}

const TupleTableSlotOps *
xxl_lazy_slot_ops(void)
{
	if (!lazy_ops_made)
	{
		lazy_ops = TTSOpsVirtual;
		lazy_ops.base_slot_size = sizeof(LazySlot);
		lazy_ops.clear = lazy_clear;
		lazy_ops.getsomeattrs = lazy_getsomeattrs;
		lazy_ops.materialize = lazy_materialize;
		lazy_ops.copyslot = lazy_copyslot;
		lazy_ops.copy_heap_tuple = lazy_copy_heap_tuple;
		lazy_ops.copy_minimal_tuple = lazy_copy_minimal_tuple;
		lazy_ops_made = true;
	}
	return &lazy_ops;
}

TupleTableSlot *
xxl_lazy_slot_announce(PlanState *ps, TupleDesc desc)
{
	TupleTableSlot *slot;

	if (ps->ps_ProjInfo != NULL || ps->qual != NULL)
		return NULL;
	slot = ExecInitExtraTupleSlot(ps->state, desc, xxl_lazy_slot_ops());
	ps->resultops = slot->tts_ops;
	ps->resultopsset = true;
	ps->resultopsfixed = true;
	return slot;
}

void
xxl_lazy_slot_store(TupleTableSlot *slot, XxlSlotDecode decode, void *arg)
{
	LazySlot   *ls = (LazySlot *) slot;

	Assert(slot->tts_ops == &lazy_ops && TTS_EMPTY(slot));
	ls->decode = decode;
	ls->arg = arg;
	slot->tts_flags &= ~TTS_FLAG_EMPTY;
	slot->tts_nvalid = 0;
}
