/*
 * dsort_chain.c — a bucket's records on disk as a chain of blocks: opening
 * the disks, writing and reading blocks, freeing a chain.
 */
#include "core/dsort_internal.h"

/* Chains of blocks ------------------------------------------------------------ */

xxl_status
ds_open_disk(xxl_dsort *s, ds_disk *d, size_t block, xxl_error *err)
{
	xxl_disk_config dc = s->cfg.disk;

	d->block = block;
	d->per = block / s->rec;
	d->bpe = block >= EXTENT_MIN ? 1 : EXTENT_MIN / block;
	dc.block_size = d->bpe * block;
	/* blocks below a megabyte go through the page cache, as every part's (xxl_io.h) */
	dc.try_direct &= xxl_direct_pays(block);
	d->disks = xxl_disks_open(&dc, err);
	return d->disks ? XXL_OK : err->code;
}

static xxl_status
transfer(ds_disk *d, xxl_io_request *req, xxl_error *err)
{
	if (xxl_disks_direct(d->disks))
	{
		xxl_io_post(d->disks, req);
		return xxl_io_wait(d->disks, req, err);
	}
	return xxl_io_sync(d->disks, req, err);
}


/* Append a block of n records to a chain. */
xxl_status
ds_write_block(xxl_dsort *s, ds_disk *d, ds_chain *c, unsigned char *data, size_t n, xxl_error *err)
{
	xxl_io_request req;
	uint64_t	k = c->blocks;

	if (k % d->bpe == 0)
	{
		xxl_bid		bid;

		if (xxl_block_alloc(d->disks, &bid, err) != XXL_OK)
			return err->code;
		if (c->next == c->ext_cap)
		{
			size_t		cap = c->ext_cap ? 2 * c->ext_cap : 4;
			xxl_bid    *grown = xxl_budget_realloc(&s->part.budget, c->ext, c->ext_cap * sizeof(xxl_bid),
												   cap * sizeof(xxl_bid), err);

			if (grown == NULL)
			{
				xxl_block_free(d->disks, bid);
				return err->code;
			}
			c->ext = grown;
			c->ext_cap = cap;
		}
		c->ext[c->next++] = bid;
	}
	memset(&req, 0, sizeof(req));
	req.bid = ds_block_bid(d, c, k);
	req.buf = data;
	req.len = XXL_ROUND_UP(n * s->rec, XXL_ALIGN);
	req.is_write = true;
	c->blocks++;
	return transfer(d, &req, err);
}

/* Read block k of a chain into buf; *n gets its records. */
xxl_status
ds_read_block(const xxl_dsort *s, ds_disk *d, const ds_chain *c, uint64_t k, unsigned char *buf,
		   size_t *n, xxl_error *err)
{
	xxl_io_request req;
	uint64_t	first = k * d->per;
	uint64_t	cnt = c->count - first < d->per ? c->count - first : d->per;

	memset(&req, 0, sizeof(req));
	req.bid = ds_block_bid(d, c, k);
	req.buf = buf;
	req.len = XXL_ROUND_UP((size_t) cnt * s->rec, XXL_ALIGN);
	req.is_write = false;
	*n = (size_t) cnt;
	return transfer(d, &req, err);
}

void
ds_free_chain(xxl_dsort *s, ds_disk *d, ds_chain *c)
{
	if (d->disks)
		for (size_t e = 0; e < c->next; e++)
			if (c->ext[e] != XXL_BID_NONE)	/* (freed as it was read) */
				xxl_block_free(d->disks, c->ext[e]);
	xxl_part_free(&s->part, c->ext, c->ext_cap * sizeof(xxl_bid));
	c->ext = NULL;
	c->next = c->ext_cap = 0;
}

