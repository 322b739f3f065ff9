/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab replay, kernel backend: each case runs with real sockets in a forked child that first
 * moves into a fresh network namespace (unshare(CLONE_NEWNET)) and brings lo up, so sysctl
 * writes and sockets never touch the host's namespace and only loopback exists. The child runs
 * the shared executor and writes one struct rp_outcome per op into a pipe; the parent reads them
 * with a timeout and kills a child that stops answering, so every wait is bounded.
 *
 * Sockets are non-blocking: a "blocking" connect is connect() + poll(POLLOUT) for 2 s (the
 * script format's timeout, reported as EINPROGRESS), accept waits at most 1 s for POLLIN, and
 * readable polls up to 1 s for the expected count (0.1 s when expecting 0).
 *
 * Devices are made in the case's namespace over rtnetlink (netlink.c): a script's dummy device
 * is a `dummy` where the kernel has that driver and an `ifb` configured to match where it does
 * not (up, NOARP, no IPv6 address generation, no router solicitations); both drop what they
 * transmit. The traffic rule of the format is enforced here (traffic_check()): before any
 * statement that can send, the kernel's own route lookup must show that every packet stays in
 * the namespace, or the statement is refused as a SCRIPT ERROR and never runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "netlink.h"
#include "script.h"

#ifndef IN6_ADDR_GEN_MODE_NONE
#define IN6_ADDR_GEN_MODE_NONE 1
#endif

#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif

/* An address that took part in a TCP connection (the traffic rule protects it from removal). */
struct taddr {
	int family;     /* AF_INET (v4-mapped addresses are stored as IPv4) or AF_INET6 */
	uint8_t a[16];
	int ifindex;    /* a link-local address: its device; 0 otherwise */
};

struct kctx {
	int *fd; /* slot -> fd, -1 when none; a replaced fd stays open until the child exits */
	bool *udp; /* slot -> a datagram socket */
	int nslot;
	struct taddr *tcp_addrs;
	int ntcp_addrs;
	const void *payload; /* the next datagram's payload (NULL: "x") */
	size_t payload_len;
};

/* The rtnl kind of a script's dummy device: "dummy", or "ifb" on a kernel without the dummy
 * driver. Decided once, in the parent, before the first case that needs it is forked. */
static const char *dummy_kind;

static int ms_wait(int expect)
{
	if (rp_fast_waits)
		return 50;
	return expect == 0 ? 100 : 1000;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int k_sysctl(void *ctx, const char *key, const char *value)
{
	char path[160], buf[512];
	int fd, n, err = 0;

	(void)ctx;
	snprintf(path, sizeof(path), "/proc/sys/%s", key);
	for (char *p = path + 10; *p; p++)
		if (*p == '.')
			*p = '/';
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	/* One write() of the whole value: a buffered or split write would hide EINVAL. */
	n = snprintf(buf, sizeof(buf), "%s\n", value);
	if (write(fd, buf, (size_t)n) < 0)
		err = errno;
	close(fd);
	return err;
}

static int k_socket(void *ctx, int slot, int udp, int family, int uid)
{
	struct kctx *k = ctx;
	int fd, err = 0;

	/* The socket's owner (SO_REUSEPORT's same-owner rule) is the creator's fsuid: switch
	 * the effective ids only, so the saved uid 0 lets us switch back. */
	if (uid && (setresgid((gid_t)-1, (gid_t)uid, (gid_t)-1) ||
		    setresuid((uid_t)-1, (uid_t)uid, (uid_t)-1)))
		return errno;
	fd = socket(family, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		err = errno;
	if (uid && (setresuid((uid_t)-1, 0, (uid_t)-1) || setresgid((gid_t)-1, 0, (gid_t)-1)))
		_exit(4); /* cannot return to root: nothing after this would be meaningful */
	if (fd >= 0) {
		k->fd[slot] = fd;
		k->udp[slot] = udp;
	}
	return err;
}

static int k_setsockopt(void *ctx, int slot, int level, int name, const void *val, socklen_t len)
{
	struct kctx *k = ctx;

	return setsockopt(k->fd[slot], level, name, val, len) ? errno : 0;
}

static int k_getsockopt(void *ctx, int slot, int level, int name, void *val, socklen_t *len)
{
	struct kctx *k = ctx;

	return getsockopt(k->fd[slot], level, name, val, len) ? errno : 0;
}

/* ---------------------------------------------------------------- the traffic rule */

/* An IP address as the route lookup takes it: v4-mapped becomes IPv4; its scope id. */
struct naddr {
	int family;
	uint8_t a[16];
	uint32_t scope;
	bool mapped; /* written as v4-mapped on an AF_INET6 socket */
};

static void norm(const struct sockaddr_storage *ss, struct naddr *n)
{
	memset(n, 0, sizeof(*n));
	if (ss->ss_family == AF_INET) {
		n->family = AF_INET;
		memcpy(n->a, &((const struct sockaddr_in *)ss)->sin_addr, 4);
		return;
	}
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

	if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		n->family = AF_INET;
		n->mapped = true;
		memcpy(n->a, &s6->sin6_addr.s6_addr[12], 4);
		return;
	}
	n->family = AF_INET6;
	memcpy(n->a, &s6->sin6_addr, 16);
	n->scope = s6->sin6_scope_id;
}

static bool n_wild(const struct naddr *n)
{
	static const uint8_t zero[16];

	return !memcmp(n->a, zero, n->family == AF_INET ? 4 : 16);
}

static bool n_loopback(const struct naddr *n)
{
	return n->family == AF_INET ? n->a[0] == 127
				    : IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)n->a);
}

static bool n_linklocal(const struct naddr *n)
{
	return n->family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL((const struct in6_addr *)n->a);
}

static const char *n_str(const struct naddr *n, char *buf, size_t cap)
{
	if (!inet_ntop(n->family, n->a, buf, (socklen_t)cap))
		snprintf(buf, cap, "?");
	return buf;
}

static int sock_dev(int fd)
{
	int v = 0;
	socklen_t l = sizeof(v);

	return getsockopt(fd, SOL_SOCKET, SO_BINDTOIFINDEX, &v, &l) ? 0 : v;
}

static bool sock_transparent(int fd, int family)
{
	int v = 0;
	socklen_t l = sizeof(v);

	if (family == AF_INET6)
		getsockopt(fd, IPPROTO_IPV6, IPV6_TRANSPARENT, &v, &l);
	else
		getsockopt(fd, IPPROTO_IP, IP_TRANSPARENT, &v, &l);
	return v != 0;
}

/* The type of the kernel's route to @n through @oif (RTN_*), or -1 when there is none. */
static int route_type(const struct naddr *n, int oif)
{
	struct rp_nl_route rt;

	return rp_nl_route_get(n->family, n->a, oif, false, &rt) ? -1 : rt.type;
}

/* The device that holds the local address @n (seen through @oif): the ifindex, or 0. */
static int holder(const struct naddr *n, int oif)
{
	struct rp_nl_route rt;

	if (rp_nl_route_get(n->family, n->a, oif, true, &rt) || rt.type != RTN_LOCAL)
		return 0;
	return rt.oif;
}

static void record(struct kctx *k, const struct naddr *n, int ifindex)
{
	struct taddr t = { .family = n->family, .ifindex = n_linklocal(n) ? ifindex : 0 };

	if (n_wild(n))
		return;
	memcpy(t.a, n->a, 16);
	for (int i = 0; i < k->ntcp_addrs; i++)
		if (!memcmp(&k->tcp_addrs[i], &t, sizeof(t)))
			return;
	k->tcp_addrs = realloc(k->tcp_addrs, sizeof(t) * (size_t)(k->ntcp_addrs + 1));
	if (!k->tcp_addrs)
		_exit(3);
	k->tcp_addrs[k->ntcp_addrs++] = t;
}

/* A TCP connect: its destination, and both ends once it ran, may not be removed later. */
static void record_tcp(struct kctx *k, int slot, const struct sockaddr *dst)
{
	struct sockaddr_storage ss;
	socklen_t l;
	struct naddr n;
	int dev = sock_dev(k->fd[slot]);

	if (dst) {
		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, dst, dst->sa_family == AF_INET ? sizeof(struct sockaddr_in)
							    : sizeof(struct sockaddr_in6));
		norm(&ss, &n);
		record(k, &n, n.scope ? (int)n.scope : dev);
	}
	l = sizeof(ss);
	if (!getsockname(k->fd[slot], (struct sockaddr *)&ss, &l)) {
		norm(&ss, &n);
		record(k, &n, n.scope ? (int)n.scope : dev);
	}
	l = sizeof(ss);
	if (!getpeername(k->fd[slot], (struct sockaddr *)&ss, &l)) {
		norm(&ss, &n);
		record(k, &n, n.scope ? (int)n.scope : dev);
	}
}

/*
 * The traffic rule for a statement of socket @slot that can send toward @dst (NULL: the
 * connected peer): 0 when every packet it can cause stays in the namespace, else RP_ESCRIPT.
 * @tcp_connect: a TCP connect or fastopen, whose peer answers on its own (SYN-ACK, RST).
 *
 * - A bound source that is not local (FREEBIND, TRANSPARENT, ip_nonlocal_bind, or an address
 *   removed since) may only be IPv4 or v4-mapped without TRANSPARENT: the IPv4 output route then
 *   fails the flow with ENETUNREACH before anything is sent (R88). A broadcast bind leaves the
 *   kernel's source unset, so the route picks the source as for a wildcard.
 * - The destination: a wildcard (the kernel rewrites it to a local address), a loopback address
 *   when the socket has no device, or one whose route through the socket's device (a link-local
 *   destination's scope, if it has one) is `local` or does not exist (the kernel fails the call).
 * - TCP with an explicit source: the peer's replies leave the destination's device toward that
 *   source, so that route must be local too. A reply through lo loops back whatever its route.
 */
static int traffic_check(struct kctx *k, int slot, const struct sockaddr *dst, bool tcp_connect)
{
	int fd = k->fd[slot], dev = sock_dev(fd), oif, type, dd, family;
	struct sockaddr_storage ss;
	struct naddr src, d;
	socklen_t l = sizeof(ss);
	bool explicit_src = false;
	char b1[64], b2[64];

	if (getsockname(fd, (struct sockaddr *)&ss, &l))
		return 0; /* no socket to send with: the call fails */
	family = ss.ss_family;
	norm(&ss, &src);
	if (dst) {
		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, dst, dst->sa_family == AF_INET ? sizeof(struct sockaddr_in)
							    : sizeof(struct sockaddr_in6));
	} else {
		l = sizeof(ss);
		if (getpeername(fd, (struct sockaddr *)&ss, &l))
			return 0; /* not connected: send() fails without sending */
	}
	if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)
		return 0; /* AF_UNSPEC and others: the kernel refuses them */
	norm(&ss, &d);
	if (!n_wild(&src)) {
		int st = route_type(&src, n_linklocal(&src) ? (src.scope ? (int)src.scope : dev) : 0);

		if (st == RTN_LOCAL) {
			explicit_src = true;
		} else {
			bool v4 = src.family == AF_INET && (!src.mapped || d.family == AF_INET);

			if (!v4 || sock_transparent(fd, family))
				return rp_script_error("traffic rule: source %s is not local",
						       n_str(&src, b1, sizeof(b1)));
			if (st != RTN_BROADCAST && st != RTN_MULTICAST)
				return 0; /* the IPv4 output route fails it: ENETUNREACH */
		}
	}
	if (n_wild(&d))
		return 0;
	if (n_loopback(&d) && !dev)
		return 0;
	oif = n_linklocal(&d) && d.scope ? (int)d.scope : dev;
	type = route_type(&d, oif);
	if (type < 0)
		return 0; /* no route: the kernel fails the call */
	if (type != RTN_LOCAL)
		return rp_script_error("traffic rule: %s is not local through %s", n_str(&d, b1, sizeof(b1)),
				       oif ? "the socket's device" : "any device");
	if (!tcp_connect || !explicit_src)
		return 0;
	dd = holder(&d, oif);
	if (dd == 1)
		return 0; /* replies leave through lo: they loop back */
	if (!dd || route_type(&src, dd) != RTN_LOCAL)
		return rp_script_error("traffic rule: replies from %s cannot reach the source %s",
				       n_str(&d, b1, sizeof(b1)), n_str(&src, b2, sizeof(b2)));
	return 0;
}

static int k_bind(void *ctx, int slot, const struct sockaddr *sa, socklen_t len)
{
	struct kctx *k = ctx;

	return bind(k->fd[slot], sa, len) ? errno : 0;
}

static int k_listen(void *ctx, int slot, int backlog)
{
	struct kctx *k = ctx;

	return listen(k->fd[slot], backlog) ? errno : 0;
}

/*
 * Finish a non-blocking connect like a blocking one: wait for it (EINPROGRESS after the timeout),
 * then call connect() again. The second call is what a blocking connect() does on wake-up: it
 * marks the socket connected (so a third connect() gives EISCONN, not 0) or, on failure, returns
 * the pending error and resets the socket to unconnected (reading SO_ERROR instead would leave it
 * "connecting", and the next connect() would give ECONNABORTED).
 */
static int wait_connected(int fd, const struct sockaddr *sa, socklen_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	if (poll(&p, 1, rp_connect_wait_ms()) == 0)
		return EINPROGRESS;
	if (!connect(fd, sa, len) || errno == EISCONN)
		return 0;
	return errno;
}

static int k_connect(void *ctx, int slot, const struct sockaddr *sa, socklen_t len)
{
	struct kctx *k = ctx;
	int fd = k->fd[slot], err;

	/* a UDP connect sends nothing; a TCP one is checked, and its addresses kept */
	if (fd >= 0 && !k->udp[slot] && sa->sa_family != AF_UNSPEC) {
		if ((err = traffic_check(k, slot, sa, true)))
			return err;
		err = connect(fd, sa, len) ? errno : 0;
		if (err == EINPROGRESS)
			err = wait_connected(fd, sa, len);
		record_tcp(k, slot, sa);
		return err;
	}
	if (!connect(fd, sa, len))
		return 0;
	if (errno != EINPROGRESS || sa->sa_family == AF_UNSPEC)
		return errno;
	return wait_connected(fd, sa, len);
}

static int k_accept(void *ctx, int slot, int newslot)
{
	struct kctx *k = ctx;
	struct pollfd p = { .fd = k->fd[slot], .events = POLLIN };
	int fd;

	poll(&p, 1, rp_fast_waits ? 50 : 1000);
	fd = accept4(k->fd[slot], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return errno;
	k->fd[newslot] = fd;
	k->udp[newslot] = false;
	return 0;
}

static void k_payload(void *ctx, const void *data, size_t len)
{
	((struct kctx *)ctx)->payload = data;
	((struct kctx *)ctx)->payload_len = len;
}

static int k_sendto(void *ctx, int slot, const struct sockaddr *sa, socklen_t len)
{
	struct kctx *k = ctx;
	const void *d = k->payload ? k->payload : "x";
	size_t n = k->payload ? k->payload_len : 1;
	ssize_t r;
	int err;

	/* TCP sends to its peer whatever address sendto() names: both are checked */
	if (k->fd[slot] >= 0 && ((err = traffic_check(k, slot, sa, false)) ||
				 (sa && !k->udp[slot] && (err = traffic_check(k, slot, NULL, false)))))
		return err;
	r = sa ? sendto(k->fd[slot], d, n, MSG_NOSIGNAL | MSG_DONTWAIT, sa, len)
	       : send(k->fd[slot], d, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	return r < 0 ? errno : 0;
}

static int k_fastopen(void *ctx, int slot, const struct sockaddr *sa, socklen_t len)
{
	struct kctx *k = ctx;
	int fd = k->fd[slot], err;

	if (fd >= 0 && (err = traffic_check(k, slot, sa, !k->udp[slot])))
		return err;
	if (sendto(fd, "", 0, MSG_FASTOPEN | MSG_NOSIGNAL, sa, len) >= 0)
		err = 0;
	else if (errno != EINPROGRESS)
		err = errno;
	else
		err = wait_connected(fd, sa, len);
	if (fd >= 0 && !k->udp[slot])
		record_tcp(k, slot, sa);
	return err;
}

static int k_close(void *ctx, int slot)
{
	struct kctx *k = ctx;
	int r = close(k->fd[slot]);

	k->fd[slot] = -1;
	return r ? errno : 0;
}

static int k_getsockname(void *ctx, int slot, struct sockaddr_storage *ss)
{
	struct kctx *k = ctx;
	socklen_t l = sizeof(*ss);

	return getsockname(k->fd[slot], (struct sockaddr *)ss, &l) ? errno : 0;
}

static int k_getpeername(void *ctx, int slot, struct sockaddr_storage *ss)
{
	struct kctx *k = ctx;
	socklen_t l = sizeof(*ss);

	return getpeername(k->fd[slot], (struct sockaddr *)ss, &l) ? errno : 0;
}

static int k_state(void *ctx, int slot, int *state)
{
	struct kctx *k = ctx;
	struct tcp_info ti;
	socklen_t l = sizeof(ti);

	if (getsockopt(k->fd[slot], IPPROTO_TCP, TCP_INFO, &ti, &l))
		return errno;
	*state = ti.tcpi_state;
	return 0;
}

static int k_readable(void *ctx, const int *slots, int n, int expect, int *count)
{
	struct kctx *k = ctx;
	struct pollfd p[256];
	uint64_t deadline = now_ms() + (uint64_t)ms_wait(expect);

	for (int i = 0; i < n && i < 256; i++)
		p[i] = (struct pollfd){ .fd = k->fd[slots[i]], .events = POLLIN };
	for (;;) {
		int c = 0;
		uint64_t now;

		poll(p, (nfds_t)n, 0);
		for (int i = 0; i < n; i++)
			c += !!(p[i].revents & POLLIN);
		*count = c;
		now = now_ms();
		if (c == expect || now >= deadline)
			return 0;
		/* a short sleep between samples: delivery on lo takes microseconds */
		poll(NULL, 0, deadline - now < 10 ? (int)(deadline - now) : 10);
	}
}

/* ---------------------------------------------------------------- devices and addresses */

static int write_proc(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, value, strlen(value)) < 0)
		err = errno;
	close(fd);
	return err;
}

/* A device that drops what it sends, configured as the format's dummy: up, NOARP, no IPv6
 * address of its own (addrgenmode none, set while it is still down) and no router
 * solicitations. */
static int dummy_add(const char *name)
{
	char path[128];
	int err, idx;

	if ((err = rp_nl_link_add(name, dummy_kind)))
		return err;
	idx = (int)if_nametoindex(name);
	if (!idx) {
		err = rp_script_error("link add %s: the new device has no ifindex", name);
		goto undo;
	}
	if ((err = rp_nl_link_addrgenmode(idx, IN6_ADDR_GEN_MODE_NONE))) {
		err = rp_script_error("link add %s: addrgenmode none: %s", name, strerror(err));
		goto undo;
	}
	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/router_solicitations", name);
	if ((err = write_proc(path, "0\n")) == 0) {
		snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", name);
		err = write_proc(path, "0\n");
	}
	if (err) {
		err = rp_script_error("link add %s: IPv6 settings: %s", name, strerror(err));
		goto undo;
	}
	if ((err = rp_nl_link_flags(name, IFF_UP | IFF_NOARP, IFF_UP | IFF_NOARP))) {
		err = rp_script_error("link add %s: up: %s", name, strerror(err));
		goto undo;
	}
	return 0;
undo:
	rp_nl_link_del(name);
	return err;
}

/* Does one of device @ifindex's addresses (of @family, 0 for both) appear in a TCP connection? */
struct used_arg {
	const struct kctx *k;
	int ifindex, family;
	bool used;
	char what[64];
};

static void used_addr(void *arg, int family, const void *addr)
{
	struct used_arg *U = arg;

	if (U->used || (U->family && family != U->family))
		return;
	for (int i = 0; i < U->k->ntcp_addrs; i++) {
		const struct taddr *t = &U->k->tcp_addrs[i];

		if (t->family != family || memcmp(t->a, addr, family == AF_INET ? 4 : 16) ||
		    (t->ifindex && t->ifindex != U->ifindex))
			continue;
		U->used = true;
		inet_ntop(family, addr, U->what, sizeof(U->what));
		return;
	}
}

/*
 * The traffic rule's last part: an address that took part in a TCP connection may not go away,
 * or a later FIN, retransmission or reply could be routed out of the namespace. @addr NULL: the
 * whole device (link down, link del); an IPv4 @addr: every IPv4 address of the device (its
 * secondaries may go with it); an IPv6 @addr: that address.
 */
static int removal_check(struct kctx *k, const char *what, const char *dev, int family,
			 const void *addr)
{
	struct used_arg U = { .k = k, .ifindex = (int)if_nametoindex(dev), .family = family };

	if (!U.ifindex)
		return 0; /* no such device: the kernel answers ENODEV */
	if (family == AF_INET6)
		used_addr(&U, AF_INET6, addr);
	else
		rp_nl_addrs(U.ifindex, used_addr, &U);
	if (U.used)
		return rp_script_error("traffic rule: %s %s: %s took part in a TCP connection",
				       what, dev, U.what);
	return 0;
}

static int k_link(void *ctx, enum rp_linkop what, const char *dev)
{
	struct kctx *k = ctx;
	int err;

	switch (what) {
	case RP_LINK_ADD:
		return dummy_add(dev);
	case RP_LINK_UP:
		return rp_nl_link_flags(dev, IFF_UP, IFF_UP);
	case RP_LINK_DOWN:
		if ((err = removal_check(k, "link set down", dev, 0, NULL)))
			return err;
		return rp_nl_link_flags(dev, 0, IFF_UP);
	case RP_LINK_DEL:
		if ((err = removal_check(k, "link del", dev, 0, NULL)))
			return err;
		return rp_nl_link_del(dev);
	}
	return EINVAL;
}

static int k_addr_change(void *ctx, int add, const struct rp_addr *a, int plen, const char *dev)
{
	struct kctx *k = ctx;
	int idx = (int)if_nametoindex(dev), err;
	struct rp_nl_route rt;
	uint64_t deadline;

	if (!idx)
		return ENODEV;
	if (!add) {
		if ((err = removal_check(k, "addr del on", dev, a->family, a->bytes)))
			return err;
		return rp_nl_addr(0, a->family, a->bytes, plen, idx, 0);
	}
	err = rp_nl_addr(1, a->family, a->bytes, plen, idx, a->family == AF_INET6 ? IFA_F_NODAD : 0);
	if (err || a->family == AF_INET)
		return err;
	/* IPv6: the local route comes from deferred work (addrconf_dad_completed) moments after the
	 * request returned; the address is usable once it is there. */
	deadline = now_ms() + 2000;
	while (rp_nl_route_get(AF_INET6, a->bytes, idx, true, &rt) || rt.type != RTN_LOCAL ||
	       rt.oif != idx) {
		if (now_ms() >= deadline)
			return rp_script_error("addr add: no local route for the address after 2 s");
		poll(NULL, 0, 1);
	}
	return 0;
}

static int k_dev_index(void *ctx, const char *dev)
{
	int idx = (int)if_nametoindex(dev);

	(void)ctx;
	return idx ? idx : -ENODEV;
}

/* cpu N: pin the case's process to CPU N, as the kernel's so_incoming_cpu selftest pins its
 * client. A loopback packet is received in the sender's softirq, on the sender's CPU, so every
 * lookup the following statements cause runs there. */
static int k_set_cpu(void *ctx, int cpu)
{
	cpu_set_t set;

	(void)ctx;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? errno : 0;
}

static const struct rp_backend kernel_backend = {
	.name = "kernel",
	.sysctl = k_sysctl,
	.socket = k_socket,
	.setsockopt = k_setsockopt,
	.getsockopt = k_getsockopt,
	.bind = k_bind,
	.listen = k_listen,
	.connect = k_connect,
	.accept = k_accept,
	.sendto = k_sendto,
	.payload = k_payload,
	.fastopen = k_fastopen,
	.close = k_close,
	.getsockname = k_getsockname,
	.getpeername = k_getpeername,
	.state = k_state,
	.readable = k_readable,
	.link = k_link,
	.addr_change = k_addr_change,
	.dev_index = k_dev_index,
	.set_cpu = k_set_cpu,
};

/* A fresh namespace holds only lo, and it is down: bring it up (it then owns 127/8 and ::1). */
static int lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		err = errno;
	} else {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
			err = errno;
	}
	close(fd);
	return err;
}

static void pipe_emit(void *arg, const struct rp_outcome *o)
{
	int fd = *(int *)arg;
	const char *p = (const char *)o;
	size_t left = sizeof(*o);

	while (left) {
		ssize_t w = write(fd, p, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(5); /* the parent is gone */
		p += w;
		left -= (size_t)w;
	}
}

int rp_kernel_probe(void)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(unshare(CLONE_NEWNET) ? (errno & 0xff ? errno & 0xff : 1) : 0);
	if (waitpid(pid, &st, 0) < 0)
		return errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : EPERM;
}

/*
 * The probes, each run in a child inside a fresh namespace: exit 1 when the kernel has the
 * variant, 0 when not, 2 when the probe could not run or the answer is neither.
 */

/* R104: listen, disconnect, connect to a closed port: EINVAL (role lock) or ECONNREFUSED. */
static int probe_role_lock(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(1),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr un = { .sa_family = AF_UNSPEC };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || listen(fd, 1) || connect(fd, &un, sizeof(un)))
		return 2;
	if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
		return 2;
	return errno == EINVAL ? 1 : errno == ECONNREFUSED ? 0 : 2;
}

/* A UDP socket on 127.0.0.1:@port with SO_REUSEADDR @ra and SO_REUSEPORT @rp: 0 bound,
 * else the errno of bind() (-1 when a call before it failed). */
static int probe_udp_bind(int ra, int rp, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &ra, sizeof(ra)) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &rp, sizeof(rp)))
		return -1;
	return bind(fd, (struct sockaddr *)&a, sizeof(a)) ? errno : 0;
}

/* R103: {REUSEADDR}, then {REUSEADDR, REUSEPORT} (met first in the port chain), then a
 * {REUSEPORT} bind: EADDRINUSE when every overlapping owner must excuse it, ok when the first
 * decides. */
static int probe_udp_bind_all_owners(void)
{
	int r;

	if (probe_udp_bind(1, 0, 6000) || probe_udp_bind(1, 1, 6000))
		return 2;
	r = probe_udp_bind(0, 1, 6000);
	return r == EADDRINUSE ? 1 : r == 0 ? 0 : 2;
}

/* R103: {REUSEPORT} a and b on 127.0.0.1, a's SO_REUSEPORT cleared, then a {REUSEPORT} bind
 * there: b, met first, is the group the new socket would join; ok when that ends the scan,
 * EADDRINUSE when a must excuse the bind too. */
static int probe_udp_bind_mate_stops(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(6000),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int zero = 0, one = 1, r, fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) || probe_udp_bind(0, 1, 6000) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &zero, sizeof(zero)))
		return 2;
	r = probe_udp_bind(0, 1, 6000);
	return r == 0 ? 1 : r == EADDRINUSE ? 0 : 2;
}

/* R108: SO_ATTACH_REUSEPORT_CBPF on a reuseport TCP socket that listened and was disconnected:
 * EINVAL, or ok (a group of its own). */
static int probe_cbpf_listened(void)
{
	struct sock_filter ret0 = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog prog = { .len = 1, .filter = &ret0 };
	struct sockaddr un = { .sa_family = AF_UNSPEC };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    listen(fd, 1) || connect(fd, &un, sizeof(un)))
		return 2;
	if (!setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)))
		return 0;
	return errno == EINVAL ? 1 : 2;
}

int rp_kernel_variant(int kv)
{
	static int (*const probe[SOCKTAB_KV_COUNT])(void) = {
		[SOCKTAB_KV_ROLE_LOCK] = probe_role_lock,
		[SOCKTAB_KV_UDP_BIND_ALL_OWNERS] = probe_udp_bind_all_owners,
		[SOCKTAB_KV_CBPF_LISTENED] = probe_cbpf_listened,
		[SOCKTAB_KV_UDP_BIND_MATE_STOPS] = probe_udp_bind_mate_stops,
	};
	static int known[SOCKTAB_KV_COUNT];
	pid_t pid;
	int st;

	if (kv < 0 || kv >= SOCKTAB_KV_COUNT || !probe[kv])
		return -1;
	if (known[kv])
		return known[kv] - 2;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(unshare(CLONE_NEWNET) || lo_up() ? 2 : probe[kv]());
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	known[kv] = (WIFEXITED(st) && WEXITSTATUS(st) < 2 ? WEXITSTATUS(st) : -1) + 2;
	return known[kv] - 2;
}

static bool case_adds_links(const struct rp_case *c)
{
	for (int i = 0; i < c->nops; i++)
		if (c->ops[i].kind == RP_LINK && c->ops[i].ival[0] == RP_LINK_ADD)
			return true;
	return false;
}

/* "dummy" when this kernel can make one in a new namespace, else "ifb" (6.18.44 of the project
 * machine has no CONFIG_DUMMY). Tried once, in a throwaway child and namespace. */
static const char *probe_dummy_kind(void)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return "ifb";
	if (pid == 0)
		_exit(unshare(CLONE_NEWNET) || rp_nl_link_add("probe0", "dummy") ? 1 : 0);
	if (waitpid(pid, &st, 0) < 0)
		return "ifb";
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "dummy" : "ifb";
}

int rp_kernel_run_case(const struct rp_script *s, const struct rp_case *c, rp_emit_fn emit,
		       void *arg)
{
	int p[2], st;
	pid_t pid;
	struct rp_outcome o;
	size_t have = 0;

	if (!dummy_kind && case_adds_links(c))
		dummy_kind = probe_dummy_kind();
	if (pipe2(p, O_CLOEXEC)) {
		perror("socktab replay: pipe");
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("socktab replay: fork");
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		struct kctx k;

		close(p[0]);
		signal(SIGPIPE, SIG_IGN);
		if (unshare(CLONE_NEWNET) || lo_up())
			_exit(3);
		memset(&k, 0, sizeof(k));
		k.nslot = s->nnames + 1;
		k.fd = malloc(sizeof(int) * (size_t)k.nslot);
		k.udp = calloc((size_t)k.nslot, sizeof(bool));
		if (!k.fd || !k.udp)
			_exit(3);
		for (int i = 0; i < k.nslot; i++)
			k.fd[i] = -1;
		rp_exec_case(s, c, &kernel_backend, &k, pipe_emit, &p[1]);
		/* _exit: no atexit handlers or stdio flushes of the parent's state in the child;
		 * the namespace goes away with its last process. */
		_exit(0);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		ssize_t r;

		/* No op takes longer than ~3 s (sleep 3000, connect 2 s): a child silent for
		 * 15 s is stuck and is killed. */
		if (poll(&pf, 1, 15000) <= 0) {
			fprintf(stderr, "socktab replay: kernel runner for case %s timed out\n",
				c->name);
			kill(pid, SIGKILL);
			break;
		}
		r = read(p[0], (char *)&o + have, sizeof(o) - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		if (have == sizeof(o)) {
			emit(arg, &o);
			have = 0;
		}
	}
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3) {
		fprintf(stderr, "socktab replay: case %s: cannot set up a network namespace\n",
			c->name);
		return -1;
	}
	return 0;
}
