/*
 * numbering.c — the graph operators' numbering worker (numbering.h).
 */
#include "core/graph/numbering.h"

void
g_numbering_start(g_numbering *nb, xxl_env *env, size_t memory, size_t record_size,
				  xxl_pipe_fn fn, void *arg)
{
	size_t		batch = xxl_pipe_batch_for(memory);
	xxl_error	err = {0};

	if (env->threads < 2 || batch == 0)
		return;
	nb->pipe = xxl_pipe_create(batch - batch % record_size, XXL_PIPE_BATCHES, fn, arg,
							   &env->budget, &err);
	nb->used = nb->pipe != NULL;
}

bool
g_numbering_poll(g_numbering *nb, xxl_env *env)
{
	if ((++nb->polls & XXL_ENV_POLL_MASK) != 0 || !xxl_env_host_stop(env))
		return false;
	g_numbering_stop(nb);
	xxl_env_canceled(env);
	return true;
}

xxl_status
g_numbering_finish(g_numbering *nb, xxl_env *env)
{
	if (nb->pipe == NULL)
		return XXL_OK;
	return xxl_pipe_finish(&nb->pipe, &nb->wait_ns, &env->err);
}

void
g_numbering_stop(g_numbering *nb)
{
	if (nb->pipe)
		xxl_pipe_destroy(nb->pipe);
	nb->pipe = NULL;
}
