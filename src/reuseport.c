/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SO_REUSEPORT groups (the kernel's sock_reuseport.c), shared by TCP listeners (listen.c) and
 * UDP sockets (udp.c): same groups, same selection (R34, R35).
 * A group is an array of members replaced (not resized) when full and freed after a grace
 * period; a leaving member is replaced by the last one. Writers hold the net's reuseport lock, a
 * leaf; readers select under RCU. Which sockets may share a group is the caller's rule (R34):
 * listen.c and udp.c each find the peer a socket joins.
 * SO_INCOMING_CPU (R35, the kernel's reuseport_update_incoming_cpu): a group counts its members
 * whose value is >= 0, changed when one joins, leaves or sets the option (a socket sets it under
 * the reuseport lock, so a join or leave never counts a stale value). While the count is 0
 * selection is the hash alone and reads neither a member's value nor the CPU.
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
		WR(g->incoming_cpu, socktab__sk_incoming_cpu(sk) >= 0);
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
		WR(ng->incoming_cpu, RD(g->incoming_cpu));
		socktab__call_rcu(g, &g->rcu, group_free_rcu);
		g = ng;
	}
	atomic_store_explicit(&g->socks[n], sk, memory_order_relaxed);
	atomic_store_explicit(&g->num, n + 1, memory_order_release);
	if (socktab__sk_incoming_cpu(sk) >= 0)
		WR(g->incoming_cpu, RD(g->incoming_cpu) + 1);
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
		if (socktab__sk_incoming_cpu(sk) >= 0)
			WR(g->incoming_cpu, RD(g->incoming_cpu) - 1);
		break;
	}
	atomic_store_explicit(&sk->cold->reuseport_cb, NULL, memory_order_release);
	if (n == 1)
		socktab__call_rcu(g, &g->rcu, group_free_rcu);
}

void socktab__reuseport_set_incoming_cpu(struct socktab_sock *sk, int val)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct socktab__reuseport *g;
	int old;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	/* Always under the lock, also outside a group: a UDP bind by another socket may start a
	 * group for this one (udp.c rp_join_locked) without its socket lock, and counts the value
	 * it reads then. The group is read under the lock too: a join may have replaced it. */
	socktab__lock(&net->reuseport_lock);
	old = socktab__sk_incoming_cpu(sk);
	socktab__sk_set_incoming_cpu(sk, val);
	g = atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed);
	if (g && old < 0 && val >= 0)
		WR(g->incoming_cpu, RD(g->incoming_cpu) + 1);
	else if (g && old >= 0 && val < 0)
		WR(g->incoming_cpu, RD(g->incoming_cpu) - 1);
	socktab__unlock(&net->reuseport_lock);
}

/*
 * R35: reuseport_select_sock_by_hash. From the hash's index round the array, passing over
 * connected (TCP_ESTABLISHED) UDP members; without SO_INCOMING_CPU users the first member left
 * is the pick, with them the first one bound to the lookup's CPU, else the first one left.
 * Caller is in an RCU section.
 */
struct socktab_sock *socktab__reuseport_select_rcu(struct socktab_sock *sk, uint32_t hash,
						   int *cpu)
{
	struct socktab__reuseport *g = atomic_load_explicit(&sk->cold->reuseport_cb,
							    memory_order_acquire);
	struct socktab_sock *first = NULL;
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
		uint8_t f;

		if (!m)
			continue;
		/* Connected UDP members are skipped, and so is one whose connect() is rewriting its
		 * key: the mark first (acquire), so that a cleared mark shows the state it left. */
		f = atomic_load_explicit(&m->tw_flags, memory_order_acquire);
		if ((f & SOCKTAB__UDPF_CONNECTING) || RD(m->state) == SOCKTAB_TCP_ESTABLISHED)
			continue;
		if (!RD(g->incoming_cpu) || socktab__incpu_match(socktab__sk_incpu_hint(m, f), cpu))
			return m;
		if (!first)
			first = m;
	}
	return first;
}
