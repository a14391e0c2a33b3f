/*
 * xxl_docs.h — the documents of a corpus with ids: where each one starts in
 * the concatenation of their bodies, its id, and lookups from a position to
 * its document, in two position spaces:
 *   body space: the bodies back to back (what SQL calls pos, 0-based here);
 *   separated space: every document followed by one separator, the text the
 *   suffix sorter sees when documents must not run into each other, so that
 *   document k's byte at offset o sits at start(k) + k + o and its separator
 *   at start(k) + k + len(k).
 * Lookups are O(1) expected: a directory of one entry per bucket of about
 * the mean document length points into the start array, and a binary search
 * finishes within the bucket.  Memory: 24 bytes per document while they fit
 * the limit given at creation.  Past it, a map made with resources moves its
 * entries (16 bytes a document) to page files in the resources' spill
 * directories, with an index of their pages' starts (docs_paged.c), read
 * through caches within the limit: a lookup then costs a page read where
 * the entries' cache misses.
 * One made without resources fails with XXL_ENOMEM past the limit.
 *
 * A paged read that fails does not stop a lookup: it answers harmless
 * values, and every user checks xxl_docs_failed before it hands out what
 * it found.  Lookups come from the owner thread only.
 */
#ifndef XXL_DOCS_H
#define XXL_DOCS_H

#include "core/xxl_common.h"
#include "core/xxl_io.h"

typedef struct xxl_docs xxl_docs;

/* Within the limit only. */
xxl_docs   *xxl_docs_create(size_t limit, xxl_error *err);
/* Paged past the limit (at least 128 kB; below, as xxl_docs_create). */
xxl_docs   *xxl_docs_create_paging(size_t limit, const xxl_resources *res, xxl_error *err);
/* Append the next document: its id and body length in bytes. */
xxl_status	xxl_docs_add(xxl_docs *d, int64_t id, uint64_t len);
/* No more documents: build the lookup directories. */
xxl_status	xxl_docs_finish(xxl_docs *d);
const xxl_error *xxl_docs_error(const xxl_docs *d);
/* Whether a paged read failed (the error in xxl_docs_error). */
bool		xxl_docs_failed(const xxl_docs *d);
bool		xxl_docs_paged(const xxl_docs *d);
/* Paged: bytes read (pages missed) and written, and the caches' misses. */
void		xxl_docs_io(const xxl_docs *d, uint64_t *read, uint64_t *written, uint64_t *misses);
void		xxl_docs_destroy(xxl_docs *d);

uint64_t	xxl_docs_count(const xxl_docs *d);
/* Total body bytes. */
uint64_t	xxl_docs_bytes(const xxl_docs *d);
size_t		xxl_docs_memory(const xxl_docs *d);

/* Document k's body start, end (exclusive) and id. */
uint64_t	xxl_docs_start(const xxl_docs *d, uint64_t k);
uint64_t	xxl_docs_end(const xxl_docs *d, uint64_t k);
int64_t		xxl_docs_id(const xxl_docs *d, uint64_t k);

/* The document holding body position p (p < xxl_docs_bytes). */
uint64_t	xxl_docs_find(const xxl_docs *d, uint64_t p);

/*
 * Separated position q: false if q is a separator; else true with its body
 * position and document.
 */
bool		xxl_docs_from_separated(const xxl_docs *d, uint64_t q, uint64_t *body,
									uint64_t *doc);

#endif							/* XXL_DOCS_H */
