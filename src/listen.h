/* SPDX-License-Identifier: BSD-2-Clause */
/* Listeners (lhash2, listen.c). */
#ifndef SOCKTAB_SRC_LISTEN_H
#define SOCKTAB_SRC_LISTEN_H

#include "net.h"

/* The listener walk is socktab_lookup_listener4_rcu() / _6_rcu() itself (socktab/lookup.h,
 * R30-R33, R92): not referenced, inside the caller's RCU read-side section. A caller that pins
 * its result re-checks that it still listens on the port (lookup.c). */

/* Insert @sk (state LISTEN, owning its port) into lhash2 and its reuseport group. Caller holds
 * the socket lock. */
int socktab__listen_hash(struct socktab_net *net, struct socktab_sock *sk);
/* Remove listener @sk from lhash2 and its group. Caller holds the socket lock. */
void socktab__listen_unhash(struct socktab_sock *sk);

#endif /* SOCKTAB_SRC_LISTEN_H */
