/*
 * test_env.c — unit tests of the operator environment (xxl_env.h): the
 * reservation API keeps the budget exact, the sorter becomes a
 * distribution sort only when the caller promises a bounded input, the
 * memory really used counts what live shares touched, the host's cancel
 * hook is asked only on the owner thread, spools spill at their own limit
 * or the shared allowance and read back records that span pieces, and
 * every part's I/O is folded into the environment when it closes; a
 * pagefile reads back any record and its memory does not grow with them.
 */
#include "xxl_test.h"

#include "core/xxl_env.h"
#include "core/xxl_pagefile.h"

#include <malloc.h>
#include <pthread.h>
#include <sched.h>

#define KB 1024
#define MB (1024 * 1024)

static size_t
test_min_memory(void)
{
	return 1 * MB;
}

static size_t
test_own_block(size_t memory, size_t max_block)
{
	return memory >= 2 * MB ? 64 * KB : 0;
}

static const xxl_env_plan test_plan = {"test", 4, test_min_memory, test_own_block};

static size_t
smallest_own_block(size_t memory, size_t max_block)
{
	return XXL_ALIGN;
}

/* Streams of the smallest block, as at the smallest budgets. */
static const xxl_env_plan small_block_plan = {"test", 4, test_min_memory, smallest_own_block};

static xxl_resources
resources(size_t memory)
{
	xxl_resources res;

	memset(&res, 0, sizeof(res));
	res.memory = memory;
	res.threads = 2;
	res.disk.dirs = xt_dirs;
	res.disk.ndisks = 2;
	res.disk.file_prefix = "test_env";
	res.disk.try_direct = false;
	res.disk.strategy = XXL_ALLOC_STRIPING;
	return res;
}

/* Every byte back, the environment closed, no spill file left. */
static void
close_checked(xxl_env *env)
{
	CHECK_EQ(env->budget.used, 0);
	xxl_env_close(env);
	CHECK_EQ(xt_spill_files(), 0);
}

static void
put_key(unsigned char *rec, uint64_t k, uint64_t payload)
{
	uint64_t	be = __builtin_bswap64(k);

	memcpy(rec, &be, 8);
	memcpy(rec + 8, &payload, 8);
}

static uint64_t
get_key(const unsigned char *rec)
{
	uint64_t	be;

	memcpy(&be, rec, 8);
	return __builtin_bswap64(be);
}

/* Open -------------------------------------------------------------------- */

XT_TEST(env_open_checks)
{
	xxl_env		env;
	xxl_resources res = resources(512 * KB);

	CHECK_STATUS(xxl_env_open(&env, &res, &test_plan), XXL_EINVAL);
	CHECK(strstr(env.err.message, "minimum") != NULL);
	res = resources(1536 * KB);
	CHECK_STATUS(xxl_env_open(&env, &res, &test_plan), XXL_EINVAL);
	CHECK(strstr(env.err.message, "too small for test operators") != NULL);
	res = resources(8 * MB);
	res.disk.block_size = 5000;
	CHECK_STATUS(xxl_env_open(&env, &res, &test_plan), XXL_EINVAL);
	res = resources(8 * MB);
	REQUIRE(xxl_env_open(&env, &res, &test_plan) == XXL_OK);
	CHECK_EQ(env.disk.block_size, 64 * KB);
	CHECK_EQ(env.spool_allowance, 8 * MB / 16);
	CHECK(env.pool > 0 && env.pool < 8 * MB);
	CHECK(env.disks == NULL);	/* opened at the first spill only */
	xxl_env_close(&env);
}

/*
 * An engine object made in its environment: zeroed, charged to the budget,
 * the environment inside it (its cancel hook pointing there); an object
 * the budget cannot hold leaves nothing open, however often it is tried.
 */
typedef struct test_object
{
	uint64_t	before;
	xxl_env		env;
	uint64_t	after;
} test_object;

XT_TEST(env_new_object)
{
	xxl_resources res = resources(8 * MB);
	xxl_error	err;
	test_object *o;
	struct mallinfo2 m0,
				m1;

	xxl_error_clear(&err);
	o = xxl_env_new_object(&res, &test_plan, sizeof(*o), offsetof(test_object, env), &err);
	REQUIRE(o != NULL);
	CHECK_EQ(o->before, 0);
	CHECK_EQ(o->after, 0);
	CHECK_EQ(o->env.budget.used, xxl_budget_charge(sizeof(*o)));
	CHECK(o->env.disk.pool != NULL && o->env.own_pool);
	{
		xxl_env		env = o->env;	/* the object lives in its own budget */

		xxl_budget_free(&env.budget, o, sizeof(*o));
		close_checked(&env);
	}

	res = resources(512 * KB);
	CHECK(xxl_env_new_object(&res, &test_plan, 64, 0, &err) == NULL);
	CHECK_EQ(err.code, XXL_EINVAL);

	/* the budget cannot hold the object: the environment is closed again */
	res = resources(8 * MB);
	m0 = mallinfo2();
	for (int i = 0; i < 1000; i++)
	{
		xxl_error_clear(&err);
		CHECK(xxl_env_new_object(&res, &test_plan, 16 * MB, 0, &err) == NULL);
	}
	m1 = mallinfo2();
	CHECK_EQ(err.code, XXL_ENOMEM);
	CHECK_LE(m1.uordblks, m0.uordblks + 4096);
}

/*
 * An OpenMP region started by XXL_OMP_PARALLEL runs with every signal
 * blocked on each of its threads, and the starter's mask is back after it.
 */
XT_TEST(omp_region_blocks_signals)
{
	sigset_t	before,
				after;
	int			unblocked = 0,
				ran = 0;

	pthread_sigmask(SIG_SETMASK, NULL, &before);
	REQUIRE(!sigismember(&before, SIGINT));
	XXL_OMP_PARALLEL(num_threads(2) reduction(+:unblocked, ran))
	{
		sigset_t	m;

		pthread_sigmask(SIG_SETMASK, NULL, &m);
		unblocked += !sigismember(&m, SIGINT) || !sigismember(&m, SIGTERM) ||
			!sigismember(&m, SIGUSR1);
		ran++;
	}
	CHECK_EQ(unblocked, 0);
	CHECK_GE(ran, 1);
	pthread_sigmask(SIG_SETMASK, NULL, &after);
	CHECK(!sigismember(&after, SIGINT) && !sigismember(&after, SIGUSR1));
}

/* Reservations ------------------------------------------------------------ */

XT_TEST(env_reservations)
{
	xxl_env		env;
	xxl_resources res = resources(16 * MB);
	size_t		held = 0;

	REQUIRE(xxl_env_open(&env, &res, &test_plan) == XXL_OK);
	CHECK_STATUS(xxl_env_reserve(&env, 4 * MB, "part"), XXL_OK);
	CHECK_EQ(env.budget.used, 4 * MB);
	CHECK_STATUS(xxl_env_resize(&env, &held, 3 * MB + 1, "part"), XXL_OK);
	CHECK_EQ(held, 3 * MB + XXL_ALIGN);	/* whole pages */
	CHECK_EQ(env.budget.used, 7 * MB + XXL_ALIGN);
	CHECK_STATUS(xxl_env_resize(&env, &held, 1 * MB, "part"), XXL_OK);
	CHECK_EQ(env.budget.used, 5 * MB);
	/* beyond the budget: refused, nothing held */
	CHECK_STATUS(xxl_env_reserve(&env, 12 * MB, "big part"), XXL_ENOMEM);
	CHECK(strstr(env.err.message, "big part") != NULL);
	CHECK_EQ(env.budget.used, 5 * MB);
	CHECK_STATUS(xxl_env_resize(&env, &held, 0, "part"), XXL_OK);
	xxl_env_release(&env, 4 * MB);
	CHECK_EQ(env.budget.used, 0);
	CHECK_GE(env.budget.peak, 7 * MB + XXL_ALIGN);
	xxl_env_close(&env);
}

/* Sorters ----------------------------------------------------------------- */

static void
sort_and_check(xxl_env *env, xxl_env_input input, size_t memory, uint64_t n, bool *was_dsort)
{
	xxl_env_sorter ts;
	xt_rng		rng = {7};
	uint64_t	sum = 0,
				got_sum = 0,
				prev = 0,
				count = 0;
	const unsigned char *rec;
	unsigned char local[16];
	int			rc;

	REQUIRE(xxl_env_sort_open(env, &ts, memory, 0, 16, 8, n, input) == XXL_OK);
	*was_dsort = ts.d != NULL;
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	k = xt_next(&rng);

		put_key(xxl_env_sort_room(&ts, local), k, i);
		sum += k;
		REQUIRE(xxl_env_sort_push(env, &ts, xxl_env_sort_room(&ts, local)) == XXL_OK);
	}
	REQUIRE(xxl_env_sort_sort(env, &ts) == XXL_OK);
	while ((rc = xxl_env_sort_next(env, &ts, &rec)) > 0)
	{
		uint64_t	k = get_key(rec);

		CHECK(count == 0 || k >= prev);
		prev = k;
		got_sum += k;
		count++;
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(count, n);
	CHECK_EQ(got_sum, sum);
	xxl_env_sort_close(env, &ts, NULL, NULL);
}

XT_TEST(env_sorter_kinds)
{
	xxl_env		env;
	xxl_resources res = resources(32 * MB);
	uint64_t	n = xt_quick() ? 200000 : 600000;
	bool		dsort;

	REQUIRE(xxl_env_open(&env, &res, &test_plan) == XXL_OK);
	/* unbounded: the core sorter, spilling (16 bytes x n far beyond 2 MB) */
	sort_and_check(&env, XXL_INPUT_UNBOUNDED, 2 * MB, n, &dsort);
	CHECK(!dsort);
	CHECK_EQ(env.done.sorts, 1);
	CHECK(env.done.runs > 1);
	/* bounded: a distribution sort */
	sort_and_check(&env, XXL_INPUT_BOUNDED, 4 * MB, n, &dsort);
	CHECK(dsort);
	CHECK_EQ(env.done.sorts, 2);
	CHECK_EQ(env.done.sorted_bytes, 2 * n * 16);
	/* both spilled, and their I/O is in the environment's fold */
	{
		uint64_t	rd,
					wr,
					wait;
		bool		direct;

		xxl_env_io_sum(&env, &rd, &wr, &wait, &direct);
		CHECK(wr >= 2 * n * 16);
		CHECK(rd >= 2 * n * 16);
		CHECK(!direct);			/* the resources said buffered */
	}
	CHECK_EQ(env.budget.used, 0);
	CHECK_LE(env.budget.peak, env.budget.limit);
	xxl_env_close(&env);
	CHECK_EQ(xt_spill_files(), 0);
}

XT_TEST(env_used_peak_counts_touched)
{
	xxl_env		env;
	xxl_resources res = resources(256 * MB);
	xxl_env_sorter ts;
	unsigned char rec[16];
	const unsigned char *out;

	REQUIRE(xxl_env_open(&env, &res, &test_plan) == XXL_OK);
	REQUIRE(xxl_env_sort_open(&env, &ts, 128 * MB, 0, 16, 8, 0, XXL_INPUT_UNBOUNDED) == XXL_OK);
	for (uint64_t i = 0; i < 1000; i++)
	{
		put_key(rec, 1000 - i, i);
		REQUIRE(xxl_env_sort_put(&env, &ts, rec) == XXL_OK);
	}
	REQUIRE(xxl_env_sort_sort(&env, &ts) == XXL_OK);
	REQUIRE(xxl_env_sort_next(&env, &ts, &out) == 1);
	CHECK_EQ(get_key(out), 1);
	xxl_env_sort_close(&env, &ts, NULL, NULL);
	/* the share was held whole, but only what the sorter touched was used */
	CHECK_GE(env.budget.peak, 128 * MB);
	CHECK_LE(xxl_env_used_peak(&env), 16 * MB);
	CHECK_EQ(env.budget.used, 0);
	xxl_env_close(&env);
}

/* Cancel ------------------------------------------------------------------ */

static pthread_t owner_thread;
static int	host_calls_owner;
static int	host_calls_other;
static bool host_says_stop;

static bool
host_hook(void *arg)
{
	if (pthread_equal(pthread_self(), owner_thread))
		host_calls_owner++;
	else
		__atomic_add_fetch(&host_calls_other, 1, __ATOMIC_RELAXED);
	return host_says_stop;
}

typedef struct poller
{
	xxl_env    *env;
	int			saw_stop;		/* the worker's poll after the owner's stop */
	int			early_stop;		/* a stop before it: wrong */
	int			ready;			/* atomic: the worker's first polls are done */
	int			go;				/* atomic: the owner has asked the host */
} poller;

static void *
poll_main(void *arg)
{
	poller	   *p = arg;

	for (int i = 0; i < 1000; i++)
		p->early_stop += p->env->cancel(p->env->cancel_arg);
	__atomic_store_n(&p->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&p->go, __ATOMIC_ACQUIRE))
		sched_yield();			/* a busy machine may give both threads one core */
	p->saw_stop = p->env->cancel(p->env->cancel_arg);
	return NULL;
}

XT_TEST(env_cancel_owner_only)
{
	xxl_env		env;
	xxl_resources res = resources(8 * MB);
	poller		p = {0};
	pthread_t	t;

	owner_thread = pthread_self();
	host_calls_owner = host_calls_other = 0;
	host_says_stop = false;
	res.cancel = host_hook;
	REQUIRE(xxl_env_open(&env, &res, &test_plan) == XXL_OK);
	/* the owner asks the host */
	CHECK(!xxl_env_canceled(&env));
	CHECK_EQ(host_calls_owner, 1);
	/* a worker polls the same hook, but only sees the stop flag */
	p.env = &env;
	REQUIRE(pthread_create(&t, NULL, poll_main, &p) == 0);
	while (!__atomic_load_n(&p.ready, __ATOMIC_ACQUIRE))
		sched_yield();
	host_says_stop = true;
	CHECK(xxl_env_host_stop(&env));	/* the owner passes the stop on */
	__atomic_store_n(&p.go, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CHECK_EQ(p.early_stop, 0);
	CHECK_EQ(p.saw_stop, 1);
	CHECK_EQ(__atomic_load_n(&host_calls_other, __ATOMIC_RELAXED), 0);
	/* and the owner's next poll is a cancel with its error */
	CHECK(xxl_env_canceled(&env));
	CHECK_STATUS(env.err.code, XXL_ECANCELED);
	xxl_env_close(&env);
}

/* Spools ------------------------------------------------------------------ */

static void
write_records(xxl_spool *sp, uint64_t n, uint64_t seed)
{
	unsigned char rec[24];

	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	v[3] = {i, i ^ seed, i * 3};

		memcpy(rec, v, 24);
		REQUIRE(xxl_spool_write(sp, rec, 24) == XXL_OK);
	}
	REQUIRE(xxl_spool_finish(sp) == XXL_OK);
}

static void
read_records_as(xxl_spool *sp, uint64_t n, uint64_t seed, bool consume)
{
	xxl_spool_reader rd;
	const unsigned char *p;
	uint64_t	bad = 0;

	REQUIRE(xxl_spool_reader_open(&rd, sp, consume) == XXL_OK);
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	v[3];

		REQUIRE(xxl_spool_read(&rd, 24, &p) == XXL_OK);
		memcpy(v, p, 24);
		bad += v[0] != i || v[1] != (i ^ seed) || v[2] != i * 3;
	}
	CHECK_EQ(bad, 0);
	/* one byte past the end is an error */
	CHECK_STATUS(xxl_spool_read(&rd, 1, &p), XXL_EINVAL);
	xxl_spool_reader_close(&rd);
}

static void
read_records(xxl_spool *sp, uint64_t n, uint64_t seed)
{
	read_records_as(sp, n, seed, false);
}

XT_TEST(env_spools)
{
	xxl_env		env;
	xxl_resources res = resources(8 * MB);
	xxl_spool	small,
				own,
				shared;
	uint64_t	big = 40000;	/* 960 kB of records: beyond either limit */

	REQUIRE(xxl_env_open(&env, &res, &test_plan) == XXL_OK);
	/* own limit, small data: stays in memory */
	xxl_spool_init(&small, &env, 256 * KB);
	write_records(&small, 1000, 1);
	CHECK(!small.on_disk);
	CHECK(env.disks == NULL);
	read_records(&small, 1000, 1);
	/* own limit exceeded: spilled */
	xxl_spool_init(&own, &env, 256 * KB);
	write_records(&own, big, 2);
	CHECK(own.on_disk);
	read_records(&own, big, 2);
	/* shared: spills when all spools together outgrow the allowance (512 kB) */
	xxl_spool_init(&shared, &env, XXL_SPOOL_SHARED);
	write_records(&shared, big, 3);
	CHECK(shared.on_disk);
	read_records(&shared, big, 3);
	CHECK(env.done.spool_bytes > 0);
	xxl_spool_free(&small);
	xxl_spool_free(&own);
	xxl_spool_free(&shared);
	CHECK_EQ(env.spool_mem, 0);
	close_checked(&env);
}

/*
 * One write larger than a chunk, in memory and spilling midway: it reads
 * back as written (its chunks are added before they are filled, so the
 * spill must not write the ones it never filled), by records and by
 * xxl_spool_read_upto in lengths that span pieces (and xxl_spool_read_exact
 * fails past the end).
 */
XT_TEST(env_spool_large_writes)
{
	xxl_env		env;
	xxl_resources res = resources(8 * MB);
	size_t		sizes[] = {100 * KB, 300 * KB, 700 * KB, 3 * MB};

	REQUIRE(xxl_env_open(&env, &res, &test_plan) == XXL_OK);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (int before = 0; before < 2; before++)
		{
			size_t		n = sizes[k] / sizeof(uint32_t);
			uint32_t   *buf = malloc(sizes[k]);
			xxl_spool	sp;
			xxl_spool_reader rd;
			const unsigned char *p;
			uint32_t	lead = 0xabcdef;

			for (size_t i = 0; i < n; i++)
				buf[i] = (uint32_t) (i * 2654435761u);
			xxl_spool_init(&sp, &env, XXL_SPOOL_SHARED);
			if (before)
				REQUIRE(xxl_spool_write(&sp, &lead, sizeof(lead)) == XXL_OK);
			REQUIRE(xxl_spool_write(&sp, buf, sizes[k]) == XXL_OK);
			REQUIRE(xxl_spool_finish(&sp) == XXL_OK);
			CHECK_EQ(sp.nbytes, sizes[k] + (before ? sizeof(lead) : 0));
			/* read back in pieces of any length, after a record read: short only at the end */
			{
				unsigned char *back = malloc(sizes[k] + 100003);
				size_t		at = 0,
							got;

				REQUIRE(xxl_spool_reader_open(&rd, &sp, false) == XXL_OK);
				if (before)
					REQUIRE(xxl_spool_read(&rd, sizeof(lead), &p) == XXL_OK);
				do
				{
					REQUIRE(xxl_spool_read_upto(&rd, back + at, 100003, &got) == XXL_OK);
					at += got;
				} while (got == 100003);
				CHECK_EQ(at, sizes[k]);
				CHECK_EQ(memcmp(back, buf, sizes[k]), 0);
				REQUIRE(xxl_spool_read_upto(&rd, back, 1, &got) == XXL_OK);
				CHECK_EQ(got, 0);
				/* an exact read past the end is an error */
				CHECK_EQ(xxl_spool_read_exact(&rd, back, 1), XXL_EINVAL);
				xxl_error_clear(&env.err);
				xxl_spool_reader_close(&rd);
				free(back);
			}
			REQUIRE(xxl_spool_reader_open(&rd, &sp, true) == XXL_OK);
			if (before)
			{
				REQUIRE(xxl_spool_read(&rd, sizeof(lead), &p) == XXL_OK);
				CHECK_EQ(memcmp(p, &lead, sizeof(lead)), 0);
			}
			for (size_t i = 0; i < n; i++)
			{
				REQUIRE(xxl_spool_read(&rd, sizeof(uint32_t), &p) == XXL_OK);
				if (memcmp(p, &buf[i], sizeof(uint32_t)) != 0)
				{
					CHECK_MSG(false, "%zu bytes (lead %d): entry %zu differs", sizes[k], before, i);
					break;
				}
			}
			xxl_spool_reader_close(&rd);
			xxl_spool_free(&sp);
			free(buf);
		}
	CHECK_EQ(env.spool_mem, 0);
	close_checked(&env);
}

/*
 * The last read of a spool on disk frees its blocks as it goes: a spool
 * written after it takes the same space in the operator's files, and the
 * consumed spool is empty.
 */
XT_TEST(env_spool_consumed_on_disk)
{
	xxl_env		env;
	xxl_resources res = resources(8 * MB);
	xxl_spill_account acc;
	xxl_spool	a,
				b;
	uint64_t	big = 60000,
				used;
	xxl_spool_reader rd;
	const unsigned char *p;
	size_t		len;

	xxl_spill_account_init(&acc, 0);
	res.disk.account = &acc;
	REQUIRE(xxl_env_open(&env, &res, &test_plan) == XXL_OK);
	xxl_spool_init(&a, &env, 256 * KB);
	write_records(&a, big, 5);
	REQUIRE(a.on_disk);
	read_records(&a, big, 5);	/* not consumed: can be read again */
	used = acc.used;
	CHECK(used >= big * 24);
	read_records_as(&a, big, 5, true);
	CHECK_EQ(a.nbytes, 0);
	REQUIRE(xxl_spool_reader_open(&rd, &a, false) == XXL_OK);
	CHECK_STATUS(xxl_spool_reader_piece(&rd, &p, &len), XXL_OK);
	CHECK_EQ(len, 0);
	xxl_spool_reader_close(&rd);
	xxl_spool_init(&b, &env, 256 * KB);
	write_records(&b, big, 6);
	CHECK_EQ(acc.used, used);
	read_records(&b, big, 6);
	xxl_spool_free(&a);
	xxl_spool_free(&b);
	CHECK_EQ(env.budget.used, 0);
	xxl_env_close(&env);
	CHECK_EQ(acc.used, 0);
	CHECK_EQ(xt_spill_files(), 0);
	xxl_spill_account_destroy(&acc);
}

/* Scatters and queues ----------------------------------------------------- */

XT_TEST(env_scatter_and_queue)
{
	xxl_env		env;
	xxl_resources res = resources(16 * MB);
	xxl_env_scatter sc;
	xxl_env_queue q;
	uint64_t	n = 300000;
	const unsigned char *rec;
	uint64_t	bad = 0,
				i = 0;
	int			rc;

	REQUIRE(xxl_env_open(&env, &res, &test_plan) == XXL_OK);
	/* slot (i * 7919) mod n gets i: read back in slot order */
	REQUIRE(xxl_env_scat_fits(&env, 1 * MB, 8, n));
	REQUIRE(xxl_env_scat_open(&env, &sc, 1 * MB, 8, n) == XXL_OK);
	for (uint64_t k = 0; k < n; k++)
	{
		memcpy(xxl_env_scat_room(&sc), &k, 8);
		REQUIRE(xxl_env_scat_push(&env, &sc, (k * 7919) % n) == XXL_OK);
	}
	REQUIRE(xxl_env_scat_finish(&env, &sc) == XXL_OK);
	while ((rc = xxl_env_scat_next(&env, &sc, &rec)) > 0)
	{
		uint64_t	v;

		memcpy(&v, rec, 8);
		bad += (v * 7919) % n != i;
		i++;
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(i, n);
	CHECK_EQ(bad, 0);
	xxl_env_scat_close(&env, &sc, NULL, NULL);
	CHECK_EQ(env.done.scattered_bytes, n * 8);

	/* a queue: pops in key order */
	REQUIRE(xxl_env_queue_open(&env, &q, 2 * MB, 16, 8) == XXL_OK);
	for (uint64_t k = 0; k < n; k++)
	{
		unsigned char r[16];

		put_key(r, (k * 7919) % n, k);
		REQUIRE(xxl_env_queue_push(&env, &q, r) == XXL_OK);
	}
	bad = 0;
	for (uint64_t k = 0; k < n; k++)
	{
		unsigned char r[16];

		REQUIRE(xxl_env_queue_pop(&env, &q, r) == 1);
		bad += get_key(r) != k;
	}
	CHECK_EQ(bad, 0);
	xxl_env_queue_close(&env, &q);
	CHECK_EQ(env.done.pq_pushes, n);
	close_checked(&env);
}

/*
 * A pagefile's records read back at any index, and its memory does not
 * grow with them: 32 MB of records in 4 kB blocks once kept an 8-byte
 * block id per block (64 kB here, gigabytes' worth past a 1MB budget).
 */
XT_TEST(env_pagefile_memory_stays_flat)
{
	xxl_env		env;
	xxl_resources res = resources(4 * MB);
	xxl_pagefile f;
	uint64_t	n = xt_quick() ? 250000 : 1000000;
	size_t		before;
	uint64_t	bad = 0;

	REQUIRE(xxl_env_open(&env, &res, &small_block_plan) == XXL_OK);
	REQUIRE(xxl_pagefile_open(&f, &env, xxl_pagefile_page_for(&env, 16384), 32) == XXL_OK);
	before = env.budget.used;
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	r[4] = {i, ~i, i * 7919, 0};

		REQUIRE(xxl_pagefile_append(&f, r) == XXL_OK);
	}
	CHECK_MSG(env.budget.used - before <= 1024, "%zu bytes grew with %" PRIu64 " records",
			  env.budget.used - before, n);
	REQUIRE(xxl_pagefile_finish(&f, 64 * KB) == XXL_OK);
	for (uint64_t k = 0; k < 200000; k++)
	{
		uint64_t	i = (k * 104729) % n;
		const unsigned char *r;
		uint64_t	v[4];

		REQUIRE(xxl_pagefile_get(&f, i, &r) == XXL_OK);
		memcpy(v, r, sizeof(v));
		bad += v[0] != i || v[1] != ~i || v[2] != i * 7919;
	}
	CHECK_EQ(bad, 0);
	xxl_pagefile_close(&f);
	close_checked(&env);
}

/*
 * A permutation too large for its share's buckets is sorted by slot: it
 * comes out in slot order all the same, within the budget, and a slot put
 * twice, out of range or left empty is still an error.
 */
/* Record k (k and a tag of it) put at slot k * 7919 mod n: n coprime to 7919. */
static void
put_tagged(xxl_env *env, xxl_env_scatter *sc, uint64_t n)
{
	for (uint64_t k = 0; k < n; k++)
	{
		unsigned char *r = xxl_env_scat_room(sc);
		uint32_t	tag = (uint32_t) (k * 2654435761u);

		memcpy(r, &k, 8);
		memcpy(r + 8, &tag, 4);
		REQUIRE(xxl_env_scat_push(env, sc, (k * 7919) % n) == XXL_OK);
	}
}

/* The permutation read back, every slot's record checked; *used: the budget in use at the first. */
static void
read_tagged(xxl_env *env, xxl_env_scatter *sc, uint64_t n, size_t *used)
{
	const unsigned char *rec;
	uint64_t	bad = 0,
				i = 0;
	int			rc;

	while ((rc = xxl_env_scat_next(env, sc, &rec)) > 0)
	{
		uint64_t	v;
		uint32_t	tag;

		if (i == 0 && used)
			*used = env->budget.used;
		memcpy(&v, rec, 8);
		memcpy(&tag, rec + 8, 4);
		bad += (v * 7919) % n != i || tag != (uint32_t) (v * 2654435761u);
		i++;
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(i, n);
	CHECK_EQ(bad, 0);
}

XT_TEST(env_scatter_too_large_sorts)
{
	xxl_env		env;
	xxl_resources res = resources(4 * MB);
	xxl_env_scatter sc;
	uint64_t	n = xt_quick() ? 500000 : 2000000;
	size_t		share = 160 * KB;
	const unsigned char *rec;
	uint64_t	i = 0;
	int			rc;

	REQUIRE(xxl_env_open(&env, &res, &test_plan) == XXL_OK);
	CHECK(!xxl_env_scat_fits(&env, share, 12, n));
	REQUIRE(xxl_env_scat_open(&env, &sc, share, 12, n) == XXL_OK);
	CHECK(sc.sorted != NULL);
	put_tagged(&env, &sc, n);
	REQUIRE(xxl_env_scat_finish(&env, &sc) == XXL_OK);
	read_tagged(&env, &sc, n, NULL);
	CHECK_LE(env.budget.peak, res.memory);
	xxl_env_scat_close(&env, &sc, NULL, NULL);
	CHECK_EQ(env.done.scattered_bytes, n * 12);
	CHECK_EQ(env.budget.used, 0);

	/* slot 5 twice, slot 6 never: the read that reaches them says so */
	REQUIRE(xxl_env_scat_open(&env, &sc, share, 12, n) == XXL_OK);
	for (uint64_t k = 0; k < n; k++)
	{
		memset(xxl_env_scat_room(&sc), 0, 12);
		REQUIRE(xxl_env_scat_push(&env, &sc, k == 6 ? 5 : k) == XXL_OK);
	}
	REQUIRE(xxl_env_scat_finish(&env, &sc) == XXL_OK);
	for (i = 0; (rc = xxl_env_scat_next(&env, &sc, &rec)) > 0; i++)
		;
	CHECK_EQ(rc, -1);
	CHECK_LE(i, 6);	/* records come out in batches: the error may come first */
	CHECK_STATUS(env.err.code, XXL_EINVAL);
	CHECK_MSG(strstr(env.err.message, "slot 5 put twice") != NULL, "%s", env.err.message);
	xxl_env_scat_close(&env, &sc, NULL, NULL);
	xxl_error_clear(&env.err);

	REQUIRE(xxl_env_scat_open(&env, &sc, share, 12, n) == XXL_OK);
	memset(xxl_env_scat_room(&sc), 0, 12);
	CHECK_STATUS(xxl_env_scat_push(&env, &sc, n), XXL_EINVAL);
	xxl_env_scat_close(&env, &sc, NULL, NULL);
	xxl_error_clear(&env.err);
	close_checked(&env);
}

/*
 * A scatter charged by phase: a share too small for a scatter of both
 * phases is enough for the reading when the distribution has more; the
 * distribution's reservation is held from the open to the finish, nothing
 * till the first read, then the reading's; the output is the permutation.
 */
XT_TEST(env_scatter_split_phases)
{
	xxl_env		env;
	xxl_resources res = resources(8 * MB);
	xxl_env_scatter sc;
	uint64_t	n = xt_quick() ? 500000 : 2000000;
	size_t		sym,
				wr,
				rd,
				used = 0;

	REQUIRE(xxl_env_open(&env, &res, &test_plan) == XXL_OK);
	sym = xxl_env_scat_least(&env, 12, n, env.pool);
	REQUIRE(sym > 0);
	wr = 2 * sym;
	rd = xxl_env_scat_least_read(&env, 12, n, wr, env.pool);
	printf("  # %llu records of 12 bytes: %zu kB for both phases, or %zu kB and then %zu kB\n",
		   (unsigned long long) n, sym / KB, wr / KB, rd / KB);
	REQUIRE(rd > 0);
	CHECK_MSG(rd < sym * 3 / 4, "reading %zu kB beside writing %zu kB, %zu kB for both",
			  rd / KB, wr / KB, sym / KB);
	CHECK(!xxl_env_scat_fits(&env, rd, 12, n));
	CHECK(xxl_env_scat_fits_split(&env, wr, rd, 12, n));
	CHECK(!xxl_env_scat_fits_split(&env, wr, rd - XXL_ALIGN, 12, n));

	REQUIRE(xxl_env_scat_open_split(&env, &sc, wr, rd, 12, n) == XXL_OK);
	REQUIRE(sc.s != NULL);
	CHECK(sc.split);
	CHECK_LE(sc.memory, wr);
	CHECK_LE(sc.read_need, rd);
	put_tagged(&env, &sc, n);
	CHECK_GE(env.budget.used, sc.memory);
	REQUIRE(xxl_env_scat_finish(&env, &sc) == XXL_OK);
	/* between the phases: nothing reserved, the batch given back */
	CHECK_EQ(sc.memory, 0);
	CHECK_EQ(env.budget.used, 0);
	read_tagged(&env, &sc, n, &used);
	CHECK_EQ(used, sc.read_need);
	CHECK_LE(env.budget.peak, res.memory);
	xxl_env_scat_close(&env, &sc, NULL, NULL);
	CHECK_EQ(env.budget.used, 0);

	/* a split too small for a scatter: the sort by slot, with the smaller share */
	REQUIRE(xxl_env_scat_open_split(&env, &sc, rd, rd, 12, n) == XXL_OK);
	CHECK(sc.sorted != NULL);
	xxl_env_scat_close(&env, &sc, NULL, NULL);
	CHECK_EQ(env.budget.used, 0);
	close_checked(&env);
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
