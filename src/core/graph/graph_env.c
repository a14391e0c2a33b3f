/*
 * graph_env.c — the environment of a graph operator: how its budget is
 * split, which block sizes its sorters, queues and own streams use, sorters
 * and queues charged to the budget, spools and their readers, and the node
 * permutation.
 *
 * Each sorter and queue owns its memory share for its whole life (both
 * allocate their main buffers at creation), so the operator reserves the
 * share in its own budget while they live: the budget's high-water mark is
 * then an upper bound of what the operator really used.
 */
#include "graph_internal.h"

#include <omp.h>
#include <stdlib.h>

#define DEFAULT_BLOCK (2 * 1024 * 1024)
#define OWN_SLACK (64 * 1024)
#define OWN_STREAMS 4			/* own streams open at once, two buffers each */
#define SPOOL_CHUNK (256 * 1024)

/* Layout ------------------------------------------------------------------ */

static size_t
own_block_for(size_t memory, size_t max_block)
{
	size_t		b = XXL_ALIGN;

	/* a power of two: sequential streams need no large blocks */
	while (b * 2 <= max_block && b * 2 <= memory / 128)
		b *= 2;
	return b;
}

static size_t
own_reserve(size_t memory, size_t block)
{
	return (size_t) OWN_STREAMS * 2 * block + OWN_SLACK + memory / 32;
}

static size_t
pool_for(size_t memory, size_t block)
{
	size_t		fixed = own_reserve(memory, block) + memory / 16;

	return memory > fixed ? memory - fixed : 0;
}

/* Half the pool must take a sorter and a queue of the smallest block size. */
static size_t
half_pool_min(void)
{
	size_t		s = xxl_sort_min_memory(XXL_ALIGN);
	size_t		q = xxl_pq_min_memory(XXL_ALIGN);

	return (s > q ? s : q) + XXL_ALIGN;
}

size_t
graph_env_min_memory(void)
{
	size_t		m = 256 * 1024;

	while (pool_for(m, own_block_for(m, DEFAULT_BLOCK)) / 3 < half_pool_min())
		m += 16 * 1024;
	return m;
}

size_t
xxl_graph_min_memory(void)
{
	return graph_env_min_memory();
}

xxl_status
graph_env_init(graph_env *env, const xxl_graph_config *cfg)
{
	size_t		max_block = cfg->disk.block_size ? cfg->disk.block_size : DEFAULT_BLOCK;

	memset(env, 0, sizeof(*env));
	if (max_block < XXL_ALIGN || max_block % XXL_ALIGN != 0)
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "block size %zu is not a positive multiple of %d", max_block, XXL_ALIGN);
	if (cfg->memory < graph_env_min_memory())
		return xxl_error_set(&env->err, XXL_EINVAL, 0,
							 "memory budget of %zu bytes is below the minimum of %zu for graph operators",
							 cfg->memory, graph_env_min_memory());
	xxl_budget_init(&env->budget, cfg->memory);
	env->disk = cfg->disk;
	env->disk.block_size = own_block_for(cfg->memory, max_block);
	/* the operator's own pool, for every sort's and stream's files (none: not reused) */
	env->disk.pool = xxl_file_pool_create();
	env->max_block = max_block;
	env->threads = cfg->threads > 0 ? cfg->threads : omp_get_max_threads();
	env->cancel = cfg->cancel;
	env->cancel_arg = cfg->cancel_arg;
	env->pool = pool_for(cfg->memory, env->disk.block_size);
	env->pool -= env->pool % XXL_ALIGN;
	env->spool_allowance = cfg->memory / 16;
	return XXL_OK;
}

void
graph_env_close(graph_env *env)
{
	xxl_disks_close(env->disks);
	env->disks = NULL;
	xxl_file_pool_destroy(env->disk.pool);
	env->disk.pool = NULL;
}

bool
graph_env_canceled(graph_env *env)
{
	return xxl_poll_cancel(env->cancel, env->cancel_arg, &env->err, "operator");
}

static xxl_status
open_disks(graph_env *env)
{
	if (env->disks == NULL)
	{
		env->disks = xxl_disks_open(&env->disk, &env->err);
		if (env->disks == NULL)
			return env->err.code;
	}
	return XXL_OK;
}

/* What the operator uses now: the budget in use, live shares at their peaks. */
static uint64_t
used_now(const graph_env *env)
{
	uint64_t	now = env->budget.used;

	for (int i = 0; i < env->nshares; i++)
	{
		const graph_share *sh = &env->shares[i];
		uint64_t	touched;

		if (sh->pq)
		{
			xxl_pq_stats st;

			xxl_pq_get_stats((xxl_pq *) sh->core, &st);
			touched = st.memory_peak;
		}
		else
		{
			xxl_sort_stats st;

			xxl_sorter_stats((const xxl_sorter *) sh->core, &st);
			touched = st.memory_peak;
		}
		now -= sh->memory;
		now += touched < sh->memory ? touched : sh->memory;
	}
	return now;
}

static void
sample_used(graph_env *env)
{
	uint64_t	now = used_now(env);

	if (now > env->used_peak)
		env->used_peak = now;
}

static void
share_add(graph_env *env, const void *core, bool pq, size_t memory)
{
	/* a share beyond the registry stays counted whole, as reserved */
	if (env->nshares < GRAPH_MAX_SHARES)
		env->shares[env->nshares++] = (graph_share) {core, pq, memory};
	sample_used(env);
}

static void
share_remove(graph_env *env, const void *core)
{
	sample_used(env);
	for (int i = 0; i < env->nshares; i++)
		if (env->shares[i].core == core)
		{
			env->shares[i] = env->shares[--env->nshares];
			break;
		}
}

uint64_t
graph_env_used_peak(const graph_env *env)
{
	uint64_t	now = used_now(env);

	return now > env->used_peak ? now : env->used_peak;
}

void *
graph_env_alloc(graph_env *env, size_t bytes)
{
	void	   *p = xxl_budget_alloc(&env->budget, bytes ? bytes : 1, &env->err);

	sample_used(env);
	return p;
}

void
graph_env_free(graph_env *env, void *p, size_t bytes)
{
	sample_used(env);
	xxl_budget_free(&env->budget, p, bytes ? bytes : 1);
}

static xxl_status
reserve_share(graph_env *env, size_t memory, const char *what)
{
	xxl_budget *b = &env->budget;

	if (memory > xxl_budget_available(b))
		return xxl_error_set(&env->err, XXL_ENOMEM, 0,
							 "memory budget of %zu bytes exhausted (%zu in use, %zu more for a %s)",
							 b->limit, b->used, memory, what);
	b->used += memory;
	if (b->used > b->peak)
		b->peak = b->used;
	return XXL_OK;
}

/* Sorters ----------------------------------------------------------------- */

/*
 * Blocks for a sorter: small enough that one merge pass takes all runs when
 * the budget allows it (thesis: sort(N) = 2 scan(N)), but no smaller than
 * 64 KB (or 1/16 of the sorter) nor larger than 1/16 of the sorter or the
 * configured block; larger if the run list would not fit the sorter's
 * slack.  With an unknown input size: 1/16 of the sorter (fan-in ~15).
 */
static xxl_status
pick_sort_block(graph_env *env, size_t memory, size_t rec_size, uint64_t records,
				size_t *block_out)
{
	size_t		upper = memory / 16,
				lower = 64 * 1024,
				largest = xxl_sort_max_block(memory),
				block;
	uint64_t	nbytes = records * rec_size;

	if (largest < XXL_ALIGN)
		largest = XXL_ALIGN;
	if (upper > env->max_block)
		upper = env->max_block;
	if (upper > largest)
		upper = largest;
	if (lower > upper)
		lower = upper;
	block = upper;
	if (records > 0)
	{
		/* runs hold about 45 % of the sorter each; a merge source costs B + 4 KB */
		uint64_t	runs = nbytes / (memory / 100 * 45 + 1) + 1;
		uint64_t	fit = memory / (runs + 4);

		fit = fit > XXL_ALIGN ? fit - XXL_ALIGN : XXL_ALIGN;
		if (fit < block)
			block = fit < lower ? lower : (size_t) fit;
	}
	block -= block % XXL_ALIGN;
	if (block < XXL_ALIGN)
		block = XXL_ALIGN;
	while (records > 0 && !xxl_sort_fits(nbytes, memory, block, rec_size))
	{
		if (block < largest && block * 2 > largest)
			block = largest;
		else
			block *= 2;
		if (xxl_sort_min_memory(block) > memory)
			return xxl_error_set(&env->err, XXL_ENOMEM, 0,
								 "memory budget of %zu bytes is too small for this graph: a sorter "
								 "of %zu bytes cannot take %llu bytes (the sorter keeps its run "
								 "list in memory)", env->budget.limit, memory,
								 (unsigned long long) nbytes);
	}
	*block_out = block;
	return XXL_OK;
}

xxl_status
gsort_open(graph_env *env, gsorter *gs, size_t memory, size_t rec_size, size_t key_size,
		   uint64_t records)
{
	xxl_sort_config c;
	size_t		block = 0;

	memset(gs, 0, sizeof(*gs));
	memory -= memory % XXL_ALIGN;
	if (pick_sort_block(env, memory, rec_size, records, &block) != XXL_OK)
		return env->err.code;
	if (reserve_share(env, memory, "sorter") != XXL_OK)
		return env->err.code;
	memset(&c, 0, sizeof(c));
	c.memory = memory;
	c.record_size = rec_size;
	c.key_size = key_size;
	c.threads = env->threads;
	c.disk = env->disk;
	c.disk.block_size = block;
	c.cancel = env->cancel;
	c.cancel_arg = env->cancel_arg;
	gs->s = xxl_sorter_create(&c, &env->err);
	if (gs->s == NULL)
	{
		env->budget.used -= memory;
		return env->err.code;
	}
	gs->memory = memory;
	gs->rec_size = rec_size;
	share_add(env, gs->s, false, memory);
	return XXL_OK;
}

static xxl_status
copy_sorter_error(graph_env *env, gsorter *gs)
{
	const xxl_error *e = xxl_sorter_error(gs->s);

	return xxl_error_set(&env->err, e->code ? e->code : XXL_EIO, e->sys_errno, "%s", e->message);
}

xxl_status
gsort_put_slow(graph_env *env, gsorter *gs)
{
	return copy_sorter_error(env, gs);
}

xxl_status
gsort_sort(graph_env *env, gsorter *gs)
{
	if (xxl_sorter_sort(gs->s) != XXL_OK)
		return copy_sorter_error(env, gs);
	return XXL_OK;
}

int
gsort_next(graph_env *env, gsorter *gs, const unsigned char **rec)
{
	const void *r;
	int			got = xxl_sorter_next(gs->s, &r);

	if (got > 0)
	{
		*rec = r;
		return 1;
	}
	if (got < 0)
	{
		copy_sorter_error(env, gs);
		return -1;
	}
	return 0;
}

void
graph_io_add(xxl_io_stats *acc, const xxl_io_stats *io)
{
	if (io->ndisks == 0)
		return;					/* never spilled: no files, nothing to say */
	acc->direct = acc->ndisks == 0 ? io->direct : acc->direct && io->direct;
	if (io->ndisks > acc->ndisks)
		acc->ndisks = io->ndisks;
	for (int i = 0; i < io->ndisks; i++)
	{
		acc->disk[i].bytes_read += io->disk[i].bytes_read;
		acc->disk[i].bytes_written += io->disk[i].bytes_written;
		acc->disk[i].reads += io->disk[i].reads;
		acc->disk[i].writes += io->disk[i].writes;
	}
	acc->wait_read_ns += io->wait_read_ns;
	acc->wait_write_ns += io->wait_write_ns;
	acc->spill_bytes_peak += io->spill_bytes_peak;
}

void
gsort_io(const gsorter *gs, xxl_io_stats *acc)
{
	xxl_sort_stats st;

	if (gs->s == NULL)
		return;
	xxl_sorter_stats(gs->s, &st);
	graph_io_add(acc, &st.io);
}

void
gsort_close(graph_env *env, gsorter *gs)
{
	xxl_sort_stats st;

	if (gs->s == NULL)
		return;
	xxl_sorter_stats(gs->s, &st);
	graph_io_add(&env->io, &st.io);
	env->sorts++;
	env->sort_runs += st.runs;
	env->sort_passes += st.merge_passes;
	if (st.merge_passes > env->sort_passes_max)
		env->sort_passes_max = st.merge_passes;
	env->sorted_bytes += gs->pushed * gs->rec_size;
	share_remove(env, gs->s);
	xxl_sorter_destroy(gs->s);
	env->budget.used -= gs->memory;
	memset(gs, 0, sizeof(*gs));
}

/* Priority queues --------------------------------------------------------- */

/*
 * Blocks as large as keep about 16 run readers in the queue, larger if the
 * run lists of `records` records (16 bytes per block) would crowd its slack.
 */
static xxl_status
pick_pq_block(graph_env *env, size_t memory, size_t rec_size, uint64_t records, size_t *block_out)
{
	size_t		block = XXL_ALIGN;
	uint64_t	nbytes = records * rec_size;

	while (block * 2 <= env->max_block && xxl_pq_min_memory(block * 2) <= memory &&
		   block * 2 * 2 * 16 <= memory / 2)
		block *= 2;
	while (nbytes / block * 16 * 2 > memory / 16)
	{
		if (block * 2 > env->max_block || xxl_pq_min_memory(block * 2) > memory)
			break;				/* the queue reports ENOMEM if it really runs out */
		block *= 2;
	}
	*block_out = block;
	return XXL_OK;
}

xxl_status
gpq_open(graph_env *env, gqueue *gq, size_t memory, size_t rec_size, size_t key_size,
		 uint64_t records)
{
	xxl_pq_config c;
	size_t		block = 0;

	memset(gq, 0, sizeof(*gq));
	memory -= memory % XXL_ALIGN;
	if (pick_pq_block(env, memory, rec_size, records, &block) != XXL_OK)
		return env->err.code;
	if (reserve_share(env, memory, "priority queue") != XXL_OK)
		return env->err.code;
	memset(&c, 0, sizeof(c));
	c.memory = memory;
	c.record_size = rec_size;
	c.key_size = key_size;
	c.threads = env->threads;
	c.disk = env->disk;
	c.disk.block_size = block;
	c.cancel = env->cancel;
	c.cancel_arg = env->cancel_arg;
	gq->q = xxl_pq_create(&c, &env->err);
	if (gq->q == NULL)
	{
		env->budget.used -= memory;
		return env->err.code;
	}
	gq->memory = memory;
	share_add(env, gq->q, true, memory);
	return XXL_OK;
}

static xxl_status
copy_pq_error(graph_env *env, gqueue *gq)
{
	const xxl_error *e = xxl_pq_error(gq->q);

	return xxl_error_set(&env->err, e->code ? e->code : XXL_EIO, e->sys_errno, "%s", e->message);
}

xxl_status
gpq_push(graph_env *env, gqueue *gq, const void *rec)
{
	if (xxl_pq_push(gq->q, rec) != XXL_OK)
		return copy_pq_error(env, gq);
	return XXL_OK;
}

int
gpq_top(graph_env *env, gqueue *gq, const unsigned char **rec)
{
	const void *r;
	int			got = xxl_pq_top(gq->q, &r);

	if (got > 0)
		*rec = r;
	else if (got < 0)
		copy_pq_error(env, gq);
	return got;
}

int
gpq_pop(graph_env *env, gqueue *gq, void *out)
{
	int			got = xxl_pq_pop(gq->q, out);

	if (got < 0)
		copy_pq_error(env, gq);
	return got;
}

void
gpq_io(const gqueue *gq, xxl_io_stats *acc)
{
	xxl_pq_stats st;

	if (gq->q == NULL)
		return;
	xxl_pq_get_stats(gq->q, &st);
	graph_io_add(acc, &st.io);
}

void
gpq_close(graph_env *env, gqueue *gq)
{
	xxl_pq_stats st;

	if (gq->q == NULL)
		return;
	xxl_pq_get_stats(gq->q, &st);
	graph_io_add(&env->io, &st.io);
	env->pq_pushes += st.pushes;
	env->pq_merges += st.merges;
	share_remove(env, gq->q);
	xxl_pq_destroy(gq->q);
	env->budget.used -= gq->memory;
	memset(gq, 0, sizeof(*gq));
}

/* Spools ------------------------------------------------------------------ */

void
gspool_init(gspool *sp, graph_env *env)
{
	size_t		c = SPOOL_CHUNK;

	memset(sp, 0, sizeof(*sp));
	sp->env = env;
	/* small allowances get small chunks, so that they can be used at all */
	while (c > XXL_ALIGN && c * 4 > env->spool_allowance)
		c /= 2;
	sp->chunk_size = c;
	xxl_run_init(&sp->run);
}

static void
spool_free_chunks(gspool *sp)
{
	graph_env  *env = sp->env;

	for (size_t i = 0; i < sp->nchunks; i++)
		xxl_budget_free(&env->budget, sp->chunks[i], sp->chunk_size);
	xxl_budget_free(&env->budget, sp->chunks, sp->chunks_cap * sizeof(unsigned char *));
	env->spool_mem -= sp->mem_used;
	sp->mem_used = 0;
	sp->chunks = NULL;
	sp->nchunks = 0;
	sp->chunks_cap = 0;
}

static xxl_status
writer_status(gspool *sp, xxl_status rc)
{
	if (rc != XXL_OK)
	{
		const xxl_error *e = xxl_bwriter_error(sp->w);

		return xxl_error_set(&sp->env->err, e->code ? e->code : rc, e->sys_errno, "%s", e->message);
	}
	return XXL_OK;
}

/* Move an in-memory spool to disk; later writes go straight to the writer. */
static xxl_status
spool_spill(gspool *sp)
{
	graph_env  *env = sp->env;
	uint64_t	total = sp->nbytes;

	if (open_disks(env) != XXL_OK)
		return env->err.code;
	sp->w = xxl_bwriter_create(env->disks, &env->budget, 2, &sp->run, &env->err);
	if (sp->w == NULL)
		return env->err.code;
	sp->on_disk = true;
	for (size_t i = 0; i < sp->nchunks; i++)
	{
		uint64_t	len = total - (uint64_t) i * sp->chunk_size;

		if (len > sp->chunk_size)
			len = sp->chunk_size;
		if (writer_status(sp, xxl_bwriter_write(sp->w, sp->chunks[i], (size_t) len)) != XXL_OK)
			return env->err.code;
	}
	spool_free_chunks(sp);
	return XXL_OK;
}

xxl_status
gspool_write(gspool *sp, const void *data, size_t len)
{
	graph_env  *env = sp->env;
	const unsigned char *src = data;

	if (!sp->on_disk)
	{
		uint64_t	need = sp->nbytes + len;
		uint64_t	have = (uint64_t) sp->nchunks * sp->chunk_size;

		while (need > have)
		{
			if (env->spool_mem + sp->chunk_size > env->spool_allowance)
			{
				if (spool_spill(sp) != XXL_OK)
					return env->err.code;
				goto disk;
			}
			if (sp->nchunks == sp->chunks_cap)
			{
				size_t		cap = sp->chunks_cap ? sp->chunks_cap * 2 : 16;
				unsigned char **grown = xxl_budget_realloc(&env->budget, sp->chunks,
														   sp->chunks_cap * sizeof(unsigned char *),
														   cap * sizeof(unsigned char *), &env->err);

				if (grown == NULL)
					return env->err.code;
				sp->chunks = grown;
				sp->chunks_cap = cap;
			}
			sp->chunks[sp->nchunks] = xxl_budget_alloc(&env->budget, sp->chunk_size, &env->err);
			if (sp->chunks[sp->nchunks] == NULL)
				return env->err.code;
			sp->nchunks++;
			sp->mem_used += sp->chunk_size;
			env->spool_mem += sp->chunk_size;
			have += sp->chunk_size;
		}
		while (len > 0)
		{
			size_t		ci = (size_t) (sp->nbytes / sp->chunk_size);
			size_t		off = (size_t) (sp->nbytes % sp->chunk_size);
			size_t		n = sp->chunk_size - off;

			if (n > len)
				n = len;
			memcpy(sp->chunks[ci] + off, src, n);
			sp->nbytes += n;
			src += n;
			len -= n;
		}
		return XXL_OK;
	}
disk:
	if (writer_status(sp, xxl_bwriter_write(sp->w, src, len)) != XXL_OK)
		return env->err.code;
	sp->nbytes += len;
	return XXL_OK;
}

xxl_status
gspool_finish(gspool *sp)
{
	xxl_status	rc = XXL_OK;

	if (sp->w)
	{
		rc = writer_status(sp, xxl_bwriter_finish(sp->w));
		xxl_bwriter_destroy(sp->w);
		sp->w = NULL;
	}
	return rc;
}

void
gspool_free(gspool *sp)
{
	if (sp->env == NULL)
		return;
	if (sp->w)
		xxl_bwriter_destroy(sp->w);
	sp->w = NULL;
	spool_free_chunks(sp);
	if (sp->env->disks)
		xxl_run_release(&sp->run, sp->env->disks, &sp->env->budget);
	sp->env = NULL;
}

xxl_status
gspool_reader_open(gspool_reader *rd, gspool *sp)
{
	memset(rd, 0, sizeof(*rd));
	rd->sp = sp;
	rd->left = sp->nbytes;
	if (sp->on_disk && sp->nbytes > 0)
	{
		rd->r = xxl_breader_create(sp->env->disks, &sp->env->budget, 2, &sp->run, &sp->env->err);
		if (rd->r == NULL)
			return sp->env->err.code;
	}
	return XXL_OK;
}

xxl_status
gspool_read(gspool_reader *rd, size_t len, const unsigned char **p)
{
	gspool	   *sp = rd->sp;

	if (len > rd->left)
		return xxl_error_set(&sp->env->err, XXL_EINVAL, 0, "read past the end of a spool");
	rd->left -= len;
	if (!sp->on_disk)
	{
		size_t		got = 0;

		if (rd->off == sp->chunk_size)
		{
			rd->chunk++;
			rd->off = 0;
		}
		if (rd->off + len <= sp->chunk_size)
		{
			*p = sp->chunks[rd->chunk] + rd->off;
			rd->off += len;
			return XXL_OK;
		}
		if (len > sizeof(rd->scratch))
			return xxl_error_set(&sp->env->err, XXL_EINVAL, 0, "spool record of %zu bytes is too long", len);
		while (got < len)
		{
			size_t		n = sp->chunk_size - rd->off;

			if (n == 0)
			{
				rd->chunk++;
				rd->off = 0;
				n = sp->chunk_size;
			}
			if (n > len - got)
				n = len - got;
			memcpy(rd->scratch + got, sp->chunks[rd->chunk] + rd->off, n);
			rd->off += n;
			got += n;
		}
		*p = rd->scratch;
		return XXL_OK;
	}
	else
	{
		const void *data;

		if (xxl_breader_next(rd->r, len, &data) != XXL_OK)
		{
			const xxl_error *e = xxl_breader_error(rd->r);

			return xxl_error_set(&sp->env->err, e->code, e->sys_errno, "%s", e->message);
		}
		*p = data;
		return XXL_OK;
	}
}

void
gspool_reader_close(gspool_reader *rd)
{
	if (rd->r)
		xxl_breader_destroy(rd->r);
	memset(rd, 0, sizeof(*rd));
}

/* Permutation ------------------------------------------------------------- */

static inline uint64_t
mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void
gperm_init(gperm *p, uint64_t n, uint64_t seed)
{
	memset(p, 0, sizeof(*p));
	p->n = n;
	p->half_bits = 1;
	while (p->half_bits < 32 && (UINT64_C(1) << (2 * p->half_bits)) < n)
		p->half_bits++;
	p->mask = p->half_bits == 32 ? UINT64_C(0xffffffff) : (UINT64_C(1) << p->half_bits) - 1;
	for (int i = 0; i < 4; i++)
		p->keys[i] = mix64(seed + UINT64_C(0x9e3779b97f4a7c15) * (uint64_t) (i + 1));
}

static inline uint64_t
feistel(const gperm *p, uint64_t x)
{
	uint64_t	l = x >> p->half_bits,
				r = x & p->mask;

	for (int i = 0; i < 4; i++)
	{
		uint64_t	t = l ^ (mix64(r ^ p->keys[i]) & p->mask);

		l = r;
		r = t;
	}
	return (l << p->half_bits) | r;
}

static inline uint64_t
feistel_inv(const gperm *p, uint64_t y)
{
	uint64_t	l = y >> p->half_bits,
				r = y & p->mask;

	for (int i = 3; i >= 0; i--)
	{
		uint64_t	t = r ^ (mix64(l ^ p->keys[i]) & p->mask);

		r = l;
		l = t;
	}
	return (l << p->half_bits) | r;
}

uint64_t
gperm_apply(const gperm *p, uint64_t x)
{
	if (p->n <= 1)
		return x;
	do
		x = feistel(p, x);
	while (x >= p->n);
	return x;
}

uint64_t
gperm_invert(const gperm *p, uint64_t y)
{
	if (p->n <= 1)
		return y;
	do
		y = feistel_inv(p, y);
	while (y >= p->n);
	return y;
}
