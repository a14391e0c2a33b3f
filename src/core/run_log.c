/*
 * run_log.c — run logs (xxl_stream.h): append-only records on disk in
 * chained pages, their cursors, and the cursor over a run's block table
 * that reads the arrays or the log alike.
 *
 * A page starts with the id of the page after it, reserved when the page
 * is begun, so pages can be written once, in order, and read from any
 * record on without a directory in memory.  Pages are carved from whole
 * blocks of the disks (a block per block_size / XXL_RUN_LOG_PAGE pages).
 * A cursor copies a few records at a time out of their page: from the
 * tail page still being appended to (only records appended before the
 * copy), or from the one page the log keeps of what it read last, reading
 * it first if another is there.  The runs a merge takes are consecutive in
 * the log, so their cursors mostly want the page read last.
 */
#include "core/xxl_stream.h"

#include <string.h>

#define PAGE_HEADER 16			/* the next page's id, and the id of this page's block */

static xxl_status
reserve_page(xxl_run_log *log, xxl_bid *page, xxl_error *err)
{
	size_t		per_block = xxl_disks_block_size(log->disks) / XXL_RUN_LOG_PAGE;

	if (log->carve == XXL_BID_NONE || log->carved == per_block)
	{
		if (xxl_block_alloc(log->disks, &log->carve, err) != XXL_OK)
		{
			log->carve = XXL_BID_NONE;
			return err->code;
		}
		log->carved = 0;
	}
	*page = log->carve + (uint64_t) log->carved++ * XXL_RUN_LOG_PAGE;
	return XXL_OK;
}

/* Start a fresh tail page at tail_page, naming a newly reserved next page. */
static xxl_status
begin_tail(xxl_run_log *log, xxl_error *err)
{
	xxl_bid		next = XXL_BID_NONE;

	if (reserve_page(log, &next, err) != XXL_OK)
		return err->code;
	memset(log->tail, 0, XXL_RUN_LOG_PAGE);
	memcpy(log->tail, &next, sizeof(next));
	memcpy(log->tail + sizeof(xxl_bid), &log->tail_block, sizeof(xxl_bid));
	log->next_block = log->carve;
	log->tail_count = 0;
	return XXL_OK;
}

xxl_status
xxl_run_log_open(xxl_run_log *log, xxl_disks *disks, size_t rec_size, xxl_budget *budget,
				 xxl_error *err)
{
	memset(log, 0, sizeof(*log));
	log->disks = disks;
	log->rec_size = rec_size;
	log->per_page = (XXL_RUN_LOG_PAGE - PAGE_HEADER) / rec_size;
	log->carve = XXL_BID_NONE;
	log->recent_page = XXL_BID_NONE;
	log->budget = budget;
	log->tail = xxl_budget_alloc(budget, XXL_RUN_LOG_PAGE, err);
	if (log->tail == NULL)
		return err->code;
	log->first_page = XXL_BID_NONE;
	if (reserve_page(log, &log->tail_page, err) != XXL_OK)
	{
		xxl_run_log_close(log);
		return err->code;
	}
	log->first_page = log->tail_page;
	log->tail_block = log->carve;
	if (begin_tail(log, err) != XXL_OK)
	{
		xxl_run_log_close(log);
		return err->code;
	}
	return XXL_OK;
}

xxl_run_log_pos
xxl_run_log_tail(const xxl_run_log *log)
{
	xxl_run_log_pos pos = {log->tail_page, log->tail_count};

	return pos;
}

/* Read or write one page, on the caller's thread. */
static xxl_status
page_io(xxl_run_log *log, xxl_bid bid, unsigned char *buf, bool is_write, xxl_error *err)
{
	xxl_io_request req = {0};

	req.bid = bid;
	req.buf = buf;
	req.len = XXL_RUN_LOG_PAGE;
	req.is_write = is_write;
	if (xxl_io_sync(log->disks, &req, err) != XXL_OK)
		return err->code;
	if (is_write)
		log->pages_written++;
	else
		log->pages_read++;
	return XXL_OK;
}

/* Write the tail page (whole, or with tail_count records) where it goes. */
static xxl_status
write_tail(xxl_run_log *log, xxl_error *err)
{
	return page_io(log, log->tail_page, log->tail, true, err);
}

xxl_status
xxl_run_log_append(xxl_run_log *log, const void *rec, xxl_error *err)
{
	if (log->tail == NULL)
		return xxl_error_set(err, XXL_EINVAL, 0, "append to a sealed run log");
	memcpy(log->tail + PAGE_HEADER + log->tail_count * log->rec_size, rec, log->rec_size);
	log->tail_count++;
	if (log->tail_count == log->per_page)
	{
		xxl_bid		next;

		if (write_tail(log, err) != XXL_OK)
			return err->code;
		memcpy(&next, log->tail, sizeof(next));
		log->tail_page = next;
		log->tail_block = log->next_block;
		return begin_tail(log, err);
	}
	return XXL_OK;
}

xxl_status
xxl_run_log_seal(xxl_run_log *log, xxl_error *err)
{
	if (log->tail == NULL)
		return XXL_OK;
	if (log->tail_count > 0 && write_tail(log, err) != XXL_OK)
		return err->code;
	xxl_budget_free(log->budget, log->tail, XXL_RUN_LOG_PAGE);
	log->tail = NULL;
	return XXL_OK;
}

void
xxl_run_log_close(xxl_run_log *log)
{
	if (log->tail != NULL)
		xxl_budget_free(log->budget, log->tail, XXL_RUN_LOG_PAGE);
	if (log->recent != NULL)
		xxl_budget_free(log->budget, log->recent, XXL_RUN_LOG_PAGE);
	log->tail = log->recent = NULL;
}

/* Cursors ---------------------------------------------------------------- */

xxl_status
xxl_run_log_cursor_open(xxl_run_log_cursor *c, xxl_run_log *log, xxl_run_log_pos from,
						xxl_budget *budget, xxl_error *err)
{
	memset(c, 0, sizeof(*c));
	c->log = log;
	c->pos = from;
	c->next_page = XXL_BID_NONE;
	c->buf = xxl_budget_alloc(budget, XXL_RUN_LOG_CURSOR, err);
	return c->buf != NULL ? XXL_OK : err->code;
}

/*
 * The page at bid, and how many of its records can be read: the tail in
 * memory, the recent page, or read from disk into the recent page.
 */
static xxl_status
page_at(xxl_run_log *log, xxl_bid bid, const unsigned char **page, size_t *valid, xxl_error *err)
{
	if (bid == log->tail_page && log->tail != NULL)
	{
		*page = log->tail;
		*valid = log->tail_count;
		return XXL_OK;
	}
	if (log->recent == NULL)
	{
		/* taken at the first read: a log being written needs none */
		log->recent = xxl_budget_alloc(log->budget, XXL_RUN_LOG_PAGE, err);
		if (log->recent == NULL)
			return err->code;
	}
	if (bid != log->recent_page)
	{
		log->recent_page = XXL_BID_NONE;
		if (page_io(log, bid, log->recent, false, err) != XXL_OK)
			return err->code;
		log->recent_page = bid;
	}
	*page = log->recent;
	/* a sealed log's last page holds tail_count records */
	*valid = bid == log->tail_page ? log->tail_count : log->per_page;
	return XXL_OK;
}

void
xxl_run_log_free_space(xxl_run_log *log)
{
	xxl_bid		prev = XXL_BID_NONE;
	xxl_bid		p = log->first_page;
	xxl_error	ignored = {0};

	if (p == XXL_BID_NONE)
		return;
	/* the written pages name their blocks; a block's pages are consecutive */
	while (p != log->tail_page)
	{
		const unsigned char *page = NULL;
		size_t		valid;
		xxl_bid		block;

		if (page_at(log, p, &page, &valid, &ignored) != XXL_OK)
			return;				/* the rest stays until the disks close */
		memcpy(&block, page + sizeof(xxl_bid), sizeof(block));
		memcpy(&p, page, sizeof(p));
		if (block != prev && prev != XXL_BID_NONE)
			xxl_block_free(log->disks, prev);
		prev = block;
	}
	if (log->tail_block != prev && prev != XXL_BID_NONE)
		xxl_block_free(log->disks, prev);
	prev = log->tail_block;
	if (log->next_block != prev)
		xxl_block_free(log->disks, prev);
	xxl_block_free(log->disks, log->next_block);
	log->first_page = XXL_BID_NONE;
	log->recent_page = XXL_BID_NONE;
}

xxl_status
xxl_run_log_next(xxl_run_log_cursor *c, const void **rec, xxl_error *err)
{
	xxl_run_log *log = c->log;

	if (c->used == c->nbuf)
	{
		const unsigned char *page = NULL;
		size_t		valid = 0,
					n;

		if (c->pos.slot == log->per_page)
		{
			c->pos.page = c->next_page;
			c->pos.slot = 0;
		}
		if (page_at(log, c->pos.page, &page, &valid, err) != XXL_OK)
			return err->code;
		if (c->pos.slot >= valid)
			return xxl_error_set(err, XXL_EINVAL, 0, "read past the end of a run log");
		n = valid - c->pos.slot;
		if (n > XXL_RUN_LOG_CURSOR / log->rec_size)
			n = XXL_RUN_LOG_CURSOR / log->rec_size;
		memcpy(c->buf, page + PAGE_HEADER + c->pos.slot * log->rec_size, n * log->rec_size);
		memcpy(&c->next_page, page, sizeof(c->next_page));
		c->pos.slot += n;
		c->nbuf = n;
		c->used = 0;
	}
	*rec = c->buf + c->used++ * log->rec_size;
	return XXL_OK;
}

void
xxl_run_log_cursor_close(xxl_run_log_cursor *c, xxl_budget *budget)
{
	if (c->buf != NULL)
		xxl_budget_free(budget, c->buf, XXL_RUN_LOG_CURSOR);
	c->buf = NULL;
}

/* A run's block table ---------------------------------------------------- */

void
xxl_run_init_logged(xxl_run *run, xxl_run_log *log)
{
	xxl_run_init(run);
	run->log = log;
}

xxl_status
xxl_run_cursor_open(xxl_run_cursor *c, const xxl_run *run, xxl_budget *budget, xxl_error *err)
{
	memset(c, 0, sizeof(*c));
	c->run = run;
	if (run->log == NULL)
		return XXL_OK;
	return xxl_run_log_cursor_open(&c->lc, run->log, run->first, budget, err);
}

xxl_status
xxl_run_cursor_seek(xxl_run_cursor *c, size_t b, xxl_run_block *out, xxl_error *err)
{
	const xxl_run *run = c->run;

	if (run->log == NULL)
	{
		out->bid = run->bids[b];
		out->key = run->block_keys[b];
		return XXL_OK;
	}
	if (b + 1 == c->next)
	{
		/* the block sought last */
		*out = c->at;
		return XXL_OK;
	}
	while (c->next <= b)
	{
		const void *rec;

		if (xxl_run_log_next(&c->lc, &rec, err) != XXL_OK)
			return err->code;
		memcpy(&c->at, rec, sizeof(c->at));
		c->next++;
	}
	*out = c->at;
	return XXL_OK;
}

void
xxl_run_cursor_close(xxl_run_cursor *c, xxl_budget *budget)
{
	if (c->run != NULL && c->run->log != NULL)
		xxl_run_log_cursor_close(&c->lc, budget);
	memset(c, 0, sizeof(*c));
}
