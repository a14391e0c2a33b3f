/*
 * xxl_sort_run.h — one sort, from source rows to sorted rows: how a row
 * becomes a sorter record and how a record becomes a row again.  The SQL
 * functions (xxl_sort_sql.c) drain a run into an XxlOutput (a new table or
 * a tuplestore); the custom scan that replaces xxl.sort() in FROM
 * (xxl_sort_scan.c) pulls its rows one at a time.
 *
 * Two record shapes, chosen per sort:
 *  - fixed: when the key has a fixed-size encoding (xxl_sortkey.h) and every
 *    result column has a fixed width, a record is the key, a null bitmap of
 *    the other columns and their raw bytes.  Columns the key holds
 *    losslessly (integers, boolean, "char", oid) are not stored again:
 *    (bigint a, bigint b) sorted by a is an 18-byte record.  Such records
 *    take the engine's fixed-record paths (radix-sorted runs, batched
 *    merge) and come back as values without forming a tuple.
 *  - variable: key + the row in compact form (xxl_output.h), with
 *    out-of-line values fetched, for every other row type.  When rows go
 *    out one by one, the columns the key holds (text in C or ICU
 *    collations, integers) are left out of the row and restored from the
 *    key: a sort by a text column does not carry its text twice.
 */
#ifndef XXL_PG_SORT_RUN_H
#define XXL_PG_SORT_RUN_H

#include "access/tupdesc.h"

#include "pg/io/io.h"
#include "pg/sort/xxl_sortkey.h"

typedef struct XxlSortRun XxlSortRun;

/*
 * Read every row of in (closing it), sort by key and get ready to hand out
 * rows laid out as out_desc (map: see xxl_map_columns).  If needed
 * is not NULL, only the result columns it flags are wanted: the others are
 * neither read into the records nor stored, and come out NULL.  Lives in a
 * new child of CurrentMemoryContext; an error at any point leaves nothing
 * behind once that context goes.  options may be NULL (xxl.memory, records
 * that hold every column).
 */
typedef struct XxlSortRunOptions
{
	size_t		memory;			/* the budget in bytes; 0: xxl.memory */

	/*
	 * Rows go out one at a time (xxl_sort_run_next), not drained: columns a
	 * variable-size key holds (xxl_sortkey_var_restorable) are then not
	 * stored a second time in the record, but restored from the key.
	 */
	bool		restore_from_key;

	/*
	 * Rows with equal keys are interchangeable (a Unique on the key columns
	 * reads the output): a row whose key came before may be dropped
	 * (xxl_key_filter.h), and the output has each key once.
	 */
	bool		distinct;

	/* The records' bytes as the planner expects them; 0: unknown. */
	double		expected_bytes;

	/* What xxl.progress calls it ("XxlSort", "sort_into"); NULL: "sort". */
	const char *name;

	/*
	 * xxl_sort_run_merge only: the streams' key ranges follow one another
	 * (partitions of a range on the key, in their bounds' order), so each
	 * stream's rows go out before the next stream is asked for its first,
	 * with no comparison.
	 */
	bool		streams_in_order;
} XxlSortRunOptions;

extern XxlSortRun *xxl_sort_run_start(XxlInput *in, XxlSortKey *key, TupleDesc out_desc,
									  AttrNumber *map, const bool *needed,
									  const XxlSortRunOptions *options);

/* Rows a distinct run dropped, before the sort and after it. */
extern uint64 xxl_sort_run_dropped(const XxlSortRun *run);

/* Whether the run uses fixed-size records (for EXPLAIN and tests). */
/*
 * Rows already sorted by a run's key, from elsewhere (a shard's rows over
 * the network, another run): next puts the next row, in the layout the
 * key was made for, into values and isnull and returns true, or false at
 * its end; the values stay valid until its next call.
 */
typedef struct XxlSortedStream
{
	bool		(*next) (void *arg, Datum *values, bool *isnull);
	void	   *arg;
} XxlSortedStream;

/* Adds the streams' own figures to the run's operator (xxl_operator_detail). */
struct XxlOperator;
typedef void (*XxlStreamsReport) (void *arg, struct XxlOperator *op);

/*
 * A run whose rows are the merge of streams[0..nstreams), each sorted by
 * key and laid out as in_desc, handed out as xxl_sort_run_start's: they
 * are never sorted again.  Each stream is asked for its first row here,
 * in order, and then whenever its row has gone out; the merge keeps one
 * record per stream.  Equal keys go out in stream order.  With
 * options->streams_in_order the streams are read one after the other
 * instead, each from its first row only once the one before has ended.
 * report(arg, op),
 * if set, runs when the last row has gone out, before the statistics are
 * recorded.
 */
extern XxlSortRun *xxl_sort_run_merge(XxlSortedStream *streams, int nstreams, XxlSortKey *key,
									  TupleDesc in_desc, TupleDesc out_desc, AttrNumber *map,
									  const XxlSortRunOptions *options,
									  XxlStreamsReport report, void *report_arg);

extern bool xxl_sort_run_fixed(const XxlSortRun *run);

/*
 * The next row into values and isnull (out_desc's columns); by-reference
 * values point into the run's memory and stay valid until the next call.
 * False at the end (the run then records its statistics).
 */
extern bool xxl_sort_run_next(XxlSortRun *run, Datum *values, bool *isnull);

/*
 * The same in two steps, for a consumer that may never look at the row's
 * values (XxlSort's slot decodes on demand): advance takes the next
 * record, false at the end; decode turns the record taken into values,
 * at any time before the next advance.
 */
extern bool xxl_sort_run_advance(XxlSortRun *run);
extern void xxl_sort_run_decode(XxlSortRun *run, Datum *values, bool *isnull);

/*
 * Marks, for the inner side of a merge join (XxlSort): after
 * xxl_sort_run_mark the run keeps the records it hands out
 * (xxl_mark_buffer.h), and after xxl_sort_run_restore xxl_sort_run_next
 * hands out again the rows after the mark, then goes on.  Replaying tells
 * whether kept rows are still to come; marked bytes are what is kept now
 * (peak: at most); unmark stops marking and frees them.
 */
extern void xxl_sort_run_mark(XxlSortRun *run);
extern void xxl_sort_run_restore(XxlSortRun *run);
extern bool xxl_sort_run_replaying(const XxlSortRun *run);
extern size_t xxl_sort_run_marked_bytes(const XxlSortRun *run, size_t *peak);
extern void xxl_sort_run_unmark(XxlSortRun *run);

/* Every remaining row into out, finished; returns the rows out holds. */
extern uint64 xxl_sort_run_drain(XxlSortRun *run, XxlOutput *out);

/* The operator's statistics: so far, or final once the last row is out. */
struct XxlStats;
extern void xxl_sort_run_stats(XxlSortRun *run, struct XxlStats *stats);

/*
 * What EXPLAIN ANALYZE shows of a run, for the nodes that run one (the
 * xxl.sort() scan, XxlSort): record shape, runs, merge passes, peak memory,
 * peak spill space and spill bytes written and read.
 */
struct ExplainState;
extern void xxl_sort_run_explain(const struct XxlStats *stats, bool fixed,
								 struct ExplainState *es);

/* Free everything (threads joined, spill files removed); safe at any point. */
extern void xxl_sort_run_free(XxlSortRun *run);

#endif							/* XXL_PG_SORT_RUN_H */
