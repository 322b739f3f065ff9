/* SPDX-License-Identifier: BSD-2-Clause */
/* Listeners (lhash2, listen.c). */
#ifndef SOCKTAB_SRC_LISTEN_H
#define SOCKTAB_SRC_LISTEN_H

#include "net.h"

/* The listener lookups (listen.c); @ref as socktab__lookup_established4(). */
struct socktab_sock *socktab__lookup_listener4(struct socktab_net *net, uint32_t saddr,
					       uint16_t sport, uint32_t daddr, uint16_t dport, int dif,
					       int sdif, bool ref);
struct socktab_sock *socktab__lookup_listener6(struct socktab_net *net,
					       const struct in6_addr *saddr, uint16_t sport,
					       const struct in6_addr *daddr, uint16_t dport, int dif,
					       int sdif, bool ref);

/* Remove listener @sk from lhash2 and its group. Caller holds the socket lock. */
void socktab__listen_unhash(struct socktab_sock *sk);

#endif /* SOCKTAB_SRC_LISTEN_H */
