/*
 * dc3_merge.c — step 5: the two-way merge of S0 and S12 that hands a
 * level's suffixes to its consumer, and the top level's merge on a
 * worker thread.
 */
#include "core/text/dc3_internal.h"

#include <stdlib.h>
#include <string.h>

/* Step 5: the merge --------------------------------------------------------- */

/*
 * A level's field widths, for decoding its records.  The merge is compiled
 * for the widths of the large levels with these as constants (see
 * merge_both): a field is then a load and a shift, not a switch.
 */
typedef struct widths
{
	int			cw,
				rw,
				pw;
} widths;

static inline __attribute__((always_inline)) void
decode(const dc3_level *lv, widths w, int which, const unsigned char *p, merge_head *h)
{
	uint64_t	t,
				t1,
				r1 = 0,
				r;

	t = get_be(p, w.cw), p += w.cw;
	if (which == 0)
		r1 = get_be(p, w.rw), p += w.rw;
	t1 = get_be(p, w.cw), p += w.cw;
	r = get_be(p, w.rw), p += w.rw;	/* S0: r[i+2]; S12: r[i+1] or r[i+2] */
	h->i = get_be(p, w.pw);
	p += w.pw;
	h->key = MERGE_KEY(t, t1, r);
	if (which == 0)
		h->key1 = MERGE_KEY(t, 0, r1);
	h->mod1 = h->i % 3 == 1;
	h->prev = lv->prev ? (h->i == 0 ? -1 : *p) : -1;
}

static inline __attribute__((always_inline)) int
fetch_w(xxl_sa *sa, dc3_level *lv, widths w, int which)
{
	const unsigned char *rec;
	int			got = which == 0 ? xxl_env_sort_next(&sa->env, &lv->S0, &rec)
		: xxl_env_scat_next(&sa->env, &lv->S12, &rec);

	if (got < 0)
		return -1;
	lv->have[which] = got > 0;
	if (got > 0)
		decode(lv, w, which, rec, &lv->h[which]);
	return 0;
}

static inline int
fetch(xxl_sa *sa, dc3_level *lv, int which)
{
	widths		w = {lv->cw, lv->rw, lv->pw};

	return fetch_w(sa, lv, w, which);
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
 * A side's next head into *h, decoded from the batch in hand (*p, *left,
 * records of size bytes) or, once that is used up, through the reader.
 * False if the side has ended or failed (*failed).
 */
static inline __attribute__((always_inline)) bool
next_head(xxl_sa *sa, dc3_level *lv, widths w, int which, size_t size, merge_head *h,
		  const unsigned char **p, size_t *left, bool *failed)
{
	xxl_batch  *b = which == 0 ? &lv->S0.out : &lv->S12.out;

	if (*left > 0)
	{
		decode(lv, w, which, *p, h);
		*p += size;
		(*left)--;
		return true;
	}
	b->left = 0;
	if (fetch_w(sa, lv, w, which) < 0)
	{
		*failed = true;
		return false;
	}
	*h = lv->h[which];
	*p = b->p;
	*left = b->left;
	return lv->have[which];
}

/*
 * Both sides' heads merged into pos (and prev) until cap suffixes or one
 * side ends: returns how many, SIZE_MAX on error.  Inlined with constant
 * widths by merge_level.  The heads and both readers' cursors are kept in
 * locals meanwhile: in the level's struct, every store to pos (a uint64_t,
 * as the cursor's count and the heads' positions are) made the compiler
 * load them all again.  Together the two took a quarter off the merge's
 * own time (perf samples of the merging threads, 100 MiB of prose at n/8).
 */
static inline __attribute__((always_inline)) size_t
merge_both(xxl_sa *sa, dc3_level *lv, widths w, uint64_t *pos, int *prev, size_t cap)
{
	merge_head	h0 = lv->h[0],
				h1 = lv->h[1];
	const unsigned char *p0 = lv->S0.out.p,
			   *p1 = lv->S12.out.p;
	size_t		left0 = lv->S0.out.left,
				left1 = lv->S12.out.left;
	size_t		size0 = 2 * w.cw + 2 * w.rw + w.pw + (lv->prev ? 1 : 0),
				size1 = 2 * w.cw + w.rw + w.pw + (lv->prev ? 1 : 0);
	size_t		k = 0;
	bool		failed = false;

	while (k < cap)
	{
		if (less0(&h0, &h1))
		{
			pos[k] = h0.i;
			if (prev)
				prev[k] = h0.prev;
			k++;
			if (!next_head(sa, lv, w, 0, size0, &h0, &p0, &left0, &failed))
				break;
		}
		else
		{
			pos[k] = h1.i;
			if (prev)
				prev[k] = h1.prev;
			k++;
			if (!next_head(sa, lv, w, 1, size1, &h1, &p1, &left1, &failed))
				break;
		}
	}
	lv->h[0] = h0, lv->h[1] = h1;
	lv->S0.out.p = p0, lv->S0.out.left = left0;
	lv->S12.out.p = p1, lv->S12.out.left = left1;
	lv->emitted += k;
	return failed ? SIZE_MAX : k;
}

#define MERGE_WIDTHS(c, r, p) ((c) * 100 + (r) * 10 + (p))
#define MERGE_CASE(c, r, p) \
	case MERGE_WIDTHS(c, r, p): \
		return merge_both(sa, lv, (widths) {c, r, p}, pos, prev, cap)

/*
 * merge_both for a level: with constant widths for those of the levels that
 * take the time (the top with byte characters; below, names of 3-4 bytes;
 * positions and ranks of 3-4 bytes), else as the level has them.
 */
static size_t
merge_level(xxl_sa *sa, dc3_level *lv, uint64_t *pos, int *prev, size_t cap)
{
	switch (MERGE_WIDTHS(lv->cw, lv->rw, lv->pw))
	{
			MERGE_CASE(1, 3, 4);
			MERGE_CASE(1, 4, 4);
			MERGE_CASE(2, 3, 4);
			MERGE_CASE(2, 4, 4);
			MERGE_CASE(3, 3, 3);
			MERGE_CASE(3, 3, 4);
			MERGE_CASE(3, 4, 4);
			MERGE_CASE(4, 4, 4);
		default:
			return merge_both(sa, lv, (widths) {lv->cw, lv->rw, lv->pw}, pos, prev, cap);
	}
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

					prev[k] = prev_report(lv->unmap, c);
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
	if (lv->have[0] && lv->have[1])
	{
		k = merge_level(sa, lv, pos, prev, cap);
		if (k == SIZE_MAX)
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
 * budget has them: the output phase got faster up to 16.  One merger runs at
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
