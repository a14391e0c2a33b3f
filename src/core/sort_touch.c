/*
 * sort_touch.c — backing a large first load's pages ahead of its fill, on a
 * helper thread (sort_internal.h, "touch-ahead").
 *
 * A sorter whose input turns out to fit its budget fills one load and sorts
 * it in memory; nothing runs beside the caller meanwhile.  Each page the
 * load reaches for the first time is a page fault with a page to zero, and
 * on virtual machines that map guest memory lazily (this project's test
 * machine among them) the first touch of memory costs far more than the
 * copy that fills it: a large in-memory load spent more time in faults than
 * in its records (docs/engine.md).  The helper asks the kernel to back the
 * pages a little ahead of each of the load's fronts (records growing up,
 * variable records' entries and the radix sort's scratch growing down) with
 * MADV_POPULATE_WRITE, which backs pages without writing them, so it never
 * races the caller's stores.  Where the kernel lacks it (before Linux 5.14)
 * the helper stops at its first attempt and the caller faults as before.
 *
 * The helper runs during the first load only: later loads reuse the pages
 * the first one backed.  It backs at most TOUCH_AHEAD bytes beyond each
 * front, all inside the region the budget already charges.
 */
#include "core/sort_internal.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Bytes backed ahead of a front, and the step the helper backs at once. */
#define TOUCH_AHEAD (64 * 1024 * 1024)
#define TOUCH_STEP (4 * 1024 * 1024)
/* Regions from this size get a helper once their first load passes TOUCH_START. */
#define TOUCH_MIN_REGION (256 * 1024 * 1024)
#define TOUCH_START (16 * 1024 * 1024)
/* The kernel backs whole pages: a range is cut inwards to them. */
#define TOUCH_PAGE 4096

typedef struct touch_front
{
	char	   *origin;			/* where the front starts */
	bool		downwards;		/* it grows towards lower addresses */
	size_t		done;			/* bytes from the origin backed */
	size_t		target;			/* bytes the caller wants backed */
} touch_front;

struct sort_toucher
{
	pthread_t	thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool		stop;
	bool		failed;			/* the kernel refused: nothing more to do */
	touch_front front[2];
};

/* Back [start, start + len), page-aligned inwards; false if the kernel refuses. */
static bool
populate(char *start, size_t len)
{
	uintptr_t	lo = XXL_ROUND_UP((uintptr_t) start, TOUCH_PAGE);
	uintptr_t	hi = ((uintptr_t) start + len) & ~(uintptr_t) (TOUCH_PAGE - 1);

	if (hi <= lo)
		return true;
	return madvise((void *) lo, hi - lo, MADV_POPULATE_WRITE) == 0 || errno == EINTR;
}

/* A front the helper is behind on, or NULL. */
static touch_front *
front_behind(sort_toucher *t)
{
	for (int i = 0; i < 2; i++)
		if (t->front[i].done < t->front[i].target)
			return &t->front[i];
	return NULL;
}

static void *
toucher_main(void *arg)
{
	sort_toucher *t = arg;

	pthread_mutex_lock(&t->lock);
	for (;;)
	{
		touch_front *f = NULL;
		size_t		from,
					step;
		bool		ok;

		while (!t->stop && !t->failed && (f = front_behind(t)) == NULL)
			pthread_cond_wait(&t->changed, &t->lock);
		if (t->stop || t->failed)
			break;
		from = f->done;
		step = f->target - from < TOUCH_STEP ? f->target - from : TOUCH_STEP;
		pthread_mutex_unlock(&t->lock);
		ok = populate(f->downwards ? f->origin - from - step : f->origin + from, step);
		pthread_mutex_lock(&t->lock);
		f->done = from + step;
		if (!ok)
			t->failed = true;
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

/*
 * The caller's poll during the first load: start the helper once the load
 * is large enough to be worth it, and move its targets TOUCH_AHEAD past the
 * fronts: a variable load's records up from its start, and its entries
 * with their sort's scratch (twice the entries) down from its end; a fixed
 * load's records in the region's first half and, as far, the second half
 * they are sorted into.
 */
void
sort_touch_ahead(xxl_sorter *s)
{
	sort_toucher *t = s->toucher;
	size_t		low,
				high;

	/* the first load only (no run yet, on disk or with the worker) */
	if (s->nruns != 0 || s->stats.runs != 0 || s->region_size < TOUCH_MIN_REGION)
		return;
	low = s->fixed ? s->nloaded * s->rec_size : s->arena_used;
	high = s->fixed ? 0 : 2 * s->nloaded * sizeof(xxl_sort_entry);
	if (t == NULL)
	{
		if (low < TOUCH_START || s->touch_refused)
			return;
		t = xxl_part_alloc(&s->part, sizeof(*t));
		if (t == NULL)
		{
			/* a helper is a gain, never a need */
			xxl_error_clear(&s->part.err);
			s->touch_refused = true;
			return;
		}
		memset(t, 0, sizeof(*t));
		if (s->fixed)
		{
			/* the loaded half, and the sorted half as far */
			t->front[0].origin = s->region;
			t->front[1].origin = sort_fixed_sorted(s);
		}
		else
		{
			t->front[0].origin = s->load;
			t->front[1].origin = s->load + s->load_size;
			t->front[1].downwards = true;
		}
		pthread_mutex_init(&t->lock, NULL);
		pthread_cond_init(&t->changed, NULL);
		if (xxl_thread_start(&t->thread, toucher_main, t) != 0)
		{
			pthread_mutex_destroy(&t->lock);
			pthread_cond_destroy(&t->changed);
			xxl_part_free(&s->part, t, sizeof(*t));
			s->touch_refused = true;
			return;
		}
		s->toucher = t;
	}
	if (s->fixed)
	{
		size_t		load = s->fixed_capacity * s->rec_size;

		low = low + TOUCH_AHEAD < load ? low + TOUCH_AHEAD : load;
		high = low;
	}
	else
	{
		low += TOUCH_AHEAD;
		high += TOUCH_AHEAD;
		if (low + high > s->load_size)
		{
			/* the fronts meet: together they cover the load */
			low = s->load_size / 2;
			high = s->load_size - low;
		}
	}
	pthread_mutex_lock(&t->lock);
	if (low > t->front[0].target || high > t->front[1].target)
	{
		if (low > t->front[0].target)
			t->front[0].target = low;
		if (high > t->front[1].target)
			t->front[1].target = high;
		pthread_cond_signal(&t->changed);
	}
	pthread_mutex_unlock(&t->lock);
}

/*
 * Stop the helper, if there is one, and free it; what it backed stays
 * backed and counts as touched in the peak the sorter reports.
 */
void
sort_touch_end(xxl_sorter *s)
{
	sort_toucher *t = s->toucher;
	size_t		backed;

	if (t == NULL)
		return;
	xxl_thread_stop(t->thread, &t->lock, &t->changed, &t->stop);
	backed = t->front[0].done + t->front[1].done;
	if (backed > s->region_touched)
		s->region_touched = backed < s->region_size ? backed : s->region_size;
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->changed);
	xxl_part_free(&s->part, t, sizeof(*t));
	s->toucher = NULL;
}
