/*
 * numbering.h — the numbering worker of the graph operators' in-memory
 * input (paths, analytics): numbering ids through a hash table is random
 * memory access, so it runs on a second core (an xxl_pipe) while the
 * caller's thread reads the next edges from the host.  Records go through
 * in input order, so the numbering is the same as on one thread.
 *
 * While the worker runs, the caller's thread only hands it records and
 * polls the host (g_numbering_poll); the operator's budget, error and
 * in-memory state are the worker's until g_numbering_finish, and
 * g_numbering_stop ends it early, before the caller's thread records an
 * error, reads statistics or tears down what the worker may be using.
 */
#ifndef XXL_GRAPH_NUMBERING_H
#define XXL_GRAPH_NUMBERING_H

#include "core/xxl_env.h"
#include "core/xxl_pipe.h"

typedef struct g_numbering
{
	xxl_pipe   *pipe;			/* to the worker; NULL: none (any more) */
	bool		used;			/* a worker was started */
	uint64_t	wait_ns;		/* the caller waited for it */
	uint64_t	polls;
} g_numbering;

/*
 * A worker for records of record_size bytes, which fn numbers a batch at a
 * time (with arg), when there are two threads and the budget (memory) is
 * worth a pipe; a refusal only means numbering on the caller's thread.
 */
void		g_numbering_start(g_numbering *nb, xxl_env *env, size_t memory, size_t record_size,
							  xxl_pipe_fn fn, void *arg);

/* Room for len bytes of records; NULL on the worker's error (env->err set). */
static inline unsigned char *
g_numbering_space(g_numbering *nb, xxl_env *env, size_t len)
{
	return xxl_pipe_space(nb->pipe, len, &env->err);
}

/*
 * The caller's poll while the worker runs (the worker only sees the stop
 * flag): every XXL_ENV_POLL_MASK + 1 calls the host is asked; on a stop the
 * worker is stopped and the stop becomes env's error.  true: stopped.
 */
bool		g_numbering_poll(g_numbering *nb, xxl_env *env);

/* The end of the input: every record numbered, the worker gone. */
xxl_status	g_numbering_finish(g_numbering *nb, xxl_env *env);

/* Stop the worker if it runs, dropping what it has not numbered. */
void		g_numbering_stop(g_numbering *nb);

#endif							/* XXL_GRAPH_NUMBERING_H */
