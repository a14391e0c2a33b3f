/*
 * pq.c — the external priority queue (see pq.h): an insertion heap in
 * memory, sorted runs on disk read through prefetching readers, a heap over
 * the run heads, and tiered merging of runs when the readers would not fit
 * the budget.
 *
 * Memory: an eighth of the budget (at least 32 KB) is slack for structs;
 * half of the rest holds run readers (two block buffers and the run's block
 * list each: 16 bytes per block up to XXL_RUN_MEMORY_BLOCKS, a page of its
 * own log beyond) plus one writer for merges; the other half is the
 * insertion heap and, of the same size, the scratch its contents are radix
 * sorted into when it is written out.  Each reader is charged what its own
 * run's list takes, not the longest list's bound: the runs the heap writes
 * list a few dozen blocks, so about twice as many of them fit before a
 * merge, and a record takes part in fewer merges.
 */
#include "core/pq.h"
#include "core/radix.h"
#include "core/xxl_stream.h"

#include <omp.h>
#include <string.h>

#define POLL_EVERY 65536
#define STREAM_BUFFERS 2		/* a run's reader or writer, where I/O can overlap */
#define SLACK_MIN (32 * 1024)
#define MIN_RUNS 4
#define RUN_OVERHEAD 512		/* reader and run structs, head record, heap slot */

typedef struct pq_run
{
	xxl_run		run;
	xxl_breader *r;
	size_t		mem;			/* what its reader is charged in the run area */
	uint64_t	left;			/* records not yet taken, the head included */
	unsigned char head[];		/* the run's smallest remaining record */
} pq_run;

struct xxl_pq
{
	xxl_pq_config cfg;
	xxl_part	part;			/* error, budget, cancel hook */
	size_t		rec;
	size_t		key;
	size_t		block;
	int			threads;
	xxl_disks  *disks;			/* opened at the first spill */

	unsigned char *heap;		/* insertion heap: heap_n records of rec bytes */
	size_t		heap_n;
	size_t		heap_cap;
	size_t		heap_bytes;		/* allocated for heap and for scratch each */
	unsigned char *scratch;
	unsigned char *tmp;			/* two records: sift hole and a push copy */

	pq_run	  **runs;			/* a binary heap by head */
	int			nruns;
	int			max_runs;		/* slots: as many of the cheapest readers as fit */
	size_t		run_area;		/* readers' memory, less one writer's */
	int			bufs;			/* buffers of each reader and writer */
	size_t		runs_mem;		/* what the open readers are charged */
	pq_run	  **sel;			/* merge work array */

	uint64_t	size;
	uint64_t	ops_since_poll;
	xxl_pq_stats stats;
};

/*
 * Buffers of a run's reader or writer.  Requests for blocks below
 * XXL_INLINE_IO_MAX to buffered files are copies the caller makes when it
 * posts them (xxl_io.h): a second buffer would read ahead, not overlap,
 * and a reader a block cheaper lets the queue keep more runs open, so a
 * record takes part in fewer merges.
 */
static int
stream_buffers(const xxl_disk_config *disk)
{
	size_t		inline_below = disk->inline_below ? disk->inline_below : XXL_INLINE_IO_MAX;

	return !disk->try_direct && disk->block_size < inline_below ? 1 : STREAM_BUFFERS;
}

/* A run being read: its buffers, structs and block list. */
static size_t
reader_bytes(size_t block, int bufs, size_t rec)
{
	return (size_t) bufs * block + RUN_OVERHEAD + rec + xxl_run_read_bound();
}

/*
 * The same for a run of nblocks blocks: a list short enough to stay in
 * memory is two arrays reserved at its exact length (run_new).
 */
static size_t
run_reader_bytes(const xxl_pq *pq, uint64_t records)
{
	uint64_t	nblocks = (records * pq->rec + pq->block - 1) / pq->block;
	size_t		list = nblocks > XXL_RUN_MEMORY_BLOCKS ? xxl_run_read_bound() :
		2 * xxl_budget_charge((size_t) nblocks * sizeof(uint64_t));

	return (size_t) pq->bufs * pq->block + RUN_OVERHEAD + pq->rec + list;
}

/* The merge's writer: its buffers and the list of the run it writes. */
static size_t
writer_bytes(size_t block, int bufs)
{
	return (size_t) bufs * block + RUN_OVERHEAD + xxl_run_table_bound(UINT64_MAX);
}

size_t
xxl_pq_min_memory(size_t block_size)
{
	size_t		runs = MIN_RUNS * reader_bytes(block_size, STREAM_BUFFERS, XXL_RADIX_MAX_FIXED) +
		writer_bytes(block_size, STREAM_BUFFERS);

	/* runs take half of what the slack leaves: heap + scratch the other half */
	return XXL_ROUND_UP((2 * runs + 2 * XXL_ALIGN) * 8 / 7 + SLACK_MIN, XXL_ALIGN);
}

/* Keys compare as big-endian words, then bytes. */
static inline int
keycmp(size_t key, const unsigned char *a, const unsigned char *b)
{
	size_t		i = 0;

	for (; i + 8 <= key; i += 8)
	{
		uint64_t	x,
					y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
	}
	return i < key ? memcmp(a + i, b + i, key - i) : 0;
}

static xxl_status
count_op(xxl_pq *pq)
{
	if (++pq->ops_since_poll == POLL_EVERY)
	{
		pq->ops_since_poll = 0;
		if (xxl_part_canceled(&pq->part))
			return xxl_part_fail(&pq->part);
	}
	return XXL_OK;
}

/* Creation ------------------------------------------------------------- */

xxl_pq *
xxl_pq_create(const xxl_pq_config *config, xxl_error *err)
{
	xxl_budget	budget;
	xxl_pq	   *pq;
	size_t		block = config->disk.block_size;
	size_t		slack,
				avail,
				run_area;

	if (config->record_size == 0 || config->record_size > XXL_RADIX_MAX_FIXED ||
		config->key_size > config->record_size)
	{
		xxl_error_set(err, XXL_EINVAL, 0,
					  "priority queue records must be 1..%d bytes with a key no longer than the record (got %zu/%zu)",
					  XXL_RADIX_MAX_FIXED, config->record_size, config->key_size);
		return NULL;
	}
	if (block < XXL_ALIGN || block % XXL_ALIGN != 0)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "block size %zu is not a positive multiple of %d",
					  block, XXL_ALIGN);
		return NULL;
	}
	if (config->memory < xxl_pq_min_memory(block))
	{
		xxl_error_set(err, XXL_EINVAL, 0,
					  "memory budget of %zu bytes is below the priority queue's minimum of %zu for %zu-byte blocks",
					  config->memory, xxl_pq_min_memory(block), block);
		return NULL;
	}
	xxl_budget_init(&budget, config->memory);
	pq = xxl_budget_alloc(&budget, sizeof(*pq), err);
	if (pq == NULL)
		return NULL;
	memset(pq, 0, sizeof(*pq));
	xxl_part_init(&pq->part, "priority queue", 0, config->cancel, config->cancel_arg);
	pq->part.budget = budget;
	pq->cfg = *config;
	pq->rec = config->record_size;
	pq->key = config->key_size;
	pq->block = block;
	pq->threads = config->threads > 0 ? config->threads : omp_get_max_threads();

	slack = config->memory / 8 > SLACK_MIN ? config->memory / 8 : SLACK_MIN;
	avail = config->memory - slack;
	run_area = avail / 2;
	pq->bufs = stream_buffers(&config->disk);
	pq->run_area = run_area > writer_bytes(block, pq->bufs) ? run_area - writer_bytes(block, pq->bufs) : 0;
	pq->heap_bytes = (avail - run_area) / 2;
	pq->heap_bytes -= pq->heap_bytes % XXL_ALIGN;
	pq->heap_cap = pq->heap_bytes / pq->rec;
	pq->max_runs = (int) (pq->run_area / run_reader_bytes(pq, 1));
	if (pq->run_area / reader_bytes(block, pq->bufs, pq->rec) < MIN_RUNS || pq->heap_cap < 2)
	{
		xxl_error_set(err, XXL_EINVAL, 0, "memory budget of %zu bytes is too small for a priority queue",
					  config->memory);
		xxl_part_free(&pq->part, pq, sizeof(*pq));
		return NULL;
	}
	pq->heap = xxl_budget_alloc(&pq->part.budget, pq->heap_bytes, err);
	pq->scratch = pq->heap ? xxl_budget_alloc(&pq->part.budget, pq->heap_bytes, err) : NULL;
	pq->tmp = pq->scratch ? xxl_budget_alloc(&pq->part.budget, 2 * pq->rec, err) : NULL;
	pq->runs = pq->tmp ? xxl_budget_alloc(&pq->part.budget, (size_t) (pq->max_runs + 1) * sizeof(pq_run *), err) : NULL;
	pq->sel = pq->runs ? xxl_budget_alloc(&pq->part.budget, (size_t) (pq->max_runs + 1) * sizeof(pq_run *), err) : NULL;
	if (pq->sel == NULL)
	{
		xxl_pq_destroy(pq);
		return NULL;
	}
	pq->stats.max_runs = (int) (pq->run_area / reader_bytes(block, pq->bufs, pq->rec));
	pq->stats.heap_capacity = pq->heap_cap;
	pq->stats.memory_limit = config->memory;
	return pq;
}

/* The insertion heap ---------------------------------------------------- */

#define HREC(pq, i) ((pq)->heap + (i) * (pq)->rec)

static void
heap_insert(xxl_pq *pq, const unsigned char *rec)
{
	size_t		i = pq->heap_n++;

	while (i > 0)
	{
		size_t		p = (i - 1) / 2;

		if (keycmp(pq->key, HREC(pq, p), rec) <= 0)
			break;
		memcpy(HREC(pq, i), HREC(pq, p), pq->rec);
		i = p;
	}
	memcpy(HREC(pq, i), rec, pq->rec);
}

static void
heap_remove_top(xxl_pq *pq)
{
	size_t		n = --pq->heap_n;
	size_t		i = 0;
	unsigned char *last = pq->tmp;

	if (n == 0)
		return;
	memcpy(last, HREC(pq, n), pq->rec);
	for (;;)
	{
		size_t		c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && keycmp(pq->key, HREC(pq, c + 1), HREC(pq, c)) < 0)
			c++;
		if (keycmp(pq->key, HREC(pq, c), last) >= 0)
			break;
		memcpy(HREC(pq, i), HREC(pq, c), pq->rec);
		i = c;
	}
	memcpy(HREC(pq, i), last, pq->rec);
}

/* Runs ------------------------------------------------------------------ */

static void
run_sift_down(xxl_pq *pq, pq_run **h, int n, int i)
{
	pq_run	   *x = h[i];

	for (;;)
	{
		int			c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && keycmp(pq->key, h[c + 1]->head, h[c]->head) < 0)
			c++;
		if (keycmp(pq->key, h[c]->head, x->head) >= 0)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static void
run_heapify(xxl_pq *pq, pq_run **h, int n)
{
	for (int i = n / 2 - 1; i >= 0; i--)
		run_sift_down(pq, h, n, i);
}

static void
run_free(xxl_pq *pq, pq_run *run)
{
	size_t		freed;

	if (run == NULL)
		return;
	pq->runs_mem -= run->mem;
	freed = run->r ? xxl_breader_freed(run->r) : 0;
	xxl_breader_destroy(run->r);
	if (pq->disks)
		xxl_run_release_from(&run->run, freed, pq->disks, &pq->part.budget);
	xxl_part_free(&pq->part, run, sizeof(pq_run) + pq->rec);
}

/*
 * Take the next record of a run into its head; returns false when the run
 * is exhausted.  Blocks handed out completely go back to the block manager.
 */
static bool
run_advance(xxl_pq *pq, pq_run *run, xxl_status *rc)
{
	const void *p;

	*rc = XXL_OK;
	if (--run->left == 0)
		return false;
	if (xxl_breader_next(run->r, pq->rec, &p) != XXL_OK)
	{
		const xxl_error *e = xxl_breader_error(run->r);

		*rc = xxl_error_set(&pq->part.err, e->code, e->sys_errno, "%s", e->message);
		return false;
	}
	memcpy(run->head, p, pq->rec);
	return true;
}

/* A finished run becomes readable: open its reader and load its head. */
static pq_run *
run_open(xxl_pq *pq, pq_run *run)
{
	const void *p;

	run->left = run->run.nrecords;
	run->mem = run_reader_bytes(pq, run->run.nrecords);
	pq->runs_mem += run->mem;
	run->r = xxl_breader_create(pq->disks, &pq->part.budget, pq->bufs, &run->run, &pq->part.err);
	if (run->r == NULL)
		return NULL;
	/* blocks the reader has moved past go back to the block manager */
	xxl_breader_consume(run->r);
	if (xxl_breader_next(run->r, pq->rec, &p) != XXL_OK)
	{
		const xxl_error *e = xxl_breader_error(run->r);

		xxl_error_set(&pq->part.err, e->code, e->sys_errno, "%s", e->message);
		return NULL;
	}
	memcpy(run->head, p, pq->rec);
	return run;
}

static pq_run *
run_new(xxl_pq *pq, uint64_t records)
{
	pq_run	   *run = xxl_part_alloc(&pq->part, sizeof(pq_run) + pq->rec);
	uint64_t	bytes = records * pq->rec;
	uint64_t	nblocks = (bytes + pq->block - 1) / pq->block;

	if (run == NULL)
		return NULL;
	memset(run, 0, sizeof(pq_run));
	xxl_run_init(&run->run);
	/* a longer list moves to a log of its own as it is written (xxl_stream.h) */
	if (nblocks > XXL_RUN_MEMORY_BLOCKS)
		nblocks = XXL_RUN_MEMORY_BLOCKS;
	if (xxl_run_reserve(&run->run, (size_t) nblocks, &pq->part.budget, &pq->part.err) != XXL_OK)
	{
		xxl_part_free(&pq->part, run, sizeof(pq_run) + pq->rec);
		return NULL;
	}
	return run;
}

static xxl_status
writer_error(xxl_pq *pq, xxl_bwriter *w)
{
	const xxl_error *e = xxl_bwriter_error(w);

	return xxl_error_set(&pq->part.err, e->code ? e->code : XXL_EIO, e->sys_errno, "%s", e->message);
}

/*
 * Merge the runs with the fewest records left into one: the two smallest,
 * and each next one while the merged run would be at least as large as it
 * (a quarter of it when the budget holds fewer than eight runs).  Run
 * sizes stay about geometric, with a ratio near the number of runs merged
 * at once, so a record takes part in a few merges however many runs the
 * heap writes.  (Merging a fixed half of the runs, as this queue once did,
 * merges a record a number of times that grows linearly with the runs
 * written when few runs fit; taking the next run while the merged one is
 * only half of it, as it did next, merged a large run again with each
 * batch of small ones: 4.1 merges a record where this takes fewer.)
 */
static int
runs_to_merge(const xxl_pq *pq)
{
	pq_run	  **r = pq->sel;
	int			n = pq->nruns;
	int			div = n < 8 ? 4 : 1;
	uint64_t	total = r[0]->left + r[1]->left;
	int			k = 2;

	while (k < n && total >= r[k]->left / div)
		total += r[k++]->left;
	return k;
}

static xxl_status
merge_runs(xxl_pq *pq)
{
	int			n = pq->nruns;
	int			k;
	int			live;
	uint64_t	total = 0;
	pq_run	   *out;
	xxl_bwriter *w;
	xxl_status	rc = XXL_OK;
	uint64_t	written = 0;

	/* order the runs by records left (insertion sort: there are few) */
	memcpy(pq->sel, pq->runs, (size_t) n * sizeof(pq_run *));
	for (int i = 1; i < n; i++)
	{
		pq_run	   *x = pq->sel[i];
		int			j = i - 1;

		while (j >= 0 && pq->sel[j]->left > x->left)
		{
			pq->sel[j + 1] = pq->sel[j];
			j--;
		}
		pq->sel[j + 1] = x;
	}
	k = runs_to_merge(pq);
	for (int i = 0; i < k; i++)
		total += pq->sel[i]->left;
	out = run_new(pq, total);
	if (out == NULL)
		return pq->part.err.code;
	w = xxl_bwriter_create(pq->disks, &pq->part.budget, pq->bufs, &out->run, &pq->part.err);
	if (w == NULL)
	{
		run_free(pq, out);
		return pq->part.err.code;
	}
	run_heapify(pq, pq->sel, k);
	live = k;
	while (live > 0)
	{
		pq_run	   *r = pq->sel[0];

		if (xxl_bwriter_write(w, r->head, pq->rec) != XXL_OK)
		{
			rc = writer_error(pq, w);
			break;
		}
		written++;
		if (run_advance(pq, r, &rc))
			run_sift_down(pq, pq->sel, live, 0);
		else if (rc != XXL_OK)
			break;
		else
		{
			/* exhausted: it stays at sel[live-1] to be freed below */
			pq->sel[0] = pq->sel[live - 1];
			pq->sel[live - 1] = r;
			live--;
			if (live > 0)
				run_sift_down(pq, pq->sel, live, 0);
		}
		if ((written & (POLL_EVERY - 1)) == 0 && xxl_part_canceled(&pq->part))
		{
			rc = XXL_ECANCELED;
			break;
		}
	}
	if (rc == XXL_OK && xxl_bwriter_finish(w) != XXL_OK)
		rc = writer_error(pq, w);
	xxl_bwriter_destroy(w);
	if (rc != XXL_OK)
	{
		run_free(pq, out);
		return rc;
	}
	out->run.nrecords = total;
	/* the merged runs are gone: the others and the new one form the heap */
	for (int i = 0; i < k; i++)
		run_free(pq, pq->sel[i]);
	memcpy(pq->runs, pq->sel + k, (size_t) (n - k) * sizeof(pq_run *));
	pq->nruns = n - k;
	if (run_open(pq, out) == NULL)
	{
		run_free(pq, out);
		run_heapify(pq, pq->runs, pq->nruns);
		return pq->part.err.code;
	}
	pq->runs[pq->nruns++] = out;
	run_heapify(pq, pq->runs, pq->nruns);
	pq->stats.merges++;
	pq->stats.merged_records += total;
	return XXL_OK;
}

/* Write the insertion heap as a sorted run. */
static xxl_status
flush_heap(xxl_pq *pq)
{
	pq_run	   *run;
	xxl_bwriter *w;
	int			i;

	if (xxl_part_canceled(&pq->part))
		return pq->part.err.code;
	if (pq->disks == NULL)
	{
		pq->disks = xxl_disks_open(&pq->cfg.disk, &pq->part.err);
		if (pq->disks == NULL)
			return pq->part.err.code;
	}
	/* merge until the new run's reader fits beside the others */
	while (pq->nruns >= 2 &&
		   (pq->nruns >= pq->max_runs ||
			pq->runs_mem + run_reader_bytes(pq, pq->heap_n) > pq->run_area))
		if (merge_runs(pq) != XXL_OK)
			return pq->part.err.code;
	xxl_radix_sort_fixed((char *) pq->heap, (char *) pq->scratch, pq->heap_n, pq->rec, pq->key,
						 pq->threads, true);
	run = run_new(pq, pq->heap_n);
	if (run == NULL)
		return pq->part.err.code;
	w = xxl_bwriter_create(pq->disks, &pq->part.budget, pq->bufs, &run->run, &pq->part.err);
	if (w == NULL)
	{
		run_free(pq, run);
		return pq->part.err.code;
	}
	if (xxl_bwriter_write(w, pq->scratch, pq->heap_n * pq->rec) != XXL_OK ||
		xxl_bwriter_finish(w) != XXL_OK)
	{
		writer_error(pq, w);
		xxl_bwriter_destroy(w);
		run_free(pq, run);
		return pq->part.err.code;
	}
	xxl_bwriter_destroy(w);
	run->run.nrecords = pq->heap_n;
	pq->heap_n = 0;
	if (run_open(pq, run) == NULL)
	{
		run_free(pq, run);
		return pq->part.err.code;
	}
	/* sift up */
	i = pq->nruns++;
	while (i > 0)
	{
		int			p = (i - 1) / 2;

		if (keycmp(pq->key, pq->runs[p]->head, run->head) <= 0)
			break;
		pq->runs[i] = pq->runs[p];
		i = p;
	}
	pq->runs[i] = run;
	pq->stats.runs++;
	if (pq->nruns > pq->stats.open_peak)
		pq->stats.open_peak = pq->nruns;
	return XXL_OK;
}

/* The API --------------------------------------------------------------- */

xxl_status
xxl_pq_push(xxl_pq *pq, const void *rec)
{
	if (pq->part.failed)
		return pq->part.err.code;
	if (pq->heap_n == pq->heap_cap && flush_heap(pq) != XXL_OK)
		return xxl_part_fail(&pq->part);
	/* copy first: rec may point at the queue's own top */
	memcpy(pq->tmp + pq->rec, rec, pq->rec);
	heap_insert(pq, pq->tmp + pq->rec);
	pq->size++;
	pq->stats.pushes++;
	if (pq->size > pq->stats.size_peak)
		pq->stats.size_peak = pq->size;
	return count_op(pq);
}

/* Where the smallest record is: 0 heap, 1 runs, -1 empty. */
static inline int
smallest(const xxl_pq *pq)
{
	if (pq->heap_n == 0)
		return pq->nruns > 0 ? 1 : -1;
	if (pq->nruns == 0)
		return 0;
	return keycmp(pq->key, pq->runs[0]->head, pq->heap) < 0 ? 1 : 0;
}

int
xxl_pq_top(xxl_pq *pq, const void **rec)
{
	int			where;

	if (pq->part.failed)
		return -1;
	where = smallest(pq);
	if (where < 0)
		return 0;
	*rec = where == 0 ? pq->heap : pq->runs[0]->head;
	return 1;
}

int
xxl_pq_pop(xxl_pq *pq, void *out)
{
	int			where;

	if (pq->part.failed)
		return -1;
	where = smallest(pq);
	if (where < 0)
		return 0;
	if (where == 0)
	{
		if (out)
			memcpy(out, pq->heap, pq->rec);
		heap_remove_top(pq);
	}
	else
	{
		pq_run	   *r = pq->runs[0];
		xxl_status	rc;

		if (out)
			memcpy(out, r->head, pq->rec);
		if (run_advance(pq, r, &rc))
			run_sift_down(pq, pq->runs, pq->nruns, 0);
		else if (rc != XXL_OK)
			return -(int) xxl_part_fail(&pq->part);
		else
		{
			pq->runs[0] = pq->runs[--pq->nruns];
			if (pq->nruns > 0)
				run_sift_down(pq, pq->runs, pq->nruns, 0);
			run_free(pq, r);
		}
	}
	pq->size--;
	pq->stats.pops++;
	if (count_op(pq) != XXL_OK)
		return -1;
	return 1;
}

uint64_t
xxl_pq_size(const xxl_pq *pq)
{
	return pq->size;
}

const xxl_error *
xxl_pq_error(const xxl_pq *pq)
{
	return &pq->part.err;
}

void
xxl_pq_get_stats(const xxl_pq *pq, xxl_pq_stats *stats)
{
	*stats = pq->stats;
	stats->memory_peak = pq->part.budget.peak;
	if (pq->disks)
		xxl_disks_stats(pq->disks, &stats->io);
	else
		memset(&stats->io, 0, sizeof(stats->io));
}

void
xxl_pq_destroy(xxl_pq *pq)
{
	xxl_budget	budget;

	if (pq == NULL)
		return;
	for (int i = 0; i < pq->nruns; i++)
		run_free(pq, pq->runs[i]);
	xxl_part_free(&pq->part, pq->sel, (size_t) (pq->max_runs + 1) * sizeof(pq_run *));
	xxl_part_free(&pq->part, pq->runs, (size_t) (pq->max_runs + 1) * sizeof(pq_run *));
	xxl_part_free(&pq->part, pq->tmp, 2 * pq->rec);
	xxl_part_free(&pq->part, pq->scratch, pq->heap_bytes);
	xxl_part_free(&pq->part, pq->heap, pq->heap_bytes);
	xxl_disks_close(pq->disks);
	budget = pq->part.budget;
	xxl_budget_free(&budget, pq, sizeof(*pq));
}
