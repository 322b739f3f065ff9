/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bind() semantics: entry checks (R37, R38, O11), the conflict matrix for a second bind on the same
 * port (R40-R48, O6), bind(0) port choice (R49, R50, O1, O3, O4), reserved ports (R66), the
 * explicit-bind exclusion from connect() (R55, R59, O5) and IP_BIND_ADDRESS_NO_PORT (R60).
 * Every test runs on a fresh net and frees it at the end.
 */
#include "check.h"

#define PORT 40000

/* ---- the O6 matrix: two sockets, the same port, the second bind's result ---- */

struct side {
	int family;     /* AF_INET or AF_INET6 */
	const char *ip; /* address to bind */
	int reuseaddr;  /* SO_REUSEADDR */
	int reuseport;  /* SO_REUSEPORT */
	int uid;        /* SOCKTAB_SO_UID, -1: leave the default */
	int v6only;     /* IPV6_V6ONLY, -1: leave the default (0) */
};

#define V4(ip) ((struct side){ AF_INET, ip, 0, 0, -1, -1 })
#define V6(ip) ((struct side){ AF_INET6, ip, 0, 0, -1, -1 })
#define V6ONLY(ip) ((struct side){ AF_INET6, ip, 0, 0, -1, 1 })
#define REUSEADDR(ip) ((struct side){ AF_INET, ip, 1, 0, -1, -1 })
#define REUSEPORT(ip, uid) ((struct side){ AF_INET, ip, 0, 1, uid, -1 })

/* Returned by second_bind() when the setup itself failed (never a valid bind result). */
#define SETUP_FAILED 100000

static struct socktab_sock *side_socket(struct socktab_net *net, const struct side *s)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, s->family);

	if (!sk)
		return NULL;
	if (s->reuseaddr && check_setint(sk, SOL_SOCKET, SO_REUSEADDR, 1))
		return NULL;
	if (s->reuseport && check_setint(sk, SOL_SOCKET, SO_REUSEPORT, 1))
		return NULL;
	if (s->uid >= 0 && check_setint(sk, SOCKTAB_SOL, SOCKTAB_SO_UID, s->uid))
		return NULL;
	if (s->v6only >= 0 && check_setint(sk, IPPROTO_IPV6, IPV6_V6ONLY, s->v6only))
		return NULL;
	return sk;
}

static int side_bind(struct socktab_sock *sk, const struct side *s, int port)
{
	return s->family == AF_INET ? check_bind4(sk, s->ip, port) : check_bind6(sk, s->ip, port);
}

/*
 * Bind @a to PORT (must succeed), then @b to PORT; return @b's result. Also checks that the
 * first binder still owns its port afterwards (a failed bind leaves every table as it was).
 */
static int second_bind(struct side a, struct side b)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s1, *s2;
	int ret = SETUP_FAILED;

	if (!net)
		return SETUP_FAILED;
	s1 = side_socket(net, &a);
	s2 = side_socket(net, &b);
	if (s1 && s2 && side_bind(s1, &a, PORT) == 0 && check_port(s1) == PORT) {
		ret = side_bind(s2, &b, PORT);
		if (check_port(s1) != PORT)
			ret = SETUP_FAILED;
		if (ret == 0 && check_port(s2) != PORT)
			ret = SETUP_FAILED;
		if (ret != 0 && check_port(s2) != 0)
			ret = SETUP_FAILED;
	}
	socktab_net_free(net);
	return ret;
}

/* O6: any/any -> EADDRINUSE (R40 wildcards overlap, R42 step 3). */
TEST(o6_any_any)
{
	CHECK_EQ(second_bind(V4("0.0.0.0"), V4("0.0.0.0")), -EADDRINUSE);
}

/* O6: the same specific address twice -> EADDRINUSE (R43 exact tb2). */
TEST(o6_same_specific)
{
	CHECK_EQ(second_bind(V4("127.0.0.1"), V4("127.0.0.1")), -EADDRINUSE);
}

/* O6: SO_REUSEADDR on both, nobody listening -> OK (R42 step 2, relax). */
TEST(o6_reuseaddr_both)
{
	CHECK_EQ(second_bind(REUSEADDR("0.0.0.0"), REUSEADDR("0.0.0.0")), 0);
	CHECK_EQ(second_bind(REUSEADDR("127.0.0.1"), REUSEADDR("127.0.0.1")), 0);
	CHECK_EQ(second_bind(REUSEADDR("0.0.0.0"), REUSEADDR("127.0.0.1")), 0);
}

/* R42 step 2 needs SO_REUSEADDR on *both* sides. */
TEST(o6_reuseaddr_one_side)
{
	CHECK_EQ(second_bind(REUSEADDR("0.0.0.0"), V4("0.0.0.0")), -EADDRINUSE);
	CHECK_EQ(second_bind(V4("0.0.0.0"), REUSEADDR("0.0.0.0")), -EADDRINUSE);
}

/* O6: 127.0.0.1 vs 127.0.0.2 -> OK (R40: different specific addresses do not overlap). */
TEST(o6_distinct_specific)
{
	CHECK_EQ(second_bind(V4("127.0.0.1"), V4("127.0.0.2")), 0);
	CHECK_EQ(second_bind(V4("127.0.0.2"), V4("127.0.0.1")), 0);
}

/* O6: any vs 127.0.0.1, either order -> EADDRINUSE (R40, R43 wildcard tb2). */
TEST(o6_any_vs_specific)
{
	CHECK_EQ(second_bind(V4("0.0.0.0"), V4("127.0.0.1")), -EADDRINUSE);
	CHECK_EQ(second_bind(V4("127.0.0.1"), V4("0.0.0.0")), -EADDRINUSE);
}

/* O6, R47: SO_REUSEPORT on both with the same uid -> OK. */
TEST(o6_reuseport_same_uid)
{
	CHECK_EQ(second_bind(REUSEPORT("0.0.0.0", -1), REUSEPORT("0.0.0.0", -1)), 0);
	CHECK_EQ(second_bind(REUSEPORT("0.0.0.0", 1000), REUSEPORT("0.0.0.0", 1000)), 0);
	CHECK_EQ(second_bind(REUSEPORT("127.0.0.1", 1000), REUSEPORT("127.0.0.1", 1000)), 0);
}

/* O6, R47: SO_REUSEPORT on one side only -> EADDRINUSE, in both orders. */
TEST(o6_reuseport_one_side)
{
	CHECK_EQ(second_bind(REUSEPORT("0.0.0.0", -1), V4("0.0.0.0")), -EADDRINUSE);
	CHECK_EQ(second_bind(V4("0.0.0.0"), REUSEPORT("0.0.0.0", -1)), -EADDRINUSE);
}

/* O6, R47: SO_REUSEPORT on both but different owners -> EADDRINUSE at bind. */
TEST(o6_reuseport_other_uid)
{
	CHECK_EQ(second_bind(REUSEPORT("0.0.0.0", 1000), REUSEPORT("0.0.0.0", 1001)), -EADDRINUSE);
	CHECK_EQ(second_bind(REUSEPORT("127.0.0.1", 0), REUSEPORT("127.0.0.1", 1001)), -EADDRINUSE);
}

/* R44 FASTREUSEPORT: a third reuseport socket of another uid is refused after two same-uid ones. */
TEST(reuseport_third_other_uid)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s[3];
	struct side sd[3] = { REUSEPORT("0.0.0.0", 1000), REUSEPORT("0.0.0.0", 1000),
			      REUSEPORT("0.0.0.0", 1001) };

	CHECK(net);
	for (int i = 0; i < 3; i++) {
		s[i] = side_socket(net, &sd[i]);
		CHECK(s[i]);
	}
	CHECK_EQ(check_bind4(s[0], "0.0.0.0", PORT), 0);
	CHECK_EQ(check_bind4(s[1], "0.0.0.0", PORT), 0);
	CHECK_EQ(check_bind4(s[2], "0.0.0.0", PORT), -EADDRINUSE);
	CHECK_EQ(check_port(s[2]), 0);
	socktab_net_free(net);
}

/* O6: "::" dual-stack vs v4 any -> EADDRINUSE in both orders (R40). */
TEST(o6_v6any_dual_vs_v4any)
{
	CHECK_EQ(second_bind(V6("::"), V4("0.0.0.0")), -EADDRINUSE);
	CHECK_EQ(second_bind(V4("0.0.0.0"), V6("::")), -EADDRINUSE);
}

/* O6: "::" v6only vs v4 any -> OK in both orders (R40, R41). */
TEST(o6_v6any_v6only_vs_v4any)
{
	CHECK_EQ(second_bind(V6ONLY("::"), V4("0.0.0.0")), 0);
	CHECK_EQ(second_bind(V4("0.0.0.0"), V6ONLY("::")), 0);
}

/* O6: "::1" vs v4 any -> OK in both orders: a specific v6 bind forces v6only (R38). */
TEST(o6_v6loopback_vs_v4any)
{
	CHECK_EQ(second_bind(V6("::1"), V4("0.0.0.0")), 0);
	CHECK_EQ(second_bind(V4("0.0.0.0"), V6("::1")), 0);
}

/* O6: "::ffff:127.0.0.1" vs 127.0.0.1 -> EADDRINUSE in both orders (R40: compared as IPv4). */
TEST(o6_mapped_vs_v4)
{
	CHECK_EQ(second_bind(V6("::ffff:127.0.0.1"), V4("127.0.0.1")), -EADDRINUSE);
	CHECK_EQ(second_bind(V4("127.0.0.1"), V6("::ffff:127.0.0.1")), -EADDRINUSE);
}

/* R40: a v4-mapped address and a different v4 address do not overlap. */
TEST(mapped_vs_other_v4)
{
	CHECK_EQ(second_bind(V6("::ffff:127.0.0.1"), V4("127.0.0.2")), 0);
}

/* O6: "::" dual vs 127.0.0.1 -> EADDRINUSE in both orders (R40, R43 ANY tb2 always qualifies). */
TEST(o6_v6any_dual_vs_v4specific)
{
	CHECK_EQ(second_bind(V6("::"), V4("127.0.0.1")), -EADDRINUSE);
	CHECK_EQ(second_bind(V4("127.0.0.1"), V6("::")), -EADDRINUSE);
}

/* R40, R41: "::" v6only never overlaps an IPv4 socket, specific or not. */
TEST(v6any_v6only_vs_v4specific)
{
	CHECK_EQ(second_bind(V6ONLY("::"), V4("127.0.0.1")), 0);
	CHECK_EQ(second_bind(V4("127.0.0.1"), V6ONLY("::")), 0);
}

/* O6: "::" v6only vs "::1" -> EADDRINUSE in both orders (R40: v6 wildcard overlaps v6). */
TEST(o6_v6any_v6only_vs_v6loopback)
{
	CHECK_EQ(second_bind(V6ONLY("::"), V6("::1")), -EADDRINUSE);
	CHECK_EQ(second_bind(V6("::1"), V6ONLY("::")), -EADDRINUSE);
}

/* R40: "::" vs "::", dual or v6only -> EADDRINUSE. */
TEST(v6any_vs_v6any)
{
	CHECK_EQ(second_bind(V6("::"), V6("::")), -EADDRINUSE);
	CHECK_EQ(second_bind(V6ONLY("::"), V6ONLY("::")), -EADDRINUSE);
	CHECK_EQ(second_bind(V6("::"), V6ONLY("::")), -EADDRINUSE);
}

/* ---- entry checks (R37, R38, O11) ---- */

/* O11, R37: a second bind of a bound socket -> EINVAL, and the first port is kept. */
TEST(entry_double_bind)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *sk;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(check_bind4(sk, "127.0.0.1", PORT), 0);
	CHECK_EQ(check_bind4(sk, "127.0.0.1", PORT + 1), -EINVAL);
	CHECK_EQ(check_bind4(sk, "127.0.0.1", 0), -EINVAL);
	CHECK_EQ(check_port(sk), PORT);
	socktab_net_free(net);
}

/* O11, R37: bind(0) also gives the socket a port; binding again -> EINVAL. */
TEST(entry_double_bind_after_bind0)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *sk;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK(sk);
	CHECK_EQ(check_bind6(sk, "::", 0), 0);
	CHECK_NE(check_port(sk), 0);
	CHECK_EQ(check_bind6(sk, "::", PORT), -EINVAL);
	socktab_net_free(net);
}

/* O11, R67: IPV6_V6ONLY on a socket that already has a port -> EINVAL. */
TEST(entry_v6only_after_bind)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *sk;
	int v = -1;
	socklen_t len = sizeof(v);

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK(sk);
	CHECK_EQ(check_setint(sk, IPPROTO_IPV6, IPV6_V6ONLY, 0), 0);
	CHECK_EQ(check_bind6(sk, "::", PORT), 0);
	CHECK_EQ(check_setint(sk, IPPROTO_IPV6, IPV6_V6ONLY, 1), -EINVAL);
	CHECK_EQ(socktab_getsockopt(sk, IPPROTO_IPV6, IPV6_V6ONLY, &v, &len), 0);
	CHECK_EQ(v, 0);
	socktab_net_free(net);
}

/* O11, R38: a v4-mapped address on a v6only socket -> EINVAL. */
TEST(entry_mapped_on_v6only)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *sk;
	struct socktab_net_stats st;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK(sk);
	CHECK_EQ(check_setint(sk, IPPROTO_IPV6, IPV6_V6ONLY, 1), 0);
	CHECK_EQ(check_bind6(sk, "::ffff:127.0.0.1", PORT), -EINVAL);
	CHECK_EQ(check_port(sk), 0);
	CHECK_EQ(socktab_net_stats(net, &st), 0);
	CHECK_EQ(st.bind_buckets, 0);
	/* the failed call left the socket unbound: a plain v6 bind still works */
	CHECK_EQ(check_bind6(sk, "::1", PORT), 0);
	socktab_net_free(net);
}

/* O11, R37, R38: non-local addresses -> EADDRNOTAVAIL (only loopback and wildcards are local). */
TEST(entry_nonlocal)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s4, *s6;
	struct socktab_net_stats st;

	CHECK(net);
	s4 = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	s6 = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK(s4 && s6);
	CHECK_EQ(check_bind4(s4, "10.0.0.1", PORT), -EADDRNOTAVAIL);
	CHECK_EQ(check_bind4(s4, "192.168.1.1", 0), -EADDRNOTAVAIL);
	CHECK_EQ(check_bind6(s6, "2001:db8::1", PORT), -EADDRNOTAVAIL);
	CHECK_EQ(check_bind6(s6, "::ffff:10.0.0.1", PORT), -EADDRNOTAVAIL);
	CHECK_EQ(socktab_net_stats(net, &st), 0);
	CHECK_EQ(st.bind_buckets, 0);
	/* 127.0.0.0/8 is all local (section 15) */
	CHECK_EQ(check_bind4(s4, "127.1.2.3", PORT), 0);
	CHECK_EQ(check_bind6(s6, "::1", PORT), 0);
	socktab_net_free(net);
}

/* R37, R38: an address length shorter than the family's sockaddr -> EINVAL. */
TEST(entry_short_len)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s4, *s6;
	struct sockaddr_in a4 = check_sin("127.0.0.1", PORT);
	struct sockaddr_in6 a6 = check_sin6("::1", PORT);

	CHECK(net);
	s4 = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	s6 = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK(s4 && s6);
	CHECK_EQ(socktab_bind(s4, (struct sockaddr *)&a4, sizeof(a4) - 1), -EINVAL);
	CHECK_EQ(socktab_bind(s4, (struct sockaddr *)&a4, 0), -EINVAL);
	/* below SIN6_LEN_RFC2133 (24) */
	CHECK_EQ(socktab_bind(s6, (struct sockaddr *)&a6, 20), -EINVAL);
	CHECK_EQ(socktab_bind(s6, (struct sockaddr *)&a6, sizeof(struct sockaddr_in)), -EINVAL);
	CHECK_EQ(check_port(s4), 0);
	CHECK_EQ(check_port(s6), 0);
	CHECK_EQ(socktab_bind(s4, (struct sockaddr *)&a4, sizeof(a4)), 0);
	CHECK_EQ(socktab_bind(s6, (struct sockaddr *)&a6, sizeof(a6)), 0);
	socktab_net_free(net);
}

/* R37, R38: the address family must match the socket's -> EAFNOSUPPORT. */
TEST(entry_wrong_family)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s4, *s6;
	struct sockaddr_in6 a6 = check_sin6("::1", PORT);
	struct sockaddr_in6 bad6 = check_sin6("::1", PORT);

	CHECK(net);
	s4 = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	s6 = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK(s4 && s6);
	/* a full-size sockaddr_in6 given to an AF_INET socket */
	CHECK_EQ(socktab_bind(s4, (struct sockaddr *)&a6, sizeof(a6)), -EAFNOSUPPORT);
	/* an AF_INET family in a full-size buffer given to an AF_INET6 socket */
	bad6.sin6_family = AF_INET;
	CHECK_EQ(socktab_bind(s6, (struct sockaddr *)&bad6, sizeof(bad6)), -EAFNOSUPPORT);
	CHECK_EQ(check_port(s4), 0);
	CHECK_EQ(check_port(s6), 0);
	socktab_net_free(net);
}

/* NULL address -> EINVAL. */
TEST(entry_null)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *sk;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(socktab_bind(sk, NULL, sizeof(struct sockaddr_in)), -EINVAL);
	CHECK_EQ(check_port(sk), 0);
	socktab_net_free(net);
}

/* A closed socket -> EBADF (checked before anything reuses its memory). */
TEST(entry_after_close)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *sk;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(check_bind4(sk, "127.0.0.1", PORT), 0);
	CHECK_EQ(socktab_close(sk), 0);
	CHECK_EQ(check_bind4(sk, "127.0.0.1", PORT + 1), -EBADF);
	CHECK_EQ(socktab_close(sk), -EBADF);
	socktab_net_free(net);
}

/* R37: a port below ip_unprivileged_port_start without the capability -> EACCES. */
TEST(entry_privileged_port)
{
	struct socktab_net_params p;
	struct socktab_net *net;
	struct socktab_sock *sk;

	socktab_net_params_init(&p);
	p.privileged = 0;
	net = socktab_net_new(&p);
	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(check_bind4(sk, "127.0.0.1", 80), -EACCES);
	CHECK_EQ(check_port(sk), 0);
	CHECK_EQ(check_bind4(sk, "127.0.0.1", 1024), 0);
	socktab_net_free(net);

	net = socktab_net_new(NULL); /* privileged by default */
	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(check_bind4(sk, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(sk), 80);
	socktab_net_free(net);
}

/* R38: a failed specific-v6 bind restores the socket's v6only setting. */
TEST(failed_v6_bind_restores_v6only)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a, *b;
	int v = -1;
	socklen_t len = sizeof(v);

	CHECK(net);
	a = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK(a && b);
	CHECK_EQ(check_bind6(a, "::1", PORT), 0);
	CHECK_EQ(socktab_getsockopt(a, IPPROTO_IPV6, IPV6_V6ONLY, &v, &len), 0);
	CHECK_EQ(v, 1); /* forced by the specific address */
	CHECK_EQ(check_bind6(b, "::1", PORT), -EADDRINUSE);
	v = -1;
	len = sizeof(v);
	CHECK_EQ(socktab_getsockopt(b, IPPROTO_IPV6, IPV6_V6ONLY, &v, &len), 0);
	CHECK_EQ(v, 0);
	/* still dual-stack and unbound: "::" on another port overlaps v4 any there */
	CHECK_EQ(check_bind6(b, "::", PORT + 1), 0);
	socktab_net_free(net);
}

/* ---- tables after success and failure ---- */

/* Error policy, R43: a failed bind leaves the tables unchanged; the socket can bind elsewhere. */
TEST(failed_bind_leaves_tables)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a, *b;
	struct socktab_net_stats st;

	CHECK(net);
	a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(a && b);
	CHECK_EQ(socktab_net_stats(net, &st), 0);
	CHECK_EQ(st.bind_buckets, 0);
	CHECK_EQ(check_bind4(a, "0.0.0.0", PORT), 0);
	CHECK_EQ(socktab_net_stats(net, &st), 0);
	CHECK_EQ(st.bind_buckets, 1);
	CHECK_EQ(check_bind4(b, "0.0.0.0", PORT), -EADDRINUSE);
	CHECK_EQ(check_bind4(b, "127.0.0.1", PORT), -EADDRINUSE);
	CHECK_EQ(socktab_net_stats(net, &st), 0);
	CHECK_EQ(st.bind_buckets, 1);
	CHECK_EQ(check_port(b), 0);
	CHECK_EQ(check_bind4(b, "127.0.0.1", PORT + 1), 0);
	CHECK_EQ(check_port(b), PORT + 1);
	CHECK_EQ(socktab_net_stats(net, &st), 0);
	CHECK_EQ(st.bind_buckets, 2);
	/* closing the owners releases their buckets */
	CHECK_EQ(socktab_close(a), 0);
	CHECK_EQ(socktab_close(b), 0);
	CHECK_EQ(socktab_net_stats(net, &st), 0);
	CHECK_EQ(st.bind_buckets, 0);
	socktab_net_free(net);
}

/* A port is free again once its binder closes. */
TEST(port_free_after_close)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a, *b;

	CHECK(net);
	a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(a);
	CHECK_EQ(check_bind4(a, "0.0.0.0", PORT), 0);
	CHECK_EQ(socktab_close(a), 0);
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(b);
	CHECK_EQ(check_bind4(b, "0.0.0.0", PORT), 0);
	socktab_net_free(net);
}

/* R39: getsockname reports the bound address and port; getpeername stays ENOTCONN. */
TEST(getsockname_after_bind)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s4, *s6;
	struct sockaddr_in a4;
	struct sockaddr_in6 a6;
	struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;
	socklen_t len;

	CHECK(net);
	s4 = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	s6 = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK(s4 && s6);
	CHECK_EQ(check_bind4(s4, "127.0.0.2", PORT), 0);
	len = sizeof(a4);
	memset(&a4, 0xff, sizeof(a4));
	CHECK_EQ(socktab_getsockname(s4, (struct sockaddr *)&a4, &len), 0);
	CHECK_EQ(len, sizeof(a4));
	CHECK_EQ(a4.sin_family, AF_INET);
	CHECK_EQ(ntohs(a4.sin_port), PORT);
	CHECK_EQ(ntohl(a4.sin_addr.s_addr), 0x7f000002);
	len = sizeof(a4);
	CHECK_EQ(socktab_getpeername(s4, (struct sockaddr *)&a4, &len), -ENOTCONN);

	CHECK_EQ(check_bind6(s6, "::1", PORT + 1), 0);
	len = sizeof(a6);
	CHECK_EQ(socktab_getsockname(s6, (struct sockaddr *)&a6, &len), 0);
	CHECK_EQ(len, sizeof(a6));
	CHECK_EQ(a6.sin6_family, AF_INET6);
	CHECK_EQ(ntohs(a6.sin6_port), PORT + 1);
	CHECK(memcmp(&a6.sin6_addr, &lo6, sizeof(lo6)) == 0);
	socktab_net_free(net);
}

/* ---- bind(0) (R49, R50) ---- */

/* O1, R49 step 3: with the default range (even low) bind(0) picks odd ports in range. */
TEST(bind0_odd_ports)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *sk[50];
	int lo = 0, hi = 0;

	CHECK(net);
	CHECK_EQ(socktab_net_get_port_range(net, &lo, &hi), 0);
	CHECK_EQ(lo, 32768);
	CHECK_EQ(hi, 60999);
	for (int i = 0; i < 50; i++) {
		int port;

		sk[i] = socktab_socket(net, SOCKTAB_TCP, i % 2 ? AF_INET6 : AF_INET);
		CHECK(sk[i]);
		CHECK_EQ(i % 2 ? check_bind6(sk[i], "::", 0) : check_bind4(sk[i], "0.0.0.0", 0), 0);
		port = check_port(sk[i]);
		CHECK(port >= lo && port <= hi);
		CHECK_EQ(port % 2, 1);
		/* R50: a wildcard bind(0) never returns a port an overlapping owner holds */
		for (int j = 0; j < i; j++)
			CHECK_NE(port, check_port(sk[j]));
	}
	socktab_net_free(net);
}

/* O1: parity is relative to low: an odd low makes bind(0) return even ports. */
TEST(bind0_parity_odd_low)
{
	struct socktab_net *net = check_net(40001, 40200, NULL);

	CHECK(net);
	for (int i = 0; i < 30; i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		int port;

		CHECK(sk);
		CHECK_EQ(check_bind4(sk, "127.0.0.1", 0), 0);
		port = check_port(sk);
		CHECK(port >= 40001 && port <= 40200);
		CHECK_EQ(port % 2, 0);
	}
	socktab_net_free(net);
}

/* R66, O11: reserved ports are skipped by bind(0) but can be bound explicitly. */
TEST(bind0_skips_reserved)
{
	struct socktab_net *net = check_net(40000, 40019, NULL);
	struct socktab_sock *sk[4], *extra, *expl;
	int seen = 0;

	CHECK(net);
	CHECK_EQ(socktab_net_set_reserved(net, 40000, 40015, 1), 0);
	for (int i = 0; i < 4; i++) {
		int port;

		sk[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK(sk[i]);
		CHECK_EQ(check_bind4(sk[i], "0.0.0.0", 0), 0);
		port = check_port(sk[i]);
		CHECK(port >= 40016 && port <= 40019);
		CHECK((seen & (1 << (port - 40016))) == 0);
		seen |= 1 << (port - 40016);
	}
	CHECK_EQ(seen, 0xf);
	/* every unreserved port is taken: O4 */
	extra = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(extra);
	CHECK_EQ(check_bind4(extra, "0.0.0.0", 0), -EADDRINUSE);
	CHECK_EQ(check_port(extra), 0);
	/* explicit binds to reserved ports work */
	CHECK_EQ(check_bind4(extra, "0.0.0.0", 40005), 0);
	expl = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK(expl);
	CHECK_EQ(check_bind6(expl, "::", 40000), 0);
	socktab_net_free(net);
}

/* R66: un-reserving a port makes it available to bind(0) again. */
TEST(bind0_unreserve)
{
	struct socktab_net *net = check_net(40000, 40001, NULL);
	struct socktab_sock *a, *b;

	CHECK(net);
	CHECK_EQ(socktab_net_set_reserved(net, 40000, 40001, 1), 0);
	a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(a);
	CHECK_EQ(check_bind4(a, "0.0.0.0", 0), -EADDRINUSE);
	CHECK_EQ(socktab_net_set_reserved(net, 40001, 40001, 0), 0);
	CHECK_EQ(check_bind4(a, "0.0.0.0", 0), 0);
	CHECK_EQ(check_port(a), 40001);
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(b);
	CHECK_EQ(check_bind4(b, "0.0.0.0", 0), -EADDRINUSE);
	socktab_net_free(net);
}

/*
 * O3, R49 step 2: with SO_REUSEADDR, bind(0) searches [low, half) first,
 * half = low + 2*floor((high + 1 - low) / 4); within it the odd-offset pass comes first (step 3).
 */
TEST(bind0_reuseaddr_lower_half)
{
	const int lo = 40000, hi = 40099;
	const int half = lo + 2 * ((hi + 1 - lo) / 4); /* 40050 */
	struct socktab_net *net = check_net(lo, hi, NULL);
	int seen[100] = { 0 };

	CHECK(net);
	CHECK_EQ(half, 40050);
	for (int i = 0; i < half - lo; i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		int port;

		CHECK(sk);
		CHECK_EQ(check_setint(sk, SOL_SOCKET, SO_REUSEADDR, 1), 0);
		CHECK_EQ(check_bind4(sk, "0.0.0.0", 0), 0);
		port = check_port(sk);
		CHECK(port >= lo && port < half);
		/* first the 25 ports of the other parity than low, then the rest */
		CHECK_EQ(port % 2, i < (half - lo) / 2 ? 1 : 0);
		/* R50: relax=false, even REUSEADDR owners are not shared */
		CHECK_EQ(seen[port - lo], 0);
		seen[port - lo] = 1;
	}
	/* lower part full: the next one comes from the upper part */
	for (int i = 0; i < hi + 1 - half; i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		int port;

		CHECK(sk);
		CHECK_EQ(check_setint(sk, SOL_SOCKET, SO_REUSEADDR, 1), 0);
		CHECK_EQ(check_bind4(sk, "0.0.0.0", 0), 0);
		port = check_port(sk);
		CHECK(port >= half && port <= hi);
		CHECK_EQ(seen[port - lo], 0);
		seen[port - lo] = 1;
	}
	socktab_net_free(net);
}

/* R49 step 2: without SO_REUSEADDR the whole range is used (some port lands in the upper part). */
TEST(bind0_no_reuseaddr_whole_range)
{
	const int lo = 40000, hi = 40099;
	struct socktab_net *net = check_net(lo, hi, NULL);
	int upper = 0;

	CHECK(net);
	for (int i = 0; i < 20; i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		int port;

		CHECK(sk);
		CHECK_EQ(check_bind4(sk, "0.0.0.0", 0), 0);
		port = check_port(sk);
		CHECK(port >= lo && port <= hi);
		if (port >= 40050)
			upper++;
	}
	/* 20 uniform picks among 50 odd ports all in the lower 25: probability ~1e-9 */
	CHECK(upper > 0);
	socktab_net_free(net);
}

/* O4, R49 step 6: a small range exhausted by bind(0) -> EADDRINUSE, for v4 and v6. */
TEST(bind0_exhaustion)
{
	struct socktab_net *net = check_net(40000, 40001, NULL);
	struct socktab_sock *a, *b, *c, *d;
	struct socktab_net_stats st;
	int pa, pb;

	CHECK(net);
	a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	d = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK(a && b && c && d);
	CHECK_EQ(check_bind4(a, "0.0.0.0", 0), 0);
	CHECK_EQ(check_bind4(b, "0.0.0.0", 0), 0);
	pa = check_port(a);
	pb = check_port(b);
	CHECK_EQ(pa, 40001); /* odd first (O1) */
	CHECK_EQ(pb, 40000);
	CHECK_EQ(check_bind4(c, "0.0.0.0", 0), -EADDRINUSE);
	CHECK_EQ(check_bind4(c, "127.0.0.1", 0), -EADDRINUSE);
	CHECK_EQ(check_bind6(d, "::", 0), -EADDRINUSE);
	CHECK_EQ(check_port(c), 0);
	CHECK_EQ(socktab_net_stats(net, &st), 0);
	CHECK_EQ(st.bind_buckets, 2);
	/* R50: SO_REUSEADDR does not help bind(0) without ip_autobind_reuse */
	CHECK_EQ(check_setint(c, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_bind4(c, "0.0.0.0", 0), -EADDRINUSE);
	/* freeing a port makes bind(0) succeed again */
	CHECK_EQ(socktab_close(a), 0);
	CHECK_EQ(check_bind4(c, "0.0.0.0", 0), 0);
	CHECK_EQ(check_port(c), 40001);
	socktab_net_free(net);
}

/* R50: a specific-address bind(0) may take a port held on a *different* specific address. */
TEST(bind0_specific_shares_other_address)
{
	struct socktab_net *net = check_net(40000, 40000, NULL);
	struct socktab_sock *a, *b, *c;

	CHECK(net);
	a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(a && b && c);
	CHECK_EQ(check_bind4(a, "127.0.0.1", 0), 0);
	CHECK_EQ(check_port(a), 40000);
	CHECK_EQ(check_bind4(b, "127.0.0.2", 0), 0);
	CHECK_EQ(check_port(b), 40000);
	/* a wildcard overlaps both */
	CHECK_EQ(check_bind4(c, "0.0.0.0", 0), -EADDRINUSE);
	socktab_net_free(net);
}

/* ---- explicit binds and connect() (R55, R59, O5) ---- */

/* O5, R59: a port bound explicitly on 127.0.0.2 is never picked by connect() from 127.0.0.1. */
TEST(connect_skips_explicit_bind)
{
	struct socktab_net *net = check_net(40000, 40000, NULL);
	struct socktab_sock *binder, *c1, *c2;

	CHECK(net);
	binder = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	c1 = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(binder && c1);
	CHECK_EQ(check_bind4(binder, "127.0.0.2", 40000), 0);
	CHECK_EQ(check_connect4(c1, "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(check_connect4(c1, "127.0.0.1", 81), -EADDRNOTAVAIL);
	/* after the binder closes, the port is usable by connect() */
	CHECK_EQ(socktab_close(binder), 0);
	c2 = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(c2);
	CHECK_EQ(check_connect4(c2, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(c2), 40000);
	/* the failed socket may retry (a failed connect left the tables unchanged) */
	CHECK_EQ(check_connect4(c1, "127.0.0.1", 81), 0);
	CHECK_EQ(check_port(c1), 40000);
	socktab_net_free(net);
}

/* O5, R59: with a 2-port range connect() only uses the port nobody bound explicitly. */
TEST(connect_two_ports_one_bound)
{
	struct socktab_net *net = check_net(40000, 40001, NULL);
	struct socktab_sock *binder, *c[3];

	CHECK(net);
	binder = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK(binder);
	CHECK_EQ(check_bind6(binder, "::1", 40000), 0);
	for (int i = 0; i < 3; i++) {
		c[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK(c[i]);
		/* R59: connect() shares its own port across different peers */
		CHECK_EQ(check_connect4(c[i], "127.0.0.1", 80 + i), 0);
		CHECK_EQ(check_port(c[i]), 40001);
	}
	socktab_net_free(net);
}

/* O5: an explicit bind even with SO_REUSEADDR keeps connect() off the port (R55: fastreuse >= 0). */
TEST(connect_skips_reuseaddr_bind)
{
	struct socktab_net *net = check_net(40000, 40000, NULL);
	struct socktab_sock *binder, *c;

	CHECK(net);
	binder = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(binder && c);
	CHECK_EQ(check_setint(binder, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_setint(c, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_bind4(binder, "127.0.0.3", 40000), 0);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), -EADDRNOTAVAIL);
	socktab_net_free(net);
}

/* R59: a bind(0) port counts as explicitly bound too (its bucket is not connect()-created). */
TEST(connect_skips_bind0_port)
{
	struct socktab_net *net = check_net(40000, 40000, NULL);
	struct socktab_sock *binder, *c;

	CHECK(net);
	binder = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(binder && c);
	CHECK_EQ(check_bind4(binder, "127.0.0.2", 0), 0);
	CHECK_EQ(check_port(binder), 40000);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 80), -EADDRNOTAVAIL);
	socktab_net_free(net);
}

/* R53: a socket bound with a port keeps it on connect(); a second such socket to the same peer
 * gets EADDRNOTAVAIL, to another peer OK. */
TEST(connect_bound_port_unique)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a, *b;

	CHECK(net);
	a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(a && b);
	CHECK_EQ(check_setint(a, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_setint(b, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(check_bind4(a, "127.0.0.1", 12500), 0);
	CHECK_EQ(check_bind4(b, "127.0.0.1", 12500), 0);
	CHECK_EQ(check_connect4(a, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(a), 12500);
	CHECK_EQ(check_connect4(b, "127.0.0.1", 80), -EADDRNOTAVAIL);
	CHECK_EQ(check_connect4(b, "127.0.0.1", 81), 0);
	CHECK_EQ(check_port(b), 12500);
	socktab_net_free(net);
}

/* ---- IP_BIND_ADDRESS_NO_PORT (R60) ---- */

/* R60, O1: bind(addr, 0) records only the address; connect() then picks an even port. */
TEST(bind_address_no_port)
{
	struct socktab_net *net = socktab_net_new(NULL);

	CHECK(net);
	for (int i = 0; i < 20; i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		struct sockaddr_in a;
		socklen_t len = sizeof(a);
		int port;

		CHECK(sk);
		CHECK_EQ(check_setint(sk, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1), 0);
		CHECK_EQ(check_bind4(sk, "127.0.0.1", 0), 0);
		CHECK_EQ(check_port(sk), 0);
		CHECK_EQ(socktab_getsockname(sk, (struct sockaddr *)&a, &len), 0);
		CHECK_EQ(ntohl(a.sin_addr.s_addr), 0x7f000001);
		CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), 0);
		port = check_port(sk);
		CHECK(port >= 32768 && port <= 60999);
		CHECK_EQ(port % 2, 0);
	}
	socktab_net_free(net);
}

/* R60: the same for IPv6 on ::1. */
TEST(bind_address_no_port_v6)
{
	struct socktab_net *net = socktab_net_new(NULL);

	CHECK(net);
	for (int i = 0; i < 10; i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
		int port;

		CHECK(sk);
		CHECK_EQ(check_setint(sk, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1), 0);
		CHECK_EQ(check_bind6(sk, "::1", 0), 0);
		CHECK_EQ(check_port(sk), 0);
		CHECK_EQ(check_connect6(sk, "::1", 80), 0);
		port = check_port(sk);
		CHECK(port >= 32768 && port <= 60999);
		CHECK_EQ(port % 2, 0);
	}
	socktab_net_free(net);
}

/* R60: a nonzero port ignores IP_BIND_ADDRESS_NO_PORT. */
TEST(bind_address_no_port_explicit)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *sk;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(check_setint(sk, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1), 0);
	CHECK_EQ(check_bind4(sk, "127.0.0.1", PORT), 0);
	CHECK_EQ(check_port(sk), PORT);
	CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(sk), PORT);
	socktab_net_free(net);
}

/* R53, R60: without the option, bind(addr, 0) picks a port at bind time (odd) and keeps it. */
TEST(bind0_then_connect_keeps_port)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *sk;
	int port;

	CHECK(net);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(sk);
	CHECK_EQ(check_bind4(sk, "127.0.0.1", 0), 0);
	port = check_port(sk);
	CHECK_EQ(port % 2, 1);
	CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(sk), port);
	socktab_net_free(net);
}

CHECK_MAIN(o6_any_any, o6_same_specific, o6_reuseaddr_both, o6_reuseaddr_one_side,
	   o6_distinct_specific, o6_any_vs_specific, o6_reuseport_same_uid, o6_reuseport_one_side,
	   o6_reuseport_other_uid, reuseport_third_other_uid, o6_v6any_dual_vs_v4any,
	   o6_v6any_v6only_vs_v4any, o6_v6loopback_vs_v4any, o6_mapped_vs_v4, mapped_vs_other_v4,
	   o6_v6any_dual_vs_v4specific, v6any_v6only_vs_v4specific, o6_v6any_v6only_vs_v6loopback,
	   v6any_vs_v6any, entry_double_bind, entry_double_bind_after_bind0,
	   entry_v6only_after_bind, entry_mapped_on_v6only, entry_nonlocal, entry_short_len,
	   entry_wrong_family, entry_null, entry_after_close, entry_privileged_port,
	   failed_v6_bind_restores_v6only, failed_bind_leaves_tables, port_free_after_close,
	   getsockname_after_bind, bind0_odd_ports, bind0_parity_odd_low, bind0_skips_reserved,
	   bind0_unreserve, bind0_reuseaddr_lower_half, bind0_no_reuseaddr_whole_range,
	   bind0_exhaustion, bind0_specific_shares_other_address, connect_skips_explicit_bind,
	   connect_two_ports_one_bound, connect_skips_reuseaddr_bind, connect_skips_bind0_port,
	   connect_bound_port_unique, bind_address_no_port, bind_address_no_port_v6,
	   bind_address_no_port_explicit, bind0_then_connect_keeps_port)
