/*
 * xxl_scatter.h — external permutation: fixed-size records, each put with
 * the slot (0..slots-1) it belongs to, come out in slot order.  Every slot
 * receives exactly one record.
 *
 * A permutation whose destinations are known needs no comparisons: records
 * are distributed to buckets of consecutive slots (one write buffer per
 * bucket; a permutation fills every bucket exactly, so each bucket owns one
 * contiguous file region sized up front), then each bucket is read back into
 * memory, every record copied to its slot, and the bucket handed out as one
 * contiguous array.  Cost: one write and one read of the records plus a few
 * bytes of slot offset per record; no runs, no merge, no run metadata — the
 * smallest budget grows with sqrt(slots * record_size) only.  A permutation
 * that fits the budget is placed directly and never written.
 *
 * The output can be read more than once (xxl_scatter_rewind).  A slot put
 * twice, a slot out of range or a slot left empty is an error (XXL_EINVAL),
 * reported by the put that overfills a bucket or when the bucket is read.
 * The cancel hook is polled every 65,536 records and between blocks.
 */
#ifndef XXL_SCATTER_H
#define XXL_SCATTER_H

#include "core/xxl_io.h"

#define XXL_SCATTER_MAX_RECORD 1024

typedef struct xxl_scatter_config
{
	size_t		memory;			/* budget in bytes for every buffer */
	size_t		read_memory;	/* if not 0: the reading phase's budget, memory
								 * then the distribution's (the reading's
								 * memory is taken at the first read) */
	size_t		record_size;	/* 1..XXL_SCATTER_MAX_RECORD */
	uint64_t	slots;			/* records to come, one per slot */
	xxl_disk_config disk;		/* block_size: the largest write buffer
								 * (0 = 1 MB); smaller ones are used when
								 * the budget needs them */
	xxl_cancel_fn cancel;		/* may be NULL */
	void	   *cancel_arg;
	bool		async;			/* distribute on a worker thread (xxl_pipe.h)
								 * while the caller produces records; taken
								 * where the pipe's 512 kB are at most an eighth
								 * of the memory */
	bool		consume;		/* free each bucket's spill space once it is
								 * read: the output is read once (no rewind),
								 * and what is read makes room for others */
} xxl_scatter_config;

typedef struct xxl_scatter_stats
{
	uint64_t	records;		/* put so far */
	uint64_t	buckets;		/* 0 when placed in memory */
	uint64_t	bucket_slots;	/* slots per bucket (the in-memory chunk) */
	size_t		block_size;		/* write buffer of each bucket */
	uint64_t	memory_peak;
	uint64_t	memory_limit;
	bool		async;			/* records were distributed by a worker */
	uint64_t	pipe_wait_ns;	/* the caller waited for the worker */
	xxl_io_stats io;
} xxl_scatter_stats;

typedef struct xxl_scatter xxl_scatter;

xxl_scatter *xxl_scatter_create(const xxl_scatter_config *config, xxl_error *err);

/* The most memory this scatter will use (at most config.memory). */
size_t		xxl_scatter_memory(const xxl_scatter *s);
/* ... while it distributes (reading false) or while it is read. */
size_t		xxl_scatter_phase_memory(const xxl_scatter *s, bool reading);

xxl_status	xxl_scatter_put(xxl_scatter *s, uint64_t slot, const void *rec);
/* n records at once (recs holds them back to back): one call, one check. */
xxl_status	xxl_scatter_put_many(xxl_scatter *s, const uint64_t *slots, const void *recs, size_t n);

/* End of input: every slot must have been put. */
xxl_status	xxl_scatter_finish(xxl_scatter *s);

/*
 * The next records in slot order as one array: *recs points at *count > 0
 * records of record_size bytes.  Returns 1, 0 at the end, or a negative
 * value on error.  The array stays valid until the next call.
 */
int			xxl_scatter_read(xxl_scatter *s, const void **recs, size_t *count);

/* Read the output again from slot 0 (after xxl_scatter_finish; not when consumed). */
xxl_status	xxl_scatter_rewind(xxl_scatter *s);

const xxl_error *xxl_scatter_error(const xxl_scatter *s);
void		xxl_scatter_stats_get(const xxl_scatter *s, xxl_scatter_stats *stats);
/* Waits for I/O in flight, removes spill files, frees all memory.  Safe at any point. */
void		xxl_scatter_destroy(xxl_scatter *s);

/*
 * Whether a scatter so configured works within its memory, and with which
 * write buffer (*block = 0 if it is placed in memory); for operators that
 * plan.
 */
bool		xxl_scatter_fits(const xxl_scatter_config *config, size_t *block);

#endif							/* XXL_SCATTER_H */
