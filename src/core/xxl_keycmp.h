/*
 * xxl_keycmp.h — sort keys that are not byte images: a comparison the
 * sorter calls instead of memcmp.
 *
 * A libc collation orders strings by strcoll(), and glibc's strxfrm()
 * images do not always order as strcoll() does, so such a key cannot be a
 * byte string compared with memcmp.  A key in this form is a sequence of
 * columns, each
 *     flag (1 byte) | length (4 bytes, big-endian) | length bytes
 * where a NULL has length 0.  Flags compare first (they carry NULLS
 * FIRST/LAST); then a XXL_KEYCOL_BYTES column compares its bytes as
 * memcmp does (shorter first), and a XXL_KEYCOL_STRCOLL column holds a
 * NUL-terminated string compared by strcoll_l() in its locale, ties broken
 * by strcmp() as PostgreSQL's varstr_cmp() breaks them, negated for DESC.
 *
 * strcoll_l() with a locale_t is thread-safe, so run formation's threads
 * and the merge's worker call it freely; nothing here calls the host.
 */
#ifndef XXL_KEYCMP_H
#define XXL_KEYCMP_H

#include <locale.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum xxl_keycol_kind
{
	XXL_KEYCOL_BYTES,			/* a byte image: memcmp order */
	XXL_KEYCOL_STRCOLL			/* a NUL-terminated string: strcoll_l order */
} xxl_keycol_kind;

typedef struct xxl_keycol
{
	xxl_keycol_kind kind;
	bool		desc;			/* STRCOLL: negate (BYTES come inverted) */
	locale_t	locale;			/* STRCOLL: the collation's locale */
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
 * then, when that column is a byte image, its first 7 bytes (zero padded).
 * A string in a libc collation has no such image: its abbreviation is the
 * flag alone.  Never UINT64_MAX (the merge's code for a finished run).
 */
uint64_t	xxl_key_abbrev(const xxl_key_compare *kc, const unsigned char *key, uint32_t len);

/* <0, 0 or >0 as key a sorts before, with or after key b. */
int			xxl_key_compare_keys(const xxl_key_compare *kc, const unsigned char *a, uint32_t alen,
								 const unsigned char *b, uint32_t blen);

#endif							/* XXL_KEYCMP_H */
