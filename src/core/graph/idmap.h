/*
 * idmap.h — what the in-memory graph paths share: arrays that grow in
 * fixed chunks (no copy and no doubling peak when they grow) and the map
 * from original 64-bit ids to dense ids 0..n-1 in order of first
 * appearance (an open-addressing hash table, key and value in one slot,
 * plus the dense -> original array).  Everything is charged to the
 * operator's budget; the caller decides whether a growth still fits.
 */
#ifndef XXL_GRAPH_IDMAP_H
#define XXL_GRAPH_IDMAP_H

#include "core/xxl_env.h"

/* Growing arrays in fixed chunks. */
typedef struct pvec
{
	unsigned char **chunks;
	size_t		nchunks,
				cap;
	size_t		elem;
	int			shift;			/* elements per chunk = 1 << shift */
	uint64_t	n;
} pvec;

static inline void *
pvec_at(const pvec *v, uint64_t i)
{
	return v->chunks[i >> v->shift] + (i & ((UINT64_C(1) << v->shift) - 1)) * v->elem;
}

/* Chunks of 1 MB, or 2 MB (huge pages) for an operator of a large budget. */
void		pvec_init(pvec *v, size_t elem, size_t budget);

/*
 * Who fills pvecs as input comes checks the budget once per this many
 * elements, for them and the nodes they can bring: not per element, and
 * not per chunk (a chunk of 2 MB holds up to 256K elements; checking for
 * that many nodes ahead refused graphs that fit).
 */
#define PVEC_FIT_STRIDE 32768
/* Room for one more element at the end (NULL: out of budget, in env->err). */
void	   *pvec_push_chunk(xxl_env *env, pvec *v);

/* (inline while the last chunk has room; a new chunk in idmap.c) */
static inline void *
pvec_push(xxl_env *env, pvec *v)
{
	if ((v->n >> v->shift) < v->nchunks)
		return pvec_at(v, v->n++);
	return pvec_push_chunk(env, v);
}
void		pvec_free(xxl_env *env, pvec *v);
/* Bytes a pvec of n elements holds. */
size_t		pvec_bytes(const pvec *v, uint64_t n);

/*
 * Sort the elements in place by their first key_size bytes (memcmp order),
 * not stably, with up to `threads` OpenMP threads (pvec_sort.c).  Elements
 * of at most PVEC_SORT_MAX_REC bytes.
 */
#define PVEC_SORT_MAX_REC 64
void		pvec_sort(pvec *v, size_t key_size, int threads);

#define IDMAP_NONE UINT32_MAX	/* not a dense id */
#define IDMAP_MAX (UINT32_MAX - 2)	/* dense ids stay below this */

#define IDMAP_DIRECT_MIN (64 * 1024)

typedef struct idmap_slot
{
	int64_t		key;
	uint32_t	val;			/* IDMAP_NONE: empty */
} idmap_slot;

/*
 * Ids in [0, dcap) are looked up in a direct array (4 bytes each), the
 * others in the hash table.  Tables keyed by small dense-ish ids (1..n, as
 * pgRouting's usually are) then cost one access per id in 4n bytes instead
 * of a probe in 32n; the array grows while it stays within 8 entries per
 * id numbered so far.
 */
typedef struct idmap
{
	idmap_slot *slots;			/* a power of two of them, at most half full */
	size_t		cap;
	uint32_t   *direct;			/* dense id of each id < dcap, or IDMAP_NONE */
	size_t		dcap;
	size_t		dfloor;			/* entries the array may reach however few ids are in
								 * (IDMAP_DIRECT_MIN unless the owner says more) */
	pvec		ids;			/* dense -> original */
	uint64_t	n;
} idmap;

void		idmap_init(idmap *m, size_t budget);

static inline bool
idmap_in_direct(const idmap *m, int64_t id)
{
	return id >= 0 && (uint64_t) id < m->dcap;
}

/* The hash table's home slot of an id. */
static inline uint64_t
idmap_slot_of(int64_t id, size_t cap)
{
	uint64_t	x = (uint64_t) id * UINT64_C(0x9E3779B97F4A7C15);

	return (x ^ (x >> 31)) & (cap - 1);
}

/* Bytes the tables hold now. */
size_t		idmap_table_bytes(const idmap *m);
/*
 * Bytes held while the tables grow to take id (old and new at once), 0 when
 * id needs no growth.
 */
size_t		idmap_grow_bytes_new(const idmap *m, int64_t id);

/* (inline: an id of the direct array, the common case, costs no call) */
static inline size_t
idmap_grow_bytes(const idmap *m, int64_t id)
{
	return idmap_in_direct(m, id) ? 0 : idmap_grow_bytes_new(m, id);
}
/*
 * Bytes held while the direct array grows to take id (old and new at
 * once), SIZE_MAX when the array would not take it (a negative id, or one
 * beyond both 8 entries per id numbered and dfloor).
 */
size_t		idmap_direct_grow_bytes(const idmap *m, int64_t id);
/* Grow the tables to take id (after idmap_grow_bytes said how much). */
xxl_status	idmap_grow(xxl_env *env, idmap *m, int64_t id);
/*
 * The dense id of id, numbering it if new (the tables must have room:
 * idmap_grow_bytes() == 0); IDMAP_NONE when the dense array cannot grow.
 */
uint32_t	idmap_intern_new(xxl_env *env, idmap *m, int64_t id);

static inline uint32_t
idmap_intern(xxl_env *env, idmap *m, int64_t id)
{
	if (idmap_in_direct(m, id) && m->direct[id] != IDMAP_NONE)
		return m->direct[id];
	return idmap_intern_new(env, m, id);
}
/*
 * Whether the caller's budget still holds n ids with tables of `tables`
 * bytes (arg: the caller's operator).
 */
typedef bool (*idmap_fits_fn) (const void *arg, uint64_t n, size_t tables);

/*
 * idmap_intern, growing the tables first if id needs it and fits says the
 * growth (old and new tables at once) still fits; IDMAP_NONE, nothing
 * changed, when it does not.
 */
static inline uint32_t
idmap_intern_within(xxl_env *env, idmap *m, int64_t id, idmap_fits_fn fits, const void *arg)
{
	size_t		grow = idmap_grow_bytes(m, id);

	if (grow > 0 && (!fits(arg, m->n + 1, grow) || idmap_grow(env, m, id) != XXL_OK))
		return IDMAP_NONE;
	return idmap_intern(env, m, id);
}

/* The dense id of id, IDMAP_NONE if unknown (also after idmap_drop_table). */
uint32_t	idmap_find(const idmap *m, int64_t id);
static inline void
idmap_prefetch(const idmap *m, int64_t id)
{
	if (idmap_in_direct(m, id))
		__builtin_prefetch(&m->direct[id]);
	else if (m->cap > 0)
		__builtin_prefetch(&m->slots[idmap_slot_of(id, m->cap)]);
}

static inline int64_t
idmap_id(const idmap *m, uint64_t dense)
{
	return *(const int64_t *) pvec_at(&m->ids, dense);
}

/*
 * Call visit(arg, id, dense) for every id numbered, in ascending order of
 * the original ids (before idmap_drop_table).  The ids of the direct array
 * come in order by a scan of it; only the hashed ones are sorted, in
 * (id, dense) pairs of 16 bytes each, which is all this allocates.
 */
typedef void (*idmap_visit) (void *arg, int64_t id, uint32_t dense);
xxl_status	idmap_each_sorted(xxl_env *env, const idmap *m, idmap_visit visit, void *arg);

/*
 * The ranking of the ids in id order, for idmap_each_sorted with
 * idmap_rank_visit: rank -> id into ids, and where given, dense -> rank
 * into rank and rank -> dense into order.  next starts at 0.
 */
typedef struct idmap_ranking
{
	int64_t    *ids;
	uint32_t   *rank;
	uint32_t   *order;
	uint32_t	next;
} idmap_ranking;
void		idmap_rank_visit(void *arg, int64_t id, uint32_t dense);

/* Free the tables, keep the dense -> original array. */
void		idmap_drop_table(xxl_env *env, idmap *m);
void		idmap_free(xxl_env *env, idmap *m);

#endif							/* XXL_GRAPH_IDMAP_H */
