/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * RSS-aware connect() port choice, opt-in, and the per-queue summaries that keep it free of the
 * cliff.
 *
 * A NIC with receive-side scaling hashes each incoming packet's 4-tuple with the Toeplitz hash
 * under a secret key and steers it to the queue RETA[hash & (reta_len - 1)]. A per-core stack
 * wants the replies to its own connections on its own queue, so it asks connect() for a local
 * port whose reply tuple (source = the peer, destination = us) lands there.
 * Toeplitz is linear over GF(2): hash(fixed part ^ port part) = hash(fixed) ^ hash(port part).
 * socktab_net_set_rss() precomputes the contribution of every byte value at each of the 36
 * input positions (36 x 256 words = 36 KiB: the whole IPv6 input, so that the fixed part and
 * socktab_net_rss_queue()'s tuples hash byte by byte too); connect() hashes the fixed part once
 * and tests each candidate port with two loads (its two bytes' tables for its family) and two
 * XORs.
 * The filter sits in front of the kernel's walk, so every other rule (range, parity, reserved,
 * bind()-owned, 4-tuple uniqueness, TIME_WAIT) is untouched; -EADDRNOTAVAIL means no usable port
 * maps to the queue. Departure: the kernel has no such option.
 *
 * The cliff, and the summaries. Toward a hot destination D connect() jumps from free port to free
 * port through D's busy-port index (portmap.c). With a queue asked for, most free ports belong
 * to other queues: once the wanted queue's ports of the first parity are taken, a filter in
 * front of that index tests every free port of the range before it reaches the other parity
 * (Q queues: about (1 - 1/Q) of the free ports, 10^4 tests at 4 queues). So each portmap may
 * carry a struct socktab__rssidx: for every queue of the RETA (numbered densely, "slots") and
 * both parities, one bit per 64-port word of the index, set iff that word holds a free port of
 * that parity whose reply lands on the queue. A search reads 16 summary words per pass at most,
 * and inside the one word it picks tests only that word's free ports. It is the same search:
 * the first position in the kernel's order whose port is free, not reserved and on the queue,
 * so the chosen port is the one the filter in front of the index would choose.
 * Bytes: 64 (header) + 256 per queue of the RETA, per hot destination (4 queues: 1088 B,
 * 16 queues: 4160 B), on top of the portmap's 8.6 KiB; not built past RSSIDX_MAX_SLOTS queues.
 * The queue of a port under D needs D's fixed hash and the RSS state's tables: a summary set
 * holds a counted reference to the RSS state it was built for (refs), so it can be read and
 * kept up to date after socktab_net_set_rss() replaced that state; connect() then replaces the
 * set (socktab__rssidx_matches()).
 *
 * Maintenance. portmap.c calls socktab__rssidx_sync() after every change of a busy bit (under
 * that port's ehash stripe lock): only the summary of that port's queue and parity in that word
 * can change. It recomputes the bit from the word (a scan of the word's free ports of that
 * parity, stopping at the first on the queue), writes it, and re-reads the word until a re-read
 * gives the same answer; different ports of one word are under different stripes, so every
 * write is atomic and the last writer of a bit always re-checks after writing: at rest each bit
 * is exact. A set is published before it is filled (socktab__rssidx_fill(), the same re-check
 * per word) and used only once filled (live); publication and the bit changes are seq_cst, so
 * a hook that changed a bit either sees the set or the filler sees the bit.
 * Context: the RSS state is published with RCU and replaced whole; readers use it under RCU.
 * Summary sets are reached through their portmap under RCU and freed after a grace period.
 */
#include <stdlib.h>

#include "rss.h"

#define RSSIDX_MAX_SLOTS 256 /* queues of a RETA beyond which no summaries are built */
#define RSSIDX_WORDS (65536 / 64)
#define RSSIDX_SWORDS (RSSIDX_WORDS / 64)

#define EVEN 0x5555555555555555ull /* bit b <-> port 64w + b: even ports */
#define ODD 0xaaaaaaaaaaaaaaaaull

struct socktab__rss {
	_Atomic uint32_t refs;        /* (a) the net's pointer, plus one per summary set */
	uint32_t reta_mask;           /* (c) */
	uint32_t nslots;              /* (c) distinct queues in the RETA */
	uint32_t reta_len;            /* (c) */
	/* (c) The Toeplitz hash is linear: an input's hash is the XOR of what each byte at its
	 * position contributes, whatever the input's length. byte[i][v]: the contribution of
	 * value v at position i (36 positions: the IPv6 input; IPv4 uses the first 12). */
	uint32_t byte[36][256];
	uint8_t key[40];              /* (c) */
	struct rcu_head rcu;
	uint16_t *slot;               /* (c) [reta_len] slot of each entry's queue */
	uint16_t *queues;             /* (c) [nslots] the RETA's queues, ascending: slot -> queue */
	uint16_t reta[];              /* (c) [reta_len], then slot[], then queues[] */
};

/* One destination's per-queue summaries (design above). */
struct socktab__rssidx {
	struct socktab_net *net;          /* (c) whose counters hold its bytes */
	struct socktab__rss *rss;         /* (c) counted reference: the state it summarises for */
	const uint32_t *lo, *hi;          /* (c) the family's byte tables in rss */
	uint32_t base;                    /* (c) Toeplitz hash of D's reply tuple without the port */
	uint32_t nslots;                  /* (c) rss->nslots */
	_Atomic int live;                 /* (a) 0 until filled */
	uint32_t bytes;                   /* (c) */
	struct rcu_head rcu;
	/* (a) [slot][parity][w / 64], bit w % 64: the 64-port word w holds a free port of that
	 * parity whose reply lands on the slot's queue */
	_Atomic uint64_t open[][2][RSSIDX_SWORDS];
};

uint32_t socktab_rss_hash(const uint8_t *key, size_t key_len, const void *input, size_t len)
{
	const uint8_t *in = input;
	uint32_t h = 0, v;
	size_t kbit = 32; /* next key bit to shift into the window */

	if (!key || !input || key_len < 4 || len + 4 > key_len)
		return 0;
	v = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 | (uint32_t)key[2] << 8 | key[3];
	for (size_t i = 0; i < len; i++) {
		for (int b = 7; b >= 0; b--, kbit++) {
			if ((in[i] >> b) & 1)
				h ^= v;
			v = v << 1 | ((key[kbit / 8] >> (7 - kbit % 8)) & 1);
		}
	}
	return h;
}

static void rss_put(struct socktab__rss *r)
{
	if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1)
		free(r);
}

static void rss_free_rcu(struct rcu_head *head)
{
	struct socktab__rss *r = caa_container_of(head, struct socktab__rss, rcu);

	socktab__rcu_cb_enter(r);
	rss_put(r);
}

static int cmp_u16(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

/* The slot of @queue (binary search of the sorted queues), or -1. */
static int queue_slot(const struct socktab__rss *r, uint16_t queue)
{
	uint32_t lo = 0, hi = r->nslots;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (r->queues[mid] < queue)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nslots && r->queues[lo] == queue ? (int)lo : -1;
}

/* The Toeplitz hash of @len input bytes with @r's key, by its per-byte table: what
 * socktab_rss_hash() computes bit by bit, with one table load per byte. */
static uint32_t rss_hash_fast(const struct socktab__rss *r, const uint8_t *in, size_t len)
{
	uint32_t h = 0;

	for (size_t i = 0; i < len; i++)
		h ^= r->byte[i][in[i]];
	return h;
}

int socktab_net_rss_queue(struct socktab_net *net, int family, const void *saddr,
			  uint16_t sport, const void *daddr, uint16_t dport)
{
	uint8_t in[36];
	size_t len = 12;
	struct socktab__rss *r;
	int q = -ENOENT;

	if (!net || !saddr || !daddr || (family != AF_INET && family != AF_INET6))
		return -EINVAL;
	if (family == AF_INET6 && !(socktab__v6_is_mapped(saddr) && socktab__v6_is_mapped(daddr))) {
		memcpy(in, saddr, 16);
		memcpy(in + 16, daddr, 16);
		memcpy(in + 32, &sport, 2);
		memcpy(in + 34, &dport, 2);
		len = 36;
	} else {
		/* IPv4, or a v4-mapped pair: the NIC hashes the IPv4 packet. */
		memcpy(in, family == AF_INET ? saddr : (const uint8_t *)saddr + 12, 4);
		memcpy(in + 4, family == AF_INET ? daddr : (const uint8_t *)daddr + 12, 4);
		memcpy(in + 8, &sport, 2);
		memcpy(in + 10, &dport, 2);
	}
	socktab__rcu_read_lock();
	r = atomic_load_explicit(&net->rss, memory_order_acquire);
	if (r)
		q = r->reta[rss_hash_fast(r, in, len) & r->reta_mask];
	socktab__rcu_read_unlock();
	return q;
}

int socktab_net_set_rss(struct socktab_net *net, const uint8_t *key, size_t key_len,
			const uint16_t *reta, uint32_t reta_len)
{
	struct socktab__rss *r = NULL, *old;

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_net_set_rss()");
	if (!net)
		return -EINVAL;
	if (key) {
		uint32_t n = 0;

		/* 40 bytes cover the IPv6 input (36) plus the 32-bit window; RETA: power of two. */
		if (key_len < 40 || !reta || !reta_len || reta_len > 65536 ||
		    (reta_len & (reta_len - 1)))
			return -EINVAL;
		r = calloc(1, sizeof(*r) + 3 * (size_t)reta_len * sizeof(r->reta[0]));
		if (!r)
			return -ENOMEM;
		atomic_init(&r->refs, 1);
		memcpy(r->key, key, 40);
		memcpy(r->reta, reta, reta_len * sizeof(r->reta[0]));
		r->reta_mask = reta_len - 1;
		r->reta_len = reta_len;
		r->slot = r->reta + reta_len;
		r->queues = r->slot + reta_len;
		/* Number the distinct queues densely, in ascending order. */
		memcpy(r->queues, reta, reta_len * sizeof(r->reta[0]));
		qsort(r->queues, reta_len, sizeof(r->queues[0]), cmp_u16);
		for (uint32_t i = 0; i < reta_len; i++)
			if (!n || r->queues[i] != r->queues[n - 1])
				r->queues[n++] = r->queues[i];
		r->nslots = n;
		for (uint32_t i = 0; i < reta_len; i++)
			r->slot[i] = (uint16_t)queue_slot(r, reta[i]);
		for (int i = 0; i < 36; i++) {
			/* Input bit 8i + 7 - j (bit j of the byte) adds the key's 32 bits from there:
			 * five key bytes from bit / 8 hold them (at most key[39], for i <= 35). */
			uint32_t w[8];

			for (int j = 0; j < 8; j++) {
				unsigned int bit = 8u * (unsigned int)i + 7u - (unsigned int)j;
				uint64_t v = 0;

				for (unsigned int k = 0; k < 5; k++)
					v = v << 8 | r->key[bit / 8 + k];
				w[j] = (uint32_t)(v >> (8 - bit % 8));
			}
			r->byte[i][0] = 0;
			for (int v = 1; v < 256; v++)
				r->byte[i][v] = r->byte[i][v & (v - 1)] ^ w[__builtin_ctz((unsigned)v)];
		}
	} else if (key_len || reta || reta_len) {
		return -EINVAL;
	}
	old = atomic_exchange_explicit(&net->rss, r, memory_order_acq_rel);
	if (old)
		socktab__call_rcu(old, &old->rcu, rss_free_rcu);
	return 0;
}

/* net_free: the last reader is gone, and with the last ehash entry every summary set. */
void socktab__rss_free(struct socktab_net *net)
{
	struct socktab__rss *r = atomic_exchange_explicit(&net->rss, NULL, memory_order_relaxed);

	if (r)
		rss_put(r);
}

/*
 * Prepare the per-connect filter for @sk (its addresses and remote port are set). Returns
 * false when @sk asked for no queue. Caller is inside an RCU read-side section and keeps it
 * while using @f.
 */
bool socktab__rss_filter_init_rcu(struct socktab_net *net, const struct socktab_sock *sk,
			      struct socktab__rss_filter *f)
{
	struct socktab__rss *r;

	SOCKTAB__ASSERT_RCU();
	if (!socktab__skf(sk, SOCKTAB__SKF_RSS))
		return false;
	r = atomic_load_explicit(&net->rss, memory_order_acquire);
	f->rss = r;
	f->queue = sk->cold->rss_queue;
	f->slot = -1;
	f->queues = 1;
	if (!r)
		return true; /* asked for a queue without RSS configured: nothing matches */
	f->slot = queue_slot(r, f->queue);
	f->queues = r->nslots;
	if (RD(sk->v4key)) {
		uint8_t in[12] = { 0 };
		uint32_t ra = socktab__sk_daddr(sk), la = socktab__sk_rcv_saddr(sk);
		uint16_t rp = socktab__sk_dport(sk);

		memcpy(in, &ra, 4);
		memcpy(in + 4, &la, 4);
		memcpy(in + 8, &rp, 2);
		f->base = rss_hash_fast(r, in, 12);
		f->lo = r->byte[11];
		f->hi = r->byte[10];
	} else {
		uint8_t in[36] = { 0 };
		struct in6_addr ra = socktab__sk_v6_daddr(sk), la = socktab__sk_v6_saddr(sk);
		uint16_t rp = socktab__sk_dport(sk);

		memcpy(in, &ra, 16);
		memcpy(in + 16, &la, 16);
		memcpy(in + 32, &rp, 2);
		f->base = rss_hash_fast(r, in, 36);
		f->lo = r->byte[35];
		f->hi = r->byte[34];
	}
	return true;
}

bool socktab__rss_port_ok(const struct socktab__rss_filter *f, uint16_t port)
{
	uint32_t h;

	if (!f->rss)
		return false;
	h = f->base ^ f->hi[port >> 8] ^ f->lo[port & 0xff];
	return f->rss->reta[h & f->rss->reta_mask] == f->queue;
}

/* ---- per-queue summaries of one destination's free ports ---- */

static inline uint32_t port_slot(const struct socktab__rssidx *ri, uint32_t port)
{
	uint32_t h = ri->base ^ ri->hi[port >> 8] ^ ri->lo[port & 0xff];

	return ri->rss->slot[h & ri->rss->reta_mask];
}

/* Does word @w, whose busy bits are @v, hold a free port of parity @par on slot @slot? */
static bool word_open(const struct socktab__rssidx *ri, uint64_t v, uint32_t w, uint32_t slot,
		      int par)
{
	for (uint64_t m = ~v & (par ? ODD : EVEN); m; m &= m - 1)
		if (port_slot(ri, w * 64 + (uint32_t)__builtin_ctzll(m)) == slot)
			return true;
	return false;
}

/* Context: any registered thread; RCU read side held by the caller or @f's state referenced. */
struct socktab__rssidx *socktab__rssidx_new(struct socktab_net *net,
					    const struct socktab__rss_filter *f)
{
	struct socktab__rssidx *ri;
	size_t bytes;

	if (!f->rss || f->rss->nslots > RSSIDX_MAX_SLOTS)
		return NULL;
	bytes = sizeof(*ri) + f->rss->nslots * sizeof(ri->open[0]);
	if (posix_memalign((void **)&ri, 64, bytes))
		return NULL;
	memset(ri, 0, bytes);
	ri->net = net;
	ri->rss = f->rss;
	ri->lo = f->lo;
	ri->hi = f->hi;
	ri->base = f->base;
	ri->nslots = f->rss->nslots;
	ri->bytes = (uint32_t)bytes;
	/* The caller's RCU section keeps the state alive, so the count is above zero here. */
	atomic_fetch_add_explicit(&ri->rss->refs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&net->rss_index_bytes, bytes, memory_order_relaxed);
	atomic_fetch_add_explicit(&net->rss_indexes, 1, memory_order_relaxed);
	return ri;
}

#ifdef SOCKTAB_NAIVE_ORDER
/* The negative-control build (meson -Dnaive_order=true) widens the window it reopens. */
static void naive_window(void)
{
	for (volatile int i = 0; i < 20000; i++)
		;
}
#endif

/*
 * Compute every summary bit of the words over ports [lo, hi] from @bits, re-reading each word
 * until it held still; then mark @ri live. Context: @ri is published (hooks sync it from now
 * on); RCU read side held; no lock. Costs one slot computation per free port of the words.
 */
void socktab__rssidx_fill(struct socktab__rssidx *ri, const _Atomic uint64_t *bits, uint16_t lo,
			  uint16_t hi)
{
	uint8_t found[RSSIDX_MAX_SLOTS][2];

	for (uint32_t w = lo >> 6; w <= (uint32_t)hi >> 6; w++) {
		uint64_t sbit = 1ull << (w & 63), v;

		do {
			v = atomic_load(&bits[w]);
			memset(found, 0, ri->nslots * sizeof(found[0]));
			for (uint64_t m = ~v; m; m &= m - 1) {
				uint32_t j = (uint32_t)__builtin_ctzll(m);

				found[port_slot(ri, w * 64 + j)][j & 1] = 1;
			}
#ifdef SOCKTAB_NAIVE_ORDER
			naive_window();
#endif
			for (uint32_t s = 0; s < ri->nslots; s++)
				for (int par = 0; par < 2; par++) {
					_Atomic uint64_t *o = &ri->open[s][par][w >> 6];
					bool cur = atomic_load(o) & sbit;

					if (found[s][par] && !cur)
						atomic_fetch_or(o, sbit);
					else if (!found[s][par] && cur)
						atomic_fetch_and(o, ~sbit);
				}
		/* The re-read: a hook that synced a bit it changed while this word's summaries were
		 * computed is overwritten above with a stale answer, and this pass puts it right. The
		 * negative control reads each word once (tests/stress/stress_rss.c). */
#ifndef SOCKTAB_NAIVE_ORDER
		} while (atomic_load(&bits[w]) != v);
#else
		} while (0);
#endif
	}
	atomic_store(&ri->live, 1);
}

/*
 * Port @port's busy bit in @bits changed: bring the one summary bit it can flip in line.
 * Context: caller holds the port's ehash stripe lock for the destination; RCU read side held.
 */
void socktab__rssidx_sync(struct socktab__rssidx *ri, const _Atomic uint64_t *bits,
			  uint16_t port)
{
	uint32_t w = port >> 6, slot = port_slot(ri, port);
	int par = port & 1;
	_Atomic uint64_t *o = &ri->open[slot][par][w >> 6];
	uint64_t sbit = 1ull << (w & 63), v = atomic_load(&bits[w]);
	bool open = word_open(ri, v, w, slot, par);

#ifdef SOCKTAB_NAIVE_ORDER
	/* The negative control: one write of the answer from the word as first read, no re-read.
	 * Another port of the word, under another stripe lock, whose change and write came in
	 * between, is then overwritten with a stale answer (stress_rss --per-queue 2). */
	naive_window();
	if (open)
		atomic_fetch_or(o, sbit);
	else
		atomic_fetch_and(o, ~sbit);
	return;
#endif
	for (;;) {
		uint64_t v2;

		if (open)
			atomic_fetch_or(o, sbit);
		else
			atomic_fetch_and(o, ~sbit);
		v2 = atomic_load(&bits[w]);
		if (v2 == v)
			return;
		v = v2;
		if (word_open(ri, v, w, slot, par) == open)
			return;
		open = !open;
	}
}

uint32_t socktab__rssidx_next_word(const struct socktab__rssidx *ri, int slot, uint32_t w,
				   uint32_t wend, int par)
{
	while (w <= wend) {
		uint32_t s = w >> 6;
		uint64_t o = par < 0 ? RD(ri->open[slot][0][s]) | RD(ri->open[slot][1][s])
				     : RD(ri->open[slot][par][s]);

		o &= ~0ull << (w & 63);
		if (o)
			return s * 64 + (uint32_t)__builtin_ctzll(o);
		w = (s + 1) * 64;
	}
	return wend + 1;
}

/* Summary bits of the words over [lo, hi] that disagree with @bits (tests, at rest). */
uint32_t socktab__rssidx_check(const struct socktab__rssidx *ri, const _Atomic uint64_t *bits,
			       uint16_t lo, uint16_t hi)
{
	uint32_t bad = 0;

	for (uint32_t w = lo >> 6; w <= (uint32_t)hi >> 6; w++) {
		uint64_t v = atomic_load(&bits[w]);

		for (uint32_t s = 0; s < ri->nslots; s++)
			for (int par = 0; par < 2; par++)
				bad += word_open(ri, v, w, s, par) !=
				       !!(RD(ri->open[s][par][w >> 6]) & (1ull << (w & 63)));
	}
	return bad;
}

bool socktab__rssidx_matches(const struct socktab__rssidx *ri,
			     const struct socktab__rss_filter *f)
{
	return ri->rss == f->rss && ri->lo == f->lo && ri->base == f->base;
}

bool socktab__rssidx_live(const struct socktab__rssidx *ri)
{
	return atomic_load(&ri->live);
}

/* Never published, or a grace period passed since it was unreachable. Context: any. */
void socktab__rssidx_free(struct socktab__rssidx *ri)
{
	if (!ri)
		return;
	atomic_fetch_sub_explicit(&ri->net->rss_index_bytes, ri->bytes, memory_order_relaxed);
	atomic_fetch_sub_explicit(&ri->net->rss_indexes, 1, memory_order_relaxed);
	rss_put(ri->rss);
	free(ri);
}

static void rssidx_free_rcu(struct rcu_head *head)
{
	struct socktab__rssidx *ri = caa_container_of(head, struct socktab__rssidx, rcu);

	socktab__rcu_cb_enter(ri);
	socktab__rssidx_free(ri);
}

/* @ri was unlinked: free it after a grace period. Context: any registered thread. */
void socktab__rssidx_retire(struct socktab__rssidx *ri)
{
	socktab__call_rcu(ri, &ri->rcu, rssidx_free_rcu);
}

int socktab_net_rss_stats(struct socktab_net *net, struct socktab_rss_stats *st)
{
	struct socktab__rss *r;

	if (!net || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->connect_rss_rejected = RD(net->n_rss_rejected);
	st->index_bytes = RD(net->rss_index_bytes);
	st->indexes = RD(net->rss_indexes);
	socktab__rcu_read_lock();
	r = atomic_load_explicit(&net->rss, memory_order_acquire);
	if (r) {
		st->queues = r->nslots;
		st->state_bytes = sizeof(*r) + 3 * (uint64_t)r->reta_len * sizeof(r->reta[0]);
	}
	socktab__rcu_read_unlock();
	return 0;
}
