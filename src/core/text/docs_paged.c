/*
 * docs_paged.c — the document map past its limit (xxl_docs.h): the entries
 * (start, id) in a page file of an environment of its own, and above them a
 * static index built as they come: level 1 holds the body start of every
 * page of entries, level 2 that of every page of level 1, and so on up to
 * one page.  A lookup descends a page a level (the small upper levels stay
 * in their caches) and searches one page of entries, so it costs one page
 * read where the entries' cache misses.  The separated space needs no index
 * of its own: document k starts at start(k) + k there, and a key's place in
 * its level says which document it starts.
 */
#include "core/text/docs_internal.h"

#include <stdlib.h>
#include <string.h>

#define DOC_REC (2 * sizeof(uint64_t))
#define KEY_REC sizeof(uint64_t)

static size_t
docs_min_memory(void)
{
	return DOCS_PAGED_MIN;
}

static const xxl_env_plan docs_plan = {"text", 0, docs_min_memory, xxl_env_stream_block};

static xxl_status
env_failed(xxl_docs *d)
{
	return xxl_error_set(&d->err, d->env.err.code ? d->env.err.code : XXL_EIO, d->env.err.sys_errno,
						 "the document map: %s", d->env.err.message);
}

/* Level l's file: the entries at 0, the index above. */
static inline xxl_pagefile *
level_file(xxl_docs *d, int l)
{
	return l == 0 ? &d->entries : &d->levels[l];
}

/*
 * A page of level l - 1 starts at body position key: its key goes to level
 * l, which opens (with the key of that level's first page, which is always
 * document 0's start, 0) when level l - 1 reaches its second page.
 */
static xxl_status
index_key(xxl_docs *d, int l, uint64_t key)
{
	xxl_pagefile *f = &d->levels[l];
	uint64_t	zero = 0;

	if (l > d->nlevels)
	{
		if (l > DOCS_MAX_LEVELS)
			return xxl_error_set(&d->err, XXL_ENOMEM, 0, "the document map has too many documents");
		if (xxl_pagefile_open(f, &d->env, XXL_ALIGN, KEY_REC) != XXL_OK ||
			xxl_pagefile_append(f, &zero) != XXL_OK)
			return env_failed(d);
		d->nlevels = l;
	}
	if (f->records % f->per_page == 0 && index_key(d, l + 1, key) != XXL_OK)
		return d->err.code;
	if (xxl_pagefile_append(f, &key) != XXL_OK)
		return env_failed(d);
	return XXL_OK;
}

static xxl_status
append_entry(xxl_docs *d, uint64_t start, int64_t id)
{
	uint64_t	rec[2] = {start, (uint64_t) id};

	if (d->entries.records > 0 && d->entries.records % d->entries.per_page == 0 &&
		index_key(d, 1, start) != XXL_OK)
		return d->err.code;
	if (xxl_pagefile_append(&d->entries, rec) != XXL_OK)
		return env_failed(d);
	return XXL_OK;
}

/*
 * The arrays have reached the limit: the map goes on in page files (the
 * arrays, two thirds of the limit, and the files' pages beside them are
 * within it while they are copied).
 */
xxl_status
docs_page_out(xxl_docs *d)
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
		if (append_entry(d, d->start[k], d->id[k]) != XXL_OK)
			return d->err.code;
	d->peak = d->cap * (sizeof(uint64_t) + sizeof(int64_t)) + d->env.budget.used;
	free(d->start);
	free(d->id);
	d->start = NULL;
	d->id = NULL;
	d->cap = 0;
	return XXL_OK;
}

xxl_status
docs_paged_add(xxl_docs *d, int64_t id)
{
	if (d->count + 1 >= UINT32_MAX)
		return xxl_error_set(&d->err, XXL_ENOMEM, 0, "a corpus takes at most %u documents",
							 UINT32_MAX - 1);
	return append_entry(d, d->bytes, id);
}

static uint64_t
pages_of(const xxl_pagefile *f)
{
	return (f->records + f->per_page - 1) / f->per_page;
}

/* What a cache may take of what the environment has free: less an eighth for its tags and rounding. */
static size_t
cache_bytes(xxl_docs *d, size_t keep, size_t parts)
{
	size_t		avail = xxl_budget_available(&d->env.budget);

	avail = avail > keep ? avail - keep : 0;
	avail /= parts;
	return avail - avail / 8;
}

/*
 * The sentinel, then the caches: each index level as many pages as it has
 * within an eighth of what is free (the upper levels are a page or a few),
 * the entries the rest, all within half the limit: the other half is left
 * to a resolver's spool (xxl_docs_spare), whose map is read in order.
 */
xxl_status
docs_paged_finish(xxl_docs *d)
{
	size_t		spare = d->limit / 2;

	if (append_entry(d, d->bytes, 0) != XXL_OK)
		return d->err.code;
	for (int l = d->nlevels; l >= 1; l--)
	{
		xxl_pagefile *f = &d->levels[l];
		/* the pages still being written: this level's and those below */
		size_t		want = cache_bytes(d, spare + (size_t) (l + 1) * XXL_ALIGN, 8),
					all = pages_of(f) * (f->page + sizeof(uint64_t));

		if (xxl_pagefile_finish(f, all < want ? all : want) != XXL_OK)
			return env_failed(d);
	}
	if (xxl_pagefile_finish(&d->entries, cache_bytes(d, spare + XXL_ALIGN, 1)) != XXL_OK)
		return env_failed(d);
	d->span[0] = 1;
	for (int l = 1; l <= d->nlevels; l++)
		d->span[l] = d->span[l - 1] * level_file(d, l - 1)->per_page;
	if (d->env.budget.peak > d->peak)
		d->peak = d->env.budget.peak;
	return XXL_OK;
}

void
docs_paged_close(xxl_docs *d)
{
	for (int l = d->nlevels; l >= 1; l--)
		xxl_pagefile_close(&d->levels[l]);
	xxl_pagefile_close(&d->entries);
	xxl_env_close(&d->env);
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

/* Record i of level l: an entry's field (0: start, 1: id), or an index key. */
static inline bool
read_u64(xxl_docs *d, int l, uint64_t i, int field, uint64_t *v)
{
	const unsigned char *r;

	if (d->failed || xxl_pagefile_get(level_file(d, l), i, &r) != XXL_OK)
	{
		read_failed(d);
		return false;
	}
	memcpy(v, r + field * sizeof(uint64_t), sizeof(*v));
	return true;
}

uint64_t
docs_paged_field(const xxl_docs *cd, uint64_t k, int field)
{
	/* the caches are not the map's state: lookups stay const for callers */
	xxl_docs   *d = (xxl_docs *) cd;
	uint64_t	v;

	if (!read_u64(d, 0, k, field, &v))
		return field == 0 ? UINT64_MAX / 2 : 0;
	return v;
}

uint64_t
docs_paged_lookup(const xxl_docs *cd, uint64_t p, bool sep)
{
	xxl_docs   *d = (xxl_docs *) cd;
	uint64_t	page = 0;

	for (int l = d->nlevels; l >= 0; l--)
	{
		xxl_pagefile *f = level_file(d, l);
		uint64_t	lo = page * f->per_page,
					hi = lo + f->per_page;

		if (hi > f->records)
			hi = f->records;
		/* the last record of the page whose start is at or before p (the first's is) */
		while (hi - lo > 1)
		{
			uint64_t	mid = lo + (hi - lo) / 2,
						key;

			if (!read_u64(d, l, mid, 0, &key))
				return 0;
			if (key + (sep ? mid * d->span[l] : 0) <= p)
				lo = mid;
			else
				hi = mid;
		}
		page = lo;
	}
	/* not the sentinel */
	return page < d->count ? page : d->count - 1;
}
