/*
 * text_store.c — a text with random access by position (xxl_text_store.h).
 *
 * In memory the text is a list of block-sized chunks from the budget.  When
 * the chunks would pass half the budget they are written out, and the rest
 * of the text streams through two write buffers (one filling while the
 * other is written).  After the end, reads go through a small cache of
 * blocks with least-recently-used replacement: a binary search revisits the
 * same few blocks near its end, and windows that straddle a block boundary
 * need two at once.
 */
#include "core/text/xxl_text_store.h"
#include "core/text/text_internal.h"

#include <stdlib.h>
#include <string.h>

#define STORE_MAX_BLOCK (64 * 1024)
#define STORE_CACHE 8
#define STORE_MIN_PAGES 16
/* read in order only: larger blocks, of which one is cached at a time */
#define SEQ_MAX_BLOCK (256 * 1024)
#define SEQ_BLOCKS 4

typedef struct cache_slot
{
	unsigned char *buf;
	uint64_t	block;			/* UINT64_MAX: empty */
	uint64_t	used;			/* tick of the last use */
} cache_slot;

struct xxl_text_store
{
	xxl_budget	budget;
	xxl_error	err;
	xxl_disk_config disk;
	xxl_cancel_fn cancel;
	void	   *cancel_arg;
	size_t		block;
	uint64_t	n;
	bool		finished;

	/* in memory */
	unsigned char **chunks;
	size_t		nchunks;
	size_t		chunks_cap;
	size_t		mem_limit;

	/* on disk */
	bool		on_disk;
	xxl_disks  *disks;
	xxl_bid    *bids;			/* of the extents */
	size_t		nbids;
	size_t		bids_cap;
	size_t		per_extent;		/* blocks per extent */
	uint64_t	nblocks;		/* written */
	unsigned char *wbuf[2];
	xxl_io_request wreq[2];
	bool		wpending[2];
	int			widx;
	size_t		wfill;

	/* reads */
	cache_slot	cache[STORE_CACHE];
	int			ncache;			/* slots in use: 1 when read in order */
	uint64_t	tick;
	uint64_t	block_reads;
	uint64_t	windows;
	uint64_t	forgotten;		/* blocks below this one are gone */
};

xxl_text_store *
xxl_text_store_create(const xxl_sa_config *cfg, xxl_error *err)
{
	xxl_text_store *s = calloc(1, sizeof(*s));
	size_t		block = cfg->res.disk.block_size ? cfg->res.disk.block_size : STORE_MAX_BLOCK;

	if (s == NULL)
	{
		xxl_error_set(err, XXL_ENOMEM, 0, "could not allocate the text store");
		return NULL;
	}
	if (block > (cfg->sequential ? SEQ_MAX_BLOCK : STORE_MAX_BLOCK))
		block = cfg->sequential ? SEQ_MAX_BLOCK : STORE_MAX_BLOCK;
	/*
	 * The cache, the write buffers and some chunks must fit comfortably; read
	 * in order, one cached block and the two write buffers, and the rest for
	 * the block list, which large blocks keep short.
	 */
	while (block > XXL_ALIGN && block * (cfg->sequential ? 2 * SEQ_BLOCKS : 32) > cfg->res.memory)
		block /= 2;
	block -= block % XXL_ALIGN;
	if (block < XXL_ALIGN)
		block = XXL_ALIGN;
	/* the least: the cache and the write buffers in pages, and as much again for chunks */
	if (cfg->res.memory < STORE_MIN_PAGES * (size_t) XXL_ALIGN)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "memory budget of %zu bytes is too small for the text store",
					  cfg->res.memory);
		free(s);
		return NULL;
	}
	xxl_budget_init(&s->budget, cfg->res.memory);
	s->disk = cfg->res.disk;
	/* blocks on disk come in extents: 8 bytes of memory a MB of text */
	s->per_extent = xxl_extent_for(block) / block;
	s->disk.block_size = block * s->per_extent;
	/* blocks of at most 256 kB: through the page cache, as the parts' small ones */
	s->disk.try_direct &= xxl_direct_pays(block);
	s->block = block;
	s->cancel = cfg->res.cancel;
	s->cancel_arg = cfg->res.cancel_arg;
	/* what the reads need later (cache) stays free; half of the rest for chunks */
	s->mem_limit = (cfg->res.memory - ((cfg->sequential ? 1 : STORE_CACHE) + 2) * block) / 2;
	for (int i = 0; i < STORE_CACHE; i++)
		s->cache[i].block = UINT64_MAX;
	s->ncache = cfg->sequential ? 1 : STORE_CACHE;
	return s;
}

static xxl_status
grow_array(xxl_text_store *s, void **arr, size_t *cap, size_t elem)
{
	size_t		ncap = *cap ? *cap * 2 : 64;
	void	   *grown = xxl_budget_realloc(&s->budget, *arr, *cap * elem, ncap * elem, &s->err);

	if (grown == NULL)
		return s->err.code;
	*arr = grown;
	*cap = ncap;
	return XXL_OK;
}

static xxl_status
io_status(xxl_text_store *s, xxl_io_request *req)
{
	return xxl_io_wait(s->disks, req, &s->err);
}

/* Where block b is on disk. */
static inline xxl_bid
block_bid(const xxl_text_store *s, uint64_t b)
{
	return s->bids[b / s->per_extent] + (b % s->per_extent) * s->block;
}

/* Write one block-sized buffer as the next block, without waiting. */
static xxl_status
post_block(xxl_text_store *s, unsigned char *buf, xxl_io_request *req)
{
	if (s->nblocks % s->per_extent == 0)
	{
		xxl_bid		bid;

		if (s->nbids == s->bids_cap &&
			grow_array(s, (void **) &s->bids, &s->bids_cap, sizeof(xxl_bid)) != XXL_OK)
			return s->err.code;
		if (xxl_block_alloc(s->disks, &bid, &s->err) != XXL_OK)
			return s->err.code;
		s->bids[s->nbids++] = bid;
	}
	memset(req, 0, sizeof(*req));
	req->bid = block_bid(s, s->nblocks++);
	req->buf = buf;
	req->len = s->block;
	req->is_write = true;
	xxl_io_post(s->disks, req);
	return XXL_OK;
}

/* Move the chunks to disk; later bytes go through the write buffers. */
static xxl_status
spill(xxl_text_store *s)
{
	s->disks = xxl_disks_open(&s->disk, &s->err);
	if (s->disks == NULL)
		return s->err.code;
	s->on_disk = true;
	for (int i = 0; i < 2; i++)
	{
		s->wbuf[i] = xxl_budget_alloc(&s->budget, s->block, &s->err);
		if (s->wbuf[i] == NULL)
			return s->err.code;
	}
	/* every chunk is full: spilling happens when a new one is needed */
	for (size_t i = 0; i < s->nchunks; i++)
	{
		xxl_io_request req;

		if (post_block(s, s->chunks[i], &req) != XXL_OK || io_status(s, &req) != XXL_OK)
			return s->err.code;
		xxl_budget_free(&s->budget, s->chunks[i], s->block);
		s->chunks[i] = NULL;
	}
	xxl_budget_free(&s->budget, s->chunks, s->chunks_cap * sizeof(unsigned char *));
	s->chunks = NULL;
	s->nchunks = s->chunks_cap = 0;
	s->widx = 0;
	s->wfill = 0;
	return XXL_OK;
}

/* The buffer the next bytes go to, with room; NULL on error. */
static unsigned char *
current_buffer(xxl_text_store *s, size_t *room)
{
	size_t		used = (size_t) (s->n % s->block);

	if (!s->on_disk)
	{
		if (used == 0 && s->n / s->block == s->nchunks)
		{
			/* a new chunk, if the budget share allows it */
			if ((s->nchunks + 1) * s->block > s->mem_limit)
			{
				if (spill(s) != XXL_OK)
					return NULL;
				return current_buffer(s, room);
			}
			if (s->nchunks == s->chunks_cap &&
				grow_array(s, (void **) &s->chunks, &s->chunks_cap, sizeof(unsigned char *)) != XXL_OK)
				return NULL;
			s->chunks[s->nchunks] = xxl_budget_alloc(&s->budget, s->block, &s->err);
			if (s->chunks[s->nchunks] == NULL)
				return NULL;
			s->nchunks++;
		}
		*room = s->block - used;
		return s->chunks[s->n / s->block] + used;
	}
	if (s->wfill == s->block)
	{
		/* the full buffer goes out; the other one must be written by now */
		if (post_block(s, s->wbuf[s->widx], &s->wreq[s->widx]) != XXL_OK)
			return NULL;
		s->wpending[s->widx] = true;
		s->widx ^= 1;
		if (s->wpending[s->widx])
		{
			s->wpending[s->widx] = false;
			if (io_status(s, &s->wreq[s->widx]) != XXL_OK)
				return NULL;
		}
		s->wfill = 0;
		if (xxl_poll_cancel(s->cancel, s->cancel_arg, &s->err, "text store"))
			return NULL;
	}
	*room = s->block - s->wfill;
	return s->wbuf[s->widx] + s->wfill;
}

xxl_status
xxl_text_store_put(xxl_text_store *s, const void *bytes, size_t len)
{
	const unsigned char *src = bytes;

	if (s->err.code != XXL_OK)
		return s->err.code;
	if (s->finished)
		return xxl_error_set(&s->err, XXL_EINVAL, 0, "text store: put after finish");
	if (s->n + len >= XXL_SA_MAX_TEXT)
		return xxl_error_set(&s->err, XXL_EINVAL, 0, "text longer than 2^40 bytes");
	while (len > 0)
	{
		size_t		room;
		unsigned char *dst = current_buffer(s, &room);

		if (dst == NULL)
			return s->err.code;
		if (room > len)
			room = len;
		memcpy(dst, src, room);
		src += room;
		len -= room;
		s->n += room;
		if (s->on_disk)
			s->wfill += room;
	}
	return XXL_OK;
}

xxl_status
xxl_text_store_finish(xxl_text_store *s)
{
	if (s->err.code != XXL_OK)
		return s->err.code;
	if (s->finished)
		return XXL_OK;
	s->finished = true;
	if (s->on_disk)
	{
		if (s->wfill > 0)
		{
			if (post_block(s, s->wbuf[s->widx], &s->wreq[s->widx]) != XXL_OK)
				return s->err.code;
			s->wpending[s->widx] = true;
		}
		for (int i = 0; i < 2; i++)
		{
			if (s->wpending[i])
			{
				s->wpending[i] = false;
				if (io_status(s, &s->wreq[i]) != XXL_OK)
					return s->err.code;
			}
			xxl_budget_free(&s->budget, s->wbuf[i], s->block);
			s->wbuf[i] = NULL;
		}
	}
	return XXL_OK;
}

uint64_t
xxl_text_store_size(const xxl_text_store *s)
{
	return s->n;
}

/* The block holding position pos, in memory or read into the cache. */
static const unsigned char *
get_block(xxl_text_store *s, uint64_t b)
{
	cache_slot *victim = &s->cache[0];
	xxl_io_request req;

	if (b < s->forgotten)
	{
		xxl_error_set(&s->err, XXL_EINVAL, 0, "text store: block %llu was read for the last time",
					  (unsigned long long) b);
		return NULL;
	}
	if (!s->on_disk)
		return s->chunks[b];
	for (int i = 0; i < s->ncache; i++)
	{
		if (s->cache[i].block == b)
		{
			s->cache[i].used = ++s->tick;
			return s->cache[i].buf;
		}
		if (s->cache[i].used < victim->used)
			victim = &s->cache[i];
	}
	if (victim->buf == NULL)
	{
		victim->buf = xxl_budget_alloc(&s->budget, s->block, &s->err);
		if (victim->buf == NULL)
			return NULL;
	}
	victim->block = UINT64_MAX;
	memset(&req, 0, sizeof(req));
	req.bid = block_bid(s, b);
	req.buf = victim->buf;
	req.len = s->block;
	req.is_write = false;
	/* a reader waits for the block anyway: no hand-over to the disk thread and back */
	if (xxl_io_sync(s->disks, &req, &s->err) != XXL_OK)
		return NULL;
	s->block_reads++;
	victim->block = b;
	victim->used = ++s->tick;
	return victim->buf;
}

xxl_status
xxl_text_store_compare(xxl_text_store *s, uint64_t pos, const unsigned char *p, size_t len,
					   int *cmp)
{
	uint64_t	avail,
				m;

	*cmp = 0;
	if (s->err.code != XXL_OK)
		return s->err.code;
	if (!s->finished)
		return xxl_error_set(&s->err, XXL_EINVAL, 0, "text store: read before finish");
	s->windows++;
	avail = pos < s->n ? s->n - pos : 0;
	m = len < avail ? len : avail;
	while (m > 0)
	{
		uint64_t	b = pos / s->block;
		size_t		off = (size_t) (pos % s->block);
		size_t		k = s->block - off;
		const unsigned char *blk;
		int			c;

		if (k > m)
			k = (size_t) m;
		blk = get_block(s, b);
		if (blk == NULL)
			return s->err.code;
		c = memcmp(blk + off, p, k);
		if (c != 0)
		{
			*cmp = c;
			return XXL_OK;
		}
		pos += k;
		p += k;
		m -= k;
		len -= k;
	}
	/* equal as far as the suffix goes: a shorter suffix is smaller */
	*cmp = len > 0 ? -1 : 0;
	return XXL_OK;
}

static xxl_status
check_readable(xxl_text_store *s)
{
	if (s->err.code != XXL_OK)
		return s->err.code;
	if (!s->finished)
		return xxl_error_set(&s->err, XXL_EINVAL, 0, "text store: read before finish");
	return XXL_OK;
}

xxl_status
xxl_text_store_read(xxl_text_store *s, uint64_t pos, void *buf, size_t len, size_t *got)
{
	unsigned char *out = buf;

	*got = 0;
	if (check_readable(s) != XXL_OK)
		return s->err.code;
	if (pos >= s->n)
		return XXL_OK;
	if (len > s->n - pos)
		len = (size_t) (s->n - pos);
	while (*got < len)
	{
		size_t		off = (size_t) (pos % s->block);
		size_t		k = s->block - off;
		const unsigned char *blk = get_block(s, pos / s->block);

		if (blk == NULL)
			return s->err.code;
		if (k > len - *got)
			k = len - *got;
		memcpy(out + *got, blk + off, k);
		*got += k;
		pos += k;
	}
	return XXL_OK;
}

void
xxl_text_store_forget(xxl_text_store *s, uint64_t pos)
{
	/* up to the end: the last block too, however short */
	uint64_t	upto = pos >= s->n ? (s->n + s->block - 1) / s->block : pos / s->block;

	if (!s->finished || s->err.code != XXL_OK)
		return;
	for (; s->forgotten < upto; s->forgotten++)
	{
		uint64_t	b = s->forgotten;

		if (!s->on_disk)
		{
			if (b < s->nchunks && s->chunks[b])
			{
				xxl_budget_free(&s->budget, s->chunks[b], s->block);
				s->chunks[b] = NULL;
			}
			continue;
		}
		for (int i = 0; i < s->ncache; i++)
			if (s->cache[i].block == b)
				s->cache[i].block = UINT64_MAX;
		/* an extent goes when its last block does */
		if ((b % s->per_extent == s->per_extent - 1 || b + 1 == s->nblocks) &&
			b / s->per_extent < s->nbids &&
			s->bids[b / s->per_extent] != XXL_BID_NONE)
		{
			xxl_block_free(s->disks, s->bids[b / s->per_extent]);
			s->bids[b / s->per_extent] = XXL_BID_NONE;
		}
	}
}

xxl_status
xxl_text_store_common(xxl_text_store *s, uint64_t i, uint64_t j, uint64_t limit, uint64_t *m)
{
	*m = 0;
	if (check_readable(s) != XXL_OK)
		return s->err.code;
	if (i >= s->n || j >= s->n)
		return XXL_OK;
	if (limit > s->n - i)
		limit = s->n - i;
	if (limit > s->n - j)
		limit = s->n - j;
	s->windows++;
	while (*m < limit)
	{
		size_t		oi = (size_t) ((i + *m) % s->block),
					oj = (size_t) ((j + *m) % s->block);
		size_t		k = s->block - (oi > oj ? oi : oj);
		const unsigned char *bi,
				   *bj;
		size_t		same;

		if (k > limit - *m)
			k = (size_t) (limit - *m);
		bi = get_block(s, (i + *m) / s->block);
		if (bi == NULL)
			return s->err.code;
		bj = get_block(s, (j + *m) / s->block);
		if (bj == NULL)
			return s->err.code;
		same = (size_t) text_common_prefix(bi + oi, bj + oj, k);
		*m += same;
		if (same < k)
			break;
	}
	return XXL_OK;
}

const xxl_error *
xxl_text_store_error(const xxl_text_store *s)
{
	return &s->err;
}

void
xxl_text_store_stats_get(const xxl_text_store *s, xxl_text_store_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->n = s->n;
	st->on_disk = s->on_disk;
	st->block_size = s->block;
	st->block_reads = s->block_reads;
	st->windows = s->windows;
	st->memory_peak = s->budget.peak;
	st->memory_limit = s->budget.limit;
	if (s->disks)
	{
		xxl_io_stats io;

		xxl_disks_stats(s->disks, &io);
		for (int i = 0; i < io.ndisks; i++)
		{
			st->bytes_read += io.disk[i].bytes_read;
			st->bytes_written += io.disk[i].bytes_written;
		}
	}
}

void
xxl_text_store_destroy(xxl_text_store *s)
{
	if (s == NULL)
		return;
	/* closing the disks waits for writes in flight before the buffers go */
	xxl_disks_close(s->disks);
	s->disks = NULL;
	for (size_t i = 0; i < s->nchunks; i++)
		if (s->chunks[i])
			xxl_budget_free(&s->budget, s->chunks[i], s->block);
	if (s->chunks)
		xxl_budget_free(&s->budget, s->chunks, s->chunks_cap * sizeof(unsigned char *));
	for (int i = 0; i < 2; i++)
		if (s->wbuf[i])
			xxl_budget_free(&s->budget, s->wbuf[i], s->block);
	for (int i = 0; i < STORE_CACHE; i++)
		if (s->cache[i].buf)
			xxl_budget_free(&s->budget, s->cache[i].buf, s->block);
	if (s->bids)
		xxl_budget_free(&s->budget, s->bids, s->bids_cap * sizeof(xxl_bid));
	free(s);
}
