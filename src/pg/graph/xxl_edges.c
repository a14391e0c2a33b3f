/*
 * xxl_edges.c — the graph functions' edge reader (graph.h): an edge list,
 * a table read directly or a query through an SPI cursor (io/xxl_input.h),
 * its columns found by name and checked, read in batches.  Rows of
 * by-value columns are read in place where the source allows it: an xxl
 * table's packed rows, a heap page's tuples without NULLs.
 */
#include "postgres.h"

#include <limits.h>
#include <math.h>

#include "access/htup_details.h"
#include "access/table.h"
#include "access/tupmacs.h"
#include "executor/tuptable.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "optimizer/plancat.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/regproc.h"
#include "utils/varlena.h"

#include "pg/runtime/runtime.h"
#include "pg/graph/graph.h"
#include "pg/io/io.h"

/* Reading edges ----------------------------------------------------------- */

typedef enum EdgeColumn
{
	COL_SOURCE,
	COL_TARGET,
	COL_ID,
	COL_COST,
	COL_RCOST,					/* optional: missing means -1 (no reverse direction) */
	COL_WEIGHT,					/* optional: missing means 1 */
	NUM_COLS
} EdgeColumn;

static const char *const column_names[NUM_COLS] = {"source", "target", "id", "cost",
"reverse_cost", "weight"};

static bool
is_cost_column(EdgeColumn c)
{
	return c == COL_COST || c == COL_RCOST || c == COL_WEIGHT;
}

static bool
is_optional_column(EdgeColumn c)
{
	return c == COL_RCOST || c == COL_WEIGHT;
}

struct XxlEdgeReader
{
	const char *fname;
	XxlInput   *in;
	int			needs;
	int			attno[NUM_COLS];	/* 0-based, -1 when not read */
	Oid			type[NUM_COLS];		/* base type */
	AttrNumber	maxatt;			/* deform this many */
	MemoryContext rowcxt;		/* numeric costs allocate while converting */
	ErrorContextCallback errcb;
	bool		errcb_pushed;
	/* an xxl table of by-value columns: rows straight from its pages */
	bool		runs;
	XxlRowRun	run;
	int			run_next;		/* in run */
	uint64		rows;			/* edges handed out */
	uint64	   *count_into;		/* xxl_edges_read counts here too, or NULL */
	Datum	   *values;			/* one row's columns */
	bool	   *isnull;
	/* a heap read a page at a time: tuples without NULLs read in place */
	bool		heap_in_place;
	TupleTableSlot *slot;		/* heap tuples read the general way */
	/* rows of fixed width: each column read in place, at its offset */
	int			planned_natts;	/* the column count of the rows off and len are for, or 0 */
	bool		in_place;
	int			off[NUM_COLS];
	int			len[NUM_COLS];
	/* a sharded table: in is its local leaves, then the shards' edges */
	void	   *sharded;
	bool		local_done;
};

static const XxlShardedEdges *sharded_edges;

void
xxl_edges_register_sharded(const XxlShardedEdges *sharded)
{
	sharded_edges = sharded;
}

static void plan_heap_in_place(XxlEdgeReader *r, TupleDesc desc);

/* Edges read so far: the row number of the one being read, in its errors. */
static uint64
edges_count(XxlEdgeReader *r)
{
	/* (a run's rows are counted one by one here, the input counts a run when it is taken) */
	return r->runs ? r->rows : xxl_input_rows(r->in);
}

static void
edges_error_context(void *arg)
{
	XxlEdgeReader *r = (XxlEdgeReader *) arg;

	if (r->in != NULL)
		errcontext("%s reading its edges from %s", r->fname, xxl_input_describe(r->in));
	else
		errcontext("%s opening its edges", r->fname);
}

static bool
is_cost_type(Oid t)
{
	return xxl_is_int_type(t) || t == FLOAT4OID || t == FLOAT8OID || t == NUMERICOID;
}

/* Find the needed columns of desc by name (dropped columns do not count). */
static void
find_columns(XxlEdgeReader *r, TupleDesc desc)
{
	for (int c = 0; c < NUM_COLS; c++)
	{
		r->attno[c] = -1;
		if ((c == COL_ID && !(r->needs & XXL_EDGE_ID)) ||
			(c == COL_COST && !(r->needs & XXL_EDGE_COST)) ||
			(c == COL_RCOST && !(r->needs & XXL_EDGE_RCOST)) ||
			(c == COL_WEIGHT && !(r->needs & XXL_EDGE_WEIGHT)))
			continue;
		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);

			if (att->attisdropped || strcmp(NameStr(att->attname), column_names[c]) != 0)
				continue;
			if (r->attno[c] >= 0)
				ereport(ERROR,
						(errcode(ERRCODE_AMBIGUOUS_COLUMN),
						 errmsg("%s: the edges have more than one column named \"%s\"",
								r->fname, column_names[c]),
						 errhint("Rename or drop the extra column in the edges query.")));
			r->attno[c] = i;
			r->type[c] = getBaseType(att->atttypid);
		}
		if (r->attno[c] < 0 && is_optional_column(c))
			continue;
		if (r->attno[c] < 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("%s: the edges have no column \"%s\"", r->fname, column_names[c]),
					 errhint("%s needs the columns %s; name them so in the edges query, e.g. "
							 "SELECT a AS source, b AS target%s FROM ...", r->fname,
							 (r->needs & XXL_EDGE_COST) ? "id, source, target and cost" :
							 "source and target",
							 (r->needs & XXL_EDGE_COST) ? ", edge_id AS id, w AS cost" : "")));
		if (is_cost_column(c) ? !is_cost_type(r->type[c]) : !xxl_is_int_type(r->type[c]))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("%s: column \"%s\" of the edges has type %s, but it must be %s",
							r->fname, column_names[c],
							format_type_be(TupleDescAttr(desc, r->attno[c])->atttypid),
							is_cost_column(c) ?
							"double precision, real, numeric, bigint, integer or smallint" :
							"bigint, integer or smallint"),
					 errhint("Cast it in the edges query, e.g. SELECT %s::%s AS %s ...",
							 column_names[c], is_cost_column(c) ? "float8" : "bigint",
							 column_names[c])));
		if (r->attno[c] + 1 > r->maxatt)
			r->maxatt = r->attno[c] + 1;
	}
}

/*
 * When edges names a sharded table: start its shards' reductions, and read
 * its local leaves here (r->in); else leave r->in NULL.
 */
static void
open_sharded(XxlEdgeReader *r, const char *edges, XxlEdgeReduce reduce)
{
	RangeVar   *rv = xxl_source_name(edges);
	Oid			relid = rv != NULL ? RangeVarGetRelid(rv, AccessShareLock, true) : InvalidOid;
	Relation	rel;
	bool	   *wanted;
	List	   *local;

	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return;
	rel = table_open(relid, NoLock);
	/* what reading the table needs, before anything else is said about it */
	xxl_input_check_select(rel, 0, NULL);
	find_columns(r, RelationGetDescr(rel));
	wanted = palloc0(sizeof(bool) * Max(RelationGetDescr(rel)->natts, 1));
	for (int c = 0; c < NUM_COLS; c++)
		if (r->attno[c] >= 0)
			wanted[r->attno[c]] = true;
	r->sharded = sharded_edges->start(rel, reduce, wanted, &local);
	if (r->sharded != NULL)
		r->in = xxl_input_open_leaves(rel, local);
	table_close(rel, NoLock);
}

XxlEdgeReader *
xxl_edges_open_reduced(const char *edges, const char *fname, int needs, XxlEdgeReduce reduce)
{
	XxlEdgeReader *r = palloc0(sizeof(XxlEdgeReader));

	r->fname = fname;
	r->needs = needs;
	r->errcb.callback = edges_error_context;
	r->errcb.arg = r;
	r->errcb.previous = error_context_stack;
	error_context_stack = &r->errcb;
	r->errcb_pushed = true;

	if (reduce != XXL_REDUCE_NONE && sharded_edges != NULL)
		open_sharded(r, edges, reduce);
	if (r->in == NULL)
	{
		r->in = xxl_input_open(edges);
		find_columns(r, xxl_input_desc(r->in));
	}
	if (xxl_input_has_tuples(r->in))
		plan_heap_in_place(r, xxl_input_desc(r->in));
	else if (xxl_input_runs_byval(r->in))
	{
		TupleDesc	desc = xxl_input_desc(r->in);

		r->runs = true;
		r->values = palloc(sizeof(Datum) * Max(desc->natts, 1));
		r->isnull = palloc(sizeof(bool) * Max(desc->natts, 1));
	}
	if (((needs & XXL_EDGE_COST) && r->type[COL_COST] == NUMERICOID) ||
		(r->attno[COL_RCOST] >= 0 && r->type[COL_RCOST] == NUMERICOID) ||
		(r->attno[COL_WEIGHT] >= 0 && r->type[COL_WEIGHT] == NUMERICOID))
		r->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "xxl graph numeric cost",
										  ALLOCSET_SMALL_SIZES);
	return r;
}

XxlEdgeReader *
xxl_edges_open(const char *edges, const char *fname, int needs)
{
	return xxl_edges_open_reduced(edges, fname, needs, XXL_REDUCE_NONE);
}

void
xxl_edges_report(XxlEdgeReader *r, XxlOperator *op)
{
	if (r->sharded != NULL)
		sharded_edges->report(r->sharded, op);
}

/* The needed columns' offsets in heap tuples without NULLs, where they are fixed. */
static void
plan_heap_in_place(XxlEdgeReader *r, TupleDesc desc)
{
	int		   *offs = palloc(sizeof(int) * Max(r->maxatt, 1));

	r->heap_in_place = xxl_heap_fixed_offsets(desc, r->maxatt, offs);
	for (int c = 0; r->heap_in_place && c < NUM_COLS; c++)
		if (r->attno[c] >= 0)
		{
			r->off[c] = offs[r->attno[c]];
			r->len[c] = TupleDescAttr(desc, r->attno[c])->attlen;
		}
	pfree(offs);
	r->slot = MakeSingleTupleTableSlot(desc, &TTSOpsHeapTuple);
}

static double
cost_value(XxlEdgeReader *r, EdgeColumn c, Datum d)
{
	bool		overflow;
	double		v = xxl_float_datum(d, r->type[c], r->rowcxt, &overflow);

	if (overflow)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("%s: column \"%s\" of the edges is out of range for double precision in row " UINT64_FORMAT,
						r->fname, column_names[c], edges_count(r))));
	return v;
}

static void
null_error(XxlEdgeReader *r, EdgeColumn c)
{
	ereport(ERROR,
			(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
			 errmsg("%s: column \"%s\" of the edges is null in row " UINT64_FORMAT,
					r->fname, column_names[c], edges_count(r)),
			 errhint("Leave such edges out in the edges query, e.g. WHERE %s IS NOT NULL.",
					 column_names[c])));
}

/* An edge from one row's columns. */
static void
edge_from(XxlEdgeReader *r, const Datum *values, const bool *isnull, XxlEdge *e)
{
	for (int c = 0; c < NUM_COLS; c++)
		if (r->attno[c] >= 0 && isnull[r->attno[c]])
			null_error(r, c);
	e->source = xxl_int_datum(values[r->attno[COL_SOURCE]], r->type[COL_SOURCE]);
	e->target = xxl_int_datum(values[r->attno[COL_TARGET]], r->type[COL_TARGET]);
	e->id = r->attno[COL_ID] >= 0 ? xxl_int_datum(values[r->attno[COL_ID]], r->type[COL_ID]) : 0;
	e->cost = 0;
	e->reverse_cost = -1;
	e->weight = 1;
	for (EdgeColumn c = COL_COST; c <= COL_WEIGHT; c++)
	{
		double		v;

		if (r->attno[c] < 0)
			continue;
		v = cost_value(r, c, values[r->attno[c]]);
		if (isnan(v) && r->attno[COL_ID] >= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: column \"%s\" of the edges is NaN in row " UINT64_FORMAT
							" (edge id " INT64_FORMAT ")",
							r->fname, column_names[c], edges_count(r), e->id),
					 errhint("Costs must be numbers; leave such edges out with WHERE %s <> 'NaN'.",
							 column_names[c])));
		if (isnan(v))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: column \"%s\" of the edges is NaN in row " UINT64_FORMAT,
							r->fname, column_names[c], edges_count(r)),
					 errhint("Leave such edges out with WHERE %s <> 'NaN'.", column_names[c])));
		if (c == COL_COST)
			e->cost = v;
		else if (c == COL_RCOST)
			e->reverse_cost = v;
		else
			e->weight = v;
	}
}

/* Where each column sits in rows of the run's format, if they have a fixed width. */
static void
plan_in_place(XxlEdgeReader *r)
{
	const XxlRowFormat *fmt = r->run.fmt;

	r->planned_natts = fmt->natts;
	r->in_place = fmt->row_width > 0 && fmt->natts >= r->maxatt;
	for (int c = 0; r->in_place && c < NUM_COLS; c++)
	{
		int			at = fmt->bitmap_bytes;

		if (r->attno[c] < 0)
			continue;
		for (int i = 0; i < r->attno[c]; i++)
			at += fmt->lens[i];
		r->off[c] = at;
		r->len[c] = fmt->lens[r->attno[c]];
	}
}

/*
 * A row without NULLs whose columns sit at r->off, read in place; false
 * when the general way must say why it is wrong (NaN).
 */
static pg_attribute_always_inline bool
edge_in_place(XxlEdgeReader *r, const char *row, XxlEdge *e)
{
	e->source = xxl_int_at(row + r->off[COL_SOURCE], r->len[COL_SOURCE]);
	e->target = xxl_int_at(row + r->off[COL_TARGET], r->len[COL_TARGET]);
	e->id = r->attno[COL_ID] >= 0 ? xxl_int_at(row + r->off[COL_ID], r->len[COL_ID]) : 0;
	e->cost = 0;
	e->reverse_cost = -1;
	e->weight = 1;
	for (EdgeColumn c = COL_COST; c <= COL_WEIGHT; c++)
	{
		double		v;

		if (r->attno[c] < 0)
			continue;
		v = xxl_float_at(row + r->off[c], r->type[c], r->len[c]);
		if (isnan(v))
			return false;
		if (c == COL_COST)
			e->cost = v;
		else if (c == COL_RCOST)
			e->reverse_cost = v;
		else
			e->weight = v;
	}
	return true;
}

/*
 * The next edge of an xxl table of by-value columns, straight from its
 * page: no slot and no call per row; rows of fixed width are not even
 * unpacked.
 */
static bool
next_from_run(XxlEdgeReader *r, XxlEdge *e)
{
	const char *row;
	uint32		len;

	while (r->run_next >= r->run.n)
	{
		CHECK_FOR_INTERRUPTS();
		if (!xxl_input_next_run(r->in, &r->run))
			return false;
		r->run_next = 0;
		/* (a scan's runs share one format, which changes only with the pages' column count) */
		if (r->run.fmt->natts != r->planned_natts)
			plan_in_place(r);
	}
	r->rows++;
	if (r->in_place)
	{
		bool		nulls = false;

		row = xxl_run_row(&r->run, r->run.first + r->run_next, &len);
		for (int b = 0; b < r->run.fmt->bitmap_bytes; b++)
			nulls |= row[b] != 0;
		if (!nulls && edge_in_place(r, row, e))
		{
			r->run_next++;
			return true;
		}
	}
	xxl_run_unpack(&r->run, r->run_next++, r->maxatt, r->values, r->isnull);
	edge_from(r, r->values, r->isnull, e);
	return true;
}

/* The next edge of a heap read a page at a time: in place when the tuple allows. */
static bool
next_from_heap(XxlEdgeReader *r, XxlEdge *e)
{
	HeapTuple	tuple;

	CHECK_FOR_INTERRUPTS();
	tuple = xxl_input_next_tuple(r->in);
	if (tuple == NULL)
		return false;
	if (r->heap_in_place && !HeapTupleHasNulls(tuple) &&
		HeapTupleHeaderGetNatts(tuple->t_data) >= r->maxatt &&
		edge_in_place(r, (const char *) tuple->t_data + tuple->t_data->t_hoff, e))
		return true;
	ExecStoreHeapTuple(tuple, r->slot, false);
	slot_getsomeattrs(r->slot, r->maxatt);
	edge_from(r, r->slot->tts_values, r->slot->tts_isnull, e);
	return true;
}

/* The next edge, whatever the source; false at the end. */
static bool
edges_next(XxlEdgeReader *r, XxlEdge *e)
{
	TupleTableSlot *slot;

	if (r->runs)
		return next_from_run(r, e);
	if (r->slot != NULL)
		return next_from_heap(r, e);
	CHECK_FOR_INTERRUPTS();
	slot = xxl_input_next(r->in);
	if (slot == NULL)
		return false;
	slot_getsomeattrs(slot, r->maxatt);
	edge_from(r, slot->tts_values, slot->tts_isnull, e);
	return true;
}

/* The next edges of the source read here, up to max; 0 at its end. */
static int
read_here(XxlEdgeReader *r, XxlEdge *out, int max)
{
	int			n = 0;

	while (n < max)
	{
		/* the current page's rows without NULLs, in place */
		if (r->runs && r->in_place && r->run_next < r->run.n)
		{
			const XxlRowRun *run = &r->run;
			int			bitmap = run->fmt->bitmap_bytes,
						first = n;
			uint32		len;

			while (n < max && r->run_next < run->n)
			{
				const char *row = xxl_run_row(run, run->first + r->run_next, &len);
				bool		nulls = false;

				for (int b = 0; b < bitmap; b++)
					nulls |= row[b] != 0;
				if (nulls || !edge_in_place(r, row, &out[n]))
					break;
				n++;
				r->run_next++;
			}
			/* (counted before the general way may fail on the next row) */
			r->rows += n - first;
			if (r->count_into)
				*r->count_into += n - first;
			if (n == max)
				break;
		}
		/* a new page, or a row the general way reads */
		if (!edges_next(r, &out[n]))
			break;
		n++;
		if (r->count_into)
			(*r->count_into)++;
	}
	return n;
}

int
xxl_edges_read(XxlEdgeReader *r, XxlEdge *out, int max)
{
	int			n;

	if (!r->local_done)
	{
		n = read_here(r, out, max);
		if (n > 0 || r->sharded == NULL)
			return n;
		r->local_done = true;
	}
	CHECK_FOR_INTERRUPTS();
	n = sharded_edges->read(r->sharded, out, max);
	if (r->count_into)
		*r->count_into += n;
	return n;
}

void
xxl_edges_count_into(XxlEdgeReader *r, uint64 *counter)
{
	r->count_into = counter;
}

uint64
xxl_edges_estimate(XxlEdgeReader *r)
{
	Relation	rel = xxl_input_relation(r->in);
	BlockNumber pages;
	double		tuples = 0,
				allvisfrac;

	if (rel == NULL)
		return 0;				/* a query: no estimate */
	estimate_rel_size(rel, NULL, &pages, &tuples, &allvisfrac);
	return tuples > 0 ? (uint64) tuples : 0;
}

void
xxl_edges_close(XxlEdgeReader *r)
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
