/*
 * radix_template.h — a stable MSD radix sort of fixed-size records,
 * instantiated once per common record size so that record moves compile to
 * constant-size copies (the sort_template.h pattern of PostgreSQL).
 *
 * Before including, define:
 *   RT_RECORD_SIZE  record size in bytes, or 0 for "take it from the argument"
 *                   (included through template_each.h: EACH_VALUE)
 *   RT_SUFFIX       name suffix of the generated functions (default:
 *                   r<size>)
 *
 * Generated: static void rt_sort_<suffix>(records, scratch, n, record_size,
 *                                         key_size, threads, into_scratch)
 * and its two halves for callers that want the input buffer back after the
 * first distribution: rt_distribute_<suffix>, rt_sort_buckets_<suffix> (the
 * large buckets, in parallel) and rt_sort_bucket_<suffix> (one bucket).
 *
 * Needs record.h (word loads, run-time-size record copies).
 */
#define RT_CAT_(a, b) a##b
#define RT_CAT(a, b) RT_CAT_(a, b)
#ifndef RT_RECORD_SIZE
#define RT_RECORD_SIZE EACH_VALUE
#endif
#ifndef RT_SUFFIX
#define RT_SUFFIX RT_CAT(r, RT_RECORD_SIZE)
#endif
#define RT_REC RT_CAT(rt_rec_, RT_SUFFIX)
#define RT_INSERTION RT_CAT(rt_insertion_, RT_SUFFIX)
#define RT_SORT RT_CAT(rt_sort_, RT_SUFFIX)
#define RT_REC_INT RT_CAT(rt_rec_int_, RT_SUFFIX)
#define RT_DISTRIBUTE RT_CAT(rt_distribute_, RT_SUFFIX)
#define RT_SORT_BUCKETS RT_CAT(rt_sort_buckets_, RT_SUFFIX)
#define RT_SORT_BUCKET RT_CAT(rt_sort_bucket_, RT_SUFFIX)
#if RT_RECORD_SIZE > 0
#define RT_R ((size_t) RT_RECORD_SIZE)
#define RT_COPY(d, s) memcpy((d), (s), RT_R)
#else
#define RT_R r_param
#define RT_COPY(d, s) xxl_copy_small((d), (s), r_param)
#endif

#ifndef RT_WORD_DEFINED
#define RT_WORD_DEFINED
static inline uint64_t
rt_word(const char *p)
{
	return xxl_load_be64(p);
}

/*
 * Does byte depth look the same in every record?  64 samples decide;
 * wrong guesses cost nothing but a second counter per record.
 */
static inline bool
rt_byte_looks_constant(const char *records, size_t n, size_t rec_size, size_t depth)
{
	char		first = records[depth];

	for (size_t s = 1; s <= 64; s++)
		if (records[(n - 1) * s / 64 * rec_size + depth] != first)
			return false;
	return true;
}

/* Whether the thread-split counts say every record has byte value first. */
static inline bool
rt_counts_single(size_t (*counts)[256], int threads, unsigned char first, size_t n)
{
	size_t		total = 0;

	for (int t = 0; t < threads; t++)
		total += counts[t][first];
	return total == n;
}
#endif

/* Stable insertion sort on key bytes [depth, key_size): keys too long for RT_REC_INT. */
static void
RT_INSERTION(char *a, size_t n, size_t r_param, size_t key_size, size_t depth)
{
	char		tmp[XXL_RADIX_MAX_FIXED];
	size_t		klen = key_size - depth;

	(void) r_param;
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
 * Keys of at most 16 bytes, records of at least 8: the key is sorted as
 * integers, digit by digit, with a digit width that adapts to the bucket so
 * that buckets end small (about 4 records) after few passes.  The current
 * key word is rt_word(p + koff) >> (64 - kbits), kbits wide, of which the
 * low rem bits are not yet distributed on.  A key of 9..16 bytes is two
 * words (record.h): first the 8 bytes at its start (koff 0), with next_bits
 * the low bits of the word ending the key still to come, then that word
 * (koff key_size - 8, next_bits 0).  A digit never straddles the two.
 */
static void
RT_REC_INT(char *src, char *dst, size_t n, size_t r_param, size_t key_size, size_t koff,
		   int kbits, int rem, int next_bits, bool want_dst)
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

		if (rem == 0 && next_bits > 0 && n > XXL_RADIX_SMALL_INT)
		{
			/* the first word is used up: go on with the word ending the key */
			koff = key_size - 8;
			kbits = 64;
			rem = next_bits;
			next_bits = 0;
			continue;
		}
		if (n <= XXL_RADIX_SMALL_INT || rem == 0)
		{
			char	   *a = want_dst ? dst : src;
			uint64_t	mask = rem >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << rem) - 1;

			if (want_dst)
				memcpy(dst, src, n * RT_R);
			if (next_bits > 0)
			{
				/* both words: (first, last) pairs; distributed bits are equal */
				size_t		lo_off = key_size - 8;

				for (size_t i = 1; i < n; i++)
				{
					char	   *cur = a + i * RT_R;
					uint64_t	hi = rt_word(cur);
					uint64_t	lo = rt_word(cur + lo_off);
					uint64_t	phi = rt_word(cur - RT_R);
					size_t		j = i;

					if (phi < hi || (phi == hi && rt_word(cur - RT_R + lo_off) <= lo))
						continue;
					RT_COPY(tmp, cur);
					while (j > 0)
					{
						const char *q = a + (j - 1) * RT_R;
						uint64_t	qhi = rt_word(q);

						if (qhi < hi || (qhi == hi && rt_word(q + lo_off) <= lo))
							break;
						RT_COPY(a + j * RT_R, q);
						j--;
					}
					RT_COPY(a + j * RT_R, tmp);
				}
				return;
			}
			for (size_t i = 1; rem > 0 && i < n; i++)
			{
				char	   *cur = a + i * RT_R;
				uint64_t	key = (rt_word(cur + koff) >> (64 - kbits)) & mask;
				size_t		j = i;

				if (((rt_word(cur - RT_R + koff) >> (64 - kbits)) & mask) <= key)
					continue;
				RT_COPY(tmp, cur);
				while (j > 0 && ((rt_word(a + (j - 1) * RT_R + koff) >> (64 - kbits)) & mask) > key)
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
#define RT_DIGIT(p) ((size_t) ((rt_word((p) + koff) >> (64 - kbits + rem - bits)) & (nb - 1)))
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
				RT_REC_INT(dst + pos * RT_R, src + pos * RT_R, end - pos, r_param, key_size, koff,
						   kbits, rem - bits, next_bits, !want_dst);
			pos = end;
		}
		return;
	}
}

/* Sort src from byte depth on, choosing an integer path when one applies. */
static inline void
RT_CAT(rt_rest_, RT_SUFFIX) (char *src, char *dst, size_t n, size_t r_param, size_t key_size,
							 size_t depth, bool want_dst)
{
	if (RT_R < 8 || key_size > XXL_INT_KEY_MAX)
		RT_REC(src, dst, n, r_param, key_size, depth, want_dst);
	else if (key_size <= 8)
		RT_REC_INT(src, dst, n, r_param, key_size, 0, (int) (8 * key_size),
				   (int) (8 * (key_size - depth)), 0, want_dst);
	else if (depth < 8)
		RT_REC_INT(src, dst, n, r_param, key_size, 0, 64, (int) (64 - 8 * depth),
				   (int) (8 * (key_size - 8)), want_dst);
	else
		RT_REC_INT(src, dst, n, r_param, key_size, key_size - 8, 64, (int) (8 * (key_size - depth)),
				   0, want_dst);
}

/*
 * Top level, first half: distribute records into dst on the first key byte
 * that varies, split over threads (each thread counts and moves a contiguous
 * slice, offsets bucket-major, thread-minor: the order of equal keys is
 * kept).  Returns that byte's depth with bucket_start[0..256] filled, or
 * key_size when every key is equal (then nothing moves).
 *
 * When the first varying bit lies in the key's first word, the digit is
 * the 8 bits from that bit on instead of its byte: integers far below their
 * type's range vary in a few bits of their first varying byte (ids up to
 * 50M in 2 bits of the fourth, a / 16 of a below 10^12 in 4), which made a
 * few large buckets, each too large for the run worker's scratch.  A bucket
 * still holds keys equal up to the end of byte depth, so the buckets' sorts
 * go on from byte depth + 1 either way.
 */
static size_t
RT_DISTRIBUTE(char *records, char *dst, size_t n, size_t r_param, size_t key_size, int threads,
			  size_t bucket_start[257])
{
	size_t		depth = 0;
	size_t		local[2][256];
	size_t		(*counts)[256] = NULL;
	size_t		(*next_counts)[256];
	bool		bitwise = false;	/* the digit: 8 bits from the first varying one */
	int			shift = 0;

#define RT_DIG(r) (bitwise ? (size_t) ((rt_word(r) >> shift) & 0xFF) \
				   : (size_t) (unsigned char) (r)[depth])
	(void) r_param;
	if (threads > 1)
		counts = calloc(2 * (size_t) threads, sizeof(*counts));
	if (counts == NULL)
	{
		threads = 1;
		counts = local;
	}
	next_counts = counts + threads;
	if (RT_R >= 8 && key_size >= 8 && n > 1)
	{
		uint64_t	w0 = rt_word(records);
		uint64_t	diff = 0;

		XXL_OMP_PARALLEL(for reduction(|:diff) num_threads(threads))
		for (size_t i = 1; i < n; i++)
			diff |= rt_word(records + i * RT_R) ^ w0;
		if (diff != 0)
		{
			int			fvb = __builtin_clzll(diff);

			shift = fvb > 56 ? 0 : 56 - fvb;
			depth = (size_t) fvb / 8;
			bitwise = true;
			memset(counts, 0, (size_t) threads * sizeof(*counts));
			XXL_OMP_PARALLEL(num_threads(threads))
			{
				int			t = omp_get_thread_num();
				size_t		lo = omp_share_start(n, t);
				size_t		hi = omp_share_start(n, t + 1);

				for (size_t i = lo; i < hi; i++)
					counts[t][RT_DIG(records + i * RT_R)]++;
			}
			goto offsets;
		}
		depth = 8;				/* the first word is the same everywhere */
	}
	for (;;)
	{
		/*
		 * A leading byte that is the same everywhere (a null flag, a small
		 * first column) gives nothing to distribute on: when it looks like
		 * one, the pass counts the next byte too, so that it need not be
		 * read again.
		 */
		bool		pair;

		if (depth >= key_size)
			goto out;			/* all keys equal: input order is the sorted order */
		pair = depth + 1 < key_size && rt_byte_looks_constant(records, n, RT_R, depth);
		memset(counts, 0, (size_t) threads * sizeof(*counts));
		if (pair)
			memset(next_counts, 0, (size_t) threads * sizeof(*counts));
		XXL_OMP_PARALLEL(num_threads(threads))
		{
			int			t = omp_get_thread_num();
			size_t		lo = omp_share_start(n, t);
			size_t		hi = omp_share_start(n, t + 1);

			if (pair)
				for (size_t i = lo; i < hi; i++)
				{
					counts[t][(unsigned char) records[i * RT_R + depth]]++;
					next_counts[t][(unsigned char) records[i * RT_R + depth + 1]]++;
				}
			else
				for (size_t i = lo; i < hi; i++)
					counts[t][(unsigned char) records[i * RT_R + depth]]++;
		}
		if (!rt_counts_single(counts, threads, (unsigned char) records[depth], n))
			break;
		depth++;
		if (pair)
		{
			size_t		(*t)[256] = counts;

			counts = next_counts;
			next_counts = t;
			if (!rt_counts_single(counts, threads, (unsigned char) records[depth], n))
				break;
			depth++;
		}
	}

offsets:
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
	XXL_OMP_PARALLEL(num_threads(threads))
	{
		int			t = omp_get_thread_num();
		size_t		lo = omp_share_start(n, t);
		size_t		hi = omp_share_start(n, t + 1);
		size_t	   *pos = counts[t];

		for (size_t i = lo; i < hi; i++)
		{
			const char *r = records + i * RT_R;

			RT_COPY(dst + (pos[RT_DIG(r)]++) * RT_R, r);
		}
	}
#undef RT_DIG
out:
	if (counts != local && next_counts != local)
		free(counts < next_counts ? counts : next_counts);
	return depth;
}

/*
 * Top level, second half: sort (in parallel) every bucket of dist larger
 * than min_bytes by the key bytes after depth; other is as large as dist and
 * serves as scratch at the same offsets.  The result is in other if
 * result_in_other, else in dist.
 */
static void
RT_SORT_BUCKETS(char *dist, char *other, const size_t bucket_start[257], size_t r_param,
				size_t key_size, size_t depth, int threads, size_t min_bytes, bool result_in_other)
{
	(void) r_param;
	XXL_OMP_PARALLEL(for schedule(dynamic, 1) num_threads(threads))
	for (int b = 0; b < 256; b++)
	{
		size_t		lo = bucket_start[b];
		size_t		hi = bucket_start[b + 1];

		if (hi > lo && (hi - lo) * RT_R > min_bytes)
			RT_CAT(rt_rest_, RT_SUFFIX) (dist + lo * RT_R, other + lo * RT_R, hi - lo, r_param,
										 key_size, depth + 1, result_in_other);
	}
}

/* A bucket left by RT_DISTRIBUTE, sorted in place on one thread. */
static void
RT_SORT_BUCKET(char *bucket, char *scratch, size_t n, size_t r_param, size_t key_size,
			   size_t depth)
{
	if (depth + 1 < key_size && n > 1)
		RT_CAT(rt_rest_, RT_SUFFIX) (bucket, scratch, n, r_param, key_size, depth + 1, false);
}

/* Both halves: the whole sort. */
static void
RT_SORT(char *records, char *scratch, size_t n, size_t r_param, size_t key_size, int threads,
		bool into_scratch)
{
	size_t		bucket_start[257];
	size_t		depth;

	if (threads <= 1 || n < XXL_RADIX_PARALLEL_MIN)
	{
		RT_CAT(rt_rest_, RT_SUFFIX) (records, scratch, n, r_param, key_size, 0, into_scratch);
		return;
	}
	depth = RT_DISTRIBUTE(records, scratch, n, r_param, key_size, threads, bucket_start);
	if (depth >= key_size)
	{
		if (into_scratch)
			memcpy(scratch, records, n * RT_R);
		return;
	}
	RT_SORT_BUCKETS(scratch, records, bucket_start, r_param, key_size, depth, threads, 0,
					!into_scratch);
}

#undef RT_R
#undef RT_COPY
#undef RT_REC
#undef RT_INSERTION
#undef RT_SORT
#undef RT_REC_INT
#undef RT_DISTRIBUTE
#undef RT_SORT_BUCKETS
#undef RT_SORT_BUCKET
#undef RT_SUFFIX
#undef RT_RECORD_SIZE
