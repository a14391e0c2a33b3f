/*
 * merge.h — the k-way merger of sorted runs, internal to the sorter.
 *
 * A merger reads its runs through block frames drawn from the budget, one
 * current block per run plus prefetch frames filled in the order of the
 * prediction sequence, and selects records with a loser tree.  It can hand
 * records out directly (the caller's thread does the merging) or run
 * asynchronously: a worker thread merges into a ring of batch buffers while
 * the caller consumes the previous batch, so merging and consuming overlap
 * on two cores (STXXL's asynchronous pipelining, [P2] §3).
 *
 * Thread rule: once asynchronous, the worker owns the budget, the disks'
 * request posting and the merger's error record; the caller only takes
 * filled batches.  The worker never calls back into the caller.
 */
#ifndef XXL_MERGE_H
#define XXL_MERGE_H

#include "core/xxl_keycmp.h"
#include "core/xxl_stream.h"

typedef struct xxl_merge_env
{
	xxl_disks  *disks;
	xxl_budget *budget;
	xxl_error  *err;
	bool		fixed;			/* fixed-size records, else key + payload */
	size_t		rec_size;
	size_t		key_size;
	size_t		block_size;
	size_t		read_size;		/* bytes a frame reads: block_size (0) or a power-of-two
								 * fraction of it, for a higher fan-in (see merge.c) */
	size_t		max_record;		/* largest record in bytes on disk */
	int			threads;		/* for the batched merge */
	const xxl_key_compare *compare; /* variable records: keys compared by this, not memcmp */
} xxl_merge_env;

typedef struct xxl_merge_record
{
	const unsigned char *key;	/* fixed: the whole record */
	uint32_t	key_len;
	const unsigned char *payload;
	uint32_t	payload_len;
	uint64_t	prefix;
} xxl_merge_record;

typedef struct xxl_merger xxl_merger;

/*
 * Bytes of output buffer a merge of these records takes (see merge.c:
 * fixed records with keys of at most 16 bytes are merged in batches, in
 * parallel when there are threads); 0 when they are merged one by one.
 */
size_t		xxl_merge_output_bytes(const xxl_merge_env *env);

/* Largest number of runs one merge can take with reserve_bytes set aside. */
int			xxl_merge_max_fan_in(const xxl_merge_env *env, size_t reserve_bytes);
/* ... were avail bytes of the budget free (an estimate before they are). */
int			xxl_merge_fan_in_of(const xxl_merge_env *env, size_t avail, size_t reserve_bytes);

/*
 * Merge runs[0..k).  release_blocks returns consumed blocks to the block
 * manager (intermediate passes).  All budget not reserved becomes frames.
 */
xxl_merger *xxl_merger_create(const xxl_merge_env *env, xxl_run *runs, int k,
							  bool release_blocks, size_t reserve_bytes);

/* Bytes xxl_merger_start_async() will take from the budget. */
size_t		xxl_merge_async_bytes(const xxl_merge_env *env);
/* Move the merging to a worker thread; records then arrive in batches. */
xxl_status	xxl_merger_start_async(xxl_merger *m);

/*
 * Next record: 1 with *rec filled, 0 at the end, -1 on error (in the env's
 * error record).  The record stays valid until the next call.
 */
int			xxl_merger_next(xxl_merger *m, xxl_merge_record *rec);

/*
 * Fixed records: the next *n (1..max) records, contiguous from *recs (a
 * batch's worth where the merge makes batches).  Returns as
 * xxl_merger_next; the records stay valid until the next call.
 */
int			xxl_merger_next_many(xxl_merger *m, const unsigned char **recs, size_t max,
								 size_t *n);

/*
 * Units (frames' reads) the merge has read so far, and how many of them a
 * run needed before the prefetch had read them, which the merge then
 * waited for.  Safe while a worker merges.
 */
void		xxl_merger_units(const xxl_merger *m, uint64_t *read, uint64_t *unprefetched);

/* Stops the worker, waits for reads in flight and frees every buffer. */
void		xxl_merger_destroy(xxl_merger *m);

#endif							/* XXL_MERGE_H */
