/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The packet path's entry points: every public lookup in its two forms. The referenced form
 * (socktab_lookup_*) pins its result with a reference the caller drops with socktab_sock_put();
 * the RCU-scoped form (socktab_lookup_*_rcu) takes none: the caller is inside a read-side
 * section (socktab_rcu_read_lock()) and the result is valid until it leaves it, because every
 * socket and TIME_WAIT entry goes back to its pool only after a grace period (R23 extended to
 * all sockets). The RCU form does no atomic write, so readers on many cores share the socket's
 * line instead of bouncing it.
 * The tables' walks are in ehash.c (established), listen.c (listeners), udp.c and burst.c.
 */
#include "ehash.h"
#include "listen.h"
#include "udp.h"

void socktab_rcu_read_lock(void)
{
	socktab__rcu_read_lock();
}

void socktab_rcu_read_unlock(void)
{
	socktab__rcu_read_unlock();
}

int socktab_sock_hold(struct socktab_sock *sk)
{
	if (!sk)
		return -EINVAL;
	return socktab__sock_hold_not_zero(sk) ? 0 : -ENOENT;
}

/* ---- TCP ---- */

static struct socktab_sock *tcp4(struct socktab_net *net, uint32_t saddr, uint16_t sport,
				 uint32_t daddr, uint16_t dport, int dif, int sdif, bool ref)
{
	struct socktab_sock *sk;

	if (!net)
		return NULL;
	sk = socktab__lookup_established4(net, saddr, sport, daddr, dport, dif, sdif, ref);
	return sk ? sk
		  : socktab__lookup_listener4(net, saddr, sport, daddr, dport, dif, sdif, ref);
}

static struct socktab_sock *tcp6(struct socktab_net *net, const struct in6_addr *saddr,
				 uint16_t sport, const struct in6_addr *daddr, uint16_t dport,
				 int dif, int sdif, bool ref)
{
	struct socktab_sock *sk;

	if (!net || !saddr || !daddr)
		return NULL;
	sk = socktab__lookup_established6(net, saddr, sport, daddr, dport, dif, sdif, ref);
	return sk ? sk
		  : socktab__lookup_listener6(net, saddr, sport, daddr, dport, dif, sdif, ref);
}

struct socktab_sock *socktab_lookup_tcp4(struct socktab_net *net, uint32_t saddr, uint16_t sport,
					 uint32_t daddr, uint16_t dport, int dif, int sdif)
{
	return tcp4(net, saddr, sport, daddr, dport, dif, sdif, true);
}

struct socktab_sock *socktab_lookup_tcp4_rcu(struct socktab_net *net, uint32_t saddr,
					     uint16_t sport, uint32_t daddr, uint16_t dport,
					     int dif, int sdif)
{
	SOCKTAB__ASSERT_RCU();
	return tcp4(net, saddr, sport, daddr, dport, dif, sdif, false);
}

struct socktab_sock *socktab_lookup_tcp6(struct socktab_net *net, const struct in6_addr *saddr,
					 uint16_t sport, const struct in6_addr *daddr,
					 uint16_t dport, int dif, int sdif)
{
	return tcp6(net, saddr, sport, daddr, dport, dif, sdif, true);
}

struct socktab_sock *socktab_lookup_tcp6_rcu(struct socktab_net *net,
					     const struct in6_addr *saddr, uint16_t sport,
					     const struct in6_addr *daddr, uint16_t dport, int dif,
					     int sdif)
{
	SOCKTAB__ASSERT_RCU();
	return tcp6(net, saddr, sport, daddr, dport, dif, sdif, false);
}

struct socktab_sock *socktab_lookup_tcp(struct socktab_net *net, int family, const void *saddr,
					uint16_t sport, const void *daddr, uint16_t dport, int dif,
					int sdif)
{
	uint32_t s4, d4;

	if (!saddr || !daddr)
		return NULL;
	if (family == AF_INET) {
		memcpy(&s4, saddr, 4);
		memcpy(&d4, daddr, 4);
		return tcp4(net, s4, sport, d4, dport, dif, sdif, true);
	}
	if (family == AF_INET6)
		return tcp6(net, saddr, sport, daddr, dport, dif, sdif, true);
	return NULL;
}

struct socktab_sock *socktab_lookup_established4(struct socktab_net *net, uint32_t saddr,
						 uint16_t sport, uint32_t daddr, uint16_t dport,
						 int dif, int sdif)
{
	if (!net)
		return NULL;
	return socktab__lookup_established4(net, saddr, sport, daddr, dport, dif, sdif, true);
}

struct socktab_sock *socktab_lookup_established4_rcu(struct socktab_net *net, uint32_t saddr,
						     uint16_t sport, uint32_t daddr,
						     uint16_t dport, int dif, int sdif)
{
	SOCKTAB__ASSERT_RCU();
	if (!net)
		return NULL;
	return socktab__lookup_established4(net, saddr, sport, daddr, dport, dif, sdif, false);
}

struct socktab_sock *socktab_lookup_established6(struct socktab_net *net,
						 const struct in6_addr *saddr, uint16_t sport,
						 const struct in6_addr *daddr, uint16_t dport,
						 int dif, int sdif)
{
	if (!net || !saddr || !daddr)
		return NULL;
	return socktab__lookup_established6(net, saddr, sport, daddr, dport, dif, sdif, true);
}

struct socktab_sock *socktab_lookup_established6_rcu(struct socktab_net *net,
						     const struct in6_addr *saddr, uint16_t sport,
						     const struct in6_addr *daddr, uint16_t dport,
						     int dif, int sdif)
{
	SOCKTAB__ASSERT_RCU();
	if (!net || !saddr || !daddr)
		return NULL;
	return socktab__lookup_established6(net, saddr, sport, daddr, dport, dif, sdif, false);
}

struct socktab_sock *socktab_lookup_listener4(struct socktab_net *net, uint32_t saddr,
					      uint16_t sport, uint32_t daddr, uint16_t dport,
					      int dif, int sdif)
{
	if (!net)
		return NULL;
	return socktab__lookup_listener4(net, saddr, sport, daddr, dport, dif, sdif, true);
}

struct socktab_sock *socktab_lookup_listener4_rcu(struct socktab_net *net, uint32_t saddr,
						  uint16_t sport, uint32_t daddr, uint16_t dport,
						  int dif, int sdif)
{
	SOCKTAB__ASSERT_RCU();
	if (!net)
		return NULL;
	return socktab__lookup_listener4(net, saddr, sport, daddr, dport, dif, sdif, false);
}

struct socktab_sock *socktab_lookup_listener6(struct socktab_net *net,
					      const struct in6_addr *saddr, uint16_t sport,
					      const struct in6_addr *daddr, uint16_t dport, int dif,
					      int sdif)
{
	if (!net || !saddr || !daddr)
		return NULL;
	return socktab__lookup_listener6(net, saddr, sport, daddr, dport, dif, sdif, true);
}

struct socktab_sock *socktab_lookup_listener6_rcu(struct socktab_net *net,
						  const struct in6_addr *saddr, uint16_t sport,
						  const struct in6_addr *daddr, uint16_t dport,
						  int dif, int sdif)
{
	SOCKTAB__ASSERT_RCU();
	if (!net || !saddr || !daddr)
		return NULL;
	return socktab__lookup_listener6(net, saddr, sport, daddr, dport, dif, sdif, false);
}

/* ---- UDP ---- */

struct socktab_sock *socktab_lookup_udp4(struct socktab_net *net, uint32_t saddr, uint16_t sport,
					 uint32_t daddr, uint16_t dport, int dif, int sdif)
{
	if (!net)
		return NULL;
	return socktab__lookup_udp4(net, saddr, sport, daddr, dport, dif, sdif, true);
}

struct socktab_sock *socktab_lookup_udp4_rcu(struct socktab_net *net, uint32_t saddr,
					     uint16_t sport, uint32_t daddr, uint16_t dport,
					     int dif, int sdif)
{
	SOCKTAB__ASSERT_RCU();
	if (!net)
		return NULL;
	return socktab__lookup_udp4(net, saddr, sport, daddr, dport, dif, sdif, false);
}

struct socktab_sock *socktab_lookup_udp6(struct socktab_net *net, const struct in6_addr *saddr,
					 uint16_t sport, const struct in6_addr *daddr,
					 uint16_t dport, int dif, int sdif)
{
	if (!net || !saddr || !daddr)
		return NULL;
	return socktab__lookup_udp6(net, saddr, sport, daddr, dport, dif, sdif, true);
}

struct socktab_sock *socktab_lookup_udp6_rcu(struct socktab_net *net,
					     const struct in6_addr *saddr, uint16_t sport,
					     const struct in6_addr *daddr, uint16_t dport, int dif,
					     int sdif)
{
	SOCKTAB__ASSERT_RCU();
	if (!net || !saddr || !daddr)
		return NULL;
	return socktab__lookup_udp6(net, saddr, sport, daddr, dport, dif, sdif, false);
}
