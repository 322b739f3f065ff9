/* SPDX-License-Identifier: BSD-2-Clause */
/* SO_REUSEPORT groups of TCP listeners and UDP sockets (reuseport.c). */
#ifndef SOCKTAB_SRC_REUSEPORT_H
#define SOCKTAB_SRC_REUSEPORT_H

#include "net.h"

/* A classic BPF program attached with SO_ATTACH_REUSEPORT_CBPF (R108), checked and run as the
 * kernel checks and runs it (cbpf.c); immutable once published, freed after a grace period. */
struct socktab__rp_prog;

/* Stable member ids (R132): slot i holds the member whose id is i. Replaced (larger) when a
 * member takes an id >= span, freed after a grace period. */
struct socktab__rp_ids {
	struct rcu_head rcu;
	uint32_t span;                     /* (c) slots: the largest id the group has seen, + 1 */
	struct socktab_sock *_Atomic sk[]; /* (r, reuseport lock) */
};

/* The largest stable member id (R132). */
#define SOCKTAB__RP_ID_MAX 65535

/* SO_REUSEPORT group (kernel struct sock_reuseport, R34-R35); replaced, not resized, when full. */
struct socktab__reuseport {
	_Atomic uint32_t num;              /* (r, reuseport lock) members in socks[] */
	_Atomic uint32_t incoming_cpu;     /* (r, reuseport lock) members whose SO_INCOMING_CPU
					    * is >= 0; 0 keeps selection by hash alone (R35) */
	uint32_t cap;                      /* (c) */
	struct socktab__rp_prog *_Atomic prog; /* (r, reuseport lock) R108 selector, or NULL;
						* a larger copy of the group takes it over */
	_Atomic uint32_t nids;             /* (r, reuseport lock) members with a stable id; while
					    * > 0 selection is by id (R133) */
	struct socktab__rp_ids *_Atomic ids; /* (r, reuseport lock) their slots, or NULL; a larger
					      * copy of the group takes them over */
	_Atomic uint64_t gen;              /* (a, reuseport lock) generation: new on every join,
					    * leave and id change (R134) */
	struct rcu_head rcu;               /* freed after a grace period */
	struct socktab_sock *_Atomic socks[]; /* (r, reuseport lock) */
};

/* Join @peer's group, or start one (peer NULL; a socket that has a group of its own from
 * SO_ATTACH_REUSEPORT_CBPF before bind/listen keeps it, R109). Joining drops that group and its
 * program; -EBUSY if it has other members. Caller holds net->reuseport_lock. */
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

/* SO_ATTACH_REUSEPORT_CBPF (R108, R109): check the @len instructions at @insns (struct
 * sock_filter) as the kernel does and make them @sk's group's selector, replacing (and freeing
 * after a grace period) the one before. A socket without a port (UDP) or not yet listening
 * (TCP) with SO_REUSEPORT starts a group of its own for it. 0, -EINVAL (bad program, no group and
 * no SO_REUSEPORT, or a socket in the tables outside any group), -ENOMEM (no memory, or a program
 * whose eBPF form exceeds net.core.optmem_max, as in Linux). Caller holds the socket lock; takes
 * the net's reuseport lock. */
int socktab__reuseport_attach_cbpf(struct socktab_sock *sk, const void *insns, uint32_t len);
/* SO_DETACH_REUSEPORT_BPF (R111): remove the group's selector. 0, -ENOENT (no program, or
 * SO_REUSEPORT set but no group), -EINVAL (no group, no SO_REUSEPORT). Caller holds the socket
 * lock; takes the net's reuseport lock. */
int socktab__reuseport_detach_prog(struct socktab_sock *sk);
/* R132: give @sk the stable member id @id (-1: none). -EINVAL out of range, -EEXIST when
 * another member of its group has @id, -ENOMEM. An id >= 0 is kept beside the listener queues,
 * which the caller makes first (socktab__listenq_prepare). Caller holds the socket lock; takes
 * the net's reuseport lock. */
int socktab__reuseport_set_id(struct socktab_sock *sk, int id);
/* R134: the generation of @sk's group. 0, or -ENOENT (in no group). Caller holds the socket
 * lock; takes the net's reuseport lock. */
int socktab__reuseport_gen(struct socktab_sock *sk, uint64_t *gen);
/* Leave the group of a socket that is in no table (a group made by SO_ATTACH_REUSEPORT_CBPF
 * before bind/listen), at close. Caller holds the socket lock; takes the reuseport lock. */
void socktab__reuseport_release(struct socktab_sock *sk);

#endif /* SOCKTAB_SRC_REUSEPORT_H */
