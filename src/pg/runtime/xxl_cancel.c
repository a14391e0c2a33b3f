/*
 * xxl_cancel.c — the engine's cancel hook (see xxl_cancel.h) and the test
 * hold point that xxl.test_hold sets.
 */
#include "postgres.h"

#include <pthread.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"

#include "pg/runtime/xxl_cancel.h"
#include "pg/runtime/xxl_guc.h"
#include "pg/runtime/xxl_operator.h"
#include "pg/runtime/xxl_progress.h"

int			xxl_hold_phase_now = XXL_HOLD_NONE;

/* the backend's own thread: the only one that may wait on its latch */
static pthread_t backend_thread;

void
xxl_cancel_init(void)
{
	backend_thread = pthread_self();
}

bool
xxl_on_backend_thread(void)
{
	return pthread_equal(pthread_self(), backend_thread);
}

static inline bool
cancel_pending(void)
{
	return InterruptPending && (QueryCancelPending || ProcDiePending);
}

/*
 * xxl.test_hold: wait here, inside the engine's poll, until a cancel is
 * pending.  Signals set the latch, so the wait ends as soon as one comes;
 * the timeout only guards against a lost wake-up.  Once per phase.
 */
static void
hold_until_canceled(void)
{
	xxl_hold_phase_now = XXL_HOLD_NONE;
	while (!cancel_pending())
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

bool
xxl_cancel_requested(void *arg)
{
	XxlOperator *op = (XxlOperator *) arg;
	bool		held;

	if (!xxl_on_backend_thread())
		return cancel_pending();
	held = unlikely(xxl_test_hold != XXL_HOLD_NONE) && xxl_hold_phase_now == xxl_test_hold;
	if (op != NULL)
		xxl_progress_publish(op, held);		/* a held operator shows where it is */
	if (held)
		hold_until_canceled();
	return cancel_pending();
}

void
xxl_hold_point(int phase)
{
	xxl_hold_phase_now = phase;
	(void) xxl_cancel_requested(NULL);
	xxl_hold_phase_now = XXL_HOLD_NONE;
	CHECK_FOR_INTERRUPTS();
}
