/*
 * merge_internal.h — the merger's state (struct xxl_merger), its constants
 * and the helpers its files share: merge.c, merge_batch.c, merge_async.c.
 */
#ifndef XXL_MERGE_INTERNAL_H
#define XXL_MERGE_INTERNAL_H

#include "core/merge.h"
#include "core/record.h"

#include <pthread.h>

#define VAR_HEADER 8			/* u32 key_len, u32 payload_len */
#define MERGE_BATCHES 3
#define MERGE_BATCH_MAX (512 * 1024)
#define MERGE_BATCH_MIN (16 * 1024)
#define OUTPUT_BATCH_MAX (1024 * 1024)
#define OUTPUT_BATCH_MIN (16 * 1024)
#define PARALLEL_BATCH_MIN 4096	/* records; below, one thread merges */

typedef struct segment
{
	const unsigned char *p;
	const unsigned char *end;
} segment;

typedef struct merge_batch
{
	char	   *data;
	size_t		used;
	bool		full;			/* filled by the worker, not yet consumed */
	bool		last;			/* the merge ends after this batch */
	xxl_status	status;			/* the worker's error, if it stopped on one */
} merge_batch;

typedef struct merge_frame
{
	char	   *data;
	xxl_io_request req;
	size_t		block;
	int			next;			/* free list or a run's pending list */
} merge_frame;

typedef struct merge_source
{
	xxl_run    *run;
	xxl_run_cursor blocks;		/* the run's block table, read as units are posted */
	xxl_run_block issue;		/* the block of next_unissued: its id, and the
								 * unit's prediction key (merge.c, seek_issue) */
	uint64_t	issue_first;	/* that block's first key */
	uint64_t	issue_limit;	/* the next block's first key (the last block: its own) */
	size_t		next_unissued;	/* first unit not yet posted */
	size_t		nunits;			/* units of the run (blocks, with full-size reads) */
	int			cur_frame;		/* frame holding the current unit, or -1 */
	size_t		cur_block;		/* the current unit */
	size_t		cur_len;
	size_t		pos;
	uint64_t	remaining;		/* bytes not yet consumed */
	int			pend_head;		/* prefetched frames, in block order */
	int			pend_tail;
	char	   *scratch;		/* for records that span blocks */
	size_t		scratch_size;
	const unsigned char *span;	/* batched: a spanning record assembled in scratch,
								 * the run's window until it is merged */
	/* current record */
	bool		done;
	uint64_t	prefix;
	uint64_t	code;			/* what the loser tree compares first (merge.c) */
	const unsigned char *key;
	uint32_t	key_len;
	const unsigned char *payload;
	uint32_t	payload_len;
} merge_source;

struct xxl_merger
{
	xxl_merge_env env;
	int			k;
	merge_source *src;
	int			nframes;		/* frames with a buffer */
	int			frame_capacity;
	merge_frame *frames;
	int			free_head;
	uint64_t	units_read;		/* xxl_merger_units (atomic: a worker may merge) */
	uint64_t	units_unprefetched;
	/* loser tree: node 0 is the winner, nodes 1..k-1 hold losers with their code */
	struct tree_node
	{
		uint64_t	code;
		int			rank;		/* source index */
	}		   *tree;
	/* offset-value codes (merge.c): relative to the key handed out last, base */
	bool		ovc;
	unsigned char *base;
	uint32_t	base_len;
	size_t		base_size;
	bool		release_blocks; /* intermediate pass: recycle consumed blocks */
	int			advance_pending;	/* source whose record was handed out */

	/* batched mode */
	bool		batched;
	enum
	{
		KEYS_64,				/* keys of <= 8 bytes */
		KEYS_128_FOLDED,		/* 9..16 bytes, the run index fits the low word */
		KEYS_128				/* 9..16 bytes, the run index compared apart */
	}			key_kind;		/* which merge_template.h instance merges */
	int			fold_shift;		/* KEYS_128_FOLDED: low key word << this | run */
	uint64_t	rank_mask;		/* the run-index bits of a folded low word */
	unsigned char *out;			/* the output batch */
	size_t		out_bytes;
	size_t		out_capacity;	/* records */
	size_t		out_count;
	size_t		out_pos;
	size_t	   *take;			/* per run: records in the current batch */
	void	   *thread_tree[2]; /* one loser tree per merging thread (merge_template.h) */
	size_t		thread_tree_bytes;
	struct segment *split_seg[2];	/* each thread's share of every run */

	/* asynchronous mode */
	bool		async;
	xxl_error  *caller_err;		/* where the worker's error is reported */
	xxl_error	worker_err;
	pthread_t	worker;
	bool		worker_started;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool		stop;
	size_t		batch_size;
	merge_batch batch[MERGE_BATCHES];
	int			fill_index;		/* next batch the worker fills */
	/*
	 * The caller's, a cache line away from the worker's fields (the struct
	 * comes from malloc, so padding rather than alignment): it writes
	 * read_pos for every record.
	 */
	char		caller_apart[64];
	int			read_index;		/* batch the caller reads */
	size_t		read_pos;
	bool		reading;		/* the caller holds batch[read_index] */
};

/* A live run's unconsumed records in its current block, or its spanning record. */
static inline const unsigned char *
run_window(const xxl_merger *m, int r)
{
	const merge_source *src = &m->src[r];

	if (src->span)
		return src->span;
	return (unsigned char *) m->frames[src->cur_frame].data + src->pos;
}

static inline size_t
run_window_records(const xxl_merger *m, const merge_source *src)
{
	return src->span ? 1 : (src->cur_len - src->pos) / m->env.rec_size;
}

/*
 * The largest loser-tree node of merge_template.h's key kinds (k128: two
 * key words and the run), for planning; merge_batch.c checks it.
 */
#define MERGE_TREE_NODE_MAX 24
#define MERGE_PREFETCH_MAX(k) ((k) + 16)
/*
 * A merge of direct files plans a prefetch frame for every this many runs
 * (merge.c, per_source_bytes): with one spare frame, a 116-way final merge
 * of 20M rows at 16MB found 82 % of its units not prefetched and waited
 * for each (docs/engine.md).  Buffered files need none: their small reads
 * are copies done when posted, and the kernel reads ahead.
 */
#define MERGE_PREFETCH_SHARE 4

/* merge.c: the loser tree, frames and prefetching */
xxl_status merge_ensure_scratch(xxl_merger *m, merge_source *src, size_t len);
xxl_status merge_next_block(xxl_merger *m, merge_source *src);
xxl_status merge_prefetch(xxl_merger *m);
void merge_release_current(xxl_merger *m, merge_source *src);
int merge_step(xxl_merger *m, xxl_status *rc);
/* The next record through the loser tree (the async worker fills its ring with it). */
int merge_next_sync(xxl_merger *m, xxl_merge_record *rec);

/* merge_batch.c: the batched merge of short integer keys */
bool merge_batch_eligible(const xxl_merge_env *env);
int merge_fill_batch(xxl_merger *m, unsigned char *out, size_t capacity, size_t *count);
xxl_status merge_setup_batched(xxl_merger *m);

/* merge_async.c: the final merge on a worker */
void merge_free_batches(xxl_merger *m);
void merge_stop_worker(xxl_merger *m);

/* The next record of a batched merge (per record: inline). */
static inline int
merge_next_batched(xxl_merger *m, xxl_merge_record *rec)
{
	const unsigned char *p;

	if (m->out_pos == m->out_count)
	{
		int			rc = merge_fill_batch(m, m->out, m->out_capacity, &m->out_count);

		if (rc <= 0)
			return rc;
		m->out_pos = 0;
	}
	p = m->out + m->out_pos * m->env.rec_size;
	m->out_pos++;
	rec->key = p;
	rec->key_len = (uint32_t) m->env.key_size;
	rec->payload = p;
	rec->payload_len = (uint32_t) m->env.rec_size;
	rec->prefix = m->key_kind == KEYS_64 ? xxl_key64(p, m->env.rec_size, m->env.key_size)
		: xxl_load_be64(p);
	return 1;
}

#endif							/* XXL_MERGE_INTERNAL_H */
