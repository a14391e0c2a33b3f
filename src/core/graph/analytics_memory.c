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
 * What each operation needs is computed per phase (need_bytes) and checked
 * per stride of edges.  The first edge that would outgrow the budget moves
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

/*
 * The sort of the hashed ids in a ranking: 16 bytes each, and they fill at
 * most half the hash table's 16-byte slots, so at most half its bytes.
 */
static inline double
sort_bytes(uint64_t n, size_t tables)
{
	double		all = 16.0 * (double) n,
				half = (double) tables / 2;

	return all < half ? all : half;
}

static inline double
max3(double x, double y, double z)
{
	return x > y ? (x > z ? x : z) : (y > z ? y : z);
}

/*
 * What spooled edges hold in memory: the spool's chunks while it is small,
 * a rewriting pass's second spool and its scratch (analytics_memory.h).
 */
static double
spooled_ends_bytes(const xxl_an *a)
{
	return 2.0 * (double) an_mem_dense_share(a) + AN_PASS_SCRATCH;
}

/*
 * The scratch a streamed range of out-lists comes through: it holds the
 * longest list, at most sqrt(2m) entries once rid of repeats (a list's
 * out-neighbours have at least its degree).
 */
static double
tri_stream_bytes(double m)
{
	double		longest = 4.0 * (sqrt(2.0 * m) + 2);

	return longest > AN_PASS_SCRATCH ? longest : AN_PASS_SCRATCH;
}

/* The least a range of out-lists may take: a sixteenth of them, and the longest list. */
static double
tri_range_least(double m)
{
	double		part = 4.0 * m / AN_TRI_RANGES;

	return part > tri_stream_bytes(m) ? part : tri_stream_bytes(m);
}

/*
 * What the triangles need is max(fixed, base + lists): fixed what the
 * phases without out-lists hold (numbering, ranking), base what the phases
 * with them hold besides them, and lists the out-lists' bytes (whole, or
 * one range's: analytics_memory_tri_ranged.c, whose other ranges stream
 * through a scratch).
 */
static void
tri_need(const xxl_an *a, uint64_t m, uint64_t n, size_t tables, bool spooled, bool ranged,
		 double *fixed, double *base)
{
	const an_mem *k = a->mem;
	double		N = (double) n,
				ends = spooled ? spooled_ends_bytes(a) : (double) pvec_bytes(&k->ends, m),
				ids = (double) pvec_bytes(&k->idm.ids, n),
				bits = (a->env.threads > 0 ? a->env.threads : 1) * 8.0 * (double) ((n + 63) / 64),
				ranking = ids + (double) tables + (8 + 4) * N + sort_bytes(n, tables),
	/* out-offsets, degrees, a bitmap per thread; the scratch of streamed ranges */
				nodes = 8 * N + bits,
				stream = ranged ? tri_stream_bytes((double) m) : 0;

	switch (a->op)
	{
		case XXL_AN_NODE_TRIANGLES:
			/* ranked before the build (ids and order kept); counts once the edges go */
			*fixed = ends + nodes + ranking;
			*base = fmax(ends + nodes + 12 * N, 12 * N + nodes + stream + 8 * N);
			break;
		case XXL_AN_TRIANGLES:
			/* the listing keeps the ids, and its marks (whole) or its triangles' spool (ranged) */
			*fixed = 0;
			*base = ranged ? fmax(ends + nodes + ids, nodes + stream + ids + an_mem_dense_share(a)) :
				ends + nodes + ids + 4 * N;
			break;
		default:
			/* the count frees the ids (the tables go before the build) */
			*fixed = ids + (double) tables + ends;
			*base = ranged ? fmax(ends + nodes, nodes + stream) : ends + nodes;
			break;
	}
}

/* (analytics_memory.h) */
size_t
an_mem_tri_list_room(const xxl_an *a, uint64_t entries)
{
	const an_mem *k = a->mem;
	uint64_t	m = an_mem_edges(k);
	double		fixed,
				base,
				pool = (double) a->env.pool - 64 * 1024;

	tri_need(a, m, k->n, 0, true, false, &fixed, &base);
	if (base + 4.0 * (double) entries <= pool)
		return 0;
	tri_need(a, m, k->n, 0, true, true, &fixed, &base);
	/* (at least the least a range may take, which spool_fits saw fit) */
	return (size_t) fmax(pool - base, tri_range_least((double) m));
}

/*
 * What m kept edges over n nodes with id tables of `tables` bytes need at
 * the most (spooled: with the edges in the spool, not in memory): the largest of the phases the operation goes through, each
 * with what it still holds from the one before (the arrays as allocated
 * below and in analytics_memory_tri.c / analytics_rank.c).  An upper bound
 * that is not far above: it decides where the in-memory path ends, and
 * nothing after the input may fail for memory.
 */
static double
need_bytes(const xxl_an *a, uint64_t m, uint64_t n, size_t tables, bool spooled)
{
	const an_mem *k = a->mem;
	double		N = (double) n,
				M = (double) m,
				ends = spooled ? spooled_ends_bytes(a) : (double) pvec_bytes(&k->ends, m) +
		(k->weighted ? (double) pvec_bytes(&k->weights, m) : 0),
				ids = (double) pvec_bytes(&k->idm.ids, n),
	/* ranking: rank -> id, rank or order, and a sort of the hashed ids */
				ranking = ids + (double) tables + (8 + 4) * N + sort_bytes(n, tables),
				need;

	switch (a->op)
	{
		case XXL_AN_PAGERANK:
			{
				double		links = (k->weighted ? 16.0 : 8.0) * M;

				/* ranking; the links beside the ends; the iterations' three arrays */
				need = max3(ends + ranking, ends + 8 * N + links, 8 * N + links + 24 * N);
				break;
			}
		case XXL_AN_MIS:
		case XXL_AN_COLORING:
			/* ranking beside the offsets; the lists (both ways) beside the ends; the run */
			need = max3(ends + 4 * N + ranking, ends + (8 + 4 + 4) * N + 8 * M,
						(8 + 4 + 4 + 4) * N + 8 * M + 8);
			break;
		default:
			{
				double		fixed,
							base;

				tri_need(a, m, n, tables, spooled, false, &fixed, &base);
				need = fmax(fixed, base + 4 * M);
				if (spooled)
				{
					/* or in ranges of out-lists, none less than the least a range may take */
					tri_need(a, m, n, tables, spooled, true, &fixed, &base);
					need = fmin(need, fmax(fixed, base + tri_range_least(M)));
				}
				break;
			}
	}
	return need + 64 * 1024;
}

/*
 * Edges that outgrow memory while their ids do not: the ids stay in the
 * hash table and the edges go on to a spool of dense pairs (the path is
 * then semi-external), which spares the sorts that number ids externally.
 * The undirected operations read the spool in each pass of their build
 * (an_pass) and then run as in memory: what they need is need_bytes()
 * without the edges.  PageRank's links (with their weights) are read once
 * into the iterations' arrays and rest spool (analytics_rank.c); it needs
 * the tables and ids beside the spool while numbering, the ranking, then
 * the ids and the iterations' three arrays (32 bytes per node) beside the
 * spools.
 */
static bool
spool_fits(const xxl_an *a, uint64_t m, uint64_t n, size_t tables)
{
	const an_mem *k = a->mem;
	double		N = (double) n,
				pool = (double) a->env.pool,
				ids = (double) pvec_bytes(&k->idm.ids, n),
				ranking = ids + (double) tables + (8 + 4) * N + sort_bytes(n, tables);

	if (n >= IDMAP_MAX)
		return false;
	if (a->op != XXL_AN_PAGERANK)
		/* (MIS and coloring also without their lists: an_mem_stream_build) */
		return 2 * m < UINT32_MAX && (double) tables + ids + spooled_ends_bytes(a) <= pool &&
			(need_bytes(a, m, n, tables, true) <= pool ||
			 ((a->op == XXL_AN_MIS || a->op == XXL_AN_COLORING) &&
			  ranking + spooled_ends_bytes(a) <= pool &&
			  an_mem_stream_need(N, ids, spooled_ends_bytes(a)) <= pool));
	/* (the spool's memory share beside the ranking; the iterations' two spools of 1/16) */
	return !a->force_external && ranking + (double) an_mem_dense_share(a) <= pool &&
		32 * N + 64 * 1024 + pool / 8 <= pool;
}

/* Whether m edges over n nodes with id tables of `tables` bytes fit, at input and at run. */
static bool
fits(const xxl_an *a, uint64_t m, uint64_t n, size_t tables)
{
	const an_mem *k = a->mem;
	double		input;

	if (k->spooled)
		return spool_fits(a, m, n, tables);
	input = (double) tables + (double) pvec_bytes(&k->ends, m) +
		(k->weighted ? (double) pvec_bytes(&k->weights, m) : 0) + (double) pvec_bytes(&k->idm.ids, n);
	return n < IDMAP_MAX && 2 * m < UINT32_MAX && input <= (double) a->env.pool &&
		need_bytes(a, m, n, tables, false) <= (double) a->env.pool;
}

bool
an_mem_wanted(const xxl_an *a)
{
	/*
	 * the out-lists (the edges may be spooled: semi-external; MIS and
	 * coloring may even stream their lists, triangles hold a range of
	 * theirs) and the nodes' arrays as if there were a node per five
	 * edges: starting here when not even the spooled path fits costs a
	 * replay into the sorters midway
	 */
	bool		tri = a->op == XXL_AN_TRIANGLES || a->op == XXL_AN_TRIANGLE_COUNT ||
		a->op == XXL_AN_NODE_TRIANGLES;
	double		per_edge = (tri ? 4.0 / AN_TRI_RANGES : 4.0) + 2;

	/* (tests force the external path; PageRank's onto its sorted iterations) */
	if (a->force_external)
		return false;

	/*
	 * PageRank starts here whatever the estimate: when its links outgrow
	 * memory its ids may not (spool_fits); moving on to the sorters
	 * replays one spool at worst
	 */
	if (a->op == XXL_AN_PAGERANK)
		return true;
	/* a row estimate that rules memory out saves the replay midway */
	return a->expected_edges == 0 || per_edge * (double) a->expected_edges <= (double) a->env.pool;
}

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

	if (grow > 0 && (!fits(a, an_mem_edges(k) + 1, k->idm.n + 1, grow) ||
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
			!spool_fits(a, m + SPOOL_FIT_STRIDE, k->idm.n + 2 * SPOOL_FIT_STRIDE,
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
		!fits(a, k->ends.n + PVEC_FIT_STRIDE, k->idm.n + 2 * PVEC_FIT_STRIDE,
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
				spool_fits(a, k->ends.n + SPOOL_FIT_STRIDE, k->idm.n + 2 * SPOOL_FIT_STRIDE,
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
	if (k->spooled && need_bytes(a, an_mem_edges(k), k->idm.n, idmap_table_bytes(&k->idm), true) >
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
