/*
 * analytics_tri_chunked.c — external triangles without queries
 * (analytics_internal.h; the chunked node iterator of Hu, Tao and Chung's
 * "Massive Graph Triangulation", SIGMOD 2013).
 *
 * The orientation pass (analytics_tri.c) writes each node's out-list, its
 * out-neighbours' id keys ascending, to the edge spool in node order
 * instead of sorting every pair of them as a query: a node v's triangles
 * through an out-neighbour u are the common entries of v's list and u's.
 * The lists are then taken in chunks of consecutive nodes that fit in half
 * the pool; for each chunk one scan of every list looks up, for each entry
 * u of v's list that falls in the chunk, u's list there and counts what
 * the two lists share.  The orientation is a total order, so a triangle
 * is met once: at its lowest node, through its middle one.
 *
 * A chunk costs a read of the lists (8 bytes per edge and 16 per node)
 * and a comparison per entry; the queries' sort writes and reads 24 bytes
 * per pair of out-neighbours, on 5M random edges over 1M ids several times
 * the edges, so while the chunks are few the scans cost less
 * (AN_TRI_SCAN_PER_QUERY).  Memory: the chunk (half the pool; a quarter
 * for the listing and the node counts), the scanned node's list, and the
 * spools (a tenth each).
 *
 * The listing writes its triangles (three id keys) to a spool and hands
 * them out from it; the node counts put each corner's count into the
 * sorter C, which the output merges with the degrees as after queries.
 */
#include "core/graph/analytics_internal.h"

#include <math.h>
#include <string.h>

/*
 * A scan costs about 12 ns per entry of the lists, a query about 290 ns
 * through its sort and merge (5M random edges over 1M ids at 4MB-16MB):
 * chunks while they cost less than half the queries the degrees suggest.
 */
#define AN_TRI_SCAN_PER_QUERY 12

/* A chunk's node: its id key and where its list lies among the entries. */
typedef struct chunk_node
{
	uint64_t	key;
	uint32_t	off;
	uint32_t	len;
} chunk_node;

/*
 * The chunk's bytes: half the pool for the count; a quarter beside the
 * node counts' sorter (3/8) or the listing's spool.
 */
static size_t
chunk_bytes(const xxl_an *a)
{
	return a->op == XXL_AN_TRIANGLE_COUNT ? a->env.pool / 2 : a->env.pool / 4;
}

/* The chunk's parts (entries, nodes), as an_tri_chunked_choose sized them. */
static void
chunk_caps(const xxl_an *a, size_t *entries, size_t *nodes)
{
	size_t		bytes = chunk_bytes(a);
	double		E = (double) (a->links / 2),
				N = (double) (a->n > 0 ? a->n : 1),
				/* a list is at most sqrt(2m) long (analytics_tri.c's orientation) */
				longest = sqrt((double) a->links) + 2,
				share = 8 * E / (8 * E + sizeof(chunk_node) * N),
				e = floor((double) bytes * share / 8);

	if (e < longest)
		e = longest;
	if (e > UINT32_MAX)
		e = UINT32_MAX;			/* (chunk_node's offsets) */
	*entries = (size_t) e;
	*nodes = bytes > *entries * 8 ? (bytes - *entries * 8) / sizeof(chunk_node) : 0;
	if (a->tri_chunk_lists != 0 && a->tri_chunk_lists < *nodes)
		*nodes = (size_t) a->tri_chunk_lists;
}

bool
an_tri_chunked_choose(xxl_an *a)
{
	size_t		entries,
				nodes;
	double		chunks;

	if (a->tri_chunk_lists == UINT64_MAX)
		return false;
	chunk_caps(a, &entries, &nodes);
	if (nodes == 0)
		return false;			/* the longest list fills the chunk */
	chunks = ceil(fmax((double) (a->links / 2) / (double) entries, (double) a->n / (double) nodes));
	return a->tri_chunk_lists != 0 ||
		chunks * (double) (a->links / 2 + a->n) <= AN_TRI_SCAN_PER_QUERY * (double) a->tri_wedges;
}

xxl_status
an_tri_chunked_put(xxl_an *a, uint64_t vkey, size_t k)
{
	uint64_t	hdr[2] = {vkey, k};

	if (k > a->max_out)
		a->max_out = k;
	if (k == 0)
		return XXL_OK;			/* neither end of a triangle's middle edge */
	if (xxl_spool_write(&a->edges, hdr, sizeof(hdr)) != XXL_OK ||
		xxl_spool_write(&a->edges, a->list, k * sizeof(uint64_t)) != XXL_OK)
		return an_fail(a);
	return XXL_OK;
}

/*
 * The next entry two ascending lists share, from x[*i] and y[*j] on (left
 * there); false when either runs out.
 */
static inline bool
next_shared(const uint64_t *x, size_t nx, const uint64_t *y, size_t ny, size_t *i, size_t *j)
{
	while (*i < nx && *j < ny)
	{
		if (x[*i] < y[*j])
			(*i)++;
		else if (x[*i] > y[*j])
			(*j)++;
		else
			return true;
	}
	return false;
}

/* Entries two ascending lists share. */
static uint64_t
shared_entries(const uint64_t *x, size_t nx, const uint64_t *y, size_t ny)
{
	uint64_t	c = 0;
	size_t		i = 0,
				j = 0;

	for (; next_shared(x, nx, y, ny, &i, &j); i++, j++)
		c++;
	return c;
}

/*
 * The listing's and the node counts' triangles of v through u: the
 * entries w their lists share, each to the listing's spool, or the count
 * of each corner to the sorter C (v's and u's once for all their w).
 */
static xxl_status
emit_shared(xxl_an *a, uint64_t vkey, uint64_t ukey, const uint64_t *x, size_t nx, const uint64_t *y,
			size_t ny)
{
	uint64_t	c = 0;
	size_t		i = 0,
				j = 0;

	for (; next_shared(x, nx, y, ny, &i, &j); i++, j++, c++)
	{
		uint64_t	t[3] = {vkey, ukey, x[i]};

		if ((a->op == XXL_AN_TRIANGLES ? xxl_spool_write(&a->tris, t, sizeof(t)) :
			 an_tri_put_count(a, x[i], 1)) != XXL_OK)
			return an_fail(a);
	}
	a->triangles += c;
	if (c > 0 && a->op == XXL_AN_NODE_TRIANGLES &&
		(an_tri_put_count(a, vkey, c) != XXL_OK || an_tri_put_count(a, ukey, c) != XXL_OK))
		return an_fail(a);
	return XXL_OK;
}

/*
 * The chunk's node of key in [lo, hi], or NULL (nodes ascending): a guess
 * by the key's place between the chunk's first and last keys (ids, serial
 * or hashed, spread evenly: it lands within a few nodes), then steps
 * doubling away from it until they pass the key, then halving between.
 */
static const chunk_node *
find_node(const chunk_node *nodes, size_t n, uint64_t key)
{
	uint64_t	lo_key = nodes[0].key,
				span = nodes[n - 1].key - lo_key;
	size_t		guess = span == 0 ? 0 :
		(size_t) ((unsigned __int128) (key - lo_key) * (n - 1) / span),
				lo,
				hi,
				step = 1;

	if (nodes[guess].key < key)
	{
		/* the key lies above: (guess, hi] */
		lo = guess + 1;
		while (lo + step - 1 < n && nodes[lo + step - 1].key < key)
		{
			lo += step;
			step *= 2;
		}
		hi = lo + step - 1 < n ? lo + step : n;
	}
	else
	{
		/* at or below: [lo, guess] */
		hi = guess + 1;
		while (hi > step && nodes[hi - step - 1].key >= key)
		{
			hi -= step;
			step *= 2;
		}
		lo = hi > step ? hi - step - 1 : 0;
	}
	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (nodes[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && nodes[lo].key == key ? &nodes[lo] : NULL;
}

/*
 * The lists as a scan reads them: by the spool's pieces (chunks or
 * blocks, 8-byte aligned), a list that lies within one read in place and
 * one that spans two copied into a->list.  A scan reads every list once
 * per chunk, and most have nothing in it: no call and no copy per list.
 */
typedef struct list_cursor
{
	xxl_spool_reader rd;
	const unsigned char *p;
	size_t		avail;
} list_cursor;

/* len bytes into dst across pieces; false at the spool's end or on an error. */
static bool
cursor_gather(list_cursor *c, unsigned char *dst, size_t len)
{
	while (len > 0)
	{
		size_t		n;

		if (c->avail == 0 && (xxl_spool_reader_piece(&c->rd, &c->p, &c->avail) != XXL_OK || c->avail == 0))
			return false;
		n = len < c->avail ? len : c->avail;
		memcpy(dst, c->p, n);
		dst += n;
		len -= n;
		c->p += n;
		c->avail -= n;
	}
	return true;
}

/* The next list: 1, 0 at the end, -1 on an error (a->env.err). */
static int
cursor_next(xxl_an *a, list_cursor *c, const uint64_t **list, uint64_t *key, uint64_t *k)
{
	uint64_t	hdr[2];
	size_t		bytes;

	if (c->avail == 0)
	{
		if (xxl_spool_reader_piece(&c->rd, &c->p, &c->avail) != XXL_OK)
			return -1;
		if (c->avail == 0)
			return 0;
	}
	if (c->avail >= sizeof(hdr))
	{
		memcpy(hdr, c->p, sizeof(hdr));
		bytes = hdr[1] * sizeof(uint64_t);
		if (c->avail - sizeof(hdr) >= bytes)
		{
			*list = (const uint64_t *) (c->p + sizeof(hdr));
			*key = hdr[0];
			*k = hdr[1];
			c->p += sizeof(hdr) + bytes;
			c->avail -= sizeof(hdr) + bytes;
			return 1;
		}
	}
	if (!cursor_gather(c, (unsigned char *) hdr, sizeof(hdr)) ||
		an_tri_list_reserve(a, hdr[1]) != XXL_OK ||
		!cursor_gather(c, (unsigned char *) a->list, hdr[1] * sizeof(uint64_t)))
	{
		if (a->env.err.code == XXL_OK)
			xxl_error_set(&a->env.err, XXL_EIO, 0, "triangle out-lists cut short");
		return -1;
	}
	*list = (const uint64_t *) a->list;
	*key = hdr[0];
	*k = hdr[1];
	return 1;
}

/* One scan of every list against the chunk: their triangles added to a->triangles. */
static xxl_status
scan_lists(xxl_an *a, const chunk_node *nodes, size_t nn, const uint64_t *entries)
{
	list_cursor c = {0};
	uint64_t	lo = nodes[0].key,
				hi = nodes[nn - 1].key,
				seen = 0,
				vkey = 0;
	const uint64_t *l;
	uint64_t	k;
	int			got;

	if (xxl_spool_reader_open(&c.rd, &a->edges, false) != XXL_OK)
		return an_fail(a);
	while ((got = cursor_next(a, &c, &l, &vkey, &k)) == 1)
	{
		/*
		 * (a list ascends: its entries within the chunk's keys lie
		 * together).  The list of each one the chunk holds is compared
		 * with all of v's: keys do not follow the orientation.  A list
		 * of one entry closes no triangle.
		 */
		for (uint64_t i = 0; k >= 2 && i < k && l[i] <= hi && got == 1; i++)
		{
			const chunk_node *u;

			if (l[i] < lo || (u = find_node(nodes, nn, l[i])) == NULL)
				continue;
			if (a->op == XXL_AN_TRIANGLE_COUNT)
				a->triangles += shared_entries(l, k, entries + u->off, u->len);
			else if (emit_shared(a, vkey, u->key, l, k, entries + u->off, u->len) != XXL_OK)
				got = -1;
		}
		if (got < 0)
			break;
		if ((++seen & 4095) == 0 && xxl_env_poll(&a->env))
		{
			got = -1;
			break;
		}
	}
	xxl_spool_reader_close(&c.rd);
	return got == 0 ? XXL_OK : an_fail(a);
}

xxl_status
an_tri_chunked_count(xxl_an *a)
{
	size_t		cap_entries,
				cap_nodes,
				entries_bytes,
				nodes_bytes;
	uint64_t   *entries;
	chunk_node *nodes;
	xxl_spool_reader rd;
	uint64_t	pending[2];
	bool		have_pending = false;
	xxl_status	rc = XXL_OK;

	if (xxl_spool_finish(&a->edges) != XXL_OK)
		return an_fail(a);
	chunk_caps(a, &cap_entries, &cap_nodes);
	entries_bytes = cap_entries * sizeof(uint64_t);
	nodes_bytes = cap_nodes * sizeof(chunk_node);
	entries = an_alloc(a, entries_bytes, &entries_bytes);
	nodes = entries ? an_alloc(a, nodes_bytes, &nodes_bytes) : NULL;
	/* (the sorter C, once open, is an_tri_release's to close) */
	if (nodes == NULL ||
		(a->op == XXL_AN_NODE_TRIANGLES &&
		 xxl_env_sort_open(&a->env, &a->c, an_sort_share(a), 0, 16, 8, 0, XXL_INPUT_UNBOUNDED) != XXL_OK) ||
		xxl_spool_reader_open(&rd, &a->edges, false) != XXL_OK)
	{
		an_free(a, (void **) &nodes, &nodes_bytes);
		an_free(a, (void **) &entries, &entries_bytes);
		return an_fail(a);
	}
	for (;;)
	{
		size_t		nn = 0,
					ne = 0;

		/* the next nodes' lists, as many as fit */
		while (nn < cap_nodes)
		{
			if (!have_pending)
			{
				const unsigned char *p;

				if (rd.left == 0 && rd.avail == 0)
					break;
				if ((rc = xxl_spool_read(&rd, sizeof(pending), &p)) != XXL_OK)
					break;
				memcpy(pending, p, sizeof(pending));
				have_pending = true;
			}
			if (ne + pending[1] > cap_entries)
				break;			/* (an empty chunk takes the longest list) */
			if ((rc = xxl_spool_read_exact(&rd, entries + ne, pending[1] * sizeof(uint64_t))) != XXL_OK)
				break;
			nodes[nn++] = (chunk_node) {pending[0], (uint32_t) ne, (uint32_t) pending[1]};
			ne += pending[1];
			have_pending = false;
		}
		if (rc != XXL_OK || nn == 0)
			break;
		a->tri_ranges++;
		if ((rc = scan_lists(a, nodes, nn, entries)) != XXL_OK)
			break;
	}
	xxl_spool_reader_close(&rd);
	an_free(a, (void **) &nodes, &nodes_bytes);
	an_free(a, (void **) &entries, &entries_bytes);
	if (rc != XXL_OK)
		return an_fail(a);
	/* the rows: the listing's spool, or the counts merged with the degrees */
	xxl_spool_free(&a->edges);
	if (a->op == XXL_AN_TRIANGLES &&
		(xxl_spool_finish(&a->tris) != XXL_OK || xxl_spool_reader_open(&a->rd_tris, &a->tris, true) != XXL_OK))
		return an_fail(a);
	a->rd_tris_open = a->op == XXL_AN_TRIANGLES;
	if (a->op == XXL_AN_NODE_TRIANGLES &&
		(xxl_env_sort_sort(&a->env, &a->c) != XXL_OK ||
		 xxl_spool_reader_open(&a->rd_deg, &a->deg, true) != XXL_OK))
		return an_fail(a);
	a->rd_deg_open = a->op == XXL_AN_NODE_TRIANGLES;
	return XXL_OK;
}

int
an_tri_chunked_next(xxl_an *a, xxl_an_row *row)
{
	const unsigned char *p;
	uint64_t	t[3];

	if (a->rd_tris.left == 0 && a->rd_tris.avail == 0)
		return 0;
	/* (the host is asked as rows go out, as the queries' merge asks it) */
	if (xxl_env_poll(&a->env))
		return -1;
	if (xxl_spool_read(&a->rd_tris, sizeof(t), &p) != XXL_OK)
	{
		an_fail(a);
		return -1;
	}
	memcpy(t, p, sizeof(t));
	for (int i = 0; i < 3; i++)
		row->v[i] = g_key_id(t[i]);
	an_sort3(row->v);
	return 1;
}
