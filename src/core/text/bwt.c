/*
 * bwt.c — the Burrows–Wheeler transform out of the final merge, read back
 * in pieces, and its in-memory inverse.
 */
#include "core/text/dc3_internal.h"

#include <stdlib.h>
#include <string.h>


xxl_status
dc3_build_bwt(xxl_sa *sa)
{
	xxl_env   *env = &sa->env;
	unsigned char buf[4096];
	size_t		fill = 0;
	uint64_t	j = 0;
	int64_t		got;
	size_t		left = env->spool_allowance > env->spool_mem ? env->spool_allowance - env->spool_mem : 0;

	xxl_spool_init(&sa->bwt, env, left);
	if (sa->n == 0)
		return xxl_spool_finish(&sa->bwt);
	buf[fill++] = (unsigned char) sa->last_byte;
	while ((got = dc3_level_fill(sa, sa->top, sa->out_pos, sa->out_prev, OUT_BATCH)) > 0)
		for (int64_t x = 0; x < got; x++)
		{
			if (sa->out_pos[x] == 0)
				sa->primary = j + 1;
			else
			{
				buf[fill++] = (unsigned char) sa->out_prev[x];
				if (fill == sizeof(buf))
				{
					if (xxl_spool_write(&sa->bwt, buf, fill) != XXL_OK)
						return env->err.code;
					fill = 0;
				}
			}
			j++;
		}
	if (got < 0)
		return env->err.code;
	if (fill > 0 && xxl_spool_write(&sa->bwt, buf, fill) != XXL_OK)
		return env->err.code;
	dc3_level_free(sa, sa->top);
	if (xxl_spool_finish(&sa->bwt) != XXL_OK)
		return env->err.code;
	if (xxl_spool_reader_open(&sa->bwt_rd, &sa->bwt, true) != XXL_OK)
		return env->err.code;
	sa->bwt_open = true;
	return XXL_OK;
}

int
xxl_sa_bwt_read(xxl_sa *sa, void *buf, size_t cap, size_t *len)
{
	*len = 0;
	if (sa->phase == SA_DONE)
		return 0;
	if (sa->phase != SA_OUTPUT || sa->cfg.mode != XXL_SA_BWT)
	{
		if (sa->phase != SA_FAILED)
			xxl_error_set(&sa->env.err, XXL_EINVAL, 0, "the BWT needs mode XXL_SA_BWT and xxl_sa_build");
		return -(int) dc3_fail(sa);
	}
	if (xxl_spool_read_upto(&sa->bwt_rd, buf, cap, len) != XXL_OK)
		return -(int) dc3_fail(sa);
	if (*len == 0)
	{
		xxl_spool_reader_close(&sa->bwt_rd);
		sa->bwt_open = false;
		xxl_spool_free(&sa->bwt);
		sa->phase = SA_DONE;
		return 0;
	}
	return 1;
}

uint64_t
xxl_sa_bwt_primary(const xxl_sa *sa)
{
	return sa->primary;
}

xxl_status
xxl_bwt_inverse(const unsigned char *bwt, uint64_t n, uint64_t primary, unsigned char *out,
				xxl_error *err)
{
	uint64_t	C[257];
	uint64_t	occ[256];
	uint64_t   *LF;
	uint64_t	row = 0;

	if (n == 0)
		return XXL_OK;
	if (primary < 1 || primary > n)
		return xxl_error_set(err, XXL_EINVAL, 0, "primary index %llu out of range 1..%llu",
							 (unsigned long long) primary, (unsigned long long) n);
	LF = malloc((n + 1) * sizeof(uint64_t));
	if (LF == NULL)
		return xxl_error_set(err, XXL_ENOMEM, 0, "could not allocate the inverse BWT");

	/*
	 * Rows of T$ sorted: row 0 is $T, whose last column holds T[n-1].  The
	 * full last column is bwt with $ inserted at primary.
	 */
	memset(occ, 0, sizeof(occ));
	for (uint64_t i = 0; i < n; i++)
		occ[bwt[i]]++;
	C[0] = 1;					/* $ sorts first */
	for (int c = 0; c < 256; c++)
		C[c + 1] = C[c] + occ[c];
	memset(occ, 0, sizeof(occ));
	for (uint64_t i = 0; i <= n; i++)
	{
		int			c;

		if (i == primary)
		{
			LF[i] = 0;
			continue;
		}
		c = bwt[i < primary ? i : i - 1];
		LF[i] = C[c] + occ[c]++;
	}
	for (uint64_t k = n; k > 0; k--)
	{
		out[k - 1] = bwt[row < primary ? row : row - 1];
		row = LF[row];
	}
	free(LF);
	return XXL_OK;
}

