/* SPDX-License-Identifier: BSD-2-Clause */
/* connect() port choice: spec R51-R60, R64, R66 and observables O1, O2, O4, O5. */
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

CHECK_MAIN(start_offset_keyed_per_destination, ten_port_range_exhausts, abortive_close_frees_port, parity_and_sequence,
	   per_socket_range_both_parities, per_socket_range_outside_ignored,
	   reserved_ports_skipped, port_shared_across_destinations, bound_port_connect,
	   source_address_and_names, connect_errors, bind_address_no_port,
	   disconnect_releases_port, variants_same_rules)
