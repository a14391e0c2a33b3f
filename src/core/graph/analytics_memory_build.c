/*
 * analytics_memory_build.c — the in-memory analytics' builds from the kept
 * edges (analytics_memory.h): passes over the edges wherever they are (the
 * pvec in memory, or the spool of a semi-external run), the ranking of the
 * ids, and the adjacency arrays (CSR) of MIS and coloring, whose lists the
 * triangles' out-lists share the fill and packing of.
 */
#include "core/graph/analytics_memory.h"

#include <omp.h>
#include <stdlib.h>

/* Passes over the kept edges ------------------------------------------------------ */

/* (analytics_memory.h) */
uint64_t
an_mem_edges(const an_mem *k)
{
	return k->spooled ? k->dense.nbytes / k->dense_rec : k->ends.n;
}

/* (analytics_memory.h) */
xxl_status
an_pass_open(xxl_an *a, an_pass *p, bool rewrite)
{
	an_mem	   *k = a->mem;

	memset(p, 0, sizeof(*p));
	p->spooled = k->spooled;
	p->rewrite = rewrite;
	p->m = an_mem_edges(k);
	if (!p->spooled)
		return XXL_OK;
	if ((p->buf = an_alloc(a, AN_PASS_SCRATCH, &p->buf_bytes)) == NULL ||
		xxl_spool_finish(&k->dense) != XXL_OK ||
		xxl_spool_reader_open(&p->rd, &k->dense, false) != XXL_OK)
		return an_fail(a);
	p->rd_open = true;
	if (rewrite)
		xxl_spool_init(&p->out, &a->env, an_mem_dense_share(a));
	return XXL_OK;
}

/* (analytics_memory.h) */
uint64_t
an_pass_next(xxl_an *a, an_pass *p, uint32_t **pairs)
{
	an_mem	   *k = a->mem;
	size_t		got = 0;

	if (!p->spooled)
	{
		/* a chunk of the pvec, in place */
		uint64_t	per = UINT64_C(1) << k->ends.shift,
					n = p->m - p->e < per ? p->m - p->e : per;

		if (n == 0)
			return 0;
		*pairs = pvec_at(&k->ends, p->e);
		p->e += n;
		return n;
	}
	/* the last piece as the caller left it */
	if (p->rewrite && p->last > 0 && xxl_spool_write(&p->out, p->buf, p->last * 8) != XXL_OK)
		return UINT64_MAX;
	p->last = 0;
	if (xxl_spool_read_upto(&p->rd, p->buf, (p->m - p->e) * 8 < p->buf_bytes ? (p->m - p->e) * 8 : p->buf_bytes,
							&got) != XXL_OK)
		return UINT64_MAX;
	if (got % 8 != 0)
	{
		xxl_error_set(&a->env.err, XXL_EIO, 0, "a spool of edges ends inside a pair");
		return UINT64_MAX;
	}
	p->last = got / 8;
	p->e += p->last;
	*pairs = p->buf;
	return p->last;
}

/* (analytics_memory.h) */
xxl_status
an_pass_close(xxl_an *a, an_pass *p, bool ok)
{
	an_mem	   *k = a->mem;
	xxl_status	rc = XXL_OK;

	if (!p->spooled)
		return XXL_OK;
	if (p->rd_open)
		xxl_spool_reader_close(&p->rd);
	if (p->rewrite)
	{
		if (ok && p->last > 0)
			rc = xxl_spool_write(&p->out, p->buf, p->last * 8);
		if (ok && rc == XXL_OK && (rc = xxl_spool_finish(&p->out)) == XXL_OK)
		{
			xxl_spool_free(&k->dense);
			k->dense = p->out;
		}
		else
			xxl_spool_free(&p->out);
	}
	an_free(a, (void **) &p->buf, &p->buf_bytes);
	return rc;
}

/* (analytics_memory.h) */
void
an_mem_drop_edges(xxl_an *a)
{
	an_mem	   *k = a->mem;

	pvec_free(&a->env, &k->ends);
	xxl_spool_free(&k->dense);
	xxl_spool_init(&k->dense, &a->env, an_mem_dense_share(a));
}

/* Building the adjacency arrays ------------------------------------------------- */

static int
cmp_u32(const void *x, const void *y)
{
	uint32_t	a = *(const uint32_t *) x,
				b = *(const uint32_t *) y;

	return (a > b) - (a < b);
}

static void
sort_u32(uint32_t *p, uint64_t n)
{
	if (n > 24)
	{
		qsort(p, n, sizeof(uint32_t), cmp_u32);
		return;
	}
	for (uint64_t i = 1; i < n; i++)
	{
		uint32_t	x = p[i];
		uint64_t	j = i;

		for (; j > 0 && p[j - 1] > x; j--)
			p[j] = p[j - 1];
		p[j] = x;
	}
}

/*
 * (analytics_memory.h) Each list rid of its repeats on the threads, then
 * packed.  Without bits each list is sorted first; with bits (zero, left
 * zero) the repeats are found by them and each list keeps the order it was
 * filled in, which costs no sort.
 */
uint64_t
an_mem_pack_lists(uint32_t *off, uint32_t *adj, uint64_t n, uint32_t *len, int threads,
				  uint64_t *bits, uint64_t words)
{
	uint64_t	w = 0;

	XXL_OMP_PARALLEL(for schedule(dynamic, 4096) num_threads(threads))
	for (uint64_t x = 0; x < n; x++)
	{
		uint64_t	start = x == 0 ? 0 : off[x - 1],
					end = off[x],
					o = start;

		if (bits)
		{
			uint64_t   *bm = bits + (uint64_t) omp_get_thread_num() * words;

			for (uint64_t i = start; i < end; i++)
			{
				uint32_t	y = adj[i];

				if (!an_bit_has(bm, y))
				{
					an_bit_set(bm, y);
					adj[o++] = y;
				}
			}
			for (uint64_t i = start; i < o; i++)
				an_bit_clear_word(bm, adj[i]);
		}
		else
		{
			sort_u32(adj + start, end - start);
			for (uint64_t i = start; i < end; i++)
				if (i == start || adj[i] != adj[i - 1])
					adj[o++] = adj[i];
		}
		len[x] = (uint32_t) (o - start);
	}
	for (uint64_t x = 0, start = 0; x < n; x++)
	{
		uint64_t	end = off[x];

		/* short lists: a loop, not a call (w <= start, so forward is safe) */
		if (w != start)
			for (uint32_t i = 0; i < len[x]; i++)
				adj[w + i] = adj[start + i];
		off[x] = (uint32_t) w;
		w += len[x];
		start = end;
	}
	off[n] = (uint32_t) w;
	return w;
}

/* (analytics_memory.h) */
uint32_t *
an_mem_rank_ids(xxl_an *a, size_t *rank_bytes)
{
	an_mem	   *k = a->mem;
	uint64_t	n = k->idm.n;
	idmap_ranking r = {0};

	k->n = a->n = n;
	r.ids = k->ids = an_alloc(a, n * sizeof(int64_t), &k->ids_bytes);
	r.rank = k->ids ? an_alloc(a, n * sizeof(uint32_t), rank_bytes) : NULL;
	if (r.rank == NULL || idmap_each_sorted(&a->env, &k->idm, idmap_rank_visit, &r) != XXL_OK)
	{
		if (r.rank)
			xxl_env_free(&a->env, r.rank, *rank_bytes);
		return NULL;
	}
	idmap_free(&a->env, &k->idm);
	return r.rank;
}

/* (analytics_memory.h) */
xxl_status
an_mem_rank_ends(xxl_an *a, uint32_t *off)
{
	an_mem	   *k = a->mem;
	xxl_env    *env = &a->env;
	uint64_t	m = an_mem_edges(k),
				got;
	size_t		rank_bytes;
	an_pass		pass;
	uint32_t   *pairs,
			   *rank;

	if ((rank = an_mem_rank_ids(a, &rank_bytes)) == NULL)
		return an_fail(a);
	if (an_pass_open(a, &pass, true) != XXL_OK)
	{
		xxl_env_free(env, rank, rank_bytes);
		return an_fail(a);
	}
	while ((got = an_pass_next(a, &pass, &pairs)) != 0 && got != UINT64_MAX)
		for (uint64_t i = 0; i < got; i++)
		{
			uint32_t   *d = pairs + 2 * i;

			/* ids come in random order: the ranks a few edges ahead */
			if (i + PF_AHEAD < got)
			{
				__builtin_prefetch(&rank[d[2 * PF_AHEAD]]);
				__builtin_prefetch(&rank[d[2 * PF_AHEAD + 1]]);
			}
			d[0] = rank[d[0]];
			d[1] = rank[d[1]];
			if (off && d[0] != d[1])
			{
				off[d[0] + 1]++;
				off[d[1] + 1]++;
			}
		}
	xxl_env_free(env, rank, rank_bytes);
	if (an_pass_close(a, &pass, got == 0) != XXL_OK || got != 0)
		return an_fail(a);
	return xxl_env_poll_n(env, m) ? an_fail(a) : XXL_OK;
}

/* (analytics_memory.h) */
xxl_status
an_mem_rank_order(xxl_an *a)
{
	an_mem	   *k = a->mem;
	uint64_t	n = k->idm.n;
	idmap_ranking o = {0};

	o.ids = k->ids = an_alloc(a, n * sizeof(int64_t), &k->ids_bytes);
	o.order = k->order = k->ids ? an_alloc(a, n * sizeof(uint32_t), &k->order_bytes) : NULL;
	if (o.order == NULL || idmap_each_sorted(&a->env, &k->idm, idmap_rank_visit, &o) != XXL_OK)
		return an_fail(a);
	return XXL_OK;
}

/* (analytics_memory.h) */
uint64_t
an_mem_build_lists(xxl_an *a, uint32_t *off, uint32_t **adj, size_t *adj_bytes, bool oriented,
				   uint32_t *len)
{
	an_mem	   *k = a->mem;
	uint64_t	n = k->n,
				got;
	uint32_t   *cur = off,
			   *l,
			   *pairs;
	int			threads = a->env.threads > 0 ? a->env.threads : 1;
	an_pass		pass;

	for (uint64_t x = 0; x < n; x++)
		off[x + 1] += off[x];
	l = *adj = an_alloc(a, off[n] * sizeof(uint32_t), adj_bytes);
	if (l == NULL || an_pass_open(a, &pass, false) != XXL_OK)
		return UINT64_MAX;
	/* off[x] is x's fill cursor until the lists are full (then x's end) */
	while ((got = an_pass_next(a, &pass, &pairs)) != 0 && got != UINT64_MAX)
		for (uint64_t i = 0; i < got; i++)
		{
			const uint32_t *d = pairs + 2 * i;

			/* the ends are random: their cursors, then their entries, ahead */
			if (i + 2 * PF_AHEAD < got)
			{
				__builtin_prefetch(&cur[d[4 * PF_AHEAD]]);
				__builtin_prefetch(&cur[d[4 * PF_AHEAD + 1]]);
			}
			if (i + PF_AHEAD < got)
			{
				__builtin_prefetch(&l[cur[d[2 * PF_AHEAD]]], 1);
				if (!oriented)
					__builtin_prefetch(&l[cur[d[2 * PF_AHEAD + 1]]], 1);
			}
			if (d[0] == d[1])
				continue;
			l[cur[d[0]]++] = d[1];
			if (!oriented)
				l[cur[d[1]]++] = d[0];
		}
	if (an_pass_close(a, &pass, got == 0) != XXL_OK || got != 0)
		return UINT64_MAX;
	an_mem_drop_edges(a);
	return an_mem_pack_lists(off, l, n, len, threads, oriented ? k->bits : NULL, k->bit_words);
}

/* (analytics_memory.h) */
xxl_status
an_mem_build_csr(xxl_an *a)
{
	an_mem	   *k = a->mem;
	xxl_env    *env = &a->env;
	uint64_t	n = k->idm.n,
				w;
	size_t		len_bytes;
	uint32_t   *len;

	/* degrees with duplicates, in rank space, then the lists */
	k->off = an_alloc(a, (n + 1) * sizeof(uint32_t), &k->off_bytes);
	if (k->off == NULL)
		return an_fail(a);
	memset(k->off, 0, (n + 1) * sizeof(uint32_t));
	if (an_mem_rank_ends(a, k->off) != XXL_OK)
		return an_fail(a);
	len = an_alloc(a, n * sizeof(uint32_t), &len_bytes);
	if (len == NULL)
		return an_fail(a);
	w = an_mem_build_lists(a, k->off, &k->adj, &k->adj_bytes, false, len);
	for (uint64_t x = 0; w != UINT64_MAX && x < n; x++)
		if (len[x] > a->max_degree)
			a->max_degree = len[x];
	an_free(a, (void **) &len, &len_bytes);
	if (w == UINT64_MAX || xxl_env_poll_n(env, w))
		return an_fail(a);
	a->links = w;
	return XXL_OK;
}

