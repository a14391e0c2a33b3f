/*
 * xxl_sortkey_internal.h — a sort key's columns as xxl_order_by.c resolves
 * them and xxl_sortkey.c encodes them.
 */
#ifndef XXL_PG_SORTKEY_INTERNAL_H
#define XXL_PG_SORTKEY_INTERNAL_H

#include <locale.h>

#include "lib/stringinfo.h"
#include "utils/pg_locale.h"

#include "pg/sort/xxl_sortkey.h"

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
	Oid			collation;		/* text-like: the collation it sorts in */
	bool		collate_c;		/* text-like: compare bytes */
	pg_locale_t locale;			/* text-like, ICU: its collator */
	/*
	 * Text-like in a libc collation other than C, or in ICU in a UTF-8
	 * database: compared by the engine (xxl_keycmp.h's COLLATED column)
	 * with collate(collator, ...) after a prefix of prefix bytes.
	 */
	bool		compared;
	xxl_collate_fn collate;
	const void *collator;
	uint32		prefix;
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
	/* with a compared column (ncols > 0): keys in xxl_keycmp.h's form */
	xxl_key_compare compare;
	StringInfoData restored;	/* values restored from a key (xxl_sortkey_restore_var) */
	int		   *restored_at;	/* ... their offsets in it and result columns */
};

#ifdef USE_ICU
/* Bytes of an ICU sort key that precede a compared string (xxl_sortkey.c). */
#define XXL_ICU_PREFIX 8

/* ucol_strcollUTF8() in the UCollator collator: an xxl_collate_fn. */
extern int	xxl_collate_icu_utf8(const void *collator, const char *a, const char *b);
#endif

/* A numeric key's first byte, its class, in the order of the values (encoded and walked). */
enum
{
	NUMCLASS_NINF = 1,
	NUMCLASS_NEG,
	NUMCLASS_ZERO,
	NUMCLASS_POS,
	NUMCLASS_PINF,
	NUMCLASS_NAN
};

#endif							/* XXL_PG_SORTKEY_INTERNAL_H */
