/*
 * xxl_packed_row.c — how rows are packed without a header
 * (xxl_packed_row.h).
 *
 * Why not heap tuples: a heap row carries 23 bytes of header and a 4-byte
 * line pointer, more than the 16 bytes of a (bigint, bigint) row.  Rows
 * here are never updated in place, so they need no header: a null bitmap
 * and the values, unaligned (a (bigint, bigint) row is 17 bytes, 480 to an
 * xxl table's page against the heap's 185).
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "access/toast_compression.h"
#include "access/toast_internals.h"
#include "catalog/pg_type.h"
#include "access/tupmacs.h"
#include "lib/stringinfo.h"
#include "utils/expandeddatum.h"

#include "pg/io/xxl_packed_row.h"

void
xxl_row_format_init(XxlRowFormat *fmt, TupleDesc desc, int natts)
{
	int			width;
	bool		fixed = true;

	fmt->desc = desc;
	fmt->natts = natts;
	fmt->bitmap_bytes = (natts + 7) / 8;
	fmt->byval = natts == desc->natts && natts <= XXL_BYVAL_MAX_COLS;
	fmt->may_alloc = false;
	width = fmt->bitmap_bytes;
	for (int i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attlen > 0)
			width += att->attlen;
		else
			fixed = false;
		if (att->attisdropped || !att->attbyval)
			fmt->byval = false;
		else if (i < XXL_BYVAL_MAX_COLS)
			fmt->lens[i] = (uint8) att->attlen;
		if (!att->attbyval && !att->attisdropped && att->attlen != -2)
			fmt->may_alloc = true;
	}
	fmt->row_width = fixed ? Max(width, 1) : 0;
	fmt->all8 = fmt->byval;
	for (int i = 0; i < natts && fmt->byval; i++)
		fmt->all8 &= fmt->lens[i] == sizeof(Datum);
}

/*
 * A large value as heap stores it: compressed when the column allows
 * (EXTENDED, MAIN), and moved to the table's TOAST table when it is still
 * large and the column allows that (EXTENDED, EXTERNAL).
 */
static struct varlena *
toast_value(Relation rel, Form_pg_attribute att, struct varlena *v)
{
	char		storage = att->attstorage;

	if (storage == TYPSTORAGE_PLAIN)
		return v;
	if ((storage == TYPSTORAGE_EXTENDED || storage == TYPSTORAGE_MAIN) && !VARATT_IS_COMPRESSED(v))
	{
		char		cmethod = CompressionMethodIsValid(att->attcompression) ?
			att->attcompression : default_toast_compression;
		Datum		c = toast_compress_datum(PointerGetDatum(v), cmethod);

		if (DatumGetPointer(c) != NULL)
			v = (struct varlena *) DatumGetPointer(c);
	}
	if (VARSIZE_ANY(v) > XXL_TOAST_VALUE && storage != TYPSTORAGE_MAIN &&
		OidIsValid(rel->rd_rel->reltoastrelid))
		v = (struct varlena *) DatumGetPointer(toast_save_datum(rel, PointerGetDatum(v), NULL, 0));
	return v;
}

uint32
xxl_row_pack(const XxlRowFormat *fmt, const Datum *values, const bool *isnull, StringInfo buf,
			 Relation toast_rel)
{
	TupleDesc	desc = fmt->desc;
	int			bits_at;

	resetStringInfo(buf);
	/*
	 * Rows of by-value columns without a NULL (a fact or edge row): the
	 * values one after another, with no append per column (COPY into an
	 * xxl table spent a tenth of its main thread here)
	 */
	if (fmt->byval)
	{
		bool		any_null = false;

		for (int i = 0; i < fmt->natts; i++)
			any_null |= isnull[i];
		if (!any_null)
		{
			char	   *p;

			enlargeStringInfo(buf, fmt->row_width);
			p = buf->data;
			memset(p, 0, fmt->bitmap_bytes);
			p += fmt->bitmap_bytes;
			for (int i = 0; i < fmt->natts; i++)
			{
				xxl_store_byval(p, values[i], fmt->lens[i]);
				p += fmt->lens[i];
			}
			buf->len = (int) (p - buf->data);
			buf->data[buf->len] = '\0';
			return (uint32) buf->len;
		}
	}
	bits_at = buf->len;
	appendStringInfoSpaces(buf, fmt->bitmap_bytes);
	memset(buf->data + bits_at, 0, fmt->bitmap_bytes);
	for (int i = 0; i < fmt->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped || isnull[i])
		{
			buf->data[bits_at + i / 8] |= (char) (1 << (i % 8));
			if (fmt->row_width > 0)
			{
				int			at = buf->len;

				appendStringInfoSpaces(buf, att->attlen);
				memset(buf->data + at, 0, att->attlen);
			}
			continue;
		}
		if (att->attlen > 0 && att->attbyval)
		{
			char		v[sizeof(Datum)];

			xxl_store_byval(v, values[i], att->attlen);
			appendBinaryStringInfo(buf, v, att->attlen);
		}
		else if (att->attlen > 0)
			appendBinaryStringInfo(buf, DatumGetPointer(values[i]), att->attlen);
		else if (att->attlen == -1)
		{
			struct varlena *v = (struct varlena *) DatumGetPointer(values[i]);

			/*
			 * Toasted elsewhere or expanded: fetched, then toasted here if
			 * large.  Without a table to toast into (rows repacked for a
			 * sort of this table's own rows), a TOAST pointer stays one.
			 */
			if (VARATT_IS_EXTERNAL(v) && !(toast_rel == NULL && VARATT_IS_EXTERNAL_ONDISK(v)))
				v = detoast_external_attr(v);
			if (toast_rel != NULL && VARSIZE_ANY(v) > XXL_TOAST_VALUE)
				v = toast_value(toast_rel, att, v);
			if (VARATT_IS_EXTERNAL(v))
				appendBinaryStringInfo(buf, (const char *) v, VARSIZE_EXTERNAL(v));
			else if (VARATT_IS_SHORT(v))
				appendBinaryStringInfo(buf, (const char *) v, VARSIZE_SHORT(v));
			else if (!VARATT_IS_COMPRESSED(v) && VARATT_CAN_MAKE_SHORT(v))
			{
				char		hdr;
				Size		size = VARATT_CONVERTED_SHORT_SIZE(v);

				SET_VARSIZE_1B(&hdr, size);
				appendBinaryStringInfo(buf, &hdr, 1);
				appendBinaryStringInfo(buf, VARDATA(v), size - 1);
			}
			else
				appendBinaryStringInfo(buf, (const char *) v, VARSIZE(v));
		}
		else
			appendBinaryStringInfo(buf, DatumGetCString(values[i]),
								   strlen(DatumGetCString(values[i])) + 1);
	}
	return (uint32) buf->len;
}

void
xxl_row_unpack(const XxlRowFormat *fmt, const char *row, Datum *values, bool *isnull)
{
	TupleDesc	desc = fmt->desc;
	const char *p = row + fmt->bitmap_bytes;

	if (fmt->byval)
	{
		xxl_row_unpack_byval(fmt, row, values, isnull);
		return;
	}

	for (int i = 0; i < fmt->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (row[i / 8] & (1 << (i % 8)))
		{
			values[i] = (Datum) 0;
			isnull[i] = true;
			if (fmt->row_width > 0)
				p += att->attlen;
			continue;
		}
		if (att->attisdropped)
		{
			/* written before the drop: step over its value */
			values[i] = (Datum) 0;
			isnull[i] = true;
			p += att->attlen > 0 ? att->attlen : att->attlen == -1 ? VARSIZE_ANY(p) : strlen(p) + 1;
			continue;
		}
		isnull[i] = false;
		if (att->attlen > 0 && att->attbyval)
		{
			values[i] = xxl_fetch_byval(p, att->attlen);
			p += att->attlen;
		}
		else if (att->attlen > 0)
		{
			char	   *copy = palloc(att->attlen);

			memcpy(copy, p, att->attlen);
			values[i] = PointerGetDatum(copy);
			p += att->attlen;
		}
		else if (att->attlen == -1)
		{
			Size		size = VARSIZE_ANY(p);

			if (VARATT_IS_1B(p) || ((uintptr_t) p % ALIGNOF_INT) == 0)
				values[i] = PointerGetDatum(p);
			else
			{
				char	   *copy = palloc(size);

				memcpy(copy, p, size);
				values[i] = PointerGetDatum(copy);
			}
			p += size;
		}
		else
		{
			values[i] = CStringGetDatum(p);
			p += strlen(p) + 1;
		}
	}
	/* columns added after the row was written */
	for (int i = fmt->natts; i < desc->natts; i++)
		values[i] = getmissingattr(desc, i + 1, &isnull[i]);
}
