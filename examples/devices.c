/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A stack with two interfaces, as a load balancer or a NAT gateway has them: it declares its
 * devices and addresses, binds 192.0.2.10:80 on one device and runs a listener per device on
 * that port, opens 50,000 connections from its other address toward three backends, and looks
 * every segment up with the device it arrived on. Prints what it checked; exits nonzero if
 * any lookup returned the wrong socket.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

#include <socktab/socktab.h>

#define NCONN 50000

static struct sockaddr_in sin4(const char *ip, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

/*
 * A TCP socket bound to device @dev and to @ip:@port. Port 0 leaves the port to connect()
 * (IP_BIND_ADDRESS_NO_PORT), which picks one per destination instead of one per socket.
 */
static struct socktab_sock *tcp_on(struct socktab_net *net, int dev, const char *ip, int port)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct sockaddr_in a = sin4(ip, port);
	int one = 1;

	if (!sk)
		return NULL;
	if (socktab_setsockopt(sk, SOL_SOCKET, SO_BINDTOIFINDEX, &dev, sizeof(dev)) ||
	    (!port &&
	     socktab_setsockopt(sk, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one))) ||
	    socktab_bind(sk, (struct sockaddr *)&a, sizeof(a))) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

int main(void)
{
	const char *backend[3] = { "192.0.2.80", "192.0.2.81", "192.0.2.82" };
	static struct socktab_sock *conn[NCONN];
	struct socktab_sock *ln[2], *hit;
	struct socktab_net_params p;
	struct socktab_net *net;
	struct in_addr a;
	int dev[2], bad = 0;

	socktab_thread_register();
	socktab_net_params_init(&p);
	p.ehash_entries = 1 << 17;
	p.port_low = 10000; /* a wide ephemeral range: 50,000 connections from one address */
	p.port_high = 65000;
	net = socktab_net_new(&p);
	if (!net) {
		perror("socktab_net_new");
		return 1;
	}
	/* eth0 faces the clients (192.0.2.10/24), eth1 the backends (198.51.100.7/24). */
	dev[0] = socktab_dev_add(net, "eth0", 1);
	dev[1] = socktab_dev_add(net, "eth1", 1);
	inet_pton(AF_INET, "192.0.2.10", &a);
	if (dev[0] < 0 || dev[1] < 0 || socktab_addr_add(net, dev[0], AF_INET, &a, 24))
		return 1;
	inet_pton(AF_INET, "198.51.100.7", &a);
	if (socktab_addr_add(net, dev[1], AF_INET, &a, 24))
		return 1;
	/* One listener per device on port 80: the service's address on eth0, any address on
	 * eth1. Their devices do not overlap, so the same port binds twice. */
	ln[0] = tcp_on(net, dev[0], "192.0.2.10", 80);
	ln[1] = tcp_on(net, dev[1], "0.0.0.0", 80);
	if (!ln[0] || !ln[1] || socktab_listen(ln[0], 128) || socktab_listen(ln[1], 128)) {
		fprintf(stderr, "devices: listeners failed\n");
		return 1;
	}
	printf("listeners: 192.0.2.10:80 on eth0, *:80 on eth1\n");
	/* A SYN reaches the listener of the device it arrived on, and only that one. */
	for (int i = 0; i < 2; i++) {
		const char *dst = i == 0 ? "192.0.2.10" : "198.51.100.7";
		struct sockaddr_in c = sin4("203.0.113.5", 40000), d = sin4(dst, 80);

		hit = socktab_lookup_tcp4(net, c.sin_addr.s_addr, c.sin_port, d.sin_addr.s_addr,
					  d.sin_port, dev[i], 0);
		bad += hit != ln[i];
		socktab_sock_put(hit);
	}
	/* eth0's listener is bound to 192.0.2.10: a SYN for eth1's address arriving on eth0
	 * finds nothing (eth1's wildcard listener takes only eth1's traffic). */
	{
		struct sockaddr_in c = sin4("203.0.113.5", 40000), d = sin4("198.51.100.7", 80);

		hit = socktab_lookup_tcp4(net, c.sin_addr.s_addr, c.sin_port, d.sin_addr.s_addr,
					  d.sin_port, dev[0], 0);
		bad += hit != NULL;
		socktab_sock_put(hit);
	}
	printf("a SYN to port 80 reaches the listener of its ingress device only: %s\n",
	       bad ? "NO" : "yes");

	/* 50,000 connections from 198.51.100.7 (eth1) toward three backends on port 443. The
	 * backends sit behind eth1: the socket is bound to it, so the route is on-link there. */
	for (int i = 0; i < NCONN; i++) {
		struct sockaddr_in to = sin4(backend[i % 3], 443);

		conn[i] = tcp_on(net, dev[1], "198.51.100.7", 0);
		if (!conn[i] || socktab_connect(conn[i], (struct sockaddr *)&to, sizeof(to))) {
			fprintf(stderr, "devices: connect %d failed\n", i);
			return 1;
		}
	}
	printf("connected %d sockets from 198.51.100.7 to 3 backends\n", NCONN);
	/* Each backend's reply, arriving on eth1, finds its connection. */
	int wrong = 0;

	for (int i = 0; i < NCONN; i++) {
		struct sockaddr_in me, peer;
		socklen_t len = sizeof(me);

		socktab_getsockname(conn[i], (struct sockaddr *)&me, &len);
		len = sizeof(peer);
		socktab_sock_peer(conn[i], (struct sockaddr *)&peer, &len);
		hit = socktab_lookup_tcp4(net, peer.sin_addr.s_addr, peer.sin_port,
					  me.sin_addr.s_addr, me.sin_port, dev[1], 0);
		wrong += hit != conn[i];
		socktab_sock_put(hit);
	}
	printf("lookups with the ingress device: %d of %d right\n", NCONN - wrong, NCONN);
	bad += wrong;
	socktab_net_free(net);
	socktab_thread_unregister();
	return bad ? 1 : 0;
}
