/*
 * is_pages.h — the induced sorter's external containers of variable-length
 * records (is_pages.c): a set of FIFO queues, one per bucket, and a stack
 * read from its end.  Both keep one page per queue (or stack) in memory and
 * move whole pages to and from spill blocks of their own buffered disk set
 * (a page is small, so that a page per character of the alphabet fits the
 * budget; buffered, the kernel merges the pages' writes).  The pages on
 * disk are a linked list (each names the next page of its queue, or the
 * previous one of the stack, and its own block), so the memory of a queue
 * does not grow with what it holds.  A record never straddles two pages;
 * the caller's records describe their own length.  Owner thread only.
 */
#ifndef XXL_IS_PAGES_H
#define XXL_IS_PAGES_H

#include "core/xxl_env.h"

/*
 * Bytes at the start of every page: how many bytes of it are used (4, then
 * 4 unused), the link (8: a queue's next page, the stack's previous one),
 * and the page's block (8: blocks of a shared spill file start wherever the
 * file had room).
 */
#define IS_PAGE_HEADER 24
/*
 * The smallest page: buffered I/O needs no alignment, and at the least
 * budgets a page per character of the alphabet must fit the queues' share.
 */
#define IS_PAGE_MIN 1024

/* Pages on disk, a linked list, in blocks filled page by page. */
typedef struct is_chain
{
	xxl_bid		blk;			/* the block being filled, or XXL_BID_NONE */
	size_t		blk_used;		/* bytes of it given to pages */
	uint64_t	n;				/* pages on disk not read yet */
	uint64_t	end;			/* queue: the next page to read; stack: the top page */
	uint64_t	next,			/* queue: where the next page written goes */
				next_base;
} is_chain;

typedef struct is_pages
{
	xxl_env    *env;
	xxl_disks  *disks;
	size_t		page,
				block;
} is_pages;

xxl_status	is_pages_open(is_pages *ps, xxl_env *env, size_t page);
void		is_pages_close(is_pages *ps);

/* FIFO queues -------------------------------------------------------------- */

typedef struct is_queue
{
	unsigned char *tail;		/* the page being filled (NULL before the first record) */
	size_t		fill;
	is_chain	ch;
} is_queue;

typedef struct is_queues
{
	is_pages   *ps;
	int			nq;
	is_queue   *q;
	/* the queue being read */
	int			rq;
	unsigned char *rbuf;
	size_t		rpos,
				rend;
} is_queues;

xxl_status	is_queues_open(is_queues *qs, is_pages *ps, int nq);
void		is_queues_close(is_queues *qs);

xxl_status	is_queue_flush(is_queues *qs, is_queue *q);

/* Room for a record of len bytes at the end of queue c; NULL on error. */
static inline unsigned char *
is_queue_room(is_queues *qs, int c, size_t len)
{
	is_queue   *q = &qs->q[c];

	if (q->tail == NULL || q->fill + len > qs->ps->page)
	{
		if (is_queue_flush(qs, q) != XXL_OK)
			return NULL;
	}
	return q->tail + q->fill;
}

/* Take the len bytes written at is_queue_room(qs, c, len). */
static inline void
is_queue_commit(is_queues *qs, int c, size_t len)
{
	qs->q[c].fill += len;
}

xxl_status	is_queue_next_page(is_queues *qs, int c, bool *empty);

/*
 * The next record of queue c (read one queue after another: switching to
 * another queue drops what is left of the page being read): a pointer
 * valid until the next is_queue_peek, or NULL when the queue is empty (or on
 * error: see env->err).  Records pushed into queue c meanwhile come after.
 */
static inline const unsigned char *
is_queue_peek(is_queues *qs, int c)
{
	bool		empty;

	if (qs->rq == c && qs->rpos < qs->rend)
		return qs->rbuf + qs->rpos;
	if (is_queue_next_page(qs, c, &empty) != XXL_OK || empty)
		return NULL;
	return qs->rbuf + qs->rpos;
}

static inline void
is_queue_advance(is_queues *qs, size_t len)
{
	qs->rpos += len;
}

/* A stack, read from its last record to its first -------------------------- */

/*
 * Records end with a field that tells the reader where they begin (the
 * caller's format): the reader gets a pointer to a record's end.
 */
typedef struct is_stack
{
	is_pages   *ps;
	unsigned char *buf;
	size_t		fill;			/* writing: bytes of buf used; reading: bytes left of it */
	is_chain	ch;
} is_stack;

xxl_status	is_stack_open(is_stack *st, is_pages *ps);
void		is_stack_close(is_stack *st);
xxl_status	is_stack_flush(is_stack *st);

static inline unsigned char *
is_stack_room(is_stack *st, size_t len)
{
	if (st->fill + len > st->ps->page && is_stack_flush(st) != XXL_OK)
		return NULL;
	return st->buf + st->fill;
}

static inline void
is_stack_commit(is_stack *st, size_t len)
{
	st->fill += len;
}

xxl_status	is_stack_prev_page(is_stack *st, bool *empty);

/*
 * The end of the last record not yet read (the caller reads backwards from
 * it and tells is_stack_back how long the record was); NULL when none is
 * left or on error.  Reading may start as soon as writing ends: the page in
 * memory holds the last records.
 */
static inline const unsigned char *
is_stack_top(is_stack *st)
{
	bool		empty;

	if (st->fill > IS_PAGE_HEADER)
		return st->buf + st->fill;
	if (is_stack_prev_page(st, &empty) != XXL_OK || empty)
		return NULL;
	return st->buf + st->fill;
}

static inline void
is_stack_back(is_stack *st, size_t len)
{
	st->fill -= len;
}

#endif							/* XXL_IS_PAGES_H */
