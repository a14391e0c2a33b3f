/*
 * xxl_table_deleted.c — the rows of an xxl table that are deleted, as its
 * readers see them: delete segments read into sorted runs of row
 * positions (xxl_deleted_load), joined with this transaction's deletes not
 * yet written (the bitmaps xxl_table_delete.c records into
 * xxl_pending_deletes), and the per-row answer for fetches by TID and
 * unique checks (xxl_row_deleted).  Also the delete segment's page format,
 * written by a statement's end (xxl_table_delete.c) and by a merge
 * (xxl_deletes_write): runs of positions (xxl_row_pos), the first in the
 * low 40 bits of a word, the length - 1 above.
 *
 * This is the storage level: it reads pages and the pending bitmaps,
 * and decides nothing about who may delete what.
 */
#include "postgres.h"

#include "access/transam.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "pg/table/xxl_table_storage.h"

#define RUN_FIRST_BITS 40
#define RUN_FIRST_MASK ((UINT64CONST(1) << RUN_FIRST_BITS) - 1)
#define RUNS_PER_PAGE ((BLCKSZ - SizeOfPageHeaderData - MAXALIGN(sizeof(XxlPageOpaque))) \
					   / sizeof(uint64))

XxlPending *xxl_pending_deletes = NULL;

bool
xxl_page_bit_run(const XxlPageBits *pb, int *row, int *start)
{
	int			r = *row;

	while (r < XXL_PAGE_ROWS && !xxl_page_bit(pb, r))
		r = pb->bits[r / 64] >> (r % 64) == 0 ? (r / 64 + 1) * 64 : r + 1;
	if (r >= XXL_PAGE_ROWS)
		return false;
	*start = r;
	while (r < XXL_PAGE_ROWS && xxl_page_bit(pb, r))
		r++;
	*row = r;
	return true;
}

/* Reading delete segments --------------------------------------------------------- */

static void
append_run(XxlDeleted *d, int *cap, uint64 first, uint64 end, uint32 segno)
{
	if (d->nruns == *cap)
	{
		*cap = Max(256, 2 * *cap);
		d->first = d->first ? repalloc_huge(d->first, sizeof(uint64) * *cap) :
			palloc_extended(sizeof(uint64) * *cap, MCXT_ALLOC_HUGE);
		d->end = d->end ? repalloc_huge(d->end, sizeof(uint64) * *cap) :
			palloc_extended(sizeof(uint64) * *cap, MCXT_ALLOC_HUGE);
		d->segno = d->segno ? repalloc_huge(d->segno, sizeof(uint32) * *cap) :
			palloc_extended(sizeof(uint32) * *cap, MCXT_ALLOC_HUGE);
	}
	d->first[d->nruns] = first;
	d->end[d->nruns] = end;
	d->segno[d->nruns] = segno;
	d->nruns++;
}

static void
read_segment(Relation rel, const XxlSegment *seg, uint32 segno, XxlDeleted *d, int *cap)
{
	for (BlockNumber b = seg->first_block; b < seg->first_block + seg->npages; b++)
	{
		Buffer		buf = ReadBuffer(rel, b);
		Page		page;
		const uint64 *runs;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (!xxl_page_is(page, XXL_PAGE_DELS) || XXL_OPAQUE(page)->segno != segno)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("block %u of xxl table \"%s\" is not a page of delete segment %u",
							b, RelationGetRelationName(rel), segno)));
		runs = (const uint64 *) ((char *) page + SizeOfPageHeaderData);
		for (int i = 0; i < XXL_OPAQUE(page)->nrows; i++)
		{
			uint64		first = runs[i] & RUN_FIRST_MASK;

			append_run(d, cap, first, first + (runs[i] >> RUN_FIRST_BITS) + 1, segno);
		}
		UnlockReleaseBuffer(buf);
	}
}

static bool
applies(const XxlSegment *seg, XxlDeletesSeen seen, Snapshot snapshot)
{
	if (!(seg->flags & XXL_SEG_DELETES) || (seg->flags & XXL_SEG_DEAD))
		return false;
	switch (seen)
	{
		case XXL_DELS_NONE:
			return false;
		case XXL_DELS_SNAPSHOT:
			return xxl_segment_visible(seg, snapshot);
		case XXL_DELS_COMMITTED:
			return xxl_segment_committed(seg);
		case XXL_DELS_LIVE:
			return xxl_segment_committed(seg) || TransactionIdIsInProgress(seg->xmin);
	}
	return false;
}

static int
run_cmp(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a,
				y = *(const uint64 *) b;

	return x < y ? -1 : x > y;
}

static inline void
swap_ptr(void **a, void **b)
{
	void	   *t = *a;

	*a = *b;
	*b = t;
}

/* Sort runs [lo, hi) of d by first (a list not yet in order: pending deletes). */
static void
sort_list(XxlDeleted *d, int lo, int hi)
{
	int			n = hi - lo;
	uint64	   *pairs;

	if (n < 2)
		return;
	pairs = palloc_extended(sizeof(uint64) * 2 * n, MCXT_ALLOC_HUGE);
	for (int i = 0; i < n; i++)
	{
		pairs[2 * i] = d->first[lo + i];
		pairs[2 * i + 1] = d->end[lo + i];
	}
	qsort(pairs, n, 2 * sizeof(uint64), run_cmp);
	for (int i = 0; i < n; i++)
	{
		d->first[lo + i] = pairs[2 * i];
		d->end[lo + i] = pairs[2 * i + 1];
	}
	pfree(pairs);
}

/*
 * Runs sorted by first, the lists that start at starts[0..nlists) (each in
 * order: a delete segment's runs are written in order) merged pairwise;
 * then, unless segno is kept, runs that touch are joined.
 */
static void
normalize(XxlDeleted *d, int *starts, int nlists, bool keep_segno)
{
	int			n = 0;

	if (nlists > 1)
	{
		/* each pass merges neighbouring lists from d's arrays into the others, then swaps */
		uint64	   *first = palloc_extended(sizeof(uint64) * d->nruns, MCXT_ALLOC_HUGE);
		uint64	   *end = palloc_extended(sizeof(uint64) * d->nruns, MCXT_ALLOC_HUGE);
		uint32	   *segno = palloc_extended(sizeof(uint32) * d->nruns, MCXT_ALLOC_HUGE);

		starts[nlists] = d->nruns;
		while (nlists > 1)
		{
			int			m = 0;

			for (int l = 0; l < nlists; l += 2)
			{
				int			i = starts[l],
							ie = starts[l + 1],
							j = ie,
							je = l + 1 < nlists ? starts[l + 2] : ie,
							o = i;

				while (i < ie || j < je)
				{
					int			k = (j >= je || (i < ie && d->first[i] <= d->first[j])) ? i++ : j++;

					first[o] = d->first[k];
					end[o] = d->end[k];
					segno[o] = d->segno[k];
					o++;
				}
				starts[m++] = starts[l];
			}
			starts[m] = d->nruns;
			nlists = m;
			swap_ptr((void **) &first, (void **) &d->first);
			swap_ptr((void **) &end, (void **) &d->end);
			swap_ptr((void **) &segno, (void **) &d->segno);
		}
		pfree(first);
		pfree(end);
		pfree(segno);
	}
	if (keep_segno)
		return;
	for (int i = 0; i < d->nruns; i++)
	{
		if (n > 0 && d->first[i] <= d->end[n - 1])
		{
			d->end[n - 1] = Max(d->end[n - 1], d->end[i]);
			continue;
		}
		d->first[n] = d->first[i];
		d->end[n] = d->end[i];
		n++;
	}
	d->nruns = n;
	if (d->segno)
		pfree(d->segno);
	d->segno = NULL;
}

/* Whether a pending delete state is seen by snapshot (as delete segments would be). */
static bool
pending_seen(const XxlPendingDeletes *pd, Oid relid, Snapshot snapshot)
{
	return pd->pend.relid == relid && snapshot != NULL &&
		snapshot->snapshot_type != SNAPSHOT_ANY &&
		(snapshot->snapshot_type != SNAPSHOT_MVCC || pd->pend.cid < snapshot->curcid);
}

/* This transaction's pending deletes of relid that snapshot sees, as runs. */
static void
add_pending(Oid relid, Snapshot snapshot, XxlDeleted *d, int *cap)
{
	for (XxlPendingDeletes *pd = (XxlPendingDeletes *) xxl_pending_deletes; pd != NULL;
		 pd = (XxlPendingDeletes *) pd->pend.next)
	{
		HASH_SEQ_STATUS it;
		XxlPageBits   *pb;

		if (!pending_seen(pd, relid, snapshot))
			continue;
		hash_seq_init(&it, pd->pages);
		while ((pb = hash_seq_search(&it)) != NULL)
		{
			uint64		base = xxl_row_pos(pb->page, 0);
			int			row = 0,
						start;

			while (xxl_page_bit_run(pb, &row, &start))
				append_run(d, cap, base + start, base + row, PG_UINT32_MAX);
		}
	}
}

void
xxl_deleted_load(Relation rel, const XxlDirectory *dir, XxlDeletesSeen seen, Snapshot snapshot,
				 XxlDeleted *out)
{
	int			cap = 0;
	int		   *starts;
	int			nlists = 0;

	memset(out, 0, sizeof(*out));
	if (seen == XXL_DELS_NONE)
		return;
	starts = palloc(sizeof(int) * (dir->nsegments + 2));
	for (uint32 s = 0; s < dir->nsegments; s++)
		if (applies(&dir->segs[s], seen, snapshot))
		{
			starts[nlists++] = out->nruns;
			read_segment(rel, &dir->segs[s], s, out, &cap);
		}
	/* per-row decisions (LIVE) look at the pending deletes themselves */
	if (seen != XXL_DELS_LIVE && xxl_pending_deletes != NULL)
	{
		starts[nlists++] = out->nruns;
		add_pending(RelationGetRelid(rel),
					seen == XXL_DELS_COMMITTED ? SnapshotSelf : snapshot, out, &cap);
		sort_list(out, starts[nlists - 1], out->nruns);
	}
	normalize(out, starts, nlists, seen == XXL_DELS_LIVE);
	pfree(starts);
}

void
xxl_deleted_free(XxlDeleted *d)
{
	if (d->first)
		pfree(d->first);
	if (d->end)
		pfree(d->end);
	if (d->segno)
		pfree(d->segno);
	memset(d, 0, sizeof(*d));
}

int
xxl_deleted_seek(const XxlDeleted *d, uint64 pos)
{
	int			lo = 0,
				hi = d->nruns;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (d->end[mid] <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
xxl_deleted_find(const XxlDeleted *d, uint64 pos)
{
	int			k = xxl_deleted_seek(d, pos);

	return k < d->nruns && d->first[k] <= pos ? k : -1;
}

/* Whether this transaction's pending deletes of relid that snapshot sees hold pos. */
static bool
pending_has(Oid relid, uint64 pos, Snapshot snapshot)
{
	BlockNumber page = (BlockNumber) (pos / XXL_PAGE_ROWS);
	int			row = (int) (pos % XXL_PAGE_ROWS);

	for (XxlPendingDeletes *pd = (XxlPendingDeletes *) xxl_pending_deletes; pd != NULL;
		 pd = (XxlPendingDeletes *) pd->pend.next)
	{
		XxlPageBits   *pb;

		if (!pending_seen(pd, relid, snapshot))
			continue;
		pb = hash_search(pd->pages, &page, HASH_FIND, NULL);
		if (pb != NULL && xxl_page_bit(pb, row))
			return true;
	}
	return false;
}

bool
xxl_row_deleted(Relation rel, const XxlDeleted *d, const XxlDirectory *dir, uint64 pos,
				Snapshot snapshot)
{
	int			k;
	const XxlSegment *seg;
	TransactionId xmin;

	if (snapshot->snapshot_type == SNAPSHOT_ANY)
		return false;
	/* this transaction's not yet written (all of them for a unique check's snapshot) */
	if (xxl_pending_deletes != NULL && pending_has(RelationGetRelid(rel), pos, snapshot))
		return true;
	k = xxl_deleted_find(d, pos);
	if (k < 0)
		return false;
	seg = &dir->segs[d->segno[k]];
	xmin = seg->xmin;
	if (snapshot->snapshot_type == SNAPSHOT_DIRTY)
	{
		if (xmin != FrozenTransactionId && !TransactionIdIsCurrentTransactionId(xmin) &&
			TransactionIdIsInProgress(xmin))
		{
			snapshot->xmax = xmin;
			return false;
		}
		return xxl_segment_committed(seg);
	}
	return xxl_segment_visible(seg, snapshot);
}

/* Writing delete segments' pages ------------------------------------------------ */

void
xxl_dels_page_init(PGAlignedBlock *image, uint32 segno)
{
	xxl_page_init_kind(image->data, XXL_PAGE_DELS, segno)->row_width = sizeof(uint64);
}

/* The longest run one word holds. */
#define RUN_MAX_ROWS (UINT64CONST(1) << (64 - RUN_FIRST_BITS))

/*
 * Run [first, end) onto a delete segment's page image; a full page is
 * written at the end of rel first (extension lock held) and counted in seg.
 */
void
xxl_dels_put_run(Relation rel, PGAlignedBlock *image, XxlSegment *seg, uint32 segno,
			 uint64 first, uint64 end)
{
	while (first < end)
	{
		uint64		len = Min(end - first, RUN_MAX_ROWS);

		if (XXL_OPAQUE(image->data)->nrows == RUNS_PER_PAGE)
		{
			xxl_write_new_page(rel, image, NULL);
			seg->npages++;
			xxl_dels_page_init(image, segno);
		}
		((uint64 *) (image->data + SizeOfPageHeaderData))[XXL_OPAQUE(image->data)->nrows++] =
			first | ((len - 1) << RUN_FIRST_BITS);
		((PageHeader) image->data)->pd_lower =
			SizeOfPageHeaderData + XXL_OPAQUE(image->data)->nrows * sizeof(uint64);
		first += len;
	}
}

/* A delete segment's last page, if it holds runs. */
void
xxl_dels_finish(Relation rel, PGAlignedBlock *image, XxlSegment *seg)
{
	if (XXL_OPAQUE(image->data)->nrows > 0)
	{
		xxl_write_new_page(rel, image, NULL);
		seg->npages++;
	}
}

void
xxl_deleted_load_from(Relation rel, const XxlDirectory *dir, uint32 from, XxlDeleted *out,
					  uint16 *flags)
{
	int			cap = 0;
	int		   *starts = palloc(sizeof(int) * (dir->nsegments + 2));
	int			nlists = 0;

	memset(out, 0, sizeof(*out));
	*flags = 0;
	for (uint32 s = from; s < dir->nsegments; s++)
		if ((dir->segs[s].flags & XXL_SEG_DELETES) && !(dir->segs[s].flags & XXL_SEG_DEAD))
		{
			starts[nlists++] = out->nruns;
			read_segment(rel, &dir->segs[s], s, out, &cap);
			*flags |= dir->segs[s].flags & XXL_SEG_UPDATES;
		}
	normalize(out, starts, nlists, false);
	pfree(starts);
}

uint64
xxl_deletes_last(Relation rel, const XxlSegment *seg, uint32 segno)
{
	XxlSegment	last = *seg;
	XxlDeleted	d;
	int			cap = 0;
	uint64		pos = 0;

	if (seg->npages == 0)
		return 0;
	/* its runs are in order: the last page's last one */
	last.first_block = seg->first_block + seg->npages - 1;
	last.npages = 1;
	memset(&d, 0, sizeof(d));
	read_segment(rel, &last, segno, &d, &cap);
	if (d.nruns > 0)
		pos = d.end[d.nruns - 1] - 1;
	xxl_deleted_free(&d);
	return pos;
}

bool
xxl_deletes_write(Relation rel, const XxlDeleted *d, uint64 below, uint32 segno, uint16 flags,
				  XxlSegment *seg)
{
	PGAlignedBlock *image = palloc(sizeof(PGAlignedBlock));

	memset(seg, 0, sizeof(*seg));
	seg->xmin = FrozenTransactionId;
	seg->first_block = RelationGetNumberOfBlocks(rel);
	seg->flags = XXL_SEG_DELETES | flags;
	xxl_dels_page_init(image, segno);
	for (int i = 0; i < d->nruns && d->first[i] < below; i++)
	{
		uint64		end = Min(d->end[i], below);

		CHECK_FOR_INTERRUPTS();
		xxl_dels_put_run(rel, image, seg, segno, d->first[i], end);
		seg->nrows += end - d->first[i];
	}
	xxl_dels_finish(rel, image, seg);
	pfree(image);
	return seg->nrows > 0;
}

