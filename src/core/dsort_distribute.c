/*
 * dsort_distribute.c — the distribution sort's splitters (from the sample
 * or the staged records) and the distribution of records into buckets.
 */
#include "core/dsort_internal.h"

/* Splitters and distribution -------------------------------------------------- */

static int
cmp_dkey(const void *a, const void *b)
{
	const dkey *x = a,
			   *y = b;

	return key_less(*x, *y) ? -1 : key_less(*y, *x) ? 1 : 0;
}

/*
 * Build the cell index (see struct xxl_dsort): most cells hold no splitter
 * or one, so most keys find their bucket with one comparison.
 */
static xxl_status
build_index(xxl_dsort *s, dkey min, dkey max, xxl_error *err)
{
	unsigned __int128 lo = key_u128(min),
				diff = lo ^ key_u128(max);
	size_t		ncell;

	s->gbits = diff == 0 ? 128 : (uint64_t) (diff >> 64) ? __builtin_clzll((uint64_t) (diff >> 64))
		: 64 + __builtin_clzll((uint64_t) diff);
	s->tbits = ds_table_bits(s->nsp);
	if (s->tbits > 128 - s->gbits)
		s->tbits = 128 - s->gbits;
	s->gprefix = s->gbits == 0 ? 0 : lo >> (128 - s->gbits);
	ncell = ((size_t) 1 << s->tbits) + 1;
	s->cell = xxl_budget_alloc(&s->part.budget, ncell * sizeof(uint32_t), err);
	if (s->cell == NULL)
		return err->code;
	for (size_t t = 0; t < ncell; t++)
	{
		unsigned __int128 start;
		dkey		k;

		if (t == ncell - 1)
		{
			s->cell[t] = (uint32_t) s->nsp;
			break;
		}
		start = s->gbits == 0 ? 0 : s->gprefix << (128 - s->gbits);
		if (s->tbits > 0)
			start |= (unsigned __int128) t << (128 - s->gbits - s->tbits);
		k.hi = (uint64_t) (start >> 64);
		k.lo = (uint64_t) start;
		s->cell[t] = (uint32_t) count_below(s->sp, 0, s->nsp, k);
	}
	return XXL_OK;
}


/*
 * Splitters at equal quantiles of the sorted sample; a key that fills a
 * bucket's share of the sample on its own is heavy: it gets an equality
 * bucket.
 */
static xxl_status
choose_splitters(xxl_dsort *s, xxl_error *err)
{
	/* presampled, the records are still to come: as many as announced */
	uint64_t	total = s->cfg.presampled ? s->cfg.records : s->puts;
	uint64_t	nb = (total + s->p.target - 1) / s->p.target;
	size_t		S = s->nsample;
	size_t		share;

	if (nb < 1)
		nb = 1;
	s->sp_cap = (size_t) nb;
	s->sp = xxl_budget_alloc(&s->part.budget, s->sp_cap * sizeof(dkey), err);
	s->heavy = s->sp ? xxl_budget_alloc(&s->part.budget, s->sp_cap, err) : NULL;
	if (s->heavy == NULL)
		return err->code;
	qsort(s->sample, S, sizeof(dkey), cmp_dkey);
	share = S / nb > 0 ? S / nb : 1;
	s->nsp = 0;
	for (uint64_t j = 1; j < nb && S > 0; j++)
	{
		dkey		v = s->sample[(size_t) (j * S / nb)];

		if (s->nsp > 0 && key_eq(s->sp[s->nsp - 1], v))
			continue;
		s->sp[s->nsp] = v;
		s->heavy[s->nsp] = false;
		s->nsp++;
	}
	/* count each splitter's copies in the sample */
	for (size_t j = 0, i = 0; j < s->nsp; j++)
	{
		size_t		copies = 0;

		while (i < S && key_less(s->sample[i], s->sp[j]))
			i++;
		while (i < S && key_eq(s->sample[i], s->sp[j]))
			i++, copies++;
		s->heavy[j] = copies >= share;
	}
	if (S == 0)
	{
		dkey		zero = {0, 0};

		return build_index(s, zero, zero, err);
	}
	return build_index(s, s->sample[0], s->sample[S - 1], err);
}

/*
 * The buckets and their write buffers: the largest block with which both
 * the distribution and the output fit.
 */
static xxl_status
open_buckets(xxl_dsort *s, xxl_error *err)
{
	size_t		used = 0;
	size_t		fixed,
				room,
				B;

	s->nbk = 2 * s->nsp + 1;
	s->bk = xxl_budget_alloc(&s->part.budget, s->nbk * sizeof(ds_chain), err);
	if (s->bk == NULL)
		return err->code;
	memset(s->bk, 0, s->nbk * sizeof(ds_chain));
	fixed = s->part.budget.used + s->p.meta + OVERHEAD;
	room = s->part.budget.limit > fixed ? s->part.budget.limit - fixed : 0;
	/* the plan only guarantees the normal buckets: drop equality buckets that do not fit */
	for (size_t j = 0, nheavy = 0; j < s->nsp; j++)
		if (s->heavy[j] && (s->nsp + 1 + ++nheavy) * XXL_ALIGN > room)
			s->heavy[j] = false;
	for (size_t b = 0; b < s->nbk; b++)
		if (b % 2 == 0 || s->heavy[b / 2])
			s->bk[b].buf = (uint32_t) used++;
	s->nwbuf = used;

	B = room / s->nwbuf;
	if (B > ds_max_block_of(&s->cfg))
		B = ds_max_block_of(&s->cfg);
	{
		/* the output holds the areas and a read block per thread next to the tables (no stage) */
		size_t		out_fixed = fixed - (s->sbuf ? s->p.stage_block : 0) +
			xxl_budget_charge((size_t) (s->p.areas * s->p.cap * s->rec));
		size_t		out_room = s->p.output > out_fixed ? s->p.output - out_fixed : 0;

		if (B > out_room / (s->p.areas - 1))
			B = out_room / (s->p.areas - 1);
	}
	B -= B % XXL_ALIGN;
	if (B < XXL_ALIGN)
		B = XXL_ALIGN;
	if (B < s->rec)
		B = XXL_ROUND_UP(s->rec, XXL_ALIGN);
	if (ds_open_disk(s, &s->bd, B, err) != XXL_OK)
		return err->code;
	s->wbuf = xxl_budget_alloc(&s->part.budget, s->nwbuf * B, err);
	return s->wbuf ? XXL_OK : err->code;
}


/* The last blocks of the buckets; their write buffers are given back. */
static xxl_status
close_buckets(xxl_dsort *s)
{
	for (size_t b = 0; b < s->nbk; b++)
	{
		ds_chain   *bk = &s->bk[b];

		if (bk->fill > 0 &&
			ds_write_block(s, &s->bd, bk, s->wbuf + (size_t) bk->buf * s->bd.block, bk->fill,
						&s->part.err) != XXL_OK)
			return s->part.err.code;
		if (bk->count > s->largest)
			s->largest = bk->count;
	}
	xxl_part_free(&s->part, s->wbuf, s->nwbuf * s->bd.block);
	s->wbuf = NULL;
	return XXL_OK;
}

/* Staged records to their buckets. */
static xxl_status
distribute_stage(xxl_dsort *s)
{
	for (uint64_t k = 0; k < s->stage.blocks; k++)
	{
		size_t		n;
		const unsigned char *p = s->sbuf;

		if (ds_read_block(s, &s->sd, &s->stage, k, s->sbuf, &n, &s->part.err) != XXL_OK)
			return s->part.err.code;
		for (size_t i = 0; i < n; i++, p += s->rec)
			if (ds_distribute_one(s, p, &s->part.err) != XXL_OK)
				return s->part.err.code;
		/* an extent read to its end is room for the buckets being written */
		if ((k + 1) % s->sd.bpe == 0 || k + 1 == s->stage.blocks)
		{
			xxl_block_free(s->sd.disks, s->stage.ext[k / s->sd.bpe]);
			s->stage.ext[k / s->sd.bpe] = XXL_BID_NONE;
		}
		if (xxl_part_canceled(&s->part))
			return s->part.err.code;
	}
	/* the stage is read: the rest of it goes */
	ds_free_chain(s, &s->sd, &s->stage);
	return XXL_OK;
}

/* Splitters from the sample, then the buckets. */
xxl_status
ds_start_distribution(xxl_dsort *s, xxl_error *err)
{
	if (choose_splitters(s, err) != XXL_OK)
		return err->code;
	xxl_part_free(&s->part, s->sample, s->p.sample_cap * sizeof(dkey));
	s->sample = NULL;
	return open_buckets(s, err);
}


xxl_status
xxl_dsort_sort(xxl_dsort *s)
{
	if (s->part.failed || s->phase != DS_INPUT)
	{
		if (!s->part.failed)
			xxl_error_set(&s->part.err, XXL_EINVAL, 0, "distribution sort: sort called twice");
		return xxl_part_fail(&s->part);
	}
	if (s->p.in_memory)
	{
		/* sorted into the second half */
		xxl_radix_sort_fixed((char *) s->area, (char *) s->area + s->puts * s->rec, (size_t) s->puts,
							 s->rec, s->ks, 1, true);
		s->phase = DS_OUTPUT;
		return XXL_OK;
	}
	/* what the worker has not taken yet, then the pipe's memory back */
	if (s->pipe && xxl_pipe_finish(&s->pipe, &s->wait_ns, &s->part.err) != XXL_OK)
		return xxl_part_fail(&s->part);
	s->part.budget.limit = s->p.distribute;
	if (s->cfg.presampled)
	{
		if (s->bk == NULL && ds_start_distribution(s, &s->part.err) != XXL_OK)
			return xxl_part_fail(&s->part);
	}
	else
	{
		/* the last stage block; the stage block buffer then reads the stage */
		if (s->stage.fill > 0 &&
			ds_write_block(s, &s->sd, &s->stage, s->sbuf, s->stage.fill, &s->part.err) != XXL_OK)
			return xxl_part_fail(&s->part);
		s->stage.fill = 0;
		if (ds_start_distribution(s, &s->part.err) != XXL_OK || distribute_stage(s) != XXL_OK)
			return xxl_part_fail(&s->part);
		xxl_part_free(&s->part, s->sbuf, s->p.stage_block);
		s->sbuf = NULL;
	}
	if (close_buckets(s) != XXL_OK)
		return xxl_part_fail(&s->part);
	s->part.budget.limit = s->p.output;
	s->peak_before_output = s->part.budget.peak;
	xxl_budget_restart_peak(&s->part.budget);
	if (ds_alloc_area(s) != XXL_OK)
		return xxl_part_fail(&s->part);
	s->rbuf = xxl_part_alloc(&s->part, s->bd.block);
	if (s->rbuf == NULL || (s->p.areas == 3 && ds_ahead_start(s, 0) != XXL_OK))
		return xxl_part_fail(&s->part);
	if (s->p.areas == 2 && s->p.pipe_batch > 0)
		ds_helper_start(s);		/* (without one the caller sorts alone) */
	s->phase = DS_OUTPUT;
	s->cur = 0;
	return XXL_OK;
}

