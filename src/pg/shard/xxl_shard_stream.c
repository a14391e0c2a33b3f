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
 * Other operators send their own statement over the shard's partitions
 * (xxl_shard_stream_open, then _send).  Rows come as a binary COPY of the
 * statement and are read with the types' receive functions.  Where the
 * shard's pgxxl has it, the statement is wrapped in xxl.packed_rows
 * (xxl_shard_packed_rows.c), and a message of the COPY is then a block of
 * rows in the COPY's row format, read here row by row while it is held.
 * The connection's side (waiting, errors, stopping early or on an abort)
 * is xxl_shard_wire.c's.
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "port/pg_bswap.h"
#include "portability/instr_time.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "pg/shard/xxl_shard_fixed.h"
#include "pg/shard/xxl_shard_stream_internal.h"

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

/* An error unless the shard has collation as this server has it (see the header). */
static void
check_collation(XxlShardStream *s, Oid collation)
{
	char	   *shown;
	char	   *probe;
	char	   *here;
	char	   *there;

	if (!OidIsValid(collation) || collation == C_COLLATION_OID || collation == POSIX_COLLATION_OID)
		return;
	probe = collation_probe(collation, &shown);
	here = local_value(probe);
	there = xxl_shard_wire_value(s, probe);

	if (there == NULL || here == NULL || strcmp(here, there) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_COLLATION_MISMATCH),
				 errmsg("shard \"%s\" (%s) cannot sort in collation %s as this server does",
						s->shard->server, s->shard->where, shown),
				 there == NULL ? errdetail("The collation does not exist there.") :
				 errdetail("Here it is %s, there %s.", here ? here : "(none)", there),
				 errhint("Create the same collation on every shard, or sort with COLLATE \"C\".")));
}

void
xxl_shard_stream_check_collations(XxlShardStream *s, const Oid *collations, int n)
{
	for (int i = 0; i < n; i++)
	{
		int			j = 0;

		while (j < i && collations[j] != collations[i])
			j++;
		if (j == i)				/* each once: a probe is a round trip */
			check_collation(s, collations[i]);
	}
}

/*
 * The key as an ORDER BY list for the shard, every text column with its
 * collation, after the shard was found to have those collations.
 */
static char *
remote_order_by(XxlShardStream *s, XxlSortKey *key)
{
	StringInfoData ob;
	int			n = xxl_sortkey_ncols(key);
	Oid		   *collations = palloc(sizeof(Oid) * Max(n, 1));

	for (int c = 0; c < n; c++)
	{
		bool		desc,
					nulls_first;

		xxl_sortkey_column_order(key, c, &desc, &nulls_first, &collations[c]);
	}
	xxl_shard_stream_check_collations(s, collations, n);
	initStringInfo(&ob);
	for (int c = 0; c < n; c++)
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
				appendStringInfoString(&ob, " COLLATE pg_catalog.\"default\"");
			else
				appendStringInfo(&ob, " COLLATE %s",
								 quote_qualified_identifier(collation_schema(collation),
															get_collation_name(collation)));
		}
		appendStringInfo(&ob, " %s NULLS %s", desc ? "DESC" : "ASC", nulls_first ? "FIRST" : "LAST");
	}
	return ob.data;
}

char *
xxl_shard_partitions_sql(XxlShard *shard, TupleDesc parent, const bool *wanted)
{
	StringInfoData sql;
	ListCell   *lc;

	initStringInfo(&sql);
	foreach(lc, shard->tables)
	{
		XxlShardTable *t = lfirst(lc);
		bool		first = true;

		appendStringInfoString(&sql, foreach_current_index(lc) > 0 ? " UNION ALL SELECT " : "SELECT ");
		for (int i = 0; i < parent->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(parent, i);

			if (att->attisdropped || (wanted != NULL && !wanted[i]))
				continue;
			appendStringInfo(&sql, "%s%s::%s AS %s", first ? "" : ", ", t->remote_columns[i],
							 format_type_extended(att->atttypid, att->atttypmod,
												  FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY),
							 quote_identifier(NameStr(att->attname)));
			first = false;
		}
		appendStringInfo(&sql, " FROM %s", t->remote_table);
	}
	return sql.data;
}

/* The sort the shard runs (see the file's comment); every column of s->desc comes back. */
static char *
remote_sort_sql(XxlShardStream *s, XxlSortKey *key)
{
	StringInfoData cols;
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
	return psprintf("SELECT * FROM xxl.sort(%s, %s) AS s(%s)",
					quote_literal_cstr(xxl_shard_partitions_sql(s->shard, s->desc, NULL)),
					quote_literal_cstr(remote_order_by(s, key)), cols.data);
}

void
xxl_shard_stream_layout(XxlShardStream *s, TupleDesc desc, const int *result_col)
{
	s->desc = desc;
	s->result_col = palloc(sizeof(int) * Max(desc->natts, 1));
	s->recv = palloc0(sizeof(FmgrInfo) * Max(desc->natts, 1));
	s->ioparam = palloc0(sizeof(Oid) * Max(desc->natts, 1));
	s->fixed = palloc0(sizeof(int) * Max(desc->natts, 1));
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Oid			recv;

		s->result_col[i] = result_col != NULL ? result_col[i] : i;
		if (att->attisdropped || s->result_col[i] < 0)
			continue;
		s->fixed[i] = xxl_shard_fixed_width(att->atttypid);
		getTypeBinaryInputInfo(att->atttypid, &recv, &s->ioparam[i]);
		fmgr_info(recv, &s->recv[i]);
	}
}

XxlShardStream *
xxl_shard_stream_open(XxlShardGroup *group, XxlShard *shard, TupleDesc desc, const int *result_col)
{
	XxlShardStream *s = palloc0(sizeof(XxlShardStream));

	s->group = group;
	s->shard = shard;
	s->first_row_ms = -1;
	if (desc != NULL)
		xxl_shard_stream_layout(s, desc, result_col);
	/* (a stream of an enclosing statement on the same server gives its connection back) */
	xxl_shard_wire_free_server(shard->serverid);
	s->conn = xxl_shard_connect(shard);
	return s;
}

bool
xxl_shard_stream_may_call(XxlShardStream *s, const char *signature)
{
	char	   *yes;

	Assert(s->state == STREAM_IDLE);
	yes = xxl_shard_wire_value(s, psprintf(
		"SELECT pg_catalog.has_function_privilege(f, 'EXECUTE') "
		"AND pg_catalog.has_schema_privilege(n.oid, 'USAGE') "
		"FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace, "
		"pg_catalog.to_regprocedure(%s) f WHERE p.oid = f",
		quote_literal_cstr(signature)));
	return yes != NULL && strcmp(yes, "t") == 0;
}

void
xxl_shard_stream_send(XxlShardStream *s, const char *select, bool pack)
{
	/* a shard whose pgxxl has it (0.9 on) packs the rows many to a message */
	if (pack && xxl_shard_stream_may_call(s, "xxl.packed_rows(text)"))
	{
		s->packed_rows = true;
		select = psprintf("SELECT xxl.packed_rows(%s)", quote_literal_cstr(select));
	}
	INSTR_TIME_SET_CURRENT(s->started);
	xxl_shard_wire_begin(s, psprintf("COPY (%s) TO STDOUT (FORMAT binary)", select));
}

XxlShardStream *
xxl_shard_stream_start(XxlShardGroup *group, XxlShard *shard, TupleDesc desc, XxlSortKey *key)
{
	XxlShardStream *s = xxl_shard_stream_open(group, shard, desc, NULL);

	xxl_shard_stream_send(s, remote_sort_sql(s, key), true);
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
 * The fields of the row at row + *pos (of len bytes) into values and
 * isnull, *pos then past it; false for the COPY's trailer.
 */
static bool
decode_fields(XxlShardStream *s, char *row, int *pos_io, int len, Datum *values, bool *isnull)
{
	StringInfoData field_buf;
	char		saved;
	int			pos = *pos_io;
	int16		nfields;
	int			field = 0;

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
		if (s->fixed[i] > 0)
		{
			/* the receive function's work, done here (xxl_shard_fixed.h) */
			if (flen != s->fixed[i])
				bad_copy(s);
			values[i] = xxl_shard_fixed_recv(row + pos, flen);
			isnull[i] = false;
			pos += flen;
			continue;
		}
		/*
		 * The field in place, as record_recv reads its fields: the receive
		 * functions want a StringInfo with a trailing NUL, so the byte after
		 * the field (the next field's, or the NUL libpq ends a message with)
		 * is one for a moment.
		 */
		field_buf.data = row + pos;
		field_buf.len = field_buf.maxlen = flen;
		field_buf.cursor = 0;
		saved = row[pos + flen];
		row[pos + flen] = '\0';
		values[i] = ReceiveFunctionCall(&s->recv[i], &field_buf, s->ioparam[i],
										TupleDescAttr(s->desc, i)->atttypmod);
		row[pos + flen] = saved;
		if (field_buf.cursor != field_buf.len)
			bad_copy(s);
		isnull[i] = false;
		pos += flen;
	}
	/* (fields after the columns read: skipped, so that a block's next row is found) */
	for (; field < nfields; field++)
	{
		int32		flen;

		if (pos + 4 > len)
			bad_copy(s);
		flen = (int32) load32(row + pos);
		pos += 4;
		if (flen < -1 || (flen > 0 && pos + flen > len))
			bad_copy(s);
		pos += Max(flen, 0);
	}
	*pos_io = pos;
	return true;
}

/* Past the COPY's binary header (signature, flags, extension) in its first message. */
static int
skip_header(XxlShardStream *s, const char *row, int len)
{
	static const char signature[11] = "PGCOPY\n\377\r\n\0";

	if (s->header_read)
		return 0;
	if (len < 19 || memcmp(row, signature, 11) != 0)
		bad_copy(s);
	s->header_read = true;
	return 19 + (int) load32(row + 15);
}

static void
count_row(XxlShardStream *s)
{
	if (s->first_row_ms < 0)
	{
		instr_time	now;

		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, s->started);
		s->first_row_ms = INSTR_TIME_GET_MILLISEC(now);
	}
	s->rows++;
}

/* The next row of the block in hand, or false (the block given back) when it has none. */
static bool
take_held(XxlShardStream *s, Datum *values, bool *isnull)
{
	if (s->held == NULL)
		return false;
	if (s->held_pos < s->held_end)
	{
		if (!decode_fields(s, s->held, &s->held_pos, s->held_end, values, isnull))
			bad_copy(s);
		count_row(s);
		return true;
	}
	PQfreemem(s->held);
	s->held = NULL;
	return false;
}

/*
 * A received message: its row, or with packed rows its block, held (and
 * freed when read or when the stream is dropped) and its first row taken;
 * false for the COPY's trailer.
 */
static bool
take_message(XxlShardStream *s, char *row, int len, Datum *values, bool *isnull)
{
	bool		got;

	s->bytes += len;
	if (s->packed_rows)
	{
		int			pos;
		int16		nfields;
		int32		blen;

		s->held = row;
		pos = skip_header(s, row, len);
		if (pos + 2 > len)
			bad_copy(s);
		nfields = (int16) ((((unsigned char) row[pos]) << 8) | (unsigned char) row[pos + 1]);
		if (nfields == -1)
		{
			s->held = NULL;
			PQfreemem(row);
			return false;
		}
		if (nfields != 1 || pos + 6 > len)
			bad_copy(s);
		blen = (int32) load32(row + pos + 2);
		if (blen <= 0 || pos + 6 + blen > len)
			bad_copy(s);
		s->held_pos = pos + 6;
		s->held_end = pos + 6 + blen;
		return take_held(s, values, isnull);
	}
	PG_TRY();
	{
		int			pos = skip_header(s, row, len);

		got = decode_fields(s, row, &pos, len, values, isnull);
	}
	PG_FINALLY();
	{
		PQfreemem(row);
	}
	PG_END_TRY();
	if (got)
		count_row(s);
	return got;
}

bool
xxl_shard_stream_next(void *stream, Datum *values, bool *isnull)
{
	XxlShardStream *s = stream;
	char	   *row;
	int			len;

	if (take_held(s, values, isnull))
		return true;
	while (xxl_shard_wire_next(s, &row, &len))
	{
		if (take_message(s, row, len, values, isnull))
			return true;
	}
	return false;
}

bool
xxl_shard_streams_next_any(XxlShardStream **streams, int n, int *at, Datum *values,
						   bool *isnull)
{
	for (;;)
	{
		XxlShardStream *waiting = NULL;

		/* from the stream that gave the last row: no poll of the others while it has rows */
		for (int i = 0; i < n; i++)
		{
			XxlShardStream *s = streams[(*at + i) % n];
			char	   *row;
			int			len;
			int			got;

			if (take_held(s, values, isnull))
			{
				*at = (*at + i) % n;
				return true;
			}
			while (!s->ended && (got = xxl_shard_wire_poll(s, &row, &len)) != 0)
			{
				if (got < 0)
					s->ended = true;
				else if (take_message(s, row, len, values, isnull))
				{
					*at = (*at + i) % n;
					return true;
				}
			}
			if (!s->ended && waiting == NULL)
				waiting = s;
		}
		if (waiting == NULL)
			return false;
		xxl_shard_wire_wait(waiting);
	}
}

void
xxl_shard_stream_figures(XxlShardStream *s, uint64 *rows, uint64 *bytes, double *first_row_ms)
{
	*rows = s->rows;
	*bytes = s->bytes;
	*first_row_ms = s->first_row_ms;
}

void
xxl_shard_stream_packed_rows(XxlShardStream *s, uint64 n)
{
	/* (the message was counted as a row) */
	s->rows += n - 1;
	s->packed = true;
}

void
xxl_shard_streams_report(XxlOperator *op, XxlShardStream **streams, int n)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < n; i++)
	{
		XxlShardStream *s = streams[i];

		appendStringInfo(&buf, "%s{\"shard\": \"%s\", \"partitions\": %d, \"rows\": " UINT64_FORMAT
						 ", \"bytes\": " UINT64_FORMAT ", \"first_row_ms\": %.1f%s%s}",
						 i > 0 ? ", " : "", s->shard->server, Max(list_length(s->shard->tables), 1),
						 s->rows, s->bytes, Max(s->first_row_ms, 0),
						 s->spool != NULL ? ", \"spooled\": true" : "",
						 s->packed || s->packed_rows ? ", \"packed\": true" : "");
	}
	xxl_operator_detail(op, "shards", "[%s]", buf.data);
}
