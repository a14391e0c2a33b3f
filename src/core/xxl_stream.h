/*
 * xxl_stream.h — byte streams over chains of blocks: a buffered block writer
 * with write-behind and a prefetching block reader.
 *
 * A run is what a writer leaves behind: the list of blocks it filled, the
 * number of payload bytes and records, and for every block the 8-byte key
 * prefix of the record that occupies its first byte.  Those prefixes are the
 * merger's prediction sequence (thesis §3.5.2): merging them tells in which
 * order blocks will be needed.
 *
 * Records may span block boundaries; the reader returns a contiguous pointer
 * for any record, copying a spanning one into a scratch buffer.
 */
#ifndef XXL_STREAM_H
#define XXL_STREAM_H

#include "core/xxl_io.h"

typedef struct xxl_run
{
	xxl_bid    *bids;
	uint64_t   *block_keys;		/* key prefix of the record at each block's start */
	size_t		nblocks;
	size_t		capacity;
	uint64_t	nbytes;
	uint64_t	nrecords;
} xxl_run;

void		xxl_run_init(xxl_run *run);
/* Make room for nblocks block entries up front. */
xxl_status	xxl_run_reserve(xxl_run *run, size_t nblocks, xxl_budget *budget, xxl_error *err);
/* Add a block (written by the caller) with its first record's key prefix. */
xxl_status	xxl_run_append_block(xxl_run *run, xxl_bid bid, uint64_t key, xxl_budget *budget,
								 xxl_error *err);
/* Return the run's blocks to the block manager and its arrays to the budget. */
void		xxl_run_release(xxl_run *run, xxl_disks *disks, xxl_budget *budget);

/* Writer ---------------------------------------------------------------- */

typedef struct xxl_bwriter xxl_bwriter;

/* nbuffers >= 2 block buffers drawn from the budget; the run must be empty. */
xxl_bwriter *xxl_bwriter_create(xxl_disks *disks, xxl_budget *budget, int nbuffers,
								xxl_run *run, xxl_error *err);
/* Announce a record whose key starts with the given big-endian prefix. */
void		xxl_bwriter_begin_record(xxl_bwriter *w, uint64_t key_prefix);
xxl_status	xxl_bwriter_write(xxl_bwriter *w, const void *data, size_t len);
/*
 * Write blocks in the caller's thread (xxl_io_sync) when the files are
 * buffered: a copy into the page cache costs less than an I/O thread's
 * wake-ups.  O_DIRECT files keep the write-behind.
 */
void		xxl_bwriter_inline(xxl_bwriter *w, bool on);
/*
 * Aim the writer at another empty run, keeping its buffers (waits for
 * writes still in flight; clears its error).  Saves the page faults of
 * fresh buffers for every run.
 */
void		xxl_bwriter_restart(xxl_bwriter *w, xxl_run *run);
/* Write the last partial block and wait for every write. */
xxl_status	xxl_bwriter_finish(xxl_bwriter *w);
/* Free buffers (waiting for writes in flight); does not release the run. */
void		xxl_bwriter_destroy(xxl_bwriter *w);

/* Reader ---------------------------------------------------------------- */

typedef struct xxl_breader xxl_breader;

/* Reads the run's blocks in order keeping up to nbuffers reads in flight. */
xxl_breader *xxl_breader_create(xxl_disks *disks, xxl_budget *budget, int nbuffers,
								const xxl_run *run, xxl_error *err);
/*
 * Point *data at the next len bytes (contiguous), advancing the stream.
 * Returns XXL_OK, or XXL_EINVAL past the end of the run, or an I/O error.
 * The pointer stays valid until the next call.
 */
xxl_status	xxl_breader_next(xxl_breader *r, size_t len, const void **data);
uint64_t	xxl_breader_remaining(const xxl_breader *r);
/*
 * Read the next blocks in the caller's thread, when they are needed, if the
 * files are buffered (the blocks already prefetched are used first).
 */
void		xxl_breader_inline(xxl_breader *r, bool on);
/* Bytes the next xxl_breader_next can return without gathering across blocks. */
size_t		xxl_breader_contiguous(const xxl_breader *r);
void		xxl_breader_destroy(xxl_breader *r);

/* Shared with the writer: the error that ended the stream, if any. */
const xxl_error *xxl_bwriter_error(const xxl_bwriter *w);
const xxl_error *xxl_breader_error(const xxl_breader *r);

/* Big-endian 8-byte prefix of a key of any length (zero padded). */
static inline uint64_t
xxl_key_prefix(const unsigned char *key, size_t len)
{
	uint64_t	p = 0;

	if (len >= 8)
	{
		__builtin_memcpy(&p, key, 8);
		return __builtin_bswap64(p);
	}
	for (size_t i = 0; i < len; i++)
		p |= (uint64_t) key[i] << (56 - 8 * i);
	return p;
}

#endif							/* XXL_STREAM_H */
