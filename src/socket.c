/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The socket calls of socktab/sock.h (but the options, sockopt.c, and the TIME_WAIT entry calls,
 * timewait.c), and UDP's sendto(): the entry points of the control path. Each takes the socket's
 * lock (socktab__sk_lock_open()), reaps a few expired TIME_WAIT entries where the kernel's timer
 * would have, and then calls the tables below it: bind.c (ports), listen.c (lhash2), connect.c
 * (connect()'s port choice), ehash.c and timewait.c (the established table and its TIME_WAIT
 * entries), udp.c (the UDP halves, `if (udp)` here as libuv's uv-common.c does). No table calls
 * back up into this file (docs/design.md, "What may call what").
 *
 * Reference counting: socktab_socket() returns a socket holding the caller's reference;
 * socktab_close() unhashes the socket, then drops that reference (sock.c).
 */
#include "addr.h"
#include "bind.h"
#include "dev.h"
#include "ehash.h"
#include "listen.h"
#include "reqsk.h"
#include "reuseport.h"
#include "rss.h"
#include "timewait.h"
#include "udp.h"

struct socktab_sock *socktab_socket(struct socktab_net *net, int proto, int family)
{
	struct socktab_sock *sk;

	SOCKTAB__ASSERT_NOT_IN_DISPATCH("socktab_socket()");
	if (!net) {
		errno = EINVAL;
		return NULL;
	}
	if (proto != SOCKTAB_TCP && proto != SOCKTAB_UDP) {
		errno = EPROTONOSUPPORT;
		return NULL;
	}
	if (family != AF_INET && family != AF_INET6) {
		errno = EAFNOSUPPORT;
		return NULL;
	}
	sk = socktab__pool_alloc(socktab__sock_pool(net, proto, family));
	if (!sk) {
		errno = ENOMEM;
		return NULL;
	}
	socktab__lock(socktab__sk_lock(sk));
	socktab__sock_init_fields(sk);
	if (proto == SOCKTAB_UDP)
		socktab__udp_init_sock(sk);
	memset(socktab__sk_priv(sk), 0, net->priv_size);
	WR(sk->state, SOCKTAB_TCP_CLOSE);
	atomic_store_explicit(&sk->refcnt, 1, memory_order_release);
	socktab__unlock(socktab__sk_lock(sk));
	return sk;
}

void *socktab_sock_priv(struct socktab_sock *sk)
{
	/* A TIME_WAIT entry has only its own small area (socktab_tw_priv()). Reads only the
	 * socket's line: this is on the per-packet path. */
	if (!sk || !(atomic_load_explicit(&sk->kind, memory_order_relaxed) & SOCKTAB__HAS_PRIV))
		return NULL;
	return socktab__sk_priv(sk);
}

int socktab_sock_family(const struct socktab_sock *sk)
{
	if (!sk || RD(sk->state) == SOCKTAB__FREE)
		return -EBADF;
	return sk->family;
}

int socktab_get_state(struct socktab_sock *sk)
{
	int st;

	if (!sk)
		return -EINVAL;
	st = RD(sk->state);
	return st == SOCKTAB__FREE ? -EBADF : st;
}

/* Lock @sk for a public call: -EINVAL for NULL, -EBADF (and not locked) when it is closed or
 * is a TIME_WAIT or request entry. */
int socktab__sk_lock_open(struct socktab_sock *sk)
{
	pthread_mutex_t *l;

	if (!sk)
		return -EINVAL;
	SOCKTAB__ASSERT_NOT_IN_DISPATCH("a socket call");
	l = socktab__sk_lock(sk);
	socktab__lock(l);
	if (RD(sk->state) == SOCKTAB__FREE || RD(sk->state) == SOCKTAB_TCP_TIME_WAIT ||
	    RD(sk->state) == SOCKTAB_TCP_NEW_SYN_RECV) {
		socktab__unlock(l);
		return -EBADF;
	}
	return 0;
}

/*
 * The kernel's tcp_done() (a reset, a refused connect): leave the tables (a listener leaves
 * lhash2, anything else ehash) and give back the port unless bind() locked it; the socket stays
 * open in state CLOSE and keeps its addresses (getsockname still shows them, and the old port,
 * as on Linux). A listener's queues go into @o (inet_csk_listen_stop), which the caller hands to
 * socktab__listen_stop_finish() once it released the lock. Caller holds the socket lock.
 */
static void sk_done(struct socktab_net *net, struct socktab_sock *sk, struct socktab__orphans *o)
{
	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (RD(sk->state) == SOCKTAB_TCP_LISTEN) {
		socktab__listen_stop_locked(sk, o);
		socktab__listen_unhash(sk);
	} else if (socktab__ehash_hashed(sk)) {
		socktab__ehash_remove(net->tab, sk);
		SOCKTAB__STAT_ADD(net, established, -1);
	}
	if (!(sk->userlocks & SOCKTAB__BINDPORT_LOCK)) {
		socktab__put_port(sk);
		socktab__sk_set_num(sk, 0); /* inet_num = 0; sport stays */
	}
	WR(sk->state, SOCKTAB_TCP_CLOSE);
}

/*
 * tcp_time_wait(sk, TCP_TIME_WAIT) for a socket the caller still holds: the peer's FIN reached
 * it in FIN_WAIT1/FIN_WAIT2, or the ACK of our FIN reached it in CLOSING. A TIME_WAIT entry takes
 * over the 4-tuple and owns the port, and the socket is done (tcp_done): state CLOSE, out of
 * ehash, its addresses kept; it gives the port back (inet_num 0) unless bind() locked it, then it
 * owns the port beside the entry. Caller holds the socket lock.
 */
static int sk_time_wait(struct socktab_net *net, struct socktab_sock *sk)
{
	int st = RD(sk->state);

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if ((st != SOCKTAB_TCP_FIN_WAIT1 && st != SOCKTAB_TCP_FIN_WAIT2 &&
	     st != SOCKTAB_TCP_CLOSING) ||
	    !socktab__ehash_hashed(sk) || !socktab__sk_bl(sk)->tb2)
		return -EINVAL;
	bool keep = sk->userlocks & SOCKTAB__BINDPORT_LOCK;

	if (socktab__tw_create_and_swap(net, sk, SOCKTAB_TCP_TIME_WAIT, keep)) {
		struct socktab__orphans o; /* stays empty: no listener gets here */

		/* No entry could be had: close without one, as the kernel does when
		 * tcp_max_tw_buckets is reached. */
		sk_done(net, sk, &o);
		return 0;
	}
	/* inet_num = 0; sport stays. Release: a reader still standing on sk that sees the port
	 * gone also sees sk's next link lead to the entry (socktab__hnode_replace_rcu). */
	if (!keep)
		atomic_store_explicit(&sk->portpair, RD(sk->portpair) & 0xffff,
				      memory_order_release);
	WR(sk->state, SOCKTAB_TCP_CLOSE);
	return 0;
}

int socktab_set_state(struct socktab_sock *sk, int state)
{
	struct socktab__orphans o = { 0 };
	int err;

	if (sk && socktab__sk_proto(sk) == SOCKTAB_UDP) /* UDP has no state machine to drive */
		return RD(sk->state) == SOCKTAB__FREE ? -EBADF : -EOPNOTSUPP;
	err = socktab__sk_lock_open(sk);
	if (err)
		return err;
	switch (state) {
	case SOCKTAB_TCP_CLOSE:
		if (RD(sk->state) != SOCKTAB_TCP_CLOSE)
			sk_done(socktab__sk_net(sk), sk, &o);
		break;
	case SOCKTAB_TCP_TIME_WAIT:
		err = sk_time_wait(socktab__sk_net(sk), sk);
		break;
	case SOCKTAB_TCP_LISTEN: /* listen() makes listeners */
		err = -EINVAL;
		break;
	default:
		/* Any other state of a connection, ESTABLISHED to CLOSING, is taken as it is by a
		 * hashed socket that does not listen. */
		if (state < SOCKTAB_TCP_ESTABLISHED || state > SOCKTAB_TCP_CLOSING ||
		    RD(sk->state) == SOCKTAB_TCP_LISTEN || !socktab__ehash_hashed(sk)) {
			err = -EINVAL;
			break;
		}
		WR(sk->state, (uint8_t)state);
		if (state == SOCKTAB_TCP_ESTABLISHED)
			socktab__skf_set(sk, SOCKTAB__SKF_CONNECTED, true);
	}
	socktab__unlock(socktab__sk_lock(sk));
	socktab__listen_stop_finish(&o);
	return err;
}

/*
 * tcp_disconnect() (connect(AF_UNSPEC), and what a failed blocking connect() runs): tcp_done if
 * the socket is not closed yet, then forget the peer and, unless bind() locked it, the local
 * address; the socket is no longer SS_CONNECTED. Caller holds the socket lock.
 */
static void sk_disconnect(struct socktab_net *net, struct socktab_sock *sk,
			  struct socktab__orphans *o)
{
	static const struct in6_addr any = IN6ADDR_ANY_INIT;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (RD(sk->state) != SOCKTAB_TCP_CLOSE)
		sk_done(net, sk, o);
	socktab__sk_set_dport(sk, 0);
	socktab__sk_set_v6_daddr(sk, &any);
	if (!(sk->userlocks & SOCKTAB__BINDADDR_LOCK)) {
		/* port kept by bind(): its bucket goes back to the wildcard address */
		if (socktab__sk_bl(sk)->tb2)
			socktab__bhash2_update_saddr(sk, &any);
		socktab__sk_set_v6_saddr(sk, &any);
		WR(sk->addrpair, 0);
	} else {
		WR(sk->addrpair, RD(sk->addrpair) & 0xffffffff00000000ull);
	}
	WR(sk->v4key, sk->family == AF_INET);
	socktab__skf_set(sk, SOCKTAB__SKF_CONNECTED, false);
}

/* Does the socket have a source address for a connect() of this family? (@src as loaded:
 * v4-mapped for IPv4.) */
static bool has_src(bool v4, const struct in6_addr *src)
{
	return v4 ? socktab__v6_is_mapped(src) && src->s6_addr32[3] : !socktab__v6_is_any(src);
}

/*
 * connect()'s route (tcp_v4_connect / tcp_v6_connect, R95, R96): checks the destination, binds
 * the socket to the scope of a link-local destination, and fills @src with the source address
 * (left alone when the socket has one). @src in: the socket's local address (v4-mapped for
 * IPv4); @daddr in/out: the destination (an IPv4 0.0.0.0 comes back resolved). Caller holds the
 * socket lock.
 */
static int tcp_route(struct socktab_sock *sk, bool v4, struct in6_addr *daddr,
		     struct in6_addr *src, uint32_t scope_id)
{
	struct socktab_net *net = socktab__sk_net(sk);
	struct socktab_route_result res;
	bool own = has_src(v4, src);
	int err;

	SOCKTAB__ASSERT_SK_LOCKED(sk);
	if (v4) {
		/* A v6only socket, or one bound to a real IPv6 address, has no IPv4 path. */
		if (sk->family == AF_INET6 &&
		    (sk->v6only || (!socktab__v6_is_any(src) && !socktab__v6_is_mapped(src))))
			return -ENETUNREACH;
		err = socktab__route_connect(net, daddr, (int)RD(sk->bound_dev_if), own ? src : NULL,
					    socktab__skf(sk, SOCKTAB__SKF_TRANSPARENT), &res);
		if (err)
			return err;
		/* Multicast and broadcast routes refuse TCP (RTCF_MULTICAST | RTCF_BROADCAST). */
		if (res.type == SOCKTAB_RTN_BROADCAST || res.type == SOCKTAB_RTN_MULTICAST)
			return -ENETUNREACH;
	} else {
		if (daddr->s6_addr[0] == 0xff)
			return -ENETUNREACH;
		if (socktab__v6_needs_scope(daddr)) {
			if (scope_id && !socktab__dev_equal_l3scope(sk, (int)scope_id))
				return -EINVAL;
			if (scope_id)
				WR(sk->bound_dev_if, scope_id);
			if (!RD(sk->bound_dev_if))
				return -EINVAL; /* a link-local peer needs a device */
		}
		err = socktab__route_output(net, daddr, (int)RD(sk->bound_dev_if), NULL, false, &res);
		if (err)
			return err;
		/* ip6_dst_lookup_tail: bound to an IPv4 address, no IPv6 path; checked once a route
		 * was found (without one the answer is ENETUNREACH). */
		if (socktab__v6_is_mapped(src))
			return -EAFNOSUPPORT;
	}
	if (!own)
		*src = res.src;
	return 0;
}

/* R104: whether the role lock forbids @sk a role, having taken @other (a SOCKTAB__SOCKF_ bit). */
static bool role_locked(const struct socktab_sock *sk, uint8_t other)
{
	return (RD(sk->tw_flags) & other) &&
	       RD(socktab__sk_net(sk)->kvariant[SOCKTAB_KV_ROLE_LOCK]);
}

int socktab_connect(struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len)
{
	static const struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;
	struct socktab_net *net;
	struct socktab__dest d;
	struct in6_addr daddr6, saddr6, old_saddr6;
	uint32_t daddr4, saddr4, old_saddr4;
	uint16_t dport;
	bool v4, had_saddr;
	int family, err, st;

	if (sk && socktab__sk_proto(sk) == SOCKTAB_UDP) {
		if (!addr || len < (socklen_t)sizeof(sa_family_t))
			return -EINVAL;
		err = socktab__sk_lock_open(sk);
		if (err)
			return err;
		err = socktab__udp_connect_locked(sk, addr, len);
		socktab__unlock(socktab__sk_lock(sk));
		return err;
	}
	if (!sk || !addr || len < (socklen_t)sizeof(sa_family_t))
		return -EINVAL;
	family = sk->family;
	if (addr->sa_family == AF_UNSPEC) {
		struct socktab__orphans o = { 0 };

		/* connect(AF_UNSPEC): tcp_disconnect(). */
		err = socktab__sk_lock_open(sk);
		if (err)
			return err;
		sk_disconnect(socktab__sk_net(sk), sk, &o);
		socktab__unlock(socktab__sk_lock(sk));
		socktab__listen_stop_finish(&o);
		return 0;
	}
	err = socktab__parse_dest(sk, addr, len, &d, 0);
	if (err) {
		/* __inet_stream_connect() judges the socket's state before tcp_v4_connect() or
		 * tcp_v6_connect() looks at the address: a connected or listening socket says
		 * EISCONN (EALREADY while connecting) whatever address it is given. */
		int err2 = socktab__sk_lock_open(sk);

		if (err2)
			return err2;
		st = RD(sk->state);
		if (st != SOCKTAB_TCP_CLOSE || socktab__skf(sk, SOCKTAB__SKF_CONNECTED))
			err = st == SOCKTAB_TCP_SYN_SENT ? -EALREADY : -EISCONN;
		socktab__unlock(socktab__sk_lock(sk));
		return err;
	}
	v4 = d.v4;
	daddr4 = d.daddr4;
	daddr6 = d.daddr6;
	dport = d.port;

	err = socktab__sk_lock_open(sk);
	if (err)
		return err;
	net = socktab__sk_net(sk);
	st = RD(sk->state);
	/* R104 (__inet_stream_connect): SS_CONNECTED (a socket that got connected stays so after a
	 * reset) gives EISCONN, SS_CONNECTING (SYN_SENT) EALREADY, SS_UNCONNECTED in any state but
	 * CLOSE (a listener) EISCONN. A disconnect, or a refused connect's tcp_disconnect, makes it
	 * SS_UNCONNECTED again whatever it did before (listen included). */
	if (st != SOCKTAB_TCP_CLOSE || socktab__skf(sk, SOCKTAB__SKF_CONNECTED)) {
		err = st == SOCKTAB_TCP_SYN_SENT ? -EALREADY : -EISCONN;
		goto out;
	}
	socktab__tw_reap(net, SOCKTAB__TW_REAP_BUDGET);
	saddr6 = socktab__sk_v6_saddr(sk);
	if (family == AF_INET6 && !v4 && socktab__v6_is_any(&daddr6)) {
		/* Connecting to :: means the loopback address (tcp_v6_connect). */
		if (socktab__v6_is_mapped(&saddr6)) {
			v4 = true;
			daddr4 = htonl(INADDR_LOOPBACK);
		} else {
			daddr6 = lo6;
		}
	}
	if (v4)
		socktab__v6_map(&daddr6, daddr4);
	/* A socket bound to a broadcast address has no source: it takes the route's and moves to
	 * it (inet_bhash2_update_saddr), as below. */
	old_saddr6 = socktab__sk_v6_saddr(sk);
	old_saddr4 = socktab__sk_rcv_saddr(sk);
	had_saddr = has_src(v4, &saddr6) && !socktab__skf(sk, SOCKTAB__SKF_SADDR_ANY);
	if (!had_saddr)
		memset(&saddr6, 0, sizeof(saddr6));
	err = tcp_route(sk, v4, &daddr6, &saddr6, d.scope_id);
	if (err)
		goto out;
	daddr4 = v4 ? daddr6.s6_addr32[3] : 0;
	saddr4 = v4 ? saddr6.s6_addr32[3] : SOCKTAB__LOOPBACK4_IPV6;

	/* Record the 4-tuple; a socket that owns a port via a wildcard bucket moves to its new
	 * address bucket (R51). */
	if (!had_saddr) {
		err = socktab__bhash2_update_saddr(sk, &saddr6);
		if (err)
			goto out;
	}
	WR(sk->v4key, v4);
	WR(sk->addrpair, (uint64_t)daddr4 * v4 | ((uint64_t)saddr4 << 32));
	socktab__sk_set_v6_daddr(sk, &daddr6);
	socktab__sk_set_v6_saddr(sk, &saddr6);
	socktab__sk_set_dport(sk, dport);
	WR(sk->state, SOCKTAB_TCP_SYN_SENT);
	/* R104: with the role lock, a socket that has listened does not connect. The kernel
	 * refuses it where the port search would fail: after the route (ENETUNREACH comes first)
	 * and the source address, and undoes the same. */
	err = role_locked(sk, SOCKTAB__SOCKF_LISTENED) ? -EINVAL : socktab__hash_connect(net, sk);
	if (err) {
		static const struct in6_addr any = IN6ADDR_ANY_INIT;

		WR(sk->state, SOCKTAB_TCP_CLOSE);
		socktab__sk_set_dport(sk, 0);
		socktab__sk_set_v6_daddr(sk, &any);
		WR(sk->v4key, family == AF_INET);
		if (!had_saddr && !(sk->userlocks & SOCKTAB__BINDADDR_LOCK)) {
			/* Back to no address (inet_bhash2_reset_saddr). */
			socktab__bhash2_update_saddr(sk, &old_saddr6);
			socktab__sk_set_v6_saddr(sk, &old_saddr6);
			WR(sk->addrpair, (uint64_t)old_saddr4 << 32);
		} else {
			/* An address bind() locked, a broadcast one included, gives way to the
			 * route's for good: the kernel's reset leaves a locked address alone. */
			WR(sk->addrpair, RD(sk->addrpair) & 0xffffffff00000000ull);
			if (!had_saddr)
				socktab__skf_set(sk, SOCKTAB__SKF_SADDR_ANY, false);
		}
		/* tcp_set_state(CLOSE): a port bind(0) gave goes back (inet_num = 0; sport stays);
		 * one bind() named stays. */
		if (socktab__sk_num(sk) && !(sk->userlocks & SOCKTAB__BINDPORT_LOCK)) {
			socktab__put_port(sk);
			socktab__sk_set_num(sk, 0);
		}
		goto out;
	}
	socktab__skf_set(sk, SOCKTAB__SKF_SADDR_ANY, false); /* it has the route's source now */
	socktab__sk_mark_role(sk, SOCKTAB__SOCKF_ACTIVE);
	SOCKTAB__STAT_ADD(net, established, 1);
	SOCKTAB__STAT_ADD(net, connects, 1);
	err = 0;
out:
	socktab__unlock(socktab__sk_lock(sk));
	return err;
}

int socktab_close(struct socktab_sock *sk)
{
	struct socktab__orphans o = { 0 };
	struct socktab_net *net;
	int err, st;

	err = socktab__sk_lock_open(sk);
	if (err)
		return err;
	/* A group of its own from SO_ATTACH_REUSEPORT_CBPF before bind/listen (R109). */
	if (socktab__sk_proto(sk) == SOCKTAB_UDP ? !socktab__sk_num(sk)
						   : RD(sk->state) != SOCKTAB_TCP_LISTEN)
		socktab__reuseport_release(sk);
	if (socktab__sk_proto(sk) == SOCKTAB_UDP) {
		socktab__udp_close_locked(sk);
		socktab__unlock(socktab__sk_lock(sk));
		socktab_sock_put(sk); /* back to the pool after a grace period */
		return 0;
	}
	net = socktab__sk_net(sk);
	st = RD(sk->state);
	socktab__tw_reap(net, SOCKTAB__TW_REAP_BUDGET);
	if (st == SOCKTAB_TCP_LISTEN) {
		socktab__listen_stop_locked(sk, &o);
		socktab__listen_unhash(sk);
	} else if (socktab__ehash_hashed(sk)) {
		bool active = st == SOCKTAB_TCP_ESTABLISHED || st == SOCKTAB_TCP_FIN_WAIT1 ||
			      st == SOCKTAB_TCP_FIN_WAIT2 || st == SOCKTAB_TCP_CLOSING;
		bool abort = socktab__skf(sk, SOCKTAB__SKF_LINGER) && sk->cold->linger_secs == 0;

		/* Both FINs seen (CLOSING): TIME_WAIT proper; otherwise the peer's FIN is still
		 * to come, the FIN_WAIT2 substate of an orphan (tcp_time_wait(TCP_FIN_WAIT2)). */
		int sub = st == SOCKTAB_TCP_CLOSING ? SOCKTAB_TCP_TIME_WAIT : SOCKTAB_TCP_FIN_WAIT2;

		if (!(active && !abort && socktab__sk_bl(sk)->tb2 &&
		      socktab__tw_create_and_swap(net, sk, sub, false) == 0)) {
			socktab__ehash_remove(net->tab, sk);
			SOCKTAB__STAT_ADD(net, established, -1);
		}
	}
	socktab__put_port(sk);
	WR(sk->state, SOCKTAB__FREE);
	socktab__unlock(socktab__sk_lock(sk));
	socktab__listen_stop_finish(&o); /* its requests and children move on or go */
	socktab_sock_put(sk);
	return 0;
}

/* Which name sk_name() gives. */
enum { NAME_LOCAL, NAME_PEER, NAME_KEY_PEER };

static int sk_name(struct socktab_sock *sk, struct sockaddr *addr, socklen_t *len, int which)
{
	int err = socktab__sk_lock_open(sk);
	struct sockaddr_storage ss;
	struct in6_addr a;
	socklen_t n;
	bool peer = which != NAME_LOCAL;

	if (err)
		return err;
	if (!addr || !len) {
		err = -EINVAL;
		goto out;
	}
	/* inet_getname: no peer without a remote port, nor in CLOSE or SYN_SENT (a connect() still
	 * in progress has none yet; a listener has no remote port). The key's peer is there while
	 * a TCP socket is in ehash (port 0 included) and while a UDP socket is connected. */
	if (which == NAME_PEER && (!socktab__sk_dport(sk) || RD(sk->state) == SOCKTAB_TCP_CLOSE ||
				   RD(sk->state) == SOCKTAB_TCP_SYN_SENT)) {
		err = -ENOTCONN;
		goto out;
	}
	if (which == NAME_KEY_PEER &&
	    (socktab__sk_proto(sk) == SOCKTAB_UDP ? RD(sk->state) != SOCKTAB_TCP_ESTABLISHED
				      : RD(sk->state) == SOCKTAB_TCP_LISTEN || !socktab__ehash_hashed(sk))) {
		err = -ENOTCONN;
		goto out;
	}
	a = peer ? socktab__sk_v6_daddr(sk) : socktab__sk_v6_saddr(sk);
	n = socktab__make_sockaddr(&ss, sk->family, &a,
				   peer ? socktab__sk_dport(sk) : htons(sk->sport),
				   RD(sk->bound_dev_if));
	err = socktab__put_sockaddr(addr, len, &ss, n);
out:
	socktab__unlock(socktab__sk_lock(sk));
	return err;
}

int socktab_getsockname(struct socktab_sock *sk, struct sockaddr *addr, socklen_t *len)
{
	return sk_name(sk, addr, len, NAME_LOCAL);
}

int socktab_getpeername(struct socktab_sock *sk, struct sockaddr *addr, socklen_t *len)
{
	return sk_name(sk, addr, len, NAME_PEER);
}

int socktab_sock_peer(struct socktab_sock *sk, struct sockaddr *addr, socklen_t *len)
{
	return sk_name(sk, addr, len, NAME_KEY_PEER);
}

/* ---- bind(), listen() and children ---- */

int socktab_bind(struct socktab_sock *sk, const struct sockaddr *addr, socklen_t len)
{
	struct socktab_net *net;
	struct in6_addr a6;
	uint32_t v4, scope_id;
	int snum, err;
	uint8_t saved_v6only;
	bool udp;

	if (!sk || !addr)
		return -EINVAL;
	/* A TIME_WAIT or request entry (its kind never changes) has none of the fields the
	 * address's checks read. */
	if (socktab__sk_is_tw(sk) || socktab__sk_is_req(sk))
		return -EBADF;
	net = socktab__sk_net(sk);
	udp = socktab__sk_proto(sk) == SOCKTAB_UDP;
	err = socktab__bind_addr(sk, addr, len, !udp, &a6, &v4, &snum, &scope_id);
	if (err)
		return err;

	err = socktab__sk_lock_open(sk);
	if (err)
		return err;
	if (!udp)
		socktab__tw_reap(net, SOCKTAB__TW_REAP_BUDGET);
	err = -EINVAL;
	if (RD(sk->state) != SOCKTAB_TCP_CLOSE || socktab__sk_num(sk) || socktab__sk_bl(sk)->tb2)
		goto out;
	/* A UDP socket may also bind an IPv6 multicast group (the stream check is above). */
	err = socktab__bind_set_addr(sk, &a6, v4, scope_id, &saved_v6only);
	if (err)
		goto out;
	if (snum || !socktab__skf(sk, SOCKTAB__SKF_NO_PORT)) {
		err = udp ? socktab__udp_get_port(net, sk, (uint16_t)snum)
			  : socktab__get_port(net, sk, snum);
		if (err) {
			socktab__bind_undo_addr(sk, saved_v6only);
			goto out;
		}
	}
	socktab__bind_done(sk, snum);
out:
	socktab__unlock(socktab__sk_lock(sk));
	return err;
}

int socktab_listen(struct socktab_sock *sk, int backlog)
{
	struct socktab_net *net;
	unsigned int somax;
	int err, st;

	if (!sk)
		return -EINVAL;
	if (socktab__sk_proto(sk) == SOCKTAB_UDP) /* listen(2) on a datagram socket */
		return RD(sk->state) == SOCKTAB__FREE ? -EBADF : -EOPNOTSUPP;
	err = socktab__sk_lock_open(sk);
	if (err)
		return err;
	st = RD(sk->state);
	net = socktab__sk_net(sk);
	somax = (unsigned int)RD(net->somaxconn);
	/* The kernel compares as unsigned: a negative backlog means "as large as allowed". */
	if ((unsigned int)backlog > somax)
		backlog = (int)somax;
	if (st == SOCKTAB_TCP_LISTEN) {
		socktab__listenq_start(sk, backlog, false);
		socktab__unlock(socktab__sk_lock(sk));
		return 0;
	}
	/* R104 (inet_listen): only an SS_UNCONNECTED socket in CLOSE or LISTEN. One that got
	 * connected stays SS_CONNECTED after a reset, one whose SYN is unanswered is SS_CONNECTING
	 * (SYN_SENT): EINVAL until connect(AF_UNSPEC). */
	if (st != SOCKTAB_TCP_CLOSE || socktab__skf(sk, SOCKTAB__SKF_CONNECTED)) {
		socktab__unlock(socktab__sk_lock(sk));
		return -EINVAL;
	}
	/* The queues come first: nothing else can fail for want of memory once it listens. */
	err = socktab__listenq_prepare(sk);
	if (err) {
		socktab__unlock(socktab__sk_lock(sk));
		return err;
	}
	socktab__tw_reap(net, SOCKTAB__TW_REAP_BUDGET);
	/* R46: LISTEN first, so the port is re-validated as a listener's (no SO_REUSEADDR pass). */
	WR(sk->state, SOCKTAB_TCP_LISTEN);
	err = socktab__get_port(net, sk, socktab__sk_num(sk));
	if (!err && role_locked(sk, SOCKTAB__SOCKF_ACTIVE)) {
		/* R104: the role lock refuses a socket that has been active after it got its port,
		 * and the port stays, as a bind(0) would leave it. */
		err = -EINVAL;
	} else if (!err) {
		err = socktab__listen_hash(net, sk);
		if (err && !(sk->userlocks & SOCKTAB__BINDPORT_LOCK) &&
		    !(sk->userlocks & SOCKTAB__BINDADDR_LOCK))
			socktab__put_port(sk);
	}
	if (err) {
		WR(sk->state, SOCKTAB_TCP_CLOSE);
	} else {
		socktab__listenq_start(sk, backlog, true);
		socktab__sk_mark_role(sk, SOCKTAB__SOCKF_LISTENED);
	}
	socktab__unlock(socktab__sk_lock(sk));
	return err;
}

int socktab_listen_backlog(struct socktab_sock *sk)
{
	int ret = socktab__sk_lock_open(sk);

	if (ret)
		return ret;
	ret = RD(sk->state) == SOCKTAB_TCP_LISTEN ? (int)RD(socktab__sk_lq(sk)->max_ack_backlog)
						  : -EINVAL;
	socktab__unlock(socktab__sk_lock(sk));
	return ret;
}

/* ---- RSS and UDP ---- */

int socktab_sock_set_rss_queue(struct socktab_sock *sk, int queue)
{
	int err;

	if (!sk || queue < -1 || queue > 65535)
		return -EINVAL;
	err = socktab__sk_lock_open(sk);
	if (err)
		return err;
	if (queue < 0)
		socktab__skf_set(sk, SOCKTAB__SKF_RSS, false);
	else {
		sk->cold->rss_queue = (uint16_t)queue;
		socktab__skf_set(sk, SOCKTAB__SKF_RSS, true);
	}
	socktab__unlock(socktab__sk_lock(sk));
	return err;
}

int socktab_udp_sendto(struct socktab_sock *sk, const struct sockaddr *dst, socklen_t len,
		       struct sockaddr_storage *src, struct sockaddr_storage *to)
{
	int err;

	if (!sk)
		return -EINVAL;
	/* A TIME_WAIT or request entry is no socket of the caller's (its kind says TCP). */
	if (RD(sk->state) == SOCKTAB__FREE || socktab__sk_is_tw(sk) || socktab__sk_is_req(sk))
		return -EBADF;
	if (socktab__sk_proto(sk) != SOCKTAB_UDP)
		return -EOPNOTSUPP;
	err = socktab__sk_lock_open(sk);
	if (err)
		return err;
	err = socktab__udp_sendto_locked(sk, dst, len, src, to);
	socktab__unlock(socktab__sk_lock(sk));
	return err;
}
