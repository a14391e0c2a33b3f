/*
 * xxl_ahead.h — a producer that runs ahead of its consumer on a worker
 * thread: the worker fills a ring of batches (slots charged to the
 * environment's budget) with a fill function while the caller takes the
 * batches in order.  For an operator whose output (a merge, a permutation
 * being read back) costs as much as what its host does with each item: the
 * two then share the cores.
 *
 * The fill function runs on the worker alone from the start on: the parts
 * it reads are its own until xxl_ahead_stop, it records its errors in the
 * environment (the caller reads them only once the worker has ended), and
 * its cancel polls see only the environment's stop flag, which
 * xxl_ahead_next sets when the host asks to stop (xxl_env_host_stop) — at
 * every batch and while it waits for one.  From then on xxl_ahead_next
 * ends the worker and hands out nothing more (-1, XXL_ECANCELED), even
 * batches already filled.
 */
#ifndef XXL_AHEAD_H
#define XXL_AHEAD_H

#include "core/xxl_env.h"

/* Fill one slot: the items in it, 0 at the end, < 0 on an error (in the environment). */
typedef int64_t (*xxl_ahead_fill) (void *arg, void *slot);

typedef struct xxl_ahead xxl_ahead;

#define XXL_AHEAD_SLOTS_MIN 2
#define XXL_AHEAD_SLOTS_MAX 16

/*
 * Start the worker with up to slots_max slots of slot_bytes, as many as the
 * budget has room for (at least XXL_AHEAD_SLOTS_MIN).  NULL where it does
 * not pay (one thread) or fit: the caller fills the slots itself then.
 */
xxl_ahead  *xxl_ahead_start(xxl_env *env, size_t slot_bytes, int slots_max, xxl_ahead_fill fill,
							void *arg);

/* Slots in the ring (for statistics). */
int			xxl_ahead_slots(const xxl_ahead *a);

/*
 * The next batch: *slot points at its items (valid until the next call).
 * Returns the fill function's count: 0 at the end, < 0 on an error.
 */
int64_t		xxl_ahead_next(xxl_env *env, xxl_ahead *a, const void **slot);

/* Stop the worker after the batch it fills and free everything; NULL is fine. */
void		xxl_ahead_stop(xxl_env *env, xxl_ahead *a);

#endif							/* XXL_AHEAD_H */
