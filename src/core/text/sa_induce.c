/*
 * sa_induce.c — the top level of the suffix array by induced sorting
 * (sa_induce_internal.h): the L- and S-passes over the bucket queues, the
 * plan, and the entry points the builder calls.
 */
#include "core/text/sa_induce_internal.h"

/* Steps 4 and 5 ------------------------------------------------------------- */

/*
 * An L item: [j][pre][a][l][S-run: a][L-run: l], l = the L-run's characters
 * left before j, pre = the character before the S-run (with the preceding
 * characters only: xw bytes).
 */
static inline xxl_status
push_l(sa_induce *is, uint64_t j, uint64_t pre, size_t a, size_t l, const unsigned char *S,
	   const unsigned char *L)
{
	uint64_t	c = chr(is, L, l - 1);
	size_t		h = (size_t) is->pw + is->xw + 4,
				len = h + (a + l - 1) * is->cw;
	unsigned char *to = is_queue_room(&is->qs, (int) c, len);

	if (to == NULL)
		return is->ps.env->err.code;
	put_be(to, j - 1, is->pw);
	put_be(to + is->pw, pre, is->xw);
	put_be(to + h - 4, a, 2);
	put_be(to + h - 2, l - 1, 2);
	memcpy(to + h, S, a * is->cw);
	memcpy(to + h + a * is->cw, L, (l - 1) * is->cw);
	is_queue_commit(&is->qs, (int) c, len);
	return XXL_OK;
}

/* An S item: [j][pre][s][S-run: s], s = the S-run's characters left before j. */
static inline xxl_status
push_s(sa_induce *is, uint64_t j, uint64_t pre, size_t s, const unsigned char *S)
{
	uint64_t	c = chr(is, S, s - 1);
	size_t		h = (size_t) is->pw + is->xw + 2,
				len = h + (s - 1) * is->cw;
	unsigned char *to = is_queue_room(&is->qs, (int) c, len);

	if (to == NULL)
		return is->ps.env->err.code;
	put_be(to, j - 1, is->pw);
	put_be(to + is->pw, pre, is->xw);
	put_be(to + h - 2, s - 1, 2);
	memcpy(to + h, S, (s - 1) * is->cw);
	is_queue_commit(&is->qs, (int) c, len);
	return XXL_OK;
}

/* The next LMS suffix's segment, whole, in rank order; *rec = NULL at the end. */
static xxl_status
next_lms(xxl_sa *sa, sa_induce *is, const unsigned char **rec)
{
	xxl_env    *env = &sa->env;
	const unsigned char *r;
	unsigned char *to = is->buf + is->buf_bytes / 3;
	size_t		h = SEG_HEAD(is),
				inl = (size_t) is->F * is->cw,
				len;
	int			got = xxl_env_scat_is_open(&is->segs) ? xxl_env_scat_next(env, &is->segs, &r) : 0;

	if (got <= 0)
	{
		*rec = NULL;
		return got < 0 ? env->err.code : XXL_OK;
	}
	len = seg_size(is, r);
	if (len <= h + inl)
	{
		*rec = r;
		return XXL_OK;
	}
	{
		const void *k,
				   *p;
		uint32_t	kl,
					pl;

		memcpy(to, r, h + inl);
		if (xxl_sorter_next_var(is->seg_long.s, &k, &kl, &p, &pl) <= 0 || pl != len - h - inl)
			return env->err.code ? env->err.code
				: xxl_error_set(&env->err, XXL_EINVAL, 0, "induced sorting: a long segment is missing");
		memcpy(to + h + inl, p, pl);
		*rec = to;
	}
	return XXL_OK;
}

/*
 * The L-suffixes go on the stack for the S-pass: a chain's end (its
 * predecessor is S-type) as [S-run: a][pre][j][a], any other as [T[j-1]][j]
 * [NOT_END] (T[j-1] with the preceding characters only).
 */
static xxl_status
l_pass(xxl_sa *sa, sa_induce *is)
{
	xxl_env    *env = &sa->env;
	const unsigned char *lms = is->sent;
	int			pw = is->pw,
				cw = is->cw,
				xw = is->xw;
	size_t		h = (size_t) pw + xw + 4;

	for (uint64_t c = 0; c <= is->K; c++)
	{
		const unsigned char *r;

		while ((r = is_queue_peek(&is->qs, (int) c)) != NULL)
		{
			uint64_t	j = get_be(r, pw),
						pre = get_be(r + pw, xw);
			size_t		a = get2(r + h - 4),
						l = get2(r + h - 2);
			const unsigned char *S = r + h,
					   *L = S + a * cw;
			unsigned char *to;

			if (l == 0)
			{
				to = is_stack_room(&is->lst, a * cw + xw + pw + 2);
				if (to == NULL)
					return env->err.code;
				memcpy(to, S, a * cw);
				put_be(to + a * cw, pre, xw);
				put_be(to + a * cw + xw, j, pw);
				put_be(to + a * cw + xw + pw, a, 2);
				is_stack_commit(&is->lst, a * cw + xw + pw + 2);
			}
			else
			{
				to = is_stack_room(&is->lst, xw + pw + 2);
				if (to == NULL)
					return env->err.code;
				put_be(to, chr(is, L, l - 1), xw);
				put_be(to + xw, j, pw);
				put_be(to + xw + pw, NOT_END, 2);
				is_stack_commit(&is->lst, xw + pw + 2);
				if (push_l(is, j, pre, a, l, S, L) != XXL_OK)
					return env->err.code;
			}
			is->nl[c]++;
			is_queue_advance(&is->qs, h + (a + l) * cw);
			if (dc3_poll(sa))
				return env->err.code;
		}
		if (env->err.code != XXL_OK)
			return env->err.code;
		while (lms != NULL && chr(is, lms + pw, 0) == c)
		{
			size_t		a = get2(lms + SEG_A(is)),
						b = get2(lms + SEG_A(is) + 2);
			const unsigned char *S = lms + SEG_HEAD(is);

			if (push_l(is, get_be(lms, pw), chr(is, lms + pw, 1), a, b, S, S + a * cw) != XXL_OK ||
				next_lms(sa, is, &lms) != XXL_OK)
				return env->err.code;
		}
		if (lms != NULL && chr(is, lms + pw, 0) < c)
			return xxl_error_set(&env->err, XXL_EINVAL, 0, "induced sorting: LMS suffixes out of order");
	}
	if (lms != NULL)
		return xxl_error_set(&env->err, XXL_EINVAL, 0, "induced sorting: LMS suffixes left over");
	xxl_env_scat_close(env, &is->segs, &sa->lstats[0].io_bytes, &sa->lstats[0].scattered_bytes);
	xxl_env_sort_close(env, &is->seg_long, &sa->lstats[0].io_bytes, &sa->lstats[0].sorted_bytes);
	return XXL_OK;
}

/* Suffix j out, largest first, with T[j-1] (0: j = 0) if the caller wants it. */
static inline xxl_status
emit(xxl_sa *sa, sa_induce *is, uint64_t j, uint64_t before)
{
	size_t		ow = (size_t) is->pw + (is->xw ? 2 : 0);
	unsigned char *to = is_stack_room(&is->out, ow);

	if (to == NULL)
		return sa->env.err.code;
	put_be(to, j, is->pw);
	if (is->xw)
		put_be(to + is->pw, before, 2);
	is_stack_commit(&is->out, ow);
	is->emitted++;
	return XXL_OK;
}

static xxl_status
s_pass(xxl_sa *sa, sa_induce *is)
{
	xxl_env    *env = &sa->env;
	int			pw = is->pw,
				cw = is->cw,
				xw = is->xw;
	size_t		h = (size_t) pw + xw + 2;

	if (is_stack_open(&is->out, &is->ps) != XXL_OK)
		return env->err.code;
	for (uint64_t c = is->K; c >= 1; c--)
	{
		const unsigned char *r;

		while ((r = is_queue_peek(&is->qs, (int) c)) != NULL)
		{
			uint64_t	j = get_be(r, pw),
						pre = get_be(r + pw, xw);
			size_t		s = get2(r + h - 2);

			if (emit(sa, is, j, s > 0 ? chr(is, r + h, s - 1) : pre) != XXL_OK ||
				(s > 0 && push_s(is, j, pre, s, r + h) != XXL_OK))
				return env->err.code;
			is_queue_advance(&is->qs, h + s * cw);
			if (dc3_poll(sa))
				return env->err.code;
		}
		if (env->err.code != XXL_OK)
			return env->err.code;
		for (uint64_t x = 0; x < is->nl[c]; x++)
		{
			const unsigned char *end = is_stack_top(&is->lst);
			size_t		a;
			uint64_t	j;

			if (end == NULL)
				return env->err.code ? env->err.code
					: xxl_error_set(&env->err, XXL_EINVAL, 0, "induced sorting: L-suffixes ended early");
			a = get2(end - 2);
			j = get_be(end - 2 - pw, pw);
			if (a == NOT_END)
			{
				if (emit(sa, is, j, get_be(end - 2 - pw - xw, xw)) != XXL_OK)
					return env->err.code;
				is_stack_back(&is->lst, xw + pw + 2);
			}
			else
			{
				const unsigned char *S = end - 2 - pw - xw - a * cw;
				uint64_t	pre = get_be(end - 2 - pw - xw, xw);

				if (emit(sa, is, j, a > 0 ? chr(is, S, a - 1) : pre) != XXL_OK ||
					(a > 0 && push_s(is, j, pre, a, S) != XXL_OK))
					return env->err.code;
				is_stack_back(&is->lst, a * cw + xw + pw + 2);
			}
			if (dc3_poll(sa))
				return env->err.code;
		}
	}
	if (is->emitted != is->n)
		return xxl_error_set(&env->err, XXL_EINVAL, 0, "induced sorting: %llu suffixes, expected %llu",
							 (unsigned long long) is->emitted, (unsigned long long) is->n);
	is_queues_close(&is->qs);
	is_stack_close(&is->lst);
	return XXL_OK;
}

/* Plan and entry points -------------------------------------------------------- */

/* The page for K+1 queues in QUEUE_PCT of the pool; 0 if none fits. */
static size_t
queue_page(const xxl_env *env, uint64_t K)
{
	size_t		room = env->pool / 100 * QUEUE_PCT / (size_t) (K + 3),
				page = IS_PAGE_MIN;

	if (room < IS_PAGE_MIN)
		return 0;
	while (page * 2 <= room && page * 2 <= 64 * 1024 && env->disk.block_size % (page * 2) == 0)
		page *= 2;
	return page;
}

void
sa_induce_free(xxl_sa *sa)
{
	sa_induce  *is = sa->is;
	xxl_env    *env = &sa->env;

	if (is == NULL)
		return;
	/* each close takes a part never opened or already closed */
	xxl_env_sort_close(env, &is->subs, NULL, NULL);
	xxl_env_sort_close(env, &is->subs_long, NULL, NULL);
	xxl_env_sort_close(env, &is->seg_long, NULL, NULL);
	xxl_env_scat_close(env, &is->segs, NULL, NULL);
	xxl_env_scat_close(env, &is->names, NULL, NULL);
	xxl_env_scat_close(env, &is->isa, NULL, NULL);
	is_queues_close(&is->qs);
	is_stack_close(&is->lst);
	is_stack_close(&is->out);
	is_pages_close(&is->ps);
	xxl_spool_free(&is->seg);
	if (is->nl)
		xxl_env_free(env, is->nl, (size_t) (is->K + 1) * sizeof(uint64_t));
	if (is->buf)
		xxl_env_free(env, is->buf, is->buf_bytes);
	free(is);
	sa->is = NULL;
}

/*
 * Whether the top level is built by induced sorting: positions (the BWT
 * mode is DC3's), an external text, the queues' pages in
 * their share, and the test's choice.
 */
static bool
induce_wanted(xxl_sa *sa, uint64_t K)
{
	if (sa->cfg.algorithm == XXL_SA_DC3 || sa->cfg.mode != XXL_SA_POSITIONS || sa->n < 2)
		return false;
	if (sa->cfg.algorithm == XXL_SA_AUTO && fits_internal(sa, sa->n, K, 0))
		return false;
	return queue_page(&sa->env, K) != 0;
}

/*
 * Build by induced sorting; *done = false (and nothing held) if the text
 * turned out not to suit it (see the top), so DC3 builds instead.
 */
xxl_status
sa_induce_build(xxl_sa *sa, uint64_t K, int cw, bool *done)
{
	xxl_env    *env = &sa->env;
	sa_induce  *is;
	uint64_t	D = 0;
	bool		fits;
	xxl_sa_level_stats *st = &sa->lstats[0];

	*done = false;
	if (!induce_wanted(sa, K))
		return XXL_OK;
	is = calloc(1, sizeof(*is));
	if (is == NULL)
		return xxl_error_set(&env->err, XXL_ENOMEM, 0, "could not allocate the induced sorter");
	sa->is = is;
	is->n = sa->n;
	is->K = K;
	is->cw = cw;
	is->xw = sa->cfg.with_prev ? cw : 0;
	is->pw = pos_width(sa, sa->n);
	is->kw = rank_width(sa, sa->n / 2 + 1);
	is->eb = 2 * K + 1 < 256 ? 8 : 2 * K + 1 < 512 ? 9 : 10;
	is->page = queue_page(env, K);
	is->carry_max = (double) CARRY_LIMIT * sa->n + 1e6;
	is->F = 12 / cw;
	/* an L item, a stack record or a segment must fit a page */
	is->seg_cap = (is->page - IS_PAGE_HEADER - SEG_HEAD(is) - 8) / (size_t) cw;
	if (is->seg_cap > 0xFFF0)
		is->seg_cap = 0xFFF0;
	is->buf_bytes = XXL_ROUND_UP(3 * (SEG_HEAD(is) + (is->seg_cap + 1) * 2 * 2) + 64, XXL_ALIGN);
	is->buf = xxl_env_alloc(env, is->buf_bytes);
	if (is->buf == NULL)
		return env->err.code;
	is->sent = is->buf + is->buf_bytes / 3 * 2;
	xxl_spool_init(&is->seg, env, spool_room(env) / 4);
	if (xxl_env_sort_open(env, &is->subs, env->pool / 100 * SHARE_SORT_PCT, 0, KEY + (size_t) is->kw,
						  KEY, sa->n / 2 + 1, XXL_INPUT_BOUNDED) != XXL_OK ||
		xxl_env_sort_open_var(env, &is->subs_long, long_share(env), 64, sa->n / 32) != XXL_OK)
		return env->err.code;
	if (lms_scan(sa, is, &fits) != XXL_OK)
		return env->err.code;
	if (!fits)
	{
		sa_induce_free(sa);
		return XXL_OK;
	}
	*done = true;
	if (dc3_reserve_lists(sa, sa->n) != XXL_OK)
		return env->err.code;
	sa->levels = 1;
	st->n = sa->n;
	st->alphabet = K;
	st->char_bytes = cw;
	st->induced = true;
	if (is->m > 0)
	{
		if (lms_name(sa, is, &D) != XXL_OK)
			return env->err.code;
		st->names_unique = D == is->m;
		if (D == is->m)
		{
			if (lms_sort_segments(sa, is, &is->names, width_for(is->m)) != XXL_OK)
				return env->err.code;
		}
		else if (lms_sort_reduced(sa, is, D) != XXL_OK ||
				 lms_sort_segments(sa, is, &is->isa, is->kw) != XXL_OK)
			return env->err.code;
	}
	else
	{
		const unsigned char *p;
		size_t		len;
		xxl_spool_reader rd;

		/* only $: its segment is the whole text, which fits a page */
		xxl_env_sort_close(env, &is->subs, NULL, NULL);
		xxl_env_sort_close(env, &is->subs_long, NULL, NULL);
		if (xxl_spool_reader_open(&rd, &is->seg, true) != XXL_OK)
			return env->err.code;
		for (size_t at = 0; xxl_spool_reader_piece(&rd, &p, &len) == XXL_OK && len > 0; at += len)
			memcpy(is->sent + at, p, len);
		xxl_spool_reader_close(&rd);
		xxl_spool_free(&is->seg);
	}
	is->nl = xxl_env_alloc(env, (size_t) (K + 1) * sizeof(uint64_t));
	if (is->nl == NULL)
		return env->err.code;
	memset(is->nl, 0, (size_t) (K + 1) * sizeof(uint64_t));
	if (is_pages_open(&is->ps, env, is->page) != XXL_OK ||
		is_queues_open(&is->qs, &is->ps, (int) K + 1) != XXL_OK ||
		is_stack_open(&is->lst, &is->ps) != XXL_OK ||
		l_pass(sa, is) != XXL_OK || s_pass(sa, is) != XXL_OK)
		return env->err.code;
	return XXL_OK;
}

/* The next suffixes in order, up to cap: how many, 0 at the end, -1 on error. */
int64_t
sa_induce_next(xxl_sa *sa, uint64_t *pos, int *prev, size_t cap)
{
	sa_induce  *is = sa->is;
	size_t		k = 0,
				ow = (size_t) is->pw + (is->xw ? 2 : 0);
	const uint8_t *unmap = top_unmap(sa, is->cw);

	while (k < cap)
	{
		const unsigned char *end = is_stack_top(&is->out);

		if (end == NULL)
		{
			if (sa->env.err.code != XXL_OK)
				return -1;
			break;
		}
		pos[k] = get_be(end - ow, is->pw);
		if (prev)
		{
			uint64_t	c = get_be(end - 2, 2);

			prev[k] = c == 0 ? -1 : prev_report(unmap, c);
		}
		k++;
		is_stack_back(&is->out, ow);
	}
	return (int64_t) k;
}
