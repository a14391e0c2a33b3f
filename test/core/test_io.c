/*
 * test_io.c — unit tests of the asynchronous I/O layer and the block manager
 * (xxl_io.h), plus the error record and memory budget of xxl_common.h.
 *
 * Covers: many writes and reads in flight over several disks with content
 * checks, per-disk counters, block placement (striping, randomized cycling),
 * block reuse, spill file removal, open errors, the spill limit and injected
 * write failures, and that the I/O threads go away with the disk set.
 */
#include "xxl_test.h"

#include "core/xxl_io.h"

#include <sys/uio.h>

#define BS (64 * 1024)

/* A disk set over the first ndisks spill directories. */
static xxl_disk_config
disk_config(int ndisks, size_t block_size, xxl_alloc_strategy strategy, bool direct)
{
	xxl_disk_config c;

	memset(&c, 0, sizeof(c));
	c.dirs = xt_dirs;
	c.ndisks = ndisks;
	c.file_prefix = "test_io";
	c.block_size = block_size;
	c.try_direct = direct;
	c.strategy = strategy;
	c.seed = 12345;
	c.inline_below = 1;			/* these tests are of the threads' queues */
	return c;
}

static void *
aligned_block(size_t size)
{
	void	   *p = NULL;

	if (posix_memalign(&p, XXL_ALIGN, size) != 0)
		return NULL;
	return p;
}

/* Deterministic contents of block number i. */
static void
fill_block(unsigned char *buf, size_t len, uint64_t i)
{
	xt_rng		r = {i * 7919 + 1};

	for (size_t off = 0; off < len; off += 8)
	{
		uint64_t	v = xt_next(&r);

		memcpy(buf + off, &v, 8);
	}
}

/*
 * Write nblocks blocks with every request posted before the first wait, read
 * them all back the same way, compare, and check the counters.
 */
static void
write_read_roundtrip(int ndisks, xxl_alloc_strategy strategy, bool direct, int nblocks,
					 int threads_per_disk)
{
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(ndisks, BS, strategy, direct);
	int			threads0 = xt_thread_count();
	xxl_disks  *d;

	cfg.threads_per_disk = threads_per_disk;
	d = xxl_disks_open(&cfg, &err);
	xxl_bid    *bids = calloc(nblocks, sizeof(xxl_bid));
	xxl_io_request *req = calloc(nblocks, sizeof(xxl_io_request));
	unsigned char **wbuf = calloc(nblocks, sizeof(void *));
	unsigned char **rbuf = calloc(nblocks, sizeof(void *));
	uint64_t	per_disk[XXL_MAX_DISKS] = {0};
	xxl_io_stats st;
	uint64_t	sum_w = 0,
				sum_r = 0,
				nw = 0,
				nr = 0;
	int			mismatches = 0;

	REQUIRE_MSG(d != NULL, "xxl_disks_open: %s (%s)", err.message, xxl_status_name(err.code));
	CHECK_EQ(xxl_disks_count(d), ndisks);
	CHECK_EQ(xxl_disks_block_size(d), BS);
	for (int i = 0; i < ndisks; i++)
		CHECK_EQ(xt_dir_count(xt_dirs[i]), 1);	/* one spill file per disk */
	CHECK_EQ(xt_thread_count(),
			 threads0 + ndisks * (threads_per_disk > 0 ? threads_per_disk : 2));

	for (int i = 0; i < nblocks; i++)
	{
		CHECK_STATUS(xxl_block_alloc(d, &bids[i], &err), XXL_OK);
		CHECK(XXL_BID_DISK(bids[i]) >= 0 && XXL_BID_DISK(bids[i]) < ndisks);
		CHECK_EQ(XXL_BID_OFFSET(bids[i]) % BS, 0);
		per_disk[XXL_BID_DISK(bids[i])]++;
		wbuf[i] = aligned_block(BS);
		rbuf[i] = aligned_block(BS);
		fill_block(wbuf[i], BS, (uint64_t) i);
		memset(rbuf[i], 0xEE, BS);
	}
	/* every bid distinct */
	for (int i = 0; i < nblocks; i++)
		for (int j = i + 1; j < nblocks; j++)
			if (bids[i] == bids[j])
				mismatches++;
	CHECK_MSG(mismatches == 0, "%d duplicate block ids", mismatches);

	/* all writes in flight at once */
	for (int i = 0; i < nblocks; i++)
	{
		req[i].bid = bids[i];
		req[i].buf = wbuf[i];
		req[i].len = BS;
		req[i].is_write = true;
		xxl_io_post(d, &req[i]);
	}
	/* wait out of order: last first */
	for (int i = nblocks - 1; i >= 0; i--)
		CHECK_STATUS(xxl_io_wait(d, &req[i], &err), XXL_OK);
	for (int i = 0; i < nblocks; i++)
		CHECK(xxl_io_done(&req[i]));

	/* all reads in flight at once, in a scrambled order */
	for (int k = 0; k < nblocks; k++)
	{
		int			i = (int) (((uint64_t) k * 7) % (uint64_t) nblocks);

		if (nblocks % 7 == 0)
			i = k;
		req[i].bid = bids[i];
		req[i].buf = rbuf[i];
		req[i].len = BS;
		req[i].is_write = false;
		xxl_io_post(d, &req[i]);
	}
	for (int i = 0; i < nblocks; i++)
		CHECK_STATUS(xxl_io_wait(d, &req[i], &err), XXL_OK);
	mismatches = 0;
	for (int i = 0; i < nblocks; i++)
		if (memcmp(wbuf[i], rbuf[i], BS) != 0)
			mismatches++;
	CHECK_MSG(mismatches == 0, "%d of %d blocks read back differ", mismatches, nblocks);

	xxl_disks_stats(d, &st);
	CHECK_EQ(st.ndisks, ndisks);
	for (int i = 0; i < ndisks; i++)
	{
		CHECK_EQ(st.disk[i].writes, per_disk[i]);
		CHECK_EQ(st.disk[i].reads, per_disk[i]);
		CHECK_EQ(st.disk[i].bytes_written, per_disk[i] * BS);
		CHECK_EQ(st.disk[i].bytes_read, per_disk[i] * BS);
		sum_w += st.disk[i].bytes_written;
		sum_r += st.disk[i].bytes_read;
		nw += st.disk[i].writes;
		nr += st.disk[i].reads;
	}
	CHECK_EQ(sum_w, (uint64_t) nblocks * BS);
	CHECK_EQ(sum_r, (uint64_t) nblocks * BS);
	CHECK_EQ(nw, nblocks);
	CHECK_EQ(nr, nblocks);
	CHECK_EQ(st.spill_bytes_peak, (uint64_t) nblocks * BS);
	CHECK_EQ(st.direct, xxl_disks_direct(d));
	if (!direct)
		CHECK(!st.direct);

	xxl_disks_close(d);
	for (int i = 0; i < ndisks; i++)
		CHECK_EQ(xt_dir_count(xt_dirs[i]), 0);	/* close removes the files */
	CHECK_EQ(xt_threads_at_most(threads0), threads0);
	for (int i = 0; i < nblocks; i++)
	{
		free(wbuf[i]);
		free(rbuf[i]);
	}
	free(wbuf);
	free(rbuf);
	free(req);
	free(bids);
}

XT_TEST(roundtrip_3disks_striping_direct)
{
	write_read_roundtrip(3, XXL_ALLOC_STRIPING, true, xt_quick() ? 30 : 300, 0);
}

XT_TEST(roundtrip_2disks_random_cycling_buffered)
{
	write_read_roundtrip(2, XXL_ALLOC_RANDOM_CYCLING, false, xt_quick() ? 20 : 200, 4);
}

XT_TEST(roundtrip_1disk)
{
	write_read_roundtrip(1, XXL_ALLOC_STRIPING, true, 50, 1);
}

/* Short transfers (len < block size, a multiple of XXL_ALIGN) work too. */
XT_TEST(partial_block_transfers)
{
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(2, BS, XXL_ALLOC_STRIPING, true);
	xxl_disks  *d = xxl_disks_open(&cfg, &err);
	unsigned char *w = aligned_block(BS),
			   *r = aligned_block(BS);
	xxl_io_request req = {0};
	xxl_bid		bid;
	xxl_io_stats st;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	fill_block(w, BS, 99);
	CHECK_STATUS(xxl_block_alloc(d, &bid, &err), XXL_OK);
	req.bid = bid;
	req.buf = w;
	req.len = 3 * XXL_ALIGN;
	req.is_write = true;
	xxl_io_post(d, &req);
	/* poll for completion instead of blocking */
	while (!xxl_io_done(&req))
		usleep(100);
	CHECK_STATUS(xxl_io_wait(d, &req, &err), XXL_OK);
	memset(r, 0, BS);
	req.buf = r;
	req.is_write = false;
	xxl_io_post(d, &req);
	CHECK_STATUS(xxl_io_wait(d, &req, &err), XXL_OK);
	CHECK(memcmp(w, r, 3 * XXL_ALIGN) == 0);
	/* a request never posted (state idle) waits trivially */
	{
		xxl_io_request idle = {0};

		CHECK_STATUS(xxl_io_wait(d, &idle, &err), XXL_OK);
	}
	xxl_disks_stats(d, &st);
	CHECK_EQ(st.disk[XXL_BID_DISK(bid)].bytes_written, 3 * XXL_ALIGN);
	CHECK_EQ(st.disk[XXL_BID_DISK(bid)].bytes_read, 3 * XXL_ALIGN);
	xxl_disks_close(d);
	free(w);
	free(r);
}

/* Striping: block i goes to disk i mod D, for several rounds. */
XT_TEST(striping_round_robin)
{
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(3, BS, XXL_ALLOC_STRIPING, false);
	xxl_disks  *d = xxl_disks_open(&cfg, &err);
	int			wrong = 0;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	for (int i = 0; i < 300; i++)
	{
		xxl_bid		bid;

		CHECK_STATUS(xxl_block_alloc(d, &bid, &err), XXL_OK);
		if (XXL_BID_DISK(bid) != i % 3)
			wrong++;
		/* each disk's file grows one block at a time */
		if (XXL_BID_OFFSET(bid) != (uint64_t) (i / 3) * BS)
			wrong++;
	}
	CHECK_MSG(wrong == 0, "%d allocations off the round robin", wrong);
	xxl_disks_close(d);
}

/*
 * Randomized cycling: each cycle of D allocations touches every disk once,
 * the cycles are not all the same permutation, and a seed repeats its
 * sequence.
 */
static void
cycling_sequence(unsigned seed, int ndisks, int cycles, int *out)
{
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(ndisks, XXL_ALIGN, XXL_ALLOC_RANDOM_CYCLING, false);
	const char *dirs[XXL_MAX_DISKS];
	xxl_disks  *d;

	/* more disks than directories: several files may share a directory */
	for (int i = 0; i < ndisks; i++)
		dirs[i] = xt_dirs[i % XT_NDIRS];
	cfg.dirs = dirs;
	cfg.seed = seed;
	d = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d != NULL, "%s", err.message);
	for (int i = 0; i < ndisks * cycles; i++)
	{
		xxl_bid		bid;

		CHECK_STATUS(xxl_block_alloc(d, &bid, &err), XXL_OK);
		out[i] = XXL_BID_DISK(bid);
	}
	xxl_disks_close(d);
}

XT_TEST(random_cycling_permutations)
{
	enum
	{
		D = 5, CYCLES = 200
	};
	int			seq[D * CYCLES],
				again[D * CYCLES],
				other[D * CYCLES];
	int			bad_cycles = 0,
				identity = 0,
				distinct_first = 0;
	bool		seen_first[D] = {0};

	cycling_sequence(777, D, CYCLES, seq);
	for (int c = 0; c < CYCLES; c++)
	{
		bool		seen[D] = {0};
		bool		ok = true;
		bool		is_identity = true;

		for (int j = 0; j < D; j++)
		{
			int			disk = seq[c * D + j];

			if (disk < 0 || disk >= D || seen[disk])
				ok = false;
			else
				seen[disk] = true;
			if (disk != j)
				is_identity = false;
		}
		if (!ok)
			bad_cycles++;
		if (is_identity)
			identity++;
		if (!seen_first[seq[c * D] % D])
		{
			seen_first[seq[c * D] % D] = true;
			distinct_first++;
		}
	}
	CHECK_MSG(bad_cycles == 0, "%d of %d cycles do not touch every disk exactly once",
			  bad_cycles, CYCLES);
	/* 200 random permutations of 5: all identity, or one disk always first, is a bug */
	CHECK_MSG(identity < CYCLES / 4, "%d of %d cycles are the identity permutation", identity, CYCLES);
	CHECK_MSG(distinct_first == D, "only %d disks ever start a cycle", distinct_first);

	cycling_sequence(777, D, CYCLES, again);
	CHECK_MSG(memcmp(seq, again, sizeof(seq)) == 0, "the same seed gave a different sequence");
	cycling_sequence(778, D, CYCLES, other);
	CHECK_MSG(memcmp(seq, other, sizeof(seq)) != 0, "different seeds gave the same sequence");
}

XT_TEST(random_cycling_with_many_disks)
{
	enum
	{
		D = 17, CYCLES = 30
	};
	int			seq[D * CYCLES];
	int			bad = 0;

	cycling_sequence(5, D, CYCLES, seq);
	for (int c = 0; c < CYCLES; c++)
	{
		int			seen[D] = {0};

		for (int j = 0; j < D; j++)
			seen[seq[c * D + j]]++;
		for (int j = 0; j < D; j++)
			if (seen[j] != 1)
				bad++;
	}
	CHECK_EQ(bad, 0);
}

/* Freed blocks are handed out again: the spill size does not grow. */
XT_TEST(freed_blocks_are_reused)
{
	enum
	{
		N = 60
	};
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(3, BS, XXL_ALLOC_RANDOM_CYCLING, false);
	xxl_disks  *d = xxl_disks_open(&cfg, &err);
	xxl_bid		first[N],
				second[N];
	xxl_io_stats st;
	int			not_reused = 0;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	for (int i = 0; i < N; i++)
		CHECK_STATUS(xxl_block_alloc(d, &first[i], &err), XXL_OK);
	xxl_disks_stats(d, &st);
	CHECK_EQ(st.spill_bytes_peak, (uint64_t) N * BS);
	for (int i = 0; i < N; i++)
		xxl_block_free(d, first[i]);
	for (int i = 0; i < N; i++)
	{
		bool		found = false;

		CHECK_STATUS(xxl_block_alloc(d, &second[i], &err), XXL_OK);
		for (int j = 0; j < N; j++)
			if (first[j] == second[i])
				found = true;
		if (!found)
			not_reused++;
	}
	CHECK_MSG(not_reused == 0, "%d of %d blocks allocated after freeing were new", not_reused, N);
	xxl_disks_stats(d, &st);
	CHECK_EQ(st.spill_bytes_peak, (uint64_t) N * BS);

	/* steady state: allocate one, free one, many times over */
	for (int i = 0; i < N; i++)
		xxl_block_free(d, second[i]);
	for (int round = 0; round < 1000; round++)
	{
		xxl_bid		b;

		CHECK_STATUS(xxl_block_alloc(d, &b, &err), XXL_OK);
		xxl_block_free(d, b);
	}
	xxl_disks_stats(d, &st);
	CHECK_EQ(st.spill_bytes_peak, (uint64_t) N * BS);
	xxl_disks_close(d);
}

/* Data written to a recycled block is what is read back. */
XT_TEST(recycled_block_holds_new_data)
{
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(1, BS, XXL_ALLOC_STRIPING, true);
	xxl_disks  *d = xxl_disks_open(&cfg, &err);
	unsigned char *a = aligned_block(BS),
			   *b = aligned_block(BS),
			   *r = aligned_block(BS);
	xxl_io_request req = {0};
	xxl_bid		bid,
				bid2;

	REQUIRE_MSG(d != NULL, "%s", err.message);
	fill_block(a, BS, 1);
	fill_block(b, BS, 2);
	CHECK_STATUS(xxl_block_alloc(d, &bid, &err), XXL_OK);
	req.bid = bid;
	req.buf = a;
	req.len = BS;
	req.is_write = true;
	xxl_io_post(d, &req);
	CHECK_STATUS(xxl_io_wait(d, &req, &err), XXL_OK);
	xxl_block_free(d, bid);
	CHECK_STATUS(xxl_block_alloc(d, &bid2, &err), XXL_OK);
	CHECK_EQ(bid2, bid);
	req.bid = bid2;
	req.buf = b;
	xxl_io_post(d, &req);
	CHECK_STATUS(xxl_io_wait(d, &req, &err), XXL_OK);
	req.buf = r;
	req.is_write = false;
	xxl_io_post(d, &req);
	CHECK_STATUS(xxl_io_wait(d, &req, &err), XXL_OK);
	CHECK(memcmp(r, b, BS) == 0);
	xxl_disks_close(d);
	free(a);
	free(b);
	free(r);
}

XT_TEST(close_removes_files_and_threads)
{
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(3, BS, XXL_ALLOC_STRIPING, true);
	int			threads0 = xt_thread_count();
	xxl_disks  *d1,
			   *d2;

	d1 = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d1 != NULL, "%s", err.message);
	d2 = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d2 != NULL, "%s", err.message);
	/* two sets in the same directories get different files, named with the prefix */
	for (int i = 0; i < 3; i++)
	{
		DIR		   *dir = opendir(xt_dirs[i]);
		struct dirent *e;

		CHECK_EQ(xt_dir_count(xt_dirs[i]), 2);
		while (dir && (e = readdir(dir)) != NULL)
			if (e->d_name[0] != '.')
				CHECK_MSG(strncmp(e->d_name, "test_io", 7) == 0, "spill file \"%s\" lacks the prefix",
						  e->d_name);
		if (dir)
			closedir(dir);
	}
	/* the default is two I/O threads per disk */
	CHECK_EQ(xt_thread_count(), threads0 + 2 * 6);
	xxl_disks_close(d1);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(xt_dir_count(xt_dirs[i]), 1);
	xxl_disks_close(d2);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(xt_dir_count(xt_dirs[i]), 0);
	CHECK_EQ(xt_threads_at_most(threads0), threads0);
	xxl_disks_close(NULL);		/* harmless */
}

/* Write block contents i at a fresh block of d, or read it back and compare. */
static void
pool_block(xxl_disks *d, unsigned char *buf, uint64_t i, bool write, xxl_bid *bid)
{
	xxl_error	err = {0};
	xxl_io_request req = {0};
	unsigned char *want = aligned_block(BS);

	fill_block(want, BS, i);
	if (write)
	{
		CHECK_STATUS(xxl_block_alloc(d, bid, &err), XXL_OK);
		memcpy(buf, want, BS);
	}
	req.bid = *bid;
	req.buf = buf;
	req.len = BS;
	req.is_write = write;
	xxl_io_post(d, &req);
	CHECK_STATUS(xxl_io_wait(d, &req, &err), XXL_OK);
	if (!write)
		CHECK(memcmp(buf, want, BS) == 0);
	free(want);
}

/*
 * With a pool, the sets of one directory allocate in one file, whether they
 * want O_DIRECT or not: a block one set frees, or holds when it closes, is
 * the next block of another, live blocks are never handed out twice, a
 * free larger block serves smaller ones, and the file grows only when no
 * free space fits.  The pool removes the files and the account hears of
 * them.
 */
XT_TEST(file_pool_shares_blocks)
{
	xxl_error	err = {0};
	xxl_file_pool *pool = xxl_file_pool_create();
	xxl_spill_account acc;
	xxl_disk_config cfg = disk_config(2, BS, XXL_ALLOC_STRIPING, false),
				direct,
				big;
	int			threads0 = xt_thread_count();
	unsigned char *buf = aligned_block(2 * BS);
	xxl_disks  *d1,
			   *d2,
			   *d3;
	xxl_bid		b1[4],
				b2[4],
				b3[2];
	uint64_t	used;

	REQUIRE(pool != NULL && buf != NULL);
	xxl_spill_account_init(&acc, 0);
	cfg.pool = pool;
	cfg.account = &acc;
	direct = cfg;
	direct.try_direct = true;
	big = cfg;
	big.block_size = 2 * BS;

	/* two live sets share one file per directory, block by block */
	d1 = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d1 != NULL, "%s", err.message);
	d2 = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d2 != NULL, "%s", err.message);
	CHECK_EQ(xxl_file_pool_size(pool), 2);
	CHECK_EQ(xt_dir_count(xt_dirs[0]), 1);
	CHECK_EQ(xt_dir_count(xt_dirs[1]), 1);
	for (int i = 0; i < 4; i++)
	{
		pool_block(d1, buf, (uint64_t) i, true, &b1[i]);
		pool_block(d2, buf, (uint64_t) 100 + i, true, &b2[i]);
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			CHECK(b1[i] != b2[j]);
	/* neither overwrote the other */
	for (int i = 0; i < 4; i++)
	{
		pool_block(d1, buf, (uint64_t) i, false, &b1[i]);
		pool_block(d2, buf, (uint64_t) 100 + i, false, &b2[i]);
	}
	used = acc.used;
	CHECK_EQ(used, 8 * (uint64_t) BS);

	/* a block d1 frees is d2's next on that disk */
	xxl_block_free(d1, b1[0]);
	pool_block(d2, buf, 200, true, &b2[0]);
	CHECK_EQ(b2[0], b1[0]);
	/* d1 closes holding three blocks: d2 gets them, and the files do not grow */
	xxl_disks_close(d1);
	for (int i = 1; i < 4; i++)
	{
		pool_block(d2, buf, (uint64_t) 300 + i, true, &b2[i]);
		CHECK(b2[i] == b1[1] || b2[i] == b1[2] || b2[i] == b1[3]);
	}
	CHECK_EQ(acc.used, used);
	pool_block(d2, buf, 200, false, &b2[0]);

	/* a set of larger blocks grows the file; freed, its block serves two small ones */
	d3 = xxl_disks_open(&big, &err);
	REQUIRE_MSG(d3 != NULL, "%s", err.message);
	CHECK_EQ(xxl_file_pool_size(pool), 2);
	CHECK_STATUS(xxl_block_alloc(d3, &b3[0], &err), XXL_OK);
	CHECK_EQ(acc.used, used + 2 * BS);
	xxl_disks_close(d3);
	xxl_disks_close(d2);
	d1 = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d1 != NULL, "%s", err.message);
	/* (striped: disk 0 has four blocks free and the large one, disk 1 four) */
	for (int i = 0; i < 9; i++)
		CHECK_STATUS(xxl_block_alloc(d1, &b1[i % 4], &err), XXL_OK);
	CHECK_EQ(acc.used, used + 2 * BS);
	CHECK_STATUS(xxl_block_alloc(d1, &b1[0], &err), XXL_OK);
	CHECK_EQ(acc.used, used + 3 * BS);
	CHECK_STATUS(xxl_block_alloc(d1, &b1[0], &err), XXL_OK);
	CHECK_EQ(acc.used, used + 3 * BS);
	xxl_disks_close(d1);

	/*
	 * a set that wants O_DIRECT shares the file too: it gets the blocks the
	 * others freed, and what either writes reads back through the other's
	 * descriptor
	 */
	d1 = xxl_disks_open(&direct, &err);
	REQUIRE_MSG(d1 != NULL, "%s", err.message);
	d2 = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d2 != NULL, "%s", err.message);
	CHECK_EQ(xxl_file_pool_size(pool), 2);
	CHECK_EQ(xt_dir_count(xt_dirs[0]), 1);
	for (int i = 0; i < 4; i++)
	{
		pool_block(d1, buf, (uint64_t) 400 + i, true, &b1[i]);
		pool_block(d2, buf, (uint64_t) 500 + i, true, &b2[i]);
	}
	CHECK_EQ(acc.used, used + 3 * BS);
	for (int i = 0; i < 4; i++)
	{
		pool_block(d1, buf, (uint64_t) 400 + i, false, &b1[i]);
		pool_block(d2, buf, (uint64_t) 500 + i, false, &b2[i]);
	}
	/* a block written by the buffered set is read by the direct one */
	xxl_block_free(d2, b2[0]);	/* (d1's next block is on disk 0, as b2[0]) */
	CHECK_STATUS(xxl_block_alloc(d1, &b3[0], &err), XXL_OK);
	CHECK_EQ(b3[0], b2[0]);
	pool_block(d1, buf, 500, false, &b3[0]);
	xxl_disks_close(d2);
	xxl_disks_close(d1);

	xxl_file_pool_destroy(pool);
	CHECK_EQ(xt_dir_count(xt_dirs[0]), 0);
	CHECK_EQ(xt_dir_count(xt_dirs[1]), 0);
	CHECK_EQ(acc.used, 0);
	CHECK_EQ(acc.nremoved, 2);
	CHECK_EQ(xt_threads_at_most(threads0), threads0);
	xxl_file_pool_destroy(NULL);	/* harmless */
	xxl_spill_account_destroy(&acc);
	free(buf);
}

/*
 * A set that frees some of many blocks and closes holding the rest gives
 * every one back: a later set gets them all before the file grows, none
 * twice.
 */
XT_TEST(file_pool_returns_held_blocks)
{
	enum
	{
		N = 3000
	};
	xxl_error	err = {0};
	xxl_file_pool *pool = xxl_file_pool_create();
	xxl_spill_account acc;
	xxl_disk_config cfg = disk_config(1, BS, XXL_ALLOC_STRIPING, false);
	xxl_disks  *d;
	xxl_bid    *bid = malloc(N * sizeof(xxl_bid));
	unsigned char *seen = calloc(N, 1);

	REQUIRE(pool != NULL && bid != NULL && seen != NULL);
	xxl_spill_account_init(&acc, 0);
	cfg.pool = pool;
	cfg.account = &acc;
	d = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d != NULL, "%s", err.message);
	for (int i = 0; i < N; i++)
		CHECK_STATUS(xxl_block_alloc(d, &bid[i], &err), XXL_OK);
	for (int i = 0; i < N; i += 3)
		xxl_block_free(d, bid[i]);
	xxl_disks_close(d);
	CHECK_EQ(acc.used, (uint64_t) N * BS);

	d = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d != NULL, "%s", err.message);
	for (int i = 0; i < N; i++)
	{
		uint64_t	k;

		CHECK_STATUS(xxl_block_alloc(d, &bid[i], &err), XXL_OK);
		k = XXL_BID_OFFSET(bid[i]) / BS;
		REQUIRE(k < N);
		CHECK_MSG(!seen[k], "block %llu handed out twice", (unsigned long long) k);
		seen[k] = 1;
	}
	CHECK_EQ(acc.used, (uint64_t) N * BS);
	CHECK_STATUS(xxl_block_alloc(d, &bid[0], &err), XXL_OK);
	CHECK_EQ(acc.used, (uint64_t) (N + 1) * BS);
	xxl_disks_close(d);
	xxl_file_pool_destroy(pool);
	CHECK_EQ(acc.used, 0);
	xxl_spill_account_destroy(&acc);
	free(bid);
	free(seen);
}

/*
 * Sets of eleven block sizes allocate and free at random in one pool: every
 * block is where first fit over the file's 4 kB units puts it (an oracle
 * kept here), so live blocks never overlap and the file grows only when no
 * free run fits.  (The pool keeps a search start per size, which frees
 * move back only where the freed run takes that size.)
 */
XT_TEST(file_pool_first_fit)
{
	enum
	{
		SETS = 11,
		OPS = 20000,
		MAXU = 1 << 18
	};
	static const size_t units[SETS] = {1, 3, 16, 25, 2, 5, 7, 8, 12, 32, 64};
	xxl_error	err = {0};
	xxl_file_pool *pool = xxl_file_pool_create();
	xxl_spill_account acc;
	xxl_disks  *d[SETS];
	unsigned char *used = calloc(MAXU, 1);
	struct
	{
		int			set;
		uint64_t	unit;
	}		   *live = malloc(OPS * sizeof(*live));
	size_t		nlive = 0;
	uint64_t	end = 0;		/* units the file has */
	xt_rng		r = {7};

	REQUIRE(pool != NULL && used != NULL && live != NULL);
	xxl_spill_account_init(&acc, 0);
	for (int k = 0; k < SETS; k++)
	{
		xxl_disk_config cfg = disk_config(1, units[k] * XXL_ALIGN, XXL_ALLOC_STRIPING, false);

		cfg.pool = pool;
		cfg.account = &acc;
		d[k] = xxl_disks_open(&cfg, &err);
		REQUIRE_MSG(d[k] != NULL, "%s", err.message);
	}
	for (int op = 0; op < OPS; op++)
	{
		if (nlive > 0 && xt_below(&r, 100) < 45)
		{
			size_t		j = (size_t) xt_below(&r, nlive);
			int			k = live[j].set;

			xxl_block_free(d[k], XXL_BID_MAKE(0, live[j].unit * XXL_ALIGN));
			memset(used + live[j].unit, 0, units[k]);
			live[j] = live[--nlive];
		}
		else
		{
			int			k = (int) xt_below(&r, SETS);
			uint64_t	want = 0,
						run = 0;
			xxl_bid		bid;

			/* the oracle: the first run of free units, which may go on past the end */
			for (uint64_t u = 0; u < end && run < units[k]; u++)
			{
				if (used[u])
					run = 0;
				else if (run++ == 0)
					want = u;
			}
			if (run == 0)
				want = end;
			REQUIRE(want + units[k] <= MAXU);
			REQUIRE(xxl_block_alloc(d[k], &bid, &err) == XXL_OK);
			CHECK_EQ(XXL_BID_OFFSET(bid) / XXL_ALIGN, want);
			if (XXL_BID_OFFSET(bid) / XXL_ALIGN != want)
				break;
			memset(used + want, 1, units[k]);
			if (want + units[k] > end)
				end = want + units[k];
			live[nlive].set = k;
			live[nlive++].unit = want;
		}
	}
	CHECK_EQ(acc.used, end * XXL_ALIGN);
	for (int k = 0; k < SETS; k++)
		xxl_disks_close(d[k]);
	xxl_file_pool_destroy(pool);
	CHECK_EQ(acc.used, 0);
	xxl_spill_account_destroy(&acc);
	free(used);
	free(live);
}

/* Close right after posting: queued requests finish before the threads stop. */
XT_TEST(close_with_requests_queued)
{
	enum
	{
		N = 64
	};
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(2, BS, XXL_ALLOC_STRIPING, false);
	xxl_disks  *d = xxl_disks_open(&cfg, &err);
	xxl_io_request req[N];
	unsigned char *buf = aligned_block(BS);

	REQUIRE_MSG(d != NULL, "%s", err.message);
	memset(req, 0, sizeof(req));
	fill_block(buf, BS, 5);
	for (int i = 0; i < N; i++)
	{
		CHECK_STATUS(xxl_block_alloc(d, &req[i].bid, &err), XXL_OK);
		req[i].buf = buf;
		req[i].len = BS;
		req[i].is_write = true;
		xxl_io_post(d, &req[i]);
	}
	xxl_disks_close(d);
	for (int i = 0; i < N; i++)
		CHECK_EQ(req[i].state, 2);
	free(buf);
}

/*
 * Small buffered requests are done by the caller as they are posted: the
 * data is there at once, the I/O threads never see them, an injected error
 * comes from the wait, and the time counts as waiting.  A request as large
 * as the threshold still goes to a thread.
 */
XT_TEST(small_buffered_requests_inline)
{
	enum
	{
		N = 6, OK_BLOCKS = 4
	};
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(1, 2 * BS, XXL_ALLOC_STRIPING, false);
	xxl_disks  *d;
	xxl_io_request req[N];
	xxl_io_stats st;
	unsigned char *buf = aligned_block(2 * BS);
	unsigned char *back = aligned_block(2 * BS);

	cfg.inline_below = 2 * BS;
	cfg.fail_write_after = OK_BLOCKS * BS;
	d = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d != NULL, "%s", err.message);
	memset(req, 0, sizeof(req));
	for (int i = 0; i < N; i++)
	{
		fill_block(buf, BS, 40 + i);
		CHECK_STATUS(xxl_block_alloc(d, &req[i].bid, &err), XXL_OK);
		req[i].buf = buf;
		req[i].len = BS;
		req[i].is_write = true;
		xxl_io_post(d, &req[i]);
		/* done before post returned: the buffer may be refilled now */
		CHECK(xxl_io_done(&req[i]));
		CHECK_EQ(req[i].state, 3);
	}
	for (int i = 0; i < N; i++)
	{
		xxl_error	e = {0};
		xxl_status	rc = xxl_io_wait(d, &req[i], &e);

		CHECK_STATUS(rc, i < OK_BLOCKS ? XXL_OK : XXL_ENOSPC);
		if (i >= OK_BLOCKS)
			CHECK_EQ(e.sys_errno, ENOSPC);
		CHECK_EQ(req[i].state, 0);
	}
	for (int i = 0; i < OK_BLOCKS; i++)
	{
		req[i].buf = back;
		req[i].is_write = false;
		xxl_io_post(d, &req[i]);
		CHECK_EQ(req[i].state, 3);
		CHECK_STATUS(xxl_io_wait(d, &req[i], &err), XXL_OK);
		fill_block(buf, BS, 40 + i);
		CHECK(memcmp(back, buf, BS) == 0);
	}
	/* at the threshold: a thread's */
	fill_block(buf, 2 * BS, 9);
	CHECK_STATUS(xxl_block_alloc(d, &req[0].bid, &err), XXL_OK);
	req[0].buf = buf;
	req[0].len = 2 * BS;
	req[0].is_write = true;
	xxl_io_post(d, &req[0]);
	CHECK(req[0].state == 1 || req[0].state == 2);
	CHECK_STATUS(xxl_io_wait(d, &req[0], &err), XXL_ENOSPC);	/* still past the limit */
	xxl_disks_stats(d, &st);
	CHECK(st.wait_write_ns > 0);
	CHECK(st.wait_read_ns > 0);
	CHECK_EQ(st.disk[0].reads, OK_BLOCKS);
	xxl_disks_close(d);
	CHECK_EQ(xt_spill_files(), 0);
	free(buf);
	free(back);
}

XT_TEST(missing_directory_gives_eopen)
{
	xxl_error	err = {0};
	char		missing[4200];
	const char *dirs[2];
	xxl_disk_config cfg = disk_config(2, BS, XXL_ALLOC_STRIPING, true);
	int			threads0 = xt_thread_count();
	xxl_disks  *d;

	snprintf(missing, sizeof(missing), "%s/does/not/exist", xt_dirs[1]);
	dirs[0] = xt_dirs[0];		/* the first disk opens fine and must be cleaned up */
	dirs[1] = missing;
	cfg.dirs = dirs;
	d = xxl_disks_open(&cfg, &err);
	CHECK(d == NULL);
	CHECK_STATUS(err.code, XXL_EOPEN);
	CHECK(err.sys_errno == ENOENT);
	CHECK_MSG(strstr(err.message, missing) != NULL, "message does not name the directory: \"%s\"",
			  err.message);
	CHECK_EQ(xt_dir_count(xt_dirs[0]), 0);
	CHECK_EQ(xt_threads_at_most(threads0), threads0);
	if (d)
		xxl_disks_close(d);

	/* only a missing directory */
	xxl_error_clear(&err);
	dirs[0] = missing;
	cfg.ndisks = 1;
	d = xxl_disks_open(&cfg, &err);
	CHECK(d == NULL);
	CHECK_STATUS(err.code, XXL_EOPEN);
	CHECK(err.message[0] != '\0');
	if (d)
		xxl_disks_close(d);
}

XT_TEST(bad_configuration_gives_einval)
{
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(1, BS, XXL_ALLOC_STRIPING, false);
	xxl_disks  *d;

	cfg.block_size = 1000;
	d = xxl_disks_open(&cfg, &err);
	CHECK(d == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	if (d)
		xxl_disks_close(d);

	xxl_error_clear(&err);
	cfg.block_size = 0;
	d = xxl_disks_open(&cfg, &err);
	CHECK(d == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);

	xxl_error_clear(&err);
	cfg = disk_config(0, BS, XXL_ALLOC_STRIPING, false);
	d = xxl_disks_open(&cfg, &err);
	CHECK(d == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);

	xxl_error_clear(&err);
	cfg = disk_config(XXL_MAX_DISKS + 1, BS, XXL_ALLOC_STRIPING, false);
	d = xxl_disks_open(&cfg, &err);
	CHECK(d == NULL);
	CHECK_STATUS(err.code, XXL_EINVAL);
	CHECK(err.message[0] != '\0');
}

XT_TEST(spill_limit_gives_elimit)
{
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(2, BS, XXL_ALLOC_STRIPING, false);
	xxl_disks  *d;
	xxl_bid		bids[5],
				extra;

	cfg.max_spill_bytes = 5 * BS;
	d = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d != NULL, "%s", err.message);
	for (int i = 0; i < 5; i++)
		CHECK_STATUS(xxl_block_alloc(d, &bids[i], &err), XXL_OK);
	CHECK_STATUS(err.code, XXL_OK);
	CHECK_STATUS(xxl_block_alloc(d, &extra, &err), XXL_ELIMIT);
	CHECK_STATUS(err.code, XXL_ELIMIT);
	CHECK(err.message[0] != '\0');

	/* after freeing, allocation works again (the limit is on the total, not the count) */
	xxl_error_clear(&err);
	xxl_block_free(d, bids[0]);
	xxl_block_free(d, bids[1]);
	CHECK_STATUS(xxl_block_alloc(d, &bids[0], &err), XXL_OK);
	CHECK_STATUS(xxl_block_alloc(d, &bids[1], &err), XXL_OK);
	xxl_disks_close(d);
}

/* Writes past fail_write_after bytes fail with ENOSPC, reported by xxl_io_wait. */
XT_TEST(injected_write_failure_one_disk)
{
	enum
	{
		N = 8, OK_BLOCKS = 3
	};
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(1, BS, XXL_ALLOC_STRIPING, true);
	xxl_disks  *d;
	xxl_io_request req[N];
	unsigned char *buf = aligned_block(BS);

	cfg.fail_write_after = OK_BLOCKS * BS;
	cfg.threads_per_disk = 1;	/* strict FIFO: the first blocks are the ones that succeed */
	d = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d != NULL, "%s", err.message);
	memset(req, 0, sizeof(req));
	fill_block(buf, BS, 3);
	for (int i = 0; i < N; i++)
	{
		CHECK_STATUS(xxl_block_alloc(d, &req[i].bid, &err), XXL_OK);
		req[i].buf = buf;
		req[i].len = BS;
		req[i].is_write = true;
		xxl_io_post(d, &req[i]);
	}
	for (int i = 0; i < N; i++)
	{
		xxl_error	e = {0};
		xxl_status	rc = xxl_io_wait(d, &req[i], &e);

		/* one disk serves its queue in FIFO order */
		if (i < OK_BLOCKS)
			CHECK_STATUS(rc, XXL_OK);
		else
		{
			CHECK_STATUS(rc, XXL_ENOSPC);
			CHECK_STATUS(e.code, XXL_ENOSPC);
			CHECK_EQ(e.sys_errno, ENOSPC);
			CHECK(e.message[0] != '\0');
		}
	}
	xxl_disks_close(d);
	CHECK_EQ(xt_spill_files(), 0);
	free(buf);
}

XT_TEST(injected_write_failure_three_disks)
{
	enum
	{
		N = 30, OK_BLOCKS = 10
	};
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(3, BS, XXL_ALLOC_RANDOM_CYCLING, false);
	xxl_disks  *d;
	xxl_io_request req[N];
	unsigned char *buf = aligned_block(BS);
	int			ok = 0,
				nospc = 0,
				other = 0;

	cfg.fail_write_after = OK_BLOCKS * BS;
	d = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d != NULL, "%s", err.message);
	memset(req, 0, sizeof(req));
	fill_block(buf, BS, 4);
	for (int i = 0; i < N; i++)
	{
		CHECK_STATUS(xxl_block_alloc(d, &req[i].bid, &err), XXL_OK);
		req[i].buf = buf;
		req[i].len = BS;
		req[i].is_write = true;
		xxl_io_post(d, &req[i]);
	}
	for (int i = 0; i < N; i++)
	{
		xxl_error	e = {0};
		xxl_status	rc = xxl_io_wait(d, &req[i], &e);

		if (rc == XXL_OK)
			ok++;
		else if (rc == XXL_ENOSPC)
			nospc++;
		else
			other++;
	}
	CHECK_EQ(ok, OK_BLOCKS);
	CHECK_EQ(nospc, N - OK_BLOCKS);
	CHECK_EQ(other, 0);
	xxl_disks_close(d);
	free(buf);
}

/* Reading a block that was never written is an I/O error, not a hang. */
XT_TEST(read_past_end_is_an_error)
{
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(1, BS, XXL_ALLOC_STRIPING, false);
	xxl_disks  *d = xxl_disks_open(&cfg, &err);
	unsigned char *buf = aligned_block(BS);
	xxl_io_request req = {0};

	REQUIRE_MSG(d != NULL, "%s", err.message);
	CHECK_STATUS(xxl_block_alloc(d, &req.bid, &err), XXL_OK);
	req.buf = buf;
	req.len = BS;
	req.is_write = false;
	xxl_io_post(d, &req);
	CHECK(xxl_io_wait(d, &req, &err) != XXL_OK);
	CHECK(err.code != XXL_OK);
	xxl_disks_close(d);
	free(buf);
}

/*
 * A vectored read of a block: the pieces get the block's bytes in order;
 * a read past the end, an injected read failure and a direct file are
 * errors.
 */
XT_TEST(readv_scatters_one_block)
{
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(1, BS, XXL_ALLOC_STRIPING, false);
	xxl_disks  *d = xxl_disks_open(&cfg, &err);
	unsigned char *block = aligned_block(BS);
	unsigned char *a = malloc(BS),
			   *b = malloc(BS);
	xxl_io_request req = {0};
	struct iovec iov[3];

	REQUIRE_MSG(d != NULL, "%s", err.message);
	fill_block(block, BS, 5);
	CHECK_STATUS(xxl_block_alloc(d, &req.bid, &err), XXL_OK);
	req.buf = block;
	req.len = BS;
	req.is_write = true;
	CHECK_STATUS(xxl_io_sync(d, &req, &err), XXL_OK);

	/* 1000 bytes to a, 3000 to b, the rest to a again after its first part */
	iov[0] = (struct iovec) {a, 1000};
	iov[1] = (struct iovec) {b, 3000};
	iov[2] = (struct iovec) {a + 1000, BS - 4000};
	CHECK_STATUS(xxl_io_readv_sync(d, req.bid, iov, 3, BS, &err), XXL_OK);
	CHECK(memcmp(a, block, 1000) == 0);
	CHECK(memcmp(b, block + 1000, 3000) == 0);
	CHECK(memcmp(a + 1000, block + 4000, BS - 4000) == 0);

	/* past the end of the file */
	iov[0] = (struct iovec) {a, BS};
	CHECK_STATUS(xxl_io_readv_sync(d, req.bid + BS, iov, 1, BS, &err), XXL_EIO);
	xxl_disks_close(d);

	/* an injected failure */
	cfg.fail_read_after = BS / 2;
	err = (xxl_error) {0};
	d = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d != NULL, "%s", err.message);
	CHECK_STATUS(xxl_block_alloc(d, &req.bid, &err), XXL_OK);
	CHECK_STATUS(xxl_io_sync(d, &req, &err), XXL_OK);
	CHECK_STATUS(xxl_io_readv_sync(d, req.bid, iov, 1, BS, &err), XXL_EIO);
	xxl_disks_close(d);

	/* O_DIRECT files take aligned whole transfers only */
	cfg = disk_config(1, BS, XXL_ALLOC_STRIPING, true);
	err = (xxl_error) {0};
	d = xxl_disks_open(&cfg, &err);
	REQUIRE_MSG(d != NULL, "%s", err.message);
	if (xxl_disks_direct(d))
	{
		CHECK_STATUS(xxl_block_alloc(d, &req.bid, &err), XXL_OK);
		CHECK_STATUS(xxl_io_sync(d, &req, &err), XXL_OK);
		CHECK(xxl_io_readv_sync(d, req.bid, iov, 1, BS, &err) != XXL_OK);
	}
	xxl_disks_close(d);
	free(block);
	free(a);
	free(b);
}

/* Several threads each driving their own disk set at once. */
typedef struct worker_arg
{
	int			id;
	int			failures;
} worker_arg;

#include <pthread.h>

static void *
worker(void *p)
{
	worker_arg *a = p;
	xxl_error	err = {0};
	xxl_disk_config cfg = disk_config(2, XXL_ALIGN * 4, XXL_ALLOC_RANDOM_CYCLING, false);
	xxl_disks  *d;
	enum
	{
		N = 40
	};
	xxl_io_request req[N];
	unsigned char *buf[N];

	cfg.seed = (unsigned) a->id + 1;
	d = xxl_disks_open(&cfg, &err);
	if (d == NULL)
	{
		a->failures++;
		return NULL;
	}
	memset(req, 0, sizeof(req));
	for (int round = 0; round < 5; round++)
	{
		for (int i = 0; i < N; i++)
		{
			buf[i] = aligned_block(cfg.block_size);
			fill_block(buf[i], cfg.block_size, (uint64_t) (a->id * 1000 + round * N + i));
			if (xxl_block_alloc(d, &req[i].bid, &err) != XXL_OK)
				a->failures++;
			req[i].buf = buf[i];
			req[i].len = cfg.block_size;
			req[i].is_write = true;
			xxl_io_post(d, &req[i]);
		}
		for (int i = 0; i < N; i++)
			if (xxl_io_wait(d, &req[i], &err) != XXL_OK)
				a->failures++;
		for (int i = 0; i < N; i++)
		{
			memset(buf[i], 0, cfg.block_size);
			req[i].is_write = false;
			xxl_io_post(d, &req[i]);
		}
		for (int i = 0; i < N; i++)
		{
			unsigned char *expect = aligned_block(cfg.block_size);

			if (xxl_io_wait(d, &req[i], &err) != XXL_OK)
				a->failures++;
			fill_block(expect, cfg.block_size, (uint64_t) (a->id * 1000 + round * N + i));
			if (memcmp(expect, buf[i], cfg.block_size) != 0)
				a->failures++;
			free(expect);
			free(buf[i]);
			xxl_block_free(d, req[i].bid);
		}
	}
	xxl_disks_close(d);
	return NULL;
}

XT_TEST(independent_disk_sets_in_parallel)
{
	enum
	{
		T = 4
	};
	pthread_t	th[T];
	worker_arg	args[T];
	int			threads0 = xt_thread_count();

	for (int i = 0; i < T; i++)
	{
		args[i].id = i;
		args[i].failures = 0;
		pthread_create(&th[i], NULL, worker, &args[i]);
	}
	for (int i = 0; i < T; i++)
	{
		pthread_join(th[i], NULL);
		CHECK_EQ(args[i].failures, 0);
	}
	CHECK_EQ(xt_threads_at_most(threads0), threads0);
}

/* xxl_common.h -------------------------------------------------------- */

XT_TEST(error_keeps_first)
{
	xxl_error	err = {0};

	CHECK_STATUS(xxl_error_set(&err, XXL_EIO, 5, "first %d", 1), XXL_EIO);
	CHECK_STATUS(xxl_error_set(&err, XXL_ENOSPC, 28, "second"), XXL_EIO);
	CHECK_STATUS(err.code, XXL_EIO);
	CHECK_EQ(err.sys_errno, 5);
	CHECK(strcmp(err.message, "first 1") == 0);
	xxl_error_clear(&err);
	CHECK_STATUS(err.code, XXL_OK);
	CHECK_EQ(err.sys_errno, 0);
	CHECK(err.message[0] == '\0');
	for (int c = XXL_OK; c <= XXL_ECANCELED; c++)
		CHECK(xxl_status_name((xxl_status) c) != NULL && xxl_status_name((xxl_status) c)[0] != '\0');
	/* a long message is truncated, not overflowed */
	{
		char		big[1000];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		xxl_error_clear(&err);
		xxl_error_set(&err, XXL_EINVAL, 0, "%s", big);
		CHECK(strlen(err.message) == sizeof(err.message) - 1);
	}
}

XT_TEST(budget_accounting)
{
	xxl_budget	b;
	xxl_error	err = {0};
	char	   *p,
			   *q,
			   *small;

	xxl_budget_init(&b, 1 << 20);
	CHECK_EQ(xxl_budget_available(&b), 1 << 20);
	p = xxl_budget_alloc(&b, 100000, &err);
	REQUIRE(p != NULL);
	CHECK_EQ((uintptr_t) p % XXL_ALIGN, 0);
	CHECK_GE(b.used, 100000);
	CHECK_LE(b.used, 100000 + XXL_ALIGN);
	memset(p, 7, 100000);
	small = xxl_budget_alloc(&b, 10, &err);
	REQUIRE(small != NULL);
	CHECK_LE(b.used, 100000 + XXL_ALIGN + 64);

	/* more than what is left fails with ENOMEM and changes nothing */
	{
		size_t		used = b.used;

		q = xxl_budget_alloc(&b, 1 << 20, &err);
		CHECK(q == NULL);
		CHECK_STATUS(err.code, XXL_ENOMEM);
		CHECK_EQ(b.used, used);
		xxl_error_clear(&err);
	}

	/* realloc keeps contents both ways */
	q = xxl_budget_realloc(&b, p, 100000, 300000, &err);
	REQUIRE(q != NULL);
	CHECK_EQ((uintptr_t) q % XXL_ALIGN, 0);
	for (int i = 0; i < 100000; i++)
		if (q[i] != 7)
		{
			CHECK_MSG(false, "realloc lost byte %d", i);
			break;
		}
	CHECK_GE(b.peak, b.used);
	q = xxl_budget_realloc(&b, q, 300000, 5000, &err);
	REQUIRE(q != NULL);
	CHECK(q[4999] == 7);
	/* a realloc that does not fit leaves the old block valid */
	{
		char	   *r = xxl_budget_realloc(&b, q, 5000, 2 << 20, &err);

		CHECK(r == NULL);
		CHECK_STATUS(err.code, XXL_ENOMEM);
		CHECK(q[0] == 7);
		xxl_error_clear(&err);
	}
	xxl_budget_free(&b, q, 5000);
	xxl_budget_free(&b, small, 10);
	xxl_budget_free(&b, NULL, 123);
	CHECK_EQ(b.used, 0);
	CHECK_GE(b.peak, 300000);
	CHECK_LE(b.peak, b.limit);
	CHECK(xxl_now_ns() > 0);
	CHECK(xxl_now_ns() <= xxl_now_ns());
}

int
main(int argc, char **argv)
{
	return xt_main(argc, argv);
}
