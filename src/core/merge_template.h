/*
 * merge_template.h — the key-dependent half of the batched multiway merge
 * (merge.c), instantiated per key kind so that comparisons compile to
 * integer compares (the sort_template.h pattern of PostgreSQL).
 *
 * Before including, define:
 *   MT_SUFFIX  name suffix of the generated functions
 *   MT_WIDE    0: keys of at most 8 bytes, one big-endian word, zero padded;
 *              1: keys of 9..16 bytes, the (hi, lo) pair of record.h
 *   MT_FOLD    1: the loser tree compares (key, run) as one 128-bit integer,
 *              the run index in the low bits: for MT_WIDE 0 the low word is
 *              the run index; for MT_WIDE 1 the low word's 8 * (16 - K)
 *              bits that repeat the high word are shifted out to make room
 *              for it (the caller checks that the run index fits);
 *              0 (MT_WIDE 1 only): (hi, lo, run) compare as three words.
 * Included by merge.c after the merger's struct (the planner reads it).
 *
 * Generated: static size_t mt_merge_batch_<suffix>(xxl_merger *m, size_t window,
 *                                                 unsigned char *out)
 * plans the next batch from every live run's window (at most `window`
 * records of its current block, or its spanning record), merges it into
 * out, on two threads when it is large, and returns its record count
 * (take[] holds each run's share; at most k * window records).
 */
#define MT_CAT_(a, b) a##b
#define MT_CAT(a, b) MT_CAT_(a, b)
#define MT_FN(name) MT_CAT(mt_##name##_, MT_SUFFIX)
#define MT_NODE MT_CAT(mt_node_, MT_SUFFIX)
#define MT_KEY MT_CAT(mt_key_, MT_SUFFIX)

#if MT_WIDE
typedef struct MT_KEY
{
	uint64_t	hi;
	uint64_t	lo;
} MT_KEY;

static inline MT_KEY
MT_FN(load) (const unsigned char *p, size_t R, size_t K)
{
	MT_KEY		key = {xxl_load_be64(p), xxl_key_lo(p, K)};

	(void) R;
	return key;
}

static const MT_KEY MT_FN(key_max) = {UINT64_MAX, UINT64_MAX};

#define MT_LT(a, b) ((a).hi < (b).hi || ((a).hi == (b).hi && (a).lo < (b).lo))
#define MT_EQ(a, b) ((a).hi == (b).hi && (a).lo == (b).lo)
#else
typedef uint64_t MT_KEY;

static inline MT_KEY
MT_FN(load) (const unsigned char *p, size_t R, size_t K)
{
	return xxl_key64(p, R, K);
}

static const MT_KEY MT_FN(key_max) = UINT64_MAX;

#define MT_LT(a, b) ((a) < (b))
#define MT_EQ(a, b) ((a) == (b))
#endif

/*
 * A loser-tree entry: a key with the run it comes from (run index, + k once
 * the run's segment is empty, so that an empty segment loses to any record).
 */
#if MT_FOLD
typedef struct MT_NODE
{
	uint64_t	hi;
	uint64_t	lo;				/* low key bits << shift | run */
} MT_NODE;
#else
typedef struct MT_NODE
{
	uint64_t	hi;
	uint64_t	lo;
	int			rank;
} MT_NODE;
#endif

static inline MT_NODE
MT_FN(node_of) (MT_KEY key, int rank, int shift)
{
	MT_NODE		e;

	(void) shift;
#if MT_WIDE && MT_FOLD
	e.hi = key.hi;
	e.lo = key.lo << shift | (uint64_t) rank;
#elif MT_WIDE
	e.hi = key.hi;
	e.lo = key.lo;
	e.rank = rank;
#else
	e.hi = key;
	e.lo = (uint64_t) rank;
#endif
	return e;
}

/* (key, rank) order */
static inline bool
MT_FN(node_less) (const MT_NODE *a, const MT_NODE *b)
{
	unsigned __int128 x = ((unsigned __int128) a->hi << 64) | a->lo;
	unsigned __int128 y = ((unsigned __int128) b->hi << 64) | b->lo;

#if MT_FOLD
	return x < y;
#else
	return x < y || (x == y && a->rank < b->rank);
#endif
}

/* Records in base[0..n) whose key is below key (or equal, if inclusive). */
static size_t
MT_FN(count_below) (const unsigned char *base, size_t n, size_t R, size_t K, MT_KEY key,
					bool inclusive)
{
	size_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;
		MT_KEY		k = MT_FN(load) (base + mid * R, R, K);

		if (MT_LT(k, key) || (inclusive && MT_EQ(k, key)))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The entry for segment i: its first record, or the empty-segment sentinel. */
static inline MT_NODE
MT_FN(segment_head) (const segment *seg, int i, int k, size_t R, size_t K, int shift)
{
	if (seg[i].p < seg[i].end)
		return MT_FN(node_of) (MT_FN(load) (seg[i].p, R, K), i, shift);
	return MT_FN(node_of) (MT_FN(key_max), i + k, shift);
}

/*
 * The loser tree, nodes 1..k-1, as separate arrays: with the words of a node
 * side by side, gcc moves them through vector registers, which puts
 * transfers on the replay's critical path.
 */
typedef struct MT_CAT(mt_tree_, MT_SUFFIX)
{
	uint64_t   *hi;
	uint64_t   *lo;
#if !MT_FOLD
	int		   *rank;
#endif
} MT_CAT(mt_tree_, MT_SUFFIX);

static inline MT_CAT(mt_tree_, MT_SUFFIX)
MT_FN(tree_at) (void *memory, int k)
{
	MT_CAT(mt_tree_, MT_SUFFIX) t;

	t.hi = memory;
	t.lo = t.hi + k;
#if !MT_FOLD
	t.rank = (int *) (t.lo + k);
#endif
	return t;
}

static inline void
MT_FN(tree_set) (MT_CAT(mt_tree_, MT_SUFFIX) t, int node, const MT_NODE *e)
{
	t.hi[node] = e->hi;
	t.lo[node] = e->lo;
#if !MT_FOLD
	t.rank[node] = e->rank;
#endif
}

static int
MT_FN(tree_build) (MT_CAT(mt_tree_, MT_SUFFIX) t, const segment *seg, int k, size_t R, size_t K,
				   int shift, int node)
{
	int			l,
				r;
	MT_NODE		le,
				re;

	if (node >= k)
		return node - k;
	l = MT_FN(tree_build) (t, seg, k, R, K, shift, 2 * node);
	r = MT_FN(tree_build) (t, seg, k, R, K, shift, 2 * node + 1);
	le = MT_FN(segment_head) (seg, l, k, R, K, shift);
	re = MT_FN(segment_head) (seg, r, k, R, K, shift);
	if (MT_FN(node_less) (&re, &le))
	{
		MT_FN(tree_set) (t, node, &le);
		return r;
	}
	MT_FN(tree_set) (t, node, &re);
	return l;
}

/*
 * Merge k sorted in-memory segments into out (n records in all), ties to the
 * lower segment.  The replay is branch-free (on random keys every comparison
 * is a coin toss for the branch predictor) and compares 128-bit integers,
 * which 64-bit targets do in two instructions.  Runs on an OpenMP thread:
 * touches nothing but its arguments.
 */
static void
MT_FN(merge_segments) (void *tree_memory, segment *seg, int k, size_t R, size_t K, int shift,
					   uint64_t rank_mask, unsigned char *out, size_t n)
{
	MT_CAT(mt_tree_, MT_SUFFIX) t = MT_FN(tree_at) (tree_memory, k);
	int			w;
	MT_NODE		head;
	uint64_t	whi,
				wlo;
#if !MT_FOLD
	int			wrank;
#endif

	(void) rank_mask;
	if (n == 0)
		return;
	w = k == 1 ? 0 : MT_FN(tree_build) (t, seg, k, R, K, shift, 1);
	for (size_t i = 0; i < n; i++)
	{
		int			winner;

		xxl_copy_small(out, seg[w].p, R);
		out += R;
		seg[w].p += R;
		head = MT_FN(segment_head) (seg, w, k, R, K, shift);
		whi = head.hi;
		wlo = head.lo;
#if !MT_FOLD
		wrank = head.rank;
#endif
		for (int node = (w + k) / 2; node >= 1; node /= 2)
		{
			uint64_t	nhi = t.hi[node];
			uint64_t	nlo = t.lo[node];
			unsigned __int128 n128 = ((unsigned __int128) nhi << 64) | nlo;
			unsigned __int128 w128 = ((unsigned __int128) whi << 64) | wlo;
#if MT_FOLD
			uint64_t	swap = (uint64_t) 0 - (uint64_t) (n128 < w128);
#else
			int			nrank = t.rank[node];
			uint64_t	swap = (uint64_t) 0 - (uint64_t) ((n128 < w128) |
														  ((n128 == w128) & (nrank < wrank)));
			int			drank = (nrank ^ wrank) & (int) swap;
#endif
			uint64_t	dhi = (nhi ^ whi) & swap;
			uint64_t	dlo = (nlo ^ wlo) & swap;

			/* swap: the node keeps the old winner, the node's entry wins */
			t.hi[node] = nhi ^ dhi;
			t.lo[node] = nlo ^ dlo;
			whi ^= dhi;
			wlo ^= dlo;
#if !MT_FOLD
			t.rank[node] = nrank ^ drank;
			wrank ^= drank;
#endif
		}
		/* the winner is >= k only once every segment is empty, after the last record */
#if MT_FOLD
		winner = (int) (wlo & rank_mask);
#else
		winner = wrank;
#endif
		w = winner < k ? winner : winner - k;
	}
}

static size_t
MT_FN(merge_batch) (xxl_merger *m, size_t window, unsigned char *out)
{
	const size_t R = m->env.rec_size;
	const size_t K = m->env.key_size;
	const int	shift = m->fold_shift;
	const uint64_t rank_mask = m->rank_mask;
	bool		bounded = false;
	MT_KEY		bound_key = MT_FN(key_max);
	int			bound_src = 0;
	size_t		total = 0;

	/* windows, and the bound: the smallest last key of a window not ending its run */
	for (int r = 0; r < m->k; r++)
	{
		merge_source *src = &m->src[r];
		MT_KEY		last;

		m->take[r] = 0;
		if (src->done)
			continue;
		m->take[r] = run_window_records(m, src);
		if (m->take[r] > window)
			m->take[r] = window;
		if (m->take[r] * R == src->remaining)
			continue;			/* the window ends the run: no bound from it */
		last = MT_FN(load) (run_window(m, r) + (m->take[r] - 1) * R, R, K);
		if (!bounded || MT_LT(last, bound_key))
		{
			bounded = true;
			bound_key = last;
			bound_src = r;
		}
	}
	/* each run's share: below (key, run) = (bound_key, bound_src) */
	for (int r = 0; r < m->k; r++)
	{
		if (m->src[r].done)
			continue;
		if (bounded && r != bound_src)
			m->take[r] = MT_FN(count_below) (run_window(m, r), m->take[r], R, K, bound_key,
											 r < bound_src);
		total += m->take[r];
	}
	if (total == 0)
		return 0;

	/*
	 * One run below the bound (runs whose key ranges do not overlap: input
	 * that came sorted, a table's rows in arrival order): the batch is that
	 * run's records as they stand, as many of its window as come before
	 * every other run's head and fit the output (k windows), not one window.
	 */
	{
		int			only = -1;

		for (int r = 0; r < m->k && only != -2; r++)
			if (m->take[r] > 0)
				only = only == -1 ? r : -2;
		if (only >= 0)
		{
			size_t		avail = run_window_records(m, &m->src[only]);
			size_t		cap = (size_t) m->k * window;

			if (avail > cap)
				avail = cap;
			if (avail > total)
			{
				bool		other = false;
				MT_KEY		head = MT_FN(key_max);
				int			head_src = 0;

				for (int r = 0; r < m->k; r++)
				{
					MT_KEY		h;

					if (r == only || m->src[r].done)
						continue;
					h = MT_FN(load) (run_window(m, r), R, K);
					if (!other || MT_LT(h, head))
					{
						other = true;
						head = h;
						head_src = r;
					}
				}
				/* ties go to the lower run, as in the merge */
				total = other ? MT_FN(count_below) (run_window(m, only), avail, R, K, head,
													only < head_src)
					: avail;
				m->take[only] = total;
			}
			memcpy(out, run_window(m, only), total * R);
			return total;
		}
	}

	/* the segments to merge, split in two halves at a splitter key */
	{
		bool		parallel = m->env.threads > 1 && total >= PARALLEL_BATCH_MIN;
		segment    *left_seg = m->split_seg[0];
		segment    *right_seg = m->split_seg[1];
		size_t		left_total = 0;
		MT_KEY		split_key = MT_FN(key_max);
		int			g = 0;

		if (parallel)
		{
			/* the middle record of the largest share splits the batch */
			for (int r = 1; r < m->k; r++)
				if (m->take[r] > m->take[g])
					g = r;
			split_key = MT_FN(load) (run_window(m, g) + (m->take[g] / 2) * R, R, K);
		}
		for (int r = 0; r < m->k; r++)
		{
			const unsigned char *base;
			size_t		left;

			if (m->take[r] == 0)
			{
				left_seg[r].p = left_seg[r].end = right_seg[r].p = right_seg[r].end = NULL;
				continue;
			}
			base = run_window(m, r);
			if (!parallel)
				left = m->take[r];
			else if (r == g)
				left = m->take[g] / 2;	/* (key, run, position) order: earlier positions left */
			else
				left = MT_FN(count_below) (base, m->take[r], R, K, split_key, r < g);
			left_seg[r].p = base;
			left_seg[r].end = right_seg[r].p = base + left * R;
			right_seg[r].end = base + m->take[r] * R;
			left_total += left;
		}
		if (parallel)
		{
			void	   *t0 = m->thread_tree[0];
			void	   *t1 = m->thread_tree[1];

			XXL_OMP_PARALLEL(num_threads(2))
			{
				/* a team of one (OMP_DYNAMIC, thread limits) merges both halves */
				int			t = omp_get_thread_num();

				if (t == 0)
					MT_FN(merge_segments) (t0, left_seg, m->k, R, K, shift, rank_mask, out, left_total);
				if (t == 1 || omp_get_num_threads() == 1)
					MT_FN(merge_segments) (t1, right_seg, m->k, R, K, shift, rank_mask,
										   out + left_total * R, total - left_total);
			}
		}
		else
			MT_FN(merge_segments) (m->thread_tree[0], left_seg, m->k, R, K, shift,
								   rank_mask, out, total);
	}
	return total;
}

#undef MT_LT
#undef MT_EQ
#undef MT_KEY
#undef MT_NODE
#undef MT_FN
#undef MT_SUFFIX
#undef MT_WIDE
#undef MT_FOLD
