/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A QUIC-style server on socktab's two programmable hooks.
 *
 * The reuseport selector: four worker sockets share 127.0.0.1:4433; a classic BPF program
 * (SO_ATTACH_REUSEPORT_CBPF) reads the worker's number from the connection ID in each datagram
 * (byte 1, the first byte of a short-header packet's destination connection ID), so a client
 * that changes address or port still reaches its worker. Each worker has a stable member id
 * (SOCKTAB_SO_REUSEPORT_ID) equal to that number, so when a worker restarts (closes, and a new
 * socket joins with its id) the other workers keep their connections: Linux would move its last
 * member into the leaver's place, and with it that member's connections.
 *
 * The dispatch hook (socktab_sk_lookup_attach, Linux's sk_lookup): UDP datagrams to any port of
 * 4400-4499 go to the worker group (the selector still picks the worker), TCP connections to any
 * port of 8000-8999 go to one listener on port 8000 (with NO_REUSEPORT), and a second callback,
 * chained after the first, drops UDP to 5000-5099. Every other packet passes to the tables.
 * The program checks each outcome and exits 1 if one is wrong.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* SO_REUSEPORT and SO_ATTACH_REUSEPORT_CBPF under -std=c11 */
#endif
#include <arpa/inet.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <stdio.h>

#include <socktab/socktab.h>

#define WORKERS 4

struct dispatch {
	struct socktab_sock *workers;  /* any member of the worker group */
	struct socktab_sock *web;      /* the listener for 8000-8999 */
};

/* The first callback: port ranges to sockets. */
static int by_port(struct socktab_sk_lookup *ctx, void *arg)
{
	struct dispatch *d = arg;

	if (ctx->protocol == SOCKTAB_UDP && ctx->local_port >= 4400 && ctx->local_port <= 4499)
		socktab_sk_lookup_assign(ctx, d->workers, 0);
	else if (ctx->protocol == SOCKTAB_TCP && ctx->local_port >= 8000 && ctx->local_port <= 8999)
		socktab_sk_lookup_assign(ctx, d->web, SOCKTAB_SK_LOOKUP_F_NO_REUSEPORT);
	return SOCKTAB_SK_PASS;
}

/* The second: a range that takes nothing. */
static int drop_range(struct socktab_sk_lookup *ctx, void *arg)
{
	(void)arg;
	if (ctx->protocol == SOCKTAB_UDP && ctx->local_port >= 5000 && ctx->local_port <= 5099)
		return SOCKTAB_SK_DROP;
	return SOCKTAB_SK_PASS;
}

static struct socktab_sock *worker_new(struct socktab_net *net, int id)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(4433),
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	int one = 1;

	if (!sk || socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    socktab_setsockopt(sk, SOCKTAB_SOL, SOCKTAB_SO_REUSEPORT_ID, &id, sizeof(id)) ||
	    socktab_bind(sk, (struct sockaddr *)&addr, sizeof(addr))) {
		fprintf(stderr, "worker %d: setup failed\n", id);
		return NULL;
	}
	return sk;
}

/* The socket a datagram of connection @conn (seen from client port @cport) to @port reaches. */
static struct socktab_sock *datagram(struct socktab_net *net, int conn, int cport, int port)
{
	unsigned char pkt[9] = { 0x40, (unsigned char)(conn * 7 + 3), 0x11, 0x22, 0x33,
				 0x44, 0x55, 0x66, 0x77 };
	struct socktab_sock *sk;

	/* The bytes past the UDP header of the datagram the next lookup is for. */
	socktab_set_rx_payload(pkt, sizeof(pkt));
	sk = socktab_lookup_udp4(net, htonl(0xc0000201 + cport % 3), /* 192.0.2.x */
				 htons((uint16_t)(50000 + cport)), htonl(INADDR_LOOPBACK),
				 htons((uint16_t)port), SOCKTAB_LOOPBACK_IFINDEX, 0);
	socktab_set_rx_payload(NULL, 0);
	socktab_sock_put(sk);
	return sk;
}

static int worker_of(int conn)
{
	return (conn * 7 + 3) % WORKERS;
}

int main(void)
{
	/* A = payload[1]; A %= WORKERS; return A: the worker the connection ID names. */
	struct sock_filter code[] = {
		{ BPF_LD | BPF_B | BPF_ABS, 0, 0, 1 },
		{ BPF_ALU | BPF_MOD | BPF_K, 0, 0, WORKERS },
		{ BPF_RET | BPF_A, 0, 0, 0 },
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };
	struct sockaddr_in web_addr = { .sin_family = AF_INET, .sin_port = htons(8000),
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct socktab_sock *worker[WORKERS], *sk;
	struct dispatch d;
	struct socktab_net *net;
	int right = 0, total = 0, id1, id2;
	uint64_t gen_before, gen_after;
	socklen_t glen = sizeof(uint64_t);

	socktab_thread_register();
	net = socktab_net_new(NULL);
	if (!net) {
		perror("socktab_net_new");
		return 1;
	}
	/* Joined in reverse order: their ids, not their join order, name them. */
	for (int i = WORKERS - 1; i >= 0; i--)
		if (!(worker[i] = worker_new(net, i)))
			return 1;
	if (socktab_setsockopt(worker[0], SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog,
			       sizeof(prog))) {
		fprintf(stderr, "SO_ATTACH_REUSEPORT_CBPF failed\n");
		return 1;
	}
	d.workers = worker[0];
	d.web = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	if (!d.web || socktab_bind(d.web, (struct sockaddr *)&web_addr, sizeof(web_addr)) ||
	    socktab_listen(d.web, 128)) {
		fprintf(stderr, "listener setup failed\n");
		return 1;
	}
	id1 = socktab_sk_lookup_attach(net, by_port, &d);
	id2 = socktab_sk_lookup_attach(net, drop_range, NULL);
	if (id1 < 0 || id2 < 0) {
		fprintf(stderr, "socktab_sk_lookup_attach: %d %d\n", id1, id2);
		return 1;
	}

	/* 64 connections, each from 8 client ports, to 4433 and to two ports of the range. */
	for (int conn = 0; conn < 64; conn++)
		for (int cport = 0; cport < 8; cport++) {
			int port = cport < 4 ? 4433 : 4400 + conn;

			right += datagram(net, conn, conn * 8 + cport, port) ==
				 worker[worker_of(conn)];
			total++;
		}
	printf("%d of %d datagrams reached the worker of their connection ID\n", right, total);

	/* A restart of worker 2: every other worker keeps its connections. */
	socktab_getsockopt(worker[1], SOCKTAB_SOL, SOCKTAB_SO_REUSEPORT_GEN, &gen_before, &glen);
	socktab_close(worker[2]);
	if (!(worker[2] = worker_new(net, 2)))
		return 1;
	glen = sizeof(uint64_t);
	socktab_getsockopt(worker[1], SOCKTAB_SOL, SOCKTAB_SO_REUSEPORT_GEN, &gen_after, &glen);
	int kept = 0, conns = 0;

	for (int conn = 0; conn < 64; conn++) {
		kept += datagram(net, conn, conn * 8, 4433) == worker[worker_of(conn)];
		conns++;
	}
	printf("after worker 2 restarted: %d of %d connections at their worker, group generation "
	       "%llu -> %llu\n", kept, conns, (unsigned long long)gen_before,
	       (unsigned long long)gen_after);

	/* TCP: the whole 8000-8999 range to one listener; a port outside it finds none. */
	int tcp_ok = 0;

	for (int port = 8000; port < 9000; port += 37) {
		sk = socktab_lookup_tcp4(net, htonl(0xc0000201), htons(40000),
					 htonl(INADDR_LOOPBACK), htons((uint16_t)port),
					 SOCKTAB_LOOPBACK_IFINDEX, 0);
		tcp_ok += sk == d.web;
		socktab_sock_put(sk);
	}
	sk = socktab_lookup_tcp4(net, htonl(0xc0000201), htons(40000), htonl(INADDR_LOOPBACK),
				 htons(9000), SOCKTAB_LOOPBACK_IFINDEX, 0);
	printf("TCP: %d of 28 ports in 8000-8999 reached the listener; port 9000: %s\n", tcp_ok,
	       sk ? "a socket" : "none");
	socktab_sock_put(sk);
	bool none9000 = sk == NULL;

	/* The chained drop, and a port neither callback names. */
	bool dropped = datagram(net, 0, 0, 5050) == NULL;
	bool passed = datagram(net, 0, 0, 6000) == NULL; /* nothing bound there */

	printf("UDP 5050 dropped: %s; UDP 6000 passed to the tables: %s\n", dropped ? "yes" : "no",
	       passed ? "yes" : "no");

	socktab_sk_lookup_detach(net, id2);
	socktab_sk_lookup_detach(net, id1);
	for (int i = 0; i < WORKERS; i++)
		socktab_close(worker[i]);
	socktab_close(d.web);
	socktab_net_free(net);
	socktab_thread_unregister();
	return right == total && kept == conns && gen_after > gen_before && tcp_ok == 28 &&
			       none9000 && dropped && passed
		       ? 0
		       : 1;
}
