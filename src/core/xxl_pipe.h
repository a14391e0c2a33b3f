/*
 * xxl_pipe.h — a one-way batch pipe to a worker thread: the caller appends
 * bytes (records, in its own format) to the current batch, full batches go
 * to a worker that hands each to a function, in order; the caller goes on
 * filling the next batch meanwhile.  For operators whose consumer of records
 * (a distribution, a permutation) can run next to their producer on a
 * second core.
 *
 * The worker never calls back into the caller: the batch function must not
 * poll a cancel hook or allocate from a budget the caller also uses.  The
 * first error the function returns stops the pipe; it is reported by the
 * next xxl_pipe_space / xxl_pipe_drain.  The worker starts with every signal
 * blocked.
 */
#ifndef XXL_PIPE_H
#define XXL_PIPE_H

#include "core/xxl_common.h"

/* Consume one batch of len bytes; XXL_OK or an error (with *err set). */
typedef xxl_status (*xxl_pipe_fn) (void *arg, const unsigned char *batch, size_t len,
								   xxl_error *err);

typedef struct xxl_pipe xxl_pipe;

/*
 * Sizing for an operator of `memory` bytes that would hand its records to a
 * worker: XXL_PIPE_BATCHES batches of the returned size take at most an
 * eighth of the memory (batches up to 256 kB); 0 where a batch would be
 * under 64 kB: there the hand-overs cost more than the second core gains.
 */
#define XXL_PIPE_BATCHES 2
size_t		xxl_pipe_batch_for(size_t memory);

/* nbatches >= 2 buffers of batch_bytes from the budget, one worker thread. */
xxl_pipe   *xxl_pipe_create(size_t batch_bytes, int nbatches, xxl_pipe_fn fn, void *arg,
							xxl_budget *budget, xxl_error *err);

/*
 * The caller's bytes are staged in a buffer of this size on their way into
 * the batch; room asked for at once beyond it is written in place, slower.
 * Callers with many records at hand ask for up to this much at a time.
 */
#define XXL_PIPE_STAGE_BYTES 4096

/*
 * Room for len bytes (len <= batch_bytes) at the end of the current batch,
 * which is handed over first if it has not that much room left; NULL on an
 * error (in *err), the worker's included.  The bytes belong to the batch at
 * once: write them before the next call.
 */
unsigned char *xxl_pipe_space(xxl_pipe *p, size_t len, xxl_error *err);

/* Hand over what was written and wait until the worker has consumed it all. */
xxl_status	xxl_pipe_drain(xxl_pipe *p, xxl_error *err);

/* Stops the worker (what is not handed over is dropped), frees the batches. */
void		xxl_pipe_destroy(xxl_pipe *p);

/*
 * The end of a pipe's input: drain, add the time the caller waited to
 * *wait_ns, destroy, *p = NULL.  Returns the drain's status.
 */
xxl_status	xxl_pipe_finish(xxl_pipe **p, uint64_t *wait_ns, xxl_error *err);

/* Nanoseconds the caller waited for a free batch (the worker was behind). */
uint64_t	xxl_pipe_wait_ns(const xxl_pipe *p);

#endif							/* XXL_PIPE_H */
