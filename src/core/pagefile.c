/*
 * pagefile.c — records written once in order, then read at any index
 * through a direct-mapped page cache (xxl_pagefile.h).
 */
#include "core/xxl_pagefile.h"

#include <string.h>

size_t
xxl_pagefile_page_for(const xxl_env *env, size_t want)
{
	size_t		block = env->disk.block_size;
	size_t		page = XXL_ALIGN;

	while (page * 2 <= want && page * 2 <= block && block % (page * 2) == 0)
		page *= 2;
	return page;
}

xxl_status
xxl_pagefile_open(xxl_pagefile *f, xxl_env *env, size_t page, size_t rec_size)
{
	memset(f, 0, sizeof(*f));
	f->env = env;
	f->page = page;
	f->rec_size = rec_size;
	f->per_page = page / rec_size;
	/* its table of extents stays far below the searches' one bit per node */
	f->block = xxl_extent_for(env->disk.block_size);
	if (f->per_page == 0 || page % XXL_ALIGN != 0 || f->block % page != 0)
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "page of %zu bytes does not suit records of %zu bytes", page,
							 rec_size);
	f->wbuf = xxl_env_alloc(env, page);
	if (f->wbuf == NULL)
		return env->err.code;
	{
		xxl_disk_config c = env->disk;

		c.try_direct = false;
		c.block_size = f->block;
		f->disks = xxl_disks_open(&c, &env->err);
	}
	return f->disks ? XXL_OK : env->err.code;
}

static xxl_status
page_io(xxl_pagefile *f, uint64_t page, void *buf, bool is_write)
{
	uint64_t	per_block = f->block / f->page;
	xxl_io_request req;

	memset(&req, 0, sizeof(req));
	req.bid = f->blocks[page / per_block] + (page % per_block) * f->page;
	req.buf = buf;
	req.len = f->page;
	req.is_write = is_write;
	return xxl_io_sync(f->disks, &req, &f->env->err);
}

/* Write out the page being filled (the last one may be partly filled). */
static xxl_status
flush_page(xxl_pagefile *f)
{
	xxl_env    *env = f->env;
	uint64_t	page = (f->records - 1) / f->per_page;
	uint64_t	per_block = f->block / f->page;

	if (page / per_block >= f->nblocks)
	{
		xxl_bid		bid;

		if (xxl_block_alloc(f->disks, &bid, &env->err) != XXL_OK)
			return env->err.code;
		if (f->nblocks == f->blocks_cap)
		{
			size_t		cap = f->blocks_cap ? 2 * f->blocks_cap : 16;
			xxl_bid    *grown = xxl_env_realloc(env, f->blocks, f->blocks_cap * sizeof(xxl_bid),
												cap * sizeof(xxl_bid));

			if (grown == NULL)
			{
				xxl_block_free(f->disks, bid);
				return env->err.code;
			}
			f->blocks = grown;
			f->blocks_cap = cap;
		}
		f->blocks[f->nblocks++] = bid;
	}
	return page_io(f, page, f->wbuf, true);
}

xxl_status
xxl_pagefile_append(xxl_pagefile *f, const void *rec)
{
	size_t		slot = f->records % f->per_page;

	memcpy(f->wbuf + slot * f->rec_size, rec, f->rec_size);
	f->records++;
	if (slot + 1 == f->per_page)
		return flush_page(f);
	return XXL_OK;
}

xxl_status
xxl_pagefile_finish(xxl_pagefile *f, size_t cache_bytes)
{
	xxl_env    *env = f->env;

	if (f->records % f->per_page != 0 && flush_page(f) != XXL_OK)
		return env->err.code;
	xxl_env_free(env, f->wbuf, f->page);
	f->wbuf = NULL;
	f->nframes = cache_bytes / (f->page + sizeof(uint64_t));
	if (f->nframes == 0)
		f->nframes = 1;
	/* no more frames than pages */
	if (f->nframes > (f->records + f->per_page - 1) / f->per_page)
		f->nframes = (f->records + f->per_page - 1) / f->per_page;
	if (f->nframes == 0)
		f->nframes = 1;
	f->cache_bytes = f->nframes * f->page;
	f->frames = xxl_env_alloc(env, f->cache_bytes);
	if (f->frames == NULL)
		return env->err.code;
	f->tags = xxl_env_alloc(env, f->nframes * sizeof(uint64_t));
	if (f->tags == NULL)
		return env->err.code;
	memset(f->tags, 0xff, f->nframes * sizeof(uint64_t));
	f->finished = true;
	return XXL_OK;
}

xxl_status
xxl_pagefile_miss(xxl_pagefile *f, uint64_t page, size_t frame)
{
	f->misses++;
	f->tags[frame] = UINT64_MAX;
	if (page_io(f, page, f->frames + frame * f->page, false) != XXL_OK)
		return f->env->err.code;
	f->tags[frame] = page;
	return XXL_OK;
}

void
xxl_pagefile_close(xxl_pagefile *f)
{
	xxl_env    *env = f->env;

	if (env == NULL)
		return;
	if (f->disks)
	{
		xxl_io_stats io;

		for (size_t i = 0; i < f->nblocks; i++)
			xxl_block_free(f->disks, f->blocks[i]);
		xxl_disks_stats(f->disks, &io);
		xxl_io_fold(&env->done.io, &io);
		xxl_disks_close(f->disks);
	}
	if (f->blocks)
		xxl_env_free(env, f->blocks, f->blocks_cap * sizeof(xxl_bid));
	if (f->wbuf)
		xxl_env_free(env, f->wbuf, f->page);
	if (f->frames)
		xxl_env_free(env, f->frames, f->cache_bytes);
	if (f->tags)
		xxl_env_free(env, f->tags, f->nframes * sizeof(uint64_t));
	memset(f, 0, sizeof(*f));
}
