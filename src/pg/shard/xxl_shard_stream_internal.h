/*
 * xxl_shard_stream_internal.h — a shard stream's state, shared by the
 * statement and its rows (xxl_shard_stream.c) and the connection's side
 * (xxl_shard_wire.c: waiting on every shard of a call at once, results and
 * COPY data, errors, stopping a statement on an early end or an abort).
 */
#ifndef XXL_PG_SHARD_STREAM_INTERNAL_H
#define XXL_PG_SHARD_STREAM_INTERNAL_H

#include "portability/instr_time.h"
#include "storage/buffile.h"
#include "utils/resowner.h"

#include "pg/shard/xxl_shard_stream.h"

/* Where a stream's statement is. */
typedef enum XxlStreamState
{
	STREAM_IDLE,				/* nothing running (probes run one at a time) */
	STREAM_STARTED,				/* the COPY sent, its start not yet seen */
	STREAM_COPYING,				/* rows arriving */
	STREAM_COPIED				/* the last row in: its end result to read */
} XxlStreamState;

struct XxlShardStream
{
	XxlShardGroup *group;
	XxlStreamState state;
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
	int		   *fixed;			/* per column: xxl_shard_fixed_width, read here */
	uint64		rows;
	uint64		bytes;
	instr_time	started;
	double		first_row_ms;	/* < 0: none yet */
	bool		busy;			/* a statement is running on conn */
	BufFile    *spool;			/* the rest of its rows, read here when conn was needed */
	bool		ended;			/* its last row read (xxl_shard_streams_next_any) */
	bool		packed;			/* its rows came packed, many to a message */
	bool		packed_rows;	/* its statement is wrapped in xxl.packed_rows */
	char	   *held;			/* a message of packed rows being read (PQfreemem) */
	int			held_pos;		/* its next row */
	int			held_end;
	ResourceOwner owner;		/* the spool's (the statement's that started it) */
	MemoryContextCallback drop_cb;
	struct XxlShardStream *next_live;	/* among the streams with a statement running */
};

/*
 * Start sql (a COPY ... TO STDOUT in binary) on the stream's connection,
 * without waiting; the statement is stopped if the stream is dropped
 * early, and before postgres_fdw cleans up on an abort.
 */
extern void xxl_shard_wire_begin(XxlShardStream *s, const char *sql);

/*
 * The next message of the COPY (libpq's memory, or malloc'd: PQfreemem
 * it), waited for while every other shard of the call is watched; false
 * once the COPY has ended and the connection is idle again.  Once another
 * statement needed the connection, the messages come from the spool.
 */
extern bool xxl_shard_wire_next(XxlShardStream *s, char **row, int *len);

/*
 * The same without waiting: 1 with a message, 0 when none has arrived
 * yet, -1 at the end.  xxl_shard_wire_wait then waits until something
 * arrives for s or any other running stream of its call (at once when a
 * stream of the call has something in hand: poll them all again).
 */
extern int	xxl_shard_wire_poll(XxlShardStream *s, char **row, int *len);
extern void xxl_shard_wire_wait(XxlShardStream *s);

/*
 * The rest of the stream's rows read into a temporary file, its statement
 * then over and its connection given back to postgres_fdw; later rows
 * come from the file.
 */
extern void xxl_shard_wire_spool(XxlShardStream *s);

/*
 * Before another statement uses a connection to server serverid: every
 * stream holding one spooled, so that the connection is idle.  (Whether
 * any stream holds a connection now: xxl_shard_wire_live.)
 */
extern void xxl_shard_wire_free_server(Oid serverid);
extern bool xxl_shard_wire_live(void);

/* One value of a statement run on the shard now (a probe), or NULL. */
extern char *xxl_shard_wire_value(XxlShardStream *s, const char *sql);

#endif							/* XXL_PG_SHARD_STREAM_INTERNAL_H */
