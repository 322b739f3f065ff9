/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The socket object (struct socktab_sock) and its field helpers. A socket comes from its net's
 * type-stable pool (pool.c) and serves as a TCP socket, a TIME_WAIT entry or a UDP socket.
 * Lock legend: common.h.
 */
#ifndef SOCKTAB_SRC_SOCK_H
#define SOCKTAB_SRC_SOCK_H

#include "common.h"

#define SOCKTAB__FREE 0 /* state of a socket that sits in the pool */

/* sk->userlocks bits (kernel names). */
#define SOCKTAB__BINDADDR_LOCK 0x4
#define SOCKTAB__BINDPORT_LOCK 0x8
#define SOCKTAB__CONNECT_BIND 0x80

struct socktab__tb2;
struct socktab__reuseport;

struct socktab_sock {
	/* Cache line 0: everything the established lookup reads (R77). */
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
	_Atomic uint8_t freebind;          /* (s) IP_FREEBIND / IPV6_FREEBIND (one flag, R87) */
	_Atomic uint8_t transparent;       /* (s) IP_TRANSPARENT / IPV6_TRANSPARENT */
	uint8_t broadcast;                 /* (s) SO_BROADCAST (UDP sends) */
	uint8_t saddr_any;                 /* (s) bound to an IPv4 broadcast/multicast address: it
					    * names the socket but is no source (inet_saddr = 0) */
	uint8_t userlocks;                 /* (s) SOCKTAB__*_LOCK, CONNECT_BIND */
	uint8_t linger_on;                 /* (s) SO_LINGER */
	uint8_t tw_ts;                     /* (c) TIME_WAIT entry recorded a peer timestamp */
	_Atomic uint8_t tw_substate;       /* (t, read without it) TIME_WAIT entry: SOCKTAB_TCP_FIN_WAIT2
					    * or _TIME_WAIT */
	uint8_t on_twlist;                 /* (t) TIME_WAIT entry still on the net's list */
	uint8_t in_pool;                   /* (p) on the pool's free list */
	int rss_queue;                     /* (s) RSS queue wanted for replies, -1: any (rss.c) */
	uint8_t sock_connected;            /* (s) socket-level SS_CONNECTED: set once established,
					    * cleared only by connect(AF_UNSPEC); connect() then says EISCONN */
	uint16_t sport;                    /* (s) port getsockname reports (kernel inet_sport): kept
					    * after the port is given back by a reset or disconnect */
	struct rcu_head rcu;               /* back to the pool after a grace period */
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
	/* ---- UDP (udp.c). A UDP socket uses `node` above for its hash2 chain (it is never in
	 * ehash or lhash2). (u) = written under the primary slot lock of its port. ---- */
	struct socktab__hnode udp_node1;   /* (r,u) primary (port) chain */
	struct socktab__hnode udp_node4;   /* (r,u) hash4 (4-tuple) chain, nulls protocol */
	_Atomic uint32_t udp_hash4;        /* (r,u) R9 hash of the 4-tuple while in hash4 */
	uint32_t udp_slot2;                /* (u) hash2 slot while hashed */
	_Atomic uint8_t udp_v6only;        /* (r,u) v6only as lookups see it (set before hashing) */
	_Atomic uint8_t udp_rp_conns;      /* (r, reuseport lock) R36: the group had a connect() */
	uint8_t udp_hashed4;               /* (u) in hash4 */
	/* Caller data follows, aligned to 16 bytes. */
	_Alignas(16) unsigned char priv[];
};

/* Chains link sockets by their first member: a node pointer is the socket pointer. */
static inline struct socktab_sock *socktab__node_sk(uintptr_t p)
{
	return (struct socktab_sock *)p;
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

/* The socket's lock is held (debug builds). */
#define SOCKTAB__ASSERT_SK_LOCKED(sk) SOCKTAB__ASSERT_LOCKED(&(sk)->lock)

/* ---- sock.c ---- */
/* Take a reference unless the count is zero (the socket is dying or in the pool). */
bool socktab__sock_hold_not_zero(struct socktab_sock *sk);
/* Reset every field of a socket fresh from the pool. */
void socktab__sock_init_fields(struct socktab_sock *sk, struct socktab_net *net, int family);
/* tcp_done(): leave the tables, keep the addresses. Caller holds the socket lock. */
void socktab__sk_done(struct socktab_net *net, struct socktab_sock *sk);

#endif /* SOCKTAB_SRC_SOCK_H */
