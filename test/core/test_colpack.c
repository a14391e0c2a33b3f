/*
 * test_colpack.c — unit tests of integer column packing (xxl_colpack.h).
 *
 * Columns of many shapes (constant, small ranges, every width up to 64
 * bits, the int64 extremes, ascending with small steps, descending,
 * random) are packed as xxl_colpack_choose says and unpacked whole and
 * value by value; every value must come back exactly, the chosen packing
 * must be the smaller of the two (computed here by brute force from the
 * values), and the unpack must not read past the slop it was promised.
 */
#include "xxl_test.h"

#include "core/xxl_colpack.h"

#define N 2048

static int64_t vals[N];
static int64_t back[N];

/* Bits the naive way: the smallest b with range < 2^b. */
static int
naive_bits(uint64_t range)
{
	int			b = 0;

	while (b < 64 && (range >> b) != 0)
		b++;
	return b;
}

/* Pack vals[0 .. n), unpack both ways, compare; the packed size it took. */
static size_t
roundtrip(size_t n, bool delta_ok, xxl_colpack_enc *enc)
{
	xxl_colstats s;
	xxl_colpack pack;
	size_t		bytes,
				want;
	uint8_t    *buf;
	int64_t		mn = INT64_MAX,
				mx = INT64_MIN,
				dmn = INT64_MAX,
				dmx = INT64_MIN;

	xxl_colstats_reset(&s);
	for (size_t i = 0; i < n; i++)
	{
		xxl_colstats_add(&s, vals[i]);
		mn = vals[i] < mn ? vals[i] : mn;
		mx = vals[i] > mx ? vals[i] : mx;
		if (i > 0)
		{
			int64_t		d = (int64_t) ((uint64_t) vals[i] - (uint64_t) vals[i - 1]);

			dmn = d < dmn ? d : dmn;
			dmx = d > dmx ? d : dmx;
		}
	}
	bytes = xxl_colpack_choose(&s, n, delta_ok, &pack);
	CHECK_EQ(s.min, mn);
	CHECK_EQ(s.max, mx);
	/* the smaller of the two, computed from the values */
	want = n == 0 ? 0 : (n * naive_bits((uint64_t) mx - (uint64_t) mn) + 7) / 8;
	if (want > 0)
		want += XXL_COLPACK_SLOP;
	if (delta_ok && n >= 2)
	{
		size_t		d = ((n - 1) * naive_bits((uint64_t) dmx - (uint64_t) dmn) + 7) / 8;

		if (d > 0)
			d += XXL_COLPACK_SLOP;
		if (d < want)
			want = d;
	}
	CHECK_EQ(bytes, want);
	CHECK_EQ(xxl_colpack_bytes(&pack, n), bytes);
	if (pack.enc == XXL_COLPACK_DELTA)
		pack.base = vals[0];
	/* exactly bytes, so that a read past the slop is valgrind's to see */
	buf = malloc(bytes > 0 ? bytes : 1);
	xxl_colpack_encode(&pack, vals, n, buf);
	memset(back, 0x5a, sizeof(back));
	xxl_colpack_decode(&pack, buf, n, back);
	for (size_t i = 0; i < n; i++)
		if (back[i] != vals[i])
		{
			CHECK_MSG(false, "n %zu value %zu: %" PRId64 " came back as %" PRId64 " (enc %d, bits %d)",
					  n, i, vals[i], back[i], pack.enc, pack.bits);
			break;
		}
	for (size_t i = 0; i < n; i += 1 + i / 7)
		CHECK_EQ(xxl_colpack_decode_one(&pack, buf, i), vals[i]);
	if (n > 0)
		CHECK_EQ(xxl_colpack_decode_one(&pack, buf, n - 1), vals[n - 1]);
	free(buf);
	*enc = pack.enc;
	return bytes;
}

XT_TEST(every_width_round_trips)
{
	xt_rng		r = {42};
	xxl_colpack_enc enc;

	for (int bits = 0; bits <= 64; bits++)
		for (size_t n = 1; n <= N; n = n * 3 + 1)
		{
			int64_t		base = (int64_t) xt_next(&r);

			for (size_t i = 0; i < n; i++)
			{
				uint64_t	u = bits == 64 ? xt_next(&r) :
					bits == 0 ? 0 : xt_next(&r) & (((uint64_t) 1 << bits) - 1);

				vals[i] = (int64_t) ((uint64_t) base + u);
			}
			/* the widest value present, so the range takes every bit */
			if (bits > 0 && n > 1)
			{
				vals[0] = base;
				vals[1] = (int64_t) ((uint64_t) base + (bits == 64 ? ~(uint64_t) 0 :
														(((uint64_t) 1 << bits) - 1)));
			}
			roundtrip(n, false, &enc);
			CHECK_EQ(enc, XXL_COLPACK_FOR);
			roundtrip(n, true, &enc);
		}
}

XT_TEST(extremes_round_trip)
{
	xxl_colpack_enc enc;

	for (size_t i = 0; i < N; i++)
		vals[i] = i % 2 ? INT64_MAX : INT64_MIN;
	/* steps of +1 and -1 (wrapping): two bits each */
	CHECK_EQ(roundtrip(N, true, &enc), (size_t) ((N - 1) * 2 + 7) / 8 + XXL_COLPACK_SLOP);
	CHECK_EQ(enc, XXL_COLPACK_DELTA);
	for (size_t i = 0; i < N; i++)
		vals[i] = i % 3 == 0 ? INT64_MIN : i % 3 == 1 ? 0 : INT64_MAX;
	roundtrip(N, true, &enc);
	vals[0] = INT64_MAX;
	vals[1] = INT64_MIN;
	roundtrip(2, true, &enc);
}

XT_TEST(constant_column_takes_nothing)
{
	xxl_colpack_enc enc;

	for (size_t i = 0; i < N; i++)
		vals[i] = -77;
	CHECK_EQ(roundtrip(N, true, &enc), (size_t) 0);
	CHECK_EQ(roundtrip(1, true, &enc), (size_t) 0);
}

XT_TEST(sorted_column_takes_delta)
{
	xt_rng		r = {7};
	xxl_colpack_enc enc;
	size_t		bytes;

	/* a page of a sorted key: random steps below 2^20 over a range of 2^31 */
	vals[0] = (int64_t) 1 << 40;
	for (size_t i = 1; i < N; i++)
		vals[i] = vals[i - 1] + (int64_t) xt_below(&r, 1 << 20);
	bytes = roundtrip(N, true, &enc);
	CHECK_EQ(enc, XXL_COLPACK_DELTA);
	CHECK_LE(bytes, (size_t) (N * 20 / 8 + XXL_COLPACK_SLOP));
	/* an arithmetic series: no bits at all */
	for (size_t i = 0; i < N; i++)
		vals[i] = 1000 - 3 * (int64_t) i;
	CHECK_EQ(roundtrip(N, true, &enc), (size_t) 0);
	CHECK_EQ(enc, XXL_COLPACK_DELTA);
	/* descending with wrapping steps */
	for (size_t i = 0; i < N; i++)
		vals[i] = INT64_MAX - (int64_t) (i * (uint64_t) 1 << 50);
	roundtrip(N, true, &enc);
}

XT_TEST(random_column_takes_frame_of_reference)
{
	xt_rng		r = {9};
	xxl_colpack_enc enc;

	for (size_t i = 0; i < N; i++)
		vals[i] = (int64_t) xt_below(&r, 10000000);
	roundtrip(N, true, &enc);
	CHECK_EQ(enc, XXL_COLPACK_FOR);
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
