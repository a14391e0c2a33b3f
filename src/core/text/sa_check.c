/*
 * sa_check.c — the external suffix-array checker of [T] §5.7 (Fig. 5.8,
 * Lemma 14 from [BK03]): SA is the suffix array of T iff it is a
 * permutation of [0,n) and, with r_i the rank of suffix i (r_n = 0), the
 * pairs (T[i], r_{i+1}) increase with r_i.
 *
 *  1. P = (SA[j], j+1) sorted by SA[j]: the positions must come out as
 *     exactly 0..n-1, which also gives r_i in text order (entries may
 *     instead come with explicit ranks, in any order: xxl_sa_check_put_ranked);
 *  2. one scan of P with T builds S = (r_i | T[i], r_{i+1});
 *  3. S sorted by r_i: the ranks must be exactly 1..n (always true for
 *     implicit ranks) and the pairs must increase strictly.
 *
 * Fields are 5 bytes (texts up to 2^40), so the I/O is sort(10n) + sort(11n)
 * bytes plus the text written once and read once.  Entries may arrive before
 * the text is complete: nothing depends on n until xxl_sa_check_run.
 */
#include "core/text/text_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FW 5					/* bytes per position or rank */

struct xxl_sa_checker
{
	xxl_env	env;
	xxl_spool		text;
	uint64_t	n;
	xxl_env_sorter P;
	xxl_env_sorter S;
	uint64_t	entries;
	bool		out_of_range;
	uint64_t	bad_index;
	uint64_t	bad_value;
	uint64_t	bad_rank;
	uint64_t	base;			/* added to positions and entry numbers in reasons */
	bool		ran;
	uint64_t	t_start;
	uint64_t	check_ns;
};

xxl_sa_checker *
xxl_sa_check_create(const xxl_sa_config *cfg, xxl_error *err)
{
	xxl_sa_checker *c = calloc(1, sizeof(*c));

	if (c == NULL)
	{
		xxl_error_set(err, XXL_ENOMEM, 0, "could not allocate the suffix array checker");
		return NULL;
	}
	if (xxl_env_open(&c->env, &cfg->res, &text_plan) != XXL_OK ||
		xxl_env_sort_open(&c->env, &c->P, c->env.pool / 2, 0, 2 * FW, FW, cfg->size_hint, XXL_INPUT_UNBOUNDED) != XXL_OK)
	{
		*err = c->env.err;
		xxl_env_close(&c->env);
		free(c);
		return NULL;
	}
	xxl_spool_init(&c->text, &c->env, c->env.spool_allowance);
	c->base = cfg->report_base;
	c->t_start = xxl_now_ns();
	return c;
}

static xxl_status
check_usable(xxl_sa_checker *c)
{
	if (c->env.err.code != XXL_OK)
		return c->env.err.code;
	if (c->ran)
		return xxl_error_set(&c->env.err, XXL_EINVAL, 0, "the check has already run");
	return XXL_OK;
}

xxl_status
xxl_sa_check_put_text(xxl_sa_checker *c, const void *bytes, size_t len)
{
	if (check_usable(c) != XXL_OK)
		return c->env.err.code;
	if (c->n + len >= XXL_SA_MAX_TEXT)
		return xxl_error_set(&c->env.err, XXL_EINVAL, 0, "text longer than 2^40 bytes");
	c->n += len;
	if (xxl_spool_write(&c->text, bytes, len) != XXL_OK || xxl_env_canceled(&c->env))
		return c->env.err.code;
	return XXL_OK;
}

/*
 * One entry: position pos has rank r (1-based).  Entries pushed in suffix
 * order have r = their index + 1; entries with explicit ranks may come in
 * any order, and step 3 checks that the ranks are exactly 1..n.
 */
static inline xxl_status
put_entry(xxl_sa_checker *c, uint64_t pos, uint64_t r)
{
	unsigned char rec[2 * FW],
			   *at;
	uint64_t	j = c->entries++;

	if (pos >= XXL_SA_MAX_TEXT || r == 0 || r >= XXL_SA_MAX_TEXT)
	{
		/* cannot be a suffix array of any text we accept */
		if (!c->out_of_range)
		{
			c->out_of_range = true;
			c->bad_index = j;
			c->bad_value = pos;
			c->bad_rank = r;
		}
		return XXL_OK;
	}
	at = xxl_env_sort_room(&c->P, rec);
	put_be(at, pos, FW);
	put_be(at + FW, r, FW);
	if (xxl_env_sort_push(&c->env, &c->P, at) != XXL_OK)
		return c->env.err.code;
	if ((c->entries & XXL_ENV_POLL_MASK) == 0 && xxl_env_canceled(&c->env))
		return c->env.err.code;
	return XXL_OK;
}

xxl_status
xxl_sa_check_put_sa(xxl_sa_checker *c, const uint64_t *pos, size_t count)
{
	if (check_usable(c) != XXL_OK)
		return c->env.err.code;
	for (size_t k = 0; k < count; k++)
		if (put_entry(c, pos[k], c->entries + 1) != XXL_OK)
			return c->env.err.code;
	return XXL_OK;
}

xxl_status
xxl_sa_check_put_ranked(xxl_sa_checker *c, const uint64_t *rank, const uint64_t *pos,
						size_t count)
{
	if (check_usable(c) != XXL_OK)
		return c->env.err.code;
	for (size_t k = 0; k < count; k++)
		if (put_entry(c, pos[k], rank[k]) != XXL_OK)
			return c->env.err.code;
	return XXL_OK;
}

/* Next P record: position and rank; false at the end. */
static int
next_p(xxl_sa_checker *c, uint64_t *pos, uint64_t *rank)
{
	const unsigned char *r;
	int			got = xxl_env_sort_next(&c->env, &c->P, &r);

	if (got > 0)
	{
		*pos = get_be(r, FW);
		*rank = get_be(r + FW, FW);
	}
	return got;
}

static xxl_status
check_run(xxl_sa_checker *c, bool *ok, char *why, size_t why_len)
{
	xxl_env   *env = &c->env;
	uint64_t	n = c->n;
	value_reader vr;
	unsigned char rec[2 * FW + 1],
			   *at;
	uint64_t	pos = 0,
				r = 0,
				npos = 0,
				nr = 0;
	int			got;
	xxl_status	rc = XXL_OK;

#define VERDICT(...) \
	do { \
		*ok = false; \
		if (why && why_len) \
			snprintf(why, why_len, __VA_ARGS__); \
		return XXL_OK; \
	} while (0)

	*ok = true;
	if (why && why_len)
		why[0] = '\0';
	if (xxl_spool_finish(&c->text) != XXL_OK)
		return env->err.code;
	if (c->out_of_range)
	{
		if (c->bad_value >= XXL_SA_MAX_TEXT)
			VERDICT("entry %llu holds position %llu, beyond any text",
					(unsigned long long) (c->bad_index + c->base),
					(unsigned long long) (c->bad_value + c->base));
		VERDICT("entry %llu holds rank %llu, outside 1..2^40",
				(unsigned long long) (c->bad_index + c->base), (unsigned long long) c->bad_rank);
	}
	if (c->entries != n)
		VERDICT("the suffix array has %llu entries but the text %llu bytes",
				(unsigned long long) c->entries, (unsigned long long) n);
	if (n == 0)
		return XXL_OK;

	/* 1 + 2: permutation, and S = (r_i | T[i], r_{i+1}) */
	if (xxl_env_sort_sort(env, &c->P) != XXL_OK ||
		xxl_env_sort_open(env, &c->S, env->pool / 2, 0, 2 * FW + 1, FW, n, XXL_INPUT_BOUNDED) != XXL_OK)
		return env->err.code;
	if (value_reader_open(&vr, &c->text, 1, true) != XXL_OK)
		return env->err.code;
	got = next_p(c, &pos, &r);
	for (uint64_t i = 0; i < n && rc == XXL_OK; i++)
	{
		uint64_t	t;

		if (got < 0)
		{
			rc = env->err.code;
			break;
		}
		if (pos != i)
		{
			value_reader_close(&vr);
			if (pos < i)
				VERDICT("position %llu occurs more than once",
						(unsigned long long) (pos + c->base));
			VERDICT("position %llu is missing", (unsigned long long) (i + c->base));
		}
		if (i + 1 < n)
		{
			got = next_p(c, &npos, &nr);
			if (got == 0)
			{
				got = -1;
				rc = xxl_error_set(&env->err, XXL_EINVAL, 0, "checker: entries ran short");
				break;
			}
		}
		else
			nr = 0;
		if ((rc = value_reader_next(&vr, &t)) != XXL_OK)
			break;
		at = xxl_env_sort_room(&c->S, rec);
		put_be(at, r, FW);
		at[FW] = (unsigned char) t;
		put_be(at + FW + 1, nr, FW);
		rc = xxl_env_sort_push(env, &c->S, at);
		pos = npos;
		r = nr;
		if ((i & XXL_ENV_POLL_MASK) == XXL_ENV_POLL_MASK && xxl_env_canceled(env))
			rc = env->err.code;
	}
	value_reader_close(&vr);
	if (rc != XXL_OK)
		return rc;
	xxl_env_sort_close(env, &c->P, NULL, NULL);
	xxl_spool_free(&c->text);

	/* 3: in rank order the pairs (T[i], r_{i+1}) must increase */
	if (xxl_env_sort_sort(env, &c->S) != XXL_OK)
		return env->err.code;
	{
		const unsigned char *s;
		unsigned char last[FW + 1];
		uint64_t	k = 0,
					last_rank = 0;

		while ((got = xxl_env_sort_next(env, &c->S, &s)) > 0)
		{
			uint64_t	rank = get_be(s, FW);

			/* explicit ranks must be exactly 1..n (implicit ones are) */
			if (rank != k + 1)
			{
				if (rank == last_rank)
					VERDICT("rank %llu occurs more than once", (unsigned long long) rank);
				VERDICT("rank %llu is missing", (unsigned long long) (k + 1));
			}
			if (k > 0 && memcmp(s + FW, last, FW + 1) <= 0)
				VERDICT("suffixes at ranks %llu and %llu are out of order",
						(unsigned long long) last_rank, (unsigned long long) rank);
			memcpy(last, s + FW, FW + 1);
			last_rank = rank;
			k++;
			if ((k & XXL_ENV_POLL_MASK) == 0 && xxl_env_canceled(env))
				return env->err.code;
		}
		if (got < 0)
			return env->err.code;
	}
	xxl_env_sort_close(env, &c->S, NULL, NULL);
	return XXL_OK;
#undef VERDICT
}

xxl_status
xxl_sa_check_run(xxl_sa_checker *c, bool *ok, char *why, size_t why_len)
{
	xxl_status	rc;

	*ok = false;
	if (check_usable(c) != XXL_OK)
		return c->env.err.code;
	c->ran = true;
	rc = check_run(c, ok, why, why_len);
	if (rc != XXL_OK)
		*ok = false;
	/* the verdict is in: give the disk space back now */
	xxl_env_sort_close(&c->env, &c->P, NULL, NULL);
	xxl_env_sort_close(&c->env, &c->S, NULL, NULL);
	xxl_spool_free(&c->text);
	c->check_ns = xxl_now_ns() - c->t_start;
	return rc;
}

const xxl_error *
xxl_sa_check_error(const xxl_sa_checker *c)
{
	return &c->env.err;
}

void
xxl_sa_check_stats_get(const xxl_sa_checker *c, xxl_sa_check_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->n = c->n;
	st->entries = c->entries;
	xxl_env_io_sum(&c->env, &st->bytes_read, &st->bytes_written, &st->io_wait_ns,
				   &st->io_direct);
	st->sorted_bytes = c->env.done.sorted_bytes;
	st->memory_peak = xxl_env_used_peak(&c->env);
	st->check_ns = c->check_ns;
}

void
xxl_sa_check_destroy(xxl_sa_checker *c)
{
	if (c == NULL)
		return;
	xxl_env_sort_close(&c->env, &c->P, NULL, NULL);
	xxl_env_sort_close(&c->env, &c->S, NULL, NULL);
	xxl_spool_free(&c->text);
	xxl_env_close(&c->env);
	free(c);
}

xxl_status
xxl_sa_check(const xxl_sa_config *cfg, xxl_sa_text_fn text, void *text_arg,
			 xxl_sa_pos_fn sa, void *sa_arg, bool *ok, char *why, size_t why_len,
			 xxl_error *err)
{
	xxl_sa_checker *c = xxl_sa_check_create(cfg, err);
	unsigned char tbuf[16384];
	uint64_t	pbuf[2048];
	long		got;
	xxl_status	rc = XXL_OK;

	*ok = false;
	if (c == NULL)
		return err->code;
	while (rc == XXL_OK && (got = text(text_arg, tbuf, sizeof(tbuf))) != 0)
		rc = got < 0 ? xxl_error_set(&c->env.err, XXL_EINVAL, 0, "text source failed")
			: xxl_sa_check_put_text(c, tbuf, (size_t) got);
	while (rc == XXL_OK && (got = sa(sa_arg, pbuf, sizeof(pbuf) / sizeof(pbuf[0]))) != 0)
		rc = got < 0 ? xxl_error_set(&c->env.err, XXL_EINVAL, 0, "suffix array source failed")
			: xxl_sa_check_put_sa(c, pbuf, (size_t) got);
	if (rc == XXL_OK)
		rc = xxl_sa_check_run(c, ok, why, why_len);
	if (rc != XXL_OK)
		*err = c->env.err;
	xxl_sa_check_destroy(c);
	return rc;
}
