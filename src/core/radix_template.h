/*
 * radix_template.h — a stable MSD radix sort of fixed-size records,
 * instantiated once per common record size so that record moves compile to
 * constant-size copies (the sort_template.h pattern of PostgreSQL).
 *
 * Before including, define:
 *   RT_SUFFIX       name suffix of the generated functions
 *   RT_RECORD_SIZE  record size in bytes, or 0 for "take it from the argument"
 *
 * Generated: static void rt_sort_<suffix>(records, scratch, n, record_size,
 *                                         key_size, threads, into_scratch)
 */
#define RT_CAT_(a, b) a##b
#define RT_CAT(a, b) RT_CAT_(a, b)
#define RT_REC RT_CAT(rt_rec_, RT_SUFFIX)
#define RT_INSERTION RT_CAT(rt_insertion_, RT_SUFFIX)
#define RT_SORT RT_CAT(rt_sort_, RT_SUFFIX)
#define RT_REC_INT RT_CAT(rt_rec_int_, RT_SUFFIX)
#if RT_RECORD_SIZE > 0
#define RT_R ((size_t) RT_RECORD_SIZE)
#define RT_COPY(dst, src) memcpy(dst, src, RT_R)
#else
#define RT_R r_param
/* a size known at run time: not a libc call per record */
#define RT_COPY(dst, src) xxl_copy_small(dst, src, RT_R)
#endif

#ifndef RT_WORD_DEFINED
#define RT_WORD_DEFINED
static inline uint64_t
rt_word(const char *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}
#endif

/* Stable insertion sort on key bytes [depth, key_size). */
static void
RT_INSERTION(char *a, size_t n, size_t r_param, size_t key_size, size_t depth)
{
	char		tmp[XXL_RADIX_MAX_FIXED];
	size_t		klen = key_size - depth;

	(void) r_param;
	if (key_size <= 8 && RT_R >= 8)
	{
		/* the whole key is one masked big-endian word (earlier bytes are equal) */
		uint64_t	mask = key_size ? ~UINT64_C(0) << (64 - 8 * key_size) : 0;

		for (size_t i = 1; i < n; i++)
		{
			char	   *cur = a + i * RT_R;
			uint64_t	key = rt_word(cur) & mask;
			size_t		j = i;

			if ((rt_word(cur - RT_R) & mask) <= key)
				continue;
			RT_COPY(tmp, cur);
			while (j > 0 && (rt_word(a + (j - 1) * RT_R) & mask) > key)
			{
				RT_COPY(a + j * RT_R, a + (j - 1) * RT_R);
				j--;
			}
			RT_COPY(a + j * RT_R, tmp);
		}
		return;
	}
	for (size_t i = 1; i < n; i++)
	{
		char	   *cur = a + i * RT_R;
		size_t		j = i;

		if (memcmp(cur - RT_R + depth, cur + depth, klen) <= 0)
			continue;
		RT_COPY(tmp, cur);
		while (j > 0 && memcmp(a + (j - 1) * RT_R + depth, tmp + depth, klen) > 0)
		{
			RT_COPY(a + j * RT_R, a + (j - 1) * RT_R);
			j--;
		}
		RT_COPY(a + j * RT_R, tmp);
	}
}

/*
 * Sort the n records in src by key bytes from depth on; the result ends up in
 * dst if want_dst, else in src.  The other buffer is scratch.
 */
static void
RT_REC(char *src, char *dst, size_t n, size_t r_param, size_t key_size, size_t depth,
	   bool want_dst)
{
	size_t		count[256];

	(void) r_param;
	for (;;)
	{
		size_t		pos;

		if (n <= XXL_RADIX_SMALL_FIXED || depth >= key_size)
		{
			if (want_dst)
				memcpy(dst, src, n * RT_R);
			if (depth < key_size)
				RT_INSERTION(want_dst ? dst : src, n, r_param, key_size, depth);
			return;
		}
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(unsigned char) src[i * RT_R + depth]]++;
		if (count[(unsigned char) src[depth]] == n)
		{
			depth++;			/* one value here: nothing to distribute */
			continue;
		}
		pos = 0;
		for (int b = 0; b < 256; b++)
		{
			size_t		c = count[b];

			count[b] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
		{
			const char *r = src + i * RT_R;

			RT_COPY(dst + (count[(unsigned char) r[depth]]++) * RT_R, r);
		}
		/* count[b] is now the end of bucket b */
		pos = 0;
		for (int b = 0; b < 256; b++)
		{
			size_t		end = count[b];

			if (end > pos)
				RT_REC(dst + pos * RT_R, src + pos * RT_R, end - pos, r_param, key_size,
					   depth + 1, !want_dst);
			pos = end;
		}
		return;
	}
}

/*
 * Keys of at most 8 bytes, records of at least 8: the key is an integer
 * (right-aligned, kbits wide) and the digit width adapts to the bucket so
 * that buckets end small (about 4 records) after few passes.  rem is the
 * number of low key bits not yet distributed on.
 */
static void
RT_REC_INT(char *src, char *dst, size_t n, size_t r_param, int kbits, int rem, bool want_dst)
{
	size_t		count[1 << XXL_RADIX_MAX_BITS];
	char		tmp[XXL_RADIX_MAX_FIXED];

	(void) r_param;
	for (;;)
	{
		int			bits;
		size_t		nb;
		size_t		pos;
		uint64_t	first;

		if (n <= XXL_RADIX_SMALL_INT || rem == 0)
		{
			char	   *a = want_dst ? dst : src;
			uint64_t	mask = rem >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << rem) - 1;

			if (want_dst)
				memcpy(dst, src, n * RT_R);
			for (size_t i = 1; rem > 0 && i < n; i++)
			{
				char	   *cur = a + i * RT_R;
				uint64_t	key = (rt_word(cur) >> (64 - kbits)) & mask;
				size_t		j = i;

				if (((rt_word(cur - RT_R) >> (64 - kbits)) & mask) <= key)
					continue;
				RT_COPY(tmp, cur);
				while (j > 0 && ((rt_word(a + (j - 1) * RT_R) >> (64 - kbits)) & mask) > key)
				{
					RT_COPY(a + j * RT_R, a + (j - 1) * RT_R);
					j--;
				}
				RT_COPY(a + j * RT_R, tmp);
			}
			return;
		}
		/* about n/4 buckets, within [8, MAX_BITS] bits and the bits left */
		bits = 64 - __builtin_clzll((unsigned long long) n) - 2;
		if (bits < 8)
			bits = 8;
		if (bits > XXL_RADIX_MAX_BITS)
			bits = XXL_RADIX_MAX_BITS;
		if (n * RT_R > XXL_RADIX_CACHE_BYTES)
			bits = 8;			/* out of cache, few write streams beat few passes */
		if (bits > rem)
			bits = rem;
		nb = (size_t) 1 << bits;
#define RT_DIGIT(p) ((size_t) ((rt_word(p) >> (64 - kbits + rem - bits)) & (nb - 1)))
		memset(count, 0, nb * sizeof(size_t));
		for (size_t i = 0; i < n; i++)
			count[RT_DIGIT(src + i * RT_R)]++;
		first = RT_DIGIT(src);
		if (count[first] == n)
		{
			rem -= bits;
			continue;
		}
		pos = 0;
		for (size_t b = 0; b < nb; b++)
		{
			size_t		c = count[b];

			count[b] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
		{
			const char *r = src + i * RT_R;

			RT_COPY(dst + (count[RT_DIGIT(r)]++) * RT_R, r);
		}
#undef RT_DIGIT
		pos = 0;
		for (size_t b = 0; b < nb; b++)
		{
			size_t		end = count[b];

			if (end > pos)
				RT_REC_INT(dst + pos * RT_R, src + pos * RT_R, end - pos, r_param, kbits,
						   rem - bits, !want_dst);
			pos = end;
		}
		return;
	}
}

/* Sort src from byte depth on, choosing the integer path when it applies. */
static inline void
RT_CAT(rt_rest_, RT_SUFFIX) (char *src, char *dst, size_t n, size_t r_param, size_t key_size,
							 size_t depth, bool want_dst)
{
	if (key_size <= 8 && RT_R >= 8)
		RT_REC_INT(src, dst, n, r_param, (int) (8 * key_size), (int) (8 * (key_size - depth)),
				   want_dst);
	else
		RT_REC(src, dst, n, r_param, key_size, depth, want_dst);
}

/*
 * Top level: the distribution on the first byte that varies is split over
 * threads (each thread counts and moves a contiguous slice, so the order of
 * equal keys is kept), then the buckets are sorted in parallel.
 */
static void
RT_SORT(char *records, char *scratch, size_t n, size_t r_param, size_t key_size, int threads,
		bool into_scratch)
{
	size_t		depth = 0;
	size_t		(*counts)[256];
	size_t		bucket_start[257];

	(void) r_param;
	if (threads <= 1 || n < XXL_RADIX_PARALLEL_MIN ||
		(counts = calloc((size_t) threads, sizeof(*counts))) == NULL)
	{
		RT_CAT(rt_rest_, RT_SUFFIX) (records, scratch, n, r_param, key_size, 0, into_scratch);
		return;
	}
	for (;; depth++)
	{
		bool		single = false;

		if (depth >= key_size)
		{
			/* all keys equal: input order is the sorted order */
			if (into_scratch)
				memcpy(scratch, records, n * RT_R);
			free(counts);
			return;
		}
		memset(counts, 0, (size_t) threads * sizeof(*counts));
#pragma omp parallel num_threads(threads)
		{
			int			t = omp_get_thread_num();
			int			nt = omp_get_num_threads();
			size_t		lo = n * (size_t) t / (size_t) nt;
			size_t		hi = n * (size_t) (t + 1) / (size_t) nt;

			for (size_t i = lo; i < hi; i++)
				counts[t][(unsigned char) records[i * RT_R + depth]]++;
		}
		{
			unsigned char first = (unsigned char) records[depth];
			size_t		total = 0;

			for (int t = 0; t < threads; t++)
				total += counts[t][first];
			single = (total == n);
		}
		if (!single)
			break;
	}

	/* offsets: bucket-major, thread-minor, which keeps the sort stable */
	{
		size_t		pos = 0;

		for (int b = 0; b < 256; b++)
		{
			bucket_start[b] = pos;
			for (int t = 0; t < threads; t++)
			{
				size_t		c = counts[t][b];

				counts[t][b] = pos;
				pos += c;
			}
		}
		bucket_start[256] = pos;
	}
#pragma omp parallel num_threads(threads)
	{
		int			t = omp_get_thread_num();
		int			nt = omp_get_num_threads();
		size_t		lo = n * (size_t) t / (size_t) nt;
		size_t		hi = n * (size_t) (t + 1) / (size_t) nt;
		size_t	   *pos = counts[t];

		for (size_t i = lo; i < hi; i++)
		{
			const char *r = records + i * RT_R;

			RT_COPY(scratch + (pos[(unsigned char) r[depth]]++) * RT_R, r);
		}
	}
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
	for (int b = 0; b < 256; b++)
	{
		size_t		lo = bucket_start[b];
		size_t		hi = bucket_start[b + 1];

		if (hi > lo)
			RT_CAT(rt_rest_, RT_SUFFIX) (scratch + lo * RT_R, records + lo * RT_R, hi - lo,
										 r_param, key_size, depth + 1, !into_scratch);
	}
	free(counts);
}

#undef RT_R
#undef RT_COPY
#undef RT_REC
#undef RT_INSERTION
#undef RT_SORT
#undef RT_REC_INT
#undef RT_SUFFIX
#undef RT_RECORD_SIZE
