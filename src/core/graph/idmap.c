/*
 * idmap.c — chunked arrays and the id -> dense map of the in-memory graph
 * paths (idmap.h).
 */
#include "core/graph/idmap.h"

#include <stdlib.h>
#include <string.h>

/*
 * Chunks of 2 MB get huge pages (xxl_budget_alloc): a page fault per 2 MB
 * filled instead of per 4 kB.  Small budgets keep 1 MB chunks, or a 32nd
 * of the budget below 32MB: the part unfilled of the last chunk of each
 * array matters there (it can leave no room for the sorter that takes over
 * when the edges outgrow the budget).
 */
#define PVEC_CHUNK (1024 * 1024)
#define PVEC_MIN_CHUNK (16 * 1024)
#define PVEC_HUGE_CHUNK (2 * 1024 * 1024)
#define PVEC_HUGE_BUDGET ((size_t) 64 * 1024 * 1024)

void
pvec_init(pvec *v, size_t elem, size_t budget)
{
	size_t		chunk = budget >= PVEC_HUGE_BUDGET ? PVEC_HUGE_CHUNK : PVEC_CHUNK;

	while (chunk > PVEC_MIN_CHUNK && chunk > budget / 32)
		chunk /= 2;

	memset(v, 0, sizeof(*v));
	v->elem = elem;
	while (((size_t) 2 << v->shift) * elem <= chunk)
		v->shift++;
}

static size_t
pvec_chunk_bytes(const pvec *v)
{
	return ((size_t) 1 << v->shift) * v->elem;
}

size_t
pvec_bytes(const pvec *v, uint64_t n)
{
	uint64_t	chunks = (n + ((UINT64_C(1) << v->shift) - 1)) >> v->shift;

	return chunks * pvec_chunk_bytes(v) + (chunks + 16) * sizeof(void *) * 2;
}

/* (pvec_push, in idmap.h, when the last chunk is full) */
void *
pvec_push_chunk(xxl_env *env, pvec *v)
{
	{
		unsigned char *chunk;

		if (v->nchunks == v->cap)
		{
			size_t		cap = v->cap ? 2 * v->cap : 16;
			unsigned char **grown = xxl_env_realloc(env, v->chunks, v->cap * sizeof(void *),
													cap * sizeof(void *));

			if (grown == NULL)
				return NULL;
			v->chunks = grown;
			v->cap = cap;
		}
		chunk = xxl_env_alloc(env, pvec_chunk_bytes(v));
		if (chunk == NULL)
			return NULL;
		v->chunks[v->nchunks++] = chunk;
	}
	return pvec_at(v, v->n++);
}

void
pvec_free(xxl_env *env, pvec *v)
{
	for (size_t i = 0; i < v->nchunks; i++)
		xxl_env_free(env, v->chunks[i], pvec_chunk_bytes(v));
	if (v->chunks)
		xxl_env_free(env, v->chunks, v->cap * sizeof(void *));
	v->chunks = NULL;
	v->nchunks = v->cap = 0;
	v->n = 0;
}

/* The id map ---------------------------------------------------------------- */

#define IDMAP_SLOT_BYTES sizeof(idmap_slot)

/* The direct array covers ids below this many entries per numbered id (and dfloor). */
#define DIRECT_PER_ID 8

void
idmap_init(idmap *m, size_t budget)
{
	memset(m, 0, sizeof(*m));
	m->dfloor = IDMAP_DIRECT_MIN;
	pvec_init(&m->ids, sizeof(int64_t), budget);
}

size_t
idmap_table_bytes(const idmap *m)
{
	return m->cap * IDMAP_SLOT_BYTES + m->dcap * sizeof(uint32_t);
}

/* The direct array's size to take id, 0 if it should not (the hash takes it). */
static size_t
direct_cap_for(const idmap *m, int64_t id)
{
	uint64_t	limit = (m->n + 1) * DIRECT_PER_ID;
	size_t		cap = m->dcap ? m->dcap : IDMAP_DIRECT_MIN;

	if (id < 0)
		return 0;
	if (limit < m->dfloor)
		limit = m->dfloor;
	while (cap <= (uint64_t) id)
		cap *= 2;
	/* the last doubling stops at a floor that binds: one not a power of two is all used */
	if (cap > limit && limit == m->dfloor && limit > (uint64_t) id)
		cap = (size_t) limit;
	return cap <= limit ? cap : 0;
}

/* (the ids outside the direct array: idmap_grow_bytes in idmap.h) */
size_t
idmap_grow_bytes_new(const idmap *m, int64_t id)
{
	size_t		dcap;

	if (idmap_in_direct(m, id))
		return 0;
	dcap = direct_cap_for(m, id);
	if (dcap > 0)
		/* the new array beside the old one, and a new hash (the ids it moves out) */
		return idmap_table_bytes(m) + dcap * sizeof(uint32_t) + m->cap * IDMAP_SLOT_BYTES;
	if ((m->n + 1) * 2 <= m->cap)
		return 0;
	return idmap_table_bytes(m) + (m->cap ? 2 * m->cap : 1024) * IDMAP_SLOT_BYTES;
}

size_t
idmap_direct_grow_bytes(const idmap *m, int64_t id)
{
	size_t		dcap = direct_cap_for(m, id);

	return dcap > 0 ? idmap_table_bytes(m) + dcap * sizeof(uint32_t) : SIZE_MAX;
}

static void
hash_put(idmap_slot *slots, size_t cap, int64_t key, uint32_t val)
{
	size_t		h = idmap_slot_of(key, cap);

	while (slots[h].val != IDMAP_NONE)
		h = (h + 1) & (cap - 1);
	slots[h].key = key;
	slots[h].val = val;
}

/* A hash table of cap slots with the entries not in the direct array. */
static xxl_status
rehash(xxl_env *env, idmap *m, size_t cap)
{
	idmap_slot *slots = xxl_env_alloc(env, cap * IDMAP_SLOT_BYTES);

	if (slots == NULL)
		return env->err.code;
	for (size_t i = 0; i < cap; i++)
		slots[i].val = IDMAP_NONE;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].val != IDMAP_NONE && !idmap_in_direct(m, m->slots[i].key))
			hash_put(slots, cap, m->slots[i].key, m->slots[i].val);
	if (m->slots)
		xxl_env_free(env, m->slots, m->cap * IDMAP_SLOT_BYTES);
	m->slots = slots;
	m->cap = cap;
	return XXL_OK;
}

xxl_status
idmap_grow(xxl_env *env, idmap *m, int64_t id)
{
	size_t		dcap;

	if (idmap_in_direct(m, id))
		return XXL_OK;
	dcap = direct_cap_for(m, id);
	if (dcap > 0)
	{
		uint32_t   *direct = xxl_env_realloc(env, m->direct, m->dcap * sizeof(uint32_t),
											 dcap * sizeof(uint32_t));

		if (direct == NULL)
			return env->err.code;
		for (size_t i = m->dcap; i < dcap; i++)
			direct[i] = IDMAP_NONE;
		m->direct = direct;
		m->dcap = dcap;
		/* the hashed ids the array now covers move into it */
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].val != IDMAP_NONE && idmap_in_direct(m, m->slots[i].key))
				m->direct[m->slots[i].key] = m->slots[i].val;
		return m->cap ? rehash(env, m, m->cap) : XXL_OK;
	}
	if ((m->n + 1) * 2 <= m->cap)
		return XXL_OK;
	return rehash(env, m, m->cap ? 2 * m->cap : 1024);
}

uint32_t
idmap_find(const idmap *m, int64_t id)
{
	size_t		h;

	if (idmap_in_direct(m, id))
		return m->direct[id];
	if (m->cap == 0)
		return IDMAP_NONE;
	h = idmap_slot_of(id, m->cap);
	while (m->slots[h].val != IDMAP_NONE)
	{
		if (m->slots[h].key == id)
			return m->slots[h].val;
		h = (h + 1) & (m->cap - 1);
	}
	return IDMAP_NONE;
}

/* (ids not yet numbered, or outside the direct array: idmap_intern in idmap.h) */
uint32_t
idmap_intern_new(xxl_env *env, idmap *m, int64_t id)
{
	uint32_t   *slot_val;
	size_t		h = 0;
	int64_t    *orig;

	if (idmap_in_direct(m, id))
	{
		slot_val = &m->direct[id];
		if (*slot_val != IDMAP_NONE)
			return *slot_val;
	}
	else
	{
		h = idmap_slot_of(id, m->cap);
		while (m->slots[h].val != IDMAP_NONE)
		{
			if (m->slots[h].key == id)
				return m->slots[h].val;
			h = (h + 1) & (m->cap - 1);
		}
		slot_val = &m->slots[h].val;
	}
	if (m->n >= IDMAP_MAX || (orig = pvec_push(env, &m->ids)) == NULL)
		return IDMAP_NONE;
	*orig = id;
	if (!idmap_in_direct(m, id))
		m->slots[h].key = id;
	*slot_val = (uint32_t) m->n;
	return (uint32_t) m->n++;
}

static int
cmp_slot_key(const void *a, const void *b)
{
	int64_t		x = ((const idmap_slot *) a)->key,
				y = ((const idmap_slot *) b)->key;

	return (x > y) - (x < y);
}

xxl_status
idmap_each_sorted(xxl_env *env, const idmap *m, idmap_visit visit, void *arg)
{
	size_t		nhashed = 0,
				k = 0;
	idmap_slot *hashed = NULL;

	for (size_t i = 0; i < m->cap; i++)
		nhashed += m->slots[i].val != IDMAP_NONE;
	if (nhashed > 0)
	{
		if ((hashed = xxl_env_alloc(env, nhashed * IDMAP_SLOT_BYTES)) == NULL)
			return env->err.code;
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].val != IDMAP_NONE)
				hashed[k++] = m->slots[i];
		qsort(hashed, nhashed, IDMAP_SLOT_BYTES, cmp_slot_key);
	}
	/* hashed ids below the direct array's, the array's, hashed ids above */
	for (k = 0; k < nhashed && hashed[k].key < 0; k++)
		visit(arg, hashed[k].key, hashed[k].val);
	for (size_t id = 0; id < m->dcap; id++)
		if (m->direct[id] != IDMAP_NONE)
			visit(arg, (int64_t) id, m->direct[id]);
	for (; k < nhashed; k++)
		visit(arg, hashed[k].key, hashed[k].val);
	if (hashed)
		xxl_env_free(env, hashed, nhashed * IDMAP_SLOT_BYTES);
	return XXL_OK;
}

void
idmap_rank_visit(void *arg, int64_t id, uint32_t dense)
{
	idmap_ranking *r = arg;

	r->ids[r->next] = id;
	if (r->rank)
		r->rank[dense] = r->next;
	if (r->order)
		r->order[r->next] = dense;
	r->next++;
}

void
idmap_drop_table(xxl_env *env, idmap *m)
{
	if (m->slots)
		xxl_env_free(env, m->slots, m->cap * IDMAP_SLOT_BYTES);
	if (m->direct)
		xxl_env_free(env, m->direct, m->dcap * sizeof(uint32_t));
	m->slots = NULL;
	m->cap = 0;
	m->direct = NULL;
	m->dcap = 0;
}

void
idmap_free(xxl_env *env, idmap *m)
{
	idmap_drop_table(env, m);
	pvec_free(env, &m->ids);
	m->n = 0;
}
