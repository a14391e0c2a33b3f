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
	if (page % XXL_ALIGN != 0 || ps->block % page != 0)
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

/* Append a page to the chain's blocks and write it. */
static xxl_status
chain_write(is_pages *ps, is_chain *ch, const void *buf)
{
	xxl_env    *env = ps->env;

	if (ch->blk == XXL_BID_NONE || ch->blk_used == ps->block)
	{
		if (xxl_block_alloc(ps->disks, &ch->blk, &env->err) != XXL_OK)
		{
			ch->blk = XXL_BID_NONE;
			return env->err.code;
		}
		ch->blk_used = 0;
	}
	if (ch->n == ch->cap)
	{
		size_t		cap = ch->cap ? 2 * ch->cap : 64;
		uint64_t   *grown = xxl_env_realloc(env, ch->addr, ch->cap * sizeof(uint64_t),
											cap * sizeof(uint64_t));

		if (grown == NULL)
			return env->err.code;
		ch->addr = grown;
		grown = xxl_env_realloc(env, ch->base, ch->cap * sizeof(uint64_t), cap * sizeof(uint64_t));
		if (grown == NULL)
			return env->err.code;
		ch->base = grown;
		ch->cap = cap;
	}
	ch->base[ch->n] = ch->blk;
	ch->addr[ch->n] = ch->blk + ch->blk_used;
	ch->blk_used += ps->page;
	return page_io(ps, ch->addr[ch->n++], (void *) buf, true);
}

static void
chain_init(is_chain *ch)
{
	memset(ch, 0, sizeof(*ch));
	ch->blk = XXL_BID_NONE;
}

/* Free the blocks of pages not yet read (all of them once reading is done). */
static void
chain_free(is_pages *ps, is_chain *ch, size_t from, size_t to)
{
	xxl_bid		last = XXL_BID_NONE;

	for (size_t i = from; i < to; i++)
	{
		xxl_bid		b = ch->base[i];

		if (b != last)
			xxl_block_free(ps->disks, b);
		last = b;
	}
	if (ch->blk != XXL_BID_NONE && ch->blk != last)
		xxl_block_free(ps->disks, ch->blk);
	if (ch->addr)
		xxl_env_free(ps->env, ch->addr, ch->cap * sizeof(uint64_t));
	if (ch->base)
		xxl_env_free(ps->env, ch->base, ch->cap * sizeof(uint64_t));
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

			/* a block is shared by the pages of one queue only: free from the first unread */
			chain_free(ps, &q->ch, q->ch.head, q->ch.n);
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
	memcpy(q->tail, &(uint32_t) {(uint32_t) q->fill}, IS_PAGE_HEADER);
	if (chain_write(ps, &q->ch, q->tail) != XXL_OK)
		return ps->env->err.code;
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
	if (q->ch.head < q->ch.n)
	{
		uint64_t	addr = q->ch.addr[q->ch.head],
					base = q->ch.base[q->ch.head++];

		if (page_io(ps, addr, qs->rbuf, false) != XXL_OK)
			return ps->env->err.code;
		/* the block's last page read: the block is done */
		if (addr - base + ps->page == ps->block)
		{
			xxl_block_free(ps->disks, base);
			if (q->ch.blk == base)
				q->ch.blk = XXL_BID_NONE;
		}
		memcpy(&used, qs->rbuf, IS_PAGE_HEADER);
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
	/* reading consumes pages from the end: ch.n counts those left */
	chain_free(st->ps, &st->ch, 0, st->ch.n);
	if (st->buf)
		xxl_env_free(st->ps->env, st->buf, st->ps->page);
	memset(st, 0, sizeof(*st));
}

xxl_status
is_stack_flush(is_stack *st)
{
	is_pages   *ps = st->ps;

	memcpy(st->buf, &(uint32_t) {(uint32_t) st->fill}, IS_PAGE_HEADER);
	if (chain_write(ps, &st->ch, st->buf) != XXL_OK)
		return ps->env->err.code;
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
	addr = st->ch.addr[--st->ch.n];
	base = st->ch.base[st->ch.n];
	if (page_io(ps, addr, st->buf, false) != XXL_OK)
		return ps->env->err.code;
	/* read backwards: a block's first page read is its last */
	if (addr == base)
	{
		xxl_block_free(ps->disks, base);
		if (st->ch.blk == base)
			st->ch.blk = XXL_BID_NONE;
	}
	memcpy(&used, st->buf, IS_PAGE_HEADER);
	st->fill = used;
	return XXL_OK;
}
