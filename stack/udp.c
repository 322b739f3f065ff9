/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UDP. A datagram is checked, socktab finds its socket (lk_udp: the 4-tuple hash of connected
 * sockets, then the scored address and port chains), the application answers, and
 * socktab_udp_sendto() gives the reply's source and destination as the kernel's sendto() would
 * choose them. A datagram no socket takes gets an ICMP port unreachable.
 *
 * --udp-connect-per-peer does what a QUIC server does: the first datagram from a new peer makes
 * a socket bound to the same address and port (SO_REUSEADDR and SO_REUSEPORT on every socket of
 * the port) and connected to that peer. socktab puts a connected socket with a specific local
 * address into its 4-tuple hash, so the peer's later datagrams find it in one short chain
 * instead of scoring every socket of the port.
 */
#include <string.h>

#include "stack.h"

static int on = 1;

static socklen_t salen(int family)
{
	return family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

/* SO_REUSEADDR and SO_REUSEPORT: every socket of a port served per peer has both. */
static int set_reuse(struct socktab_sock *sk)
{
	int err = socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));

	return err ? err : socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on));
}

/* A socket bound to our address and @port, for @app; with --udp-connect-per-peer it lets the
 * per-peer sockets share its port. */
int udp_server_open(struct stack *st, int family, int port, int app)
{
	struct socktab_sock *sk = socktab_socket(st->net, SOCKTAB_UDP, family);
	union st_addr a;
	struct sockaddr_storage ss;
	struct conn *u;
	int err;

	if (!sk)
		return -1;
	if (family == AF_INET)
		a.v4 = st->cfg.addr4;
	else
		a.v6 = st->cfg.addr6;
	sockaddr_make(&ss, family, &a, htons((uint16_t)port));
	err = family == AF_INET6 ? socktab_setsockopt(sk, IPPROTO_IPV6, IPV6_V6ONLY, &on,
						       sizeof(on)) : 0;
	if (!err && st->cfg.udp_connect_per_peer)
		err = set_reuse(sk);
	if (!err)
		err = socktab_bind(sk, (struct sockaddr *)&ss, salen(family));
	if (err) {
		fprintf(stderr, "socktab serve: udp port %d: %s\n", port, strerror(-err));
		socktab_close(sk);
		return -1;
	}
	u = socktab_sock_priv(sk);
	u->kind = SK_UDP_SERVER;
	u->app = (uint8_t)app;
	u->sk = sk;
	return 0;
}

/* The connected socket for the peer of datagram @p (local side: the address and port it was
 * sent to), or NULL when it cannot be made (the reply then goes through the server socket). */
static struct socktab_sock *peer_socket(struct stack *st, const struct conn *server,
					const struct pkt *p, uint16_t sport, uint16_t dport)
{
	struct socktab_sock *sk;
	struct sockaddr_storage local, remote;
	struct conn *u;
	int err;

	if (st->n_udp_peers >= (uint32_t)st->cfg.udp_max_peers)
		return NULL;
	sk = socktab_socket(st->net, SOCKTAB_UDP, p->family);
	if (!sk)
		return NULL;
	sockaddr_make(&local, p->family, &p->dst, dport);
	sockaddr_make(&remote, p->family, &p->src, sport);
	err = set_reuse(sk);
	if (!err && p->family == AF_INET6)
		err = socktab_setsockopt(sk, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
	if (!err)
		err = socktab_bind(sk, (struct sockaddr *)&local, salen(p->family));
	if (!err)
		err = socktab_connect(sk, (struct sockaddr *)&remote, salen(p->family));
	if (err) {
		socktab_close(sk);
		return NULL;
	}
	u = socktab_sock_priv(sk);
	u->kind = SK_UDP_PEER;
	u->app = server->app;
	u->sk = sk;
	st->n_udp_peers++;
	st->c.udp_connected_socks++;
	return sk;
}

/* Send @len bytes (already at st->tx + IP header + 8) from socket @sk to @dst (NULL: its
 * connected peer). socktab_udp_sendto() autobinds if needed and says which source the kernel
 * would use; we only build the packet. */
static void udp_send(struct stack *st, struct socktab_sock *sk, const struct sockaddr *dst,
		     size_t len)
{
	struct sockaddr_storage src, to;
	union st_addr s, d;
	uint16_t sport, dport;
	int family = socktab_sock_family(sk);
	uint8_t *u = st->tx + ip_hdr_len(family);

	if (socktab_udp_sendto(sk, dst, dst ? salen(family) : 0, &src, &to))
		return;
	if (family == AF_INET) {
		s.v4 = ((struct sockaddr_in *)&src)->sin_addr;
		d.v4 = ((struct sockaddr_in *)&to)->sin_addr;
		sport = ((struct sockaddr_in *)&src)->sin_port;
		dport = ((struct sockaddr_in *)&to)->sin_port;
	} else {
		s.v6 = ((struct sockaddr_in6 *)&src)->sin6_addr;
		d.v6 = ((struct sockaddr_in6 *)&to)->sin6_addr;
		sport = ((struct sockaddr_in6 *)&src)->sin6_port;
		dport = ((struct sockaddr_in6 *)&to)->sin6_port;
	}
	memcpy(u, &sport, 2);
	memcpy(u + 2, &dport, 2);
	u[4] = (uint8_t)((len + 8) >> 8);
	u[5] = (uint8_t)(len + 8);
	u[6] = u[7] = 0;
	uint16_t ck = csum_fold(csum_add(csum_pseudo(family, &s, &d, IPPROTO_UDP, len + 8), u,
					 len + 8));

	if (!ck) /* 0 means "no checksum": send its other form */
		ck = 0xffff;
	u[6] = (uint8_t)(ck >> 8);
	u[7] = (uint8_t)ck;
	ip_output(st, family, &s, &d, IPPROTO_UDP, len + 8);
	st->c.udp_tx++;
}

void udp_input(struct stack *st, const struct pkt *p)
{
	const uint8_t *u = p->l4;
	size_t ulen, hl = ip_hdr_len(p->family), n;
	uint16_t sport, dport;
	struct socktab_sock *sk, *peer = NULL;
	struct sockaddr_storage from;
	struct conn *c;

	if (p->l4_len < 8)
		goto invalid;
	ulen = (size_t)(u[4] << 8 | u[5]);
	if (ulen < 8 || ulen > p->l4_len)
		goto invalid;
	/* A zero checksum is "none" in IPv4 and forbidden in IPv6 (RFC 8200 8.1). */
	if ((u[6] | u[7]) || p->family == AF_INET6) {
		if (csum_fold(csum_add(csum_pseudo(p->family, &p->src, &p->dst, IPPROTO_UDP, ulen),
				       u, ulen)) != 0)
			goto invalid;
	}
	memcpy(&sport, u, 2);
	memcpy(&dport, u + 2, 2);
	sk = lk_udp(st, p, sport, dport);
	if (!sk) {
		st->c.udp_noport++;
		icmp_port_unreach(st, p);
		return;
	}
	st->c.udp_rx++;
	c = socktab_sock_priv(sk);
	if (c && (c->kind == SK_UDP_SERVER || c->kind == SK_UDP_PEER) &&
	    ulen - 8 <= ST_MTU - hl - 8) {
		n = app_udp(c->app, u + 8, ulen - 8, st->tx + hl + 8);
		if (c->kind == SK_UDP_SERVER && st->cfg.udp_connect_per_peer)
			peer = peer_socket(st, c, p, sport, dport);
		sockaddr_make(&from, p->family, &p->src, sport);
		if (n && peer)
			udp_send(st, peer, NULL, n);
		else if (n)
			udp_send(st, sk, (struct sockaddr *)&from, n);
	}
	lk_put(st, sk);
	return;
invalid:
	st->c.rx_invalid++;
}
