/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the steering program (steer.bpf.c) and its loader (stack/share.c) share: the key of an
 * owned (protocol, address, port), the map sizes and the counters.
 */
#ifndef SOCKTAB_BPF_STEER_H
#define SOCKTAB_BPF_STEER_H

#ifdef __BPF__
#include <linux/types.h>
#else
#include <stdint.h>
typedef uint8_t __u8;
typedef uint16_t __u16;
#endif

#define STEER_KEYS_MAX 262144
#define STEER_QUEUES_MAX 64
#define STEER_AF_INET 4
#define STEER_AF_INET6 6

/* An owned key: IPv4 addresses v4-mapped (::ffff:a.b.c.d; the wildcard ::ffff:0.0.0.0), the
 * port in network order. 20 bytes, no padding. */
struct steer_key {
	__u8 proto;             /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 family;            /* STEER_AF_INET or STEER_AF_INET6 */
	__u16 port;
	__u8 addr[16];
};

/* Per-CPU counters, by what became of a frame. */
enum {
	STEER_REDIRECTED = 0,   /* to the AF_XDP socket: socktab owns its destination */
	STEER_PASS_KERNEL,      /* TCP or UDP to a port socktab does not own */
	STEER_PASS_ARP,
	STEER_PASS_ICMP,        /* ICMP and ICMPv6 (neighbour discovery among them) */
	STEER_PASS_FRAGMENT,    /* IPv4 fragments (the kernel reassembles them) */
	STEER_PASS_NO_XSK,      /* owned, but no socket on the frame's queue */
	STEER_PASS_OTHER,       /* other protocols, short frames */
	STEER_NCOUNTERS
};

#define STEER_COUNTER_NAMES                                                                       \
	{ "redirected", "pass_kernel", "pass_arp", "pass_icmp", "pass_fragment", "pass_no_xsk",   \
	  "pass_other" }

#endif
