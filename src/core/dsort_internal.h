/*
 * dsort_internal.h — the distribution sort's state and the helpers its
 * files share: dsort.c, dsort_chain.c, dsort_distribute.c, dsort_output.c.
 */
#ifndef XXL_DSORT_INTERNAL_H
#define XXL_DSORT_INTERNAL_H

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
typedef struct ds_helper ds_helper;

struct xxl_dsort
{
	xxl_dsort_config cfg;
	xxl_part	part;			/* error, budget, cancel hook */
	dsort_phase phase;
	size_t		rec,
				ks;
	ds_plan		p;
	xxl_pipe   *pipe;			/* asynchronous: the worker takes the records */
	bool		tagged;			/* ... each after its bucket (caller_buckets) */
	uint64_t	wait_ns;		/* the caller waited for the worker */
	uint64_t	overflows;
	uint64_t	short_keys;
	uint64_t	helped_parts;	/* parts of buckets a second thread sorted (ds_share) */
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
	ds_helper  *helper;			/* or a thread helping the caller sort (two) */
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

/* dsort.c: planning, creation, input, statistics */
xxl_status ds_alloc_area(xxl_dsort *s);
void ds_free_area(xxl_dsort *s);
size_t ds_max_block_of(const xxl_dsort_config *c);
int ds_table_bits(size_t nsp);

/* dsort_chain.c: chains of blocks on disk */
void ds_free_chain(xxl_dsort *s, ds_disk *d, ds_chain *c);
xxl_status ds_open_disk(xxl_dsort *s, ds_disk *d, size_t block, xxl_error *err);
xxl_status ds_read_block(const xxl_dsort *s, ds_disk *d, const ds_chain *c, uint64_t k, unsigned char *buf,
		   size_t *n, xxl_error *err);
xxl_status ds_write_block(xxl_dsort *s, ds_disk *d, ds_chain *c, unsigned char *data, size_t n, xxl_error *err);

/* dsort_distribute.c: splitters and distribution */
xxl_status ds_start_distribution(xxl_dsort *s, xxl_error *err);

/* dsort_output.c: buckets sorted and handed out */
void ds_ahead_free(xxl_dsort *s);
void ds_helper_start(xxl_dsort *s);
void ds_helper_free(xxl_dsort *s);
xxl_status ds_ahead_start(xxl_dsort *s, size_t from);
void ds_end_overflow(xxl_dsort *s);

/* The per-record paths, inline ------------------------------------------------ */

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

/* Where block k of a chain lies: the extents hold bpe blocks side by side. */
static inline xxl_bid
ds_block_bid(const ds_disk *d, const ds_chain *c, uint64_t k)
{
	return c->ext[k / d->bpe] + (k % d->bpe) * d->block;
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

/* Bytes of the bucket a tagged pipe carries in front of each record. */
#define DS_TAG 4

/* One record into physical bucket bucket (the per-record path: inline). */
static inline xxl_status
ds_distribute_to(xxl_dsort *s, const unsigned char *p, size_t bucket, xxl_error *err)
{
	ds_chain   *b = &s->bk[bucket];
	unsigned char *w = s->wbuf + (size_t) b->buf * s->bd.block;

	/* the range of a bucket's keys matters only for keys longer than 8 bytes */
	if (s->ks > 8)
	{
		dkey		key = key_of_rec(p, s->ks, s->rec);

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
		return ds_write_block(s, &s->bd, b, w, s->bd.per, err);
	}
	return XXL_OK;
}

/* One record into its bucket. */
static inline xxl_status
ds_distribute_one(xxl_dsort *s, const unsigned char *p, xxl_error *err)
{
	return ds_distribute_to(s, p, bucket_of(s, key_of_rec(p, s->ks, s->rec)), err);
}

#endif							/* XXL_DSORT_INTERNAL_H */
