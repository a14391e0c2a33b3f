/*
 * analytics_tfp.c — maximal independent set and greedy coloring by
 * time-forward processing (thesis §4.2 Listing 4.1, §4.7 Fig. 4.7): the
 * nodes of the symmetric stream S in ascending id order, each with its
 * neighbours; what a node tells its larger neighbours waits in the
 * external priority queue under the neighbour's id until that node comes.
 *
 *  - MIS: queue records [node BE] mean "a smaller neighbour joined".  A node
 *    joins when none waits for it, and then tells its larger neighbours.
 *    Independent: of two neighbours the larger hears of the smaller.
 *    Maximal: a node left out had a neighbour that joined.  The result is
 *    the lexicographically first MIS, the same on every path.
 *  - Coloring: queue records [node BE][color BE] are the colors of a
 *    node's smaller neighbours; they come in color order, so the smallest
 *    missing color is found while popping them.  At most (number of smaller
 *    neighbours + 1) <= max degree + 1 colors.
 * The pass is the output: each node's row is made when it is reached.
 */
#include "core/graph/analytics_internal.h"

xxl_status
an_tfp_start(xxl_an *a)
{
	if (xxl_env_queue_open(&a->env, &a->pq, an_sort_share(a), a->op == XXL_AN_MIS ? 8 : 16,
						   a->op == XXL_AN_MIS ? 8 : 16) != XXL_OK)
		return an_fail(a);
	return an_cursor_start(a);
}

/* Pop what waits for nodes before u; MIS: whether u is excluded, coloring: u's color. */
static int
take_messages(xxl_an *a, int64_t u, uint64_t *color)
{
	uint64_t	uk = g_id_key(u),
				c = 1;
	bool		hit = false;
	const unsigned char *r;
	int			got;

	while ((got = xxl_env_queue_top(&a->env, &a->pq, &r)) == 1)
	{
		uint64_t	k = g_get_be(r);

		if (k > uk)
			break;
		if (k == uk)
		{
			hit = true;
			if (a->op == XXL_AN_COLORING)
			{
				uint64_t	got_c = g_get_be(r + 8);

				/* colors come ascending, maybe repeated */
				if (got_c == c)
					c++;
			}
		}
		if (xxl_env_queue_pop(&a->env, &a->pq, NULL) < 0)
			return -1;
	}
	if (got < 0)
		return -1;
	*color = c;
	return hit ? 1 : 0;
}

int
an_tfp_next(xxl_an *a, xxl_an_row *row)
{
	while (a->cur.has)
	{
		int64_t		u = a->cur.u;
		uint64_t	color = 0,
					deg = 0;
		int			hit = take_messages(a, u, &color);
		bool		emit = a->op == XXL_AN_COLORING || hit == 0;
		unsigned char r[16];

		if (hit < 0)
			return -1;
		a->n++;
		g_put_be(r + 8, color);
		for (; a->cur.has && a->cur.u == u;)
		{
			int64_t		v = a->cur.v;

			if (v != u)
			{
				deg++;
				if (emit && v > u)
				{
					g_put_be(r, g_id_key(v));
					if (xxl_env_queue_push(&a->env, &a->pq, r) != XXL_OK)
						return -1;
					a->pushes++;
				}
			}
			if (an_cursor_advance(a) != XXL_OK)
				return -1;
		}
		if (deg > a->max_degree)
			a->max_degree = deg;
		if (!emit)
			continue;
		row->v[0] = u;
		if (a->op == XXL_AN_COLORING)
		{
			row->v[1] = (int64_t) color;
			if (color > a->colors)
				a->colors = color;
		}
		else
			a->set_size++;
		return 1;
	}
	return 0;
}
