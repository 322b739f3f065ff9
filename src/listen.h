/* SPDX-License-Identifier: BSD-2-Clause */
/* Listeners (lhash2, listen.c). */
#ifndef SOCKTAB_SRC_LISTEN_H
#define SOCKTAB_SRC_LISTEN_H

#include "net.h"

/* The listener for a segment (R30-R33, R92): not referenced; the caller is inside an RCU
 * read-side section and the result is valid until it ends. A caller that pins it re-checks
 * that it still listens on the port (lookup.c). */
struct socktab_sock *socktab__lhash2_lookup4_rcu(struct socktab_net *net, uint32_t saddr,
						 uint16_t sport, uint32_t daddr, uint16_t dport,
						 int dif, int sdif);
struct socktab_sock *socktab__lhash2_lookup6_rcu(struct socktab_net *net,
						 const struct in6_addr *saddr, uint16_t sport,
						 const struct in6_addr *daddr, uint16_t dport,
						 int dif, int sdif);

/* Insert @sk (state LISTEN, owning its port) into lhash2 and its reuseport group. Caller holds
 * the socket lock. */
int socktab__listen_hash(struct socktab_net *net, struct socktab_sock *sk);
/* Remove listener @sk from lhash2 and its group. Caller holds the socket lock. */
void socktab__listen_unhash(struct socktab_sock *sk);

#endif /* SOCKTAB_SRC_LISTEN_H */
