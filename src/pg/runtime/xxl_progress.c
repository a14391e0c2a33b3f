/*
 * xxl_progress.c — the shared memory behind xxl.progress (see
 * xxl_progress.h) and the set-returning function the view reads.
 *
 * Slots are indexed by backend id, so a backend finds its own without a
 * lock, and only it writes there.  A write is bracketed by two increments
 * of the slot's change counter (odd while writing); a reader copies the
 * slot until it saw the same even count before and after, as
 * pgstat_read_current_status does.  A backend that exits clears its slot;
 * a crash reinitializes shared memory anyway.
 *
 * Publishing happens on the backend's thread only: from the engine's
 * cancel polls (xxl_cancel.c), which engine threads never make, and from
 * the operator's own phase changes.  Polls come once per block or per
 * 65,536 records; a clock read decides whether this one publishes.
 * track_activities = off, which stops pg_stat_activity's updates, stops
 * these too.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "pg/runtime/xxl_cancel.h"
#include "pg/runtime/xxl_operator.h"
#include "pg/runtime/xxl_progress.h"

/* Operators one backend runs at once that the view shows (nested ones). */
#define XXL_PROGRESS_DEPTH 4
/* How often a running operator publishes at most. */
#define XXL_PROGRESS_INTERVAL_MS 100

typedef struct XxlProgressEntry
{
	bool		used;
	char		name[NAMEDATALEN];
	int64		query_id;
	TimestampTz started;
	int			phase;			/* XxlPhase */
	bool		sorts;			/* its middle phase merges runs */
	char		step[32];		/* "" : none */
	uint32		step_no;
	uint32		steps;
	uint64		step_done;
	uint64		step_total;
	bool		output_per_input;
	uint64		rows_read;
	uint64		rows_expected;
	uint64		rows_written;
	uint64		bytes_read;
	uint64		runs;
	uint64		spill_bytes;
	uint64		spill_peak;
	uint64		memory;
	uint64		memory_peak;
} XxlProgressEntry;

typedef struct XxlProgressSlot
{
	uint32		changecount;	/* odd while the owner writes */
	int			pid;			/* 0: no operator has run in this backend */
	Oid			datid;
	Oid			userid;			/* the session's user, as in pg_stat_activity */
	XxlProgressEntry ops[XXL_PROGRESS_DEPTH];
} XxlProgressSlot;

static XxlProgressSlot *slots = NULL;	/* MaxBackends of them; NULL: not preloaded */
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static bool exit_hook_registered = false;

static Size
slots_size(void)
{
	return mul_size(MaxBackends, sizeof(XxlProgressSlot));
}

static void
progress_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(slots_size());
}

static void
progress_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	slots = ShmemInitStruct("pgxxl progress", slots_size(), &found);
	if (!found)
		memset(slots, 0, slots_size());
	LWLockRelease(AddinShmemInitLock);
}

void
xxl_progress_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = progress_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = progress_shmem_startup;
	/*
	 * No EnableQueryId(): query ids are the server's to switch on
	 * (compute_query_id), and switching them on would change every
	 * EXPLAIN VERBOSE.  The view shows them where they are computed.
	 */
}

/* This backend's slot, or NULL (not preloaded, or no backend id). */
static XxlProgressSlot *
my_slot(void)
{
	if (slots == NULL || MyBackendId == InvalidBackendId || MyBackendId > MaxBackends)
		return NULL;
	return &slots[MyBackendId - 1];
}

static inline void
begin_write(volatile XxlProgressSlot *slot)
{
	slot->changecount++;
	pg_write_barrier();
}

static inline void
end_write(volatile XxlProgressSlot *slot)
{
	pg_write_barrier();
	slot->changecount++;
}

static void
clear_slot_at_exit(int code, Datum arg)
{
	XxlProgressSlot *slot = my_slot();

	if (slot == NULL)
		return;
	begin_write(slot);
	slot->pid = 0;
	for (int i = 0; i < XXL_PROGRESS_DEPTH; i++)
		slot->ops[i].used = false;
	end_write(slot);
}

void
xxl_progress_begin(XxlOperator *op)
{
	XxlProgressSlot *slot = my_slot();

	op->progress_entry = -1;
	op->started = GetCurrentTimestamp();
	op->query_id = pgstat_get_my_query_id();
	/* track_activities = off hides what a backend does, here as in pg_stat_activity */
	if (slot == NULL || !pgstat_track_activities)
		return;
	if (!exit_hook_registered)
	{
		before_shmem_exit(clear_slot_at_exit, (Datum) 0);
		exit_hook_registered = true;
	}
	for (int i = 0; i < XXL_PROGRESS_DEPTH; i++)
		if (!slot->ops[i].used)
		{
			op->progress_entry = i;
			begin_write(slot);
			slot->pid = MyProcPid;
			slot->datid = MyDatabaseId;
			slot->userid = GetSessionUserId();
			slot->ops[i].used = true;
			end_write(slot);
			break;
		}
	xxl_progress_publish(op, true);
}

void
xxl_progress_publish(XxlOperator *op, bool force)
{
	XxlProgressSlot *slot = my_slot();
	const xxl_progress *p = &op->progress;
	XxlProgressEntry e;
	uint64		now;

	if (slot == NULL || op->progress_entry < 0 || !xxl_on_backend_thread())
		return;
	now = xxl_now_ns();
	/*
	 * A new kind of step shows at once; its numbers and counts at the
	 * interval (a BFS may go through a level per few nodes).
	 */
	if (!force && p->step == op->published_step &&
		now - op->progress_at < (uint64) XXL_PROGRESS_INTERVAL_MS * 1000000)
		return;
	op->progress_at = now;
	op->published_step = p->step;

	memset(&e, 0, sizeof(e));
	e.used = true;
	strlcpy(e.name, op->progress_name ? op->progress_name : op->name, NAMEDATALEN);
	e.query_id = op->query_id;
	e.started = op->started;
	e.phase = op->phase;
	e.sorts = p->records > 0;	/* a sorter of its own took its input */
	if (p->step != NULL)
	{
		strlcpy(e.step, p->step, sizeof(e.step));
		e.step_no = p->step_no;
		e.steps = p->steps;
		e.step_done = p->done;
		e.step_total = p->total;
	}
	e.output_per_input = op->output_per_input;
	/*
	 * Only what the glue counts and the engine put in op->progress: never
	 * the operator's statistics collector, which may act on the engine
	 * (stop a worker, close a clock) and is for the operator's end.
	 */
	e.rows_read = Max(op->rows_in, p->records);
	e.rows_expected = op->rows_expected;
	e.rows_written = op->rows_out;
	e.bytes_read = p->bytes;
	e.runs = p->runs;
	if (op->disk.account_live)
	{
		e.spill_bytes = __atomic_load_n(&op->disk.account.used, __ATOMIC_RELAXED);
		e.spill_peak = __atomic_load_n(&op->disk.account.peak, __ATOMIC_RELAXED);
	}
	e.memory = op->memory;
	e.memory_peak = p->memory_peak;

	begin_write(slot);
	memcpy(&slot->ops[op->progress_entry], &e, sizeof(e));
	end_write(slot);
}

void
xxl_progress_end(XxlOperator *op)
{
	XxlProgressSlot *slot = my_slot();

	if (slot == NULL || op->progress_entry < 0)
		return;
	begin_write(slot);
	slot->ops[op->progress_entry].used = false;
	end_write(slot);
	op->progress_entry = -1;
}

/* xxl.progress_rows(), under the view xxl.progress ---------------------------------------------------------- */

/* A consistent copy of a slot (see the header comment). */
static void
read_slot(volatile XxlProgressSlot *slot, XxlProgressSlot *copy)
{
	for (;;)
	{
		uint32		before = slot->changecount;
		uint32		after;

		pg_read_barrier();
		memcpy(copy, (XxlProgressSlot *) slot, sizeof(*copy));
		pg_read_barrier();
		after = slot->changecount;
		if (before == after && (before & 1) == 0)
			return;
		CHECK_FOR_INTERRUPTS();
	}
}

/* What the phase column says: the phase, and the step it is in. */
static char *
phase_text(const XxlProgressEntry *e)
{
	if (e->phase == XXL_PHASE_INPUT)
		return pstrdup(e->runs > 0 ? "reading input, forming runs" : "reading input");
	if (e->phase == XXL_PHASE_OUTPUT)
		return pstrdup("writing output");
	if (e->step[0] == '\0')
		return pstrdup(e->sorts ? "merging" : "computing");
	if (e->steps > 0)
		return psprintf("%s %u of %u", e->step, e->step_no, e->steps);
	return psprintf("%s %u", e->step, e->step_no);
}

/* How far the operator is, where its phase says: NaN when it does not. */
static double
percent(const XxlProgressEntry *e)
{
	double		p;

	if (e->phase == XXL_PHASE_INPUT && e->rows_expected > 0)
		p = 100.0 * e->rows_read / e->rows_expected;
	else if (e->phase == XXL_PHASE_MERGE && e->steps > 0)
		p = 100.0 * ((e->step_no - 1) + (e->step_total > 0 ? (double) e->step_done / e->step_total : 0))
			/ e->steps;
	else if (e->phase == XXL_PHASE_OUTPUT && e->output_per_input && e->rows_read > 0)
		p = 100.0 * e->rows_written / e->rows_read;
	else
		return get_float8_nan();
	return Min(p, 100.0);
}

#define PROGRESS_COLS 17

PG_FUNCTION_INFO_V1(xxl_progress_rows);

Datum
xxl_progress_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		all_stats;
	XxlProgressSlot *copy;

	if (slots == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("xxl.progress needs pgxxl in shared_preload_libraries"),
				 errdetail("Operators publish their progress in shared memory, which only a preloaded library has."),
				 errhint("Add pgxxl to shared_preload_libraries in postgresql.conf and restart the server.")));

	InitMaterializedSRF(fcinfo, 0);
	all_stats = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	copy = palloc(sizeof(XxlProgressSlot));
	for (int b = 0; b < MaxBackends; b++)
	{
		bool		visible;

		read_slot(&slots[b], copy);
		if (copy->pid == 0)
			continue;
		/* pg_stat_activity's rule: pid and database for all, the rest for role members */
		visible = all_stats || has_privs_of_role(GetUserId(), copy->userid);
		for (int i = 0; i < XXL_PROGRESS_DEPTH; i++)
		{
			const XxlProgressEntry *e = &copy->ops[i];
			Datum		values[PROGRESS_COLS];
			bool		nulls[PROGRESS_COLS];
			double		pct;
			int			n = 0;

			if (!e->used)
				continue;
			memset(nulls, !visible, sizeof(nulls));
			values[n++] = Int32GetDatum(copy->pid);
			nulls[0] = false;
			values[n++] = ObjectIdGetDatum(copy->datid);
			nulls[1] = false;
			values[n++] = CStringGetTextDatum(e->name);
			values[n++] = Int64GetDatum(e->query_id);
			if (visible && e->query_id == 0)
				nulls[n - 1] = true;
			values[n++] = TimestampTzGetDatum(e->started);
			values[n++] = CStringGetTextDatum(phase_text(e));
			values[n++] = Int64GetDatum((int64) e->rows_read);
			values[n++] = Int64GetDatum((int64) e->rows_expected);
			if (visible && e->rows_expected == 0)
				nulls[n - 1] = true;
			values[n++] = Int64GetDatum((int64) e->rows_written);
			values[n++] = Int64GetDatum((int64) e->bytes_read);
			if (visible && e->bytes_read == 0)
				nulls[n - 1] = true;	/* no sorter of its own counts them */
			values[n++] = Int64GetDatum((int64) e->runs);
			values[n++] = Int64GetDatum((int64) e->spill_bytes);
			values[n++] = Int64GetDatum((int64) e->spill_peak);
			values[n++] = Int64GetDatum((int64) e->memory);
			values[n++] = Int64GetDatum((int64) e->memory_peak);
			if (visible && e->memory_peak == 0)
				nulls[n - 1] = true;	/* not reported yet */
			pct = percent(e);
			values[n++] = Float8GetDatum(pct);
			if (visible && isnan(pct))
				nulls[n - 1] = true;
			values[n++] = Int32GetDatum(i);
			Assert(n == PROGRESS_COLS);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	return (Datum) 0;
}
