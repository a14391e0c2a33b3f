/*
 * xxl_stream.h — byte streams over chains of blocks: a buffered block writer
 * with write-behind and a prefetching block reader.
 *
 * A run is what a writer leaves behind: the list of blocks it filled, the
 * number of payload bytes and records, and for every block the 8-byte key
 * prefix of the record that occupies its first byte.  Those prefixes are the
 * merger's prediction sequence (thesis §3.5.2): merging them tells in which
 * order blocks will be needed.  A run's block table is kept in memory or,
 * so that nothing in memory grows with the input, in a run log on disk.
 *
 * Records may span block boundaries; the reader returns a contiguous pointer
 * for any record, copying a spanning one into a scratch buffer.
 */
#ifndef XXL_STREAM_H
#define XXL_STREAM_H

#include "core/xxl_io.h"

/*
 * A run log: an append-only sequence of fixed-size records on disk, in
 * pages of XXL_RUN_LOG_PAGE bytes carved from the disks' blocks, each page
 * naming the next (so a reader needs only where it starts).  What keeps the
 * sorter's bookkeeping off the budget however large the input: the block
 * tables of its runs and the runs themselves.  One page is buffered for
 * appending (until the log is sealed) and, once read, one kept of what was
 * read; cursors read pages synchronously (the log is about 1/4000 of the
 * data it describes).  A shared log (the sorter's) keeps its blocks until
 * the disks close; a run's own log gives them back when the run is
 * released.  One thread at a time.
 */
#define XXL_RUN_LOG_PAGE XXL_ALIGN

typedef struct xxl_run_log_pos
{
	xxl_bid		page;
	uint64_t	slot;
} xxl_run_log_pos;

typedef struct xxl_run_log
{
	xxl_disks  *disks;
	size_t		rec_size;
	size_t		per_page;		/* records per page */
	xxl_budget *budget;			/* its pages' */
	unsigned char *tail;		/* the page being appended to, or NULL once sealed */
	xxl_bid		tail_page;		/* where it goes */
	size_t		tail_count;		/* records in it */
	xxl_bid		first_page;
	xxl_bid		tail_block;		/* the block tail_page is carved from */
	xxl_bid		next_block;		/* ... and the page after it */
	xxl_bid		carve;			/* the block pages are carved from */
	size_t		carved;			/* pages of it taken */
	unsigned char *recent;		/* the page a cursor read last (from the first read), for the next: */
	xxl_bid		recent_page;	/* runs merged together are neighbours in the log */
	uint64_t	pages_written;
	uint64_t	pages_read;		/* by its cursors */
} xxl_run_log;

xxl_status	xxl_run_log_open(xxl_run_log *log, xxl_disks *disks, size_t rec_size,
							 xxl_budget *budget, xxl_error *err);
/* Where the next record appended will be. */
xxl_run_log_pos xxl_run_log_tail(const xxl_run_log *log);
/* Append a record (writes the tail page once it is full). */
xxl_status	xxl_run_log_append(xxl_run_log *log, const void *rec, xxl_error *err);
/* No more records: the tail page goes to disk and its memory back to the budget. */
xxl_status	xxl_run_log_seal(xxl_run_log *log, xxl_error *err);
/* Return its pages' memory to the budget. */
void		xxl_run_log_close(xxl_run_log *log);
/* Return every block of the log to the block manager (reading its pages). */
void		xxl_run_log_free_space(xxl_run_log *log);

/*
 * A cursor keeps a few records copied out of their page (the page itself
 * goes through the log's recent page), so that a merge of many runs costs
 * a few hundred bytes per run, not a page.
 */
#define XXL_RUN_LOG_CURSOR 512

typedef struct xxl_run_log_cursor
{
	xxl_run_log *log;
	unsigned char *buf;			/* XXL_RUN_LOG_CURSOR bytes (from the budget) */
	size_t		nbuf;			/* records in buf */
	size_t		used;			/* of them returned */
	xxl_run_log_pos pos;		/* the record after those in buf */
	xxl_bid		next_page;		/* the page after pos.page */
} xxl_run_log_cursor;

xxl_status	xxl_run_log_cursor_open(xxl_run_log_cursor *c, xxl_run_log *log, xxl_run_log_pos from,
									xxl_budget *budget, xxl_error *err);
/* The record at the cursor (valid until the cursor moves), then step past it. */
xxl_status	xxl_run_log_next(xxl_run_log_cursor *c, const void **rec, xxl_error *err);
void		xxl_run_log_cursor_close(xxl_run_log_cursor *c, xxl_budget *budget);

/*
 * A run is what a writer leaves behind: its blocks, and for each the key
 * prefix of the record at its first byte, in memory (the arrays) or, for
 * runs of a log, as 16-byte entries of the log from first on.  A run kept
 * in memory that outgrows XXL_RUN_MEMORY_BLOCKS blocks while written
 * through a block writer moves its list to a log of its own (sealed when
 * the writer finishes), so a run costs at most xxl_run_table_bound bytes
 * of memory however long it is.
 */
#define XXL_RUN_MEMORY_BLOCKS 512
#define XXL_RUN_OWNS_LOG SIZE_MAX	/* capacity of a run with a log of its own */
typedef struct xxl_run
{
	xxl_run_log *log;			/* or NULL: the block table is in the arrays */
	union
	{
		struct
		{
			xxl_bid    *bids;
			uint64_t   *block_keys; /* key prefix of the record at each block's start */
		};
		xxl_run_log_pos first;	/* of a log's run: its first block's entry */
	};
	size_t		nblocks;
	size_t		capacity;
	uint64_t	nbytes;
	uint64_t	nrecords;
} xxl_run;

/* The entry of a block in a run log. */
typedef struct xxl_run_block
{
	xxl_bid		bid;
	uint64_t	key;
} xxl_run_block;

void		xxl_run_init(xxl_run *run);
/* An empty run whose block table goes to log. */
void		xxl_run_init_logged(xxl_run *run, xxl_run_log *log);
/* Make room for nblocks block entries up front (nothing to do for a log's run). */
xxl_status	xxl_run_reserve(xxl_run *run, size_t nblocks, xxl_budget *budget, xxl_error *err);
/*
 * Add a block (written by the caller) with its first record's key prefix.
 * With disks, a run in memory may move to a log of its own on those disks.
 */
xxl_status	xxl_run_append_block(xxl_run *run, xxl_disks *disks, xxl_bid bid, uint64_t key,
								 xxl_budget *budget, xxl_error *err);
/* The most memory a run's block list takes, with nblocks blocks (and two readers). */
size_t		xxl_run_table_bound(uint64_t nblocks);
/* The most memory a written run's block list takes, however long, while one reader reads it. */
size_t		xxl_run_read_bound(void);
/*
 * Return the run's blocks from block first on to the block manager (those
 * before were freed by their reader) and its memory to the budget.  A run
 * of a shared log frees no blocks (they go when the disks close).
 */
void		xxl_run_release_from(xxl_run *run, size_t first, xxl_disks *disks, xxl_budget *budget);
void		xxl_run_release(xxl_run *run, xxl_disks *disks, xxl_budget *budget);

/* Reading a run's block table in order, whichever way it is kept. */
typedef struct xxl_run_cursor
{
	const xxl_run *run;
	size_t		next;			/* the block the next xxl_run_cursor_seek past reads */
	xxl_run_block at;			/* the block last sought */
	xxl_run_log_cursor lc;
} xxl_run_cursor;

/* Charges XXL_RUN_LOG_CURSOR bytes of the budget for a log's run. */
xxl_status	xxl_run_cursor_open(xxl_run_cursor *c, const xxl_run *run, xxl_budget *budget,
								xxl_error *err);
/* Block b of the run (b at or past every block sought before, below nblocks). */
xxl_status	xxl_run_cursor_seek(xxl_run_cursor *c, size_t b, xxl_run_block *out, xxl_error *err);
void		xxl_run_cursor_close(xxl_run_cursor *c, xxl_budget *budget);

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
 * Free every block to the block manager once the stream has moved past it
 * (the run is consumed); xxl_breader_freed says how many are, the rest go
 * with xxl_run_release_from.
 */
void		xxl_breader_consume(xxl_breader *r);
size_t		xxl_breader_freed(const xxl_breader *r);
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
