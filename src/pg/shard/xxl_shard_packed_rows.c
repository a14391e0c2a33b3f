/*
 * xxl_shard_packed_rows.c — the shard's side of a sorted stream:
 * xxl.packed_rows(query text) RETURNS SETOF bytea, the query's rows in
 * binary COPY's row format (a 16-bit field count, then per field a 32-bit
 * length, -1 for NULL, and the type's send form), many rows to a block.
 *
 * A coordinator sends COPY (SELECT xxl.packed_rows('<the sort>')) TO
 * STDOUT, so that a message carries a block of rows, not a row: the
 * shard is spared the message per row and the coordinator libpq's
 * allocation, copy and wait per row (xxl_shard_stream.c reads the blocks).
 *
 * The function returns a value per call, from the select list, so its
 * blocks are not kept in a tuplestore: the query runs in a cursor (no
 * scroll, so that no node below keeps its rows for a backward scan), and
 * each call fetches into a receiver that packs rows until the block is
 * full or the query has ended.  Integers, floats and booleans are packed
 * as their send functions would send them, without calling them
 * (xxl_shard_fixed.h).
 */
#include "postgres.h"

#include "executor/spi.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "tcop/pquery.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/portal.h"

#include "pg/shard/xxl_shard_fixed.h"

/* A block is closed once it holds this much (a row never splits). */
#define BLOCK_BYTES (256 * 1024)

typedef struct PackReceiver
{
	DestReceiver pub;
	StringInfoData block;		/* VARHDRSZ bytes, then rows */
	int			natts;
	FmgrInfo   *send;
	int		   *fixed;			/* per column: xxl_shard_fixed_width, packed here */
	MemoryContext rowcxt;		/* a row's send forms */
	uint64		rows;			/* packed into the block */
	uint64		all_rows;		/* ... and into every block so far */
	uint64		all_bytes;
} PackReceiver;

typedef struct PackedRows
{
	char	   *portal;
	bool		done;
	PackReceiver rcv;
} PackedRows;

static void
pack_startup(DestReceiver *self, int operation, TupleDesc desc)
{
	PackReceiver *r = (PackReceiver *) self;

	/* (called for every fetch: the send functions once) */
	if (r->send != NULL)
		return;
	r->natts = desc->natts;
	r->send = MemoryContextAllocZero(r->rowcxt->parent, sizeof(FmgrInfo) * Max(desc->natts, 1));
	r->fixed = MemoryContextAllocZero(r->rowcxt->parent, sizeof(int) * Max(desc->natts, 1));
	for (int i = 0; i < desc->natts; i++)
	{
		Oid			func;
		bool		varlena;

		r->fixed[i] = xxl_shard_fixed_width(TupleDescAttr(desc, i)->atttypid);
		getTypeBinaryOutputInfo(TupleDescAttr(desc, i)->atttypid, &func, &varlena);
		fmgr_info_cxt(func, &r->send[i], r->rowcxt->parent);
	}
}

static bool
pack_slot(TupleTableSlot *slot, DestReceiver *self)
{
	PackReceiver *r = (PackReceiver *) self;
	MemoryContext old;
	uint16		n16 = pg_hton16((uint16) r->natts);

	slot_getallattrs(slot);
	MemoryContextReset(r->rowcxt);
	old = MemoryContextSwitchTo(r->rowcxt);
	/* (room for the count and the fixed-width fields, written in place) */
	enlargeStringInfo(&r->block, 2 + 12 * r->natts);
	appendBinaryStringInfoNT(&r->block, (char *) &n16, sizeof(n16));
	for (int i = 0; i < r->natts; i++)
	{
		uint32		len;
		char	   *p = r->block.data + r->block.len;
		Datum		d = slot->tts_values[i];

		if (slot->tts_isnull[i])
		{
			len = pg_hton32((uint32) -1);
			memcpy(p, &len, 4);
			r->block.len += 4;
		}
		else if (r->fixed[i] > 0)
		{
			/* the send form written here: its width, then the value in network order */
			int			w = r->fixed[i];

			len = pg_hton32((uint32) w);
			memcpy(p, &len, 4);
			xxl_shard_fixed_send(p + 4, d, w);
			r->block.len += 4 + w;
		}
		else
		{
			bytea	   *out = SendFunctionCall(&r->send[i], slot->tts_values[i]);

			len = pg_hton32((uint32) (VARSIZE(out) - VARHDRSZ));
			appendBinaryStringInfoNT(&r->block, (char *) &len, sizeof(len));
			appendBinaryStringInfoNT(&r->block, VARDATA(out), VARSIZE(out) - VARHDRSZ);
		}
	}
	MemoryContextSwitchTo(old);
	r->rows++;
	r->all_rows++;
	return true;
}

static void
pack_shutdown(DestReceiver *self)
{
}

static void
pack_destroy(DestReceiver *self)
{
}

/* Open the query's cursor (the rows are fetched by later calls). */
static void
open_query(PackedRows *p, const char *query)
{
	MemoryContext cxt = CurrentMemoryContext;
	SPIPlanPtr	plan;
	Portal		portal;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare_cursor(query, 0, NULL, CURSOR_OPT_NO_SCROLL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare_cursor failed: %s", SPI_result_code_string(SPI_result));
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("xxl.packed_rows: the query must return rows")));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, false);
	/* (SPI_finish frees what was allocated since SPI_connect) */
	p->portal = MemoryContextStrdup(cxt, portal->name);
	SPI_finish();
}

PG_FUNCTION_INFO_V1(xxl_packed_rows);
Datum
xxl_packed_rows(PG_FUNCTION_ARGS)
{
	FuncCallContext *fc;
	PackedRows *p;
	Portal		portal;
	bytea	   *block;

	if (SRF_IS_FIRSTCALL())
	{
		MemoryContext old;

		if (PG_ARGISNULL(0))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("xxl.packed_rows: query must not be null")));
		fc = SRF_FIRSTCALL_INIT();
		old = MemoryContextSwitchTo(fc->multi_call_memory_ctx);
		p = palloc0(sizeof(PackedRows));
		p->rcv.pub.receiveSlot = pack_slot;
		p->rcv.pub.rStartup = pack_startup;
		p->rcv.pub.rShutdown = pack_shutdown;
		p->rcv.pub.rDestroy = pack_destroy;
		p->rcv.pub.mydest = DestNone;
		p->rcv.rowcxt = AllocSetContextCreate(fc->multi_call_memory_ctx, "xxl packed row",
											  ALLOCSET_DEFAULT_SIZES);
		initStringInfo(&p->rcv.block);
		open_query(p, text_to_cstring(PG_GETARG_TEXT_PP(0)));
		fc->user_fctx = p;
		MemoryContextSwitchTo(old);
	}
	fc = SRF_PERCALL_SETUP();
	p = fc->user_fctx;
	if (p->done)
		SRF_RETURN_DONE(fc);

	portal = GetPortalByName(p->portal);
	if (!PortalIsValid(portal))
		elog(ERROR, "xxl.packed_rows: cursor \"%s\" is gone", p->portal);
	resetStringInfo(&p->rcv.block);
	appendStringInfoSpaces(&p->rcv.block, VARHDRSZ);
	p->rcv.rows = 0;
	while (p->rcv.block.len < BLOCK_BYTES)
	{
		/*
		 * As many rows as fill the block at the rows' mean size so far (one
		 * row first: a block outgrows its size by one fetch's last rows, so
		 * a fetch of wide rows must not be long).
		 */
		uint64		mean = p->rcv.all_rows > 0 ? p->rcv.all_bytes / p->rcv.all_rows + 1 : 0;
		long		count = mean == 0 ? 1 : (long) Min((BLOCK_BYTES - p->rcv.block.len) / mean + 1, 65536);
		int			before = p->rcv.block.len;
		uint64		got = PortalRunFetch(portal, FETCH_FORWARD, count, &p->rcv.pub);

		p->rcv.all_bytes += p->rcv.block.len - before;
		if (got < (uint64) count)
		{
			p->done = true;
			break;
		}
	}
	if (p->done)
		SPI_cursor_close(portal);
	if (p->rcv.rows == 0)
		SRF_RETURN_DONE(fc);
	block = palloc(p->rcv.block.len);
	memcpy(block, p->rcv.block.data, p->rcv.block.len);
	SET_VARSIZE(block, p->rcv.block.len);
	SRF_RETURN_NEXT(fc, PointerGetDatum(block));
}
