/*
 * xxl_sa_rows.c — the rows of a suffix array table (see text.h):
 * the (rank, pos, ...) layouts the functions write, the bigint row writer
 * that writes them fast, and finding rank and pos in a table someone else
 * wrote.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "pg/io/io.h"
#include "pg/text/text.h"

/* Suffix array rows ---------------------------------------------------------- */

TupleDesc
xxl_sa_rows_desc(bool docs, bool lcp)
{
	TupleDesc	desc = CreateTemplateTupleDesc(2 + (docs ? 2 : 0) + (lcp ? 1 : 0));
	AttrNumber	a = 1;

	TupleDescInitEntry(desc, a++, "rank", INT8OID, -1, 0);
	TupleDescInitEntry(desc, a++, "pos", INT8OID, -1, 0);
	if (docs)
	{
		TupleDescInitEntry(desc, a++, "doc_id", INT8OID, -1, 0);
		TupleDescInitEntry(desc, a++, "doc_offset", INT8OID, -1, 0);
	}
	if (lcp)
		TupleDescInitEntry(desc, a++, "lcp", INT8OID, -1, 0);
	return desc;
}

/* A value no row has by chance, to find the values in the formed row. */
static int64
marker(int k)
{
	return INT64CONST(0x0102030405060708) + k * INT64CONST(0x1010101010101010);
}

void
xxl_int8_writer_init(XxlInt8Writer *w, XxlOutput *out, TupleDesc desc)
{
	Datum		values[XXL_INT8_ROW_MAX];
	bool		nulls[XXL_INT8_ROW_MAX];
	StringInfoData buf;
	const char *row;
	int			k = desc->natts;

	memset(w, 0, sizeof(*w));
	w->out = out;
	w->ncols = k;
	Assert(k <= XXL_INT8_ROW_MAX);
	for (int i = 0; i < k; i++)
	{
		if (TupleDescAttr(desc, i)->atttypid != INT8OID)
			return;
		values[i] = Int64GetDatum(marker(i));
		nulls[i] = false;
	}
	if (!FLOAT8PASSBYVAL)
		return;
	initStringInfo(&buf);
	row = xxl_compact_form(&buf, desc, values, nulls, &w->len);
	if (w->len < 8 * k)
		return;
	for (int i = 0; i < k; i++)
	{
		int64		m = marker(i);

		if (memcmp(row + w->len - 8 * (k - i), &m, 8) != 0)
			return;
	}
	/* rows go out in batches, each a copy of the formed row with its values */
	w->batch = palloc((Size) w->len * XXL_INT8_BATCH);
	for (int i = 0; i < XXL_INT8_BATCH; i++)
		memcpy(w->batch + (Size) i * w->len, row, w->len);
	w->fast = true;
	pfree(buf.data);
}

void
xxl_int8_writer_flush(XxlInt8Writer *w)
{
	if (w->nbatch > 0)
		xxl_output_put_compact_many(w->out, w->batch, w->len, w->nbatch);
	w->nbatch = 0;
}

void
xxl_int8_writer_put(XxlInt8Writer *w, const int64 *values, const bool *nulls)
{
	bool		anynull = false;

	if (nulls)
		for (int i = 0; i < w->ncols; i++)
			anynull |= nulls[i];
	if (w->fast && !anynull)
	{
		/* only the values change: the rest of each batch row is the row's */
		memcpy(w->batch + (Size) w->nbatch * w->len + w->len - 8 * w->ncols, values,
			   8 * w->ncols);
		if (++w->nbatch == XXL_INT8_BATCH)
			xxl_int8_writer_flush(w);
	}
	else
	{
		Datum		datums[XXL_INT8_ROW_MAX];
		bool		isnull[XXL_INT8_ROW_MAX];

		/* in order: the held rows first */
		xxl_int8_writer_flush(w);
		for (int i = 0; i < w->ncols; i++)
		{
			datums[i] = Int64GetDatum(values[i]);
			isnull[i] = nulls ? nulls[i] : false;
		}
		xxl_output_put_values(w->out, datums, isnull);
	}
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


/* Reading a suffix array's rows ---------------------------------------------- */

void
xxl_sa_reader_open(XxlSaReader *r, const char *source)
{
	r->in = xxl_input_open(source);
	xxl_sa_columns(xxl_input_desc(r->in), xxl_input_describe(r->in), &r->rank_att, &r->pos_att,
				   &r->rank_type, &r->pos_type);
}

bool
xxl_sa_reader_next(XxlSaReader *r, int64 *rank, int64 *pos)
{
	TupleTableSlot *slot;
	Datum		rd,
				pd;
	bool		rnull,
				pnull;

	if ((xxl_input_rows(r->in) & 0xffff) == 0)
		CHECK_FOR_INTERRUPTS();
	slot = xxl_input_next(r->in);
	if (slot == NULL)
		return false;
	rd = slot_getattr(slot, r->rank_att, &rnull);
	pd = slot_getattr(slot, r->pos_att, &pnull);
	if (rnull || pnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("row " UINT64_FORMAT " of the suffix array has a null %s",
						xxl_input_rows(r->in), rnull ? "rank" : "pos")));
	*rank = xxl_int_datum(rd, r->rank_type);
	*pos = xxl_int_datum(pd, r->pos_type);
	return true;
}

uint64
xxl_sa_reader_rows(const XxlSaReader *r)
{
	return xxl_input_rows(r->in);
}

void
xxl_sa_reader_close(XxlSaReader *r)
{
	xxl_input_close(r->in);
	r->in = NULL;
}
