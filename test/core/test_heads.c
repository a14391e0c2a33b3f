/*
 * test_heads.c — the merge of sorted streams' heads (xxl_heads.h): many
 * streams of random lengths (some empty), keys of varying lengths with
 * common prefixes and many ties, merged by moving each stream to its next
 * record after it wins; the output must be the naive merge's: sorted by
 * key (bytes, the shorter first), equal keys in stream order.  Also with
 * streams that end early (xxl_heads_end while they have records left) and
 * with a column comparison (xxl_keycmp.h) in place of bytes.
 */
#include "xxl_test.h"
#include "core/xxl_heads.h"

#include <stdlib.h>
#include <string.h>

typedef struct item
{
	unsigned char key[16];
	uint32_t	len;
	int			stream;
} item;

static int
item_cmp(const void *a, const void *b)
{
	const item *x = a;
	const item *y = b;
	int			c = xxl_key_order(NULL, x->key, x->len, y->key, y->len);

	return c != 0 ? c : (x->stream > y->stream) - (x->stream < y->stream);
}

/*
 * A random key from a small alphabet: many ties, prefixes of one another;
 * seeds past 25 use zero and 0xff bytes and keys of 6 to 12 bytes that
 * share their first five and differ in the bytes after.
 */
static void
random_key(item *it, unsigned *seed, unsigned kind)
{
	static const unsigned char wide[] = {0x00, 0x01, 'a', 0xff};

	it->len = kind > 25 ? 6 + rand_r(seed) % 7 : rand_r(seed) % 4;
	for (uint32_t i = 0; i < it->len; i++)
		it->key[i] = kind > 25 ? (i < 5 ? 'a' : wide[rand_r(seed) % 4]) :
			(unsigned char) ('a' + rand_r(seed) % 3);
}

static void
merge_streams(int k, int max_len, bool cut, unsigned seed)
{
	unsigned	kind = seed;
	item	  **streams = calloc(k, sizeof(item *));
	int		   *lens = calloc(k, sizeof(int));
	int		   *at = calloc(k, sizeof(int));
	int			total = 0,
				out = 0;
	item	   *expect;
	xxl_heads  *h = xxl_heads_create(k, NULL);
	bool		ok = true;

	CHECK(h != NULL);
	for (int s = 0; s < k; s++)
	{
		lens[s] = rand_r(&seed) % (max_len + 1);
		if (cut && s % 3 == 0)
			lens[s] /= 2;		/* ended early: the rest never reaches the merge */
		streams[s] = calloc(lens[s] + 1, sizeof(item));
		for (int i = 0; i < lens[s]; i++)
		{
			random_key(&streams[s][i], &seed, kind);
			streams[s][i].stream = s;
		}
		qsort(streams[s], lens[s], sizeof(item), item_cmp);
		total += lens[s];
	}
	expect = calloc(total + 1, sizeof(item));
	for (int s = 0, n = 0; s < k; s++)
		for (int i = 0; i < lens[s]; i++)
			expect[n++] = streams[s][i];
	qsort(expect, total, sizeof(item), item_cmp);

	for (int s = 0; s < k; s++)
		if (lens[s] > 0)
			xxl_heads_set(h, s, streams[s][0].key, streams[s][0].len);
	for (int s; (s = xxl_heads_top(h)) >= 0; out++)
	{
		item	   *it = &streams[s][at[s]];

		if (out >= total || it->stream != expect[out].stream ||
			item_cmp(it, &expect[out]) != 0)
			ok = false;
		if (++at[s] < lens[s])
			xxl_heads_set(h, s, streams[s][at[s]].key, streams[s][at[s]].len);
		else
			xxl_heads_end(h, s);
	}
	CHECK(ok);
	CHECK(out == total);
	xxl_heads_end(h, 0);		/* ending an ended stream changes nothing */
	CHECK(xxl_heads_top(h) == -1);
	xxl_heads_free(h);
	for (int s = 0; s < k; s++)
		free(streams[s]);
	free(streams);
	free(lens);
	free(at);
	free(expect);
}

XT_TEST(heads_few_streams)
{
	for (unsigned seed = 1; seed <= 50; seed++)
		merge_streams(1 + seed % 4, 40, false, seed);
}

XT_TEST(heads_many_streams)
{
	for (unsigned seed = 1; seed <= 10; seed++)
		merge_streams(64 + seed, 200, seed % 2 == 0, seed);
}

/* A stream ended while others still have records: the rest merge on. */
XT_TEST(heads_end_in_the_middle)
{
	static const unsigned char a[] = "a",
				b[] = "b",
				c[] = "c";
	xxl_heads  *h = xxl_heads_create(3, NULL);

	xxl_heads_set(h, 0, b, 1);
	xxl_heads_set(h, 1, a, 1);
	xxl_heads_set(h, 2, c, 1);
	CHECK(xxl_heads_top(h) == 1);
	xxl_heads_end(h, 0);
	CHECK(xxl_heads_top(h) == 1);
	xxl_heads_end(h, 1);
	CHECK(xxl_heads_top(h) == 2);
	xxl_heads_set(h, 2, a, 0);	/* a new, smaller head */
	CHECK(xxl_heads_top(h) == 2);
	xxl_heads_set(h, 0, a, 0);	/* an equal head: the lower stream first */
	CHECK(xxl_heads_top(h) == 0);
	xxl_heads_free(h);
}

/* Keys compared column by column, a descending byte column: order reversed. */
XT_TEST(heads_column_compare)
{
	xxl_keycol	col = {.kind = XXL_KEYCOL_BYTES};
	xxl_key_compare kc = {.ncols = 1, .cols = &col};
	/* flag 0, length 1, one byte: DESC comes inverted, as the glue makes it */
	unsigned char k1[] = {0, 0, 0, 0, 1, 0xFF - 'x'};
	unsigned char k2[] = {0, 0, 0, 0, 1, 0xFF - 'y'};
	unsigned char knull[] = {1, 0, 0, 0, 0};
	xxl_heads  *h = xxl_heads_create(3, &kc);

	xxl_heads_set(h, 0, k1, sizeof(k1));
	xxl_heads_set(h, 1, k2, sizeof(k2));
	xxl_heads_set(h, 2, knull, sizeof(knull));
	CHECK(xxl_heads_top(h) == 1);
	xxl_heads_end(h, 1);
	CHECK(xxl_heads_top(h) == 0);
	xxl_heads_end(h, 0);
	CHECK(xxl_heads_top(h) == 2);
	xxl_heads_free(h);
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
