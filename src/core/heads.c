/*
 * heads.c — the merge of the heads of sorted streams (xxl_heads.h): a
 * binary heap of the streams that have a head, with each stream's place
 * in it, so that a new head sifts from where the old one was.
 */
#include <stdlib.h>
#include <string.h>

#include "core/xxl_heads.h"

typedef struct head
{
	uint64_t	pre;			/* byte keys: the first 8 bytes as a number */
	const unsigned char *key;
	uint32_t	len;
	int			pos;			/* in heap, or -1 */
} head;

struct xxl_heads
{
	const xxl_key_compare *kc;
	int			k;
	int			n;				/* streams in the heap */
	int		   *heap;			/* stream numbers, smallest head first */
	head	   *heads;
};

xxl_heads *
xxl_heads_create(int k, const xxl_key_compare *kc)
{
	xxl_heads  *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return NULL;
	h->kc = kc;
	h->k = k;
	h->heap = calloc(k > 0 ? k : 1, sizeof(int));
	h->heads = calloc(k > 0 ? k : 1, sizeof(head));
	if (h->heap == NULL || h->heads == NULL)
	{
		xxl_heads_free(h);
		return NULL;
	}
	for (int i = 0; i < k; i++)
		h->heads[i].pos = -1;
	return h;
}

void
xxl_heads_free(xxl_heads *h)
{
	if (h == NULL)
		return;
	free(h->heap);
	free(h->heads);
	free(h);
}

/*
 * Byte keys compare their first 8 bytes as numbers held in the heads
 * (zero-padded, big-endian), and the whole keys only where those tie: most
 * steps of a merge decide there, with no load through the keys' pointers.
 */
static inline uint64_t
prefix(const unsigned char *key, uint32_t len)
{
	uint64_t	v = 0;

	if (len >= 8)
	{
		memcpy(&v, key, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		v = __builtin_bswap64(v);
#endif
		return v;
	}
	for (uint32_t i = 0; i < len; i++)
		v |= (uint64_t) key[i] << (56 - 8 * i);
	return v;
}

static inline bool
less(const xxl_heads *h, int a, int b)
{
	const head *x = &h->heads[a];
	const head *y = &h->heads[b];
	int			c;

	if (h->kc == NULL && x->pre != y->pre)
		return x->pre < y->pre;
	c = xxl_key_order(h->kc, x->key, x->len, y->key, y->len);
	return c != 0 ? c < 0 : a < b;
}

static inline void
place(xxl_heads *h, int at, int stream)
{
	h->heap[at] = stream;
	h->heads[stream].pos = at;
}

static void
sift_up(xxl_heads *h, int at)
{
	int			s = h->heap[at];

	while (at > 0 && less(h, s, h->heap[(at - 1) / 2]))
	{
		place(h, at, h->heap[(at - 1) / 2]);
		at = (at - 1) / 2;
	}
	place(h, at, s);
}

static void
sift_down(xxl_heads *h, int at)
{
	int			s = h->heap[at];

	for (;;)
	{
		int			c = 2 * at + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && less(h, h->heap[c + 1], h->heap[c]))
			c++;
		if (!less(h, h->heap[c], s))
			break;
		place(h, at, h->heap[c]);
		at = c;
	}
	place(h, at, s);
}

void
xxl_heads_set(xxl_heads *h, int i, const unsigned char *key, uint32_t len)
{
	head	   *e = &h->heads[i];

	e->key = key;
	e->len = len;
	if (h->kc == NULL)
		e->pre = prefix(key, len);
	if (e->pos < 0)
	{
		place(h, h->n++, i);
		sift_up(h, e->pos);
		return;
	}
	sift_up(h, e->pos);
	sift_down(h, e->pos);
}

void
xxl_heads_end(xxl_heads *h, int i)
{
	int			at = h->heads[i].pos;
	int			last;

	if (at < 0)
		return;
	h->heads[i].pos = -1;
	last = h->heap[--h->n];
	if (at == h->n)
		return;
	place(h, at, last);
	sift_up(h, at);
	sift_down(h, h->heads[last].pos);
}

int
xxl_heads_top(const xxl_heads *h)
{
	return h->n > 0 ? h->heap[0] : -1;
}
