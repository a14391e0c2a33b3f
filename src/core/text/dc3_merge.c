/*
 * dc3_merge.c — step 5: the two-way merge of S0 and S12 that hands a
 * level's suffixes to its consumer, and the top level's merge on a
 * worker thread.
 */
#include "core/text/dc3_internal.h"

#include <stdlib.h>
#include <string.h>

/* Step 5: the merge --------------------------------------------------------- */

static inline void
decode(const dc3_level *lv, int which, const unsigned char *p, merge_head *h)
{
	int			cw = lv->cw,
				rw = lv->rw;
	uint64_t	t,
				t1,
				r1 = 0,
				r;

	t = get_be(p, cw), p += cw;
	if (which == 0)
		r1 = get_be(p, rw), p += rw;
	t1 = get_be(p, cw), p += cw;
	r = get_be(p, rw), p += rw;	/* S0: r[i+2]; S12: r[i+1] or r[i+2] */
	h->i = get_be(p, lv->pw);
	p += lv->pw;
	h->key = MERGE_KEY(t, t1, r);
	if (which == 0)
		h->key1 = MERGE_KEY(t, 0, r1);
	h->mod1 = h->i % 3 == 1;
	h->prev = lv->prev ? (h->i == 0 ? -1 : *p) : -1;
}

static inline int
fetch(xxl_sa *sa, dc3_level *lv, int which)
{
	const unsigned char *rec;
	int			got = which == 0 ? xxl_env_sort_next(&sa->env, &lv->S0, &rec)
		: xxl_env_scat_next(&sa->env, &lv->S12, &rec);

	if (got < 0)
		return -1;
	lv->have[which] = got > 0;
	if (got > 0)
		decode(lv, which, rec, &lv->h[which]);
	return 0;
}

/*
 * Is the mod-0 suffix a smaller than the sample suffix b?  [T]'s rules: a
 * mod-1 b compares by (T[i], r[i+1]), a mod-2 b by (T[i], T[i+1], r[i+2]).
 * No ties: the ranks of different sample positions differ, and r = 0 only
 * past the end.
 */
static inline bool
less0(const merge_head *a, const merge_head *b)
{
	return (b->mod1 ? a->key1 : a->key) < b->key;
}

/*
 * The next suffixes of a level in order, up to cap of them: their positions
 * and, if prev is not NULL, the bytes before them.  Returns how many, 0 at
 * the end, -1 on error.  The consumers (the parent's ISA, the caller) take
 * them in batches: one call per suffix cost a tenth of the build.
 */
int64_t
dc3_level_fill(xxl_sa *sa, dc3_level *lv, uint64_t *pos, int *prev, size_t cap)
{
	size_t		k = 0;

	if (sa->env.cancel && xxl_env_canceled(&sa->env))
		return -1;
	if (lv->internal)
	{
		for (; k < cap && lv->out <= lv->n; k++)
		{
			int32_t		p = lv->SA[lv->out++];

			pos[k] = (uint64_t) p;
			if (prev)
			{
				if (p == 0 || lv->text == NULL)
					prev[k] = -1;
				else
				{
					uint32_t	c = lv->ts == 1 ? ((uint8_t *) lv->text)[p - 1]
						: ((uint16_t *) lv->text)[p - 1];

					prev[k] = lv->unmap ? lv->unmap[c] : (int) c - 1;
				}
			}
		}
		return (int64_t) k;
	}
	if (!lv->primed)
	{
		for (int c = 0; c < 2; c++)
			if (fetch(sa, lv, c) < 0)
				return -1;
		lv->primed = true;
	}
	/* both sides left: fetch is inlined for each side */
	while (k < cap && lv->have[0] && lv->have[1])
	{
		int			best = less0(&lv->h[0], &lv->h[1]) ? 0 : 1;

		pos[k] = lv->h[best].i;
		if (prev)
			prev[k] = lv->h[best].prev;
		k++;
		lv->emitted++;
		if ((best == 0 ? fetch(sa, lv, 0) : fetch(sa, lv, 1)) < 0)
			return -1;
	}
	while (k < cap)
	{
		int			best;

		if (lv->have[0] || lv->have[1])
			best = lv->have[0] ? 0 : 1;
		else
		{
			if (lv->emitted != lv->n)
			{
				xxl_error_set(&sa->env.err, XXL_EINVAL, 0, "DC3: merge produced %llu of %llu suffixes",
							  (unsigned long long) lv->emitted, (unsigned long long) lv->n);
				return -1;
			}
			break;
		}
		pos[k] = lv->h[best].i;
		if (prev)
			prev[k] = lv->h[best].prev;
		k++;
		lv->emitted++;
		if (fetch(sa, lv, best) < 0)
			return -1;
	}
	return (int64_t) k;
}

void
dc3_level_free(xxl_sa *sa, dc3_level *lv)
{
	xxl_env   *env = &sa->env;
	xxl_sa_level_stats *st = &sa->lstats[lv->depth];

	if (lv->child)
	{
		dc3_level_free(sa, lv->child);
		xxl_budget_free(&env->budget, lv->child, sizeof(*lv->child));
		lv->child = NULL;
	}
	st->overfull_buckets += xxl_env_sort_overfull(&lv->TS) + xxl_env_sort_overfull(&lv->S0);
	xxl_env_sort_close(env, &lv->TS, &st->io_bytes, &st->sorted_bytes);
	xxl_env_sort_close(env, &lv->S0, &st->io_bytes, &st->sorted_bytes);
	xxl_env_scat_close(env, &lv->names, &st->io_bytes, &st->scattered_bytes);
	xxl_env_scat_close(env, &lv->isa, &st->io_bytes, &st->scattered_bytes);
	xxl_env_scat_close(env, &lv->S12, &st->io_bytes, &st->scattered_bytes);
	if (lv->depth > 0)
		xxl_spool_free(&lv->own);
	s0_sample_free(sa, lv);
	xxl_spool_free(&lv->rank1);
	xxl_spool_free(&lv->rank2);
	if (lv->tbits)
		xxl_budget_free(&env->budget, lv->tbits, lv->tbits_bytes);
	if (lv->tdir)
		xxl_budget_free(&env->budget, lv->tdir, lv->tdir_bytes);
	lv->tbits = NULL;
	lv->tdir = NULL;
	if (lv->text)
		xxl_budget_free(&env->budget, lv->text, lv->text_bytes);
	lv->text = NULL;
	if (lv->SA)
		xxl_budget_free(&env->budget, lv->SA, lv->sa_bytes);
	lv->SA = NULL;
}

/*
 * A level's merge on a worker (external levels, more than one thread; at the
 * top only when building positions), through the environment's read-ahead
 * ring (xxl_ahead.h): the worker fills batches of positions (and preceding
 * bytes) while the caller takes them — the host writing its rows at the
 * top, which in SQL cost as much as the merge, the parent filling its ISA
 * below.  Each side stalls now and then (the worker sorting a bucket of S0,
 * the host in a write), so the ring takes up to 16 slots (2 MB) where the
 * budget has them: in SQL, 100 MiB at n/8, the output phase took 3.3-3.6 s
 * with 2 slots, 3.0 with 4, 2.5 with 8 and 2.3 with 16.  One merger runs at
 * a time (a child's merge ends before its parent's starts).  The worker
 * runs level_fill alone: the level's sorts and scatters are its own from
 * then on; a caller that fails first keeps its own error
 * (dc3_merger_abandon).  Where the slots do not fit, the caller merges.
 */
#define MERGER_BATCH 16384

static size_t
merger_slot_bytes(const dc3_level *lv)
{
	return MERGER_BATCH * (sizeof(uint64_t) + (lv->prev ? sizeof(int) : 0));
}

static int64_t
merger_fill(void *arg, void *slot)
{
	xxl_sa	   *sa = arg;
	dc3_level  *lv = sa->merge_lv;
	uint64_t   *pos = slot;

	return dc3_level_fill(sa, lv, pos, lv->prev ? (int *) (pos + MERGER_BATCH) : NULL, MERGER_BATCH);
}

/* Start the worker where it pays and fits; false: the caller merges. */
bool
dc3_merger_start(xxl_sa *sa, dc3_level *lv)
{
	if (sa->env.threads < 2 || lv->internal || (lv == sa->top && sa->cfg.mode != XXL_SA_POSITIONS))
		return false;
	sa->merge_lv = lv;
	sa->merger = xxl_ahead_start(&sa->env, merger_slot_bytes(lv), XXL_AHEAD_SLOTS_MAX, merger_fill, sa);
	if (sa->merger == NULL)
		return false;
	sa->lstats[lv->depth].merge_slots = xxl_ahead_slots(sa->merger);
	return true;
}

/*
 * The next batch of lv's merge into cur_pos/cur_prev: from the worker where
 * one runs (stopped once it has ended: its errors are in env), else merged
 * here into pos/prev (cap of them).  Its count, 0 at the end, < 0 on error.
 */
int64_t
dc3_merge_next(xxl_sa *sa, dc3_level *lv, uint64_t *pos, int *prev, size_t cap)
{
	int64_t		got;

	if (sa->merger == NULL)
	{
		sa->cur_pos = pos;
		sa->cur_prev = prev;
		return dc3_level_fill(sa, lv, pos, prev, cap);
	}
	{
		const void *slot;

		got = xxl_ahead_next(&sa->env, sa->merger, &slot);
		sa->cur_pos = slot;
		sa->cur_prev = lv->prev ? (const int *) (sa->cur_pos + MERGER_BATCH) : NULL;
	}
	if (got <= 0)
		dc3_merger_stop(sa);
	return got;
}

/*
 * The consumer failed while the worker (if any) merges: stop the worker,
 * the consumer's error (already in the environment) staying the one
 * reported.
 */
void
dc3_merger_abandon(xxl_sa *sa)
{
	xxl_error	mine = sa->env.err;

	dc3_merger_stop(sa);
	sa->env.err = mine;
}

/* Stop the worker (after the batch it fills) and give its slots back. */
void
dc3_merger_stop(xxl_sa *sa)
{
	xxl_ahead_stop(&sa->env, sa->merger);
	sa->merger = NULL;
	sa->merge_lv = NULL;
}
