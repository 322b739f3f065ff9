/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two limits that keep idle or greedy peers from taking every connection of --max-conns:
 *
 * Per source (--max-conns-per-source N): passive connections, from the ACK that completes the
 * handshake (a request entry's, or one with a valid SYN cookie) to the end, count per peer
 * address; half-open ones are request entries, bounded by each listener's SYN queue instead
 * (syncookie.c). A SYN from an address that holds N already is refused with a RST (RST|ACK, as for a closed
 * port): the peer learns at once, where a drop would make it retry for a minute. The counts
 * sit in an open-addressing table (linear probing, deletion by backward shift, so no
 * tombstones), keyed by SipHash under the SYN-cookie key so that a peer cannot choose
 * colliding addresses. The default is --max-conns / 8: one address, or one NAT, can hold an
 * eighth of the connections. Active connections (--connect) are not counted.
 *
 * Idle timeout (--idle-timeout S): a connection that has received no segment for S seconds
 * is reset. The stack's list of connections is kept in the order they were last heard from
 * (conn_touch moves a connection to the front on each segment, in O(1)), so expiry only looks
 * at the back. A RST rather than a FIN: the point is to give the slot back now. A FIN would
 * leave the connection in FIN_WAIT1 retransmitting to a peer that is likely gone (up to the
 * retry limit, 42 s), then in TIME_WAIT, holding the slot and the 4-tuple for the exact
 * clients the timeout is for. A peer that is alive learns at once (ECONNRESET) and can
 * reconnect. The timeout applies in every state: handshakes have their own shorter bounds,
 * and a zero-window peer that answers our probes is not idle.
 */
#include <stdlib.h>
#include <string.h>

#include "stack.h"

#define IDLE_BUDGET 256       /* connections reset per call at most */
#define SRC_MIN_SLOTS 1024

struct src_entry {
	union st_addr addr;
	uint8_t family;       /* 0: free slot */
	uint32_t count;
};

struct src_table {
	struct src_entry *slot;
	uint32_t mask;        /* slots - 1 */
	uint32_t used;
};

static uint32_t src_hash(const struct stack *st, int family, const union st_addr *a)
{
	return (uint32_t)st_siphash(st->cookie_key[0], a, family == AF_INET ? 4 : 16);
}

static bool addr_eq(const struct src_entry *e, int family, const union st_addr *a)
{
	return e->family == family &&
	       !memcmp(&e->addr, a, family == AF_INET ? 4 : 16);
}

/* The slot of @a, or the free slot where it would go. */
static struct src_entry *src_find(const struct stack *st, int family, const union st_addr *a)
{
	struct src_table *t = st->src;
	uint32_t i = src_hash(st, family, a) & t->mask;

	while (t->slot[i].family && !addr_eq(&t->slot[i], family, a))
		i = (i + 1) & t->mask;
	return &t->slot[i];
}

static bool src_grow(struct stack *st)
{
	struct src_table *t = st->src, n;

	n.mask = t->mask ? t->mask * 2 + 1 : SRC_MIN_SLOTS - 1;
	n.used = t->used;
	n.slot = calloc((size_t)n.mask + 1, sizeof(*n.slot));
	if (!n.slot)
		return false;
	struct src_table old = *t;

	*t = n;
	for (uint32_t i = 0; old.slot && i <= old.mask; i++)
		if (old.slot[i].family)
			*src_find(st, old.slot[i].family, &old.slot[i].addr) = old.slot[i];
	free(old.slot);
	return true;
}

static bool src_enabled(struct stack *st)
{
	if (st->cfg.max_conns_per_source <= 0)
		return false;
	if (!st->src) {
		st->src = calloc(1, sizeof(*st->src));
		if (!st->src)
			return false;
		syncookie_keys(st); /* the table hashes with the SYN-cookie key */
	}
	return true;
}

bool src_full(struct stack *st, int family, const union st_addr *addr)
{
	if (!src_enabled(st) || !st->src->slot)
		return false;
	const struct src_entry *e = src_find(st, family, addr);

	return e->family && e->count >= (uint32_t)st->cfg.max_conns_per_source;
}

void src_enter(struct stack *st, struct conn *c)
{
	struct src_entry *e;

	if (!src_enabled(st))
		return;
	if ((st->src->used + 1) * 2 > st->src->mask + 1 && !src_grow(st))
		return; /* no memory: this connection goes uncounted */
	e = src_find(st, c->family, &c->raddr);
	if (!e->family) {
		e->family = (uint8_t)c->family;
		e->addr = c->raddr;
		e->count = 0;
		st->src->used++;
	}
	e->count++;
	c->xflags |= XF_SRC;
}

void src_leave(struct stack *st, struct conn *c)
{
	struct src_table *t = st->src;
	struct src_entry *e;
	uint32_t i, j;

	if (!(c->xflags & XF_SRC))
		return;
	c->xflags &= (uint8_t)~XF_SRC;
	e = src_find(st, c->family, &c->raddr);
	if (!e->family || --e->count)
		return;
	/* Backward-shift deletion: move later entries of the probe run into the hole when
	 * their home slot is not between the hole and them. */
	i = (uint32_t)(e - t->slot);
	for (j = (i + 1) & t->mask; t->slot[j].family; j = (j + 1) & t->mask) {
		uint32_t home = src_hash(st, t->slot[j].family, &t->slot[j].addr) & t->mask;

		if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
			t->slot[i] = t->slot[j];
			i = j;
		}
	}
	t->slot[i].family = 0;
	t->used--;
}

void src_free(struct stack *st)
{
	if (st->src)
		free(st->src->slot);
	free(st->src);
	st->src = NULL;
}

void conn_touch(struct stack *st, struct conn *c)
{
	c->rx_ns = st->now_ns;
	if (st->conns == c)
		return;
	/* unlink (c is not the head, so it has a prev) */
	c->prev->next = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		st->conns_tail = c->prev;
	c->prev = NULL;
	c->next = st->conns;
	st->conns->prev = c;
	st->conns = c;
}

void idle_expire(struct stack *st)
{
	uint64_t limit = (uint64_t)st->cfg.idle_timeout * 1000000000u;
	struct conn *c;

	if (!st->cfg.idle_timeout)
		return;
	for (int n = 0; n < IDLE_BUDGET && (c = st->conns_tail) && c->rx_ns + limit <= st->now_ns;
	     n++) {
		if (socktab_get_state(c->sk) != SOCKTAB_TCP_SYN_SENT)
			tcp_send_raw(st, c->family, &c->laddr, &c->raddr, c->lport, c->rport,
				     c->tw.snd_nxt, 0, TH_RST, 0, NULL, 0);
		st->c.tcp_idle_closed++;
		st->c.tcp_rst_sent++;
		conn_abort(st, c);
	}
}
