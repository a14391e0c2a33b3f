/*
 * radix.h — in-memory sorting for run formation: a stable MSD radix sort on
 * the key bytes, for fixed-size records (moved whole) and for the
 * (prefix, length, reference) entries that stand for variable-length records.
 * The top level is split over OpenMP threads.
 */
#ifndef XXL_RADIX_H
#define XXL_RADIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Buckets this small are finished by insertion sort. */
#define XXL_RADIX_SMALL 24
/* Fixed records with short keys compare as integers: larger buckets pay. */
#define XXL_RADIX_SMALL_FIXED 64
/* Integer keys: buckets this small get insertion sort; digits up to this wide. */
#define XXL_RADIX_SMALL_INT 16
#define XXL_RADIX_MAX_BITS 11
#define XXL_RADIX_CACHE_BYTES (512 * 1024)
/* Below this many records one thread is faster than starting a team. */
#define XXL_RADIX_PARALLEL_MIN 65536
/* Largest fixed record size the sorter accepts (record moves use the stack). */
#define XXL_RADIX_MAX_FIXED 1024

/*
 * Entry for a variable-length record: the 8 key bytes starting at the
 * current radix depth (big-endian, zero padded), the key length and the
 * record's position in the arena in units of 8 bytes.
 */
typedef struct xxl_sort_entry
{
	uint64_t	prefix;
	uint32_t	key_len;
	uint32_t	ref;
} xxl_sort_entry;

/*
 * Sort n records of record_size bytes by their first key_size bytes.  The
 * result is in scratch if into_scratch, else in records.
 */
void		xxl_radix_sort_fixed(char *records, char *scratch, size_t n,
								 size_t record_size, size_t key_size, int threads,
								 bool into_scratch);

/*
 * The same sort in two steps, for run formation that hands the rest of the
 * work to another thread and wants its input buffer back early:
 *
 * xxl_radix_distribute_fixed moves records into dst by the first key byte
 * that varies (threads share the pass) and returns that byte's depth, with
 * bucket_start[b]..bucket_start[b + 1] the records of bucket b; it returns
 * key_size if every key is equal, and then moves nothing.
 * xxl_radix_sort_large_buckets sorts, in parallel and in place, the buckets
 * of dst larger than min_bytes, with scratch (as large as dst) as scratch.
 * xxl_radix_sort_bucket sorts one bucket in place on the calling thread
 * (no OpenMP), scratch holding at least n records.
 */
size_t		xxl_radix_distribute_fixed(char *records, char *dst, size_t n, size_t record_size,
									   size_t key_size, int threads, size_t bucket_start[257]);
void		xxl_radix_sort_large_buckets(char *dst, char *scratch, const size_t bucket_start[257],
										 size_t record_size, size_t key_size, size_t depth,
										 int threads, size_t min_bytes);
void		xxl_radix_sort_bucket(char *bucket, char *scratch, size_t n, size_t record_size,
								  size_t key_size, size_t depth);

/*
 * Sort entries; arena + 8*ref points at the record whose key starts
 * key_offset bytes later.  On return every entry's prefix is unspecified.
 */
void		xxl_radix_sort_entries(xxl_sort_entry *entries, xxl_sort_entry *scratch,
								   size_t n, const char *arena, size_t key_offset,
								   int threads);

/*
 * The same for keys compared by kc instead of memcmp, stable: a radix sort
 * by the keys' abbreviations where they vary, comparisons within their
 * ties (compare_sort.c).  The entries' prefixes must be their keys'
 * abbreviations (xxl_key_abbrev): the sorter makes them as records come
 * in, while each key is in the cache.
 */
struct xxl_key_compare;
void		xxl_compare_sort_entries(xxl_sort_entry *entries, xxl_sort_entry *scratch,
									 size_t n, const char *arena, size_t key_offset,
									 const struct xxl_key_compare *kc, int threads);

#endif							/* XXL_RADIX_H */
