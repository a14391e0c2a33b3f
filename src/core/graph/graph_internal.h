/*
 * graph_internal.h — what the graph operators share: the operator
 * environment (xxl_env.h) on the graph plan (graph_layout.c), the node
 * permutation of the external path (graph_perm.c) and the order-preserving
 * encodings of ids and costs.
 */
#ifndef XXL_GRAPH_INTERNAL_H
#define XXL_GRAPH_INTERNAL_H

#include "core/graph/xxl_graph.h"
#include "core/xxl_env.h"

#include <string.h>

/* Big-endian 64-bit fields: memcmp order is numeric order. */
static inline void
g_put_be(unsigned char *p, uint64_t v)
{
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
}

static inline uint64_t
g_get_be(const unsigned char *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

static inline void
g_put_u64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static inline uint64_t
g_get_u64(const unsigned char *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
	return v;
}

/* int64 -> uint64 preserving order (sign bit flipped). */
static inline uint64_t
g_id_key(int64_t id)
{
	return (uint64_t) id ^ (UINT64_C(1) << 63);
}

static inline int64_t
g_key_id(uint64_t key)
{
	return (int64_t) (key ^ (UINT64_C(1) << 63));
}

/* double -> uint64 preserving order (not for NaN); -0.0 < +0.0. */
static inline uint64_t
g_cost_key(double c)
{
	uint64_t	b;

	memcpy(&b, &c, 8);
	return (b >> 63) ? ~b : b | (UINT64_C(1) << 63);
}

static inline double
g_key_cost(uint64_t k)
{
	uint64_t	b = (k >> 63) ? k & ~(UINT64_C(1) << 63) : ~k;
	double		c;

	memcpy(&c, &b, 8);
	return c;
}

/* The operator environment (xxl_env.h) on the graph operators' plan. ------- */

extern const xxl_env_plan graph_plan;

/* Node permutation of the external path ----------------------------------- */

/*
 * A pseudorandom bijection of [0, n): a 4-round Feistel network on the
 * smallest even number of bits covering n, with cycle walking (expected
 * fewer than 4 steps).  Inverted by running the rounds backwards.
 */
typedef struct gperm
{
	uint64_t	n;
	int			half_bits;
	uint64_t	mask;
	uint64_t	keys[4];
} gperm;

void		gperm_init(gperm *p, uint64_t n, uint64_t seed);
uint64_t	gperm_apply(const gperm *p, uint64_t x);
uint64_t	gperm_invert(const gperm *p, uint64_t y);

#endif							/* XXL_GRAPH_INTERNAL_H */
