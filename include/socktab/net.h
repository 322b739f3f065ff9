/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Network namespaces: creation with their parameters, run-time settings (the kernel's per-netns
 * sysctls), TIME_WAIT expiry, counters, RSS-aware port choice, and the thread registration every
 * caller needs first.
 */
#ifndef SOCKTAB_NET_H
#define SOCKTAB_NET_H

#include "socktab/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Register / unregister the calling thread with RCU (liburcu urcu-memb). Required before any other
 * call on that thread. Nesting is counted: only the outermost unregister takes effect.
 * A thread that ends while registered (it returns from its start routine or calls pthread_exit()
 * without the last unregister, online or inside read-side sections of its own included) is
 * unregistered at its exit by the library (a thread-specific key's destructor): its sections end
 * with it, and no later grace period waits for it or reads its freed memory. Without that,
 * liburcu would keep the dead thread on its list of readers and the next socktab_net_free()
 * would hang or crash. Unregistering before the exit stays the tidy way (it also runs before
 * the thread's other key destructors). socktab_thread_register() aborts with a message when the
 * key cannot be made (the process used up its pthread keys), rather than leave such a thread
 * unhandled.
 * Context: any thread, registered or not. A nested call only counts.
 */
void socktab_thread_register(void);
/*
 * The outermost call ends the thread's part in RCU; an online thread is taken offline first.
 * Context: registered thread, outside any RCU read-side section of its own.
 */
void socktab_thread_unregister(void);

/*
 * Online threads: the read side of a poll-mode core, which looks up every packet of every burst
 * and has natural points where it holds nothing it found (between bursts). socktab_thread_online()
 * opens one read-side section that lasts until socktab_thread_offline(); socktab_quiescent_state()
 * closes it and opens the next, and is the only place where a grace period can end for this
 * thread. The semantics are those of liburcu's QSBR flavour, built on the urcu-memb sections
 * every other thread uses, so both kinds of thread mix freely.
 *
 * While online, the thread is inside a read-side section for every rule of this API: it calls
 * the _rcu lookups (socktab/lookup.h) with no socktab_rcu_read_lock() around them, so a lookup
 * does no thread-local write at all, which on a core with many lookups in flight is worth about
 * a tenth of the lookup (docs/benchmarks.md). What it found stays valid until its next quiescent
 * state or offline. Every call allowed inside a section is allowed (docs/concurrency.md); the two
 * that wait for a grace period, socktab_net_free() and socktab_sk_lookup_detach(), pass a
 * quiescent state on the way instead of waiting for the thread itself.
 *
 * The price: no memory is reclaimed (in any thread) until every online thread has passed a
 * quiescent state, so a thread that stops announcing them holds back every close and every
 * expired TIME_WAIT entry, and socktab_net_free() waits for it. Go offline before blocking (a
 * poll loop that sleeps in epoll_wait, a thread about to be joined). A thread that exits online
 * is taken offline at its exit (socktab_thread_register() above).
 *
 * The thread's own section is socktab_thread_offline()'s to end, never socktab_rcu_read_unlock()'s:
 * sections the thread opens itself nest inside it, and an unlock with no section of the caller's
 * open (one more than its locks) prints "socktab: socktab_rcu_read_unlock without a matching
 * socktab_rcu_read_lock" on stderr and aborts, in every build, on any thread: it would leave the
 * thread's lookups unprotected, and the count liburcu keeps would wrap at the next offline, so
 * no grace period would ever end again.
 *
 * socktab_thread_online(): 0; -EPERM (thread not registered), -EALREADY (already online),
 * -EBUSY (inside a read-side section: it could never pass a quiescent state).
 * socktab_quiescent_state() and socktab_thread_offline() do nothing on a thread that is not
 * online; socktab_thread_unregister() takes the thread offline.
 * Context: registered thread, outside any RCU read-side section of its own. A section opened
 * with socktab_rcu_read_lock() on an online thread and still open across a quiescent state
 * keeps its results valid, as it should, but no grace period ends until it is closed.
 */
int socktab_thread_online(void);
void socktab_quiescent_state(void);
void socktab_thread_offline(void);

/*
 * Where memory is reclaimed. A closed socket or an expired TIME_WAIT entry goes back to its pool
 * after an RCU grace period, through liburcu's call_rcu worker thread, named "socktab-reclaim"
 * (ps -L, top -H) from its first callback on. By default liburcu makes that thread the first
 * time a thread frees something, and the worker inherits that thread's CPU affinity: a stack
 * whose poll thread is pinned to its core would have the worker there too.
 * socktab_rcu_reclaim_cpu() makes a worker pinned to @cpu (-1: not pinned) for the calling
 * thread, if registered, and for every thread registered after the call; threads registered
 * before it keep their worker until they call it too. Call it at start-up, before the threads
 * that free objects register. The worker only runs callbacks (a grace period's wait, then each
 * batch of 64 freed objects back to its pool); lookups never wait for it.
 * The worker is made from a thread placed on @cpu, so it runs there from its first callback.
 * Returns 0, -EINVAL (@cpu below -1, not a CPU of this machine, or one outside this process's
 * cpuset, which sched_setaffinity() refuses; a CPU only left out of the caller's own affinity
 * mask is accepted, since placing the worker elsewhere is the point) or -ENOMEM.
 * Context: any thread, registered or not. It waits for no grace period, but takes a
 * process-wide lock and makes and joins a thread: a start-up call, not one for a packet path.
 */
int socktab_rcu_reclaim_cpu(int cpu);

/* What reclamation did in this process (socktab_rcu_stats), since it started. */
struct socktab_rcu_stats {
	uint64_t callbacks_queued; /* callbacks handed to liburcu's call_rcu: a batch of up to 64
				    * freed sockets or entries of one pool, a batch of up to 32
				    * bind buckets, or one object of another kind */
	uint64_t callbacks_run;    /* of those, run by the reclamation worker, each after a grace
				    * period; queued - run is what waits now */
	uint64_t waits;            /* grace periods (and waits for the callbacks, at a net's free)
				    * that socktab's own calls waited for: socktab_net_free(),
				    * socktab_net_set_port_feed(), socktab_sk_lookup_detach() */
	uint64_t reserved[5];      /* zero */
};

/*
 * Read the process's reclamation counts into @st. The worker runs one grace period for all the
 * callbacks queued when it wakes, then sleeps 10 ms (liburcu's call_rcu thread), so a busy
 * process sees at most about 100 of its grace periods a second, each costing every CPU that runs
 * a registered thread one membarrier interrupt (docs/embedding.md, "DPDK"), or several when a
 * reader the worker waits for is preempted inside a read-side section: the wait then loops
 * through membarrier() and a futex (a worker that must take a CPU from a busy thread meets
 * that often: docs/benchmarks.md, "bench scale"). 0, or -EINVAL for a
 * NULL @st. The form new code should use for these counts.
 * Context: any thread, registered or not. It reads three counters.
 */
int socktab_rcu_stats(struct socktab_rcu_stats *st);

/*
 * connect() port-choice variants. LINUX is the kernel's algorithm since Linux 6.15 (a lockless
 * pre-check of each candidate 4-tuple before the locked check, and the local port added after
 * hashing so consecutive ports hit consecutive buckets); LINUX_6_1 is the same walk before those
 * two changes (locked check only, local port hashed inside the ehash hash). SOCKTAB, the default,
 * picks the same port as LINUX (except around TIME_WAIT entries, docs/design.md) through a
 * per-destination index of busy ports, so its cost does not grow with port occupancy.
 */
enum socktab_variant {
	SOCKTAB_VARIANT_SOCKTAB = 0,
	SOCKTAB_VARIANT_LINUX = 1,
	SOCKTAB_VARIANT_LINUX_6_1 = 2,
};

/* Clock: returns nanoseconds of a monotonic time line. */
typedef uint64_t (*socktab_clock_fn)(void *arg);

/*
 * Parameters of a network namespace. Always start from socktab_net_params_init(), then change
 * what you need: it sets @size, which tells socktab_net_new() which fields this caller knows
 * (later versions only append fields; those a caller does not know take their defaults).
 * Table sizes (ehash_entries, ehash_locks, bhash_entries, udp_hash_entries,
 * udp_hash4_entries) of 0 mean the default; other sizes are rounded up to a power of two, and
 * one above its maximum is -EINVAL.
 * An ehash_entries of 0 or the default (65536) grows with a reservation to the power of two at
 * or above its total of sockets and TIME_WAIT entries (at most 1 << 24); any other value is kept.
 *
 * The reservation (reserve_socks, reserve_tw, reserve_family) is for a poll loop that must not
 * stall: without one, each 2 MiB slab of a pool is allocated when its first object is needed
 * and its pages are faulted in as objects land on them (a socktab_sock_new_child() that opens a
 * slab takes 0.3-6 ms, docs/embedding.md). The reservation rounds up to whole slabs; objects
 * freed later are reused first, so it lasts while fewer than that many are live at once. It
 * covers the pools: a connect() to a port no socket holds yet still allocates the port's two
 * bind buckets (about 100 bytes each from malloc; children of a listener share theirs, and the
 * creating thread gets one spare pair), and connect()'s index of a busy destination's ports
 * (socktab variant) is allocated when it is built. With a reservation the bhash and bhash2
 * tables are faulted in too (ehash, lhash2 and the other tables are written whole at creation).
 * With share_tables_with the shared tables keep their size.
 *
 * Address space: every slab of the process (all nets) is carved from one range of address space
 * reserved when the first slab is made, inaccessible and uncommitted until a slab is handed out:
 * 128 GiB, or, under an address-space limit (RLIMIT_AS, `ulimit -v`, read at that moment), half
 * of the limit in whole slabs, at least 16 MiB, and less when the system refuses that much. So a
 * process under a limit of 512 MiB holds 128 slabs (256 MiB of sockets and entries) and keeps
 * the other half for its own memory; a socket, entry or reservation
 * beyond the range fails with ENOMEM. Raise the limit before the first socket, not after.
 */
struct socktab_net_params {
	size_t size;                 /* sizeof(struct socktab_net_params), set by _init() */
	uint32_t ehash_entries;      /* established table slots (default 65536, max 1<<24) */
	uint32_t ehash_locks;        /* striped ehash locks (default 1024, max 1<<24; more than
				      * ehash_entries are cut to ehash_entries), each over a run
				      * of consecutive slots */
	uint32_t bhash_entries;      /* bhash, bhash2 and lhash2 slots each (default 65536, max 65536) */
	uint16_t port_low;           /* ephemeral range, net.ipv4.ip_local_port_range (32768) */
	uint16_t port_high;          /* (60999) */
	uint16_t unprivileged_port_start; /* net.ipv4.ip_unprivileged_port_start (1024) */
	int tw_reuse;                /* net.ipv4.tcp_tw_reuse: 0, 1, 2 = loopback only (2) */
	uint32_t tw_reuse_delay_ms;  /* net.ipv4.tcp_tw_reuse_delay, 1..60000 (1000) */
	uint32_t tw_len_ms;          /* TIME_WAIT length (60000) */
	int tcp_timestamps;          /* TIME_WAIT entries remember a peer timestamp (1) */
	int autobind_reuse;          /* net.ipv4.ip_autobind_reuse (0) */
	int privileged;              /* callers hold CAP_NET_BIND_SERVICE (1) */
	enum socktab_variant variant; /* connect() port choice (SOCKTAB) */
	int rcu_precheck;            /* -1: from variant; 0/1: force connect()'s lockless pre-check */
	int lport_hash_inside;       /* -1: from variant; 0/1: force lport inside the ehash hash */
	int fixed_secret;            /* 1: use .secret instead of random secrets (tests) */
	uint8_t secret[32];          /* hash secrets when fixed_secret is set */
	socktab_clock_fn clock;      /* NULL: CLOCK_MONOTONIC */
	void *clock_arg;
	size_t sock_priv_size;       /* bytes of caller data per socket (socktab_sock_priv()) */
	struct socktab_net *share_tables_with; /* NULL: private tables; else share that net's */
	uint32_t udp_hash_entries;   /* UDP hash and hash2 slots each, and hash4's unless
				      * udp_hash4_entries is set (default 16384, max 65536, at
				      * least 128); the UDP table is always private to the net */
	int udp_hash4;               /* UDP lookups use the 4-tuple hash (1); see
				      * socktab_net_set_udp_hash4() */
	int net_raw;                 /* callers hold CAP_NET_RAW (1): IP_TRANSPARENT, rebinding a
				      * device-bound socket */
	size_t tw_priv_size;         /* bytes of a socket's caller data that close() carries into
				      * its TIME_WAIT entry (socktab_tw_priv()); at most
				      * SOCKTAB_TW_PRIV_MAX and sock_priv_size (0) */
	/* The reservation: memory for this many TCP sockets and TIME_WAIT entries is allocated and
	 * faulted in by socktab_net_new(), so that until it is used up no socket made by
	 * socktab_socket() or socktab_sock_new_child() and no TIME_WAIT entry made by close()
	 * allocates memory or page-faults on it (below). Each at most 1 << 24. */
	uint32_t reserve_socks;      /* TCP sockets, per reserved family (0) */
	uint32_t reserve_tw;         /* TIME_WAIT entries, per reserved family (0) */
	int reserve_family;          /* AF_INET or AF_INET6: that family's sockets and entries;
				      * AF_UNSPEC: both families get the counts (AF_UNSPEC) */
	size_t req_priv_size;        /* bytes of caller data per request entry
				      * (socktab_req_priv()), copied to the start of the child's
				      * area when it completes; at most SOCKTAB_REQ_PRIV_MAX and
				      * sock_priv_size (0) */
	uint32_t udp_hash4_entries;  /* UDP hash4 slots (0: udp_hash_entries, as the kernel's
				      * hash4 has; else at least 128, max 1<<24, rounded up to a
				      * power of two): more than the kernel's 65536 keep connected
				      * UDP lookups short past 100,000 connected sockets. Only
				      * speed depends on it, and whether a stale hash4 entry
				      * (R74) shares a chain with its socket's new 4-tuple */
};

/* The largest tw_priv_size: room for what TIME_WAIT processing needs (snd_nxt, rcv_nxt,
 * ts_recent, a timestamp offset), in an entry of 128 bytes. */
#define SOCKTAB_TW_PRIV_MAX 16

/* The largest req_priv_size: room for a handshake's state (both ISNs, the peer's MSS, window
 * scale and options, a timestamp) in an entry of 128 bytes. */
#define SOCKTAB_REQ_PRIV_MAX 20

/*
 * Fill @p with the defaults listed above (and @p->size). A NULL @p is ignored.
 * Context: any thread, registered or not.
 */
void socktab_net_params_init(struct socktab_net_params *p);

/*
 * Create a network namespace from @p (NULL: defaults). Returns NULL and sets errno: EINVAL for a
 * bad parameter (a table size above its maximum included) or a @size that is not one socktab
 * knows, ENOMEM. A @size larger than this version's struct is read up to @size (the fields a
 * later version added must be zero), so it must be the caller's true struct size: one above
 * 4096 bytes, or not a multiple of the struct's alignment, is no version's and is refused
 * (EINVAL) before anything past this version's struct is read. The hash secrets and the netns hash mix are random unless fixed_secret. With
 * share_tables_with, the new net uses that net's TCP tables (the namespace is part of every key,
 * as in the kernel's shared tables) and keeps its own settings and socket pool.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It allocates (and faults in a reservation) but waits for no grace period.
 */
struct socktab_net *socktab_net_new(const struct socktab_net_params *p);

/*
 * Close every socket of @net, drop every TIME_WAIT entry, wait for a grace period and free the
 * net (and its tables when no other net shares them). No other thread may use @net or its sockets
 * during or after the call. A NULL @net is ignored. Called inside an RCU read-side section it
 * would wait for that section forever: it prints "socktab: socktab_net_free inside an RCU
 * read-side section" on stderr and aborts instead (every build).
 * Context: registered thread, outside any RCU read-side section of its own; waits for a grace
 * period. It also waits for the reclaim callbacks (rcu_barrier); an online thread passes a
 * quiescent state for the waits.
 */
void socktab_net_free(struct socktab_net *net);

/*
 * Expire the TIME_WAIT entries whose time is up on the net's clock, all of them, and return how
 * many were removed. Its time grows with their number (100k entries: 25-35 ms on the machine of
 * docs/embedding.md); a poll loop that must not stall calls socktab_net_tick_budget() instead.
 * Expiry needs no thread of its own: connect(), bind(), listen() and close() also reap a few
 * lazily. Returns -EINVAL for a NULL @net.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the TIME_WAIT list lock once per 256 entries, and each entry's bhash and
 * ehash bucket locks.
 */
int socktab_net_tick(struct socktab_net *net);

/*
 * Expire at most @max_entries of the TIME_WAIT entries whose time is up on the net's clock, the
 * oldest first, and return how many were removed (0..max_entries). *@next_due_ns gets the time
 * (on the net's clock) at which the oldest entry left expires, or UINT64_MAX when none is left:
 * at or before the clock's present time, the budget ran out with entries still due and the caller
 * should call again soon; after it, nothing is due until then. Entries are never removed early,
 * and an entry made or re-armed after the call (close(), socktab_tw_fin(), socktab_tw_rearm())
 * expires tw_len_ms later, so a loop that sleeps until the earlier of *@next_due_ns and now +
 * tw_len_ms misses no expiry.
 *
 * Bounded work: entries are the only thing a tick expires (there are no other timers), and the
 * call's work is linear in @max_entries, not in the number of entries held: one hold of the
 * TIME_WAIT list lock for at most @max_entries unlinks, then per entry its bhash and ehash bucket
 * locks and its unhash; the dead entries go back to their pool 64 at a time (one hold of the pool
 * lock each, a lock the call_rcu thread never takes); at most 2 * @max_entries + @max_entries /
 * 64 + 1 call_rcu() submissions (emptied bind buckets and port indexes, batches of dead entries)
 * and no allocation. Worst case: @max_entries times the cost of one entry (0.3-0.6 us with the
 * entries cold in cache on the machine of docs/embedding.md: a budget of 64 took at most 33 us
 * there), plus any wait for those locks while other threads hold them.
 *
 * Errors: -EINVAL for a NULL @net or @next_due_ns, or a @max_entries of 0 or above INT_MAX; then
 * nothing changes.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the TIME_WAIT list lock once, and each expired entry's bhash and ehash
 * bucket locks and its pool's lock.
 */
int socktab_net_tick_budget(struct socktab_net *net, unsigned int max_entries,
			    uint64_t *next_due_ns);

/*
 * Namespace settings that may change at run time, with the kernel's validation (-EINVAL).
 * set_port_range: net.ipv4.ip_local_port_range (1 <= lo <= hi <= 65535, lo >= unprivileged start).
 * set_reserved: mark [lo, hi] as reserved (on != 0) or not, like ip_local_reserved_ports.
 * set_tw_reuse: 0, 1 or 2.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. set_port_range takes the net's settings lock; the others take no lock.
 */
int socktab_net_set_port_range(struct socktab_net *net, int lo, int hi);
int socktab_net_get_port_range(struct socktab_net *net, int *lo, int *hi);
int socktab_net_set_reserved(struct socktab_net *net, int lo, int hi, int on);
int socktab_net_set_tw_reuse(struct socktab_net *net, int mode);

/* The calling thread's lock counts (socktab_thread_counters). */
struct socktab_thread_counters {
	uint64_t locks;           /* lock acquisitions since the thread's first call */
	uint64_t locks_contended; /* of those, the ones that found the lock taken */
	uint64_t reserved[6];     /* zero */
};

/*
 * Read the calling thread's lock counts into @c: what scaling costs per operation (`socktab
 * bench scale`). Only a library built with -Dcontention_counters=true counts (each
 * acquisition then costs a trylock first); otherwise -ENOTSUP and @c is left alone. -EINVAL for
 * a NULL @c.
 * Context: any thread, registered or not. It reads the calling thread's own counts.
 */
int socktab_thread_counters(struct socktab_thread_counters *c);

/* The calling thread's counts of what makes work scale or not (socktab_thread_counts). */
struct socktab_thread_counts {
	uint64_t locks;           /* lock acquisitions since the thread's first call */
	uint64_t locks_contended; /* of those, the ones that found the lock taken */
	uint64_t atomic_rmw;      /* atomic read-modify-writes (exchange, compare-and-swap, fetch-op) */
	uint64_t atomic_stores;   /* stores to atomic objects: memory another thread reads */
	uint64_t lines_taken;     /* of the writes above and the acquisitions, an estimate of those
				   * to a cache line another thread wrote last (a transfer between
				   * cores when the threads run on two): lines share the record's
				   * cells by a hash, plain stores under a lock are not seen, and
				   * neither are liburcu's writes */
	uint64_t reserved[3];     /* zero */
};

/*
 * Read the calling thread's counts into @c: what a call costs in locks, atomic
 * read-modify-writes and stores to memory other threads read (`socktab bench scale` divides them
 * by the operations). The form new code should use; socktab_thread_counters() gives the lock
 * counts alone. Counts the library's own code (liburcu's is not counted). Only a library built
 * with -Dcontention_counters=true counts (each lock then costs a trylock first and each counted
 * operation a thread-local add, and a look and at times a write to a process-wide table of each
 * line's last writer for lines_taken); otherwise -ENOTSUP and @c is left alone. In such a build,
 * the environment variable SOCKTAB_LINE_REPORT=FILE at start has the process write to FILE, when
 * it exits normally, each counting site's lines taken and writes ("taken writes file:line", a
 * line per site; a site in an inline helper of src/ counts once per file that uses it).
 * -EINVAL for a NULL @c.
 * Context: any thread, registered or not. It reads the calling thread's own counts.
 */
int socktab_thread_counts(struct socktab_thread_counts *c);

/*
 * Kernel variants: rules on which builds of the same Linux release differ, with no sysctl to
 * show which kind a kernel is (docs/rules.md, "Kernel variants", names each with the kernels seen
 * on either side). A net holds one setting per variant; `socktab replay` probes the live
 * kernel for each and gives its socktab backend the same. The name of each is the word `.sock`
 * scripts use after `case NAME when`.
 *
 * SOCKTAB_KV_ROLE_LOCK ("role_lock", R104; a new net: on, as 6.18.44 builds v1045 and
 *   v1272): a TCP socket keeps the first role it took. Once it has listened, a later connect()
 *   fails with -EINVAL; once it has sent a SYN (connect() got as far as choosing its port,
 *   whatever the answer) or was made by a listener, a later listen() fails with -EINVAL,
 *   connect(AF_UNSPEC) in between or not. Off: a disconnected socket takes either role again.
 * SOCKTAB_KV_UDP_BIND_ALL_OWNERS ("udp_bind_all_owners", R103; a new net: off, as upstream
 *   Linux and builds v857 and v1045): an explicit-port UDP bind fails with -EADDRINUSE when any
 *   overlapping owner of the port does not excuse it. Off: the first overlapping owner met in the
 *   port's chain decides.
 * SOCKTAB_KV_UDP_BIND_MATE_STOPS ("udp_bind_mate_stops", R103; a new net: on, as 6.18.44 build
 *   v1300): with udp_bind_all_owners on, the scan still ends, the bind allowed, at an owner that
 *   excuses it and whose reuseport group the new socket would join (same family, IPV6_V6ONLY,
 *   bound device and address; SO_REUSEPORT on both, same owner uid), neither of the two with
 *   SO_REUSEADDR: owners met after it are not looked at. Off: every overlapping owner must
 *   excuse the bind. No effect while udp_bind_all_owners is off (upstream stops at the first
 *   overlapping owner anyway).
 * SOCKTAB_KV_CBPF_LISTENED ("cbpf_listened", R108; a new net: off, as upstream Linux):
 *   SO_ATTACH_REUSEPORT_CBPF fails with -EINVAL on a TCP socket that has listened and is in no
 *   table now (disconnected). Off: such a socket with SO_REUSEPORT gets a group of its own.
 */
enum socktab_kernel_variant {
	SOCKTAB_KV_ROLE_LOCK = 0,
	SOCKTAB_KV_UDP_BIND_ALL_OWNERS = 1,
	SOCKTAB_KV_CBPF_LISTENED = 2,
	SOCKTAB_KV_UDP_BIND_MATE_STOPS = 3,
};
/* The number of variants this version knows: every value below it is one. */
#define SOCKTAB_KV_COUNT 4

/*
 * Set variant @variant of @net on (@on = 1) or off (0). Applies to calls made after it; sockets
 * keep what they are. -EINVAL for a NULL @net, an unknown @variant or @on other than 0 or 1.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes no lock.
 */
int socktab_net_set_kernel_variant(struct socktab_net *net, int variant, int on);

/*
 * The setting of variant @variant of @net: 1 or 0; -EINVAL for a NULL @net or an unknown
 * @variant.
 * Context: any thread, registered or not.
 */
int socktab_net_get_kernel_variant(const struct socktab_net *net, int variant);

/*
 * The name of @variant ("role_lock", ...), or NULL when it is unknown.
 * Context: any thread, registered or not.
 */
const char *socktab_kernel_variant_name(int variant);

/*
 * The variant called @name, or -EINVAL when no variant has that name (or @name is NULL).
 * Context: any thread, registered or not.
 */
int socktab_kernel_variant_by_name(const char *name);

/*
 * socktab_net_set_kernel_variant(@net, SOCKTAB_KV_ROLE_LOCK, @on): whether a TCP socket keeps the
 * first role it took (see above). -EINVAL for a NULL @net or @on other than 0 or 1.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes no lock.
 */
int socktab_net_set_tcp_role_lock(struct socktab_net *net, int on);

/*
 * Write a per-net sysctl by its kernel name, value as text (as `sysctl -w` takes it), with the
 * kernel's validation (-EINVAL). Numbers are read as proc_dointvec() reads them: white space
 * before each (the kernel's isspace(), 0xa0 too) and only a space, tab or newline after one,
 * decimal, 0x hex or 0 octal, a '-' only where the kernel's value is signed; values past the
 * key's count are ignored (the kernel's short write). Keys: net.ipv4.ip_local_port_range
 * ("LO HI", each 1..65535, HI >= LO, LO not below ip_unprivileged_port_start; "LO" alone keeps HI),
 * net.ipv4.ip_local_reserved_ports ("" clears; else "P1,P2-P3,..." with the rules of the kernel's
 * proc_do_large_bitmap(): ports and ranges A-B, A <= B <= 65535, in decimal, 0x hex or 0 octal,
 * separated by ',' or newlines, no blanks; all or nothing; linear in the text's length),
 * net.ipv4.ip_autobind_reuse (0/1),
 * net.ipv4.ip_unprivileged_port_start (0..65535, not above the range's low end),
 * net.ipv4.tcp_tw_reuse (0..2), net.ipv4.tcp_tw_reuse_delay (1..60000 ms), net.core.somaxconn
 * (0..INT_MAX), net.ipv4.ip_nonlocal_bind and net.ipv6.ip_nonlocal_bind (0..255, R87),
 * net.ipv4.tcp_l3mdev_accept and net.ipv4.udp_l3mdev_accept (0/1, R98, R99), net.ipv4.tcp_rfc1337
 * (0..255, R100), net.ipv4.tcp_syncookies (0..255: 0 off, 2 always, any other value on when the
 * SYN queue is full; default 1) and net.ipv4.tcp_max_syn_backlog (any int, default the larger of
 * 128 and ehash slots / 128) for socktab_syn_decide() (R112-R116), net.ipv4.tcp_migrate_req (0/1,
 * default 0, R120-R124), and net.ipv4.tcp_fastopen (any int, accepted, no effect on the tables).
 * Unknown key: -ENOENT.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. The port range and ip_unprivileged_port_start keys take the net's settings lock.
 */
int socktab_net_sysctl(struct socktab_net *net, const char *key, const char *value);

/*
 * RSS-aware port choice (opt-in). socktab_net_set_rss() gives the net the Toeplitz key (at least
 * 40 bytes; the first 40 are used) and the RETA (reta_len entries, a power of two, each a queue
 * number) of the NIC that receives its traffic; NULL/0/NULL/0 turns it off. A socket that called
 * socktab_sock_set_rss_queue(sk, q) before connect() then gets a local port whose reply 4-tuple
 * (source = the peer, destination = us) hashes to queue q: RETA[toeplitz & (reta_len - 1)] == q.
 * All other port rules hold; -EADDRNOTAVAIL when no usable port maps to q (or no RSS is set).
 * q = -1 (default) asks for nothing. The NIC must hash TCP's (and UDP's) addresses and ports,
 * not the addresses alone (in DPDK terms RTE_ETH_RSS_NONFRAG_IPV4_TCP / _IPV6_TCP, or the UDP
 * ones), or every port of a destination lands on one queue and the choice means nothing. The
 * hash is DPDK's rte_softrss() with the key as rte_eth_dev_rss_hash_conf_get() reports it
 * (tests/unit/test_rss_dpdk.c checks it, IPv4 and IPv6); the RETA is the port's, one queue per
 * entry: rte_eth_dev_rss_reta_query()'s groups of 64 (struct rte_eth_rss_reta_entry64) laid end
 * to end, reta[i] = conf[i / 64].reta[i % 64].
 * set_rss returns 0, -EINVAL (NULL @net; with a key: @key_len below 40, or @reta NULL, empty,
 * longer than 65536 entries or not a power of two; without one: any other argument nonzero) or
 * -ENOMEM; set_rss_queue returns 0, -EINVAL
 * (NULL @sk, @queue below -1 or above 65535) or -EBADF (a closed socket, a TIME_WAIT or request
 * entry).
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. set_rss frees the old state after a grace period without waiting for it;
 * set_rss_queue takes the socket lock.
 */
int socktab_net_set_rss(struct socktab_net *net, const uint8_t *key, size_t key_len,
			const uint16_t *reta, uint32_t reta_len);
int socktab_sock_set_rss_queue(struct socktab_sock *sk, int queue);

/*
 * The queue the net's RSS state gives a packet from (@saddr, @sport) to (@daddr, @dport) (the
 * peer's side first, as it arrives; addresses and ports in network order; @saddr and @daddr
 * point to a uint32_t for AF_INET or a struct in6_addr for AF_INET6, a v4-mapped pair hashed as
 * IPv4): RETA[toeplitz & (reta_len - 1)], the queue a NIC with that key and RETA delivers it on.
 * For a stack on a device without RSS (virtual ones report none) that spreads packets over its
 * threads in software and must hand one to the thread whose queue owns it. Returns the queue,
 * -ENOENT (no RSS state: socktab_net_set_rss() was not called, or turned it off) or -EINVAL.
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * It enters a read-side section of its own and takes no lock.
 */
int socktab_net_rss_queue(struct socktab_net *net, int family, const void *saddr,
			  uint16_t sport, const void *daddr, uint16_t dport);
/*
 * The plain Toeplitz hash of @len input bytes (Microsoft RSS: source address, destination
 * address, source port, destination port, all in network order) with @key; it needs
 * key_len >= len + 4, and returns 0 without it or for a NULL @key or @input.
 * Context: any thread, registered or not.
 */
uint32_t socktab_rss_hash(const uint8_t *key, size_t key_len, const void *input, size_t len);

/* Counters of RSS-aware connect(), read without locks (values may be a moment old). */
struct socktab_rss_stats {
	uint64_t connect_rss_rejected; /* candidate ports connect() tested against the wanted queue
					* and passed over (their reply lands on another queue);
					* free ports only: busy and reserved ones are skipped first */
	uint64_t queues;           /* distinct queues of the current RETA (0: RSS off) */
	uint64_t state_bytes;      /* bytes of the current RSS state (key, RETA, hash tables) */
	uint64_t index_bytes;      /* bytes of the per-queue summaries of free ports, all hot
				    * destinations of the net together (retired ones until freed) */
	uint64_t indexes;          /* destinations with per-queue summaries (the same) */
	uint64_t reserved[3];
};

/*
 * Read @net's RSS counters into @st (reserved words zeroed). Returns 0, or -EINVAL for a NULL
 * @net or @st (nothing written).
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * It enters a read-side section of its own (nested when the caller is in one) and takes no lock.
 */
int socktab_net_rss_stats(struct socktab_net *net, struct socktab_rss_stats *st);

/* Counters of a net, read without locks (values may be a moment old). Later versions fill the
 * reserved words with new counters; callers must not read them. */
struct socktab_net_stats {
	uint64_t established;      /* sockets in ehash that are not TIME_WAIT */
	uint64_t time_wait;        /* TIME_WAIT entries */
	uint64_t bind_buckets;     /* bhash buckets (ports in use) */
	uint64_t tw_recycled;      /* TIME_WAIT entries taken over by a new connection (connect(),
				    * or a listener's child or request entry) */
	uint64_t connect_ports_tried; /* candidate ports examined by connect() port choice */
	uint64_t connects;         /* successful TCP connect() calls */
	uint64_t pool_socks;       /* objects allocated in the net's pools: sockets, TIME_WAIT
				    * and request entries (live + free) */
	uint64_t pool_slabs;       /* 2 MiB slabs the net's pools hold (a reservation's included);
				    * one more than at socktab_net_new() means a socket or entry
				    * allocated a slab */
	uint64_t ehash_slots;      /* slots of the established table (shared tables: theirs) */
	uint64_t connect_rss_rejected; /* free candidates RSS-aware connect() passed over (also in
					* socktab_net_rss_stats()) */
	uint64_t requests;         /* request entries (TCP_NEW_SYN_RECV) in ehash */
	uint64_t tw_overflow;      /* active closes (socktab_close(), socktab_set_state() to
				    * TIME_WAIT) that left no TIME_WAIT entry because none could
				    * be allocated: the connection ended at once, its 4-tuple and
				    * port free (the kernel counts its tcp_max_tw_buckets overflow
				    * as TCPTimeWaitOverflow) */
	uint64_t reserved[4];
};

/*
 * Read @net's counters into @st (reserved words zeroed). Returns 0, or -EINVAL for a NULL @net
 * or @st.
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * It takes no lock.
 */
int socktab_net_stats(struct socktab_net *net, struct socktab_net_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* SOCKTAB_NET_H */
