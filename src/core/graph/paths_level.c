/*
 * paths_level.c — the sorted sets the external BFS builds once per level
 * (the MR and MM levels, the arcs of the clusters MM loads): records kept
 * in one buffer allocated for the whole search and radix sorted by their
 * first 8 bytes, moved into an env sorter only when a level outgrows it.
 *
 * A sorter opened and closed per level costs even for one record, nearly
 * all of it the kernel zeroing the pages of its fresh buffers, and a long
 * path has as many levels as nodes.
 */
#include "core/graph/paths_internal.h"

#include "core/radix.h"

/* The buffer of a level of rec-byte records in share bytes: records and their radix scratch. */
static size_t
buffer_records(size_t rec, size_t share)
{
	/* a quarter of the share; the sorter: the rest */
	return share / 8 / rec > 0 ? share / 8 / rec : 1;
}

size_t
plevel_sorter_memory(size_t rec, size_t share)
{
	size_t		h = share - 2 * buffer_records(rec, share) * rec;

	return h - h % XXL_ALIGN;
}

xxl_status
plevel_init(xxl_paths *p, plevel *l, size_t rec, size_t share)
{
	memset(l, 0, sizeof(*l));
	l->rec = rec;
	l->share = share;
	l->cap = buffer_records(rec, share);
	l->buf_bytes = 2 * l->cap * rec;
	l->buf = xxl_env_alloc(&p->env, l->buf_bytes);
	return l->buf ? XXL_OK : p->env.err.code;
}

xxl_status
plevel_put(xxl_paths *p, plevel *l, const void *r)
{
	xxl_env    *env = &p->env;

	l->pushed++;
	if (!l->spilled && l->n < l->cap)
	{
		memcpy(l->buf + l->n++ * l->rec, r, l->rec);
		return XXL_OK;
	}
	if (!l->spilled)
	{
		if (xxl_env_sort_open(env, &l->s, plevel_sorter_memory(l->rec, l->share), 0, l->rec, 8,
							  0, XXL_INPUT_UNBOUNDED) != XXL_OK)
			return env->err.code;
		l->spilled = true;
		p->level_spills++;
		for (size_t i = 0; i < l->n; i++)
			if (xxl_env_sort_put(env, &l->s, l->buf + i * l->rec) != XXL_OK)
				return env->err.code;
		l->n = 0;
	}
	return xxl_env_sort_put(env, &l->s, r);
}

xxl_status
plevel_sort(xxl_paths *p, plevel *l)
{
	l->pos = 0;
	if (l->spilled)
		return xxl_env_sort_sort(&p->env, &l->s);
	if (l->n > 1)
		xxl_radix_sort_fixed((char *) l->buf, (char *) l->buf + l->cap * l->rec, l->n, l->rec, 8,
							 1, false);
	return XXL_OK;
}

int
plevel_next(xxl_paths *p, plevel *l, const unsigned char **r)
{
	if (l->spilled)
		return xxl_env_sort_next(&p->env, &l->s, r);
	if (l->pos >= l->n)
		return 0;
	*r = l->buf + l->pos++ * l->rec;
	return 1;
}

bool
plevel_rewind(plevel *l)
{
	if (l->spilled)
		return false;
	l->pos = 0;
	return true;
}

void
plevel_clear(xxl_paths *p, plevel *l)
{
	if (l->spilled)
		xxl_env_sort_close(&p->env, &l->s, NULL, NULL);
	l->spilled = false;
	l->n = 0;
	l->pos = 0;
	l->pushed = 0;
}

void
plevel_free(xxl_paths *p, plevel *l)
{
	plevel_clear(p, l);
	if (l->buf)
		xxl_env_free(&p->env, l->buf, l->buf_bytes);
	l->buf = NULL;
}
