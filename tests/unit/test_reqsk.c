/* SPDX-License-Identifier: BSD-2-Clause */
/* Request entries, the SYN queue, the SYN-cookie verdict, the accept queue and tcp_migrate_req:
 * R112-R124. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "check.h"
#include "bind.h"
#include "net.h"

/* Objects a pool hands to call_rcu at once (pool.c). */
#define LIMBO 64

#define LO SOCKTAB_LOOPBACK_IFINDEX

static struct socktab_net *new_net(void)
{
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	p.sock_priv_size = 64;
	p.req_priv_size = 16;
	return socktab_net_new(&p);
}

static struct socktab_sock *listener4(struct socktab_net *net, int port, int backlog, int rp)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	if (rp)
		check_setint(sk, SOL_SOCKET, SO_REUSEPORT, 1);
	if (check_bind4(sk, "127.0.0.1", port) || socktab_listen(sk, backlog)) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

/* A request of @l for the SYN from 127.0.0.2:@rport to 127.0.0.1:port(l). */
static struct socktab_sock *req4(struct socktab_sock *l, int rport)
{
	struct sockaddr_in local = check_sin("127.0.0.1", check_port(l));
	struct sockaddr_in remote = check_sin("127.0.0.2", rport);

	return socktab_req_new(l, (struct sockaddr *)&local, (struct sockaddr *)&remote,
			       sizeof(local), LO, 0);
}

static struct socktab_sock *lookup4(struct socktab_net *net, int lport, int rport)
{
	struct sockaddr_in local = check_sin("127.0.0.1", lport);
	struct sockaddr_in remote = check_sin("127.0.0.2", rport);

	return socktab_lookup_tcp4(net, remote.sin_addr.s_addr, remote.sin_port,
				   local.sin_addr.s_addr, local.sin_port, LO, 0);
}

/* The referenced lookup of the 4-tuple returns @want (dropping the reference). */
static bool finds(struct socktab_net *net, int lport, int rport, struct socktab_sock *want)
{
	struct socktab_sock *sk = lookup4(net, lport, rport);

	socktab_sock_put(sk);
	return sk == want;
}

/* The listener of a request inside a read-side section (socktab_req_listener()); the tests
 * compare the pointer only. */
static struct socktab_sock *listener_of(struct socktab_sock *req)
{
	struct socktab_sock *l;

	socktab_rcu_read_lock();
	l = socktab_req_listener(req);
	socktab_rcu_read_unlock();
	return l;
}

static struct socktab_listen_info info(struct socktab_sock *l)
{
	struct socktab_listen_info i;

	memset(&i, 0xff, sizeof(i)); /* a failed call shows as UINT32_MAX counts */
	(void)socktab_listen_info(l, &i);
	return i;
}

/* R112: a request is an ehash entry in NEW_SYN_RECV, found by every established lookup, and
 * counted in its listener's SYN queue. */
TEST(request_in_ehash)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7000, 16, 0), *r, *sk;
	struct sockaddr_in local = check_sin("127.0.0.1", 7000), remote = check_sin("127.0.0.2", 40000);
	struct socktab_tuple4 key = { remote.sin_addr.s_addr, local.sin_addr.s_addr,
				      remote.sin_port, local.sin_port, LO, 0 };
	struct socktab_hit hit;
	struct socktab_net_stats st;

	CHECK(l);
	r = req4(l, 40000);
	CHECK(r);
	CHECK_EQ(socktab_get_state(r), SOCKTAB_TCP_NEW_SYN_RECV);
	CHECK(listener_of(r) == l);
	CHECK(socktab_req_priv(r) != NULL);
	CHECK(socktab_sock_priv(r) == NULL);
	CHECK_EQ(socktab_sock_family(r), AF_INET);
	CHECK(finds(net, 7000, 40000, r));
	sk = socktab_lookup_established4(net, remote.sin_addr.s_addr, remote.sin_port,
					 local.sin_addr.s_addr, local.sin_port, LO, 0);
	CHECK(sk == r);
	socktab_sock_put(sk);
	socktab_rcu_read_lock();
	CHECK(socktab_lookup_tcp4_rcu(net, remote.sin_addr.s_addr, remote.sin_port,
				      local.sin_addr.s_addr, local.sin_port, LO, 0) == r);
	socktab_rcu_read_unlock();
	CHECK_EQ(socktab_lookup_batch4(net, SOCKTAB_TCP, &key, 1, &hit, 0), 1);
	CHECK(hit.sk == r);
	CHECK_EQ(hit.kind, SOCKTAB_HIT_REQUEST);
	CHECK(hit.priv == socktab_req_priv(r));
	socktab_sock_put(hit.sk);
	/* Another port of the listener still reaches the listener. */
	CHECK(finds(net, 7000, 40001, l));
	CHECK_EQ(info(l).qlen, 1);
	CHECK_EQ(info(l).young, 1);
	socktab_net_stats(net, &st);
	CHECK_EQ(st.requests, 1);
	/* A second SYN of the same 4-tuple cannot make a second request. */
	errno = 0;
	CHECK(!req4(l, 40000));
	CHECK_EQ(errno, EADDRINUSE);
	/* Socket calls refuse a request entry. */
	CHECK_EQ(socktab_close(r), -EBADF);
	CHECK_EQ(socktab_set_state(r, SOCKTAB_TCP_ESTABLISHED), -EBADF);
	CHECK_EQ(socktab_listen(r, 1), -EBADF);
	CHECK_EQ(socktab_listen_info(r, &(struct socktab_listen_info){ 0 }), -EINVAL);
	CHECK_EQ(socktab_accept(r) == NULL && errno == EINVAL, 1);
	/* A SYN-ACK retransmission ages it. */
	CHECK_EQ(socktab_req_retransmit(r), 1);
	CHECK_EQ(socktab_req_retransmit(r), 2);
	CHECK_EQ(info(l).young, 0);
	CHECK_EQ(info(l).qlen, 1);
	/* Dropped: the 4-tuple reaches the listener again. */
	CHECK_EQ(socktab_req_drop(r), 0);
	CHECK_EQ(socktab_req_drop(r), -ENOENT);
	CHECK_EQ(socktab_req_retransmit(r), -ENOENT);
	CHECK_EQ(info(l).qlen, 0);
	CHECK(finds(net, 7000, 40000, l));
	socktab_net_stats(net, &st);
	CHECK_EQ(st.requests, 0);
	socktab_sock_put(r);
	socktab_close(l);
	socktab_net_free(net);
}

/* R117, R118: the child takes the request's place and joins the accept queue; accept() pops it
 * in order. */
TEST(promote_and_accept)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7001, 16, 0), *r1, *r2, *c1, *c2, *a;
	struct socktab_net_stats st;

	r1 = req4(l, 40000);
	r2 = req4(l, 40001);
	CHECK(r1 && r2);
	memcpy(socktab_req_priv(r1), "handshake-state!", 16);
	CHECK_EQ(info(l).qlen, 2);
	CHECK_EQ(socktab_req_promote(r1, SOCKTAB_TCP_ESTABLISHED, &c1), 0);
	CHECK(c1 && c1 != r1);
	CHECK_EQ(socktab_get_state(c1), SOCKTAB_TCP_ESTABLISHED);
	CHECK(!memcmp(socktab_sock_priv(c1), "handshake-state!", 16));
	CHECK(finds(net, 7001, 40000, c1));
	CHECK_EQ(check_port(c1), 7001);
	CHECK_EQ(info(l).qlen, 1);
	CHECK_EQ(info(l).ack_backlog, 1);
	CHECK_EQ(socktab_req_promote(r1, SOCKTAB_TCP_ESTABLISHED, &a), -ENOENT);
	CHECK_EQ(socktab_req_drop(r1), -ENOENT);
	CHECK_EQ(socktab_req_promote(r2, SOCKTAB_TCP_SYN_RECV, &c2), 0);
	CHECK_EQ(socktab_get_state(c2), SOCKTAB_TCP_SYN_RECV);
	socktab_net_stats(net, &st);
	CHECK_EQ(st.requests, 0);
	CHECK_EQ(st.established, 2);
	/* Bad input changes nothing. */
	CHECK_EQ(socktab_req_promote(NULL, SOCKTAB_TCP_ESTABLISHED, &a), -EINVAL);
	CHECK_EQ(socktab_req_promote(c1, SOCKTAB_TCP_ESTABLISHED, &a), -EINVAL);
	CHECK_EQ(socktab_req_drop(l), -EINVAL);
	CHECK_EQ(socktab_req_retransmit(NULL), -EINVAL);
	CHECK(listener_of(l) == NULL);
	CHECK_EQ(socktab_syn_decide(c1, 0), -EINVAL);
	CHECK_EQ(socktab_syn_decide(l, 0x80), -EINVAL);
	/* FIFO. */
	a = socktab_accept(l);
	CHECK(a == c1);
	a = socktab_accept(l);
	CHECK(a == c2);
	errno = 0;
	CHECK(socktab_accept(l) == NULL);
	CHECK_EQ(errno, EAGAIN);
	CHECK_EQ(info(l).ack_backlog, 0);
	socktab_sock_put(c1);
	socktab_sock_put(c2);
	CHECK_EQ(socktab_close(c1), 0);
	CHECK_EQ(socktab_close(c2), 0);
	socktab_sock_put(r1);
	socktab_sock_put(r2);
	socktab_close(l);
	socktab_net_free(net);
}

/* R115: sk_acceptq_is_full() is ack_backlog > backlog: backlog N queues N + 1 children; the
 * next final ACK is dropped and its request stays. */
TEST(accept_queue_overflow)
{
	for (int backlog = 0; backlog <= 3; backlog++) {
		struct socktab_net *net = new_net();
		struct socktab_sock *l = listener4(net, 7002, backlog, 0), *r[8], *c;
		int done = 0;

		for (int i = 0; i < backlog + 2; i++) {
			r[i] = req4(l, 41000 + i);
			CHECK(r[i]);
			if (socktab_req_promote(r[i], SOCKTAB_TCP_ESTABLISHED, &c) == 0) {
				done++;
				socktab_sock_put(c);
			}
		}
		CHECK_EQ(done, backlog + 1);
		CHECK_EQ(info(l).ack_backlog, (uint32_t)backlog + 1);
		CHECK_EQ(socktab_syn_decide(l, 0), SOCKTAB_SYN_DROP);
		CHECK_EQ(socktab_req_promote(r[backlog + 1], SOCKTAB_TCP_ESTABLISHED, &c), -EAGAIN);
		CHECK(finds(net, 7002, 41000 + backlog + 1, r[backlog + 1]));
		CHECK_EQ(info(l).qlen, 1);
		c = socktab_accept(l);
		CHECK(c);
		socktab_close(c);
		CHECK_EQ(socktab_req_promote(r[backlog + 1], SOCKTAB_TCP_ESTABLISHED, &c), 0);
		socktab_sock_put(c);
		for (int i = 0; i < backlog + 2; i++)
			socktab_sock_put(r[i]);
		socktab_close(l); /* closes the unaccepted children */
		struct socktab_net_stats st;

		socktab_net_stats(net, &st);
		CHECK_EQ(st.established, 0);
		CHECK_EQ(st.requests, 0);
		socktab_net_free(net);
	}
}

/* R112-R116: the verdict for a SYN, per tcp_syncookies and the queues. */
TEST(syn_verdict)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7003, 2, 0), *r[4];

	CHECK_EQ(socktab_syn_decide(l, 0), SOCKTAB_SYN_QUEUE);
	for (int i = 0; i < 3; i++)
		r[i] = req4(l, 42000 + i);
	/* qlen 3 > backlog 2: the SYN queue is full. */
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_syncookies", "1"), 0);
	CHECK_EQ(socktab_syn_decide(l, 0), SOCKTAB_SYN_COOKIE);
	CHECK_EQ(socktab_syn_decide(l, SOCKTAB_SYN_TW_RECYCLE), SOCKTAB_SYN_QUEUE);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_syncookies", "0"), 0);
	CHECK_EQ(socktab_syn_decide(l, 0), SOCKTAB_SYN_DROP);
	CHECK_EQ(socktab_syn_decide(l, SOCKTAB_SYN_TW_RECYCLE), SOCKTAB_SYN_QUEUE);
	CHECK_EQ(socktab_req_drop(r[2]), 0);
	/* qlen 2 = backlog: not full (the comparison is '>'). */
	CHECK_EQ(socktab_syn_decide(l, 0), SOCKTAB_SYN_QUEUE);
	/* syncookies 2: a cookie for every SYN, but a recycling one. */
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_syncookies", "2"), 0);
	CHECK_EQ(socktab_syn_decide(l, 0), SOCKTAB_SYN_COOKIE);
	CHECK_EQ(socktab_syn_decide(l, SOCKTAB_SYN_TW_RECYCLE), SOCKTAB_SYN_QUEUE);
	/* A u8 of the kernel: 0..255, any value but 0 and 2 as 1. */
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_syncookies", "256"), -EINVAL);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_syncookies", "-1"), -EINVAL);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_syncookies", "3"), 0);
	CHECK_EQ(socktab_syn_decide(l, 0), SOCKTAB_SYN_QUEUE); /* not full: no cookie */
	/* Without cookies the last quarter of tcp_max_syn_backlog is for proven peers:
	 * 8 - 2 < 8 >> 2 is false, 7 - 2 < 1 false, 2 - 2 < 0 false, 3 - 2 < 0 false ... */
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_syncookies", "0"), 0);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_max_syn_backlog", "8"), 0);
	CHECK_EQ(socktab_syn_decide(l, 0), SOCKTAB_SYN_QUEUE); /* 8 - 2 = 6, not < 2 */
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_max_syn_backlog", "3"), 0);
	CHECK_EQ(socktab_syn_decide(l, 0), SOCKTAB_SYN_QUEUE); /* 3 - 2 = 1, not < 0 */
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_max_syn_backlog", "2"), 0);
	CHECK_EQ(socktab_syn_decide(l, 0), SOCKTAB_SYN_QUEUE); /* 0, not < 0 */
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_max_syn_backlog", "1"), 0);
	CHECK_EQ(socktab_syn_decide(l, 0), SOCKTAB_SYN_DROP); /* 1 - 2 < 0 */
	CHECK_EQ(socktab_syn_decide(l, SOCKTAB_SYN_PEER_PROVEN), SOCKTAB_SYN_QUEUE);
	/* With cookies on, the quarter rule is off. */
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_syncookies", "1"), 0);
	CHECK_EQ(socktab_syn_decide(l, 0), SOCKTAB_SYN_QUEUE);
	socktab_sock_put(r[0]);
	socktab_sock_put(r[1]);
	socktab_sock_put(r[2]);
	CHECK_EQ(socktab_syn_decide(NULL, 0), -EINVAL);
	socktab_close(l);
	CHECK_EQ(socktab_syn_decide(l, 0), -EINVAL);
	socktab_net_free(net);
}

/* A cookie's ACK: the child is made and queued; a full accept queue refuses it. */
TEST(cookie_child)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7004, 0, 0), *c, *d;
	struct sockaddr_in local = check_sin("127.0.0.1", 7004);
	struct sockaddr_in remote = check_sin("127.0.0.2", 43000);

	c = socktab_req_cookie_child(l, (struct sockaddr *)&local, (struct sockaddr *)&remote,
				     sizeof(local), LO, 0, SOCKTAB_TCP_ESTABLISHED);
	CHECK(c);
	CHECK(finds(net, 7004, 43000, c));
	CHECK_EQ(info(l).ack_backlog, 1);
	remote = check_sin("127.0.0.2", 43001);
	errno = 0;
	CHECK(!socktab_req_cookie_child(l, (struct sockaddr *)&local, (struct sockaddr *)&remote,
					sizeof(local), LO, 0, SOCKTAB_TCP_ESTABLISHED));
	CHECK_EQ(errno, EAGAIN);
	d = socktab_accept(l);
	CHECK(d == c);
	socktab_sock_put(c);
	socktab_close(d);
	socktab_close(l);
	socktab_net_free(net);
}

/* The stack closed an unaccepted child: accept() passes over it. */
TEST(closed_before_accept)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7005, 8, 0), *r1 = req4(l, 1), *r2 = req4(l, 2);
	struct socktab_sock *c1, *c2;

	CHECK_EQ(socktab_req_promote(r1, SOCKTAB_TCP_ESTABLISHED, &c1), 0);
	CHECK_EQ(socktab_req_promote(r2, SOCKTAB_TCP_ESTABLISHED, &c2), 0);
	socktab_sock_put(c1);
	CHECK_EQ(socktab_close(c1), 0);
	CHECK(socktab_accept(l) == c2);
	socktab_sock_put(c2);
	socktab_close(c2);
	socktab_sock_put(r1);
	socktab_sock_put(r2);
	socktab_close(l);
	socktab_net_free(net);
}

/* inet_csk_listen_stop without migration: requests go, unaccepted children are closed. */
TEST(close_drops_queues)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7006, 8, 0), *r1 = req4(l, 1), *r2 = req4(l, 2), *c;
	struct socktab_net_stats st;

	CHECK_EQ(socktab_req_promote(r1, SOCKTAB_TCP_ESTABLISHED, &c), 0);
	CHECK_EQ(socktab_close(l), 0);
	CHECK(finds(net, 7006, 1, NULL));
	CHECK(finds(net, 7006, 2, NULL));
	CHECK_EQ(socktab_get_state(c), -EBADF);
	CHECK_EQ(socktab_req_promote(r2, SOCKTAB_TCP_ESTABLISHED, &c), -ENOENT);
	socktab_net_stats(net, &st);
	CHECK_EQ(st.requests, 0);
	CHECK_EQ(st.established, 0);
	/* The port is free again: children's ports went with them. */
	l = listener4(net, 7006, 8, 0);
	CHECK(l);
	socktab_sock_put(c);
	socktab_sock_put(r1);
	socktab_sock_put(r2);
	socktab_close(l);
	socktab_net_free(net);
}

/* R120-R124: tcp_migrate_req moves a closing member's requests and children to the others. */
TEST(migrate)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *a, *b, *r[16], *c;
	int on_b = 0;

	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_migrate_req", "1"), 0);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_migrate_req", "2"), -EINVAL);
	a = listener4(net, 7007, 64, 1);
	b = listener4(net, 7007, 64, 1);
	CHECK(a && b);
	for (int i = 0; i < 16; i++) {
		r[i] = req4(a, 44000 + i);
		CHECK(r[i]);
	}
	CHECK_EQ(socktab_req_promote(r[0], SOCKTAB_TCP_ESTABLISHED, &c), 0);
	CHECK_EQ(info(a).qlen, 15);
	CHECK_EQ(socktab_close(a), 0);
	CHECK_EQ(info(b).qlen, 15);
	CHECK_EQ(info(b).ack_backlog, 1);
	for (int i = 1; i < 16; i++) {
		CHECK(finds(net, 7007, 44000 + i, r[i]));
		socktab_rcu_read_lock();
		on_b += listener_of(r[i]) == b;
		socktab_rcu_read_unlock();
	}
	CHECK_EQ(on_b, 15);
	CHECK(finds(net, 7007, 44000, c));
	CHECK(socktab_accept(b) == c);
	socktab_sock_put(c);
	socktab_close(c);
	CHECK_EQ(socktab_req_promote(r[1], SOCKTAB_TCP_ESTABLISHED, &c), 0);
	CHECK(socktab_accept(b) == c);
	socktab_sock_put(c);
	socktab_close(c);
	/* R121: the last member has nobody to migrate to. */
	CHECK_EQ(socktab_close(b), 0);
	for (int i = 2; i < 16; i++)
		CHECK(finds(net, 7007, 44000 + i, NULL));
	for (int i = 0; i < 16; i++)
		socktab_sock_put(r[i]);
	socktab_net_free(net);
}

/* R120: with the sysctl off a group member's queues are dropped; R122: the hash picks the
 * member among several. */
TEST(migrate_refused_and_spread)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *a = listener4(net, 7008, 64, 1), *b = listener4(net, 7008, 64, 1);
	struct socktab_sock *c2 = listener4(net, 7008, 64, 1), *r[64];

	for (int i = 0; i < 8; i++)
		r[i] = req4(a, 45000 + i);
	CHECK_EQ(socktab_close(a), 0); /* tcp_migrate_req is 0 by default */
	for (int i = 0; i < 8; i++) {
		CHECK(!finds(net, 7008, 45000 + i, r[i]));
		socktab_sock_put(r[i]);
	}
	CHECK_EQ(info(b).qlen, 0);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.tcp_migrate_req", "1"), 0);
	a = listener4(net, 7008, 64, 1);
	for (int i = 0; i < 64; i++)
		r[i] = req4(a, 46000 + i);
	CHECK_EQ(socktab_close(a), 0);
	CHECK_EQ(info(b).qlen + info(c2).qlen, 64);
	CHECK(info(b).qlen > 8 && info(c2).qlen > 8); /* the hash spreads them */
	for (int i = 0; i < 64; i++)
		socktab_sock_put(r[i]);
	socktab_close(b);
	socktab_close(c2);
	socktab_net_free(net);
}

/* IPv6 requests, and a net freed with pending requests and children. */
TEST(request_v6_and_teardown)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = socktab_socket(net, SOCKTAB_TCP, AF_INET6), *r, *c, *f;
	struct sockaddr_in6 local = check_sin6("::1", 7009), remote = check_sin6("::1", 47000);

	CHECK_EQ(check_bind6(l, "::1", 7009), 0);
	CHECK_EQ(socktab_listen(l, 4), 0);
	r = socktab_req_new(l, (struct sockaddr *)&local, (struct sockaddr *)&remote,
			    sizeof(local), LO, 0);
	CHECK(r);
	f = socktab_lookup_tcp6(net, &remote.sin6_addr, remote.sin6_port, &local.sin6_addr,
				local.sin6_port, LO, 0);
	CHECK(f == r);
	socktab_sock_put(f);
	CHECK_EQ(socktab_req_promote(r, SOCKTAB_TCP_ESTABLISHED, &c), 0);
	f = socktab_lookup_tcp6(net, &remote.sin6_addr, remote.sin6_port, &local.sin6_addr,
				local.sin6_port, LO, 0);
	CHECK(f == c);
	socktab_sock_put(f);
	socktab_sock_put(c);
	socktab_sock_put(r);
	remote.sin6_port = htons(47001);
	r = socktab_req_new(l, (struct sockaddr *)&local, (struct sockaddr *)&remote,
			    sizeof(local), LO, 0);
	CHECK(r);
	socktab_sock_put(r);
	socktab_net_free(net); /* the listener, its request and its child are forgotten */
}

/* A dual-stack listener's request for a v4-mapped SYN is keyed and found as IPv4 (R5), and so
 * is its child. */
TEST(request_v4_mapped)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = socktab_socket(net, SOCKTAB_TCP, AF_INET6), *r, *c;
	struct sockaddr_in6 local = check_sin6("::ffff:127.0.0.1", 7011);
	struct sockaddr_in6 remote = check_sin6("::ffff:127.0.0.2", 48000);

	CHECK_EQ(check_bind6(l, "::", 7011), 0);
	CHECK_EQ(socktab_listen(l, 4), 0);
	r = socktab_req_new(l, (struct sockaddr *)&local, (struct sockaddr *)&remote,
			    sizeof(local), LO, 0);
	CHECK(r);
	CHECK(finds(net, 7011, 48000, r));
	CHECK_EQ(socktab_req_promote(r, SOCKTAB_TCP_ESTABLISHED, &c), 0);
	CHECK(finds(net, 7011, 48000, c));
	CHECK_EQ(socktab_sock_family(c), AF_INET6);
	CHECK(socktab_accept(l) == c);
	socktab_sock_put(c);
	socktab_close(c);
	socktab_sock_put(r);
	socktab_close(l);
	socktab_net_free(net);
}

/*
 * A dual-stack listener takes an IPv4 SYN's endpoints as they come off the wire, sockaddr_in:
 * the request, the child it becomes and a child made directly are AF_INET6 with v4-mapped
 * names, found by IPv4 lookups. An IPV6_V6ONLY listener refuses them, and nothing changes.
 */
TEST(request_dual_stack_sockaddr_in)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = socktab_socket(net, SOCKTAB_TCP, AF_INET6), *r, *c, *d;
	struct socktab_sock *l6 = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	struct sockaddr_in local = check_sin("127.0.0.1", 7014);
	struct sockaddr_in remote = check_sin("127.0.0.2", 48100);
	struct sockaddr_in remote2 = check_sin("127.0.0.2", 48101);
	struct sockaddr_in local6only = check_sin("127.0.0.1", 7015);
	struct sockaddr_in6 name;
	struct socktab_net_stats st;
	socklen_t nlen = sizeof(name);

	CHECK_EQ(check_bind6(l, "::", 7014), 0);
	CHECK_EQ(socktab_listen(l, 4), 0);
	CHECK(finds(net, 7014, 48100, l));
	r = socktab_req_new(l, (struct sockaddr *)&local, (struct sockaddr *)&remote,
			    sizeof(local), LO, 0);
	CHECK(r);
	CHECK(finds(net, 7014, 48100, r));
	CHECK_EQ(socktab_req_promote(r, SOCKTAB_TCP_ESTABLISHED, &c), 0);
	CHECK(finds(net, 7014, 48100, c));
	CHECK_EQ(socktab_sock_family(c), AF_INET6);
	CHECK_EQ(socktab_getsockname(c, (struct sockaddr *)&name, &nlen), 0);
	CHECK_EQ(name.sin6_family, AF_INET6);
	CHECK(IN6_IS_ADDR_V4MAPPED(&name.sin6_addr));
	CHECK_EQ(name.sin6_addr.s6_addr[15], 1);
	CHECK_EQ(ntohs(name.sin6_port), 7014);
	CHECK(socktab_accept(l) == c);
	d = socktab_sock_new_child(l, (struct sockaddr *)&local, (struct sockaddr *)&remote2,
				   sizeof(local), LO, 0);
	CHECK(d);
	CHECK_EQ(socktab_sock_family(d), AF_INET6);
	CHECK(finds(net, 7014, 48101, d));
	/* IPV6_V6ONLY: no IPv4 SYN reaches it, and its calls refuse one. */
	check_setint(l6, IPPROTO_IPV6, IPV6_V6ONLY, 1);
	CHECK_EQ(check_bind6(l6, "::", 7015), 0);
	CHECK_EQ(socktab_listen(l6, 4), 0);
	socktab_net_stats(net, &st);
	errno = 0;
	CHECK(!socktab_req_new(l6, (struct sockaddr *)&local6only, (struct sockaddr *)&remote,
			       sizeof(local), LO, 0));
	CHECK_EQ(errno, EINVAL);
	errno = 0;
	CHECK(!socktab_sock_new_child(l6, (struct sockaddr *)&local6only,
				      (struct sockaddr *)&remote, sizeof(local), LO, 0));
	CHECK_EQ(errno, EINVAL);
	{
		struct socktab_net_stats st2;

		socktab_net_stats(net, &st2);
		CHECK_EQ(st2.requests, st.requests);
		CHECK_EQ(st2.established, st.established);
	}
	socktab_sock_put(c);
	socktab_close(c);
	socktab_close(d);
	socktab_sock_put(r);
	socktab_close(l);
	socktab_close(l6);
	socktab_net_free(net);
}

/* A dump shows a request as SYN_RECV (inet_req_diag_fill, R112), with its 4-tuple. */
TEST(request_in_dump)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7012, 4, 0), *r = req4(l, 49000);
	struct socktab_diag_filter f = { .states = 1u << SOCKTAB_TCP_SYN_RECV };
	struct socktab_diag_cursor *c = socktab_diag_open(net, &f);
	struct socktab_diag_entry e;
	int n = 0;

	CHECK(r && c);
	while (socktab_diag_next(c, &e) == 1) {
		n++;
		CHECK_EQ(e.state, SOCKTAB_TCP_SYN_RECV);
		CHECK_EQ(ntohs(((struct sockaddr_in *)&e.local)->sin_port), 7012);
		CHECK_EQ(ntohs(((struct sockaddr_in *)&e.remote)->sin_port), 49000);
	}
	CHECK_EQ(n, 1);
	socktab_diag_close(c);
	socktab_sock_put(r);
	socktab_close(l);
	socktab_net_free(net);
}

/* Bad arguments of socktab_req_new() change nothing. */
TEST(request_bad_input)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7010, 4, 0), *s = socktab_socket(net, SOCKTAB_TCP,
										AF_INET);
	struct sockaddr_in local = check_sin("127.0.0.1", 7010), remote = check_sin("127.0.0.2", 1);
	struct sockaddr_in other = check_sin("127.0.0.1", 7011);

	CHECK(!socktab_req_new(NULL, (struct sockaddr *)&local, (struct sockaddr *)&remote,
			       sizeof(local), LO, 0));
	CHECK(!socktab_req_new(s, (struct sockaddr *)&local, (struct sockaddr *)&remote,
			       sizeof(local), LO, 0));
	CHECK_EQ(errno, EINVAL);
	CHECK(!socktab_req_new(l, (struct sockaddr *)&other, (struct sockaddr *)&remote,
			       sizeof(local), LO, 0));
	CHECK(!socktab_req_new(l, (struct sockaddr *)&local, (struct sockaddr *)&remote, 3, LO, 0));
	CHECK(!socktab_req_new(l, (struct sockaddr *)&local, (struct sockaddr *)&remote,
			       sizeof(local), -1, 0));
	CHECK_EQ(info(l).qlen, 0);
	CHECK(finds(net, 7010, 1, l));
	CHECK_EQ(socktab_listen_info(s, &(struct socktab_listen_info){ 0 }), -EINVAL);
	CHECK_EQ(socktab_listen_info(l, NULL), -EINVAL);
	socktab_close(s);
	socktab_close(l);
	socktab_net_free(net);
}

/*
 * A request that leaves every queue forgets its listener: dropped, accepted after its
 * promotion, dropped or closed with its listener. The caller may hold the request long after
 * the listener is gone and its memory is another socket's; socktab_req_listener() must never
 * name that socket.
 */
TEST(request_forgets_listener)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7011, 16, 0), *r1, *r2, *r3, *r4, *c2, *c3;
	struct socktab_sock *fresh[2 * LIMBO];
	bool reused = false;

	r1 = req4(l, 1);
	r2 = req4(l, 2);
	r3 = req4(l, 3);
	r4 = req4(l, 4);
	CHECK(r1 && r2 && r3 && r4);
	CHECK(listener_of(r1) == l);
	CHECK_EQ(socktab_req_drop(r1), 0);
	CHECK(listener_of(r1) == NULL);
	/* In the accept queue it is still the listener's; accepted, it is nobody's. */
	CHECK_EQ(socktab_req_promote(r2, SOCKTAB_TCP_ESTABLISHED, &c2), 0);
	CHECK(listener_of(r2) == l);
	CHECK(socktab_accept(l) == c2);
	CHECK(listener_of(r2) == NULL);
	/* The listener's close drops a promoted request (its child closed) and a queued one. */
	CHECK_EQ(socktab_req_promote(r3, SOCKTAB_TCP_ESTABLISHED, &c3), 0);
	CHECK_EQ(socktab_close(l), 0);
	CHECK(listener_of(r3) == NULL);
	CHECK(listener_of(r4) == NULL);
	/* The listener's memory goes back to the pool after a grace period and is handed out
	 * again: the requests still name nobody. */
	socktab__pool_flush(socktab__sock_pool(net, SOCKTAB_TCP, AF_INET));
	socktab__synchronize_rcu();
	socktab__rcu_barrier();
	for (int i = 0; i < 2 * LIMBO; i++) {
		fresh[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK(fresh[i]);
		reused |= fresh[i] == l;
	}
	CHECK(reused);
	CHECK(listener_of(r1) == NULL);
	CHECK(listener_of(r2) == NULL);
	CHECK(listener_of(r3) == NULL);
	CHECK(listener_of(r4) == NULL);
	for (int i = 0; i < 2 * LIMBO; i++)
		socktab_close(fresh[i]);
	socktab_sock_put(c2);
	socktab_close(c2);
	socktab_sock_put(c3);
	socktab_sock_put(r1);
	socktab_sock_put(r2);
	socktab_sock_put(r3);
	socktab_sock_put(r4);
	socktab_net_free(net);
}

/* The other socket calls on a request entry, and a closed socket, give -EBADF (sock.h: a request
 * entry is none of their business), as the calls that open the socket first do. */
TEST(request_entry_is_no_socket)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7012, 4, 0), *r = req4(l, 1);
	struct socktab_sock *s = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct sockaddr_in a = check_sin("127.0.0.1", 7013);

	CHECK(r && s);
	CHECK_EQ(socktab_bind(r, (struct sockaddr *)&a, sizeof(a)), -EBADF);
	CHECK_EQ(socktab_listen_backlog(r), -EBADF);
	CHECK_EQ(socktab_listen(r, 4), -EBADF);
	CHECK_EQ(socktab_close(r), -EBADF);
	/* Nor is it a listener: each listener-side call refuses it before taking any lock, and
	 * nothing changes. */
	{
		struct sockaddr_in la = check_sin("127.0.0.1", 7012), ra = check_sin("127.0.0.2", 2);
		const struct sockaddr *lp = (const struct sockaddr *)&la;
		const struct sockaddr *rp = (const struct sockaddr *)&ra;
		struct socktab_net_stats st;

		errno = 0;
		CHECK(!socktab_sock_new_child(r, lp, rp, sizeof(la), 0, 0));
		CHECK_EQ(errno, EINVAL);
		errno = 0;
		CHECK(!socktab_req_new(r, lp, rp, sizeof(la), 0, 0));
		CHECK_EQ(errno, EINVAL);
		errno = 0;
		CHECK(!socktab_req_cookie_child(r, lp, rp, sizeof(la), 0, 0,
						SOCKTAB_TCP_ESTABLISHED));
		CHECK_EQ(errno, EINVAL);
		errno = 0;
		CHECK(!socktab_accept(r));
		CHECK_EQ(errno, EINVAL);
		CHECK_EQ(socktab_listen_info(r, &(struct socktab_listen_info){ 0 }), -EINVAL);
		/* An open socket that does not listen: the same. */
		errno = 0;
		CHECK(!socktab_sock_new_child(s, lp, rp, sizeof(la), 0, 0));
		CHECK_EQ(errno, EINVAL);
		socktab_net_stats(net, &st);
		CHECK_EQ(st.requests, 1);
		CHECK_EQ(st.established, 0);
	}
	CHECK_EQ(info(l).qlen, 1);
	CHECK_EQ(socktab_listen_backlog(l), 4);
	CHECK_EQ(socktab_listen_backlog(s), -EINVAL); /* open, not a listener */
	CHECK_EQ(socktab_close(s), 0);
	CHECK_EQ(socktab_listen_backlog(s), -EBADF);  /* closed, memory not reused yet */
	socktab_sock_put(r);
	socktab_close(l);
	socktab_net_free(net);
}

/* A SYN comes from a device of the net: an ingress device (or VRF) no device has, one deleted
 * included, is refused with EINVAL by each call that takes one, and nothing changes. */
TEST(request_unknown_device)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7014, 4, 0), *r, *c;
	struct sockaddr_in local = check_sin("127.0.0.1", 7014), remote = check_sin("127.0.0.2", 1);
	struct socktab_net_stats st;
	int gone = socktab_dev_add(net, "gone0", 1), eth = socktab_dev_add(net, "eth0", 1);
	const int bad[][2] = { { 4242, 0 }, { LO, 4242 }, { gone, 0 }, { LO, gone }, { 0, gone } };

	CHECK(l && gone > 0 && eth > 0);
	CHECK_EQ(socktab_dev_del(net, gone), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		CHECK(!socktab_req_new(l, (struct sockaddr *)&local, (struct sockaddr *)&remote,
				       sizeof(local), bad[i][0], bad[i][1]));
		CHECK_EQ(errno, EINVAL);
		errno = 0;
		CHECK(!socktab_sock_new_child(l, (struct sockaddr *)&local,
					      (struct sockaddr *)&remote, sizeof(local), bad[i][0],
					      bad[i][1]));
		CHECK_EQ(errno, EINVAL);
		errno = 0;
		CHECK(!socktab_req_cookie_child(l, (struct sockaddr *)&local,
						(struct sockaddr *)&remote, sizeof(local),
						bad[i][0], bad[i][1], SOCKTAB_TCP_ESTABLISHED));
		CHECK_EQ(errno, EINVAL);
	}
	socktab_net_stats(net, &st);
	CHECK_EQ(st.requests, 0);
	CHECK_EQ(st.established, 0);
	CHECK_EQ(info(l).qlen, 0);
	CHECK_EQ(info(l).ack_backlog, 0);
	/* Devices that exist, and none (0), are fine. */
	r = socktab_req_new(l, (struct sockaddr *)&local, (struct sockaddr *)&remote, sizeof(local),
			    eth, 0);
	CHECK(r);
	remote.sin_port = htons(2);
	c = socktab_sock_new_child(l, (struct sockaddr *)&local, (struct sockaddr *)&remote,
				   sizeof(local), 0, 0);
	CHECK(c);
	socktab_sock_put(r);
	socktab_close(c);
	socktab_close(l);
	socktab_net_free(net);
}

/*
 * A TIME_WAIT entry a request took over (R56, R61) is no longer TIME_WAIT: the socktab_tw_*()
 * calls on it, from a caller that still holds it from its lookup, give -EINVAL and touch nothing
 * (the request keeps the 4-tuple).
 */
TEST(timewait_taken_over_by_request)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = listener4(net, 7015, 4, 0), *c, *tw, *r;
	struct sockaddr_in local = check_sin("127.0.0.1", 7015), remote = check_sin("127.0.0.2", 9);
	struct socktab_tw *t;

	c = socktab_sock_new_child(l, (struct sockaddr *)&local, (struct sockaddr *)&remote,
				   sizeof(local), LO, 0);
	CHECK(c);
	CHECK_EQ(socktab_set_state(c, SOCKTAB_TCP_ESTABLISHED), 0);
	CHECK_EQ(socktab_close(c), 0); /* the server closes first: a TIME_WAIT entry */
	tw = lookup4(net, 7015, 9);
	t = socktab_sock_tw(tw);
	CHECK(t);
	CHECK_EQ(socktab_tw_substate(t), SOCKTAB_TCP_FIN_WAIT2);
	CHECK_EQ(socktab_tw_fin(t), 0);
	CHECK_EQ(socktab_tw_substate(t), SOCKTAB_TCP_TIME_WAIT);
	/* A new SYN of the same 4-tuple: its request takes the entry's place. */
	r = req4(l, 9);
	CHECK(r);
	CHECK(finds(net, 7015, 9, r));
	CHECK_EQ(socktab_tw_fin(t), -EINVAL);
	CHECK_EQ(socktab_tw_rearm(t), -EINVAL);
	CHECK_EQ(socktab_tw_reset(t), -EINVAL);
	CHECK_EQ(socktab_tw_kill(t), -EINVAL);
	CHECK_EQ(socktab_tw_substate(t), -EINVAL);
	CHECK(finds(net, 7015, 9, r));
	CHECK_EQ(info(l).qlen, 1);
	socktab_sock_put(tw);
	socktab_sock_put(r);
	socktab_close(l);
	socktab_net_free(net);
}

/* Children made by one thread for the listener of kids_port. */
#define KIDS 20
#define KID_THREADS 3
struct kid_maker {
	struct socktab_sock *l;
	int first_rport;
	struct socktab_sock *c[KIDS];
	uint32_t bit;
	_Atomic int *ready, *go, *done;
};

static void *make_kids(void *arg)
{
	struct kid_maker *m = arg;
	struct sockaddr_in local = check_sin("127.0.0.1", check_port(m->l));

	socktab_thread_register();
	for (int j = 0; j < KIDS; j++) {
		struct sockaddr_in remote = check_sin("127.0.0.2", m->first_rport + j);

		m->c[j] = socktab_sock_new_child(m->l, (struct sockaddr *)&local,
						 (struct sockaddr *)&remote, sizeof(local), LO, 0);
		if (j == 0) {
			/* The first child started the shard; the others come once the main
			 * thread holds the port's bhash lock. */
			atomic_fetch_add(m->ready, 1);
			while (!atomic_load(m->go))
				sched_yield();
		}
	}
	atomic_fetch_add(m->done, 1);
	socktab_thread_unregister();
	return NULL;
}

/* bind() of a fresh socket to 127.0.0.1:@port: 0 (socket kept in *@out) or the error. */
static int bind_fresh(struct socktab_net *net, int port, struct socktab_sock **out)
{
	struct socktab_sock *s = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	int err = check_bind4(s, "127.0.0.1", port);

	if (err)
		socktab_close(s);
	else
		*out = s;
	return err;
}

/* The kids shard @m's children are in, as a bit of their bucket's kid_live (taken while they
 * are all open). */
static uint32_t shard_bit(const struct kid_maker *m)
{
	return m->bit;
}

/* The kids shards that must be live: those of the makers with a child still open. */
static uint32_t live_wanted(const struct kid_maker *m)
{
	uint32_t w = 0;

	for (int i = 0; i < KID_THREADS; i++)
		for (int j = 0; j < KIDS; j++)
			if (m[i].c[j])
				w |= shard_bit(&m[i]);
	return w;
}

/*
 * __inet_inherit_port: children made by several threads own their listener's port on their own
 * address (bind.c keeps them in that bucket's kids shards, one per thread: the listener's own
 * bucket when it is bound to that address, @wildcard clear), after the listener has gone too,
 * until the last of them leaves, whichever thread closes them and in whatever order; a shard
 * stays known to the bucket exactly while it has a child. The last child, moved to TIME_WAIT,
 * hands the port to its entry, which joins the owners list.
 */
static void children_own_port(bool wildcard)
{
	struct socktab_net *net = new_net();
	struct socktab_sock *l = socktab_socket(net, SOCKTAB_TCP, AF_INET), *s = NULL, *tw, *last;
	struct kid_maker m[KID_THREADS];
	pthread_t th[KID_THREADS];
	struct socktab__tb2 *tb2;
	struct socktab_net_stats st;
	_Atomic int ready = 0, go = 0, done = 0;
	pthread_mutex_t *bhash_lock;
	uint32_t all = 0;
	uint64_t buckets;
	int waited_ms = 0;

	CHECK_EQ(check_bind4(l, wildcard ? "0.0.0.0" : "127.0.0.1", 7300), 0);
	CHECK_EQ(socktab_listen(l, 128), 0);
	socktab_net_stats(net, &st);
	buckets = st.bind_buckets;
	for (int i = 0; i < KID_THREADS; i++) {
		m[i] = (struct kid_maker){ .l = l, .first_rport = 20000 + 100 * i, .ready = &ready,
					   .go = &go, .done = &done };
		CHECK_EQ(pthread_create(&th[i], NULL, make_kids, &m[i]), 0);
	}
	/* A thread's later children join its shard without the port's bhash lock (for the
	 * wildcard listener's, found under RCU): they are all made while this thread holds it
	 * (within 10 s; the lock is given back either way, so a join that waits for it ends). */
	while (atomic_load(&ready) < KID_THREADS)
		sched_yield();
	bhash_lock = socktab__bhead_lock(net->tab, socktab__bhash_head(net, 7300));
	pthread_mutex_lock(bhash_lock);
	atomic_store(&go, 1);
	while (atomic_load(&done) < KID_THREADS && waited_ms < 10000) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
		waited_ms++;
	}
	pthread_mutex_unlock(bhash_lock);
	for (int i = 0; i < KID_THREADS; i++)
		CHECK_EQ(pthread_join(th[i], NULL), 0);
	CHECK(waited_ms < 10000);
	for (int i = 0; i < KID_THREADS; i++)
		for (int j = 0; j < KIDS; j++) {
			CHECK(m[i].c[j]);
			CHECK_EQ(check_port(m[i].c[j]), 7300);
			/* a thread's children share its shard */
			CHECK_EQ(m[i].c[j]->cold->kid, m[i].c[0]->cold->kid);
			m[i].bit = 1u << (m[i].c[0]->cold->kid - 1);
		}
	/* Each thread's children in a shard of its own of one bucket; on the list, only the
	 * listener, if it is its bucket. */
	tb2 = socktab__sk_bl(m[0].c[0])->tb2;
	for (int i = 0; i < KID_THREADS; i++)
		for (int j = 0; j < KIDS; j++)
			CHECK(socktab__sk_bl(m[i].c[j])->tb2 == tb2);
	CHECK((tb2 == socktab__sk_bl(l)->tb2) == !wildcard);
	for (int i = 0; i < KID_THREADS; i++)
		all |= shard_bit(&m[i]);
	CHECK_EQ(__builtin_popcount(all), KID_THREADS);
	CHECK_EQ(tb2->kid_live, all);
	CHECK(wildcard ? !tb2->owners : tb2->owners == l && !socktab__sk_bl(l)->next);
	CHECK_EQ(socktab_close(l), 0);
	CHECK(!tb2->owners);
	CHECK_EQ(bind_fresh(net, 7300, &s), -EADDRINUSE);
	if (wildcard) {
		/* The children own the port on their address only (R15: the kernel's too). */
		struct socktab_sock *o = socktab_socket(net, SOCKTAB_TCP, AF_INET);

		CHECK_EQ(check_bind4(o, "127.0.0.2", 7300), 0);
		CHECK_EQ(socktab_close(o), 0);
	}

	/* Every child but one: the oldest of each shard (its tail), the newest (its head), then
	 * the rest, each thread's from the middle out. The port stays taken, and each shard live
	 * while it has a child. */
	last = m[1].c[5];
	m[1].c[5] = NULL;
	for (int i = 0; i < KID_THREADS; i++) {
		CHECK_EQ(socktab_close(m[i].c[0]), 0);
		CHECK_EQ(socktab_close(m[i].c[KIDS - 1]), 0);
		m[i].c[0] = m[i].c[KIDS - 1] = NULL;
	}
	for (int j = KIDS / 2, d = 0; d < KIDS; d++, j = (j + d * (d % 2 ? -1 : 1) + KIDS) % KIDS)
		for (int i = KID_THREADS - 1; i >= 0; i--)
			if (m[i].c[j]) {
				CHECK_EQ(socktab_close(m[i].c[j]), 0);
				m[i].c[j] = NULL;
				/* (the last child keeps its thread's shard) */
				CHECK_EQ(tb2->kid_live, live_wanted(m) | shard_bit(&m[1]));
				CHECK_EQ(bind_fresh(net, 7300, &s), -EADDRINUSE);
			}
	for (int i = 0; i < KID_THREADS; i++)
		for (int j = 0; j < KIDS; j++)
			CHECK(!m[i].c[j]);
	/* Only the last child owns the port now. */
	CHECK_EQ(tb2->kid_live, shard_bit(&m[1]));
	CHECK(!tb2->owners);
	CHECK_EQ(bind_fresh(net, 7300, &s), -EADDRINUSE);

	/* To TIME_WAIT: its entry owns the port from then on, on the owners list. */
	CHECK_EQ(socktab_set_state(last, SOCKTAB_TCP_ESTABLISHED), 0);
	CHECK_EQ(socktab_set_state(last, SOCKTAB_TCP_FIN_WAIT1), 0);
	CHECK_EQ(socktab_set_state(last, SOCKTAB_TCP_TIME_WAIT), 0);
	tw = lookup4(net, 7300, 20105);
	CHECK(tw && socktab_sock_tw(tw));
	CHECK(tb2->owners == tw && !socktab__sk_bl(tw)->next && !tb2->kid_live);
	CHECK_EQ(socktab_close(last), 0);
	CHECK_EQ(bind_fresh(net, 7300, &s), -EADDRINUSE);
	/* Once it goes, so do the buckets, and the port is free. */
	CHECK_EQ(socktab_tw_kill(socktab_sock_tw(tw)), 0);
	socktab_sock_put(tw);
	socktab_net_stats(net, &st);
	CHECK_EQ(st.bind_buckets, buckets - 1);
	CHECK_EQ(bind_fresh(net, 7300, &s), 0);
	socktab_close(s);
	socktab_net_free(net);
}

TEST(children_of_threads_own_port)
{
	children_own_port(false);
}

/* The same for a wildcard listener's children, whose bucket is their address's: each thread's
 * first child makes or joins its shard under the bhash lock, the others find the bucket under
 * RCU. */
TEST(children_of_wildcard_own_port)
{
	children_own_port(true);
}

CHECK_MAIN(request_in_ehash, promote_and_accept, accept_queue_overflow, syn_verdict,
	   cookie_child, closed_before_accept, close_drops_queues, migrate,
	   migrate_refused_and_spread, request_v6_and_teardown, request_v4_mapped,
	   request_dual_stack_sockaddr_in, request_in_dump, request_bad_input, request_forgets_listener,
	   request_entry_is_no_socket, request_unknown_device, timewait_taken_over_by_request,
	   children_of_threads_own_port, children_of_wildcard_own_port)
