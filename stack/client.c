/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Active flows (--connect ADDR:PORT --flows N): this stack is the client of a kernel server.
 * Each flow is an unbound socket given to socktab_connect(), which chooses the source address
 * (from the route toward ADDR, i.e. the TUN device's address) and the source port (the kernel's
 * connect() algorithm: even ports first, relative to the range's low end, then odd) and puts
 * the socket into the established table in SYN_SENT. We send the SYN; the SYN-ACK finds the
 * socket by lookup; the flow sends one line and checks that the same line comes back.
 *
 * Without --crr the flows stay open (so the kernel side can count them with ss) and
 * "connect_done=1" is printed once every flow has its echo. With --crr each flow closes after
 * its echo (we close first: TIME_WAIT is ours) and a new one starts: the tcp_crr pattern,
 * until --duration ends the run. At most --parallel flows are in their handshake or waiting
 * for their echo at any time, so that the kernel's SYN and accept queues are not flooded.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "stack.h"

static uint32_t flow_line(uint32_t id, char *buf, size_t n)
{
	return (uint32_t)snprintf(buf, n, "socktab flow %u\n", id);
}

/* Start flows while there is room. */
void client_pump(struct stack *st)
{
	struct st_client *cl = &st->client;
	const struct st_cfg *cfg = &st->cfg;
	int family = cfg->connect_to.ss_family;
	union st_addr raddr;
	uint16_t rport;

	if (!cfg->flows || cl->stopped)
		return;
	if (family == AF_INET) {
		raddr.v4 = ((const struct sockaddr_in *)&cfg->connect_to)->sin_addr;
		rport = ((const struct sockaddr_in *)&cfg->connect_to)->sin_port;
	} else {
		raddr.v6 = ((const struct sockaddr_in6 *)&cfg->connect_to)->sin6_addr;
		rport = ((const struct sockaddr_in6 *)&cfg->connect_to)->sin6_port;
	}
	while (cl->active < (uint32_t)cfg->flows && cl->pending < (uint32_t)cfg->parallel &&
	       (cfg->crr || cl->started < (uint32_t)cfg->flows) &&
	       st->n_conns < (uint32_t)cfg->max_conns) {
		struct socktab_sock *sk = socktab_socket(st->net, SOCKTAB_TCP, family);
		struct sockaddr_storage local;
		socklen_t len = sizeof(local);
		union st_addr laddr;
		uint16_t lport;
		struct conn *c;
		int err;

		if (!sk)
			break;
		err = socktab_connect(sk, (const struct sockaddr *)&cfg->connect_to,
				      cfg->connect_len);
		if (!err)
			err = socktab_getsockname(sk, (struct sockaddr *)&local, &len);
		if (err) {
			if (!st->c.tcp_connect_errors++ || err != -EADDRNOTAVAIL)
				fprintf(stderr, "socktab serve: connect: %s\n", strerror(-err));
			socktab_close(sk);
			/* EADDRNOTAVAIL: every port toward ADDR:PORT is taken for now (TIME_WAIT
			 * frees them); anything else (no route...) will not change: stop. */
			if (err != -EADDRNOTAVAIL && err != -ENOMEM)
				cl->stopped = true;
			break;
		}
		if (family == AF_INET) {
			laddr.v4 = ((struct sockaddr_in *)&local)->sin_addr;
			lport = ((struct sockaddr_in *)&local)->sin_port;
		} else {
			laddr.v6 = ((struct sockaddr_in6 *)&local)->sin6_addr;
			lport = ((struct sockaddr_in6 *)&local)->sin6_port;
		}
		c = socktab_sock_priv(sk);
		conn_link(st, c, sk, family, &laddr, lport, &raddr, rport);
		c->app = APP_CLIENT;
		c->u.cl.flow = cl->next_id++;
		c->iss = tcp_isn(st);
		c->snd_una = c->iss;
		c->tw.snd_nxt = c->iss + 1;
		tcp_send_syn(st, c);
		rto_arm(st, c, ST_RTO_SYN_MS);
		cl->started++;
		cl->active++;
		cl->pending++;
	}
	if (!cfg->crr && !cl->done_printed &&
	    st->c.tcp_active_ok + st->c.tcp_active_failed >= (uint64_t)cfg->flows) {
		printf("connect_done=1 ok=%llu failed=%llu\n",
		       (unsigned long long)st->c.tcp_active_ok,
		       (unsigned long long)st->c.tcp_active_failed);
		fflush(stdout);
		cl->done_printed = true;
	}
}

/* Established: send the flow's line. */
void client_open(struct stack *st, struct conn *c)
{
	char line[32];

	conn_send(st, c, line, flow_line(c->u.cl.flow, line, sizeof(line)));
}

/* The flow's exchange is over, well (@ok) or not. */
static void flow_done(struct stack *st, struct conn *c, bool ok)
{
	c->flags |= CF_APP_DONE;
	st->client.pending--;
	if (ok)
		st->c.tcp_active_ok++;
	else
		st->c.tcp_active_failed++;
}

/* Echo bytes: each must be the next byte of the line. */
void client_data(struct stack *st, struct conn *c, const uint8_t *d, uint32_t n)
{
	char line[32];
	uint32_t len = flow_line(c->u.cl.flow, line, sizeof(line));

	if (c->flags & CF_APP_DONE)
		return;
	if (c->u.cl.got + n > len || memcmp(line + c->u.cl.got, d, n)) {
		flow_done(st, c, false);
		c->flags |= CF_APP_CLOSED;
		return;
	}
	c->u.cl.got += n;
	if (c->u.cl.got < len)
		return;
	flow_done(st, c, true);
	if (st->cfg.crr)
		c->flags |= CF_APP_CLOSED; /* tcp_crr: close, then the next flow starts */
}

void client_gone(struct stack *st, struct conn *c)
{
	st->client.active--;
	if (!(c->flags & CF_APP_DONE))
		flow_done(st, c, false);
}
