/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The only place socktab names liburcu: the urcu-memb flavour (membarrier-based; readers pay no
 * fence), plus a ThreadSanitizer model of a grace period (docs/concurrency.md).
 * Debian 12 ships liburcu 0.13, whose primitives TSan cannot see; in TSan builds every read-side
 * unlock releases a token that every reclaim acquires, and each object handed to call_rcu is
 * released/acquired across the hand-off. Other builds compile the wrappers to nothing.
 */
#ifndef SOCKTAB_SRC_RCU_H
#define SOCKTAB_SRC_RCU_H

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#if defined(__SANITIZE_THREAD__)
#define SOCKTAB_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SOCKTAB_TSAN 1
#endif
#endif

/*
 * Inline the read-side lock and unlock (liburcu defines them as functions otherwise). liburcu's
 * README allows this for code under a GPL-compatible licence, which BSD-2-Clause is. Measured on
 * the reference machine, alone in a loop: a read-side section costs 10.5 ns through the
 * library's functions and 1.1 ns inlined. Between lookups that miss in DRAM it costs more (its
 * loads hold load-buffer entries behind the misses: docs/concurrency.md), which online threads
 * (socktab__online below) avoid. The price of inlining: a liburcu upgrade that changes the
 * reader's per-thread layout needs socktab rebuilt, as for any program that inlines them. TSan
 * builds keep the functions: inlined, liburcu's own benign races (its futex wake-up) would be
 * reported.
 */
#if !defined(_LGPL_SOURCE) && !defined(SOCKTAB_TSAN)
#define _LGPL_SOURCE
#endif
#include <urcu/urcu-memb.h>

/*
 * Process-wide reclamation counts (socktab_rcu_stats()): callbacks handed to call_rcu, callbacks
 * run, and grace periods socktab's own calls waited for. One add per callback or wait: a batch of
 * freed objects is one callback.
 */
extern _Atomic uint64_t socktab__rcu_queued, socktab__rcu_run, socktab__rcu_waits;

#ifdef SOCKTAB_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
extern char socktab__tsan_gp_token;
#define socktab__tsan_acquire(p) __tsan_acquire((void *)(p))
#define socktab__tsan_release(p) __tsan_release((void *)(p))
#else
#define socktab__tsan_acquire(p) ((void)0)
#define socktab__tsan_release(p) ((void)0)
#endif

static inline void socktab__rcu_register_thread(void)
{
	urcu_memb_register_thread();
}

static inline void socktab__rcu_unregister_thread(void)
{
	urcu_memb_unregister_thread();
}

/* Is the calling thread inside a read-side section? (debug assertions) */
static inline int socktab__rcu_read_ongoing(void)
{
	return urcu_memb_read_ongoing();
}

/* A call_rcu worker thread of its own, pinned to @cpu (-1: not pinned), or NULL (no memory). */
/* The name a reclaim worker carries (ps -L, top -H, /proc/PID/task/TID/comm). */
#define SOCKTAB__RECLAIM_THREAD_NAME "socktab-reclaim"
/* Set once the calling thread (a reclaim worker) carries that name (common.c). */
extern _Thread_local bool socktab__reclaim_named __attribute__((tls_model("initial-exec")));
void socktab__reclaim_name(void);

static inline struct call_rcu_data *socktab__rcu_worker_new(int cpu)
{
	struct call_rcu_data *w = urcu_memb_create_call_rcu_data(0, cpu);

	if (w)
		(void)pthread_setname_np(urcu_memb_get_call_rcu_thread(w),
					 SOCKTAB__RECLAIM_THREAD_NAME);
	return w;
}

/* The calling thread's callbacks go to @w from now on (NULL: liburcu's default worker). */
static inline void socktab__rcu_worker_use(struct call_rcu_data *w)
{
	urcu_memb_set_thread_call_rcu_data(w);
}

/* A wait for a grace period inside a section (an online thread's own included: its callers
 * leave it first, socktab__rcu_wait_begin below) would wait for itself. Builds with the packet
 * path's checks stop at such a wait. */
#ifdef SOCKTAB_PACKET_PATH_CHECKS
#define SOCKTAB__ASSERT_CAN_WAIT()                                                                 \
	assert(!urcu_memb_read_ongoing() && "a grace-period wait inside a read-side section")
#else
#define SOCKTAB__ASSERT_CAN_WAIT() ((void)0)
#endif

/* Wait until every callback handed to socktab__call_rcu() so far has run. */
static inline void socktab__rcu_barrier(void)
{
	SOCKTAB__ASSERT_CAN_WAIT();
	atomic_fetch_add_explicit(&socktab__rcu_waits, 1, memory_order_relaxed);
	urcu_memb_barrier();
}

/* How often the calling thread called socktab_thread_register() (net.c). */
extern _Thread_local int socktab__registered __attribute__((tls_model("initial-exec")));
/* 1: the calling thread is online (socktab_thread_online(), net.c) and holds one read-side
 * section from there to its next quiescent state; 2: online without one (the negative-control
 * build's naive order); 0: not online. */
extern _Thread_local int socktab__online __attribute__((tls_model("initial-exec")));

static inline void socktab__rcu_read_lock(void)
{
	/* An unregistered reader would not hold grace periods back: a use-after-free waiting to
	 * happen. Builds with the packet path's checks (common.h) stop here instead. */
#ifdef SOCKTAB_PACKET_PATH_CHECKS
	assert(socktab__registered && "socktab_thread_register() was not called on this thread");
#endif
	urcu_memb_read_lock();
}

/* An unlock that ends no section of the caller's: prints which and aborts (common.c). */
_Noreturn void socktab__rcu_unlock_unbalanced(void);

/* Leave a section without the balance check: only for an online thread's own section
 * (socktab_quiescent_state(), socktab_thread_offline(), socktab__rcu_wait_begin()). */
static inline void socktab__rcu_read_unlock_online(void)
{
#ifdef SOCKTAB_TSAN
	socktab__tsan_release(&socktab__tsan_gp_token);
#endif
	urcu_memb_read_unlock();
}

/*
 * Leave a read-side section the caller entered. liburcu keeps no check of its own (an unlock
 * with no section open wraps its nesting count, and every later grace period waits for the
 * thread for good), and on an online thread one unlock too many would end the thread's own
 * section: its lookups would run unprotected, and socktab_thread_offline() would then wrap the
 * count. So every build checks the balance, with the count liburcu keeps anyway:
 * urcu_memb_read_ongoing() is the nesting (ctr & URCU_GP_CTR_NEST_MASK, inline and exported
 * alike, not only 0 or 1), and an online thread's own section is one of it
 * (socktab__online == 1). The load shares the unlock's own load of the counter; the cost is
 * the online flag's load and a branch never taken.
 */
static inline void socktab__rcu_read_unlock(void)
{
	unsigned int own = (unsigned int)(socktab__online & 1);

	if (caa_unlikely((unsigned int)urcu_memb_read_ongoing() <= own))
		socktab__rcu_unlock_unbalanced();
	socktab__rcu_read_unlock_online();
}

/* Wait for a grace period; everything read-side sections did before it is visible after. */
static inline void socktab__synchronize_rcu(void)
{
	SOCKTAB__ASSERT_CAN_WAIT();
	atomic_fetch_add_explicit(&socktab__rcu_waits, 1, memory_order_relaxed);
	urcu_memb_synchronize_rcu();
#ifdef SOCKTAB_TSAN
	socktab__tsan_acquire(&socktab__tsan_gp_token);
#endif
}

/*
 * Around a wait for a grace period or for the callbacks (socktab__synchronize_rcu,
 * socktab__rcu_barrier): an online thread leaves its own section first, as liburcu's QSBR flavour
 * goes offline in its synchronize_rcu, or it would wait for itself. Returns whether it left; the
 * thread then reads socktab__rcu_read_ongoing() to see if a section of its own is still open.
 */
static inline bool socktab__rcu_wait_begin(void)
{
	if (socktab__online != 1)
		return false;
	socktab__rcu_read_unlock_online();
	return true;
}

static inline void socktab__rcu_wait_end(bool left)
{
	if (left)
		socktab__rcu_read_lock();
}

/* Hand @obj to a reclaim callback; the callback must start with socktab__rcu_cb_enter(obj). */
#define socktab__call_rcu(obj, head, cb)                                                           \
	do {                                                                                       \
		socktab__tsan_release(obj);                                                        \
		atomic_fetch_add_explicit(&socktab__rcu_queued, 1, memory_order_relaxed);          \
		urcu_memb_call_rcu((head), (cb));                                                  \
	} while (0)

static inline void socktab__rcu_cb_enter(void *obj)
{
	(void)obj;
	/* liburcu's default worker, made by the first thread that frees, gets the name of the
	 * workers socktab makes at its first callback. */
	if (caa_unlikely(!socktab__reclaim_named))
		socktab__reclaim_name();
	atomic_fetch_add_explicit(&socktab__rcu_run, 1, memory_order_release);
#ifdef SOCKTAB_TSAN
	socktab__tsan_acquire(obj);
	socktab__tsan_acquire(&socktab__tsan_gp_token);
#endif
}

#endif /* SOCKTAB_SRC_RCU_H */
