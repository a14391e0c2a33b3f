/*
 * xxl_shard_fixed.h — the types whose binary send form is their value's
 * bytes in network order, of a fixed width: packed (xxl_shard_packed_rows.c)
 * and read (xxl_shard_stream.c) without a call of the type's send or
 * receive function per value.  Each form is the one int2send, int4send,
 * int8send, float4send, float8send and boolsend give and the receive
 * functions read (no range to check), so a shard without the shortcut and
 * a coordinator with it, or the other way round, agree.
 */
#ifndef XXL_PG_SHARD_FIXED_H
#define XXL_PG_SHARD_FIXED_H

#include "catalog/pg_type.h"
#include "port/pg_bswap.h"

/* Its send form's width (bool: 1), or 0 for every other type. */
static inline int
xxl_shard_fixed_width(Oid type)
{
	switch (type)
	{
		case BOOLOID:
			return 1;
		case INT2OID:
			return 2;
		case INT4OID:
		case FLOAT4OID:
			return 4;
		case INT8OID:
		case FLOAT8OID:
			return 8;
		default:
			return 0;
	}
}

/* d's send form, w (its type's width) bytes, written at p. */
static inline void
xxl_shard_fixed_send(char *p, Datum d, int w)
{
	switch (w)
	{
		case 8:
			{
				uint64		v = pg_hton64((uint64) DatumGetInt64(d));

				memcpy(p, &v, 8);
				break;
			}
		case 4:
			{
				uint32		v = pg_hton32((uint32) DatumGetInt32(d));

				memcpy(p, &v, 4);
				break;
			}
		case 2:
			{
				uint16		v = pg_hton16((uint16) DatumGetInt16(d));

				memcpy(p, &v, 2);
				break;
			}
		default:
			*p = DatumGetBool(d) ? 1 : 0;
	}
}

/* The value whose send form, w bytes, is at p (what the receive function gives). */
static inline Datum
xxl_shard_fixed_recv(const char *p, int w)
{
	switch (w)
	{
		case 8:
			{
				uint64		v;

				memcpy(&v, p, 8);
				return Int64GetDatum((int64) pg_ntoh64(v));
			}
		case 4:
			{
				uint32		v;

				memcpy(&v, p, 4);
				return Int32GetDatum((int32) pg_ntoh32(v));
			}
		case 2:
			{
				uint16		v;

				memcpy(&v, p, 2);
				return Int16GetDatum((int16) pg_ntoh16(v));
			}
		default:
			return BoolGetDatum(*p != 0);
	}
}

#endif							/* XXL_PG_SHARD_FIXED_H */
