/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lhash2 (listeners), listen(), child sockets, and the packet-path lookup
 * that tries established sockets first and listeners second.
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
 * never follows a freed listener. A referenced lookup still pins the result with
 * increment-if-not-zero and re-checks it (it may have been closed meanwhile), and the walk
 * restarts otherwise. Departures: no SO_INCOMING_CPU bonus, no BPF.
 * Groups (R34, reuseport.c): a listener joins a group of a listener with the same net, port,
 * family, v6only, device, owner uid and identical address.
 */
#include <stdlib.h>

#include "addr.h"
#include "bind.h"
#include "ehash.h"
#include "listen.h"
#include "reuseport.h"
#include "timewait.h"

static struct socktab__lhead *lhash2_slot(struct socktab_net *net, const struct in6_addr *a,
					  uint16_t port)
{
	struct socktab__tables *t = net->tab;

	return &t->lhash2[socktab__portaddr_hash(net, a, port) & t->lhash2_mask];
}

/* ---- reuseport groups: which listener a new one joins ---- */

/* R34: the member @sk may join, or NULL. Caller holds the lhash2 slot lock of sk's address. */
static struct socktab_sock *group_peer_locked(struct socktab__lhead *slot, struct socktab_sock *sk)
{
	struct in6_addr a = socktab__sk_v6_saddr(sk);

	SOCKTAB__ASSERT_LOCKED(socktab__lhead_lock(socktab__sk_net(sk)->tab, slot));
	for (uintptr_t p = atomic_load_explicit(&slot->head.first, memory_order_relaxed);
	     !socktab__is_nulls(p);
	     p = atomic_load_explicit(&((struct socktab_sock *)p)->node.next, memory_order_relaxed)) {
		struct socktab_sock *sk2 = (struct socktab_sock *)p;
		struct in6_addr a2 = socktab__sk_v6_saddr(sk2);

		if (sk2 != sk && socktab__sk_net(sk2) == socktab__sk_net(sk) && RD(sk2->reuseport) &&
		    sk2->family == sk->family && sk2->v6only == sk->v6only &&
		    RD(sk2->bound_dev_if) == RD(sk->bound_dev_if) && sk2->uid == sk->uid &&
		    socktab__sk_num(sk2) == socktab__sk_num(sk) && !memcmp(&a, &a2, 16) &&
		    atomic_load_explicit(&sk2->cold->reuseport_cb, memory_order_relaxed))
			return sk2;
	}
	return NULL;
}

/* ---- hashing a listener ---- */

/* Insert @sk (state LISTEN, owning its port) into lhash2 and its reuseport group. */
static int listen_hash(struct socktab_net *net, struct socktab_sock *sk)
{
	struct in6_addr a = socktab__sk_v6_saddr(sk);
	struct socktab__lhead *slot = lhash2_slot(net, &a, socktab__sk_num(sk));
	int err = 0;

	socktab__lock(socktab__lhead_lock(net->tab, slot));
	if (RD(sk->reuseport)) {
		socktab__lock(&net->reuseport_lock);
		err = socktab__reuseport_add_locked(net, sk, group_peer_locked(slot, sk));
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

int socktab_listen(struct socktab_sock *sk, int backlog)
{
	struct socktab_net *net;
	unsigned int somax;
	int err, st;

	if (!sk)
		return -EINVAL;
	if (socktab__sk_proto(sk) == SOCKTAB_UDP) /* listen(2) on a datagram socket */
		return RD(sk->state) == SOCKTAB__FREE ? -EBADF : -EOPNOTSUPP;
	socktab__lock(socktab__sk_lock(sk));
	st = RD(sk->state);
	if (st == SOCKTAB__FREE || st == SOCKTAB_TCP_TIME_WAIT) {
		socktab__unlock(socktab__sk_lock(sk));
		return -EBADF;
	}
	net = socktab__sk_net(sk);
	somax = (unsigned int)RD(net->somaxconn);
	/* The kernel compares as unsigned: a negative backlog means "as large as allowed". */
	if ((unsigned int)backlog > somax)
		backlog = (int)somax;
	if (st == SOCKTAB_TCP_LISTEN) {
		sk->cold->backlog = backlog;
		socktab__unlock(socktab__sk_lock(sk));
		return 0;
	}
	/* R104 (inet_listen): only an SS_UNCONNECTED socket in CLOSE or LISTEN. One that got
	 * connected stays SS_CONNECTED after a reset, one whose SYN is unanswered is SS_CONNECTING
	 * (SYN_SENT): EINVAL until connect(AF_UNSPEC). */
	if (st != SOCKTAB_TCP_CLOSE || socktab__skf(sk, SOCKTAB__SKF_CONNECTED)) {
		socktab__unlock(socktab__sk_lock(sk));
		return -EINVAL;
	}
	socktab__tw_reap(net, 8);
	/* R46: LISTEN first, so the port is re-validated as a listener's (no SO_REUSEADDR pass). */
	WR(sk->state, SOCKTAB_TCP_LISTEN);
	err = socktab__get_port(net, sk, socktab__sk_num(sk));
	if (!err) {
		err = listen_hash(net, sk);
		if (err && !(sk->userlocks & SOCKTAB__BINDPORT_LOCK) &&
		    !(sk->userlocks & SOCKTAB__BINDADDR_LOCK))
			socktab__put_port(sk);
	}
	if (err) {
		WR(sk->state, SOCKTAB_TCP_CLOSE);
	} else {
		sk->cold->backlog = backlog;
	}
	socktab__unlock(socktab__sk_lock(sk));
	return err;
}

int socktab_listen_backlog(struct socktab_sock *sk)
{
	int ret;

	if (!sk)
		return -EINVAL;
	socktab__lock(socktab__sk_lock(sk));
	ret = RD(sk->state) == SOCKTAB_TCP_LISTEN ? sk->cold->backlog : -EINVAL;
	socktab__unlock(socktab__sk_lock(sk));
	return ret;
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
};

/* R31 / R32, with the device rule of R92 (compute_score / inet6 compute_score). */
static int score(const struct socktab_sock *sk, const struct lkey *k)
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
	return (bound ? 2 : 1) + (!k->v6 && fam == AF_INET);
}

/*
 * Walk one lhash2 chain. Returns the pick (not yet referenced) or NULL; sets *restart when the
 * walk ended on a foreign chain. Caller is in an RCU read-side section.
 */
static struct socktab_sock *lhash2_walk(struct socktab_net *net, const struct lkey *k,
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
	for (p = atomic_load_explicit(&net->tab->lhash2[idx].head.first, memory_order_acquire);
	     !socktab__is_nulls(p);
	     p = atomic_load_explicit(&((struct socktab_sock *)p)->node.next,
				      memory_order_acquire)) {
		struct socktab_sock *sk = (struct socktab_sock *)p;
		int sc = score(sk, k);

		if (sc > hiscore) {
			if (RD(sk->reuseport)) {
				struct socktab_sock *pick = socktab__reuseport_select_rcu(sk, phash);

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
static struct socktab_sock *listener_lookup_rcu(struct socktab_net *net, const struct lkey *k,
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
		if (!sk && !restart)
			sk = lhash2_walk(net, &any, phash, &restart);
	} while (restart);
	return sk;
}

struct socktab_sock *socktab__lhash2_lookup4_rcu(struct socktab_net *net, uint32_t saddr,
						 uint16_t sport, uint32_t daddr, uint16_t dport,
						 int dif, int sdif)
{
	struct lkey k = { .net = net, .hnum = ntohs(dport), .addr4 = daddr, .dif = dif,
			  .sdif = sdif };

	k.l3mdev_accept = sdif && RD(net->tcp_l3mdev_accept);
	return listener_lookup_rcu(net, &k, socktab__ehashfn4(net, daddr, k.hnum, saddr, sport));
}

struct socktab_sock *socktab__lhash2_lookup6_rcu(struct socktab_net *net,
						 const struct in6_addr *saddr, uint16_t sport,
						 const struct in6_addr *daddr, uint16_t dport,
						 int dif, int sdif)
{
	struct lkey k = { .net = net, .hnum = ntohs(dport), .v6 = true, .dif = dif, .sdif = sdif };

	if (socktab__v6_is_mapped(saddr) && socktab__v6_is_mapped(daddr))
		return socktab__lhash2_lookup4_rcu(net, saddr->s6_addr32[3], sport,
						   daddr->s6_addr32[3], dport, dif, sdif);
	k.l3mdev_accept = sdif && RD(net->tcp_l3mdev_accept);
	k.addr6 = *daddr;
	return listener_lookup_rcu(net, &k, socktab__ehashfn6(net, daddr, k.hnum, saddr, sport));
}

/* ---- children ---- */

/*
 * The device a child is bound to (R94): the listener's; for an unbound listener, the VRF of
 * the ingress device with tcp_l3mdev_accept (inet_request_bound_dev_if), and for IPv6 with a
 * link-local peer the ingress device itself (tcp_v6_init_req).
 */
static int child_dev(struct socktab_net *net, const struct socktab_sock *listener,
		     const struct in6_addr *remote, bool v4, int dif, int sdif)
{
	int bound = (int)RD(listener->bound_dev_if);

	if (bound)
		return bound;
	if (!v4 && socktab__v6_needs_scope(remote))
		return dif;
	return RD(net->tcp_l3mdev_accept) ? sdif : 0;
}

struct socktab_sock *socktab_sock_new_child(struct socktab_sock *listener,
					    const struct sockaddr *local,
					    const struct sockaddr *remote, socklen_t len, int dif,
					    int sdif)
{
	struct socktab_net *net;
	struct socktab_sock *child = NULL, *tw = NULL;
	struct socktab__bhead *head;
	struct socktab__bind_prealloc pa;
	struct in6_addr la, ra;
	uint16_t lport_be, rport_be, port;
	int family, err = -EINVAL;
	bool v4;

	if (!listener || !local || !remote || dif < 0 || sdif < 0) {
		errno = EINVAL;
		return NULL;
	}
	socktab__lock(socktab__sk_lock(listener));
	if (RD(listener->state) != SOCKTAB_TCP_LISTEN)
		goto out;
	net = socktab__sk_net(listener);
	family = listener->family;
	port = socktab__sk_num(listener);
	if (socktab__parse_endpoint(family, local, len, &la, &lport_be) ||
	    socktab__parse_endpoint(family, remote, len, &ra, &rport_be) || ntohs(lport_be) != port)
		goto out;
	/* No segment carries a v4-mapped address on one side and native IPv6 on the other. */
	if (family == AF_INET6 && socktab__v6_is_mapped(&la) != socktab__v6_is_mapped(&ra))
		goto out;
	v4 = family == AF_INET || socktab__v6_is_mapped(&la);
	err = -ENOMEM;
	/* The child's address bucket may be new: allocated now, so nothing fails once the child
	 * is in ehash. */
	if (socktab__bind_prealloc(&pa))
		goto out;
	child = socktab__pool_alloc(socktab__sock_pool(net, SOCKTAB_TCP, family));
	if (!child) {
		socktab__bind_prealloc_free(&pa);
		goto out;
	}
	/* The child is private until we return it: no lock of its own is needed (taking it under
	 * the listener's would also look like a lock-order inversion, since pool objects change
	 * roles). */
	socktab__sock_init_fields(child);
	memset(socktab__sk_priv(child), 0, net->priv_size);
	WR(child->v4key, v4);
	WR(child->addrpair, v4 ? ((uint64_t)ra.s6_addr32[3] | (uint64_t)la.s6_addr32[3] << 32)
			       : ((uint64_t)SOCKTAB__LOOPBACK4_IPV6 << 32));
	socktab__sk_set_v6_saddr(child, &la);
	socktab__sk_set_v6_daddr(child, &ra);
	WR(child->portpair, (uint32_t)rport_be);
	WR(child->reuse, RD(listener->reuse)); /* children inherit SO_REUSEADDR (R48) */
	WR(child->reuseport, RD(listener->reuseport));
	WR(child->bound_dev_if, (uint32_t)child_dev(net, listener, &ra, v4, dif, sdif));
	child->v6only = listener->v6only;
	child->uid = listener->uid;
	/* The kernel's child is a copy of the listener (sk_clone_lock): it keeps SO_LINGER, the
	 * socket-level options and SOCK_BINDADDR_LOCK (a disconnect keeps its address), but not
	 * SOCK_BINDPORT_LOCK: moving to CLOSE releases a child's port. */
	child->userlocks = listener->userlocks & SOCKTAB__BINDADDR_LOCK;
	atomic_store_explicit(&child->cold->flags,
			      atomic_load_explicit(&listener->cold->flags, memory_order_relaxed) &
				      (SOCKTAB__SKF_FREEBIND | SOCKTAB__SKF_TRANSPARENT |
				       SOCKTAB__SKF_BROADCAST | SOCKTAB__SKF_NO_PORT |
				       SOCKTAB__SKF_LINGER),
			      memory_order_relaxed);
	child->cold->linger_secs = listener->cold->linger_secs;
	child->cold->local_port_range = listener->cold->local_port_range;
	WR(child->state, SOCKTAB_TCP_SYN_RECV);
	atomic_store_explicit(&child->refcnt, 1, memory_order_release);

	/*
	 * __inet_inherit_port: the child owns the listener's port on its own local address (the
	 * live kernel shows this: after a wildcard listener closes, its children block 127.0.0.1:P
	 * but not 127.0.0.2:P), so it joins the tb2 of (port, that address).
	 */
	head = &net->tab->bhash[socktab__bhashfn(net, port) & net->tab->bhash_mask];
	socktab__lock(socktab__bhead_lock(net->tab, head));
	if (socktab__check_established_locked(net, child, port,
					      socktab__sk_ehashfn(net, child, port), true, &tw) !=
	    SOCKTAB__UNIQUE) {
		socktab__unlock(socktab__bhead_lock(net->tab, head));
		socktab__bind_prealloc_free(&pa);
		err = -EADDRINUSE;
		goto fail;
	}
	bool created;
	struct socktab__tb *tb = socktab__sk_bl(listener)->tb2->tb;
	int l3mdev = socktab__sk_bound_l3mdev(child);

	/* A child in another VRF domain than its listener's bucket owns the port in its own
	 * (__inet_inherit_port); the buckets come from @pa, so this cannot fail. */
	if (tb->l3mdev != l3mdev) {
		tb = socktab__tb_find_locked(head, net, port, l3mdev);
		if (!tb)
			tb = socktab__tb_create_locked(head, net, port, l3mdev, &pa);
	}
	struct socktab__tb2 *tb2 = socktab__tb2_find_or_create_locked(net, tb, child, &pa,
								      &created);

	if (created) {
		tb2->fastreuse = socktab__sk_bl(listener)->tb2->fastreuse;
		tb2->fastreuseport = socktab__sk_bl(listener)->tb2->fastreuseport;
	}
	socktab__bind_prealloc_free(&pa);
	socktab__bind_hash_locked(child, tb2, port);
	if (tw) {
		socktab__bind_unhash_locked(net, tw);
		atomic_fetch_sub_explicit(&net->n_time_wait, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&net->n_tw_recycled, 1, memory_order_relaxed);
	}
	socktab__unlock(socktab__bhead_lock(net->tab, head));
	if (tw)
		socktab__tw_deschedule_put(net, tw);
	atomic_fetch_add_explicit(&net->n_established, 1, memory_order_relaxed);
	socktab__unlock(socktab__sk_lock(listener));
	return child;
fail:
	WR(child->state, SOCKTAB__FREE);
	socktab_sock_put(child);
	child = NULL;
out:
	socktab__unlock(socktab__sk_lock(listener));
	errno = -err;
	return NULL;
}
