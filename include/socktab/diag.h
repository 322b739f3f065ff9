/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Socket dumps: what inet_diag gives `ss` on Linux. A cursor walks a net's listeners, its
 * established, request and TIME_WAIT entries and its UDP sockets, one table slot at a time: each slot is
 * copied under its own lock, so the walk never blocks the packet path, never sees a half-made
 * entry, and is safe against any concurrent change. An entry that exists from
 * socktab_diag_open() to the end of the walk and keeps its addresses is reported exactly once;
 * one created, closed or moved meanwhile may be reported once or not at all (as with inet_diag).
 * Sockets without a port, and bound TCP sockets that neither listen nor connect, are in no
 * lookup table and are not reported (ss does not show them either).
 */
#ifndef SOCKTAB_DIAG_H
#define SOCKTAB_DIAG_H

#include "socktab/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which entries a dump reports. Zeroed fields select everything. Later versions may use the
 * reserved words: leave them zero. */
struct socktab_diag_filter {
	uint32_t states;      /* bit (1u << SOCKTAB_TCP_x) per wanted state (a TIME_WAIT entry's
			       * is its substate, a request entry's SYN_RECV: the bit of
			       * SOCKTAB_TCP_NEW_SYN_RECV matches nothing); 0: all states */
	int proto;            /* SOCKTAB_TCP or SOCKTAB_UDP; 0: both */
	int family;           /* AF_INET or AF_INET6; 0: both */
	uint16_t lport;       /* local port, host order; 0: any */
	uint16_t rport;       /* remote port, host order; 0: any */
	uint32_t reserved[4];
};

/* One reported entry. */
struct socktab_diag_entry {
	int proto;            /* SOCKTAB_TCP or SOCKTAB_UDP */
	int family;           /* AF_INET or AF_INET6 (the socket's) */
	int state;            /* SOCKTAB_TCP_*; a UDP socket is CLOSE, or ESTABLISHED when
			       * connected; a TIME_WAIT entry reports its substate, FIN_WAIT2 or
			       * TIME_WAIT, as inet_diag does (ss shows FIN-WAIT-2 for the first);
			       * a request entry SYN_RECV, as inet_diag does */
	int timewait;         /* 1 for a TIME_WAIT entry, whatever its substate */
	int bound_dev_if;     /* SO_BINDTODEVICE, 0: none */
	uint64_t expires_ms;  /* TIME_WAIT: milliseconds left on the net's clock; else 0 */
	struct sockaddr_storage local;  /* in the socket's family; port in network order */
	struct sockaddr_storage remote; /* zero (family AF_UNSPEC) for listeners and unconnected
					 * UDP sockets */
	uint32_t reserved[4];
};

struct socktab_diag_cursor;

/*
 * Start a dump of @net (@filter NULL: everything). Returns NULL and sets errno (EINVAL, ENOMEM).
 * socktab_diag_next() fills @e with the next entry and returns 1, or 0 at the end, or a negative
 * errno (-EINVAL, -ENOMEM). socktab_diag_close() frees the cursor (NULL is fine).
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. next takes one slot lock at a time and nothing else. A cursor is
 * used by one thread at a time; the net must outlive it.
 */
struct socktab_diag_cursor *socktab_diag_open(struct socktab_net *net,
					      const struct socktab_diag_filter *filter);
int socktab_diag_next(struct socktab_diag_cursor *c, struct socktab_diag_entry *e);
void socktab_diag_close(struct socktab_diag_cursor *c);

#ifdef __cplusplus
}
#endif
#endif /* SOCKTAB_DIAG_H */
