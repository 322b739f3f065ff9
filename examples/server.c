/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The server side of a connection as a stack drives it through socktab: a listener; a SYN that
 * the lookup delivers to it; the child socket for that connection; the segments that follow,
 * found by the established lookup; an active close that leaves a TIME_WAIT entry.
 */
#include <arpa/inet.h>
#include <stdio.h>

#include <socktab/socktab.h>

static struct sockaddr_in addr4(const char *ip, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

#define STEP(ok, what)                                                                             \
	do {                                                                                       \
		if (!(ok)) {                                                                       \
			fprintf(stderr, "server: %s failed\n", what);                              \
			return 1;                                                                  \
		}                                                                                  \
		printf("%s\n", what);                                                              \
	} while (0)

int main(void)
{
	struct sockaddr_in local = addr4("127.0.0.1", 8080), peer = addr4("127.0.0.1", 40000);
	struct socktab_sock *ln, *hit, *child;
	struct socktab_net *net;

	socktab_thread_register();
	net = socktab_net_new(NULL);
	STEP(net, "socktab_net_new");
	ln = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	STEP(ln && socktab_bind(ln, (struct sockaddr *)&local, sizeof(local)) == 0 &&
		     socktab_listen(ln, 128) == 0,
	     "listen on 127.0.0.1:8080");

	/* A SYN from the peer: no connection matches, so the lookup returns the listener. */
	hit = socktab_lookup_tcp4(net, peer.sin_addr.s_addr, peer.sin_port, local.sin_addr.s_addr,
				  local.sin_port, SOCKTAB_LOOPBACK_IFINDEX, 0);
	STEP(hit == ln, "SYN: lookup finds the listener");
	child = socktab_sock_new_child(hit, (struct sockaddr *)&local, (struct sockaddr *)&peer,
				       sizeof(local), SOCKTAB_LOOPBACK_IFINDEX, 0);
	socktab_sock_put(hit);
	STEP(child && socktab_get_state(child) == SOCKTAB_TCP_SYN_RECV,
	     "child socket in SYN_RECV (SYN-ACK sent)");

	/* The peer's ACK completes the handshake; later segments find the child, not the listener. */
	hit = socktab_lookup_tcp4(net, peer.sin_addr.s_addr, peer.sin_port, local.sin_addr.s_addr,
				  local.sin_port, SOCKTAB_LOOPBACK_IFINDEX, 0);
	STEP(hit == child && socktab_set_state(child, SOCKTAB_TCP_ESTABLISHED) == 0,
	     "ACK: lookup finds the child, ESTABLISHED");
	socktab_sock_put(hit);

	/* We close first: FIN_WAIT1, the peer's ACK (FIN_WAIT2), then close() leaves TIME_WAIT. */
	STEP(socktab_set_state(child, SOCKTAB_TCP_FIN_WAIT1) == 0 &&
		     socktab_set_state(child, SOCKTAB_TCP_FIN_WAIT2) == 0 && socktab_close(child) == 0,
	     "active close");
	hit = socktab_lookup_established4(net, peer.sin_addr.s_addr, peer.sin_port,
					  local.sin_addr.s_addr, local.sin_port, SOCKTAB_LOOPBACK_IFINDEX, 0);
	STEP(hit && socktab_get_state(hit) == SOCKTAB_TCP_TIME_WAIT,
	     "late segment: lookup finds the TIME_WAIT entry");
	socktab_sock_put(hit);

	socktab_close(ln);
	socktab_net_free(net);
	socktab_thread_unregister();
	return 0;
}
