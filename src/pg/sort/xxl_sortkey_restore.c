/*
 * xxl_sortkey_restore.c — values restored from the bytes of normalized
 * sort keys (xxl_sortkey.h), the way back of xxl_sortkey.c's encodings:
 * fixed-width columns from fixed-size keys, and text, bytea and name
 * columns from variable keys, so a sort whose rows are all key hands them
 * out without a copy of the row.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "port/pg_bswap.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/timestamp.h"

#include "pg/sort/xxl_sortkey_internal.h"

/*
 * Fixed-width kinds whose value the key holds losslessly (floats fold -0 and
 * NaNs; a uuid would need memory of its own).
 */
static bool
restores_fixed(KeyKind kind)
{
	switch (kind)
	{
		case KEY_INT2:
		case KEY_INT4:
		case KEY_INT8:
		case KEY_UINT4:
		case KEY_CHAR:
		case KEY_BOOL:
			return true;
		default:
			return false;
	}
}

int
xxl_sortkey_restorable_column(const XxlSortKey *key, AttrNumber attno)
{
	if (key->fixed_size == 0)
		return -1;
	for (int i = 0; i < key->ncols; i++)
	{
		const KeyColumn *col = &key->cols[i];

		if (col->attno == attno)
			return restores_fixed(col->kind) ? i : -1;
	}
	return -1;
}

/* A fixed-width value of col from its key bytes at p (null flag excluded). */
static Datum
restore_fixed_value(const KeyColumn *col, const unsigned char *p)
{
	/* DESC inverted every value byte: invert them back */
	uint64		flip = col->desc ? ~UINT64CONST(0) : 0;

	switch (col->kind)
	{
		case KEY_INT8:
			{
				uint64		v;

				memcpy(&v, p, 8);
				return Int64GetDatum((int64) ((pg_ntoh64(v) ^ flip) ^ UINT64CONST(0x8000000000000000)));
			}
		case KEY_INT4:
			{
				uint32		v;

				memcpy(&v, p, 4);
				return Int32GetDatum((int32) ((pg_ntoh32(v) ^ (uint32) flip) ^ 0x80000000u));
			}
		case KEY_UINT4:
			{
				uint32		v;

				memcpy(&v, p, 4);
				return ObjectIdGetDatum((Oid) (pg_ntoh32(v) ^ (uint32) flip));
			}
		case KEY_INT2:
			{
				uint16		v;

				memcpy(&v, p, 2);
				return Int16GetDatum((int16) ((pg_ntoh16(v) ^ (uint16) flip) ^ 0x8000));
			}
		case KEY_CHAR:
			return CharGetDatum((char) (*p ^ (unsigned char) flip));
		case KEY_BOOL:
			return BoolGetDatum((*p ^ (unsigned char) flip) != 0);
		default:
			elog(ERROR, "sort key kind %d cannot be restored", (int) col->kind);
	}
	return (Datum) 0;
}

Datum
xxl_sortkey_restore(const XxlSortKey *key, int column, const unsigned char *keybytes,
					bool *isnull)
{
	const KeyColumn *col = &key->cols[column];

	*isnull = keybytes[col->fixed_offset] == (col->nulls_first ? 0x00 : 0x01);
	if (*isnull)
		return (Datum) 0;
	return restore_fixed_value(col, keybytes + col->fixed_offset + 1);
}

/* Variable-size keys ------------------------------------------------------- */

bool
xxl_sortkey_var_restorable(const XxlSortKey *key, int column)
{
	switch (key->cols[column].kind)
	{
		case KEY_TEXT:
		case KEY_BYTEA:
		case KEY_NAME:
			return true;
		default:
			/* numerics lose their scale, char(n) its blanks */
			return restores_fixed(key->cols[column].kind);
	}
}

/*
 * Walk one escaped string (put_escaped) from k[*pos], DESC-inverted when inv
 * is 0xFF; its bytes go to out when out is not NULL.
 */
static void
walk_escaped(const unsigned char *k, uint32 klen, uint32 *pos, unsigned char inv, StringInfo out)
{
	uint32		p = *pos;

	while (p < klen)
	{
		if ((k[p] ^ inv) != 0)
		{
			/* a stretch up to the next escape byte (0x00, inverted: inv) */
			const unsigned char *esc = memchr(k + p, inv, klen - p);
			uint32		run = (esc ? (uint32) (esc - k) : klen) - p;

			if (out != NULL && inv == 0)
				appendBinaryStringInfoNT(out, (const char *) k + p, run);
			else if (out != NULL)
			{
				enlargeStringInfo(out, run);
				for (uint32 i = 0; i < run; i++)
					out->data[out->len + i] = (char) (k[p + i] ^ inv);
				out->len += run;
			}
			p += run;
			continue;
		}
		/* 0x00 0x00: the end; 0x00 0xFF: a zero byte */
		if (p + 1 >= klen || (k[p + 1] ^ inv) == 0x00)
		{
			p += 2;
			break;
		}
		if (out != NULL)
			appendStringInfoChar(out, '\0');
		p += 2;
	}
	*pos = p;
}

/*
 * Where a restored value starts in buf (MAXALIGNed: a varlena, or a
 * NameData), noted for the pointer set once buf stops moving; a varlena's
 * header comes first.
 */
static int
begin_value(StringInfo buf, int *offsets, int *targets, int *nrestored, int target,
			const KeyColumn *col)
{
	int			start;

	while (buf->len % MAXIMUM_ALIGNOF != 0)
		appendStringInfoChar(buf, '\0');
	start = buf->len;
	offsets[*nrestored] = start;
	targets[(*nrestored)++] = target;
	if (col->kind != KEY_NAME)
		appendBinaryStringInfo(buf, "\0\0\0\0", VARHDRSZ);
	return start;
}

/* The value begun at start is complete: its varlena size, or a NameData's padding. */
static void
end_value(StringInfo buf, const KeyColumn *col, int start)
{
	if (col->kind == KEY_NAME)
	{
		enlargeStringInfo(buf, NAMEDATALEN);
		memset(buf->data + buf->len, 0, NAMEDATALEN - (buf->len - start));
		buf->len = start + NAMEDATALEN;
	}
	else
		SET_VARSIZE(buf->data + start, buf->len - start);
}

/* A compared column's string, as it is in the key. */
static void
restore_string(StringInfo buf, const KeyColumn *col, const char *s, uint32 len,
			   int *offsets, int *targets, int *nrestored, int target)
{
	int			start = begin_value(buf, offsets, targets, nrestored, target, col);

	appendBinaryStringInfoNT(buf, s, len);
	end_value(buf, col, start);
}

/*
 * Walk one non-NULL value of col in its byte encoding from k[*pos]; when
 * target is not -1 (a column xxl_sortkey_var_restorable allows), restore
 * it into values[target] or, by reference, into buf.
 */
static void
walk_value(const KeyColumn *col, const unsigned char *k, uint32 klen, uint32 *pos, int target,
		   Datum *values, StringInfo buf, int *offsets, int *targets, int *nrestored)
{
	unsigned char inv = col->desc ? 0xFF : 0x00;
	int			start;

	if (col->fixed_width > 0)
	{
		if (target >= 0)
			values[target] = restore_fixed_value(col, k + *pos);
		*pos += col->fixed_width;
		return;
	}
	if (col->kind == KEY_NUMERIC)
	{
		unsigned char class = k[(*pos)++] ^ inv;
		unsigned char digits_inv = inv ^ (class == NUMCLASS_NEG ? 0xFF : 0x00);

		if (class != NUMCLASS_NEG && class != NUMCLASS_POS)
			return;
		*pos += 2;				/* the weight */
		while (*pos + 1 < klen && ((k[*pos] ^ digits_inv) | (k[*pos + 1] ^ digits_inv)) != 0)
			*pos += 2;
		*pos += 2;				/* the terminator */
		return;
	}
	/* text-like: an ICU sort key (ending in its only 0x00), then the bytes */
	if (col->locale != NULL)
	{
		while (*pos < klen && (k[*pos] ^ inv) != 0x00)
			(*pos)++;
		(*pos)++;
	}
	if (target < 0)
	{
		walk_escaped(k, klen, pos, inv, NULL);
		return;
	}
	start = begin_value(buf, offsets, targets, nrestored, target, col);
	walk_escaped(k, klen, pos, inv, buf);
	end_value(buf, col, start);
}

void
xxl_sortkey_restore_var(XxlSortKey *key, const unsigned char *k, uint32 klen,
						const int *out_column, Datum *values, bool *isnull)
{
	StringInfoData *buf = &key->restored;
	bool		columnwise = key->compare.ncols > 0;
	int		   *offsets;
	int		   *targets;
	int			nrestored = 0;
	uint32		pos = 0;

	if (buf->data == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(key->cxt);

		initStringInfo(buf);
		key->restored_at = palloc(sizeof(int) * 2 * Max(key->ncols, 1));
		MemoryContextSwitchTo(old);
	}
	offsets = key->restored_at;
	targets = key->restored_at + key->ncols;
	resetStringInfo(buf);
	for (int c = 0; c < key->ncols && pos < klen; c++)
	{
		const KeyColumn *col = &key->cols[c];
		int			target = out_column[c];
		bool		null = k[pos++] == (col->nulls_first ? 0x00 : 0x01);

		if (target >= 0)
			isnull[target] = null;
		if (columnwise)
		{
			/* xxl_keycmp.h's form: the value's length, then its bytes */
			uint32		vlen;
			uint32		vend;

			if (klen - pos < 4)
				break;
			memcpy(&vlen, k + pos, 4);
			pos += 4;
			vend = pos + Min(pg_ntoh32(vlen), klen - pos);
			/* a compared column: its prefix, the string, a NUL */
			if (!null && target >= 0 && col->compared && vend > pos + col->prefix)
				restore_string(buf, col, (const char *) k + pos + col->prefix,
							   vend - pos - col->prefix - 1, offsets, targets, &nrestored, target);
			else if (!null && target >= 0 && !col->compared)
				walk_value(col, k, vend, &pos, target, values, buf, offsets, targets, &nrestored);
			pos = vend;
			continue;
		}
		if (!null)
			walk_value(col, k, klen, &pos, target, values, buf, offsets, targets, &nrestored);
	}
	/* pointers once buf has stopped moving */
	for (int i = 0; i < nrestored; i++)
		values[targets[i]] = PointerGetDatum(buf->data + offsets[i]);
}
