/*
 * xxl_sort.h — the external sorter: records with a memcmp-comparable key go
 * in (push), sorted records come out (pull), within a fixed memory budget.
 *
 * Two record shapes:
 *  - fixed: every record is record_size bytes, the first key_size of which
 *    are the key (graph and text algorithms);
 *  - variable: each record is a key of any length plus a payload of any
 *    length (SQL rows: a normalized sort key and the encoded tuple).
 * Keys compare as unsigned byte strings (memcmp, shorter key first on a tie),
 * or, for variable-length records, by a column-wise comparison
 * (xxl_keycmp.h) where a key cannot be a byte image.
 * The sort is stable: records with equal keys come out in input order.
 *
 * Run formation sorts memory loads with an MSD radix sort on the key bytes
 * (parallel with OpenMP) and writes runs through the block writer; the merge
 * is a loser tree fed by a prefetcher that follows the prediction sequence.
 * When the runs exceed the fan-in the budget allows, intermediate merge
 * passes combine them first.  An input that fits the budget is never written.
 *
 * With async_runs, a worker thread sorts and writes a full load while the
 * caller fills the next one.  For fixed records the caller is held only for
 * the load's first radix pass; variable records alternate between two
 * half-size loads after a first load of the whole region (see
 * docs/engine.md).
 *
 * The cancel hook is polled between blocks; when it says stop, the current
 * call returns XXL_ECANCELED and xxl_sorter_destroy() cleans up.  The hook
 * and every other caller callback run on the caller's thread only.
 */
#ifndef XXL_SORT_H
#define XXL_SORT_H

#include "core/xxl_io.h"
#include "core/xxl_keycmp.h"

/* Largest fixed-size record the sorter takes. */
#define XXL_SORT_MAX_FIXED_RECORD 1024

typedef struct xxl_sort_config
{
	xxl_resources res;			/* memory: for every buffer; threads: of run
								 * formation and merging; disk: where runs spill */
	size_t		record_size;	/* fixed-size records; 0 = variable length */
	size_t		key_size;		/* fixed: key bytes at the record's start */
	bool		async_merge;	/* run the final merge on a worker thread (pays off when
								 * the consumer is heavy; needs >= 4 MiB) */
	bool		async_runs;		/* sort and write each load on a worker thread while the
								 * caller fills the next (pays off when the producer
								 * works per record) */
	uint64_t	expected_bytes; /* the input's record bytes as the caller expects
								 * them, 0: unknown.  With async_runs, variable
								 * records expected beyond twice the load region
								 * alternate halves from the first load: it would
								 * not have stayed in memory, and the caller need
								 * not wait for its sort; expected to make more
								 * half runs than one merge takes where whole
								 * loads spare a pass much of the data, they
								 * keep whole loads */
	/*
	 * Variable-length records whose keys are not byte images: compare them
	 * with this (xxl_keycmp.h) instead of memcmp; run formation then sorts
	 * by comparisons.  NULL: memcmp.  Must outlive the sorter.
	 */
	const xxl_key_compare *compare;
	/*
	 * Fixed records only: records with equal keys become one, combine(acc,
	 * rec, arg) folding rec into acc (a sum, say), as each load is sorted,
	 * as runs are merged and as records are handed out, so that no run
	 * holds a key twice and the output holds each key once (an aggregating
	 * sort: its runs shrink as keys repeat).  The order in which equal keys
	 * are folded is not defined.  Called on the caller's thread only; turns
	 * async_runs off.  NULL: records are kept as they are.
	 */
	void		(*combine) (void *acc, const void *rec, void *arg);
	void	   *combine_arg;
} xxl_sort_config;

typedef struct xxl_sort_stats
{
	uint64_t	records;
	uint64_t	bytes;			/* record bytes put (variable: key + payload) */
	uint64_t	combined;		/* with combine: records folded into another */
	uint64_t	runs;			/* runs formed (0 when sorted in memory) */
	int			merge_passes;	/* including the final one; 0 if in memory */
	int			fan_in;			/* largest number of runs merged at once */
	size_t		read_size;		/* bytes a frame of the last merge reads (a block, or
								 * a fraction of one where that saves a pass) */
	uint64_t	merge_units;	/* frames' reads of every merge so far */
	uint64_t	merge_unprefetched; /* ... those a run needed before they were
									 * prefetched (xxl_merger_units) */
	uint64_t	run_formation_ns;
	uint64_t	merge_ns;		/* intermediate passes + final merge so far */
	uint64_t	memory_peak;
	uint64_t	memory_limit;
	xxl_io_stats io;			/* all of it, the run logs' pages too: */
	uint64_t	log_bytes_read;	/* the runs and their block tables, on disk */
	uint64_t	log_bytes_written;
} xxl_sort_stats;

typedef struct xxl_sorter xxl_sorter;

xxl_sorter *xxl_sorter_create(const xxl_sort_config *config, xxl_error *err);

/* Fixed-size records: rec points at record_size bytes. */
xxl_status	xxl_sorter_put(xxl_sorter *s, const void *rec);
/*
 * Fixed-size records, filled in place: room for up to *n records (*n is
 * lowered to what the current load has left, at least 1) to be written at
 * the returned address, then handed over with xxl_sorter_commit(s, k), k
 * <= *n.  Saves a copy and a call per record for producers that build
 * records themselves.  NULL on error.
 */
void	   *xxl_sorter_reserve(xxl_sorter *s, size_t *n);
xxl_status	xxl_sorter_commit(xxl_sorter *s, size_t n);
/*
 * Fixed records already in key order: each a run as it comes, written
 * without a sort (with combine, equal neighbours folded), ended by
 * xxl_sorter_end_sorted; the merge takes it with the others.  A producer
 * whose output is sorted in pieces (the matrix product's pieces) saves
 * run formation and most merge passes: one run per piece.  Records put
 * before it (a load) become a run of their own first.  Not with
 * async_runs.  A budget whose region cannot hold two chunks of whole
 * blocks takes the records as ordinary puts.
 */
xxl_status	xxl_sorter_put_sorted(xxl_sorter *s, const void *rec);
xxl_status	xxl_sorter_end_sorted(xxl_sorter *s);
/* Variable-length records. */
xxl_status	xxl_sorter_put_var(xxl_sorter *s, const void *key, uint32_t key_len,
							   const void *payload, uint32_t payload_len);

/* End of input: form the last run and merge down to one final merge. */
xxl_status	xxl_sorter_sort(xxl_sorter *s);

/*
 * Next record in key order.  Return 1 with a record, 0 at the end, or a
 * negative value on error (see xxl_sorter_error).  Pointers stay valid until
 * the next call.
 */
int			xxl_sorter_next(xxl_sorter *s, const void **rec);
int			xxl_sorter_next_var(xxl_sorter *s, const void **key, uint32_t *key_len,
								const void **payload, uint32_t *payload_len);

/*
 * Fixed-size records: the next *n records (1..max, contiguous from *recs),
 * as many as the current output batch holds.  Returns as xxl_sorter_next.
 */
int			xxl_sorter_next_many(xxl_sorter *s, const void **recs, size_t max, size_t *n);
/* As many as the current batch holds: the contract of xxl_batch.h. */
int			xxl_sorter_read(xxl_sorter *s, const void **recs, size_t *count);

const xxl_error *xxl_sorter_error(const xxl_sorter *s);
void		xxl_sorter_stats(const xxl_sorter *s, xxl_sort_stats *stats);
/* Joins threads, removes spill files, frees all memory.  Safe at any point. */
void		xxl_sorter_destroy(xxl_sorter *s);

/*
 * Whether a sorter of this block size should spill to O_DIRECT files:
 * xxl_direct_pays, and every frame its merges may read (down to a
 * sixteenth of a block) large enough for a direct request to pay.
 * Callers clear try_direct otherwise, as with xxl_direct_pays.
 */
bool		xxl_sort_direct_pays(size_t block);

/* The smallest budget the sorter accepts for a given block size. */
size_t		xxl_sort_min_memory(size_t block_size);

/*
 * The largest block size (a multiple of 4 kB) a sorter of this memory
 * accepts: xxl_sort_min_memory(result) <= memory; 0 if even 4 kB blocks
 * need more.
 */
size_t		xxl_sort_max_block(size_t memory);

/*
 * The part of a budget of this size that the sorter keeps for small
 * structures (the rest is its load region); operators that plan their
 * sorters' shares use it.
 */
size_t		xxl_sort_slack(size_t memory);

/*
 * Whether a sorter of this memory and block size can take nbytes of
 * records of record_size.  Its runs and their block lists are kept on disk
 * (in run logs, xxl_stream.h), so the answer does not depend on nbytes:
 * any sorter that can form runs takes any input.  Operators that plan
 * their sorters' shares and blocks ask this.
 */
bool		xxl_sort_fits(uint64_t nbytes, size_t memory, size_t block_size, size_t record_size);

#endif							/* XXL_SORT_H */
