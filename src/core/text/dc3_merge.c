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
 * top only when building positions): it fills batches of positions into a
 * ring of slots while the caller takes them — the host writing its rows at
 * the top, which in SQL cost as much as the merge, the parent filling its
 * ISA below.  Each side stalls now and then (the worker sorting a bucket of
 * S0, the host in a write), so the ring takes up to 16 slots (2 MB) where
 * the budget has them: in SQL, 100 MiB at n/8, the output phase took
 * 3.3-3.6 s with 2 slots, 3.0 with 4, 2.5 with 8 and 2.3 with 16.  One
 * merger runs at a time (a child's merge ends before its parent's starts).
 * The worker runs level_fill alone: the level's sorts and scatters are its
 * own from then on, it records errors in the environment (read by the
 * caller only once the worker has ended; a caller that fails first keeps
 * its own, dc3_merger_abandon), and its cancel polls see only the
 * environment's stop flag, which the caller sets when the host asks to stop
 * (xxl_env_host_stop) — polled at every batch and while it waits for one.
 * The slots are charged to the budget; where they do not fit, the caller
 * merges.
 */
#define MERGER_BATCH 16384
#define MERGER_SLOTS_MIN 2
#define MERGER_SLOTS_MAX 16
#define MERGER_POLL_NS (20 * 1000 * 1000)

typedef struct sa_merger
{
	pthread_t	thread;
	pthread_mutex_t mu;
	pthread_cond_t to_worker;	/* a slot was given back, or stop */
	pthread_cond_t to_caller;	/* a batch is ready */
	int			ready,			/* filled slots not given back */
				head;			/* the oldest */
	bool		stop;
	bool		holding;		/* the caller hands out slot head */
	bool		ended;			/* the last batch (0 or an error) was taken */
	dc3_level  *lv;				/* the level merged */
	int			slots;			/* in the ring */
	int64_t		got[MERGER_SLOTS_MAX];
	uint64_t   *pos[MERGER_SLOTS_MAX];
	int		   *prev[MERGER_SLOTS_MAX];
	size_t		bytes;
} sa_merger;

static void *
merger_main(void *arg)
{
	xxl_sa	   *sa = arg;
	sa_merger  *m = sa->merger;

	for (int w = 0;; w = (w + 1) % m->slots)
	{
		int64_t		got;

		pthread_mutex_lock(&m->mu);
		while (m->ready == m->slots && !m->stop)
			pthread_cond_wait(&m->to_worker, &m->mu);
		if (m->stop)
		{
			pthread_mutex_unlock(&m->mu);
			break;
		}
		pthread_mutex_unlock(&m->mu);
		got = dc3_level_fill(sa, m->lv, m->pos[w], m->prev[w], MERGER_BATCH);
		pthread_mutex_lock(&m->mu);
		m->got[w] = got;
		m->ready++;
		pthread_cond_signal(&m->to_caller);
		pthread_mutex_unlock(&m->mu);
		if (got <= 0)
			break;
	}
	return NULL;
}

/* Start the worker where it pays and fits; false: the caller merges. */
bool
dc3_merger_start(xxl_sa *sa, dc3_level *lv)
{
	xxl_env   *env = &sa->env;
	sa_merger  *m;
	size_t		slot = MERGER_BATCH * (sizeof(uint64_t) + (lv->prev ? sizeof(int) : 0)),
				avail = xxl_budget_available(&env->budget);
	int			slots = MERGER_SLOTS_MAX;
	unsigned char *mem;

	while (slots > MERGER_SLOTS_MIN && xxl_budget_charge(slots * slot) + xxl_env_slack(env) > avail)
		slots /= 2;
	if (env->threads < 2 || lv->internal || (lv == sa->top && sa->cfg.mode != XXL_SA_POSITIONS) ||
		xxl_budget_charge(slots * slot) + xxl_env_slack(env) > avail)
		return false;
	m = xxl_calloc_aligned(sizeof(*m));
	if (m == NULL)
		return false;
	{
		/* a failure here only means the caller merges: it is not the operator's error */
		xxl_error	ignored = {0};

		mem = xxl_budget_alloc(&env->budget, slots * slot, &ignored);
	}
	if (mem == NULL)
	{
		free(m);
		return false;
	}
	m->slots = slots;
	m->bytes = slots * slot;
	for (int w = 0; w < slots; w++)
	{
		m->pos[w] = (uint64_t *) (mem + w * slot);
		m->prev[w] = lv->prev ? (int *) (mem + w * slot + MERGER_BATCH * sizeof(uint64_t)) : NULL;
	}
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->to_worker, NULL);
	pthread_cond_init(&m->to_caller, NULL);
	m->lv = lv;
	sa->merger = m;
	if (xxl_thread_start(&m->thread, merger_main, sa) != 0)
	{
		pthread_mutex_destroy(&m->mu);
		pthread_cond_destroy(&m->to_worker);
		pthread_cond_destroy(&m->to_caller);
		xxl_budget_free(&env->budget, mem, m->bytes);
		free(m);
		sa->merger = NULL;
		return false;
	}
	sa->lstats[lv->depth].merge_slots = slots;
	return true;
}

/* The next batch from the worker into cur_pos/cur_prev: its count, 0 at the end, -1 on error. */
int64_t
dc3_merger_next(xxl_sa *sa)
{
	sa_merger  *m = sa->merger;
	int64_t		got;

	/* once a batch, as the caller's own merge polls once a call of level_fill */
	xxl_env_host_stop(&sa->env);
	pthread_mutex_lock(&m->mu);
	if (m->holding)
	{
		m->ready--;
		m->head = (m->head + 1) % m->slots;
		m->holding = false;
		pthread_cond_signal(&m->to_worker);
	}
	while (m->ready == 0)
	{
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += MERGER_POLL_NS;
		if (until.tv_nsec >= 1000000000)
			until.tv_sec++, until.tv_nsec -= 1000000000;
		if (pthread_cond_timedwait(&m->to_caller, &m->mu, &until) != 0 && m->ready == 0)
		{
			/* the worker's polls see the stop; it ends with an error soon */
			pthread_mutex_unlock(&m->mu);
			xxl_env_host_stop(&sa->env);
			pthread_mutex_lock(&m->mu);
		}
	}
	got = m->got[m->head];
	m->holding = true;
	sa->cur_pos = m->pos[m->head];
	sa->cur_prev = m->prev[m->head];
	if (got <= 0)
		m->ended = true;
	pthread_mutex_unlock(&m->mu);
	return got;
}

/*
 * The consumer failed while the worker merges: stop the worker, the
 * consumer's error (already in the environment) staying the one reported.
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
	sa_merger  *m = sa->merger;

	if (m == NULL)
		return;
	xxl_thread_stop(m->thread, &m->mu, &m->to_worker, &m->stop);
	pthread_mutex_destroy(&m->mu);
	pthread_cond_destroy(&m->to_worker);
	pthread_cond_destroy(&m->to_caller);
	xxl_budget_free(&sa->env.budget, m->pos[0], m->bytes);
	free(m);
	sa->merger = NULL;
}

