/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Burst lookup of TCP segments: the lookups of socktab_lookup_tcp4() for a batch of
 * IPv4 4-tuples, arranged so the batch's cache misses overlap instead of running one after the
 * other. Three passes over the batch: hash every key and prefetch its ehash slot; load each
 * slot's first entry and prefetch it; then walk each chain with the protocol of
 * socktab_lookup_established4() (R21, ehash.c): filter on the cached hash, compare the key,
 * take a reference with increment-if-not-zero, compare the key again, restart the walk when it
 * ends on another slot's nulls value. Keys not found in ehash fall back to the listener lookup
 * (socktab_lookup_listener4) unless SOCKTAB_LOOKUP_ESTABLISHED is given.
 * The kernel has no burst lookup (one skb at a time); DPDK's rte_hash_lookup_bulk is the model.
 * The result of each key is exactly what the single lookup would return at some instant during
 * the call.
 */
#include "ehash.h"
#include "listen.h"

/* ehash.c's match4(): the key of socktab_lookup_established4(), device rule included. */
static inline bool match4(const struct socktab_sock *sk, const struct socktab_net *net,
			  uint64_t acookie, uint32_t ports, const struct socktab_tuple4 *k)
{
	return RD(sk->portpair) == ports && RD(sk->addrpair) == acookie && RD(sk->v4key) &&
	       socktab__bound_dev_eq(k->sdif && RD(net->tcp_l3mdev_accept), RD(sk->bound_dev_if),
				     k->dif, k->sdif) &&
	       socktab__ehash_net_match(sk, net);
}

/* The R21 walk of one chain, from a first entry already loaded. Inside RCU read side. */
static struct socktab_sock *walk4(struct socktab_net *net, uint32_t hash, uint32_t slot,
				  uintptr_t first, uint64_t acookie, uint32_t ports,
				  const struct socktab_tuple4 *k, bool ref)
{
	struct socktab_sock *sk;
	uintptr_t p = first;

	for (;;) {
		for (; !socktab__is_nulls(p);
		     p = atomic_load_explicit(&socktab__node_sk(p)->node.next, memory_order_acquire)) {
			sk = socktab__node_sk(p);
			if (RD(sk->hash) != hash || !match4(sk, net, acookie, ports, k))
				continue;
			if (ref && !socktab__sock_hold_not_zero(sk))
				return NULL; /* dying: "not found", as the single lookup */
			return sk;
		}
		if (socktab__is_nulls(p) && socktab__nulls_value(p) == slot)
			return NULL;
		/* Ended on another slot's chain, or restarting after a reuse. */
		p = atomic_load_explicit(&net->ehash[slot].first, memory_order_acquire);
	}
}

#define BURST_CHUNK 32

int socktab_lookup_tcp_burst(struct socktab_net *net, const struct socktab_tuple4 *keys,
			     unsigned int n, struct socktab_sock **out, unsigned int flags)
{
	uint32_t hash[BURST_CHUNK], slot[BURST_CHUNK];
	uintptr_t first[BURST_CHUNK];
	int found = 0;

	bool ref = !(flags & SOCKTAB_LOOKUP_NOREF);

	if (!net || (n && (!keys || !out)) ||
	    (flags & ~(SOCKTAB_LOOKUP_ESTABLISHED | SOCKTAB_LOOKUP_NOREF)))
		return -EINVAL;

	for (unsigned int base = 0; base < n; base += BURST_CHUNK) {
		unsigned int m = n - base < BURST_CHUNK ? n - base : BURST_CHUNK;
		const struct socktab_tuple4 *k = keys + base;

		for (unsigned int i = 0; i < m; i++) {
			hash[i] = socktab__ehashfn4(net, k[i].daddr, ntohs(k[i].dport), k[i].saddr,
						    k[i].sport);
			slot[i] = hash[i] & net->ehash_mask;
			__builtin_prefetch(&net->ehash[slot[i]]);
		}
		socktab__rcu_read_lock();
		for (unsigned int i = 0; i < m; i++) {
			first[i] = atomic_load_explicit(&net->ehash[slot[i]].first,
							memory_order_acquire);
			if (socktab__is_nulls(first[i]))
				continue;
			__builtin_prefetch(socktab__node_sk(first[i]));
			if (net->has_priv) /* the caller reads it next (ehash.c) */
				__builtin_prefetch((const char *)first[i] + sizeof(struct socktab_sock));
		}
		for (unsigned int i = 0; i < m; i++) {
			uint32_t ports = (uint32_t)k[i].sport | ((uint32_t)ntohs(k[i].dport) << 16);
			uint64_t acookie = (uint64_t)k[i].saddr | ((uint64_t)k[i].daddr << 32);

			out[base + i] = walk4(net, hash[i], slot[i], first[i], acookie, ports, &k[i],
					      ref);
		}
		socktab__rcu_read_unlock();
		for (unsigned int i = 0; i < m; i++) {
			if (!out[base + i] && !(flags & SOCKTAB_LOOKUP_ESTABLISHED))
				out[base + i] = socktab__lookup_listener4(net, k[i].saddr, k[i].sport,
									  k[i].daddr, k[i].dport,
									  k[i].dif, k[i].sdif, ref);
			found += out[base + i] != NULL;
		}
	}
	return found;
}
