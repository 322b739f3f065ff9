/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The socket object and its field helpers.
 *
 * A socket is split the way the kernel splits sock_common from the rest of tcp_sock:
 *   - struct socktab_sock, one cache line: everything a lookup reads (chain link, cached hash,
 *     4-tuple, device, state, family) plus the few words the bind-conflict walk needs;
 *   - the caller's area (sock_priv_size bytes) right after it, so a stack's per-packet state is
 *     the next line;
 *   - struct socktab__sk_cold, elsewhere in the same slab: the control-path state (owner list of
 *     the bind bucket, options), preceded by the IPv6 key for AF_INET6 sockets and followed by
 *     the UDP chain links for UDP sockets. The net is named once per slab (socktab__sk_net),
 *     and the slab's header also tells where each object's IPv6 key is (socktab__sk_v6), so
 *     a lookup finds the key without waiting for the socket's line.
 * A TIME_WAIT entry (struct socktab__tw) is a compact object of its own: the same first line, its
 * bind-bucket link, list links, expiry and a small caller area, 128 bytes for IPv4.
 *
 * Each kind (TCP or UDP, IPv4 or IPv6, TIME_WAIT v4/v6) has its own pool per net (pool.c).
 * Every object is freed after an RCU grace period, so a reader inside a read-side section may
 * use what it found without a reference.
 * Lock legend: common.h.
 */
#ifndef SOCKTAB_SRC_SOCK_H
#define SOCKTAB_SRC_SOCK_H

#include <sys/types.h>

#if defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h> /* glibc 2.35 on: __rseq_offset, __rseq_size */
#endif
#endif

#include "common.h"

#define SOCKTAB__FREE 0 /* state of a socket that sits in the pool */

/* sk->userlocks bits (kernel names). */
#define SOCKTAB__BINDADDR_LOCK 0x4
#define SOCKTAB__BINDPORT_LOCK 0x8
#define SOCKTAB__CONNECT_BIND 0x80
/* The same byte, socktab's own bit, in every kind of ehash entry (socket, request, TIME_WAIT),
 * written under the entry's ehash stripe lock: the busy-port sketch did not count the entry when
 * it was linked (its local port was outside the net's range then, or the entry was not among the
 * sample the sketch counts), so its unlink takes nothing off (portmap.c). */
#define SOCKTAB__PM_UNCOUNTED 0x40

/* Object kinds: one pool each. */
enum socktab__kind {
	SOCKTAB__K_TCP4,
	SOCKTAB__K_TCP6,
	SOCKTAB__K_UDP4,
	SOCKTAB__K_UDP6,
	SOCKTAB__K_TW4,
	SOCKTAB__K_TW6,
	SOCKTAB__K_REQ4,
	SOCKTAB__K_REQ6,
	SOCKTAB__K_NR
};
#define SOCKTAB__KIND_MASK 0x3f
#define SOCKTAB__HAS_PRIV 0x40 /* kind bit (c): the net gives sockets a caller area */
#define SOCKTAB__IN_POOL 0x80  /* kind bit (p): freed (waiting for its grace period, or free) */

/* sk->tw_flags of a TIME_WAIT entry: substate in the low bits. */
#define SOCKTAB__TWF_SUBSTATE 0x0f /* SOCKTAB_TCP_FIN_WAIT2 or SOCKTAB_TCP_TIME_WAIT */
#define SOCKTAB__TWF_TS 0x10       /* (c) recorded a peer timestamp */
#define SOCKTAB__TWF_ONLIST 0x20   /* (t) still on the net's list */
/* The same byte of a UDP socket: its connect() is rewriting its key (udp.c). Reuseport selection
 * skips it. Never set in a TCP socket. */
#define SOCKTAB__UDPF_CONNECTING 0x01
/* The same byte of a TCP or UDP socket: its SO_INCOMING_CPU names a CPU (>= 0). Scores read the
 * value only when this bit says there is one, so a lookup among sockets without the option
 * touches no line of theirs but the first (R106). */
#define SOCKTAB__SOCKF_INCPU 0x02
/* The same byte's high four bits (a TCP or UDP socket; a TIME_WAIT entry uses 0x10 and 0x20 for
 * its own flags): SO_INCOMING_CPU's value plus one when the value is 0 to SOCKTAB__SOCKF_CPU_MAX,
 * else 0, and the value is then read from cold->incoming_cpu, which always holds it. A lookup
 * that compares such a CPU with the socket's value reads only the socket's line (R106, R107). */
#define SOCKTAB__SOCKF_CPU 0xf0
#define SOCKTAB__SOCKF_CPU_SHIFT 4
#define SOCKTAB__SOCKF_CPU_MAX 14
/* The same byte of a TCP socket, under its lock (R104): it has listened; it has sent a SYN or
 * was made by a listener. Never cleared while the socket lives. */
#define SOCKTAB__SOCKF_LISTENED 0x04
#define SOCKTAB__SOCKF_ACTIVE 0x08
/* The same byte of a TCP socket, set when a listener made it (never on a UDP socket, whose
 * 0x01 is SOCKTAB__UDPF_CONNECTING): SOCKTAB_SO_UID may still change its owner, as accept()
 * does the kernel's child. */
#define SOCKTAB__SOCKF_CHILD 0x01
_Static_assert(!(SOCKTAB__SOCKF_CHILD & (SOCKTAB__SOCKF_INCPU | SOCKTAB__SOCKF_CPU |
					 SOCKTAB__SOCKF_LISTENED | SOCKTAB__SOCKF_ACTIVE)),
	       "a TCP socket's flag bits are distinct");
/* The same byte of a UDP socket, which never has SOCKTAB__SOCKF_LISTENED, its bit: connect()
 * gave the socket, hashed under a wildcard, the source address it has now, so its port key is
 * still the wildcard's (udp.c feed_key). Never set in a TCP socket. */
#define SOCKTAB__UDPF_KEY_WILD 0x04
_Static_assert(!(SOCKTAB__UDPF_KEY_WILD &
		 (SOCKTAB__UDPF_CONNECTING | SOCKTAB__SOCKF_INCPU | SOCKTAB__SOCKF_CPU)),
	       "a UDP socket's flag bits are distinct");

struct socktab__tb2;
struct socktab__pool_cache;
struct socktab__reuseport;
struct socktab__sk_cold;
struct socktab__listenq;

struct socktab_sock {
	/* One cache line: what the lookups read (R77), then what bind-conflict walks read. */
	struct socktab__hnode node;        /* (e) ehash / lhash2 / UDP hash2 chain link */
	_Atomic uint32_t hash;             /* (r,e) ehash hash; set before the node is published */
	_Atomic uint32_t refcnt;           /* (a) 0 while in the pool */
	_Atomic uint64_t addrpair;         /* (r,s) remote v4 | local v4 << 32 */
	_Atomic uint32_t portpair;         /* (r,s) remote port (be) | local port (host) << 16 */
	_Atomic uint32_t bound_dev_if;     /* (r,s) 0 = any device */
	struct socktab__sk_cold *cold;     /* (c) control state; a TIME_WAIT entry's is its net's
					    * shared all-zero one */
	_Atomic uint8_t state;             /* (r,s) SOCKTAB_TCP_*, SOCKTAB__FREE in the pool */
	_Atomic uint8_t v4key;             /* (r,s) 1: keyed by IPv4 (AF_INET, or v4-mapped peer) */
	uint8_t family;                    /* (c) AF_INET / AF_INET6 */
	uint8_t net_tag;                   /* (c) the net's tag among those sharing its tables
					    * (0: none); see socktab__ehash_net_match() */
	_Atomic uint8_t reuse;             /* (s) SO_REUSEADDR; read by other binders under (b) */
	_Atomic uint8_t reuseport;         /* (s) SO_REUSEPORT */
	_Atomic uint8_t v6only;            /* (s,b) IPV6_V6ONLY (changes only while portless) */
	_Atomic uint8_t tw_flags;          /* TIME_WAIT entry: SOCKTAB__TWF_*; socket:
					    * SOCKTAB__UDPF_*, SOCKTAB__SOCKF_* (s, read by
					    * lookups) */
	uid_t uid;                         /* (s) owner uid (SO_REUSEPORT same-owner rule) */
	uint16_t sport;                    /* (s) port getsockname reports (kernel inet_sport): kept
					    * after the port is given back by a reset or disconnect */
	_Atomic uint8_t userlocks;         /* (s) SOCKTAB__*_LOCK, CONNECT_BIND; a port's other
					    * owners read it under its bhash lock, a kid of the
					    * same shard under the shard's lock (bind.c) */
	_Atomic uint8_t kind;              /* (c) enum socktab__kind | SOCKTAB__HAS_PRIV, and
					    * SOCKTAB__IN_POOL (p) */
	/* The caller's area follows at the next line (socktab__sk_priv). */
};

/*
 * Link of an object among its bind bucket's owners while it owns a port; once it is freed the
 * same bytes carry it through the grace period and the pool's free list.
 */
struct socktab__bindlink {
	union {
		struct {
			/* (b); a kid's (bind.c) under its shard's lock as well, and
			 * under that lock alone while the shard keeps another owner */
			struct socktab__tb2 *tb2;           /* bucket this object owns a port through */
			struct socktab_sock *next;          /* next owner of tb2 (list or shard) */
			struct socktab_sock **pprev;
		};
		struct {
			union {
				/* A batch's oldest member carries it through call_rcu, */
				struct rcu_head rcu;
				/* its newest names the cache the batch goes back to (NULL:
				 * the pool's own stack). */
				struct socktab__pool_cache *home;
			};
			struct socktab_sock *pool_next;     /* (p) free list / limbo batch link */
		};
	};
};

/* Socket flags (cold->flags), each written under the socket lock, read with atomic loads. */
#define SOCKTAB__SKF_FREEBIND 0x01     /* IP_FREEBIND / IPV6_FREEBIND (one flag, R87) */
#define SOCKTAB__SKF_TRANSPARENT 0x02  /* IP_TRANSPARENT / IPV6_TRANSPARENT */
#define SOCKTAB__SKF_BROADCAST 0x04    /* SO_BROADCAST (UDP sends) */
#define SOCKTAB__SKF_SADDR_ANY 0x08    /* bound to an IPv4 broadcast/multicast address: it names
					* the socket but is no source (inet_saddr = 0) */
#define SOCKTAB__SKF_NO_PORT 0x10      /* IP_BIND_ADDRESS_NO_PORT */
#define SOCKTAB__SKF_LINGER 0x20       /* SO_LINGER on */
#define SOCKTAB__SKF_CONNECTED 0x40    /* socket-level SS_CONNECTED: set once established, cleared
					* only by connect(AF_UNSPEC); connect() then says EISCONN */
#define SOCKTAB__SKF_RSS 0x80          /* rss_queue names a queue */

/* Control-path state of a socket (56 bytes) and its lock, in its slab's cold array. */
struct socktab__sk_cold {
	struct socktab__bindlink bl;
	struct socktab__reuseport *_Atomic reuseport_cb; /* (r, reuseport lock) listener group */
	uint32_t local_port_range;         /* (s) IP_LOCAL_PORT_RANGE, hi << 16 | lo */
	int linger_secs;                   /* (s) */
	uint16_t rss_queue;                /* (s) RSS queue wanted for replies (rss.c), if SKF_RSS */
	_Atomic uint8_t flags;             /* (s) SOCKTAB__SKF_* */
	uint8_t kid;                       /* (s) 1 + the kids shard of its tb2 it owns its port
					    * in, 0: none (bind.c) */
	_Atomic int32_t incoming_cpu;      /* (s, reuseport lock, or a receipt: any thread; r)
					    * SO_INCOMING_CPU, any int; negative: none
					    * (SOCKTAB__SOCKF_INCPU clear); see
					    * socktab__sk_set_incoming_cpu() */
	struct socktab__listenq *_Atomic lq; /* (s; r) a listener's queues and backlog, and a
					    * stable reuseport member id (reqsk.h); made by the
					    * object's first listen() or id and kept, like the cold
					    * part itself, for the life of the net */
	pthread_mutex_t lock;              /* the socket lock (socktab__sk_lock): made when the
					    * object is carved, kept while it is pooled */
};

/* IPv6 key of an AF_INET6 socket or entry (v4-mapped while it talks IPv4). An AF_INET socket
 * has none: its IPv6 form is the v4-mapped one of addrpair. */
struct socktab__v6key {
	_Atomic uint64_t daddr[2];         /* (r,s) remote address */
	_Atomic uint64_t saddr[2];         /* (r,s) local address */
};

/* UDP chain links and state (udp.c), after the cold part of a UDP socket. A UDP socket uses
 * `node` of its first line for its hash2 chain. (u) = under the primary slot lock of its port. */
struct socktab__udp_ext {
	struct socktab__hnode node1;       /* (r,u) primary (port) chain */
	struct socktab__hnode node4;       /* (r,u) hash4 (4-tuple) chain, nulls protocol */
	_Atomic uint32_t hash4;            /* (u) R9 hash of the 4-tuple while in hash4: its slot */
	uint32_t slot2;                    /* (u) hash2 slot while hashed */
	uint32_t src4;                     /* (s) with SKF_SADDR_ANY: the source (inet_saddr) the
					    * first connect() took from its route, kept after */
	_Atomic uint8_t rp_conns;          /* (r, reuseport lock) R36: the group had a connect() */
	uint8_t hashed4;                   /* (u) in hash4 */
};

/* A TIME_WAIT entry (inet_timewait_sock): 128 bytes, 192 with the IPv6 key. */
#define SOCKTAB__TW_PRIV 16
struct socktab__tw {
	struct socktab_sock sk;            /* first: lookups see a socket line like any other */
	struct socktab__bindlink bl;
	struct socktab_sock *next;         /* (t) the net's list, oldest first */
	struct socktab_sock *prev;         /* (t) */
	_Atomic uint64_t expire_ns;        /* (t, read without it) expiry on the net clock */
	_Alignas(8) unsigned char priv[SOCKTAB__TW_PRIV]; /* the caller's TIME_WAIT state */
};

struct socktab__tw6 {
	struct socktab__tw tw;
	struct socktab__v6key v6;
};

/*
 * A request entry (the kernel's request_sock in TCP_NEW_SYN_RECV, reqsk.c): 128 bytes, 160 with
 * the IPv6 key (stride 192). (q) = under its listener's socket lock.
 */
#define SOCKTAB__REQ_PRIV 20
struct socktab__req {
	struct socktab_sock sk;            /* first: lookups see a socket line like any other */
	struct socktab__bindlink bl;       /* owns no port (tb2 NULL): next/pprev link it in its
					    * listener's SYN or accept queue (q), then carry it
					    * back to the pool */
	struct socktab_sock *_Atomic listener; /* (q, r) the listener whose queue holds it */
	struct socktab_sock *child;        /* (q) in the accept queue: the child that took its
					    * place in ehash */
	uint8_t num_timeout;               /* (q) SYN-ACK retransmissions so far */
	uint8_t where;                     /* (q) SOCKTAB__REQ_* below */
	uint8_t pad[2];
	_Alignas(4) unsigned char priv[SOCKTAB__REQ_PRIV]; /* the caller's request state */
};

struct socktab__req6 {
	struct socktab__req req;
	struct socktab__v6key v6;
};

static inline struct socktab__v6key *socktab__req6_v6(const struct socktab_sock *sk)
{
	return &((struct socktab__req6 *)sk)->v6;
}

/* Chains link sockets by their first member: a node pointer is the socket pointer. */
static inline struct socktab_sock *socktab__node_sk(uintptr_t p)
{
	return (struct socktab_sock *)p;
}

/* ---- object parts ---- */
static inline unsigned int socktab__sk_kind(const struct socktab_sock *sk)
{
	return atomic_load_explicit(&((struct socktab_sock *)sk)->kind, memory_order_relaxed) &
	       SOCKTAB__KIND_MASK;
}

/* SOCKTAB_TCP or SOCKTAB_UDP, from the kind. */
static inline int socktab__sk_proto(const struct socktab_sock *sk)
{
	unsigned int k = socktab__sk_kind(sk);

	return k == SOCKTAB__K_UDP4 || k == SOCKTAB__K_UDP6 ? SOCKTAB_UDP : SOCKTAB_TCP;
}

static inline bool socktab__sk_is_tw(const struct socktab_sock *sk)
{
	unsigned int k = socktab__sk_kind(sk);

	return k == SOCKTAB__K_TW4 || k == SOCKTAB__K_TW6;
}

/* A request entry (TCP_NEW_SYN_RECV, reqsk.h)? */
static inline bool socktab__sk_is_req(const struct socktab_sock *sk)
{
	unsigned int k = socktab__sk_kind(sk);

	return k == SOCKTAB__K_REQ4 || k == SOCKTAB__K_REQ6;
}

/*
 * Objects live in slabs of SOCKTAB__SLAB_BYTES aligned to their size (pool.c), whose first line
 * names the net: an object's net is found by masking its address.
 */
#define SOCKTAB__SLAB_BYTES ((size_t)2 << 20)

/*
 * The header also says where its objects' IPv6 keys are (pool.c sets it when the slab is made,
 * before any object of it is published): object i sits at slab + 64 + i * stride and its key at
 * v6_base + i * v6_stride, in the cold array for a socket, inside the entry for a TIME_WAIT or
 * request entry. socktab__sk_v6() finds i by multiplying the object's offset by v6_recip
 * (ceil(2^42 / stride), exact for every offset and stride below 2^21), so a lookup knows the
 * key's address from the socket's address and this line alone: the key's miss starts beside the
 * socket line's instead of after it. One header line per 2 MiB of objects stays in the cache.
 */
#define SOCKTAB__V6_RECIP_SHIFT 42

struct socktab__slab_hdr {
	struct socktab_net *net;           /* (c) */
	uintptr_t v6_base;                 /* (c) object 0's IPv6 key; 0: the pool has none */
	uint64_t v6_recip;                 /* (c) ceil(2^SOCKTAB__V6_RECIP_SHIFT / stride) */
	size_t v6_stride;                  /* (c) from one object's key to the next's */
	/* The way back from a UDP socket's UDP part (socktab__udp_ext_sk()); 0 in other pools. */
	uintptr_t udp_base;                /* (c) object 0's UDP part */
	uint64_t udp_recip;                /* (c) ceil(2^SOCKTAB__V6_RECIP_SHIFT / the pool's cold
					    * part size, which parts are apart) */
	size_t stride;                     /* (c) from one object to the next */
};

static inline struct socktab_net *socktab__sk_net(const struct socktab_sock *sk)
{
	return ((const struct socktab__slab_hdr *)((uintptr_t)sk & ~(SOCKTAB__SLAB_BYTES - 1)))
		->net;
}

static inline struct socktab__tw *socktab__sk_tw(struct socktab_sock *sk)
{
	return (struct socktab__tw *)sk;
}

/* The bind-bucket link: in the entry itself for TIME_WAIT and request entries (both keep it
 * right after their socket line), in the cold part otherwise. */
static inline struct socktab__bindlink *socktab__sk_bl(const struct socktab_sock *sk)
{
	if (socktab__sk_kind(sk) >= SOCKTAB__K_TW4)
		return &((struct socktab__tw *)sk)->bl;
	return &sk->cold->bl;
}

/* The caller's area of a socket (not of a TIME_WAIT entry). */
static inline void *socktab__sk_priv(struct socktab_sock *sk)
{
	return (unsigned char *)sk + sizeof(*sk);
}

/* ceil(2^SOCKTAB__V6_RECIP_SHIFT / @size): socktab__slab_index()'s reciprocal for parts @size
 * apart, made once per slab (pool.c). */
static inline uint64_t socktab__slab_recip(size_t size)
{
	return (((uint64_t)1 << SOCKTAB__V6_RECIP_SHIFT) + size - 1) / size;
}

/* Which of a slab's equal parts, @recip = socktab__slab_recip(their size) apart, the offset @off
 * falls in: exact for offsets and sizes below 2^21 (layout.h). */
static inline __attribute__((always_inline)) size_t socktab__slab_index(uint64_t off,
								       uint64_t recip)
{
	return (size_t)((off * recip) >> SOCKTAB__V6_RECIP_SHIFT);
}

/*
 * The IPv6 key; only for an AF_INET6 socket or entry. A socket's sits right before its cold
 * part, 32-byte aligned, so it never straddles two lines; a TIME_WAIT or request entry's is in
 * the entry (socktab__tw6, socktab__req6). Its address comes from the object's address and its
 * slab header (struct socktab__slab_hdr), not from the object's line: no load of the line, no
 * branch on its kind, so an IPv6 lookup's miss on the key need not wait for the line's.
 */
static inline __attribute__((always_inline)) struct socktab__v6key *
socktab__sk_v6(const struct socktab_sock *sk)
{
	uintptr_t a = (uintptr_t)sk;
	const struct socktab__slab_hdr *h =
		(const struct socktab__slab_hdr *)(a & ~(SOCKTAB__SLAB_BYTES - 1));
	size_t i = socktab__slab_index((a & (SOCKTAB__SLAB_BYTES - 1)) - SOCKTAB__CACHELINE,
				       h->v6_recip);

	return (struct socktab__v6key *)(h->v6_base + i * h->v6_stride);
}

/* The UDP part, right after the cold part; only for a UDP socket. */
static inline struct socktab__udp_ext *socktab__sk_udp(const struct socktab_sock *sk)
{
	return (struct socktab__udp_ext *)(sk->cold + 1);
}

/*
 * The socket whose UDP part is @e, from @e's address and its slab's header alone, as
 * socktab__sk_v6() finds a key from its socket: a hash4 walk knows a chain entry's socket line
 * without waiting for the entry's line, so the two misses start together; and a primary chain
 * entry its socket without a pointer back.
 */
static inline struct socktab_sock *socktab__udp_ext_sk(const struct socktab__udp_ext *e)
{
	uintptr_t a = (uintptr_t)e;
	const struct socktab__slab_hdr *h =
		(const struct socktab__slab_hdr *)(a & ~(SOCKTAB__SLAB_BYTES - 1));
	size_t i = socktab__slab_index(a - h->udp_base, h->udp_recip);

	return (struct socktab_sock *)((uintptr_t)h + SOCKTAB__CACHELINE + i * h->stride);
}

/* ---- socket flags ---- */
static inline bool socktab__skf(const struct socktab_sock *sk, uint8_t f)
{
	return atomic_load_explicit(&sk->cold->flags, memory_order_relaxed) & f;
}

/* Caller holds the socket lock (or owns the socket alone). */
static inline void socktab__skf_set(struct socktab_sock *sk, uint8_t f, bool on)
{
	if (on)
		atomic_fetch_or_explicit(&sk->cold->flags, f, memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&sk->cold->flags, (uint8_t)~f, memory_order_relaxed);
}

/* ---- SO_INCOMING_CPU (R105-R107) ---- */

/*
 * The value is written in two places: cold->incoming_cpu, the whole int, and the socket's flag
 * byte (SOCKTAB__SOCKF_INCPU, and SOCKTAB__SOCKF_CPU for a CPU of 0 to SOCKTAB__SOCKF_CPU_MAX),
 * which the lookups read. Its writers are setsockopt() (under the socket lock, and the reuseport
 * lock), the creation of a child (alone), and any lookup thread that receives for the socket on
 * another CPU (R107, no lock), so two may meet: each stores the int, then makes the byte agree
 * with the int it reads back, and checks that the int did not change meanwhile
 * (socktab__sk_incpu_sync). The writers' accesses are sequentially consistent, so once they are
 * done the byte agrees with the int, whichever of them came last; a reader that decodes the byte
 * meanwhile (socktab__sk_incpu_decode) gets one writer's value.
 */

/* The flag bits of SO_INCOMING_CPU value @v. */
static inline uint8_t socktab__incpu_flags(int v)
{
	if (v < 0)
		return 0;
	if (v > SOCKTAB__SOCKF_CPU_MAX)
		return SOCKTAB__SOCKF_INCPU;
	return (uint8_t)(SOCKTAB__SOCKF_INCPU | (unsigned)(v + 1) << SOCKTAB__SOCKF_CPU_SHIFT);
}

/* The value of a TCP or UDP socket whose flag byte is @f: from the byte when it holds it, else
 * from the cold part. */
static inline int socktab__sk_incpu_decode(const struct socktab_sock *sk, uint8_t f)
{
	unsigned int c = (unsigned int)(f & SOCKTAB__SOCKF_CPU) >> SOCKTAB__SOCKF_CPU_SHIFT;

	return c ? (int)c - 1 : RD(sk->cold->incoming_cpu);
}

/* The socket's SO_INCOMING_CPU (any int; negative: none). */
static inline int socktab__sk_incoming_cpu(const struct socktab_sock *sk)
{
	return socktab__sk_incpu_decode(
		sk, atomic_load_explicit(&((struct socktab_sock *)sk)->tw_flags,
					 memory_order_seq_cst));
}

/*
 * The CPU a socket whose flag byte (tw_flags, already read by the caller) is @f names, or -1:
 * the cold part is read only when the flag says there is a CPU above SOCKTAB__SOCKF_CPU_MAX.
 * Lookups, under RCU.
 */
static inline int socktab__sk_incpu_hint(const struct socktab_sock *sk, uint8_t f)
{
	return (f & SOCKTAB__SOCKF_INCPU) ? socktab__sk_incpu_decode(sk, f) : -1;
}

/* Make @sk's flag byte agree with its cold->incoming_cpu; see above. */
static inline void socktab__sk_incpu_sync(struct socktab_sock *sk)
{
	for (;;) {
		uint8_t f = atomic_load_explicit(&sk->tw_flags, memory_order_seq_cst);
		int v = atomic_load_explicit(&sk->cold->incoming_cpu, memory_order_seq_cst);
		uint8_t nf = (uint8_t)((f & ~(SOCKTAB__SOCKF_INCPU | SOCKTAB__SOCKF_CPU)) |
				       socktab__incpu_flags(v));

		if (nf != f && !atomic_compare_exchange_strong_explicit(
				       &sk->tw_flags, &f, nf, memory_order_seq_cst,
				       memory_order_seq_cst))
			continue;
		if (atomic_load_explicit(&sk->cold->incoming_cpu, memory_order_seq_cst) == v)
			return;
	}
}

/* Set SO_INCOMING_CPU and its flags. Caller holds the socket lock (or owns the socket alone),
 * and the net's reuseport lock when the socket may be in a group (reuseport.c); a receipt may
 * store a CPU meanwhile (socktab__sk_incoming_cpu_update). */
static inline void socktab__sk_set_incoming_cpu(struct socktab_sock *sk, int cpu)
{
	atomic_store_explicit(&sk->cold->incoming_cpu, cpu, memory_order_seq_cst);
	socktab__sk_incpu_sync(sk);
}

/* What socktab__rseq_cpu points to until the thread's first socktab__cpu_now_slow(): a CPU
 * number no CPU has, which sends the caller there. */
static const uint32_t socktab__rseq_unknown __attribute__((unused)) = (uint32_t)-2;

/*
 * Where the calling thread finds the CPU it runs on: the cpu_id the kernel keeps current in its
 * rseq area (glibc 2.35 on registers one for every thread unless told not to), found by the
 * thread's first socktab__cpu_now_slow(); until then, or for good without rseq,
 * socktab__rseq_unknown. A copy per file that uses it.
 */
static _Thread_local const volatile uint32_t *socktab__rseq_cpu
	__attribute__((tls_model("initial-exec"), unused)) = &socktab__rseq_unknown;

/* The CPU the calling thread runs on when socktab__rseq_cpu does not tell it (yet): aim it at
 * the rseq area if there is one, else ask sched_getcpu(). -1 if unknown. */
static __attribute__((noinline, cold, unused)) int socktab__cpu_now_slow(void)
{
#if defined(RSEQ_SIG) && defined(__has_builtin)
#if __has_builtin(__builtin_thread_pointer)
	if (__rseq_size) {
		const volatile uint32_t *p = (const volatile uint32_t *)(
			(char *)__builtin_thread_pointer() + __rseq_offset +
			offsetof(struct rseq, cpu_id));

		if ((int)*p >= 0) { /* registered */
			socktab__rseq_cpu = p;
			return (int)*p;
		}
	}
#endif
#endif
	return sched_getcpu();
}

/* The receiving CPU of the calling thread's lookups, the kernel's raw_smp_processor_id(), as
 * far as thread-local loads tell: what socktab_set_rx_cpu() named, else the CPU the thread runs
 * on now from its rseq area; -2 when only socktab__cpu_now_slow() can tell. */
static inline int socktab__rx_cpu_fast(void)
{
	int set = socktab__rx_cpu_set;

	return set >= 0 ? set : (int)*socktab__rseq_cpu;
}

/* The receiving CPU of the calling thread's lookups; -1 if unknown. */
static inline int socktab__rx_cpu_now(void)
{
	int cpu = socktab__rx_cpu_fast();

	return __builtin_expect(cpu >= 0, 1) ? cpu : socktab__cpu_now_slow();
}

/*
 * The rest of socktab__sk_incoming_cpu_update(), out of the lookup's way (a copy per file that
 * uses it): request and TIME_WAIT entries have no SO_INCOMING_CPU; the CPU when thread-local
 * loads did not tell it (@cpu < 0); a CPU above SOCKTAB__SOCKF_CPU_MAX is compared with the cold
 * part; the store. No group count changes (the kernel's neither): a receiving socket is in no
 * group that selects.
 */
static __attribute__((noinline, cold, unused)) void
socktab__sk_incoming_cpu_store(struct socktab_sock *sk, int cpu)
{
	uint8_t f = RD(sk->tw_flags);

	if (socktab__sk_kind(sk) >= SOCKTAB__K_TW4)
		return;
	if (cpu < 0)
		cpu = socktab__cpu_now_slow();
	if (cpu < 0)
		return;
	if ((f & (SOCKTAB__SOCKF_INCPU | SOCKTAB__SOCKF_CPU)) == SOCKTAB__SOCKF_INCPU &&
	    RD(sk->cold->incoming_cpu) == cpu)
		return;
	socktab__sk_set_incoming_cpu(sk, cpu);
}

/*
 * sk_incoming_cpu_update() (R107): @sk, a TCP socket found in ehash or a connected UDP socket,
 * receives a segment or datagram on the calling thread's receiving CPU (socktab_set_rx_cpu(),
 * else the CPU it runs on), which becomes its SO_INCOMING_CPU; a request or TIME_WAIT entry is
 * left as it is, and so is everything when the CPU is unknown (-1). For a CPU up to
 * SOCKTAB__SOCKF_CPU_MAX whose value the socket holds already, all it costs is a load from the
 * socket's line the lookup read and a compare (the CPU plus one equals the flag byte's high
 * bits); anything else goes on out of line, and there is a store only when the value differs,
 * as in the kernel. Lookups, under RCU, any thread.
 */
static inline __attribute__((always_inline)) void
socktab__sk_incoming_cpu_update(struct socktab_sock *sk)
{
	int cpu = socktab__rx_cpu_fast();

	if (__builtin_expect((unsigned int)RD(sk->tw_flags) >> SOCKTAB__SOCKF_CPU_SHIFT ==
				     (unsigned int)cpu + 1,
			     1))
		return;
	socktab__sk_incoming_cpu_store(sk, cpu);
}

/* R104: mark @sk's role (SOCKTAB__SOCKF_LISTENED or _ACTIVE). Caller holds the socket lock or
 * owns the socket alone. */
static inline void socktab__sk_mark_role(struct socktab_sock *sk, uint8_t role)
{
	atomic_fetch_or_explicit(&sk->tw_flags, role, memory_order_relaxed);
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

/* Set the local port (the kernel's inet_num; 0: none), keeping the remote one. Caller holds the
 * socket lock (or owns the socket alone); lookups are ordered by the chain's release store. */
static inline void socktab__sk_set_num(struct socktab_sock *sk, uint16_t num)
{
	WR(sk->portpair, (RD(sk->portpair) & 0xffff) | ((uint32_t)num << 16));
}

/* Set the remote port (network order; 0: none), keeping the local one. As above. */
static inline void socktab__sk_set_dport(struct socktab_sock *sk, uint16_t dport_be)
{
	WR(sk->portpair, (RD(sk->portpair) & 0xffff0000u) | dport_be);
}

static inline uint32_t socktab__sk_rcv_saddr(const struct socktab_sock *sk)
{
	return (uint32_t)(RD(sk->addrpair) >> 32);
}

static inline uint32_t socktab__sk_daddr(const struct socktab_sock *sk)
{
	return (uint32_t)RD(sk->addrpair);
}

/* The local / remote address in IPv6 form: v4-mapped for AF_INET. */
static inline struct in6_addr socktab__sk_v6_saddr(const struct socktab_sock *sk)
{
	struct in6_addr a;

	if (sk->family == AF_INET) {
		socktab__v6_map(&a, socktab__sk_rcv_saddr(sk));
		return a;
	}
	return socktab__v6_load(socktab__sk_v6(sk)->saddr);
}

static inline struct in6_addr socktab__sk_v6_daddr(const struct socktab_sock *sk)
{
	struct in6_addr a;

	if (sk->family == AF_INET) {
		socktab__v6_map(&a, socktab__sk_daddr(sk));
		return a;
	}
	return socktab__v6_load(socktab__sk_v6(sk)->daddr);
}

/* Set the IPv6 form of the addresses; for AF_INET a no-op (addrpair is the address). */
static inline void socktab__sk_set_v6_saddr(struct socktab_sock *sk, const struct in6_addr *a)
{
	if (sk->family == AF_INET6)
		socktab__v6_store(socktab__sk_v6(sk)->saddr, a);
}

static inline void socktab__sk_set_v6_daddr(struct socktab_sock *sk, const struct in6_addr *a)
{
	if (sk->family == AF_INET6)
		socktab__v6_store(socktab__sk_v6(sk)->daddr, a);
}

static inline bool socktab__ipv6_only(const struct socktab_sock *sk)
{
	return sk->family == AF_INET6 && RD(sk->v6only);
}

/*
 * inet_bound_dev_eq() (R92): does a socket bound to device @bound (0: none) take a packet that
 * arrived on @dif, whose L3 master (VRF) is @sdif (0: none)? An unbound socket takes traffic of
 * a VRF only with the protocol's l3mdev_accept sysctl.
 */
static inline bool socktab__bound_dev_eq(bool l3mdev_accept, uint32_t bound, int dif, int sdif)
{
	if (!bound)
		return !sdif || l3mdev_accept;
	return (int)bound == dif || (int)bound == sdif;
}

/* ---- sock.c: the object ---- */
/* The lock of @sk's control calls: a socket's own (in its cold part), so the lines it takes
 * stay with the thread that uses the socket; a TIME_WAIT or request entry's, one of its net's
 * striped locks. No code holds two. */
pthread_mutex_t *socktab__sk_lock(const struct socktab_sock *sk);
/* The socket's lock is held (debug builds). */
#define SOCKTAB__ASSERT_SK_LOCKED(sk) SOCKTAB__ASSERT_LOCKED(socktab__sk_lock(sk))
/* Take a reference unless the count is zero (the socket is dying or in the pool). */
bool socktab__sock_hold_not_zero(struct socktab_sock *sk);
/* Drop a reference (socktab_sock_put() without the free): true when it was the last, and then
 * @sk is FREE and the caller hands it to socktab__pool_free_rcu() or _free_rcu_many(). */
bool socktab__sock_unref(struct socktab_sock *sk);
/* Reset every field of a socket fresh from the pool. */
void socktab__sock_init_fields(struct socktab_sock *sk);

/* ---- socket.c: for the entry points only ---- */
/* Lock @sk for a public call: 0 with the socket lock held; -EINVAL for NULL, -EBADF (and not
 * locked) when it is closed or is a TIME_WAIT entry. */
int socktab__sk_lock_open(struct socktab_sock *sk);

#endif /* SOCKTAB_SRC_SOCK_H */
