/*
 * stream.c — runs, the write-behind block writer and the prefetching block
 * reader.  Both keep a ring of block buffers drawn from the budget: the
 * writer posts a full block and moves on to the next buffer, waiting only
 * when the ring has wrapped onto a write still in flight; the reader keeps
 * the next blocks of the run in flight while the caller consumes one.
 */
#include "core/xxl_stream.h"

#include <string.h>

void
xxl_run_init(xxl_run *run)
{
	memset(run, 0, sizeof(*run));
}

/* Give a run's arrays back to the budget. */
static void
free_arrays(xxl_run *run, xxl_budget *budget)
{
	xxl_budget_free(budget, run->bids, run->capacity * sizeof(xxl_bid));
	xxl_budget_free(budget, run->block_keys, run->capacity * sizeof(uint64_t));
}

void
xxl_run_release(xxl_run *run, xxl_disks *disks, xxl_budget *budget)
{
	xxl_run_release_from(run, 0, disks, budget);
}

/* Free blocks [first, nblocks) of a run with a log of its own, reading the list. */
static void
free_logged_blocks(xxl_run *run, size_t first, xxl_disks *disks, xxl_budget *budget)
{
	xxl_run_cursor c;
	xxl_error	ignored = {0};
	xxl_run_block e;

	/* without the cursor's memory the blocks stay until the disks close */
	if (xxl_run_cursor_open(&c, run, budget, &ignored) != XXL_OK)
		return;
	for (size_t i = first; i < run->nblocks; i++)
	{
		if (xxl_run_cursor_seek(&c, i, &e, &ignored) != XXL_OK)
			break;
		xxl_block_free(disks, e.bid);
	}
	xxl_run_cursor_close(&c, budget);
}

void
xxl_run_release_from(xxl_run *run, size_t first, xxl_disks *disks, xxl_budget *budget)
{
	if (run->log != NULL)
	{
		if (run->capacity == XXL_RUN_OWNS_LOG)
		{
			if (disks != NULL)
			{
				free_logged_blocks(run, first, disks, budget);
				xxl_run_log_free_space(run->log);
			}
			xxl_run_log_close(run->log);
			xxl_budget_free(budget, run->log, sizeof(xxl_run_log));
		}
		xxl_run_init(run);
		return;
	}
	/* (those before first were freed by a reader that consumed them) */
	if (disks != NULL)
		for (size_t i = first; i < run->nblocks; i++)
			xxl_block_free(disks, run->bids[i]);
	free_arrays(run, budget);
	xxl_run_init(run);
}

size_t
xxl_run_table_bound(uint64_t nblocks)
{
	/* arrays grow by doubling, the old next to the new for a moment */
	uint64_t	cap = nblocks < XXL_RUN_MEMORY_BLOCKS ? 2 * nblocks : XXL_RUN_MEMORY_BLOCKS;
	size_t		arrays = 2 * xxl_budget_charge((size_t) cap * sizeof(uint64_t));

	if (nblocks < XXL_RUN_MEMORY_BLOCKS)
		return arrays;
	/*
	 * The arrays and the log's tail page side by side while the list moves;
	 * once written (sealed), a page for reading and two readers' cursors.
	 */
	return arrays + xxl_budget_charge(sizeof(xxl_run_log)) + XXL_RUN_LOG_PAGE +
		2 * xxl_budget_charge(XXL_RUN_LOG_CURSOR);
}

size_t
xxl_run_read_bound(void)
{
	size_t		arrays = 2 * xxl_budget_charge((size_t) XXL_RUN_MEMORY_BLOCKS * sizeof(uint64_t));
	size_t		logged = xxl_budget_charge(sizeof(xxl_run_log)) + XXL_RUN_LOG_PAGE +
		xxl_budget_charge(XXL_RUN_LOG_CURSOR);

	return arrays > logged ? arrays : logged;
}

xxl_status
xxl_run_reserve(xxl_run *run, size_t nblocks, xxl_budget *budget, xxl_error *err)
{
	if (run->log == NULL && nblocks > run->capacity)
	{
		size_t		cap = nblocks;
		xxl_bid    *bids = xxl_budget_alloc(budget, cap * sizeof(xxl_bid), err);
		uint64_t   *keys = bids ? xxl_budget_alloc(budget, cap * sizeof(uint64_t), err) : NULL;

		if (keys == NULL)
		{
			xxl_budget_free(budget, bids, cap * sizeof(xxl_bid));
			return err->code;
		}
		if (run->nblocks > 0)
		{
			memcpy(bids, run->bids, run->nblocks * sizeof(xxl_bid));
			memcpy(keys, run->block_keys, run->nblocks * sizeof(uint64_t));
		}
		free_arrays(run, budget);
		run->bids = bids;
		run->block_keys = keys;
		run->capacity = cap;
	}
	return XXL_OK;
}

/* Move a run's list from its arrays to a log of its own on disks. */
static xxl_status
move_to_log(xxl_run *run, xxl_disks *disks, xxl_budget *budget, xxl_error *err)
{
	xxl_run_log *log = xxl_budget_alloc(budget, sizeof(xxl_run_log), err);
	xxl_run_log_pos first;

	if (log == NULL)
		return err->code;
	if (xxl_run_log_open(log, disks, sizeof(xxl_run_block), budget, err) != XXL_OK)
	{
		xxl_budget_free(budget, log, sizeof(xxl_run_log));
		return err->code;
	}
	first = xxl_run_log_tail(log);
	for (size_t i = 0; i < run->nblocks; i++)
	{
		xxl_run_block e = {run->bids[i], run->block_keys[i]};

		if (xxl_run_log_append(log, &e, err) != XXL_OK)
		{
			xxl_run_log_close(log);
			xxl_budget_free(budget, log, sizeof(xxl_run_log));
			return err->code;
		}
	}
	free_arrays(run, budget);
	run->log = log;
	run->first = first;
	run->capacity = XXL_RUN_OWNS_LOG;
	return XXL_OK;
}

xxl_status
xxl_run_append_block(xxl_run *run, xxl_disks *disks, xxl_bid bid, uint64_t key,
					 xxl_budget *budget, xxl_error *err)
{
	if (run->log == NULL && run->nblocks == run->capacity)
	{
		if (disks != NULL && run->capacity >= XXL_RUN_MEMORY_BLOCKS)
		{
			if (move_to_log(run, disks, budget, err) != XXL_OK)
				return err->code;
		}
		else if (xxl_run_reserve(run, run->capacity ? run->capacity * 2 : 8, budget, err) != XXL_OK)
			return err->code;
	}
	if (run->log != NULL)
	{
		xxl_run_block entry = {bid, key};

		if (run->nblocks == 0)
			run->first = xxl_run_log_tail(run->log);
		if (xxl_run_log_append(run->log, &entry, err) != XXL_OK)
			return err->code;
		run->nblocks++;
		return XXL_OK;
	}
	run->bids[run->nblocks] = bid;
	run->block_keys[run->nblocks] = key;
	run->nblocks++;
	return XXL_OK;
}

typedef struct xxl_stream_buffer
{
	char	   *data;
	xxl_io_request req;
} xxl_stream_buffer;

static xxl_stream_buffer *
alloc_ring(xxl_budget *budget, int n, size_t block_size, xxl_error *err)
{
	xxl_stream_buffer *ring = xxl_budget_alloc(budget, (size_t) n * sizeof(*ring), err);

	if (ring == NULL)
		return NULL;
	memset(ring, 0, (size_t) n * sizeof(*ring));
	for (int i = 0; i < n; i++)
	{
		ring[i].data = xxl_budget_alloc(budget, block_size, err);
		if (ring[i].data == NULL)
		{
			for (int j = 0; j < i; j++)
				xxl_budget_free(budget, ring[j].data, block_size);
			xxl_budget_free(budget, ring, (size_t) n * sizeof(*ring));
			return NULL;
		}
	}
	return ring;
}

/* Wait for every transfer of the ring still in flight, ignoring their errors. */
static void
drain_ring(xxl_disks *disks, xxl_stream_buffer *ring, int n)
{
	xxl_error	ignored = {0};

	for (int i = 0; i < n; i++)
		xxl_io_wait(disks, &ring[i].req, &ignored);
}

/* Wait for every request still in flight, then free the ring. */
static void
free_ring(xxl_disks *disks, xxl_budget *budget, xxl_stream_buffer *ring, int n,
		  size_t block_size)
{
	if (ring == NULL)
		return;
	drain_ring(disks, ring, n);
	for (int i = 0; i < n; i++)
		xxl_budget_free(budget, ring[i].data, block_size);
	xxl_budget_free(budget, ring, (size_t) n * sizeof(*ring));
}

/* Writer ---------------------------------------------------------------- */

struct xxl_bwriter
{
	bool		inline_io;		/* buffered files: write in the caller's thread */
	xxl_disks  *disks;
	xxl_budget *budget;
	xxl_run    *run;
	xxl_error	err;
	size_t		block_size;
	int			nbuf;
	xxl_stream_buffer *ring;
	int			cur;
	size_t		fill;
	xxl_bid		bid;			/* of the block being filled */
	uint64_t	record_prefix;
};

xxl_bwriter *
xxl_bwriter_create(xxl_disks *disks, xxl_budget *budget, int nbuffers, xxl_run *run,
				   xxl_error *err)
{
	xxl_bwriter *w;

	if (nbuffers < 1)
		nbuffers = 1;
	w = xxl_budget_alloc(budget, sizeof(*w), err);
	if (w == NULL)
		return NULL;
	memset(w, 0, sizeof(*w));
	w->disks = disks;
	w->budget = budget;
	w->run = run;
	w->block_size = xxl_disks_block_size(disks);
	w->nbuf = nbuffers;
	w->ring = alloc_ring(budget, nbuffers, w->block_size, err);
	if (w->ring == NULL)
	{
		xxl_budget_free(budget, w, sizeof(*w));
		return NULL;
	}
	return w;
}

void
xxl_bwriter_begin_record(xxl_bwriter *w, uint64_t key_prefix)
{
	w->record_prefix = key_prefix;
	w->run->nrecords++;
}

static xxl_status
post_current(xxl_bwriter *w)
{
	xxl_stream_buffer *b = &w->ring[w->cur];

	b->req.bid = w->bid;
	b->req.buf = b->data;
	b->req.len = XXL_ROUND_UP(w->fill, XXL_ALIGN);
	/* a partial last block is padded to the page: no stale bytes on disk */
	memset(b->data + w->fill, 0, b->req.len - w->fill);
	b->req.is_write = true;
	if (w->inline_io && !xxl_disks_direct(w->disks))
	{
		w->fill = 0;
		return xxl_io_sync(w->disks, &b->req, &w->err);	/* the buffer is free again */
	}
	xxl_io_post(w->disks, &b->req);
	w->cur = (w->cur + 1) % w->nbuf;
	w->fill = 0;
	/* the next buffer may still be on its way to disk */
	return xxl_io_wait(w->disks, &w->ring[w->cur].req, &w->err);
}

xxl_status
xxl_bwriter_write(xxl_bwriter *w, const void *data, size_t len)
{
	const char *src = data;

	if (w->err.code != XXL_OK)
		return w->err.code;
	while (len > 0)
	{
		size_t		n;

		if (w->fill == 0)
		{
			if (xxl_block_alloc(w->disks, &w->bid, &w->err) != XXL_OK ||
				xxl_run_append_block(w->run, w->disks, w->bid, w->record_prefix, w->budget,
									 &w->err) != XXL_OK)
				return w->err.code;
		}
		n = w->block_size - w->fill;
		if (n > len)
			n = len;
		memcpy(w->ring[w->cur].data + w->fill, src, n);
		w->fill += n;
		w->run->nbytes += n;
		src += n;
		len -= n;
		if (w->fill == w->block_size && post_current(w) != XXL_OK)
			return w->err.code;
	}
	return XXL_OK;
}

xxl_status
xxl_bwriter_finish(xxl_bwriter *w)
{
	if (w->err.code != XXL_OK)
		return w->err.code;
	if (w->fill > 0 && post_current(w) != XXL_OK)
		return w->err.code;
	/* a run's own log is complete: its tail page goes to disk */
	if (w->run->log != NULL && w->run->capacity == XXL_RUN_OWNS_LOG &&
		xxl_run_log_seal(w->run->log, &w->err) != XXL_OK)
		return w->err.code;
	for (int i = 0; i < w->nbuf; i++)
		if (xxl_io_wait(w->disks, &w->ring[i].req, &w->err) != XXL_OK)
			return w->err.code;
	return XXL_OK;
}

void
xxl_bwriter_restart(xxl_bwriter *w, xxl_run *run)
{
	drain_ring(w->disks, w->ring, w->nbuf);
	xxl_error_clear(&w->err);
	w->run = run;
	w->cur = 0;
	w->fill = 0;
	w->record_prefix = 0;
}

void
xxl_bwriter_destroy(xxl_bwriter *w)
{
	if (w == NULL)
		return;
	free_ring(w->disks, w->budget, w->ring, w->nbuf, w->block_size);
	xxl_budget_free(w->budget, w, sizeof(*w));
}

void
xxl_bwriter_inline(xxl_bwriter *w, bool on)
{
	w->inline_io = on;
}

const xxl_error *
xxl_bwriter_error(const xxl_bwriter *w)
{
	return &w->err;
}

/* Reader ---------------------------------------------------------------- */

struct xxl_breader
{
	bool		inline_io;		/* buffered files: read in the caller's thread */
	xxl_disks  *disks;
	xxl_budget *budget;
	const xxl_run *run;
	xxl_error	err;
	size_t		block_size;
	int			nbuf;
	xxl_stream_buffer *ring;
	xxl_run_cursor blocks;		/* the run's block list, read as blocks are posted */
	bool		consume;		/* free blocks the stream has moved past */
	size_t		freed;			/* blocks freed so */
	size_t		next_issue;		/* next block to post */
	size_t		cur;			/* block being consumed */
	bool		cur_ready;
	size_t		pos;			/* offset in the current block */
	uint64_t	remaining;
	char	   *scratch;
	size_t		scratch_size;
};

static size_t
block_length(const xxl_run *run, size_t block, size_t block_size)
{
	uint64_t	start = (uint64_t) block * block_size;
	uint64_t	left = run->nbytes - start;

	return left < block_size ? (size_t) left : block_size;
}

/* The id of block b (at or past the blocks asked for before). */
static xxl_status
block_bid(xxl_breader *r, size_t b, xxl_bid *bid)
{
	xxl_run_block e;

	if (xxl_run_cursor_seek(&r->blocks, b, &e, &r->err) != XXL_OK)
		return r->err.code;
	*bid = e.bid;
	return XXL_OK;
}

static void
issue_next(xxl_breader *r)
{
	xxl_stream_buffer *b;
	xxl_bid		bid = XXL_BID_NONE;

	if (r->inline_io || r->next_issue >= r->run->nblocks || r->err.code != XXL_OK ||
		block_bid(r, r->next_issue, &bid) != XXL_OK)
		return;
	b = &r->ring[r->next_issue % (size_t) r->nbuf];
	b->req.bid = bid;
	b->req.buf = b->data;
	b->req.len = XXL_ROUND_UP(block_length(r->run, r->next_issue, r->block_size), XXL_ALIGN);
	b->req.is_write = false;
	xxl_io_post(r->disks, &b->req);
	r->next_issue++;
}

xxl_breader *
xxl_breader_create(xxl_disks *disks, xxl_budget *budget, int nbuffers, const xxl_run *run,
				   xxl_error *err)
{
	xxl_breader *r;

	if (nbuffers < 1)
		nbuffers = 1;
	r = xxl_budget_alloc(budget, sizeof(*r), err);
	if (r == NULL)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->disks = disks;
	r->budget = budget;
	r->run = run;
	r->block_size = xxl_disks_block_size(disks);
	r->nbuf = nbuffers;
	r->remaining = run->nbytes;
	r->ring = alloc_ring(budget, nbuffers, r->block_size, err);
	if (r->ring == NULL)
	{
		xxl_budget_free(budget, r, sizeof(*r));
		return NULL;
	}
	if (xxl_run_cursor_open(&r->blocks, run, budget, err) != XXL_OK)
	{
		free_ring(disks, budget, r->ring, r->nbuf, r->block_size);
		xxl_budget_free(budget, r, sizeof(*r));
		return NULL;
	}
	for (int i = 0; i < nbuffers; i++)
		issue_next(r);
	return r;
}

/* Make the current block's bytes available. */
static xxl_status
ensure_current(xxl_breader *r)
{
	xxl_stream_buffer *b = &r->ring[r->cur % (size_t) r->nbuf];

	if (r->cur_ready)
		return XXL_OK;
	if (xxl_io_wait(r->disks, &b->req, &r->err) != XXL_OK)
		return r->err.code;
	if (r->inline_io && r->cur >= r->next_issue)
	{
		/* not prefetched: read it now, here */
		if (block_bid(r, r->cur, &b->req.bid) != XXL_OK)
			return r->err.code;
		b->req.buf = b->data;
		b->req.len = XXL_ROUND_UP(block_length(r->run, r->cur, r->block_size), XXL_ALIGN);
		b->req.is_write = false;
		if (xxl_io_sync(r->disks, &b->req, &r->err) != XXL_OK)
			return r->err.code;
		r->next_issue = r->cur + 1;
	}
	r->cur_ready = true;
	return XXL_OK;
}

void
xxl_breader_inline(xxl_breader *r, bool on)
{
	/* blocks already posted are waited for as before */
	r->inline_io = on && !xxl_disks_direct(r->disks);
}

static void
advance_block(xxl_breader *r)
{
	if (r->consume)
	{
		/* its bytes were handed out: the block is free (its buffer is reused below) */
		xxl_block_free(r->disks, r->ring[r->cur % (size_t) r->nbuf].req.bid);
		r->freed = r->cur + 1;
	}
	r->cur++;
	r->pos = 0;
	r->cur_ready = false;
	issue_next(r);				/* reuses the buffer just consumed */
}

xxl_status
xxl_breader_next(xxl_breader *r, size_t len, const void **data)
{
	size_t		copied = 0;

	if (r->err.code != XXL_OK)
		return r->err.code;
	if (len > r->remaining)
		return xxl_error_set(&r->err, XXL_EINVAL, 0, "read of %zu bytes past the end of a run", len);
	if (len == 0)
	{
		*data = "";
		return XXL_OK;
	}
	if (r->pos == r->block_size)
		advance_block(r);
	if (ensure_current(r) != XXL_OK)
		return r->err.code;
	if (r->block_size - r->pos >= len)
	{
		*data = r->ring[r->cur % (size_t) r->nbuf].data + r->pos;
		r->pos += len;
		r->remaining -= len;
		return XXL_OK;
	}

	/* the record spans blocks: gather it */
	if (len > r->scratch_size)
	{
		char	   *s = xxl_budget_realloc(r->budget, r->scratch, r->scratch_size, len, &r->err);

		if (s == NULL)
			return r->err.code;
		r->scratch = s;
		r->scratch_size = len;
	}
	while (copied < len)
	{
		size_t		n;

		if (r->pos == r->block_size)
		{
			advance_block(r);
			if (ensure_current(r) != XXL_OK)
				return r->err.code;
		}
		n = r->block_size - r->pos;
		if (n > len - copied)
			n = len - copied;
		memcpy(r->scratch + copied, r->ring[r->cur % (size_t) r->nbuf].data + r->pos, n);
		r->pos += n;
		copied += n;
	}
	r->remaining -= len;
	*data = r->scratch;
	return XXL_OK;
}

uint64_t
xxl_breader_remaining(const xxl_breader *r)
{
	return r->remaining;
}

void
xxl_breader_consume(xxl_breader *r)
{
	r->consume = true;
}

size_t
xxl_breader_freed(const xxl_breader *r)
{
	return r->freed;
}

void
xxl_breader_destroy(xxl_breader *r)
{
	if (r == NULL)
		return;
	free_ring(r->disks, r->budget, r->ring, r->nbuf, r->block_size);
	xxl_run_cursor_close(&r->blocks, r->budget);
	xxl_budget_free(r->budget, r->scratch, r->scratch_size);
	xxl_budget_free(r->budget, r, sizeof(*r));
}

const xxl_error *
xxl_breader_error(const xxl_breader *r)
{
	return &r->err;
}
