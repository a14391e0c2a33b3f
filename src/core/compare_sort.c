/*
 * compare_sort.c — run formation for keys that are compared, not radix
 * sorted (xxl_keycmp.h): a stable merge sort of the variable-length
 * records' entries (radix.h), each thread sorting a slice, then slices
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

/* The entries' prefixes become their keys' abbreviations (nothing else reads them here). */
static void
abbreviate(const cmp_ctx *cx, xxl_sort_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		e[i].prefix = xxl_key_abbrev(cx->kc, entry_key(cx, &e[i]), e[i].key_len);
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
	/* the left run wins ties: stable */
	while (i < h && j < n)
		e[k++] = entry_cmp(cx, &e[j], &tmp[i]) < 0 ? e[j++] : tmp[i++];
	while (i < h)
		e[k++] = tmp[i++];
}

static void
merge_sort(const cmp_ctx *cx, xxl_sort_entry *e, xxl_sort_entry *tmp, size_t n)
{
	if (n <= 16)
	{
		for (size_t i = 1; i < n; i++)
		{
			xxl_sort_entry x = e[i];
			size_t		j = i;

			while (j > 0 && entry_cmp(cx, &e[j - 1], &x) > 0)
			{
				e[j] = e[j - 1];
				j--;
			}
			e[j] = x;
		}
		return;
	}
	merge_sort(cx, e, tmp, n / 2);
	merge_sort(cx, e + n / 2, tmp + n / 2, n - n / 2);
	merge_halves(cx, e, tmp, n / 2, n);
}

void
xxl_compare_sort_entries(xxl_sort_entry *entries, xxl_sort_entry *scratch, size_t n,
						 const char *arena, size_t key_offset, const xxl_key_compare *kc,
						 int threads)
{
	cmp_ctx		cx = {arena, key_offset, kc};
	int			slices = threads > 1 && n >= XXL_RADIX_PARALLEL_MIN ? threads : 1;
	xxl_sigmask mask;

	if (slices == 1)
	{
		abbreviate(&cx, entries, n);
		merge_sort(&cx, entries, scratch, n);
		return;
	}
	xxl_signals_block(&mask);
#pragma omp parallel for schedule(static, 1) num_threads(threads)
	for (int t = 0; t < slices; t++)
	{
		size_t		lo = n * (size_t) t / (size_t) slices;
		size_t		hi = n * (size_t) (t + 1) / (size_t) slices;

		abbreviate(&cx, entries + lo, hi - lo);
		merge_sort(&cx, entries + lo, scratch + lo, hi - lo);
	}
	/* slices of width w merged pairwise into slices of width 2w */
	for (int w = 1; w < slices; w *= 2)
	{
#pragma omp parallel for schedule(static, 1) num_threads(threads)
		for (int t = 0; t < slices; t += 2 * w)
		{
			size_t		lo = n * (size_t) t / (size_t) slices;
			int			mid_t = t + w < slices ? t + w : slices;
			int			hi_t = t + 2 * w < slices ? t + 2 * w : slices;
			size_t		mid = n * (size_t) mid_t / (size_t) slices;
			size_t		hi = n * (size_t) hi_t / (size_t) slices;

			merge_halves(&cx, entries + lo, scratch + lo, mid - lo, hi - lo);
		}
	}
	xxl_signals_restore(&mask);
}
