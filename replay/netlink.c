/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab replay: a minimal rtnetlink client for the kernel backend (netlink.h). Requests are
 * built in a fixed buffer, sent with NLM_F_ACK, and answered synchronously: the replies to our
 * sequence number are handed to a callback until the ACK (or the error) or, for a dump, until
 * NLMSG_DONE arrives. One socket per process, opened on first use in the calling process: the
 * kernel backend forks a child per case and moves it into a fresh namespace first, and a netlink
 * socket stays in the namespace it was created in.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "netlink.h"

static int nl_fd = -1;
static pid_t nl_pid;
static uint32_t nl_seq;

/* The netlink socket of this process (a forked child does not use its parent's). */
static int nl_sock(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (nl_fd >= 0 && nl_pid == getpid())
		return nl_fd;
	if (nl_fd >= 0)
		close(nl_fd);
	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl_fd < 0)
		return -1;
	if (bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(nl_fd);
		nl_fd = -1;
		return -1;
	}
	nl_pid = getpid();
	return nl_fd;
}

/* A request under construction: the header, the family header, then attributes. */
struct req {
	union {
		struct nlmsghdr h;
		char buf[1024];
	} u;
};

static void *req_init(struct req *r, int type, int flags, size_t famlen)
{
	memset(r, 0, sizeof(*r));
	r->u.h.nlmsg_len = (uint32_t)NLMSG_LENGTH(famlen);
	r->u.h.nlmsg_type = (uint16_t)type;
	r->u.h.nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
	return NLMSG_DATA(&r->u.h);
}

static struct rtattr *add_attr(struct req *r, int type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)(r->u.buf + NLMSG_ALIGN(r->u.h.nlmsg_len));

	a->rta_type = (unsigned short)type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	r->u.h.nlmsg_len = (uint32_t)(NLMSG_ALIGN(r->u.h.nlmsg_len) + RTA_ALIGN(a->rta_len));
	return a;
}

/* A nested attribute: opened empty, closed by end_nest() once its members were added. */
static struct rtattr *begin_nest(struct req *r, int type)
{
	return add_attr(r, type, NULL, 0);
}

static void end_nest(struct req *r, struct rtattr *nest)
{
	nest->rta_len = (unsigned short)(r->u.buf + r->u.h.nlmsg_len - (char *)nest);
}

typedef void (*reply_fn)(void *arg, const struct nlmsghdr *h);

/*
 * Send @r and read the answers: each message of our sequence number other than the final one is
 * passed to @fn. Returns 0, or the errno the kernel answered (or that a socket call failed with).
 */
static int transact(struct req *r, reply_fn fn, void *arg)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	/* NLM_F_DUMP is two bits, and NLM_F_EXCL shares one of them: a dump is a GET with both */
	bool dump = r->u.h.nlmsg_type % 4 == 2 &&
		    (r->u.h.nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
	int fd = nl_sock();
	char buf[65536];

	if (fd < 0)
		return errno;
	r->u.h.nlmsg_seq = ++nl_seq;
	if (!dump)
		r->u.h.nlmsg_flags |= NLM_F_ACK;
	if (sendto(fd, r, r->u.h.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return errno;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != nl_seq)
				continue; /* a late answer to an earlier request */
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				return -e->error;
			}
			if (fn)
				fn(arg, h);
		}
	}
}

int rp_nl_link_add(const char *name, const char *kind)
{
	struct req r;
	struct rtattr *li;

	req_init(&r, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, sizeof(struct ifinfomsg));
	add_attr(&r, IFLA_IFNAME, name, strlen(name) + 1);
	li = begin_nest(&r, IFLA_LINKINFO);
	add_attr(&r, IFLA_INFO_KIND, kind, strlen(kind));
	end_nest(&r, li);
	return transact(&r, NULL, NULL);
}

int rp_nl_link_flags(const char *name, unsigned flags, unsigned change)
{
	struct req r;
	struct ifinfomsg *ifi = req_init(&r, RTM_NEWLINK, 0, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_flags = flags;
	ifi->ifi_change = change;
	add_attr(&r, IFLA_IFNAME, name, strlen(name) + 1);
	return transact(&r, NULL, NULL);
}

int rp_nl_link_addrgenmode(int ifindex, int mode)
{
	struct req r;
	struct ifinfomsg *ifi = req_init(&r, RTM_NEWLINK, 0, sizeof(*ifi));
	struct rtattr *af, *in6;
	uint8_t m = (uint8_t)mode;

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	af = begin_nest(&r, IFLA_AF_SPEC);
	in6 = begin_nest(&r, AF_INET6);
	add_attr(&r, IFLA_INET6_ADDR_GEN_MODE, &m, 1);
	end_nest(&r, in6);
	end_nest(&r, af);
	return transact(&r, NULL, NULL);
}

int rp_nl_link_del(const char *name)
{
	struct req r;
	struct ifinfomsg *ifi = req_init(&r, RTM_DELLINK, 0, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	add_attr(&r, IFLA_IFNAME, name, strlen(name) + 1);
	return transact(&r, NULL, NULL);
}

int rp_nl_addr(int add, int family, const void *addr, int plen, int ifindex, unsigned ifa_flags)
{
	size_t alen = family == AF_INET ? 4 : 16;
	struct req r;
	struct ifaddrmsg *ifa = req_init(&r, add ? RTM_NEWADDR : RTM_DELADDR,
					 add ? NLM_F_CREATE | NLM_F_EXCL : 0, sizeof(*ifa));

	ifa->ifa_family = (uint8_t)family;
	ifa->ifa_prefixlen = (uint8_t)plen;
	ifa->ifa_index = (uint32_t)ifindex;
	ifa->ifa_flags = (uint8_t)ifa_flags;
	add_attr(&r, IFA_LOCAL, addr, alen);
	add_attr(&r, IFA_ADDRESS, addr, alen);
	if (add && ifa_flags)
		add_attr(&r, IFA_FLAGS, &ifa_flags, sizeof(ifa_flags));
	return transact(&r, NULL, NULL);
}

struct addrs_arg {
	int ifindex;
	void (*fn)(void *arg, int family, const void *addr);
	void *arg;
};

static void addrs_reply(void *arg, const struct nlmsghdr *h)
{
	const struct addrs_arg *A = arg;
	const struct ifaddrmsg *ifa = NLMSG_DATA(h);
	const struct rtattr *a = IFA_RTA(ifa);
	int len = (int)IFA_PAYLOAD(h);
	const void *local = NULL, *address = NULL;

	if (h->nlmsg_type != RTM_NEWADDR || (int)ifa->ifa_index != A->ifindex)
		return;
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == IFA_LOCAL)
			local = RTA_DATA(a);
		else if (a->rta_type == IFA_ADDRESS)
			address = RTA_DATA(a);
	}
	/* IPv4 puts the address in IFA_LOCAL (IFA_ADDRESS is the peer on point-to-point links),
	 * IPv6 only in IFA_ADDRESS */
	if (local || address)
		A->fn(A->arg, ifa->ifa_family, local ? local : address);
}

int rp_nl_addrs(int ifindex, void (*fn)(void *arg, int family, const void *addr), void *arg)
{
	struct addrs_arg A = { ifindex, fn, arg };
	struct req r;
	struct ifaddrmsg *ifa = req_init(&r, RTM_GETADDR, NLM_F_DUMP, sizeof(*ifa));

	ifa->ifa_family = AF_UNSPEC;
	return transact(&r, addrs_reply, &A);
}

static void route_reply(void *arg, const struct nlmsghdr *h)
{
	struct rp_nl_route *rt = arg;
	const struct rtmsg *rtm = NLMSG_DATA(h);
	const struct rtattr *a = RTM_RTA(rtm);
	int len = (int)RTM_PAYLOAD(h);

	if (h->nlmsg_type != RTM_NEWROUTE)
		return;
	rt->type = rtm->rtm_type;
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == RTA_OIF)
			memcpy(&rt->oif, RTA_DATA(a), sizeof(rt->oif));
}

int rp_nl_route_get(int family, const void *dst, int oif, bool fibmatch, struct rp_nl_route *rt)
{
	size_t alen = family == AF_INET ? 4 : 16;
	struct req r;
	struct rtmsg *rtm = req_init(&r, RTM_GETROUTE, 0, sizeof(*rtm));

	memset(rt, 0, sizeof(*rt));
	rt->type = -1;
	rtm->rtm_family = (unsigned char)family;
	rtm->rtm_dst_len = (unsigned char)(alen * 8);
	if (fibmatch)
		rtm->rtm_flags = RTM_F_FIB_MATCH;
	add_attr(&r, RTA_DST, dst, alen);
	if (oif)
		add_attr(&r, RTA_OIF, &oif, sizeof(oif));
	return transact(&r, route_reply, rt);
}
