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
#include "core/dsort_internal.h"

/* Planning ------------------------------------------------------------------ */

size_t
ds_max_block_of(const xxl_dsort_config *c)
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
int
ds_table_bits(size_t nsp)
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
		xxl_budget_charge((((size_t) 1 << ds_table_bits(nsp)) + 1) * sizeof(uint32_t));
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

/* What a record takes in the pipe: tagged with its bucket where the caller finds it. */
static size_t
pipe_rec(const xxl_dsort_config *c)
{
	return c->record_size + (c->presampled && c->caller_buckets ? DS_TAG : 0);
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
	p->pipe_batch = c->async ? xxl_pipe_batch_for(avail) / pipe_rec(c) * pipe_rec(c) : 0;
	avail -= XXL_PIPE_BATCHES * p->pipe_batch;
	Bs = avail / 16;
	if (Bs > STAGE_BLOCK_MAX)
		Bs = STAGE_BLOCK_MAX;
	if (Bs > ds_max_block_of(c))
		Bs = ds_max_block_of(c);
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

/* Creation --------------------------------------------------------------------- */

static xxl_status take_batch(void *arg, const unsigned char *batch, size_t len, xxl_error *err);

xxl_status
ds_alloc_area(xxl_dsort *s)
{
	s->area_bytes = (size_t) (s->p.areas * s->p.cap * s->rec);
	s->area = xxl_part_alloc(&s->part, s->area_bytes ? s->area_bytes : 1);
	return s->area ? XXL_OK : s->part.err.code;
}

void
ds_free_area(xxl_dsort *s)
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
		if (ds_alloc_area(s) != XXL_OK)
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
			if (s->sbuf == NULL || ds_open_disk(s, &s->sd, p.stage_block, &s->part.err) != XXL_OK)
				goto failed;
		}
		if (p.pipe_batch)
		{
			s->pipe = xxl_pipe_create(p.pipe_batch, XXL_PIPE_BATCHES, take_batch, s, &s->part.budget, &s->part.err);
			if (s->pipe == NULL)
				goto failed;
			s->tagged = config->presampled && config->caller_buckets;
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


/*
 * caller_buckets: a presampled sort with a pipe has its splitters before the
 * first record, so the caller can find each record's bucket and hand it
 * over with the record (a 4-byte tag in front), the worker only copying it
 * into its bucket.  The search is about half of the distribution: this pays
 * where the caller would otherwise wait for the worker.
 */
static inline size_t
tagged_size(const xxl_dsort *s)
{
	return DS_TAG + s->rec;
}

static inline void
tag_record(const xxl_dsort *s, unsigned char *at, const unsigned char *rec)
{
	uint32_t	b = (uint32_t) bucket_of(s, key_of_rec(rec, s->ks, s->rec));

	memcpy(at, &b, DS_TAG);
	xxl_copy_small(at + DS_TAG, rec, s->rec);
}

/*
 * n records into the pipe, each after its bucket, a stage at a time; the
 * splitters come from the sample the caller offered, before the first.
 */
static xxl_status
put_tagged(xxl_dsort *s, const unsigned char *r, size_t n)
{
	size_t		per = XXL_PIPE_STAGE_BYTES / tagged_size(s);

	if (s->bk == NULL && ds_start_distribution(s, &s->part.err) != XXL_OK)
		return xxl_part_fail(&s->part);
	for (size_t i = 0; i < n; i += per)
	{
		size_t		k = n - i < per ? n - i : per;
		unsigned char *at = xxl_pipe_space(s->pipe, k * tagged_size(s), &s->part.err);

		if (at == NULL)
			return xxl_part_fail(&s->part);
		for (size_t j = 0; j < k; j++)
			tag_record(s, at + j * tagged_size(s), r + (i + j) * s->rec);
	}
	return XXL_OK;
}

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
		return ds_distribute_one(s, rec, err);
	if (s->cfg.presampled)
	{
		if (ds_start_distribution(s, err) != XXL_OK)
			return err->code;
		return ds_distribute_one(s, rec, err);
	}
	if (s->stage.count % s->p.stride == 0 && s->nsample < s->p.sample_cap)
		s->sample[s->nsample++] = key_of_rec(rec, s->ks, s->rec);
	xxl_copy_small(s->sbuf + (size_t) s->stage.fill * s->rec, rec, s->rec);
	s->stage.count++;
	if (++s->stage.fill == s->sd.per)
	{
		s->stage.fill = 0;
		return ds_write_block(s, &s->sd, &s->stage, s->sbuf, s->sd.per, err);
	}
	return XXL_OK;
}

/* The worker's side of an asynchronous sort: batches of records. */
static xxl_status
take_batch(void *arg, const unsigned char *batch, size_t len, xxl_error *err)
{
	xxl_dsort  *s = arg;

	if (s->tagged)
	{
		for (size_t at = 0; at < len; at += tagged_size(s))
		{
			uint32_t	b;

			memcpy(&b, batch + at, DS_TAG);
			if (ds_distribute_to(s, batch + at + DS_TAG, b, err) != XXL_OK)
				return err->code;
		}
		return XXL_OK;
	}
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
	if (s->tagged)
		return put_tagged(s, rec, 1);
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
	if (s->tagged)
		return put_tagged(s, r, n);
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
		if (ds_distribute_one(s, r + i * s->rec, &s->part.err) != XXL_OK)
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
	st->helped_parts = s->helped_parts;
	st->caller_buckets = s->tagged;
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
	ds_ahead_free(s);
	ds_helper_free(s);
	ds_end_overflow(s);
	ds_free_chain(s, &s->sd, &s->stage);
	if (s->bk)
	{
		for (size_t b = 0; b < s->nbk; b++)
			ds_free_chain(s, &s->bd, &s->bk[b]);
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
	ds_free_area(s);
	xxl_disks_close(s->bd.disks);
	xxl_disks_close(s->sd.disks);
	free(s);
}

