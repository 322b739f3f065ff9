/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Socket addresses (addr.c): the one place that reads and writes struct sockaddr for the socket
 * calls of both protocols, and the rule for which IPv4 addresses are local.
 */
#ifndef SOCKTAB_SRC_ADDR_H
#define SOCKTAB_SRC_ADDR_H

#include "net.h"

/* A connect()/sendto() destination, parsed (R37's entry checks of the connect side). */
struct socktab__dest {
	bool v4;                /* IPv4 (AF_INET, or v4-mapped on an AF_INET6 socket) */
	uint32_t daddr4;        /* when v4 */
	struct in6_addr daddr6; /* as given (v4-mapped when v4 on an AF_INET6 socket) */
	uint16_t port;          /* network order */
	uint32_t scope_id;      /* sin6_scope_id of a full-length sockaddr_in6, else 0 */
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

/* A sockaddr of @family (v4-mapped @a gives AF_INET) into @ss; returns its length. An IPv6
 * address that needs a scope gets @dev as sin6_scope_id (ipv6_iface_scope_id). */
socklen_t socktab__make_sockaddr(struct sockaddr_storage *ss, int family, const struct in6_addr *a,
				 uint16_t port_be, uint32_t dev);
/* Copy @ss (length @n) out to the caller as getsockname() does: at most *len bytes, and *len
 * set to the full length. */
int socktab__put_sockaddr(struct sockaddr *addr, socklen_t *len,
			  const struct sockaddr_storage *ss, socklen_t n);

/* Parse an exact-family address (a segment's endpoints): -EINVAL otherwise. IPv4 comes back
 * v4-mapped. */
int socktab__parse_endpoint(int family, const struct sockaddr *sa, socklen_t len,
			    struct in6_addr *a, uint16_t *port_be);

/*
 * The checks bind() makes before it takes the socket lock (R37/R38, and R85 for AF_INET, both
 * protocols). Fills the address (v4-mapped for AF_INET), its IPv4 form, the port and the
 * sin6_scope_id (0 when none).
 */
int socktab__bind_addr(const struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len,
		       bool stream, struct in6_addr *a6, uint32_t *v4, int *snum,
		       uint32_t *scope_id);
/* R85: may @sk bind IPv4 @v4 (AF_INET, or v4-mapped on AF_INET6)? 0, -EADDRNOTAVAIL, -ENODEV. */
int socktab__bind_check_v4(const struct socktab_sock *sk, uint32_t v4);
/* Is IPv4 @v4 a broadcast or multicast address for a socket bound to @dev (R85)? */
bool socktab__v4_is_group(struct socktab_net *net, uint32_t v4, int dev);
/* R86: the locked steps for a specific IPv6 address: the scope becomes the bound device (kept
 * even if bind() then fails), -EINVAL without a device for a link-local address, -ENODEV for a
 * device that does not exist, -EADDRNOTAVAIL for an address that is not local. Caller holds the
 * socket lock. */
int socktab__bind_check_v6(struct socktab_sock *sk, const struct in6_addr *a, uint32_t scope_id);

#endif /* SOCKTAB_SRC_ADDR_H */
