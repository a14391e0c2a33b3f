/*
 * sort_combine.c — the aggregating sort (xxl_sort_config.combine): fixed
 * records with equal keys folded into one as a load is sorted, as runs are
 * merged (sort_merge.c) and as the final merge hands them out, so that a
 * run never holds a key twice and the runs shrink as keys repeat.  What
 * stays on disk is at most the distinct keys of each load, then of each
 * merged group, not every record put.
 */
#include "core/sort_internal.h"

static inline bool
same_key(const xxl_sorter *s, const void *a, const void *b)
{
	return memcmp(a, b, s->key_size) == 0;
}

/* Fold the n sorted records at recs in place; their number after. */
size_t
sort_combine_sorted(xxl_sorter *s, char *recs, size_t n)
{
	const size_t R = s->rec_size;
	size_t		out = 0;

	if (n == 0)
		return 0;
	for (size_t i = 1; i < n; i++)
	{
		char	   *acc = recs + out * R;
		const char *rec = recs + i * R;

		if (same_key(s, acc, rec))
			s->cfg.combine(acc, rec, s->cfg.combine_arg);
		else
		{
			out++;
			if (out != i)
				memcpy(recs + out * R, rec, R);
		}
	}
	s->stats.combined += n - (out + 1);
	return out + 1;
}

bool
sort_fold_next(xxl_sorter *s, sort_fold *f, const void *rec)
{
	if (f->held && same_key(s, f->rec, rec))
	{
		s->cfg.combine(f->rec, rec, s->cfg.combine_arg);
		s->stats.combined++;
		return false;
	}
	if (!f->held)
	{
		memcpy(f->rec, rec, s->rec_size);
		f->held = true;
		return false;
	}
	memcpy(f->done, f->rec, s->rec_size);
	memcpy(f->rec, rec, s->rec_size);
	return true;
}

bool
sort_fold_end(sort_fold *f, size_t rec_size)
{
	if (!f->held)
		return false;
	memcpy(f->done, f->rec, rec_size);
	f->held = false;
	return true;
}

/* The final merge's fold. */
xxl_status
sort_combine_output_start(xxl_sorter *s)
{
	s->fold = xxl_part_alloc(&s->part, sizeof(sort_fold));
	if (s->fold == NULL)
		return s->part.err.code;
	s->fold->held = false;
	s->fold_end = false;
	return XXL_OK;
}

/*
 * The next record of the final merge with equal keys folded: returns as
 * xxl_sorter_next.  The record handed out is the fold's done.
 */
int
sort_combine_next(xxl_sorter *s, const void **out)
{
	*out = s->fold->done;
	while (!s->fold_end)
	{
		xxl_merge_record rec;
		int			got = xxl_merger_next(s->final, &rec);

		if (got < 0)
			return -xxl_part_fail(&s->part);
		if (got == 0)
			break;
		if ((++s->out_index & (POLL_EVERY - 1)) == 0 && xxl_part_canceled(&s->part))
			return -xxl_part_fail(&s->part);
		if (sort_fold_next(s, s->fold, rec.key))
			return 1;
	}
	s->fold_end = true;
	if (sort_fold_end(s->fold, s->rec_size))
		return 1;
	s->phase = PHASE_DONE;
	s->stats.merge_ns = xxl_now_ns() - s->t_merge_start;
	return 0;
}
