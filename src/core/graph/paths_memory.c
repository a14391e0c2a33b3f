/*
 * paths_memory.c — the in-memory path of BFS / shortest paths
 * (xxl_paths.h): dense ids from a hash table filled as the edges come, a
 * compressed sparse row adjacency, Dijkstra with an addressable 4-ary heap
 * and BFS with a FIFO queue.  Nothing here spills; paths.c moves the
 * operator to the external path before any of it would outgrow the budget.
 *
 * Why an addressable heap and not duplicates: with decrease-key the heap
 * holds at most one entry per node, so the memory of the search is known
 * (28 bytes per node) before it starts, and the choice of path is exact.
 */
#include "core/graph/paths_internal.h"

#include <math.h>

#define NODE_BYTES 28			/* dist 8, pred, plink, pos, heap, order 4 each */
#define HASH_SLOT (sizeof(int64_t) + sizeof(uint32_t))

static inline uint64_t
hash_id(int64_t id, size_t cap)
{
	uint64_t	x = (uint64_t) id * UINT64_C(0x9E3779B97F4A7C15);

	return (x ^ (x >> 31)) & (cap - 1);
}

/* What the search will need on top of what the input holds. */
static size_t
run_bytes(const xxl_paths *p, uint64_t links, uint64_t n)
{
	uint64_t	arcs = p->directed ? links : 2 * links;

	return pvec_bytes(&p->links, links) + pvec_bytes(&p->ids, n) +
		4 * (n + 1) + sizeof(parc) * arcs + NODE_BYTES * n + 64 * 1024;
}

size_t
paths_mem_need(const xxl_paths *p)
{
	return run_bytes(p, p->nlinks, p->n);
}

/* Whether holding `links` links, n nodes and a hash of hcap slots still fits. */
static bool
fits(const xxl_paths *p, uint64_t links, uint64_t n, size_t hcap)
{
	size_t		input = pvec_bytes(&p->links, links) + pvec_bytes(&p->ids, n) + hcap * HASH_SLOT;

	return n < P_MAX_DENSE && (p->directed ? links : 2 * links) < P_MAX_DENSE &&
		input <= p->mem_limit && run_bytes(p, links, n) <= p->mem_limit;
}

static xxl_status
hash_resize(xxl_paths *p, size_t cap)
{
	xxl_env    *env = &p->env;
	int64_t    *keys = xxl_env_alloc(env, cap * sizeof(int64_t));
	uint32_t   *vals = keys ? xxl_env_alloc(env, cap * sizeof(uint32_t)) : NULL;

	if (vals == NULL)
	{
		if (keys)
			xxl_env_free(env, keys, cap * sizeof(int64_t));
		return env->err.code;
	}
	memset(vals, 0xff, cap * sizeof(uint32_t));
	for (size_t i = 0; i < p->hcap; i++)
		if (p->hvals[i] != P_UNSEEN)
		{
			size_t		h = hash_id(p->hkeys[i], cap);

			while (vals[h] != P_UNSEEN)
				h = (h + 1) & (cap - 1);
			keys[h] = p->hkeys[i];
			vals[h] = p->hvals[i];
		}
	if (p->hkeys)
	{
		xxl_env_free(env, p->hkeys, p->hcap * sizeof(int64_t));
		xxl_env_free(env, p->hvals, p->hcap * sizeof(uint32_t));
	}
	p->hkeys = keys;
	p->hvals = vals;
	p->hcap = cap;
	return XXL_OK;
}

/* The dense id of id, P_UNSEEN if it is not known. */
static uint32_t
hash_find(const xxl_paths *p, int64_t id)
{
	size_t		h;

	if (p->hcap == 0)
		return P_UNSEEN;
	h = hash_id(id, p->hcap);
	while (p->hvals[h] != P_UNSEEN)
	{
		if (p->hkeys[h] == id)
			return p->hvals[h];
		h = (h + 1) & (p->hcap - 1);
	}
	return P_UNSEEN;
}

/*
 * The dense id of id, numbering it if new; P_UNSEEN when numbering it would
 * outgrow the in-memory budget (nothing changed then).
 */
static uint32_t
hash_intern(xxl_paths *p, int64_t id, uint64_t links)
{
	size_t		h;
	int64_t    *slot;

	if ((p->n + 1) * 2 > p->hcap)
	{
		size_t		cap = p->hcap ? 2 * p->hcap : 1024;

		/* old and new table live at once while it grows */
		if (!fits(p, links, p->n + 1, cap + p->hcap) || hash_resize(p, cap) != XXL_OK)
			return P_UNSEEN;
	}
	h = hash_id(id, p->hcap);
	while (p->hvals[h] != P_UNSEEN)
	{
		if (p->hkeys[h] == id)
			return p->hvals[h];
		h = (h + 1) & (p->hcap - 1);
	}
	if (!fits(p, links, p->n + 1, p->hcap) || (slot = pvec_push(&p->env, &p->ids)) == NULL)
		return P_UNSEEN;
	*slot = id;
	p->hkeys[h] = id;
	p->hvals[h] = (uint32_t) p->n;
	return (uint32_t) p->n++;
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
	plink	   *l;

	if (!fits(p, p->nlinks + 1, p->n, p->hcap) ||
		(du = hash_intern(p, u, p->nlinks + 1)) == P_UNSEEN ||
		(dv = hash_intern(p, v, p->nlinks + 1)) == P_UNSEEN ||
		(l = pvec_push(&p->env, &p->links)) == NULL)
	{
		if (p->env.err.code == XXL_ENOMEM)
			xxl_error_clear(&p->env.err);
		return p->env.err.code == XXL_OK ? XXL_ENOMEM : p->env.err.code;
	}
	l->u = du;
	l->v = dv;
	l->w = w;
	l->eid = eid;
	p->nlinks++;
	return XXL_OK;
}

/* Search ---------------------------------------------------------------------- */

static inline bool
heap_less(const double *dist, uint32_t a, uint32_t b)
{
	return dist[a] < dist[b] || (dist[a] == dist[b] && a < b);
}

static void
heap_up(xxl_paths *p, uint32_t i, uint32_t x)
{
	while (i > 0)
	{
		uint32_t	parent = (i - 1) / 4;
		uint32_t	y = p->heap[parent];

		if (!heap_less(p->dist, x, y))
			break;
		p->heap[i] = y;
		p->pos[y] = i;
		i = parent;
	}
	p->heap[i] = x;
	p->pos[x] = i;
}

static void
heap_down(xxl_paths *p, uint32_t i, uint32_t x, uint32_t size)
{
	for (;;)
	{
		uint32_t	c = 4 * i + 1,
					best;

		if (c >= size)
			break;
		best = c;
		for (uint32_t k = c + 1; k < c + 4 && k < size; k++)
			if (heap_less(p->dist, p->heap[k], p->heap[best]))
				best = k;
		if (!heap_less(p->dist, p->heap[best], x))
			break;
		p->heap[i] = p->heap[best];
		p->pos[p->heap[i]] = i;
		i = best;
	}
	p->heap[i] = x;
	p->pos[x] = i;
}

static inline const plink *
link_at(const xxl_paths *p, uint32_t i)
{
	return (const plink *) pvec_at(&p->links, i);
}

static xxl_status
dijkstra(xxl_paths *p, const uint32_t *src, size_t nsrc)
{
	uint32_t	size = 0;

	for (size_t i = 0; i < nsrc; i++)
	{
		uint32_t	s = src[i];

		p->dist[s] = 0;
		p->pred[s] = s;
		p->plinkv[s] = P_UNSEEN;
		heap_up(p, size++, s);
		p->pushes++;
	}
	while (size > 0)
	{
		uint32_t	u = p->heap[0];

		if (!(p->dist[u] <= p->max_distance))
			break;
		if (--size > 0)
			heap_down(p, 0, p->heap[size], size);
		p->pos[u] = P_SETTLED;
		p->order[p->reached++] = u;
		if (p->has_target && u == p->target_dense)
		{
			p->target_found = true;
			break;
		}
		for (uint32_t a = p->off[u]; a < p->off[u + 1]; a++)
		{
			uint32_t	v = p->arcs[a].to;
			const plink *l;
			double		nd;

			if (p->pos[v] == P_SETTLED)
				continue;
			l = link_at(p, p->arcs[a].link);
			nd = p->dist[u] + l->w;
			p->relaxed++;
			if (p->pos[v] == P_UNSEEN)
			{
				p->dist[v] = nd;
				p->pred[v] = u;
				p->plinkv[v] = p->arcs[a].link;
				heap_up(p, size++, v);
				p->pushes++;
			}
			else if (nd < p->dist[v])
			{
				p->dist[v] = nd;
				p->pred[v] = u;
				p->plinkv[v] = p->arcs[a].link;
				heap_up(p, p->pos[v], v);
			}
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
		uint32_t	s = src[i];

		p->dist[s] = 0;
		p->pred[s] = s;
		p->plinkv[s] = P_UNSEEN;
		p->pos[s] = P_SETTLED;
		p->order[p->reached++] = s;
	}
	while (head < p->reached)
	{
		uint32_t	u = p->order[head];

		if (head == depth_end)
		{
			p->levels++;
			depth_end = p->reached;
		}
		head++;
		if (p->dist[u] >= (double) p->max_depth)
			continue;
		for (uint32_t a = p->off[u]; a < p->off[u + 1]; a++)
		{
			uint32_t	v = p->arcs[a].to;

			p->relaxed++;
			if (p->pos[v] != P_UNSEEN)
				continue;
			p->pos[v] = P_SETTLED;
			p->dist[v] = p->dist[u] + 1;
			p->pred[v] = u;
			p->plinkv[v] = p->arcs[a].link;
			p->order[p->reached++] = v;
			p->pushes++;
		}
		if (xxl_env_poll(&p->env))
			return p->env.err.code;
	}
	return XXL_OK;
}

static xxl_status
build_csr(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	uint32_t   *cur = p->heap;		/* free until the search */

	p->narcs = p->directed ? p->nlinks : 2 * p->nlinks;
	p->off = xxl_env_alloc(env, 4 * (p->n + 1));
	p->arcs = p->off ? xxl_env_alloc(env, sizeof(parc) * p->narcs) : NULL;
	if (p->arcs == NULL)
		return env->err.code;
	memset(p->off, 0, 4 * (p->n + 1));
	for (uint64_t i = 0; i < p->nlinks; i++)
	{
		const plink *l = link_at(p, (uint32_t) i);

		p->off[l->u + 1]++;
		if (!p->directed)
			p->off[l->v + 1]++;
	}
	for (uint64_t x = 0; x < p->n; x++)
	{
		p->off[x + 1] += p->off[x];
		cur[x] = p->off[x];
	}
	for (uint64_t i = 0; i < p->nlinks; i++)
	{
		const plink *l = link_at(p, (uint32_t) i);

		p->arcs[cur[l->u]++] = (parc) {l->v, (uint32_t) i};
		if (!p->directed)
			p->arcs[cur[l->v]++] = (parc) {l->u, (uint32_t) i};
		if (xxl_env_poll(env))
			return env->err.code;
	}
	return XXL_OK;
}

/* The path to the target, target first, into p->steps (the heap's array). */
static void
collect_path(xxl_paths *p)
{
	uint32_t	x = (uint32_t) p->target_dense;

	p->nsteps = 0;
	if (!p->target_found || p->plinkv[x] == P_UNSEEN)
		return;					/* unreachable, or the target is a source */
	p->steps = p->heap;
	while (p->plinkv[x] != P_UNSEEN)
	{
		p->steps[p->nsteps++] = x;
		x = p->pred[x];
	}
	p->steps[p->nsteps++] = x;
}

xxl_status
paths_mem_run(xxl_paths *p)
{
	xxl_env    *env = &p->env;
	uint32_t   *src;
	size_t		nsrc = 0;
	uint64_t	t0 = xxl_now_ns();
	xxl_status	rc;

	p->path = XXL_PATHS_IN_MEMORY;
	/* the sources and the target are the last lookups: the table can go */
	src = xxl_env_alloc(env, sizeof(uint32_t) * (p->nsources ? p->nsources : 1));
	if (src == NULL)
		return env->err.code;
	for (size_t i = 0; i < p->nsources; i++)
	{
		uint32_t	d = hash_find(p, p->sources[i]);

		if (d != P_UNSEEN)
			src[nsrc++] = d;
	}
	p->target_dense = p->has_target ? hash_find(p, p->target) : P_UNSEEN;
	if (p->hkeys)
	{
		xxl_env_free(env, p->hkeys, p->hcap * sizeof(int64_t));
		xxl_env_free(env, p->hvals, p->hcap * sizeof(uint32_t));
		p->hkeys = NULL;
		p->hvals = NULL;
		p->hcap = 0;
	}
	if ((p->dist = xxl_env_alloc(env, 8 * (p->n ? p->n : 1))) == NULL ||
		(p->pred = xxl_env_alloc(env, 4 * (p->n ? p->n : 1))) == NULL ||
		(p->plinkv = xxl_env_alloc(env, 4 * (p->n ? p->n : 1))) == NULL ||
		(p->pos = xxl_env_alloc(env, 4 * (p->n ? p->n : 1))) == NULL ||
		(p->heap = xxl_env_alloc(env, 4 * (p->n ? p->n : 1))) == NULL ||
		(p->order = xxl_env_alloc(env, 4 * (p->n ? p->n : 1))) == NULL ||
		build_csr(p) != XXL_OK)
	{
		xxl_env_free(env, src, sizeof(uint32_t) * (p->nsources ? p->nsources : 1));
		return env->err.code;
	}
	memset(p->pos, 0xff, 4 * p->n);
	p->build_ns = xxl_now_ns() - t0;
	t0 = xxl_now_ns();
	rc = p->op == XXL_PATHS_SSSP ? dijkstra(p, src, nsrc) : bfs(p, src, nsrc);
	xxl_env_free(env, src, sizeof(uint32_t) * (p->nsources ? p->nsources : 1));
	if (rc != XXL_OK)
		return rc;
	if (p->has_target)
		collect_path(p);
	p->search_ns = xxl_now_ns() - t0;
	return XXL_OK;
}

int
paths_mem_next(xxl_paths *p, int64_t *node, double *d, int64_t *pred, int64_t *edge)
{
	uint32_t	u;

	if (p->out_pos >= p->reached)
		return 0;
	u = p->order[p->out_pos++];
	*node = *(int64_t *) pvec_at(&p->ids, u);
	*d = p->dist[u];
	*pred = *(int64_t *) pvec_at(&p->ids, p->pred[u]);
	*edge = p->plinkv[u] == P_UNSEEN ? -1 : link_at(p, p->plinkv[u])->eid;
	return 1;
}

int
paths_mem_step(xxl_paths *p, int64_t *node, int64_t *edge, double *cost, double *agg)
{
	uint32_t	x;

	if (p->out_pos >= p->nsteps)
		return 0;
	x = p->steps[p->nsteps - 1 - p->out_pos];
	*node = *(int64_t *) pvec_at(&p->ids, x);
	*agg = p->dist[x];
	if (p->out_pos + 1 < p->nsteps)
	{
		const plink *l = link_at(p, p->plinkv[p->steps[p->nsteps - 2 - p->out_pos]]);

		*edge = l->eid;
		*cost = l->w;
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

	if (p->hkeys)
	{
		xxl_env_free(env, p->hkeys, p->hcap * sizeof(int64_t));
		xxl_env_free(env, p->hvals, p->hcap * sizeof(uint32_t));
	}
	p->hkeys = NULL;
	p->hvals = NULL;
	p->hcap = 0;
	if (p->off)
		xxl_env_free(env, p->off, 4 * (p->n + 1));
	if (p->arcs)
		xxl_env_free(env, p->arcs, sizeof(parc) * p->narcs);
	p->off = NULL;
	p->arcs = NULL;
#define FREE_NODES(field, size) \
	do { if (p->field) xxl_env_free(env, p->field, (size) * n); p->field = NULL; } while (0)
	FREE_NODES(dist, 8);
	FREE_NODES(pred, 4);
	FREE_NODES(plinkv, 4);
	FREE_NODES(pos, 4);
	FREE_NODES(heap, 4);
	FREE_NODES(order, 4);
#undef FREE_NODES
	p->steps = NULL;
	pvec_free(env, &p->links);
	pvec_free(env, &p->ids);
}
