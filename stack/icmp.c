/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ICMP and ICMPv6: echo replies (so `ping` works) and the port unreachable error a datagram to
 * a closed UDP port gets (RFC 1122 3.2.2.1, RFC 4443 3.1). The kernel that sent the datagram
 * matches the error to its socket by the quoted headers, so a connected UDP socket there sees
 * ECONNREFUSED. Errors are rate-limited as the kernel limits them (icmp_msgs_per_sec = 1000,
 * icmp_msgs_burst = 50), so a flood of datagrams cannot make us flood back.
 */
#include <string.h>

#include "stack.h"

#define ICMP_RATE 1000.0 /* errors per second */
#define ICMP_BURST 50.0

/* Checksum over an ICMP message: plain for IPv4, with the pseudo-header for ICMPv6. */
static uint16_t icmp_csum(const struct pkt *p, const union st_addr *src,
			  const union st_addr *dst, const uint8_t *m, size_t len)
{
	uint32_t sum = 0;

	if (p->family == AF_INET6)
		sum = csum_pseudo(AF_INET6, src, dst, IPPROTO_ICMPV6, len);
	return csum_fold(csum_add(sum, m, len));
}

void icmp_input(struct stack *st, const struct pkt *p)
{
	uint8_t req = p->family == AF_INET ? 8 : 128;     /* echo request */
	uint8_t rep = p->family == AF_INET ? 0 : 129;     /* echo reply */
	size_t hl = ip_hdr_len(p->family);
	uint8_t *m = st->tx + hl;

	if (p->l4_len < 8 || hl + p->l4_len > ST_MTU ||
	    icmp_csum(p, &p->src, &p->dst, p->l4, p->l4_len) != 0) {
		st->c.rx_invalid++;
		return;
	}
	if (p->l4[0] != req || p->l4[1] != 0)
		return; /* errors and anything else: nothing to do in this model */
	memcpy(m, p->l4, p->l4_len);
	m[0] = rep;
	m[2] = m[3] = 0;
	uint16_t ck = icmp_csum(p, &p->dst, &p->src, m, p->l4_len);

	m[2] = (uint8_t)(ck >> 8);
	m[3] = (uint8_t)ck;
	ip_output(st, p->family, &p->dst, &p->src, p->proto, p->l4_len);
	st->c.icmp_echo_replies++;
}

/* Token bucket: true if an error may go now. */
static bool icmp_allow(struct stack *st)
{
	double dt = (double)(st->now_ns - st->icmp_refill_ns) / 1e9;

	st->icmp_refill_ns = st->now_ns;
	st->icmp_tokens += dt * ICMP_RATE;
	if (st->icmp_tokens > ICMP_BURST)
		st->icmp_tokens = ICMP_BURST;
	if (st->icmp_tokens < 1.0) {
		st->c.icmp_ratelimited++;
		return false;
	}
	st->icmp_tokens -= 1.0;
	return true;
}

/* Port unreachable for the datagram @p: as much of it as fits in 576 bytes (IPv4) or the
 * minimum MTU of 1280 (IPv6). */
void icmp_port_unreach(struct stack *st, const struct pkt *p)
{
	size_t hl = ip_hdr_len(p->family);
	size_t max = p->family == AF_INET ? 576 : 1280;
	size_t quote = p->l3_len;
	uint8_t *m = st->tx + hl;

	if (!icmp_allow(st))
		return;
	if (quote > max - hl - 8)
		quote = max - hl - 8;
	memset(m, 0, 8);
	m[0] = p->family == AF_INET ? 3 : 1;  /* destination unreachable */
	m[1] = p->family == AF_INET ? 3 : 4;  /* port unreachable */
	memcpy(m + 8, p->l3, quote);
	uint16_t ck = icmp_csum(p, &p->dst, &p->src, m, 8 + quote);

	m[2] = (uint8_t)(ck >> 8);
	m[3] = (uint8_t)ck;
	ip_output(st, p->family, &p->dst, &p->src,
		  p->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6, 8 + quote);
	st->c.icmp_unreach_sent++;
}
