/*
 * is_pages.c — the induced sorter's bucket queues and stack (is_pages.h):
 * pages of variable-length records moved whole to and from spill blocks.
 */
#include "core/text/is_pages.h"

#include <string.h>

xxl_status
is_pages_open(is_pages *ps, xxl_env *env, size_t page)
{
	xxl_disk_config c = env->disk;

	memset(ps, 0, sizeof(*ps));
	ps->env = env;
	ps->page = page;
	ps->block = env->disk.block_size;
	if (page % IS_PAGE_MIN != 0 || ps->block % page != 0)
		return xxl_error_set(&env->err, XXL_EINVAL, 0, "page of %zu bytes does not divide blocks of %zu",
							 page, ps->block);
	c.try_direct = false;
	ps->disks = xxl_disks_open(&c, &env->err);
	return ps->disks ? XXL_OK : env->err.code;
}

void
is_pages_close(is_pages *ps)
{
	if (ps->disks)
	{
		xxl_io_stats io;

		xxl_disks_stats(ps->disks, &io);
		xxl_io_fold(&ps->env->done.io, &io);
		xxl_disks_close(ps->disks);
	}
	ps->disks = NULL;
}

static xxl_status
page_io(is_pages *ps, uint64_t addr, void *buf, bool is_write)
{
	xxl_io_request req;

	memset(&req, 0, sizeof(req));
	req.bid = addr;
	req.buf = buf;
	req.len = ps->page;
	req.is_write = is_write;
	return xxl_io_sync(ps->disks, &req, &ps->env->err);
}

/* A page's room on disk: the next of the block being filled, or of a new block. */
static xxl_status
take_page(is_pages *ps, is_chain *ch, uint64_t *addr, uint64_t *base)
{
	*addr = *base = XXL_BID_NONE;
	if (ch->blk == XXL_BID_NONE || ch->blk_used == ps->block)
	{
		if (xxl_block_alloc(ps->disks, &ch->blk, &ps->env->err) != XXL_OK)
		{
			ch->blk = XXL_BID_NONE;
			return ps->env->err.code;
		}
		ch->blk_used = 0;
	}
	*addr = ch->blk + ch->blk_used;
	*base = ch->blk;
	ch->blk_used += ps->page;
	return XXL_OK;
}

/* Fill in the page's header and write it at addr. */
static xxl_status
write_page(is_pages *ps, unsigned char *buf, size_t used, uint64_t link, uint64_t addr,
		   uint64_t base)
{
	uint32_t	u = (uint32_t) used,
				unused = 0;

	/* (the page is written whole: no stale bytes on disk past what it holds) */
	memset(buf + used, 0, ps->page - used);
	memcpy(buf, &u, 4);
	memcpy(buf + 4, &unused, 4);
	memcpy(buf + 8, &link, 8);
	memcpy(buf + 16, &base, 8);
	return page_io(ps, addr, buf, true);
}

/* Read the page at addr: its bytes used, link and block. */
static xxl_status
read_page(is_pages *ps, uint64_t addr, unsigned char *buf, uint32_t *used, uint64_t *link,
		  uint64_t *base)
{
	*used = 0;
	*link = *base = XXL_BID_NONE;
	if (page_io(ps, addr, buf, false) != XXL_OK)
		return ps->env->err.code;
	memcpy(used, buf, 4);
	memcpy(link, buf + 8, 8);
	memcpy(base, buf + 16, 8);
	return XXL_OK;
}

static void
chain_init(is_chain *ch)
{
	memset(ch, 0, sizeof(*ch));
	ch->blk = XXL_BID_NONE;
	ch->next = ch->next_base = XXL_BID_NONE;
}

/* A page read: its block goes once its last page has been read. */
static void
page_done(is_pages *ps, is_chain *ch, uint64_t base, bool last)
{
	if (!last)
		return;
	xxl_block_free(ps->disks, base);
	if (ch->blk == base)
		ch->blk = XXL_BID_NONE;
}

/*
 * Free the blocks of the pages not read yet (walking their links through
 * buf) and of the block being filled.
 */
static void
chain_free(is_pages *ps, is_chain *ch, unsigned char *buf, bool queue)
{
	xxl_bid		last = XXL_BID_NONE;
	uint64_t	addr = ch->end;

	for (uint64_t i = 0; i < ch->n && buf != NULL; i++)
	{
		uint32_t	used;
		uint64_t	link,
					base;

		if (read_page(ps, addr, buf, &used, &link, &base) != XXL_OK)
			break;				/* the rest goes when the disk set closes */
		if (base != last && base != ch->blk && base != ch->next_base)
			xxl_block_free(ps->disks, base);
		last = base;
		addr = link;
	}
	if (ch->blk != XXL_BID_NONE)
		xxl_block_free(ps->disks, ch->blk);
	if (queue && ch->next != XXL_BID_NONE && ch->next_base != ch->blk)
		xxl_block_free(ps->disks, ch->next_base);
	chain_init(ch);
}

/* Queues ------------------------------------------------------------------- */

xxl_status
is_queues_open(is_queues *qs, is_pages *ps, int nq)
{
	xxl_env    *env = ps->env;

	memset(qs, 0, sizeof(*qs));
	qs->ps = ps;
	qs->rq = -1;
	qs->q = xxl_env_alloc(env, (size_t) nq * sizeof(is_queue));
	if (qs->q == NULL)
		return env->err.code;
	qs->nq = nq;
	for (int c = 0; c < nq; c++)
	{
		qs->q[c].tail = NULL;
		qs->q[c].fill = 0;
		chain_init(&qs->q[c].ch);
	}
	qs->rbuf = xxl_env_alloc(env, ps->page);
	return qs->rbuf ? XXL_OK : env->err.code;
}

void
is_queues_close(is_queues *qs)
{
	is_pages   *ps = qs->ps;

	if (qs->q)
	{
		for (int c = 0; c < qs->nq; c++)
		{
			is_queue   *q = &qs->q[c];

			/* a block is shared by the pages of one queue only */
			chain_free(ps, &q->ch, qs->rbuf, true);
			if (q->tail)
				xxl_env_free(ps->env, q->tail, ps->page);
		}
		xxl_env_free(ps->env, qs->q, (size_t) qs->nq * sizeof(is_queue));
	}
	if (qs->rbuf)
		xxl_env_free(ps->env, qs->rbuf, ps->page);
	memset(qs, 0, sizeof(*qs));
}

/* The tail is full (or absent): write it out, start an empty one. */
xxl_status
is_queue_flush(is_queues *qs, is_queue *q)
{
	is_pages   *ps = qs->ps;

	if (q->tail == NULL)
	{
		q->tail = xxl_env_alloc(ps->env, ps->page);
		if (q->tail == NULL)
			return ps->env->err.code;
		q->fill = IS_PAGE_HEADER;
		return XXL_OK;
	}
	{
		is_chain   *ch = &q->ch;
		uint64_t	addr = ch->next,
					base = ch->next_base;

		/* the page goes where the last one said; the one after is reserved now */
		if ((addr == XXL_BID_NONE && take_page(ps, ch, &addr, &base) != XXL_OK) ||
			take_page(ps, ch, &ch->next, &ch->next_base) != XXL_OK ||
			write_page(ps, q->tail, q->fill, ch->next, addr, base) != XXL_OK)
			return ps->env->err.code;
		if (ch->n++ == 0)
			ch->end = addr;
	}
	q->fill = IS_PAGE_HEADER;
	return XXL_OK;
}

/*
 * The next page of queue c into the read buffer: its oldest page on disk,
 * else its tail, which is swapped in (an empty page takes the tail's place).
 */
xxl_status
is_queue_next_page(is_queues *qs, int c, bool *empty)
{
	is_pages   *ps = qs->ps;
	is_queue   *q = &qs->q[c];
	uint32_t	used;

	*empty = false;
	qs->rq = c;
	if (q->ch.n > 0)
	{
		uint64_t	addr = q->ch.end,
					base;

		if (read_page(ps, addr, qs->rbuf, &used, &q->ch.end, &base) != XXL_OK)
			return ps->env->err.code;
		q->ch.n--;
		/* pages are read in the order written: a block's last page read ends it */
		page_done(ps, &q->ch, base, addr - base + ps->page == ps->block);
		qs->rpos = IS_PAGE_HEADER;
		qs->rend = used;
		return XXL_OK;
	}
	if (q->tail == NULL || q->fill == IS_PAGE_HEADER)
	{
		*empty = true;
		qs->rpos = qs->rend = 0;
		return XXL_OK;
	}
	{
		unsigned char *t = q->tail;

		q->tail = qs->rbuf;
		qs->rbuf = t;
		qs->rpos = IS_PAGE_HEADER;
		qs->rend = q->fill;
		q->fill = IS_PAGE_HEADER;
	}
	return XXL_OK;
}

/* Stack -------------------------------------------------------------------- */

xxl_status
is_stack_open(is_stack *st, is_pages *ps)
{
	memset(st, 0, sizeof(*st));
	st->ps = ps;
	chain_init(&st->ch);
	st->buf = xxl_env_alloc(ps->env, ps->page);
	st->fill = IS_PAGE_HEADER;
	return st->buf ? XXL_OK : ps->env->err.code;
}

void
is_stack_close(is_stack *st)
{
	if (st->ps == NULL)
		return;
	chain_free(st->ps, &st->ch, st->buf, false);
	if (st->buf)
		xxl_env_free(st->ps->env, st->buf, st->ps->page);
	memset(st, 0, sizeof(*st));
}

xxl_status
is_stack_flush(is_stack *st)
{
	is_pages   *ps = st->ps;

	uint64_t	addr,
				base;

	/* each page names the one below it */
	if (take_page(ps, &st->ch, &addr, &base) != XXL_OK ||
		write_page(ps, st->buf, st->fill, st->ch.n > 0 ? st->ch.end : XXL_BID_NONE, addr,
				   base) != XXL_OK)
		return ps->env->err.code;
	st->ch.end = addr;
	st->ch.n++;
	st->fill = IS_PAGE_HEADER;
	return XXL_OK;
}

xxl_status
is_stack_prev_page(is_stack *st, bool *empty)
{
	is_pages   *ps = st->ps;
	uint64_t	addr,
				base;
	uint32_t	used;

	*empty = st->ch.n == 0;
	if (*empty)
		return XXL_OK;
	addr = st->ch.end;
	if (read_page(ps, addr, st->buf, &used, &st->ch.end, &base) != XXL_OK)
		return ps->env->err.code;
	st->ch.n--;
	/* read backwards: a block's first page read is its last */
	page_done(ps, &st->ch, base, addr == base);
	st->fill = used;
	return XXL_OK;
}
