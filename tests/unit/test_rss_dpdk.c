/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab_rss_hash() against DPDK's rte_softrss() (rte_thash.h), the software Toeplitz hash a
 * DPDK stack checks its NIC's RSS with: for IPv4 and IPv6 4-tuples, with the Microsoft
 * verification key and a random one, the two give the same value. rte_softrss takes the tuple
 * as host-order 32-bit words (struct rte_ipv4_tuple / rte_ipv6_tuple) and the key as the port
 * reports it; socktab_rss_hash() takes the same fields as they are on the wire (network order).
 * Built only where libdpdk-dev is installed.
 */
#include <arpa/inet.h>
#include <rte_thash.h>

#include "check.h"

static const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* The wire form of an IPv4 tuple (source = the peer), as socktab_rss_hash() takes it. */
static uint32_t socktab4(const uint8_t *key, const struct rte_ipv4_tuple *t)
{
	uint8_t in[12];
	uint32_t s = htonl(t->src_addr), d = htonl(t->dst_addr);
	uint16_t sp = htons(t->sport), dp = htons(t->dport);

	memcpy(in, &s, 4);
	memcpy(in + 4, &d, 4);
	memcpy(in + 8, &sp, 2);
	memcpy(in + 10, &dp, 2);
	return socktab_rss_hash(key, 40, in, sizeof(in));
}

/* rte_ipv6_tuple keeps the addresses as bytes; rte_softrss wants host-order words. */
static uint32_t dpdk6(const uint8_t *key, const uint8_t *src, const uint8_t *dst, uint16_t sport,
		      uint16_t dport)
{
	union rte_thash_tuple t;

	memset(&t, 0, sizeof(t));
	for (int i = 0; i < 4; i++) {
		uint32_t a, b;

		memcpy(&a, src + 4 * i, 4);
		memcpy(&b, dst + 4 * i, 4);
		((uint32_t *)t.v6.src_addr)[i] = ntohl(a);
		((uint32_t *)t.v6.dst_addr)[i] = ntohl(b);
	}
	t.v6.sport = sport;
	t.v6.dport = dport;
	return rte_softrss((uint32_t *)&t, RTE_THASH_V6_L4_LEN, key);
}

static uint32_t socktab6(const uint8_t *key, const uint8_t *src, const uint8_t *dst,
			 uint16_t sport, uint16_t dport)
{
	uint8_t in[36];
	uint16_t sp = htons(sport), dp = htons(dport);

	memcpy(in, src, 16);
	memcpy(in + 16, dst, 16);
	memcpy(in + 32, &sp, 2);
	memcpy(in + 34, &dp, 2);
	return socktab_rss_hash(key, 40, in, sizeof(in));
}

TEST(verification_vector)
{
	/* The Microsoft RSS verification suite: 66.9.149.187:2794 -> 161.142.100.80:1766. */
	struct rte_ipv4_tuple t = { .src_addr = 0x420995bb, .dst_addr = 0xa18e6450, .sport = 2794,
				    .dport = 1766 };

	CHECK_EQ(socktab4(ms_key, &t), 0x51ccc178u);
	CHECK_EQ(rte_softrss((uint32_t *)&t, RTE_THASH_V4_L4_LEN, ms_key), 0x51ccc178u);
}

TEST(random_tuples_agree)
{
	uint8_t key[40];
	int bad4 = 0, bad6 = 0;

	for (int k = 0; k < 2; k++) {
		if (k == 0)
			memcpy(key, ms_key, sizeof(key));
		else
			for (int i = 0; i < 40; i++)
				key[i] = (uint8_t)rnd();
		for (int n = 0; n < 4000; n++) {
			struct rte_ipv4_tuple t = { .src_addr = rnd(), .dst_addr = rnd(),
						    .sport = (uint16_t)rnd(),
						    .dport = (uint16_t)rnd() };
			uint8_t s6[16], d6[16];

			bad4 += socktab4(key, &t) !=
				rte_softrss((uint32_t *)&t, RTE_THASH_V4_L4_LEN, key);
			for (int i = 0; i < 16; i++) {
				s6[i] = (uint8_t)rnd();
				d6[i] = (uint8_t)rnd();
			}
			bad6 += socktab6(key, s6, d6, t.sport, t.dport) !=
				dpdk6(key, s6, d6, t.sport, t.dport);
		}
	}
	CHECK_EQ(bad4, 0);
	CHECK_EQ(bad6, 0);
}

CHECK_MAIN(verification_vector, random_tuples_agree)
