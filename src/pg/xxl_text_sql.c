/*
 * xxl_text_sql.c — the SQL face of the text engine (src/core/text):
 * suffix arrays (xxl.suffix_array, xxl.suffix_array_into), their checker
 * (xxl.suffix_array_check), the Burrows–Wheeler transform (xxl.bwt,
 * xxl.bwt_into, xxl.bwt_inverse) and pattern search over a stored suffix
 * array (xxl.locate).  See docs/text.md.
 *
 * A corpus is a table or query with one text or bytea column (xxl_input.h);
 * its values are concatenated in the order the rows come, raw bytes in
 * whatever encoding they have, and streamed into the engine as they are
 * read, so the text can be far larger than PostgreSQL's 1 GB value limit
 * and than memory.  A value stored out of line without compression is even
 * read slice by slice; any other value is detoasted one row at a time.
 *
 * Positions and ranks are 1-based in SQL, 0-based in the engine.
 *
 * Suffix array rows are (rank bigint, pos bigint): the compact row of the
 * first one is formed once and only its 16 data bytes change from row to
 * row, so a row costs two memcpy on top of what the output does with it.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/varlena.h"

#include "xxl_error.h"
#include "xxl_input.h"
#include "xxl_operator.h"
#include "xxl_output.h"
#include "xxl_suffix.h"
#include "xxl_text_store.h"

PG_FUNCTION_INFO_V1(xxl_suffix_array_bytea);
PG_FUNCTION_INFO_V1(xxl_suffix_array_corpus);
PG_FUNCTION_INFO_V1(xxl_suffix_array_into_bytea);
PG_FUNCTION_INFO_V1(xxl_suffix_array_into_corpus);
PG_FUNCTION_INFO_V1(xxl_suffix_array_check_bytea);
PG_FUNCTION_INFO_V1(xxl_suffix_array_check_corpus);
PG_FUNCTION_INFO_V1(xxl_bwt_bytea);
PG_FUNCTION_INFO_V1(xxl_bwt_bytea_v2);
PG_FUNCTION_INFO_V1(xxl_bwt_into_bytea);
PG_FUNCTION_INFO_V1(xxl_bwt_into_corpus);
PG_FUNCTION_INFO_V1(xxl_bwt_inverse_sql);
PG_FUNCTION_INFO_V1(xxl_locate);

/* bytes of a value fed to the engine at once (and of a detoasted slice) */
#define FEED_SLICE (1024 * 1024)
/* bytes per row of a BWT table */
#define BWT_CHUNK (1024 * 1024)
/* entries handed to the checker at once */
#define CHECK_BATCH 1024

/* Arguments ------------------------------------------------------------------ */

static char *
text_arg(FunctionCallInfo fcinfo, int n, const char *name)
{
	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
	return text_to_cstring(PG_GETARG_TEXT_PP(n));
}

/* The engine's configuration under the operator's settings. */
static xxl_sa_config
text_config(XxlOperator *op, xxl_sa_mode mode)
{
	xxl_sa_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.res = xxl_operator_resources(op);
	cfg.mode = mode;
	return cfg;
}

/* Spread a total over the operator's disks (the engine counts totals only). */
static void
spread_io(XxlStats *st, uint64 read, uint64 written)
{
	int			nd = Max(st->ndisks, 1);

	st->io.ndisks = nd;
	for (int i = 0; i < nd; i++)
	{
		st->io.disk[i].bytes_read = read / nd + (i == 0 ? read % nd : 0);
		st->io.disk[i].bytes_written = written / nd + (i == 0 ? written % nd : 0);
	}
}

/* Corpus input --------------------------------------------------------------- */

/* Where corpus bytes go: the builder, the checker or the text store. */
typedef struct CorpusSink
{
	xxl_status	(*put) (void *core, const void *bytes, size_t len);
	const xxl_error *(*error) (void *core);
	void	   *core;
	const char *what;			/* for error messages */
	uint64		bytes;
} CorpusSink;

static xxl_status
sink_sa_put(void *core, const void *bytes, size_t len)
{
	return xxl_sa_put((xxl_sa *) core, bytes, len);
}

static const xxl_error *
sink_sa_error(void *core)
{
	return xxl_sa_error((xxl_sa *) core);
}

static xxl_status
sink_check_put(void *core, const void *bytes, size_t len)
{
	return xxl_sa_check_put_text((xxl_sa_checker *) core, bytes, len);
}

static const xxl_error *
sink_check_error(void *core)
{
	return xxl_sa_check_error((xxl_sa_checker *) core);
}

static xxl_status
sink_store_put(void *core, const void *bytes, size_t len)
{
	return xxl_text_store_put((xxl_text_store *) core, bytes, len);
}

static const xxl_error *
sink_store_error(void *core)
{
	return xxl_text_store_error((xxl_text_store *) core);
}

static void
sink_put(CorpusSink *sink, const char *bytes, size_t len)
{
	while (len > 0)
	{
		size_t		k = Min(len, (size_t) FEED_SLICE);

		if (sink->put(sink->core, bytes, k) != XXL_OK)
			xxl_raise_error(sink->error(sink->core), sink->what);
		sink->bytes += k;
		bytes += k;
		len -= k;
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Feed one text or bytea value.  Out-of-line values without compression
 * are fetched slice by slice, so even a value near 1 GB never sits in
 * memory whole; compressed ones have to be decompressed in one piece.
 */
static void
feed_value(CorpusSink *sink, Datum d)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(d);

	if (VARATT_IS_EXTERNAL_ONDISK(v))
	{
		struct varatt_external ptr;

		VARATT_EXTERNAL_GET_POINTER(ptr, v);
		if (!VARATT_EXTERNAL_IS_COMPRESSED(ptr))
		{
			int32		size = VARATT_EXTERNAL_GET_EXTSIZE(ptr);

			for (int32 off = 0; off < size; off += FEED_SLICE)
			{
				int32		len = Min(size - off, FEED_SLICE);
				struct varlena *slice = detoast_attr_slice(v, off, len);

				sink_put(sink, VARDATA_ANY(slice), VARSIZE_ANY_EXHDR(slice));
				pfree(slice);
			}
			return;
		}
	}
	v = pg_detoast_datum_packed(v);
	sink_put(sink, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
	if (v != (struct varlena *) DatumGetPointer(d))
		pfree(v);
}

/*
 * Open a corpus source and find its column: exactly one (visible) column of
 * type text, varchar or bytea, or a domain over one of them.
 */
static XxlInput *
open_corpus(const char *source, AttrNumber *attno)
{
	XxlInput   *in = xxl_input_open(source);
	TupleDesc	desc = xxl_input_desc(in);
	int			ncols = 0;
	Form_pg_attribute col = NULL;
	Oid			base;

	for (int i = 0; i < desc->natts; i++)
		if (!TupleDescAttr(desc, i)->attisdropped)
		{
			ncols++;
			if (col == NULL)
			{
				col = TupleDescAttr(desc, i);
				*attno = i + 1;
			}
		}
	if (ncols != 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the corpus must have exactly one column, but %s has %d",
						xxl_input_describe(in), ncols),
				 errhint("Select the one text or bytea column: 'SELECT body FROM docs ORDER BY id'.")));
	base = getBaseType(col->atttypid);
	if (base != TEXTOID && base != VARCHAROID && base != BYTEAOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the corpus column \"%s\" has type %s, not text or bytea",
						NameStr(col->attname), format_type_be(col->atttypid)),
				 errhint("Cast it in a query, e.g. 'SELECT %s::text FROM ...'.",
						 quote_identifier(NameStr(col->attname)))));
	return in;
}

/* Read every row of the corpus into sink; closes in.  Returns the rows. */
static uint64
feed_corpus(XxlInput *in, AttrNumber attno, CorpusSink *sink)
{
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext rowcxt = AllocSetContextCreate(cxt, "xxl corpus row", ALLOCSET_DEFAULT_SIZES);
	uint64		rows;

	for (;;)
	{
		TupleTableSlot *slot;
		Datum		d;
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(rowcxt);
		MemoryContextSwitchTo(rowcxt);
		slot = xxl_input_next(in);
		if (slot == NULL)
			break;
		d = slot_getattr(slot, attno, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("row " UINT64_FORMAT " of the corpus is null", xxl_input_rows(in)),
					 errhint("Leave NULLs out (WHERE col IS NOT NULL) or use coalesce(col, '').")));
		feed_value(sink, d);
		MemoryContextSwitchTo(cxt);
	}
	MemoryContextSwitchTo(cxt);
	rows = xxl_input_rows(in);
	xxl_input_close(in);
	MemoryContextDelete(rowcxt);
	return rows;
}

/* The suffix-array builder as an operator's engine object ------------------- */

typedef struct SaCore
{
	xxl_sa	   *sa;
	xxl_sa_mode mode;
	bool		built;
} SaCore;

static void
sa_core_destroy(void *core)
{
	xxl_sa_destroy(((SaCore *) core)->sa);
}

/*
 * A JSON array of one number per DC3 level.  xxl_stats_detail keeps values
 * of up to 255 characters, so a deep recursion shows its first levels only
 * (the number of levels is in "levels").
 */
static void
detail_array(XxlStats *st, const char *key, int levels, const xxl_sa_level_stats *level,
			 bool io)
{
	char		buf[256];
	int			len = 0;

	buf[len++] = '[';
	for (int i = 0; i < levels && i < XXL_SA_MAX_LEVELS; i++)
	{
		char		num[32];
		int			k = snprintf(num, sizeof(num), "%s" UINT64_FORMAT, i ? ", " : "",
								 io ? level[i].io_bytes : level[i].n);

		if (len + k + 2 > (int) sizeof(buf) - 1)
			break;
		memcpy(buf + len, num, k);
		len += k;
	}
	buf[len++] = ']';
	buf[len] = '\0';
	xxl_stats_detail(st, key, "%s", buf);
}

static void
sa_core_collect(void *core, XxlStats *st)
{
	SaCore	   *c = (SaCore *) core;
	xxl_sa_stats s;
	uint64		io;

	xxl_sa_stats_get(c->sa, &s);
	io = s.bytes_read + s.bytes_written;
	st->record_bytes = s.n;
	st->runs = s.runs;
	st->merge_passes = s.max_merge_passes;
	st->memory_peak = s.memory_peak;
	st->memory_limit = s.memory_limit;
	spread_io(st, s.bytes_read, s.bytes_written);
	st->io.wait_read_ns = s.io_wait_ns;	/* reads and writes together */
	st->io.direct = s.io_direct;

	xxl_stats_detail(st, "n", UINT64_FORMAT, s.n);
	xxl_stats_detail(st, "levels", "%d", s.levels);
	xxl_stats_detail(st, "recursion_depth", "%d", s.recursion_depth);
	xxl_stats_detail(st, "external_levels", "%d", s.external_levels);
	xxl_stats_detail(st, "io_bytes", UINT64_FORMAT, io);
	xxl_stats_detail(st, "io_bytes_per_byte", "%.2f", s.n ? (double) io / s.n : 0.0);
	/* [T] Thm 13: sort(30n) + scan(6n) words of 4 bytes, a sort reading and writing once */
	xxl_stats_detail(st, "thesis_bytes", UINT64_FORMAT, s.thesis_bytes);
	xxl_stats_detail(st, "io_vs_thesis", "%.3f",
					 s.thesis_bytes ? (double) io / s.thesis_bytes : 0.0);
	xxl_stats_detail(st, "sorted_bytes", UINT64_FORMAT, s.sorted_bytes);
	xxl_stats_detail(st, "spool_bytes", UINT64_FORMAT, s.spool_bytes);
	xxl_stats_detail(st, "sorter_block_max", "%zu", s.sorter_block_max);
	if (c->mode == XXL_SA_BWT && c->built)
		xxl_stats_detail(st, "primary_index", UINT64_FORMAT, xxl_sa_bwt_primary(c->sa));

	/* per level: characters and I/O bytes (0: solved in memory) */
	detail_array(st, "level_n", s.levels, s.level, false);
	detail_array(st, "level_io", s.levels, s.level, true);
}

static SaCore *
sa_begin(XxlOperator *op, xxl_sa_mode mode)
{
	xxl_sa_config cfg = text_config(op, mode);
	xxl_error	err;
	SaCore	   *c = MemoryContextAllocZero(op->cxt, sizeof(SaCore));

	xxl_error_clear(&err);
	c->mode = mode;
	c->sa = xxl_sa_create(&cfg, &err);
	if (c->sa == NULL)
		xxl_raise_error(&err, op->name);
	xxl_operator_attach(op, c, sa_core_destroy, sa_core_collect);
	return c;
}

static void
sa_sink(CorpusSink *sink, SaCore *c, const char *what)
{
	memset(sink, 0, sizeof(*sink));
	sink->put = sink_sa_put;
	sink->error = sink_sa_error;
	sink->core = c->sa;
	sink->what = what;
}

/* Text in: the rows of a corpus source, or one bytea value. */
static void
sa_feed(XxlOperator *op, SaCore *c, const char *source, bytea *data)
{
	CorpusSink	sink;

	sa_sink(&sink, c, op->name);
	if (source != NULL)
	{
		AttrNumber	attno;
		XxlInput   *in = open_corpus(source, &attno);

		op->rows_in = feed_corpus(in, attno, &sink);
	}
	else
	{
		sink_put(&sink, VARDATA_ANY(data), VARSIZE_ANY_EXHDR(data));
		op->rows_in = 1;
	}
	xxl_operator_phase(op, XXL_PHASE_MERGE);
	if (xxl_sa_build(c->sa) != XXL_OK)
		xxl_raise_error(xxl_sa_error(c->sa), op->name);
	c->built = true;
	xxl_operator_phase(op, XXL_PHASE_OUTPUT);
}

/* Suffix array rows ---------------------------------------------------------- */

static TupleDesc
sa_table_desc(void)
{
	TupleDesc	desc = CreateTemplateTupleDesc(2);

	TupleDescInitEntry(desc, 1, "rank", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 2, "pos", INT8OID, -1, 0);
	return desc;
}

/*
 * Rows of two non-null bigints: the compact row is formed once, and each
 * row only overwrites the two values, which are the row's last 16 bytes
 * (8-byte aligned after the header, no nulls bitmap).  Checked at setup;
 * where it does not hold, rows are formed from values.
 */
typedef struct PairWriter
{
	XxlOutput  *out;
	char	   *row;
	uint32		len;
	bool		fast;
} PairWriter;

static void
pair_writer_init(PairWriter *w, XxlOutput *out, TupleDesc desc)
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

static inline void
pair_writer_put(PairWriter *w, int64 a, int64 b)
{
	if (w->fast)
	{
		memcpy(w->row + w->len - 16, &a, 8);
		memcpy(w->row + w->len - 8, &b, 8);
		xxl_output_put_compact(w->out, w->row, w->len);
	}
	else
	{
		Datum		values[2] = {Int64GetDatum(a), Int64GetDatum(b)};
		bool		nulls[2] = {false, false};

		xxl_output_put_values(w->out, values, nulls);
	}
}

/* Drain the builder into out; returns the rows written. */
static uint64
sa_emit(XxlOperator *op, SaCore *c, XxlOutput *out, TupleDesc desc)
{
	PairWriter	w;
	uint64		pos;
	int64		rank = 0;
	int			got;
	uint64		n;

	pair_writer_init(&w, out, desc);
	while ((got = xxl_sa_next(c->sa, &pos)) > 0)
	{
		pair_writer_put(&w, ++rank, (int64) pos + 1);
		if ((rank & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (got < 0)
		xxl_raise_error(xxl_sa_error(c->sa), op->name);
	n = xxl_output_finish(out);
	op->rows_out = n;
	xxl_operator_end(op);
	return n;
}

/* xxl.suffix_array(data bytea) RETURNS TABLE(rank bigint, pos bigint) */
Datum
xxl_suffix_array_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *data = PG_GETARG_BYTEA_PP(0);
	TupleDesc	desc = xxl_output_caller_desc(fcinfo);
	XxlOutput  *out = xxl_output_to_caller(fcinfo, desc);
	XxlOperator *op = xxl_operator_begin("suffix_array");
	SaCore	   *c = sa_begin(op, XXL_SA_POSITIONS);

	sa_feed(op, c, NULL, data);
	sa_emit(op, c, out, desc);
	return (Datum) 0;
}

/* xxl.suffix_array(corpus text) RETURNS TABLE(rank bigint, pos bigint) */
Datum
xxl_suffix_array_corpus(PG_FUNCTION_ARGS)
{
	char	   *source = text_arg(fcinfo, 0, "corpus");
	TupleDesc	desc = xxl_output_caller_desc(fcinfo);
	XxlOutput  *out = xxl_output_to_caller(fcinfo, desc);
	XxlOperator *op = xxl_operator_begin("suffix_array");
	SaCore	   *c = sa_begin(op, XXL_SA_POSITIONS);

	sa_feed(op, c, source, NULL);
	sa_emit(op, c, out, desc);
	return (Datum) 0;
}

static int64
suffix_array_into(const char *source, bytea *data, const char *target)
{
	TupleDesc	desc = sa_table_desc();
	XxlOutput  *out;
	XxlOperator *op;
	SaCore	   *c;

	/* the target is made first: a name clash is reported before any work */
	out = xxl_output_into_table(target, desc);
	op = xxl_operator_begin("suffix_array");
	c = sa_begin(op, XXL_SA_POSITIONS);
	sa_feed(op, c, source, data);
	return (int64) sa_emit(op, c, out, desc);
}

/* xxl.suffix_array_into(data bytea, target text) RETURNS bigint */
Datum
xxl_suffix_array_into_bytea(PG_FUNCTION_ARGS)
{
	char	   *target = text_arg(fcinfo, 1, "target");

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("data must not be null")));
	PG_RETURN_INT64(suffix_array_into(NULL, PG_GETARG_BYTEA_PP(0), target));
}

/* xxl.suffix_array_into(corpus text, target text) RETURNS bigint */
Datum
xxl_suffix_array_into_corpus(PG_FUNCTION_ARGS)
{
	char	   *source = text_arg(fcinfo, 0, "corpus");
	char	   *target = text_arg(fcinfo, 1, "target");

	PG_RETURN_INT64(suffix_array_into(source, NULL, target));
}

/* BWT ------------------------------------------------------------------------ */

/* Build the BWT of a corpus or value; the bytes are read with xxl_sa_bwt_read. */
static SaCore *
bwt_build(XxlOperator *op, const char *source, bytea *data)
{
	SaCore	   *c = sa_begin(op, XXL_SA_BWT);

	sa_feed(op, c, source, data);
	return c;
}

/* The transform of data in memory, and its primary index. */
static bytea *
bwt_of(bytea *data, int64 *primary)
{
	size_t		n = VARSIZE_ANY_EXHDR(data);
	bytea	   *result = palloc(VARHDRSZ + n);
	XxlOperator *op = xxl_operator_begin("bwt");
	SaCore	   *c = bwt_build(op, NULL, data);
	size_t		have = 0;
	int			got;

	for (;;)
	{
		size_t		len;

		got = xxl_sa_bwt_read(c->sa, VARDATA(result) + have, n - have, &len);
		if (got <= 0)
			break;
		have += len;
		if (have == n)
		{
			/* read the end, so the engine releases its spool */
			got = xxl_sa_bwt_read(c->sa, VARDATA(result) + have, 0, &len);
			break;
		}
		CHECK_FOR_INTERRUPTS();
	}
	if (got < 0)
		xxl_raise_error(xxl_sa_error(c->sa), op->name);
	if (have != n)
		elog(ERROR, "xxl bwt: %zu bytes of BWT for %zu bytes of text", have, n);
	SET_VARSIZE(result, VARHDRSZ + n);
	*primary = (int64) xxl_sa_bwt_primary(c->sa);
	op->rows_out = 1;
	xxl_operator_end(op);
	return result;
}

/* 0.1's xxl.bwt(data bytea) RETURNS bytea, for databases not yet updated */
Datum
xxl_bwt_bytea(PG_FUNCTION_ARGS)
{
	int64		primary;

	PG_RETURN_BYTEA_P(bwt_of(PG_GETARG_BYTEA_PP(0), &primary));
}

/* xxl.bwt(data bytea, OUT bwt bytea, OUT primary_index bigint) */
Datum
xxl_bwt_bytea_v2(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[2];
	bool		isnull[2] = {false, false};
	int64		primary;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "xxl.bwt must return a row");
	desc = BlessTupleDesc(desc);
	values[0] = PointerGetDatum(bwt_of(PG_GETARG_BYTEA_PP(0), &primary));
	values[1] = Int64GetDatum(primary);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, isnull)));
}

static int64
bwt_into(const char *source, bytea *data, const char *target)
{
	TupleDesc	desc = CreateTemplateTupleDesc(2);
	XxlOutput  *out;
	XxlOperator *op;
	SaCore	   *c;
	bytea	   *chunk = palloc(VARHDRSZ + BWT_CHUNK);
	int64		ordinal = 0;
	int64		primary;
	int			got;

	TupleDescInitEntry(desc, 1, "ordinal", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 2, "chunk", BYTEAOID, -1, 0);
	out = xxl_output_into_table(target, desc);
	op = xxl_operator_begin("bwt");
	c = bwt_build(op, source, data);
	primary = (int64) xxl_sa_bwt_primary(c->sa);
	for (;;)
	{
		size_t		len = 0,
					part;
		Datum		values[2];
		bool		nulls[2] = {false, false};

		got = 1;
		/* fill a whole chunk: the engine hands out pieces of its blocks */
		while (len < BWT_CHUNK &&
			   (got = xxl_sa_bwt_read(c->sa, VARDATA(chunk) + len, BWT_CHUNK - len, &part)) > 0)
			len += part;
		if (got < 0)
			xxl_raise_error(xxl_sa_error(c->sa), op->name);
		if (len == 0)
			break;
		SET_VARSIZE(chunk, VARHDRSZ + len);
		values[0] = Int64GetDatum(++ordinal);
		values[1] = PointerGetDatum(chunk);
		xxl_output_put_values(out, values, nulls);
		CHECK_FOR_INTERRUPTS();
		if (got == 0)
			break;
	}
	op->rows_out = xxl_output_finish(out);
	xxl_operator_end(op);
	return primary;
}

/* xxl.bwt_into(data bytea, target text) RETURNS bigint: the primary index */
Datum
xxl_bwt_into_bytea(PG_FUNCTION_ARGS)
{
	char	   *target = text_arg(fcinfo, 1, "target");

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("data must not be null")));
	PG_RETURN_INT64(bwt_into(NULL, PG_GETARG_BYTEA_PP(0), target));
}

/* xxl.bwt_into(corpus text, target text) RETURNS bigint: the primary index */
Datum
xxl_bwt_into_corpus(PG_FUNCTION_ARGS)
{
	char	   *source = text_arg(fcinfo, 0, "corpus");
	char	   *target = text_arg(fcinfo, 1, "target");

	PG_RETURN_INT64(bwt_into(source, NULL, target));
}

/* xxl.bwt_inverse(bwt bytea, primary_index bigint) RETURNS bytea (in memory) */
Datum
xxl_bwt_inverse_sql(PG_FUNCTION_ARGS)
{
	bytea	   *bwt = PG_GETARG_BYTEA_PP(0);
	int64		primary = PG_GETARG_INT64(1);
	uint64		n = VARSIZE_ANY_EXHDR(bwt);
	size_t		need = (size_t) (n + 1) * sizeof(uint64) + n;
	bytea	   *result;
	xxl_error	err;

	if (need > xxl_memory_bytes())
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("xxl.bwt_inverse needs %zu bytes of memory for " UINT64_FORMAT
						" bytes, more than xxl.memory", need, n),
				 errhint("The inverse transform runs in memory (9 bytes per byte): raise xxl.memory.")));
	if (primary < 0 || (n > 0 && (primary < 1 || (uint64) primary > n)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("primary index " INT64_FORMAT " is out of range 1.." UINT64_FORMAT,
						primary, n)));
	result = palloc(VARHDRSZ + n);
	xxl_error_clear(&err);
	if (xxl_bwt_inverse((const unsigned char *) VARDATA_ANY(bwt), n, (uint64) primary,
						(unsigned char *) VARDATA(result), &err) != XXL_OK)
		xxl_raise_error(&err, "xxl bwt_inverse");
	SET_VARSIZE(result, VARHDRSZ + n);
	PG_RETURN_BYTEA_P(result);
}

/* Checker ---------------------------------------------------------------------- */

typedef struct CheckCore
{
	xxl_sa_checker *checker;
	bool		ran;
	bool		ok;
	char		why[256];
} CheckCore;

static void
check_core_destroy(void *core)
{
	xxl_sa_check_destroy(((CheckCore *) core)->checker);
}

static void
check_core_collect(void *core, XxlStats *st)
{
	CheckCore  *c = (CheckCore *) core;
	xxl_sa_check_stats s;
	uint64		io;
	/* [T] §5.7: sort(5n) + scan(2n) words of 4 bytes */
	uint64		thesis;

	xxl_sa_check_stats_get(c->checker, &s);
	io = s.bytes_read + s.bytes_written;
	thesis = (2 * 5 + 2) * 4 * s.n;
	st->record_bytes = s.n;
	st->memory_peak = s.memory_peak;
	spread_io(st, s.bytes_read, s.bytes_written);
	st->io.wait_read_ns = s.io_wait_ns;
	st->io.direct = s.io_direct;
	xxl_stats_detail(st, "n", UINT64_FORMAT, s.n);
	xxl_stats_detail(st, "entries", UINT64_FORMAT, s.entries);
	xxl_stats_detail(st, "io_bytes", UINT64_FORMAT, io);
	xxl_stats_detail(st, "io_bytes_per_byte", "%.2f", s.n ? (double) io / s.n : 0.0);
	xxl_stats_detail(st, "thesis_bytes", UINT64_FORMAT, thesis);
	xxl_stats_detail(st, "io_vs_thesis", "%.3f", thesis ? (double) io / thesis : 0.0);
	if (c->ran)
	{
		xxl_stats_detail(st, "verdict", "%s", c->ok ? "true" : "false");
		if (!c->ok)
		{
			/* a JSON string (xxl_stats_detail keeps up to 255 characters) */
			char		why[256];
			int			k = 0;

			for (const char *p = c->why; *p && k < 200; p++)
				if (*p != '"' && *p != '\\' && (unsigned char) *p >= 0x20)
					why[k++] = *p;
			why[k] = '\0';
			xxl_stats_detail(st, "reason", "\"%s\"", why);
		}
	}
}

/* An integer column of the suffix-array source as int64. */
static int64
int_value(Datum d, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

static bool
is_int_type(Oid type)
{
	return type == INT2OID || type == INT4OID || type == INT8OID;
}

/*
 * The rank and pos columns of a suffix-array source: the columns of those
 * names, else the only two columns in that order; integer types.
 */
static void
find_sa_columns(TupleDesc desc, const char *what, AttrNumber *rank_att, AttrNumber *pos_att,
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
	if (!is_int_type(*rank_type) || !is_int_type(*pos_type))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the suffix array columns \"%s\" and \"%s\" must be integers, not %s and %s",
						NameStr(TupleDescAttr(desc, *rank_att - 1)->attname),
						NameStr(TupleDescAttr(desc, *pos_att - 1)->attname),
						format_type_be(TupleDescAttr(desc, *rank_att - 1)->atttypid),
						format_type_be(TupleDescAttr(desc, *pos_att - 1)->atttypid))));
}

static void
check_flush(XxlOperator *op, CheckCore *c, uint64 *rank, uint64 *pos, int *fill)
{
	if (*fill > 0 && xxl_sa_check_put_ranked(c->checker, rank, pos, *fill) != XXL_OK)
		xxl_raise_error(xxl_sa_check_error(c->checker), op->name);
	*fill = 0;
}

static bool
suffix_array_check(const char *source, bytea *data, const char *sa_source)
{
	XxlOperator *op = xxl_operator_begin("suffix_array_check");
	xxl_sa_config cfg = text_config(op, XXL_SA_POSITIONS);
	CheckCore  *c = MemoryContextAllocZero(op->cxt, sizeof(CheckCore));
	xxl_error	err;
	CorpusSink	sink;
	XxlInput   *in;
	AttrNumber	rank_att,
				pos_att;
	Oid			rank_type,
				pos_type;
	uint64		rank[CHECK_BATCH],
				pos[CHECK_BATCH];
	int			fill = 0;
	bool		ok;

	xxl_error_clear(&err);
	if (data != NULL)
		cfg.size_hint = VARSIZE_ANY_EXHDR(data);
	cfg.report_base = 1;		/* reasons in SQL's 1-based positions */
	c->checker = xxl_sa_check_create(&cfg, &err);
	if (c->checker == NULL)
		xxl_raise_error(&err, op->name);
	xxl_operator_attach(op, c, check_core_destroy, check_core_collect);

	/* the text */
	memset(&sink, 0, sizeof(sink));
	sink.put = sink_check_put;
	sink.error = sink_check_error;
	sink.core = c->checker;
	sink.what = op->name;
	if (source != NULL)
	{
		AttrNumber	attno;

		in = open_corpus(source, &attno);
		op->rows_in = feed_corpus(in, attno, &sink);
	}
	else
		sink_put(&sink, VARDATA_ANY(data), VARSIZE_ANY_EXHDR(data));

	/* the suffix array, in any order: the ranks come with it */
	in = xxl_input_open(sa_source);
	find_sa_columns(xxl_input_desc(in), xxl_input_describe(in), &rank_att, &pos_att,
					&rank_type, &pos_type);
	for (;;)
	{
		TupleTableSlot *slot;
		Datum		r,
					p;
		bool		rnull,
					pnull;
		int64		rv,
					pv;

		if ((xxl_input_rows(in) & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
		slot = xxl_input_next(in);
		if (slot == NULL)
			break;
		r = slot_getattr(slot, rank_att, &rnull);
		p = slot_getattr(slot, pos_att, &pnull);
		if (rnull || pnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("row " UINT64_FORMAT " of the suffix array has a null %s",
							xxl_input_rows(in), rnull ? "rank" : "pos")));
		rv = int_value(r, rank_type);
		pv = int_value(p, pos_type);
		if (rv < 1 || pv < 1)
		{
			/* no suffix array has such an entry: the verdict is in */
			snprintf(c->why, sizeof(c->why), "row " UINT64_FORMAT " has %s " INT64_FORMAT
					 ", below 1", xxl_input_rows(in), rv < 1 ? "rank" : "pos",
					 rv < 1 ? rv : pv);
			c->ran = true;
			break;
		}
		rank[fill] = (uint64) rv;
		pos[fill] = (uint64) (pv - 1);
		if (++fill == CHECK_BATCH)
			check_flush(op, c, rank, pos, &fill);
	}
	if (!c->ran)
		check_flush(op, c, rank, pos, &fill);
	xxl_input_close(in);

	xxl_operator_phase(op, XXL_PHASE_MERGE);
	if (!c->ran &&
		xxl_sa_check_run(c->checker, &c->ok, c->why, sizeof(c->why)) != XXL_OK)
		xxl_raise_error(xxl_sa_check_error(c->checker), op->name);
	c->ran = true;
	ok = c->ok;
	op->rows_out = 1;
	xxl_operator_end(op);
	return ok;
}

/* xxl.suffix_array_check(corpus text, sa text) RETURNS boolean */
Datum
xxl_suffix_array_check_corpus(PG_FUNCTION_ARGS)
{
	char	   *source = text_arg(fcinfo, 0, "corpus");
	char	   *sa = text_arg(fcinfo, 1, "sa");

	PG_RETURN_BOOL(suffix_array_check(source, NULL, sa));
}

/* xxl.suffix_array_check(data bytea, sa text) RETURNS boolean */
Datum
xxl_suffix_array_check_bytea(PG_FUNCTION_ARGS)
{
	char	   *sa = text_arg(fcinfo, 1, "sa");

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("data must not be null")));
	PG_RETURN_BOOL(suffix_array_check(NULL, PG_GETARG_BYTEA_PP(0), sa));
}

/* locate ----------------------------------------------------------------------- */

/*
 * Random access to a stored suffix array by rank.  A table that
 * xxl.suffix_array_into made (or any heap filled with fixed-width rows in
 * rank order and never changed) holds rank k at a computable place: block
 * (k-1) / m, line k - 1 - block * m + 1, m being the rows on block 0.  Each
 * such fetch is checked (visible, rank = k); the first miss switches to a
 * btree index whose first column is rank, for this and every later lookup.
 * No index then is an error with a hint to create one.
 */
typedef struct SaTable
{
	Relation	rel;
	char	   *name;
	Snapshot	snapshot;
	TupleTableSlot *slot;
	AttrNumber	rank_att,
				pos_att;
	Oid			rank_type,
				pos_type;
	bool		layout;			/* still trusting the computed places */
	BlockNumber nblocks;
	uint64		per_page;
	/* index */
	Oid			index_oid;
	Relation	index;
	IndexScanDesc scan;
	bool		scan_live;		/* a range scan is positioned */
	/* statistics */
	uint64		layout_fetches;
	uint64		index_lookups;
} SaTable;

static Oid
find_rank_index(Relation rel, AttrNumber rank_att)
{
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	Oid			found = InvalidOid;

	foreach(lc, indexes)
	{
		Relation	idx = index_open(lfirst_oid(lc), AccessShareLock);
		Form_pg_index ix = idx->rd_index;

		if (!OidIsValid(found) && ix->indisvalid && ix->indisready &&
			idx->rd_rel->relam == BTREE_AM_OID && ix->indnkeyatts >= 1 &&
			ix->indkey.values[0] == rank_att &&
			heap_attisnull(idx->rd_indextuple, Anum_pg_index_indpred, NULL) &&
			heap_attisnull(idx->rd_indextuple, Anum_pg_index_indexprs, NULL) &&
			idx->rd_indoption[0] == 0)
			found = RelationGetRelid(idx);
		index_close(idx, AccessShareLock);
	}
	list_free(indexes);
	return found;
}

static void
sa_table_open(SaTable *t, const char *name)
{
	RangeVar   *rv = xxl_source_name(name);
	Oid			relid;
	Relation	rel;
	char		relkind;
	AclResult	acl;

	if (rv == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("the suffix array for xxl.locate must be a table name, not \"%s\"", name),
				 errhint("Store the suffix array with xxl.suffix_array_into.")));
	relid = RangeVarGetRelidExtended(rv, AccessShareLock, 0, NULL, NULL);
	rel = table_open(relid, NoLock);
	relkind = rel->rd_rel->relkind;

	memset(t, 0, sizeof(*t));
	t->rel = rel;
	t->name = pstrdup(RelationGetRelationName(rel));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("the suffix array \"%s\" must be a table", t->name),
				 errhint("xxl.locate reads the suffix array by rank: pass a table such as xxl.suffix_array_into makes.")));
	if (rel->rd_rel->relhassubclass)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("the suffix array \"%s\" must be a table without inheritance children",
						t->name)));
	find_sa_columns(RelationGetDescr(rel), t->name, &t->rank_att, &t->pos_att,
					&t->rank_type, &t->pos_type);

	/* the table, or at least the two columns, must be readable */
	acl = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);
	if (acl != ACLCHECK_OK &&
		(pg_attribute_aclcheck(relid, t->rank_att, GetUserId(), ACL_SELECT) != ACLCHECK_OK ||
		 pg_attribute_aclcheck(relid, t->pos_att, GetUserId(), ACL_SELECT) != ACLCHECK_OK))
		aclcheck_error(acl, get_relkind_objtype(relkind), t->name);
	if (check_enable_rls(relid, InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("xxl.locate cannot read \"%s\": row-level security is in force", t->name)));

	t->snapshot = RegisterSnapshot(GetActiveSnapshot());
	t->slot = table_slot_create(rel, NULL);
	t->nblocks = RelationGetNumberOfBlocks(rel);
	t->layout = rel->rd_rel->relam == HEAP_TABLE_AM_OID && t->nblocks > 0;
	if (t->layout)
	{
		Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, 0, RBM_NORMAL, NULL);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		t->per_page = PageGetMaxOffsetNumber(BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
		t->layout = t->per_page > 0;
	}
	t->index_oid = find_rank_index(rel, t->rank_att);
}

/* Rank k's row at its computed place: true with *pos if it is there. */
static bool
layout_fetch(SaTable *t, uint64 k, int64 *pos)
{
	ItemPointerData tid;
	uint64		block = (k - 1) / t->per_page;
	bool		isnull;
	Datum		d;

	if (block >= t->nblocks)
		return false;
	ItemPointerSet(&tid, (BlockNumber) block, (OffsetNumber) ((k - 1) % t->per_page + 1));
	t->layout_fetches++;
	if (!table_tuple_fetch_row_version(t->rel, &tid, t->snapshot, t->slot))
		return false;
	d = slot_getattr(t->slot, t->rank_att, &isnull);
	if (isnull || int_value(d, t->rank_type) != (int64) k)
		return false;
	d = slot_getattr(t->slot, t->pos_att, &isnull);
	if (isnull)
		return false;
	*pos = int_value(d, t->pos_type);
	return true;
}

/* Position an index scan at the first rank >= k. */
static void
index_start(SaTable *t, uint64 k)
{
	ScanKeyData key;
	RegProcedure ge;
	Datum		arg;

	if (!OidIsValid(t->index_oid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the suffix array \"%s\" is not stored in rank order and has no index on rank",
						t->name),
				 errhint("Create one: CREATE INDEX ON %s (rank);",
						 quote_identifier(t->name))));
	if (t->index == NULL)
	{
		t->index = index_open(t->index_oid, AccessShareLock);
		t->scan = index_beginscan(t->rel, t->index, t->snapshot, 1, 0);
	}
	switch (t->rank_type)
	{
		case INT2OID:
			ge = F_INT2GE;
			arg = Int16GetDatum((int16) Min(k, PG_INT16_MAX));
			break;
		case INT4OID:
			ge = F_INT4GE;
			arg = Int32GetDatum((int32) Min(k, PG_INT32_MAX));
			break;
		default:
			ge = F_INT8GE;
			arg = Int64GetDatum((int64) k);
			break;
	}
	ScanKeyInit(&key, 1, BTGreaterEqualStrategyNumber, ge, arg);
	index_rescan(t->scan, &key, 1, NULL, 0);
	t->index_lookups++;
	t->scan_live = true;
}

/* The next row of the index scan: its rank and pos; false at the end. */
static bool
index_next(SaTable *t, int64 *rank, int64 *pos)
{
	bool		rnull,
				pnull;
	Datum		r,
				p;

	if (!index_getnext_slot(t->scan, ForwardScanDirection, t->slot))
	{
		t->scan_live = false;
		return false;
	}
	r = slot_getattr(t->slot, t->rank_att, &rnull);
	p = slot_getattr(t->slot, t->pos_att, &pnull);
	if (rnull || pnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the suffix array \"%s\" has a null rank or pos", t->name)));
	*rank = int_value(r, t->rank_type);
	*pos = int_value(p, t->pos_type);
	return true;
}

static void missing_rank(SaTable *t, uint64 k) pg_attribute_noreturn();

static void
missing_rank(SaTable *t, uint64 k)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("rank " UINT64_FORMAT " is missing from the suffix array \"%s\"", k, t->name),
			 errhint("Is it the suffix array of this corpus?  xxl.suffix_array_check tells.")));
}

/* The 1-based position of the suffix of rank k. */
static int64
sa_lookup(SaTable *t, uint64 k)
{
	int64		pos,
				rank;

	if (t->nblocks == 0)
		missing_rank(t, k);
	if (t->layout)
	{
		if (layout_fetch(t, k, &pos))
			return pos;
		t->layout = false;
	}
	index_start(t, k);
	if (!index_next(t, &rank, &pos) || rank != (int64) k)
		missing_rank(t, k);
	return pos;
}

static void
sa_table_close(SaTable *t)
{
	if (t->scan)
		index_endscan(t->scan);
	if (t->index)
		index_close(t->index, AccessShareLock);
	ExecDropSingleTupleTableSlot(t->slot);
	UnregisterSnapshot(t->snapshot);
	table_close(t->rel, NoLock);
}

typedef struct LocateCore
{
	xxl_text_store *store;
	SaTable    *sa;
	uint64		pattern_len;
	uint64		probes;
	uint64		occurrences;
} LocateCore;

static void
locate_core_destroy(void *core)
{
	xxl_text_store_destroy(((LocateCore *) core)->store);
}

static void
locate_core_collect(void *core, XxlStats *st)
{
	LocateCore *c = (LocateCore *) core;
	xxl_text_store_stats s;

	xxl_text_store_stats_get(c->store, &s);
	st->record_bytes = s.n;
	st->memory_peak = s.memory_peak;
	st->memory_limit = s.memory_limit;
	spread_io(st, s.bytes_read, s.bytes_written);
	xxl_stats_detail(st, "n", UINT64_FORMAT, s.n);
	xxl_stats_detail(st, "pattern_length", UINT64_FORMAT, c->pattern_len);
	xxl_stats_detail(st, "occurrences", UINT64_FORMAT, c->occurrences);
	xxl_stats_detail(st, "probes", UINT64_FORMAT, c->probes);
	xxl_stats_detail(st, "text_on_disk", "%s", s.on_disk ? "true" : "false");
	xxl_stats_detail(st, "text_block_size", "%zu", s.block_size);
	xxl_stats_detail(st, "text_block_reads", UINT64_FORMAT, s.block_reads);
	if (c->sa)
	{
		xxl_stats_detail(st, "sa_access", "\"%s\"", c->sa->index_lookups ? "index" : "layout");
		xxl_stats_detail(st, "sa_layout_fetches", UINT64_FORMAT, c->sa->layout_fetches);
		xxl_stats_detail(st, "sa_index_lookups", UINT64_FORMAT, c->sa->index_lookups);
	}
}

/* Compare the suffix of rank k with the pattern (see xxl_text_store_compare). */
static int
probe(XxlOperator *op, LocateCore *c, uint64 k, const unsigned char *p, size_t len)
{
	int64		pos = sa_lookup(c->sa, k);
	uint64		n = xxl_text_store_size(c->store);
	int			cmp;

	if (pos < 1 || (uint64) pos > n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rank " UINT64_FORMAT " of the suffix array \"%s\" holds position " INT64_FORMAT
						", outside the corpus of " UINT64_FORMAT " bytes", k, c->sa->name, pos, n),
				 errhint("Is it the suffix array of this corpus?  xxl.suffix_array_check tells.")));
	c->probes++;
	if (xxl_text_store_compare(c->store, (uint64) pos - 1, p, len, &cmp) != XXL_OK)
		xxl_raise_error(xxl_text_store_error(c->store), op->name);
	CHECK_FOR_INTERRUPTS();
	return cmp;
}

/* xxl.locate(corpus text, sa text, pattern bytea) RETURNS SETOF bigint */
Datum
xxl_locate(PG_FUNCTION_ARGS)
{
	char	   *source = text_arg(fcinfo, 0, "corpus");
	char	   *sa_name = text_arg(fcinfo, 1, "sa");
	bytea	   *pattern;
	const unsigned char *p;
	size_t		len;
	TupleDesc	desc;
	XxlOutput  *out;
	XxlOperator *op;
	LocateCore *c;
	xxl_sa_config cfg;
	xxl_error	err;
	CorpusSink	sink;
	XxlInput   *in;
	AttrNumber	attno;
	SaTable    *sa;
	uint64		n,
				lo,
				hi,
				first;

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("pattern must not be null")));
	pattern = PG_GETARG_BYTEA_PP(2);
	p = (const unsigned char *) VARDATA_ANY(pattern);
	len = VARSIZE_ANY_EXHDR(pattern);

	desc = CreateTemplateTupleDesc(1);
	TupleDescInitEntry(desc, 1, "locate", INT8OID, -1, 0);
	out = xxl_output_to_caller(fcinfo, desc);

	op = xxl_operator_begin("locate");
	cfg = text_config(op, XXL_SA_POSITIONS);
	c = MemoryContextAllocZero(op->cxt, sizeof(LocateCore));
	c->pattern_len = len;
	xxl_error_clear(&err);
	c->store = xxl_text_store_create(&cfg, &err);
	if (c->store == NULL)
		xxl_raise_error(&err, op->name);
	xxl_operator_attach(op, c, locate_core_destroy, locate_core_collect);

	/* the corpus, for random reads of pattern-sized windows */
	memset(&sink, 0, sizeof(sink));
	sink.put = sink_store_put;
	sink.error = sink_store_error;
	sink.core = c->store;
	sink.what = op->name;
	in = open_corpus(source, &attno);
	op->rows_in = feed_corpus(in, attno, &sink);
	if (xxl_text_store_finish(c->store) != XXL_OK)
		xxl_raise_error(xxl_text_store_error(c->store), op->name);
	n = xxl_text_store_size(c->store);

	/* binary search for the ranks [first, lo) whose suffixes start with p */
	xxl_operator_phase(op, XXL_PHASE_MERGE);

	/*
	 * In the operator's context, not on this stack: the statistics
	 * callback reads it when an error (a missing rank, a cancel) unwinds
	 * this frame.
	 */
	sa = MemoryContextAllocZero(op->cxt, sizeof(SaTable));
	sa_table_open(sa, sa_name);
	c->sa = sa;
	lo = 1;
	hi = n + 1;
	while (lo < hi)
	{
		uint64		mid = lo + (hi - lo) / 2;

		if (probe(op, c, mid, p, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	hi = n + 1;
	while (lo < hi)
	{
		uint64		mid = lo + (hi - lo) / 2;

		if (probe(op, c, mid, p, len) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}

	/* the positions of ranks first .. lo-1, in suffix order */
	xxl_operator_phase(op, XXL_PHASE_OUTPUT);
	sa->scan_live = false;		/* an index scan of the probes is elsewhere */
	for (uint64 k = first; k < lo; k++)
	{
		Datum		value;
		bool		isnull = false;
		int64		pos = 0,
					rank;

		if (sa->layout && layout_fetch(sa, k, &pos))
			;
		else
		{
			sa->layout = false;
			if (!sa->scan_live)
				index_start(sa, k);
			if (!index_next(sa, &rank, &pos) || rank != (int64) k)
				missing_rank(sa, k);
		}
		value = Int64GetDatum(pos);
		xxl_output_put_values(out, &value, &isnull);
		c->occurrences++;
		if ((c->occurrences & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	op->rows_out = xxl_output_finish(out);
	sa_table_close(sa);
	xxl_operator_end(op);		/* collects c's statistics, which look at sa */
	return (Datum) 0;
}
