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

/*
 * Every request of a round has compared the same number of bytes: the
 * chunks of the rounds before (a pair goes on only when it agreed over
 * the whole chunk, and one whose limit ends within the chunk is answered).
 * So the base is the round's, not the record's.
 */
static uint64_t
round_base(int round)
{
	uint64_t	base = 0;

	for (int r = 0; r < round; r++)
		base += round_chunk[r];
	return base;
}

/* Bytes compared in a round from base on: its chunk, or up to the limit. */
static inline size_t
chunk_len(uint64_t base, uint64_t limit, size_t chunk)
{
	return limit - base < chunk ? (size_t) (limit - base) : chunk;
}

/* spooled requests: i, j, limit */
static size_t
request_size(const xxl_lcp *l)
{
	return (size_t) (3 * l->pw);
}

/* sorted by the far side: key = j + base, i, limit */
#define far_size request_size

/*
 * with their chunk: key = i + base, j, limit, the chunk (its length is
 * limit − base or the round's chunk, whichever is less)
 */
static size_t
chunked_size(const xxl_lcp *l, int round)
{
	return (size_t) (3 * l->pw) + round_chunk[round];
}

static xxl_status
spool_request(xxl_lcp *l, xxl_spool *sp, uint64_t *count, uint64_t i, uint64_t j, uint64_t limit)
{
	unsigned char rec[32];
	int			w = l->pw;

	put_be(rec, i, w);
	put_be(rec + w, j, w);
	put_be(rec + 2 * w, limit, w);
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
	return spool_request(l, &l->Q, &l->Q_count, i, j, limit);
}

/* i's LCP, found by the round: its spool stays in position order */
static xxl_status
answer(xxl_lcp *l, int round, uint64_t i, uint64_t v)
{
	unsigned char rec[16];

	put_be(rec, i, l->pw);
	put_be(rec + l->pw, v, l->pw);
	l->ans_left[round]++;
	return xxl_spool_write(&l->ans[round], rec, (size_t) (2 * l->pw));
}

/*
 * A round's sort of count records: a distribution sort where it fits, half
 * the parts' share while it distributes and a quarter while it hands out
 * (the far side's hands out while the chunked one takes records, and is
 * gone when that one distributes: `other`).  Where it does not fit, or the
 * pool would not have its half then (a permutation beside it took more
 * than its share), the first takes half of what the pool has free and the
 * second the rest, for its whole life where the merge sort stands in (at
 * 1MB, a third more than a quarter of the shares: a merge pass fewer).
 */
static xxl_status
open_round_sort(xxl_lcp *l, xxl_env_sorter *s, size_t rec_size, uint64_t count,
				const xxl_env_sorter *other)
{
	size_t		memory = l->share_round * 2,
				output = l->share_round,
				free = xxl_env_pool_free(&l->env);

	if (count == 0)
		count = 1;
	if (!xxl_env_sort_distributes(&l->env, memory, output, rec_size, (size_t) l->pw, count) ||
		free + (other ? other->memory : 0) < memory)
	{
		size_t		want = other ? free : free / 2;

		if (want >= xxl_sort_min_memory(XXL_ALIGN))
			memory = output = want;
	}
	return xxl_env_sort_open(&l->env, s, memory, output, rec_size, (size_t) l->pw, count,
							 XXL_INPUT_BOUNDED);
}

size_t
lcp_rounds_need(xxl_lcp *l)
{
	size_t		least = xxl_sort_min_memory(XXL_ALIGN);

	/* a distribution sort that takes a request at every position takes fewer */
	if (xxl_env_sort_distributes(&l->env, l->share_round * 2, l->share_round, chunked_size(l, 0),
								 (size_t) l->pw, l->n > 0 ? l->n : 1))
		return l->share_round * 2 > 2 * least ? l->share_round * 2 : 2 * least;
	return 2 * least;
}

/*
 * One round: the requests in src (count of them) answered into its spool, or
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
	uint64_t	base = round_base(round);
	int			w = l->pw,
				got;
	const unsigned char *rec;
	unsigned char local[XXL_DSORT_MAX_RECORD];
	unsigned char here[512];
	xxl_status	rc = XXL_OK;

	/* the requests, by the far side */
	if (open_round_sort(l, &R, far_size(l), count, NULL) != XXL_OK ||
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
		put_be(p, get_be(q + w, w) + base, w);	/* j + base */
		memcpy(p + w, q, (size_t) w);	/* i */
		memcpy(p + 2 * w, q + 2 * w, (size_t) w);	/* limit */
		if (xxl_env_sort_push(env, &R, p) != XXL_OK)
		{
			xxl_spool_reader_close(&rd);
			goto fail;
		}
	}
	xxl_spool_reader_close(&rd);
	xxl_spool_free(src);
	if (xxl_env_sort_sort(env, &R) != XXL_OK ||
		open_round_sort(l, &SB, rec_size, count, &R) != XXL_OK)
		goto fail;

	/* pass 1: the chunk at j + base */
	while ((got = xxl_env_sort_next(env, &R, &rec)) > 0)
	{
		uint64_t	at = get_be(rec, w),
					i = get_be(rec + w, w),
					limit = get_be(rec + 2 * w, w);
		size_t		want = chunk_len(base, limit, c),
					have;
		unsigned char *p = xxl_env_sort_room(&SB, local);

		put_be(p, i + base, w);
		put_be(p + w, at - base, w);
		put_be(p + 2 * w, limit, w);
		if (xxl_text_store_read(l->store, at, p + 3 * w, want, &have) != XXL_OK)
		{
			rc = lcp_store_fail(l);
			goto out;
		}
		if (have != want)
		{
			xxl_error_set(&env->err, XXL_EIO, 0, "the text store gave %zu bytes at %llu, not %zu",
						  have, (unsigned long long) at, want);
			goto fail;
		}
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
					i = at - base,
					j = get_be(rec + w, w),
					limit = get_be(rec + 2 * w, w);
		size_t		len = chunk_len(base, limit, c),
					have,
					m;
		const unsigned char *chunk = rec + 3 * w;

		if (xxl_text_store_read(l->store, at, here, len, &have) != XXL_OK)
		{
			rc = lcp_store_fail(l);
			goto out;
		}
		m = (size_t) text_common_prefix(here, chunk, have);
		if (m < len || base + m >= limit)
		{
			l->st.round_resolved[round]++;
			if (answer(l, round, i, base + m) != XXL_OK)
				goto fail;
		}
		else if (next != NULL)
		{
			/* agreed over the whole chunk, short of the limit: base + c next */
			if (spool_request(l, next, next_count, i, j, limit) != XXL_OK)
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
			if (answer(l, round, i, base + len + more) != XXL_OK)
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

	spools[0] = l->Q;
	l->Q_open = false;
	for (int round = 0; round < XXL_LCP_ROUNDS; round++)
	{
		bool		last = round == XXL_LCP_ROUNDS - 1;
		uint64_t	next_count = 0;

		if (!last)
			xxl_spool_init(&spools[1 - cur], &l->env, XXL_SPOOL_SHARED);
		xxl_spool_init(&l->ans[round], &l->env, XXL_SPOOL_SHARED);
		l->ans_left[round] = 0;
		l->nans = round + 1;
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

/* The next answer of reader k, if it has one left. */
static xxl_status
answer_advance(xxl_lcp *l, int k)
{
	const unsigned char *p;
	int			w = l->pw;

	if (l->ans_left[k] == 0)
	{
		l->ans_i[k] = UINT64_MAX;
		return XXL_OK;
	}
	if (xxl_spool_read(&l->ans_rd[k], (size_t) (2 * w), &p) != XXL_OK)
		return lcp_fail(l);
	l->ans_i[k] = get_be(p, w);
	l->ans_v[k] = get_be(p + w, w);
	l->ans_left[k]--;
	return XXL_OK;
}

xxl_status
lcp_answers_open(xxl_lcp *l)
{
	for (int k = 0; k < l->nans; k++)
	{
		if (xxl_spool_finish(&l->ans[k]) != XXL_OK ||
			xxl_spool_reader_open(&l->ans_rd[k], &l->ans[k], true) != XXL_OK)
			return lcp_fail(l);
		l->nans_rd = k + 1;
		if (answer_advance(l, k) != XXL_OK)
			return l->env.err.code;
	}
	return XXL_OK;
}

/*
 * The answer for i, asked in ascending i: at most one reader's next answer
 * is i's, since each request is answered once.
 */
xxl_status
lcp_answer_for(xxl_lcp *l, uint64_t i, bool *found, uint64_t *v)
{
	*found = false;
	for (int k = 0; k < l->nans_rd; k++)
		if (l->ans_i[k] == i)
		{
			*found = true;
			*v = l->ans_v[k];
			return answer_advance(l, k);
		}
	return XXL_OK;
}

void
lcp_answers_close(xxl_lcp *l)
{
	for (int k = 0; k < l->nans_rd; k++)
		xxl_spool_reader_close(&l->ans_rd[k]);
	l->nans_rd = 0;
	for (int k = 0; k < l->nans; k++)
		xxl_spool_free(&l->ans[k]);
	l->nans = 0;
}
