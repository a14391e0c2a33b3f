/*
 * xxl_input.h — rows from a source: a table read directly, any query
 * streamed through an SPI cursor, or a child node of the plan being run.
 * Every operator that reads user data
 * (sorting, graphs, text) opens its input through here.
 *
 * Which one a source text is: if the whole text is a possibly qualified
 * name (one to three dot-separated identifiers, quoted or not, exactly as
 * regclass input reads it: unquoted names fold to lower case), it names a
 * table; anything else is a query.  So 'edges', 'public.edges' and
 * '"Edges"' are tables, and 'SELECT * FROM edges WHERE w > 0', 'TABLE edges'
 * and 'VALUES (1), (2)' are queries.
 *
 * Tables are read with a table scan under the statement's snapshot after
 * a SELECT privilege check, which is much cheaper than SPI; heaps a page at
 * a time, handing out tuples straight from the pinned page, and xxl tables
 * runs of packed rows the same way.  A name that is
 * not a plain table (a view, a foreign or partitioned table, a table with
 * inheritance children or with row-level security in force) is read as
 * "SELECT * FROM name" instead, so that rules, policies and children apply.
 * Queries run read-only with the caller's privileges.
 */
#ifndef XXL_PG_INPUT_H
#define XXL_PG_INPUT_H

#include "access/htup.h"
#include "access/tableam.h"
#include "access/tupdesc.h"
#include "executor/tuptable.h"
#include "nodes/primnodes.h"
#include "utils/relcache.h"

#include "pg/io/xxl_packed_row.h"

typedef struct XxlInput XxlInput;

/*
 * The table a source text names, by the rule above, or NULL if the text is
 * not a name (then it is a query).  Never raises: whether the table exists
 * is the caller's question.  Every module that takes a table name (inputs,
 * targets, suffix array tables) asks this.
 */
extern RangeVar *xxl_source_name(const char *source);

/*
 * The table a source text names, locked for reading (AccessShareLock), for
 * callers that read it by key rather than by scan (e.g. a suffix array
 * read by rank); NULL if the text is not a name.  The checks are theirs:
 * xxl_input_check_select for the privilege (on the table, or on all of
 * the columns they read), xxl_input_rls_in_force for row security.
 */
extern Relation xxl_input_open_named(const char *source);
extern void xxl_input_check_select(Relation rel, int ncols, const AttrNumber *cols);
extern bool xxl_input_rls_in_force(Relation rel);

/* Open a source given as text (see the rule above). */
extern XxlInput *xxl_input_open(const char *source);

/* Open a relation known by OID (e.g. from a composite type). */
extern XxlInput *xxl_input_open_relid(Oid relid);

/*
 * The rows of a partitioned table's local leaves (OIDs, tables of any
 * access method), one leaf after another, in the parent's layout: how a
 * sort over a sharded table reads the partitions that are not on other
 * servers.  The SELECT privilege is checked on parent, as a query of the
 * parent checks it; the caller has made sure that parent has no row
 * security in force.
 */
extern XxlInput *xxl_input_open_leaves(Relation parent, List *leaves);

/*
 * The rows of a child plan node, pulled with ExecProcNode: how an operator
 * inside a query plan (the sort node of xxl_plan_sort.c) reads its input.
 * A Seq Scan child of a heap is read directly instead: its pages as a
 * table's, its qual and projection evaluated in its expression context
 * (the conditions are in xxl_input.c).  The child stays its owner's to
 * rescan and end; description is for messages.
 */
struct PlanState;
extern XxlInput *xxl_input_open_plan(struct PlanState *child, const char *description);
/* Whether a plan input reads its Seq Scan child's table directly. */
extern bool xxl_input_plan_direct(XxlInput *in);

/* The rows' descriptor (a table's includes its dropped columns). */
extern TupleDesc xxl_input_desc(XxlInput *in);

/* The table being scanned directly, or NULL when the source is read as a query. */
extern Relation xxl_input_relation(XxlInput *in);

/* "table t", "view v" or "query": for messages. */
extern const char *xxl_input_describe(XxlInput *in);

/*
 * The next row, or NULL at the end.  Nothing is deformed yet: use
 * slot_getsomeattrs/slot_getallattrs.  The slot is valid until the next
 * call.
 */
extern TupleTableSlot *xxl_input_next(XxlInput *in);

/*
 * Heap tables (and Seq Scan children read directly with no qual, no
 * projection but one that picks columns, and no EXPLAIN ANALYZE) can hand out their rows as tuples on
 * the pinned page, without a slot: xxl_input_next_tuple() then replaces
 * xxl_input_next() (never mix the two); the tuple is valid until the next
 * call, NULL at the end.
 */
extern bool xxl_input_has_tuples(XxlInput *in);
extern HeapTuple xxl_input_next_tuple(XxlInput *in);
/*
 * What the tuples are laid out as (the table's descriptor), and where the
 * rows' columns are in them: *map NULL when they are the rows as
 * xxl_input_desc() describes them, else column i is attribute map[i].
 */
extern TupleDesc xxl_input_tuple_desc(XxlInput *in, const AttrNumber **map);

/*
 * A table access method that stores packed rows (io/xxl_packed_row.h, the
 * xxl tables') registers the scan that hands them out in runs from the
 * pinned page; for its tables xxl_input_next_run() then replaces
 * xxl_input_next(); false at the end.  Rows are counted by the run.
 */
typedef bool (*XxlRunScan) (TableScanDesc scan, XxlRowRun *run);
extern void xxl_input_register_runs(const TableAmRoutine *am, XxlRunScan next_run);
extern bool xxl_input_has_runs(XxlInput *in);
/* Whether it has runs whose rows hold by-value columns only (no allocation to unpack them). */
extern bool xxl_input_runs_byval(XxlInput *in);
extern bool xxl_input_next_run(XxlInput *in, XxlRowRun *run);

/*
 * The current row as a heap tuple without copying, when the source has one
 * at hand (heap tables and SPI rows), else NULL.  For fast paths that copy
 * the row's bytes as they are.
 */
extern HeapTuple xxl_input_heap_tuple(XxlInput *in);

/* Rows read so far. */
extern uint64 xxl_input_rows(XxlInput *in);
/*
 * The rows the source is expected to give, for progress: a table's
 * estimated size, a plan's or query's planner estimate; 0 when unknown.
 */
extern uint64 xxl_input_expected_rows(XxlInput *in);

/* End the scan or cursor; the table stays locked until transaction end. */
extern void xxl_input_close(XxlInput *in);

#endif							/* XXL_PG_INPUT_H */
