/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The demultiplexing step of the packet path: which socket does this segment or datagram
 * belong to? socktab answers from its tables. Each lookup names the ingress device: every
 * packet here arrived on the TUN device, so dif is the ifindex socktab_dev_add() gave it, and
 * sdif is 0 (no VRF). The source of the packet is the remote end, its destination is us.
 *
 * Every call is timed with CLOCK_MONOTONIC around the socktab call alone and counted, for the
 * lookup_ns_mean counter (it includes the two clock reads, about 20-40 ns on this machine).
 *
 * Inside the AF_XDP batch loop (xsk.c, st->in_section) the loop has looked the whole batch up
 * with socktab_lookup_batch4/6() in one read-side section, without references: lk_tcp and lk_udp
 * hand out the result it found for the packet being processed (st->pre, checked against the
 * packet's addresses and ports), and look a packet up with the _rcu single lookup when the
 * batch did not (--lookup single, or a packet the loop left out of the batch because an
 * earlier packet of the same batch had its 4-tuple). lk_put then releases nothing: the
 * section keeps every result valid until the batch is done.
 */
#include <string.h>

#include "stack.h"

static uint64_t t0(void)
{
	return st_now_ns();
}

static void t1(struct stack *st, uint64_t start)
{
	st->c.lookups++;
	st->c.lookup_ns += st_now_ns() - start;
}

/* The batch's result for this packet, if the loop has one for these addresses and ports. */
static const struct socktab_hit *pre_hit(const struct stack *st, const struct pkt *p,
					 uint16_t sport, uint16_t dport)
{
	const struct st_pre *e = st->pre;
	size_t alen = p->family == AF_INET ? 4 : 16;

	if (!e || !e->hit || e->proto != p->proto || e->family != p->family ||
	    e->sport != sport || e->dport != dport || memcmp(&e->src, &p->src, alen) ||
	    memcmp(&e->dst, &p->dst, alen))
		return NULL;
	return e->hit;
}

void lk_put(struct stack *st, struct socktab_sock *sk)
{
	if (!st->in_section)
		socktab_sock_put(sk);
}

/* The TCP socket of a segment: a connection or TIME_WAIT entry first, then a listener. */
struct socktab_sock *lk_tcp(struct stack *st, const struct pkt *p, uint16_t sport,
			    uint16_t dport)
{
	const struct socktab_hit *h;
	struct socktab_sock *sk;
	uint64_t s;

	if (st->in_section) {
		if ((h = pre_hit(st, p, sport, dport)))
			return h->sk;
		s = t0();
		if (p->family == AF_INET)
			sk = socktab_lookup_tcp4_rcu(st->net, p->src.v4.s_addr, sport,
						     p->dst.v4.s_addr, dport, st->ifindex, 0);
		else
			sk = socktab_lookup_tcp6_rcu(st->net, &p->src.v6, sport, &p->dst.v6, dport,
						     st->ifindex, 0);
		t1(st, s);
		return sk;
	}
	s = t0();
	if (p->family == AF_INET)
		sk = socktab_lookup_tcp4(st->net, p->src.v4.s_addr, sport, p->dst.v4.s_addr, dport,
					 st->ifindex, 0);
	else
		sk = socktab_lookup_tcp6(st->net, &p->src.v6, sport, &p->dst.v6, dport,
					 st->ifindex, 0);
	t1(st, s);
	return sk;
}

/* Listeners only: a SYN that may take over a TIME_WAIT entry looks for one (tcp_tw.c). */
struct socktab_sock *lk_tcp_listener(struct stack *st, const struct pkt *p, uint16_t sport,
				     uint16_t dport)
{
	struct socktab_sock *sk;
	uint64_t s = t0();

	if (p->family == AF_INET)
		sk = socktab_lookup_listener4(st->net, p->src.v4.s_addr, sport, p->dst.v4.s_addr,
					      dport, st->ifindex, 0);
	else
		sk = socktab_lookup_listener6(st->net, &p->src.v6, sport, &p->dst.v6, dport,
					      st->ifindex, 0);
	t1(st, s);
	return sk;
}

/* Established and TIME_WAIT entries only, by a connection's own addresses. */
struct socktab_sock *lk_tcp_established(struct stack *st, int family,
					const union st_addr *raddr, uint16_t rport,
					const union st_addr *laddr, uint16_t lport)
{
	struct socktab_sock *sk;
	uint64_t s = t0();

	if (family == AF_INET)
		sk = socktab_lookup_established4(st->net, raddr->v4.s_addr, rport, laddr->v4.s_addr,
						 lport, st->ifindex, 0);
	else
		sk = socktab_lookup_established6(st->net, &raddr->v6, rport, &laddr->v6, lport,
						 st->ifindex, 0);
	t1(st, s);
	return sk;
}

/* The UDP socket of a datagram: the 4-tuple hash for connected sockets (unless switched off
 * with socktab_net_set_udp_hash4()), then the scored address and port chains. */
struct socktab_sock *lk_udp(struct stack *st, const struct pkt *p, uint16_t sport,
			    uint16_t dport)
{
	const struct socktab_hit *h;
	struct socktab_sock *sk;
	uint64_t s;

	if (st->in_section) {
		if ((h = pre_hit(st, p, sport, dport)))
			return h->sk;
		s = t0();
		if (p->family == AF_INET)
			sk = socktab_lookup_udp4_rcu(st->net, p->src.v4.s_addr, sport,
						     p->dst.v4.s_addr, dport, st->ifindex, 0);
		else
			sk = socktab_lookup_udp6_rcu(st->net, &p->src.v6, sport, &p->dst.v6, dport,
						     st->ifindex, 0);
		t1(st, s);
		return sk;
	}
	s = t0();
	if (p->family == AF_INET)
		sk = socktab_lookup_udp4(st->net, p->src.v4.s_addr, sport, p->dst.v4.s_addr, dport,
					 st->ifindex, 0);
	else
		sk = socktab_lookup_udp6(st->net, &p->src.v6, sport, &p->dst.v6, dport,
					 st->ifindex, 0);
	t1(st, s);
	return sk;
}
