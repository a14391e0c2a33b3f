/*
 * xxl_colpack.h — a column of 64-bit integers packed into as few bits as
 * its values need: frame of reference (each value minus the smallest, in
 * the bits the range takes) or delta (each value minus the one before,
 * minus the smallest such step), whichever is smaller.  Sorted columns
 * are what delta loves: a page of ascending keys needs the bits of its
 * largest step, not of its range.
 *
 * The arithmetic wraps (uint64), so every int64 column round-trips,
 * however wide its range.  A packed column is followed by
 * XXL_COLPACK_SLOP bytes that the unpack may read (never use): it loads
 * 8 bytes at a time.  Pure C, no PostgreSQL; xxl tables' packed pages use
 * it (pg/table/xxl_table_packed.c).
 */
#ifndef XXL_COLPACK_H
#define XXL_COLPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XXL_COLPACK_SLOP 8

typedef enum xxl_colpack_enc
{
	XXL_COLPACK_FOR = 1,		/* v[i] = base + u[i] */
	XXL_COLPACK_DELTA = 2		/* v[0] = base; v[i] = v[i-1] + step + u[i-1] */
} xxl_colpack_enc;

/* What a column's encoding needs to know, gathered value by value. */
typedef struct xxl_colstats
{
	size_t		n;				/* values (null rows not counted) */
	int64_t		min,
				max,
				prev;
	int64_t		dmin,			/* smallest and largest step, as signed */
				dmax;
} xxl_colstats;

/* How a column is packed: the encoding, its bits, its base and step. */
typedef struct xxl_colpack
{
	xxl_colpack_enc enc;
	int			bits;
	int64_t		base;
	int64_t		step;
} xxl_colpack;

/* Bits that values 0 .. range take (0 for 0). */
static inline int
xxl_bits_for(uint64_t range)
{
	return range == 0 ? 0 : 64 - __builtin_clzll(range);
}

/* Bytes n values of bits each take, slop included (0 for no bits). */
static inline size_t
xxl_bitpack_bytes(size_t n, int bits)
{
	return bits == 0 || n == 0 ? 0 : (n * (size_t) bits + 7) / 8 + XXL_COLPACK_SLOP;
}

static inline void
xxl_colstats_reset(xxl_colstats *s)
{
	s->n = 0;
	s->min = INT64_MAX;
	s->max = INT64_MIN;
	s->prev = 0;
	s->dmin = INT64_MAX;
	s->dmax = INT64_MIN;
}

static inline void
xxl_colstats_add(xxl_colstats *s, int64_t v)
{
	if (s->n > 0)
	{
		int64_t		d = (int64_t) ((uint64_t) v - (uint64_t) s->prev);

		if (d < s->dmin)
			s->dmin = d;
		if (d > s->dmax)
			s->dmax = d;
	}
	if (v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	s->prev = v;
	s->n++;
}

/*
 * The smaller packing of a column of rows values whose non-null ones s
 * saw (delta only when every row's value was seen, delta_ok), into *pack;
 * returns its bytes, slop included.
 */
extern size_t xxl_colpack_choose(const xxl_colstats *s, size_t rows, bool delta_ok,
								 xxl_colpack *pack);

/*
 * Pack v[0 .. n) as pack says into out (xxl_colpack_bytes(pack, n) bytes,
 * zeroed first).
 */
extern size_t xxl_colpack_bytes(const xxl_colpack *pack, size_t n);
extern void xxl_colpack_encode(const xxl_colpack *pack, const int64_t *v, size_t n,
							   uint8_t *out);

/* Unpack n values. */
extern void xxl_colpack_decode(const xxl_colpack *pack, const uint8_t *in, size_t n,
							   int64_t *v);

/* Value i alone (delta: sums the steps before it). */
extern int64_t xxl_colpack_decode_one(const xxl_colpack *pack, const uint8_t *in, size_t i);

/* The raw bit-packing under both: n values of bits each. */
extern void xxl_bitpack(const uint64_t *v, size_t n, int bits, uint8_t *out);
extern void xxl_bitunpack(const uint8_t *in, size_t n, int bits, uint64_t *v);

#endif							/* XXL_COLPACK_H */
