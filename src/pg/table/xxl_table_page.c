/*
 * xxl_table_page.c — how an xxl table's data pages hold its packed rows
 * (xxl_table_storage.h; the rows: io/xxl_packed_row.h).  Rows of fixed width sit
 * back to back; variable rows are placed downwards from the special space
 * with a 2-byte offset each, in order from the page header.  Also the
 * store of one such row into a slot, which fetches share.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "access/toast_compression.h"
#include "access/toast_internals.h"
#include "catalog/pg_type.h"
#include "access/tupmacs.h"
#include "executor/tuptable.h"
#include "lib/stringinfo.h"
#include "utils/memutils.h"
#include "utils/expandeddatum.h"

#include "pg/table/xxl_table_storage.h"
#include "pg/io/io.h"

/* Pages ---------------------------------------------------------------------- */

XxlPageOpaque *
xxl_page_init_kind(Page page, XxlPageKind kind, uint32 segno)
{
	XxlPageOpaque *op;

	PageInit(page, BLCKSZ, sizeof(XxlPageOpaque));
	op = XXL_OPAQUE(page);
	op->magic = XXL_TABLE_MAGIC;
	op->kind = kind;
	op->segno = segno;
	op->nrows = 0;
	return op;
}

void
xxl_page_init(Page page, const XxlRowFormat *fmt, uint32 segno)
{
	XxlPageOpaque *op = xxl_page_init_kind(page, XXL_PAGE_DATA, segno);

	op->row_width = (uint16) fmt->row_width;
	op->natts = (uint16) fmt->natts;
	/* fixed rows: both bounds at the end of the rows; variable: offsets up, rows down */
	if (fmt->row_width > 0)
		((PageHeader) page)->pd_upper = SizeOfPageHeaderData;
}

uint32
xxl_page_max_row(int row_width)
{
	Size		room = BLCKSZ - MAXALIGN(sizeof(XxlPageOpaque)) - SizeOfPageHeaderData;

	return row_width > 0 ? room : room - sizeof(uint16);
}

int
xxl_page_add(Page page, const char *row, uint32 len)
{
	PageHeader	ph = (PageHeader) page;
	XxlPageOpaque *op = XXL_OPAQUE(page);

	if (op->nrows >= XXL_PAGE_ROWS)
		return 0;
	if (op->row_width > 0)
	{
		Assert(len == op->row_width);
		if ((Size) ph->pd_lower + len > ph->pd_special)
			return 0;
		memcpy((char *) page + ph->pd_lower, row, len);
		ph->pd_lower += len;
		ph->pd_upper = ph->pd_lower;
	}
	else
	{
		uint16		at;

		if (len > ph->pd_upper || (Size) ph->pd_lower + sizeof(uint16) > ph->pd_upper - len)
			return 0;
		at = ph->pd_upper - len;
		memcpy((char *) page + at, row, len);
		memcpy((char *) page + ph->pd_lower, &at, sizeof(uint16));
		ph->pd_lower += sizeof(uint16);
		ph->pd_upper = at;
	}
	return ++op->nrows;
}

void
xxl_slot_store_row(TupleTableSlot *slot, const XxlRowFormat *fmt, const char *row,
				   MemoryContext rowcxt)
{
	MemoryContext old;

	ExecClearTuple(slot);
	MemoryContextReset(rowcxt);
	old = MemoryContextSwitchTo(rowcxt);
	xxl_row_unpack(fmt, row, slot->tts_values, slot->tts_isnull);
	MemoryContextSwitchTo(old);
	ExecStoreVirtualTuple(slot);
}
