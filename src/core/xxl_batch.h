/*
 * xxl_batch.h — the one contract of the engine's batch readers, and a
 * record-at-a-time reader over any of them.
 *
 * Every part that hands out fixed-size records in order does it as
 * batches: xxl_sorter_read (sort.c), xxl_dsort_read (dsort.c) and
 * xxl_scatter_read (scatter.c) all have the signature of xxl_batch_read_fn
 * and the same contract:
 *
 *   returns 1 with *recs pointing at *count > 0 contiguous records,
 *   0 at the end, or a negative value on error (kept by the part);
 *   the array stays valid until the next call.
 *
 * A consumer that wants one record at a time wraps a part in an xxl_batch
 * and calls xxl_batch_next: one indirect call per batch, none per record.
 */
#ifndef XXL_BATCH_H
#define XXL_BATCH_H

#include <stddef.h>

typedef int (*xxl_batch_read_fn) (void *part, const void **recs, size_t *count);

typedef struct xxl_batch
{
	xxl_batch_read_fn read;
	void	   *part;
	size_t		rec_size;
	const unsigned char *p;		/* the batch being handed out */
	size_t		left;
} xxl_batch;

static inline void
xxl_batch_init(xxl_batch *b, xxl_batch_read_fn read, void *part, size_t rec_size)
{
	b->read = read;
	b->part = part;
	b->rec_size = rec_size;
	b->p = NULL;
	b->left = 0;
}

/* The next record: 1 with *rec, 0 at the end, negative on error (in the part). */
static inline int
xxl_batch_next(xxl_batch *b, const unsigned char **rec)
{
	if (b->left == 0)
	{
		const void *recs;
		size_t		count = 0;
		int			got = b->read(b->part, &recs, &count);

		if (got <= 0)
			return got < 0 ? -1 : 0;
		b->p = recs;
		b->left = count;
	}
	*rec = b->p;
	b->p += b->rec_size;
	b->left--;
	return 1;
}

#endif							/* XXL_BATCH_H */
