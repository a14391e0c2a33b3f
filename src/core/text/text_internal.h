/*
 * text_internal.h — what the text operators (DC3 builder, checker) share:
 * the operator environment (one memory budget, lazily opened spill files of
 * its own, sorters whose memory shares are charged to that budget, I/O
 * accounting), byte spools (a sequence kept in memory while it is small and
 * spilled to blocks when not), big-endian field packing and the in-memory
 * suffix sorter (SA-IS).  Sorters, distribution sorts and scatters
 * (external permutations) are opened through the environment, which charges
 * their memory to the operator's budget and adds up their I/O.
 */
#ifndef XXL_TEXT_INTERNAL_H
#define XXL_TEXT_INTERNAL_H

#include "xxl_suffix.h"
#include "xxl_dsort.h"
#include "xxl_scatter.h"
#include "xxl_sort.h"
#include "xxl_stream.h"

#define POLL_MASK 0xffff

/*
 * Big-endian fields of 1..8 bytes: memcmp order is numeric order.  A field's
 * width is fixed per level, so the switch predicts well; the byte loop it
 * replaces was a tenth of all instructions.
 */
static inline void
put_be(unsigned char *p, uint64_t v, int w)
{
	switch (w)
	{
		case 1:
			p[0] = (unsigned char) v;
			return;
		case 2:
			p[0] = (unsigned char) (v >> 8);
			p[1] = (unsigned char) v;
			return;
		case 3:
			p[0] = (unsigned char) (v >> 16);
			p[1] = (unsigned char) (v >> 8);
			p[2] = (unsigned char) v;
			return;
		case 4:
			{
				uint32_t	x = __builtin_bswap32((uint32_t) v);

				__builtin_memcpy(p, &x, 4);
				return;
			}
		case 5:
			{
				uint32_t	x = __builtin_bswap32((uint32_t) v);

				p[0] = (unsigned char) (v >> 32);
				__builtin_memcpy(p + 1, &x, 4);
				return;
			}
		default:
			for (int i = w - 1; i >= 0; i--)
			{
				p[i] = (unsigned char) v;
				v >>= 8;
			}
	}
}

static inline uint64_t
get_be(const unsigned char *p, int w)
{
	uint32_t	x;

	switch (w)
	{
		case 1:
			return p[0];
		case 2:
			return ((uint64_t) p[0] << 8) | p[1];
		case 3:
			return ((uint64_t) p[0] << 16) | ((uint64_t) p[1] << 8) | p[2];
		case 4:
			__builtin_memcpy(&x, p, 4);
			return __builtin_bswap32(x);
		case 5:
			__builtin_memcpy(&x, p + 1, 4);
			return ((uint64_t) p[0] << 32) | __builtin_bswap32(x);
		default:
			{
				uint64_t	v = 0;

				for (int i = 0; i < w; i++)
					v = (v << 8) | p[i];
				return v;
			}
	}
}

/* Bytes needed to store values 0..max. */
static inline int
width_for(uint64_t max)
{
	int			w = 1;

	while (w < 8 && (max >> (8 * w)) != 0)
		w++;
	return w;
}

/* The operator environment ------------------------------------------------ */

typedef struct text_env
{
	xxl_budget	budget;			/* the operator's whole budget */
	xxl_error	err;
	xxl_disk_config disk;		/* block_size: of the own spools; pool: the
								 * operator's spill files, reused */
	size_t		max_block;		/* the configured block size: sorters' preference */
	size_t		largest_block;	/* largest block a sorter used */
	xxl_disks  *disks;			/* own spill files, opened at the first spill */
	int			threads;
	/*
	 * What the sorts and scatters poll: the host's hook on the thread that
	 * owns the operator; on a worker of the operator (the suffix array's
	 * output merge) only the stop flag, which the owner sets when its hook
	 * says stop — the host is never called off its own thread.
	 */
	xxl_cancel_fn cancel;
	void	   *cancel_arg;
	xxl_cancel_fn host_cancel;
	void	   *host_cancel_arg;
	pthread_t	owner;
	int			stop;			/* atomic */
	size_t		pool;			/* for sorters and in-memory phases */
	size_t		spool_allowance;	/* in-memory spool bytes, all spools together */
	size_t		spool_mem;		/* ... currently used */
	uint64_t	polls;
	/* accounting of finished sorters */
	uint64_t	sort_read;
	uint64_t	sort_written;
	uint64_t	sort_wait_ns;	/* time finished sorters waited for I/O */
	int			sort_direct;	/* their files: 0 none yet, 1 all O_DIRECT, -1 not all */
	uint64_t	sorted_bytes;
	uint64_t	scattered_bytes;
	uint64_t	spool_bytes;
	uint64_t	runs;
	int			max_passes;
} text_env;

/* Memory a text operator needs at least, and how it splits its budget. */
size_t		text_env_min_memory(void);
/* The part of the budget kept for structures that grow (block lists, level structs). */
size_t		text_env_slack(const text_env *env);
xxl_status	text_env_init(text_env *env, const xxl_sa_config *cfg);
void		text_env_close(text_env *env);
bool		text_env_canceled(text_env *env);
/* On the owner, while a worker runs: ask the host, and pass a stop on (no error is recorded). */
bool		text_env_host_stop(text_env *env);
xxl_status	text_env_open_disks(text_env *env);
/* I/O of the environment: finished sorters plus the own spill files. */
void		text_env_io(const text_env *env, uint64_t *read, uint64_t *written);
/* Time spent waiting for I/O: finished sorters plus the own spill files. */
uint64_t	text_env_io_wait(const text_env *env);
/* Whether every spill file so far was opened with O_DIRECT (false if none). */
bool		text_env_io_direct(const text_env *env);

/*
 * A sort charged to the budget.  It is a distribution sort (xxl_dsort.h)
 * when the records are bounded, the key has at most 16 bytes and it fits:
 * then it is charged phase by phase — little while records are put (they
 * are staged), `memory` while it distributes, `output_memory` afterwards —
 * so an operator lends it the shares of parts that are idle or gone when it
 * distributes.  Otherwise it is the core sorter (xxl_sort.h) with
 * output_memory for its whole life.  Its I/O is added to the environment
 * (and to *io_acc, if not NULL) when it is closed.
 */
/* Puts are collected in batches of this many bytes of records (one call each). */
#define TEXT_BATCH_BYTES 2048

typedef struct text_sorter
{
	xxl_sorter *s;				/* the core sorter, or */
	xxl_dsort  *d;				/* the distribution sort */
	size_t		batch,			/* records collected, and room for that many */
				batch_cap;
	unsigned char *batch_recs;	/* TEXT_BATCH_BYTES from the budget */
	size_t		memory;			/* what the budget holds for it now */
	size_t		distribute,		/* distribution sort: its phases' memory */
				output;
	size_t		rec_size;
	uint64_t	pushed;
	const unsigned char *p;		/* records being handed out */
	size_t		left;
} text_sorter;

/*
 * The block size for a core sorter of the given memory that will take
 * records records; XXL_ENOMEM if no block size lets the core sorter take
 * them.
 */
xxl_status	tsort_pick_block(text_env *env, size_t memory, size_t rec_size, uint64_t records,
							 size_t *block);
xxl_status	tsort_error(text_env *env, text_sorter *ts);

/* What the caller of tsort_open promises. */
typedef enum tsort_input
{
	TSORT_UNBOUNDED,			/* maybe more than `records`: the core sorter */
	TSORT_BOUNDED,				/* at most `records` */
	TSORT_PRESAMPLED			/* at most `records`, and a sample first when
								 * tsort_sample_stride says so */
} tsort_input;

/*
 * records: how many will be put (sizes the blocks; 0 = unknown).
 * output_memory <= memory (0 = memory).
 */
xxl_status	tsort_open(text_env *env, text_sorter *ts, size_t memory, size_t output_memory,
					   size_t rec_size, size_t key_size, uint64_t records, tsort_input input);

/*
 * A presampled sort wants the key of every stride-th record of its coming
 * input (tsort_sample) before the first record; 0: no sample.
 */
static inline uint64_t
tsort_sample_stride(const text_sorter *ts)
{
	return ts->d ? xxl_dsort_sample_stride(ts->d) : 0;
}

static inline xxl_status
tsort_sample(text_env *env, text_sorter *ts, const void *key)
{
	if (xxl_dsort_sample(ts->d, key) != XXL_OK)
		return tsort_error(env, ts);
	return XXL_OK;
}
/*
 * The sample stride tsort_open(..., TSORT_PRESAMPLED) with these figures
 * will ask for (0: it will not want a sample).
 */
uint64_t	tsort_plan_stride(text_env *env, size_t memory, size_t output_memory, size_t rec_size,
							  size_t key_size, uint64_t records);
/* Whether tsort_open with these figures (bounded) would succeed. */
bool		tsort_fits(text_env *env, size_t memory, size_t output_memory, size_t rec_size,
					   size_t key_size, uint64_t records);

xxl_status	tsort_flush(text_env *env, text_sorter *ts);

/*
 * Where the caller writes its next record: tsort_room, fill it field by
 * field, tsort_push.  A record put together on the stack from narrow stores
 * and copied at once with wide loads stalls on store forwarding (40 % of
 * merge_tuples, measured); written in place it is never read back early.
 * local is the caller's buffer for a sort that takes records one by one.
 */
static inline unsigned char *
tsort_room(text_sorter *ts, unsigned char *local)
{
	return ts->batch_cap > 0 ? ts->batch_recs + ts->batch * ts->rec_size : local;
}

/* Take the record written at tsort_room(ts, rec). */
static inline xxl_status
tsort_push(text_env *env, text_sorter *ts, const unsigned char *rec)
{
	ts->pushed++;
	if (ts->batch_cap > 0)
	{
		if (++ts->batch == ts->batch_cap)
			return tsort_flush(env, ts);
		return XXL_OK;
	}
	if ((ts->d ? xxl_dsort_put(ts->d, rec) : xxl_sorter_put(ts->s, rec)) != XXL_OK)
		return tsort_error(env, ts);
	return XXL_OK;
}

xxl_status	tsort_sort(text_env *env, text_sorter *ts);
int			tsort_refill(text_env *env, text_sorter *ts);

/* The next record in key order: 1 with *rec, 0 at the end, -1 on error (in env->err). */
static inline int
tsort_next(text_env *env, text_sorter *ts, const unsigned char **rec)
{
	if (ts->left == 0)
	{
		int			got = tsort_refill(env, ts);

		if (got <= 0)
			return got;
	}
	*rec = ts->p;
	ts->p += ts->rec_size;
	ts->left--;
	return 1;
}

void		tsort_close(text_env *env, text_sorter *ts, uint64_t *io_acc, uint64_t *sorted_acc);
/* Buckets of a distribution sort that were too full for memory (0 for the core sorter). */
uint64_t	tsort_overfull(const text_sorter *ts);

/*
 * A scatter (external permutation, xxl_scatter.h) charged to the budget with
 * the memory its plan needs (at most the share it was given), read record by
 * record.
 */
typedef struct text_scatter
{
	xxl_scatter *s;
	size_t		memory;
	size_t		rec_size;
	uint64_t	pushed;
	size_t		batch,			/* records collected, and room for that many */
				batch_cap;
	uint64_t   *batch_slots;	/* TEXT_BATCH_BYTES / 4 slots and */
	unsigned char *batch_recs;	/* TEXT_BATCH_BYTES of records, from the budget */
	const unsigned char *p;		/* the array being read */
	size_t		left;
} text_scatter;

/* Whether a scatter of the given share can take slots records. */
bool		tscat_fits(text_env *env, size_t memory, size_t rec_size, uint64_t slots);
xxl_status	tscat_open(text_env *env, text_scatter *ts, size_t memory, size_t rec_size,
					   uint64_t slots);
xxl_status	tscat_error(text_env *env, text_scatter *ts);

xxl_status	tscat_flush(text_env *env, text_scatter *ts);

/* As tsort_room / tsort_push: the next record is written in place. */
static inline unsigned char *
tscat_room(text_scatter *ts)
{
	return ts->batch_recs + ts->batch * ts->rec_size;
}

/* Take the record written at tscat_room(ts), bound for slot. */
static inline xxl_status
tscat_push(text_env *env, text_scatter *ts, uint64_t slot)
{
	ts->pushed++;
	ts->batch_slots[ts->batch] = slot;
	if (++ts->batch == ts->batch_cap)
		return tscat_flush(env, ts);
	return XXL_OK;
}

xxl_status	tscat_finish(text_env *env, text_scatter *ts);
int			tscat_refill(text_env *env, text_scatter *ts);

/* The next record in slot order: 1 with *rec, 0 at the end, -1 on error. */
static inline int
tscat_next(text_env *env, text_scatter *ts, const unsigned char **rec)
{
	if (ts->left == 0)
	{
		int			got = tscat_refill(env, ts);

		if (got <= 0)
			return got;
	}
	*rec = ts->p;
	ts->p += ts->rec_size;
	ts->left--;
	return 1;
}

void		tscat_close(text_env *env, text_scatter *ts, uint64_t *io_acc, uint64_t *bytes_acc);

/* Spools ----------------------------------------------------------------- */

#define SPOOL_CHUNK (256 * 1024)

typedef struct spool
{
	text_env   *env;
	/* in memory: a list of chunks */
	unsigned char **chunks;
	size_t		nchunks;
	size_t		chunks_cap;
	size_t		chunk_size;
	size_t		mem_limit;		/* spill beyond this many bytes */
	size_t		mem_used;		/* bytes charged for chunks */
	/* on disk */
	bool		on_disk;
	xxl_run		run;
	xxl_bwriter *w;
	uint64_t	nbytes;
	bool		finished;
} spool;

void		spool_init(spool *sp, text_env *env, size_t mem_limit);
xxl_status	spool_write(spool *sp, const void *data, size_t len);
xxl_status	spool_finish(spool *sp);
/* Move an in-memory spool to disk (frees its memory). */
xxl_status	spool_spill(spool *sp);
void		spool_free(spool *sp);

typedef struct spool_reader
{
	spool	   *sp;
	xxl_breader *r;
	size_t		chunk;			/* memory: next chunk index */
	uint64_t	left;			/* bytes not yet handed out */
	/* the current piece */
	const unsigned char *p;
	size_t		avail;
	bool		consume;		/* memory: free chunks as they are read */
} spool_reader;

xxl_status	spool_reader_open(spool_reader *rd, spool *sp, bool consume);
/* The next contiguous piece: *len > 0 bytes, or 0 at the end. */
xxl_status	spool_reader_piece(spool_reader *rd, const unsigned char **p, size_t *len);
void		spool_reader_close(spool_reader *rd);

/* Fixed-width big-endian values from a spool (values may span pieces). */
typedef struct value_reader
{
	spool_reader rd;
	int			w;
	const unsigned char *p;
	size_t		avail;
} value_reader;

xxl_status	value_reader_open(value_reader *vr, spool *sp, int w, bool consume);
xxl_status	value_reader_slow(value_reader *vr, uint64_t *v);

static inline xxl_status
value_reader_next(value_reader *vr, uint64_t *v)
{
	if (vr->avail >= (size_t) vr->w)
	{
		*v = vr->w == 1 ? *vr->p : get_be(vr->p, vr->w);
		vr->p += vr->w;
		vr->avail -= vr->w;
		return XXL_OK;
	}
	return value_reader_slow(vr, v);
}

static inline void
value_reader_close(value_reader *vr)
{
	spool_reader_close(&vr->rd);
}

/* In-memory suffix sorting (sais.c) ---------------------------------------- */

/*
 * Suffix array of s[0..n) whose last character s[n-1] is 0 and unique, all
 * others in 1..K; characters are cs = 1, 2 or 4 bytes wide.  n < 2^31 - 1.
 * Scratch memory is drawn from the budget.
 */
xxl_status	text_sais(const void *s, int cs, int32_t *SA, int64_t n, uint32_t K,
					  xxl_budget *budget, xxl_error *err);
/* Bytes text_sais needs besides s and SA, at most. */
size_t		text_sais_scratch(int64_t n, uint32_t K);

#endif							/* XXL_TEXT_INTERNAL_H */
