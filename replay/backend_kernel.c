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
 * transmit.
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

struct kctx {
	int *fd; /* slot -> fd, -1 when none; a replaced fd stays open until the child exits */
	bool *udp; /* slot -> a datagram socket */
	int nslot;
};

/* The rtnl kind of a script's dummy device: "dummy", or "ifb" on a kernel without the dummy
 * driver. Decided once, in the parent, before the first case that needs it is forked. */
static const char *dummy_kind;

static int ms_connect(void)
{
	return rp_fast_waits ? 200 : 2000;
}

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

	if (poll(&p, 1, ms_connect()) == 0)
		return EINPROGRESS;
	if (!connect(fd, sa, len) || errno == EISCONN)
		return 0;
	return errno;
}

static int k_connect(void *ctx, int slot, const struct sockaddr *sa, socklen_t len)
{
	struct kctx *k = ctx;
	int fd = k->fd[slot];

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

static int k_sendto(void *ctx, int slot, const struct sockaddr *sa, socklen_t len)
{
	struct kctx *k = ctx;
	ssize_t r = sa ? sendto(k->fd[slot], "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT, sa, len)
		       : send(k->fd[slot], "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT);

	return r < 0 ? errno : 0;
}

static int k_fastopen(void *ctx, int slot, const struct sockaddr *sa, socklen_t len)
{
	struct kctx *k = ctx;
	int fd = k->fd[slot];

	if (sendto(fd, "", 0, MSG_FASTOPEN | MSG_NOSIGNAL, sa, len) >= 0)
		return 0;
	if (errno != EINPROGRESS)
		return errno;
	return wait_connected(fd, sa, len);
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

static int k_link(void *ctx, enum rp_linkop what, const char *dev)
{
	(void)ctx;
	switch (what) {
	case RP_LINK_ADD:
		return dummy_add(dev);
	case RP_LINK_UP:
		return rp_nl_link_flags(dev, IFF_UP, IFF_UP);
	case RP_LINK_DOWN:
		return rp_nl_link_flags(dev, 0, IFF_UP);
	case RP_LINK_DEL:
		return rp_nl_link_del(dev);
	}
	return EINVAL;
}

static int k_addr_change(void *ctx, int add, const struct rp_addr *a, int plen, const char *dev)
{
	int idx = (int)if_nametoindex(dev), err;
	struct rp_nl_route rt;
	uint64_t deadline;

	if (!idx)
		return ENODEV;
	(void)ctx;
	if (!add)
		return rp_nl_addr(0, a->family, a->bytes, plen, idx, 0);
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
	.fastopen = k_fastopen,
	.close = k_close,
	.getsockname = k_getsockname,
	.getpeername = k_getpeername,
	.state = k_state,
	.readable = k_readable,
	.link = k_link,
	.addr_change = k_addr_change,
	.dev_index = k_dev_index,
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
