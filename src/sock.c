/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The socket object: its lock stripe, its fresh fields, and its references. The socket calls
 * that use it are in socket.c.
 *
 * Reference counting: socktab_socket() returns a socket holding the caller's reference; lookups
 * add one each (increment-if-not-zero) and socktab_sock_put() drops it. socktab_close() unhashes
 * the socket, then drops the caller's reference; the object returns to the pool when the count
 * reaches zero. A TIME_WAIT entry holds one reference for the net's list.
 */
#include "net.h"
#include "reqsk.h"

bool socktab__sock_hold_not_zero(struct socktab_sock *sk)
{
	uint32_t c = atomic_load_explicit(&sk->refcnt, memory_order_relaxed);

	do {
		if (c == 0)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&sk->refcnt, &c, c + 1,
							memory_order_acq_rel, memory_order_relaxed));
	return true;
}

/* A socket's own lock; for an entry, a multiplicative hash of its address picks a stripe. The
 * kind never changes while the memory belongs to the pool, so neither does the lock. */
pthread_mutex_t *socktab__sk_lock(const struct socktab_sock *sk)
{
	uint64_t h = ((uintptr_t)sk >> 6) * 0x9e3779b97f4a7c15ull;

	if (socktab__sk_kind(sk) < SOCKTAB__K_TW4)
		return &sk->cold->lock;
	return socktab__stripe(&socktab__sk_net(sk)->sk_locks, (uint32_t)(h >> 56));
}

void socktab__sock_init_fields(struct socktab_sock *sk)
{
	static const struct in6_addr any = IN6ADDR_ANY_INIT;
	struct socktab__sk_cold *c = sk->cold;

	atomic_store_explicit(&sk->node.pprev, NULL, memory_order_relaxed);
	WR(sk->hash, 0);
	WR(sk->addrpair, 0);
	WR(sk->portpair, 0);
	WR(sk->v4key, sk->family == AF_INET);
	WR(sk->bound_dev_if, 0);
	WR(sk->reuse, 0);
	WR(sk->reuseport, 0);
	WR(sk->v6only, 0);
	WR(sk->tw_flags, 0);
	sk->uid = 0;
	sk->sport = 0;
	sk->userlocks = 0;
	socktab__sk_set_v6_daddr(sk, &any);
	socktab__sk_set_v6_saddr(sk, &any);
	atomic_store_explicit(&c->reuseport_cb, NULL, memory_order_relaxed);
	c->local_port_range = 0;
	c->linger_secs = 0;
	c->rss_queue = 0;
	atomic_store_explicit(&c->flags, 0, memory_order_relaxed);
	WR(c->incoming_cpu, -1); /* sock_init_data(): no CPU; tw_flags above cleared its flag */
	if (atomic_load_explicit(&c->lq, memory_order_relaxed))
		atomic_load_explicit(&c->lq, memory_order_relaxed)->rp_id = -1;
}

bool socktab__sock_unref(struct socktab_sock *sk)
{
	uint32_t old;

	/* acq_rel: the last holder sees every access the others made before they let go. */
	old = atomic_fetch_sub_explicit(&sk->refcnt, 1, memory_order_acq_rel);
	if (old == 1) {
		WR(sk->state, SOCKTAB__FREE);
		return true;
	}
	if (old == 0) {
		/* The count just wrapped: left alone, socktab_sock_hold() would revive a socket
		 * already on its way back to the pool. A void call cannot report it: stop. */
		socktab__misuse("socktab_sock_put on a freed socket");
	}
	return false;
}

void socktab_sock_put(struct socktab_sock *sk)
{
	/* Every socket is SOCK_RCU_FREE (R23, which the kernel applies to listeners and UDP): an
	 * RCU-scoped lookup may hold it without a reference until its section ends. */
	if (sk && socktab__sock_unref(sk))
		socktab__pool_free_rcu(sk);
}
