/*
 * graph_memory.c — the three graph operators in memory (xxl_graph.h, step
 * 0).  Ids are numbered by a hash table as the edges come (idmap.h); the
 * edges are kept as pairs of dense ids, the forests' with id and cost.
 *  - Components: each edge joins its ends' sets as it comes, in a
 *    union-find over the dense ids (4 bytes per node, no edge kept); at run
 *    the distinct ids are sorted once and each node joins its root in the
 *    union-find of the semi-external path, which runs on their ranks (a
 *    set's root is then its smallest id), and the output reads the same
 *    arrays.  Small non-negative ids skip the numbering: "by id" below.
 *  - Spanning forest: the union-find over the edges in input order is the
 *    output scan, as on the semi-external path (which edges join two sets
 *    does not depend on the numbering).
 *  - Minimum spanning forest: each edge is kept as its sort record (cost
 *    key, id key, input position, ends), sorted in place (pvec_sort.c), then
 *    Kruskal as the output scan.  32 bytes per edge in all, where ends,
 *    attributes, records and the scratch of a stable sort took 72.
 * Nothing spills.  The first edge that would outgrow the budget replays the
 * kept edges onto the sorting path (graph_put_sorted) and the operator goes
 * on as if it had started there.
 */
#include "core/graph/graph_internal.h"

#include <stdlib.h>

/* Edges ahead whose ends' union-find entries the union-find passes prefetch. */
#define UF_AHEAD 8

/* Where the kept edges are: their sort records (MSF) or their ends. */
static inline const pvec *
kept_vec(const xxl_graph *g)
{
	return g->op == XXL_GRAPH_MSF ? &g->kedges : &g->ends;
}

/*
 * What m edges over n nodes with id tables of `tables` bytes need, at input
 * and at run (components keep no edge).
 */
static bool
fits(const xxl_graph *g, uint64_t m, uint64_t n, size_t tables)
{
	size_t		held = pvec_bytes(&g->idm.ids, n) +
		(g->op == XXL_GRAPH_CC ? pvec_bytes(&g->ccuf, n) : pvec_bytes(kept_vec(g), m)) +
		(g->op == XXL_GRAPH_SF ? pvec_bytes(&g->attrs, m) : 0);
	size_t		input = held + tables;
	/*
	 * components rank the nodes while the id tables still stand: ids in
	 * rank order, ranks, and a sort of the hashed ids (16 bytes each at
	 * most); that is more than what follows (ids, ranks and the
	 * union-find's parents)
	 */
	size_t		run = held + (g->op != XXL_GRAPH_CC ? n * sizeof(uint64_t) :
							  tables + n * (sizeof(int64_t) + sizeof(uint32_t) + 16));

	/* the MSF's records number the edges in 4 bytes */
	return n < IDMAP_MAX && (g->op != XXL_GRAPH_MSF || m <= UINT32_MAX) &&
		input <= graph_mem_limit(&g->env) && run + 64 * 1024 <= graph_mem_limit(&g->env);
}

/* Kept edge e's dense ends. */
static inline void
kept_ends(xxl_graph *g, uint64_t e, uint32_t *du, uint32_t *dv)
{
	if (g->op == XXL_GRAPH_MSF)
	{
		const graph_kedge *k = pvec_at(&g->kedges, e);

		*du = k->u;
		*dv = k->v;
	}
	else
	{
		const uint32_t *d = pvec_at(&g->ends, e);

		*du = d[0];
		*dv = d[1];
	}
}

/* Kept edge e's id and cost (0, 0 for components). */
static inline void
kept_attr(xxl_graph *g, uint64_t e, int64_t *id, double *cost)
{
	*id = 0;
	*cost = 0;
	if (g->op == XXL_GRAPH_MSF)
	{
		const graph_kedge *k = pvec_at(&g->kedges, e);

		*cost = g_key_cost(g_get_be(k->key));
		*id = g_key_id(g_get_be(k->key + 8));
	}
	else if (g->op == XXL_GRAPH_SF)
	{
		const graph_attr *a = pvec_at(&g->attrs, e);

		*id = a->id;
		*cost = a->cost;
	}
}

/* The numbered components' union-find: 4-byte parents of dense ids in a pvec. */
#define CC_AT(v, x) ((uint32_t *) pvec_at((v), (x)))
UF_DEFINE_AT(cc, uint32_t, const pvec *, CC_AT)

/* Join the sets of the numbered pairs, their union-find entries prefetched a few pairs ahead. */
static void
cc_join_pending(xxl_graph *g)
{
	for (size_t i = 0; i < g->cc_npairs; i++)
	{
		if (i + UF_AHEAD < g->cc_npairs)
		{
			__builtin_prefetch(pvec_at(&g->ccuf, g->cc_pairs[i + UF_AHEAD][0]));
			__builtin_prefetch(pvec_at(&g->ccuf, g->cc_pairs[i + UF_AHEAD][1]));
		}
		cc_union(&g->ccuf, g->cc_pairs[i][0], g->cc_pairs[i][1]);
	}
	g->cc_npairs = 0;
}

bool
graph_mem_wanted(const xxl_graph *g)
{
	/* the cap on semi-external nodes is how tests ask for the other paths */
	if (g->max_semi_nodes != 0)
		return false;

	/*
	 * Components start by id, which keeps no edge (a link per id seen is
	 * all a move to the sorters replays, through a spool):
	 * their row estimate says nothing of whether they fit.  For the others,
	 * an estimate that already rules memory out (the edges alone, no node
	 * counted) saves starting there and replaying everything into the
	 * sorters midway, which about doubles the time.
	 */
	if (g->op == XXL_GRAPH_CC)
		return true;
	return g->expected_edges == 0 || fits(g, g->expected_edges, 0, 0);
}

/* fits() for one more kept edge (an idmap_fits_fn). */
static bool
fits_next_edge(const void *arg, uint64_t n, size_t tables)
{
	const xxl_graph *g = arg;

	return fits(g, kept_vec(g)->n + 1, n, tables);
}

static uint32_t
intern(xxl_graph *g, int64_t id)
{
	return idmap_intern_within(&g->env, &g->idm, id, fits_next_edge, g);
}

/*
 * Components by id leaving for the sorters: the links (one edge from each
 * id seen to its parent, which joins the same sets) go to a spool and the
 * array is freed, so that the array may take most of the pool rather than
 * only what can stay beside a sorter.
 */
static xxl_status
by_id_spool_links(xxl_graph *g, xxl_spool *links)
{
	const uint32_t *p = g->idm.direct;

	xxl_spool_init(links, &g->env, XXL_SPOOL_SHARED);
	for (size_t x = 0; x < g->idm.dcap; x++)
		if (p[x] != IDMAP_NONE)
		{
			uint32_t	link[2] = {(uint32_t) x, p[x]};

			if (xxl_spool_write(links, link, sizeof(link)) != XXL_OK || poll_canceled(g))
				return g->env.err.code;
		}
	idmap_drop_table(&g->env, &g->idm);
	return xxl_spool_finish(links);
}

xxl_status
graph_replay_pairs(xxl_graph *g, xxl_spool *links)
{
	xxl_spool_reader rd;
	const unsigned char *r;
	uint64_t	n = links->nbytes / (2 * sizeof(uint32_t));

	if (xxl_spool_reader_open(&rd, links, true) != XXL_OK)
		return g->env.err.code;
	for (uint64_t i = 0; i < n; i++)
	{
		uint32_t	link[2];

		if (xxl_spool_read(&rd, sizeof(link), &r) != XXL_OK)
			break;
		memcpy(link, r, sizeof(link));
		if (graph_put_sorted(g, link[0], link[1], 0, 0) != XXL_OK || poll_canceled(g))
			break;
	}
	xxl_spool_reader_close(&rd);
	return g->env.err.code;
}

/*
 * Hand the kept edges to the sorting path and leave memory; the batch's
 * edges from `from` on were not kept and follow them.  Components by id
 * kept no edge: their union-find's links stand in for them.
 */
static xxl_status
to_sorter(xxl_graph *g, size_t from)
{
	xxl_env    *env = &g->env;
	uint64_t	kept = kept_vec(g)->n;
	bool		by_id = g->by_id;
	xxl_spool	links;

	xxl_error_clear(&env->err);
	g->in_memory = false;
	g->by_id = false;
	if (by_id)
	{
		if (by_id_spool_links(g, &links) != XXL_OK)
		{
			xxl_spool_free(&links);
			return env->err.code;
		}
	}
	else
		idmap_drop_table(env, &g->idm);
	if (graph_open_endpoints(g) != XXL_OK ||
		(g->mapped && graph_mapped_to_sorter(g) != XXL_OK))
	{
		if (by_id)
			xxl_spool_free(&links);
		return env->err.code;
	}
	if (by_id)
	{
		graph_replay_pairs(g, &links);
		xxl_spool_free(&links);
		/* and, in parts, the edges above the low part */
		if (env->err.code != XXL_OK || (g->split && graph_split_replay(g) != XXL_OK))
			return env->err.code;
	}
	else if (g->op == XXL_GRAPH_CC)
	{
		/* a link from each node to its root joins the same sets */
		cc_join_pending(g);
		for (uint64_t x = 0; x < g->ccuf.n; x++)
			if (graph_put_sorted(g, idmap_id(&g->idm, x),
								 idmap_id(&g->idm, cc_find(&g->ccuf, (uint32_t) x)), 0, 0) != XXL_OK ||
				poll_canceled(g))
				return env->err.code;
	}
	else
		for (uint64_t e = 0; e < kept; e++)
		{
			uint32_t	du,
						dv;
			int64_t		id;
			double		cost;

			kept_ends(g, e, &du, &dv);
			kept_attr(g, e, &id, &cost);
			if (graph_put_sorted(g, idmap_id(&g->idm, du), idmap_id(&g->idm, dv), id, cost) != XXL_OK ||
				poll_canceled(g))
				return env->err.code;
		}
	for (size_t i = from; i < g->nbatch; i++)
		if (graph_put_sorted(g, g->batch[i].source, g->batch[i].target,
							 g->batch[i].id, g->batch[i].cost) != XXL_OK)
			return env->err.code;
	g->nbatch = 0;
	graph_mem_release(g);
	return XXL_OK;
}

/*
 * Components: number one edge's ends (their sets are joined with the
 * batch's, cc_join_pending); false when they do not fit.
 */
static bool
keep_cc(xxl_graph *g, int64_t source, int64_t target)
{
	uint32_t	du,
				dv;

	/* checked once per stride of edges, for the nodes they can bring */
	if (g->cc_edges % PVEC_FIT_STRIDE == 0 &&
		!fits(g, 0, g->idm.n + 2 * PVEC_FIT_STRIDE, idmap_table_bytes(&g->idm)))
		return false;
	if ((du = intern(g, source)) == IDMAP_NONE || (dv = intern(g, target)) == IDMAP_NONE)
		return false;
	while (g->ccuf.n < g->idm.n)
	{
		uint32_t   *p = pvec_push(&g->env, &g->ccuf);

		if (p == NULL)
			return false;
		*p = (uint32_t) (g->ccuf.n - 1);
	}
	g->cc_pairs[g->cc_npairs][0] = du;
	g->cc_pairs[g->cc_npairs][1] = dv;
	g->cc_npairs++;
	g->cc_edges++;
	return true;
}

/* Number one edge; false when it does not fit (nothing kept of it). */
static bool
keep(xxl_graph *g, int64_t source, int64_t target, int64_t id, double cost)
{
	const pvec *kv = kept_vec(g);
	uint32_t	du,
				dv;

	if (g->op == XXL_GRAPH_CC)
		return keep_cc(g, source, target);
	/* checked once per stride of edges, for them and the nodes they can bring */
	if (kv->n % PVEC_FIT_STRIDE == 0 &&
		!fits(g, kv->n + PVEC_FIT_STRIDE, g->idm.n + 2 * PVEC_FIT_STRIDE,
			  idmap_table_bytes(&g->idm)))
		return false;
	if ((du = intern(g, source)) == IDMAP_NONE || (dv = intern(g, target)) == IDMAP_NONE)
		return false;
	if (g->op == XXL_GRAPH_MSF)
	{
		uint32_t	pos = (uint32_t) g->kedges.n;
		graph_kedge *k = pvec_push(&g->env, &g->kedges);

		if (k == NULL)
			return false;
		g_put_be(k->key, g_cost_key(cost));
		g_put_be(k->key + 8, g_id_key(id));
		pos = __builtin_bswap32(pos);
		memcpy(k->key + 16, &pos, 4);
		k->u = du;
		k->v = dv;
		k->pad = 0;
	}
	else
	{
		graph_attr *a = NULL;
		uint32_t   *d;

		if ((g->op == XXL_GRAPH_SF && (a = pvec_push(&g->env, &g->attrs)) == NULL) ||
			(d = pvec_push(&g->env, &g->ends)) == NULL)
		{
			if (a)
				g->attrs.n--;
			return false;
		}
		d[0] = du;
		d[1] = dv;
		if (a)
			*a = (graph_attr) {id, cost};
	}
	return true;
}

/* Edges ahead whose ends' id map entries the numbering prefetches. */
#define ID_AHEAD 8

/*
 * The id map entries of batch edge i's ends, if there is one: a rolling
 * prefetch ID_AHEAD edges ahead (all of a batch's at once overflow the
 * outstanding misses, and the early ones are gone again).
 */
static inline void
prefetch_ends(const xxl_graph *g, size_t i)
{
	if (i < g->nbatch)
	{
		idmap_prefetch(&g->idm, g->batch[i].source);
		idmap_prefetch(&g->idm, g->batch[i].target);
	}
}

/* Components by id ---------------------------------------------------------- */

/*
 * Ids below this take a union-find entry of 4 bytes (IDMAP_NONE and the
 * ids above stay apart).
 */
#define BY_ID_MAX ((int64_t) IDMAP_MAX)

void
graph_mem_start(xxl_graph *g)
{
	size_t		floor = share(g, 16) / sizeof(uint32_t);

	g->in_memory = graph_mem_wanted(g);
	g->by_id = g->in_memory && g->op == XXL_GRAPH_CC;
	/* forests whose edges will not fit: their ids may still (the cap asks for the sorters) */
	if (!g->in_memory && g->op != XXL_GRAPH_CC && g->max_semi_nodes == 0 &&
		graph_mapped_begin(g) == XXL_OK)
		g->in_memory = true;
	/*
	 * Ids come in any order: the array may cover a sixteenth of the budget
	 * before as many ids are in (8 entries per id later, as the map's), or,
	 * with a row estimate, two ids per edge up to what the pool holds (a
	 * graph of 1M random ids otherwise left the array at 64MB, when ids near
	 * the top came before 1/8 of them were in, and took 7 times as long).
	 * It grows while old and new array fit the pool together.
	 */
	if (g->expected_edges > 0)
	{
		uint64_t	by_rows = g->env.pool / sizeof(uint32_t);

		if (2 * g->expected_edges < by_rows)
			by_rows = 2 * g->expected_edges;
		if (by_rows > floor)
			floor = (size_t) by_rows;
	}
	if (g->by_id && floor > g->idm.dfloor)
		g->idm.dfloor = floor;
}

/* Whether the direct array takes id (grown if need be, within the budget). */
static bool
by_id_takes(xxl_graph *g, int64_t id)
{
	size_t		grow;

	if (idmap_in_direct(&g->idm, id))
		return true;
	if (id < 0 || id >= BY_ID_MAX)
		return false;
	grow = idmap_direct_grow_bytes(&g->idm, id);
	return grow != SIZE_MAX && grow <= g->env.pool && idmap_grow(&g->env, &g->idm, id) == XXL_OK;
}

/*
 * Join the batch's edges from `from` on, as far as the direct array (or,
 * in parts, the spool beside it) takes their ends; the index of the
 * first edge it does not take (a failed spool write sets the error).
 */
static size_t
by_id_take(xxl_graph *g, size_t from)
{
	idmap	   *m = &g->idm;

	for (size_t i = from; i < from + ID_AHEAD; i++)
		prefetch_ends(g, i);
	for (size_t i = from; i < g->nbatch; i++)
	{
		int64_t		s = g->batch[i].source,
					t = g->batch[i].target;

		prefetch_ends(g, i + ID_AHEAD);
		if (g->split)
		{
			/* the low part takes what it holds; the spool, what it does not */
			if (!idmap_in_direct(m, s) || !idmap_in_direct(m, t))
			{
				if (!graph_split_put(g, s, t))
					return i;
				continue;
			}
		}
		else if (!by_id_takes(g, s) || !by_id_takes(g, t))
			return i;
		by_id_see(m, (uint32_t) s);
		by_id_see(m, (uint32_t) t);
		uf32_union(m->direct, (uint32_t) s, (uint32_t) t);
	}
	return g->nbatch;
}

/*
 * Leave components by id for the numbered map: each id seen gets its dense
 * number in ascending order (a parent is smaller, so numbered first), and
 * its parent's number is its entry in the numbered union-find.  The caller
 * checked that this fits.
 */
static xxl_status
by_id_leave(xxl_graph *g)
{
	idmap	   *m = &g->idm;
	uint32_t   *p = m->direct;

	g->by_id = false;
	m->dfloor = IDMAP_DIRECT_MIN;
	m->n = 0;
	for (size_t x = 0; x < m->dcap; x++)
	{
		uint32_t	parent = p[x];
		int64_t    *orig;
		uint32_t   *d;

		if (parent == IDMAP_NONE)
			continue;
		if ((orig = pvec_push(&g->env, &m->ids)) == NULL ||
			(d = pvec_push(&g->env, &g->ccuf)) == NULL)
			return g->env.err.code;
		*orig = (int64_t) x;
		p[x] = (uint32_t) m->n++;
		*d = p[parent];
	}
	return XXL_OK;
}

xxl_status
graph_mem_leave_by_id(xxl_graph *g, size_t from)
{
	/* a link per id seen, and the map's dense -> original array */
	if (fits(g, g->idm.n, g->idm.n, idmap_table_bytes(&g->idm)))
		return by_id_leave(g);
	return to_sorter(g, from);
}

xxl_status
graph_mem_flush(xxl_graph *g)
{
	size_t		from = 0;

	while (g->by_id)
	{
		if ((from = by_id_take(g, from)) == g->nbatch || g->env.err.code != XXL_OK)
		{
			g->nbatch = 0;
			return g->env.err.code;
		}
		/* an id that the parts do not take (negative, or beyond what they number) */
		if (g->split)
			return to_sorter(g, from);
		/* ids that the grown array or the parts hold */
		if (graph_split_begin(g, &g->batch[from]))
			continue;
		if (graph_mem_leave_by_id(g, from) != XXL_OK || !g->in_memory)
			return g->env.err.code;
	}

	for (size_t i = from; i < from + ID_AHEAD; i++)
		prefetch_ends(g, i);
	for (size_t i = from; i < g->nbatch; i++)
	{
		xxl_status	rc;

		prefetch_ends(g, i + ID_AHEAD);
		if (g->mapped)
		{
			if ((rc = graph_mapped_put(g, &g->batch[i])) == XXL_OK)
				continue;
			if (rc != XXL_ENOMEM || g->env.err.code != XXL_OK)
				return rc;
			return to_sorter(g, i);
		}
		if (keep(g, g->batch[i].source, g->batch[i].target, g->batch[i].id, g->batch[i].cost))
			continue;
		if (g->env.err.code != XXL_OK && g->env.err.code != XXL_ENOMEM)
			return g->env.err.code;
		/* the forests' edges go to a spool while their ids still fit; this one too */
		xxl_error_clear(&g->env.err);
		if ((rc = graph_mapped_begin(g)) == XXL_OK)
		{
			i--;
			continue;
		}
		if (rc != XXL_ENOMEM || g->env.err.code != XXL_OK)
			return rc;
		return to_sorter(g, i);
	}
	cc_join_pending(g);
	g->nbatch = 0;
	return XXL_OK;
}

xxl_status
graph_mem_run(xxl_graph *g)
{
	xxl_env    *env = &g->env;
	uint64_t	n = g->idm.n;
	idmap_ranking ranking = {0};
	uint32_t   *rank;

	g->path = XXL_GRAPH_IN_MEMORY;
	g->n = n;
	if (g->by_id)
	{
		uint32_t   *p = g->idm.direct;

		/* every id seen at its root (parents are smaller: one ascending pass) */
		for (size_t x = 0; x < g->idm.dcap; x++)
			if (p[x] != IDMAP_NONE)
				p[x] = p[p[x]];
		g->out = OUT_CC_BY_ID;
		return XXL_OK;
	}
	if (g->op != XXL_GRAPH_CC)
		idmap_drop_table(env, &g->idm);
	if (g->op == XXL_GRAPH_MSF)
	{
		/* the strict order (cost, id, input position) */
		pvec_sort(&g->kedges, KEDGE_KEY, env->threads);
		if (poll_canceled(g))
			return env->err.code;
	}
	if (g->op != XXL_GRAPH_CC)
	{
		/* the union-find pass is the output scan (graph_mem_next_edge) */
		if (uf_alloc(g, n) != XXL_OK)
			return env->err.code;
		g->out = g->op == XXL_GRAPH_SF ? OUT_SF_MEM : OUT_MSF_MEM;
		return XXL_OK;
	}
	g->mem_ids_bytes = sizeof(int64_t) * (n ? n : 1);
	ranking.ids = g->mem_ids = xxl_env_alloc(env, g->mem_ids_bytes);
	ranking.rank = rank = g->mem_ids ? xxl_env_alloc(env, sizeof(uint32_t) * (n ? n : 1)) : NULL;
	if (rank == NULL || idmap_each_sorted(env, &g->idm, idmap_rank_visit, &ranking) != XXL_OK)
	{
		if (rank)
			xxl_env_free(env, rank, sizeof(uint32_t) * (n ? n : 1));
		return env->err.code;
	}
	idmap_drop_table(env, &g->idm);
	pvec_free(env, &g->idm.ids);
	/*
	 * the dense union-find's roots in one ascending pass (parents are
	 * smaller), then each node joins its root on the ranks, whose root is
	 * its set's smallest id
	 */
	cc_join_pending(g);
	for (uint64_t x = 0; x < g->ccuf.n; x++)
	{
		uint32_t   *px = pvec_at(&g->ccuf, x);

		*px = *(const uint32_t *) pvec_at(&g->ccuf, *px);
	}
	if (uf_alloc(g, n) == XXL_OK)
		for (uint64_t x = 0; x < n; x++)
		{
			if (x + UF_AHEAD < n)
				__builtin_prefetch(&g->parent[rank[x + UF_AHEAD]]);
			uf_union(g->parent, rank[x], rank[*(const uint32_t *) pvec_at(&g->ccuf, x)]);
			if ((x & 65535) == 0 && poll_canceled(g))
				break;
		}
	xxl_env_free(env, rank, sizeof(uint32_t) * (n ? n : 1));
	pvec_free(env, &g->ccuf);
	if (env->err.code != XXL_OK)
		return env->err.code;
	uf_flatten(g->parent, n);
	g->out = OUT_CC_SEMI;
	return XXL_OK;
}

/*
 * SF, MSF: the next kept edge that joins two sets, in input order (SF) or
 * in (cost, id) order (MSF): 1, or 0 at the end.
 */
int
graph_mem_next_edge(xxl_graph *g, int64_t *id, int64_t *source, int64_t *target, double *cost)
{
	uint64_t	m = kept_vec(g)->n;

	while (g->out_pos < m)
	{
		uint64_t	e = g->out_pos++;
		uint32_t	du,
					dv;

		/* the union-find entries a few edges ahead (the ends are random) */
		if (e + UF_AHEAD < m)
		{
			kept_ends(g, e + UF_AHEAD, &du, &dv);
			__builtin_prefetch(&g->parent[du]);
			__builtin_prefetch(&g->parent[dv]);
		}
		kept_ends(g, e, &du, &dv);
		if (uf_union(g->parent, du, dv))
		{
			kept_attr(g, e, id, cost);
			*source = idmap_id(&g->idm, du);
			*target = idmap_id(&g->idm, dv);
			return 1;
		}
	}
	return 0;
}

void
graph_mem_release(xxl_graph *g)
{
	graph_mapped_release(g);
	graph_parts_release(g);
	graph_split_release(g);
	idmap_free(&g->env, &g->idm);
	pvec_free(&g->env, &g->ends);
	pvec_free(&g->env, &g->ccuf);
	pvec_free(&g->env, &g->attrs);
	pvec_free(&g->env, &g->kedges);
	if (g->mem_ids)
		xxl_env_free(&g->env, g->mem_ids, g->mem_ids_bytes);
	g->mem_ids = NULL;
}
