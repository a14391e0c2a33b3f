/*
 * xxl_pagefile.h — a file of fixed-size records written once in order and
 * then read at any record, through a direct-mapped cache of pages (the
 * page number hashed to its frame).
 *
 * What the random-access parts of an operator stand on (the adjacency lists
 * and node index of the shortest-path search, its settle log read
 * backwards): the records live in spill files of the environment's
 * directories, file pool and spill account, opened buffered even where the
 * operator's other files use O_DIRECT (a random read with O_DIRECT is a
 * device read; buffered it is a copy when the kernel has the page, and the
 * kernel keeps what the budget cannot), a record never
 * straddles a page, and a read of a record whose page is cached costs no
 * I/O.  Pages are read synchronously on the caller's thread (a page of a
 * buffered file is a copy out of the page cache, a device read only when
 * the kernel does not have it).  Owner thread only.
 */
#ifndef XXL_PAGEFILE_H
#define XXL_PAGEFILE_H

#include "core/xxl_env.h"

typedef struct xxl_pagefile
{
	xxl_env    *env;
	xxl_disks  *disks;			/* its own buffered set: random pages hit the OS cache */
	size_t		page;			/* bytes per page: a multiple of XXL_ALIGN dividing the block */
	size_t		rec_size;
	size_t		per_page;		/* records per page */
	size_t		block;			/* its extent: the environment's block, xxl_extent_for(block) */
	xxl_bid    *blocks;			/* the file's extents, in order */
	size_t		nblocks,
				blocks_cap;
	uint64_t	records;		/* appended so far */
	unsigned char *wbuf;		/* the page being written */
	/* the cache, after xxl_pagefile_finish */
	unsigned char *frames;
	uint64_t   *tags;			/* page held by each frame, or UINT64_MAX */
	size_t		nframes;
	size_t		cache_bytes;	/* charged to the budget */
	uint64_t	hits,
				misses;
	bool		finished;
} xxl_pagefile;

/* The page size for records of rec_size bytes under the environment's block. */
size_t		xxl_pagefile_page_for(const xxl_env *env, size_t want);

xxl_status	xxl_pagefile_open(xxl_pagefile *f, xxl_env *env, size_t page, size_t rec_size);
xxl_status	xxl_pagefile_append(xxl_pagefile *f, const void *rec);
/* End of writing; cache_bytes (at least one page) of the budget for reading. */
xxl_status	xxl_pagefile_finish(xxl_pagefile *f, size_t cache_bytes);
xxl_status	xxl_pagefile_miss(xxl_pagefile *f, uint64_t page, size_t frame);

/*
 * The frame of a page: its number hashed first, so that pages read at a
 * fixed stride (a wave through a grid reads one page every ~16) spread
 * over all frames instead of colliding in a few.
 */
static inline size_t
xxl_pagefile_frame(const xxl_pagefile *f, uint64_t page)
{
	return (size_t) (((page * UINT64_C(0x9E3779B97F4A7C15)) >> 24) % f->nframes);
}

/* Record i (< records): a pointer valid until the next read of this file. */
static inline xxl_status
xxl_pagefile_get(xxl_pagefile *f, uint64_t i, const unsigned char **rec)
{
	uint64_t	page = i / f->per_page;
	size_t		frame = xxl_pagefile_frame(f, page);

	if (f->tags[frame] != page)
	{
		xxl_status	rc = xxl_pagefile_miss(f, page, frame);

		if (rc != XXL_OK)
		{
			*rec = NULL;
			return rc;
		}
	}
	else
		f->hits++;
	*rec = f->frames + frame * f->page + (i % f->per_page) * f->rec_size;
	return XXL_OK;
}

/* Removes (or pools) its files, folds its I/O into the environment, frees its memory. */
void		xxl_pagefile_close(xxl_pagefile *f);

#endif							/* XXL_PAGEFILE_H */
