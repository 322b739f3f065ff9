/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The port feed: what a net owns, told as it changes, for whoever must steer packets to the
 * stack that uses socktab while the kernel keeps the rest of the host (an XDP program's map,
 * a NIC's flow rules, the kernel's own port reservations).
 *
 * A net owns a port key when one of its sockets holds that (protocol, local address, port) in
 * the bind tables:
 *   TCP: one key per address bucket (the kernel's bhash2 bucket): a listener, a bound socket,
 *        a connect()ed socket and its accepted children, a TIME_WAIT entry. The key appears
 *        when the first of them takes the (address, port) pair and goes when the last one
 *        leaves, so a connection's key stays while it is in TIME_WAIT.
 *   UDP: one key per (address as bound, port) among the bound sockets (a socket bound to no
 *        address counts under the wildcard, also after connect() gave it a source address).
 * The wildcard is 0.0.0.0 (family AF_INET, address ::ffff:0.0.0.0) or :: (family AF_INET6; it
 * covers IPv4 too unless the socket is IPV6_V6ONLY: a steering consumer that cannot tell should
 * steer both).
 *
 * Order: claim() runs before the port is taken, under the bind lock of the port, so a steering
 * table filled by it is never behind a segment the stack sends from that port (a SYN of
 * connect(), a SYN-ACK, a datagram). release() runs after the last owner left, under the same
 * lock: per key, claims and releases come in the order they happen. Keys of different ports
 * may be told from different threads at once.
 *
 * Refusal: a claim() that may refuse (no SOCKTAB_FEED_F_FORCED) and returns a negative errno
 * keeps the port from the socket: bind() and listen() then fail with -EADDRINUSE, and bind(0),
 * listen() without bind(), UDP's automatic bind (sendto, connect) and a TCP connect()'s port walk
 * go on to the next port of their walk, as for a port another socket holds (connect() fails
 * with -EADDRNOTAVAIL when the feed refuses every free port). A forced claim (an accepted
 * child's address, the source address that a TCP connect() gave to a socket bound to the
 * wildcard) is a report: its return value is ignored. UDP claims are never forced.
 *
 * Cost: a net without a feed pays one load and one predictable branch per bucket created or
 * destroyed (bind, listen, connect, accept, close; no branch when a bucket is reused) and per
 * port connect()'s walk locks to take, and
 * lookups pay nothing: the packet path never reads the feed. A net with a feed calls it under
 * the port's bind lock: a slow callback holds up every bind, connect and close of the ports
 * that share that lock stripe.
 */
#ifndef SOCKTAB_FEED_H
#define SOCKTAB_FEED_H

#include <netinet/in.h>
#include <stdint.h>

#include "socktab/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One owned key. */
struct socktab_port_key {
	int proto;                    /* SOCKTAB_TCP or SOCKTAB_UDP */
	int family;                   /* AF_INET (address v4-mapped) or AF_INET6 */
	struct in6_addr addr;         /* the local address; ::ffff:0.0.0.0 or :: for the wildcard */
	uint16_t port;                /* host order */
	int l3mdev;                   /* TCP: the VRF (L3 master ifindex) whose port space holds
				       * it, 0 for the default one (R98); UDP: 0 */
};

/* claim()'s flag: the port is taken whatever claim() returns. */
#define SOCKTAB_FEED_F_FORCED 1u

/*
 * The callbacks. claim(): @key is about to be owned; return 0, or a negative errno to refuse
 * (see above). release(): @key is no longer owned. Both run on the thread of the call that
 * changes the table, inside a read-side section it opens and under a bind lock of the net: they
 * must not call the functions that take a socket or table lock of the same net (bind,
 * connect, close, the dump...) nor wait for a grace period; the settings that take no lock
 * (socktab_net_set_reserved(), say) are fine. They should be quick. The struct and
 * @arg stay the caller's: they must stay valid until socktab_net_set_port_feed() replaced them
 * and returned.
 */
struct socktab_port_feed {
	int (*claim)(void *arg, const struct socktab_port_key *key, unsigned flags);
	void (*release)(void *arg, const struct socktab_port_key *key);
	void *arg;
};

/*
 * Set @net's port feed to @feed (NULL: none). @feed->claim and @feed->release must both be
 * set. 0; -EINVAL (@net NULL, a callback NULL), -EDEADLK (called inside a read-side section of
 * the caller's own, where the wait would never end). When it returns, no call of the old feed
 * is running or will run. Keys owned before the call are not told: socktab_net_port_feed_dump()
 * gives them (set the feed first, then dump: a key then comes at least once, and a claim the
 * dump repeats comes before that key's release).
 * Context: registered thread, outside any RCU read-side section of its own; waits for a grace
 * period. It takes the net's settings lock.
 */
int socktab_net_set_port_feed(struct socktab_net *net, const struct socktab_port_feed *feed);

/*
 * Call @fn once for every key @net owns now, TCP then UDP, each under its port's bind lock
 * (the same rules as the feed's callbacks). A nonzero return of @fn stops the walk and is
 * returned. 0, or -EINVAL (@net or @fn NULL).
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes every bind lock of the net's tables in turn.
 */
int socktab_net_port_feed_dump(struct socktab_net *net,
			       int (*fn)(void *arg, const struct socktab_port_key *key),
			       void *arg);

#ifdef __cplusplus
}
#endif

#endif /* SOCKTAB_FEED_H */
