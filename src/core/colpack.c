/*
 * colpack.c — bit-packing of integer columns (xxl_colpack.h): choosing
 * frame of reference or delta, packing, and unpacking whole columns with a
 * loop specialised for each bit width (a constant shift and mask per
 * value, one unaligned 8-byte load; two above 56 bits).
 */
#include "core/xxl_colpack.h"

#include <string.h>

/* B(k) for every bit width: the switches that give each width its own loop */
#define EACH_WIDTH(B) \
	B(1) B(2) B(3) B(4) B(5) B(6) B(7) B(8) B(9) B(10) B(11) B(12) B(13) B(14) B(15) B(16) \
	B(17) B(18) B(19) B(20) B(21) B(22) B(23) B(24) B(25) B(26) B(27) B(28) B(29) B(30) \
	B(31) B(32) B(33) B(34) B(35) B(36) B(37) B(38) B(39) B(40) B(41) B(42) B(43) B(44) \
	B(45) B(46) B(47) B(48) B(49) B(50) B(51) B(52) B(53) B(54) B(55) B(56) B(57) B(58) \
	B(59) B(60) B(61) B(62) B(63) B(64)

size_t
xxl_colpack_choose(const xxl_colstats *s, size_t rows, bool delta_ok, xxl_colpack *pack)
{
	size_t		for_bytes,
				delta_bytes;
	int			for_bits,
				delta_bits;

	if (s->n == 0)
	{
		/* every row null (or none): nothing to pack */
		pack->enc = XXL_COLPACK_FOR;
		pack->bits = 0;
		pack->base = 0;
		pack->step = 0;
		return 0;
	}
	for_bits = xxl_bits_for((uint64_t) s->max - (uint64_t) s->min);
	for_bytes = xxl_bitpack_bytes(rows, for_bits);
	pack->enc = XXL_COLPACK_FOR;
	pack->bits = for_bits;
	pack->base = s->min;
	pack->step = 0;
	if (!delta_ok || s->n != rows || s->n < 2)
		return for_bytes;
	delta_bits = xxl_bits_for((uint64_t) s->dmax - (uint64_t) s->dmin);
	delta_bytes = xxl_bitpack_bytes(rows - 1, delta_bits);
	if (delta_bytes < for_bytes)
	{
		pack->enc = XXL_COLPACK_DELTA;
		pack->bits = delta_bits;
		pack->base = 0;			/* the first value: set by the encoder */
		pack->step = s->dmin;
		return delta_bytes;
	}
	return for_bytes;
}

size_t
xxl_colpack_bytes(const xxl_colpack *pack, size_t n)
{
	if (pack->enc == XXL_COLPACK_DELTA)
		return n == 0 ? 0 : xxl_bitpack_bytes(n - 1, pack->bits);
	return xxl_bitpack_bytes(n, pack->bits);
}

static inline __attribute__((always_inline)) void
pack_bits(const uint64_t *v, size_t n, const int bits, uint8_t *out)
{
	for (size_t i = 0; i < n; i++)
	{
		size_t		bit = i * (size_t) bits;
		int			shift = (int) (bit & 7);
		uint8_t    *p = out + (bit >> 3);
		uint64_t	lo;

		memcpy(&lo, p, 8);
		lo |= v[i] << shift;
		memcpy(p, &lo, 8);
		if (bits > 56 && shift + bits > 64)
			p[8] |= (uint8_t) (v[i] >> (64 - shift));
	}
}

void
xxl_bitpack(const uint64_t *v, size_t n, int bits, uint8_t *out)
{
	if (bits == 0)
		return;
	memset(out, 0, xxl_bitpack_bytes(n, bits));
	switch (bits)
	{
#define B(k) case k: pack_bits(v, n, k, out); return;
			EACH_WIDTH(B)
#undef B
	}
}

static inline __attribute__((always_inline)) void
unpack_bits(const uint8_t *in, size_t n, const int bits, uint64_t *v)
{
	const uint64_t mask = bits == 64 ? ~(uint64_t) 0 : (((uint64_t) 1 << bits) - 1);

	for (size_t i = 0; i < n; i++)
	{
		size_t		bit = i * (size_t) bits;
		int			shift = (int) (bit & 7);
		uint64_t	w;

		memcpy(&w, in + (bit >> 3), 8);
		w >>= shift;
		if (bits > 56 && shift + bits > 64)
			w |= (uint64_t) in[(bit >> 3) + 8] << (64 - shift);
		v[i] = w & mask;
	}
}

void
xxl_bitunpack(const uint8_t *in, size_t n, int bits, uint64_t *v)
{
	switch (bits)
	{
#define B(k) case k: unpack_bits(in, n, k, v); return;
			EACH_WIDTH(B)
#undef B
		default:
			memset(v, 0, n * sizeof(uint64_t));
	}
}

void
xxl_colpack_encode(const xxl_colpack *pack, const int64_t *v, size_t n, uint8_t *out)
{
	uint64_t	u[256];

	/* a slice at a time, so the scratch stays on the stack */
	if (pack->enc == XXL_COLPACK_DELTA)
	{
		size_t		m = n == 0 ? 0 : n - 1;

		if (pack->bits == 0 || m == 0)
			return;
		memset(out, 0, xxl_bitpack_bytes(m, pack->bits));
		for (size_t at = 0; at < m; at += 256)
		{
			size_t		k = m - at < 256 ? m - at : 256;

			for (size_t i = 0; i < k; i++)
				u[i] = (uint64_t) v[at + i + 1] - (uint64_t) v[at + i] - (uint64_t) pack->step;
			/* slices of 256 values start on a byte (256 * bits is a multiple of 8) */
			{
				uint8_t		tmp[256 * 8 + XXL_COLPACK_SLOP];
				size_t		bytes = (k * (size_t) pack->bits + 7) / 8;

				xxl_bitpack(u, k, pack->bits, tmp);
				memcpy(out + at * pack->bits / 8, tmp, bytes);
			}
		}
		return;
	}
	if (pack->bits == 0)
		return;
	memset(out, 0, xxl_bitpack_bytes(n, pack->bits));
	for (size_t at = 0; at < n; at += 256)
	{
		size_t		k = n - at < 256 ? n - at : 256;
		uint8_t		tmp[256 * 8 + XXL_COLPACK_SLOP];

		for (size_t i = 0; i < k; i++)
			u[i] = (uint64_t) v[at + i] - (uint64_t) pack->base;
		xxl_bitpack(u, k, pack->bits, tmp);
		memcpy(out + at * pack->bits / 8, tmp, (k * (size_t) pack->bits + 7) / 8);
	}
}

void
xxl_colpack_decode(const xxl_colpack *pack, const uint8_t *in, size_t n, int64_t *v)
{
	uint64_t   *u = (uint64_t *) v;

	if (n == 0)
		return;
	if (pack->enc == XXL_COLPACK_DELTA)
	{
		uint64_t	acc = (uint64_t) pack->base;

		/* the steps into v[1 ..], then their running sum */
		xxl_bitunpack(in, n - 1, pack->bits, u + 1);
		u[0] = acc;
		for (size_t i = 1; i < n; i++)
		{
			acc += u[i] + (uint64_t) pack->step;
			u[i] = acc;
		}
		return;
	}
	xxl_bitunpack(in, n, pack->bits, u);
	for (size_t i = 0; i < n; i++)
		u[i] += (uint64_t) pack->base;
}

static inline uint64_t
unpack_one(const uint8_t *in, size_t i, int bits)
{
	size_t		bit = i * (size_t) bits;
	int			shift = (int) (bit & 7);
	const uint8_t *p = in + (bit >> 3);
	uint64_t	mask = bits == 64 ? ~(uint64_t) 0 : (((uint64_t) 1 << bits) - 1);
	uint64_t	w;

	if (bits == 0)
		return 0;
	memcpy(&w, p, 8);
	w >>= shift;
	if (shift + bits > 64)
		w |= (uint64_t) p[8] << (64 - shift);
	return w & mask;
}

int64_t
xxl_colpack_decode_one(const xxl_colpack *pack, const uint8_t *in, size_t i)
{
	if (pack->enc == XXL_COLPACK_DELTA)
	{
		uint64_t	acc = (uint64_t) pack->base;

		for (size_t k = 0; k < i; k++)
			acc += unpack_one(in, k, pack->bits) + (uint64_t) pack->step;
		return (int64_t) acc;
	}
	return (int64_t) (unpack_one(in, i, pack->bits) + (uint64_t) pack->base);
}
