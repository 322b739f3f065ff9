/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TIME_WAIT. After an active close the connection's socket is gone (socktab_close()), and
 * socktab keeps a TIME_WAIT entry in its place: the 4-tuple and the port stay taken, and a
 * lookup for a late segment returns the entry (socktab_sock_tw() is then non-NULL). What the
 * entry must still do is the kernel's tcp_timewait_state_process(), on the two sequence numbers
 * we asked socktab to keep (struct tw_part, socktab_tw_priv()):
 *
 * FIN_WAIT2 substate (our FIN acknowledged, the peer's still to come):
 *   the peer's FIN        -> socktab_tw_fin(): TIME_WAIT proper for a full period; ACK it
 *   an in-window RST      -> socktab_tw_reset(): the entry dies
 *   new data, or a SYN    -> RST, and socktab_tw_kill()
 * TIME_WAIT substate:
 *   a retransmitted FIN   -> ACK again (our last ACK was lost)
 *   an RST at rcv_nxt     -> socktab_tw_reset(): dies unless net.ipv4.tcp_rfc1337 is set
 *   a SYN above rcv_nxt   -> a new connection may take the 4-tuple over (socktab_tw_kill(),
 *                            then the listener's path, with isn = snd_nxt + 65537 as the
 *                            kernel does); with no listener it is ACKed as below
 *   anything else         -> ACK (the peer learns where we are)
 * Expiry needs nothing from us but socktab_net_tick_budget() (serve.c calls it every 100 ms,
 * and at once again while its budget runs out).
 */
#include "stack.h"

static bool before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* tcp_in_window(): does [seq, end) touch the window [s, e)? */
static bool in_window(uint32_t seq, uint32_t end, uint32_t s, uint32_t e)
{
	if (seq == s)
		return true;
	if (before(s, end) && before(seq, e))
		return true;
	return seq == e && seq == end;
}

static void tw_ack(struct stack *st, const struct pkt *p, const struct seg *s,
		   const struct tw_part *t)
{
	tcp_send_raw(st, p->family, &p->dst, &p->src, s->dport, s->sport, t->snd_nxt, t->rcv_nxt,
		     TH_ACK, ST_RCV_WND, NULL, 0);
	st->c.tcp_tw_acks++;
}

void tcp_tw_input(struct stack *st, const struct pkt *p, const struct seg *s,
		  struct socktab_sock *sk)
{
	struct socktab_tw *tw = socktab_sock_tw(sk);
	struct tw_part *t = socktab_tw_priv(tw);
	uint32_t end = s->seq + s->len + !!(s->flags & TH_SYN) + !!(s->flags & TH_FIN);
	struct socktab_sock *ln;

	if (!t)
		return;
	if (socktab_tw_substate(tw) == SOCKTAB_TCP_FIN_WAIT2) {
		if (!in_window(s->seq, end, t->rcv_nxt, t->rcv_nxt + ST_RCV_WND)) {
			tw_ack(st, p, s, t);
			return;
		}
		if (s->flags & TH_RST) {
			socktab_tw_reset(tw);
			return;
		}
		if ((s->flags & TH_SYN) && !before(s->seq, t->rcv_nxt))
			goto reset;
		if (!(s->flags & TH_ACK) || !before(t->rcv_nxt, end) || end == s->seq)
			return; /* a duplicate ACK */
		if (!(s->flags & TH_FIN) || end != t->rcv_nxt + 1)
			goto reset; /* new data after our close */
		socktab_tw_fin(tw);
		t->rcv_nxt = end;
		tw_ack(st, p, s, t);
		return;
	}

	if (s->seq == t->rcv_nxt && (s->seq == end || (s->flags & TH_RST))) {
		if (s->flags & TH_RST)
			socktab_tw_reset(tw);
		return; /* a bare ACK in window */
	}
	if ((s->flags & (TH_SYN | TH_RST | TH_ACK)) == TH_SYN && before(t->rcv_nxt, s->seq)) {
		ln = lk_tcp_listener(st, p, s->sport, s->dport);
		if (ln) {
			uint32_t isn = t->snd_nxt + 65535 + 2;

			socktab_tw_kill(tw);
			st->c.tcp_tw_syn_reuse++;
			tcp_listen_input(st, p, s, ln, isn ? isn : 1);
			socktab_sock_put(ln);
			return;
		}
	}
	if (!(s->flags & TH_RST))
		tw_ack(st, p, s, t);
	return;
reset:
	tcp_send_reset(st, p, s);
	socktab_tw_kill(tw);
}
