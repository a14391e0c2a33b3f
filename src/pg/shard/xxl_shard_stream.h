/*
 * xxl_shard_stream.h — one shard's rows, worked on there by pgxxl (sorted,
 * or reduced to a spanning forest) and received here as they leave it.
 * Started with a query sent without waiting (so every shard works at
 * once); rows then arrive as a binary COPY, each waited for
 * interruptibly: a cancel here ends the wait, and postgres_fdw cancels the
 * remote statement as the local transaction aborts.  An error on the
 * shard ends the call with the shard's SQLSTATE and its name.
 */
#ifndef XXL_PG_SHARD_STREAM_H
#define XXL_PG_SHARD_STREAM_H

#include "access/tupdesc.h"
#include "nodes/bitmapset.h"

#include "pg/sort/sort.h"
#include "pg/shard/xxl_shard_fdw.h"

typedef struct XxlShardStream XxlShardStream;

/*
 * The streams of one call: while one is waited for, the others' sockets
 * are watched too, so that a shard that fails ends the call at once.
 */
typedef struct XxlShardGroup XxlShardGroup;
extern XxlShardGroup *xxl_shard_group_create(void);

/*
 * Check that the shard sorts key as here (the collations of its text
 * columns), then send it the sort of its partition by key: rows laid out
 * as desc (the parent's), NULL in its dropped columns.
 */
extern XxlShardStream *xxl_shard_stream_start(XxlShardGroup *group, XxlShard *shard,
											  TupleDesc desc, XxlSortKey *key);

/*
 * The same in steps: connect, where result_col gives, per column of desc,
 * its place among the statement's columns or -1 (NULL) (NULL: every
 * column, in order); check the collations the order depends on
 * (xxl_shard_stream_check_collations); then send.  With desc NULL the
 * layout is given later, before the send, by xxl_shard_stream_layout
 * (when it depends on what a probe finds on the shard).
 */
extern XxlShardStream *xxl_shard_stream_open(XxlShardGroup *group, XxlShard *shard,
											 TupleDesc desc, const int *result_col);
extern void xxl_shard_stream_layout(XxlShardStream *s, TupleDesc desc, const int *result_col);
/*
 * Send select; with pack, wrapped in xxl.packed_rows where the shard has
 * it, so that its rows come many to a message.
 */
extern void xxl_shard_stream_send(XxlShardStream *s, const char *select, bool pack);

/*
 * Whether the shard has function signature ("xxl.packed_rows(text)") and
 * the stream's user may call it (EXECUTE, and USAGE on its schema): asked
 * there before the stream's statement is sent, so that a shard whose
 * pgxxl is older, or whose user may not, is sent what it can run.
 */
extern bool xxl_shard_stream_may_call(XxlShardStream *s, const char *signature);

/*
 * An error (42P21) unless the shard has each of the n collations as this
 * server has it: the same provider and locales, for the database default
 * or a collation of the same name.  "C" and "POSIX" are the same
 * everywhere; InvalidOid (a column that is not text) needs nothing.
 */
extern void xxl_shard_stream_check_collations(XxlShardStream *s, const Oid *collations, int n);

/*
 * The shard's partitions as one query on its server: the columns of
 * parent that are wanted (all when wanted is NULL; never dropped ones),
 * each cast to this server's type and named as here, the partitions'
 * rows one after another (UNION ALL).
 */
extern char *xxl_shard_partitions_sql(XxlShard *shard, TupleDesc parent, const bool *wanted);

/* The next row (XxlSortedStream's next). */
extern bool xxl_shard_stream_next(void *stream, Datum *values, bool *isnull);

/*
 * The next row of any of the streams, in no order: from stream *at while
 * it has one at hand, else from the next that has (*at then names it),
 * waiting only when none has (while one shard's next rows are on their
 * way, another's are read); false when all have ended.  *at starts at 0.
 */
extern bool xxl_shard_streams_next_any(XxlShardStream **streams, int n, int *at,
									   Datum *values, bool *isnull);

/*
 * At load (xxl_shard_statement.c): the executor hooks that see which
 * statement runs; a statement that starts while a stream holds the
 * connection of a server it reads (a function in the select list of a
 * query whose rows a stream delivers, say) first has the rest of that
 * stream's rows read into a temporary file, so that the connection is
 * free for it.
 */
extern void xxl_shard_statement_init(void);

/*
 * Whether the statement being run runs to its end in one go (ExecutorRun
 * without a row count, as a simple query, CREATE TABLE AS or an SPI
 * statement run it): a stream's connection is then not wanted between its
 * rows by the statement's own fetches.
 */
extern bool xxl_shard_statement_runs_at_once(void);

/*
 * The streams on a server that the statement being run reads itself (an
 * initPlan that scans a foreign partition, say), other than through the
 * foreign tables at range table indexes own (a plan node's own
 * partitions; NULL: none): spooled now, so that the statement's scans find
 * those connections free between the streams' rows.  For a call or node
 * whose rows go out while its streams are read.
 */
extern void xxl_shard_streams_free_for_statement(XxlShardStream **streams, int n,
												 const Bitmapset *own);

/*
 * The message just read held n rows packed (a block of a packed output):
 * counted as n rows, and the report says the stream came packed.
 */
extern void xxl_shard_stream_packed_rows(XxlShardStream *s, uint64 n);

/* What it received: rows, bytes, ms to its first row (< 0: none yet). */
extern void xxl_shard_stream_figures(XxlShardStream *s, uint64 *rows, uint64 *bytes,
									 double *first_row_ms);

/* What the streams received, as the operator's detail "shards" (a JSON array). */
extern void xxl_shard_streams_report(XxlOperator *op, XxlShardStream **streams, int n);

#endif							/* XXL_PG_SHARD_STREAM_H */
