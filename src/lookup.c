/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The packet path's entry points: every public lookup in its two forms, and the burst lookup.
 * This file is the one place that composes a read-side section, a table's walk and a pin:
 *   - the RCU-scoped form (socktab_lookup_*_rcu) runs inside the caller's section, calls the
 *     tables' `_rcu` walks and takes no reference: its result is valid until the section ends,
 *     because every socket and TIME_WAIT entry goes back to its pool only after a grace period
 *     (R23 extended to all sockets). It writes nothing but a changed SO_INCOMING_CPU (below),
 *     so readers on many cores share the socket's line instead of bouncing it;
 *   - the referenced form (socktab_lookup_*) enters a section of its own, walks, and pins the
 *     result with increment-if-not-zero (released with socktab_sock_put()). A match that cannot
 *     be pinned is dying; each table's rule for it is below (established: walk again, since the
 *     4-tuple has moved to the entry that replaced it; listener: walk again unless it still
 *     listens on the port; UDP: walk again).
 * The walks: ehash.h (established), listen.c (lhash2), udp.c; the RCU-scoped listener and UDP
 * lookups are those tables' walks themselves. The tables never enter a section, pin or call
 * back up here.
 *
 * A lookup is a receipt (R107): the connection an established lookup finds (a socket, not a
 * request or TIME_WAIT entry) takes the thread's receiving CPU as its SO_INCOMING_CPU, as the
 * kernel's sk_incoming_cpu_update() does for every segment (established_rx below; connected UDP
 * sockets: udp.c). Every form does it, single and burst or batch, referenced or RCU-scoped: the
 * form says how long the caller keeps the result, not whether a packet arrived, so the value
 * does not depend on which one a stack calls. It costs the thread's CPU (thread-local loads), a
 * load from the socket's line the match read and a compare (for a CPU above
 * SOCKTAB__SOCKF_CPU_MAX, a load from the cold part too); the write, only when the value
 * changes, is the one write of the RCU-scoped forms, and with a flow's packets on one CPU it
 * comes once per flow.
 */
#include "ehash.h"
#include "listen.h"
#include "udp.h"

void socktab_rcu_read_lock(void)
{
	socktab__rcu_read_lock();
}

void socktab_rcu_read_unlock(void)
{
	socktab__rcu_read_unlock();
}

int socktab_sock_hold(struct socktab_sock *sk)
{
	SOCKTAB__ASSERT_RCU();
	if (!sk)
		return -EINVAL;
	return socktab__sock_hold_not_zero(sk) ? 0 : -ENOENT;
}

/* R107: @sk, an established lookup's result (or NULL), receives on this thread's CPU. Request
 * and TIME_WAIT entries keep what they have (socktab__sk_incoming_cpu_update), and listeners are
 * never found in ehash. */
static inline __attribute__((always_inline)) struct socktab_sock *
established_rx(struct socktab_sock *sk)
{
	if (sk)
		socktab__sk_incoming_cpu_update(sk);
	return sk;
}

/* ---- pins: inside the section the walk ran in ---- */

#ifndef SOCKTAB_NAIVE_ORDER
/* A dying match was met (below): walk again from the head and pin, until a match is pinned or
 * none is left. Cold: the hot paths keep one copy of the walk inline. */
static __attribute__((noinline, cold)) struct socktab_sock *
established_rewalk(struct socktab_net *net, uint32_t hash, const struct socktab__lookup_key *k)
{
	struct socktab_sock *sk;

	do
		sk = socktab__ehash_lookup_rcu(net, hash, k);
	while (sk && !socktab__sock_hold_not_zero(sk));
	return sk;
}
#endif

/*
 * Pin @sk, the established match of @k (or NULL). A match whose count already reached zero is
 * dying: its 4-tuple has gone or moved to the entry that replaced it in place (ehash.h), so walk
 * again from the head.
 */
static inline __attribute__((always_inline)) struct socktab_sock *
established_pin(struct socktab_net *net, uint32_t hash, const struct socktab__lookup_key *k,
		struct socktab_sock *sk)
{
	if (!sk || socktab__sock_hold_not_zero(sk))
		return sk;
#ifdef SOCKTAB_NAIVE_ORDER
	(void)net;
	(void)hash;
	(void)k;
	return NULL; /* the negative control: "not found", as the kernel's established lookup */
#else
	return established_rewalk(net, hash, k);
#endif
}

/* A referenced established lookup: its own section (nested in the caller's, if any), the walk
 * and the pin. */
static inline __attribute__((always_inline)) struct socktab_sock *
established_pinned(struct socktab_net *net, uint32_t hash, const struct socktab__lookup_key *k)
{
	struct socktab_sock *sk;

	socktab__rcu_read_lock();
	sk = established_rx(established_pin(net, hash, k, socktab__ehash_lookup_rcu(net, hash, k)));
	socktab__rcu_read_unlock();
	return sk;
}

/*
 * Pin listener @sk, then make sure it still listens on @hnum: a close, or a disconnect, bind and
 * listen, may have come between the walk and the pin (its net cannot change: it goes back to its
 * pool only after this section). A dispatch hook's selection (@hooked, R125) may listen on any
 * port: it must still listen. False: walk again (a closed selection is refused by the hook's
 * assign when it runs again, R126).
 */
static bool listener_pin(struct socktab_sock *sk, uint16_t hnum, bool hooked)
{
	if (!socktab__sock_hold_not_zero(sk))
		return false;
	if (RD(sk->state) != SOCKTAB_TCP_LISTEN || (socktab__sk_num(sk) != hnum && !hooked)) {
		socktab_sock_put(sk);
		return false;
	}
	return true;
}

static struct socktab_sock *listener4_pinned(struct socktab_net *net, uint32_t saddr,
					     uint16_t sport, uint32_t daddr, uint16_t dport,
					     int dif, int sdif)
{
	struct socktab_sock *sk;
	bool hooked;

	socktab__rcu_read_lock(); /* nested in the burst lookup's */
	do
		sk = socktab__listener4_rcu(net, saddr, sport, daddr, dport, dif, sdif, &hooked);
	while (sk && !listener_pin(sk, ntohs(dport), hooked));
	socktab__rcu_read_unlock();
	return sk;
}

static struct socktab_sock *listener6_pinned(struct socktab_net *net,
					     const struct in6_addr *saddr, uint16_t sport,
					     const struct in6_addr *daddr, uint16_t dport, int dif,
					     int sdif)
{
	struct socktab_sock *sk;
	bool hooked;

	socktab__rcu_read_lock();
	do
		sk = socktab__listener6_rcu(net, saddr, sport, daddr, dport, dif, sdif, &hooked);
	while (sk && !listener_pin(sk, ntohs(dport), hooked));
	socktab__rcu_read_unlock();
	return sk;
}

/* ---- TCP ---- */

static inline __attribute__((always_inline)) struct socktab_sock *
tcp4_rcu(struct socktab_net *net, uint32_t saddr, uint16_t sport, uint32_t daddr, uint16_t dport,
	 int dif, int sdif)
{
	struct socktab__lookup_key k;
	uint32_t hash = socktab__ehash_key4(net, saddr, sport, daddr, dport, dif, sdif, &k);
	struct socktab_sock *sk = established_rx(socktab__ehash_lookup_rcu(net, hash, &k));

	return sk ? sk : socktab_lookup_listener4_rcu(net, saddr, sport, daddr, dport, dif, sdif);
}

static inline __attribute__((always_inline)) struct socktab_sock *
tcp4_pinned(struct socktab_net *net, uint32_t saddr, uint16_t sport, uint32_t daddr,
	    uint16_t dport, int dif, int sdif)
{
	struct socktab__lookup_key k;
	uint32_t hash = socktab__ehash_key4(net, saddr, sport, daddr, dport, dif, sdif, &k);
	struct socktab_sock *sk = established_pinned(net, hash, &k);

	return sk ? sk : listener4_pinned(net, saddr, sport, daddr, dport, dif, sdif);
}

static struct socktab_sock *tcp6_rcu(struct socktab_net *net, const struct in6_addr *saddr,
				     uint16_t sport, const struct in6_addr *daddr, uint16_t dport,
				     int dif, int sdif)
{
	struct socktab__lookup_key k;
	uint32_t hash = socktab__ehash_key6(net, saddr, sport, daddr, dport, dif, sdif, &k);
	struct socktab_sock *sk = established_rx(socktab__ehash_lookup_rcu(net, hash, &k));

	return sk ? sk : socktab_lookup_listener6_rcu(net, saddr, sport, daddr, dport, dif, sdif);
}

static struct socktab_sock *tcp6_pinned(struct socktab_net *net, const struct in6_addr *saddr,
					uint16_t sport, const struct in6_addr *daddr,
					uint16_t dport, int dif, int sdif)
{
	struct socktab__lookup_key k;
	uint32_t hash = socktab__ehash_key6(net, saddr, sport, daddr, dport, dif, sdif, &k);
	struct socktab_sock *sk = established_pinned(net, hash, &k);

	return sk ? sk : listener6_pinned(net, saddr, sport, daddr, dport, dif, sdif);
}

struct socktab_sock *socktab_lookup_tcp4(struct socktab_net *net, uint32_t saddr, uint16_t sport,
					 uint32_t daddr, uint16_t dport, int dif, int sdif)
{
	if (!net)
		return NULL;
	return tcp4_pinned(net, saddr, sport, daddr, dport, dif, sdif);
}

struct socktab_sock *socktab_lookup_tcp4_rcu(struct socktab_net *net, uint32_t saddr,
					     uint16_t sport, uint32_t daddr, uint16_t dport,
					     int dif, int sdif)
{
	SOCKTAB__ASSERT_RCU();
	if (!net)
		return NULL;
	return tcp4_rcu(net, saddr, sport, daddr, dport, dif, sdif);
}

struct socktab_sock *socktab_lookup_tcp6(struct socktab_net *net, const struct in6_addr *saddr,
					 uint16_t sport, const struct in6_addr *daddr,
					 uint16_t dport, int dif, int sdif)
{
	if (!net || !saddr || !daddr)
		return NULL;
	return tcp6_pinned(net, saddr, sport, daddr, dport, dif, sdif);
}

struct socktab_sock *socktab_lookup_tcp6_rcu(struct socktab_net *net,
					     const struct in6_addr *saddr, uint16_t sport,
					     const struct in6_addr *daddr, uint16_t dport, int dif,
					     int sdif)
{
	SOCKTAB__ASSERT_RCU();
	if (!net || !saddr || !daddr)
		return NULL;
	return tcp6_rcu(net, saddr, sport, daddr, dport, dif, sdif);
}

struct socktab_sock *socktab_lookup_tcp(struct socktab_net *net, int family, const void *saddr,
					uint16_t sport, const void *daddr, uint16_t dport, int dif,
					int sdif)
{
	uint32_t s4, d4;

	if (!net || !saddr || !daddr)
		return NULL;
	if (family == AF_INET) {
		memcpy(&s4, saddr, 4);
		memcpy(&d4, daddr, 4);
		return tcp4_pinned(net, s4, sport, d4, dport, dif, sdif);
	}
	if (family == AF_INET6)
		return tcp6_pinned(net, saddr, sport, daddr, dport, dif, sdif);
	return NULL;
}

struct socktab_sock *socktab_lookup_established4(struct socktab_net *net, uint32_t saddr,
						 uint16_t sport, uint32_t daddr, uint16_t dport,
						 int dif, int sdif)
{
	struct socktab__lookup_key k;

	if (!net)
		return NULL;
	return established_pinned(
		net, socktab__ehash_key4(net, saddr, sport, daddr, dport, dif, sdif, &k), &k);
}

struct socktab_sock *socktab_lookup_established4_rcu(struct socktab_net *net, uint32_t saddr,
						     uint16_t sport, uint32_t daddr,
						     uint16_t dport, int dif, int sdif)
{
	struct socktab__lookup_key k;

	SOCKTAB__ASSERT_RCU();
	if (!net)
		return NULL;
	return established_rx(socktab__ehash_lookup_rcu(
		net, socktab__ehash_key4(net, saddr, sport, daddr, dport, dif, sdif, &k), &k));
}

struct socktab_sock *socktab_lookup_established6(struct socktab_net *net,
						 const struct in6_addr *saddr, uint16_t sport,
						 const struct in6_addr *daddr, uint16_t dport,
						 int dif, int sdif)
{
	struct socktab__lookup_key k;

	if (!net || !saddr || !daddr)
		return NULL;
	return established_pinned(
		net, socktab__ehash_key6(net, saddr, sport, daddr, dport, dif, sdif, &k), &k);
}

struct socktab_sock *socktab_lookup_established6_rcu(struct socktab_net *net,
						     const struct in6_addr *saddr, uint16_t sport,
						     const struct in6_addr *daddr, uint16_t dport,
						     int dif, int sdif)
{
	struct socktab__lookup_key k;

	SOCKTAB__ASSERT_RCU();
	if (!net || !saddr || !daddr)
		return NULL;
	return established_rx(socktab__ehash_lookup_rcu(
		net, socktab__ehash_key6(net, saddr, sport, daddr, dport, dif, sdif, &k), &k));
}

struct socktab_sock *socktab_lookup_listener4(struct socktab_net *net, uint32_t saddr,
					      uint16_t sport, uint32_t daddr, uint16_t dport,
					      int dif, int sdif)
{
	if (!net)
		return NULL;
	return listener4_pinned(net, saddr, sport, daddr, dport, dif, sdif);
}

struct socktab_sock *socktab_lookup_listener6(struct socktab_net *net,
					      const struct in6_addr *saddr, uint16_t sport,
					      const struct in6_addr *daddr, uint16_t dport, int dif,
					      int sdif)
{
	if (!net || !saddr || !daddr)
		return NULL;
	return listener6_pinned(net, saddr, sport, daddr, dport, dif, sdif);
}

/* ---- TCP burst ---- */

/*
 * The lookups of socktab_lookup_tcp4() for a batch of IPv4 4-tuples, arranged so the batch's
 * cache misses overlap instead of running one after the other: a software pipeline over the
 * keys. Key i is hashed and its slot prefetched, key i - D1's slot is read and its first entry
 * (and the caller's area after it) prefetched, key i - D1 - D2 is matched against that first
 * entry. A key whose first entry is another connection's (a chain of two or more: a fifth of the
 * keys at two slots per socket) does not walk on at once, which would stall the pipeline on one
 * dependent miss per such key: the next entry is prefetched and the key waits in a queue for D3
 * more keys, then the single lookup's walk (socktab__ehash_walk_rcu) goes on from there, and the
 * result is pinned by its rule. The distances give each miss a few keys' worth of work to hide
 * behind, and bound the lines in flight (three stages of D lines, plus the areas) to what a core
 * can track. Keys not found in ehash fall back to the listener lookup unless
 * SOCKTAB_LOOKUP_ESTABLISHED is given. The result of each key is exactly what the single lookup
 * would return at some instant during the call. The kernel has no burst lookup (one skb at a
 * time); DPDK's rte_hash_lookup_bulk is the model.
 */
#define D1 16
#define D2 16
#define D3 8
#define RING 64 /* > D1 + D2, > D3, a power of two */

/* Start the misses of chain entry @p: its socket's line and the caller's area after it. */
static inline __attribute__((always_inline)) void
burst_prefetch_entry(const struct socktab_net *net, uintptr_t p)
{
	__builtin_prefetch(socktab__node_sk(p));
	if (net->has_priv)
		__builtin_prefetch((const char *)p + sizeof(struct socktab_sock));
}

/* The keys of a pipeline: IPv4 tuples (@v4) or IPv6 tuples (@v6), one of them NULL. */
struct burst_keys {
	const struct socktab_tuple4 *v4;
	const struct socktab_tuple6 *v6;
};

/* Key @j's lookup key: IPv4 keys are filled from the tuple (their hash is known already), IPv6
 * keys were made with their hash (socktab__ehash_key6) into @ring when the key was hashed. */
static inline __attribute__((always_inline)) const struct socktab__lookup_key *
burst_key(struct socktab_net *net, struct burst_keys ks, unsigned int j,
	  const struct socktab__lookup_key *ring, struct socktab__lookup_key *k)
{
	if (ks.v6)
		return &ring[j % RING];
	const struct socktab_tuple4 *t = &ks.v4[j];

	socktab__ehash_key4_fill(net, t->saddr, t->sport, t->daddr, t->dport, t->dif, t->sdif, k);
	return k;
}

/* Walk key @j's chain on from @p (an entry or a nulls marker), unless @sk already matched, and
 * pin the result by its rule. */
static inline __attribute__((always_inline)) struct socktab_sock *
burst_finish(struct socktab_net *net, struct burst_keys ks, unsigned int j,
	     const struct socktab__lookup_key *ring, uint32_t h, uintptr_t p,
	     struct socktab_sock *sk, bool ref)
{
	struct socktab__lookup_key kb;
	const struct socktab__lookup_key *k = burst_key(net, ks, j, ring, &kb);

	if (!sk)
		sk = socktab__ehash_walk_rcu(net, h, k, p);
	return established_rx(ref ? established_pin(net, h, k, sk) : sk);
}

/* The listener for key @j, pinned with @ref. */
static struct socktab_sock *burst_listener(struct socktab_net *net, struct burst_keys ks,
					   unsigned int j, bool ref)
{
	if (ks.v6) {
		const struct socktab_tuple6 *t = &ks.v6[j];

		return ref ? listener6_pinned(net, &t->saddr, t->sport, &t->daddr, t->dport, t->dif,
					      t->sdif)
			   : socktab_lookup_listener6_rcu(net, &t->saddr, t->sport, &t->daddr,
							  t->dport, t->dif, t->sdif);
	}
	const struct socktab_tuple4 *t = &ks.v4[j];

	return ref ? listener4_pinned(net, t->saddr, t->sport, t->daddr, t->dport, t->dif, t->sdif)
		   : socktab_lookup_listener4_rcu(net, t->saddr, t->sport, t->daddr, t->dport,
						  t->dif, t->sdif);
}

/*
 * The pipeline itself, for @n keys of @ks: out[i] as socktab_lookup_tcp_burst() says; with
 * @listener, listener[i] tells whether out[i] came from the listener fallback. Caller checked
 * the arguments and is a registered thread.
 */
static inline __attribute__((always_inline)) int
tcp_pipeline(struct socktab_net *net, struct burst_keys ks, unsigned int n,
	     struct socktab_sock **out, bool *listener, unsigned int flags)
{
	uint32_t hash[RING];
	uintptr_t first[RING];
	struct socktab__lookup_key ring[RING]; /* IPv6 keys, made once (IPv4 ones: refilled) */
	/* The queue of keys walking on from their second entry: key, entry, when queued. */
	unsigned int q_key[RING], q_at[RING], q_head = 0, q_tail = 0;
	uintptr_t q_next[RING];
	bool ref = !(flags & SOCKTAB_LOOKUP_NOREF);
	int found = 0;

	socktab__rcu_read_lock(); /* nested in the caller's with NOREF: cheap */
	for (unsigned int i = 0; i < n + D1 + D2; i++) {
		if (i < n) {
			if (ks.v6) {
				const struct socktab_tuple6 *t = &ks.v6[i];

				hash[i % RING] = socktab__ehash_key6(net, &t->saddr, t->sport,
								     &t->daddr, t->dport, t->dif,
								     t->sdif, &ring[i % RING]);
			} else {
				const struct socktab_tuple4 *k = &ks.v4[i];

				hash[i % RING] = socktab__ehashfn4(net, k->daddr, ntohs(k->dport),
								   k->saddr, k->sport);
			}
			__builtin_prefetch(&net->ehash[hash[i % RING] & net->ehash_mask]);
		}
		if (i >= D1 && i - D1 < n) {
			unsigned int j = i - D1;
			/* socktab__ehash_first_rcu(), with the entry's own line prefetched first: the
			 * first match reads it a whole stage before the caller reads its area. */
			uintptr_t f = socktab__chead_load(
				&net->ehash[hash[j % RING] & net->ehash_mask],
				memory_order_acquire);

			first[j % RING] = f;
			if (!socktab__is_nulls(f))
				burst_prefetch_entry(net, f);
		}
		if (i >= D1 + D2) {
			unsigned int j = i - D1 - D2;
			uint32_t h = hash[j % RING];
			uintptr_t p = first[j % RING];
			struct socktab_sock *sk = NULL;

			if (!socktab__is_nulls(p)) {
				struct socktab__lookup_key kb;

				sk = socktab__ehash_step_rcu(net, h, burst_key(net, ks, j, ring, &kb),
							     p, &p);
				if (!sk && !socktab__is_nulls(p)) {
					burst_prefetch_entry(net, p);
					q_key[q_tail % RING] = j;
					q_next[q_tail % RING] = p;
					q_at[q_tail % RING] = i;
					q_tail++;
					goto queued;
				}
			}
			out[j] = burst_finish(net, ks, j, ring, h, p, sk, ref);
		}
queued:
		while (q_head != q_tail && i - q_at[q_head % RING] >= D3) {
			unsigned int j = q_key[q_head % RING];

			out[j] = burst_finish(net, ks, j, ring, hash[j % RING],
					      q_next[q_head % RING], NULL, ref);
			q_head++;
		}
	}
	for (; q_head != q_tail; q_head++) {
		unsigned int j = q_key[q_head % RING];

		out[j] = burst_finish(net, ks, j, ring, hash[j % RING], q_next[q_head % RING], NULL,
				      ref);
	}
	for (unsigned int i = 0; i < n; i++) {
		bool l = !out[i] && !(flags & SOCKTAB_LOOKUP_ESTABLISHED);

		if (l)
			out[i] = burst_listener(net, ks, i, ref);
		if (listener)
			listener[i] = l;
		found += out[i] != NULL;
	}
	socktab__rcu_read_unlock();
	return found;
}

#define BURST_FLAGS (SOCKTAB_LOOKUP_ESTABLISHED | SOCKTAB_LOOKUP_NOREF)

int socktab_lookup_tcp_burst(struct socktab_net *net, const struct socktab_tuple4 *keys,
			     unsigned int n, struct socktab_sock **out, unsigned int flags)
{
	if (!net || (n && (!keys || !out)) || (flags & ~BURST_FLAGS))
		return -EINVAL;
	if (!n)
		return 0;
	return tcp_pipeline(net, (struct burst_keys){ .v4 = keys }, n, out, NULL, flags);
}

/* ---- batches: TCP and UDP, IPv4 and IPv6, each result with its kind ---- */

/* What @sk is, found in ehash (@listener false) or as a listener or UDP socket; and its area. */
static void hit_of(struct socktab_sock *sk, bool listener, struct socktab_hit *h)
{
	h->sk = sk;
	h->priv = NULL;
	h->kind = SOCKTAB_HIT_NONE;
	if (!sk)
		return;
	if (socktab__sk_is_tw(sk)) {
		h->kind = SOCKTAB_HIT_TIME_WAIT;
		h->priv = socktab_tw_priv((struct socktab_tw *)sk);
		return;
	}
	if (socktab__sk_is_req(sk)) {
		h->kind = SOCKTAB_HIT_REQUEST;
		h->priv = socktab_req_priv(sk);
		return;
	}
	h->priv = socktab_sock_priv(sk);
	if (socktab__sk_proto(sk) == SOCKTAB_UDP)
		h->kind = RD(sk->state) == SOCKTAB_TCP_ESTABLISHED ? SOCKTAB_HIT_UDP_CONNECTED
								   : SOCKTAB_HIT_UDP;
	else
		h->kind = listener ? SOCKTAB_HIT_LISTENER : SOCKTAB_HIT_ESTABLISHED;
}

/*
 * The UDP keys of a batch, pipelined as TCP keys are (the distances are UDP_D each): key i's
 * lookup key is built once, its hashes made and its hash2 and hash4 slots prefetched, key
 * i - UDP_D's first hash4 entry's UDP part is prefetched, key i - 2 UDP_D's socket line, and
 * key i - 3 UDP_D is looked up (socktab_lookup_udp4/6_rcu() on that key) and pinned with @ref
 * as socktab_lookup_udp4/6() pins. Returns how many were found.
 */
#define UDP_D 8

static int udp_pipeline(struct socktab_net *net, struct burst_keys ks, unsigned int n,
			struct socktab_sock **out, bool ref)
{
	struct socktab__udp_pre pre[RING];
	int found = 0;

	for (unsigned int i = 0; i < n + 3 * UDP_D; i++) {
		if (i < n) {
			if (ks.v6)
				socktab__udp_prefetch(net, true, &ks.v6[i].saddr, ks.v6[i].sport,
						      &ks.v6[i].daddr, ks.v6[i].dport, ks.v6[i].dif,
						      ks.v6[i].sdif, &pre[i % RING]);
			else
				socktab__udp_prefetch(net, false, &ks.v4[i].saddr, ks.v4[i].sport,
						      &ks.v4[i].daddr, ks.v4[i].dport, ks.v4[i].dif,
						      ks.v4[i].sdif, &pre[i % RING]);
		}
		if (i >= UDP_D && i - UDP_D < n)
			socktab__udp_prefetch_chain(net, &pre[(i - UDP_D) % RING], false);
		if (i >= 2 * UDP_D && i - 2 * UDP_D < n)
			socktab__udp_prefetch_chain(net, &pre[(i - 2 * UDP_D) % RING], true);
		if (i >= 3 * UDP_D) {
			unsigned int j = i - 3 * UDP_D;
			struct socktab_sock *sk;

			do
				sk = socktab__udp_lookup_pre_rcu(net, &pre[j % RING]);
			/* A socket that cannot be pinned is closing: look again. */
			while (ref && sk && !socktab__sock_hold_not_zero(sk));
			out[j] = sk;
			found += sk != NULL;
		}
	}
	return found;
}

#define BATCH_CHUNK 64

static int batch(struct socktab_net *net, int proto, struct burst_keys ks, unsigned int n,
		 struct socktab_hit *out, unsigned int flags)
{
	struct socktab_sock *sk[BATCH_CHUNK];
	bool listener[BATCH_CHUNK];
	bool ref = !(flags & SOCKTAB_LOOKUP_NOREF);
	int found = 0;

	if (!net || (n && ((!ks.v4 && !ks.v6) || !out)) || (flags & ~BURST_FLAGS) ||
	    (proto != SOCKTAB_TCP && proto != SOCKTAB_UDP) ||
	    (proto == SOCKTAB_UDP && (flags & SOCKTAB_LOOKUP_ESTABLISHED)))
		return -EINVAL;
	if (!n)
		return 0;
	socktab__rcu_read_lock(); /* one section for the batch */
	for (unsigned int b = 0; b < n; b += BATCH_CHUNK) {
		unsigned int m = n - b < BATCH_CHUNK ? n - b : BATCH_CHUNK;
		struct burst_keys c = { ks.v4 ? ks.v4 + b : NULL, ks.v6 ? ks.v6 + b : NULL };

		if (proto == SOCKTAB_UDP)
			found += udp_pipeline(net, c, m, sk, ref);
		else if (c.v6) /* one copy of the pipeline per family, each with the other's keys NULL */
			found += tcp_pipeline(net, (struct burst_keys){ .v6 = c.v6 }, m, sk, listener,
					      flags);
		else
			found += tcp_pipeline(net, (struct burst_keys){ .v4 = c.v4 }, m, sk, listener,
					      flags);
		for (unsigned int i = 0; i < m; i++)
			hit_of(sk[i], proto == SOCKTAB_TCP && listener[i], &out[b + i]);
	}
	socktab__rcu_read_unlock();
	return found;
}

int socktab_lookup_batch4(struct socktab_net *net, int proto, const struct socktab_tuple4 *keys,
			  unsigned int n, struct socktab_hit *out, unsigned int flags)
{
	return batch(net, proto, (struct burst_keys){ .v4 = keys }, n, out, flags);
}

int socktab_lookup_batch6(struct socktab_net *net, int proto, const struct socktab_tuple6 *keys,
			  unsigned int n, struct socktab_hit *out, unsigned int flags)
{
	return batch(net, proto, (struct burst_keys){ .v6 = keys }, n, out, flags);
}

/*
 * One key of a batch, looked up as the single lookups do (no pipeline): the established step,
 * then the listener step unless SOCKTAB_LOOKUP_ESTABLISHED, so the step that found the socket
 * gives its kind; UDP keys by the UDP lookup. Referenced unless SOCKTAB_LOOKUP_NOREF.
 */
static int one(struct socktab_net *net, int proto, const struct socktab_tuple4 *k4,
	       const struct socktab_tuple6 *k6, struct socktab_hit *out, unsigned int flags)
{
	bool ref = !(flags & SOCKTAB_LOOKUP_NOREF), listener = false;
	struct socktab__lookup_key k;
	struct socktab_sock *sk;
	uint32_t hash;

	if (!net || (!k4 && !k6) || !out || (flags & ~BURST_FLAGS) ||
	    (proto != SOCKTAB_TCP && proto != SOCKTAB_UDP) ||
	    (proto == SOCKTAB_UDP && (flags & SOCKTAB_LOOKUP_ESTABLISHED)))
		return -EINVAL;
	if (!ref)
		SOCKTAB__ASSERT_RCU();
	if (proto == SOCKTAB_UDP) {
		if (k4)
			sk = ref ? socktab_lookup_udp4(net, k4->saddr, k4->sport, k4->daddr, k4->dport,
						       k4->dif, k4->sdif)
				 : socktab_lookup_udp4_rcu(net, k4->saddr, k4->sport, k4->daddr,
							   k4->dport, k4->dif, k4->sdif);
		else
			sk = ref ? socktab_lookup_udp6(net, &k6->saddr, k6->sport, &k6->daddr,
						       k6->dport, k6->dif, k6->sdif)
				 : socktab_lookup_udp6_rcu(net, &k6->saddr, k6->sport, &k6->daddr,
							   k6->dport, k6->dif, k6->sdif);
		hit_of(sk, false, out);
		return sk != NULL;
	}
	if (k4)
		hash = socktab__ehash_key4(net, k4->saddr, k4->sport, k4->daddr, k4->dport, k4->dif,
					   k4->sdif, &k);
	else
		hash = socktab__ehash_key6(net, &k6->saddr, k6->sport, &k6->daddr, k6->dport,
					   k6->dif, k6->sdif, &k);
	sk = ref ? established_pinned(net, hash, &k)
		 : established_rx(socktab__ehash_lookup_rcu(net, hash, &k));
	if (!sk && !(flags & SOCKTAB_LOOKUP_ESTABLISHED)) {
		if (k4)
			sk = ref ? listener4_pinned(net, k4->saddr, k4->sport, k4->daddr, k4->dport,
						    k4->dif, k4->sdif)
				 : socktab_lookup_listener4_rcu(net, k4->saddr, k4->sport, k4->daddr,
								k4->dport, k4->dif, k4->sdif);
		else
			sk = ref ? listener6_pinned(net, &k6->saddr, k6->sport, &k6->daddr,
						    k6->dport, k6->dif, k6->sdif)
				 : socktab_lookup_listener6_rcu(net, &k6->saddr, k6->sport,
								&k6->daddr, k6->dport, k6->dif,
								k6->sdif);
		listener = sk != NULL;
	}
	hit_of(sk, listener, out);
	return sk != NULL;
}

int socktab_lookup_one4(struct socktab_net *net, int proto, const struct socktab_tuple4 *key,
			struct socktab_hit *out, unsigned int flags)
{
	return one(net, proto, key, NULL, out, flags);
}

int socktab_lookup_one6(struct socktab_net *net, int proto, const struct socktab_tuple6 *key,
			struct socktab_hit *out, unsigned int flags)
{
	return one(net, proto, NULL, key, out, flags);
}

/* ---- UDP ---- */

struct socktab_sock *socktab_lookup_udp4(struct socktab_net *net, uint32_t saddr, uint16_t sport,
					 uint32_t daddr, uint16_t dport, int dif, int sdif)
{
	struct socktab_sock *sk;

	if (!net)
		return NULL;
	/* A socket that cannot be pinned is closing: it is leaving the chains. Walk again. */
	socktab__rcu_read_lock();
	do
		sk = socktab_lookup_udp4_rcu(net, saddr, sport, daddr, dport, dif, sdif);
	while (sk && !socktab__sock_hold_not_zero(sk));
	socktab__rcu_read_unlock();
	return sk;
}

struct socktab_sock *socktab_lookup_udp6(struct socktab_net *net, const struct in6_addr *saddr,
					 uint16_t sport, const struct in6_addr *daddr,
					 uint16_t dport, int dif, int sdif)
{
	struct socktab_sock *sk;

	if (!net || !saddr || !daddr)
		return NULL;
	socktab__rcu_read_lock(); /* as socktab_lookup_udp4() */
	do
		sk = socktab_lookup_udp6_rcu(net, saddr, sport, daddr, dport, dif, sdif);
	while (sk && !socktab__sock_hold_not_zero(sk));
	socktab__rcu_read_unlock();
	return sk;
}

