/*
 * record.h — helpers for fixed-size records shared by run formation
 * (radix_template.h, sort.c) and merging (merge.c): copies of a record whose
 * size is known only at run time, and keys of up to 16 bytes loaded as
 * big-endian integers so that they compare without memcmp.
 *
 * A key of 9..16 bytes is the pair (hi, lo): hi its first 8 bytes, lo the 8
 * bytes that end the key.  The two overlap for keys shorter than 16 bytes,
 * but the overlap is harmless, because lo is only ever compared when the hi
 * words are equal, and it saves reading past the key: a record at the end of
 * an allocation may be shorter than 16 bytes.
 */
#ifndef XXL_RECORD_H
#define XXL_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Longest key the integer paths take (radix digits, batched merge). */
#define XXL_INT_KEY_MAX 16

static inline uint64_t
xxl_load_be64(const void *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

/*
 * Copy one record of size bytes.  libc's memcpy is a call per record when
 * the size is not a constant; small records are moved here with overlapping
 * word loads instead (every load happens before any store).
 */
static inline void
xxl_record_copy(void *dst, const void *src, size_t size)
{
	char	   *d = dst;
	const char *s = src;

	if (size >= 8 && size <= 16)
	{
		uint64_t	a,
					b;

		memcpy(&a, s, 8);
		memcpy(&b, s + size - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + size - 8, &b, 8);
	}
	else if (size > 16 && size <= 32)
	{
		uint64_t	a,
					b,
					c,
					e;

		memcpy(&a, s, 8);
		memcpy(&b, s + 8, 8);
		memcpy(&c, s + size - 16, 8);
		memcpy(&e, s + size - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + 8, &b, 8);
		memcpy(d + size - 16, &c, 8);
		memcpy(d + size - 8, &e, 8);
	}
	else
		memcpy(d, s, size);
}

/*
 * The key of a record with key_size <= 8 as a big-endian integer, zero
 * padded (the 8-byte prefix); one load when the record has 8 bytes to read.
 */
static inline uint64_t
xxl_key64(const unsigned char *rec, size_t rec_size, size_t key_size)
{
	uint64_t	p = 0;

	if (key_size == 8)
		return xxl_load_be64(rec);
	if (key_size == 0)
		return 0;
	if (rec_size >= 8)
		return xxl_load_be64(rec) & (~UINT64_C(0) << (64 - 8 * key_size));
	for (size_t i = 0; i < key_size; i++)
		p |= (uint64_t) rec[i] << (56 - 8 * i);
	return p;
}

/* The low word of a key of 9..16 bytes (see the head of this file). */
static inline uint64_t
xxl_key_lo(const unsigned char *rec, size_t key_size)
{
	return xxl_load_be64(rec + key_size - 8);
}

#endif							/* XXL_RECORD_H */
