/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A loopback model for socktab: what the kernel does *around* the socket tables when local
 * TCP sockets talk over lo (and UDP sockets exchange datagrams), reduced to what a `.sock` script can observe (states, accept queues,
 * SO_ERROR, readability, which ports stay held). It is a harness, not a TCP stack: no sequence
 * numbers, no timers, every packet is delivered at once. See loopback.c for the rules.
 *
 * Harness state lives in each socket's caller area: create the net with
 * socktab_net_params.sock_priv_size >= lb_priv_size(). Functions return 0 or a negative errno.
 * Context: one thread drives a net's sockets (the replay runner); registered with RCU.
 */
#ifndef SOCKTAB_LOOPBACK_H
#define SOCKTAB_LOOPBACK_H

#include <stdbool.h>
#include <sys/socket.h>

#include "socktab/socktab.h"

size_t lb_priv_size(void);
/* Frame one case (one net): the model's own state of it starts empty and is dropped before the
 * net is freed; @connect_wait_ms is how long the kernel backend's connect() waits for the
 * handshake (rp_connect_wait_ms()), which places the model's SYN retransmissions. lb_sysctl()
 * tells the model a sysctl the script wrote (tcp_migrate_req). */
void lb_case_begin(int connect_wait_ms);
void lb_case_end(void);
void lb_sysctl(const char *key, const char *value);
/* Before each statement: what the kernel's timers would have done by now (SYN retransmission). */
void lb_tick(void);
/* Tie a new socket (socktab_socket()) to its net: the model's lookups need it. */
void lb_attach(struct socktab_sock *sk, struct socktab_net *net);

/* connect(2): socktab_connect(), then deliver the SYN. -ECONNREFUSED, -EINPROGRESS (dropped). */
int lb_connect(struct socktab_sock *sk, const struct sockaddr *sa, socklen_t len);
/* connect(AF_UNSPEC): tcp_disconnect(), resetting the peer or the queued children. */
int lb_disconnect(struct socktab_sock *sk);
/* close(2), with the FIN or RST it sends to the peer; @sk is gone afterwards. */
int lb_close(struct socktab_sock *sk);
/* accept(2): pop the listener's queue. -EINVAL (not a listener), -EAGAIN (empty). */
int lb_accept(struct socktab_sock *listener, struct socktab_sock **child);
/* send(2) of one byte on a connected socket. */
int lb_send(struct socktab_sock *sk);
/* poll(POLLIN): a queued connection, unread data, or end of stream (FIN or RST received). */
bool lb_readable(struct socktab_sock *sk);
/* getsockopt(SO_ERROR): the pending error (positive errno), cleared by the read. */
int lb_take_error(struct socktab_sock *sk);

/*
 * UDP: sendto(2) of a datagram whose payload is the @dlen bytes at @data (@sa NULL: send(2) on a
 * connected socket). socktab_udp_sendto() autobinds and addresses the datagram; it is queued on
 * the socket socktab_lookup_udp4/6 picks, with the payload named for a reuseport selector
 * (socktab_set_rx_payload) during that lookup only.
 * lb_connect, lb_disconnect, lb_close, lb_send and lb_readable also take UDP sockets.
 */
int lb_udp_sendto(struct socktab_sock *sk, const struct sockaddr *sa, socklen_t len,
		  const void *data, size_t dlen);

#endif
