/* SPDX-License-Identifier: BSD-2-Clause */
/* listen(), lhash2 lookups, reuseport groups, child sockets, sysctls: R30-R35, R46-R49, O6-O9. */
#include <linux/filter.h>

#include "check.h"

static struct socktab_sock *listener4(struct socktab_net *net, const char *ip, int port, int rp)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	if (rp)
		check_setint(sk, SOL_SOCKET, SO_REUSEPORT, 1);
	if (check_bind4(sk, ip, port) || socktab_listen(sk, 128)) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

/* R49 via listen(): an unbound listener gets an odd port (default range). */
TEST(listen_unbound_odd_port)
{
	struct socktab_net *net = socktab_net_new(NULL);

	for (int i = 0; i < 20; i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

		CHECK_EQ(socktab_listen(sk, 10), 0);
		CHECK_EQ(check_port(sk) % 2, 1);
		CHECK_EQ(socktab_get_state(sk), SOCKTAB_TCP_LISTEN);
		socktab_close(sk);
	}
	socktab_net_free(net);
}

/* O7/R46: two SO_REUSEADDR sockets share a port until one listens; then the other cannot. */
TEST(listen_race_reuseaddr)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *c = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	check_setint(a, SOL_SOCKET, SO_REUSEADDR, 1);
	check_setint(b, SOL_SOCKET, SO_REUSEADDR, 1);
	check_setint(c, SOL_SOCKET, SO_REUSEADDR, 1);
	CHECK_EQ(check_bind4(a, "127.0.0.1", 5000), 0);
	CHECK_EQ(check_bind4(b, "127.0.0.1", 5000), 0);
	CHECK_EQ(socktab_listen(a, 5), 0);
	CHECK_EQ(socktab_listen(b, 5), -EADDRINUSE);
	CHECK_EQ(socktab_get_state(b), SOCKTAB_TCP_CLOSE);
	CHECK_EQ(check_port(b), 5000); /* keeps its bind */
	CHECK_EQ(check_bind4(c, "127.0.0.1", 5000), -EADDRINUSE); /* O6: first listening */
	socktab_close(a);
	CHECK_EQ(socktab_listen(b, 5), 0);
	socktab_close(b);
	socktab_close(c);
	socktab_net_free(net);
}

/* R30: a specific listener beats a wildcard one; without it the wildcard gets the SYN. */
TEST(specific_beats_wildcard)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *w = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *s = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *f;

	check_setint(w, SOL_SOCKET, SO_REUSEADDR, 1);
	check_setint(s, SOL_SOCKET, SO_REUSEADDR, 1);
	/* Bind both first (REUSEADDR, nobody listening), then listen: allowed? No: the second
	 * listen re-validates against a listener that overlaps. Use distinct binds instead. */
	socktab_close(s);
	socktab_close(w);
	w = listener4(net, "0.0.0.0", 6000, 1);
	s = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	check_setint(s, SOL_SOCKET, SO_REUSEPORT, 1);
	CHECK(w);
	CHECK_EQ(check_bind4(s, "127.0.0.2", 6000), 0);
	CHECK_EQ(socktab_listen(s, 5), 0);
	f = socktab_lookup_tcp4(net, check_ip4("127.0.0.1"), htons(40000), check_ip4("127.0.0.2"), htons(6000), SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(f == s);
	socktab_sock_put(f);
	f = socktab_lookup_tcp4(net, check_ip4("127.0.0.1"), htons(40000), check_ip4("127.0.0.3"), htons(6000), SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(f == w);
	socktab_sock_put(f);
	CHECK(!socktab_lookup_tcp4(net, check_ip4("127.0.0.1"), htons(40000), check_ip4("127.0.0.3"),
				   htons(6001), SOCKTAB_LOOPBACK_IFINDEX, 0));
	socktab_close(s);
	f = socktab_lookup_tcp4(net, check_ip4("127.0.0.1"), htons(40000), check_ip4("127.0.0.2"), htons(6000), SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(f == w);
	socktab_sock_put(f);
	socktab_close(w);
	CHECK(!socktab_lookup_tcp4(net, check_ip4("127.0.0.1"), htons(40000), check_ip4("127.0.0.2"),
				   htons(6000), SOCKTAB_LOOPBACK_IFINDEX, 0));
	socktab_net_free(net);
}

/* R31/O9: for IPv4, a v4 wildcard listener beats a dual-stack :: one (score 2 vs 1). */
TEST(v4_wildcard_beats_v6_dual)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *v6 = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	struct socktab_sock *v4 = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *f;
	struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;

	check_setint(v6, SOL_SOCKET, SO_REUSEPORT, 1);
	check_setint(v4, SOL_SOCKET, SO_REUSEPORT, 1);
	CHECK_EQ(check_bind6(v6, "::", 7000), 0);
	CHECK_EQ(socktab_listen(v6, 5), 0);
	f = socktab_lookup_tcp4(net, check_ip4("127.0.0.1"), htons(1), check_ip4("127.0.0.1"), htons(7000), SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(f == v6); /* the dual-stack listener takes IPv4 while alone */
	socktab_sock_put(f);
	CHECK_EQ(check_bind4(v4, "0.0.0.0", 7000), 0);
	CHECK_EQ(socktab_listen(v4, 5), 0);
	for (int i = 0; i < 20; i++) {
		f = socktab_lookup_tcp4(net, check_ip4("127.0.0.1"), htons((uint16_t)(1000 + i)),
					check_ip4("127.0.0.1"), htons(7000), SOCKTAB_LOOPBACK_IFINDEX, 0);
		CHECK(f == v4);
		socktab_sock_put(f);
	}
	f = socktab_lookup_tcp6(net, &lo6, htons(1), &lo6, htons(7000), SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(f == v6); /* IPv6 traffic never reaches an AF_INET socket */
	socktab_sock_put(f);
	socktab_close(v4);
	socktab_close(v6);
	socktab_net_free(net);
}

/* R34/R35/O9: a reuseport group spreads 4-tuples; a fixed tuple always maps to one member. */
TEST(reuseport_group_selection)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *m[4];
	int hits[4] = { 0 };

	for (int i = 0; i < 4; i++) {
		m[i] = listener4(net, "127.0.0.1", 8000, 1);
		CHECK(m[i]);
	}
	for (int sport = 20000; sport < 20400; sport++) {
		struct socktab_sock *f = socktab_lookup_tcp4(net, check_ip4("127.0.0.1"),
							     htons((uint16_t)sport),
							     check_ip4("127.0.0.1"), htons(8000), SOCKTAB_LOOPBACK_IFINDEX, 0);
		int k = -1;

		for (int i = 0; i < 4; i++)
			if (f == m[i])
				k = i;
		CHECK(k >= 0);
		hits[k]++;
		struct socktab_sock *g = socktab_lookup_tcp4(net, check_ip4("127.0.0.1"),
							     htons((uint16_t)sport),
							     check_ip4("127.0.0.1"), htons(8000), SOCKTAB_LOOPBACK_IFINDEX, 0);
		CHECK(g == f); /* stable while membership is fixed */
		socktab_sock_put(f);
		socktab_sock_put(g);
	}
	for (int i = 0; i < 4; i++)
		CHECK(hits[i] > 40); /* 400 tuples over 4 members */
	/* A different owner uid cannot even bind (R47). */
	struct socktab_sock *o = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	check_setint(o, SOL_SOCKET, SO_REUSEPORT, 1);
	check_setint(o, SOCKTAB_SOL, SOCKTAB_SO_UID, 1000);
	CHECK_EQ(check_bind4(o, "127.0.0.1", 8000), -EADDRINUSE);
	socktab_close(o);
	/* Members leave; the rest still serve. */
	socktab_close(m[0]);
	socktab_close(m[2]);
	for (int sport = 20000; sport < 20050; sport++) {
		struct socktab_sock *f = socktab_lookup_tcp4(net, check_ip4("127.0.0.1"),
							     htons((uint16_t)sport),
							     check_ip4("127.0.0.1"), htons(8000), SOCKTAB_LOOPBACK_IFINDEX, 0);
		CHECK(f == m[1] || f == m[3]);
		socktab_sock_put(f);
	}
	socktab_close(m[1]);
	socktab_close(m[3]);
	socktab_net_free(net);
}

/* Groups grow past their first array (128 members). */
TEST(reuseport_group_grows)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *m[200];

	for (int i = 0; i < 200; i++) {
		m[i] = listener4(net, "127.0.0.1", 8100, 1);
		CHECK(m[i]);
	}
	for (int i = 0; i < 200; i += 2)
		socktab_close(m[i]);
	for (int sport = 1; sport < 300; sport++) {
		struct socktab_sock *f = socktab_lookup_tcp4(net, check_ip4("127.0.0.1"),
							     htons((uint16_t)sport),
							     check_ip4("127.0.0.1"), htons(8100), SOCKTAB_LOOPBACK_IFINDEX, 0);
		CHECK(f);
		CHECK_EQ(socktab_get_state(f), SOCKTAB_TCP_LISTEN);
		socktab_sock_put(f);
	}
	for (int i = 1; i < 200; i += 2)
		socktab_close(m[i]);
	socktab_net_free(net);
}

/* A child inherits the listener's port, is found by the established lookup before the
 * listener, keeps the port after the listener closes, and leaves TIME_WAIT when it closes. */
TEST(child_sockets)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *ln = listener4(net, "0.0.0.0", 9000, 0);
	struct socktab_sock *c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct sockaddr_in local = check_sin("127.0.0.1", 9000), remote;
	struct socktab_sock *child, *f;
	struct socktab_net_stats st;

	CHECK(ln);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 9000), 0);
	remote = check_sin("127.0.0.1", check_port(c));
	f = socktab_lookup_tcp4(net, remote.sin_addr.s_addr, remote.sin_port, local.sin_addr.s_addr,
				local.sin_port, SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(f == ln); /* the SYN finds the listener */
	socktab_sock_put(f);
	child = socktab_sock_new_child(ln, (struct sockaddr *)&local, (struct sockaddr *)&remote,
				       sizeof(local), SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(child);
	CHECK_EQ(check_port(child), 9000);
	CHECK_EQ(socktab_get_state(child), SOCKTAB_TCP_SYN_RECV);
	errno = 0;
	CHECK(!socktab_sock_new_child(ln, (struct sockaddr *)&local, (struct sockaddr *)&remote,
				      sizeof(local), SOCKTAB_LOOPBACK_IFINDEX, 0));
	CHECK_EQ(errno, EADDRINUSE);
	f = socktab_lookup_tcp4(net, remote.sin_addr.s_addr, remote.sin_port, local.sin_addr.s_addr,
				local.sin_port, SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(f == child);
	socktab_sock_put(f);
	/* The client side is found by packets from the server. */
	f = socktab_lookup_tcp4(net, local.sin_addr.s_addr, local.sin_port, remote.sin_addr.s_addr,
				remote.sin_port, SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(f == c);
	socktab_sock_put(f);
	socktab_close(ln);
	/* The child still owns port 9000: a plain bind fails. */
	struct socktab_sock *b = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	CHECK_EQ(check_bind4(b, "127.0.0.1", 9000), -EADDRINUSE);
	socktab_set_state(child, SOCKTAB_TCP_ESTABLISHED);
	socktab_close(child);
	socktab_net_stats(net, &st);
	CHECK_EQ(st.time_wait, 1);
	CHECK_EQ(check_bind4(b, "127.0.0.1", 9000), -EADDRINUSE); /* O8: server-side TIME_WAIT */
	socktab_close(b);
	socktab_close(c);
	CHECK(!socktab_sock_new_child(c, (struct sockaddr *)&local, (struct sockaddr *)&remote,
				      sizeof(local), SOCKTAB_LOOPBACK_IFINDEX, 0));
	socktab_net_free(net);
}

/* tcp_done (set_state CLOSE): a refused connect gives back its connect()-chosen port. */
TEST(refused_connect_releases_port)
{
	struct socktab_net *net = check_net(40000, 40000, NULL);
	struct socktab_sock *a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_net_stats st;

	CHECK_EQ(check_connect4(a, "127.0.0.1", 80), 0);
	CHECK_EQ(check_connect4(b, "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(socktab_set_state(a, SOCKTAB_TCP_CLOSE), 0);
	CHECK_EQ(socktab_get_state(a), SOCKTAB_TCP_CLOSE);
	CHECK_EQ(check_port(a), 40000); /* getsockname still shows it, as on Linux */
	socktab_net_stats(net, &st);
	CHECK_EQ(st.established, 0);
	CHECK_EQ(st.bind_buckets, 0);
	CHECK_EQ(check_connect4(b, "127.0.0.1", 80), 0);
	socktab_close(a);
	socktab_close(b);
	socktab_net_free(net);
}

TEST(listen_errors_and_backlog)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *l = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct sockaddr_in6 peer;
	socklen_t len = sizeof(peer);

	CHECK_EQ(check_connect4(a, "127.0.0.1", 80), 0);
	CHECK_EQ(socktab_listen(a, 5), -EINVAL); /* connecting socket */
	CHECK_EQ(socktab_listen(NULL, 5), -EINVAL);
	CHECK_EQ(socktab_listen(l, 100000), 0);
	CHECK_EQ(socktab_listen_backlog(l), 4096); /* clamped to somaxconn */
	CHECK_EQ(socktab_listen(l, 7), 0);
	CHECK_EQ(socktab_listen_backlog(l), 7);
	CHECK_EQ(socktab_net_sysctl(net, "net.core.somaxconn", "5"), 0);
	CHECK_EQ(socktab_listen(l, 7), 0);
	CHECK_EQ(socktab_listen_backlog(l), 5);
	CHECK_EQ(socktab_getpeername(l, (struct sockaddr *)&peer, &len), -ENOTCONN);
	CHECK_EQ(check_connect4(l, "127.0.0.1", 80), -EISCONN);
	CHECK_EQ(socktab_set_state(l, SOCKTAB_TCP_ESTABLISHED), -EINVAL);
	socktab_close(a);
	socktab_close(l);
	CHECK_EQ(socktab_listen(l, 1), -EBADF);
	socktab_net_free(net);
}

/* Write @value to net.ipv4.ip_local_port_range: it succeeds and the range reads @lo..@hi. */
static void port_range_write(struct socktab_net *net, const char *value, int lo, int hi)
{
	int l, h;

	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_port_range", value), 0);
	CHECK_EQ(socktab_net_get_port_range(net, &l, &h), 0);
	CHECK_EQ(l, lo);
	CHECK_EQ(h, hi);
}

/* R65: sysctl validation by name. */
TEST(sysctl_by_name)
{
	struct socktab_net *net = socktab_net_new(NULL);

	port_range_write(net, "40000 40009", 40000, 40009);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_port_range", "40009 40000"), -EINVAL);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_port_range", "500 40000"), -EINVAL);
	/* One value sets the low end and keeps the high one; values past two are ignored. */
	port_range_write(net, "0x9c41", 40001, 40009);
	port_range_write(net, "40000 40009 7", 40000, 40009);
	/* proc_get_long(): any white space the kernel's isspace() knows before a number (0xa0,
	 * \v, \r too), but only a space, tab or newline after one (6.18.44-fc-v1300). */
	port_range_write(net, "\xa0\v40001\t\r40008\n", 40001, 40008);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_port_range", "40000\r40009"), -EINVAL);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_port_range", "40000\xa0"), -EINVAL);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_port_range", "40000\v"), -EINVAL);
	port_range_write(net, "40000 40009", 40000, 40009);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_port_range", ""), -EINVAL);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_port_range", "40000x"), -EINVAL);
	CHECK_EQ(socktab_net_sysctl(net, "net.core.somaxconn", "-1"), -EINVAL);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_max_syn_backlog", "-1"), 0);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_max_syn_backlog", "4096"), 0);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_port_range", "1 70000"), -EINVAL);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_unprivileged_port_start", "40001"), -EINVAL);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_unprivileged_port_start", "500"), 0);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_port_range", "600 700"), 0);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_tw_reuse", "3"), -EINVAL);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_tw_reuse", "0"), 0);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_autobind_reuse", "2"), -EINVAL);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_autobind_reuse", "1"), 0);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_reserved_ports", "650,660-669"), 0);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_reserved_ports", "x"), -EINVAL);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.no_such_key", "1"), -ENOENT);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_syncookies", "1"), 0);
	CHECK_EQ(socktab_net_sysctl(NULL, "net.core.somaxconn", "1"), -EINVAL);
	/* Reserved ports are skipped by connect(). */
	for (int i = 0; i < 80; i++) {
		struct socktab_sock *s = socktab_socket(net, SOCKTAB_TCP, AF_INET);

		CHECK_EQ(check_connect4(s, "127.0.0.1", 80), 0);
		int p = check_port(s);

		CHECK(p >= 600 && p <= 700 && p != 650 && (p < 660 || p > 669));
	}
	socktab_net_free(net);
}

/* R104's role lock, both settings: the table calls alone, with no packets. */
static int disconnect(struct socktab_sock *sk)
{
	struct sockaddr un = { .sa_family = AF_UNSPEC };

	return socktab_connect(sk, &un, sizeof(un));
}

TEST(role_lock)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_net_stats st0, st;
	int port;

	CHECK_EQ(socktab_net_set_tcp_role_lock(NULL, 1), -EINVAL);
	CHECK_EQ(socktab_net_set_tcp_role_lock(net, 2), -EINVAL);
	CHECK_EQ(socktab_net_set_tcp_role_lock(net, -1), -EINVAL);
	/* On by default: a listener, disconnected, does not connect and holds nothing. */
	CHECK_EQ(socktab_listen(s, 8), 0);
	CHECK_EQ(disconnect(s), 0);
	socktab_net_stats(net, &st0);
	CHECK_EQ(check_connect4(s, "127.0.0.1", 80), -EINVAL);
	socktab_net_stats(net, &st);
	CHECK_EQ(st.bind_buckets, st0.bind_buckets);
	CHECK_EQ(st.established, st0.established);
	CHECK_EQ(socktab_get_state(s), SOCKTAB_TCP_CLOSE);
	CHECK_EQ(socktab_listen(s, 8), 0); /* its own role again */
	/* An active socket, disconnected, gets listen()'s port but not the listener's role. */
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), 0);
	CHECK_EQ(disconnect(c), 0);
	CHECK_EQ(socktab_listen(c, 8), -EINVAL);
	port = check_port(c);
	CHECK(port % 2 == 1);
	CHECK_EQ(socktab_get_state(c), SOCKTAB_TCP_CLOSE);
	CHECK(!socktab_lookup_listener4(net, inet_addr("127.0.0.1"), htons(1), inet_addr("127.0.0.1"),
					htons((uint16_t)port), SOCKTAB_LOOPBACK_IFINDEX, 0));
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(c), port); /* connect() leaves from the port listen() took */
	socktab_close(s);
	socktab_close(c);
	/* Off: either role after a disconnect. */
	CHECK_EQ(socktab_net_set_tcp_role_lock(net, 0), 0);
	s = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(socktab_listen(s, 8), 0);
	CHECK_EQ(disconnect(s), 0);
	CHECK_EQ(check_connect4(s, "127.0.0.1", 81), 0);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 82), 0);
	CHECK_EQ(disconnect(c), 0);
	CHECK_EQ(socktab_listen(c, 8), 0);
	CHECK_EQ(socktab_get_state(c), SOCKTAB_TCP_LISTEN);
	socktab_close(s);
	socktab_close(c);
	socktab_net_free(net);
}

/* R47 with accept(): SOCKTAB_SO_UID gives a listener's child the accepting process's uid. */
TEST(child_takes_acceptor_uid)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *ln = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *s = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct sockaddr_in local = check_sin("127.0.0.1", 9000), remote;
	struct socktab_sock *child;
	int uid = -1;
	socklen_t n = sizeof(uid);

	check_setint(ln, SOCKTAB_SOL, SOCKTAB_SO_UID, 1000);
	check_setint(ln, SOL_SOCKET, SO_REUSEPORT, 1);
	CHECK_EQ(check_bind4(ln, "127.0.0.1", 9000), 0);
	CHECK_EQ(socktab_listen(ln, 8), 0);
	/* Bound, a socket that is no child keeps its uid. */
	CHECK_EQ(socktab_setsockopt(ln, SOCKTAB_SOL, SOCKTAB_SO_UID, &(int){ 0 }, sizeof(int)),
		 -EINVAL);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 9000), 0);
	CHECK_EQ(socktab_setsockopt(c, SOCKTAB_SOL, SOCKTAB_SO_UID, &(int){ 0 }, sizeof(int)),
		 -EINVAL);
	remote = check_sin("127.0.0.1", check_port(c));
	child = socktab_sock_new_child(ln, (struct sockaddr *)&local, (struct sockaddr *)&remote,
				       sizeof(local), SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(child);
	CHECK_EQ(socktab_getsockopt(child, SOCKTAB_SOL, SOCKTAB_SO_UID, &uid, &n), 0);
	CHECK_EQ(uid, 1000); /* the listener's, until accepted */
	socktab_close(ln);
	check_setint(s, SOL_SOCKET, SO_REUSEPORT, 1);
	/* uid 0 and SO_REUSEPORT: the child (uid 1000) refuses, through the full check. */
	CHECK_EQ(check_bind4(s, "127.0.0.1", 9000), -EADDRINUSE);
	CHECK_EQ(socktab_setsockopt(child, SOCKTAB_SOL, SOCKTAB_SO_UID, &(int){ -1 }, sizeof(int)),
		 -EINVAL);
	CHECK_EQ(socktab_setsockopt(child, SOCKTAB_SOL, SOCKTAB_SO_UID, &(int){ 0 }, sizeof(int)),
		 0);
	n = sizeof(uid);
	CHECK_EQ(socktab_getsockopt(child, SOCKTAB_SOL, SOCKTAB_SO_UID, &uid, &n), 0);
	CHECK_EQ(uid, 0);
	CHECK_EQ(check_bind4(s, "127.0.0.1", 9000), 0);
	socktab_close(s);
	socktab_close(child);
	socktab_close(c);
	socktab_net_free(net);
}

/* The kernel variants as a set: names, bounds, defaults. */
TEST(kernel_variant_api)
{
	struct socktab_net *net = socktab_net_new(NULL);

	CHECK_EQ(socktab_net_get_kernel_variant(net, SOCKTAB_KV_ROLE_LOCK), 1);
	CHECK_EQ(socktab_net_get_kernel_variant(net, SOCKTAB_KV_UDP_BIND_ALL_OWNERS), 0);
	CHECK_EQ(socktab_net_get_kernel_variant(net, SOCKTAB_KV_CBPF_LISTENED), 0);
	CHECK_EQ(socktab_net_get_kernel_variant(net, SOCKTAB_KV_UDP_BIND_MATE_STOPS), 1);
	for (int kv = 0; kv < SOCKTAB_KV_COUNT; kv++) {
		const char *name = socktab_kernel_variant_name(kv);

		CHECK(name != NULL);
		CHECK_EQ(socktab_kernel_variant_by_name(name), kv);
		CHECK_EQ(socktab_net_set_kernel_variant(net, kv, 1), 0);
		CHECK_EQ(socktab_net_get_kernel_variant(net, kv), 1);
		CHECK_EQ(socktab_net_set_kernel_variant(net, kv, 0), 0);
		CHECK_EQ(socktab_net_get_kernel_variant(net, kv), 0);
		CHECK_EQ(socktab_net_set_kernel_variant(net, kv, 2), -EINVAL);
		CHECK_EQ(socktab_net_get_kernel_variant(net, kv), 0);
		CHECK_EQ(socktab_net_set_kernel_variant(NULL, kv, 1), -EINVAL);
		CHECK_EQ(socktab_net_get_kernel_variant(NULL, kv), -EINVAL);
	}
	CHECK(socktab_kernel_variant_name(-1) == NULL);
	CHECK(socktab_kernel_variant_name(SOCKTAB_KV_COUNT) == NULL);
	CHECK_EQ(socktab_kernel_variant_by_name("no_such_variant"), -EINVAL);
	CHECK_EQ(socktab_kernel_variant_by_name(NULL), -EINVAL);
	CHECK_EQ(socktab_net_set_kernel_variant(net, SOCKTAB_KV_COUNT, 1), -EINVAL);
	CHECK_EQ(socktab_net_set_kernel_variant(net, -1, 1), -EINVAL);
	CHECK_EQ(socktab_net_get_kernel_variant(net, SOCKTAB_KV_COUNT), -EINVAL);
	/* The role lock's own setter is the same setting. */
	CHECK_EQ(socktab_net_set_tcp_role_lock(net, 1), 0);
	CHECK_EQ(socktab_net_get_kernel_variant(net, SOCKTAB_KV_ROLE_LOCK), 1);
	socktab_net_free(net);
}

/* SO_REUSEADDR @ra, SO_REUSEPORT @rp, then bind(): bind's result, or -999 when an option failed. */
static int udp_bind4(struct socktab_sock *sk, const char *ip, int port, int ra, int rp)
{
	if (socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEADDR, &ra, sizeof(ra)) ||
	    socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEPORT, &rp, sizeof(rp)))
		return -999;
	return check_bind4(sk, ip, port);
}

/*
 * The third UDP bind of @c (SO_REUSEADDR @ra, SO_REUSEPORT) to @ip:6000 beside @a and @b: refused
 * with every table as it was (@refused), or bound. Then closes the three and frees @net.
 */
static void third_bind(struct socktab_net *net, struct socktab_sock *a, struct socktab_sock *b,
		       struct socktab_sock *c, const char *ip, int ra, int refused)
{
	struct socktab_net_stats st0, st;

	socktab_net_stats(net, &st0);
	CHECK_EQ(udp_bind4(c, ip, 6000, ra, 1), refused ? -EADDRINUSE : 0);
	socktab_net_stats(net, &st);
	if (refused) {
		CHECK_EQ(memcmp(&st, &st0, sizeof(st)), 0);
		CHECK_EQ(check_port(c), 0);
	} else {
		CHECK_EQ(check_port(c), 6000);
	}
	socktab_close(a);
	socktab_close(b);
	socktab_close(c);
	socktab_net_free(net);
}

/* R103 both ways: {REUSEADDR}, {REUSEADDR, REUSEPORT}, then a {REUSEPORT} bind. */
TEST(udp_bind_all_owners)
{
	for (int all = 0; all <= 1; all++) {
		struct socktab_net *net = socktab_net_new(NULL);
		struct socktab_sock *a = socktab_socket(net, SOCKTAB_UDP, AF_INET);
		struct socktab_sock *b = socktab_socket(net, SOCKTAB_UDP, AF_INET);
		struct socktab_sock *c = socktab_socket(net, SOCKTAB_UDP, AF_INET);

		CHECK_EQ(socktab_net_set_kernel_variant(net, SOCKTAB_KV_UDP_BIND_ALL_OWNERS, all), 0);
		CHECK_EQ(udp_bind4(a, "0.0.0.0", 6000, 1, 0), 0);
		CHECK_EQ(udp_bind4(b, "0.0.0.0", 6000, 1, 1), 0);
		third_bind(net, a, b, c, "0.0.0.0", 0, all);
	}
}

/*
 * R103's udp_bind_mate_stops, in the four settings of the two variants: {REUSEPORT} a and b on
 * 127.0.0.1, a's SO_REUSEPORT cleared, then a {REUSEPORT} bind there meets b first (IPv4:
 * newest first). Only all owners without the mate stop refuses it. With SO_REUSEADDR on the
 * new socket b is no mate: all owners refuses it either way.
 */
TEST(udp_bind_mate_stops)
{
	for (int v = 0; v < 4; v++) {
		int all = v & 1, mate = v >> 1, zero = 0;

		for (int ra = 0; ra <= 1; ra++) {
			struct socktab_net *net = socktab_net_new(NULL);
			struct socktab_sock *a = socktab_socket(net, SOCKTAB_UDP, AF_INET);
			struct socktab_sock *b = socktab_socket(net, SOCKTAB_UDP, AF_INET);
			struct socktab_sock *c = socktab_socket(net, SOCKTAB_UDP, AF_INET);
			int refused = all && (!mate || ra);

			CHECK_EQ(socktab_net_set_kernel_variant(net, SOCKTAB_KV_UDP_BIND_ALL_OWNERS,
								 all), 0);
			CHECK_EQ(socktab_net_set_kernel_variant(net, SOCKTAB_KV_UDP_BIND_MATE_STOPS,
								 mate), 0);
			CHECK_EQ(udp_bind4(a, "127.0.0.1", 6000, 0, 1), 0);
			CHECK_EQ(udp_bind4(b, "127.0.0.1", 6000, 0, 1), 0);
			CHECK_EQ(socktab_setsockopt(a, SOL_SOCKET, SO_REUSEPORT, &zero,
						    sizeof(zero)), 0);
			third_bind(net, a, b, c, "127.0.0.1", ra, refused);
		}
	}
}

/* R108's variant: no program for a TCP socket that listened and was disconnected. */
TEST(cbpf_listened)
{
	struct sock_filter ret0 = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog prog = { .len = 1, .filter = &ret0 };

	for (int v = 0; v <= 1; v++) {
		struct socktab_net *net = socktab_net_new(NULL);
		struct socktab_sock *s = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		struct socktab_sock *a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		int one = 1;

		CHECK_EQ(socktab_net_set_kernel_variant(net, SOCKTAB_KV_CBPF_LISTENED, v), 0);
		CHECK_EQ(socktab_setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)), 0);
		CHECK_EQ(socktab_setsockopt(a, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)), 0);
		CHECK_EQ(socktab_listen(s, 8), 0);
		CHECK_EQ(socktab_setsockopt(s, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog,
					    sizeof(prog)), 0);
		CHECK_EQ(disconnect(s), 0);
		CHECK_EQ(socktab_setsockopt(s, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog,
					    sizeof(prog)), v ? -EINVAL : 0);
		/* Listening again, it is in a group: a program is welcome. */
		CHECK_EQ(socktab_listen(s, 8), 0);
		CHECK_EQ(socktab_setsockopt(s, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog,
					    sizeof(prog)), 0);
		/* A socket that only ever was active is not refused. */
		CHECK_EQ(check_connect4(a, "127.0.0.1", 80), 0);
		CHECK_EQ(disconnect(a), 0);
		CHECK_EQ(socktab_setsockopt(a, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog,
					    sizeof(prog)), 0);
		socktab_close(s);
		socktab_close(a);
		socktab_net_free(net);
	}
}

CHECK_MAIN(role_lock, kernel_variant_api, udp_bind_all_owners, udp_bind_mate_stops, cbpf_listened,
	   listen_unbound_odd_port, listen_race_reuseaddr, specific_beats_wildcard,
	   v4_wildcard_beats_v6_dual, reuseport_group_selection, reuseport_group_grows,
	   child_sockets, child_takes_acceptor_uid, refused_connect_releases_port,
	   listen_errors_and_backlog, sysctl_by_name)
