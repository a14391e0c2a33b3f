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

#endif							/* XXL_PG_SHARD_FIXED_H */
