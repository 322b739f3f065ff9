/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Devices, addresses and routes of a net: what `ip link`, `ip addr` and `ip route` hold in a
 * Linux network namespace, and what bind(), connect() and the lookups consult (R83-R101).
 *
 * Every net starts with `lo` (ifindex 1, up) holding 127.0.0.1/8 and ::1/128. A stack declares
 * its own interfaces with socktab_dev_add() and their addresses with socktab_addr_add(); the
 * kernel's side effects follow: an IPv4 address A/P installs a local route for A (the whole
 * prefix on a loopback device), a connected route for its subnet and, for P < 31, the subnet
 * broadcast; an IPv6 address makes exactly itself local and installs its prefix route. A device
 * going down keeps its IPv4 addresses (and their local routes) but loses its connected routes,
 * and loses every IPv6 address for good; deleting a device removes its addresses and routes.
 * Sockets are never touched by these calls: a socket bound to an address or a device keeps it,
 * as in Linux.
 *
 * Ifindexes are per net, start at 1 (lo) and are never reused. A VRF (L3 master device) is a
 * device created with socktab_dev_add_vrf(); devices enslaved to it (socktab_dev_set_master())
 * route in its table, and lookups of traffic arriving on them get the VRF as sdif. The VRF rules
 * (R97-R99) are read from the kernel source and could not be checked against a live kernel.
 */
#ifndef SOCKTAB_DEV_H
#define SOCKTAB_DEV_H

#include "socktab/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ifindex of lo, which every net has: the ingress device of traffic to 127.0.0.0/8 and ::1. */
#define SOCKTAB_LOOPBACK_IFINDEX 1

/* Longest device name, with its terminating NUL (IFNAMSIZ). */
#define SOCKTAB_IFNAMSIZ 16

/*
 * Add a device named @name (1..15 characters, no '/', ':' or whitespace, not "." or ".."),
 * up if @up. Returns its ifindex (> 1) or -EINVAL (bad name), -EEXIST (name taken), -ENOMEM.
 * socktab_dev_add_vrf() adds an L3 master device whose routes live in table @table (1..2^32-1,
 * not 254 = main or 255 = local; -EINVAL), up if @up.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the net's device lock.
 */
int socktab_dev_add(struct socktab_net *net, const char *name, int up);
int socktab_dev_add_vrf(struct socktab_net *net, const char *name, uint32_t table, int up);

/*
 * Delete device @ifindex with its addresses and routes (R101): -ENODEV, -EINVAL for lo.
 * Devices enslaved to a deleted VRF lose their master.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the net's device lock.
 */
int socktab_dev_del(struct socktab_net *net, int ifindex);

/*
 * Bring device @ifindex up (@up != 0) or down (R83, R84): -ENODEV; -EINVAL to take lo down.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the net's device lock.
 */
int socktab_dev_set_up(struct socktab_net *net, int ifindex, int up);

/*
 * Enslave device @ifindex to the VRF @master_ifindex (0: release it): -ENODEV, -EINVAL when
 * @master_ifindex is not a VRF or @ifindex is lo or a VRF. The device's connected and local
 * routes move to the VRF's table.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the net's device lock.
 */
int socktab_dev_set_master(struct socktab_net *net, int ifindex, int master_ifindex);

/*
 * Name <-> ifindex. socktab_dev_index() returns the ifindex or -ENODEV; socktab_dev_name()
 * writes the name (NUL-terminated, at most @len bytes: -ENOSPC when it does not fit) or returns
 * -ENODEV. socktab_dev_flags() returns SOCKTAB_DEV_* bits or -ENODEV.
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * Lock-free.
 */
#define SOCKTAB_DEV_UP 1u
#define SOCKTAB_DEV_LOOPBACK 2u
#define SOCKTAB_DEV_VRF 4u
int socktab_dev_index(struct socktab_net *net, const char *name);
int socktab_dev_name(struct socktab_net *net, int ifindex, char *buf, size_t len);
int socktab_dev_flags(struct socktab_net *net, int ifindex);
/* The VRF device @ifindex belongs to (itself for a VRF), 0 when none, -ENODEV: what a lookup
 * of a packet arriving on @ifindex takes as its sdif.
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * Lock-free. */
int socktab_dev_master(struct socktab_net *net, int ifindex);

/*
 * Add or delete an address on device @ifindex: @family AF_INET (@addr: struct in_addr, @plen
 * 0..32) or AF_INET6 (struct in6_addr, 0..128). Add: -EINVAL (bad family, length, a zero,
 * multicast or v4-mapped address), -ENODEV, -EEXIST (the device has it already: IPv4 the same
 * address and prefix, IPv6 the same address), -ENOMEM. An IPv4 address in a subnet the device
 * already has a primary address for becomes a secondary. Delete: -EADDRNOTAVAIL when the device
 * has no such address and prefix; deleting a primary IPv4 address also deletes its subnet's
 * secondaries (the kernel's default, promote_secondaries = 0).
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the net's device lock.
 */
int socktab_addr_add(struct socktab_net *net, int ifindex, int family, const void *addr,
		     int plen);
int socktab_addr_del(struct socktab_net *net, int ifindex, int family, const void *addr,
		     int plen);

/*
 * Add or delete a unicast route to @dst/@plen through device @ifindex in the table of that
 * device's VRF (the main table when it has none), with preferred source @prefsrc (NULL: the
 * device's address, chosen as the kernel does). -EINVAL, -ENODEV, -ENETDOWN (the device is
 * down), -EEXIST, -ESRCH (delete: no such route), -ENOMEM. Routes the address calls install are
 * not touched by these; a device going down loses its routes, and a device enslaved to a VRF or
 * released from one loses the routes added here (the kernel's NETDEV_CHANGEUPPER flush).
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes the net's device lock.
 */
int socktab_route_add(struct socktab_net *net, int family, const void *dst, int plen,
		      int ifindex, const void *prefsrc);
int socktab_route_del(struct socktab_net *net, int family, const void *dst, int plen,
		      int ifindex);

/* Route types (the kernel's RTN_*). */
enum socktab_rtn {
	SOCKTAB_RTN_UNICAST = 1,
	SOCKTAB_RTN_LOCAL = 2,
	SOCKTAB_RTN_BROADCAST = 3,
	SOCKTAB_RTN_MULTICAST = 5,
};

/* What an output route lookup found. Later versions may use the reserved words. */
struct socktab_route_result {
	int type;                   /* SOCKTAB_RTN_* */
	int ifindex;                /* output device (for a local destination: the device that
				     * holds it, which is also the ingress device of the loop) */
	struct in6_addr src;        /* preferred source; IPv4 as v4-mapped */
	uint32_t reserved[4];
};

/*
 * The output route toward @daddr (AF_INET: struct in_addr; AF_INET6: struct in6_addr) as a
 * socket bound to device @oif (0: none) would get it for connect() (R95): 0 with @res filled,
 * -ENODEV (IPv4: @oif names no device), -ENETUNREACH when there is no route (@oif down, an
 * IPv6 @oif that names no device, or an IPv4 lookup with an up @oif in a VRF without a route; an
 * IPv4 lookup with an up @oif outside a VRF assumes the destination on-link), -EADDRNOTAVAIL
 * (IPv6: a route but no source address), -EINVAL. Uses the caller's FIB when one is set (its function's error is returned).
 * Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 * Lock-free (a read-side section of its own inside); with a FIB set (socktab_net_set_fib())
 * it calls the stack's function on the calling thread.
 */
int socktab_route_lookup(struct socktab_net *net, int family, const void *daddr, int oif,
			 struct socktab_route_result *res);

/*
 * A stack that has its own FIB: connect() and UDP sends ask @fn instead of the net's route
 * table. @fn fills @res as socktab_route_lookup() would (type, output ifindex, preferred source)
 * and returns 0 or -ENETUNREACH; it is called on the connecting thread, inside socktab's socket
 * lock, so it must not call back into socktab for that socket. NULL restores the net's table.
 * Local addresses (bind() checks, the lookups' ingress device) still come from the net's
 * address table.
 * Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 * callback. It takes no lock: the switch is one atomic exchange, and the old
 * FIB is freed after a grace period, without waiting for it.
 */
typedef int (*socktab_fib_fn)(void *arg, int family, const void *daddr, int oif,
			      struct socktab_route_result *res);
int socktab_net_set_fib(struct socktab_net *net, socktab_fib_fn fn, void *arg);

#ifdef __cplusplus
}
#endif
#endif /* SOCKTAB_DEV_H */
