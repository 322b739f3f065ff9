/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every file of the library shares: atomic accessors, lock helpers and their debug
 * assertions, address helpers, constants, and the one source of randomness.
 *
 * Lock legend, written beside each shared field in the internal headers:
 *   (c)  constant after creation (for a socket: after socktab_socket() hands it out)
 *   (s)  written under the socket's lock (one of its net's striped locks, socktab__sk_lock)
 *   (b)  written under the bhash (port) bucket lock of the socket's port
 *   (b2) written under the bhash2 (port, address) bucket lock
 *   (e)  written under the ehash bucket lock
 *   (t)  written under the net's TIME_WAIT list lock
 *   (p)  written under the pool lock
 *   (r)  read locklessly under RCU: written with atomic stores and read with atomic loads
 *   (a)  atomic, no lock
 * Lock order: socket lock -> bhash -> bhash2 -> ehash; socket lock -> lhash2 -> reuseport lock;
 * UDP: socket lock -> primary slot -> reuseport lock -> hash2 slot -> hash4 slot. The TIME_WAIT
 * list lock, the pool locks, the port index's spin lock and a bind bucket's kids shard locks
 * (bind.c) are leaves (nothing else is taken while holding them). docs/concurrency.md has the whole
 * picture.
 *
 * Names: a `_locked` suffix means the caller holds the lock that guards the object (named in the
 * function's comment and asserted in debug builds); `_rcu` means the caller is inside an RCU
 * read-side section. Unsuffixed functions take the locks they need.
 */
#ifndef SOCKTAB_SRC_COMMON_H
#define SOCKTAB_SRC_COMMON_H

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nulls.h"
#include "rcu.h"
#include "socktab/socktab.h"

#define SOCKTAB__CACHELINE 64

/* The IPv4 alias the kernel gives a socket bound to a specific IPv6 address (LOOPBACK4_IPV6,
 * 127.0.0.6): it never matches IPv4 traffic, and marks the socket as not IPv4-capable. */
#define SOCKTAB__LOOPBACK4_IPV6 htonl(0x7f000006)
/* The shortest sockaddr_in6 the kernel accepts (SIN6_LEN_RFC2133: without sin6_scope_id). */
#define SOCKTAB__SIN6_LEN_RFC2133 24

/* Relaxed atomic accessors for (r) fields; ordering comes from the list's acquire/release. */
#define RD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define WR(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

#ifdef NDEBUG
#define SOCKTAB__ASSERT(c) ((void)0)
#else
#include <assert.h>
#define SOCKTAB__ASSERT(c) assert(c)
#endif

/*
 * A caller broke a rule of the API that no return value can report (a void function, or one
 * whose only way on is a hang or a use-after-free): print "socktab: @what" on stderr and abort,
 * in every build. Each such rule is documented beside the function in socktab/.
 */
_Noreturn void socktab__misuse(const char *what);

/* Initialise @m as every lock of the tables is: adaptive (spins briefly before it sleeps).
 * 0 or a negative errno. */
int socktab__mutex_init(pthread_mutex_t *m);

#ifdef SOCKTAB_CONTENTION_COUNTERS
/* The calling thread's lock acquisitions and those that found the lock taken, its atomic
 * read-modify-writes and its stores to atomic objects (socktab_thread_counts()); only in builds
 * with -Dcontention_counters=true. */
struct socktab__lock_counts {
	uint64_t locks, contended, rmw, stores, taken;
};
extern _Thread_local struct socktab__lock_counts socktab__lock_counts
	__attribute__((tls_model("initial-exec")));

/*
 * Lines taken from other threads. Every counted write (an atomic store or read-modify-write, a
 * lock acquisition: the lock's word) notes its cache line's writer in a table of 2^22 cells
 * indexed by a hash of the line's address; a write whose line another thread wrote last counts
 * as one line taken (socktab_thread_counts' lines_taken): the transfer that costs a multi-core
 * workload, and that hardware counters would show (perf c2c) where the machine has them. Plain
 * stores under a lock are not seen, only the lock's line; two lines that share a cell can be
 * taken for one another (a few per cent of the lines at a few hundred thousand hot lines).
 * The table's own writes are skipped where the writer is already the last one.
 * Each call site keeps its own counts, printed at exit to the file SOCKTAB_LINE_REPORT names
 * ("taken writes file:line", one site a line) when that variable is set at start.
 */
struct socktab__site {
	const char *file;
	int line;
	_Atomic uint64_t writes, taken;
	_Atomic(struct socktab__site *) next;
	_Atomic int linked;
};
void socktab__line_write(const volatile void *p, struct socktab__site *s);
#define SOCKTAB__LINE_WRITE(P)                                                                     \
	__extension__({                                                                            \
		static struct socktab__site socktab__site = { __FILE__, __LINE__, 0, 0, 0, 0 };    \
		socktab__line_write((P), &socktab__site);                                          \
	})

/*
 * Every atomic read-modify-write and store of the library, counted: <stdatomic.h>'s generic
 * functions again, as GCC's header spells them, with a count in front. An atomic object is one
 * another thread reads or writes, so a store to one is a store to a shared line (a per-thread
 * counter slot's too: socktab_net_stats() reads it). Loads are not counted. GCC only (the
 * meson option refuses other compilers).
 */
#define SOCKTAB__COUNTED_RMW(OP, P, V, MO)                                                         \
	__extension__({                                                                            \
		__auto_type socktab__p = (P);                                                      \
		socktab__lock_counts.rmw++;                                                        \
		SOCKTAB__LINE_WRITE(socktab__p);                                                   \
		OP(socktab__p, (V), (MO));                                                         \
	})
#undef atomic_store_explicit
#define atomic_store_explicit(P, V, MO)                                                            \
	__extension__({                                                                            \
		__auto_type socktab__p = (P);                                                      \
		__typeof__((void)0, *socktab__p) socktab__v = (V);                                 \
		socktab__lock_counts.stores++;                                                     \
		SOCKTAB__LINE_WRITE(socktab__p);                                                   \
		__atomic_store(socktab__p, &socktab__v, (MO));                                     \
	})
#undef atomic_store
#define atomic_store(P, V) atomic_store_explicit(P, V, __ATOMIC_SEQ_CST)
#undef atomic_exchange_explicit
#define atomic_exchange_explicit(P, V, MO)                                                         \
	__extension__({                                                                            \
		__auto_type socktab__p = (P);                                                      \
		__typeof__((void)0, *socktab__p) socktab__v = (V), socktab__r;                     \
		socktab__lock_counts.rmw++;                                                        \
		SOCKTAB__LINE_WRITE(socktab__p);                                                   \
		__atomic_exchange(socktab__p, &socktab__v, &socktab__r, (MO));                     \
		socktab__r;                                                                        \
	})
#undef atomic_exchange
#define atomic_exchange(P, V) atomic_exchange_explicit(P, V, __ATOMIC_SEQ_CST)
#define SOCKTAB__CAS(P, E, D, WEAK, S, F)                                                          \
	__extension__({                                                                            \
		__auto_type socktab__p = (P);                                                      \
		__typeof__((void)0, *socktab__p) socktab__d = (D);                                 \
		socktab__lock_counts.rmw++;                                                        \
		SOCKTAB__LINE_WRITE(socktab__p);                                                   \
		__atomic_compare_exchange(socktab__p, (E), &socktab__d, WEAK, (S), (F));           \
	})
#undef atomic_compare_exchange_weak_explicit
#define atomic_compare_exchange_weak_explicit(P, E, D, S, F) SOCKTAB__CAS(P, E, D, 1, S, F)
#undef atomic_compare_exchange_strong_explicit
#define atomic_compare_exchange_strong_explicit(P, E, D, S, F) SOCKTAB__CAS(P, E, D, 0, S, F)
#undef atomic_compare_exchange_weak
#define atomic_compare_exchange_weak(P, E, D)                                                      \
	SOCKTAB__CAS(P, E, D, 1, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
#undef atomic_compare_exchange_strong
#define atomic_compare_exchange_strong(P, E, D)                                                    \
	SOCKTAB__CAS(P, E, D, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
#undef atomic_fetch_add_explicit
#define atomic_fetch_add_explicit(P, V, MO) SOCKTAB__COUNTED_RMW(__atomic_fetch_add, P, V, MO)
#undef atomic_fetch_add
#define atomic_fetch_add(P, V) atomic_fetch_add_explicit(P, V, __ATOMIC_SEQ_CST)
#undef atomic_fetch_sub_explicit
#define atomic_fetch_sub_explicit(P, V, MO) SOCKTAB__COUNTED_RMW(__atomic_fetch_sub, P, V, MO)
#undef atomic_fetch_sub
#define atomic_fetch_sub(P, V) atomic_fetch_sub_explicit(P, V, __ATOMIC_SEQ_CST)
#undef atomic_fetch_or_explicit
#define atomic_fetch_or_explicit(P, V, MO) SOCKTAB__COUNTED_RMW(__atomic_fetch_or, P, V, MO)
#undef atomic_fetch_or
#define atomic_fetch_or(P, V) atomic_fetch_or_explicit(P, V, __ATOMIC_SEQ_CST)
#undef atomic_fetch_and_explicit
#define atomic_fetch_and_explicit(P, V, MO) SOCKTAB__COUNTED_RMW(__atomic_fetch_and, P, V, MO)
#undef atomic_fetch_and
#define atomic_fetch_and(P, V) atomic_fetch_and_explicit(P, V, __ATOMIC_SEQ_CST)
#undef atomic_fetch_xor_explicit
#define atomic_fetch_xor_explicit(P, V, MO) SOCKTAB__COUNTED_RMW(__atomic_fetch_xor, P, V, MO)

static inline void socktab__lock_at(pthread_mutex_t *m, struct socktab__site *site)
{
	socktab__lock_counts.locks++;
	socktab__line_write(m, site);
	if (pthread_mutex_trylock(m)) {
		socktab__lock_counts.contended++;
		pthread_mutex_lock(m);
	}
}
/* Each caller's line is the lock's site. */
#define socktab__lock(M)                                                                           \
	__extension__({                                                                            \
		static struct socktab__site socktab__site = { __FILE__, __LINE__, 0, 0, 0, 0 };    \
		socktab__lock_at((M), &socktab__site);                                             \
	})
#else
static inline void socktab__lock(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
}
#endif

static inline void socktab__unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
}

/*
 * Striped locks: @mask + 1 mutexes, one per cache line; object or slot i takes stripe
 * (i >> shift) & mask.
 * Every striped table and the sockets use it; no code holds two stripes of one array, so slots
 * sharing a stripe only serialise.
 */
struct socktab__lock_stripe {
	_Alignas(SOCKTAB__CACHELINE) pthread_mutex_t m;
};

struct socktab__stripes {
	struct socktab__lock_stripe *s;    /* (c) */
	uint32_t mask;                     /* (c) stripes - 1 */
	uint32_t shift;                    /* (c) log2 of the consecutive slots one stripe covers */
};

/*
 * Allocate and initialise @n stripes (a power of two): 0, or -ENOMEM with @st empty. With
 * @slots (a power of two, at least @n) stripe i covers the @slots / @n consecutive slots from
 * i x @slots / @n; with 0, slot j takes stripe j mod @n. Consecutive suits ehash, where
 * lport-after-hash puts a thread's connections toward one destination on consecutive slots:
 * they take a few stripes, and another thread's, elsewhere in the table, other ones, where
 * stripes taken in turn would give every thread's run every stripe, each lock line moving
 * between cores. Not the bind tables: two listeners on adjacent ports, one per thread, would
 * share a stripe that every child of both takes.
 */
int socktab__stripes_init(struct socktab__stripes *st, uint32_t n, uint32_t slots);
/* Destroy and free them; an empty (zeroed or failed) set is fine. */
void socktab__stripes_free(struct socktab__stripes *st);

static inline pthread_mutex_t *socktab__stripe(const struct socktab__stripes *st, uint32_t i)
{
	return &st->s[(i >> st->shift) & st->mask].m;
}

/*
 * Per-thread counter slots. Counters that calls change every time (connect(), close(), a
 * handshake) live in SOCKTAB__STAT_SLOTS slots of a cache line each (net.h), and a thread adds
 * to its own slot: no such call writes a line another thread writes. The slot index is
 * process-wide, taken at a thread's first count and given back when it unregisters; slots
 * 0..SOCKTAB__STAT_SLOTS - 2 have one owner at a time, who adds with a plain load and store, and
 * the last one is shared (atomic adds) by the threads that found every other slot taken.
 */
#define SOCKTAB__STAT_SLOTS 64
extern _Thread_local uint32_t socktab__stat_idx __attribute__((tls_model("initial-exec")));
/* Take a slot for the calling thread and return it. */
uint32_t socktab__stat_take(void);
/* Give the calling thread's slot back (unregistration, thread exit). */
void socktab__stat_give_back(void);

/* The calling thread's slot. Context: any. */
static inline uint32_t socktab__stat_slot(void)
{
	uint32_t i = socktab__stat_idx;

	return i ? i - 1 : socktab__stat_take();
}

/* Add @v to the counter @c of the calling thread's slot @slot. */
static inline void socktab__stat_add(_Atomic int64_t *c, uint32_t slot, int64_t v)
{
	if (slot < SOCKTAB__STAT_SLOTS - 1)
		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
				      memory_order_relaxed);
	else
		atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

/*
 * Lock discipline: a function that needs a lock asserts that it is held. A default mutex cannot
 * tell who holds it, so this checks "held by someone"; with the caller's own lock missing, the
 * trylock succeeds and the assertion fires. The trylock is an atomic read-modify-write of the
 * lock's line, a few dozen per connect()/close() churn transaction (6.6 % of its instructions,
 * callgrind), so like the read-side checks below it is built only with
 * -Dpacket_path_checks=true (the clang, ASan and TSan builds of make test), not in the main
 * build.
 */
#if defined(NDEBUG) || !defined(SOCKTAB_PACKET_PATH_CHECKS)
#define SOCKTAB__ASSERT_LOCKED(m) ((void)0)
#else
#define SOCKTAB__ASSERT_LOCKED(m)                                                                  \
	do {                                                                                       \
		pthread_mutex_t *socktab__m = (m);                                                 \
		if (pthread_mutex_trylock(socktab__m) == 0) {                                      \
			pthread_mutex_unlock(socktab__m);                                          \
			SOCKTAB__ASSERT(!"lock not held");                                         \
		}                                                                                  \
	} while (0)
#endif

/*
 * The read-side checks: the caller is inside an RCU read-side section (every `_rcu` walk), and a
 * section is entered on a registered thread (rcu.h). They sit on the per-packet path, where each
 * costs a thread-local load (one through liburcu's TLS descriptor) and a branch on every lookup:
 * 11 of the 161 instructions of an RCU-scoped lookup with its section (callgrind), whose time at
 * a million sockets is bound by how many lookups the core keeps in flight (docs/benchmarks.md).
 * So they are built only with -Dpacket_path_checks=true, as the test builds of `make test`
 * (clang, ASan, TSan) are; the main build ships without them.
 */
#if defined(SOCKTAB_PACKET_PATH_CHECKS) && !defined(NDEBUG)
#define SOCKTAB__ASSERT_RCU() SOCKTAB__ASSERT(socktab__rcu_read_ongoing())
#else
#define SOCKTAB__ASSERT_RCU() ((void)0)
#endif

/* Dispatch callbacks running on this thread, nested (sk_lookup.c counts them). */
extern _Thread_local unsigned int socktab__dispatch_depth __attribute__((tls_model("initial-exec")));

/*
 * A control call (socktab/socktab.h, "Contexts": "not inside a dispatch callback") stops here
 * when a callback runs on this thread: it would take socket and table locks under the lookup's
 * caller, which may hold locks of its own. Builds with the packet path's checks print which call
 * and abort; the main build leaves the test out.
 */
#if defined(SOCKTAB_PACKET_PATH_CHECKS)
#define SOCKTAB__ASSERT_NOT_IN_DISPATCH(call)                                                      \
	do {                                                                                       \
		if (socktab__dispatch_depth)                                                       \
			socktab__misuse(call " inside a dispatch callback (docs/concurrency.md)"); \
	} while (0)
#else
#define SOCKTAB__ASSERT_NOT_IN_DISPATCH(call) ((void)0)
#endif

/* ---- addresses: IPv6 form, IPv4 as v4-mapped ---- */
static inline void socktab__v6_store(_Atomic uint64_t dst[2], const struct in6_addr *a)
{
	uint64_t w[2];

	memcpy(w, a, 16);
	WR(dst[0], w[0]);
	WR(dst[1], w[1]);
}

static inline struct in6_addr socktab__v6_load(const _Atomic uint64_t src[2])
{
	uint64_t w[2] = { RD(src[0]), RD(src[1]) };
	struct in6_addr a;

	memcpy(&a, w, 16);
	return a;
}

/* The kernel's isspace() (lib/ctype.c), whatever the C library's locale: '\t' to '\r', ' ',
 * and 0xa0. */
static inline bool socktab__kernel_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

static inline bool socktab__v6_is_any(const struct in6_addr *a)
{
	static const struct in6_addr any = IN6ADDR_ANY_INIT;

	return memcmp(a, &any, 16) == 0;
}

static inline bool socktab__v6_is_mapped(const struct in6_addr *a)
{
	return a->s6_addr32[0] == 0 && a->s6_addr32[1] == 0 && a->s6_addr32[2] == htonl(0xffff);
}

static inline void socktab__v6_map(struct in6_addr *a, uint32_t v4)
{
	a->s6_addr32[0] = 0;
	a->s6_addr32[1] = 0;
	a->s6_addr32[2] = htonl(0xffff);
	a->s6_addr32[3] = v4;
}

static inline bool socktab__v4_is_loopback(uint32_t be)
{
	return (ntohl(be) >> 24) == 127;
}

static inline bool socktab__v6_is_loopback(const struct in6_addr *a)
{
	static const struct in6_addr lo = IN6ADDR_LOOPBACK_INIT;

	if (socktab__v6_is_mapped(a))
		return socktab__v4_is_loopback(a->s6_addr32[3]);
	return memcmp(a, &lo, 16) == 0;
}

/* __ipv6_addr_needs_scope_id(): link-local unicast, or multicast of link or interface scope. */
static inline bool socktab__v6_needs_scope(const struct in6_addr *a)
{
	if (a->s6_addr[0] == 0xfe && (a->s6_addr[1] & 0xc0) == 0x80)
		return true;
	return a->s6_addr[0] == 0xff && ((a->s6_addr[1] & 0x0f) == 1 || (a->s6_addr[1] & 0x0f) == 2);
}

/* The smallest page size of the platforms socktab runs on (x86-64 and arm64: 4 KiB). */
#define SOCKTAB__PAGE_MIN 4096

/*
 * Fault in every page of [@p, @p + @len) now, by writing a zero byte to each: the kernel maps
 * them here (one fault per small page, or per huge page where transparent huge pages apply)
 * instead of on their first use on the packet path. Only for memory whose bytes are zero or not
 * yet used. Context: any.
 */
void socktab__prefault(void *p, size_t len);

/* ---- the receiving CPU (SO_INCOMING_CPU, R31, R32, R35, R71) ---- */

/* What socktab_set_rx_cpu() set for this thread: a CPU (or RX queue) number, or -1 to ask
 * sched_getcpu() at each lookup that needs it. */
extern _Thread_local int socktab__rx_cpu_set __attribute__((tls_model("initial-exec")));

/* The CPU a lookup of this thread runs on, the kernel's raw_smp_processor_id(): -1 if unknown. */
static inline int socktab__rx_cpu(void)
{
	int cpu = socktab__rx_cpu_set;

	return cpu >= 0 ? cpu : sched_getcpu();
}

/* ---- the datagram payload a reuseport selector reads (R110) ---- */

/* What socktab_set_rx_payload() set for this thread: the bytes after the UDP (TCP) header of
 * the packet its lookups are for, or NULL / 0. Read only by a group with a program. */
extern _Thread_local const unsigned char *socktab__rx_payload
	__attribute__((tls_model("initial-exec")));
extern _Thread_local uint32_t socktab__rx_payload_len __attribute__((tls_model("initial-exec")));

/* A lookup's CPU before it was needed: the lookup asks at most once, and only when a socket it
 * scores, or a group it selects from, uses SO_INCOMING_CPU. */
#define SOCKTAB__CPU_UNASKED INT_MIN

/*
 * Does a socket whose SO_INCOMING_CPU is @incpu get the CPU bonus in a lookup whose CPU is *cpu
 * (SOCKTAB__CPU_UNASKED until known)? A negative value names no CPU and never matches, so a
 * lookup among sockets that never set the option reads no CPU at all. Context: any.
 */
static inline bool socktab__incpu_match(int incpu, int *cpu)
{
	if (incpu < 0)
		return false;
	if (*cpu == SOCKTAB__CPU_UNASKED)
		*cpu = socktab__rx_cpu();
	return incpu == *cpu;
}

/* ---- random.c: the library's only source of randomness ---- */

/* Fill @buf with @len bytes from getrandom(); if that fails, from a time-seeded generator
 * (never zeros). For secrets. Context: any. */
void socktab__random_bytes(void *buf, size_t len);
/* A uniform value in [0, n) from a per-thread xorshift generator seeded from
 * socktab__random_bytes(): fast, not a secret. Context: any. */
uint32_t socktab__random_below(uint32_t n);
/* Tests: make this thread's socktab__random_below() sequence repeatable (0 reseeds). */
void socktab__random_seed(uint64_t seed);

#ifdef SOCKTAB_NAIVE_ORDER
/* Whether the environment names @var, read once into *@cache (-1 until then): the switch of a
 * negative control that only its own test turns on (common.c). */
bool socktab__naive_env(_Atomic int *cache, const char *var);
#endif

#endif /* SOCKTAB_SRC_COMMON_H */
