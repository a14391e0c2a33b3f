/*
 * xxl_heads.h — a merge of sorted streams that arrive from elsewhere (a
 * shard's rows over the network, another operator's output): the caller
 * holds each stream's current record and tells the merge its key; the
 * merge says which stream holds the smallest.  Keys order as the sorter
 * orders them (xxl_key_order); equal keys go to the lower stream first.
 *
 * A binary heap of stream numbers: O(log k) key comparisons per record,
 * memory of a few words per stream, nothing per record.  Used by one
 * thread.
 */
#ifndef XXL_HEADS_H
#define XXL_HEADS_H

#include "core/xxl_keycmp.h"

typedef struct xxl_heads xxl_heads;

/* k streams, none with a head yet; kc as the sorter's (NULL: bytes). NULL when out of memory. */
xxl_heads  *xxl_heads_create(int k, const xxl_key_compare *kc);
void		xxl_heads_free(xxl_heads *h);

/*
 * Stream i's head is now key[0, len) (the bytes stay the caller's and must
 * not change until the next call for i); replaces its former head.
 */
void		xxl_heads_set(xxl_heads *h, int i, const unsigned char *key, uint32_t len);

/* Stream i has ended: it has no head any more. */
void		xxl_heads_end(xxl_heads *h, int i);

/* The stream with the smallest head, or -1 when none has one. */
int			xxl_heads_top(const xxl_heads *h);

#endif							/* XXL_HEADS_H */
