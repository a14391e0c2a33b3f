/*
 * xxl_shard_fdw.c — shards as postgres_fdw sees them (xxl_shard_fdw.h).
 * postgres_fdw's GetConnection and ReleaseConnection are looked up in its
 * library once, by name, as PostgreSQL looks up any function of a loaded
 * module; its option names (schema_name, table_name, column_name) are its
 * documented ones.
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_foreign_table.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "pg/runtime/runtime.h"
#include "pg/io/io.h"
#include "pg/shard/xxl_shard_fdw.h"

#define POSTGRES_FDW_LIBRARY "$libdir/postgres_fdw"

/* postgres_fdw's own (contrib/postgres_fdw/postgres_fdw.h, PostgreSQL 15) */
typedef struct PgFdwConnState PgFdwConnState;
typedef PGconn *(*GetConnectionFn) (UserMapping *user, bool will_prep_stmt, PgFdwConnState **state);
typedef void (*ReleaseConnectionFn) (PGconn *conn);

static GetConnectionFn get_connection;
static ReleaseConnectionFn release_connection;

static void
load_postgres_fdw(void)
{
	if (get_connection != NULL)
		return;
	get_connection = (GetConnectionFn)
		load_external_function(POSTGRES_FDW_LIBRARY, "GetConnection", true, NULL);
	release_connection = (ReleaseConnectionFn)
		load_external_function(POSTGRES_FDW_LIBRARY, "ReleaseConnection", true, NULL);
}

bool
xxl_shard_is_postgres_fdw(Oid relid)
{
	ForeignTable *ft;
	ForeignServer *server;
	ForeignDataWrapper *fdw;
	char	   *handler;

	if (get_rel_relkind(relid) != RELKIND_FOREIGN_TABLE)
		return false;
	ft = GetForeignTable(relid);
	server = GetForeignServer(ft->serverid);
	fdw = GetForeignDataWrapper(server->fdwid);
	if (!OidIsValid(fdw->fdwhandler))
		return false;
	handler = get_func_name(fdw->fdwhandler);
	return handler != NULL && strcmp(handler, "postgres_fdw_handler") == 0;
}

/* The value of option name in options, or NULL. */
static char *
option(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *d = lfirst_node(DefElem, lc);

		if (strcmp(d->defname, name) == 0)
			return defGetString(d);
	}
	return NULL;
}

XxlShard *
xxl_shard_of_partition(Oid relid, Oid userid)
{
	ForeignServer *server = GetForeignServer(GetForeignTable(relid)->serverid);
	XxlShard   *shard = palloc0(sizeof(XxlShard));

	shard->serverid = server->serverid;
	shard->server = pstrdup(server->servername);
	shard->where = psprintf("partition \"%s\"", get_rel_name(relid));
	shard->userid = userid;
	return shard;
}

/*
 * Foreign partition relid of parent (whose columns it maps by name) into
 * the shard of its server in shards (a List of XxlShard), new if need be.
 */
static void
add_partition(List **shards, Relation parent, Oid relid)
{
	ForeignTable *ft = GetForeignTable(relid);
	TupleDesc	desc = RelationGetDescr(parent);
	char	   *schema = option(ft->options, "schema_name");
	char	   *table = option(ft->options, "table_name");
	char	   *partition = get_rel_name(relid);
	XxlShardTable *t = palloc0(sizeof(XxlShardTable));
	XxlShard   *shard = NULL;
	ListCell   *lc;

	t->relid = relid;
	t->remote_table = quote_qualified_identifier(schema ? schema : get_namespace_name(get_rel_namespace(relid)),
												 table ? table : partition);
	t->remote_columns = palloc0(sizeof(char *) * Max(desc->natts, 1));
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		AttrNumber	a;
		char	   *name;

		if (att->attisdropped)
			continue;
		a = get_attnum(relid, NameStr(att->attname));
		if (a == InvalidAttrNumber)
			elog(ERROR, "partition \"%s\" has no column \"%s\"", partition, NameStr(att->attname));
		name = option(GetForeignColumnOptions(relid, a), "column_name");
		t->remote_columns[i] = pstrdup(quote_identifier(name ? name : NameStr(att->attname)));
	}

	foreach(lc, *shards)
	{
		if (((XxlShard *) lfirst(lc))->serverid == ft->serverid)
			shard = lfirst(lc);
	}
	if (shard == NULL)
	{
		shard = xxl_shard_of_partition(relid, InvalidOid);
		*shards = lappend(*shards, shard);
	}
	else
		shard->where = psprintf("%ss %s, \"%s\"", "partition",
								strchr(shard->where, '"'), partition);
	shard->tables = lappend(shard->tables, t);
}

bool
xxl_shard_split(Relation rel, List **local, List **shards)
{
	List	   *foreign = NIL;
	ListCell   *lc;

	*local = *shards = NIL;
	if (!xxl_on_shards || rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE ||
		xxl_input_rls_in_force(rel))
		return false;
	foreach(lc, find_all_inheritors(RelationGetRelid(rel), AccessShareLock, NULL))
	{
		Oid			relid = lfirst_oid(lc);
		char		relkind = get_rel_relkind(relid);

		if (relkind == RELKIND_PARTITIONED_TABLE)
			continue;
		if (relkind == RELKIND_FOREIGN_TABLE)
		{
			if (!xxl_shard_is_postgres_fdw(relid))
				return false;
			foreign = lappend_oid(foreign, relid);
		}
		else
			*local = lappend_oid(*local, relid);
	}
	if (foreign == NIL)
		return false;
	foreach(lc, foreign)
		add_partition(shards, rel, lfirst_oid(lc));
	return true;
}

PGconn *
xxl_shard_connect(XxlShard *shard)
{
	PgFdwConnState *state;

	load_postgres_fdw();
	return get_connection(GetUserMapping(OidIsValid(shard->userid) ? shard->userid : GetUserId(),
										 shard->serverid), false, &state);
}

void
xxl_shard_release(PGconn *conn)
{
	load_postgres_fdw();
	release_connection(conn);
}
