/*
 * xxl_relfile.h — appending whole pages to a relation's main fork outside
 * shared buffers, in large writes (see xxl_relfile.c): the writer of a new
 * heap's pages (xxl_heap_pages.c) and of an xxl table's large segments
 * (table/xxl_table_write.c).  The caller must own the blocks it writes: a
 * relation of its own transaction, or blocks beyond the end of a relation
 * whose extension lock it holds, for which no buffer exists.
 */
#ifndef XXL_PG_RELFILE_H
#define XXL_PG_RELFILE_H

#include "storage/block.h"
#include "utils/relcache.h"

typedef struct XxlRelFile XxlRelFile;

/*
 * Start writing rel's main fork at block first (in CurrentMemoryContext).
 * drop_behind: let the page cache go behind the writing (an output far
 * larger than memory, read later if ever), or keep it (a table's rows,
 * often read right after).
 */
extern XxlRelFile *xxl_relfile_begin(Relation rel, BlockNumber first, bool drop_behind);

/*
 * The page to build next, at block *blkno (NULL: not asked), in the
 * writer's batch; the caller initialises it.  The same page until
 * xxl_relfile_page_done.
 */
extern char *xxl_relfile_page(XxlRelFile *f, BlockNumber *blkno);

/*
 * The page is built: it goes out with its batch, which is written when
 * full (logged as full-page images when the relation needs WAL,
 * checksummed, in one write per segment it touches).
 */
extern void xxl_relfile_page_done(XxlRelFile *f);

/*
 * Write the built pages still held, close the open segment and sync the
 * fork where nothing else will: no checkpoint can flush pages that never
 * were in shared buffers.
 */
extern void xxl_relfile_end(XxlRelFile *f);

#endif							/* XXL_PG_RELFILE_H */
