/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The loopback model (loopback.h): the few kernel reactions around the tables that a replay
 * script can see, driven through socktab's public API only.
 *
 * connect: socktab_connect() chooses the port and hashes the socket (SYN_SENT); then the SYN is
 *   "delivered": socktab_lookup_tcp4/6 from the client's local address/port to the destination.
 *   - a listener whose accept queue has room (socktab_syn_decide(): the kernel drops a SYN when
 *     the queue holds more than the backlog, so backlog N admits N + 1) gets a request entry
 *     (socktab_req_new()) whose child the final ACK makes at once (socktab_req_promote(); with
 *     a SYN cookie, socktab_req_cookie_child()); child and client become ESTABLISHED and the
 *     child waits in the library's accept queue for socktab_accept();
 *   - a listener with a full queue: the SYN is dropped and the blocking connect times out
 *     (-EINPROGRESS), the client stays SYN_SENT and sends its SYN again at the kernel's
 *     retransmission times (lb_tick(), before the statements that come after them); the next
 *     connect() reports how that ended;
 *   - a TIME_WAIT entry for that 4-tuple (the SYN comes from the address and port of the entry's
 *     old peer): syn_meets_tw() decides whether a listener gets it (R100);
 *   - the client itself (connect to its own address and port): TCP simultaneous open, the
 *     socket is ESTABLISHED with itself;
 *   - nothing: RST, -ECONNREFUSED, and the client goes to CLOSE (tcp_done releases a port that
 *     connect() chose); it is not readable afterwards (the failed connect disconnects it);
 *   - a SYN-ACK or RST arriving on a device the client is not bound to is not taken: the
 *     connect stays pending (-EINPROGRESS).
 *   - the other end of a connection with the same 4-tuple (the two clients differ by device):
 *     syn_meets_connection() decides between a reset of that connection followed by the SYN's
 *     retransmission, and a SYN left unanswered (-EINPROGRESS);
 *   - a socket in SYN_SENT toward the client's address and port: crossed SYNs, a simultaneous
 *     open, both ESTABLISHED with each other (syn_meets_synsent()).
 *   Anything else found is not modelled: the SYN is treated as unanswered (-EINPROGRESS).
 *   After a handshake, the SYN-ACK is looked up toward the client (R107, see below).
 * close: a FIN to the peer of an ESTABLISHED socket (peer -> CLOSE_WAIT, readable EOF; the closer
 *   leaves TIME_WAIT through socktab_close); a CLOSE_WAIT socket's close leaves no TIME_WAIT. An
 *   abortive close (SO_LINGER {1, 0}, or unread data, as tcp_close() does) resets the peer
 *   (tcp_reset: SO_ERROR ECONNRESET, EPIPE from CLOSE_WAIT; state CLOSE). Closing or
 *   disconnecting a listener resets the children still in its queue (inet_csk_listen_stop).
 * TIME_WAIT of a peer that closed first (R100): the entry starts in the FIN_WAIT2 substate. The
 *   other side's close sends it a FIN (socktab_tw_fin: TIME_WAIT substate), or a RST when that
 *   close is abortive (unread data, SO_LINGER {1, 0}) or a disconnect, which ends the entry
 *   (socktab_tw_reset); data sent to it ends it too (TCP_TW_RST). A SYN from the old peer's
 *   address and port meeting the entry: see syn_meets_tw().
 * Devices (R91): a packet the host sends to itself arrives on the device that holds its
 *   destination, found by the sender's own output route (through its bound device, or a
 *   link-local scope); every lookup gets that device as dif (no VRF: sdif 0). A route that is
 *   not local sends the packet out of a device, where nothing receives it, except that IPv4
 *   output through lo always loops back and arrives on lo. Replies go the same way: a SYN-ACK
 *   through the child's device, a RST for a SYN that found nothing through none.
 * Segments a connection receives (R107): a lookup is where socktab receives a segment, and an
 *   established lookup gives the socket it finds the thread's receiving CPU (`cpu N`), as
 *   tcp_v4_rcv does. So the model looks up the segments that reach a connection as the kernel
 *   receives them: the SYN-ACK that reaches the client (deliver_syn()), and the data segment of
 *   a send() and the peer's ACK of it (lb_send()). Data reaches the peer only when the lookup
 *   finds it (a socket bound to another device since no longer matches); when it finds no
 *   socket or a listener, the RST that answers resets the sender, and an ACK that finds such
 *   resets the peer. The FIN or RST of a close or a disconnect is looked up the same way: it
 *   reaches the peer, or meets a listener (which answers a FIN with a RST that ends the closing
 *   socket at once, and drops a RST) or nothing, or is lost. Not modelled: the ACK of a FIN.
 * UDP: a datagram is queued (rx) on the socket socktab_lookup_udp4/6 returns for its source and
 *   destination. When there is none, the ICMP port unreachable goes back through the same lookup
 *   reversed, and a *connected* socket found there records ECONNREFUSED (__udp4_lib_err without
 *   IP_RECVERR); its next send() returns it and clears it (sock_error), as SO_ERROR does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "loopback.h"

/* Per-socket harness state, in socktab_sock_priv(). Pointers are cleared before a socket is
 * closed, because socktab reuses a closed socket's memory at once. */
struct lb_sk {
	struct socktab_sock *peer;     /* other end of the connection, NULL when none */
	int so_error; /* pending error reported by SO_ERROR / the next send */
	int rx;       /* bytes received and not read (the scripts never read) */
	bool eof;     /* FIN or RST received, or connect refused: poll() says POLLIN */
	bool self;    /* connected to itself (simultaneous open) */
	bool connecting; /* SS_CONNECTING: connect() said EINPROGRESS and has not reported since */
	struct socktab_net *net; /* lookups need the net; the API does not expose a socket's */
};

size_t lb_priv_size(void)
{
	return sizeof(struct lb_sk);
}

static struct lb_sk *P(struct socktab_sock *sk)
{
	return socktab_sock_priv(sk);
}

static bool is_udp(struct socktab_sock *sk)
{
	return socktab_sock_proto(sk) == SOCKTAB_UDP;
}

static int linger_zero(struct socktab_sock *sk)
{
	struct linger lg;
	socklen_t len = sizeof(lg);

	if (socktab_getsockopt(sk, SOL_SOCKET, SO_LINGER, &lg, &len))
		return 0;
	return lg.l_onoff && lg.l_linger == 0;
}

/* tcp_need_reset(): states in which a disconnect or an abortive close sends RST. */
static bool need_reset(int st)
{
	return st == SOCKTAB_TCP_ESTABLISHED || st == SOCKTAB_TCP_CLOSE_WAIT ||
	       st == SOCKTAB_TCP_FIN_WAIT1 || st == SOCKTAB_TCP_FIN_WAIT2 ||
	       st == SOCKTAB_TCP_SYN_RECV;
}

static void unlink_peer(struct socktab_sock *sk)
{
	struct socktab_sock *peer = P(sk)->peer;

	if (peer && P(peer)->peer == sk)
		P(peer)->peer = NULL;
	P(sk)->peer = NULL;
}

/*
 * The children nobody accepted yet, each with a reference of the model's, so their memory
 * outlives the library's close of a listener. With tcp_migrate_req on (R120), a closing or
 * disconnecting listener's children may move to another member of its group: the library
 * decides, so the model closes the listener first and then resets the clients of the children
 * the library closed (R121, R123). Without it the model resets them all itself first
 * (flush_queue). One case at a time: lb_case_begin() and lb_case_end() frame each.
 */
#define LB_PENDING 256
static struct {
	struct socktab_sock *c[LB_PENDING];
	int state[LB_PENDING]; /* each one's state before a listener's stop */
	int n;
	bool migrate; /* net.ipv4.tcp_migrate_req as the script set it */
} pend;

/*
 * Clients whose SYN drew no answer (SYN_SENT after connect()), each with a reference of the
 * model's. The kernel sends the SYN again 1, 2, 3, 4, 5 and 7 s after the first
 * (TCP_TIMEOUT_INIT, tcp_syn_linear_timeouts 4 intervals of it before they double;
 * tcp_syn_retries 6), each a little late (timer slack). The kernel backend's connect() waits
 * (rp_connect_wait_ms()) before it says EINPROGRESS: the retransmissions inside that wait met
 * what the SYN met, the script having done nothing meanwhile; lb_tick() sends each later one
 * before the first statement that comes after its time. The final timeout (ETIMEDOUT) is not
 * modelled.
 */
#define LB_SYN_RETRIES 6
#define LB_TIMER_SLACK 0.05
static const double syn_retrans_at[LB_SYN_RETRIES] = { 1, 2, 3, 4, 5, 7 };
static struct {
	struct socktab_sock *c[LB_PENDING];
	double first[LB_PENDING]; /* when the first SYN left, in seconds (CLOCK_MONOTONIC) */
	int sent[LB_PENDING];     /* retransmissions sent so far */
	int n;
	double wait; /* the kernel backend's connect() wait, in seconds */
} syn;
/* A retransmitted SYN is being delivered (lb_tick): no connect() is waiting for the answer. */
static bool syn_timer;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void syn_del(int i)
{
	socktab_sock_put(syn.c[i]);
	syn.n--;
	syn.c[i] = syn.c[syn.n];
	syn.first[i] = syn.first[syn.n];
	syn.sent[i] = syn.sent[syn.n];
}

/* @sk's SYN went unanswered: retransmit it from now on (its first one has been sent). */
static void syn_add(struct socktab_sock *sk)
{
	int i = 0, held;

	while (i < syn.n && syn.c[i] != sk)
		i++;
	if (i == syn.n) {
		if (syn.n == LB_PENDING)
			return;
		socktab_rcu_read_lock();
		held = socktab_sock_hold(sk);
		socktab_rcu_read_unlock();
		if (held)
			return;
		syn.c[syn.n++] = sk;
	}
	syn.first[i] = now_s() - syn.wait + LB_TIMER_SLACK;
	syn.sent[i] = 0;
	while (syn.sent[i] < LB_SYN_RETRIES &&
	       syn_retrans_at[syn.sent[i]] + LB_TIMER_SLACK <= syn.wait)
		syn.sent[i]++;
}

static int deliver_syn(struct socktab_sock *sk, bool retry);

void lb_tick(void)
{
	double t = now_s();

	for (int i = 0; i < syn.n;) {
		struct socktab_sock *sk = syn.c[i];

		if (socktab_get_state(sk) != SOCKTAB_TCP_SYN_SENT ||
		    syn.sent[i] >= LB_SYN_RETRIES) {
			syn_del(i);
			continue;
		}
		if (t - syn.first[i] < syn_retrans_at[syn.sent[i]]) {
			i++;
			continue;
		}
		syn.sent[i]++;
		syn_timer = true;
		deliver_syn(sk, true);
		syn_timer = false;
	}
}

void lb_case_begin(int connect_wait_ms)
{
	memset(&pend, 0, sizeof(pend));
	memset(&syn, 0, sizeof(syn));
	syn.wait = connect_wait_ms / 1000.0;
}

void lb_case_end(void)
{
	for (int i = 0; i < pend.n; i++)
		socktab_sock_put(pend.c[i]);
	pend.n = 0;
	while (syn.n)
		syn_del(0);
}

void lb_sysctl(const char *key, const char *value)
{
	if (!strcmp(key, "net.ipv4.tcp_migrate_req"))
		pend.migrate = atoi(value) != 0;
}

static void pend_add(struct socktab_sock *child)
{
	if (pend.n < LB_PENDING)
		pend.c[pend.n++] = child;
	else
		socktab_sock_put(child); /* the accept queue's reference keeps it */
}

static void pend_del(struct socktab_sock *child)
{
	for (int i = 0; i < pend.n; i++)
		if (pend.c[i] == child) {
			pend.c[i] = pend.c[--pend.n];
			socktab_sock_put(child);
			return;
		}
}

static void receive_rst(struct socktab_sock *sk);

/* Before a stop that the library may migrate: note every pending child's state. */
static void pend_snapshot(void)
{
	for (int i = 0; i < pend.n; i++)
		pend.state[i] = socktab_get_state(pend.c[i]);
}

/* After it: a child the library closed (inet_child_forget) resets its client. */
static void pend_reset_forgotten(void)
{
	for (int i = 0; i < pend.n;) {
		struct socktab_sock *c = pend.c[i], *peer = P(c)->peer;

		if (socktab_get_state(c) >= 0) {
			i++;
			continue;
		}
		unlink_peer(c);
		if (peer && need_reset(pend.state[i]))
			receive_rst(peer);
		pend.state[i] = pend.state[pend.n - 1];
		pend_del(c);
	}
}

/* A RST arrives at @sk (kernel tcp_reset): the error it reports, then tcp_done(). */
static void receive_rst(struct socktab_sock *sk)
{
	int st = socktab_get_state(sk);

	if (st == SOCKTAB_TCP_CLOSE || st < 0)
		return;
	P(sk)->so_error = st == SOCKTAB_TCP_SYN_SENT    ? ECONNREFUSED
			  : st == SOCKTAB_TCP_CLOSE_WAIT ? EPIPE
							 : ECONNRESET;
	P(sk)->eof = true;
	unlink_peer(sk);
	socktab_set_state(sk, SOCKTAB_TCP_CLOSE);
}

static bool segment_to_tw(struct socktab_sock *sk, char what);

/* Abort a child still in an accept queue (inet_csk_listen_stop: tcp_disconnect): RST to its
 * client, then free it. A client that closed first has left a TIME_WAIT entry in its FIN_WAIT2
 * substate, which the RST ends (R100). */
static void abort_child(struct socktab_sock *child)
{
	static const struct linger lg0 = { 1, 0 };
	struct socktab_sock *peer = P(child)->peer;
	int st = socktab_get_state(child);

	if (peer && need_reset(st)) {
		unlink_peer(child);
		receive_rst(peer);
	} else if (!peer && st == SOCKTAB_TCP_CLOSE_WAIT) {
		segment_to_tw(child, 'R');
	}
	unlink_peer(child);
	socktab_setsockopt(child, SOL_SOCKET, SO_LINGER, &lg0, sizeof(lg0));
	socktab_close(child);
}

/* Before a listener closes or disconnects: its unaccepted children are accepted here and
 * aborted, so their clients get their RST (the library alone would close them silently). */
static void flush_queue(struct socktab_sock *ln)
{
	struct socktab_sock *c;

	while ((c = socktab_accept(ln))) {
		pend_del(c);
		abort_child(c);
	}
}

/* Local and remote address of a hashed socket as a v4 pair when both are IPv4 or v4-mapped. */
struct tuple {
	bool v4;
	struct in6_addr l6, r6;
	uint32_t l4, r4;
	uint16_t lport, rport; /* network order */
};

static int get_tuple(struct socktab_sock *sk, struct tuple *t)
{
	struct sockaddr_storage l, r;
	socklen_t ll = sizeof(l), rl = sizeof(r);
	int err;

	if ((err = socktab_getsockname(sk, (struct sockaddr *)&l, &ll)) ||
	    (err = socktab_sock_peer(sk, (struct sockaddr *)&r, &rl)))
		return err;
	memset(t, 0, sizeof(*t));
	if (l.ss_family == AF_INET) {
		const struct sockaddr_in *a = (void *)&l, *b = (void *)&r;

		t->v4 = true;
		t->l4 = a->sin_addr.s_addr;
		t->r4 = b->sin_addr.s_addr;
		t->lport = a->sin_port;
		t->rport = b->sin_port;
	} else {
		const struct sockaddr_in6 *a = (void *)&l, *b = (void *)&r;

		t->l6 = a->sin6_addr;
		t->r6 = b->sin6_addr;
		t->lport = a->sin6_port;
		t->rport = b->sin6_port;
		if (IN6_IS_ADDR_V4MAPPED(&t->l6) && IN6_IS_ADDR_V4MAPPED(&t->r6)) {
			t->v4 = true;
			memcpy(&t->l4, &t->l6.s6_addr[12], 4);
			memcpy(&t->r4, &t->r6.s6_addr[12], 4);
		}
	}
	return 0;
}

/* Build a sockaddr of @family for (a4 or a6, port): v4-mapped when an AF_INET6 socket talks
 * IPv4. Returns its length. */
static socklen_t make_sa(struct sockaddr_storage *ss, int family, const struct tuple *t,
			 bool local)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (void *)ss;

		s->sin_family = AF_INET;
		s->sin_addr.s_addr = local ? t->r4 : t->l4;
		s->sin_port = local ? t->rport : t->lport;
		return sizeof(*s);
	}
	struct sockaddr_in6 *s6 = (void *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = local ? t->rport : t->lport;
	if (t->v4) {
		s6->sin6_addr.s6_addr[10] = s6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&s6->sin6_addr.s6_addr[12], local ? &t->r4 : &t->l4, 4);
	} else {
		s6->sin6_addr = local ? t->r6 : t->l6;
	}
	return sizeof(*s6);
}

void lb_attach(struct socktab_sock *sk, struct socktab_net *net)
{
	P(sk)->net = net;
}

/* The device @sk is bound to (SO_BINDTODEVICE, or a link-local scope), 0 for none. */
static int bound_dev(struct socktab_sock *sk)
{
	int v = 0;
	socklen_t len = sizeof(v);

	if (socktab_getsockopt(sk, SOL_SOCKET, SO_BINDTOIFINDEX, &v, &len))
		return 0;
	return v;
}

/*
 * The ingress device of a packet the host sends to itself (R91): the output route toward the
 * destination, looked up as the sender does (through @oif, its bound device or the scope it
 * named), must be local, and the device that holds the address is the one the packet arrives
 * on (lo for 127.0.0.0/8 and ::1). An IPv4 route out of lo is local whatever its type
 * (__mkroute_output sets RTCF_LOCAL for a loopback device): a reply sent through lo toward an
 * address of another device loops back and arrives on lo. 0 when the route is not local: the
 * packet leaves through a device and nothing in the host receives it.
 */
static int ingress_dev(struct socktab_net *net, int family, const void *daddr, int oif)
{
	struct socktab_route_result res;

	if (socktab_route_lookup(net, family, daddr, oif, &res))
		return 0;
	if (res.type == SOCKTAB_RTN_LOCAL)
		return res.ifindex;
	if (family == AF_INET && res.ifindex == SOCKTAB_LOOPBACK_IFINDEX)
		return SOCKTAB_LOOPBACK_IFINDEX;
	return 0;
}

/* Does a packet arriving on @dif reach @sk, as far as its device goes (inet_bound_dev_eq with
 * no L3 master: a socket bound to a device takes only that device's traffic)? */
static bool dev_accepts(struct socktab_sock *sk, int dif)
{
	int bound = bound_dev(sk);

	return dif && (!bound || bound == dif);
}

static int tuple_ingress(struct socktab_net *net, const struct tuple *t, int oif)
{
	return t->v4 ? ingress_dev(net, AF_INET, &t->r4, oif)
		     : ingress_dev(net, AF_INET6, &t->r6, oif);
}

/* The TCP socket a segment from the local side of @t to its remote side reaches, arriving on
 * device @dif (listeners only, with @listener). */
static struct socktab_sock *lookup(struct socktab_net *net, const struct tuple *t, int dif,
				   bool listener)
{
	if (t->v4)
		return listener ? socktab_lookup_listener4(net, t->l4, t->lport, t->r4, t->rport,
							   dif, 0)
				: socktab_lookup_tcp4(net, t->l4, t->lport, t->r4, t->rport, dif, 0);
	return listener ? socktab_lookup_listener6(net, &t->l6, t->lport, &t->r6, t->rport, dif, 0)
			: socktab_lookup_tcp6(net, &t->l6, t->lport, &t->r6, t->rport, dif, 0);
}

/*
 * Does the RST that answers client @sk's SYN (which arrived on @dif and found no socket) come
 * back to it? With no socket the reset is routed through no device (tcp_v4_send_reset); IPv6
 * answers a link-local or loopback address through the device the SYN came in on
 * (tcp_v6_send_response, rt6_need_strict). It arrives on the device that holds the client's
 * address, and a client bound to another device never sees it: its connect stays pending.
 */
static bool rst_reaches(struct socktab_net *net, struct socktab_sock *sk, const struct tuple *t,
			int dif)
{
	int oif = 0;

	if (!t->v4 && (IN6_IS_ADDR_LINKLOCAL(&t->l6) || IN6_IS_ADDR_LOOPBACK(&t->l6)))
		oif = dif;
	return dev_accepts(sk, t->v4 ? ingress_dev(net, AF_INET, &t->l4, oif)
				     : ingress_dev(net, AF_INET6, &t->l6, oif));
}

/* The RST that refuses a connect: tcp_done() sets CLOSE; the failing blocking connect() then
 * runs tcp_disconnect(), which clears the end of stream again: not readable. */
static int refuse_connect(struct socktab_sock *sk)
{
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };

	if (syn_timer) {
		/* tcp_reset() in SYN_SENT: SO_ERROR says ECONNREFUSED until a call reports it. */
		receive_rst(sk);
		return -ECONNREFUSED;
	}
	socktab_set_state(sk, SOCKTAB_TCP_CLOSE);
	/* The RST's ECONNREFUSED replaces any pending error, and connect() returning it consumes
	 * it (sock_error): SO_ERROR reads 0 afterwards. tcp_disconnect() forgets the local address
	 * too. */
	P(sk)->so_error = 0;
	socktab_connect(sk, &unspec, sizeof(unspec));
	return -ECONNREFUSED;
}

/*
 * A SYN from the old peer's address and port reached TIME_WAIT entry @tw
 * (tcp_timewait_state_process). Returns 1 when the SYN goes on to the listener lookup, else the
 * connect()'s result.
 * - TIME_WAIT substate: with timestamps (the default) the new SYN is acceptable (TCP_TW_SYN): a
 *   listener takes it and the entry is ended. With no listener the entry answers with an ACK,
 *   which the SYN_SENT socket finds unacceptable: it sends a RST whose seq is the entry's
 *   rcv_nxt, in the window (R100). If that RST ends the entry (tcp_rfc1337 = 0), the SYN
 *   retransmitted after 1 s meets nothing and is refused; if not, the connect stays SYN_SENT.
 * - FIN_WAIT2 substate: the entry dies either way (a RST for an in-window SYN, or an ACK
 *   answered by a RST for one beyond the window); what happens next is the retransmitted SYN's
 *   business. The model takes the second path, which a new SYN's sequence number makes the
 *   usual one: the SYN then reaches a listener, or is refused.
 */
static int syn_meets_tw(struct socktab_sock *sk, struct socktab_sock *tw_sk, bool has_listener)
{
	struct socktab_tw *tw = socktab_sock_tw(tw_sk);
	int died;

	if (!tw)
		return -EINPROGRESS;
	if (socktab_tw_substate(tw) == SOCKTAB_TCP_TIME_WAIT && has_listener) {
		socktab_tw_kill(tw);
		return 1;
	}
	died = socktab_tw_reset(tw);
	if (died != 1)
		return -EINPROGRESS; /* rfc1337: the entry keeps answering; still SYN_SENT */
	return has_listener ? 1 : refuse_connect(sk);
}

/*
 * The device the SYN-ACK that listener @ln sends to client @t (whose SYN arrived on @dif)
 * arrives on, 0 for none. The request is routed back to the client's address through the
 * device the child will have (inet_csk_route_req with ir_iif: the listener's device, or for
 * IPv6 an unbound listener and a link-local peer the receiving device); when that route fails,
 * as through a device that is down, the SYN is dropped. The client's address is local, so any
 * other route is lost as well. The SYN-ACK arrives on the device that holds the client's
 * address (seen through that route).
 */
static int synack_dev(struct socktab_net *net, struct socktab_sock *ln, const struct tuple *t,
		      int dif)
{
	int oif = bound_dev(ln);

	if (!oif && !t->v4 && IN6_IS_ADDR_LINKLOCAL(&t->l6))
		oif = dif;
	return t->v4 ? ingress_dev(net, AF_INET, &t->l4, oif)
		     : ingress_dev(net, AF_INET6, &t->l6, oif);
}

/* Can listener @ln answer the SYN of client @sk, @t (which arrived on @dif)? A client bound to
 * another device than the one the SYN-ACK arrives on does not take it: the handshake stalls. */
static bool synack_reaches(struct socktab_net *net, struct socktab_sock *ln,
			   struct socktab_sock *sk, const struct tuple *t, int dif)
{
	return dev_accepts(sk, synack_dev(net, ln, t, dif));
}

/* @t seen from its other end: local and remote swapped. */
static struct tuple reversed(const struct tuple *t)
{
	struct tuple rt = *t;

	rt.l6 = t->r6;
	rt.r6 = t->l6;
	rt.l4 = t->r4;
	rt.r4 = t->l4;
	rt.lport = t->rport;
	rt.rport = t->lport;
	return rt;
}

/*
 * A segment from the local side of @t to its remote side arrives on device @dif and is
 * received (tcp_v4_rcv, tcp_v6_rcv): the lookup gives the connection it finds the thread's
 * receiving CPU (sk_incoming_cpu_update, R107). What the lookup found, for the caller:
 * SEG_TO_WANT @want; SEG_TO_RESET no socket, or a listener, which answers a segment with an
 * ACK by a RST (tcp_rcv_state_process in LISTEN, tcp_v4_send_reset); SEG_TO_OTHER anything
 * else, or @dif 0 (sent out of a device): the segment is lost, nothing more is modelled.
 */
enum { SEG_TO_WANT, SEG_TO_RESET, SEG_TO_OTHER };

static int receive_segment(struct socktab_net *net, const struct tuple *t, int dif,
			   const struct socktab_sock *want)
{
	struct socktab_sock *to = dif ? lookup(net, t, dif, false) : NULL;
	int r = !dif ? SEG_TO_OTHER : !to ? SEG_TO_RESET : to == want ? SEG_TO_WANT : SEG_TO_OTHER;

	if (to && r == SEG_TO_OTHER && socktab_get_state(to) == SOCKTAB_TCP_LISTEN)
		r = SEG_TO_RESET;
	if (to)
		socktab_sock_put(to);
	return r;
}

/*
 * Client @sk's SYN (@t) reached @found, a live connection with the same
 * 4-tuple: possible when the two clients differ by device (R94), the other one bound to the
 * device the SYN arrives on. @found answers with a challenge ACK (tcp_validate_incoming), sent
 * back to the client's address through its own device. The first socket that ACK reaches there
 * takes it: when that is @sk, the ACK is unacceptable in SYN_SENT, so @sk answers with a RST
 * whose seq is the ACK's ack_seq, in @found's window, which resets @found, and it retransmits
 * its SYN at once (tcp_rcv_synsent_state_process: TCP_TIMEOUT_MIN). Returns 1 then, 0 when the
 * ACK went elsewhere and the SYN stays unanswered.
 */
static int syn_meets_connection(struct socktab_sock *sk, struct socktab_sock *found,
				const struct tuple *t)
{
	struct socktab_net *net = P(sk)->net;
	int st = socktab_get_state(found), back;
	struct socktab_sock *to;
	struct tuple rt = reversed(t);

	if (st != SOCKTAB_TCP_ESTABLISHED && st != SOCKTAB_TCP_CLOSE_WAIT)
		return 0;
	/* the ACK goes from @found's end (the client's remote side) to the client */
	back = tuple_ingress(net, &rt, bound_dev(found));
	to = back ? lookup(net, &rt, back, false) : NULL;
	if (to)
		socktab_sock_put(to);
	if (to != sk)
		return 0;
	receive_rst(found); /* the RST goes the SYN's way, to @found */
	return 1;
}

/*
 * Client @sk's SYN (@t) reached @found, in SYN_SENT toward @sk's own address and port: crossed
 * SYNs, a simultaneous open (tcp_rcv_synsent_state_process with a SYN and no ACK). @found goes
 * to SYN_RECV and answers with a SYN-ACK; when that reaches @sk, @sk's ACK completes both ends,
 * ESTABLISHED with each other, no listener involved. @found's own connect() said EINPROGRESS
 * and reports the connection at its next call. Returns 0, or -EINPROGRESS when the SYN-ACK went
 * elsewhere (not modelled further: both stay as they were).
 */
static int syn_meets_synsent(struct socktab_sock *sk, struct socktab_sock *found,
			     const struct tuple *t)
{
	struct socktab_net *net = P(sk)->net;
	struct tuple rt = reversed(t);
	int back = tuple_ingress(net, &rt, bound_dev(found));

	if (receive_segment(net, &rt, back, sk) != SEG_TO_WANT)
		return -EINPROGRESS;
	socktab_set_state(found, SOCKTAB_TCP_ESTABLISHED);
	socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED);
	P(sk)->peer = found;
	P(found)->peer = sk;
	return 0;
}

/*
 * Deliver the client's SYN: the packet goes from the client's local address/port to its peer.
 * In the listener's view local = the client's remote side, remote = the client's local side.
 */
static int deliver_syn(struct socktab_sock *sk, bool retry)
{
	struct socktab_net *net = P(sk)->net;
	struct socktab_sock *found, *child, *ln;
	struct sockaddr_storage la, ra;
	struct tuple t, rt;
	socklen_t len;
	int err, family, verdict, dif;

	if ((err = get_tuple(sk, &t)))
		return err;
	dif = tuple_ingress(net, &t, bound_dev(sk));
	if (!dif)
		return -EINPROGRESS; /* sent out of a device: no answer comes */
	found = lookup(net, &t, dif, false);
	if (found && socktab_get_state(found) == SOCKTAB_TCP_TIME_WAIT) {
		ln = lookup(net, &t, dif, true);
		err = syn_meets_tw(sk, found, ln != NULL);
		socktab_sock_put(found);
		found = ln;
		if (err != 1) {
			if (found)
				socktab_sock_put(found);
			return err;
		}
	}
	if (found == sk) {
		socktab_sock_put(found);
		P(sk)->self = true;
		return socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED);
	}
	if (!found)
		return rst_reaches(net, sk, &t, dif) ? refuse_connect(sk) : -EINPROGRESS;
	if (socktab_get_state(found) == SOCKTAB_TCP_SYN_SENT) {
		err = syn_meets_synsent(sk, found, &t);
		socktab_sock_put(found);
		return err;
	}
	if (socktab_get_state(found) != SOCKTAB_TCP_LISTEN) {
		err = syn_meets_connection(sk, found, &t);
		socktab_sock_put(found);
		return err == 1 && retry ? deliver_syn(sk, false) : -EINPROGRESS;
	}
	verdict = socktab_syn_decide(found, 0);
	if (verdict == SOCKTAB_SYN_DROP || verdict < 0) { /* sk_acceptq_is_full(), R115 */
		socktab_sock_put(found);
		return -EINPROGRESS;
	}
	if (!synack_reaches(net, found, sk, &t, dif)) {
		socktab_sock_put(found);
		return -EINPROGRESS; /* no SYN-ACK: the client keeps retransmitting its SYN */
	}
	family = socktab_sock_family(found);
	len = make_sa(&la, family, &t, true);
	make_sa(&ra, family, &t, false);
	if (verdict == SOCKTAB_SYN_COOKIE) {
		child = socktab_req_cookie_child(found, (struct sockaddr *)&la, (struct sockaddr *)&ra,
						 len, dif, 0, SOCKTAB_TCP_ESTABLISHED);
		err = child ? 0 : -errno;
	} else {
		struct socktab_sock *req = socktab_req_new(found, (struct sockaddr *)&la,
							   (struct sockaddr *)&ra, len, dif, 0);

		/* The SYN-ACK and the final ACK cross the loopback at once. */
		err = req ? socktab_req_promote(req, SOCKTAB_TCP_ESTABLISHED, &child) : -errno;
		if (req && err)
			socktab_req_drop(req);
		socktab_sock_put(req);
	}
	if (err) {
		socktab_sock_put(found);
		return err == -EAGAIN ? -EINPROGRESS : err;
	}
	memset(P(child), 0, sizeof(struct lb_sk));
	P(child)->net = net;
	/* The SYN-ACK reaches the SYN_SENT client (R107: it takes the receiving CPU). */
	rt = reversed(&t);
	receive_segment(net, &rt, synack_dev(net, found, &t, dif), NULL);
	socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED);
	P(child)->peer = sk;
	P(sk)->peer = child;
	pend_add(child); /* the accept queue owns it; the model keeps a reference */
	socktab_sock_put(found);
	return 0;
}

/*
 * A segment from @sk whose peer has closed first reaches the peer's TIME_WAIT entry, if it
 * has one (the peer's address, as @sk sends to it). @what: 'R' a RST (an abortive close or a
 * disconnect: an in-window RST, socktab_tw_reset()), 'F' a FIN (socktab_tw_fin()), 'D' data (in
 * the FIN_WAIT2 substate new data ends the entry with a RST, TCP_TW_RST). Returns true when an
 * entry was found.
 */
static bool segment_to_tw(struct socktab_sock *sk, char what)
{
	struct socktab_net *net = P(sk)->net;
	struct socktab_sock *found;
	struct socktab_tw *tw;
	struct tuple t;
	int dif;

	if (get_tuple(sk, &t) || !(dif = tuple_ingress(net, &t, bound_dev(sk))))
		return false;
	found = lookup(net, &t, dif, false);
	if (!found)
		return false;
	tw = socktab_sock_tw(found);
	if (tw && what == 'R')
		socktab_tw_reset(tw);
	else if (tw && what == 'F')
		socktab_tw_fin(tw);
	else if (tw && socktab_tw_substate(tw) == SOCKTAB_TCP_FIN_WAIT2)
		socktab_tw_kill(tw);
	socktab_sock_put(found);
	return tw != NULL;
}

int lb_connect(struct socktab_sock *sk, const struct sockaddr *sa, socklen_t len)
{
	int err;

	if (is_udp(sk))
		return socktab_connect(sk, sa, len); /* no handshake; AF_UNSPEC disconnects */
	if (sa && len >= sizeof(sa_family_t) && sa->sa_family == AF_UNSPEC)
		return lb_disconnect(sk);
	if (P(sk)->connecting && socktab_get_state(sk) != SOCKTAB_TCP_SYN_SENT) {
		/* __inet_stream_connect() in SS_CONNECTING once the handshake has ended since (a
		 * retransmitted SYN): connected, 0; reset, the socket's error (SS_UNCONNECTED). */
		P(sk)->connecting = false;
		if (socktab_get_state(sk) != SOCKTAB_TCP_CLOSE)
			return 0;
		err = lb_take_error(sk);
		return err ? -err : -ECONNABORTED;
	}
	err = socktab_connect(sk, sa, len);
	if (err)
		return err;
	P(sk)->so_error = 0; /* tcp_connect_init() clears sk_err */
	err = deliver_syn(sk, true);
	if (err == -EINPROGRESS && socktab_get_state(sk) == SOCKTAB_TCP_SYN_SENT) {
		P(sk)->connecting = true;
		syn_add(sk);
	}
	return err;
}

static int segment_from(struct socktab_sock *sk, struct socktab_sock *want, struct tuple *t,
			int *dif);

int lb_disconnect(struct socktab_sock *sk)
{
	int st = socktab_get_state(sk), err, to, dif;
	struct socktab_sock *peer;
	struct tuple t;

	if (st < 0)
		return st;
	if (is_udp(sk)) {
		struct sockaddr unspec = { .sa_family = AF_UNSPEC };

		return socktab_connect(sk, &unspec, sizeof(unspec));
	}
	P(sk)->connecting = false; /* SS_UNCONNECTED */
	if (st == SOCKTAB_TCP_LISTEN) {
		struct sockaddr unspec = { .sa_family = AF_UNSPEC };

		if (pend.migrate) {
			pend_snapshot();
			err = socktab_connect(sk, &unspec, sizeof(unspec));
			pend_reset_forgotten();
			return err;
		}
		flush_queue(sk);
	}
	peer = P(sk)->peer;
	/* tcp_disconnect(): RST to a connected peer, when its lookup finds it (a listener drops
	 * it); the socket reports ECONNRESET itself. */
	to = peer && need_reset(st) ? segment_from(sk, peer, &t, &dif) : SEG_TO_OTHER;
	unlink_peer(sk);
	if (need_reset(st) || st == SOCKTAB_TCP_SYN_SENT)
		P(sk)->so_error = ECONNRESET;
	if (to == SEG_TO_WANT)
		receive_rst(peer);
	else if (!peer && st == SOCKTAB_TCP_CLOSE_WAIT)
		segment_to_tw(sk, 'R'); /* the peer closed first: the RST meets its TIME_WAIT */
	P(sk)->eof = false;
	P(sk)->rx = 0;
	P(sk)->self = false;
	{
		struct sockaddr unspec = { .sa_family = AF_UNSPEC };

		return socktab_connect(sk, &unspec, sizeof(unspec));
	}
}

int lb_close(struct socktab_sock *sk)
{
	static const struct linger lg0 = { 1, 0 };
	int st = socktab_get_state(sk), err, to, dif;
	struct socktab_sock *peer;
	struct tuple t;
	bool abortive;

	if (st < 0)
		return st;
	if (is_udp(sk))
		return socktab_close(sk);
	if (st == SOCKTAB_TCP_LISTEN) {
		if (pend.migrate) {
			pend_snapshot();
			err = socktab_close(sk);
			pend_reset_forgotten();
			return err;
		}
		flush_queue(sk);
	}
	/* tcp_close(): unread data or SO_LINGER {1, 0} turn the FIN into a RST. Either reaches
	 * the peer only when its lookup finds it (the devices as they are now, R92): a listener
	 * drops a RST and answers a FIN with a RST, which ends the closing socket at once (no
	 * TIME_WAIT); one sent out of another device is lost. */
	abortive = P(sk)->rx > 0 || linger_zero(sk);
	peer = P(sk)->peer;
	to = peer && (st == SOCKTAB_TCP_ESTABLISHED || (abortive && need_reset(st)))
		     ? segment_from(sk, peer, &t, &dif)
		     : SEG_TO_OTHER;
	unlink_peer(sk);
	if (peer && abortive && need_reset(st)) {
		if (to == SEG_TO_WANT)
			receive_rst(peer);
	} else if (peer && st == SOCKTAB_TCP_ESTABLISHED) {
		if (to == SEG_TO_WANT) {
			P(peer)->eof = true;
			socktab_set_state(peer, SOCKTAB_TCP_CLOSE_WAIT);
		} else if (to == SEG_TO_RESET) {
			abortive = true;
		}
	} else if (!peer && st == SOCKTAB_TCP_CLOSE_WAIT) {
		/* The peer closed first and left a TIME_WAIT entry in its FIN_WAIT2 substate: a RST
		 * ends it (R100), a FIN moves it on to the TIME_WAIT substate. */
		segment_to_tw(sk, abortive ? 'R' : 'F');
	}
	if (abortive)
		socktab_setsockopt(sk, SOL_SOCKET, SO_LINGER, &lg0, sizeof(lg0));
	return socktab_close(sk);
}

int lb_accept(struct socktab_sock *ln, struct socktab_sock **child)
{
	struct socktab_sock *c;

	if (is_udp(ln))
		return -EOPNOTSUPP;
	if (socktab_get_state(ln) != SOCKTAB_TCP_LISTEN)
		return -EINVAL;
	c = socktab_accept(ln);
	if (!c)
		return -errno;
	pend_del(c);
	*child = c;
	return 0;
}

/*
 * The segments of a send() from connected @sk, as the kernel receives them (R107): the data
 * segment, looked up on the peer's side (it arrives through @sk's device), then the peer's ACK,
 * looked up on @sk's side (through the peer's device). Connected to itself, @sk receives both
 * on the same CPU: one lookup.
 */
/*
 * A segment from connected @sk to @want (its peer, or itself), through @sk's device as it is
 * now: SEG_TO_WANT it arrives there; SEG_TO_RESET it meets no socket or a listener, whose RST
 * comes back to @sk; SEG_TO_OTHER it is lost (out of a device, to another socket, or the RST
 * does not reach @sk). @t gets the segment's tuple, @dif its ingress device.
 */
static int segment_from(struct socktab_sock *sk, struct socktab_sock *want, struct tuple *t,
			int *dif)
{
	struct socktab_net *net = P(sk)->net;
	int r;

	if (get_tuple(sk, t))
		return SEG_TO_OTHER;
	*dif = tuple_ingress(net, t, bound_dev(sk));
	r = receive_segment(net, t, *dif, want);
	if (r == SEG_TO_RESET && !rst_reaches(net, sk, t, *dif))
		r = SEG_TO_OTHER;
	return r;
}

static int send_segments(struct socktab_sock *sk)
{
	struct socktab_net *net = P(sk)->net;
	struct socktab_sock *peer = P(sk)->peer;
	struct tuple t, rt;
	int dif, r;

	r = segment_from(sk, P(sk)->self ? sk : peer, &t, &dif);
	if (r != SEG_TO_WANT || P(sk)->self)
		return r;
	/* The peer's ACK: met by no socket or a listener, it draws a RST, which resets the peer. */
	rt = reversed(&t);
	dif = tuple_ingress(net, &rt, bound_dev(peer));
	if (receive_segment(net, &rt, dif, sk) == SEG_TO_RESET && rst_reaches(net, peer, &rt, dif))
		receive_rst(peer);
	return SEG_TO_WANT;
}

int lb_send(struct socktab_sock *sk)
{
	int st = socktab_get_state(sk), err;

	if (st < 0)
		return st;
	if (is_udp(sk))
		return lb_udp_sendto(sk, NULL, 0, "x", 1);
	if (st != SOCKTAB_TCP_ESTABLISHED && st != SOCKTAB_TCP_CLOSE_WAIT) {
		/* sk_stream_wait_connect(): a pending error first, then EAGAIN while connecting
		 * (the socket is non-blocking), else EPIPE. */
		if ((err = lb_take_error(sk)))
			return -err;
		return st == SOCKTAB_TCP_SYN_SENT || st == SOCKTAB_TCP_SYN_RECV ? -EAGAIN : -EPIPE;
	}
	if (P(sk)->self || P(sk)->peer) {
		/* The byte reaches the connection the lookup finds (inet_match reads the bound
		 * device as it is now, R92): its own peer, or a listener or nothing, whose RST
		 * resets the sender; the peer then stays as it was. */
		switch (send_segments(sk)) {
		case SEG_TO_WANT:
			P(P(sk)->self ? sk : P(sk)->peer)->rx++;
			break;
		case SEG_TO_RESET:
			receive_rst(sk);
			break;
		default:
			break;
		}
	} else {
		/* The peer is gone: its TIME_WAIT entry (FIN_WAIT2 substate) answers new data with
		 * a RST and ends itself (TCP_TW_RST), or no socket at all answers with a RST. The
		 * byte is sent, then the connection is reset. */
		segment_to_tw(sk, 'D');
		receive_rst(sk);
	}
	return 0;
}

bool lb_readable(struct socktab_sock *sk)
{
	struct socktab_listen_info li;

	if (socktab_get_state(sk) == SOCKTAB_TCP_LISTEN)
		return socktab_listen_info(sk, &li) == 0 && li.ack_backlog > 0;
	return P(sk)->rx > 0 || P(sk)->eof;
}

int lb_take_error(struct socktab_sock *sk)
{
	int e = P(sk)->so_error;

	P(sk)->so_error = 0;
	return e;
}

/* ---- UDP ---- */

/* The socket a datagram from @from to @to, arriving on device @dif, is delivered to,
 * referenced, or NULL. */
static struct socktab_sock *udp_lookup(struct socktab_net *net, const struct sockaddr_storage *from,
				       const struct sockaddr_storage *to, int dif)
{
	if (from->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)from, *b = (const void *)to;

		return socktab_lookup_udp4(net, a->sin_addr.s_addr, a->sin_port, b->sin_addr.s_addr,
					   b->sin_port, dif, 0);
	}
	const struct sockaddr_in6 *a = (const void *)from, *b = (const void *)to;

	return socktab_lookup_udp6(net, &a->sin6_addr, a->sin6_port, &b->sin6_addr, b->sin6_port,
				   dif, 0);
}

/* The device a datagram to @to arrives on when sent through @oif (0: it leaves the host). */
static int udp_ingress(struct socktab_net *net, const struct sockaddr_storage *to, int oif)
{
	if (to->ss_family == AF_INET)
		return ingress_dev(net, AF_INET, &((const struct sockaddr_in *)to)->sin_addr, oif);
	return ingress_dev(net, AF_INET6, &((const struct sockaddr_in6 *)to)->sin6_addr, oif);
}

/* Is @sa 0.0.0.0, or ::ffff:0.0.0.0? */
static bool zero_v4(const struct sockaddr *sa, socklen_t len)
{
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in))
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == 0;
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		return IN6_IS_ADDR_V4MAPPED(a) && !a->s6_addr32[3];
	}
	return false;
}

int lb_udp_sendto(struct socktab_sock *sk, const struct sockaddr *sa, socklen_t len,
		  const void *data, size_t dlen)
{
	struct socktab_net *net = P(sk)->net;
	struct sockaddr_storage src, to;
	struct socktab_sock *rcv;
	int err = socktab_udp_sendto(sk, sa, len, &src, &to), oif, dif, back;

	if (err)
		return err;
	/* sock_error() when the first buffer is allocated: a pending ICMP error wins. */
	if ((err = lb_take_error(sk)))
		return -err;
	/* The output interface: the scope of a link-local destination (udpv6_sendmsg), else the
	 * socket's device. */
	oif = bound_dev(sk);
	if (sa && sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *d6 = (const void *)sa;

		if (d6->sin6_scope_id && IN6_IS_ADDR_LINKLOCAL(&d6->sin6_addr))
			oif = (int)d6->sin6_scope_id;
	}
	/*
	 * IPv4 toward 0.0.0.0: the output route is local through lo at once, and keeps the output
	 * device the flow asked for as its rt_iif (ip_route_output_key_hash_rcu), which is the
	 * ingress device (inet_iif); with none asked for, lo. A datagram is routed once, unlike
	 * connect() (ip_route_connect), which routes again toward the address chosen.
	 */
	if (sa && zero_v4(sa, len))
		dif = oif ? oif : SOCKTAB_LOOPBACK_IFINDEX;
	else
		dif = udp_ingress(net, &to, oif);
	if (!dif)
		return 0; /* it leaves through a device: lost */
	/* The program of a reuseport group sees the payload (R110); the ICMP lookup below is for
	 * no datagram, as the kernel's __udp4_lib_err passes it no skb. */
	socktab_set_rx_payload(data, dlen);
	rcv = udp_lookup(net, &src, &to, dif);
	socktab_set_rx_payload(NULL, 0);
	if (rcv) {
		P(rcv)->rx++;
		socktab_sock_put(rcv);
		return 0;
	}
	/*
	 * The ICMP port unreachable, looked up as the kernel does. __udp4_lib_err takes the device
	 * the ICMP packet itself came in on, skb->dev: lo for traffic the host sends itself, so
	 * a sender bound to another device never hears of it. __udp6_lib_err takes inet6_iif(),
	 * the device of the local route toward the source (a link-local source is reached
	 * through the device the datagram came in on).
	 */
	if (src.ss_family == AF_INET)
		back = SOCKTAB_LOOPBACK_IFINDEX;
	else if (IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&src)->sin6_addr))
		back = SOCKTAB_LOOPBACK_IFINDEX;
	else
		back = udp_ingress(net, &src,
				   IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)&src)->sin6_addr)
					   ? dif
					   : 0);
	rcv = back ? udp_lookup(net, &to, &src, back) : NULL;
	if (rcv) {
		if (socktab_get_state(rcv) == SOCKTAB_TCP_ESTABLISHED)
			P(rcv)->so_error = ECONNREFUSED;
		socktab_sock_put(rcv);
	}
	return 0;
}
