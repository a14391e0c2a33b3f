/*
 * graph_internal.h — what the graph operators share: the operator
 * environment (one memory budget split into a pool for sorters, queues and
 * union-find arrays, an allowance for in-memory spools and buffers for the
 * own streams), sorters and priority queues charged to that budget, byte
 * spools (kept in memory while small, spilled to the own files when not),
 * the node permutation of the external path and small record helpers.
 */
#ifndef XXL_GRAPH_INTERNAL_H
#define XXL_GRAPH_INTERNAL_H

#include "xxl_graph.h"
#include "xxl_sort.h"
#include "xxl_stream.h"
#include "pq.h"

#include <string.h>

#define GRAPH_POLL_MASK 0xffff

/* Big-endian 64-bit fields: memcmp order is numeric order. */
static inline void
g_put_be(unsigned char *p, uint64_t v)
{
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
}

static inline uint64_t
g_get_be(const unsigned char *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

static inline void
g_put_u64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static inline uint64_t
g_get_u64(const unsigned char *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
	return v;
}

/* int64 -> uint64 preserving order (sign bit flipped). */
static inline uint64_t
g_id_key(int64_t id)
{
	return (uint64_t) id ^ (UINT64_C(1) << 63);
}

static inline int64_t
g_key_id(uint64_t key)
{
	return (int64_t) (key ^ (UINT64_C(1) << 63));
}

/* double -> uint64 preserving order (not for NaN); -0.0 < +0.0. */
static inline uint64_t
g_cost_key(double c)
{
	uint64_t	b;

	memcpy(&b, &c, 8);
	return (b >> 63) ? ~b : b | (UINT64_C(1) << 63);
}

static inline double
g_key_cost(uint64_t k)
{
	uint64_t	b = (k >> 63) ? k & ~(UINT64_C(1) << 63) : ~k;
	double		c;

	memcpy(&c, &b, 8);
	return c;
}

/* The operator environment ------------------------------------------------ */

/* A sorter or queue with a reserved share of the budget (see graph_env). */
typedef struct graph_share
{
	const void *core;			/* xxl_sorter or xxl_pq */
	bool		pq;
	size_t		memory;			/* reserved */
} graph_share;

#define GRAPH_MAX_SHARES 16

typedef struct graph_env
{
	xxl_budget	budget;
	/*
	 * Sorters and queues reserve their share of the budget when they open
	 * (the plan that keeps the shares within it), but back only what they
	 * write: the memory the operator used is sampled, whenever the budget
	 * or the shares change, as the budget in use with each live share
	 * counted at its own peak so far.
	 */
	graph_share shares[GRAPH_MAX_SHARES];
	int			nshares;
	uint64_t	used_peak;
	xxl_error	err;
	xxl_disk_config disk;		/* block_size: of the own streams; pool: the
								 * operator's spill files, reused */
	size_t		max_block;		/* the configured block size: sorters' preference */
	xxl_disks  *disks;			/* own spill files, opened at the first spill */
	int			threads;
	xxl_cancel_fn cancel;
	void	   *cancel_arg;
	size_t		pool;			/* for sorters, queues and union-find arrays */
	size_t		spool_allowance;	/* in-memory spool bytes, all spools together */
	size_t		spool_mem;
	/* accounting of finished sorters and queues */
	xxl_io_stats io;
	uint64_t	sorts;
	uint64_t	sort_runs;
	uint64_t	sort_passes;
	int			sort_passes_max;
	uint64_t	sorted_bytes;
	uint64_t	pq_pushes;
	uint64_t	pq_merges;
} graph_env;

size_t		graph_env_min_memory(void);
xxl_status	graph_env_init(graph_env *env, const xxl_graph_config *cfg);
void		graph_env_close(graph_env *env);
bool		graph_env_canceled(graph_env *env);
/* Budget-charged allocation of a large array (e.g. union-find). */
void	   *graph_env_alloc(graph_env *env, size_t bytes);
void		graph_env_free(graph_env *env, void *p, size_t bytes);
/* The most memory the operator used so far (see graph_env). */
uint64_t	graph_env_used_peak(const graph_env *env);

/* A sorter with memory bytes of the budget reserved for it. */
typedef struct gsorter
{
	xxl_sorter *s;
	size_t		memory;
	size_t		rec_size;
	uint64_t	pushed;
} gsorter;

/* records: how many will be put (sizes the blocks); 0 = unknown. */
xxl_status	gsort_open(graph_env *env, gsorter *gs, size_t memory, size_t rec_size,
					   size_t key_size, uint64_t records);
xxl_status	gsort_put_slow(graph_env *env, gsorter *gs);
static inline xxl_status
gsort_put(graph_env *env, gsorter *gs, const void *rec)
{
	gs->pushed++;
	if (xxl_sorter_put(gs->s, rec) != XXL_OK)
		return gsort_put_slow(env, gs);
	return XXL_OK;
}
xxl_status	gsort_sort(graph_env *env, gsorter *gs);
/* 1 with *rec, 0 at the end, -1 on error (copied into env->err). */
int			gsort_next(graph_env *env, gsorter *gs, const unsigned char **rec);
/* I/O so far of an open sorter. */
void		gsort_io(const gsorter *gs, xxl_io_stats *acc);
void		gsort_close(graph_env *env, gsorter *gs);

/* A priority queue with memory bytes of the budget reserved for it. */
typedef struct gqueue
{
	xxl_pq	   *q;
	size_t		memory;
} gqueue;

/* records: about how many it will hold at most (sizes the blocks). */
xxl_status	gpq_open(graph_env *env, gqueue *gq, size_t memory, size_t rec_size,
					 size_t key_size, uint64_t records);
xxl_status	gpq_push(graph_env *env, gqueue *gq, const void *rec);
/* 1 with *rec (valid until the next push or pop), 0 if empty, -1 on error. */
int			gpq_top(graph_env *env, gqueue *gq, const unsigned char **rec);
int			gpq_pop(graph_env *env, gqueue *gq, void *out);
void		gpq_io(const gqueue *gq, xxl_io_stats *acc);

/*
 * Add one file set's I/O counters to acc, disk by disk (every set of the
 * operator uses the same directories in the same order).  Spill peaks add
 * up: the sets' peaks need not coincide, so the sum is an upper bound.
 */
void		graph_io_add(xxl_io_stats *acc, const xxl_io_stats *io);
void		gpq_close(graph_env *env, gqueue *gq);

/* Spools: a byte sequence written once, read any number of times. --------- */

typedef struct gspool
{
	graph_env  *env;
	unsigned char **chunks;
	size_t		nchunks;
	size_t		chunks_cap;
	size_t		chunk_size;		/* a power of two: fixed records never span chunks */
	size_t		mem_used;
	bool		on_disk;
	xxl_run		run;
	xxl_bwriter *w;
	uint64_t	nbytes;
} gspool;

void		gspool_init(gspool *sp, graph_env *env);
xxl_status	gspool_write(gspool *sp, const void *data, size_t len);
xxl_status	gspool_finish(gspool *sp);
void		gspool_free(gspool *sp);

typedef struct gspool_reader
{
	gspool	   *sp;
	xxl_breader *r;
	size_t		chunk;
	size_t		off;
	uint64_t	left;
	unsigned char scratch[32];	/* a record spanning two chunks */
} gspool_reader;

xxl_status	gspool_reader_open(gspool_reader *rd, gspool *sp);
/* The next len (<= 32) bytes; XXL_EINVAL past the end. */
xxl_status	gspool_read(gspool_reader *rd, size_t len, const unsigned char **p);
void		gspool_reader_close(gspool_reader *rd);

/* Node permutation of the external path ----------------------------------- */

/*
 * A pseudorandom bijection of [0, n): a 4-round Feistel network on the
 * smallest even number of bits covering n, with cycle walking (expected
 * fewer than 4 steps).  Inverted by running the rounds backwards.
 */
typedef struct gperm
{
	uint64_t	n;
	int			half_bits;
	uint64_t	mask;
	uint64_t	keys[4];
} gperm;

void		gperm_init(gperm *p, uint64_t n, uint64_t seed);
uint64_t	gperm_apply(const gperm *p, uint64_t x);
uint64_t	gperm_invert(const gperm *p, uint64_t y);

#endif							/* XXL_GRAPH_INTERNAL_H */
