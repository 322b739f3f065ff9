/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Socket addresses: parsing what the caller passes to bind(), connect(), sendto() and
 * new_child(), and writing what getsockname()/getpeername() return, for TCP and UDP alike. The
 * entry checks follow the kernel's inet_bind/inet6_bind, tcp_v4/v6_connect and the datagram
 * connect/sendmsg paths (R37, R38, R73, R76): their errno for a short address or a wrong family
 * differs by call, which the flags of socktab__parse_dest() select.
 */
#include "addr.h"
#include "dev.h"

int socktab__parse_dest(const struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len,
			struct socktab__dest *d, unsigned int flags)
{
	bool dgram = flags & SOCKTAB__DEST_DGRAM, sending = flags & SOCKTAB__DEST_SEND;
	int family = sk->family;

	memset(d, 0, sizeof(*d));
	if (family == AF_INET || (dgram && addr->sa_family == AF_INET)) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;

		/* __ip6_datagram_connect hands an AF_INET address to the IPv4 path, unless the
		 * socket is v6only. */
		if (family == AF_INET6 && socktab__ipv6_only(sk))
			return sending ? -ENETUNREACH : -EAFNOSUPPORT;
		if (len < (socklen_t)sizeof(*sin))
			return -EINVAL;
		if (sin->sin_family != AF_INET && !(sending && sin->sin_family == AF_UNSPEC))
			return -EAFNOSUPPORT;
		d->v4 = true;
		d->daddr4 = sin->sin_addr.s_addr;
		socktab__v6_map(&d->daddr6, d->daddr4);
		d->port = sin->sin_port;
		return 0;
	}
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;

	if (len < SOCKTAB__SIN6_LEN_RFC2133)
		return -EINVAL;
	if (sin6->sin6_family != AF_INET6)
		return sending ? -EINVAL : -EAFNOSUPPORT;
	d->daddr6 = sin6->sin6_addr;
	d->port = sin6->sin6_port;
	if (len >= (socklen_t)sizeof(*sin6))
		d->scope_id = sin6->sin6_scope_id;
	if (socktab__v6_is_mapped(&d->daddr6)) {
		if (dgram && socktab__ipv6_only(sk))
			return -ENETUNREACH;
		d->v4 = true;
		d->daddr4 = d->daddr6.s6_addr32[3];
	}
	return 0;
}

socklen_t socktab__make_sockaddr(struct sockaddr_storage *ss, int family, const struct in6_addr *a,
				 uint16_t port_be, uint32_t dev)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_addr.s_addr = a->s6_addr32[3];
		s->sin_port = port_be;
		return sizeof(*s);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_addr = *a;
	s6->sin6_port = port_be;
	s6->sin6_scope_id = socktab__v6_needs_scope(a) ? dev : 0;
	return sizeof(*s6);
}

int socktab__put_sockaddr(struct sockaddr *addr, socklen_t *len,
			  const struct sockaddr_storage *ss, socklen_t n)
{
	if (!addr || !len)
		return -EINVAL;
	memcpy(addr, ss, *len < n ? *len : n);
	*len = n; /* like the kernel: the full size, even when truncated */
	return 0;
}

int socktab__parse_endpoint(int family, const struct sockaddr *sa, socklen_t len,
			    struct in6_addr *a, uint16_t *port_be)
{
	if (family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

		if (len < (socklen_t)sizeof(*sin) || sin->sin_family != AF_INET)
			return -EINVAL;
		socktab__v6_map(a, sin->sin_addr.s_addr);
		*port_be = sin->sin_port;
		return 0;
	}
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

	if (len < SOCKTAB__SIN6_LEN_RFC2133 || sin6->sin6_family != AF_INET6)
		return -EINVAL;
	*a = sin6->sin6_addr;
	*port_be = sin6->sin6_port;
	return 0;
}

int socktab__bind_check_v4(const struct socktab_sock *sk, uint32_t v4)
{
	struct socktab_net *net = socktab__sk_net(sk);
	int dev = (int)RD(sk->bound_dev_if), type, err = 0;

	bool any_ok = !v4 || socktab__skf(sk, SOCKTAB__SKF_FREEBIND) ||
		      socktab__skf(sk, SOCKTAB__SKF_TRANSPARENT) || RD(net->ip_nonlocal_bind);

	/* __inet6_bind: a v4-mapped bind checks that the bound device exists before anything
	 * else, so 0.0.0.0 and a FREEBIND socket get ENODEV too (AF_INET does not check). */
	if (any_ok && !(sk->family == AF_INET6 && dev))
		return 0;
	socktab__rcu_read_lock();
	const struct socktab__ifcfg *c = socktab__ifcfg_rcu(net);

	if (sk->family == AF_INET6 && dev && !socktab__dev_get(c, dev))
		err = -ENODEV;
	type = err || any_ok ? 0 : socktab__inet_addr_type(c, v4, dev);
	socktab__rcu_read_unlock();
	if (err || any_ok)
		return err;
	if (type != SOCKTAB_RTN_LOCAL && type != SOCKTAB_RTN_MULTICAST &&
	    type != SOCKTAB_RTN_BROADCAST)
		return -EADDRNOTAVAIL;
	return 0;
}

bool socktab__v4_is_group(struct socktab_net *net, uint32_t v4, int dev)
{
	int type;

	socktab__rcu_read_lock();
	type = socktab__inet_addr_type(socktab__ifcfg_rcu(net), v4, dev);
	socktab__rcu_read_unlock();
	return type == SOCKTAB_RTN_BROADCAST || type == SOCKTAB_RTN_MULTICAST;
}

int socktab__bind_check_v6(struct socktab_sock *sk, const struct in6_addr *a, uint32_t scope_id)
{
	struct socktab_net *net = socktab__sk_net(sk);
	int dev, err = 0;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (socktab__v6_needs_scope(a)) {
		if (scope_id)
			WR(sk->bound_dev_if, scope_id); /* overrides any binding; kept on failure */
		if (!RD(sk->bound_dev_if))
			return -EINVAL;
	}
	dev = (int)RD(sk->bound_dev_if);
	socktab__rcu_read_lock();
	const struct socktab__ifcfg *c = socktab__ifcfg_rcu(net);

	if (dev && !socktab__dev_get(c, dev))
		err = -ENODEV;
	else if (a->s6_addr[0] != 0xff && !socktab__skf(sk, SOCKTAB__SKF_FREEBIND) &&
		 !socktab__skf(sk, SOCKTAB__SKF_TRANSPARENT) &&
		 !RD(net->ip6_nonlocal_bind) && !socktab__ipv6_chk_addr(c, a, dev))
		err = -EADDRNOTAVAIL;
	socktab__rcu_read_unlock();
	return err;
}

/*
 * The checks bind() makes before it takes the socket lock (R37/R38, both protocols): address
 * length and family, an IPv4 address that is not local (R85), IPv6 multicast on a stream
 * socket, a privileged port. Fills the address (v4-mapped for AF_INET), its IPv4 form, the port
 * and the scope id.
 */
int socktab__bind_addr(const struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len,
		       bool stream, struct in6_addr *a6, uint32_t *v4, int *snum,
		       uint32_t *scope_id)
{
	struct socktab_net *net = socktab__sk_net(sk);
	int err;

	*v4 = 0;
	*scope_id = 0;
	if (sk->family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;

		if (len < (socklen_t)sizeof(*sin))
			return -EINVAL;
		if (sin->sin_family != AF_INET &&
		    (sin->sin_family != AF_UNSPEC || sin->sin_addr.s_addr != htonl(INADDR_ANY)))
			return -EAFNOSUPPORT;
		*v4 = sin->sin_addr.s_addr;
		err = socktab__bind_check_v4(sk, *v4);
		if (err)
			return err;
		*snum = ntohs(sin->sin_port);
		socktab__v6_map(a6, *v4);
	} else {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;

		if (len < SOCKTAB__SIN6_LEN_RFC2133)
			return -EINVAL;
		if (sin6->sin6_family != AF_INET6)
			return -EAFNOSUPPORT;
		*a6 = sin6->sin6_addr;
		if (stream && a6->s6_addr[0] == 0xff) /* multicast on a stream socket */
			return -EINVAL;
		*snum = ntohs(sin6->sin6_port);
		if (len >= (socklen_t)sizeof(*sin6))
			*scope_id = sin6->sin6_scope_id;
	}
	if (*snum && *snum < RD(net->unprivileged_port_start) && !net->privileged)
		return -EACCES;
	return 0;
}
