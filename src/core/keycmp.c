/*
 * keycmp.c — comparing sort keys column by column (see xxl_keycmp.h): the
 * sorter's path for keys that are not byte images, such as strings in a
 * libc or ICU collation.
 */
#include <string.h>

#include "core/record.h"
#include "core/xxl_keycmp.h"

uint64_t
xxl_key_abbrev(const xxl_key_compare *kc, const unsigned char *key, uint32_t len)
{
	uint64_t	p;
	uint32_t	vlen;

	if (kc->ncols == 0 || len < XXL_KEYCOL_HEADER)
		return 0;
	p = (uint64_t) key[0] << 56;
	vlen = xxl_load_be32(key + 1);
	if (vlen > len - XXL_KEYCOL_HEADER)
		vlen = len - XXL_KEYCOL_HEADER;
	if (kc->cols[0].kind == XXL_KEYCOL_COLLATED)
	{
		/* only the prefix is a byte image; DESC inverts it here */
		uint64_t	inv = kc->cols[0].desc ? UINT64_C(0x00FFFFFFFFFFFFFF) : 0;
		uint64_t	img = 0;

		if (vlen == 0)
			return p;			/* a NULL */
		if (vlen > kc->cols[0].prefix)
			vlen = kc->cols[0].prefix;
		if (vlen == 0)
			return p;
		if (vlen >= 7 && len >= XXL_KEYCOL_HEADER + 8)
			img = xxl_load_be64(key + XXL_KEYCOL_HEADER) >> 8;
		else
			for (uint32_t i = 0; i < 7 && i < vlen; i++)
				img |= (uint64_t) key[XXL_KEYCOL_HEADER + i] << (48 - 8 * i);
		return p | (img ^ inv);
	}
	/*
	 * Zero padding keeps the order: a value shorter than 7 bytes sorts
	 * before a longer one it begins, and after one its padding exceeds
	 * (where that one has a byte above 0 past it).  Seven bytes or more
	 * within a key that has eight past the header: one load.
	 */
	if (vlen >= 7 && len >= XXL_KEYCOL_HEADER + 8)
		return p | xxl_load_be64(key + XXL_KEYCOL_HEADER) >> 8;
	for (uint32_t i = 0; i < 7 && i < vlen; i++)
		p |= (uint64_t) key[XXL_KEYCOL_HEADER + i] << (48 - 8 * i);
	return p;
}

int
xxl_key_compare_keys(const xxl_key_compare *kc, const unsigned char *a, uint32_t alen,
					 const unsigned char *b, uint32_t blen)
{
	const unsigned char *aend = a + alen;
	const unsigned char *bend = b + blen;

	for (int c = 0; c < kc->ncols; c++)
	{
		const xxl_keycol *col = &kc->cols[c];
		uint32_t	la,
					lb;
		int			r;

		/* a key cut short (never made by the glue) sorts by its length */
		if (aend - a < XXL_KEYCOL_HEADER || bend - b < XXL_KEYCOL_HEADER)
			return (aend - a > bend - b) - (aend - a < bend - b);
		if (a[0] != b[0])
			return a[0] < b[0] ? -1 : 1;
		la = xxl_load_be32(a + 1);
		lb = xxl_load_be32(b + 1);
		a += XXL_KEYCOL_HEADER;
		b += XXL_KEYCOL_HEADER;
		if (la == 0 || lb == 0)
			r = (la > lb) - (la < lb);
		else if (col->kind == XXL_KEYCOL_COLLATED)
		{
			uint32_t	pre = col->prefix;

			/*
			 * Equal bytes are equal under any collation strcmp breaks the
			 * ties of: no strcoll for the repeats of a value (as
			 * varstr_cmp spares it), which halved a sort of 3M rows of
			 * 1024 values
			 */
			if (la == lb && a[0] == b[0] && memcmp(a, b, la) == 0)
				r = 0;
			else if (la < pre || lb < pre)
				r = (la > lb) - (la < lb);	/* cut short: never made by the glue */
			else
			{
				r = pre > 0 ? memcmp(a, b, pre) : 0;
				if (r == 0)
					r = col->collate(col->collator, (const char *) a + pre, (const char *) b + pre);
				if (r == 0)
					r = strcmp((const char *) a + pre, (const char *) b + pre);
				if (col->desc)
					r = r > 0 ? -1 : (r < 0);
			}
		}
		else
		{
			r = memcmp(a, b, la < lb ? la : lb);
			if (r == 0)
				r = (la > lb) - (la < lb);
		}
		if (r != 0)
			return r;
		a += la;
		b += lb;
	}
	return 0;
}

int
xxl_collate_libc(const void *collator, const char *a, const char *b)
{
	return strcoll_l(a, b, (locale_t) collator);
}
