/*
 * test_pipe.c — unit tests of the batch pipe to a worker thread
 * (xxl_pipe.h): everything written arrives once and in order, with fast and
 * slow consumers and any batch size; drain waits; a consumer's error stops
 * the pipe and is reported; destroy at any point neither hangs nor leaks;
 * the batches come out of the budget.
 */
#include "xxl_test.h"

#include "core/xxl_pipe.h"

#include <unistd.h>

typedef struct sink
{
	uint64_t	next;			/* the value expected next */
	uint64_t	bytes;
	uint64_t	batches;
	bool		in_order;
	int			slow_us;		/* sleep per batch */
	uint64_t	fail_at;		/* fail when this value arrives (0: never) */
} sink;

/* Batches of 8-byte values 1, 2, 3, ...; checks the order. */
static xxl_status
consume(void *arg, const unsigned char *b, size_t len, xxl_error *err)
{
	sink	   *s = arg;

	if (len % 8 != 0)
		s->in_order = false;
	for (size_t i = 0; i + 8 <= len; i += 8)
	{
		uint64_t	v;

		memcpy(&v, b + i, 8);
		if (s->fail_at && v == s->fail_at)
			return xxl_error_set(err, XXL_EIO, 5, "value %llu refused", (unsigned long long) v);
		if (v != s->next)
			s->in_order = false;
		s->next++;
	}
	s->bytes += len;
	s->batches++;
	if (s->slow_us)
		usleep(s->slow_us);
	return XXL_OK;
}

static void
run(size_t batch, int n, uint64_t values, int slow_us, int chunk)
{
	xxl_budget	budget;
	xxl_error	err = {0};
	sink		s = {1, 0, 0, true, slow_us, 0};
	xxl_pipe   *p;
	uint64_t	v = 1;

	xxl_budget_init(&budget, 4 * 1024 * 1024);
	p = xxl_pipe_create(batch, n, consume, &s, &budget, &err);
	REQUIRE_MSG(p != NULL, "create: %s", err.message);
	CHECK_GE(budget.used, batch * n);
	while (v <= values)
	{
		/* chunk values per call (written at once) */
		int			k = (int) (values - v + 1 < (uint64_t) chunk ? values - v + 1 : (uint64_t) chunk);
		unsigned char *at = xxl_pipe_space(p, (size_t) k * 8, &err);

		REQUIRE_MSG(at != NULL, "space: %s", err.message);
		for (int j = 0; j < k; j++, v++)
			memcpy(at + 8 * j, &v, 8);
	}
	CHECK_STATUS(xxl_pipe_drain(p, &err), XXL_OK);
	CHECK(s.in_order);
	CHECK_EQ(s.next, values + 1);
	CHECK_EQ(s.bytes, values * 8);
	/* the pipe goes on after a drain */
	memcpy(xxl_pipe_space(p, 8, &err), &v, 8);
	CHECK_STATUS(xxl_pipe_drain(p, &err), XXL_OK);
	CHECK_EQ(s.next, values + 2);
	if (slow_us)
		CHECK(xxl_pipe_wait_ns(p) > 0);	/* the caller had to wait for the worker */
	xxl_pipe_destroy(p);
	CHECK_EQ(budget.used, 0);
}

XT_TEST(pipe_order)
{
	run(4096, 2, 1000000, 0, 1);
	run(4096, 3, 1000000, 0, 7);
	run(64 * 1024, 4, 3000000, 0, 64);
	run(8, 2, 10000, 0, 1);		/* one value per batch */
	run(24, 2, 10001, 0, 3);	/* whole batches exactly */
	run(4096, 2, 0, 0, 1);		/* nothing */
}

/* Tiny batches and a ring of three: the caller and the worker meet all the time. */
XT_TEST(pipe_stress)
{
	for (int k = 0; k < 4; k++)
		run(24 + 8 * k, 3, xt_quick() ? 200000 : 2000000, 0, 1 + k);
}

XT_TEST(pipe_slow_consumer)
{
	run(4096, 2, 20000, 100, 5);
	run(4096, 5, 20000, 100, 5);
}

XT_TEST(pipe_errors)
{
	xxl_budget	budget;
	xxl_error	err = {0};
	sink		s = {1, 0, 0, true, 0, 5000};
	xxl_pipe   *p;
	unsigned char *at = (unsigned char *) 1;
	uint64_t	v;

	xxl_budget_init(&budget, 1024 * 1024);
	CHECK(xxl_pipe_create(4096, 1, consume, &s, &budget, &err) == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	err = (xxl_error) {0};
	CHECK(xxl_pipe_create(1024 * 1024, 2, consume, &s, &budget, &err) == NULL);
	CHECK_STATUS(err.code, XXL_ENOMEM);	/* the budget */

	/* the consumer fails: a later space or the drain says so */
	err = (xxl_error) {0};
	p = xxl_pipe_create(4096, 2, consume, &s, &budget, &err);
	REQUIRE(p != NULL);
	CHECK(xxl_pipe_space(p, 4097, &err) == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	err = (xxl_error) {0};
	for (v = 1; v <= 100000 && at != NULL; v++)
		if ((at = xxl_pipe_space(p, 8, &err)) != NULL)
			memcpy(at, &v, 8);
	if (at != NULL)
		CHECK_STATUS(xxl_pipe_drain(p, &err), XXL_EIO);
	CHECK_STATUS(err.code, XXL_EIO);
	CHECK_EQ(err.sys_errno, 5);
	printf("  # %s\n", err.message);
	CHECK_EQ(s.next, 5000);		/* nothing after the failure was consumed */
	xxl_pipe_destroy(p);
	CHECK_EQ(budget.used, 0);

	/* destroyed with batches pending: no hang */
	s = (sink) {1, 0, 0, true, 200, 0};
	p = xxl_pipe_create(64, 3, consume, &s, &budget, &err);
	REQUIRE(p != NULL);
	for (v = 1; v <= 1000; v++)
		memcpy(xxl_pipe_space(p, 8, &err), &v, 8);
	xxl_pipe_destroy(p);
	CHECK(s.in_order);
	CHECK_EQ(budget.used, 0);
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
