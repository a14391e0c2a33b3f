/*
 * analytics_rank_external.c — PageRank's iterations when the links do not
 * fit arrays (see analytics_rank.c for the whole design): the links sorted
 * by source into a spool with the out-weights beside them; each iteration
 * a merge of ranks, out-weights and links, or, for several ranges of
 * targets, ranged iterations that keep one range's sums in memory, or a
 * sort of the contributions by target when ranges would read the nodes
 * too often.
 */
#include "core/graph/analytics_rank_internal.h"

#include <math.h>

void
rank_drop_link_input(xxl_an *a)
{
	an_rank    *k = a->rank;

	xxl_env_sort_close(&a->env, &k->s2, NULL, NULL);
	if (k->rd_w_open)
		xxl_spool_reader_close(&k->rd_w);
	k->rd_w_open = false;
	xxl_spool_free(&k->weights);
}

static xxl_status
sort_links(xxl_an *a)
{
	an_rank    *k = a->rank;
	uint64_t	e,
				du,
				dv,
				x = 0;
	int			got;
	const unsigned char *r;
	double		wsum = 0;
	bool		have = false;

	if (xxl_env_sort_open(&a->env, &k->es, an_sort_share(a), 0, 24, 8, a->m,
						  XXL_INPUT_UNBOUNDED) != XXL_OK)
		return an_fail(a);
	while ((got = graph_next_dense_pair(&a->env, &k->s2, &e, &du, &dv, NULL)) == 1)
	{
		unsigned char local[24];
		unsigned char *rec = xxl_env_sort_room(&k->es, local);
		double		w;

		if (rank_next_weight(a, &w) != XXL_OK)
			return an_fail(a);
		g_put_be(rec, du);
		g_put_u64(rec + 8, dv);
		memcpy(rec + 16, &w, 8);
		if (xxl_env_sort_push(&a->env, &k->es, rec) != XXL_OK || xxl_env_poll(&a->env))
			return an_fail(a);
	}
	if (got < 0)
		return an_fail(a);
	rank_drop_link_input(a);
	if (xxl_env_sort_sort(&a->env, &k->es) != XXL_OK)
		return an_fail(a);
	/* the links in source order, and every node's out-weight (0: dangling) */
	while ((got = xxl_env_sort_next(&a->env, &k->es, &r)) == 1)
	{
		uint64_t	u = g_get_be(r);
		double		w;
		unsigned char rec[24];

		memcpy(&w, r + 16, 8);
		if (have && u != x)
		{
			if (xxl_spool_write(&k->outw, &wsum, 8) != XXL_OK)
				return an_fail(a);
			x++;
			wsum = 0;
		}
		for (; x < u; x++)
		{
			double		zero = 0;

			if (xxl_spool_write(&k->outw, &zero, 8) != XXL_OK)
				return an_fail(a);
		}
		have = true;
		wsum += w;
		g_put_u64(rec, u);
		memcpy(rec + 8, r + 8, 16);
		if (xxl_spool_write(&k->links, rec, 24) != XXL_OK || xxl_env_poll(&a->env))
			return an_fail(a);
	}
	if (got < 0)
		return an_fail(a);
	if (have)
	{
		if (xxl_spool_write(&k->outw, &wsum, 8) != XXL_OK)
			return an_fail(a);
		x++;
	}
	for (; x < a->n; x++)
	{
		double		zero = 0;

		if (xxl_spool_write(&k->outw, &zero, 8) != XXL_OK)
			return an_fail(a);
	}
	xxl_env_sort_close(&a->env, &k->es, NULL, NULL);
	if (xxl_spool_finish(&k->links) != XXL_OK || xxl_spool_finish(&k->outw) != XXL_OK)
		return an_fail(a);
	return XXL_OK;
}

/* The spool an iteration writes its new ranks to, emptied. */
static xxl_spool *
next_ranks(xxl_an *a)
{
	an_rank    *k = a->rank;
	xxl_spool  *next = &k->ranks[!k->cur];

	xxl_spool_free(next);
	xxl_spool_init(next, &a->env, rank_spool_share(a));
	return next;
}

/* An iteration's end: its new ranks become r, the old ones are freed. */
static void
ranks_advance(xxl_an *a)
{
	an_rank    *k = a->rank;

	xxl_spool_free(&k->ranks[k->cur]);
	xxl_spool_init(&k->ranks[k->cur], &a->env, rank_spool_share(a));
	k->cur = !k->cur;
}

/* Close rd if *open, and note it closed. */
static void
close_reader(xxl_spool_reader *rd, bool *open)
{
	if (*open)
		xxl_spool_reader_close(rd);
	*open = false;
}

/* One external iteration: r (the uniform start, or ranks[cur]) to ranks[!cur]. */
static xxl_status
iterate_external_once(xxl_an *a, bool first, double *delta_out)
{
	an_rank    *k = a->rank;
	uint64_t	n = a->n;
	double		d = a->damping,
				dang = 0,
				base,
				delta = 0,
				start = 1.0 / (double) n;
	xxl_spool_reader rr,
				rw,
				rl;
	bool		rr_open = false,
				rw_open = false,
				rl_open = false;
	const unsigned char *lrec = NULL;
	uint64_t	lu = UINT64_MAX,
				dangling = 0;
	xxl_status	rc = XXL_OK;
	const unsigned char *c;
	int			got;
	bool		c_have = false;
	uint64_t	cv = 0;
	double		cval = 0;
	xxl_spool  *next;

	if (xxl_env_sort_open(&a->env, &k->cs, an_sort_share(a), 0, 16, 8, a->m,
						  XXL_INPUT_UNBOUNDED) != XXL_OK)
		return an_fail(a);
	if ((!first && (rc = xxl_spool_reader_open(&rr, &k->ranks[k->cur], false)) != XXL_OK) ||
		(rc = xxl_spool_reader_open(&rw, &k->outw, false)) != XXL_OK)
		goto out;
	rr_open = !first;
	rw_open = true;
	if ((rc = xxl_spool_reader_open(&rl, &k->links, false)) != XXL_OK)
		goto out;
	rl_open = true;
	if (k->links.nbytes > 0)
	{
		if ((rc = xxl_spool_read(&rl, 24, &lrec)) != XXL_OK)
			goto out;
		lu = g_get_u64(lrec);
	}
	/* scatter: ranks, out-weights and links in node order */
	for (uint64_t x = 0; x < n; x++)
	{
		double		r = start,
					w;

		if ((!first && (rc = rank_read_double(a, &rr, &r)) != XXL_OK) ||
			(rc = rank_read_double(a, &rw, &w)) != XXL_OK)
			goto out;
		if (w == 0)
		{
			dang += r;
			dangling++;
		}
		while (lu == x)
		{
			double		lw,
						v;
			unsigned char local[16];
			unsigned char *rec = xxl_env_sort_room(&k->cs, local);

			memcpy(&lw, lrec + 16, 8);
			v = r * lw / w;
			g_put_be(rec, g_get_u64(lrec + 8));
			memcpy(rec + 8, &v, 8);
			if ((rc = xxl_env_sort_push(&a->env, &k->cs, rec)) != XXL_OK)
				goto out;
			if (rl.left == 0 && rl.avail == 0)
				lu = UINT64_MAX;
			else
			{
				if ((rc = xxl_spool_read(&rl, 24, &lrec)) != XXL_OK)
					goto out;
				lu = g_get_u64(lrec);
			}
		}
		if (xxl_env_poll(&a->env))
		{
			rc = a->env.err.code;
			goto out;
		}
	}
	a->dangling = dangling;
	close_reader(&rl, &rl_open);
	close_reader(&rw, &rw_open);
	if ((rc = xxl_env_sort_sort(&a->env, &k->cs)) != XXL_OK)
		goto out;
	/* gather: the contributions by target, with the old ranks for the change */
	close_reader(&rr, &rr_open);
	if (!first)
	{
		if ((rc = xxl_spool_reader_open(&rr, &k->ranks[k->cur], true)) != XXL_OK)
			goto out;
		rr_open = true;
	}
	base = (1.0 - d) / (double) n + d * dang / (double) n;
	next = next_ranks(a);
	for (uint64_t x = 0; x < n; x++)
	{
		double		sum = 0,
					old = start,
					nw;

		for (;;)
		{
			if (!c_have)
			{
				got = xxl_env_sort_next(&a->env, &k->cs, &c);
				if (got < 0)
				{
					rc = a->env.err.code;
					goto out;
				}
				if (got == 0)
					break;
				c_have = true;
				cv = g_get_be(c);
				memcpy(&cval, c + 8, 8);
			}
			if (cv != x)
				break;
			sum += cval;
			c_have = false;
		}
		if (!first && (rc = rank_read_double(a, &rr, &old)) != XXL_OK)
			goto out;
		nw = base + d * sum;
		delta += fabs(nw - old);
		if ((rc = xxl_spool_write(next, &nw, 8)) != XXL_OK)
			goto out;
		if (xxl_env_poll(&a->env))
		{
			rc = a->env.err.code;
			goto out;
		}
	}
	if ((rc = xxl_spool_finish(next)) != XXL_OK)
		goto out;
out:
	close_reader(&rr, &rr_open);
	close_reader(&rw, &rw_open);
	close_reader(&rl, &rl_open);
	xxl_env_sort_close(&a->env, &k->cs, NULL, NULL);
	if (rc != XXL_OK)
		return an_fail(a);
	ranks_advance(a);
	*delta_out = delta;
	return XXL_OK;
}

/*
 * Targets per range of the ranged iterations: as many sums (8 bytes each)
 * as the sorter's share holds, which they stand in for; 0 (sort the
 * contributions instead) when a test asks, or when the ranges would read
 * the ranks and out-weights (16 bytes per node) again more often than a
 * sort of the links' contributions costs: more than 8 links' worth per
 * extra range.
 */
static uint64_t
range_width(const xxl_an *a)
{
	uint64_t	width = an_sort_share(a) / sizeof(double),
				ranges;

	if (a->rank_range_nodes == UINT64_MAX || a->n == 0)
		return 0;
	if (a->rank_range_nodes != 0 && a->rank_range_nodes < width)
		width = a->rank_range_nodes;
	if (width == 0)
		return 0;
	ranges = (a->n + width - 1) / width;
	if (a->rank_range_nodes == 0 && (ranges - 1) * a->n > 8 * a->m)
		return 0;
	return width;
}

/*
 * The links spool (source order) rewritten in (target range, source)
 * order, for more than one range: one sort, once.
 */
static xxl_status
order_links_by_range(xxl_an *a, uint64_t width)
{
	an_rank    *k = a->rank;
	xxl_spool_reader rd;
	const unsigned char *r;
	int			got;

	if (xxl_env_sort_open(&a->env, &k->es, an_sort_share(a), 0, 32, 16, a->m,
						  XXL_INPUT_UNBOUNDED) != XXL_OK ||
		xxl_spool_reader_open(&rd, &k->links, true) != XXL_OK)
		return an_fail(a);
	for (uint64_t i = 0, links = k->links.nbytes / 24; i < links; i++)
	{
		unsigned char local[32];
		unsigned char *rec = xxl_env_sort_room(&k->es, local);

		if (xxl_spool_read(&rd, 24, &r) != XXL_OK)
		{
			xxl_spool_reader_close(&rd);
			return an_fail(a);
		}
		g_put_be(rec, g_get_u64(r + 8) / width);
		g_put_be(rec + 8, g_get_u64(r));
		memcpy(rec + 16, r + 8, 16);
		if (xxl_env_sort_push(&a->env, &k->es, rec) != XXL_OK || xxl_env_poll(&a->env))
		{
			xxl_spool_reader_close(&rd);
			return an_fail(a);
		}
	}
	xxl_spool_reader_close(&rd);
	xxl_spool_free(&k->links);
	xxl_spool_init(&k->links, &a->env, rank_spool_share(a));
	if (xxl_env_sort_sort(&a->env, &k->es) != XXL_OK)
		return an_fail(a);
	while ((got = xxl_env_sort_next(&a->env, &k->es, &r)) == 1)
	{
		unsigned char rec[24];

		g_put_u64(rec, g_get_be(r + 8));
		memcpy(rec + 8, r + 16, 16);
		if (xxl_spool_write(&k->links, rec, 24) != XXL_OK || xxl_env_poll(&a->env))
			return an_fail(a);
	}
	xxl_env_sort_close(&a->env, &k->es, NULL, NULL);
	if (got < 0 || xxl_spool_finish(&k->links) != XXL_OK)
		return an_fail(a);
	return XXL_OK;
}

/* Open rd on sp, or not at all (first: no ranks yet); *open says which. */
static xxl_status
open_ranks(xxl_spool_reader *rd, xxl_spool *sp, bool first, bool *open)
{
	*open = false;
	if (first)
		return XXL_OK;
	if (xxl_spool_reader_open(rd, sp, false) != XXL_OK)
		return sp->env->err.code;
	*open = true;
	return XXL_OK;
}

/*
 * One ranged iteration: r (the uniform start, or ranks[cur]) to
 * ranks[!cur], a range of targets at a time.  For each range, the ranks
 * and out-weights stream in node order beside the range's links (source
 * order) and each link adds what it carries to its target's sum in
 * memory; the first range reads every node, for the dangling ranks.  Then
 * the range's new ranks are written, with the old ones read for the
 * change.  No sort: the links were ordered by range once.
 */
static xxl_status
iterate_ranged_once(xxl_an *a, bool first, double *sums, uint64_t width, double *delta_out)
{
	an_rank    *k = a->rank;
	uint64_t	n = a->n,
				left = k->links.nbytes / 24,
				dangling = 0;
	double		d = a->damping,
				dang = 0,
				base = 0,
				delta = 0,
				start = 1.0 / (double) n;
	xxl_spool_reader rl,
				rr,
				rw,
				rg;
	bool		rr_open = false,
				rw_open = false,
				rg_open = false;
	const unsigned char *lrec = NULL;
	uint64_t	lrange = UINT64_MAX;	/* the current link's target range (none: MAX) */
	xxl_spool  *next = next_ranks(a);
	xxl_status	rc;

	if ((rc = xxl_spool_reader_open(&rl, &k->links, false)) != XXL_OK)
		return an_fail(a);
	if (left > 0)
	{
		if ((rc = xxl_spool_read(&rl, 24, &lrec)) != XXL_OK)
			goto out;
		lrange = g_get_u64(lrec + 8) / width;
	}
	for (uint64_t lo = 0; lo < n; lo += width)
	{
		uint64_t	hi = lo + width < n ? lo + width : n,
					range = lo / width;

		memset(sums, 0, (hi - lo) * sizeof(double));
		if ((rc = open_ranks(&rr, &k->ranks[k->cur], first, &rr_open)) != XXL_OK ||
			(rc = xxl_spool_reader_open(&rw, &k->outw, false)) != XXL_OK)
			goto out;
		rw_open = true;
		for (uint64_t x = 0; x < n; x++)
		{
			double		r = start,
						w;

			if (lrange != range && lo > 0)
				break;
			if ((rr_open && (rc = rank_read_double(a, &rr, &r)) != XXL_OK) ||
				(rc = rank_read_double(a, &rw, &w)) != XXL_OK)
				goto out;
			if (lo == 0 && w == 0)
			{
				dang += r;
				dangling++;
			}
			while (lrange == range && g_get_u64(lrec) == x)
			{
				double		lw;

				memcpy(&lw, lrec + 16, 8);
				sums[g_get_u64(lrec + 8) - lo] += r * lw / w;
				if (--left == 0)
					lrange = UINT64_MAX;
				else if ((rc = xxl_spool_read(&rl, 24, &lrec)) != XXL_OK)
					goto out;
				else
					lrange = g_get_u64(lrec + 8) / width;
			}
			if ((x & 0xffff) == 0xffff && xxl_env_poll(&a->env))
			{
				rc = a->env.err.code;
				goto out;
			}
		}
		close_reader(&rr, &rr_open);
		close_reader(&rw, &rw_open);
		if (lo == 0)
			base = (1.0 - d) / (double) n + d * dang / (double) n;
		/* the range's new ranks, the old ones beside them for the change */
		if ((rc = open_ranks(&rg, &k->ranks[k->cur], first, &rg_open)) != XXL_OK)
			goto out;
		for (uint64_t v = 0; v < hi; v++)
		{
			double		old = start,
						nw;

			if (rg_open && (rc = rank_read_double(a, &rg, &old)) != XXL_OK)
				goto out;
			if (v < lo)
				continue;
			nw = base + d * sums[v - lo];
			delta += fabs(nw - old);
			if ((rc = xxl_spool_write(next, &nw, 8)) != XXL_OK)
				goto out;
		}
		close_reader(&rg, &rg_open);
		if (xxl_env_poll(&a->env))
		{
			rc = a->env.err.code;
			goto out;
		}
	}
	rc = xxl_spool_finish(next);
out:
	close_reader(&rr, &rr_open);
	close_reader(&rw, &rw_open);
	close_reader(&rg, &rg_open);
	xxl_spool_reader_close(&rl);
	if (rc != XXL_OK)
		return an_fail(a);
	a->dangling = dangling;
	ranks_advance(a);
	*delta_out = delta;
	return XXL_OK;
}

/*
 * The iterations off the arrays: ranged (width targets per range) or,
 * width 0, sorting the contributions.
 */
static xxl_status
iterate_external(xxl_an *a, uint64_t width)
{
	an_rank    *k = a->rank;
	uint64_t	t0 = xxl_now_ns();
	bool		first = true;

	/* the uniform start when no iteration runs */
	if (a->max_iterations == 0)
	{
		double		s = 1.0 / (double) a->n;

		for (uint64_t x = 0; x < a->n; x++)
			if (xxl_spool_write(&k->ranks[k->cur], &s, 8) != XXL_OK)
				return an_fail(a);
		if (xxl_spool_finish(&k->ranks[k->cur]) != XXL_OK)
			return an_fail(a);
		/* dangling nodes, for the stats */
		{
			xxl_spool_reader rw;
			double		w;

			if (xxl_spool_reader_open(&rw, &k->outw, false) != XXL_OK)
				return an_fail(a);
			for (uint64_t x = 0; x < a->n; x++)
			{
				if (rank_read_double(a, &rw, &w) != XXL_OK)
				{
					xxl_spool_reader_close(&rw);
					return an_fail(a);
				}
				a->dangling += w == 0;
			}
			xxl_spool_reader_close(&rw);
		}
		return XXL_OK;
	}
	if (width > 0)
	{
		uint64_t	w = width < a->n ? width : a->n;

		if ((k->sums = an_alloc(a, w * sizeof(double), &k->sums_bytes)) == NULL)
			return an_fail(a);
		a->rank_ranges = (a->n + width - 1) / width;
	}
	while (a->iterations < (uint64_t) a->max_iterations)
	{
		double		delta = 0;

		xxl_env_step(&a->env, "iteration", (uint32_t) a->iterations + 1, (uint32_t) a->max_iterations);
		if ((width > 0 ? iterate_ranged_once(a, first, k->sums, width, &delta) :
			 iterate_external_once(a, first, &delta)) != XXL_OK)
			return an_fail(a);
		first = false;
		if (rank_iteration_done(a, delta))
			break;
	}
	an_free(a, (void **) &k->sums, &k->sums_bytes);
	a->compute_ns = xxl_now_ns() - t0;
	return XXL_OK;
}

xxl_status
rank_run_external(xxl_an *a)
{
	uint64_t	width;

	if (sort_links(a) != XXL_OK)
		return an_fail(a);
	width = range_width(a);
	if (width > 0 && width < a->n && order_links_by_range(a, width) != XXL_OK)
		return an_fail(a);
	return iterate_external(a, width);
}
