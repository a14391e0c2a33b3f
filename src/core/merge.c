/*
 * merge.c — the k-way merger of sorted runs (see merge.h).
 *
 * Every run contributes its current block; free frames are filled in the
 * order given by the prediction sequence (each block's first key, merged
 * over all runs, thesis §3.5.2).  If a run needs a block that was not
 * prefetched (key prefixes can tie), it is read into the frame the run has
 * just emptied, so the merge can never stall on a full pool.
 *
 * Frames may read less than a block (env.read_size, a power-of-two
 * fraction): a run's bytes are then read as consecutive "units", each
 * inside one block, and a merge can take several times more runs in the
 * same memory.  A unit's prediction key is interpolated between its
 * block's first key and the next block's (seek_issue).  Smaller frames
 * make batches smaller, so the sorter uses them only when full blocks
 * would cost a merge pass.
 *
 * Fixed records with keys of at most 16 bytes (graph and text records, SQL
 * keys of a few columns, the benchmark) are merged in batches, as MCSTL's
 * multiway merge in [P2] §2: every run offers a window of its current block
 * (or the one record that spans into its next block, copied whole); the
 * smallest last key of a window that does not end its run bounds what can be
 * output safely; binary searches count each run's share below the bound; a
 * splitter key cuts the batch in two halves that two threads merge into the
 * output buffer at once.  Keys are integers there (merge_template.h).  Other
 * records go through the loser tree one at a time.
 */
#include "core/merge_internal.h"

#include <omp.h>
#include <signal.h>
#include <string.h>



static inline size_t
read_unit(const xxl_merge_env *env)
{
	return env->read_size ? env->read_size : env->block_size;
}

/* Bytes of unit u of a run (units of unit_size, the last one shorter). */
static size_t
unit_length(const xxl_run *run, size_t u, size_t unit_size)
{
	uint64_t	left = run->nbytes - (uint64_t) u * unit_size;

	return left < unit_size ? (size_t) left : unit_size;
}

/* The block unit u lies in. */
static inline size_t
unit_block(const xxl_merger *m, size_t u)
{
	return (size_t) ((uint64_t) u * read_unit(&m->env) / m->env.block_size);
}

/* Where unit u starts inside its block (a bid plus this is the unit's). */
static inline uint64_t
unit_offset_in_block(const xxl_merger *m, size_t u)
{
	return (uint64_t) u * read_unit(&m->env) % m->env.block_size;
}

/* Whether unit u is the last one of its block (or of the run). */
static inline bool
unit_ends_block(const xxl_merger *m, const merge_source *src, size_t u)
{
	return u + 1 == src->nunits || unit_block(m, u + 1) != unit_block(m, u);
}

/*
 * Read the block table on to the block of unit next_unissued and set the
 * unit's prediction key, which the prefetch order compares.  A whole
 * block's is its first key.  A unit further into a block has no key of
 * its own in the table: its block's first key would be a lower bound, but
 * one every later unit of the block shares, so the prefetch would spend
 * the spare frames on the rest of whichever block a run has just begun,
 * however far off those units are, and the runs that need a block next
 * would wait.  It gets the key interpolated between its block's first key
 * and the next block's instead (in a run's last block, one as wide as the
 * block before it).  Prefetching out of order only costs time: a run that
 * needs a unit not prefetched reads it into the frame it has just emptied.
 */
static xxl_status
seek_issue(xxl_merger *m, merge_source *src)
{
	size_t		u = src->next_unissued;
	size_t		b = unit_block(m, u);
	uint64_t	off = unit_offset_in_block(m, u);

	if (off == 0)
	{
		uint64_t	before = src->issue_first;

		if (xxl_run_cursor_seek(&src->blocks, b, &src->issue, m->env.err) != XXL_OK)
			return m->env.err->code;
		src->issue_first = src->issue_limit = src->issue.key;
		if (read_unit(&m->env) == m->env.block_size)
			return XXL_OK;
		if (b + 1 < src->run->nblocks)
		{
			xxl_run_block next;

			if (xxl_run_cursor_seek(&src->blocks, b + 1, &next, m->env.err) != XXL_OK)
				return m->env.err->code;
			if (next.key > src->issue_first)
				src->issue_limit = next.key;
		}
		else if (b > 0 && src->issue_first > before)
		{
			/* the run's last block: as wide as the block before it */
			uint64_t	span = src->issue_first - before;

			src->issue_limit = span <= UINT64_MAX - src->issue_first ?
				src->issue_first + span : UINT64_MAX;
		}
	}
	src->issue.key = src->issue_first +
		(uint64_t) ((unsigned __int128) (src->issue_limit - src->issue_first) * off /
					m->env.block_size);
	return XXL_OK;
}

/* Post unit next_unissued of source r into frame f; seek the next one's. */
static xxl_status
issue_unit(xxl_merger *m, int f, int r)
{
	merge_frame *fr = &m->frames[f];
	merge_source *src = &m->src[r];
	size_t		u = src->next_unissued++;

	fr->block = u;
	/* a bid is a byte offset on its disk: a unit inside the block is one too */
	fr->req.bid = src->issue.bid + unit_offset_in_block(m, u);
	fr->req.buf = fr->data;
	fr->req.len = XXL_ROUND_UP(unit_length(src->run, u, read_unit(&m->env)), XXL_ALIGN);
	fr->req.is_write = false;
	xxl_io_post(m->env.disks, &fr->req);
	if (src->next_unissued < src->nunits)
		return seek_issue(m, src);
	return XXL_OK;
}

static int
pop_free(xxl_merger *m)
{
	int			f = m->free_head;

	if (f >= 0)
		m->free_head = m->frames[f].next;
	return f;
}

static void
push_free(xxl_merger *m, int f)
{
	m->frames[f].next = m->free_head;
	m->free_head = f;
}

/* Fill free frames with the next blocks of the prediction sequence. */
xxl_status
merge_prefetch(xxl_merger *m)
{
	while (m->free_head >= 0)
	{
		int			best = -1;
		uint64_t	best_key = 0;
		int			f;
		merge_source *src;

		for (int r = 0; r < m->k; r++)
		{
			merge_source *c = &m->src[r];

			if (c->next_unissued < c->nunits && (best < 0 || c->issue.key < best_key))
			{
				best = r;
				best_key = c->issue.key;
			}
		}
		if (best < 0)
			return XXL_OK;
		src = &m->src[best];
		f = pop_free(m);
		m->frames[f].next = -1;
		if (src->pend_tail >= 0)
			m->frames[src->pend_tail].next = f;
		else
			src->pend_head = f;
		src->pend_tail = f;
		if (issue_unit(m, f, best) != XXL_OK)
			return m->env.err->code;
	}
	return XXL_OK;
}

/* Give up the current block of a source (recycling it in intermediate passes). */
void
merge_release_current(xxl_merger *m, merge_source *src)
{
	if (src->cur_frame < 0)
		return;
	if (m->release_blocks && unit_ends_block(m, src, src->cur_block))
		xxl_block_free(m->env.disks, m->frames[src->cur_frame].req.bid -
					   unit_offset_in_block(m, src->cur_block));
	push_free(m, src->cur_frame);
	src->cur_frame = -1;
}

/* Move a source to its next block, waiting for it if needed. */
xxl_status
merge_next_block(xxl_merger *m, merge_source *src)
{
	int			f;
	int			r = (int) (src - m->src);

	merge_release_current(m, src);
	__atomic_add_fetch(&m->units_read, 1, __ATOMIC_RELAXED);
	if (src->pend_head >= 0)
	{
		f = src->pend_head;
		src->pend_head = m->frames[f].next;
		if (src->pend_head < 0)
			src->pend_tail = -1;
	}
	else
	{
		/* not prefetched: read it into the frame just released */
		__atomic_add_fetch(&m->units_unprefetched, 1, __ATOMIC_RELAXED);
		f = pop_free(m);
		if (issue_unit(m, f, r) != XXL_OK)
		{
			push_free(m, f);	/* (posted or not, destroy waits for it) */
			return m->env.err->code;
		}
	}
	src->cur_frame = f;
	src->cur_block = m->frames[f].block;
	src->cur_len = unit_length(src->run, src->cur_block, read_unit(&m->env));
	src->pos = 0;
	if (merge_prefetch(m) != XXL_OK)
		return m->env.err->code;
	return xxl_io_wait(m->env.disks, &m->frames[f].req, m->env.err);
}

/*
 * A budgeted buffer of size bytes in place of old (of *cur bytes, whose
 * contents are lost), or NULL with *cur 0; old is freed first, so the budget
 * never holds both.
 */
static void *
merge_regrow(xxl_merger *m, void *old, size_t *cur, size_t size)
{
	void	   *buf;

	xxl_budget_free(m->env.budget, old, *cur);
	*cur = 0;
	buf = xxl_budget_alloc(m->env.budget, size, m->env.err);
	if (buf != NULL)
		*cur = size;
	return buf;
}

/* Make sure the source's scratch holds len bytes (its old contents are lost). */
xxl_status
merge_ensure_scratch(xxl_merger *m, merge_source *src, size_t len)
{
	if (len <= src->scratch_size)
		return XXL_OK;
	src->scratch = merge_regrow(m, src->scratch, &src->scratch_size, XXL_ROUND_UP(len, 64));
	return src->scratch != NULL ? XXL_OK : m->env.err->code;
}

/* Contiguous pointer to the source's next len bytes. */
static xxl_status
source_read(xxl_merger *m, merge_source *src, size_t len, const unsigned char **out)
{
	size_t		copied = 0;

	if (len == 0)
	{
		*out = (const unsigned char *) "";
		return XXL_OK;
	}
	if (len > src->remaining)
		return xxl_error_set(m->env.err, XXL_EIO, 0, "run is shorter than its record headers say");
	if (src->pos == src->cur_len && merge_next_block(m, src) != XXL_OK)
		return m->env.err->code;
	if (src->cur_len - src->pos >= len)
	{
		*out = (unsigned char *) m->frames[src->cur_frame].data + src->pos;
		src->pos += len;
		src->remaining -= len;
		return XXL_OK;
	}
	if (merge_ensure_scratch(m, src, len) != XXL_OK)
		return m->env.err->code;
	while (copied < len)
	{
		size_t		n;

		if (src->pos == src->cur_len && merge_next_block(m, src) != XXL_OK)
			return m->env.err->code;
		n = src->cur_len - src->pos;
		if (n > len - copied)
			n = len - copied;
		memcpy(src->scratch + copied, m->frames[src->cur_frame].data + src->pos, n);
		src->pos += n;
		copied += n;
	}
	src->remaining -= len;
	*out = (unsigned char *) src->scratch;
	return XXL_OK;
}

/*
 * Offset-value codes (the loser tree's keys for records compared by their
 * bytes).  A key K at or after a base B is coded by the length `off` of
 * their common prefix and K's byte there: ((2^32 - 1 - off) << 9) | (256 +
 * K[off]), or | 0 when K ends there (K = B).  For keys coded against the
 * same base, a smaller code is a smaller key, and equal codes need the
 * bytes after off.  In a tree of losers every loser on the path of the
 * record handed out last is coded against that record, so a new record of
 * its run, coded against it too, meets codes it can compare directly; when
 * two codes differ the loser's code against the winner is the one it has
 * (if A <= B <= C, code(C|A) = max(code(B|A), code(C|B))), so only a tie
 * costs a look at the bytes, from the offset on.  Keys that share long
 * prefixes (a report sorted by a customer name, then a number) then cost a
 * comparison of the bytes past the common prefix, not of the whole key, at
 * every level of the tree (Graefe, "Implementing sorting in database
 * systems", 2006).
 */
static inline uint64_t
ovc_code(const unsigned char *k, uint32_t len, uint32_t off)
{
	return ((uint64_t) (UINT32_MAX - off) << 9) | (off < len ? 256u + k[off] : 0u);
}

/* The length of the common prefix of a and b, known to be at least from. */
static inline uint32_t
key_lcp(const unsigned char *a, uint32_t alen, const unsigned char *b, uint32_t blen,
		uint32_t from)
{
	uint32_t	n = alen < blen ? alen : blen;
	uint32_t	i = from;

	while (i + 8 <= n)
	{
		uint64_t	x,
					y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return i + (uint32_t) (__builtin_ctzll(x ^ y) >> 3);	/* little-endian */
		i += 8;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/*
 * Whether the runs' first keys share their first 8 bytes: then prefixes
 * would tie at every comparison (a leading column with few values, text
 * with a common beginning), and the tree compares offset-value codes.
 * Otherwise the 8-byte prefix decides almost every comparison by itself,
 * where a one-byte code would tie far more often (random text: a code's
 * byte is one of 16 hex digits), so the tree keeps prefixes.
 */
static bool
heads_share_prefix(const xxl_merger *m)
{
	const merge_source *first = NULL;
	int			live = 0;

	for (int r = 0; r < m->k; r++)
	{
		const merge_source *src = &m->src[r];

		if (src->done)
			continue;
		live++;
		if (first == NULL)
			first = src;
		else if (key_lcp(first->key, first->key_len, src->key, src->key_len, 0) < 8)
			return false;
	}
	return live > 1;
}

/* Load the source's next record, or mark it done. */
static xxl_status
source_advance(xxl_merger *m, merge_source *src)
{
	const xxl_merge_env *s = &m->env;

	if (src->remaining == 0)
	{
		src->done = true;
		src->prefix = UINT64_MAX;
		src->code = UINT64_MAX;
		merge_release_current(m, src);
		return merge_prefetch(m);
	}
	if (s->fixed)
	{
		if (src->cur_len - src->pos >= s->rec_size && src->cur_frame >= 0)
		{
			/* the common case: the record lies inside the current block */
			src->key = (unsigned char *) m->frames[src->cur_frame].data + src->pos;
			src->pos += s->rec_size;
			src->remaining -= s->rec_size;
		}
		else if (source_read(m, src, s->rec_size, &src->key) != XXL_OK)
			return s->err->code;
		src->key_len = (uint32_t) s->key_size;
		src->payload = src->key;
		src->payload_len = (uint32_t) s->rec_size;
	}
	else
	{
		const unsigned char *p;
		uint32_t	hdr[2];
		size_t		avail = src->cur_frame >= 0 ? src->cur_len - src->pos : 0;

		if (avail >= VAR_HEADER)
		{
			/* the common case: header and record inside the current block */
			p = (unsigned char *) m->frames[src->cur_frame].data + src->pos;
			memcpy(hdr, p, VAR_HEADER);
			/* (the block's rest is part of what remains of the run) */
			if (VAR_HEADER + (uint64_t) hdr[0] + hdr[1] <= avail)
			{
				size_t		len = VAR_HEADER + (size_t) hdr[0] + hdr[1];

				src->pos += len;
				src->remaining -= len;
				p += VAR_HEADER;
				goto found;
			}
		}
		if (source_read(m, src, VAR_HEADER, &p) != XXL_OK)
			return s->err->code;
		memcpy(hdr, p, VAR_HEADER);
		if (source_read(m, src, (size_t) hdr[0] + hdr[1], &p) != XXL_OK)
			return s->err->code;
found:
		src->key = p;
		src->key_len = hdr[0];
		src->payload = p + hdr[0];
		src->payload_len = hdr[1];
	}
	/* compared keys: their abbreviation, which decides where it differs */
	src->prefix = m->env.compare != NULL ? xxl_key_abbrev(m->env.compare, src->key, src->key_len)
		: xxl_key_prefix(src->key, src->key_len);
	src->code = m->ovc ? ovc_code(src->key, src->key_len,
								  key_lcp(src->key, src->key_len, m->base, m->base_len, 0)) :
		src->prefix;
	return XXL_OK;
}

/*
 * Is source a's record before source b's?  Ties go to the earlier run.  A
 * finished source has code UINT64_MAX, so the codes decide most cases
 * before "done" needs a look.  (With offset-value codes this is asked only
 * when a source is done.)
 */
static inline bool
source_less(const xxl_merger *m, int a, int b)
{
	const merge_source *x = &m->src[a];
	const merge_source *y = &m->src[b];
	int			c;

	if (x->code != y->code)
		return x->code < y->code;
	if (x->done || y->done)
		return y->done && (!x->done || a < b);
	c = xxl_key_order(m->env.compare, x->key, x->key_len, y->key, y->key_len);
	return c != 0 ? c < 0 : a < b;
}

/*
 * Sources a and b tie on their codes: is a's record before b's?  *lcode
 * gets the loser's code against the winner: with offset-value codes it is
 * computed from the bytes past the offset they share; otherwise codes are
 * prefixes, and the loser keeps its own.
 */
static inline bool
source_tie_less(const xxl_merger *m, int a, int b, uint64_t code, uint64_t *lcode)
{
	const merge_source *x = &m->src[a];
	const merge_source *y = &m->src[b];
	uint32_t	off,
				n;
	bool		less;
	const merge_source *loser;

	*lcode = code;
	if (!m->ovc || x->done || y->done)
		return source_less(m, a, b);
	/* equal codes: the same offset against the base, and the same byte there */
	off = UINT32_MAX - (uint32_t) (code >> 9);
	if ((code & 0x1FF) != 0)
		off++;
	off = key_lcp(x->key, x->key_len, y->key, y->key_len, off);
	n = x->key_len < y->key_len ? x->key_len : y->key_len;
	if (off < n)
		less = x->key[off] < y->key[off];
	else if (x->key_len != y->key_len)
		less = x->key_len < y->key_len;
	else
		less = a < b;
	loser = less ? y : x;
	*lcode = ovc_code(loser->key, loser->key_len, off);
	return less;
}

static inline int
tree_src(const xxl_merger *m, int node)
{
	return m->tree[node].rank;
}

static int
tree_build(xxl_merger *m, int node)
{
	int			l,
				r;

	if (node >= m->k)
		return node - m->k;
	l = tree_build(m, 2 * node);
	r = tree_build(m, 2 * node + 1);
	if (m->src[l].code != m->src[r].code)
	{
		/* the loser's code against the winner is its own (see ovc_code) */
		bool		r_first = m->src[r].code < m->src[l].code;

		m->tree[node].rank = r_first ? l : r;
		m->tree[node].code = m->src[r_first ? l : r].code;
		return r_first ? r : l;
	}
	else
	{
		uint64_t	lcode;
		bool		r_first = source_tie_less(m, r, l, m->src[l].code, &lcode);

		m->tree[node].rank = r_first ? l : r;
		m->tree[node].code = lcode;
		return r_first ? r : l;
	}
}

/*
 * Replay the winner's path after its source advanced.  The code (an
 * offset-value code, or the key's prefix for keys compared by a function)
 * decides most comparisons; ties look at the keys (records that reach this
 * tree have long or variable keys: short fixed keys are merged in batches,
 * with integer keys).
 */
static inline void
tree_replay(xxl_merger *m, int leaf)
{
	int			winner = leaf;
	uint64_t	wkey = m->src[leaf].code;
	struct tree_node *t = m->tree;

	for (int node = (leaf + m->k) / 2; node >= 1; node /= 2)
	{
		uint64_t	p = t[node].code;
		int			r = t[node].rank;
		bool		swap;

		if (__builtin_expect(p == wkey, 0))
		{
			uint64_t	lcode;

			/* a tie: the loser's code against the winner is new */
			if (source_tie_less(m, r, winner, p, &lcode))
			{
				t[node].rank = winner;
				winner = r;
			}
			t[node].code = lcode;
			continue;
		}
		swap = p < wkey;

		/*
		 * Swap without a branch on the outcome, which for keys in no order
		 * is a coin toss; the compiler made a branch of a select, so masks.
		 */
		uint64_t	pm = (p ^ wkey) & (0 - (uint64_t) swap);
		int			rm = (r ^ winner) & -(int) swap;

		t[node].code = p ^ pm;
		t[node].rank = r ^ rm;
		wkey ^= pm;
		winner ^= rm;
	}
	t[0].rank = winner;
	t[0].code = wkey;
}

/*
 * Bytes a merge needs per run: its frame and state, and from direct files
 * its share of prefetch frames (MERGE_PREFETCH_SHARE).
 */
static size_t
per_source_bytes(const xxl_merge_env *env)
{
	size_t		prefetch = 0;

	if (env->disks != NULL && xxl_disks_direct(env->disks))
		prefetch = (read_unit(env) + sizeof(merge_frame)) / MERGE_PREFETCH_SHARE;
	return read_unit(env) + prefetch
		+ XXL_ROUND_UP(env->max_record, XXL_ALIGN) + XXL_RUN_LOG_CURSOR
		+ sizeof(merge_source)
		+ sizeof(merge_frame) + sizeof(struct tree_node) + 2 * MERGE_TREE_NODE_MAX
		+ sizeof(size_t) + 2 * sizeof(segment);
}

int
xxl_merge_max_fan_in(const xxl_merge_env *env, size_t reserve_bytes)
{
	return xxl_merge_fan_in_of(env, xxl_budget_available(env->budget), reserve_bytes);
}

int
xxl_merge_fan_in_of(const xxl_merge_env *env, size_t avail, size_t reserve_bytes)
{
	/* at least one prefetch frame, and the base key of offset-value codes */
	size_t		reserve = reserve_bytes + read_unit(env) + XXL_ROUND_UP(env->max_record, XXL_ALIGN);

	if (avail <= reserve)
		return 0;
	return (int) ((avail - reserve) / per_source_bytes(env));
}

xxl_merger *
xxl_merger_create(const xxl_merge_env *env, xxl_run *runs, int k, bool release_blocks,
				  size_t reserve_bytes)
{
	const xxl_merge_env *s = env;
	xxl_merger *m;
	size_t		avail;
	size_t		reserve;
	int			nframes;

	m = xxl_budget_alloc(s->budget, sizeof(*m), s->err);
	if (m == NULL)
		return NULL;
	memset(m, 0, sizeof(*m));
	m->env = *env;
	m->k = k;
	m->release_blocks = release_blocks;
	m->advance_pending = -1;
	m->free_head = -1;

	/* all memory not needed elsewhere becomes frames */
	avail = xxl_budget_available(s->budget);
	reserve = reserve_bytes + XXL_ROUND_UP(s->max_record, XXL_ALIGN)
		+ (size_t) k * (XXL_ROUND_UP(s->max_record, XXL_ALIGN) + XXL_RUN_LOG_CURSOR + sizeof(merge_source)
						+ sizeof(struct tree_node) + 2 * MERGE_TREE_NODE_MAX + sizeof(size_t)
						+ 2 * sizeof(segment));
	nframes = avail > reserve ? (int) ((avail - reserve) / (read_unit(s) + sizeof(merge_frame))) : 0;
	if (nframes > k + MERGE_PREFETCH_MAX(k))
		nframes = k + MERGE_PREFETCH_MAX(k);
	if (nframes < k + 1)
		nframes = k + 1;		/* max_fan_in() made sure this fits */

	m->src = xxl_budget_alloc(s->budget, (size_t) k * sizeof(merge_source), s->err);
	m->tree = m->src ? xxl_budget_alloc(s->budget, (size_t) k * sizeof(struct tree_node), s->err) : NULL;
	if (m->src != NULL)
		memset(m->src, 0, (size_t) k * sizeof(merge_source));
	m->frames = m->tree ? xxl_budget_alloc(s->budget, (size_t) nframes * sizeof(merge_frame), s->err) : NULL;
	if (m->frames == NULL)
	{
		xxl_merger_destroy(m);
		return NULL;
	}
	m->frame_capacity = nframes;
	memset(m->frames, 0, (size_t) nframes * sizeof(merge_frame));
	for (int f = 0; f < nframes; f++)
	{
		m->frames[f].data = xxl_budget_alloc(s->budget, read_unit(s), s->err);
		if (m->frames[f].data == NULL)
		{
			if (f < k + 1)
			{
				xxl_merger_destroy(m);
				return NULL;
			}
			xxl_error_clear(s->err);	/* fewer prefetch frames will do */
			break;
		}
		m->nframes = f + 1;
		push_free(m, f);
	}

	for (int r = 0; r < k; r++)
	{
		merge_source *src = &m->src[r];

		src->run = &runs[r];
		src->cur_frame = -1;
		src->pend_head = src->pend_tail = -1;
		src->remaining = runs[r].nbytes;
		src->nunits = (size_t) ((runs[r].nbytes + read_unit(s) - 1) / read_unit(s));
		if (xxl_run_cursor_open(&src->blocks, &runs[r], s->budget, s->err) != XXL_OK ||
			(src->nunits > 0 && seek_issue(m, src) != XXL_OK))
		{
			xxl_merger_destroy(m);
			return NULL;
		}
	}
	/* every run's first block first, then prefetch in σ order */
	for (int r = 0; r < k; r++)
	{
		merge_source *src = &m->src[r];

		if (src->nunits > 0)
		{
			int			f = pop_free(m);

			m->frames[f].next = -1;
			src->pend_head = src->pend_tail = f;
			if (issue_unit(m, f, r) != XXL_OK)
			{
				xxl_merger_destroy(m);
				return NULL;
			}
		}
	}
	if (merge_prefetch(m) != XXL_OK)
	{
		xxl_merger_destroy(m);
		return NULL;
	}
	/* a batch takes a record or more from every run: the buffer must hold k */
	if (merge_batch_eligible(env) && xxl_merge_output_bytes(env) / env->rec_size >= (size_t) k)
	{
		/* blocks are loaded by the first batch */
		if (merge_setup_batched(m) != XXL_OK)
		{
			xxl_merger_destroy(m);
			return NULL;
		}
		return m;
	}
	for (int r = 0; r < k; r++)
	{
		if (source_advance(m, &m->src[r]) != XXL_OK)
		{
			xxl_merger_destroy(m);
			return NULL;
		}
	}
	if (k > 1 && m->env.compare == NULL && heads_share_prefix(m))
	{
		/* offset-value codes, against an empty base to begin with */
		m->ovc = true;
		m->base_len = 0;
		for (int r = 0; r < k; r++)
			if (!m->src[r].done)
				m->src[r].code = ovc_code(m->src[r].key, m->src[r].key_len, 0);
	}
	m->tree[0].rank = k == 1 ? 0 : tree_build(m, 1);
	return m;
}

/* Room for a base key of len bytes. */
static xxl_status
merge_grow_base(xxl_merger *m, size_t len)
{
	m->base = merge_regrow(m, m->base, &m->base_size, XXL_ROUND_UP(len, XXL_ALIGN));
	return m->base != NULL ? XXL_OK : m->env.err->code;
}

/* Next record of the merge: the winning source, or -1 at the end. */
int
merge_step(xxl_merger *m, xxl_status *rc)
{
	int			w;

	*rc = XXL_OK;
	if (m->advance_pending >= 0)
	{
		if (m->ovc)
		{
			/* the record handed out is the base of the next one's code */
			const merge_source *out = &m->src[m->advance_pending];

			if (out->key_len > m->base_size && merge_grow_base(m, out->key_len) != XXL_OK)
			{
				*rc = m->env.err->code;
				return -1;
			}
			memcpy(m->base, out->key, out->key_len);
			m->base_len = out->key_len;
		}
		*rc = source_advance(m, &m->src[m->advance_pending]);
		if (*rc != XXL_OK)
			return -1;
		if (m->k > 1)
			tree_replay(m, m->advance_pending);
		m->advance_pending = -1;
	}
	w = tree_src(m, 0);
	if (m->src[w].done)
		return -1;
	m->advance_pending = w;
	return w;
}

/* Reading: the caller's side of every mode ------------------------------------ */

static int
merge_next_async(xxl_merger *m, xxl_merge_record *rec)
{
	merge_batch *b = &m->batch[m->read_index];

	if (m->reading && m->read_pos == b->used)
	{
		bool		last = b->last;

		/* hand the consumed batch back to the worker */
		pthread_mutex_lock(&m->lock);
		b->full = false;
		pthread_cond_broadcast(&m->changed);
		pthread_mutex_unlock(&m->lock);
		m->reading = false;
		if (last)
			return 0;
		m->read_index = (m->read_index + 1) % MERGE_BATCHES;
		b = &m->batch[m->read_index];
	}
	if (!m->reading)
	{
		pthread_mutex_lock(&m->lock);
		while (!b->full)
			pthread_cond_wait(&m->changed, &m->lock);
		pthread_mutex_unlock(&m->lock);
		if (b->status != XXL_OK)
		{
			xxl_error_set(m->caller_err, m->worker_err.code, m->worker_err.sys_errno, "%s",
						  m->worker_err.message);
			return -1;
		}
		m->reading = true;
		m->read_pos = 0;
		if (b->used == 0)
			return merge_next_async(m, rec);	/* an empty last batch */
	}
	if (m->env.fixed)
	{
		rec->key = (unsigned char *) b->data + m->read_pos;
		rec->key_len = (uint32_t) m->env.key_size;
		rec->payload = rec->key;
		rec->payload_len = (uint32_t) m->env.rec_size;
		m->read_pos += m->env.rec_size;
	}
	else
	{
		uint32_t	hdr[2];

		memcpy(hdr, b->data + m->read_pos, VAR_HEADER);
		rec->key = (unsigned char *) b->data + m->read_pos + VAR_HEADER;
		rec->key_len = hdr[0];
		rec->payload = rec->key + hdr[0];
		rec->payload_len = hdr[1];
		m->read_pos += VAR_HEADER + (size_t) hdr[0] + hdr[1];
	}
	return 1;
}

int
merge_next_sync(xxl_merger *m, xxl_merge_record *rec)
{
	xxl_status	rc;
	int			i = merge_step(m, &rc);
	const merge_source *src;

	if (i < 0)
		return rc == XXL_OK ? 0 : -1;
	src = &m->src[i];
	rec->key = src->key;
	rec->key_len = src->key_len;
	rec->payload = src->payload;
	rec->payload_len = src->payload_len;
	rec->prefix = src->prefix;
	return 1;
}

int
xxl_merger_next(xxl_merger *m, xxl_merge_record *rec)
{
	if (m->async)
		return merge_next_async(m, rec);
	return m->batched ? merge_next_batched(m, rec) : merge_next_sync(m, rec);
}

int
xxl_merger_next_many(xxl_merger *m, const unsigned char **recs, size_t max, size_t *n)
{
	xxl_merge_record rec;
	int			got = xxl_merger_next(m, &rec);
	size_t		more = 0;

	if (got <= 0)
		return got;
	*recs = rec.key;
	/* the records after it in the same batch lie right behind it */
	if (m->env.fixed && max > 1)
	{
		if (m->async)
		{
			more = (m->batch[m->read_index].used - m->read_pos) / m->env.rec_size;
			if (more > max - 1)
				more = max - 1;
			m->read_pos += more * m->env.rec_size;
		}
		else if (m->batched)
		{
			more = m->out_count - m->out_pos;
			if (more > max - 1)
				more = max - 1;
			m->out_pos += more;
		}
	}
	*n = 1 + more;
	return 1;
}

void
xxl_merger_units(const xxl_merger *m, uint64_t *read, uint64_t *unprefetched)
{
	*read = m != NULL ? __atomic_load_n(&m->units_read, __ATOMIC_RELAXED) : 0;
	*unprefetched = m != NULL ? __atomic_load_n(&m->units_unprefetched, __ATOMIC_RELAXED) : 0;
}

void
xxl_merger_destroy(xxl_merger *m)
{
	const xxl_merge_env *s;

	if (m == NULL)
		return;
	merge_stop_worker(m);
	merge_free_batches(m);
	s = &m->env;
	xxl_budget_free(s->budget, m->out, m->out_bytes);
	xxl_budget_free(s->budget, m->take, (size_t) m->k * sizeof(size_t));
	for (int t = 0; t < 2; t++)
	{
		xxl_budget_free(s->budget, m->thread_tree[t], m->thread_tree_bytes);
		xxl_budget_free(s->budget, m->split_seg[t], (size_t) m->k * sizeof(segment));
	}
	if (m->frames)
	{
		xxl_error	ignored = {0};

		/* no buffer may be freed while its read is in flight */
		for (int f = 0; f < m->nframes; f++)
		{
			xxl_io_wait(s->disks, &m->frames[f].req, &ignored);
			xxl_budget_free(s->budget, m->frames[f].data, read_unit(s));
		}
		xxl_budget_free(s->budget, m->frames, (size_t) m->frame_capacity * sizeof(merge_frame));
	}
	if (m->src)
	{
		for (int r = 0; r < m->k; r++)
		{
			xxl_budget_free(s->budget, m->src[r].scratch, m->src[r].scratch_size);
			xxl_run_cursor_close(&m->src[r].blocks, s->budget);
		}
		xxl_budget_free(s->budget, m->src, (size_t) m->k * sizeof(merge_source));
	}
	xxl_budget_free(s->budget, m->tree, (size_t) m->k * sizeof(struct tree_node));
	xxl_budget_free(s->budget, m->base, m->base_size);
	xxl_budget_free(s->budget, m, sizeof(*m));
}


