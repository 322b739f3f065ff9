/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UDP tables (src/udp.c): what the kernel cannot show. hash4_cnt and the hash4 chain stay exact
 * through connect, re-connect, disconnect and close; sockets move between hash2 slots; lookups
 * pick per R71/R72 with hash4 on and off; bad input leaves the tables alone.
 */
#include "check.h"
#include "hash.h"
#include "udp.h"

static struct sockaddr_in sin4(const char *a, int port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	inet_pton(AF_INET, a, &s.sin_addr);
	return s;
}

static struct sockaddr_in6 sin6(const char *a, int port)
{
	struct sockaddr_in6 s = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };

	inet_pton(AF_INET6, a, &s.sin6_addr);
	return s;
}

static uint32_t ip(const char *a)
{
	uint32_t v;

	inet_pton(AF_INET, a, &v);
	return v;
}

static struct socktab_net *mknet(void)
{
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	p.udp_hash_entries = 128;
	p.fixed_secret = 1;
	return socktab_net_new(&p);
}

static int bind4(struct socktab_sock *sk, const char *a, int port)
{
	struct sockaddr_in s = sin4(a, port);

	return socktab_bind(sk, (struct sockaddr *)&s, sizeof(s));
}

static int connect4(struct socktab_sock *sk, const char *a, int port)
{
	struct sockaddr_in s = sin4(a, port);

	return socktab_connect(sk, (struct sockaddr *)&s, sizeof(s));
}

static int disconnect(struct socktab_sock *sk)
{
	struct sockaddr s = { .sa_family = AF_UNSPEC };

	return socktab_connect(sk, &s, sizeof(s));
}

static struct socktab_sock *udp4(struct socktab_net *net, int reuse)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_UDP, AF_INET);

	if (sk && reuse)
		socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof(reuse));
	return sk;
}

static uint32_t slot2(struct socktab_net *net, const char *a, int port)
{
	struct in6_addr m;

	socktab__v6_map(&m, ip(a));
	return socktab__portaddr_hash(net, &m, (uint16_t)port) & net->udp->mask;
}

/* Sum of every hash4 slot's count: hash4 holds exactly this many sockets. */
static uint32_t hash4_total(struct socktab_net *net)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i <= net->udp->mask4; i++)
		n += RD(net->udp->hash4[i].count);
	return n;
}

static uint32_t cnt4(struct socktab_net *net, const char *a, int port)
{
	return RD(net->udp->hash2[slot2(net, a, port)].hash4_cnt);
}

TEST(hash4_count_through_the_life_of_a_socket)
{
	struct socktab_net *net = mknet();
	struct socktab_sock *a = udp4(net, 0);
	struct socktab_udp_stats st;

	CHECK(a);
	CHECK_EQ(bind4(a, "0.0.0.0", 7000), 0);
	CHECK_EQ(socktab__sk_udp(a)->slot2, slot2(net, "0.0.0.0", 7000));
	CHECK_EQ(connect4(a, "127.0.0.2", 9000), 0);
	/* connect() gave it 127.0.0.1: hash2 moved, hash4 entered, counted in the new slot */
	CHECK_EQ(socktab__sk_udp(a)->slot2, slot2(net, "127.0.0.1", 7000));
	CHECK_EQ(cnt4(net, "127.0.0.1", 7000), 1);
	CHECK_EQ(cnt4(net, "0.0.0.0", 7000), slot2(net, "0.0.0.0", 7000) ==
						       slot2(net, "127.0.0.1", 7000));
	CHECK_EQ(hash4_total(net), 1);
	/* re-connect with the address it has: no rehash, still one entry, left in the chain of
	 * the old 4-tuple (R74) */
	CHECK_EQ(connect4(a, "127.0.0.3", 9001), 0);
	CHECK_EQ(cnt4(net, "127.0.0.1", 7000), 1);
	CHECK_EQ(hash4_total(net), 1);
	CHECK_EQ(RD(socktab__sk_udp(a)->hash4) & net->udp->mask4,
		 (socktab__jhash_3words(ip("127.0.0.1"), ip("127.0.0.2"),
					(7000u << 16) | htons(9000),
					net->udp->ehash_secret + net->hash_mix)) &
			 net->udp->mask4);
	/* disconnect: out of hash4, back to the wildcard slot (the port was bound explicitly) */
	CHECK_EQ(disconnect(a), 0);
	CHECK_EQ(cnt4(net, "127.0.0.1", 7000), 0);
	CHECK_EQ(hash4_total(net), 0);
	CHECK_EQ(socktab__sk_udp(a)->slot2, slot2(net, "0.0.0.0", 7000));
	CHECK_EQ(socktab_udp_stats(net, &st), 0);
	CHECK_EQ(st.hashed, 1);
	CHECK_EQ(st.hashed4, 0);
	/* connect again, then close: everything unhashed */
	CHECK_EQ(connect4(a, "127.0.0.2", 9000), 0);
	CHECK_EQ(hash4_total(net), 1);
	CHECK_EQ(socktab_close(a), 0);
	CHECK_EQ(hash4_total(net), 0);
	CHECK_EQ(cnt4(net, "127.0.0.1", 7000), 0);
	CHECK_EQ(socktab_udp_stats(net, &st), 0);
	CHECK_EQ(st.hashed, 0);
	socktab_net_free(net);
}

TEST(autobound_disconnect_unhashes)
{
	struct socktab_net *net = mknet();
	struct socktab_sock *a = udp4(net, 0);
	struct socktab_udp_stats st;

	CHECK_EQ(connect4(a, "127.0.0.1", 9000), 0);
	CHECK_EQ(hash4_total(net), 1);
	CHECK_EQ(disconnect(a), 0);
	CHECK_EQ(hash4_total(net), 0);
	CHECK_EQ(socktab_udp_stats(net, &st), 0);
	CHECK_EQ(st.hashed, 0);
	CHECK(!socktab__hnode_hashed(&a->node));
	socktab_close(a);
	socktab_net_free(net);
}

TEST(many_connected_counts)
{
	struct socktab_net *net = mknet();
	struct socktab_sock *s[50];

	for (int i = 0; i < 50; i++) {
		s[i] = udp4(net, 1);
		CHECK_EQ(bind4(s[i], "127.0.0.1", 7000), 0);
		CHECK_EQ(connect4(s[i], "127.0.0.2", 10000 + i), 0);
	}
	CHECK_EQ(cnt4(net, "127.0.0.1", 7000), 50);
	CHECK_EQ(RD(net->udp->hash2[slot2(net, "127.0.0.1", 7000)].count), 50);
	CHECK_EQ(hash4_total(net), 50);
	/* Address and port both bound: a disconnect leaves the hash4 entry, stale (R75). */
	for (int i = 0; i < 50; i += 2)
		CHECK_EQ(disconnect(s[i]), 0);
	CHECK_EQ(cnt4(net, "127.0.0.1", 7000), 50);
	CHECK_EQ(hash4_total(net), 50);
	for (int i = 0; i < 50; i++)
		socktab_close(s[i]);
	CHECK_EQ(hash4_total(net), 0);
	CHECK_EQ(RD(net->udp->hash2[slot2(net, "127.0.0.1", 7000)].count), 0);
	socktab_net_free(net);
}

/* The longest hash4 chain, by the slots' counts. */
static uint32_t hash4_longest(struct socktab_net *net)
{
	uint32_t m = 0;

	for (uint32_t i = 0; i <= net->udp->mask4; i++)
		if (RD(net->udp->hash4[i].count) > m)
			m = RD(net->udp->hash4[i].count);
	return m;
}

/*
 * udp_hash4_entries sizes hash4 apart from hash and hash2 (larger, or smaller, than the
 * kernel's shared size): 3,000 connected sockets on one port are each found by the single and
 * the batch lookup, their entries spread over the table's own slots, a re-connect's stale entry
 * stays in its old chain, and close empties it.
 */
TEST(hash4_sized_apart)
{
	static const uint32_t sizes[][3] = { /* udp_hash_entries, udp_hash4_entries, slots4 */
		{ 128, 1u << 16, 1u << 16 }, { 1024, 100, 128 }, { 256, 0, 256 },
	};

	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		struct socktab_net_params p;
		struct socktab_udp_stats st;
		struct socktab_sock *s[3000];
		struct socktab_net *net;
		uint32_t n = 3000;

		socktab_net_params_init(&p);
		p.udp_hash_entries = sizes[z][0];
		p.udp_hash4_entries = sizes[z][1];
		p.fixed_secret = 1;
		net = socktab_net_new(&p);
		CHECK(net != NULL);
		CHECK_EQ(socktab_udp_stats(net, &st), 0);
		CHECK_EQ(st.slots, sizes[z][0]);
		CHECK_EQ(st.slots4, sizes[z][2]);
		for (uint32_t i = 0; i < n; i++) {
			s[i] = udp4(net, 1);
			CHECK_EQ(bind4(s[i], "127.0.0.1", 7000), 0);
			CHECK_EQ(connect4(s[i], "127.0.0.2", 10000 + (int)i), 0);
		}
		CHECK_EQ(hash4_total(net), n);
		/* 3,000 entries: at most a few per slot of 65,536, many per slot of 128 or 256 */
		if (sizes[z][2] == 1u << 16)
			CHECK(hash4_longest(net) <= 4);
		else
			CHECK(hash4_longest(net) >= n / sizes[z][2]);
		for (uint32_t i = 0; i < n; i++) {
			struct socktab_tuple4 k = { ip("127.0.0.2"), ip("127.0.0.1"),
						    htons((uint16_t)(10000 + i)), htons(7000),
						    SOCKTAB_LOOPBACK_IFINDEX, 0 };
			struct socktab_hit h;
			struct socktab_sock *f;

			f = socktab_lookup_udp4(net, k.saddr, k.sport, k.daddr, k.dport, k.dif, 0);
			CHECK(f == s[i]);
			socktab_sock_put(f);
			CHECK_EQ(socktab_lookup_batch4(net, SOCKTAB_UDP, &k, 1, &h, 0), 1);
			CHECK(h.sk == s[i]);
			CHECK_EQ(h.kind, SOCKTAB_HIT_UDP_CONNECTED);
			socktab_sock_put(h.sk);
		}
		/* A re-connect with its address kept leaves the entry in the old 4-tuple's chain
		 * (R74); the hash2 pass still finds the socket for its new peer. */
		uint32_t old = RD(socktab__sk_udp(s[0])->hash4) & net->udp->mask4;

		CHECK_EQ(connect4(s[0], "127.0.0.3", 9999), 0);
		CHECK_EQ(RD(socktab__sk_udp(s[0])->hash4) & net->udp->mask4, old);
		struct socktab_sock *f = socktab_lookup_udp4(net, ip("127.0.0.3"), htons(9999),
							     ip("127.0.0.1"), htons(7000),
							     SOCKTAB_LOOPBACK_IFINDEX, 0);

		CHECK(f == s[0]);
		socktab_sock_put(f);
		for (uint32_t i = 0; i < n; i++)
			CHECK_EQ(socktab_close(s[i]), 0);
		CHECK_EQ(hash4_total(net), 0);
		socktab_net_free(net);
	}
}

/* One lookup in both modes must agree; returns the socket (reference dropped). */
static struct socktab_sock *look(struct socktab_net *net, const char *s, int sp, const char *d,
				 int dp)
{
	struct socktab_sock *r[2];

	for (int on = 0; on < 2; on++) {
		socktab_net_set_udp_hash4(net, on);
		r[on] = socktab_lookup_udp4(net, ip(s), htons((uint16_t)sp), ip(d),
					    htons((uint16_t)dp), SOCKTAB_LOOPBACK_IFINDEX, 0);
		socktab_sock_put(r[on]);
	}
	return r[0] == r[1] ? r[0] : (struct socktab_sock *)1;
}

TEST(lookup_order)
{
	struct socktab_net *net = mknet();
	struct socktab_sock *w = udp4(net, 1), *s = udp4(net, 1), *c = udp4(net, 1);
	struct socktab_sock *v6 = socktab_socket(net, SOCKTAB_UDP, AF_INET6);
	struct sockaddr_in6 any6 = sin6("::", 7000);
	int one = 1;

	CHECK_EQ(bind4(w, "0.0.0.0", 7000), 0);
	CHECK(look(net, "127.0.0.9", 1, "127.0.0.1", 7000) == w);
	CHECK(look(net, "127.0.0.9", 1, "127.0.0.1", 7001) == NULL);
	CHECK_EQ(bind4(s, "127.0.0.1", 7000), 0);
	CHECK(look(net, "127.0.0.9", 1, "127.0.0.1", 7000) == s); /* specific beats wildcard */
	CHECK(look(net, "127.0.0.9", 1, "127.0.0.2", 7000) == w);
	CHECK_EQ(bind4(c, "127.0.0.1", 7000), 0);
	CHECK_EQ(connect4(c, "127.0.0.5", 5555), 0);
	CHECK(look(net, "127.0.0.5", 5555, "127.0.0.1", 7000) == c); /* full 4-tuple */
	CHECK(look(net, "127.0.0.5", 5556, "127.0.0.1", 7000) == s);
	CHECK(look(net, "127.0.0.6", 5555, "127.0.0.1", 7000) == s);
	/* a dual-stack wildcard loses to the v4 wildcard for IPv4 (score 1 < 2) */
	socktab_setsockopt(v6, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	CHECK_EQ(socktab_bind(v6, (struct sockaddr *)&any6, sizeof(any6)), 0);
	CHECK(look(net, "127.0.0.9", 1, "127.0.0.2", 7000) == w);
	socktab_close(w);
	CHECK(look(net, "127.0.0.9", 1, "127.0.0.2", 7000) == v6);
	/* and the v6 form of a v4-mapped pair is the IPv4 lookup */
	{
		struct sockaddr_in6 a = sin6("::ffff:127.0.0.9", 1), b = sin6("::ffff:127.0.0.2", 7000);
		struct socktab_sock *r = socktab_lookup_udp6(net, &a.sin6_addr, a.sin6_port,
							     &b.sin6_addr, b.sin6_port, SOCKTAB_LOOPBACK_IFINDEX, 0);

		CHECK(r == v6);
		socktab_sock_put(r);
	}
	socktab_close(s);
	socktab_close(c);
	socktab_close(v6);
	socktab_net_free(net);
}

TEST(reuseport_connected_member_leaves_group)
{
	struct socktab_net *net = mknet();
	struct socktab_sock *a = udp4(net, 0), *b = udp4(net, 0);
	int one = 1;

	socktab_setsockopt(a, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	socktab_setsockopt(b, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	CHECK_EQ(bind4(a, "127.0.0.1", 7000), 0);
	CHECK_EQ(bind4(b, "127.0.0.1", 7000), 0);
	CHECK(a->cold->reuseport_cb && a->cold->reuseport_cb == b->cold->reuseport_cb);
	CHECK_EQ(connect4(b, "127.0.0.2", 9000), 0);
	CHECK(b->cold->reuseport_cb == NULL);
	CHECK_EQ(RD(socktab__sk_udp(a)->rp_conns), 1); /* R36: the group saw a connect() */
	for (int p = 1; p < 200; p++)
		CHECK(look(net, "127.0.0.3", p, "127.0.0.1", 7000) == a);
	CHECK(look(net, "127.0.0.2", 9000, "127.0.0.1", 7000) == b);
	socktab_close(a);
	socktab_close(b);
	socktab_net_free(net);
}

/* The hash4 slot (of 128) of the 4-tuple 127.0.0.2:@rport -> 127.0.0.1:7000. */
static uint32_t slot4_of(struct socktab_net *net, int rport)
{
	return socktab__jhash_3words(ip("127.0.0.1"), ip("127.0.0.2"),
				     (7000u << 16) | htons((uint16_t)rport),
				     net->udp->ehash_secret + net->hash_mix) &
	       net->udp->mask4;
}

/*
 * A stale hash4 entry (R74) is matched by its socket's fields as they are now, as the kernel's
 * udp4_lib_lookup4 matches: a socket that connected again, keeping its address, to a peer whose
 * 4-tuple falls in its old slot is found there, while with hash4 off the hash2 pass meets the
 * reuseport group first and the group takes the datagram.
 */
TEST(stale_entry_found_in_its_own_slot)
{
	struct socktab_net *net = mknet();
	struct socktab_sock *a = udp4(net, 1), *b = udp4(net, 1), *c = udp4(net, 1), *f[2];
	int one = 1, port = 0;

	socktab_setsockopt(b, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	socktab_setsockopt(c, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	CHECK_EQ(bind4(a, "127.0.0.1", 7000), 0);
	CHECK_EQ(bind4(b, "127.0.0.1", 7000), 0);
	CHECK_EQ(bind4(c, "127.0.0.1", 7000), 0);
	CHECK_EQ(connect4(a, "127.0.0.2", 9000), 0);
	for (int p = 9001; p < 20000 && !port; p++)
		if (slot4_of(net, p) == slot4_of(net, 9000))
			port = p;
	CHECK(port != 0);
	CHECK_EQ(connect4(a, "127.0.0.2", port), 0);
	CHECK_EQ(RD(socktab__sk_udp(a)->hash4) & net->udp->mask4, slot4_of(net, 9000)); /* stale */
	for (int on = 0; on < 2; on++) {
		socktab_net_set_udp_hash4(net, on);
		f[on] = socktab_lookup_udp4(net, ip("127.0.0.2"), htons((uint16_t)port),
					    ip("127.0.0.1"), htons(7000), SOCKTAB_LOOPBACK_IFINDEX,
					    0);
		socktab_sock_put(f[on]);
	}
	CHECK(f[1] == a);
	CHECK(f[0] == b || f[0] == c);
	/* A new 4-tuple in another slot reaches the stale socket through hash2 only. */
	for (int p = 9001; p < 20000; p++)
		if (slot4_of(net, p) != slot4_of(net, 9000)) {
			port = p;
			break;
		}
	CHECK_EQ(connect4(a, "127.0.0.2", port), 0);
	f[1] = socktab_lookup_udp4(net, ip("127.0.0.2"), htons((uint16_t)port), ip("127.0.0.1"),
				   htons(7000), SOCKTAB_LOOPBACK_IFINDEX, 0);
	socktab_sock_put(f[1]);
	CHECK(f[1] == b || f[1] == c);
	socktab_close(a);
	socktab_close(b);
	socktab_close(c);
	socktab_net_free(net);
}

TEST(bad_input_changes_nothing)
{
	struct socktab_net *net = mknet();
	struct socktab_sock *a = udp4(net, 0), *b = udp4(net, 0);
	struct sockaddr_in s = sin4("127.0.0.1", 7000);
	struct sockaddr_in6 s6 = sin6("::1", 7000);
	struct sockaddr_storage src, to;
	struct socktab_udp_stats st;

	CHECK_EQ(socktab_bind(a, (struct sockaddr *)&s, sizeof(s) - 1), -EINVAL);
	CHECK_EQ(socktab_bind(a, (struct sockaddr *)&s6, sizeof(s6)), -EAFNOSUPPORT);
	CHECK_EQ(socktab_bind(a, NULL, 0), -EINVAL);
	CHECK_EQ(socktab_connect(a, NULL, 0), -EINVAL);
	CHECK_EQ(socktab_listen(a, 1), -EOPNOTSUPP);
	CHECK_EQ(socktab_set_state(a, SOCKTAB_TCP_ESTABLISHED), -EOPNOTSUPP);
	CHECK_EQ(socktab_sock_proto(a), SOCKTAB_UDP);
	CHECK_EQ(socktab_udp_stats(net, &st), 0);
	CHECK_EQ(st.hashed, 0);
	CHECK_EQ(bind4(a, "127.0.0.1", 7000), 0);
	CHECK_EQ(bind4(b, "127.0.0.1", 7000), -EADDRINUSE);
	CHECK_EQ(socktab_udp_stats(net, &st), 0);
	CHECK_EQ(st.hashed, 1);
	CHECK_EQ(socktab_udp_sendto(b, NULL, 0, &src, &to), -EDESTADDRREQ);
	CHECK_EQ(socktab_udp_sendto(b, (struct sockaddr *)&s, sizeof(s), &src, &to), 0);
	CHECK_EQ(((struct sockaddr_in *)&src)->sin_addr.s_addr, ip("127.0.0.1"));
	CHECK_EQ(((struct sockaddr_in *)&to)->sin_port, htons(7000));
	CHECK(socktab_lookup_udp4(NULL, 0, 0, 0, 0, SOCKTAB_LOOPBACK_IFINDEX, 0) == NULL);
	{ /* not a UDP socket: a TCP one, its request entry, its TIME_WAIT entry */
		struct socktab_sock *l = socktab_socket(net, SOCKTAB_TCP, AF_INET), *r, *c, *tw;
		struct sockaddr_in la = sin4("127.0.0.1", 80), ra = sin4("192.0.2.9", 4000);
		struct sockaddr_in rb = sin4("192.0.2.9", 4001);
		uint64_t hashed;

		CHECK(l);
		CHECK_EQ(socktab_bind(l, (struct sockaddr *)&la, sizeof(la)), 0);
		CHECK_EQ(socktab_listen(l, 8), 0);
		r = socktab_req_new(l, (struct sockaddr *)&la, (struct sockaddr *)&ra, sizeof(la),
				    SOCKTAB_LOOPBACK_IFINDEX, 0);
		c = socktab_sock_new_child(l, (struct sockaddr *)&la, (struct sockaddr *)&rb,
					   sizeof(la), SOCKTAB_LOOPBACK_IFINDEX, 0);
		CHECK(r && c);
		CHECK_EQ(socktab_set_state(c, SOCKTAB_TCP_ESTABLISHED), 0);
		CHECK_EQ(socktab_close(c), 0); /* to TIME_WAIT */
		tw = socktab_lookup_established4(net, rb.sin_addr.s_addr, rb.sin_port,
						 la.sin_addr.s_addr, la.sin_port,
						 SOCKTAB_LOOPBACK_IFINDEX, 0);
		CHECK(tw && socktab_sock_tw(tw));
		CHECK_EQ(socktab_udp_stats(net, &st), 0);
		hashed = st.hashed;
		CHECK_EQ(socktab_udp_sendto(l, (struct sockaddr *)&s, sizeof(s), &src, &to),
			 -EOPNOTSUPP);
		CHECK_EQ(socktab_udp_sendto(r, (struct sockaddr *)&s, sizeof(s), &src, &to), -EBADF);
		CHECK_EQ(socktab_udp_sendto(tw, (struct sockaddr *)&s, sizeof(s), &src, &to), -EBADF);
		CHECK_EQ(socktab_udp_stats(net, &st), 0);
		CHECK_EQ(st.hashed, hashed); /* nothing autobound */
		socktab_sock_put(tw);
		socktab_sock_put(r);
		CHECK_EQ(socktab_close(l), 0);
	}
	CHECK_EQ(socktab_close(a), 0);
	CHECK_EQ(socktab_close(b), 0);
	CHECK_EQ(socktab_close(b), -EBADF);
	socktab_net_free(net);
}

TEST(bind0_exhaustion_errnos)
{
	struct socktab_net *net = mknet();
	struct socktab_sock *a = udp4(net, 0), *b = udp4(net, 0), *c = udp4(net, 0);
	struct sockaddr_in s = sin4("127.0.0.1", 7000);

	CHECK_EQ(socktab_net_set_port_range(net, 40000, 40000), 0);
	CHECK_EQ(bind4(a, "0.0.0.0", 0), 0);
	CHECK_EQ(bind4(b, "0.0.0.0", 0), -EADDRINUSE);
	CHECK_EQ(connect4(c, "127.0.0.1", 7000), -EAGAIN);
	CHECK_EQ(socktab_udp_sendto(c, (struct sockaddr *)&s, sizeof(s), NULL, NULL), -EAGAIN);
	socktab_close(a);
	CHECK_EQ(connect4(c, "127.0.0.1", 7000), 0);
	socktab_close(b);
	socktab_close(c);
	socktab_net_free(net);
}

CHECK_MAIN(hash4_count_through_the_life_of_a_socket, autobound_disconnect_unhashes,
	   many_connected_counts, hash4_sized_apart, lookup_order,
	   reuseport_connected_member_leaves_group, stale_entry_found_in_its_own_slot,
	   bad_input_changes_nothing, bind0_exhaustion_errnos)
