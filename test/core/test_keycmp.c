/*
 * test_keycmp.c — sorting variable-length records whose keys are compared
 * column by column (xxl_keycmp.h) rather than by memcmp: strings in a libc
 * locale (strcoll_l, strcmp on ties, DESC), NULL flags and a byte column
 * behind them.  The oracle is a stable insertion into an array sorted with
 * the same comparison (qsort with the input position as the last key),
 * in memory, with several runs, several merge passes and parallel run
 * formation.  A byte column in front of the string (an integer key, then
 * a libc text column) is abbreviated (xxl_key_abbrev), which must never
 * contradict the comparison; so is a string with a prefix (as ICU keys
 * have one), here in a case-blind collation whose prefix is the string's
 * first bytes in lower case.
 */
#include "xxl_test.h"
#include "core/xxl_keycmp.h"
#include "core/xxl_sort.h"

#include <ctype.h>
#include <locale.h>
#include <strings.h>

typedef struct rec
{
	unsigned char key[64];
	uint32_t	key_len;
	uint32_t	pos;
} rec;

static const xxl_key_compare *sort_kc;

static int
rec_cmp(const void *a, const void *b)
{
	const rec  *x = a;
	const rec  *y = b;
	int			c = xxl_key_compare_keys(sort_kc, x->key, x->key_len, y->key, y->key_len);

	return c != 0 ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static void
put_be32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* Bytes of the case-blind collation's prefix: fewer than most strings have. */
#define FOLD_PREFIX 3

/* The case-blind collation (ASCII): strcasecmp. */
static int
collate_fold(const void *collator, const char *a, const char *b)
{
	(void) collator;
	return strcasecmp(a, b);
}

/* column 0: a string of "0a-_ .bB1" (or NULL), column 1: a 2-byte value */
static void
make_rec_prefixed(rec *r, xt_rng *rng, uint32_t pos, uint32_t prefix)
{
	static const char alphabet[] = "0a-_ .bB1";
	unsigned char *p = r->key;
	size_t		len = 1 + xt_below(rng, 6);

	if (xt_below(rng, 50) == 0)
	{
		*p++ = 0x00;			/* NULLS FIRST */
		put_be32(p, 0);
		p += 4;
	}
	else
	{
		unsigned char *s = p + 5 + prefix;

		*p++ = 0x01;
		put_be32(p, prefix + (uint32_t) len + 1);
		p += 4;
		for (size_t i = 0; i < len; i++)
			s[i] = alphabet[xt_below(rng, 9)];
		s[len] = 0;
		/* the prefix: tolower of the first bytes, zero padded */
		for (uint32_t i = 0; i < prefix; i++)
			*p++ = i < len ? (unsigned char) tolower(s[i]) : 0;
		p = s + len + 1;
	}
	*p++ = 0x01;
	put_be32(p, 2);
	p += 4;
	*p++ = (unsigned char) xt_below(rng, 3);
	*p++ = (unsigned char) xt_below(rng, 256);
	r->key_len = (uint32_t) (p - r->key);
	r->pos = pos;
}

/*
 * column 0: 0 to 9 bytes of {0x00, 0x01, 0x41, 0xFF} (or NULL, last), so
 * that values share 7-byte prefixes and end in zeros; column 1: a string
 */
static void
make_rec_bytes_first(rec *r, xt_rng *rng, uint32_t pos)
{
	static const unsigned char bytes[] = {0x00, 0x01, 0x41, 0xFF};
	unsigned char *p = r->key;
	size_t		len = xt_below(rng, 10);

	if (xt_below(rng, 40) == 0)
	{
		*p++ = 0x01;			/* NULLS LAST */
		put_be32(p, 0);
		p += 4;
	}
	else
	{
		*p++ = 0x00;
		put_be32(p, (uint32_t) len);
		p += 4;
		for (size_t i = 0; i < len; i++)
			*p++ = bytes[xt_below(rng, i < 6 ? 2 : 4)];
	}
	*p++ = 0x01;
	put_be32(p, 3);
	p += 4;
	*p++ = "aB"[xt_below(rng, 2)];
	*p++ = "b0"[xt_below(rng, 2)];
	*p++ = 0;
	r->key_len = (uint32_t) (p - r->key);
	r->pos = pos;
}

/*
 * A bigint's image first (as the glue encodes one: sign bit flipped,
 * big-endian), drawn from n / 4 values spread over the whole range, so
 * that the abbreviations vary in all their bits and still tie; then a
 * libc string.
 */
static void
make_rec_int_first(rec *r, xt_rng *rng, uint32_t pos, size_t n)
{
	unsigned char *p = r->key;
	uint64_t	v = xt_next(rng) % (n / 4 + 1) * UINT64_C(0x9E3779B97F4A7C15);

	*p++ = 0x00;
	put_be32(p, 8);
	p += 4;
	for (int i = 7; i >= 0; i--)
		*p++ = (unsigned char) (v >> (8 * i));
	*p++ = 0x00;
	put_be32(p, 3);
	p += 4;
	*p++ = "aB"[xt_below(rng, 2)];
	*p++ = "b0"[xt_below(rng, 2)];
	*p++ = 0;
	r->key_len = (uint32_t) (p - r->key);
	r->pos = pos;
}

static locale_t
test_locale(void)
{
	locale_t	loc = newlocale(LC_COLLATE_MASK, "en_US.UTF-8", (locale_t) 0);

	if (loc == (locale_t) 0)
		loc = newlocale(LC_COLLATE_MASK, "C.UTF-8", (locale_t) 0);
	if (loc == (locale_t) 0)
		loc = newlocale(LC_COLLATE_MASK, "C", (locale_t) 0);
	return loc;
}

typedef enum case_shape
{
	STRING_FIRST,				/* a libc string, then bytes */
	BYTES_FIRST,				/* bytes, then a libc string */
	PREFIXED_FIRST,				/* a case-blind string with a prefix, then bytes */
	INT_FIRST					/* a bigint's image, then a libc string */
} case_shape;

static void
run_case_with(const char *name, size_t n, size_t memory, size_t block, int threads, bool desc,
			  int min_passes, case_shape shape)
{
	locale_t	loc = test_locale();
	xxl_keycol	cols[2] = {{XXL_KEYCOL_COLLATED, desc, 0, xxl_collate_libc, loc},
	{XXL_KEYCOL_BYTES, false, 0, NULL, NULL}};
	xxl_keycol	bcols[2] = {{XXL_KEYCOL_BYTES, false, 0, NULL, NULL},
	{XXL_KEYCOL_COLLATED, desc, 0, xxl_collate_libc, loc}};
	xxl_keycol	pcols[2] = {{XXL_KEYCOL_COLLATED, desc, FOLD_PREFIX, collate_fold, NULL},
	{XXL_KEYCOL_BYTES, false, 0, NULL, NULL}};
	xxl_keycol	icols[2] = {{XXL_KEYCOL_BYTES, false, 0, NULL, NULL},
	{XXL_KEYCOL_COLLATED, desc, 0, xxl_collate_libc, loc}};
	xxl_key_compare kc = {2, shape == BYTES_FIRST ? bcols : shape == PREFIXED_FIRST ? pcols :
		shape == INT_FIRST ? icols : cols};
	rec		   *recs = malloc(n * sizeof(rec));
	rec		   *want = malloc(n * sizeof(rec));
	xt_rng		rng = {(uint64_t) n * 31 + desc};
	xxl_sort_config cfg;
	xxl_error	err;
	xxl_sorter *s;
	xxl_sort_stats st;
	size_t		got = 0,
				bad = 0;

	for (size_t i = 0; i < n; i++)
	{
		if (shape == BYTES_FIRST)
			make_rec_bytes_first(&recs[i], &rng, (uint32_t) i);
		else if (shape == INT_FIRST)
			make_rec_int_first(&recs[i], &rng, (uint32_t) i, n);
		else
			make_rec_prefixed(&recs[i], &rng, (uint32_t) i,
							  shape == PREFIXED_FIRST ? FOLD_PREFIX : 0);
	}
	/* abbreviations that differ order as the keys do */
	for (size_t i = 0; i + 1 < n; i++)
	{
		uint64_t	x = xxl_key_abbrev(&kc, recs[i].key, recs[i].key_len);
		uint64_t	y = xxl_key_abbrev(&kc, recs[i + 1].key, recs[i + 1].key_len);
		int			c = xxl_key_compare_keys(&kc, recs[i].key, recs[i].key_len,
											 recs[i + 1].key, recs[i + 1].key_len);

		if (x != y && (x < y) != (c < 0))
			bad++;
	}
	CHECK_EQ(bad, 0);
	/* a prefixed string orders as the collation says, prefix or not */
	for (size_t i = 0; shape == PREFIXED_FIRST && i + 1 < n; i++)
	{
		const char *x = (const char *) recs[i].key + 5 + FOLD_PREFIX;
		const char *y = (const char *) recs[i + 1].key + 5 + FOLD_PREFIX;
		int			want_c = strcasecmp(x, y) != 0 ? strcasecmp(x, y) : strcmp(x, y);
		int			c = xxl_key_compare_keys(&kc, recs[i].key, recs[i].key_len,
											 recs[i + 1].key, recs[i + 1].key_len);

		if (recs[i].key[0] != 0x01 || recs[i + 1].key[0] != 0x01 || want_c == 0)
			continue;
		if (desc)
			want_c = -want_c;
		if ((c < 0) != (want_c < 0) || c == 0)
			bad++;
	}
	CHECK_EQ(bad, 0);
	memcpy(want, recs, n * sizeof(rec));
	sort_kc = &kc;
	qsort(want, n, sizeof(rec), rec_cmp);

	memset(&cfg, 0, sizeof(cfg));
	cfg.res.memory = memory ? memory : xxl_sort_min_memory(block);
	cfg.res.threads = threads;
	/* as the glue does: a worker sorts each load, with every thread */
	cfg.async_runs = threads > 1;
	cfg.compare = &kc;
	cfg.res.disk.dirs = xt_dirs;
	cfg.res.disk.ndisks = 2;
	cfg.res.disk.file_prefix = "test_keycmp";
	cfg.res.disk.block_size = block;
	cfg.res.disk.strategy = XXL_ALLOC_RANDOM_CYCLING;
	cfg.res.disk.seed = 7;
	xxl_error_clear(&err);
	s = xxl_sorter_create(&cfg, &err);
	CHECK(s != NULL);
	if (s == NULL)
		goto out;
	for (size_t i = 0; i < n; i++)
		CHECK_STATUS(xxl_sorter_put_var(s, recs[i].key, recs[i].key_len, &recs[i].pos, 4), XXL_OK);
	CHECK_STATUS(xxl_sorter_sort(s), XXL_OK);
	for (;;)
	{
		const void *k,
				   *p;
		uint32_t	kl,
					pl,
					pos;
		int			rc = xxl_sorter_next_var(s, &k, &kl, &p, &pl);

		if (rc <= 0)
		{
			CHECK_EQ(rc, 0);
			break;
		}
		memcpy(&pos, p, 4);
		/* the same record as the stable oracle puts here */
		if (got >= n || pos != want[got].pos)
			bad++;
		got++;
	}
	xxl_sorter_stats(s, &st);
	printf("  # %s: %zu records, %llu runs, %d merge passes\n", name, n,
		   (unsigned long long) st.runs, st.merge_passes);
	CHECK_EQ(got, n);
	CHECK_EQ(bad, 0);
	CHECK_GE(st.merge_passes, min_passes);
	xxl_sorter_destroy(s);
out:
	free(recs);
	free(want);
	freelocale(loc);
}

static void
run_case(const char *name, size_t n, size_t memory, size_t block, int threads, bool desc,
		 int min_passes)
{
	run_case_with(name, n, memory, block, threads, desc, min_passes, STRING_FIRST);
}

XT_TEST(keycmp_prefixed_abbreviated)
{
	run_case_with("prefixed, in memory, 2 threads", 100000, 64 * 1024 * 1024, 64 * 1024, 2,
				  false, 0, PREFIXED_FIRST);
	run_case_with("prefixed desc, external", xt_quick() ? 30000 : 150000, 0, 8 * 1024, 2, true, 2,
				  PREFIXED_FIRST);
}

XT_TEST(keycmp_bytes_first_abbreviated)
{
	run_case_with("bytes first, in memory, 2 threads", 100000, 64 * 1024 * 1024, 64 * 1024, 2,
				  false, 0, BYTES_FIRST);
	run_case_with("bytes first, external", xt_quick() ? 30000 : 150000, 0, 8 * 1024, 2, true, 2,
				  BYTES_FIRST);
}

/* abbreviations varying in every bit: the MSD radix by them, on 1 and 2 threads */
XT_TEST(keycmp_int_first_abbreviated)
{
	run_case_with("int first, in memory, 2 threads", 300000, 64 * 1024 * 1024, 64 * 1024, 2,
				  false, 0, INT_FIRST);
	run_case_with("int first, in memory, 1 thread", 100000, 64 * 1024 * 1024, 64 * 1024, 1,
				  false, 0, INT_FIRST);
	run_case_with("int first, external", xt_quick() ? 30000 : 150000, 0, 8 * 1024, 2, true, 2,
				  INT_FIRST);
}

XT_TEST(keycmp_in_memory_parallel)
{
	run_case("in memory, 2 threads", 100000, 64 * 1024 * 1024, 64 * 1024, 2, false, 0);
}

XT_TEST(keycmp_external_many_runs)
{
	run_case("external", xt_quick() ? 20000 : 100000, 0, 16 * 1024, 1, false, 1);
}

XT_TEST(keycmp_external_desc_passes)
{
	run_case("external desc", xt_quick() ? 30000 : 150000, 0, 8 * 1024, 2, true, 2);
}

XT_TEST(keycmp_column_rules)
{
	locale_t	loc = test_locale();
	xxl_keycol	cols[1] = {{XXL_KEYCOL_COLLATED, false, 0, xxl_collate_libc, loc}};
	xxl_key_compare kc = {1, cols};
	unsigned char a[16] = {1, 0, 0, 0, 3, 'a', 'b', 0};
	unsigned char b[16] = {1, 0, 0, 0, 3, 'a', 'B', 0};
	unsigned char n[16] = {0, 0, 0, 0, 0};

	/* NULL flag first; equal strings tie; strcoll decides, strcmp breaks ties */
	CHECK(xxl_key_compare_keys(&kc, n, 5, a, 8) < 0);
	CHECK_EQ(xxl_key_compare_keys(&kc, a, 8, a, 8), 0);
	CHECK_EQ(xxl_key_compare_keys(&kc, n, 5, n, 5), 0);
	CHECK((xxl_key_compare_keys(&kc, a, 8, b, 8) < 0) == (strcoll_l("ab", "aB", loc) < 0 ||
		   (strcoll_l("ab", "aB", loc) == 0 && strcmp("ab", "aB") < 0)));
	cols[0].desc = true;
	CHECK((xxl_key_compare_keys(&kc, a, 8, b, 8) > 0) == (strcoll_l("ab", "aB", loc) < 0 ||
		   (strcoll_l("ab", "aB", loc) == 0 && strcmp("ab", "aB") < 0)));
	/* equal bytes tie without strcoll, descending too */
	CHECK_EQ(xxl_key_compare_keys(&kc, a, 8, a, 8), 0);
	CHECK_EQ(xxl_key_compare_keys(&kc, b, 8, b, 8), 0);
	freelocale(loc);
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
