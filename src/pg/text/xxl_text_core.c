/*
 * xxl_text_core.c — the text engines as an operator's engine object (see
 * text.h): their configuration under the operator's budget, the
 * corpus in, the build, the suffix array drained into the LCP operator when
 * LCP values or repeats are wanted, the rows out, and the statistics for
 * last_stats().
 */
#include "postgres.h"

#include "miscadmin.h"

#include "pg/runtime/runtime.h"
#include "pg/text/text.h"

/*
 * The document map's share of the budget: an eighth, and below 2MB a
 * sixteenth (64 kB at 1MB), which leaves a long text's suffix sorter
 * beside the LCP operator's held text and spool what it needs (the map
 * pages past its share).
 */
#define DOCS_DIVISOR 8
#define DOCS_SMALL_DIVISOR 16
#define DOCS_SMALL_BELOW (2 * 1024 * 1024)

static size_t
docs_share(size_t memory)
{
	return memory / (memory < DOCS_SMALL_BELOW ? DOCS_SMALL_DIVISOR : DOCS_DIVISOR);
}

/* The engine's configuration under the operator's settings. */
xxl_sa_config
xxl_text_config(XxlOperator *op, xxl_sa_mode mode)
{
	xxl_sa_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.res = xxl_operator_resources(op);
	cfg.mode = mode;
	cfg.internal_max = xxl_text_force_external ? 1 : 0;
	return cfg;
}

static xxl_lcp_config
lcp_config(XxlOperator *op, size_t memory, const xxl_docs *docs)
{
	xxl_lcp_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.res = xxl_operator_resources(op);
	cfg.res.memory = memory;
	cfg.docs = docs;
	cfg.internal_max = xxl_text_force_external ? 1 : 0;
	return cfg;
}

/* Spread a total over the operator's disks (the engine counts totals only). */
void
xxl_text_spread_io(XxlStats *st, uint64 read, uint64 written)
{
	int			nd = Max(st->ndisks, 1);

	st->io.ndisks = nd;
	for (int i = 0; i < nd; i++)
	{
		st->io.disk[i].bytes_read = read / nd + (i == 0 ? read % nd : 0);
		st->io.disk[i].bytes_written = written / nd + (i == 0 ? written % nd : 0);
	}
}

/* Id and 1-based offset of body position pos in document k. */
static inline void
doc_fill(const xxl_docs *docs, uint64 k, uint64 pos, int64 *id, int64 *offset)
{
	*id = xxl_docs_id(docs, k);
	*offset = (int64) (pos - xxl_docs_start(docs, k)) + 1;
}

void
xxl_text_doc_of(const xxl_docs *docs, uint64 pos, int64 *id, int64 *offset)
{
	doc_fill(docs, xxl_docs_find(docs, pos), pos, id, offset);
}


void
xxl_text_docs_stats(const xxl_docs *docs, XxlStats *st, uint64 *read, uint64 *written)
{
	uint64		r,
				w,
				misses;

	if (docs == NULL)
		return;
	xxl_docs_io(docs, &r, &w, &misses);
	*read += r;
	*written += w;
	st->memory_peak += xxl_docs_memory(docs);
	xxl_stats_detail(st, "documents", UINT64_FORMAT, xxl_docs_count(docs));
	xxl_stats_detail(st, "documents_paged", "%s", xxl_docs_paged(docs) ? "true" : "false");
	if (xxl_docs_paged(docs))
		xxl_stats_detail(st, "documents_page_reads", UINT64_FORMAT, misses);
}

/* The budget that leaves m after the document map's share, for documents. */
static size_t
with_docs_share(size_t m, bool ids)
{
	size_t		small = m * DOCS_SMALL_DIVISOR / (DOCS_SMALL_DIVISOR - 1);

	if (!ids)
		return m;
	return small < DOCS_SMALL_BELOW ? small : m * DOCS_DIVISOR / (DOCS_DIVISOR - 1);
}

size_t
xxl_text_docs_open(XxlOperator *op, xxl_docs **docs, size_t memory)
{
	xxl_error	err;
	xxl_resources res = xxl_operator_resources(op);

	xxl_error_clear(&err);
	*docs = xxl_docs_create_paging(docs_share(memory), &res, &err);
	if (*docs == NULL)
		xxl_raise_error(&err, op->name);
	return memory - docs_share(memory);
}

void
xxl_text_docs_check(XxlOperator *op, const xxl_docs *docs)
{
	if (docs && xxl_docs_failed(docs))
		xxl_raise_error(xxl_docs_error(docs), op->name);
}

/*
 * The suffix sorter's next suffix in rank order over documents, the
 * separators' left out: from the resolver where the map is paged, else
 * looked up in the map.  prev is the body's preceding byte, or -1.
 */
static int
next_suffix(XxlTextCore *c, xxl_docs_suffix *s)
{
	uint64		q,
				doc;
	int			got;

	if (c->resolver)
	{
		got = xxl_docs_resolver_next(c->resolver, s);
		if (got > 0)
			s->prev = s->prev <= 0 ? -1 : s->prev - 1;
		return got;
	}
	for (;;)
	{
		s->prev = -1;
		got = c->lcp ? xxl_sa_next_prev(c->sa, &q, &s->prev) : xxl_sa_next(c->sa, &q);
		if (got <= 0)
			return got;
		if (xxl_docs_from_separated(c->docs, q, &s->body, &doc))
			break;
	}
	/* the separated alphabet is the body's shifted by one, 0 the separator */
	s->prev = s->prev <= 0 ? -1 : s->prev - 1;
	s->rem = xxl_docs_end(c->docs, doc) - s->body;
	s->offset = s->body - xxl_docs_start(c->docs, doc);
	s->id = xxl_docs_id(c->docs, doc);
	return 1;
}

static void
raise_suffix_error(XxlOperator *op, XxlTextCore *c)
{
	if (c->lcp && c->sa == NULL && c->resolver == NULL)
		xxl_raise_error(xxl_lcp_error(c->lcp), op->name);
	if (c->resolver)
		xxl_raise_error(xxl_docs_resolver_error(c->resolver), op->name);
	xxl_raise_error(xxl_sa_error(c->sa), op->name);
}

uint64
xxl_text_emit(XxlOperator *op, XxlTextCore *c, XxlOutput *out, TupleDesc desc, bool doc_cols,
			  bool lcp_col)
{
	XxlInt8Writer w;
	int64		v[XXL_INT8_ROW_MAX];
	bool		nulls[XXL_INT8_ROW_MAX] = {false};
	uint64		pos,
				lcp = 0;
	int64		rank = 0;
	int			got;

	xxl_int8_writer_init(&w, out, desc);
	if (doc_cols && c->docs == NULL)
		nulls[2] = nulls[3] = true;
	for (;;)
	{
		int			k = 2;
		int64		id = 0,
					offset = 0;

		if (c->lcp)
		{
			bool		have_doc;
			uint64		off;

			got = xxl_lcp_next_doc(c->lcp, &pos, &lcp, &have_doc, &off, &id);
			if (got > 0 && have_doc)
				offset = (int64) off + 1;
			else if (got > 0 && c->docs)
				xxl_text_doc_of(c->docs, pos, &id, &offset);
		}
		else if (c->docs)
		{
			xxl_docs_suffix s;

			got = next_suffix(c, &s);
			pos = s.body;
			id = s.id;
			offset = (int64) s.offset + 1;
		}
		else
			got = xxl_sa_next(c->sa, &pos);
		if (got <= 0)
			break;
		v[0] = ++rank;
		v[1] = (int64) pos + 1;
		if (doc_cols)
		{
			v[2] = id;
			v[3] = offset;
			k = 4;
		}
		if (lcp_col)
			v[k] = (int64) lcp;
		xxl_int8_writer_put(&w, v, nulls);
		if ((rank & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (got < 0)
		raise_suffix_error(op, c);
	xxl_text_docs_check(op, c->docs);
	xxl_int8_writer_flush(&w);
	op->rows_out = xxl_output_finish(out);
	xxl_operator_end(op);
	return op->rows_out;
}


/* The text engines as an operator's engine object ---------------------------- */

static void
text_core_destroy(void *core)
{
	XxlTextCore *c = (XxlTextCore *) core;

	xxl_sa_destroy(c->sa);
	c->sa = NULL;
	xxl_lcp_destroy(c->lcp);
	c->lcp = NULL;
	xxl_docs_resolver_destroy(c->resolver);
	c->resolver = NULL;
	xxl_docs_destroy(c->docs);
	c->docs = NULL;
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
lcp_collect(const xxl_lcp_stats *s, XxlStats *st)
{
	StringInfoData answers;

	xxl_stats_detail(st, "lcp_ms", "%.1f", s->lcp_ns / 1e6);
	xxl_stats_detail(st, "lcp_method", "\"%s\"", s->direct ? "memory" : "rounds");
	xxl_stats_detail(st, "lcp_irreducible", UINT64_FORMAT, s->irreducible);
	xxl_stats_detail(st, "lcp_irreducible_sum", UINT64_FORMAT, s->irreducible_sum);
	xxl_stats_detail(st, "lcp_max", UINT64_FORMAT, s->max_lcp);
	xxl_stats_detail(st, "lcp_rounds", "%d", s->rounds);
	initStringInfo(&answers);
	for (int r = 0; r < XXL_LCP_ROUNDS; r++)
		appendStringInfo(&answers, "%s" UINT64_FORMAT, r ? ", " : "[", s->round_resolved[r]);
	appendStringInfoChar(&answers, ']');
	xxl_stats_detail(st, "lcp_round_answers", "%s", answers.data);
	pfree(answers.data);
	xxl_stats_detail(st, "lcp_random_answers", UINT64_FORMAT, s->random_resolved);
	xxl_stats_detail(st, "lcp_text_on_disk", "%s", s->text_on_disk ? "true" : "false");
	xxl_stats_detail(st, "lcp_io_bytes", UINT64_FORMAT, s->bytes_read + s->bytes_written);
	xxl_stats_detail(st, "lcp_memory_peak", UINT64_FORMAT, s->memory_peak);
	if (s->derived_prev)
		xxl_stats_detail(st, "lcp_derived_prev", "true");
	if (s->output_slots > 0)
		xxl_stats_detail(st, "lcp_output_slots", "%d", s->output_slots);
	/* the permutations to text order and back: scatters, charged by phase or not, or sorts */
	xxl_stats_detail(st, "lcp_perms_split", "%d", s->perms_split);
	xxl_stats_detail(st, "lcp_perms_sorted", "%d", s->perms_sorted);
	if (s->repeat_windows > 0 || s->repeat_groups > 0)
	{
		xxl_stats_detail(st, "repeat_groups", UINT64_FORMAT, s->repeat_groups);
		xxl_stats_detail(st, "repeat_windows", UINT64_FORMAT, s->repeat_windows);
		xxl_stats_detail(st, "repeat_ranges", UINT64_FORMAT, s->repeat_ranges);
	}
}

/* The suffix sorter's own details: levels, I/O against the thesis, times. */
static void
sa_collect(const XxlTextCore *c, const xxl_sa_stats *s, XxlStats *st)
{
	uint64		io = s->bytes_read + s->bytes_written;

	/* the top level: induced sorting, external DC3, or in memory (SA-IS) */
	xxl_stats_detail(st, "top_level", "\"%s\"",
					 s->level[0].induced ? "induced" : s->level[0].internal ? "in memory" : "dc3");
	xxl_stats_detail(st, "levels", "%d", s->levels);
	xxl_stats_detail(st, "recursion_depth", "%d", s->recursion_depth);
	xxl_stats_detail(st, "external_levels", "%d", s->external_levels);
	xxl_stats_detail(st, "io_bytes", UINT64_FORMAT, io);
	xxl_stats_detail(st, "io_bytes_per_byte", "%.2f", s->n ? (double) io / s->n : 0.0);
	/* [T] Thm 13: sort(30n) + scan(6n) words of 4 bytes, a sort reading and writing once */
	xxl_stats_detail(st, "thesis_bytes", UINT64_FORMAT, s->thesis_bytes);
	xxl_stats_detail(st, "io_vs_thesis", "%.3f",
					 s->thesis_bytes ? (double) io / s->thesis_bytes : 0.0);
	xxl_stats_detail(st, "sorted_bytes", UINT64_FORMAT, s->sorted_bytes);
	xxl_stats_detail(st, "spool_bytes", UINT64_FORMAT, s->spool_bytes);
	xxl_stats_detail(st, "sorter_block_max", "%zu", s->sorter_block_max);
	xxl_stats_detail(st, "build_ms", "%.1f", s->build_ns / 1e6);
	xxl_stats_detail(st, "merge_slots", "%d", s->merge_slots);
	if (c->mode == XXL_SA_BWT && c->built && c->sa)
		xxl_stats_detail(st, "primary_index", UINT64_FORMAT, xxl_sa_bwt_primary(c->sa));
	/* per level: characters and I/O bytes (0: solved in memory) */
	detail_array(st, "level_n", s->levels, s->level, false);
	detail_array(st, "level_io", s->levels, s->level, true);
}

/*
 * The suffix sorter (live, or its figures kept when it went before the LCP
 * work) and the LCP operator, one after the other; the LCP operator alone
 * for a stored suffix array.
 */
static void
text_core_collect(void *core, XxlStats *st)
{
	XxlTextCore *c = (XxlTextCore *) core;
	bool		have_sa = c->sa != NULL || c->have_sa_stats;
	xxl_sa_stats s;
	xxl_lcp_stats ls;
	uint64		read = 0,
				written = 0;

	if (!have_sa && c->lcp == NULL)
		return;					/* nothing yet */
	if (c->sa)
		xxl_sa_stats_get(c->sa, &s);
	else if (have_sa)
		s = c->sa_stats;
	if (c->lcp)
		xxl_lcp_stats_get(c->lcp, &ls);
	if (have_sa)
	{
		read = s.bytes_read;
		written = s.bytes_written;
		st->record_bytes = s.n;
		st->runs = s.runs;
		st->merge_passes = s.max_merge_passes;
		st->memory_peak = s.memory_peak;
		st->io.wait_read_ns = s.io_wait_ns;	/* reads and writes together */
		st->io.direct = s.io_direct;
		/* one after the other, but the LCP operator's text store all along */
		if (c->lcp)
			st->memory_peak = Max(st->memory_peak + c->lcp_held, ls.memory_peak);
	}
	else
	{
		st->record_bytes = ls.n;
		st->memory_peak = ls.memory_peak;
		st->io.wait_read_ns = ls.io_wait_ns;
		st->io.direct = ls.io_direct;
	}
	if (c->lcp)
	{
		read += ls.bytes_read;
		written += ls.bytes_written;
	}
	st->memory_limit = c->memory;
	xxl_stats_detail(st, "n", UINT64_FORMAT, have_sa ? s.n : ls.n);
	xxl_text_docs_stats(c->docs, st, &read, &written);
	if (c->resolved)
	{
		uint64		rr = c->resolve_read,
					rw = c->resolve_written;
		size_t		rp = c->resolve_peak;

		if (c->resolver)
			xxl_docs_resolver_io(c->resolver, &rr, &rw, &rp);
		read += rr;
		written += rw;
		/* after the sorter, before the LCP work: the larger of its and theirs */
		st->memory_peak = Max(st->memory_peak, rp + xxl_docs_memory(c->docs));
		xxl_stats_detail(st, "documents_resolved", "true");
		xxl_stats_detail(st, "documents_resolve_io_bytes", UINT64_FORMAT, rr + rw);
	}
	xxl_text_spread_io(st, read, written);
	if (have_sa)
		sa_collect(c, &s, st);
	if (c->lcp)
		lcp_collect(&ls, st);
}

/* The suffix sorter's figures kept, its spill files and memory given back. */
static void
sa_retire(XxlTextCore *c)
{
	xxl_sa_stats_get(c->sa, &c->sa_stats);
	c->have_sa_stats = true;
	xxl_sa_destroy(c->sa);
	c->sa = NULL;
}

/* The resolver's figures kept, its spill files and memory given back. */
static void
resolver_retire(XxlTextCore *c)
{
	xxl_docs_resolver_io(c->resolver, &c->resolve_read, &c->resolve_written, &c->resolve_peak);
	xxl_docs_resolver_destroy(c->resolver);
	c->resolver = NULL;
}

/*
 * A paged map: the suffixes' positions to the resolver while the sorter
 * hands them out, then, the sorter gone, their documents resolved with its
 * budget (two permutations instead of a page read a suffix).  A map that
 * leaves too little spare for the resolver's spool is looked up instead.
 */
static void
resolve_documents(XxlOperator *op, XxlTextCore *c)
{
	xxl_resources run = xxl_operator_resources(op);
	xxl_error	err;
	uint64		q,
				k = 0;
	int			prev = -1,
				got;

	if (c->docs == NULL || !xxl_docs_paged(c->docs) ||
		xxl_docs_spare(c->docs) < xxl_docs_resolver_min_spool())
		return;
	xxl_error_clear(&err);
	run.memory = c->sa_memory;
	c->resolver = xxl_docs_resolver_create(c->docs, &run, xxl_docs_spare(c->docs), &err);
	if (c->resolver == NULL)
		xxl_raise_error(&err, op->name);
	c->resolved = true;
	while ((got = c->lcp ? xxl_sa_next_prev(c->sa, &q, &prev) : xxl_sa_next(c->sa, &q)) > 0)
	{
		if (xxl_docs_resolver_put(c->resolver, q, prev) != XXL_OK)
			xxl_raise_error(xxl_docs_resolver_error(c->resolver), op->name);
		if ((++k & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (got < 0)
		xxl_raise_error(xxl_sa_error(c->sa), op->name);
	sa_retire(c);
	if (xxl_docs_resolver_run(c->resolver) != XXL_OK)
		xxl_raise_error(xxl_docs_resolver_error(c->resolver), op->name);
	xxl_text_docs_check(op, c->docs);
}

/* The builder's suffixes, as body positions with their preceding bytes, into the LCP operator. */
static void
drain_into_lcp(XxlOperator *op, XxlTextCore *c)
{
	uint64		pos,
				k = 0;
	int			prev,
				got;

	if (c->docs)
	{
		xxl_docs_suffix s;

		while ((got = next_suffix(c, &s)) > 0)
		{
			if (xxl_lcp_put_sa_rem(c->lcp, s.body, s.prev, s.rem) != XXL_OK)
				xxl_raise_error(xxl_lcp_error(c->lcp), op->name);
			if ((++k & 0xffff) == 0)
				CHECK_FOR_INTERRUPTS();
		}
	}
	else
		while ((got = xxl_sa_next_prev(c->sa, &pos, &prev)) > 0)
		{
			if (xxl_lcp_put_sa(c->lcp, pos, prev) != XXL_OK)
				xxl_raise_error(xxl_lcp_error(c->lcp), op->name);
			if ((++k & 0xffff) == 0)
				CHECK_FOR_INTERRUPTS();
		}
	if (got < 0)
		raise_suffix_error(op, c);
	xxl_text_docs_check(op, c->docs);
	/* the builder's (or the resolver's) spill files and memory go before the LCP work */
	if (c->resolver)
		resolver_retire(c);
	else
		sa_retire(c);
	if (xxl_lcp_run(c->lcp) != XXL_OK)
		xxl_raise_error(xxl_lcp_error(c->lcp), op->name);
	xxl_text_docs_check(op, c->docs);
}

XxlTextCore *
xxl_text_core_open(XxlOperator *op, xxl_sa_mode mode, const char *source, bytea *data,
				   const XxlTextWants *wants)
{
	xxl_sa_config cfg = xxl_text_config(op, mode);
	xxl_error	err;
	XxlTextCore *c = MemoryContextAllocZero(op->cxt, sizeof(XxlTextCore));
	size_t		memory = cfg.res.memory;
	bool		ids = false;

	xxl_error_clear(&err);
	c->mode = mode;
	c->memory = memory;
	if (wants)
		c->wants = *wants;
	xxl_operator_attach(op, c, text_core_destroy, text_core_collect);
	if (source != NULL)
	{
		xxl_corpus_open(source, &c->corpus);
		ids = c->corpus.id_att != 0;
		if (ids && mode == XXL_SA_BWT)
			xxl_corpus_require_single(&c->corpus, "xxl.bwt_into");
	}
	if (ids)
		memory = xxl_text_docs_open(op, &c->docs, memory);
	if (c->wants.stored)
	{
		/* the LCP operator alone, with all of it: the caller feeds a stored suffix array */
		xxl_lcp_config lcfg = lcp_config(op, memory, c->docs);

		c->lcp = xxl_lcp_create(&lcfg, &err);
		if (c->lcp == NULL)
			xxl_raise_error(&err, op->name);
		c->source = source;
		return c;
	}
	if (c->wants.lcp || c->wants.min_length > 0)
	{
		xxl_lcp_config lcfg;

		/*
		 * The LCP operator has all of it, but while the suffix sorter works
		 * it holds only its text and the spool of the suffixes, which leaves
		 * the sorter the rest.
		 */
		size_t		held = xxl_lcp_defer_memory(memory);

		if (memory < held + xxl_sa_min_memory() || memory < held + xxl_lcp_min_memory())
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: xxl.memory of %zu bytes is too small for a suffix array with LCP values",
							op->name, c->memory),
					 errhint("LCP values and repeats need xxl.memory of at least %zu kB%s.",
							 with_docs_share(xxl_lcp_defer_memory(xxl_lcp_min_memory()) +
											 Max(xxl_sa_min_memory(), xxl_lcp_min_memory()),
											 ids) / 1024 + 1,
							 ids ? " for a corpus of documents" : "")));
		lcfg = lcp_config(op, memory, c->docs);
		lcfg.defer = true;
		lcfg.min_length = c->wants.min_length;
		lcfg.min_count = c->wants.min_count;
		c->lcp = xxl_lcp_create(&lcfg, &err);
		if (c->lcp == NULL)
			xxl_raise_error(&err, op->name);
		cfg.with_prev = true;
		c->lcp_held = held;
		memory -= held;
	}
	cfg.res.memory = memory;
	c->sa_memory = memory;
	cfg.separated = ids;
	c->sa = xxl_sa_create(&cfg, &err);
	if (c->sa == NULL)
		xxl_raise_error(&err, op->name);
	c->source = source;
	c->data = data;
	return c;
}

void
xxl_text_core_build(XxlOperator *op, XxlTextCore *c)
{
	XxlCorpusSink sink;
	bool		ids = c->docs != NULL;

	xxl_corpus_sink_init(&sink, op);
	if (c->sa)
		xxl_corpus_sink_add_sa(&sink, c->sa, ids);
	if (c->lcp)
		xxl_corpus_sink_add_lcp(&sink, c->lcp);
	sink.docs = c->docs;
	if (c->source != NULL)
		op->rows_in = xxl_corpus_feed(&c->corpus, &sink);
	else
	{
		xxl_corpus_put(&sink, VARDATA_ANY(c->data), VARSIZE_ANY_EXHDR(c->data));
		op->rows_in = 1;
	}
	if (c->sa == NULL)
		return;					/* a stored suffix array comes from the caller */
	xxl_operator_phase(op, XXL_PHASE_MERGE);
	if (xxl_sa_build(c->sa) != XXL_OK)
		xxl_raise_error(xxl_sa_error(c->sa), op->name);
	c->built = true;
	resolve_documents(op, c);
	if (c->lcp)
		drain_into_lcp(op, c);
	xxl_operator_phase(op, XXL_PHASE_OUTPUT);
}

XxlTextCore *
xxl_text_core_run(XxlOperator *op, xxl_sa_mode mode, const char *source, bytea *data,
				  const XxlTextWants *wants)
{
	XxlTextCore *c = xxl_text_core_open(op, mode, source, data, wants);

	xxl_text_core_build(op, c);
	return c;
}
