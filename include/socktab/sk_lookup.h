/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The dispatch hook: C callbacks a net runs on its packet path where Linux runs its
 * BPF_PROG_TYPE_SK_LOOKUP programs (R125-R131). A TCP lookup runs them after the established
 * table missed and before the listeners; a UDP lookup after the connected match and before the
 * unconnected sockets. A callback sees the packet's 4-tuple, family, protocol and ingress
 * device; it may select a listener or an unconnected UDP socket with socktab_sk_lookup_assign()
 * and returns SOCKTAB_SK_PASS or SOCKTAB_SK_DROP. Several callbacks run in the order they were
 * attached, chained as the kernel's BPF_PROG_SK_LOOKUP_RUN_ARRAY chains programs (R127).
 */
#ifndef SOCKTAB_SK_LOOKUP_H
#define SOCKTAB_SK_LOOKUP_H

#include <netinet/in.h>
#include <stdint.h>

#include "socktab/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A callback's verdicts: the kernel's SK_DROP and SK_PASS. */
enum {
	SOCKTAB_SK_DROP = 0,
	SOCKTAB_SK_PASS = 1,
};

/* Flags of socktab_sk_lookup_assign(): the kernel's BPF_SK_LOOKUP_F_*. */
#define SOCKTAB_SK_LOOKUP_F_REPLACE 1u      /* replace a selection an earlier call made */
#define SOCKTAB_SK_LOOKUP_F_NO_REUSEPORT 2u /* deliver to this socket, not its group's pick */

/* Callbacks a net holds at most (the kernel's limit of sk_lookup programs per netns). */
#define SOCKTAB_SK_LOOKUP_MAX 64

/*
 * What a callback sees: the packet's addresses and ports as the kernel's struct bpf_sk_lookup
 * shows them. Each callback gets a fresh copy of the packet fields (a callback that writes them
 * changes nothing for the next one or for the lookup); @sk is the selection so far, set only by
 * socktab_sk_lookup_assign().
 */
struct socktab_sk_lookup {
	int family;                   /* AF_INET or AF_INET6: the packet's */
	int protocol;                 /* SOCKTAB_TCP or SOCKTAB_UDP */
	uint32_t remote_ip4;          /* AF_INET: source address, network order */
	uint32_t local_ip4;           /* AF_INET: destination address, network order */
	struct in6_addr remote_ip6;   /* AF_INET6: source address */
	struct in6_addr local_ip6;    /* AF_INET6: destination address */
	uint16_t remote_port;         /* source port, network order (as the kernel's) */
	uint16_t local_port;          /* destination port, host order (as the kernel's) */
	int ingress_ifindex;          /* the device the packet came in on (the lookup's dif) */
	struct socktab_sock *sk;      /* the selection so far, or NULL; read only */
};

/*
 * A dispatch callback: return SOCKTAB_SK_PASS or SOCKTAB_SK_DROP. Any other value neither drops
 * nor selects (the kernel's run loop counts only those two; its verifier refuses others).
 * It runs inside the lookup's RCU read-side section, on the lookup's thread: it may call
 * socktab_sk_lookup_assign() and the calls whose Context allows a dispatch callback (the
 * RCU-scoped lookups among them), and must not block or wait for a grace period
 * (docs/concurrency.md, "Inside a dispatch callback").
 */
typedef int (*socktab_sk_lookup_fn)(struct socktab_sk_lookup *ctx, void *arg);

/*
 * Attach @fn (called with @arg) to @net's dispatch hook, after the callbacks already there.
 * Returns the attachment's id (> 0, for socktab_sk_lookup_detach()); -EINVAL (@net or @fn NULL),
 * -E2BIG (SOCKTAB_SK_LOOKUP_MAX attached already), -ENOMEM. The same callback may be attached
 * more than once; each attachment runs.
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * It takes the net's settings lock and publishes a new callback list that lookups starting
 * afterwards run (a running lookup keeps the list it loaded; the old one is freed after a
 * grace period, without waiting for it).
 */
int socktab_sk_lookup_attach(struct socktab_net *net, socktab_sk_lookup_fn fn, void *arg);

/*
 * Detach attachment @id. 0; -EINVAL (@net NULL), -ENOENT (no such attachment), -EDEADLK (called
 * inside a read-side section, where the wait below would never end). When it returns, no lookup
 * runs the callback of @id any more: its @arg may be freed.
 * Context: registered thread, outside any RCU read-side section of its own; waits for a grace
 * period. On an online thread (socktab/net.h) it passes a quiescent state for the wait; it
 * takes the net's settings lock, and not across the wait.
 */
int socktab_sk_lookup_detach(struct socktab_net *net, int id);

/*
 * Select @sk as the packet's socket (R126), as the kernel's bpf_sk_assign() for sk_lookup.
 * @sk NULL clears the selection (with SOCKTAB_SK_LOOKUP_F_REPLACE when one was made). 0 or:
 *   -EINVAL          @ctx NULL or not the context a running callback was given (a copy of
 *                    one, a struct the caller filled in, or a context after its callback
 *                    returned: only the public fields are there, and none is read), an
 *                    unknown flag, or @sk of another net;
 *   -ESOCKTNOSUPPORT @sk is a TIME_WAIT entry, closed, a TCP socket not in LISTEN, or a UDP
 *                    socket that is connected or has no port;
 *   -EPROTOTYPE      @sk's protocol is not the packet's;
 *   -EAFNOSUPPORT    an AF_INET socket for an IPv6 packet, or an IPV6_V6ONLY one for IPv4;
 *   -EEXIST          a socket is selected already and SOCKTAB_SK_LOOKUP_F_REPLACE is not given.
 * A refused call leaves the selection as it was. With SOCKTAB_SK_LOOKUP_F_NO_REUSEPORT the
 * packet goes to @sk itself; otherwise a socket in a reuseport group hands it to the member its
 * group selects (R129).
 * Context: inside a dispatch callback only. With the @ctx it was given (or that of a callback
 * further out on the same thread, whose lookup is running this one).
 */
int socktab_sk_lookup_assign(struct socktab_sk_lookup *ctx, struct socktab_sock *sk,
			     unsigned int flags);

#ifdef __cplusplus
}
#endif

#endif /* SOCKTAB_SK_LOOKUP_H */
