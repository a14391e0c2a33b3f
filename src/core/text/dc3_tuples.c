/*
 * dc3_tuples.c — a DC3 level's step 4 (dc3_internal.h): the merge tuples
 * step 5 merges, formed from the level's characters and the ranks of its
 * sample positions, read together in position order (with the sample's
 * s0 pairs sorted for the mod-0 suffixes).
 */
#include "core/text/dc3_internal.h"

#include <stdlib.h>
#include <string.h>

/* The ranks of the sample positions in increasing order (0 from n on). */
typedef struct rank_reader
{
	dc3_level  *lv;
	value_reader r[2];			/* names unique: mod-1 and mod-2 ranks */
	bool		open;
} rank_reader;

static xxl_status
rank_reader_open(xxl_sa *sa, dc3_level *lv, rank_reader *rr)
{
	memset(rr, 0, sizeof(*rr));
	rr->lv = lv;
	if (lv->unique)
	{
		if (value_reader_open(&rr->r[0], &lv->rank1, lv->rw, true) != XXL_OK)
			return sa->env.err.code;
		if (value_reader_open(&rr->r[1], &lv->rank2, lv->rw, true) != XXL_OK)
		{
			value_reader_close(&rr->r[0]);
			return sa->env.err.code;
		}
		rr->open = true;
	}
	return XXL_OK;
}

static inline xxl_status
rank_reader_next(xxl_sa *sa, rank_reader *rr, uint64_t j, uint64_t *rank)
{
	dc3_level  *lv = rr->lv;
	const unsigned char *rec;
	int			got;

	if (j >= lv->n)
	{
		*rank = 0;
		return XXL_OK;
	}
	if (lv->unique)
		return value_reader_next(&rr->r[j % 3 == 1 ? 0 : 1], rank);
	got = xxl_env_scat_next(&sa->env, &lv->isa, &rec);
	if (got < 0)
		return sa->env.err.code;
	if (got == 0)
		return xxl_error_set(&sa->env.err, XXL_EINVAL, 0,
							 "DC3: rank of position %llu missing at level %d",
							 (unsigned long long) j, lv->depth);
	*rank = get_be(rec, lv->rw);
	return XXL_OK;
}

static void
rank_reader_close(rank_reader *rr)
{
	if (rr->open)
	{
		value_reader_close(&rr->r[0]);
		value_reader_close(&rr->r[1]);
	}
	rr->open = false;
}

/*
 * S0, presampled from what steps 1 to 3 kept (distributed in step 4 next to
 * ISA and S12), or staged (distributed once ISA is gone).
 */
static xxl_status
open_s0(xxl_sa *sa, dc3_level *lv)
{
	xxl_env   *env = &sa->env;
	value_reader vr;
	unsigned char key[16];

	if (lv->s0_stride == 0)
		return xxl_env_sort_open(env, &lv->S0, s0_memory(sa, lv), s0_output(sa, lv), s0_size(lv),
						  lv->cw + lv->rw, lv->n0, XXL_INPUT_BOUNDED);
	if (xxl_env_sort_open(env, &lv->S0, lv->s0_mem, lv->s0_out, s0_size(lv), lv->cw + lv->rw, lv->n0,
				   XXL_INPUT_PRESAMPLED) != XXL_OK)
		return env->err.code;
	sa->lstats[lv->depth].s0_presampled = true;
	if (xxl_env_sort_stride(&lv->S0) != lv->s0_stride)
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "DC3: S0 at level %d wants a sample every %llu, planned %llu",
							 lv->depth, (unsigned long long) xxl_env_sort_stride(&lv->S0),
							 (unsigned long long) lv->s0_stride);
	if (value_reader_open(&vr, &lv->s0_t, lv->cw, true) != XXL_OK)
		return env->err.code;
	for (uint64_t c = 0; c < lv->s0_count; c++)
	{
		uint64_t	t;

		if (value_reader_next(&vr, &t) != XXL_OK)
		{
			value_reader_close(&vr);
			return env->err.code;
		}
		put_be(key, t, lv->cw);
		put_be(key + lv->cw, lv->s0_r[c], lv->rw);
		if (xxl_env_sort_sample(env, &lv->S0, key) != XXL_OK)
		{
			value_reader_close(&vr);
			return env->err.code;
		}
	}
	value_reader_close(&vr);
	s0_sample_free(sa, lv);
	return XXL_OK;
}

xxl_status
dc3_merge_tuples(xxl_sa *sa, dc3_level *lv)
{
	xxl_env   *env = &sa->env;
	xxl_sa_level_stats *st = &sa->lstats[lv->depth];
	uint64_t	n = lv->n;
	int			cw = lv->cw,
				rw = lv->rw,
				pw = lv->pw;
	int			pb = lv->prev ? 1 : 0;
	uint64_t	base = lv->dummy ? 2 : 1;	/* the smallest rank of a real sample */
	char_reader cr = {0};
	rank_reader rr;
	unsigned char rec[64];
	uint64_t	t0,
				t1 = 0,
				raw0,
				raw1 = 0,
				rprev = 0;
	uint64_t	ri = 0,
				ri1 = 0,
				ri2 = 0;
	xxl_status	rc = XXL_OK;

	if (xxl_env_scat_open(env, &lv->S12, lv->share_12, s12_size(lv), n - lv->n0) != XXL_OK ||
		open_s0(sa, lv) != XXL_OK)
		return env->err.code;
	if (rank_reader_open(sa, lv, &rr) != XXL_OK)
		return env->err.code;
	/* raw characters (the BWT wants bytes), renamed here */
	cr.map = NULL;
	if (value_reader_open(&cr.vr, lv->tsp, lv->tw, true) != XXL_OK)
	{
		rank_reader_close(&rr);
		return env->err.code;
	}
	cr.open = true;

#define READ_CHAR(raw, c) \
	do { \
		if ((rc = value_reader_next(&cr.vr, &(raw))) != XXL_OK) \
			goto out; \
		(c) = lv->map ? lv->map[(raw)] : (raw); \
	} while (0)

	READ_CHAR(raw0, t0);
	if (n > 1)
		READ_CHAR(raw1, t1);
	if ((rc = rank_reader_next(sa, &rr, 1, &ri1)) != XXL_OK ||
		(rc = rank_reader_next(sa, &rr, 2, &ri2)) != XXL_OK)
		goto out;
	for (uint64_t i = 0; i < n; i++)
	{
		int			cls = (int) (i % 3);
		unsigned char *p;

		if (cls == 0)
		{
			unsigned char *at = p = xxl_env_sort_room(&lv->S0, rec);

			put_be(p, t0, cw), p += cw;
			put_be(p, ri1, rw), p += rw;
			put_be(p, t1, cw), p += cw;
			put_be(p, ri2, rw), p += rw;
			put_be(p, i, pw), p += pw;
			if (pb)
				*p = (unsigned char) rprev;
			if ((rc = xxl_env_sort_push(env, &lv->S0, at)) != XXL_OK)
				goto out;
		}
		else
		{
			p = xxl_env_scat_room(&lv->S12);
			put_be(p, t0, cw), p += cw;
			put_be(p, cls == 1 ? 0 : t1, cw), p += cw;
			put_be(p, cls == 1 ? ri1 : ri2, rw), p += rw;
			put_be(p, i, pw), p += pw;
			if (pb)
				*p = (unsigned char) rprev;
			if (ri < base || ri - base >= n - lv->n0)
			{
				rc = xxl_error_set(&env->err, XXL_EINVAL, 0,
								   "DC3: rank %llu of position %llu out of range at level %d",
								   (unsigned long long) ri, (unsigned long long) i, lv->depth);
				goto out;
			}
			if ((rc = xxl_env_scat_push(env, &lv->S12, ri - base)) != XXL_OK)
				goto out;
		}

		/* slide the window: T[i+1], T[i+2] and r[i+1], r[i+2], r[i+3] */
		rprev = raw0;
		raw0 = raw1;
		t0 = t1;
		raw1 = 0;
		t1 = 0;
		if (i + 2 < n)
			READ_CHAR(raw1, t1);
		ri = ri1;
		ri1 = ri2;
		ri2 = 0;
		if ((i + 3) % 3 != 0 && (rc = rank_reader_next(sa, &rr, i + 3, &ri2)) != XXL_OK)
			goto out;
		if (dc3_poll(sa))
		{
			rc = env->err.code;
			goto out;
		}
	}
#undef READ_CHAR

out:
	char_reader_close(&cr);
	rank_reader_close(&rr);
	if (rc != XXL_OK)
		return rc;
	xxl_env_scat_close(env, &lv->isa, &st->io_bytes, &st->scattered_bytes);
	xxl_spool_free(&lv->rank1);
	xxl_spool_free(&lv->rank2);
	xxl_spool_free(lv->tsp);
	/* ISA is gone: S0 distributes in what S12 leaves */
	if (xxl_env_sort_sort(env, &lv->S0) != XXL_OK || xxl_env_scat_finish(env, &lv->S12) != XXL_OK)
		return env->err.code;
	return XXL_OK;
}
