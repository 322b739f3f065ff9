/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * IPv4 and IPv6: the checks a packet passes before any transport sees it, the header in front
 * of what we send, and the Internet checksum (RFC 1071) with its pseudo-headers. Everything
 * that fails a check is dropped without an answer and counted in rx_invalid (malformed) or
 * rx_not_ours (not for our address, or a protocol we do not speak).
 */
#include <string.h>

#include <arpa/inet.h>

#include "stack.h"

/* Add @len bytes to a one's complement sum (network order 16-bit words, odd tail padded). */
uint32_t csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t s = sum;

	for (; len >= 2; p += 2, len -= 2)
		s += (uint32_t)(p[0] << 8 | p[1]);
	if (len)
		s += (uint32_t)p[0] << 8;
	while (s >> 32)
		s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}

/* Fold a sum to 16 bits and complement it: the value that goes into a header (host order). */
uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The pseudo-header sum of TCP, UDP and ICMPv6: addresses, protocol and transport length. */
uint32_t csum_pseudo(int family, const union st_addr *src, const union st_addr *dst,
		     uint8_t proto, size_t len)
{
	uint32_t sum;

	if (family == AF_INET) {
		sum = csum_add(0, &src->v4, 4);
		sum = csum_add(sum, &dst->v4, 4);
	} else {
		sum = csum_add(0, &src->v6, 16);
		sum = csum_add(sum, &dst->v6, 16);
	}
	return sum + proto + (uint32_t)len;
}

size_t ip_hdr_len(int family)
{
	return family == AF_INET ? 20 : 40;
}

static void deliver(struct stack *st, const struct pkt *p)
{
	switch (p->proto) {
	case IPPROTO_TCP:
		tcp_input(st, p);
		break;
	case IPPROTO_UDP:
		udp_input(st, p);
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		icmp_input(st, p);
		break;
	}
}

/* IPv4: version, header length and checksum, total length, no fragments (we never reassemble:
 * nothing we answer needs more than one packet), addressed to us. */
static void ip4_input(struct stack *st, const uint8_t *b, size_t len)
{
	struct pkt p = { .family = AF_INET };
	size_t ihl, tot;

	if (len < 20 || (b[0] >> 4) != 4)
		goto invalid;
	ihl = (size_t)(b[0] & 15) * 4;
	tot = (size_t)(b[2] << 8 | b[3]);
	if (ihl < 20 || tot < ihl || tot > len || csum_fold(csum_add(0, b, ihl)) != 0)
		goto invalid;
	if ((b[6] & 0x3f) || b[7]) { /* MF set or a fragment offset */
		st->c.rx_not_ours++;
		return;
	}
	memcpy(&p.src.v4, b + 12, 4);
	memcpy(&p.dst.v4, b + 16, 4);
	if (p.dst.v4.s_addr != st->cfg.addr4.s_addr) {
		st->c.rx_not_ours++;
		return;
	}
	p.proto = b[9];
	p.l3 = b;
	p.l3_len = tot;
	p.l4 = b + ihl;
	p.l4_len = tot - ihl;
	if (p.proto != IPPROTO_TCP && p.proto != IPPROTO_UDP && p.proto != IPPROTO_ICMP) {
		st->c.rx_not_ours++;
		return;
	}
	deliver(st, &p);
	return;
invalid:
	st->c.rx_invalid++;
}

/* IPv6: version and payload length, addressed to us, and a transport header right after the
 * fixed header. Extension headers are not walked: such packets are dropped (the kernel sends
 * us none for TCP, UDP or ping). Multicast (neighbour discovery, MLD) is not ours. */
static void ip6_input(struct stack *st, const uint8_t *b, size_t len)
{
	struct pkt p = { .family = AF_INET6 };
	size_t plen;

	if (len < 40 || (b[0] >> 4) != 6)
		goto invalid;
	plen = (size_t)(b[4] << 8 | b[5]);
	if (40 + plen > len)
		goto invalid;
	memcpy(&p.src.v6, b + 8, 16);
	memcpy(&p.dst.v6, b + 24, 16);
	if (!st->cfg.have6 || memcmp(&p.dst.v6, &st->cfg.addr6, 16)) {
		st->c.rx_not_ours++;
		return;
	}
	p.proto = b[6];
	p.l3 = b;
	p.l3_len = 40 + plen;
	p.l4 = b + 40;
	p.l4_len = plen;
	if (p.proto != IPPROTO_TCP && p.proto != IPPROTO_UDP && p.proto != IPPROTO_ICMPV6) {
		st->c.rx_not_ours++;
		return;
	}
	deliver(st, &p);
	return;
invalid:
	st->c.rx_invalid++;
}

/* One packet read from the TUN device. */
void ip_input(struct stack *st, const uint8_t *pkt, size_t len)
{
	st->c.rx_packets++;
	if (len && (pkt[0] >> 4) == 4)
		ip4_input(st, pkt, len);
	else if (len && (pkt[0] >> 4) == 6)
		ip6_input(st, pkt, len);
	else
		st->c.rx_invalid++;
}

/* The packet goes out on the TUN device, or (--xdp) in an Ethernet frame to @dst's neighbour. */
static void link_write(struct stack *st, int family, const union st_addr *dst, const void *pkt,
		       size_t len)
{
	if (st->xsk)
		xsk_output(st, family, dst, pkt, len);
	else
		tun_write(st, pkt, len);
}

void ip_output(struct stack *st, int family, const union st_addr *src, const union st_addr *dst,
	       uint8_t proto, size_t l4_len)
{
	uint8_t *h = st->tx;

	if (family == AF_INET) {
		size_t tot = 20 + l4_len;

		h[0] = 0x45;                 /* version 4, 5 words of header */
		h[1] = 0;
		h[2] = (uint8_t)(tot >> 8);
		h[3] = (uint8_t)tot;
		h[4] = h[5] = 0;             /* identification: unused, DF is set */
		h[6] = 0x40;
		h[7] = 0;
		h[8] = 64;                   /* TTL */
		h[9] = proto;
		h[10] = h[11] = 0;
		memcpy(h + 12, &src->v4, 4);
		memcpy(h + 16, &dst->v4, 4);
		uint16_t ck = csum_fold(csum_add(0, h, 20));

		h[10] = (uint8_t)(ck >> 8);
		h[11] = (uint8_t)ck;
		link_write(st, family, dst, h, tot);
	} else {
		h[0] = 0x60;                 /* version 6, traffic class and flow label 0 */
		h[1] = h[2] = h[3] = 0;
		h[4] = (uint8_t)(l4_len >> 8);
		h[5] = (uint8_t)l4_len;
		h[6] = proto;
		h[7] = 64;                   /* hop limit */
		memcpy(h + 8, &src->v6, 16);
		memcpy(h + 24, &dst->v6, 16);
		link_write(st, family, dst, h, 40 + l4_len);
	}
}

/* A socket address for socktab's calls: family, address, port (network order). */
void sockaddr_make(struct sockaddr_storage *ss, int family, const union st_addr *a,
		   uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_addr = a->v4;
		s->sin_port = port;
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_addr = a->v6;
		s->sin6_port = port;
	}
}
