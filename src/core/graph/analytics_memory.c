/*
 * analytics_memory.c — the analytics operators in memory (xxl_analytics.h):
 * ids are numbered by a hash table as the edges come (idmap.h; on the
 * numbering worker, numbering.h) and the edges kept as pairs of dense ids
 * (PageRank: with their weights once one is not 1).  PageRank hands the
 * links, as arrays of ranks, to analytics_rank.c's iterations.  MIS and
 * coloring rank the ids in id order and turn the graph into a compressed
 * adjacency array (CSR) over the ranks, each list sorted and without
 * duplicates (analytics_memory_build.c), for the greedy passes of the
 * external path (ascending id order), so both paths give the same answer.
 * Triangles build their out-lists from the same edges:
 * analytics_memory_tri.c.
 * What each operation needs is computed per phase
 * (analytics_memory_need.c) and checked per stride of edges.  The first edge that would outgrow the budget moves
 * the kept edges to a spool of dense pairs while the ids still fit
 * (semi-external: the builds read the spool), or replays them into the
 * external input (the symmetric sorter, or PageRank's numbering sorter) and
 * the operator goes on externally.
 */
#include "core/graph/analytics_memory.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

/*
 * Spooled edges are checked per stride of this many, for the most nodes
 * they can bring: a finer stride than the in-memory one, whose worst case
 * of 65536 new nodes would hide the semi-external window of graphs of a
 * few thousand nodes.
 */
#define SPOOL_FIT_STRIDE 1024

static void start_numbering(xxl_an *a);

xxl_status
an_mem_start(xxl_an *a)
{
	an_mem	   *k = xxl_env_alloc(&a->env, sizeof(*k));

	if (k == NULL)
		return a->env.err.code;
	memset(k, 0, sizeof(*k));
	a->mem = k;
	a->in_memory = true;
	idmap_init(&k->idm, a->env.budget.limit);
	pvec_init(&k->ends, 2 * sizeof(uint32_t), a->env.budget.limit);
	pvec_init(&k->weights, sizeof(double), a->env.budget.limit);
	xxl_spool_init(&k->dense, &a->env, an_mem_dense_share(a));
	k->dense_rec = a->op == XXL_AN_PAGERANK ? 16 : 8;
	start_numbering(a);
	return XXL_OK;
}

void
an_mem_release(xxl_an *a)
{
	an_mem	   *k = a->mem;

	if (k == NULL)
		return;
	an_tri_ranged_release(a);
	idmap_free(&a->env, &k->idm);
	pvec_free(&a->env, &k->ends);
	pvec_free(&a->env, &k->weights);
	xxl_spool_free(&k->dense);
	an_free(a, (void **) &k->ids, &k->ids_bytes);
	an_free(a, (void **) &k->off, &k->off_bytes);
	an_free(a, (void **) &k->adj, &k->adj_bytes);
	an_free(a, (void **) &k->ooff, &k->ooff_bytes);
	an_free(a, (void **) &k->oadj, &k->oadj_bytes);
	an_free(a, (void **) &k->aux, &k->aux_bytes);
	an_free(a, (void **) &k->stamp, &k->stamp_bytes);
	an_free(a, (void **) &k->counts, &k->counts_bytes);
	an_free(a, (void **) &k->order, &k->order_bytes);
	an_free(a, (void **) &k->deg, &k->deg_bytes);
	an_free(a, (void **) &k->bits, &k->bits_bytes);
	xxl_env_free(&a->env, k, sizeof(*k));
	a->mem = NULL;
}

/* The spooled edges into the sorter (PageRank: its numbering sorter, in input order). */
static xxl_status
spool_to_sorter(xxl_an *a)
{
	an_mem	   *k = a->mem;
	xxl_spool_reader rd;
	xxl_status	rc = XXL_OK;
	uint64_t	e = 0;

	if (xxl_spool_finish(&k->dense) != XXL_OK || xxl_spool_reader_open(&rd, &k->dense, true) != XXL_OK)
		return a->env.err.code;
	for (; rc == XXL_OK && e < k->dense.nbytes / k->dense_rec; e++)
	{
		const unsigned char *p;
		uint32_t	d[2];
		double		w;
		int64_t		u,
					v;

		if ((rc = xxl_spool_read(&rd, k->dense_rec, &p)) != XXL_OK)
			break;
		memcpy(d, p, 8);
		u = idmap_id(&k->idm, d[0]);
		v = idmap_id(&k->idm, d[1]);
		if (a->op == XXL_AN_PAGERANK)
		{
			memcpy(&w, p + 8, 8);
			rc = an_rank_put(a, e, u, v, w);
		}
		else
			rc = an_put_edge_sym(a, u, v);
		if (rc != XXL_OK || xxl_env_poll(&a->env))
			rc = a->env.err.code;
	}
	xxl_spool_reader_close(&rd);
	if (rc != XXL_OK)
		return rc;
	an_mem_release(a);
	return XXL_OK;
}

/* Leave memory: the kept edges into S (PageRank: its numbering sorter). */
static xxl_status
to_sorter(xxl_an *a)
{
	an_mem	   *k = a->mem;
	xxl_env    *env = &a->env;

	bool		rank = a->op == XXL_AN_PAGERANK;

	xxl_error_clear(&env->err);
	a->in_memory = false;
	idmap_drop_table(env, &k->idm);
	if ((rank ? an_rank_open(a) : an_open_sym(a)) != XXL_OK)
		return env->err.code;
	if (k->spooled)
		return spool_to_sorter(a);
	for (uint64_t e = 0; e < k->ends.n; e++)
	{
		const uint32_t *d = pvec_at(&k->ends, e);
		int64_t		u = idmap_id(&k->idm, d[0]),
					v = idmap_id(&k->idm, d[1]);

		if ((rank ? an_rank_put(a, e, u, v, k->weighted ? *(double *) pvec_at(&k->weights, e) : 1.0) :
			 an_put_edge_sym(a, u, v)) != XXL_OK || xxl_env_poll(env))
			return env->err.code;
	}
	an_mem_release(a);
	return XXL_OK;
}

/* The kept edges, as they are, into the spool of dense pairs (spool_fits). */
static xxl_status
to_spool(xxl_an *a)
{
	an_mem	   *k = a->mem;

	xxl_error_clear(&a->env.err);
	for (uint64_t e = 0; e < k->ends.n; e++)
	{
		const uint32_t *d = pvec_at(&k->ends, e);
		/* (a first weight other than 1 fills the ones before it: that fill may have stopped short) */
		double		w = e < k->weights.n ? *(const double *) pvec_at(&k->weights, e) : 1.0;
		unsigned char rec[16];

		memcpy(rec, d, 8);
		memcpy(rec + 8, &w, 8);
		if (xxl_spool_write(&k->dense, rec, k->dense_rec) != XXL_OK || xxl_env_poll(&a->env))
			return a->env.err.code;
	}
	pvec_free(&a->env, &k->ends);
	pvec_free(&a->env, &k->weights);
	k->spooled = true;
	return XXL_OK;
}

static uint32_t
intern(xxl_an *a, int64_t id)
{
	an_mem	   *k = a->mem;
	size_t		grow = idmap_grow_bytes(&k->idm, id);

	if (grow > 0 && (!an_mem_fits(a, an_mem_edges(k) + 1, k->idm.n + 1, grow) ||
					 idmap_grow(&a->env, &k->idm, id) != XXL_OK))
		return IDMAP_NONE;
	return idmap_intern(&a->env, &k->idm, id);
}

/* Number one edge; false when it does not fit (nothing kept of it). */
/* PageRank: a weight kept for edge e, the ones before it filled in once one is not 1. */
static bool
keep_weight(xxl_an *a, double w)
{
	an_mem	   *k = a->mem;
	double	   *p;

	if (w != 1.0 && !k->weighted)
	{
		k->weighted = true;
		for (uint64_t i = 0; i < k->ends.n; i++)
		{
			if ((p = pvec_push(&a->env, &k->weights)) == NULL)
				return false;
			*p = 1.0;
		}
	}
	if (!k->weighted)
		return true;
	if ((p = pvec_push(&a->env, &k->weights)) == NULL)
		return false;
	*p = w;
	return true;
}

static bool
keep(xxl_an *a, int64_t u, int64_t v, double w)
{
	an_mem	   *k = a->mem;
	uint32_t	du,
				dv,
			   *d;

	if (k->spooled)
	{
		unsigned char rec[16];

		uint64_t	m = an_mem_edges(k);

		/* (ids of the direct array grow no table: their count is checked per stride) */
		if (m % SPOOL_FIT_STRIDE == 0 &&
			!an_mem_spool_fits(a, m + SPOOL_FIT_STRIDE, k->idm.n + 2 * SPOOL_FIT_STRIDE,
						idmap_table_bytes(&k->idm)))
			return false;
		if ((du = intern(a, u)) == IDMAP_NONE || (dv = intern(a, v)) == IDMAP_NONE)
			return false;
		memcpy(rec, &du, 4);
		memcpy(rec + 4, &dv, 4);
		memcpy(rec + 8, &w, 8);
		k->weighted |= w != 1.0;
		return xxl_spool_write(&k->dense, rec, k->dense_rec) == XXL_OK;
	}
	if (k->ends.n % PVEC_FIT_STRIDE == 0 &&
		!an_mem_fits(a, k->ends.n + PVEC_FIT_STRIDE, k->idm.n + 2 * PVEC_FIT_STRIDE,
			  idmap_table_bytes(&k->idm)))
		return false;
	if ((du = intern(a, u)) == IDMAP_NONE || (dv = intern(a, v)) == IDMAP_NONE ||
		(a->op == XXL_AN_PAGERANK && !keep_weight(a, w)) ||
		(d = pvec_push(&a->env, &k->ends)) == NULL)
	{
		if (k->weights.n > k->ends.n)
			k->weights.n--;		/* (its edge was not kept) */
		return false;
	}
	d[0] = du;
	d[1] = dv;
	return true;
}

/*
 * The in-memory part of number_edges: edges kept until one does not fit,
 * which moves the kept ones to the external input (*rc its status).
 * Returns the edges kept (a->numbered moved on by as many).
 */
static size_t
number_in_memory(xxl_an *a, const an_edge *edges, size_t n, xxl_status *rc)
{
	an_mem	   *k = a->mem;
	size_t		i = 0;

	/*
	 * A rolling prefetch a few edges ahead: all of a batch's at once
	 * overflow the outstanding misses
	 */
	for (size_t j = 0; j < n && j < ID_AHEAD; j++)
	{
		idmap_prefetch(&k->idm, edges[j].u);
		idmap_prefetch(&k->idm, edges[j].v);
	}
	for (; i < n; i++)
	{
		if (i + ID_AHEAD < n)
		{
			idmap_prefetch(&k->idm, edges[i + ID_AHEAD].u);
			idmap_prefetch(&k->idm, edges[i + ID_AHEAD].v);
		}
		if (!keep(a, edges[i].u, edges[i].v, edges[i].w))
		{
			/* the ids may stay while the edges go to a spool */
			if (!k->spooled && (a->env.err.code == XXL_OK || a->env.err.code == XXL_ENOMEM) &&
				an_mem_spool_fits(a, k->ends.n + SPOOL_FIT_STRIDE, k->idm.n + 2 * SPOOL_FIT_STRIDE,
						   idmap_table_bytes(&k->idm)))
			{
				if (to_spool(a) != XXL_OK)
				{
					*rc = a->env.err.code;
					a->numbered += i;
					return i;
				}
				i--;			/* the same edge again, spooled */
				continue;
			}
			a->numbered += i;
			if (a->env.err.code != XXL_OK && a->env.err.code != XXL_ENOMEM)
				*rc = a->env.err.code;
			else if (to_sorter(a) != XXL_OK)
				*rc = a->env.err.code;
			return i;
		}
	}
	a->numbered += n;
	return n;
}

/*
 * Number edges in memory, in input order, or move everything to the
 * external input when they do not fit and put the rest there.  On the
 * caller's thread, or on the numbering worker: then nothing else touches
 * the operator's budget or its parts until the worker is done.
 */
static xxl_status
number_edges(xxl_an *a, const an_edge *edges, size_t n)
{
	xxl_status	rc = XXL_OK;
	size_t		i = 0;
	uint64_t	e;

	if (a->in_memory)
		i = number_in_memory(a, edges, n, &rc);
	/* the edge index a local: the caller's thread reads the line of a->numbered */
	for (e = a->numbered; rc == XXL_OK && i < n; i++, e++)
		if ((a->op == XXL_AN_PAGERANK ? an_rank_put(a, e, edges[i].u, edges[i].v, edges[i].w) :
			 an_put_edge_sym(a, edges[i].u, edges[i].v)) != XXL_OK)
			rc = a->env.err.code;
	a->numbered = e;
	return rc;
}

/* The numbering worker's side of the pipe. */
static xxl_status
number_batch(void *arg, const unsigned char *batch, size_t len, xxl_error *err)
{
	xxl_an	   *a = arg;

	if (number_edges(a, (const an_edge *) batch, len / sizeof(an_edge)) != XXL_OK)
		*err = a->env.err;
	return err->code;
}

/*
 * Number the edges on a second core while the caller reads the next ones
 * (numbering.h): on 1M nodes / 5M edges the numbering was half of the
 * input's time.
 */
static void
start_numbering(xxl_an *a)
{
	g_numbering_start(&a->numbering, &a->env, a->env.budget.limit, sizeof(an_edge),
					  number_batch, a);
}

xxl_status
an_mem_put(xxl_an *a, int64_t u, int64_t v, double w)
{
	if (a->numbering.pipe)
	{
		unsigned char *at = g_numbering_space(&a->numbering, &a->env, sizeof(an_edge));

		if (at == NULL)
			return a->env.err.code;
		/* field by field: a copy of a whole edge from the stack stalled on its stores */
		memcpy(at + offsetof(an_edge, u), &u, sizeof(u));
		memcpy(at + offsetof(an_edge, v), &v, sizeof(v));
		memcpy(at + offsetof(an_edge, w), &w, sizeof(w));
		return g_numbering_poll(&a->numbering, &a->env) ? a->env.err.code : XXL_OK;
	}
	a->batch[a->nbatch] = (an_edge) {u, v, w};
	if (++a->nbatch == sizeof(a->batch) / sizeof(a->batch[0]))
	{
		xxl_status	rc = number_edges(a, a->batch, a->nbatch);

		a->nbatch = 0;
		if (rc != XXL_OK)
			return rc;
	}
	return xxl_env_poll(&a->env) ? a->env.err.code : XXL_OK;
}

/* The end of the input: the staged edges numbered, the worker gone. */
static xxl_status
finish_numbering(xxl_an *a)
{
	xxl_status	rc;

	if (a->numbering.pipe)
		return g_numbering_finish(&a->numbering, &a->env);
	rc = number_edges(a, a->batch, a->nbatch);
	a->nbatch = 0;
	return rc;
}

/* PageRank's hand-over ------------------------------------------------------------ */

/* PageRank: the links as arrays of ranks (and weights) for analytics_rank.c. */
static xxl_status
hand_over_links(xxl_an *a)
{
	an_mem	   *k = a->mem;
	uint64_t	m = k->ends.n;
	size_t		link_bytes,
				lw_bytes = 0,
				ids_bytes;
	uint32_t   *lu,
			   *lv;
	double	   *lw = NULL;
	int64_t    *ids;

	if (an_mem_rank_ends(a, NULL) != XXL_OK)
		return an_fail(a);
	lu = an_alloc(a, m * sizeof(uint32_t), &link_bytes);
	lv = lu ? an_alloc(a, m * sizeof(uint32_t), &link_bytes) : NULL;
	if (lv == NULL || (k->weighted && (lw = an_alloc(a, m * sizeof(double), &lw_bytes)) == NULL))
	{
		if (lu)
			xxl_env_free(&a->env, lu, link_bytes);
		if (lv)
			xxl_env_free(&a->env, lv, link_bytes);
		return an_fail(a);
	}
	for (uint64_t e = 0; e < m; e++)
	{
		const uint32_t *d = pvec_at(&k->ends, e);

		lu[e] = d[0];
		lv[e] = d[1];
		if (lw)
			lw[e] = *(const double *) pvec_at(&k->weights, e);
	}
	ids = k->ids;
	ids_bytes = k->ids_bytes;
	k->ids = NULL;
	an_mem_release(a);
	a->in_memory = false;		/* PageRank's own path from here on */
	return an_rank_adopt(a, ids, ids_bytes, lu, lv, link_bytes, lw, lw_bytes);
}

/* PageRank with spooled links: the ids ranked, the links read from the spool into the iterations. */
static xxl_status
hand_over_spool(xxl_an *a)
{
	an_mem	   *k = a->mem;
	size_t		rank_bytes,
				ids_bytes;
	uint32_t   *rank;
	int64_t    *ids;

	if (xxl_spool_finish(&k->dense) != XXL_OK || (rank = an_mem_rank_ids(a, &rank_bytes)) == NULL)
		return an_fail(a);
	ids = k->ids;
	ids_bytes = k->ids_bytes;
	k->ids = NULL;
	a->in_memory = false;		/* PageRank's own path from here on */
	a->semi = true;
	/* (the spool stays a->mem's until the links are read; the rest of a->mem is freed) */
	return an_rank_adopt_spool(a, ids, ids_bytes, rank, rank_bytes, &k->dense, k->weighted);
}

/* Run and output --------------------------------------------------------------------- */

xxl_status
an_mem_run(xxl_an *a)
{
	an_mem	   *k;
	uint64_t	t0;

	/* (a->mem is the worker's until it is done: it frees it when the edges go external) */
	if (finish_numbering(a) != XXL_OK)
		return an_fail(a);
	if (!a->in_memory)
		return XXL_OK;			/* the numbering moved everything to the sorters */
	k = a->mem;
	t0 = xxl_now_ns();
	a->semi = k->spooled;
	if (a->op == XXL_AN_PAGERANK)
		return k->spooled ? hand_over_spool(a) : hand_over_links(a);
	if (a->op == XXL_AN_TRIANGLES || a->op == XXL_AN_TRIANGLE_COUNT ||
		a->op == XXL_AN_NODE_TRIANGLES)
		return an_mem_tri_run(a, t0);
	/* MIS and coloring whose lists do not fit beside the spooled edges read them sorted */
	if (k->spooled && an_mem_need_bytes(a, an_mem_edges(k), k->idm.n, idmap_table_bytes(&k->idm), true) >
		(double) a->env.pool)
	{
		if (an_mem_stream_build(a) != XXL_OK)
			return an_fail(a);
		a->build_ns = xxl_now_ns() - t0;
		return XXL_OK;
	}
	if (an_mem_build_csr(a) != XXL_OK)
		return an_fail(a);
	a->build_ns = xxl_now_ns() - t0;
	if (a->op == XXL_AN_MIS)
	{
		k->aux = an_alloc(a, k->n * sizeof(uint32_t), &k->aux_bytes);
		if (k->aux == NULL)
			return an_fail(a);
		memset(k->aux, 0, k->aux_bytes);
		return XXL_OK;
	}
	/* coloring */
	k->aux = an_alloc(a, k->n * sizeof(uint32_t), &k->aux_bytes);
	k->stamp = k->aux ? an_alloc(a, (a->max_degree + 2) * sizeof(uint32_t), &k->stamp_bytes) : NULL;
	if (k->stamp == NULL)
		return an_fail(a);
	memset(k->stamp, 0xff, k->stamp_bytes);
	return XXL_OK;
}

int
an_mem_next(xxl_an *a, xxl_an_row *row)
{
	an_mem	   *k = a->mem;

	if (a->op == XXL_AN_TRIANGLES || a->op == XXL_AN_TRIANGLE_COUNT ||
		a->op == XXL_AN_NODE_TRIANGLES)
		return an_mem_tri_next(a, row);
	if (a->stream_lists)
		return an_mem_stream_next(a, row);
	while (k->v < k->n)
	{
		uint64_t	v = k->v++;
		uint64_t	b,
					e;

		row->v[0] = k->ids[v];
		b = k->off[v];
		e = k->off[v + 1];
		if (xxl_env_poll_n(&a->env, e - b + 1))
			return -1;
		if (a->op == XXL_AN_MIS)
		{
			if (k->aux[v])
				continue;
			for (uint64_t i = b; i < e; i++)
				k->aux[k->adj[i]] = 1;
			a->set_size++;
			return 1;
		}
		/* coloring: stamp the smaller neighbours' colors */
		for (uint64_t i = b; i < e && k->adj[i] < v; i++)
			k->stamp[k->aux[k->adj[i]]] = (uint32_t) v;
		row->v[1] = an_mem_color_pick(a, (uint32_t) v);
		return 1;
	}
	return 0;
}
