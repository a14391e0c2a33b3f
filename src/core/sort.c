/*
 * sort.c — the external sorter (see xxl_sort.h).
 *
 * Memory: during run formation the budget holds one load region plus the run
 * writer's block ring.  Fixed records fill half the region and are radix
 * sorted into the other half; variable-length records go into an arena that
 * grows up from the region's start while their 16-byte sort entries grow down
 * from its end, leaving room for the entries' radix scratch in between.  At
 * the end of input the region is freed and the whole budget goes to merging:
 * one frame per run being merged, the rest as prefetch frames.
 *
 * Merge: every run contributes its current block; free frames are filled in
 * the order given by the prediction sequence (each block's first key, merged
 * over all runs, thesis §3.5.2).  If a run needs a block that was not
 * prefetched (key prefixes can tie), it is read into the frame the run has
 * just emptied, so the merge can never stall on a full pool.
 */
#include "xxl_sort.h"
#include "radix.h"
#include "xxl_stream.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define VAR_HEADER 8			/* u32 key_len, u32 payload_len */
#define POLL_EVERY 65536
#define WRITE_BUFFERS 2
/* structs, trees and run lists: they grow with N/B, so scale with the budget */
#define SLACK_BYTES (64 * 1024)
#define SLACK_FOR(memory) ((memory) / 32 > SLACK_BYTES ? (memory) / 32 : SLACK_BYTES)

typedef enum sorter_phase
{
	PHASE_INPUT,
	PHASE_MEMORY_OUTPUT,
	PHASE_MERGE_OUTPUT,
	PHASE_DONE,
	PHASE_FAILED
} sorter_phase;

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
	size_t		next_unissued;	/* first block not yet posted */
	int			cur_frame;		/* frame holding the current block, or -1 */
	size_t		cur_block;
	size_t		cur_len;
	size_t		pos;
	uint64_t	remaining;		/* bytes not yet consumed */
	int			pend_head;		/* prefetched frames, in block order */
	int			pend_tail;
	char	   *scratch;		/* for records that span blocks */
	size_t		scratch_size;
	/* current record */
	bool		done;
	uint64_t	prefix;
	const unsigned char *key;
	uint32_t	key_len;
	const unsigned char *payload;
	uint32_t	payload_len;
} merge_source;

typedef struct merger
{
	struct xxl_sorter *s;
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
		int			rank;		/* source index (+ k when done, prefix_decides only) */
	}		   *tree;
	bool		release_blocks; /* intermediate pass: recycle consumed blocks */
	bool		prefix_decides; /* fixed keys of <= 8 bytes */
	int			advance_pending;	/* source whose record was handed out */
} merger;

struct xxl_sorter
{
	xxl_sort_config cfg;
	xxl_error	err;
	xxl_budget	budget;
	sorter_phase phase;
	bool		fixed;
	size_t		rec_size;
	size_t		key_size;
	int			threads;
	size_t		block_size;
	xxl_disks  *disks;			/* opened at the first spill */

	/* run formation */
	char	   *region;
	size_t		region_size;
	size_t		nloaded;		/* records in the current load */
	size_t		fixed_capacity; /* fixed: records per load */
	size_t		half;			/* fixed: page-aligned size of each region half */
	xxl_io_request *run_writes;	/* fixed: writes of the last run, in flight */
	size_t		nrun_writes;
	size_t		run_writes_capacity;
	size_t		arena_used;		/* variable: arena bytes */
	size_t		max_record;		/* largest record seen (bytes on disk) */
	uint64_t	puts_since_poll;

	/* runs on disk */
	xxl_run    *runs;
	size_t		nruns;
	size_t		runs_capacity;

	/* output */
	size_t		out_index;
	merger	   *final;

	/* statistics */
	xxl_sort_stats stats;
	uint64_t	t_start;
	uint64_t	t_merge_start;
};

size_t
xxl_sort_min_memory(size_t block_size)
{
	return 8 * block_size + SLACK_BYTES;
}

static bool
poll_cancel(xxl_sorter *s)
{
	if (s->cfg.cancel && s->cfg.cancel(s->cfg.cancel_arg))
	{
		xxl_error_set(&s->err, XXL_ECANCELED, 0, "sort canceled");
		return true;
	}
	return false;
}

static xxl_status
fail(xxl_sorter *s)
{
	s->phase = PHASE_FAILED;
	if (s->err.code == XXL_OK)
		xxl_error_set(&s->err, XXL_EIO, 0, "sort failed");
	return s->err.code;
}

static inline xxl_sort_entry *
var_entries(xxl_sorter *s)
{
	return (xxl_sort_entry *) (s->region + s->region_size) - s->nloaded;
}

/* Creation ------------------------------------------------------------- */

xxl_sorter *
xxl_sorter_create(const xxl_sort_config *config, xxl_error *err)
{
	xxl_budget	budget;
	xxl_sorter *s;
	size_t		block_size = config->disk.block_size;

	if (config->record_size > 0 &&
		(config->record_size > XXL_RADIX_MAX_FIXED || config->key_size > config->record_size))
	{
		xxl_error_set(err, XXL_EINVAL, 0,
					  "fixed records must be at most %d bytes with a key no longer than the record (got %zu/%zu)",
					  XXL_RADIX_MAX_FIXED, config->record_size, config->key_size);
		return NULL;
	}
	if (block_size < XXL_ALIGN || block_size % XXL_ALIGN != 0)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "block size %zu is not a positive multiple of %d",
					  block_size, XXL_ALIGN);
		return NULL;
	}
	if (config->memory < xxl_sort_min_memory(block_size))
	{
		xxl_error_set(err, XXL_EINVAL, 0,
					  "memory budget of %zu bytes is below the minimum of %zu for %zu-byte blocks",
					  config->memory, xxl_sort_min_memory(block_size), block_size);
		return NULL;
	}
	xxl_budget_init(&budget, config->memory);
	s = xxl_budget_alloc(&budget, sizeof(*s), err);
	if (s == NULL)
		return NULL;
	memset(s, 0, sizeof(*s));
	s->budget = budget;
	s->cfg = *config;
	s->fixed = config->record_size > 0;
	s->rec_size = config->record_size;
	s->key_size = s->fixed ? config->key_size : 0;
	s->threads = config->threads > 0 ? config->threads : omp_get_max_threads();
	s->block_size = block_size;
	s->phase = PHASE_INPUT;
	s->max_record = s->rec_size;
	s->stats.memory_limit = config->memory;

	/*
	 * The load region: everything but some slack and, for variable-length
	 * records, the run writer's ring.  Fixed records are sorted into the
	 * region's second half and written to disk straight from there.
	 */
	s->region_size = config->memory - s->budget.used - SLACK_FOR(config->memory)
		- (s->fixed ? 0 : WRITE_BUFFERS * block_size);
	s->region_size -= s->region_size % 64;
	s->region = xxl_budget_alloc(&s->budget, s->region_size, err);
	if (s->region == NULL)
	{
		xxl_budget_free(&s->budget, s, sizeof(*s));
		return NULL;
	}
	if (s->fixed)
	{
		s->half = (s->region_size / 2) & ~(size_t) (XXL_ALIGN - 1);
		s->fixed_capacity = s->half / s->rec_size;
		s->run_writes_capacity = s->half / block_size + 1;
		s->run_writes = xxl_budget_alloc(&s->budget, s->run_writes_capacity * sizeof(xxl_io_request), err);
		if (s->run_writes == NULL)
		{
			xxl_budget_free(&s->budget, s->region, s->region_size);
			xxl_budget_free(&s->budget, s, sizeof(*s));
			return NULL;
		}
		memset(s->run_writes, 0, s->run_writes_capacity * sizeof(xxl_io_request));
	}
	s->t_start = xxl_now_ns();
	return s;
}

/* Run formation --------------------------------------------------------- */

static xxl_status
ensure_disks(xxl_sorter *s)
{
	if (s->disks == NULL)
	{
		s->disks = xxl_disks_open(&s->cfg.disk, &s->err);
		if (s->disks == NULL)
			return s->err.code;
	}
	return XXL_OK;
}

static xxl_status
add_run(xxl_sorter *s, xxl_run **run)
{
	if (s->nruns == s->runs_capacity)
	{
		size_t		cap = s->runs_capacity ? s->runs_capacity * 2 : 16;
		xxl_run    *grown = xxl_budget_realloc(&s->budget, s->runs,
											   s->runs_capacity * sizeof(xxl_run),
											   cap * sizeof(xxl_run), &s->err);

		if (grown == NULL)
			return s->err.code;
		s->runs = grown;
		s->runs_capacity = cap;
	}
	*run = &s->runs[s->nruns++];
	xxl_run_init(*run);
	return XXL_OK;
}

/* Where sorted fixed records are: the region's second half. */
static inline char *
fixed_sorted(xxl_sorter *s)
{
	return s->region + s->half;
}

/* Wait for the previous run's writes: the half they come from is reused. */
static xxl_status
wait_run_writes(xxl_sorter *s)
{
	xxl_status	rc = XXL_OK;

	for (size_t i = 0; i < s->nrun_writes; i++)
		if (xxl_io_wait(s->disks, &s->run_writes[i], &s->err) != XXL_OK)
			rc = s->err.code;
	s->nrun_writes = 0;
	return rc;
}

/* Sort the current load in memory; afterwards records are in output order. */
static void
sort_load(xxl_sorter *s)
{
	if (s->fixed)
		xxl_radix_sort_fixed(s->region, fixed_sorted(s), s->nloaded, s->rec_size, s->key_size,
							 s->threads, true);
	else
	{
		xxl_sort_entry *e = var_entries(s);

		/* entries were pushed downwards: restore input order for stability */
		for (size_t i = 0, j = s->nloaded ? s->nloaded - 1 : 0; i < j; i++, j--)
		{
			xxl_sort_entry t = e[i];

			e[i] = e[j];
			e[j] = t;
		}
		xxl_radix_sort_entries(e, e - s->nloaded, s->nloaded, s->region, VAR_HEADER,
							   s->threads);
	}
}

static inline const char *
loaded_record(xxl_sorter *s, size_t i, size_t *len, uint64_t *prefix)
{
	if (s->fixed)
	{
		const char *rec = fixed_sorted(s) + i * s->rec_size;

		*len = s->rec_size;
		*prefix = xxl_key_prefix((const unsigned char *) rec, s->key_size);
		return rec;
	}
	else
	{
		const xxl_sort_entry *e = &var_entries(s)[i];
		const char *rec = s->region + (size_t) e->ref * 8;
		uint32_t	hdr[2];

		memcpy(hdr, rec, sizeof(hdr));
		*len = VAR_HEADER + (size_t) hdr[0] + hdr[1];
		*prefix = xxl_key_prefix((const unsigned char *) rec + VAR_HEADER, hdr[0]);
		return rec;
	}
}

/*
 * Post the writes of a sorted fixed-record load straight from the sorted
 * half; they complete while the caller fills the other half.
 */
static xxl_status
write_fixed_run(xxl_sorter *s, xxl_run *run)
{
	size_t		bytes = s->nloaded * s->rec_size;
	size_t		nblocks = (bytes + s->block_size - 1) / s->block_size;
	const unsigned char *data = (unsigned char *) fixed_sorted(s);

	if (xxl_run_reserve(run, nblocks, &s->budget, &s->err) != XXL_OK)
		return s->err.code;
	for (size_t b = 0; b < nblocks; b++)
	{
		size_t		start = b * s->block_size;
		size_t		len = bytes - start < s->block_size ? bytes - start : s->block_size;
		const unsigned char *first = data + (start / s->rec_size) * s->rec_size;
		xxl_io_request *req = &s->run_writes[s->nrun_writes];
		xxl_bid		bid;

		if (xxl_block_alloc(s->disks, &bid, &s->err) != XXL_OK ||
			xxl_run_append_block(run, bid, xxl_key_prefix(first, s->key_size), &s->budget,
								 &s->err) != XXL_OK)
			return s->err.code;
		req->bid = bid;
		req->buf = (void *) (data + start);
		req->len = XXL_ROUND_UP(len, XXL_ALIGN);
		req->is_write = true;
		xxl_io_post(s->disks, req);
		s->nrun_writes++;
	}
	run->nbytes = bytes;
	run->nrecords = s->nloaded;
	s->stats.runs++;
	s->nloaded = 0;
	return XXL_OK;
}

/* Sort the load and write it as a new run. */
static xxl_status
flush_run(xxl_sorter *s)
{
	xxl_run    *run = NULL;
	xxl_bwriter *w;
	xxl_status	rc = XXL_OK;

	if (s->nloaded == 0)
		return XXL_OK;
	if (poll_cancel(s) || ensure_disks(s) != XXL_OK || wait_run_writes(s) != XXL_OK)
		return s->err.code;
	sort_load(s);
	if (add_run(s, &run) != XXL_OK)
		return s->err.code;
	if (s->fixed)
		return write_fixed_run(s, run);
	w = xxl_bwriter_create(s->disks, &s->budget, WRITE_BUFFERS, run, &s->err);
	if (w == NULL)
		return s->err.code;
	for (size_t i = 0; i < s->nloaded && rc == XXL_OK; i++)
	{
		size_t		len;
		uint64_t	prefix;
		const char *rec = loaded_record(s, i, &len, &prefix);

		xxl_bwriter_begin_record(w, prefix);
		rc = xxl_bwriter_write(w, rec, len);
		if ((i & (POLL_EVERY - 1)) == POLL_EVERY - 1 && poll_cancel(s))
			rc = XXL_ECANCELED;
	}
	if (rc == XXL_OK)
		rc = xxl_bwriter_finish(w);
	if (rc != XXL_OK && rc != XXL_ECANCELED)
		xxl_error_set(&s->err, rc, xxl_bwriter_error(w)->sys_errno, "%s",
					  xxl_bwriter_error(w)->message);
	xxl_bwriter_destroy(w);
	run->nrecords = s->nloaded;
	s->stats.runs++;
	s->nloaded = 0;
	s->arena_used = 0;
	return rc;
}

static bool
check_input_phase(xxl_sorter *s)
{
	if (s->phase == PHASE_INPUT)
		return true;
	if (s->phase != PHASE_FAILED)
		xxl_error_set(&s->err, XXL_EINVAL, 0, "records can only be added before sorting");
	return false;
}

static xxl_status
count_put(xxl_sorter *s, size_t bytes)
{
	s->nloaded++;
	s->stats.records++;
	s->stats.bytes += bytes;
	if (++s->puts_since_poll == POLL_EVERY)
	{
		s->puts_since_poll = 0;
		if (poll_cancel(s))
			return fail(s);
	}
	return XXL_OK;
}

xxl_status
xxl_sorter_put(xxl_sorter *s, const void *rec)
{
	if (!check_input_phase(s) || !s->fixed)
		return s->fixed ? s->err.code : xxl_error_set(&s->err, XXL_EINVAL, 0,
													  "xxl_sorter_put needs fixed-size records");
	if (s->nloaded == s->fixed_capacity && flush_run(s) != XXL_OK)
		return fail(s);
	if (s->rec_size == 16)
		memcpy(s->region + s->nloaded * 16, rec, 16);
	else
		memcpy(s->region + s->nloaded * s->rec_size, rec, s->rec_size);
	return count_put(s, s->rec_size);
}

xxl_status
xxl_sorter_put_var(xxl_sorter *s, const void *key, uint32_t key_len,
				   const void *payload, uint32_t payload_len)
{
	size_t		len = VAR_HEADER + (size_t) key_len + payload_len;
	size_t		need = XXL_ROUND_UP(len, 8);
	uint32_t	hdr[2] = {key_len, payload_len};
	char	   *dst;
	xxl_sort_entry *e;

	if (!check_input_phase(s) || s->fixed)
		return !s->fixed ? s->err.code : xxl_error_set(&s->err, XXL_EINVAL, 0,
													   "xxl_sorter_put_var needs variable-length records");
	/* each record also needs an entry and the entry's radix scratch */
	if (s->arena_used + need + (s->nloaded + 1) * 2 * sizeof(xxl_sort_entry) > s->region_size)
	{
		if (s->nloaded == 0)
		{
			xxl_error_set(&s->err, XXL_ENOMEM, 0,
						  "a record of %zu bytes does not fit the sort memory budget of %zu bytes",
						  len, s->cfg.memory);
			return fail(s);
		}
		if (flush_run(s) != XXL_OK)
			return fail(s);
	}
	if ((s->arena_used >> 3) > UINT32_MAX)
	{
		xxl_error_set(&s->err, XXL_EINVAL, 0, "load region larger than 32 GB is not supported");
		return fail(s);
	}
	dst = s->region + s->arena_used;
	memcpy(dst, hdr, VAR_HEADER);
	if (key_len)
		memcpy(dst + VAR_HEADER, key, key_len);
	if (payload_len)
		memcpy(dst + VAR_HEADER + key_len, payload, payload_len);
	e = var_entries(s) - 1;
	e->prefix = xxl_key_prefix(key, key_len);
	e->key_len = key_len;
	e->ref = (uint32_t) (s->arena_used >> 3);
	s->arena_used += need;
	if (len > s->max_record)
		s->max_record = len;
	return count_put(s, (size_t) key_len + payload_len);
}

/* Merging --------------------------------------------------------------- */

static size_t
run_block_length(const xxl_run *run, size_t block, size_t block_size)
{
	uint64_t	left = run->nbytes - (uint64_t) block * block_size;

	return left < block_size ? (size_t) left : block_size;
}

static void
post_block(merger *m, int f, int r, size_t block)
{
	merge_frame *fr = &m->frames[f];
	xxl_run    *run = m->src[r].run;

	fr->block = block;
	fr->req.bid = run->bids[block];
	fr->req.buf = fr->data;
	fr->req.len = XXL_ROUND_UP(run_block_length(run, block, m->s->block_size), XXL_ALIGN);
	fr->req.is_write = false;
	xxl_io_post(m->s->disks, &fr->req);
}

static int
pop_free(merger *m)
{
	int			f = m->free_head;

	if (f >= 0)
		m->free_head = m->frames[f].next;
	return f;
}

static void
push_free(merger *m, int f)
{
	m->frames[f].next = m->free_head;
	m->free_head = f;
}

/* Fill free frames with the next blocks of the prediction sequence. */
static void
prefetch(merger *m)
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

			if (c->next_unissued < c->run->nblocks &&
				(best < 0 || c->run->block_keys[c->next_unissued] < best_key))
			{
				best = r;
				best_key = c->run->block_keys[c->next_unissued];
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
release_current(merger *m, merge_source *src)
{
	if (src->cur_frame < 0)
		return;
	if (m->release_blocks)
		xxl_block_free(m->s->disks, src->run->bids[src->cur_block]);
	push_free(m, src->cur_frame);
	src->cur_frame = -1;
}

/* Move a source to its next block, waiting for it if needed. */
static xxl_status
next_block(merger *m, merge_source *src)
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
	src->cur_len = run_block_length(src->run, src->cur_block, m->s->block_size);
	src->pos = 0;
	prefetch(m);
	return xxl_io_wait(m->s->disks, &m->frames[f].req, &m->s->err);
}

/* Contiguous pointer to the source's next len bytes. */
static xxl_status
source_read(merger *m, merge_source *src, size_t len, const unsigned char **out)
{
	size_t		copied = 0;

	if (len == 0)
	{
		*out = (const unsigned char *) "";
		return XXL_OK;
	}
	if (len > src->remaining)
		return xxl_error_set(&m->s->err, XXL_EIO, 0, "run is shorter than its record headers say");
	if (src->pos == src->cur_len && next_block(m, src) != XXL_OK)
		return m->s->err.code;
	if (src->cur_len - src->pos >= len)
	{
		*out = (unsigned char *) m->frames[src->cur_frame].data + src->pos;
		src->pos += len;
		src->remaining -= len;
		return XXL_OK;
	}
	if (len > src->scratch_size)
	{
		size_t		size = XXL_ROUND_UP(len, 64);
		char	   *grown = xxl_budget_realloc(&m->s->budget, src->scratch, src->scratch_size,
											   size, &m->s->err);

		if (grown == NULL)
			return m->s->err.code;
		src->scratch = grown;
		src->scratch_size = size;
	}
	while (copied < len)
	{
		size_t		n;

		if (src->pos == src->cur_len && next_block(m, src) != XXL_OK)
			return m->s->err.code;
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
source_advance(merger *m, merge_source *src)
{
	xxl_sorter *s = m->s;

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
			return s->err.code;
		src->key_len = (uint32_t) s->key_size;
		src->payload = src->key;
		src->payload_len = (uint32_t) s->rec_size;
	}
	else
	{
		const unsigned char *p;
		uint32_t	hdr[2];

		if (source_read(m, src, VAR_HEADER, &p) != XXL_OK)
			return s->err.code;
		memcpy(hdr, p, VAR_HEADER);
		if (source_read(m, src, (size_t) hdr[0] + hdr[1], &p) != XXL_OK)
			return s->err.code;
		src->key = p;
		src->key_len = hdr[0];
		src->payload = p + hdr[0];
		src->payload_len = hdr[1];
	}
	src->prefix = xxl_key_prefix(src->key, src->key_len);
	return XXL_OK;
}

/*
 * Is source a's record before source b's?  Ties go to the earlier run.  A
 * finished source has prefix UINT64_MAX, so the prefix comparison decides
 * most cases before "done" needs a look.
 */
static inline bool
source_less(const merger *m, int a, int b)
{
	const merge_source *x = &m->src[a];
	const merge_source *y = &m->src[b];

	if (x->prefix != y->prefix)
		return x->prefix < y->prefix;
	if (x->done || y->done)
		return y->done && (!x->done || a < b);
	if (!m->prefix_decides)
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
tree_src(const merger *m, int node)
{
	return m->tree[node].rank % m->k;
}

static inline int
tree_rank(const merger *m, int src)
{
	return src + (m->prefix_decides && m->src[src].done ? m->k : 0);
}

static int
tree_build(merger *m, int node)
{
	int			l,
				r;

	if (node >= m->k)
		return node - m->k;
	l = tree_build(m, 2 * node);
	r = tree_build(m, 2 * node + 1);
	if (source_less(m, r, l))
	{
		m->tree[node].rank = tree_rank(m, l);
		m->tree[node].prefix = m->src[l].prefix;
		return r;
	}
	m->tree[node].rank = tree_rank(m, r);
	m->tree[node].prefix = m->src[r].prefix;
	return l;
}

/*
 * Replay the winner's path after its source advanced.  When the prefix
 * decides (fixed keys of at most 8 bytes), nodes compare as (prefix, rank)
 * pairs, rank being the source index, plus k once a source is done; the
 * loop is then branch-free, which matters because on random keys every
 * comparison is a coin toss for the branch predictor.
 */
static inline void
tree_replay(merger *m, int leaf)
{
	int			winner = leaf;
	uint64_t	wkey = m->src[leaf].prefix;
	struct tree_node *t = m->tree;

	if (m->prefix_decides)
	{
		int			wrank = leaf + (m->src[leaf].done ? m->k : 0);

		for (int node = (leaf + m->k) / 2; node >= 1; node /= 2)
		{
			uint64_t	nkey = t[node].prefix;
			int			nrank = t[node].rank;
			uint64_t	swap = (uint64_t) 0 - (uint64_t) ((nkey < wkey) | ((nkey == wkey) & (nrank < wrank)));
			uint64_t	dkey = (nkey ^ wkey) & swap;
			int			drank = (nrank ^ wrank) & (int) swap;

			/* swap: the node keeps the old winner, the node's entry wins */
			t[node].prefix = nkey ^ dkey;
			t[node].rank = nrank ^ drank;
			wkey ^= dkey;
			wrank ^= drank;
		}
		t[0].prefix = wkey;
		t[0].rank = wrank;
		return;
	}
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

/* Bytes a merge of k runs needs beyond its prefetch frames. */
static size_t
per_source_bytes(const xxl_sorter *s)
{
	return s->block_size + XXL_ROUND_UP(s->max_record, XXL_ALIGN) + sizeof(merge_source)
		+ sizeof(merge_frame) + sizeof(struct tree_node);
}

/* Largest number of runs one merge can take, leaving room for a writer. */
static int
max_fan_in(const xxl_sorter *s, bool with_writer)
{
	size_t		avail = xxl_budget_available(&s->budget);
	size_t		reserve = SLACK_BYTES + (size_t) (1 + (with_writer ? WRITE_BUFFERS : 0)) * s->block_size;

	if (avail <= reserve)
		return 0;
	return (int) ((avail - reserve) / per_source_bytes(s));
}

static void merger_destroy(merger *m);

static merger *
merger_create(xxl_sorter *s, xxl_run *runs, int k, bool release_blocks, bool with_writer)
{
	merger	   *m;
	size_t		avail;
	size_t		reserve;
	int			nframes;

	m = xxl_budget_alloc(&s->budget, sizeof(*m), &s->err);
	if (m == NULL)
		return NULL;
	memset(m, 0, sizeof(*m));
	m->s = s;
	m->k = k;
	m->release_blocks = release_blocks;
	m->prefix_decides = s->fixed && s->key_size <= 8;
	m->advance_pending = -1;
	m->free_head = -1;

	/* all memory not needed elsewhere becomes frames */
	avail = xxl_budget_available(&s->budget);
	reserve = SLACK_BYTES / 2 + (with_writer ? WRITE_BUFFERS * s->block_size : 0)
		+ (size_t) k * (XXL_ROUND_UP(s->max_record, XXL_ALIGN) + sizeof(merge_source)
						+ sizeof(struct tree_node));
	nframes = avail > reserve ? (int) ((avail - reserve) / (s->block_size + sizeof(merge_frame))) : 0;
	if (nframes < k + 1)
		nframes = k + 1;		/* max_fan_in() made sure this fits */

	m->src = xxl_budget_alloc(&s->budget, (size_t) k * sizeof(merge_source), &s->err);
	m->tree = m->src ? xxl_budget_alloc(&s->budget, (size_t) k * sizeof(struct tree_node), &s->err) : NULL;
	m->frames = m->tree ? xxl_budget_alloc(&s->budget, (size_t) nframes * sizeof(merge_frame), &s->err) : NULL;
	if (m->frames == NULL)
	{
		merger_destroy(m);
		return NULL;
	}
	m->frame_capacity = nframes;
	memset(m->frames, 0, (size_t) nframes * sizeof(merge_frame));
	for (int f = 0; f < nframes; f++)
	{
		m->frames[f].data = xxl_budget_alloc(&s->budget, s->block_size, &s->err);
		if (m->frames[f].data == NULL)
		{
			if (f < k + 1)
			{
				merger_destroy(m);
				return NULL;
			}
			xxl_error_clear(&s->err);	/* fewer prefetch frames will do */
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
	}
	/* every run's first block first, then prefetch in σ order */
	for (int r = 0; r < k; r++)
	{
		merge_source *src = &m->src[r];

		if (src->run->nblocks > 0)
		{
			int			f = pop_free(m);

			post_block(m, f, r, src->next_unissued++);
			m->frames[f].next = -1;
			src->pend_head = src->pend_tail = f;
		}
	}
	prefetch(m);
	for (int r = 0; r < k; r++)
	{
		if (source_advance(m, &m->src[r]) != XXL_OK)
		{
			merger_destroy(m);
			return NULL;
		}
	}
	m->tree[0].rank = k == 1 ? 0 : tree_build(m, 1);
	return m;
}

/* Next record of the merge: the winning source, or -1 at the end. */
static int
merger_next(merger *m, xxl_status *rc)
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

static void
merger_destroy(merger *m)
{
	xxl_sorter *s;

	if (m == NULL)
		return;
	s = m->s;
	if (m->frames)
	{
		xxl_error	ignored = {0};

		/* no buffer may be freed while its read is in flight */
		for (int f = 0; f < m->nframes; f++)
		{
			xxl_io_wait(s->disks, &m->frames[f].req, &ignored);
			xxl_budget_free(&s->budget, m->frames[f].data, s->block_size);
		}
		xxl_budget_free(&s->budget, m->frames, (size_t) m->frame_capacity * sizeof(merge_frame));
	}
	if (m->src)
	{
		for (int r = 0; r < m->k; r++)
			xxl_budget_free(&s->budget, m->src[r].scratch, m->src[r].scratch_size);
		xxl_budget_free(&s->budget, m->src, (size_t) m->k * sizeof(merge_source));
	}
	xxl_budget_free(&s->budget, m->tree, (size_t) m->k * sizeof(struct tree_node));
	xxl_budget_free(&s->budget, m, sizeof(*m));
}

/* Merge runs[first .. first+k) into one new run written to *out. */
static xxl_status
merge_group(xxl_sorter *s, xxl_run *group, int k, xxl_run *out)
{
	merger	   *m;
	xxl_bwriter *w;
	xxl_status	rc = XXL_OK;
	uint64_t	n = 0;
	size_t		nblocks = 0;

	for (int i = 0; i < k; i++)
		nblocks += group[i].nblocks;
	if (xxl_run_reserve(out, nblocks, &s->budget, &s->err) != XXL_OK)
		return s->err.code;
	m = merger_create(s, group, k, true, true);
	if (m == NULL)
		return s->err.code;
	w = xxl_bwriter_create(s->disks, &s->budget, WRITE_BUFFERS, out, &s->err);
	if (w == NULL)
	{
		merger_destroy(m);
		return s->err.code;
	}
	for (;;)
	{
		int			i = merger_next(m, &rc);
		merge_source *src;

		if (i < 0)
			break;
		src = &m->src[i];
		xxl_bwriter_begin_record(w, src->prefix);
		if (s->fixed)
			rc = xxl_bwriter_write(w, src->key, s->rec_size);
		else
		{
			uint32_t	hdr[2] = {src->key_len, src->payload_len};

			rc = xxl_bwriter_write(w, hdr, VAR_HEADER);
			if (rc == XXL_OK)
				rc = xxl_bwriter_write(w, src->key, (size_t) src->key_len + src->payload_len);
		}
		if (rc != XXL_OK)
			break;
		if ((++n & (POLL_EVERY - 1)) == 0 && poll_cancel(s))
		{
			rc = XXL_ECANCELED;
			break;
		}
	}
	if (rc == XXL_OK)
		rc = xxl_bwriter_finish(w);
	if (rc != XXL_OK && s->err.code == XXL_OK)
		xxl_error_set(&s->err, rc, xxl_bwriter_error(w)->sys_errno, "%s",
					  xxl_bwriter_error(w)->message);
	out->nrecords = n;
	xxl_bwriter_destroy(w);
	merger_destroy(m);
	return rc;
}

/*
 * Intermediate passes: merge groups of consecutive runs (consecutive, so
 * equal keys keep their input order) until one final merge can take them all.
 */
static xxl_status
reduce_runs(xxl_sorter *s)
{
	for (;;)
	{
		int			final_fan_in = max_fan_in(s, false);
		int			fan_in = max_fan_in(s, true);
		size_t		excess;
		size_t		in = 0,
					out = 0;

		if (final_fan_in >= 2 && s->nruns <= (size_t) final_fan_in)
			return XXL_OK;
		if (fan_in < 2)
			return xxl_error_set(&s->err, XXL_ENOMEM, 0,
								 "memory budget of %zu bytes is too small to merge %zu-byte records",
								 s->cfg.memory, s->max_record);
		excess = s->nruns - (size_t) (final_fan_in >= 2 ? final_fan_in : 1);
		/* merge just enough groups this pass; later runs stay as they are */
		while (in < s->nruns)
		{
			size_t		g = s->nruns - in;
			xxl_run		merged;

			if (excess == 0 || g == 1)
			{
				s->runs[out++] = s->runs[in++];
				continue;
			}
			if (g > (size_t) fan_in)
				g = (size_t) fan_in;
			if (g - 1 > excess)
				g = excess + 1;
			xxl_run_init(&merged);
			if (merge_group(s, &s->runs[in], (int) g, &merged) != XXL_OK)
			{
				xxl_run_release(&merged, s->disks, &s->budget);
				return s->err.code;
			}
			if ((int) g > s->stats.fan_in)
				s->stats.fan_in = (int) g;
			for (size_t j = in; j < in + g; j++)
			{
				/* their blocks were recycled during the merge */
				s->runs[j].nblocks = 0;
				xxl_run_release(&s->runs[j], s->disks, &s->budget);
			}
			s->runs[out++] = merged;
			in += g;
			excess -= g - 1;
		}
		s->nruns = out;
		s->stats.merge_passes++;
	}
}

xxl_status
xxl_sorter_sort(xxl_sorter *s)
{
	if (!check_input_phase(s))
		return s->err.code;
	if (s->nruns == 0)
	{
		/* everything fits: sort in memory, never touch a disk */
		sort_load(s);
		s->stats.run_formation_ns = xxl_now_ns() - s->t_start;
		s->t_merge_start = xxl_now_ns();
		s->out_index = 0;
		s->phase = PHASE_MEMORY_OUTPUT;
		return XXL_OK;
	}
	if (flush_run(s) != XXL_OK || wait_run_writes(s) != XXL_OK)
		return fail(s);
	xxl_budget_free(&s->budget, s->region, s->region_size);
	s->region = NULL;
	s->stats.run_formation_ns = xxl_now_ns() - s->t_start;
	s->t_merge_start = xxl_now_ns();
	if (reduce_runs(s) != XXL_OK)
		return fail(s);
	s->final = merger_create(s, s->runs, (int) s->nruns, false, false);
	if (s->final == NULL)
		return fail(s);
	if ((int) s->nruns > s->stats.fan_in)
		s->stats.fan_in = (int) s->nruns;
	s->stats.merge_passes++;
	s->phase = PHASE_MERGE_OUTPUT;
	return XXL_OK;
}

/* Output ---------------------------------------------------------------- */

static int
next_record(xxl_sorter *s, const unsigned char **key, uint32_t *key_len,
			const unsigned char **payload, uint32_t *payload_len)
{
	if (s->phase == PHASE_MEMORY_OUTPUT)
	{
		if (s->out_index == s->nloaded)
		{
			s->phase = PHASE_DONE;
			s->stats.merge_ns = xxl_now_ns() - s->t_merge_start;
			return 0;
		}
		if (s->fixed)
		{
			*key = (unsigned char *) fixed_sorted(s) + s->out_index * s->rec_size;
			*key_len = (uint32_t) s->key_size;
			*payload = *key;
			*payload_len = (uint32_t) s->rec_size;
		}
		else
		{
			const xxl_sort_entry *e = &var_entries(s)[s->out_index];
			const unsigned char *rec = (unsigned char *) s->region + (size_t) e->ref * 8;
			uint32_t	hdr[2];

			memcpy(hdr, rec, VAR_HEADER);
			*key = rec + VAR_HEADER;
			*key_len = hdr[0];
			*payload = rec + VAR_HEADER + hdr[0];
			*payload_len = hdr[1];
		}
		s->out_index++;
		if ((s->out_index & (POLL_EVERY - 1)) == 0 && poll_cancel(s))
			return -fail(s);
		return 1;
	}
	if (s->phase == PHASE_MERGE_OUTPUT)
	{
		xxl_status	rc;
		int			i = merger_next(s->final, &rc);
		merge_source *src;

		if (rc != XXL_OK)
			return -fail(s);
		if (i < 0)
		{
			s->phase = PHASE_DONE;
			s->stats.merge_ns = xxl_now_ns() - s->t_merge_start;
			return 0;
		}
		src = &s->final->src[i];
		*key = src->key;
		*key_len = src->key_len;
		*payload = src->payload;
		*payload_len = src->payload_len;
		if ((++s->out_index & (POLL_EVERY - 1)) == 0 && poll_cancel(s))
			return -fail(s);
		return 1;
	}
	if (s->phase == PHASE_DONE)
		return 0;
	if (s->phase == PHASE_INPUT)
		xxl_error_set(&s->err, XXL_EINVAL, 0, "xxl_sorter_sort must be called before reading");
	return -(int) fail(s);
}

int
xxl_sorter_next(xxl_sorter *s, const void **rec)
{
	const unsigned char *key,
			   *payload;
	uint32_t	key_len,
				payload_len;
	int			rc;

	if (!s->fixed)
	{
		xxl_error_set(&s->err, XXL_EINVAL, 0, "xxl_sorter_next needs fixed-size records");
		return -fail(s);
	}
	rc = next_record(s, &key, &key_len, &payload, &payload_len);
	if (rc == 1)
		*rec = key;
	return rc;
}

int
xxl_sorter_next_var(xxl_sorter *s, const void **key, uint32_t *key_len,
					const void **payload, uint32_t *payload_len)
{
	const unsigned char *k,
			   *p;
	int			rc;

	if (s->fixed)
	{
		xxl_error_set(&s->err, XXL_EINVAL, 0, "xxl_sorter_next_var needs variable-length records");
		return -fail(s);
	}
	rc = next_record(s, &k, key_len, &p, payload_len);
	if (rc == 1)
	{
		*key = k;
		*payload = p;
	}
	return rc;
}

const xxl_error *
xxl_sorter_error(const xxl_sorter *s)
{
	return &s->err;
}

void
xxl_sorter_stats(const xxl_sorter *s, xxl_sort_stats *stats)
{
	*stats = s->stats;
	stats->memory_peak = s->budget.peak;
	stats->memory_limit = s->cfg.memory;
	if (s->phase == PHASE_MERGE_OUTPUT || s->phase == PHASE_MEMORY_OUTPUT)
		stats->merge_ns = xxl_now_ns() - s->t_merge_start;
	if (s->disks)
		xxl_disks_stats(s->disks, &stats->io);
	else
		memset(&stats->io, 0, sizeof(stats->io));
}

void
xxl_sorter_destroy(xxl_sorter *s)
{
	xxl_budget	budget;

	if (s == NULL)
		return;
	merger_destroy(s->final);
	if (s->disks)
	{
		xxl_error	ignored = {0};

		for (size_t i = 0; i < s->nrun_writes; i++)
			xxl_io_wait(s->disks, &s->run_writes[i], &ignored);
	}
	xxl_budget_free(&s->budget, s->run_writes, s->run_writes_capacity * sizeof(xxl_io_request));
	for (size_t i = 0; i < s->nruns; i++)
		xxl_run_release(&s->runs[i], s->disks, &s->budget);
	xxl_budget_free(&s->budget, s->runs, s->runs_capacity * sizeof(xxl_run));
	xxl_budget_free(&s->budget, s->region, s->region_size);
	xxl_disks_close(s->disks);	/* joins the I/O threads, removes the files */
	budget = s->budget;
	xxl_budget_free(&budget, s, sizeof(*s));
}
