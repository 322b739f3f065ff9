/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The UDP table (udp.c; R16): hash by port, hash2 by (address, port) with hash4_cnt in its
 * slot, mask + 1 slots each, and hash4 by 4-tuple, mask4 + 1 slots (mask + 1 unless the net's
 * udp_hash4_entries asked for more or fewer); one allocation. Lock legend: common.h.
 */
#ifndef SOCKTAB_SRC_UDP_H
#define SOCKTAB_SRC_UDP_H

#include "net.h"

/* Slots are heads and counts; their locks are striped, one array per table, as bhash's are
 * (net.h): no code holds two slot locks of one table. (lock) = the slot's stripe. */
struct socktab__uslot {
	struct socktab__hhead head;        /* (r, lock) */
	_Atomic uint32_t count;            /* (r, lock) */
};

struct socktab__uslot2 {
	/* 16 bytes, 16-aligned (R79): head and hash4_cnt share a line in every slot, so a lookup
	 * reads both with one miss. */
	_Alignas(16) struct socktab__hhead head; /* (r, lock) */
	_Atomic uint32_t count;            /* (r, lock) */
	_Atomic uint32_t hash4_cnt;        /* (r, lock) members also in hash4 */
};
#define SOCKTAB__UDP_LOCKS 256 /* stripes per UDP table, at most one per slot */

struct socktab__udp_table {
	uint32_t mask;                     /* (c) */
	uint32_t log;                      /* (c) log2(mask + 1) */
	uint32_t mask4;                    /* (c) hash4's slots - 1 */
	uint32_t ehash_secret;             /* (c) R9 udp_ehash_secret */
	uint32_t ehash6_secret;            /* (c) R9 udp6_ehash_secret */
	uint32_t ipv6_hash_secret;         /* (c) R9 udp_ipv6_hash_secret */
	_Atomic uint8_t hash4_on;          /* (a) lookups consult hash4 (benchmark switch) */
	struct socktab__uslot *hash;       /* (c) by port */
	struct socktab__uslot2 *hash2;     /* (c) by (address, port) */
	struct socktab__uslot *hash4;      /* (c) by 4-tuple */
	struct socktab__stripes hash_locks;  /* (c) by slot, as the two below */
	struct socktab__stripes hash2_locks; /* (c) */
	struct socktab__stripes hash4_locks; /* (c) */
};

/* The locks of a primary (port), hash2 and hash4 slot. */
static inline pthread_mutex_t *socktab__uslot1_lock(const struct socktab__udp_table *t,
						    const struct socktab__uslot *s)
{
	return socktab__stripe(&t->hash_locks, (uint32_t)(s - t->hash));
}

static inline pthread_mutex_t *socktab__uslot2_lock(const struct socktab__udp_table *t,
						    const struct socktab__uslot2 *s)
{
	return socktab__stripe(&t->hash2_locks, (uint32_t)(s - t->hash2));
}

static inline pthread_mutex_t *socktab__uslot4_lock(const struct socktab__udp_table *t,
						    const struct socktab__uslot *s)
{
	return socktab__stripe(&t->hash4_locks, (uint32_t)(s - t->hash4));
}
#define SOCKTAB__UDP1_NULLS_BASE (3u << 29) /* nulls values: never an ehash or lhash2 slot's */
#define SOCKTAB__UDP2_NULLS_BASE (2u << 29)

/* The datagram walk is socktab_lookup_udp4_rcu() / _6_rcu() itself (socktab/lookup.h, R68-R76,
 * R79): not referenced, inside the caller's RCU read-side section. */

/* The key of one datagram's lookup (udp.c), with the hashes made for it once made. */
struct socktab__udp_key {
	struct socktab_net *net;
	bool v6;
	uint8_t made;               /* SOCKTAB__UDPK_*: which of slot2 and h4 are made */
	uint16_t hnum;              /* local port, host order */
	uint16_t sport;             /* remote port, network order */
	uint32_t saddr, daddr;      /* IPv4 */
	struct in6_addr saddr6, daddr6;
	int dif, sdif;              /* ingress device and its L3 master */
	bool l3mdev_accept;         /* net.ipv4.udp_l3mdev_accept, when sdif is set */
	bool tcp_l3mdev_accept;     /* hash4's inet_match reads the TCP one */
	int cpu;                    /* the receiving CPU once asked, else SOCKTAB__CPU_UNASKED */
	uint32_t slot2;             /* the hash2 slot of the pass's local address */
	uint32_t h4;                /* udp_ehashfn of the pass's 4-tuple: hash4's and reuseport's */
};
#define SOCKTAB__UDPK_SLOT2 1u
#define SOCKTAB__UDPK_H4 2u
/* The key's hash4 pass was made and missed (a batch's walk reached its chain's end): its next
 * lookup goes on from the hash2 pass, once. */
#define SOCKTAB__UDPK_NO4 4u

/*
 * A batch's pipeline (lookup.c), a step per datagram at a time: socktab__udp_prefetch() builds
 * the key of its lookup into @pre (@v6: the addresses are struct in6_addr, else uint32_t), makes
 * its hashes (the hash2 slot of its destination, the 4-tuple's hash, which is also the reuseport
 * hash) and starts the misses of both slots. Once those are in, socktab__udp_walk4_start()
 * returns the first hash4 entry when the hash2 slot says hash4 holds connected sockets, with the
 * miss of its socket's line started (the socket's address follows from the entry's:
 * socktab__udp_ext_sk()), and of the entry's own link where the slot counts more than one
 * entry; 0 when the datagram takes the whole lookup instead. Once an entry's lines are in,
 * socktab__udp_walk4_step() matches it by its socket (*@at must be an entry start or a step
 * returned): the socket, which is what lookup4_rcu() returns, or NULL with *@at the next entry,
 * whose misses it started, or with *@at 0 when the chain ended: the datagram then takes the
 * whole lookup, from the hash2 pass where the walk ended on its own chain's marker, from hash4
 * again where it ran into another chain's (or the key is not @net's).
 * socktab__udp_lookup_pre_rcu() is that whole lookup, socktab_lookup_udp4/6_rcu() on the key
 * (it may be called again on the same @pre, as a retry of the same datagram). A walk and a whole
 * lookup each return what the single lookup would at some instant of the call. Caller is inside
 * an RCU read-side section; with bad arguments socktab__udp_prefetch() does nothing,
 * socktab__udp_walk4_start() returns 0 and socktab__udp_lookup_pre_rcu() NULL.
 */
struct socktab__udp_pre {
	struct socktab__udp_key k;
};
void socktab__udp_prefetch(struct socktab_net *net, bool v6, const void *saddr, uint16_t sport,
			   const void *daddr, uint16_t dport, int dif, int sdif,
			   struct socktab__udp_pre *pre);
uintptr_t socktab__udp_walk4_start(struct socktab_net *net, struct socktab__udp_pre *pre);
struct socktab_sock *socktab__udp_walk4_step(struct socktab_net *net, struct socktab__udp_pre *pre,
					     uintptr_t *at);
struct socktab_sock *socktab__udp_lookup_pre_rcu(struct socktab_net *net,
						 struct socktab__udp_pre *pre);

/* A table of @entries slots per hash, hash4 of @entries4 (0: @entries); each rounded up to a
 * power of two, at least 128. */
struct socktab__udp_table *socktab__udp_table_new(struct socktab_net *net, uint32_t entries,
						  uint32_t entries4, int hash4_on);
void socktab__udp_table_free(struct socktab__udp_table *t);
void socktab__udp_init_sock(struct socktab_sock *sk);
/* The UDP halves of the public socket calls (same contexts). */
/* udp_lib_get_port: take port @snum (0: choose one) and hash @sk. Caller holds the socket lock. */
int socktab__udp_get_port(struct socktab_net *net, struct socktab_sock *sk, uint16_t snum);
/* connect() of a UDP socket (R73-R75); AF_UNSPEC disconnects. Caller holds the socket lock of
 * an open socket. */
int socktab__udp_connect_locked(struct socktab_sock *sk, const struct sockaddr *addr,
				socklen_t len);
/* close(): out of every chain and the group, state FREE; the caller drops the reference after
 * unlocking. Caller holds the socket lock of an open socket. */
/* sock_bindtoindex_locked()'s rehash (udp_lib_rehash): @sk leaves its reuseport group, and its
 * hash4 entry moves to the 4-tuple it has now. Caller holds the socket lock. */
void socktab__udp_rehash(struct socktab_sock *sk);
void socktab__udp_close_locked(struct socktab_sock *sk);
/* socktab_udp_sendto() after its lock: autobind, the destination, the route and source.
 * Caller holds the socket lock of an open UDP socket. */
int socktab__udp_sendto_locked(struct socktab_sock *sk, const struct sockaddr *dst, socklen_t len,
			       struct sockaddr_storage *src, struct sockaddr_storage *to);

/* Tests only: called as a UDP connect() starts rewriting the socket's key (udp.c). */
extern void (*_Atomic socktab__udp_connect_hook)(struct socktab_sock *sk);

#endif /* SOCKTAB_SRC_UDP_H */
