/*
 * docs_internal.h — the document map's state (xxl_docs.h), shared by the
 * in-memory map (docs.c) and its paged form past the limit (docs_paged.c).
 */
#ifndef XXL_DOCS_INTERNAL_H
#define XXL_DOCS_INTERNAL_H

#include "core/text/xxl_docs.h"
#include "core/xxl_pagefile.h"

/* paged: index levels above the entries (2^32 documents need 4) */
#define DOCS_MAX_LEVELS 6
/* the least limit that may page: the environment's slack and a few pages */
#define DOCS_PAGED_MIN (64 * 1024)

typedef struct directory
{
	uint32_t   *first;			/* bucket b: the document holding b << shift */
	uint64_t	buckets;
	int			shift;
} directory;

struct xxl_docs
{
	xxl_error	err;
	size_t		limit;
	/* in memory */
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
	/* level l (1..nlevels): the body start of every page of level l - 1 */
	xxl_pagefile levels[DOCS_MAX_LEVELS + 1];
	uint64_t	span[DOCS_MAX_LEVELS + 1];	/* the documents a record of level l stands for */
	int			nlevels;
	size_t		peak;
};

/* docs_paged.c */
xxl_status	docs_page_out(xxl_docs *d);
xxl_status	docs_paged_add(xxl_docs *d, int64_t id);
xxl_status	docs_paged_finish(xxl_docs *d);
void		docs_paged_close(xxl_docs *d);
uint64_t	docs_paged_field(const xxl_docs *d, uint64_t k, int field);
/* The last document whose first byte, in the space, is at or before p. */
uint64_t	docs_paged_lookup(const xxl_docs *d, uint64_t p, bool sep);

#endif							/* XXL_DOCS_INTERNAL_H */
