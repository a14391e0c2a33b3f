/*
 * lcp_resolve.c — answering the LCP operator's comparison requests (step 2
 * of xxl_lcp.h) when the text is on disk.  The requests (i, Φ(i), limit)
 * wait in a spool while the suffix array comes in; then each round sorts
 * the open requests by the far position Φ(i) + base, copies a chunk of the
 * text there in one ascending pass through the text store, sorts by
 * i + base and compares with the text there in a second ascending pass.  A
 * pair that still agrees over the whole chunk goes to the next round's
 * spool, whose chunk is larger; after the last of XXL_LCP_ROUNDS, the few
 * left are compared by random reads.  Every sort knows how many records it gets (the spool's
 * count), so it is a distribution sort where it fits: one write and one
 * read of its records, no merge passes.
 */
#include "core/text/lcp_internal.h"

#include <string.h>

/*
 * Chunks grow by round.  Most irreducible values are short (a few bytes of
 * random text, a dozen of prose), so the first round carries 16 bytes, and
 * its records, which every request pays for in two sorts, are half as long
 * as with 48; the pairs that agree over them pay a second round.  The last
 * chunk is small too: a random comparison costs two reads out of the page
 * cache on the calling thread, less than carrying a long chunk through the
 * round's sort.
 */
static const size_t round_chunk[XXL_LCP_ROUNDS] = {16, 48, 96};

/* spooled requests: i, j, base, limit */
static size_t
request_size(const xxl_lcp *l)
{
	return (size_t) (4 * l->pw);
}

/* sorted by the far side: key = j + base, i, base, limit */
#define far_size request_size

/* with their chunk: key = i + base, i, j, base, limit, length, chunk */
static size_t
chunked_size(const xxl_lcp *l, int round)
{
	return (size_t) (5 * l->pw + 2) + round_chunk[round];
}

static xxl_status
spool_request(xxl_lcp *l, xxl_spool *sp, uint64_t *count, uint64_t i, uint64_t j, uint64_t base,
			  uint64_t limit)
{
	unsigned char rec[32];
	int			w = l->pw;

	put_be(rec, i, w);
	put_be(rec + w, j, w);
	put_be(rec + 2 * w, base, w);
	put_be(rec + 3 * w, limit, w);
	(*count)++;
	return xxl_spool_write(sp, rec, request_size(l));
}

xxl_status
lcp_resolve_open(xxl_lcp *l)
{
	xxl_spool_init(&l->Q, &l->env, XXL_SPOOL_SHARED);
	l->Q_open = true;
	l->Q_count = 0;
	return XXL_OK;
}

xxl_status
lcp_request(xxl_lcp *l, uint64_t i, uint64_t j, uint64_t limit)
{
	return spool_request(l, &l->Q, &l->Q_count, i, j, 0, limit);
}

static xxl_status
answer(xxl_lcp *l, uint64_t i, uint64_t v)
{
	return lcp_push_pair(l, &l->RS, i, v);
}

/* A bounded sort of count records: a distribution sort where it fits. */
static xxl_status
open_bounded(xxl_lcp *l, xxl_env_sorter *s, size_t memory, size_t output, size_t rec_size,
			 uint64_t count)
{
	return xxl_env_sort_open(&l->env, s, memory, output, rec_size, (size_t) l->pw,
							 count > 0 ? count : 1, XXL_INPUT_BOUNDED);
}

/*
 * One round: the requests in src (count of them) answered into RS, or
 * spooled into *next for the next round (NULL: compared at random).
 */
static xxl_status
run_round(xxl_lcp *l, int round, xxl_spool *src, uint64_t count, xxl_spool *next,
		  uint64_t *next_count)
{
	xxl_env    *env = &l->env;
	xxl_env_sorter R = {0},
				SB = {0};
	xxl_spool_reader rd;
	size_t		c = round_chunk[round],
				rec_size = chunked_size(l, round);
	int			w = l->pw,
				got;
	const unsigned char *rec;
	unsigned char local[XXL_DSORT_MAX_RECORD];
	unsigned char here[512];
	xxl_status	rc = XXL_OK;

	/* the requests, by the far side */
	if (open_bounded(l, &R, l->share_round * 2, l->share_round, far_size(l), count) != XXL_OK ||
		xxl_spool_finish(src) != XXL_OK || xxl_spool_reader_open(&rd, src, true) != XXL_OK)
		goto fail;
	for (uint64_t k = 0; k < count; k++)
	{
		const unsigned char *q;
		unsigned char *p;

		if (xxl_spool_read(&rd, request_size(l), &q) != XXL_OK)
		{
			xxl_spool_reader_close(&rd);
			goto fail;
		}
		p = xxl_env_sort_room(&R, local);
		put_be(p, get_be(q + w, w) + get_be(q + 2 * w, w), w);	/* j + base */
		memcpy(p + w, q, (size_t) w);	/* i */
		memcpy(p + 2 * w, q + 2 * w, (size_t) (2 * w));	/* base, limit */
		if (xxl_env_sort_push(env, &R, p) != XXL_OK)
		{
			xxl_spool_reader_close(&rd);
			goto fail;
		}
	}
	xxl_spool_reader_close(&rd);
	xxl_spool_free(src);
	if (xxl_env_sort_sort(env, &R) != XXL_OK ||
		open_bounded(l, &SB, l->share_round * 2, l->share_round, rec_size, count) != XXL_OK)
		goto fail;

	/* pass 1: the chunk at j + base */
	while ((got = xxl_env_sort_next(env, &R, &rec)) > 0)
	{
		uint64_t	at = get_be(rec, w),
					i = get_be(rec + w, w),
					base = get_be(rec + 2 * w, w),
					limit = get_be(rec + 3 * w, w);
		size_t		want = limit - base < c ? (size_t) (limit - base) : c,
					have;
		unsigned char *p = xxl_env_sort_room(&SB, local);

		put_be(p, i + base, w);
		put_be(p + w, i, w);
		put_be(p + 2 * w, at - base, w);
		put_be(p + 3 * w, base, w);
		put_be(p + 4 * w, limit, w);
		if (xxl_text_store_read(l->store, at, p + 5 * w + 2, want, &have) != XXL_OK)
		{
			rc = lcp_store_fail(l);
			goto out;
		}
		put_be(p + 5 * w, have, 2);
		if (xxl_env_sort_push(env, &SB, p) != XXL_OK || xxl_env_poll(env))
			goto fail;
	}
	if (got < 0)
		goto fail;
	xxl_env_sort_close(env, &R, NULL, NULL);
	if (xxl_env_sort_sort(env, &SB) != XXL_OK)
		goto fail;

	/* pass 2: compare with the text at i + base */
	while ((got = xxl_env_sort_next(env, &SB, &rec)) > 0)
	{
		uint64_t	at = get_be(rec, w),
					i = get_be(rec + w, w),
					j = get_be(rec + 2 * w, w),
					base = get_be(rec + 3 * w, w),
					limit = get_be(rec + 4 * w, w);
		size_t		len = (size_t) get_be(rec + 5 * w, 2),
					have,
					m;
		const unsigned char *chunk = rec + 5 * w + 2;

		if (xxl_text_store_read(l->store, at, here, len, &have) != XXL_OK)
		{
			rc = lcp_store_fail(l);
			goto out;
		}
		m = (size_t) text_common_prefix(here, chunk, have);
		if (m < len || base + m >= limit)
		{
			l->st.round_resolved[round]++;
			if (answer(l, i, base + m) != XXL_OK)
				goto fail;
		}
		else if (next != NULL)
		{
			if (spool_request(l, next, next_count, i, j, base + len, limit) != XXL_OK)
				goto fail;
		}
		else
		{
			uint64_t	more;

			if (xxl_text_store_common(l->store, i + base + len, j + base + len,
									  limit - base - len, &more) != XXL_OK)
			{
				rc = lcp_store_fail(l);
				goto out;
			}
			l->st.random_resolved++;
			if (answer(l, i, base + len + more) != XXL_OK)
				goto fail;
		}
		if (xxl_env_poll(env))
			goto fail;
	}
	if (got < 0)
		goto fail;
	goto out;
fail:
	rc = env->err.code;
out:
	xxl_env_sort_close(env, &R, NULL, NULL);
	xxl_env_sort_close(env, &SB, NULL, NULL);
	return rc;
}

xxl_status
lcp_resolve(xxl_lcp *l)
{
	xxl_spool	spools[2];
	uint64_t	count = l->Q_count;
	int			cur = 0;

	/* the answers: one per request at most; they wait while the rounds run */
	if (open_bounded(l, &l->RS, l->share_round * 2, l->share_small, (size_t) (2 * l->pw), count) != XXL_OK)
		return l->env.err.code;
	l->RS_open = true;
	spools[0] = l->Q;
	l->Q_open = false;
	for (int round = 0; round < XXL_LCP_ROUNDS; round++)
	{
		bool		last = round == XXL_LCP_ROUNDS - 1;
		uint64_t	next_count = 0;

		if (!last)
			xxl_spool_init(&spools[1 - cur], &l->env, XXL_SPOOL_SHARED);
		l->st.rounds++;
		xxl_env_step(&l->env, "round", (uint32_t) round + 1, XXL_LCP_ROUNDS);
		if (run_round(l, round, &spools[cur], count, last ? NULL : &spools[1 - cur], &next_count) != XXL_OK)
		{
			xxl_spool_free(&spools[cur]);
			if (!last)
				xxl_spool_free(&spools[1 - cur]);
			return l->env.err.code;
		}
		xxl_spool_free(&spools[cur]);
		if (last)
			break;
		cur = 1 - cur;
		count = next_count;
	}
	return XXL_OK;
}
