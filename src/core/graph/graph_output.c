/*
 * graph_output.c — the pull interface of the graph operators: components
 * and forest edges handed out one by one, and release of what the output
 * held (graph_internal.h).
 */
#include "core/graph/graph_internal.h"

#include <math.h>
#include <stdlib.h>

/* Output ------------------------------------------------------------------ */

/* Everything but the statistics can go once the last row is out. */
void
graph_release_all(xxl_graph *g)
{
	xxl_env  *env = &g->env;

	xxl_spool_reader_close(&g->rd_in);
	xxl_spool_reader_close(&g->rd_map);
	xxl_spool_reader_close(&g->rd_aux);
	xxl_env_sort_close(env, &g->s1, NULL, NULL);
	graph_pairs_done(g);
	xxl_env_sort_close(env, &g->s3, NULL, NULL);
	xxl_env_sort_close(env, &g->s4, NULL, NULL);
	xxl_env_sort_close(env, &g->lsort, NULL, NULL);
	xxl_env_sort_close(env, &g->f1, NULL, NULL);
	xxl_env_sort_close(env, &g->f2, NULL, NULL);
	xxl_env_sort_close(env, &g->f3, NULL, NULL);
	xxl_env_sort_close(env, &g->fsort, NULL, NULL);
	xxl_env_queue_close(env, &g->pq);
	xxl_env_queue_close(env, &g->msg);
	xxl_spool_free(&g->input);
	xxl_spool_free(&g->map);
	xxl_spool_free(&g->info);
	xxl_spool_free(&g->log);
	xxl_spool_free(&g->forest);
	xxl_spool_free(&g->special);
	xxl_spool_free(&g->basereps);
	uf_free(g);
	graph_seen_close(g, &g->seen);
	if (g->present)
		xxl_env_free(env, g->present, g->present_bytes);
	g->present = NULL;
	graph_mem_release(g);
}

static int
finish_output(xxl_graph *g)
{
	if (g->op != XXL_GRAPH_CC)
		g->components = graph_nodes(g) - g->forest_edges;
	g->state = ST_DONE;
	graph_release_all(g);
	return 0;
}

static bool
check_output(xxl_graph *g, bool want_cc)
{
	if (g->state == ST_OUTPUT && (g->op == XXL_GRAPH_CC) == want_cc)
		return true;
	if (g->state == ST_DONE && (g->op == XXL_GRAPH_CC) == want_cc)
		return false;
	if (g->state == ST_INPUT)
		xxl_error_set(&g->env.err, XXL_EINVAL, 0, "xxl_graph_run must be called before reading");
	else if (g->state != ST_FAILED)
		xxl_error_set(&g->env.err, XXL_EINVAL, 0, "%s returns %s", want_cc ? "xxl_graph_next_node" :
					  "xxl_graph_next_edge", want_cc ? "edges" : "nodes");
	return false;
}

static int
next_node(xxl_graph *g, int64_t *node, int64_t *component)
{
	xxl_env  *env = &g->env;
	const unsigned char *p;

	if (g->out == OUT_CC_BY_ID)
	{
		const uint32_t *parent = g->idm.direct;

		while (g->out_pos < g->idm.dcap && parent[g->out_pos] == IDMAP_NONE)
			g->out_pos++;
		if (g->out_pos == g->idm.dcap)
			return finish_output(g);
		*node = (int64_t) g->out_pos;
		*component = parent[g->out_pos];
		g->components += *component == *node;
		g->out_pos++;
	}
	else if (g->out == OUT_CC_SPLIT)
	{
		int			rc = graph_split_next_node(g, node, component);

		if (rc <= 0)
			return rc < 0 ? -1 : finish_output(g);
		g->components += *component == *node;
	}
	else if (g->out == OUT_CC_SEMI)
	{
		uint64_t	v = g->out_pos,
					r;
		int64_t		orig;

		if (v == g->n)
			return finish_output(g);
		if (g->mem_ids)
			orig = g->mem_ids[v];
		else if (xxl_spool_read(&g->rd_map, 8, &p) != XXL_OK)
			return -1;
		else
			orig = (int64_t) g_get_u64(p);
		r = g->parent[v];
		/* a root's slot takes its original id: its members come later */
		if (r == v)
		{
			g->parent[v] = (uint64_t) orig;
			g->components++;
			*component = orig;
		}
		else
			*component = (int64_t) g->parent[r];
		*node = orig;
		g->out_pos++;
	}
	else
	{
		const unsigned char *s;
		int			got = xxl_env_sort_next(env, &g->f3, &s);

		if (got < 0)
			return -1;
		if (got == 0)
			return finish_output(g);
		if (g_get_be(s) != g->out_pos)
		{
			xxl_error_set(&env->err, XXL_EIO, 0, "node %llu lost in the component expansion",
						  (unsigned long long) g->out_pos);
			return -1;
		}
		if (xxl_spool_read(&g->rd_map, 8, &p) != XXL_OK)
			return -1;
		*node = (int64_t) g_get_u64(p);
		*component = (int64_t) g_get_u64(s + 8);
		g->out_pos++;
	}
	if (poll_canceled(g))
		return -1;
	return 1;
}

int
xxl_graph_next_node(xxl_graph *g, int64_t *node, int64_t *component)
{
	int			rc;

	if (!check_output(g, true))
		return g->state == ST_DONE ? 0 : -(int) gfail(g);
	gout_clock_row(&g->out_clock);
	rc = next_node(g, node, component);
	if (rc == 0)
		gout_clock_end(&g->out_clock);
	if (rc < 0)
		return -(int) gfail(g);
	return rc;
}

static int
next_edge(xxl_graph *g, int64_t *id, int64_t *source, int64_t *target, double *cost)
{
	xxl_env  *env = &g->env;

	for (;;)
	{
		if (poll_canceled(g))
			return -1;
		if (g->out == OUT_SF_MEM || g->out == OUT_MSF_MEM)
		{
			int			got = graph_mem_next_edge(g, id, source, target, cost);

			if (got == 0)
				return finish_output(g);
			return 1;
		}
		else if (g->out == OUT_SF_MAPPED || g->out == OUT_MSF_MAPPED)
		{
			int			got = graph_mapped_next_edge(g, id, source, target, cost);

			return got == 0 ? finish_output(g) : got;
		}
		else if (g->out == OUT_FOREST_PARTS)
		{
			int			got = graph_parts_next_edge(g, id, source, target, cost);

			return got == 0 ? finish_output(g) : got;
		}
		else if (g->out == OUT_SF_SEMI)
		{
			uint64_t	e,
						du,
						dv;
			const unsigned char *io;
			int			got = graph_next_pair(g, &e, &du, &dv);

			if (got <= 0)
				return got < 0 ? -1 : finish_output(g);
			if (xxl_spool_read(&g->rd_in, IO_REC, &io) != XXL_OK)
				return -1;
			if (graph_uf_union(g, du, dv))
			{
				g_get_edge_rec(io, source, target, id, cost);
				return 1;
			}
		}
		else if (g->out == OUT_MSF_SEMI)
		{
			const unsigned char *s;
			int			got = xxl_env_sort_next(env, &g->s3, &s);

			if (got <= 0)
				return got < 0 ? -1 : finish_output(g);
			if (graph_uf_union(g, g_get_u64(s + 16), g_get_u64(s + 24)))
			{
				*cost = g_key_cost(g_get_be(s));
				*id = g_key_id(g_get_be(s + 8));
				graph_kruskal_ends(g, s, source, target);
				return 1;
			}
		}
		else
		{
			const unsigned char *s,
					   *io = NULL;
			uint64_t	want;
			int			got = xxl_env_sort_next(env, &g->fsort, &s);

			if (got <= 0)
				return got < 0 ? -1 : finish_output(g);
			want = g_get_be(s);
			if (want < g->out_pos)
			{
				xxl_error_set(&env->err, XXL_EIO, 0, "forest edge %llu repeated",
							  (unsigned long long) want);
				return -1;
			}
			while (g->out_pos <= want)
			{
				if (xxl_spool_read(&g->rd_in, IO_REC, &io) != XXL_OK)
					return -1;
				g->out_pos++;
			}
			g_get_edge_rec(io, source, target, id, cost);
			return 1;
		}
	}
}

int
xxl_graph_next_edge(xxl_graph *g, int64_t *id, int64_t *source, int64_t *target, double *cost)
{
	int			rc;

	if (!check_output(g, false))
		return g->state == ST_DONE ? 0 : -(int) gfail(g);
	gout_clock_row(&g->out_clock);
	rc = next_edge(g, id, source, target, cost);
	if (rc == 0)
		gout_clock_end(&g->out_clock);
	if (rc < 0)
		return -(int) gfail(g);
	if (rc > 0)
		g->forest_edges++;
	return rc;
}

