/*
 * pq.h — an external priority queue of fixed-size records with a
 * memcmp-comparable key, within a fixed memory budget.
 *
 * Records are kept in an in-memory insertion heap; when it is full its
 * contents are radix sorted and written as a sorted run to the queue's own
 * spill files.  The smallest record is the smaller of the heap's top and the
 * smallest head of the runs (a second heap over the run heads); every run is
 * read through a prefetching block reader.  When the budget holds no further
 * run reader, the half of the runs with the fewest records left are merged
 * into one (a tiered merge: a record takes part in O(log_k(N/M)) merges with
 * k about half the run capacity), so one push or pop costs
 * O((1/B) log_k(N/M)) amortized I/Os like the thesis's sequence heap
 * (§3.4.5), with a simpler structure.  Blocks of a run are returned to the
 * block manager as soon as they have been consumed, so the spill space
 * follows the queue's size.
 *
 * Records with equal keys come out in an unspecified order.  The queue is
 * used by one thread; the cancel hook is polled between blocks of work.
 */
#ifndef XXL_PQ_H
#define XXL_PQ_H

#include "core/xxl_io.h"

typedef struct xxl_pq_config
{
	size_t		memory;			/* budget in bytes for every buffer */
	size_t		record_size;	/* bytes per record */
	size_t		key_size;		/* key bytes at the record's start (<= record_size) */
	int			threads;		/* OpenMP threads for sorting a full heap; 0 = default */
	xxl_disk_config disk;		/* where runs spill (opened at the first spill) */
	xxl_cancel_fn cancel;		/* may be NULL */
	void	   *cancel_arg;
} xxl_pq_config;

typedef struct xxl_pq_stats
{
	uint64_t	pushes;
	uint64_t	pops;
	uint64_t	size_peak;		/* most records held at once */
	uint64_t	runs;			/* sorted runs written from the insertion heap */
	uint64_t	merges;			/* run merges */
	uint64_t	merged_records; /* records rewritten by merges */
	int			max_runs;		/* run readers the budget holds at the longest lists */
	int			open_peak;		/* most runs open at once (short runs' lists cost less) */
	uint64_t	heap_capacity;	/* records the insertion heap holds */
	uint64_t	memory_peak;
	uint64_t	memory_limit;
	xxl_io_stats io;
} xxl_pq_stats;

typedef struct xxl_pq xxl_pq;

/* The smallest budget the queue accepts for a given block size. */
size_t		xxl_pq_min_memory(size_t block_size);

xxl_pq	   *xxl_pq_create(const xxl_pq_config *config, xxl_error *err);
xxl_status	xxl_pq_push(xxl_pq *pq, const void *rec);

/*
 * The smallest record: 1 with *rec pointing at it (valid until the next push
 * or pop), 0 if the queue is empty, -1 on error (see xxl_pq_error).
 */
int			xxl_pq_top(xxl_pq *pq, const void **rec);

/* Remove the smallest record, copying it to out (if not NULL): 1, 0 or -1. */
int			xxl_pq_pop(xxl_pq *pq, void *out);

uint64_t	xxl_pq_size(const xxl_pq *pq);
const xxl_error *xxl_pq_error(const xxl_pq *pq);
void		xxl_pq_get_stats(const xxl_pq *pq, xxl_pq_stats *stats);
/* Waits for reads in flight, removes spill files, frees all memory. */
void		xxl_pq_destroy(xxl_pq *pq);

#endif							/* XXL_PQ_H */
