/*
 * env_spool.c — the environment's byte spools (xxl_env.h): a sequence
 * written once and read any number of times, kept in budget-charged chunks
 * while it is small and moved to the operator's own spill files when it
 * outgrows its limit (or, for a shared spool, the environment's spool
 * allowance); and its readers: by piece, by record of up to 32 bytes.
 */
#include "core/xxl_env.h"

#include <string.h>

#define SPOOL_CHUNK (256 * 1024)

void
xxl_spool_init(xxl_spool *sp, xxl_env *env, size_t mem_limit)
{
	size_t		limit = mem_limit == XXL_SPOOL_SHARED ? env->spool_allowance : mem_limit;

	memset(sp, 0, sizeof(*sp));
	sp->env = env;
	sp->mem_limit = mem_limit;
	/* small allowances get small chunks, so that they can be used at all */
	sp->chunk_size = SPOOL_CHUNK;
	if (limit < 4 * (size_t) SPOOL_CHUNK)
	{
		sp->chunk_size = limit / 4 - (limit / 4) % XXL_ALIGN;
		if (sp->chunk_size < XXL_ALIGN)
			sp->chunk_size = XXL_ALIGN;
	}
	xxl_run_init(&sp->run);
}

static void
free_chunk(xxl_spool *sp, size_t i)
{
	xxl_env_free(sp->env, sp->chunks[i], sp->chunk_size);
	sp->chunks[i] = NULL;
	sp->mem_used -= sp->chunk_size;
	sp->env->spool_mem -= sp->chunk_size;
}

static void
free_chunks(xxl_spool *sp)
{
	for (size_t i = 0; i < sp->nchunks; i++)
		if (sp->chunks[i])
			free_chunk(sp, i);
	if (sp->chunks)
		xxl_env_free(sp->env, sp->chunks, sp->chunks_cap * sizeof(unsigned char *));
	sp->chunks = NULL;
	sp->nchunks = 0;
	sp->chunks_cap = 0;
}

static xxl_status
writer_status(xxl_spool *sp, xxl_status rc)
{
	if (rc != XXL_OK)
		return xxl_env_fail(sp->env, xxl_bwriter_error(sp->w));
	return XXL_OK;
}

static xxl_status
open_writer(xxl_spool *sp)
{
	xxl_env    *env = sp->env;

	if (xxl_env_open_disks(env) != XXL_OK)
		return env->err.code;
	sp->w = xxl_bwriter_create(env->disks, &env->budget, 2, &sp->run, &env->err);
	if (sp->w == NULL)
		return env->err.code;
	/* spool blocks are small: through the page cache in place (see xxl_bwriter_inline) */
	xxl_bwriter_inline(sp->w, true);
	sp->on_disk = true;
	return XXL_OK;
}

xxl_status
xxl_spool_spill(xxl_spool *sp)
{
	uint64_t	total = sp->nbytes;

	if (sp->on_disk)
		return XXL_OK;
	if (open_writer(sp) != XXL_OK)
		return sp->env->err.code;
	/* (a write larger than a chunk adds its chunks before it fills them: past total they hold nothing) */
	for (size_t i = 0; i < sp->nchunks && (uint64_t) i * sp->chunk_size < total; i++)
	{
		size_t		len = total - (uint64_t) i * sp->chunk_size;

		if (len > sp->chunk_size)
			len = sp->chunk_size;
		if (writer_status(sp, xxl_bwriter_write(sp->w, sp->chunks[i], len)) != XXL_OK)
			return sp->env->err.code;
	}
	sp->env->done.spool_bytes += total;
	free_chunks(sp);
	if (sp->finished)
	{
		xxl_status	rc = writer_status(sp, xxl_bwriter_finish(sp->w));

		xxl_bwriter_destroy(sp->w);
		sp->w = NULL;
		return rc;
	}
	return XXL_OK;
}

/* Whether another chunk stays within the spool's memory limit. */
static bool
chunk_fits(const xxl_spool *sp, uint64_t need)
{
	if (sp->mem_limit == XXL_SPOOL_SHARED)
		return sp->env->spool_mem + sp->chunk_size <= sp->env->spool_allowance;
	return XXL_ROUND_UP(need, sp->chunk_size) <= sp->mem_limit;
}

static xxl_status
add_chunk(xxl_spool *sp)
{
	xxl_env    *env = sp->env;
	unsigned char *c;

	if (sp->nchunks == sp->chunks_cap)
	{
		size_t		cap = sp->chunks_cap ? sp->chunks_cap * 2 : 16;
		unsigned char **grown = xxl_env_realloc(env, sp->chunks,
												sp->chunks_cap * sizeof(unsigned char *),
												cap * sizeof(unsigned char *));

		if (grown == NULL)
			return env->err.code;
		sp->chunks = grown;
		sp->chunks_cap = cap;
	}
	c = xxl_env_alloc(env, sp->chunk_size);
	if (c == NULL)
		return env->err.code;
	sp->chunks[sp->nchunks++] = c;
	sp->mem_used += sp->chunk_size;
	env->spool_mem += sp->chunk_size;
	return XXL_OK;
}

xxl_status
xxl_spool_write(xxl_spool *sp, const void *data, size_t len)
{
	xxl_env    *env = sp->env;
	const unsigned char *src = data;

	if (len == 0)
		return XXL_OK;
	if (!sp->on_disk)
	{
		uint64_t	need = sp->nbytes + len;

		while ((uint64_t) sp->nchunks * sp->chunk_size < need)
		{
			if (!chunk_fits(sp, need))
			{
				if (xxl_spool_spill(sp) != XXL_OK)
					return env->err.code;
				goto disk;
			}
			if (add_chunk(sp) != XXL_OK)
				return env->err.code;
		}
		while (len > 0)
		{
			size_t		ci = sp->nbytes / sp->chunk_size;
			size_t		off = sp->nbytes % sp->chunk_size;
			size_t		n = sp->chunk_size - off;

			if (n > len)
				n = len;
			memcpy(sp->chunks[ci] + off, src, n);
			sp->nbytes += n;
			src += n;
			len -= n;
		}
		return XXL_OK;
	}
disk:
	if (writer_status(sp, xxl_bwriter_write(sp->w, src, len)) != XXL_OK)
		return env->err.code;
	sp->nbytes += len;
	env->done.spool_bytes += len;
	return XXL_OK;
}

xxl_status
xxl_spool_finish(xxl_spool *sp)
{
	xxl_status	rc = XXL_OK;

	sp->finished = true;
	if (sp->w)
	{
		rc = writer_status(sp, xxl_bwriter_finish(sp->w));
		xxl_bwriter_destroy(sp->w);
		sp->w = NULL;
	}
	return rc;
}

void
xxl_spool_free(xxl_spool *sp)
{
	if (sp->env == NULL)
		return;
	if (sp->w)
		xxl_bwriter_destroy(sp->w);
	sp->w = NULL;
	free_chunks(sp);
	if (sp->env->disks)
		xxl_run_release(&sp->run, sp->env->disks, &sp->env->budget);
	sp->env = NULL;
}

/* Readers ----------------------------------------------------------------------- */

xxl_status
xxl_spool_reader_open(xxl_spool_reader *rd, xxl_spool *sp, bool consume)
{
	memset(rd, 0, sizeof(*rd));
	rd->sp = sp;
	rd->left = sp->nbytes;
	rd->consume = consume;
	if (sp->on_disk && sp->nbytes > 0)
	{
		rd->r = xxl_breader_create(sp->env->disks, &sp->env->budget, 2, &sp->run, &sp->env->err);
		if (rd->r == NULL)
			return sp->env->err.code;
		xxl_breader_inline(rd->r, true);
		/* a block handed out is read once the next is asked for: its space is free */
		if (consume)
			xxl_breader_consume(rd->r);
	}
	return XXL_OK;
}

xxl_status
xxl_spool_reader_piece(xxl_spool_reader *rd, const unsigned char **p, size_t *len)
{
	xxl_spool  *sp = rd->sp;

	if (rd->left == 0)
	{
		*len = 0;
		return XXL_OK;
	}
	if (!sp->on_disk)
	{
		size_t		n = sp->chunk_size;

		/* the previous chunk has been handed out completely */
		if (rd->consume && rd->chunk > 0)
			free_chunk(sp, rd->chunk - 1);
		if (n > rd->left)
			n = rd->left;
		*p = sp->chunks[rd->chunk++];
		*len = n;
		rd->left -= n;
		return XXL_OK;
	}
	else
	{
		size_t		bs = sp->env->disk.block_size;
		size_t		n = rd->left < bs ? (size_t) rd->left : bs;
		const void *data;

		/* whole blocks from the start of the run never span two blocks */
		if (xxl_breader_next(rd->r, n, &data) != XXL_OK)
			return xxl_env_fail(sp->env, xxl_breader_error(rd->r));
		sp->env->done.spool_bytes += n;
		*p = data;
		*len = n;
		rd->left -= n;
		return XXL_OK;
	}
}

xxl_status
xxl_spool_read_slow(xxl_spool_reader *rd, size_t len, const unsigned char **p)
{
	xxl_env    *env = rd->sp->env;
	size_t		got = 0;

	if (len > sizeof(rd->scratch))
		return xxl_error_set(&env->err, XXL_EINVAL, 0, "spool record of %zu bytes is too long",
							 len);
	while (got < len)
	{
		size_t		n;

		if (rd->avail == 0)
		{
			if (xxl_spool_reader_piece(rd, &rd->p, &rd->avail) != XXL_OK)
				return env->err.code;
			if (rd->avail == 0)
				return xxl_error_set(&env->err, XXL_EINVAL, 0, "read past the end of a spool");
			if (got == 0 && rd->avail >= len)
				return xxl_spool_read(rd, len, p);
		}
		n = rd->avail < len - got ? rd->avail : len - got;
		memcpy(rd->scratch + got, rd->p, n);
		rd->p += n;
		rd->avail -= n;
		got += n;
	}
	*p = rd->scratch;
	return XXL_OK;
}

xxl_status
xxl_spool_read_upto(xxl_spool_reader *rd, void *dst, size_t len, size_t *got)
{
	unsigned char *d = dst;

	*got = 0;
	while (*got < len)
	{
		size_t		n;

		if (rd->avail == 0)
		{
			if (xxl_spool_reader_piece(rd, &rd->p, &rd->avail) != XXL_OK)
				return rd->sp->env->err.code;
			if (rd->avail == 0)
				break;
		}
		n = rd->avail < len - *got ? rd->avail : len - *got;
		memcpy(d + *got, rd->p, n);
		rd->p += n;
		rd->avail -= n;
		*got += n;
	}
	return XXL_OK;
}

xxl_status
xxl_spool_read_exact(xxl_spool_reader *rd, void *dst, size_t len)
{
	size_t		got;

	if (xxl_spool_read_upto(rd, dst, len, &got) != XXL_OK)
		return rd->sp->env->err.code;
	if (got < len)
		return xxl_error_set(&rd->sp->env->err, XXL_EINVAL, 0, "read past the end of a spool");
	return XXL_OK;
}

void
xxl_spool_reader_close(xxl_spool_reader *rd)
{
	size_t		freed = rd->r ? xxl_breader_freed(rd->r) : 0;

	if (rd->r)
		xxl_breader_destroy(rd->r);
	rd->r = NULL;
	if (rd->consume && rd->sp && rd->sp->on_disk && rd->sp->env->disks)
	{
		/* as in memory: a consumed spool is empty (the reader freed the blocks it passed) */
		xxl_run_release_from(&rd->sp->run, freed, rd->sp->env->disks, &rd->sp->env->budget);
		rd->sp->nbytes = 0;
	}
	else if (rd->consume && rd->sp && !rd->sp->on_disk)
	{
		/* chunks freed while reading are NULL: free the rest */
		xxl_spool  *sp = rd->sp;

		for (size_t i = 0; i < sp->nchunks; i++)
			if (sp->chunks[i])
				free_chunk(sp, i);
		sp->nchunks = 0;
		sp->nbytes = 0;
	}
	rd->sp = NULL;
}
