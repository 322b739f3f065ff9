/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * connect(): local address and port choice for TCP (spec R51-R60, R64, R66).
 *
 * The port walk is the kernel's __inet_hash_connect(), RFC 6056 algorithm 4 ("double hash"):
 * a SipHash of (saddr, daddr, dport, 10-s time slot) under the net's key picks a slot of the
 * perturbation table; start = (table[slot] + hash >> 32) mod range, even offset first (same parity
 * as the range's low end) with step 2, then the other parity; step 1 and one pass when the socket
 * has IP_LOCAL_PORT_RANGE. Per candidate: skip reserved ports; a port whose bind bucket was made
 * by bind() is skipped; otherwise the 4-tuple must be unique in ehash — checked first without
 * locks under RCU (seed 000, unless the variant turns it off), then under the bhash and ehash
 * locks, where a TIME_WAIT entry may be taken over (R61). On success the table slot advances by
 * max(i, random 0..7 * step) + step so the next connect to the same destination starts just after.
 * The variant LINUX_6_1 hashes the local port inside the ehash hash (one full hash per candidate)
 * and has no RCU pre-check; LINUX and SOCKTAB compute the hash once and add the port (seed 002).
 * RFC 6056 departure shared with Linux: the time slot re-keys the offset every 10 s.
 */
#include <stdlib.h>
#include <sys/random.h>

#include "hash.h"
#include "internal.h"

static _Thread_local uint64_t rng_state;

/* Per-thread xorshift for the "random_below(8)" of R57; not a secret. */
static uint32_t random_below(uint32_t n)
{
	uint64_t x = rng_state;

	if (!x) {
		if (getrandom(&x, sizeof(x), 0) != sizeof(x) || !x)
			x = 0x9e3779b97f4a7c15ull ^ (uintptr_t)&rng_state;
	}
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return (uint32_t)(((x >> 32) * (uint64_t)n) >> 32);
}

/* R10: secure_ipv4_port_ephemeral / secure_ipv6_port_ephemeral. */
static uint64_t port_offset(struct socktab_net *net, const struct socktab_sock *sk)
{
	uint32_t slot = (uint32_t)(socktab__now(net) / 10000000000ull);

	if (RD(sk->v4key)) {
		uint32_t w[4] = { socktab__sk_rcv_saddr(sk), socktab__sk_daddr(sk),
				  socktab__sk_dport(sk), slot };

		return socktab__siphash(w, sizeof(w), net->port_key);
	}
	unsigned char rec[38];
	struct in6_addr l = socktab__v6_load(sk->v6_saddr), r = socktab__v6_load(sk->v6_daddr);
	uint16_t dport = socktab__sk_dport(sk);

	memcpy(rec, &l, 16);
	memcpy(rec + 16, &r, 16);
	memcpy(rec + 32, &slot, 4);
	memcpy(rec + 36, &dport, 2);
	return socktab__siphash(rec, sizeof(rec), net->port_key);
}

static inline uint32_t cand_hash(struct socktab_net *net, const struct socktab_sock *sk,
				 uint32_t hash_port0, uint16_t port)
{
	return net->lport_inside ? socktab__sk_ehashfn(net, sk, port) : hash_port0 + port;
}

/* Finish taking over a TIME_WAIT entry: it leaves its bind bucket. Caller holds the bhash lock. */
static void tw_takeover_locked(struct socktab_net *net, struct socktab_sock *tw)
{
	socktab__bind_unhash_locked(net, tw);
	atomic_fetch_sub_explicit(&net->n_time_wait, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&net->n_tw_recycled, 1, memory_order_relaxed);
}

/* R53: the socket already owns a port; one locked uniqueness check. */
static int connect_bound_port(struct socktab_net *net, struct socktab_sock *sk, uint32_t hash0)
{
	uint16_t port = socktab__sk_num(sk);
	struct socktab__bhead *head =
		&net->tab->bhash[socktab__bhashfn(net, port) & net->tab->bhash_mask];
	struct socktab_sock *tw;
	int r;

	socktab__lock(&head->lock);
	r = socktab__check_established_locked(net, sk, port, cand_hash(net, sk, hash0, port), true,
					      &tw);
	if (tw)
		tw_takeover_locked(net, tw);
	socktab__unlock(&head->lock);
	if (tw)
		socktab__tw_deschedule_put(net, tw);
	return r == SOCKTAB__UNIQUE ? 0 : -EADDRNOTAVAIL;
}

int socktab__hash_connect(struct socktab_net *net, struct socktab_sock *sk)
{
	struct socktab__tables *t = net->tab;
	uint32_t hash0 = net->lport_inside ? 0 : socktab__sk_ehashfn(net, sk, 0);
	struct socktab__tb2 *tb2;
	struct socktab__tb *tb;
	struct socktab__bhead *head;
	struct socktab_sock *tw = NULL;
	uint64_t tried = 0, off64;
	uint32_t remaining, offset, index, i, step;
	int low, high, port;
	bool local_ports, inserted, created;

	if (socktab__sk_num(sk))
		return connect_bound_port(net, sk, hash0);

	off64 = port_offset(net, sk);
	socktab__port_range(net, sk, &low, &high, &local_ports);
	step = local_ports ? 1 : 2;
	high++;
	remaining = (uint32_t)(high - low);
	if (step == 2 && remaining > 1)
		remaining &= ~1u;
	index = (uint32_t)off64 & (SOCKTAB__PERTURB_SIZE - 1);
	offset = (RD(net->perturb[index]) + (uint32_t)(off64 >> 32)) % remaining;
	if (!local_ports)
		offset &= ~1u;
other_parity_scan:
	port = low + (int)offset;
	for (i = 0; i < remaining; i += step, port += (int)step) {
		uint32_t h;

		if (port >= high)
			port -= (int)remaining;
		if (socktab__port_reserved(net, (uint16_t)port))
			continue;
		tried++;
		h = cand_hash(net, sk, hash0, (uint16_t)port);
		head = &t->bhash[socktab__bhashfn(net, (uint16_t)port) & t->bhash_mask];

		/* Lockless phase (R55 step 2). */
		socktab__rcu_read_lock();
		tb = socktab__tb_find_rcu(head, net, (uint16_t)port);
		if (tb && (RD(tb->fastreuse) >= 0 || RD(tb->fastreuseport) >= 0)) {
			socktab__rcu_read_unlock();
			continue;
		}
		if (tb && net->rcu_precheck &&
		    socktab__check_established_rcu(net, sk, (uint16_t)port, h) ==
			    SOCKTAB__NOT_UNIQUE) {
			socktab__rcu_read_unlock();
			continue;
		}
		socktab__rcu_read_unlock();

		/* Locked phase (R55 step 3). */
		socktab__lock(&head->lock);
		tb = socktab__tb_find(head, net, (uint16_t)port);
		if (tb) {
			if (RD(tb->fastreuse) >= 0 || RD(tb->fastreuseport) >= 0 ||
			    socktab__check_established_locked(net, sk, (uint16_t)port, h, false,
							      &tw) != SOCKTAB__UNIQUE) {
				socktab__unlock(&head->lock);
				continue;
			}
			inserted = true;
			goto ok;
		}
		/* No bucket: nobody in this net holds the port, no ehash check needed. */
		tb = socktab__tb_create(head, net, (uint16_t)port);
		if (!tb) {
			socktab__unlock(&head->lock);
			atomic_fetch_add_explicit(&net->n_ports_tried, tried, memory_order_relaxed);
			return -ENOMEM;
		}
		inserted = false;
		goto ok;
	}
	if (!local_ports) {
		offset++;
		if ((offset & 1) && remaining > 1)
			goto other_parity_scan;
	}
	atomic_fetch_add_explicit(&net->n_ports_tried, tried, memory_order_relaxed);
	return -EADDRNOTAVAIL;

ok:
	atomic_fetch_add_explicit(&net->n_ports_tried, tried, memory_order_relaxed);
	tb2 = socktab__tb2_find_or_create(net, tb, sk, &created);
	if (!tb2) {
		/* Undo: nothing may remain of a failed connect(). */
		if (inserted) {
			pthread_mutex_t *l = socktab__ehash_lock(t, RD(sk->hash));

			socktab__lock(l);
			socktab__hnode_del_rcu(&sk->node);
			if (tw) /* the TIME_WAIT entry goes back; it never left its bind bucket */
				socktab__ehash_insert_locked(t, tw);
			socktab__unlock(l);
			if (tw)
				socktab_sock_put(tw);
			WR(sk->portpair, RD(sk->portpair) & 0xffff);
		}
		socktab__tb_maybe_destroy(head, tb);
		socktab__unlock(&head->lock);
		return -ENOMEM;
	}
	{
		uint32_t r8 = random_below(8) * step;
		uint32_t adv = (i > r8 ? i : r8) + step;

		atomic_fetch_add_explicit(&net->perturb[index], adv, memory_order_relaxed);
	}
	socktab__bind_hash(sk, tb2, (uint16_t)port);
	sk->userlocks |= SOCKTAB__CONNECT_BIND;
	if (!inserted) {
		uint32_t h = cand_hash(net, sk, hash0, (uint16_t)port);
		pthread_mutex_t *l = socktab__ehash_lock(t, h);

		WR(sk->hash, h);
		socktab__lock(l);
		socktab__ehash_insert_locked(t, sk);
		socktab__unlock(l);
	}
	if (tw)
		tw_takeover_locked(net, tw);
	socktab__unlock(&head->lock);
	if (tw)
		socktab__tw_deschedule_put(net, tw);
	return 0;
}
