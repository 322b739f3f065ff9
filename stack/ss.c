/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What operators expect from `ss -tan`: one line per socket with its state and addresses,
 * printed when the process gets SIGUSR1. The sockets come from socktab's dump cursor
 * (socktab_diag_open/next/close), which copies one table slot at a time under that slot's lock
 * and so never stalls the packet path; the port and state filters are the cursor's own (it
 * matches a TIME_WAIT entry on its substate, as ss does: one still waiting for the peer's FIN is
 * FIN-WAIT-2, and `state time-wait` does not list it). Recv-Q and Send-Q are printed as 0.
 */
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>

#include "stack.h"

/* ss's names, by TCP state number; "all" and "connected" are its state groups. */
static const char *const names[] = {
	[SOCKTAB_TCP_ESTABLISHED] = "established", [SOCKTAB_TCP_SYN_SENT] = "syn-sent",
	[SOCKTAB_TCP_SYN_RECV] = "syn-recv",       [SOCKTAB_TCP_FIN_WAIT1] = "fin-wait-1",
	[SOCKTAB_TCP_FIN_WAIT2] = "fin-wait-2",    [SOCKTAB_TCP_TIME_WAIT] = "time-wait",
	[SOCKTAB_TCP_CLOSE] = "closed",            [SOCKTAB_TCP_CLOSE_WAIT] = "close-wait",
	[SOCKTAB_TCP_LAST_ACK] = "last-ack",       [SOCKTAB_TCP_LISTEN] = "listening",
	[SOCKTAB_TCP_CLOSING] = "closing",
};
static const char *const shown[] = {
	[SOCKTAB_TCP_ESTABLISHED] = "ESTAB",       [SOCKTAB_TCP_SYN_SENT] = "SYN-SENT",
	[SOCKTAB_TCP_SYN_RECV] = "SYN-RECV",       [SOCKTAB_TCP_FIN_WAIT1] = "FIN-WAIT-1",
	[SOCKTAB_TCP_FIN_WAIT2] = "FIN-WAIT-2",    [SOCKTAB_TCP_TIME_WAIT] = "TIME-WAIT",
	[SOCKTAB_TCP_CLOSE] = "UNCONN",            [SOCKTAB_TCP_CLOSE_WAIT] = "CLOSE-WAIT",
	[SOCKTAB_TCP_LAST_ACK] = "LAST-ACK",       [SOCKTAB_TCP_LISTEN] = "LISTEN",
	[SOCKTAB_TCP_CLOSING] = "CLOSING",
};
#define NSTATES (SOCKTAB_TCP_CLOSING + 1)

/* Add the state(s) an ss state name stands for to @bits: 0, or -1 for an unknown name. */
int ss_state_bit(const char *name, uint32_t *bits)
{
	if (!strcmp(name, "all")) {
		*bits |= ((1u << NSTATES) - 1) & ~1u;
		return 0;
	}
	if (!strcmp(name, "connected")) { /* everything but listening and closed */
		*bits |= ((1u << NSTATES) - 1) & ~1u & ~(1u << SOCKTAB_TCP_LISTEN) &
			 ~(1u << SOCKTAB_TCP_CLOSE);
		return 0;
	}
	for (int s = 1; s < NSTATES; s++) {
		if (!strcmp(name, names[s])) {
			*bits |= 1u << s;
			return 0;
		}
	}
	return -1;
}

/* "192.0.2.2:80", "[2001:db8::2]:80", or with port 0 and no address, "*" forms. */
static void addr_port(const struct sockaddr_storage *ss, int family, char *out, size_t n)
{
	char a[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
		snprintf(out, n, "%s:%u", a, ntohs(s->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a));
		snprintf(out, n, "[%s]:%u", a, ntohs(s->sin6_port));
	} else {
		snprintf(out, n, "%s", family == AF_INET6 ? "[::]:*" : "0.0.0.0:*");
	}
}

void ss_dump(struct stack *st, FILE *f)
{
	struct socktab_diag_filter flt;
	struct socktab_diag_cursor *cur;
	struct socktab_diag_entry e;
	char l[64], r[64];
	unsigned long n = 0;

	memset(&flt, 0, sizeof(flt));
	flt.proto = st->cfg.ss_proto;
	flt.lport = (uint16_t)st->cfg.ss_sport;
	flt.rport = (uint16_t)st->cfg.ss_dport;
	flt.states = st->cfg.ss_states; /* a TIME_WAIT entry is filtered on its substate */
	cur = socktab_diag_open(st->net, &flt);
	if (!cur) {
		fprintf(stderr, "socktab serve: socktab_diag_open failed\n");
		return;
	}
	fprintf(f, "%-11s %-6s %-6s %-45s %s\n", "State", "Recv-Q", "Send-Q",
		"Local Address:Port", "Peer Address:Port");
	while (socktab_diag_next(cur, &e) == 1) {
		int s = e.state; /* a TIME_WAIT entry's substate, as ss shows it */
		const char *name;

		if (s <= 0 || s >= NSTATES)
			continue;
		name = shown[s];
		addr_port(&e.local, e.family, l, sizeof(l));
		addr_port(&e.remote, e.family, r, sizeof(r));
		fprintf(f, "%-11s %-6d %-6d %-45s %s\n", name, 0, 0, l, r);
		n++;
	}
	socktab_diag_close(cur);
	fprintf(f, "ss_total=%lu\n", n);
	fflush(f);
}
