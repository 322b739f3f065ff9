/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sockets and the socket calls: socket(), bind(), listen(), connect(), close(), options and
 * names, with the kernel's rules for both TCP and UDP (docs/rules.md gives every rule number
 * cited below). The embedding stack drives the TCP state machine; socktab keeps the tables.
 */
#ifndef SOCKTAB_SOCK_H
#define SOCKTAB_SOCK_H

#include "socktab/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Create a socket in @net. @proto: SOCKTAB_TCP or SOCKTAB_UDP; @family: AF_INET or AF_INET6.
 * Returns NULL and sets errno (EAFNOSUPPORT, EPROTONOSUPPORT, EINVAL, ENOMEM). The socket comes
 * from the net's pool for its protocol and family; once its last reference is gone its memory is
 * reused only after an RCU grace period, so a lookup inside a read-side section may use what it
 * found (socktab/lookup.h).
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the new socket's lock stripe.
 */
struct socktab_sock *socktab_socket(struct socktab_net *net, int proto, int family);

/*
 * Caller data area of @sk (sock_priv_size bytes, zeroed by socktab_socket() and
 * socktab_sock_new_child()), or NULL if the net has none.
 * Context: any thread, registered or not. @sk referenced, or found in the caller's read-side
 * section.
 */
void *socktab_sock_priv(struct socktab_sock *sk);

/*
 * bind(2). @addr must match the socket family (AF_INET: sockaddr_in; AF_INET6: sockaddr_in6).
 * Port 0 chooses a port (bind(0): TCP odd ports first, R49; UDP from a random start with no
 * parity rule, R69) unless IP_BIND_ADDRESS_NO_PORT is set.
 * Errors: -EINVAL (already bound, short length, v4-mapped on v6only), -EAFNOSUPPORT,
 * -EADDRNOTAVAIL (address not local), -EACCES (privileged port, net not privileged),
 * -EADDRINUSE, -EEXIST (UDP: another member of the port's SO_REUSEPORT group has the same
 * SOCKTAB_SO_REUSEPORT_ID), -ENODEV (IPv6: the bound device, or a link-local address's scope,
 * names no device; as in the kernel, the scope stays the socket's bound device), -ENOMEM,
 * -EBADF (closed socket, TIME_WAIT or request entry).
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the socket lock, then bhash/bhash2 locks.
 */
int socktab_bind(struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len);

/*
 * connect(2). TCP: choose a local address and port (the net's variant), insert the socket into
 * ehash in state SYN_SENT; a bound socket keeps its port. UDP: autobind, set the peer, enter the
 * 4-tuple hash. connect() with an AF_UNSPEC address disconnects (TCP: tcp_disconnect; UDP: R75).
 * Errors: -EAFNOSUPPORT, -EINVAL, -EISCONN (TCP, connected), -EALREADY (TCP, SYN_SENT),
 * -ENETUNREACH (no route, or v4-mapped on v6only), -ENODEV (the bound device is gone),
 * -EADDRNOTAVAIL (no unique 4-tuple), -EAGAIN (UDP autobind found no port), -EACCES (UDP
 * broadcast without SO_BROADCAST), -ENOMEM, -EBADF.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the socket lock, bhash/bhash2 and ehash bucket locks, and enters a
 * read-side section of its own for the pre-checks.
 */
int socktab_connect(struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len);

/*
 * Give the calling thread's TCP connect()s a share of the local ports, so that threads opening
 * connections at the same time stop taking one another's ports: @shares shares (a power of two
 * from 1 to 64), this thread's is @share (below @shares). A port's share is given by its number:
 * blocks of 1024 / @shares consecutive port numbers go to the shares in turn (bits 9 down to
 * 10 - log2(@shares) of the port). A connect() on this thread that chooses its local port
 * examines the same candidates as without a share, pass by pass (R54: the ports of the range's
 * low end's parity, then the others), but in each pass this share's ports before the other
 * shares' ones, and the share is mixed into the index of the perturbation slot it starts from
 * and advances (R57), so that toward one destination each share advances a slot of its own. It
 * therefore fails (-EADDRNOTAVAIL) exactly when it would without a share, and keeps
 * IP_LOCAL_PORT_RANGE, reserved ports and an RSS queue wish; which usable port it takes (a free
 * one, or one whose TIME_WAIT entry it takes over, R61) may differ from the kernel's choice.
 * With @shares 1, every thread's default, the order and the choice are the kernel's. bind()
 * with port 0 and UDP are unaffected.
 * Why: with bind tables of at least 1024 slots (the default) a share's ports have bind-table
 * slots and lock stripes of their own (for one local address), so connect()/close() churn on
 * threads of different shares stops moving those lines between cores; docs/benchmarks.md has
 * the figures (bench crr --port-shares). Give each thread that connects its own share, as a
 * stack gives each polling core its queue.
 * Returns 0, or -EINVAL for @shares not a power of two in 1..64 or @share >= @shares (nothing
 * changes).
 * Context: any thread, registered or not. Per calling thread (every net; other threads are
 * unaffected); no lock.
 */
int socktab_thread_set_port_share(unsigned int share, unsigned int shares);

/*
 * listen(2): bind(0) first if the socket has no port (odd port, R49), re-validate the port in
 * LISTEN state (R46), join or create a SO_REUSEPORT group (R34) and enter the listener table.
 * @backlog is clamped to net.core.somaxconn; listen() on a listener only updates the backlog.
 * Errors: -EINVAL (connected or connecting socket), -EADDRINUSE, -EEXIST (another member of
 * the port's SO_REUSEPORT group has the same SOCKTAB_SO_REUSEPORT_ID), -ENOMEM, -EBADF,
 * -EOPNOTSUPP (UDP).
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the socket lock, then bhash/bhash2 and lhash2 locks.
 */
int socktab_listen(struct socktab_sock *sk, int backlog);

/* The backlog a listener was given (after clamping); -EINVAL for a socket that does not listen,
 * -EBADF for a closed socket or a TIME_WAIT or request entry.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the socket lock. */
int socktab_listen_backlog(struct socktab_sock *sk);

/*
 * Create the child socket of @listener for a connection from @remote to @local (the SYN's source
 * and destination) that arrived on device @dif (VRF @sdif, or 0): it inherits the listener's
 * port and owner (kernel __inet_inherit_port) and device (R94: an unbound listener's IPv6 child
 * of a link-local peer gets @dif, and with net.ipv4.tcp_l3mdev_accept a child gets the VRF), is
 * inserted into ehash in state SYN_RECV and returned with the caller's reference (close it with
 * socktab_close()). Errors (NULL, errno): EINVAL (not a listener, bad address, or a negative
 * @dif or @sdif or one that names no device of the net: a SYN arrives on a device the net has,
 * so an unknown one is a bad argument, not a device to wait for; 0 names none), EADDRINUSE (the
 * 4-tuple exists on that device), ENOMEM.
 * @local and @remote are of the listener's family, and @len covers each. A dual-stack listener
 * (AF_INET6 without IPV6_V6ONLY), which IPv4 lookups return for an IPv4 SYN, takes that SYN's
 * endpoints as sockaddr_in too, as they come off the wire, or in their v4-mapped sockaddr_in6
 * form: either way the child is AF_INET6 with v4-mapped names, as the kernel makes it. New code
 * may pass what it parsed from the packet.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. @listener referenced, or found in the caller's read-side section (a listener that
 * closed meanwhile gives EINVAL). It takes the listener's lock and bucket locks.
 */
struct socktab_sock *socktab_sock_new_child(struct socktab_sock *listener,
					    const struct sockaddr *local,
					    const struct sockaddr *remote, socklen_t len, int dif,
					    int sdif);

/*
 * Request sockets, the SYN queue and the accept queue (the kernel's request_sock and
 * icsk_accept_queue, rules R112-R124). A SYN for a listener goes:
 *   socktab_syn_decide() -> SOCKTAB_SYN_QUEUE: socktab_req_new() puts a request entry for its
 *     4-tuple in ehash (state SOCKTAB_TCP_NEW_SYN_RECV); lookups find it (SOCKTAB_HIT_REQUEST in a
 *     batch), socktab_req_priv() holds the caller's handshake state;
 *   the handshake's final ACK -> socktab_req_promote(): the full child takes the request's place
 *     in ehash with one store (a lookup of the 4-tuple finds the one or the other, never
 *     neither) and joins the listener's accept queue; socktab_accept() hands it over;
 *   a timeout or RST -> socktab_req_drop().
 * SOCKTAB_SYN_COOKIE: answer with a SYN cookie and queue nothing; a valid cookie's ACK makes
 * its child with socktab_req_cookie_child(). SOCKTAB_SYN_DROP: drop the SYN.
 * A listener's close (or its move to CLOSE) empties its queues: with net.ipv4.tcp_migrate_req
 * a SO_REUSEPORT listener's requests and unaccepted children move to another member of its
 * group (R120-R124), else they are dropped and the children closed, as the kernel's
 * inet_csk_listen_stop() does. A request entry is none of the other calls' business (-EBADF).
 */
enum socktab_syn_verdict {
	SOCKTAB_SYN_QUEUE = 0,  /* make a request entry (socktab_req_new) and answer SYN-ACK */
	SOCKTAB_SYN_COOKIE = 1, /* answer with a SYN cookie; keep no state */
	SOCKTAB_SYN_DROP = 2,   /* drop the SYN */
};
/* socktab_syn_decide() flags. */
#define SOCKTAB_SYN_TW_RECYCLE 0x1  /* the SYN reopens a TIME_WAIT 4-tuple (the kernel's isn) */
#define SOCKTAB_SYN_PEER_PROVEN 0x2 /* the peer is known alive (tcp_peer_is_proven) */

/*
 * tcp_conn_request()'s verdict for a SYN that reached @listener (R112-R116): with
 * net.ipv4.tcp_syncookies 2, or a full SYN queue (more requests than the backlog), a cookie if
 * tcp_syncookies is 1 or 2, else a drop (a recycling SYN skips this step); then a drop while the
 * accept queue is full (more children than the backlog); then, for a SYN that does not recycle
 * and with tcp_syncookies 0, a drop when less than a quarter of net.ipv4.tcp_max_syn_backlog is
 * left and the peer is not proven.
 * Otherwise SOCKTAB_SYN_QUEUE. Returns a verdict, or -EINVAL (NULL, not a listener, unknown
 * flag). The counters are read without a lock: a verdict is right as of some instant.
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * @listener referenced or found in the caller's read-side section; it takes no lock.
 */
int socktab_syn_decide(struct socktab_sock *listener, unsigned int flags);

/*
 * Make a request entry of @listener for the SYN from @remote to @local (as
 * socktab_sock_new_child() takes them, sockaddr_in for an IPv4 SYN to a dual-stack listener
 * included) that arrived on @dif (VRF @sdif): it gets the child's
 * device (R94), enters ehash in state SOCKTAB_TCP_NEW_SYN_RECV and the listener's SYN queue,
 * with its area zeroed, and is returned with the caller's reference (socktab_sock_put()). A
 * TIME_WAIT entry of the 4-tuple is taken over. It does not apply the queue limits:
 * socktab_syn_decide() does. Errors (NULL, errno): EINVAL (not a listener, bad address or
 * device, as socktab_sock_new_child() says), EADDRINUSE (the 4-tuple exists on that device),
 * ENOMEM.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the listener's lock and bucket locks.
 */
struct socktab_sock *socktab_req_new(struct socktab_sock *listener, const struct sockaddr *local,
				     const struct sockaddr *remote, socklen_t len, int dif,
				     int sdif);

/*
 * The listener whose queue holds request entry @req (it changes when the request migrates), or
 * NULL for anything else: a request in no queue any more (dropped, its child accepted, or
 * dropped by its listener's close) has forgotten its listener, so a request held after its
 * listener closed never names the socket that listener's memory has become. Not referenced:
 * valid until the caller's RCU read-side section ends (socktab_sock_hold() keeps it longer).
 * Context: registered thread, only inside an RCU read-side section. Any thread may drop,
 * promote or accept the request or close its listener meanwhile (the answer is then that of
 * some instant of the call); it takes no lock.
 */
struct socktab_sock *socktab_req_listener(struct socktab_sock *req);

/*
 * Caller data area of request entry @req (req_priv_size bytes, zeroed by socktab_req_new()), or
 * NULL if the net has none or @req is no request entry. The caller orders its own accesses.
 * Context: any thread, registered or not. @req referenced, or found in the caller's read-side
 * section.
 */
void *socktab_req_priv(struct socktab_sock *req);

/*
 * A SYN-ACK retransmission timer of @req fired (reqsk_timer_handler): its count goes up, and
 * on the first one the request is no longer young. Returns the new count, -ENOENT when @req is
 * no longer in a SYN queue, -EINVAL for anything but a request entry.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. @req referenced, or found in the caller's read-side section; it takes its
 * listener's lock.
 */
int socktab_req_retransmit(struct socktab_sock *req);

/*
 * The final ACK of @req's handshake arrived (tcp_check_req -> syn_recv_sock ->
 * inet_csk_complete_hashdance): make the child, in @state (SOCKTAB_TCP_SYN_RECV or
 * SOCKTAB_TCP_ESTABLISHED), as socktab_sock_new_child() makes one (port, owner, device and
 * options of the listener), with the first req_priv_size bytes of its area copied from the
 * request's; the child takes the request's place in ehash with one store (R117) and joins the
 * tail of the listener's accept queue (R118). 0 and *@child, referenced (socktab_sock_put()); the
 * accept queue owns the child until socktab_accept(). Errors: -EAGAIN the accept queue is full
 * (sk_acceptq_is_full, R115: drop the ACK; the request stays and a retransmitted ACK may try
 * again), -ENOENT @req is no longer in a SYN queue (dropped, promoted, or its listener closed
 * without migration: look the 4-tuple up again, as the kernel does for a stolen request, since
 * its child may already be in its place), -EINVAL (not a request entry, bad @state, NULL @child), -ENOMEM. On error
 * nothing changed.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. @req referenced, or found in the caller's read-side section; it takes its
 * listener's lock and bucket locks.
 */
int socktab_req_promote(struct socktab_sock *req, int state, struct socktab_sock **child);

/* What socktab_req_complete() did, and what the caller does with the ACK. */
enum socktab_req_outcome {
	SOCKTAB_REQ_CHILD = 0,  /* the child is made: hand it the segment */
	SOCKTAB_REQ_DROP = 1,   /* no child: drop the ACK; the request stays for the peer's next */
	SOCKTAB_REQ_RESET = 2,  /* no child and no request: answer the ACK with a reset */
	SOCKTAB_REQ_STOLEN = 3, /* completed by another thread: look the segment up again */
};
/* socktab_req_complete() flags. */
#define SOCKTAB_REQ_ABORT_ON_OVERFLOW 0x1 /* the kernel's net.ipv4.tcp_abort_on_overflow 1 */
#define SOCKTAB_REQ_ACCEPT 0x2            /* hand the child over at once (no accept queue wait) */

/* The kernel's counters (nstat's names) of the handshakes a caller completes: its own, one per
 * thread if it likes, added to by socktab_req_complete() without atomics. Zero it before use;
 * later versions count in the reserved words. */
struct socktab_req_counters {
	uint64_t listen_overflows; /* TcpExtListenOverflows: final ACKs a full accept queue refused */
	uint64_t listen_drops;     /* TcpExtListenDrops: final ACKs that made no child */
	uint64_t embryonic_rsts;   /* TcpExtEmbryonicRsts: requests reset (abort on overflow) */
	uint64_t reserved[5];
};

/*
 * The handshake's final ACK reached request entry @req (a lookup's SOCKTAB_HIT_REQUEST), and the
 * caller found it acceptable (its ACK number acknowledges the SYN-ACK): the kernel's tcp_v4_rcv
 * on a TCP_NEW_SYN_RECV entry through tcp_check_req, syn_recv_sock and
 * inet_csk_complete_hashdance, in one call under the listener's lock. Outcomes:
 * - SOCKTAB_REQ_CHILD: the child is made in @state (SOCKTAB_TCP_SYN_RECV or
 *   SOCKTAB_TCP_ESTABLISHED) as socktab_req_promote() makes it (it takes the request's place in
 *   ehash with one store, R117, and its area starts with the request's) and *@child is set.
 *   Without SOCKTAB_REQ_ACCEPT it joins the tail of the listener's accept queue (R118) and
 *   *@child holds a reference (socktab_sock_put()), the accept queue owning it until
 *   socktab_accept(); with SOCKTAB_REQ_ACCEPT it is handed over at once, as socktab_accept()
 *   would hand it (the caller owns it: close it with socktab_close(); no other reference), for
 *   a stack with no accept step. With @listener non-NULL, *@listener is the listener that took
 *   it (after a tcp_migrate_req move, not the one the SYN found), referenced.
 * - SOCKTAB_REQ_DROP: the listener's accept queue is full (sk_acceptq_is_full, R115:
 *   ListenOverflows and ListenDrops), or there is no memory for the child (ListenDrops): drop the
 *   ACK; the request stays, and the peer's next ACK or data segment tries again.
 * - SOCKTAB_REQ_RESET: answer the ACK with a reset. Either the queue refused it as above and
 *   SOCKTAB_REQ_ABORT_ON_OVERFLOW is given (the request is dropped: EmbryonicRsts, besides the
 *   counters above), or the request was dropped before this call without a child: its
 *   listener closed without migrating it (R119), or another thread dropped it (a RST, its
 *   timeout). The kernel drops such a request and looks the segment up again, which finds no
 *   entry of the 4-tuple and resets.
 * - SOCKTAB_REQ_STOLEN: another thread completed the handshake first (the kernel's req_stolen):
 *   the child holds the 4-tuple; look the segment up again and hand it to what the lookup finds.
 * In every case but SOCKTAB_REQ_CHILD, *@child (and *@listener) is NULL. @counters, when
 * non-NULL, is added to. -EINVAL (not a request entry, bad @state, NULL @child, unknown flag):
 * nothing changed. The form new code should use for a final ACK (socktab_req_promote() keeps
 * working).
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. @req referenced, or found in the caller's read-side section; it takes its
 * listener's lock and bucket locks.
 */
int socktab_req_complete(struct socktab_sock *req, int state, unsigned int flags,
			 struct socktab_sock **child, struct socktab_sock **listener,
			 struct socktab_req_counters *counters);

/*
 * Drop request entry @req (its timer gave up, or a RST or bad ACK arrived;
 * inet_csk_reqsk_queue_drop): it leaves ehash and its SYN queue; the caller's reference stays
 * the caller's. 0, -ENOENT (no longer in a SYN queue), -EINVAL (not a request entry).
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. @req referenced, or found in the caller's read-side section; it takes its
 * listener's lock and the ehash lock.
 */
int socktab_req_drop(struct socktab_sock *req);

/*
 * A valid SYN cookie's ACK reached @listener (cookie_v4_check -> tcp_get_cookie_sock): make the
 * child as socktab_req_promote() would from a request of these arguments (the
 * socktab_sock_new_child() ones) and queue it, in @state. Referenced, as
 * socktab_req_promote()'s. Errors (NULL, errno): EAGAIN (accept queue full, R115), and those of
 * socktab_sock_new_child().
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the listener's lock and bucket locks.
 */
struct socktab_sock *socktab_req_cookie_child(struct socktab_sock *listener,
					      const struct sockaddr *local,
					      const struct sockaddr *remote, socklen_t len,
					      int dif, int sdif, int state);

/*
 * accept(2): the oldest child of @listener's accept queue, which the caller now owns (close it
 * with socktab_close()). A child the stack closed before it was accepted is passed over. NULL
 * and errno EAGAIN when the queue is empty, EINVAL when @listener is not a listener.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the listener's lock.
 */
struct socktab_sock *socktab_accept(struct socktab_sock *listener);

/* The queues of a listener (socktab_listen_info()). */
struct socktab_listen_info {
	uint32_t qlen;            /* requests in the SYN queue (inet_csk_reqsk_queue_len) */
	uint32_t young;           /* of those, never retransmitted (inet_csk_reqsk_queue_young) */
	uint32_t ack_backlog;     /* children in the accept queue (sk_ack_backlog) */
	uint32_t max_ack_backlog; /* the listen() backlog (sk_max_ack_backlog) */
};

/*
 * Read @listener's queue counters into @info. 0, or -EINVAL (NULL, not a listener).
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the listener's lock.
 */
int socktab_listen_info(struct socktab_sock *listener, struct socktab_listen_info *info);

/*
 * Move a hashed TCP socket to @state (the embedding stack drives the state machine:
 * SYN_SENT -> ESTABLISHED -> FIN_WAIT1...). SOCKTAB_TCP_CLOSE is the kernel's tcp_done() (a reset
 * or a refused connect): the socket leaves ehash and, unless bind() locked it, its port; it stays
 * open. SOCKTAB_TCP_TIME_WAIT is the kernel's tcp_time_wait() for a socket still held: the peer's
 * FIN reached it in FIN_WAIT1/FIN_WAIT2 (or our FIN's ACK in CLOSING); a TIME_WAIT entry (substate
 * TIME_WAIT) takes over the 4-tuple and the port, and the socket becomes CLOSE, keeping its
 * addresses; as after tcp_done() it gives its port back unless bind() locked it (then it owns
 * the port beside the entry); close it as usual (-EINVAL from any other state). Without memory
 * for the entry it is tcp_done() alone, returns 0 and counts in tw_overflow, as close() does
 * (below). LISTEN is
 * reached through socktab_listen() only (-EINVAL). -EOPNOTSUPP on a UDP socket.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the socket lock; a move to CLOSE or TIME_WAIT also takes the locks of the
 * tables the socket leaves or enters (ehash, bhash/bhash2, a listener's lhash2) and, for
 * TIME_WAIT, the TIME_WAIT list lock.
 */
int socktab_set_state(struct socktab_sock *sk, int state);

/* Current state of @sk (SOCKTAB_TCP_*), or -EBADF for a closed socket.
 * Context: any thread, registered or not. */
int socktab_get_state(struct socktab_sock *sk);

/*
 * close(2). An actively closed connection (ESTABLISHED, FIN_WAIT1/2, CLOSING) leaves a TIME_WAIT
 * entry that keeps its 4-tuple and port until it expires or is recycled, unless SO_LINGER {1, 0}
 * is set (abortive close: everything is removed at once). The entry starts in the FIN_WAIT2
 * substate (the peer's FIN is still to come) unless the socket was CLOSING, and takes the first
 * tw_priv_size bytes of the socket's caller data (socktab/net.h). When the entry cannot be
 * allocated (no memory), close() still succeeds and returns 0, since the socket is closed either
 * way, as close(2)'s is, but leaves no entry: the 4-tuple and the port are free at once, as the
 * kernel leaves them when tcp_max_tw_buckets is reached, and the net's tw_overflow counter
 * (socktab_net_stats()) counts it. After the call @sk must not be used: its memory returns to the
 * pool; a second close of a not-yet-reused socket gives -EBADF.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes socket, bucket and TIME_WAIT locks.
 */
int socktab_close(struct socktab_sock *sk);

/*
 * TIME_WAIT entries. A TCP lookup may return one (its state is SOCKTAB_TCP_TIME_WAIT);
 * socktab_sock_tw() gives it as a struct socktab_tw, NULL for any other socket. On a TIME_WAIT
 * entry only these calls, socktab_get_state(), socktab_sock_family() and socktab_sock_put()
 * apply; socktab_sock_priv() returns NULL (the connection's data is gone), socktab_tw_priv()
 * the tw_priv_size bytes close() kept (NULL when 0).
 * socktab_tw_substate(): SOCKTAB_TCP_FIN_WAIT2 (waiting for the peer's FIN) or
 * SOCKTAB_TCP_TIME_WAIT. socktab_tw_fin(): the peer's FIN (or its retransmission) reached the
 * entry: it is TIME_WAIT for a full period from now (0). socktab_tw_rearm(): restart the period
 * without changing the substate (an in-window segment, inet_twsk_reschedule). socktab_tw_reset():
 * an in-window RST reached the entry (R100): a FIN_WAIT2 entry dies; a TIME_WAIT entry dies
 * unless net.ipv4.tcp_rfc1337 is set; returns 1 if it died (its port is free at once), 0 if not.
 * socktab_tw_kill(): remove the entry now. All return -EINVAL for NULL or an entry that is no
 * longer TIME_WAIT: expired, killed, reset, or replaced by a new connection or request entry of
 * its 4-tuple (connect()'s takeover, a listener's child or request), even while the caller still
 * holds it from a lookup. The socktab_tw_priv() bytes are the caller's to update (e.g. rcv_nxt after
 * the peer's FIN); a lookup on another thread may read them meanwhile, so the caller orders
 * such accesses itself.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. The entry referenced, or found in the caller's read-side section; fin and rearm
 * take the TIME_WAIT list lock, reset and kill the entry's ehash lock, a bhash lock and the
 * TIME_WAIT list lock, the others none.
 */
struct socktab_tw *socktab_sock_tw(struct socktab_sock *sk);
int socktab_tw_substate(struct socktab_tw *tw);
void *socktab_tw_priv(struct socktab_tw *tw);
int socktab_tw_fin(struct socktab_tw *tw);
int socktab_tw_rearm(struct socktab_tw *tw);
int socktab_tw_reset(struct socktab_tw *tw);
int socktab_tw_kill(struct socktab_tw *tw);

/*
 * setsockopt(2) / getsockopt(2). Supported: SOL_SOCKET SO_REUSEADDR, SO_REUSEPORT, SO_LINGER
 * (struct linger), SO_BROADCAST (UDP sends), SO_BINDTODEVICE (a device name; "" or 0 bytes
 * unbinds; an unknown name -ENODEV), SO_BINDTOIFINDEX (an ifindex, 0 unbinds; not checked
 * until bind/connect), SO_ERROR and SO_ACCEPTCONN (get only); IPPROTO_IP
 * IP_BIND_ADDRESS_NO_PORT, IP_FREEBIND, IP_TRANSPARENT (needs net_raw: -EPERM),
 * IP_LOCAL_PORT_RANGE (u32 hi<<16|lo; optlen must be 4; lo > hi with both nonzero -> -EINVAL);
 * IPPROTO_IPV6 (AF_INET6 sockets only) IPV6_V6ONLY (-EINVAL once the socket has a port),
 * IPV6_FREEBIND and IPV6_TRANSPARENT (the same flags as their IPv4 names); SOL_SOCKET
 * SO_INCOMING_CPU (R107), SO_ATTACH_REUSEPORT_CBPF and SO_DETACH_REUSEPORT_BPF (set only,
 * R108-R111); the SOCKTAB_SOL options of socktab/types.h. A device binding, once set, changes
 * (to another device, the same one again, or none) only with net_raw (-EPERM), as
 * sock_bindtoindex_locked() wants; on a UDP socket that has a port, setting it rehashes the
 * socket as udp_lib_rehash() does: it leaves its reuseport group and its 4-tuple hash entry
 * moves to the 4-tuple it has (R74). Unknown options: -ENOPROTOOPT, except that getsockopt on an
 * AF_INET socket at a level other than SOL_SOCKET, IPPROTO_IP and SOCKTAB_SOL gives
 * -EOPNOTSUPP, as ip_getsockopt() does. Int options need optlen >= sizeof(int) (-EINVAL), except
 * IPPROTO_IP ones, which also take one byte as Linux does. getsockopt writes at
 * most *optlen bytes and updates *optlen.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the socket lock; setsockopt also the UDP slot locks for SO_BINDTODEVICE
 * and SO_BINDTOIFINDEX on a UDP socket with a port, and the port's bind lock for
 * SOCKTAB_SO_UID on a listener's child.
 */
int socktab_setsockopt(struct socktab_sock *sk, int level, int optname, const void *optval,
		       socklen_t optlen);
int socktab_getsockopt(struct socktab_sock *sk, int level, int optname, void *optval,
		       socklen_t *optlen);

/*
 * getsockname(2)/getpeername(2) into @addr (up to *len bytes; *len is set to the full length).
 * getpeername, as Linux's: -ENOTCONN without a remote port, in CLOSE (also after a reset) and
 * in SYN_SENT (a connect() in progress has no peer yet).
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the socket lock.
 */
int socktab_getsockname(struct socktab_sock *sk, struct sockaddr *addr, socklen_t *len);
int socktab_getpeername(struct socktab_sock *sk, struct sockaddr *addr, socklen_t *len);

/*
 * The remote address and port @sk is keyed by, in every state that has one, SYN_SENT included:
 * what a stack needs to build the SYN that getpeername(2) would not yet name. Same arguments as
 * socktab_getpeername(); -ENOTCONN when a TCP socket is not in the established table (a
 * remote port 0 is a port) or a UDP socket is not connected.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the socket lock.
 */
int socktab_sock_peer(struct socktab_sock *sk, struct sockaddr *addr, socklen_t *len);

/* Address family of @sk (AF_INET / AF_INET6), or -EBADF when closed.
 * Context: any thread, registered or not. */
int socktab_sock_family(const struct socktab_sock *sk);

/* SOCKTAB_TCP or SOCKTAB_UDP, or -EBADF for a closed socket.
 * Context: any thread, registered or not. */
int socktab_sock_proto(const struct socktab_sock *sk);

#ifdef __cplusplus
}
#endif
#endif /* SOCKTAB_SOCK_H */
