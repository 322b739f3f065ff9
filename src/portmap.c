/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * portmap: per-destination index of busy local ports, so that connect() finds the port the
 * kernel's walk would pick without walking (R54-R58, R61, R64, R66).
 *
 * The cliff. connect() walks candidate ports from a keyed offset (connect.c); once every port of
 * the preferred parity toward one destination is taken, each connect() examines all of them
 * before it reaches the other parity. The examination is what costs, not the choice.
 *
 * The index. For a destination D = (net, IPv4-or-IPv6 key, local address, remote address,
 * remote port) with enough ehash entries (below), a bitmap over the 65536 local ports: bit p
 * is set iff ehash holds an entry (live or TIME_WAIT) with D's 4-tuple on local port p that is
 * bound to no device: only those conflict with an unbound socket's connect() (R94), and only
 * unbound sockets search the index. An entry bound to a device after it was hashed leaves its
 * bit set until it goes (the walk then merely skips a usable port); one unbound later is
 * rejected by the locked check like any port the index misses. A summary level per parity has one
 * bit per 64-port word, set only while every port of that parity in the word is busy, so a search
 * crosses a full 64-port word with one bit test and the whole 65536-port space with 16 word
 * loads. An unlink that frees a port of a full word clears the word's bit; the bit is set again
 * by the next search that finds the word full, not by the entry that fills it: at a steady count
 * connect() and close() take and give back ports of the same few words, and marking each word
 * full at every connect() would write a summary line that every connecting thread shares.
 * Searches AND in the net's reserved-port bitmap.
 * Bytes per hot destination: sizeof(struct socktab__portmap) = 8192 (bits) + 256 (summaries)
 * + a 128-byte header ~= 8.6 KiB (asserted below); at most PM_MAX indexes per net.
 *
 * Key and hash. All entries of one 4-tuple share one ehash hash (hash0 + lport: the variants
 * that hash the local port outside jhash, R3/R4), hence one ehash slot and one stripe lock.
 * hash0 = sk->hash - lport is free at every choke point and keys the index table.
 *
 * Maintenance, at the two ehash choke points in ehash.c (no hook elsewhere): after an entry is
 * linked (socktab__portmap_ehash_add_locked) and after one is unlinked
 * (socktab__portmap_ehash_del_locked), both under the entry's ehash stripe lock. The unlink hook
 * clears bit p only when no other entry with the same 4-tuple remains in the (locked) chain, so
 * duplicates (other devices, passive children) keep the bit right. The sk -> TIME_WAIT swap and
 * the TIME_WAIT takeover replace an entry in place by one with the same 4-tuple
 * (socktab__ehash_replace_locked): nothing to do, unless the two are bound to different devices,
 * when the new one is added and then the old one unlinked.
 *
 * Who gets an index (lazily), and when. An index pays where walks are long: toward a
 * destination holding many of the ports a walk examines (R: the net's range, or the socket's
 * IP_LOCAL_PORT_RANGE, divided by the RETA's queues for an RSS connect(), which examines only
 * the ports of its queue; for a walk over fewer than PM_BUILD ports, which needs no index, the
 * range the index would cover). connect() builds D's index once D has about
 * max(PM_BUILD, R / PM_SHARE) entries (1,764 over the kernel's default 28,232 ports; PM_BUILD
 * over 512 ports or fewer), as far as the sketch below tells; below that a walk examines a port
 * or two per connect(), and an index would only add the lines it writes at each entry's add and
 * unlink (its bits, its count), which every thread that connects to D shares. The index always
 * covers the net's range (and the socket's).
 * D's entries are counted in a count-min sketch (two rows of PM_SKETCH counters, indexed by hash0
 * bits), and only a sample of them: an entry counts when its ehash hash, times the golden ratio,
 * falls in the lowest 1/S of the 32 bits, S the largest power of two that leaves PM_BUILD
 * sampled entries or more under a whole-range build count (sketch_rate(): 32 over the default
 * range, 1 below 1,024 ports); a count is then the smaller cell times S. So an unindexed
 * destination's adds and unlinks write its two cells once per S on average, not at every
 * connect() and close(). Whether an entry counts is decided when it is linked and kept in the
 * entry (SOCKTAB__PM_UNCOUNTED, also passed on when another entry replaces it in place), so its
 * unlink takes off exactly what its link put in, whatever the port range is by then. A counted
 * entry of a destination whose index is LIVE (and that is bound to no device) goes to the
 * index's @sdelta instead of the cells, so the threads that connect to one hot destination do
 * not share those two lines; when the index leaves LIVE, the cells get @sdelta, and D's part of
 * them is its counted entries again; a hook that saw the index LIVE and adds to @sdelta after
 * that hand-back is handed back too, after the grace period that frees the index. So the cells
 * hold exactly what they sampled (a cell that a hook racing with a change of state takes below
 * zero for a moment reads as 0). A change of the net's range that changes S leaves D's count
 * off by the ratio of the two rates until its entries are relinked: a narrower range builds its
 * index later (after about PM_BUILD new entries), a wider one may build one that has too few
 * ports, which is dropped at once and remembered (below). Only speed depends on it. Also left
 * out: an entry whose local port is outside the net's port
 * range, since no connect() walk examines its port.
 * A server's children (local port 80, say) each have a destination of their own, the client's
 * address and port, so their bumps would land on random cells, and two threads that accept
 * connections would take each other's cell lines at every child's add and unlink (bench crr
 * -T 2: two of the thirteen lines per transaction that the threads took from each other).
 * connect() builds D's index when the count reaches the build count and D has none: it links the
 * index (state BUILDING) so the hooks maintain it from then on, then probes each port of the
 * covered range under that port's stripe lock (the lock orders the probe against every hook on
 * that port, so the bit ends equal to the chain), then marks it LIVE. A sketch collision (a cold
 * destination sharing cells with hot ones) builds an index with few entries: it is dropped at
 * once and remembered in pm_memo, so that destination is not rebuilt until its count grows by
 * the build count again.
 * Freeing: when an unlink leaves fewer busy ports than half the build count (at least PM_FREE),
 * the index is unlinked and freed after a grace period. The index counts its busy ports (nports)
 * by the same sampling, at the rate that puts at least PM_FREE samples under that mark (32 over
 * the default range, 1 below 1,024 ports), so that its count line too is written once per so
 * many ports. Since every socket and TIME_WAIT entry leaves
 * ehash at the latest in socktab_net_free(), every index is freed by then (no teardown hook).
 *
 * Locks and memory order. pm_lock (a spin lock on an atomic, a leaf) serialises linking and
 * unlinking of indexes; readers find indexes under RCU (acquire loads of the chain, release store
 * publishes an index's constant key). Bits are written under the port's stripe lock but
 * different ports of one word sit under different stripes: atomic fetch_or/fetch_and. Summary
 * bits are recomputed from the word by whoever may flip them (an unlink that empties a port of a
 * full word, a search that finds a full word unmarked), re-checking the word until stable
 * (seq_cst), so at rest no bit says full of a word that is not; a search racing with writers
 * may read a stale summary and pick a later port, which is fine since connect() races in the
 * kernel too. state and nports use
 * seq_cst: the builder (store LIVE, load nports) and an unlinker (decrement nports, load state)
 * cannot both miss a drop. Lock order: socket -> bhash -> ehash stripe(s) -> pm_lock.
 *
 * Rules kept (connect.c uses the index only to skip candidates): a port found free in the index
 * still goes through every check of the walk (R55: bind()-owned bucket, RCU pre-check, locked
 * R56 check), so correctness never depends on the index, only speed; the position i of the
 * chosen port in its pass is computed exactly, so the perturbation update (R57) is the kernel's.
 * Departures: a TIME_WAIT holder is skipped by the indexed search (its bit is set) and taken over
 * (R61) only when no free port is usable, by the plain walk that runs before -EADDRNOTAVAIL; so
 * with TIME_WAIT entries toward D the port may differ from the kernel's (and an expired entry not
 * yet reaped counts as busy until then). Sockets bound to a device (SO_BINDTODEVICE) and nets
 * that hash the local port inside jhash (linux-6.1, lport_hash_inside) use the plain walk.
 * Bound-by-bind() ports are not in the index: each costs one bucket check when reached.
 *
 * RSS. An index may carry the per-queue summaries of its free ports (rss.c), which the two
 * bit writers keep up to date after each change; the bit changes are seq_cst so that a set
 * published while a hook runs is either seen by the hook or sees its bit when filled.
 * socktab__portmap_next() with a queue returns the first position whose port is free, not
 * reserved and on the queue: the one a filter in front of the plain index search would reach.
 */
#include <sched.h>
#include <stdlib.h>

#include "ehash.h"
#include "portmap.h"
#include "rss.h"

#define PM_WORDS (65536 / 64)
#define PM_SWORDS (PM_WORDS / 64)
#define PM_BUILD 32 /* build an index at this many ehash entries toward one destination, */
#define PM_SHARE 16 /* and at one in PM_SHARE of the ports the walk examines if that is more */
#define PM_FREE 16  /* free it when fewer ports than this (or half the build count) remain busy */
#define PM_MAX 1024 /* indexes per net: ~8.6 MiB at most */

#define EVEN 0x5555555555555555ull /* bit b <-> port 64w + b: even ports */
#define ODD 0xaaaaaaaaaaaaaaaaull

enum { PM_BUILDING = 0, PM_LIVE = 1, PM_DYING = 2 };

struct socktab__portmap {
	_Atomic(struct socktab__portmap *) next; /* (r,pm) index table chain */
	struct socktab_net *net;           /* (c) */
	uint32_t hash0;                    /* (c) ehash hash of D with local port 0 */
	uint16_t dport;                    /* (c) remote port, network order */
	uint8_t v4key;                     /* (c) */
	uint16_t cov_lo, cov_hi;           /* (c) ports probed at build: the index is exact there */
	uint32_t free_at;                  /* (c) dropped when fewer ports than this remain busy */
	uint32_t rate;                     /* (c) nports counts one busy port in this many */
	uint64_t addrpair;                 /* (c) IPv4 key */
	uint64_t v6_saddr[2], v6_daddr[2]; /* (c) IPv6 key */
	_Atomic int state;                 /* (a) PM_BUILDING -> PM_LIVE -> PM_DYING */
	_Atomic uint32_t nports;           /* (a) set bits of the ports sampled at @rate */
	_Atomic uint32_t sdelta;           /* (a) what the sketch would have gained while LIVE (two's
					    * complement): added to D's cells when the index goes */
	_Atomic(struct socktab__rssidx *) rss; /* (a) per-queue summaries of the free ports for
						* the current RSS state (rss.c), replaced whole */
	struct rcu_head rcu;
	/* (a) [parity] bit w: every port of that parity in bits[w] is busy */
	_Alignas(64) _Atomic uint64_t full[2][PM_SWORDS];
	_Atomic uint64_t bits[PM_WORDS];   /* (a, written under the port's ehash stripe lock) */
};

_Static_assert(sizeof(struct socktab__portmap) <= 8192 + 256 + 128,
	       "bytes per hot destination, as stated in the design comment");

/* Entries toward one destination at which connect() builds its index, for a walk over @ports
 * ports. */
static inline uint32_t pm_build_at(uint32_t ports)
{
	return ports / PM_SHARE > PM_BUILD ? ports / PM_SHARE : PM_BUILD;
}

/* The largest power of two at most @x, or 1 for 0. */
static inline uint32_t pow2_floor(uint32_t x)
{
	return x ? 1u << (31 - __builtin_clz(x)) : 1;
}

/* One entry in how many the sketch counts, for the net's port range @r (net->port_range): a
 * power of two, so that the count at which a walk over the whole range builds an index is
 * PM_BUILD or more entries counted. */
static inline uint32_t sketch_rate(uint32_t r)
{
	return pow2_floor(((r >> 16) - (r & 0xffff) + 1) / (PM_SHARE * PM_BUILD));
}

/* Is the entry whose ehash hash is @hash one of those counted at rate @s? The golden-ratio
 * product spreads consecutive ports (and every other port) evenly over the 32 bits. */
static inline bool sketch_sampled(uint32_t hash, uint32_t s)
{
	return (uint64_t)(uint32_t)(hash * 0x9e3779b1u) * s < (1ull << 32);
}

static inline bool pm_enabled(const struct socktab_net *net)
{
	return net->variant == SOCKTAB_VARIANT_SOCKTAB && !net->lport_inside;
}

static inline uint16_t sk_lport(const struct socktab_sock *sk)
{
	return socktab__sk_num(sk);
}

static inline _Atomic uint32_t *sketch_cell(struct socktab_net *net, int row, uint32_t hash0)
{
	return &net->pm_sketch[row][(row ? hash0 >> 12 : hash0) & (SOCKTAB__PM_SKETCH - 1)];
}

/* Does the sketch count the entry @sk: is its local port in the net's port range, and is it
 * one of those sampled at the range's rate? */
static inline bool sketch_counts(const struct socktab_net *net, const struct socktab_sock *sk)
{
	uint32_t r = RD(net->port_range);
	uint16_t port = sk_lport(sk);

	return port >= (r & 0xffff) && port <= (r >> 16) &&
	       sketch_sampled(RD(sk->hash), sketch_rate(r));
}

/* Set @sk's SOCKTAB__PM_UNCOUNTED to @on; the byte is written only where the bit changes (an
 * entry's object keeps it from its last life). Caller holds sk's ehash stripe lock. */
static void mark_uncounted(struct socktab_sock *sk, bool on)
{
	if (!(RD(sk->userlocks) & SOCKTAB__PM_UNCOUNTED) != !on)
		atomic_fetch_xor(&sk->userlocks, SOCKTAB__PM_UNCOUNTED);
}

/* Add @v (two's complement: -1 takes one off) to both of D's cells. */
static void sketch_add(struct socktab_net *net, uint32_t hash0, uint32_t v)
{
	atomic_fetch_add_explicit(sketch_cell(net, 0, hash0), v, memory_order_relaxed);
	atomic_fetch_add_explicit(sketch_cell(net, 1, hash0), v, memory_order_relaxed);
}

/* D's count: the smaller of its cells, a cell below zero (a hook that raced with an index's
 * change of state took one off that it had not put in) read as 0. */
static uint32_t sketch_get(struct socktab_net *net, uint32_t hash0)
{
	int32_t a = (int32_t)RD(*sketch_cell(net, 0, hash0));
	int32_t b = (int32_t)RD(*sketch_cell(net, 1, hash0));
	int32_t m = a < b ? a : b;

	return m > 0 ? (uint32_t)m : 0;
}

static void pm_lock(struct socktab_net *net)
{
	while (atomic_exchange_explicit(&net->pm_lock, 1, memory_order_acquire))
		sched_yield();
}

static void pm_unlock(struct socktab_net *net)
{
	atomic_store_explicit(&net->pm_lock, 0, memory_order_release);
}

static inline struct socktab__portmap *pm_load(_Atomic(struct socktab__portmap *) *p)
{
	return atomic_load_explicit(p, memory_order_acquire);
}

/* Does @pm index the destination of @sk (whose hash with local port 0 is @hash0)? */
static bool pm_match(const struct socktab__portmap *pm, const struct socktab_sock *sk,
		     uint32_t hash0)
{
	if (pm->net != socktab__sk_net(sk) || pm->hash0 != hash0 || pm->dport != socktab__sk_dport(sk) ||
	    pm->v4key != RD(sk->v4key))
		return false;
	if (pm->v4key)
		return pm->addrpair == RD(sk->addrpair);
	const struct socktab__v6key *k = socktab__sk_v6(sk); /* not v4key: an AF_INET6 socket */

	return pm->v6_saddr[0] == RD(k->saddr[0]) && pm->v6_saddr[1] == RD(k->saddr[1]) &&
	       pm->v6_daddr[0] == RD(k->daddr[0]) && pm->v6_daddr[1] == RD(k->daddr[1]);
}

/* Caller is inside an RCU read-side section. */
static struct socktab__portmap *pm_find_rcu(struct socktab_net *net, const struct socktab_sock *sk,
					    uint32_t hash0)
{
	struct socktab__portmap *pm = pm_load(&net->pm_table[hash0 % SOCKTAB__PM_BUCKETS]);

	SOCKTAB__ASSERT_RCU();
	for (; pm; pm = pm_load(&pm->next))
		if (pm_match(pm, sk, hash0))
			return pm;
	return NULL;
}

/* Same 4-tuple (no device): the rule of the bits. */
static bool same_tuple(const struct socktab_sock *a, const struct socktab_sock *b)
{
	if (socktab__sk_net(a) != socktab__sk_net(b) || RD(a->portpair) != RD(b->portpair) ||
	    RD(a->v4key) != RD(b->v4key))
		return false;
	if (RD(a->v4key))
		return RD(a->addrpair) == RD(b->addrpair);
	const struct socktab__v6key *ka = socktab__sk_v6(a), *kb = socktab__sk_v6(b);

	return RD(ka->saddr[0]) == RD(kb->saddr[0]) && RD(ka->saddr[1]) == RD(kb->saddr[1]) &&
	       RD(ka->daddr[0]) == RD(kb->daddr[0]) && RD(ka->daddr[1]) == RD(kb->daddr[1]);
}

/* Set summary bit @sbit of @f to @on, writing the line only if the bit differs. */
static void summary_put(_Atomic uint64_t *f, uint64_t sbit, bool on)
{
	if (!(atomic_load(f) & sbit) == !on)
		return;
	if (on)
		atomic_fetch_or(f, sbit);
	else
		atomic_fetch_and(f, ~sbit);
}

/* Bring word @w's summary bits in line with the word; repeat until a re-read agrees. A bit
 * already right is not written: a writer that skips one is as one that wrote it when it read
 * it, and the re-read covers the change of any writer after. */
static void summary_sync(struct socktab__portmap *pm, uint32_t w)
{
	uint64_t sbit = 1ull << (w & 63);

	for (;;) {
		uint64_t v = atomic_load(&pm->bits[w]);
		bool e = (v & EVEN) == EVEN, o = (v & ODD) == ODD;

		summary_put(&pm->full[0][w >> 6], sbit, e);
		summary_put(&pm->full[1][w >> 6], sbit, o);
		v = atomic_load(&pm->bits[w]);
		if (((v & EVEN) == EVEN) == e && ((v & ODD) == ODD) == o)
			return;
	}
}

/* Mark @port busy. Caller holds the port's ehash stripe lock for D. */
static void pm_set(struct socktab__portmap *pm, uint16_t port)
{
	uint32_t w = port >> 6;
	uint64_t bit = 1ull << (port & 63);
	uint64_t old = atomic_fetch_or(&pm->bits[w], bit);
	struct socktab__rssidx *ri;

	if (old & bit)
		return;
	if (sketch_sampled(pm->hash0 + port, pm->rate))
		atomic_fetch_add(&pm->nports, 1);
	/* A word that fills is left to the next search that crosses it (pm_search_full()). */
	/* seq_cst after the seq_cst bit change: either this sees a set being published or its
	 * filler sees the bit (rss.c). */
	ri = atomic_load(&pm->rss);
	if (ri)
		socktab__rssidx_sync(ri, pm->bits, port);
}

/* Busy ports of @pm, as far as sampled. */
static inline uint32_t pm_count(const struct socktab__portmap *pm)
{
	return atomic_load(&pm->nports) * pm->rate;
}

/* Mark @port free; true if the index should go now (fewer than free_at ports left busy, as far
 * as sampled). Caller holds the stripe lock. */
static bool pm_clear(struct socktab__portmap *pm, uint16_t port)
{
	uint32_t w = port >> 6;
	uint64_t bit = 1ull << (port & 63);
	uint64_t old = atomic_fetch_and(&pm->bits[w], ~bit);
	uint64_t par = (port & 1) ? ODD : EVEN;
	struct socktab__rssidx *ri;

	if (!(old & bit))
		return false;
	if ((old & par) == par)
		summary_sync(pm, w);
	ri = atomic_load(&pm->rss); /* as in pm_set() */
	if (ri)
		socktab__rssidx_sync(ri, pm->bits, port);
	if (!sketch_sampled(pm->hash0 + port, pm->rate))
		return false;
	return (atomic_fetch_sub(&pm->nports, 1) - 1) * pm->rate < pm->free_at;
}

static void pm_free_rcu(struct rcu_head *head)
{
	struct socktab__portmap *pm = caa_container_of(head, struct socktab__portmap, rcu);

	socktab__rcu_cb_enter(pm);
	/* What hooks that saw the index LIVE added after pm_drop() handed @sdelta back: every
	 * such hook has left its read-side section by now. The net outlives its indexes
	 * (socktab_net_free() waits for the callbacks). */
	sketch_add(pm->net, pm->hash0, atomic_exchange(&pm->sdelta, 0));
	/* The summaries go with their index: a grace period passed since both were unreachable. */
	socktab__rssidx_free(atomic_load_explicit(&pm->rss, memory_order_relaxed));
	free(pm);
}

/*
 * Unlink @pm (which the caller moved to PM_DYING) and free it after a grace period.
 * Context: any; takes pm_lock (a leaf), so callers may hold socket, bhash and ehash locks.
 */
static void pm_unlink_free(struct socktab_net *net, struct socktab__portmap *pm)
{
	_Atomic(struct socktab__portmap *) *pp = &net->pm_table[pm->hash0 % SOCKTAB__PM_BUCKETS];
	struct socktab__portmap *cur;

	pm_lock(net);
	while ((cur = atomic_load_explicit(pp, memory_order_relaxed)) != pm)
		pp = &cur->next;
	/* Readers standing on @pm keep walking through its next pointer, which stays valid. */
	atomic_store_explicit(pp, atomic_load_explicit(&pm->next, memory_order_relaxed),
			      memory_order_release);
	atomic_fetch_sub_explicit(&net->pm_live, 1, memory_order_relaxed);
	pm_unlock(net);
	socktab__call_rcu(pm, &pm->rcu, pm_free_rcu);
}

/* Drop @pm if it is LIVE and still hashed; the one caller that wins the state change frees it. */
static void pm_drop(struct socktab_net *net, struct socktab__portmap *pm)
{
	int live = PM_LIVE;

	if (atomic_compare_exchange_strong(&pm->state, &live, PM_DYING)) {
		/* The hooks count D in the sketch again: give it what D gained or lost while
		 * the index counted it (a loss mostly: an index is dropped once few ports remain). */
		sketch_add(net, pm->hash0, atomic_exchange(&pm->sdelta, 0));
		pm_unlink_free(net, pm);
	}
}

/*
 * Hook: @sk was just linked into ehash. Context: caller holds the ehash stripe lock of sk->hash;
 * takes the RCU read side; publishes nothing readers depend on for correctness.
 */
void socktab__portmap_ehash_add_locked(struct socktab_sock *sk)
{
	struct socktab_net *net = socktab__sk_net(sk);
	uint32_t hash0;
	struct socktab__portmap *pm = NULL;
	bool indexed = false, counted;

	SOCKTAB__ASSERT_LOCKED(socktab__ehash_lock(net->tab, RD(sk->hash)));
	if (!pm_enabled(net))
		return;
	hash0 = RD(sk->hash) - sk_lport(sk);
	counted = sketch_counts(net, sk);
	mark_uncounted(sk, !counted);
	/* A bound entry is not busy for the unbound sockets the index serves. */
	if (atomic_load_explicit(&net->pm_live, memory_order_relaxed) && !RD(sk->bound_dev_if)) {
		socktab__rcu_read_lock();
		pm = pm_find_rcu(net, sk, hash0);
		if (pm) {
			pm_set(pm, sk_lport(sk));
			indexed = atomic_load(&pm->state) == PM_LIVE;
			if (indexed && counted)
				atomic_fetch_add(&pm->sdelta, 1);
		}
		socktab__rcu_read_unlock();
	}
	if (counted && !indexed)
		sketch_add(net, hash0, 1);
}

void socktab__portmap_ehash_pass_locked(const struct socktab_sock *old, struct socktab_sock *new)
{
	mark_uncounted(new, RD(old->userlocks) & SOCKTAB__PM_UNCOUNTED);
}

/*
 * Hook: @sk was just unlinked from ehash table @t. Context: caller holds the ehash stripe lock of
 * sk->hash (the same lock covers every entry with sk's 4-tuple); takes the RCU read side and, when
 * the destination cools down, pm_lock. May hand an index to call_rcu.
 */
void socktab__portmap_ehash_del_locked(struct socktab__tables *t, struct socktab_sock *sk)
{
	struct socktab_net *net = socktab__sk_net(sk);
	uint32_t hash = RD(sk->hash), hash0;
	struct socktab__portmap *pm;
	bool indexed, counted;

	SOCKTAB__ASSERT_LOCKED(socktab__ehash_lock(t, RD(sk->hash)));
	if (!pm_enabled(net))
		return;
	hash0 = hash - sk_lport(sk);
	counted = !(RD(sk->userlocks) & SOCKTAB__PM_UNCOUNTED);
	if (!atomic_load_explicit(&net->pm_live, memory_order_relaxed)) {
		if (counted)
			sketch_add(net, hash0, (uint32_t)-1);
		return;
	}
	socktab__rcu_read_lock();
	pm = pm_find_rcu(net, sk, hash0);
	/* As the add hook decided: an unbound entry of a LIVE index's destination is its. */
	indexed = pm && !RD(sk->bound_dev_if) && atomic_load(&pm->state) == PM_LIVE;
	if (indexed && counted) /* before a drop below hands sdelta back */
		atomic_fetch_sub(&pm->sdelta, 1);
	if (pm) {
		/* Another unbound entry with the same 4-tuple keeps the port busy (it is in this
		 * chain). */
		uintptr_t p;

		socktab__chlist_for_each(p, &t->ehash[hash & t->ehash_mask].head, memory_order_relaxed) {
			struct socktab_sock *sk2 = (struct socktab_sock *)p;

			if (sk2 != sk && RD(sk2->hash) == hash && !RD(sk2->bound_dev_if) &&
			    same_tuple(sk2, sk))
				goto out;
		}
		if (pm_clear(pm, sk_lport(sk)))
			pm_drop(net, pm);
	}
out:
	socktab__rcu_read_unlock();
	if (!indexed && counted)
		sketch_add(net, hash0, (uint32_t)-1);
}

/* Probe @port of @pm's destination: set its bit if the chain holds D's 4-tuple on it. */
static void probe_port(struct socktab_net *net, struct socktab__portmap *pm, uint16_t port)
{
	struct socktab__tables *t = net->tab;
	uint32_t hash = pm->hash0 + port;
	uint32_t ports = (uint32_t)pm->dport | ((uint32_t)port << 16);
	pthread_mutex_t *l = socktab__ehash_lock(t, hash);

	socktab__lock(l);
	uintptr_t p;

	socktab__chlist_for_each(p, &t->ehash[hash & t->ehash_mask].head, memory_order_relaxed) {
		struct socktab_sock *sk2 = (struct socktab_sock *)p;

		if (RD(sk2->hash) == hash && RD(sk2->portpair) == ports &&
		    !RD(sk2->bound_dev_if) && pm_match(pm, sk2, hash - port)) {
			pm_set(pm, port);
			break;
		}
	}
	socktab__unlock(l);
}

/*
 * Build D's index covering ports [lo, hi]. Returns it LIVE, or NULL (allocation failure, table
 * full, another thread got there first, or too few entries). Context: RCU read side held by the
 * caller (the result is valid until it leaves it); no socktab lock held except sk's own.
 */
static struct socktab__portmap *pm_build(struct socktab_net *net, struct socktab_sock *sk,
					 uint32_t hash0, int lo, int hi, uint32_t count,
					 uint32_t build_at)
{
	struct socktab__portmap *pm;
	_Atomic(struct socktab__portmap *) *bucket = &net->pm_table[hash0 % SOCKTAB__PM_BUCKETS];
	int building = PM_BUILDING;

	if (posix_memalign((void **)&pm, 64, sizeof(*pm)))
		return NULL;
	memset(pm, 0, sizeof(*pm));
	pm->net = net;
	pm->hash0 = hash0;
	pm->dport = socktab__sk_dport(sk);
	pm->v4key = RD(sk->v4key);
	pm->addrpair = RD(sk->addrpair);
	struct in6_addr ls = socktab__sk_v6_saddr(sk), rd = socktab__sk_v6_daddr(sk);

	memcpy(pm->v6_saddr, &ls, 16);
	memcpy(pm->v6_daddr, &rd, 16);
	pm->cov_lo = (uint16_t)lo;
	pm->cov_hi = (uint16_t)hi;
	pm->free_at = build_at / 2 > PM_FREE ? build_at / 2 : PM_FREE;
	pm->rate = pow2_floor(pm->free_at / PM_FREE);
	atomic_init(&pm->state, PM_BUILDING);

	pm_lock(net);
	if (pm_find_rcu(net, sk, hash0) ||
	    atomic_load_explicit(&net->pm_live, memory_order_relaxed) >= PM_MAX) {
		pm_unlock(net);
		free(pm);
		return NULL;
	}
	atomic_store_explicit(&pm->next, atomic_load_explicit(bucket, memory_order_relaxed),
			      memory_order_relaxed);
	/* Publishes the constant key: pairs with the acquire loads of pm_find_rcu(). */
	atomic_store_explicit(bucket, pm, memory_order_release);
	atomic_fetch_add_explicit(&net->pm_live, 1, memory_order_relaxed);
	pm_unlock(net);

	/* From here the hooks keep every port right that changes; probe the rest under the same
	 * stripe locks, so each probe is ordered against every hook on its port. */
	for (int port = lo; port <= hi; port++)
		probe_port(net, pm, (uint16_t)port);

	atomic_compare_exchange_strong(&pm->state, &building, PM_LIVE);
	if (pm_count(pm) < pm->free_at) {
		/* A sketch collision, or D cooled down while we built: remember it, so as not
		 * to rebuild before its count grows by the build count again. */
		atomic_store_explicit(&net->pm_memo[hash0 % SOCKTAB__PM_BUCKETS],
				      (uint64_t)hash0 << 32 | count, memory_order_relaxed);
		pm_drop(net, pm);
		return NULL;
	}
	return pm;
}

/*
 * The index connect() may search for @sk's destination and port range [low, high], building it
 * when the destination is hot for a walk that examines one port of the range in @queues (RSS:
 * only the ports whose reply lands on the wanted queue); NULL means "walk without an index".
 * Context: caller is inside an RCU read-side section (the index stays valid until it leaves),
 * holds sk's lock and no other.
 */
struct socktab__portmap *socktab__portmap_get_rcu(struct socktab_net *net, struct socktab_sock *sk,
						 uint32_t hash0, int low, int high,
						 uint32_t queues)
{
	struct socktab__portmap *pm;
	uint32_t count, r, build_at, walk;
	uint64_t memo;
	int lo, hi;

	SOCKTAB__ASSERT_RCU();
	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (!pm_enabled(net) || RD(sk->bound_dev_if))
		return NULL;
	/* An index first: a hot destination's cells are not read, nor written by its sockets. */
	pm = atomic_load_explicit(&net->pm_live, memory_order_relaxed) ? pm_find_rcu(net, sk, hash0)
									: NULL;
	if (pm) {
		if (atomic_load(&pm->state) != PM_LIVE)
			return NULL; /* being built by another connect(): walk this time */
		if (low >= pm->cov_lo && high <= pm->cov_hi)
			return pm;
		pm_drop(net, pm); /* the range grew past what was probed: rebuild below */
	}
	/* The index covers the net's range and the socket's; its build count is the walk's own
	 * (a socket's IP_LOCAL_PORT_RANGE, a queue's share of the range), or the covered range's
	 * for a walk too short to need an index (a range of one port, say). */
	r = RD(net->port_range);
	lo = (int)(r & 0xffff);
	hi = (int)(r >> 16);
	if (low < lo)
		lo = low;
	if (high > hi)
		hi = high;
	count = sketch_get(net, hash0) * sketch_rate(r); /* D's entries, as far as sampled */
	if (count < PM_BUILD) /* below every build count (pm_build_at()): most connect()s */
		return NULL;
	walk = (uint32_t)(high - low + 1) / queues;
	build_at = pm_build_at(walk >= PM_BUILD ? walk : (uint32_t)(hi - lo + 1));
	if (count < build_at)
		return NULL;
	memo = atomic_load_explicit(&net->pm_memo[hash0 % SOCKTAB__PM_BUCKETS],
				    memory_order_relaxed);
	if ((uint32_t)(memo >> 32) == hash0 && count < (uint32_t)memo + build_at)
		return NULL;
	return pm_build(net, sk, hash0, lo, hi, count, build_at);
}

/* A search found no free port in word @w: mark the word full in the summaries where it is.
 * pm_set() leaves that to the searches, so that a port taken and given back again and again
 * (connect() and close() at a steady count) writes no summary line. */
static void pm_search_full(struct socktab__portmap *pm, uint32_t w)
{
	uint64_t v = RD(pm->bits[w]), sbit = 1ull << (w & 63);

	if (((v & EVEN) == EVEN && !(RD(pm->full[0][w >> 6]) & sbit)) ||
	    ((v & ODD) == ODD && !(RD(pm->full[1][w >> 6]) & sbit)))
		summary_sync(pm, w);
}

/* Next non-full word (for parity @par, -1 = both) in [w, wend], or wend + 1. */
static uint32_t next_open_word(const struct socktab__portmap *pm, uint32_t w, uint32_t wend,
			       int par)
{
	while (w <= wend) {
		uint32_t s = w >> 6;
		uint64_t f = par < 0 ? RD(pm->full[0][s]) & RD(pm->full[1][s])
				     : RD(pm->full[par][s]);
		uint64_t open = ~f & (~0ull << (w & 63));

		if (open)
			return s * 64 + (uint32_t)__builtin_ctzll(open);
		w = (s + 1) * 64;
	}
	return wend + 1;
}

/*
 * First port in [from, to) of parity @par (-1: any) neither busy nor reserved, or -1. With @q,
 * also on @q's queue: words come from the queue's summaries, and each free port of a word is
 * tested with the filter (*rejected counts those on other queues).
 */
static int find_free(struct socktab__portmap *pm, struct socktab_net *net,
		     const struct socktab__portmap_rss *q, uint32_t from, uint32_t to, int par,
		     uint64_t *rejected)
{
	uint64_t pmask = par < 0 ? ~0ull : par ? ODD : EVEN;
	uint32_t w, wend;

	if (from >= to)
		return -1;
	w = from >> 6;
	wend = (to - 1) >> 6;
	if (q)
		w = socktab__rssidx_next_word(q->ri, q->f->slot, w, wend, par);
	while (w <= wend) {
		uint64_t m = pmask;

		if (w == from >> 6)
			m &= ~0ull << (from & 63);
		if (w == wend && (to & 63))
			m &= (1ull << (to & 63)) - 1;
		m &= ~(RD(pm->bits[w]) | RD(net->reserved[w]));
		if (!q) {
			if (m)
				return (int)(w * 64 + (uint32_t)__builtin_ctzll(m));
			pm_search_full(pm, w);
			w = next_open_word(pm, w + 1, wend, par);
			continue;
		}
		for (; m; m &= m - 1) {
			uint32_t port = w * 64 + (uint32_t)__builtin_ctzll(m);

			if (socktab__rss_port_ok(q->f, (uint16_t)port))
				return (int)port;
			(*rejected)++;
		}
		w = socktab__rssidx_next_word(q->ri, q->f->slot, w + 1, wend, par);
	}
	return -1;
}

/*
 * The walk of one pass (connect.c): positions i = 0, step, ... < @remaining visit port
 * base + i, minus @remaining once that reaches @high (R55). Returns the first position >= @i
 * whose port is free in the index and not reserved (with @q: and on its queue), or @remaining
 * when there is none. Context: RCU read side held (pm, q valid); no lock needed: the answer is a
 * hint that connect() checks.
 */
uint32_t socktab__portmap_next(struct socktab__portmap *pm, struct socktab_net *net,
			       const struct socktab__portmap_rss *q, uint32_t base, uint32_t high,
			       uint32_t remaining, uint32_t step, uint32_t i, uint64_t *rejected)
{
	int par = step == 2 ? (int)(base & 1) : -1;
	uint32_t end_a = base + remaining < high ? base + remaining : high;
	int p;

	if (base + i < end_a) {
		p = find_free(pm, net, q, base + i, end_a, par, rejected);
		if (p >= 0)
			return (uint32_t)p - base;
		if (end_a != high)
			return remaining;
		/* First position that wraps: the smallest multiple of step >= high - base. */
		i = (high - base + step - 1) / step * step;
	}
	if (i >= remaining)
		return remaining;
	p = find_free(pm, net, q, base + i - remaining, base, par, rejected);
	return p >= 0 ? (uint32_t)p - base + remaining : remaining;
}

/*
 * Point @q at @pm's per-queue summaries for filter @f, building them (one slot computation per
 * free port of the index's range, once per destination and RSS state) when @pm has none or has
 * them for an RSS state that was replaced. False: search @pm without them, testing each free
 * port with @f (the summaries are being built by another connect(), the queue is in no RETA
 * entry, the RETA has too many queues, or no memory). Context: caller is inside an RCU
 * read-side section (@q stays valid until it leaves), holds sk's lock and no other.
 */
bool socktab__portmap_rss_get_rcu(struct socktab_net *net, struct socktab__portmap *pm,
				  const struct socktab__rss_filter *f, struct socktab__portmap_rss *q)
{
	struct socktab__rssidx *ri, *nri;

	SOCKTAB__ASSERT_RCU();
	if (!f->rss || f->slot < 0)
		return false;
	ri = atomic_load(&pm->rss);
	if (!ri || !socktab__rssidx_matches(ri, f)) {
		nri = socktab__rssidx_new(net, f);
		if (!nri)
			return false;
		/* Published before it is filled (seq_cst, pairs with pm_set()/pm_clear()): from here
		 * the hooks keep every word right that changes. */
		if (!atomic_compare_exchange_strong(&pm->rss, &ri, nri)) {
			socktab__rssidx_free(nri);
			return false;
		}
		if (ri)
			socktab__rssidx_retire(ri);
		socktab__rssidx_fill(nri, pm->bits, pm->cov_lo, pm->cov_hi);
		ri = nri;
	}
	if (!socktab__rssidx_live(ri))
		return false;
	q->f = f;
	q->ri = ri;
	return true;
}

/*
 * Indexes of @net and the bytes they hold. Context: any; a snapshot (tests, diagnostics).
 */
void socktab__portmap_stats(struct socktab_net *net, uint32_t *nindex, uint64_t *bytes)
{
	uint32_t n = atomic_load_explicit(&net->pm_live, memory_order_relaxed);

	*nindex = n;
	*bytes = (uint64_t)n * sizeof(struct socktab__portmap);
}

/*
 * Check the per-queue summaries of @net's indexes against their busy bits: the number of live
 * summary sets into *nsets, the number of bits that disagree as the result. Context: registered
 * thread, no connect() or close() running in @net (tests, at rest); takes the RCU read side.
 */
uint32_t socktab__portmap_rss_check(struct socktab_net *net, uint32_t *nsets)
{
	uint32_t bad = 0;

	*nsets = 0;
	socktab__rcu_read_lock();
	for (int b = 0; b < SOCKTAB__PM_BUCKETS; b++)
		for (struct socktab__portmap *pm = pm_load(&net->pm_table[b]); pm;
		     pm = pm_load(&pm->next)) {
			struct socktab__rssidx *ri = atomic_load(&pm->rss);

			if (!ri || !socktab__rssidx_live(ri))
				continue;
			(*nsets)++;
			bad += socktab__rssidx_check(ri, pm->bits, pm->cov_lo, pm->cov_hi);
		}
	socktab__rcu_read_unlock();
	return bad;
}

/*
 * Check the "full" summary bits of @net's indexes against their words: the number of bits that
 * say full of a word with a port of that parity free as the result, the number of bits set into
 * *marked. Context: registered thread, no connect() or close() running in @net (tests, at rest);
 * takes the RCU read side.
 */
uint32_t socktab__portmap_summary_check(struct socktab_net *net, uint32_t *marked)
{
	uint32_t bad = 0;

	*marked = 0;
	socktab__rcu_read_lock();
	for (int b = 0; b < SOCKTAB__PM_BUCKETS; b++)
		for (struct socktab__portmap *pm = pm_load(&net->pm_table[b]); pm;
		     pm = pm_load(&pm->next))
			for (uint32_t w = 0; w < PM_WORDS; w++) {
				uint64_t v = RD(pm->bits[w]), sbit = 1ull << (w & 63);

				for (int par = 0; par < 2; par++) {
					uint64_t m = par ? ODD : EVEN;

					if (!(RD(pm->full[par][w >> 6]) & sbit))
						continue;
					(*marked)++;
					bad += (v & m) != m;
				}
			}
	socktab__rcu_read_unlock();
	return bad;
}
