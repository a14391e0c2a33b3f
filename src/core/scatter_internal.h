/*
 * scatter_internal.h — the external permutation's state (xxl_scatter.h),
 * shared by its distribution phase (scatter.c) and its placing reader
 * (scatter_read.c).
 */
#ifndef XXL_SCATTER_INTERNAL_H
#define XXL_SCATTER_INTERNAL_H

#include "core/xxl_scatter.h"
#include "core/xxl_pipe.h"

#include <stdlib.h>
#include <string.h>

#define SPARE_BUFFERS 4
#define DEFAULT_MAX_BLOCK (1024 * 1024)
#define READ_PIECE_MIN (128 * 1024)
#define OVERHEAD (2 * XXL_ALIGN)
#define POLL_EVERY 65536
#define SC_EXTENTS 8			/* per bucket */

typedef enum scatter_phase
{
	SC_PUT,
	SC_READ
} scatter_phase;

typedef struct sc_buffer
{
	unsigned char *data;
	xxl_io_request req;
	uint64_t	bucket;			/* owner while a write is in flight */
} sc_buffer;

typedef struct sc_bucket
{
	uint32_t	buf;			/* index of the buffer being filled */
	uint32_t	fill;			/* entries in it */
	uint64_t	count;			/* entries put */
	uint64_t	size;			/* its slots */
	uint64_t	blocks;			/* blocks written */
} sc_bucket;

typedef struct sc_plan
{
	bool		in_memory;
	uint64_t	chunk;			/* C: slots per bucket */
	uint64_t	nb;
	size_t		block;			/* B */
	size_t		piece;			/* read request size, a multiple of B */
	size_t		extent;			/* a multiple of piece */
	uint64_t	extents;		/* per bucket, at most SC_EXTENTS */
	int			ow;				/* offset bytes per entry */
	int			spares;			/* buffers for writes in flight */
	size_t		pipe_batch;		/* > 0: puts go through a pipe to a worker, in
								 * batches of this many bytes */
	size_t		entry;
	size_t		per;			/* entries per block */
	size_t		write_mem;
	size_t		read_mem;
} sc_plan;

struct xxl_scatter
{
	xxl_scatter_config cfg;
	xxl_part	part;			/* error, budget, cancel hook */
	scatter_phase phase;
	size_t		rec;
	uint64_t	slots;
	sc_plan		p;
	uint64_t	inv;			/* reciprocal of p.chunk for the bucket index */
	xxl_pipe   *pipe;			/* asynchronous: the worker places the records */
	uint64_t	wait_ns;		/* the caller waited for the worker */

	xxl_disks  *disks;
	xxl_bid    *ext;			/* bucket b's extents at [b * extents], or XXL_BID_NONE */

	/* distribution */
	sc_bucket  *buckets;
	sc_buffer  *bufs;
	size_t		nbufs;
	unsigned char *buf_mem;
	uint32_t   *free_list;
	size_t		nfree;
	uint32_t   *flight;			/* ring of buffers with writes in flight */
	size_t		flight_head,
				flight_count;

	/* placing and reading */
	unsigned char *chunk;
	uint64_t   *bits;
	size_t		chunk_bytes,
				bits_bytes;
	sc_buffer	rd[2];
	uint64_t	next_bucket;	/* the bucket the next read call hands out */
	uint64_t	prefetched;		/* bucket whose first pieces are in flight, or UINT64_MAX */
	bool		memory_done;

	/*
	 * The caller's counters, written at every put, on a cache line of their
	 * own, away from what an asynchronous worker reads at every record.
	 */
	uint64_t	puts __attribute__((aligned(64)));
	uint64_t	next_poll;
	char		pad_end[48];
};

/*
 * An entry's slot offset: ow little-endian bytes, written and read as a
 * whole word where the entry has room for one (the record follows it and
 * is written afterwards; the read masks what is not offset).
 */
static inline void
put_offset(unsigned char *p, uint64_t off, int ow, size_t entry)
{
	if (entry >= 4 && ow <= 4)
	{
		uint32_t	x = (uint32_t) off;

		memcpy(p, &x, 4);
		return;
	}
	for (int i = 0; i < ow; i++)
		p[i] = (unsigned char) (off >> (8 * i));
}

static inline uint64_t
get_offset(const unsigned char *p, int ow, size_t entry)
{
	uint64_t	v = 0;

	if (entry >= 4 && ow <= 4)
	{
		uint32_t	x;

		memcpy(&x, p, 4);
		return ow == 4 ? x : x & ((UINT32_C(1) << (8 * ow)) - 1);
	}
	for (int i = ow - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* The slots of bucket b (the last one may be short). */
uint64_t	sc_bucket_slots(const xxl_scatter *s, uint64_t b);
xxl_status	sc_alloc_reading(xxl_scatter *s);

/*
 * Start a transfer.  Buffered files are written and read in the calling
 * thread: there a transfer is a copy to or from the page cache, which costs
 * less than the wake-ups of an I/O thread with small blocks.  O_DIRECT
 * transfers go to the I/O threads.
 */
xxl_status	sc_submit(xxl_scatter *s, sc_buffer *buf);

#endif							/* XXL_SCATTER_INTERNAL_H */
