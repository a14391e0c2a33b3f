/*
 * idmap.c — chunked arrays and the id -> dense map of the in-memory graph
 * paths (idmap.h).
 */
#include "core/graph/idmap.h"

#include <string.h>

#define PVEC_CHUNK (1024 * 1024)

void
pvec_init(pvec *v, size_t elem)
{
	memset(v, 0, sizeof(*v));
	v->elem = elem;
	while (((size_t) 2 << v->shift) * elem <= PVEC_CHUNK)
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

void *
pvec_push(xxl_env *env, pvec *v)
{
	if ((v->n >> v->shift) >= v->nchunks)
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

static inline uint64_t
slot_of(int64_t id, size_t cap)
{
	uint64_t	x = (uint64_t) id * UINT64_C(0x9E3779B97F4A7C15);

	return (x ^ (x >> 31)) & (cap - 1);
}

void
idmap_init(idmap *m)
{
	memset(m, 0, sizeof(*m));
	pvec_init(&m->ids, sizeof(int64_t));
}

size_t
idmap_next_cap(const idmap *m)
{
	if ((m->n + 1) * 2 <= m->cap)
		return 0;
	return m->cap ? 2 * m->cap : 1024;
}

xxl_status
idmap_grow(xxl_env *env, idmap *m)
{
	size_t		cap = m->cap ? 2 * m->cap : 1024;
	idmap_slot *slots = xxl_env_alloc(env, cap * IDMAP_SLOT_BYTES);

	if (slots == NULL)
		return env->err.code;
	for (size_t i = 0; i < cap; i++)
		slots[i].val = IDMAP_NONE;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].val != IDMAP_NONE)
		{
			size_t		h = slot_of(m->slots[i].key, cap);

			while (slots[h].val != IDMAP_NONE)
				h = (h + 1) & (cap - 1);
			slots[h] = m->slots[i];
		}
	if (m->slots)
		xxl_env_free(env, m->slots, m->cap * IDMAP_SLOT_BYTES);
	m->slots = slots;
	m->cap = cap;
	return XXL_OK;
}

uint32_t
idmap_find(const idmap *m, int64_t id)
{
	size_t		h;

	if (m->cap == 0)
		return IDMAP_NONE;
	h = slot_of(id, m->cap);
	while (m->slots[h].val != IDMAP_NONE)
	{
		if (m->slots[h].key == id)
			return m->slots[h].val;
		h = (h + 1) & (m->cap - 1);
	}
	return IDMAP_NONE;
}

uint32_t
idmap_intern(xxl_env *env, idmap *m, int64_t id)
{
	size_t		h = slot_of(id, m->cap);
	int64_t    *orig;

	while (m->slots[h].val != IDMAP_NONE)
	{
		if (m->slots[h].key == id)
			return m->slots[h].val;
		h = (h + 1) & (m->cap - 1);
	}
	if (m->n >= IDMAP_MAX || (orig = pvec_push(env, &m->ids)) == NULL)
		return IDMAP_NONE;
	*orig = id;
	m->slots[h].key = id;
	m->slots[h].val = (uint32_t) m->n;
	return (uint32_t) m->n++;
}

void
idmap_prefetch(const idmap *m, int64_t id)
{
	if (m->cap > 0)
		__builtin_prefetch(&m->slots[slot_of(id, m->cap)]);
}

void
idmap_drop_table(xxl_env *env, idmap *m)
{
	if (m->slots)
		xxl_env_free(env, m->slots, m->cap * IDMAP_SLOT_BYTES);
	m->slots = NULL;
	m->cap = 0;
}

void
idmap_free(xxl_env *env, idmap *m)
{
	idmap_drop_table(env, m);
	pvec_free(env, &m->ids);
	m->n = 0;
}
