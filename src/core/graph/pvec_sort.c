/*
 * pvec_sort.c — an in-place MSD radix sort (American flag sort) of a chunked
 * array's records by their leading key bytes (idmap.h).
 *
 * Why in place: the in-memory minimum spanning forest keeps one sort record
 * per edge, and a sort with scratch would double what the edges hold (and
 * push graphs that fit onto the semi-external path).  The sort is not
 * stable: callers make every key
 * distinct (the MSF's key ends with the input position).
 *
 * The first byte that varies is distributed on the calling thread; its
 * buckets are then sorted by OpenMP threads, started with every signal
 * blocked as everywhere in the engine.
 */
#include "core/graph/idmap.h"

#include <omp.h>
#include <pthread.h>
#include <string.h>

/* Buckets this small are finished by insertion sort. */
#define SMALL 32

/* Records are handled whole on the stack (idmap.h: PVEC_SORT_MAX_REC). */
#define MAX_REC PVEC_SORT_MAX_REC

static inline unsigned char *
rec(const pvec *v, uint64_t i)
{
	return pvec_at(v, i);
}

/* A record copy; the common sizes compile to a few moves instead of a call. */
static inline void
copy(void *dst, const void *src, size_t n)
{
	switch (n)
	{
		case 16:
			memcpy(dst, src, 16);
			break;
		case 24:
			memcpy(dst, src, 24);
			break;
		case 32:
			memcpy(dst, src, 32);
			break;
		default:
			memcpy(dst, src, n);
	}
}

static void
insertion(const pvec *v, uint64_t lo, uint64_t n, size_t key, size_t depth)
{
	unsigned char tmp[MAX_REC];
	size_t		klen = key - depth;

	for (uint64_t i = lo + 1; i < lo + n; i++)
	{
		uint64_t	j = i;

		if (memcmp(rec(v, i - 1) + depth, rec(v, i) + depth, klen) <= 0)
			continue;
		copy(tmp, rec(v, i), v->elem);
		while (j > lo && memcmp(rec(v, j - 1) + depth, tmp + depth, klen) > 0)
		{
			copy(rec(v, j), rec(v, j - 1), v->elem);
			j--;
		}
		copy(rec(v, j), tmp, v->elem);
	}
}

/* Whether byte depth is the same in 64 samples of [lo, lo + n). */
static bool
looks_constant(const pvec *v, uint64_t lo, uint64_t n, size_t depth)
{
	unsigned char first = rec(v, lo)[depth];

	for (uint64_t s = 1; s <= 64; s++)
		if (rec(v, lo + (n - 1) * s / 64)[depth] != first)
			return false;
	return true;
}

/*
 * Distribute [lo, lo + n) on the first byte from *depth on that varies:
 * false when the keys are equal from *depth on (nothing to do), else true
 * with end[b] the end of bucket b and *depth that byte.
 */
static bool
distribute(const pvec *v, uint64_t lo, uint64_t n, size_t key, size_t *depth, uint64_t end[256])
{
	uint64_t	next[256];
	unsigned char buf[2][MAX_REC];
	uint64_t	pos = lo;

	for (;;)
	{
		/* a byte that looks constant (a cost's sign and exponent) is counted with the next */
		bool		pair = *depth + 1 < key && looks_constant(v, lo, n, *depth);
		uint64_t	second[256];

		if (*depth >= key)
			return false;
		memset(end, 0, 256 * sizeof(uint64_t));
		if (pair)
		{
			memset(second, 0, sizeof(second));
			for (uint64_t i = lo; i < lo + n; i++)
			{
				const unsigned char *r = rec(v, i);

				end[r[*depth]]++;
				second[r[*depth + 1]]++;
			}
		}
		else
			for (uint64_t i = lo; i < lo + n; i++)
				end[rec(v, i)[*depth]]++;
		if (end[rec(v, lo)[*depth]] != n)
			break;
		(*depth)++;
		if (pair)
		{
			memcpy(end, second, sizeof(second));
			if (end[rec(v, lo)[*depth]] != n)
				break;
			(*depth)++;
		}
	}
	for (int b = 0; b < 256; b++)
	{
		next[b] = pos;
		pos += end[b];
		end[b] = pos;
	}

	/*
	 * The record in hand goes to the next free slot of its bucket and the
	 * one found there comes into hand (the other buffer), until a record of
	 * bucket b arrives.
	 */
	for (int b = 0; b < 256; b++)
		while (next[b] < end[b])
		{
			unsigned char *slot = rec(v, next[b]);
			unsigned	d = slot[*depth];
			int			h = 0;

			if (d == (unsigned) b)
			{
				next[b]++;
				continue;
			}
			copy(buf[h], slot, v->elem);
			do
			{
				unsigned char *to = rec(v, next[d]++);

				/* the bucket's next slots, for the next record that goes there */
				if (next[d] + 2 < end[d])
					__builtin_prefetch(rec(v, next[d] + 2), 1);
				copy(buf[1 - h], to, v->elem);
				copy(to, buf[h], v->elem);
				h = 1 - h;
				d = buf[h][*depth];
			} while (d != (unsigned) b);
			copy(slot, buf[h], v->elem);
			next[b]++;
		}
	return true;
}

static void
sort_range(const pvec *v, uint64_t lo, uint64_t n, size_t key, size_t depth)
{
	uint64_t	end[256];
	uint64_t	start = lo;

	if (n <= SMALL)
	{
		insertion(v, lo, n, key, depth);
		return;
	}
	if (!distribute(v, lo, n, key, &depth, end))
		return;
	for (int b = 0; b < 256; b++)
	{
		if (end[b] - start > 1)
			sort_range(v, start, end[b] - start, key, depth + 1);
		start = end[b];
	}
}

void
pvec_sort(pvec *v, size_t key_size, int threads)
{
	uint64_t	end[256];
	size_t		depth = 0;

	if (v->n <= SMALL)
	{
		insertion(v, 0, v->n, key_size, 0);
		return;
	}
	if (!distribute(v, 0, v->n, key_size, &depth, end))
		return;
	XXL_OMP_PARALLEL(for schedule(dynamic, 1) num_threads(threads > 0 ? threads : 1))
	for (int b = 0; b < 256; b++)
	{
		uint64_t	start = b == 0 ? 0 : end[b - 1];

		if (end[b] - start > 1)
			sort_range(v, start, end[b] - start, key_size, depth + 1);
	}
}
