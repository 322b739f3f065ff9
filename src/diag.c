/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Socket dumps (the role inet_diag plays for `ss`): a cursor walks lhash2, then ehash, then the
 * UDP port hash, one slot at a time. Each slot is copied into the cursor under that slot's lock
 * (the ehash stripe lock, the lhash2 or UDP slot lock), which orders the copy against every
 * insert and removal in the slot: an entry is either wholly there or not, and an entry that
 * stays in its slot for the whole walk is copied exactly once. Entries move between slots only
 * when their key changes (a UDP connect, a listener that closes), so a moved one may be missed,
 * as inet_diag may miss it. The cursor holds no lock and no reference between calls.
 */
#include <stdlib.h>

#include "addr.h"
#include "ehash.h"
#include "udp.h"

#include "socktab/diag.h"

enum { PH_LISTEN, PH_EHASH, PH_UDP, PH_DONE };

struct socktab_diag_cursor {
	struct socktab_net *net;
	struct socktab_diag_filter f;
	int phase;
	uint32_t slot;              /* next slot of the phase's table */
	struct socktab_diag_entry *buf; /* entries of the last slot copied */
	uint32_t n, next, cap;
};

struct socktab_diag_cursor *socktab_diag_open(struct socktab_net *net,
					      const struct socktab_diag_filter *filter)
{
	struct socktab_diag_cursor *c;

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_diag_open()");
	if (!net || (filter && ((filter->proto && filter->proto != SOCKTAB_TCP &&
				 filter->proto != SOCKTAB_UDP) ||
				(filter->family && filter->family != AF_INET &&
				 filter->family != AF_INET6)))) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->net = net;
	if (filter)
		c->f = *filter;
	c->phase = c->f.proto == SOCKTAB_UDP ? PH_UDP : PH_LISTEN;
	return c;
}

void socktab_diag_close(struct socktab_diag_cursor *c)
{
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_diag_close()");
	if (!c)
		return;
	free(c->buf);
	free(c);
}

/* Does @sk (read under its slot lock) pass the filter? */
static bool wanted(const struct socktab_diag_cursor *c, const struct socktab_sock *sk)
{
	const struct socktab_diag_filter *f = &c->f;
	int st = RD(sk->state);

	if (socktab__sk_net(sk) != c->net || st == SOCKTAB__FREE)
		return false;
	if (st == SOCKTAB_TCP_TIME_WAIT) /* inet_diag filters a minisock on its substate */
		st = RD(((struct socktab_sock *)sk)->tw_flags) & SOCKTAB__TWF_SUBSTATE;
	if (st == SOCKTAB_TCP_NEW_SYN_RECV) /* and a request as SYN_RECV (inet_req_diag_fill) */
		st = SOCKTAB_TCP_SYN_RECV;
	if (f->states && !(f->states & (1u << st)))
		return false;
	if (f->family && sk->family != f->family)
		return false;
	if (f->lport && socktab__sk_num(sk) != f->lport)
		return false;
	if (f->rport && ntohs(socktab__sk_dport(sk)) != f->rport)
		return false;
	return true;
}

/* Copy @sk into the cursor's buffer. Caller holds the slot lock. */
static int push(struct socktab_diag_cursor *c, const struct socktab_sock *sk)
{
	struct socktab_diag_entry *e;
	struct in6_addr a;
	int family = sk->family, st = RD(sk->state);
	uint32_t dev = RD(sk->bound_dev_if);

	if (c->n == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 16;
		struct socktab_diag_entry *nb = realloc(c->buf, cap * sizeof(*nb));

		if (!nb)
			return -ENOMEM;
		c->buf = nb;
		c->cap = cap;
	}
	e = &c->buf[c->n++];
	memset(e, 0, sizeof(*e));
	e->proto = socktab__sk_proto(sk);
	e->family = family;
	e->state = st == SOCKTAB_TCP_NEW_SYN_RECV ? SOCKTAB_TCP_SYN_RECV : st;
	e->bound_dev_if = (int)dev;
	a = socktab__sk_v6_saddr(sk);
	socktab__make_sockaddr(&e->local, family, &a, htons(socktab__sk_num(sk)), dev);
	/* Every TCP entry but a listener has a peer, remote port 0 included (a connect() to port
	 * 0 is allowed); a UDP socket has one once connected. */
	if (socktab__sk_proto(sk) == SOCKTAB_TCP ? st != SOCKTAB_TCP_LISTEN
						 : st == SOCKTAB_TCP_ESTABLISHED) {
		a = socktab__sk_v6_daddr(sk);
		socktab__make_sockaddr(&e->remote, family, &a, socktab__sk_dport(sk), dev);
	}
	if (st == SOCKTAB_TCP_TIME_WAIT) {
		uint64_t now = socktab__now(c->net);
		uint64_t exp = RD(((struct socktab__tw *)sk)->expire_ns);

		e->timewait = 1;
		e->state = RD(((struct socktab_sock *)sk)->tw_flags) & SOCKTAB__TWF_SUBSTATE;
		e->expires_ms = exp > now ? (exp - now) / 1000000u : 0;
	}
	return 0;
}

/* Copy the wanted entries of one chain. Caller holds the chain's lock. */
static int copy_chain(struct socktab_diag_cursor *c, uintptr_t p, bool udp1)
{
	for (; !socktab__is_nulls(p);) {
		/* A socket's line starts with its node; a UDP primary link is in its UDP part. */
		const struct socktab_sock *sk =
			udp1 ? socktab__udp_ext_sk((const struct socktab__udp_ext *)(
				       p - offsetof(struct socktab__udp_ext, node1)))
			     : (const struct socktab_sock *)p;
		int err;

		if (wanted(c, sk) && (err = push(c, sk)))
			return err;
		p = atomic_load_explicit(&((const struct socktab__hnode *)p)->next,
					 memory_order_relaxed);
	}
	return 0;
}

/* After a slot's copy: on failure (no memory) forget it, so a retry copies the slot again. */
static int slot_done(struct socktab_diag_cursor *c, int err)
{
	if (err)
		c->n = 0;
	else
		c->slot++;
	return err;
}

/* Copy the next slot of the current phase into the buffer; moves to the next phase at the end
 * of a table. */
static int fill(struct socktab_diag_cursor *c)
{
	struct socktab__tables *t = c->net->tab;
	struct socktab__udp_table *u = c->net->udp;
	pthread_mutex_t *l;
	uintptr_t first;
	int err;

	c->n = c->next = 0;
	switch (c->phase) {
	case PH_LISTEN:
		if (c->slot > t->lhash2_mask)
			break;
		l = socktab__lhead_lock(t, &t->lhash2[c->slot]);
		socktab__lock(l);
		first = atomic_load_explicit(&t->lhash2[c->slot].head.first, memory_order_relaxed);
		err = copy_chain(c, first, false);
		socktab__unlock(l);
		return slot_done(c, err);
	case PH_EHASH:
		if (c->slot > t->ehash_mask)
			break;
		l = socktab__ehash_lock(t, c->slot);
		socktab__lock(l);
		first = socktab__chead_load(&t->ehash[c->slot].head, memory_order_relaxed);
		err = copy_chain(c, first, false);
		socktab__unlock(l);
		return slot_done(c, err);
	case PH_UDP:
		if (c->slot > u->mask)
			break;
		l = socktab__uslot1_lock(u, &u->hash[c->slot]);
		socktab__lock(l);
		first = atomic_load_explicit(&u->hash[c->slot].head.first, memory_order_relaxed);
		err = copy_chain(c, first, true);
		socktab__unlock(l);
		return slot_done(c, err);
	default:
		return 0;
	}
	/* This table is done. */
	c->slot = 0;
	if (c->phase == PH_UDP || (c->phase == PH_EHASH && c->f.proto == SOCKTAB_TCP))
		c->phase = PH_DONE;
	else
		c->phase++;
	return 0;
}

int socktab_diag_next(struct socktab_diag_cursor *c, struct socktab_diag_entry *e)
{
	int err;

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_diag_next()");
	if (!c || !e)
		return -EINVAL;
	while (c->next == c->n) {
		if (c->phase == PH_DONE)
			return 0;
		err = fill(c);
		if (err)
			return err;
	}
	*e = c->buf[c->next++];
	return 1;
}
