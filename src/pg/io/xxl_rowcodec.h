/*
 * xxl_rowcodec.h — rows as the engines carry them, shared by the input
 * side (sort runs encode rows) and the output side (sinks restore them).
 *
 * Rows travel through engines in "compact" form: a MinimalTuple without its
 * leading length word and padding, i.e. its bytes from
 * MINIMAL_TUPLE_DATA_OFFSET on (equally a heap tuple's bytes from
 * t_infomask2 on).  It needs no alignment; a sink restores the header.
 */
#ifndef XXL_PG_ROWCODEC_H
#define XXL_PG_ROWCODEC_H

#include "access/htup.h"
#include "access/htup_details.h"
#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"

/* Bytes of a heap tuple header that compact rows leave out. */
#define XXL_COMPACT_SKIP offsetof(HeapTupleHeaderData, t_infomask2)

/* in's columns without its dropped ones (what a new table gets). */
extern TupleDesc xxl_visible_desc(TupleDesc in);

/*
 * Map rows of descriptor in onto descriptor out by position over non-dropped
 * columns: result[i] is the attno in "in" for out column i, 0 for a dropped
 * out column.  NULL when rows of in can be used as rows of out unchanged.
 * ERRCODE_DATATYPE_MISMATCH if counts or types differ; context names the
 * two sides in the message.
 */
extern AttrNumber *xxl_map_columns(TupleDesc in, TupleDesc out, const char *context);

/*
 * Form the compact row of values/isnull under desc in buf (its old contents
 * are dropped) and return it.  Out-of-line TOAST pointers and expanded
 * values are fetched and flattened so the row stands alone; inline
 * compressed values stay compressed.  Detoasted copies go into
 * CurrentMemoryContext.
 */
extern const char *xxl_compact_form(StringInfo buf, TupleDesc desc, const Datum *values,
									const bool *isnull, uint32 *len);

/*
 * The compact form of a heap tuple whose bytes can be taken as they are
 * (same number of attributes as desc, nothing stored out of line), else
 * NULL.
 */
extern const char *xxl_compact_from_heap(HeapTuple tuple, TupleDesc desc, uint32 *len);

/*
 * A by-value datum of len (1, 2, 4 or 8) bytes stored into, or fetched
 * from, memory of any alignment: how rows that drop alignment padding
 * carry fixed-width values.
 */
static inline void
xxl_store_byval(void *dst, Datum d, int len)
{
	switch (len)
	{
		case 1:
			*(char *) dst = DatumGetChar(d);
			break;
		case 2:
			{
				int16		v = DatumGetInt16(d);

				memcpy(dst, &v, 2);
				break;
			}
		case 4:
			{
				int32		v = DatumGetInt32(d);

				memcpy(dst, &v, 4);
				break;
			}
		default:
			memcpy(dst, &d, sizeof(Datum));
			break;
	}
}

static inline Datum
xxl_fetch_byval(const void *src, int len)
{
	switch (len)
	{
		case 1:
			return CharGetDatum(*(const char *) src);
		case 2:
			{
				int16		v;

				memcpy(&v, src, 2);
				return Int16GetDatum(v);
			}
		case 4:
			{
				int32		v;

				memcpy(&v, src, 4);
				return Int32GetDatum(v);
			}
		default:
			{
				Datum		v;

				memcpy(&v, src, sizeof(Datum));
				return v;
			}
	}
}

/*
 * Heap tuples without NULLs have the columns before a varlena at fixed
 * offsets (the descriptor's alignment, as heap_deform_tuple walks them):
 * when columns 0..natts-1 all have a fixed width, their offsets from the
 * tuple's data go to off[] (natts of them) and the answer is true.
 */
extern bool xxl_heap_fixed_offsets(TupleDesc desc, int natts, int *off);

/* A smallint, integer or bigint of len bytes at p (in place, unaligned). */
static inline int64
xxl_int_at(const char *p, int len)
{
	int64		v64;
	int32		v32;
	int16		v16;

	switch (len)
	{
		case 2:
			memcpy(&v16, p, 2);
			return v16;
		case 4:
			memcpy(&v32, p, 4);
			return v32;
		default:
			memcpy(&v64, p, 8);
			return v64;
	}
}

/* A real or double precision (else an integer of len bytes) at p, as double. */
static inline double
xxl_float_at(const char *p, Oid type, int len)
{
	double		d;
	float		f;

	if (type == FLOAT8OID)
	{
		memcpy(&d, p, sizeof(double));
		return d;
	}
	if (type == FLOAT4OID)
	{
		memcpy(&f, p, sizeof(float));
		return f;
	}
	return (double) xxl_int_at(p, len);
}

/* smallint, integer or bigint */
extern bool xxl_is_int_type(Oid type);
/* A value of one of those types as int64. */
extern int64 xxl_int_datum(Datum d, Oid type);
/*
 * A value of those types, real, double precision or numeric as double
 * precision; a numeric is converted in scratch (reset after), and one
 * beyond double's range sets *overflow (the value is then infinite).
 */
extern double xxl_float_datum(Datum d, Oid type, MemoryContext scratch, bool *overflow);

#endif							/* XXL_PG_ROWCODEC_H */
