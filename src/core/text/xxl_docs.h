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
 * finishes within the bucket.  Memory: 24 bytes per document, bounded by
 * the limit given at creation (XXL_ENOMEM past it).
 */
#ifndef XXL_DOCS_H
#define XXL_DOCS_H

#include "core/xxl_common.h"

typedef struct xxl_docs xxl_docs;

xxl_docs   *xxl_docs_create(size_t limit, xxl_error *err);
/* Append the next document: its id and body length in bytes. */
xxl_status	xxl_docs_add(xxl_docs *d, int64_t id, uint64_t len);
/* No more documents: build the lookup directories. */
xxl_status	xxl_docs_finish(xxl_docs *d);
const xxl_error *xxl_docs_error(const xxl_docs *d);
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
