/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Devices, addresses and routes (socktab/dev.h, R83-R96, R101): the API's errors leave the
 * configuration exactly as it was (white-box: no new snapshot is published), the routes an
 * address implies, bind() against the address table, source selection, device binding and the
 * lookups that take the ingress device.
 */
#include "check.h"
#include "dev.h"

static int add4(struct socktab_net *net, int dev, const char *a, int plen)
{
	uint32_t v = check_ip4(a);

	return socktab_addr_add(net, dev, AF_INET, &v, plen);
}

static int del4(struct socktab_net *net, int dev, const char *a, int plen)
{
	uint32_t v = check_ip4(a);

	return socktab_addr_del(net, dev, AF_INET, &v, plen);
}

static int add6(struct socktab_net *net, int dev, const char *a, int plen)
{
	struct in6_addr v = check_ip6(a);

	return socktab_addr_add(net, dev, AF_INET6, &v, plen);
}

/* The configuration snapshot: the same pointer means nothing was published. */
static const void *snap(struct socktab_net *net)
{
	return atomic_load(&net->ifcfg);
}

/* Route type toward @a as seen without an output device, or a negative errno. */
static int rtype4(struct socktab_net *net, const char *a, int oif, char *src)
{
	struct socktab_route_result r;
	uint32_t d = check_ip4(a);
	int err = socktab_route_lookup(net, AF_INET, &d, oif, &r);

	if (err)
		return err;
	if (src)
		inet_ntop(AF_INET, &r.src.s6_addr32[3], src, INET_ADDRSTRLEN);
	return r.type;
}

TEST(dev_api_errors_change_nothing)
{
	struct socktab_net *net = socktab_net_new(NULL);
	const void *s0;
	int d0;
	uint32_t v = check_ip4("192.0.2.1"), mc = check_ip4("224.0.0.1"), zero = 0;
	struct in6_addr v6 = check_ip6("2001:db8::1"), mapped = check_ip6("::ffff:192.0.2.1");

	CHECK(net);
	CHECK_EQ(socktab_dev_index(net, "lo"), SOCKTAB_LOOPBACK_IFINDEX);
	d0 = socktab_dev_add(net, "d0", 1);
	CHECK_EQ(d0, 2);
	CHECK_EQ(add4(net, d0, "192.0.2.1", 24), 0);
	s0 = snap(net);
	/* names */
	CHECK_EQ(socktab_dev_add(net, "d0", 1), -EEXIST);
	CHECK_EQ(socktab_dev_add(net, "lo", 1), -EEXIST);
	/* The kernel's dev_valid_name(): empty, too long, "." and "..", '/', ':' and its white
	 * space, '\t' to '\r', ' ' and 0xa0 (lib/ctype.c). */
	static const char *const bad_names[] = {
		"", "0123456789abcdef", ".", "..", "a/b", "a:b", "a b", "a\tb", "a\nb", "a\vb",
		"a\fb", "a\rb", "a\240b", /* 0xa0 */
	};

	for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		int r = socktab_dev_add(net, bad_names[i], 1);

		if (r != -EINVAL)
			fprintf(stderr, "bad name %zu: %d\n", i, r);
		CHECK_EQ(r, -EINVAL);
	}
	CHECK_EQ(socktab_dev_add(NULL, "x", 1), -EINVAL);
	/* unknown devices, lo's protections */
	CHECK_EQ(socktab_dev_del(net, 99), -ENODEV);
	CHECK_EQ(socktab_dev_set_up(net, 99, 1), -ENODEV);
	CHECK_EQ(socktab_dev_del(net, SOCKTAB_LOOPBACK_IFINDEX), -EINVAL);
	CHECK_EQ(socktab_dev_set_up(net, SOCKTAB_LOOPBACK_IFINDEX, 0), -EINVAL);
	CHECK_EQ(socktab_addr_add(net, 99, AF_INET, &v, 24), -ENODEV);
	/* addresses: bad prefix lengths, families, addresses; duplicates; absent ones */
	CHECK_EQ(socktab_addr_add(net, d0, AF_INET, &v, 33), -EINVAL);
	CHECK_EQ(socktab_addr_add(net, d0, AF_INET, &v, -1), -EINVAL);
	CHECK_EQ(socktab_addr_add(net, d0, AF_INET6, &v6, 129), -EINVAL);
	CHECK_EQ(socktab_addr_add(net, d0, AF_UNIX, &v, 24), -EINVAL);
	CHECK_EQ(socktab_addr_add(net, d0, AF_INET, NULL, 24), -EINVAL);
	CHECK_EQ(socktab_addr_add(net, d0, AF_INET, &mc, 32), -EINVAL);
	CHECK_EQ(socktab_addr_add(net, d0, AF_INET, &zero, 8), -EINVAL);
	CHECK_EQ(socktab_addr_add(net, d0, AF_INET6, &mapped, 128), -EINVAL);
	CHECK_EQ(add4(net, d0, "192.0.2.1", 24), -EEXIST);
	CHECK_EQ(del4(net, d0, "192.0.2.1", 25), -EADDRNOTAVAIL);
	CHECK_EQ(del4(net, d0, "192.0.2.9", 24), -EADDRNOTAVAIL);
	CHECK_EQ(del4(net, SOCKTAB_LOOPBACK_IFINDEX, "192.0.2.1", 24), -EADDRNOTAVAIL);
	/* routes */
	CHECK_EQ(socktab_route_add(net, AF_INET, &v, 40, d0, NULL), -EINVAL);
	CHECK_EQ(socktab_route_add(net, AF_INET, &v, 24, 99, NULL), -ENODEV);
	CHECK_EQ(socktab_route_del(net, AF_INET, &v, 24, d0), -ESRCH);
	CHECK_EQ(socktab_dev_set_master(net, d0, SOCKTAB_LOOPBACK_IFINDEX), -EINVAL);
	CHECK_EQ(socktab_dev_set_master(net, d0, 99), -ENODEV);
	CHECK_EQ(socktab_dev_add_vrf(net, "v", 254, 1), -EINVAL);
	CHECK(snap(net) == s0);
	/* name <-> index */
	char name[SOCKTAB_IFNAMSIZ];

	CHECK_EQ(socktab_dev_name(net, d0, name, sizeof(name)), 0);
	CHECK(!strcmp(name, "d0"));
	CHECK_EQ(socktab_dev_name(net, d0, name, 2), -ENOSPC);
	CHECK_EQ(socktab_dev_name(net, 99, name, sizeof(name)), -ENODEV);
	CHECK_EQ(socktab_dev_index(net, "nope"), -ENODEV);
	CHECK_EQ(socktab_dev_flags(net, d0), SOCKTAB_DEV_UP);
	CHECK_EQ(socktab_dev_master(net, d0), 0);
	socktab_net_free(net);
}

/* R83: local, broadcast and connected routes; secondaries; deletion of a primary. */
TEST(dev_ipv4_routes)
{
	struct socktab_net *net = socktab_net_new(NULL);
	char src[INET_ADDRSTRLEN];
	int d0;

	CHECK(net);
	d0 = socktab_dev_add(net, "d0", 1);
	CHECK_EQ(add4(net, d0, "192.0.2.1", 24), 0);
	CHECK_EQ(add4(net, d0, "192.0.2.2", 24), 0); /* a secondary */
	CHECK_EQ(rtype4(net, "192.0.2.1", 0, src), SOCKTAB_RTN_LOCAL);
	CHECK(!strcmp(src, "192.0.2.1"));
	CHECK_EQ(rtype4(net, "192.0.2.2", 0, src), SOCKTAB_RTN_LOCAL);
	CHECK(!strcmp(src, "192.0.2.1")); /* a secondary's preferred source is its primary */
	CHECK_EQ(rtype4(net, "192.0.2.255", 0, NULL), SOCKTAB_RTN_BROADCAST);
	CHECK_EQ(rtype4(net, "192.0.2.77", 0, src), SOCKTAB_RTN_UNICAST);
	CHECK(!strcmp(src, "192.0.2.1"));
	CHECK_EQ(rtype4(net, "198.51.100.1", 0, NULL), -ENETUNREACH);
	CHECK_EQ(rtype4(net, "127.9.9.9", 0, NULL), SOCKTAB_RTN_LOCAL);
	/* Down: local routes stay, the connected and broadcast ones go. */
	CHECK_EQ(socktab_dev_set_up(net, d0, 0), 0);
	CHECK_EQ(rtype4(net, "192.0.2.1", 0, NULL), SOCKTAB_RTN_LOCAL);
	CHECK_EQ(rtype4(net, "192.0.2.77", 0, NULL), -ENETUNREACH);
	CHECK_EQ(socktab_dev_set_up(net, d0, 1), 0);
	CHECK_EQ(rtype4(net, "192.0.2.77", 0, NULL), SOCKTAB_RTN_UNICAST);
	/* Deleting the primary takes the secondary along. */
	CHECK_EQ(del4(net, d0, "192.0.2.1", 24), 0);
	CHECK_EQ(rtype4(net, "192.0.2.2", 0, NULL), -ENETUNREACH);
	/* A prefix on lo makes the whole prefix local. */
	CHECK_EQ(add4(net, SOCKTAB_LOOPBACK_IFINDEX, "203.0.113.1", 24), 0);
	CHECK_EQ(rtype4(net, "203.0.113.200", 0, NULL), SOCKTAB_RTN_LOCAL);
	/* User routes, and the device-bound lookup that assumes on-link. */
	uint32_t net198 = check_ip4("198.51.100.0");

	CHECK_EQ(add4(net, d0, "192.0.2.10", 24), 0);
	CHECK_EQ(socktab_route_add(net, AF_INET, &net198, 24, d0, NULL), 0);
	CHECK_EQ(socktab_route_add(net, AF_INET, &net198, 24, d0, NULL), -EEXIST);
	CHECK_EQ(rtype4(net, "198.51.100.7", 0, src), SOCKTAB_RTN_UNICAST);
	CHECK(!strcmp(src, "192.0.2.10"));
	CHECK_EQ(socktab_route_del(net, AF_INET, &net198, 24, d0), 0);
	CHECK_EQ(rtype4(net, "198.51.100.7", 0, NULL), -ENETUNREACH);
	CHECK_EQ(rtype4(net, "198.51.100.7", d0, src), SOCKTAB_RTN_UNICAST);
	CHECK(!strcmp(src, "192.0.2.10"));
	socktab_net_free(net);
}

/* R84: IPv6 addresses are exactly local; a device going down loses them for good. */
TEST(dev_ipv6_addresses)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_route_result r;
	struct in6_addr a = check_ip6("2001:db8::1"), n = check_ip6("2001:db8::2");
	int d0;

	CHECK(net);
	d0 = socktab_dev_add(net, "d0", 1);
	CHECK_EQ(add6(net, d0, "2001:db8::1", 64), 0);
	CHECK_EQ(add6(net, d0, "2001:db8::1", 64), -EEXIST);
	CHECK_EQ(socktab_route_lookup(net, AF_INET6, &a, 0, &r), 0);
	CHECK_EQ(r.type, SOCKTAB_RTN_LOCAL);
	CHECK_EQ(r.ifindex, d0);
	CHECK_EQ(socktab_route_lookup(net, AF_INET6, &n, 0, &r), 0);
	CHECK_EQ(r.type, SOCKTAB_RTN_UNICAST);
	CHECK(!memcmp(&r.src, &a, 16));
	/* Strict with an output device: ::1 is not reachable through d0. */
	struct in6_addr lo = check_ip6("::1");

	CHECK_EQ(socktab_route_lookup(net, AF_INET6, &lo, d0, &r), -ENETUNREACH);
	CHECK_EQ(socktab_dev_set_up(net, d0, 0), 0);
	CHECK_EQ(socktab_dev_set_up(net, d0, 1), 0);
	CHECK_EQ(socktab_route_lookup(net, AF_INET6, &a, 0, &r), -ENETUNREACH);
	socktab_net_free(net);
}

/* R85-R87: bind() against the addresses, and what lifts the check; R101: removal keeps
 * bound sockets. */
TEST(dev_bind_locality)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s, *t;
	int d0, one = 1;

	CHECK(net);
	d0 = socktab_dev_add(net, "d0", 1);
	s = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_bind4(s, "192.0.2.10", 80), -EADDRNOTAVAIL);
	CHECK_EQ(add4(net, d0, "192.0.2.10", 24), 0);
	CHECK_EQ(check_bind4(s, "192.0.2.10", 80), 0);
	t = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_bind4(t, "192.0.2.11", 80), -EADDRNOTAVAIL); /* a neighbour */
	CHECK_EQ(check_bind4(t, "192.0.2.0", 80), -EADDRNOTAVAIL);  /* the network address */
	CHECK_EQ(check_bind4(t, "192.0.2.255", 80), 0);             /* the subnet broadcast */
	socktab_close(t);
	t = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(socktab_setsockopt(t, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one)), 0);
	CHECK_EQ(check_bind4(t, "198.51.100.5", 80), 0);
	/* A non-local source cannot send (R88). */
	CHECK_EQ(check_connect4(t, "192.0.2.10", 80), -ENETUNREACH);
	socktab_close(t);
	t = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_nonlocal_bind", "1"), 0);
	CHECK_EQ(check_bind4(t, "198.51.100.6", 80), 0);
	socktab_close(t);
	/* Deleting the address keeps the bound socket; new binds fail. */
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_nonlocal_bind", "0"), 0);
	CHECK_EQ(del4(net, d0, "192.0.2.10", 24), 0);
	CHECK_EQ(check_port(s), 80);
	t = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_bind4(t, "192.0.2.10", 81), -EADDRNOTAVAIL);
	socktab_close(t);
	/* Deleting the device keeps the socket bound and listening. */
	CHECK_EQ(socktab_listen(s, 8), 0);
	CHECK_EQ(socktab_dev_del(net, d0), 0);
	CHECK_EQ(socktab_get_state(s), SOCKTAB_TCP_LISTEN);
	socktab_close(s);
	socktab_net_free(net);
}

/* R86, R96: link-local needs a scope, the scope binds the device; getsockname shows it. */
TEST(dev_ipv6_scope)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s;
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(80) };
	struct sockaddr_in6 got;
	socklen_t len = sizeof(got);
	int d0, d1, v = 0;

	CHECK(net);
	d0 = socktab_dev_add(net, "d0", 1);
	d1 = socktab_dev_add(net, "d1", 1);
	CHECK_EQ(add6(net, d0, "fe80::1", 64), 0);
	a.sin6_addr = check_ip6("fe80::1");
	s = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	CHECK_EQ(socktab_bind(s, (struct sockaddr *)&a, sizeof(a)), -EINVAL); /* no scope */
	a.sin6_scope_id = (uint32_t)d1;
	CHECK_EQ(socktab_bind(s, (struct sockaddr *)&a, sizeof(a)), -EADDRNOTAVAIL);
	len = sizeof(v);
	CHECK_EQ(socktab_getsockopt(s, SOL_SOCKET, SO_BINDTOIFINDEX, &v, &len), 0);
	CHECK_EQ(v, d1); /* the scope stuck although bind() failed */
	socktab_close(s);
	s = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	a.sin6_scope_id = (uint32_t)d0;
	CHECK_EQ(socktab_bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	len = sizeof(got);
	CHECK_EQ(socktab_getsockname(s, (struct sockaddr *)&got, &len), 0);
	CHECK_EQ(got.sin6_scope_id, d0);
	socktab_close(s);
	/* A scope naming no device. */
	s = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	a.sin6_scope_id = 99;
	CHECK_EQ(socktab_bind(s, (struct sockaddr *)&a, sizeof(a)), -ENODEV);
	socktab_close(s);
	socktab_net_free(net);
}

/* R89: SO_BINDTODEVICE / SO_BINDTOIFINDEX options. */
TEST(dev_bindtodevice_option)
{
	struct socktab_net_params p;
	struct socktab_net *net;
	struct socktab_sock *s;
	char name[32];
	socklen_t len;
	int d0, v, one = 1;

	socktab_net_params_init(&p);
	p.net_raw = 0; /* no CAP_NET_RAW */
	net = socktab_net_new(&p);
	CHECK(net);
	d0 = socktab_dev_add(net, "d0", 1);
	s = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	CHECK_EQ(socktab_setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, "nosuch", 6), -ENODEV);
	CHECK_EQ(socktab_setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, "d0", 2), 0);
	len = sizeof(name);
	CHECK_EQ(socktab_getsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, name, &len), 0);
	CHECK_EQ(len, 3);
	CHECK(!strcmp(name, "d0"));
	len = 8;
	CHECK_EQ(socktab_getsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, name, &len), -EINVAL);
	/* Changing a nonzero binding needs CAP_NET_RAW. */
	CHECK_EQ(socktab_setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, "lo", 2), -EPERM);
	CHECK_EQ(socktab_setsockopt(s, IPPROTO_IP, IP_TRANSPARENT, &one, sizeof(one)), -EPERM);
	/* A deleted device: the stale index stays; its name reads ENODEV. */
	CHECK_EQ(socktab_dev_del(net, d0), 0);
	len = sizeof(name);
	CHECK_EQ(socktab_getsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, name, &len), -ENODEV);
	len = sizeof(v);
	CHECK_EQ(socktab_getsockopt(s, SOL_SOCKET, SO_BINDTOIFINDEX, &v, &len), 0);
	CHECK_EQ(v, d0);
	socktab_close(s);
	s = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	v = -1;
	CHECK_EQ(socktab_setsockopt(s, SOL_SOCKET, SO_BINDTOIFINDEX, &v, sizeof(v)), -EINVAL);
	v = 999; /* no check that a device has it */
	CHECK_EQ(socktab_setsockopt(s, SOL_SOCKET, SO_BINDTOIFINDEX, &v, sizeof(v)), 0);
	CHECK_EQ(socktab_setsockopt(s, SOL_SOCKET, SO_BINDTOIFINDEX, &v, 2), -EINVAL);
	socktab_close(s);
	socktab_net_free(net);
}

/* R90: bind conflicts only between overlapping devices. */
TEST(dev_bind_conflicts)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a, *b, *c;
	int d0, d1;

	CHECK(net);
	d0 = socktab_dev_add(net, "d0", 1);
	d1 = socktab_dev_add(net, "d1", 1);
	a = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	c = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_setint(a, SOL_SOCKET, SO_BINDTOIFINDEX, d0), 0);
	CHECK_EQ(check_setint(b, SOL_SOCKET, SO_BINDTOIFINDEX, d1), 0);
	CHECK_EQ(check_bind4(a, "0.0.0.0", 80), 0);
	CHECK_EQ(check_bind4(b, "0.0.0.0", 80), 0);
	CHECK_EQ(socktab_listen(a, 8), 0);
	CHECK_EQ(socktab_listen(b, 8), 0);
	CHECK_EQ(check_bind4(c, "0.0.0.0", 80), -EADDRINUSE); /* unbound overlaps both */
	socktab_close(a);
	socktab_close(b);
	socktab_close(c);
	socktab_net_free(net);
}

/* The embedding of the README: a listener per device on one port, 50,000 connections from
 * one address toward three destinations, every 4-tuple found with its ingress device. */
TEST(dev_lookup_by_ingress)
{
	struct socktab_net_params p;
	struct socktab_net *net;
	struct socktab_sock *ln[2], *hit;
	static struct socktab_sock *conn[50000];
	const char *dst[3] = { "192.0.2.80", "192.0.2.81", "203.0.113.9" };
	int dev[2], n = 0;

	socktab_net_params_init(&p);
	p.ehash_entries = 1 << 17;
	net = socktab_net_new(&p);
	CHECK(net);
	dev[0] = socktab_dev_add(net, "d0", 1);
	dev[1] = socktab_dev_add(net, "d1", 1);
	CHECK_EQ(add4(net, dev[0], "192.0.2.10", 24), 0);
	CHECK_EQ(add4(net, dev[1], "198.51.100.7", 24), 0);
	for (int i = 0; i < 2; i++) {
		ln[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_setint(ln[i], SOL_SOCKET, SO_BINDTOIFINDEX, dev[i]), 0);
		CHECK_EQ(check_bind4(ln[i], "0.0.0.0", 80), 0);
		CHECK_EQ(socktab_listen(ln[i], 128), 0);
	}
	/* A SYN to port 80 reaches the listener of the device it came in on. */
	for (int i = 0; i < 2; i++) {
		hit = socktab_lookup_tcp4(net, check_ip4("192.0.2.99"), htons(1234), check_ip4("192.0.2.10"),
					  htons(80), dev[i], 0);
		CHECK(hit == ln[i]);
		socktab_sock_put(hit);
	}
	hit = socktab_lookup_tcp4(net, check_ip4("127.0.0.1"), htons(1234), check_ip4("127.0.0.1"), htons(80),
				  SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(hit == NULL); /* loopback traffic: neither device's listener */
	/* 50,000 connections from 198.51.100.7 (bound there) toward three destinations. */
	CHECK_EQ(socktab_net_set_port_range(net, 10000, 65000), 0);
	for (int i = 0; i < 50000; i++) {
		struct sockaddr_in to = check_sin(dst[i % 3], 443);

		conn[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_setint(conn[i], SOL_SOCKET, SO_BINDTOIFINDEX, dev[1]), 0);
		CHECK_EQ(check_setint(conn[i], IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1), 0);
		CHECK_EQ(check_bind4(conn[i], "198.51.100.7", 0), 0);
		CHECK_EQ(socktab_connect(conn[i], (struct sockaddr *)&to, sizeof(to)), 0);
		n++;
	}
	for (int i = 0; i < n; i++) {
		int lport = check_port(conn[i]);

		hit = socktab_lookup_tcp4(net, check_ip4(dst[i % 3]), htons(443), check_ip4("198.51.100.7"),
					  htons((uint16_t)lport), dev[1], 0);
		CHECK(hit == conn[i]);
		socktab_sock_put(hit);
		/* the same tuple from the other device finds nothing */
		hit = socktab_lookup_established4(net, check_ip4(dst[i % 3]), htons(443),
						  check_ip4("198.51.100.7"), htons((uint16_t)lport),
						  dev[0], 0);
		CHECK(hit == NULL);
	}
	socktab_net_free(net);
}

/* A device made and deleted per session (a tun per client) leaves nothing behind: the table
 * does not grow, and indexes are never reused. */
TEST(dev_churn_leaves_no_entries)
{
	struct socktab_net *net = socktab_net_new(NULL);
	uint32_t ndev;
	int last = 0;

	CHECK(net);
	socktab_rcu_read_lock();
	ndev = socktab__ifcfg_rcu(net)->ndev;
	socktab_rcu_read_unlock();
	for (int i = 0; i < 2000; i++) {
		int d = socktab_dev_add(net, "tun0", 1);

		CHECK(d > last);
		last = d;
		CHECK_EQ(socktab_dev_del(net, d), 0);
		CHECK_EQ(socktab_dev_index(net, "tun0"), -ENODEV);
	}
	socktab_rcu_read_lock();
	CHECK_EQ(socktab__ifcfg_rcu(net)->ndev, ndev);
	socktab_rcu_read_unlock();
	socktab_net_free(net);
}

CHECK_MAIN(dev_churn_leaves_no_entries, dev_api_errors_change_nothing, dev_ipv4_routes, dev_ipv6_addresses, dev_bind_locality,
	   dev_ipv6_scope, dev_bindtodevice_option, dev_bind_conflicts, dev_lookup_by_ingress)
