/*
 * lcp_resolve.c — answering the LCP operator's comparison requests (step 2
 * of xxl_lcp.h) when the text is on disk: each round sorts the open
 * requests by the far position Φ(i) + base, copies a chunk of the text
 * there in one ascending pass through the text store, sorts by i + base
 * and compares with the text there in a second ascending pass.  A pair that
 * still agrees over the whole chunk goes on to the next round, whose chunk
 * is larger; after the last, the few left are compared by random reads.
 */
#include "core/text/lcp_internal.h"

#include <string.h>

static const size_t round_chunk[LCP_ROUNDS] = {48, 512};

/* requests: key = j + base, i, base, limit */
static size_t
request_size(const xxl_lcp *l)
{
	return (size_t) (4 * l->pw);
}

/* with their chunk: key = i + base, i, j, base, limit, length, chunk */
static size_t
chunked_size(const xxl_lcp *l, int round)
{
	return (size_t) (5 * l->pw + 2) + round_chunk[round];
}

static xxl_status
open_requests(xxl_lcp *l, xxl_env_sorter *s, size_t memory)
{
	return xxl_env_sort_open(&l->env, s, memory, 0, request_size(l), (size_t) l->pw, 0,
							 XXL_INPUT_UNBOUNDED);
}

xxl_status
lcp_resolve_open(xxl_lcp *l)
{
	if (xxl_env_sort_open(&l->env, &l->RS, l->share_small, 0, (size_t) (2 * l->pw), (size_t) l->pw, 0,
						  XXL_INPUT_UNBOUNDED) != XXL_OK)
		return l->env.err.code;
	l->RS_open = true;
	if (open_requests(l, &l->R, l->share_small) != XXL_OK)
		return l->env.err.code;
	l->R_open = true;
	return XXL_OK;
}

static xxl_status
push_request(xxl_lcp *l, xxl_env_sorter *s, uint64_t i, uint64_t j, uint64_t base, uint64_t limit)
{
	unsigned char rec[64];
	unsigned char *p = xxl_env_sort_room(s, rec);
	int			w = l->pw;

	put_be(p, j + base, w);
	put_be(p + w, i, w);
	put_be(p + 2 * w, base, w);
	put_be(p + 3 * w, limit, w);
	return xxl_env_sort_push(&l->env, s, p);
}

xxl_status
lcp_request(xxl_lcp *l, uint64_t i, uint64_t j, uint64_t limit)
{
	return push_request(l, &l->R, i, j, 0, limit);
}

static xxl_status
answer(xxl_lcp *l, uint64_t i, uint64_t v)
{
	return lcp_push_pair(l, &l->RS, i, v);
}

/* One round: R's requests in, answers to RS, survivors into *next (or compared at random). */
static xxl_status
run_round(xxl_lcp *l, int round, xxl_env_sorter *next)
{
	xxl_env    *env = &l->env;
	xxl_env_sorter SB = {0};
	size_t		c = round_chunk[round],
				rec_size = chunked_size(l, round);
	int			w = l->pw,
				got;
	const unsigned char *rec;
	unsigned char local[XXL_DSORT_MAX_RECORD];
	unsigned char here[512];
	xxl_status	rc = XXL_OK;

	if (xxl_env_sort_sort(env, &l->R) != XXL_OK ||
		xxl_env_sort_open(env, &SB, l->share_round, 0, rec_size, (size_t) w, 0, XXL_INPUT_UNBOUNDED) != XXL_OK)
		return env->err.code;
	/* pass 1: the chunk at j + base */
	while ((got = xxl_env_sort_next(env, &l->R, &rec)) > 0)
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
	xxl_env_sort_close(env, &l->R, NULL, NULL);
	l->R_open = false;
	/* R's memory goes to the next round's requests */
	if (xxl_env_sort_sort(env, &SB) != XXL_OK || (next && open_requests(l, next, l->share_round) != XXL_OK))
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
					m = 0;
		const unsigned char *chunk = rec + 5 * w + 2;

		if (xxl_text_store_read(l->store, at, here, len, &have) != XXL_OK)
		{
			rc = lcp_store_fail(l);
			goto out;
		}
		while (m < have && here[m] == chunk[m])
			m++;
		if (m < len || base + m >= limit)
		{
			l->st.round_resolved[round]++;
			if (answer(l, i, base + m) != XXL_OK)
				goto fail;
		}
		else if (next != NULL)
		{
			if (push_request(l, next, i, j, base + len, limit) != XXL_OK)
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
	xxl_env_sort_close(env, &SB, NULL, NULL);
	return rc;
}

xxl_status
lcp_resolve(xxl_lcp *l)
{
	for (int round = 0; round < LCP_ROUNDS; round++)
	{
		xxl_env_sorter next = {0};
		bool		last = round == LCP_ROUNDS - 1;

		l->st.rounds++;
		if (run_round(l, round, last ? NULL : &next) != XXL_OK)
		{
			xxl_env_sort_close(&l->env, &next, NULL, NULL);
			return l->env.err.code;
		}
		if (last)
			break;
		l->R = next;
		l->R_open = true;
	}
	return XXL_OK;
}
