/*
 * xxl_sortkey.c — normalized sort keys: values encoded so that their
 * bytes compare as PostgreSQL orders them (see xxl_sortkey.h for the key
 * layout), fixed-size keys, and values restored from key bytes.
 * Which columns and collations a key has: xxl_order_by.c.
 *
 * Value encodings, each prefix-free and ordered as PostgreSQL's btree
 * comparison functions order the type:
 *  - integers, date, time, timestamp(tz), money: big-endian, sign bit
 *    flipped; oid and "char" unsigned big-endian; boolean one byte;
 *  - real/double precision: the IEEE bits, sign-flipped for positives and
 *    inverted for negatives; -0 becomes +0 and every NaN one value above
 *    +Infinity, as float8_cmp_internal() orders them;
 *  - numeric: a class byte (-Inf, negative, zero, positive, +Inf, NaN), then
 *    for finite values the base-10000 weight and digits (each digit + 1, so
 *    that the 0x0000 terminator sorts below any further digit), all bytes
 *    inverted for negatives;
 *  - uuid: its 16 bytes (uuid_cmp is memcmp);
 *  - text, varchar, char(n) (trailing blanks dropped, as bpcharcmp does),
 *    name, bytea: the bytes with 0x00 escaped as 0x00 0xFF and a 0x00 0x00
 *    terminator; in an ICU collation in a database not in UTF-8 the
 *    collator's sort key (designed to compare as ucol_strcoll() does,
 *    ending in its one 0x00) comes first, and the raw bytes break ties as
 *    varstr_cmp() does with strcmp().
 *  - text-like values in a libc collation other than C have no byte image:
 *    glibc's strxfrm() does not always order as its strcoll(), which
 *    PostgreSQL compares with.  A key with such a column is written in the
 *    engine's column-wise form (xxl_keycmp.h), the string as it is plus a
 *    NUL, and the engine compares it with strcoll_l() and strcmp().  So is
 *    a value in an ICU collation in a UTF-8 database, after the first
 *    XXL_ICU_PREFIX bytes of its sort key: the engine compares prefixes,
 *    and only where they tie calls ucol_strcollUTF8(), as PostgreSQL's
 *    abbreviated keys do.
 * Nondeterministic collations are refused.
 */
#include "postgres.h"

#include <locale.h>
#include <string.h>

#ifdef USE_ICU
#include <unicode/ucol.h>
#include <unicode/uiter.h>
#include <unicode/ustring.h>
#endif

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "port/pg_bswap.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/pg_locale.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"
#include "catalog/namespace.h"

#include "pg/sort/xxl_sortkey_internal.h"

/* Encoding --------------------------------------------------------------- */

static inline void
reserve(XxlSortKey *key, size_t more)
{
	if (key->len + more > key->cap)
	{
		size_t		cap = key->cap * 2;

		while (cap < key->len + more)
			cap *= 2;
		key->buf = repalloc_huge(key->buf, cap);
		key->cap = cap;
	}
}

static inline void
put_byte(XxlSortKey *key, unsigned char b)
{
	reserve(key, 1);
	key->buf[key->len++] = b;
}

static inline void
put_be16(XxlSortKey *key, uint16 v)
{
	reserve(key, 2);
	key->buf[key->len++] = (unsigned char) (v >> 8);
	key->buf[key->len++] = (unsigned char) v;
}

static inline void
put_be32(XxlSortKey *key, uint32 v)
{
	v = pg_hton32(v);
	reserve(key, 4);
	memcpy(key->buf + key->len, &v, 4);
	key->len += 4;
}

static inline void
put_be64(XxlSortKey *key, uint64 v)
{
	v = pg_hton64(v);
	reserve(key, 8);
	memcpy(key->buf + key->len, &v, 8);
	key->len += 8;
}

/* Bytes with 0x00 escaped as 0x00 0xFF, then the 0x00 0x00 terminator. */
static void
put_escaped(XxlSortKey *key, const char *data, size_t len)
{
	const char *end = data + len;

	while (data < end)
	{
		const char *zero = memchr(data, 0, end - data);
		size_t		chunk = (zero ? zero : end) - data;

		reserve(key, chunk + 2);
		memcpy(key->buf + key->len, data, chunk);
		key->len += chunk;
		data += chunk;
		if (zero)
		{
			key->buf[key->len++] = 0x00;
			key->buf[key->len++] = 0xFF;
			data++;
		}
	}
	put_be16(key, 0);
}

#ifdef USE_ICU
/* The ICU collator's sort key, with its terminating 0x00. */
static void
put_icu_sortkey(XxlSortKey *key, const KeyColumn *col, const char *data, size_t len)
{
	UChar	   *uchar;
	int32_t		ulen;
	int32_t		need;

	if (GetDatabaseEncoding() == PG_UTF8 && len < PG_INT32_MAX / 2)
	{
		/* straight from UTF-8 into a buffer kept across rows */
		UErrorCode	status = U_ZERO_ERROR;

		if (key->ubuf_cap < len + 1)
		{
			key->ubuf_cap = Max(len + 1, key->ubuf_cap * 2);
			/* with the key, not in the per-row context the caller resets */
			key->ubuf = key->ubuf ? repalloc_huge(key->ubuf, key->ubuf_cap * sizeof(UChar))
				: MemoryContextAllocHuge(key->cxt, key->ubuf_cap * sizeof(UChar));
		}
		uchar = key->ubuf;
		u_strFromUTF8(uchar, (int32_t) key->ubuf_cap, &ulen, data, (int32_t) len, &status);
		if (U_FAILURE(status))
			ereport(ERROR,
					(errmsg("could not convert a string to UTF-16: %s", u_errorName(status))));
	}
	else
		ulen = icu_to_uchar(&uchar, data, len);

	reserve(key, (size_t) ulen * 2 + 16);
	for (;;)
	{
		size_t		avail = Min(key->cap - key->len, (size_t) PG_INT32_MAX);

		need = ucol_getSortKey(col->locale->info.icu.ucol, uchar, ulen,
							   key->buf + key->len, (int32_t) avail);
		if (need <= 0)
			elog(ERROR, "ucol_getSortKey failed");
		if ((size_t) need <= avail)
			break;
		reserve(key, (size_t) need);
	}
	key->len += need;
	if (uchar != key->ubuf)
		pfree(uchar);
}

/*
 * The first XXL_ICU_PREFIX bytes of the ICU collator's sort key for a UTF-8
 * string, zero padded (a sort key has no other 0x00): prefixes that differ
 * order as the strings do.
 */
static void
put_icu_prefix(XxlSortKey *key, const KeyColumn *col, const char *data, size_t len)
{
	UCharIterator iter;
	uint32_t	state[2] = {0, 0};
	UErrorCode	status = U_ZERO_ERROR;
	int32_t		got;

	reserve(key, XXL_ICU_PREFIX);
	uiter_setUTF8(&iter, data, (int32_t) len);
	got = ucol_nextSortKeyPart(col->locale->info.icu.ucol, &iter, state,
							   key->buf + key->len, XXL_ICU_PREFIX, &status);
	if (U_FAILURE(status))
		ereport(ERROR,
				(errmsg("sort key generation failed: %s", u_errorName(status))));
	memset(key->buf + key->len + got, 0, XXL_ICU_PREFIX - got);
	key->len += XXL_ICU_PREFIX;
}

/*
 * Runs on the engine's threads: ICU only, nothing of the host.  Valid UTF-8
 * (what the database holds) does not fail; were it to, bytes decide rather
 * than an error no thread may raise.
 */
int
xxl_collate_icu_utf8(const void *collator, const char *a, const char *b)
{
	UErrorCode	status = U_ZERO_ERROR;
	UCollationResult r = ucol_strcollUTF8((const UCollator *) collator, a, -1, b, -1, &status);

	if (U_FAILURE(status))
		return strcmp(a, b);
	return (int) r;
}
#endif

static void
put_string(XxlSortKey *key, const KeyColumn *col, const char *data, size_t len)
{
	if (col->compared)
	{
		/* compared by the engine: a prefix, the string itself, a NUL */
#ifdef USE_ICU
		if (col->prefix > 0)
			put_icu_prefix(key, col, data, len);
#endif
		reserve(key, len + 1);
		memcpy(key->buf + key->len, data, len);
		key->len += len;
		key->buf[key->len++] = 0x00;
		return;
	}
#ifdef USE_ICU
	if (col->locale != NULL)
		put_icu_sortkey(key, col, data, len);
#endif
	/* the bytes themselves: the whole key in C, the tie-breaker otherwise */
	put_escaped(key, data, len);
}

/*
 * Numeric internals, as stored on disk (utils/adt/numeric.c; the format is
 * fixed by pg_upgrade compatibility).
 */
typedef int16 NumericDigitT;
#define NUM_SIGN_MASK		0xC000
#define NUM_POS				0x0000
#define NUM_NEG				0x4000
#define NUM_SHORT			0x8000
#define NUM_SPECIAL			0xC000
#define NUM_EXT_SIGN_MASK	0xF000
#define NUM_NAN				0xC000
#define NUM_PINF			0xD000
#define NUM_NINF			0xF000
#define NUM_SHORT_SIGN_MASK			0x2000
#define NUM_SHORT_WEIGHT_SIGN_MASK	0x0040
#define NUM_SHORT_WEIGHT_MASK		0x003F

static void
put_numeric(XxlSortKey *key, Datum value)
{
	struct varlena *num = PG_DETOAST_DATUM(value);
	const unsigned char *p = (const unsigned char *) VARDATA(num);
	size_t		size = VARSIZE(num) - VARHDRSZ;
	uint16		header;
	int			weight;
	bool		negative;
	const unsigned char *digits;
	int			ndigits;
	size_t		start;

	memcpy(&header, p, sizeof(uint16));
	if ((header & NUM_SIGN_MASK) == NUM_SPECIAL)
	{
		uint16		ext = header & NUM_EXT_SIGN_MASK;

		put_byte(key, ext == NUM_NINF ? NUMCLASS_NINF : ext == NUM_PINF ? NUMCLASS_PINF : NUMCLASS_NAN);
		return;
	}
	if ((header & NUM_SIGN_MASK) == NUM_SHORT)
	{
		negative = (header & NUM_SHORT_SIGN_MASK) != 0;
		weight = (header & NUM_SHORT_WEIGHT_MASK);
		if (header & NUM_SHORT_WEIGHT_SIGN_MASK)
			weight |= ~NUM_SHORT_WEIGHT_MASK;
		digits = p + sizeof(uint16);
		ndigits = (size - sizeof(uint16)) / sizeof(NumericDigitT);
	}
	else
	{
		int16		w;

		negative = (header & NUM_SIGN_MASK) == NUM_NEG;
		memcpy(&w, p + sizeof(uint16), sizeof(int16));
		weight = w;
		digits = p + 2 * sizeof(uint16);
		ndigits = (size - 2 * sizeof(uint16)) / sizeof(NumericDigitT);
	}

	/* stored values carry no leading or trailing zero digits, but be sure */
	while (ndigits > 0)
	{
		NumericDigitT d;

		memcpy(&d, digits, sizeof(d));
		if (d != 0)
			break;
		digits += sizeof(d);
		ndigits--;
		weight--;
	}
	while (ndigits > 0)
	{
		NumericDigitT d;

		memcpy(&d, digits + (ndigits - 1) * sizeof(d), sizeof(d));
		if (d != 0)
			break;
		ndigits--;
	}
	if (ndigits == 0)
	{
		put_byte(key, NUMCLASS_ZERO);
		return;
	}

	put_byte(key, negative ? NUMCLASS_NEG : NUMCLASS_POS);
	start = key->len;
	/* weight: int16 range in the long format, sign bit flipped */
	put_be16(key, (uint16) (weight + 0x8000));
	for (int i = 0; i < ndigits; i++)
	{
		NumericDigitT d;

		memcpy(&d, digits + i * sizeof(d), sizeof(d));
		put_be16(key, (uint16) (d + 1));
	}
	put_be16(key, 0);
	/* larger magnitude, smaller negative number */
	if (negative)
		for (size_t i = start; i < key->len; i++)
			key->buf[i] = ~key->buf[i];
}

static inline uint32
float4_key(float4 f)
{
	uint32		bits;

	if (isnan(f))
		return 0xFFFFFFFFu;		/* above +Infinity's 0xFF800000 */
	if (f == 0)
		f = 0;					/* -0 equals +0 */
	memcpy(&bits, &f, 4);
	return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
}

static inline uint64
float8_key(float8 f)
{
	uint64		bits;

	if (isnan(f))
		return UINT64CONST(0xFFFFFFFFFFFFFFFF);
	if (f == 0)
		f = 0;
	memcpy(&bits, &f, 8);
	return (bits & UINT64CONST(0x8000000000000000)) ? ~bits
		: bits | UINT64CONST(0x8000000000000000);
}

static void
put_value(XxlSortKey *key, const KeyColumn *col, Datum value)
{
	switch (col->kind)
	{
		case KEY_INT2:
			put_be16(key, (uint16) DatumGetInt16(value) ^ 0x8000);
			break;
		case KEY_INT4:
			put_be32(key, (uint32) DatumGetInt32(value) ^ 0x80000000u);
			break;
		case KEY_INT8:
			put_be64(key, (uint64) DatumGetInt64(value) ^ UINT64CONST(0x8000000000000000));
			break;
		case KEY_UINT4:
			put_be32(key, DatumGetObjectId(value));
			break;
		case KEY_CHAR:
			put_byte(key, (unsigned char) DatumGetChar(value));
			break;
		case KEY_BOOL:
			put_byte(key, DatumGetBool(value) ? 1 : 0);
			break;
		case KEY_FLOAT4:
			put_be32(key, float4_key(DatumGetFloat4(value)));
			break;
		case KEY_FLOAT8:
			put_be64(key, float8_key(DatumGetFloat8(value)));
			break;
		case KEY_NUMERIC:
			put_numeric(key, value);
			break;
		case KEY_UUID:
			reserve(key, UUID_LEN);
			memcpy(key->buf + key->len, DatumGetUUIDP(value)->data, UUID_LEN);
			key->len += UUID_LEN;
			break;
		case KEY_TEXT:
		case KEY_BYTEA:
			{
				struct varlena *v = PG_DETOAST_DATUM_PACKED(value);

				put_string(key, col, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
				break;
			}
		case KEY_BPCHAR:
			{
				struct varlena *v = PG_DETOAST_DATUM_PACKED(value);
				const char *s = VARDATA_ANY(v);
				size_t		len = VARSIZE_ANY_EXHDR(v);

				/* trailing blanks are insignificant in char(n) */
				while (len > 0 && s[len - 1] == ' ')
					len--;
				put_string(key, col, s, len);
				break;
			}
		case KEY_NAME:
			{
				const char *s = NameStr(*DatumGetName(value));

				put_string(key, col, s, strnlen(s, NAMEDATALEN));
				break;
			}
	}
}

const unsigned char *
xxl_sortkey_encode(XxlSortKey *key, const Datum *values, const bool *isnull, uint32 *len)
{
	bool		columnwise = key->compare.ncols > 0;	/* xxl_keycmp.h's form */

	key->len = 0;
	for (int i = 0; i < key->ncols; i++)
	{
		const KeyColumn *col = &key->cols[i];
		int			a = col->attno - 1;
		size_t		start;

		if (isnull[a])
		{
			put_byte(key, col->nulls_first ? 0x00 : 0x01);
			if (columnwise)
				put_be32(key, 0);	/* xxl_keycmp.h: no bytes */
			continue;
		}
		put_byte(key, col->nulls_first ? 0x01 : 0x00);
		if (columnwise)
			put_be32(key, 0);	/* the length, filled in below */
		start = key->len;
		put_value(key, col, values[a]);
		/* the engine negates a compared column's result itself */
		if (col->desc && !col->compared)
			for (size_t j = start; j < key->len; j++)
				key->buf[j] = ~key->buf[j];
		if (columnwise)
		{
			uint32		vlen = pg_hton32((uint32) (key->len - start));

			memcpy(key->buf + start - 4, &vlen, 4);
		}
	}
	if (key->len > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("sort key of %zu bytes is too long", key->len)));
	*len = (uint32) key->len;
	return key->buf;
}

/* Fixed-size keys ---------------------------------------------------------- */

int
xxl_sortkey_fixed_size(const XxlSortKey *key)
{
	return key->fixed_size;
}

static inline void
store_be16(unsigned char *p, uint16 v)
{
	v = pg_hton16(v);
	memcpy(p, &v, 2);
}

static inline void
store_be32(unsigned char *p, uint32 v)
{
	v = pg_hton32(v);
	memcpy(p, &v, 4);
}

static inline void
store_be64(unsigned char *p, uint64 v)
{
	v = pg_hton64(v);
	memcpy(p, &v, 8);
}

void
xxl_sortkey_encode_fixed(const XxlSortKey *key, const Datum *values, const bool *isnull,
						 unsigned char *dst)
{
	Assert(key->fixed_size > 0);
	for (int i = 0; i < key->ncols; i++)
	{
		const KeyColumn *col = &key->cols[i];
		int			a = col->attno - 1;
		unsigned char *p = dst + col->fixed_offset + 1;
		Datum		value = values[a];

		if (isnull[a])
		{
			/* every NULL the same bytes, so NULLs tie with each other */
			dst[col->fixed_offset] = col->nulls_first ? 0x00 : 0x01;
			memset(p, 0, col->fixed_width);
			continue;
		}
		dst[col->fixed_offset] = col->nulls_first ? 0x01 : 0x00;
		switch (col->kind)
		{
			case KEY_INT2:
				store_be16(p, (uint16) DatumGetInt16(value) ^ 0x8000);
				break;
			case KEY_INT4:
				store_be32(p, (uint32) DatumGetInt32(value) ^ 0x80000000u);
				break;
			case KEY_INT8:
				store_be64(p, (uint64) DatumGetInt64(value) ^ UINT64CONST(0x8000000000000000));
				break;
			case KEY_UINT4:
				store_be32(p, DatumGetObjectId(value));
				break;
			case KEY_CHAR:
				*p = (unsigned char) DatumGetChar(value);
				break;
			case KEY_BOOL:
				*p = DatumGetBool(value) ? 1 : 0;
				break;
			case KEY_FLOAT4:
				store_be32(p, float4_key(DatumGetFloat4(value)));
				break;
			case KEY_FLOAT8:
				store_be64(p, float8_key(DatumGetFloat8(value)));
				break;
			case KEY_UUID:
				memcpy(p, DatumGetUUIDP(value)->data, UUID_LEN);
				break;
			default:
				elog(ERROR, "sort key kind %d has no fixed-size encoding", (int) col->kind);
		}
		if (col->desc)
			for (int j = 0; j < col->fixed_width; j++)
				p[j] = (unsigned char) ~p[j];
	}
}
