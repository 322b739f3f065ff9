/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Burst lookup of TCP segments: the lookups of socktab_lookup_tcp4() for a batch of
 * IPv4 4-tuples, arranged so the batch's cache misses overlap instead of running one after the
 * other. Three stages, pipelined over the keys (below): hash a key and prefetch its ehash slot;
 * load a slot's first entry and prefetch it; walk a chain with the protocol of
 * socktab_lookup_established4() (R21, ehash.c): filter on the cached hash, compare the key,
 * take a reference with increment-if-not-zero, restart the walk when it ends on another slot's
 * nulls value. Keys not found in ehash fall back to the listener lookup
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
			if (RD(sk->hash) != hash)
				continue;
			if (!match4(sk, net, acookie, ports, k)) {
				/* As in the single walk (ehash.h): a replaced entry's next link
				 * leads to its replacement. */
				(void)atomic_load_explicit(&sk->portpair, memory_order_acquire);
				continue;
			}
			if (!ref || socktab__sock_hold_not_zero(sk))
				return sk;
#ifdef SOCKTAB_NAIVE_ORDER
			return NULL;
#else
			break; /* dying: walk again, as the single lookup */
#endif
		}
		if (socktab__is_nulls(p) && socktab__nulls_value(p) == slot)
			return NULL;
		/* Ended on another slot's chain (a socket moved while we walked), or met a dying
		 * entry: walk again from the head. */
		p = atomic_load_explicit(&net->ehash[slot].first, memory_order_acquire);
	}
}

/*
 * A software pipeline over the keys: key i is hashed and its slot prefetched, key i - D1's slot
 * is read and its first entry (and the caller's area after it) prefetched, key i - D1 - D2 is
 * walked. The distances give each miss a few keys' worth of work to hide behind, and bound the
 * lines in flight (two stages of D lines, plus the areas) to what a core can track.
 */
#define D1 16
#define D2 16
#define RING 64 /* > D1 + D2, a power of two */

int socktab_lookup_tcp_burst(struct socktab_net *net, const struct socktab_tuple4 *keys,
			     unsigned int n, struct socktab_sock **out, unsigned int flags)
{
	uint32_t hash[RING];
	uintptr_t first[RING];
	bool ref = !(flags & SOCKTAB_LOOKUP_NOREF);
	int found = 0;

	if (!net || (n && (!keys || !out)) ||
	    (flags & ~(SOCKTAB_LOOKUP_ESTABLISHED | SOCKTAB_LOOKUP_NOREF)))
		return -EINVAL;
	if (!n)
		return 0;
	socktab__rcu_read_lock(); /* nested in the caller's with NOREF: cheap */
	for (unsigned int i = 0; i < n + D1 + D2; i++) {
		if (i < n) {
			const struct socktab_tuple4 *k = &keys[i];

			hash[i % RING] = socktab__ehashfn4(net, k->daddr, ntohs(k->dport), k->saddr,
							   k->sport);
			__builtin_prefetch(&net->ehash[hash[i % RING] & net->ehash_mask]);
		}
		if (i >= D1 && i - D1 < n) {
			unsigned int j = i - D1;
			uintptr_t f = atomic_load_explicit(
				&net->ehash[hash[j % RING] & net->ehash_mask].first,
				memory_order_acquire);

			first[j % RING] = f;
			if (!socktab__is_nulls(f)) {
				__builtin_prefetch(socktab__node_sk(f));
				if (net->has_priv) /* the caller reads it next (ehash.c) */
					__builtin_prefetch((const char *)f +
							   sizeof(struct socktab_sock));
			}
		}
		if (i >= D1 + D2) {
			unsigned int j = i - D1 - D2;
			const struct socktab_tuple4 *k = &keys[j];
			uint32_t ports = (uint32_t)k->sport | ((uint32_t)ntohs(k->dport) << 16);
			uint64_t acookie = (uint64_t)k->saddr | ((uint64_t)k->daddr << 32);
			uint32_t h = hash[j % RING];

			out[j] = walk4(net, h, h & net->ehash_mask, first[j % RING], acookie, ports, k,
				       ref);
		}
	}
	socktab__rcu_read_unlock();
	for (unsigned int i = 0; i < n; i++) {
		if (!out[i] && !(flags & SOCKTAB_LOOKUP_ESTABLISHED))
			out[i] = socktab__lookup_listener4(net, keys[i].saddr, keys[i].sport,
							   keys[i].daddr, keys[i].dport, keys[i].dif,
							   keys[i].sdif, ref);
		found += out[i] != NULL;
	}
	return found;
}
