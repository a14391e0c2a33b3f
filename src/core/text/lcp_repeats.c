/*
 * lcp_repeats.c — repeats mode of the LCP operator (xxl_lcp.h): runs of
 * ranks whose LCP reaches min_length are the suffixes that share their
 * first min_length bytes; a run of at least min_count makes a window at
 * each of its positions.  The run's positions wait in memory (a spool past
 * GROUP_MEMORY) until its size is known.  Windows go to a sort by position;
 * ranges are merged from it as the caller reads.
 */
#include "core/text/lcp_internal.h"

#include <string.h>

#define GROUP_ENTRIES 8192

typedef struct run_buffer
{
	uint64_t	pos[GROUP_ENTRIES];
	size_t		fill;
	xxl_spool	spill;			/* entries past the buffer */
	bool		spilled;
	uint64_t	size;
} run_buffer;

static xxl_status
run_add(xxl_lcp *l, run_buffer *run, uint64_t pos)
{
	run->size++;
	if (run->fill < GROUP_ENTRIES)
	{
		run->pos[run->fill++] = pos;
		return XXL_OK;
	}
	if (!run->spilled)
	{
		xxl_spool_init(&run->spill, &l->env, XXL_SPOOL_SHARED);
		run->spilled = true;
	}
	return xxl_spool_write(&run->spill, &pos, sizeof(pos));
}

static xxl_status
window(xxl_lcp *l, uint64_t pos, uint64_t count)
{
	l->st.repeat_windows++;
	return lcp_push_pair(l, &l->W, pos, count);
}

/* The run is over: its windows if it is long enough; then empty it. */
static xxl_status
run_close(xxl_lcp *l, run_buffer *run)
{
	xxl_status	rc = XXL_OK;

	if (run->size >= l->cfg.min_count)
	{
		l->st.repeat_groups++;
		for (size_t k = 0; k < run->fill && rc == XXL_OK; k++)
			rc = window(l, run->pos[k], run->size);
		if (rc == XXL_OK && run->spilled)
		{
			xxl_spool_reader rd;
			const unsigned char *p;

			if ((rc = xxl_spool_finish(&run->spill)) == XXL_OK &&
				(rc = xxl_spool_reader_open(&rd, &run->spill, true)) == XXL_OK)
			{
				for (uint64_t k = GROUP_ENTRIES; k < run->size && rc == XXL_OK; k++)
				{
					uint64_t	pos;

					if ((rc = xxl_spool_read(&rd, sizeof(pos), &p)) == XXL_OK)
					{
						memcpy(&pos, p, sizeof(pos));
						rc = window(l, pos, run->size);
					}
				}
				xxl_spool_reader_close(&rd);
			}
		}
	}
	if (run->spilled)
		xxl_spool_free(&run->spill);
	run->spilled = false;
	run->fill = 0;
	run->size = 0;
	return rc;
}

xxl_status
lcp_repeats_build(xxl_lcp *l)
{
	xxl_env    *env = &l->env;
	run_buffer *run = xxl_env_alloc(env, sizeof(run_buffer));
	const unsigned char *rec;
	int			got;
	xxl_status	rc = XXL_OK;

	if (run == NULL)
		return env->err.code;
	run->fill = 0;
	run->size = 0;
	run->spilled = false;
	if (xxl_env_sort_open(env, &l->W, l->share_round, 0, (size_t) (2 * l->pw), (size_t) l->pw, 0,
						  XXL_INPUT_UNBOUNDED) != XXL_OK)
	{
		xxl_env_free(env, run, sizeof(run_buffer));
		return env->err.code;
	}
	l->W_open = true;
	while ((got = xxl_env_scat_next(env, &l->E, &rec)) > 0)
	{
		uint64_t	pos = get_be(rec, l->pw),
					lcp = get_be(rec + l->pw, l->pw);

		if (lcp < l->cfg.min_length && (rc = run_close(l, run)) != XXL_OK)
			break;
		if ((rc = run_add(l, run, pos)) != XXL_OK || xxl_env_poll(env))
		{
			rc = env->err.code;
			break;
		}
	}
	if (got < 0)
		rc = env->err.code;
	if (rc == XXL_OK)
		rc = run_close(l, run);
	else if (run->spilled)
		xxl_spool_free(&run->spill);
	xxl_env_free(env, run, sizeof(run_buffer));
	xxl_env_scat_close(env, &l->E, NULL, NULL);
	l->E_open = false;
	if (rc != XXL_OK)
		return rc;
	return xxl_env_sort_sort(env, &l->W);
}

/* Merge overlapping windows in position order into ranges. */
int
lcp_repeats_next(xxl_lcp *l, uint64_t *start, uint64_t *length, uint64_t *occurrences)
{
	const unsigned char *rec;
	uint64_t	k = l->cfg.min_length;
	int			got;

	while ((got = xxl_env_sort_next(&l->env, &l->W, &rec)) > 0)
	{
		uint64_t	pos = get_be(rec, l->pw),
					count = get_be(rec + l->pw, l->pw);

		if (l->have_range && pos < l->cur_end)
		{
			l->cur_end = pos + k;
			if (count < l->cur_min)
				l->cur_min = count;
			continue;
		}
		if (l->have_range)
		{
			*start = l->cur_start;
			*length = l->cur_end - l->cur_start;
			*occurrences = l->cur_min;
			l->st.repeat_ranges++;
			l->cur_start = pos;
			l->cur_end = pos + k;
			l->cur_min = count;
			return 1;
		}
		l->have_range = true;
		l->cur_start = pos;
		l->cur_end = pos + k;
		l->cur_min = count;
	}
	if (got < 0)
		return -1;
	if (l->have_range)
	{
		*start = l->cur_start;
		*length = l->cur_end - l->cur_start;
		*occurrences = l->cur_min;
		l->st.repeat_ranges++;
		l->have_range = false;
		return 1;
	}
	xxl_env_sort_close(&l->env, &l->W, NULL, NULL);
	l->W_open = false;
	return 0;
}
