/*
 * dc3_plan.c — the budget's plan: how much memory the block lists of every
 * spool and run take, and the shares of a level's sorts and permutations
 * (see "Memory shares" in dc3_internal.h).
 */
#include "core/text/dc3_internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * An upper bound of what the spools' block lists take at once: each list's
 * bound (xxl_run_table_bound: arrays while short, a log of its own once
 * long), and one list in the middle of doubling.  The
 * text spool and every level's copy of its text live until that level's
 * merge; the deepest external level may spool its unique names as ranks
 * (mod-1 and mod-2 apart); characters below level 0 are names of up to
 * char_width(n12) bytes.  Plus the level structs.
 */
static uint64_t
lists_bound(const xxl_sa *sa, uint64_t n)
{
	uint64_t	B = sa->env.disk.block_size;
	uint64_t	b = n / B + 1;
	uint64_t	total = xxl_run_table_bound(b),
				largest = b,
				ranks = 0,
				m = n;
	uint64_t	levels = 1;

	/* down to the first level that is solved in memory (it keeps no copy) */
	while (levels < XXL_SA_MAX_LEVELS)
	{
		uint64_t	m12 = (m + 2) / 3 + m / 3;
		uint64_t	r2 = 2 * xxl_run_table_bound(m12 * rank_width(sa, m12) / B / 2 + 1);

		if (r2 > ranks)
			ranks = r2;
		levels++;
		if (fits_internal((xxl_sa *) sa, m12, m12, sa->env.pool / 100 * SHARE_A_PCT))
			break;
		b = m12 * char_width(sa, m12) / B + 1;
		total += xxl_run_table_bound(b);
		if (b > largest)
			largest = b;
		m = m12;
	}
	/* the largest list doubling: its old arrays next to the new ones */
	return total + ranks + xxl_run_table_bound(largest) / 2 + levels * sizeof(dc3_level);
}

/*
 * The block lists come out of the environment's slack.  A long text at a
 * small budget needs more: then the sorters' pool gives it up, before any
 * sorter exists (shares are computed from the pool when they are opened),
 * so that the build does not run out of memory halfway; plan_level then
 * judges the smaller pool.
 */
xxl_status
dc3_reserve_lists(xxl_sa *sa, uint64_t n)
{
	xxl_env   *env = &sa->env;
	uint64_t	need = lists_bound(sa, n);
	size_t		slack = xxl_env_slack(env);
	uint64_t	extra;

	if (need <= slack)
		return XXL_OK;
	extra = XXL_ROUND_UP(need - slack, XXL_ALIGN);
	if (extra >= env->pool / 2)
		return xxl_error_set(&env->err, XXL_ENOMEM, 0,
							 "memory budget of %zu bytes is too small for this text: the spools' "
							 "block lists need about %llu bytes", env->budget.limit,
							 (unsigned long long) need);
	env->pool -= (size_t) extra;
	return XXL_OK;
}

/*
 * A scatter's share: a little more than its least, so that its blocks are
 * not all minimal, where the pool has that beside the others' shares; else
 * the base share, in which a permutation whose buckets the pool cannot give
 * (the least grows with the square root of its bytes) is sorted by slot
 * (xxl_env_scatter).
 */
static size_t
scatter_share(size_t base, size_t need, size_t others, size_t pool)
{
	size_t		want = need + need / 8;

	return need && base < want && want + others < pool ? want : base;
}

/*
 * Whether S0 can be presampled: it then distributes in step 4 next to ISA
 * and S12, and keeps that memory for its output unless the consumer needs
 * more; its sample's ranks come out of share_a (they live next to ISA).
 */
static void
plan_s0_sample(xxl_sa *sa, dc3_level *lv, size_t need_a)
{
	xxl_env   *env = &sa->env;
	size_t		rec = s0_size(lv),
				key = lv->cw + lv->rw;
	size_t		taken = lv->share_a + lv->share_12,
				mem,
				out,
				bytes;
	uint64_t	stride;

	lv->s0_stride = 0;
	if (taken >= env->pool)
		return;
	mem = env->pool - taken;
	out = mem < s0_output(sa, lv) ? mem : s0_output(sa, lv);
	stride = xxl_env_sort_plan_stride(env, mem, out, rec, key, lv->n0);
	if (stride == 0)
		return;
	/* room for the ranks: at most this many samples, for a stride at least this long */
	bytes = XXL_ROUND_UP(((lv->n0 + stride - 1) / stride) * sizeof(uint64_t), XXL_ALIGN);
	if (lv->share_a < need_a + bytes)
		return;
	lv->s0_stride = stride;
	lv->s0_every = xxl_modulus_of(stride);
	lv->s0_count = (lv->n0 + stride - 1) / stride;
	lv->s0_r_bytes = bytes;
	lv->s0_mem = mem;
	lv->s0_out = out;
	xxl_spool_init(&lv->s0_t, env, spool_room(env) / 8);
}

/* Whether the level's two sorts fit beside its shares. */
static bool
sorts_fit(xxl_sa *sa, const dc3_level *lv)
{
	xxl_env    *env = &sa->env;

	return xxl_env_sort_fits(env, ts_memory(sa, lv), ts_output(sa, lv), ts_size(lv), 3 * lv->cw, lv->n12) &&
		xxl_env_sort_fits(env, s0_memory(sa, lv), s0_output(sa, lv), s0_size(lv), lv->cw + lv->rw, lv->n0);
}

/*
 * The level's shares, and a check that the budget carries its sorts and
 * permutations before any work is done.
 */
xxl_status
dc3_plan_level(xxl_sa *sa, dc3_level *lv)
{
	xxl_env   *env = &sa->env;
	/* the least memory a scatter of these records needs (0 if none is enough) */
	size_t		need_a = xxl_env_scat_least(env, lv->rw, lv->n12, env->pool),
				need_12 = xxl_env_scat_least(env, s12_size(lv), lv->n - lv->n0, env->pool);

	size_t		base_a = env->pool / 100 * SHARE_A_PCT,
				base_12 = env->pool / 100 * SHARE_S12_PCT;

	lv->share_a = base_a;
	lv->share_12 = base_12;
	if (base_a + base_12 + lv->share_cons >= env->pool || !sorts_fit(sa, lv))
		return xxl_error_set(&env->err, XXL_ENOMEM, 0,
							 "memory budget of %zu bytes is too small for this text: the sorts "
							 "and permutations of level %d (%llu characters) do not fit",
							 env->budget.limit, lv->depth, (unsigned long long) lv->n);
	/*
	 * share_a is the next level's consumer: raised, it must still leave that
	 * level its base shares, or the next level's plan fails.
	 */
	lv->share_a = scatter_share(base_a, need_a, base_12 + (lv->share_cons > base_a ? lv->share_cons : base_a),
								env->pool);
	lv->share_12 = scatter_share(base_12, need_12, lv->share_a + lv->share_cons, env->pool);
	/* scatters raised to their least must leave the sorts theirs */
	if (!sorts_fit(sa, lv))
	{
		lv->share_a = base_a;
		lv->share_12 = base_12;
	}
	/* S0's sample's ranks live beside a scatter in share_a, not beside a sort */
	if (need_a && need_a <= lv->share_a)
		plan_s0_sample(sa, lv, need_a);
	else
		lv->s0_stride = 0;
	return XXL_OK;
}

