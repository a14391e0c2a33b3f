/*
 * xxl_locate_sql.c — xxl.locate: every position of a pattern in a corpus,
 * by binary search over its stored suffix array.  See docs/text.md.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "pg/runtime/runtime.h"
#include "pg/text/text.h"

PG_FUNCTION_INFO_V1(xxl_locate);

typedef struct LocateCore
{
	xxl_text_store *store;
	xxl_docs   *docs;			/* a corpus of documents */
	XxlRankTable    *sa;
	uint64		pattern_len;
	uint64		probes;
	uint64		occurrences;
} LocateCore;

static void
locate_core_destroy(void *core)
{
	xxl_text_store_destroy(((LocateCore *) core)->store);
	xxl_docs_destroy(((LocateCore *) core)->docs);
}

static void
locate_core_collect(void *core, XxlStats *st)
{
	LocateCore *c = (LocateCore *) core;
	xxl_text_store_stats s;
	uint64		read,
				written;

	if (c->store == NULL)
		return;					/* failed before the text store existed */
	xxl_text_store_stats_get(c->store, &s);
	st->record_bytes = s.n;
	st->memory_peak = s.memory_peak;
	st->memory_limit = s.memory_limit;
	read = s.bytes_read;
	written = s.bytes_written;
	xxl_stats_detail(st, "n", UINT64_FORMAT, s.n);
	xxl_text_docs_stats(c->docs, st, &read, &written);
	xxl_text_spread_io(st, read, written);
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

/*
 * Compare the suffix of rank k with the pattern (see xxl_text_store_compare).
 * In a corpus of documents a suffix ends with its document, where the
 * separator that is smaller than every byte stands in the suffix order.
 */
/* Position pos, which rank k holds, must lie in the corpus of n bytes. */
static void
check_pos(const XxlRankTable *sa, uint64 k, int64 pos, uint64 n)
{
	if (pos < 1 || (uint64) pos > n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rank " UINT64_FORMAT " of the suffix array \"%s\" holds position " INT64_FORMAT
						", outside the corpus of " UINT64_FORMAT " bytes", k, sa->name, pos, n),
				 errhint("Is it the suffix array of this corpus?  xxl.suffix_array_check tells.")));
}

static int
probe(XxlOperator *op, LocateCore *c, uint64 k, const unsigned char *p, size_t len)
{
	int64		pos = xxl_rank_table_lookup(c->sa, k);
	int			cmp;

	check_pos(c->sa, k, pos, xxl_text_store_size(c->store));
	c->probes++;
	if (c->docs)
	{
		uint64		at = (uint64) pos - 1;
		uint64		rem = xxl_docs_end(c->docs, xxl_docs_find(c->docs, at)) - at;

		xxl_text_docs_check(op, c->docs);

		if (rem < len)
		{
			if (xxl_text_store_compare(c->store, at, p, rem, &cmp) != XXL_OK)
				xxl_raise_error(xxl_text_store_error(c->store), op->name);
			CHECK_FOR_INTERRUPTS();
			return cmp != 0 ? cmp : -1;
		}
	}
	if (xxl_text_store_compare(c->store, (uint64) pos - 1, p, len, &cmp) != XXL_OK)
		xxl_raise_error(xxl_text_store_error(c->store), op->name);
	CHECK_FOR_INTERRUPTS();
	return cmp;
}

/*
 * xxl.locate(corpus text, sa text, pattern bytea)
 *   RETURNS TABLE(pos bigint, doc_id bigint, doc_offset bigint)
 */
Datum
xxl_locate(PG_FUNCTION_ARGS)
{
	char	   *source = xxl_arg_text(fcinfo, 0, NULL, "corpus");
	char	   *sa_name = xxl_arg_text(fcinfo, 1, NULL, "sa");
	bytea	   *pattern;
	const unsigned char *p;
	size_t		len;
	TupleDesc	desc;
	XxlOutput  *out;
	XxlOperator *op;
	LocateCore *c;
	xxl_sa_config cfg;
	xxl_error	err;
	XxlCorpusSink	sink;
	XxlCorpus	corpus;
	XxlRankTable    *sa;
	uint64		n,
				lo,
				hi,
				first;
	XxlInt8Writer w;
	bool		nulls[3] = {false, false, false};

	xxl_arg_not_null(fcinfo, 2, NULL, "pattern");
	pattern = PG_GETARG_BYTEA_PP(2);
	p = (const unsigned char *) VARDATA_ANY(pattern);
	len = VARSIZE_ANY_EXHDR(pattern);

	desc = xxl_output_caller_desc(fcinfo);
	out = xxl_output_to_caller(fcinfo, desc);

	op = xxl_operator_begin("locate");
	cfg = xxl_text_config(op, XXL_SA_POSITIONS);
	c = MemoryContextAllocZero(op->cxt, sizeof(LocateCore));
	c->pattern_len = len;
	xxl_error_clear(&err);
	xxl_operator_attach(op, c, locate_core_destroy, locate_core_collect);
	xxl_corpus_open(source, &corpus);
	if (corpus.id_att != 0)
		cfg.res.memory = xxl_text_docs_open(op, &c->docs, cfg.res.memory);
	c->store = xxl_text_store_create(&cfg, &err);
	if (c->store == NULL)
		xxl_raise_error(&err, op->name);

	/* the corpus, for random reads of pattern-sized windows */
	xxl_corpus_sink_init(&sink, op);
	xxl_corpus_sink_add_store(&sink, c->store);
	sink.docs = c->docs;
	op->rows_in = xxl_corpus_feed(&corpus, &sink);
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
	sa = MemoryContextAllocZero(op->cxt, sizeof(XxlRankTable));
	xxl_rank_table_open(sa, sa_name);
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
	xxl_int8_writer_init(&w, out, desc);
	if (c->docs == NULL)
		nulls[1] = nulls[2] = true;
	for (uint64 k = first; k < lo; k++)
	{
		int64		v[3];

		v[0] = xxl_rank_table_walk(sa, k, k == first);
		if (c->docs)
		{
			check_pos(sa, k, v[0], n);
			xxl_text_doc_of(c->docs, (uint64) v[0] - 1, &v[1], &v[2]);
		}
		xxl_int8_writer_put(&w, v, nulls);
		c->occurrences++;
		if ((c->occurrences & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	xxl_text_docs_check(op, c->docs);
	xxl_int8_writer_flush(&w);
	op->rows_out = xxl_output_finish(out);
	xxl_rank_table_close(sa);
	xxl_operator_end(op);		/* collects c's statistics, which look at sa */
	return (Datum) 0;
}

