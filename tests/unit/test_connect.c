/* SPDX-License-Identifier: BSD-2-Clause */
/* connect() port choice: spec R51-R60, R64, R66 and observables O1, O2, O4, O5. */
#include <pthread.h>
#include <stdbool.h>

#include "check.h"

#define MAXS 256

static void close_all(struct socktab_sock **s, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i])
			socktab_close(s[i]);
}

/* The example: a 10-port range gives 10 distinct in-range ports, even ones first; the
 * 11th connect to the same destination fails with -EADDRNOTAVAIL. */
TEST(ten_port_range_exhausts)
{
	struct socktab_net *net = check_net(40000, 40009, NULL);
	struct socktab_sock *s[11];
	int seen[10] = { 0 };

	CHECK(net);
	for (int i = 0; i < 10; i++) {
		s[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK(s[i]);
		CHECK_EQ(check_connect4(s[i], "127.0.0.1", 80), 0);
		int p = check_port(s[i]);

		CHECK(p >= 40000 && p <= 40009);
		CHECK_EQ(seen[p - 40000], 0);
		seen[p - 40000] = 1;
		/* R54: every even (same parity as low) port goes before any odd one. */
		CHECK_EQ(p % 2, i < 5 ? 0 : 1);
	}
	s[10] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_connect4(s[10], "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(socktab_get_state(s[10]), SOCKTAB_TCP_CLOSE);
	CHECK_EQ(check_port(s[10]), 0);
	/* O4: a second destination reuses the ports. */
	CHECK_EQ(check_connect4(s[10], "127.0.0.1", 81), 0);
	close_all(s, 11);
	socktab_net_free(net);
}

/* After an abortive close the port is usable again at once. */
TEST(abortive_close_frees_port)
{
	struct socktab_net *net = check_net(40000, 40001, NULL);
	struct socktab_sock *a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct linger lg = { 1, 0 };
	int pa;

	CHECK_EQ(check_connect4(a, "127.0.0.1", 80), 0);
	CHECK_EQ(check_connect4(b, "127.0.0.1", 80), 0);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), -EADDRNOTAVAIL);
	pa = check_port(a);
	CHECK_EQ(socktab_set_state(a, SOCKTAB_TCP_ESTABLISHED), 0);
	CHECK_EQ(socktab_setsockopt(a, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	CHECK_EQ(socktab_close(a), 0);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(c), pa);
	socktab_close(b);
	socktab_close(c);
	socktab_net_free(net);
}

/* O1/O2: default mode gives even ports, increasing by 2..16 toward one destination. */
TEST(parity_and_sequence)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s[50];
	int prev = -1;

	for (int i = 0; i < 50; i++) {
		s[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(s[i], "127.0.0.1", 80), 0);
		int p = check_port(s[i]);

		CHECK(p >= 32768 && p <= 60999);
		CHECK_EQ(p % 2, 0);
		if (prev >= 0) {
			int d = p - prev;

			if (d < 0) /* wrapped inside the range */
				d += 60999 - 32768 + 1;
			CHECK(d >= 2 && d <= 16);
		}
		prev = p;
	}
	close_all(s, 50);
	socktab_net_free(net);
}

/* O1: any nonzero IP_LOCAL_PORT_RANGE switches to step 1 (both parities), inside the bounds. */
TEST(per_socket_range_both_parities)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s[60];
	int odd = 0, even = 0;
	uint32_t r = (40099u << 16) | 40000u;

	for (int i = 0; i < 60; i++) {
		s[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(socktab_setsockopt(s[i], IPPROTO_IP, IP_LOCAL_PORT_RANGE, &r, sizeof(r)),
			 0);
		CHECK_EQ(check_connect4(s[i], "127.0.0.1", 80), 0);
		int p = check_port(s[i]);

		CHECK(p >= 40000 && p <= 40099);
		if (p & 1)
			odd++;
		else
			even++;
	}
	CHECK(odd > 0 && even > 0);
	close_all(s, 60);
	socktab_net_free(net);
}

/* R64/15.3: bounds outside the net range are ignored, but parity is still off. */
TEST(per_socket_range_outside_ignored)
{
	struct socktab_net *net = check_net(40000, 40009, NULL);
	struct socktab_sock *s[10] = { 0 };
	uint32_t r = (2u << 16) | 1u; /* lo=1, hi=2: both outside */
	int odd = 0;

	for (int i = 0; i < 10; i++) {
		s[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		socktab_setsockopt(s[i], IPPROTO_IP, IP_LOCAL_PORT_RANGE, &r, sizeof(r));
		CHECK_EQ(check_connect4(s[i], "127.0.0.1", 80), 0);
		int p = check_port(s[i]);

		CHECK(p >= 40000 && p <= 40009);
		odd += p & 1;
		if (i < 5 && odd) /* with step 1, an odd port can come before all evens are used */
			break;
	}
	CHECK(odd > 0);
	for (int i = 0; i < 10; i++)
		if (s[i] && socktab_get_state(s[i]) > 0)
			socktab_close(s[i]);
	socktab_net_free(net);
}

/* R66: reserved ports are never chosen by connect(). */
TEST(reserved_ports_skipped)
{
	struct socktab_net *net = check_net(40000, 40009, NULL);
	struct socktab_sock *s[9];

	CHECK_EQ(socktab_net_set_reserved(net, 40004, 40004, 1), 0);
	for (int i = 0; i < 9; i++) {
		s[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(s[i], "127.0.0.1", 80), 0);
		CHECK_NE(check_port(s[i]), 40004);
	}
	struct socktab_sock *x = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	CHECK_EQ(check_connect4(x, "127.0.0.1", 80), -EADDRNOTAVAIL);
	socktab_close(x);
	close_all(s, 9);
	socktab_net_free(net);
}

/* R59: a connect()-made bucket is shared by distinct 4-tuples; the 4-tuple stays unique. */
TEST(port_shared_across_destinations)
{
	struct socktab_net *net = check_net(40000, 40000, NULL);
	struct socktab_sock *a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *d = socktab_socket(net, SOCKTAB_TCP, AF_INET6);

	CHECK_EQ(check_connect4(a, "127.0.0.1", 80), 0);
	CHECK_EQ(check_connect4(b, "127.0.0.2", 80), 0);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 81), 0);
	CHECK_EQ(check_port(a), 40000);
	CHECK_EQ(check_port(b), 40000);
	CHECK_EQ(check_port(c), 40000);
	CHECK_EQ(check_connect6(d, "::1", 80), 0);
	CHECK_EQ(check_port(d), 40000);
	socktab_close(a);
	socktab_close(b);
	socktab_close(c);
	socktab_close(d);
	socktab_net_free(net);
}

/* R53: a socket bound to a port connects from it; a second one with the same 4-tuple fails. */
TEST(bound_port_connect)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *b = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	CHECK_EQ(check_setint(a, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_setint(b, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_bind4(a, "127.0.0.1", 12500), 0);
	CHECK_EQ(check_bind4(b, "127.0.0.1", 12500), 0);
	CHECK_EQ(check_connect4(a, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(a), 12500);
	CHECK_EQ(check_connect4(b, "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(check_connect4(b, "127.0.0.1", 81), 0);
	socktab_close(a);
	socktab_close(b);
	socktab_net_free(net);
}

/* R51: an unbound socket gets the loopback source; getpeername reports the destination once
 * established, socktab_sock_peer() from SYN_SENT on. */
TEST(source_address_and_names)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *b = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
	socklen_t len = sizeof(sin);

	CHECK_EQ(socktab_getpeername(a, (struct sockaddr *)&sin, &len), -ENOTCONN);
	CHECK_EQ(check_connect4(a, "127.0.0.9", 443), 0);
	len = sizeof(sin);
	CHECK_EQ(socktab_getsockname(a, (struct sockaddr *)&sin, &len), 0);
	CHECK_EQ(ntohl(sin.sin_addr.s_addr), 0x7f000001);
	/* In SYN_SENT getpeername() has no peer yet (inet_getname); the key's peer is there. */
	len = sizeof(sin);
	CHECK_EQ(socktab_getpeername(a, (struct sockaddr *)&sin, &len), -ENOTCONN);
	memset(&sin, 0, sizeof(sin));
	CHECK_EQ(socktab_sock_peer(a, (struct sockaddr *)&sin, &len), 0);
	CHECK_EQ(ntohl(sin.sin_addr.s_addr), 0x7f000009);
	CHECK_EQ(ntohs(sin.sin_port), 443);
	CHECK_EQ(socktab_set_state(a, SOCKTAB_TCP_ESTABLISHED), 0);
	memset(&sin, 0, sizeof(sin));
	CHECK_EQ(socktab_getpeername(a, (struct sockaddr *)&sin, &len), 0);
	CHECK_EQ(ntohl(sin.sin_addr.s_addr), 0x7f000009);
	CHECK_EQ(ntohs(sin.sin_port), 443);
	/* A dual-stack socket to a v4-mapped peer gets a v4-mapped loopback source. */
	CHECK_EQ(check_connect6(b, "::ffff:127.0.0.1", 443), 0);
	len = sizeof(sin6);
	CHECK_EQ(socktab_getsockname(b, (struct sockaddr *)&sin6, &len), 0);
	char buf[64];

	inet_ntop(AF_INET6, &sin6.sin6_addr, buf, sizeof(buf));
	CHECK(!strcmp(buf, "::ffff:127.0.0.1"));
	socktab_close(a);
	socktab_close(b);
	socktab_net_free(net);
}

/* R51 and the connect() errno table (section 13). */
TEST(connect_errors)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *b = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	struct sockaddr_in sin = check_sin("127.0.0.1", 80);
	struct sockaddr_in6 sin6 = check_sin6("::1", 80);
	struct socktab_net_stats st0, st1;

	socktab_net_stats(net, &st0);
	CHECK_EQ(socktab_connect(a, NULL, sizeof(sin)), -EINVAL);
	CHECK_EQ(socktab_connect(NULL, (struct sockaddr *)&sin, sizeof(sin)), -EINVAL);
	CHECK_EQ(socktab_connect(a, (struct sockaddr *)&sin, sizeof(sin) - 1), -EINVAL);
	CHECK_EQ(socktab_connect(a, (struct sockaddr *)&sin6, sizeof(sin6)), -EAFNOSUPPORT);
	CHECK_EQ(socktab_connect(b, (struct sockaddr *)&sin, sizeof(sin)), -EINVAL);
	CHECK_EQ(check_connect4(a, "10.1.2.3", 80), -ENETUNREACH);
	CHECK_EQ(check_connect4(a, "224.0.0.1", 80), -ENETUNREACH);
	CHECK_EQ(check_setint(b, IPPROTO_IPV6, IPV6_V6ONLY, 1), 0);
	CHECK_EQ(check_connect6(b, "::ffff:127.0.0.1", 80), -ENETUNREACH);
	socktab_net_stats(net, &st1);
	CHECK_EQ(st1.established, st0.established);
	CHECK_EQ(st1.bind_buckets, st0.bind_buckets);
	CHECK_EQ(check_connect4(a, "127.0.0.1", 80), 0);
	CHECK_EQ(check_connect4(a, "127.0.0.1", 80), -EALREADY);
	CHECK_EQ(socktab_set_state(a, SOCKTAB_TCP_ESTABLISHED), 0);
	CHECK_EQ(check_connect4(a, "127.0.0.1", 81), -EISCONN);
	socktab_close(a);
	socktab_close(b);
	socktab_net_free(net);
}

/* R60: IP_BIND_ADDRESS_NO_PORT defers the port to connect(), which shares it per 4-tuple. */
TEST(bind_address_no_port)
{
	struct socktab_net *net = check_net(40000, 40000, NULL);
	struct socktab_sock *a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *b = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	for (int i = 0; i < 2; i++) {
		struct socktab_sock *s = i ? b : a;

		CHECK_EQ(check_setint(s, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1), 0);
		CHECK_EQ(check_bind4(s, "127.0.0.2", 0), 0);
		CHECK_EQ(check_port(s), 0);
	}
	CHECK_EQ(check_connect4(a, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(a), 40000);
	CHECK_EQ(check_connect4(b, "127.0.0.1", 81), 0);
	CHECK_EQ(check_port(b), 40000);
	socktab_close(a);
	socktab_close(b);
	socktab_net_free(net);
}

/* AF_UNSPEC connect disconnects: a connect()-chosen port is released (conformance case
 * disconnect_drops_autobound_port). */
TEST(disconnect_releases_port)
{
	struct socktab_net *net = check_net(40000, 40000, NULL);
	struct socktab_sock *a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };

	CHECK_EQ(check_connect4(a, "127.0.0.1", 80), 0);
	CHECK_EQ(check_connect4(b, "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(socktab_connect(a, &unspec, sizeof(unspec)), 0);
	CHECK_EQ(socktab_get_state(a), SOCKTAB_TCP_CLOSE);
	/* Linux keeps reporting the old port (inet_sport) although it is given back. */
	CHECK_EQ(check_port(a), 40000);
	CHECK_EQ(check_connect4(b, "127.0.0.1", 80), 0);
	CHECK_EQ(check_connect4(a, "127.0.0.1", 81), 0);
	socktab_close(a);
	socktab_close(b);
	socktab_net_free(net);
}

/* All variants pick ports under the same rules (and the linux-6.1 hash finds its sockets). */
TEST(variants_same_rules)
{
	for (int v = 0; v < 3; v++) {
		struct socktab_net_params p;
		struct socktab_sock *s[8];

		socktab_net_params_init(&p);
		p.port_low = 50000;
		p.port_high = 50007;
		p.variant = (enum socktab_variant)v;
		struct socktab_net *net = socktab_net_new(&p);

		CHECK(net);
		for (int i = 0; i < 8; i++) {
			s[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
			CHECK_EQ(check_connect4(s[i], "127.0.0.1", 80), 0);
			CHECK_EQ(check_port(s[i]) % 2, i < 4 ? 0 : 1);
			struct socktab_sock *f = socktab_lookup_tcp4(
				net, htonl(0x7f000001), htons(80), htonl(0x7f000001),
				htons((uint16_t)check_port(s[i])), SOCKTAB_LOOPBACK_IFINDEX, 0);
			CHECK(f == s[i]);
			socktab_sock_put(f);
		}
		struct socktab_sock *x = socktab_socket(net, SOCKTAB_TCP, AF_INET);

		CHECK_EQ(check_connect4(x, "127.0.0.1", 80), -EADDRNOTAVAIL);
		socktab_close(x);
		close_all(s, 8);
		socktab_net_free(net);
	}
}

/*
 * RFC 6056 / R10: the start of the walk is keyed per destination, not a global counter. First
 * connects to 256 destinations spread over the whole range (a counter would put them side by
 * side), and another net with another secret picks other ports for the same destinations.
 */
TEST(start_offset_keyed_per_destination)
{
	struct socktab_net_params p;
	struct socktab_net *a, *b;
	int bins[8] = { 0 }, same = 0, near = 0, prev = -1;

	socktab_net_params_init(&p);
	p.fixed_secret = 1;
	memset(p.secret, 1, sizeof(p.secret));
	a = socktab_net_new(&p);
	memset(p.secret, 2, sizeof(p.secret));
	b = socktab_net_new(&p);
	for (int d = 0; d < 256; d++) {
		struct socktab_sock *x = socktab_socket(a, SOCKTAB_TCP, AF_INET);
		struct socktab_sock *y = socktab_socket(b, SOCKTAB_TCP, AF_INET);

		CHECK_EQ(check_connect4(x, "127.0.0.1", 1000 + d), 0);
		CHECK_EQ(check_connect4(y, "127.0.0.1", 1000 + d), 0);
		int px = check_port(x), py = check_port(y);

		bins[(px - 32768) * 8 / (60999 - 32768 + 1)]++;
		same += px == py;
		if (prev >= 0 && abs(px - prev) <= 16)
			near++;
		prev = px;
		socktab_close(x);
		socktab_close(y);
	}
	for (int i = 0; i < 8; i++)
		CHECK(bins[i] >= 12); /* 32 expected per eighth of the range */
	CHECK(near <= 8);          /* ~256 * 33/28232 ~ 0.3 expected by chance */
	CHECK(same <= 4);          /* ~256/14116 expected by chance */
	socktab_net_free(a);
	socktab_net_free(b);
}

/* socktab_thread_set_port_share(): the share a port belongs to, for @shares shares. */
static int share_of(int port, int shares)
{
	int bits = 0;

	while ((1 << bits) < shares)
		bits++;
	return (port >> (10 - bits)) & (shares - 1);
}

TEST(port_share_arguments)
{
	struct socktab_net *net = check_net(40000, 42047, NULL);
	struct socktab_sock *s[64];

	CHECK(net);
	CHECK_EQ(socktab_thread_set_port_share(0, 0), -EINVAL);
	CHECK_EQ(socktab_thread_set_port_share(0, 3), -EINVAL);
	CHECK_EQ(socktab_thread_set_port_share(0, 128), -EINVAL);
	CHECK_EQ(socktab_thread_set_port_share(2, 2), -EINVAL);
	CHECK_EQ(socktab_thread_set_port_share(64, 64), -EINVAL);
	CHECK_EQ(socktab_thread_set_port_share(63, 64), 0);
	CHECK_EQ(socktab_thread_set_port_share(0, 1), 0);
	/* A refused call leaves the thread's share as it was. */
	CHECK_EQ(socktab_thread_set_port_share(1, 2), 0);
	CHECK_EQ(socktab_thread_set_port_share(5, 4), -EINVAL);
	for (int i = 0; i < 64; i++) {
		s[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(s[i], "127.0.0.1", 80), 0);
		CHECK_EQ(share_of(check_port(s[i]), 2), 1);
		CHECK_EQ(check_port(s[i]) % 2, 0);
	}
	CHECK_EQ(socktab_thread_set_port_share(0, 1), 0);
	close_all(s, 64);
	socktab_net_free(net);
}

/*
 * Each parity pass examines the thread's share first, then the others, and nothing else
 * changes: every port of the range is given once, even ones before any odd one (R54), then
 * -EADDRNOTAVAIL; in every variant, with the net's range (step 2) and with IP_LOCAL_PORT_RANGE
 * (step 1, one pass).
 */
TEST(port_share_order)
{
	enum { LO = 40000, HI = 42047, N = HI - LO + 1, SHARES = 4, OWN = 2 };
	static struct socktab_sock *s[N + 1];

	for (int v = 0; v < 3; v++) {
		struct socktab_net_params p;
		int own[2] = { 0 }, k = 0;
		static char seen[N];

		socktab_net_params_init(&p);
		p.port_low = LO;
		p.port_high = HI;
		p.variant = (enum socktab_variant)v;
		struct socktab_net *net = socktab_net_new(&p);

		CHECK(net);
		for (int port = LO; port <= HI; port++)
			own[port % 2] += share_of(port, SHARES) == OWN;
		memset(seen, 0, sizeof(seen));
		CHECK_EQ(socktab_thread_set_port_share(OWN, SHARES), 0);
		/* Phases: own even, other even, own odd, other odd. */
		int ends[4] = { own[0], N / 2, N / 2 + own[1], N };

		for (int i = 0; i < N; i++) {
			s[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
			CHECK_EQ(check_connect4(s[i], "127.0.0.1", 80), 0);
			int port = check_port(s[i]);

			CHECK(port >= LO && port <= HI);
			CHECK_EQ(seen[port - LO], 0);
			seen[port - LO] = 1;
			while (i >= ends[k])
				k++;
			CHECK_EQ(port % 2, k >= 2);
			CHECK_EQ(share_of(port, SHARES) == OWN, k % 2 == 0);
		}
		s[N] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(s[N], "127.0.0.1", 80), -EADDRNOTAVAIL);
		close_all(s, N + 1);

		/* IP_LOCAL_PORT_RANGE 40400-40700 (step 1): share 1 of 2 is 40448-40700. */
		uint32_t range = (40700u << 16) | 40400u;
		int mine = 0;

		CHECK_EQ(socktab_thread_set_port_share(1, 2), 0);
		for (int port = 40400; port <= 40700; port++)
			mine += share_of(port, 2) == 1;
		CHECK(mine > 0 && mine < 301);
		for (int i = 0; i < 301; i++) {
			s[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
			CHECK_EQ(socktab_setsockopt(s[i], IPPROTO_IP, IP_LOCAL_PORT_RANGE, &range,
						    sizeof(range)), 0);
			CHECK_EQ(check_connect4(s[i], "127.0.0.1", 80), 0);
			int port = check_port(s[i]);

			CHECK(port >= 40400 && port <= 40700);
			CHECK_EQ(share_of(port, 2) == 1, i < mine);
		}
		s[301] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(socktab_setsockopt(s[301], IPPROTO_IP, IP_LOCAL_PORT_RANGE, &range,
					    sizeof(range)), 0);
		CHECK_EQ(check_connect4(s[301], "127.0.0.1", 80), -EADDRNOTAVAIL);
		close_all(s, 302);
		CHECK_EQ(socktab_thread_set_port_share(0, 1), 0);
		socktab_net_free(net);
	}
}

/* connect() to 127.0.0.1:80 until it fails: the ports in @port, the sockets in @s (closed by
 * the caller); returns how many connected, and the last errno in *@err. */
static int exhaust(struct socktab_net *net, struct socktab_sock **s, int *port, int max, int *err)
{
	int n = 0;

	for (;;) {
		s[n] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		*err = check_connect4(s[n], "127.0.0.1", 80);
		if (*err || n == max - 1)
			break;
		port[n] = check_port(s[n]);
		n++;
	}
	socktab_close(s[n]);
	return n;
}

/*
 * Against the kernel's walk: with a share, connect() takes exactly the ports it takes without one,
 * each once, first pass's parity (the range's low end's) first and in each pass the share's ports
 * first, then fails as it does: over a range of odd size not aligned to the blocks (a step-2 pass
 * leaves one end out and wraps mid-block), an aligned one, and with 64 shares. An empty net's
 * first connect() under share 0, whose perturbation slot is the kernel's, takes the first share-0
 * port from the kernel's own first port on in the kernel's order; and after another share's
 * connect()s toward the same destination it still does: they advanced their own slot.
 */
TEST(port_share_walk_order)
{
	static const struct { int lo, hi, shares, own; } rs[] = {
		{ 40100, 41100, 4, 1 }, { 40000, 42047, 2, 1 }, { 40000, 40511, 64, 63 },
	};
	static struct socktab_sock *s[2100];
	static int pa[2100], pb[2100];
	static char in_a[65536];
	uint64_t clk = 5000000000ull;

	for (int v = 0; v < 3; v++)
		for (unsigned r = 0; r < sizeof(rs) / sizeof(rs[0]); r++) {
			int lo = rs[r].lo, hi = rs[r].hi, sh = rs[r].shares, own = rs[r].own;
			enum socktab_variant var = (enum socktab_variant)v;
			struct socktab_net *a = check_keyed_net(var, lo, hi, &clk, 7);
			struct socktab_net *b = check_keyed_net(var, lo, hi, &clk, 7);
			int ea, eb, na, nb, phase = 0;

			CHECK(a && b);
			na = exhaust(a, s, pa, 2100, &ea);
			for (int i = 0; i < na; i++)
				socktab_close(s[i]);
			CHECK_EQ(socktab_thread_set_port_share((unsigned)own, (unsigned)sh), 0);
			nb = exhaust(b, s, pb, 2100, &eb);
			for (int i = 0; i < nb; i++)
				socktab_close(s[i]);
			CHECK_EQ(socktab_thread_set_port_share(0, 1), 0);
			CHECK_EQ(ea, -EADDRNOTAVAIL);
			CHECK_EQ(eb, -EADDRNOTAVAIL);
			/* Over a range of odd size a step-2 pass leaves out one end, which one
			 * depending on the pass's offset: connect()s with different histories may
			 * end up with the other end too, or without it. */
			bool odd = (hi - lo) % 2 == 0;

			CHECK(odd ? abs(nb - na) <= 1 : nb == na);
			memset(in_a, 0, sizeof(in_a));
			for (int i = 0; i < na; i++)
				in_a[pa[i]] = 1;
			for (int i = 0; i < nb; i++) {
				/* 0: own share, first parity; 1: others; 2, 3: second parity */
				int ph = ((pb[i] - lo) % 2) * 2 + (share_of(pb[i], sh) != own);

				/* Either end of an odd range may come late, or not at all. */
				if (odd && (pb[i] == lo || pb[i] == hi))
					continue;
				CHECK_EQ(in_a[pb[i]], 1);
				in_a[pb[i]] = 0;
				CHECK(ph >= phase);
				phase = ph;
			}
			socktab_net_free(a);
			socktab_net_free(b);
		}

	/* The first port under share 0, from an empty net, and after share 1's connect()s. */
	for (int v = 0; v < 3; v++) {
		enum socktab_variant var = (enum socktab_variant)v;
		struct socktab_net *k = check_keyed_net(var, 32768, 60999, &clk, 7);
		struct socktab_net *z = check_keyed_net(var, 32768, 60999, &clk, 7);
		struct socktab_sock *x = socktab_socket(k, SOCKTAB_TCP, AF_INET);
		int want;

		CHECK_EQ(check_connect4(x, "127.0.0.1", 80), 0);
		want = check_port(x);
		while (share_of(want, 2) != 0)
			want = want + 2 > 60999 ? want + 2 - (60999 - 32768 + 1) : want + 2;
		CHECK_EQ(socktab_thread_set_port_share(1, 2), 0);
		for (int i = 0; i < 20; i++) {
			s[i] = socktab_socket(z, SOCKTAB_TCP, AF_INET);
			CHECK_EQ(check_connect4(s[i], "127.0.0.1", 80), 0);
			CHECK_EQ(share_of(check_port(s[i]), 2), 1);
		}
		CHECK_EQ(socktab_thread_set_port_share(0, 2), 0);
		s[20] = socktab_socket(z, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(s[20], "127.0.0.1", 80), 0);
		CHECK_EQ(check_port(s[20]), want);
		CHECK_EQ(socktab_thread_set_port_share(0, 1), 0);
		close_all(s, 21);
		socktab_close(x);
		socktab_net_free(k);
		socktab_net_free(z);
	}
}

struct share_thread {
	struct socktab_net *net;
	int ports[300];
	int err;
};

static void *share_thread_main(void *arg)
{
	struct share_thread *st = arg;
	struct socktab_sock *s[300];

	socktab_thread_register();
	st->err = socktab_thread_set_port_share(1, 2);
	for (int i = 0; i < 300; i++) {
		s[i] = socktab_socket(st->net, SOCKTAB_TCP, AF_INET);
		if (!s[i] || check_connect4(s[i], "127.0.0.1", 80))
			st->err = -1;
		st->ports[i] = s[i] ? check_port(s[i]) : -1;
	}
	close_all(s, 300);
	socktab_thread_unregister();
	return NULL;
}

/* The share is the calling thread's: another thread's setting leaves this one's walk alone. */
TEST(port_share_per_thread)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct share_thread st = { .net = net };
	struct socktab_sock *s[300];
	pthread_t th;
	int by_share[2] = { 0 };

	CHECK(net);
	CHECK_EQ(pthread_create(&th, NULL, share_thread_main, &st), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK_EQ(st.err, 0);
	for (int i = 0; i < 300; i++)
		CHECK_EQ(share_of(st.ports[i], 2), 1);
	/* This thread's 300 even ports in the kernel's order span more than a block of 512. */
	for (int i = 0; i < 300; i++) {
		s[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(s[i], "127.0.0.1", 80), 0);
		by_share[share_of(check_port(s[i]), 2)]++;
	}
	CHECK(by_share[0] > 0 && by_share[1] > 0);
	close_all(s, 300);
	socktab_net_free(net);
}

CHECK_MAIN(start_offset_keyed_per_destination, ten_port_range_exhausts, abortive_close_frees_port, parity_and_sequence,
	   per_socket_range_both_parities, per_socket_range_outside_ignored,
	   reserved_ports_skipped, port_shared_across_destinations, bound_port_connect,
	   source_address_and_names, connect_errors, bind_address_no_port,
	   disconnect_releases_port, variants_same_rules, port_share_arguments, port_share_order,
	   port_share_per_thread, port_share_walk_order)
