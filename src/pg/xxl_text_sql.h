/*
 * xxl_text_sql.h — what the SQL functions of the text engine share: the
 * suffix-array builder as an operator's engine object (xxl_text_core.c),
 * corpus input (xxl_corpus.c), the rows of a suffix array table
 * (xxl_sa_rows.c) and random access to one by rank (xxl_rank_table.c).
 * The functions themselves: xxl_suffix_sql.c (suffix arrays), xxl_bwt_sql.c
 * (Burrows–Wheeler transform), xxl_sa_check_sql.c (checker),
 * xxl_locate_sql.c (pattern search).  See docs/text.md.
 *
 * Positions and ranks are 1-based in SQL, 0-based in the engine.
 */
#ifndef XXL_PG_TEXT_SQL_H
#define XXL_PG_TEXT_SQL_H

#include "access/genam.h"
#include "access/tupdesc.h"
#include "fmgr.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

#include "pg/xxl_input.h"
#include "pg/xxl_operator.h"
#include "pg/xxl_output.h"
#include "pg/xxl_rowcodec.h"
#include "core/text/xxl_suffix.h"
#include "core/text/xxl_text_store.h"

/* Corpus input (xxl_corpus.c) ------------------------------------------------ */

/*
 * A corpus is a table or query with one text or bytea column (xxl_input.h);
 * its values are concatenated in the order the rows come, raw bytes in
 * whatever encoding they have, and streamed into an engine as they are
 * read, so the text can be far larger than PostgreSQL's 1 GB value limit
 * and than memory.  A value stored out of line without compression is even
 * read slice by slice; any other value is detoasted one row at a time.
 */

/* Where corpus bytes go: the builder, the checker or the text store. */
typedef struct XxlCorpusSink
{
	xxl_status	(*put) (void *core, const void *bytes, size_t len);
	const xxl_error *(*error) (void *core);
	void	   *core;
	const char *what;			/* for error messages */
	uint64		bytes;
} XxlCorpusSink;

extern void xxl_corpus_sink_sa(XxlCorpusSink *sink, xxl_sa *sa, const char *what);
extern void xxl_corpus_sink_check(XxlCorpusSink *sink, xxl_sa_checker *c, const char *what);
extern void xxl_corpus_sink_store(XxlCorpusSink *sink, xxl_text_store *s, const char *what);
/* Bytes into the sink, a slice at a time (interrupts are checked). */
extern void xxl_corpus_put(XxlCorpusSink *sink, const char *bytes, size_t len);
/* Open a corpus source and find its one text or bytea column. */
extern XxlInput *xxl_corpus_open(const char *source, AttrNumber *attno);
/* Read every row of the corpus into sink; closes in.  Returns the rows. */
extern uint64 xxl_corpus_feed(XxlInput *in, AttrNumber attno, XxlCorpusSink *sink);

/* The builder as an engine object (xxl_text_core.c) ------------------------- */

typedef struct XxlTextCore
{
	xxl_sa	   *sa;
	xxl_sa_mode mode;
	bool		built;
} XxlTextCore;

/* The engine's configuration under the operator's settings. */
extern xxl_sa_config xxl_text_config(XxlOperator *op, xxl_sa_mode mode);
/* Spread a total over the operator's disks (the engine counts totals only). */
extern void xxl_text_spread_io(XxlStats *st, uint64 read, uint64 written);
extern XxlTextCore *xxl_text_core_begin(XxlOperator *op, xxl_sa_mode mode);
/* Text in (the rows of a corpus source, or one bytea value), then build. */
extern void xxl_text_core_feed(XxlOperator *op, XxlTextCore *c, const char *source, bytea *data);

/* Suffix array rows (xxl_sa_rows.c) ----------------------------------------- */

/* (rank bigint, pos bigint) */
extern TupleDesc xxl_sa_rows_desc(void);

/*
 * Rows of two non-null bigints: the compact row is formed once, and each
 * row only overwrites the two values, which are the row's last 16 bytes
 * (8-byte aligned after the header, no nulls bitmap).  Checked at setup;
 * where it does not hold, rows are formed from values.
 */
typedef struct XxlPairWriter
{
	XxlOutput  *out;
	char	   *row;
	uint32		len;
	bool		fast;
} XxlPairWriter;

extern void xxl_pair_writer_init(XxlPairWriter *w, XxlOutput *out, TupleDesc desc);

static inline void
xxl_pair_writer_put(XxlPairWriter *w, int64 a, int64 b)
{
	if (w->fast)
	{
		memcpy(w->row + w->len - 16, &a, 8);
		memcpy(w->row + w->len - 8, &b, 8);
		xxl_output_put_compact(w->out, w->row, w->len);
	}
	else
	{
		Datum		values[2] = {Int64GetDatum(a), Int64GetDatum(b)};
		bool		nulls[2] = {false, false};

		xxl_output_put_values(w->out, values, nulls);
	}
}

/* Find the rank and pos columns of a suffix array's rows (what: for messages). */
extern void xxl_sa_columns(TupleDesc desc, const char *what, AttrNumber *rank_att,
						   AttrNumber *pos_att, Oid *rank_type, Oid *pos_type);

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

#endif							/* XXL_PG_TEXT_SQL_H */
