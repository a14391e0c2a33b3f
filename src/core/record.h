/*
 * record.h — helpers for fixed-size records shared by run formation
 * (radix_template.h, sort.c) and merging (merge.c): keys of up to 16 bytes
 * loaded as big-endian integers so that they compare without memcmp.
 * (Copies of records whose size is known only at run time: xxl_copy_small,
 * xxl_common.h.)
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

static inline void
xxl_store_be64(void *p, uint64_t v)
{
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
}

/* int64 -> uint64 of the same order (sign bit flipped), and back. */
static inline uint64_t
xxl_signed_key(int64_t x)
{
	return (uint64_t) x ^ (UINT64_C(1) << 63);
}

static inline int64_t
xxl_key_signed(uint64_t k)
{
	return (int64_t) (k ^ (UINT64_C(1) << 63));
}

static inline uint32_t
xxl_load_be32(const void *p)
{
	uint32_t	v;

	memcpy(&v, p, 4);
	return __builtin_bswap32(v);
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
