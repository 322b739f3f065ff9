/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SO_REUSEPORT groups (the kernel's sock_reuseport.c), shared by TCP listeners (listen.c) and
 * UDP sockets (udp.c): same groups, same selection (R34, R35).
 * A group is an array of members replaced (not resized) when full and freed after a grace
 * period; a leaving member is replaced by the last one. Writers hold the net's reuseport lock, a
 * leaf; readers select under RCU. Which sockets may share a group is the caller's rule (R34):
 * listen.c and udp.c each find the peer a socket joins.
 */
#include <stdlib.h>

#include "reuseport.h"

static struct socktab__reuseport *group_alloc(uint32_t cap)
{
	struct socktab__reuseport *g = calloc(1, sizeof(*g) + cap * sizeof(g->socks[0]));

	if (g)
		g->cap = cap;
	return g;
}

static void group_free_rcu(struct rcu_head *head)
{
	struct socktab__reuseport *g = caa_container_of(head, struct socktab__reuseport, rcu);

	socktab__rcu_cb_enter(g);
	free(g);
}

/* Join @peer's group (or start one). Caller holds the net's reuseport lock. */
int socktab__reuseport_add_locked(struct socktab_net *net, struct socktab_sock *sk,
				  struct socktab_sock *peer)
{
	struct socktab__reuseport *g, *ng;
	uint32_t n;

	SOCKTAB__ASSERT_LOCKED(&net->reuseport_lock);
	if (!peer) {
		g = group_alloc(128);
		if (!g)
			return -ENOMEM;
		atomic_store_explicit(&g->socks[0], sk, memory_order_relaxed);
		atomic_store_explicit(&g->num, 1, memory_order_relaxed);
		atomic_store_explicit(&sk->cold->reuseport_cb, g, memory_order_release);
		return 0;
	}
	g = atomic_load_explicit(&peer->cold->reuseport_cb, memory_order_relaxed);
	n = atomic_load_explicit(&g->num, memory_order_relaxed);
	if (n == g->cap) {
		/* Full: publish a copy twice the size to every member (capacity fits in u16). */
		if (g->cap >= 32768)
			return -ENOMEM;
		ng = group_alloc(g->cap * 2);
		if (!ng)
			return -ENOMEM;
		for (uint32_t i = 0; i < n; i++) {
			struct socktab_sock *m =
				atomic_load_explicit(&g->socks[i], memory_order_relaxed);

			atomic_store_explicit(&ng->socks[i], m, memory_order_relaxed);
			atomic_store_explicit(&m->cold->reuseport_cb, ng, memory_order_release);
		}
		atomic_store_explicit(&ng->num, n, memory_order_relaxed);
		socktab__call_rcu(g, &g->rcu, group_free_rcu);
		g = ng;
	}
	atomic_store_explicit(&g->socks[n], sk, memory_order_relaxed);
	atomic_store_explicit(&g->num, n + 1, memory_order_release);
	atomic_store_explicit(&sk->cold->reuseport_cb, g, memory_order_release);
	(void)net;
	return 0;
}

/* Leave the group: the last member takes our place (R35). Caller holds the reuseport lock. */
void socktab__reuseport_detach_locked(struct socktab_sock *sk)
{
	struct socktab__reuseport *g = atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed);
	uint32_t n;

	SOCKTAB__ASSERT_LOCKED(&socktab__sk_net(sk)->reuseport_lock);
	if (!g)
		return;
	n = atomic_load_explicit(&g->num, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++) {
		if (atomic_load_explicit(&g->socks[i], memory_order_relaxed) != sk)
			continue;
		atomic_store_explicit(&g->socks[i],
				      atomic_load_explicit(&g->socks[n - 1], memory_order_relaxed),
				      memory_order_release);
		atomic_store_explicit(&g->num, n - 1, memory_order_release);
		break;
	}
	atomic_store_explicit(&sk->cold->reuseport_cb, NULL, memory_order_release);
	if (n == 1)
		socktab__call_rcu(g, &g->rcu, group_free_rcu);
}

/* R35: reuseport_select_sock_by_hash without SO_INCOMING_CPU. Caller is in an RCU section. */
struct socktab_sock *socktab__reuseport_select_rcu(struct socktab_sock *sk, uint32_t hash)
{
	struct socktab__reuseport *g = atomic_load_explicit(&sk->cold->reuseport_cb,
							    memory_order_acquire);
	uint32_t n, i0;

	SOCKTAB__ASSERT_RCU();
	if (!g)
		return NULL;
	n = atomic_load_explicit(&g->num, memory_order_acquire);
	if (!n)
		return NULL;
	i0 = (uint32_t)(((uint64_t)hash * n) >> 32);
	for (uint32_t k = 0; k < n; k++) {
		struct socktab_sock *m = atomic_load_explicit(&g->socks[(i0 + k) % n],
							      memory_order_acquire);

		/* Connected UDP members are skipped, and so is one whose connect() is rewriting its
		 * key: the mark first (acquire), so that a cleared mark shows the state it left. */
		if (m && !(atomic_load_explicit(&m->tw_flags, memory_order_acquire) &
			   SOCKTAB__UDPF_CONNECTING) &&
		    RD(m->state) != SOCKTAB_TCP_ESTABLISHED)
			return m;
	}
	return NULL;
}
