/*
 * analytics_rank.c — PageRank (xxl_analytics.h) over directed, weighted
 * links: r'(v) = (1 - d) / n + d * (sum over links u -> v of r(u) w / W(u)
 * + D / n), where W(u) is u's out-weight and D the rank of the nodes
 * without out-weight (dangling), so the ranks always sum to 1.  Start:
 * 1 / n each.  Stop when the L1 change sum |r' - r| falls below the
 * tolerance, or after max_iterations.
 *
 * In memory, the ids are numbered as the edges come (analytics_memory.c),
 * which hands over the links as arrays of ranks (an_rank_adopt) and the
 * iterations run on arrays.  Otherwise ids are numbered densely in id
 * order by two sorts (relabel.c); the weights wait in a spool in input
 * order (only once one differs from 1).  Then:
 *  - arrays, when ranks and out-weights fit the pool beside the spools:
 *    each iteration is a scan of the links, as many of them in arrays as
 *    fit, the rest in a spool read once per iteration (the node arrays'
 *    random accesses stay in memory; only the links stream);
 *  - otherwise the links are sorted by source once into a spool, with the
 *    out-weights in another, and then, for more than one range, by (target
 *    range, source): ranged iterations keep the sums of a range of targets
 *    in memory (as many as the sorter's share holds) and, per range, scan
 *    the ranks and out-weights (dense order) beside the range's links,
 *    then write the range's next ranks: no sort per iteration, the nodes
 *    read once per range;
 *  - when that reads the nodes too often (more ranges than about 8 links
 *    per node), each iteration scans ranks, out-weights and links together,
 *    sorts the contributions [target BE][value] by target and sums them in
 *    a scan that writes the next ranks' spool: one sort of m records and
 *    three scans per iteration.
 * Ranks come out in id order with the ids' spool (dense order is id order).
 */
#include "core/graph/analytics_rank_internal.h"

#include <math.h>


size_t
rank_spool_share(const xxl_an *a)
{
	size_t		h = a->env.pool / 16;

	return h - h % XXL_ALIGN;
}

static an_rank *
rank_alloc(xxl_an *a)
{
	an_rank    *k = a->rank;

	if (k != NULL)
		return k;
	k = xxl_env_alloc(&a->env, sizeof(*k));
	if (k == NULL)
		return NULL;
	memset(k, 0, sizeof(*k));
	a->rank = k;
	xxl_spool_init(&k->weights, &a->env, rank_spool_share(a));
	xxl_spool_init(&k->ids, &a->env, rank_spool_share(a));
	xxl_spool_init(&k->links, &a->env, rank_spool_share(a));
	xxl_spool_init(&k->outw, &a->env, rank_spool_share(a));
	xxl_spool_init(&k->ranks[0], &a->env, rank_spool_share(a));
	xxl_spool_init(&k->ranks[1], &a->env, rank_spool_share(a));
	xxl_spool_init(&k->rest, &a->env, rank_spool_share(a));
	return k;
}

xxl_status
an_rank_open(xxl_an *a)
{
	an_rank    *k = rank_alloc(a);

	if (k == NULL)
		return a->env.err.code;
	return xxl_env_sort_open(&a->env, &k->s1, an_sort_share(a), 0, 16, 8, 2 * a->expected_edges,
							 XXL_INPUT_UNBOUNDED);
}

xxl_status
an_rank_put(xxl_an *a, uint64_t e, int64_t source, int64_t target, double weight)
{
	an_rank    *k = a->rank;

	if (weight != 1.0 && !k->weighted)
	{
		double		one = 1.0;

		k->weighted = true;
		for (uint64_t i = 0; i < e; i++)
			if (xxl_spool_write(&k->weights, &one, 8) != XXL_OK)
				return a->env.err.code;
	}
	if (k->weighted && xxl_spool_write(&k->weights, &weight, 8) != XXL_OK)
		return a->env.err.code;
	if (graph_put_endpoints(&a->env, &k->s1, e, source, target) != XXL_OK)
		return a->env.err.code;
	if (xxl_env_poll(&a->env))
		return a->env.err.code;
	return XXL_OK;
}

static xxl_status
on_id(void *arg, int64_t id, uint64_t dense, uint64_t *attr)
{
	an_rank    *k = arg;

	(void) dense;
	(void) attr;
	return xxl_spool_write(&k->ids, &id, 8);
}

xxl_status
rank_next_weight(xxl_an *a, double *w)
{
	const unsigned char *p;

	*w = 1.0;
	if (!a->rank->weighted)
		return XXL_OK;
	if (xxl_spool_read(&a->rank->rd_w, 8, &p) != XXL_OK)
		return an_fail(a);
	memcpy(w, p, 8);
	return XXL_OK;
}

/* Arrays ---------------------------------------------------------------------- */

/* Bytes of a link in the arrays or the rest spool. */
static size_t
link_bytes(const xxl_an *a)
{
	return a->rank->weighted ? 16 : 8;
}

/*
 * How many links the iterations hold in arrays, the others streaming from
 * the rest spool; UINT64_MAX when the nodes' three arrays do not fit and
 * the iterations sort.  While the links load, load_beside stands beside
 * the arrays (the numbering sorter, or the in-memory ids and ranks) and
 * three spools' memory (1/16 each: ids, weights, rest); while they
 * iterate, the nodes' arrays, run_beside and two spools.
 */
static uint64_t
held_links(const xxl_an *a, double load_beside, double run_beside)
{
	double		pool = (double) a->env.pool,
				share = (double) rank_spool_share(a),
				nodes = 3.0 * 8 * (double) a->n + 64 * 1024,
				load = pool - load_beside - 3 * share,
				run = pool - nodes - run_beside - 2 * share,
				room = load < run ? load : run;

	if (a->force_external || a->n >= UINT32_MAX || run < 0)
		return UINT64_MAX;
	room = room > 0 ? room / (double) link_bytes(a) : 0;
	return room >= (double) a->m ? a->m : (uint64_t) room;
}

/* Link i (in edge order) into the arrays or the rest spool. */
static inline xxl_status
put_link(xxl_an *a, uint64_t i, uint32_t du, uint32_t dv, double w)
{
	an_rank    *k = a->rank;
	unsigned char rec[16];

	if (i < k->held)
	{
		k->lu[i] = du;
		k->lv[i] = dv;
		if (k->weighted)
			k->lw[i] = w;
		return XXL_OK;
	}
	memcpy(rec, &du, 4);
	memcpy(rec + 4, &dv, 4);
	memcpy(rec + 8, &w, 8);
	return xxl_spool_write(&k->rest, rec, link_bytes(a));
}

/* The arrays for k->held links. */
static xxl_status
alloc_links(xxl_an *a)
{
	an_rank    *k = a->rank;
	uint64_t	h = k->held;

	if ((k->lu = an_alloc(a, h * sizeof(uint32_t), &k->lu_bytes)) == NULL ||
		(k->lv = an_alloc(a, h * sizeof(uint32_t), &k->lv_bytes)) == NULL ||
		(k->weighted && (k->lw = an_alloc(a, h * sizeof(double), &k->lw_bytes)) == NULL))
		return an_fail(a);
	return XXL_OK;
}

/* The links from the numbering sorter, in edge order: the first k->held into arrays, the rest spooled. */
static xxl_status
load_arrays(xxl_an *a)
{
	an_rank    *k = a->rank;
	uint64_t	e,
				du,
				dv;
	int			got;

	if (alloc_links(a) != XXL_OK)
		return an_fail(a);
	for (uint64_t i = 0; (got = graph_next_dense_pair(&a->env, &k->s2, &e, &du, &dv, NULL)) == 1;
		 i++)
	{
		double		w;

		if (rank_next_weight(a, &w) != XXL_OK ||
			put_link(a, i, (uint32_t) du, (uint32_t) dv, w) != XXL_OK || xxl_env_poll(&a->env))
			return an_fail(a);
	}
	if (got < 0 || xxl_spool_finish(&k->rest) != XXL_OK)
		return an_fail(a);
	return XXL_OK;
}

/*
 * The links past the arrays, read once: their out-weights into w (rank ==
 * NULL), or what they carry of rank to rn.
 */
static xxl_status
stream_rest(xxl_an *a, const double *rank, double *out)
{
	an_rank    *k = a->rank;
	uint64_t	rest = a->m - k->held;
	size_t		lb = link_bytes(a);
	xxl_spool_reader rd;
	xxl_status	rc;

	if (rest == 0)
		return XXL_OK;
	if ((rc = xxl_spool_reader_open(&rd, &k->rest, false)) != XXL_OK)
		return rc;
	for (uint64_t i = 0; i < rest; i++)
	{
		const unsigned char *p;
		uint32_t	ends[2];
		double		w = 1.0;

		if ((rc = xxl_spool_read(&rd, lb, &p)) != XXL_OK)
			break;
		memcpy(ends, p, 8);
		if (lb > 8)
			memcpy(&w, p + 8, 8);
		if (rank == NULL)
			out[ends[0]] += w;
		else
			out[ends[1]] += rank[ends[0]] * w;
		if ((i & 0xffff) == 0xffff && xxl_env_poll(&a->env))
		{
			rc = a->env.err.code;
			break;
		}
	}
	xxl_spool_reader_close(&rd);
	return rc;
}

static xxl_status iterate_arrays(xxl_an *a);

/* The links are in lu, lv (and lw): the nodes' arrays and out-weights, then the iterations. */
static xxl_status
run_arrays(xxl_an *a)
{
	an_rank    *k = a->rank;
	size_t		bytes = a->n * sizeof(double);

	k->in_memory = a->rank_arrays = true;
	a->rank_streamed = k->held < a->m;
	if ((k->r = an_alloc(a, bytes, &k->r_bytes)) == NULL ||
		(k->rn = an_alloc(a, bytes, &k->rn_bytes)) == NULL ||
		(k->w = an_alloc(a, bytes, &k->w_bytes)) == NULL)
		return an_fail(a);
	memset(k->w, 0, bytes);
	for (uint64_t i = 0; i < k->held; i++)
		k->w[k->lu[i]] += k->lw ? k->lw[i] : 1.0;
	if (stream_rest(a, NULL, k->w) != XXL_OK)
		return an_fail(a);
	return iterate_arrays(a);
}

bool
rank_iteration_done(xxl_an *a, double delta)
{
	a->iterations++;
	a->delta = delta;
	a->converged = delta < a->tolerance;
	return a->converged;
}

static xxl_status
iterate_arrays(xxl_an *a)
{
	an_rank    *k = a->rank;
	uint64_t	t0 = xxl_now_ns();
	uint64_t	n = a->n,
				m = k->held;
	double		d = a->damping;

	a->dangling = 0;
	for (uint64_t x = 0; x < n; x++)
	{
		k->r[x] = 1.0 / (double) n;
		a->dangling += k->w[x] == 0;
	}
	while (a->iterations < (uint64_t) a->max_iterations)
	{
		double		dang = 0,
					base,
					delta = 0;

		xxl_env_step(&a->env, "iteration", (uint32_t) a->iterations + 1, (uint32_t) a->max_iterations);

		/* r[x] becomes what x sends per unit of weight; rn gathers */
		for (uint64_t x = 0; x < n; x++)
		{
			if (k->w[x] == 0)
				dang += k->r[x];
			else
				k->r[x] /= k->w[x];
			k->rn[x] = 0;
		}
		if (k->weighted)
			for (uint64_t i = 0; i < m; i++)
				k->rn[k->lv[i]] += k->r[k->lu[i]] * k->lw[i];
		else
			for (uint64_t i = 0; i < m; i++)
				k->rn[k->lv[i]] += k->r[k->lu[i]];
		if (stream_rest(a, k->r, k->rn) != XXL_OK)
			return an_fail(a);
		base = (1.0 - d) / (double) n + d * dang / (double) n;
		for (uint64_t x = 0; x < n; x++)
		{
			double		old = k->w[x] > 0 ? k->r[x] * k->w[x] : k->r[x];
			double		nw = base + d * k->rn[x];

			delta += fabs(nw - old);
			k->r[x] = nw;
		}
		if (xxl_env_poll_n(&a->env, a->m + 3 * n))
			return an_fail(a);
		if (rank_iteration_done(a, delta))
			break;
	}
	a->compute_ns = xxl_now_ns() - t0;
	return XXL_OK;
}

xxl_status
an_rank_adopt(xxl_an *a, int64_t *ids, size_t ids_bytes, uint32_t *lu, uint32_t *lv,
			  size_t link_bytes, double *lw, size_t lw_bytes)
{
	an_rank    *k = rank_alloc(a);

	if (k == NULL)
		return an_fail(a);
	k->mem_ids = ids;
	k->mem_ids_bytes = ids_bytes;
	k->lu = lu;
	k->lv = lv;
	k->lu_bytes = k->lv_bytes = link_bytes;
	k->lw = lw;
	k->lw_bytes = lw_bytes;
	k->weighted = lw != NULL;
	k->held = a->m;
	k->adopted = true;
	a->links = a->m;
	return run_arrays(a);
}

/* (analytics_internal.h) */
xxl_status
an_rank_adopt_spool(xxl_an *a, int64_t *ids, size_t ids_bytes, uint32_t *rank, size_t rank_bytes,
					xxl_spool *links, bool weighted)
{
	an_rank    *k = rank_alloc(a);
	xxl_spool_reader rd;
	xxl_status	rc = XXL_OK;

	if (k == NULL)
	{
		xxl_env_free(&a->env, rank, rank_bytes);
		return an_fail(a);
	}
	k->mem_ids = ids;
	k->mem_ids_bytes = ids_bytes;
	k->weighted = weighted;
	k->adopted = true;
	a->links = a->m;
	k->held = held_links(a, 12.0 * (double) a->n + (double) links->mem_used, 8.0 * (double) a->n);
	if (k->held == UINT64_MAX)
	{
		/* (analytics_memory.c spools only what leaves room for the nodes' arrays) */
		xxl_env_free(&a->env, rank, rank_bytes);
		xxl_error_set(&a->env.err, XXL_ENOMEM, 0, "PageRank's node arrays do not fit beside the spooled links");
		return an_fail(a);
	}
	if (alloc_links(a) != XXL_OK || xxl_spool_reader_open(&rd, links, true) != XXL_OK)
	{
		xxl_env_free(&a->env, rank, rank_bytes);
		return an_fail(a);
	}
	for (uint64_t i = 0; i < a->m && rc == XXL_OK; i++)
	{
		const unsigned char *p;
		uint32_t	d[2];
		double		w = 1.0;

		if ((rc = xxl_spool_read(&rd, 16, &p)) != XXL_OK)
			break;
		memcpy(d, p, 8);
		if (weighted)
			memcpy(&w, p + 8, 8);
		if ((rc = put_link(a, i, rank[d[0]], rank[d[1]], w)) == XXL_OK &&
			(i & 0xffff) == 0xffff && xxl_env_poll(&a->env))
			rc = a->env.err.code;
	}
	xxl_spool_reader_close(&rd);
	xxl_spool_free(links);
	xxl_env_free(&a->env, rank, rank_bytes);
	if (rc != XXL_OK || xxl_spool_finish(&k->rest) != XXL_OK)
		return an_fail(a);
	return run_arrays(a);
}


xxl_status
an_rank_run(xxl_an *a)
{
	an_rank    *k = a->rank;

	if (k->adopted)
		return XXL_OK;			/* numbered and iterated in memory */
	if (xxl_spool_finish(&k->weights) != XXL_OK ||
		graph_number_ids(&a->env, &k->s1, &k->s2, an_sort_share(a), 2 * a->m, on_id, k, false,
						 &a->n) != XXL_OK ||
		xxl_spool_finish(&k->ids) != XXL_OK)
		return an_fail(a);
	a->links = a->m;
	if (a->n == 0)
		return XXL_OK;
	if (k->weighted)
	{
		if (xxl_spool_reader_open(&k->rd_w, &k->weights, true) != XXL_OK)
			return an_fail(a);
		k->rd_w_open = true;
	}
	if ((k->held = held_links(a, (double) (a->env.pool / 8 * 3), 0)) != UINT64_MAX)
	{
		if (load_arrays(a) != XXL_OK)
			return an_fail(a);
		rank_drop_link_input(a);
		if (run_arrays(a) != XXL_OK)
			return an_fail(a);
	}
	else
	{
		if (rank_run_external(a) != XXL_OK)
			return an_fail(a);
	}
	if (xxl_spool_reader_open(&k->rd_ids, &k->ids, true) != XXL_OK)
		return an_fail(a);
	k->rd_ids_open = true;
	if (!k->in_memory)
	{
		if (xxl_spool_reader_open(&k->rd_r, &k->ranks[k->cur], true) != XXL_OK)
			return an_fail(a);
		k->rd_r_open = true;
	}
	return XXL_OK;
}

int
an_rank_next(xxl_an *a, xxl_an_row *row)
{
	an_rank    *k = a->rank;
	const unsigned char *p;

	if (k->out_i >= a->n)
		return 0;
	if (k->mem_ids)
		row->v[0] = k->mem_ids[k->out_i];
	else
	{
		if (xxl_spool_read(&k->rd_ids, 8, &p) != XXL_OK)
			return -1;
		memcpy(&row->v[0], p, 8);
	}
	if (k->in_memory)
		row->x = k->r[k->out_i];
	else if (rank_read_double(a, &k->rd_r, &row->x) != XXL_OK)
		return -1;
	k->out_i++;
	return 1;
}

void
an_rank_release(xxl_an *a)
{
	an_rank    *k = a->rank;

	if (k == NULL)
		return;
	if (k->rd_w_open)
		xxl_spool_reader_close(&k->rd_w);
	if (k->rd_ids_open)
		xxl_spool_reader_close(&k->rd_ids);
	if (k->rd_r_open)
		xxl_spool_reader_close(&k->rd_r);
	xxl_spool_free(&k->weights);
	xxl_spool_free(&k->ids);
	xxl_spool_free(&k->links);
	xxl_spool_free(&k->outw);
	xxl_spool_free(&k->ranks[0]);
	xxl_spool_free(&k->ranks[1]);
	xxl_spool_free(&k->rest);
	xxl_env_sort_close(&a->env, &k->s1, NULL, NULL);
	xxl_env_sort_close(&a->env, &k->s2, NULL, NULL);
	xxl_env_sort_close(&a->env, &k->es, NULL, NULL);
	xxl_env_sort_close(&a->env, &k->cs, NULL, NULL);
	an_free(a, (void **) &k->r, &k->r_bytes);
	an_free(a, (void **) &k->rn, &k->rn_bytes);
	an_free(a, (void **) &k->w, &k->w_bytes);
	an_free(a, (void **) &k->lu, &k->lu_bytes);
	an_free(a, (void **) &k->lv, &k->lv_bytes);
	an_free(a, (void **) &k->lw, &k->lw_bytes);
	an_free(a, (void **) &k->sums, &k->sums_bytes);
	an_free(a, (void **) &k->mem_ids, &k->mem_ids_bytes);
	xxl_env_free(&a->env, k, sizeof(*k));
	a->rank = NULL;
}
