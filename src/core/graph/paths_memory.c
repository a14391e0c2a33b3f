/*
 * paths_memory.c — the in-memory path of BFS / shortest paths
 * (xxl_paths.h): dense ids from a hash table filled as the edges come, a
 * compressed sparse row adjacency, Dijkstra with an addressable 4-ary heap
 * and BFS with a FIFO queue.  Nothing here spills; paths.c moves the
 * operator to the external path before any of it would outgrow the budget.
 *
 * Why an addressable heap and not duplicates: with decrease-key the heap
 * holds at most one entry per node, so the memory of the search is known
 * (40 bytes per node) before it starts, and the choice of path is exact.
 *
 * With two threads the adjacency is built on both, and a search for all
 * nodes runs on a worker while the caller hands out the rows already
 * settled (start_search).  The numbering's worker is paths.c's.
 */
#include "core/graph/paths_internal.h"

#include <math.h>
#include <pthread.h>
#include <time.h>

#define NODE_BYTES 40			/* pnode 16, heap entry 16, plink, order 4 each */

/*
 * What building the adjacency and the search need at most: while building,
 * the links' ends and costs, the arcs, the offsets and a cursor per node;
 * while searching, the costs, the arcs, the offsets and the node arrays
 * (the ends are gone).
 */
static size_t
run_bytes(const xxl_paths *p, uint64_t links, uint64_t n)
{
	uint64_t	arcs = p->directed ? links : 2 * links;
	size_t		common = pvec_bytes(&p->lcost, links) + pvec_bytes(&p->map.ids, n) +
		4 * (n + 1) + sizeof(parc) * arcs + 64 * 1024;
	size_t		build = pvec_bytes(&p->lends, links) + 2 * 4 * (n + 1);	/* two cursors */
	size_t		search = (size_t) NODE_BYTES * n;

	return common + (build > search ? build : search);
}

size_t
paths_mem_need(const xxl_paths *p)
{
	return run_bytes(p, p->nlinks, p->n);
}

/* Whether holding `links` links, n nodes and id tables of `tables` bytes still fits. */
static bool
fits(const xxl_paths *p, uint64_t links, uint64_t n, size_t tables)
{
	size_t		input = pvec_bytes(&p->lends, links) + pvec_bytes(&p->lcost, links) +
		pvec_bytes(&p->map.ids, n) + tables;

	return n < P_MAX_DENSE && (p->directed ? links : 2 * links) < P_MAX_DENSE &&
		input <= graph_mem_limit(&p->env) && run_bytes(p, links, n) <= graph_mem_limit(&p->env);
}

/* fits() for one more link (an idmap_fits_fn). */
static bool
fits_next_link(const void *arg, uint64_t n, size_t tables)
{
	const xxl_paths *p = arg;

	return fits(p, p->nlinks + 1, n, tables);
}

/* The dense id of id, numbering it if new; P_UNSEEN when that would not fit. */
static uint32_t
intern(xxl_paths *p, int64_t id)
{
	uint32_t	d = idmap_intern_within(&p->env, &p->map, id, fits_next_link, p);

	p->n = p->map.n;
	return d;
}

/*
 * Add a link in memory.  XXL_OK with p->external still false when it was
 * added; XXL_OK with the operator wanting the external path (want_external)
 * when it would not fit: nothing of it was added.
 */
xxl_status
paths_mem_add(xxl_paths *p, int64_t u, int64_t v, int64_t eid, double w)
{
	uint32_t	du,
				dv;
	plink_ends *e;
	plink_cost *c;

	/*
	 * Checked once per stride of links, for them and the most nodes they
	 * can bring (two per link), not per link.
	 */
	if (p->nlinks % PVEC_FIT_STRIDE == 0 &&
		!fits(p, p->nlinks + PVEC_FIT_STRIDE, p->n + 2 * PVEC_FIT_STRIDE,
			  idmap_table_bytes(&p->map)))
		return XXL_ENOMEM;
	if ((du = intern(p, u)) == P_UNSEEN || (dv = intern(p, v)) == P_UNSEEN ||
		(e = pvec_push(&p->env, &p->lends)) == NULL ||
		(c = pvec_push(&p->env, &p->lcost)) == NULL)
	{
		if (p->env.err.code == XXL_ENOMEM)
			xxl_error_clear(&p->env.err);
		return p->env.err.code == XXL_OK ? XXL_ENOMEM : p->env.err.code;
	}
	e->u = du;
	e->v = dv;
	c->w = w;
	c->eid = eid;
	p->nlinks++;
	return XXL_OK;
}

/* Search ---------------------------------------------------------------------- */

static inline const plink_cost *
link_at(const xxl_paths *p, uint32_t i)
{
	return (const plink_cost *) pvec_at(&p->lcost, i);
}

/* Arcs ahead whose heads' entries the searches prefetch. */
#define ARC_AHEAD 4

/* Searches of at least this many nodes run on a worker while the rows go out. */
#define SEARCH_ASYNC_NODES 4096

static xxl_status run_search(xxl_paths *p);
static xxl_status start_search(xxl_paths *p);

/* Rows ahead whose data paths_mem_next prefetches. */
#define OUT_AHEAD 16

/*
 * The search on a worker (see paths_mem_run): the rows of order[0,
 * published) are final (a settled node's entry is never written again),
 * and the caller hands them out while the search goes on.  Published every
 * PUBLISH_EVERY nodes, so that the counter's cache line does not travel
 * between the cores at every node.
 */
#define PUBLISH_EVERY 256

static inline void
publish(xxl_paths *p)
{
	if ((p->reached & (PUBLISH_EVERY - 1)) == 0)
		__atomic_store_n(&p->published, p->reached, __ATOMIC_RELEASE);
}

static xxl_status
dijkstra(xxl_paths *p, const uint32_t *src, size_t nsrc)
{
	uint32_t	size = 0;

	for (size_t i = 0; i < nsrc; i++)
	{
		reach(p, src[i], 0, src[i], P_UNSEEN);
		heap_up(p, size++, (pheap_entry) {0.0, src[i]});
		p->pushes++;
	}
	while (size > 0)
	{
		uint32_t	u = p->hent[0].node;
		uint32_t	next;
		double		du;

		if (!(p->node[u].d <= p->max_distance))
			break;
		next = P_UNSEEN;
		if (--size > 0)
		{
			heap_down(p, 0, p->hent[size], size);

			/*
			 * A pipeline of guesses, each a step ahead of the loads that
			 * depend on it: the likely next node's arcs (its offset was
			 * fetched a node ago, as the guess for the node after next),
			 * and the offset of the likely node after next, the smallest
			 * of the root's children.
			 */
			next = p->hent[0].node;
			__builtin_prefetch(&p->arcs[p->off[next]]);
			if (size > 1)
				__builtin_prefetch(&p->off[heap_second(p, size)]);
		}
		p->node[u].pos = P_SETTLED;
		p->order[p->reached++] = u;
		publish(p);
		if (p->has_target && u == p->target_dense)
		{
			p->target_found = true;
			break;
		}
		du = p->node[u].d;
		for (uint32_t a = p->off[u], end = p->off[u + 1]; a < end; a++)
		{
			uint32_t	v = p->arcs[a].to;
			pnode	   *nv = &p->node[v];
			double		nd;

			if (a + ARC_AHEAD < end)
			{
				__builtin_prefetch(&p->node[p->arcs[a + ARC_AHEAD].to]);
				__builtin_prefetch(link_at(p, p->arcs[a + ARC_AHEAD].link));
			}
			if (nv->pos == P_SETTLED)
				continue;
			nd = du + link_at(p, p->arcs[a].link)->w;
			p->relaxed++;
			if (nv->pos == P_UNSEEN)
			{
				reach(p, v, nd, u, p->arcs[a].link);
				heap_up(p, size++, (pheap_entry) {nd, v});
				p->pushes++;
			}
			else if (nd < nv->d)
			{
				reach(p, v, nd, u, p->arcs[a].link);
				heap_up(p, nv->pos, (pheap_entry) {nd, v});
			}
		}

		/*
		 * Still the next node: its arcs are in by now, so the heads and
		 * costs of its first arcs (which its own loop prefetches for no
		 * arc) can be on their way while it is taken off the heap.
		 */
		if (next != P_UNSEEN && size > 0 && p->hent[0].node == next)
			for (uint32_t a = p->off[next], end = p->off[next + 1];
				 a < end && a < p->off[next] + ARC_AHEAD; a++)
			{
				__builtin_prefetch(&p->node[p->arcs[a].to]);
				__builtin_prefetch(link_at(p, p->arcs[a].link));
			}
		if (xxl_env_poll(&p->env))
			return p->env.err.code;
	}
	return XXL_OK;
}

static xxl_status
bfs(xxl_paths *p, const uint32_t *src, size_t nsrc)
{
	uint64_t	head = 0;
	uint64_t	depth_end = 0;

	for (size_t i = 0; i < nsrc; i++)
	{
		reach(p, src[i], 0, src[i], P_UNSEEN);
		p->node[src[i]].pos = P_SETTLED;
		p->order[p->reached++] = src[i];
	}
	while (head < p->reached)
	{
		uint32_t	u = p->order[head];

		if (head == depth_end)
		{
			p->levels++;
			xxl_env_step(&p->env, "level", (uint32_t) p->levels, 0);
			depth_end = p->reached;
		}
		head++;
		if (head + 1 < p->reached)
		{
			/* the node after the next: its arcs, while this one's are scanned */
			uint32_t	next = p->order[head + 1];

			__builtin_prefetch(&p->off[next]);
			if (p->off[p->order[head]] < p->off[p->order[head] + 1])
				__builtin_prefetch(&p->arcs[p->off[p->order[head]]]);
		}
		if (p->node[u].d >= (double) p->max_depth)
			continue;
		for (uint32_t a = p->off[u], end = p->off[u + 1]; a < end; a++)
		{
			uint32_t	v = p->arcs[a].to;

			if (a + ARC_AHEAD < end)
				__builtin_prefetch(&p->node[p->arcs[a + ARC_AHEAD].to]);
			p->relaxed++;
			if (p->node[v].pos != P_UNSEEN)
				continue;
			reach(p, v, p->node[u].d + 1, u, p->arcs[a].link);
			p->node[v].pos = P_SETTLED;
			p->order[p->reached++] = v;
			publish(p);
			p->pushes++;
		}
		if (xxl_env_poll(&p->env))
			return p->env.err.code;
	}
	return XXL_OK;
}

/* Links at least this many are built into the adjacency on two threads. */
#define BUILD_PARALLEL_LINKS (1 << 16)

/* Count the arcs of links [from, to) per tail into cnt[tail + 1]. */
static void
count_arcs(const xxl_paths *p, uint64_t from, uint64_t to, uint32_t *cnt)
{
	for (uint64_t i = from; i < to; i++)
	{
		const plink_ends *e = pvec_at(&p->lends, i);

		cnt[e->u + 1]++;
		if (!p->directed)
			cnt[e->v + 1]++;
	}
}

/* Place the arcs of links [from, to), each tail's next slot in cur. */
static void
place_arcs(xxl_paths *p, uint64_t from, uint64_t to, uint32_t *cur)
{
	for (uint64_t i = from; i < to; i++)
	{
		const plink_ends *e = pvec_at(&p->lends, i);

		p->arcs[cur[e->u]++] = (parc) {e->v, (uint32_t) i};
		if (!p->directed)
			p->arcs[cur[e->v]++] = (parc) {e->u, (uint32_t) i};
	}
}

/*
 * The adjacency from the links; their ends are freed afterwards.  With two
 * threads, each takes half of the links through both passes: the second
 * half's arcs of a node go right after the first half's, so every list is
 * in link order, as on one thread.
 */
static xxl_status
build_csr(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	size_t		cur_bytes = 4 * (p->n + 1);
	bool		two = env->threads >= 2 && p->nlinks >= BUILD_PARALLEL_LINKS;
	uint64_t	half = two ? p->nlinks / 2 : p->nlinks;
	uint32_t   *cur,
			   *cur2 = NULL;

	p->narcs = p->directed ? p->nlinks : 2 * p->nlinks;
	p->off = xxl_env_alloc(env, 4 * (p->n + 1));
	p->arcs = p->off ? xxl_env_alloc(env, sizeof(parc) * (p->narcs ? p->narcs : 1)) : NULL;
	cur = p->arcs ? xxl_env_alloc(env, cur_bytes) : NULL;
	if (cur != NULL && two && (cur2 = xxl_env_alloc(env, cur_bytes)) == NULL)
		xxl_env_free(env, cur, cur_bytes);
	if (cur == NULL || (two && cur2 == NULL))
		return env->err.code;

	memset(p->off, 0, 4 * (p->n + 1));
	if (two)
	{
		memset(cur2, 0, cur_bytes);
		XXL_OMP_PARALLEL(sections num_threads(2))
		{
#pragma omp section
			count_arcs(p, 0, half, p->off);
#pragma omp section
			count_arcs(p, half, p->nlinks, cur2);
		}
		for (uint64_t x = 0; x < p->n; x++)
		{
			uint32_t	first = p->off[x + 1],
						second = cur2[x + 1];

			cur[x] = p->off[x];
			cur2[x] = p->off[x] + first;
			p->off[x + 1] = p->off[x] + first + second;
		}
		XXL_OMP_PARALLEL(sections num_threads(2))
		{
#pragma omp section
			place_arcs(p, 0, half, cur);
#pragma omp section
			place_arcs(p, half, p->nlinks, cur2);
		}
		xxl_env_free(env, cur2, cur_bytes);
	}
	else
	{
		count_arcs(p, 0, p->nlinks, p->off);
		for (uint64_t x = 0; x < p->n; x++)
		{
			p->off[x + 1] += p->off[x];
			cur[x] = p->off[x];
		}
		place_arcs(p, 0, p->nlinks, cur);
	}
	xxl_env_free(env, cur, cur_bytes);
	pvec_free(env, &p->lends);
	/* the passes' polls, after them: no OpenMP thread may ask the host */
	xxl_env_poll_n(env, p->nlinks);
	return env->err.code;
}

void
paths_collect_path(xxl_paths *p, uint32_t *room)
{
	uint32_t	x = (uint32_t) p->target_dense;

	p->nsteps = 0;
	if (!p->target_found || p->plinkv[x] == P_UNSEEN)
		return;					/* unreachable, or the target is a source */
	p->steps = room;
	while (p->plinkv[x] != P_UNSEEN)
	{
		p->steps[p->nsteps++] = x;
		x = p->node[x].pred;
	}
	p->steps[p->nsteps++] = x;
}

xxl_status
paths_take_sources(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	uint32_t   *src;
	size_t		nsrc = 0;

	src = xxl_env_alloc(env, sizeof(uint32_t) * (p->nsources ? p->nsources : 1));
	if (src == NULL)
		return env->err.code;
	for (size_t i = 0; i < p->nsources; i++)
	{
		uint32_t	d = idmap_find(&p->map, p->sources[i]);

		if (d != P_UNSEEN)
			src[nsrc++] = d;
	}
	p->target_dense = p->has_target ? idmap_find(&p->map, p->target) : P_UNSEEN;
	idmap_drop_table(env, &p->map);
	p->search_src = src;
	p->search_nsrc = nsrc;
	return XXL_OK;
}

xxl_status
paths_alloc_nodes(xxl_paths *p, bool heap)
{
	xxl_env    *env = &p->env;
	size_t		n = p->n ? p->n : 1;

	if ((p->node = xxl_env_alloc(env, sizeof(pnode) * n)) == NULL ||
		(p->plinkv = xxl_env_alloc(env, 4 * n)) == NULL ||
		(heap && (p->hent = xxl_env_alloc(env, sizeof(pheap_entry) * n)) == NULL) ||
		(p->order = xxl_env_alloc(env, 4 * n)) == NULL)
		return env->err.code;
	for (uint64_t x = 0; x < p->n; x++)
	{
		p->node[x].pos = P_UNSEEN;
		p->plinkv[x] = P_UNSEEN;
	}
	return XXL_OK;
}

xxl_status
paths_mem_run(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	uint64_t	t0 = xxl_now_ns();
	xxl_status	rc;

	p->path = XXL_PATHS_IN_MEMORY;
	if (paths_take_sources(p) != XXL_OK || build_csr(p) != XXL_OK ||
		paths_alloc_nodes(p, p->op == XXL_PATHS_SSSP) != XXL_OK)
		return env->err.code;
	p->build_ns = xxl_now_ns() - t0;
	if (env->threads >= 2 && !p->has_target && p->n >= SEARCH_ASYNC_NODES)
		return start_search(p);
	rc = run_search(p);
	if (rc != XXL_OK)
		return rc;
	if (p->has_target)
		paths_collect_path(p, (uint32_t *) p->hent);
	return XXL_OK;
}

/* The search, on whichever thread; its sources are freed by the caller's thread. */
static xxl_status
run_search(xxl_paths *p)
{
	uint64_t	t0 = xxl_now_ns();
	xxl_status	rc;

	rc = p->op == XXL_PATHS_SSSP ? dijkstra(p, p->search_src, p->search_nsrc) :
		bfs(p, p->search_src, p->search_nsrc);
	p->search_ns = xxl_now_ns() - t0;
	return rc;
}

static void *
search_worker(void *arg)
{
	xxl_paths  *p = arg;

	p->search_rc = run_search(p);
	__atomic_store_n(&p->published, p->reached, __ATOMIC_RELEASE);
	__atomic_store_n(&p->search_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * With two threads, a search for all nodes runs on a worker and the rows
 * go out as it settles them (a million rows took a third of the search's
 * time to hand out).  The worker only reads and writes the search's
 * arrays and polls the environment's stop flag; the caller never asks the
 * host from its side while it runs (paths.c), and joins it before
 * anything is freed.
 */
static xxl_status
start_search(xxl_paths *p)
{
	int			rc;

	p->published = 0;
	p->search_done = 0;
	rc = xxl_thread_start(&p->search_thread, search_worker, p);
	if (rc != 0)
	{
		/* no thread: search here */
		xxl_status	s = run_search(p);

		return s;
	}
	p->search_async = true;
	p->search_worker = true;
	return XXL_OK;
}

xxl_status
paths_mem_join(xxl_paths *p, bool stop)
{
	if (!p->search_async)
		return XXL_OK;
	if (stop)
		__atomic_store_n(&p->env.stop, 1, __ATOMIC_RELEASE);
	pthread_join(p->search_thread, NULL);
	p->search_async = false;
	return p->search_rc;
}

bool
paths_mem_searching(const xxl_paths *p)
{
	return p->search_async;
}

int
paths_mem_next(xxl_paths *p, int64_t *node, double *d, int64_t *pred, int64_t *edge)
{
	uint32_t	u;
	uint64_t	ready;

	/* reached is the worker's while it runs: read only what it published */
	if (!p->search_async)
		ready = p->reached;
	else
	{
		/* wait for the worker to settle the next rows, or to end */
		while ((ready = __atomic_load_n(&p->published, __ATOMIC_ACQUIRE)) <= p->out_pos)
		{
			if (__atomic_load_n(&p->search_done, __ATOMIC_ACQUIRE))
			{
				ready = __atomic_load_n(&p->published, __ATOMIC_ACQUIRE);
				if (ready > p->out_pos)
					break;
				if (paths_mem_join(p, false) != XXL_OK)
					return -1;
				return 0;
			}
			if (xxl_env_host_stop(&p->env))
			{
				paths_mem_join(p, true);
				if (p->env.err.code == XXL_OK)
					xxl_env_canceled(&p->env);
				return -1;
			}
			nanosleep(&(struct timespec) {0, 20000}, NULL);	/* 20 us: a spin would share the core */
		}
	}
	if (p->out_pos >= ready)
		return 0;
	/*
	 * A row reads five arrays at random places (its node's id, distance,
	 * predecessor and link, the predecessor's id, the link's id): prefetch
	 * them a few rows ahead, in two steps, so that the misses overlap.
	 */
	if (p->out_pos + OUT_AHEAD < ready)
	{
		uint32_t	v = p->order[p->out_pos + OUT_AHEAD];

		__builtin_prefetch(pvec_at(&p->map.ids, v));
		__builtin_prefetch(&p->node[v]);
		__builtin_prefetch(&p->plinkv[v]);
	}
	if (p->out_pos + OUT_AHEAD / 2 < ready)
	{
		uint32_t	v = p->order[p->out_pos + OUT_AHEAD / 2];

		__builtin_prefetch(pvec_at(&p->map.ids, p->node[v].pred));
		if (p->plinkv[v] != P_UNSEEN)
			__builtin_prefetch(p->eidn ? (const void *) &p->eidn[v] :
							   (const void *) link_at(p, p->plinkv[v]));
	}
	u = p->order[p->out_pos++];
	*node = idmap_id(&p->map, u);
	*d = p->node[u].d;
	*pred = idmap_id(&p->map, p->node[u].pred);
	/* the semi-external path holds no link costs: the pass after its search found the ids */
	*edge = p->plinkv[u] == P_UNSEEN ? -1 : p->eidn ? p->eidn[u] : link_at(p, p->plinkv[u])->eid;
	return 1;
}

int
paths_mem_step(xxl_paths *p, int64_t *node, int64_t *edge, double *cost, double *agg)
{
	uint32_t	x;

	if (p->out_pos >= p->nsteps)
		return 0;
	x = p->steps[p->nsteps - 1 - p->out_pos];
	*node = idmap_id(&p->map, x);
	*agg = p->node[x].d;
	if (p->out_pos + 1 < p->nsteps)
	{
		uint32_t	next = p->steps[p->nsteps - 2 - p->out_pos];

		if (p->wn)
		{
			*edge = p->eidn[next];
			*cost = p->wn[next];
		}
		else
		{
			const plink_cost *l = link_at(p, p->plinkv[next]);

			*edge = l->eid;
			*cost = l->w;
		}
	}
	else
	{
		*edge = -1;
		*cost = 0;
	}
	p->out_pos++;
	return 1;
}

void
paths_mem_release(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	size_t		n = p->n ? p->n : 1;

	paths_mem_join(p, true);
	paths_semi_release(p);
	if (p->search_src)
		xxl_env_free(env, p->search_src, sizeof(uint32_t) * (p->nsources ? p->nsources : 1));
	p->search_src = NULL;
	if (p->off)
		xxl_env_free(env, p->off, 4 * (p->n + 1));
	if (p->arcs)
		xxl_env_free(env, p->arcs, sizeof(parc) * (p->narcs ? p->narcs : 1));
	p->off = NULL;
	p->arcs = NULL;
#define FREE_NODES(field, size) \
	do { if (p->field) xxl_env_free(env, p->field, (size) * n); p->field = NULL; } while (0)
	FREE_NODES(node, sizeof(pnode));
	FREE_NODES(plinkv, 4);
	FREE_NODES(hent, sizeof(pheap_entry));
	FREE_NODES(order, 4);
#undef FREE_NODES
	p->steps = NULL;
	pvec_free(env, &p->lends);
	pvec_free(env, &p->lcost);
	idmap_free(env, &p->map);
}
