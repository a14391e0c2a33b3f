/*
 * analytics.c — the analytics operators (xxl_analytics.h): creation, the
 * input of undirected edges into the symmetric stream S (both orientations,
 * self loops as node marks), reading S back without duplicates, the
 * dispatch to each operation's passes, the pull interface, statistics and
 * teardown.
 */
#include "core/graph/analytics_internal.h"

#include <math.h>

size_t
xxl_an_min_memory(void)
{
	return xxl_graph_min_memory();
}

xxl_an *
xxl_an_create(const xxl_an_config *config, xxl_error *err)
{
	xxl_an	   *a;

	if (config->op == XXL_AN_PAGERANK &&
		(isnan(config->damping) || config->damping < 0 || config->damping > 1 ||
		 config->max_iterations < 0 || isnan(config->tolerance) || config->tolerance < 0))
	{
		xxl_error_set(err, XXL_EINVAL, 0, "invalid PageRank configuration");
		return NULL;
	}
	a = xxl_env_new_object(&config->res, &graph_plan, sizeof(*a), offsetof(xxl_an, env), err);
	if (a == NULL)
		return NULL;
	a->op = config->op;
	a->expected_edges = config->expected_edges;
	a->damping = config->damping;
	a->tolerance = config->tolerance;
	a->max_iterations = config->max_iterations;
	a->force_external = config->force_external;
	a->rank_range_nodes = config->rank_range_nodes;
	a->tri_chunk_lists = config->tri_chunk_lists;
	a->t_start = xxl_now_ns();
	xxl_spool_init(&a->deg, &a->env, an_spool_share(a));
	xxl_spool_init(&a->edges, &a->env, an_spool_share(a));
	xxl_spool_init(&a->tris, &a->env, an_spool_share(a));

	if ((an_mem_wanted(a) ? an_mem_start(a) :
		 config->op == XXL_AN_PAGERANK ? an_rank_open(a) : an_open_sym(a)) != XXL_OK)
	{
		xxl_error_set(err, a->env.err.code, a->env.err.sys_errno, "%s", a->env.err.message);
		xxl_an_destroy(a);
		return NULL;
	}
	return a;
}

xxl_status
an_open_sym(xxl_an *a)
{
	return xxl_env_sort_open(&a->env, &a->s, an_sort_share(a), 0, 16, 16, 2 * a->expected_edges,
							 XXL_INPUT_UNBOUNDED);
}

static xxl_status
put_sym(xxl_an *a, int64_t u, int64_t v)
{
	unsigned char r[16];

	g_put_be(r, g_id_key(u));
	g_put_be(r + 8, g_id_key(v));
	return xxl_env_sort_put(&a->env, &a->s, r);
}

xxl_status
xxl_an_put_edge(xxl_an *a, int64_t source, int64_t target, double weight)
{
	if (a->state != AN_INPUT)
	{
		if (a->env.err.code != XXL_OK)
			return a->env.err.code;
		xxl_error_set(&a->env.err, XXL_EINVAL, 0, "edge put after run");
		return an_fail(a);
	}
	a->m++;
	if (a->op == XXL_AN_PAGERANK && (isnan(weight) || weight < 0 || isinf(weight)))
	{
		g_numbering_stop(&a->numbering);
		xxl_error_set(&a->env.err, XXL_EINVAL, 0,
					  "a weight must be a finite number >= 0, not %g (edge %llu)", weight,
					  (unsigned long long) a->m);
		return an_fail(a);
	}
	if (source == target)
		a->self_loops++;
	/* with the numbering worker, only it knows whether the edges went external */
	if (a->numbering.pipe || a->in_memory)
		return an_mem_put(a, source, target, weight) == XXL_OK ? XXL_OK : an_fail(a);
	a->numbered++;
	if ((a->op == XXL_AN_PAGERANK ? an_rank_put(a, a->m - 1, source, target, weight) :
		 an_put_edge_sym(a, source, target)) != XXL_OK || xxl_env_poll(&a->env))
		return an_fail(a);
	return XXL_OK;
}

xxl_status
an_put_edge_sym(xxl_an *a, int64_t u, int64_t v)
{
	if (u == v)
		return put_sym(a, u, u);
	if (put_sym(a, u, v) != XXL_OK)
		return a->env.err.code;
	return put_sym(a, v, u);
}

/* Arrays of the budget ---------------------------------------------------------- */

void *
an_alloc(xxl_an *a, size_t bytes, size_t *held)
{
	void	   *p = xxl_env_alloc(&a->env, bytes ? bytes : 1);

	*held = p ? (bytes ? bytes : 1) : 0;
	return p;
}

void
an_free(xxl_an *a, void **p, size_t *held)
{
	if (*p)
		xxl_env_free(&a->env, *p, *held);
	*p = NULL;
	*held = 0;
}

/* The symmetric stream ------------------------------------------------------- */

int
an_s_next(xxl_an *a, int64_t *u, int64_t *v)
{
	const unsigned char *r;
	int			got;

	while ((got = xxl_env_sort_next(&a->env, &a->s, &r)) == 1)
	{
		if (a->s_has_prev && memcmp(r, a->s_prev, 16) == 0)
			continue;
		memcpy(a->s_prev, r, 16);
		a->s_has_prev = true;
		*u = g_key_id(g_get_be(r));
		*v = g_key_id(g_get_be(r + 8));
		if (*u != *v)
			a->links++;
		return 1;
	}
	return got;
}

xxl_status
an_cursor_advance(xxl_an *a)
{
	int			got = an_s_next(a, &a->cur.u, &a->cur.v);

	if (got < 0)
		return an_fail(a);
	a->cur.has = got == 1;
	if (xxl_env_poll(&a->env))
		return an_fail(a);
	return XXL_OK;
}

xxl_status
an_cursor_start(xxl_an *a)
{
	if (xxl_env_sort_sort(&a->env, &a->s) != XXL_OK)
		return an_fail(a);
	a->s_sorted = true;
	return an_cursor_advance(a);
}

/* Run and pull ---------------------------------------------------------------- */

xxl_status
xxl_an_run(xxl_an *a)
{
	xxl_status	rc;

	if (a->state != AN_INPUT)
	{
		if (a->env.err.code == XXL_OK)
			xxl_error_set(&a->env.err, XXL_EINVAL, 0, "run called twice");
		return an_fail(a);
	}
	if ((a->numbering.pipe || a->in_memory) && an_mem_run(a) != XXL_OK)
		return an_fail(a);
	switch (a->in_memory ? -1 : (int) a->op)
	{
		case -1:
			rc = XXL_OK;
			break;
		case XXL_AN_MIS:
		case XXL_AN_COLORING:
			rc = an_tfp_start(a);
			break;
		case XXL_AN_PAGERANK:
			rc = an_rank_run(a);
			break;
		default:
			rc = an_tri_run(a);
			break;
	}
	a->run_ns = xxl_now_ns() - a->t_start;
	if (rc != XXL_OK)
		return an_fail(a);
	a->state = AN_OUTPUT;
	return XXL_OK;
}

int
xxl_an_next(xxl_an *a, xxl_an_row *row)
{
	int			got;

	if (a->state == AN_DONE)
		return 0;
	if (a->state != AN_OUTPUT)
	{
		if (a->env.err.code == XXL_OK)
			xxl_error_set(&a->env.err, XXL_EINVAL, 0, "rows pulled before run");
		an_fail(a);
		return -1;
	}
	gout_clock_row(&a->out_clock);
	memset(row, 0, sizeof(*row));
	switch (a->in_memory ? -1 : (int) a->op)
	{
		case -1:
			got = an_mem_next(a, row);
			break;
		case XXL_AN_MIS:
		case XXL_AN_COLORING:
			got = an_tfp_next(a, row);
			break;
		case XXL_AN_PAGERANK:
			got = an_rank_next(a, row);
			break;
		default:
			got = an_tri_next(a, row);
			break;
	}
	if (got < 0)
	{
		an_fail(a);
		return -1;
	}
	if (got == 0)
	{
		gout_clock_end(&a->out_clock);
		a->state = AN_DONE;
	}
	return got;
}

const xxl_error *
xxl_an_error(const xxl_an *a)
{
	return &a->env.err;
}

void
xxl_an_stats_get(xxl_an *a, xxl_an_stats *st)
{
	const xxl_env *env = &a->env;

	/* (an input stopped by the host leaves the worker running) */
	g_numbering_stop(&a->numbering);
	uint64_t	wait;
	bool		direct;
	xxl_io_stats open_io;

	memset(st, 0, sizeof(*st));
	st->op = a->op;
	st->edges = a->m;
	st->self_loops = a->self_loops;
	st->nodes = a->n;
	st->links = a->links;
	st->duplicates = a->op == XXL_AN_PAGERANK || a->m < a->self_loops ? 0 :
		a->m - a->self_loops > a->links / 2 ? a->m - a->self_loops - a->links / 2 : 0;
	st->max_degree = a->max_degree;
	st->triangles = a->triangles;
	st->queries = a->queries;
	st->max_out_degree = a->max_out;
	st->set_size = a->set_size;
	st->colors = a->colors;
	st->iterations = a->iterations;
	st->delta = a->delta;
	st->converged = a->converged;
	st->dangling = a->dangling;
	st->method = a->stream_lists ? "streamed" : a->op != XXL_AN_PAGERANK || a->n == 0 ? "" :
		a->rank_streamed ? "streamed" : a->rank_arrays ? "arrays" : a->rank_ranges ? "ranged" : "sorted";
	st->ranges = a->op == XXL_AN_PAGERANK ? a->rank_ranges : a->tri_ranges;
	st->numbering_worker = a->numbering.used;
	st->numbering_wait_ns = a->numbering.wait_ns;
	st->pq_pushes = a->pushes;
	st->sorts = env->done.sorts;
	st->sorted_bytes = env->done.sorted_bytes;
	xxl_env_io(env, &st->io);
	xxl_env_io_sum(env, &st->bytes_read, &st->bytes_written, &wait, &direct);
	/* parts still open (the last pass runs while pulling) */
	memset(&open_io, 0, sizeof(open_io));
	xxl_env_sort_io(&a->s, &open_io);
	xxl_env_sort_io(&a->q, &open_io);
	xxl_env_sort_io(&a->c, &open_io);
	xxl_env_queue_io(&a->pq, &open_io);
	for (int i = 0; i < open_io.ndisks; i++)
	{
		st->bytes_read += open_io.disk[i].bytes_read;
		st->bytes_written += open_io.disk[i].bytes_written;
	}
	xxl_io_fold(&st->io, &open_io);
	st->path = a->semi ? "semi-external" : a->in_memory ? "in-memory" : st->bytes_written == 0 && a->deg.on_disk == false && a->edges.on_disk == false ?
		"in-memory" : "external";
	st->memory_peak = xxl_env_used_peak(env);
	st->memory_held = env->budget.used;
	st->memory_limit = env->budget.limit;
	st->run_ns = a->run_ns;
	st->build_ns = a->build_ns;
	st->compute_ns = a->compute_ns;
	st->output_ns = gout_clock_ns(&a->out_clock);
}

void
xxl_an_destroy(xxl_an *a)
{
	xxl_budget	budget;

	if (a == NULL)
		return;
	/* the worker first: it may still be using the parts below */
	g_numbering_stop(&a->numbering);
	an_mem_release(a);
	an_tri_release(a);
	an_rank_release(a);
	xxl_env_queue_close(&a->env, &a->pq);
	xxl_env_sort_close(&a->env, &a->s, NULL, NULL);
	xxl_env_close(&a->env);
	budget = a->env.budget;
	xxl_budget_free(&budget, a, sizeof(*a));
}
