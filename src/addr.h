/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Socket addresses (addr.c): the one place that reads and writes struct sockaddr for the socket
 * calls of both protocols, and the rule for which IPv4 addresses are local.
 */
#ifndef SOCKTAB_SRC_ADDR_H
#define SOCKTAB_SRC_ADDR_H

#include "sock.h"

/* A connect()/sendto() destination, parsed (R37's entry checks of the connect side). */
struct socktab__dest {
	bool v4;                /* IPv4 (AF_INET, or v4-mapped on an AF_INET6 socket) */
	uint32_t daddr4;        /* when v4 */
	struct in6_addr daddr6; /* as given (v4-mapped when v4 on an AF_INET6 socket) */
	uint16_t port;          /* network order */
};

/* socktab__parse_dest() flags. */
#define SOCKTAB__DEST_DGRAM 1u /* UDP: an AF_INET6 socket may take an AF_INET address */
#define SOCKTAB__DEST_SEND 2u  /* sendto(): AF_UNSPEC counts as AF_INET, other errnos */

/*
 * Parse @addr as a destination for @sk: -EINVAL (short address), -EAFNOSUPPORT (wrong family),
 * -ENETUNREACH (a v4-mapped or IPv4 destination on a v6only socket, where the kernel says so).
 * The wildcard destination is left for the caller to resolve. Context: any.
 */
int socktab__parse_dest(const struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len,
			struct socktab__dest *d, unsigned int flags);

/* A sockaddr of @family (v4-mapped @a gives AF_INET) into @ss; returns its length. */
socklen_t socktab__make_sockaddr(struct sockaddr_storage *ss, int family, const struct in6_addr *a,
				 uint16_t port_be);
/* Copy @ss (length @n) out to the caller as getsockname() does: at most *len bytes, and *len
 * set to the full length. */
int socktab__put_sockaddr(struct sockaddr *addr, socklen_t *len,
			  const struct sockaddr_storage *ss, socklen_t n);

/* Parse an exact-family address (a segment's endpoints): -EINVAL otherwise. IPv4 comes back
 * v4-mapped. */
int socktab__parse_endpoint(int family, const struct sockaddr *sa, socklen_t len,
			    struct in6_addr *a, uint16_t *port_be);

/* Is this IPv4 address local (loopback, wildcard, multicast, limited broadcast)? */
bool socktab__v4_local(uint32_t be);
/*
 * The checks bind() makes before it takes the socket lock (R37/R38, both protocols). Fills the
 * address (v4-mapped for AF_INET), its IPv4 form and the port.
 */
int socktab__bind_addr(const struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len,
		       bool stream, struct in6_addr *a6, uint32_t *v4, int *snum);

#endif /* SOCKTAB_SRC_ADDR_H */
