/*
 * analytics_memory_tri_ranged.c — triangles over spooled edges whose
 * out-lists do not fit beside the nodes' arrays (analytics_memory.h).
 *
 * The nodes are cut into ranges whose out-lists fit the room left, or of
 * one node each.  Each range's lists are filled by a pass over the spooled
 * (oriented) edges, rid of repeats and written to a spool of their own.
 * Then, range by range, one range's lists are held in memory while every
 * node's list streams past (the held range's in place, the others' from
 * their spools through a scratch): a node v's out-neighbours are marked,
 * and the list of each out-neighbour u in the held range is looked up in
 * the marks (analytics_memory_tri.c's count of a block).  Each pair (v, u)
 * is met once, in u's range, so each triangle is found once, as in memory.
 * A range costs a pass over the edges and one over every list; there are
 * at most AN_TRI_RANGES_MAX of them.
 *
 * The listing writes its triangles (ids, ascending) to a spool as the
 * ranges are counted, and hands them out from it.
 */
#include "core/graph/analytics_memory.h"

/*
 * Range [r, e)'s lists into l: ooff[x] (x's first entry, repeats
 * included) becomes x's cursor within the range; the pass fills, the
 * lists are packed (deg[x] their lengths) and ooff[x] becomes x's start
 * among all packed lists, which begin at `before`.  A node alone in its
 * range whose entries outgrow the room is rid of its repeats as they come.
 * Returns the range's entries, UINT64_MAX on an error.
 */
static uint64_t
fill_range(xxl_an *a, uint32_t r, uint32_t e, uint64_t room, uint64_t before)
{
	an_mem	   *k = a->mem;
	uint32_t   *ooff = k->ooff,
			   *l = k->oadj;
	uint64_t	first = ooff[r],
				next = ooff[e],
				w = 0,
				got;
	bool		alone = next - first > room;
	an_pass		pass;
	uint32_t   *pairs;

	for (uint32_t x = r; x < e; x++)
		ooff[x] -= (uint32_t) first;
	if (an_pass_open(a, &pass, false) != XXL_OK)
		return UINT64_MAX;
	while ((got = an_pass_next(a, &pass, &pairs)) != 0 && got != UINT64_MAX)
		for (uint64_t i = 0; i < got; i++)
		{
			const uint32_t *d = pairs + 2 * i;

			if (i + PF_AHEAD < got)
				__builtin_prefetch(&ooff[d[2 * PF_AHEAD]]);
			if (d[0] - r >= e - r || d[0] == d[1])
				continue;
			if (!alone)
				l[ooff[d[0]]++] = d[1];
			else if (!an_bit_has(k->bits, d[1]))
			{
				/* (at most sqrt(2m) distinct: within the room, see tri_range_least) */
				an_bit_set(k->bits, d[1]);
				l[w++] = d[1];
			}
		}
	if (an_pass_close(a, &pass, got == 0) != XXL_OK || got != 0)
		return UINT64_MAX;
	if (alone)
	{
		for (uint64_t i = 0; i < w; i++)
			an_bit_clear_word(k->bits, l[i]);
		k->deg[r] = (uint32_t) w;
		ooff[r] = 0;
	}
	else
		w = an_mem_pack_lists(ooff + r, l, e - r, k->deg + r, a->env.threads > 0 ? a->env.threads : 1,
							  k->bits, k->bit_words);
	ooff[e] = (uint32_t) next;
	for (uint32_t x = r; x < e; x++)
		ooff[x] += (uint32_t) before;
	return w;
}

/* (analytics_memory.h) */
xxl_status
an_tri_ranged_build(xxl_an *a, size_t room)
{
	an_mem	   *k = a->mem;
	uint32_t   *ooff = k->ooff;
	uint64_t	n = k->n,
				cap = room / sizeof(uint32_t),
				most = 0,
				all = 0;

	for (uint64_t x = 0; x < n; x++)
		ooff[x + 1] += ooff[x];
	/* whole nodes up to the room, or one node */
	k->nranges = 0;
	for (uint64_t r = 0, e; r < n; r = e)
	{
		for (e = r + 1; e < n && ooff[e + 1] - ooff[r] <= cap; e++)
			;
		if (k->nranges == AN_TRI_RANGES_MAX)
		{
			xxl_error_set(&a->env.err, XXL_EINVAL, 0, "triangles: more than %d ranges of out-lists",
						  AN_TRI_RANGES_MAX);
			return an_fail(a);
		}
		k->range_at[k->nranges++] = (uint32_t) r;
		if (ooff[e] - ooff[r] > most)
			most = ooff[e] - ooff[r];
	}
	k->range_at[k->nranges] = (uint32_t) n;
	a->tri_ranges = k->nranges;
	k->oadj = an_alloc(a, (most < cap ? most : cap) * sizeof(uint32_t), &k->oadj_bytes);
	if (k->oadj == NULL)
		return an_fail(a);
	for (uint32_t j = 0; j < k->nranges; j++)
	{
		uint64_t	w = fill_range(a, k->range_at[j], k->range_at[j + 1], cap, all);

		/* (on disk at once: they are what memory has no room for) */
		xxl_spool_init(&k->lists[j], &a->env, 1);
		if (w == UINT64_MAX || xxl_spool_write(&k->lists[j], k->oadj, w * sizeof(uint32_t)) != XXL_OK ||
			xxl_spool_finish(&k->lists[j]) != XXL_OK ||
			xxl_env_poll_n(&a->env, an_mem_edges(k) + (k->range_at[j + 1] - k->range_at[j])))
			return an_fail(a);
		all += w;
	}
	ooff[n] = (uint32_t) all;
	k->held = k->nranges - 1;
	an_mem_drop_edges(a);
	for (uint64_t x = 0; x < n; x++)
		if (k->deg[x] > a->max_out)
			a->max_out = k->deg[x];
	a->links = 2 * all;
	return XXL_OK;
}

/* Node v's out-list vl[0 .. vn) against the side: its triangles into k->found. */
static xxl_status
list_at(xxl_an *a, uint32_t v, const uint32_t *vl, uint64_t vn, const an_tri_side *s)
{
	an_mem	   *k = a->mem;
	xxl_status	rc = XXL_OK;

	for (uint64_t i = 0; i < vn; i++)
		an_bit_set(k->bits, vl[i]);
	for (uint64_t i = 0; i < vn && rc == XXL_OK; i++)
	{
		uint32_t	u = vl[i];

		if (u - s->lo >= s->hi - s->lo)
			continue;
		for (uint64_t r = s->ooff[u] - s->base; r < s->ooff[u + 1] - s->base && rc == XXL_OK; r++)
		{
			uint32_t	x = s->adj[r];
			int64_t		t[3];

			a->queries++;
			if (!an_bit_has(k->bits, x))
				continue;
			t[0] = idmap_id(&k->idm, v);
			t[1] = idmap_id(&k->idm, u);
			t[2] = idmap_id(&k->idm, x);
			an_sort3(t);
			a->triangles++;
			rc = xxl_spool_write(&k->found, t, sizeof(t));
		}
	}
	for (uint64_t i = 0; i < vn; i++)
		an_bit_clear_word(k->bits, vl[i]);
	return rc == XXL_OK ? XXL_OK : an_fail(a);
}

/*
 * Range i's lists past the held range's (the side): from its spool in
 * blocks the scratch holds, or in place when it is the held range.  The
 * first time round every node's degree gets its in-entries.
 */
static xxl_status
stream_range(xxl_an *a, uint32_t i, const an_tri_side *side, uint64_t *counts, bool first)
{
	an_mem	   *k = a->mem;
	const uint32_t *ooff = k->ooff;
	uint32_t	r = k->range_at[i],
				e = k->range_at[i + 1];
	uint64_t	cap = k->scratch_bytes / sizeof(uint32_t);
	bool		held = i == k->held;
	xxl_spool_reader rd;
	xxl_status	rc = XXL_OK;

	if (!held && xxl_spool_reader_open(&rd, &k->lists[i], false) != XXL_OK)
		return an_fail(a);
	for (uint64_t from = r, to; from < e && rc == XXL_OK; from = to)
	{
		const uint32_t *vadj;

		if (held)
		{
			to = from + 16384 < e ? from + 16384 : e;
			vadj = k->oadj + (ooff[from] - ooff[r]);
		}
		else
		{
			/* (a list fits the scratch: it was sized for the longest) */
			for (to = from + 1; to < e && ooff[to + 1] - ooff[from] <= cap; to++)
				;
			if (xxl_spool_read_exact(&rd, k->scratch, (ooff[to] - ooff[from]) * sizeof(uint32_t)) != XXL_OK)
			{
				rc = an_fail(a);
				break;
			}
			vadj = k->scratch;
		}
		if (first)
			for (uint64_t j = 0; j < ooff[to] - ooff[from]; j++)
				k->deg[vadj[j]]++;
		if (a->op != XXL_AN_TRIANGLES)
			an_tri_count_block(a, from, to, vadj, side, counts, &a->triangles, &a->queries);
		else
			for (uint64_t v = from; v < to && rc == XXL_OK; v++)
				rc = list_at(a, (uint32_t) v, vadj + (ooff[v] - ooff[from]), ooff[v + 1] - ooff[v], side);
		if (rc == XXL_OK && xxl_env_poll_n(&a->env, ooff[to] - ooff[from] + (to - from)))
			rc = an_fail(a);
	}
	if (!held)
		xxl_spool_reader_close(&rd);
	return rc;
}

/* (analytics_memory.h) */
xxl_status
an_tri_ranged_run(xxl_an *a, uint64_t *counts)
{
	an_mem	   *k = a->mem;
	size_t		scratch = 4 * (a->max_out + 1);

	if (scratch < AN_PASS_SCRATCH)
		scratch = AN_PASS_SCRATCH;
	k->scratch = an_alloc(a, scratch, &k->scratch_bytes);
	if (k->scratch == NULL)
		return an_fail(a);
	if (a->op == XXL_AN_TRIANGLES)
		xxl_spool_init(&k->found, &a->env, an_mem_dense_share(a));
	a->triangles = a->queries = 0;
	for (uint32_t step = 0; step < k->nranges; step++)
	{
		/* the range built last is held already, then the others in order */
		uint32_t	j = (step + k->nranges - 1) % k->nranges;
		an_tri_side side = {k->ooff, k->oadj, k->range_at[j], k->range_at[j + 1], k->ooff[k->range_at[j]]};

		if (j != k->held)
		{
			xxl_spool_reader rd;
			xxl_status	rc;

			if (xxl_spool_reader_open(&rd, &k->lists[j], false) != XXL_OK)
				return an_fail(a);
			rc = xxl_spool_read_exact(&rd, k->oadj, (k->ooff[side.hi] - side.base) * sizeof(uint32_t));
			xxl_spool_reader_close(&rd);
			if (rc != XXL_OK)
				return an_fail(a);
			k->held = j;
		}
		for (uint32_t i = 0; i < k->nranges; i++)
			if (stream_range(a, i, &side, counts, step == 0) != XXL_OK)
				return an_fail(a);
	}
	for (uint64_t x = 0; x < k->n; x++)
		if (k->deg[x] > a->max_degree)
			a->max_degree = k->deg[x];
	an_free(a, (void **) &k->scratch, &k->scratch_bytes);
	if (a->op == XXL_AN_TRIANGLES)
	{
		if (xxl_spool_finish(&k->found) != XXL_OK ||
			xxl_spool_reader_open(&k->found_rd, &k->found, true) != XXL_OK)
			return an_fail(a);
		k->found_open = true;
		k->v = 0;
	}
	return XXL_OK;
}

/* (analytics_memory.h) */
int
an_tri_ranged_next(xxl_an *a, xxl_an_row *row)
{
	an_mem	   *k = a->mem;
	const unsigned char *p;

	if (k->v >= a->triangles)
		return 0;
	if (xxl_spool_read(&k->found_rd, 3 * sizeof(int64_t), &p) != XXL_OK || xxl_env_poll(&a->env))
		return -1;
	memcpy(row->v, p, 3 * sizeof(int64_t));
	k->v++;
	return 1;
}

/* (analytics_memory.h) */
void
an_tri_ranged_release(xxl_an *a)
{
	an_mem	   *k = a->mem;

	if (k->found_open)
		xxl_spool_reader_close(&k->found_rd);
	k->found_open = false;
	xxl_spool_free(&k->found);
	for (uint32_t j = 0; j < AN_TRI_RANGES_MAX; j++)
		xxl_spool_free(&k->lists[j]);
	an_free(a, (void **) &k->scratch, &k->scratch_bytes);
}
