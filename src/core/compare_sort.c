/*
 * compare_sort.c — run formation for keys that are compared, not radix
 * sorted (xxl_keycmp.h).  Each entry carries its key's abbreviation, made
 * as the record came in; where the abbreviations vary, a stable radix sort
 * by them orders the entries (MSD, a digit at a time from the top bit that
 * varies) and comparisons only order each run of equal ones, else a stable merge
 * sort compares every pair, each thread sorting a slice, then slices
 * merged pairwise.  OpenMP threads start with every signal blocked, as in
 * radix.c.
 */
#include "core/radix.h"
#include "core/xxl_common.h"
#include "core/xxl_keycmp.h"

#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct cmp_ctx
{
	const char *arena;
	size_t		key_offset;
	const xxl_key_compare *kc;
} cmp_ctx;

/* Where slice t of slices equal slices of n entries begins. */
static inline size_t
slice_start(size_t n, int t, int slices)
{
	return n * (size_t) t / (size_t) slices;
}

static inline const unsigned char *
entry_key(const cmp_ctx *cx, const xxl_sort_entry *e)
{
	return (const unsigned char *) cx->arena + (size_t) e->ref * 8 + cx->key_offset;
}

static inline int
entry_cmp(const cmp_ctx *cx, const xxl_sort_entry *a, const xxl_sort_entry *b)
{
	/* the abbreviations decide where they differ (xxl_key_abbrev) */
	if (a->prefix != b->prefix)
		return a->prefix < b->prefix ? -1 : 1;
	return xxl_key_compare_keys(cx->kc, entry_key(cx, a), a->key_len, entry_key(cx, b), b->key_len);
}

/*
 * How far ahead merge_halves fetches the keys it will compare: entries
 * are in order but their keys lie anywhere in the arena, so above the
 * cache's size every comparison would wait for one (a fifth of a libc
 * collated sort's time went there).
 */
#define MERGE_AHEAD 3

static inline void
prefetch_key(const cmp_ctx *cx, const xxl_sort_entry *e)
{
	__builtin_prefetch(entry_key(cx, e));
}

/* Merge e[0, h) and e[h, n), both sorted, in place; tmp holds h entries. */
static void
merge_halves(const cmp_ctx *cx, xxl_sort_entry *e, xxl_sort_entry *tmp, size_t h, size_t n)
{
	size_t		i = 0,
				j = h,
				k = 0;

	if (h == 0 || h == n || entry_cmp(cx, &e[h - 1], &e[h]) <= 0)
		return;					/* already in order */
	memcpy(tmp, e, h * sizeof(*e));
	for (size_t a = 1; a <= MERGE_AHEAD; a++)
	{
		if (a < h)
			prefetch_key(cx, &tmp[a]);
		if (h + a < n)
			prefetch_key(cx, &e[h + a]);
	}
	/* the left run wins ties: stable */
	while (i < h && j < n)
	{
		if (entry_cmp(cx, &e[j], &tmp[i]) < 0)
		{
			if (j + MERGE_AHEAD + 1 < n)
				prefetch_key(cx, &e[j + MERGE_AHEAD + 1]);
			e[k++] = e[j++];
		}
		else
		{
			if (i + MERGE_AHEAD + 1 < h)
				prefetch_key(cx, &tmp[i + MERGE_AHEAD + 1]);
			e[k++] = tmp[i++];
		}
	}
	while (i < h)
		e[k++] = tmp[i++];
}

/*
 * Stable binary insertion sort of e[0, n): about log2(n!) comparisons
 * (45 for 16 entries, where a linear insertion makes about 77), and
 * comparisons are what a collated key costs.
 */
static void
binary_insertion(const cmp_ctx *cx, xxl_sort_entry *e, size_t n)
{
	for (size_t i = 1; i < n; i++)
	{
		xxl_sort_entry x = e[i];
		size_t		lo = 0,
					hi = i;

		/* the first place whose entry is greater: after its equals */
		while (lo < hi)
		{
			size_t		mid = lo + (hi - lo) / 2;

			if (entry_cmp(cx, &e[mid], &x) > 0)
				hi = mid;
			else
				lo = mid + 1;
		}
		memmove(e + lo + 1, e + lo, (i - lo) * sizeof(*e));
		e[lo] = x;
	}
}

static void
merge_sort(const cmp_ctx *cx, xxl_sort_entry *e, xxl_sort_entry *tmp, size_t n)
{
	if (n <= 16)
	{
		binary_insertion(cx, e, n);
		return;
	}
	merge_sort(cx, e, tmp, n / 2);
	merge_sort(cx, e + n / 2, tmp + n / 2, n - n / 2);
	merge_halves(cx, e, tmp, n / 2, n);
}

/*
 * Radix digits of abbreviations: at most 11 bits, fewer for a small
 * bucket (about 8 entries a bucket: a bucket of 100 is not worth 2048
 * counters), and below this many entries an insertion sort.
 */
#define ABBREV_DIGIT 11
#define ABBREV_BUCKETS (1 << ABBREV_DIGIT)
#define ABBREV_SMALL 24

/* The digit of prefix p whose lowest bit is shift, bits wide. */
static inline unsigned
abbrev_digit(uint64_t p, int shift, int bits)
{
	return (unsigned) (p >> shift) & ((1u << bits) - 1);
}

/* The digit's width for n entries. */
static inline int
abbrev_bits(size_t n)
{
	int			log2n = 63 - __builtin_clzll((uint64_t) n | 1);

	return log2n - 3 < 4 ? 4 : log2n - 3 > ABBREV_DIGIT ? ABBREV_DIGIT : log2n - 3;
}

/* Where a digit bits wide that ends at the top bit that varies begins. */
static inline int
abbrev_shift(uint64_t diff, int bits)
{
	int			hi = 63 - __builtin_clzll(diff);

	return hi >= bits - 1 ? hi - (bits - 1) : 0;
}

/* Stable insertion sort of e[0, n) by abbreviation. */
static void
insertion_by_abbrev(xxl_sort_entry *e, size_t n)
{
	for (size_t i = 1; i < n; i++)
	{
		xxl_sort_entry x = e[i];
		size_t		j = i;

		while (j > 0 && e[j - 1].prefix > x.prefix)
		{
			e[j] = e[j - 1];
			j--;
		}
		e[j] = x;
	}
}

/*
 * Sort e[0, n) stably by abbreviation alone: MSD radix, a digit at a time
 * from the top bit that varies within the bucket, small buckets by
 * insertion.  Random integers leave buckets of a few entries after one or
 * two digits, where an LSD radix would pass over all the bits that vary.
 */
static void
msd_by_abbrev(xxl_sort_entry *e, xxl_sort_entry *tmp, size_t n)
{
	size_t		count[ABBREV_BUCKETS];
	uint64_t	diff = 0;
	size_t		sum = 0;
	int			bits = abbrev_bits(n);
	int			buckets = 1 << bits;
	int			shift;

	if (n <= ABBREV_SMALL)
	{
		insertion_by_abbrev(e, n);
		return;
	}
	for (size_t i = 1; i < n; i++)
		diff |= e[i].prefix ^ e[0].prefix;
	if (diff == 0)
		return;
	shift = abbrev_shift(diff, bits);
	memset(count, 0, buckets * sizeof(count[0]));
	for (size_t i = 0; i < n; i++)
		count[abbrev_digit(e[i].prefix, shift, bits)]++;
	for (int d = 0; d < buckets; d++)
	{
		size_t		c = count[d];

		count[d] = sum;
		sum += c;
	}
	for (size_t i = 0; i < n; i++)
		tmp[count[abbrev_digit(e[i].prefix, shift, bits)]++] = e[i];
	memcpy(e, tmp, n * sizeof(*e));
	if (shift == 0)
		return;					/* the digit held every bit left */
	/* count[d] is now where bucket d + 1 begins */
	for (int d = 0; d < buckets; d++)
	{
		size_t		b = d == 0 ? 0 : count[d - 1];

		if (count[d] - b > 1)
			msd_by_abbrev(e + b, tmp + b, count[d] - b);
	}
}

/*
 * Sort e[0, n) stably by abbreviation alone, on slices threads: the top
 * digit counted and scattered by every thread over its slice (each at its
 * own offsets, which keeps input order within a bucket), then the buckets
 * shared out and sorted on by msd_by_abbrev.  The caller blocked signals.
 */
/*
 * Slice t of e[0, n): its top digits counted into c, or, with tmp, its
 * entries moved to tmp at c's places (stable within the slice).
 */
static void
slice_digits(const xxl_sort_entry *e, xxl_sort_entry *tmp, size_t n, int t, int slices,
			 size_t *c, int shift)
{
	size_t		lo = slice_start(n, t, slices);
	size_t		hi = slice_start(n, t + 1, slices);

	if (tmp == NULL)
		for (size_t i = lo; i < hi; i++)
			c[abbrev_digit(e[i].prefix, shift, ABBREV_DIGIT)]++;
	else
		for (size_t i = lo; i < hi; i++)
			tmp[c[abbrev_digit(e[i].prefix, shift, ABBREV_DIGIT)]++] = e[i];
}

static void
radix_by_abbrev(xxl_sort_entry *e, xxl_sort_entry *tmp, size_t n, uint64_t diff, int slices)
{
	int			shift = abbrev_shift(diff, ABBREV_DIGIT);
	size_t	   *counts;
	size_t		starts[ABBREV_BUCKETS + 1];

	if (slices == 1)
	{
		msd_by_abbrev(e, tmp, n);
		return;
	}
	counts = calloc((size_t) slices * ABBREV_BUCKETS, sizeof(size_t));
	if (counts == NULL)
	{
		msd_by_abbrev(e, tmp, n);	/* the same order, one thread */
		return;
	}
	XXL_OMP_PARALLEL(for schedule(static, 1) num_threads(slices))
	for (int t = 0; t < slices; t++)
		slice_digits(e, NULL, n, t, slices, counts + (size_t) t * ABBREV_BUCKETS, shift);
	/* slice t of bucket d goes after bucket d's slices before t */
	{
		size_t		sum = 0;

		for (int d = 0; d < ABBREV_BUCKETS; d++)
		{
			starts[d] = sum;
			for (int t = 0; t < slices; t++)
			{
				size_t		c = counts[(size_t) t * ABBREV_BUCKETS + d];

				counts[(size_t) t * ABBREV_BUCKETS + d] = sum;
				sum += c;
			}
		}
		starts[ABBREV_BUCKETS] = sum;
	}
	XXL_OMP_PARALLEL(for schedule(static, 1) num_threads(slices))
	for (int t = 0; t < slices; t++)
		slice_digits(e, tmp, n, t, slices, counts + (size_t) t * ABBREV_BUCKETS, shift);
	free(counts);
	if (shift == 0)
	{
		memcpy(e, tmp, n * sizeof(*e));
		return;
	}
	XXL_OMP_PARALLEL(for schedule(dynamic, 16) num_threads(slices))
	for (int d = 0; d < ABBREV_BUCKETS; d++)
	{
		size_t		b = starts[d],
					m = starts[d + 1] - starts[d];

		memcpy(e + b, tmp + b, m * sizeof(*e));
		if (m > 1)
			msd_by_abbrev(e + b, tmp + b, m);
	}
}

/*
 * Sort each run of equal abbreviations in e[lo, hi) by comparisons, but
 * for runs of big entries or more (left for the parallel sort).
 */
static void
sort_ties(const cmp_ctx *cx, xxl_sort_entry *e, xxl_sort_entry *tmp, size_t lo, size_t hi,
		  size_t big)
{
	while (lo < hi)
	{
		size_t		end = lo + 1;

		while (end < hi && e[end].prefix == e[lo].prefix)
			end++;
		if (end - lo > 1 && end - lo < big)
			merge_sort(cx, e + lo, tmp + lo, end - lo);
		lo = end;
	}
}

/* Where slice t of e[0, n) begins: at the start of a run of equal abbreviations. */
static size_t
tie_slice_start(const xxl_sort_entry *e, size_t n, int t, int slices)
{
	size_t		i = slice_start(n, t, slices);

	while (i > 0 && i < n && e[i].prefix == e[i - 1].prefix)
		i++;
	return i;
}

/*
 * The stable merge sort of e[0, n) by comparisons, on slices threads;
 * the caller has blocked signals (xxl_compare_sort_entries).
 */
static void
merge_sort_parallel(const cmp_ctx *cx, xxl_sort_entry *e, xxl_sort_entry *tmp, size_t n,
					int slices)
{
	if (slices == 1)
	{
		merge_sort(cx, e, tmp, n);
		return;
	}
	XXL_OMP_PARALLEL(for schedule(static, 1) num_threads(slices))
	for (int t = 0; t < slices; t++)
	{
		size_t		lo = slice_start(n, t, slices);
		size_t		hi = slice_start(n, t + 1, slices);

		merge_sort(cx, e + lo, tmp + lo, hi - lo);
	}
	/* slices of width w merged pairwise into slices of width 2w */
	for (int w = 1; w < slices; w *= 2)
	{
		XXL_OMP_PARALLEL(for schedule(static, 1) num_threads(slices))
		for (int t = 0; t < slices; t += 2 * w)
		{
			size_t		lo = slice_start(n, t, slices);
			int			mid_t = t + w < slices ? t + w : slices;
			int			hi_t = t + 2 * w < slices ? t + 2 * w : slices;
			size_t		mid = slice_start(n, mid_t, slices);
			size_t		hi = slice_start(n, hi_t, slices);

			merge_halves(cx, e + lo, tmp + lo, mid - lo, hi - lo);
		}
	}
}

void
xxl_compare_sort_entries(xxl_sort_entry *entries, xxl_sort_entry *scratch, size_t n,
						 const char *arena, size_t key_offset, const xxl_key_compare *kc,
						 int threads)
{
	cmp_ctx		cx = {arena, key_offset, kc};
	int			slices = threads > 1 && n >= XXL_RADIX_PARALLEL_MIN ? threads : 1;
	size_t		big = slices > 1 ? XXL_RADIX_PARALLEL_MIN : SIZE_MAX;
	uint64_t	diff = 0;

	for (size_t i = 1; i < n; i++)
		diff |= entries[i].prefix ^ entries[0].prefix;
	if (diff == 0)
	{
		/* all tie (a libc string first): every pair compares */
		merge_sort_parallel(&cx, entries, scratch, n, slices);
		return;
	}

	/*
	 * Abbreviations that vary order the entries by themselves where they
	 * differ (a key that leads with an integer: all of them): a radix sort
	 * by them, then comparisons within each run of equal ones, as the radix
	 * sort of byte keys compares only within runs of equal bytes.  Small
	 * runs are shared out over the threads; big ones (a flag that only
	 * NULLs change) get all threads each.
	 */
	radix_by_abbrev(entries, scratch, n, diff, slices);
	XXL_OMP_PARALLEL(for schedule(static, 1) num_threads(slices))
	for (int t = 0; t < slices; t++)
		sort_ties(&cx, entries, scratch, tie_slice_start(entries, n, t, slices),
				  tie_slice_start(entries, n, t + 1, slices), big);
	for (size_t lo = 0; big != SIZE_MAX && lo < n;)
	{
		size_t		end = lo + 1;

		while (end < n && entries[end].prefix == entries[lo].prefix)
			end++;
		if (end - lo >= big)
			merge_sort_parallel(&cx, entries + lo, scratch + lo, end - lo, slices);
		lo = end;
	}
}
