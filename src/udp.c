/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UDP: the kernel's udp_table (hash, hash2, hash4), the table side of bind()/autobind,
 * connect()/disconnect, close and sendto() (the calls themselves, and the socket lock, are
 * socket.c's), and the RCU walk of the packet-path lookup. Rule numbers: docs/rules.md.
 *
 * Tables (R16, R17, R82): one allocation per net holding three arrays, of mask + 1 slots but
 * hash4's mask4 + 1 (the kernel's hash4 has hash2's size; a net may ask for another):
 *   hash[(port + mix) & mask]            by local port (R8); chain link socktab__sk_udp(sk)->node1;
 *   hash2[portaddr_hash(addr, port)]     by (local address, port) (R7); chain link sk->node, and
 *                                        the slot keeps hash4_cnt beside its head (R79);
 *   hash4[udp_ehashfn(4-tuple) & mask4] connected sockets by 4-tuple (R9, R73); the UDP part's
 *                                        node4.
 * Every chain is an hlist_nulls (nulls.h). Values: hash4 slot i ends in i (R16); hash2 and hash
 * add their own bases: a reader carried to another chain of the same table by a rehash or a
 * re-connect notices it at the chain's end and restarts.
 * Each slot has a count; all are at least 128 slots (the kernel's per-netns minimum).
 *
 * Locks: the primary slot lock of a port guards every hash change of the sockets on that port
 * (bind, connect's rehash, hash4 insert/remove, unhash, reuseport membership), as in the kernel
 * (R81); hash2 and hash4 slot locks are taken inside it, only around their own chain edits,
 * because chains are shared by ports. Order: socket lock -> primary slot -> reuseport lock ->
 * hash2 slot -> hash4 slot. Counts are atomics so lookups and statistics read them lock-free.
 *
 * Lookup (R71, R72): under RCU, no lock. If the hash2 slot of (daddr, dport) counts hash4
 * members, walk the hash4 chain with an exact 4-tuple match; then score the exact-address hash2
 * chain, the wildcard chain, and last the port chain. Scoring, reuseport hand-over (R33, R35) and
 * has_conns rescoring (R36) follow the kernel; ties keep the earlier chain entry. UDP sockets are
 * SOCK_RCU_FREE (R23): walks take no reference; the public lookup (lookup.c) pins its result
 * with increment-if-not-zero and starts again if it is dying. hash2 and hash4 walks restart when they
 * end on another slot's nulls value (a connect() or disconnect moved the node under them).
 *
 * bind (R68-R70), connect (R73-R74, R76), disconnect (R75) and close follow the kernel, including
 * two quirks the conformance corpus shows: an explicit-port conflict scan stops at the first
 * overlapping socket (if that one excuses the bind through SO_REUSEPORT, later ones are not
 * looked at; the port chain holds AF_INET6 SO_REUSEPORT sockets at its tail and all others at
 * its head, R103, so that order depends on family and SO_REUSEPORT; the kernel variant
 * udp_bind_all_owners looks on past the sockets that excuse the bind, and with
 * udp_bind_mate_stops stops at one whose group the socket would join), and a socket that
 * connected and disconnected is no longer in its reuseport group.
 *
 * Devices (R92): a socket bound to a device scores only for datagrams that arrived on it or its
 * VRF (udp_sk_bound_dev_eq, with udp_l3mdev_accept); a hash4 match checks it with
 * tcp_l3mdev_accept, as the kernel's inet_match does.
 *
 * SO_INCOMING_CPU (R106): a socket bound to the lookup's CPU scores one more, and a group prefers
 * such members (reuseport.c); the CPU is asked for only when a scored socket has the option set.
 * A connected socket the lookup returns takes the lookup's CPU as its value (R107), wherever the
 * lookup found it (hash4, or scored in hash2).
 *
 * The dispatch hook (R125, sk_lookup.c) runs after the exact-address hash2 pass unless that found
 * a connected socket, before the pass's unconnected result and the wildcard pass, as the kernel's
 * sk_lookup programs do.
 *
 * A socket in hash4 that connects again with a source address it had is not rehashed: its
 * hash4 entry stays in the chain of its old 4-tuple (stale), where a lookup of the old 4-tuple
 * no longer matches it, as in the kernel (R74); so does a disconnect that keeps both its address
 * and its port (R75). A lookup for its new 4-tuple then finds it in hash2 only, where a
 * reuseport group met first may take the datagram, unless the new 4-tuple falls in the same
 * hash4 slot as the old one: entries are matched by their socket's fields as they are now.
 * SO_BINDTODEVICE rehashes: the socket leaves its reuseport group and its hash4 entry moves to
 * the 4-tuple it has (socktab__udp_rehash).
 *
 * Departures: the reuseport has_conns flag (R36) is kept on every member instead of on the
 * group, because the group structure is shared with TCP listeners (reuseport.c); the UDP
 * secrets are derived from the net's secrets. The hash4 switch (socktab_net_set_udp_hash4) only
 * stops lookups from consulting hash4: entries are still maintained, so turning it back on is
 * instant.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "socktab/feed.h"

#include "hash.h"
#include "addr.h"
#include "bind.h"
#include "dev.h"
#include "reuseport.h"
#include "sk_lookup.h"
#include "udp.h"

#define PORTS_PER_CHAIN (65536 / 128)   /* bits in the bind(0) bitmap (R69) */

/* ---- table ---- */

static uint32_t udp_mix(uint32_t a, uint32_t b, uint32_t c)
{
	return socktab__jhash_3words(a, b, c, 0x75647034u); /* "udp4" */
}

struct socktab__udp_table *socktab__udp_table_new(struct socktab_net *net, uint32_t entries,
						  uint32_t entries4, int hash4_on)
{
	struct socktab__udp_table *t;
	uint32_t n = 128, log = 7, n4 = 128;
	size_t hdr = (sizeof(*t) + SOCKTAB__CACHELINE - 1) & ~(size_t)(SOCKTAB__CACHELINE - 1);
	unsigned char *mem;

	while (n < entries) {
		n <<= 1;
		log++;
	}
	while (n4 < (entries4 ? entries4 : n))
		n4 <<= 1;
	size_t bytes = hdr + n * (sizeof(struct socktab__uslot) + sizeof(struct socktab__uslot2)) +
		       n4 * sizeof(struct socktab__uslot);
	/* A large table is 2 MiB-aligned and offered to transparent huge pages, as ehash is: each
	 * lookup's hash4 slot miss would otherwise pay a page-table walk too. */
	size_t align = bytes >= (2u << 20) ? (2u << 20) : SOCKTAB__CACHELINE;

	if (posix_memalign((void **)&mem, align, bytes))
		return NULL;
	if (align > SOCKTAB__CACHELINE)
		(void)madvise(mem, bytes, MADV_HUGEPAGE); /* a hint: failure costs speed */
	t = (struct socktab__udp_table *)mem;
	memset(t, 0, sizeof(*t));
	t->mask = n - 1;
	t->log = log;
	t->mask4 = n4 - 1;
	uint32_t nl = n < SOCKTAB__UDP_LOCKS ? n : SOCKTAB__UDP_LOCKS;
	uint32_t nl4 = n4 < SOCKTAB__UDP_LOCKS ? n4 : SOCKTAB__UDP_LOCKS;

	if (socktab__stripes_init(&t->hash_locks, nl, 0) ||
	    socktab__stripes_init(&t->hash2_locks, nl, 0) ||
	    socktab__stripes_init(&t->hash4_locks, nl4, 0)) {
		socktab__stripes_free(&t->hash_locks);
		socktab__stripes_free(&t->hash2_locks);
		socktab__stripes_free(&t->hash4_locks);
		free(mem);
		return NULL;
	}
	/* hash2 first: its 16-byte slots stay 16-aligned after the line-aligned header. */
	t->hash2 = (struct socktab__uslot2 *)(mem + hdr);
	t->hash = (struct socktab__uslot *)(t->hash2 + n);
	t->hash4 = t->hash + n;
	for (uint32_t i = 0; i < n; i++) {
		socktab__hhead_init(&t->hash[i].head, SOCKTAB__UDP1_NULLS_BASE + i);
		atomic_init(&t->hash[i].count, 0);
		socktab__hhead_init(&t->hash2[i].head, SOCKTAB__UDP2_NULLS_BASE + i);
		atomic_init(&t->hash2[i].count, 0);
		atomic_init(&t->hash2[i].hash4_cnt, 0);
	}
	for (uint32_t i = 0; i < n4; i++) {
		socktab__hhead_init(&t->hash4[i].head, i);
		atomic_init(&t->hash4[i].count, 0);
	}
	/* R6: the kernel draws the UDP secrets at random once; derive them from the net's so a
	 * fixed_secret net stays reproducible. */
	t->ehash_secret = udp_mix(net->ehash_secret, net->hash_mix, 1);
	t->ehash6_secret = udp_mix(net->ehash6_secret, net->hash_mix, 2);
	t->ipv6_hash_secret = udp_mix(net->ipv6_hash_secret, net->hash_mix, 3);
	atomic_init(&t->hash4_on, hash4_on != 0);
	return t;
}

void socktab__udp_table_free(struct socktab__udp_table *t)
{
	if (!t)
		return;
	socktab__stripes_free(&t->hash_locks);
	socktab__stripes_free(&t->hash2_locks);
	socktab__stripes_free(&t->hash4_locks);
	free(t);
}

/* ---- hashes (R7, R8, R9) ---- */

static struct socktab__uslot *slot1(struct socktab_net *net, uint16_t port)
{
	return &net->udp->hash[((uint32_t)port + net->hash_mix) & net->udp->mask];
}

static uint32_t slot2_index(const struct socktab_net *net, const struct in6_addr *a, uint16_t port)
{
	return socktab__portaddr_hash(net, a, port) & net->udp->mask;
}

static uint32_t udp_ehashfn4(const struct socktab_net *net, uint32_t laddr, uint16_t lport,
			     uint32_t faddr, uint16_t fport_be)
{
	return socktab__jhash_3words(laddr, faddr, ((uint32_t)lport << 16) | fport_be,
				     net->udp->ehash_secret + net->hash_mix);
}

static uint32_t udp_ehashfn6(const struct socktab_net *net, const struct in6_addr *laddr,
			     uint16_t lport, const struct in6_addr *faddr, uint16_t fport_be)
{
	uint32_t fh = socktab__jhash2(faddr->s6_addr32, 4, net->udp->ipv6_hash_secret);

	return socktab__jhash_3words(laddr->s6_addr32[3], fh, ((uint32_t)lport << 16) | fport_be,
				     net->udp->ehash6_secret + net->hash_mix);
}

static uint32_t sk_hash4(const struct socktab_net *net, const struct socktab_sock *sk)
{
	if (RD(sk->v4key))
		return udp_ehashfn4(net, socktab__sk_rcv_saddr(sk), socktab__sk_num(sk),
				    socktab__sk_daddr(sk), socktab__sk_dport(sk));
	struct in6_addr l = socktab__sk_v6_saddr(sk), f = socktab__sk_v6_daddr(sk);

	return udp_ehashfn6(net, &l, socktab__sk_num(sk), &f, socktab__sk_dport(sk));
}

/*
 * inet_use_hash2_on_bind: may a crowded port's bind look at the address chains alone? Not for
 * a wildcard socket, where the port chain is scanned: 0.0.0.0, ::, and also ::ffff:0.0.0.0
 * (a v4-mapped address counts by its IPv4 part, R103).
 */
static bool use_hash2_on_bind(const struct socktab_sock *sk)
{
	struct in6_addr a = socktab__sk_v6_saddr(sk);

	if (sk->family == AF_INET6 && !socktab__v6_is_mapped(&a))
		return !socktab__v6_is_any(&a);
	return socktab__v6_is_mapped(&a) ? a.s6_addr32[3] != 0 : socktab__sk_rcv_saddr(sk) != 0;
}

/* The UDP part of a hash4 chain node (primary chain nodes live there too). */
static const struct socktab__udp_ext *ext_of_node4(uintptr_t p)
{
	return (const struct socktab__udp_ext *)((char *)p - offsetof(struct socktab__udp_ext, node4));
}

static struct socktab_sock *sk_of_node1(uintptr_t p)
{
	return socktab__udp_ext_sk(
		(const struct socktab__udp_ext *)((char *)p - offsetof(struct socktab__udp_ext, node1)));
}

/* ---- lookup (R71, R72) ---- */

/* R71, IPv4: -1 unless the socket may take the datagram; higher is a better match. */
static int score4(const struct socktab_sock *sk, struct socktab__udp_key *k, uint8_t f)
{
	uint64_t ap;
	uint32_t pp;
	int sc;

	/* v6only changes only while the socket is out of the tables (sockopt.c). */
	if ((RD(sk->portpair) >> 16) != k->hnum || socktab__ipv6_only(sk))
		return -1;
	ap = RD(sk->addrpair);
	if ((uint32_t)(ap >> 32) != k->daddr)
		return -1;
	sc = sk->family == AF_INET ? 2 : 1;
	if ((uint32_t)ap) {
		if ((uint32_t)ap != k->saddr)
			return -1;
		sc += 4;
	}
	pp = RD(sk->portpair) & 0xffff;
	if (pp) {
		if (pp != k->sport)
			return -1;
		sc += 4;
	}
	if (!socktab__bound_dev_eq(k->l3mdev_accept, RD(sk->bound_dev_if), k->dif, k->sdif))
		return -1;
	if (RD(sk->bound_dev_if))
		sc += 4;
	return sc + socktab__incpu_match(socktab__sk_incpu_hint(sk, f), &k->cpu);
}

/* R71, IPv6. */
static int score6(const struct socktab_sock *sk, struct socktab__udp_key *k, uint8_t f)
{
	struct in6_addr a;
	uint32_t pp;
	int sc = 0;

	if ((RD(sk->portpair) >> 16) != k->hnum || sk->family != AF_INET6)
		return -1;
	a = socktab__sk_v6_saddr(sk);
	if (memcmp(&a, &k->daddr6, 16))
		return -1;
	pp = RD(sk->portpair) & 0xffff;
	if (pp) {
		if (pp != k->sport)
			return -1;
		sc++;
	}
	a = socktab__sk_v6_daddr(sk);
	if (!socktab__v6_is_any(&a)) {
		if (memcmp(&a, &k->saddr6, 16))
			return -1;
		sc++;
	}
	if (!socktab__bound_dev_eq(k->l3mdev_accept, RD(sk->bound_dev_if), k->dif, k->sdif))
		return -1;
	if (RD(sk->bound_dev_if))
		sc++;
	return sc + socktab__incpu_match(socktab__sk_incpu_hint(sk, f), &k->cpu);
}

static int score(const struct socktab_sock *sk, struct socktab__udp_key *k)
{
	/* A reuseport member whose connect() is rewriting its key takes nothing until it is done:
	 * its group, which it is leaving, takes what it would have. The mark first (acquire): a
	 * cleared mark shows the key and state the connect() left. */
	uint8_t f = atomic_load_explicit(&((struct socktab_sock *)sk)->tw_flags,
					 memory_order_acquire);

	if (f & SOCKTAB__UDPF_CONNECTING)
		return -1;
	return k->v6 ? score6(sk, k, f) : score4(sk, k, f);
}

/*
 * udp_ehashfn over the pass's local address, made once per key: hash4's hash of the 4-tuple and
 * the reuseport hash of the datagram (R33) are the same value.
 */
static inline __attribute__((always_inline)) uint32_t key_h4(struct socktab__udp_key *k)
{
	if (!(k->made & SOCKTAB__UDPK_H4)) {
		k->h4 = k->v6 ? udp_ehashfn6(k->net, &k->daddr6, k->hnum, &k->saddr6, k->sport)
			      : udp_ehashfn4(k->net, k->daddr, k->hnum, k->saddr, k->sport);
		k->made |= SOCKTAB__UDPK_H4;
	}
	return k->h4;
}

/* The hash2 slot of the pass's local address, made once per key. */
static inline __attribute__((always_inline)) uint32_t key_slot2(struct socktab__udp_key *k)
{
	if (!(k->made & SOCKTAB__UDPK_SLOT2)) {
		k->slot2 = k->v6 ? slot2_index(k->net, &k->daddr6, k->hnum)
				 : socktab__portaddr_hash4(k->net, k->daddr, k->hnum) &
					   k->net->udp->mask;
		k->made |= SOCKTAB__UDPK_SLOT2;
	}
	return k->slot2;
}

/*
 * Score one hash2 chain (udp4_lib_lookup2). Returns the winner or NULL; *restart when the walk
 * ended on another slot's chain. Caller is inside an RCU read-side section.
 */
static struct socktab_sock *lookup2_rcu(struct socktab__udp_table *t, uint32_t slot,
					struct socktab__udp_key *k, bool *restart)
{
	struct socktab_sock *result = NULL;
	int badness = k->v6 ? -1 : 0;
	uintptr_t p;

	SOCKTAB__ASSERT_RCU();
	*restart = false;
	socktab__hlist_for_each(p, &t->hash2[slot].head, memory_order_acquire) {
		struct socktab_sock *sk = (struct socktab_sock *)p, *pick;
		int sc = score(sk, k);

		if (sc <= badness)
			continue;
		badness = sc;
		if (RD(sk->state) == SOCKTAB_TCP_ESTABLISHED || !RD(sk->reuseport)) {
			result = sk;
			continue;
		}
		pick = socktab__reuseport_select_rcu(sk, key_h4(k), &k->cpu);
		if (!pick) {
			result = sk;
			continue;
		}
		/* R36: with connected members the pick is only a candidate; keep scoring, against
		 * the better of its own score and @sk's (the kernel's rescore raises the bar only:
		 * with SO_INCOMING_CPU the two may differ). */
		if (!RD(socktab__sk_udp(sk)->rp_conns))
			return pick;
		result = pick;
		sc = score(pick, k);
		if (sc > badness)
			badness = sc;
	}
	if (socktab__nulls_value(p) != SOCKTAB__UDP2_NULLS_BASE + slot)
		*restart = true;
	return result;
}

static bool match4(const struct socktab_sock *sk, const struct socktab__udp_key *k)
{
	if (RD(sk->portpair) != (((uint32_t)k->hnum << 16) | k->sport) ||
	    !socktab__bound_dev_eq(k->tcp_l3mdev_accept, RD(sk->bound_dev_if), k->dif, k->sdif))
		return false;
	if (!k->v6)
		return RD(sk->v4key) &&
		       RD(sk->addrpair) == (((uint64_t)k->daddr << 32) | k->saddr);
	if (RD(sk->v4key) || sk->family != AF_INET6)
		return false;
	struct in6_addr a = socktab__sk_v6_daddr(sk), b = socktab__sk_v6_saddr(sk);

	return !memcmp(&a, &k->saddr6, 16) && !memcmp(&b, &k->daddr6, 16);
}

/*
 * Exact 4-tuple in hash4 (udp4_lib_lookup4): no scoring, no reuseport. Caller holds RCU. Each
 * entry is matched by its socket's 4-tuple and devices as they are now (inet_match), not by
 * the hash it was entered with: a stale entry (R74) whose socket's new 4-tuple falls in the
 * same slot is found, as in the kernel. The entry's socket follows from the entry's address, so
 * a match reads the socket's line and not the entry's, which only a step past the entry needs;
 * the batch walk prefetches it only where the slot counts more than one entry.
 */
/* Hash4 entry @e's socket if it is @k's 4-tuple, else NULL. */
static inline struct socktab_sock *entry4_match(const struct socktab__udp_ext *e,
						const struct socktab__udp_key *k)
{
	struct socktab_sock *sk = socktab__udp_ext_sk(e);

	return match4(sk, k) ? sk : NULL;
}

static struct socktab_sock *lookup4_rcu(struct socktab__udp_table *t, struct socktab__udp_key *k)
{
	uint32_t slot = key_h4(k) & t->mask4;
	uintptr_t p;

	SOCKTAB__ASSERT_RCU();
begin:
	socktab__hlist_for_each(p, &t->hash4[slot].head, memory_order_acquire) {
		struct socktab_sock *sk = entry4_match(ext_of_node4(p), k);

		if (sk)
			return sk;
	}
	/* A rehash moved a node we stood on into another chain: walk again (R23). */
	if (socktab__nulls_value(p) != slot)
		goto begin;
	return NULL;
}

/* The port chain, scored without reuseport (udp4_lib_lookup1): covers a rehash in flight. */
static struct socktab_sock *lookup1_rcu(struct socktab_net *net, struct socktab__udp_key *k)
{
	struct socktab__uslot *s = slot1(net, k->hnum);
	struct socktab_sock *result = NULL;
	int badness = k->v6 ? -1 : 0;
	uintptr_t p;

	socktab__hlist_for_each(p, &s->head, memory_order_acquire) {
		struct socktab_sock *sk = sk_of_node1(p);
		int sc = score(sk, k);

		if (sc > badness) {
			result = sk;
			badness = sc;
		}
	}
	return result;
}

/* The dispatch hook for @k's datagram (sk_lookup.c), with the group hash key_h4() gives. */
static __attribute__((noinline, cold)) struct socktab_sock *hook_rcu(struct socktab_net *net,
								   struct socktab__udp_key *k)
{
	if (k->v6)
		return socktab__sk_lookup_run_rcu(net, SOCKTAB_UDP, true, &k->saddr6, k->sport,
						  &k->daddr6, k->hnum, k->dif, key_h4(k));
	return socktab__sk_lookup_run_rcu(net, SOCKTAB_UDP, false, &k->saddr, k->sport, &k->daddr,
					  k->hnum, k->dif, key_h4(k));
}

static struct socktab_sock *lookup_rcu(struct socktab_net *net, struct socktab__udp_key *k)
{
	struct socktab__udp_table *t = net->udp;
	struct socktab_sock *sk;
	uint32_t slot = key_slot2(k);
	bool restart, no4 = k->made & SOCKTAB__UDPK_NO4;

	k->made &= ~SOCKTAB__UDPK_NO4;
	/* hash4_cnt shares the slot's cache line: an unconnected-only port pays one load (R79). */
	if (!no4 && RD(t->hash4_on) && RD(t->hash2[slot].hash4_cnt)) {
		sk = lookup4_rcu(t, k);
		if (sk)
			return sk;
	}
	do
		sk = lookup2_rcu(t, slot, k, &restart);
	while (restart);
	/* R125: the dispatch hook, unless that pass found a connected socket (__udp4_lib_lookup). */
	if (socktab__sk_lookup_on(net) && !(sk && RD(sk->state) == SOCKTAB_TCP_ESTABLISHED)) {
		struct socktab_sock *h = hook_rcu(net, k);

		if (h)
			return h == SOCKTAB__SK_LOOKUP_DROP ? NULL : h; /* R128 */
	}
	if (sk)
		return sk;

	struct socktab__udp_key any = *k;

	any.made = 0; /* the hashes made are the exact address's */
	memset(&any.daddr6, 0, sizeof(any.daddr6));
	any.daddr = 0;
	slot = key_slot2(&any);
	do
		sk = lookup2_rcu(t, slot, &any, &restart);
	while (restart);
	if (sk)
		return sk;
	k->cpu = any.cpu;
	return lookup1_rcu(net, k);
}

/* The receiving socket, not referenced: valid for the caller's read-side section (UDP sockets
 * are freed after a grace period). A connected one takes the receiving CPU as its
 * SO_INCOMING_CPU (R107, __udp_queue_rcv_skb: a socket with a remote address); an unconnected
 * one keeps its value. key_devs() and receipt() are its two halves, which the batch's hash4 walk
 * (socktab__udp_walk4_start/step) does around its own matches. */
static void key_devs(struct socktab_net *net, struct socktab__udp_key *k)
{
	if (k->sdif) {
		k->l3mdev_accept = RD(net->udp_l3mdev_accept);
		k->tcp_l3mdev_accept = RD(net->tcp_l3mdev_accept);
	}
}

static struct socktab_sock *receipt(struct socktab_sock *sk)
{
	if (sk && RD(sk->state) == SOCKTAB_TCP_ESTABLISHED)
		socktab__sk_incoming_cpu_update(sk);
	return sk;
}

static struct socktab_sock *lookup(struct socktab_net *net, struct socktab__udp_key *k)
{
	SOCKTAB__ASSERT_RCU();
	key_devs(net, k);
	return receipt(lookup_rcu(net, k));
}

/* The RCU-scoped UDP lookups of socktab/lookup.h are this table's walk itself: they take no
 * reference and enter no section (lookup.c composes the referenced ones). */
struct socktab_sock *socktab_lookup_udp4_rcu(struct socktab_net *net, uint32_t saddr,
					     uint16_t sport, uint32_t daddr, uint16_t dport,
					     int dif, int sdif)
{
	struct socktab__udp_key k = { .net = net, .hnum = ntohs(dport), .sport = sport, .saddr = saddr,
			  .daddr = daddr, .dif = dif, .sdif = sdif, .cpu = SOCKTAB__CPU_UNASKED };

	SOCKTAB__ASSERT_RCU();
	if (!net)
		return NULL;
	return lookup(net, &k);
}

struct socktab_sock *socktab_lookup_udp6_rcu(struct socktab_net *net,
					     const struct in6_addr *saddr, uint16_t sport,
					     const struct in6_addr *daddr, uint16_t dport, int dif,
					     int sdif)
{
	struct socktab__udp_key k = { .net = net, .v6 = true, .hnum = ntohs(dport), .sport = sport,
			  .dif = dif, .sdif = sdif, .cpu = SOCKTAB__CPU_UNASKED };

	SOCKTAB__ASSERT_RCU();
	if (!net || !saddr || !daddr)
		return NULL;
	if (socktab__v6_is_mapped(saddr) && socktab__v6_is_mapped(daddr))
		return socktab_lookup_udp4_rcu(net, saddr->s6_addr32[3], sport,
					       daddr->s6_addr32[3], dport, dif, sdif);
	k.saddr6 = *saddr;
	k.daddr6 = *daddr;
	return lookup(net, &k);
}

/* The key of a datagram for the functions below; false: bad arguments. A v4-mapped pair on
 * both sides is looked up as IPv4, as socktab_lookup_udp6_rcu() does. */
static bool pre_key(struct socktab_net *net, bool v6, const void *saddr, uint16_t sport,
		    const void *daddr, uint16_t dport, int dif, int sdif, struct socktab__udp_key *k)
{
	if (!net || !saddr || !daddr)
		return false;
	*k = (struct socktab__udp_key){ .net = net, .v6 = v6, .hnum = ntohs(dport), .sport = sport,
					.dif = dif, .sdif = sdif, .cpu = SOCKTAB__CPU_UNASKED };
	if (v6) {
		const struct in6_addr *s6 = saddr, *d6 = daddr;

		if (!socktab__v6_is_mapped(s6) || !socktab__v6_is_mapped(d6)) {
			k->saddr6 = *s6;
			k->daddr6 = *d6;
			return true;
		}
		k->v6 = false;
		k->saddr = s6->s6_addr32[3];
		k->daddr = d6->s6_addr32[3];
		return true;
	}
	memcpy(&k->saddr, saddr, 4);
	memcpy(&k->daddr, daddr, 4);
	return true;
}

void socktab__udp_prefetch(struct socktab_net *net, bool v6, const void *saddr, uint16_t sport,
			   const void *daddr, uint16_t dport, int dif, int sdif,
			   struct socktab__udp_pre *pre)
{
	struct socktab__udp_key *k = &pre->k;
	struct socktab__udp_table *t;

	if (!pre_key(net, v6, saddr, sport, daddr, dport, dif, sdif, k)) {
		k->net = NULL; /* the other two do nothing with it */
		return;
	}
	t = net->udp;
	__builtin_prefetch(&t->hash2[key_slot2(k)]);
	__builtin_prefetch(&t->hash4[key_h4(k) & t->mask4]);
}

/*
 * Start the misses of hash4 entry @p (not a nulls marker): its socket's line, for an IPv6 key
 * its key too (socktab__sk_v6(), from the socket's address alone), and with @next the node,
 * whose link a step past the entry reads. Always inlined: gcc 12 finds that a function doing
 * nothing but prefetches is const and drops the call as unused, which it did here, leaving every
 * hash4 entry's misses to the step that reads it.
 */
static inline __attribute__((always_inline)) void prefetch_entry4(uintptr_t p, bool v6, bool next)
{
	struct socktab_sock *sk = socktab__udp_ext_sk(ext_of_node4(p));

	__builtin_prefetch(sk);
	if (v6)
		__builtin_prefetch(socktab__sk_v6(sk));
	if (next)
		__builtin_prefetch((const void *)p);
}

uintptr_t socktab__udp_walk4_start(struct socktab_net *net, struct socktab__udp_pre *pre)
{
	struct socktab__udp_key *k = &pre->k;
	struct socktab__udp_table *t;
	struct socktab__uslot *s4;
	uintptr_t p;

	if (!net || k->net != net) /* a key pre_key() refused has none */
		return 0;
	t = net->udp;
	/* lookup_rcu()'s test for a hash4 pass, and lookup()'s device settings for its match */
	if (!RD(t->hash4_on) || !RD(t->hash2[k->slot2].hash4_cnt))
		return 0;
	key_devs(net, k);
	s4 = &t->hash4[k->h4 & t->mask4];
	p = atomic_load_explicit(&s4->head.first, memory_order_acquire);
	if (socktab__is_nulls(p))
		return 0;
	/* The node only where the chain goes on: a count read a moment after the head can be
	 * off by a concurrent insert or removal, which costs a miss, not an answer. */
	prefetch_entry4(p, k->v6, RD(s4->count) > 1);
	return p;
}

struct socktab_sock *socktab__udp_walk4_step(struct socktab_net *net, struct socktab__udp_pre *pre,
					     uintptr_t *at)
{
	const struct socktab__udp_ext *e = ext_of_node4(*at);
	struct socktab__udp_key *k = &pre->k;
	struct socktab_sock *sk = entry4_match(e, k);
	uintptr_t p;

	SOCKTAB__ASSERT_RCU();
	if (sk) {
		*at = 0;
		return receipt(sk);
	}
	p = atomic_load_explicit(&e->node4.next, memory_order_acquire);
	/* The chain's end: the whole lookup goes on from hash2, as lookup_rcu() does when
	 * lookup4_rcu() misses. Another chain's (a rehash moved the entry): it walks hash4 again,
	 * as lookup4_rcu() does. */
	if (socktab__is_nulls(p)) {
		if (socktab__nulls_value(p) == (k->h4 & net->udp->mask4))
			k->made |= SOCKTAB__UDPK_NO4;
		*at = 0;
		return NULL;
	}
	prefetch_entry4(p, k->v6, true);
	*at = p;
	return NULL;
}

struct socktab_sock *socktab__udp_lookup_pre_rcu(struct socktab_net *net,
						 struct socktab__udp_pre *pre)
{
	if (!net || pre->k.net != net)
		return NULL;
	return lookup(net, &pre->k);
}

/* ---- the port feed (socktab/feed.h) ----
 * One key per (address as bound, port) among the hashed sockets: the address a socket had when
 * it was hashed, which is the wildcard for one that was bound to none, also after connect()
 * gave it a source address (that connect rehashes it, and a later disconnect returns it to the
 * wildcard, unless bind() locked the address: ::ffff:0.0.0.0 keeps the source). The key
 * appears with the first socket that has it (claimed before it is hashed) and goes with the
 * last; the primary slot lock of the port, held over every hash change, keeps the count. */

/*
 * SOCKTAB__UDPF_KEY_WILD (sock.h): set by the connect() that gives a socket hashed under a
 * wildcard its source address, cleared when the socket leaves its port or its address goes
 * back to the wildcard, under the primary slot lock of its port while it is hashed, as the feed
 * reads it: the key released is then the key claimed, whatever connect() and disconnect did in
 * between. No lookup reads it.
 */
static void key_wild_set(struct socktab_sock *sk, bool on)
{
	if (on)
		atomic_fetch_or_explicit(&sk->tw_flags, SOCKTAB__UDPF_KEY_WILD, memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&sk->tw_flags, (uint8_t)~SOCKTAB__UDPF_KEY_WILD,
					  memory_order_relaxed);
}

static void feed_key(const struct socktab_sock *sk, uint16_t port, struct socktab_port_key *k)
{
	struct in6_addr a = socktab__sk_v6_saddr(sk);

	memset(k, 0, sizeof(*k));
	k->proto = SOCKTAB_UDP;
	k->port = port;
	if (RD(sk->tw_flags) & SOCKTAB__UDPF_KEY_WILD) {
		/* Which wildcard: bind() locks an AF_INET6 socket's ::ffff:0.0.0.0 (IPv4's
		 * wildcard), not its :: (nor the wildcard a bind by port alone leaves). */
		if (sk->family == AF_INET || (sk->userlocks & SOCKTAB__BINDADDR_LOCK)) {
			k->family = AF_INET;
			socktab__v6_map(&k->addr, 0);
		} else {
			k->family = AF_INET6;
		}
	} else if (sk->family == AF_INET || socktab__v6_is_mapped(&a)) {
		k->family = AF_INET;
		socktab__v6_map(&k->addr, socktab__sk_rcv_saddr(sk));
	} else {
		k->family = AF_INET6;
		k->addr = a;
	}
}

static bool same_key(const struct socktab_port_key *a, const struct socktab_port_key *b)
{
	return a->family == b->family && a->port == b->port && !memcmp(&a->addr, &b->addr, 16);
}

/* Does a hashed socket of the port chain @s1 (locked), other than @sk, and before @stop when it
 * is not NULL, hold @k? */
static bool key_held1(struct socktab__uslot *s1, const struct socktab_sock *sk,
		      const struct socktab_port_key *k, const struct socktab_sock *stop)
{
	uintptr_t p;

	socktab__hlist_for_each(p, &s1->head, memory_order_relaxed) {
		const struct socktab_sock *sk2 = sk_of_node1(p);
		struct socktab_port_key k2;

		if (sk2 == stop)
			break;
		if (sk2 == sk || socktab__sk_num(sk2) != k->port)
			continue;
		feed_key(sk2, k->port, &k2);
		if (same_key(&k2, k))
			return true;
	}
	return false;
}

/* The same question asked of the hash2 chain @s2; takes its lock. The caller holds the primary
 * slot lock of @k's port, so the sockets of that port stay put; the others may come and go. */
static bool key_held2(struct socktab_net *net, struct socktab__uslot2 *s2,
		      const struct socktab_sock *sk, const struct socktab_port_key *k)
{
	bool held = false;
	uintptr_t p;

	socktab__lock(socktab__uslot2_lock(net->udp, s2));
	socktab__hlist_for_each(p, &s2->head, memory_order_relaxed) {
		const struct socktab_sock *sk2 = (const struct socktab_sock *)p;
		struct socktab_port_key k2;

		if (sk2 == sk || socktab__sk_num(sk2) != k->port)
			continue;
		feed_key(sk2, k->port, &k2);
		if (same_key(&k2, k)) {
			held = true;
			break;
		}
	}
	socktab__unlock(socktab__uslot2_lock(net->udp, s2));
	return held;
}

/*
 * Does a hashed socket on @k's port, other than @sk, hold @k? Caller holds the port's primary
 * slot lock @s1. A key with an address is held only by sockets hashed in hash2 by that address:
 * a socket's key follows its address unless connect() gave a wildcard-bound socket its source
 * address (feed_key()), and every change of address moves the socket's hash2 entry with it. So
 * such a key is looked for in the shorter of the two chains that hold all its holders (the
 * choice udp_lib_get_port() makes for its conflict scan on a crowded port); a wildcard key's
 * holders may sit in any hash2 chain of the port, and only the port's chain has them all.
 */
static bool key_held(struct socktab_net *net, struct socktab__uslot *s1,
		     const struct socktab_sock *sk, const struct socktab_port_key *k)
{
	bool wild = socktab__v6_is_any(&k->addr) ||
		    (socktab__v6_is_mapped(&k->addr) && !k->addr.s6_addr32[3]);

	if (!wild) {
		struct socktab__uslot2 *s2 = &net->udp->hash2[slot2_index(net, &k->addr, k->port)];

		if (RD(s2->count) < RD(s1->count))
			return key_held2(net, s2, sk, k);
	}
	return key_held1(s1, sk, k, NULL);
}

/* Before @sk is hashed on @port (slot @s1 locked): claim its key if it is new. @held: whether
 * another socket holds the key, when the caller knows; -1 to find out here. */
static int feed_claim(struct socktab_net *net, struct socktab_sock *sk, struct socktab__uslot *s1,
		      uint16_t port, int held)
{
	struct socktab_port_key k;

	feed_key(sk, port, &k);
	if (held < 0)
		held = key_held(net, s1, sk, &k);
	if (held)
		return 0;
	return socktab__feed_tell(net, &k, SOCKTAB__FEED_REFUSABLE) ? -EADDRINUSE : 0;
}

/* @sk (key @k) left the chain @s1 (locked), or will not enter it: release @k if it was the last. */
static void feed_release(struct socktab_net *net, struct socktab_sock *sk,
			 struct socktab__uslot *s1, const struct socktab_port_key *k)
{
	if (!key_held(net, s1, sk, k))
		socktab__feed_tell(net, k, SOCKTAB__FEED_RELEASE);
}

/* The dump (socktab/feed.h): TCP's address buckets (bind.c), then UDP's keys, each once. */
int socktab_net_port_feed_dump(struct socktab_net *net,
			       int (*fn)(void *arg, const struct socktab_port_key *key), void *arg)
{
	struct socktab__udp_table *t;
	int r;

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_net_port_feed_dump()");
	if (!net || !fn)
		return -EINVAL;
	r = socktab__tcp_feed_dump(net, fn, arg);
	t = net->udp;

	for (uint32_t i = 0; i <= t->mask && !r; i++) {
		struct socktab__uslot *s1 = &t->hash[i];
		uintptr_t p;

		socktab__lock(socktab__uslot1_lock(t, s1));
		socktab__hlist_for_each(p, &s1->head, memory_order_relaxed) {
			struct socktab_sock *sk = sk_of_node1(p);
			struct socktab_port_key k;

			feed_key(sk, socktab__sk_num(sk), &k);
			/* Once per key: by its first holder in the chain. */
			if (!key_held1(s1, sk, &k, sk) && (r = fn(arg, &k)) != 0)
				break;
		}
		socktab__unlock(socktab__uslot1_lock(t, s1));
	}
	return r;
}

/* ---- hashing (writers) ---- */

static bool hashed(const struct socktab_sock *sk)
{
	return socktab__hnode_hashed(&socktab__sk_udp(sk)->node1);
}

static void hash2_add_locked(struct socktab_net *net, struct socktab_sock *sk, uint32_t slot,
			     bool tail)
{
	struct socktab__uslot2 *s2 = &net->udp->hash2[slot];

	SOCKTAB__ASSERT_LOCKED(socktab__uslot1_lock(net->udp, slot1(net, socktab__sk_num(sk))));
	socktab__lock(socktab__uslot2_lock(net->udp, s2));
	if (tail)
		socktab__hnode_add_tail_rcu(&sk->node, &s2->head);
	else
		socktab__hnode_add_head_rcu(&sk->node, &s2->head);
	atomic_fetch_add_explicit(&s2->count, 1, memory_order_relaxed);
	if (socktab__sk_udp(sk)->hashed4)
		atomic_fetch_add_explicit(&s2->hash4_cnt, 1, memory_order_relaxed);
	socktab__unlock(socktab__uslot2_lock(net->udp, s2));
	socktab__sk_udp(sk)->slot2 = slot;
}

static void hash2_del_locked(struct socktab_net *net, struct socktab_sock *sk)
{
	struct socktab__uslot2 *s2 = &net->udp->hash2[socktab__sk_udp(sk)->slot2];

	SOCKTAB__ASSERT_LOCKED(socktab__uslot1_lock(net->udp, slot1(net, socktab__sk_num(sk))));
	socktab__lock(socktab__uslot2_lock(net->udp, s2));
	socktab__hnode_del_rcu(&sk->node);
	atomic_fetch_sub_explicit(&s2->count, 1, memory_order_relaxed);
	if (socktab__sk_udp(sk)->hashed4)
		atomic_fetch_sub_explicit(&s2->hash4_cnt, 1, memory_order_relaxed);
	socktab__unlock(socktab__uslot2_lock(net->udp, s2));
}

/* R73: enter hash4 and count it in the hash2 slot. Caller holds the primary slot lock. */
static void hash4_locked(struct socktab_net *net, struct socktab_sock *sk)
{
	uint32_t h = sk_hash4(net, sk);
	struct socktab__uslot *s4 = &net->udp->hash4[h & net->udp->mask4];

	SOCKTAB__ASSERT_LOCKED(socktab__uslot1_lock(net->udp, slot1(net, socktab__sk_num(sk))));
	WR(socktab__sk_udp(sk)->hash4, h);
	socktab__lock(socktab__uslot4_lock(net->udp, s4));
	socktab__hnode_add_head_rcu(&socktab__sk_udp(sk)->node4, &s4->head);
	atomic_fetch_add_explicit(&s4->count, 1, memory_order_relaxed);
	socktab__unlock(socktab__uslot4_lock(net->udp, s4));
	/* After the insert: a lookup that sees the count finds the entry, or falls back to hash2. */
	atomic_fetch_add_explicit(&net->udp->hash2[socktab__sk_udp(sk)->slot2].hash4_cnt, 1,
				  memory_order_relaxed);
	socktab__sk_udp(sk)->hashed4 = 1;
}

static void unhash4_locked(struct socktab_net *net, struct socktab_sock *sk)
{
	struct socktab__uslot *s4 =
		&net->udp->hash4[RD(socktab__sk_udp(sk)->hash4) & net->udp->mask4];

	SOCKTAB__ASSERT_LOCKED(socktab__uslot1_lock(net->udp, slot1(net, socktab__sk_num(sk))));
	if (!socktab__sk_udp(sk)->hashed4)
		return;
	atomic_fetch_sub_explicit(&net->udp->hash2[socktab__sk_udp(sk)->slot2].hash4_cnt, 1,
				  memory_order_relaxed);
	socktab__lock(socktab__uslot4_lock(net->udp, s4));
	socktab__hnode_del_rcu(&socktab__sk_udp(sk)->node4);
	atomic_fetch_sub_explicit(&s4->count, 1, memory_order_relaxed);
	socktab__unlock(socktab__uslot4_lock(net->udp, s4));
	socktab__sk_udp(sk)->hashed4 = 0;
}

static void rp_detach(struct socktab_net *net, struct socktab_sock *sk)
{
	if (!atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed))
		return;
	socktab__lock(&net->reuseport_lock);
	socktab__reuseport_detach_locked(sk);
	socktab__unlock(&net->reuseport_lock);
}

/*
 * udp_lib_rehash's hash2 half: move the hash2 entry to the slot of the local address the socket
 * has now (connect() set it, a disconnect reset it with the port kept; a device bind leaves the
 * slot as it was). Leaves the reuseport group, as the kernel does, even when the slot stays.
 * Caller holds the primary slot lock; hash4 is handled by the caller.
 */
static void rehash2_locked(struct socktab_net *net, struct socktab_sock *sk)
{
	struct in6_addr a = socktab__sk_v6_saddr(sk);
	uint32_t slot = slot2_index(net, &a, socktab__sk_num(sk));

	SOCKTAB__ASSERT_LOCKED(socktab__uslot1_lock(net->udp, slot1(net, socktab__sk_num(sk))));
	rp_detach(net, sk);
	if (slot == socktab__sk_udp(sk)->slot2)
		return;
	hash2_del_locked(net, sk);
	hash2_add_locked(net, sk, slot, false);
}

/*
 * The primary slot of @sk's port, locked, when @sk holds a port; NULL, nothing locked, when it
 * holds none. Caller holds the socket lock.
 */
static struct socktab__uslot *slot1_lock_hashed(struct socktab_net *net, struct socktab_sock *sk)
{
	struct socktab__uslot *s1;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (!hashed(sk))
		return NULL;
	s1 = slot1(net, socktab__sk_num(sk));
	socktab__lock(socktab__uslot1_lock(net->udp, s1));
	return s1;
}

/* udp_lib_unhash. Caller holds the socket lock; takes the primary slot lock. */
static void unhash(struct socktab_net *net, struct socktab_sock *sk)
{
	struct socktab__uslot *s1 = slot1_lock_hashed(net, sk);

	if (!s1)
		return;
	rp_detach(net, sk);
	socktab__hnode_del_rcu(&socktab__sk_udp(sk)->node1);
	atomic_fetch_sub_explicit(&s1->count, 1, memory_order_relaxed);
	unhash4_locked(net, sk);
	hash2_del_locked(net, sk);
	if (socktab__feed_on(net)) {
		struct socktab_port_key k;

		feed_key(sk, socktab__sk_num(sk), &k);
		feed_release(net, sk, s1, &k);
	}
	key_wild_set(sk, false); /* the next hash claims the address it has then */
	socktab__sk_set_num(sk, 0); /* inet_num = 0 */
	socktab__unlock(socktab__uslot1_lock(net->udp, s1));
}

/* ---- bind conflicts (R68) ---- */

/*
 * Would @sk join @sk2's reuseport group on port @port (udp_reuseport_add_sock's match)? Same
 * family, IPV6_V6ONLY, bound device, owner and address, and SO_REUSEPORT on @sk2.
 */
static bool rp_mate(const struct socktab_sock *sk, const struct socktab_sock *sk2, uint16_t port)
{
	return sk2 != sk && sk2->family == sk->family &&
	       socktab__ipv6_only(sk2) == socktab__ipv6_only(sk) &&
	       RD(sk2->bound_dev_if) == RD(sk->bound_dev_if) && socktab__sk_num(sk2) == port &&
	       RD(sk2->reuseport) && sk2->uid == sk->uid &&
	       socktab__rcv_saddr_equal(sk, sk2, false);
}

/* inuse_one's answers. */
enum {
	INUSE_NONE,	/* no overlap */
	INUSE_CONFLICT, /* overlap that refuses the bind */
	INUSE_EXCUSED,	/* overlap excused by SO_REUSEPORT (same owner, @sk not yet in a group) */
};

/* The predicate of udp_lib_lport_inuse for one other socket (INUSE_*). */
static int inuse_one(const struct socktab_sock *sk, const struct socktab_sock *sk2)
{
	uint32_t d1 = RD(sk->bound_dev_if), d2 = RD(sk2->bound_dev_if);

	if ((RD(sk2->reuse) && RD(sk->reuse)) || (d1 && d2 && d1 != d2) ||
	    !socktab__rcv_saddr_equal(sk, sk2, true))
		return INUSE_NONE;
	if (!RD(sk2->reuseport) || !RD(sk->reuseport) || sk->uid != sk2->uid ||
	    atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed))
		return INUSE_CONFLICT;
	return INUSE_EXCUSED;
}

/*
 * R103: does @sk2, which excuses @sk's explicit bind on port @num, end the scan? Upstream, it
 * does: the first overlapping socket decides. Under SOCKTAB_KV_UDP_BIND_ALL_OWNERS every
 * overlapping socket must excuse the bind, wherever it stands in the chain, except that with
 * SOCKTAB_KV_UDP_BIND_MATE_STOPS one whose group @sk would join, neither of the two with
 * SO_REUSEADDR, still ends the scan. @rule is scan_rule()'s, read once per scan.
 */
enum scan_rule { SCAN_FIRST_DECIDES, SCAN_ALL_OWNERS, SCAN_ALL_OWNERS_MATE_STOPS };

static enum scan_rule scan_rule(const struct socktab_sock *sk)
{
	struct socktab_net *net = socktab__sk_net(sk);

	if (!RD(net->kvariant[SOCKTAB_KV_UDP_BIND_ALL_OWNERS]))
		return SCAN_FIRST_DECIDES;
	return RD(net->kvariant[SOCKTAB_KV_UDP_BIND_MATE_STOPS]) ? SCAN_ALL_OWNERS_MATE_STOPS
								 : SCAN_ALL_OWNERS;
}

static bool excuse_decides(enum scan_rule rule, const struct socktab_sock *sk,
			   const struct socktab_sock *sk2, uint16_t num)
{
	if (rule == SCAN_FIRST_DECIDES)
		return true;
	return rule == SCAN_ALL_OWNERS_MATE_STOPS && !RD(sk->reuse) && !RD(sk2->reuse) &&
	       rp_mate(sk, sk2, num);
}

/*
 * Walk the primary chain @s1 (locked). Without @bitmap: does port @num conflict? The first
 * overlapping socket decides, or with the all-owners variant the first that does not excuse
 * the bind or ends the scan all the same (excuse_decides, R103). With @bitmap: mark every
 * conflicting port of the chain (bind(0), R69), and with @held too every port of the chain
 * where another socket holds the key @sk would have there (the port feed's question, answered
 * by the same walk).
 */
static bool lport_inuse(uint16_t num, struct socktab__uslot *s1, uint64_t *bitmap,
			uint64_t *held, const struct socktab_sock *sk, uint32_t log)
{
	enum scan_rule rule = scan_rule(sk);
	struct socktab_port_key k;
	uintptr_t p;

	if (held)
		feed_key(sk, 0, &k);
	socktab__hlist_for_each(p, &s1->head, memory_order_relaxed) {
		const struct socktab_sock *sk2 = sk_of_node1(p);
		uint16_t n2 = socktab__sk_num(sk2);
		int r;

		if (sk2 == sk || (!bitmap && n2 != num))
			continue;
		if (held) {
			struct socktab_port_key k2;

			k.port = n2;
			feed_key(sk2, n2, &k2);
			if (same_key(&k2, &k))
				held[(n2 >> log) / 64] |= 1ull << ((n2 >> log) % 64);
		}
		r = inuse_one(sk, sk2);
		if (r == INUSE_NONE)
			continue;
		if (!bitmap && (r == INUSE_CONFLICT || excuse_decides(rule, sk, sk2, n2)))
			return r == INUSE_CONFLICT;
		if (bitmap && r == INUSE_CONFLICT)
			bitmap[(n2 >> log) / 64] |= 1ull << ((n2 >> log) % 64);
	}
	return false;
}

/* udp_lib_lport_inuse2: the same on a hash2 chain, for a specific address. */
static bool lport_inuse2(struct socktab_net *net, uint16_t num, uint32_t slot,
			 const struct socktab_sock *sk)
{
	struct socktab__uslot2 *s2 = &net->udp->hash2[slot];
	enum scan_rule rule = scan_rule(sk);
	bool res = false;

	socktab__lock(socktab__uslot2_lock(net->udp, s2));
	uintptr_t p;

	socktab__hlist_for_each(p, &s2->head, memory_order_relaxed) {
		const struct socktab_sock *sk2 = (const struct socktab_sock *)p;
		int r;

		if (sk2 == sk || socktab__sk_num(sk2) != num)
			continue;
		r = inuse_one(sk, sk2);
		if (r == INUSE_CONFLICT ||
		    (r == INUSE_EXCUSED && excuse_decides(rule, sk, sk2, num))) {
			res = r == INUSE_CONFLICT;
			break;
		}
	}
	socktab__unlock(socktab__uslot2_lock(net->udp, s2));
	return res;
}

/* R34 (udp_reuseport_add_sock): join the group of the first matching socket on the port.
 * Caller holds the primary slot lock @s1. */
static int rp_join_locked(struct socktab_net *net, struct socktab_sock *sk,
			  struct socktab__uslot *s1, uint16_t port)
{
	struct socktab_sock *peer = NULL;
	int err;

	SOCKTAB__ASSERT_LOCKED(socktab__uslot1_lock(net->udp, s1));
	uintptr_t p;

	socktab__hlist_for_each(p, &s1->head, memory_order_relaxed) {
		struct socktab_sock *sk2 = sk_of_node1(p);

		if (socktab__sk_net(sk2) == net && rp_mate(sk, sk2, port)) {
			peer = sk2;
			break;
		}
	}
	socktab__lock(&net->reuseport_lock);
	if (peer && !atomic_load_explicit(&peer->cold->reuseport_cb, memory_order_relaxed)) {
		/* A member that left its group (connect) starts a new one (reuseport_alloc). */
		err = socktab__reuseport_add_locked(net, peer, NULL);
		if (err)
			goto out;
		WR(socktab__sk_udp(peer)->rp_conns, 0);
	}
	err = socktab__reuseport_add_locked(net, sk, peer);
	if (!err)
		WR(socktab__sk_udp(sk)->rp_conns, peer ? RD(socktab__sk_udp(peer)->rp_conns) : 0);
out:
	socktab__unlock(&net->reuseport_lock);
	return err;
}

/* R36 reuseport_has_conns_set: mark @sk's group (every member) as having had a connect(). */
static void rp_set_conns(struct socktab_net *net, struct socktab_sock *sk)
{
	struct socktab__reuseport *g;

	if (!atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed))
		return;
	socktab__lock(&net->reuseport_lock);
	g = atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed);
	for (uint32_t i = 0; g && i < atomic_load_explicit(&g->num, memory_order_relaxed); i++)
		WR(socktab__sk_udp(atomic_load_explicit(&g->socks[i], memory_order_relaxed))->rp_conns, 1);
	socktab__unlock(&net->reuseport_lock);
}

/*
 * udp_lib_get_port: take port @snum (0: choose one, R69) for @sk, whose local address is set, and
 * hash it (R70). Caller holds the socket lock. 0, -EADDRINUSE or -ENOMEM; on error nothing
 * changed.
 */
int socktab__udp_get_port(struct socktab_net *net, struct socktab_sock *sk, uint16_t snum)
{
	struct socktab__udp_table *t = net->udp;
	struct socktab__uslot *s1;
	struct in6_addr a = socktab__sk_v6_saddr(sk), any = IN6ADDR_ANY_INIT;
	bool claimed = false;
	int err;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (!snum) {
		uint64_t bitmap[PORTS_PER_CHAIN / 64], held[PORTS_PER_CHAIN / 64];
		int low, high;
		bool lp, feed;
		uint32_t rnd, remaining;
		uint16_t first, last, step;

		socktab__port_range(net, sk, &low, &high, &lp);
		remaining = (uint32_t)(high - low) + 1;
		socktab__random_bytes(&rnd, sizeof(rnd));
		first = (uint16_t)(low + (int)(((uint64_t)rnd * remaining) >> 32));
		/* An odd multiple of the table size: from `first`, every port of its chain's
		 * residue class once (R69). */
		step = (uint16_t)((rnd | 1) * (t->mask + 1));
		last = (uint16_t)(first + t->mask + 1);
		do {
			s1 = slot1(net, first);
			memset(bitmap, 0, sizeof(bitmap));
			socktab__lock(socktab__uslot1_lock(net->udp, s1));
			/* With a feed, the one walk of the chain also tells which of its ports
			 * hold sk's key already. */
			feed = socktab__feed_on(net);
			if (feed)
				memset(held, 0, sizeof(held));
			lport_inuse(0, s1, bitmap, feed ? held : NULL, sk, t->log);
			snum = first;
			do {
				uint32_t b = (uint32_t)snum >> t->log;

				/* A port the feed refuses is passed over as a busy one (a feed
				 * set since the walk asks the chain itself). */
				if (low <= snum && snum <= high &&
				    !((bitmap[b / 64] >> (b % 64)) & 1) &&
				    !socktab__port_reserved(net, snum) &&
				    (!socktab__feed_on(net) ||
				     !feed_claim(net, sk, s1, snum,
						 feed ? (int)((held[b / 64] >> (b % 64)) & 1) : -1))) {
					claimed = true;
					goto found;
				}
				snum = (uint16_t)(snum + step);
			} while (snum != first);
			socktab__unlock(socktab__uslot1_lock(net->udp, s1));
		} while (++first != last);
		return -EADDRINUSE;
	}
	s1 = slot1(net, snum);
	socktab__lock(socktab__uslot1_lock(net->udp, s1));
	if (RD(s1->count) > 10 && use_hash2_on_bind(sk)) {
		/* Many sockets on the port: look only at the (address, port) and (any, port)
		 * chains, unless the primary chain is the shorter one. */
		uint32_t s2 = slot2_index(net, &a, snum), s2any = slot2_index(net, &any, snum);

		if (RD(s1->count) >= RD(t->hash2[s2].count)) {
			bool exist = lport_inuse2(net, snum, s2, sk);

			if (!exist && s2any != s2)
				exist = lport_inuse2(net, snum, s2any, sk);
			if (exist)
				goto busy;
			goto found;
		}
	}
	if (lport_inuse(snum, s1, NULL, NULL, sk, 0))
		goto busy;
found:
	if (!claimed && socktab__feed_on(net) && feed_claim(net, sk, s1, snum, -1))
		goto busy;
	socktab__sk_set_num(sk, (uint16_t)snum);
	if (RD(sk->reuseport)) {
		err = rp_join_locked(net, sk, s1, snum);
		if (err) {
			if (socktab__feed_on(net)) {
				struct socktab_port_key k;

				feed_key(sk, snum, &k);
				feed_release(net, sk, s1, &k);
			}
			socktab__sk_set_num(sk, 0);
			socktab__unlock(socktab__uslot1_lock(net->udp, s1));
			return err;
		}
	}
	/* R103 (sk_add_node_rcu): an AF_INET6 SO_REUSEPORT socket joins the port chain at its
	 * tail, any other at its head, as in hash2 below. The order decides which overlapping
	 * socket an explicit-port bind meets first (lport_inuse). */
	if (sk->family == AF_INET6 && RD(sk->reuseport))
		socktab__hnode_add_tail_rcu(&socktab__sk_udp(sk)->node1, &s1->head);
	else
		socktab__hnode_add_head_rcu(&socktab__sk_udp(sk)->node1, &s1->head);
	atomic_fetch_add_explicit(&s1->count, 1, memory_order_relaxed);
	hash2_add_locked(net, sk, slot2_index(net, &a, snum),
			 sk->family == AF_INET6 && RD(sk->reuseport));
	sk->sport = snum;
	socktab__unlock(socktab__uslot1_lock(net->udp, s1));
	return 0;
busy:
	socktab__unlock(socktab__uslot1_lock(net->udp, s1));
	return -EADDRINUSE;
}

/* ---- sockets ---- */

void socktab__udp_init_sock(struct socktab_sock *sk)
{
	struct socktab__udp_ext *u = socktab__sk_udp(sk);

	atomic_store_explicit(&u->node1.pprev, NULL, memory_order_relaxed);
	atomic_store_explicit(&u->node4.pprev, NULL, memory_order_relaxed);
	WR(u->hash4, 0);
	u->slot2 = 0;
	u->src4 = 0;
	WR(u->rp_conns, 0);
	u->hashed4 = 0;
}

/* Tests only (tests/stress): called when a connect() starts rewriting the socket's key, after
 * the mark that keeps reuseport selection off it. NULL in every other program. */
void (*_Atomic socktab__udp_connect_hook)(struct socktab_sock *sk);

static void connect_hook(struct socktab_sock *sk)
{
	void (*f)(struct socktab_sock *) =
		atomic_load_explicit(&socktab__udp_connect_hook, memory_order_relaxed);

	if (f)
		f(sk);
}

#ifdef SOCKTAB_NAIVE_ORDER
/* The negative-control build (meson -Dnaive_order=true) widens the window it reopens. */
static void connect_window(void)
{
	for (volatile int i = 0; i < 2000; i++)
		;
}
#endif


/* inet_autobind. Caller holds the socket lock. */
static int autobind(struct socktab_net *net, struct socktab_sock *sk)
{
	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (socktab__sk_num(sk))
		return 0;
	return socktab__udp_get_port(net, sk, 0) ? -EAGAIN : 0;
}

/*
 * The route of a datagram from @sk to @d through output device @oif (R76, R95): the wildcard
 * destination resolved, the source address the datagram gets (the socket's own when it has one:
 * inet_saddr, which an AF_INET6 socket has for IPv4 only when bound to a v4-mapped address),
 * -ENETUNREACH without a route, -EACCES for a broadcast route without SO_BROADCAST,
 * -EAFNOSUPPORT for IPv6 from a v4-mapped address.
 */
static int udp_route(struct socktab_sock *sk, struct socktab__dest *d, int oif, bool connect,
		     struct in6_addr *saddr)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct in6_addr own = socktab__sk_v6_saddr(sk), src;
	struct socktab_route_result res;
	int err;

	if (d->v4) {
		uint32_t own4 = socktab__sk_rcv_saddr(sk);

		/* A broadcast/multicast binding names the socket but is no source; its first
		 * connect() gives it the route's (ip4_datagram_connect sets an unset inet_saddr),
		 * which it keeps, disconnect or not, as its binding locks the address. */
		if (sk->family == AF_INET6 && !socktab__v6_is_mapped(&own))
			own4 = 0;
		else if (socktab__skf(sk, SOCKTAB__SKF_SADDR_ANY))
			own4 = socktab__sk_udp(sk)->src4;
		socktab__v6_map(&src, own4);
		socktab__v6_map(&d->daddr6, d->daddr4);
		err = (connect ? socktab__route_connect : socktab__route_output)(
			net, &d->daddr6, oif, own4 ? &src : NULL,
					    socktab__skf(sk, SOCKTAB__SKF_TRANSPARENT), &res);
		if (err)
			return err;
		if (res.type == SOCKTAB_RTN_BROADCAST && !socktab__skf(sk, SOCKTAB__SKF_BROADCAST))
			return -EACCES;
		d->daddr4 = d->daddr6.s6_addr32[3];
		*saddr = own4 ? src : res.src;
		return 0;
	}
	if (socktab__v6_is_any(&d->daddr6))
		d->daddr6 = (struct in6_addr)IN6ADDR_LOOPBACK_INIT;
	err = socktab__route_output(net, &d->daddr6, oif, NULL, false, &res);
	if (err)
		return err;
	if (socktab__v6_is_mapped(&own)) /* ip6_dst_lookup_tail: after the route */
		return -EAFNOSUPPORT;
	*saddr = socktab__v6_is_any(&own) ? res.src : own;
	return 0;
}

/*
 * A connect()/sendto() destination: the common parse, then the datagram paths' reading of
 * the wildcard ("connect to self": loopback of the socket's own kind; sendto() leaves :: to the
 * route).
 */
static int parse_dest(const struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len,
		      struct socktab__dest *d, bool sending)
{
	int err = socktab__parse_dest(sk, addr, len, d,
				      SOCKTAB__DEST_DGRAM | (sending ? SOCKTAB__DEST_SEND : 0));

	if (err || d->v4 || !socktab__v6_is_any(&d->daddr6))
		return err;
	struct in6_addr own = socktab__sk_v6_saddr(sk);

	if (socktab__v6_is_mapped(&own)) {
		d->v4 = true;
		d->daddr4 = htonl(INADDR_LOOPBACK);
		socktab__v6_map(&d->daddr6, d->daddr4);
	} else if (!sending) {
		d->daddr6 = (struct in6_addr)IN6ADDR_LOOPBACK_INIT;
	}
	return 0;
}

/* Disconnect (R75, __udp_disconnect). Caller holds the socket lock. */
static void udp_disconnect(struct socktab_net *net, struct socktab_sock *sk)
{
	static const struct in6_addr any = IN6ADDR_ANY_INIT;
	struct socktab__uslot *s1 = slot1_lock_hashed(net, sk);

	WR(sk->state, SOCKTAB_TCP_CLOSE);
	/* With both its address and its port locked the kernel neither rehashes nor unhashes it: a
	 * hash4 entry stays where it was, stale (R75). Otherwise the rehash to a wildcard address,
	 * or the unhash, takes it out of hash4. */
	if (s1 && (sk->userlocks & (SOCKTAB__BINDADDR_LOCK | SOCKTAB__BINDPORT_LOCK)) !=
			  (SOCKTAB__BINDADDR_LOCK | SOCKTAB__BINDPORT_LOCK))
		unhash4_locked(net, sk);
	socktab__sk_set_dport(sk, 0);
	/* The IPv6 peer address stays, as in the kernel: score6 still takes only datagrams from
	 * that address until the next connect(); IPv4 lookups see the cleared daddr below. */
	WR(sk->addrpair, RD(sk->addrpair) & 0xffffffff00000000ull);
	WR(sk->v4key, sk->family == AF_INET);
	WR(sk->bound_dev_if, 0); /* the kernel clears SO_BINDTODEVICE here */
	if (!(sk->userlocks & SOCKTAB__BINDADDR_LOCK)) {
		WR(sk->addrpair, 0);
		socktab__sk_set_v6_saddr(sk, &any);
		key_wild_set(sk, false); /* the address is the key's again */
		if (s1 && (sk->userlocks & SOCKTAB__BINDPORT_LOCK))
			rehash2_locked(net, sk);
	}
	if (s1)
		socktab__unlock(socktab__uslot1_lock(net->udp, s1));
	if (!(sk->userlocks & SOCKTAB__BINDPORT_LOCK)) {
		unhash(net, sk);
		sk->sport = 0;
	}
}

int socktab__udp_connect_locked(struct socktab_sock *sk, const struct sockaddr *addr,
				socklen_t len)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct socktab__uslot *s1;
	struct in6_addr saddr6, daddr6;
	struct socktab__dest d;
	uint32_t saddr4 = 0;
	bool had_saddr, stale4;
	int err;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (addr->sa_family == AF_UNSPEC) {
		udp_disconnect(net, sk);
		return 0;
	}
	/* inet_dgram_connect: autobind comes before any check of the address. */
	err = autobind(net, sk);
	if (err)
		goto out;
	err = parse_dest(sk, addr, len, &d, false);
	if (err)
		goto out;
	/* R96: a link-local peer's scope becomes the bound device (or must agree with it). */
	if (!d.v4 && socktab__v6_needs_scope(&d.daddr6)) {
		err = -EINVAL;
		if (d.scope_id && !socktab__dev_equal_l3scope(sk, (int)d.scope_id))
			goto out;
		if (d.scope_id)
			WR(sk->bound_dev_if, d.scope_id);
		if (!RD(sk->bound_dev_if))
			goto out;
	}
	err = udp_route(sk, &d, (int)RD(sk->bound_dev_if), true, &saddr6);
	if (err)
		goto out;
	daddr6 = d.daddr6;
	if (d.v4 && socktab__skf(sk, SOCKTAB__SKF_SADDR_ANY))
		socktab__sk_udp(sk)->src4 = saddr6.s6_addr32[3];
	if (d.v4) {
		/* __ip4_datagram_connect: only an unset inet_rcv_saddr takes the route's source
		 * (an AF_INET6 socket with an IPv6 address keeps it, and its 127.0.0.6 alias). */
		had_saddr = socktab__sk_rcv_saddr(sk) != 0;
		saddr4 = had_saddr ? socktab__sk_rcv_saddr(sk) : saddr6.s6_addr32[3];
		if (had_saddr)
			saddr6 = socktab__sk_v6_saddr(sk);
	} else {
		struct in6_addr own = socktab__sk_v6_saddr(sk);

		had_saddr = !socktab__v6_is_any(&own);
	}

	s1 = slot1(net, socktab__sk_num(sk));
	socktab__lock(socktab__uslot1_lock(net->udp, s1));
#ifndef SOCKTAB_NAIVE_ORDER
	/* From here until a reuseport member is connected and out of its group, no lookup may hand
	 * it a datagram of another peer on a key read halfway through the writes below, nor
	 * reuseport selection without reading its key at all: mark it first, so that a reader that
	 * sees any of the writes skips it (score(), socktab__reuseport_select_rcu). Another member
	 * takes what it would have had. */
	if (atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed))
		atomic_fetch_or_explicit(&sk->tw_flags, SOCKTAB__UDPF_CONNECTING,
					 memory_order_seq_cst);
#endif
	connect_hook(sk);
	/* R74: only a socket that had no source address is rehashed, its hash4 entry moved to the
	 * new 4-tuple; one that had keeps its entry where it is, stale (udp_lib_hash4 returns at
	 * once for a socket in hash4). */
	stale4 = socktab__sk_udp(sk)->hashed4 && had_saddr;
	if (!stale4)
		unhash4_locked(net, sk);
	WR(sk->v4key, d.v4);
	socktab__sk_set_v6_daddr(sk, &daddr6);
	socktab__sk_set_v6_saddr(sk, &saddr6);
	if (d.v4)
		WR(sk->addrpair, (uint64_t)d.daddr4 | ((uint64_t)saddr4 << 32));
	else /* an IPv6 peer: both v4 aliases are 127.0.0.6, matching no IPv4 datagram */
		WR(sk->addrpair, (uint64_t)SOCKTAB__LOOPBACK4_IPV6 | ((uint64_t)SOCKTAB__LOOPBACK4_IPV6 << 32));
	socktab__sk_set_dport(sk, d.port);
	if (!had_saddr) {
		rehash2_locked(net, sk); /* leaves the group before has_conns is set (kernel order) */
		key_wild_set(sk, true); /* hashed under a wildcard, which stays its key */
	}
#ifdef SOCKTAB_NAIVE_ORDER
	connect_window();
#endif
	rp_set_conns(net, sk);
	WR(sk->state, SOCKTAB_TCP_ESTABLISHED);
	/* R73: connected with a local address: into hash4, out of the reuseport group. */
	rp_detach(net, sk);
	if (!stale4)
		hash4_locked(net, sk);
	/* Release: a reader that sees the mark gone sees the state and the group left. */
	atomic_fetch_and_explicit(&sk->tw_flags, (uint8_t)~SOCKTAB__UDPF_CONNECTING,
				  memory_order_release);
	socktab__unlock(socktab__uslot1_lock(net->udp, s1));
out:
	return err;
}

void socktab__udp_rehash(struct socktab_sock *sk)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct socktab__uslot *s1 = slot1_lock_hashed(net, sk);

	if (!s1)
		return;
	rehash2_locked(net, sk);
	/* udp_rehash4: a socket in hash4 (which has a local address: a disconnect that reset it
	 * took the socket out) moves to the 4-tuple it has now. */
	if (socktab__sk_udp(sk)->hashed4) {
		unhash4_locked(net, sk);
		hash4_locked(net, sk);
	}
	socktab__unlock(socktab__uslot1_lock(net->udp, s1));
}

void socktab__udp_close_locked(struct socktab_sock *sk)
{
	SOCKTAB__ASSERT_SK_LOCKED(sk);
	unhash(socktab__sk_net(sk), sk);
	WR(sk->state, SOCKTAB__FREE);
}

/* ---- public UDP calls ---- */

/* The table side of sendto() (socktab_udp_sendto()). Caller holds the socket lock. */
int socktab__udp_sendto_locked(struct socktab_sock *sk, const struct sockaddr *dst, socklen_t len,
			       struct sockaddr_storage *src, struct sockaddr_storage *to)
{
	struct socktab_net *net;
	struct in6_addr s6;
	struct socktab__dest d;
	int err, family, oif;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	net = socktab__sk_net(sk);
	family = sk->family;
	oif = (int)RD(sk->bound_dev_if);
	/* inet_send_prepare: autobind first (-EAGAIN), whatever the destination. */
	err = autobind(net, sk);
	if (err)
		return err;
	err = -EINVAL;
	if (dst && len < (socklen_t)sizeof(sa_family_t))
		return err;
	if (dst && family == AF_INET6 && dst->sa_family == AF_UNSPEC)
		dst = NULL; /* udpv6_sendmsg: AF_UNSPEC means "no address" */
	if (dst) {
		err = parse_dest(sk, dst, len, &d, true);
		if (err)
			return err;
		err = -EINVAL;
		if (!d.port)
			return err;
	} else {
		err = -EDESTADDRREQ;
		if (RD(sk->state) != SOCKTAB_TCP_ESTABLISHED)
			return err;
		memset(&d, 0, sizeof(d));
		d.v4 = RD(sk->v4key);
		d.daddr4 = socktab__sk_daddr(sk);
		d.daddr6 = socktab__sk_v6_daddr(sk);
		d.port = socktab__sk_dport(sk);
		/* udpv6_sendmsg hands a v4-mapped peer to udp_sendmsg as an explicit address,
		 * where port 0 is refused. */
		err = -EINVAL;
		if (family == AF_INET6 && d.v4 && !d.port)
			return err;
	}
	/* udpv6_sendmsg: the scope of a destination that needs one picks the output device; the
	 * bound device otherwise (no agreement check, unlike connect(), R96). */
	if (!d.v4 && d.scope_id && socktab__v6_needs_scope(&d.daddr6))
		oif = (int)d.scope_id;
	err = udp_route(sk, &d, oif, false, &s6);
	if (err)
		return err;
	if (src)
		socktab__make_sockaddr(src, family, &s6, htons(socktab__sk_num(sk)), (uint32_t)oif);
	if (to)
		socktab__make_sockaddr(to, family, &d.daddr6, d.port, (uint32_t)oif);
	return 0;
}

int socktab_net_set_udp_hash4(struct socktab_net *net, int on)
{
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_net_set_udp_hash4()");
	if (!net)
		return -EINVAL;
	WR(net->udp->hash4_on, on != 0);
	return 0;
}

int socktab_udp_stats(struct socktab_net *net, struct socktab_udp_stats *st)
{
	struct socktab__udp_table *t;

	if (!net || !st)
		return -EINVAL;
	t = net->udp;
	memset(st, 0, sizeof(*st));
	st->slots = t->mask + 1;
	st->slots4 = t->mask4 + 1;
	for (uint32_t i = 0; i <= t->mask; i++) {
		st->hashed += RD(t->hash[i].count);
		st->hashed4 += RD(t->hash2[i].hash4_cnt);
	}
	return 0;
}

int socktab_sock_proto(const struct socktab_sock *sk)
{
	if (!sk || RD(sk->state) == SOCKTAB__FREE)
		return -EBADF;
	return socktab__sk_proto(sk);
}
