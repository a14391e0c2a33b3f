/*
 * graph_perm.c — the node permutation of the external path: a pseudorandom
 * bijection of [0, n) that spreads the nodes' ids evenly over the
 * semi-external base.
 */
#include "core/graph/graph_internal.h"

static inline uint64_t
mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void
gperm_init(gperm *p, uint64_t n, uint64_t seed)
{
	memset(p, 0, sizeof(*p));
	p->n = n;
	p->half_bits = 1;
	while (p->half_bits < 32 && (UINT64_C(1) << (2 * p->half_bits)) < n)
		p->half_bits++;
	p->mask = p->half_bits == 32 ? UINT64_C(0xffffffff) : (UINT64_C(1) << p->half_bits) - 1;
	for (int i = 0; i < 4; i++)
		p->keys[i] = mix64(seed + UINT64_C(0x9e3779b97f4a7c15) * (uint64_t) (i + 1));
}

static inline uint64_t
feistel(const gperm *p, uint64_t x)
{
	uint64_t	l = x >> p->half_bits,
				r = x & p->mask;

	for (int i = 0; i < 4; i++)
	{
		uint64_t	t = l ^ (mix64(r ^ p->keys[i]) & p->mask);

		l = r;
		r = t;
	}
	return (l << p->half_bits) | r;
}

static inline uint64_t
feistel_inv(const gperm *p, uint64_t y)
{
	uint64_t	l = y >> p->half_bits,
				r = y & p->mask;

	for (int i = 3; i >= 0; i--)
	{
		uint64_t	t = r ^ (mix64(l ^ p->keys[i]) & p->mask);

		r = l;
		l = t;
	}
	return (l << p->half_bits) | r;
}

uint64_t
gperm_apply(const gperm *p, uint64_t x)
{
	if (p->n <= 1)
		return x;
	do
		x = feistel(p, x);
	while (x >= p->n);
	return x;
}

uint64_t
gperm_invert(const gperm *p, uint64_t y)
{
	if (p->n <= 1)
		return y;
	do
		y = feistel_inv(p, y);
	while (y >= p->n);
	return y;
}
