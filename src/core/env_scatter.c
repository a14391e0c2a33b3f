/*
 * env_scatter.c — the environment's scatter (xxl_env.h): an external
 * permutation charged to the operator's budget with the memory its plan
 * needs (for both phases, or for each phase while it lasts), fed in batches
 * and read record by record; or, for a permutation too large for its
 * share, a sort by slot that stands in for it.
 */
#include "core/xxl_env.h"

#include <string.h>

#define SLOTS_BYTES (XXL_ENV_BATCH_BYTES / 4 * sizeof(uint64_t))
#define BATCH_CHARGE (xxl_budget_charge(SLOTS_BYTES) + xxl_budget_charge(XXL_ENV_BATCH_BYTES))

static int
read_scatter(void *part, const void **recs, size_t *count)
{
	return xxl_scatter_read(part, recs, count);
}

static xxl_scatter_config
scatter_config(xxl_env *env, size_t memory, size_t read_memory, size_t rec_size, uint64_t slots)
{
	xxl_scatter_config c;
	size_t		block = 0;

	memset(&c, 0, sizeof(c));
	/* split: the distribution's share holds the batch too */
	if (read_memory > 0)
		memory = memory > BATCH_CHARGE ? memory - BATCH_CHARGE : 0;
	c.memory = memory - memory % XXL_ALIGN;
	c.read_memory = read_memory - read_memory % XXL_ALIGN;
	c.record_size = rec_size;
	c.slots = slots;
	/* as the sorts': the second core places the records */
	c.async = env->threads > 1;
	/* read once: what is read is room for the operator's other parts */
	c.consume = true;
	c.disk = env->disk;
	c.disk.block_size = env->max_block;
	/* small write buffers go through the page cache */
	if (c.disk.try_direct)
	{
		c.disk.try_direct = false;
		if (xxl_scatter_fits(&c, &block) && xxl_direct_pays(block))
		{
			c.disk.try_direct = true;
			if (!xxl_scatter_fits(&c, &block) || !xxl_direct_pays(block))
				c.disk.try_direct = false;
		}
	}
	c.cancel = env->cancel;
	c.cancel_arg = env->cancel_arg;
	return c;
}

/* A scatter of memory fits; split (write_memory > 0): memory for its reading beside that. */
static bool
fits(xxl_env *env, size_t write_memory, size_t memory, size_t rec_size, uint64_t slots)
{
	xxl_scatter_config c = write_memory > 0 ?
		scatter_config(env, write_memory, memory, rec_size, slots) :
		scatter_config(env, memory, 0, rec_size, slots);

	return (write_memory == 0 || c.read_memory > 0) && xxl_scatter_fits(&c, NULL);
}

/*
 * The least memory (at most most) with which a scatter fits, for both
 * phases or (write_memory > 0) for its reading; 0: none.  A scatter that
 * fits in some memory fits in more.
 */
static size_t
least(xxl_env *env, size_t write_memory, size_t rec_size, uint64_t slots, size_t most)
{
	size_t		lo = XXL_ALIGN,
				hi = most - most % XXL_ALIGN;

	if (hi < lo || !fits(env, write_memory, hi, rec_size, slots))
		return 0;
	while (hi - lo > XXL_ALIGN)
	{
		size_t		mid = (lo + (hi - lo) / 2) & ~(size_t) (XXL_ALIGN - 1);

		if (fits(env, write_memory, mid, rec_size, slots))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

bool
xxl_env_scat_fits(xxl_env *env, size_t memory, size_t rec_size, uint64_t slots)
{
	return fits(env, 0, memory, rec_size, slots);
}

bool
xxl_env_scat_fits_split(xxl_env *env, size_t write_memory, size_t read_memory, size_t rec_size,
						uint64_t slots)
{
	return write_memory > 0 && fits(env, write_memory, read_memory, rec_size, slots);
}

size_t
xxl_env_scat_least(xxl_env *env, size_t rec_size, uint64_t slots, size_t most)
{
	return least(env, 0, rec_size, slots, most);
}

size_t
xxl_env_scat_least_read(xxl_env *env, size_t rec_size, uint64_t slots, size_t write_memory,
						size_t most)
{
	return write_memory > 0 ? least(env, write_memory, rec_size, slots, most) : 0;
}

xxl_status
xxl_env_scat_error(xxl_env *env, xxl_env_scatter *ts)
{
	if (ts->sorted != NULL)
		return env->err.code;	/* the sort's functions set it */
	return xxl_env_fail(env, xxl_scatter_error(ts->s));
}

static void
free_batch(xxl_env *env, xxl_env_scatter *ts)
{
	if (ts->batch_slots)
		xxl_env_free(env, ts->batch_slots, SLOTS_BYTES);
	if (ts->batch_recs)
		xxl_env_free(env, ts->batch_recs, XXL_ENV_BATCH_BYTES);
	ts->batch_slots = NULL;
	ts->batch_recs = NULL;
}

/*
 * The sort by slot that stands in for a scatter too large for its share:
 * records go in behind their 8-byte big-endian slot and come out, checked
 * to be every slot once, copied without it into batches of the scatter's
 * record size (consumers read ts->out as they read a scatter's).
 */
struct xxl_env_scat_sorted
{
	xxl_env_sorter sorter;
	xxl_env    *env;
	size_t		rec_size;
	uint64_t	slots;
	uint64_t	next_slot;		/* the slot the next record out must have */
	unsigned char *out;			/* SORTED_OUT_BYTES: records handed out */
	unsigned char local[];		/* a record being built, when the sorter takes them one by one */
};

#define SORTED_OUT_BYTES (16 * 1024)

static size_t
sorted_bytes(size_t rec_size)
{
	return sizeof(xxl_env_scat_sorted) + sizeof(uint64_t) + rec_size;
}

static int
read_sorted(void *part, const void **recs, size_t *count)
{
	xxl_env_scat_sorted *ss = part;
	size_t		cap = SORTED_OUT_BYTES / ss->rec_size,
				n = 0;

	while (n < cap)
	{
		const unsigned char *r;
		int			got = xxl_env_sort_next(ss->env, &ss->sorter, &r);
		uint64_t	slot;

		if (got < 0)
			return -1;
		if (got == 0)
			break;
		memcpy(&slot, r, sizeof(slot));
		slot = __builtin_bswap64(slot);
		if (slot != ss->next_slot)
		{
			if (slot < ss->next_slot)
				xxl_error_set(&ss->env->err, XXL_EINVAL, 0, "scatter: slot %llu put twice",
							  (unsigned long long) slot);
			else
				xxl_error_set(&ss->env->err, XXL_EINVAL, 0, "scatter: slot %llu left empty",
							  (unsigned long long) ss->next_slot);
			return -1;
		}
		ss->next_slot++;
		memcpy(ss->out + n * ss->rec_size, r + sizeof(uint64_t), ss->rec_size);
		n++;
	}
	*recs = ss->out;
	*count = n;
	return n > 0;
}

static void
free_sorted(xxl_env *env, xxl_env_scatter *ts)
{
	xxl_env_scat_sorted *ss = ts->sorted;

	if (ss->out)
		xxl_env_free(env, ss->out, SORTED_OUT_BYTES);
	xxl_env_free(env, ss, sorted_bytes(ss->rec_size));
	memset(ts, 0, sizeof(*ts));
}

static xxl_status
open_sorted(xxl_env *env, xxl_env_scatter *ts, size_t memory, size_t rec_size, uint64_t slots)
{
	xxl_env_scat_sorted *ss = xxl_env_alloc(env, sorted_bytes(rec_size));

	if (ss == NULL)
		return env->err.code;
	memset(ss, 0, sizeof(*ss));
	ss->env = env;
	ss->rec_size = rec_size;
	ss->slots = slots;
	ts->sorted = ss;
	ss->out = xxl_env_alloc(env, SORTED_OUT_BYTES);
	if (ss->out == NULL ||
		xxl_env_sort_open(env, &ss->sorter, memory, 0, sizeof(uint64_t) + rec_size,
						  sizeof(uint64_t), slots, XXL_INPUT_UNBOUNDED) != XXL_OK)
	{
		if (env->err.code == XXL_ENOMEM)
			xxl_error_set(&env->err, XXL_ENOMEM, 0,
						  "memory budget of %zu bytes is too small for this %s: a permutation "
						  "of %llu records of %zu bytes fits neither a scatter nor a sort of "
						  "%zu bytes", env->budget.limit, env->noun, (unsigned long long) slots,
						  rec_size, memory);
		free_sorted(env, ts);
		return env->err.code;
	}
	ts->rec_size = rec_size;
	xxl_batch_init(&ts->out, read_sorted, ss, rec_size);
	return XXL_OK;
}

unsigned char *
xxl_env_scat_sorted_room(xxl_env_scatter *ts)
{
	return xxl_env_sort_room(&ts->sorted->sorter, ts->sorted->local) + sizeof(uint64_t);
}

xxl_status
xxl_env_scat_sorted_push(xxl_env *env, xxl_env_scatter *ts, uint64_t slot)
{
	xxl_env_scat_sorted *ss = ts->sorted;
	unsigned char *r = xxl_env_sort_room(&ss->sorter, ss->local);
	uint64_t	be = __builtin_bswap64(slot);

	if (slot >= ss->slots)
		return xxl_error_set(&env->err, XXL_EINVAL, 0, "scatter: slot %llu out of range",
							 (unsigned long long) slot);
	memcpy(r, &be, sizeof(be));
	return xxl_env_sort_push(env, &ss->sorter, r);
}

/* A scatter of memory (and read_memory, if not 0: split), or the sort by slot. */
static xxl_status
open_scatter(xxl_env *env, xxl_env_scatter *ts, size_t memory, size_t read_memory,
			 size_t rec_size, uint64_t slots)
{
	xxl_scatter_config c = scatter_config(env, memory, read_memory, rec_size, slots);
	xxl_scatter_stats st;
	size_t		need;

	memset(ts, 0, sizeof(*ts));
	if (!xxl_scatter_fits(&c, NULL))
		return open_sorted(env, ts, c.read_memory && c.read_memory < c.memory ? c.read_memory : c.memory,
						   rec_size, slots);
	ts->s = xxl_scatter_create(&c, &env->err);
	if (ts->s == NULL)
		return env->err.code;
	/* the batch first: the reservation below must see what it took */
	ts->batch_slots = xxl_env_alloc(env, SLOTS_BYTES);
	ts->batch_recs = ts->batch_slots ? xxl_env_alloc(env, XXL_ENV_BATCH_BYTES) : NULL;
	need = XXL_ROUND_UP(xxl_scatter_memory(ts->s), XXL_ALIGN);
	if (c.read_memory > 0)
	{
		size_t		write_need = XXL_ROUND_UP(xxl_scatter_phase_memory(ts->s, false), XXL_ALIGN),
					read_need = XXL_ROUND_UP(xxl_scatter_phase_memory(ts->s, true), XXL_ALIGN);

		ts->split = write_need != read_need;
		if (ts->split)
		{
			need = write_need;
			ts->read_need = read_need;
		}
	}
	if (ts->batch_recs == NULL || xxl_env_reserve(env, need, "permutation") != XXL_OK)
	{
		free_batch(env, ts);
		xxl_scatter_destroy(ts->s);
		memset(ts, 0, sizeof(*ts));
		return env->err.code;
	}
	ts->memory = need;
	ts->rec_size = rec_size;
	ts->batch_cap = XXL_ENV_BATCH_BYTES / rec_size;
	if (ts->batch_cap > XXL_ENV_BATCH_BYTES / 4)
		ts->batch_cap = XXL_ENV_BATCH_BYTES / 4;
	xxl_scatter_stats_get(ts->s, &st);
	if (st.block_size > env->largest_block)
		env->largest_block = st.block_size;
	xxl_batch_init(&ts->out, read_scatter, ts->s, rec_size);
	return XXL_OK;
}

xxl_status
xxl_env_scat_open(xxl_env *env, xxl_env_scatter *ts, size_t memory, size_t rec_size,
				  uint64_t slots)
{
	return open_scatter(env, ts, memory, 0, rec_size, slots);
}

xxl_status
xxl_env_scat_open_split(xxl_env *env, xxl_env_scatter *ts, size_t write_memory, size_t read_memory,
						size_t rec_size, uint64_t slots)
{
	return open_scatter(env, ts, write_memory, read_memory, rec_size, slots);
}

xxl_status
xxl_env_scat_begin_read(xxl_env *env, xxl_env_scatter *ts)
{
	if (!ts->split || ts->reading)
		return XXL_OK;
	if (xxl_env_reserve(env, ts->read_need, "permutation") != XXL_OK)
		return env->err.code;
	ts->memory = ts->read_need;
	ts->reading = true;
	return XXL_OK;
}

xxl_status
xxl_env_scat_flush(xxl_env *env, xxl_env_scatter *ts)
{
	size_t		n = ts->batch;

	ts->batch = 0;
	if (n > 0 && xxl_scatter_put_many(ts->s, ts->batch_slots, ts->batch_recs, n) != XXL_OK)
		return xxl_env_scat_error(env, ts);
	return XXL_OK;
}

xxl_status
xxl_env_scat_finish(xxl_env *env, xxl_env_scatter *ts)
{
	if (ts->sorted != NULL)
	{
		if (ts->pushed != ts->sorted->slots)
			return xxl_error_set(&env->err, XXL_EINVAL, 0, "scatter: %llu records put for %llu slots",
								 (unsigned long long) ts->pushed,
								 (unsigned long long) ts->sorted->slots);
		return xxl_env_sort_sort(env, &ts->sorted->sorter);
	}
	if (ts->batch > 0 && xxl_env_scat_flush(env, ts) != XXL_OK)
		return env->err.code;
	if (xxl_scatter_finish(ts->s) != XXL_OK)
		return xxl_env_scat_error(env, ts);
	/* the distribution is over: its batch, and a split scatter's whole reservation, go back */
	free_batch(env, ts);
	if (ts->split)
	{
		xxl_env_release(env, ts->memory);
		ts->memory = 0;
	}
	return XXL_OK;
}

void
xxl_env_scat_close(xxl_env *env, xxl_env_scatter *ts, uint64_t *io_acc, uint64_t *bytes_acc)
{
	xxl_scatter_stats st;

	if (ts->sorted != NULL)
	{
		xxl_env_sort_close(env, &ts->sorted->sorter, io_acc, NULL);
		env->done.scattered_bytes += ts->pushed * ts->rec_size;
		if (bytes_acc)
			*bytes_acc += ts->pushed * ts->rec_size;
		free_sorted(env, ts);
		return;
	}
	if (ts->s == NULL)
		return;
	xxl_scatter_stats_get(ts->s, &st);
	xxl_io_fold(&env->done.io, &st.io);
	if (io_acc)
		for (int i = 0; i < st.io.ndisks; i++)
			*io_acc += st.io.disk[i].bytes_read + st.io.disk[i].bytes_written;
	env->done.scattered_bytes += ts->pushed * ts->rec_size;
	if (bytes_acc)
		*bytes_acc += ts->pushed * ts->rec_size;
	xxl_scatter_destroy(ts->s);
	free_batch(env, ts);
	xxl_env_release(env, ts->memory);
	memset(ts, 0, sizeof(*ts));
}
