/*
 * merge.c — the k-way merger of sorted runs (see merge.h).
 *
 * Every run contributes its current block; free frames are filled in the
 * order given by the prediction sequence (each block's first key, merged
 * over all runs, thesis §3.5.2).  If a run needs a block that was not
 * prefetched (key prefixes can tie), it is read into the frame the run has
 * just emptied, so the merge can never stall on a full pool.
 *
 * Frames may read less than a block (env.read_size, a power-of-two
 * fraction): a run's bytes are then read as consecutive "units", each
 * inside one block, and a merge can take several times more runs in the
 * same memory.  A unit's prediction key is its block's first key, a lower
 * bound of its own, which keeps the prefetch order safe.  Smaller frames
 * make batches smaller, so the sorter uses them only when full blocks
 * would cost a merge pass.
 *
 * Fixed records with keys of at most 16 bytes (graph and text records, SQL
 * keys of a few columns, the benchmark) are merged in batches, as MCSTL's
 * multiway merge in [P2] §2: every run offers a window of its current block
 * (or the one record that spans into its next block, copied whole); the
 * smallest last key of a window that does not end its run bounds what can be
 * output safely; binary searches count each run's share below the bound; a
 * splitter key cuts the batch in two halves that two threads merge into the
 * output buffer at once.  Keys are integers there (merge_template.h).  Other
 * records go through the loser tree one at a time.
 */
#include "core/merge.h"
#include "core/record.h"

#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

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
	/* loser tree: node 0 is the winner, nodes 1..k-1 hold losers with their key prefix */
	struct tree_node
	{
		uint64_t	prefix;
		int			rank;		/* source index */
	}		   *tree;
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

static void stop_worker(xxl_merger *m);
static void free_batches(xxl_merger *m);
static bool batch_eligible(const xxl_merge_env *env);
static xxl_status setup_batched(xxl_merger *m);
static int merge_next_batched(xxl_merger *m, xxl_merge_record *rec);

static inline size_t
read_unit(const xxl_merge_env *env)
{
	return env->read_size ? env->read_size : env->block_size;
}

/* Bytes of unit u of a run (units of unit_size, the last one shorter). */
static size_t
unit_length(const xxl_run *run, size_t u, size_t unit_size)
{
	uint64_t	left = run->nbytes - (uint64_t) u * unit_size;

	return left < unit_size ? (size_t) left : unit_size;
}

/* The block unit u lies in. */
static inline size_t
unit_block(const xxl_merger *m, size_t u)
{
	return (size_t) ((uint64_t) u * read_unit(&m->env) / m->env.block_size);
}

/* Whether unit u is the last one of its block (or of the run). */
static inline bool
unit_ends_block(const xxl_merger *m, const merge_source *src, size_t u)
{
	return u + 1 == src->nunits || unit_block(m, u + 1) != unit_block(m, u);
}

static inline uint64_t
unit_key(const xxl_merger *m, const merge_source *src, size_t u)
{
	return src->run->block_keys[unit_block(m, u)];
}

static void
post_block(xxl_merger *m, int f, int r, size_t u)
{
	merge_frame *fr = &m->frames[f];
	xxl_run    *run = m->src[r].run;
	size_t		unit = read_unit(&m->env);
	uint64_t	offset = (uint64_t) u * unit;

	fr->block = u;
	/* a bid is a byte offset on its disk: a unit inside the block is one too */
	fr->req.bid = run->bids[offset / m->env.block_size] + offset % m->env.block_size;
	fr->req.buf = fr->data;
	fr->req.len = XXL_ROUND_UP(unit_length(run, u, unit), XXL_ALIGN);
	fr->req.is_write = false;
	xxl_io_post(m->env.disks, &fr->req);
}

static int
pop_free(xxl_merger *m)
{
	int			f = m->free_head;

	if (f >= 0)
		m->free_head = m->frames[f].next;
	return f;
}

static void
push_free(xxl_merger *m, int f)
{
	m->frames[f].next = m->free_head;
	m->free_head = f;
}

/* Fill free frames with the next blocks of the prediction sequence. */
static void
prefetch(xxl_merger *m)
{
	while (m->free_head >= 0)
	{
		int			best = -1;
		uint64_t	best_key = 0;
		int			f;
		merge_source *src;

		for (int r = 0; r < m->k; r++)
		{
			merge_source *c = &m->src[r];

			if (c->next_unissued < c->nunits &&
				(best < 0 || unit_key(m, c, c->next_unissued) < best_key))
			{
				best = r;
				best_key = unit_key(m, c, c->next_unissued);
			}
		}
		if (best < 0)
			return;
		src = &m->src[best];
		f = pop_free(m);
		post_block(m, f, best, src->next_unissued++);
		m->frames[f].next = -1;
		if (src->pend_tail >= 0)
			m->frames[src->pend_tail].next = f;
		else
			src->pend_head = f;
		src->pend_tail = f;
	}
}

/* Give up the current block of a source (recycling it in intermediate passes). */
static void
release_current(xxl_merger *m, merge_source *src)
{
	if (src->cur_frame < 0)
		return;
	if (m->release_blocks && unit_ends_block(m, src, src->cur_block))
		xxl_block_free(m->env.disks, src->run->bids[unit_block(m, src->cur_block)]);
	push_free(m, src->cur_frame);
	src->cur_frame = -1;
}

/* Move a source to its next block, waiting for it if needed. */
static xxl_status
next_block(xxl_merger *m, merge_source *src)
{
	int			f;
	int			r = (int) (src - m->src);

	release_current(m, src);
	if (src->pend_head >= 0)
	{
		f = src->pend_head;
		src->pend_head = m->frames[f].next;
		if (src->pend_head < 0)
			src->pend_tail = -1;
	}
	else
	{
		/* not prefetched: read it into the frame just released */
		f = pop_free(m);
		post_block(m, f, r, src->next_unissued++);
	}
	src->cur_frame = f;
	src->cur_block = m->frames[f].block;
	src->cur_len = unit_length(src->run, src->cur_block, read_unit(&m->env));
	src->pos = 0;
	prefetch(m);
	return xxl_io_wait(m->env.disks, &m->frames[f].req, m->env.err);
}

/* Make sure the source's scratch holds len bytes (its old contents are lost). */
static xxl_status
ensure_scratch(xxl_merger *m, merge_source *src, size_t len)
{
	size_t		size = XXL_ROUND_UP(len, 64);

	if (len <= src->scratch_size)
		return XXL_OK;
	/* free first, so the budget never holds both */
	xxl_budget_free(m->env.budget, src->scratch, src->scratch_size);
	src->scratch_size = 0;
	src->scratch = xxl_budget_alloc(m->env.budget, size, m->env.err);
	if (src->scratch == NULL)
		return m->env.err->code;
	src->scratch_size = size;
	return XXL_OK;
}

/* Contiguous pointer to the source's next len bytes. */
static xxl_status
source_read(xxl_merger *m, merge_source *src, size_t len, const unsigned char **out)
{
	size_t		copied = 0;

	if (len == 0)
	{
		*out = (const unsigned char *) "";
		return XXL_OK;
	}
	if (len > src->remaining)
		return xxl_error_set(m->env.err, XXL_EIO, 0, "run is shorter than its record headers say");
	if (src->pos == src->cur_len && next_block(m, src) != XXL_OK)
		return m->env.err->code;
	if (src->cur_len - src->pos >= len)
	{
		*out = (unsigned char *) m->frames[src->cur_frame].data + src->pos;
		src->pos += len;
		src->remaining -= len;
		return XXL_OK;
	}
	if (ensure_scratch(m, src, len) != XXL_OK)
		return m->env.err->code;
	while (copied < len)
	{
		size_t		n;

		if (src->pos == src->cur_len && next_block(m, src) != XXL_OK)
			return m->env.err->code;
		n = src->cur_len - src->pos;
		if (n > len - copied)
			n = len - copied;
		memcpy(src->scratch + copied, m->frames[src->cur_frame].data + src->pos, n);
		src->pos += n;
		copied += n;
	}
	src->remaining -= len;
	*out = (unsigned char *) src->scratch;
	return XXL_OK;
}

/* Load the source's next record, or mark it done. */
static xxl_status
source_advance(xxl_merger *m, merge_source *src)
{
	const xxl_merge_env *s = &m->env;

	if (src->remaining == 0)
	{
		src->done = true;
		src->prefix = UINT64_MAX;
		release_current(m, src);
		prefetch(m);
		return XXL_OK;
	}
	if (s->fixed)
	{
		if (src->cur_len - src->pos >= s->rec_size && src->cur_frame >= 0)
		{
			/* the common case: the record lies inside the current block */
			src->key = (unsigned char *) m->frames[src->cur_frame].data + src->pos;
			src->pos += s->rec_size;
			src->remaining -= s->rec_size;
		}
		else if (source_read(m, src, s->rec_size, &src->key) != XXL_OK)
			return s->err->code;
		src->key_len = (uint32_t) s->key_size;
		src->payload = src->key;
		src->payload_len = (uint32_t) s->rec_size;
	}
	else
	{
		const unsigned char *p;
		uint32_t	hdr[2];

		if (source_read(m, src, VAR_HEADER, &p) != XXL_OK)
			return s->err->code;
		memcpy(hdr, p, VAR_HEADER);
		if (source_read(m, src, (size_t) hdr[0] + hdr[1], &p) != XXL_OK)
			return s->err->code;
		src->key = p;
		src->key_len = hdr[0];
		src->payload = p + hdr[0];
		src->payload_len = hdr[1];
	}
	/* compared keys have no byte order: every live source ties on the prefix */
	src->prefix = m->env.compare != NULL ? 0 : xxl_key_prefix(src->key, src->key_len);
	return XXL_OK;
}

/*
 * Is source a's record before source b's?  Ties go to the earlier run.  A
 * finished source has prefix UINT64_MAX, so the prefix comparison decides
 * most cases before "done" needs a look.
 */
static inline bool
source_less(const xxl_merger *m, int a, int b)
{
	const merge_source *x = &m->src[a];
	const merge_source *y = &m->src[b];

	if (x->prefix != y->prefix)
		return x->prefix < y->prefix;
	if (x->done || y->done)
		return y->done && (!x->done || a < b);
	if (m->env.compare != NULL)
	{
		int			c = xxl_key_compare_keys(m->env.compare, x->key, x->key_len,
											 y->key, y->key_len);

		if (c != 0)
			return c < 0;
	}
	else
	{
		uint32_t	common = x->key_len < y->key_len ? x->key_len : y->key_len;
		int			c = memcmp(x->key, y->key, common);

		if (c != 0)
			return c < 0;
		if (x->key_len != y->key_len)
			return x->key_len < y->key_len;
	}
	return a < b;
}

static inline int
tree_src(const xxl_merger *m, int node)
{
	return m->tree[node].rank;
}

static int
tree_build(xxl_merger *m, int node)
{
	int			l,
				r;

	if (node >= m->k)
		return node - m->k;
	l = tree_build(m, 2 * node);
	r = tree_build(m, 2 * node + 1);
	if (source_less(m, r, l))
	{
		m->tree[node].rank = l;
		m->tree[node].prefix = m->src[l].prefix;
		return r;
	}
	m->tree[node].rank = r;
	m->tree[node].prefix = m->src[r].prefix;
	return l;
}

/*
 * Replay the winner's path after its source advanced.  The prefix decides
 * most comparisons; keys that share it are compared in full (records that
 * reach this tree have long or variable keys: short fixed keys are merged in
 * batches, with integer keys).
 */
static inline void
tree_replay(xxl_merger *m, int leaf)
{
	int			winner = leaf;
	uint64_t	wkey = m->src[leaf].prefix;
	struct tree_node *t = m->tree;

	for (int node = (leaf + m->k) / 2; node >= 1; node /= 2)
	{
		if (t[node].prefix < wkey ||
			(t[node].prefix == wkey && source_less(m, tree_src(m, node), winner)))
		{
			struct tree_node loser = {wkey, winner};

			winner = tree_src(m, node);
			wkey = t[node].prefix;
			t[node] = loser;
		}
	}
	t[0].rank = winner;
	t[0].prefix = wkey;
}

/* Bytes a merge needs per run beyond its share of prefetch frames. */
static size_t
per_source_bytes(const xxl_merge_env *env)
{
	return read_unit(env) + XXL_ROUND_UP(env->max_record, XXL_ALIGN) + sizeof(merge_source)
		+ sizeof(merge_frame) + sizeof(struct tree_node) + 2 * sizeof(mt_node_k128)
		+ sizeof(size_t) + 2 * sizeof(segment);
}

int
xxl_merge_max_fan_in(const xxl_merge_env *env, size_t reserve_bytes)
{
	size_t		avail = xxl_budget_available(env->budget);
	size_t		reserve = reserve_bytes + read_unit(env);	/* at least one prefetch frame */

	if (avail <= reserve)
		return 0;
	return (int) ((avail - reserve) / per_source_bytes(env));
}

xxl_merger *
xxl_merger_create(const xxl_merge_env *env, xxl_run *runs, int k, bool release_blocks,
				  size_t reserve_bytes)
{
	const xxl_merge_env *s = env;
	xxl_merger *m;
	size_t		avail;
	size_t		reserve;
	int			nframes;

	m = xxl_budget_alloc(s->budget, sizeof(*m), s->err);
	if (m == NULL)
		return NULL;
	memset(m, 0, sizeof(*m));
	m->env = *env;
	m->k = k;
	m->release_blocks = release_blocks;
	m->advance_pending = -1;
	m->free_head = -1;

	/* all memory not needed elsewhere becomes frames */
	avail = xxl_budget_available(s->budget);
	reserve = reserve_bytes
		+ (size_t) k * (XXL_ROUND_UP(s->max_record, XXL_ALIGN) + sizeof(merge_source)
						+ sizeof(struct tree_node) + 2 * sizeof(mt_node_k128) + sizeof(size_t)
						+ 2 * sizeof(segment));
	nframes = avail > reserve ? (int) ((avail - reserve) / (read_unit(s) + sizeof(merge_frame))) : 0;
	if (nframes < k + 1)
		nframes = k + 1;		/* max_fan_in() made sure this fits */

	m->src = xxl_budget_alloc(s->budget, (size_t) k * sizeof(merge_source), s->err);
	m->tree = m->src ? xxl_budget_alloc(s->budget, (size_t) k * sizeof(struct tree_node), s->err) : NULL;
	m->frames = m->tree ? xxl_budget_alloc(s->budget, (size_t) nframes * sizeof(merge_frame), s->err) : NULL;
	if (m->frames == NULL)
	{
		xxl_merger_destroy(m);
		return NULL;
	}
	m->frame_capacity = nframes;
	memset(m->frames, 0, (size_t) nframes * sizeof(merge_frame));
	for (int f = 0; f < nframes; f++)
	{
		m->frames[f].data = xxl_budget_alloc(s->budget, read_unit(s), s->err);
		if (m->frames[f].data == NULL)
		{
			if (f < k + 1)
			{
				xxl_merger_destroy(m);
				return NULL;
			}
			xxl_error_clear(s->err);	/* fewer prefetch frames will do */
			break;
		}
		m->nframes = f + 1;
		push_free(m, f);
	}

	for (int r = 0; r < k; r++)
	{
		merge_source *src = &m->src[r];

		memset(src, 0, sizeof(*src));
		src->run = &runs[r];
		src->cur_frame = -1;
		src->pend_head = src->pend_tail = -1;
		src->remaining = runs[r].nbytes;
		src->nunits = (size_t) ((runs[r].nbytes + read_unit(s) - 1) / read_unit(s));
	}
	/* every run's first block first, then prefetch in σ order */
	for (int r = 0; r < k; r++)
	{
		merge_source *src = &m->src[r];

		if (src->nunits > 0)
		{
			int			f = pop_free(m);

			post_block(m, f, r, src->next_unissued++);
			m->frames[f].next = -1;
			src->pend_head = src->pend_tail = f;
		}
	}
	prefetch(m);
	/* a batch takes a record or more from every run: the buffer must hold k */
	if (batch_eligible(env) && xxl_merge_output_bytes(env) / env->rec_size >= (size_t) k)
	{
		/* blocks are loaded by the first batch */
		if (setup_batched(m) != XXL_OK)
		{
			xxl_merger_destroy(m);
			return NULL;
		}
		return m;
	}
	for (int r = 0; r < k; r++)
	{
		if (source_advance(m, &m->src[r]) != XXL_OK)
		{
			xxl_merger_destroy(m);
			return NULL;
		}
	}
	m->tree[0].rank = k == 1 ? 0 : tree_build(m, 1);
	return m;
}

/* Next record of the merge: the winning source, or -1 at the end. */
static int
merge_step(xxl_merger *m, xxl_status *rc)
{
	int			w;

	*rc = XXL_OK;
	if (m->advance_pending >= 0)
	{
		*rc = source_advance(m, &m->src[m->advance_pending]);
		if (*rc != XXL_OK)
			return -1;
		if (m->k > 1)
			tree_replay(m, m->advance_pending);
		m->advance_pending = -1;
	}
	w = tree_src(m, 0);
	if (m->src[w].done)
		return -1;
	m->advance_pending = w;
	return w;
}

void
xxl_merger_destroy(xxl_merger *m)
{
	const xxl_merge_env *s;

	if (m == NULL)
		return;
	stop_worker(m);
	free_batches(m);
	s = &m->env;
	xxl_budget_free(s->budget, m->out, m->out_bytes);
	xxl_budget_free(s->budget, m->take, (size_t) m->k * sizeof(size_t));
	for (int t = 0; t < 2; t++)
	{
		xxl_budget_free(s->budget, m->thread_tree[t], m->thread_tree_bytes);
		xxl_budget_free(s->budget, m->split_seg[t], (size_t) m->k * sizeof(segment));
	}
	if (m->frames)
	{
		xxl_error	ignored = {0};

		/* no buffer may be freed while its read is in flight */
		for (int f = 0; f < m->nframes; f++)
		{
			xxl_io_wait(s->disks, &m->frames[f].req, &ignored);
			xxl_budget_free(s->budget, m->frames[f].data, read_unit(s));
		}
		xxl_budget_free(s->budget, m->frames, (size_t) m->frame_capacity * sizeof(merge_frame));
	}
	if (m->src)
	{
		for (int r = 0; r < m->k; r++)
			xxl_budget_free(s->budget, m->src[r].scratch, m->src[r].scratch_size);
		xxl_budget_free(s->budget, m->src, (size_t) m->k * sizeof(merge_source));
	}
	xxl_budget_free(s->budget, m->tree, (size_t) m->k * sizeof(struct tree_node));
	xxl_budget_free(s->budget, m, sizeof(*m));
}


/* Batched merge --------------------------------------------------------- */

static bool
batch_eligible(const xxl_merge_env *env)
{
	return env->fixed && env->key_size <= XXL_INT_KEY_MAX && env->rec_size > 0;
}

size_t
xxl_merge_output_bytes(const xxl_merge_env *env)
{
	size_t		bytes;

	if (!batch_eligible(env))
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

static xxl_status
setup_batched(xxl_merger *m)
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
		return next_block(m, src);
	if (src->remaining < R)
		return xxl_error_set(m->env.err, XXL_EIO, 0, "run ends inside a record");
	if (ensure_scratch(m, src, R) != XXL_OK)
		return m->env.err->code;
	memcpy(src->scratch, m->frames[src->cur_frame].data + src->pos, left);
	if (next_block(m, src) != XXL_OK)
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
static int
fill_batch(xxl_merger *m, unsigned char *out, size_t capacity, size_t *count)
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
			release_current(m, src);
			prefetch(m);
		}
	}
	*count = total;
	return 1;
}

static int
merge_next_batched(xxl_merger *m, xxl_merge_record *rec)
{
	const unsigned char *p;

	if (m->out_pos == m->out_count)
	{
		int			rc = fill_batch(m, m->out, m->out_capacity, &m->out_count);

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

/* Asynchronous mode ----------------------------------------------------- */

size_t
xxl_merge_async_bytes(const xxl_merge_env *env)
{
	/* a small share of the budget, but room for the largest record */
	size_t		batch = env->budget->limit / 64;

	if (batch > MERGE_BATCH_MAX)
		batch = MERGE_BATCH_MAX;
	if (batch < MERGE_BATCH_MIN)
		batch = MERGE_BATCH_MIN;
	batch = XXL_ROUND_UP(batch, XXL_ALIGN);
	if (batch < XXL_ROUND_UP(env->max_record + VAR_HEADER, XXL_ALIGN))
		batch = XXL_ROUND_UP(env->max_record + VAR_HEADER, XXL_ALIGN);
	return MERGE_BATCHES * batch;
}

/* Append the record to the batch; false if it does not fit. */
static bool
batch_append(xxl_merger *m, merge_batch *b, const xxl_merge_record *r)
{
	size_t		len = m->env.fixed ? m->env.rec_size
		: VAR_HEADER + (size_t) r->key_len + r->payload_len;

	if (b->used + len > m->batch_size)
		return false;
	if (m->env.fixed)
		memcpy(b->data + b->used, r->key, len);
	else
	{
		uint32_t	hdr[2] = {r->key_len, r->payload_len};

		memcpy(b->data + b->used, hdr, VAR_HEADER);
		memcpy(b->data + b->used + VAR_HEADER, r->key, r->key_len);
		memcpy(b->data + b->used + VAR_HEADER + r->key_len, r->payload, r->payload_len);
	}
	b->used += len;
	return true;
}

static int merge_next_sync(xxl_merger *m, xxl_merge_record *rec);

/*
 * Fill a ring batch of a batched merger by merging straight into it: no
 * record-by-record hand-over, no second copy.  Returns 1 with the batch
 * filled (partly, if the rest cannot hold a record per run), 0 when the
 * merge has ended (the batch may hold its last records), -1 on error.
 */
static int
fill_ring_batch(xxl_merger *m, merge_batch *b)
{
	const size_t R = m->env.rec_size;

	for (;;)
	{
		size_t		room = (m->batch_size - b->used) / R;
		size_t		count = 0;
		int			rc;

		if (room < (size_t) m->k)
			return 1;
		rc = fill_batch(m, (unsigned char *) b->data + b->used, room, &count);
		if (rc <= 0)
			return rc;
		b->used += count * R;
	}
}

/*
 * The worker fills the ring's batches in turn: a batched merger merges into
 * them (fill_ring_batch), the others copy records from the loser tree.  The
 * two must not be mixed: a batched merger's loser tree is never built and
 * its runs' current records are never loaded.
 */
static void *
merge_worker(void *arg)
{
	xxl_merger *m = arg;
	xxl_merge_record rec;
	bool		holding = false;	/* rec did not fit the previous batch */

	for (;;)
	{
		merge_batch *b = &m->batch[m->fill_index];
		xxl_status	status = XXL_OK;
		bool		last = false;

		pthread_mutex_lock(&m->lock);
		while (b->full && !m->stop)
			pthread_cond_wait(&m->changed, &m->lock);
		if (m->stop)
		{
			pthread_mutex_unlock(&m->lock);
			break;
		}
		pthread_mutex_unlock(&m->lock);

		b->used = 0;
		if (m->batched)
		{
			int			rc = fill_ring_batch(m, b);

			if (rc <= 0)
			{
				last = true;
				status = rc < 0 ? m->worker_err.code : XXL_OK;
			}
		}
		while (!m->batched)
		{
			int			rc;

			if (!holding)
			{
				rc = merge_next_sync(m, &rec);
				if (rc <= 0)
				{
					last = true;
					status = rc < 0 ? m->worker_err.code : XXL_OK;
					break;
				}
				holding = true;
			}
			if (!batch_append(m, b, &rec))
				break;
			holding = false;
		}

		pthread_mutex_lock(&m->lock);
		b->full = true;
		b->last = last;
		b->status = status;
		pthread_cond_broadcast(&m->changed);
		pthread_mutex_unlock(&m->lock);
		m->fill_index = (m->fill_index + 1) % MERGE_BATCHES;
		if (last)
			break;
	}
	return NULL;
}

xxl_status
xxl_merger_start_async(xxl_merger *m)
{
	int			rc;

	m->batch_size = xxl_merge_async_bytes(&m->env) / MERGE_BATCHES;
	if (m->batched && m->batch_size / m->env.rec_size < (size_t) m->k)
		return XXL_OK;			/* a ring batch must hold a record per run: stay synchronous */
	for (int i = 0; i < MERGE_BATCHES; i++)
	{
		m->batch[i].data = xxl_budget_alloc(m->env.budget, m->batch_size, m->env.err);
		if (m->batch[i].data == NULL)
			return m->env.err->code;
	}
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->changed, NULL);
	m->async = true;
	/* from now on the worker reports into its own record */
	m->caller_err = m->env.err;
	xxl_error_clear(&m->worker_err);
	m->env.err = &m->worker_err;

	rc = xxl_thread_start(&m->worker, merge_worker, m);
	if (rc != 0)
	{
		m->env.err = m->caller_err;
		m->async = false;
		return xxl_error_set(m->env.err, XXL_ENOMEM, rc, "could not start the merge thread");
	}
	m->worker_started = true;
	return XXL_OK;
}

static void
stop_worker(xxl_merger *m)
{
	if (!m->worker_started)
		return;
	xxl_thread_stop(m->worker, &m->lock, &m->changed, &m->stop);
	m->worker_started = false;
	m->env.err = m->caller_err;
}

static void
free_batches(xxl_merger *m)
{
	for (int i = 0; i < MERGE_BATCHES; i++)
		xxl_budget_free(m->env.budget, m->batch[i].data, m->batch_size);
	if (m->async)
	{
		pthread_mutex_destroy(&m->lock);
		pthread_cond_destroy(&m->changed);
	}
}

static int
merge_next_async(xxl_merger *m, xxl_merge_record *rec)
{
	merge_batch *b = &m->batch[m->read_index];

	if (m->reading && m->read_pos == b->used)
	{
		bool		last = b->last;

		/* hand the consumed batch back to the worker */
		pthread_mutex_lock(&m->lock);
		b->full = false;
		pthread_cond_broadcast(&m->changed);
		pthread_mutex_unlock(&m->lock);
		m->reading = false;
		if (last)
			return 0;
		m->read_index = (m->read_index + 1) % MERGE_BATCHES;
		b = &m->batch[m->read_index];
	}
	if (!m->reading)
	{
		pthread_mutex_lock(&m->lock);
		while (!b->full)
			pthread_cond_wait(&m->changed, &m->lock);
		pthread_mutex_unlock(&m->lock);
		if (b->status != XXL_OK)
		{
			xxl_error_set(m->caller_err, m->worker_err.code, m->worker_err.sys_errno, "%s",
						  m->worker_err.message);
			return -1;
		}
		m->reading = true;
		m->read_pos = 0;
		if (b->used == 0)
			return merge_next_async(m, rec);	/* an empty last batch */
	}
	if (m->env.fixed)
	{
		rec->key = (unsigned char *) b->data + m->read_pos;
		rec->key_len = (uint32_t) m->env.key_size;
		rec->payload = rec->key;
		rec->payload_len = (uint32_t) m->env.rec_size;
		m->read_pos += m->env.rec_size;
	}
	else
	{
		uint32_t	hdr[2];

		memcpy(hdr, b->data + m->read_pos, VAR_HEADER);
		rec->key = (unsigned char *) b->data + m->read_pos + VAR_HEADER;
		rec->key_len = hdr[0];
		rec->payload = rec->key + hdr[0];
		rec->payload_len = hdr[1];
		m->read_pos += VAR_HEADER + (size_t) hdr[0] + hdr[1];
	}
	return 1;
}

static int
merge_next_sync(xxl_merger *m, xxl_merge_record *rec)
{
	xxl_status	rc;
	int			i = merge_step(m, &rc);
	const merge_source *src;

	if (i < 0)
		return rc == XXL_OK ? 0 : -1;
	src = &m->src[i];
	rec->key = src->key;
	rec->key_len = src->key_len;
	rec->payload = src->payload;
	rec->payload_len = src->payload_len;
	rec->prefix = src->prefix;
	return 1;
}

int
xxl_merger_next(xxl_merger *m, xxl_merge_record *rec)
{
	if (m->async)
		return merge_next_async(m, rec);
	return m->batched ? merge_next_batched(m, rec) : merge_next_sync(m, rec);
}

int
xxl_merger_next_many(xxl_merger *m, const unsigned char **recs, size_t max, size_t *n)
{
	xxl_merge_record rec;
	int			got = xxl_merger_next(m, &rec);
	size_t		more = 0;

	if (got <= 0)
		return got;
	*recs = rec.key;
	/* the records after it in the same batch lie right behind it */
	if (m->env.fixed && max > 1)
	{
		if (m->async)
		{
			more = (m->batch[m->read_index].used - m->read_pos) / m->env.rec_size;
			if (more > max - 1)
				more = max - 1;
			m->read_pos += more * m->env.rec_size;
		}
		else if (m->batched)
		{
			more = m->out_count - m->out_pos;
			if (more > max - 1)
				more = max - 1;
			m->out_pos += more;
		}
	}
	*n = 1 + more;
	return 1;
}
