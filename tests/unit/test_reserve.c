/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The net's reservation (socktab_net_params.reserve_socks, reserve_tw, reserve_family): the
 * pools' slabs for that many TCP sockets and TIME_WAIT entries exist from socktab_net_new() on,
 * so no socket or entry allocates a slab until the reservation is used up (pool_slabs of
 * socktab_net_stats() does not move), and ehash of the default size grows to hold them. Also the
 * rule of table sizes: 0 means the default.
 */
#include <limits.h>

#include "check.h"

static struct socktab_net_stats stats(struct socktab_net *net)
{
	struct socktab_net_stats st;

	memset(&st, 0xff, sizeof(st));
	if (socktab_net_stats(net, &st))
		memset(&st, 0xff, sizeof(st));
	return st;
}

static struct socktab_net *reserved_net(uint32_t socks, uint32_t tw, int family)
{
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	p.reserve_socks = socks;
	p.reserve_tw = tw;
	p.reserve_family = family;
	return socktab_net_new(&p);
}

/* A listener on 0.0.0.0:80. */
static struct socktab_sock *listener4(struct socktab_net *net)
{
	struct socktab_sock *l = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	if (l && (check_bind4(l, "0.0.0.0", 80) || socktab_listen(l, 128))) {
		socktab_close(l);
		return NULL;
	}
	return l;
}

/* Child @i of @l: 127.0.0.1:80 <- 127.1.x.y:1024 + (i % 50000), a 4-tuple of its own. */
static struct socktab_sock *child4(struct socktab_sock *l, uint32_t i)
{
	struct sockaddr_in loc = check_sin("127.0.0.1", 80), rem = check_sin("127.1.0.0", 0);

	rem.sin_addr.s_addr = htonl(ntohl(rem.sin_addr.s_addr) + i / 50000);
	rem.sin_port = htons((uint16_t)(1024 + i % 50000));
	return socktab_sock_new_child(l, (struct sockaddr *)&loc, (struct sockaddr *)&rem,
				      sizeof(loc), SOCKTAB_LOOPBACK_IFINDEX, 0);
}

/*
 * With reserve_socks = R (IPv4), R sockets (a listener and R - 1 children) allocate no slab. The
 * reservation is whole slabs: the socket that opens a new one is the first beyond them, and the
 * slabs hold at least R sockets but not a slab more. Without a reservation the pool starts empty.
 */
TEST(reserve_socks_no_slab)
{
	const uint32_t R = 30000;
	struct socktab_net *net = reserved_net(R, 0, AF_INET), *plain;
	struct socktab_sock *l;
	uint64_t s0, per, made;

	CHECK(net);
	s0 = stats(net).pool_slabs;
	CHECK(s0 >= 1);
	CHECK_EQ(stats(net).pool_socks, 0);
	l = listener4(net);
	CHECK(l);
	for (uint32_t i = 0; i + 1 < R; i++)
		CHECK(child4(l, i));
	CHECK_EQ(stats(net).pool_socks, R);
	CHECK_EQ(stats(net).pool_slabs, s0);
	/* Go on to the first socket that needs a slab. */
	for (made = R; stats(net).pool_slabs == s0; made++)
		CHECK(child4(l, (uint32_t)made - 1));
	CHECK_EQ(stats(net).pool_slabs, s0 + 1);
	per = (made - 1) / s0; /* sockets per slab: the slabs were full before the last one */
	CHECK_EQ((made - 1) % s0, 0);
	CHECK(per * s0 >= R);
	CHECK(per * (s0 - 1) < R);
	socktab_net_free(net);

	plain = reserved_net(0, 0, AF_INET);
	CHECK(plain);
	CHECK_EQ(stats(plain).pool_slabs, 0);
	l = listener4(plain);
	CHECK(l);
	CHECK_EQ(stats(plain).pool_slabs, 1);
	socktab_net_free(plain);
}

/* reserve_tw: N TIME_WAIT entries (children closed from ESTABLISHED) allocate no slab. */
TEST(reserve_tw_no_slab)
{
	const uint32_t N = 20000; /* more than one slab of IPv4 entries */
	struct socktab_net *net = reserved_net(N, N, AF_INET);
	struct socktab_sock *l;
	uint64_t s0;

	CHECK(net);
	s0 = stats(net).pool_slabs;
	l = listener4(net);
	CHECK(l);
	for (uint32_t i = 0; i < N - 1; i++) {
		struct socktab_sock *c = child4(l, i);

		CHECK(c);
		CHECK_EQ(socktab_set_state(c, SOCKTAB_TCP_ESTABLISHED), 0);
		CHECK_EQ(socktab_close(c), 0);
	}
	CHECK_EQ(stats(net).time_wait, N - 1);
	CHECK(stats(net).pool_socks <= 2 * (N - 1) + 1); /* freed children may be reused */
	CHECK_EQ(stats(net).pool_slabs, s0);
	socktab_net_free(net);
}

/* reserve_family: AF_INET6 reserves the IPv6 pools only; AF_UNSPEC both. */
TEST(reserve_family)
{
	struct socktab_net *net = reserved_net(1000, 1000, AF_INET6);
	struct socktab_sock *a, *b;
	uint64_t s0;

	CHECK(net);
	s0 = stats(net).pool_slabs;
	CHECK_EQ(s0, 2); /* one slab of sockets, one of entries */
	a = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK(a);
	CHECK_EQ(stats(net).pool_slabs, s0);
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(b);
	CHECK_EQ(stats(net).pool_slabs, s0 + 1);
	socktab_net_free(net);

	net = reserved_net(1000, 1000, AF_UNSPEC);
	CHECK(net);
	CHECK_EQ(stats(net).pool_slabs, 4);
	CHECK(socktab_socket(net, SOCKTAB_TCP, AF_INET));
	CHECK(socktab_socket(net, SOCKTAB_TCP, AF_INET6));
	CHECK_EQ(stats(net).pool_slabs, 4);
	socktab_net_free(net);

	/* A family with nothing to reserve reserves nothing. */
	net = reserved_net(0, 0, AF_UNSPEC);
	CHECK(net);
	CHECK_EQ(stats(net).pool_slabs, 0);
	socktab_net_free(net);
}

/*
 * ehash of the default size (0 or 65536) grows to the power of two at or above the reserved
 * sockets and entries of every reserved family; a size the caller chose is kept.
 */
TEST(reserve_sizes_ehash)
{
	struct socktab_net_params p;
	struct socktab_net *net;

	net = reserved_net(100000, 50000, AF_INET);
	CHECK(net);
	CHECK_EQ(stats(net).ehash_slots, 262144);
	socktab_net_free(net);

	net = reserved_net(100000, 50000, AF_UNSPEC); /* 300,000 */
	CHECK(net);
	CHECK_EQ(stats(net).ehash_slots, 524288);
	socktab_net_free(net);

	net = reserved_net(1000, 1000, AF_INET); /* below the default */
	CHECK(net);
	CHECK_EQ(stats(net).ehash_slots, 65536);
	socktab_net_free(net);

	socktab_net_params_init(&p);
	p.reserve_socks = 100000;
	p.ehash_entries = 0;
	net = socktab_net_new(&p);
	CHECK(net);
	CHECK_EQ(stats(net).ehash_slots, 262144); /* AF_UNSPEC: 2 x 100,000 */
	socktab_net_free(net);

	p.ehash_entries = 1000;
	net = socktab_net_new(&p);
	CHECK(net);
	CHECK_EQ(stats(net).ehash_slots, 1024);
	socktab_net_free(net);
}

/* Out-of-range reservations are EINVAL; nothing is created. */
TEST(reserve_bad_params)
{
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	CHECK_EQ(p.reserve_socks, 0);
	CHECK_EQ(p.reserve_tw, 0);
	CHECK_EQ(p.reserve_family, AF_UNSPEC);
	p.reserve_socks = (1u << 24) + 1;
	errno = 0;
	CHECK(!socktab_net_new(&p));
	CHECK_EQ(errno, EINVAL);
	socktab_net_params_init(&p);
	p.reserve_tw = UINT32_MAX;
	errno = 0;
	CHECK(!socktab_net_new(&p));
	CHECK_EQ(errno, EINVAL);
	socktab_net_params_init(&p);
	p.reserve_socks = 1;
	p.reserve_family = AF_UNIX;
	errno = 0;
	CHECK(!socktab_net_new(&p));
	CHECK_EQ(errno, EINVAL);
}

/*
 * Table sizes of 0 mean the default (socktab/net.h): socktab_net_new() accepts them and the
 * tables get the default sizes, exactly as with the values socktab_net_params_init() writes.
 */
TEST(zero_sizes_are_defaults)
{
	struct socktab_net_params p;
	struct socktab_udp_stats us;
	struct socktab_net *net;

	socktab_net_params_init(&p);
	CHECK_EQ(p.ehash_entries, 65536);
	p.ehash_entries = 0;
	p.ehash_locks = 0;
	p.bhash_entries = 0;
	p.udp_hash_entries = 0;
	errno = 0;
	net = socktab_net_new(&p);
	CHECK(net);
	CHECK_EQ(stats(net).ehash_slots, 65536);
	CHECK_EQ(socktab_udp_stats(net, &us), 0);
	CHECK_EQ(us.slots, 16384);
	socktab_net_free(net);
	/* Each size alone, too. */
	for (int i = 0; i < 4; i++) {
		socktab_net_params_init(&p);
		if (i == 0)
			p.ehash_entries = 0;
		else if (i == 1)
			p.ehash_locks = 0;
		else if (i == 2)
			p.bhash_entries = 0;
		else
			p.udp_hash_entries = 0;
		net = socktab_net_new(&p);
		CHECK(net);
		CHECK_EQ(stats(net).ehash_slots, 65536);
		socktab_net_free(net);
	}
}

CHECK_MAIN(reserve_socks_no_slab, reserve_tw_no_slab, reserve_family, reserve_sizes_ehash,
	   reserve_bad_params, zero_sizes_are_defaults)
