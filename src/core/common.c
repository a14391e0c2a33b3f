/*
 * common.c — error records, the memory budget, the clock and worker-thread
 * start shared by every engine module.
 */
#include "core/xxl_common.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>

xxl_status
xxl_error_set(xxl_error *err, xxl_status code, int sys_errno, const char *fmt,...)
{
	va_list		ap;

	if (err == NULL || err->code != XXL_OK)
		return err ? err->code : code;
	err->code = code;
	err->sys_errno = sys_errno;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return code;
}

void
xxl_error_clear(xxl_error *err)
{
	err->code = XXL_OK;
	err->sys_errno = 0;
	err->message[0] = '\0';
}

const char *
xxl_status_name(xxl_status code)
{
	switch (code)
	{
		case XXL_OK:
			return "ok";
		case XXL_ENOMEM:
			return "out of memory";
		case XXL_EIO:
			return "I/O error";
		case XXL_ENOSPC:
			return "disk full";
		case XXL_ELIMIT:
			return "spill limit exceeded";
		case XXL_EOPEN:
			return "cannot create spill file";
		case XXL_EINVAL:
			return "invalid argument";
		case XXL_ECANCELED:
			return "canceled";
		case XXL_ERANGE:
			return "value out of range";
	}
	return "unknown error";
}

void
xxl_budget_init(xxl_budget *budget, size_t limit)
{
	budget->limit = limit;
	budget->used = 0;
	budget->peak = 0;
}

size_t
xxl_budget_available(const xxl_budget *budget)
{
	return budget->used >= budget->limit ? 0 : budget->limit - budget->used;
}

/*
 * Large allocations are page-aligned (O_DIRECT buffers) and charged in whole
 * pages; small ones (run metadata, structs) come from malloc and are charged
 * to the next 16 bytes, so that many small runs do not eat the budget.
 * Sizes that round to a whole page are always mapped (see map_pages).
 */
#define XXL_HUGE_PAGE (2 * 1024 * 1024)

size_t
xxl_budget_charge(size_t size)
{
	return size >= XXL_ALIGN ? XXL_ROUND_UP(size, XXL_ALIGN) : XXL_ROUND_UP(size ? size : 1, 16);
}

/*
 * Large buffers are mapped directly rather than taken from malloc: freeing
 * them returns the memory to the system at once, so the process's resident
 * memory follows the budget (glibc would keep them on its heap once its mmap
 * threshold has adapted).  Buffers of 2 MiB and more are 2 MiB aligned and
 * marked for huge pages: the radix scatter over a load is TLB-bound
 * otherwise.
 */
static void *
map_pages(size_t size)
{
	size_t		align = size >= XXL_HUGE_PAGE ? XXL_HUGE_PAGE : XXL_ALIGN;
	size_t		span = size + (align > XXL_ALIGN ? align : 0);
	/*
	 * No swap reserved: a budget is a cap, and pages are backed only when
	 * written, so a budget far beyond the input (xxl.memory = 100GB for a
	 * few thousand rows) maps address space, not memory.
	 */
	char	   *p = mmap(NULL, span, PROT_READ | PROT_WRITE,
						 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char	   *aligned;

	if (p == MAP_FAILED)
		return NULL;
	aligned = (char *) XXL_ROUND_UP((uintptr_t) p, align);
	if (aligned > p)
		munmap(p, (size_t) (aligned - p));
	if (p + span > aligned + size)
		munmap(aligned + size, (size_t) (p + span - (aligned + size)));
	if (align == XXL_HUGE_PAGE)
	{
		/*
		 * A sorter fills its load from both ends (records from the start,
		 * their entries from the end), so a small sort touches a page at
		 * each: outside huge pages those cost a 4 kB zeroing each instead
		 * of 2 MB (which a one-row INSERT into an xxl table paid).
		 */
		size_t		edge = size >= 8 * XXL_HUGE_PAGE ? XXL_HUGE_PAGE : 0;

		madvise(aligned + edge, size - 2 * edge, MADV_HUGEPAGE);
	}
	return aligned;
}

void *
xxl_budget_alloc(xxl_budget *budget, size_t size, xxl_error *err)
{
	size_t		charge = xxl_budget_charge(size);
	void	   *ptr = NULL;
	int			rc;

	if (charge > xxl_budget_available(budget))
	{
		xxl_error_set(err, XXL_ENOMEM, 0,
					  "memory budget of %zu bytes exhausted (%zu in use, %zu more requested)",
					  budget->limit, budget->used, charge);
		return NULL;
	}
	if (charge < XXL_ALIGN)
		rc = (ptr = malloc(charge)) ? 0 : ENOMEM;
	else
		rc = (ptr = map_pages(charge)) ? 0 : ENOMEM;
	if (rc != 0)
	{
		xxl_error_set(err, XXL_ENOMEM, rc, "could not allocate %zu bytes", charge);
		return NULL;
	}
	budget->used += charge;
	if (budget->used > budget->peak)
		budget->peak = budget->used;
	return ptr;
}

void
xxl_budget_free(xxl_budget *budget, void *ptr, size_t size)
{
	size_t		charge = xxl_budget_charge(size);

	if (ptr == NULL)
		return;
	if (charge < XXL_ALIGN)
		free(ptr);
	else
		munmap(ptr, charge);
	budget->used -= charge;
}

void *
xxl_budget_realloc(xxl_budget *budget, void *ptr, size_t old_size, size_t new_size,
				   xxl_error *err)
{
	void	   *fresh;

	if (ptr != NULL && xxl_budget_charge(old_size) == xxl_budget_charge(new_size))
		return ptr;
	fresh = xxl_budget_alloc(budget, new_size, err);
	if (fresh == NULL)
		return NULL;
	if (ptr != NULL)
	{
		memcpy(fresh, ptr, old_size < new_size ? old_size : new_size);
		xxl_budget_free(budget, ptr, old_size);
	}
	return fresh;
}

xxl_status
xxl_budget_reserve(xxl_budget *budget, size_t bytes, const char *what, xxl_error *err)
{
	if (bytes > xxl_budget_available(budget))
		return xxl_error_set(err, XXL_ENOMEM, 0,
							 "memory budget of %zu bytes exhausted (%zu in use, %zu more for a %s)",
							 budget->limit, budget->used, bytes, what);
	budget->used += bytes;
	if (budget->used > budget->peak)
		budget->peak = budget->used;
	return XXL_OK;
}

void
xxl_budget_release(xxl_budget *budget, size_t bytes)
{
	budget->used -= bytes < budget->used ? bytes : budget->used;
}

void
xxl_budget_restart_peak(xxl_budget *budget)
{
	budget->peak = budget->used;
}

uint64_t
xxl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

bool
xxl_poll_cancel(xxl_cancel_fn cancel, void *arg, xxl_error *err, const char *what)
{
	if (cancel == NULL || !cancel(arg))
		return false;
	xxl_error_set(err, XXL_ECANCELED, 0, "%s canceled", what);
	return true;
}

void
xxl_part_init(xxl_part *part, const char *name, size_t memory, xxl_cancel_fn cancel,
			  void *cancel_arg)
{
	memset(part, 0, sizeof(*part));
	part->name = name;
	xxl_budget_init(&part->budget, memory);
	part->cancel = cancel;
	part->cancel_arg = cancel_arg;
}

xxl_status
xxl_part_fail(xxl_part *part)
{
	part->failed = true;
	if (part->err.code == XXL_OK)
		xxl_error_set(&part->err, XXL_EIO, 0, "%s failed", part->name);
	return part->err.code;
}

bool
xxl_part_canceled(xxl_part *part)
{
	return xxl_poll_cancel(part->cancel, part->cancel_arg, &part->err, part->name);
}

void *
xxl_part_alloc(xxl_part *part, size_t bytes)
{
	return xxl_budget_alloc(&part->budget, bytes ? bytes : 1, &part->err);
}

void
xxl_part_free(xxl_part *part, void *ptr, size_t bytes)
{
	xxl_budget_free(&part->budget, ptr, bytes ? bytes : 1);
}

void *
xxl_calloc_aligned(size_t size)
{
	size_t		rounded = XXL_ROUND_UP(size ? size : 1, 64);
	void	   *p = aligned_alloc(64, rounded);

	if (p != NULL)
		memset(p, 0, rounded);
	return p;
}

int
xxl_thread_start(pthread_t *thread, void *(*fn) (void *), void *arg)
{
	xxl_sigmask mask;
	int			rc;

	xxl_signals_block(&mask);
	rc = pthread_create(thread, NULL, fn, arg);
	xxl_signals_restore(&mask);
	return rc;
}

void
xxl_thread_stop(pthread_t thread, pthread_mutex_t *mu, pthread_cond_t *wake, bool *stop)
{
	pthread_mutex_lock(mu);
	__atomic_store_n(stop, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(wake);
	pthread_mutex_unlock(mu);
	pthread_join(thread, NULL);
}
