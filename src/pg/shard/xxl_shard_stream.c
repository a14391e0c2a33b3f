/*
 * xxl_shard_stream.c — one shard's sorted rows (xxl_shard_stream.h).
 *
 * The shard runs
 *     SELECT * FROM xxl.sort('SELECT <its columns, cast to ours> FROM <its
 *     table>', '<the key, every text column with its collation>') AS s(...)
 * so pgxxl sorts there under that server's own xxl.memory and disks.  A
 * text column's collation goes with the key: "C" as it is, a named
 * collation by name, the database default as "default"; before the sort,
 * the shard is asked what that collation is, with the same query this
 * server answers, and a different answer (or none: the collation is
 * missing there) stops the call before anything runs, rather than merging
 * rows in two orders.
 *
 * Rows come in binary and are read with the types' receive functions.
 * The wait for a row is interruptible; on a cancel or error here the
 * local transaction aborts and postgres_fdw, whose connection this is,
 * cancels the remote statement and rolls the remote transaction back.  A
 * stream dropped early without an error (a LIMIT above the sort) cancels
 * its statement itself, so that the connection is idle again for
 * postgres_fdw.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_bswap.h"
#include "portability/instr_time.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "pg/shard/xxl_shard_stream.h"

#define SHARD_SAVEPOINT "xxl_shard_sort"

struct XxlShardGroup
{
	List	   *streams;
};

/* Where a stream's statement is. */
typedef enum StreamState
{
	STREAM_IDLE,				/* nothing running (probes run one at a time) */
	STREAM_STARTED,				/* the COPY sent, its start not yet seen */
	STREAM_COPYING,				/* rows arriving */
	STREAM_COPIED				/* the last row in: its end result to read */
} StreamState;

struct XxlShardStream
{
	XxlShardGroup *group;
	StreamState state;
	PGresult   *pending;		/* a result taken while another was waited for */
	char	   *pending_row;	/* ... or a row of the COPY (libpq's memory) */
	int			pending_len;
	bool		header_read;	/* the COPY's binary header */
	XxlShard   *shard;
	PGconn	   *conn;
	char	   *sql;
	TupleDesc	desc;
	int		   *result_col;		/* per column of desc: in the result, or -1 */
	FmgrInfo   *recv;
	Oid		   *ioparam;
	StringInfoData buf;
	uint64		rows;
	uint64		bytes;
	instr_time	started;
	double		first_row_ms;	/* < 0: none yet */
	bool		busy;			/* a statement is running on conn */
	MemoryContextCallback drop_cb;
	struct XxlShardStream *next_live;	/* in live_streams */
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
 * What has arrived for a stream that is not the one waited for: the start
 * of its COPY, or one row, or its end; an error at once.  A stream with
 * something taken is not read further until it is wanted.
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
	List	   *watched = NIL;
	ListCell   *lc;
	WaitEventSet *set;
	WaitEvent  *events;
	int			n;

	foreach(lc, want->group->streams)
	{
		XxlShardStream *s = lfirst(lc);

		if (s == want || (s->busy && s->pending == NULL && s->pending_row == NULL &&
						  s->state != STREAM_COPIED && PQsocket(s->conn) >= 0))
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

/*
 * One row of one column of a statement run on the shard (a probe), or NULL
 * (also for a command).
 */
static char *
remote_value(XxlShardStream *s, const char *sql)
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

/* The same query here. */
static char *
local_value(const char *sql)
{
	MemoryContext caller = CurrentMemoryContext;
	char	   *value = NULL;
	bool		isnull;
	Datum		d;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(sql, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute failed: %s", sql);
	if (SPI_processed == 1)
	{
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (!isnull)
			value = MemoryContextStrdup(caller, TextDatumGetCString(d));
	}
	SPI_finish();
	return value;
}

/* A collation's schema. */
static char *
collation_schema(Oid collation)
{
	HeapTuple	tp = SearchSysCache1(COLLOID, ObjectIdGetDatum(collation));
	char	   *schema;

	if (!HeapTupleIsValid(tp))
		elog(ERROR, "cache lookup failed for collation %u", collation);
	schema = get_namespace_name(((Form_pg_collation) GETSTRUCT(tp))->collnamespace);
	ReleaseSysCache(tp);
	return schema;
}

/*
 * The text a collation's order follows, as a query both servers answer:
 * the database's for the default, the catalog's by name for the others.
 */
static char *
collation_probe(Oid collation, char **shown)
{
	const char *fields = "concat_ws(' / ', %s, %s, %s, coalesce(%s, ''))";

	if (collation == DEFAULT_COLLATION_OID)
	{
		*shown = pstrdup("the database default");
		return psprintf("SELECT %s FROM pg_catalog.pg_database WHERE datname = current_database()",
						psprintf(fields, "datlocprovider", "datcollate", "datctype", "daticulocale"));
	}
	*shown = psprintf("\"%s\"", get_collation_name(collation));
	return psprintf("SELECT %s FROM pg_catalog.pg_collation c JOIN pg_catalog.pg_namespace n "
					"ON n.oid = c.collnamespace WHERE n.nspname = %s AND c.collname = %s "
					"AND c.collencoding IN (-1, pg_catalog.pg_char_to_encoding(pg_catalog.getdatabaseencoding()))",
					psprintf(fields, "collprovider", "collcollate", "collctype", "colliculocale"),
					quote_literal_cstr(collation_schema(collation)),
					quote_literal_cstr(get_collation_name(collation)));
}

static void
check_collation(XxlShardStream *s, Oid collation)
{
	char	   *shown;
	char	   *probe = collation_probe(collation, &shown);
	char	   *here = local_value(probe);
	char	   *there = remote_value(s, probe);

	if (there == NULL || here == NULL || strcmp(here, there) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_COLLATION_MISMATCH),
				 errmsg("shard \"%s\" (%s) cannot sort in collation %s as this server does",
						s->shard->server, s->shard->where, shown),
				 there == NULL ? errdetail("The collation does not exist there.") :
				 errdetail("Here it is %s, there %s.", here ? here : "(none)", there),
				 errhint("Create the same collation on every shard, or sort with COLLATE \"C\".")));
}

/* The key as an ORDER BY list for the shard, every text column with its collation. */
static char *
remote_order_by(XxlShardStream *s, XxlSortKey *key)
{
	StringInfoData ob;

	initStringInfo(&ob);
	for (int c = 0; c < xxl_sortkey_ncols(key); c++)
	{
		AttrNumber	a = xxl_sortkey_attno(key, c);
		bool		desc,
					nulls_first;
		Oid			collation;

		xxl_sortkey_column_order(key, c, &desc, &nulls_first, &collation);
		appendStringInfo(&ob, "%s%s", c > 0 ? ", " : "",
						 quote_identifier(NameStr(TupleDescAttr(s->desc, a - 1)->attname)));
		if (OidIsValid(collation))
		{
			if (collation == C_COLLATION_OID || collation == POSIX_COLLATION_OID)
				appendStringInfoString(&ob, " COLLATE pg_catalog.\"C\"");
			else if (collation == DEFAULT_COLLATION_OID)
			{
				check_collation(s, collation);
				appendStringInfoString(&ob, " COLLATE pg_catalog.\"default\"");
			}
			else
			{
				check_collation(s, collation);
				appendStringInfo(&ob, " COLLATE %s",
								 quote_qualified_identifier(collation_schema(collation),
															get_collation_name(collation)));
			}
		}
		appendStringInfo(&ob, " %s NULLS %s", desc ? "DESC" : "ASC", nulls_first ? "FIRST" : "LAST");
	}
	return ob.data;
}

/* The statement the shard runs (see the file's comment). */
static char *
remote_sql(XxlShardStream *s, XxlSortKey *key)
{
	StringInfoData inner,
				cols,
				sql;
	ListCell   *lc;
	int			n = 0;

	initStringInfo(&cols);
	for (int i = 0; i < s->desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(s->desc, i);

		s->result_col[i] = -1;
		if (att->attisdropped)
			continue;
		appendStringInfo(&cols, "%s%s %s", n > 0 ? ", " : "", quote_identifier(NameStr(att->attname)),
						 format_type_extended(att->atttypid, att->atttypmod,
											  FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY));
		s->result_col[i] = n++;
	}
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot sort a table without columns across shards")));
	/* every partition on the server, each column cast to this server's type */
	initStringInfo(&inner);
	foreach(lc, s->shard->tables)
	{
		XxlShardTable *t = lfirst(lc);
		bool		first = true;

		appendStringInfoString(&inner, foreach_current_index(lc) > 0 ? " UNION ALL SELECT " : "SELECT ");
		for (int i = 0; i < s->desc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(s->desc, i);

			if (att->attisdropped)
				continue;
			appendStringInfo(&inner, "%s%s::%s AS %s", first ? "" : ", ", t->remote_columns[i],
							 format_type_extended(att->atttypid, att->atttypmod,
												  FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY),
							 quote_identifier(NameStr(att->attname)));
			first = false;
		}
		appendStringInfo(&inner, " FROM %s", t->remote_table);
	}
	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT * FROM xxl.sort(%s, %s) AS s(%s)",
					 quote_literal_cstr(inner.data),
					 quote_literal_cstr(remote_order_by(s, key)), cols.data);
	return sql.data;
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
 * Dropped without an error while its statement runs (a LIMIT above): stop
 * the statement so that postgres_fdw finds its connection idle.  (During
 * an abort the callback above has done so already.)
 */
static void
drop_stream(void *arg)
{
	XxlShardStream *s = arg;

	forget_taken(s);
	if (IsTransactionState())
		stop_statement(s, true);
}

XxlShardGroup *
xxl_shard_group_create(void)
{
	return palloc0(sizeof(XxlShardGroup));
}

XxlShardStream *
xxl_shard_stream_start(XxlShardGroup *group, XxlShard *shard, TupleDesc desc, XxlSortKey *key)
{
	XxlShardStream *s = palloc0(sizeof(XxlShardStream));

	s->group = group;
	group->streams = lappend(group->streams, s);
	s->shard = shard;
	s->desc = desc;
	s->result_col = palloc(sizeof(int) * Max(desc->natts, 1));
	s->recv = palloc0(sizeof(FmgrInfo) * Max(desc->natts, 1));
	s->ioparam = palloc0(sizeof(Oid) * Max(desc->natts, 1));
	s->first_row_ms = -1;
	initStringInfo(&s->buf);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Oid			recv;

		if (att->attisdropped)
			continue;
		getTypeBinaryInputInfo(att->atttypid, &recv, &s->ioparam[i]);
		fmgr_info(recv, &s->recv[i]);
	}
	s->conn = xxl_shard_connect(shard);
	/* after postgres_fdw's (GetConnection registers it): called before it */
	if (!xact_callback_registered)
	{
		RegisterXactCallback(shard_xact_callback, NULL);
		xact_callback_registered = true;
	}
	s->drop_cb.func = drop_stream;
	s->drop_cb.arg = s;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &s->drop_cb);
	/*
	 * In a savepoint of the remote transaction, so that a statement stopped
	 * early leaves the transaction usable to what follows in the local one.
	 */
	s->sql = psprintf("SAVEPOINT " SHARD_SAVEPOINT "; COPY (%s) TO STDOUT (FORMAT binary)",
					  remote_sql(s, key));
	INSTR_TIME_SET_CURRENT(s->started);
	if (!PQsendQuery(s->conn, s->sql))
		shard_error(s, NULL, s->sql);
	s->busy = true;
	s->state = STREAM_STARTED;
	s->next_live = live_streams;
	live_streams = s;
	return s;
}

static void
bad_copy(XxlShardStream *s)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
			 errmsg("shard \"%s\" (%s) sent rows in a form this server does not read",
					s->shard->server, s->shard->where)));
}

static inline uint32
load32(const char *p)
{
	uint32		v;

	memcpy(&v, p, 4);
	return pg_ntoh32(v);
}

/*
 * A row of the binary COPY into values and isnull; false for the trailer.
 * The first message carries the header (signature, flags, extension) too.
 */
static bool
decode_copy_row(XxlShardStream *s, const char *row, int len, Datum *values, bool *isnull)
{
	static const char signature[11] = "PGCOPY\n\377\r\n\0";
	int			pos = 0;
	int16		nfields;
	int			field = 0;

	if (!s->header_read)
	{
		if (len < 19 || memcmp(row, signature, 11) != 0)
			bad_copy(s);
		pos = 19 + (int) load32(row + 15);
		s->header_read = true;
	}
	if (pos + 2 > len)
		bad_copy(s);
	nfields = (int16) ((((unsigned char) row[pos]) << 8) | (unsigned char) row[pos + 1]);
	pos += 2;
	if (nfields == -1)
		return false;
	for (int i = 0; i < s->desc->natts; i++)
	{
		int32		flen;

		values[i] = (Datum) 0;
		isnull[i] = true;
		if (s->result_col[i] < 0)
			continue;
		if (field++ >= nfields || pos + 4 > len)
			bad_copy(s);
		flen = (int32) load32(row + pos);
		pos += 4;
		if (flen == -1)
			continue;
		if (flen < 0 || pos + flen > len)
			bad_copy(s);
		/* the receive functions want a StringInfo (with its trailing NUL) */
		resetStringInfo(&s->buf);
		appendBinaryStringInfo(&s->buf, row + pos, flen);
		values[i] = ReceiveFunctionCall(&s->recv[i], &s->buf, s->ioparam[i],
										TupleDescAttr(s->desc, i)->atttypmod);
		if (s->buf.cursor != s->buf.len)
			bad_copy(s);
		isnull[i] = false;
		pos += flen;
	}
	s->bytes += len;
	return true;
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
	(void) remote_value(s, "RELEASE SAVEPOINT " SHARD_SAVEPOINT);
	s->state = STREAM_IDLE;
	unlink_live(s);
	xxl_shard_release(s->conn);
}

bool
xxl_shard_stream_next(void *stream, Datum *values, bool *isnull)
{
	XxlShardStream *s = stream;

	while (s->busy)
	{
		char	   *row;
		int			len;

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
			row = s->pending_row;
			len = s->pending_len;
			s->pending_row = NULL;
		}
		else if ((len = PQgetCopyData(s->conn, &row, 1)) == 0)
		{
			wait_group(s, s->sql);
			continue;
		}
		if (len == -1)
		{
			s->state = STREAM_COPIED;
			continue;
		}
		if (len < 0)
			shard_error(s, NULL, s->sql);
		PG_TRY();
		{
			if (!decode_copy_row(s, row, len, values, isnull))
				len = 0;
		}
		PG_FINALLY();
		{
			PQfreemem(row);
		}
		PG_END_TRY();
		if (len == 0)
			continue;			/* the trailer: the end comes next */
		if (s->first_row_ms < 0)
		{
			instr_time	now;

			INSTR_TIME_SET_CURRENT(now);
			INSTR_TIME_SUBTRACT(now, s->started);
			s->first_row_ms = INSTR_TIME_GET_MILLISEC(now);
		}
		s->rows++;
		return true;
	}
	return false;
}

char *
xxl_shard_stream_describe(XxlShardStream *s)
{
	return psprintf("{\"shard\": \"%s\", \"partitions\": %d, \"rows\": " UINT64_FORMAT
					", \"bytes\": " UINT64_FORMAT ", \"first_row_ms\": %.1f}",
					s->shard->server, list_length(s->shard->tables), s->rows, s->bytes,
					Max(s->first_row_ms, 0));
}
