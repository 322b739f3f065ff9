/* SPDX-License-Identifier: BSD-2-Clause */
/* Listeners (lhash2) and SO_REUSEPORT groups (listen.c); groups are shared with UDP. */
#ifndef SOCKTAB_SRC_LISTEN_H
#define SOCKTAB_SRC_LISTEN_H

#include "net.h"

/* SO_REUSEPORT group (kernel struct sock_reuseport, R34-R35); replaced, not resized, when full. */
struct socktab__reuseport {
	_Atomic uint32_t num;              /* (r, reuseport lock) members in socks[] */
	uint32_t cap;                      /* (c) */
	struct rcu_head rcu;               /* freed after a grace period */
	struct socktab_sock *_Atomic socks[]; /* (r, reuseport lock) */
};

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
/* Join @peer's group, or start one (peer NULL). Caller holds net->reuseport_lock. */
int socktab__reuseport_add_locked(struct socktab_net *net, struct socktab_sock *sk,
				  struct socktab_sock *peer);
/* Leave the group. Caller holds the net's reuseport lock. */
void socktab__reuseport_detach_locked(struct socktab_sock *sk);
/* R35: the member for @hash. Caller is inside an RCU read-side section. */
struct socktab_sock *socktab__reuseport_select_rcu(struct socktab_sock *sk, uint32_t hash);

#endif /* SOCKTAB_SRC_LISTEN_H */
