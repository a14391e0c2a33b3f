/*
 * merge_batch.c — the batched merge of fixed records with keys of at most
 * 16 bytes (see merge.c): windows, bounds, shares and the two-thread
 * merge of each batch, with the key kinds of merge_template.h.
 */
#include "core/merge_internal.h"

#include <omp.h>
#include <signal.h>
#include <string.h>

#define MT_SUFFIX k64
#define MT_WIDE 0
#define MT_FOLD 1
#include "core/merge_template.h"
#define MT_SUFFIX k128f
#define MT_WIDE 1
#define MT_FOLD 1
#include "core/merge_template.h"
#define MT_SUFFIX k128
#define MT_WIDE 1
#define MT_FOLD 0
#include "core/merge_template.h"

_Static_assert(sizeof(mt_node_k128) == MERGE_TREE_NODE_MAX &&
			   sizeof(mt_node_k128f) <= MERGE_TREE_NODE_MAX && sizeof(mt_node_k64) <= MERGE_TREE_NODE_MAX,
			   "MERGE_TREE_NODE_MAX is the largest loser-tree node");
/* Batched merge --------------------------------------------------------- */

bool
merge_batch_eligible(const xxl_merge_env *env)
{
	return env->fixed && env->key_size <= XXL_INT_KEY_MAX && env->rec_size > 0;
}

size_t
xxl_merge_output_bytes(const xxl_merge_env *env)
{
	size_t		bytes;

	if (!merge_batch_eligible(env))
		return 0;
	bytes = env->budget->limit / 64;
	if (bytes > OUTPUT_BATCH_MAX)
		bytes = OUTPUT_BATCH_MAX;
	if (bytes < OUTPUT_BATCH_MIN)
		bytes = OUTPUT_BATCH_MIN;
	if (bytes < env->rec_size)
		bytes = env->rec_size;
	return XXL_ROUND_UP(bytes, XXL_ALIGN);
}

xxl_status
merge_setup_batched(xxl_merger *m)
{
	const xxl_merge_env *env = &m->env;

	m->batched = true;
	m->key_kind = KEYS_64;
	m->rank_mask = ~UINT64_C(0);
	if (env->key_size > 8)
	{
		/* run indexes go up to 2k - 1 (+ k marks an empty segment) */
		int			rank_bits = 64 - __builtin_clzll((unsigned long long) (2 * m->k - 1));

		m->fold_shift = (int) (8 * (XXL_INT_KEY_MAX - env->key_size));
		m->key_kind = rank_bits <= m->fold_shift ? KEYS_128_FOLDED : KEYS_128;
		if (m->key_kind == KEYS_128_FOLDED)
			m->rank_mask = (UINT64_C(1) << m->fold_shift) - 1;
	}
	m->out_bytes = xxl_merge_output_bytes(env);
	m->out_capacity = m->out_bytes / env->rec_size;
	m->out = xxl_budget_alloc(env->budget, m->out_bytes, env->err);
	m->take = m->out ? xxl_budget_alloc(env->budget, (size_t) m->k * sizeof(size_t), env->err) : NULL;
	if (m->take == NULL)
		return env->err->code;
	m->thread_tree_bytes = (size_t) m->k * (m->key_kind == KEYS_128 ? sizeof(mt_node_k128)
											: m->key_kind == KEYS_128_FOLDED ? sizeof(mt_node_k128f)
											: sizeof(mt_node_k64));
	for (int t = 0; t < 2; t++)
	{
		m->thread_tree[t] = xxl_budget_alloc(env->budget, m->thread_tree_bytes, env->err);
		m->split_seg[t] = m->thread_tree[t] ?
			xxl_budget_alloc(env->budget, (size_t) m->k * sizeof(segment), env->err) : NULL;
		if (m->split_seg[t] == NULL)
			return env->err->code;
	}
	/* an empty run offers nothing from the start */
	for (int r = 0; r < m->k; r++)
		if (m->src[r].remaining == 0)
			m->src[r].done = true;
	return XXL_OK;
}

/*
 * Give a live run a window: its next block when the current one is used up,
 * or, when a record straddles the two (the record size need not divide the
 * block size), that record copied whole into the run's scratch.
 */
static xxl_status
prepare_window(xxl_merger *m, merge_source *src)
{
	const size_t R = m->env.rec_size;
	size_t		left = src->cur_len - src->pos;

	if (src->done || src->span != NULL || left >= R)
		return XXL_OK;
	if (left == 0)
		return merge_next_block(m, src);
	if (src->remaining < R)
		return xxl_error_set(m->env.err, XXL_EIO, 0, "run ends inside a record");
	if (merge_ensure_scratch(m, src, R) != XXL_OK)
		return m->env.err->code;
	memcpy(src->scratch, m->frames[src->cur_frame].data + src->pos, left);
	if (merge_next_block(m, src) != XXL_OK)
		return m->env.err->code;
	if (src->cur_len < R - left)
		return xxl_error_set(m->env.err, XXL_EIO, 0, "run ends inside a record");
	memcpy(src->scratch + left, m->frames[src->cur_frame].data, R - left);
	src->pos = R - left;
	src->span = (unsigned char *) src->scratch;
	return XXL_OK;
}

/*
 * Merge the next records into out, which has room for capacity records
 * (at least k: every run's window holds one record or more).  Returns 1
 * with *count records, 0 at the end, -1 on error.
 */
int
merge_fill_batch(xxl_merger *m, unsigned char *out, size_t capacity, size_t *count)
{
	const size_t R = m->env.rec_size;
	size_t		window = capacity / (size_t) m->k;
	size_t		total;

	/* every live run needs a record in its window */
	for (int r = 0; r < m->k; r++)
		if (prepare_window(m, &m->src[r]) != XXL_OK)
			return -1;
	switch (m->key_kind)
	{
		case KEYS_64:
			total = mt_merge_batch_k64(m, window, out);
			break;
		case KEYS_128_FOLDED:
			total = mt_merge_batch_k128f(m, window, out);
			break;
		default:
			total = mt_merge_batch_k128(m, window, out);
			break;
	}
	if (total == 0)
		return 0;

	/* consume what was merged */
	for (int r = 0; r < m->k; r++)
	{
		merge_source *src = &m->src[r];

		if (src->done || m->take[r] == 0)
			continue;
		if (src->span)
			src->span = NULL;	/* its tail was consumed when it was assembled */
		else
			src->pos += m->take[r] * R;
		src->remaining -= m->take[r] * R;
		if (src->remaining == 0)
		{
			src->done = true;
			merge_release_current(m, src);
			if (merge_prefetch(m) != XXL_OK)
				return -1;
		}
	}
	*count = total;
	return 1;
}


