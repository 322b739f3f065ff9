/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * connect(): local address and port choice for TCP (R51-R60, R64, R66).
 *
 * The port walk is the kernel's __inet_hash_connect(), RFC 6056 algorithm 4 ("double hash"):
 * a SipHash of (saddr, daddr, dport, 10-s time slot) under the net's key picks a slot of the
 * perturbation table; start = (table[slot] + hash >> 32) mod range, even offset first (same parity
 * as the range's low end) with step 2, then the other parity; step 1 and one pass when the socket
 * has IP_LOCAL_PORT_RANGE. Per candidate: skip reserved ports; a port whose bind bucket was made
 * by bind() is skipped; otherwise the 4-tuple must be unique in ehash — checked first without
 * locks under RCU (the pre-check Linux 6.15 added, unless the variant turns it off), then under the
 * bhash and ehash locks, where a TIME_WAIT entry may be taken over (R61). On success the table slot
 * advances by max(i, random 0..7 * step) + step so the next connect to the same destination starts
 * just after.
 * The variant LINUX_6_1 hashes the local port inside the ehash hash (one full hash per candidate)
 * and has no RCU pre-check; LINUX and SOCKTAB compute the hash once and add the port (R3).
 * RFC 6056 departure shared with Linux: the time slot re-keys the offset every 10 s.
 *
 * SOCKTAB (no cliff under port pressure): the same offset, order, per-candidate checks and
 * perturbation update, but toward a destination with a few dozen connections the walk jumps from
 * one candidate to the next through that destination's index of busy ports (portmap.c), so the cost
 * no longer grows with occupancy. The position i of the chosen port is still the kernel's, so
 * without TIME_WAIT entries the chosen port is the kernel's. TIME_WAIT holders are busy in the
 * index: they are taken over (R61) only by the plain walk that runs when no free port was
 * usable, just before -EADDRNOTAVAIL. ports_tried counts the candidates actually examined.
 *
 * Port shares (opt-in, per thread: socktab_thread_set_port_share): each parity pass examines
 * the calling thread's share of the ports first, in the same order, then the other shares' ports,
 * and the share is mixed into the perturbation slot's index; the same candidates are examined,
 * so the search fails exactly when it would without a share, but which usable port it takes may
 * differ from the kernel's.
 *
 * RSS (opt-in, rss.c): only candidates whose reply lands on the socket's queue are examined, in
 * the same order. Through an index the search takes them from the index's per-queue summaries;
 * otherwise (plain walk, last resort, no summaries yet) each candidate is filtered. Either way
 * the free candidates of other queues that were tested count in rss_rejected.
 */
#include <stdlib.h>

#include "hash.h"
#include "bind.h"
#include "ehash.h"
#include "portmap.h"
#include "rss.h"
#include "timewait.h"

/* R10: the hash input's time part changes every 10 seconds of the net's clock. */
#define PORT_OFFSET_PERIOD_NS (10ull * 1000 * 1000 * 1000)

/* R10: secure_ipv4_port_ephemeral / secure_ipv6_port_ephemeral. */
static uint64_t port_offset(struct socktab_net *net, const struct socktab_sock *sk)
{
	uint32_t slot = (uint32_t)(socktab__now(net) / PORT_OFFSET_PERIOD_NS);

	if (RD(sk->v4key)) {
		uint32_t w[4] = { socktab__sk_rcv_saddr(sk), socktab__sk_daddr(sk),
				  socktab__sk_dport(sk), slot };

		return socktab__siphash(w, sizeof(w), net->port_key);
	}
	unsigned char rec[38];
	struct in6_addr l = socktab__sk_v6_saddr(sk), r = socktab__sk_v6_daddr(sk);
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

/* R53: the socket already owns a port; one locked uniqueness check. */
static int connect_bound_port(struct socktab_net *net, struct socktab_sock *sk, uint32_t hash0)
{
	uint16_t port = socktab__sk_num(sk);
	struct socktab__bhead *head = socktab__bhash_head(net, port);
	struct socktab_sock *tw;
	int r;

	socktab__lock(socktab__bhead_lock(net->tab, head));
	r = socktab__check_established_locked(net, sk, port, cand_hash(net, sk, hash0, port), true,
					      &tw);
	if (tw)
		socktab__tw_takeover_locked(net, tw);
	socktab__unlock(socktab__bhead_lock(net->tab, head));
	if (tw)
		socktab__tw_deschedule_put(net, tw);
	return r == SOCKTAB__UNIQUE ? 0 : -EADDRNOTAVAIL;
}

/* A port secured by try_port(): its bhash lock is held. */
struct choice {
	pthread_mutex_t *lock;   /* the port's bhash lock, held */
	struct socktab__tb *tb;
	struct socktab__tb2 *tb2; /* sk's address bucket on the port (NULL: none), under lock */
	struct socktab_sock *tw; /* TIME_WAIT entry taken over (R61), with a reference */
	bool inserted;           /* sk is already in ehash (the R56 check inserted it) */
	bool claimed;            /* the port feed took sk's key on the port (bind.h) */
	int l3mdev;              /* the bind-bucket domain of sk (R98), set before the walk */
	uint16_t port;
	uint32_t i;              /* position of the port in its pass (R57) */
};

/*
 * One candidate (R55 steps 2-3). Returns 1 with the port secured in @c (its bhash lock held), 0
 * when the port is not usable. A new bucket comes from @pa, so nothing here can fail. Caller
 * holds sk's lock and no other, inside the search's RCU read-side section.
 */
static int try_port(struct socktab_net *net, struct socktab_sock *sk, uint32_t hash0,
		    uint16_t port, struct socktab__bind_prealloc *pa, struct choice *c)
{
	struct socktab__bhead *head = socktab__bhash_head(net, port);
	pthread_mutex_t *lock = socktab__bhead_lock(net->tab, head);
	uint32_t h = cand_hash(net, sk, hash0, port);
	struct socktab__tb *tb;

	SOCKTAB__ASSERT_RCU();
	/* Lockless phase (R55 step 2). */
	tb = socktab__tb_find_rcu(head, net, port, c->l3mdev);
	if (tb && (RD(tb->fastreuse) >= 0 || RD(tb->fastreuseport) >= 0))
		return 0;
	if (tb && net->rcu_precheck &&
	    socktab__check_established_rcu(net, sk, port, h) == SOCKTAB__NOT_UNIQUE)
		return 0;

	/* Locked phase (R55 step 3). */
	socktab__lock(lock);
	tb = socktab__tb_find_locked(head, net, port, c->l3mdev);
	c->tw = NULL;
	if (tb && (RD(tb->fastreuse) >= 0 || RD(tb->fastreuseport) >= 0)) {
		socktab__unlock(lock);
		return 0;
	}
	/* A port feed may refuse the port (one the host's kernel holds): busy, then. The claim
	 * needs sk's address bucket, which the commit below reuses rather than looks up again;
	 * without a feed it is looked up only for the port chosen. */
	bool feed = socktab__feed_on(net);
	int claim = 0;

	c->tb2 = NULL;
	if (feed) {
		c->tb2 = socktab__tb2_find_locked(net, tb, sk);
		claim = socktab__feed_claim_locked(net, c->tb2, sk, port, c->l3mdev);
	}
	if (claim < 0) {
		socktab__unlock(lock);
		return 0;
	}
	c->claimed = claim > 0;
	if (tb) {
		if (socktab__check_established_locked(net, sk, port, h, false, &c->tw) !=
		    SOCKTAB__UNIQUE) {
			if (c->claimed)
				socktab__feed_unclaim_locked(net, sk, port, c->l3mdev);
			socktab__unlock(lock);
			return 0;
		}
		c->inserted = true;
		if (!feed)
			c->tb2 = socktab__tb2_find_locked(net, tb, sk);
	} else {
		/* No bucket: nobody in this net holds the port, no ehash check needed. */
		tb = socktab__tb_create_locked(head, net, port, c->l3mdev, pa);
		c->inserted = false;
	}
	c->lock = lock;
	c->tb = tb;
	c->port = port;
	return 1;
}

/* The search parameters of R54. */
struct walk {
	uint32_t low, high;  /* high is one past the last port */
	uint32_t remaining, step, offset;
	bool local_ports;
	uint32_t share_bits, share; /* the calling thread's share (0 bits: no shares) */
};

/*
 * Port shares. A port's share is its number's bits 9 down to 10 - bits: blocks of 1024 >> bits
 * consecutive ports, dealt to the shares in turn. The bind tables map a port to a slot by adding
 * the net's mix (bhash) or by an exclusive or with its address's hash (bhash2), and a slot to
 * one of their SOCKTAB__BIND_LOCKS lock stripes by its number modulo 1024 (when the tables have
 * at least 1024 slots, as by default): so the ports of one share, for a given local address,
 * take bind slots and stripes that no other share's ports take, and connect() and close() on
 * threads of different shares do not take each other's bind lock lines. (ehash slots and
 * stripes follow the 4-tuple's hash, not the share.)
 */
#define SHARE_SPAN_BITS 10 /* the shares' blocks cover one round of the bind lock stripes */
_Static_assert(SOCKTAB__BIND_LOCKS == 1u << SHARE_SPAN_BITS, "shares deal out the stripes");
#define SHARE_BITS_MAX 6

/* The calling thread's share: log2 of the shares (0: none) and its own. */
static _Thread_local uint8_t share_bits __attribute__((tls_model("initial-exec")));
static _Thread_local uint8_t share_own __attribute__((tls_model("initial-exec")));

int socktab_thread_set_port_share(unsigned int share, unsigned int shares)
{
	unsigned int bits = 0;

	while (bits <= SHARE_BITS_MAX && (1u << bits) < shares)
		bits++;
	if (bits > SHARE_BITS_MAX || (1u << bits) != shares || share >= shares)
		return -EINVAL;
	share_bits = (uint8_t)bits;
	share_own = (uint8_t)share;
	return 0;
}

/*
 * How far @port is from the next port the sub-pass examines: the next of the thread's own share
 * (@own) or, once those were examined, the next of any other share, or the position where the
 * pass wraps from @high to the low end if that comes first; 0 when @port is one to examine. The
 * distance keeps the pass's parity when it steps by 2.
 */
static uint32_t share_skip(const struct walk *w, uint32_t port, bool own)
{
	uint32_t block = 1u << (SHARE_SPAN_BITS - w->share_bits), mask = (1u << w->share_bits) - 1;
	uint32_t cur = (port >> (SHARE_SPAN_BITS - w->share_bits)) & mask, d;

	if ((cur == w->share) == own)
		return 0;
	/* Blocks to the next wanted one: that many shares on for our own, else the next. */
	d = (own ? ((w->share - cur) & mask) : 1) * block - (port & (block - 1));
	/* No further than where the pass wraps from @high to the low end: other ports follow. */
	if (port + d > w->high)
		d = w->high - port;
	return w->step == 2 ? d + (d & 1) : d;
}

/* What one search counts (the net's counters get the sums). */
struct walk_count {
	uint64_t tried;     /* candidates examined (try_port) */
	uint64_t rejected;  /* free candidates the RSS filter passed over */
};

/*
 * The kernel's walk (R55, R58): even positions from the offset, then the other parity, each
 * pass wrapping once at @high. With @pm, positions whose port the index shows busy (or reserved)
 * are skipped without being examined; i still counts every position, so R57 sees the kernel's i.
 * With @rss, only ports on its queue are examined: with @pmq the index's per-queue summaries
 * give them, otherwise each candidate is filtered. With port shares each pass goes over the
 * positions twice, examining the thread's share's ports, then the others' (i is still the
 * position from the offset). Returns 1 (port secured in @c) or 0 (none).
 */
static int walk(struct socktab_net *net, struct socktab_sock *sk, uint32_t hash0,
		const struct walk *w, struct socktab__portmap *pm,
		const struct socktab__portmap_rss *pmq, const struct socktab__rss_filter *rss,
		struct socktab__bind_prealloc *pa, struct choice *c, struct walk_count *n)
{
	uint32_t offset = w->offset;

	for (;;) {
		uint32_t base = w->low + offset;

		for (int sub = w->share_bits ? 0 : 1; sub < 2; sub++) {
			/* The index's search passes over other queues' ports in both sub-passes:
			 * the first one's count stands only if the search ends there. */
			uint64_t rej0 = 0, *rej = sub == 0 ? &rej0 : &n->rejected;

			for (uint32_t i = 0; i < w->remaining; i += w->step) {
				uint32_t port, skip;
				int r;

				if (pm) {
					i = socktab__portmap_next(pm, net, pmq, base, w->high,
								  w->remaining, w->step, i, rej);
					if (i >= w->remaining)
						break;
				}
				port = base + i;
				if (port >= w->high)
					port -= w->remaining;
				if (w->share_bits && (skip = share_skip(w, port, sub == 0))) {
					i += skip - w->step;
					continue;
				}
				if (!pm && socktab__port_reserved(net, (uint16_t)port))
					continue;
				/* RSS (opt-in): only ports whose reply tuple lands on the wanted
				 * queue (with @pmq, portmap_next() tested the port already). */
				if (rss && !pmq && !socktab__rss_port_ok(rss, (uint16_t)port)) {
					n->rejected++;
					continue;
				}
				n->tried++;
				r = try_port(net, sk, hash0, (uint16_t)port, pa, c);
				if (r) {
					c->i = i;
					n->rejected += rej0;
					return r;
				}
			}
		}
		if (w->local_ports)
			return 0;
		offset++;
		if (!((offset & 1) && w->remaining > 1))
			return 0;
	}
}

int socktab__hash_connect(struct socktab_net *net, struct socktab_sock *sk)
{
	struct socktab__tables *t = net->tab;
	uint32_t hash0 = net->lport_inside ? 0 : socktab__sk_ehashfn(net, sk, 0);
	struct socktab__tb2 *tb2;
	struct choice c;
	struct walk w;
	struct socktab__rss_filter rssf, *rssp;
	struct socktab__bind_prealloc pa;
	struct walk_count n = { 0, 0 };
	uint64_t off64;
	uint32_t index;
	int low, high, r = 0;
	bool created;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (socktab__sk_num(sk))
		return connect_bound_port(net, sk, hash0);

	/* Choose, then commit (FreeBSD's in_pcb split): the buckets a new port may need are
	 * allocated before any lock, so once a port is secured nothing can fail and nothing has
	 * to be undone. */
	if (socktab__bind_prealloc(&pa))
		return -ENOMEM;
	c.l3mdev = socktab__sk_bound_l3mdev(sk);
	off64 = port_offset(net, sk);
	socktab__port_range(net, sk, &low, &high, &w.local_ports);
	w.step = w.local_ports ? 1 : 2;
	w.low = (uint32_t)low;
	w.high = (uint32_t)high + 1;
	w.remaining = w.high - w.low;
	if (w.step == 2 && w.remaining > 1)
		w.remaining &= ~1u;
	w.share_bits = share_bits;
	w.share = share_own;
	/* The share is mixed into the perturbation slot's index: toward one destination, each
	 * share advances a slot of its own, a line away from the other shares' (sixteen slots a
	 * line), so threads of different shares do not write one line. */
	index = ((uint32_t)off64 ^ (w.share << 4)) & (SOCKTAB__PERTURB_SIZE - 1);
	w.offset = (RD(net->perturb[index]) + (uint32_t)(off64 >> 32)) % w.remaining;
	if (!w.local_ports)
		w.offset &= ~1u;

	/* One read-side section for the whole search: the RSS filter reads net->rss under it
	 * (rss.c), the index is read under it, and each candidate's lockless phase runs in it. */
	socktab__rcu_read_lock();
	rssp = socktab__rss_filter_init_rcu(net, sk, &rssf) ? &rssf : NULL;
	/* A queue that no RETA entry names (or no RSS state): no port can pass the filter. */
	if (rssp && rssp->slot < 0)
		r = -EADDRNOTAVAIL;

	/* socktab variant: free ports first, found through the destination's index (portmap.c). */
	if (r == 0 && net->variant == SOCKTAB_VARIANT_SOCKTAB) {
		struct socktab__portmap *pm = socktab__portmap_get_rcu(
			net, sk, hash0, low, high, rssp ? rssp->queues : 1);

		if (pm) {
			/* An RSS connect() searches the index through its per-queue summaries
			 * (rss.c); without them (or in the tests' reference) each free port
			 * found is filtered, which picks the same port. */
			struct socktab__portmap_rss q, *qp = NULL;

			if (rssp && !atomic_load_explicit(&net->rss_walk_only, memory_order_relaxed) &&
			    socktab__portmap_rss_get_rcu(net, pm, rssp, &q))
				qp = &q;
			r = walk(net, sk, hash0, &w, pm, qp, rssp, &pa, &c, &n);
			/* Nothing free and no TIME_WAIT entry in the net: the indexed search saw
			 * every usable port, so fail now rather than walk the whole range (the
			 * kernel's walk examines each busy port only to reach the same answer). */
			if (r == 0 &&
			    !atomic_load_explicit(&net->n_time_wait, memory_order_relaxed))
				r = -EADDRNOTAVAIL;
		}
	}
	/* Every other case, and the last resort of the indexed search: TIME_WAIT holders (R61),
	 * which the index shows busy, then -EADDRNOTAVAIL (R58). */
	if (r == 0)
		r = walk(net, sk, hash0, &w, NULL, NULL, rssp, &pa, &c, &n);
	socktab__rcu_read_unlock();
	SOCKTAB__STAT_ADD(net, ports_tried, n.tried);
	if (n.rejected)
		atomic_fetch_add_explicit(&net->n_rss_rejected, n.rejected, memory_order_relaxed);
	if (r <= 0) {
		socktab__bind_prealloc_free(&pa);
		return r < 0 ? r : -EADDRNOTAVAIL;
	}

	/* ok: (R57) */
	tb2 = socktab__tb2_found_or_create_locked(net, c.tb, c.tb2, sk, &pa, &created, c.claimed);
	socktab__bind_prealloc_free(&pa); /* what the chosen port did not need */
	{
		/* R57: the next search starts past this one's position, plus a little randomness
		 * when the position was low (the most on an uncontended table). */
		uint32_t jitter = socktab__random_below(8) * w.step;
		uint32_t advance = (c.i > jitter ? c.i : jitter) + w.step;

		atomic_fetch_add_explicit(&net->perturb[index], advance, memory_order_relaxed);
	}
	socktab__bind_hash_locked(sk, tb2, c.port);
	sk->userlocks |= SOCKTAB__CONNECT_BIND;
	if (!c.inserted) {
		uint32_t h = cand_hash(net, sk, hash0, c.port);
		pthread_mutex_t *l = socktab__ehash_lock(t, h);

		WR(sk->hash, h);
		socktab__lock(l);
		socktab__ehash_insert_locked(t, sk);
		socktab__unlock(l);
	}
	if (c.tw)
		socktab__tw_takeover_locked(net, c.tw);
	socktab__unlock(c.lock);
	if (c.tw)
		socktab__tw_deschedule_put(net, c.tw);
	return 0;
}
