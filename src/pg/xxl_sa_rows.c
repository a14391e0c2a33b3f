/*
 * xxl_sa_rows.c — the rows of a suffix array table (see xxl_text_sql.h):
 * the (rank, pos) layout the functions write, the pair writer that writes
 * it fast, and finding rank and pos in a table someone else wrote.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "pg/xxl_rowcodec.h"
#include "pg/xxl_text_sql.h"

/* Suffix array rows ---------------------------------------------------------- */

TupleDesc
xxl_sa_rows_desc(void)
{
	TupleDesc	desc = CreateTemplateTupleDesc(2);

	TupleDescInitEntry(desc, 1, "rank", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 2, "pos", INT8OID, -1, 0);
	return desc;
}


void
xxl_pair_writer_init(XxlPairWriter *w, XxlOutput *out, TupleDesc desc)
{
	Datum		values[2] = {Int64GetDatum(INT64CONST(0x0102030405060708)),
	Int64GetDatum(INT64CONST(0x1112131415161718))};
	bool		nulls[2] = {false, false};
	StringInfoData buf;
	const char *row;
	int64		a = INT64CONST(0x0102030405060708),
				b = INT64CONST(0x1112131415161718);

	memset(w, 0, sizeof(*w));
	w->out = out;
	if (desc->natts != 2 || TupleDescAttr(desc, 0)->atttypid != INT8OID ||
		TupleDescAttr(desc, 1)->atttypid != INT8OID || !FLOAT8PASSBYVAL)
		return;
	initStringInfo(&buf);
	row = xxl_compact_form(&buf, desc, values, nulls, &w->len);
	if (w->len < 16 || memcmp(row + w->len - 16, &a, 8) != 0 ||
		memcmp(row + w->len - 8, &b, 8) != 0)
		return;
	w->row = palloc(w->len);
	memcpy(w->row, row, w->len);
	w->fast = true;
	pfree(buf.data);
}

/*
 * The rank and pos columns of a suffix-array source: the columns of those
 * names, else the only two columns in that order; integer types.
 */
void
xxl_sa_columns(TupleDesc desc, const char *what, AttrNumber *rank_att, AttrNumber *pos_att,
				Oid *rank_type, Oid *pos_type)
{
	int			visible = 0;
	AttrNumber	first = 0,
				second = 0;

	*rank_att = *pos_att = 0;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		visible++;
		if (first == 0)
			first = i + 1;
		else if (second == 0)
			second = i + 1;
		if (strcmp(NameStr(att->attname), "rank") == 0)
			*rank_att = i + 1;
		else if (strcmp(NameStr(att->attname), "pos") == 0)
			*pos_att = i + 1;
	}
	if (*rank_att == 0 || *pos_att == 0)
	{
		if (visible != 2)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("the suffix array (%s) must have columns rank and pos", what),
					 errhint("A suffix array is a table or query of (rank bigint, pos bigint), as xxl.suffix_array_into makes it.")));
		*rank_att = first;
		*pos_att = second;
	}
	*rank_type = getBaseType(TupleDescAttr(desc, *rank_att - 1)->atttypid);
	*pos_type = getBaseType(TupleDescAttr(desc, *pos_att - 1)->atttypid);
	if (!xxl_is_int_type(*rank_type) || !xxl_is_int_type(*pos_type))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the suffix array columns \"%s\" and \"%s\" must be integers, not %s and %s",
						NameStr(TupleDescAttr(desc, *rank_att - 1)->attname),
						NameStr(TupleDescAttr(desc, *pos_att - 1)->attname),
						format_type_be(TupleDescAttr(desc, *rank_att - 1)->atttypid),
						format_type_be(TupleDescAttr(desc, *pos_att - 1)->atttypid))));
}

