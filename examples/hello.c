/* SPDX-License-Identifier: BSD-2-Clause */
/* Smallest program that embeds socktab: connect, look the connection up, close. */
#include <arpa/inet.h>
#include <stdio.h>

#include <socktab/socktab.h>

int main(void)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(80) };
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	struct socktab_net *net;
	struct socktab_sock *sk, *found;
	int err;

	socktab_thread_register();
	net = socktab_net_new(NULL);
	if (!net) {
		perror("socktab_net_new");
		return 1;
	}
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	err = socktab_connect(sk, (struct sockaddr *)&dst, sizeof(dst));
	if (err) {
		fprintf(stderr, "connect: %d\n", err);
		return 1;
	}
	socktab_getsockname(sk, (struct sockaddr *)&me, &len);
	/* A segment from 127.0.0.1:80 to our local port finds the socket. */
	found = socktab_lookup_tcp4(net, dst.sin_addr.s_addr, dst.sin_port, me.sin_addr.s_addr,
				    me.sin_port, SOCKTAB_LOOPBACK_IFINDEX, 0);
	printf("connected from port %u, lookup %s\n", ntohs(me.sin_port),
	       found == sk ? "found it" : "FAILED");
	socktab_sock_put(found);
	socktab_close(sk);
	socktab_net_free(net);
	socktab_thread_unregister();
	return found == sk ? 0 : 1;
}
