/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * RSS-aware port choice (issue 6): the Toeplitz hash against the verification vectors published
 * with Microsoft's RSS specification (also in DPDK's test suite), and connect() ports that land
 * on the requested queue, checked with the plain (byte-at-a-time) hash.
 */
#include "check.h"

static const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct v4vec {
	const char *dst, *src;
	uint16_t dport, sport;
	uint32_t ip_only, with_tcp;
};

static const struct v4vec v4vecs[] = {
	{ "161.142.100.80", "66.9.149.187", 1766, 2794, 0x323e8fc2, 0x51ccc178 },
	{ "65.69.140.83", "199.92.111.2", 4739, 14230, 0xd718262a, 0xc626b0ea },
	{ "12.22.207.184", "24.19.198.95", 38024, 12898, 0xd2d0a5de, 0x5c2b394a },
	{ "209.142.163.6", "38.27.205.30", 2217, 48228, 0x82989176, 0xafc7327f },
	{ "202.188.127.2", "153.39.163.191", 1303, 44251, 0x5d1809c5, 0x10e828a2 },
};

struct v6vec {
	const char *dst, *src;
	uint16_t dport, sport;
	uint32_t ip_only, with_tcp;
};

static const struct v6vec v6vecs[] = {
	{ "3ffe:2501:200:3::1", "3ffe:2501:200:1fff::7", 1766, 2794, 0x2cc18cd5, 0x40207d3d },
	{ "ff02::1", "3ffe:501:8::260:97ff:fe40:efab", 4739, 14230, 0x0f0c461c, 0xdde51bbf },
	{ "fe80::200:f8ff:fe21:67cf", "3ffe:1900:4545:3:200:f8ff:fe21:67cf", 38024, 44251,
	  0x4b61e985, 0x02d1feef },
};

TEST(toeplitz_ms_vectors_v4)
{
	for (size_t i = 0; i < sizeof(v4vecs) / sizeof(v4vecs[0]); i++) {
		uint8_t in[12];
		uint16_t sp = htons(v4vecs[i].sport), dp = htons(v4vecs[i].dport);

		inet_pton(AF_INET, v4vecs[i].src, in);
		inet_pton(AF_INET, v4vecs[i].dst, in + 4);
		memcpy(in + 8, &sp, 2);
		memcpy(in + 10, &dp, 2);
		CHECK_EQ(socktab_rss_hash(ms_key, sizeof(ms_key), in, 8), v4vecs[i].ip_only);
		CHECK_EQ(socktab_rss_hash(ms_key, sizeof(ms_key), in, 12), v4vecs[i].with_tcp);
	}
}

TEST(toeplitz_ms_vectors_v6)
{
	for (size_t i = 0; i < sizeof(v6vecs) / sizeof(v6vecs[0]); i++) {
		uint8_t in[36];
		uint16_t sp = htons(v6vecs[i].sport), dp = htons(v6vecs[i].dport);

		inet_pton(AF_INET6, v6vecs[i].src, in);
		inet_pton(AF_INET6, v6vecs[i].dst, in + 16);
		memcpy(in + 32, &sp, 2);
		memcpy(in + 34, &dp, 2);
		CHECK_EQ(socktab_rss_hash(ms_key, sizeof(ms_key), in, 32), v6vecs[i].ip_only);
		CHECK_EQ(socktab_rss_hash(ms_key, sizeof(ms_key), in, 36), v6vecs[i].with_tcp);
	}
}

/* The queue a reply to @sk would reach, by the plain hash of its tuple. */
static int reply_queue(struct socktab_sock *sk, int family, const uint16_t *reta, uint32_t n)
{
	uint8_t in[36];
	size_t len;

	if (family == AF_INET) {
		struct sockaddr_in me, peer;
		socklen_t l1 = sizeof(me), l2 = sizeof(peer);

		socktab_getsockname(sk, (struct sockaddr *)&me, &l1);
		socktab_sock_peer(sk, (struct sockaddr *)&peer, &l2);
		memcpy(in, &peer.sin_addr, 4);
		memcpy(in + 4, &me.sin_addr, 4);
		memcpy(in + 8, &peer.sin_port, 2);
		memcpy(in + 10, &me.sin_port, 2);
		len = 12;
	} else {
		struct sockaddr_in6 me, peer;
		socklen_t l1 = sizeof(me), l2 = sizeof(peer);

		socktab_getsockname(sk, (struct sockaddr *)&me, &l1);
		socktab_sock_peer(sk, (struct sockaddr *)&peer, &l2);
		memcpy(in, &peer.sin6_addr, 16);
		memcpy(in + 16, &me.sin6_addr, 16);
		memcpy(in + 32, &peer.sin6_port, 2);
		memcpy(in + 34, &me.sin6_port, 2);
		len = 36;
	}
	return reta[socktab_rss_hash(ms_key, sizeof(ms_key), in, len) & (n - 1)];
}

/* Every port chosen with the option lands on the requested queue (100 %), v4 and v6, and the
 * usual rules (range, uniqueness) hold; running out gives -EADDRNOTAVAIL. */
TEST(rss_ports_land_on_queue)
{
	uint16_t reta[128];

	for (int i = 0; i < 128; i++)
		reta[i] = (uint16_t)(i % 16);
	for (int v = 0; v < 2; v++) {
		struct socktab_net_params p;

		socktab_net_params_init(&p);
		p.port_low = 40000;
		p.port_high = 43999;
		p.variant = v ? SOCKTAB_VARIANT_LINUX : SOCKTAB_VARIANT_SOCKTAB;
		struct socktab_net *net = socktab_net_new(&p);
		struct socktab_sock *s[400];
		int n = 0;

		CHECK_EQ(socktab_net_set_rss(net, ms_key, sizeof(ms_key), reta, 128), 0);
		for (int i = 0; i < 400; i++) {
			int fam = i & 1 ? AF_INET6 : AF_INET, q = i % 16;

			s[n] = socktab_socket(net, SOCKTAB_TCP, fam);
			CHECK_EQ(socktab_sock_set_rss_queue(s[n], q), 0);
			CHECK_EQ(fam == AF_INET ? check_connect4(s[n], "127.0.0.1", 80)
						: check_connect6(s[n], "::1", 80),
				 0);
			int port = check_port(s[n]);

			CHECK(port >= 40000 && port <= 43999);
			CHECK_EQ(reply_queue(s[n], fam, reta, 128), q);
			n++;
		}
		/* One queue of a 1/16 share: about 250 ports per family and queue exist in a
		 * 4000-port range, so 300 more connects to queue 3 must run out. */
		int fails = 0, ok = 0;

		for (int i = 0; i < 300; i++) {
			struct socktab_sock *x = socktab_socket(net, SOCKTAB_TCP, AF_INET);

			socktab_sock_set_rss_queue(x, 3);
			int err = check_connect4(x, "127.0.0.1", 80);

			if (err == 0) {
				ok++;
				CHECK_EQ(reply_queue(x, AF_INET, reta, 128), 3);
			} else {
				CHECK_EQ(err, -EADDRNOTAVAIL);
				fails++;
			}
			if (err)
				socktab_close(x);
		}
		CHECK(fails > 0 && ok > 100);
		socktab_net_free(net);
	}
}

TEST(rss_api_errors)
{
	struct socktab_net *net = socktab_net_new(NULL);
	uint16_t reta[8] = { 0 };
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	CHECK_EQ(socktab_net_set_rss(net, ms_key, 39, reta, 8), -EINVAL);
	CHECK_EQ(socktab_net_set_rss(net, ms_key, 40, reta, 6), -EINVAL);
	CHECK_EQ(socktab_net_set_rss(net, ms_key, 40, NULL, 8), -EINVAL);
	CHECK_EQ(socktab_net_set_rss(NULL, ms_key, 40, reta, 8), -EINVAL);
	CHECK_EQ(socktab_sock_set_rss_queue(sk, -2), -EINVAL);
	/* A queue without RSS configured: no port qualifies. */
	CHECK_EQ(socktab_sock_set_rss_queue(sk, 1), 0);
	CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(socktab_net_set_rss(net, ms_key, 40, reta, 8), 0);
	CHECK_EQ(socktab_sock_set_rss_queue(sk, 0), 0);
	CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), 0); /* every RETA entry is queue 0 */
	CHECK_EQ(socktab_net_set_rss(net, NULL, 0, NULL, 0), 0);
	socktab_close(sk);
	CHECK_EQ(socktab_sock_set_rss_queue(sk, 0), -EBADF);
	socktab_net_free(net);
}

CHECK_MAIN(toeplitz_ms_vectors_v4, toeplitz_ms_vectors_v6, rss_ports_land_on_queue, rss_api_errors)
