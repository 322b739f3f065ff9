/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab_lookup_batch4/6() and socktab_lookup_one4/6(): for TCP and UDP, IPv4 and IPv6, every
 * result is the single lookup's socket, with the kind of what was found (established, TIME_WAIT, listener, connected
 * or unconnected UDP, nothing) and its caller area; across chunk boundaries, with long chains,
 * with and without references, over long hash4 chains; argument errors leave the results
 * untouched.
 */
#include <stdbool.h>

#include "check.h"
#include "net.h"
#include "udp.h"

#define NSOCK 200
#define PRIV 32
#define TWPRIV 16

static struct socktab_net *new_net(uint32_t ehash)
{
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	if (ehash)
		p.ehash_entries = ehash;
	p.tw_len_ms = 600000;
	p.sock_priv_size = PRIV;
	p.tw_priv_size = TWPRIV;
	return socktab_net_new(&p);
}

/* @v6: 2001:db8::(a + 1) (a = 0: ::1), else 10.0.0.0 + a (a = 0: 127.0.0.1). */
static socklen_t addr(struct sockaddr_storage *ss, bool v6, uint32_t a, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (!v6) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_addr.s_addr = a ? htonl(0x0a000000u + a) : htonl(INADDR_LOOPBACK);
		s->sin_port = htons(port);
		return sizeof(*s);
	}
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

	s->sin6_family = AF_INET6;
	if (a) {
		s->sin6_addr.s6_addr[0] = 0x20;
		s->sin6_addr.s6_addr[1] = 0x01;
		s->sin6_addr.s6_addr[2] = 0x0d;
		s->sin6_addr.s6_addr[3] = 0xb8;
		s->sin6_addr.s6_addr32[3] = htonl(a + 1);
	} else {
		s->sin6_addr = in6addr_loopback;
	}
	s->sin6_port = htons(port);
	return sizeof(*s);
}

/* The tuple of a segment from @src to @dst. */
static void tuple(const struct sockaddr_storage *src, const struct sockaddr_storage *dst,
		  struct socktab_tuple4 *k4, struct socktab_tuple6 *k6)
{
	memset(k4, 0, sizeof(*k4));
	memset(k6, 0, sizeof(*k6));
	if (src->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)src, *d = (const void *)dst;

		*k4 = (struct socktab_tuple4){ s->sin_addr.s_addr, d->sin_addr.s_addr, s->sin_port,
					       d->sin_port, SOCKTAB_LOOPBACK_IFINDEX, 0 };
		return;
	}
	const struct sockaddr_in6 *s = (const void *)src, *d = (const void *)dst;

	k6->saddr = s->sin6_addr;
	k6->daddr = d->sin6_addr;
	k6->sport = s->sin6_port;
	k6->dport = d->sin6_port;
	k6->dif = SOCKTAB_LOOPBACK_IFINDEX;
}

/* The single lookup's answer for key @i (referenced). */
static struct socktab_sock *single(struct socktab_net *net, int proto, bool v6, bool est,
				   const struct socktab_tuple4 *k4, const struct socktab_tuple6 *k6)
{
	if (proto == SOCKTAB_UDP)
		return v6 ? socktab_lookup_udp6(net, &k6->saddr, k6->sport, &k6->daddr, k6->dport,
						k6->dif, 0)
			  : socktab_lookup_udp4(net, k4->saddr, k4->sport, k4->daddr, k4->dport,
						k4->dif, 0);
	if (v6)
		return est ? socktab_lookup_established6(net, &k6->saddr, k6->sport, &k6->daddr,
							 k6->dport, k6->dif, 0)
			   : socktab_lookup_tcp6(net, &k6->saddr, k6->sport, &k6->daddr, k6->dport,
						 k6->dif, 0);
	return est ? socktab_lookup_established4(net, k4->saddr, k4->sport, k4->daddr, k4->dport,
						 k4->dif, 0)
		   : socktab_lookup_tcp4(net, k4->saddr, k4->sport, k4->daddr, k4->dport, k4->dif,
					 0);
}

/* Run the batch with @flags and check every result against the single lookup and @want. */
static void check_batch(struct socktab_net *net, int proto, bool v6, unsigned n,
			const struct socktab_tuple4 *k4, const struct socktab_tuple6 *k6,
			const int *want, unsigned flags)
{
	static struct socktab_hit out[NSOCK * 3];
	bool noref = flags & SOCKTAB_LOOKUP_NOREF, est = flags & SOCKTAB_LOOKUP_ESTABLISHED;
	int found, expect = 0;

	if (noref)
		socktab_rcu_read_lock();
	found = v6 ? socktab_lookup_batch6(net, proto, k6, n, out, flags)
		   : socktab_lookup_batch4(net, proto, k4, n, out, flags);
	CHECK(found >= 0);
	for (unsigned i = 0; i < n; i++) {
		struct socktab_sock *one = single(net, proto, v6, est, &k4[i], &k6[i]);
		int kind = want[i];

		if (est && kind == SOCKTAB_HIT_LISTENER)
			kind = SOCKTAB_HIT_NONE;
		CHECK_EQ((uintptr_t)out[i].sk, (uintptr_t)one);
		CHECK_EQ(out[i].kind, kind);
		if (kind == SOCKTAB_HIT_TIME_WAIT)
			CHECK_EQ((uintptr_t)out[i].priv,
				 (uintptr_t)socktab_tw_priv(socktab_sock_tw(out[i].sk)));
		else if (one)
			CHECK_EQ((uintptr_t)out[i].priv, (uintptr_t)socktab_sock_priv(one));
		else
			CHECK(out[i].priv == NULL);
		CHECK(kind == SOCKTAB_HIT_NONE || out[i].priv != NULL);
		/* The one-key form gives the batch's answer. */
		{
			struct socktab_hit h;
			int r = v6 ? socktab_lookup_one6(net, proto, &k6[i], &h, flags)
				   : socktab_lookup_one4(net, proto, &k4[i], &h, flags);

			CHECK_EQ(r, one != NULL);
			CHECK_EQ((uintptr_t)h.sk, (uintptr_t)out[i].sk);
			CHECK_EQ(h.kind, out[i].kind);
			CHECK_EQ((uintptr_t)h.priv, (uintptr_t)out[i].priv);
			if (!noref)
				socktab_sock_put(h.sk);
		}
		expect += one != NULL;
		socktab_sock_put(one);
		if (!noref)
			socktab_sock_put(out[i].sk);
	}
	if (noref)
		socktab_rcu_read_unlock();
	CHECK_EQ(found, expect);
}

/* A UDP batch, referenced and RCU-scoped: check_batch() both ways. */
static void check_udp_batch(struct socktab_net *net, bool v6, unsigned n,
			    const struct socktab_tuple4 *k4, const struct socktab_tuple6 *k6,
			    const int *want)
{
	check_batch(net, SOCKTAB_UDP, v6, n, k4, k6, want, 0);
	check_batch(net, SOCKTAB_UDP, v6, n, k4, k6, want, SOCKTAB_LOOKUP_NOREF);
}

/*
 * TCP in one family: a listener on port 80 of the loopback address and NSOCK children, every
 * third of them closed to TIME_WAIT. Keys: each child, then for every tenth a miss on the
 * listener's port (the listener answers) and one on port 81 (nothing).
 */
static void tcp_case(bool v6, uint32_t ehash)
{
	static struct socktab_sock *kids[NSOCK];
	static struct socktab_tuple4 k4[NSOCK * 3];
	static struct socktab_tuple6 k6[NSOCK * 3];
	static int want[NSOCK * 3];
	struct socktab_net *net = new_net(ehash);
	struct sockaddr_storage la, ra;
	socklen_t len = addr(&la, v6, 0, 80);
	struct socktab_sock *ln;
	unsigned n = 0;

	CHECK(net);
	ln = socktab_socket(net, SOCKTAB_TCP, v6 ? AF_INET6 : AF_INET);
	CHECK(ln);
	CHECK_EQ(socktab_bind(ln, (struct sockaddr *)&la, len), 0);
	CHECK_EQ(socktab_listen(ln, 16), 0);
	for (uint32_t i = 0; i < NSOCK; i++) {
		addr(&ra, v6, 1 + i * 7, (uint16_t)(1000 + i));
		kids[i] = socktab_sock_new_child(ln, (struct sockaddr *)&la, (struct sockaddr *)&ra,
						 len, SOCKTAB_LOOPBACK_IFINDEX, 0);
		CHECK(kids[i]);
		CHECK_EQ(socktab_set_state(kids[i], SOCKTAB_TCP_ESTABLISHED), 0);
		tuple(&ra, &la, &k4[n], &k6[n]);
		want[n++] = i % 3 ? SOCKTAB_HIT_ESTABLISHED : SOCKTAB_HIT_TIME_WAIT;
		if (i % 10 == 0) {
			struct sockaddr_storage other = la;

			addr(&ra, v6, 1 + i * 7, 9);
			tuple(&ra, &la, &k4[n], &k6[n]);
			want[n++] = SOCKTAB_HIT_LISTENER;
			addr(&other, v6, 0, 81);
			tuple(&ra, &other, &k4[n], &k6[n]);
			want[n++] = SOCKTAB_HIT_NONE;
		}
	}
	for (int i = 0; i < NSOCK; i += 3)
		CHECK_EQ(socktab_close(kids[i]), 0); /* active close: a TIME_WAIT entry */
	check_batch(net, SOCKTAB_TCP, v6, n, k4, k6, want, 0);
	check_batch(net, SOCKTAB_TCP, v6, n, k4, k6, want, SOCKTAB_LOOKUP_ESTABLISHED);
	check_batch(net, SOCKTAB_TCP, v6, n, k4, k6, want, SOCKTAB_LOOKUP_NOREF);
	check_batch(net, SOCKTAB_TCP, v6, n, k4, k6, want,
		    SOCKTAB_LOOKUP_NOREF | SOCKTAB_LOOKUP_ESTABLISHED);
	socktab_net_free(net);
}

TEST(batch_tcp4)
{
	tcp_case(false, 0);
	tcp_case(false, 16); /* long chains */
}

TEST(batch_tcp6)
{
	tcp_case(true, 0);
	tcp_case(true, 16);
}

/* An IPv4 connection looked up with v4-mapped addresses in an IPv6 batch: keyed as IPv4. */
TEST(batch_tcp6_mapped)
{
	struct socktab_net *net = new_net(0);
	struct sockaddr_storage la, ra;
	socklen_t len = addr(&la, false, 0, 80);
	struct socktab_sock *ln, *kid;
	struct socktab_tuple6 k;
	struct socktab_hit out;

	CHECK(net);
	ln = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(ln && !socktab_bind(ln, (struct sockaddr *)&la, len) && !socktab_listen(ln, 4));
	addr(&ra, false, 5, 4000);
	kid = socktab_sock_new_child(ln, (struct sockaddr *)&la, (struct sockaddr *)&ra, len,
				     SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(kid);
	memset(&k, 0, sizeof(k));
	k.saddr.s6_addr[10] = k.saddr.s6_addr[11] = 0xff;
	k.daddr = k.saddr;
	k.saddr.s6_addr32[3] = ((struct sockaddr_in *)&ra)->sin_addr.s_addr;
	k.daddr.s6_addr32[3] = ((struct sockaddr_in *)&la)->sin_addr.s_addr;
	k.sport = htons(4000);
	k.dport = htons(80);
	k.dif = SOCKTAB_LOOPBACK_IFINDEX;
	CHECK_EQ(socktab_lookup_batch6(net, SOCKTAB_TCP, &k, 1, &out, 0), 1);
	CHECK(out.sk == kid);
	CHECK_EQ(out.kind, SOCKTAB_HIT_ESTABLISHED);
	socktab_sock_put(out.sk);
	socktab_net_free(net);
}

/*
 * UDP in one family: an unconnected socket on port 53, a socket on port 54 connected to the
 * loopback address's port 999. Keys: datagrams to 53 from many sources (unconnected), to 54 from
 * that peer (connected) and from another source (nothing: a connected socket takes only its
 * peer), to 55 (nothing).
 */
static void udp_case(bool v6)
{
	static struct socktab_tuple4 k4[NSOCK * 3];
	static struct socktab_tuple6 k6[NSOCK * 3];
	static int want[NSOCK * 3];
	struct socktab_net *net = new_net(0);
	struct sockaddr_storage a53, a54, a55, peer, src;
	socklen_t len = addr(&a53, v6, 0, 53);
	struct socktab_sock *u, *c;
	unsigned n = 0;

	CHECK(net);
	addr(&a54, v6, 0, 54);
	addr(&a55, v6, 0, 55);
	addr(&peer, v6, 0, 999); /* a loopback peer: routed */
	u = socktab_socket(net, SOCKTAB_UDP, v6 ? AF_INET6 : AF_INET);
	c = socktab_socket(net, SOCKTAB_UDP, v6 ? AF_INET6 : AF_INET);
	CHECK(u && c);
	CHECK_EQ(socktab_bind(u, (struct sockaddr *)&a53, len), 0);
	CHECK_EQ(socktab_bind(c, (struct sockaddr *)&a54, len), 0);
	CHECK_EQ(socktab_connect(c, (struct sockaddr *)&peer, len), 0);
	for (uint32_t i = 0; i < NSOCK; i++) {
		addr(&src, v6, 2 + i, (uint16_t)(2000 + i));
		tuple(&src, &a53, &k4[n], &k6[n]);
		want[n++] = SOCKTAB_HIT_UDP;
		if (i % 10 == 0) {
			tuple(&peer, &a54, &k4[n], &k6[n]);
			want[n++] = SOCKTAB_HIT_UDP_CONNECTED;
			tuple(&src, &a54, &k4[n], &k6[n]);
			want[n++] = SOCKTAB_HIT_NONE;
			tuple(&src, &a55, &k4[n], &k6[n]);
			want[n++] = SOCKTAB_HIT_NONE;
		}
	}
	check_udp_batch(net, v6, n, k4, k6, want);
	socktab_net_free(net);
}

TEST(batch_udp4)
{
	udp_case(false);
}

TEST(batch_udp6)
{
	udp_case(true);
}

/*
 * Long hash4 chains: 400 connected sockets on port 53 over the 128 slots of the smallest UDP
 * table, so the batch walks chains of up to a dozen entries, round after round and on into the
 * whole lookup; keys of peers no socket is connected to walk a chain to its end and get the
 * unconnected socket; keys to port 54 find nothing. Shuffled, as a burst comes.
 */
static void udp_chains_case(bool v6)
{
	static struct socktab_tuple4 k4[NSOCK * 3];
	static struct socktab_tuple6 k6[NSOCK * 3];
	static int want[NSOCK * 3];
	struct socktab_net_params p;
	struct socktab_net *net;
	struct sockaddr_storage a53, a54, peer;
	socklen_t len;
	struct socktab_sock *u;
	unsigned n = 0;
	uint32_t x = 12345;

	socktab_net_params_init(&p);
	p.udp_hash_entries = 128;
	p.sock_priv_size = PRIV;
	p.fixed_secret = 1; /* the same chains every run */
	for (unsigned i = 0; i < sizeof(p.secret); i++)
		p.secret[i] = (uint8_t)(i * 37 + 11);
	net = socktab_net_new(&p);
	CHECK(net);
	len = addr(&a53, v6, 0, 53);
	addr(&a54, v6, 0, 54);
	u = socktab_socket(net, SOCKTAB_UDP, v6 ? AF_INET6 : AF_INET);
	CHECK(u);
	CHECK_EQ(check_setint(u, SOL_SOCKET, SO_REUSEADDR, 1), 0);
	CHECK_EQ(socktab_bind(u, (struct sockaddr *)&a53, len), 0);
	for (uint32_t i = 0; i < 400; i++) {
		struct socktab_sock *c = socktab_socket(net, SOCKTAB_UDP, v6 ? AF_INET6 : AF_INET);

		CHECK(c);
		CHECK_EQ(check_setint(c, SOL_SOCKET, SO_REUSEADDR, 1), 0);
		CHECK_EQ(socktab_bind(c, (struct sockaddr *)&a53, len), 0);
		addr(&peer, v6, 0, (uint16_t)(2000 + i));
		CHECK_EQ(socktab_connect(c, (struct sockaddr *)&peer, len), 0);
		tuple(&peer, &a53, &k4[n], &k6[n]);
		want[n++] = SOCKTAB_HIT_UDP_CONNECTED;
	}
	for (uint32_t i = 0; i < 200; i++) {
		addr(&peer, v6, 0, (uint16_t)(3000 + i));
		tuple(&peer, i < 150 ? &a53 : &a54, &k4[n], &k6[n]);
		want[n++] = i < 150 ? SOCKTAB_HIT_UDP : SOCKTAB_HIT_NONE;
	}
	{ /* the chains are long: the walk takes many rounds */
		struct socktab__udp_table *t = net->udp;
		uint32_t longest = 0;

		CHECK_EQ(t->mask4, 127);
		for (uint32_t i = 0; i <= t->mask4; i++)
			if (atomic_load(&t->hash4[i].count) > longest)
				longest = atomic_load(&t->hash4[i].count);
		CHECK(longest >= 8);
	}
	for (unsigned i = n - 1; i > 0; i--) { /* Fisher-Yates, by a fixed xorshift */
		unsigned j;
		struct socktab_tuple4 t4;
		struct socktab_tuple6 t6;
		int w;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		j = x % (i + 1);
		t4 = k4[i], k4[i] = k4[j], k4[j] = t4;
		t6 = k6[i], k6[i] = k6[j], k6[j] = t6;
		w = want[i], want[i] = want[j], want[j] = w;
	}
	check_udp_batch(net, v6, n, k4, k6, want);
	socktab_net_free(net);
}

TEST(batch_udp4_long_chains)
{
	udp_chains_case(false);
}

TEST(batch_udp6_long_chains)
{
	udp_chains_case(true);
}

TEST(batch_errors_leave_results)
{
	struct socktab_net *net = new_net(0);
	struct socktab_tuple4 k4 = { 0 };
	struct socktab_tuple6 k6;
	struct socktab_hit out = { (void *)&k4, (void *)&k4, 77 };

	CHECK(net);
	memset(&k6, 0, sizeof(k6));
	CHECK_EQ(socktab_lookup_batch4(NULL, SOCKTAB_TCP, &k4, 1, &out, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_batch4(net, SOCKTAB_TCP, NULL, 1, &out, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_batch4(net, SOCKTAB_TCP, &k4, 1, NULL, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_batch4(net, 0, &k4, 1, &out, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_batch4(net, 3, &k4, 1, &out, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_batch4(net, SOCKTAB_TCP, &k4, 1, &out, 0x80), -EINVAL);
	CHECK_EQ(socktab_lookup_batch4(net, SOCKTAB_UDP, &k4, 1, &out, SOCKTAB_LOOKUP_ESTABLISHED),
		 -EINVAL);
	CHECK_EQ(socktab_lookup_batch6(net, SOCKTAB_TCP, NULL, 1, &out, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_batch6(NULL, SOCKTAB_UDP, &k6, 1, &out, 0), -EINVAL);
	CHECK(out.sk == (void *)&k4 && out.priv == (void *)&k4 && out.kind == 77);
	CHECK_EQ(socktab_lookup_one4(NULL, SOCKTAB_TCP, &k4, &out, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_one4(net, SOCKTAB_TCP, NULL, &out, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_one4(net, SOCKTAB_TCP, &k4, NULL, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_one4(net, 3, &k4, &out, 0), -EINVAL);
	CHECK_EQ(socktab_lookup_one4(net, SOCKTAB_TCP, &k4, &out, 0x80), -EINVAL);
	CHECK_EQ(socktab_lookup_one4(net, SOCKTAB_UDP, &k4, &out, SOCKTAB_LOOKUP_ESTABLISHED),
		 -EINVAL);
	CHECK_EQ(socktab_lookup_one6(net, SOCKTAB_TCP, NULL, &out, 0), -EINVAL);
	CHECK_EQ(out.kind, 77); /* untouched by every refusal above */
	CHECK_EQ(socktab_lookup_batch4(net, SOCKTAB_TCP, NULL, 0, NULL, 0), 0);
	CHECK_EQ(socktab_lookup_batch6(net, SOCKTAB_UDP, NULL, 0, NULL, 0), 0);
	CHECK_EQ(socktab_lookup_batch4(net, SOCKTAB_TCP, &k4, 1, &out, 0), 0);
	CHECK(out.sk == NULL && out.priv == NULL && out.kind == SOCKTAB_HIT_NONE);
	socktab_net_free(net);
}

CHECK_MAIN(batch_tcp4, batch_tcp6, batch_tcp6_mapped, batch_udp4, batch_udp6,
	   batch_udp4_long_chains, batch_udp6_long_chains, batch_errors_leave_results)
