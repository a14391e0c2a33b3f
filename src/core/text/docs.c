/*
 * docs.c — the documents of a corpus with ids (xxl_docs.h): start and id
 * arrays grown as documents come, and one bucket directory per position
 * space built at the end; past the limit, the same in page files of an
 * environment of their own, read through caches that share the limit.
 */
#include "core/text/xxl_docs.h"

#include "core/xxl_pagefile.h"

#include <stdlib.h>
#include <string.h>

#define BYTES_PER_DOC (2 * sizeof(uint64_t) + 2 * sizeof(uint32_t))
/* paged: a document's start and id; a directory entry */
#define DOC_REC (2 * sizeof(uint64_t))
#define DIR_REC sizeof(uint64_t)
/* the least limit that may page: the environment's slack and a few pages */
#define PAGED_MIN (64 * 1024)

typedef struct directory
{
	uint32_t   *first;			/* bucket b: the document holding b << shift */
	xxl_pagefile pf;			/* paged: the same entries, 8 bytes each */
	uint64_t	buckets;
	int			shift;
} directory;

struct xxl_docs
{
	xxl_error	err;
	size_t		limit;
	uint64_t   *start;			/* body starts, count + 1 entries (a sentinel) */
	int64_t    *id;
	uint64_t	count,
				cap,
				bytes;
	directory	body,
				sep;
	/* paged: past the limit, the map moves to page files */
	xxl_resources res;
	bool		may_page,
				paged,
				failed;
	xxl_env		env;
	xxl_pagefile entries;		/* start, id per document, and the sentinel */
	size_t		peak;
};

static size_t
docs_min_memory(void)
{
	return PAGED_MIN;
}

static const xxl_env_plan docs_plan = {"text", 0, docs_min_memory, xxl_env_stream_block};

xxl_docs *
xxl_docs_create(size_t limit, xxl_error *err)
{
	return xxl_docs_create_paging(limit, NULL, err);
}

xxl_docs *
xxl_docs_create_paging(size_t limit, const xxl_resources *res, xxl_error *err)
{
	xxl_docs   *d = calloc(1, sizeof(*d));

	if (d == NULL)
	{
		xxl_error_set(err, XXL_ENOMEM, 0, "could not allocate the document map");
		return NULL;
	}
	d->limit = limit;
	if (res != NULL && limit >= PAGED_MIN)
	{
		d->res = *res;
		d->res.memory = limit;
		d->res.progress = NULL;
		d->may_page = true;
	}
	return d;
}

static xxl_status
env_failed(xxl_docs *d)
{
	return xxl_error_set(&d->err, d->env.err.code ? d->env.err.code : XXL_EIO, d->env.err.sys_errno,
						 "the document map: %s", d->env.err.message);
}

/*
 * The arrays have reached the limit: the map goes on in a page file (the
 * arrays, two thirds of the limit, and the file's page beside them are
 * within it while they are copied).
 */
static xxl_status
page_out(xxl_docs *d)
{
	if (xxl_env_open(&d->env, &d->res, &docs_plan) != XXL_OK)
	{
		xxl_error_set(&d->err, d->env.err.code, 0, "the document map: %s", d->env.err.message);
		return d->err.code;
	}
	d->paged = true;
	if (xxl_pagefile_open(&d->entries, &d->env, XXL_ALIGN, DOC_REC) != XXL_OK)
		return env_failed(d);
	for (uint64_t k = 0; k < d->count; k++)
	{
		uint64_t	rec[2] = {d->start[k], (uint64_t) d->id[k]};

		if (xxl_pagefile_append(&d->entries, rec) != XXL_OK)
			return env_failed(d);
	}
	d->peak = d->cap * (sizeof(uint64_t) + sizeof(int64_t)) + d->env.budget.used;
	free(d->start);
	free(d->id);
	d->start = NULL;
	d->id = NULL;
	d->cap = 0;
	return XXL_OK;
}

static xxl_status
grow(xxl_docs *d)
{
	uint64_t	cap = d->cap ? d->cap * 2 : 1024;
	uint64_t   *start;
	int64_t    *id;

	if (cap * BYTES_PER_DOC > d->limit || cap >= UINT32_MAX)
	{
		if (d->may_page && d->count + 1 < UINT32_MAX)
			return page_out(d);
		if (d->count + 1 >= UINT32_MAX || (d->count + 2) * BYTES_PER_DOC > d->limit)
			return xxl_error_set(&d->err, XXL_ENOMEM, 0,
								 "too many documents for the memory budget: %llu documents take "
								 "%llu bytes of the document map, which may use %zu",
								 (unsigned long long) (d->count + 1),
								 (unsigned long long) ((d->count + 1) * BYTES_PER_DOC), d->limit);
		cap = d->limit / BYTES_PER_DOC;
		if (cap >= UINT32_MAX)
			cap = UINT32_MAX - 1;
	}
	start = realloc(d->start, (cap + 1) * sizeof(uint64_t));
	if (start == NULL)
		return xxl_error_set(&d->err, XXL_ENOMEM, 0, "could not grow the document map");
	d->start = start;
	id = realloc(d->id, cap * sizeof(int64_t));
	if (id == NULL)
		return xxl_error_set(&d->err, XXL_ENOMEM, 0, "could not grow the document map");
	d->id = id;
	d->cap = cap;
	return XXL_OK;
}

xxl_status
xxl_docs_add(xxl_docs *d, int64_t id, uint64_t len)
{
	if (!d->paged && d->count + 1 > d->cap && grow(d) != XXL_OK)
		return d->err.code;
	if (d->paged)
	{
		uint64_t	rec[2] = {d->bytes, (uint64_t) id};

		if (d->count + 1 >= UINT32_MAX)
			return xxl_error_set(&d->err, XXL_ENOMEM, 0, "a corpus takes at most %u documents",
								 UINT32_MAX - 1);
		if (xxl_pagefile_append(&d->entries, rec) != XXL_OK)
			return env_failed(d);
	}
	else
	{
		d->start[d->count] = d->bytes;
		d->id[d->count] = id;
	}
	d->count++;
	d->bytes += len;
	return XXL_OK;
}

/*
 * A paged read that failed: the map answers with harmless values from then
 * on (document 0, ends past every position) and the caller, which checks
 * xxl_docs_failed before it hands anything out, raises the error.
 */
static void
read_failed(xxl_docs *d)
{
	if (!d->failed)
		env_failed(d);
	d->failed = true;
}

/* Field f (0: start, 1: id) of document k's paged entry. */
static inline uint64_t
paged_field(const xxl_docs *cd, uint64_t k, int f)
{
	/* the caches are not the map's state: lookups stay const for callers */
	xxl_docs   *d = (xxl_docs *) cd;
	const unsigned char *r;
	uint64_t	v;

	if (d->failed || xxl_pagefile_get(&d->entries, k, &r) != XXL_OK)
	{
		read_failed(d);
		return f == 0 ? UINT64_MAX / 2 : 0;
	}
	memcpy(&v, r + f * sizeof(uint64_t), sizeof(v));
	return v;
}

static inline uint64_t
start_of(const xxl_docs *d, uint64_t k)
{
	return d->paged ? paged_field(d, k, 0) : d->start[k];
}

static inline uint64_t
dir_first(const xxl_docs *cd, const directory *dir, uint64_t b)
{
	xxl_docs   *d = (xxl_docs *) cd;
	const unsigned char *r;
	uint64_t	v;

	if (!d->paged)
		return dir->first[b];
	if (d->failed || xxl_pagefile_get((xxl_pagefile *) &dir->pf, b, &r) != XXL_OK)
	{
		read_failed(d);
		return 0;
	}
	memcpy(&v, r, sizeof(v));
	return v;
}

/* Position of document k's first byte in the given space. */
static inline uint64_t
space_start(const xxl_docs *d, uint64_t k, bool sep)
{
	return start_of(d, k) + (sep ? k : 0);
}

static xxl_status
build_directory(xxl_docs *d, directory *dir, bool sep)
{
	uint64_t	total = d->bytes + (sep ? d->count : 0);
	uint64_t	k = 0;

	dir->shift = 0;
	/* about one document per bucket */
	while (dir->shift < 40 && (total >> dir->shift) > d->count)
		dir->shift++;
	dir->buckets = (total >> dir->shift) + 2;
	if (d->paged)
	{
		if (xxl_pagefile_open(&dir->pf, &d->env, XXL_ALIGN, DIR_REC) != XXL_OK)
			return env_failed(d);
	}
	else
	{
		dir->first = malloc(dir->buckets * sizeof(uint32_t));
		if (dir->first == NULL)
			return xxl_error_set(&d->err, XXL_ENOMEM, 0, "could not allocate the document directory");
	}
	for (uint64_t b = 0; b < dir->buckets; b++)
	{
		uint64_t	p = b << dir->shift;

		while (k + 1 < d->count && space_start(d, k + 1, sep) <= p)
			k++;
		if (!d->paged)
			dir->first[b] = (uint32_t) k;
		else if (xxl_pagefile_append(&dir->pf, &k) != XXL_OK)
			return env_failed(d);
	}
	if (d->failed)
		return d->err.code;
	return XXL_OK;
}

/*
 * The paged map's end: the entries' cache takes half of what the
 * environment has, each directory's a quarter (their pages are written
 * while the entries are read in order, so the entries' cache comes first).
 */
/*
 * A cache's bytes: a part of what the environment has free but keep, less
 * an eighth for the tags and the rounding of what is charged.
 */
static size_t
cache_share(xxl_docs *d, size_t keep, size_t parts)
{
	size_t		avail = xxl_budget_available(&d->env.budget);

	avail = avail > keep ? avail - keep : 0;
	avail /= parts;
	return avail - avail / 8;
}

static xxl_status
finish_paged(xxl_docs *d)
{
	uint64_t	rec[2] = {d->bytes, 0};

	if (xxl_pagefile_append(&d->entries, rec) != XXL_OK)
		return env_failed(d);
	/* beside the entries' cache: the two directories' pages being written */
	if (xxl_pagefile_finish(&d->entries, cache_share(d, 2 * XXL_ALIGN, 2)) != XXL_OK ||
		build_directory(d, &d->body, false) != XXL_OK ||
		xxl_pagefile_finish(&d->body.pf, cache_share(d, XXL_ALIGN, 2)) != XXL_OK ||
		build_directory(d, &d->sep, true) != XXL_OK ||
		xxl_pagefile_finish(&d->sep.pf, cache_share(d, 0, 1)) != XXL_OK)
		return d->failed ? d->err.code : env_failed(d);
	if (d->env.budget.peak > d->peak)
		d->peak = d->env.budget.peak;
	return XXL_OK;
}

xxl_status
xxl_docs_finish(xxl_docs *d)
{
	if (!d->paged && d->count + 1 > d->cap && grow(d) != XXL_OK)
		return d->err.code;
	if (d->paged)
		return finish_paged(d);
	d->start[d->count] = d->bytes;
	if (build_directory(d, &d->body, false) != XXL_OK ||
		build_directory(d, &d->sep, true) != XXL_OK)
		return d->err.code;
	return XXL_OK;
}

bool
xxl_docs_failed(const xxl_docs *d)
{
	return d->failed;
}

bool
xxl_docs_paged(const xxl_docs *d)
{
	return d->paged;
}

void
xxl_docs_io(const xxl_docs *d, uint64_t *read, uint64_t *written, uint64_t *misses)
{
	const xxl_pagefile *pf[3] = {&d->entries, &d->body.pf, &d->sep.pf};

	*read = *written = *misses = 0;
	if (!d->paged)
		return;
	for (int i = 0; i < 3; i++)
		*misses += pf[i]->misses;
	/* the page files' own counters are folded into the environment at close */
	*read = *misses * XXL_ALIGN;
	*written = (d->entries.records * DOC_REC + (d->body.pf.records + d->sep.pf.records) * DIR_REC);
}

const xxl_error *
xxl_docs_error(const xxl_docs *d)
{
	return &d->err;
}

void
xxl_docs_destroy(xxl_docs *d)
{
	if (d == NULL)
		return;
	free(d->start);
	free(d->id);
	free(d->body.first);
	free(d->sep.first);
	if (d->paged)
	{
		xxl_pagefile_close(&d->sep.pf);
		xxl_pagefile_close(&d->body.pf);
		xxl_pagefile_close(&d->entries);
		xxl_env_close(&d->env);
	}
	free(d);
}

uint64_t
xxl_docs_count(const xxl_docs *d)
{
	return d->count;
}

uint64_t
xxl_docs_bytes(const xxl_docs *d)
{
	return d->bytes;
}

size_t
xxl_docs_memory(const xxl_docs *d)
{
	if (d->paged)
		return d->peak > d->env.budget.peak ? d->peak : d->env.budget.peak;
	return (size_t) (d->cap * (sizeof(uint64_t) + sizeof(int64_t)) +
					 (d->body.buckets + d->sep.buckets) * sizeof(uint32_t));
}

uint64_t
xxl_docs_start(const xxl_docs *d, uint64_t k)
{
	return start_of(d, k);
}

uint64_t
xxl_docs_end(const xxl_docs *d, uint64_t k)
{
	return start_of(d, k + 1);
}

int64_t
xxl_docs_id(const xxl_docs *d, uint64_t k)
{
	return d->paged ? (int64_t) paged_field(d, k, 1) : d->id[k];
}

/* The last document whose first byte (in the space) is at or before p. */
static inline uint64_t
lookup(const xxl_docs *d, const directory *dir, uint64_t p, bool sep)
{
	uint64_t	b = p >> dir->shift;
	uint64_t	lo,
				hi;

	if (b + 1 >= dir->buckets)
		b = dir->buckets - 2;
	lo = dir_first(d, dir, b);
	hi = dir_first(d, dir, b + 1) + 1;
	if (hi > d->count)
		hi = d->count;
	/* the answer is in [lo, hi): the last k with space_start(k) <= p */
	while (hi - lo > 1)
	{
		uint64_t	mid = lo + (hi - lo) / 2;

		if (space_start(d, mid, sep) <= p)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

uint64_t
xxl_docs_find(const xxl_docs *d, uint64_t p)
{
	return lookup(d, &d->body, p, false);
}

bool
xxl_docs_from_separated(const xxl_docs *d, uint64_t q, uint64_t *body, uint64_t *doc)
{
	uint64_t	k = lookup(d, &d->sep, q, true);

	*doc = k;
	*body = q - k;
	return *body < start_of(d, k + 1);
}
