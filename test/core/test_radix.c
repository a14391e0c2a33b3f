/*
 * test_radix.c — unit tests of run formation's sort of variable-length keys
 * (xxl_radix_sort_entries, radix.h) against qsort with memcmp order.
 *
 * The keys are made to walk the radix's shortcuts: long prefixes shared by
 * whole buckets (the jump over common words), keys that end exactly on a
 * word boundary or inside the last shared word, keys that are prefixes of
 * others, exact duplicates (whose input order must stand), and bytes 0x00
 * and 0xFF.  One thread and two.
 */
#include "xxl_test.h"

#include "core/radix.h"
#include "core/xxl_stream.h"

typedef struct tkey
{
	uint32_t	off;			/* in the arena, a multiple of 8 */
	uint32_t	len;
	uint32_t	idx;			/* input position: ties keep this order */
} tkey;

static const char *arena_base;

static int
tkey_cmp(const void *a, const void *b)
{
	const tkey *x = a;
	const tkey *y = b;
	uint32_t	common = x->len < y->len ? x->len : y->len;
	int			c = memcmp(arena_base + x->off, arena_base + y->off, common);

	if (c != 0)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* One key of a family of long names; writes it at k, returns its length. */
static uint32_t
make_key(xt_rng *r, unsigned char *k, int shape)
{
	uint64_t	name = xt_below(r, 30);
	/* names end at a word boundary, inside a word, or run on */
	static const uint32_t cuts[] = {8, 16, 24, 32, 40, 13, 29, 47, 63};
	uint32_t	len = cuts[name % 9];
	uint32_t	tail = (uint32_t) xt_below(r, shape == 0 ? 3 : 11);

	memcpy(k, "customer name ", 14 < len ? 14 : len);
	for (uint32_t i = 14; i < len; i++)
		k[i] = (unsigned char) ("\x00\xff" "abc"[(name * 7 + i) % 5]);
	for (uint32_t i = 0; i < tail; i++)
		k[len + i] = (unsigned char) "\x00\x01\xff"[xt_below(r, 3)];
	return len + tail;
}

static void
check_sort(uint64_t seed, size_t n, int shape, int threads)
{
	xt_rng		r = {seed};
	char	   *arena = malloc(n * 80);
	tkey	   *keys = malloc(n * sizeof(tkey));
	xxl_sort_entry *e = malloc(n * sizeof(xxl_sort_entry));
	xxl_sort_entry *scratch = malloc(n * sizeof(xxl_sort_entry));
	uint32_t	off = 0;
	size_t		wrong = 0;

	for (size_t i = 0; i < n; i++)
	{
		uint32_t	len = make_key(&r, (unsigned char *) arena + off, shape);

		keys[i] = (tkey) {off, len, (uint32_t) i};
		e[i].ref = off / 8;
		e[i].key_len = len;
		e[i].prefix = xxl_key_prefix((const unsigned char *) arena + off, len);
		off += (len + 7) & ~7u;
	}
	arena_base = arena;
	qsort(keys, n, sizeof(tkey), tkey_cmp);
	xxl_radix_sort_entries(e, scratch, n, arena, 0, threads);
	for (size_t i = 0; i < n; i++)
		if (e[i].ref * 8 != keys[i].off || e[i].key_len != keys[i].len)
			wrong++;
	CHECK_MSG(wrong == 0, "seed %" PRIu64 " shape %d threads %d: %zu of %zu entries out of place",
			  seed, shape, threads, wrong, n);
	free(arena);
	free(keys);
	free(e);
	free(scratch);
}

XT_TEST(entries_long_shared_prefixes)
{
	for (uint64_t seed = 1; seed <= 4; seed++)
		for (int threads = 1; threads <= 2; threads++)
		{
			check_sort(seed, xt_quick() ? 20000 : 200000, 0, threads);
			check_sort(seed, xt_quick() ? 20000 : 200000, 1, threads);
		}
}

XT_TEST(entries_small_buckets)
{
	/* buckets at and around the insertion sort's size */
	for (size_t n = 1; n <= 200; n += 7)
		check_sort(n, n, (int) (n % 2), 1);
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
