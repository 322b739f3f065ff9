/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A QUIC-style reuseport selector: four worker sockets share 127.0.0.1:4433, and a classic BPF
 * program (SO_ATTACH_REUSEPORT_CBPF) sends each datagram to the worker its connection ID names.
 * A QUIC server puts the worker's number in the connection IDs it issues; here it is byte 1 of
 * the datagram (the first byte of a short-header packet's destination connection ID, after the
 * flags byte), taken modulo the number of workers. A client that changes its address or port
 * (NAT rebinding, migration) still reaches its worker, which the 4-tuple hash alone cannot do.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* SO_REUSEPORT and SO_ATTACH_REUSEPORT_CBPF under -std=c11 */
#endif
#include <arpa/inet.h>
#include <linux/filter.h>
#include <stdio.h>

#include <socktab/socktab.h>

#define WORKERS 4

int main(void)
{
	/* A = payload[1]; A %= WORKERS; return A. */
	struct sock_filter code[] = {
		{ BPF_LD | BPF_B | BPF_ABS, 0, 0, 1 },
		{ BPF_ALU | BPF_MOD | BPF_K, 0, 0, WORKERS },
		{ BPF_RET | BPF_A, 0, 0, 0 },
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(4433) };
	struct socktab_sock *worker[WORKERS];
	struct socktab_net *net;
	int one = 1, right = 0, total = 0, err;

	socktab_thread_register();
	net = socktab_net_new(NULL);
	if (!net) {
		perror("socktab_net_new");
		return 1;
	}
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < WORKERS; i++) {
		worker[i] = socktab_socket(net, SOCKTAB_UDP, AF_INET);
		socktab_setsockopt(worker[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
		err = socktab_bind(worker[i], (struct sockaddr *)&addr, sizeof(addr));
		if (err) {
			fprintf(stderr, "bind: %d\n", err);
			return 1;
		}
	}
	/* Any member attaches for the whole group; member i is the i-th to have joined. */
	err = socktab_setsockopt(worker[0], SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog,
				 sizeof(prog));
	if (err) {
		fprintf(stderr, "SO_ATTACH_REUSEPORT_CBPF: %d\n", err);
		return 1;
	}
	/* 64 connections, each seen from 8 client ports: every datagram must reach the worker its
	 * connection ID names. */
	for (int conn = 0; conn < 64; conn++) {
		unsigned char pkt[9] = { 0x40, (unsigned char)(conn * 7 + 3), 0x11, 0x22, 0x33,
					 0x44, 0x55, 0x66, 0x77 };

		for (int port = 0; port < 8; port++) {
			struct socktab_sock *sk;

			/* The bytes past the UDP header of the datagram the next lookup is for. */
			socktab_set_rx_payload(pkt, sizeof(pkt));
			sk = socktab_lookup_udp4(net, htonl(0xc0000201 + port % 3), /* 192.0.2.x */
						 htons((uint16_t)(50000 + conn * 8 + port)),
						 addr.sin_addr.s_addr, addr.sin_port,
						 SOCKTAB_LOOPBACK_IFINDEX, 0);
			right += sk == worker[pkt[1] % WORKERS];
			total++;
			socktab_sock_put(sk);
		}
	}
	socktab_set_rx_payload(NULL, 0);
	printf("%d of %d datagrams reached the worker of their connection ID\n", right, total);
	for (int i = 0; i < WORKERS; i++)
		socktab_close(worker[i]);
	socktab_net_free(net);
	socktab_thread_unregister();
	return right == total ? 0 : 1;
}
