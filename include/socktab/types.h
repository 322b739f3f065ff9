/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab's basic types: the opaque net and socket handles, protocols, TCP states, and the
 * option names socktab understands beyond what a libc may define.
 */
#ifndef SOCKTAB_TYPES_H
#define SOCKTAB_TYPES_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A network namespace: its tables, settings and socket pool (socktab/net.h). */
struct socktab_net;
/* A socket of a net: TCP or UDP, IPv4 or IPv6 (socktab/sock.h). */
struct socktab_sock;
/* A TIME_WAIT entry: what an actively closed TCP connection leaves (socktab/sock.h). */
struct socktab_tw;

/* Transport protocol of a socket (socktab_socket()). */
enum socktab_proto {
	SOCKTAB_TCP = 1,
	SOCKTAB_UDP = 2,
};

/* TCP states, numbered as the kernel's (include/net/tcp_states.h). */
enum socktab_tcp_state {
	SOCKTAB_TCP_ESTABLISHED = 1,
	SOCKTAB_TCP_SYN_SENT = 2,
	SOCKTAB_TCP_SYN_RECV = 3,
	SOCKTAB_TCP_FIN_WAIT1 = 4,
	SOCKTAB_TCP_FIN_WAIT2 = 5,
	SOCKTAB_TCP_TIME_WAIT = 6,
	SOCKTAB_TCP_CLOSE = 7,
	SOCKTAB_TCP_CLOSE_WAIT = 8,
	SOCKTAB_TCP_LAST_ACK = 9,
	SOCKTAB_TCP_LISTEN = 10,
	SOCKTAB_TCP_CLOSING = 11,
	SOCKTAB_TCP_NEW_SYN_RECV = 12, /* a request entry (socktab_req_new(), socktab/sock.h) */
};

/* Socket option names of <netinet/in.h> that some libcs lack. */
#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif
#ifndef IP_LOCAL_PORT_RANGE
#define IP_LOCAL_PORT_RANGE 51
#endif

/* socktab's own option level, for what has no kernel name. */
#define SOCKTAB_SOL 0x50c7
/* int: owner uid (SO_REUSEPORT same-owner rule), 0 or more: before bind, or on a listener's
 * child at any time (the kernel's accept() gives the child the accepting process's uid; until
 * then it has the listener's). */
#define SOCKTAB_SO_UID 1
/* int: the socket's stable reuseport member id, 0..65535, or -1 (none, the default). While any
 * member of a group has one, the group's selector value and the 4-tuple hash name ids, not join
 * positions, so a member that leaves and one that joins with its id move no other member's
 * traffic (docs/rules.md R132-R135). -EEXIST if another member of the group has the id. */
#define SOCKTAB_SO_REUSEPORT_ID 2
/* uint64_t, read only: the generation of the socket's reuseport group, new (and larger) on every
 * join, leave and id change; -ENOENT outside a group. */
#define SOCKTAB_SO_REUSEPORT_GEN 3

#ifdef __cplusplus
}
#endif
#endif /* SOCKTAB_TYPES_H */
