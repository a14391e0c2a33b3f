/*
 * dsort.c — the external distribution sort (see xxl_dsort.h): planning,
 * staging with sampling, splitters, distribution to buckets and the bucket
 * reader that sorts each bucket in memory.
 *
 * Memory, phase by phase (the phases never overlap, so each may use the
 * whole budget): staging holds one stage block and the sample; distribution
 * holds one write buffer per bucket, one stage block, the splitters and the
 * lists of extents; output holds two areas of `cap` records (the radix sort
 * goes from one to the other), one read block, the splitters and the lists —
 * or, sorting ahead on a worker (asynchronous sorts), three areas and two
 * read blocks.
 * Buckets are planned at TARGET_FILL of what memory can sort, so that
 * sampling noise rarely overfills one (the sample has OVERSAMPLE keys per
 * bucket: a bucket's size then varies by about 1/sqrt(OVERSAMPLE)).
 *
 * Keys of 9..16 bytes: all keys of a bucket share the leading bits of the
 * bucket's smallest and largest key (tracked while distributing), so when at
 * most 64 bits vary the bucket is sorted on those bits as an 8-byte key —
 * the radix sort's integer path — and the keys are restored afterwards.
 *
 * Disk: the stage and the buckets are chains of blocks in extents of several
 * blocks (one id per extent in memory); records never span a block.
 * Transfers to buffered files are done in place (xxl_io_sync), as in the
 * scatter: small ones cost less than an I/O thread's wake-ups.
 */
#include "core/xxl_dsort.h"
#include "core/xxl_pipe.h"
#include "core/xxl_sort.h"
#include "core/radix.h"
#include "core/record.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define DEFAULT_MAX_BLOCK (1024 * 1024)
#define DEFAULT_OVERSAMPLE 64
#define TARGET_FILL 0.7
#define STAGE_BLOCK_MAX (256 * 1024)
#define EXTENT_MIN (64 * 1024)
#define OVERHEAD (2 * XXL_ALIGN)
#define POLL_EVERY 65536
#define TABLE_BITS_MAX 12

typedef struct dkey
{
	uint64_t	hi,
				lo;
} dkey;

typedef enum dsort_phase
{
	DS_INPUT,
	DS_OUTPUT
} dsort_phase;

/* A chain of blocks on one disk set: the stage, or a bucket. */
typedef struct ds_chain
{
	uint64_t	count;			/* records */
	uint32_t	buf;			/* write buffer index (buckets) */
	uint32_t	fill;			/* records in it */
	uint64_t	blocks;			/* blocks written */
	xxl_bid    *ext;			/* extents */
	size_t		next,
				ext_cap;
	dkey		min,			/* keys seen (buckets) */
				max;
} ds_chain;

typedef struct ds_disk
{
	xxl_disks  *disks;
	size_t		block;
	size_t		per;			/* records per block */
	size_t		bpe;			/* blocks per extent */
} ds_disk;

typedef struct ds_plan
{
	bool		in_memory;
	uint64_t	cap;			/* records a bucket can take in memory */
	int			areas;			/* of cap records in the output: 3 when sorting ahead */
	uint64_t	target;			/* planned records per bucket */
	size_t		stage_block;
	size_t		sample_cap;
	uint64_t	stride;			/* every stride-th key is sampled */
	size_t		meta;			/* bound of the extent lists' charge */
	size_t		input,			/* the most held in each phase */
				distribute,
				output;
	size_t		pipe_batch;		/* > 0: puts go through a pipe to a worker, in
								 * batches of this many bytes (whole records) */
} ds_plan;

typedef struct ds_ahead ds_ahead;

struct xxl_dsort
{
	xxl_dsort_config cfg;
	xxl_part	part;			/* error, budget, cancel hook */
	dsort_phase phase;
	size_t		rec,
				ks;
	ds_plan		p;
	xxl_pipe   *pipe;			/* asynchronous: the worker takes the records */
	uint64_t	wait_ns;		/* the caller waited for the worker */
	uint64_t	overflows;
	uint64_t	short_keys;
	uint64_t	largest;
	size_t		peak_before_output;

	/* in memory, and the output areas */
	unsigned char *area;
	size_t		area_bytes;

	/* staging */
	dkey	   *sample;
	size_t		nsample;
	ds_disk		sd;
	ds_chain	stage;
	unsigned char *sbuf;		/* one stage block */

	/*
	 * buckets: normal bucket j holds the keys in (sp[j-1], sp[j]] but sp[j]
	 * itself if heavy, which has an equality bucket right after; physical
	 * indexes 2j and 2j+1
	 */
	dkey	   *sp;
	bool	   *heavy;
	size_t		nsp,
				sp_cap;
	/*
	 * Index over the splitters: keys are 128-bit numbers whose first gbits
	 * bits are gprefix for all sampled keys; the next tbits bits name a
	 * cell, and cell t's keys have their splitter count in [cell[t], cell[t+1]]
	 */
	int			gbits,
				tbits;
	unsigned __int128 gprefix;
	uint32_t   *cell;
	ds_chain   *bk;
	size_t		nbk;
	ds_disk		bd;
	unsigned char *wbuf;
	size_t		nwbuf;

	/* output */
	size_t		cur;			/* physical bucket being handed out */
	uint64_t	cur_block;		/* equality bucket: next block */
	bool		cur_started;
	unsigned char *rbuf;
	ds_ahead   *ahead;			/* sorting ahead on a worker (three areas) */
	xxl_sorter *over;			/* an overfull bucket */
	size_t		over_memory;
	bool		memory_done;

	/*
	 * The caller's counters, written at every put, on a cache line of their
	 * own, away from what an asynchronous worker reads at every record.
	 */
	uint64_t	puts __attribute__((aligned(64)));
	uint64_t	next_poll;
	char		pad_end[48];
};

/*
 * The key as a 128-bit number, left aligned.  Records of at least 8 bytes
 * load their first 8 bytes at once; the rest of a longer key is read by its
 * length, so that nothing past the record is touched.
 */
static inline dkey
key_of_rec(const unsigned char *p, size_t ks, size_t rec)
{
	dkey		k = {0, 0};

	if (rec >= 8)
	{
		k.hi = xxl_load_be64(p);
		if (ks < 8)
			k.hi &= ~UINT64_C(0) << (64 - 8 * ks);
	}
	else
	{
		for (size_t i = 0; i < ks; i++)
			k.hi = (k.hi << 8) | p[i];
		k.hi <<= 8 * (8 - ks);
	}
	switch (ks > 8 ? ks - 8 : 0)
	{
		case 0:
			break;
		case 1:
			k.lo = (uint64_t) p[8] << 56;
			break;
		case 2:
			k.lo = ((uint64_t) p[8] << 56) | ((uint64_t) p[9] << 48);
			break;
		case 8:
			k.lo = xxl_load_be64(p + 8);
			break;
		default:
			if (rec >= 16)
				k.lo = xxl_load_be64(p + 8) & (~UINT64_C(0) << (128 - 8 * ks));
			else
			{
				for (size_t i = 8; i < ks; i++)
					k.lo = (k.lo << 8) | p[i];
				k.lo <<= 8 * (16 - ks);
			}
			break;
	}
	return k;
}

static inline dkey
key_of(const unsigned char *p, size_t ks)
{
	return key_of_rec(p, ks, ks);
}

static inline bool
key_less(dkey a, dkey b)
{
	return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

static inline bool
key_eq(dkey a, dkey b)
{
	return a.hi == b.hi && a.lo == b.lo;
}

/* Planning ------------------------------------------------------------------ */

static size_t
max_block_of(const xxl_dsort_config *c)
{
	size_t		b = c->disk.block_size ? c->disk.block_size : DEFAULT_MAX_BLOCK;

	b -= b % XXL_ALIGN;
	return b < XXL_ALIGN ? XXL_ALIGN : b;
}

/* Bound of the extent lists: one id per extent, lists up to twice as long. */
static size_t
meta_bound(uint64_t bytes, size_t nchains)
{
	return xxl_budget_charge((size_t) (2 * 8 * (bytes / EXTENT_MIN + 2 * nchains)));
}

/* Bits of the splitter index: about four cells per splitter. */
static int
table_bits(size_t nsp)
{
	int			t = 1;

	while (t < TABLE_BITS_MAX && ((size_t) 1 << t) < 4 * nsp)
		t++;
	return t;
}

static size_t
tables_charge(size_t nsp)
{
	size_t		nbk = 2 * nsp + 1;

	return xxl_budget_charge(nbk * sizeof(ds_chain)) +
		xxl_budget_charge(nsp * sizeof(dkey)) +
		xxl_budget_charge(nsp) +
		xxl_budget_charge((((size_t) 1 << table_bits(nsp)) + 1) * sizeof(uint32_t));
}

static bool
shape_ok(const xxl_dsort_config *c)
{
	return c->record_size > 0 && c->record_size <= XXL_DSORT_MAX_RECORD &&
		c->key_size > 0 && c->key_size <= XXL_DSORT_MAX_KEY && c->key_size <= c->record_size;
}

static size_t
output_limit(const xxl_dsort_config *c)
{
	return c->output_memory > 0 && c->output_memory < c->memory ? c->output_memory : c->memory;
}

static bool
make_plan(const xxl_dsort_config *c, ds_plan *p)
{
	size_t		rec = c->record_size;
	uint64_t	N = c->records;
	size_t		avail,
				out_avail;
	int			osamp = c->oversample > 0 ? c->oversample : DEFAULT_OVERSAMPLE;
	size_t		Bs;
	uint64_t	cap;

	memset(p, 0, sizeof(*p));
	if (output_limit(c) <= OVERHEAD)
		return false;
	avail = c->memory - OVERHEAD;
	out_avail = output_limit(c) - OVERHEAD;
	if (N <= out_avail / (2 * rec) && xxl_budget_charge((size_t) (2 * N * rec)) <= out_avail)
	{
		/* the records stay where they are put until they are handed out */
		p->in_memory = true;
		p->cap = N;
		p->areas = 2;
		p->input = p->distribute = p->output = xxl_budget_charge((size_t) (2 * N * rec)) + OVERHEAD;
		return true;
	}
	/* a pipe pays where its batches are a small part of the input's memory */
	p->pipe_batch = c->async ? xxl_pipe_batch_for(avail) / rec * rec : 0;
	avail -= XXL_PIPE_BATCHES * p->pipe_batch;
	Bs = avail / 16;
	if (Bs > STAGE_BLOCK_MAX)
		Bs = STAGE_BLOCK_MAX;
	if (Bs > max_block_of(c))
		Bs = max_block_of(c);
	Bs -= Bs % XXL_ALIGN;
	if (Bs < XXL_ALIGN)
		Bs = XXL_ALIGN;
	if (Bs < rec)
		return false;
	/*
	 * An asynchronous sort also sorts ahead: a worker loads and sorts the
	 * next bucket while the caller hands out one, which takes a third area
	 * and a second read block (smaller buckets, more of them).  Sorts that
	 * cannot afford it sort each bucket when it is asked for.
	 */
	for (int areas = p->pipe_batch ? 3 : 2; areas >= 2; areas--)
	for (cap = out_avail / (areas * rec); cap >= 2; cap -= cap / 16 + 1)
	{
		uint64_t	target = (uint64_t) (cap * TARGET_FILL);
		uint64_t	nb = target ? (N + target - 1) / target : 0;
		uint64_t	stride;
		size_t		nsp,
					sample,
					meta,
					tables,
					input,
					distribute,
					output;

		if (target < 1)
			break;
		nsp = (size_t) nb - 1;
		stride = N / (osamp * nb) > 0 ? N / (osamp * nb) : 1;
		/* every stride-th record: up to twice osamp * nb when the stride is short */
		sample = xxl_budget_charge((size_t) (N / stride + 2) * sizeof(dkey));
		meta = meta_bound(2 * N * rec, nsp + 2);
		tables = tables_charge(nsp);
		input = Bs + sample + meta;
		/* the smallest blocks; equality buckets only where they fit (see open_buckets) */
		distribute = (nsp + 1) * XXL_ALIGN + Bs + tables + meta;
		output = xxl_budget_charge((size_t) (areas * cap * rec)) + (areas - 1) * Bs + tables + meta;
		if (c->presampled)
			input = distribute += sample;	/* the sample, then the buckets; no stage */
		if (input > avail || distribute > avail || output > out_avail)
			continue;
		p->cap = cap;
		p->areas = areas;
		p->target = target;
		p->stage_block = Bs;
		p->sample_cap = (size_t) (N / stride + 2);
		p->stride = stride;
		p->meta = meta;
		/* distribution takes the largest blocks that fit (the pipe is gone by then) */
		p->input = c->presampled ? c->memory : input + OVERHEAD + XXL_PIPE_BATCHES * p->pipe_batch;
		p->distribute = c->memory;
		p->output = output_limit(c);
		return true;
	}
	return false;
}

bool
xxl_dsort_fits(const xxl_dsort_config *config)
{
	ds_plan		p;

	return shape_ok(config) && make_plan(config, &p);
}

/* Chains of blocks ------------------------------------------------------------ */

static xxl_status
open_disk(xxl_dsort *s, ds_disk *d, size_t block, xxl_error *err)
{
	xxl_disk_config dc = s->cfg.disk;

	d->block = block;
	d->per = block / s->rec;
	d->bpe = block >= EXTENT_MIN ? 1 : EXTENT_MIN / block;
	dc.block_size = d->bpe * block;
	/* small blocks go through the page cache (see xxl_dsort.h) */
	if (block < 128 * 1024)
		dc.try_direct = false;
	d->disks = xxl_disks_open(&dc, err);
	return d->disks ? XXL_OK : err->code;
}

static xxl_status
transfer(ds_disk *d, xxl_io_request *req, xxl_error *err)
{
	if (xxl_disks_direct(d->disks))
	{
		xxl_io_post(d->disks, req);
		return xxl_io_wait(d->disks, req, err);
	}
	return xxl_io_sync(d->disks, req, err);
}

/* Where block k of a chain lies: the extents hold bpe blocks side by side. */
static inline xxl_bid
block_bid(const ds_disk *d, const ds_chain *c, uint64_t k)
{
	return c->ext[k / d->bpe] + (k % d->bpe) * d->block;
}

/* Append a block of n records to a chain. */
static xxl_status
write_block(xxl_dsort *s, ds_disk *d, ds_chain *c, unsigned char *data, size_t n, xxl_error *err)
{
	xxl_io_request req;
	uint64_t	k = c->blocks;

	if (k % d->bpe == 0)
	{
		xxl_bid		bid;

		if (xxl_block_alloc(d->disks, &bid, err) != XXL_OK)
			return err->code;
		if (c->next == c->ext_cap)
		{
			size_t		cap = c->ext_cap ? 2 * c->ext_cap : 4;
			xxl_bid    *grown = xxl_budget_realloc(&s->part.budget, c->ext, c->ext_cap * sizeof(xxl_bid),
												   cap * sizeof(xxl_bid), err);

			if (grown == NULL)
			{
				xxl_block_free(d->disks, bid);
				return err->code;
			}
			c->ext = grown;
			c->ext_cap = cap;
		}
		c->ext[c->next++] = bid;
	}
	memset(&req, 0, sizeof(req));
	req.bid = block_bid(d, c, k);
	req.buf = data;
	req.len = XXL_ROUND_UP(n * s->rec, XXL_ALIGN);
	req.is_write = true;
	c->blocks++;
	return transfer(d, &req, err);
}

/* Read block k of a chain into buf; *n gets its records. */
static xxl_status
read_block(const xxl_dsort *s, ds_disk *d, const ds_chain *c, uint64_t k, unsigned char *buf,
		   size_t *n, xxl_error *err)
{
	xxl_io_request req;
	uint64_t	first = k * d->per;
	uint64_t	cnt = c->count - first < d->per ? c->count - first : d->per;

	memset(&req, 0, sizeof(req));
	req.bid = block_bid(d, c, k);
	req.buf = buf;
	req.len = XXL_ROUND_UP((size_t) cnt * s->rec, XXL_ALIGN);
	req.is_write = false;
	*n = (size_t) cnt;
	return transfer(d, &req, err);
}

static void
free_chain(xxl_dsort *s, ds_disk *d, ds_chain *c)
{
	if (d->disks)
		for (size_t e = 0; e < c->next; e++)
			xxl_block_free(d->disks, c->ext[e]);
	xxl_part_free(&s->part, c->ext, c->ext_cap * sizeof(xxl_bid));
	c->ext = NULL;
	c->next = c->ext_cap = 0;
}

/* Creation --------------------------------------------------------------------- */

static xxl_status take_batch(void *arg, const unsigned char *batch, size_t len, xxl_error *err);

static xxl_status
alloc_area(xxl_dsort *s)
{
	s->area_bytes = (size_t) (s->p.areas * s->p.cap * s->rec);
	s->area = xxl_part_alloc(&s->part, s->area_bytes ? s->area_bytes : 1);
	return s->area ? XXL_OK : s->part.err.code;
}

static void
free_area(xxl_dsort *s)
{
	if (s->area)
		xxl_part_free(&s->part, s->area, s->area_bytes ? s->area_bytes : 1);
	s->area = NULL;
}

xxl_dsort *
xxl_dsort_create(const xxl_dsort_config *config, xxl_error *err)
{
	xxl_dsort  *s;
	ds_plan		p;

	if (!shape_ok(config))
	{
		xxl_error_set(err, XXL_EINVAL, 0,
					  "distribution sort: records of %zu bytes with keys of %zu bytes are not "
					  "supported (keys 1..%d bytes, records up to %d)", config->record_size,
					  config->key_size, XXL_DSORT_MAX_KEY, XXL_DSORT_MAX_RECORD);
		return NULL;
	}
	if (!make_plan(config, &p))
	{
		xxl_error_set(err, XXL_ENOMEM, 0,
					  "memory budget of %zu bytes is too small to sort %llu records of %zu bytes",
					  config->memory, (unsigned long long) config->records, config->record_size);
		return NULL;
	}
	s = xxl_calloc_aligned(sizeof(*s));
	if (s == NULL)
	{
		xxl_error_set(err, XXL_ENOMEM, 0, "could not allocate a distribution sort");
		return NULL;
	}
	s->cfg = *config;
	s->rec = config->record_size;
	s->ks = config->key_size;
	s->p = p;
	s->next_poll = POLL_EVERY;
	/* each phase's limit is what the plan gives it */
	xxl_part_init(&s->part, "sort", p.input, config->cancel, config->cancel_arg);
	if (p.in_memory)
	{
		if (alloc_area(s) != XXL_OK)
			goto failed;
	}
	else
	{
		s->sample = xxl_part_alloc(&s->part, p.sample_cap * sizeof(dkey));
		if (s->sample == NULL)
			goto failed;
		if (!config->presampled)
		{
			s->sbuf = xxl_part_alloc(&s->part, p.stage_block);
			if (s->sbuf == NULL || open_disk(s, &s->sd, p.stage_block, &s->part.err) != XXL_OK)
				goto failed;
		}
		if (p.pipe_batch)
		{
			s->pipe = xxl_pipe_create(p.pipe_batch, XXL_PIPE_BATCHES, take_batch, s, &s->part.budget, &s->part.err);
			if (s->pipe == NULL)
				goto failed;
		}
	}
	return s;

failed:
	*err = s->part.err;
	xxl_dsort_destroy(s);
	return NULL;
}

size_t
xxl_dsort_memory(const xxl_dsort *s)
{
	size_t		m = s->p.input > s->p.distribute ? s->p.input : s->p.distribute;

	return m > s->p.output ? m : s->p.output;
}

void
xxl_dsort_phase_memory(const xxl_dsort *s, size_t *input, size_t *distribute, size_t *output)
{
	*input = s->p.input;
	*distribute = s->p.distribute;
	*output = s->p.output;
}

/* Input ----------------------------------------------------------------------- */

static xxl_status start_distribution(xxl_dsort *s, xxl_error *err);
static inline xxl_status distribute_one(xxl_dsort *s, const unsigned char *p, xxl_error *err);

/*
 * One record into the sort: distributed (presampled) or staged.  Runs on the
 * caller's thread, or on the pipe's worker when the sort is asynchronous:
 * it reports errors in the record it is given, never polls the cancel hook
 * and never changes the phase.
 */
static inline xxl_status
take(xxl_dsort *s, const unsigned char *rec, xxl_error *err)
{
	if (s->bk)
		return distribute_one(s, rec, err);
	if (s->cfg.presampled)
	{
		if (start_distribution(s, err) != XXL_OK)
			return err->code;
		return distribute_one(s, rec, err);
	}
	if (s->stage.count % s->p.stride == 0 && s->nsample < s->p.sample_cap)
		s->sample[s->nsample++] = key_of_rec(rec, s->ks, s->rec);
	xxl_copy_small(s->sbuf + (size_t) s->stage.fill * s->rec, rec, s->rec);
	s->stage.count++;
	if (++s->stage.fill == s->sd.per)
	{
		s->stage.fill = 0;
		return write_block(s, &s->sd, &s->stage, s->sbuf, s->sd.per, err);
	}
	return XXL_OK;
}

/* The worker's side of an asynchronous sort: batches of records. */
static xxl_status
take_batch(void *arg, const unsigned char *batch, size_t len, xxl_error *err)
{
	xxl_dsort  *s = arg;

	for (size_t at = 0; at < len; at += s->rec)
		if (take(s, batch + at, err) != XXL_OK)
			return err->code;
	return XXL_OK;
}

xxl_status
xxl_dsort_put(xxl_dsort *s, const void *rec)
{
	if (s->part.failed || s->phase != DS_INPUT)
	{
		if (!s->part.failed)
			xxl_error_set(&s->part.err, XXL_EINVAL, 0, "distribution sort: put after sort");
		return xxl_part_fail(&s->part);
	}
	if (s->puts == s->cfg.records)
	{
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "distribution sort: more than the %llu records announced",
					  (unsigned long long) s->cfg.records);
		return xxl_part_fail(&s->part);
	}
	if (++s->puts >= s->next_poll)
	{
		s->next_poll += POLL_EVERY;
		if (xxl_part_canceled(&s->part))
			return xxl_part_fail(&s->part);
	}
	if (s->p.in_memory)
	{
		xxl_copy_small(s->area + (s->puts - 1) * s->rec, rec, s->rec);
		return XXL_OK;
	}
	if (s->pipe)
	{
		unsigned char *at = xxl_pipe_space(s->pipe, s->rec, &s->part.err);

		if (at == NULL)
			return xxl_part_fail(&s->part);
		xxl_copy_small(at, rec, s->rec);
		return XXL_OK;
	}
	if (take(s, rec, &s->part.err) != XXL_OK)
		return xxl_part_fail(&s->part);
	return XXL_OK;
}

xxl_status
xxl_dsort_put_many(xxl_dsort *s, const void *recs, size_t n)
{
	const unsigned char *r = recs;

	/* (with a pipe, the buckets belong to the worker) */
	if (s->part.failed || s->phase != DS_INPUT || (!s->pipe && !s->bk) || s->puts + n > s->cfg.records)
	{
		/* the general path (the stage, the pipe, errors) record by record */
		for (size_t i = 0; i < n; i++)
			if (xxl_dsort_put(s, r + i * s->rec) != XXL_OK)
				return s->part.err.code;
		return XXL_OK;
	}
	s->puts += n;
	if (s->puts >= s->next_poll)
	{
		s->next_poll = s->puts + POLL_EVERY;
		if (xxl_part_canceled(&s->part))
			return xxl_part_fail(&s->part);
	}
	if (s->pipe)
	{
		/* into the pipe a stage at a time: one call for many records */
		size_t		per = XXL_PIPE_STAGE_BYTES / s->rec;

		for (size_t i = 0; i < n; i += per)
		{
			size_t		k = n - i < per ? n - i : per;
			unsigned char *at = xxl_pipe_space(s->pipe, k * s->rec, &s->part.err);

			if (at == NULL)
				return xxl_part_fail(&s->part);
			memcpy(at, r + i * s->rec, k * s->rec);
		}
		return XXL_OK;
	}
	for (size_t i = 0; i < n; i++)
		if (distribute_one(s, r + i * s->rec, &s->part.err) != XXL_OK)
			return xxl_part_fail(&s->part);
	return XXL_OK;
}

uint64_t
xxl_dsort_sample_stride(const xxl_dsort *s)
{
	return s->cfg.presampled && !s->p.in_memory ? s->p.stride : 0;
}

uint64_t
xxl_dsort_plan_stride(const xxl_dsort_config *config)
{
	ds_plan		p;

	if (!config->presampled || !shape_ok(config) || !make_plan(config, &p) || p.in_memory)
		return 0;
	return p.stride;
}

xxl_status
xxl_dsort_sample(xxl_dsort *s, const void *key)
{
	if (s->part.failed || s->phase != DS_INPUT || !s->cfg.presampled || s->puts > 0)
	{
		if (!s->part.failed)
			xxl_error_set(&s->part.err, XXL_EINVAL, 0,
						  "distribution sort: a sample is offered before the first record, and "
						  "only to a presampled sort");
		return xxl_part_fail(&s->part);
	}
	if (!s->p.in_memory && s->nsample < s->p.sample_cap)
		s->sample[s->nsample++] = key_of(key, s->ks);
	return XXL_OK;
}

/* Splitters and distribution -------------------------------------------------- */

static int
cmp_dkey(const void *a, const void *b)
{
	const dkey *x = a,
			   *y = b;

	return key_less(*x, *y) ? -1 : key_less(*y, *x) ? 1 : 0;
}

static inline unsigned __int128
key_u128(dkey k)
{
	return ((unsigned __int128) k.hi << 64) | k.lo;
}

/* The number of splitters below k, searched in sp[a..b]. */
static inline size_t
count_below(const dkey *sp, size_t a, size_t b, dkey k)
{
	while (b - a > 4)
	{
		size_t		mid = a + (b - a) / 2;

		if (key_less(sp[mid], k))
			a = mid + 1;
		else
			b = mid;
	}
	while (a < b && key_less(sp[a], k))
		a++;
	return a;
}

/*
 * Build the cell index (see struct xxl_dsort): most cells hold no splitter
 * or one, so most keys find their bucket with one comparison.
 */
static xxl_status
build_index(xxl_dsort *s, dkey min, dkey max, xxl_error *err)
{
	unsigned __int128 lo = key_u128(min),
				diff = lo ^ key_u128(max);
	size_t		ncell;

	s->gbits = diff == 0 ? 128 : (uint64_t) (diff >> 64) ? __builtin_clzll((uint64_t) (diff >> 64))
		: 64 + __builtin_clzll((uint64_t) diff);
	s->tbits = table_bits(s->nsp);
	if (s->tbits > 128 - s->gbits)
		s->tbits = 128 - s->gbits;
	s->gprefix = s->gbits == 0 ? 0 : lo >> (128 - s->gbits);
	ncell = ((size_t) 1 << s->tbits) + 1;
	s->cell = xxl_budget_alloc(&s->part.budget, ncell * sizeof(uint32_t), err);
	if (s->cell == NULL)
		return err->code;
	for (size_t t = 0; t < ncell; t++)
	{
		unsigned __int128 start;
		dkey		k;

		if (t == ncell - 1)
		{
			s->cell[t] = (uint32_t) s->nsp;
			break;
		}
		start = s->gbits == 0 ? 0 : s->gprefix << (128 - s->gbits);
		if (s->tbits > 0)
			start |= (unsigned __int128) t << (128 - s->gbits - s->tbits);
		k.hi = (uint64_t) (start >> 64);
		k.lo = (uint64_t) start;
		s->cell[t] = (uint32_t) count_below(s->sp, 0, s->nsp, k);
	}
	return XXL_OK;
}

/* The physical bucket of a key. */
static inline size_t
bucket_of(const xxl_dsort *s, dkey k)
{
	unsigned __int128 v = key_u128(k);
	size_t		lo;

	if (s->gbits > 0 && (v >> (128 - s->gbits)) != s->gprefix)
		lo = (v >> (128 - s->gbits)) < s->gprefix ? 0 : s->nsp;
	else
	{
		size_t		t = s->tbits == 0 ? 0 : (size_t) ((v << s->gbits) >> (128 - s->tbits));

		lo = count_below(s->sp, s->cell[t], s->cell[t + 1], k);
	}
	return 2 * lo + (lo < s->nsp && s->heavy[lo] && key_eq(s->sp[lo], k) ? 1 : 0);
}

/*
 * Splitters at equal quantiles of the sorted sample; a key that fills a
 * bucket's share of the sample on its own is heavy: it gets an equality
 * bucket.
 */
static xxl_status
choose_splitters(xxl_dsort *s, xxl_error *err)
{
	/* presampled, the records are still to come: as many as announced */
	uint64_t	total = s->cfg.presampled ? s->cfg.records : s->puts;
	uint64_t	nb = (total + s->p.target - 1) / s->p.target;
	size_t		S = s->nsample;
	size_t		share;

	if (nb < 1)
		nb = 1;
	s->sp_cap = (size_t) nb;
	s->sp = xxl_budget_alloc(&s->part.budget, s->sp_cap * sizeof(dkey), err);
	s->heavy = s->sp ? xxl_budget_alloc(&s->part.budget, s->sp_cap, err) : NULL;
	if (s->heavy == NULL)
		return err->code;
	qsort(s->sample, S, sizeof(dkey), cmp_dkey);
	share = S / nb > 0 ? S / nb : 1;
	s->nsp = 0;
	for (uint64_t j = 1; j < nb && S > 0; j++)
	{
		dkey		v = s->sample[(size_t) (j * S / nb)];

		if (s->nsp > 0 && key_eq(s->sp[s->nsp - 1], v))
			continue;
		s->sp[s->nsp] = v;
		s->heavy[s->nsp] = false;
		s->nsp++;
	}
	/* count each splitter's copies in the sample */
	for (size_t j = 0, i = 0; j < s->nsp; j++)
	{
		size_t		copies = 0;

		while (i < S && key_less(s->sample[i], s->sp[j]))
			i++;
		while (i < S && key_eq(s->sample[i], s->sp[j]))
			i++, copies++;
		s->heavy[j] = copies >= share;
	}
	if (S == 0)
	{
		dkey		zero = {0, 0};

		return build_index(s, zero, zero, err);
	}
	return build_index(s, s->sample[0], s->sample[S - 1], err);
}

/*
 * The buckets and their write buffers: the largest block with which both
 * the distribution and the output fit.
 */
static xxl_status
open_buckets(xxl_dsort *s, xxl_error *err)
{
	size_t		used = 0;
	size_t		fixed,
				room,
				B;

	s->nbk = 2 * s->nsp + 1;
	s->bk = xxl_budget_alloc(&s->part.budget, s->nbk * sizeof(ds_chain), err);
	if (s->bk == NULL)
		return err->code;
	memset(s->bk, 0, s->nbk * sizeof(ds_chain));
	fixed = s->part.budget.used + s->p.meta + OVERHEAD;
	room = s->part.budget.limit > fixed ? s->part.budget.limit - fixed : 0;
	/* the plan only guarantees the normal buckets: drop equality buckets that do not fit */
	for (size_t j = 0, nheavy = 0; j < s->nsp; j++)
		if (s->heavy[j] && (s->nsp + 1 + ++nheavy) * XXL_ALIGN > room)
			s->heavy[j] = false;
	for (size_t b = 0; b < s->nbk; b++)
		if (b % 2 == 0 || s->heavy[b / 2])
			s->bk[b].buf = (uint32_t) used++;
	s->nwbuf = used;

	B = room / s->nwbuf;
	if (B > max_block_of(&s->cfg))
		B = max_block_of(&s->cfg);
	{
		/* the output holds the areas and a read block per thread next to the tables (no stage) */
		size_t		out_fixed = fixed - (s->sbuf ? s->p.stage_block : 0) +
			xxl_budget_charge((size_t) (s->p.areas * s->p.cap * s->rec));
		size_t		out_room = s->p.output > out_fixed ? s->p.output - out_fixed : 0;

		if (B > out_room / (s->p.areas - 1))
			B = out_room / (s->p.areas - 1);
	}
	B -= B % XXL_ALIGN;
	if (B < XXL_ALIGN)
		B = XXL_ALIGN;
	if (B < s->rec)
		B = XXL_ROUND_UP(s->rec, XXL_ALIGN);
	if (open_disk(s, &s->bd, B, err) != XXL_OK)
		return err->code;
	s->wbuf = xxl_budget_alloc(&s->part.budget, s->nwbuf * B, err);
	return s->wbuf ? XXL_OK : err->code;
}

static inline xxl_status
distribute_one(xxl_dsort *s, const unsigned char *p, xxl_error *err)
{
	dkey		key = key_of_rec(p, s->ks, s->rec);
	ds_chain   *b = &s->bk[bucket_of(s, key)];
	unsigned char *w = s->wbuf + (size_t) b->buf * s->bd.block;

	/* the range of a bucket's keys matters only for keys longer than 8 bytes */
	if (s->ks > 8)
	{
		if (b->count == 0 || key_less(key, b->min))
			b->min = key;
		if (b->count == 0 || key_less(b->max, key))
			b->max = key;
	}
	b->count++;
	xxl_copy_small(w + (size_t) b->fill * s->rec, p, s->rec);
	if (++b->fill == s->bd.per)
	{
		b->fill = 0;
		return write_block(s, &s->bd, b, w, s->bd.per, err);
	}
	return XXL_OK;
}

/* The last blocks of the buckets; their write buffers are given back. */
static xxl_status
close_buckets(xxl_dsort *s)
{
	for (size_t b = 0; b < s->nbk; b++)
	{
		ds_chain   *bk = &s->bk[b];

		if (bk->fill > 0 &&
			write_block(s, &s->bd, bk, s->wbuf + (size_t) bk->buf * s->bd.block, bk->fill,
						&s->part.err) != XXL_OK)
			return s->part.err.code;
		if (bk->count > s->largest)
			s->largest = bk->count;
	}
	xxl_part_free(&s->part, s->wbuf, s->nwbuf * s->bd.block);
	s->wbuf = NULL;
	return XXL_OK;
}

/* Staged records to their buckets. */
static xxl_status
distribute_stage(xxl_dsort *s)
{
	for (uint64_t k = 0; k < s->stage.blocks; k++)
	{
		size_t		n;
		const unsigned char *p = s->sbuf;

		if (read_block(s, &s->sd, &s->stage, k, s->sbuf, &n, &s->part.err) != XXL_OK)
			return s->part.err.code;
		for (size_t i = 0; i < n; i++, p += s->rec)
			if (distribute_one(s, p, &s->part.err) != XXL_OK)
				return s->part.err.code;
		if (xxl_part_canceled(&s->part))
			return s->part.err.code;
	}
	/* the stage is read: give its space back */
	free_chain(s, &s->sd, &s->stage);
	return XXL_OK;
}

/* Splitters from the sample, then the buckets. */
static xxl_status
start_distribution(xxl_dsort *s, xxl_error *err)
{
	if (choose_splitters(s, err) != XXL_OK)
		return err->code;
	xxl_part_free(&s->part, s->sample, s->p.sample_cap * sizeof(dkey));
	s->sample = NULL;
	return open_buckets(s, err);
}

static xxl_status ahead_start(xxl_dsort *s, size_t from);

xxl_status
xxl_dsort_sort(xxl_dsort *s)
{
	if (s->part.failed || s->phase != DS_INPUT)
	{
		if (!s->part.failed)
			xxl_error_set(&s->part.err, XXL_EINVAL, 0, "distribution sort: sort called twice");
		return xxl_part_fail(&s->part);
	}
	if (s->p.in_memory)
	{
		/* sorted into the second half */
		xxl_radix_sort_fixed((char *) s->area, (char *) s->area + s->puts * s->rec, (size_t) s->puts,
							 s->rec, s->ks, 1, true);
		s->phase = DS_OUTPUT;
		return XXL_OK;
	}
	/* what the worker has not taken yet, then the pipe's memory back */
	if (s->pipe && xxl_pipe_finish(&s->pipe, &s->wait_ns, &s->part.err) != XXL_OK)
		return xxl_part_fail(&s->part);
	s->part.budget.limit = s->p.distribute;
	if (s->cfg.presampled)
	{
		if (s->bk == NULL && start_distribution(s, &s->part.err) != XXL_OK)
			return xxl_part_fail(&s->part);
	}
	else
	{
		/* the last stage block; the stage block buffer then reads the stage */
		if (s->stage.fill > 0 &&
			write_block(s, &s->sd, &s->stage, s->sbuf, s->stage.fill, &s->part.err) != XXL_OK)
			return xxl_part_fail(&s->part);
		s->stage.fill = 0;
		if (start_distribution(s, &s->part.err) != XXL_OK || distribute_stage(s) != XXL_OK)
			return xxl_part_fail(&s->part);
		xxl_part_free(&s->part, s->sbuf, s->p.stage_block);
		s->sbuf = NULL;
	}
	if (close_buckets(s) != XXL_OK)
		return xxl_part_fail(&s->part);
	s->part.budget.limit = s->p.output;
	s->peak_before_output = s->part.budget.peak;
	xxl_budget_restart_peak(&s->part.budget);
	if (alloc_area(s) != XXL_OK)
		return xxl_part_fail(&s->part);
	s->rbuf = xxl_part_alloc(&s->part, s->bd.block);
	if (s->rbuf == NULL || (s->p.areas == 3 && ahead_start(s, 0) != XXL_OK))
		return xxl_part_fail(&s->part);
	s->phase = DS_OUTPUT;
	s->cur = 0;
	return XXL_OK;
}

/* Output ------------------------------------------------------------------------ */

/* A bucket too large for memory goes through the core sorter. */
static xxl_status
sort_overflow(xxl_dsort *s, ds_chain *b)
{
	xxl_sort_config c;
	uint64_t	nblocks = (b->count + s->bd.per - 1) / s->bd.per;

	free_area(s);
	memset(&c, 0, sizeof(c));
	c.res.memory = xxl_budget_available(&s->part.budget);
	c.res.memory -= c.res.memory % XXL_ALIGN;
	c.record_size = s->rec;
	c.key_size = s->ks;
	c.res.threads = 1;
	c.res.disk = s->cfg.disk;
	c.res.disk.block_size = XXL_ALIGN;
	while (c.res.disk.block_size * 2 * 64 + 64 * 1024 <= c.res.memory && c.res.disk.block_size < max_block_of(&s->cfg))
		c.res.disk.block_size *= 2;
	c.res.disk.try_direct = false;
	c.res.cancel = s->cfg.cancel;
	c.res.cancel_arg = s->cfg.cancel_arg;
	s->over = xxl_sorter_create(&c, &s->part.err);
	if (s->over == NULL)
		return s->part.err.code;
	s->over_memory = c.res.memory;
	if (xxl_budget_reserve(&s->part.budget, c.res.memory, "bucket sorter", &s->part.err) != XXL_OK)
	{
		s->over_memory = 0;
		return s->part.err.code;
	}
	for (uint64_t k = 0; k < nblocks; k++)
	{
		size_t		n;

		if (read_block(s, &s->bd, b, k, s->rbuf, &n, &s->part.err) != XXL_OK)
			return s->part.err.code;
		for (size_t i = 0; i < n; i++)
			if (xxl_sorter_put(s->over, s->rbuf + i * s->rec) != XXL_OK)
				goto sorter_failed;
	}
	if (xxl_sorter_sort(s->over) != XXL_OK)
		goto sorter_failed;
	s->overflows++;
	return XXL_OK;

sorter_failed:
	{
		const xxl_error *e = xxl_sorter_error(s->over);

		return xxl_error_set(&s->part.err, e->code, e->sys_errno, "%s", e->message);
	}
}

static void
end_overflow(xxl_dsort *s)
{
	if (s->over == NULL)
		return;
	xxl_sorter_destroy(s->over);
	s->over = NULL;
	xxl_budget_release(&s->part.budget, s->over_memory);
	s->over_memory = 0;
}

/*
 * Sort a bucket of n records loaded into a; the result goes to out.  Runs on
 * the caller's thread or on the worker sorting ahead: it touches nothing of
 * the sort but its shape.  Keys of more than 8 bytes whose varying bits fit 64 are sorted as 8-byte
 * keys: the bits after the prefix all keys of the bucket share.  (Sorting
 * buckets where up to 72 bits vary on the top 64 and settling ties by the
 * last byte was tried: no fewer instructions than the byte-wise path.)
 */
static void
sort_bucket(const xxl_dsort *s, const ds_chain *b, size_t n, unsigned char *a, unsigned char *out,
			uint64_t *short_keys)
{
	size_t		ks = s->ks;
	unsigned __int128 lo = ((unsigned __int128) b->min.hi << 64) | b->min.lo,
				hi = ((unsigned __int128) b->max.hi << 64) | b->max.lo,
				diff = lo ^ hi;
	int			common = diff == 0 ? 128 : (uint64_t) (diff >> 64) ? __builtin_clzll((uint64_t) (diff >> 64))
		: 64 + __builtin_clzll((uint64_t) diff);
	int			varying = 8 * (int) ks - common;

	if (ks <= 8 || varying > 64)
	{
		xxl_radix_sort_fixed((char *) a, (char *) out, n, s->rec, ks, 1, true);
		return;
	}
	if (varying <= 0)
	{
		memcpy(out, a, n * s->rec);	/* one key: in input order already */
		return;
	}
	(*short_keys)++;
	{
		unsigned __int128 prefix = common == 0 ? 0 : lo >> (128 - common) << (128 - common);

		for (size_t i = 0; i < n; i++)
		{
			unsigned char *p = a + i * s->rec;
			dkey		k = key_of_rec(p, ks, s->rec);
			unsigned __int128 v = (((unsigned __int128) k.hi << 64) | k.lo) << common;
			uint64_t	c = __builtin_bswap64((uint64_t) (v >> 64));

			memcpy(p, &c, 8);
		}
		xxl_radix_sort_fixed((char *) a, (char *) out, n, s->rec, 8, 1, true);
		for (size_t i = 0; i < n; i++)
		{
			unsigned char *p = out + i * s->rec;
			uint64_t	c;
			unsigned __int128 v;

			memcpy(&c, p, 8);
			v = prefix | (((unsigned __int128) __builtin_bswap64(c) << 64) >> common);
			c = __builtin_bswap64((uint64_t) (v >> 64));
			/* bytes 8.. of the key were not touched: records move whole */
			memcpy(p, &c, 8);
		}
	}
}

/*
 * A bucket's blocks into dst, one after the other.  The blocks of an extent
 * lie side by side in the file, so on a buffered file each extent is one
 * read, its records going straight to dst and each block's padding to the
 * read block rbuf (4 kB blocks: 16 times fewer system calls); on a direct
 * file, block by block through rbuf.
 */
static xxl_status
load_bucket(const xxl_dsort *s, ds_disk *d, const ds_chain *b, unsigned char *dst,
			unsigned char *rbuf, xxl_error *err)
{
	uint64_t	nblocks = (b->count + d->per - 1) / d->per;
	bool		vectored = d->bpe > 1 && 2 * d->bpe <= XXL_IO_READV_MAX &&
		!xxl_disks_direct(d->disks);

	for (uint64_t k = 0; k < nblocks;)
	{
		uint64_t	run = d->bpe - k % d->bpe;
		struct iovec iov[XXL_IO_READV_MAX];
		int			iovcnt = 0;
		size_t		len = 0;

		if (run > nblocks - k)
			run = nblocks - k;
		if (!vectored || run == 1)
		{
			size_t		n;

			if (read_block(s, d, b, k, rbuf, &n, err) != XXL_OK)
				return err->code;
			memcpy(dst, rbuf, n * s->rec);
			dst += n * s->rec;
			k++;
			continue;
		}
		for (uint64_t j = k; j < k + run; j++)
		{
			uint64_t	left = b->count - j * d->per;
			size_t		bytes = (size_t) (left < d->per ? left : d->per) * s->rec;
			/* as written: whole pages, a block's padding included */
			size_t		span = XXL_ROUND_UP(bytes, XXL_ALIGN);

			iov[iovcnt].iov_base = dst;
			iov[iovcnt++].iov_len = bytes;
			if (span > bytes)
			{
				iov[iovcnt].iov_base = rbuf;
				iov[iovcnt++].iov_len = span - bytes;
			}
			dst += bytes;
			len += span;
		}
		if (xxl_io_readv_sync(d->disks, block_bid(d, b, k), iov, iovcnt, len, err) != XXL_OK)
			return err->code;
		k += run;
	}
	return XXL_OK;
}

/*
 * Sorting ahead (plan with three areas): a worker loads and sorts the normal
 * buckets in order, each into one of two output slots, while the caller
 * hands out the other; the caller gives a slot back when it moves on.  The
 * worker reads chains (the disk calls are thread-safe) and writes only its
 * slots and its own counters; the caller keeps everything else: equality
 * buckets (read block by block on its side), freeing chains, the budget,
 * cancel polls.  It stops before an overfull bucket, which the caller sorts
 * with the core sorter once the worker has ended, and is started again
 * after it.
 */
struct ds_ahead
{
	xxl_dsort  *s;
	pthread_t	thread;
	bool		running;
	pthread_mutex_t mu;
	pthread_cond_t to_worker;	/* a slot was given back, or stop */
	pthread_cond_t to_caller;	/* a bucket is sorted, or the worker ended */
	/* under mu */
	int			ready;			/* sorted buckets not given back (0..2) */
	int			head;			/* slot of the oldest */
	size_t		bucket[2];		/* physical bucket in each slot */
	bool		stop,
				ended;
	xxl_status	status;
	xxl_error	err;
	/* the worker's */
	size_t		from;
	unsigned char *load,
			   *out[2],
			   *rbuf;
	uint64_t	short_keys;
};

static void *
ahead_worker(void *arg)
{
	ds_ahead   *a = arg;
	xxl_dsort  *s = a->s;
	xxl_error	e = {0};
	xxl_status	rc = XXL_OK;
	int			w = 0;

	for (size_t j = a->from; j < s->nbk; j++)
	{
		const ds_chain *b = &s->bk[j];
		bool		stop;

		if (j % 2 == 1 || b->count == 0)
			continue;
		if (b->count > s->p.cap)
			break;
		pthread_mutex_lock(&a->mu);
		while (a->ready == 2 && !a->stop)
			pthread_cond_wait(&a->to_worker, &a->mu);
		stop = a->stop;
		pthread_mutex_unlock(&a->mu);
		if (stop || (rc = load_bucket(s, &s->bd, b, a->load, a->rbuf, &e)) != XXL_OK)
			break;
		sort_bucket(s, b, (size_t) b->count, a->load, a->out[w], &a->short_keys);
		pthread_mutex_lock(&a->mu);
		a->bucket[w] = j;
		a->ready++;
		pthread_cond_signal(&a->to_caller);
		pthread_mutex_unlock(&a->mu);
		w ^= 1;
	}
	pthread_mutex_lock(&a->mu);
	a->ended = true;
	a->status = rc;
	a->err = e;
	pthread_cond_signal(&a->to_caller);
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* Start the worker at physical bucket from, over the current areas. */
static xxl_status
ahead_start(xxl_dsort *s, size_t from)
{
	ds_ahead   *a = s->ahead;
	size_t		area = (size_t) s->p.cap * s->rec;
	int			rc;

	if (a == NULL)
	{
		a = s->ahead = xxl_calloc_aligned(sizeof(*a));
		if (a == NULL)
			return xxl_error_set(&s->part.err, XXL_ENOMEM, 0, "could not allocate a sort's worker");
		a->s = s;
		pthread_mutex_init(&a->mu, NULL);
		pthread_cond_init(&a->to_worker, NULL);
		pthread_cond_init(&a->to_caller, NULL);
		a->rbuf = xxl_part_alloc(&s->part, s->bd.block);
		if (a->rbuf == NULL)
			return s->part.err.code;
	}
	a->ready = a->head = 0;
	a->stop = a->ended = false;
	a->status = XXL_OK;
	a->from = from;
	a->out[0] = s->area;
	a->out[1] = s->area + area;
	a->load = s->area + 2 * area;
	rc = xxl_thread_start(&a->thread, ahead_worker, a);
	if (rc != 0)
		return xxl_error_set(&s->part.err, XXL_ENOMEM, rc, "could not start a sort's worker");
	a->running = true;
	return XXL_OK;
}

/* Stop the worker (it ends at once, or after the bucket it sorts) and join it. */
static void
ahead_stop(xxl_dsort *s)
{
	ds_ahead   *a = s->ahead;

	if (a == NULL || !a->running)
		return;
	xxl_thread_stop(a->thread, &a->mu, &a->to_worker, &a->stop);
	a->running = false;
	s->short_keys += a->short_keys;
	a->short_keys = 0;
}

/* The sorted records of normal bucket j (the next one), or NULL on an error. */
static const unsigned char *
ahead_take(xxl_dsort *s, size_t j)
{
	ds_ahead   *a = s->ahead;
	const unsigned char *r = NULL;

	if (xxl_part_canceled(&s->part))
		return NULL;
	pthread_mutex_lock(&a->mu);
	if (a->ready == 0 && !a->ended)
	{
		uint64_t	t0 = xxl_now_ns();

		while (a->ready == 0 && !a->ended)
			pthread_cond_wait(&a->to_caller, &a->mu);
		s->wait_ns += xxl_now_ns() - t0;
	}
	if (a->ready > 0 && a->bucket[a->head] == j)
		r = a->out[a->head];
	else if (a->status != XXL_OK)
		xxl_error_set(&s->part.err, a->err.code, a->err.sys_errno, "%s", a->err.message);
	else
		xxl_error_set(&s->part.err, XXL_EINVAL, 0, "distribution sort: bucket %zu was not sorted ahead", j);
	pthread_mutex_unlock(&a->mu);
	return r;
}

/* The caller is done with the oldest sorted bucket: its slot goes back. */
static void
ahead_give_back(ds_ahead *a)
{
	pthread_mutex_lock(&a->mu);
	a->ready--;
	a->head ^= 1;
	pthread_cond_signal(&a->to_worker);
	pthread_mutex_unlock(&a->mu);
}

static void
ahead_free(xxl_dsort *s)
{
	ds_ahead   *a = s->ahead;

	if (a == NULL)
		return;
	ahead_stop(s);
	xxl_part_free(&s->part, a->rbuf, s->bd.block);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->to_worker);
	pthread_cond_destroy(&a->to_caller);
	free(a);
	s->ahead = NULL;
}

int
xxl_dsort_read(xxl_dsort *s, const void **recs, size_t *count)
{
	*count = 0;
	if (s->part.failed || s->phase != DS_OUTPUT)
	{
		if (!s->part.failed)
			xxl_error_set(&s->part.err, XXL_EINVAL, 0, "distribution sort: read before sort");
		return -(int) xxl_part_fail(&s->part);
	}
	if (s->p.in_memory)
	{
		if (s->memory_done || s->puts == 0)
			return 0;
		s->memory_done = true;
		*recs = s->area + s->puts * s->rec;
		*count = (size_t) s->puts;
		return 1;
	}
	for (; s->cur < s->nbk; s->cur++, s->cur_started = false, s->cur_block = 0)
	{
		ds_chain   *b = &s->bk[s->cur];

		if (b->count == 0)
			continue;
		if (s->over)
		{
			const void *r;
			int			got = xxl_sorter_next(s->over, &r);

			if (got > 0)
			{
				*recs = r;
				*count = 1;
				return 1;
			}
			if (got < 0)
			{
				const xxl_error *e = xxl_sorter_error(s->over);

				xxl_error_set(&s->part.err, e->code, e->sys_errno, "%s", e->message);
				return -(int) xxl_part_fail(&s->part);
			}
			end_overflow(s);
			free_chain(s, &s->bd, b);
			if (alloc_area(s) != XXL_OK || (s->ahead && ahead_start(s, s->cur + 1) != XXL_OK))
				return -(int) xxl_part_fail(&s->part);
			continue;
		}
		if (s->cur % 2 == 1)
		{
			/* one key: the blocks as they are */
			size_t		n;

			if (s->cur_block * s->bd.per >= b->count)
			{
				free_chain(s, &s->bd, b);
				continue;
			}
			if (read_block(s, &s->bd, b, s->cur_block++, s->rbuf, &n, &s->part.err) != XXL_OK ||
				xxl_part_canceled(&s->part))
				return -(int) xxl_part_fail(&s->part);
			*recs = s->rbuf;
			*count = n;
			return 1;
		}
		if (s->cur_started)
		{
			if (s->ahead)
				ahead_give_back(s->ahead);
			free_chain(s, &s->bd, b);
			continue;
		}
		s->cur_started = true;
		if (b->count > s->p.cap)
		{
			/* the worker stops before it; the core sorter takes the areas' memory */
			ahead_stop(s);
			if (sort_overflow(s, b) != XXL_OK)
				return -(int) xxl_part_fail(&s->part);
			s->cur_started = false;
			s->cur--;			/* the loop's increment brings us back here */
			continue;
		}
		if (s->ahead)
		{
			const unsigned char *sorted = ahead_take(s, s->cur);

			if (sorted == NULL)
				return -(int) xxl_part_fail(&s->part);
			*recs = sorted;
		}
		else
		{
			unsigned char *out = s->area + b->count * s->rec;

			if (load_bucket(s, &s->bd, b, s->area, s->rbuf, &s->part.err) != XXL_OK || xxl_part_canceled(&s->part))
				return -(int) xxl_part_fail(&s->part);
			sort_bucket(s, b, (size_t) b->count, s->area, out, &s->short_keys);
			*recs = out;
		}
		*count = (size_t) b->count;
		return 1;
	}
	ahead_stop(s);				/* it has ended: its counters join ours */
	return 0;
}

/* Statistics, cleanup ---------------------------------------------------------- */

const xxl_error *
xxl_dsort_error(const xxl_dsort *s)
{
	return &s->part.err;
}

static void
add_io(xxl_io_stats *to, const xxl_disks *d)
{
	xxl_io_stats io;

	if (d == NULL)
		return;
	xxl_disks_stats(d, &io);
	if (io.ndisks > to->ndisks)
		to->ndisks = io.ndisks;
	for (int i = 0; i < io.ndisks; i++)
	{
		to->disk[i].bytes_read += io.disk[i].bytes_read;
		to->disk[i].bytes_written += io.disk[i].bytes_written;
		to->disk[i].reads += io.disk[i].reads;
		to->disk[i].writes += io.disk[i].writes;
	}
	to->wait_read_ns += io.wait_read_ns;
	to->wait_write_ns += io.wait_write_ns;
	to->spill_bytes_peak += io.spill_bytes_peak;
	to->direct = io.direct;
}

void
xxl_dsort_stats_get(const xxl_dsort *s, xxl_dsort_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->records = s->puts;
	if (s->bk)
	{
		st->buckets = s->nsp + 1;
		for (size_t j = 0; j < s->nsp; j++)
			st->equal_buckets += s->heavy[j] ? 1 : 0;
		st->buckets += st->equal_buckets;
	}
	st->overflows = s->overflows;
	st->short_keys = s->short_keys;
	st->async = s->p.pipe_batch > 0;
	st->sorted_ahead = s->p.areas == 3;
	st->pipe_wait_ns = s->wait_ns + (s->pipe ? xxl_pipe_wait_ns(s->pipe) : 0);
	st->largest_bucket = s->largest;
	st->bucket_capacity = s->p.cap;
	st->block_size = s->bd.block;
	st->memory_peak = s->part.budget.peak > s->peak_before_output ? s->part.budget.peak : s->peak_before_output;
	st->memory_limit = s->cfg.memory;
	st->output_peak = s->phase == DS_OUTPUT ? s->part.budget.peak : 0;
	add_io(&st->io, s->sd.disks);
	add_io(&st->io, s->bd.disks);
	if (s->sd.disks && s->bd.disks)
		st->io.direct = xxl_disks_direct(s->sd.disks) && xxl_disks_direct(s->bd.disks);
}

void
xxl_dsort_destroy(xxl_dsort *s)
{
	if (s == NULL)
		return;
	xxl_pipe_destroy(s->pipe);
	ahead_free(s);
	end_overflow(s);
	free_chain(s, &s->sd, &s->stage);
	if (s->bk)
	{
		for (size_t b = 0; b < s->nbk; b++)
			free_chain(s, &s->bd, &s->bk[b]);
		xxl_part_free(&s->part, s->bk, s->nbk * sizeof(ds_chain));
	}
	xxl_part_free(&s->part, s->wbuf, s->nwbuf * s->bd.block);
	xxl_part_free(&s->part, s->rbuf, s->bd.block);
	xxl_part_free(&s->part, s->sbuf, s->p.stage_block);
	xxl_part_free(&s->part, s->sample, s->p.sample_cap * sizeof(dkey));
	xxl_part_free(&s->part, s->heavy, s->sp_cap);
	if (s->cell)
		xxl_part_free(&s->part, s->cell, (((size_t) 1 << s->tbits) + 1) * sizeof(uint32_t));
	xxl_part_free(&s->part, s->sp, s->sp_cap * sizeof(dkey));
	free_area(s);
	xxl_disks_close(s->bd.disks);
	xxl_disks_close(s->sd.disks);
	free(s);
}
