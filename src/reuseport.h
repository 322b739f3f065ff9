/* SPDX-License-Identifier: BSD-2-Clause */
/* SO_REUSEPORT groups of TCP listeners and UDP sockets (reuseport.c). */
#ifndef SOCKTAB_SRC_REUSEPORT_H
#define SOCKTAB_SRC_REUSEPORT_H

#include "net.h"

/* SO_REUSEPORT group (kernel struct sock_reuseport, R34-R35); replaced, not resized, when full. */
struct socktab__reuseport {
	_Atomic uint32_t num;              /* (r, reuseport lock) members in socks[] */
	_Atomic uint32_t incoming_cpu;     /* (r, reuseport lock) members whose SO_INCOMING_CPU
					    * is >= 0; 0 keeps selection by hash alone (R35) */
	uint32_t cap;                      /* (c) */
	struct rcu_head rcu;               /* freed after a grace period */
	struct socktab_sock *_Atomic socks[]; /* (r, reuseport lock) */
};

/* Join @peer's group, or start one (peer NULL). Caller holds net->reuseport_lock. */
int socktab__reuseport_add_locked(struct socktab_net *net, struct socktab_sock *sk,
				  struct socktab_sock *peer);
/* Leave the group. Caller holds the net's reuseport lock. */
void socktab__reuseport_detach_locked(struct socktab_sock *sk);
/* R35: the member for @hash; with members using SO_INCOMING_CPU, one bound to the lookup's CPU
 * *cpu (SOCKTAB__CPU_UNASKED until asked, common.h) first. Caller is inside an RCU read-side
 * section. */
struct socktab_sock *socktab__reuseport_select_rcu(struct socktab_sock *sk, uint32_t hash,
						   int *cpu);
/* SO_INCOMING_CPU := @val, and the group's count of members using it (R35), under the net's
 * reuseport lock (taken here). Caller holds the socket lock. */
void socktab__reuseport_set_incoming_cpu(struct socktab_sock *sk, int val);

#endif /* SOCKTAB_SRC_REUSEPORT_H */
