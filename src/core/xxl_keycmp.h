/*
 * xxl_keycmp.h — sort keys that are not byte images: a comparison the
 * sorter calls instead of memcmp.
 *
 * A libc collation orders strings by strcoll(), and glibc's strxfrm()
 * images do not always order as strcoll() does, so such a key cannot be a
 * byte string compared with memcmp; an ICU sort key can, but making it
 * costs more than the comparisons it saves.  A key in this form is a
 * sequence of columns, each
 *     flag (1 byte) | length (4 bytes, big-endian) | length bytes
 * where a NULL has length 0.  Flags compare first (they carry NULLS
 * FIRST/LAST); then a XXL_KEYCOL_BYTES column compares its bytes as
 * memcmp does (shorter first), and a XXL_KEYCOL_COLLATED column holds
 *     prefix (col->prefix bytes) | the string | NUL
 * The prefix is a byte image of the string's beginning (an ICU sort key's
 * first bytes, zero padded): prefixes that differ order their strings, and
 * only equal ones reach col->collate(), whose ties strcmp() breaks as
 * PostgreSQL's varstr_cmp() breaks them; the result is negated for DESC.
 *
 * col->collate runs on run formation's threads and the merge's worker, so
 * it must be thread-safe and must not call the host: strcoll_l() with a
 * locale_t (xxl_collate_libc) and ICU's ucol_strcollUTF8() both are.
 */
#ifndef XXL_KEYCMP_H
#define XXL_KEYCMP_H

#include <locale.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef enum xxl_keycol_kind
{
	XXL_KEYCOL_BYTES,			/* a byte image: memcmp order */
	XXL_KEYCOL_COLLATED			/* a prefix and a NUL-terminated string */
} xxl_keycol_kind;

/* <0, 0 or >0 as NUL-terminated a collates before, with or after b. */
typedef int (*xxl_collate_fn) (const void *collator, const char *a, const char *b);

typedef struct xxl_keycol
{
	xxl_keycol_kind kind;
	bool		desc;			/* COLLATED: negate (BYTES come inverted) */
	uint32_t	prefix;			/* COLLATED: bytes of the prefix, maybe 0 */
	xxl_collate_fn collate;		/* COLLATED: the collation's order */
	const void *collator;		/* ... and its argument */
} xxl_keycol;

typedef struct xxl_key_compare
{
	int			ncols;
	const xxl_keycol *cols;
} xxl_key_compare;

/* Bytes of a column's header: flag and length. */
#define XXL_KEYCOL_HEADER 5

/*
 * An abbreviation of a key, as PostgreSQL abbreviates a sort's first
 * column: where two keys' abbreviations differ they order as the keys do;
 * where they are equal, only the keys decide.  The first column's flag,
 * then the first 7 bytes (zero padded) of its byte image, or of a collated
 * column's prefix: a collated column without a prefix (libc) is
 * abbreviated to its flag alone.  Never UINT64_MAX (the merge's code for a
 * finished run).
 */
uint64_t	xxl_key_abbrev(const xxl_key_compare *kc, const unsigned char *key, uint32_t len);

/* <0, 0 or >0 as key a sorts before, with or after key b. */
int			xxl_key_compare_keys(const xxl_key_compare *kc, const unsigned char *a, uint32_t alen,
								 const unsigned char *b, uint32_t blen);

/*
 * The sorter's order of any two keys: by kc when there is one, else as
 * byte strings (memcmp, the shorter first on a common prefix).
 */
static inline int
xxl_key_order(const xxl_key_compare *kc, const unsigned char *a, uint32_t alen,
			  const unsigned char *b, uint32_t blen)
{
	uint32_t	common = alen < blen ? alen : blen;
	int			c;

	if (kc != NULL)
		return xxl_key_compare_keys(kc, a, alen, b, blen);
	if (common >= 8)
	{
		/*
		 * The first 8 bytes as a big-endian word: most keys differ there
		 * (a bigint's image, a text's prefix), without a call to memcmp.
		 */
		uint64_t	x,
					y;

		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		if (x != y)
		{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			x = __builtin_bswap64(x);
			y = __builtin_bswap64(y);
#endif
			return x < y ? -1 : 1;
		}
		c = memcmp(a + 8, b + 8, common - 8);
	}
	else
		c = common > 0 ? memcmp(a, b, common) : 0;
	return c != 0 ? c : (alen > blen) - (alen < blen);
}

/* strcoll_l() in the locale_t collator. */
int			xxl_collate_libc(const void *collator, const char *a, const char *b);

#endif							/* XXL_KEYCMP_H */
