/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lhash2: the listener table and its RCU walk (listen() and child sockets are socket.c's; the
 * lookups that try established sockets first and listeners second are lookup.c's).
 *
 * Table: lhash2[portaddr_hash(bound address, port) & mask] (R29); a wildcard listener (0.0.0.0 or
 * ::) sits in the shared "any" slot of its port. Chains are hlist_nulls ending in slot +
 * LISTENING_NULLS_BASE (R19), so a reader carried from an ehash chain onto a listener chain (or
 * back) by a socket whose key changed in place notices and restarts. A listener uses the
 * socket's one chain node, as in the kernel. Writers hold the slot's lock stripe.
 * Lookup (R30-R33, R92): score the chain of (destination address, port), and only if nothing
 * matched the "any" chain; a listener bound to a device takes only that device's (or VRF's)
 * traffic and scores higher; a strictly better score wins, ties keep the earlier entry; a winner
 * in a reuseport group hands over to the member picked by the 4-tuple hash (R35).
 * Every socket goes back to its pool only after a grace period (R23 extended to all), so a walk
 * never follows a freed listener. The walk takes no reference; a referenced lookup (lookup.c)
 * pins the result with increment-if-not-zero and re-checks it (it may have been closed
 * meanwhile), and walks again otherwise. SO_INCOMING_CPU (R106): a listener bound to the
 * lookup's CPU scores one more, and its group prefers such members (reuseport.c); the CPU is
 * asked for only when a scored listener has the option set. The dispatch hook (R125,
 * sk_lookup.c) runs before lhash2, as the kernel's sk_lookup programs do.
 * Groups (R34, reuseport.c): a listener joins a group of a listener with the same net, port,
 * family, v6only, device, owner uid and identical address.
 */
#include <stdlib.h>

#include "ehash.h"
#include "listen.h"
#include "reuseport.h"
#include "sk_lookup.h"

static struct socktab__lhead *lhash2_slot(struct socktab_net *net, const struct in6_addr *a,
					  uint16_t port)
{
	struct socktab__tables *t = net->tab;

	return &t->lhash2[socktab__portaddr_hash(net, a, port) & t->lhash2_mask];
}

/* ---- reuseport groups: which listener a new one joins ---- */

/*
 * R34 (inet_reuseport_add_sock): the listener whose group @sk joins, or NULL. It may be in no
 * group yet (it set SO_REUSEPORT after its listen()): reuseport_add_sock then makes it one.
 * Caller holds the lhash2 slot lock of sk's address.
 */
static struct socktab_sock *group_peer_locked(struct socktab__lhead *slot, struct socktab_sock *sk)
{
	struct in6_addr a = socktab__sk_v6_saddr(sk);

	SOCKTAB__ASSERT_LOCKED(socktab__lhead_lock(socktab__sk_net(sk)->tab, slot));
	uintptr_t p;

	socktab__hlist_for_each(p, &slot->head, memory_order_relaxed) {
		struct socktab_sock *sk2 = (struct socktab_sock *)p;
		struct in6_addr a2 = socktab__sk_v6_saddr(sk2);

		if (sk2 != sk && socktab__sk_net(sk2) == socktab__sk_net(sk) && RD(sk2->reuseport) &&
		    sk2->family == sk->family && sk2->v6only == sk->v6only &&
		    RD(sk2->bound_dev_if) == RD(sk->bound_dev_if) && sk2->uid == sk->uid &&
		    socktab__sk_num(sk2) == socktab__sk_num(sk) && !memcmp(&a, &a2, 16))
			return sk2;
	}
	return NULL;
}

/* ---- hashing a listener ---- */

/* Insert @sk (state LISTEN, owning its port) into lhash2 and its reuseport group. */
int socktab__listen_hash(struct socktab_net *net, struct socktab_sock *sk)
{
	struct in6_addr a = socktab__sk_v6_saddr(sk);
	struct socktab__lhead *slot = lhash2_slot(net, &a, socktab__sk_num(sk));
	int err = 0;

	socktab__lock(socktab__lhead_lock(net->tab, slot));
	if (RD(sk->reuseport)) {
		struct socktab_sock *peer = group_peer_locked(slot, sk);

		socktab__lock(&net->reuseport_lock);
		if (peer && !atomic_load_explicit(&peer->cold->reuseport_cb, memory_order_relaxed))
			err = socktab__reuseport_add_locked(net, peer, NULL);
		if (!err)
			err = socktab__reuseport_add_locked(net, sk, peer);
		socktab__unlock(&net->reuseport_lock);
		if (err) {
			socktab__unlock(socktab__lhead_lock(net->tab, slot));
			return err;
		}
	}
	WR(sk->hash, socktab__portaddr_hash(net, &a, socktab__sk_num(sk)));
	if (sk->family == AF_INET6 && RD(sk->reuseport)) {
		/* R33: AF_INET6 reuseport listeners go to the tail. */
		socktab__hnode_add_tail_rcu(&sk->node, &slot->head);
	} else {
		socktab__hnode_add_head_rcu(&sk->node, &slot->head);
	}
	socktab__unlock(socktab__lhead_lock(net->tab, slot));
	return 0;
}

/* Remove listener @sk from lhash2 and its group. Caller holds the socket lock. */
void socktab__listen_unhash(struct socktab_sock *sk)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct in6_addr a = socktab__sk_v6_saddr(sk);
	struct socktab__lhead *slot = lhash2_slot(net, &a, socktab__sk_num(sk));

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	socktab__lock(socktab__lhead_lock(net->tab, slot));
	if (socktab__hnode_hashed(&sk->node))
		socktab__hnode_del_rcu(&sk->node);
	socktab__lock(&net->reuseport_lock);
	socktab__reuseport_detach_locked(sk);
	socktab__unlock(&net->reuseport_lock);
	socktab__unlock(socktab__lhead_lock(net->tab, slot));
}

/* ---- listener lookup ---- */

struct lkey {
	const struct socktab_net *net;
	uint16_t hnum;
	bool v6;
	uint32_t addr4;          /* IPv4: the address scanned (0 in the wildcard pass) */
	struct in6_addr addr6;   /* IPv6: likewise */
	int dif, sdif;           /* ingress device and its L3 master */
	bool l3mdev_accept;      /* net.ipv4.tcp_l3mdev_accept, when sdif is set */
	int cpu;                 /* the receiving CPU once asked, else SOCKTAB__CPU_UNASKED */
};

/* R31 / R32, with the device rule of R92 and the CPU of R106 (compute_score / inet6
 * compute_score). */
static int score(const struct socktab_sock *sk, struct lkey *k)
{
	int fam = sk->family;
	uint32_t bound;

	if (socktab__sk_num(sk) != k->hnum || RD(sk->state) != SOCKTAB_TCP_LISTEN)
		return -1;
	if (!k->v6) {
		if (socktab__ipv6_only(sk) || socktab__sk_rcv_saddr(sk) != k->addr4)
			return -1;
	} else {
		if (fam != AF_INET6)
			return -1;
		struct in6_addr a = socktab__sk_v6_saddr(sk);

		if (memcmp(&a, &k->addr6, 16))
			return -1;
	}
	bound = RD(sk->bound_dev_if);
	if (!socktab__bound_dev_eq(k->l3mdev_accept, bound, k->dif, k->sdif) ||
	    !socktab__ehash_net_match(sk, k->net))
		return -1;
	return (bound ? 2 : 1) + (!k->v6 && fam == AF_INET) +
	       socktab__incpu_match(socktab__sk_incpu_hint(sk, RD(sk->tw_flags)), &k->cpu);
}

/*
 * Walk one lhash2 chain. Returns the pick (not yet referenced) or NULL; sets *restart when the
 * walk ended on a foreign chain. Caller is in an RCU read-side section.
 */
static struct socktab_sock *lhash2_walk(struct socktab_net *net, struct lkey *k,
					uint32_t phash, bool *restart)
{
	struct in6_addr a = k->addr6;
	uint32_t idx;
	struct socktab_sock *result = NULL;
	int hiscore = 0;
	uintptr_t p;

	SOCKTAB__ASSERT_RCU();
	if (!k->v6)
		socktab__v6_map(&a, k->addr4);
	idx = socktab__portaddr_hash(net, &a, k->hnum) & net->tab->lhash2_mask;
	*restart = false;
	socktab__hlist_for_each(p, &net->tab->lhash2[idx].head, memory_order_acquire) {
		struct socktab_sock *sk = (struct socktab_sock *)p;
		int sc = score(sk, k);

		if (sc > hiscore) {
			if (RD(sk->reuseport)) {
				struct socktab_sock *pick =
					socktab__reuseport_select_rcu(sk, phash, &k->cpu);

				if (pick)
					return pick;
			}
			result = sk;
			hiscore = sc;
		}
	}
	if (socktab__nulls_value(p) != idx + SOCKTAB__LISTENING_NULLS_BASE)
		*restart = true;
	return result;
}

/* The listener for @k: the pass over the chain of its address, then the wildcard pass. Not
 * referenced; valid for the caller's RCU read-side section (listeners are freed after a grace
 * period). */
static struct socktab_sock *listener_lookup_rcu(struct socktab_net *net, struct lkey *k,
						uint32_t phash)
{
	struct socktab_sock *sk;
	struct lkey any = *k;
	bool restart;

	SOCKTAB__ASSERT_RCU();
	memset(&any.addr6, 0, sizeof(any.addr6));
	any.addr4 = 0;
	do {
		sk = lhash2_walk(net, k, phash, &restart);
		if (!sk && !restart) {
			any.cpu = k->cpu; /* the CPU, if the first pass asked for it */
			sk = lhash2_walk(net, &any, phash, &restart);
			k->cpu = any.cpu;
		}
	} while (restart);
	return sk;
}

static struct socktab_sock *listener4_hooked(struct socktab_net *net, uint32_t saddr,
					     uint16_t sport, uint32_t daddr, uint16_t dport,
					     int dif, int sdif, bool *hooked);
static struct socktab_sock *listener6_hooked(struct socktab_net *net,
					     const struct in6_addr *saddr, uint16_t sport,
					     const struct in6_addr *daddr, uint16_t dport, int dif,
					     int sdif, bool *hooked);

/*
 * The listener step (R125): the net's dispatch hooks first, as __inet_lookup_listener runs
 * them, then lhash2. *@hooked is set (true) when the result is the hooks' selection, which may
 * listen on another port than the packet's (a referenced lookup re-checks it by that rule,
 * lookup.c), and left alone otherwise. A net
 * without callbacks pays one test of a byte in the net's first line (which the hash reads
 * anyway) and an untaken branch; with callbacks the step is redone out of line, with @hook.
 */
static inline __attribute__((always_inline)) struct socktab_sock *
listener4_rcu(struct socktab_net *net, uint32_t saddr, uint16_t sport, uint32_t daddr,
	      uint16_t dport, int dif, int sdif, bool *hooked, bool hook)
{
	struct lkey k = { .net = net, .hnum = ntohs(dport), .addr4 = daddr, .dif = dif,
			  .sdif = sdif, .cpu = SOCKTAB__CPU_UNASKED };
	uint32_t phash;

	if (!hook && socktab__sk_lookup_on(net))
		return listener4_hooked(net, saddr, sport, daddr, dport, dif, sdif, hooked);
	phash = socktab__ehashfn4(net, daddr, k.hnum, saddr, sport);
	if (hook) {
		struct socktab_sock *sk = socktab__sk_lookup_run_rcu(
			net, SOCKTAB_TCP, false, &saddr, sport, &daddr, k.hnum, dif, phash);

		if (sk) {
			*hooked = true;
			return sk == SOCKTAB__SK_LOOKUP_DROP ? NULL : sk; /* R128 */
		}
	}
	k.l3mdev_accept = sdif && RD(net->tcp_l3mdev_accept);
	return listener_lookup_rcu(net, &k, phash);
}

static inline __attribute__((always_inline)) struct socktab_sock *
listener6_rcu(struct socktab_net *net, const struct in6_addr *saddr, uint16_t sport,
	      const struct in6_addr *daddr, uint16_t dport, int dif, int sdif, bool *hooked,
	      bool hook)
{
	struct lkey k = { .net = net, .hnum = ntohs(dport), .v6 = true, .dif = dif, .sdif = sdif,
			  .cpu = SOCKTAB__CPU_UNASKED };
	uint32_t phash;

	if (socktab__v6_is_mapped(saddr) && socktab__v6_is_mapped(daddr))
		return listener4_rcu(net, saddr->s6_addr32[3], sport, daddr->s6_addr32[3], dport,
				     dif, sdif, hooked, hook);
	if (!hook && socktab__sk_lookup_on(net))
		return listener6_hooked(net, saddr, sport, daddr, dport, dif, sdif, hooked);
	phash = socktab__ehashfn6(net, daddr, k.hnum, saddr, sport);
	if (hook) {
		struct socktab_sock *sk = socktab__sk_lookup_run_rcu(
			net, SOCKTAB_TCP, true, saddr, sport, daddr, k.hnum, dif, phash);

		if (sk) {
			*hooked = true;
			return sk == SOCKTAB__SK_LOOKUP_DROP ? NULL : sk; /* R128 */
		}
	}
	k.l3mdev_accept = sdif && RD(net->tcp_l3mdev_accept);
	k.addr6 = *daddr;
	return listener_lookup_rcu(net, &k, phash);
}

static __attribute__((noinline, cold)) struct socktab_sock *
listener4_hooked(struct socktab_net *net, uint32_t saddr, uint16_t sport, uint32_t daddr,
		 uint16_t dport, int dif, int sdif, bool *hooked)
{
	return listener4_rcu(net, saddr, sport, daddr, dport, dif, sdif, hooked, true);
}

static __attribute__((noinline, cold)) struct socktab_sock *
listener6_hooked(struct socktab_net *net, const struct in6_addr *saddr, uint16_t sport,
		 const struct in6_addr *daddr, uint16_t dport, int dif, int sdif, bool *hooked)
{
	return listener6_rcu(net, saddr, sport, daddr, dport, dif, sdif, hooked, true);
}

/* The RCU-scoped listener lookups of socktab/lookup.h are this table's step itself: they take
 * no reference and enter no section (lookup.c composes the referenced ones). */
struct socktab_sock *socktab_lookup_listener4_rcu(struct socktab_net *net, uint32_t saddr,
						  uint16_t sport, uint32_t daddr, uint16_t dport,
						  int dif, int sdif)
{
	bool hooked;

	SOCKTAB__ASSERT_RCU();
	if (!net)
		return NULL;
	return listener4_rcu(net, saddr, sport, daddr, dport, dif, sdif, &hooked, false);
}

struct socktab_sock *socktab_lookup_listener6_rcu(struct socktab_net *net,
						  const struct in6_addr *saddr, uint16_t sport,
						  const struct in6_addr *daddr, uint16_t dport,
						  int dif, int sdif)
{
	bool hooked;

	SOCKTAB__ASSERT_RCU();
	if (!net || !saddr || !daddr)
		return NULL;
	return listener6_rcu(net, saddr, sport, daddr, dport, dif, sdif, &hooked, false);
}

struct socktab_sock *socktab__listener4_rcu(struct socktab_net *net, uint32_t saddr,
					    uint16_t sport, uint32_t daddr, uint16_t dport,
					    int dif, int sdif, bool *hooked)
{
	SOCKTAB__ASSERT_RCU();
	*hooked = false;
	return listener4_rcu(net, saddr, sport, daddr, dport, dif, sdif, hooked, false);
}

struct socktab_sock *socktab__listener6_rcu(struct socktab_net *net,
					    const struct in6_addr *saddr, uint16_t sport,
					    const struct in6_addr *daddr, uint16_t dport, int dif,
					    int sdif, bool *hooked)
{
	SOCKTAB__ASSERT_RCU();
	*hooked = false;
	return listener6_rcu(net, saddr, sport, daddr, dport, dif, sdif, hooked, false);
}
