/*
 * docs.c — the documents of a corpus with ids (xxl_docs.h): start and id
 * arrays grown as documents come, and one bucket directory per position
 * space built at the end; past the limit, the paged map of docs_paged.c.
 */
#include "core/text/docs_internal.h"

#include <stdlib.h>
#include <string.h>

#define BYTES_PER_DOC (2 * sizeof(uint64_t) + 2 * sizeof(uint32_t))

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
	if (res != NULL && limit >= DOCS_PAGED_MIN)
	{
		d->res = *res;
		d->res.memory = limit;
		d->res.progress = NULL;
		d->may_page = true;
	}
	return d;
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
			return docs_page_out(d);
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
		if (docs_paged_add(d, id) != XXL_OK)
			return d->err.code;
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

static inline uint64_t
start_of(const xxl_docs *d, uint64_t k)
{
	return d->paged ? docs_paged_field(d, k, 0) : d->start[k];
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
	dir->first = malloc(dir->buckets * sizeof(uint32_t));
	if (dir->first == NULL)
		return xxl_error_set(&d->err, XXL_ENOMEM, 0, "could not allocate the document directory");
	for (uint64_t b = 0; b < dir->buckets; b++)
	{
		uint64_t	p = b << dir->shift;

		while (k + 1 < d->count && space_start(d, k + 1, sep) <= p)
			k++;
		dir->first[b] = (uint32_t) k;
	}
	return XXL_OK;
}

xxl_status
xxl_docs_finish(xxl_docs *d)
{
	if (!d->paged && d->count + 1 > d->cap && grow(d) != XXL_OK)
		return d->err.code;
	if (d->paged)
		return docs_paged_finish(d);
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
	*read = *written = *misses = 0;
	if (!d->paged)
		return;
	/* the page files' own counters are folded into the environment at close */
	for (int l = 0; l <= d->nlevels; l++)
	{
		const xxl_pagefile *f = l == 0 ? &d->entries : &d->levels[l];

		*misses += f->misses;
		*read += f->misses * f->page;
		*written += f->records * f->rec_size;
	}
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
		docs_paged_close(d);
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

size_t
xxl_docs_spare(const xxl_docs *d)
{
	/* what it holds now: paged, its caches (the arrays it paged out from are gone) */
	size_t		used = d->paged ? d->env.budget.used : xxl_docs_memory(d);

	return d->limit > used ? d->limit - used : 0;
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
	return d->paged ? (int64_t) docs_paged_field(d, k, 1) : d->id[k];
}

/* The last document whose first byte (in the space) is at or before p. */
static inline uint64_t
lookup(const xxl_docs *d, const directory *dir, uint64_t p, bool sep)
{
	uint64_t	b = p >> dir->shift;
	uint64_t	lo,
				hi;

	if (d->paged)
		return docs_paged_lookup(d, p, sep);
	if (b + 1 >= dir->buckets)
		b = dir->buckets - 2;
	lo = dir->first[b];
	hi = (uint64_t) dir->first[b + 1] + 1;
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
