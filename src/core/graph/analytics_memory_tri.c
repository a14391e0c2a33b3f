/*
 * analytics_memory_tri.c — triangles in memory (xxl_analytics.h): each
 * kept edge goes straight into the out-list of its lower (degree, id) end,
 * then for every node v and out-neighbour u the out-lists of v and u are
 * intersected (the "forward" algorithm, O(m^1.5)) by marks: a bitmap per
 * thread for the count, which runs on the threads and never lists; an
 * array of marks for the listing, which is the output pass itself.  Node
 * triangles go out in id order through the ranking.  Out-lists that do
 * not fit beside spooled edges are built and counted in ranges
 * (analytics_memory_tri_ranged.c), with this file's count of a block.
 */
#include "core/graph/analytics_memory.h"

#include <omp.h>

/*
 * Triangles: the kept edges oriented straight into out-lists, each from the
 * lower (degree, node) end to the higher, where the degree still counts
 * repeated edges: any total order lists every triangle exactly once, and
 * this one keeps out-lists short (at most sqrt(2m) entries).  The lists are
 * then rid of repeats on the threads (by the bitmaps k->bits, which the
 * count uses next), and k->deg becomes every node's true degree (out + in,
 * repeats gone).  The passes over the edges are random accesses to arrays
 * of nodes, prefetched ahead and free of branches that depend on them.
 */
static xxl_status
build_oriented(xxl_an *a)
{
	an_mem	   *k = a->mem;
	xxl_env    *env = &a->env;
	uint64_t	n = k->idm.n,
				m = an_mem_edges(k),
				w = 0,
				got;
	size_t		room;
	uint32_t   *pairs;
	an_pass		pass;
	uint32_t   *dd,
			   *ooff;
	int			threads = a->env.threads > 0 ? a->env.threads : 1;

	/*
	 * The lists hold the dense ids as they came; node triangles' rows go
	 * out in id order through the ranking (k->ids, k->order), a lookup per
	 * node instead of renumbering every edge's ends; the listing's rows
	 * read the id map's dense -> id array, and the count reads no id: what
	 * they do not read goes before the nodes' arrays come
	 */
	k->n = a->n = n;
	if (a->op == XXL_AN_TRIANGLE_COUNT)
		idmap_free(env, &k->idm);
	else if (a->op == XXL_AN_TRIANGLES)
		idmap_drop_table(env, &k->idm);
	k->bit_words = (n + 63) / 64;
	k->ooff = an_alloc(a, (n + 1) * sizeof(uint32_t), &k->ooff_bytes);
	k->deg = k->ooff ? an_alloc(a, n * sizeof(uint32_t), &k->deg_bytes) : NULL;
	k->bits = k->deg ? an_alloc(a, threads * k->bit_words * sizeof(uint64_t), &k->bits_bytes) : NULL;
	if (k->bits == NULL)
		return an_fail(a);
	memset(k->bits, 0, k->bits_bytes);
	memset(k->ooff, 0, (n + 1) * sizeof(uint32_t));
	if (a->op == XXL_AN_NODE_TRIANGLES)
	{
		if (an_mem_rank_order(a) != XXL_OK)
			return an_fail(a);
		idmap_free(env, &k->idm);
	}
	ooff = k->ooff;
	if (an_pass_open(a, &pass, false) != XXL_OK)
		return an_fail(a);
	while ((got = an_pass_next(a, &pass, &pairs)) != 0 && got != UINT64_MAX)
		for (uint64_t i = 0; i < got; i++)
		{
			const uint32_t *d = pairs + 2 * i;

			if (i + PF_AHEAD < got)
			{
				__builtin_prefetch(&ooff[d[2 * PF_AHEAD] + 1]);
				__builtin_prefetch(&ooff[d[2 * PF_AHEAD + 1] + 1]);
			}
			if (d[0] != d[1])
			{
				ooff[d[0] + 1]++;
				ooff[d[1] + 1]++;
			}
		}
	if (an_pass_close(a, &pass, got == 0) != XXL_OK || got != 0)
		return an_fail(a);
	/* degrees with repeats, then out-degrees */
	dd = k->deg;
	for (uint64_t x = 0; x < n; x++)
		dd[x] = (uint32_t) k->ooff[x + 1];
	memset(k->ooff, 0, (n + 1) * sizeof(uint32_t));
	if (an_pass_open(a, &pass, true) != XXL_OK)
		return an_fail(a);
	while ((got = an_pass_next(a, &pass, &pairs)) != 0 && got != UINT64_MAX)
		for (uint64_t i = 0; i < got; i++)
		{
			uint32_t   *d = pairs + 2 * i;

			if (i + PF_AHEAD < got)
			{
				const uint32_t *f = d + 2 * PF_AHEAD;

				__builtin_prefetch(&dd[f[0]]);
				__builtin_prefetch(&dd[f[1]]);
				__builtin_prefetch(&ooff[f[0] + 1]);
				__builtin_prefetch(&ooff[f[1] + 1]);
			}
			if (d[0] != d[1])
			{
				uint32_t	x = d[0],
							y = d[1];
				/* (degree, node) as one key, and a mask: no branch to mispredict */
				uint32_t	swap = -(uint32_t) ((((uint64_t) dd[x] << 32) | x) >
											   (((uint64_t) dd[y] << 32) | y)),
							lo = x ^ ((x ^ y) & swap);

				d[0] = lo;
				d[1] = x ^ y ^ lo;
				ooff[lo + 1]++;
			}
		}
	if (an_pass_close(a, &pass, got == 0) != XXL_OK || got != 0 || xxl_env_poll_n(env, m))
		return an_fail(a);
	/* dd becomes the out-degree (then the degree: below, or as the ranges are counted) */
	for (uint64_t x = 0; x < n; x++)
		w += ooff[x + 1];
	if (k->spooled && (room = an_mem_tri_list_room(a, w)) > 0)
		return an_tri_ranged_build(a, room);
	w = an_mem_build_lists(a, k->ooff, &k->oadj, &k->oadj_bytes, true, dd);
	if (w == UINT64_MAX)
		return an_fail(a);
	for (uint64_t x = 0; x < n; x++)
		if (dd[x] > a->max_out)
			a->max_out = dd[x];
	for (uint64_t i = 0; i < w; i++)
		dd[k->oadj[i]]++;
	for (uint64_t x = 0; x < n; x++)
		if (dd[x] > a->max_degree)
			a->max_degree = dd[x];
	a->links = 2 * w;
	if (a->op == XXL_AN_TRIANGLES)
	{
		/* the listing's marks */
		k->aux = an_alloc(a, n * sizeof(uint32_t), &k->aux_bytes);
		if (k->aux == NULL)
			return an_fail(a);
		memset(k->aux, 0xff, k->aux_bytes);
	}
	return xxl_env_poll_n(env, m + n) ? an_fail(a) : XXL_OK;
}

/*
 * Triangles at v, whose out-list is vl[0 .. vn): v's out-neighbours marked
 * in the thread's bitmap bm, then for each out-neighbour u on the side
 * every out-neighbour x of u looked up in it (no order needed, no branch
 * but on a hit); counts (if any) get one at u and x, atomically (threads
 * share them).  Returns the triangles, and the entries looked up in *q;
 * bm is left zero.
 */
static uint64_t
count_at(const an_tri_side *s, const uint32_t *vl, uint64_t vn, uint64_t *bm, uint64_t *counts,
		 uint64_t *q)
{
	uint64_t	t = 0;

	for (uint64_t i = 0; i < vn; i++)
		an_bit_set(bm, vl[i]);
	for (uint64_t i = 0; i < vn; i++)
	{
		uint32_t	u = vl[i];
		const uint32_t *r,
				   *re;

		if (u - s->lo >= s->hi - s->lo)
			continue;
		r = s->adj + (s->ooff[u] - s->base);
		re = s->adj + (s->ooff[u + 1] - s->base);
		*q += re - r;
		for (; r < re; r++)
		{
			uint32_t	x = *r;
			uint64_t	hit = an_bit_has(bm, x);

			t += hit;
			if (counts && hit)
			{
				__atomic_fetch_add(&counts[u], 1, __ATOMIC_RELAXED);
				__atomic_fetch_add(&counts[x], 1, __ATOMIC_RELAXED);
			}
		}
	}
	for (uint64_t i = 0; i < vn; i++)
		an_bit_clear_word(bm, vl[i]);
	return t;
}

/* (analytics_memory.h) */
void
an_tri_count_block(xxl_an *a, uint64_t from, uint64_t to, const uint32_t *vadj,
				   const an_tri_side *side, uint64_t *counts, uint64_t *t, uint64_t *q)
{
	an_mem	   *k = a->mem;
	const uint32_t *ooff = k->ooff;
	uint64_t	bt = 0,
				bq = 0,
				at = ooff[from];
	int			threads = a->env.threads > 0 ? a->env.threads : 1;

	XXL_OMP_PARALLEL(for schedule(dynamic, 256) num_threads(threads) reduction(+:bt, bq))
	for (uint64_t v = from; v < to; v++)
	{
		uint64_t	vq = 0,
					vt;

		/* the side's lists the next nodes will read (their heads are random) */
		if (v + 2 < to)
			for (uint64_t i = ooff[v + 2]; i < ooff[v + 3]; i++)
			{
				uint32_t	u = vadj[i - at];

				if (u - side->lo < side->hi - side->lo)
					__builtin_prefetch(&side->ooff[u]);
			}
		if (v + 1 < to)
			for (uint64_t i = ooff[v + 1]; i < ooff[v + 2]; i++)
			{
				uint32_t	u = vadj[i - at];

				if (u - side->lo < side->hi - side->lo)
					__builtin_prefetch(&side->adj[side->ooff[u] - side->base]);
			}
		vt = count_at(side, vadj + (ooff[v] - at), ooff[v + 1] - ooff[v],
					  k->bits + (uint64_t) omp_get_thread_num() * k->bit_words, counts, &vq);
		if (counts && vt)
			__atomic_fetch_add(&counts[v], vt, __ATOMIC_RELAXED);
		bt += vt;
		bq += vq;
	}
	*t += bt;
	*q += bq;
}

/* Count every triangle (and with counts, at each node): blocks of nodes on the threads. */
static xxl_status
count_all(xxl_an *a, uint64_t *counts)
{
	an_mem	   *k = a->mem;
	an_tri_side whole = {k->ooff, k->oadj, 0, (uint32_t) k->n, 0};
	const uint64_t block = 16384;

	a->triangles = a->queries = 0;
	for (uint64_t from = 0; from < k->n; from += block)
	{
		uint64_t	to = from + block < k->n ? from + block : k->n;

		an_tri_count_block(a, from, to, k->oadj + k->ooff[from], &whole, counts, &a->triangles,
						   &a->queries);
		if (xxl_env_poll_n(&a->env, k->ooff[to] - k->ooff[from] + (to - from)))
			return an_fail(a);
	}
	return XXL_OK;
}

/* The listing: the next triangle of the forward pass, from where it stopped. */
static int
next_triangle(xxl_an *a, xxl_an_row *row)
{
	an_mem	   *k = a->mem;

	for (; k->v < k->n; k->v++, k->i = 0, k->v_marked = false)
	{
		uint64_t	v = k->v,
					b = k->ooff[v],
					e = k->ooff[v + 1];

		if (!k->v_marked)
		{
			for (uint64_t i = b; i < e; i++)
				k->aux[k->oadj[i]] = (uint32_t) v;
			k->v_marked = true;
			k->i = b;
			k->j = b < e ? k->ooff[k->oadj[b]] : 0;
			if (xxl_env_poll_n(&a->env, e - b + 1))
				return -1;
		}
		for (; k->i < e; k->i++, k->j = k->i < e ? k->ooff[k->oadj[k->i]] : 0)
		{
			uint32_t	u = k->oadj[k->i];

			while (k->j < k->ooff[u + 1])
			{
				uint32_t	x = k->oadj[k->j++];

				a->queries++;
				if (k->aux[x] == v)
				{
					row->v[0] = idmap_id(&k->idm, v);
					row->v[1] = idmap_id(&k->idm, u);
					row->v[2] = idmap_id(&k->idm, x);
					an_sort3(row->v);
					a->triangles++;
					return 1;
				}
			}
		}
	}
	return 0;
}

xxl_status
an_mem_tri_run(xxl_an *a, uint64_t t0)
{
	an_mem	   *k = a->mem;

	if (build_oriented(a) != XXL_OK)
		return an_fail(a);
	a->build_ns = xxl_now_ns() - t0;
	if (a->op == XXL_AN_TRIANGLES && k->nranges == 0)
	{
		an_free(a, (void **) &k->bits, &k->bits_bytes);
		return XXL_OK;
	}
	if (a->op == XXL_AN_NODE_TRIANGLES)
	{
		k->counts = an_alloc(a, k->n * sizeof(uint64_t), &k->counts_bytes);
		if (k->counts == NULL)
			return an_fail(a);
		memset(k->counts, 0, k->counts_bytes);
	}
	t0 = xxl_now_ns();
	if ((k->nranges ? an_tri_ranged_run(a, k->counts) : count_all(a, k->counts)) != XXL_OK)
		return an_fail(a);
	an_free(a, (void **) &k->bits, &k->bits_bytes);
	a->compute_ns = xxl_now_ns() - t0;
	return XXL_OK;
}

int
an_mem_tri_next(xxl_an *a, xxl_an_row *row)
{
	an_mem	   *k = a->mem;
	uint64_t	v;
	uint32_t	x;
	uint64_t	d,
				t;

	if (a->op == XXL_AN_TRIANGLES)
		return k->nranges ? an_tri_ranged_next(a, row) : next_triangle(a, row);
	if (a->op == XXL_AN_TRIANGLE_COUNT)
	{
		if (k->v > 0)
			return 0;
		k->v = 1;
		row->v[0] = (int64_t) a->triangles;
		return 1;
	}
	/* node triangles: ranks in id order, each to its dense id */
	if (k->v >= k->n)
		return 0;
	v = k->v++;
	x = k->order[v];
	d = k->deg[x];
	t = k->counts[x];
	/* (the next node's, whose dense id is random) */
	if (v + PF_AHEAD < k->n)
	{
		__builtin_prefetch(&k->deg[k->order[v + PF_AHEAD]]);
		__builtin_prefetch(&k->counts[k->order[v + PF_AHEAD]]);
	}
	if (xxl_env_poll(&a->env))
		return -1;
	row->v[0] = k->ids[v];
	row->v[1] = (int64_t) t;
	row->v[2] = (int64_t) d;
	row->x = d < 2 ? 0.0 : 2.0 * (double) t / ((double) d * (double) (d - 1));
	return 1;
}
