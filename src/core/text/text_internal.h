/*
 * text_internal.h — what the text operators (DC3 builder, checker) share:
 * the operator environment (xxl_env.h) on the text plan (text_layout.c),
 * big-endian fields of a level's width and a reader of them from a spool,
 * the common prefix of two byte strings, and the in-memory suffix sorter
 * (SA-IS).
 */
#ifndef XXL_TEXT_INTERNAL_H
#define XXL_TEXT_INTERNAL_H

#include "core/text/xxl_suffix.h"
#include "core/xxl_env.h"

/*
 * Big-endian fields of 1..8 bytes: memcmp order is numeric order.  A field's
 * width is fixed per level, so the switch predicts well; the byte loop it
 * replaces was a tenth of all instructions.
 */
static inline void
put_be(unsigned char *p, uint64_t v, int w)
{
	switch (w)
	{
		case 1:
			p[0] = (unsigned char) v;
			return;
		case 2:
			p[0] = (unsigned char) (v >> 8);
			p[1] = (unsigned char) v;
			return;
		case 3:
			p[0] = (unsigned char) (v >> 16);
			p[1] = (unsigned char) (v >> 8);
			p[2] = (unsigned char) v;
			return;
		case 4:
			{
				uint32_t	x = __builtin_bswap32((uint32_t) v);

				__builtin_memcpy(p, &x, 4);
				return;
			}
		case 5:
			{
				uint32_t	x = __builtin_bswap32((uint32_t) v);

				p[0] = (unsigned char) (v >> 32);
				__builtin_memcpy(p + 1, &x, 4);
				return;
			}
		default:
			for (int i = w - 1; i >= 0; i--)
			{
				p[i] = (unsigned char) v;
				v >>= 8;
			}
	}
}

static inline uint64_t
get_be(const unsigned char *p, int w)
{
	uint32_t	x;

	switch (w)
	{
		case 1:
			return p[0];
		case 2:
			return ((uint64_t) p[0] << 8) | p[1];
		case 3:
			return ((uint64_t) p[0] << 16) | ((uint64_t) p[1] << 8) | p[2];
		case 4:
			__builtin_memcpy(&x, p, 4);
			return __builtin_bswap32(x);
		case 5:
			__builtin_memcpy(&x, p + 1, 4);
			return ((uint64_t) p[0] << 32) | __builtin_bswap32(x);
		default:
			{
				uint64_t	v = 0;

				for (int i = 0; i < w; i++)
					v = (v << 8) | p[i];
				return v;
			}
	}
}

/* Bytes needed to store values 0..max. */
static inline int
width_for(uint64_t max)
{
	int			w = 1;

	while (w < 8 && (max >> (8 * w)) != 0)
		w++;
	return w;
}

/* Length of the common prefix of a[0..k) and b[0..k), a word at a time. */
static inline uint64_t
text_common_prefix(const unsigned char *a, const unsigned char *b, uint64_t k)
{
	uint64_t	m = 0;

	while (m + 8 <= k)
	{
		uint64_t	x,
					y;

		__builtin_memcpy(&x, a + m, 8);
		__builtin_memcpy(&y, b + m, 8);
		if (x != y)
			return m + (uint64_t) (__builtin_ctzll(x ^ y) / 8);	/* little-endian */
		m += 8;
	}
	while (m < k && a[m] == b[m])
		m++;
	return m;
}

/* The operator environment (xxl_env.h) on the text operators' plan. -------- */

extern const xxl_env_plan text_plan;

/* Fixed-width big-endian values from a spool (values may span pieces). */
typedef struct value_reader
{
	xxl_spool_reader rd;
	int			w;
} value_reader;

static inline xxl_status
value_reader_open(value_reader *vr, xxl_spool *sp, int w, bool consume)
{
	vr->w = w;
	return xxl_spool_reader_open(&vr->rd, sp, consume);
}

static inline xxl_status
value_reader_next(value_reader *vr, uint64_t *v)
{
	const unsigned char *p;
	xxl_status	rc = xxl_spool_read(&vr->rd, vr->w, &p);

	if (rc == XXL_OK)
		*v = vr->w == 1 ? *p : get_be(p, vr->w);
	return rc;
}

static inline void
value_reader_close(value_reader *vr)
{
	xxl_spool_reader_close(&vr->rd);
}

/* In-memory suffix sorting (sais.c) ---------------------------------------- */

/*
 * Suffix array of s[0..n) whose last character s[n-1] is 0 and unique, all
 * others in 1..K; characters are cs = 1, 2 or 4 bytes wide.  n < 2^31 - 1.
 * Scratch memory is drawn from the budget.
 */
xxl_status	text_sais(const void *s, int cs, int32_t *SA, int64_t n, uint32_t K,
					  xxl_budget *budget, xxl_error *err);
/* Bytes text_sais needs besides s and SA, at most. */
size_t		text_sais_scratch(int64_t n, uint32_t K);

#endif							/* XXL_TEXT_INTERNAL_H */
