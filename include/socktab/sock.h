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
 * Context: registered thread.
 */
struct socktab_sock *socktab_socket(struct socktab_net *net, int proto, int family);

/*
 * Caller data area of @sk (sock_priv_size bytes, zeroed by socktab_socket() and
 * socktab_sock_new_child()), or NULL if the net has none.
 * Context: any.
 */
void *socktab_sock_priv(struct socktab_sock *sk);

/*
 * bind(2). @addr must match the socket family (AF_INET: sockaddr_in; AF_INET6: sockaddr_in6).
 * Port 0 chooses a port (bind(0), odd first) unless IP_BIND_ADDRESS_NO_PORT is set.
 * Errors: -EINVAL (already bound, short length, v4-mapped on v6only), -EAFNOSUPPORT,
 * -EADDRNOTAVAIL (address not local), -EACCES (privileged port, net not privileged),
 * -EADDRINUSE, -ENOMEM, -EBADF (closed socket).
 * Context: registered thread, outside RCU read side; takes the socket lock, then bhash/bhash2
 * locks.
 */
int socktab_bind(struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len);

/*
 * connect(2). TCP: choose a local address and port (the net's variant), insert the socket into
 * ehash in state SYN_SENT; a bound socket keeps its port. UDP: autobind, set the peer, enter the
 * 4-tuple hash. connect() with an AF_UNSPEC address disconnects (TCP: tcp_disconnect; UDP: R75).
 * Errors: -EAFNOSUPPORT, -EINVAL, -EISCONN (TCP, connected), -EALREADY (TCP, SYN_SENT),
 * -ENETUNREACH (no route, or v4-mapped on v6only), -EADDRNOTAVAIL (no unique 4-tuple), -EAGAIN
 * (UDP autobind found no port), -EACCES (UDP broadcast without SO_BROADCAST), -ENOMEM, -EBADF.
 * Context: registered thread, outside RCU read side; takes the socket lock, bhash/bhash2 and ehash
 * bucket locks; enters the RCU read side internally for the pre-checks.
 */
int socktab_connect(struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len);

/*
 * listen(2): bind(0) first if the socket has no port (odd port, R49), re-validate the port in
 * LISTEN state (R46), join or create a SO_REUSEPORT group (R34) and enter the listener table.
 * @backlog is clamped to net.core.somaxconn; listen() on a listener only updates the backlog.
 * Errors: -EINVAL (connected or connecting socket), -EADDRINUSE, -ENOMEM, -EBADF, -EOPNOTSUPP
 * (UDP).
 * Context: registered thread, outside RCU read side; socket lock, then bhash/bhash2 and lhash2
 * locks.
 */
int socktab_listen(struct socktab_sock *sk, int backlog);

/* The backlog a listener was given (after clamping), or a negative errno.
 * Context: registered thread; takes the socket lock. */
int socktab_listen_backlog(struct socktab_sock *sk);

/*
 * Create the child socket of @listener for a connection from @remote to @local (the SYN's source
 * and destination) that arrived on device @dif (VRF @sdif, or 0): it inherits the listener's
 * port and owner (kernel __inet_inherit_port) and device (R94: an unbound listener's IPv6 child
 * of a link-local peer gets @dif, and with net.ipv4.tcp_l3mdev_accept a child gets the VRF), is
 * inserted into ehash in state SYN_RECV and returned with the caller's reference (close it with
 * socktab_close()). Errors (NULL, errno): EINVAL (not a listener, bad address or device),
 * EADDRINUSE (the 4-tuple exists on that device), ENOMEM.
 * Context: registered thread, outside RCU read side; takes the listener's lock and bucket locks.
 */
struct socktab_sock *socktab_sock_new_child(struct socktab_sock *listener,
					    const struct sockaddr *local,
					    const struct sockaddr *remote, socklen_t len, int dif,
					    int sdif);

/*
 * Move a hashed TCP socket to @state (the embedding stack drives the state machine:
 * SYN_SENT -> ESTABLISHED -> FIN_WAIT1...). SOCKTAB_TCP_CLOSE is the kernel's tcp_done() (a reset
 * or a refused connect): the socket leaves ehash and, unless bind() locked it, its port; it stays
 * open. SOCKTAB_TCP_TIME_WAIT is the kernel's tcp_time_wait() for a socket still held: the peer's
 * FIN reached it in FIN_WAIT1/FIN_WAIT2 (or our FIN's ACK in CLOSING); a TIME_WAIT entry (substate
 * TIME_WAIT) takes over the 4-tuple and the port, and the socket becomes CLOSE, keeping its
 * addresses; as after tcp_done() it gives its port back unless bind() locked it (then it owns
 * the port beside the entry); close it as usual (-EINVAL from any other state). LISTEN is
 * reached through socktab_listen() only (-EINVAL). -EOPNOTSUPP on a UDP socket.
 * Context: registered thread; takes the socket lock.
 */
int socktab_set_state(struct socktab_sock *sk, int state);

/* Current state of @sk (SOCKTAB_TCP_*), or -EBADF for a closed socket. Context: any. */
int socktab_get_state(struct socktab_sock *sk);

/*
 * close(2). An actively closed connection (ESTABLISHED, FIN_WAIT1/2, CLOSING) leaves a TIME_WAIT
 * entry that keeps its 4-tuple and port until it expires or is recycled, unless SO_LINGER {1, 0}
 * is set (abortive close: everything is removed at once). The entry starts in the FIN_WAIT2
 * substate (the peer's FIN is still to come) unless the socket was CLOSING, and takes the first
 * tw_priv_size bytes of the socket's caller data (socktab/net.h). After the call @sk must not
 * be used: its memory returns to the pool; a second close of a not-yet-reused socket gives
 * -EBADF.
 * Context: registered thread, outside RCU read side; takes socket, bucket and TIME_WAIT locks.
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
 * longer TIME_WAIT. The socktab_tw_priv() bytes are the caller's to update (e.g. rcv_nxt after
 * the peer's FIN); a lookup on another thread may read them meanwhile, so the caller orders
 * such accesses itself.
 * Context: registered thread holding a reference on the entry (from a lookup); fin, reset and
 * kill take the bucket and TIME_WAIT list locks, the others none.
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
 * IPV6_FREEBIND and IPV6_TRANSPARENT (the same flags as their IPv4 names); the SOCKTAB_SOL
 * options of socktab/types.h. A device binding, once set, changes (to another device, the same
 * one again, or none) only with net_raw (-EPERM), as sock_bindtoindex_locked() wants. Unknown options: -ENOPROTOOPT. Int options need optlen >= sizeof(int)
 * (-EINVAL), except IPPROTO_IP ones, which also take one byte as Linux does. getsockopt writes at
 * most *optlen bytes and updates *optlen.
 * Context: registered thread; takes the socket lock.
 */
int socktab_setsockopt(struct socktab_sock *sk, int level, int optname, const void *optval,
		       socklen_t optlen);
int socktab_getsockopt(struct socktab_sock *sk, int level, int optname, void *optval,
		       socklen_t *optlen);

/*
 * getsockname(2)/getpeername(2) into @addr (up to *len bytes; *len is set to the full length).
 * getpeername, as Linux's: -ENOTCONN without a remote port, in CLOSE (also after a reset) and
 * in SYN_SENT (a connect() in progress has no peer yet).
 * Context: registered thread; takes the socket lock.
 */
int socktab_getsockname(struct socktab_sock *sk, struct sockaddr *addr, socklen_t *len);
int socktab_getpeername(struct socktab_sock *sk, struct sockaddr *addr, socklen_t *len);

/*
 * The remote address and port @sk is keyed by, in every state that has one, SYN_SENT included:
 * what a stack needs to build the SYN that getpeername(2) would not yet name. Same arguments as
 * socktab_getpeername(); -ENOTCONN when a TCP socket is not in the established table (a
 * remote port 0 is a port) or a UDP socket is not connected.
 * Context: registered thread; takes the socket lock.
 */
int socktab_sock_peer(struct socktab_sock *sk, struct sockaddr *addr, socklen_t *len);

/* Address family of @sk (AF_INET / AF_INET6), or -EBADF when closed. Context: any. */
int socktab_sock_family(const struct socktab_sock *sk);

/* SOCKTAB_TCP or SOCKTAB_UDP, or -EBADF for a closed socket. Context: any. */
int socktab_sock_proto(const struct socktab_sock *sk);

#ifdef __cplusplus
}
#endif
#endif /* SOCKTAB_SOCK_H */
