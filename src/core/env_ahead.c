/*
 * env_ahead.c — the producer that runs ahead on a worker thread (see
 * xxl_ahead.h): a ring of slots, one mutex and two condition variables.
 */
#include "core/xxl_ahead.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

/* the caller waiting for a batch asks the host this often */
#define AHEAD_POLL_NS (20 * 1000 * 1000)

struct xxl_ahead
{
	pthread_t	thread;
	pthread_mutex_t mu;
	pthread_cond_t to_worker;	/* a slot was given back, or stop */
	pthread_cond_t to_caller;	/* a batch is ready */
	int			ready,			/* filled slots not given back */
				head;			/* the oldest */
	bool		stop;
	bool		joined;			/* the worker has ended (a cancel stopped it) */
	bool		holding;		/* the caller holds slot head */
	int			slots;
	int64_t		got[XXL_AHEAD_SLOTS_MAX];
	unsigned char *mem;
	size_t		slot_bytes;
	size_t		bytes;
	xxl_ahead_fill fill;
	void	   *arg;
};

static void *
worker(void *arg)
{
	xxl_ahead  *a = arg;

	for (int w = 0;; w = (w + 1) % a->slots)
	{
		int64_t		got;

		pthread_mutex_lock(&a->mu);
		while (a->ready == a->slots && !a->stop)
			pthread_cond_wait(&a->to_worker, &a->mu);
		if (a->stop)
		{
			pthread_mutex_unlock(&a->mu);
			break;
		}
		pthread_mutex_unlock(&a->mu);
		got = a->fill(a->arg, a->mem + (size_t) w * a->slot_bytes);
		pthread_mutex_lock(&a->mu);
		a->got[w] = got;
		a->ready++;
		pthread_cond_signal(&a->to_caller);
		pthread_mutex_unlock(&a->mu);
		if (got <= 0)
			break;
	}
	return NULL;
}

xxl_ahead *
xxl_ahead_start(xxl_env *env, size_t slot_bytes, int slots_max, xxl_ahead_fill fill, void *arg)
{
	size_t		avail = xxl_budget_available(&env->budget);
	int			slots = slots_max < XXL_AHEAD_SLOTS_MAX ? slots_max : XXL_AHEAD_SLOTS_MAX;
	xxl_ahead  *a;
	xxl_error	ignored = {0};

	while (slots > XXL_AHEAD_SLOTS_MIN &&
		   xxl_budget_charge(slots * slot_bytes) + xxl_env_slack(env) > avail)
		slots /= 2;
	if (env->threads < 2 || slots < XXL_AHEAD_SLOTS_MIN ||
		xxl_budget_charge(slots * slot_bytes) + xxl_env_slack(env) > avail)
		return NULL;
	a = xxl_calloc_aligned(sizeof(*a));
	if (a == NULL)
		return NULL;
	/* a failure here only means the caller fills: it is not the operator's error */
	a->mem = xxl_budget_alloc(&env->budget, slots * slot_bytes, &ignored);
	if (a->mem == NULL)
	{
		free(a);
		return NULL;
	}
	a->slots = slots;
	a->slot_bytes = slot_bytes;
	a->bytes = slots * slot_bytes;
	a->fill = fill;
	a->arg = arg;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->to_worker, NULL);
	pthread_cond_init(&a->to_caller, NULL);
	if (xxl_thread_start(&a->thread, worker, a) != 0)
	{
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->to_worker);
		pthread_cond_destroy(&a->to_caller);
		xxl_budget_free(&env->budget, a->mem, a->bytes);
		free(a);
		return NULL;
	}
	return a;
}

int
xxl_ahead_slots(const xxl_ahead *a)
{
	return a ? a->slots : 0;
}

/*
 * The host asked to stop: nothing more is handed out, however far ahead the
 * worker got (it may have filled every batch to the end, and would never see
 * the stop).  The worker ends first, so the cancel it may have recorded and
 * this one do not race for the environment's error.
 */
static int64_t
canceled(xxl_env *env, xxl_ahead *a)
{
	if (!a->joined)
		xxl_thread_stop(a->thread, &a->mu, &a->to_worker, &a->stop);
	a->joined = true;
	if (env->err.code == XXL_OK)
		(void) xxl_env_canceled(env);
	return -1;
}

int64_t
xxl_ahead_next(xxl_env *env, xxl_ahead *a, const void **slot)
{
	int64_t		got;

	/* once a batch, as a caller filling its own slots polls once a fill */
	if (a->joined || xxl_env_host_stop(env))
		return canceled(env, a);
	pthread_mutex_lock(&a->mu);
	if (a->holding)
	{
		a->ready--;
		a->head = (a->head + 1) % a->slots;
		a->holding = false;
		pthread_cond_signal(&a->to_worker);
	}
	while (a->ready == 0)
	{
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += AHEAD_POLL_NS;
		if (until.tv_nsec >= 1000000000)
			until.tv_sec++, until.tv_nsec -= 1000000000;
		if (pthread_cond_timedwait(&a->to_caller, &a->mu, &until) != 0 && a->ready == 0)
		{
			pthread_mutex_unlock(&a->mu);
			if (xxl_env_host_stop(env))
				return canceled(env, a);
			pthread_mutex_lock(&a->mu);
		}
	}
	got = a->got[a->head];
	a->holding = true;
	*slot = a->mem + (size_t) a->head * a->slot_bytes;
	pthread_mutex_unlock(&a->mu);
	return got;
}

void
xxl_ahead_stop(xxl_env *env, xxl_ahead *a)
{
	if (a == NULL)
		return;
	if (!a->joined)
		xxl_thread_stop(a->thread, &a->mu, &a->to_worker, &a->stop);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->to_worker);
	pthread_cond_destroy(&a->to_caller);
	xxl_budget_free(&env->budget, a->mem, a->bytes);
	free(a);
}
