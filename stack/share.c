/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `socktab serve --xdp DEV` on a device whose address the kernel holds too: the kernel keeps
 * ARP, neighbour discovery, ICMP and its own ports; the stack gets only its own flows.
 *
 *   steering   bpf/steer.bpf.c on the device instead of libxdp's default program: a TCP or
 *              UDP frame whose destination socktab owns goes to the AF_XDP socket of its queue,
 *              everything else to the kernel. Its map of owned keys is written by the port feed
 *              (socktab/feed.h) before socktab takes a port, so it is never behind a segment the
 *              stack sends (a SYN of connect(), a SYN-ACK).
 *   one port space
 *              - every key socktab claims is also bound in the kernel by a placeholder socket
 *                (same protocol, address and port; never listening, never read): a kernel
 *                bind() there gets EADDRINUSE, and the kernel's connect() walk passes over the
 *                port as one a bind() holds;
 *              - a claim whose placeholder cannot bind because a kernel socket holds the port
 *                is refused: socktab's bind() gets EADDRINUSE, its bind(0) and UDP autobind
 *                walk on;
 *              - the ephemeral ranges are split at start: the kernel keeps the lower half of its
 *                net.ipv4.ip_local_port_range, socktab's connect() the upper half, so neither
 *                side's connect() picks a port the other is choosing at the same moment;
 *              - the ports of socktab's half that kernel sockets hold at start (a kernel server
 *                on a high port, read from /proc/net/{tcp,udp}{,6}) are reserved in socktab's
 *                net, so its connect() and bind(0) never take them; so is a port whose
 *                placeholder a kernel socket refused when socktab's connect() had taken it
 *                (the claim of a connect() cannot be refused: that one connection stays).
 *   neighbours The stack no longer sees ARP and neighbour discovery: it takes its neighbours'
 *              link addresses from the kernel's tables (IPv4: /proc/net/arp; IPv6, which has no
 *              such file: an rtnetlink get of the one entry on the device) and from the frames
 *              it receives. A datagram to the discard port makes the kernel resolve one it
 *              does not know (ARP, or neighbour discovery for IPv6).
 *
 * The placeholder of a key lives from its claim to its release, as the key's map entry.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "share.h"

#if defined(ST_HAVE_XDP) && defined(ST_HAVE_STEER)

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "steer.h"

extern const unsigned char st_steer_obj[];
extern const size_t st_steer_obj_len;

/* A claimed key and its placeholder (open hash by key, chained). */
struct held {
	struct steer_key k;
	int fd;                      /* placeholder socket, or -1 (none could be bound) */
	struct held *next;
};

#define HELD_BUCKETS 65536

static struct {
	bool on;
	struct bpf_object *obj;
	int prog_fd, owned_fd, xsks_fd, counters_fd;
	int ifindex;
	uint32_t attach_flags;
	bool attached;
	pthread_mutex_t lock;
	struct held *held[HELD_BUCKETS];
	struct socktab_port_feed feed;
	int kernel_lo, kernel_hi;    /* the kernel's range before the split (restored at close) */
	uint64_t claims, releases, refused, no_placeholder, map_errors, conflicts, reserved;
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint32_t key_hash(const struct steer_key *k)
{
	uint32_t h = (uint32_t)k->proto * 31u + k->family + (uint32_t)k->port * 2654435761u;

	for (int i = 0; i < 16; i++)
		h = h * 16777619u ^ k->addr[i];
	return h & (HELD_BUCKETS - 1);
}

static void to_steer_key(const struct socktab_port_key *pk, struct steer_key *k)
{
	memset(k, 0, sizeof(*k));
	k->proto = pk->proto == SOCKTAB_TCP ? IPPROTO_TCP : IPPROTO_UDP;
	k->family = pk->family == AF_INET ? STEER_AF_INET : STEER_AF_INET6;
	k->port = htons(pk->port);
	memcpy(k->addr, &pk->addr, 16);
}

/* Bind a kernel socket where socktab takes @pk: -EADDRINUSE when a kernel socket holds it, a
 * socket (>= 0), or another negative errno (no placeholder possible: an address the kernel
 * does not know is bound with IP_FREEBIND, so this is rare). */
static int placeholder(const struct socktab_port_key *pk)
{
	int type = pk->proto == SOCKTAB_TCP ? SOCK_STREAM : SOCK_DGRAM, one = 1, zero = 0, fd, err;
	struct sockaddr_storage ss;
	socklen_t len;

	memset(&ss, 0, sizeof(ss));
	if (pk->family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(pk->port);
		memcpy(&a->sin_addr, &pk->addr.s6_addr[12], 4);
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(pk->port);
		a->sin6_addr = pk->addr;
		len = sizeof(*a);
	}
	fd = socket(pk->family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (pk->family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static int feed_claim(void *arg, const struct socktab_port_key *pk, unsigned flags)
{
	struct steer_key k;
	struct held *h;
	uint32_t one = 1;
	int fd;

	if (pk->l3mdev) /* a VRF's port space is not the kernel's default one */
		return 0;
	to_steer_key(pk, &k);
	fd = placeholder(pk);
	if (fd == -EADDRINUSE && !(flags & SOCKTAB_FEED_F_FORCED)) {
		S.refused++;
		return -EADDRINUSE;
	}
	if (fd == -EADDRINUSE) {
		/* A connect() took a port a kernel socket holds: keep the next ones off it (the
		 * reservation is a few atomic bits, no lock of the net). */
		S.conflicts++;
		socktab_net_set_reserved(arg, pk->port, pk->port, 1);
	}
	h = malloc(sizeof(*h));
	if (!h) {
		if (fd >= 0)
			close(fd);
		return flags & SOCKTAB_FEED_F_FORCED ? 0 : -ENOMEM;
	}
	if (fd < 0)
		S.no_placeholder++;
	if (bpf_map_update_elem(S.owned_fd, &k, &one, BPF_ANY))
		S.map_errors++;
	h->k = k;
	h->fd = fd;
	pthread_mutex_lock(&S.lock);
	h->next = S.held[key_hash(&k)];
	S.held[key_hash(&k)] = h;
	S.claims++;
	pthread_mutex_unlock(&S.lock);
	return 0;
}

static void feed_release(void *arg, const struct socktab_port_key *pk)
{
	struct steer_key k;
	struct held **pp, *h = NULL;

	(void)arg;
	if (pk->l3mdev)
		return;
	to_steer_key(pk, &k);
	pthread_mutex_lock(&S.lock);
	for (pp = &S.held[key_hash(&k)]; *pp; pp = &(*pp)->next)
		if (!memcmp(&(*pp)->k, &k, sizeof(k))) {
			h = *pp;
			*pp = h->next;
			break;
		}
	S.releases++;
	pthread_mutex_unlock(&S.lock);
	if (!h)
		return;
	bpf_map_delete_elem(S.owned_fd, &k);
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}

/* Which of the endpoint's addresses the kernel holds on device @dev: HELD4 for @cfg's IPv4
 * one, HELD6 for its IPv6 one (when it has one). */
#define HELD4 1u
#define HELD6 2u
static unsigned int kernel_holds(const char *dev, const struct st_cfg *cfg)
{
	struct ifaddrs *ifs, *i;
	unsigned int held = 0;

	if (getifaddrs(&ifs))
		return 0;
	for (i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, dev))
			continue;
		if (i->ifa_addr->sa_family == AF_INET &&
		    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == cfg->addr4.s_addr)
			held |= HELD4;
		else if (i->ifa_addr->sa_family == AF_INET6 && cfg->have6 &&
			 !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, &cfg->addr6,
				 sizeof(cfg->addr6)))
			held |= HELD6;
	}
	freeifaddrs(ifs);
	return held;
}

#define RANGE_FILE "/proc/sys/net/ipv4/ip_local_port_range"

static int write_range(int lo, int hi)
{
	FILE *f = fopen(RANGE_FILE, "w");

	if (!f || fprintf(f, "%d %d\n", lo, hi) < 0 || fclose(f)) {
		fprintf(stderr, "socktab serve: share: cannot write %s\n", RANGE_FILE);
		return -1;
	}
	return 0;
}

/* Reserve in socktab's net the ports of [lo, hi] that kernel sockets hold now (any state, any
 * address: what /proc/net/{tcp,udp}{,6} list). */
static void reserve_kernel_ports(struct stack *st, int lo, int hi)
{
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6", "/proc/net/udp",
					     "/proc/net/udp6" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f = fopen(files[i], "r");
		char line[512];
		unsigned int port;

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char *colon = strchr(line, ':'); /* after "sl" */

			colon = colon ? strchr(colon + 1, ':') : NULL; /* local address:port */
			if (!colon || sscanf(colon + 1, "%x", &port) != 1 || (int)port < lo ||
			    (int)port > hi)
				continue;
			socktab_net_set_reserved(st->net, (int)port, (int)port, 1);
			S.reserved++;
		}
		fclose(f);
	}
}

/* The kernel keeps the lower half of its ephemeral range, socktab takes the upper half; the
 * kernel gets its whole range back when serve exits (not when it crashes). */
static int split_ports(struct stack *st)
{
	FILE *f = fopen(RANGE_FILE, "r");
	int lo = 0, hi = 0, mid, err;

	if (!f || fscanf(f, "%d %d", &lo, &hi) != 2 || hi - lo < 64) {
		if (f)
			fclose(f);
		fprintf(stderr, "socktab serve: share: cannot read %s\n", RANGE_FILE);
		return -1;
	}
	fclose(f);
	mid = lo + (hi - lo + 1) / 2;
	/* The kernel's range must keep its parity rule (an even low end, R54): mid is even. */
	mid &= ~1;
	if (write_range(lo, mid - 1))
		return -1;
	S.kernel_lo = lo;
	S.kernel_hi = hi;
	err = socktab_net_set_port_range(st->net, mid, hi);
	if (err) {
		fprintf(stderr, "socktab serve: share: port range: %s\n", strerror(-err));
		return -1;
	}
	reserve_kernel_ports(st, mid, hi);
	fprintf(stderr, "socktab serve: share: ephemeral ports: kernel %d-%d, socktab %d-%d (%llu "
		"held by kernel sockets, reserved)\n", lo, mid - 1, mid, hi,
		(unsigned long long)S.reserved);
	return 0;
}

int share_open(struct stack *st)
{
	const struct st_cfg *cfg = &st->cfg;
	struct bpf_program *prog;
	unsigned int held, all = HELD4 | (cfg->have6 ? HELD6 : 0);
	char a4[INET_ADDRSTRLEN], a6[INET6_ADDRSTRLEN] = "";
	int err;

	if (!cfg->xdp || !(held = kernel_holds(cfg->xdp, cfg)))
		return 0;
	inet_ntop(AF_INET, &cfg->addr4, a4, sizeof(a4));
	if (cfg->have6)
		inet_ntop(AF_INET6, &cfg->addr6, a6, sizeof(a6));
	if (held != all) {
		/* Shared, the device's ARP and neighbour discovery go to the kernel, which does not
		 * answer for the address it does not hold; not shared, socktab would take the
		 * kernel's flows of the address it does hold. */
		fprintf(stderr, "socktab serve: share: the kernel holds %s on %s but not %s: a "
			"shared device needs all of serve's addresses in the kernel, an unshared "
			"one none\n", held & HELD4 ? a4 : a6, cfg->xdp, held & HELD4 ? a6 : a4);
		return -1;
	}
	S.ifindex = (int)if_nametoindex(cfg->xdp);
	S.obj = bpf_object__open_mem(st_steer_obj, st_steer_obj_len, NULL);
	err = S.obj ? bpf_object__load(S.obj) : -errno;
	if (err) {
		fprintf(stderr, "socktab serve: share: loading the steering program: %s\n",
			strerror(err < 0 ? -err : err));
		return -1;
	}
	prog = bpf_object__find_program_by_name(S.obj, "socktab_steer");
	S.prog_fd = prog ? bpf_program__fd(prog) : -1;
	S.owned_fd = bpf_object__find_map_fd_by_name(S.obj, "owned");
	S.xsks_fd = bpf_object__find_map_fd_by_name(S.obj, "xsks");
	S.counters_fd = bpf_object__find_map_fd_by_name(S.obj, "counters");
	if (S.prog_fd < 0 || S.owned_fd < 0 || S.xsks_fd < 0 || S.counters_fd < 0) {
		fprintf(stderr, "socktab serve: share: the steering program is incomplete\n");
		return -1;
	}
	S.on = true; /* from here share_close() undoes what was done */
	if (split_ports(st))
		return -1;
	S.feed = (struct socktab_port_feed){ feed_claim, feed_release, st->net };
	err = socktab_net_set_port_feed(st->net, &S.feed);
	if (err) {
		fprintf(stderr, "socktab serve: share: port feed: %s\n", strerror(-err));
		return -1;
	}
	fprintf(stderr, "socktab serve: share: the kernel holds %s%s%s on %s: steering program "
		"loaded\n", a4, cfg->have6 ? " and " : "", a6, cfg->xdp);
	return 0;
}

bool share_active(void)
{
	return S.on;
}

int share_attach(struct stack *st, int xsk_fd)
{
	uint32_t q = (uint32_t)st->cfg.xdp_queue;
	int err = -EOPNOTSUPP;

	if (st->cfg.xdp_mode != 1) {
		S.attach_flags = XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST;
		err = bpf_xdp_attach(S.ifindex, S.prog_fd, S.attach_flags, NULL);
	}
	if (err && st->cfg.xdp_mode != 2) {
		S.attach_flags = XDP_FLAGS_SKB_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST;
		err = bpf_xdp_attach(S.ifindex, S.prog_fd, S.attach_flags, NULL);
	}
	if (err) {
		fprintf(stderr, "socktab serve: share: attaching the steering program to %s: %s\n",
			st->cfg.xdp, strerror(-err));
		return -1;
	}
	S.attached = true;
	if (q >= STEER_QUEUES_MAX || bpf_map_update_elem(S.xsks_fd, &q, &xsk_fd, BPF_ANY)) {
		fprintf(stderr, "socktab serve: share: queue %u in the socket map: %s\n", q,
			strerror(errno));
		return -1;
	}
	fprintf(stderr, "socktab serve: share: steering program on %s, %s mode\n", st->cfg.xdp,
		S.attach_flags & XDP_FLAGS_DRV_MODE ? "native" : "skb");
	return 0;
}

/* /proc/net/arp: "IP address  HW type  Flags  HW address  Mask  Device". */
static int arp_find(const struct in_addr *ip, uint8_t mac[6])
{
	FILE *f = fopen("/proc/net/arp", "r");
	char line[256], a[64], hw[64];
	unsigned int flags, m[6];
	int found = -1;

	if (!f)
		return -1;
	while (found && fgets(line, sizeof(line), f)) {
		struct in_addr x;

		if (sscanf(line, "%63s %*s %x %63s", a, &flags, hw) != 3 || !(flags & 2) ||
		    inet_pton(AF_INET, a, &x) != 1 || x.s_addr != ip->s_addr ||
		    sscanf(hw, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
			continue;
		for (int i = 0; i < 6; i++)
			mac[i] = (uint8_t)m[i];
		found = 0;
	}
	fclose(f);
	return found;
}

/* The neighbour states whose link address is known (the kernel's NUD_VALID; /proc/net/arp
 * marks the same entries complete). */
#define NEIGH_KNOWN (NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | NUD_DELAY)

/* The kernel's IPv6 neighbour table (what its neighbour discovery learnt) has no /proc file:
 * ask rtnetlink for the one entry of @ip on the shared device (RTM_GETNEIGH, not a dump of the
 * table). The kernel queues its answer before sendto() returns, so the receive never waits. */
static int ndisc_find(const struct in6_addr *ip, uint8_t mac[6])
{
	struct {
		struct nlmsghdr nh;
		struct ndmsg nd;
		struct rtattr dst;
		struct in6_addr addr;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETNEIGH,
			.nlmsg_flags = NLM_F_REQUEST },
		.nd = { .ndm_family = AF_INET6, .ndm_ifindex = S.ifindex },
		.dst = { .rta_len = RTA_LENGTH(sizeof(struct in6_addr)), .rta_type = NDA_DST },
		.addr = *ip,
	};
	union {
		struct nlmsghdr nh;
		char buf[512];
	} ans;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), found = -1;
	ssize_t n;

	if (fd < 0)
		return -1;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0 ||
	    (n = recv(fd, &ans, sizeof(ans), MSG_DONTWAIT)) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	/* RTM_NEWNEIGH with the entry, or NLMSG_ERROR (ENOENT: the kernel has none). */
	if (!NLMSG_OK(&ans.nh, (size_t)n) || ans.nh.nlmsg_type != RTM_NEWNEIGH ||
	    ans.nh.nlmsg_len < NLMSG_LENGTH(sizeof(struct ndmsg)))
		return -1;
	const struct ndmsg *nd = NLMSG_DATA(&ans.nh);
	const struct rtattr *a = (const struct rtattr *)((const char *)nd +
							  NLMSG_ALIGN(sizeof(*nd)));
	int left = (int)(ans.nh.nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));

	if (!(nd->ndm_state & NEIGH_KNOWN))
		return -1;
	for (; RTA_OK(a, left); a = RTA_NEXT(a, left))
		if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(mac, RTA_DATA(a), 6);
			found = 0;
		}
	return found;
}

/*
 * Has this thread asked the kernel to resolve @ip within the last 100 ms? If not, it is noted
 * as asked now. The kernel resolves an address once asked, retrying on its own, so a datagram
 * for every packet that finds no neighbour would only cost two system calls each; a few
 * recent addresses per thread (each of the stack's threads sends for itself) bound that.
 */
static bool asked_recently(int family, const union st_addr *ip)
{
	static _Thread_local struct {
		int family;
		union st_addr ip;
		uint64_t at;
	} recent[8];
	static _Thread_local unsigned int next;
	uint64_t now = st_now_ns();

	for (unsigned int i = 0; i < 8; i++) {
		if (recent[i].family != family ||
		    (family == AF_INET ? recent[i].ip.v4.s_addr != ip->v4.s_addr
				       : memcmp(&recent[i].ip.v6, &ip->v6, sizeof(ip->v6))))
			continue;
		if (now - recent[i].at < 100000000u)
			return true;
		recent[i].at = now;
		return false;
	}
	recent[next].family = family;
	recent[next].ip = *ip;
	recent[next].at = now;
	next = (next + 1) % 8;
	return false;
}

int share_neigh(int family, const union st_addr *ip, uint8_t mac[6])
{
	struct sockaddr_storage d;
	socklen_t len;
	int fd;

	if (family != AF_INET && family != AF_INET6)
		return -1;
	if (family == AF_INET ? !arp_find(&ip->v4, mac) : !ndisc_find(&ip->v6, mac))
		return 0;
	if (asked_recently(family, ip))
		return -1;
	/* Let the kernel resolve it: a datagram to the discard port starts its ARP, or its
	 * neighbour solicitation (to a link-local address: out of the shared device). */
	memset(&d, 0, sizeof(d));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&d;

		a->sin_family = AF_INET;
		a->sin_port = htons(9);
		a->sin_addr = ip->v4;
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&d;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(9);
		a->sin6_addr = ip->v6;
		if (IN6_IS_ADDR_LINKLOCAL(&ip->v6))
			a->sin6_scope_id = (uint32_t)S.ifindex;
		len = sizeof(*a);
	}
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		sendto(fd, "", 0, MSG_DONTWAIT, (struct sockaddr *)&d, len);
		close(fd);
	}
	return -1;
}

void share_print_stats(FILE *f)
{
	static const char *const names[] = STEER_COUNTER_NAMES;
	int ncpu = libbpf_num_possible_cpus();

	if (!S.on)
		return;
	for (uint32_t i = 0; i < STEER_NCOUNTERS && ncpu > 0; i++) {
		uint64_t v[ncpu], sum = 0;

		if (bpf_map_lookup_elem(S.counters_fd, &i, v))
			continue;
		for (int c = 0; c < ncpu; c++)
			sum += v[c];
		fprintf(f, "share_%s=%llu\n", names[i], (unsigned long long)sum);
	}
	fprintf(f, "share_claims=%llu\nshare_releases=%llu\nshare_refused=%llu\n"
		"share_no_placeholder=%llu\nshare_map_errors=%llu\nshare_conflicts=%llu\n"
		"share_reserved=%llu\n",
		(unsigned long long)S.claims, (unsigned long long)S.releases,
		(unsigned long long)S.refused, (unsigned long long)S.no_placeholder,
		(unsigned long long)S.map_errors, (unsigned long long)S.conflicts,
		(unsigned long long)S.reserved);
}

void share_close(struct stack *st)
{
	if (!S.on)
		return;
	if (S.attached)
		bpf_xdp_detach(S.ifindex, S.attach_flags & ~XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	S.attached = false;
	if (st->net)
		socktab_net_set_port_feed(st->net, NULL);
	for (int i = 0; i < HELD_BUCKETS; i++)
		while (S.held[i]) {
			struct held *h = S.held[i];

			S.held[i] = h->next;
			if (h->fd >= 0)
				close(h->fd);
			free(h);
		}
	if (S.kernel_hi)
		write_range(S.kernel_lo, S.kernel_hi);
	S.kernel_hi = 0;
	bpf_object__close(S.obj);
	S.obj = NULL;
	S.on = false;
}

#else /* no libbpf or no steering program: the device is never shared */

int share_open(struct stack *st)
{
	(void)st;
	return 0;
}

bool share_active(void)
{
	return false;
}

int share_attach(struct stack *st, int xsk_fd)
{
	(void)st, (void)xsk_fd;
	return -1;
}

int share_neigh(int family, const union st_addr *ip, uint8_t mac[6])
{
	(void)family, (void)ip, (void)mac;
	return -1;
}

void share_print_stats(FILE *f)
{
	(void)f;
}

void share_close(struct stack *st)
{
	(void)st;
}

#endif
