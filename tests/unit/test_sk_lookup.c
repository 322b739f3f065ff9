/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The dispatch hook (R125-R131): where each protocol runs it, its three verdicts, the chaining
 * of several callbacks (the cases of the kernel's selftest test_multi_prog_lookup), the assign
 * checks (its test_sk_assign_helper cases and the errors of bpf_sk_lookup_assign), the
 * no-reuseport flag and the group pick after a selection (its "redir with reuseport" / "skip
 * reuseport" cases), IPv4 and IPv6 (and an IPv4 packet to a dual-stack socket), the context a
 * callback sees, single vs batch lookups, and bad input.
 */
#include <linux/filter.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* One callback's script: what it assigns (with which flags) and returns; what it saw. */
struct cb {
	int verdict;
	struct socktab_sock *assign;   /* assigned when @do_assign */
	bool do_assign;
	unsigned int flags;
	int err;                       /* the assign's return */
	int calls;
	struct socktab_sock *seen;     /* ctx->sk when called */
	struct socktab_sk_lookup ctx;  /* the last context */
	int lo, hi;                    /* with @hi: act only for local ports in [lo, hi] */
};

static int run_cb(struct socktab_sk_lookup *ctx, void *arg)
{
	struct cb *c = arg;

	c->calls++;
	c->seen = ctx->sk;
	c->ctx = *ctx;
	if (c->hi && (ctx->local_port < c->lo || ctx->local_port > c->hi))
		return SOCKTAB_SK_PASS;
	if (c->do_assign)
		c->err = socktab_sk_lookup_assign(ctx, c->assign, c->flags);
	return c->verdict;
}

static struct socktab_sock *tcp_listener4(struct socktab_net *net, const char *ip, int port)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	if (check_bind4(sk, ip, port) || socktab_listen(sk, 16)) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

static struct socktab_sock *udp_bound4(struct socktab_net *net, const char *ip, int port)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_UDP, AF_INET);

	if (check_bind4(sk, ip, port)) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

/* The referenced TCP lookup of a packet from 127.0.0.2:@sport to 127.0.0.1:@dport; the
 * reference is dropped at once (the sockets stay open: only the pointer is compared). */
static struct socktab_sock *tcp4(struct socktab_net *net, int sport, int dport)
{
	struct socktab_sock *sk = socktab_lookup_tcp4(net, check_ip4("127.0.0.2"), htons((uint16_t)sport),
						      check_ip4("127.0.0.1"), htons((uint16_t)dport),
						      SOCKTAB_LOOPBACK_IFINDEX, 0);

	socktab_sock_put(sk);
	return sk;
}

/* The same packet through the RCU-scoped form. */
static struct socktab_sock *tcp4_rcu(struct socktab_net *net, int sport, int dport)
{
	struct socktab_sock *sk;

	socktab_rcu_read_lock();
	sk = socktab_lookup_tcp4_rcu(net, check_ip4("127.0.0.2"), htons((uint16_t)sport),
				     check_ip4("127.0.0.1"), htons((uint16_t)dport),
				     SOCKTAB_LOOPBACK_IFINDEX, 0);
	socktab_rcu_read_unlock();
	return sk;
}

static struct socktab_sock *listener4(struct socktab_net *net, int sport, int dport)
{
	struct socktab_sock *sk =
		socktab_lookup_listener4(net, check_ip4("127.0.0.2"), htons((uint16_t)sport),
					 check_ip4("127.0.0.1"), htons((uint16_t)dport),
					 SOCKTAB_LOOPBACK_IFINDEX, 0);

	socktab_sock_put(sk);
	return sk;
}

static struct socktab_sock *udp4(struct socktab_net *net, const char *src, int sport, int dport)
{
	struct socktab_sock *sk = socktab_lookup_udp4(net, check_ip4(src), htons((uint16_t)sport),
						      check_ip4("127.0.0.1"), htons((uint16_t)dport),
						      SOCKTAB_LOOPBACK_IFINDEX, 0);

	socktab_sock_put(sk);
	return sk;
}

/* R125, R128: TCP verdicts in every form of the lookup; an established hit never runs the hook. */
TEST(tcp_verdicts)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a = tcp_listener4(net, "127.0.0.1", 80);
	struct socktab_sock *b = tcp_listener4(net, "127.0.0.1", 8080);
	struct socktab_sock *c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct cb cb = { .verdict = SOCKTAB_SK_PASS };
	int id;

	CHECK(a && b && c);
	CHECK_EQ(check_bind4(c, "127.0.0.1", 5555), 0);
	CHECK_EQ(check_connect4(c, "127.0.0.2", 1000), 0);
	id = socktab_sk_lookup_attach(net, run_cb, &cb);
	CHECK(id > 0);
	/* pass, nothing selected: the tables decide */
	CHECK(tcp4(net, 1000, 80) == a);
	CHECK(tcp4(net, 1000, 9999) == NULL);
	CHECK(cb.calls == 2);
	/* pass + socket: every port, in every form */
	cb.do_assign = true;
	cb.assign = b;
	CHECK(tcp4(net, 1001, 80) == b);
	CHECK_EQ(cb.err, 0);
	CHECK(tcp4(net, 1001, 9999) == b);
	CHECK(tcp4_rcu(net, 1001, 9999) == b);
	CHECK(listener4(net, 1001, 443) == b);
	/* the established hit: found before the hook, which is not called */
	cb.calls = 0;
	CHECK(tcp4(net, 1000, 5555) == c);
	CHECK(tcp4_rcu(net, 1000, 5555) == c);
	CHECK_EQ(cb.calls, 0);
	/* drop: no listener, not even the table's */
	cb.do_assign = false;
	cb.verdict = SOCKTAB_SK_DROP;
	CHECK(tcp4(net, 1002, 80) == NULL);
	CHECK(tcp4_rcu(net, 1002, 80) == NULL);
	CHECK(listener4(net, 1002, 80) == NULL);
	CHECK(tcp4(net, 1000, 5555) == c);
	/* detached: the tables alone again */
	CHECK_EQ(socktab_sk_lookup_detach(net, id), 0);
	cb.calls = 0;
	CHECK(tcp4(net, 1002, 80) == a);
	CHECK_EQ(cb.calls, 0);
	socktab_close(a);
	socktab_close(b);
	socktab_close(c);
	socktab_net_free(net);
}

/* R125: UDP runs the hook after the connected match (hash4, or the exact-address pass when hash4
 * is off) and before the unconnected sockets, the exact-address one included. */
TEST(udp_order)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *u = udp_bound4(net, "127.0.0.1", 53);
	struct socktab_sock *other = udp_bound4(net, "127.0.0.1", 5353);
	struct socktab_sock *conn = udp_bound4(net, "127.0.0.1", 6000);
	struct cb cb = { .verdict = SOCKTAB_SK_PASS };

	CHECK(u && other && conn);
	CHECK_EQ(check_connect4(conn, "127.0.0.7", 7000), 0);
	CHECK(socktab_sk_lookup_attach(net, run_cb, &cb) > 0);
	CHECK(udp4(net, "127.0.0.2", 1000, 53) == u);
	cb.do_assign = true;
	cb.assign = other;
	/* the hook's pick beats the exact-address unconnected socket */
	CHECK(udp4(net, "127.0.0.2", 1000, 53) == other);
	CHECK(udp4(net, "127.0.0.2", 1000, 9) == other);
	/* the connected socket is found first, in hash4 and (hash4 off) in the exact pass */
	cb.calls = 0;
	CHECK(udp4(net, "127.0.0.7", 7000, 6000) == conn);
	CHECK_EQ(socktab_net_set_udp_hash4(net, 0), 0);
	CHECK(udp4(net, "127.0.0.7", 7000, 6000) == conn);
	CHECK_EQ(cb.calls, 0);
	/* another source: conn does not match, its port goes to the hook */
	CHECK(udp4(net, "127.0.0.8", 7000, 6000) == other);
	CHECK_EQ(cb.calls, 1);
	cb.do_assign = false;
	cb.verdict = SOCKTAB_SK_DROP;
	CHECK(udp4(net, "127.0.0.2", 1000, 53) == NULL);
	CHECK(udp4(net, "127.0.0.7", 7000, 6000) == conn);
	socktab_close(u);
	socktab_close(other);
	socktab_close(conn);
	socktab_net_free(net);
}

/* R127: the kernel's test_multi_prog_lookup table, each callback counted; plus what a later
 * callback sees and may replace, and a selection whose callback then drops. */
TEST(chaining)
{
	static const struct {
		int v1, v2;         /* verdicts */
		bool s1, s2;        /* assigns */
		bool found;         /* the packet reaches a socket */
	} cases[] = {
		{ SOCKTAB_SK_PASS, SOCKTAB_SK_PASS, false, false, true },  /* pass, pass: tables */
		{ SOCKTAB_SK_DROP, SOCKTAB_SK_DROP, false, false, false }, /* drop, drop */
		{ SOCKTAB_SK_PASS, SOCKTAB_SK_DROP, false, false, false }, /* pass, drop */
		{ SOCKTAB_SK_DROP, SOCKTAB_SK_PASS, false, false, false }, /* drop, pass */
		{ SOCKTAB_SK_PASS, SOCKTAB_SK_PASS, false, true, true },   /* pass, redir */
		{ SOCKTAB_SK_PASS, SOCKTAB_SK_PASS, true, false, true },   /* redir, pass */
		{ SOCKTAB_SK_DROP, SOCKTAB_SK_PASS, false, true, true },   /* drop, redir */
		{ SOCKTAB_SK_PASS, SOCKTAB_SK_DROP, true, false, true },   /* redir, drop */
		{ SOCKTAB_SK_PASS, SOCKTAB_SK_PASS, true, true, true },    /* redir, redir */
		{ SOCKTAB_SK_DROP, SOCKTAB_SK_PASS, true, false, false },  /* assign then drop */
	};
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *table = tcp_listener4(net, "127.0.0.1", 80);
	struct socktab_sock *s1 = tcp_listener4(net, "127.0.0.1", 81);
	struct socktab_sock *s2 = tcp_listener4(net, "127.0.0.1", 82);
	struct cb c1 = { 0 }, c2 = { 0 };
	int id1, id2;

	CHECK(table && s1 && s2);
	id1 = socktab_sk_lookup_attach(net, run_cb, &c1);
	id2 = socktab_sk_lookup_attach(net, run_cb, &c2);
	CHECK(id1 > 0 && id2 > 0 && id1 != id2);
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct socktab_sock *want = !cases[i].found ? NULL
					  : cases[i].s2	    ? s2
					  : cases[i].s1 && cases[i].v1 == SOCKTAB_SK_PASS ? s1
							    : table;

		c1 = (struct cb){ .verdict = cases[i].v1, .do_assign = cases[i].s1, .assign = s1 };
		/* the second replaces a selection of the first (REPLACE) */
		c2 = (struct cb){ .verdict = cases[i].v2, .do_assign = cases[i].s2, .assign = s2,
				  .flags = SOCKTAB_SK_LOOKUP_F_REPLACE };
		if (tcp4(net, 2000 + (int)i, 80) != want) {
			fprintf(stderr, "case %u\n", i);
			CHECK(0);
		}
		/* every callback runs, whatever the verdicts before it */
		CHECK_EQ(c1.calls, 1);
		CHECK_EQ(c2.calls, 1);
		/* the second sees the first's selection only if the first passed */
		CHECK(c2.seen == (cases[i].s1 && cases[i].v1 == SOCKTAB_SK_PASS ? s1 : NULL));
	}
	/* without REPLACE a later assign is refused and the earlier selection stays */
	c1 = (struct cb){ .verdict = SOCKTAB_SK_PASS, .do_assign = true, .assign = s1 };
	c2 = (struct cb){ .verdict = SOCKTAB_SK_PASS, .do_assign = true, .assign = s2 };
	CHECK(tcp4(net, 3000, 80) == s1);
	CHECK_EQ(c2.err, -EEXIST);
	/* NULL with REPLACE is accepted, but the run keeps the last non-NULL selection of a
	 * passing callback ("remember last non-NULL socket"): s1 still gets the packet */
	c2 = (struct cb){ .verdict = SOCKTAB_SK_PASS, .do_assign = true, .assign = NULL,
			  .flags = SOCKTAB_SK_LOOKUP_F_REPLACE };
	CHECK(tcp4(net, 3001, 80) == s1);
	CHECK_EQ(c2.err, 0);
	CHECK(c2.seen == s1);
	/* NULL without REPLACE while nothing is selected: allowed (sk_assign_null) */
	c1 = (struct cb){ .verdict = SOCKTAB_SK_PASS, .do_assign = true, .assign = NULL };
	c2 = (struct cb){ .verdict = SOCKTAB_SK_PASS };
	CHECK(tcp4(net, 3002, 80) == table);
	CHECK_EQ(c1.err, 0);
	CHECK(socktab_sk_lookup_detach(net, id1) == 0);
	CHECK(socktab_sk_lookup_detach(net, id2) == 0);
	socktab_close(table);
	socktab_close(s1);
	socktab_close(s2);
	socktab_net_free(net);
}

/* R126: every refusal, with the kernel's errno, leaves the packet to go on as a pass. */
TEST(assign_checks)
{
	struct socktab_net *net = socktab_net_new(NULL), *net2 = socktab_net_new(NULL);
	struct socktab_sock *table = tcp_listener4(net, "127.0.0.1", 80);
	struct socktab_sock *l6 = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	struct socktab_sock *l6only = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	struct socktab_sock *u = udp_bound4(net, "127.0.0.1", 53);
	struct socktab_sock *uconn = udp_bound4(net, "127.0.0.1", 54);
	struct socktab_sock *unbound = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	struct socktab_sock *notlisten = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *est = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *closed = tcp_listener4(net, "127.0.0.1", 90);
	struct socktab_sock *foreign = tcp_listener4(net2, "127.0.0.1", 80);
	struct cb cb = { .verdict = SOCKTAB_SK_PASS, .do_assign = true };
	const struct {
		struct socktab_sock **sk;
		unsigned int flags;
		int err;
	} refused[] = {
		{ &u, 0, -EPROTOTYPE },            /* UDP socket for a TCP packet */
		{ &uconn, 0, -ESOCKTNOSUPPORT },   /* connected UDP */
		{ &unbound, 0, -ESOCKTNOSUPPORT }, /* UDP without a port */
		{ &notlisten, 0, -ESOCKTNOSUPPORT },
		{ &est, 0, -ESOCKTNOSUPPORT },     /* an established TCP socket */
		{ &closed, 0, -ESOCKTNOSUPPORT },  /* closed */
		{ &l6only, 0, -EAFNOSUPPORT },     /* IPV6_V6ONLY for IPv4 */
		{ &foreign, 0, -EINVAL },          /* another net's */
		{ &table, 4, -EINVAL },            /* unknown flag */
	};

	CHECK(table && l6 && l6only && u && uconn && unbound && notlisten && est && closed &&
	      foreign);
	CHECK_EQ(check_setint(l6only, IPPROTO_IPV6, IPV6_V6ONLY, 1), 0);
	CHECK_EQ(check_bind6(l6, "::", 8000), 0);
	CHECK_EQ(socktab_listen(l6, 8), 0);
	CHECK_EQ(check_bind6(l6only, "::", 8001), 0);
	CHECK_EQ(socktab_listen(l6only, 8), 0);
	CHECK_EQ(check_connect4(uconn, "127.0.0.9", 9), 0);
	CHECK_EQ(check_bind4(est, "127.0.0.1", 5556), 0);
	CHECK_EQ(check_connect4(est, "127.0.0.2", 1000), 0);
	CHECK_EQ(socktab_close(closed), 0);
	CHECK(socktab_sk_lookup_attach(net, run_cb, &cb) > 0);
	for (unsigned int i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		cb.assign = *refused[i].sk;
		cb.flags = refused[i].flags;
		cb.err = 1;
		/* refused, and the callback's PASS leaves the packet to the tables */
		if (tcp4(net, 4000, 80) != table || cb.err != refused[i].err) {
			fprintf(stderr, "case %u: err %d\n", i, cb.err);
			CHECK(0);
		}
	}
	/* a TCP listener for a UDP datagram: the protocol check */
	cb.assign = table;
	cb.flags = 0;
	CHECK(udp4(net, "127.0.0.2", 4000, 53) == u);
	CHECK_EQ(cb.err, -EPROTOTYPE);
	/* a dual-stack AF_INET6 listener takes an IPv4 packet */
	cb.assign = l6;
	CHECK(tcp4(net, 4001, 80) == l6);
	CHECK_EQ(cb.err, 0);
	CHECK_EQ(socktab_sk_lookup_assign(NULL, table, 0), -EINVAL);
	socktab_close(table);
	socktab_close(l6);
	socktab_close(l6only);
	socktab_close(u);
	socktab_close(uconn);
	socktab_close(unbound);
	socktab_close(notlisten);
	socktab_close(est);
	socktab_close(foreign);
	socktab_net_free(net);
	socktab_net_free(net2);
}

/* R126: an AF_INET socket for an IPv6 packet; IPv6 contexts and selections. */
TEST(ipv6)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *l4 = tcp_listener4(net, "127.0.0.1", 80);
	struct socktab_sock *l6 = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	struct socktab_sock *u6 = socktab_socket(net, SOCKTAB_UDP, AF_INET6);
	struct in6_addr src = check_ip6("2001:db8::1"), dst = check_ip6("::1");
	struct cb cb = { .verdict = SOCKTAB_SK_PASS, .do_assign = true };
	struct socktab_sock *sk;

	CHECK(l4 && l6 && u6);
	CHECK_EQ(check_bind6(l6, "::1", 443), 0);
	CHECK_EQ(socktab_listen(l6, 8), 0);
	CHECK_EQ(check_bind6(u6, "::1", 4433), 0);
	CHECK(socktab_sk_lookup_attach(net, run_cb, &cb) > 0);
	cb.assign = l4;
	sk = socktab_lookup_tcp6(net, &src, htons(1234), &dst, htons(80), 7, 0);
	CHECK(sk == NULL); /* refused, and nothing listens on [::1]:80 */
	CHECK_EQ(cb.err, -EAFNOSUPPORT);
	/* the context of an IPv6 packet */
	CHECK_EQ(cb.ctx.family, AF_INET6);
	CHECK_EQ(cb.ctx.protocol, SOCKTAB_TCP);
	CHECK(!memcmp(&cb.ctx.remote_ip6, &src, 16) && !memcmp(&cb.ctx.local_ip6, &dst, 16));
	CHECK_EQ(cb.ctx.remote_port, htons(1234));
	CHECK_EQ(cb.ctx.local_port, 80);
	CHECK_EQ(cb.ctx.ingress_ifindex, 7);
	cb.assign = l6;
	sk = socktab_lookup_tcp6(net, &src, htons(1234), &dst, htons(80), 7, 0);
	CHECK(sk == l6);
	socktab_sock_put(sk);
	socktab_rcu_read_lock();
	sk = socktab_lookup_listener6_rcu(net, &src, htons(1234), &dst, htons(9), 7, 0);
	socktab_rcu_read_unlock();
	CHECK(sk == l6);
	cb.assign = u6;
	sk = socktab_lookup_udp6(net, &src, htons(1234), &dst, htons(53), 7, 0);
	CHECK(sk == u6);
	CHECK_EQ(cb.ctx.protocol, SOCKTAB_UDP);
	socktab_sock_put(sk);
	/* the context of an IPv4 packet */
	cb.assign = l4;
	CHECK(tcp4(net, 1234, 9) == l4);
	CHECK_EQ(cb.ctx.family, AF_INET);
	CHECK_EQ(cb.ctx.remote_ip4, check_ip4("127.0.0.2"));
	CHECK_EQ(cb.ctx.local_ip4, check_ip4("127.0.0.1"));
	CHECK_EQ(cb.ctx.local_port, 9);
	socktab_close(l4);
	socktab_close(l6);
	socktab_close(u6);
	socktab_net_free(net);
}

/* R129: a selected reuseport member hands the packet to its group's pick for the table's hash
 * (the pick the tables make for the same 4-tuple); with NO_REUSEPORT it keeps it. */
TEST(no_reuseport)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *t[4], *u[4];
	struct cb cb = { .verdict = SOCKTAB_SK_PASS, .do_assign = true };
	int id, spread = 0;

	for (int i = 0; i < 4; i++) {
		t[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		u[i] = socktab_socket(net, SOCKTAB_UDP, AF_INET);
		CHECK_EQ(check_setint(t[i], SOL_SOCKET, SO_REUSEPORT, 1), 0);
		CHECK_EQ(check_setint(u[i], SOL_SOCKET, SO_REUSEPORT, 1), 0);
		CHECK_EQ(check_bind4(t[i], "127.0.0.1", 80), 0);
		CHECK_EQ(socktab_listen(t[i], 8), 0);
		CHECK_EQ(check_bind4(u[i], "127.0.0.1", 53), 0);
	}
	for (int p = 0; p < 64; p++) {
		struct socktab_sock *want_t = tcp4(net, 10000 + p, 80);
		struct socktab_sock *want_u = udp4(net, "127.0.0.2", 10000 + p, 53);

		id = socktab_sk_lookup_attach(net, run_cb, &cb);
		CHECK(id > 0);
		cb.assign = t[1];
		cb.flags = 0;
		CHECK(tcp4(net, 10000 + p, 80) == want_t);
		cb.assign = u[1];
		CHECK(udp4(net, "127.0.0.2", 10000 + p, 53) == want_u);
		cb.flags = SOCKTAB_SK_LOOKUP_F_NO_REUSEPORT;
		CHECK(udp4(net, "127.0.0.2", 10000 + p, 53) == u[1]);
		cb.assign = t[1];
		CHECK(tcp4(net, 10000 + p, 80) == t[1]);
		CHECK_EQ(socktab_sk_lookup_detach(net, id), 0);
		spread += want_t != t[1];
	}
	CHECK(spread > 0); /* the group pick is not always the selected member */
	for (int i = 0; i < 4; i++) {
		socktab_close(t[i]);
		socktab_close(u[i]);
	}
	socktab_net_free(net);
}

/* R129 with R110: a selected group member hands over to the pick of the group's classic BPF
 * selector, over the thread's payload, unless NO_REUSEPORT. */
TEST(selector_after_assign)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct sock_filter f[] = {
		{ BPF_LD | BPF_B | BPF_ABS, 0, 0, 0 },
		{ BPF_RET | BPF_A, 0, 0, 0 },
	};
	struct sock_fprog fp = { .len = 2, .filter = f };
	struct cb cb = { .verdict = SOCKTAB_SK_PASS, .do_assign = true };
	struct socktab_sock *u[4];

	for (int i = 0; i < 4; i++) {
		u[i] = socktab_socket(net, SOCKTAB_UDP, AF_INET);
		CHECK_EQ(check_setint(u[i], SOL_SOCKET, SO_REUSEPORT, 1), 0);
		CHECK_EQ(check_bind4(u[i], "127.0.0.1", 4433), 0);
	}
	CHECK_EQ(socktab_setsockopt(u[0], SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &fp, sizeof(fp)),
		 0);
	CHECK(socktab_sk_lookup_attach(net, run_cb, &cb) > 0);
	cb.assign = u[0];
	for (int i = 0; i < 4; i++) {
		unsigned char pkt[2] = { (unsigned char)i, 0 };

		socktab_set_rx_payload(pkt, sizeof(pkt));
		cb.flags = 0;
		/* to another port: the hook's selection, then the group's program */
		CHECK(udp4(net, "127.0.0.2", 1000 + i, 7777) == u[i]);
		cb.flags = SOCKTAB_SK_LOOKUP_F_NO_REUSEPORT;
		CHECK(udp4(net, "127.0.0.2", 1000 + i, 7777) == u[0]);
		socktab_set_rx_payload(NULL, 0);
	}
	for (int i = 0; i < 4; i++)
		socktab_close(u[i]);
	socktab_net_free(net);
}

/* R131: a batch gives what the single lookups give, for TCP and UDP, IPv4 and IPv6, with hooks
 * that select by port range, drop another range and pass the rest. */
TEST(batch_agrees)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *tl = tcp_listener4(net, "0.0.0.0", 80);
	struct socktab_sock *tsel = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	struct socktab_sock *ul = udp_bound4(net, "0.0.0.0", 53);
	struct socktab_sock *usel = socktab_socket(net, SOCKTAB_UDP, AF_INET6);
	struct cb sel = { .verdict = SOCKTAB_SK_PASS, .do_assign = true, .lo = 1000, .hi = 1999 };
	struct cb drop = { .verdict = SOCKTAB_SK_DROP, .lo = 3000, .hi = 3999 };
	struct socktab_tuple4 k4[128];
	struct socktab_tuple6 k6[128];
	struct socktab_hit h[128];

	CHECK(tl && tsel && ul && usel);
	CHECK_EQ(check_bind6(tsel, "::", 7000), 0);
	CHECK_EQ(socktab_listen(tsel, 8), 0);
	CHECK_EQ(check_bind6(usel, "::", 7000), 0);
	CHECK(socktab_sk_lookup_attach(net, run_cb, &sel) > 0);
	CHECK(socktab_sk_lookup_attach(net, run_cb, &drop) > 0);
	for (int i = 0; i < 128; i++) {
		static const uint16_t ports[] = { 80, 53, 1500, 3500, 5000 };
		uint16_t dp = ports[i % 5];

		k4[i] = (struct socktab_tuple4){ .saddr = check_ip4("127.0.0.3"),
						 .daddr = check_ip4("127.0.0.1"),
						 .sport = htons((uint16_t)(20000 + i)),
						 .dport = htons(dp), .dif = 1 };
		k6[i] = (struct socktab_tuple6){ .saddr = check_ip6("2001:db8::3"), .daddr = check_ip6("::1"),
						 .sport = htons((uint16_t)(20000 + i)),
						 .dport = htons(dp), .dif = 1 };
	}
	for (int proto = SOCKTAB_TCP; proto <= SOCKTAB_UDP; proto++) {
		sel.assign = proto == SOCKTAB_TCP ? tsel : usel;
		for (int v6 = 0; v6 < 2; v6++) {
			int n = v6 ? socktab_lookup_batch6(net, proto, k6, 128, h, 0)
				   : socktab_lookup_batch4(net, proto, k4, 128, h, 0);
			int found = 0;

			CHECK(n >= 0);
			for (int i = 0; i < 128; i++) {
				struct socktab_sock *one;

				if (proto == SOCKTAB_TCP && v6)
					one = socktab_lookup_tcp6(net, &k6[i].saddr, k6[i].sport,
								  &k6[i].daddr, k6[i].dport, 1, 0);
				else if (proto == SOCKTAB_TCP)
					one = socktab_lookup_tcp4(net, k4[i].saddr, k4[i].sport,
								  k4[i].daddr, k4[i].dport, 1, 0);
				else if (v6)
					one = socktab_lookup_udp6(net, &k6[i].saddr, k6[i].sport,
								  &k6[i].daddr, k6[i].dport, 1, 0);
				else
					one = socktab_lookup_udp4(net, k4[i].saddr, k4[i].sport,
								  k4[i].daddr, k4[i].dport, 1, 0);
				socktab_sock_put(one);
				if (h[i].sk != one) {
					fprintf(stderr, "proto %d v6 %d key %d\n", proto, v6, i);
					CHECK(0);
				}
				/* the selection range reaches the selected socket */
				if (i % 5 == 2)
					CHECK(one == sel.assign);
				if (i % 5 == 3)
					CHECK(one == NULL);
				found += one != NULL;
				socktab_sock_put(h[i].sk);
			}
			CHECK_EQ(n, found);
		}
	}
	socktab_close(tl);
	socktab_close(tsel);
	socktab_close(ul);
	socktab_close(usel);
	socktab_net_free(net);
}

static int noop(struct socktab_sk_lookup *ctx, void *arg)
{
	(void)ctx;
	++*(int *)arg;
	return SOCKTAB_SK_PASS;
}

/* Bad input: each refusal leaves the callbacks and the tables as they were. */
TEST(bad_input)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a = tcp_listener4(net, "127.0.0.1", 80);
	int calls = 0, ids[SOCKTAB_SK_LOOKUP_MAX];

	CHECK(a);
	CHECK_EQ(socktab_sk_lookup_attach(NULL, noop, &calls), -EINVAL);
	CHECK_EQ(socktab_sk_lookup_attach(net, NULL, &calls), -EINVAL);
	CHECK_EQ(socktab_sk_lookup_detach(NULL, 1), -EINVAL);
	CHECK_EQ(socktab_sk_lookup_detach(net, 1), -ENOENT);
	CHECK(tcp4(net, 1, 80) == a);
	CHECK_EQ(calls, 0);
	for (int i = 0; i < SOCKTAB_SK_LOOKUP_MAX; i++) {
		ids[i] = socktab_sk_lookup_attach(net, noop, &calls);
		CHECK(ids[i] > 0);
		CHECK(i == 0 || ids[i] != ids[i - 1]);
	}
	CHECK_EQ(socktab_sk_lookup_attach(net, noop, &calls), -E2BIG);
	CHECK(tcp4(net, 1, 80) == a);
	CHECK_EQ(calls, SOCKTAB_SK_LOOKUP_MAX);
	socktab_rcu_read_lock();
	CHECK_EQ(socktab_sk_lookup_detach(net, ids[0]), -EDEADLK);
	socktab_rcu_read_unlock();
	CHECK_EQ(socktab_sk_lookup_detach(net, ids[0] + 100000), -ENOENT);
	calls = 0;
	CHECK(tcp4(net, 1, 80) == a);
	CHECK_EQ(calls, SOCKTAB_SK_LOOKUP_MAX);
	for (int i = 0; i < SOCKTAB_SK_LOOKUP_MAX; i++) {
		CHECK_EQ(socktab_sk_lookup_detach(net, ids[i]), 0);
		CHECK_EQ(socktab_sk_lookup_detach(net, ids[i]), -ENOENT);
	}
	calls = 0;
	CHECK(tcp4(net, 1, 80) == a);
	CHECK_EQ(calls, 0);
	socktab_close(a);
	/* a net freed with callbacks attached frees them */
	CHECK(socktab_sk_lookup_attach(net, noop, &calls) > 0);
	socktab_net_free(net);
}

/* Attach/detach against concurrent lookups: every lookup finds the table's listener or the
 * hook's, and no callback runs with an argument whose detach has returned (the writer poisons
 * it at once). The negative control: the -Dnaive_order=true build, whose detach does not wait
 * for a grace period, fails the "after detach" check. */
struct race {
	struct socktab_net *net;
	struct socktab_sock *table, *hooked;
	atomic_int stop, bad, seen_hook, poisoned, lookups;
};

/* Wait (at most about 50 ms) until the reader has made @n more lookups. */
static void race_wait(struct race *r, int n)
{
	int start = atomic_load(&r->lookups);

	for (int i = 0; i < 50000 && atomic_load(&r->lookups) - start < n; i++) {
		struct timespec ts = { 0, 1000 };

		nanosleep(&ts, NULL);
	}
}

struct race_arg {
	atomic_int magic;
	struct race *r;
};

static int race_cb(struct socktab_sk_lookup *ctx, void *arg)
{
	struct race_arg *a = arg;
	struct timespec t0, t1;

	/* Dwell a few microseconds, so that a detach that did not wait would poison the argument
	 * while this call still uses it. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t1);
	while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 5000);
	if (atomic_load(&a->magic) != 0x5eed) {
		atomic_fetch_add(&a->r->poisoned, 1);
		return SOCKTAB_SK_PASS;
	}
	socktab_sk_lookup_assign(ctx, a->r->hooked, 0);
	return SOCKTAB_SK_PASS;
}

static void *race_reader(void *p)
{
	struct race *r = p;

	socktab_thread_register();
	while (!atomic_load(&r->stop)) {
		struct socktab_sock *sk = tcp4(r->net, 1000, 80);

		if (sk == r->hooked)
			atomic_fetch_add(&r->seen_hook, 1);
		else if (sk != r->table)
			atomic_fetch_add(&r->bad, 1);
		atomic_fetch_add(&r->lookups, 1);
	}
	socktab_thread_unregister();
	return NULL;
}

TEST(attach_races_lookups)
{
	struct race r = { .net = socktab_net_new(NULL) };
	static struct race_arg args[300]; /* poisoned after their detach, never freed meanwhile */
	pthread_t t;

	r.table = tcp_listener4(r.net, "127.0.0.1", 80);
	r.hooked = tcp_listener4(r.net, "127.0.0.1", 81);
	CHECK(r.table && r.hooked);
	CHECK_EQ(pthread_create(&t, NULL, race_reader, &r), 0);
	race_wait(&r, 1);
	for (int i = 0; i < 300; i++) {
		struct race_arg *a = &args[i];
		int id;

		atomic_init(&a->magic, 0x5eed);
		a->r = &r;
		id = socktab_sk_lookup_attach(r.net, race_cb, a);
		CHECK(id > 0);
		race_wait(&r, 2); /* lookups while it is attached */
		CHECK_EQ(socktab_sk_lookup_detach(r.net, id), 0);
		atomic_store(&a->magic, 0);
	}
	atomic_store(&r.stop, 1);
	pthread_join(t, NULL);
	printf("attach/detach x300 against lookups: %d hooked, %d wrong, %d after detach\n",
	       atomic_load(&r.seen_hook), atomic_load(&r.bad), atomic_load(&r.poisoned));
	CHECK_EQ(atomic_load(&r.bad), 0);
	CHECK_EQ(atomic_load(&r.poisoned), 0);
	CHECK(atomic_load(&r.seen_hook) > 0); /* the race was run, not missed */
	socktab_close(r.table);
	socktab_close(r.hooked);
	socktab_net_free(r.net);
}

/* A context the caller built is none a lookup gave: refused with -EINVAL before anything of it
 * beyond the public fields is read (ASan sees any such read), inside a callback or outside. A
 * callback whose lookup runs the callbacks again still assigns with its own context. */
struct own_ctx {
	struct socktab_sock *sk;       /* what to assign */
	int copy_err, null_err, own_err, nested_err;
	int depth;
	struct socktab_net *net;
};

static int own_ctx_cb(struct socktab_sk_lookup *ctx, void *arg)
{
	struct own_ctx *o = arg;
	struct socktab_sk_lookup *copy = malloc(sizeof(*copy));

	if (o->depth++ == 0) {
		*copy = *ctx;
		o->copy_err = socktab_sk_lookup_assign(copy, o->sk, 0);
		o->null_err = socktab_sk_lookup_assign(NULL, o->sk, 0);
		/* A lookup of another port from the callback runs this callback again (depth 1:
		 * it only passes); then the outer context is still the one to assign with. */
		(void)socktab_lookup_tcp4_rcu(o->net, check_ip4("127.0.0.2"), htons(1), check_ip4("127.0.0.1"),
					      htons(9), SOCKTAB_LOOPBACK_IFINDEX, 0);
		o->nested_err = socktab_sk_lookup_assign(ctx, o->sk, 0);
	}
	o->depth--;
	free(copy);
	return SOCKTAB_SK_PASS;
}

TEST(caller_built_context)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a = tcp_listener4(net, "127.0.0.1", 80);
	struct socktab_sock *b = tcp_listener4(net, "127.0.0.1", 81);
	struct own_ctx o = { .sk = b, .net = net };
	struct socktab_sk_lookup *mine = malloc(sizeof(*mine));
	int id;

	CHECK(a && b && mine);
	memset(mine, 0, sizeof(*mine));
	mine->family = AF_INET;
	mine->protocol = SOCKTAB_TCP;
	/* Outside any callback: no lookup's context at all. */
	CHECK_EQ(socktab_sk_lookup_assign(mine, b, 0), -EINVAL);
	CHECK_EQ(socktab_sk_lookup_assign(mine, NULL, 0), -EINVAL);
	id = socktab_sk_lookup_attach(net, own_ctx_cb, &o);
	CHECK(id > 0);
	CHECK(tcp4(net, 1, 80) == b);
	CHECK_EQ(o.copy_err, -EINVAL);
	CHECK_EQ(o.null_err, -EINVAL);
	CHECK_EQ(o.nested_err, 0);
	CHECK_EQ(socktab_sk_lookup_detach(net, id), 0);
	/* After the lookup, the context it gave is gone too. */
	CHECK_EQ(socktab_sk_lookup_assign(mine, b, 0), -EINVAL);
	free(mine);
	socktab_close(a);
	socktab_close(b);
	socktab_net_free(net);
}

static int control_call_kind; /* 0: a socket's bind; 1: a net setting */
static struct socktab_net *control_call_net;

/* A callback that makes a control call: a bind of the socket in @arg, or a net's port range. */
static int binding_cb(struct socktab_sk_lookup *ctx, void *arg)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(5999) };

	(void)ctx;
	a.sin_addr.s_addr = check_ip4("127.0.0.1");
	if (control_call_kind == 0)
		socktab_bind(arg, (struct sockaddr *)&a, sizeof(a));
	else
		socktab_net_set_port_range(control_call_net, 40000, 40100);
	return SOCKTAB_SK_PASS;
}

/* In a child: a lookup whose callback makes control call *@kind; exits 0 if it came back. */
static void control_call_in_callback(void *kind)
{
	struct socktab_net *net;
	struct socktab_sock *s;

	control_call_kind = *(int *)kind;
	socktab_thread_register();
	net = socktab_net_new(NULL);
	control_call_net = net;
	s = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	if (!net || !s || socktab_sk_lookup_attach(net, binding_cb, s) <= 0)
		_exit(3);
	(void)tcp4(net, 1000, 80);
	_exit(0);
}

/*
 * The Context sentences checked where the code can: a control call inside a dispatch callback
 * ("not inside a dispatch callback") stops a build with the packet path's checks, with a line
 * naming it; the main build leaves the test out.
 */
TEST(control_call_in_callback_stops)
{
	static const char *const want[2] = { "a socket call inside a dispatch callback",
					     "socktab_net_set_port_range() inside a dispatch callback" };
	char err[512];

	for (int kind = 0; kind < 2; kind++) {
		int status = check_run_child(control_call_in_callback, &kind, err, sizeof(err));

		CHECK(status != -1);
#ifdef SOCKTAB_PACKET_PATH_CHECKS
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
		CHECK(strstr(err, want[kind]) != NULL);
#else
		(void)want;
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
#endif
	}
#ifndef SOCKTAB_PACKET_PATH_CHECKS
	printf("SKIP control_call_in_callback_stops: built without -Dpacket_path_checks=true "
	       "(the child's calls came back, as the main build's do)\n");
#endif
}

CHECK_MAIN(tcp_verdicts, udp_order, chaining, assign_checks, ipv6, no_reuseport, batch_agrees,
	   bad_input, selector_after_assign, attach_races_lookups, caller_built_context,
	   control_call_in_callback_stops)
