/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * UDP. socktab_socket(net, SOCKTAB_UDP, family) makes a datagram socket, and the socket calls of
 * socktab/sock.h apply with UDP rules (R68-R76): bind() conflicts have no listen state,
 * SO_REUSEADDR on both sides always coexists, SO_REUSEPORT needs the same owner uid; bind(0) is
 * a random walk, -EADDRINUSE when the range is full; connect() autobinds first (-EAGAIN when no
 * port is free), takes its source address from the route when unset, and may connect again;
 * connect(AF_UNSPEC) disconnects (the port is lost unless bind() named it, the bound device is
 * cleared). UDP sockets go back to the pool only after a grace period (SOCK_RCU_FREE, R23).
 * The datagram lookup is in socktab/lookup.h.
 */
#ifndef SOCKTAB_UDP_H
#define SOCKTAB_UDP_H

#include "socktab/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The table side of sendto(2)/send(2) on a UDP socket, without moving data: autobind an unbound
 * socket (-EAGAIN when no port is free), check the destination (@dst NULL: the connected peer, or
 * -EDESTADDRREQ; -EINVAL for port 0 or a short address; -EAFNOSUPPORT; -ENETUNREACH; -EACCES for
 * broadcast without SO_BROADCAST; -ENODEV when the bound device is gone; -EADDRNOTAVAIL when an
 * IPv6 route has no source address; a routing callback's own error) and write the datagram's
 * source and destination into @src and @to (either may be NULL), in the socket's family
 * (v4-mapped for IPv4 on an AF_INET6 socket). Hand them to socktab_lookup_udp4/6 to find the
 * receiver. The autobind comes first and stays when the destination is then refused, as the
 * kernel's inet_send_prepare() binds before udp_sendmsg() looks at the address. Also -EINVAL
 * (NULL @sk), -EOPNOTSUPP (a TCP socket), -EBADF (a closed socket, a TIME_WAIT or request
 * entry).
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the socket lock and slot locks.
 */
int socktab_udp_sendto(struct socktab_sock *sk, const struct sockaddr *dst, socklen_t len,
		       struct sockaddr_storage *src, struct sockaddr_storage *to);

/*
 * Turn the 4-tuple hash on (any nonzero @on) or off (0) for lookups in @net, to measure what it
 * brings. Connected sockets stay in hash4 either way, so switching is instant and changes no
 * outcome but one: a re-connected socket's stale hash4 entry (R74) whose new 4-tuple falls in
 * the same hash4 slot is found there with hash4 on, where with it off the hash2 pass decides
 * (a reuseport group on the address may take the datagram). Returns 0, or -EINVAL for a NULL
 * @net.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes no lock.
 */
int socktab_net_set_udp_hash4(struct socktab_net *net, int on);

/* Counters of @net's UDP table, read without locks (a moment old). Later versions fill the
 * reserved words with new counters. */
struct socktab_udp_stats {
	uint64_t hashed;        /* sockets holding a port */
	uint64_t hashed4;       /* sockets in the 4-tuple hash: connected, or left there by a
				 * re-connect or disconnect that kept the address (R74, R75) */
	uint32_t slots;         /* slots of hash and hash2 */
	uint32_t slots4;        /* slots of hash4 (zero before this field was filled) */
	uint64_t reserved[6];
};

/* Read @net's UDP counters into @st (reserved words zeroed). Returns 0, or -EINVAL for a NULL
 * @net or @st.
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * It takes no lock. */
int socktab_udp_stats(struct socktab_net *net, struct socktab_udp_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* SOCKTAB_UDP_H */
