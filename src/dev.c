/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Devices, addresses and routes (R83-R99): a small model of what `ip link`, `ip addr` and
 * `ip route` hold in a network namespace, with the kernel's side effects, and the three
 * questions the socket calls ask of it: is this address local (bind, R85/R86), which route and
 * source address does a connect()/sendto() get (R95), and which device holds a destination (the
 * ingress device of local traffic, R91).
 *
 * Snapshot. The configuration is one immutable struct socktab__ifcfg, published with a release
 * store under net->dev_lock and read under RCU; every change builds a new snapshot and frees the
 * old one after a grace period. Routes that addresses imply are derived from scratch on every
 * change (derive_routes), so the kernel's rules live in one place:
 *   IPv4 A/P on D (fib_add_ifaddr): a local /32 route for A, preferred source A if A is the
 *   primary address of its subnet on D, else that primary (A is a secondary); while D is up and
 *   A is primary, the connected route for the subnet (local on a loopback device) and, for
 *   P < 31, the subnet broadcast. Down keeps only the local routes (fib_sync_down_dev spares
 *   host-scope nexthops), so the addresses stay bindable and reachable.
 *   IPv6 A/P on D (addrconf): while D is up, a local /128 route for A on D and, for P < 128, the
 *   prefix route; taking D down removes its IPv6 addresses for good (addrconf_ifdown,
 *   keep_addr_on_down = 0).
 *   Everything goes to the table of D's VRF when it has one (l3mdev_fib_table), else local
 *   routes to the local table and the rest to main.
 * User routes (socktab_route_add) are kept across changes and removed when their device goes
 * down or away, as the kernel flushes routes through a downed device.
 *
 * Lookups follow the kernel's policy rules: with a VRF in the flow, only its table; otherwise
 * the local table first, then main; longest prefix, first added among equals (two devices with
 * the same address: the first wins). With an output device, only routes through it count
 * (fib_lookup_good_nhc, ip6 strict); an IPv4 lookup that then finds nothing assumes the
 * destination on-link (ip_route_output_key_hash_rcu), IPv6 fails.
 * Departures: no ARP/neighbour state, gateways, metrics, multipath or policy rules beyond
 * local/main/VRF; IPv6 addresses are never tentative (the scripts add them with nodad).
 */
#include <stdlib.h>

#include "dev.h"

/* ---- snapshots ---- */

static struct socktab__ifcfg *cfg_alloc(uint32_t ndev, uint32_t naddr, uint32_t nuser)
{
	/* Derived routes: at most three per address (local, connected, broadcast). */
	uint32_t nrt = naddr * 3 + nuser;
	size_t sz = sizeof(struct socktab__ifcfg) + ndev * sizeof(struct socktab__ifdev) +
		    naddr * sizeof(struct socktab__ifa) + (nrt + nuser) * sizeof(struct socktab__rt);
	struct socktab__ifcfg *c = calloc(1, sz);
	unsigned char *p;

	if (!c)
		return NULL;
	p = (unsigned char *)(c + 1);
	c->dev = (struct socktab__ifdev *)p;
	p += ndev * sizeof(struct socktab__ifdev);
	c->addr = (struct socktab__ifa *)p;
	p += naddr * sizeof(struct socktab__ifa);
	c->rt = (struct socktab__rt *)p;
	p += nrt * sizeof(struct socktab__rt);
	c->user = (struct socktab__rt *)p;
	c->ndev = ndev;
	c->naddr = naddr;
	c->nuser = nuser;
	return c;
}

/* A copy of @old with room for @xdev more devices, @xaddr addresses, @xuser user routes (the
 * counts stay those of @old: the caller appends). */
static struct socktab__ifcfg *cfg_clone(const struct socktab__ifcfg *old, uint32_t xdev,
					uint32_t xaddr, uint32_t xuser)
{
	struct socktab__ifcfg *c = cfg_alloc(old->ndev + xdev, old->naddr + xaddr,
					     old->nuser + xuser);

	if (!c)
		return NULL;
	c->ndev = old->ndev;
	c->naddr = old->naddr;
	c->nuser = old->nuser;
	c->next_ifindex = old->next_ifindex;
	memcpy(c->dev, old->dev, old->ndev * sizeof(*c->dev));
	memcpy(c->addr, old->addr, old->naddr * sizeof(*c->addr));
	memcpy(c->user, old->user, old->nuser * sizeof(*c->user));
	return c;
}

static void cfg_free_rcu(struct rcu_head *head)
{
	struct socktab__ifcfg *c = caa_container_of(head, struct socktab__ifcfg, rcu);

	socktab__rcu_cb_enter(c);
	free(c);
}

const struct socktab__ifcfg *socktab__ifcfg_rcu(struct socktab_net *net)
{
	SOCKTAB__ASSERT_RCU();
	return atomic_load_explicit(&net->ifcfg, memory_order_acquire);
}

const struct socktab__ifdev *socktab__dev_get(const struct socktab__ifcfg *c, int ifindex)
{
	for (uint32_t i = 0; i < c->ndev; i++)
		if (c->dev[i].ifindex == ifindex)
			return &c->dev[i];
	return NULL;
}

static struct socktab__ifdev *dev_get_mut(struct socktab__ifcfg *c, int ifindex)
{
	return (struct socktab__ifdev *)socktab__dev_get(c, ifindex);
}

int socktab__l3mdev_master(const struct socktab__ifcfg *c, int ifindex)
{
	const struct socktab__ifdev *d = ifindex ? socktab__dev_get(c, ifindex) : NULL;

	if (!d)
		return 0;
	return (d->flags & SOCKTAB_DEV_VRF) ? d->ifindex : d->master;
}

/* The table of the VRF of @ifindex, 0 when none (l3mdev_fib_table). */
static uint32_t l3mdev_table(const struct socktab__ifcfg *c, int ifindex)
{
	const struct socktab__ifdev *v = socktab__dev_get(c, socktab__l3mdev_master(c, ifindex));

	return v ? v->table : 0;
}

/* ---- address arithmetic (IPv4 in v4-mapped form, prefixes counted on the IPv6 form) ---- */

static bool is_v4(const struct in6_addr *a)
{
	return socktab__v6_is_mapped(a);
}

static int full_plen(int family, int plen)
{
	return family == AF_INET ? plen + 96 : plen;
}

static bool prefix_eq(const struct in6_addr *a, const struct in6_addr *b, int bits)
{
	int bytes = bits / 8, rem = bits % 8;

	if (memcmp(a, b, (size_t)bytes))
		return false;
	if (!rem)
		return true;
	return ((a->s6_addr[bytes] ^ b->s6_addr[bytes]) & (0xff00 >> rem)) == 0;
}

static struct in6_addr prefix_of(const struct in6_addr *a, int bits)
{
	struct in6_addr p = *a;

	for (int i = 0; i < 16; i++) {
		int keep = bits - i * 8;

		if (keep <= 0)
			p.s6_addr[i] = 0;
		else if (keep < 8)
			p.s6_addr[i] &= (uint8_t)(0xff00 >> keep);
	}
	return p;
}

/* Length of the common prefix of two addresses, in bits. */
static int common_bits(const struct in6_addr *a, const struct in6_addr *b)
{
	int n = 0;

	for (int i = 0; i < 16; i++) {
		uint8_t x = a->s6_addr[i] ^ b->s6_addr[i];

		if (!x) {
			n += 8;
			continue;
		}
		while (!(x & 0x80)) {
			x <<= 1;
			n++;
		}
		break;
	}
	return n;
}

static bool v6_linklocal(const struct in6_addr *a)
{
	return a->s6_addr[0] == 0xfe && (a->s6_addr[1] & 0xc0) == 0x80;
}

static uint8_t addr_scope(int family, const struct in6_addr *a)
{
	static const struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;

	if (family == AF_INET)
		return (ntohl(a->s6_addr32[3]) >> 24) == 127 ? SOCKTAB__SCOPE_HOST
							      : SOCKTAB__SCOPE_UNIVERSE;
	if (!memcmp(a, &lo6, 16))
		return SOCKTAB__SCOPE_HOST;
	return v6_linklocal(a) ? SOCKTAB__SCOPE_LINK : SOCKTAB__SCOPE_UNIVERSE;
}

/* ---- derived routes ---- */

static void rt_push(struct socktab__ifcfg *c, uint32_t table, int family, int type, int plen,
		    const struct in6_addr *dst, int ifindex, const struct in6_addr *prefsrc)
{
	struct socktab__rt *r = &c->rt[c->nrt++];

	memset(r, 0, sizeof(*r));
	r->table = table;
	r->family = (uint8_t)family;
	r->type = (uint8_t)type;
	r->plen = (uint8_t)plen;
	r->origin = SOCKTAB__RT_KERNEL;
	r->ifindex = ifindex;
	r->dst = prefix_of(dst, full_plen(family, plen));
	if (prefsrc) {
		r->prefsrc = *prefsrc;
		r->has_prefsrc = true;
	}
}

/* The primary IPv4 address of @a's subnet on its device (itself when primary). */
static const struct socktab__ifa *primary_of(const struct socktab__ifcfg *c,
					     const struct socktab__ifa *a)
{
	if (!a->secondary)
		return a;
	for (uint32_t i = 0; i < c->naddr; i++) {
		const struct socktab__ifa *p = &c->addr[i];

		if (p->family == AF_INET && p->ifindex == a->ifindex && !p->secondary &&
		    p->plen == a->plen && prefix_eq(&p->addr, &a->addr, full_plen(AF_INET, a->plen)))
			return p;
	}
	return a;
}

static void derive_routes(struct socktab__ifcfg *c)
{
	c->nrt = 0;
	for (uint32_t i = 0; i < c->naddr; i++) {
		const struct socktab__ifa *a = &c->addr[i];
		const struct socktab__ifdev *d = socktab__dev_get(c, a->ifindex);
		uint32_t vrf = l3mdev_table(c, a->ifindex);
		uint32_t local = vrf ? vrf : SOCKTAB__RT_TABLE_LOCAL;
		uint32_t main_t = vrf ? vrf : SOCKTAB__RT_TABLE_MAIN;
		bool up = d && (d->flags & SOCKTAB_DEV_UP), loop = d && (d->flags & SOCKTAB_DEV_LOOPBACK);

		if (a->family == AF_INET6) {
			/* An address added while the device is down (which only setting a device
			 * down removes) is local at once: with no duplicate detection its local route
			 * comes with it (addrconf_dad_completed); the prefix route waits for up. */
			rt_push(c, local, AF_INET6, SOCKTAB_RTN_LOCAL, 128, &a->addr, a->ifindex, NULL);
			if (up && a->plen < 128)
				rt_push(c, main_t, AF_INET6, SOCKTAB_RTN_UNICAST, a->plen, &a->addr,
					a->ifindex, NULL);
			continue;
		}
		rt_push(c, local, AF_INET, SOCKTAB_RTN_LOCAL, 32, &a->addr, a->ifindex,
			&primary_of(c, a)->addr);
		if (!up || a->secondary)
			continue;
		struct in6_addr net = prefix_of(&a->addr, full_plen(AF_INET, a->plen));

		if (!net.s6_addr32[3]) /* 0.0.0.0/x: zeronet gets no routes */
			continue;
		if (a->plen < 32 || net.s6_addr32[3] != a->addr.s6_addr32[3])
			rt_push(c, loop ? local : main_t, AF_INET,
				loop ? SOCKTAB_RTN_LOCAL : SOCKTAB_RTN_UNICAST, a->plen, &a->addr,
				a->ifindex, &a->addr);
		if (a->plen < 31) {
			struct in6_addr b = net;

			b.s6_addr32[3] |= htonl(0xffffffffu >> a->plen);
			rt_push(c, local, AF_INET, SOCKTAB_RTN_BROADCAST, 32, &b, a->ifindex,
				&a->addr);
		}
	}
	memcpy(&c->rt[c->nrt], c->user, c->nuser * sizeof(*c->user));
	c->nrt += c->nuser;
}

/* Publish @c (routes derived here) and retire the old snapshot. Caller holds dev_lock. */
static void cfg_publish_locked(struct socktab_net *net, struct socktab__ifcfg *c)
{
	struct socktab__ifcfg *old = atomic_load_explicit(&net->ifcfg, memory_order_relaxed);

	SOCKTAB__ASSERT_LOCKED(&net->dev_lock);
	derive_routes(c);
	atomic_store_explicit(&net->ifcfg, c, memory_order_release);
	if (old)
		socktab__call_rcu(old, &old->rcu, cfg_free_rcu);
}

/* ---- route lookup ---- */

/*
 * Longest-prefix match of @d (v4-mapped for IPv4) in @table; @oif: only routes through it.
 * Among equal prefixes the first in the snapshot wins.
 */
static const struct socktab__rt *table_lookup(const struct socktab__ifcfg *c, uint32_t table,
					      int family, const struct in6_addr *d, int oif)
{
	const struct socktab__rt *best = NULL;

	for (uint32_t i = 0; i < c->nrt; i++) {
		const struct socktab__rt *r = &c->rt[i];

		if (r->table != table || r->family != family || (oif && r->ifindex != oif))
			continue;
		if (best && r->plen <= best->plen)
			continue;
		if (prefix_eq(&r->dst, d, full_plen(family, r->plen)))
			best = r;
	}
	return best;
}

/* fib_lookup: the VRF's table when the flow has one, else local then main. */
static const struct socktab__rt *fib_lookup(const struct socktab__ifcfg *c, int family,
					    const struct in6_addr *d, int oif, uint32_t vrf_table)
{
	const struct socktab__rt *r;

	if (vrf_table)
		return table_lookup(c, vrf_table, family, d, oif);
	r = table_lookup(c, SOCKTAB__RT_TABLE_LOCAL, family, d, oif);
	return r ? r : table_lookup(c, SOCKTAB__RT_TABLE_MAIN, family, d, oif);
}

int socktab__inet_addr_type(const struct socktab__ifcfg *c, uint32_t addr, int dev)
{
	uint32_t h = ntohl(addr), table = l3mdev_table(c, dev);
	struct in6_addr a;
	const struct socktab__rt *r;

	if (h == 0 || h == 0xffffffffu)
		return SOCKTAB_RTN_BROADCAST;
	if ((h >> 28) == 0xe)
		return SOCKTAB_RTN_MULTICAST;
	socktab__v6_map(&a, addr);
	r = table_lookup(c, table ? table : SOCKTAB__RT_TABLE_LOCAL, AF_INET, &a, 0);
	return r ? r->type : SOCKTAB_RTN_UNICAST;
}

bool socktab__ipv6_chk_addr(const struct socktab__ifcfg *c, const struct in6_addr *a, int dev)
{
	int l3 = socktab__l3mdev_master(c, dev);

	for (uint32_t i = 0; i < c->naddr; i++) {
		const struct socktab__ifa *f = &c->addr[i];

		if (f->family != AF_INET6 || memcmp(&f->addr, a, 16))
			continue;
		if (socktab__l3mdev_master(c, f->ifindex) != l3)
			continue;
		if (!dev || f->ifindex == dev || f->scope == SOCKTAB__SCOPE_UNIVERSE)
			return true;
	}
	return false;
}

bool socktab__ip_dev_find(const struct socktab__ifcfg *c, uint32_t addr)
{
	struct in6_addr a;
	const struct socktab__rt *r;

	socktab__v6_map(&a, addr);
	for (uint32_t i = 0; i < c->naddr; i++)
		if (c->addr[i].family == AF_INET && !memcmp(&c->addr[i].addr, &a, 16))
			return true;
	r = table_lookup(c, SOCKTAB__RT_TABLE_LOCAL, AF_INET, &a, 0);
	return r && r->type == SOCKTAB_RTN_LOCAL;
}

/* in_dev_select_addr: the first primary IPv4 address of @dev whose scope is within @scope. */
static const struct socktab__ifa *dev_select_addr(const struct socktab__ifcfg *c, int dev,
						  int scope)
{
	for (uint32_t i = 0; i < c->naddr; i++) {
		const struct socktab__ifa *f = &c->addr[i];

		if (f->family == AF_INET && f->ifindex == dev && !f->secondary && f->scope <= scope)
			return f;
	}
	return NULL;
}

/*
 * inet_select_addr(dev, dst, scope): a primary address of @dev within @scope, the one on @dst's
 * subnet first; else the VRF's own; else the first device of the same L3 domain that has one.
 * Returns 0 when nothing qualifies.
 */
static uint32_t inet_select_addr(const struct socktab__ifcfg *c, int dev, uint32_t dst, int scope)
{
	const struct socktab__ifa *first = NULL, *f;
	struct in6_addr d;
	int master;

	socktab__v6_map(&d, dst);
	for (uint32_t i = 0; i < c->naddr; i++) {
		f = &c->addr[i];
		if (f->family != AF_INET || f->ifindex != dev || f->secondary || f->scope > scope)
			continue;
		if (!dst || prefix_eq(&f->addr, &d, full_plen(AF_INET, f->plen)))
			return f->addr.s6_addr32[3];
		if (!first)
			first = f;
	}
	if (first)
		return first->addr.s6_addr32[3];
	master = socktab__l3mdev_master(c, dev);
	if (master && master != dev && (f = dev_select_addr(c, master, scope)))
		return f->addr.s6_addr32[3];
	for (uint32_t i = 0; i < c->ndev; i++) {
		const struct socktab__ifdev *o = &c->dev[i];

		if (socktab__l3mdev_master(c, o->ifindex) != master)
			continue;
		if ((f = dev_select_addr(c, o->ifindex, scope)))
			return f->addr.s6_addr32[3];
	}
	return 0;
}

static int route4(const struct socktab__ifcfg *c, uint32_t *daddrp, int oif, uint32_t saddr,
		  bool anysrc, struct socktab_route_result *res)
{
	uint32_t daddr = *daddrp, h = ntohl(daddr), src = saddr, vrf = 0;
	const struct socktab__ifdev *dev = NULL;
	const struct socktab__rt *r;
	struct in6_addr d;

	if (saddr) {
		uint32_t s = ntohl(saddr);

		if ((s >> 28) == 0xe || s == 0xffffffffu || (s >> 24) == 0)
			return -EINVAL;
		if (!anysrc && !socktab__ip_dev_find(c, saddr))
			return -ENETUNREACH; /* __ip_dev_find: the source is not ours */
	}
	if (oif) {
		dev = socktab__dev_get(c, oif);
		if (!dev)
			return -ENODEV;
		if (!(dev->flags & SOCKTAB_DEV_UP))
			return -ENETUNREACH;
		vrf = l3mdev_table(c, oif);
		if ((h >> 8) == 0xe00000 || h == 0xffffffffu) { /* local multicast, limited bcast */
			res->type = h == 0xffffffffu ? SOCKTAB_RTN_BROADCAST : SOCKTAB_RTN_MULTICAST;
			res->ifindex = oif;
			if (!src)
				src = inet_select_addr(c, oif, 0, SOCKTAB__SCOPE_LINK);
			goto done;
		}
		if (!src && !daddr)
			src = inet_select_addr(c, oif, 0, SOCKTAB__SCOPE_HOST);
	}
	if (!daddr) {
		/* "This host": the source, or loopback; delivered through lo. */
		daddr = src ? src : htonl(INADDR_LOOPBACK);
		*daddrp = daddr;
		if (!src)
			src = daddr;
		res->type = SOCKTAB_RTN_LOCAL;
		res->ifindex = SOCKTAB__LOOPBACK_IFINDEX;
		socktab__v6_map(&d, daddr);
		r = fib_lookup(c, AF_INET, &d, 0, vrf);
		if (r && r->type == SOCKTAB_RTN_LOCAL)
			res->ifindex = r->ifindex;
		goto done;
	}
	socktab__v6_map(&d, daddr);
	/* A VRF device as output device routes in its table without a nexthop filter. */
	r = fib_lookup(c, AF_INET, &d, dev && (dev->flags & SOCKTAB_DEV_VRF) ? 0 : oif, vrf);
	if (!r) {
		if (oif && ((h >> 28) == 0xe || !vrf)) {
			/* No route through the device: assume the destination is on its link. */
			res->type = (h >> 28) == 0xe ? SOCKTAB_RTN_MULTICAST : SOCKTAB_RTN_UNICAST;
			res->ifindex = oif;
			if (!src)
				src = inet_select_addr(c, oif, 0, SOCKTAB__SCOPE_LINK);
			goto done;
		}
		return -ENETUNREACH;
	}
	res->type = r->type;
	res->ifindex = r->ifindex;
	if (!src) {
		if (r->has_prefsrc)
			src = r->prefsrc.s6_addr32[3];
		else if (r->type == SOCKTAB_RTN_LOCAL)
			src = daddr;
		else
			src = inet_select_addr(c, r->ifindex, daddr, SOCKTAB__SCOPE_LINK);
	}
done:
	/* __mkroute_output: a loopback source never leaves through a device that is neither a
	 * loopback nor an L3 master (local delivery goes through lo). */
	if ((ntohl(src) >> 24) == 127 && res->type != SOCKTAB_RTN_LOCAL) {
		const struct socktab__ifdev *out = socktab__dev_get(c, res->ifindex);

		if (out && !(out->flags & (SOCKTAB_DEV_LOOPBACK | SOCKTAB_DEV_VRF)))
			return -EINVAL;
	}
	socktab__v6_map(&res->src, src);
	return 0;
}

/*
 * IPv6 source address selection as ipv6_dev_get_saddr applies RFC 6724, reduced to the rules that
 * matter without tentative, deprecated, temporary or home addresses, compared in rule order:
 * the destination itself (rule 1); an appropriate scope (rule 2: the smallest scope that reaches
 * the destination's, else the largest); the output device (rule 5); the longest common prefix,
 * counted up to the address's own prefix length (rule 8). A device lists its newest address
 * first, and the first best candidate wins a tie. Link-local destinations take only the output
 * device's addresses.
 */
static int v6_scope_rank(int s, int dscope)
{
	/* ipv6_get_saddr_eval: ret = scope >= dst ? -scope : scope - 128 (greater is better). */
	return s >= dscope ? -s : s - 128;
}

static int v6_scope_of(const struct socktab__ifa *f)
{
	/* __ipv6_addr_src_scope: loopback 1 (node-local), link-local 2, global 14. */
	return f->scope == SOCKTAB__SCOPE_HOST ? 1 : f->scope == SOCKTAB__SCOPE_LINK ? 2 : 14;
}

static bool v6_select_src(const struct socktab__ifcfg *c, const struct in6_addr *d, int outdev,
			  struct in6_addr *src)
{
	int dscope = v6_linklocal(d) ? 2 : 14, l3 = socktab__l3mdev_master(c, outdev);
	const struct socktab__ifa *best = NULL;
	int bs = 0, bo = 0, bp = 0;

	/* The output device's addresses first, then the others of its L3 domain; newest first. */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = c->naddr; i-- > 0;) {
			const struct socktab__ifa *f = &c->addr[i];
			int sc, on, pl;

			if (f->family != AF_INET6 || socktab__l3mdev_master(c, f->ifindex) != l3 ||
			    (f->ifindex == outdev) != (pass == 0))
				continue;
			if (dscope != 14 && f->ifindex != outdev)
				continue;
			if (!memcmp(&f->addr, d, 16)) {
				*src = f->addr;
				return true;
			}
			sc = v6_scope_rank(v6_scope_of(f), dscope);
			on = f->ifindex == outdev;
			pl = common_bits(&f->addr, d);
			if (pl > f->plen)
				pl = f->plen;
			if (best && (sc < bs || (sc == bs && (on < bo || (on == bo && pl <= bp)))))
				continue;
			best = f;
			bs = sc;
			bo = on;
			bp = pl;
		}
	}
	if (!best)
		return false;
	*src = best->addr;
	return true;
}

static int route6(const struct socktab__ifcfg *c, const struct in6_addr *d, int oif,
		  struct socktab_route_result *res)
{
	const struct socktab__ifdev *dev = NULL;
	const struct socktab__rt *r;
	uint32_t vrf = 0;

	if (oif) {
		/* A device that is gone: the strict lookup finds no route through it (the kernel
		 * keeps a stale scope or binding and fails here, unlike IPv4's ENODEV). */
		dev = socktab__dev_get(c, oif);
		if (!dev)
			return -ENETUNREACH;
		vrf = l3mdev_table(c, oif);
	}
	r = fib_lookup(c, AF_INET6, d, dev && (dev->flags & SOCKTAB_DEV_VRF) ? 0 : oif, vrf);
	if (!r)
		return -ENETUNREACH;
	res->type = r->type;
	res->ifindex = r->ifindex;
	if (r->has_prefsrc)
		res->src = r->prefsrc;
	else if (!v6_select_src(c, d, r->ifindex, &res->src))
		return -EADDRNOTAVAIL;
	return 0;
}

int socktab__route_output(struct socktab_net *net, struct in6_addr *daddr, int oif,
			  const struct in6_addr *saddr, bool anysrc,
			  struct socktab_route_result *res)
{
	const struct socktab__fib *fib;
	const struct socktab__ifcfg *c;
	bool v4 = is_v4(daddr);
	int err;

	memset(res, 0, sizeof(*res));
	socktab__rcu_read_lock();
	c = socktab__ifcfg_rcu(net);
	fib = atomic_load_explicit(&net->fib, memory_order_acquire);
	if (v4 && saddr && saddr->s6_addr32[3] && !anysrc &&
	    !socktab__ip_dev_find(c, saddr->s6_addr32[3])) {
		err = -ENETUNREACH;
	} else if (fib) {
		struct in_addr d4 = { daddr->s6_addr32[3] };

		err = fib->fn(fib->arg, v4 ? AF_INET : AF_INET6, v4 ? (const void *)&d4 : daddr, oif,
			      res);
		if (!err && v4 && !socktab__v6_is_mapped(&res->src))
			socktab__v6_map(&res->src, res->src.s6_addr32[3]);
		if (!err && v4 && saddr && saddr->s6_addr32[3])
			res->src = *saddr;
	} else if (v4) {
		err = route4(c, &daddr->s6_addr32[3], oif, saddr ? saddr->s6_addr32[3] : 0, anysrc,
			     res);
	} else {
		err = route6(c, daddr, oif, res);
		if (!err && saddr && !socktab__v6_is_any(saddr))
			res->src = *saddr;
	}
	socktab__rcu_read_unlock();
	return err;
}

int socktab__route_connect(struct socktab_net *net, struct in6_addr *daddr, int oif,
			   const struct in6_addr *saddr, bool anysrc,
			   struct socktab_route_result *res)
{
	bool v4 = is_v4(daddr), two = v4 && (!daddr->s6_addr32[3] || !saddr || !saddr->s6_addr32[3]);
	struct in6_addr src;
	int err = socktab__route_output(net, daddr, oif, saddr, anysrc, res);

	if (err || !two)
		return err;
	/* ip_route_connect: without a destination or a source, the first lookup only fills them
	 * in; the route is a second lookup with both (which may fail where the first did not). */
	src = res->src;
	return socktab__route_output(net, daddr, oif, src.s6_addr32[3] ? &src : NULL, anysrc, res);
}

bool socktab__dev_equal_l3scope(struct socktab_sock *sk, int dif)
{
	int bound = (int)RD(sk->bound_dev_if), master;

	if (!bound || bound == dif)
		return true;
	socktab__rcu_read_lock();
	master = socktab__l3mdev_master(socktab__ifcfg_rcu(socktab__sk_net(sk)), dif);
	socktab__rcu_read_unlock();
	return master && master == bound;
}

/* ---- the public calls ---- */

static bool name_ok(const char *name)
{
	size_t n;

	if (!name)
		return false;
	n = strlen(name);
	if (n == 0 || n >= SOCKTAB_IFNAMSIZ || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	/* The kernel's dev_valid_name(): no '/', ':' or character its isspace() takes for white
	 * space. */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '/' || c == ':' || socktab__kernel_isspace(c))
			return false;
	}
	return true;
}

static struct socktab__ifcfg *cur_locked(struct socktab_net *net)
{
	SOCKTAB__ASSERT_LOCKED(&net->dev_lock);
	return atomic_load_explicit(&net->ifcfg, memory_order_relaxed);
}

static int dev_add(struct socktab_net *net, const char *name, uint32_t flags, uint32_t table)
{
	struct socktab__ifcfg *old, *c;
	struct socktab__ifdev *d;
	int ifindex;

	if (!net || !name_ok(name))
		return -EINVAL;
	socktab__lock(&net->dev_lock);
	old = cur_locked(net);
	for (uint32_t i = 0; i < old->ndev; i++)
		if (!strcmp(old->dev[i].name, name)) {
			socktab__unlock(&net->dev_lock);
			return -EEXIST;
		}
	c = cfg_clone(old, 1, 0, 0);
	if (!c) {
		socktab__unlock(&net->dev_lock);
		return -ENOMEM;
	}
	ifindex = c->next_ifindex++;
	d = &c->dev[c->ndev++];
	d->ifindex = ifindex;
	d->flags = flags;
	d->table = table;
	strcpy(d->name, name);
	cfg_publish_locked(net, c);
	socktab__unlock(&net->dev_lock);
	return ifindex;
}

int socktab_dev_add(struct socktab_net *net, const char *name, int up)
{
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_dev_add()");
	return dev_add(net, name, up ? SOCKTAB_DEV_UP : 0, 0);
}

int socktab_dev_add_vrf(struct socktab_net *net, const char *name, uint32_t table, int up)
{
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_dev_add_vrf()");
	if (!table || table == SOCKTAB__RT_TABLE_MAIN || table == SOCKTAB__RT_TABLE_LOCAL)
		return -EINVAL;
	return dev_add(net, name, SOCKTAB_DEV_VRF | (up ? SOCKTAB_DEV_UP : 0), table);
}

/* Drop the addresses of @ifindex matching @keep == false (family 0: any). */
static void drop_addrs(struct socktab__ifcfg *c, int ifindex, int family)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->naddr; i++) {
		const struct socktab__ifa *a = &c->addr[i];

		if (a->ifindex == ifindex && (!family || a->family == family))
			continue;
		c->addr[n++] = *a;
	}
	c->naddr = n;
}

static void drop_user_routes(struct socktab__ifcfg *c, int ifindex)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->nuser; i++)
		if (c->user[i].ifindex != ifindex)
			c->user[n++] = c->user[i];
	c->nuser = n;
}

/* Start a change of device @ifindex: the lock taken and a private copy made. */
static int change_begin(struct socktab_net *net, int ifindex, uint32_t xaddr, uint32_t xuser,
			struct socktab__ifcfg **cp, struct socktab__ifdev **dp)
{
	struct socktab__ifcfg *c;

	if (!net)
		return -EINVAL;
	socktab__lock(&net->dev_lock);
	if (!socktab__dev_get(cur_locked(net), ifindex)) {
		socktab__unlock(&net->dev_lock);
		return -ENODEV;
	}
	c = cfg_clone(cur_locked(net), 0, xaddr, xuser);
	if (!c) {
		socktab__unlock(&net->dev_lock);
		return -ENOMEM;
	}
	*cp = c;
	*dp = dev_get_mut(c, ifindex);
	return 0;
}

static int change_end(struct socktab_net *net, struct socktab__ifcfg *c, int err)
{
	if (err)
		free(c);
	else
		cfg_publish_locked(net, c);
	socktab__unlock(&net->dev_lock);
	return err;
}

int socktab_dev_del(struct socktab_net *net, int ifindex)
{
	struct socktab__ifcfg *c;
	struct socktab__ifdev *d;
	int err = change_begin(net, ifindex, 0, 0, &c, &d);

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_dev_del()");
	if (err)
		return err;
	if (d->flags & SOCKTAB_DEV_LOOPBACK)
		return change_end(net, c, -EINVAL);
	drop_addrs(c, ifindex, 0);
	drop_user_routes(c, ifindex);
	for (uint32_t i = 0; i < c->ndev; i++)
		if (c->dev[i].master == ifindex)
			c->dev[i].master = 0;
	/* Gone from the table (ifindexes are never reused: next_ifindex only grows), so a stack
	 * that makes and deletes a device per session does not grow every later change. */
	memmove(d, d + 1, (size_t)(c->dev + c->ndev - (d + 1)) * sizeof(*d)); /* keeps the order */
	c->ndev--;
	return change_end(net, c, 0);
}

int socktab_dev_set_up(struct socktab_net *net, int ifindex, int up)
{
	struct socktab__ifcfg *c;
	struct socktab__ifdev *d;
	int err = change_begin(net, ifindex, 0, 0, &c, &d);

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_dev_set_up()");
	if (err)
		return err;
	if (up) {
		d->flags |= SOCKTAB_DEV_UP;
		return change_end(net, c, 0);
	}
	if (d->flags & SOCKTAB_DEV_LOOPBACK)
		return change_end(net, c, -EINVAL);
	if (d->flags & SOCKTAB_DEV_UP) {
		d->flags &= ~SOCKTAB_DEV_UP;
		drop_addrs(c, ifindex, AF_INET6); /* addrconf_ifdown: gone for good */
		drop_user_routes(c, ifindex);
	}
	return change_end(net, c, 0);
}

int socktab_dev_set_master(struct socktab_net *net, int ifindex, int master_ifindex)
{
	struct socktab__ifcfg *c;
	struct socktab__ifdev *d;
	const struct socktab__ifdev *m;
	int err = change_begin(net, ifindex, 0, 0, &c, &d);

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_dev_set_master()");
	if (err)
		return err;
	if (d->flags & (SOCKTAB_DEV_LOOPBACK | SOCKTAB_DEV_VRF))
		return change_end(net, c, -EINVAL);
	if (master_ifindex) {
		m = socktab__dev_get(c, master_ifindex);
		if (!m)
			return change_end(net, c, -ENODEV);
		if (!(m->flags & SOCKTAB_DEV_VRF))
			return change_end(net, c, -EINVAL);
	}
	d->master = master_ifindex;
	/* Enslaving moves the device's routes between tables: the user ones are dropped, as the
	 * kernel's NETDEV_CHANGEUPPER flush does; derived ones follow the addresses. */
	drop_user_routes(c, ifindex);
	return change_end(net, c, 0);
}

int socktab_dev_index(struct socktab_net *net, const char *name)
{
	const struct socktab__ifcfg *c;
	int ret = -ENODEV;

	if (!net || !name)
		return -EINVAL;
	socktab__rcu_read_lock();
	c = socktab__ifcfg_rcu(net);
	for (uint32_t i = 0; i < c->ndev; i++)
		if (!strcmp(c->dev[i].name, name)) {
			ret = c->dev[i].ifindex;
			break;
		}
	socktab__rcu_read_unlock();
	return ret;
}

int socktab_dev_name(struct socktab_net *net, int ifindex, char *buf, size_t len)
{
	const struct socktab__ifdev *d;
	int ret = -ENODEV;

	if (!net || !buf)
		return -EINVAL;
	socktab__rcu_read_lock();
	d = socktab__dev_get(socktab__ifcfg_rcu(net), ifindex);
	if (d) {
		ret = strlen(d->name) < len ? 0 : -ENOSPC;
		if (!ret)
			strcpy(buf, d->name);
	}
	socktab__rcu_read_unlock();
	return ret;
}

int socktab_dev_flags(struct socktab_net *net, int ifindex)
{
	const struct socktab__ifdev *d;
	int ret = -ENODEV;

	if (!net)
		return -EINVAL;
	socktab__rcu_read_lock();
	d = socktab__dev_get(socktab__ifcfg_rcu(net), ifindex);
	if (d)
		ret = (int)d->flags;
	socktab__rcu_read_unlock();
	return ret;
}

int socktab_dev_master(struct socktab_net *net, int ifindex)
{
	const struct socktab__ifcfg *c;
	int ret = -ENODEV;

	if (!net)
		return -EINVAL;
	socktab__rcu_read_lock();
	c = socktab__ifcfg_rcu(net);
	if (socktab__dev_get(c, ifindex))
		ret = socktab__l3mdev_master(c, ifindex);
	socktab__rcu_read_unlock();
	return ret;
}

/* Parse a public (family, address, prefix length) triple into the v4-mapped form. */
static int parse_prefix(int family, const void *addr, int plen, struct in6_addr *a)
{
	if (!addr)
		return -EINVAL;
	if (family == AF_INET) {
		uint32_t v4, h;

		memcpy(&v4, addr, 4);
		h = ntohl(v4);
		if (plen < 0 || plen > 32)
			return -EINVAL;
		socktab__v6_map(a, v4);
		return h == 0 || (h >> 28) == 0xe || h == 0xffffffffu ? -EINVAL : 0;
	}
	if (family != AF_INET6 || plen < 0 || plen > 128)
		return -EINVAL;
	memcpy(a, addr, 16);
	if (socktab__v6_is_any(a) || a->s6_addr[0] == 0xff || socktab__v6_is_mapped(a))
		return -EINVAL;
	return 0;
}

int socktab_addr_add(struct socktab_net *net, int ifindex, int family, const void *addr, int plen)
{
	struct socktab__ifcfg *c;
	struct socktab__ifdev *d;
	struct socktab__ifa *n;
	struct in6_addr a;
	bool secondary = false;
	int err = parse_prefix(family, addr, plen, &a);

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_addr_add()");
	if (err)
		return err;
	err = change_begin(net, ifindex, 1, 0, &c, &d);
	if (err)
		return err;
	for (uint32_t i = 0; i < c->naddr; i++) {
		const struct socktab__ifa *o = &c->addr[i];

		if (o->ifindex != ifindex || o->family != family)
			continue;
		if (family == AF_INET6 && !memcmp(&o->addr, &a, 16))
			return change_end(net, c, -EEXIST);
		if (family == AF_INET && o->plen == plen &&
		    prefix_eq(&o->addr, &a, full_plen(AF_INET, plen))) {
			if (!memcmp(&o->addr, &a, 16))
				return change_end(net, c, -EEXIST);
			secondary = true; /* inet_insert_ifa: same subnet as a primary */
		}
	}
	n = &c->addr[c->naddr++];
	memset(n, 0, sizeof(*n));
	n->ifindex = ifindex;
	n->family = (uint8_t)family;
	n->plen = (uint8_t)plen;
	n->secondary = secondary;
	/* The scope `ip addr add` gives by default: host for 127/8 and ::1 only, whatever the
	 * device (so 192.0.2.1 on lo is global and may be another device's source, R95). */
	n->scope = addr_scope(family, &a);
	n->addr = a;
	return change_end(net, c, 0);
}

int socktab_addr_del(struct socktab_net *net, int ifindex, int family, const void *addr, int plen)
{
	struct socktab__ifcfg *c;
	struct socktab__ifdev *d;
	struct in6_addr a;
	uint32_t n = 0;
	int err = parse_prefix(family, addr, plen, &a), found = -1;

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_addr_del()");
	if (err)
		return err;
	err = change_begin(net, ifindex, 0, 0, &c, &d);
	if (err)
		return err;
	for (uint32_t i = 0; i < c->naddr; i++) {
		const struct socktab__ifa *o = &c->addr[i];

		if (o->ifindex == ifindex && o->family == family && o->plen == plen &&
		    !memcmp(&o->addr, &a, 16)) {
			found = (int)i;
			break;
		}
	}
	if (found < 0)
		return change_end(net, c, -EADDRNOTAVAIL);
	struct socktab__ifa gone = c->addr[found];

	for (uint32_t i = 0; i < c->naddr; i++) {
		const struct socktab__ifa *o = &c->addr[i];

		if ((int)i == found)
			continue;
		/* Deleting a primary takes its subnet's secondaries along (promote_secondaries 0). */
		if (family == AF_INET && !gone.secondary && o->secondary && o->ifindex == ifindex &&
		    o->family == AF_INET && o->plen == gone.plen &&
		    prefix_eq(&o->addr, &gone.addr, full_plen(AF_INET, gone.plen)))
			continue;
		c->addr[n++] = *o;
	}
	c->naddr = n;
	return change_end(net, c, 0);
}

int socktab_route_add(struct socktab_net *net, int family, const void *dst, int plen,
		      int ifindex, const void *prefsrc)
{
	struct socktab__ifcfg *c;
	struct socktab__ifdev *d;
	struct socktab__rt r;
	struct in6_addr a;
	int err;

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_route_add()");
	if (!dst)
		return -EINVAL;
	if (family == AF_INET) {
		if (plen < 0 || plen > 32)
			return -EINVAL;
		socktab__v6_map(&a, *(const uint32_t *)dst);
	} else if (family == AF_INET6) {
		if (plen < 0 || plen > 128)
			return -EINVAL;
		memcpy(&a, dst, 16);
	} else {
		return -EINVAL;
	}
	memset(&r, 0, sizeof(r));
	r.family = (uint8_t)family;
	r.plen = (uint8_t)plen;
	r.type = SOCKTAB_RTN_UNICAST;
	r.origin = SOCKTAB__RT_USER;
	r.ifindex = ifindex;
	r.dst = prefix_of(&a, full_plen(family, plen));
	if (prefsrc) {
		if (family == AF_INET)
			socktab__v6_map(&r.prefsrc, *(const uint32_t *)prefsrc);
		else
			memcpy(&r.prefsrc, prefsrc, 16);
		r.has_prefsrc = true;
	}
	err = change_begin(net, ifindex, 0, 1, &c, &d);
	if (err)
		return err;
	if (!(d->flags & SOCKTAB_DEV_UP))
		return change_end(net, c, -ENETDOWN);
	r.table = d->master ? l3mdev_table(c, ifindex) : SOCKTAB__RT_TABLE_MAIN;
	if (d->flags & SOCKTAB_DEV_VRF)
		r.table = d->table;
	for (uint32_t i = 0; i < c->nuser; i++) {
		const struct socktab__rt *o = &c->user[i];

		if (o->family == family && o->plen == plen && o->ifindex == ifindex &&
		    !memcmp(&o->dst, &r.dst, 16))
			return change_end(net, c, -EEXIST);
	}
	c->user[c->nuser++] = r;
	return change_end(net, c, 0);
}

int socktab_route_del(struct socktab_net *net, int family, const void *dst, int plen,
		      int ifindex)
{
	struct socktab__ifcfg *c;
	struct socktab__ifdev *d;
	struct in6_addr a;
	int err;

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_route_del()");
	if (!dst || (family != AF_INET && family != AF_INET6) || plen < 0 ||
	    plen > (family == AF_INET ? 32 : 128))
		return -EINVAL;
	if (family == AF_INET)
		socktab__v6_map(&a, *(const uint32_t *)dst);
	else
		memcpy(&a, dst, 16);
	a = prefix_of(&a, full_plen(family, plen));
	err = change_begin(net, ifindex, 0, 0, &c, &d);
	if (err)
		return err;
	for (uint32_t i = 0; i < c->nuser; i++) {
		const struct socktab__rt *o = &c->user[i];

		if (o->family == family && o->plen == plen && o->ifindex == ifindex &&
		    !memcmp(&o->dst, &a, 16)) {
			c->user[i] = c->user[--c->nuser];
			return change_end(net, c, 0);
		}
	}
	return change_end(net, c, -ESRCH);
}

int socktab_route_lookup(struct socktab_net *net, int family, const void *daddr, int oif,
			 struct socktab_route_result *res)
{
	struct in6_addr d;

	if (!net || !daddr || !res || oif < 0)
		return -EINVAL;
	if (family == AF_INET)
		socktab__v6_map(&d, *(const uint32_t *)daddr);
	else if (family == AF_INET6)
		memcpy(&d, daddr, 16);
	else
		return -EINVAL;
	return socktab__route_output(net, &d, oif, NULL, false, res);
}

static void fib_free_rcu(struct rcu_head *head)
{
	struct socktab__fib *f = caa_container_of(head, struct socktab__fib, rcu);

	socktab__rcu_cb_enter(f);
	free(f);
}

int socktab_net_set_fib(struct socktab_net *net, socktab_fib_fn fn, void *arg)
{
	struct socktab__fib *f = NULL, *old;

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_net_set_fib()");
	if (!net)
		return -EINVAL;
	if (fn) {
		f = calloc(1, sizeof(*f));
		if (!f)
			return -ENOMEM;
		f->fn = fn;
		f->arg = arg;
	}
	old = atomic_exchange_explicit(&net->fib, f, memory_order_acq_rel);
	if (old)
		socktab__call_rcu(old, &old->rcu, fib_free_rcu);
	return 0;
}

int socktab__dev_init(struct socktab_net *net)
{
	struct socktab__ifcfg *c = cfg_alloc(1, 2, 0);
	struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;

	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&net->dev_lock, NULL);
	c->next_ifindex = SOCKTAB__LOOPBACK_IFINDEX + 1;
	c->dev[0].ifindex = SOCKTAB__LOOPBACK_IFINDEX;
	c->dev[0].flags = SOCKTAB_DEV_UP | SOCKTAB_DEV_LOOPBACK;
	strcpy(c->dev[0].name, "lo");
	c->addr[0].ifindex = SOCKTAB__LOOPBACK_IFINDEX;
	c->addr[0].family = AF_INET;
	c->addr[0].plen = 8;
	c->addr[0].scope = SOCKTAB__SCOPE_HOST;
	socktab__v6_map(&c->addr[0].addr, htonl(INADDR_LOOPBACK));
	c->addr[1].ifindex = SOCKTAB__LOOPBACK_IFINDEX;
	c->addr[1].family = AF_INET6;
	c->addr[1].plen = 128;
	c->addr[1].scope = SOCKTAB__SCOPE_HOST;
	c->addr[1].addr = lo6;
	derive_routes(c);
	atomic_init(&net->ifcfg, c);
	atomic_init(&net->fib, NULL);
	return 0;
}

/* After the net's last grace period: nothing reads the snapshot any more. */
void socktab__dev_destroy(struct socktab_net *net)
{
	free(atomic_load_explicit(&net->ifcfg, memory_order_relaxed));
	free(atomic_load_explicit(&net->fib, memory_order_relaxed));
	pthread_mutex_destroy(&net->dev_lock);
}
