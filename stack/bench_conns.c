/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --bench-conns N: N synthetic TCP connections for the packet-rate benchmark
 * (scripts/xdp-pps.sh). A listener on our IPv4 address, port BENCH_PORT, and N children of it,
 * made with socktab_sock_new_child() as a SYN would make them, from the documentation prefix
 * 198.51.100.0/24: connection i has the remote end 198.51.100.(1 + i % 200), port
 * 1024 + i / 200 (at most 200 x 64,512 of them). Their areas stay zeroed, so a segment that
 * finds one is looked up, dispatched and dropped without an answer: the benchmark times the
 * receive path and the lookup, not a TCP exchange. The load generator (tests/real/xdp_gen.c)
 * uses the same numbering.
 */
#include <errno.h>
#include <string.h>

#include <arpa/inet.h>

#include "stack.h"

#define BENCH_PORT 5001

int bench_conns_open(struct stack *st)
{
	struct socktab_sock *l = socktab_socket(st->net, SOCKTAB_TCP, AF_INET);
	struct sockaddr_storage local, remote;
	union st_addr la, ra;
	int on = 1, err;

	if (!l)
		return -1;
	la.v4 = st->cfg.addr4;
	sockaddr_make(&local, AF_INET, &la, htons(BENCH_PORT));
	err = socktab_setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (!err)
		err = socktab_bind(l, (struct sockaddr *)&local, sizeof(struct sockaddr_in));
	if (!err)
		err = socktab_listen(l, 128);
	if (err) {
		fprintf(stderr, "socktab serve: --bench-conns listener: %s\n", strerror(-err));
		socktab_close(l);
		return -1;
	}
	for (int i = 0; i < st->cfg.bench_conns; i++) {
		struct socktab_sock *c;

		ra.v4.s_addr = htonl(0xc6336400u + 1 + (uint32_t)(i % 200)); /* 198.51.100.x */
		sockaddr_make(&remote, AF_INET, &ra, htons((uint16_t)(1024 + i / 200)));
		c = socktab_sock_new_child(l, (struct sockaddr *)&local, (struct sockaddr *)&remote,
					   sizeof(struct sockaddr_in), st->ifindex, 0);
		if (!c) {
			fprintf(stderr, "socktab serve: --bench-conns: connection %d: %s\n", i,
				strerror(errno));
			return -1;
		}
		socktab_set_state(c, SOCKTAB_TCP_ESTABLISHED);
	}
	return 0;
}
