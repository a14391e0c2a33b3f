/*
 * lcp_input.c — how the suffix array comes into the LCP operator
 * (xxl_lcp.h): in rank order with the preceding bytes, straight into D or,
 * deferring, through a spool until xxl_lcp_run (where a text that now fits
 * is read into memory); or as ranked rows in any order, permuted to rank
 * order with the preceding bytes derived by a text scan.
 */
#include "core/text/lcp_internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * Deferring, the text store was kept small for the sorter's sake; now that
 * the budget is the operator's, a text that fits beside the parts is read
 * into memory and compared there (no rounds).
 */
static xxl_status
load_text(xxl_lcp *l)
{
	uint64_t	at = 0;

	if (l->direct || l->n == 0 || (l->cfg.internal_max > 0 && l->n > l->cfg.internal_max) ||
		l->n + 8 > l->env.pool / 2)
		return XXL_OK;
	l->mem_text = xxl_env_alloc(&l->env, (size_t) l->n + 8);
	if (l->mem_text == NULL)
		return lcp_fail(l);
	while (at < l->n)
	{
		size_t		got;

		if (xxl_text_store_read(l->store, at, l->mem_text + at,
								l->n - at < (1 << 20) ? (size_t) (l->n - at) : (1 << 20), &got) != XXL_OK ||
			got == 0)
			return lcp_store_fail(l);
		at += got;
		if (xxl_env_poll(&l->env))
			return lcp_fail(l);
	}
	memset(l->mem_text + l->n, 0, 8);
	l->direct = true;
	l->st.direct = true;
	/* the parts share what the text leaves */
	lcp_set_shares(l, l->env.pool - (size_t) l->n);
	return XXL_OK;
}

static xxl_status
defer_flush(xxl_lcp *l)
{
	if (l->dfill > 0 && xxl_text_store_put(l->deferred, l->dbuf, l->dfill) != XXL_OK)
	{
		l->env.err = *xxl_text_store_error(l->deferred);
		return lcp_fail(l);
	}
	l->dfill = 0;
	return XXL_OK;
}

/* Deferred records: position, preceding byte + 1, and over documents the remaining length. */
static size_t
defer_rec(const xxl_lcp *l)
{
	return (size_t) ((l->cfg.docs ? 2 : 1) * l->pw + 1);
}

xxl_status
xxl_lcp_put_sa(xxl_lcp *l, uint64_t pos, int prev)
{
	return xxl_lcp_put_sa_rem(l, pos, prev, LCP_REM_UNKNOWN);
}

xxl_status
xxl_lcp_put_sa_rem(xxl_lcp *l, uint64_t pos, int prev, uint64_t rem)
{
	if (l->phase == LCP_TEXT)
	{
		if (lcp_text_done(l) != XXL_OK || (!l->cfg.defer && lcp_open_rank_order(l) != XXL_OK))
			return l->env.err.code;
		l->phase = LCP_SA;
	}
	if (l->phase != LCP_SA)
		return l->phase == LCP_FAILED ? l->env.err.code
			: xxl_error_set(&l->env.err, XXL_EINVAL, 0, "suffix array entries come before xxl_lcp_run, in one form");
	if (!l->cfg.defer)
		return lcp_take(l, pos, prev, rem);
	/*
	 * deferred: (position, preceding byte + 1 mod 256) to the spool, taken
	 * at run; 0 stands for unknown and for 0xFF alike, which only makes a
	 * position after a 0xFF byte irreducible (compared, not derived)
	 */
	if (l->dfill + defer_rec(l) > DEFER_BUFFER && defer_flush(l) != XXL_OK)
		return l->env.err.code;
	put_be(l->dbuf + l->dfill, pos, l->pw);
	l->dbuf[l->dfill + l->pw] = (unsigned char) (prev + 1);
	if (l->cfg.docs)
	{
		/* what the map would say, looked up here if the caller does not know */
		if (rem == LCP_REM_UNKNOWN)
			rem = lcp_rem(l, pos);
		put_be(l->dbuf + l->dfill + l->pw + 1, rem, l->pw);
	}
	l->dfill += defer_rec(l);
	l->r++;
	return XXL_OK;
}

/* The spooled suffix array into D, now that the budget is the operator's. */
xxl_status
lcp_take_deferred(xxl_lcp *l)
{
	size_t		rec = defer_rec(l),
				per = DEFER_BUFFER / rec * rec;
	uint64_t	total = l->r,
				at = 0;

	if (defer_flush(l) != XXL_OK)
		return l->env.err.code;
	if (xxl_text_store_finish(l->deferred) != XXL_OK)
	{
		l->env.err = *xxl_text_store_error(l->deferred);
		return lcp_fail(l);
	}
	l->r = 0;
	if (load_text(l) != XXL_OK || lcp_open_rank_order(l) != XXL_OK)
		return l->env.err.code;
	while (at < total * rec)
	{
		size_t		got;

		if (xxl_text_store_read(l->deferred, at, l->dbuf, per, &got) != XXL_OK || got % rec != 0)
		{
			l->env.err = *xxl_text_store_error(l->deferred);
			return lcp_fail(l);
		}
		for (size_t k = 0; k < got; k += rec)
			if (lcp_take(l, get_be(l->dbuf + k, l->pw), (int) l->dbuf[k + l->pw] - 1,
						 l->cfg.docs ? get_be(l->dbuf + k + l->pw + 1, l->pw) : LCP_REM_UNKNOWN) != XXL_OK)
				return l->env.err.code;
		at += got;
		/* what is read is room for D */
		xxl_text_store_forget(l->deferred, at);
	}
	/* its disk goes now; its I/O stays in the statistics */
	{
		xxl_text_store_stats ds;

		xxl_text_store_stats_get(l->deferred, &ds);
		l->defer_read = ds.bytes_read;
		l->defer_written = ds.bytes_written;
	}
	xxl_text_store_destroy(l->deferred);
	l->deferred = NULL;
	return XXL_OK;
}

xxl_status
xxl_lcp_put_ranked(xxl_lcp *l, uint64_t rank, uint64_t pos)
{
	unsigned char *p;

	if (l->phase == LCP_TEXT)
	{
		if (lcp_text_done(l) != XXL_OK)
			return l->env.err.code;
		if (l->n > 0 && xxl_env_scat_open(&l->env, &l->A, lcp_perm_share(l, (size_t) (2 * l->pw), l->share_perm),
									  (size_t) (2 * l->pw), l->n) != XXL_OK)
			return lcp_fail(l);
		lcp_count_perm(l, &l->A);
		l->A_open = l->n > 0;
		l->phase = LCP_RANKED;
	}
	if (l->phase != LCP_RANKED)
		return l->phase == LCP_FAILED ? l->env.err.code
			: xxl_error_set(&l->env.err, XXL_EINVAL, 0, "suffix array entries come before xxl_lcp_run, in one form");
	if (rank < 1 || rank > l->n || pos >= l->n)
	{
		if (rank < 1 || rank > l->n)
			xxl_error_set(&l->env.err, XXL_EINVAL, 0, "rank %llu is outside 1..%llu",
						  (unsigned long long) rank, (unsigned long long) l->n);
		else
			xxl_error_set(&l->env.err, XXL_EINVAL, 0, "position %llu is outside the text of %llu bytes",
						  (unsigned long long) pos, (unsigned long long) l->n);
		return lcp_fail(l);
	}
	p = xxl_env_scat_room(&l->A);
	put_be(p, pos, l->pw);
	put_be(p + l->pw, rank - 1, l->pw);
	if (xxl_env_scat_push(&l->env, &l->A, rank - 1) != XXL_OK)
		return lcp_fail(l);
	l->r++;
	return XXL_OK;
}

/*
 * A stored suffix array: A gives the positions in rank order; B permutes the
 * ranks to text order, where one text scan reads T[i-1]; C permutes (i,
 * T[i-1]) back to rank order, the input take() wants.
 */
xxl_status
lcp_derive_prev(xxl_lcp *l)
{
	xxl_env    *env = &l->env;
	xxl_env_scatter B = {0},
				C = {0};
	const unsigned char *rec;
	int			w = l->pw,
				got;
	uint64_t	r = 0;
	lcp_doc_walk walk;
	int			prev_byte = -1;
	unsigned char slice[4096];	/* the text, read a slice at a time */
	size_t		have;
	xxl_status	rc = XXL_OK;

	l->st.derived_prev = true;
	if (l->r != l->n)
	{
		xxl_error_set(&env->err, XXL_EINVAL, 0, "the suffix array has %llu entries, the text %llu bytes",
					  (unsigned long long) l->r, (unsigned long long) l->n);
		return lcp_fail(l);
	}
	if (xxl_env_scat_finish(env, &l->A) != XXL_OK ||
		xxl_env_scat_open(env, &B, lcp_perm_share(l, (size_t) w, l->share_perm), (size_t) w, l->n) != XXL_OK)
		return lcp_fail(l);
	lcp_count_perm(l, &B);
	while ((got = xxl_env_scat_next(env, &l->A, &rec)) > 0)
	{
		uint64_t	pos = get_be(rec, w);

		put_be(xxl_env_scat_room(&B), r, w);
		if (xxl_env_scat_push(env, &B, pos) != XXL_OK)
			goto fail;
		r++;
	}
	if (got < 0)
		goto fail;
	xxl_env_scat_close(env, &l->A, NULL, NULL);
	l->A_open = false;
	if (xxl_env_scat_finish(env, &B) != XXL_OK ||
		xxl_env_scat_open(env, &C, lcp_perm_share(l, (size_t) (w + 2), l->share_perm),
						  (size_t) (w + 2), l->n) != XXL_OK)
		goto fail;
	lcp_count_perm(l, &C);
	lcp_walk_init(l, &walk);
	for (uint64_t i = 0; i < l->n; i++)
	{
		unsigned char *p;
		uint64_t	end;
		bool		start = lcp_walk_doc(l, &walk, i, &end);

		if (i % sizeof(slice) == 0 &&
			xxl_text_store_read(l->store, i, slice, sizeof(slice), &have) != XXL_OK)
		{
			rc = lcp_store_fail(l);
			goto out;
		}
		if (xxl_env_scat_next(env, &B, &rec) <= 0)
			goto fail;
		p = xxl_env_scat_room(&C);
		put_be(p, i, w);
		put_be(p + w, start ? 0xFFFF : (uint64_t) prev_byte, 2);
		if (xxl_env_scat_push(env, &C, get_be(rec, w)) != XXL_OK)
			goto fail;
		prev_byte = slice[i % sizeof(slice)];
		if (xxl_env_poll(env))
			goto fail;
	}
	xxl_env_scat_close(env, &B, NULL, NULL);
	if (xxl_env_scat_finish(env, &C) != XXL_OK || lcp_open_rank_order(l) != XXL_OK)
		goto fail;
	l->r = 0;
	while ((got = xxl_env_scat_next(env, &C, &rec)) > 0)
	{
		uint64_t	v = get_be(rec + w, 2);

		if (lcp_take(l, get_be(rec, w), v == 0xFFFF ? -1 : (int) v, LCP_REM_UNKNOWN) != XXL_OK)
			goto fail;
	}
	if (got < 0)
		goto fail;
	goto out;
fail:
	rc = lcp_fail(l);
out:
	xxl_env_scat_close(env, &B, NULL, NULL);
	xxl_env_scat_close(env, &C, NULL, NULL);
	return rc;
}

