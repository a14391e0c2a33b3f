/*
 * xxl_shard_wire.c — the connection's side of shard streams
 * (xxl_shard_stream_internal.h).  A call's shards work at once, so while
 * one is waited for every other running one is watched too: a shard that
 * fails or is stopped ends the call at once, and what arrives for another
 * (the start of its COPY, one row, its end) is taken and kept for it, one
 * at a time, so nothing here grows with a shard's rows.
 *
 * The statement runs in a savepoint of postgres_fdw's remote transaction.
 * Stopped early without an error (a LIMIT above the sort), it is canceled,
 * read to its end and rolled back to the savepoint: the remote transaction
 * goes on.  On an abort, a transaction callback registered after
 * postgres_fdw's (so called before it) cancels and reads every running
 * statement to its end, because postgres_fdw's clean-up does not expect a
 * COPY in progress; postgres_fdw then rolls the remote transaction back.
 *
 * A connection carries one statement at a time.  A stream can give its
 * connection back before its end: the rest of its COPY is read into a
 * temporary file, and its rows then come from the file (when another
 * statement needs the connection: xxl_shard_statement.c).
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "pg/shard/xxl_shard_stream_internal.h"

#define SHARD_SAVEPOINT "xxl_shard"

struct XxlShardGroup
{
	List	   *streams;
};

/*
 * The streams with a statement running, for the abort callback: it must
 * stop them before postgres_fdw's own callback cleans the connections up,
 * which does not expect a COPY in progress.
 */
static XxlShardStream *live_streams;
static bool xact_callback_registered;

/* An error of the shard's, as an error here: its SQLSTATE, its words, its name. */
static void
shard_error(XxlShardStream *s, PGresult *res, const char *sql)
{
	const char *code = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;
	int			sqlstate = ERRCODE_CONNECTION_FAILURE;
	char	   *message;
	char	   *d = detail ? pstrdup(detail) : NULL;
	char	   *h = hint ? pstrdup(hint) : NULL;

	if (code != NULL && strlen(code) == 5)
		sqlstate = MAKE_SQLSTATE(code[0], code[1], code[2], code[3], code[4]);
	message = pstrdup(primary ? primary : pchomp(PQerrorMessage(s->conn)));
	/* no schema xxl, no xxl.sort there */
	if (h == NULL && (sqlstate == ERRCODE_INVALID_SCHEMA_NAME || sqlstate == ERRCODE_UNDEFINED_FUNCTION))
		h = psprintf("Install pgxxl on server \"%s\": CREATE EXTENSION pgxxl.", s->shard->server);
	if (res)
		PQclear(res);
	ereport(ERROR,
			(errcode(sqlstate),
			 errmsg("shard \"%s\" (%s): %s", s->shard->server, s->shard->where, message),
			 d ? errdetail_internal("%s", d) : 0,
			 h ? errhint("%s", h) : 0,
			 errcontext("remote SQL command: %s", sql)));
}

/*
 * What has arrived for a stream that is not the one waited for, from what
 * libpq has read already (nothing here reads the socket): the start of its
 * COPY, or one row, or its end; an error at once.  A stream with something
 * taken is not read further until it is wanted.
 */
static void
take_ahead(XxlShardStream *s)
{
	if (s->state == STREAM_STARTED || s->state == STREAM_IDLE)
	{
		PGresult   *res;

		if (PQisBusy(s->conn))
			return;
		res = PQgetResult(s->conn);
		if (res != NULL && PQresultStatus(res) == PGRES_COMMAND_OK && s->state == STREAM_STARTED)
		{
			PQclear(res);		/* the savepoint */
			if (PQisBusy(s->conn))
				return;
			res = PQgetResult(s->conn);
		}
		if (res != NULL && PQresultStatus(res) == PGRES_COPY_OUT && s->state == STREAM_STARTED)
		{
			PQclear(res);
			s->state = STREAM_COPYING;
		}
		else if (res != NULL && (PQresultStatus(res) == PGRES_FATAL_ERROR ||
								 PQresultStatus(res) == PGRES_BAD_RESPONSE))
			shard_error(s, res, s->sql);
		else
		{
			s->pending = res;
			return;
		}
	}
	if (s->state == STREAM_COPYING && s->pending_row == NULL)
	{
		char	   *row;
		int			len = PQgetCopyData(s->conn, &row, 1);

		if (len > 0)
		{
			s->pending_row = row;
			s->pending_len = len;
		}
		else if (len == -1)
			s->state = STREAM_COPIED;
		else if (len == -2)
			shard_error(s, NULL, s->sql);
	}
}

/*
 * Wait until a socket of the group's running statements has something,
 * or the latch is set.  Every shard that has no result waiting is watched,
 * not only the one whose row is wanted: a shard that fails or is stopped
 * while another is still sorting ends the call at once.  A result that
 * arrives for another shard is taken (an error is raised at once) and kept
 * for it: one at a time, so nothing here grows with a shard's rows.
 */
static void
wait_group(XxlShardStream *want, const char *sql)
{
	List	   *watched;
	ListCell   *lc;
	WaitEventSet *set;
	WaitEvent  *events;
	int			n;

	watched = list_make1(want);
	foreach(lc, want->group->streams)
	{
		XxlShardStream *s = lfirst(lc);

		if (s == want || !s->busy || s->pending != NULL || s->pending_row != NULL ||
			s->state == STREAM_COPIED)
			continue;
		/*
		 * What its buffer holds first: reading its socket again would move
		 * all of that to the buffer's start, and grow the buffer.
		 */
		take_ahead(s);
		if (s->pending == NULL && s->pending_row == NULL && s->state != STREAM_COPIED &&
			PQsocket(s->conn) >= 0)
			watched = lappend(watched, s);
	}
	set = CreateWaitEventSet(CurrentMemoryContext, list_length(watched) + 2);
	events = palloc(sizeof(WaitEvent) * (list_length(watched) + 2));
	AddWaitEventToSet(set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
	AddWaitEventToSet(set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
	foreach(lc, watched)
	{
		XxlShardStream *s = lfirst(lc);

		AddWaitEventToSet(set, WL_SOCKET_READABLE, PQsocket(s->conn), NULL, s);
	}
	n = WaitEventSetWait(set, -1L, events, list_length(watched) + 2, PG_WAIT_EXTENSION);
	FreeWaitEventSet(set);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	for (int i = 0; i < n; i++)
	{
		XxlShardStream *s = events[i].user_data;

		if (!(events[i].events & WL_SOCKET_READABLE) || s == NULL)
			continue;
		if (!PQconsumeInput(s->conn))
			shard_error(s, NULL, s == want ? sql : s->sql);
		if (s != want)
			take_ahead(s);
	}
	pfree(events);
	list_free(watched);
}

/* The next result on the connection, waited for interruptibly; NULL: none left. */
static PGresult *
next_result(XxlShardStream *s, const char *sql)
{
	for (;;)
	{
		if (s->pending != NULL)
		{
			PGresult   *res = s->pending;

			s->pending = NULL;
			return res;
		}
		if (!PQisBusy(s->conn))
			return PQgetResult(s->conn);
		wait_group(s, sql);
	}
}

/* Results until the statement is over. */
static void
drain(XxlShardStream *s, const char *sql)
{
	PGresult   *res;

	while ((res = next_result(s, sql)) != NULL)
		PQclear(res);
	s->busy = false;
}

char *
xxl_shard_wire_value(XxlShardStream *s, const char *sql)
{
	PGresult   *res;
	char	   *value = NULL;

	if (!PQsendQuery(s->conn, sql))
		shard_error(s, NULL, sql);
	s->busy = true;
	res = next_result(s, sql);
	if (res == NULL || (PQresultStatus(res) != PGRES_TUPLES_OK &&
						PQresultStatus(res) != PGRES_COMMAND_OK))
		shard_error(s, res, sql);
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
		value = pstrdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	drain(s, sql);
	return value;
}

/* Forget what was taken ahead. */
static void
forget_taken(XxlShardStream *s)
{
	if (s->pending != NULL)
		PQclear(s->pending);
	s->pending = NULL;
	if (s->pending_row != NULL)
		PQfreemem(s->pending_row);
	s->pending_row = NULL;
}

static void
unlink_live(XxlShardStream *s)
{
	for (XxlShardStream **p = &live_streams; *p != NULL; p = &(*p)->next_live)
	{
		if (*p == s)
		{
			*p = s->next_live;
			break;
		}
	}
	s->next_live = NULL;
}

/* Wait for the connection until deadline; false when time is up or it is gone. */
static bool
wait_readable(XxlShardStream *s, TimestampTz deadline)
{
	long		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);

	if (left <= 0)
		return false;
	(void) WaitLatchOrSocket(NULL, WL_SOCKET_READABLE | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 PQsocket(s->conn), left, PG_WAIT_EXTENSION);
	return PQconsumeInput(s->conn) != 0;
}

/*
 * Stop the statement running on the stream's connection and read what is
 * left of it, so that the connection is idle (in a failed remote
 * transaction, which postgres_fdw rolls back).  Waits at most 30 seconds
 * for the shard, as postgres_fdw's own clean-up does; a connection that is
 * gone is left to postgres_fdw.
 */
static void
stop_statement(XxlShardStream *s, bool keep_transaction)
{
	char		errbuf[256];
	PGcancel   *cancel;
	PGresult   *res;
	char	   *row;
	TimestampTz deadline = GetCurrentTimestamp() + 30 * USECS_PER_SEC;

	forget_taken(s);
	unlink_live(s);
	if (!s->busy)
		return;
	s->busy = false;
	if (PQstatus(s->conn) != CONNECTION_OK)
		return;
	cancel = PQgetCancel(s->conn);
	if (cancel != NULL)
	{
		(void) PQcancel(cancel, errbuf, sizeof(errbuf));
		PQfreeCancel(cancel);
	}
	for (;;)
	{
		if (PQisBusy(s->conn))
		{
			if (!wait_readable(s, deadline))
				return;
			continue;
		}
		res = PQgetResult(s->conn);
		if (res == NULL)
			break;
		if (PQresultStatus(res) != PGRES_COPY_OUT)
		{
			PQclear(res);
			continue;
		}
		PQclear(res);
		/* the rows still on their way, to the COPY's end */
		for (;;)
		{
			int			got = PQgetCopyData(s->conn, &row, 1);

			if (got > 0)
				PQfreemem(row);
			else if (got < 0)
				break;
			else if (!wait_readable(s, deadline))
				return;
		}
	}
	/* back to before the statement: the remote transaction goes on */
	if (keep_transaction && PQsendQuery(s->conn, "ROLLBACK TO SAVEPOINT " SHARD_SAVEPOINT
										"; RELEASE SAVEPOINT " SHARD_SAVEPOINT))
	{
		for (;;)
		{
			if (PQisBusy(s->conn))
			{
				if (!wait_readable(s, deadline))
					return;
				continue;
			}
			if ((res = PQgetResult(s->conn)) == NULL)
				break;
			PQclear(res);
		}
	}
}

/* Abort: every running statement stopped before postgres_fdw cleans up. */
static void
shard_xact_callback(XactEvent event, void *arg)
{
	if (event != XACT_EVENT_ABORT && event != XACT_EVENT_PARALLEL_ABORT &&
		event != XACT_EVENT_COMMIT && event != XACT_EVENT_PARALLEL_COMMIT)
		return;
	while (live_streams != NULL)
	{
		if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
			stop_statement(live_streams, false);
		else
			unlink_live(live_streams);
	}
}

/*
 * Dropped while its statement runs: stop the statement so that
 * postgres_fdw finds its connection idle.  Without an error (a LIMIT
 * above) the remote transaction goes on.  In an abort, the portal's memory,
 * and the stream with it, goes before the transaction callbacks run, so
 * the stream leaves the live list here, its statement stopped.
 */
static void
drop_stream(void *arg)
{
	XxlShardStream *s = arg;

	if (s->held != NULL)
		PQfreemem(s->held);
	s->held = NULL;
	stop_statement(s, IsTransactionState());
	/* (in an abort, the resource owner closes the spool) */
	if (s->spool != NULL && IsTransactionState())
		BufFileClose(s->spool);
	s->spool = NULL;
}

XxlShardGroup *
xxl_shard_group_create(void)
{
	return palloc0(sizeof(XxlShardGroup));
}

/* The COPY is over: its end result, and the connection idle again. */
static void
end_copy(XxlShardStream *s)
{
	PGresult   *res = next_result(s, s->sql);

	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK)
		shard_error(s, res, s->sql);
	PQclear(res);
	drain(s, s->sql);
	(void) xxl_shard_wire_value(s, "RELEASE SAVEPOINT " SHARD_SAVEPOINT);
	s->state = STREAM_IDLE;
	unlink_live(s);
	xxl_shard_release(s->conn);
}

void
xxl_shard_wire_begin(XxlShardStream *s, const char *sql)
{
	/* after postgres_fdw's (GetConnection registers it): called before it */
	if (!xact_callback_registered)
	{
		RegisterXactCallback(shard_xact_callback, NULL);
		xact_callback_registered = true;
	}
	s->owner = CurrentResourceOwner;
	s->drop_cb.func = drop_stream;
	s->drop_cb.arg = s;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &s->drop_cb);
	s->group->streams = lappend(s->group->streams, s);
	s->sql = psprintf("SAVEPOINT " SHARD_SAVEPOINT "; %s", sql);
	if (!PQsendQuery(s->conn, s->sql))
		shard_error(s, NULL, s->sql);
	s->busy = true;
	s->state = STREAM_STARTED;
	s->next_live = live_streams;
	live_streams = s;
}

/* The spool's next message (malloc'd, as libpq's), or false at its end. */
static bool
spool_next(XxlShardStream *s, char **row, int *len)
{
	size_t		got = BufFileRead(s->spool, len, sizeof(*len));

	if (got == 0)
		return false;
	if (got != sizeof(*len) || *len <= 0)
		ereport(ERROR, (errcode_for_file_access(),
						errmsg("could not read the spooled rows of shard \"%s\"", s->shard->server)));
	/* (with the NUL libpq ends a message with: the decoder writes there for a moment) */
	*row = malloc((size_t) *len + 1);
	if (*row == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	if (BufFileRead(s->spool, *row, *len) != (size_t) *len)
	{
		free(*row);
		ereport(ERROR, (errcode_for_file_access(),
						errmsg("could not read the spooled rows of shard \"%s\"", s->shard->server)));
	}
	(*row)[*len] = '\0';
	return true;
}

/*
 * The next message from the connection: 1 with it; 0 when none has
 * arrived yet and wait is false; -1 once the COPY has ended and the
 * connection is idle.  Waiting watches every shard of the call.
 */
static int
connection_next(XxlShardStream *s, char **row, int *len, bool wait)
{
	while (s->busy)
	{
		if (!wait && s->state == STREAM_STARTED && s->pending == NULL && PQisBusy(s->conn))
		{
			if (!PQconsumeInput(s->conn))
				shard_error(s, NULL, s->sql);
			if (PQisBusy(s->conn))
				return 0;
		}
		if (s->state == STREAM_STARTED)
		{
			PGresult   *res = next_result(s, s->sql);

			if (res != NULL && PQresultStatus(res) == PGRES_COMMAND_OK)
			{
				PQclear(res);	/* the savepoint */
				continue;
			}
			if (res == NULL || PQresultStatus(res) != PGRES_COPY_OUT)
				shard_error(s, res, s->sql);
			PQclear(res);
			s->state = STREAM_COPYING;
			continue;
		}
		if (s->state == STREAM_COPIED)
		{
			end_copy(s);
			break;
		}
		if (s->pending_row != NULL)
		{
			*row = s->pending_row;
			*len = s->pending_len;
			s->pending_row = NULL;
			return 1;
		}
		*len = PQgetCopyData(s->conn, row, 1);
		if (*len == 0 && !wait)
		{
			/* what the socket has, without waiting for more */
			if (!PQconsumeInput(s->conn))
				shard_error(s, NULL, s->sql);
			*len = PQgetCopyData(s->conn, row, 1);
			if (*len == 0)
				return 0;
		}
		if (*len > 0)
			return 1;
		if (*len == 0)
			wait_group(s, s->sql);
		else if (*len == -1)
			s->state = STREAM_COPIED;
		else
			shard_error(s, NULL, s->sql);
	}
	return -1;
}

bool
xxl_shard_wire_next(XxlShardStream *s, char **row, int *len)
{
	if (s->spool != NULL)
		return spool_next(s, row, len);
	return connection_next(s, row, len, true) > 0;
}

int
xxl_shard_wire_poll(XxlShardStream *s, char **row, int *len)
{
	if (s->spool != NULL)
		return spool_next(s, row, len) ? 1 : -1;
	return connection_next(s, row, len, false);
}

void
xxl_shard_wire_wait(XxlShardStream *s)
{
	ListCell   *lc;

	/*
	 * Not when a stream has something in hand already: since it was
	 * polled, another's wait (the end of its COPY) may have taken the
	 * stream's next row, and its socket then stays quiet.
	 */
	foreach(lc, s->group->streams)
	{
		XxlShardStream *o = lfirst(lc);

		if (o->pending != NULL || o->pending_row != NULL || (o->busy && o->state == STREAM_COPIED))
			return;
	}
	wait_group(s, s->sql);
}

/*
 * The rest of the stream's COPY into a temporary file (in the stream's
 * memory, under the resource owner of the statement that started it), to
 * the COPY's end: the connection is then idle, and given back.
 */
void
xxl_shard_wire_spool(XxlShardStream *s)
{
	MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(s));
	ResourceOwner owner = CurrentResourceOwner;
	char	   *row;
	int			len;

	CurrentResourceOwner = s->owner;
	PG_TRY();
	{
		BufFile    *file = BufFileCreateTemp(false);

		while (connection_next(s, &row, &len, true) > 0)
		{
			BufFileWrite(file, &len, sizeof(len));
			BufFileWrite(file, row, len);
			PQfreemem(row);
		}
		if (BufFileSeek(file, 0, 0, SEEK_SET) != 0)
			ereport(ERROR, (errcode_for_file_access(),
							errmsg("could not rewind the spooled rows of shard \"%s\"",
								   s->shard->server)));
		s->spool = file;
	}
	PG_FINALLY();
	{
		CurrentResourceOwner = owner;
		MemoryContextSwitchTo(old);
	}
	PG_END_TRY();
}

bool
xxl_shard_wire_live(void)
{
	return live_streams != NULL;
}

void
xxl_shard_wire_free_server(Oid serverid)
{
	XxlShardStream *s = live_streams;

	while (s != NULL)
	{
		XxlShardStream *next = s->next_live;

		if (s->spool == NULL && s->shard->serverid == serverid)
			xxl_shard_wire_spool(s);	/* (it leaves the live list) */
		s = next;
	}
}
