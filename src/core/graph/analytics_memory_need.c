/*
 * analytics_memory_need.c — what the analytics operators' in-memory and
 * semi-external paths need (analytics_memory.h): the bytes of each phase
 * for m edges over n nodes, whether they fit the pool as the edges come,
 * and the room triangles' out-lists may take.
 */
#include "core/graph/analytics_memory.h"

#include <math.h>
#include <stddef.h>

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
double
an_mem_need_bytes(const xxl_an *a, uint64_t m, uint64_t n, size_t tables, bool spooled)
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
 * (an_pass) and then run as in memory: what they need is an_mem_need_bytes()
 * without the edges.  PageRank's links (with their weights) are read once
 * into the iterations' arrays and rest spool (analytics_rank.c); it needs
 * the tables and ids beside the spool while numbering, the ranking, then
 * the ids and the iterations' three arrays (32 bytes per node) beside the
 * spools.
 */
bool
an_mem_spool_fits(const xxl_an *a, uint64_t m, uint64_t n, size_t tables)
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
			(an_mem_need_bytes(a, m, n, tables, true) <= pool ||
			 ((a->op == XXL_AN_MIS || a->op == XXL_AN_COLORING) &&
			  ranking + spooled_ends_bytes(a) <= pool &&
			  an_mem_stream_need(N, ids, spooled_ends_bytes(a)) <= pool));
	/* (the spool's memory share beside the ranking; the iterations' two spools of 1/16) */
	return !a->force_external && ranking + (double) an_mem_dense_share(a) <= pool &&
		32 * N + 64 * 1024 + pool / 8 <= pool;
}

/* Whether m edges over n nodes with id tables of `tables` bytes fit, at input and at run. */
bool
an_mem_fits(const xxl_an *a, uint64_t m, uint64_t n, size_t tables)
{
	const an_mem *k = a->mem;
	double		input;

	if (k->spooled)
		return an_mem_spool_fits(a, m, n, tables);
	input = (double) tables + (double) pvec_bytes(&k->ends, m) +
		(k->weighted ? (double) pvec_bytes(&k->weights, m) : 0) + (double) pvec_bytes(&k->idm.ids, n);
	return n < IDMAP_MAX && 2 * m < UINT32_MAX && input <= (double) a->env.pool &&
		an_mem_need_bytes(a, m, n, tables, false) <= (double) a->env.pool;
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
