/*
 * test_lcp.c — the LCP operator (xxl_lcp.h), documents (xxl_docs.h) and the
 * separated suffix sorter (xxl_sa_end_doc) against independent oracles:
 * libdivsufsort's suffix array with Kasai's LCP for single texts, a naive
 * sort of the separated text with direct comparisons for corpora of
 * documents, and a naive quadratic repeat finder.  Every case runs at a
 * roomy budget (in-memory sorter, direct comparisons) and at the smallest
 * budgets with external DC3 and the external comparison rounds forced.
 */
#include "xxl_test.h"

#include <divsufsort64.h>

#include "core/text/xxl_docs.h"
#include "core/text/xxl_lcp.h"
#include "core/text/xxl_suffix.h"
#include "core/text/xxl_text_store.h"
#include "core/xxl_ahead.h"

#define KB (1024)
#define MB (1024 * 1024)

typedef enum run_mode
{
	RUN_ROOMY,
	RUN_TINY,
	RUN_DEFER					/* deferring at 16 MB: the text is loaded at run */
} run_mode;

static const char *const mode_names[] = {"roomy", "tiny", "defer"};

static xxl_resources
resources(size_t memory, const char *prefix)
{
	xxl_resources r;

	memset(&r, 0, sizeof(r));
	r.memory = memory;
	r.threads = 2;
	r.disk.dirs = xt_dirs;
	r.disk.ndisks = 2;
	r.disk.file_prefix = prefix;
	r.disk.block_size = 64 * KB;
	r.disk.try_direct = false;
	r.disk.strategy = XXL_ALLOC_RANDOM_CYCLING;
	r.disk.seed = 5;
	return r;
}

/* A corpus: one text (ndocs = 0) or documents of the given lengths. */
typedef struct corpus
{
	const char *name;
	unsigned char *t;
	uint64_t	n;
	uint64_t	ndocs;
	uint64_t   *len;
} corpus;

/* Characters of the separated text: 0 ends a document, byte + 1 otherwise. */
static int *sep_text;
static uint64_t sep_n;

static int
sep_cmp(const void *a, const void *b)
{
	uint64_t	i = *(const uint64_t *) a,
				j = *(const uint64_t *) b;

	while (i < sep_n && j < sep_n)
	{
		if (sep_text[i] != sep_text[j])
			return sep_text[i] < sep_text[j] ? -1 : 1;
		i++, j++;
	}
	return i < sep_n ? 1 : (j < sep_n ? -1 : 0);
}

/* Document start of every body position, for the oracles. */
static uint64_t *
doc_ends(const corpus *c)
{
	uint64_t   *end = malloc((c->n + 1) * sizeof(uint64_t));
	uint64_t	at = 0;

	if (c->ndocs == 0)
		for (uint64_t p = 0; p < c->n; p++)
			end[p] = c->n;
	for (uint64_t d = 0; d < c->ndocs; d++)
	{
		for (uint64_t k = 0; k < c->len[d]; k++)
			end[at + k] = at + c->len[d];
		at += c->len[d];
	}
	return end;
}

/* The oracle: suffix array (body positions) and LCP. */
static void
oracle(const corpus *c, uint64_t *sa, uint64_t *lcp)
{
	uint64_t   *end = doc_ends(c);

	if (c->ndocs == 0)
	{
		/* divsufsort and Kasai */
		int64_t    *dsa = malloc((c->n + 1) * sizeof(int64_t));
		uint64_t   *rank = malloc((c->n + 1) * sizeof(uint64_t));
		uint64_t	h = 0;

		CHECK_EQ(divsufsort64(c->t, dsa, (int64_t) c->n), 0);
		for (uint64_t r = 0; r < c->n; r++)
		{
			sa[r] = (uint64_t) dsa[r];
			rank[sa[r]] = r;
		}
		for (uint64_t i = 0; i < c->n; i++)
		{
			if (rank[i] == 0)
			{
				lcp[0] = 0;
				h = 0;
				continue;
			}
			uint64_t	j = sa[rank[i] - 1];

			while (i + h < c->n && j + h < c->n && c->t[i + h] == c->t[j + h])
				h++;
			lcp[rank[i]] = h;
			if (h > 0)
				h--;
		}
		free(dsa);
		free(rank);
	}
	else
	{
		uint64_t	at = 0,
					q = 0,
					r = 0;
		uint64_t   *ssa;

		sep_n = c->n + c->ndocs;
		sep_text = malloc(sep_n * sizeof(int));
		ssa = malloc(sep_n * sizeof(uint64_t));
		for (uint64_t d = 0; d < c->ndocs; d++)
		{
			for (uint64_t k = 0; k < c->len[d]; k++)
				sep_text[q++] = c->t[at + k] + 1;
			sep_text[q++] = 0;
			at += c->len[d];
		}
		for (uint64_t i = 0; i < sep_n; i++)
			ssa[i] = i;
		qsort(ssa, sep_n, sizeof(uint64_t), sep_cmp);
		for (uint64_t k = 0; k < sep_n; k++)
		{
			uint64_t	p = ssa[k];

			if (sep_text[p] == 0)
				continue;
			/* body position: p minus the separators before it */
			uint64_t	seps = 0;

			for (uint64_t x = 0; x < p; x++)
				seps += sep_text[x] == 0;
			sa[r++] = p - seps;
		}
		CHECK_EQ(r, c->n);
		for (r = 0; r < c->n; r++)
		{
			uint64_t	h = 0;

			if (r > 0)
				while (sa[r] + h < end[sa[r]] && sa[r - 1] + h < end[sa[r - 1]] &&
					   c->t[sa[r] + h] == c->t[sa[r - 1] + h])
					h++;
			lcp[r] = h;
		}
		free(sep_text);
		free(ssa);
	}
	free(end);
}

static xxl_docs *
make_docs(const corpus *c)
{
	xxl_error	err;
	xxl_docs   *d;

	if (c->ndocs == 0)
		return NULL;
	d = xxl_docs_create(64 * MB, &err);
	for (uint64_t k = 0; k < c->ndocs; k++)
		CHECK_STATUS(xxl_docs_add(d, 1000 + (int64_t) k, c->len[k]), XXL_OK);
	CHECK_STATUS(xxl_docs_finish(d), XXL_OK);
	return d;
}

static xxl_lcp_config
lcp_config(run_mode mode, const xxl_docs *docs)
{
	xxl_lcp_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	/* the smallest budget; deferring, what it holds for the sorter's time on top */
	cfg.res = resources(mode == RUN_ROOMY ? 64 * MB : mode == RUN_DEFER ? 16 * MB
						: xxl_lcp_min_memory() + xxl_lcp_defer_memory(xxl_lcp_min_memory()), "test_lcp");
	cfg.docs = docs;
	cfg.internal_max = mode == RUN_TINY ? 1 : 0;
	/* the SQL functions' way: the suffixes spooled until run */
	cfg.defer = mode != RUN_ROOMY;
	return cfg;
}

/* suffix arrays built by pipeline(), and how many had an induced top level */
static int	builds,
			induced_builds;

/*
 * The pipeline the SQL functions run: the (separated) suffix sorter with
 * preceding bytes, its positions turned into body positions, into the LCP
 * operator.  sa and lcp get the result in rank order.
 */
static void
pipeline(const corpus *c, run_mode mode, const xxl_lcp_config *lcfg, uint64_t *sa,
		 uint64_t *lcp, xxl_lcp **keep)
{
	xxl_sa_config scfg;
	xxl_error	err;
	xxl_sa	   *s;
	xxl_lcp    *l;
	uint64_t	pos,
				r = 0,
				at = 0;
	int			prev,
				got;

	memset(&scfg, 0, sizeof(scfg));
	scfg.res = resources(mode == RUN_TINY ? xxl_sa_min_memory() : 64 * MB, "test_lcp_sa");
	scfg.internal_max = mode == RUN_TINY ? 1 : 0;
	scfg.with_prev = true;
	scfg.separated = c->ndocs > 0;
	s = xxl_sa_create(&scfg, &err);
	CHECK(s != NULL);
	if (c->ndocs == 0)
		CHECK_STATUS(xxl_sa_put(s, c->t, c->n), XXL_OK);
	for (uint64_t d = 0; d < c->ndocs; d++)
	{
		CHECK_STATUS(xxl_sa_put(s, c->t + at, c->len[d]), XXL_OK);
		CHECK_STATUS(xxl_sa_end_doc(s), XXL_OK);
		at += c->len[d];
	}
	CHECK_STATUS(xxl_sa_build(s), XXL_OK);
	{
		xxl_sa_stats st;

		xxl_sa_stats_get(s, &st);
		builds++;
		induced_builds += st.level[0].induced;
	}
	l = xxl_lcp_create(lcfg, &err);
	CHECK(l != NULL);
	CHECK_STATUS(xxl_lcp_put_text(l, c->t, c->n), XXL_OK);
	while ((got = xxl_sa_next_prev(s, &pos, &prev)) > 0)
	{
		uint64_t	body = pos,
					doc;

		if (lcfg->docs)
		{
			if (!xxl_docs_from_separated(lcfg->docs, pos, &body, &doc))
				continue;
			prev = prev <= 0 ? -1 : prev - 1;
		}
		CHECK_STATUS(xxl_lcp_put_sa(l, body, prev), XXL_OK);
	}
	CHECK_EQ(got, 0);
	xxl_sa_destroy(s);
	CHECK_MSG(xxl_lcp_run(l) == XXL_OK, "%s [%s]: %s", c->name, mode_names[mode], xxl_lcp_error(l)->message);
	if (lcfg->min_length == 0)
	{
		while ((got = xxl_lcp_next(l, &pos, &lcp[r])) > 0)
			sa[r++] = pos;
		CHECK_EQ(got, 0);
		CHECK_EQ(r, c->n);
	}
	if (keep)
		*keep = l;
	else
		xxl_lcp_destroy(l);
}

static bool
same(const char *what, const corpus *c, run_mode mode, const uint64_t *got, const uint64_t *want)
{
	for (uint64_t r = 0; r < c->n; r++)
		if (got[r] != want[r])
		{
			CHECK_MSG(false, "%s [%s] %s: rank %llu: %llu, oracle %llu", c->name, mode_names[mode],
					  what, (unsigned long long) r, (unsigned long long) got[r],
					  (unsigned long long) want[r]);
			return false;
		}
	return true;
}

static void
check_lcp(const corpus *c, run_mode mode)
{
	uint64_t   *sa = malloc((c->n + 1) * 8),
			   *lcp = malloc((c->n + 1) * 8),
			   *osa = malloc((c->n + 1) * 8),
			   *olcp = malloc((c->n + 1) * 8);
	xxl_docs   *docs = make_docs(c);
	xxl_lcp_config cfg = lcp_config(mode, docs);
	xxl_lcp    *l;
	xxl_lcp_stats st;

	oracle(c, osa, olcp);
	pipeline(c, mode, &cfg, sa, lcp, &l);
	if (same("SA", c, mode, sa, osa))
		same("LCP", c, mode, lcp, olcp);
	xxl_lcp_stats_get(l, &st);
	CHECK(mode != RUN_TINY ? st.direct : (!st.direct || c->n <= 1));
	if (mode == RUN_DEFER && c->n > 256 * KB)
		CHECK_MSG(st.text_on_disk, "%s: the text should have been on disk before run", c->name);
	if (!st.direct)
	{
		/* every round ran, and long common prefixes reached the random reads */
		uint64_t	resolved = st.random_resolved;

		for (int r = 0; r < XXL_LCP_ROUNDS; r++)
			resolved += st.round_resolved[r];
		CHECK_EQ(st.rounds, XXL_LCP_ROUNDS);
		CHECK_LE(resolved, st.irreducible);
		if (c->ndocs == 0 && (strstr(c->name, "versions") || strstr(c->name, "repeated")))
			CHECK_MSG(st.random_resolved > 0, "%s: no random reads", c->name);
	}
	CHECK_LE(st.memory_peak, cfg.res.memory);
	/* a roomy budget reads the output ahead on a worker */
	if (mode != RUN_TINY && c->n > 0)
		CHECK_MSG(st.output_slots >= XXL_AHEAD_SLOTS_MIN, "%s [%s]: output read by the caller",
				  c->name, mode_names[mode]);
	xxl_lcp_destroy(l);

	/* the same LCP from the stored suffix array, ranked rows in a scrambled order */
	if (c->n > 0)
	{
		xxl_error	err;
		uint64_t	pos,
					v,
					r = 0;
		int			got;

		cfg.defer = false;
		l = xxl_lcp_create(&cfg, &err);
		CHECK_STATUS(xxl_lcp_put_text(l, c->t, c->n), XXL_OK);
		for (uint64_t k = 0; k < c->n; k++)
		{
			uint64_t	x = (k * 7919) % c->n;	/* a permutation when gcd(7919, n) = 1 */

			if (c->n % 7919 == 0)
				x = k;
			CHECK_STATUS(xxl_lcp_put_ranked(l, x + 1, osa[x]), XXL_OK);
		}
		CHECK_MSG(xxl_lcp_run(l) == XXL_OK, "%s [%s]: %s", c->name, mode_names[mode],
				  xxl_lcp_error(l)->message);
		while ((got = xxl_lcp_next(l, &pos, &v)) > 0 && r < c->n)
		{
			sa[r] = pos;
			lcp[r++] = v;
		}
		CHECK_EQ(got, 0);
		CHECK_EQ(r, c->n);
		if (same("stored SA", c, mode, sa, osa))
			same("LCP of the stored SA", c, mode, lcp, olcp);
		xxl_lcp_stats_get(l, &st);
		CHECK(st.derived_prev);
		xxl_lcp_destroy(l);
	}
	xxl_docs_destroy(docs);
	free(sa);
	free(lcp);
	free(osa);
	free(olcp);
}

/* Naive repeats: windows of k bytes inside a document occurring >= m times, merged. */
typedef struct range
{
	uint64_t	start,
				len,
				occ;
} range;

static size_t
naive_repeats(const corpus *c, uint64_t k, uint64_t m, range *out)
{
	uint64_t   *end = doc_ends(c);
	size_t		nr = 0;
	bool		open = false;
	range		cur = {0};

	for (uint64_t p = 0; p < c->n; p++)
	{
		uint64_t	count = 0;

		if (end[p] - p < k)
			continue;
		for (uint64_t q = 0; q < c->n; q++)
			if (end[q] - q >= k && memcmp(c->t + p, c->t + q, k) == 0)
				count++;
		if (count < m)
			continue;
		if (open && p < cur.start + cur.len)
		{
			cur.len = p + k - cur.start;
			if (count < cur.occ)
				cur.occ = count;
			continue;
		}
		if (open)
			out[nr++] = cur;
		cur.start = p;
		cur.len = k;
		cur.occ = count;
		open = true;
	}
	if (open)
		out[nr++] = cur;
	free(end);
	return nr;
}

static void
check_repeats(const corpus *c, run_mode mode, uint64_t k, uint64_t m)
{
	range	   *want = malloc((c->n + 1) * sizeof(range));
	size_t		nwant = naive_repeats(c, k, m, want),
				ngot = 0;
	xxl_docs   *docs = make_docs(c);
	xxl_lcp_config cfg = lcp_config(mode, docs);
	xxl_lcp    *l;
	range		g;
	int			got;

	cfg.min_length = k;
	cfg.min_count = m;
	pipeline(c, mode, &cfg, NULL, NULL, &l);
	while ((got = xxl_lcp_next_repeat(l, &g.start, &g.len, &g.occ)) > 0)
	{
		if (ngot < nwant)
			CHECK_MSG(g.start == want[ngot].start && g.len == want[ngot].len &&
					  g.occ == want[ngot].occ,
					  "%s [%s] k=%llu m=%llu: range %zu is (%llu, %llu, %llu), naive (%llu, %llu, %llu)",
					  c->name, mode_names[mode], (unsigned long long) k, (unsigned long long) m, ngot,
					  (unsigned long long) g.start, (unsigned long long) g.len,
					  (unsigned long long) g.occ, (unsigned long long) want[ngot].start,
					  (unsigned long long) want[ngot].len, (unsigned long long) want[ngot].occ);
		ngot++;
	}
	CHECK_EQ(got, 0);
	CHECK_MSG(ngot == nwant, "%s [%s] k=%llu: %zu ranges, naive %zu", c->name, mode_names[mode],
			  (unsigned long long) k, ngot, nwant);
	xxl_lcp_destroy(l);
	xxl_docs_destroy(docs);
	free(want);
}

/* Corpora ------------------------------------------------------------------ */

static corpus
make_corpus(const char *name, uint64_t n, uint64_t ndocs)
{
	corpus		c;

	memset(&c, 0, sizeof(c));
	c.name = name;
	c.n = n;
	c.t = malloc(n + 1);
	c.ndocs = ndocs;
	c.len = ndocs ? calloc(ndocs, sizeof(uint64_t)) : NULL;
	return c;
}

static void
free_corpus(corpus *c)
{
	free(c->t);
	free(c->len);
}

/* Split n bytes into ndocs documents of random lengths (some empty). */
static void
random_split(corpus *c, xt_rng *rng)
{
	uint64_t	left = c->n;

	for (uint64_t d = 0; d + 1 < c->ndocs; d++)
	{
		uint64_t	len = xt_below(rng, 5) == 0 ? 0 : xt_below(rng, 2 * c->n / c->ndocs + 1);

		if (len > left)
			len = left;
		c->len[d] = len;
		left -= len;
	}
	c->len[c->ndocs - 1] = left;
}

/* Words with boilerplate: sentences that recur, over a small vocabulary. */
static void
prose(corpus *c, xt_rng *rng)
{
	static const char *const words[] = {"the", "of", "and", "table", "sort", "a", "suffix",
	"array", "document", "in", "memory", "external", "disk", "prefix", "common"};
	static const char *const boiler = "Copyright (c) the authors. All rights reserved. ";
	uint64_t	at = 0;

	while (at < c->n)
	{
		const char *w = xt_below(rng, 40) == 0 ? boiler : words[xt_below(rng, 15)];
		size_t		len = strlen(w);

		for (size_t k = 0; k <= len && at < c->n; k++)
			c->t[at++] = k < len ? (unsigned char) w[k] : ' ';
	}
}

XT_TEST(docs_lookup)
{
	xxl_error	err;
	xxl_docs   *d = xxl_docs_create(MB, &err);
	uint64_t	lens[] = {3, 0, 0, 5, 1, 0, 7};
	uint64_t	body,
				doc,
				q = 0,
				at = 0;

	for (int k = 0; k < 7; k++)
		CHECK_STATUS(xxl_docs_add(d, k * 10, lens[k]), XXL_OK);
	CHECK_STATUS(xxl_docs_finish(d), XXL_OK);
	CHECK_EQ(xxl_docs_bytes(d), 16);
	for (int k = 0; k < 7; k++)
	{
		for (uint64_t o = 0; o < lens[k]; o++)
		{
			CHECK_EQ(xxl_docs_find(d, at + o), (uint64_t) k);
			CHECK(xxl_docs_from_separated(d, q, &body, &doc));
			CHECK_EQ(body, at + o);
			CHECK_EQ(doc, (uint64_t) k);
			q++;
		}
		CHECK(!xxl_docs_from_separated(d, q, &body, &doc));
		CHECK_EQ(doc, (uint64_t) k);
		q++;
		at += lens[k];
	}
	CHECK_EQ(xxl_docs_id(d, 3), 30);
	xxl_docs_destroy(d);

	/* a limit too small for the documents is an error */
	d = xxl_docs_create(100, &err);
	xxl_status	rc = XXL_OK;

	for (int k = 0; k < 100 && rc == XXL_OK; k++)
		rc = xxl_docs_add(d, k, 1);
	CHECK_STATUS(rc, XXL_ENOMEM);
	xxl_docs_destroy(d);
}

/*
 * The same ndocs documents (one in empty_one_in empty, the rest 1 to
 * max_len bytes, random ids) into an in-memory map and one paged past 64 kB.
 */
static void
map_pair(int ndocs, uint64_t seed, int empty_one_in, int max_len, xxl_docs **mem, xxl_docs **pg)
{
	xt_rng		rng = {seed};
	xxl_error	err;
	xxl_resources res = resources(64 * KB, "docs");

	*mem = xxl_docs_create(64 * MB, &err);
	*pg = xxl_docs_create_paging(64 * KB, &res, &err);
	CHECK(*mem != NULL && *pg != NULL);
	for (int k = 0; k < ndocs; k++)
	{
		uint64_t	len = xt_below(&rng, empty_one_in) == 0 ? 0 : 1 + xt_below(&rng, max_len);
		int64_t		id = (int64_t) xt_below(&rng, 1000000) - 500000;

		CHECK_STATUS(xxl_docs_add(*mem, id, len), XXL_OK);
		CHECK_STATUS(xxl_docs_add(*pg, id, len), XXL_OK);
	}
	CHECK_STATUS(xxl_docs_finish(*mem), XXL_OK);
	CHECK_STATUS(xxl_docs_finish(*pg), XXL_OK);
	CHECK(!xxl_docs_paged(*mem));
	CHECK(xxl_docs_paged(*pg));
}

/*
 * A map of 140000 documents (a fifth empty, the rest up to 40 bytes) in a
 * limit of 64 kB pages past it (547 pages of entries: two index levels):
 * every lookup, in both position spaces, equals the in-memory map's, read
 * in order and at random positions, and its files go with it.
 */
XT_TEST(docs_paged_past_the_limit)
{
	enum
	{
		NDOCS = 140000
	};
	xt_rng		rng = {7};
	xxl_docs   *mem,
			   *pg;
	uint64_t	n,
				nsep;

	map_pair(NDOCS, 7, 5, 40, &mem, &pg);
	CHECK(xt_spill_files() > 0);
	CHECK(xxl_docs_memory(pg) <= 64 * KB);
	n = xxl_docs_bytes(pg);
	nsep = n + NDOCS;
	CHECK_EQ(n, xxl_docs_bytes(mem));
	CHECK_EQ(xxl_docs_count(pg), (uint64_t) NDOCS);
	for (uint64_t k = 0; k < NDOCS; k++)
	{
		CHECK_EQ(xxl_docs_start(pg, k), xxl_docs_start(mem, k));
		CHECK_EQ(xxl_docs_end(pg, k), xxl_docs_end(mem, k));
		CHECK_EQ(xxl_docs_id(pg, k), xxl_docs_id(mem, k));
	}
	for (int round = 0; round < 2; round++)
	{
		for (uint64_t i = 0; i < (round == 0 ? nsep : nsep / 8); i++)
		{
			/* in order, then at random */
			uint64_t	q = round == 0 ? i : xt_below(&rng, nsep),
						p = q < n ? q : xt_below(&rng, n),
						b1,
						d1,
						b2,
						d2;
			bool		s1 = xxl_docs_from_separated(mem, q, &b1, &d1),
						s2 = xxl_docs_from_separated(pg, q, &b2, &d2);

			CHECK_EQ(xxl_docs_find(pg, p), xxl_docs_find(mem, p));
			CHECK_EQ((int) s2, (int) s1);
			CHECK_EQ(d2, d1);
			if (s1)
				CHECK_EQ(b2, b1);
		}
	}
	CHECK(!xxl_docs_failed(pg));
	{
		uint64_t	rd,
					wr,
					misses;

		xxl_docs_io(pg, &rd, &wr, &misses);
		CHECK(misses > 0);
		CHECK(wr >= (uint64_t) NDOCS * 16);
	}
	xxl_docs_destroy(mem);
	xxl_docs_destroy(pg);
	CHECK_EQ(xt_spill_files(), 0);
}

/*
 * The resolver hands out, in the order the positions came, every document
 * suffix with the body position, offset, remaining length, id and preceding
 * byte the in-memory map gives, the separators' left out: positions in a
 * random order through a paged map, with run budgets from the text plan's
 * least (permutations sorted by slot or scattered by phase) to roomy; its
 * spill files go with it, and a short input is refused.
 */
XT_TEST(docs_resolver_equals_lookups)
{
	enum
	{
		NDOCS = 40000
	};
	xt_rng		rng = {12};
	xxl_error	err;
	xxl_docs   *mem,
			   *pg;
	uint64_t	nsep,
			   *perm;
	size_t		budgets[] = {xxl_sa_min_memory(), 2 * xxl_sa_min_memory(), 64 * MB};

	map_pair(NDOCS, 11, 7, 60, &mem, &pg);
	CHECK(xxl_docs_spare(pg) >= xxl_docs_resolver_min_spool());
	nsep = xxl_docs_bytes(mem) + NDOCS;
	perm = malloc(nsep * sizeof(uint64_t));
	CHECK(perm != NULL);
	for (uint64_t i = 0; i < nsep; i++)
		perm[i] = i;
	for (uint64_t i = nsep - 1; i > 0; i--)
	{
		uint64_t	j = xt_below(&rng, i + 1),
					t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++)
	{
		xxl_resources run = resources(budgets[b], "resolve");
		xxl_docs_resolver *r = xxl_docs_resolver_create(pg, &run, xxl_docs_spare(pg), &err);
		uint64_t	at = 0,
					got_n = 0,
					rd,
					wr;
		size_t		peak;
		xxl_docs_suffix s;
		int			got;

		CHECK(r != NULL);
		for (uint64_t i = 0; i < nsep; i++)
			CHECK_STATUS(xxl_docs_resolver_put(r, perm[i], (int) (perm[i] % 257) - 1), XXL_OK);
		if (xxl_docs_resolver_run(r) != XXL_OK)
			printf("# %s\n", xxl_docs_resolver_error(r)->message);
		CHECK(!xxl_docs_resolver_error(r)->code);
		while ((got = xxl_docs_resolver_next(r, &s)) > 0)
		{
			uint64_t	body,
						doc;

			/* the next document suffix in the order put */
			while (!xxl_docs_from_separated(mem, perm[at], &body, &doc))
				at++;
			CHECK_EQ(s.body, body);
			CHECK_EQ(s.offset, body - xxl_docs_start(mem, doc));
			CHECK_EQ(s.rem, xxl_docs_end(mem, doc) - body);
			CHECK_EQ(s.id, xxl_docs_id(mem, doc));
			CHECK_EQ(s.prev, perm[at] % 257 <= 1 ? -1 : (int) (perm[at] % 257) - 1);
			at++;
			got_n++;
		}
		CHECK_EQ(got, 0);
		CHECK_EQ(got_n, xxl_docs_bytes(mem));
		xxl_docs_resolver_io(r, &rd, &wr, &peak);
		CHECK(peak <= budgets[b] + xxl_docs_spare(pg));
		if (budgets[b] < 64 * MB)
			CHECK(wr > nsep);
		xxl_docs_resolver_destroy(r);
	}
	{
		xxl_resources run = resources(xxl_sa_min_memory(), "resolve");
		xxl_docs_resolver *r = xxl_docs_resolver_create(pg, &run, xxl_docs_spare(pg), &err);

		CHECK(r != NULL);
		CHECK_STATUS(xxl_docs_resolver_put(r, 0, -1), XXL_OK);
		CHECK_STATUS(xxl_docs_resolver_run(r), XXL_EINVAL);
		xxl_docs_resolver_destroy(r);
	}
	CHECK(!xxl_docs_failed(pg));
	free(perm);
	xxl_docs_destroy(mem);
	xxl_docs_destroy(pg);
	CHECK_EQ(xt_spill_files(), 0);
}

static void
run_single_texts(run_mode mode)
{
	xt_rng		rng = {42};
	corpus		c;

	c = make_corpus("random over 4 letters", 200000, 0);
	for (uint64_t i = 0; i < c.n; i++)
		c.t[i] = "acgt"[xt_below(&rng, 4)];
	check_lcp(&c, mode);
	free_corpus(&c);

	c = make_corpus("one byte repeated", 50000, 0);
	memset(c.t, 'z', c.n);
	check_lcp(&c, mode);
	free_corpus(&c);

	c = make_corpus("0x00 and 0xFF", 80000, 0);
	for (uint64_t i = 0; i < c.n; i++)
		c.t[i] = xt_below(&rng, 2) ? 0xFF : 0x00;
	check_lcp(&c, mode);
	free_corpus(&c);

	/* long repeats: a block copied with a few edits, for the random-read survivors */
	c = make_corpus("versions of one file", 400000, 0);
	for (uint64_t i = 0; i < 20000; i++)
		c.t[i] = (unsigned char) xt_below(&rng, 256);
	for (uint64_t i = 20000; i < c.n; i++)
		c.t[i] = xt_below(&rng, 3000) == 0 ? (unsigned char) xt_below(&rng, 256) : c.t[i - 20000];
	check_lcp(&c, mode);
	free_corpus(&c);

	c = make_corpus("prose", 300000, 0);
	prose(&c, &rng);
	check_lcp(&c, mode);
	free_corpus(&c);

	c = make_corpus("one byte", 1, 0);
	c.t[0] = 'x';
	check_lcp(&c, mode);
	free_corpus(&c);
}

/*
 * A text store read for the last time gives back its blocks as it goes: on
 * disk (the operator's shared files do not grow when it is written again)
 * and in memory; a forgotten block cannot be read.
 */
XT_TEST(text_store_forget)
{
	for (int on_disk = 0; on_disk < 2; on_disk++)
	{
		enum
		{
			N = 3000000
		};
		xxl_file_pool *pool = xxl_file_pool_create();
		xxl_spill_account acc;
		xxl_sa_config cfg;
		xxl_error	err = {0};
		xxl_text_store *s,
				   *again;
		unsigned char *t = malloc(N),
				   *buf = malloc(100000);
		uint64_t	used,
					at = 0;
		size_t		got;

		REQUIRE(pool != NULL && t != NULL && buf != NULL);
		for (size_t i = 0; i < N; i++)
			t[i] = (unsigned char) xt_mix64(i);
		xxl_spill_account_init(&acc, 0);
		memset(&cfg, 0, sizeof(cfg));
		cfg.res = resources(on_disk ? 256 * KB : 16 * MB, "test_lcp_store");
		cfg.res.disk.pool = pool;
		cfg.res.disk.account = &acc;
		cfg.sequential = true;
		s = xxl_text_store_create(&cfg, &err);
		REQUIRE_MSG(s != NULL, "%s", err.message);
		CHECK_STATUS(xxl_text_store_put(s, t, N), XXL_OK);
		CHECK_STATUS(xxl_text_store_finish(s), XXL_OK);
		used = acc.used;
		CHECK(on_disk ? used >= N : used == 0);
		while (at < N)
		{
			CHECK_STATUS(xxl_text_store_read(s, at, buf, 100000, &got), XXL_OK);
			REQUIRE(got > 0);
			CHECK(memcmp(buf, t + at, got) == 0);
			at += got;
			xxl_text_store_forget(s, at);
		}
		CHECK_STATUS(xxl_text_store_read(s, 0, buf, 10, &got), XXL_EINVAL);
		/* a second store of the same size takes the first one's space */
		again = xxl_text_store_create(&cfg, &err);
		REQUIRE_MSG(again != NULL, "%s", err.message);
		CHECK_STATUS(xxl_text_store_put(again, t, N), XXL_OK);
		CHECK_STATUS(xxl_text_store_finish(again), XXL_OK);
		CHECK_MSG(acc.used <= used + 2 * 256 * KB, "%d: %llu bytes after %llu", on_disk,
				  (unsigned long long) acc.used, (unsigned long long) used);
		xxl_text_store_destroy(again);
		xxl_text_store_destroy(s);
		xxl_file_pool_destroy(pool);
		CHECK_EQ(acc.used, 0);
		xxl_spill_account_destroy(&acc);
		free(t);
		free(buf);
	}
}

XT_TEST(lcp_single_roomy)
{
	run_single_texts(RUN_ROOMY);
}

XT_TEST(lcp_single_tiny_external)
{
	run_single_texts(RUN_TINY);
}

XT_TEST(lcp_single_deferred_loaded)
{
	run_single_texts(RUN_DEFER);
}

static void
run_documents(run_mode mode)
{
	xt_rng		rng = {7};
	corpus		c;

	c = make_corpus("random documents", 3000, 40);
	for (uint64_t i = 0; i < c.n; i++)
		c.t[i] = "ab"[xt_below(&rng, 2)];
	random_split(&c, &rng);
	check_lcp(&c, mode);
	check_repeats(&c, mode, 6, 2);
	check_repeats(&c, mode, 9, 3);
	free_corpus(&c);

	c = make_corpus("all 256 bytes in documents", 2600, 13);
	for (uint64_t i = 0; i < c.n; i++)
		c.t[i] = (unsigned char) (i % 256);
	random_split(&c, &rng);
	check_lcp(&c, mode);
	check_repeats(&c, mode, 4, 2);
	free_corpus(&c);

	c = make_corpus("one byte repeated, documents", 1500, 12);
	memset(c.t, 'q', c.n);
	random_split(&c, &rng);
	check_lcp(&c, mode);
	check_repeats(&c, mode, 100, 2);
	free_corpus(&c);

	c = make_corpus("one-byte and empty documents", 60, 90);
	for (uint64_t i = 0; i < c.n; i++)
		c.t[i] = (unsigned char) (xt_below(&rng, 2) ? 0xFF : 0x00);
	for (uint64_t d = 0; d < c.ndocs; d++)
		c.len[d] = d % 3 == 1 ? 0 : 1;
	c.n = 60;
	check_lcp(&c, mode);
	check_repeats(&c, mode, 1, 2);
	check_repeats(&c, mode, 2, 2);
	free_corpus(&c);

	/* "abcd" split as "ab" | "cd" next to "abcd": no repeat of length 3 or 4 crosses the cut */
	c = make_corpus("repeat across a boundary", 8, 3);
	memcpy(c.t, "abcdabcd", 8);
	c.len[0] = 4;
	c.len[1] = 2;
	c.len[2] = 2;
	check_lcp(&c, mode);
	check_repeats(&c, mode, 3, 2);
	check_repeats(&c, mode, 2, 2);
	free_corpus(&c);

	c = make_corpus("prose documents", 5000, 25);
	prose(&c, &rng);
	random_split(&c, &rng);
	check_lcp(&c, mode);
	check_repeats(&c, mode, 20, 2);
	check_repeats(&c, mode, 5000, 2);	/* longer than every document */
	free_corpus(&c);
}

XT_TEST(lcp_documents_roomy)
{
	run_documents(RUN_ROOMY);
}

XT_TEST(lcp_documents_tiny_external)
{
	/* external, the top level by induced sorting where it suits (not one repeated byte) */
	builds = induced_builds = 0;
	run_documents(RUN_TINY);
	printf("  # %d of %d suffix arrays induced\n", induced_builds, builds);
	CHECK_MSG(induced_builds * 2 > builds, "only %d of %d suffix arrays induced", induced_builds, builds);
}

XT_TEST(repeats_single_text)
{
	xt_rng		rng = {9};
	corpus		c = make_corpus("prose", 4000, 0);

	prose(&c, &rng);
	for (int mode = RUN_ROOMY; mode <= RUN_TINY; mode++)
	{
		check_repeats(&c, mode, 30, 2);
		check_repeats(&c, mode, 12, 5);
	}
	free_corpus(&c);
}

XT_TEST(lcp_bad_input)
{
	xxl_docs   *docs = NULL;
	xxl_lcp_config cfg = lcp_config(RUN_ROOMY, docs);
	xxl_error	err;
	xxl_lcp    *l;
	uint64_t	pos,
				v;

	/* a position twice */
	l = xxl_lcp_create(&cfg, &err);
	CHECK_STATUS(xxl_lcp_put_text(l, "banana", 6), XXL_OK);
	for (int k = 0; k < 6; k++)
		xxl_lcp_put_ranked(l, k + 1, k == 3 ? 2 : k);
	CHECK(xxl_lcp_run(l) != XXL_OK);
	CHECK(xxl_lcp_next(l, &pos, &v) < 0);
	xxl_lcp_destroy(l);

	/* out of range */
	l = xxl_lcp_create(&cfg, &err);
	CHECK_STATUS(xxl_lcp_put_text(l, "banana", 6), XXL_OK);
	CHECK_STATUS(xxl_lcp_put_ranked(l, 7, 0), XXL_EINVAL);
	xxl_lcp_destroy(l);

	/* too few entries */
	l = xxl_lcp_create(&cfg, &err);
	CHECK_STATUS(xxl_lcp_put_text(l, "banana", 6), XXL_OK);
	CHECK_STATUS(xxl_lcp_put_sa(l, 5, 'n'), XXL_OK);
	CHECK_STATUS(xxl_lcp_run(l), XXL_EINVAL);
	xxl_lcp_destroy(l);

	/* budget */
	memset(&err, 0, sizeof(err));
	cfg.res.memory = xxl_lcp_min_memory() - 1;
	CHECK(xxl_lcp_create(&cfg, &err) == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	cfg.res.memory = 64 * MB;
	cfg.min_length = 5;
	cfg.min_count = 1;
	CHECK(xxl_lcp_create(&cfg, &err) == NULL);
}

static int	cancel_after;

static bool
cancel_hook(void *arg)
{
	return --cancel_after < 0;
}

XT_TEST(lcp_cancel)
{
	xt_rng		rng = {3};
	corpus		c = make_corpus("random", 300000, 0);
	xxl_lcp_config cfg = lcp_config(RUN_TINY, NULL);
	xxl_error	err;
	xxl_lcp    *l;
	xxl_status	rc = XXL_OK;

	for (uint64_t i = 0; i < c.n; i++)
		c.t[i] = "ab"[xt_below(&rng, 2)];
	int64_t    *dsa = malloc(c.n * sizeof(int64_t));

	divsufsort64(c.t, dsa, (int64_t) c.n);
	cfg.res.cancel = cancel_hook;
	cancel_after = 200;
	l = xxl_lcp_create(&cfg, &err);
	CHECK_STATUS(xxl_lcp_put_text(l, c.t, c.n), XXL_OK);
	for (uint64_t r = 0; r < c.n && rc == XXL_OK; r++)
		rc = xxl_lcp_put_sa(l, (uint64_t) dsa[r], -1);
	if (rc == XXL_OK)
		rc = xxl_lcp_run(l);
	CHECK_STATUS(rc, XXL_ECANCELED);
	xxl_lcp_destroy(l);
	free(dsa);
	free_corpus(&c);
}

/*
 * The LCP operator at budgets from its least to 4MB, on disk and deferred
 * as the SQL functions run it, over 3 MB of prose (few irreducible pairs,
 * so the rounds' sorts distribute where they fit, and the permutations
 * take more than their share where a scatter fits then): every budget
 * completes within itself with divsufsort and Kasai's values.  (The
 * permutation that once left the rounds' sorts too little to distribute
 * in failed on tens of MB of real text, 30 MiB at 2MB; bench-scale's
 * LCP=1 runs that.)
 */
XT_TEST(lcp_every_budget)
{
	xt_rng		rng = {46};
	corpus		c = make_corpus("prose", 3 * MB, 0);
	uint64_t   *sa = malloc((c.n + 1) * 8),
			   *lcp = malloc((c.n + 1) * 8),
			   *osa = malloc((c.n + 1) * 8),
			   *olcp = malloc((c.n + 1) * 8);
	size_t		least = xxl_lcp_min_memory() + xxl_lcp_defer_memory(xxl_lcp_min_memory());
	int			budgets = 0;

	prose(&c, &rng);
	oracle(&c, osa, olcp);
	for (size_t m = least; m <= 4 * MB; m += m / 3)
	{
		xxl_lcp_config cfg = lcp_config(RUN_DEFER, NULL);
		xxl_lcp    *l;
		xxl_lcp_stats st;

		cfg.res.memory = m;
		cfg.internal_max = 1;
		pipeline(&c, RUN_DEFER, &cfg, sa, lcp, &l);
		xxl_lcp_stats_get(l, &st);
		CHECK_MSG(!st.direct, "at %zu bytes the comparisons should be on disk", m);
		CHECK_LE(st.memory_peak, m);
		xxl_lcp_destroy(l);
		if (same("SA", &c, RUN_DEFER, sa, osa))
			same("LCP", &c, RUN_DEFER, lcp, olcp);
		budgets++;
	}
	CHECK(budgets >= 6);
	free(sa);
	free(lcp);
	free(osa);
	free(olcp);
	free_corpus(&c);
}

/*
 * The output read ahead on a worker, from a permutation on disk: every
 * value right, then the operator destroyed halfway through its output (the
 * worker still reading), then a cancel while the output is read, which the
 * worker sees through the environment's stop flag.
 */
static int	output_cancel_armed;

static bool
output_cancel_hook(void *arg)
{
	return output_cancel_armed && --cancel_after < 0;
}

static xxl_lcp *
ahead_run(const corpus *c, xxl_lcp_config *cfg)
{
	xxl_error	err;
	xxl_lcp    *l = xxl_lcp_create(cfg, &err);
	int64_t    *dsa = malloc(c->n * sizeof(int64_t));

	CHECK(l != NULL);
	divsufsort64(c->t, dsa, (int64_t) c->n);
	CHECK_STATUS(xxl_lcp_put_text(l, c->t, c->n), XXL_OK);
	for (uint64_t r = 0; r < c->n; r++)
		CHECK_STATUS(xxl_lcp_put_sa(l, (uint64_t) dsa[r], dsa[r] ? c->t[dsa[r] - 1] : -1), XXL_OK);
	free(dsa);
	CHECK_STATUS(xxl_lcp_run(l), XXL_OK);
	return l;
}

XT_TEST(lcp_output_ahead)
{
	xt_rng		rng = {11};
	corpus		c = make_corpus("words", 3 * MB, 0);
	xxl_lcp_config cfg;
	uint64_t   *osa = malloc((c.n + 1) * 8),
			   *olcp = malloc((c.n + 1) * 8);
	xxl_lcp    *l;
	xxl_lcp_stats st;
	uint64_t	pos,
				v,
				r = 0;
	int			got;

	for (uint64_t i = 0; i < c.n; i++)
		c.t[i] = "abcd "[xt_below(&rng, 5)];
	oracle(&c, osa, olcp);
	memset(&cfg, 0, sizeof(cfg));
	cfg.res = resources(8 * MB, "test_lcp_ahead");
	cfg.res.cancel = output_cancel_hook;

	/* every value, against Kasai's */
	l = ahead_run(&c, &cfg);
	xxl_lcp_stats_get(l, &st);
	CHECK(!st.direct);
	CHECK(st.output_slots >= XXL_AHEAD_SLOTS_MIN);
	while ((got = xxl_lcp_next(l, &pos, &v)) > 0 && r < c.n)
	{
		if (pos != osa[r] || v != olcp[r])
		{
			CHECK_MSG(false, "rank %llu: (%llu, %llu), oracle (%llu, %llu)", (unsigned long long) r,
					  (unsigned long long) pos, (unsigned long long) v,
					  (unsigned long long) osa[r], (unsigned long long) olcp[r]);
			break;
		}
		r++;
	}
	CHECK_EQ(got, 0);
	CHECK_EQ(r, c.n);
	xxl_lcp_destroy(l);

	/* destroyed halfway through: the worker is stopped first */
	l = ahead_run(&c, &cfg);
	for (r = 0; r < c.n / 2; r++)
		CHECK_EQ(xxl_lcp_next(l, &pos, &v), 1);
	xxl_lcp_destroy(l);

	/* a cancel once the output is being read: the worker stops at its next poll */
	l = ahead_run(&c, &cfg);
	output_cancel_armed = 1;
	cancel_after = 0;
	r = 0;
	while ((got = xxl_lcp_next(l, &pos, &v)) > 0)
		r++;
	output_cancel_armed = 0;
	CHECK_MSG(got < 0 && xxl_lcp_error(l)->code == XXL_ECANCELED,
			  "the cancel was not seen: %d after %llu rows", got, (unsigned long long) r);
	CHECK(r < c.n);
	xxl_lcp_destroy(l);

	free(osa);
	free(olcp);
	free_corpus(&c);
}

/*
 * The permutations to text order and back at budgets where a scatter of
 * their share does not fit: charged by phase (their distributions take
 * most of the pool while little else runs, their readings little), then,
 * lower, sorted by slot; every value Kasai's at every budget.  The suffix
 * array comes from divsufsort, so that only the LCP part runs.
 */
XT_TEST(lcp_permutations_by_phase)
{
	xt_rng		rng = {47};
	corpus		c = make_corpus("prose", 4 * MB, 0);
	uint64_t   *osa = malloc((c.n + 1) * 8),
			   *olcp = malloc((c.n + 1) * 8);
	int			split_scattered = 0,
				sorted_below = 0;

	prose(&c, &rng);
	oracle(&c, osa, olcp);
	for (size_t m = xxl_lcp_min_memory(); m <= 3 * MB / 2; m += m / 6)
	{
		xxl_lcp_config cfg;
		xxl_lcp    *l;
		xxl_lcp_stats st;
		uint64_t	pos,
					v,
					r = 0,
					bad = 0;
		int			got;

		memset(&cfg, 0, sizeof(cfg));
		cfg.res = resources(m, "test_lcp_phase");
		cfg.internal_max = 1;
		l = ahead_run(&c, &cfg);
		while ((got = xxl_lcp_next(l, &pos, &v)) > 0 && r < c.n)
		{
			bad += pos != osa[r] || v != olcp[r];
			r++;
		}
		CHECK_EQ(got, 0);
		CHECK_EQ(r, c.n);
		CHECK_MSG(bad == 0, "%llu values wrong at %zu bytes", (unsigned long long) bad, m);
		xxl_lcp_stats_get(l, &st);
		CHECK_LE(st.memory_peak, m);
		printf("  # %zu kB: %d permutations split, %d sorted, %.1f bytes of I/O a byte\n", m / KB,
			   st.perms_split, st.perms_sorted, (double) (st.bytes_read + st.bytes_written) / c.n);
		/* a budget where a scatter fits only split, above one where it did not fit at all */
		split_scattered += sorted_below > 0 && st.perms_split > 0 && st.perms_sorted == 0;
		sorted_below += st.perms_sorted;
		xxl_lcp_destroy(l);
		CHECK_EQ(xt_spill_files(), 0);
	}
	CHECK(split_scattered >= 1);
	free(osa);
	free(olcp);
	free_corpus(&c);
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
