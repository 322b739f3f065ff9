/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The loopback model (loopback.h): the few kernel reactions around the tables that a replay
 * script can see, driven through socktab's public API only.
 *
 * connect: socktab_connect() chooses the port and hashes the socket (SYN_SENT); then the SYN is
 *   "delivered": socktab_lookup_tcp4/6 from the client's local address/port to the destination.
 *   - a listener whose accept queue has room (the kernel drops a SYN when the queue holds more
 *     than the backlog, so backlog N admits N + 1) gets a child from socktab_sock_new_child();
 *     child and client become ESTABLISHED and the child joins the listener's accept queue;
 *   - a listener with a full queue: the SYN is dropped and the blocking connect times out
 *     (-EINPROGRESS), the client stays SYN_SENT, as on the kernel until its SYN retransmit;
 *   - a TIME_WAIT entry for that 4-tuple: a new SYN is accepted by the TIME_WAIT (timestamps on),
 *     so the listener lookup runs;
 *   - the client itself (connect to its own address and port): TCP simultaneous open, the
 *     socket is ESTABLISHED with itself;
 *   - nothing: RST, -ECONNREFUSED, and the client goes to CLOSE (tcp_done releases a port that
 *     connect() chose); it is not readable afterwards (the failed connect disconnects it).
 *   Anything else found (a live connection with the reversed 4-tuple) is not modelled: the SYN is
 *   treated as unanswered (-EINPROGRESS).
 * close: a FIN to the peer of an ESTABLISHED socket (peer -> CLOSE_WAIT, readable EOF; the closer
 *   leaves TIME_WAIT through socktab_close); a CLOSE_WAIT socket's close leaves no TIME_WAIT. An
 *   abortive close (SO_LINGER {1, 0}, or unread data, as tcp_close() does) resets the peer
 *   (tcp_reset: SO_ERROR ECONNRESET, EPIPE from CLOSE_WAIT; state CLOSE). Closing or
 *   disconnecting a listener resets the children still in its queue (inet_csk_listen_stop).
 * Known gap: a reset that reaches a peer already in TIME_WAIT (FIN_WAIT2 substate) kills that
 *   entry in the kernel; socktab has no call for that, so the entry stays.
 * UDP: a datagram is queued (rx) on the socket socktab_lookup_udp4/6 returns for its source and
 *   destination. When there is none, the ICMP port unreachable goes back through the same lookup
 *   reversed, and a *connected* socket found there records ECONNREFUSED (__udp4_lib_err without
 *   IP_RECVERR); its next send() returns it and clears it (sock_error), as SO_ERROR does.
 */
#include <errno.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "loopback.h"

/* Per-socket harness state, in socktab_sock_priv(). Pointers are cleared before a socket is
 * closed, because socktab reuses a closed socket's memory at once. */
struct lb_sk {
	struct socktab_sock *peer;     /* other end of the connection, NULL when none */
	struct socktab_sock *listener; /* a queued child: the listener it waits on */
	struct socktab_sock *qnext;    /* a queued child: next in the accept queue */
	struct socktab_sock *qhead, *qtail; /* a listener: its accept queue */
	int qlen;
	int so_error; /* pending error reported by SO_ERROR / the next send */
	int rx;       /* bytes received and not read (the scripts never read) */
	bool eof;     /* FIN or RST received, or connect refused: poll() says POLLIN */
	bool self;    /* connected to itself (simultaneous open) */
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

/* Abort a child still in an accept queue: RST to its client, then free it. */
static void abort_child(struct socktab_sock *child)
{
	static const struct linger lg0 = { 1, 0 };
	struct socktab_sock *peer = P(child)->peer;

	if (peer && need_reset(socktab_get_state(child))) {
		unlink_peer(child);
		receive_rst(peer);
	}
	unlink_peer(child);
	socktab_setsockopt(child, SOL_SOCKET, SO_LINGER, &lg0, sizeof(lg0));
	socktab_close(child);
}

static void flush_queue(struct socktab_sock *ln)
{
	struct socktab_sock *c = P(ln)->qhead, *next;

	for (; c; c = next) {
		next = P(c)->qnext;
		P(c)->qnext = NULL;
		P(c)->listener = NULL;
		abort_child(c);
	}
	P(ln)->qhead = P(ln)->qtail = NULL;
	P(ln)->qlen = 0;
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
	    (err = socktab_getpeername(sk, (struct sockaddr *)&r, &rl)))
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

/*
 * The ingress device of a packet the host sends to itself (R91): the device that holds the
 * destination address, as its local route says (lo for 127.0.0.0/8 and ::1).
 */
static int ingress_dev(struct socktab_net *net, int family, const void *daddr)
{
	struct socktab_route_result res;

	if (socktab_route_lookup(net, family, daddr, 0, &res) || res.type != SOCKTAB_RTN_LOCAL)
		return SOCKTAB_LOOPBACK_IFINDEX;
	return res.ifindex;
}

static int tuple_ingress(struct socktab_net *net, const struct tuple *t)
{
	return t->v4 ? ingress_dev(net, AF_INET, &t->r4) : ingress_dev(net, AF_INET6, &t->r6);
}

static struct socktab_sock *lookup(struct socktab_net *net, const struct tuple *t, bool listener)
{
	int dif = tuple_ingress(net, t);

	if (t->v4)
		return listener ? socktab_lookup_listener4(net, t->l4, t->lport, t->r4, t->rport,
							   dif, 0)
				: socktab_lookup_tcp4(net, t->l4, t->lport, t->r4, t->rport, dif, 0);
	return listener ? socktab_lookup_listener6(net, &t->l6, t->lport, &t->r6, t->rport, dif, 0)
			: socktab_lookup_tcp6(net, &t->l6, t->lport, &t->r6, t->rport, dif, 0);
}

/*
 * Deliver the client's SYN: the packet goes from the client's local address/port to its peer.
 * In the listener's view local = the client's remote side, remote = the client's local side.
 */
static int deliver_syn(struct socktab_sock *sk)
{
	struct socktab_net *net = P(sk)->net;
	struct socktab_sock *found, *child;
	struct sockaddr_storage la, ra;
	struct tuple t;
	socklen_t len;
	int err, family, backlog;

	if ((err = get_tuple(sk, &t)))
		return err;
	found = lookup(net, &t, false);
	if (found && socktab_get_state(found) == SOCKTAB_TCP_TIME_WAIT) {
		socktab_sock_put(found);
		found = lookup(net, &t, true);
	}
	if (found == sk) {
		socktab_sock_put(found);
		P(sk)->self = true;
		return socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED);
	}
	if (!found) {
		/* RST: tcp_done() sets CLOSE; the failing blocking connect() then runs
		 * tcp_disconnect(), which clears the end of stream again: not readable. */
		socktab_set_state(sk, SOCKTAB_TCP_CLOSE);
		/* The RST's ECONNREFUSED replaces any pending error, and connect() returning
		 * it consumes it (sock_error): SO_ERROR reads 0 afterwards. The failed blocking
		 * connect() then runs tcp_disconnect(): the local address is forgotten too. */
		P(sk)->so_error = 0;
		{
			struct sockaddr unspec = { .sa_family = AF_UNSPEC };

			socktab_connect(sk, &unspec, sizeof(unspec));
		}
		return -ECONNREFUSED;
	}
	if (socktab_get_state(found) != SOCKTAB_TCP_LISTEN) {
		socktab_sock_put(found);
		return -EINPROGRESS;
	}
	backlog = socktab_listen_backlog(found);
	if (P(found)->qlen > backlog) { /* sk_acceptq_is_full(): the SYN is dropped */
		socktab_sock_put(found);
		return -EINPROGRESS;
	}
	family = socktab_sock_family(found);
	len = make_sa(&la, family, &t, true);
	make_sa(&ra, family, &t, false);
	child = socktab_sock_new_child(found, (struct sockaddr *)&la, (struct sockaddr *)&ra, len,
				       tuple_ingress(net, &t), 0);
	if (!child) {
		err = -errno;
		socktab_sock_put(found);
		return err;
	}
	memset(P(child), 0, sizeof(struct lb_sk));
	P(child)->net = net;
	socktab_set_state(child, SOCKTAB_TCP_ESTABLISHED);
	socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED);
	P(child)->peer = sk;
	P(sk)->peer = child;
	P(child)->listener = found;
	if (P(found)->qtail)
		P(P(found)->qtail)->qnext = child;
	else
		P(found)->qhead = child;
	P(found)->qtail = child;
	P(found)->qlen++;
	socktab_sock_put(found);
	return 0;
}

int lb_connect(struct socktab_sock *sk, const struct sockaddr *sa, socklen_t len)
{
	int err;

	if (is_udp(sk))
		return socktab_connect(sk, sa, len); /* no handshake; AF_UNSPEC disconnects */
	if (sa && len >= sizeof(sa_family_t) && sa->sa_family == AF_UNSPEC)
		return lb_disconnect(sk);
	err = socktab_connect(sk, sa, len);
	if (err)
		return err;
	P(sk)->so_error = 0; /* tcp_connect_init() clears sk_err */
	return deliver_syn(sk);
}

int lb_disconnect(struct socktab_sock *sk)
{
	int st = socktab_get_state(sk);
	struct socktab_sock *peer;

	if (st < 0)
		return st;
	if (is_udp(sk)) {
		struct sockaddr unspec = { .sa_family = AF_UNSPEC };

		return socktab_connect(sk, &unspec, sizeof(unspec));
	}
	if (st == SOCKTAB_TCP_LISTEN)
		flush_queue(sk);
	peer = P(sk)->peer;
	unlink_peer(sk);
	/* tcp_disconnect(): RST to a connected peer; the socket reports ECONNRESET itself. */
	if (need_reset(st) || st == SOCKTAB_TCP_SYN_SENT)
		P(sk)->so_error = ECONNRESET;
	if (peer && need_reset(st))
		receive_rst(peer);
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
	int st = socktab_get_state(sk);
	struct socktab_sock *peer;
	bool abortive;

	if (st < 0)
		return st;
	if (is_udp(sk))
		return socktab_close(sk);
	if (st == SOCKTAB_TCP_LISTEN)
		flush_queue(sk);
	/* tcp_close(): unread data or SO_LINGER {1, 0} turn the FIN into a RST. */
	abortive = P(sk)->rx > 0 || linger_zero(sk);
	peer = P(sk)->peer;
	unlink_peer(sk);
	if (peer && abortive && need_reset(st)) {
		receive_rst(peer);
	} else if (peer && st == SOCKTAB_TCP_ESTABLISHED) {
		P(peer)->eof = true;
		socktab_set_state(peer, SOCKTAB_TCP_CLOSE_WAIT);
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
	c = P(ln)->qhead;
	if (!c)
		return -EAGAIN;
	P(ln)->qhead = P(c)->qnext;
	if (!P(ln)->qhead)
		P(ln)->qtail = NULL;
	P(ln)->qlen--;
	P(c)->qnext = NULL;
	P(c)->listener = NULL;
	*child = c;
	return 0;
}

int lb_send(struct socktab_sock *sk)
{
	int st = socktab_get_state(sk), err;

	if (st < 0)
		return st;
	if (is_udp(sk))
		return lb_udp_sendto(sk, NULL, 0);
	if (st != SOCKTAB_TCP_ESTABLISHED && st != SOCKTAB_TCP_CLOSE_WAIT) {
		/* sk_stream_wait_connect(): a pending error first, then EAGAIN while connecting
		 * (the socket is non-blocking), else EPIPE. */
		if ((err = lb_take_error(sk)))
			return -err;
		return st == SOCKTAB_TCP_SYN_SENT || st == SOCKTAB_TCP_SYN_RECV ? -EAGAIN : -EPIPE;
	}
	if (P(sk)->self) {
		P(sk)->rx++;
	} else if (P(sk)->peer) {
		P(P(sk)->peer)->rx++;
	} else {
		/* The peer is gone (its TIME_WAIT answers data with RST): the byte is sent,
		 * then the connection is reset. */
		receive_rst(sk);
	}
	return 0;
}

bool lb_readable(struct socktab_sock *sk)
{
	if (socktab_get_state(sk) == SOCKTAB_TCP_LISTEN)
		return P(sk)->qlen > 0;
	return P(sk)->rx > 0 || P(sk)->eof;
}

int lb_take_error(struct socktab_sock *sk)
{
	int e = P(sk)->so_error;

	P(sk)->so_error = 0;
	return e;
}

/* ---- UDP ---- */

/* The socket a datagram from @from to @to is delivered to, referenced, or NULL. */
static struct socktab_sock *udp_lookup(struct socktab_net *net, const struct sockaddr_storage *from,
				       const struct sockaddr_storage *to)
{
	if (from->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)from, *b = (const void *)to;

		return socktab_lookup_udp4(net, a->sin_addr.s_addr, a->sin_port, b->sin_addr.s_addr,
					   b->sin_port, ingress_dev(net, AF_INET, &b->sin_addr), 0);
	}
	const struct sockaddr_in6 *a = (const void *)from, *b = (const void *)to;

	return socktab_lookup_udp6(net, &a->sin6_addr, a->sin6_port, &b->sin6_addr, b->sin6_port,
				   ingress_dev(net, AF_INET6, &b->sin6_addr), 0);
}

int lb_udp_sendto(struct socktab_sock *sk, const struct sockaddr *sa, socklen_t len)
{
	struct socktab_net *net = P(sk)->net;
	struct sockaddr_storage src, to;
	struct socktab_sock *rcv;
	int err = socktab_udp_sendto(sk, sa, len, &src, &to);

	if (err)
		return err;
	/* sock_error() when the first buffer is allocated: a pending ICMP error wins. */
	if ((err = lb_take_error(sk)))
		return -err;
	rcv = udp_lookup(net, &src, &to);
	if (rcv) {
		P(rcv)->rx++;
		socktab_sock_put(rcv);
		return 0;
	}
	rcv = udp_lookup(net, &to, &src); /* the ICMP error, looked up as the kernel does */
	if (rcv) {
		if (socktab_get_state(rcv) == SOCKTAB_TCP_ESTABLISHED)
			P(rcv)->so_error = ECONNREFUSED;
		socktab_sock_put(rcv);
	}
	return 0;
}
