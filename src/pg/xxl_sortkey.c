/*
 * xxl_sortkey.c — ORDER BY parsing and normalized sort keys (see
 * xxl_sortkey.h for the key layout).
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
 *    terminator; in an ICU collation the collator's sort key (designed to
 *    compare as ucol_strcoll() does, ending in its one 0x00) comes first,
 *    and the raw bytes break ties as varstr_cmp() does with strcmp().
 *  - text-like values in a libc collation other than C have no byte image:
 *    glibc's strxfrm() does not always order as its strcoll(), which
 *    PostgreSQL compares with.  A key with such a column is written in the
 *    engine's column-wise form (xxl_keycmp.h), the string as it is plus a
 *    NUL, and the engine compares it with strcoll_l() and strcmp().
 * Nondeterministic collations are refused.
 */
#include "postgres.h"

#include <locale.h>
#include <string.h>

#ifdef USE_ICU
#include <unicode/ucol.h>
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

#include "xxl_sortkey.h"

typedef enum KeyKind
{
	KEY_INT2,
	KEY_INT4,					/* int4, date */
	KEY_INT8,					/* int8, time, timestamp(tz), money */
	KEY_UINT4,					/* oid */
	KEY_CHAR,					/* "char" */
	KEY_BOOL,
	KEY_FLOAT4,
	KEY_FLOAT8,
	KEY_NUMERIC,
	KEY_UUID,
	KEY_TEXT,					/* text, varchar */
	KEY_BPCHAR,
	KEY_NAME,
	KEY_BYTEA
} KeyKind;

typedef struct KeyColumn
{
	AttrNumber	attno;
	KeyKind		kind;
	bool		desc;
	bool		nulls_first;
	int			fixed_width;	/* bytes of every encoded value, or 0 */
	int			fixed_offset;	/* fixed keys: where the null flag is */
	bool		collate_c;		/* text-like: compare bytes */
	pg_locale_t locale;			/* text-like, ICU: its collator */
	locale_t	libc;			/* text-like, libc other than C: compared by
								 * the engine with strcoll_l in this locale */
} KeyColumn;

struct XxlSortKey
{
	int			ncols;
	KeyColumn  *cols;
	AttrNumber	max_attno;
	int			fixed_size;		/* bytes of every key, or 0 if they vary */
	unsigned char *buf;
	size_t		cap;
	size_t		len;
	MemoryContext cxt;			/* where the key lives */
	void	   *ubuf;			/* ICU: a value in UTF-16, reused */
	size_t		ubuf_cap;		/* in UTF-16 units */
	/* with a libc column (ncols > 0): keys in xxl_keycmp.h's form */
	xxl_key_compare compare;
};

const char *
xxl_sortkey_supported_types(void)
{
	return "smallint, integer, bigint, oid, real, double precision, numeric, money, "
		"boolean, \"char\", date, time, timestamp, timestamptz, uuid, text, varchar, "
		"char(n), name, bytea (and domains over them)";
}

/* ORDER BY parsing ------------------------------------------------------ */

#define ORDER_BY_PREFIX "SELECT FROM xxl_order_by_source ORDER BY "

static void
order_by_malformed(const char *order_by, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYNTAX_ERROR),
			 errmsg("invalid order_by \"%s\"", order_by),
			 errdetail("%s", detail),
			 errhint("order_by takes what follows ORDER BY: column names or positions, "
					 "each optionally followed by COLLATE, ASC or DESC, NULLS FIRST or NULLS LAST.")));
}

static void
order_by_unsupported(const char *order_by, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("order_by \"%s\" uses %s, which is not supported", order_by, what),
			 errhint("Sort by column names or positions, optionally with COLLATE, ASC or DESC, "
					 "NULLS FIRST or NULLS LAST; compute expressions in the source query.")));
}

List *
xxl_parse_order_by(const char *order_by)
{
	char	   *sql = psprintf("%s%s", ORDER_BY_PREFIX, order_by);
	List	   *volatile raw = NIL;
	MemoryContext cxt = CurrentMemoryContext;
	SelectStmt *sel;
	List	   *items = NIL;
	ListCell   *lc;

	/*
	 * The parser reports positions in our wrapped statement, which would
	 * point into the caller's query at random: restate its error in terms
	 * of order_by.  Rethrowing at once makes catching safe here.
	 */
	PG_TRY();
	{
		raw = raw_parser(sql, RAW_PARSE_DEFAULT);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		ereport(ERROR,
				(errcode(edata->sqlerrcode),
				 errmsg("invalid order_by \"%s\": %s", order_by, edata->message),
				 errhint("order_by takes what follows ORDER BY: column names or positions, "
						 "each optionally followed by COLLATE, ASC or DESC, NULLS FIRST or NULLS LAST.")));
	}
	PG_END_TRY();

	/* anything but a plain sort list changes the statement's shape */
	if (list_length(raw) != 1 ||
		!IsA(((RawStmt *) linitial(raw))->stmt, SelectStmt))
		order_by_malformed(order_by, "It must be a single list of sort items.");
	sel = (SelectStmt *) ((RawStmt *) linitial(raw))->stmt;
	if (sel->op != SETOP_NONE || sel->targetList != NIL || list_length(sel->fromClause) != 1 ||
		sel->whereClause != NULL || sel->groupClause != NIL || sel->havingClause != NULL ||
		sel->windowClause != NIL || sel->valuesLists != NIL || sel->distinctClause != NIL ||
		sel->intoClause != NULL || sel->limitOffset != NULL || sel->limitCount != NULL ||
		sel->lockingClause != NIL || sel->withClause != NULL || sel->sortClause == NIL)
		order_by_malformed(order_by,
						   "Only sort items are allowed: no LIMIT, OFFSET, FETCH, FOR UPDATE or further statements.");

	foreach(lc, sel->sortClause)
	{
		SortBy	   *sb = lfirst_node(SortBy, lc);
		Node	   *node = sb->node;
		XxlSortItem *item = palloc0(sizeof(XxlSortItem));

		if (sb->sortby_dir == SORTBY_USING)
			order_by_unsupported(order_by, "USING");
		item->desc = (sb->sortby_dir == SORTBY_DESC);
		/* PostgreSQL's default: NULLs are larger than any value */
		if (sb->sortby_nulls == SORTBY_NULLS_DEFAULT)
			item->nulls_first = item->desc;
		else
			item->nulls_first = (sb->sortby_nulls == SORTBY_NULLS_FIRST);

		if (IsA(node, CollateClause))
		{
			CollateClause *cc = (CollateClause *) node;

			item->collation = get_collation_oid(cc->collname, false);
			node = cc->arg;
		}
		if (IsA(node, ColumnRef))
		{
			ColumnRef  *cr = (ColumnRef *) node;

			if (list_length(cr->fields) != 1 || !IsA(linitial(cr->fields), String))
				order_by_unsupported(order_by, "a qualified column reference or *");
			item->colname = pstrdup(strVal(linitial(cr->fields)));
		}
		else if (IsA(node, A_Const) && !((A_Const *) node)->isnull &&
				 IsA(&((A_Const *) node)->val, Integer))
			item->position = intVal(&((A_Const *) node)->val);
		else
			order_by_unsupported(order_by, "an expression");
		items = lappend(items, item);
	}
	return items;
}

/* Resolving items against a row type ----------------------------------- */

static char *
column_list(TupleDesc desc)
{
	StringInfoData s;
	int			n = 0;

	initStringInfo(&s);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		if (n++ > 0)
			appendStringInfoString(&s, ", ");
		if (s.len > 200)
		{
			appendStringInfoString(&s, "...");
			break;
		}
		appendStringInfoString(&s, quote_identifier(NameStr(att->attname)));
	}
	if (n == 0)
		appendStringInfoString(&s, "(none)");
	return s.data;
}

static int
resolve_column(TupleDesc desc, const XxlSortItem *item)
{
	int			found = -1;

	if (item->colname == NULL)
	{
		int			visible = 0;

		for (int i = 0; i < desc->natts; i++)
		{
			if (TupleDescAttr(desc, i)->attisdropped)
				continue;
			if (++visible == item->position)
				return i;
		}
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_REFERENCE),
				 errmsg("ORDER BY position %d is not in the source's columns", item->position),
				 errdetail("The source has %d columns.", visible)));
	}
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped || strcmp(NameStr(att->attname), item->colname) != 0)
			continue;
		if (found >= 0)
			ereport(ERROR,
					(errcode(ERRCODE_AMBIGUOUS_COLUMN),
					 errmsg("column reference \"%s\" in order_by is ambiguous", item->colname),
					 errdetail("The source has more than one column of that name.")));
		found = i;
	}
	if (found < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" in order_by does not exist in the source", item->colname),
				 errdetail("The source's columns are: %s.", column_list(desc)),
				 errhint("Unquoted names are folded to lower case; quote mixed-case names with double quotes.")));
	return found;
}

static bool
kind_for_type(Oid base, KeyKind *kind)
{
	switch (base)
	{
		case INT2OID:
			*kind = KEY_INT2;
			break;
		case INT4OID:
		case DATEOID:
			*kind = KEY_INT4;
			break;
		case INT8OID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case CASHOID:
			*kind = KEY_INT8;
			break;
		case OIDOID:
			*kind = KEY_UINT4;
			break;
		case CHAROID:
			*kind = KEY_CHAR;
			break;
		case BOOLOID:
			*kind = KEY_BOOL;
			break;
		case FLOAT4OID:
			*kind = KEY_FLOAT4;
			break;
		case FLOAT8OID:
			*kind = KEY_FLOAT8;
			break;
		case NUMERICOID:
			*kind = KEY_NUMERIC;
			break;
		case UUIDOID:
			*kind = KEY_UUID;
			break;
		case TEXTOID:
		case VARCHAROID:
			*kind = KEY_TEXT;
			break;
		case BPCHAROID:
			*kind = KEY_BPCHAR;
			break;
		case NAMEOID:
			*kind = KEY_NAME;
			break;
		case BYTEAOID:
			*kind = KEY_BYTEA;
			break;
		default:
			return false;
	}
	return true;
}

/*
 * The database's default collation as a locale_t, for the engine's
 * strcoll_l (PostgreSQL itself uses the process-wide LC_COLLATE, which no
 * thread may rely on).  It never changes in a backend: made once, kept.
 */
static locale_t
default_collate_locale(void)
{
	static locale_t loc = (locale_t) 0;

	if (loc == (locale_t) 0)
	{
		const char *name = setlocale(LC_COLLATE, NULL);

		loc = newlocale(LC_COLLATE_MASK, name ? name : "C", (locale_t) 0);
		if (loc == (locale_t) 0)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not create a locale for the database collation \"%s\": %m",
							name ? name : "")));
	}
	return loc;
}

static void
resolve_collation(KeyColumn *col, const char *colname, Oid collation)
{
	pg_locale_t locale;

	if (!OidIsValid(collation))
		ereport(ERROR,
				(errcode(ERRCODE_INDETERMINATE_COLLATION),
				 errmsg("could not determine which collation to use for sorting by column \"%s\"",
						colname),
				 errhint("Add COLLATE to the column in order_by, e.g. %s COLLATE \"C\".",
						 quote_identifier(colname))));
	if (lc_collate_is_c(collation))
	{
		col->collate_c = true;
		return;
	}
	locale = pg_newlocale_from_collation(collation);
	if (locale != NULL && !locale->deterministic)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot sort by column \"%s\": collation \"%s\" is nondeterministic",
						colname, get_collation_name(collation)),
				 errhint("Sort by bytes with %s COLLATE \"C\" in order_by.",
						 quote_identifier(colname))));
	col->collate_c = false;
	if (locale != NULL && locale->provider == COLLPROVIDER_ICU)
	{
#ifdef USE_ICU
		col->locale = locale;
#else
		elog(ERROR, "ICU collation without ICU support");
#endif
	}
	else
		col->libc = locale != NULL ? locale->info.lt : default_collate_locale();
}

/* Bytes of every encoded value of a kind, or 0 if the length varies. */
static int
fixed_width_of(KeyKind kind)
{
	switch (kind)
	{
		case KEY_CHAR:
		case KEY_BOOL:
			return 1;
		case KEY_INT2:
			return 2;
		case KEY_INT4:
		case KEY_UINT4:
		case KEY_FLOAT4:
			return 4;
		case KEY_INT8:
		case KEY_FLOAT8:
			return 8;
		case KEY_UUID:
			return UUID_LEN;
		default:
			return 0;
	}
}

XxlSortKey *
xxl_sortkey_create(TupleDesc desc, List *items)
{
	XxlSortKey *key = palloc0(sizeof(XxlSortKey));
	ListCell   *lc;
	int			i = 0;

	key->cxt = CurrentMemoryContext;
	key->ncols = list_length(items);
	key->cols = palloc0(sizeof(KeyColumn) * Max(key->ncols, 1));
	foreach(lc, items)
	{
		XxlSortItem *item = (XxlSortItem *) lfirst(lc);
		KeyColumn  *col = &key->cols[i++];
		int			att_index = resolve_column(desc, item);
		Form_pg_attribute att = TupleDescAttr(desc, att_index);
		const char *colname = NameStr(att->attname);
		Oid			base = getBaseType(att->atttypid);

		col->attno = att_index + 1;
		col->desc = item->desc;
		col->nulls_first = item->nulls_first;
		if (!kind_for_type(base, &col->kind))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot sort by column \"%s\" of type %s",
							colname, format_type_be(att->atttypid)),
					 errdetail("Supported key types: %s.", xxl_sortkey_supported_types()),
					 errhint("Cast the column to a supported type in a source query.")));
		if (OidIsValid(item->collation) && !type_is_collatable(base))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("collations are not supported by type %s",
							format_type_be(att->atttypid)),
					 errdetail("order_by applies COLLATE to column \"%s\".", colname)));
		if (col->kind == KEY_TEXT || col->kind == KEY_BPCHAR || col->kind == KEY_NAME)
			resolve_collation(col, colname,
							  OidIsValid(item->collation) ? item->collation : att->attcollation);
		else
			col->collate_c = true;	/* bytea and the rest: bytes, whatever the database */
		if (col->attno > key->max_attno)
			key->max_attno = col->attno;
	}
	key->fixed_size = 0;
	for (int c = 0; c < key->ncols; c++)
	{
		KeyColumn  *col = &key->cols[c];

		col->fixed_width = fixed_width_of(col->kind);
		if (col->fixed_width == 0)
		{
			key->fixed_size = 0;
			break;
		}
		col->fixed_offset = key->fixed_size;
		key->fixed_size += 1 + col->fixed_width;
	}
	for (int c = 0; c < key->ncols; c++)
		if (key->cols[c].libc != (locale_t) 0)
		{
			xxl_keycol *cols = palloc0(sizeof(xxl_keycol) * key->ncols);

			for (int k = 0; k < key->ncols; k++)
			{
				cols[k].kind = key->cols[k].libc ? XXL_KEYCOL_STRCOLL : XXL_KEYCOL_BYTES;
				cols[k].desc = key->cols[k].desc;
				cols[k].locale = key->cols[k].libc;
			}
			key->compare.ncols = key->ncols;
			key->compare.cols = cols;
			break;
		}
	key->cap = 256;
	key->buf = palloc(key->cap);
	return key;
}

const xxl_key_compare *
xxl_sortkey_compare(const XxlSortKey *key)
{
	return key->compare.ncols > 0 ? &key->compare : NULL;
}

AttrNumber
xxl_sortkey_max_attno(const XxlSortKey *key)
{
	return key->max_attno;
}

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
#endif

static void
put_string(XxlSortKey *key, const KeyColumn *col, const char *data, size_t len)
{
	if (col->libc)
	{
		/* compared by the engine: the string itself, NUL-terminated */
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

enum
{
	NUMCLASS_NINF = 1,
	NUMCLASS_NEG,
	NUMCLASS_ZERO,
	NUMCLASS_POS,
	NUMCLASS_PINF,
	NUMCLASS_NAN
};

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
		if (col->desc && !col->libc)
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

int
xxl_sortkey_restorable_column(const XxlSortKey *key, AttrNumber attno)
{
	if (key->fixed_size == 0)
		return -1;
	for (int i = 0; i < key->ncols; i++)
	{
		const KeyColumn *col = &key->cols[i];

		if (col->attno != attno)
			continue;
		switch (col->kind)
		{
			case KEY_INT2:
			case KEY_INT4:
			case KEY_INT8:
			case KEY_UINT4:
			case KEY_CHAR:
			case KEY_BOOL:
				return i;
			default:
				/* floats fold -0 and NaNs; a uuid would need memory of its own */
				return -1;
		}
	}
	return -1;
}

Datum
xxl_sortkey_restore(const XxlSortKey *key, int column, const unsigned char *keybytes,
					bool *isnull)
{
	const KeyColumn *col = &key->cols[column];
	const unsigned char *p = keybytes + col->fixed_offset + 1;
	/* DESC inverted every value byte: invert them back */
	uint64		flip = col->desc ? ~UINT64CONST(0) : 0;

	*isnull = keybytes[col->fixed_offset] == (col->nulls_first ? 0x00 : 0x01);
	if (*isnull)
		return (Datum) 0;
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
