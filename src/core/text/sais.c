/*
 * sais.c — in-memory suffix sorting by induced sorting (SA-IS, Nong, Zhang
 * and Chan 2009), the base case of external DC3 once a (sub)text fits the
 * budget.  It works on integer alphabets (the names of deeper DC3 levels) as
 * well as on bytes, needs the text plus the suffix array plus about n/4 bytes
 * of type bits and one bucket array, and recurses on the reduced string kept
 * inside the suffix array itself.
 */
#include "core/text/text_internal.h"

#include <string.h>

typedef struct sais_text
{
	const void *s;
	int			cs;
} sais_text;

static inline uint32_t
chr(sais_text t, int64_t i)
{
	switch (t.cs)
	{
		case 1:
			return ((const uint8_t *) t.s)[i];
		case 2:
			return ((const uint16_t *) t.s)[i];
		default:
			return ((const uint32_t *) t.s)[i];
	}
}

/* Type bits: 1 = S-type, 0 = L-type. */
static inline bool
tget(const uint8_t *t, int64_t i)
{
	return (t[i >> 3] >> (i & 7)) & 1;
}

static inline void
tset(uint8_t *t, int64_t i, bool b)
{
	if (b)
		t[i >> 3] |= (uint8_t) (1u << (i & 7));
	else
		t[i >> 3] &= (uint8_t) ~(1u << (i & 7));
}

static inline bool
is_lms(const uint8_t *t, int64_t i)
{
	return i > 0 && tget(t, i) && !tget(t, i - 1);
}

static void
get_buckets(sais_text s, int32_t *bkt, int64_t n, uint32_t K, bool end)
{
	int64_t		sum = 0;

	memset(bkt, 0, ((size_t) K + 1) * sizeof(int32_t));
	for (int64_t i = 0; i < n; i++)
		bkt[chr(s, i)]++;
	for (uint32_t i = 0; i <= K; i++)
	{
		sum += bkt[i];
		bkt[i] = (int32_t) (end ? sum : sum - bkt[i]);
	}
}

static void
induce_l(const uint8_t *t, int32_t *SA, sais_text s, int32_t *bkt, int64_t n, uint32_t K)
{
	get_buckets(s, bkt, n, K, false);
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		j = (int64_t) SA[i] - 1;

		if (SA[i] > 0 && !tget(t, j))
			SA[bkt[chr(s, j)]++] = (int32_t) j;
	}
}

static void
induce_s(const uint8_t *t, int32_t *SA, sais_text s, int32_t *bkt, int64_t n, uint32_t K)
{
	get_buckets(s, bkt, n, K, true);
	for (int64_t i = n - 1; i >= 0; i--)
	{
		int64_t		j = (int64_t) SA[i] - 1;

		if (SA[i] > 0 && tget(t, j))
			SA[--bkt[chr(s, j)]] = (int32_t) j;
	}
}

size_t
text_sais_scratch(int64_t n, uint32_t K)
{
	/* type bits of every recursion level, the largest bucket array, slack */
	size_t		bits = (size_t) (n / 4) + 64 * 16;
	size_t		bkt_top = ((size_t) K + 1) * sizeof(int32_t);
	size_t		bkt_rec = ((size_t) n / 2 + 1) * sizeof(int32_t);

	return XXL_ROUND_UP(bits, XXL_ALIGN) + XXL_ROUND_UP(bkt_top > bkt_rec ? bkt_top : bkt_rec, XXL_ALIGN)
		+ 4 * XXL_ALIGN;
}

static xxl_status
sais_rec(sais_text s, int32_t *SA, int64_t n, uint32_t K, xxl_budget *budget, xxl_error *err)
{
	size_t		tbytes = (size_t) n / 8 + 1;
	size_t		bbytes = ((size_t) K + 1) * sizeof(int32_t);
	uint8_t    *t;
	int32_t    *bkt;
	int64_t		n1 = 0;
	int64_t		name = 0;
	int64_t		prev = -1;
	int32_t    *SA1,
			   *s1;
	xxl_status	rc = XXL_OK;

	t = xxl_budget_alloc(budget, tbytes, err);
	if (t == NULL)
		return err->code;
	memset(t, 0, tbytes);

	/* classify: the sentinel is S, the character before it L */
	tset(t, n - 1, true);
	if (n >= 2)
		tset(t, n - 2, false);
	for (int64_t i = n - 3; i >= 0; i--)
	{
		uint32_t	a = chr(s, i),
					b = chr(s, i + 1);

		tset(t, i, a < b || (a == b && tget(t, i + 1)));
	}

	/* stage 1: sort the LMS substrings */
	bkt = xxl_budget_alloc(budget, bbytes, err);
	if (bkt == NULL)
	{
		xxl_budget_free(budget, t, tbytes);
		return err->code;
	}
	get_buckets(s, bkt, n, K, true);
	for (int64_t i = 0; i < n; i++)
		SA[i] = -1;
	for (int64_t i = 1; i < n; i++)
		if (is_lms(t, i))
			SA[--bkt[chr(s, i)]] = (int32_t) i;
	induce_l(t, SA, s, bkt, n, K);
	induce_s(t, SA, s, bkt, n, K);
	xxl_budget_free(budget, bkt, bbytes);

	/* compact the sorted LMS substrings into the first n1 slots */
	for (int64_t i = 0; i < n; i++)
		if (is_lms(t, SA[i]))
			SA[n1++] = SA[i];

	/* name them; names go to SA[n1 + pos/2] (LMS positions are >= 2 apart) */
	for (int64_t i = n1; i < n; i++)
		SA[i] = -1;
	for (int64_t i = 0; i < n1; i++)
	{
		int64_t		pos = SA[i];
		bool		diff = false;

		for (int64_t d = 0; d < n; d++)
		{
			if (prev == -1 || chr(s, pos + d) != chr(s, prev + d) ||
				tget(t, pos + d) != tget(t, prev + d))
			{
				diff = true;
				break;
			}
			else if (d > 0 && (is_lms(t, pos + d) || is_lms(t, prev + d)))
				break;
		}
		if (diff)
		{
			name++;
			prev = pos;
		}
		SA[n1 + pos / 2] = (int32_t) (name - 1);
	}
	for (int64_t i = n - 1, j = n - 1; i >= n1; i--)
		if (SA[i] >= 0)
			SA[j--] = SA[i];

	/* stage 2: sort the reduced string, recursively if names repeat */
	SA1 = SA;
	s1 = SA + n - n1;
	if (name < n1)
	{
		sais_text	r = {s1, 4};

		rc = sais_rec(r, SA1, n1, (uint32_t) (name - 1), budget, err);
		if (rc != XXL_OK)
		{
			xxl_budget_free(budget, t, tbytes);
			return rc;
		}
	}
	else
		for (int64_t i = 0; i < n1; i++)
			SA1[s1[i]] = (int32_t) i;

	/* stage 3: induce the full order from the sorted LMS suffixes */
	bkt = xxl_budget_alloc(budget, bbytes, err);
	if (bkt == NULL)
	{
		xxl_budget_free(budget, t, tbytes);
		return err->code;
	}
	get_buckets(s, bkt, n, K, true);
	for (int64_t i = 1, j = 0; i < n; i++)
		if (is_lms(t, i))
			s1[j++] = (int32_t) i;
	for (int64_t i = 0; i < n1; i++)
		SA1[i] = s1[SA1[i]];
	for (int64_t i = n1; i < n; i++)
		SA[i] = -1;
	for (int64_t i = n1 - 1; i >= 0; i--)
	{
		int32_t		j = SA[i];

		SA[i] = -1;
		SA[--bkt[chr(s, j)]] = j;
	}
	induce_l(t, SA, s, bkt, n, K);
	induce_s(t, SA, s, bkt, n, K);
	xxl_budget_free(budget, bkt, bbytes);
	xxl_budget_free(budget, t, tbytes);
	return XXL_OK;
}

xxl_status
text_sais(const void *s, int cs, int32_t *SA, int64_t n, uint32_t K, xxl_budget *budget,
		  xxl_error *err)
{
	sais_text	t = {s, cs};

	if (n <= 0)
		return XXL_OK;
	if (n == 1)
	{
		SA[0] = 0;
		return XXL_OK;
	}
	if (n >= INT32_MAX)
		return xxl_error_set(err, XXL_EINVAL, 0, "in-memory suffix sorting needs fewer than 2^31 characters");
	return sais_rec(t, SA, n, K, budget, err);
}
