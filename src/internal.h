/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Internal structures of socktab.
 *
 * Lock legend, written beside each shared field:
 *   (c)  constant after creation (for a socket: after socktab_socket() hands it out)
 *   (s)  written under the socket's own lock
 *   (b)  written under the bhash (port) bucket lock of the socket's port
 *   (b2) written under the bhash2 (port, address) bucket lock
 *   (e)  written under the ehash bucket lock
 *   (t)  written under the net's TIME_WAIT list lock
 *   (p)  written under the pool lock
 *   (r)  read locklessly under RCU: written with atomic stores and read with atomic loads
 *   (a)  atomic, no lock
 * Lock order: socket lock -> bhash -> bhash2 -> ehash; the TIME_WAIT list lock and the pool lock
 * are leaves (nothing else is taken while holding them).
 */
#ifndef SOCKTAB_INTERNAL_H
#define SOCKTAB_INTERNAL_H

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nulls.h"
#include "rcu.h"
#include "socktab/socktab.h"

#define SOCKTAB__CACHELINE 64
#define SOCKTAB__PERTURB_SIZE (1u << 16) /* RFC 6056 alg. 4 table (kernel: table_perturb) */
#define SOCKTAB__FREE 0                  /* state of a socket that sits in the pool */
#define SOCKTAB__PM_SKETCH 4096         /* portmap.c: cells per count-min sketch row */
#define SOCKTAB__PM_BUCKETS 64          /* portmap.c: index hash buckets per net */

/* sk->userlocks bits (kernel names). */
#define SOCKTAB__BINDADDR_LOCK 0x4
#define SOCKTAB__BINDPORT_LOCK 0x8
#define SOCKTAB__CONNECT_BIND 0x80

/* tb2 address types (kernel: ipv6_addr_type subset). */
enum { SOCKTAB__ADDR_ANY = 0, SOCKTAB__ADDR_MAPPED = 1, SOCKTAB__ADDR_V6 = 2 };

#define SOCKTAB__FASTREUSEPORT_ANY 1
#define SOCKTAB__FASTREUSEPORT_STRICT 2

/* Relaxed atomic accessors for (r) fields; ordering comes from the list's acquire/release. */
#define RD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define WR(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

#ifdef NDEBUG
#define SOCKTAB__ASSERT(c) ((void)0)
#else
#include <assert.h>
#define SOCKTAB__ASSERT(c) assert(c)
#endif

struct socktab__tb2;

struct socktab_sock {
	/* Cache line 0: everything the established lookup reads (spec R77). */
	struct socktab__hnode node;        /* (e) ehash chain link */
	_Atomic uint32_t hash;             /* (r,e) ehash hash; set before the node is published */
	_Atomic uint32_t refcnt;           /* (a) 0 while in the pool */
	_Atomic uint64_t addrpair;         /* (r,s) remote v4 | local v4 << 32 (v4 alias of v6) */
	_Atomic uint32_t portpair;         /* (r,s) remote port (be) | local port (host) << 16 */
	_Atomic uint8_t state;             /* (r,s) SOCKTAB_TCP_*, SOCKTAB__FREE in the pool */
	_Atomic uint8_t v4key;             /* (r,s) 1: keyed by IPv4 (AF_INET, or v4-mapped peer) */
	_Atomic uint8_t family;            /* (r,c) AF_INET / AF_INET6 */
	uint8_t proto;                     /* (c) SOCKTAB_TCP */
	_Atomic uint32_t bound_dev_if;     /* (r,s) 0 = any device */
	_Atomic(struct socktab_net *) net; /* (r,c) */
	/* Cache line 1: IPv6 key (compared only for IPv6 lookups). */
	_Atomic uint64_t v6_daddr[2];      /* (r,s) remote address (v4-mapped for AF_INET) */
	_Atomic uint64_t v6_saddr[2];      /* (r,s) local address (v4-mapped for AF_INET) */

	/* Control state, never read by lookups. */
	pthread_mutex_t lock;              /* serialises control calls on this socket */
	_Atomic uint8_t reuse;             /* (s) SO_REUSEADDR; read by other binders under (b) */
	_Atomic uint8_t reuseport;         /* (s) SO_REUSEPORT */
	uint8_t v6only;                    /* (s,b) IPV6_V6ONLY (changes only while portless) */
	uint8_t bind_address_no_port;      /* (s) IP_BIND_ADDRESS_NO_PORT */
	uint8_t userlocks;                 /* (s) SOCKTAB__*_LOCK, CONNECT_BIND */
	uint8_t linger_on;                 /* (s) SO_LINGER */
	uint8_t tw_ts;                     /* (c) TIME_WAIT entry recorded a peer timestamp */
	uint8_t on_twlist;                 /* (t) TIME_WAIT entry still on the net's list */
	uint8_t in_pool;                   /* (p) on the pool's free list */
	uint8_t rcu_free;                  /* (s) was a listener: back to the pool after a grace period */
	int rss_queue;                     /* (s) RSS queue wanted for replies, -1: any (rss.c) */
	uint8_t sock_connected;            /* (s) socket-level SS_CONNECTED: set once established,
					    * cleared only by connect(AF_UNSPEC); connect() then says EISCONN */
	uint16_t sport;                    /* (s) port getsockname reports (kernel inet_sport): kept
					    * after the port is given back by a reset or disconnect */
	struct rcu_head rcu;               /* for that deferred free */
	int linger_secs;                   /* (s) */
	uint32_t local_port_range;         /* (s) IP_LOCAL_PORT_RANGE, hi << 16 | lo */
	uid_t uid;                         /* (s) owner uid (SO_REUSEPORT same-owner rule) */
	struct socktab__tb2 *tb2;          /* (b) bind bucket this socket owns a port through */
	struct socktab_sock *bind_next;    /* (b) next owner of tb2 */
	struct socktab_sock **bind_pprev;  /* (b) */
	struct socktab__reuseport *_Atomic reuseport_cb; /* (r, reuseport lock) listener group */
	int backlog;                       /* (s) listen() backlog after clamping */
	uint64_t tw_expire_ns;             /* (c) TIME_WAIT: expiry time on the net clock */
	uint64_t tw_entry_ns;              /* (c) TIME_WAIT: creation time (tw_reuse_delay) */
	struct socktab_sock *tw_next;      /* (t) TIME_WAIT list */
	struct socktab_sock *tw_prev;      /* (t) */
	struct socktab_sock *pool_next;    /* (p) free list link (never the ehash link) */
	struct socktab_sock *all_next;     /* (p) every socket object of the pool */
	/* ---- UDP (src/udp.c, issue 4). A UDP socket uses `node` above for its hash2 chain (it is
	 * never in ehash or lhash2). (u) = written under the primary slot lock of its port. ---- */
	struct socktab__hnode udp_node1;   /* (r,u) primary (port) chain */
	struct socktab__hnode udp_node4;   /* (r,u) hash4 (4-tuple) chain, nulls protocol */
	_Atomic uint32_t udp_hash4;        /* (r,u) R9 hash of the 4-tuple while in hash4 */
	uint32_t udp_slot2;                /* (u) hash2 slot while hashed */
	_Atomic uint8_t udp_v6only;        /* (r,u) v6only as lookups see it (set before hashing) */
	_Atomic uint8_t udp_rp_conns;      /* (r, reuseport lock) R36: the group had a connect() */
	uint8_t udp_broadcast;             /* (s) SO_BROADCAST */
	uint8_t udp_hashed4;               /* (u) in hash4 */
	/* Caller data follows, aligned to 16 bytes. */
	_Alignas(16) unsigned char priv[];
};

/* bhash entry: one per (net, port) in use (kernel inet_bind_bucket, spec R14). */
struct socktab__tb {
	_Atomic(struct socktab__tb *) next; /* (r,b) bhash chain, walked under RCU by connect() */
	struct socktab_net *net;           /* (c) */
	uint16_t port;                     /* (c) */
	_Atomic int8_t fastreuse;          /* (r,b) -1: connect() only; 0; 1 */
	_Atomic int8_t fastreuseport;      /* (r,b) -1; 0; ANY; STRICT */
	uint8_t fast_ipv6_only;            /* (b) recorded by the reuseport fast path (R44) */
	uint8_t fast_family;               /* (b) */
	uid_t fastuid;                     /* (b) */
	uint32_t fast_rcv_saddr;           /* (b) */
	struct in6_addr fast_v6_rcv_saddr; /* (b) */
	struct socktab__tb2 *tb2_list;     /* (b) address buckets of this port */
	struct rcu_head rcu;               /* freed after a grace period (R14) */
};

/* bhash2 entry: one per (net, port, local address) in use (kernel inet_bind2_bucket). */
struct socktab__tb2 {
	struct socktab__tb2 *next;         /* (b2) bhash2 chain */
	struct socktab__tb2 *tb_next;      /* (b) in tb->tb2_list */
	struct socktab__tb *tb;            /* (c) */
	struct socktab_net *net;           /* (c) */
	uint16_t port;                     /* (c) */
	uint8_t addr_type;                 /* (c) SOCKTAB__ADDR_* */
	int8_t fastreuse;                  /* (b) mirrors tb */
	int8_t fastreuseport;              /* (b) */
	uint32_t v4;                       /* (c) IPv4 address of a MAPPED bucket */
	struct in6_addr addr;              /* (c) address (v4-mapped for MAPPED) */
	struct socktab_sock *owners;       /* (b) sockets and TIME_WAIT entries */
};

struct socktab__bhead {
	pthread_mutex_t lock;
	_Atomic(struct socktab__tb *) chain; /* (r,b) */
};

struct socktab__bhead2 {
	pthread_mutex_t lock;
	struct socktab__tb2 *chain;        /* (b2) */
};

/* ---- UDP table (src/udp.c, issue 4; spec R16): hash by port, hash2 by (address, port) with
 * hash4_cnt in its slot, hash4 by 4-tuple; one allocation, mask + 1 slots each. ---- */
struct socktab__uslot {
	struct socktab__hhead head;        /* (r, lock) */
	_Atomic uint32_t count;            /* (r, lock) */
	pthread_mutex_t lock;
};

struct socktab__uslot2 {
	/* One line per slot (R79): a lookup reads head and hash4_cnt with one miss, in every slot. */
	_Alignas(SOCKTAB__CACHELINE) struct socktab__hhead head; /* (r, lock) */
	_Atomic uint32_t count;            /* (r, lock) */
	_Atomic uint32_t hash4_cnt;        /* (r, lock) members also in hash4: same line as head */
	pthread_mutex_t lock;
};

struct socktab__udp_table {
	uint32_t mask;                     /* (c) */
	uint32_t log;                      /* (c) log2(mask + 1) */
	uint32_t ehash_secret;             /* (c) R9 udp_ehash_secret */
	uint32_t ehash6_secret;            /* (c) R9 udp6_ehash_secret */
	uint32_t ipv6_hash_secret;         /* (c) R9 udp_ipv6_hash_secret */
	_Atomic uint8_t hash4_on;          /* (a) lookups consult hash4 (benchmark switch) */
	struct socktab__uslot *hash;       /* (c) by port */
	struct socktab__uslot2 *hash2;     /* (c) by (address, port) */
	struct socktab__uslot *hash4;      /* (c) by 4-tuple */
};
#define SOCKTAB__UDP1_NULLS_BASE (3u << 29) /* nulls values: never an ehash or lhash2 slot's */
#define SOCKTAB__UDP2_NULLS_BASE (2u << 29)

/* SO_REUSEPORT group (kernel struct sock_reuseport, R34-R35); replaced, not resized, when full. */
struct socktab__reuseport {
	_Atomic uint32_t num;              /* (r, reuseport lock) members in socks[] */
	uint32_t cap;                      /* (c) */
	struct rcu_head rcu;               /* freed after a grace period */
	struct socktab_sock *_Atomic socks[]; /* (r, reuseport lock) */
};

/* lhash2 slot: listeners by (address, port) (R29); chain ends in nulls i + LISTENING_NULLS_BASE. */
struct socktab__lhead {
	pthread_mutex_t lock;
	struct socktab__hhead head;        /* (r, lock) */
};
#define SOCKTAB__LISTENING_NULLS_BASE (1u << 29)

struct socktab__ehash_lock {
	_Alignas(SOCKTAB__CACHELINE) pthread_mutex_t m;
};

/* Hash tables; private to one net or shared by several (spec R11, R13, seed 001). */
struct socktab__tables {
	_Atomic int refs;                  /* (a) nets using these tables */
	uint32_t ehash_mask;               /* (c) */
	uint32_t ehash_locks_mask;         /* (c) */
	uint32_t bhash_mask;               /* (c) */
	struct socktab__hhead *ehash;      /* (c) one word per slot, nulls value = slot */
	struct socktab__ehash_lock *ehash_locks; /* (c) striped: slot & ehash_locks_mask */
	struct socktab__bhead *bhash;      /* (c) */
	struct socktab__bhead2 *bhash2;    /* (c) */
	uint32_t lhash2_mask;              /* (c) */
	struct socktab__lhead *lhash2;     /* (c) */
};

struct socktab__pool {
	pthread_mutex_t lock;
	size_t obj_size;                   /* (c) */
	size_t priv_size;                  /* (c) caller bytes per socket */
	struct socktab_sock *free;         /* (p) */
	struct socktab_sock *all;          /* (p) */
	void **slabs;                      /* (p) */
	size_t nslabs, slab_cap;           /* (p) */
	_Atomic uint64_t nobjs;            /* (a) */
};

struct socktab_net {
	/* Read by every lookup: keep together. */
	struct socktab__tables *tab;       /* (c) */
	uint32_t hash_mix;                 /* (c) netns mix (R1) */
	uint32_t ehash_secret;             /* (c) R3 */
	uint32_t ehash6_secret;            /* (c) R4 */
	uint32_t ipv6_hash_secret;         /* (c) R4 */
	uint8_t lport_inside;              /* (c) variant: lport hashed inside (pre-6.15) */
	uint8_t rcu_precheck;              /* (c) variant: RCU pre-check of 4-tuples (seed 000) */
	uint8_t tcp_timestamps;            /* (c) */
	uint8_t privileged;                /* (c) */
	enum socktab_variant variant;      /* (c) */
	uint64_t port_key[2];              /* (c) SipHash key of the connect() offset (R10) */
	socktab_clock_fn clock;            /* (c) */
	void *clock_arg;                   /* (c) */
	uint64_t tw_len_ns;                /* (c) */

	/* Settings (sysctls), changed at run time. */
	pthread_mutex_t settings_lock;
	_Atomic uint32_t port_range;       /* (a) high << 16 | low */
	_Atomic int unprivileged_port_start; /* (a) */
	_Atomic int tw_reuse;              /* (a) */
	_Atomic uint32_t tw_reuse_delay_ms; /* (a) */
	_Atomic int autobind_reuse;        /* (a) */
	_Atomic uint64_t reserved[65536 / 64]; /* (a) ip_local_reserved_ports bitmap */
	_Atomic int somaxconn;             /* (a) net.core.somaxconn */
	pthread_mutex_t reuseport_lock;    /* guards every reuseport group of this net */

	_Atomic uint32_t *perturb;         /* (a) table_perturb (R54, R57) */

	struct socktab__pool pool;

	pthread_mutex_t tw_lock;
	struct socktab_sock *tw_head;      /* (t) oldest first */
	struct socktab_sock *tw_tail;      /* (t) */
	_Atomic uint64_t tw_head_expire;   /* (t, read without it) oldest entry's expiry, or
					    * UINT64_MAX: lets every control call skip tw_lock */

	_Atomic uint64_t n_established;    /* (a) */
	_Atomic uint64_t n_time_wait;      /* (a) */
	_Atomic uint64_t n_bind_buckets;   /* (a) */
	_Atomic uint64_t n_tw_recycled;    /* (a) */
	_Atomic uint64_t n_ports_tried;    /* (a) */
	_Atomic uint64_t n_connects;       /* (a) */
	struct socktab__rss *_Atomic rss;  /* (r) RSS key and RETA (rss.c), replaced whole */

	/* ---- connect() port index (src/portmap.c, issue 6). Zeroed by calloc: no init/teardown;
	 * every index is freed when its destination's entries leave ehash. (pm) = pm_lock. ---- */
	_Atomic uint32_t pm_sketch[2][SOCKTAB__PM_SKETCH]; /* (a) ehash entries per dest. hash cell */
	_Atomic(struct socktab__portmap *) pm_table[SOCKTAB__PM_BUCKETS]; /* (r,pm) indexes */
	_Atomic uint64_t pm_memo[SOCKTAB__PM_BUCKETS]; /* (a) last false-positive build per bucket */
	_Atomic uint32_t pm_live;          /* (a) indexes in pm_table */
	_Atomic int pm_lock;               /* spin lock, a leaf: links and unlinks indexes */

	/* ---- UDP (src/udp.c, issue 4): always private to the net, even with shared TCP tables ---- */
	struct socktab__udp_table *udp;    /* (c) */
};

/* ---- addresses ---- */
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

/* ---- socket field helpers ---- */
static inline uint16_t socktab__sk_num(const struct socktab_sock *sk)
{
	return (uint16_t)(RD(sk->portpair) >> 16);
}

static inline uint16_t socktab__sk_dport(const struct socktab_sock *sk)
{
	return (uint16_t)(RD(sk->portpair) & 0xffff);
}

static inline uint32_t socktab__sk_rcv_saddr(const struct socktab_sock *sk)
{
	return (uint32_t)(RD(sk->addrpair) >> 32);
}

static inline uint32_t socktab__sk_daddr(const struct socktab_sock *sk)
{
	return (uint32_t)RD(sk->addrpair);
}

static inline bool socktab__ipv6_only(const struct socktab_sock *sk)
{
	return RD(sk->family) == AF_INET6 && sk->v6only;
}

static inline uint64_t socktab__now(struct socktab_net *net)
{
	return net->clock(net->clock_arg);
}

static inline void socktab__lock(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
}

static inline void socktab__unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
}

/*
 * Lock discipline (debug builds): a function that needs a lock asserts that it is held. A
 * default mutex cannot tell who holds it, so this checks "held by someone"; with the caller's
 * own lock missing, the trylock succeeds and the assertion fires.
 */
#ifdef NDEBUG
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

/* The bhash bucket lock of @port. */
static inline pthread_mutex_t *socktab__bhash_lock(struct socktab_net *net, uint16_t port);

static inline pthread_mutex_t *socktab__ehash_lock(struct socktab__tables *t, uint32_t hash)
{
	return &t->ehash_locks[hash & t->ehash_locks_mask].m;
}

/* ---- hashes (hash.h holds the primitives) ---- */
uint32_t socktab__ehashfn4(const struct socktab_net *net, uint32_t laddr, uint16_t lport,
			   uint32_t faddr, uint16_t fport_be);
uint32_t socktab__ehashfn6(const struct socktab_net *net, const struct in6_addr *laddr,
			   uint16_t lport, const struct in6_addr *faddr, uint16_t fport_be);
uint32_t socktab__sk_ehashfn(const struct socktab_net *net, const struct socktab_sock *sk,
			     uint16_t lport);
uint32_t socktab__bhashfn(const struct socktab_net *net, uint16_t port);
uint32_t socktab__portaddr_hash(const struct socktab_net *net, const struct in6_addr *a,
				uint16_t port);

/* ---- pool.c ---- */
int socktab__pool_init(struct socktab__pool *p, size_t obj_size);
struct socktab_sock *socktab__pool_alloc(struct socktab__pool *p);
void socktab__pool_free(struct socktab__pool *p, struct socktab_sock *sk);
void socktab__pool_destroy(struct socktab__pool *p);

/* ---- sock.c ---- */
bool socktab__sock_hold_not_zero(struct socktab_sock *sk);
void socktab__sock_init_fields(struct socktab_sock *sk, struct socktab_net *net, int family);

/* ---- ehash.c ---- */
void socktab__ehash_insert_locked(struct socktab__tables *t, struct socktab_sock *sk);
void socktab__ehash_remove(struct socktab__tables *t, struct socktab_sock *sk);
bool socktab__ehash_hashed(const struct socktab_sock *sk);
/* Return values of the 4-tuple check (R24, R56). */
enum { SOCKTAB__UNIQUE = 0, SOCKTAB__NOT_UNIQUE = 1 };
int socktab__check_established_rcu(struct socktab_net *net, struct socktab_sock *sk,
				   uint16_t lport, uint32_t hash);
int socktab__check_established_locked(struct socktab_net *net, struct socktab_sock *sk,
				      uint16_t lport, uint32_t hash, bool tw_reuse_ctx,
				      struct socktab_sock **twp);

/* ---- bind.c ---- */
struct socktab__tb *socktab__tb_find(struct socktab__bhead *head, struct socktab_net *net,
				     uint16_t port);
struct socktab__tb *socktab__tb_find_rcu(struct socktab__bhead *head, struct socktab_net *net,
					 uint16_t port);
struct socktab__tb *socktab__tb_create(struct socktab__bhead *head, struct socktab_net *net,
				       uint16_t port);
void socktab__tb_maybe_destroy(struct socktab__bhead *head, struct socktab__tb *tb);
struct socktab__tb2 *socktab__tb2_find(struct socktab_net *net, const struct socktab__tb *tb,
				       const struct socktab_sock *sk);
struct socktab__tb2 *socktab__tb2_find_or_create(struct socktab_net *net, struct socktab__tb *tb,
						 const struct socktab_sock *sk, bool *created);
void socktab__tb2_maybe_destroy(struct socktab_net *net, struct socktab__tb2 *tb2);
void socktab__bind_hash(struct socktab_sock *sk, struct socktab__tb2 *tb2, uint16_t port);
void socktab__bind_unhash_locked(struct socktab_net *net, struct socktab_sock *sk);
void socktab__put_port(struct socktab_sock *sk);
void socktab__bind_replace_owner_locked(struct socktab_sock *old, struct socktab_sock *new);
int socktab__bhash2_update_saddr_locked(struct socktab_sock *sk, const struct in6_addr *newaddr);
bool socktab__port_reserved(struct socktab_net *net, uint16_t port);
bool socktab__v4_local(uint32_t be);
int socktab__bind_addr(const struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len,
		       bool stream, struct in6_addr *a6, uint32_t *v4, int *snum);
int socktab__bind_set_addr(struct socktab_sock *sk, const struct in6_addr *a6, uint32_t v4,
			   uint8_t *saved);
void socktab__bind_undo_addr(struct socktab_sock *sk, uint8_t saved);
void socktab__bind_done(struct socktab_sock *sk, int snum);
void socktab__port_range(struct socktab_net *net, const struct socktab_sock *sk, int *low,
			 int *high, bool *local_ports);

/* ---- listen.c ---- */
void socktab__listen_unhash(struct socktab_sock *sk);
int socktab__get_port(struct socktab_net *net, struct socktab_sock *sk, int snum);

/* ---- sock.c ---- */
void socktab__sk_done(struct socktab_net *net, struct socktab_sock *sk);

/* ---- connect.c ---- */
int socktab__hash_connect(struct socktab_net *net, struct socktab_sock *sk);

/* ---- rss.c ---- */
struct socktab__rss;
struct socktab__rss_filter {
	const struct socktab__rss *rss;
	uint16_t queue;
	uint32_t base;                     /* Toeplitz hash of the reply tuple without the port */
	const uint32_t *lo, *hi;           /* contributions of the port's low and high byte */
};
bool socktab__rss_filter_init(struct socktab_net *net, const struct socktab_sock *sk,
			      struct socktab__rss_filter *f);
bool socktab__rss_port_ok(const struct socktab__rss_filter *f, uint16_t port);
void socktab__rss_free(struct socktab_net *net);

/* ---- timewait.c ---- */
int socktab__tw_create_and_swap(struct socktab_net *net, struct socktab_sock *sk);
bool socktab__tw_unique(struct socktab_net *net, struct socktab_sock *tw, bool port_was_bound);
void socktab__tw_kill_locked(struct socktab_net *net, struct socktab_sock *tw);
void socktab__tw_deschedule_put(struct socktab_net *net, struct socktab_sock *tw);
int socktab__tw_reap(struct socktab_net *net, int budget);
void socktab__tw_purge(struct socktab_net *net);

/* ---- portmap.c: per-destination index of busy local ports (connect(), issue 6) ---- */
struct socktab__portmap;
void socktab__ehash_del_locked(struct socktab__tables *t, struct socktab_sock *sk);
void socktab__portmap_ehash_add_locked(struct socktab_sock *sk);
void socktab__portmap_ehash_del_locked(struct socktab__tables *t, struct socktab_sock *sk);
struct socktab__portmap *socktab__portmap_get_rcu(struct socktab_net *net, struct socktab_sock *sk,
						 uint32_t hash0, int low, int high);
uint32_t socktab__portmap_next(const struct socktab__portmap *pm, struct socktab_net *net,
			       uint32_t base, uint32_t high, uint32_t remaining, uint32_t step,
			       uint32_t i);
void socktab__portmap_stats(struct socktab_net *net, uint32_t *nindex, uint64_t *bytes);
void socktab__connect_rng_seed(uint64_t seed);

/* ---- listen.c: SO_REUSEPORT groups, shared with UDP (caller holds net->reuseport_lock) ---- */
int socktab__reuseport_add_locked(struct socktab_net *net, struct socktab_sock *sk,
				  struct socktab_sock *peer);
void socktab__reuseport_detach_locked(struct socktab_sock *sk);
/* Caller is inside an RCU read-side section. */
struct socktab_sock *socktab__reuseport_select_rcu(struct socktab_sock *sk, uint32_t hash);

/* ---- bind.c: R40 address overlap, shared with UDP ---- */
bool socktab__rcv_saddr_equal(const struct socktab_sock *sk, const struct socktab_sock *sk2,
			      bool match_wildcard);

/* ---- udp.c (issue 4) ---- */
struct socktab__udp_table *socktab__udp_table_new(struct socktab_net *net, uint32_t entries,
						  int hash4_on);
void socktab__udp_table_free(struct socktab__udp_table *t);
int socktab__udp_bind(struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len);
int socktab__udp_connect(struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len);
int socktab__udp_close(struct socktab_sock *sk);
int socktab__udp_setsockopt(struct socktab_sock *sk, int level, int optname, const void *optval,
			    socklen_t optlen);
int socktab__udp_name(struct socktab_sock *sk, struct sockaddr *addr, socklen_t *len, bool peer);
void socktab__udp_init_sock(struct socktab_sock *sk);

/* Compile-time cache-line budget of the structs above (issue 7). */
#include "layout.h"

static inline pthread_mutex_t *socktab__bhash_lock(struct socktab_net *net, uint16_t port)
{
	return &net->tab->bhash[socktab__bhashfn(net, port) & net->tab->bhash_mask].lock;
}

#endif /* SOCKTAB_INTERNAL_H */
