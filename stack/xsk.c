/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The stack's second packet I/O (--xdp DEV): an AF_XDP socket on an Ethernet device, through
 * libxdp's xsk_* API with its default XDP program (every frame of the queue comes to us). The
 * kernel no longer sees those frames, so the stack answers ARP requests for its IPv4 address and
 * neighbour solicitations for its IPv6 address itself, learns its neighbours' link addresses
 * from what they send, and writes the Ethernet header of each frame it sends.
 *
 * The batch loop (xsk_rx_batch), run to completion on one thread:
 *   1. take at most ST_BATCH frames from the RX ring;
 *   2. parse each: ARP and neighbour discovery are answered at once; for a TCP or UDP packet
 *      over IPv4 or IPv6 the 4-tuple becomes a key of one of four arrays (protocol x family);
 *   3. one read-side section (socktab_rcu_read_lock) for the whole batch: the four arrays are
 *      looked up with socktab_lookup_batch4/6(..., SOCKTAB_LOOKUP_NOREF), then every packet goes
 *      through the stack in arrival order (ip_input), which takes its socket from the batch's
 *      result (lookup.c: lk_tcp / lk_udp) and releases no reference; a SYN's child, a close,
 *      a connected UDP socket are made right there, as docs/embedding.md's recipe allows;
 *   4. the frames go back to the fill ring, and what the batch sent is kicked out at once.
 * A packet whose 4-tuple an earlier packet of the same batch already had is left out of the
 * batch lookup and looked up when its turn comes (the _rcu single lookup, same section): the
 * earlier one may have changed what that 4-tuple finds (a SYN made a child, a FIN closed the
 * connection, a first datagram made the peer's connected socket).
 *
 * UMEM: NFRAMES frames of FRAME bytes; the first FILL_N are receive buffers (in the fill ring or
 * the RX ring, or being processed), the others a free list of transmit buffers that the
 * completion ring gives back. Each packet the stack builds (st->tx) is copied into one.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "share.h"
#include "stack.h"

#ifdef ST_HAVE_XDP

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#define FRAME 2048
#define NFRAMES 16384
#define FILL_N 8192                  /* receive frames: the fill ring's size */
#define RX_N 4096                    /* RX ring: a burst of 4,096 frames waits there */
#define RING_N 2048                  /* TX and completion rings */
#define NEIGH_N 1024                 /* neighbour table slots (open addressing) */
#define ETH_HLEN_ 14
#define ET_IP4 0x0800
#define ET_ARP 0x0806
#define ET_IP6 0x86dd

struct neigh {
	uint8_t used, family;
	uint8_t mac[6];
	union st_addr ip;
};

struct st_xsk {
	struct xsk_socket *xsk;
	struct xsk_umem *umem;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp, rx;
	uint8_t *area;
	int fd;
	bool native;
	uint32_t tx_pending;         /* descriptors submitted since the last kick */
	uint32_t n_free;
	uint64_t free_tx[NFRAMES - FILL_N];
	uint8_t mac[6];
	struct neigh neigh[NEIGH_N];
};

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* ---- neighbours ---- */

static uint32_t neigh_slot(int family, const union st_addr *ip)
{
	uint32_t h;

	if (family == AF_INET) {
		h = ip->v4.s_addr;
	} else {
		const uint32_t *w = (const uint32_t *)&ip->v6;

		h = w[0] ^ w[1] ^ w[2] ^ (w[3] * 31u);
	}
	h *= 0x9e3779b1u;
	return h >> 22; /* 10 bits: NEIGH_N */
}

static bool neigh_match(const struct neigh *n, int family, const union st_addr *ip)
{
	return n->used && n->family == family &&
	       !memcmp(&n->ip, ip, family == AF_INET ? 4 : 16);
}

static const uint8_t *neigh_find(const struct st_xsk *xs, int family, const union st_addr *ip)
{
	uint32_t s = neigh_slot(family, ip);

	for (int i = 0; i < 8; i++) {
		const struct neigh *n = &xs->neigh[(s + (uint32_t)i) & (NEIGH_N - 1)];

		if (!n->used)
			return NULL;
		if (neigh_match(n, family, ip))
			return n->mac;
	}
	return NULL;
}

/* Remember that @ip is at @mac (a full probe sequence overwrites its first slot). */
static void neigh_learn(struct st_xsk *xs, int family, const union st_addr *ip,
			const uint8_t *mac)
{
	uint32_t s = neigh_slot(family, ip);
	struct neigh *n = NULL;

	if (mac[0] & 1) /* a multicast or broadcast source is no neighbour */
		return;
	for (int i = 0; i < 8; i++) {
		struct neigh *e = &xs->neigh[(s + (uint32_t)i) & (NEIGH_N - 1)];

		if (!e->used || neigh_match(e, family, ip)) {
			n = e;
			break;
		}
	}
	if (!n)
		n = &xs->neigh[s];
	if (n->used && !memcmp(n->mac, mac, 6))
		return;
	memset(&n->ip, 0, sizeof(n->ip));
	memcpy(&n->ip, ip, family == AF_INET ? 4 : 16);
	n->family = (uint8_t)family;
	memcpy(n->mac, mac, 6);
	n->used = 1;
}

/* ---- transmit ---- */

static void reclaim(struct st_xsk *xs)
{
	uint32_t idx, n = xsk_ring_cons__peek(&xs->comp, RING_N, &idx);

	for (uint32_t i = 0; i < n; i++)
		xs->free_tx[xs->n_free++] = *xsk_ring_cons__comp_addr(&xs->comp, idx + i);
	if (n)
		xsk_ring_cons__release(&xs->comp, n);
}

static void kick(struct st_xsk *xs)
{
	if (!xs->tx_pending)
		return;
	/* Copy mode sends what the TX ring holds during this call. EAGAIN, EBUSY and ENOBUFS
	 * leave descriptors in the ring for the next kick. */
	sendto(xs->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
	xs->tx_pending = 0;
}

void xsk_flush(struct stack *st)
{
	if (!st->xsk)
		return;
	kick(st->xsk);
	reclaim(st->xsk);
}

/* One frame to @dmac: the Ethernet header, then @len bytes of @payload. */
static void frame_send(struct stack *st, const uint8_t *dmac, uint16_t etype,
		       const void *payload, size_t len)
{
	struct st_xsk *xs = st->xsk;
	struct xdp_desc *d;
	uint32_t idx;
	uint64_t addr;
	uint8_t *f;

	if (len + ETH_HLEN_ > FRAME)
		goto drop;
	if (!xs->n_free)
		reclaim(xs);
	if (!xs->n_free) {
		kick(xs);
		reclaim(xs);
	}
	if (!xs->n_free)
		goto drop;
	if (xsk_ring_prod__reserve(&xs->tx, 1, &idx) != 1) {
		kick(xs);
		reclaim(xs);
		if (xsk_ring_prod__reserve(&xs->tx, 1, &idx) != 1)
			goto drop;
	}
	addr = xs->free_tx[--xs->n_free];
	f = xs->area + addr;
	memcpy(f, dmac, 6);
	memcpy(f + 6, xs->mac, 6);
	f[12] = (uint8_t)(etype >> 8);
	f[13] = (uint8_t)etype;
	memcpy(f + ETH_HLEN_, payload, len);
	d = xsk_ring_prod__tx_desc(&xs->tx, idx);
	d->addr = addr;
	d->len = (uint32_t)(len + ETH_HLEN_);
	d->options = 0;
	xsk_ring_prod__submit(&xs->tx, 1);
	if (++xs->tx_pending >= 64)
		kick(xs);
	st->c.xdp_tx_frames++;
	return;
drop:
	st->c.xdp_tx_dropped++;
}

static void arp_send(struct stack *st, const uint8_t *dmac, uint16_t op, const uint8_t *tha,
		     const struct in_addr *tpa)
{
	uint8_t a[28];

	a[0] = 0, a[1] = 1;              /* Ethernet */
	a[2] = 0x08, a[3] = 0x00;        /* IPv4 */
	a[4] = 6, a[5] = 4;
	a[6] = 0, a[7] = (uint8_t)op;
	memcpy(a + 8, st->xsk->mac, 6);
	memcpy(a + 14, &st->cfg.addr4, 4);
	memcpy(a + 18, tha, 6);
	memcpy(a + 24, tpa, 4);
	frame_send(st, dmac, ET_ARP, a, sizeof(a));
}

/* An ICMPv6 neighbour solicitation (135) or advertisement (136) about @target, with our link
 * address as the option (source, 1, or target, 2). */
static void nd_send(struct stack *st, const uint8_t *dmac, const struct in6_addr *dst,
		    int type, const struct in6_addr *target, uint8_t flags)
{
	uint8_t p[40 + 32];
	uint8_t *icmp = p + 40;
	union st_addr s, d;
	uint16_t ck;

	memset(p, 0, sizeof(p));
	p[0] = 0x60;
	p[5] = 32;                       /* payload length */
	p[6] = IPPROTO_ICMPV6;
	p[7] = 255;                      /* hop limit: neighbour discovery needs 255 */
	memcpy(p + 8, &st->cfg.addr6, 16);
	memcpy(p + 24, dst, 16);
	icmp[0] = (uint8_t)type;
	icmp[4] = flags;
	memcpy(icmp + 8, target, 16);
	icmp[24] = type == 135 ? 1 : 2;
	icmp[25] = 1;                    /* option length: 8 bytes */
	memcpy(icmp + 26, st->xsk->mac, 6);
	s.v6 = st->cfg.addr6;
	d.v6 = *dst;
	ck = csum_fold(csum_add(csum_pseudo(AF_INET6, &s, &d, IPPROTO_ICMPV6, 32), icmp, 32));
	icmp[2] = (uint8_t)(ck >> 8);
	icmp[3] = (uint8_t)ck;
	frame_send(st, dmac, ET_IP6, p, sizeof(p));
}

/* Ask who has @ip (ARP request, or a solicitation to its solicited-node group). On a device
 * shared with the kernel the answer would go to the kernel: ask the kernel instead. */
static void solicit(struct stack *st, int family, const union st_addr *ip)
{
	static const uint8_t zero[6];
	uint8_t ll[6];

	if (share_active()) {
		if (!share_neigh(family, ip, ll))
			neigh_learn(st->xsk, family, ip, ll);
		return;
	}
	if (family == AF_INET) {
		arp_send(st, bcast, 1, zero, &ip->v4);
	} else if (st->cfg.have6) {
		struct in6_addr group = { { { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff } } };
		uint8_t mac[6] = { 0x33, 0x33, 0xff };

		memcpy(group.s6_addr + 13, ip->v6.s6_addr + 13, 3);
		memcpy(mac + 3, ip->v6.s6_addr + 13, 3);
		nd_send(st, mac, &group, 135, &ip->v6, 0);
	}
}

void xsk_output(struct stack *st, int family, const union st_addr *dst, const void *pkt,
		size_t len)
{
	const uint8_t *mac = neigh_find(st->xsk, family, dst);

	if (!mac) {
		/* Ask (on a shared device the kernel's table answers at once, so look again);
		 * else drop the packet: TCP retransmits, a datagram is lost as on a wire. */
		solicit(st, family, dst);
		if (share_active())
			mac = neigh_find(st->xsk, family, dst);
		if (!mac) {
			st->c.xdp_no_neigh++;
			return;
		}
	}
	frame_send(st, mac, family == AF_INET ? ET_IP4 : ET_IP6, pkt, len);
	st->c.tx_packets++;
}

/* ---- receive ---- */

static void arp_input(struct stack *st, const uint8_t *a, size_t len)
{
	union st_addr spa;
	struct in_addr tpa;

	if (len < 28 || a[0] || a[1] != 1 || a[2] != 0x08 || a[3] || a[4] != 6 || a[5] != 4 ||
	    a[6])
		return;
	memcpy(&spa.v4, a + 14, 4);
	memcpy(&tpa, a + 24, 4);
	if (spa.v4.s_addr)
		neigh_learn(st->xsk, AF_INET, &spa, a + 8);
	if (a[7] == 1 && tpa.s_addr == st->cfg.addr4.s_addr) {
		arp_send(st, a + 8, 2, a + 8, &spa.v4);
		st->c.xdp_arp_replies++;
	}
}

/* ICMPv6 neighbour solicitations for our address and advertisements (hop limit 255 only). */
static void nd_input(struct stack *st, const uint8_t *eth_src, const uint8_t *p, size_t len)
{
	const uint8_t *icmp = p + 40;
	size_t ilen = len - 40;
	union st_addr src, target;
	const uint8_t *ll = NULL;

	if (ilen < 24 || p[7] != 255 || icmp[1])
		return;
	memcpy(&src.v6, p + 8, 16);
	memcpy(&target.v6, icmp + 8, 16);
	for (size_t o = 24; o + 8 <= ilen && icmp[o + 1]; o += (size_t)icmp[o + 1] * 8)
		if ((icmp[0] == 135 && icmp[o] == 1) || (icmp[0] == 136 && icmp[o] == 2))
			ll = icmp + o + 2;
	if (icmp[0] == 136) {
		if (ll)
			neigh_learn(st->xsk, AF_INET6, &target, ll);
		return;
	}
	if (!st->cfg.have6 || memcmp(&target.v6, &st->cfg.addr6, 16))
		return;
	if (IN6_IS_ADDR_UNSPECIFIED(&src.v6)) { /* duplicate address detection: to all nodes */
		static const struct in6_addr all = { { { 0xff, 0x02, 0, 0, 0, 0, 0, 0,
							 0, 0, 0, 0, 0, 0, 0, 1 } } };
		static const uint8_t mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };

		nd_send(st, mac, &all, 136, &st->cfg.addr6, 0x20);
	} else {
		neigh_learn(st->xsk, AF_INET6, &src, ll ? ll : eth_src);
		nd_send(st, ll ? ll : eth_src, &src.v6, 136, &st->cfg.addr6, 0x60); /* S, O */
	}
	st->c.xdp_nd_replies++;
}

/* What the batch loop knows of one frame. */
struct rxf {
	const uint8_t *l3;
	size_t len;
	int8_t group;                /* -1: handled or dropped; 4: IP without a batch key; 0-3 */
	uint16_t slot;
	struct st_pre pre;
};

/* The batch key's group: IPv4 TCP, IPv4 UDP, IPv6 TCP, IPv6 UDP. */
static int key_group(int family, uint8_t proto)
{
	return (family == AF_INET6) * 2 + (proto == IPPROTO_UDP);
}

/* The 4-tuple of an IP packet carrying TCP or UDP (ports read, nothing checked that
 * ip_input checks again): 1, or 0 when it has none. */
static int tuple_of(const uint8_t *b, size_t len, struct st_pre *e)
{
	size_t hl;

	if (len >= 20 && (b[0] >> 4) == 4) {
		hl = (size_t)(b[0] & 15) * 4;
		if (hl < 20 || len < hl + 4 || (b[6] & 0x3f) || b[7])
			return 0;
		e->family = AF_INET;
		e->proto = b[9];
		memcpy(&e->src.v4, b + 12, 4);
		memcpy(&e->dst.v4, b + 16, 4);
	} else if (len >= 44 && (b[0] >> 4) == 6) {
		hl = 40;
		e->family = AF_INET6;
		e->proto = b[6];
		memcpy(&e->src.v6, b + 8, 16);
		memcpy(&e->dst.v6, b + 24, 16);
	} else {
		return 0;
	}
	if (e->proto != IPPROTO_TCP && e->proto != IPPROTO_UDP)
		return 0;
	memcpy(&e->sport, b + hl, 2);
	memcpy(&e->dport, b + hl + 2, 2);
	return 1;
}

/* 8 bits of a 4-tuple, for the batch's "seen before" set. */
static unsigned int tuple_bit(const struct st_pre *e)
{
	uint32_t h = (uint32_t)e->sport << 16 ^ e->dport ^ e->proto;

	if (e->family == AF_INET) {
		h ^= e->src.v4.s_addr * 0x85ebca6bu ^ e->dst.v4.s_addr;
	} else {
		const uint32_t *s = (const uint32_t *)&e->src.v6, *d = (const uint32_t *)&e->dst.v6;

		h ^= (s[0] ^ s[1] ^ s[2] ^ s[3]) * 0x85ebca6bu ^ d[3];
	}
	h *= 0x9e3779b1u;
	return h >> 24;
}

unsigned int xsk_rx_batch(struct stack *st)
{
	struct st_xsk *xs = st->xsk;
	struct rxf fr[ST_BATCH];
	struct socktab_tuple4 k4[2][ST_BATCH];
	struct socktab_tuple6 k6[2][ST_BATCH];
	struct socktab_hit hits[4][ST_BATCH];
	unsigned int ng[4] = { 0 };
	uint64_t seen[4] = { 0 }, t_start, t;
	uint32_t idx, fidx, n = xsk_ring_cons__peek(&xs->rx, ST_BATCH, &idx);

	if (!n)
		return 0;
	t_start = st_now_ns();
	st->now_ns = t_start;
	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&xs->rx, idx + i);
		const uint8_t *f = xs->area + d->addr;
		struct rxf *r = &fr[i];
		uint16_t et;

		r->group = -1;
		if (d->len < ETH_HLEN_ ||
		    (memcmp(f, xs->mac, 6) && !(f[0] & 1))) { /* short, or another host's */
			st->c.rx_invalid++;
			continue;
		}
		et = (uint16_t)(f[12] << 8 | f[13]);
		r->l3 = f + ETH_HLEN_;
		r->len = d->len - ETH_HLEN_;
		if (et == ET_ARP) {
			arp_input(st, r->l3, r->len);
			continue;
		}
		if (et == ET_IP6 && r->len >= 42 && r->l3[6] == IPPROTO_ICMPV6 &&
		    (r->l3[40] == 135 || r->l3[40] == 136)) {
			nd_input(st, f + 6, r->l3, r->len);
			continue;
		}
		if ((et != ET_IP4 && et != ET_IP6) || (f[0] & 1)) {
			st->c.rx_not_ours++;
			continue;
		}
		r->group = 4;
		r->pre.hit = NULL;
		if (!tuple_of(r->l3, r->len, &r->pre))
			continue;
		neigh_learn(xs, r->pre.family, &r->pre.src, f + 6);
		if (st->cfg.lookup_single)
			continue;
		unsigned int b = tuple_bit(&r->pre);

		if (seen[b >> 6] & (1ull << (b & 63))) {
			st->c.xdp_relookups++;
			continue;
		}
		seen[b >> 6] |= 1ull << (b & 63);
		int g = key_group(r->pre.family, r->pre.proto);

		r->group = (int8_t)g;
		r->slot = (uint16_t)ng[g]++;
		if (g < 2) {
			struct socktab_tuple4 *k = &k4[g][r->slot];

			k->saddr = r->pre.src.v4.s_addr;
			k->daddr = r->pre.dst.v4.s_addr;
			k->sport = r->pre.sport;
			k->dport = r->pre.dport;
			k->dif = st->ifindex;
			k->sdif = 0;
		} else {
			struct socktab_tuple6 *k = &k6[g - 2][r->slot];

			k->saddr = r->pre.src.v6;
			k->daddr = r->pre.dst.v6;
			k->sport = r->pre.sport;
			k->dport = r->pre.dport;
			k->dif = st->ifindex;
			k->sdif = 0;
		}
	}

	/* One read-side section: the batch's lookups, then every packet. */
	socktab_rcu_read_lock();
	st->in_section = true;
	t = st_now_ns();
	for (int g = 0; g < 4; g++) {
		int proto = g & 1 ? SOCKTAB_UDP : SOCKTAB_TCP;

		if (!ng[g])
			continue;
		if (g < 2)
			socktab_lookup_batch4(st->net, proto, k4[g], ng[g], hits[g],
					      SOCKTAB_LOOKUP_NOREF);
		else
			socktab_lookup_batch6(st->net, proto, k6[g - 2], ng[g], hits[g],
					      SOCKTAB_LOOKUP_NOREF);
		st->c.lookups += ng[g];
	}
	if (ng[0] | ng[1] | ng[2] | ng[3])
		st->c.lookup_ns += st_now_ns() - t;
	for (uint32_t i = 0; i < n; i++) {
		struct rxf *r = &fr[i];

		if (r->group < 0)
			continue;
		if (r->group < 4)
			r->pre.hit = &hits[r->group][r->slot];
		st->pre = r->pre.hit ? &r->pre : NULL;
		ip_input(st, r->l3, r->len);
	}
	st->pre = NULL;
	st->in_section = false;
	socktab_rcu_read_unlock();

	/* The frames go back to the kernel: the fill ring has room for all FILL_N. */
	if (xsk_ring_prod__reserve(&xs->fill, n, &fidx) == n) {
		for (uint32_t i = 0; i < n; i++) {
			uint64_t a = xsk_ring_cons__rx_desc(&xs->rx, idx + i)->addr;

			*xsk_ring_prod__fill_addr(&xs->fill, fidx + i) = a - a % FRAME;
		}
		xsk_ring_prod__submit(&xs->fill, n);
	}
	xsk_ring_cons__release(&xs->rx, n);
	xsk_flush(st);
	st->c.xdp_rx_frames += n;
	st->c.xdp_batches++;
	st->c.xdp_busy_ns += st_now_ns() - t_start;
	return n;
}

int xsk_wait(struct stack *st, int ms)
{
	struct pollfd pfd = { .fd = st->xsk->fd, .events = POLLIN };

	return poll(&pfd, 1, ms);
}

/* Our neighbours (the peer, the --connect destination), asked for before ready=1 so that the
 * first packets to them are not dropped: 2 s at most. */
static void resolve(struct stack *st)
{
	union st_addr want[3];
	int fam[3], n = 0;
	uint64_t end = st_now_ns() + 2000000000ull, next = 0;

	want[n].v4 = st->cfg.peer4, fam[n++] = AF_INET;
	if (st->cfg.have6)
		want[n].v6 = st->cfg.peer6, fam[n++] = AF_INET6;
	if (st->cfg.connect_len) {
		if (st->cfg.connect_to.ss_family == AF_INET)
			want[n].v4 = ((struct sockaddr_in *)&st->cfg.connect_to)->sin_addr;
		else
			want[n].v6 = ((struct sockaddr_in6 *)&st->cfg.connect_to)->sin6_addr;
		fam[n] = st->cfg.connect_to.ss_family;
		n++;
	}
	for (;;) {
		int missing = 0;
		uint64_t now = st_now_ns();

		for (int i = 0; i < n; i++)
			if (!neigh_find(st->xsk, fam[i], &want[i])) {
				missing++;
				if (now >= next)
					solicit(st, fam[i], &want[i]);
			}
		if (!missing || now >= end)
			break;
		if (now >= next)
			next = now + 200000000u;
		xsk_flush(st);
		xsk_wait(st, 20);
		xsk_rx_batch(st);
	}
}

static int open_mode(struct stack *st, struct st_xsk *xs, bool native)
{
	struct xsk_socket_config sc = {
		.rx_size = RX_N,
		.tx_size = RING_N,
		.xdp_flags = native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE,
		.bind_flags = XDP_COPY,
		/* A device shared with the kernel gets the steering program (share.c), not
		 * libxdp's default one. */
		.libxdp_flags = share_active() ? XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD : 0,
	};

	xs->native = native;
	return xsk_socket__create(&xs->xsk, st->cfg.xdp, (uint32_t)st->cfg.xdp_queue, xs->umem,
				  &xs->rx, &xs->tx, &sc);
}

int xsk_open(struct stack *st)
{
	struct xsk_umem_config uc = {
		.fill_size = FILL_N,
		.comp_size = RING_N,
		.frame_size = FRAME,
	};
	struct st_xsk *xs = calloc(1, sizeof(*xs));
	struct ifreq ifr;
	uint32_t idx;
	int err, fd;

	if (!xs) {
		fprintf(stderr, "socktab serve: out of memory\n");
		return -1;
	}
	st->xsk = xs;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", st->cfg.xdp);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	err = fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr) ? -errno : 0;
	if (fd >= 0)
		close(fd);
	if (err) {
		fprintf(stderr, "socktab serve: --xdp %s: %s\n", st->cfg.xdp, strerror(-err));
		return -1;
	}
	memcpy(xs->mac, ifr.ifr_hwaddr.sa_data, 6);
	xs->area = mmap(NULL, (size_t)NFRAMES * FRAME, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (xs->area == MAP_FAILED) {
		xs->area = NULL;
		fprintf(stderr, "socktab serve: UMEM: %s\n", strerror(errno));
		return -1;
	}
	err = xsk_umem__create(&xs->umem, xs->area, (uint64_t)NFRAMES * FRAME, &xs->fill,
			       &xs->comp, &uc);
	if (err) {
		fprintf(stderr, "socktab serve: xsk_umem__create: %s\n", strerror(-err));
		return -1;
	}
	err = st->cfg.xdp_mode == 1 ? -EOPNOTSUPP : open_mode(st, xs, true);
	if (err && st->cfg.xdp_mode != 2)
		err = open_mode(st, xs, false);
	if (err) {
		fprintf(stderr, "socktab serve: AF_XDP socket on %s queue %d: %s\n", st->cfg.xdp,
			st->cfg.xdp_queue, strerror(-err));
		return -1;
	}
	xs->fd = xsk_socket__fd(xs->xsk);
	if (share_active() && share_attach(st, xs->fd))
		return -1;
	if (xsk_ring_prod__reserve(&xs->fill, FILL_N, &idx) != FILL_N) {
		fprintf(stderr, "socktab serve: the fill ring is short\n");
		return -1;
	}
	for (uint32_t i = 0; i < FILL_N; i++)
		*xsk_ring_prod__fill_addr(&xs->fill, idx + i) = (uint64_t)i * FRAME;
	xsk_ring_prod__submit(&xs->fill, FILL_N);
	for (uint32_t i = FILL_N; i < NFRAMES; i++)
		xs->free_tx[xs->n_free++] = (uint64_t)i * FRAME;
	fprintf(stderr, "socktab serve: AF_XDP on %s queue %d, %s mode, copy\n", st->cfg.xdp,
		st->cfg.xdp_queue, xs->native ? "native" : "skb");
	resolve(st);
	return 0;
}

const char *xsk_mode_name(const struct stack *st)
{
	return !st->xsk ? "none" : st->xsk->native ? "native" : "skb";
}

void xsk_print_stats(const struct stack *st, FILE *f)
{
	struct xdp_statistics x;
	socklen_t len = sizeof(x);

	if (!st->xsk || getsockopt(st->xsk->fd, SOL_XDP, XDP_STATISTICS, &x, &len))
		return;
	fprintf(f, "xdp_rx_dropped=%llu\nxdp_rx_ring_full=%llu\nxdp_rx_fill_empty=%llu\n"
		"xdp_tx_invalid=%llu\n", (unsigned long long)x.rx_dropped,
		(unsigned long long)x.rx_ring_full, (unsigned long long)x.rx_fill_ring_empty_descs,
		(unsigned long long)x.tx_invalid_descs);
}

void xsk_close(struct stack *st)
{
	struct st_xsk *xs = st->xsk;

	if (!xs)
		return;
	if (xs->xsk)
		xsk_socket__delete(xs->xsk);
	if (xs->umem)
		xsk_umem__delete(xs->umem);
	if (xs->area)
		munmap(xs->area, (size_t)NFRAMES * FRAME);
	free(xs);
	st->xsk = NULL;
}

#else /* !ST_HAVE_XDP: the build found no libxdp */

int xsk_open(struct stack *st)
{
	fprintf(stderr, "socktab serve: --xdp %s: built without libxdp/libbpf\n", st->cfg.xdp);
	return -1;
}

int xsk_wait(struct stack *st, int ms)
{
	(void)st;
	return poll(NULL, 0, ms);
}

unsigned int xsk_rx_batch(struct stack *st)
{
	(void)st;
	return 0;
}

void xsk_flush(struct stack *st)
{
	(void)st;
}

void xsk_output(struct stack *st, int family, const union st_addr *dst, const void *pkt,
		size_t len)
{
	(void)st, (void)family, (void)dst, (void)pkt, (void)len;
}

const char *xsk_mode_name(const struct stack *st)
{
	(void)st;
	return "none";
}

void xsk_print_stats(const struct stack *st, FILE *f)
{
	(void)st, (void)f;
}

void xsk_close(struct stack *st)
{
	(void)st;
}

#endif
