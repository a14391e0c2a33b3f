/*
 * lcp_internal.h — the LCP operator's state (xxl_lcp.h), shared by lcp.c
 * (its life, rank- and text-order passes), lcp_input.c (how the suffix
 * array comes in), lcp_resolve.c (answering the comparison requests) and
 * lcp_repeats.c (runs of long common prefixes).
 */
#ifndef XXL_LCP_INTERNAL_H
#define XXL_LCP_INTERNAL_H

#include "core/text/text_internal.h"
#include "core/text/xxl_lcp.h"
#include "core/xxl_ahead.h"
#include "core/text/xxl_text_store.h"

/* D's flags */
#define LCP_REDUCIBLE 0
#define LCP_IRREDUCIBLE 1
#define LCP_FIRST 2


typedef enum lcp_phase
{
	LCP_TEXT,
	LCP_SA,
	LCP_RANKED,
	LCP_OUTPUT,
	LCP_DONE,
	LCP_FAILED
} lcp_phase;

struct xxl_lcp
{
	xxl_env		env;
	xxl_lcp_config cfg;
	lcp_phase	phase;
	xxl_text_store *store;
	xxl_text_store *deferred;	/* the suffix array until run (cfg.defer) */
	unsigned char *mem_text;	/* deferring: the text loaded at run when it fits */
	unsigned char *dbuf;		/* records for it */
	size_t		dfill;
	uint64_t	defer_read,		/* its I/O, once it is gone */
				defer_written;
	uint64_t	n;
	int			pw;				/* bytes per position, rank or length (0..n) */
	bool		direct;
	/*
	 * Parts' memory: the permutations (A, B, C, D, E) two fifths, of which
	 * two live at once (or what a scatter fits in, lcp_perm_share); the
	 * rounds' sorts (distribution sorts: little while they take records)
	 * half while they distribute and a quarter while they hand out; the
	 * windows' sort a quarter.
	 */
	size_t		share_perm,
				share_round;

	/* rank order */
	uint64_t	r;				/* suffixes taken */
	uint64_t	last_pos;
	uint64_t	last_rem;		/* last_pos's bytes to its document's end */
	int			last_prev;
	uint64_t	pos_sum;		/* sum of positions: a permutation check */
	xxl_env_scatter D;			/* by position: rank, Φ, flag, position */
	bool		D_open;
	xxl_env_scatter A;			/* ranked input, by rank: position, rank */
	bool		A_open;
	xxl_spool	Q;				/* requests of the first round */
	bool		Q_open;
	uint64_t	Q_count;
	/*
	 * Answers (i, LCP), a spool per round: a round's requests share one
	 * base and leave its second sort by i + base, so each spool is in
	 * position order, and text order merges them as it goes.
	 */
	xxl_spool	ans[XXL_LCP_ROUNDS];
	uint64_t	ans_left[XXL_LCP_ROUNDS];	/* written, then not yet read */
	int			nans;			/* spools opened */
	xxl_spool_reader ans_rd[XXL_LCP_ROUNDS];
	int			nans_rd;		/* readers opened */
	uint64_t	ans_i[XXL_LCP_ROUNDS],	/* each reader's next answer */
				ans_v[XXL_LCP_ROUNDS];

	/* output */
	xxl_env_scatter E;			/* by rank: position, LCP */
	bool		E_open;
	xxl_ahead  *ahead;			/* E read on a worker, (position, LCP) pairs */
	const uint64_t *out;		/* the batch being handed out */
	int64_t		out_n,
				out_at;
	int			out_stride;		/* fields a suffix: position, LCP (, offset, id) */

	/* repeats */
	xxl_env_sorter W;			/* windows, by position: position, count */
	bool		W_open;
	bool		have_range;
	uint64_t	cur_start,
				cur_end,
				cur_min;

	xxl_lcp_stats st;
	uint64_t	t_start;
};

/* Characters left in pos's document (or the text) from pos on. */
static inline uint64_t
lcp_rem(const xxl_lcp *l, uint64_t pos)
{
	if (l->cfg.docs == NULL)
		return l->n - pos;
	return xxl_docs_end(l->cfg.docs, xxl_docs_find(l->cfg.docs, pos)) - pos;
}

/*
 * Walking the text in order (i = 0, 1, ...): the document holding i, its
 * start and end, read from the map once a document (a paged map's two
 * pages at a boundary may share a cache frame).
 */
typedef struct lcp_doc_walk
{
	uint64_t	doc,
				start,
				end;
} lcp_doc_walk;

static inline void
lcp_walk_init(const xxl_lcp *l, lcp_doc_walk *dw)
{
	dw->doc = 0;
	dw->start = 0;
	dw->end = l->cfg.docs ? xxl_docs_end(l->cfg.docs, 0) : l->n;
}

/* Whether i starts its document (or the text); *end: where that ends. */
static inline bool
lcp_walk_doc(const xxl_lcp *l, lcp_doc_walk *dw, uint64_t i, uint64_t *end)
{
	while (dw->end <= i && l->cfg.docs)
	{
		dw->doc++;
		dw->start = dw->end;
		dw->end = xxl_docs_end(l->cfg.docs, dw->doc);
	}
	*end = dw->end;
	return dw->start == i;
}

/* Push the record (a, b), two positions wide, into a sort keyed by a. */
static inline xxl_status
lcp_push_pair(xxl_lcp *l, xxl_env_sorter *s, uint64_t a, uint64_t b)
{
	unsigned char rec[16];
	unsigned char *p = xxl_env_sort_room(s, rec);

	put_be(p, a, l->pw);
	put_be(p + l->pw, b, l->pw);
	return xxl_env_sort_push(&l->env, s, p);
}

/* records of the deferred suffix array buffered for its store */
#define DEFER_BUFFER (32 * 1024)

/* lcp.c: the end of the text (the comparisons' mode, the parts' shares) */
xxl_status	lcp_text_done(xxl_lcp *l);
/* The parts' shares of avail bytes of the pool (see share_perm). */
void		lcp_set_shares(xxl_lcp *l, size_t avail);
/*
 * A permutation's share: share_perm, or more where that lets a scatter (one
 * write and one read of its records) stand where a sort by slot (two
 * passes or more) would, leaving `keep` of the pool's free bytes to the
 * parts that open beside it (the next permutation's share_perm at least;
 * a scatter takes only what its plan needs).
 */
size_t		lcp_perm_share(xxl_lcp *l, size_t rec_size, size_t keep);
/* A permutation opened: into the statistics, if split or sorted. */
void		lcp_count_perm(xxl_lcp *l, const xxl_env_scatter *ts);
/* lcp.c: open D (and the requests' spool): the rank-order step can begin */
xxl_status	lcp_open_rank_order(xxl_lcp *l);
/* lcp.c: the next suffix in rank order with its preceding byte (-1: unknown) */
#define LCP_REM_UNKNOWN UINT64_MAX
xxl_status	lcp_take(xxl_lcp *l, uint64_t pos, int prev, uint64_t rem);
/* lcp_input.c: the deferred suffix array into D; a ranked one into rank order */
xxl_status	lcp_take_deferred(xxl_lcp *l);
xxl_status	lcp_derive_prev(xxl_lcp *l);

/* Fail with the store's error, or the environment's. */
xxl_status	lcp_fail(xxl_lcp *l);
xxl_status	lcp_store_fail(xxl_lcp *l);

/* Open the first round's requests (lcp_resolve.c). */
xxl_status	lcp_resolve_open(xxl_lcp *l);
/* Request the common prefix of i and j, at most limit (> 0) bytes. */
xxl_status	lcp_request(xxl_lcp *l, uint64_t i, uint64_t j, uint64_t limit);
/*
 * What the rounds' sorts need of the pool beside D: a distribution sort's
 * memory while it distributes, where one could take them, else two
 * sorters' least.
 */
size_t		lcp_rounds_need(xxl_lcp *l);
/* Answer every request into the rounds' answer spools. */
xxl_status	lcp_resolve(xxl_lcp *l);
/* Read the answers back in position order: open, the one for i, close. */
xxl_status	lcp_answers_open(xxl_lcp *l);
xxl_status	lcp_answer_for(xxl_lcp *l, uint64_t i, bool *found, uint64_t *v);
void		lcp_answers_close(xxl_lcp *l);

/* Turn the rank-order output into the repeats' ranges (lcp_repeats.c). */
xxl_status	lcp_repeats_build(xxl_lcp *l);
int			lcp_repeats_next(xxl_lcp *l, uint64_t *start, uint64_t *length,
							 uint64_t *occurrences);

#endif							/* XXL_LCP_INTERNAL_H */
