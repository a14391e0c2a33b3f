/*
 * xxl_key_filter.c — the distinct sort's set of keys seen (see
 * xxl_key_filter.h): open addressing on a 64-bit hash of the key bytes,
 * the keys copied into one arena.
 */
#include "postgres.h"

#include "common/hashfn.h"

#include "pg/sort/xxl_key_filter.h"

#define KEY_FILTER_TRIAL 65536	/* rows before deciding whether it pays */

typedef struct Slot
{
	uint64		hash;			/* 0: empty */
	uint32		offset;			/* in the arena */
	uint32		len;
} Slot;

struct XxlKeyFilter
{
	Slot	   *slots;
	uint32		nslots;			/* a power of two */
	char	   *arena;
	uint32		arena_size;
	uint32		arena_used;
	uint32		nkeys;			/* at most half the slots */
	uint64		probes;
	uint64		dropped;
	bool		off;
};

XxlKeyFilter *
xxl_key_filter_create(size_t bytes)
{
	XxlKeyFilter *f = palloc0(sizeof(XxlKeyFilter));

	/* a quarter for the slots, the rest for the keys */
	bytes = Max(bytes, 64 * 1024);
	f->nslots = 64;
	while ((size_t) f->nslots * 2 * sizeof(Slot) <= bytes / 4 && f->nslots < (1U << 24))
		f->nslots *= 2;
	f->arena_size = (uint32) Min(bytes - f->nslots * sizeof(Slot), (size_t) 1 << 30);
	f->slots = palloc0(sizeof(Slot) * f->nslots);
	f->arena = palloc(Max(f->arena_size, 1));
	return f;
}

bool
xxl_key_filter_seen(XxlKeyFilter *f, const void *key, uint32 len)
{
	uint64		h;
	uint32		i;

	if (f->off)
		return false;
	if (++f->probes == KEY_FILTER_TRIAL && f->dropped < KEY_FILTER_TRIAL / 4)
	{
		f->off = true;
		return false;
	}
	h = hash_bytes_extended(key, (int) len, 0) | 1;
	for (i = (uint32) h & (f->nslots - 1); f->slots[i].hash != 0; i = (i + 1) & (f->nslots - 1))
	{
		Slot	   *s = &f->slots[i];

		if (s->hash == h && s->len == len && memcmp(f->arena + s->offset, key, len) == 0)
		{
			f->dropped++;
			return true;
		}
	}
	if (f->nkeys < f->nslots / 2 && len <= f->arena_size - f->arena_used)
	{
		memcpy(f->arena + f->arena_used, key, len);
		f->slots[i] = (Slot) {h, f->arena_used, len};
		f->arena_used += len;
		f->nkeys++;
	}
	return false;
}

uint64
xxl_key_filter_dropped(const XxlKeyFilter *f)
{
	return f->dropped;
}
