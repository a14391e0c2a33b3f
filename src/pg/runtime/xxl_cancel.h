/*
 * xxl_cancel.h — the cancel hook the engine polls, and the test hold.
 */
#ifndef XXL_PG_CANCEL_H
#define XXL_PG_CANCEL_H

/* The phase the running operator is in (XxlHold values; xxl_guc.h). */
extern int	xxl_hold_phase_now;

/* Called from _PG_init, on the backend's thread. */
extern void xxl_cancel_init(void);

/* Whether the caller runs on the backend's own thread (not an engine thread). */
extern bool xxl_on_backend_thread(void);

/*
 * The engine's cancel hook: true when a query cancel, statement timeout or
 * termination is pending.  Only reads the signal flags, and the engine
 * calls it on the backend's own thread.
 */
extern bool xxl_cancel_requested(void *arg);

/*
 * A hold point outside the engine, for glue that works in steps (VACUUM's
 * merge of an xxl table): held there when xxl.test_hold names phase, then
 * a pending cancel is raised.
 */
extern void xxl_hold_point(int phase);

#endif							/* XXL_PG_CANCEL_H */
