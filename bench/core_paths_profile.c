/*
 * core_paths_profile.c — the in-memory shortest paths' phases without
 * PostgreSQL: a random graph like bench-graph's (NODES nodes, EDGES edges,
 * ends uniform in 1..NODES, costs uniform in [0, 1)) put into xxl_paths at
 * 256MB on two threads, RUNS times, printing each run's load, build,
 * search and output times and the best of each.
 *
 * Why it exists: on this shared machine one query's phase times through
 * the server vary by a third from run to run; the best of several runs of
 * the engine alone is what tells a 10% change in the search from noise.
 * There is no peer here: bench-graph compares with pgRouting.
 *
 *   make -f bench/bench.mk core-paths-profile [DIRECTED=0] [RUNS=5]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph/xxl_paths.h"

#define NODES 1000000
#define EDGES 5000000

static uint64_t state = 88172645463325252ULL;

static uint64_t
next_random(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

int
main(int argc, char **argv)
{
	int			directed = argc > 1 ? atoi(argv[1]) : 1;
	int			runs = argc > 2 ? atoi(argv[2]) : 5;
	const char *dir = argc > 3 ? argv[3] : "/tmp";
	int64_t    *src = malloc(EDGES * sizeof(int64_t)),
			   *dst = malloc(EDGES * sizeof(int64_t));
	double	   *w = malloc(EDGES * sizeof(double));
	double		best[4] = {INFINITY, INFINITY, INFINITY, INFINITY};

	if (!src || !dst || !w)
		return 1;
	for (int64_t i = 0; i < EDGES; i++)
	{
		src[i] = 1 + (int64_t) (next_random() % NODES);
		dst[i] = 1 + (int64_t) (next_random() % NODES);
		w[i] = (double) (next_random() >> 11) / 9007199254740992.0;
	}
	for (int r = 0; r < runs; r++)
	{
		xxl_paths_config c;
		xxl_error	err;
		xxl_paths  *p;
		xxl_paths_stats st;
		int64_t		source = 1,
					node,
					pred,
					edge;
		double		d,
					v[4];
		uint64_t	rows = 0,
					t0;

		memset(&c, 0, sizeof(c));
		memset(&err, 0, sizeof(err));
		c.res.memory = (size_t) 256 << 20;
		c.res.disk.dirs = &dir;
		c.res.disk.ndisks = 1;
		c.res.disk.file_prefix = "core_paths_profile";
		c.res.threads = 2;
		c.op = XXL_PATHS_SSSP;
		c.directed = directed;
		c.sources = &source;
		c.nsources = 1;
		c.max_distance = INFINITY;
		c.max_depth = UINT64_MAX;
		if ((p = xxl_paths_create(&c, &err)) == NULL)
		{
			fprintf(stderr, "create: %s\n", err.message);
			return 1;
		}
		for (int64_t i = 0; i < EDGES; i++)
			xxl_paths_put_edge(p, src[i], dst[i], i + 1, w[i], -1);
		if (xxl_paths_run(p) != XXL_OK)
		{
			fprintf(stderr, "run: %s\n", xxl_paths_error(p)->message);
			return 1;
		}
		t0 = xxl_now_ns();
		while (xxl_paths_next(p, &node, &d, &pred, &edge) == 1)
			rows++;
		xxl_paths_stats_get(p, &st);
		v[0] = st.load_ns / 1e6;
		v[1] = st.build_ns / 1e6;
		v[2] = st.search_ns / 1e6;
		v[3] = (xxl_now_ns() - t0) / 1e6;
		for (int k = 0; k < 4; k++)
			best[k] = v[k] < best[k] ? v[k] : best[k];
		printf("run %d: %s, %s, %llu rows, load %.0f ms, build %.0f ms, search %.0f ms, "
			   "output %.0f ms, peak %llu MB\n", r, directed ? "directed" : "undirected",
			   xxl_paths_path_name(st.path), (unsigned long long) rows, v[0], v[1], v[2], v[3],
			   (unsigned long long) (st.memory_peak >> 20));
		xxl_paths_destroy(p);
	}
	printf("best: load %.0f ms, build %.0f ms, search %.0f ms, output %.0f ms\n",
		   best[0], best[1], best[2], best[3]);
	free(src);
	free(dst);
	free(w);
	return 0;
}
