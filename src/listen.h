/* SPDX-License-Identifier: BSD-2-Clause */
/* Listeners (lhash2, listen.c). */
#ifndef SOCKTAB_SRC_LISTEN_H
#define SOCKTAB_SRC_LISTEN_H

#include "net.h"

/* The listener walk is socktab_lookup_listener4_rcu() / _6_rcu() itself (socktab/lookup.h,
 * R30-R33, R92): not referenced, inside the caller's RCU read-side section. A caller that pins
 * its result re-checks that it still listens on the port (lookup.c). */

/* The listener step of a referenced lookup: socktab_lookup_listener4_rcu() / _6_rcu(), and
 * *@hooked true when the result is the dispatch hook's selection (R125), which need not listen
 * on @dport. Caller is inside an RCU read-side section and checked its arguments. */
struct socktab_sock *socktab__listener4_rcu(struct socktab_net *net, uint32_t saddr,
					    uint16_t sport, uint32_t daddr, uint16_t dport,
					    int dif, int sdif, bool *hooked);
struct socktab_sock *socktab__listener6_rcu(struct socktab_net *net,
					    const struct in6_addr *saddr, uint16_t sport,
					    const struct in6_addr *daddr, uint16_t dport, int dif,
					    int sdif, bool *hooked);

/* Insert @sk (state LISTEN, owning its port) into lhash2 and its reuseport group. Caller holds
 * the socket lock. */
int socktab__listen_hash(struct socktab_net *net, struct socktab_sock *sk);
/* Remove listener @sk from lhash2 and its group. Caller holds the socket lock. */
void socktab__listen_unhash(struct socktab_sock *sk);

#endif /* SOCKTAB_SRC_LISTEN_H */
