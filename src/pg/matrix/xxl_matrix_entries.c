/*
 * xxl_matrix_entries.c — the matrix functions' entry reader (matrix.h): a
 * table read directly or a query through an SPI cursor (io/xxl_input.h),
 * columns i, j and v found by name and checked; heap rows without NULLs
 * whose columns up to those have fixed widths read in place, other rows
 * deformed as far as the last of them.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "pg/io/io.h"
#include "pg/matrix/matrix.h"

enum
{
	COL_I,
	COL_J,
	COL_V,
	NUM_COLS
};

static const char *const column_names[NUM_COLS] = {"i", "j", "v"};

struct XxlEntryReader
{
	const char *fname;
	const char *name;			/* "a" or "b" */
	XxlInput   *in;
	int			attno[NUM_COLS];	/* 0-based */
	Oid			type[NUM_COLS];
	AttrNumber	maxatt;
	MemoryContext rowcxt;		/* numeric values allocate while converting */
	ErrorContextCallback errcb;
	bool		errcb_pushed;
	/* a heap read a page at a time: tuples without NULLs read in place */
	bool		heap_tuples;
	bool		in_place;
	int			off[NUM_COLS];
	int			len[NUM_COLS];
	TupleTableSlot *slot;		/* heap tuples read the general way */
};

static void
entries_error_context(void *arg)
{
	XxlEntryReader *r = (XxlEntryReader *) arg;

	if (r->in != NULL)
		errcontext("%s reading matrix %s from %s", r->fname, r->name, xxl_input_describe(r->in));
	else
		errcontext("%s opening matrix %s", r->fname, r->name);
}

static bool
is_value_type(Oid t)
{
	return xxl_is_int_type(t) || t == FLOAT4OID || t == FLOAT8OID || t == NUMERICOID;
}

static void
find_columns(XxlEntryReader *r, TupleDesc desc)
{
	for (int c = 0; c < NUM_COLS; c++)
	{
		bool		value = c == COL_V;

		r->attno[c] = -1;
		for (int k = 0; k < desc->natts; k++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, k);

			if (att->attisdropped || strcmp(NameStr(att->attname), column_names[c]) != 0)
				continue;
			if (r->attno[c] >= 0)
				ereport(ERROR,
						(errcode(ERRCODE_AMBIGUOUS_COLUMN),
						 errmsg("%s: matrix %s has more than one column named \"%s\"",
								r->fname, r->name, column_names[c]),
						 errhint("Rename or drop the extra column in the query for %s.", r->name)));
			r->attno[c] = k;
			r->type[c] = getBaseType(att->atttypid);
		}
		if (r->attno[c] < 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("%s: matrix %s has no column \"%s\"", r->fname, r->name, column_names[c]),
					 errhint("A matrix has the columns i, j and v; name them so in a query, e.g. "
							 "SELECT row_no AS i, col_no AS j, val AS v FROM ...")));
		if (value ? !is_value_type(r->type[c]) : !xxl_is_int_type(r->type[c]))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("%s: column \"%s\" of matrix %s has type %s, but it must be %s",
							r->fname, column_names[c], r->name,
							format_type_be(TupleDescAttr(desc, r->attno[c])->atttypid),
							value ? "bigint, integer, smallint, double precision, real or numeric" :
							"bigint, integer or smallint"),
					 errhint("Cast it in a query, e.g. SELECT %s::%s AS %s ...", column_names[c],
							 value ? "float8" : "bigint", column_names[c])));
		if (r->attno[c] + 1 > r->maxatt)
			r->maxatt = r->attno[c] + 1;
	}
}

XxlEntryReader *
xxl_entries_open(const char *source, const char *fname, const char *name)
{
	XxlEntryReader *r = palloc0(sizeof(XxlEntryReader));

	r->fname = fname;
	r->name = name;
	r->errcb.callback = entries_error_context;
	r->errcb.arg = r;
	r->errcb.previous = error_context_stack;
	error_context_stack = &r->errcb;
	r->errcb_pushed = true;
	r->in = xxl_input_open(source);
	find_columns(r, xxl_input_desc(r->in));
	if (r->type[COL_V] == NUMERICOID)
		r->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "xxl matrix numeric value",
										  ALLOCSET_SMALL_SIZES);
	if (xxl_input_has_tuples(r->in))
	{
		TupleDesc	desc = xxl_input_desc(r->in);
		int		   *offs = palloc(sizeof(int) * r->maxatt);

		r->heap_tuples = true;
		r->in_place = xxl_heap_fixed_offsets(desc, r->maxatt, offs);
		for (int c = 0; r->in_place && c < NUM_COLS; c++)
		{
			r->off[c] = offs[r->attno[c]];
			r->len[c] = TupleDescAttr(desc, r->attno[c])->attlen;
		}
		pfree(offs);
		r->slot = MakeSingleTupleTableSlot(desc, &TTSOpsHeapTuple);
	}
	return r;
}

bool
xxl_entries_integer(XxlEntryReader *r)
{
	return xxl_is_int_type(r->type[COL_V]);
}

uint64
xxl_entries_estimate(XxlEntryReader *r)
{
	return xxl_input_expected_rows(r->in);
}

static double
double_value(XxlEntryReader *r, Datum d)
{
	bool		overflow;
	double		v = xxl_float_datum(d, r->type[COL_V], r->rowcxt, &overflow);

	if (overflow)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("%s: column \"v\" of matrix %s is out of range for double precision in row " UINT64_FORMAT,
						r->fname, r->name, xxl_input_rows(r->in))));
	return v;
}

/* An entry from one row's columns (deformed as far as the last needed). */
static void
entry_from(XxlEntryReader *r, const Datum *values, const bool *isnull, XxlMatrixEntry *e)
{
	for (int c = 0; c < NUM_COLS; c++)
		if (isnull[r->attno[c]])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s: column \"%s\" of matrix %s is null in row " UINT64_FORMAT,
							r->fname, column_names[c], r->name, xxl_input_rows(r->in)),
					 errhint("Leave such entries out, e.g. WHERE %s IS NOT NULL, or use "
							 "coalesce(%s, 0) for a missing value.", column_names[c],
							 column_names[c])));
	e->i = xxl_int_datum(values[r->attno[COL_I]], r->type[COL_I]);
	e->j = xxl_int_datum(values[r->attno[COL_J]], r->type[COL_J]);
	if (xxl_entries_integer(r))
		e->vi = xxl_int_datum(values[r->attno[COL_V]], r->type[COL_V]);
	else
		e->vd = double_value(r, values[r->attno[COL_V]]);
}

/* The next row of the source as an entry; false at the end. */
static bool
next_entry(XxlEntryReader *r, XxlMatrixEntry *e)
{
	TupleTableSlot *slot;

	if (r->heap_tuples)
	{
		HeapTuple	tuple = xxl_input_next_tuple(r->in);

		if (tuple == NULL)
			return false;
		if (r->in_place && !HeapTupleHasNulls(tuple) &&
			HeapTupleHeaderGetNatts(tuple->t_data) >= r->maxatt)
		{
			const char *row = (const char *) tuple->t_data + tuple->t_data->t_hoff;

			e->i = xxl_int_at(row + r->off[COL_I], r->len[COL_I]);
			e->j = xxl_int_at(row + r->off[COL_J], r->len[COL_J]);
			if (xxl_entries_integer(r))
				e->vi = xxl_int_at(row + r->off[COL_V], r->len[COL_V]);
			else
				e->vd = xxl_float_at(row + r->off[COL_V], r->type[COL_V], r->len[COL_V]);
			return true;
		}
		ExecStoreHeapTuple(tuple, r->slot, false);
		slot = r->slot;
	}
	else if ((slot = xxl_input_next(r->in)) == NULL)
		return false;
	slot_getsomeattrs(slot, r->maxatt);
	entry_from(r, slot->tts_values, slot->tts_isnull, e);
	return true;
}

int
xxl_entries_read(XxlEntryReader *r, XxlMatrixEntry *out, int max)
{
	int			n = 0;

	CHECK_FOR_INTERRUPTS();
	for (; n < max && next_entry(r, &out[n]); n++)
		if (!xxl_entries_integer(r) && isnan(out[n].vd))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: column \"v\" of matrix %s is NaN in row " UINT64_FORMAT,
							r->fname, r->name, xxl_input_rows(r->in)),
					 errhint("Leave such entries out with WHERE v <> 'NaN'.")));
	return n;
}

void
xxl_entries_close(XxlEntryReader *r)
{
	if (r->slot != NULL)
		ExecDropSingleTupleTableSlot(r->slot);
	r->slot = NULL;
	xxl_input_close(r->in);
	if (r->rowcxt)
		MemoryContextDelete(r->rowcxt);
	r->rowcxt = NULL;
	if (r->errcb_pushed)
		error_context_stack = r->errcb.previous;
	r->errcb_pushed = false;
}
