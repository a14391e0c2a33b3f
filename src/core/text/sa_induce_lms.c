/*
 * sa_induce_lms.c — steps 1-3 of the induced top level (sa_induce_internal.h):
 * the scan for the LMS positions, their substrings named, the reduced
 * string's suffixes by DC3, and the segments permuted into the LMS
 * suffixes' order.
 */
#include "core/text/sa_induce_internal.h"

/* Step 1 -------------------------------------------------------------------- */

typedef struct scan
{
	sa_induce  *is;
	unsigned char *segrec,		/* the segment being built: header, S-run, then L-run */
			   *lrun;			/* its L-run, apart until the segment ends */
	size_t		a,
				b;
	uint64_t	pre;			/* the character before the segment (0: none) */
	uint64_t	run_c,			/* the run of equal characters being read */
				run_len,
				start;
	uint64_t	k;				/* LMS positions so far */
	unsigned char *key;			/* the previous segment's LMS substring key */
} scan;

static inline void
put_char(const sa_induce *is, unsigned char *p, size_t i, uint64_t c)
{
	if (is->cw == 1)
		p[i] = (unsigned char) c;
	else
		put_be(p + 2 * i, c, 2);
}

/*
 * LMS position p (character c) ends the segment being built: spool it, and
 * put the previous LMS position's substring (this segment and T[p]) into
 * the sorter.
 */
static xxl_status
end_segment(xxl_sa *sa, scan *sc, uint64_t p, uint64_t c)
{
	sa_induce  *is = sc->is;
	xxl_env    *env = &sa->env;
	unsigned char *r = sc->segrec;
	size_t		a = sc->a,
				b = sc->b,
				h = SEG_HEAD(is),
				len;

	put_be(r, p, is->pw);
	put_char(is, r + is->pw, 0, c);
	put_char(is, r + is->pw, 1, sc->pre);
	put_be(r + SEG_A(is), a, 2);
	put_be(r + SEG_A(is) + 2, b, 2);
	memcpy(r + h + a * is->cw, sc->lrun, b * is->cw);
	len = h + (a + b) * is->cw;
	if (xxl_spool_write(&is->seg, r, len) != XXL_OK)
		return env->err.code;
	is->carried += (double) b * a + (double) b * (b - 1) / 2 + (double) a * (a - 1) / 2;
	if (sc->k > 0)
	{
		unsigned char *key = sc->key,
					kbuf[KEY + 8];
		size_t		kl = 0;
		uint64_t	acc = 0;
		int			bits = 0;

		/* codes 2c + type, eb bits each, packed from the most significant bit */
		for (size_t i = 0; i <= a + b; i++)
		{
			acc = (acc << is->eb) | (i < a + b ? 2 * chr(is, r + h, i) + (i < a) : 2 * c + 1);
			bits += is->eb;
			while (bits >= 8)
			{
				bits -= 8;
				key[kl++] = (unsigned char) (acc >> bits);
			}
		}
		if (bits > 0)
			key[kl++] = (unsigned char) (acc << (8 - bits));
		if (kl <= KEY)
		{
			unsigned char *rec = xxl_env_sort_room(&is->subs, kbuf);

			memcpy(rec, key, kl);
			memset(rec + kl, 0, KEY - kl);
			put_be(rec + KEY, sc->k - 1, is->kw);
			if (xxl_env_sort_push(env, &is->subs, rec) != XXL_OK)
				return env->err.code;
		}
		else
		{
			put_be(kbuf, sc->k - 1, is->kw);
			if (xxl_sorter_put_var(is->subs_long.s, key, (uint32_t) kl, kbuf, (uint32_t) is->kw) != XXL_OK)
				return xxl_env_sort_error(env, &is->subs_long);
		}
	}
	sc->k++;
	sc->pre = b > 0 ? chr(is, sc->lrun, b - 1) : 0;
	sc->a = sc->b = 0;
	return XXL_OK;
}

/* Append a run of len characters c of one type; false if the segment would be too long. */
static bool
add_run(scan *sc, uint64_t c, uint64_t len, bool s_type)
{
	sa_induce  *is = sc->is;
	unsigned char *to;
	size_t		at;

	if (sc->a + sc->b + len > is->seg_cap)
		return false;
	to = s_type ? sc->segrec + SEG_HEAD(is) : sc->lrun;
	at = s_type ? sc->a : sc->b;
	for (uint64_t i = 0; i < len; i++)
		put_char(is, to, at + i, c);
	if (s_type)
		sc->a += len;
	else
		sc->b += len;
	return true;
}

/* A run typed: an S-run after an L-run starts at an LMS position. */
static xxl_status
typed_run(xxl_sa *sa, scan *sc, uint64_t start, uint64_t c, uint64_t len, bool s_type, bool *fits)
{
	if (s_type && sc->b > 0 && end_segment(sa, sc, start, c) != XXL_OK)
		return sa->env.err.code;
	*fits = add_run(sc, c, len, s_type) && sc->is->carried <= sc->is->carry_max;
	return XXL_OK;
}

/* One character of the scan: a run ends where the character changes. */
static inline xxl_status
scan_char(xxl_sa *sa, scan *sc, uint64_t c, bool *fits)
{
	if (c == sc->run_c)
	{
		sc->run_len++;
		return XXL_OK;
	}
	if (sc->run_len > 0)
	{
		if (typed_run(sa, sc, sc->start, sc->run_c, sc->run_len, sc->run_c < c, fits) != XXL_OK)
			return sa->env.err.code;
		sc->start += sc->run_len;
	}
	sc->run_c = c;
	sc->run_len = 1;
	return XXL_OK;
}

xxl_status
lms_scan(xxl_sa *sa, sa_induce *is, bool *fits)
{
	xxl_env    *env = &sa->env;
	scan		sc;
	xxl_status	rc = XXL_OK;

	memset(&sc, 0, sizeof(sc));
	sc.is = is;
	sc.segrec = is->buf;
	sc.lrun = is->buf + SEG_HEAD(is) + is->seg_cap * is->cw;
	sc.key = sc.lrun + is->seg_cap * is->cw;
	*fits = true;
	if (!sa->cfg.separated)
	{
		/* bytes: a piece of the spool at a time */
		xxl_spool_reader rd;
		const unsigned char *p;
		size_t		len;

		if (xxl_spool_reader_open(&rd, &sa->text, false) != XXL_OK)
			return env->err.code;
		while (*fits && (rc = xxl_spool_reader_piece(&rd, &p, &len)) == XXL_OK && len > 0)
		{
			for (size_t x = 0; x < len && *fits && rc == XXL_OK; x++)
				rc = scan_char(sa, &sc, sa->map[p[x]], fits);
			if (rc == XXL_OK && xxl_env_poll_n(env, len))
				rc = env->err.code;
		}
		xxl_spool_reader_close(&rd);
	}
	else
	{
		/* a separated text: raw values of two bytes */
		value_reader vr;
		uint64_t	raw;

		if (value_reader_open(&vr, &sa->text, 2, false) != XXL_OK)
			return env->err.code;
		for (uint64_t i = 0; i < is->n && *fits && rc == XXL_OK; i++)
		{
			if ((rc = value_reader_next(&vr, &raw)) == XXL_OK)
				rc = scan_char(sa, &sc, sa->map[raw], fits);
			if (rc == XXL_OK && dc3_poll(sa))
				rc = env->err.code;
		}
		value_reader_close(&vr);
	}
	if (rc != XXL_OK || !*fits)
		return rc;
	/* the last run is L-type (followed by $), and $ at n is LMS */
	if (typed_run(sa, &sc, sc.start, sc.run_c, sc.run_len, false, fits) != XXL_OK ||
		(*fits && end_segment(sa, &sc, is->n, 0) != XXL_OK))
		return env->err.code;
	if (sc.start + sc.run_len != is->n)
		return xxl_error_set(&env->err, XXL_EINVAL, 0, "induced sorting: scanned %llu characters of %llu",
							 (unsigned long long) (sc.start + sc.run_len), (unsigned long long) is->n);
	if (is->carried > is->carry_max)
		*fits = false;
	is->m = sc.k - 1;
	return xxl_spool_finish(&is->seg);
}

/* Step 2 -------------------------------------------------------------------- */

/* The next of the long LMS substrings, or *key = NULL at the end. */
static xxl_status
next_long(xxl_env *env, sa_induce *is, const unsigned char **key, uint32_t *kl,
		  const unsigned char **pay)
{
	const void *k,
			   *p;
	uint32_t	pl;
	int			r = xxl_sorter_next_var(is->subs_long.s, &k, kl, &p, &pl);

	if (r < 0)
		return xxl_env_sort_error(env, &is->subs_long);
	*key = r > 0 ? k : NULL;
	*pay = p;
	return XXL_OK;
}

/*
 * The two sorts merged: a short key (padded with 0 bits; no character's
 * code is 0, so padding and length go together) and a long one always
 * differ in their first KEY bytes, since no LMS substring is a proper
 * prefix of another.  A short key is compared whole, padding included.
 */
xxl_status
lms_name(xxl_sa *sa, sa_induce *is, uint64_t *D)
{
	xxl_env    *env = &sa->env;
	unsigned char *prev = is->buf;
	uint32_t	prev_len = 0,
				kl_long = 0;
	uint64_t	name = 0,
				got = 0;
	const unsigned char *srec = NULL,
			   *lkey = NULL,
			   *lpay = NULL;
	int			r,
				nw = width_for(is->m);

	if (xxl_env_sort_sort(env, &is->subs) != XXL_OK ||
		xxl_env_sort_sort(env, &is->subs_long) != XXL_OK ||
		xxl_env_scat_open(env, &is->names, env->pool / 100 * SHARE_SCATTER_PCT,
						  (size_t) nw, is->m) != XXL_OK)
		return env->err.code;
	if ((r = xxl_env_sort_next(env, &is->subs, &srec)) < 0 ||
		next_long(env, is, &lkey, &kl_long, &lpay) != XXL_OK)
		return env->err.code;
	if (r == 0)
		srec = NULL;
	while (srec != NULL || lkey != NULL)
	{
		const unsigned char *key,
				   *pay;
		uint32_t	kl;
		bool		take_long = srec == NULL || (lkey != NULL && memcmp(lkey, srec, KEY) < 0);

		if (take_long)
		{
			key = lkey;
			kl = kl_long;
			pay = lpay;
		}
		else
		{
			key = srec;
			kl = KEY;
			pay = srec + KEY;
		}
		if (name == 0 || kl != prev_len || memcmp(key, prev, kl) != 0)
		{
			name++;
			memcpy(prev, key, kl);
			prev_len = kl;
		}
		put_be(xxl_env_scat_room(&is->names), name, nw);
		if (xxl_env_scat_push(env, &is->names, get_be(pay, is->kw)) != XXL_OK)
			return env->err.code;
		got++;
		if (take_long)
		{
			if (next_long(env, is, &lkey, &kl_long, &lpay) != XXL_OK)
				return env->err.code;
		}
		else if ((r = xxl_env_sort_next(env, &is->subs, &srec)) <= 0)
		{
			if (r < 0)
				return env->err.code;
			srec = NULL;
		}
		if (dc3_poll(sa))
			return env->err.code;
	}
	if (got != is->m)
		return xxl_error_set(&env->err, XXL_EINVAL, 0, "induced sorting: %llu LMS substrings sorted, expected %llu",
							 (unsigned long long) got, (unsigned long long) is->m);
	xxl_env_sort_close(env, &is->subs, &sa->lstats[0].io_bytes, &sa->lstats[0].sorted_bytes);
	xxl_env_sort_close(env, &is->subs_long, &sa->lstats[0].io_bytes, &sa->lstats[0].sorted_bytes);
	*D = name;
	return xxl_env_scat_finish(env, &is->names);
}

/* The reduced string's suffixes by DC3; their ranks into ISA, by LMS index. */
xxl_status
lms_sort_reduced(xxl_sa *sa, sa_induce *is, uint64_t D)
{
	xxl_env    *env = &sa->env;
	dc3_level  *child;
	char_out	co;
	const unsigned char *rec;
	uint64_t	j = 0,
				out[OUT_BATCH];
	int64_t		got;
	int			nw = width_for(is->m),
				r;
	size_t		share = env->pool / 100 * SHARE_SCATTER_PCT;

	child = dc3_child_new(sa, 1, is->m, D, share);
	if (child == NULL)
		return env->err.code;
	sa->top = child;			/* freed with the builder on any error */
	co.fill = 0;
	while ((r = xxl_env_scat_next(env, &is->names, &rec)) > 0)
		if (char_out_put(&child->own, &co, get_be(rec, nw), child->cw) != XXL_OK)
			return env->err.code;
	if (r < 0 || char_out_flush(&child->own, &co) != XXL_OK || xxl_spool_finish(&child->own) != XXL_OK)
		return env->err.code;
	xxl_env_scat_close(env, &is->names, &sa->lstats[0].io_bytes, &sa->lstats[0].scattered_bytes);
	if (dc3_level_build(sa, child) != XXL_OK ||
		xxl_env_scat_open(env, &is->isa, share, (size_t) is->kw, is->m) != XXL_OK)
		return env->err.code;
	(void) dc3_merger_start(sa, child);
	while ((got = dc3_merge_next(sa, child, out, NULL, OUT_BATCH)) > 0)
	{
		for (int64_t x = 0; x < got; x++)
		{
			put_be(xxl_env_scat_room(&is->isa), ++j, is->kw);
			if (xxl_env_scat_push(env, &is->isa, sa->cur_pos[x]) != XXL_OK)
			{
				dc3_merger_abandon(sa);
				return env->err.code;
			}
		}
	}
	if (got < 0)
		return env->err.code;
	if (j != is->m)
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "induced sorting: the reduced string gave %llu suffixes, expected %llu",
							 (unsigned long long) j, (unsigned long long) is->m);
	dc3_child_free(sa, child);
	sa->top = NULL;
	return xxl_env_scat_finish(env, &is->isa);
}

/*
 * Step 3: the segments by rank (ranks from ISA or, if unique, the names):
 * permuted with their first F characters, the rest of a longer one sorted
 * by rank beside them.
 */
xxl_status
lms_sort_segments(xxl_sa *sa, sa_induce *is, xxl_env_scatter *ranks, int rw)
{
	xxl_env    *env = &sa->env;
	xxl_spool_reader rd;
	unsigned char *rec = is->buf,
				kbuf[8];
	const unsigned char *p,
			   *rk;
	size_t		h = SEG_HEAD(is),
				inl = (size_t) is->F * is->cw;
	xxl_status	rc = XXL_OK;

	if (xxl_env_scat_open(env, &is->segs, env->pool / 100 * SHARE_SEGMENTS_PCT, SEGF(is), is->m) != XXL_OK ||
		xxl_env_sort_open_var(env, &is->seg_long, long_share(env), 64, is->m / 16) != XXL_OK)
		return env->err.code;
	if (xxl_spool_reader_open(&rd, &is->seg, true) != XXL_OK)
		return env->err.code;
	for (uint64_t k = 0; k <= is->m && rc == XXL_OK; k++)
	{
		size_t		len;
		uint64_t	rank;

		if ((rc = xxl_spool_read(&rd, h, &p)) != XXL_OK)
			break;
		memcpy(rec, p, h);
		len = seg_size(is, rec);
		for (size_t at = h; at < len && rc == XXL_OK; at += 32)
		{
			size_t		piece = len - at < 32 ? len - at : 32;

			if ((rc = xxl_spool_read(&rd, piece, &p)) == XXL_OK)
				memcpy(rec + at, p, piece);
		}
		if (rc != XXL_OK)
			break;
		if (k == is->m)
		{
			memcpy(is->sent, rec, len);
			break;
		}
		if (xxl_env_scat_next(env, ranks, &rk) != 1)
		{
			rc = env->err.code ? env->err.code
				: xxl_error_set(&env->err, XXL_EINVAL, 0, "induced sorting: ranks ended early");
			break;
		}
		rank = get_be(rk, rw);
		{
			unsigned char *slot = xxl_env_scat_room(&is->segs);
			size_t		n = len < h + inl ? len : h + inl;

			/* (a short segment's slot is written whole: no stale bytes on disk) */
			memcpy(slot, rec, n);
			memset(slot + n, 0, h + inl - n);
		}
		if ((rc = xxl_env_scat_push(env, &is->segs, rank - 1)) != XXL_OK)
			break;
		if (len > h + inl)
		{
			put_be(kbuf, rank, is->kw);
			if (xxl_sorter_put_var(is->seg_long.s, kbuf, (uint32_t) is->kw, rec + h + inl,
								   (uint32_t) (len - h - inl)) != XXL_OK)
				rc = xxl_env_sort_error(env, &is->seg_long);
		}
		if (rc == XXL_OK && dc3_poll(sa))
			rc = env->err.code;
	}
	xxl_spool_reader_close(&rd);
	xxl_spool_free(&is->seg);
	if (rc != XXL_OK)
		return rc;
	xxl_env_scat_close(env, ranks, &sa->lstats[0].io_bytes, &sa->lstats[0].scattered_bytes);
	if (xxl_env_sort_sort(env, &is->seg_long) != XXL_OK)
		return env->err.code;
	return xxl_env_scat_finish(env, &is->segs);
}
