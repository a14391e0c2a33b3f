/*
 * xxl_order_by.c — ORDER BY text parsed into items, and items resolved
 * against a row type into a sort key's columns: which column, which kind of
 * encoding, which collation (see xxl_sortkey.h).  Nondeterministic
 * collations are refused; C and C.UTF-8 compare bytes, other libc
 * collations are compared by the engine (xxl_keycmp.h), ICU ones by their
 * sort keys.
 */
#include "postgres.h"

#include <locale.h>
#include <string.h>

#include "access/stratnum.h"
#include "catalog/pg_am.h"
#include "catalog/pg_collation.h"
#include "commands/defrem.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/syscache.h"
#include "utils/uuid.h"
#include "catalog/namespace.h"

#include "pg/sort/xxl_sortkey_internal.h"

const char *
xxl_sortkey_supported_types(void)
{
	return "smallint, integer, bigint, oid, real, double precision, numeric, money, "
		"boolean, \"char\", date, time, timestamp, timestamptz, uuid, text, varchar, "
		"char(n), name, bytea (and domains over them)";
}

/* ORDER BY parsing ------------------------------------------------------ */

#define ORDER_BY_PREFIX "SELECT FROM xxl_order_by_source ORDER BY "

static void
order_by_malformed(const char *order_by, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYNTAX_ERROR),
			 errmsg("invalid order_by \"%s\"", order_by),
			 errdetail("%s", detail),
			 errhint("order_by takes what follows ORDER BY: column names or positions, "
					 "each optionally followed by COLLATE, ASC or DESC, NULLS FIRST or NULLS LAST.")));
}

static void
order_by_unsupported(const char *order_by, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("order_by \"%s\" uses %s, which is not supported", order_by, what),
			 errhint("Sort by column names or positions, optionally with COLLATE, ASC or DESC, "
					 "NULLS FIRST or NULLS LAST; compute expressions in the source query.")));
}

List *
xxl_parse_order_by(const char *order_by)
{
	char	   *sql = psprintf("%s%s", ORDER_BY_PREFIX, order_by);
	List	   *volatile raw = NIL;
	MemoryContext cxt = CurrentMemoryContext;
	SelectStmt *sel;
	List	   *items = NIL;
	ListCell   *lc;

	/*
	 * The parser reports positions in our wrapped statement, which would
	 * point into the caller's query at random: restate its error in terms
	 * of order_by.  Rethrowing at once makes catching safe here.
	 */
	PG_TRY();
	{
		raw = raw_parser(sql, RAW_PARSE_DEFAULT);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		ereport(ERROR,
				(errcode(edata->sqlerrcode),
				 errmsg("invalid order_by \"%s\": %s", order_by, edata->message),
				 errhint("order_by takes what follows ORDER BY: column names or positions, "
						 "each optionally followed by COLLATE, ASC or DESC, NULLS FIRST or NULLS LAST.")));
	}
	PG_END_TRY();

	/* anything but a plain sort list changes the statement's shape */
	if (list_length(raw) != 1 ||
		!IsA(((RawStmt *) linitial(raw))->stmt, SelectStmt))
		order_by_malformed(order_by, "It must be a single list of sort items.");
	sel = (SelectStmt *) ((RawStmt *) linitial(raw))->stmt;
	if (sel->op != SETOP_NONE || sel->targetList != NIL || list_length(sel->fromClause) != 1 ||
		sel->whereClause != NULL || sel->groupClause != NIL || sel->havingClause != NULL ||
		sel->windowClause != NIL || sel->valuesLists != NIL || sel->distinctClause != NIL ||
		sel->intoClause != NULL || sel->limitOffset != NULL || sel->limitCount != NULL ||
		sel->lockingClause != NIL || sel->withClause != NULL || sel->sortClause == NIL)
		order_by_malformed(order_by,
						   "Only sort items are allowed: no LIMIT, OFFSET, FETCH, FOR UPDATE or further statements.");

	foreach(lc, sel->sortClause)
	{
		SortBy	   *sb = lfirst_node(SortBy, lc);
		Node	   *node = sb->node;
		XxlSortItem *item = palloc0(sizeof(XxlSortItem));

		if (sb->sortby_dir == SORTBY_USING)
			order_by_unsupported(order_by, "USING");
		item->desc = (sb->sortby_dir == SORTBY_DESC);
		/* PostgreSQL's default: NULLs are larger than any value */
		if (sb->sortby_nulls == SORTBY_NULLS_DEFAULT)
			item->nulls_first = item->desc;
		else
			item->nulls_first = (sb->sortby_nulls == SORTBY_NULLS_FIRST);

		if (IsA(node, CollateClause))
		{
			CollateClause *cc = (CollateClause *) node;

			item->collation = get_collation_oid(cc->collname, false);
			node = cc->arg;
		}
		if (IsA(node, ColumnRef))
		{
			ColumnRef  *cr = (ColumnRef *) node;

			if (list_length(cr->fields) != 1 || !IsA(linitial(cr->fields), String))
				order_by_unsupported(order_by, "a qualified column reference or *");
			item->colname = pstrdup(strVal(linitial(cr->fields)));
		}
		else if (IsA(node, A_Const) && !((A_Const *) node)->isnull &&
				 IsA(&((A_Const *) node)->val, Integer))
			item->position = intVal(&((A_Const *) node)->val);
		else
			order_by_unsupported(order_by, "an expression");
		items = lappend(items, item);
	}
	return items;
}

/* Resolving items against a row type ----------------------------------- */

static char *
column_list(TupleDesc desc)
{
	StringInfoData s;
	int			n = 0;

	initStringInfo(&s);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		if (n++ > 0)
			appendStringInfoString(&s, ", ");
		if (s.len > 200)
		{
			appendStringInfoString(&s, "...");
			break;
		}
		appendStringInfoString(&s, quote_identifier(NameStr(att->attname)));
	}
	if (n == 0)
		appendStringInfoString(&s, "(none)");
	return s.data;
}

static int
resolve_column(TupleDesc desc, const XxlSortItem *item)
{
	int			found = -1;

	if (item->colname == NULL)
	{
		int			visible = 0;

		for (int i = 0; i < desc->natts; i++)
		{
			if (TupleDescAttr(desc, i)->attisdropped)
				continue;
			if (++visible == item->position)
				return i;
		}
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_REFERENCE),
				 errmsg("ORDER BY position %d is not in the source's columns", item->position),
				 errdetail("The source has %d columns.", visible)));
	}
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped || strcmp(NameStr(att->attname), item->colname) != 0)
			continue;
		if (found >= 0)
			ereport(ERROR,
					(errcode(ERRCODE_AMBIGUOUS_COLUMN),
					 errmsg("column reference \"%s\" in order_by is ambiguous", item->colname),
					 errdetail("The source has more than one column of that name.")));
		found = i;
	}
	if (found < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" in order_by does not exist in the source", item->colname),
				 errdetail("The source's columns are: %s.", column_list(desc)),
				 errhint("Unquoted names are folded to lower case; quote mixed-case names with double quotes.")));
	return found;
}

static bool
kind_for_type(Oid base, KeyKind *kind)
{
	switch (base)
	{
		case INT2OID:
			*kind = KEY_INT2;
			break;
		case INT4OID:
		case DATEOID:
			*kind = KEY_INT4;
			break;
		case INT8OID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case CASHOID:
			*kind = KEY_INT8;
			break;
		case OIDOID:
			*kind = KEY_UINT4;
			break;
		case CHAROID:
			*kind = KEY_CHAR;
			break;
		case BOOLOID:
			*kind = KEY_BOOL;
			break;
		case FLOAT4OID:
			*kind = KEY_FLOAT4;
			break;
		case FLOAT8OID:
			*kind = KEY_FLOAT8;
			break;
		case NUMERICOID:
			*kind = KEY_NUMERIC;
			break;
		case UUIDOID:
			*kind = KEY_UUID;
			break;
		case TEXTOID:
		case VARCHAROID:
			*kind = KEY_TEXT;
			break;
		case BPCHAROID:
			*kind = KEY_BPCHAR;
			break;
		case NAMEOID:
			*kind = KEY_NAME;
			break;
		case BYTEAOID:
			*kind = KEY_BYTEA;
			break;
		default:
			return false;
	}
	return true;
}

/*
 * The database's default collation as a locale_t, for the engine's
 * strcoll_l (PostgreSQL itself uses the process-wide LC_COLLATE, which no
 * thread may rely on).  It never changes in a backend: made once, kept.
 */
static locale_t
default_collate_locale(void)
{
	static locale_t loc = (locale_t) 0;

	if (loc == (locale_t) 0)
	{
		const char *name = setlocale(LC_COLLATE, NULL);

		loc = newlocale(LC_COLLATE_MASK, name ? name : "C", (locale_t) 0);
		if (loc == (locale_t) 0)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not create a locale for the database collation \"%s\": %m",
							name ? name : "")));
	}
	return loc;
}

/*
 * Whether a libc collation orders strings as their bytes do: glibc's
 * C.UTF-8 compares code points (its LC_COLLATE has "codepoint_collation"),
 * and UTF-8's byte order is code point order, so in a UTF-8 database its
 * strcoll_l() agrees with memcmp() (sql/sort_collation.sql checks that over
 * the whole Unicode range against ORDER BY).  PostgreSQL still calls
 * strcoll() for it (lc_collate_is_c() knows only C and POSIX).
 */
static bool
libc_orders_as_bytes(Oid collation)
{
	const char *name = NULL;
	char	   *copy = NULL;
	bool		bytes;

	if (GetDatabaseEncoding() != PG_UTF8)
		return false;
	if (collation == DEFAULT_COLLATION_OID)
		name = setlocale(LC_COLLATE, NULL);
	else
	{
		HeapTuple	tp = SearchSysCache1(COLLOID, ObjectIdGetDatum(collation));
		bool		isnull;
		Datum		d;

		if (!HeapTupleIsValid(tp))
			return false;
		d = SysCacheGetAttr(COLLOID, tp, Anum_pg_collation_collcollate, &isnull);
		if (!isnull)
			name = copy = TextDatumGetCString(d);
		ReleaseSysCache(tp);
	}
	bytes = name != NULL && (pg_strcasecmp(name, "C.UTF-8") == 0 || pg_strcasecmp(name, "C.utf8") == 0);
	if (copy)
		pfree(copy);
	return bytes;
}

static void
resolve_collation(KeyColumn *col, const char *colname, Oid collation)
{
	pg_locale_t locale;

	col->collation = collation;
	if (!OidIsValid(collation))
		ereport(ERROR,
				(errcode(ERRCODE_INDETERMINATE_COLLATION),
				 errmsg("could not determine which collation to use for sorting by column \"%s\"",
						colname),
				 errhint("Add COLLATE to the column in order_by, e.g. %s COLLATE \"C\".",
						 quote_identifier(colname))));
	if (lc_collate_is_c(collation))
	{
		col->collate_c = true;
		return;
	}
	locale = pg_newlocale_from_collation(collation);
	if ((locale == NULL || locale->provider == COLLPROVIDER_LIBC) &&
		libc_orders_as_bytes(collation))
	{
		col->collate_c = true;
		return;
	}
	if (locale != NULL && !locale->deterministic)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot sort by column \"%s\": collation \"%s\" is nondeterministic",
						colname, get_collation_name(collation)),
				 errhint("Sort by bytes with %s COLLATE \"C\" in order_by.",
						 quote_identifier(colname))));
	col->collate_c = false;
	if (locale != NULL && locale->provider == COLLPROVIDER_ICU)
	{
#ifdef USE_ICU
		col->locale = locale;
		/*
		 * In UTF-8 the engine compares with ICU itself, after a prefix of
		 * the sort key: a whole sort key per row cost more than the
		 * comparisons it spared.  Other encodings would need a conversion
		 * (through the host) per comparison, so they keep whole sort keys.
		 */
		if (GetDatabaseEncoding() == PG_UTF8)
		{
			col->compared = true;
			col->collate = xxl_collate_icu_utf8;
			col->collator = locale->info.icu.ucol;
			col->prefix = XXL_ICU_PREFIX;
		}
#else
		elog(ERROR, "ICU collation without ICU support");
#endif
	}
	else
	{
		col->compared = true;
		col->collate = xxl_collate_libc;
		col->collator = locale != NULL ? locale->info.lt : default_collate_locale();
		col->prefix = 0;
	}
}

/* Bytes of every encoded value of a kind, or 0 if the length varies. */
static int
fixed_width_of(KeyKind kind)
{
	switch (kind)
	{
		case KEY_CHAR:
		case KEY_BOOL:
			return 1;
		case KEY_INT2:
			return 2;
		case KEY_INT4:
		case KEY_UINT4:
		case KEY_FLOAT4:
			return 4;
		case KEY_INT8:
		case KEY_FLOAT8:
			return 8;
		case KEY_UUID:
			return UUID_LEN;
		default:
			return 0;
	}
}

XxlSortKey *
xxl_sortkey_create(TupleDesc desc, List *items)
{
	XxlSortKey *key = palloc0(sizeof(XxlSortKey));
	ListCell   *lc;
	int			i = 0;

	key->cxt = CurrentMemoryContext;
	key->ncols = list_length(items);
	key->cols = palloc0(sizeof(KeyColumn) * Max(key->ncols, 1));
	foreach(lc, items)
	{
		XxlSortItem *item = (XxlSortItem *) lfirst(lc);
		KeyColumn  *col = &key->cols[i++];
		int			att_index = resolve_column(desc, item);
		Form_pg_attribute att = TupleDescAttr(desc, att_index);
		const char *colname = NameStr(att->attname);
		Oid			base = getBaseType(att->atttypid);

		col->attno = att_index + 1;
		col->desc = item->desc;
		col->nulls_first = item->nulls_first;
		if (!kind_for_type(base, &col->kind))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot sort by column \"%s\" of type %s",
							colname, format_type_be(att->atttypid)),
					 errdetail("Supported key types: %s.", xxl_sortkey_supported_types()),
					 errhint("Cast the column to a supported type in a source query.")));
		if (OidIsValid(item->collation) && !type_is_collatable(base))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("collations are not supported by type %s",
							format_type_be(att->atttypid)),
					 errdetail("order_by applies COLLATE to column \"%s\".", colname)));
		if (col->kind == KEY_TEXT || col->kind == KEY_BPCHAR || col->kind == KEY_NAME)
			resolve_collation(col, colname,
							  OidIsValid(item->collation) ? item->collation : att->attcollation);
		else
			col->collate_c = true;	/* bytea and the rest: bytes, whatever the database */
		if (col->attno > key->max_attno)
			key->max_attno = col->attno;
	}
	/*
	 * Only the first column's prefix is worth its cost: it is what the
	 * sorter abbreviates, and later columns are compared on its ties only
	 * (a prefix for every row's v made ORDER BY k, v slower than Sort).
	 */
	for (int c = 1; c < key->ncols; c++)
		key->cols[c].prefix = 0;
	key->fixed_size = 0;
	for (int c = 0; c < key->ncols; c++)
		key->cols[c].fixed_width = fixed_width_of(key->cols[c].kind);
	for (int c = 0; c < key->ncols; c++)
	{
		KeyColumn  *col = &key->cols[c];

		if (col->fixed_width == 0)
		{
			key->fixed_size = 0;
			break;
		}
		col->fixed_offset = key->fixed_size;
		key->fixed_size += 1 + col->fixed_width;
	}
	for (int c = 0; c < key->ncols; c++)
		if (key->cols[c].compared)
		{
			xxl_keycol *cols = palloc0(sizeof(xxl_keycol) * key->ncols);

			for (int k = 0; k < key->ncols; k++)
			{
				const KeyColumn *col = &key->cols[k];

				cols[k].kind = col->compared ? XXL_KEYCOL_COLLATED : XXL_KEYCOL_BYTES;
				cols[k].desc = col->desc;
				cols[k].prefix = col->prefix;
				cols[k].collate = col->collate;
				cols[k].collator = col->collator;
			}
			key->compare.ncols = key->ncols;
			key->compare.cols = cols;
			break;
		}
	key->cap = 256;
	key->buf = palloc(key->cap);
	return key;
}

const xxl_key_compare *
xxl_sortkey_compare(const XxlSortKey *key)
{
	return key->compare.ncols > 0 ? &key->compare : NULL;
}

int
xxl_sortkey_ncols(const XxlSortKey *key)
{
	return key->ncols;
}

AttrNumber
xxl_sortkey_attno(const XxlSortKey *key, int column)
{
	return key->cols[column].attno;
}

void
xxl_sortkey_column_order(const XxlSortKey *key, int column, bool *desc, bool *nulls_first,
						 Oid *collation)
{
	const KeyColumn *col = &key->cols[column];

	*desc = col->desc;
	*nulls_first = col->nulls_first;
	*collation = col->collation;
}

AttrNumber
xxl_sortkey_max_attno(const XxlSortKey *key)
{
	return key->max_attno;
}


/* Sort keys of query plans ---------------------------------------------- */

/*
 * Why sorting a column of type typid by sortop in collation would not give
 * the order of this module's encoding, or NULL where it does: a type it
 * encodes, sortop the "<" or ">" of the type's default btree operator
 * class (the order the encodings follow; text_pattern_ops and other
 * classes order otherwise), and a deterministic collation.  Sets *desc for
 * ">".  Raises no error: the planner asks, keeps PostgreSQL's Sort on a
 * reason and shows it under EXPLAIN VERBOSE.
 */
const char *
xxl_sortkey_plan_column_refused(Oid typid, Oid sortop, Oid collation, bool *desc)
{
	Oid			base = getBaseType(typid);
	KeyKind		kind;
	Oid			opfamily;
	Oid			opcintype;
	int16		strategy;
	Oid			opclass;

	if (!kind_for_type(base, &kind))
		return psprintf("a key column of type %s, which pgxxl does not sort", format_type_be(typid));
	opclass = GetDefaultOpClass(base, BTREE_AM_OID);
	if (!get_ordering_op_properties(sortop, &opfamily, &opcintype, &strategy) ||
		!OidIsValid(opclass) || get_opclass_family(opclass) != opfamily ||
		get_opclass_input_type(opclass) != opcintype ||
		(strategy != BTLessStrategyNumber && strategy != BTGreaterStrategyNumber))
		return psprintf("a key column of type %s ordered by operator %s, not by the type's default btree order",
						format_type_be(typid), get_opname(sortop));
	*desc = strategy == BTGreaterStrategyNumber;
	if (kind == KEY_TEXT || kind == KEY_BPCHAR || kind == KEY_NAME)
	{
		pg_locale_t locale;

		if (!OidIsValid(collation))
			return pstrdup("a text key column without a collation");
		if (lc_collate_is_c(collation))
			return NULL;
		locale = pg_newlocale_from_collation(collation);
		if (locale != NULL && !locale->deterministic)
			return psprintf("a key column in nondeterministic collation \"%s\"",
							get_collation_name(collation));
#ifndef USE_ICU
		if (locale != NULL && locale->provider == COLLPROVIDER_ICU)
			return psprintf("a key column in ICU collation \"%s\", and pgxxl was built without ICU",
							get_collation_name(collation));
#endif
	}
	return NULL;
}

XxlSortKey *
xxl_sortkey_create_plan(TupleDesc desc, int ncols, const AttrNumber *cols,
						const Oid *sortops, const Oid *collations, const bool *nulls_first)
{
	List	   *items = NIL;

	for (int i = 0; i < ncols; i++)
	{
		XxlSortItem *item = palloc0(sizeof(XxlSortItem));
		Form_pg_attribute att = TupleDescAttr(desc, cols[i] - 1);

		/* a plan's rows have no dropped columns: position = attribute number */
		Assert(!att->attisdropped);
		if (xxl_sortkey_plan_column_refused(att->atttypid, sortops[i], collations[i], &item->desc) != NULL)
			elog(ERROR, "sort operator %u on column %d cannot be encoded", sortops[i], cols[i]);
		item->position = cols[i];
		item->nulls_first = nulls_first[i];
		if (type_is_collatable(getBaseType(att->atttypid)))
			item->collation = collations[i];
		items = lappend(items, item);
	}
	return xxl_sortkey_create(desc, items);
}
