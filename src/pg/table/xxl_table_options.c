/*
 * xxl_table_options.c — the per-table settings of xxl tables (today the
 * order key) in xxl.table_options, and what keeps them in step with the
 * tables: an object access hook that forgets a dropped table's row, clears
 * a key whose column is dropped, and rewrites a key whose column is
 * renamed.
 *
 * The row is the extension's, not the user's: it is read and written with
 * the bootstrap superuser's rights in a security-restricted context, and
 * only ever for xxl tables, so no user's DROP, RENAME or ALTER of any
 * object needs a right on it (an event trigger running with the dropping
 * user's rights used to block every DROP of a non-superuser).
 *
 * The key is stored in canonical form: column names (never positions),
 * quoted where needed, each with its explicit collation, DESC and a NULLS
 * placement other than the default, as pg_dump must carry it by name.  A
 * rename arrives as the column's post-alter hook: the one key name that
 * then no longer names a column becomes the column's new name.
 *
 * The hook needs the library loaded.  Opening an xxl table loads it, but
 * DROP TABLE fires the hook before it opens the table: so an event trigger
 * on ddl_command_start calls xxl.load_library(), which does nothing but be
 * in the library.  What can still escape the hook (a crashed backend's
 * temporary tables, which another backend or autovacuum drops) leaves a
 * harmless row: pg_dump skips rows of relations that are gone or
 * temporary (the config-dump condition), and a new xxl table that gets the
 * same OID drops any row under it when its storage is created.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/ruleutils.h"
#include "utils/fmgroids.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "pg/table/xxl_table_storage.h"
#include "pg/sort/sort.h"

PG_FUNCTION_INFO_V1(xxl_load_library);

static object_access_hook_type prev_object_access = NULL;

/* The event trigger's function: calling it has loaded the library, and so the hook. */
Datum
xxl_load_library(PG_FUNCTION_ARGS)
{
	PG_RETURN_NULL();
}

/* Rights and SPI ----------------------------------------------------------------- */

/*
 * xxl.table_options, or InvalidOid where this database has none (the
 * extension may be absent, or being dropped).
 */
static Oid
options_table(void)
{
	Oid			nsp = get_namespace_oid("xxl", true);

	return OidIsValid(nsp) ? get_relname_relid("table_options", nsp) : InvalidOid;
}

/*
 * Change xxl.table_options with sql, the relation (and the key text, when
 * given) its parameters, as the bootstrap superuser in a
 * security-restricted context: the table is the extension's, whoever's
 * statement caused the write.
 */
static void
options_write(const char *sql, Oid relid, const char *order_by, int expect)
{
	Oid			save_userid;
	int			save_sec;
	Oid			argtypes[2] = {OIDOID, TEXTOID};
	Datum		args[2];
	int			rc;

	args[0] = ObjectIdGetDatum(relid);
	args[1] = order_by ? CStringGetTextDatum(order_by) : (Datum) 0;
	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID,
						   save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	rc = SPI_execute_with_args(sql, order_by ? 2 : 1, argtypes, args, NULL, false, 0);
	if (rc != expect)
		elog(ERROR, "xxl.table_options: \"%s\" failed: %s", sql, SPI_result_code_string(rc));
	SPI_finish();
	SetUserIdAndSecContext(save_userid, save_sec);
}

/*
 * Read straight through the table's primary key, not through SPI: every
 * statement that writes an xxl table asks, and parsing and planning the
 * query took a quarter of a one-row INSERT.  The latest snapshot: a key
 * set and committed by another session applies to the next statement.
 */
char *
xxl_table_order_by(Oid relid)
{
	Oid			tab = options_table();
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	Snapshot	snapshot;
	char	   *result = NULL;

	if (!OidIsValid(tab))
		return NULL;
	rel = table_open(tab, AccessShareLock);
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(rel, RelationGetPrimaryKeyIndex(rel), true, snapshot, 1, &key);
	if (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, 2, RelationGetDescr(rel), &isnull);

		if (!isnull)
			result = TextDatumGetCString(d);
	}
	systable_endscan(scan);
	UnregisterSnapshot(snapshot);
	table_close(rel, AccessShareLock);
	return result;
}

static void
options_delete(Oid relid)
{
	options_write("DELETE FROM xxl.table_options WHERE relation = $1::oid",
				  relid, NULL, SPI_OK_DELETE);
}

void
xxl_table_options_set_order_by(Oid relid, const char *order_by)
{
	if (order_by != NULL)
		options_write("INSERT INTO xxl.table_options (relation, order_by) VALUES ($1::oid, $2) "
					  "ON CONFLICT (relation) DO UPDATE SET order_by = EXCLUDED.order_by",
					  relid, order_by, SPI_OK_INSERT);
	else
		options_delete(relid);
}

void
xxl_table_options_forget(Oid relid)
{
	if (OidIsValid(options_table()))
		options_delete(relid);
}

/* The canonical key ------------------------------------------------------------- */

/* One item of a key, written back with the column named colname. */
static void
append_item(StringInfo s, const char *colname, const XxlSortItem *item)
{
	if (s->len > 0)
		appendStringInfoString(s, ", ");
	appendStringInfoString(s, quote_identifier(colname));
	if (OidIsValid(item->collation))
		appendStringInfo(s, " COLLATE %s", generate_collation_name(item->collation));
	if (item->desc)
		appendStringInfoString(s, " DESC");
	/* PostgreSQL's default: NULLs are larger than any value */
	if (item->nulls_first != item->desc)
		appendStringInfoString(s, item->nulls_first ? " NULLS FIRST" : " NULLS LAST");
}

/*
 * order_by resolved against desc and written back item by item, each
 * column by its name, or by its number (by_number: what stays the same
 * across renames).
 */
static char *
key_text(TupleDesc desc, const char *order_by, bool by_number)
{
	List	   *items = xxl_parse_order_by(order_by);
	XxlSortKey *key = xxl_sortkey_create(desc, items);
	StringInfoData s;
	int			i = 0;
	ListCell   *lc;

	initStringInfo(&s);
	foreach(lc, items)
	{
		AttrNumber	attno = xxl_sortkey_attno(key, i++);

		append_item(&s, by_number ? psprintf("%d", attno) :
					NameStr(TupleDescAttr(desc, attno - 1)->attname), lfirst(lc));
	}
	return s.data;
}

char *
xxl_order_by_canonical(TupleDesc desc, const char *order_by)
{
	return key_text(desc, order_by, false);
}

/*
 * What a sorted segment records of the key it was sorted by: a hash of the
 * columns' numbers, directions, NULLS placements and collations, so that a
 * rename (which rewrites the key's text) leaves the segments sorted.
 */
uint32
xxl_key_hash(TupleDesc desc, const char *order_by)
{
	char	   *text = key_text(desc, order_by, true);
	uint32		h = hash_bytes((const unsigned char *) text, strlen(text));

	pfree(text);
	return h ? h : 1;
}

/* Keeping rows in step ---------------------------------------------------------- */

/* Is relid an xxl table (by its catalog row, which a drop has not yet removed)? */
static bool
is_xxl_table(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		result = false;

	if (HeapTupleIsValid(tup))
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tup);

		result = form->relkind == RELKIND_RELATION && OidIsValid(form->relam) &&
			form->relam == get_am_oid("xxl", true);
		ReleaseSysCache(tup);
	}
	return result;
}

/* Column attnum of relid is being dropped: a key naming it goes, with a NOTICE. */
static void
column_dropped(Oid relid, AttrNumber attnum)
{
	char	   *order_by = xxl_table_order_by(relid);
	char	   *name;
	List	   *items;
	ListCell   *lc;

	if (order_by == NULL)
		return;
	name = get_attname(relid, attnum, true);
	if (name == NULL)
		return;
	items = xxl_parse_order_by(order_by);
	foreach(lc, items)
	{
		XxlSortItem *item = lfirst(lc);

		if (item->colname != NULL && strcmp(item->colname, name) == 0)
		{
			xxl_table_options_set_order_by(relid, NULL);
			ereport(NOTICE,
					(errmsg("order key of xxl table \"%s\" removed with its column \"%s\"",
							get_rel_name(relid), name),
					 errdetail("The key was: %s.", order_by),
					 errhint("Declare a new one with xxl.alter_table_set().")));
			return;
		}
	}
}

/*
 * The names of relid's columns as this command left them (SnapshotSelf: a
 * rename is not visible to catalog lookups until the command ends), by
 * attribute number; dropped columns are NULL.
 */
static char **
current_names(Oid relid, int *natts)
{
	Relation	attrel = table_open(AttributeRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	int			n = 0,
				cap = 16;
	char	  **names = palloc0(sizeof(char *) * (cap + 1));

	ScanKeyInit(&key, Anum_pg_attribute_attrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(attrel, AttributeRelidNumIndexId, true, SnapshotSelf, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_attribute att = (Form_pg_attribute) GETSTRUCT(tup);

		if (att->attnum <= 0)
			continue;
		if (att->attnum > cap)
		{
			int			newcap = Max(cap * 2, att->attnum);

			names = repalloc(names, sizeof(char *) * (newcap + 1));
			memset(names + cap + 1, 0, sizeof(char *) * (newcap - cap));
			cap = newcap;
		}
		names[att->attnum] = att->attisdropped ? NULL : pstrdup(NameStr(att->attname));
		n = Max(n, att->attnum);
	}
	systable_endscan(scan);
	table_close(attrel, AccessShareLock);
	*natts = n;
	return names;
}

/*
 * Column attnum of relid was altered, perhaps renamed: a key name that no
 * longer names a column was that column's (a rename changes one name).
 */
static void
column_altered(Oid relid, AttrNumber attnum)
{
	char	   *order_by = xxl_table_order_by(relid);
	char	  **names;
	int			natts;
	List	   *items;
	ListCell   *lc;
	StringInfoData s;
	bool		changed = false;

	if (order_by == NULL)
		return;
	names = current_names(relid, &natts);
	if (attnum > natts || names[attnum] == NULL)
		return;
	items = xxl_parse_order_by(order_by);
	initStringInfo(&s);
	foreach(lc, items)
	{
		XxlSortItem *item = lfirst(lc);
		const char *colname = item->colname;
		bool		found = false;

		for (int i = 1; colname != NULL && i <= natts && !found; i++)
			found = names[i] != NULL && strcmp(names[i], colname) == 0;
		if (colname != NULL && !found)
		{
			colname = names[attnum];
			changed = true;
		}
		append_item(&s, colname, item);
	}
	if (changed)
		xxl_table_options_set_order_by(relid, s.data);
}

static void
object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (prev_object_access)
		prev_object_access(access, classId, objectId, subId, arg);
	if (classId != RelationRelationId || !IsTransactionState())
		return;
	if (access != OAT_DROP && access != OAT_POST_ALTER)
		return;
	if (!is_xxl_table(objectId) || !OidIsValid(options_table()))
		return;
	if (access == OAT_DROP && subId == 0)
		options_delete(objectId);
	else if (access == OAT_DROP)
		column_dropped(objectId, (AttrNumber) subId);
	else if (subId > 0)
		column_altered(objectId, (AttrNumber) subId);
}

void
xxl_table_options_init(void)
{
	prev_object_access = object_access_hook;
	object_access_hook = object_access;
}
