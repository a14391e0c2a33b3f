/*
 * sa_build.c — the suffix-array builder's public API (xxl_suffix.h):
 * taking the text, building, handing out positions, statistics.
 */
#include "core/text/dc3_internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * Rename bytes to 1..d (d distinct, order kept); 256 distinct need 2 bytes.
 * A separated text has raw values 0 (separator) and byte + 1: the separator
 * becomes 1 and the bytes 2..d+1.  Its preceding bytes come out as raw
 * values mod 256 (0: a separator or byte 0xFF, else byte + 1), which is
 * what xxl_sa_next_prev documents for that mode.
 */
static void
make_map(xxl_sa *sa, uint64_t *K, int *cw)
{
	int			d = 0;

	for (int b = 0; b < 256; b++)
		if (sa->present[b])
			d++;
	if (sa->cfg.separated)
	{
		int			c = 1;

		sa->map[0] = 1;
		sa->unmap[1] = 0;
		for (int b = 0; b < 256; b++)
			if (sa->present[b])
			{
				sa->map[b + 1] = (uint16_t) ++c;
				sa->unmap[c] = (uint8_t) (b + 1);
			}
		*K = (uint64_t) d + 1;
		*cw = *K <= 255 ? 1 : 2;
		return;
	}
	if (d <= 255)
	{
		int			c = 0;

		for (int b = 0; b < 256; b++)
		{
			sa->map[b] = sa->present[b] ? (uint16_t) ++c : 0;
			if (sa->present[b])
				sa->unmap[c] = (uint8_t) b;
		}
		*K = d;
		*cw = 1;
	}
	else
	{
		for (int b = 0; b < 256; b++)
			sa->map[b] = (uint16_t) (b + 1);
		*K = 256;
		*cw = 2;
	}
}

/* Public API ------------------------------------------------------------------ */

/* Longest text the put phase keeps in memory: what an in-memory build can take. */
static uint64_t
put_memory_limit(xxl_sa *sa)
{
	uint64_t	lo = 0,
				hi = sa->env.pool;

	if (sa->cfg.internal_max > 0 && sa->cfg.internal_max < hi)
		hi = sa->cfg.internal_max > sa->env.spool_allowance ? sa->cfg.internal_max
			: sa->env.spool_allowance;
	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo + 1) / 2;

		if (internal_need(mid, 256) <= sa->env.pool)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo > sa->env.spool_allowance ? lo : sa->env.spool_allowance;
}

xxl_sa *
xxl_sa_create(const xxl_sa_config *cfg, xxl_error *err)
{
	xxl_sa	   *sa = calloc(1, sizeof(*sa));

	if (sa == NULL)
	{
		xxl_error_set(err, XXL_ENOMEM, 0, "could not allocate the suffix array builder");
		return NULL;
	}
	if (xxl_env_open(&sa->env, &cfg->res, &text_plan) != XXL_OK)
	{
		*err = sa->env.err;
		free(sa);
		return NULL;
	}
	sa->cfg = *cfg;
	if (cfg->separated && cfg->mode == XXL_SA_BWT)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "the BWT of a text of separated documents is not supported");
		xxl_env_close(&sa->env);
		free(sa);
		return NULL;
	}
	sa->phase = SA_PUT;
	sa->last_byte = -1;
	xxl_spool_init(&sa->text, &sa->env, (size_t) put_memory_limit(sa));
	return sa;
}

xxl_status
dc3_fail(xxl_sa *sa)
{
	sa->phase = SA_FAILED;
	if (sa->env.err.code == XXL_OK)
		xxl_error_set(&sa->env.err, XXL_EIO, 0, "suffix array construction failed");
	return sa->env.err.code;
}

xxl_status
xxl_sa_put(xxl_sa *sa, const void *bytes, size_t len)
{
	const unsigned char *b = bytes;

	if (sa->phase != SA_PUT)
		return sa->phase == SA_FAILED ? sa->env.err.code
			: xxl_error_set(&sa->env.err, XXL_EINVAL, 0, "text can only be added before xxl_sa_build");
	if (len == 0)
		return XXL_OK;
	if (sa->n + len >= XXL_SA_MAX_TEXT)
	{
		xxl_error_set(&sa->env.err, XXL_EINVAL, 0, "text longer than 2^40 bytes");
		return dc3_fail(sa);
	}
	for (size_t i = 0; i < len; i++)
		sa->present[b[i]] = true;
	sa->last_byte = b[len - 1];
	sa->n += len;
	if (sa->cfg.separated)
	{
		/* raw values byte + 1, big-endian in two bytes */
		unsigned char wide[4096];

		for (size_t at = 0; at < len;)
		{
			size_t		k = len - at < sizeof(wide) / 2 ? len - at : sizeof(wide) / 2;

			for (size_t i = 0; i < k; i++)
				put_be(wide + 2 * i, (uint64_t) b[at + i] + 1, 2);
			if (xxl_spool_write(&sa->text, wide, 2 * k) != XXL_OK)
				return dc3_fail(sa);
			at += k;
		}
	}
	else if (xxl_spool_write(&sa->text, bytes, len) != XXL_OK)
		return dc3_fail(sa);
	if (xxl_env_canceled(&sa->env))
		return dc3_fail(sa);
	return XXL_OK;
}

xxl_status
xxl_sa_end_doc(xxl_sa *sa)
{
	static const unsigned char sep[2] = {0, 0};

	if (sa->phase != SA_PUT || !sa->cfg.separated)
		return sa->phase == SA_FAILED ? sa->env.err.code
			: xxl_error_set(&sa->env.err, XXL_EINVAL, 0,
							sa->cfg.separated ? "documents can only end before xxl_sa_build"
							: "xxl_sa_end_doc needs a separated text");
	if (sa->n + 1 >= XXL_SA_MAX_TEXT)
	{
		xxl_error_set(&sa->env.err, XXL_EINVAL, 0, "text longer than 2^40 bytes");
		return dc3_fail(sa);
	}
	sa->n++;
	if (xxl_spool_write(&sa->text, sep, sizeof(sep)) != XXL_OK)
		return dc3_fail(sa);
	return XXL_OK;
}

xxl_status
xxl_sa_build(xxl_sa *sa)
{
	xxl_env   *env = &sa->env;
	dc3_level  *top;
	int			cw;
	uint64_t	K;

	if (sa->phase != SA_PUT)
		return sa->phase == SA_FAILED ? env->err.code
			: xxl_error_set(&env->err, XXL_EINVAL, 0, "xxl_sa_build called twice");
	sa->t_build = xxl_now_ns();
	if (xxl_spool_finish(&sa->text) != XXL_OK)
		return dc3_fail(sa);
	make_map(sa, &K, &cw);
	{
		bool		induced;

		if (sa_induce_build(sa, K, cw, &induced) != XXL_OK)
			return dc3_fail(sa);
		if (induced)
		{
			sa->build_ns = xxl_now_ns() - sa->t_build;
			sa->phase = SA_OUTPUT;
			return XXL_OK;
		}
	}
	top = xxl_budget_alloc(&env->budget, sizeof(*top), &env->err);
	if (top == NULL)
		return dc3_fail(sa);
	memset(top, 0, sizeof(*top));
	sa->top = top;
	top->n = sa->n;
	top->K = K;
	top->cw = cw;
	top->prev = sa->cfg.with_prev || sa->cfg.mode == XXL_SA_BWT;
	top->unmap = top_unmap(sa, cw);
	top->tsp = &sa->text;
	top->tw = sa->cfg.separated ? 2 : 1;
	top->map = sa->map;
	if (dc3_level_build(sa, top) != XXL_OK)
		return dc3_fail(sa);
	if (sa->cfg.mode == XXL_SA_BWT && dc3_build_bwt(sa) != XXL_OK)
		return dc3_fail(sa);
	sa->build_ns = xxl_now_ns() - sa->t_build;
	sa->phase = SA_OUTPUT;
	dc3_merger_start(sa, sa->top);
	return XXL_OK;
}

int
xxl_sa_next_prev(xxl_sa *sa, uint64_t *pos, int *prev)
{
	if (sa->phase == SA_DONE)
		return 0;
	if (sa->phase != SA_OUTPUT || sa->cfg.mode != XXL_SA_POSITIONS)
	{
		if (sa->phase != SA_FAILED)
			xxl_error_set(&sa->env.err, XXL_EINVAL, 0,
						  sa->phase == SA_PUT ? "xxl_sa_build must be called before reading"
						  : "suffix positions are not available in BWT mode");
		return -(int) dc3_fail(sa);
	}
	if (prev && !(sa->is ? sa->cfg.with_prev : sa->top->prev))
	{
		xxl_error_set(&sa->env.err, XXL_EINVAL, 0, "preceding bytes need with_prev");
		return -(int) dc3_fail(sa);
	}
	if (sa->out_at == sa->out_n)
	{
		int64_t		got;

		if (sa->is)
		{
			got = sa_induce_next(sa, sa->out_pos, sa->cfg.with_prev ? sa->out_prev : NULL, OUT_BATCH);
			sa->cur_pos = sa->out_pos;
			sa->cur_prev = sa->out_prev;
		}
		else
			got = dc3_merge_next(sa, sa->top, sa->out_pos,
								 sa->top->prev ? sa->out_prev : NULL, OUT_BATCH);
		if (got < 0)
			return -(int) dc3_fail(sa);
		if (got == 0)
		{
			/* release the sorts and their spill files as soon as possible */
			if (sa->is)
				sa_induce_free(sa);
			else
				dc3_level_free(sa, sa->top);
			sa->build_ns = xxl_now_ns() - sa->t_build;
			sa->phase = SA_DONE;
			return 0;
		}
		sa->out_n = got;
		sa->out_at = 0;
	}
	*pos = sa->cur_pos[sa->out_at];
	if (prev)
		*prev = sa->cur_prev[sa->out_at];
	sa->out_at++;
	return 1;
}

int
xxl_sa_next(xxl_sa *sa, uint64_t *pos)
{
	return xxl_sa_next_prev(sa, pos, NULL);
}

const xxl_error *
xxl_sa_error(const xxl_sa *sa)
{
	return &sa->env.err;
}

void
xxl_sa_stats_get(const xxl_sa *sa, xxl_sa_stats *st)
{
	const xxl_env *env = &sa->env;

	memset(st, 0, sizeof(*st));
	st->n = sa->n;
	st->levels = sa->levels;
	st->recursion_depth = sa->levels > 0 ? sa->levels - 1 : 0;
	for (int i = 0; i < sa->levels && i < XXL_SA_MAX_LEVELS; i++)
	{
		st->level[i] = sa->lstats[i];
		if (!sa->lstats[i].internal)
			st->external_levels++;
	}
	xxl_env_io_sum(env, &st->bytes_read, &st->bytes_written, &st->io_wait_ns, &st->io_direct);
	st->sorted_bytes = env->done.sorted_bytes;
	st->scattered_bytes = env->done.scattered_bytes;
	st->spool_bytes = env->done.spool_bytes;
	st->runs = env->done.runs;
	st->max_merge_passes = env->done.max_passes;
	st->thesis_bytes = (2 * 30 + 6) * 4 * sa->n;
	st->memory_peak = xxl_env_used_peak(env);
	st->memory_limit = env->budget.limit;
	st->block_size = env->disk.block_size;
	st->sorter_block_max = env->largest_block;
	st->build_ns = sa->build_ns;
	/* the top level is level 0 */
	st->merge_slots = sa->lstats[0].merge_slots;
	st->merge_async = st->merge_slots > 0;
}

void
xxl_sa_destroy(xxl_sa *sa)
{
	if (sa == NULL)
		return;
	/* a worker still merging stops at its next batch or poll */
	__atomic_store_n(&sa->env.stop, 1, __ATOMIC_RELEASE);
	dc3_merger_stop(sa);
	sa_induce_free(sa);
	if (sa->top)
	{
		dc3_level_free(sa, sa->top);
		xxl_budget_free(&sa->env.budget, sa->top, sizeof(*sa->top));
	}
	if (sa->bwt_open)
		xxl_spool_reader_close(&sa->bwt_rd);
	xxl_spool_free(&sa->bwt);
	xxl_spool_free(&sa->text);
	xxl_env_close(&sa->env);
	free(sa);
}


