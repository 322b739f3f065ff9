/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What common.h and rcu.h declare and every file may use: lock stripes, the misuse abort, the
 * per-thread registration count the read-side assertions read and the online flag, pre-faulting,
 * the per-thread receiving CPU of SO_INCOMING_CPU (socktab_set_rx_cpu, socktab/lookup.h), the
 * per-thread payload a reuseport selector reads (socktab_set_rx_payload), and the
 * ThreadSanitizer grace-period token.
 * Nothing here calls another file of the library.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common.h"
#include "socktab/net.h"

#ifdef SOCKTAB_TSAN
char socktab__tsan_gp_token;
#endif

_Thread_local int socktab__registered __attribute__((tls_model("initial-exec")));
_Thread_local int socktab__online __attribute__((tls_model("initial-exec")));
_Thread_local int socktab__rx_cpu_set __attribute__((tls_model("initial-exec"))) = -1;
_Thread_local bool socktab__reclaim_named __attribute__((tls_model("initial-exec")));
_Thread_local unsigned int socktab__dispatch_depth __attribute__((tls_model("initial-exec")));

void socktab__reclaim_name(void)
{
	socktab__reclaim_named = true;
	(void)pthread_setname_np(pthread_self(), SOCKTAB__RECLAIM_THREAD_NAME);
}
_Thread_local uint32_t socktab__stat_idx __attribute__((tls_model("initial-exec")));

#ifdef SOCKTAB_CONTENTION_COUNTERS
_Thread_local struct socktab__lock_counts socktab__lock_counts
	__attribute__((tls_model("initial-exec")));

/* Lines taken from other threads (common.h): each cell holds the id of its line's last writer. */
#define LINE_CELLS_LOG 22
static uint32_t line_writer[1u << LINE_CELLS_LOG];
static uint32_t line_ids; /* the last thread id given out */
static _Thread_local uint32_t line_me;
static struct socktab__site *line_sites; /* every site that counted, when reporting */
static bool line_report;

void socktab__line_write(const volatile void *p, struct socktab__site *s)
{
	uint64_t l = (uint64_t)(uintptr_t)p >> 6;
	uint32_t *cell = &line_writer[(l * 0x9e3779b97f4a7c15ull) >> (64 - LINE_CELLS_LOG)];
	uint32_t prev = __atomic_load_n(cell, __ATOMIC_RELAXED);
	bool taken = false;

	if (!line_me)
		line_me = __atomic_add_fetch(&line_ids, 1, __ATOMIC_RELAXED);
	if (prev != line_me) {
		__atomic_store_n(cell, line_me, __ATOMIC_RELAXED);
		taken = prev != 0;
	}
	socktab__lock_counts.taken += taken;
	if (!line_report)
		return;
	__atomic_fetch_add(&s->writes, 1, __ATOMIC_RELAXED);
	if (taken)
		__atomic_fetch_add(&s->taken, 1, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&s->linked, __ATOMIC_ACQUIRE) &&
	    !__atomic_exchange_n(&s->linked, 1, __ATOMIC_ACQ_REL)) {
		struct socktab__site *head = __atomic_load_n(&line_sites, __ATOMIC_RELAXED);

		do
			__atomic_store_n(&s->next, head, __ATOMIC_RELAXED);
		while (!__atomic_compare_exchange_n(&line_sites, &head, s, true, __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED));
	}
}

__attribute__((constructor)) static void line_report_init(void)
{
	line_report = secure_getenv("SOCKTAB_LINE_REPORT") != NULL;
}

__attribute__((destructor)) static void line_report_write(void)
{
	const char *path = secure_getenv("SOCKTAB_LINE_REPORT");
	FILE *f;

	if (!line_report || !path || !(f = fopen(path, "w")))
		return;
	for (struct socktab__site *s = __atomic_load_n(&line_sites, __ATOMIC_ACQUIRE); s;
	     s = __atomic_load_n(&s->next, __ATOMIC_RELAXED))
		fprintf(f, "%llu %llu %s:%d\n",
			(unsigned long long)__atomic_load_n(&s->taken, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&s->writes, __ATOMIC_RELAXED), s->file,
			s->line);
	fclose(f);
}
#endif

_Atomic uint64_t socktab__rcu_queued, socktab__rcu_run, socktab__rcu_waits;

int socktab_rcu_stats(struct socktab_rcu_stats *st)
{
	if (!st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	/* Run first: a callback is counted queued before it can run, so run <= queued. */
	st->callbacks_run = atomic_load_explicit(&socktab__rcu_run, memory_order_acquire);
	st->callbacks_queued = atomic_load_explicit(&socktab__rcu_queued, memory_order_relaxed);
	st->waits = atomic_load_explicit(&socktab__rcu_waits, memory_order_relaxed);
	return 0;
}

int socktab_thread_counts(struct socktab_thread_counts *c)
{
	if (!c)
		return -EINVAL;
#ifdef SOCKTAB_CONTENTION_COUNTERS
	memset(c, 0, sizeof(*c));
	c->locks = socktab__lock_counts.locks;
	c->locks_contended = socktab__lock_counts.contended;
	c->atomic_rmw = socktab__lock_counts.rmw;
	c->atomic_stores = socktab__lock_counts.stores;
	c->lines_taken = socktab__lock_counts.taken;
	return 0;
#else
	return -ENOTSUP;
#endif
}

int socktab_thread_counters(struct socktab_thread_counters *c)
{
	struct socktab_thread_counts n;
	int err;

	if (!c)
		return -EINVAL;
	err = socktab_thread_counts(&n);
	if (err)
		return err;
	memset(c, 0, sizeof(*c));
	c->locks = n.locks;
	c->locks_contended = n.locks_contended;
	return 0;
}

/* Bit i: counter slot i has an owner (the last slot is shared and has no bit). */
static _Atomic uint64_t stat_owned;

uint32_t socktab__stat_take(void)
{
	const uint64_t all = (1ull << (SOCKTAB__STAT_SLOTS - 1)) - 1;
	uint64_t m = atomic_load(&stat_owned);

	for (;;) {
		uint64_t free_slots = ~m & all;
		uint32_t i = free_slots ? (uint32_t)__builtin_ctzll(free_slots) : SOCKTAB__STAT_SLOTS - 1;

		/* Orders this thread's plain adds after the last owner's (its give-back). */
		if (!free_slots || atomic_compare_exchange_weak(&stat_owned, &m, m | 1ull << i)) {
			socktab__stat_idx = i + 1;
			return i;
		}
	}
}

void socktab__stat_give_back(void)
{
	uint32_t i = socktab__stat_idx;

	if (i && i < SOCKTAB__STAT_SLOTS)
		atomic_fetch_and(&stat_owned, ~(1ull << (i - 1)));
	socktab__stat_idx = 0;
}

int socktab_set_rx_cpu(int cpu)
{
	if (cpu < -1)
		return -EINVAL;
	socktab__rx_cpu_set = cpu;
	return 0;
}

int socktab_get_rx_cpu(void)
{
	return socktab__rx_cpu();
}

_Thread_local const unsigned char *socktab__rx_payload __attribute__((tls_model("initial-exec")));
_Thread_local uint32_t socktab__rx_payload_len __attribute__((tls_model("initial-exec")));

int socktab_set_rx_payload(const void *data, size_t len)
{
	if ((!data && len) || len > UINT32_MAX)
		return -EINVAL;
	socktab__rx_payload = data;
	socktab__rx_payload_len = (uint32_t)len;
	return 0;
}

/*
 * Every table lock guards a few dozen instructions. A default mutex puts a thread that finds it
 * taken to sleep in the kernel at once, and the holder's unlock then pays a wake-up: with two
 * threads churning connections that costs more than the work. An adaptive one spins a little
 * first (glibc's PTHREAD_MUTEX_ADAPTIVE_NP), as the kernel's spinlocks do, and sleeps only when
 * the holder takes long (was preempted).
 */
static pthread_mutexattr_t adaptive;
static pthread_once_t adaptive_once = PTHREAD_ONCE_INIT;

static void adaptive_make(void)
{
	pthread_mutexattr_init(&adaptive);
	pthread_mutexattr_settype(&adaptive, PTHREAD_MUTEX_ADAPTIVE_NP);
}

int socktab__mutex_init(pthread_mutex_t *m)
{
	pthread_once(&adaptive_once, adaptive_make);
	return -pthread_mutex_init(m, &adaptive);
}

int socktab__stripes_init(struct socktab__stripes *st, uint32_t n, uint32_t slots)
{
	st->mask = 0;
	st->shift = 0;
	while (slots > n << st->shift)
		st->shift++;
	if (posix_memalign((void **)&st->s, SOCKTAB__CACHELINE, n * sizeof(*st->s))) {
		st->s = NULL;
		return -ENOMEM;
	}
	st->mask = n - 1;
	for (uint32_t i = 0; i < n; i++)
		socktab__mutex_init(&st->s[i].m);
	return 0;
}

void socktab__stripes_free(struct socktab__stripes *st)
{
	if (!st->s)
		return;
	for (uint32_t i = 0; i <= st->mask; i++)
		pthread_mutex_destroy(&st->s[i].m);
	free(st->s);
	st->s = NULL;
}

void socktab__misuse(const char *what)
{
	fprintf(stderr, "socktab: %s\n", what);
	abort();
}

#define UNBALANCED "socktab_rcu_read_unlock without a matching socktab_rcu_read_lock"

__attribute__((cold)) void socktab__rcu_unlock_unbalanced(void)
{
	socktab__misuse(socktab__online == 1 ? UNBALANCED " (an online thread's own section is "
						 "socktab_thread_offline()'s to end)"
					     : UNBALANCED);
}

void socktab__prefault(void *p, size_t len)
{
	volatile unsigned char *c = p;

	/* Volatile stores: a zero written over memory known to be zero is still a write the
	 * compiler must keep, and the write (not a read) makes the kernel map a private page. */
	for (size_t i = 0; i < len; i += SOCKTAB__PAGE_MIN)
		c[i] = 0;
	if (len)
		c[len - 1] = 0;
}

#ifdef SOCKTAB_NAIVE_ORDER
bool socktab__naive_env(_Atomic int *cache, const char *var)
{
	int v = atomic_load_explicit(cache, memory_order_relaxed);

	if (v < 0) {
		v = getenv(var) != NULL;
		atomic_store_explicit(cache, v, memory_order_relaxed);
	}
	return v;
}
#endif
