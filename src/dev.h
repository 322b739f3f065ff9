/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The net's devices, addresses and routes (dev.c), as bind(), connect(), sendto() and the
 * public route lookup consult them (R83-R99).
 *
 * The whole configuration is one immutable snapshot (struct socktab__ifcfg) replaced on every
 * change under the net's device lock and read under RCU, so readers never lock: changes are
 * rare control-plane events, reads happen on every bind() and connect(). Routes that addresses
 * and device states imply (local, broadcast, connected) are derived from them at each change,
 * which keeps the kernel's side effects in one function (derive_routes).
 */
#ifndef SOCKTAB_SRC_DEV_H
#define SOCKTAB_SRC_DEV_H

#include "socktab/dev.h"

#include "net.h"

#define SOCKTAB__LOOPBACK_IFINDEX 1
#define SOCKTAB__RT_TABLE_MAIN 254u
#define SOCKTAB__RT_TABLE_LOCAL 255u

/* Route scopes (the kernel's RT_SCOPE_*): smaller is wider. */
enum { SOCKTAB__SCOPE_UNIVERSE = 0, SOCKTAB__SCOPE_LINK = 253, SOCKTAB__SCOPE_HOST = 254 };

struct socktab__ifdev {
	int ifindex;
	uint32_t flags;          /* SOCKTAB_DEV_* */
	int master;              /* ifindex of its VRF, 0: none */
	uint32_t table;          /* a VRF's table */
	char name[SOCKTAB_IFNAMSIZ];
};

struct socktab__ifa {
	int ifindex;
	uint8_t family;          /* AF_INET / AF_INET6 */
	uint8_t plen;
	uint8_t secondary;       /* IPv4: a second address of a subnet the device has */
	uint8_t scope;           /* SOCKTAB__SCOPE_*: host for 127/8 and ::1, link for fe80::/10 */
	struct in6_addr addr;    /* IPv4 v4-mapped */
};

enum { SOCKTAB__RT_KERNEL = 0, SOCKTAB__RT_USER = 1 };

struct socktab__rt {
	uint32_t table;
	uint8_t family;
	uint8_t plen;
	uint8_t type;            /* SOCKTAB_RTN_* */
	uint8_t origin;          /* SOCKTAB__RT_KERNEL (from an address) or _USER */
	int ifindex;             /* nexthop device */
	struct in6_addr dst;     /* IPv4 v4-mapped, masked to plen */
	struct in6_addr prefsrc; /* :: when none */
	bool has_prefsrc;
};

/* One snapshot; arrays follow in the same allocation. */
struct socktab__ifcfg {
	struct rcu_head rcu;
	int next_ifindex;
	uint32_t ndev, naddr, nrt, nuser;
	struct socktab__ifdev *dev;
	struct socktab__ifa *addr;
	struct socktab__rt *rt;  /* derived routes, then user routes */
	struct socktab__rt *user; /* the user routes (kept across changes) */
};

/* Create the first snapshot (lo with 127.0.0.1/8 and ::1) / free the last one. */
int socktab__dev_init(struct socktab_net *net);
void socktab__dev_destroy(struct socktab_net *net);

/* The current snapshot. Caller is inside an RCU read-side section. */
const struct socktab__ifcfg *socktab__ifcfg_rcu(struct socktab_net *net);
const struct socktab__ifdev *socktab__dev_get(const struct socktab__ifcfg *c, int ifindex);
/* The VRF @ifindex belongs to (itself for a VRF), 0 for none. */
int socktab__l3mdev_master(const struct socktab__ifcfg *c, int ifindex);

/* R85's inet_addr_type_table(): SOCKTAB_RTN_* of IPv4 @addr (network order) in the table of the
 * VRF of @dev (the local table without one); 0 when no route matches. */
int socktab__inet_addr_type(const struct socktab__ifcfg *c, uint32_t addr, int dev);
/* R86's ipv6_chk_addr(addr, dev, strict = 0): a local address equal to @a, in @dev's L3
 * domain, on @dev or of global scope (any device when @dev is 0). */
bool socktab__ipv6_chk_addr(const struct socktab__ifcfg *c, const struct in6_addr *a, int dev);
/* Is IPv4 @addr an address of some device (__ip_dev_find, local table included)? */
bool socktab__ip_dev_find(const struct socktab__ifcfg *c, uint32_t addr);

/* sk_dev_equal_l3scope(): may @sk, as bound now, use scope @dif (its device, or a device of
 * the VRF it is bound to)? */
bool socktab__dev_equal_l3scope(struct socktab_sock *sk, int dif);

/* connect()'s route (ip_route_connect): as socktab__route_output(), and for IPv4 without a
 * destination or a source, a second lookup with the ones the first filled in. */
int socktab__route_connect(struct socktab_net *net, struct in6_addr *daddr, int oif,
			   const struct in6_addr *saddr, bool anysrc,
			   struct socktab_route_result *res);
/* R95: output route toward @daddr (IPv4 in v4-mapped form) for a socket bound to @oif; @saddr:
 * the socket's source when it has one (IPv4 checks it is local unless @anysrc). Fills @res,
 * returns 0 or -ENETUNREACH / -ENODEV / -EINVAL. An IPv4 0.0.0.0 destination ("this host") is
 * rewritten in @daddr to the address it resolves to. Uses the net's FIB callback when set. */
int socktab__route_output(struct socktab_net *net, struct in6_addr *daddr, int oif,
			  const struct in6_addr *saddr, bool anysrc,
			  struct socktab_route_result *res);

#endif /* SOCKTAB_SRC_DEV_H */
