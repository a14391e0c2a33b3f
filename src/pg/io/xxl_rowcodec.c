/*
 * xxl_rowcodec.c — the shapes and encodings of rows as the engines carry
 * them (see xxl_rowcodec.h): descriptors without dropped columns, column
 * maps between two descriptors, and the compact row form.
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "pg/io/xxl_rowcodec.h"

/* Descriptors ----------------------------------------------------------- */

TupleDesc
xxl_visible_desc(TupleDesc in)
{
	int			n = 0;
	TupleDesc	out;

	for (int i = 0; i < in->natts; i++)
		if (!TupleDescAttr(in, i)->attisdropped)
			n++;
	out = CreateTemplateTupleDesc(n);
	n = 0;
	for (int i = 0; i < in->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(in, i);

		if (att->attisdropped)
			continue;
		TupleDescCopyEntry(out, ++n, in, i + 1);
	}
	return out;
}

AttrNumber *
xxl_map_columns(TupleDesc in, TupleDesc out, const char *context)
{
	AttrNumber *map = palloc0(sizeof(AttrNumber) * Max(out->natts, 1));
	int			nin = 0,
				nout = 0;
	bool		identity = (in->natts == out->natts);
	int			j = 0;

	for (int i = 0; i < in->natts; i++)
		if (!TupleDescAttr(in, i)->attisdropped)
			nin++;
	for (int i = 0; i < out->natts; i++)
		if (!TupleDescAttr(out, i)->attisdropped)
			nout++;
	if (nin != nout)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the source has %d columns but %s has %d", nin, context, nout)));

	for (int i = 0; i < out->natts; i++)
	{
		Form_pg_attribute oatt = TupleDescAttr(out, i);
		Form_pg_attribute iatt;

		if (oatt->attisdropped)
		{
			identity = false;
			continue;
		}
		while (TupleDescAttr(in, j)->attisdropped)
			j++;
		iatt = TupleDescAttr(in, j);
		if (iatt->atttypid != oatt->atttypid &&
			!IsBinaryCoercible(iatt->atttypid, oatt->atttypid))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of the source (\"%s\") has type %s but %s says %s",
							nout > 0 ? i + 1 : 0, NameStr(iatt->attname),
							format_type_be(iatt->atttypid), context,
							format_type_be(oatt->atttypid))));
		map[i] = j + 1;
		if (j != i)
			identity = false;
		j++;
	}
	for (int i = 0; i < in->natts; i++)
		if (TupleDescAttr(in, i)->attisdropped)
			identity = false;
	if (identity)
	{
		pfree(map);
		return NULL;
	}
	return map;
}


/* Compact rows -------------------------------------------------------------- */

const char *
xxl_compact_form(StringInfo buf, TupleDesc desc, const Datum *values, const bool *isnull,
				 uint32 *len)
{
	int			natts = desc->natts;
	bool		hasnull = false;
	Datum	   *vals = (Datum *) values;
	Size		hoff,
				data_len,
				total;
	MinimalTuple tup;

	for (int i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (isnull[i])
		{
			hasnull = true;
			continue;
		}
		/* the row must not point into anyone's TOAST table */
		if (att->attlen == -1 && VARATT_IS_EXTERNAL(DatumGetPointer(vals[i])))
		{
			if (vals == values)
			{
				vals = palloc(sizeof(Datum) * natts);
				memcpy(vals, values, sizeof(Datum) * natts);
			}
			vals[i] = PointerGetDatum(detoast_external_attr((struct varlena *) DatumGetPointer(vals[i])));
		}
	}

	/* heap_form_minimal_tuple, into a reused buffer */
	hoff = SizeofMinimalTupleHeader;
	if (hasnull)
		hoff += BITMAPLEN(natts);
	hoff = MAXALIGN(hoff);
	data_len = heap_compute_data_size(desc, vals, (bool *) isnull);
	total = hoff + data_len;

	resetStringInfo(buf);
	enlargeStringInfo(buf, total);
	memset(buf->data, 0, total);
	tup = (MinimalTuple) buf->data;
	tup->t_len = total;
	HeapTupleHeaderSetNatts(tup, natts);
	tup->t_hoff = hoff + MINIMAL_TUPLE_OFFSET;
	heap_fill_tuple(desc, vals, (bool *) isnull, buf->data + hoff, data_len,
					&tup->t_infomask, hasnull ? tup->t_bits : NULL);
	buf->len = total;

	*len = total - MINIMAL_TUPLE_DATA_OFFSET;
	return buf->data + MINIMAL_TUPLE_DATA_OFFSET;
}

const char *
xxl_compact_from_heap(HeapTuple tuple, TupleDesc desc, uint32 *len)
{
	if (HeapTupleHeaderGetNatts(tuple->t_data) != desc->natts || HeapTupleHasExternal(tuple))
		return NULL;
	*len = tuple->t_len - XXL_COMPACT_SKIP;
	return (const char *) tuple->t_data + XXL_COMPACT_SKIP;
}

/* Integer values -------------------------------------------------------------- */

bool
xxl_is_int_type(Oid type)
{
	return type == INT2OID || type == INT4OID || type == INT8OID;
}

int64
xxl_int_datum(Datum d, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

double
xxl_float_datum(Datum d, Oid type, MemoryContext scratch, bool *overflow)
{
	*overflow = false;
	switch (type)
	{
		case FLOAT8OID:
			return DatumGetFloat8(d);
		case FLOAT4OID:
			return (double) DatumGetFloat4(d);
		case NUMERICOID:
			{
				MemoryContext old = MemoryContextSwitchTo(scratch);
				Numeric		num = DatumGetNumeric(d);
				double		v = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
																  NumericGetDatum(num)));

				*overflow = isinf(v) && !numeric_is_inf(num);
				MemoryContextSwitchTo(old);
				MemoryContextReset(scratch);
				return v;
			}
		default:
			return (double) xxl_int_datum(d, type);
	}
}

bool
xxl_heap_fixed_offsets(TupleDesc desc, int natts, int *off)
{
	int			at = 0;

	for (int i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attlen <= 0)
			return false;
		at = att_align_nominal(at, att->attalign);
		off[i] = at;
		at += att->attlen;
	}
	return true;
}
