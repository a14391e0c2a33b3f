/*
 * sort_presorted.c — runs put in key order (xxl_sorter_put_sorted): the
 * records are copied into the load region's halves by turns, a chunk of
 * whole blocks at a time, and each full chunk's blocks are posted as the
 * next blocks of one run while the other half fills; no sort, and with
 * combine equal neighbours are folded on the way (the fold holds one
 * record, so a run never holds a key twice).
 */
#include "core/sort_internal.h"

static size_t
gcd(size_t a, size_t b)
{
	while (b != 0)
	{
		size_t		t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static unsigned char *
pre_half(xxl_sorter *s, int h)
{
	return (unsigned char *) (h == 0 ? s->region : sort_fixed_sorted(s));
}

/*
 * Post the writes of the current half's chunk as the run's next blocks
 * (the other half's, posted before, waited for first: one chunk in flight).
 */
static xxl_status
post_chunk(xxl_sorter *s)
{
	const unsigned char *data = pre_half(s, s->pre_half);
	size_t		bytes = s->pre_n * s->rec_size,
				nblocks = (bytes + s->block_size - 1) / s->block_size;

	if (s->pre_n == 0)
		return XXL_OK;
	if (sort_wait_run_writes(s) != XXL_OK)
		return s->part.err.code;
	for (size_t b = 0; b < nblocks; b++)
		if (sort_post_run_block(s, s->pre_run, data, bytes, b, &s->part.err) != XXL_OK)
			return s->part.err.code;
	s->pre_run->nbytes += bytes;
	s->pre_run->nrecords += s->pre_n;
	s->pre_n = 0;
	s->pre_half ^= 1;
	return XXL_OK;
}

/* Append rec (a whole record, its key after the last one's) to the current chunk. */
static xxl_status
append(xxl_sorter *s, const void *rec)
{
	memcpy(pre_half(s, s->pre_half) + s->pre_n * s->rec_size, rec, s->rec_size);
	if (++s->pre_n == s->pre_cap)
		return post_chunk(s);
	return XXL_OK;
}

/* Start the run: the load before it a run of its own, the chunk sized, the fold made. */
static xxl_status
open_presorted(xxl_sorter *s)
{
	size_t		lcm = s->block_size / gcd(s->block_size, s->rec_size) * s->rec_size;
	size_t		chunk = lcm > s->half ? 0 : s->half / lcm * lcm;

	/* (a chunk's writes fit run_writes, half / block + 1 of them) */
	s->pre_cap = chunk / s->rec_size;
	s->pre_open = true;
	if (s->pre_cap == 0)
		return XXL_OK;			/* the records go as ordinary puts until the end */
	if (s->nloaded > 0 && sort_flush_run(s, false) != XXL_OK)
		return s->part.err.code;
	if (sort_ensure_disks(s) != XXL_OK || sort_wait_run_writes(s) != XXL_OK ||
		sort_add_run(s, &s->pre_run) != XXL_OK)
		return s->part.err.code;
	if (s->cfg.combine != NULL && s->pre_fold == NULL)
	{
		s->pre_fold = xxl_part_alloc(&s->part, sizeof(sort_fold));
		if (s->pre_fold == NULL)
			return s->part.err.code;
	}
	if (s->pre_fold)
		s->pre_fold->held = false;
	s->pre_half = 0;
	s->pre_n = 0;
	return XXL_OK;
}

xxl_status
xxl_sorter_put_sorted(xxl_sorter *s, const void *rec)
{
	if (!sort_check_input_phase(s) || !s->fixed || s->async_runs)
	{
		if (!s->part.failed)
			xxl_error_set(&s->part.err, XXL_EINVAL, 0,
						  "xxl_sorter_put_sorted needs fixed records and no asynchronous runs");
		return xxl_part_fail(&s->part);
	}
	if (!s->pre_open && open_presorted(s) != XXL_OK)
		return xxl_part_fail(&s->part);
	if (s->pre_cap == 0)
		return xxl_sorter_put(s, rec);	/* (no room for chunks: ordinary puts) */
	if (s->pre_fold != NULL)
	{
		if (sort_fold_next(s, s->pre_fold, rec) && append(s, s->pre_fold->done) != XXL_OK)
			return xxl_part_fail(&s->part);
	}
	else if (append(s, rec) != XXL_OK)
		return xxl_part_fail(&s->part);
	return sort_note_puts(s, 1, s->rec_size);
}

xxl_status
xxl_sorter_end_sorted(xxl_sorter *s)
{
	if (!s->pre_open || s->pre_cap == 0)
	{
		s->pre_open = false;
		return s->part.failed ? s->part.err.code : XXL_OK;
	}
	if (s->pre_fold != NULL && sort_fold_end(s->pre_fold, s->rec_size) &&
		append(s, s->pre_fold->done) != XXL_OK)
		return xxl_part_fail(&s->part);
	/* the run is complete once its writes are: the region is the loads' again */
	if (post_chunk(s) != XXL_OK || sort_wait_run_writes(s) != XXL_OK)
		return xxl_part_fail(&s->part);
	s->stats.runs++;
	s->pre_open = false;
	return XXL_OK;
}

void
sort_presorted_free(xxl_sorter *s)
{
	if (s->pre_fold)
		xxl_part_free(&s->part, s->pre_fold, sizeof(sort_fold));
	s->pre_fold = NULL;
}
