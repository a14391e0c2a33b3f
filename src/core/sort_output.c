/*
 * sort_output.c — the sorter's output phase (xxl_sort.h): records handed
 * out one at a time, in batches, or as variable-length records, from the
 * final merge (sort_merge.c) or straight from a single run or load.
 */
#include "core/sort_internal.h"

/* The last record was handed out: the sorter is done, the output time is taken. */
static int
output_done(xxl_sorter *s)
{
	s->phase = PHASE_DONE;
	s->stats.merge_ns = xxl_now_ns() - s->t_merge_start;
	return 0;
}

/*
 * Where the output of a variable load sorted in memory gathers its
 * records: at most GATHER_BATCH bytes of the load's free space just below
 * its entries (the radix sort's scratch, so its pages are backed), none
 * where that space is too small to be worth it.
 */
void
sort_gather_start(xxl_sorter *s)
{
	char	   *entries = (char *) var_entries(s);
	size_t		gap = (size_t) (entries - (s->load + s->arena_used)) & ~(size_t) 7;

	s->gathered = 0;
	s->gather_used = 0;
	s->gather_pos = 0;
	s->gather_size = gap < GATHER_BATCH ? gap : GATHER_BATCH;
	if (s->gather_size < GATHER_BATCH_MIN)
		s->gather_size = 0;
	s->gather = entries - s->gather_size;
}

/*
 * The next record of a variable load sorted in memory, its bytes as on
 * disk.  Records are copied, in key order, into the gather batch, a batch
 * at a time: the loads from the arena, each a cache miss, then overlap in
 * one tight loop rather than each waiting between the caller's per-row
 * work (measured: handing records out of the arena one by one took 2.5
 * times as long).  A record larger than the whole batch is handed out
 * where it is.
 */
static const unsigned char *
memory_next_var(xxl_sorter *s)
{
	const xxl_sort_entry *e = var_entries(s);
	const char *rec;
	size_t		len;

	if (s->gather_pos < s->gather_used)
	{
		rec = s->gather + s->gather_pos;
		s->gather_pos += XXL_ROUND_UP(var_record_len(rec), 8);
		return (const unsigned char *) rec;
	}
	s->gather_used = 0;
	s->gather_pos = 0;
	while (s->gathered < s->nloaded)
	{
		if (s->gathered + GATHER_AHEAD < s->nloaded)
			var_fetch_ahead(s->load, &e[s->gathered + GATHER_AHEAD]);
		rec = s->load + (size_t) e[s->gathered].ref * 8;
		len = var_record_len(rec);
		if (s->gather_used + len > s->gather_size)
			break;
		memcpy(s->gather + s->gather_used, rec, len);
		s->gather_used += XXL_ROUND_UP(len, 8);
		s->gathered++;
	}
	if (s->gather_used == 0)
	{
		/* too large for the batch (or no batch): from the arena */
		return (const unsigned char *) s->load + (size_t) e[s->gathered++].ref * 8;
	}
	return memory_next_var(s);
}

static int
next_record(xxl_sorter *s, const unsigned char **key, uint32_t *key_len,
			const unsigned char **payload, uint32_t *payload_len)
{
	if (s->part.failed)
		return -(int) s->part.err.code;
	if (s->phase == PHASE_MEMORY_OUTPUT)
	{
		if (s->out_index == s->nloaded)
			return output_done(s);
		if (s->fixed)
		{
			*key = (unsigned char *) sort_fixed_sorted(s) + s->out_index * s->rec_size;
			*key_len = (uint32_t) s->key_size;
			*payload = *key;
			*payload_len = (uint32_t) s->rec_size;
		}
		else
		{
			const unsigned char *rec = memory_next_var(s);
			uint32_t	hdr[2];

			memcpy(hdr, rec, VAR_HEADER);
			*key = rec + VAR_HEADER;
			*key_len = hdr[0];
			*payload = rec + VAR_HEADER + hdr[0];
			*payload_len = hdr[1];
		}
		s->out_index++;
		if ((s->out_index & (POLL_EVERY - 1)) == 0 && xxl_part_canceled(&s->part))
			return -xxl_part_fail(&s->part);
		return 1;
	}
	if (s->phase == PHASE_MERGE_OUTPUT)
	{
		xxl_merge_record rec;
		int			got = xxl_merger_next(s->final, &rec);

		if (got < 0)
			return -xxl_part_fail(&s->part);
		if (got == 0)
			return output_done(s);
		*key = rec.key;
		*key_len = rec.key_len;
		*payload = rec.payload;
		*payload_len = rec.payload_len;
		if ((++s->out_index & (POLL_EVERY - 1)) == 0 && xxl_part_canceled(&s->part))
			return -xxl_part_fail(&s->part);
		return 1;
	}
	if (s->phase == PHASE_DONE)
		return 0;
	if (s->phase == PHASE_INPUT)
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "xxl_sorter_sort must be called before reading");
	return -(int) xxl_part_fail(&s->part);
}

/* The batch reader contract of xxl_batch.h, for fixed-size records. */
int
xxl_sorter_read(xxl_sorter *s, const void **recs, size_t *count)
{
	return xxl_sorter_next_many(s, recs, SIZE_MAX, count);
}

int
xxl_sorter_next_many(xxl_sorter *s, const void **recs, size_t max, size_t *n)
{
	uint64_t	before = s->out_index;

	if (!s->fixed)
	{
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "xxl_sorter_next_many needs fixed-size records");
		return -xxl_part_fail(&s->part);
	}
	if (max == 0)
		max = 1;
	if (s->part.failed)
		return -(int) s->part.err.code;
	if (s->phase == PHASE_MEMORY_OUTPUT)
	{
		if (s->out_index == s->nloaded)
			return output_done(s);
		*recs = sort_fixed_sorted(s) + s->out_index * s->rec_size;
		*n = s->nloaded - s->out_index < max ? s->nloaded - s->out_index : max;
		s->out_index += *n;
	}
	else if (s->phase == PHASE_MERGE_OUTPUT && s->cfg.combine != NULL)
	{
		/* folded records come one at a time */
		int			rc = sort_combine_next(s, recs);

		if (rc == 1)
			*n = 1;
		return rc;
	}
	else if (s->phase == PHASE_MERGE_OUTPUT)
	{
		const unsigned char *p;
		int			got = xxl_merger_next_many(s->final, &p, max, n);

		if (got < 0)
			return -xxl_part_fail(&s->part);
		if (got == 0)
			return output_done(s);
		*recs = p;
		s->out_index += *n;
	}
	else
	{
		const unsigned char *key = NULL,
				   *payload;
		uint32_t	key_len,
					payload_len;
		int			rc = next_record(s, &key, &key_len, &payload, &payload_len);

		if (rc == 1)
		{
			*recs = key;
			*n = 1;
		}
		return rc;
	}
	/* poll as often as record by record: whenever a multiple of POLL_EVERY is passed */
	if (before / POLL_EVERY != s->out_index / POLL_EVERY && xxl_part_canceled(&s->part))
		return -xxl_part_fail(&s->part);
	return 1;
}

int
xxl_sorter_next(xxl_sorter *s, const void **rec)
{
	const unsigned char *key = NULL,
			   *payload;
	uint32_t	key_len,
				payload_len;
	int			rc;

	if (!s->fixed)
	{
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "xxl_sorter_next needs fixed-size records");
		return -xxl_part_fail(&s->part);
	}
	if (s->phase == PHASE_MERGE_OUTPUT && s->cfg.combine != NULL && !s->part.failed)
		return sort_combine_next(s, rec);
	rc = next_record(s, &key, &key_len, &payload, &payload_len);
	if (rc == 1)
		*rec = key;
	return rc;
}

int
xxl_sorter_next_var(xxl_sorter *s, const void **key, uint32_t *key_len,
					const void **payload, uint32_t *payload_len)
{
	const unsigned char *k = NULL,
			   *p = NULL;
	int			rc;

	if (s->fixed)
	{
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "xxl_sorter_next_var needs variable-length records");
		return -xxl_part_fail(&s->part);
	}
	rc = next_record(s, &k, key_len, &p, payload_len);
	if (rc == 1)
	{
		*key = k;
		*payload = p;
	}
	return rc;
}
