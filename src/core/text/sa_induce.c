/*
 * sa_induce.c — the top level of the suffix array by induced sorting
 * (SA-IS, Nong, Zhang and Chan 2009, in external memory after eSAIS,
 * Bingmann, Fischer and Osipov 2013), with external DC3 (dc3_level.c) on
 * the reduced string below.
 *
 * Suffix i is S-type if it is smaller than suffix i+1, else L-type; an
 * S-suffix whose predecessor is L-type is an LMS suffix.  Between two
 * consecutive LMS positions q < p the types are S^a L^b: the segment of p,
 * T[q..p-1] (the first segment starts at 0).  The $ at n is an LMS suffix.
 *
 *  1. one scan of the text (by runs of equal characters, which share a
 *     type) spools every LMS position's segment, and puts each LMS
 *     substring T[q..p] (the segment of p and T[p]) with its types into a
 *     sorter of variable-length keys;
 *  2. the sorted substrings are named; names in text order are the reduced
 *     string, whose suffix order is the LMS suffixes' order: if the names
 *     are unique they are the ranks, else DC3 sorts the reduced string's
 *     suffixes (an external level 1, as if its parent were DC3's level 0)
 *     and their ranks are permuted into text order;
 *  3. the segments are sorted by their LMS suffix's rank;
 *  4. the L-pass: buckets in increasing order of their first character; a
 *     bucket's L-suffixes come from its queue, each putting its predecessor
 *     (if L-type) into the queue of the predecessor's character; then the
 *     bucket's LMS suffixes put their predecessors.  Every item carries the
 *     characters it still needs (the rest of its L-run and its S-run), so no
 *     pass reads the text.  The L-suffixes are stacked in order;
 *  5. the S-pass: buckets in decreasing order; a bucket's S-suffixes come
 *     from its queue, then its L-suffixes from the stack backwards; each puts
 *     its predecessor, if S-type, into that character's queue.  Suffixes
 *     come out largest first and are permuted to their ranks.
 *
 * Queues and the stack (is_pages.c) hold a page per bucket.  The scan gives
 * up, and DC3 builds the whole array, where induced sorting would not pay:
 * a segment longer than a page holds, or items whose carried characters
 * would add up to more than CARRY_LIMIT bytes per text byte (long runs:
 * each item of a run carries the rest of it).
 */
#include "core/text/dc3_internal.h"
#include "core/text/is_pages.h"

#include <stdlib.h>
#include <string.h>

/* Carried characters per text character beyond which DC3 is used. */
#define CARRY_LIMIT 8
/* Share of the pool the queues' pages may take. */
#define QUEUE_PCT 30
#define SHARE_SORT_PCT 50
#define SHARE_SCATTER_PCT 25
#define SHARE_SEGMENTS_PCT 45
#define SHARE_LONG_PCT 10
/* a segment: [p][T[p]][T[q-1], 0 if q = 0][a][b][S-run][L-run] */
#define SEG_HEAD(is) ((size_t) (is)->pw + 2 * (is)->cw + 4)
#define SEG_A(is) ((size_t) (is)->pw + 2 * (is)->cw)
#define NOT_END 0xFFFF
/* Key bytes of the LMS substrings' distribution sort. */
#define KEY 8
#define SEGF(is) (SEG_HEAD(is) + (size_t) (is)->F * (is)->cw)

typedef struct sa_induce
{
	uint64_t	n,
				K,
				m;				/* LMS positions before n */
	int			cw,				/* bytes per character in records */
				xw,				/* per character before a run: cw if the
								 * preceding characters are wanted, else 0 */
				pw,				/* per position */
				kw,				/* per LMS index or rank (0..m) */
				eb;				/* bits per character of a substring's key: 2c + type */
	size_t		page,
				seg_cap;		/* most characters in a segment */
	double		carried;		/* characters items will carry */
	xxl_spool	seg;			/* segments in text order: [p][T[p]][a][b][S-run][L-run] */
	xxl_env_sorter subs,		/* LMS substrings of up to KEY key bytes
								 * (padded with 0), then the LMS index */
				subs_long,		/* longer ones: key, LMS index */
				seg_long;		/* by rank: the characters of long segments
								 * beyond the inline ones */
	xxl_env_scatter names,		/* LMS index -> name */
				isa,			/* LMS index -> rank (names not unique) */
				segs;			/* rank -> segment, its first F characters inline */
	int			F;				/* characters inline in segs */
	is_pages	ps;
	is_queues	qs;
	is_stack	lst,			/* the L-suffixes in order */
				out;			/* all suffixes, largest first */
	uint64_t   *nl;				/* L-suffixes per bucket */
	unsigned char *buf;			/* scratch: two segments and two keys */
	size_t		buf_bytes;
	unsigned char *sent;		/* the segment of $ */
	uint64_t	emitted;
} sa_induce;

static inline uint64_t
chr(const sa_induce *is, const unsigned char *p, size_t i)
{
	return is->cw == 1 ? p[i] : get_be(p + 2 * i, 2);
}

static inline uint32_t
get2(const unsigned char *p)
{
	return (uint32_t) get_be(p, 2);
}

static size_t
seg_size(const sa_induce *is, const unsigned char *rec)
{
	return SEG_HEAD(is) + (get2(rec + SEG_A(is)) + get2(rec + SEG_A(is) + 2)) * is->cw;
}

/* What the sorts of long substrings and segments get: few records. */
static size_t
long_share(const xxl_env *env)
{
	size_t		share = env->pool / 100 * SHARE_LONG_PCT;

	return share > 192 * 1024 ? share : 192 * 1024;
}

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
	char_out	co;
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
	*fits = add_run(sc, c, len, s_type) &&
		sc->is->carried <= (double) CARRY_LIMIT * sc->is->n + 1e6;
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

static xxl_status
scan_text(xxl_sa *sa, sa_induce *is, bool *fits)
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
	if (is->carried > (double) CARRY_LIMIT * is->n + 1e6)
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
static xxl_status
name_substrings(xxl_sa *sa, sa_induce *is, uint64_t *D)
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
static xxl_status
sort_reduced(xxl_sa *sa, sa_induce *is, uint64_t D)
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

	child = xxl_budget_alloc(&env->budget, sizeof(*child), &env->err);
	if (child == NULL)
		return env->err.code;
	memset(child, 0, sizeof(*child));
	sa->top = child;			/* freed with the builder on any error */
	child->depth = 1;
	child->n = is->m;
	child->K = D;
	child->cw = char_width(sa, D);
	child->tsp = &child->own;
	child->tw = child->cw;
	child->share_cons = share;
	xxl_spool_init(&child->own, env, spool_room(env) / 2);
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
	dc3_level_free(sa, child);
	xxl_budget_free(&env->budget, child, sizeof(*child));
	sa->top = NULL;
	return xxl_env_scat_finish(env, &is->isa);
}

/*
 * Step 3: the segments by rank (ranks from ISA or, if unique, the names):
 * permuted with their first F characters, the rest of a longer one sorted
 * by rank beside them.
 */
static xxl_status
sort_segments(xxl_sa *sa, sa_induce *is, xxl_env_scatter *ranks, int rw)
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
		memcpy(xxl_env_scat_room(&is->segs), rec, len < h + inl ? len : h + inl);
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
		return XXL_ENOMEM;
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
		return XXL_ENOMEM;
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
	int			got = is->segs.s ? xxl_env_scat_next(env, &is->segs, &r) : 0;

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
	if (is->segs.s)
		xxl_env_scat_close(env, &is->segs, &sa->lstats[0].io_bytes, &sa->lstats[0].scattered_bytes);
	xxl_env_sort_close(env, &is->seg_long, &sa->lstats[0].io_bytes, &sa->lstats[0].sorted_bytes);
	return is_stack_finish(&is->lst);
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
	return is_stack_finish(&is->out);
}

/* Plan and entry points -------------------------------------------------------- */

/* The page for K+1 queues in QUEUE_PCT of the pool; 0 if none fits. */
static size_t
queue_page(const xxl_env *env, uint64_t K)
{
	size_t		room = env->pool / 100 * QUEUE_PCT / (size_t) (K + 3),
				page = XXL_ALIGN;

	if (room < XXL_ALIGN)
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
	if (is->subs.s || is->subs.d)
		xxl_env_sort_close(env, &is->subs, NULL, NULL);
	if (is->subs_long.s || is->subs_long.d)
		xxl_env_sort_close(env, &is->subs_long, NULL, NULL);
	if (is->seg_long.s || is->seg_long.d)
		xxl_env_sort_close(env, &is->seg_long, NULL, NULL);
	if (is->segs.s)
		xxl_env_scat_close(env, &is->segs, NULL, NULL);
	if (is->names.s)
		xxl_env_scat_close(env, &is->names, NULL, NULL);
	if (is->isa.s)
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
	if (scan_text(sa, is, &fits) != XXL_OK)
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
		if (name_substrings(sa, is, &D) != XXL_OK)
			return env->err.code;
		st->names_unique = D == is->m;
		if (D == is->m)
		{
			if (sort_segments(sa, is, &is->names, width_for(is->m)) != XXL_OK)
				return env->err.code;
		}
		else if (sort_reduced(sa, is, D) != XXL_OK ||
				 sort_segments(sa, is, &is->isa, is->kw) != XXL_OK)
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
	bool		unmap = is->cw == 1 || sa->cfg.separated;

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

			prev[k] = c == 0 ? -1 : unmap ? sa->unmap[c] : (int) c - 1;
		}
		k++;
		is_stack_back(&is->out, ow);
	}
	return (int64_t) k;
}
