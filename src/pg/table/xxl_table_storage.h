/*
 * xxl_table_storage.h — the storage level of the xxl table access method:
 * the page format, the segment directory, the sets of deleted rows
 * readers apply, the pending-work lists, the table's settings, and the
 * scans (docs/table.md has the design).  Files of this level include no
 * other header of table/; the writers (xxl_table_writers.h) and the
 * planner nodes (xxl_table_nodes.h) build on it.
 *
 * A relation's main fork:
 *  - block 0, the metapage: the segment directory's first entries and the
 *    block numbers of its further pages;
 *  - data pages, each holding rows of one segment (its number in the
 *    page's special space), packed without per-row headers;
 *  - further directory pages, allocated as the directory grows.
 * A segment is the rows one statement inserted, written at the statement's
 * end in the order of the table's key, onto contiguous new pages; it is
 * never changed afterwards.  Its directory entry holds the inserting
 * transaction and command, which decide who sees it.  DELETE (and UPDATE's
 * delete half) adds a delete segment the same way: pages naming the rows
 * it deleted, seen or not as a whole (xxl_table_deleted.c).  Every page is
 * written whole: small segments and the directory through the buffer
 * manager, large segments straight to the file (io/xxl_relfile.h); both
 * WAL-logged as full-page images when the relation needs WAL.
 */
#ifndef XXL_PG_TABLE_STORAGE_H
#define XXL_PG_TABLE_STORAGE_H

#include "access/tableam.h"
#include "access/xact.h"
#include "storage/bufpage.h"
#include "utils/hsearch.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

#include "core/xxl_colpack.h"
#include "pg/table/table.h"
#include "pg/io/io.h"

#define XXL_TABLE_MAGIC 0x78786C54	/* "xxlT" */
#define XXL_TABLE_VERSION 1

#define XXL_META_BLOCK 0

typedef enum XxlPageKind
{
	XXL_PAGE_META = 1,
	XXL_PAGE_DIR = 2,
	XXL_PAGE_DATA = 3,
	XXL_PAGE_DELS = 4,			/* a delete segment's: runs of deleted rows */
	XXL_PAGE_PACKED = 5			/* data, column by column, integers bit-packed */
} XxlPageKind;

/* The special space of every page. */
typedef struct XxlPageOpaque
{
	uint32		magic;
	uint16		kind;			/* XxlPageKind */
	uint16		nrows;			/* data: rows on the page */
	uint32		segno;			/* data: its segment; directory: the next page of the
								 * chain past the metapage's list (0: none) */
	uint16		row_width;		/* data: every row this wide, or 0: offsets */
	uint16		natts;			/* data: columns the rows have (later ones are missing) */
} XxlPageOpaque;

#define XXL_OPAQUE(page) ((XxlPageOpaque *) PageGetSpecialPointer(page))

/*
 * TIDs.  A page holds up to XXL_PAGE_ROWS rows, more than the offsets a
 * TID bitmap takes (MaxHeapTuplesPerPage, 291), so a TID names a slice of
 * XXL_TID_ROWS rows of a page: block = page * XXL_TID_SLICES + row /
 * XXL_TID_ROWS, offset = 1 + row % XXL_TID_ROWS.  TIDs keep the rows'
 * physical order, and bitmap scans work on slices.  The price: a table
 * has at most XXL_MAX_PAGES pages (4 TB).
 */
#define XXL_TID_ROWS 256
#define XXL_TID_SLICES 8
#define XXL_PAGE_ROWS (XXL_TID_ROWS * XXL_TID_SLICES)
#define XXL_MAX_PAGES (MaxBlockNumber / XXL_TID_SLICES)

static inline void
xxl_tid_set(ItemPointer tid, BlockNumber page, int row)
{
	ItemPointerSet(tid, page * XXL_TID_SLICES + row / XXL_TID_ROWS,
				   (OffsetNumber) (1 + row % XXL_TID_ROWS));
}

static inline BlockNumber
xxl_tid_page(ItemPointer tid)
{
	return ItemPointerGetBlockNumberNoCheck(tid) / XXL_TID_SLICES;
}

/* The row a TID names on its page, -1 if it names none. */
static inline int
xxl_tid_row(ItemPointer tid)
{
	OffsetNumber off = ItemPointerGetOffsetNumberNoCheck(tid);

	if (off < 1 || off > XXL_TID_ROWS)
		return -1;
	return (ItemPointerGetBlockNumberNoCheck(tid) % XXL_TID_SLICES) * XXL_TID_ROWS + off - 1;
}

/*
 * A row's position in the table, as delete segments name it: rows of a
 * page are numbered page * XXL_PAGE_ROWS + row, so positions keep the
 * physical order (below 2^40).
 */
static inline uint64
xxl_row_pos(BlockNumber page, int row)
{
	return (uint64) page * XXL_PAGE_ROWS + row;
}

/* Whether page is an initialized xxl page of this kind. */
static inline bool
xxl_page_is(Page page, XxlPageKind kind)
{
	return !PageIsNew(page) && PageGetSpecialSize(page) == MAXALIGN(sizeof(XxlPageOpaque)) &&
		XXL_OPAQUE(page)->magic == XXL_TABLE_MAGIC && XXL_OPAQUE(page)->kind == kind;
}

/* Whether page is a data page, plain or packed. */
static inline bool
xxl_page_is_data(Page page)
{
	return xxl_page_is(page, XXL_PAGE_DATA) || xxl_page_is(page, XXL_PAGE_PACKED);
}

/*
 * A packed data page (xxl_table_packer.c writes it, xxl_table_packed.c
 * reads it) holds rows column by column: after the page header one
 * XxlPackedCol per column (the special space's natts), then each column's
 * NULL bitmap, if it has NULLs (a bit per row), and its values:
 *  - an integer column's (by value, 1, 2, 4 or 8 bytes) bit-packed by
 *    frame of reference or delta (core/xxl_colpack.h; a NULL takes the
 *    base);
 *  - another fixed-width column's bytes back to back (XXL_PACKED_RAW; a
 *    NULL's zeroed);
 *  - a column of variable width (varlenas as rows hold them, cstrings)
 *    either back to back with a 16-bit offset per row and one past the
 *    last (XXL_PACKED_VAR), or as a dictionary (XXL_PACKED_DICT): base
 *    entries with a 16-bit offset each and one past the last, then, from
 *    data + step, a code per row bit-packed in bits (a NULL's is 0).
 * nrows, row_width (0: rows of variable width) and natts in the special
 * space are as on a plain page, and a row's position is its index, as
 * there.  Decoded, a page of variable rows takes at most
 * XXL_PACKED_DECODED_MAX bytes (rows and a 16-bit offset each).
 */
#define XXL_PACKED_RAW 0
#define XXL_PACKED_VAR 3
#define XXL_PACKED_DICT 4
#define XXL_PACKED_DECODED_MAX 65000
typedef struct XxlPackedCol
{
	uint8		enc;			/* XXL_PACKED_* or an xxl_colpack_enc */
	uint8		bits;
	uint16		width;			/* the column's bytes in a plain row (0: variable) */
	uint16		data;			/* where its values start on the page */
	uint16		nulls;			/* where its NULL bitmap starts (0: no NULLs) */
	int64		base;
	int64		step;
	int64		min;			/* integer columns: the least and greatest non-null */
	int64		max;			/* value, sign-extended (min > max: none) */
} XxlPackedCol;

/* Whether a packed column's values are bit-packed integers. */
static inline bool
xxl_packed_is_int(const XxlPackedCol *pc)
{
	return pc->enc == XXL_COLPACK_FOR || pc->enc == XXL_COLPACK_DELTA;
}

/* Segment flags */
#define XXL_SEG_SORTED 0x0001	/* rows in the order of the key it was written with */
#define XXL_SEG_DEAD 0x0002		/* its transaction aborted; VACUUM said so */
#define XXL_SEG_SCATTERED 0x0004	/* written row by row: its pages are anywhere after first_block */
#define XXL_SEG_DELETES 0x0008	/* a delete segment: its pages name rows it deleted (nrows) */
#define XXL_SEG_UPDATES 0x0010	/* DELETES: some of them by UPDATE (they have a new version) */
#define XXL_SEG_REWRITE 0x0020	/* compaction's, not frozen: older snapshots cannot read the table */

/* One directory entry. */
typedef struct XxlSegment
{
	TransactionId xmin;			/* FrozenTransactionId once frozen */
	CommandId	cmin;
	BlockNumber first_block;
	BlockNumber npages;
	uint64		nrows;
	uint16		flags;
	uint16		pad;
	union
	{
		uint32		key_hash;	/* SORTED: xxl_key_hash of the order key it was sorted by */
		BlockNumber end_block;	/* SCATTERED: the block after its last page, once its
								 * statement ended (0: not yet, or written by 0.6) */
	};
} XxlSegment;

/*
 * Whether block may hold rows of seg: its pages, or for a scattered
 * segment whose end is not known, any block from its first on.  Pages
 * outside every extent are garbage a crash left behind (a merge's copy
 * that never counted, xxl_table_merge.c), whatever segment number they
 * carry.
 */
static inline bool
xxl_segment_holds(const XxlSegment *seg, BlockNumber block)
{
	if (block < seg->first_block)
		return false;
	if (seg->flags & XXL_SEG_SCATTERED)
		return seg->end_block == 0 || block < seg->end_block;
	return block < seg->first_block + seg->npages;
}

/*
 * The metapage's contents (after the page header).  The directory's pages
 * past the metapage's own entries are listed in dirpages, the first
 * listed of them; the ones after those form a chain through their special
 * space, whose last page is lastdir.  (Fields after segs came with 0.7: a
 * metapage written before holds zeros there, which mean the same as
 * before.)
 */
#define XXL_META_DIRPAGES 256
#define XXL_META_SEGS 160
typedef struct XxlMeta
{
	uint32		magic;
	uint32		version;
	uint32		nsegments;
	uint32		ndirpages;		/* directory pages in use, listed and chained */
	BlockNumber dirpages[XXL_META_DIRPAGES];
	XxlSegment	segs[XXL_META_SEGS];
	uint32		listed;			/* dirpages this table uses (0: all of them) */
	BlockNumber lastdir;		/* the chain's last page (0: no chain) */
} XxlMeta;

/* Entries per further directory page. */
#define XXL_DIR_SEGS ((BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(XxlPageOpaque))) \
					  / sizeof(XxlSegment))

/* Directory (xxl_table_dir.c) -------------------------------------------- */

/* A copy of the directory, as a scan or VACUUM reads it. */
typedef struct XxlDirectory
{
	uint32		nsegments;
	XxlSegment *segs;
} XxlDirectory;

/* Read the directory (empty when the relation has no metapage yet). */
extern void xxl_dir_load(Relation rel, XxlDirectory *dir);

/*
 * Append an entry and return its segment number.  The caller holds the
 * relation's extension lock (the metapage and directory pages may have to
 * be created).
 */
extern uint32 xxl_dir_append(Relation rel, const XxlSegment *seg);

/* Replace segment segno's entry (its writer, at the end of its statement). */
extern void xxl_dir_update(Relation rel, uint32 segno, const XxlSegment *seg);

/*
 * A merge's switch, atomically (one WAL record): the entries from segno on
 * become segs[0 .. nsegs) (no more than were there), the entries after
 * them are gone, and the directory keeps only the pages it then needs.
 * The caller holds an ACCESS EXCLUSIVE lock.
 */
extern void xxl_dir_truncate(Relation rel, uint32 segno, const XxlSegment *segs, int nsegs);

/* The directory pages in use (the ones a merge must not overwrite), ascending; their count. */
extern int	xxl_dir_pages(Relation rel, BlockNumber **blocks);

/*
 * The segment number the next xxl_dir_append will give, the metapage made
 * if the relation has none (extension lock held).
 */
extern uint32 xxl_dir_prepare(Relation rel);

/*
 * A new page at the end of rel, zeroed and locked exclusively (the caller
 * holds the extension lock, or writes a relation no one else sees yet);
 * 54000 beyond XXL_MAX_PAGES.
 */
extern Buffer xxl_extend(Relation rel, BufferAccessStrategy strategy);

/* A page image as a new page at the end of rel, WAL-logged (extension lock held). */
extern void xxl_write_new_page(Relation rel, PGAlignedBlock *image,
							   BufferAccessStrategy strategy);

/* Whether rows of seg are visible to snapshot. */
extern bool xxl_segment_visible(const XxlSegment *seg, Snapshot snapshot);

/* Whether seg is not dead and committed or this transaction's (ANALYZE, rewrites, deleters). */
extern bool xxl_segment_committed(const XxlSegment *seg);

/*
 * VACUUM's pass over the directory: entries of aborted transactions are
 * marked dead, committed ones older than freeze_limit are frozen.  Returns
 * the oldest unfrozen xmin left (freeze_limit when none is older) and sets
 * the number of rows in live segments and their pages.
 */
extern TransactionId xxl_dir_vacuum(Relation rel, TransactionId freeze_limit,
									double *live_rows, BlockNumber *live_pages,
									double *dead_rows);

/* Pages (xxl_table_page.c) ------------------------------------------------- */

/*
 * Data pages, filled row by row: a new page (in local memory or in a
 * buffer), and a row added to it, the page's bounds and count kept right
 * after each row (a page is never "unfinished").
 */
extern void xxl_page_init(Page page, const XxlRowFormat *fmt, uint32 segno);

/* An empty page of a segment's, of kind, its special space filled in but for the row format. */
extern XxlPageOpaque *xxl_page_init_kind(Page page, XxlPageKind kind, uint32 segno);

/*
 * Add a row: its 1-based position on the page, or 0 when it does not fit
 * (in room, or beyond XXL_PAGE_ROWS rows).
 */
extern int	xxl_page_add(Page page, const char *row, uint32 len);

/* The largest row a page takes. */
extern uint32 xxl_page_max_row(int row_width);

/* A data page's rows as a run's view of them (io/xxl_packed_row.h), but first, n and fmt. */
static inline void
xxl_page_rows(Page page, XxlRowRun *run)
{
	run->base = (const char *) page;
	run->rows = (const char *) page + SizeOfPageHeaderData;
	run->row_width = XXL_OPAQUE(page)->row_width;
	run->end0 = ((PageHeader) page)->pd_special;
}

/*
 * A packed row into a virtual slot, by-reference values copied where
 * they must be into rowcxt (reset first): what fetches of one row share.
 */
extern void xxl_slot_store_row(TupleTableSlot *slot, const XxlRowFormat *fmt, const char *row,
							   MemoryContext rowcxt);

/* Row i (0-based) of a data page, and its length (inline: the scans' per-row path). */
static inline const char *
xxl_page_row(Page page, int i, uint32 *len)
{
	XxlRowRun	run;

	xxl_page_rows(page, &run);
	return xxl_run_row(&run, i, len);
}

/* Packed pages (xxl_table_packed.c) ----------------------------------------- */

/*
 * A segment writer's page in the making (xxl_table_packer.c): rows added
 * one by one until neither a packed nor a plain page holds the next
 * (false: write the page with xxl_packer_finish, then add the row again).
 * NULL from begin: rows of this format are never packed (fixed rows too
 * wide, too many columns, or compression off).  fmt must outlive it.
 */
typedef struct XxlPacker XxlPacker;
extern XxlPacker *xxl_packer_begin(const XxlRowFormat *fmt);
extern bool xxl_packer_add(XxlPacker *pk, const char *row, uint32 len);
extern int	xxl_packer_rows(const XxlPacker *pk);
extern void xxl_packer_finish(XxlPacker *pk, Page page, uint32 segno);
extern void xxl_packer_end(XxlPacker *pk);

/* Where a reader decodes packed pages: rows, or one column's values. */
typedef struct XxlPageBuf
{
	char	   *data;			/* rows */
	Size		size;
	int64	   *vals;			/* the integer columns, XXL_PAGE_ROWS values each */
	int			nvals;			/* columns vals has room for */
	MemoryContext cxt;			/* where they are allocated (NULL: the current context) */
} XxlPageBuf;

extern void xxl_page_buf_init(XxlPageBuf *buf, MemoryContext cxt);
extern void xxl_page_buf_free(XxlPageBuf *buf);

/*
 * A data page's rows as a run (first, n and fmt left to the caller): the
 * page's own, or a packed page's decoded into buf (valid until buf's
 * next use).
 */
extern void xxl_page_open(Page page, XxlPageBuf *buf, XxlRowRun *run);

/* Row i of a data page and its length; a packed page's alone decoded into buf. */
extern const char *xxl_page_row_at(Page page, int i, XxlPageBuf *buf, uint32 *len);

/*
 * The columns cols (attribute numbers) of every row of a packed page, as
 * Datums: column k's at values[k * XXL_PAGE_ROWS + row], its NULLs in
 * isnull likewise.  false (nothing done) when the page is plain or some
 * column is not a bit-packed integer on it: read rows instead.
 */
extern bool xxl_packed_columns(Page page, const AttrNumber *cols, int ncols, Datum *values,
							   bool *isnull);

/* Settings (xxl_table_options.c) --------------------------------------------- */

/* The order key text of rel, or NULL (xxl.table_options). */
extern char *xxl_table_order_by(Oid relid);

/* Store rel's order key (canonical text; NULL removes it), with the extension's rights. */
extern void xxl_table_options_set_order_by(Oid relid, const char *order_by);

/* Forget every setting of relid (a relation made anew under a reused OID). */
extern void xxl_table_options_forget(Oid relid);

/* order_by resolved against desc and written back: names, never positions; defaults left out. */
extern char *xxl_order_by_canonical(TupleDesc desc, const char *order_by);

/* What a sorted segment records of the key it was sorted by (never 0). */
extern uint32 xxl_key_hash(TupleDesc desc, const char *order_by);

/* The object access hook that keeps xxl.table_options in step with the tables. */
extern void xxl_table_options_init(void);

/*
 * A statement's pending work on one table (rows to write, rows to delete),
 * kept in TopTransactionContext until the statement ends; the states of
 * each kind form a list and start with this header (xxl_table_pending.c).
 * relid InvalidOid / cid InvalidCommandId flush every table / command.
 */
typedef struct XxlPending
{
	struct XxlPending *next;
	Oid			relid;
	CommandId	cid;
	TransactionId xid;
	SubTransactionId subid;		/* moves to the parent at subcommit */
	MemoryContext cxt;			/* the state's own memory, deleted with it */
} XxlPending;

extern XxlPending *xxl_pending_find(XxlPending *list, Oid relid, CommandId cid);
extern void xxl_pending_push(XxlPending **list, XxlPending *p, Oid relid, CommandId cid,
							 MemoryContext cxt);
extern void xxl_pending_flush(XxlPending **list, Oid relid, CommandId cid,
							  void (*flush) (XxlPending *));
extern void xxl_pending_subxact(XxlPending **list, SubXactEvent event,
								SubTransactionId mySubid, SubTransactionId parentSubid);

/* Deleted rows (xxl_table_deleted.c) ------------------------------------------------ */

/*
 * Rows deleted, as a reader sees them: runs [first[i], end[i]) of row
 * positions, sorted by first and disjoint; with segno, the delete segment
 * of each run (then runs are not merged).
 */
typedef struct XxlDeleted
{
	int			nruns;
	uint64	   *first;
	uint64	   *end;
	uint32	   *segno;
} XxlDeleted;

/* Which delete segments a reader applies. */
typedef enum XxlDeletesSeen
{
	XXL_DELS_NONE,				/* none (index builds: every row of a committed segment) */
	XXL_DELS_SNAPSHOT,			/* those the snapshot sees */
	XXL_DELS_COMMITTED,			/* committed or this transaction's (ANALYZE, rewrites) */
	XXL_DELS_LIVE				/* all but aborted ones, with segno: decided per row */
} XxlDeletesSeen;

/* The deleted rows of rel that a reader applies (the directory as it read it). */
extern void xxl_deleted_load(Relation rel, const XxlDirectory *dir, XxlDeletesSeen seen,
							 Snapshot snapshot, XxlDeleted *out);
extern void xxl_deleted_free(XxlDeleted *d);

/*
 * A merge's deletes: the runs of the live delete segments among dir's
 * entries from on (all committed), joined; their XXL_SEG_UPDATES into flags.
 */
extern void xxl_deleted_load_from(Relation rel, const XxlDirectory *dir, uint32 from,
								  XxlDeleted *out, uint16 *flags);

/* The last row position delete segment segno names (0: none). */
extern uint64 xxl_deletes_last(Relation rel, const XxlSegment *seg, uint32 segno);

/*
 * The runs of d below position below, written at the end of rel as a
 * frozen delete segment numbered segno (extension lock held) with flags;
 * its entry into seg, not appended.  false: there were none.
 */
extern bool xxl_deletes_write(Relation rel, const XxlDeleted *d, uint64 below, uint32 segno,
							  uint16 flags, XxlSegment *seg);

/* The run that holds pos, or -1. */
extern int	xxl_deleted_find(const XxlDeleted *d, uint64 pos);

/* The first run that ends after pos (nruns if none): where a page's cursor starts. */
extern int	xxl_deleted_seek(const XxlDeleted *d, uint64 pos);

/*
 * On a page whose row 0 is at position base: the first row at or after
 * row that no run from *k on deletes (nrows if none); *k moves past the
 * runs behind it, and *stop is where the next run begins (nrows if on no
 * later row of the page).  Readers return rows [row, *stop) unchecked.
 */
static inline int
xxl_deleted_skip(const XxlDeleted *d, int *k, uint64 base, int row, int nrows, int *stop)
{
	while (*k < d->nruns && d->end[*k] <= base + row)
		(*k)++;
	while (*k < d->nruns && d->first[*k] <= base + row)
	{
		row = (int) Min(d->end[*k] - base, (uint64) nrows);
		(*k)++;
	}
	*stop = *k < d->nruns && d->first[*k] < base + nrows ? (int) (d->first[*k] - base) : nrows;
	return Min(row, nrows);
}

/*
 * A cursor's start on a page whose row 0 is at position base: *k at the
 * first run that ends after base, *stop as xxl_deleted_skip sets it; the
 * first row not deleted.
 */
static inline int
xxl_deleted_page_start(const XxlDeleted *d, int *k, uint64 base, int nrows, int *stop)
{
	*k = d->nruns > 0 ? xxl_deleted_seek(d, base) : 0;
	return xxl_deleted_skip(d, k, base, 0, nrows, stop);
}

/*
 * Whether the row at pos is deleted for snapshot, by the delete segments
 * of d (XXL_DELS_LIVE) or this transaction's pending ones.  A dirty
 * snapshot sees a row whose deleter is still running, with the deleter in
 * its xmax (a unique check then waits for it).
 */
extern bool xxl_row_deleted(Relation rel, const XxlDeleted *d, const XxlDirectory *dir,
							uint64 pos, Snapshot snapshot);


/*
 * This transaction's deletes not yet written: a list (xxl_table_pending.c)
 * of states, one per (table, command), each starting with
 * XxlPendingDeletes.  xxl_table_delete.c records into it and writes it out
 * at the statement's end; readers (xxl_deleted_load, xxl_row_deleted) see
 * what their snapshot sees of it.
 */
#define XXL_PAGE_WORDS (XXL_PAGE_ROWS / 64)

/* The rows deleted on one page, a bit each. */
typedef struct XxlPageBits
{
	BlockNumber page;			/* the hash key */
	uint64		bits[XXL_PAGE_WORDS];
} XxlPageBits;

typedef struct XxlPendingDeletes
{
	XxlPending	pend;			/* table, command, transaction, memory */
	HTAB	   *pages;			/* of XxlPageBits: the pages touched */
} XxlPendingDeletes;

extern XxlPending *xxl_pending_deletes;

static inline bool
xxl_page_bit(const XxlPageBits *pb, int row)
{
	return (pb->bits[row / 64] >> (row % 64)) & 1;
}

/*
 * The next run of deleted rows of a page at or after *row: its first row
 * in *start, *row past its end; false when there is none.
 */
extern bool xxl_page_bit_run(const XxlPageBits *pb, int *row, int *start);

/*
 * A delete segment's pages, written from runs of positions: an empty page
 * image; the run [first, end) onto it (a full page is written at the end
 * of rel first, extension lock held, and counted in seg); its last page,
 * if it holds runs.
 */
extern void xxl_dels_page_init(PGAlignedBlock *image, uint32 segno);
extern void xxl_dels_put_run(Relation rel, PGAlignedBlock *image, XxlSegment *seg,
							 uint32 segno, uint64 first, uint64 end);
extern void xxl_dels_finish(Relation rel, PGAlignedBlock *image, XxlSegment *seg);

/* Scans (xxl_table_scan.c) -------------------------------------------------- */

extern TableScanDesc xxl_scan_begin(Relation rel, Snapshot snapshot, int nkeys,
									struct ScanKeyData *key, ParallelTableScanDesc pscan,
									uint32 flags);
extern void xxl_scan_end(TableScanDesc scan);
extern void xxl_scan_rescan(TableScanDesc scan, struct ScanKeyData *key, bool set_params,
							bool allow_strat, bool allow_sync, bool allow_pagemode);
extern bool xxl_scan_getnextslot(TableScanDesc scan, ScanDirection direction,
								 TupleTableSlot *slot);
extern bool xxl_scan_analyze_next_block(TableScanDesc scan, BlockNumber blockno,
										BufferAccessStrategy bstrategy);
extern bool xxl_scan_analyze_next_tuple(TableScanDesc scan, TransactionId OldestXmin,
										double *liverows, double *deadrows,
										TupleTableSlot *slot);
extern bool xxl_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot,
								  TupleTableSlot *slot);
extern bool xxl_tid_valid(TableScanDesc scan, ItemPointer tid);
extern bool xxl_satisfies_snapshot(Relation rel, TupleTableSlot *slot, Snapshot snapshot);

/*
 * Rows straight from the pages of a sequential scan, for the engine's
 * inputs (no slot, no call per row): a run of rows of one page that are
 * visible and not deleted (io/xxl_packed_row.h).  Valid until the next
 * call; false at the end.  Not to be mixed with xxl_scan_getnextslot on one
 * scan.  Registered with the input module (xxl_input_register_runs).
 */
extern bool xxl_scan_next_run(TableScanDesc scan, XxlRowRun *run);

/*
 * The next row of a sequential scan as the columns cols[0 .. ncols)
 * (attribute numbers, at least 1) into values and isnull, and its TID;
 * by-reference values stay valid until the next call.  false at the end.
 * For the full scan node (xxl_table_fullscan.c), which returns only the
 * columns its plan needs.  Not to be mixed with the other ways of reading
 * one scan.
 */
extern bool xxl_scan_next_columns(TableScanDesc scan, const AttrNumber *cols, int ncols,
								  Datum *values, bool *isnull, ItemPointer tid);

/*
 * The next rows of a sequential scan as columns: n rows of one page, column
 * k's at (*values)[k * XXL_PAGE_ROWS + first .. + n), its NULLs in *isnull
 * likewise; a packed page's straight from its decoded columns.  For
 * consumers that work a column at a time (the aggregate scan).  ncols at
 * most XXL_BYVAL_MAX_COLS; a by-reference column's values are good for
 * their NULL flags only (they point into rows already gone).  Valid until
 * the next call; false at the end.  Not to be mixed with the other ways of reading
 * one scan, but xxl_scan_next_columns with the same columns.
 */
extern bool xxl_scan_next_column_run(TableScanDesc scan, const AttrNumber *cols, int ncols,
									 Datum **values, bool **isnull, int *first, int *n);

/*
 * Where a sequential scan's rows must lie: integer column attno's values
 * in [lo, hi] (as packed pages hold them, sign-extended).  A packed page
 * whose least and greatest value of such a column both lie outside is
 * skipped unread (so is one where the column is NULL in every row).
 * n = -1: no row qualifies, every page is skipped.  The caller still
 * checks its conditions on every row returned.
 */
typedef struct XxlColumnRange
{
	AttrNumber	attno;
	int64		lo;
	int64		hi;
} XxlColumnRange;
extern void xxl_scan_set_ranges(TableScanDesc scan, const XxlColumnRange *ranges, int n);
extern uint64 xxl_scan_pages_skipped(TableScanDesc scan);

extern bool xxl_scan_bitmap_next_block(TableScanDesc scan, struct TBMIterateResult *tbmres);
extern bool xxl_scan_bitmap_next_tuple(TableScanDesc scan, struct TBMIterateResult *tbmres,
									   TupleTableSlot *slot);

/* Indexes (xxl_table_index.c) ------------------------------------------------- */

extern double xxl_index_build_range_scan(Relation table_rel, Relation index_rel,
										 struct IndexInfo *index_info, bool allow_sync,
										 bool anyvisible, bool progress,
										 BlockNumber start_blockno, BlockNumber numblocks,
										 IndexBuildCallback callback, void *callback_state,
										 TableScanDesc scan);
extern struct IndexFetchTableData *xxl_index_fetch_begin(Relation rel);
extern void xxl_index_fetch_reset(struct IndexFetchTableData *data);
extern void xxl_index_fetch_end(struct IndexFetchTableData *data);
extern bool xxl_index_fetch_tuple(struct IndexFetchTableData *scan, ItemPointer tid,
								  Snapshot snapshot, TupleTableSlot *slot, bool *call_again,
								  bool *all_dead);

/*
 * Every row on rel's pages [lo, hi) of a committed segment (or this
 * transaction's) that no such delete names, to a callback (compaction's
 * and a merge's input).
 */
typedef void (*XxlRowCallback) (void *arg, TupleTableSlot *slot);
extern double xxl_scan_committed(Relation rel, BlockNumber lo, BlockNumber hi,
								 TupleTableSlot *slot, XxlRowCallback cb,
								 void *arg);

#endif							/* XXL_PG_TABLE_STORAGE_H */
