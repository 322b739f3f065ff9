/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SO_REUSEPORT groups (the kernel's sock_reuseport.c), shared by TCP listeners (listen.c) and
 * UDP sockets (udp.c): same groups, same selection (R34, R35).
 * A group is an array of members replaced (not resized) when full and freed after a grace
 * period; a leaving member is replaced by the last one. Writers hold the net's reuseport lock, a
 * leaf; readers select under RCU. Which sockets may share a group is the caller's rule (R34):
 * listen.c and udp.c each find the peer a socket joins.
 * SO_INCOMING_CPU (R35, the kernel's reuseport_update_incoming_cpu): a group counts its members
 * whose value is >= 0, changed when one joins, leaves or sets the option (a socket sets it under
 * the reuseport lock, so a join or leave never counts a stale value). While the count is 0
 * selection is the hash alone and reads neither a member's value nor the CPU.
 * A selector (R108-R111, the kernel's SO_ATTACH_REUSEPORT_CBPF): a group may hold a classic BPF
 * program, checked and run with the kernel's semantics (cbpf.c) over the datagram's payload that
 * the lookup's thread named (socktab_set_rx_payload); its return value is the index of the
 * member. A program that loads what socktab does not have (header bytes, the ingress device,
 * ...: cbpf.c) gives no value, and the hash picks, as for an index out of range. The program
 * pointer is the only thing a lookup reads when none is attached. A program is replaced under
 * the reuseport lock and freed after a grace period.
 * Stable member ids and the generation (R132-R135, beyond Linux): a member may carry an id
 * (SOCKTAB_SO_REUSEPORT_ID), kept in a slot array indexed by id beside the kernel's member array.
 * While a group has members with ids, the selector's value and the hash name slots instead of
 * positions, so a member that leaves frees only its own slot and one that joins with the same id
 * takes it back: nobody else's traffic moves (Linux moves its last member into the leaver's
 * position). The slot array only grows (its span is the largest id seen, + 1), so the hash's
 * mapping never changes but when a larger id joins. Every join, leave and id change gives the
 * group a new generation, from one process-wide counter, so generations never repeat.
 */
#include <stdlib.h>
#include <string.h>

#include <linux/if_ether.h>

#include "cbpf.h"
#include "reqsk.h"
#include "reuseport.h"

struct socktab__rp_prog {
	struct rcu_head rcu;
	uint32_t len;                      /* (c) instructions */
	struct sock_filter insns[];        /* (c) */
};

static void prog_free_rcu(struct rcu_head *head)
{
	struct socktab__rp_prog *p = caa_container_of(head, struct socktab__rp_prog, rcu);

	socktab__rcu_cb_enter(p);
	free(p);
}

static void prog_free_later(struct socktab__rp_prog *p)
{
	if (p)
		socktab__call_rcu(p, &p->rcu, prog_free_rcu);
}

/* Is @sk in a table (the kernel's !sk_unhashed)? A UDP socket once it has a port, a TCP one
 * once it listens or connects. */
static bool sk_in_table(const struct socktab_sock *sk)
{
	if (socktab__sk_proto(sk) == SOCKTAB_UDP)
		return socktab__sk_num(sk) != 0;
	return RD(sk->state) != SOCKTAB_TCP_CLOSE;
}

static struct socktab__reuseport *group_alloc(uint32_t cap)
{
	struct socktab__reuseport *g = calloc(1, sizeof(*g) + cap * sizeof(g->socks[0]));

	if (g)
		g->cap = cap;
	return g;
}

/* ---- stable member ids (R132-R135) ---- */

/* A generation no group had before (R134): one counter for the process. */
static uint64_t next_gen(void)
{
	static _Atomic uint64_t last;

	return atomic_fetch_add_explicit(&last, 1, memory_order_relaxed) + 1;
}

static void ids_free_rcu(struct rcu_head *head)
{
	struct socktab__rp_ids *ids = caa_container_of(head, struct socktab__rp_ids, rcu);

	socktab__rcu_cb_enter(ids);
	free(ids);
}

static void ids_free_later(struct socktab__rp_ids *ids)
{
	if (ids)
		socktab__call_rcu(ids, &ids->rcu, ids_free_rcu);
}

/* May @sk take slot @id of @g? -EEXIST when another member holds it. Reuseport lock held. */
static int ids_check_locked(const struct socktab__reuseport *g, const struct socktab_sock *sk,
			    int32_t id)
{
	struct socktab__rp_ids *ids = atomic_load_explicit(&g->ids, memory_order_relaxed);
	struct socktab_sock *m;

	if (id < 0 || !ids || (uint32_t)id >= ids->span)
		return 0;
	m = atomic_load_explicit(&ids->sk[id], memory_order_relaxed);
	return m && m != sk ? -EEXIST : 0;
}

/* Copy the members of slot array @from (NULL: none) into the larger @to. */
static void ids_copy(struct socktab__rp_ids *to, const struct socktab__rp_ids *from)
{
	for (uint32_t i = 0; from && i < from->span; i++)
		atomic_store_explicit(&to->sk[i],
				      atomic_load_explicit(&from->sk[i], memory_order_relaxed),
				      memory_order_relaxed);
}

/* Slots of @g for id @id: the current array if it is large enough, else a larger copy (not yet
 * published), or NULL with no memory. Reuseport lock held. */
static struct socktab__rp_ids *ids_room_locked(const struct socktab__reuseport *g, int32_t id)
{
	struct socktab__rp_ids *ids = atomic_load_explicit(&g->ids, memory_order_relaxed), *n;
	uint32_t span = (uint32_t)id + 1;

	if (ids && (uint32_t)id < ids->span)
		return ids;
	n = calloc(1, sizeof(*n) + span * sizeof(n->sk[0]));
	if (!n)
		return NULL;
	n->span = span;
#ifndef SOCKTAB_NAIVE_ORDER
	ids_copy(n, ids);
#endif
	return n;
}

/* Put @sk in slot @id of @ids (from ids_room_locked) and publish @ids as @g's. */
static void ids_place_locked(struct socktab__reuseport *g, struct socktab__rp_ids *ids,
			     struct socktab_sock *sk, int32_t id)
{
	struct socktab__rp_ids *old = atomic_load_explicit(&g->ids, memory_order_relaxed);

	atomic_store_explicit(&ids->sk[id], sk, memory_order_release);
	if (ids != old) {
		/* Publishes the slots copied above to every selection that loads the pointer. */
		atomic_store_explicit(&g->ids, ids, memory_order_release);
#ifdef SOCKTAB_NAIVE_ORDER
		/* The negative control: the slots are copied after the array is published, so a
		 * selection may meet empty slots of present members (tests/unit/test_rpid.c). */
		ids_copy(ids, old);
#endif
		ids_free_later(old);
	}
	atomic_store_explicit(&g->nids, atomic_load_explicit(&g->nids, memory_order_relaxed) + 1,
			      memory_order_release);
}

/* Empty @sk's slot in @g, if it has one (true then). */
static bool ids_clear_locked(struct socktab__reuseport *g, struct socktab_sock *sk)
{
	struct socktab__rp_ids *ids = atomic_load_explicit(&g->ids, memory_order_relaxed);
	int32_t id = socktab__sk_rp_id(sk);

	if (id < 0 || !ids || (uint32_t)id >= ids->span ||
	    atomic_load_explicit(&ids->sk[id], memory_order_relaxed) != sk)
		return false;
	atomic_store_explicit(&ids->sk[id], NULL, memory_order_release);
	atomic_store_explicit(&g->nids, atomic_load_explicit(&g->nids, memory_order_relaxed) - 1,
			      memory_order_release);
	return true;
}

static void group_free_rcu(struct rcu_head *head)
{
	struct socktab__reuseport *g = caa_container_of(head, struct socktab__reuseport, rcu);

	socktab__rcu_cb_enter(g);
	free(g);
}

/* Join @peer's group (or start one). Caller holds the net's reuseport lock. */
int socktab__reuseport_add_locked(struct socktab_net *net, struct socktab_sock *sk,
				  struct socktab_sock *peer)
{
	struct socktab__reuseport *g, *ng, *own;
	uint32_t n;

	struct socktab__rp_ids *ids = NULL;
	int32_t id = socktab__sk_rp_id(sk);

	SOCKTAB__ASSERT_LOCKED(&net->reuseport_lock);
	own = atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed);
	if (!peer && own)
		return 0; /* reuseport_alloc: the group SO_ATTACH_REUSEPORT_CBPF made stays */
	if (own && atomic_load_explicit(&own->num, memory_order_relaxed) != 1)
		return -EBUSY;
	if (!peer) {
		g = group_alloc(128);
		if (!g)
			return -ENOMEM;
		if (id >= 0) {
			ids = ids_room_locked(g, id);
			if (!ids) {
				free(g);
				return -ENOMEM;
			}
			ids_place_locked(g, ids, sk, id);
		}
		atomic_store_explicit(&g->socks[0], sk, memory_order_release);
		atomic_store_explicit(&g->num, 1, memory_order_relaxed);
		WR(g->incoming_cpu, socktab__sk_incoming_cpu(sk) >= 0);
		WR(g->gen, next_gen());
		atomic_store_explicit(&sk->cold->reuseport_cb, g, memory_order_release);
		return 0;
	}
	g = atomic_load_explicit(&peer->cold->reuseport_cb, memory_order_relaxed);
	n = atomic_load_explicit(&g->num, memory_order_relaxed);
	/* R132: a member's id is its own in the group; what may fail is checked before any change. */
	if (id >= 0) {
		int err = ids_check_locked(g, sk, id);

		if (err)
			return err;
		ids = ids_room_locked(g, id);
		if (!ids)
			return -ENOMEM;
	}
	if (n == g->cap) {
		/* Full: publish a copy twice the size to every member (capacity fits in u16). */
		if (g->cap >= 32768)
			ng = NULL;
		else
			ng = group_alloc(g->cap * 2);
		if (!ng) {
			if (ids && ids != atomic_load_explicit(&g->ids, memory_order_relaxed))
				free(ids);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < n; i++) {
			struct socktab_sock *m =
				atomic_load_explicit(&g->socks[i], memory_order_relaxed);

			atomic_store_explicit(&ng->socks[i], m, memory_order_relaxed);
			atomic_store_explicit(&m->cold->reuseport_cb, ng, memory_order_release);
		}
		atomic_store_explicit(&ng->num, n, memory_order_relaxed);
		WR(ng->incoming_cpu, RD(g->incoming_cpu));
		atomic_store_explicit(&ng->prog, atomic_load_explicit(&g->prog, memory_order_relaxed),
				      memory_order_relaxed);
		atomic_store_explicit(&ng->ids, atomic_load_explicit(&g->ids, memory_order_relaxed),
				      memory_order_relaxed);
		atomic_store_explicit(&ng->nids, atomic_load_explicit(&g->nids, memory_order_relaxed),
				      memory_order_relaxed);
		socktab__call_rcu(g, &g->rcu, group_free_rcu);
		g = ng;
	}
	if (ids)
		ids_place_locked(g, ids, sk, id);
	/* Release, as well as num's: a lookup that read num before a member left and another
	 * came may find the newcomer in this slot without reading num again. */
	atomic_store_explicit(&g->socks[n], sk, memory_order_release);
	atomic_store_explicit(&g->num, n + 1, memory_order_release);
	if (socktab__sk_incoming_cpu(sk) >= 0)
		WR(g->incoming_cpu, RD(g->incoming_cpu) + 1);
	WR(g->gen, next_gen());
	atomic_store_explicit(&sk->cold->reuseport_cb, g, memory_order_release);
	if (own) {
		/* reuseport_add_sock: the one-member group of an attach before bind/listen goes,
		 * with its program and slots; no lookup reached it (the socket was in no table). */
		prog_free_later(atomic_load_explicit(&own->prog, memory_order_relaxed));
		ids_free_later(atomic_load_explicit(&own->ids, memory_order_relaxed));
		socktab__call_rcu(own, &own->rcu, group_free_rcu);
	}
	(void)net;
	return 0;
}

/* Leave the group: the last member takes our place (R35). Caller holds the reuseport lock. */
void socktab__reuseport_detach_locked(struct socktab_sock *sk)
{
	struct socktab__reuseport *g = atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed);
	uint32_t n;

	SOCKTAB__ASSERT_LOCKED(&socktab__sk_net(sk)->reuseport_lock);
	if (!g)
		return;
	n = atomic_load_explicit(&g->num, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++) {
		if (atomic_load_explicit(&g->socks[i], memory_order_relaxed) != sk)
			continue;
		atomic_store_explicit(&g->socks[i],
				      atomic_load_explicit(&g->socks[n - 1], memory_order_relaxed),
				      memory_order_release);
		atomic_store_explicit(&g->num, n - 1, memory_order_release);
		if (socktab__sk_incoming_cpu(sk) >= 0)
			WR(g->incoming_cpu, RD(g->incoming_cpu) - 1);
		ids_clear_locked(g, sk);
		WR(g->gen, next_gen());
		break;
	}
	atomic_store_explicit(&sk->cold->reuseport_cb, NULL, memory_order_release);
	if (n == 1) {
		prog_free_later(atomic_load_explicit(&g->prog, memory_order_relaxed));
		ids_free_later(atomic_load_explicit(&g->ids, memory_order_relaxed));
		socktab__call_rcu(g, &g->rcu, group_free_rcu);
	}
}

void socktab__reuseport_release(struct socktab_sock *sk)
{
	struct socktab_net *net = socktab__sk_net(sk);

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (!atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed))
		return;
	socktab__lock(&net->reuseport_lock);
	socktab__reuseport_detach_locked(sk);
	socktab__unlock(&net->reuseport_lock);
}

#ifdef SOCKTAB_NAIVE_ORDER
/*
 * The negative control (meson -Dnaive_order=true): the program is published before its
 * instructions are written, with a widened window, so a lookup may run a program of zeroes (a
 * load past the payload: the value 0, member 0; tests/unit/test_rpbpf.c).
 */
static void prog_publish_naive(struct socktab__reuseport *g, struct socktab__rp_prog *p)
{
	struct socktab__rp_prog *n = calloc(1, sizeof(*n) + p->len * sizeof(n->insns[0]));

	if (!n) {
		atomic_store_explicit(&g->prog, p, memory_order_release);
		return;
	}
	n->len = p->len;
	atomic_store_explicit(&g->prog, n, memory_order_relaxed);
	for (volatile int i = 0; i < 20000; i++)
		;
	memcpy(n->insns, p->insns, p->len * sizeof(p->insns[0]));
	free(p);
}
#endif

int socktab__reuseport_attach_cbpf(struct socktab_sock *sk, const void *insns, uint32_t len)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct socktab__reuseport *g;
	struct socktab__rp_prog *p, *old;
	int err;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	/* __get_filter (bpf_check_classic, the conversion) and the optmem_max size come first:
	 * a bad program is -EINVAL (too large: -ENOMEM) whatever the socket. */
	if (!insns || len == 0 || len > BPF_MAXINSNS)
		return -EINVAL;
	p = malloc(sizeof(*p) + len * sizeof(p->insns[0]));
	if (!p)
		return -ENOMEM;
	p->len = len;
	memcpy(p->insns, insns, len * sizeof(p->insns[0]));
	err = socktab__cbpf_check(p->insns, len);
	if (err) {
		free(p);
		return err;
	}
	socktab__lock(&net->reuseport_lock);
	g = atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed);
	if (!g && !sk_in_table(sk) && socktab__sk_proto(sk) == SOCKTAB_TCP &&
	    (RD(sk->tw_flags) & SOCKTAB__SOCKF_LISTENED) &&
	    RD(net->kvariant[SOCKTAB_KV_CBPF_LISTENED])) {
		/* R108, kernel variant cbpf_listened: no group for a TCP socket that has listened
		 * and is in no table now (it was disconnected). */
		err = -EINVAL;
	} else if (!g && !sk_in_table(sk) && RD(sk->reuseport)) {
		/* reuseport_attach_prog on an unhashed socket: reuseport_alloc, a group of one. */
		err = socktab__reuseport_add_locked(net, sk, NULL);
		g = atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed);
	} else if (!g) {
		err = -EINVAL; /* no SO_REUSEPORT, or in a table without a group */
	}
	if (err) {
		socktab__unlock(&net->reuseport_lock);
		free(p);
		return err;
	}
	old = atomic_load_explicit(&g->prog, memory_order_relaxed);
#ifndef SOCKTAB_NAIVE_ORDER
	/* Publishes the instructions written above to every lookup that loads the pointer. */
	atomic_store_explicit(&g->prog, p, memory_order_release);
#else
	prog_publish_naive(g, p);
#endif
	socktab__unlock(&net->reuseport_lock);
	prog_free_later(old);
	return 0;
}

int socktab__reuseport_detach_prog(struct socktab_sock *sk)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct socktab__reuseport *g;
	struct socktab__rp_prog *old;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	socktab__lock(&net->reuseport_lock);
	g = atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed);
	if (!g) {
		socktab__unlock(&net->reuseport_lock);
		return RD(sk->reuseport) ? -ENOENT : -EINVAL;
	}
	old = atomic_load_explicit(&g->prog, memory_order_relaxed);
	atomic_store_explicit(&g->prog, NULL, memory_order_release);
	socktab__unlock(&net->reuseport_lock);
	if (!old)
		return -ENOENT;
	prog_free_later(old);
	return 0;
}

int socktab__reuseport_set_id(struct socktab_sock *sk, int id)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct socktab__reuseport *g;
	struct socktab__rp_ids *ids = NULL;
	int err = 0;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (id < -1 || id > SOCKTAB__RP_ID_MAX)
		return -EINVAL;
	socktab__lock(&net->reuseport_lock);
	g = atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed);
	if (g && id != socktab__sk_rp_id(sk))
		err = ids_check_locked(g, sk, id);
	if (g && id != socktab__sk_rp_id(sk) && !err) {
		/* The old slot is emptied first, so that a larger copy of the slots made for the
		 * new id does not carry it. */
		bool placed = ids_clear_locked(g, sk);

		if (id >= 0 && !(ids = ids_room_locked(g, id))) {
			err = -ENOMEM;
			if (placed) /* back where it was: the current slots still have room */
				ids_place_locked(g, atomic_load_explicit(&g->ids,
									 memory_order_relaxed),
						 sk, socktab__sk_rp_id(sk));
		} else {
			if (ids)
				ids_place_locked(g, ids, sk, id);
			WR(g->gen, next_gen());
		}
	}
	if (!err && socktab__sk_lq(sk))
		socktab__sk_lq(sk)->rp_id = id;
	socktab__unlock(&net->reuseport_lock);
	return err;
}

int socktab__reuseport_gen(struct socktab_sock *sk, uint64_t *gen)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct socktab__reuseport *g;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	socktab__lock(&net->reuseport_lock);
	g = atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed);
	if (g)
		*gen = RD(g->gen);
	socktab__unlock(&net->reuseport_lock);
	return g ? 0 : -ENOENT;
}

void socktab__reuseport_set_incoming_cpu(struct socktab_sock *sk, int val)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct socktab__reuseport *g;
	int old;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	/* Always under the lock, also outside a group: a UDP bind by another socket may start a
	 * group for this one (udp.c rp_join_locked) without its socket lock, and counts the value
	 * it reads then. The group is read under the lock too: a join may have replaced it. */
	socktab__lock(&net->reuseport_lock);
	old = socktab__sk_incoming_cpu(sk);
	socktab__sk_set_incoming_cpu(sk, val);
	g = atomic_load_explicit(&sk->cold->reuseport_cb, memory_order_relaxed);
	if (g && old < 0 && val >= 0)
		WR(g->incoming_cpu, RD(g->incoming_cpu) + 1);
	else if (g && old >= 0 && val < 0)
		WR(g->incoming_cpu, RD(g->incoming_cpu) - 1);
	socktab__unlock(&net->reuseport_lock);
}

/* A member a lookup may be handed: not connected, and not in the middle of connect(). */
static bool member_eligible(const struct socktab_sock *m, uint8_t *flags)
{
	/* The mark first (acquire), so that a cleared mark shows the state it left. */
	uint8_t f = atomic_load_explicit(&m->tw_flags, memory_order_acquire);

	*flags = f;
	return !(f & SOCKTAB__UDPF_CONNECTING) && RD(m->state) != SOCKTAB_TCP_ESTABLISHED;
}

/*
 * R110 (run_bpf_filter): the value of @sk's group's program over this thread's payload, with
 * the lookup's CPU *cpu (SOCKTAB__CPU_UNASKED until asked). False when it has none (it loaded
 * what socktab does not have, cbpf.c): the hash decides.
 */
static bool prog_run_rcu(const struct socktab__rp_prog *p, const struct socktab_sock *sk,
			 int *cpu, uint32_t *idx)
{
	/* The members share the family and IPV6_V6ONLY (R34): only a dual-stack IPv6 group
	 * receives both kinds of packet, and this lookup's is not known here. */
	struct socktab__cbpf_pkt pkt = {
		.data = socktab__rx_payload,
		.len = socktab__rx_payload_len,
		.tcp = socktab__sk_proto(sk) == SOCKTAB_TCP,
		.l3proto = sk->family == AF_INET ? ETH_P_IP
			   : socktab__ipv6_only(sk) ? ETH_P_IPV6 : -1,
		.cpu = cpu,
	};

	return socktab__cbpf_run(p->insns, p->len, &pkt, idx);
}

/*
 * R35's walk: from @i0 round the @n sockets of @socks (members, or slots by id with holes),
 * passing over holes and members a lookup may not have; without SO_INCOMING_CPU users the first
 * member left is the pick, with them the first one bound to the lookup's CPU, else the first one
 * left. Caller is in an RCU section.
 */
static struct socktab_sock *walk_rcu(const struct socktab__reuseport *g,
				     struct socktab_sock *_Atomic const *socks, uint32_t n,
				     uint32_t i0, int *cpu)
{
	struct socktab_sock *first = NULL;

	for (uint32_t k = 0; k < n; k++) {
		struct socktab_sock *m = atomic_load_explicit(&socks[(i0 + k) % n],
							      memory_order_acquire);
		uint8_t f;

		/* Connected UDP members are skipped, and so is one whose connect() is rewriting its
		 * key. */
		if (!m || !member_eligible(m, &f))
			continue;
		if (!RD(g->incoming_cpu) || socktab__incpu_match(socktab__sk_incpu_hint(m, f), cpu))
			return m;
		if (!first)
			first = m;
	}
	return first;
}

/* R133: selection by stable id. The program's value names a slot (hash when it names none the
 * lookup may have); the hash indexes the slots, not the members. */
static __attribute__((noinline)) struct socktab_sock *
select_by_id_rcu(const struct socktab__reuseport *g, const struct socktab__rp_ids *ids,
		 const struct socktab__rp_prog *p, const struct socktab_sock *sk, uint32_t hash,
		 int *cpu)
{
	uint32_t span = ids->span, idx;
	uint8_t f;

	if (p && prog_run_rcu(p, sk, cpu, &idx)) {
		struct socktab_sock *m = idx < span ? atomic_load_explicit(&ids->sk[idx],
									   memory_order_acquire)
						    : NULL;

		if (m && member_eligible(m, &f))
			return m;
	}
	return walk_rcu(g, ids->sk, span, (uint32_t)(((uint64_t)hash * span) >> 32), cpu);
}

/*
 * R35: reuseport_select_sock_by_hash, after the group's program (R110): its value indexes the
 * members read before, and a value out of range, or naming a member a lookup may not have,
 * leaves the pick to the hash. With stable ids in use, R133 instead. Caller is in an RCU
 * section.
 */
struct socktab_sock *socktab__reuseport_select_rcu(struct socktab_sock *sk, uint32_t hash,
						   int *cpu)
{
	struct socktab__reuseport *g = atomic_load_explicit(&sk->cold->reuseport_cb,
							    memory_order_acquire);
	struct socktab__rp_prog *p;
	uint32_t n, idx;

	SOCKTAB__ASSERT_RCU();
	if (!g)
		return NULL;
	n = atomic_load_explicit(&g->num, memory_order_acquire);
	if (!n)
		return NULL;
	p = atomic_load_explicit(&g->prog, memory_order_acquire);
	if (atomic_load_explicit(&g->nids, memory_order_acquire)) {
		struct socktab__rp_ids *ids = atomic_load_explicit(&g->ids, memory_order_acquire);

		if (ids)
			return select_by_id_rcu(g, ids, p, sk, hash, cpu);
	}
	if (p && prog_run_rcu(p, sk, cpu, &idx)) {
		struct socktab_sock *m = idx < n ? atomic_load_explicit(&g->socks[idx],
									memory_order_acquire)
						 : NULL;
		uint8_t f;

		if (m && member_eligible(m, &f))
			return m;
	}
	return walk_rcu(g, g->socks, n, (uint32_t)(((uint64_t)hash * n) >> 32), cpu);
}
