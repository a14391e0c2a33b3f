/*
 * xxl_operator.c — the shared operator lifecycle (see xxl_operator.h) and
 * xxl.last_stats().
 *
 * Cleanup does not rely on PG_TRY blocks in every operator: the engine
 * object hangs off a memory context created under the statement's context,
 * and that context's reset callback destroys it.  Any way the statement
 * ends (error, cancel, a subtransaction rolled back, a set-returning
 * function abandoned by LIMIT) deletes the context.  A FATAL exit skips
 * context deletion, so a before_shmem_exit hook also destroys whatever is
 * still alive; only a crash leaves spill files, and those carry
 * PostgreSQL's temp-file prefix for the restart to remove.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "pg/runtime/xxl_error.h"
#include "pg/runtime/xxl_cancel.h"
#include "pg/runtime/xxl_operator.h"
#include "pg/runtime/xxl_progress.h"

StaticAssertDecl((int) XXL_PHASE_INPUT == XXL_HOLD_INPUT && (int) XXL_PHASE_OUTPUT == XXL_HOLD_OUTPUT,
				 "xxl.test_hold numbers the phases as XxlPhase does");

static dlist_head live_operators = DLIST_STATIC_INIT(live_operators);
static bool exit_hook_registered = false;

/* the last operator of this backend, for xxl.last_stats() */
static XxlStats last_stats;
static bool have_last_stats = false;

static void
destroy_core(XxlOperator *op)
{
	void	   *core = op->core;

	op->core = NULL;
	if (core != NULL && op->destroy != NULL)
		op->destroy(core);
	/* its files are gone now; a backend on its way out reports nothing */
	xxl_disk_report(&op->disk, !proc_exit_inprogress);
}

static void
close_phase(XxlOperator *op, XxlPhase next)
{
	uint64		now = xxl_now_ns();

	if (op->phase < XXL_PHASE_DONE)
		op->phase_ns[op->phase] += now - op->t_phase;
	op->phase = next;
	op->t_phase = now;
	/* where xxl.test_hold may hold it (XxlHold numbers the phases alike) */
	xxl_hold_phase_now = next < XXL_PHASE_DONE ? (int) next : XXL_HOLD_NONE;
	/* a phase's steps are its own (set directly: the phase is published below) */
	op->progress.step = NULL;
	op->progress.step_no = op->progress.steps = 0;
	if (next < XXL_PHASE_DONE)
		xxl_progress_publish(op, true);
	else
		xxl_progress_end(op);
}

void
xxl_operator_stats(XxlOperator *op, bool completed, XxlStats *st)
{
	memset(st, 0, sizeof(*st));
	strlcpy(st->operator_name, op->name, NAMEDATALEN);
	st->completed = completed;
	st->rows_in = op->rows_in;
	st->rows_out = op->rows_out;
	st->memory_limit = op->memory;
	st->block_size = op->block_size;
	st->threads = op->threads;
	st->ndisks = op->disk.ndisks;
	for (int i = 0; i < op->disk.ndisks; i++)
		strlcpy(st->disks[i], op->disk.dirs[i], MAXPGPATH);
	strlcpy(st->details, op->details, sizeof(st->details));	/* always fits */
	if (op->core != NULL && op->collect != NULL)
		op->collect(op->core, st);
	/* the operator's spill space as a whole, over all its disk sets */
	st->io.spill_bytes_peak = op->disk.account.peak;
	/* its I/O per byte of input, comparable between operators and budgets */
	if (st->record_bytes > 0)
	{
		uint64		read = 0,
					written = 0;

		for (int i = 0; i < st->io.ndisks; i++)
		{
			read += st->io.disk[i].bytes_read;
			written += st->io.disk[i].bytes_written;
		}
		xxl_stats_detail(st, "input_bytes", UINT64_FORMAT, st->record_bytes);
		xxl_stats_detail(st, "read_per_input", "%.2f", (double) read / (double) st->record_bytes);
		xxl_stats_detail(st, "written_per_input", "%.2f",
						 (double) written / (double) st->record_bytes);
	}
	memcpy(st->phase_ns, op->phase_ns, sizeof(st->phase_ns));
	st->total_ns = xxl_now_ns() - op->t_start;
}

static void
record_stats(XxlOperator *op, bool completed)
{
	xxl_operator_stats(op, completed, &last_stats);
	have_last_stats = true;
}

const XxlStats *
xxl_operator_last_stats(void)
{
	return have_last_stats ? &last_stats : NULL;
}

#define DETAILS_CUT "\"details_truncated\": true"

/*
 * Append "key": value (value formatted from fmt) to a details buffer.  What
 * does not fit is left out whole (a value cut short would not be JSON), and
 * the buffer then says so, in room kept for that.
 */
static void
append_detail(char *details, size_t size, const char *key, const char *fmt, va_list ap)
{
	char		value[1024];
	size_t		used = strlen(details);
	size_t		room = size - sizeof(", " DETAILS_CUT);
	int			n;

	if (strstr(details, DETAILS_CUT) != NULL)
		return;
	n = vsnprintf(value, sizeof(value), fmt, ap);
	if (n >= 0 && (size_t) n < sizeof(value) && used < room)
	{
		n = snprintf(details + used, room - used, "%s\"%s\": %s", used > 0 ? ", " : "", key, value);
		if (n >= 0 && (size_t) n < room - used)
			return;
	}
	details[used] = '\0';
	snprintf(details + used, size - used, "%s" DETAILS_CUT, used > 0 ? ", " : "");
}

void
xxl_stats_engine(XxlStats *stats, uint64 rows_in, uint64 record_bytes, uint64 memory_peak,
				 uint64 memory_limit, const xxl_io_stats *io)
{
	if (stats->rows_in == 0)
		stats->rows_in = rows_in;
	stats->record_bytes = record_bytes;
	stats->memory_peak = memory_peak;
	stats->memory_limit = memory_limit;
	stats->io = *io;
}

void
xxl_stats_detail(XxlStats *stats, const char *key, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	append_detail(stats->details, sizeof(stats->details), key, fmt, ap);
	va_end(ap);
}

void
xxl_stats_detail_string(XxlStats *stats, const char *key, const char *value)
{
	StringInfoData json;
	int			len = strlen(value);
	char	   *clipped;

	if (len > 200)
		len = pg_mbcliplen(value, len, 200);
	clipped = pnstrdup(value, len);
	initStringInfo(&json);
	escape_json(&json, clipped);
	xxl_stats_detail(stats, key, "%s", json.data);
	pfree(json.data);
	pfree(clipped);
}

void
xxl_operator_detail(XxlOperator *op, const char *key, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	append_detail(op->details, sizeof(op->details), key, fmt, ap);
	va_end(ap);
}

/* The operator's context is going away: normal end, error or abandonment. */
static void
operator_context_reset(void *arg)
{
	XxlOperator *op = (XxlOperator *) arg;

	if (op->core != NULL)
	{
		close_phase(op, XXL_PHASE_DONE);
		record_stats(op, false);
	}
	destroy_core(op);
	xxl_progress_end(op);
	if (op->node.next != NULL)
		dlist_delete(&op->node);
	op->node.next = op->node.prev = NULL;
}

static void
operators_at_exit(int code, Datum arg)
{
	dlist_mutable_iter it;

	dlist_foreach_modify(it, &live_operators)
	{
		XxlOperator *op = dlist_container(XxlOperator, node, it.cur);

		dlist_delete(&op->node);
		op->node.next = op->node.prev = NULL;
		destroy_core(op);
	}
}

/* The engine began a step: show it (xxl_progress.changed). */
static void
progress_changed(void *arg)
{
	xxl_progress_publish((XxlOperator *) arg, false);
}

XxlOperator *
xxl_operator_begin(const char *name)
{
	return xxl_operator_begin_budget(name, xxl_memory_bytes());
}

XxlOperator *
xxl_operator_begin_budget(const char *name, size_t memory)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "xxl operator",
											  ALLOCSET_DEFAULT_SIZES);
	XxlOperator *op = MemoryContextAllocZero(cxt, sizeof(XxlOperator));
	MemoryContext old;

	op->name = name;
	op->cxt = cxt;
	op->memory = memory;
	op->block_size = xxl_effective_block_size(op->memory);
	op->threads = xxl_thread_count();

	/* the directory strings must live as long as the engine object */
	old = MemoryContextSwitchTo(cxt);
	xxl_disk_setup(&op->disk, op->block_size);
	MemoryContextSwitchTo(old);

	if (!exit_hook_registered)
	{
		before_shmem_exit(operators_at_exit, (Datum) 0);
		exit_hook_registered = true;
	}
	op->reset_cb.func = operator_context_reset;
	op->reset_cb.arg = op;
	MemoryContextRegisterResetCallback(cxt, &op->reset_cb);
	dlist_push_head(&live_operators, &op->node);

	op->phase = XXL_PHASE_INPUT;
	op->t_start = op->t_phase = xxl_now_ns();
	xxl_hold_phase_now = XXL_HOLD_INPUT;
	op->progress.changed = progress_changed;
	op->progress.changed_arg = op;
	xxl_progress_begin(op);
	return op;
}

void
xxl_operator_attach(XxlOperator *op, void *core, XxlCoreDestroy destroy, XxlCoreStats collect)
{
	Assert(op->core == NULL);
	op->core = core;
	op->destroy = destroy;
	op->collect = collect;
}

void
xxl_arg_not_null(FunctionCallInfo fcinfo, int n, const char *fname, const char *name)
{
	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 fname ? errmsg("%s: %s must not be null", fname, name)
				 : errmsg("%s must not be null", name)));
}

void
xxl_operator_check_memory(XxlOperator *op, const char *fname, size_t min_memory)
{
	if (op->memory < min_memory)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s needs xxl.memory of at least %zu kB", fname, (min_memory + 1023) / 1024),
				 errhint("SET xxl.memory = '%zukB';", (min_memory + 1023) / 1024)));
}

char *
xxl_arg_text(FunctionCallInfo fcinfo, int n, const char *fname, const char *name)
{
	xxl_arg_not_null(fcinfo, n, fname, name);
	return text_to_cstring(PG_GETARG_TEXT_PP(n));
}

xxl_resources
xxl_operator_resources(XxlOperator *op)
{
	xxl_resources res;

	memset(&res, 0, sizeof(res));
	res.memory = op->memory;
	res.threads = op->threads;
	res.disk = op->disk.config;
	res.cancel = xxl_cancel_requested;
	res.cancel_arg = (void *) op;	/* its polls publish its progress */
	res.progress = &op->progress;
	return res;
}

void
xxl_operator_phase(XxlOperator *op, XxlPhase phase)
{
	close_phase(op, phase);
}

void
xxl_operator_describe(XxlOperator *op, const char *progress_name, uint64 rows_expected)
{
	op->progress_name = progress_name;
	op->rows_expected = rows_expected;
	xxl_progress_publish(op, true);
}

static char *
pretty_bytes(uint64 bytes)
{
	if (bytes >= (uint64) 10 * 1024 * 1024 * 1024)
		return psprintf("%.1f GB", bytes / (1024.0 * 1024 * 1024));
	if (bytes >= 10 * 1024 * 1024)
		return psprintf("%.1f MB", bytes / (1024.0 * 1024));
	if (bytes >= 10 * 1024)
		return psprintf("%.1f kB", bytes / 1024.0);
	return psprintf(UINT64_FORMAT " bytes", bytes);
}

static void
notice_stats(const XxlStats *st)
{
	uint64		rd = 0,
				wr = 0;
	StringInfoData detail;

	for (int i = 0; i < st->io.ndisks; i++)
	{
		rd += st->io.disk[i].bytes_read;
		wr += st->io.disk[i].bytes_written;
	}

	initStringInfo(&detail);
	appendStringInfo(&detail,
					 "memory peak %s of %s, block %s, %d threads; read %s, written %s on %d disks, "
					 "I/O wait %.3f s; input %.3f s, merge %.3f s, output %.3f s, total %.3f s",
					 pretty_bytes(st->memory_peak), pretty_bytes(st->memory_limit),
					 pretty_bytes(st->block_size), st->threads,
					 pretty_bytes(rd), pretty_bytes(wr), st->ndisks,
					 (st->io.wait_read_ns + st->io.wait_write_ns) / 1e9,
					 st->phase_ns[XXL_PHASE_INPUT] / 1e9, st->phase_ns[XXL_PHASE_MERGE] / 1e9,
					 st->phase_ns[XXL_PHASE_OUTPUT] / 1e9, st->total_ns / 1e9);
	if (st->details[0] != '\0')
		appendStringInfo(&detail, "; %s", st->details);
	/* the message is stable for tests; everything that varies is detail */
	ereport(NOTICE,
			(errmsg("xxl %s: " UINT64_FORMAT " rows, " UINT64_FORMAT " runs, %d merge passes",
					st->operator_name, st->rows_in, st->runs, st->merge_passes),
			 errdetail_internal("%s", detail.data)));
}

void
xxl_operator_end(XxlOperator *op)
{
	close_phase(op, XXL_PHASE_DONE);
	record_stats(op, true);
	destroy_core(op);
	MemoryContextDelete(op->cxt);	/* the callback unlinks it */
	if (xxl_log_stats)
		notice_stats(&last_stats);
}

/* xxl.last_stats() -------------------------------------------------------- */

PG_FUNCTION_INFO_V1(xxl_last_stats);

Datum
xxl_last_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const XxlStats *st = &last_stats;
	Datum		values[22];
	bool		nulls[22];
	Datum	   *dirs,
			   *rd,
			   *wr;
	int			n = 0;

	InitMaterializedSRF(fcinfo, 0);
	if (!have_last_stats)
		return (Datum) 0;

	memset(nulls, 0, sizeof(nulls));
	dirs = palloc(sizeof(Datum) * Max(st->ndisks, 1));
	rd = palloc(sizeof(Datum) * Max(st->ndisks, 1));
	wr = palloc(sizeof(Datum) * Max(st->ndisks, 1));
	for (int i = 0; i < st->ndisks; i++)
	{
		bool		used = i < st->io.ndisks;

		dirs[i] = CStringGetTextDatum(st->disks[i]);
		rd[i] = Int64GetDatum(used ? (int64) st->io.disk[i].bytes_read : 0);
		wr[i] = Int64GetDatum(used ? (int64) st->io.disk[i].bytes_written : 0);
	}

	values[n++] = CStringGetTextDatum(st->operator_name);
	values[n++] = BoolGetDatum(st->completed);
	values[n++] = Int64GetDatum((int64) st->rows_in);
	values[n++] = Int64GetDatum((int64) st->rows_out);
	values[n++] = Int64GetDatum((int64) st->runs);
	values[n++] = Int32GetDatum(st->merge_passes);
	values[n++] = Int32GetDatum(st->fan_in);
	values[n++] = Int64GetDatum((int64) st->memory_limit);
	values[n++] = Int64GetDatum((int64) st->memory_peak);
	values[n++] = Int64GetDatum((int64) st->block_size);
	values[n++] = Int32GetDatum(st->threads);
	values[n++] = PointerGetDatum(construct_array(dirs, st->ndisks, TEXTOID, -1, false, TYPALIGN_INT));
	values[n++] = PointerGetDatum(construct_array(rd, st->ndisks, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[n++] = PointerGetDatum(construct_array(wr, st->ndisks, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[n++] = Int64GetDatum((int64) st->io.spill_bytes_peak);
	values[n++] = BoolGetDatum(st->io.direct);
	values[n++] = Float8GetDatum((st->io.wait_read_ns + st->io.wait_write_ns) / 1e6);
	values[n++] = Float8GetDatum(st->phase_ns[XXL_PHASE_INPUT] / 1e6);
	values[n++] = Float8GetDatum(st->phase_ns[XXL_PHASE_MERGE] / 1e6);
	values[n++] = Float8GetDatum(st->phase_ns[XXL_PHASE_OUTPUT] / 1e6);
	values[n++] = Float8GetDatum(st->total_ns / 1e6);
	values[n++] = DirectFunctionCall1(jsonb_in,
									  CStringGetDatum(psprintf("{%s}", st->details)));
	Assert(n == lengthof(values));

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}
