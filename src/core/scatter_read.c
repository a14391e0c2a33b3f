/*
 * scatter_read.c — the external permutation's second phase (see
 * scatter.c for the layout): each bucket's region read back in pieces,
 * the next bucket's first pieces prefetched, its entries placed into the
 * chunk of C slots by their offsets, and the chunk handed out in slot
 * order.
 */
#include "core/scatter_internal.h"

#include <string.h>

/* Bytes of bucket b's region that were written (the last block rounded up). */
static uint64_t
region_used(const xxl_scatter *s, uint64_t b)
{
	uint64_t	n = sc_bucket_slots(s, b);
	uint64_t	full = n / s->p.per;
	uint64_t	rest = n % s->p.per;

	return full * s->p.block + XXL_ROUND_UP(rest * s->p.entry, XXL_ALIGN);
}

static xxl_status
post_piece(xxl_scatter *s, uint64_t b, uint64_t piece_no, sc_buffer *buf)
{
	uint64_t	used = region_used(s, b);
	uint64_t	off = piece_no * s->p.piece;
	uint64_t	len = used - off < s->p.piece ? used - off : s->p.piece;

	buf->req.bid = s->ext[b * s->p.extents + off / s->p.extent] + off % s->p.extent;
	buf->req.buf = buf->data;
	buf->req.len = (size_t) len;
	buf->req.is_write = false;
	buf->bucket = b;
	return sc_submit(s, buf);
}

static uint64_t
region_pieces(const xxl_scatter *s, uint64_t b)
{
	return (region_used(s, b) + s->p.piece - 1) / s->p.piece;
}

/*
 * Start reading the first pieces of bucket b while the caller works (with
 * O_DIRECT; buffered files are read when the bucket is placed).
 */
static xxl_status
prefetch(xxl_scatter *s, uint64_t b, bool now)
{
	uint64_t	np;

	if (b >= s->p.nb || (!now && !xxl_disks_direct(s->disks)))
		return XXL_OK;
	np = region_pieces(s, b);
	for (uint64_t k = 0; k < 2 && k < np; k++)
		if (post_piece(s, b, k, &s->rd[k]) != XXL_OK)
			return s->part.err.code;
	s->prefetched = b;
	return XXL_OK;
}

/* Read bucket b's entries and put each record at its slot in the chunk. */
static xxl_status
place_bucket(xxl_scatter *s, uint64_t b)
{
	uint64_t	n = sc_bucket_slots(s, b);
	uint64_t	np;
	uint64_t	left = n;
	size_t		rec = s->rec;
	int			ow = s->p.ow;

	if (s->ext[b * s->p.extents] == XXL_BID_NONE)
		return xxl_error_set(&s->part.err, XXL_EINVAL, 0, "scatter: bucket %llu was never written",
							 (unsigned long long) b);
	if (s->prefetched != b && prefetch(s, b, true) != XXL_OK)
		return s->part.err.code;
	s->prefetched = UINT64_MAX;
	np = region_pieces(s, b);
	memset(s->bits, 0, s->bits_bytes);
	for (uint64_t k = 0; k < np; k++)
	{
		sc_buffer  *buf = &s->rd[k % 2];
		size_t		len;

		if (xxl_io_wait(s->disks, &buf->req, &s->part.err) != XXL_OK)
			return s->part.err.code;
		len = buf->req.len;
		for (size_t blk = 0; blk < len && left > 0; blk += s->p.block)
		{
			const unsigned char *e = buf->data + blk;
			uint64_t	cnt = left < s->p.per ? left : s->p.per;

			for (uint64_t j = 0; j < cnt; j++, e += s->p.entry)
			{
				uint64_t	off = get_offset(e, ow, s->p.entry);
				uint64_t	bit = UINT64_C(1) << (off & 63);

				if (off >= n || (s->bits[off >> 6] & bit))
					return xxl_error_set(&s->part.err, XXL_EINVAL, 0,
										 "scatter: slot %llu is put twice or corrupt",
										 (unsigned long long) (b * s->p.chunk + off));
				s->bits[off >> 6] |= bit;
				xxl_copy_small(s->chunk + off * rec, e + ow, rec);
			}
			left -= cnt;
		}
		if (k + 2 < np && post_piece(s, b, k + 2, buf) != XXL_OK)
			return s->part.err.code;
		if (xxl_part_canceled(&s->part))
			return s->part.err.code;
	}
	if (left != 0)
		return xxl_error_set(&s->part.err, XXL_EINVAL, 0, "scatter: bucket %llu is short of %llu records",
							 (unsigned long long) b, (unsigned long long) left);
	return XXL_OK;
}

int
xxl_scatter_read(xxl_scatter *s, const void **recs, size_t *count)
{
	*count = 0;
	if (s->part.failed || s->phase != SC_READ)
	{
		if (!s->part.failed)
			xxl_error_set(&s->part.err, XXL_EINVAL, 0, "scatter: read before finish");
		return -(int) xxl_part_fail(&s->part);
	}
	if (s->p.in_memory)
	{
		if (s->memory_done || s->slots == 0)
			return 0;
		s->memory_done = true;
		*recs = s->chunk;
		*count = (size_t) s->slots;
		return 1;
	}
	if (s->next_bucket >= s->p.nb)
		return 0;
	if (sc_alloc_reading(s) != XXL_OK || place_bucket(s, s->next_bucket) != XXL_OK)
		return -(int) xxl_part_fail(&s->part);
	if (s->cfg.consume)
		for (uint64_t e = 0; e < s->p.extents; e++)
		{
			xxl_bid    *ext = &s->ext[s->next_bucket * s->p.extents + e];

			if (*ext != XXL_BID_NONE)
				xxl_block_free(s->disks, *ext);
			*ext = XXL_BID_NONE;
		}
	*recs = s->chunk;
	*count = (size_t) sc_bucket_slots(s, s->next_bucket);
	s->next_bucket++;
	if (prefetch(s, s->next_bucket, false) != XXL_OK)
		return -(int) xxl_part_fail(&s->part);
	return 1;
}

xxl_status
xxl_scatter_rewind(xxl_scatter *s)
{
	if (s->part.failed || s->phase != SC_READ)
	{
		if (!s->part.failed)
			xxl_error_set(&s->part.err, XXL_EINVAL, 0, "scatter: rewind before finish");
		return xxl_part_fail(&s->part);
	}
	if (s->cfg.consume && s->next_bucket > 0)
	{
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "scatter: rewind after its output was consumed");
		return xxl_part_fail(&s->part);
	}
	if (s->prefetched != UINT64_MAX && s->prefetched != 0)
	{
		/* let the reads in flight land before the buffers are reused */
		for (int k = 0; k < 2; k++)
			if (xxl_io_wait(s->disks, &s->rd[k].req, &s->part.err) != XXL_OK)
				return xxl_part_fail(&s->part);
		s->prefetched = UINT64_MAX;
	}
	s->next_bucket = 0;
	s->memory_done = false;
	return XXL_OK;
}

