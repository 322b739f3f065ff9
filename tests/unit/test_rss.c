/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * RSS-aware port choice: the Toeplitz hash against the verification vectors published with
 * Microsoft's RSS specification (also in DPDK's test suite), connect() ports that land on the
 * requested queue, checked with the plain (byte-at-a-time) hash, the counter of candidates the
 * filter passes over, and the per-queue summaries of free ports (src/rss.c): the same port as
 * the filtered search without them, the errno when a queue's share is full, and summaries that
 * agree with the busy-port index after connects, closes, TIME_WAIT takeovers and expiry.
 */
#include "check.h"
#include "portmap.h"

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

/* ---- the counter and the per-queue summaries ---- */

#define LOOP4 0x7f000001u

static struct socktab_net *rss_net(enum socktab_variant v, int lo, int hi, uint64_t *clk,
				   uint64_t seed, const uint16_t *reta, uint32_t n)
{
	struct socktab_net_params p;
	struct socktab_net *net;

	check_keyed_params(&p, v, lo, hi, clk, seed);
	p.tw_len_ms = 5000;
	net = socktab_net_new(&p);
	if (net && reta && socktab_net_set_rss(net, ms_key, sizeof(ms_key), reta, n)) {
		socktab_net_free(net);
		return NULL;
	}
	return net;
}

/* The queue of local port @port toward 127.0.0.1:@dport from 127.0.0.1. */
static int port_queue4(int port, int dport, const uint16_t *reta, uint32_t n)
{
	uint8_t in[12];
	uint32_t a = htonl(LOOP4);
	uint16_t dp = htons((uint16_t)dport), lp = htons((uint16_t)port);

	memcpy(in, &a, 4);
	memcpy(in + 4, &a, 4);
	memcpy(in + 8, &dp, 2);
	memcpy(in + 10, &lp, 2);
	return reta[socktab_rss_hash(ms_key, sizeof(ms_key), in, 12) & (n - 1)];
}

static struct socktab_rss_stats rss_stats(struct socktab_net *net)
{
	struct socktab_rss_stats st;

	memset(&st, 0xff, sizeof(st));
	if (socktab_net_rss_stats(net, &st))
		memset(&st, 0xff, sizeof(st));
	return st;
}

static struct socktab_net_stats net_stats(struct socktab_net *net)
{
	struct socktab_net_stats st;

	memset(&st, 0xff, sizeof(st));
	if (socktab_net_stats(net, &st))
		memset(&st, 0xff, sizeof(st));
	return st;
}

static struct socktab_sock *q_connect4(struct socktab_net *net, int q, int *err)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	if (!sk) {
		*err = -ENOMEM;
		return NULL;
	}
	socktab_sock_set_rss_queue(sk, q);
	*err = check_connect4(sk, "127.0.0.1", 80);
	if (*err) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

static void abort_close(struct socktab_sock *sk)
{
	struct linger lg = { 1, 0 };

	socktab_setsockopt(sk, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	socktab_close(sk);
}

static uint32_t summary_errors(struct socktab_net *net, uint32_t *nsets)
{
	return socktab__portmap_rss_check(net, nsets);
}

/*
 * The counter: a candidate on another queue counts once as rejected and is not tried; one on
 * the queue is tried; a search that finds nothing (kernel's walk over 64 ports with the
 * queue's ports all busy) passes over every port of the other queues exactly once.
 */
TEST(rss_rejected_counted)
{
	uint16_t reta[128];
	int on = -1, off = -1, nq = 0;

	for (int i = 0; i < 128; i++)
		reta[i] = (uint16_t)(i % 4);
	struct socktab_net *net =
		rss_net(SOCKTAB_VARIANT_LINUX, 40000, 40063, NULL, 3, reta, 128);

	CHECK(net);
	for (int port = 40000; port <= 40063; port++) {
		bool q2 = port_queue4(port, 80, reta, 128) == 2;

		nq += q2;
		if (q2 && on < 0)
			on = port;
		if (!q2 && off < 0)
			off = port;
	}
	CHECK(on > 0 && off > 0 && nq > 4 && nq < 32);

	struct socktab_sock *sk[64];
	struct socktab_net_stats s0 = net_stats(net), s1;
	struct socktab_rss_stats r0 = rss_stats(net), r1;
	uint32_t range = (uint32_t)off << 16 | (uint32_t)off;
	int err, n = 0;

	sk[0] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(socktab_setsockopt(sk[0], IPPROTO_IP, IP_LOCAL_PORT_RANGE, &range, sizeof(range)),
		 0);
	CHECK_EQ(socktab_sock_set_rss_queue(sk[0], 2), 0);
	CHECK_EQ(check_connect4(sk[0], "127.0.0.1", 80), -EADDRNOTAVAIL);
	socktab_close(sk[0]);
	s1 = net_stats(net);
	r1 = rss_stats(net);
	CHECK_EQ(r1.connect_rss_rejected - r0.connect_rss_rejected, 1);
	CHECK_EQ(s1.connect_ports_tried - s0.connect_ports_tried, 0);

	range = (uint32_t)on << 16 | (uint32_t)on;
	sk[0] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(socktab_setsockopt(sk[0], IPPROTO_IP, IP_LOCAL_PORT_RANGE, &range, sizeof(range)),
		 0);
	CHECK_EQ(socktab_sock_set_rss_queue(sk[0], 2), 0);
	CHECK_EQ(check_connect4(sk[0], "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(sk[0]), on);
	s0 = net_stats(net);
	r0 = rss_stats(net);
	CHECK_EQ(r0.connect_rss_rejected - r1.connect_rss_rejected, 0);
	CHECK_EQ(s0.connect_ports_tried - s1.connect_ports_tried, 1);
	n = 1;

	/* No queue asked: nothing is filtered. */
	struct socktab_sock *plain = q_connect4(net, -1, &err);

	CHECK(plain);
	CHECK_EQ(rss_stats(net).connect_rss_rejected, r0.connect_rss_rejected);
	socktab_close(plain);

	while ((sk[n] = q_connect4(net, 2, &err)) != NULL) {
		CHECK_EQ(port_queue4(check_port(sk[n]), 80, reta, 128), 2);
		n++;
	}
	CHECK_EQ(err, -EADDRNOTAVAIL);
	CHECK_EQ(n, nq);
	s0 = net_stats(net);
	r0 = rss_stats(net);
	sk[n] = q_connect4(net, 2, &err);
	CHECK(!sk[n]);
	CHECK_EQ(err, -EADDRNOTAVAIL);
	s1 = net_stats(net);
	r1 = rss_stats(net);
	CHECK_EQ(r1.connect_rss_rejected - r0.connect_rss_rejected, (uint64_t)(64 - nq));
	CHECK_EQ(s1.connect_ports_tried - s0.connect_ports_tried, (uint64_t)nq);
	/* socktab_net_stats() carries the same counter. */
	CHECK_EQ(s1.connect_rss_rejected, r1.connect_rss_rejected);
	CHECK_EQ(s1.connect_rss_rejected - s0.connect_rss_rejected, (uint64_t)(64 - nq));
	for (int i = 0; i < n; i++)
		socktab_close(sk[i]);
	socktab_net_free(net);
}

#define FQ_LO 40000
#define FQ_HI 40999

/*
 * An RSS connect() examines only its queue's ports, so its destination's index is built for a
 * walk over the queue's share: with 16 queues over 1,000 ports (about 62 a queue), at 32
 * entries, not at the whole range's 62, which 95 % of one queue's share never reaches.
 */
TEST(rss_index_for_a_queue_share)
{
	uint16_t reta[128];
	uint64_t clk = 5000000000ull;
	static struct socktab_sock *sk[FQ_HI - FQ_LO + 1];
	int nq = 0, err;
	uint32_t ni;
	uint64_t bytes;

	for (int i = 0; i < 128; i++)
		reta[i] = (uint16_t)(i % 16);
	struct socktab_net *net =
		rss_net(SOCKTAB_VARIANT_SOCKTAB, FQ_LO, FQ_HI, &clk, 11, reta, 128);

	CHECK(net);
	for (int port = FQ_LO; port <= FQ_HI; port++)
		nq += port_queue4(port, 80, reta, 128) == 1;
	CHECK(nq * 95 / 100 > 33 && nq * 95 / 100 < 62);
	for (int k = 0; k < nq * 95 / 100; k++) {
		sk[k] = q_connect4(net, 1, &err);
		CHECK(sk[k]);
		socktab__portmap_stats(net, &ni, &bytes);
		CHECK_EQ(ni, k >= 32 ? 1 : 0); /* the connect() that finds 32 entries builds it */
	}
	for (int k = 0; k < nq * 95 / 100; k++)
		socktab_close(sk[k]);
	socktab_net_free(net);
}

/*
 * Two nets over FQ_LO-FQ_HI with four queues (@reta, 128 entries, filled here), the same key and
 * clock: @net searches its destinations' indexes through their per-queue summaries, @ref only
 * filters each candidate (rss_walk_only). 0, or -1 when either could not be made.
 */
static int rss_pair4(uint16_t *reta, uint64_t *clk, struct socktab_net **net,
		     struct socktab_net **ref)
{
	for (int i = 0; i < 128; i++)
		reta[i] = (uint16_t)(i % 4);
	*net = rss_net(SOCKTAB_VARIANT_SOCKTAB, FQ_LO, FQ_HI, clk, 11, reta, 128);
	*ref = rss_net(SOCKTAB_VARIANT_SOCKTAB, FQ_LO, FQ_HI, clk, 11, reta, 128);
	if (!*net || !*ref)
		return -1;
	atomic_store(&(*ref)->rss_walk_only, 1);
	return 0;
}

/*
 * A queue's share runs out: exactly the unreserved ports of the range on that queue are handed
 * out, each once, then -EADDRNOTAVAIL without a candidate examined (the summaries show no free
 * port), where the filtered search without them passes over every free port of the other
 * queues. A port freed by close(), by a TIME_WAIT takeover and by expiry is the next one given.
 * The summaries agree with the index at every step; they go with it.
 */
TEST(rss_queue_share_full)
{
	uint16_t reta[128];
	uint64_t clk = 5000000000ull;
	static struct socktab_sock *sk[FQ_HI - FQ_LO + 1];
	static bool taken[65536];
	int nq = 0, n = 0, err;
	uint32_t nsets;

	struct socktab_net *net, *ref;

	CHECK_EQ(rss_pair4(reta, &clk, &net, &ref), 0);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_reserved_ports", "40010-40019,40500"),
		 0);
	CHECK_EQ(socktab_net_sysctl(ref, "net.ipv4.ip_local_reserved_ports", "40010-40019,40500"),
		 0);
	for (int port = FQ_LO; port <= FQ_HI; port++)
		nq += port_queue4(port, 80, reta, 128) == 1 && (port < 40010 || port > 40019) &&
		      port != 40500;
	memset(taken, 0, sizeof(taken));
	while ((sk[n] = q_connect4(net, 1, &err)) != NULL) {
		int port = check_port(sk[n]);

		CHECK_EQ(port_queue4(port, 80, reta, 128), 1);
		CHECK(!taken[port]);
		CHECK(port < 40010 || port > 40019);
		CHECK_NE(port, 40500);
		taken[port] = true;
		n++;
		CHECK(q_connect4(ref, 1, &err) != NULL);
	}
	CHECK_EQ(err, -EADDRNOTAVAIL);
	CHECK_EQ(n, nq);
	CHECK_EQ(rss_stats(net).indexes, 1);
	CHECK_EQ(rss_stats(net).index_bytes, 64 + 4 * 256);
	CHECK_EQ(rss_stats(ref).indexes, 0);
	CHECK_EQ(summary_errors(net, &nsets), 0);
	CHECK_EQ(nsets, 1);

	struct socktab_net_stats s0 = net_stats(net), s1;
	struct socktab_rss_stats r0 = rss_stats(net), r1;

	CHECK(q_connect4(net, 1, &err) == NULL);
	CHECK_EQ(err, -EADDRNOTAVAIL);
	s1 = net_stats(net);
	r1 = rss_stats(net);
	CHECK_EQ(s1.connect_ports_tried, s0.connect_ports_tried);
	/* Summaries do not know reserved ports: the two words where reserved ports of queue 1
	 * sit are scanned, the rest skipped. */
	CHECK(r1.connect_rss_rejected - r0.connect_rss_rejected <= 2 * 32);
	/* The reference: the same errno, after testing every free port of queues 0, 2, 3. */
	r0 = rss_stats(ref);
	CHECK(q_connect4(ref, 1, &err) == NULL);
	CHECK_EQ(err, -EADDRNOTAVAIL);
	CHECK(rss_stats(ref).connect_rss_rejected - r0.connect_rss_rejected > 600);

	/* close(): the freed port is the only one left on the queue. */
	int x = check_port(sk[n / 2]);

	abort_close(sk[n / 2]);
	CHECK_EQ(summary_errors(net, &nsets), 0);
	sk[n / 2] = q_connect4(net, 1, &err);
	CHECK(sk[n / 2]);
	CHECK_EQ(check_port(sk[n / 2]), x);
	CHECK_EQ(summary_errors(net, &nsets), 0);

	/* TIME_WAIT: busy until reusable (tcp_tw_reuse 2, loopback; 1 s delay), then taken over. */
	int y = check_port(sk[3]);

	CHECK_EQ(socktab_set_state(sk[3], SOCKTAB_TCP_ESTABLISHED), 0);
	CHECK_EQ(socktab_set_state(sk[3], SOCKTAB_TCP_CLOSING), 0); /* TIME_WAIT substate */
	CHECK_EQ(socktab_close(sk[3]), 0);
	CHECK_EQ(net_stats(net).time_wait, 1);
	CHECK_EQ(summary_errors(net, &nsets), 0);
	CHECK(q_connect4(net, 1, &err) == NULL);
	CHECK_EQ(err, -EADDRNOTAVAIL);
	clk += 2000000000ull;
	uint64_t recycled = net_stats(net).tw_recycled;

	sk[3] = q_connect4(net, 1, &err);
	CHECK(sk[3]);
	CHECK_EQ(check_port(sk[3]), y);
	CHECK_EQ(net_stats(net).tw_recycled, recycled + 1);
	CHECK_EQ(net_stats(net).time_wait, 0);
	CHECK_EQ(summary_errors(net, &nsets), 0);

	/* Expiry: the reaped entry's port is free in the summaries, no takeover needed. */
	int z = check_port(sk[7]);

	CHECK_EQ(socktab_set_state(sk[7], SOCKTAB_TCP_ESTABLISHED), 0);
	CHECK_EQ(socktab_set_state(sk[7], SOCKTAB_TCP_CLOSING), 0);
	CHECK_EQ(socktab_close(sk[7]), 0);
	clk += 6000000000ull;
	CHECK(socktab_net_tick(net) >= 0);
	CHECK_EQ(net_stats(net).time_wait, 0);
	CHECK_EQ(summary_errors(net, &nsets), 0);
	recycled = net_stats(net).tw_recycled;
	s0 = net_stats(net);
	sk[7] = q_connect4(net, 1, &err);
	CHECK(sk[7]);
	CHECK_EQ(check_port(sk[7]), z);
	CHECK_EQ(net_stats(net).tw_recycled, recycled);
	CHECK_EQ(net_stats(net).connect_ports_tried - s0.connect_ports_tried, 1);
	CHECK_EQ(summary_errors(net, &nsets), 0);

	/* The summaries go with the index when the destination's entries go. */
	for (int i = 0; i < n; i++)
		abort_close(sk[i]);
	socktab__synchronize_rcu();
	socktab__rcu_barrier();
	CHECK_EQ(rss_stats(net).indexes, 0);
	CHECK_EQ(rss_stats(net).index_bytes, 0);
	socktab_net_free(net);
	socktab_net_free(ref);
}

/*
 * A new RSS state: the summaries made for the old one are replaced at the next connect() and
 * freed after a grace period; ports land on the new state's queues; with RSS off, a socket that
 * asks for a queue gets -EADDRNOTAVAIL and one that does not still connects.
 */
TEST(rss_reconfigure)
{
	uint16_t reta4[128], reta16[128];
	struct socktab_sock *sk[600];
	int n = 0, err;
	uint32_t nsets;

	for (int i = 0; i < 128; i++) {
		reta4[i] = (uint16_t)(i % 4);
		reta16[i] = (uint16_t)(i % 16);
	}
	struct socktab_net *net =
		rss_net(SOCKTAB_VARIANT_SOCKTAB, FQ_LO, FQ_HI, NULL, 5, reta4, 128);

	CHECK(net);
	for (; n < 200; n++) {
		sk[n] = q_connect4(net, n % 4, &err);
		CHECK(sk[n]);
		CHECK_EQ(port_queue4(check_port(sk[n]), 80, reta4, 128), n % 4);
	}
	CHECK_EQ(rss_stats(net).indexes, 1);
	CHECK_EQ(rss_stats(net).queues, 4);
	CHECK_EQ(socktab_net_set_rss(net, ms_key, sizeof(ms_key), reta16, 128), 0);
	CHECK_EQ(rss_stats(net).queues, 16);
	for (; n < 400; n++) {
		sk[n] = q_connect4(net, n % 16, &err);
		CHECK(sk[n]);
		CHECK_EQ(port_queue4(check_port(sk[n]), 80, reta16, 128), n % 16);
	}
	socktab__synchronize_rcu();
	socktab__rcu_barrier();
	CHECK_EQ(rss_stats(net).indexes, 1);
	CHECK_EQ(rss_stats(net).index_bytes, 64 + 16 * 256);
	CHECK_EQ(summary_errors(net, &nsets), 0);
	CHECK_EQ(nsets, 1);
	CHECK_EQ(socktab_net_set_rss(net, NULL, 0, NULL, 0), 0);
	CHECK_EQ(rss_stats(net).queues, 0);
	CHECK(q_connect4(net, 3, &err) == NULL);
	CHECK_EQ(err, -EADDRNOTAVAIL);
	sk[n] = q_connect4(net, -1, &err);
	CHECK(sk[n]);
	n++;
	CHECK_EQ(summary_errors(net, &nsets), 0);
	for (int i = 0; i < n; i++)
		abort_close(sk[i]);
	socktab_net_free(net);
}

#define DLO 40000
#define DHI 41999
#define DMAX 4096

struct dpair {
	struct socktab_sock *a, *b;
	int dest;
};

static struct dpair dopen[DMAX];

static uint64_t xs(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Destinations: 0 and 1 are one (IPv4, and v4-mapped from an IPv6 socket). */
static int dconnect(struct socktab_sock *sk, int d)
{
	switch (d) {
	case 0:
		return check_connect4(sk, "127.0.0.1", 80);
	case 1:
		return check_connect6(sk, "::ffff:127.0.0.1", 80);
	case 2:
		return check_connect6(sk, "::1", 80);
	default:
		return check_connect4(sk, "127.0.0.1", 81);
	}
}

static void both(struct socktab_net *a, struct socktab_net *b, const char *key, const char *v)
{
	CHECK_EQ(socktab_net_sysctl(a, key, v), 0);
	CHECK_EQ(socktab_net_sysctl(b, key, v), 0);
}

/*
 * The differential test: a net searching with the per-queue summaries and a net filtering each
 * free port of its index (the search before the summaries), same secrets, clock and random
 * draws, run the same script: connects to four destinations (mostly the hot one) on queues
 * 0..Q-1, on a queue of no RETA entry, or on none; some with IP_LOCAL_PORT_RANGE or bound to a
 * device; abortive and graceful closes (TIME_WAIT entries, taken over or expiring); the hot
 * destination's occupancy moves through its queues' shares running out and back; reserved
 * ports and the range change, and the RSS state is replaced (16 queues, then 4 again). Every
 * connect must give the same errno and port; the summaries must agree with the index.
 */
TEST(rss_same_ports_as_reference)
{
	static const int target[] = { 700, 1150, 1400, 600, 1300, 900 };
	uint16_t reta4[128], reta16[128];
	uint64_t clk = 5000000000ull, rng = 0x9e3779b97f4a7c15ull;
	struct socktab_net *a, *b;
	struct socktab_sock *ba[2], *bb[2];
	int nopen = 0, nhot = 0, connects = 0, fails = 0, twn = 0, queues = 4, max_sets = 0;
	const uint16_t *reta = reta4;
	uint32_t nsets;

	for (int i = 0; i < 128; i++) {
		reta4[i] = (uint16_t)(i % 4);
		reta16[i] = (uint16_t)(i % 16);
	}
	a = rss_net(SOCKTAB_VARIANT_SOCKTAB, DLO, DHI, &clk, 9, reta4, 128);
	b = rss_net(SOCKTAB_VARIANT_SOCKTAB, DLO, DHI, &clk, 9, reta4, 128);
	CHECK(a && b);
	atomic_store(&a->rss_walk_only, 1);
	both(a, b, "net.ipv4.ip_local_reserved_ports", "40010-40019,40500,41999");
	ba[0] = socktab_socket(a, SOCKTAB_TCP, AF_INET);
	bb[0] = socktab_socket(b, SOCKTAB_TCP, AF_INET);
	ba[1] = socktab_socket(a, SOCKTAB_TCP, AF_INET6);
	bb[1] = socktab_socket(b, SOCKTAB_TCP, AF_INET6);
	CHECK_EQ(check_bind4(ba[0], "127.0.0.1", 40100), 0);
	CHECK_EQ(check_bind4(bb[0], "127.0.0.1", 40100), 0);
	CHECK_EQ(check_bind6(ba[1], "::", 40201), 0);
	CHECK_EQ(check_bind6(bb[1], "::", 40201), 0);

	for (size_t ph = 0; ph < sizeof(target) / sizeof(target[0]); ph++) {
		if (ph == 2) {
			both(a, b, "net.ipv4.ip_local_reserved_ports", "40010-40019,40600-40650");
		} else if (ph == 3) {
			CHECK_EQ(socktab_net_set_rss(a, ms_key, sizeof(ms_key), reta16, 128), 0);
			CHECK_EQ(socktab_net_set_rss(b, ms_key, sizeof(ms_key), reta16, 128), 0);
			reta = reta16;
			queues = 16;
		} else if (ph == 4) {
			CHECK_EQ(socktab_net_set_rss(a, ms_key, sizeof(ms_key), reta4, 128), 0);
			CHECK_EQ(socktab_net_set_rss(b, ms_key, sizeof(ms_key), reta4, 128), 0);
			reta = reta4;
			queues = 4;
			CHECK_EQ(socktab_net_set_port_range(a, DLO - 100, DHI + 100), 0);
			CHECK_EQ(socktab_net_set_port_range(b, DLO - 100, DHI + 100), 0);
		}
		for (int step = 0; step < 2500; step++) {
			uint64_t r = xs(&rng);
			int d = (int)(r % 10 < 8 ? (r >> 8) % 2 : 2 + (r >> 8) % 2);
			bool hot = d < 2, do_connect = hot ? nhot < target[ph] : (r >> 16) % 3 != 0;

			if (r % 61 == 0)
				clk += 1000000000ull;
			if (r % 503 == 0) {
				CHECK_EQ(socktab_net_tick(a), socktab_net_tick(b));
			}
			if (do_connect && nopen < DMAX) {
				struct dpair *t = &dopen[nopen];
				int fam = d == 0 || d == 3 ? AF_INET : AF_INET6, q, ea, eb;
				uint64_t seed = xs(&rng), k = (r >> 20) % 20;

				/* Mostly queues 0 and 1 toward the hot destination: their shares
				 * run out first. */
				q = k == 0 ? -1 : k == 1 ? 99 : k < 12 ? (int)(k & 1)
							 : (int)((r >> 28) % (uint64_t)queues);
				t->a = socktab_socket(a, SOCKTAB_TCP, fam);
				t->b = socktab_socket(b, SOCKTAB_TCP, fam);
				CHECK(t->a && t->b);
				CHECK_EQ(socktab_sock_set_rss_queue(t->a, q), 0);
				CHECK_EQ(socktab_sock_set_rss_queue(t->b, q), 0);
				if ((r >> 36) % 10 == 0) { /* R64: per-socket range, step 1 */
					uint32_t slo = DLO + (uint32_t)((r >> 40) % 1500), rg;

					rg = (slo + 400) << 16 | slo;
					CHECK_EQ(socktab_setsockopt(t->a, IPPROTO_IP,
								    IP_LOCAL_PORT_RANGE, &rg,
								    sizeof(rg)),
						 0);
					CHECK_EQ(socktab_setsockopt(t->b, IPPROTO_IP,
								    IP_LOCAL_PORT_RANGE, &rg,
								    sizeof(rg)),
						 0);
				}
				if ((r >> 44) % 40 == 0) { /* SO_BINDTODEVICE: the plain walk */
					CHECK_EQ(check_setint(t->a, SOL_SOCKET, SO_BINDTOIFINDEX,
							      1), 0);
					CHECK_EQ(check_setint(t->b, SOL_SOCKET, SO_BINDTOIFINDEX,
							      1), 0);
				}
				socktab__random_seed(seed);
				ea = dconnect(t->a, d);
				socktab__random_seed(seed);
				eb = dconnect(t->b, d);
				CHECK_EQ(eb, ea);
				connects++;
				if (ea) {
					CHECK_EQ(ea, -EADDRNOTAVAIL);
					fails++;
					socktab_close(t->a);
					socktab_close(t->b);
					continue;
				}
				CHECK_EQ(check_port(t->b), check_port(t->a));
				if (q >= 0 && fam == AF_INET && d == 0)
					CHECK_EQ(port_queue4(check_port(t->a), 80, reta, 128), q);
				t->dest = d;
				nhot += hot;
				nopen++;
			} else if (nopen) {
				int k = (int)((r >> 40) % (uint64_t)nopen);
				struct dpair *t = &dopen[k];

				nhot -= t->dest < 2;
				if ((r >> 32) % 4 == 0) { /* graceful: a TIME_WAIT entry */
					int st = (r >> 34) % 2 ? SOCKTAB_TCP_CLOSING
							       : SOCKTAB_TCP_ESTABLISHED;

					CHECK_EQ(socktab_set_state(t->a, SOCKTAB_TCP_ESTABLISHED),
						 0);
					CHECK_EQ(socktab_set_state(t->b, SOCKTAB_TCP_ESTABLISHED),
						 0);
					CHECK_EQ(socktab_set_state(t->a, st), 0);
					CHECK_EQ(socktab_set_state(t->b, st), 0);
					socktab_close(t->a);
					socktab_close(t->b);
					twn++;
				} else {
					abort_close(t->a);
					abort_close(t->b);
				}
				dopen[k] = dopen[--nopen];
			}
			if (step % 500 == 499) {
				CHECK_EQ(summary_errors(b, &nsets), 0);
				if ((int)nsets > max_sets)
					max_sets = (int)nsets;
			}
		}
	}
	struct socktab_net_stats sa = net_stats(a), sb = net_stats(b);
	struct socktab_rss_stats ra = rss_stats(a), rb = rss_stats(b);

	printf("rss_same_ports_as_reference: %d connects (%d EADDRNOTAVAIL), %d TIME_WAIT, "
	       "%llu taken over; rejected: reference %llu, summaries %llu; summary sets %d\n",
	       connects, fails, twn, (unsigned long long)sb.tw_recycled,
	       (unsigned long long)ra.connect_rss_rejected,
	       (unsigned long long)rb.connect_rss_rejected, max_sets);
	CHECK_EQ(sa.tw_recycled, sb.tw_recycled);
	CHECK_EQ(sa.time_wait, sb.time_wait);
	CHECK_EQ(sa.connect_ports_tried, sb.connect_ports_tried);
	CHECK(connects > 5000);
	CHECK(fails > 100);
	CHECK(sb.tw_recycled > 0);
	CHECK(max_sets >= 1);
	CHECK_EQ(ra.indexes, 0);
	CHECK(rb.connect_rss_rejected < ra.connect_rss_rejected);
	for (int k = 0; k < nopen; k++) {
		abort_close(dopen[k].a);
		abort_close(dopen[k].b);
	}
	for (int k = 0; k < 2; k++) {
		socktab_close(ba[k]);
		socktab_close(bb[k]);
	}
	socktab_net_free(a);
	socktab_net_free(b);
}

/*
 * socktab_net_rss_queue(): the queue of each verification vector's packet is the RETA entry its
 * TCP hash picks, IPv4, IPv6 and v4-mapped; none without RSS state; bad arguments refused.
 */
TEST(rss_queue_of_a_packet)
{
	static const uint16_t reta[8] = { 3, 1, 4, 1, 5, 9, 2, 6 };
	struct socktab_net *net = socktab_net_new(NULL);
	struct in6_addr s6, d6;
	uint32_t s4, d4;

	CHECK(net);
	inet_pton(AF_INET, v4vecs[0].src, &s4);
	inet_pton(AF_INET, v4vecs[0].dst, &d4);
	CHECK_EQ(socktab_net_rss_queue(net, AF_INET, &s4, htons(v4vecs[0].sport), &d4,
				       htons(v4vecs[0].dport)), -ENOENT);
	CHECK_EQ(socktab_net_set_rss(net, ms_key, sizeof(ms_key), reta, 8), 0);
	for (size_t i = 0; i < sizeof(v4vecs) / sizeof(v4vecs[0]); i++) {
		inet_pton(AF_INET, v4vecs[i].src, &s4);
		inet_pton(AF_INET, v4vecs[i].dst, &d4);
		CHECK_EQ(socktab_net_rss_queue(net, AF_INET, &s4, htons(v4vecs[i].sport), &d4,
					       htons(v4vecs[i].dport)),
			 reta[v4vecs[i].with_tcp & 7]);
		/* The same packet seen by an IPv6 socket: v4-mapped, hashed as IPv4. */
		socktab__v6_map(&s6, s4);
		socktab__v6_map(&d6, d4);
		CHECK_EQ(socktab_net_rss_queue(net, AF_INET6, &s6, htons(v4vecs[i].sport), &d6,
					       htons(v4vecs[i].dport)),
			 reta[v4vecs[i].with_tcp & 7]);
	}
	for (size_t i = 0; i < sizeof(v6vecs) / sizeof(v6vecs[0]); i++) {
		inet_pton(AF_INET6, v6vecs[i].src, &s6);
		inet_pton(AF_INET6, v6vecs[i].dst, &d6);
		CHECK_EQ(socktab_net_rss_queue(net, AF_INET6, &s6, htons(v6vecs[i].sport), &d6,
					       htons(v6vecs[i].dport)),
			 reta[v6vecs[i].with_tcp & 7]);
	}
	/* Another key, and a RETA as long as the hash is wide in its low 16 bits: each queue is
	 * the bit-by-bit hash's, for random IPv4 and IPv6 packets. */
	{
		static uint16_t big[65536];
		uint8_t key[40], in[36];
		uint64_t x = 0x2545f4914f6cdd1dull;

		for (int i = 0; i < 40; i++)
			key[i] = (uint8_t)(x = x * 6364136223846793005ull + 1, x >> 56);
		for (int i = 0; i < 65536; i++)
			big[i] = (uint16_t)i;
		CHECK_EQ(socktab_net_set_rss(net, key, sizeof(key), big, 65536), 0);
		for (int n = 0; n < 2000; n++) {
			uint16_t sp, dp;

			for (int i = 0; i < 36; i++)
				in[i] = (uint8_t)(x = x * 6364136223846793005ull + 1, x >> 56);
			memcpy(&sp, in + 32, 2);
			memcpy(&dp, in + 34, 2);
			memcpy(&s6, in, 16);
			memcpy(&d6, in + 16, 16);
			CHECK_EQ(socktab_net_rss_queue(net, AF_INET6, &s6, sp, &d6, dp),
				 (int)(socktab_rss_hash(key, sizeof(key), in, 36) & 0xffff));
			memcpy(&s4, in, 4);
			memcpy(&d4, in + 4, 4);
			memcpy(in + 8, &sp, 2);
			memcpy(in + 10, &dp, 2);
			CHECK_EQ(socktab_net_rss_queue(net, AF_INET, &s4, sp, &d4, dp),
				 (int)(socktab_rss_hash(key, sizeof(key), in, 12) & 0xffff));
		}
	}
	CHECK_EQ(socktab_net_rss_queue(NULL, AF_INET, &s4, 1, &d4, 2), -EINVAL);
	CHECK_EQ(socktab_net_rss_queue(net, AF_UNIX, &s4, 1, &d4, 2), -EINVAL);
	CHECK_EQ(socktab_net_rss_queue(net, AF_INET, NULL, 1, &d4, 2), -EINVAL);
	CHECK_EQ(socktab_net_rss_queue(net, AF_INET, &s4, 1, NULL, 2), -EINVAL);
	CHECK_EQ(socktab_net_set_rss(net, NULL, 0, NULL, 0), 0);
	CHECK_EQ(socktab_net_rss_queue(net, AF_INET, &s4, 1, &d4, 2), -ENOENT);
	socktab_net_free(net);
}

/*
 * RSS and a port share together (socktab_thread_set_port_share): only the queue's ports, the
 * share's before the others' in each parity pass, every one once, then -EADDRNOTAVAIL; the search
 * through the index's per-queue summaries and the filtered one without them give the same ports.
 */
TEST(rss_with_port_share)
{
	uint16_t reta[128];
	uint64_t clk = 5000000000ull;
	static struct socktab_sock *sk[FQ_HI - FQ_LO + 2], *rk[FQ_HI - FQ_LO + 2];
	static bool taken[65536];
	int cnt[2][2] = { { 0 } }, n = 0, k = 0, err;

	struct socktab_net *net, *ref;

	CHECK_EQ(rss_pair4(reta, &clk, &net, &ref), 0);
	/* Port p's share of 2 is bit 9: 40000-40447 share 0, 40448-40959 share 1, then 0. */
	for (int port = FQ_LO; port <= FQ_HI; port++)
		if (port_queue4(port, 80, reta, 128) == 1)
			cnt[port % 2][(port >> 9) & 1]++;
	int ends[4] = { cnt[0][1], cnt[0][1] + cnt[0][0], cnt[0][1] + cnt[0][0] + cnt[1][1],
			cnt[0][1] + cnt[0][0] + cnt[1][1] + cnt[1][0] };

	CHECK(cnt[0][1] > 0 && cnt[0][0] > 0 && cnt[1][1] > 0 && cnt[1][0] > 0);
	CHECK_EQ(socktab_thread_set_port_share(1, 2), 0);
	memset(taken, 0, sizeof(taken));
	/* Each connect() of the pair draws the same jitter (R57). */
	for (;; n++) {
		socktab__random_seed((uint64_t)n + 1);
		if (!(sk[n] = q_connect4(net, 1, &err)))
			break;
		int port = check_port(sk[n]);

		CHECK_EQ(port_queue4(port, 80, reta, 128), 1);
		CHECK(!taken[port]);
		taken[port] = true;
		while (n >= ends[k])
			k++;
		CHECK_EQ(port % 2, k >= 2);
		CHECK_EQ((port >> 9) & 1, k % 2 == 0);
		socktab__random_seed((uint64_t)n + 1);
		rk[n] = q_connect4(ref, 1, &err);
		CHECK(rk[n] != NULL);
		CHECK_EQ(check_port(rk[n]), port);
	}
	CHECK_EQ(err, -EADDRNOTAVAIL);
	CHECK_EQ(n, ends[3]);
	CHECK(q_connect4(ref, 1, &err) == NULL);
	CHECK_EQ(err, -EADDRNOTAVAIL);
	CHECK_EQ(socktab_thread_set_port_share(0, 1), 0);
	socktab__random_seed(0);
	for (int i = 0; i < n; i++) {
		socktab_close(sk[i]);
		socktab_close(rk[i]);
	}
	socktab_net_free(net);
	socktab_net_free(ref);
}

CHECK_MAIN(toeplitz_ms_vectors_v4, toeplitz_ms_vectors_v6, rss_ports_land_on_queue, rss_api_errors,
	   rss_rejected_counted, rss_index_for_a_queue_share, rss_queue_share_full, rss_reconfigure, rss_same_ports_as_reference,
	   rss_queue_of_a_packet, rss_with_port_share)
