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
 * none is left. Cold: the hot paths keep one copy of the walk inline. The key comes by value,
 * so the hot path's key never has its address taken and can live in registers: only this
 * call stores it. */
static __attribute__((noinline, cold)) struct socktab_sock *
established_rewalk(struct socktab_net *net, uint32_t hash, struct socktab__lookup_key k)
{
	struct socktab_sock *sk;

	do
		sk = socktab__ehash_lookup_rcu(net, hash, &k);
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
	return established_rewalk(net, hash, *k);
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
 * The lookups of socktab_lookup_tcp4() for a batch of 4-tuples, arranged so the batch's cache
 * misses overlap instead of running one after the other. The keys go in groups of GROUP, each
 * group stage by stage: every key is hashed and its slot prefetched; every slot is read and its
 * first entry's socket line prefetched (with an IPv6 key's key, and the caller's area, the line
 * after the socket's: the first entry is the match for most keys); every key is matched against
 * that entry. The second entry needs no round of its own: the slot names it beside the head (a
 * hint, nulls.h), so its lines (socket, caller area, an IPv6 key's key) are prefetched with the
 * first entry's, and a key whose first entry is another connection's (a chain of two or more: a
 * fifth of the keys at two slots per socket) steps on to its second in the same round, by the
 * first entry's link. A key standing third or later does not walk on at once, which would stall
 * the group on one dependent miss per such key: its next entry is prefetched, and after the
 * group's matches every key still walking takes a step per round, prefetching its next entry for
 * the next round, so a chain's later entries cost the group a miss per round, not one per key. In
 * one process, blocks of 128 bursts assigned at random to each form and the medians compared
 * (bench lookup --sockets 1000000 --touch 64 --burst 32, AMD EPYC, 6.18.44-fc-v1272; the same
 * harness with both forms alike gave 0.99-1.02), the hint's prefetch and the step together took
 * 0.90-0.95x the cycles per key of neither, the prefetch alone 0.94-0.96x; at 100,000 sockets
 * 0.98-0.99x, for IPv6 keys 0.96-0.98x. A walk that ends on another chain's marker goes on as the
 * single walk does (socktab__ehash_walk_rcu). In one process, blocks of 256 bursts alternating
 * (bench lookup --sockets 1000000 --touch 64 --burst 32, AMD EPYC, 6.18.44-fc-v1272; a harness
 * whose own A/A gave 0.86-0.93, docs/benchmarks.md), the rounds took 0.962-0.975x the time of
 * walking each such key to its end one after the other. Each stage's misses hide behind the
 * stage's own work on the other keys; a group bounds the lines in flight to about what a core can
 * track. Each result is pinned by its rule. Keys not found in ehash fall back to the listener
 * lookup unless SOCKTAB_LOOKUP_ESTABLISHED is given. The result of each key is exactly what the
 * single lookup would return at some instant during the call. The kernel has no burst lookup (one
 * skb at a time); DPDK's rte_hash_lookup_bulk is the model.
 *
 * Stages over a whole group beat a software pipeline (key i hashed while key i - 16's slot is
 * read and key i - 32's entry matched) on a 32-key burst: bench lookup --sockets 1000000
 * --touch 64 --burst 32, both in one process in alternating blocks of 256 bursts, 0.82x the
 * pipeline's time per key (AMD EPYC, 6.18.44). The pipeline spent half its 64 iterations
 * filling and draining, and 7 % more instructions on ring indexing and stage tests.
 */
#define GROUP 32

/* The keys of a pipeline: IPv4 tuples (@v4) or IPv6 tuples (@v6), the other NULL; or both (a
 * mixed burst's): keys 0 to @n4 - 1 are v4[0..n4), the rest v6[0..). */
struct burst_keys {
	const struct socktab_tuple4 *v4;
	const struct socktab_tuple6 *v6;
	unsigned int n4;
};

/* Is key @j an IPv6 one? Known at compile time where one array is NULL. */
static inline __attribute__((always_inline)) bool burst_is6(struct burst_keys ks, unsigned int j)
{
	return ks.v6 && (!ks.v4 || j >= ks.n4);
}

static inline __attribute__((always_inline)) const struct socktab_tuple6 *
burst_t6(struct burst_keys ks, unsigned int j)
{
	return &ks.v6[ks.v4 ? j - ks.n4 : j];
}

/* Key @j's lookup key: IPv4 keys are filled from the tuple into @k (their hash is known
 * already), IPv6 keys were made with their hash (socktab__ehash_key6) into @k6 when the key was
 * hashed. */
static inline __attribute__((always_inline)) const struct socktab__lookup_key *
burst_key(struct socktab_net *net, struct burst_keys ks, unsigned int j,
	  const struct socktab__lookup_key *k6, struct socktab__lookup_key *k)
{
	if (burst_is6(ks, j))
		return k6;
	const struct socktab_tuple4 *t = &ks.v4[j];

	socktab__ehash_key4_fill(net, t->saddr, t->sport, t->daddr, t->dport, t->dif, t->sdif, k);
	return k;
}

/* Walk @k's chain on from @p (an entry or a nulls marker), unless @sk already matched, and pin
 * the result by its rule. A walk's result past the entry at @p gets its caller area's miss
 * started here; an entry the burst stood on had it started with its line (by the entry's own
 * prefetch, or by the slot's hint for a second entry: a stale hint leaves that one to the
 * caller's first touch). */
static inline __attribute__((always_inline)) struct socktab_sock *
burst_finish(struct socktab_net *net, uint32_t h, const struct socktab__lookup_key *k,
	     uintptr_t p, struct socktab_sock *sk, bool ref)
{
	if (!sk) {
		sk = socktab__ehash_walk_rcu(net, h, k, p);
		if (sk && net->has_priv && (uintptr_t)sk != p)
			__builtin_prefetch((const char *)sk + sizeof(struct socktab_sock));
	}
	return established_rx(ref ? established_pin(net, h, k, sk) : sk);
}

/* The listener for key @j, pinned with @ref. */
static struct socktab_sock *burst_listener(struct socktab_net *net, struct burst_keys ks,
					   unsigned int j, bool ref)
{
	if (burst_is6(ks, j)) {
		const struct socktab_tuple6 *t = burst_t6(ks, j);

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

/* Start the misses of chain entry @p (not a nulls marker) that its match and its caller take:
 * its socket's line, for an IPv6 key the entry's IPv6 key, which socktab__sk_v6() finds from the
 * entry's address and its slab's header without the socket's line (an AF_INET socket's is no
 * address to read; the prefetch of it is harmless), and the caller's area, the line after the
 * socket's. */
static inline __attribute__((always_inline)) void
burst_prefetch_entry(const struct socktab_net *net, bool v6, uintptr_t p)
{
	struct socktab_sock *sk = socktab__node_sk(p);

	__builtin_prefetch(sk);
	if (v6)
		__builtin_prefetch(socktab__sk_v6(sk));
	if (net->has_priv)
		__builtin_prefetch((const char *)sk + sizeof(struct socktab_sock));
}

/* A group of up to GROUP TCP keys of a pipeline, keys @b to @b + @m - 1 of its keys. */
struct tcp_group {
	unsigned int b, m;
	uint32_t walk; /* bit i: key b + i has no answer yet; it stands on at[i] */
	uint32_t hash[GROUP];
	/* Each key's first entry; for a key that walks on, the entry it walks on from. */
	uintptr_t at[GROUP];
	/* IPv6 keys, made once; an IPv4 key is filled when it is matched (again if it walks on) */
	struct socktab__lookup_key k6[GROUP];
};

/* Stage 1: every key hashed and its slot prefetched. */
static inline __attribute__((always_inline)) void
tcp_group_hash(struct socktab_net *net, struct burst_keys ks, struct tcp_group *g)
{
	for (unsigned int i = 0; i < g->m; i++) {
		unsigned int j = g->b + i;

		if (burst_is6(ks, j)) {
			const struct socktab_tuple6 *t = burst_t6(ks, j);

			g->hash[i] = socktab__ehash_key6(net, &t->saddr, t->sport, &t->daddr,
							 t->dport, t->dif, t->sdif, &g->k6[i]);
		} else {
			const struct socktab_tuple4 *t = &ks.v4[j];

			g->hash[i] = socktab__ehashfn4(net, t->daddr, ntohs(t->dport), t->saddr,
						       t->sport);
		}
		__builtin_prefetch(&net->ehash[g->hash[i] & net->ehash_mask]);
	}
}

/* Stage 2: every slot read and its first entry's lines prefetched, and its second entry's
 * (the slot's hint, nulls.h), so the first round can step on to that entry without waiting a
 * round for it; every key is to walk. */
static inline __attribute__((always_inline)) void
tcp_group_slots(struct socktab_net *net, struct burst_keys ks, struct tcp_group *g)
{
	g->walk = g->m == GROUP ? ~0u : (1u << g->m) - 1;
	for (unsigned int i = 0; i < g->m; i++) {
		const struct socktab__eslot *s = &net->ehash[g->hash[i] & net->ehash_mask];
		/* socktab__ehash_first_rcu(), but for the entry's line too. */
		uintptr_t f = socktab__chead_load(&s->head, memory_order_acquire);
		/* Acquire, paired with the writer's release: for an IPv6 key the prefetch loads
		 * the hinted entry's slab header (socktab__sk_v6), which must be seen whole. */
		uint32_t second = atomic_load_explicit(&s->second, memory_order_acquire);
		bool v6 = burst_is6(ks, g->b + i);

		g->at[i] = f;
		if (!socktab__is_nulls(f))
			burst_prefetch_entry(net, v6, f);
		if (!(second & 1u))
			burst_prefetch_entry(net, v6, socktab__chead_dec(second));
	}
}

/* Stage 3 on, a round each: every key still walking takes a step, to the next entry (whose
 * lines it prefetches for the next round) or to its answer. The @first round matches every key
 * against its first entry and, where that is another connection's, against the next one too:
 * the slot's hint had that entry's lines prefetched with the first's, so the step finds them
 * in the cache (or, where the hint was stale, waits for this one key), and a key standing third
 * has its third entry's miss started in this round, not the next. A walk that stands on a nulls
 * marker ends in burst_finish(), which walks again as the single walk does if the marker is
 * another chain's. */
static inline __attribute__((always_inline)) void
tcp_group_round(struct socktab_net *net, struct burst_keys ks, struct tcp_group *g,
		struct socktab_sock **out, bool ref, bool first)
{
	for (uint32_t w = g->walk; w; w &= w - 1) {
		unsigned int i = (unsigned int)__builtin_ctz(w), j = g->b + i;
		struct socktab__lookup_key kb;
		const struct socktab__lookup_key *k = burst_key(net, ks, j, &g->k6[i], &kb);
		uintptr_t p = g->at[i];
		struct socktab_sock *sk = NULL;

		if (!socktab__is_nulls(p))
			sk = socktab__ehash_step_rcu(net, g->hash[i], k, p, &p);
		if (first && !sk && !socktab__is_nulls(p))
			sk = socktab__ehash_step_rcu(net, g->hash[i], k, p, &p);
		if (!sk && !socktab__is_nulls(p)) {
			burst_prefetch_entry(net, burst_is6(ks, j), p);
			g->at[i] = p;
			continue;
		}
		g->walk &= ~(1u << i);
		out[j] = burst_finish(net, g->hash[i], k, p, sk, ref);
	}
}

/* After the groups: the keys ehash did not have go to the listener lookup unless @flags has
 * SOCKTAB_LOOKUP_ESTABLISHED; with @listener, listener[i] tells whether out[i] came from it.
 * Returns how many of the @n keys have a socket. */
static inline __attribute__((always_inline)) int
tcp_listeners(struct socktab_net *net, struct burst_keys ks, unsigned int n,
	      struct socktab_sock **out, bool *listener, unsigned int flags)
{
	bool ref = !(flags & SOCKTAB_LOOKUP_NOREF);
	int found = 0;

	for (unsigned int i = 0; i < n; i++) {
		bool l = !out[i] && !(flags & SOCKTAB_LOOKUP_ESTABLISHED);

		if (l)
			out[i] = burst_listener(net, ks, i, ref);
		if (listener)
			listener[i] = l;
		found += out[i] != NULL;
	}
	return found;
}

/* A group of up to GROUP UDP keys of a pipeline, keys @b to @b + @m - 1 of its keys. */
struct udp_group {
	unsigned int b, m;
	uint32_t walk, whole; /* bit i: key b + i walks on from at[i]; takes the whole lookup */
	uintptr_t at[GROUP];
	struct socktab__udp_pre pre[GROUP];
};

/* Stage 1: every key built, hashed and its slots prefetched. */
static inline __attribute__((always_inline)) void
udp_group_prefetch(struct socktab_net *net, struct burst_keys ks, struct udp_group *g)
{
	for (unsigned int i = 0; i < g->m; i++) {
		unsigned int j = g->b + i;

		if (burst_is6(ks, j)) {
			const struct socktab_tuple6 *t = burst_t6(ks, j);

			socktab__udp_prefetch(net, true, &t->saddr, t->sport, &t->daddr, t->dport,
					      t->dif, t->sdif, &g->pre[i]);
		} else {
			const struct socktab_tuple4 *t = &ks.v4[j];

			socktab__udp_prefetch(net, false, &t->saddr, t->sport, &t->daddr,
					      t->dport, t->dif, t->sdif, &g->pre[i]);
		}
	}
}

/* Stage 2: every key's first hash4 entry found and its lines prefetched. */
static inline __attribute__((always_inline)) void
udp_group_start(struct socktab_net *net, struct udp_group *g, struct socktab_sock **out)
{
	g->walk = g->whole = 0;
	for (unsigned int i = 0; i < g->m; i++) {
		out[g->b + i] = NULL;
		g->at[i] = socktab__udp_walk4_start(net, &g->pre[i]);
		if (g->at[i])
			g->walk |= 1u << i;
		else
			g->whole |= 1u << i;
	}
}

/* Stages 3 on, a round each: every key still walking takes a step. */
static inline __attribute__((always_inline)) void
udp_group_round(struct socktab_net *net, struct udp_group *g, struct socktab_sock **out)
{
	for (uint32_t w = g->walk; w; w &= w - 1) {
		unsigned int i = (unsigned int)__builtin_ctz(w);
		struct socktab_sock *sk = socktab__udp_walk4_step(net, &g->pre[i], &g->at[i]);

		if (sk) {
			if (net->has_priv)
				__builtin_prefetch(socktab__sk_priv(sk));
			out[g->b + i] = sk;
		}
		if (!g->at[i]) {
			g->walk &= ~(1u << i);
			g->whole |= (uint32_t)!sk << i;
		}
	}
}

/* Last: the whole lookup for the keys the walk did not answer, and every result pinned. Returns
 * how many have a socket. */
static inline __attribute__((always_inline)) int
udp_group_finish(struct socktab_net *net, struct udp_group *g, struct socktab_sock **out, bool ref)
{
	int found = 0;

	for (unsigned int i = 0; i < g->m; i++) {
		struct socktab_sock *sk = out[g->b + i];

		if ((g->whole >> i) & 1)
			sk = socktab__udp_lookup_pre_rcu(net, &g->pre[i]);
		/* A socket that cannot be pinned is closing: look again. */
		while (ref && sk && !socktab__sock_hold_not_zero(sk))
			sk = socktab__udp_lookup_pre_rcu(net, &g->pre[i]);
		out[g->b + i] = sk;
		found += sk != NULL;
	}
	return found;
}

/*
 * The TCP pipeline on the @nt keys of @tk and the UDP one on the @nu keys of @uk in step, group
 * by group: each stage of one protocol's group runs while the misses the other's last stage
 * started are on their way, so a burst of both waits for the memory about as often as a burst
 * of one does, not once per protocol. TCP results into @tout (with @listener, as
 * tcp_pipeline() says), UDP ones into @uout, pinned with @flags' rule; returns how many keys
 * of both have a socket. Inlined with @nt or @nu 0, the other protocol's stages fold away: it
 * is also each protocol's pipeline alone. In one process, against the two pipelines one after
 * the other in alternate spans (bench batch --mixed --rounds 9, AMD EPYC, 6.18.44-fc-v1272; a
 * harness whose own A/A gave 0.86-0.93, docs/benchmarks.md): 0.91-0.94x the time per key.
 * Caller checked the arguments and is a registered thread.
 */
static inline __attribute__((always_inline)) int
pipelines(struct socktab_net *net, struct burst_keys tk, unsigned int nt, struct socktab_sock **tout,
	  bool *listener, struct burst_keys uk, unsigned int nu, struct socktab_sock **uout,
	  unsigned int flags)
{
	struct tcp_group tg;
	struct udp_group ug;
	bool ref = !(flags & SOCKTAB_LOOKUP_NOREF);
	int found = 0;

	socktab__rcu_read_lock(); /* nested in the caller's with NOREF: cheap */
	for (unsigned int b = 0; b < nt || b < nu; b += GROUP) {
		tg.b = ug.b = b;
		tg.m = b >= nt ? 0 : nt - b < GROUP ? nt - b : GROUP;
		ug.m = b >= nu ? 0 : nu - b < GROUP ? nu - b : GROUP;
		tg.walk = ug.walk = 0;
		/* The tests of @nt and @nu are constants where one protocol has no keys. */
		if (nt)
			tcp_group_hash(net, tk, &tg);
		if (nu)
			udp_group_prefetch(net, uk, &ug);
		if (nt)
			tcp_group_slots(net, tk, &tg);
		if (nu)
			udp_group_start(net, &ug, uout);
		for (bool first = true; tg.walk || ug.walk; first = false) {
			if (nt)
				tcp_group_round(net, tk, &tg, tout, ref, first);
			if (nu)
				udp_group_round(net, &ug, uout);
		}
		if (nu)
			found += udp_group_finish(net, &ug, uout, ref);
	}
	if (nt)
		found += tcp_listeners(net, tk, nt, tout, listener, flags);
	socktab__rcu_read_unlock();
	return found;
}

/*
 * The TCP pipeline, for @n keys of @ks: out[i] as socktab_lookup_tcp_burst() says; with
 * @listener, listener[i] tells whether out[i] came from the listener fallback.
 */
static inline __attribute__((always_inline)) int
tcp_pipeline(struct socktab_net *net, struct burst_keys ks, unsigned int n,
	     struct socktab_sock **out, bool *listener, unsigned int flags)
{
	return pipelines(net, ks, n, out, listener, (struct burst_keys){ 0 }, 0, NULL, flags);
}

/*
 * The UDP keys of a batch, in groups of GROUP stage by stage as TCP keys are: every key's lookup
 * key is built once, its hashes made and its hash2 and hash4 slots prefetched; then every key's
 * first hash4 entry is found and its lines prefetched; then, round by round, every key still
 * walking matches the entry it stands on and either has its socket (whose caller area's miss
 * starts there) or moves to the next entry, whose lines are prefetched for the next round. So
 * a chain's later entries cost a round of the whole group, not a miss of each key one after
 * another: at 100,000 connected sockets over the 65,536 hash4 slots the kernel's maximum gives,
 * about a fifth of the keys stand third or later in their chain. A key whose walk ends without
 * a match takes the whole lookup (socktab_lookup_udp4/6_rcu() on that key: the hash2 pass, the
 * hook, the wildcard). Each result is pinned as socktab_lookup_udp4/6() pins, unless @flags has
 * SOCKTAB_LOOKUP_NOREF. Returns how many were found. Against the stages it replaced (the first
 * two entries prefetched, then every key's whole lookup), runs of each binary interleaved (AMD
 * EPYC, 6.18.44-fc-v1272): bench batch --kind udp4 --sockets 250000 294-335 -> 172-173 ns a
 * lookup; at 100,000 sockets udp4 136-144 -> 105-120, udp6 158-261 -> 127-195.
 */
static int udp_pipeline(struct socktab_net *net, struct burst_keys ks, unsigned int n,
			struct socktab_sock **out, unsigned int flags)
{
	return pipelines(net, (struct burst_keys){ 0 }, 0, NULL, NULL, ks, n, out, flags);
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

#define BATCH_CHUNK 64

static int batch(struct socktab_net *net, int proto, struct burst_keys ks, unsigned int n,
		 struct socktab_hit *out, unsigned int flags)
{
	struct socktab_sock *sk[BATCH_CHUNK];
	bool listener[BATCH_CHUNK];
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
		struct burst_keys c = { ks.v4 ? ks.v4 + b : NULL, ks.v6 ? ks.v6 + b : NULL, 0 };

		if (proto == SOCKTAB_UDP)
			found += udp_pipeline(net, c, m, sk, flags);
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

/* ---- mixed bursts ---- */

/*
 * socktab_lookup_mixed(): a chunk's keys are sorted into the batch pipelines' tuple arrays
 * (IPv4: TCP from the front, UDP from the back; IPv6 likewise), then one TCP pipeline runs on
 * the TCP keys of both families (IPv4 ones first, so the family test goes the same way key
 * after key) in step with one UDP pipeline on the UDP keys (pipelines()): the pipelines of
 * socktab_lookup_batch4/6(), whose misses overlap over the whole burst instead of a quarter of
 * it each. The results are made into hits class by class, as a per-kind batch makes them,
 * and put back in the keys' order. A burst's kinds come in any order, so the sorting picks each
 * key's place by arithmetic, not by branches a predictor would miss half the time.
 */
#define MIXED_CHUNK BATCH_CHUNK
#define MIXED_FLAGS (BURST_FLAGS | SOCKTAB_LOOKUP_UDP_ORDER)

/* A key's class: its protocol and family. */
enum { MIXED_TCP4, MIXED_TCP6, MIXED_UDP4, MIXED_UDP6 };

struct mixed_chunk {
	/* One more tuple of each family: the other family's key writes its copy there. */
	struct socktab_tuple4 t4[MIXED_CHUNK + 1];
	struct socktab_tuple6 t6[MIXED_CHUNK + 1];
	struct socktab_sock *sk[2 * MIXED_CHUNK]; /* TCP results, then UDP ones from [CHUNK] */
	bool listener[MIXED_CHUNK];
	uint8_t key[4][MIXED_CHUNK];             /* the key of each class's tuple */
	struct socktab_hit hit[MIXED_CHUNK];     /* in the keys' order */
};

/*
 * A key's flow, as the repeat rule compares it: protocol, addresses and ports, a v4-mapped IPv6
 * pair as its IPv4 pair (the lookups key it so), no device. No padding, so memcmp() compares it.
 */
struct mixed_flow {
	uint32_t s[4], d[4];
	uint32_t ports;
	uint32_t tag; /* proto, and 0x100 for IPv6 */
};

static void mixed_flow_of(const struct socktab_key *k, struct mixed_flow *f)
{
	memset(f, 0, sizeof(*f));
	f->ports = (uint32_t)k->sport << 16 | k->dport;
	if (k->family == AF_INET6 && !(IN6_IS_ADDR_V4MAPPED(&k->saddr.v6) &&
				       IN6_IS_ADDR_V4MAPPED(&k->daddr.v6))) {
		memcpy(f->s, &k->saddr.v6, 16);
		memcpy(f->d, &k->daddr.v6, 16);
		f->tag = k->proto | 0x100u;
		return;
	}
	if (k->family == AF_INET6) {
		memcpy(&f->s[0], &k->saddr.v6.s6_addr[12], 4);
		memcpy(&f->d[0], &k->daddr.v6.s6_addr[12], 4);
	} else {
		f->s[0] = k->saddr.v4;
		f->d[0] = k->daddr.v4;
	}
	f->tag = k->proto;
}

/* The flow's bit in the filter of flows whose repeat ends the call (512 bits). */
static unsigned int mixed_flow_bit(const struct mixed_flow *f)
{
	uint32_t x = f->ports ^ f->tag;

	for (int i = 0; i < 4; i++)
		x ^= f->s[i] ^ (f->d[i] << 13 | f->d[i] >> 19);
	return (x * 0x9e3779b1u) >> 23;
}

/* The kinds of answer whose repeat ends the call, a bit per enum socktab_hit_kind, for TCP keys
 * ([0]) and UDP keys ([1]). */
static void mixed_ends_masks(unsigned int flags, uint32_t m[2])
{
	m[0] = 1u << SOCKTAB_HIT_LISTENER | 1u << SOCKTAB_HIT_REQUEST | 1u << SOCKTAB_HIT_TIME_WAIT;
	if (flags & SOCKTAB_LOOKUP_ESTABLISHED)
		m[0] |= 1u << SOCKTAB_HIT_NONE; /* the caller's listener step follows */
	m[1] = flags & SOCKTAB_LOOKUP_UDP_ORDER ? 1u << SOCKTAB_HIT_UDP : 0;
}

static inline bool mixed_ends(const uint32_t m[2], const struct socktab_key *k, int kind)
{
	return (m[k->proto == SOCKTAB_UDP] >> kind) & 1;
}

/* Key @i's flow @f against the earlier keys' answers: does one of them end the call here? */
static bool mixed_repeats(const struct socktab_key *keys, const struct socktab_hit *out,
			  unsigned int i, const struct mixed_flow *f, const uint32_t m[2])
{
	for (unsigned int j = 0; j < i; j++) {
		struct mixed_flow g;

		if (!mixed_ends(m, &keys[j], out[j].kind) || keys[j].sport != keys[i].sport ||
		    keys[j].dport != keys[i].dport)
			continue;
		mixed_flow_of(&keys[j], &g);
		if (!memcmp(&g, f, sizeof(g)))
			return true;
	}
	return false;
}

/*
 * Sort the @m keys at @keys into @c, run the pipelines and make c->hit[]. -EINVAL for a bad key
 * (nothing looked up), else 0.
 */
static int mixed_lookup(struct socktab_net *net, const struct socktab_key *keys, unsigned int m,
			int dif, int sdif, struct mixed_chunk *c, unsigned int flags)
{
	/* The next tuple of each class: TCP ones count up from 0, UDP ones down from the end. */
	unsigned int next[4] = { 0, 0, MIXED_CHUNK - 1, MIXED_CHUNK - 1 };
	static const unsigned int step[4] = { 1, 1, -1u, -1u };
	bool est = flags & SOCKTAB_LOOKUP_ESTABLISHED, bad = false;
	unsigned int a4, a6, b4, b6, u4, u6;

	for (unsigned int i = 0; i < m; i++) {
		const struct socktab_key *k = &keys[i];
		bool is6 = k->family == AF_INET6, udp = k->proto == SOCKTAB_UDP;
		bool own = k->dif != SOCKTAB_KEY_CALL_DEV;
		unsigned int cls = 2u * udp + is6, x = next[cls];
		unsigned int x4 = is6 ? MIXED_CHUNK : x, x6 = is6 ? x : MIXED_CHUNK;
		int32_t kd = own ? k->dif : dif, ks = own ? k->sdif : sdif;
		struct socktab_tuple6 *t = &c->t6[x6];

		bad |= !((k->family == AF_INET) | is6) |
		       !((k->proto == SOCKTAB_TCP) | (udp & !est));
		next[cls] = x + step[cls];
		c->t4[x4] = (struct socktab_tuple4){ k->saddr.v4, k->daddr.v4, k->sport, k->dport,
						     kd, ks };
		t->saddr = k->saddr.v6;
		t->daddr = k->daddr.v6;
		t->sport = k->sport;
		t->dport = k->dport;
		t->dif = kd;
		t->sdif = ks;
		c->key[cls][x] = (uint8_t)i;
	}
	if (bad)
		return -EINVAL;
	a4 = next[MIXED_TCP4];
	a6 = next[MIXED_TCP6];
	b4 = next[MIXED_UDP4] + 1; /* unsigned: all 64 keys UDP makes it 0 */
	b6 = next[MIXED_UDP6] + 1;
	u4 = MIXED_CHUNK - b4;
	u6 = MIXED_CHUNK - b6;
	/* TCP: IPv4 keys, then IPv6 ones; UDP likewise, from sk[MIXED_CHUNK]. */
	(void)pipelines(net, (struct burst_keys){ a4 ? c->t4 : NULL, a6 ? c->t6 : NULL, a4 },
			a4 + a6, c->sk, c->listener,
			(struct burst_keys){ u4 ? c->t4 + b4 : NULL, u6 ? c->t6 + b6 : NULL, u4 },
			u4 + u6, c->sk + MIXED_CHUNK, flags);
	for (unsigned int j = 0; j < a4; j++)
		hit_of(c->sk[j], c->listener[j], &c->hit[c->key[MIXED_TCP4][j]]);
	for (unsigned int j = 0; j < a6; j++)
		hit_of(c->sk[a4 + j], c->listener[a4 + j], &c->hit[c->key[MIXED_TCP6][j]]);
	for (unsigned int j = 0; j < u4; j++)
		hit_of(c->sk[MIXED_CHUNK + j], false, &c->hit[c->key[MIXED_UDP4][b4 + j]]);
	for (unsigned int j = 0; j < u6; j++)
		hit_of(c->sk[MIXED_CHUNK + u4 + j], false, &c->hit[c->key[MIXED_UDP6][b6 + j]]);
	return 0;
}

static bool mixed_key_ok(const struct socktab_key *k, unsigned int flags)
{
	if (k->family != AF_INET && k->family != AF_INET6)
		return false;
	if (k->proto == SOCKTAB_UDP)
		return !(flags & SOCKTAB_LOOKUP_ESTABLISHED);
	return k->proto == SOCKTAB_TCP;
}

int socktab_lookup_mixed(struct socktab_net *net, const struct socktab_key *keys, unsigned int n,
			 int dif, int sdif, struct socktab_hit *out, unsigned int flags)
{
	struct mixed_chunk c;
	uint64_t filter[8]; /* flows whose repeat ends the call, by mixed_flow_bit() */
	uint32_t ends[2];
	bool filtering = false, ref = !(flags & SOCKTAB_LOOKUP_NOREF);
	unsigned int b, i = 0;

	if (!net || (n && (!keys || !out)) || (flags & ~MIXED_FLAGS) || dif < 0 || sdif < 0)
		return -EINVAL;
	/* The first chunk's keys are checked as they are sorted, before any lookup. */
	for (unsigned int j = MIXED_CHUNK; j < n; j++)
		if (!mixed_key_ok(&keys[j], flags))
			return -EINVAL;
	if (!n)
		return 0;
	mixed_ends_masks(flags, ends);
	socktab__rcu_read_lock(); /* one section for the call */
	for (b = 0; b < n; b += MIXED_CHUNK) {
		unsigned int m = n - b < MIXED_CHUNK ? n - b : MIXED_CHUNK;

		if (mixed_lookup(net, keys + b, m, dif, sdif, &c, flags)) {
			socktab__rcu_read_unlock();
			return -EINVAL;
		}
		for (i = b; i < b + m; i++) {
			const struct socktab_key *k = &keys[i];
			struct mixed_flow f;

			if (filtering) {
				unsigned int bit;

				mixed_flow_of(k, &f);
				bit = mixed_flow_bit(&f);
				if (((filter[bit / 64] >> (bit % 64)) & 1) &&
				    mixed_repeats(keys, out, i, &f, ends))
					break;
			}
			out[i] = c.hit[i - b];
			if (mixed_ends(ends, k, out[i].kind)) {
				unsigned int bit;

				if (!filtering) {
					memset(filter, 0, sizeof(filter));
					filtering = true;
				}
				mixed_flow_of(k, &f);
				bit = mixed_flow_bit(&f);
				filter[bit / 64] |= 1ull << (bit % 64);
			}
		}
		if (i < b + m) { /* a repeat ends the call: drop the answers from it on */
			for (unsigned int j = i; ref && j < b + m; j++)
				socktab_sock_put(c.hit[j - b].sk);
			break;
		}
	}
	socktab__rcu_read_unlock();
	return (int)i;
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

