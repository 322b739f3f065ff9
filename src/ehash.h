/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ehash membership and 4-tuple uniqueness (ehash.c), and connect()'s port choice that inserts
 * into it (connect.c).
 */
#ifndef SOCKTAB_SRC_EHASH_H
#define SOCKTAB_SRC_EHASH_H

#include "net.h"

/* Link @sk (key and hash written) into its slot. Caller holds the ehash lock of sk->hash. */
void socktab__ehash_insert_locked(struct socktab__tables *t, struct socktab_sock *sk);
/* @new takes hashed @old's place (same 4-tuple and hash) with one store. Caller holds the ehash
 * lock of the hash. */
void socktab__ehash_replace_locked(struct socktab__tables *t, struct socktab_sock *old,
				   struct socktab_sock *new);
/* Unlink hashed @sk. Caller holds the ehash lock of sk->hash. */
void socktab__ehash_del_locked(struct socktab__tables *t, struct socktab_sock *sk);
/* Unlink @sk if it is hashed; takes the ehash lock. */
void socktab__ehash_remove(struct socktab__tables *t, struct socktab_sock *sk);
bool socktab__ehash_hashed(const struct socktab_sock *sk);

/*
 * The net part of a key (R11, R13), evaluated after the rest of the key matched: the tags in the
 * socket's line and the net's first line, unique among the nets of the tables (a net with its
 * own tables and all its sockets have tag 1). Only a net past the 255th of its tables has tag 0
 * and compares net pointers, which are in the slab header.
 */
static inline bool socktab__ehash_net_match(const struct socktab_sock *sk,
					    const struct socktab_net *net)
{
	if (net->tag)
		return sk->net_tag == net->tag;
	return socktab__sk_net(sk) == net;
}

/* Return values of the 4-tuple checks (R24, R56). */
enum { SOCKTAB__UNIQUE = 0, SOCKTAB__NOT_UNIQUE = 1 };
int socktab__check_established_rcu(struct socktab_net *net, struct socktab_sock *sk,
				   uint16_t lport, uint32_t hash);
int socktab__check_established_locked(struct socktab_net *net, struct socktab_sock *sk,
				      uint16_t lport, uint32_t hash, bool port_was_bound,
				      struct socktab_sock **twp);
/*
 * The same check and insertion for a passive entry (a child or a request on its listener's port,
 * which the port_was_bound rule covers), holding no bhash lock: the ehash lock makes the check
 * and the insertion one step. A TIME_WAIT entry returned in *@twp is out of ehash but still in
 * its bind bucket until the caller's socktab__tw_takeover_locked(), under the bhash lock; the
 * reaper may kill it first, which that call allows for.
 */
int socktab__ehash_insert_passive(struct socktab_net *net, struct socktab_sock *sk, uint16_t lport,
				  uint32_t hash, struct socktab_sock **twp);

/* The device part of a key: the ingress device and its L3 master, and whether unbound sockets
 * take VRF traffic (net.ipv4.tcp_l3mdev_accept, read only when the packet came through one). */
struct socktab__dev_key {
	int dif, sdif;
	bool l3mdev_accept;
};

static inline struct socktab__dev_key socktab__dev_key(const struct socktab_net *net, int dif,
						       int sdif)
{
	struct socktab__dev_key d = { dif, sdif, sdif && RD(net->tcp_l3mdev_accept) };

	return d;
}

static inline bool socktab__dev_match(const struct socktab_sock *sk,
				      const struct socktab__dev_key *d)
{
	return socktab__bound_dev_eq(d->l3mdev_accept, RD(sk->bound_dev_if), d->dif, d->sdif);
}

/* inet_match(): the IPv4 key, then the device (R26, R92). */
static inline __attribute__((always_inline)) bool
socktab__match4(const struct socktab_sock *sk, const struct socktab_net *net, uint64_t acookie,
		uint32_t ports, const struct socktab__dev_key *d)
{
	return RD(sk->portpair) == ports && RD(sk->addrpair) == acookie && RD(sk->v4key) &&
	       socktab__dev_match(sk, d) && socktab__ehash_net_match(sk, net);
}

static inline bool socktab__v6eq(const _Atomic uint64_t a[2], const uint64_t b[2])
{
	return RD(a[0]) == b[0] && RD(a[1]) == b[1];
}

/* inet6_match(). */
static inline __attribute__((always_inline)) bool
socktab__match6(const struct socktab_sock *sk, const struct socktab_net *net,
		const uint64_t remote[2], const uint64_t local[2], uint32_t ports,
		const struct socktab__dev_key *d)
{
	if (RD(sk->portpair) != ports || RD(sk->v4key) || sk->family != AF_INET6)
		return false;
	const struct socktab__v6key *k = socktab__sk_v6(sk);

	return socktab__v6eq(k->daddr, remote) && socktab__v6eq(k->saddr, local) &&
	       socktab__dev_match(sk, d) && socktab__ehash_net_match(sk, net);
}

/* A lookup key, assembled once per lookup (R26). */
struct socktab__lookup_key {
	uint32_t ports;
	bool v6;
	uint64_t acookie;            /* IPv4 */
	uint64_t remote[2], local[2]; /* IPv6 */
	struct socktab__dev_key dev;
};

static inline __attribute__((always_inline)) bool
socktab__key_match(const struct socktab_sock *sk, const struct socktab_net *net,
		   const struct socktab__lookup_key *k)
{
	return k->v6 ? socktab__match6(sk, net, k->remote, k->local, k->ports, &k->dev)
		     : socktab__match4(sk, net, k->acookie, k->ports, &k->dev);
}

/* The first entry of @slot's chain (an acquire load that pairs with the writers' release). The
 * caller's next access is most likely that entry's caller area, the line after the socket's:
 * start that miss now, beside the socket's own, instead of after it. */
static inline __attribute__((always_inline)) uintptr_t
socktab__ehash_first_rcu(struct socktab_net *net, uint32_t slot)
{
	uintptr_t p = socktab__chead_load(&net->ehash[slot].head, memory_order_acquire);

	if (net->has_priv && !socktab__is_nulls(p))
		__builtin_prefetch((const char *)p + sizeof(struct socktab_sock));
	return p;
}

/*
 * R21: the lock-free walk of the chain of @hash for @k, from its first entry @p (loaded by
 * socktab__ehash_first_rcu(): the burst lookup loads it ahead of the walk). Returns the match,
 * not referenced, or NULL. Caller is inside an RCU read-side section, which keeps the result
 * valid until it ends (every entry is freed after a grace period).
 *
 * A caller that pins the result takes a reference with increment-if-not-zero, and a match whose
 * count already reached zero is dying: every entry leaves the chain before its last reference
 * goes (close and the reaper unlink first), so its 4-tuple has either gone or moved to the entry
 * that replaced it in place: the TIME_WAIT entry of a closing socket, or the socket that took a
 * TIME_WAIT entry over. The caller then walks again from the head (lookup.c), where the dying
 * entry can no longer be met, instead of reporting "not found" for a live connection.
 */
static inline __attribute__((always_inline)) struct socktab_sock *
socktab__ehash_walk_rcu(struct socktab_net *net, uint32_t hash,
			const struct socktab__lookup_key *k, uintptr_t p)
{
	uint32_t slot = hash & net->ehash_mask;
	struct socktab_sock *sk;

	for (;;) {
		for (; !socktab__is_nulls(p);
		     p = atomic_load_explicit(&socktab__node_sk(p)->node.next, memory_order_acquire)) {
			sk = socktab__node_sk(p);
			if (RD(sk->hash) != hash)
				continue;
			if (socktab__key_match(sk, net, k))
				return sk;
			/* The entry may have given its port back after it was replaced (nulls.h,
			 * socktab__hnode_replace_rcu): an acquire load of the key pairs with that
			 * release store, so the next link read leads to the replacement (a plain
			 * load on x86, from a line already in the cache). */
			(void)atomic_load_explicit(&sk->portpair, memory_order_acquire);
		}
		if (socktab__nulls_value(p) == slot)
			return NULL;
		/* Ended on another slot's chain: a node we stood on was moved. Walk again. */
		p = socktab__ehash_first_rcu(net, slot);
	}
}

/*
 * One step of socktab__ehash_walk_rcu() on the entry @p (not a nulls marker), for a caller that
 * walks a chain in steps (the burst lookup starts the miss on the next entry and walks on
 * later): @p's socket if it matches @k, else NULL with *@next loaded as the walk loads it. The
 * walk from *@next (socktab__ehash_walk_rcu) then finishes the same walk.
 */
static inline __attribute__((always_inline)) struct socktab_sock *
socktab__ehash_step_rcu(struct socktab_net *net, uint32_t hash, const struct socktab__lookup_key *k,
			uintptr_t p, uintptr_t *next)
{
	struct socktab_sock *sk = socktab__node_sk(p);

	if (RD(sk->hash) == hash) {
		if (socktab__key_match(sk, net, k))
			return sk;
		(void)atomic_load_explicit(&sk->portpair, memory_order_acquire); /* as the walk */
	}
	*next = atomic_load_explicit(&sk->node.next, memory_order_acquire);
	return NULL;
}

/* The walk from the head of @hash's chain. Caller is inside an RCU read-side section. */
static inline __attribute__((always_inline)) struct socktab_sock *
socktab__ehash_lookup_rcu(struct socktab_net *net, uint32_t hash,
			  const struct socktab__lookup_key *k)
{
	uintptr_t first = socktab__ehash_first_rcu(net, hash & net->ehash_mask);

	return socktab__ehash_walk_rcu(net, hash, k, first);
}

/* The IPv4 key of a segment from @saddr:@sport to @daddr:@dport (ports in network order). The
 * IPv6 fields are zeroed though nothing reads them: where the walk is inlined with k->v6 known
 * false the stores are dead and go, and a build that cannot see that (gcc with ASan) does not
 * take them for uninitialized reads. */
static inline __attribute__((always_inline)) void
socktab__ehash_key4_fill(struct socktab_net *net, uint32_t saddr, uint16_t sport, uint32_t daddr,
			 uint16_t dport, int dif, int sdif, struct socktab__lookup_key *k)
{
	k->v6 = false;
	k->ports = (uint32_t)sport | ((uint32_t)ntohs(dport) << 16);
	k->acookie = (uint64_t)saddr | ((uint64_t)daddr << 32);
	k->remote[0] = k->remote[1] = k->local[0] = k->local[1] = 0;
	k->dev = socktab__dev_key(net, dif, sdif);
}

/* The IPv4 key (socktab__ehash_key4_fill) and its ehash hash. */
static inline __attribute__((always_inline)) uint32_t
socktab__ehash_key4(struct socktab_net *net, uint32_t saddr, uint16_t sport, uint32_t daddr,
		    uint16_t dport, int dif, int sdif, struct socktab__lookup_key *k)
{
	socktab__ehash_key4_fill(net, saddr, sport, daddr, dport, dif, sdif, k);
	return socktab__ehashfn4(net, daddr, ntohs(dport), saddr, sport);
}

/* The IPv6 key and its hash; a v4-mapped pair on both sides is keyed as IPv4 (R5). */
uint32_t socktab__ehash_key6(struct socktab_net *net, const struct in6_addr *saddr, uint16_t sport,
			     const struct in6_addr *daddr, uint16_t dport, int dif, int sdif,
			     struct socktab__lookup_key *k);

/* connect.c: choose @sk's local port (or check its bound one) and insert it into ehash.
 * Caller holds the socket lock. */
int socktab__hash_connect(struct socktab_net *net, struct socktab_sock *sk);

#endif /* SOCKTAB_SRC_EHASH_H */
