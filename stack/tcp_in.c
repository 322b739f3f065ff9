/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TCP input. A segment is checked, then socktab says whose it is (lk_tcp: connections and
 * TIME_WAIT entries first, then listeners), and what it found decides the path:
 *   nothing          a reset, by RFC 793's rule (tcp_send_reset)
 *   TIME_WAIT entry  tcp_tw.c
 *   listener         socktab_syn_decide() says what a SYN gets: a request entry and a
 *                    SYN-ACK (syncookie.c), a SYN cookie, or nothing; an ACK with a valid
 *                    cookie makes an established child (socktab_req_cookie_child)
 *   request entry    the handshake's final ACK: socktab_req_complete() makes the child
 *   connection       the state machine below, on the struct conn in the socket's area
 * Every state change goes through socktab_set_state(), so that socktab's view (lookups, ss,
 * what close() leaves behind) is the connection's.
 *
 * Simplifications: no reassembly queue (an out-of-order segment gets a duplicate ACK and is
 * dropped; the peer retransmits), no simultaneous open, no urgent data.
 */
#include <errno.h>
#include <string.h>

#include "stack.h"

static bool seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Header length, checksum and options. False: drop the segment. */
static bool seg_parse(const struct pkt *p, struct seg *s)
{
	const uint8_t *t = p->l4;
	size_t doff;

	if (p->l4_len < 20)
		return false;
	doff = (size_t)(t[12] >> 4) * 4;
	if (doff < 20 || doff > p->l4_len)
		return false;
	if (csum_fold(csum_add(csum_pseudo(p->family, &p->src, &p->dst, IPPROTO_TCP, p->l4_len),
			       t, p->l4_len)) != 0)
		return false;
	memset(s, 0, sizeof(*s));
	memcpy(&s->sport, t, 2);
	memcpy(&s->dport, t + 2, 2);
	s->seq = get32(t + 4);
	s->ack = get32(t + 8);
	s->flags = t[13] & 0x3f;
	s->wnd = (uint16_t)(t[14] << 8 | t[15]);
	for (size_t i = 20; i < doff;) { /* options: only MSS matters to us */
		size_t olen;

		if (t[i] == 0)
			break;
		if (t[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= doff || (olen = t[i + 1]) < 2 || i + olen > doff)
			return false;
		if (t[i] == 2 && olen == 4)
			s->mss = (uint16_t)(t[i + 2] << 8 | t[i + 3]);
		i += olen;
	}
	s->data = t + doff;
	s->len = (uint32_t)(p->l4_len - doff);
	return true;
}

/* The MSS we use toward a peer: what it announced (RFC 1122 defaults if nothing: 536 for IPv4,
 * 1220 for IPv6), at most what our MTU allows. */
static uint16_t mss_for(int family, uint16_t peer_mss)
{
	uint16_t ours = (uint16_t)(ST_MTU - ip_hdr_len(family) - 20);
	uint16_t m = peer_mss ? peer_mss : family == AF_INET ? 536 : 1220;

	return m >= 64 && m < ours ? m : ours;
}

static void set_mss(struct conn *c, uint16_t peer_mss)
{
	uint16_t m = mss_for(c->family, peer_mss);

	if (m < c->mss)
		c->mss = m;
}

static void sync_input(struct stack *st, const struct seg *s, struct conn *c);

/*
 * An ESTABLISHED child of @listener the stack owns (accepted): its area becomes a connection
 * (peer sequence number @irs + 1, ours @iss + 1).
 */
static struct conn *child_conn(struct stack *st, const struct pkt *p, const struct seg *s,
			       struct socktab_sock *listener, struct socktab_sock *child,
			       uint32_t iss, uint32_t irs)
{
	struct conn *c = socktab_sock_priv(child);

	memset(c, 0, sizeof(*c)); /* the request's area was copied to its start */
	conn_link(st, c, child, p->family, &p->dst, s->dport, &p->src, s->sport);
	c->app = ((struct conn *)socktab_sock_priv(listener))->app;
	c->iss = iss;
	c->snd_una = iss + 1;
	c->tw.snd_nxt = iss + 1;
	c->tw.rcv_nxt = irs + 1;
	c->snd_wnd = s->wnd;
	src_enter(st, c);
	st->c.tcp_accepted++;
	return c;
}

/*
 * A child the library made ESTABLISHED in @listener's accept queue (socktab_req_cookie_child):
 * serve has no accept step of its own, so socktab_accept() takes it at once and it becomes a
 * connection (child_conn). The accept queue therefore never holds more than this one child, and
 * what bounds the stack's connections is --max-conns, checked before. The child comes with the
 * caller's reference, which is released here. NULL: none (counted).
 */
static struct conn *child_accept(struct stack *st, const struct pkt *p, const struct seg *s,
				 struct socktab_sock *listener, struct socktab_sock *child,
				 uint32_t iss, uint32_t irs)
{
	struct socktab_sock *sk;

	/* Older children first (there are none while each is accepted as it is made): closed. */
	while ((sk = socktab_accept(listener)) && sk != child)
		socktab_close(sk);
	if (!sk) {
		socktab_sock_put(child);
		st->c.tcp_syn_dropped++;
		return NULL;
	}
	socktab_sock_put(child); /* the accept queue's hand-over: the stack owns it now */
	return child_conn(st, p, s, listener, child, iss, irs);
}

/*
 * An ACK reached a listener: the third segment of a handshake answered with a SYN cookie, or
 * a stray. A valid cookie (syncookie.c) makes the connection: a child, established at once
 * (socktab_req_cookie_child), with the sequence numbers and the MSS the cookie holds; then the
 * segment's data and FIN are taken as in any established connection. True: the segment was
 * used (or dropped for want of room); false: the caller sends a reset.
 */
static bool cookie_ack_input(struct stack *st, const struct pkt *p, const struct seg *s,
			     struct socktab_sock *listener)
{
	uint16_t mss = syncookie_check(st, p, s, socktab_sock_priv(listener));
	struct sockaddr_storage local, remote;
	struct socktab_sock *child;
	struct conn *c;
	socklen_t len = p->family == AF_INET ? sizeof(struct sockaddr_in)
					     : sizeof(struct sockaddr_in6);

	if (!mss)
		return false;
	if (st->n_conns >= (uint32_t)st->cfg.max_conns || src_full(st, p->family, &p->src)) {
		st->c.tcp_syn_dropped++; /* as a full accept queue: the kernel drops it too */
		return true;
	}
	sockaddr_make(&local, p->family, &p->dst, s->dport);
	sockaddr_make(&remote, p->family, &p->src, s->sport);
	child = socktab_req_cookie_child(listener, (struct sockaddr *)&local,
					 (struct sockaddr *)&remote, len, st->ifindex, 0,
					 SOCKTAB_TCP_ESTABLISHED);
	if (!child) {
		st->c.tcp_syn_dropped++;
		return true;
	}
	c = child_accept(st, p, s, listener, child, s->ack - 1, s->seq - 1);
	if (!c)
		return true;
	set_mss(c, mss);
	st->c.tcp_cookies_ok++;
	app_open(st, c);
	sync_input(st, s, c);
	return true;
}

/*
 * A segment reached a listener. A SYN from a peer address over --max-conns-per-source gets a
 * reset (limits.c); otherwise socktab_syn_decide() says whether it makes a request entry in
 * the listener's SYN queue, with a SYN-ACK (syncookie.c); gets a SYN-ACK holding a cookie and
 * leaves nothing behind; or is dropped. An ACK may complete a cookie's handshake; otherwise it
 * gets a reset (no such connection); anything else is dropped. @isn is nonzero when the SYN
 * takes over a TIME_WAIT entry (its sequence space continues).
 */
void tcp_listen_input(struct stack *st, const struct pkt *p, const struct seg *s,
		      struct socktab_sock *listener, uint32_t isn)
{
	struct conn *l = socktab_sock_priv(listener);

	if (s->flags & TH_RST)
		return;
	if (s->flags & TH_ACK) {
		if (!cookie_ack_input(st, p, s, listener))
			tcp_send_reset(st, p, s);
		return;
	}
	if (!(s->flags & TH_SYN))
		return;
	if (src_full(st, p->family, &p->src)) {
		st->c.tcp_src_refused++;
		tcp_send_reset(st, p, s);
		return;
	}
	if (st->n_conns >= (uint32_t)st->cfg.max_conns) { /* as a full accept queue: drop, the
							    * peer retries */
		st->c.tcp_syn_dropped++;
		return;
	}
	switch (socktab_syn_decide(listener, isn ? SOCKTAB_SYN_TW_RECYCLE : 0)) {
	case SOCKTAB_SYN_QUEUE:
		if (req_open(st, p, s, listener, isn ? isn : tcp_isn(st),
			     mss_for(p->family, s->mss)))
			st->c.tcp_syn_dropped++;
		return;
	case SOCKTAB_SYN_COOKIE:
		syncookie_send(st, p, s, l);
		return;
	default: /* SOCKTAB_SYN_DROP */
		st->c.tcp_syn_dropped++;
		return;
	}
}

/*
 * A segment found request entry @req (SOCKTAB_TCP_NEW_SYN_RECV): the SYN again (our SYN-ACK was
 * lost: send it again), a RST at the peer's next sequence number (drop the request), or the
 * final ACK. An ACK of our SYN-ACK completes the handshake (socktab_req_complete): the child
 * takes the request's place in ehash and is handed over at once, ESTABLISHED, and the rest of
 * the segment (data, FIN) is taken as in any connection; an ACK of anything else gets a reset.
 * While --max-conns connections are open, or the accept queue is full (SOCKTAB_REQ_DROP), the
 * ACK is dropped and the request stays: the peer's retransmission, or its data, tries again. A
 * request that left its queue without a child (its listener closed, or it was dropped) gets a
 * reset (SOCKTAB_REQ_RESET). -ENOENT when another thread completed it first
 * (SOCKTAB_REQ_STOLEN): the caller looks the segment up again. 0 otherwise.
 */
static int req_input(struct stack *st, const struct pkt *p, const struct seg *s,
		     struct socktab_sock *req)
{
	struct req_part *r = socktab_req_priv(req), rq;
	struct socktab_sock *listener, *child = NULL;
	struct conn *c;

	if (!r)
		return 0;
	if (s->flags & TH_RST) {
		if (s->seq == r->irs + 1) {
			rq = *r;
			if (!socktab_req_drop(req))
				req_done(st, req, &rq);
		}
		return 0;
	}
	if (s->flags & TH_SYN) {
		if (s->seq == r->irs)
			req_synack(st, p->family, &p->src, s->sport, s->dport, r);
		return 0;
	}
	if (!(s->flags & TH_ACK))
		return 0;
	if (s->ack != r->iss + 1) {
		tcp_send_reset(st, p, s);
		return 0;
	}
	if (st->n_conns >= (uint32_t)st->cfg.max_conns) {
		st->c.tcp_syn_dropped++;
		return 0;
	}
	rq = *r;
	switch (socktab_req_complete(req, SOCKTAB_TCP_ESTABLISHED, SOCKTAB_REQ_ACCEPT, &child,
				     &listener, NULL)) {
	case SOCKTAB_REQ_CHILD:
		break;
	case SOCKTAB_REQ_STOLEN:
		return -ENOENT;
	case SOCKTAB_REQ_RESET:
		req_done(st, req, &rq);
		tcp_send_reset(st, p, s);
		return 0;
	default: /* SOCKTAB_REQ_DROP: the accept queue is full, or no memory */
		st->c.tcp_syn_dropped++;
		return 0;
	}
	req_done(st, req, &rq);
	c = child_conn(st, p, s, listener, child, rq.iss, rq.irs);
	socktab_sock_put(listener);
	c->mss = rq.mss;
	app_open(st, c);
	sync_input(st, s, c);
	return 0;
}

/* SYN_SENT: our SYN is out; a SYN-ACK that acknowledges it establishes the connection, a reset
 * that does refuses it (ECONNREFUSED to a socket user). */
static void syn_sent_input(struct stack *st, const struct pkt *p, const struct seg *s,
			   struct conn *c)
{
	if (s->flags & TH_ACK) {
		if (s->ack != c->iss + 1) {
			tcp_send_reset(st, p, s);
			return;
		}
		if (s->flags & TH_RST) {
			st->c.tcp_refused++;
			conn_abort(st, c);
			return;
		}
	}
	if ((s->flags & (TH_SYN | TH_ACK | TH_RST)) != (TH_SYN | TH_ACK))
		return;
	c->tw.rcv_nxt = s->seq + 1;
	c->snd_una = s->ack;
	c->snd_wnd = s->wnd;
	c->retries = 0;
	set_mss(c, s->mss);
	rto_disarm(st, c);
	socktab_set_state(c->sk, SOCKTAB_TCP_ESTABLISHED);
	c->flags |= CF_ACK_NOW;
	app_open(st, c);
	tcp_output(st, c);
}

/*
 * The synchronized states (ESTABLISHED, FIN_WAIT1/2, CLOSE_WAIT, CLOSING, LAST_ACK), in the
 * order of RFC 793's "segment arrives": sequence number, RST, SYN, ACK, data, FIN.
 */
static void sync_input(struct stack *st, const struct seg *s, struct conn *c)
{
	const uint8_t *data = s->data;
	uint32_t seq = s->seq, len = s->len;
	bool fin = s->flags & TH_FIN;
	int state;

	if (s->flags & TH_RST) {
		/* RFC 5961: only a reset at exactly rcv_nxt ends the connection; one elsewhere
		 * in the window gets a challenge ACK. */
		if (seq == c->tw.rcv_nxt) {
			st->c.tcp_rst_rcvd++;
			conn_abort(st, c);
		} else if (!seq_lt(seq, c->tw.rcv_nxt) && seq_lt(seq, c->tw.rcv_nxt + ST_RCV_WND)) {
			tcp_send_ack(st, c);
		}
		return;
	}
	if ((s->flags & TH_SYN) || !(s->flags & TH_ACK)) {
		if (s->flags & TH_SYN) /* RFC 5961 4.2: challenge ACK */
			tcp_send_ack(st, c);
		return;
	}
	if (seq_lt(seq, c->tw.rcv_nxt)) { /* starts with bytes we have: trim them */
		uint32_t dup = c->tw.rcv_nxt - seq;

		if (dup >= len + fin) { /* nothing new: a retransmission */
			if (len || fin)
				tcp_send_ack(st, c);
			return;
		}
		data += dup;
		len -= dup;
		seq = c->tw.rcv_nxt;
	}
	if (seq != c->tw.rcv_nxt) { /* a hole before it: ask again with a duplicate ACK */
		tcp_send_ack(st, c);
		return;
	}
	if (seq_lt(c->tw.snd_nxt, s->ack)) { /* acknowledges what we never sent */
		tcp_send_ack(st, c);
		return;
	}
	if (seq_lt(c->snd_una, s->ack))
		tcp_ack_advance(st, c, s->ack);
	c->snd_wnd = s->wnd;
	c->probes = 0; /* the peer answers: a zero window is probed on (tcp_out.c, rto_fire) */

	state = socktab_get_state(c->sk);
	if (c->flags & CF_FIN_ACKED) {
		if (state == SOCKTAB_TCP_FIN_WAIT1) {
			socktab_set_state(c->sk, SOCKTAB_TCP_FIN_WAIT2);
			state = SOCKTAB_TCP_FIN_WAIT2;
		} else if (state == SOCKTAB_TCP_CLOSING) {
			conn_to_timewait(st, c);
			return;
		} else if (state == SOCKTAB_TCP_LAST_ACK) {
			conn_finish(st, c);
			return;
		}
	}

	if (len && (state == SOCKTAB_TCP_ESTABLISHED || state == SOCKTAB_TCP_FIN_WAIT1 ||
		    state == SOCKTAB_TCP_FIN_WAIT2)) {
		uint32_t room = conn_rcv_space(st, c);

		if (len > room) { /* beyond our window: the peer sends it again later */
			len = room;
			fin = false;
		}
		c->flags |= CF_ACK_NOW;
		if (len) {
			c->tw.rcv_nxt += len;
			/* After the application has closed, bytes are acknowledged and dropped. */
			if (!(c->flags & CF_APP_CLOSED))
				app_data(st, c, data, len);
		}
	} else if (len) { /* data after the peer's FIN: not possible, ignore the segment */
		fin = false;
	}

	if (fin && !(c->flags & CF_FIN_RCVD)) {
		c->tw.rcv_nxt++;
		c->flags |= CF_FIN_RCVD | CF_ACK_NOW;
		state = socktab_get_state(c->sk);
		if (state == SOCKTAB_TCP_ESTABLISHED) {
			socktab_set_state(c->sk, SOCKTAB_TCP_CLOSE_WAIT);
			app_fin(st, c);
		} else if (state == SOCKTAB_TCP_FIN_WAIT1) {
			socktab_set_state(c->sk, SOCKTAB_TCP_CLOSING);
		}
	}

	/* FIN_WAIT2: our FIN is acknowledged and the application has closed, so the socket is
	 * an orphan; as in the kernel it becomes a TIME_WAIT entry now (waiting for the peer's
	 * FIN in the FIN_WAIT2 substate, or TIME_WAIT proper if that FIN is here). */
	if (socktab_get_state(c->sk) == SOCKTAB_TCP_FIN_WAIT2) {
		if (c->flags & CF_ACK_NOW)
			tcp_send_ack(st, c);
		conn_to_timewait(st, c);
		return;
	}
	tcp_output(st, c);
}

void tcp_input(struct stack *st, const struct pkt *p)
{
	struct socktab_sock *sk;
	struct conn *c;
	struct seg s;

	if (!seg_parse(p, &s)) {
		st->c.rx_invalid++;
		return;
	}
	sk = lk_tcp(st, p, s.sport, s.dport);
	if (sk && socktab_req_priv(sk)) {
		int err = req_input(st, p, &s, sk);

		lk_put(st, sk);
		if (err != -ENOENT)
			return;
		/* The request left its queue since the lookup: what is in its place now (its
		 * child, or nothing) takes the segment, as the kernel's lookup after a stolen
		 * request does. */
		sk = lk_tcp(st, p, s.sport, s.dport);
		if (sk && socktab_req_priv(sk)) {
			lk_put(st, sk);
			return;
		}
	}
	if (!sk) {
		tcp_send_reset(st, p, &s);
		return;
	}
	if (socktab_sock_tw(sk)) {
		tcp_tw_input(st, p, &s, sk);
	} else if (socktab_get_state(sk) == SOCKTAB_TCP_LISTEN) {
		tcp_listen_input(st, p, &s, sk, 0);
	} else if ((c = socktab_sock_priv(sk)) && c->kind == SK_TCP_CONN && c->sk == sk) {
		conn_touch(st, c);
		if (socktab_get_state(sk) == SOCKTAB_TCP_SYN_SENT)
			syn_sent_input(st, p, &s, c);
		else
			sync_input(st, &s, c);
	}
	/* The lookup's reference: released last, after any socktab_close() above. */
	lk_put(st, sk);
}
