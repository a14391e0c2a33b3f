/*
 * xxl_operator.h — the lifecycle every SQL-level operator shares: settings
 * read once at the start, an engine object that is destroyed (threads
 * joined, spill files removed, memory freed) however the operator ends —
 * normally, by error, by cancel, or by the backend exiting — and the
 * statistics xxl.last_stats() and xxl.log_stats report.
 *
 * Usage:
 *     op = xxl_operator_begin("sort");
 *     engine = ...create(..., xxl_operator_resources(op), ...);
 *     xxl_operator_attach(op, engine, destroy, collect);
 *     (a sorter: xxl_sort_new(op, ...), sort/xxl_sort_new.h)
 *     ... feed it ...;  xxl_operator_phase(op, XXL_PHASE_MERGE);
 *     ... sort ...;     xxl_operator_phase(op, XXL_PHASE_OUTPUT);
 *     ... drain it ...; op->rows_out = n;
 *     xxl_operator_end(op);
 * On error nothing needs to be done: the operator's memory context dies
 * with the failed statement and its reset callback destroys the engine.
 */
#ifndef XXL_PG_OPERATOR_H
#define XXL_PG_OPERATOR_H

#include "fmgr.h"
#include "lib/ilist.h"
#include "utils/palloc.h"
#include "utils/timestamp.h"

#include "pg/runtime/xxl_guc.h"
#include "pg/runtime/xxl_spill.h"
#include "core/xxl_io.h"

typedef enum XxlPhase
{
	XXL_PHASE_INPUT,			/* reading the source (sorters: run formation) */
	XXL_PHASE_MERGE,			/* work between input and output (merge passes) */
	XXL_PHASE_OUTPUT,			/* producing rows (sorters: the final merge) */
	XXL_PHASE_DONE
} XxlPhase;

/* What xxl.last_stats() shows about one operator run. */
typedef struct XxlStats
{
	char		operator_name[NAMEDATALEN];
	bool		completed;		/* false: ended by an error or cancel */
	uint64		rows_in;
	uint64		rows_out;
	uint64		record_bytes;	/* bytes handed to the engine: its input, which
								 * "read_per_input" and "written_per_input" are per
								 * (sorters: their records; text: its bytes; graphs:
								 * 16 per edge, a pair of ids) */
	uint64		runs;
	int			merge_passes;
	int			fan_in;
	uint64		memory_limit;
	uint64		memory_peak;	/* the engine's budget high-water mark */
	uint64		block_size;
	int			threads;
	int			ndisks;
	char		disks[XXL_MAX_DISKS][MAXPGPATH];
	xxl_io_stats io;
	uint64		phase_ns[XXL_PHASE_DONE];
	uint64		total_ns;
	/*
	 * Operator-specific facts (a graph's path, a suffix array's recursion
	 * depth, ...) as the members of a JSON object, without the braces:
	 * fill with xxl_stats_detail().  Shown by last_stats() as "details".
	 */
	char		details[4096];
} XxlStats;

typedef struct XxlOperator XxlOperator;
typedef void (*XxlCoreDestroy) (void *core);
typedef void (*XxlCoreStats) (void *core, XxlStats *stats);

struct XxlOperator
{
	const char *name;
	MemoryContext cxt;			/* holds this struct; dies with the statement */
	MemoryContextCallback reset_cb;
	dlist_node	node;			/* in the backend's list of live operators */
	void	   *core;
	XxlCoreDestroy destroy;
	XxlCoreStats collect;

	/* settings, fixed at the start */
	size_t		memory;
	size_t		block_size;
	int			threads;
	XxlDiskSetup disk;
	uint64		expected_bytes; /* its sorters' input as the planner expects it, 0:
								 * unknown (xxl_sort_config.expected_bytes) */

	XxlPhase	phase;
	uint64		t_start;
	uint64		t_phase;
	uint64		phase_ns[XXL_PHASE_DONE];
	uint64		rows_in;
	uint64		rows_out;
	char		details[2048];	/* the operator's own facts (xxl_operator_detail) */

	/* what xxl.progress shows of it while it runs (xxl_progress.h) */
	xxl_progress progress;		/* the engine's steps: its resources point here */
	const char *progress_name;	/* the view's name for it; NULL: name */
	uint64		rows_expected;	/* input rows expected (a table's size, the
								 * planner's estimate); 0: unknown */
	bool		output_per_input;	/* one output row per input row: the output's
									 * share done is rows out / rows in */
	int			progress_entry; /* in the backend's slot; -1: none */
	uint64		progress_at;	/* when it last published ... */
	const char *published_step; /* ... which kind of step */
	TimestampTz started;
	int64		query_id;
};

/* Start an operator in a new child of CurrentMemoryContext. */
extern XxlOperator *xxl_operator_begin(const char *name);
/* ... with a budget other than xxl.memory (a sort inside a query plan). */
extern XxlOperator *xxl_operator_begin_budget(const char *name, size_t memory);

/* The statistics of a live operator so far (EXPLAIN ANALYZE of a node). */
extern void xxl_operator_stats(XxlOperator *op, bool completed, XxlStats *stats);

/* Hand the operator its engine object; it destroys it at the end. */
extern void xxl_operator_attach(XxlOperator *op, void *core, XxlCoreDestroy destroy,
								XxlCoreStats collect);

/*
 * A sorter under the operator's settings (record_size 0: variable length;
 * compare: how variable keys compare when they are no byte images, else
 * NULL).
 */
/*
 * What the engine may use under the operator's settings (memory, threads,
 * disks, the cancel hook): the one description every engine config takes.
 */
extern xxl_resources xxl_operator_resources(XxlOperator *op);

/*
 * Argument n of a SQL function must not be NULL: an error naming the
 * argument (fname: the function, prefixed to the message when not NULL).
 */
extern void xxl_arg_not_null(FunctionCallInfo fcinfo, int n, const char *fname, const char *name);
/* Argument n as a C string; a NULL is an error (as xxl_arg_not_null). */
extern char *xxl_arg_text(FunctionCallInfo fcinfo, int n, const char *fname, const char *name);

/*
 * The operator's budget must be at least what its engine accepts: an error
 * (22023) naming function fname and the setting to use.
 */
extern void xxl_operator_check_memory(XxlOperator *op, const char *fname, size_t min_memory);

extern void xxl_operator_phase(XxlOperator *op, XxlPhase phase);

/*
 * What xxl.progress shows of the operator beyond its name: the name users
 * know it by there (NULL: its name) and the input rows expected (0:
 * unknown); shown at once.
 */
extern void xxl_operator_describe(XxlOperator *op, const char *progress_name, uint64 rows_expected);

/*
 * Add "key": value to stats->details.  value is a JSON literal (a number,
 * true/false, or a string with its quotes), formatted printf-style; what
 * does not fit is left out.
 */
extern void xxl_stats_detail(XxlStats *stats, const char *key, const char *fmt,...)
			pg_attribute_printf(3, 4);

/* A string detail, JSON-escaped, its first 200 bytes (whole characters). */
extern void xxl_stats_detail_string(XxlStats *stats, const char *key, const char *value);

/*
 * The figures every engine operator reports the same way: rows_in (when the
 * glue did not count them), the record bytes sorted, the budget's peak and
 * limit, and the I/O.
 */
extern void xxl_stats_engine(XxlStats *stats, uint64 rows_in, uint64 record_bytes,
							 uint64 memory_peak, uint64 memory_limit, const xxl_io_stats *io);

/* The statistics of this backend's last operator, or NULL before the first. */
extern const XxlStats *xxl_operator_last_stats(void);

/* Like xxl_stats_detail, for facts the operator knows before it ends. */
extern void xxl_operator_detail(XxlOperator *op, const char *key, const char *fmt,...)
			pg_attribute_printf(3, 4);

/* Normal end: record statistics, NOTICE them if asked, destroy everything. */
extern void xxl_operator_end(XxlOperator *op);

#endif							/* XXL_PG_OPERATOR_H */
