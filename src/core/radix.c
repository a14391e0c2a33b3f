/*
 * radix.c — run formation's in-memory sorts (see radix.h).
 *
 * OpenMP threads are started with every signal blocked: the backend that
 * hosts the engine must never have a signal handler run on one of them.
 */
#include "core/radix.h"
#include "core/record.h"
#include "core/xxl_stream.h"
#include "core/xxl_common.h"

#include <omp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * Record sizes with their own instance; anything else goes through rt_*_any.
 * 13, 15 and 18 are the suffix array's triples and mod-0 tuples (3-byte names
 * with 4-byte ranks; bytes with ranks, positions and the preceding byte).
 * The one list: the instances and the dispatch below both come from it.
 */
#define RT_SIZES(X, ...) \
	X(8, __VA_ARGS__) X(12, __VA_ARGS__) X(13, __VA_ARGS__) X(15, __VA_ARGS__) \
	X(16, __VA_ARGS__) X(18, __VA_ARGS__) X(24, __VA_ARGS__) X(32, __VA_ARGS__)

/*
 * Where the share of OpenMP thread k of n items begins (k = the team's
 * size: n): contiguous shares in thread order keep a distribution stable.
 */
static inline size_t
omp_share_start(size_t n, int k)
{
	return n * (size_t) k / (size_t) omp_get_num_threads();
}

#define EACH_LIST RT_SIZES
#define EACH_TEMPLATE "core/radix_template.h"
#include "core/template_each.h"
#undef EACH_LIST
#undef EACH_TEMPLATE
#define RT_SUFFIX any
#define RT_RECORD_SIZE 0
#include "core/radix_template.h"

#define RT_CASE_(size, fn, args) case size: fn##_r##size args; break;
#define RT_DISPATCH(record_size, fn, args) \
	switch (record_size) \
	{ \
		RT_SIZES(RT_CASE_, fn, args) \
		default: fn##_any args; break; \
	}

void
xxl_radix_sort_fixed(char *records, char *scratch, size_t n, size_t record_size,
					 size_t key_size, int threads, bool into_scratch)
{
	RT_DISPATCH(record_size, rt_sort,
				(records, scratch, n, record_size, key_size, threads, into_scratch));
}

size_t
xxl_radix_distribute_fixed(char *records, char *dst, size_t n, size_t record_size,
						   size_t key_size, int threads, size_t bucket_start[257])
{
	size_t		depth = 0;

	RT_DISPATCH(record_size, depth = rt_distribute,
				(records, dst, n, record_size, key_size, threads, bucket_start));
	return depth;
}

void
xxl_radix_sort_large_buckets(char *dist, char *scratch, const size_t bucket_start[257],
							 size_t record_size, size_t key_size, size_t depth, int threads,
							 size_t min_bytes)
{
	RT_DISPATCH(record_size, rt_sort_buckets,
				(dist, scratch, bucket_start, record_size, key_size, depth, threads, min_bytes,
				 false));
}

void
xxl_radix_sort_bucket(char *bucket, char *scratch, size_t n, size_t record_size,
					  size_t key_size, size_t depth)
{
	RT_DISPATCH(record_size, rt_sort_bucket,
				(bucket, scratch, n, record_size, key_size, depth));
}

/* Entries of variable-length records ------------------------------------ */

typedef struct entry_ctx
{
	const char *arena;
	size_t		key_offset;
} entry_ctx;

static inline const unsigned char *
entry_key(const entry_ctx *cx, const xxl_sort_entry *e)
{
	return (const unsigned char *) cx->arena + (size_t) e->ref * 8 + cx->key_offset;
}

/* 0 when the key ends before depth, else 1 + the key byte at depth. */
static inline unsigned
entry_digit(const xxl_sort_entry *e, size_t depth)
{
	if (depth >= e->key_len)
		return 0;
	return 1 + (unsigned) ((e->prefix >> (56 - 8 * (depth & 7))) & 0xFF);
}

static void
refresh_prefixes(const entry_ctx *cx, xxl_sort_entry *e, size_t n, size_t depth)
{
	for (size_t i = 0; i < n; i++)
		e[i].prefix = depth < e[i].key_len
			? xxl_key_prefix(entry_key(cx, &e[i]) + depth, e[i].key_len - depth)
			: 0;
}

static int
entry_compare(const entry_ctx *cx, const xxl_sort_entry *a, const xxl_sort_entry *b,
			  size_t depth)
{
	size_t		common = a->key_len < b->key_len ? a->key_len : b->key_len;
	int			c = 0;

	if (common > depth)
		c = memcmp(entry_key(cx, a) + depth, entry_key(cx, b) + depth, common - depth);
	if (c != 0)
		return c;
	return (a->key_len > b->key_len) - (a->key_len < b->key_len);
}

/*
 * entry_compare, decided by the prefix words where they differ: entries of
 * one bucket share every key byte before depth, so their prefix words (the
 * 8 bytes from depth rounded down, zero-padded past a key's end) order them
 * as the keys do whenever they differ, without touching the records.
 */
static inline int
entry_compare_prefixed(const entry_ctx *cx, const xxl_sort_entry *a, const xxl_sort_entry *b,
					   size_t depth)
{
	if (a->prefix != b->prefix)
		return a->prefix < b->prefix ? -1 : 1;
	return entry_compare(cx, a, b, depth);
}

static void
entry_insertion(const entry_ctx *cx, xxl_sort_entry *a, size_t n, size_t depth)
{
	for (size_t i = 1; i < n; i++)
	{
		xxl_sort_entry tmp = a[i];
		size_t		j = i;

		while (j > 0 && entry_compare_prefixed(cx, &a[j - 1], &tmp, depth) > 0)
		{
			a[j] = a[j - 1];
			j--;
		}
		a[j] = tmp;
	}
}

static void
entry_rec(const entry_ctx *cx, xxl_sort_entry *src, xxl_sort_entry *dst, size_t n,
		  size_t depth, bool fresh, bool want_dst)
{
	size_t		count[257];

	for (;;)
	{
		size_t		pos;
		unsigned	d0;

		/* the prefix words must hold the bytes at depth, for both paths below */
		if (depth > 0 && (depth & 7) == 0 && !fresh)
			refresh_prefixes(cx, src, n, depth);
		if (n <= XXL_RADIX_SMALL)
		{
			if (want_dst)
				memcpy(dst, src, n * sizeof(*src));
			entry_insertion(cx, want_dst ? dst : src, n, depth);
			return;
		}
		fresh = false;
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[entry_digit(&src[i], depth)]++;
		d0 = entry_digit(&src[0], depth);
		if (count[d0] == n)
		{
			size_t		word_end = (depth | 7) + 1;
			uint64_t	rest = ~UINT64_C(0) >> (8 * (depth & 7));
			size_t		i;

			if (d0 == 0)
			{
				/* every key ended: all equal, input order stands */
				if (want_dst)
					memcpy(dst, src, n * sizeof(*src));
				return;
			}
			/*
			 * One byte in common: keys with a long common prefix (a text
			 * column's equal values) share the rest of the prefix word too,
			 * which one pass shows, instead of a counting pass per byte.
			 */
			for (i = 0; i < n; i++)
				if (src[i].key_len < word_end || ((src[i].prefix ^ src[0].prefix) & rest) != 0)
					break;
			depth = i == n ? word_end : depth + 1;
			continue;
		}
		pos = 0;
		for (int b = 0; b < 257; b++)
		{
			size_t		c = count[b];

			count[b] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[entry_digit(&src[i], depth)]++] = src[i];
		pos = 0;
		for (int b = 0; b < 257; b++)
		{
			size_t		end = count[b];

			if (end > pos)
				entry_rec(cx, dst + pos, src + pos, end - pos, depth + 1, false, !want_dst);
			pos = end;
		}
		return;
	}
}

/*
 * The first depth at which keys of e[0..n) may differ, with every entry's
 * prefix word holding the word of that depth.  Keys that share their first
 * bytes (a text column whose values start alike, a report's "customer ...")
 * would otherwise all fall into one bucket of the first byte, and the
 * parallel split below would leave one thread all the work.
 */
static size_t
first_varying_depth(const entry_ctx *cx, xxl_sort_entry *e, size_t n)
{
	uint32_t	min_len = UINT32_MAX,
				max_len = 0;
	uint64_t	diff = 0;
	size_t		depth = 0;

	for (size_t i = 0; i < n; i++)
	{
		diff |= e[i].prefix ^ e[0].prefix;
		min_len = e[i].key_len < min_len ? e[i].key_len : min_len;
		max_len = e[i].key_len > max_len ? e[i].key_len : max_len;
	}
	for (;;)
	{
		size_t		same = diff == 0 ? 8 : (size_t) __builtin_clzll(diff) / 8;

		/* a key that ends sorts before the keys it is a prefix of: it varies there */
		if (depth + same > min_len)
			return min_len;
		if (same < 8 || depth + 8 >= max_len)
			return depth + same;
		/* the next word of every key, and where they differ in it: one pass */
		depth += 8;
		refresh_prefixes(cx, e, 1, depth);
		diff = 0;
		for (size_t i = 1; i < n; i++)
		{
			refresh_prefixes(cx, &e[i], 1, depth);
			diff |= e[i].prefix ^ e[0].prefix;
		}
	}
}

void
xxl_radix_sort_entries(xxl_sort_entry *entries, xxl_sort_entry *scratch, size_t n,
					   const char *arena, size_t key_offset, int threads)
{
	entry_ctx	cx = {arena, key_offset};
	size_t		(*counts)[257] = NULL;
	size_t		bucket_start[258];
	size_t		depth;

	if (threads > 1 && n >= XXL_RADIX_PARALLEL_MIN)
		counts = calloc((size_t) threads, sizeof(*counts));
	if (counts == NULL)
	{
		entry_rec(&cx, entries, scratch, n, 0, true, false);
		return;
	}

	/* parallel distribution on the first byte that varies, as in radix_template.h */
	depth = first_varying_depth(&cx, entries, n);
	XXL_OMP_PARALLEL(num_threads(threads))
	{
		int			t = omp_get_thread_num();
		size_t		lo = omp_share_start(n, t);
		size_t		hi = omp_share_start(n, t + 1);

		for (size_t i = lo; i < hi; i++)
			counts[t][entry_digit(&entries[i], depth)]++;
	}
	{
		size_t		pos = 0;

		for (int b = 0; b < 257; b++)
		{
			bucket_start[b] = pos;
			for (int t = 0; t < threads; t++)
			{
				size_t		c = counts[t][b];

				counts[t][b] = pos;
				pos += c;
			}
		}
		bucket_start[257] = pos;
	}
	XXL_OMP_PARALLEL(num_threads(threads))
	{
		int			t = omp_get_thread_num();
		size_t		lo = omp_share_start(n, t);
		size_t		hi = omp_share_start(n, t + 1);

		for (size_t i = lo; i < hi; i++)
			scratch[counts[t][entry_digit(&entries[i], depth)]++] = entries[i];
	}
	XXL_OMP_PARALLEL(for schedule(dynamic, 1) num_threads(threads))
	for (int b = 0; b < 257; b++)
	{
		size_t		lo = bucket_start[b];
		size_t		hi = bucket_start[b + 1];

		if (hi > lo)
			entry_rec(&cx, scratch + lo, entries + lo, hi - lo, depth + 1, false, true);
	}
	free(counts);
}
