/*
 * text.h — the text functions (folder text/), and what their files share: the
 * suffix-array builder as an operator's engine object (xxl_text_core.c),
 * corpus input (xxl_corpus.c), the rows of a suffix array table
 * (xxl_sa_rows.c) and random access to one by rank (xxl_rank_table.c).
 * The functions themselves: xxl_suffix_sql.c (suffix arrays), xxl_bwt_sql.c
 * (Burrows–Wheeler transform), xxl_sa_check_sql.c (checker),
 * xxl_locate_sql.c (pattern search), xxl_lcp_sql.c (LCP arrays and
 * repeats).  See docs/text.md.
 *
 * Positions and ranks are 1-based in SQL, 0-based in the engine.
 */
#ifndef XXL_PG_TEXT_H
#define XXL_PG_TEXT_H

#include "access/genam.h"
#include "access/tupdesc.h"
#include "fmgr.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

#include "pg/io/io.h"
#include "pg/runtime/runtime.h"
#include "core/text/xxl_docs.h"
#include "core/text/xxl_lcp.h"
#include "core/text/xxl_suffix.h"
#include "core/text/xxl_text_store.h"

/* Corpus input (xxl_corpus.c) ------------------------------------------------ */

/*
 * A corpus is a table or query with one text or bytea column, or two: an
 * integer id and the text (a corpus of documents) (xxl_input.h); its values
 * are concatenated in the order the rows come, raw bytes in whatever
 * encoding they have, and streamed into the engines as they are read, so
 * the text can be far larger than PostgreSQL's 1 GB value limit and than
 * memory.  A value stored out of line without compression is even read
 * slice by slice; any other value is detoasted one row at a time.  The
 * documents (id and length of each row) go to an xxl_docs.
 */
typedef struct XxlCorpus
{
	XxlInput   *in;
	AttrNumber	body_att;
	AttrNumber	id_att;			/* 0: one text */
	Oid			id_type;
} XxlCorpus;

#define XXL_CORPUS_TARGETS 2

/* An engine that takes corpus bytes: the builder, checker, text store, LCP. */
typedef struct XxlCorpusTarget
{
	xxl_status	(*put) (void *core, const void *bytes, size_t len);
	xxl_status	(*end_doc) (void *core);	/* NULL: not told where documents end */
	const xxl_error *(*error) (void *core);
	void	   *core;
} XxlCorpusTarget;

typedef struct XxlCorpusSink
{
	XxlCorpusTarget target[XXL_CORPUS_TARGETS];
	int			ntargets;
	xxl_docs   *docs;			/* a corpus of documents: recorded here */
	XxlOperator *op;			/* the operator it feeds: its input counts, its
								 * name in error messages */
	uint64		bytes;
} XxlCorpusSink;

extern void xxl_corpus_sink_init(XxlCorpusSink *sink, XxlOperator *op);
extern void xxl_corpus_sink_add_sa(XxlCorpusSink *sink, xxl_sa *sa, bool separated);
extern void xxl_corpus_sink_add_check(XxlCorpusSink *sink, xxl_sa_checker *c);
extern void xxl_corpus_sink_add_store(XxlCorpusSink *sink, xxl_text_store *s);
extern void xxl_corpus_sink_add_lcp(XxlCorpusSink *sink, xxl_lcp *lcp);
/* Bytes into every target, a slice at a time (interrupts are checked). */
extern void xxl_corpus_put(XxlCorpusSink *sink, const char *bytes, size_t len);
/* Open a corpus source and find its columns. */
extern void xxl_corpus_open(const char *source, XxlCorpus *corpus);
/* 0A000 if the corpus has ids (for operators over one text). */
extern void xxl_corpus_require_single(const XxlCorpus *corpus, const char *func);
/* Read every row into sink (and its documents); closes the input.  Returns the rows. */
extern uint64 xxl_corpus_feed(XxlCorpus *corpus, XxlCorpusSink *sink);

/* The builder as an engine object (xxl_text_core.c) ------------------------- */

/* What a text operator wants beyond the suffix array. */
typedef struct XxlTextWants
{
	bool		lcp;			/* LCP values with the positions */
	bool		stored;			/* of a suffix array the caller feeds
								 * (xxl_lcp_put_ranked): no sorter */
	uint64		min_length;		/* > 0: repeats of at least this length */
	uint64		min_count;
} XxlTextWants;

/*
 * The suffix sorter, and for a corpus of documents the document map, for
 * LCP values or repeats the LCP operator.  The budget is split: an eighth
 * for the documents (a sixteenth below 2MB), three eighths of the rest for
 * the LCP operator.
 */
typedef struct XxlTextCore
{
	xxl_sa	   *sa;				/* NULL once drained into lcp */
	xxl_sa_mode mode;
	bool		built;
	xxl_docs   *docs;
	/* a paged map's documents resolved in rank order, and its figures once gone */
	xxl_docs_resolver *resolver;
	bool		resolved;
	uint64		resolve_read,
				resolve_written;
	size_t		resolve_peak;
	size_t		sa_memory;		/* the suffix sorter's budget, the resolver's after it */
	xxl_lcp    *lcp;
	XxlTextWants wants;
	xxl_sa_stats sa_stats;		/* kept when sa is gone */
	bool		have_sa_stats;
	size_t		memory;
	size_t		lcp_held;		/* what the LCP operator holds while the sorter works */
	/* the input, between open and build */
	XxlCorpus	corpus;
	const char *source;
	bytea	   *data;
} XxlTextCore;

/* The engine's configuration under the operator's settings. */
extern xxl_sa_config xxl_text_config(XxlOperator *op, xxl_sa_mode mode);
/* Spread a total over the operator's disks (the engine counts totals only). */
extern void xxl_text_spread_io(XxlStats *st, uint64 read, uint64 written);
/*
 * Text in (the rows of a corpus source, or one bytea value), then the build
 * (and the LCP values or repeats, if wanted): the core is ready for output.
 */
extern XxlTextCore *xxl_text_core_run(XxlOperator *op, xxl_sa_mode mode, const char *source,
									  bytea *data, const XxlTextWants *wants);
/*
 * The same in two steps, for a caller that makes its target in between,
 * once it knows whether the corpus has ids (c->docs != NULL).
 */
extern XxlTextCore *xxl_text_core_open(XxlOperator *op, xxl_sa_mode mode, const char *source,
									   bytea *data, const XxlTextWants *wants);
extern void xxl_text_core_build(XxlOperator *op, XxlTextCore *c);
/* The document of a body position: its id and 1-based offset. */
extern void xxl_text_doc_of(const xxl_docs *docs, uint64 pos, int64 *id, int64 *offset);
/*
 * A document map for a corpus with ids: an eighth of memory (a sixteenth
 * below 2MB), which is
 * returned less that; past it, paged to the operator's spill directories.
 * The caller destroys *docs (with its engine object).
 */
extern size_t xxl_text_docs_open(XxlOperator *op, xxl_docs **docs, size_t memory);
/* Raise the map's error if a paged read failed: before anything found with it is handed out. */
extern void xxl_text_docs_check(XxlOperator *op, const xxl_docs *docs);
/*
 * The map (if any) into last_stats(): its memory into memory_peak, its
 * pages' bytes into *read and *written, and the details documents,
 * documents_paged and documents_page_reads.
 */
extern void xxl_text_docs_stats(const xxl_docs *docs, XxlStats *st, uint64 *read, uint64 *written);
/*
 * Drain the core into out as (rank, pos[, doc_id, doc_offset][, lcp]) rows,
 * 1-based (doc columns NULL for a corpus without ids), and end the
 * operator.  Returns the rows written.
 */
extern uint64 xxl_text_emit(XxlOperator *op, XxlTextCore *c, XxlOutput *out, TupleDesc desc,
							bool doc_cols, bool lcp_col);


/* Suffix array rows (xxl_sa_rows.c) ----------------------------------------- */

/* (rank bigint, pos bigint[, doc_id bigint, doc_offset bigint][, lcp bigint]) */
extern TupleDesc xxl_sa_rows_desc(bool docs, bool lcp);

#define XXL_INT8_ROW_MAX 6

/*
 * Rows of up to XXL_INT8_ROW_MAX bigints: when none is null, the compact
 * row is formed once, and each row only overwrites the values, which are
 * the row's last 8k bytes (8-byte aligned after the header, no nulls
 * bitmap).  Checked at setup; where it does not hold, or for a row with a
 * null, rows are formed from values.
 */
typedef struct XxlInt8Writer
{
	XxlOutput  *out;
	int			ncols;
	uint32		len;			/* of the compact row, its values at its end */
	bool		fast;
	char	   *batch;			/* fast rows not yet put: XXL_INT8_BATCH rows */
	int			nbatch;
} XxlInt8Writer;

#define XXL_INT8_BATCH 256

extern void xxl_int8_writer_init(XxlInt8Writer *w, XxlOutput *out, TupleDesc desc);
/* nulls may be NULL (no nulls) */
extern void xxl_int8_writer_put(XxlInt8Writer *w, const int64 *values, const bool *nulls);
/* Put the rows still held (before xxl_output_finish). */
extern void xxl_int8_writer_flush(XxlInt8Writer *w);

/* Find the rank and pos columns of a suffix array's rows (what: for messages). */
extern void xxl_sa_columns(TupleDesc desc, const char *what, AttrNumber *rank_att,
						   AttrNumber *pos_att, Oid *rank_type, Oid *pos_type);

/*
 * A suffix array's (rank, pos) rows in the order the source gives them
 * (xxl_sa_columns finds the columns): 1-based values as stored; a NULL is
 * 22004.
 */
typedef struct XxlSaReader
{
	XxlInput   *in;
	AttrNumber	rank_att,
				pos_att;
	Oid			rank_type,
				pos_type;
} XxlSaReader;

extern void xxl_sa_reader_open(XxlSaReader *r, const char *source);
extern bool xxl_sa_reader_next(XxlSaReader *r, int64 *rank, int64 *pos);
extern uint64 xxl_sa_reader_rows(const XxlSaReader *r);
extern void xxl_sa_reader_close(XxlSaReader *r);

/* Random access by rank (xxl_rank_table.c) ----------------------------------- */

/*
 * Random access to a stored suffix array by rank.  A table that
 * xxl.suffix_array_into made (or any heap filled with fixed-width rows in
 * rank order and never changed) holds rank k at a computable place: block
 * (k-1) / m, line k - 1 - block * m + 1, m being the rows on block 0.  Each
 * such fetch is checked (visible, rank = k); the first miss switches to a
 * btree index whose first column is rank, for this and every later lookup.
 * No index then is an error with a hint to create one.
 */
typedef struct XxlRankTable
{
	Relation	rel;
	char	   *name;
	Snapshot	snapshot;
	TupleTableSlot *slot;
	AttrNumber	rank_att,
				pos_att;
	Oid			rank_type,
				pos_type;
	bool		layout;			/* still trusting the computed places */
	BlockNumber nblocks;
	uint64		per_page;
	/* index */
	Oid			index_oid;
	Relation	index;
	IndexScanDesc scan;
	bool		scan_live;		/* a range scan is positioned */
	/* statistics */
	uint64		layout_fetches;
	uint64		index_lookups;
} XxlRankTable;

extern void xxl_rank_table_open(XxlRankTable *t, const char *name);
/* The 1-based position of the suffix of rank k. */
extern int64 xxl_rank_table_lookup(XxlRankTable *t, uint64 k);
/* The position of rank k in an ascending walk k = first, first + 1, ... */
extern int64 xxl_rank_table_walk(XxlRankTable *t, uint64 k, bool first);
extern void xxl_rank_table_close(XxlRankTable *t);

#endif							/* XXL_PG_TEXT_H */
