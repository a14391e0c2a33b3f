/*
 * xxl_common.h — shared vocabulary of the pgxxl engine: status codes and the
 * error record every core call fills, the memory budget every buffer is drawn
 * from, small time helpers and the copy of a small record.
 *
 * The engine never includes a PostgreSQL header and never aborts: a failing
 * call returns a non-zero xxl_status and describes the problem in an
 * xxl_error, which the PostgreSQL glue turns into an ereport.
 */
#ifndef XXL_COMMON_H
#define XXL_COMMON_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum xxl_status
{
	XXL_OK = 0,
	XXL_ENOMEM,		/* the memory budget (or malloc) is exhausted */
	XXL_EIO,		/* a read or write failed */
	XXL_ENOSPC,		/* a disk is full */
	XXL_ELIMIT,		/* the spill-size limit (temp_file_limit) is exceeded */
	XXL_EOPEN,		/* a spill file could not be created */
	XXL_EINVAL,		/* bad argument or configuration */
	XXL_ECANCELED,	/* the caller's cancel hook asked to stop */
	XXL_ERANGE		/* a result out of its type's range (an integer sum, say) */
} xxl_status;

typedef struct xxl_error
{
	xxl_status	code;
	int			sys_errno;		/* errno of the failing system call, or 0 */
	char		message[256];
} xxl_error;

/* Record an error; keeps the first one if an error is already recorded. */
xxl_status	xxl_error_set(xxl_error *err, xxl_status code, int sys_errno,
						  const char *fmt,...) __attribute__((format(printf, 4, 5)));
void		xxl_error_clear(xxl_error *err);
const char *xxl_status_name(xxl_status code);

/*
 * A memory budget.  Every engine structure that may grow with the input
 * allocates through it, so peak usage is known and bounded.  Only the thread
 * that owns the operator allocates; I/O threads never do.
 */
typedef struct xxl_budget
{
	size_t		limit;			/* bytes the operator may use */
	size_t		used;
	size_t		peak;
} xxl_budget;

void		xxl_budget_init(xxl_budget *budget, size_t limit);
size_t		xxl_budget_available(const xxl_budget *budget);
/*
 * What an allocation of size bytes takes from a budget (whole pages from a
 * page up, else 16-byte units); planners use it to predict a structure's cost.
 */
size_t		xxl_budget_charge(size_t size);
/* Page-aligned (O_DIRECT-safe) allocation charged to the budget. */
void	   *xxl_budget_alloc(xxl_budget *budget, size_t size, xxl_error *err);
void		xxl_budget_free(xxl_budget *budget, void *ptr, size_t size);
/* Grow or shrink a previous allocation; contents preserved. */
void	   *xxl_budget_realloc(xxl_budget *budget, void *ptr, size_t old_size,
							   size_t new_size, xxl_error *err);
/*
 * Hold bytes of the budget for memory allocated elsewhere (a part that
 * allocates its own buffers within a share); what names it in the error.
 * The only way besides alloc/free that a budget's counters change.
 */
xxl_status	xxl_budget_reserve(xxl_budget *budget, size_t bytes, const char *what,
							   xxl_error *err);
void		xxl_budget_release(xxl_budget *budget, size_t bytes);
/* Start a new high-water mark from what is in use now (a new phase). */
void		xxl_budget_restart_peak(xxl_budget *budget);

/*
 * A zeroed object aligned to a cache line (64 bytes), freed with free():
 * for structs whose members are laid out on cache lines of their own
 * (calloc only guarantees 16 bytes).  NULL when out of memory.
 */
void	   *xxl_calloc_aligned(size_t size);

/* Monotonic clock in nanoseconds. */
uint64_t	xxl_now_ns(void);

/* Polled by long-running operators between blocks; return true to stop. */
typedef bool (*xxl_cancel_fn) (void *arg);

/*
 * Poll cancel (if any): on a stop request, err becomes XXL_ECANCELED
 * ("<what> canceled") and the result is true.
 */
bool		xxl_poll_cancel(xxl_cancel_fn cancel, void *arg, xxl_error *err, const char *what);

/*
 * What every engine part (sorter, distribution sort, scatter, priority
 * queue) keeps in common: its name in messages, its first error, its own
 * budget and the cancel hook it polls.  A part embeds one and fails,
 * polls and allocates through it instead of writing those helpers again.
 */
typedef struct xxl_part
{
	const char *name;			/* "sort", "permutation", "priority queue" */
	xxl_error	err;
	xxl_budget	budget;
	xxl_cancel_fn cancel;		/* may be NULL */
	void	   *cancel_arg;
	bool		failed;			/* sticky: every later call returns err */
} xxl_part;

void		xxl_part_init(xxl_part *part, const char *name, size_t memory,
						  xxl_cancel_fn cancel, void *cancel_arg);
/* Mark the part failed; its error, or "<name> failed" if none was set. */
xxl_status	xxl_part_fail(xxl_part *part);
/* Poll the hook; on a stop, XXL_ECANCELED "<name> canceled" in err. */
bool		xxl_part_canceled(xxl_part *part);
/* Budget allocation with the part's error (0 bytes: 1). */
void	   *xxl_part_alloc(xxl_part *part, size_t bytes);
void		xxl_part_free(xxl_part *part, void *ptr, size_t bytes);

/*
 * Start a worker thread with every signal blocked (signals belong to the
 * host's main thread: PostgreSQL's handlers must never run on an engine
 * thread).  0 or pthread_create's error number.
 */
int			xxl_thread_start(pthread_t *thread, void *(*fn) (void *), void *arg);

/*
 * End a worker started so: set its stop flag under its lock (atomically, for
 * workers that also look at it unlocked), wake whoever waits on wake, and
 * wait for the thread to end.
 */
void		xxl_thread_stop(pthread_t thread, pthread_mutex_t *mu, pthread_cond_t *wake, bool *stop);

/*
 * Whether two records of a few bytes (size known only at run time) are
 * equal: as xxl_copy_small, overlapping word loads instead of a call of
 * libc's memcmp, which showed in the suffix array build's profile.
 */
static inline bool
xxl_equal_small(const void *a_, const void *b_, size_t n)
{
	const unsigned char *a = a_,
			   *b = b_;
	uint64_t	x,
				y,
				u,
				v;

	if (n >= 8 && n <= 16)
	{
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		memcpy(&u, a + n - 8, 8);
		memcpy(&v, b + n - 8, 8);
		return ((x ^ y) | (u ^ v)) == 0;
	}
	if (n >= 4 && n < 8)
	{
		uint32_t	p,
					q,
					r,
					t;

		memcpy(&p, a, 4);
		memcpy(&q, b, 4);
		memcpy(&r, a + n - 4, 4);
		memcpy(&t, b + n - 4, 4);
		return ((p ^ q) | (r ^ t)) == 0;
	}
	return memcmp(a, b, n) == 0;
}

/*
 * k mod d for a d fixed in advance, without a division instruction (40
 * cycles, on per-record paths): with m = floor((2^64 - 1) / d) the estimate
 * mulhi(k, m) of k / d is exact or one short, so one subtraction corrects it.
 */
typedef struct xxl_modulus
{
	uint64_t	d,
				m;
} xxl_modulus;

static inline xxl_modulus
xxl_modulus_of(uint64_t d)
{
	xxl_modulus r = {d, d > 1 ? UINT64_MAX / d : 0};

	return r;
}

static inline uint64_t
xxl_mod(xxl_modulus M, uint64_t k)
{
	uint64_t	q,
				r;

	if (M.d <= 1)
		return 0;
	q = (uint64_t) (((unsigned __int128) k * M.m) >> 64);
	r = k - q * M.d;
	return r >= M.d ? r - M.d : r;
}

/*
 * xxl_copy_small's longer records, out of line: inlined into a caller whose
 * record is a small array, this memcpy (unreachable there) drew gcc's
 * -Wstringop-overread.
 */
static void __attribute__((noinline, unused))
xxl_copy_bytes(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}

/*
 * Copies a record of a few bytes whose size is known only at run time (the
 * per-record paths of sorts and scatters): libc's memcpy call costs more
 * than the copy, so sizes up to 32 bytes are two overlapping loads/stores.
 * Inlined where the record is a small array, the paths for longer sizes
 * (unreachable there) draw gcc's -Warray-bounds: silenced for this body.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
static inline void
xxl_copy_small(void *dst_, const void *src_, size_t n)
{
	unsigned char *dst = dst_;
	const unsigned char *src = src_;

	if (n >= 8 && n <= 16)
	{
		uint64_t	a,
					b;

		memcpy(&a, src, 8);
		memcpy(&b, src + n - 8, 8);
		memcpy(dst, &a, 8);
		memcpy(dst + n - 8, &b, 8);
	}
	else if (n > 16 && n <= 32)
	{
		uint64_t	a[2],
					b[2];

		memcpy(a, src, 16);
		memcpy(b, src + n - 16, 16);
		memcpy(dst, a, 16);
		memcpy(dst + n - 16, b, 16);
	}
	else if (n >= 4 && n < 8)
	{
		uint32_t	a,
					b;

		memcpy(&a, src, 4);
		memcpy(&b, src + n - 4, 4);
		memcpy(dst, &a, 4);
		memcpy(dst + n - 4, &b, 4);
	}
	else if (n >= 2 && n < 4)
	{
		uint16_t	a,
					b;

		memcpy(&a, src, 2);
		memcpy(&b, src + n - 2, 2);
		memcpy(dst, &a, 2);
		memcpy(dst + n - 2, &b, 2);
	}
	else if (n == 1)
		*dst = *src;
	else
		xxl_copy_bytes(dst, src, n);
}
#pragma GCC diagnostic pop

#define XXL_ALIGN 4096
#define XXL_ROUND_UP(x, a) (((x) + (a) - 1) / (a) * (a))

/*
 * Every OpenMP region and thread the engine starts runs with all signals
 * blocked: the backend's handlers (SIGINT, SIGTERM, SIGUSR1, ...) must run
 * on the thread PostgreSQL knows, never on a worker.  Threads inherit the
 * mask of the thread that starts them, so the starter blocks them around
 * the start and restores them after: xxl_thread_start for a thread,
 * XXL_OMP_PARALLEL for an OpenMP region (the only two ways the engine
 * starts threads; scripts/lint-omp.sh checks it).
 */
typedef struct xxl_sigmask
{
	sigset_t	old;
} xxl_sigmask;

static inline void
xxl_signals_block(xxl_sigmask *m)
{
	sigset_t	all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &m->old);
}

static inline void
xxl_signals_restore(const xxl_sigmask *m)
{
	pthread_sigmask(SIG_SETMASK, &m->old, NULL);
}

/*
 * XXL_OMP_PARALLEL(clauses) statement: "#pragma omp parallel clauses" on
 * the statement, run with every signal blocked and the mask restored
 * after it, e.g.
 *     XXL_OMP_PARALLEL(for schedule(dynamic, 1) num_threads(threads))
 *     for (int b = 0; b < 256; b++) ...
 * (A one-pass loop holds the mask; a region can neither break out of it
 * nor return, so the restore always runs.)
 */
typedef struct xxl_omp_guard
{
	xxl_sigmask mask;
	bool		open;
} xxl_omp_guard;

static inline xxl_omp_guard
xxl_omp_guard_open(void)
{
	xxl_omp_guard g;

	xxl_signals_block(&g.mask);
	g.open = true;
	return g;
}

static inline void
xxl_omp_guard_close(xxl_omp_guard *g)
{
	xxl_signals_restore(&g->mask);
	g->open = false;
}

#define XXL_PRAGMA(...) _Pragma(#__VA_ARGS__)
#define XXL_OMP_PARALLEL(...) \
	for (xxl_omp_guard xxl_omp_guard_ = xxl_omp_guard_open(); xxl_omp_guard_.open; \
		 xxl_omp_guard_close(&xxl_omp_guard_)) \
		XXL_PRAGMA(omp parallel __VA_ARGS__)

#endif							/* XXL_COMMON_H */
