/* SPDX-License-Identifier: BSD-2-Clause */
/* TIME_WAIT entries (timewait.c). */
#ifndef SOCKTAB_SRC_TIMEWAIT_H
#define SOCKTAB_SRC_TIMEWAIT_H

#include "net.h"

/* Replace established @sk by a TIME_WAIT entry in @substate (SOCKTAB_TCP_FIN_WAIT2 or
 * SOCKTAB_TCP_TIME_WAIT); with @keep_port @sk stays an owner of its port beside the entry.
 * Caller holds sk's lock. */
int socktab__tw_create_and_swap(struct socktab_net *net, struct socktab_sock *sk, int substate,
				bool keep_port);
/* R61: may a new connection take over @tw's 4-tuple? Caller holds tw's ehash lock. */
bool socktab__tw_unique(struct socktab_net *net, struct socktab_sock *tw, bool port_was_bound);
/* Unhash @tw. Caller holds the bhash lock of tw's port. */
void socktab__tw_kill_locked(struct socktab_net *net, struct socktab_sock *tw);
/* A new connection took @tw's place in ehash: it leaves its bind bucket, unless a kill took it
 * out first (a passive entry's takeover). Caller holds the bhash lock of tw's port. */
void socktab__tw_takeover_locked(struct socktab_net *net, struct socktab_sock *tw);
#ifdef SOCKTAB_NAIVE_ORDER
bool socktab__naive_takeover(void); /* the negative control's switch (timewait.c) */
#endif
/* Take @tw off the list and drop the list's and the caller's references. */
void socktab__tw_deschedule_put(struct socktab_net *net, struct socktab_sock *tw);
/* Remove at most @budget entries due at @now, oldest first; *@next_due (if not NULL) gets the
 * oldest remaining entry's expiry, UINT64_MAX when none is left. Returns how many were removed. */
int socktab__tw_expire(struct socktab_net *net, uint64_t now, unsigned int budget,
		       uint64_t *next_due);
/* How many due entries a control call (TCP bind, connect, listen, close) expires on its way in:
 * a bounded share, so that TIME_WAIT entries go even where no one calls the tick. */
#define SOCKTAB__TW_REAP_BUDGET 8
/* socktab__tw_expire() at the net's current time, without the next expiry (control calls). */
int socktab__tw_reap(struct socktab_net *net, unsigned int budget);
/* Drop every entry (net teardown). */
void socktab__tw_purge(struct socktab_net *net);

#endif /* SOCKTAB_SRC_TIMEWAIT_H */
