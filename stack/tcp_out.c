/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TCP output: building segments, the send buffer, the retransmission timer and the ends of a
 * connection. A deliberately small TCP: no window scaling, SACK or timestamps (we offer none in
 * our SYN and SYN-ACK, so the peer uses none), one bounded buffer per connection, a simple
 * RTO with exponential backoff and go-back-N retransmission, no congestion control.
 *
 * Ends of a connection, and what each leaves in socktab:
 *   conn_finish()      passive close done (LAST_ACK acked): socktab_close() removes it all
 *   conn_abort()       reset, refused or timed out: socktab_set_state(CLOSE), the kernel's
 *                      tcp_done(), then socktab_close(); nothing stays
 *   conn_to_timewait() active close (FIN_WAIT2 or CLOSING): socktab_close() leaves a TIME_WAIT
 *                      entry holding the 4-tuple and the port, with our struct tw_part
 */
#include <stdlib.h>
#include <string.h>

#include "stack.h"

/* Initial sequence numbers: xorshift64*. A real stack uses RFC 6528 (a keyed hash of the
 * 4-tuple plus a clock); a fresh random value is enough for this model, and TIME_WAIT reuse
 * picks its own (tcp_tw.c). */
uint32_t tcp_isn(struct stack *st)
{
	st->rng ^= st->rng >> 12;
	st->rng ^= st->rng << 25;
	st->rng ^= st->rng >> 27;
	return (uint32_t)((st->rng * 0x2545F4914F6CDD1DULL) >> 32);
}

/* Fill a new connection's area and put it on the stack's list. */
void conn_link(struct stack *st, struct conn *c, struct socktab_sock *sk, int family,
	       const union st_addr *laddr, uint16_t lport, const union st_addr *raddr,
	       uint16_t rport)
{
	c->kind = SK_TCP_CONN;
	c->sk = sk;
	c->family = family;
	c->laddr = *laddr;
	c->raddr = *raddr;
	c->lport = lport;
	c->rport = rport;
	c->mss = (uint16_t)(ST_MTU - ip_hdr_len(family) - 20);
	c->rx_ns = st->now_ns;
	c->prev = NULL;
	c->next = st->conns;
	if (st->conns)
		st->conns->prev = c;
	else
		st->conns_tail = c;
	st->conns = c;
	st->n_conns++;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* Any segment: headers, an MSS option on SYNs, @len payload bytes. Ports in network order. */
void tcp_send_raw(struct stack *st, int family, const union st_addr *src,
		  const union st_addr *dst, uint16_t sport, uint16_t dport, uint32_t seq,
		  uint32_t ack, uint8_t flags, uint16_t wnd, const void *data, uint32_t len)
{
	size_t hl = ip_hdr_len(family), thl = flags & TH_SYN ? 24 : 20;
	uint8_t *t = st->tx + hl;

	if (hl + thl + len > ST_MTU)
		return;
	memcpy(t, &sport, 2);
	memcpy(t + 2, &dport, 2);
	put32(t + 4, seq);
	put32(t + 8, flags & TH_ACK ? ack : 0);
	t[12] = (uint8_t)(thl / 4 << 4);
	t[13] = flags;
	put16(t + 14, wnd);
	put16(t + 16, 0);
	put16(t + 18, 0);
	if (flags & TH_SYN) { /* MSS option: what fits in our MTU */
		t[20] = 2;
		t[21] = 4;
		put16(t + 22, (uint16_t)(ST_MTU - hl - 20));
	}
	if (len)
		memcpy(t + thl, data, len);
	put16(t + 16, csum_fold(csum_add(csum_pseudo(family, src, dst, IPPROTO_TCP, thl + len), t,
					 thl + len)));
	ip_output(st, family, src, dst, IPPROTO_TCP, thl + len);
}

/* Room the application has for incoming bytes: what we advertise as our window. The echo
 * applications copy what they get into the send buffer, so their room is what is left there
 * (none while every send buffer of the stack is taken); the others consume it at once. */
uint32_t conn_rcv_space(const struct stack *st, const struct conn *c)
{
	uint32_t room = ST_RCV_WND;

	if (c->app == APP_ECHO || c->app == APP_SOCKPERF) {
		if (!c->buf && st->n_sndbufs >= ST_SNDBUFS_MAX)
			return 0;
		room = ST_SNDBUF_MAX - c->buf_len;
	}
	return room < ST_RCV_WND ? room : ST_RCV_WND;
}

/* A segment of connection @c; every one but the first SYN carries an ACK of rcv_nxt. */
static void send_seg(struct stack *st, struct conn *c, uint32_t seq, uint8_t flags,
		     const void *data, uint32_t len)
{
	tcp_send_raw(st, c->family, &c->laddr, &c->raddr, c->lport, c->rport, seq, c->tw.rcv_nxt,
		     flags, (uint16_t)conn_rcv_space(st, c), data, len);
	if (flags & TH_ACK)
		c->flags &= (uint8_t)~CF_ACK_NOW;
}

/* The SYN of an active open, also when retransmitted (a passive open's SYN-ACK is a request
 * entry's: syncookie.c). */
void tcp_send_syn(struct stack *st, struct conn *c)
{
	send_seg(st, c, c->iss, TH_SYN, NULL, 0);
}

void tcp_send_ack(struct stack *st, struct conn *c)
{
	send_seg(st, c, c->tw.snd_nxt, TH_ACK, NULL, 0);
}

/*
 * The reset for a segment that no socket takes (RFC 793 "reset generation", the kernel's
 * tcp_v4_send_reset): never for a reset; if the segment had an ACK, RST with seq = its ack; if
 * not, RST|ACK with seq 0 and ack = the end of the segment (SYN and FIN count one each).
 */
void tcp_send_reset(struct stack *st, const struct pkt *p, const struct seg *s)
{
	if (s->flags & TH_RST)
		return;
	if (s->flags & TH_ACK)
		tcp_send_raw(st, p->family, &p->dst, &p->src, s->dport, s->sport, s->ack, 0, TH_RST,
			     0, NULL, 0);
	else
		tcp_send_raw(st, p->family, &p->dst, &p->src, s->dport, s->sport, 0,
			     s->seq + s->len + !!(s->flags & TH_SYN) + !!(s->flags & TH_FIN),
			     TH_RST | TH_ACK, 0, NULL, 0);
	st->c.tcp_rst_sent++;
}

/* Queue @len bytes for sending: how many fit (the rest is the caller's to keep or drop). The
 * buffer grows by doubling up to ST_SNDBUF_MAX and is freed when empty, so idle connections
 * cost only their socket; at most ST_SNDBUFS_MAX connections hold one (the HTTP and client
 * applications, whose few bytes always go out, are counted but never refused). */
uint32_t conn_send(struct stack *st, struct conn *c, const void *data, uint32_t len)
{
	if (len > ST_SNDBUF_MAX - c->buf_len)
		len = ST_SNDBUF_MAX - c->buf_len;
	if (!len)
		return 0;
	if (!c->buf) {
		if (st->n_sndbufs >= ST_SNDBUFS_MAX && (c->app == APP_ECHO || c->app == APP_SOCKPERF))
			return 0;
		st->n_sndbufs++;
	}
	if (c->buf_len + len > c->buf_cap) {
		uint32_t cap = c->buf_cap ? c->buf_cap : 2048;
		uint8_t *b;

		while (cap < c->buf_len + len)
			cap *= 2;
		b = realloc(c->buf, cap);
		if (!b) {
			if (!c->buf)
				st->n_sndbufs--;
			return 0;
		}
		c->buf = b;
		c->buf_cap = cap;
	}
	memcpy(c->buf + c->buf_len, data, len);
	c->buf_len += len;
	return len;
}

/* Our FIN went out: ESTABLISHED -> FIN_WAIT1, CLOSE_WAIT -> LAST_ACK (a retransmitted FIN
 * changes nothing). socktab keeps the state: lookups, ss and close() read it. */
static void fin_sent(struct conn *c, int state)
{
	c->flags |= CF_FIN_SENT;
	if (state == SOCKTAB_TCP_ESTABLISHED)
		socktab_set_state(c->sk, SOCKTAB_TCP_FIN_WAIT1);
	else if (state == SOCKTAB_TCP_CLOSE_WAIT)
		socktab_set_state(c->sk, SOCKTAB_TCP_LAST_ACK);
}

static bool fin_allowed(int state)
{
	return state == SOCKTAB_TCP_ESTABLISHED || state == SOCKTAB_TCP_CLOSE_WAIT ||
	       state == SOCKTAB_TCP_FIN_WAIT1 || state == SOCKTAB_TCP_CLOSING ||
	       state == SOCKTAB_TCP_LAST_ACK;
}

/*
 * Send what the window allows from the send buffer, then our FIN once the application has
 * closed and every byte is out; an owed ACK goes alone if nothing else carried it. Arms the
 * retransmission timer while anything is unacknowledged or waiting for window.
 */
void tcp_output(struct stack *st, struct conn *c)
{
	int state = socktab_get_state(c->sk);
	uint32_t inflight, sent;
	bool any = false;

	if (state == SOCKTAB_TCP_SYN_SENT || state == SOCKTAB_TCP_SYN_RECV || state < 0)
		return;
	if (c->flags & CF_FIN_ACKED) { /* everything is sent and acknowledged */
		if (c->flags & CF_ACK_NOW)
			tcp_send_ack(st, c);
		return;
	}
	inflight = c->tw.snd_nxt - c->snd_una;
	sent = inflight - !!(c->flags & CF_FIN_SENT);
	while (sent < c->buf_len) {
		uint32_t room = c->snd_wnd > inflight ? c->snd_wnd - inflight : 0;
		uint32_t n = c->buf_len - sent;
		bool fin;

		if (n > c->mss)
			n = c->mss;
		if (n > room)
			n = room;
		if (!n)
			break;
		fin = (c->flags & CF_APP_CLOSED) && sent + n == c->buf_len && fin_allowed(state);
		send_seg(st, c, c->snd_una + sent, TH_ACK | TH_PSH | (fin ? TH_FIN : 0),
			 c->buf + sent, n);
		sent += n;
		inflight += n + fin;
		c->tw.snd_nxt = c->snd_una + inflight;
		if (fin)
			fin_sent(c, state);
		any = true;
	}
	if ((c->flags & CF_APP_CLOSED) && !(c->flags & CF_FIN_SENT) && sent == c->buf_len &&
	    fin_allowed(state)) {
		send_seg(st, c, c->tw.snd_nxt, TH_ACK | TH_FIN, NULL, 0);
		c->tw.snd_nxt++;
		fin_sent(c, state);
		any = true;
	}
	if ((c->tw.snd_nxt != c->snd_una || sent < c->buf_len) && !c->rto_at)
		rto_arm(st, c, ST_RTO_MIN_MS);
	if (!any && (c->flags & CF_ACK_NOW))
		tcp_send_ack(st, c);
}

/* The peer acknowledged everything before @ack (snd_una < ack <= snd_nxt, checked by the
 * caller): drop those bytes from the buffer and restart or stop the timer. */
void tcp_ack_advance(struct stack *st, struct conn *c, uint32_t ack)
{
	uint32_t acked = ack - c->snd_una;
	bool fin_acked = (c->flags & CF_FIN_SENT) && ack == c->tw.snd_nxt;
	uint32_t data = acked - fin_acked;

	if (data > c->buf_len)
		data = c->buf_len;
	if (data) {
		memmove(c->buf, c->buf + data, c->buf_len - data);
		c->buf_len -= data;
	}
	if (!c->buf_len && c->buf) {
		free(c->buf);
		c->buf = NULL;
		c->buf_cap = 0;
		st->n_sndbufs--;
	}
	if (fin_acked)
		c->flags |= CF_FIN_ACKED;
	c->snd_una = ack;
	c->retries = 0;
	rto_disarm(st, c);
	if (c->snd_una != c->tw.snd_nxt)
		rto_arm(st, c, ST_RTO_MIN_MS);
}

/* Timers: connections with an armed timer are on one list, scanned by tcp_timers(). */
void rto_arm(struct stack *st, struct conn *c, uint32_t ms)
{
	c->rto_ms = ms;
	if (!c->rto_at) {
		c->rto_prev = NULL;
		c->rto_next = st->rto_head;
		if (st->rto_head)
			st->rto_head->rto_prev = c;
		st->rto_head = c;
	}
	c->rto_at = st->now_ns + (uint64_t)ms * 1000000u;
}

void rto_disarm(struct stack *st, struct conn *c)
{
	if (!c->rto_at)
		return;
	if (c->rto_prev)
		c->rto_prev->rto_next = c->rto_next;
	else
		st->rto_head = c->rto_next;
	if (c->rto_next)
		c->rto_next->rto_prev = c->rto_prev;
	c->rto_at = 0;
}

/*
 * A timer fired: resend the SYN, or everything from snd_una on (go-back-N), with
 * the timeout doubled up to --rto-max-ms. After --tcp-retries retransmissions without progress
 * the connection is given up, as the kernel's tcp_write_timeout() does. (A passive open's SYN-ACK
 * has its own timers: request entries, syncookie.c.)
 *
 * A closed window makes the timer the persist timer (RFC 1122 4.2.2.17, the kernel's
 * tcp_probe_timer): it sends a one-byte probe from snd_una, backing off the same way, and a
 * zero window is probed for as long as the peer answers. Only probes left unanswered count:
 * every ACK the peer sends resets c->probes (tcp_in.c), as the kernel's tcp_ack() resets
 * icsk_probes_out, and --tcp-retries of them in a row give the connection up, as the kernel's
 * tcp_retries2 does. A one-byte probe rather than the kernel's zero-length one at snd_una - 1:
 * Linux rate-limits its answers to out-of-window pure ACKs (tcp_invalid_ratelimit, 500 ms) but
 * always answers a segment with data, and the byte is taken as soon as the window opens.
 */
static void rto_fire(struct stack *st, struct conn *c)
{
	uint32_t max = (uint32_t)st->cfg.rto_max_ms;
	uint32_t next = c->rto_ms * 2 < max ? c->rto_ms * 2 : max;
	int state = socktab_get_state(c->sk);
	bool handshake = state == SOCKTAB_TCP_SYN_SENT;

	rto_disarm(st, c);
	if (!handshake && !c->snd_wnd) {
		if (++c->probes > st->cfg.tcp_retries) {
			st->c.tcp_timeouts++;
			conn_abort(st, c);
			return;
		}
		st->c.tcp_probes++;
	} else if (++c->retries > st->cfg.tcp_retries) {
		st->c.tcp_timeouts++;
		conn_abort(st, c);
		return;
	} else {
		st->c.tcp_retransmits++;
	}
	if (handshake) {
		tcp_send_syn(st, c);
		rto_arm(st, c, next);
		return;
	}
	uint32_t wnd = c->snd_wnd;

	c->tw.snd_nxt = c->snd_una;
	c->flags &= (uint8_t)~CF_FIN_SENT;
	if (!c->snd_wnd)
		c->snd_wnd = 1;
	tcp_output(st, c);
	c->snd_wnd = wnd;
	if (c->rto_at)
		rto_arm(st, c, next);
}

void tcp_timers(struct stack *st)
{
	struct conn *c = st->rto_head, *next;

	for (; c; c = next) {
		next = c->rto_next;
		if (c->rto_at <= st->now_ns)
			rto_fire(st, c);
	}
	req_timers(st);
	idle_expire(st);
}

/* Take @c off the stack's lists and free its buffer: the last step before socktab_close(). */
static void conn_release(struct stack *st, struct conn *c)
{
	rto_disarm(st, c);
	src_leave(st, c);
	if (c->prev)
		c->prev->next = c->next;
	else
		st->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		st->conns_tail = c->prev;
	if (c->buf)
		st->n_sndbufs--;
	free(c->buf);
	c->buf = NULL;
	st->n_conns--;
}

void conn_abort(struct stack *st, struct conn *c)
{
	struct socktab_sock *sk = c->sk;

	app_gone(st, c);
	conn_release(st, c);
	socktab_set_state(sk, SOCKTAB_TCP_CLOSE);
	socktab_close(sk);
}

void conn_finish(struct stack *st, struct conn *c)
{
	struct socktab_sock *sk = c->sk;

	app_gone(st, c);
	conn_release(st, c);
	socktab_close(sk);
}

/*
 * Active close done on our side: socktab_close() turns the socket into a TIME_WAIT entry that
 * keeps the 4-tuple and the port, and copies our struct tw_part into it. From CLOSING the entry
 * is TIME_WAIT proper; from FIN_WAIT2 it waits for the peer's FIN (substate FIN_WAIT2, as the
 * kernel's orphaned sockets do). When the peer's FIN has already come in FIN_WAIT2, the kernel
 * makes a TIME_WAIT entry at once: socktab_set_state(TIME_WAIT) does that before the close.
 */
void conn_to_timewait(struct stack *st, struct conn *c)
{
	struct socktab_sock *sk = c->sk;
	int state = socktab_get_state(sk);
	bool peer_fin = c->flags & CF_FIN_RCVD;

	app_gone(st, c);
	conn_release(st, c);
	/* Both FINs seen: the entry is TIME_WAIT proper now (tcp_time_wait); else close() leaves
	 * one in the FIN_WAIT2 substate that the peer's FIN will move on (tcp_tw.c). */
	if (state == SOCKTAB_TCP_FIN_WAIT2 && peer_fin)
		socktab_set_state(sk, SOCKTAB_TCP_TIME_WAIT);
	socktab_close(sk);
	st->c.tcp_timewait++;
}

/* At exit: every open connection gets a reset, so that no peer keeps waiting for a stack that
 * is gone (a process that exits gets its sockets closed by the kernel; this model stops at
 * once instead); then the buffers are freed, and socktab_net_free() closes the sockets. */
void conn_free_all(struct stack *st)
{
	for (struct conn *c = st->conns; c; c = c->next) {
		if (socktab_get_state(c->sk) != SOCKTAB_TCP_SYN_SENT)
			tcp_send_raw(st, c->family, &c->laddr, &c->raddr, c->lport, c->rport,
				     c->tw.snd_nxt, 0, TH_RST, 0, NULL, 0);
		free(c->buf);
		c->buf = NULL;
	}
	st->n_sndbufs = 0;
	st->conns = NULL;
	st->conns_tail = NULL;
	st->rto_head = NULL;
	req_free_all(st);
	src_free(st);
}
