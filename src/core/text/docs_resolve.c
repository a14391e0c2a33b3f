/*
 * docs_resolve.c — a suffix array's positions resolved to their documents
 * in rank order without a map lookup a suffix (xxl_docs.h), for a paged
 * map, where a lookup at a random position costs a page read.
 *
 * The positions (separated space) come in rank order and go to a spool of
 * the map's spare memory while the suffix sorter still holds its budget.
 * At run, with the sorter's budget: a permutation to text order (the
 * records' slot is the position), a walk through the map in document order
 * beside it, which reads each of its pages once, and a permutation back to
 * rank order carrying what the output needs: body position, remaining
 * length, offset and id.  Both permutations are the environment's
 * scatters, charged by phase where that fits, else sorted by slot.
 */
#include "core/text/docs_internal.h"
#include "core/text/text_internal.h"

#include <stdlib.h>
#include <string.h>

/* the spool's least; its plan */
#define RESOLVE_SPOOL_MIN (16 * 1024)

static size_t
spool_min_memory(void)
{
	return RESOLVE_SPOOL_MIN;
}

static size_t
run_min_memory(void)
{
	return xxl_sa_min_memory();
}

static const xxl_env_plan spool_plan = {"text", 1, spool_min_memory, xxl_env_stream_block};
static const xxl_env_plan run_plan = {"text", 0, run_min_memory, xxl_env_stream_block};

struct xxl_docs_resolver
{
	const xxl_docs *docs;
	xxl_resources run_res;
	int			w;				/* position width */
	uint64_t	n;				/* positions put (the separated text's length at run) */
	xxl_error	err;
	bool		failed;
	/* rank order in: (position, preceding byte + 1) */
	xxl_env		spool_env;
	xxl_spool	spool;
	bool		spool_open;
	/* at run: to text order (rank, byte), and back (body, byte, rem, offset, id) */
	xxl_env		env;
	bool		env_open;
	xxl_env_scatter by_pos,
				by_rank;
};

static xxl_status
fail_env(xxl_docs_resolver *r, const xxl_env *env)
{
	if (!r->failed)
		xxl_error_set(&r->err, env->err.code ? env->err.code : XXL_EIO, env->err.sys_errno,
					  "resolving documents: %s", env->err.message);
	r->failed = true;
	return r->err.code;
}

static size_t
back_size(const xxl_docs_resolver *r)
{
	return (size_t) (3 * r->w + 1 + 8);
}

xxl_docs_resolver *
xxl_docs_resolver_create(const xxl_docs *d, const xxl_resources *run, size_t spool_memory,
						 xxl_error *err)
{
	xxl_docs_resolver *r = calloc(1, sizeof(*r));
	xxl_resources sres = *run;

	if (r == NULL)
	{
		xxl_error_set(err, XXL_ENOMEM, 0, "could not allocate the document resolver");
		return NULL;
	}
	r->docs = d;
	r->run_res = *run;
	r->w = width_for(xxl_docs_bytes(d) + xxl_docs_count(d));
	sres.memory = spool_memory;
	sres.progress = NULL;
	if (xxl_env_open(&r->spool_env, &sres, &spool_plan) != XXL_OK)
	{
		xxl_error_set(err, r->spool_env.err.code, 0, "resolving documents: %s",
					  r->spool_env.err.message);
		free(r);
		return NULL;
	}
	/* everything past a few pages goes to disk at once */
	xxl_spool_init(&r->spool, &r->spool_env, spool_memory / 4);
	r->spool_open = true;
	return r;
}

size_t
xxl_docs_resolver_min_spool(void)
{
	return RESOLVE_SPOOL_MIN;
}

xxl_status
xxl_docs_resolver_put(xxl_docs_resolver *r, uint64_t q, int prev)
{
	unsigned char rec[9];

	if (r->failed)
		return r->err.code;
	put_be(rec, q, r->w);
	/* 0 and -1 alike: in the separated text neither names a body byte */
	rec[r->w] = (unsigned char) (prev < 0 ? 0 : prev);
	r->n++;
	if (xxl_spool_write(&r->spool, rec, (size_t) r->w + 1) != XXL_OK)
		return fail_env(r, &r->spool_env);
	return XXL_OK;
}

/*
 * A permutation of its write share that reads in read_most at most: a
 * scatter charged by phase where one fits, else the sort by slot, which
 * holds its share throughout: the smaller of the two.
 */
static xxl_status
open_perm(xxl_docs_resolver *r, xxl_env_scatter *ts, size_t rec_size, size_t write,
		  size_t read_most)
{
	size_t		rd = xxl_env_scat_least_read(&r->env, rec_size, r->n, write, read_most);

	if (rd > 0 ? xxl_env_scat_open_split(&r->env, ts, write, rd, rec_size, r->n) :
		xxl_env_scat_open(&r->env, ts, write < read_most ? write : read_most, rec_size, r->n))
		return fail_env(r, &r->env);
	return XXL_OK;
}

/* The spool, in rank order, into by_pos. */
static xxl_status
to_text_order(xxl_docs_resolver *r)
{
	xxl_spool_reader rd;
	const unsigned char *rec;
	size_t		rec_size = (size_t) r->w + 1;

	if (xxl_spool_finish(&r->spool) != XXL_OK ||
		xxl_spool_reader_open(&rd, &r->spool, true) != XXL_OK)
		return fail_env(r, &r->spool_env);
	/* its reading shares the pool with by_rank's distribution: half of it at most */
	if (open_perm(r, &r->by_pos, rec_size, xxl_env_pool_free(&r->env),
				  xxl_env_pool_free(&r->env) / 2) != XXL_OK)
	{
		xxl_spool_reader_close(&rd);
		return r->err.code;
	}
	for (uint64_t k = 0; k < r->n; k++)
	{
		unsigned char *p;

		if (xxl_spool_read(&rd, rec_size, &rec) != XXL_OK)
		{
			xxl_spool_reader_close(&rd);
			return fail_env(r, &r->spool_env);
		}
		p = xxl_env_scat_room(&r->by_pos);
		put_be(p, k, r->w);
		p[r->w] = rec[r->w];
		if (xxl_env_scat_push(&r->env, &r->by_pos, get_be(rec, r->w)) != XXL_OK ||
			xxl_env_poll(&r->env))
		{
			xxl_spool_reader_close(&rd);
			return fail_env(r, &r->env);
		}
	}
	xxl_spool_reader_close(&rd);
	if (xxl_env_scat_finish(&r->env, &r->by_pos) != XXL_OK ||
		xxl_env_scat_begin_read(&r->env, &r->by_pos) != XXL_OK)
		return fail_env(r, &r->env);
	return XXL_OK;
}

/*
 * Text order: the map walked document by document beside by_pos, each
 * position's document fields into by_rank (a separator's rem is 0).
 */
static xxl_status
walk_documents(xxl_docs_resolver *r)
{
	const xxl_docs *d = r->docs;
	uint64_t	count = xxl_docs_count(d),
				k = 0,
				start = 0,
				end = count ? xxl_docs_end(d, 0) : 0,
				sep_start = 0;
	int64_t		id = count ? xxl_docs_id(d, 0) : 0;
	int			w = r->w;

	if (open_perm(r, &r->by_rank, back_size(r), xxl_env_pool_free(&r->env),
				  xxl_env_pool_free(&r->env) + r->by_pos.memory) != XXL_OK)
		return r->err.code;
	for (uint64_t q = 0; q < r->n; q++)
	{
		const unsigned char *rec;
		unsigned char *p;
		uint64_t	body,
					rem;

		if (xxl_env_scat_next(&r->env, &r->by_pos, &rec) <= 0)
			return fail_env(r, &r->env);
		/* document k holds separated positions sep_start .. sep_start + len (its separator) */
		while (k + 1 < count && q > sep_start + (end - start))
		{
			sep_start += end - start + 1;
			k++;
			start = end;
			end = xxl_docs_end(d, k);
			id = xxl_docs_id(d, k);
		}
		body = start + (q - sep_start);
		rem = q - sep_start < end - start ? end - body : 0;
		p = xxl_env_scat_room(&r->by_rank);
		put_be(p, rem ? body : 0, w);
		p[w] = rec[w];
		put_be(p + w + 1, rem, w);
		put_be(p + 2 * w + 1, rem ? body - start : 0, w);
		memcpy(p + 3 * w + 1, &id, 8);
		if (xxl_env_scat_push(&r->env, &r->by_rank, get_be(rec, w)) != XXL_OK ||
			xxl_env_poll(&r->env))
			return fail_env(r, &r->env);
	}
	if (xxl_docs_failed(d))
	{
		r->err = *xxl_docs_error(d);
		r->failed = true;
		return r->err.code;
	}
	xxl_env_scat_close(&r->env, &r->by_pos, NULL, NULL);
	if (xxl_env_scat_finish(&r->env, &r->by_rank) != XXL_OK ||
		xxl_env_scat_begin_read(&r->env, &r->by_rank) != XXL_OK)
		return fail_env(r, &r->env);
	return XXL_OK;
}

xxl_status
xxl_docs_resolver_run(xxl_docs_resolver *r)
{
	if (r->failed)
		return r->err.code;
	if (r->n != xxl_docs_bytes(r->docs) + xxl_docs_count(r->docs))
		return xxl_error_set(&r->err, XXL_EINVAL, 0,
							 "resolving documents: %llu positions for a separated text of %llu bytes",
							 (unsigned long long) r->n,
							 (unsigned long long) (xxl_docs_bytes(r->docs) + xxl_docs_count(r->docs)));
	if (xxl_env_open(&r->env, &r->run_res, &run_plan) != XXL_OK)
		return fail_env(r, &r->env);
	r->env_open = true;
	if (to_text_order(r) != XXL_OK || walk_documents(r) != XXL_OK)
		return r->err.code;
	return XXL_OK;
}

int
xxl_docs_resolver_next(xxl_docs_resolver *r, xxl_docs_suffix *s)
{
	const unsigned char *rec;
	int			w = r->w,
				got;

	if (r->failed)
		return -1;
	do
	{
		got = xxl_env_scat_next(&r->env, &r->by_rank, &rec);
		if (got < 0)
		{
			fail_env(r, &r->env);
			return -1;
		}
		if (got == 0)
			return 0;
		s->rem = get_be(rec + w + 1, w);
	} while (s->rem == 0);		/* a separator's suffix */
	s->body = get_be(rec, w);
	s->prev = rec[w] == 0 ? -1 : (int) rec[w];
	s->offset = get_be(rec + 2 * w + 1, w);
	memcpy(&s->id, rec + 3 * w + 1, 8);
	return 1;
}

const xxl_error *
xxl_docs_resolver_error(const xxl_docs_resolver *r)
{
	return &r->err;
}

void
xxl_docs_resolver_io(const xxl_docs_resolver *r, uint64_t *read, uint64_t *written,
					 size_t *peak)
{
	uint64_t	rd,
				wr,
				wait;
	bool		direct;

	xxl_env_io_sum(&r->spool_env, read, written, &wait, &direct);
	*peak = xxl_env_used_peak(&r->spool_env);
	if (r->env_open)
	{
		xxl_env_io_sum(&r->env, &rd, &wr, &wait, &direct);
		*read += rd;
		*written += wr;
		*peak += xxl_env_used_peak(&r->env);
	}
}

void
xxl_docs_resolver_destroy(xxl_docs_resolver *r)
{
	if (r == NULL)
		return;
	if (r->env_open)
	{
		if (xxl_env_scat_is_open(&r->by_pos))
			xxl_env_scat_close(&r->env, &r->by_pos, NULL, NULL);
		if (xxl_env_scat_is_open(&r->by_rank))
			xxl_env_scat_close(&r->env, &r->by_rank, NULL, NULL);
		xxl_env_close(&r->env);
	}
	if (r->spool_open)
		xxl_spool_free(&r->spool);
	xxl_env_close(&r->spool_env);
	free(r);
}
