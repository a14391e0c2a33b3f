/*
 * scatter.c — the external permutation (see xxl_scatter.h): planning of
 * buckets and buffers, the distribution phase and the placing reader.
 *
 * Layout: the slots are cut into nb buckets of C consecutive slots (the last
 * one may be shorter).  A record goes to its bucket as an entry of ow bytes
 * of offset within the bucket (little endian) followed by the record; entries
 * never span a block, so a block of B bytes holds B / entry entries and a
 * bucket of C slots fills exactly ceil(C / per) blocks.  Its region in the
 * spill file is a row of at most SC_EXTENTS extents (blocks of the disk set,
 * whole read requests each), each allocated when the first block is written
 * into it: the permutation takes spill space as its records come, an eighth
 * of a bucket at a time, and gives each bucket's back once it is read when
 * the output is consumed, instead of holding all of it from the first
 * records on.  Writes to a buffered file are done
 * in place (see sc_submit()); O_DIRECT writes are asynchronous, with a few
 * spare buffers besides the nb being filled to cover the writes in flight.
 *
 * Memory: the distribution phase holds nb (+ spares) write buffers, the
 * reading phase one chunk of C records, its fill bitmap and two read buffers;
 * the phases never overlap, and the plan takes the largest write buffer that
 * keeps both within their budgets (one for both, or one each).  The
 * reading phase's memory is taken at the first read, so that between the
 * phases the permutation holds nothing but its bucket table.
 */
#include "core/scatter_internal.h"

#include <stdlib.h>
#include <string.h>

static int
width_of(uint64_t max)
{
	int			w = 1;

	while (w < 8 && (max >> (8 * w)) != 0)
		w++;
	return w;
}

static size_t
bitmap_bytes(uint64_t slots)
{
	return (size_t) ((slots + 63) / 64 * 8);
}

/* Planning --------------------------------------------------------------- */

static size_t
chunk_charge(uint64_t C, size_t rec)
{
	return xxl_budget_charge((size_t) (C * rec)) + xxl_budget_charge(bitmap_bytes(C));
}

/*
 * The plan for memory while distributing and read_memory (0: memory) while
 * reading: the chunk is what the reading phase holds, the write buffers
 * what the distribution holds beside the pipe.
 */
static bool
make_plan(size_t memory, size_t read_memory, size_t rec, uint64_t slots, size_t max_block,
		  bool direct, bool async, sc_plan *p)
{
	size_t		avail,
				ravail;
	int			spares = direct ? SPARE_BUFFERS : 0;

	memset(p, 0, sizeof(*p));
	if (read_memory == 0)
		read_memory = memory;
	if (memory <= OVERHEAD || read_memory <= OVERHEAD || rec == 0)
		return false;
	avail = memory - OVERHEAD;
	ravail = read_memory - OVERHEAD;
	/* a pipe pays where its batches are a small part of the memory */
	p->pipe_batch = async ? xxl_pipe_batch_for(avail) : 0;
	if (p->pipe_batch < rec + 8 || slots <= avail / rec)
		p->pipe_batch = 0;
	avail -= XXL_PIPE_BATCHES * p->pipe_batch;
	/* (in memory, the chunk is held from the first record to the last read) */
	if (!p->pipe_batch && slots <= avail / rec && chunk_charge(slots, rec) <= avail &&
		chunk_charge(slots, rec) <= ravail)
	{
		p->in_memory = true;
		p->chunk = slots;
		p->nb = 1;
		p->read_mem = chunk_charge(slots, rec);
		return true;
	}
	if (max_block == 0)
		max_block = DEFAULT_MAX_BLOCK;
	max_block -= max_block % XXL_ALIGN;
	if (max_block < XXL_ALIGN)
		max_block = XXL_ALIGN;

	/* the largest write buffer with which both phases fit */
	for (size_t B = max_block; B >= XXL_ALIGN; B = B / 2 - (B / 2) % XXL_ALIGN)
	{
		size_t		piece = B >= READ_PIECE_MIN ? B : READ_PIECE_MIN / B * B;
		uint64_t	C,
					nb;
		int			ow;
		size_t		entry,
					per,
					nbufs,
					buckets,
					write_mem,
					read_mem;

		while (piece > B && 2 * piece > ravail / 8)
			piece -= B;
		if (2 * piece >= ravail)
			continue;
		/* the chunk: one bit of bitmap per slot besides the record */
		C = (uint64_t) (ravail - 2 * piece) * 8 / (8 * rec + 1);
		while (C > 1 && chunk_charge(C, rec) + 2 * piece +
			   xxl_budget_charge((size_t) ((slots + C - 1) / C * sizeof(sc_bucket))) +
			   xxl_budget_charge((size_t) ((slots + C - 1) / C * sizeof(xxl_bid))) > ravail)
			C -= C / 64 + 1;
		if (C < 2)
			continue;
		nb = (slots + C - 1) / C;
		C = (slots + nb - 1) / nb;	/* equal buckets: the smallest chunk for nb */
		ow = width_of(C - 1);
		entry = (size_t) ow + rec;
		per = B / entry;
		if (per == 0)
			continue;
		nbufs = (size_t) nb + spares;
		/* as many extents per bucket as the budget affords, at least one */
		for (int E = SC_EXTENTS; E >= 1; E /= 2)
		{
			uint64_t	region = (C + per - 1) / per * B,
						pieces = (region + piece - 1) / piece;

			p->extent = (size_t) ((pieces + E - 1) / E * piece);
			p->extents = (region + p->extent - 1) / p->extent;
			buckets = xxl_budget_charge((size_t) nb * sizeof(sc_bucket)) +
				xxl_budget_charge((size_t) (nb * p->extents) * sizeof(xxl_bid));
			write_mem = xxl_budget_charge(nbufs * B) + xxl_budget_charge(nbufs * sizeof(sc_buffer)) +
				2 * xxl_budget_charge(nbufs * sizeof(uint32_t)) + buckets;
			read_mem = chunk_charge(C, rec) + xxl_budget_charge(2 * piece) + buckets;
			if (write_mem <= avail && read_mem <= ravail)
				break;
		}
		if (write_mem > avail || read_mem > ravail)
			continue;
		p->chunk = C;
		p->nb = nb;
		p->block = B;
		p->piece = piece;
		p->ow = ow;
		p->spares = spares;
		p->entry = entry;
		p->per = per;
		p->write_mem = write_mem;
		p->read_mem = read_mem;
		return true;
	}
	return false;
}

static size_t
plan_write_memory(const sc_plan *p)
{
	return p->write_mem + XXL_PIPE_BATCHES * p->pipe_batch + OVERHEAD;
}

static size_t
plan_read_memory(const sc_plan *p)
{
	return p->read_mem + OVERHEAD;
}

static size_t
plan_memory(const sc_plan *p)
{
	size_t		w = plan_write_memory(p),
				r = plan_read_memory(p);

	return w > r ? w : r;
}

bool
xxl_scatter_fits(const xxl_scatter_config *config, size_t *block)
{
	sc_plan		p;

	if (!make_plan(config->memory, config->read_memory, config->record_size, config->slots,
				   config->disk.block_size, config->disk.try_direct, config->async, &p))
		return false;
	if (block)
		*block = p.in_memory ? 0 : p.block;
	return true;
}

/* Creation ------------------------------------------------------------- */

static xxl_status place_batch(void *arg, const unsigned char *batch, size_t len, xxl_error *err);

static xxl_status
alloc_chunk(xxl_scatter *s)
{
	s->chunk_bytes = (size_t) (s->p.chunk * s->rec);
	s->bits_bytes = bitmap_bytes(s->p.chunk);
	s->chunk = xxl_part_alloc(&s->part, s->chunk_bytes ? s->chunk_bytes : 1);
	if (s->chunk == NULL)
		return s->part.err.code;
	s->bits = xxl_part_alloc(&s->part, s->bits_bytes ? s->bits_bytes : 8);
	if (s->bits == NULL)
		return s->part.err.code;
	memset(s->bits, 0, s->bits_bytes);
	return XXL_OK;
}

uint64_t
sc_bucket_slots(const xxl_scatter *s, uint64_t b)
{
	uint64_t	first = b * s->p.chunk;

	return s->slots - first < s->p.chunk ? s->slots - first : s->p.chunk;
}

static xxl_status
alloc_distribution(xxl_scatter *s)
{
	uint64_t	nb = s->p.nb;

	s->nbufs = (size_t) nb + s->p.spares;
	s->buckets = xxl_part_alloc(&s->part, (size_t) nb * sizeof(sc_bucket));
	s->ext = s->buckets ? xxl_part_alloc(&s->part, (size_t) (nb * s->p.extents) * sizeof(xxl_bid)) : NULL;
	s->bufs = s->ext ? xxl_part_alloc(&s->part, s->nbufs * sizeof(sc_buffer)) : NULL;
	s->free_list = s->bufs ? xxl_part_alloc(&s->part, s->nbufs * sizeof(uint32_t)) : NULL;
	s->flight = s->free_list ? xxl_part_alloc(&s->part, s->nbufs * sizeof(uint32_t)) : NULL;
	s->buf_mem = s->flight ? xxl_part_alloc(&s->part, s->nbufs * s->p.block) : NULL;
	if (s->buf_mem == NULL)
		return s->part.err.code;
	memset(s->bufs, 0, s->nbufs * sizeof(sc_buffer));
	for (size_t i = 0; i < s->nbufs; i++)
		s->bufs[i].data = s->buf_mem + i * s->p.block;
	for (uint64_t b = 0; b < nb; b++)
	{
		s->buckets[b].buf = (uint32_t) b;
		s->buckets[b].fill = 0;
		s->buckets[b].count = 0;
		s->buckets[b].blocks = 0;
		s->buckets[b].size = sc_bucket_slots(s, b);
	}
	for (uint64_t e = 0; e < nb * s->p.extents; e++)
		s->ext[e] = XXL_BID_NONE;
	s->nfree = 0;
	for (size_t i = nb; i < s->nbufs; i++)
		s->free_list[s->nfree++] = (uint32_t) i;
	s->flight_head = 0;
	s->flight_count = 0;
	return XXL_OK;
}

xxl_scatter *
xxl_scatter_create(const xxl_scatter_config *config, xxl_error *err)
{
	xxl_scatter *s;
	sc_plan		p;

	if (config->record_size == 0 || config->record_size > XXL_SCATTER_MAX_RECORD)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "scatter records must have 1..%d bytes, not %zu",
					  XXL_SCATTER_MAX_RECORD, config->record_size);
		return NULL;
	}
	if (!make_plan(config->memory, config->read_memory, config->record_size, config->slots,
				   config->disk.block_size, config->disk.try_direct, config->async, &p))
	{
		xxl_error_set(err, XXL_ENOMEM, 0,
					  "memory budget of %zu bytes is too small to permute %llu records of %zu bytes",
					  config->memory, (unsigned long long) config->slots, config->record_size);
		return NULL;
	}
	s = xxl_calloc_aligned(sizeof(*s));
	if (s == NULL)
	{
		xxl_error_set(err, XXL_ENOMEM, 0, "could not allocate a scatter");
		return NULL;
	}
	s->cfg = *config;
	s->rec = config->record_size;
	s->slots = config->slots;
	s->p = p;
	s->prefetched = UINT64_MAX;
	s->next_poll = POLL_EVERY;
	xxl_part_init(&s->part, "permutation",
				  config->read_memory > config->memory ? config->read_memory : config->memory,
				  config->cancel, config->cancel_arg);
	if (p.in_memory)
	{
		if (alloc_chunk(s) != XXL_OK)
			goto failed;
	}
	else
	{
		xxl_disk_config dc = config->disk;

		s->inv = UINT64_MAX / p.chunk + 1;
		dc.block_size = p.extent;
		s->disks = xxl_disks_open(&dc, &s->part.err);
		if (s->disks == NULL || alloc_distribution(s) != XXL_OK)
			goto failed;
		if (p.pipe_batch)
		{
			s->pipe = xxl_pipe_create(s->p.pipe_batch, XXL_PIPE_BATCHES, place_batch, s, &s->part.budget,
									  &s->part.err);
			if (s->pipe == NULL)
				goto failed;
		}
	}
	return s;

failed:
	*err = s->part.err;
	xxl_scatter_destroy(s);
	return NULL;
}

size_t
xxl_scatter_memory(const xxl_scatter *s)
{
	return plan_memory(&s->p);
}

size_t
xxl_scatter_phase_memory(const xxl_scatter *s, bool reading)
{
	if (s->p.in_memory)
		return plan_memory(&s->p);
	return reading ? plan_read_memory(&s->p) : plan_write_memory(&s->p);
}

/* The reading phase's chunk and read buffers, at the first read. */
xxl_status
sc_alloc_reading(xxl_scatter *s)
{
	if (s->p.in_memory || s->rd[0].data != NULL)
		return XXL_OK;
	if (alloc_chunk(s) != XXL_OK)
		return s->part.err.code;
	s->rd[0].data = xxl_part_alloc(&s->part, 2 * s->p.piece);
	if (s->rd[0].data == NULL)
		return s->part.err.code;
	s->rd[1].data = s->rd[0].data + s->p.piece;
	return XXL_OK;
}

/* Distribution ------------------------------------------------------------ */

xxl_status
sc_submit(xxl_scatter *s, sc_buffer *buf)
{
	if (xxl_disks_direct(s->disks))
	{
		xxl_io_post(s->disks, &buf->req);
		return XXL_OK;
	}
	return xxl_io_sync(s->disks, &buf->req, &s->part.err);
}



/*
 * The distribution below runs on the caller's thread, or on the pipe's
 * worker when the scatter is asynchronous; it reports errors in the record
 * it is given (the pipe's on the worker), never polls the cancel hook and
 * never changes the phase.
 */

/* Wait for the oldest write in flight and return its buffer to the free list. */
static xxl_status
reclaim_oldest(xxl_scatter *s, xxl_error *err)
{
	uint32_t	i = s->flight[s->flight_head];

	s->flight_head = (s->flight_head + 1) % s->nbufs;
	s->flight_count--;
	s->free_list[s->nfree++] = i;
	return xxl_io_wait(s->disks, &s->bufs[i].req, err);
}

/* Post bucket b's current buffer (fill entries) and give it a fresh one. */
static xxl_status
flush_bucket(xxl_scatter *s, uint64_t b, bool last, xxl_error *err)
{
	sc_bucket  *bk = &s->buckets[b];
	sc_buffer  *buf = &s->bufs[bk->buf];
	size_t		len = (size_t) bk->fill * s->p.entry;
	uint64_t	off = bk->blocks * s->p.block;
	xxl_bid    *ext = &s->ext[b * s->p.extents + off / s->p.extent];

	if (*ext == XXL_BID_NONE && xxl_block_alloc(s->disks, ext, err) != XXL_OK)
		return err->code;
	buf->req.bid = *ext + off % s->p.extent;
	buf->req.buf = buf->data;
	buf->req.len = XXL_ROUND_UP(len, XXL_ALIGN);
	buf->req.is_write = true;
	buf->bucket = b;
	bk->blocks++;
	bk->fill = 0;
	if (!xxl_disks_direct(s->disks))
		return xxl_io_sync(s->disks, &buf->req, err);	/* done: the buffer is free */
	xxl_io_post(s->disks, &buf->req);
	s->flight[(s->flight_head + s->flight_count) % s->nbufs] = bk->buf;
	s->flight_count++;
	if (last)
		return XXL_OK;
	if (s->nfree == 0 && reclaim_oldest(s, err) != XXL_OK)
		return err->code;
	bk->buf = s->free_list[--s->nfree];
	return XXL_OK;
}

static xxl_status
bad_slot(uint64_t slot, const char *what, xxl_error *err)
{
	return xxl_error_set(err, XXL_EINVAL, 0, "scatter: slot %llu %s", (unsigned long long) slot, what);
}

/* One record to its slot (in memory) or to its bucket. */
static inline xxl_status
place(xxl_scatter *s, uint64_t slot, const void *rec, xxl_error *err)
{
	if (s->p.in_memory)
	{
		uint64_t	bit = UINT64_C(1) << (slot & 63);

		if (s->bits[slot >> 6] & bit)
			return bad_slot(slot, "is put twice", err);
		s->bits[slot >> 6] |= bit;
		xxl_copy_small(s->chunk + slot * s->rec, rec, s->rec);
		return XXL_OK;
	}
	else
	{
		uint64_t	b = (uint64_t) (((unsigned __int128) slot * s->inv) >> 64);
		uint64_t	off = slot - b * s->p.chunk;
		sc_bucket  *bk;
		unsigned char *e;

		if (off >= s->p.chunk)
		{
			b--;
			off += s->p.chunk;
		}
		bk = &s->buckets[b];
		if (bk->count == bk->size)
			return bad_slot(slot, "is put twice (its bucket is full)", err);
		bk->count++;
		e = s->bufs[bk->buf].data + (size_t) bk->fill * s->p.entry;
		put_offset(e, off, s->p.ow, s->p.entry);
		xxl_copy_small(e + s->p.ow, rec, s->rec);
		if (++bk->fill == s->p.per)
			return flush_bucket(s, b, bk->count == bk->size, err);
		return XXL_OK;
	}
}

/* The worker's side of an asynchronous scatter: batches of (slot, record). */
static xxl_status
place_batch(void *arg, const unsigned char *batch, size_t len, xxl_error *err)
{
	xxl_scatter *s = arg;
	size_t		step = 8 + s->rec;

	for (size_t at = 0; at < len; at += step)
	{
		uint64_t	slot;

		memcpy(&slot, batch + at, 8);
		if (place(s, slot, batch + at + 8, err) != XXL_OK)
			return err->code;
	}
	return XXL_OK;
}

xxl_status
xxl_scatter_put(xxl_scatter *s, uint64_t slot, const void *rec)
{
	if (s->part.failed || s->phase != SC_PUT)
	{
		if (!s->part.failed)
			xxl_error_set(&s->part.err, XXL_EINVAL, 0, "scatter: put after finish");
		return xxl_part_fail(&s->part);
	}
	if (slot >= s->slots)
	{
		bad_slot(slot, "is out of range", &s->part.err);
		return xxl_part_fail(&s->part);
	}
	if (++s->puts >= s->next_poll)
	{
		s->next_poll += POLL_EVERY;
		if (xxl_part_canceled(&s->part))
			return xxl_part_fail(&s->part);
	}
	if (s->pipe)
	{
		unsigned char *at = xxl_pipe_space(s->pipe, 8 + s->rec, &s->part.err);

		if (at == NULL)
			return xxl_part_fail(&s->part);
		memcpy(at, &slot, 8);
		xxl_copy_small(at + 8, rec, s->rec);
		return XXL_OK;
	}
	if (place(s, slot, rec, &s->part.err) != XXL_OK)
		return xxl_part_fail(&s->part);
	return XXL_OK;
}

xxl_status
xxl_scatter_put_many(xxl_scatter *s, const uint64_t *slots, const void *recs, size_t n)
{
	const unsigned char *r = recs;

	if (s->part.failed || s->phase != SC_PUT)
	{
		/* the general path (errors) record by record */
		for (size_t i = 0; i < n; i++)
			if (xxl_scatter_put(s, slots[i], r + i * s->rec) != XXL_OK)
				return s->part.err.code;
		return XXL_OK;
	}
	s->puts += n;
	if (s->puts >= s->next_poll)
	{
		s->next_poll = s->puts + POLL_EVERY;
		if (xxl_part_canceled(&s->part))
			return xxl_part_fail(&s->part);
	}
	if (s->pipe)
	{
		/* into the pipe a stage at a time: one call for many records */
		size_t		step = 8 + s->rec,
					per = XXL_PIPE_STAGE_BYTES / step;

		for (size_t i = 0; i < n; i++)
			if (slots[i] >= s->slots)
			{
				bad_slot(slots[i], "is out of range", &s->part.err);
				return xxl_part_fail(&s->part);
			}
		for (size_t i = 0; i < n; i += per)
		{
			size_t		k = n - i < per ? n - i : per;
			unsigned char *at = xxl_pipe_space(s->pipe, k * step, &s->part.err);

			if (at == NULL)
				return xxl_part_fail(&s->part);
			for (size_t j = i; j < i + k; j++, at += step)
			{
				memcpy(at, &slots[j], 8);
				xxl_copy_small(at + 8, r + j * s->rec, s->rec);
			}
		}
		return XXL_OK;
	}
	for (size_t i = 0; i < n; i++)
	{
		if (slots[i] >= s->slots)
		{
			bad_slot(slots[i], "is out of range", &s->part.err);
			return xxl_part_fail(&s->part);
		}
		if (place(s, slots[i], r + i * s->rec, &s->part.err) != XXL_OK)
			return xxl_part_fail(&s->part);
	}
	return XXL_OK;
}

static void
free_distribution(xxl_scatter *s)
{
	if (s->bufs && s->disks)
	{
		xxl_error	ignored = {0};

		for (size_t i = 0; i < s->nbufs; i++)
			xxl_io_wait(s->disks, &s->bufs[i].req, &ignored);
	}
	xxl_part_free(&s->part, s->buf_mem, s->nbufs * s->p.block);
	xxl_part_free(&s->part, s->flight, s->nbufs * sizeof(uint32_t));
	xxl_part_free(&s->part, s->free_list, s->nbufs * sizeof(uint32_t));
	xxl_part_free(&s->part, s->bufs, s->nbufs * sizeof(sc_buffer));
	s->buf_mem = NULL;
	s->flight = NULL;
	s->free_list = NULL;
	s->bufs = NULL;
}

xxl_status
xxl_scatter_finish(xxl_scatter *s)
{
	if (s->part.failed || s->phase != SC_PUT)
	{
		if (!s->part.failed)
			xxl_error_set(&s->part.err, XXL_EINVAL, 0, "scatter: finish called twice");
		return xxl_part_fail(&s->part);
	}
	/* what the worker has not placed yet, then the pipe's memory back */
	if (s->pipe && xxl_pipe_finish(&s->pipe, &s->wait_ns, &s->part.err) != XXL_OK)
		return xxl_part_fail(&s->part);
	if (s->puts != s->slots)
	{
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "scatter: %llu records put for %llu slots",
					  (unsigned long long) s->puts, (unsigned long long) s->slots);
		return xxl_part_fail(&s->part);
	}
	if (!s->p.in_memory)
	{
		/* every bucket is complete (puts == slots, none overfull): flush the partial blocks */
		for (uint64_t b = 0; b < s->p.nb; b++)
			if (s->buckets[b].fill > 0 && flush_bucket(s, b, true, &s->part.err) != XXL_OK)
				return xxl_part_fail(&s->part);
		while (s->flight_count > 0)
			if (reclaim_oldest(s, &s->part.err) != XXL_OK)
				return xxl_part_fail(&s->part);
		free_distribution(s);
	}
	s->phase = SC_READ;
	s->next_bucket = 0;
	return XXL_OK;
}

/* Statistics, cleanup ------------------------------------------------------- */

const xxl_error *
xxl_scatter_error(const xxl_scatter *s)
{
	return &s->part.err;
}

void
xxl_scatter_stats_get(const xxl_scatter *s, xxl_scatter_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->records = s->puts;
	st->buckets = s->p.in_memory ? 0 : s->p.nb;
	st->bucket_slots = s->p.chunk;
	st->block_size = s->p.in_memory ? 0 : s->p.block;
	st->memory_peak = s->part.budget.peak;
	st->memory_limit = s->part.budget.limit;
	st->async = s->p.pipe_batch > 0;
	st->pipe_wait_ns = s->wait_ns + (s->pipe ? xxl_pipe_wait_ns(s->pipe) : 0);
	if (s->disks)
		xxl_disks_stats(s->disks, &st->io);
}

void
xxl_scatter_destroy(xxl_scatter *s)
{
	if (s == NULL)
		return;
	if (s->disks)
	{
		xxl_error	ignored = {0};

		for (int k = 0; k < 2; k++)
			if (s->rd[k].data)
				xxl_io_wait(s->disks, &s->rd[k].req, &ignored);
	}
	xxl_pipe_destroy(s->pipe);
	free_distribution(s);
	xxl_part_free(&s->part, s->buckets, (size_t) s->p.nb * sizeof(sc_bucket));
	if (s->rd[0].data)
		xxl_part_free(&s->part, s->rd[0].data, 2 * s->p.piece);
	xxl_part_free(&s->part, s->chunk, s->chunk_bytes ? s->chunk_bytes : 1);
	xxl_part_free(&s->part, s->bits, s->bits_bytes ? s->bits_bytes : 8);
	xxl_disks_close(s->disks);
	free(s);
}
