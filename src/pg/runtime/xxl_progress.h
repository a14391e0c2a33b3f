/*
 * xxl_progress.h — where every running operator of every backend is, for
 * the view xxl.progress: one slot per backend in shared memory (reserved
 * when the library is preloaded), each holding that backend's live
 * operators, nested ones included.  A backend writes only its own slot,
 * from its own thread, at the points the engine polls for cancels (rate
 * limited) and when an operator changes phase; readers copy a slot under
 * its change counter, as pg_stat_activity reads backend status.
 */
#ifndef XXL_PG_PROGRESS_H
#define XXL_PG_PROGRESS_H

struct XxlOperator;

/* At _PG_init: ask for the shared memory when preloading (else nothing). */
extern void xxl_progress_init(void);

/* The operator begins: claim an entry of this backend's slot (if any). */
extern void xxl_progress_begin(struct XxlOperator *op);

/*
 * Publish what the operator reports now: always when force, else at most
 * every XXL_PROGRESS_INTERVAL_MS.  Backend thread only.
 */
extern void xxl_progress_publish(struct XxlOperator *op, bool force);

/* The operator ended (however): its entry is free again. */
extern void xxl_progress_end(struct XxlOperator *op);

#endif							/* XXL_PG_PROGRESS_H */
