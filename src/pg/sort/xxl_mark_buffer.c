/*
 * xxl_mark_buffer.c — the records handed out since a mark, to hand out
 * again (see xxl_mark_buffer.h).
 *
 * One growing byte array of entries [alen][blen][a][b], unaligned (the
 * records are read unaligned, as they are in the sorter's batches).
 * `read` is where the next row comes from: an entry when it is below
 * `used`, else a new record, which is appended.  Moving the entries after
 * the mark to the front waits until a new record is appended, because the
 * row handed out last (the marked one, which the merge join copies right
 * after marking) may lie before the mark.
 */
#include "postgres.h"

#include "pg/sort/xxl_mark_buffer.h"
#include "utils/memutils.h"

#define ENTRY_HEAD (2 * sizeof(uint32))

struct XxlMarkBuffer
{
	MemoryContext cxt;
	char	   *data;
	size_t		cap;
	size_t		used;			/* bytes of entries */
	size_t		read;			/* the next entry to hand out again */
	size_t		mark;			/* where a restore goes back to */
	bool		marking;		/* a mark was set: keep new records */
	size_t		peak;
};

XxlMarkBuffer *
xxl_mark_buffer_create(MemoryContext cxt)
{
	XxlMarkBuffer *buf = MemoryContextAllocZero(cxt, sizeof(XxlMarkBuffer));

	buf->cxt = cxt;
	return buf;
}

void
xxl_mark_buffer_mark(XxlMarkBuffer *buf)
{
	buf->marking = true;
	buf->mark = buf->read;
}

void
xxl_mark_buffer_restore(XxlMarkBuffer *buf)
{
	if (buf->marking)
		buf->read = buf->mark;
}

bool
xxl_mark_buffer_next(XxlMarkBuffer *buf, const void **a, uint32 *alen,
					 const void **b, uint32 *blen)
{
	const char *p;

	if (buf->read >= buf->used)
		return false;
	p = buf->data + buf->read;
	memcpy(alen, p, sizeof(uint32));
	memcpy(blen, p + sizeof(uint32), sizeof(uint32));
	*a = p + ENTRY_HEAD;
	*b = p + ENTRY_HEAD + *alen;
	buf->read += ENTRY_HEAD + *alen + *blen;
	return true;
}

void
xxl_mark_buffer_keep(XxlMarkBuffer *buf, const void *a, uint32 alen,
					 const void *b, uint32 blen)
{
	size_t		size = ENTRY_HEAD + (size_t) alen + blen;
	char	   *p;

	Assert(buf->read == buf->used);
	if (!buf->marking)
		return;
	if (buf->mark > 0)
	{
		/* what came before the mark is no longer needed */
		memmove(buf->data, buf->data + buf->mark, buf->used - buf->mark);
		buf->used -= buf->mark;
		buf->mark = 0;
	}
	if (buf->used + size > buf->cap)
	{
		size_t		cap = Max(buf->cap, 8192);

		while (cap < buf->used + size)
			cap *= 2;
		buf->data = buf->data ? repalloc_huge(buf->data, cap) :
			MemoryContextAllocHuge(buf->cxt, cap);
		buf->cap = cap;
	}
	p = buf->data + buf->used;
	memcpy(p, &alen, sizeof(uint32));
	memcpy(p + sizeof(uint32), &blen, sizeof(uint32));
	memcpy(p + ENTRY_HEAD, a, alen);
	if (blen > 0)
		memcpy(p + ENTRY_HEAD + alen, b, blen);
	buf->used += size;
	buf->read = buf->used;
	buf->peak = Max(buf->peak, buf->used);
}

bool
xxl_mark_buffer_replaying(const XxlMarkBuffer *buf)
{
	return buf->read < buf->used;
}

size_t
xxl_mark_buffer_bytes(const XxlMarkBuffer *buf)
{
	return buf->used;
}

size_t
xxl_mark_buffer_peak(const XxlMarkBuffer *buf)
{
	return buf->peak;
}

void
xxl_mark_buffer_clear(XxlMarkBuffer *buf)
{
	if (buf->data != NULL)
		pfree(buf->data);
	buf->data = NULL;
	buf->cap = buf->used = buf->read = buf->mark = 0;
	buf->marking = false;
}
