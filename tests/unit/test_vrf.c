/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * VRF (L3 master devices, R97-R99). These rules come from the kernel source
 * (inet_sk_bound_l3mdev, inet_bind_bucket_match, inet_bound_dev_eq, l3mdev_fib_table); the
 * reference kernel has no VRF support, so no live kernel checked them. Setup: a VRF "blue"
 * (table 10) with device d0 (192.0.2.1/24, 2001:db8::1/64) enslaved to it.
 */
#include "check.h"

struct vrfnet {
	struct socktab_net *net;
	int vrf, d0;
};

static int vrf_setup(struct vrfnet *v, int tcp_accept, int udp_accept)
{
	uint32_t a = check_ip4("192.0.2.1");
	struct in6_addr a6;

	inet_pton(AF_INET6, "2001:db8::1", &a6);
	v->net = socktab_net_new(NULL);
	if (!v->net)
		return -ENOMEM;
	if (socktab_net_sysctl(v->net, "net.ipv4.tcp_l3mdev_accept", tcp_accept ? "1" : "0") ||
	    socktab_net_sysctl(v->net, "net.ipv4.udp_l3mdev_accept", udp_accept ? "1" : "0"))
		return -EINVAL;
	v->vrf = socktab_dev_add_vrf(v->net, "blue", 10, 1);
	v->d0 = socktab_dev_add(v->net, "d0", 1);
	if (v->vrf < 0 || v->d0 < 0 || socktab_dev_set_master(v->net, v->d0, v->vrf))
		return -EINVAL;
	if (socktab_addr_add(v->net, v->d0, AF_INET, &a, 24) ||
	    socktab_addr_add(v->net, v->d0, AF_INET6, &a6, 64))
		return -EINVAL;
	return 0;
}

static struct socktab_sock *sock_on(struct socktab_net *net, int proto, int dev)
{
	struct socktab_sock *s = socktab_socket(net, proto, AF_INET);

	if (s && dev && check_setint(s, SOL_SOCKET, SO_BINDTOIFINDEX, dev)) {
		socktab_close(s);
		return NULL;
	}
	return s;
}

TEST(vrf_devices)
{
	struct vrfnet v;

	CHECK_EQ(vrf_setup(&v, 0, 0), 0);
	CHECK_EQ(socktab_dev_flags(v.net, v.vrf), SOCKTAB_DEV_VRF | SOCKTAB_DEV_UP);
	CHECK_EQ(socktab_dev_master(v.net, v.d0), v.vrf);
	CHECK_EQ(socktab_dev_master(v.net, v.vrf), v.vrf);
	CHECK_EQ(socktab_dev_master(v.net, SOCKTAB_LOOPBACK_IFINDEX), 0);
	CHECK_EQ(socktab_dev_set_master(v.net, v.vrf, v.vrf), -EINVAL); /* a VRF in a VRF */
	CHECK_EQ(socktab_dev_set_master(v.net, v.d0, SOCKTAB_LOOPBACK_IFINDEX), -EINVAL);
	/* Deleting the VRF releases its slave. */
	CHECK_EQ(socktab_dev_del(v.net, v.vrf), 0);
	CHECK_EQ(socktab_dev_master(v.net, v.d0), 0);
	socktab_net_free(v.net);
}

/* R97: the VRF's addresses are local for sockets in the VRF only. */
TEST(vrf_address_validity)
{
	struct vrfnet v;
	struct socktab_sock *s;

	CHECK_EQ(vrf_setup(&v, 0, 0), 0);
	s = sock_on(v.net, SOCKTAB_TCP, 0);
	CHECK_EQ(check_bind4(s, "192.0.2.1", 80), -EADDRNOTAVAIL);
	socktab_close(s);
	s = sock_on(v.net, SOCKTAB_TCP, v.vrf);
	CHECK_EQ(check_bind4(s, "192.0.2.1", 80), 0);
	socktab_close(s);
	s = sock_on(v.net, SOCKTAB_TCP, v.d0);
	CHECK_EQ(check_bind4(s, "192.0.2.1", 81), 0);
	socktab_close(s);
	/* IPv6: the address is in another L3 domain than an unbound socket's. */
	s = socktab_socket(v.net, SOCKTAB_TCP, AF_INET6);
	CHECK_EQ(check_bind6(s, "2001:db8::1", 80), -EADDRNOTAVAIL);
	socktab_close(s);
	s = socktab_socket(v.net, SOCKTAB_TCP, AF_INET6);
	CHECK_EQ(check_setint(s, SOL_SOCKET, SO_BINDTOIFINDEX, v.vrf), 0);
	CHECK_EQ(check_bind6(s, "2001:db8::1", 80), 0);
	socktab_close(s);
	socktab_net_free(v.net);
}

/* R98: one port binds in the default domain and in the VRF, unless tcp_l3mdev_accept puts
 * everything in one domain. UDP has no domains: device overlap decides. */
TEST(vrf_bind_buckets)
{
	for (int accept = 0; accept <= 1; accept++) {
		struct vrfnet v;
		struct socktab_sock *a, *b, *ua, *ub;

		CHECK_EQ(vrf_setup(&v, accept, 0), 0);
		a = sock_on(v.net, SOCKTAB_TCP, 0);
		b = sock_on(v.net, SOCKTAB_TCP, v.vrf);
		CHECK_EQ(check_bind4(a, "0.0.0.0", 80), 0);
		CHECK_EQ(check_bind4(b, "0.0.0.0", 80), accept ? -EADDRINUSE : 0);
		if (!accept) {
			CHECK_EQ(socktab_listen(a, 8), 0);
			CHECK_EQ(socktab_listen(b, 8), 0);
		}
		ua = sock_on(v.net, SOCKTAB_UDP, 0);
		ub = sock_on(v.net, SOCKTAB_UDP, v.vrf);
		CHECK_EQ(check_bind4(ua, "0.0.0.0", 53), 0);
		CHECK_EQ(check_bind4(ub, "0.0.0.0", 53), -EADDRINUSE);
		socktab_net_free(v.net);
	}
}

/*
 * listen() re-validates the port in the socket's current domain (R46, R98): moving a bound
 * socket into the VRF (or switching tcp_l3mdev_accept) before listen() checks the VRF's
 * bucket, and the socket stays in its own. No bucket is left behind: after the close the
 * net has none (the kernel's inet_csk_get_port keeps one and warns).
 */
TEST(vrf_listen_after_domain_change)
{
	for (int how = 0; how < 2; how++) {
		struct socktab_net_stats st;
		struct vrfnet v;
		struct socktab_sock *s, *o;

		CHECK_EQ(vrf_setup(&v, 0, 0), 0);
		s = sock_on(v.net, SOCKTAB_TCP, how ? v.d0 : 0);
		CHECK_EQ(check_bind4(s, "0.0.0.0", 5000), 0);
		if (how)
			CHECK_EQ(socktab_net_sysctl(v.net, "net.ipv4.tcp_l3mdev_accept", "1"), 0);
		else
			CHECK_EQ(check_setint(s, SOL_SOCKET, SO_BINDTOIFINDEX, v.d0), 0);
		CHECK_EQ(socktab_listen(s, 8), 0);
		socktab_net_stats(v.net, &st);
		CHECK_EQ(st.bind_buckets, 1);
		if (!how) {
			/* Another socket of its first domain still meets it there. */
			o = sock_on(v.net, SOCKTAB_TCP, 0);
			CHECK_EQ(check_bind4(o, "0.0.0.0", 5000), -EADDRINUSE);
			socktab_close(o);
		}
		CHECK_EQ(socktab_close(s), 0);
		socktab_net_stats(v.net, &st);
		CHECK_EQ(st.bind_buckets, 0);
		socktab_net_free(v.net);
	}
}

/* R99: lookups of traffic arriving on the VRF's slave (dif = d0, sdif = blue). */
TEST(vrf_lookups)
{
	for (int accept = 0; accept <= 1; accept++) {
		struct vrfnet v;
		struct socktab_sock *plain, *invrf, *hit;
		uint32_t a = check_ip4("192.0.2.1"), peer = check_ip4("192.0.2.50");

		CHECK_EQ(vrf_setup(&v, accept, accept), 0);
		/* An unbound listener takes VRF traffic only with tcp_l3mdev_accept. */
		plain = sock_on(v.net, SOCKTAB_TCP, 0);
		CHECK_EQ(check_bind4(plain, "0.0.0.0", 80), 0);
		CHECK_EQ(socktab_listen(plain, 8), 0);
		hit = socktab_lookup_tcp4(v.net, peer, htons(999), a, htons(80), v.d0, v.vrf);
		CHECK(hit == (accept ? plain : NULL));
		socktab_sock_put(hit);
		/* Default-domain traffic (no sdif) still reaches it. */
		hit = socktab_lookup_tcp4(v.net, peer, htons(999), a, htons(80),
					  SOCKTAB_LOOPBACK_IFINDEX, 0);
		CHECK(hit == plain);
		socktab_sock_put(hit);
		/* A VRF-bound listener matches through sdif, and beats the unbound one (score). */
		invrf = sock_on(v.net, SOCKTAB_TCP, v.vrf);
		if (!accept) {
			CHECK_EQ(check_bind4(invrf, "0.0.0.0", 80), 0);
			CHECK_EQ(socktab_listen(invrf, 8), 0);
			hit = socktab_lookup_tcp4(v.net, peer, htons(999), a, htons(80), v.d0, v.vrf);
			CHECK(hit == invrf);
			socktab_sock_put(hit);
		}
		/* UDP: an unbound socket takes VRF datagrams only with udp_l3mdev_accept. */
		struct socktab_sock *u = sock_on(v.net, SOCKTAB_UDP, 0);

		CHECK_EQ(check_bind4(u, "0.0.0.0", 53), 0);
		hit = socktab_lookup_udp4(v.net, peer, htons(999), a, htons(53), v.d0, v.vrf);
		CHECK(hit == (accept ? u : NULL));
		socktab_sock_put(hit);
		socktab_net_free(v.net);
	}
}

/* R99: routes of a VRF-bound connect() come from the VRF's table; children of an unbound
 * listener join the VRF with tcp_l3mdev_accept (R94). */
TEST(vrf_connect_and_children)
{
	struct vrfnet v;
	struct socktab_sock *c, *ln, *child, *hit;
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	struct sockaddr_in l = check_sin("192.0.2.1", 80), r = check_sin("192.0.2.50", 4000);
	int dev;

	CHECK_EQ(vrf_setup(&v, 1, 0), 0);
	c = sock_on(v.net, SOCKTAB_TCP, 0);
	CHECK_EQ(check_connect4(c, "192.0.2.50", 80), -ENETUNREACH); /* not in the main table */
	socktab_close(c);
	c = sock_on(v.net, SOCKTAB_TCP, v.vrf);
	CHECK_EQ(check_connect4(c, "192.0.2.50", 80), 0);
	CHECK_EQ(socktab_getsockname(c, (struct sockaddr *)&me, &len), 0);
	CHECK_EQ(me.sin_addr.s_addr, check_ip4("192.0.2.1"));
	socktab_close(c);
	ln = sock_on(v.net, SOCKTAB_TCP, 0);
	CHECK_EQ(check_bind4(ln, "0.0.0.0", 80), 0);
	CHECK_EQ(socktab_listen(ln, 8), 0);
	child = socktab_sock_new_child(ln, (struct sockaddr *)&l, (struct sockaddr *)&r,
				       sizeof(l), v.d0, v.vrf);
	CHECK(child);
	len = sizeof(dev);
	CHECK_EQ(socktab_getsockopt(child, SOL_SOCKET, SO_BINDTOIFINDEX, &dev, &len), 0);
	CHECK_EQ(dev, v.vrf);
	socktab_set_state(child, SOCKTAB_TCP_ESTABLISHED);
	hit = socktab_lookup_tcp4(v.net, r.sin_addr.s_addr, r.sin_port, l.sin_addr.s_addr,
				  l.sin_port, v.d0, v.vrf);
	CHECK(hit == child);
	socktab_sock_put(hit);
	socktab_net_free(v.net);
}

CHECK_MAIN(vrf_devices, vrf_address_validity, vrf_bind_buckets, vrf_listen_after_domain_change,
	   vrf_lookups, vrf_connect_and_children)
