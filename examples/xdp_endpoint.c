/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An AF_XDP run-to-completion endpoint on socktab: `xdp_endpoint DEV [OPTIONS]` is the serve
 * stack (stack/) on an AF_XDP socket bound to queue 0 of the Ethernet device DEV, through
 * libxdp's default XDP program (native mode where the driver has it, else SKB mode). Built
 * only when libxdp and libbpf are found.
 *
 * One thread polls the socket and, for each batch of up to 64 frames:
 *   - answers ARP and IPv6 neighbour solicitations for its addresses (the kernel no longer
 *     sees those frames);
 *   - looks every TCP and UDP packet of the batch up at once with socktab_lookup_batch4/6()
 *     and SOCKTAB_LOOKUP_NOREF, inside one socktab_rcu_read_lock() section that also covers
 *     the processing: a SYN that finds a listener makes its child (socktab_sock_new_child), a
 *     segment that finds a connection runs the state machine, a datagram of a new peer makes
 *     the peer's connected UDP socket; no reference is taken per packet;
 *   - writes the Ethernet header of each reply and kicks the TX ring once.
 * Between batches it runs the retransmission timers and socktab_net_tick_budget(), and opens
 * outgoing flows (--connect) whose local ports socktab_connect() chooses.
 *
 * DEV must exist with its peer configured, e.g. a veth pair whose other end is in another
 * network namespace with 192.0.2.1/24 (offloads off: tests/real/xdp_gen offload-off):
 *
 *   xdp_endpoint veth0 --peer-addr 192.0.2.1/24 --addr 192.0.2.2 --tcp-echo 7 \
 *       --udp-echo 4433 --udp-connect-per-peer
 *
 * The other options are those of `socktab serve --help` (all but --tun and --xdp). The stack
 * uses socktab's public API only (stack/stack.h maps its files; xsk.c is the AF_XDP part).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

int main(int argc, char **argv)
{
	char **args;

	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: xdp_endpoint DEV [socktab serve options but --tun/--xdp]\n");
		return 2;
	}
	args = calloc((size_t)argc + 2, sizeof(*args));
	if (!args)
		return 1;
	args[0] = "serve";
	args[1] = "--xdp";
	args[2] = argv[1];
	for (int i = 2; i < argc; i++)
		args[i + 1] = argv[i];
	int rc = serve_main(argc + 1, args);

	free(args);
	return rc;
}
