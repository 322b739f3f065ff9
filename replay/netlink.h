/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab replay: the few rtnetlink requests the kernel backend needs to give a case's network
 * namespace its devices and addresses, and to ask the kernel's own route lookup where a packet
 * would go (the traffic rule of the script format). Every call works in the namespace of the
 * calling process, opening its netlink socket on first use there. Errors are positive errnos, as
 * the kernel answered them.
 */
#ifndef SOCKTAB_REPLAY_NETLINK_H
#define SOCKTAB_REPLAY_NETLINK_H

#include <stdbool.h>

/* Create device @name of rtnl kind @kind ("dummy", "ifb"), down. EEXIST, EOPNOTSUPP (no such
 * kind in this kernel). */
int rp_nl_link_add(const char *name, const char *kind);
/* Set the flags @change of device @name to their values in @flags (IFF_UP, IFF_NOARP). */
int rp_nl_link_flags(const char *name, unsigned flags, unsigned change);
/* Set the IPv6 address generation mode (IN6_ADDR_GEN_MODE_*) of device @ifindex. */
int rp_nl_link_addrgenmode(int ifindex, int mode);
/* Remove device @name. */
int rp_nl_link_del(const char *name);

/* Add (@add) or remove address @addr/@plen of @family on device @ifindex, as `ip addr add|del`
 * does (IFA_LOCAL and IFA_ADDRESS both @addr); @ifa_flags: IFA_F_NODAD for IPv6. */
int rp_nl_addr(int add, int family, const void *addr, int plen, int ifindex, unsigned ifa_flags);

/* The addresses of device @ifindex, both families: @fn(@arg, family, address) for each. */
int rp_nl_addrs(int ifindex, void (*fn)(void *arg, int family, const void *addr), void *arg);

/* What RTM_GETROUTE answered. */
struct rp_nl_route {
	int type; /* RTN_LOCAL, RTN_UNICAST, RTN_BROADCAST, ... */
	int oif;  /* RTA_OIF: the output device; with @fibmatch, the device of the FIB entry */
};

/*
 * The kernel's output route toward @dst (@family AF_INET: 4 bytes, AF_INET6: 16) with output
 * interface @oif (0: none), as connect() would look it up. With @fibmatch the answer describes
 * the FIB entry that matched (RTM_F_FIB_MATCH): for a local destination, the device that holds
 * the address. 0, or the errno of the lookup (ENETUNREACH, EHOSTUNREACH, ...).
 */
int rp_nl_route_get(int family, const void *dst, int oif, bool fibmatch, struct rp_nl_route *r);

#endif
