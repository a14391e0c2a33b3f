/*
 * analytics_rank_internal.h — PageRank's state, shared by its two files:
 * analytics_rank.c (input, numbering, the iterations on arrays, the
 * ranks out) and analytics_rank_external.c (the iterations over sorted
 * links in spools, whole or by ranges of targets).
 */
#ifndef XXL_ANALYTICS_RANK_INTERNAL_H
#define XXL_ANALYTICS_RANK_INTERNAL_H

#include "core/graph/analytics_internal.h"

typedef struct an_rank
{
	xxl_env_sorter s1,
				s2,
				es,				/* links by source: [u BE][v u64][w double] */
				cs;				/* contributions: [v BE][value double] */
	xxl_spool	weights,		/* input order, doubles (once one is not 1) */
				ids,			/* dense order: original ids */
				links,			/* external: the sorted links [u][v][w] */
				outw,			/* external: out-weight per node */
				ranks[2],		/* external: this and the next iteration's */
				rest;			/* arrays: the links past them, [u u32][v u32]([w double]) */
	xxl_spool_reader rd_w,
				rd_ids,
				rd_r;
	bool		rd_w_open,
				rd_ids_open,
				rd_r_open;
	int			cur;			/* external: which ranks[] holds r */
	bool		weighted;		/* a weight other than 1 was put */
	bool		in_memory;		/* the iterations run on arrays */
	bool		adopted;		/* numbered in memory (analytics_memory.c) */
	int64_t    *mem_ids;		/* then: rank -> id */
	size_t		mem_ids_bytes;
	/* arrays */
	double	   *r,
			   *rn,
			   *w;
	double	   *sums;			/* ranged: the current range's sums */
	size_t		sums_bytes;
	uint32_t   *lu,
			   *lv;
	double	   *lw;
	uint64_t	held;			/* links in lu, lv (and lw); the others in rest */
	size_t		r_bytes,
				rn_bytes,
				w_bytes,
				lu_bytes,
				lv_bytes,
				lw_bytes;
	uint64_t	out_i;
} an_rank;

/* The next double of a spool (ranks, out-weights). */
static inline xxl_status
rank_read_double(xxl_an *a, xxl_spool_reader *rd, double *v)
{
	const unsigned char *p;

	if (xxl_spool_read(rd, 8, &p) != XXL_OK)
		return an_fail(a);
	memcpy(v, p, 8);
	return XXL_OK;
}

/* A spool's share of the pool: five live at once in the external iterations, besides a sorter. */
size_t		rank_spool_share(const xxl_an *a);

/* The next link's weight in input order (1 while none differed). */
xxl_status	rank_next_weight(xxl_an *a, double *w);

/* An iteration with this L1 change is over: whether it was the last. */
bool		rank_iteration_done(xxl_an *a, double delta);

/* The links' sort by target and their weights are read: their memory and files go. */
void		rank_drop_link_input(xxl_an *a);

/*
 * The iterations when the links do not fit arrays: the links sorted by
 * source into a spool, by ranges of targets when there are several, then
 * iterated to the end (analytics_rank_external.c).
 */
xxl_status	rank_run_external(xxl_an *a);

#endif							/* XXL_ANALYTICS_RANK_INTERNAL_H */
