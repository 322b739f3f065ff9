/* SPDX-License-Identifier: BSD-2-Clause */
/* Request entries, a listener's SYN and accept queues, and their migration (reqsk.c). */
#ifndef SOCKTAB_SRC_REQSK_H
#define SOCKTAB_SRC_REQSK_H

#include "net.h"

/* Where a request entry is (struct socktab__req.where). */
#define SOCKTAB__REQ_NONE 0    /* in no queue: dropped, accepted, or given up at a close */
#define SOCKTAB__REQ_SYNQ 1    /* in ehash and its listener's SYN queue */
#define SOCKTAB__REQ_ACCEPTQ 2 /* out of ehash (its child took its place), in the accept queue */
#define SOCKTAB__REQ_TRANSIT 3 /* taken off a closing listener, owned by its close until it is
				* queued on another member or dropped */

/*
 * A listener's queues (the kernel's icsk_accept_queue and sk_ack_backlog). Made by the first
 * listen() of a socket object and kept with it for the life of the net, so a lookup that still
 * holds a closed listener reads counters, never freed memory. (s) = under the listener's socket
 * lock; (a) = also read without it.
 */
struct socktab__listenq {
	_Atomic uint32_t max_ack_backlog;  /* (s, a) the listen() backlog, sk_max_ack_backlog */
	_Atomic uint32_t qlen;             /* (s, a) requests in the SYN queue */
	_Atomic uint32_t young;            /* (s, a) of those, never retransmitted */
	_Atomic uint32_t ack_backlog;      /* (s, a) children in the accept queue */
	struct socktab_sock *synq;         /* (s) SYN queue, newest first (req bl.next/pprev) */
	struct socktab_sock *acc_head;     /* (s) accept queue, oldest first */
	struct socktab_sock **acc_tailp;   /* (s) where the next child is linked */
	int32_t rp_id;                     /* (s, reuseport lock) stable reuseport member id
					    * (SOCKTAB_SO_REUSEPORT_ID, reuseport.c), -1: none */
};

/* The queues of @sk, or NULL when it never listened (lookups: acquire). */
static inline struct socktab__listenq *socktab__sk_lq(const struct socktab_sock *sk)
{
	return atomic_load_explicit(&((struct socktab_sock *)sk)->cold->lq, memory_order_acquire);
}

/* @sk's stable reuseport member id (R132), -1 when it has none. Caller holds the socket lock or
 * the net's reuseport lock. */
static inline int32_t socktab__sk_rp_id(const struct socktab_sock *sk)
{
	struct socktab__listenq *q = socktab__sk_lq(sk);

	return q ? q->rp_id : -1;
}

/* listen(): make sure @sk has its queues (-ENOMEM), before anything else changes. Caller holds
 * the socket lock. */
int socktab__listenq_prepare(struct socktab_sock *sk);
/* listen() succeeded (@fresh: the socket just became a listener, so its queues start empty):
 * the backlog is @backlog. Caller holds the socket lock. */
void socktab__listenq_start(struct socktab_sock *sk, int backlog, bool fresh);

/* What a listener's stop took off it, handled once its lock is released. */
struct socktab__orphans {
	struct socktab_sock *synq;         /* requests, linked through bl.next */
	struct socktab_sock *accq;         /* accept-queue entries (request entries), oldest first */
	struct socktab_sock **targets;     /* migration: the other members of the group, each
					    * referenced, in the order the kernel's detach leaves */
	uint32_t ntargets;
	uint32_t incpu;                    /* members using SO_INCOMING_CPU among them */
};

/*
 * inet_csk_listen_stop(), first half: take every request and unaccepted child off listener
 * @sk into @o, and with net.ipv4.tcp_migrate_req note the group's other members as migration
 * targets (reuseport_stop_listen keeps a closing member's group for it). Caller holds the
 * socket lock; @sk still listens and is still in its group (call before
 * socktab__listen_unhash()).
 */
void socktab__listen_stop_locked(struct socktab_sock *sk, struct socktab__orphans *o);
/* The second half, with no lock held: each request and child moves to the member the
 * 4-tuple hash picks (reuseport_migrate_sock) or is dropped (a child is closed at once). */
void socktab__listen_stop_finish(struct socktab__orphans *o);

#endif /* SOCKTAB_SRC_REQSK_H */
