/*
 * xxl_dsort.h — external distribution sort (sample sort): fixed-size records
 * with a key of up to 16 bytes, sorted within a memory budget without a
 * merge.
 *
 * The input is staged on disk as it comes (in memory if it all fits) while
 * every k-th key is kept as a sample — or, when the caller can offer the
 * sample beforehand (presampled), distributed as it comes; the sample gives splitters
 * (a key that fills a bucket of the sample on its own gets an equality
 * bucket, which needs no sorting), the staged records are distributed to
 * their buckets (one write buffer each, block chains on disk), and each
 * bucket is read back, radix sorted in memory and handed out as one array.
 * Buckets are sized to half of what memory can sort, so that sampling noise
 * does not overfill them; a bucket that is overfilled all the same is sorted
 * by the core sorter (xxl_sort.h).  Cost: two sequential passes of I/O
 * (stage, distribute) and one in-memory radix sort per record — no loser
 * tree, which is where an external merge sort at a small budget spends its
 * time.  Input that fits the budget is sorted in memory and never written.
 *
 * Keys compare as unsigned byte strings (memcmp).  The sort is stable.  The
 * cancel hook is polled every 65,536 records and between blocks.
 */
#ifndef XXL_DSORT_H
#define XXL_DSORT_H

#include "core/xxl_io.h"

#define XXL_DSORT_MAX_KEY 16
#define XXL_DSORT_MAX_RECORD 1024

typedef struct xxl_dsort_config
{
	size_t		memory;			/* budget in bytes for every buffer */
	size_t		output_memory;	/* of that, what it may hold once sorted, while
								 * the records are handed out (0 = memory):
								 * an operator whose other parts need memory
								 * then can lend the sort more for distributing */
	size_t		record_size;	/* 1..XXL_DSORT_MAX_RECORD */
	size_t		key_size;		/* 1..XXL_DSORT_MAX_KEY, the record's first bytes */
	uint64_t	records;		/* at most this many will be put (sizes the buckets) */
	xxl_disk_config disk;		/* block_size: the largest buffer (0 = 1 MB) */
	xxl_cancel_fn cancel;		/* may be NULL */
	void	   *cancel_arg;
	bool		presampled;		/* the caller offers a sample of the keys first
								 * (xxl_dsort_sample): records are then
								 * distributed as they are put, not staged */
	bool		async;			/* stage or distribute on a worker thread
								 * (xxl_pipe.h) while the caller puts; taken
								 * where the pipe's 512 kB are at most an
								 * eighth of the memory */
	int			oversample;		/* sample keys per bucket; 0 = the default (64);
								 * tests use 1 to provoke overfull buckets */
	bool		caller_buckets;	/* presampled and async: the caller finds each
								 * record's bucket, the worker only copies it
								 * there (for a caller that would wait) */
	bool		test_caller_sorts;	/* tests: the thread that starts a bucket's
									 * sort leaves every part to the other one
									 * (the worker sorting ahead to the caller,
									 * the caller to its helper) */
} xxl_dsort_config;

typedef struct xxl_dsort_stats
{
	uint64_t	records;
	uint64_t	buckets;		/* 0 when sorted in memory */
	uint64_t	equal_buckets;	/* buckets of one key */
	uint64_t	overflows;		/* buckets sorted by the core sorter */
	uint64_t	short_keys;		/* buckets of 9..16-byte keys sorted on 8 bytes */
	bool		async;			/* records were taken by a worker */
	bool		sorted_ahead;	/* a worker sorted the next bucket while the
								 * caller read one */
	bool		caller_buckets;	/* the caller found the records' buckets */
	uint64_t	helped_parts;	/* parts of buckets (up to 256 each) a second
								 * thread sorted: the caller for a worker
								 * sorting ahead instead of waiting, a helper
								 * for a caller sorting */
	uint64_t	pipe_wait_ns;	/* the caller waited for the worker */
	uint64_t	largest_bucket;	/* records */
	uint64_t	bucket_capacity;	/* records a bucket can take in memory */
	size_t		block_size;		/* write buffer of each bucket */
	uint64_t	memory_peak;
	uint64_t	memory_limit;
	uint64_t	output_peak;	/* the most held once sorted */
	xxl_io_stats io;			/* staging, buckets and overflow sorts */
} xxl_dsort_stats;

typedef struct xxl_dsort xxl_dsort;

xxl_dsort  *xxl_dsort_create(const xxl_dsort_config *config, xxl_error *err);
/* Whether a sort so configured works within its memory (for planning). */
bool		xxl_dsort_fits(const xxl_dsort_config *config);
/* The most memory it will use (at most config.memory). */
size_t		xxl_dsort_memory(const xxl_dsort *s);

/*
 * The most it holds in each phase: while records are put (input), during
 * xxl_dsort_sort (distribute) and afterwards (output, at most
 * config.output_memory); for operators that charge memory by phase.
 */
void		xxl_dsort_phase_memory(const xxl_dsort *s, size_t *input, size_t *distribute,
								   size_t *output);

/*
 * Presampled sorts: offer the key (key_size bytes) of every stride-th
 * record of the coming input, before the first record; a stride of 0 means
 * no sample is needed (the input is sorted in memory).
 */
uint64_t	xxl_dsort_sample_stride(const xxl_dsort *s);
/* The stride a sort so configured will ask for (0 if none or if it does not fit). */
uint64_t	xxl_dsort_plan_stride(const xxl_dsort_config *config);
xxl_status	xxl_dsort_sample(xxl_dsort *s, const void *key);

xxl_status	xxl_dsort_put(xxl_dsort *s, const void *rec);
/* n records at once (back to back): one call, one check. */
xxl_status	xxl_dsort_put_many(xxl_dsort *s, const void *recs, size_t n);
/* End of input. */
xxl_status	xxl_dsort_sort(xxl_dsort *s);

/*
 * The next records in key order as one array: *recs points at *count > 0
 * records.  Returns 1, 0 at the end, or a negative value on error.  The
 * array stays valid until the next call.
 */
int			xxl_dsort_read(xxl_dsort *s, const void **recs, size_t *count);

const xxl_error *xxl_dsort_error(const xxl_dsort *s);
void		xxl_dsort_stats_get(const xxl_dsort *s, xxl_dsort_stats *stats);
/* Waits for I/O in flight, removes spill files, frees all memory.  Safe at any point. */
void		xxl_dsort_destroy(xxl_dsort *s);

#endif							/* XXL_DSORT_H */
