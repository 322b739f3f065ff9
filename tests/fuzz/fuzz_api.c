/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: the public API driven by the fuzz input, with the table invariants checked
 * after every call.
 *
 * The input is a stream of operations: a byte picks the call, the following bytes its arguments
 * (nets with tiny port ranges and tables, sockets of any family and protocol, addresses of any
 * family and length, option values of any size, garbage sysctls, states out of range, devices,
 * VRFs and addresses, device bindings, lookups on any ingress device). Nothing is filtered out
 * before the call: socktab must turn garbage into an errno. The fuzzing thread also goes online
 * and offline (socktab_thread_online()) between calls: every check below must hold either way.
 *
 * A model is kept on the side: the nets with their devices (lo, and d0, d1, a VRF v0 with its
 * slave d2 in the first net from the start) and addresses, the open sockets (handles the fuzzer
 * owns) and the TIME_WAIT entries it saw being created (key, device, bucket), each with its
 * expiry time on the net's manual clock. After every call, for every net:
 *   1. every open socket in a state that lives in ehash is in ehash; for every ehash entry
 *      (open socket or TIME_WAIT), lookups of its 4-tuple on its own device (lo for an unbound
 *      one), with its device as the VRF (sdif), on other devices and, for an unbound one, with
 *      a VRF return an entry of the model with that key whose device takes that traffic
 *      (inet_bound_dev_eq, R92: a bound entry only dif or sdif equal to its device, an unbound
 *      one sdif 0 or tcp_l3mdev_accept), the entry itself when it is the only such one, and
 *      nothing when there is none; the referenced, RCU-scoped and burst lookups take turns;
 *   2. every listener is found by a listener lookup of its address and port on its device (and
 *      as the VRF); a listener lookup on another device returns only listeners that take it;
 *   3. socktab_diag's dump of ehash is the model: each TIME_WAIT entry one of the model's (key
 *      and device), each other entry an open socket (key and device); a model TIME_WAIT entry
 *      missing from it has expired or was taken over by a socket with its 4-tuple;
 *   4. socktab_net_stats() equals the model: established = sockets of (1), time_wait = entries of
 *      (3), bind_buckets = distinct (port, l3mdev) held by sockets and entries (R98), and no
 *      bind bucket is left without owners;
 *   5. every lookup result has the key that was asked for, takes the ingress device (for a
 *      reuseport group: some member does, R33), is a socket or entry of the model, and is what
 *      the other forms of the lookup return;
 *   6. a failed call changed no counter and not the state, name or device of the socket it was
 *      given (counters touched by lazy TIME_WAIT expiry are exempt while an entry may have
 *      expired; a link-local scope binds the device before anything fails, R86, R96);
 *   7. device, address and device-option calls return what the model predicts, and afterwards
 *      socktab_dev_flags/master/name/index and the locality of the IPv4 addresses (R83) agree
 *      with it; a child takes the device R94 gives it.
 * A violation prints what and where, then aborts: libFuzzer saves the input.
 *
 * Internal access (src headers) is used to tell which sockets own a port and through which
 * bucket (socktab__sk_bl(sk)->tb2), to read a lookup result's key and device, which have no
 * public getter for TIME_WAIT entries, to read the l3mdev sysctls, and to walk bhash for empty
 * buckets.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bind.h"
#include "ehash.h"
#include "socktab/socktab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MAX_NETS 3
#define MAX_SOCKS 24
#define MAX_OPS 600 /* bounds one input's work whatever its length */
#define MAX_TW MAX_OPS

/* ---------------------------------------------------------------- input */

struct input {
	const uint8_t *p;
	size_t n;
};

/* Next byte; zeros once the input is used up, so every op still gets arguments. */
static uint8_t u8(struct input *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static uint16_t u16(struct input *in)
{
	return (uint16_t)(u8(in) | u8(in) << 8);
}

static uint32_t u32(struct input *in)
{
	return (uint32_t)u16(in) | (uint32_t)u16(in) << 16;
}

/* ---------------------------------------------------------------- model */

/* A device of a net, as the model expects socktab_dev_flags() and friends to report it. */
struct mdev {
	int ifindex;
	char name[SOCKTAB_IFNAMSIZ];
	bool alive; /* false once deleted: the index stays as a stale one to bind to */
	bool vrf, up;
	int master; /* VRF it is enslaved to, 0: none */
};

/* An address of a device. */
struct maddr {
	int ifindex, family, plen;
	struct in6_addr a; /* AF_INET: s6_addr32[3] */
	bool secondary;
};

#define MAX_DEVS 10
#define MAX_ADDRS 24

struct mnet {
	struct socktab_net *net;
	uint64_t now_ns;    /* the net's manual clock */
	uint64_t tw_len_ns;
	bool net_raw;       /* params.net_raw: rebinding a device-bound socket is allowed */
	struct mdev devs[MAX_DEVS]; /* lo is not here: it is ifindex 1, always */
	int ndevs;
	int max_ifindex;    /* highest ifindex handed out: new ones must be above it */
	struct maddr addrs[MAX_ADDRS];
	int naddrs;
};

struct msock {
	struct socktab_sock *sk;
	int net;
	bool udp;
};

/* A 4-tuple as lookups take it: remote = packet source, local = packet destination. */
struct tuple {
	int family; /* family of the lookup: AF_INET or AF_INET6 */
	struct in6_addr raddr, laddr; /* AF_INET: s6_addr32[3] */
	uint16_t rport, lport;        /* network order */
};

struct mtw {
	int net;
	struct tuple t;
	int dev; /* the device it is bound to (its socket's), 0: none */
	int l3mdev; /* of the bind bucket it holds its port through (its socket's) */
	uint64_t expire_ns;
};

static struct mnet nets[MAX_NETS];
static struct msock socks[MAX_SOCKS];
static int nsocks;
static struct mtw tws[MAX_TW];
static int ntw;
static int cur_op;
static bool trace; /* FUZZ_API_TRACE=1: print every call (for reading a saved crash input) */
static uint64_t udp_autobind_kept; /* failed UDP connects that kept their autobind port */
/* The bind buckets the model's owners need: one per (port, l3mdev) (R98). */
static struct bucket {
	uint16_t port;
	int l3mdev;
} buckets[MAX_SOCKS + MAX_TW];
static int nbuckets;
static int nets_made; /* per input: socktab_net_new() costs 65536 SipHashes (perturb table) */
#define MAX_NETS_MADE 5

static void violation(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_api: VIOLATION at op %d: ", cur_op);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static uint64_t clock_fn(void *arg)
{
	return ((struct mnet *)arg)->now_ns;
}

static bool tw_may_have_expired(int n)
{
	for (int i = 0; i < ntw; i++)
		if (tws[i].net == n && nets[n].now_ns >= tws[i].expire_ns)
			return true;
	return false;
}

static int find_sock(const struct socktab_sock *sk)
{
	for (int i = 0; i < nsocks; i++)
		if (socks[i].sk == sk)
			return i;
	return -1;
}

static void drop_sock(int i)
{
	socks[i] = socks[--nsocks];
}

static void drop_tw(int i)
{
	tws[i] = tws[--ntw];
}

/* ---------------------------------------------------------------- addresses */

static const char *const v4_addrs[] = { "0.0.0.0",	   "127.0.0.1", "127.0.0.2", "127.1.2.3",
					"127.255.255.255", "10.0.0.1",	"224.0.0.1", "255.255.255.255" };
static const char *const v6_addrs[] = { "::",		    "::1",	    "::ffff:127.0.0.1",
					"::ffff:127.0.0.2", "::ffff:0.0.0.0", "fe80::1",
					"2001:db8::1",	    "::ffff:10.0.0.1" };

/*
 * Addresses the devices get (the documentation ranges) and that sockets bind, connect and look
 * up. None of the IPv4 ones is the broadcast address of a prefix the fuzzer gives them
 * (dev_plens4), so "local" means "some device holds it" (R83) and nothing else.
 */
static const char *const dev_v4[] = { "192.0.2.1",    "192.0.2.2",   "192.0.2.200",
				      "198.51.100.1", "203.0.113.1", "198.51.100.7",
				      "192.0.2.255",  "203.0.113.9" };
static const char *const dev_v6[] = { "2001:db8::1", "2001:db8::2", "2001:db8:1::1",
				      "fe80::1",     "fe80::2",	    "2001:db8::100",
				      "fe80::9",     "::ffff:192.0.2.1" };
static const int dev_plens4[] = { 24, 32, 16, 30 };
static const int dev_plens6[] = { 64, 128, 48, 64 };

/* An ifindex no device of a net ever gets (a net makes at most MAX_OPS + 4 devices). */
#define NO_DEV 4242
#define LO SOCKTAB_LOOPBACK_IFINDEX

/* The live model device @ifindex of net @n, or NULL (lo is not in the table). */
static struct mdev *mdev_get(int n, int ifindex)
{
	for (int k = 0; k < nets[n].ndevs; k++)
		if (nets[n].devs[k].alive && nets[n].devs[k].ifindex == ifindex)
			return &nets[n].devs[k];
	return NULL;
}

/* What a lookup of a packet arriving on @ifindex takes as sdif: socktab_dev_master() in the
 * model (itself for a VRF, 0 for lo, unknown and deleted devices). */
static int mdev_master(int n, int ifindex)
{
	const struct mdev *d = mdev_get(n, ifindex);

	if (!d)
		return 0;
	return d->vrf ? d->ifindex : d->master;
}

/*
 * A device index to bind to or to look up with: none, lo, one of the net's devices (live or
 * deleted), an index no device has, or (@neg) a negative one.
 */
static int pick_ifindex(int n, uint8_t c, bool neg)
{
	switch (c % 8) {
	case 0:
		return 0;
	case 1:
		return LO;
	case 2:
		return c & 0x80 ? NO_DEV : 0x7fffffff;
	case 3:
		if (neg)
			return c & 0x80 ? -1 : -0x7fffffff - 1;
		/* fall through */
	default:
		if (n < 0 || !nets[n].ndevs)
			return LO;
		return nets[n].devs[(c >> 3) % nets[n].ndevs].ifindex;
	}
}

/* An sdif to go with @dif: none, the model's master of @dif (the right one), a VRF of the net
 * (maybe a wrong one), or any index. */
static int pick_sdif(int n, int dif, uint8_t c)
{
	switch (c % 4) {
	case 0:
		return 0;
	case 1:
		return mdev_master(n, dif);
	case 2:
		for (int k = 0; k < nets[n].ndevs; k++) {
			const struct mdev *d = &nets[n].devs[(k + (c >> 2)) % nets[n].ndevs];

			if (d->vrf)
				return d->ifindex;
		}
		return NO_DEV;
	default:
		return pick_ifindex(n, (uint8_t)(c >> 2), false);
	}
}

/* A port: 0, near the edges of the first net's range, well known ones, or another socket's. */
static uint16_t pick_port(struct input *in)
{
	uint8_t c = u8(in);
	int lo = 40000, hi = 40003;

	if (nets[0].net)
		socktab_net_get_port_range(nets[0].net, &lo, &hi);
	switch (c % 12) {
	case 0:
		return 0;
	case 1:
		return (uint16_t)lo;
	case 2:
		return (uint16_t)(lo + 1);
	case 3:
		return (uint16_t)hi;
	case 4:
		return (uint16_t)(hi + 1);
	case 5:
		return 80;
	case 6:
		return 1023;
	case 7:
		return 5000;
	case 8:
		if (nsocks) {
			struct sockaddr_in6 a;
			socklen_t len = sizeof(a);

			if (!socktab_getsockname(socks[(c >> 4) % nsocks].sk, (struct sockaddr *)&a,
						 &len))
				return ntohs(a.sin6_port);
		}
		return 5001;
	case 9:
		return 65535;
	default:
		return (uint16_t)(lo + (c >> 4) % 8);
	}
}

/*
 * Build a socket address for a socket of @family in net @n: mostly well formed; sometimes the
 * other family, AF_UNSPEC, or a wrong length. One in four is a device address (dev_v4, dev_v6),
 * whose IPv6 scope may name any of the net's devices. Returns the length to pass.
 */
static socklen_t pick_addr(struct input *in, int n, int family, struct sockaddr_storage *ss)
{
	uint8_t c = u8(in), k = u8(in);
	uint16_t port = htons(pick_port(in));
	bool dev = (c & 0x60) == 0x60;
	socklen_t len;

	memset(ss, 0, sizeof(*ss));
	if (c % 16 == 0)
		family = family == AF_INET ? AF_INET6 : AF_INET;
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = port;
		inet_pton(AF_INET, dev ? dev_v4[k % 8] : v4_addrs[k % 8], &sin->sin_addr);
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		inet_pton(AF_INET6, dev ? dev_v6[k % 8] : v6_addrs[k % 8], &sin6->sin6_addr);
		if (k & 0x80 && dev)
			sin6->sin6_scope_id = (uint32_t)pick_ifindex(n, (uint8_t)(k >> 3), false);
		else if (k & 0x80)
			sin6->sin6_scope_id = 1;
		len = sizeof(*sin6);
	}
	if (c % 32 == 1)
		ss->ss_family = AF_UNSPEC;
	if (c % 32 == 2)
		ss->ss_family = (sa_family_t)u8(in);
	if (c % 16 == 3)
		len = u8(in) % (sizeof(*ss) + 1);
	return len;
}

/* ---------------------------------------------------------------- socket facts */

static bool ehash_state(int st)
{
	switch (st) {
	case SOCKTAB_TCP_ESTABLISHED:
	case SOCKTAB_TCP_SYN_SENT:
	case SOCKTAB_TCP_SYN_RECV:
	case SOCKTAB_TCP_FIN_WAIT1:
	case SOCKTAB_TCP_FIN_WAIT2:
	case SOCKTAB_TCP_CLOSE_WAIT:
	case SOCKTAB_TCP_LAST_ACK:
	case SOCKTAB_TCP_CLOSING:
		return true;
	default:
		return false;
	}
}

/* A v6 tuple with both ends v4-mapped is an IPv4 one (R5): one spelling for comparisons. */
static void normalize(struct tuple *t)
{
	if (t->family == AF_INET6 && socktab__v6_is_mapped(&t->raddr) &&
	    socktab__v6_is_mapped(&t->laddr)) {
		t->family = AF_INET;
		t->raddr.s6_addr32[0] = t->raddr.s6_addr32[1] = t->raddr.s6_addr32[2] = 0;
		t->laddr.s6_addr32[0] = t->laddr.s6_addr32[1] = t->laddr.s6_addr32[2] = 0;
	}
}

/* The ehash 4-tuple of a connected socket, from its public names. */
static bool sock_tuple(struct socktab_sock *sk, struct tuple *t)
{
	struct sockaddr_storage l, r;
	socklen_t ll = sizeof(l), rl = sizeof(r);

	if (socktab_getsockname(sk, (struct sockaddr *)&l, &ll) ||
	    socktab_sock_peer(sk, (struct sockaddr *)&r, &rl))
		return false;
	memset(t, 0, sizeof(*t));
	t->family = l.ss_family;
	if (l.ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&l;
		const struct sockaddr_in *b = (const struct sockaddr_in *)&r;

		t->laddr.s6_addr32[3] = a->sin_addr.s_addr;
		t->raddr.s6_addr32[3] = b->sin_addr.s_addr;
		t->lport = a->sin_port;
		t->rport = b->sin_port;
	} else {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&l;
		const struct sockaddr_in6 *b = (const struct sockaddr_in6 *)&r;

		t->laddr = a->sin6_addr;
		t->raddr = b->sin6_addr;
		t->lport = a->sin6_port;
		t->rport = b->sin6_port;
		normalize(t);
	}
	return true;
}

/* inet_bound_dev_eq (R92), written out again: does a socket bound to @bound (0: none) take a
 * packet that arrived on @dif with L3 master @sdif? */
static bool dev_ok(bool l3mdev_accept, int bound, int dif, int sdif)
{
	if (!bound)
		return !sdif || l3mdev_accept;
	return bound == dif || bound == sdif;
}

static bool tcp_accept(int n)
{
	return RD(nets[n].net->tcp_l3mdev_accept) != 0;
}

static bool udp_accept(int n)
{
	return RD(nets[n].net->udp_l3mdev_accept) != 0;
}

/* The device socket @sk is bound to, read back through SO_BINDTOIFINDEX. */
static int sock_dev(struct socktab_sock *sk)
{
	int v = -1;
	socklen_t l = sizeof(v);

	if (socktab_getsockopt(sk, SOL_SOCKET, SO_BINDTOIFINDEX, &v, &l) || l != sizeof(v) || v < 0)
		violation("SO_BINDTOIFINDEX read back %d (optlen %u)", v, l);
	return v;
}

/* The device a lookup of traffic to something bound to @dev arrives on: lo for the unbound. */
static int home_dif(int dev)
{
	return dev ? dev : LO;
}

/*
 * An ehash lookup of @t arriving on (@dif, @sdif). @how picks the entry point, which must not
 * matter: the referenced lookup, the RCU-scoped one with socktab_sock_hold(), (IPv4) a
 * one-key burst, or a one-key batch (its kind checked against the entry).
 */
static struct socktab_sock *lookup_est(struct socktab_net *net, const struct tuple *t, int dif,
				       int sdif, int how)
{
	struct socktab_sock *f = NULL;

	switch (how % 4) {
	case 3: {
		/* The batch form, referenced: the result is the same entry, with its kind and
		 * area. */
		struct socktab_hit h;
		int r;

		if (t->family == AF_INET) {
			struct socktab_tuple4 k = { t->raddr.s6_addr32[3], t->laddr.s6_addr32[3],
						    t->rport, t->lport, dif, sdif };

			r = socktab_lookup_batch4(net, SOCKTAB_TCP, &k, 1, &h,
						  SOCKTAB_LOOKUP_ESTABLISHED);
		} else {
			struct socktab_tuple6 k = { t->raddr, t->laddr, t->rport, t->lport, dif, sdif };

			r = socktab_lookup_batch6(net, SOCKTAB_TCP, &k, 1, &h,
						  SOCKTAB_LOOKUP_ESTABLISHED);
		}
		if (r != (h.sk != NULL))
			violation("batch lookup returned %d with result %p", r, (void *)h.sk);
		if (h.sk && h.kind != (socktab_sock_tw(h.sk) ? SOCKTAB_HIT_TIME_WAIT
							    : SOCKTAB_HIT_ESTABLISHED))
			violation("batch lookup reported kind %d for %p", h.kind, (void *)h.sk);
		if (!h.sk && (h.kind != SOCKTAB_HIT_NONE || h.priv))
			violation("batch lookup: nothing found, kind %d", h.kind);
		return h.sk;
	}
	case 1:
		socktab_rcu_read_lock();
		f = t->family == AF_INET
			    ? socktab_lookup_established4_rcu(net, t->raddr.s6_addr32[3], t->rport,
							      t->laddr.s6_addr32[3], t->lport, dif,
							      sdif)
			    : socktab_lookup_established6_rcu(net, &t->raddr, t->rport, &t->laddr,
							      t->lport, dif, sdif);
		if (f && socktab_sock_hold(f))
			violation("an entry found under RCU could not be held");
		socktab_rcu_read_unlock();
		return f;
	case 2:
		if (t->family == AF_INET) {
			struct socktab_tuple4 k = { t->raddr.s6_addr32[3], t->laddr.s6_addr32[3],
						    t->rport, t->lport, dif, sdif };
			int r;

			r = socktab_lookup_tcp_burst(net, &k, 1, &f, SOCKTAB_LOOKUP_ESTABLISHED);

			if (r != (f != NULL))
				violation("burst lookup returned %d with result %p", r, (void *)f);
			return f;
		}
		/* fall through */
	default:
		if (t->family == AF_INET)
			return socktab_lookup_established4(net, t->raddr.s6_addr32[3], t->rport,
							   t->laddr.s6_addr32[3], t->lport, dif,
							   sdif);
		return socktab_lookup_established6(net, &t->raddr, t->rport, &t->laddr, t->lport,
						   dif, sdif);
	}
}

/* Does @sk carry the key @t (as an ehash entry)? Reads the internal key words. */
static bool key_is(const struct socktab_sock *sk, const struct tuple *t)
{
	uint32_t ports = (uint32_t)t->rport | (uint32_t)ntohs(t->lport) << 16;
	bool v4 = t->family == AF_INET ||
		  (socktab__v6_is_mapped(&t->raddr) && socktab__v6_is_mapped(&t->laddr));

	if (RD(sk->portpair) != ports || RD(sk->v4key) != v4)
		return false;
	if (v4)
		return RD(sk->addrpair) ==
		       ((uint64_t)t->raddr.s6_addr32[3] | (uint64_t)t->laddr.s6_addr32[3] << 32);
	struct in6_addr r = socktab__sk_v6_daddr(sk), l = socktab__sk_v6_saddr(sk);

	return !memcmp(&r, &t->raddr, 16) && !memcmp(&l, &t->laddr, 16);
}

static bool tuple_eq(const struct tuple *a, const struct tuple *b)
{
	return a->family == b->family && !memcmp(&a->raddr, &b->raddr, 16) &&
	       !memcmp(&a->laddr, &b->laddr, 16) && a->rport == b->rport && a->lport == b->lport;
}

/* A model TIME_WAIT entry of net @n with key @t on device @dev (-1: any device). */
static int find_tw(int n, const struct tuple *t, int dev)
{
	for (int i = 0; i < ntw; i++)
		if (tws[i].net == n && tuple_eq(&tws[i].t, t) && (dev < 0 || tws[i].dev == dev))
			return i;
	return -1;
}

/*
 * Reuseport groups are made of sockets with one device (R34), but SO_BINDTODEVICE may move a
 * member afterwards, and the selection of a member does not look at devices (R33, R35: the
 * kernel's reuseport_select_sock neither). A member is then a right answer when some member of
 * its group matches the device.
 */
static bool rp_exempt(int n, const struct socktab_sock *f, bool acc, int dif, int sdif)
{
	struct socktab__reuseport *g = atomic_load(&f->cold->reuseport_cb);

	if (!g)
		return false;
	for (int j = 0; j < nsocks; j++)
		if (socks[j].net == n && atomic_load(&socks[j].sk->cold->reuseport_cb) == g &&
		    dev_ok(acc, sock_dev(socks[j].sk), dif, sdif))
			return true;
	return false;
}

/*
 * Does listener or UDP socket @f take traffic to (@t's local address) from (@t's remote one)?
 * The address part of R31/R32 and R71: its own address is the destination or the wildcard (an
 * IPv4 packet reaches a dual-stack socket through its IPv4 alias), and a connected socket's peer
 * is the source. @t is normalized.
 */
static bool addr_takes(const struct socktab_sock *f, const struct tuple *t, bool udp)
{
	if (t->family == AF_INET) {
		uint32_t la = socktab__sk_rcv_saddr(f), ra = (uint32_t)RD(f->addrpair);
		uint16_t rp = (uint16_t)(RD(f->portpair) & 0xffff);

		if (socktab__ipv6_only(f) || (la && la != t->laddr.s6_addr32[3]))
			return false;
		return !udp || ((!ra || ra == t->raddr.s6_addr32[3]) && (!rp || rp == t->rport));
	}
	if (f->family != AF_INET6)
		return false;
	struct in6_addr l = socktab__sk_v6_saddr(f), r = socktab__sk_v6_daddr(f);
	uint16_t rp = (uint16_t)(RD(f->portpair) & 0xffff);

	if (!socktab__v6_is_any(&l) && memcmp(&l, &t->laddr, 16))
		return false;
	return !udp || ((socktab__v6_is_any(&r) || !memcmp(&r, &t->raddr, 16)) &&
			(!rp || rp == t->rport));
}

/*
 * Invariant 5 for one TCP lookup result (arriving on @dif, @sdif): right key, right device,
 * and known to the model. Drops the reference.
 */
static void check_result(int n, struct socktab_sock *f, const struct tuple *t, bool listener,
			 int dif, int sdif)
{
	if (!f)
		return;
	int i = find_sock(f), dev = (int)RD(f->bound_dev_if);
	struct tuple nt = *t;

	normalize(&nt);
	if (listener) {
		if (RD(f->state) != SOCKTAB_TCP_LISTEN || socktab__sk_num(f) != ntohs(t->lport))
			violation("listener lookup returned state %d port %u for port %u",
				  RD(f->state), socktab__sk_num(f), ntohs(t->lport));
		if (!addr_takes(f, &nt, false))
			violation("listener lookup for port %u returned a listener on another "
				  "address", ntohs(t->lport));
		if (!dev_ok(tcp_accept(n), dev, dif, sdif) &&
		    !rp_exempt(n, f, tcp_accept(n), dif, sdif))
			violation("listener lookup on dif %d sdif %d returned a listener bound to "
				  "device %d", dif, sdif, dev);
	} else {
		if (!key_is(f, t))
			violation("established lookup returned a socket with another key");
		if (!dev_ok(tcp_accept(n), dev, dif, sdif))
			violation("established lookup on dif %d sdif %d returned an entry bound to "
				  "device %d", dif, sdif, dev);
	}
	if (i >= 0 && socks[i].udp)
		violation("a TCP lookup returned a UDP socket");
	if (i >= 0 ? socks[i].net != n
		   : RD(f->state) != SOCKTAB_TCP_TIME_WAIT || listener || find_tw(n, &nt, dev) < 0)
		violation("lookup returned a socket the model does not know (state %d)",
			  RD(f->state));
	socktab_sock_put(f);
}

/* The same for a UDP lookup result. A hash4 hit matches devices with tcp_l3mdev_accept
 * (inet_match, as udp4_lib_lookup4 in the kernel), scoring with udp_l3mdev_accept (R71). */
static void check_udp_result(int n, struct socktab_sock *f, const struct tuple *t, int dif,
			     int sdif)
{
	if (!f)
		return;
	int i = find_sock(f), dev = (int)RD(f->bound_dev_if);
	struct tuple nt = *t;

	normalize(&nt);
	if (socktab__sk_proto(f) != SOCKTAB_UDP || i < 0 || socks[i].net != n ||
	    socktab__sk_num(f) != ntohs(t->lport))
		violation("UDP lookup returned an unknown socket or another port");
	if (!addr_takes(f, &nt, true))
		violation("UDP lookup for port %u returned a socket of other addresses",
			  ntohs(t->lport));
	if (!dev_ok(udp_accept(n), dev, dif, sdif) && !dev_ok(tcp_accept(n), dev, dif, sdif) &&
	    !rp_exempt(n, f, udp_accept(n), dif, sdif))
		violation("UDP lookup on dif %d sdif %d returned a socket bound to device %d", dif,
			  sdif, dev);
	socktab_sock_put(f);
}

/* ---------------------------------------------------------------- invariants */

/* Note a bind bucket (port, l3mdev) in use by an owner. */
static void mark_bucket(uint16_t port, int l3mdev)
{
	for (int k = 0; k < nbuckets; k++)
		if (buckets[k].port == port && buckets[k].l3mdev == l3mdev)
			return;
	buckets[nbuckets].port = port;
	buckets[nbuckets].l3mdev = l3mdev;
	nbuckets++;
}

/* The l3mdev of the bucket @sk owns its port through (R98: fixed when it was hashed). */
static int sk_bucket_l3mdev(const struct socktab_sock *sk)
{
	return socktab__sk_bl(sk)->tb2 ? socktab__sk_bl(sk)->tb2->tb->l3mdev : 0;
}

/* Invariant 4: no bind bucket of net @n is without owners (a walk of bhash). */
static void empty_buckets(int n)
{
	struct socktab_net *net = nets[n].net;
	struct socktab__tables *t = net->tab;

	for (uint32_t slot = 0; slot <= t->bhash_mask; slot++)
		for (struct socktab__tb *tb = atomic_load(&t->bhash[slot].chain); tb;
		     tb = atomic_load(&tb->next)) {
			bool owned = false;

			if (tb->net != net)
				continue;
			for (const struct socktab__tb2 *t2 = tb->tb2_list; t2 && !owned;
			     t2 = t2->tb_next)
				owned = t2->owners != NULL || t2->kid_live;
			if (!owned)
				violation("an empty bind bucket (port %u, l3mdev %d) was left",
					  tb->port, tb->l3mdev);
		}
}

static struct socktab_sock *lookup_udp(struct socktab_net *net, const struct tuple *t, int dif,
				       int sdif, int how)
{
	struct socktab_sock *f;

	if (how % 2) {
		socktab_rcu_read_lock();
		f = t->family == AF_INET
			    ? socktab_lookup_udp4_rcu(net, t->raddr.s6_addr32[3], t->rport,
						      t->laddr.s6_addr32[3], t->lport, dif, sdif)
			    : socktab_lookup_udp6_rcu(net, &t->raddr, t->rport, &t->laddr, t->lport,
						      dif, sdif);
		if (f && socktab_sock_hold(f))
			violation("a UDP socket found under RCU could not be held");
		socktab_rcu_read_unlock();
		return f;
	}
	if (t->family == AF_INET)
		return socktab_lookup_udp4(net, t->raddr.s6_addr32[3], t->rport,
					   t->laddr.s6_addr32[3], t->lport, dif, sdif);
	return socktab_lookup_udp6(net, &t->raddr, t->rport, &t->laddr, t->lport, dif, sdif);
}

/*
 * Ingress devices other than @dev to probe with, one per call, in turn: lo, an index no device
 * has, and the net's devices (deleted ones too).
 */
static int other_dif(int n, int dev, int k)
{
	int cand[MAX_DEVS + 2], nc = 0;

	cand[nc++] = LO;
	cand[nc++] = NO_DEV;
	for (int j = 0; j < nets[n].ndevs; j++)
		cand[nc++] = nets[n].devs[j].ifindex;
	for (int j = 0; j < nc; j++) {
		int d = cand[(k + j) % nc];

		if (d != dev)
			return d;
	}
	return NO_DEV + 1;
}

/* A VRF to pass as sdif: the net's first VRF after @k, else an index no device has. */
static int some_vrf(int n, int k)
{
	for (int j = 0; j < nets[n].ndevs; j++) {
		const struct mdev *d = &nets[n].devs[(k + j) % nets[n].ndevs];

		if (d->vrf)
			return d->ifindex;
	}
	return NO_DEV;
}

/*
 * A UDP socket: in the port table exactly while it has a local port; when connected, a lookup
 * from its peer on its own device finds a socket on its local port (this one, or an
 * equal-scoring twin bound with SO_REUSEADDR/SO_REUSEPORT), and lookups on other devices
 * return only sockets that take that device. Counts what socktab_udp_stats() must say.
 */
static void check_udp_sock(int n, int i, uint64_t *hashed, uint64_t *hashed4)
{
	struct socktab_sock *sk = socks[i].sk, *f;
	struct tuple t;
	struct sockaddr_storage l;
	socklen_t ll = sizeof(l);
	bool h1 = socktab__hnode_hashed(&socktab__sk_udp(sk)->node1);
	int dev = sock_dev(sk), other = other_dif(n, dev, cur_op + i);

	if (socktab_get_state(sk) <= 0)
		violation("open UDP socket %d has state %d", i, socktab_get_state(sk));
	if (socktab_getsockname(sk, (struct sockaddr *)&l, &ll))
		violation("UDP socket %d has no name", i);
	*hashed += h1;
	*hashed4 += socktab__sk_udp(sk)->hashed4;
	if (h1 != (socktab__sk_num(sk) != 0))
		violation("UDP socket %d: hashed %d with local port %u", i, h1, socktab__sk_num(sk));
	if (!sock_tuple(sk, &t))
		return; /* not connected */
	if (!h1)
		violation("connected UDP socket %d holds no port", i);
	f = lookup_udp(nets[n].net, &t, home_dif(dev), 0, cur_op + i);
	if (!f)
		violation("UDP lookup from socket %d's peer (port %u) on its device %d missed",
			  i, ntohs(t.lport), dev);
	check_udp_result(n, f, &t, home_dif(dev), 0);
	f = lookup_udp(nets[n].net, &t, other, cur_op & 1 ? 0 : mdev_master(n, other), cur_op + i);
	check_udp_result(n, f, &t, other, cur_op & 1 ? 0 : mdev_master(n, other));
}

/* One entry of ehash as the model has it: an open socket, or a TIME_WAIT entry (sk NULL). */
struct ment {
	struct tuple t;
	int dev;
	struct socktab_sock *sk;
	bool seen; /* matched by a diag entry */
};

/* What socktab_diag reports of ehash (TCP entries other than listeners). */
struct dent {
	struct tuple t;
	int dev;
	bool tw;
};

#define MAX_ENTS (MAX_SOCKS + MAX_TW)
static struct ment ents[MAX_ENTS];
static int nents;
static struct dent dents[MAX_ENTS + 8];
static bool tw_seen[MAX_TW];

static void diag_tuple(const struct socktab_diag_entry *e, struct tuple *t)
{
	memset(t, 0, sizeof(*t));
	t->family = e->family;
	if (e->family == AF_INET) {
		const struct sockaddr_in *l = (const void *)&e->local;
		const struct sockaddr_in *r = (const void *)&e->remote;

		t->laddr.s6_addr32[3] = l->sin_addr.s_addr;
		t->raddr.s6_addr32[3] = r->sin_addr.s_addr;
		t->lport = l->sin_port;
		t->rport = r->sin_port;
	} else {
		const struct sockaddr_in6 *l = (const void *)&e->local;
		const struct sockaddr_in6 *r = (const void *)&e->remote;

		t->laddr = l->sin6_addr;
		t->raddr = r->sin6_addr;
		t->lport = l->sin6_port;
		t->rport = r->sin6_port;
		normalize(t);
	}
}

/*
 * The TCP entries socktab_diag reports for net @n, optionally only those of ports (@lport,
 * @rport) (host order, 0: any): ehash ones into dents[] (the count is returned), listeners
 * counted in *@listeners.
 */
static int diag_ehash(int n, uint16_t lport, uint16_t rport, int *listeners)
{
	struct socktab_diag_filter fl;
	struct socktab_diag_cursor *c;
	struct socktab_diag_entry e;
	int k = 0, r;

	memset(&fl, 0, sizeof(fl));
	fl.proto = SOCKTAB_TCP;
	fl.lport = lport;
	fl.rport = rport;
	c = socktab_diag_open(nets[n].net, &fl);
	if (!c)
		violation("socktab_diag_open failed with errno %d", errno);
	*listeners = 0;
	while ((r = socktab_diag_next(c, &e)) == 1) {
		if (e.proto != SOCKTAB_TCP)
			violation("a TCP dump reported protocol %d", e.proto);
		if (!e.timewait && e.state == SOCKTAB_TCP_LISTEN) {
			++*listeners;
			continue;
		}
		if (k == (int)(sizeof(dents) / sizeof(dents[0])))
			violation("the dump reports more ehash entries than the model can hold");
		/* Every TCP entry but a listener is dumped with its peer, remote port 0
		 * included: entries of the dump and of the model are told apart by their key. */
		if (e.remote.ss_family == AF_UNSPEC)
			violation("a TCP dump entry in state %d has no peer", e.state);
		diag_tuple(&e, &dents[k].t);
		dents[k].dev = e.bound_dev_if;
		dents[k].tw = e.timewait;
		k++;
	}
	if (r < 0)
		violation("socktab_diag_next returned %d", r);
	socktab_diag_close(c);
	return k;
}

/* How many TIME_WAIT entries with key @t on device @dev the dump shows, and the model has. */
static int diag_count_tw(int n, const struct tuple *t, int dev)
{
	int l, k = diag_ehash(n, ntohs(t->lport), ntohs(t->rport), &l), c = 0;

	for (int j = 0; j < k; j++)
		c += dents[j].tw && dents[j].dev == dev && tuple_eq(&dents[j].t, t);
	return c;
}

static int model_count_tw(int n, const struct tuple *t, int dev, bool *may_expire)
{
	int c = 0;

	*may_expire = false;
	for (int i = 0; i < ntw; i++)
		if (tws[i].net == n && tws[i].dev == dev && tuple_eq(&tws[i].t, t)) {
			c++;
			*may_expire |= nets[n].now_ns >= tws[i].expire_ns;
		}
	return c;
}

/*
 * After a call that may have turned connection (@t, @dev) of net @n into a TIME_WAIT entry (a
 * close, set_state(TIME_WAIT)): returns whether it did, and adds the entry to the model. One
 * that expired may have been reaped by the same call: *@ambiguous then says that "no" cannot
 * be told from "one new, one reaped".
 */
static bool note_new_tw(int n, const struct tuple *t, int dev, int l3mdev, bool *ambiguous)
{
	int d = diag_count_tw(n, t, dev), m = model_count_tw(n, t, dev, ambiguous);

	if (d > m + 1)
		violation("one call made %d TIME_WAIT entries of one 4-tuple", d - m);
	if (d <= m)
		return false;
	if (ntw < MAX_TW) {
		tws[ntw].net = n;
		tws[ntw].t = *t;
		tws[ntw].dev = dev;
		tws[ntw].l3mdev = l3mdev;
		tws[ntw].expire_ns = nets[n].now_ns + nets[n].tw_len_ns;
		ntw++;
	}
	return true;
}

/* May model entry @i be gone? It has expired, or an open socket has its 4-tuple (connect()
 * with tcp_tw_reuse, or a child, took it over). */
static bool tw_may_vanish(int n, int i)
{
	struct tuple t;

	if (nets[n].now_ns >= tws[i].expire_ns)
		return true;
	for (int j = 0; j < nsocks; j++)
		if (socks[j].net == n && !socks[j].udp && socktab__ehash_hashed(socks[j].sk) &&
		    socktab_get_state(socks[j].sk) != SOCKTAB_TCP_LISTEN &&
		    sock_tuple(socks[j].sk, &t) && tuple_eq(&t, &tws[i].t))
			return true;
	return false;
}

static bool tw_vanish_ok[MAX_TW];

/*
 * Invariant 3 against the dump: every TIME_WAIT entry it shows is one of the model's (same key
 * and device), and a model entry it no longer shows has expired or was taken over by an open
 * socket with its 4-tuple; the model forgets those. Returns the number of ehash entries that
 * are not TIME_WAIT, with the ehash ones left in dents[].
 */
static int reconcile_tw(int n, int *ndents, int *listeners)
{
	int k = diag_ehash(n, 0, 0, listeners), est = 0;

	*ndents = k;
	for (int i = 0; i < ntw; i++) {
		tw_seen[i] = false;
		tw_vanish_ok[i] = tws[i].net == n && tw_may_vanish(n, i);
	}
	for (int j = 0; j < k; j++) {
		int i, pick = -1;

		if (!dents[j].tw) {
			est++;
			continue;
		}
		/* Among entries with the same key and device, one that may not vanish first:
		 * those left over must then be ones that may. */
		for (i = 0; i < ntw; i++)
			if (!tw_seen[i] && tws[i].net == n && tws[i].dev == dents[j].dev &&
			    tuple_eq(&dents[j].t, &tws[i].t) && (pick < 0 || !tw_vanish_ok[i]))
				pick = i;
		if (pick < 0)
			violation("the dump shows a TIME_WAIT entry (port %u -> %u, device %d) the "
				  "model does not know", ntohs(dents[j].t.lport),
				  ntohs(dents[j].t.rport), dents[j].dev);
		tw_seen[pick] = true;
	}
	for (int i = 0; i < ntw;) {
		if (tws[i].net != n || tw_seen[i]) {
			i++;
			continue;
		}
		if (!tw_vanish_ok[i])
			violation("TIME_WAIT entry (port %u -> %u, device %d) vanished %llu ns "
				  "before its expiry", ntohs(tws[i].t.lport), ntohs(tws[i].t.rport),
				  tws[i].dev,
				  (unsigned long long)(tws[i].expire_ns - nets[n].now_ns));
		tws[i] = tws[--ntw];
		tw_seen[i] = tw_seen[ntw];
		tw_vanish_ok[i] = tw_vanish_ok[ntw];
	}
	return est;
}

/*
 * Invariant 1 for one key and one ingress device: the lookup returns an entry of the model
 * with key @t that takes traffic of (@dif, @sdif), exactly @want when it is the only one, and
 * nothing when none does.
 */
static void probe_est(int n, const struct tuple *t, int dif, int sdif, int how)
{
	bool acc = tcp_accept(n);
	int match = 0;
	const struct ment *only = NULL;
	struct socktab_sock *f;

	for (int j = 0; j < nents; j++)
		if (tuple_eq(&ents[j].t, t) && dev_ok(acc, ents[j].dev, dif, sdif)) {
			match++;
			only = &ents[j];
		}
	f = lookup_est(nets[n].net, t, dif, sdif, how);
	if (!match && f)
		violation("lookup of port %u -> %u on dif %d sdif %d found an entry bound to "
			  "device %d (state %d) that does not take that device", ntohs(t->lport),
			  ntohs(t->rport), dif, sdif, (int)RD(f->bound_dev_if), RD(f->state));
	if (match && !f)
		violation("lookup of port %u -> %u on dif %d sdif %d missed %d matching entries "
			  "(one bound to device %d)", ntohs(t->lport), ntohs(t->rport), dif, sdif,
			  match, only->dev);
	if (match == 1 && (only->sk ? f != only->sk : RD(f->state) != SOCKTAB_TCP_TIME_WAIT))
		violation("lookup of port %u -> %u on dif %d sdif %d returned another entry than "
			  "the only one that matches (bound to device %d)", ntohs(t->lport),
			  ntohs(t->rport), dif, sdif, only->dev);
	check_result(n, f, t, false, dif, sdif);
}

/* Invariant 2 for listener @sk (bound to device @dev): a listener lookup of its address and
 * port on its device finds a listener; on other devices, only listeners that take them. */
static void check_listener(int n, int i, struct socktab_sock *sk, int dev)
{
	struct socktab_net *net = nets[n].net;
	struct sockaddr_storage l;
	socklen_t ll = sizeof(l);
	struct socktab_sock *f;
	struct tuple t;
	int dif[3], sdif[3];
	bool v4_only_reachable;

	if (socktab_getsockname(sk, (struct sockaddr *)&l, &ll))
		violation("listener %d has no name", i);
	memset(&t, 0, sizeof(t));
	t.family = l.ss_family;
	t.rport = htons(7);
	if (l.ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&l;

		t.laddr.s6_addr32[3] = a->sin_addr.s_addr ? a->sin_addr.s_addr : htonl(0x7f000001);
		t.raddr.s6_addr32[3] = htonl(0x7f000009);
		t.lport = a->sin_port;
	} else {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&l;

		t.laddr = a->sin6_addr;
		if (socktab__v6_is_any(&t.laddr))
			t.laddr = in6addr_loopback;
		if (socktab__v6_is_mapped(&t.laddr) && !t.laddr.s6_addr32[3])
			t.laddr.s6_addr32[3] = htonl(0x7f000001);
		t.raddr = in6addr_loopback;
		if (socktab__v6_is_mapped(&t.laddr))
			socktab__v6_map(&t.raddr, htonl(0x7f000009));
		t.lport = a->sin6_port;
	}
	/*
	 * A v6only socket on a v4-mapped address (bound while it took IPv4, with
	 * IP_BIND_ADDRESS_NO_PORT, then made v6only while portless: the kernel allows both) takes
	 * no segment at all: its address is reached only by IPv4, which it refuses.
	 */
	v4_only_reachable = l.ss_family == AF_INET6 && RD(sk->v6only) &&
			    socktab__v6_is_mapped(&t.laddr);
	/* Its own device (lo for an unbound one); its device as the VRF; another device. */
	dif[0] = home_dif(dev);
	sdif[0] = 0;
	dif[1] = other_dif(n, dev, cur_op + i);
	sdif[1] = dev ? dev : some_vrf(n, cur_op);
	dif[2] = other_dif(n, dev, cur_op + i + 1);
	sdif[2] = (cur_op & 1) ? 0 : mdev_master(n, dif[2]);
	for (int k = 0; k < 3; k++) {
		if (t.family == AF_INET)
			f = (cur_op + k) % 2
				    ? socktab_lookup_listener4(net, t.raddr.s6_addr32[3], t.rport,
							       t.laddr.s6_addr32[3], t.lport,
							       dif[k], sdif[k])
				    : socktab_lookup_tcp4(net, t.raddr.s6_addr32[3], t.rport,
							  t.laddr.s6_addr32[3], t.lport, dif[k],
							  sdif[k]);
		else
			f = socktab_lookup_listener6(net, &t.raddr, t.rport, &t.laddr, t.lport,
						     dif[k], sdif[k]);
		if (!f && dev_ok(tcp_accept(n), dev, dif[k], sdif[k]) && !v4_only_reachable)
			violation("listener %d (port %u, device %d) not found by a listener lookup "
				  "on dif %d sdif %d", i, ntohs(t.lport), dev, dif[k], sdif[k]);
		if (f && RD(f->state) != SOCKTAB_TCP_LISTEN) /* socktab_lookup_tcp4: ehash first */
			check_result(n, f, &t, false, dif[k], sdif[k]);
		else
			check_result(n, f, &t, true, dif[k], sdif[k]);
	}
}

static void check_net(int n)
{
	struct socktab_net *net = nets[n].net;
	struct socktab_net_stats st;
	struct socktab_udp_stats us;
	uint64_t est = 0, tw = 0, uh = 0, uh4 = 0;
	int ndents, diag_listeners, listeners = 0;
	int diag_est = reconcile_tw(n, &ndents, &diag_listeners);

	nbuckets = 0;
	nents = 0;
	for (int i = 0; i < nsocks; i++) {
		struct socktab_sock *sk = socks[i].sk;

		if (socks[i].net == n && socks[i].udp) {
			check_udp_sock(n, i, &uh, &uh4);
			continue;
		}
		if (socks[i].net != n)
			continue;
		int s = socktab_get_state(sk), dev = sock_dev(sk);
		/* A listener's node is its lhash2 link: it must be linked there instead. */
		bool linked = socktab__ehash_hashed(sk);
		bool hashed = linked && s != SOCKTAB_TCP_LISTEN;
		struct tuple t;

		if (s <= 0 || s == SOCKTAB_TCP_TIME_WAIT)
			violation("open socket %d has state %d", i, s);
		if (hashed != ehash_state(s) || (s == SOCKTAB_TCP_LISTEN && !linked))
			violation("socket %d in state %d is %slinked", i, s, linked ? "" : "not ");
		if (socktab__sk_bl(sk)->tb2) {
			mark_bucket(socktab__sk_num(sk), sk_bucket_l3mdev(sk));
			if (socktab__sk_bl(sk)->tb2->port != socktab__sk_num(sk))
				violation("socket %d owns port %u through a bucket of port %u", i,
					  socktab__sk_num(sk), socktab__sk_bl(sk)->tb2->port);
		} else if (s == SOCKTAB_TCP_LISTEN || hashed) {
			violation("socket %d in state %d owns no port", i, s);
		}
		if (hashed) {
			est++;
			if (!sock_tuple(sk, &t))
				violation("connected socket %d has no names", i);
			ents[nents].t = t;
			ents[nents].dev = dev;
			ents[nents].sk = sk;
			ents[nents].seen = false;
			nents++;
		}
		if (s == SOCKTAB_TCP_LISTEN) {
			listeners++;
			check_listener(n, i, sk, dev);
		}
	}
	for (int i = 0; i < ntw; i++) {
		if (tws[i].net != n)
			continue;
		mark_bucket(ntohs(tws[i].t.lport), tws[i].l3mdev);
		tw++;
		ents[nents].t = tws[i].t;
		ents[nents].dev = tws[i].dev;
		ents[nents].sk = NULL;
		ents[nents].seen = true;
		nents++;
	}
	/* Nothing else is in ehash: the dump's other entries are the open sockets (key, device). */
	for (int j = 0; j < ndents; j++) {
		int e;

		if (dents[j].tw)
			continue;
		for (e = 0; e < nents; e++)
			if (ents[e].sk && !ents[e].seen && ents[e].dev == dents[j].dev &&
			    tuple_eq(&dents[j].t, &ents[e].t))
				break;
		if (e == nents)
			violation("the dump shows an ehash entry (port %u -> %u, device %d) that "
				  "is no open socket of the model", ntohs(dents[j].t.lport),
				  ntohs(dents[j].t.rport), dents[j].dev);
		ents[e].seen = true;
	}
	if ((uint64_t)diag_est != est || diag_listeners != listeners)
		violation("the dump shows %d ehash entries and %d listeners, model %llu and %d",
			  diag_est, diag_listeners, (unsigned long long)est, listeners);
	/*
	 * Invariant 1: every entry is found by a lookup of its key on its own device (lo for an
	 * unbound one) and with its device as the VRF; lookups on other devices, and an unbound
	 * entry's with a VRF, find only entries that take them. TIME_WAIT entries are probed a
	 * few per call, in turn.
	 */
	for (int e = 0, k = 0; e < nents; e++) {
		const struct ment *m = &ents[e];
		int d = m->dev, x = other_dif(n, d, cur_op + e);

		if (!m->sk && (e + cur_op) % 8 && nents > 16)
			continue;
		probe_est(n, &m->t, home_dif(d), 0, k++);
		probe_est(n, &m->t, home_dif(d), d ? mdev_master(n, d) : some_vrf(n, e), k++);
		probe_est(n, &m->t, x, (cur_op + e) % 2 ? 0 : mdev_master(n, x), k++);
		if (d)
			probe_est(n, &m->t, x, d, k++);
	}
	socktab_udp_stats(net, &us);
	if (us.hashed != uh || us.hashed4 != uh4)
		violation("net %d UDP stats hashed=%llu hashed4=%llu, model %llu %llu", n,
			  (unsigned long long)us.hashed, (unsigned long long)us.hashed4,
			  (unsigned long long)uh, (unsigned long long)uh4);
	socktab_net_stats(net, &st);
	empty_buckets(n);
	if (st.established != est || st.time_wait != tw || st.bind_buckets != (uint64_t)nbuckets)
		violation("net %d stats established=%llu time_wait=%llu bind_buckets=%llu, model "
			  "%llu %llu %llu",
			  n, (unsigned long long)st.established, (unsigned long long)st.time_wait,
			  (unsigned long long)st.bind_buckets, (unsigned long long)est,
			  (unsigned long long)tw, (unsigned long long)nbuckets);
}

/* ---------------------------------------------------------------- operations */

static void op_net_new(struct input *in)
{
	static const uint32_t bad_sizes[] = { 0, 3, 1u << 25, 65537 };
	static const uint16_t lows[] = { 40000, 1, 1023, 1024, 60000, 65535, 0, 40000 };
	struct socktab_net_params p;
	uint8_t a = u8(in), b = u8(in), c = u8(in), d = u8(in), e = u8(in);
	unsigned int span;
	int slot = -1;

	for (int i = 0; i < MAX_NETS; i++)
		if (!nets[i].net) {
			slot = i;
			break;
		}
	if (slot < 0 || nets_made == MAX_NETS_MADE)
		return;
	nets_made++;
	socktab_net_params_init(&p);
	p.ehash_entries = a & 0x80 ? bad_sizes[a & 3] : 1u << (a % 8);
	p.ehash_locks = a & 0x40 ? 0 : 1u << (b % 4);
	p.bhash_entries = b & 0x80 ? bad_sizes[(b >> 2) & 3] : 1u << ((b >> 2) % 6);
	p.port_low = lows[c % 8];
	span = (c >> 3) % 8;
	if (c & 0x80) /* an empty range: rejected */
		p.port_high = (uint16_t)(p.port_low - 1);
	else
		p.port_high = (uint16_t)(p.port_low + span > 65535 ? 65535 : p.port_low + span);
	p.unprivileged_port_start = d & 1 ? 1024 : (d & 2 ? 0 : 65535);
	p.tw_reuse = (d >> 2) % 4;
	p.tw_reuse_delay_ms = d & 0x10 ? 1 : (d & 0x20 ? 0 : 1000);
	p.tw_len_ms = (uint32_t)(e % 16) * 10;
	p.tcp_timestamps = (d >> 6) & 1;
	p.autobind_reuse = (e >> 4) & 1;
	p.privileged = !((e >> 5) & 1);
	p.variant = (enum socktab_variant)((e >> 6) % 4);
	p.rcu_precheck = (int)(u8(in) % 4) - 2;
	p.lport_hash_inside = (int)(u8(in) % 4) - 2;
	p.fixed_secret = a & 0x20 ? 1 : 0; /* the secret stays zero: worst-case chains */
	p.sock_priv_size = c & 0x40 ? 16 : 0;
	/* The smallest UDP table: socktab_udp_stats() sums every slot, after every call. */
	p.udp_hash_entries = 128;
	p.clock = clock_fn;
	p.clock_arg = &nets[slot];
	if ((b & 3) == 3) {
		for (int i = 0; i < MAX_NETS; i++)
			if (nets[i].net) {
				p.share_tables_with = nets[i].net;
				break;
			}
	}
	p.net_raw = !(d & 0x80);
	nets[slot].net_raw = p.net_raw;
	nets[slot].ndevs = 0;
	nets[slot].naddrs = 0;
	nets[slot].max_ifindex = LO;
	nets[slot].now_ns = 1000000000ull;
	nets[slot].tw_len_ns = (uint64_t)p.tw_len_ms * 1000000ull;
	errno = 0;
	nets[slot].net = socktab_net_new(&p);
	if (!nets[slot].net && errno != EINVAL)
		violation("socktab_net_new failed with errno %d", errno);
}

static void op_net_free(struct input *in)
{
	int n = u8(in) % MAX_NETS;

	if (!nets[n].net)
		return;
	/* A net whose tables another net shares may go first: the tables are reference counted. */
	socktab_net_free(nets[n].net);
	nets[n].net = NULL;
	for (int i = 0; i < nsocks;)
		if (socks[i].net == n)
			drop_sock(i);
		else
			i++;
	for (int i = 0; i < ntw;)
		if (tws[i].net == n)
			drop_tw(i);
		else
			i++;
}

static int pick_net(struct input *in)
{
	int n = u8(in) % MAX_NETS;

	for (int k = 0; k < MAX_NETS; k++, n = (n + 1) % MAX_NETS)
		if (nets[n].net)
			return n;
	return -1;
}

static void op_socket(struct input *in)
{
	static const int families[] = { AF_INET, AF_INET6, AF_INET, AF_INET6, AF_UNIX, 0, -1, 255 };
	int n = pick_net(in);
	uint8_t c = u8(in);
	/* Mostly TCP, one in four UDP, and garbage. */
	int proto = c & 0x80 ? (int)(c & 0x7f) - 2 : (c & 0x60) == 0x60 ? SOCKTAB_UDP : SOCKTAB_TCP;
	struct socktab_sock *sk;

	if (n < 0 || nsocks == MAX_SOCKS)
		return;
	errno = 0;
	sk = socktab_socket(nets[n].net, proto, families[c % 8]);
	if (!sk) {
		if (errno != EINVAL && errno != EPROTONOSUPPORT && errno != EAFNOSUPPORT)
			violation("socktab_socket failed with errno %d", errno);
		return;
	}
	if (proto != SOCKTAB_TCP && proto != SOCKTAB_UDP)
		violation("socket() accepted protocol %d", proto);
	socks[nsocks].sk = sk;
	socks[nsocks].net = n;
	socks[nsocks].udp = proto == SOCKTAB_UDP;
	nsocks++;
}

static int pick_sock(struct input *in)
{
	return nsocks ? u8(in) % nsocks : -1;
}

static int sock_family(int i)
{
	return socktab_sock_family(socks[i].sk);
}

static void op_close(struct input *in)
{
	int i = pick_sock(in), st, n, dev = 0, l3 = 0;
	bool again = u8(in) & 1, had_tuple, active, abort_close, ambiguous, made;
	struct socktab_sock *sk, *f;
	struct linger lg = { 0, 0 };
	socklen_t ll = sizeof(lg);
	struct tuple t;

	if (i < 0)
		return;
	sk = socks[i].sk;
	n = socks[i].net;
	st = socktab_get_state(sk);
	had_tuple = !socks[i].udp && socktab__ehash_hashed(sk) && st != SOCKTAB_TCP_LISTEN &&
		    sock_tuple(sk, &t);
	if (had_tuple) {
		dev = sock_dev(sk);
		l3 = sk_bucket_l3mdev(sk);
	}
	socktab_getsockopt(sk, SOL_SOCKET, SO_LINGER, &lg, &ll);
	active = st == SOCKTAB_TCP_ESTABLISHED || st == SOCKTAB_TCP_FIN_WAIT1 ||
		 st == SOCKTAB_TCP_FIN_WAIT2 || st == SOCKTAB_TCP_CLOSING;
	abort_close = lg.l_onoff && lg.l_linger == 0;
	if (socktab_close(sk))
		violation("close of an open socket failed");
	drop_sock(i);
	/* Nothing ran since: the object cannot have been handed out again. */
	if (again && socktab_close(sk) != -EBADF)
		violation("second close did not give -EBADF");
	if (!had_tuple)
		return;
	made = note_new_tw(n, &t, dev, l3, &ambiguous);
	if (made && (!active || abort_close))
		violation("close in state %d (linger %d/%d) left a TIME_WAIT entry", st,
			  lg.l_onoff, lg.l_linger);
	if (!made && active && !abort_close && !ambiguous)
		violation("active close in state %d left no TIME_WAIT entry", st);
	/* The socket is gone from ehash: a lookup on its device finds the entry that replaced it,
	 * or another of the model's, never the closed socket (check_result: unknown). */
	f = lookup_est(nets[n].net, &t, home_dif(dev), 0, cur_op);
	if (f == sk)
		violation("the closed socket's 4-tuple is still found in state %d", RD(f->state));
	check_result(n, f, &t, false, home_dif(dev), 0);
}

static void op_setsockopt(struct input *in, int i)
{
	static const struct {
		int level, opt;
	} opts[] = {
		{ SOL_SOCKET, SO_REUSEADDR },	      { SOL_SOCKET, SO_REUSEPORT },
		{ SOL_SOCKET, SO_LINGER },	      { IPPROTO_IPV6, IPV6_V6ONLY },
		{ IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT }, { IPPROTO_IP, IP_LOCAL_PORT_RANGE },
		{ SOCKTAB_SOL, SOCKTAB_SO_UID },      { SOL_SOCKET, SO_BINDTOIFINDEX },
	};
	static const socklen_t lens[] = { 4, 4, 4, 8, 0, 1, 3, 16 };
	uint8_t c = u8(in), l = u8(in);
	int level = opts[c % 8].level, opt = opts[c % 8].opt;
	unsigned char val[16];
	socklen_t len = lens[l % 8];
	uint32_t v = u32(in);

	if (c & 0x80) { /* garbage level and option */
		level = (int)u16(in) - 8;
		opt = (int)u8(in) - 8;
	}
	if (opt == SO_LINGER && level == SOL_SOCKET && !(l & 0x40))
		len = sizeof(struct linger);
	if (!(l & 0x20)) /* small values: flags, uids, devices, port ranges near the nets' */
		v = (c & 0x40) ? (40003u << 16 | 40000u) + (v & 3) : v % 3;
	memset(val, 0, sizeof(val));
	memcpy(val, &v, sizeof(v));
	memcpy(val + 4, &v, sizeof(v));
	(void)socktab_setsockopt(socks[i].sk, level, opt, (l & 0x10) ? NULL : val, len);
}

static void op_getsockopt(struct input *in, int i)
{
	static const int known[][2] = {
		{ SOL_SOCKET, SO_REUSEADDR },	      { SOL_SOCKET, SO_REUSEPORT },
		{ SOL_SOCKET, SO_LINGER },	      { IPPROTO_IPV6, IPV6_V6ONLY },
		{ IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT }, { IPPROTO_IP, IP_LOCAL_PORT_RANGE },
		{ SOL_SOCKET, SO_ERROR },	      { SOL_SOCKET, SO_ACCEPTCONN },
	};
	uint8_t c = u8(in), l = u8(in);
	unsigned char buf[32];
	socklen_t len = l % 20, given = len;
	int err;

	memset(buf, 0xa5, sizeof(buf));
	err = socktab_getsockopt(socks[i].sk, c & 0x80 ? (int)u8(in) : known[c % 8][0],
				 c & 0x80 ? (int)u8(in) : known[c % 8][1], (l & 0x80) ? NULL : buf,
				 (l & 0x40) ? NULL : &len);
	if (err || (l & 0xc0))
		return;
	if (len > given)
		violation("getsockopt grew optlen from %u to %u", given, len);
	for (size_t k = given; k < sizeof(buf); k++)
		if (buf[k] != 0xa5)
			violation("getsockopt wrote byte %zu past optlen %u", k, given);
}

static void op_child(struct input *in, int i)
{
	struct sockaddr_storage l, r;
	socklen_t ll = sizeof(l), lenr;
	struct socktab_sock *c;
	int fam = sock_family(i), n = socks[i].net, ldev = sock_dev(socks[i].sk), dif, sdif, want;
	uint8_t dc;

	if (fam < 0 || nsocks == MAX_SOCKS)
		return;
	lenr = pick_addr(in, n, fam, &r);
	/* Mostly the listener's own address and port as the SYN's destination. */
	if ((u8(in) & 3) || socktab_getsockname(socks[i].sk, (struct sockaddr *)&l, &ll)) {
		ll = pick_addr(in, n, fam, &l);
	} else if (fam == AF_INET && ((struct sockaddr_in *)&l)->sin_addr.s_addr == 0) {
		((struct sockaddr_in *)&l)->sin_addr.s_addr = htonl(0x7f000001);
	} else if (fam == AF_INET6 &&
		   socktab__v6_is_any(&((struct sockaddr_in6 *)&l)->sin6_addr)) {
		((struct sockaddr_in6 *)&l)->sin6_addr = in6addr_loopback;
	}
	/* The SYN's ingress device: mostly the listener's own (lo for an unbound one) with its
	 * VRF, else any pair. */
	dc = u8(in);
	dif = dc & 3 ? home_dif(ldev) : pick_ifindex(n, (uint8_t)(dc >> 2), true);
	sdif = dc & 3 ? (dc & 4 ? 0 : mdev_master(n, dif)) : pick_sdif(n, dif, (uint8_t)(dc >> 5));
	errno = 0;
	c = socktab_sock_new_child(socks[i].sk, (struct sockaddr *)&l, (struct sockaddr *)&r,
				   u8(in) & 1 ? ll : lenr, dif, sdif);
	if (!c) {
		if (errno != EINVAL && errno != EADDRINUSE)
			violation("socktab_sock_new_child failed with errno %d", errno);
		return;
	}
	/*
	 * R94: the child takes the listener's device; a child of an unbound listener gets the
	 * ingress device for an IPv6 link-local peer, else the VRF with tcp_l3mdev_accept.
	 */
	{
		const struct sockaddr_in6 *r6 = (const struct sockaddr_in6 *)&r;
		bool ll_peer = fam == AF_INET6 && r6->sin6_addr.s6_addr[0] == 0xfe &&
			       (r6->sin6_addr.s6_addr[1] & 0xc0) == 0x80;

		want = ldev ? ldev : ll_peer ? dif : tcp_accept(n) ? sdif : 0;
		if (sock_dev(c) != want)
			violation("child of a listener on device %d (SYN on dif %d sdif %d) is "
				  "bound to device %d, not %d", ldev, dif, sdif, sock_dev(c), want);
	}
	/* No segment carries a v4-mapped address on one side and native IPv6 on the other:
	 * socktab_sock_new_child() refuses such a pair. */
	{
		struct sockaddr_in6 cl, cr;
		socklen_t a = sizeof(cl), b = sizeof(cr);

		if (fam == AF_INET6 && !socktab_getsockname(c, (struct sockaddr *)&cl, &a) &&
		    !socktab_sock_peer(c, (struct sockaddr *)&cr, &b) &&
		    socktab__v6_is_mapped(&cl.sin6_addr) != socktab__v6_is_mapped(&cr.sin6_addr))
			violation("a child with a v4-mapped address on one side only");
	}
	socks[nsocks].sk = c;
	socks[nsocks].net = socks[i].net;
	socks[nsocks].udp = false;
	nsocks++;
}

/*
 * A lookup of any kind with any key and any (dif, sdif): the result must carry the key, take the
 * device (check_result, check_udp_result) and be the model's; the RCU-scoped form and the burst
 * form must agree with the referenced one.
 */
static void op_lookup(struct input *in)
{
	int n = pick_net(in);
	uint8_t c = u8(in), a = u8(in), b = u8(in);
	struct tuple t;
	struct socktab_sock *f, *g;
	struct socktab_net *net;
	int dif, sdif;

	if (n < 0)
		return;
	net = nets[n].net;
	memset(&t, 0, sizeof(t));
	t.family = c & 1 ? AF_INET6 : AF_INET;
	t.rport = htons(pick_port(in));
	t.lport = htons(pick_port(in));
	/* Bit 6 of a or b: a device address instead. */
	if (t.family == AF_INET) {
		inet_pton(AF_INET, a & 0x40 ? dev_v4[a % 8] : v4_addrs[a % 8],
			  &t.raddr.s6_addr32[3]);
		inet_pton(AF_INET, b & 0x40 ? dev_v4[b % 8] : v4_addrs[b % 8],
			  &t.laddr.s6_addr32[3]);
	} else {
		inet_pton(AF_INET6, a & 0x40 ? dev_v6[a % 8] : v6_addrs[a % 8], &t.raddr);
		inet_pton(AF_INET6, b & 0x40 ? dev_v6[b % 8] : v6_addrs[b % 8], &t.laddr);
	}
	{
		uint8_t d = u8(in);

		/* Half of them from lo, as before devices existed. */
		dif = d & 1 ? pick_ifindex(n, (uint8_t)(d >> 1), false) : LO;
		sdif = d & 1 ? pick_sdif(n, dif, u8(in)) : 0;
	}
	switch ((c >> 1) % 5) {
	case 4:
		f = lookup_udp(net, &t, dif, sdif, 0);
		g = lookup_udp(net, &t, dif, sdif, 1);
		if (f != g)
			violation("UDP lookup gave %p, its RCU-scoped form %p", (void *)f,
				  (void *)g);
		socktab_sock_put(g);
		check_udp_result(n, f, &t, dif, sdif);
		break;
	case 0:
		f = lookup_est(net, &t, dif, sdif, 0);
		for (int how = 1; how < 3; how++) {
			g = lookup_est(net, &t, dif, sdif, how);
			if (f != g)
				violation("established lookup gave %p, form %d %p", (void *)f, how,
					  (void *)g);
			socktab_sock_put(g);
		}
		check_result(n, f, &t, false, dif, sdif);
		break;
	case 1:
		if (t.family == AF_INET) {
			f = socktab_lookup_listener4(net, t.raddr.s6_addr32[3], t.rport,
						     t.laddr.s6_addr32[3], t.lport, dif, sdif);
			socktab_rcu_read_lock();
			g = socktab_lookup_listener4_rcu(net, t.raddr.s6_addr32[3], t.rport,
							 t.laddr.s6_addr32[3], t.lport, dif, sdif);
		} else {
			f = socktab_lookup_listener6(net, &t.raddr, t.rport, &t.laddr, t.lport, dif,
						     sdif);
			socktab_rcu_read_lock();
			g = socktab_lookup_listener6_rcu(net, &t.raddr, t.rport, &t.laddr, t.lport,
							 dif, sdif);
		}
		socktab_rcu_read_unlock();
		if (f != g)
			violation("listener lookup gave %p, its RCU-scoped form %p", (void *)f,
				  (void *)g);
		check_result(n, f, &t, true, dif, sdif);
		break;
	default: {
		const void *ra = t.family == AF_INET ? (const void *)&t.raddr.s6_addr32[3] : &t.raddr;
		const void *la = t.family == AF_INET ? (const void *)&t.laddr.s6_addr32[3] : &t.laddr;

		f = socktab_lookup_tcp(net, t.family, ra, t.rport, la, t.lport, dif, sdif);
		socktab_rcu_read_lock();
		g = t.family == AF_INET
			    ? socktab_lookup_tcp4_rcu(net, t.raddr.s6_addr32[3], t.rport,
						      t.laddr.s6_addr32[3], t.lport, dif, sdif)
			    : socktab_lookup_tcp6_rcu(net, &t.raddr, t.rport, &t.laddr, t.lport,
						      dif, sdif);
		socktab_rcu_read_unlock();
		if (f != g)
			violation("TCP lookup gave %p, its RCU-scoped form %p", (void *)f,
				  (void *)g);
		if (t.family == AF_INET) {
			/* The burst form, with the key twice and a neighbour on another device. */
			struct socktab_tuple4 k[3];
			struct socktab_sock *out[3];
			int other = other_dif(n, dif, cur_op);
			int r;

			for (int j = 0; j < 3; j++) {
				k[j].saddr = t.raddr.s6_addr32[3];
				k[j].daddr = t.laddr.s6_addr32[3];
				k[j].sport = t.rport;
				k[j].dport = t.lport;
				k[j].dif = j < 2 ? dif : other;
				k[j].sdif = j < 2 ? sdif : 0;
			}
			r = socktab_lookup_tcp_burst(net, k, 3, out, 0);
			if (out[0] != f || out[1] != f ||
			    r != 2 * (f != NULL) + (out[2] != NULL))
				violation("burst lookup gave %p %p (%d found), single lookup %p",
					  (void *)out[0], (void *)out[1], r, (void *)f);
			socktab_sock_put(out[0]);
			socktab_sock_put(out[1]);
			if (out[2] && RD(out[2]->state) == SOCKTAB_TCP_LISTEN)
				check_result(n, out[2], &t, true, other, 0);
			else
				check_result(n, out[2], &t, false, other, 0);
		}
		/* Established first, then listeners: a result is one or the other. */
		if (f && RD(f->state) == SOCKTAB_TCP_LISTEN)
			check_result(n, f, &t, true, dif, sdif);
		else
			check_result(n, f, &t, false, dif, sdif);
	}
	}
}

static void op_sysctl(struct input *in)
{
	static const char *const keys[] = {
		"net.ipv4.ip_local_port_range",	    "net.ipv4.ip_local_reserved_ports",
		"net.ipv4.ip_autobind_reuse",	    "net.ipv4.ip_unprivileged_port_start",
		"net.ipv4.tcp_tw_reuse",	    "net.ipv4.tcp_tw_reuse_delay",
		"net.core.somaxconn",		    "net.ipv4.tcp_fastopen",
		"net.ipv4.tcp_syncookies",	    "net.ipv4.nope",
		"",				    "net.ipv4.ip_local_port_range.",
		"net.ipv4.tcp_l3mdev_accept",	    "net.ipv4.udp_l3mdev_accept",
		"net.ipv4.ip_nonlocal_bind",	    "net.ipv6.ip_nonlocal_bind",
	};
	static const char *const values[] = {
		"0",	 "1",	  "2",	       "3",	    "-1",	   "40000 40003", "40003 40000",
		"1 1",	 "",	  "40000-40001", "40001,40002", "abc",	   "99999999999999999999",
		"1024",	 "65535 65535", "0 0", " 40000\t40007 ", "5,6-7,", "1 2 3", "40000 40001x",
	};
	int n = pick_net(in);
	uint8_t k = u8(in), v = u8(in);
	char key[64], val[32];

	if (n < 0)
		return;
	snprintf(key, sizeof(key), "%s", keys[k % 16]);
	snprintf(val, sizeof(val), "%s", values[v % 20]);
	if (k & 0x80) { /* raw bytes as the value, NUL-terminated */
		size_t len = u8(in) % (sizeof(val) - 1);

		for (size_t j = 0; j < len; j++)
			val[j] = (char)u8(in);
		val[len] = 0;
	}
	(void)socktab_net_sysctl(nets[n].net, key, val);
}

static void op_settings(struct input *in)
{
	static const int ports[] = { 0, 1, 1023, 1024, 40000, 40003, 65535, 65536 };
	int n = pick_net(in), lo, hi;
	uint8_t c = u8(in), a = u8(in), b = u8(in);
	struct socktab_net *net;

	if (n < 0)
		return;
	net = nets[n].net;
	switch (c % 4) {
	case 0:
		(void)socktab_net_set_port_range(net, ports[a % 8] + (a >> 5), ports[b % 8] + (b >> 5));
		break;
	case 1:
		(void)socktab_net_set_reserved(net, ports[a % 8] + (a >> 5), ports[b % 8] + (b >> 5),
					       c & 0x10);
		break;
	case 2:
		(void)socktab_net_set_tw_reuse(net, (int)(a % 5) - 1);
		break;
	default:
		if (socktab_net_get_port_range(net, &lo, &hi) || lo < 1 || hi < lo || hi > 65535)
			violation("port range %d-%d", lo, hi);
	}
}

static void op_time(struct input *in)
{
	int n = pick_net(in);
	uint8_t c = u8(in);

	if (n < 0)
		return;
	nets[n].now_ns += (uint64_t)(c % 64) * (c % 64) * 1000000ull;
	if (c & 0x80) {
		int r = socktab_net_tick(nets[n].net);

		if (r < 0)
			violation("socktab_net_tick returned %d", r);
	}
}

/* Counters a failed call must leave alone (the others count attempts). */
struct snap {
	struct socktab_net_stats st[MAX_NETS];
	struct socktab_udp_stats us[MAX_NETS];
};

static void take_snap(struct snap *s)
{
	for (int n = 0; n < MAX_NETS; n++)
		if (nets[n].net) {
			socktab_net_stats(nets[n].net, &s->st[n]);
			socktab_udp_stats(nets[n].net, &s->us[n]);
		}
}

static void check_unchanged(const struct snap *s, const char *call, int err, bool kept_port)
{
	for (int n = 0; n < MAX_NETS; n++) {
		struct socktab_net_stats now;
		struct socktab_udp_stats unow;
		const struct socktab_net_stats *b = &s->st[n];
		bool lazy = tw_may_have_expired(n);

		if (!nets[n].net)
			continue;
		socktab_net_stats(nets[n].net, &now);
		socktab_udp_stats(nets[n].net, &unow);
		if ((unow.hashed != s->us[n].hashed && !kept_port) ||
		    unow.hashed4 != s->us[n].hashed4)
			violation("failed %s (%d) changed net %d's UDP counters", call, err, n);
		if (now.established != b->established || now.connects != b->connects ||
		    now.tw_recycled != b->tw_recycled ||
		    (!lazy && (now.time_wait != b->time_wait ||
			       (now.bind_buckets != b->bind_buckets && !kept_port))))
			violation("failed %s (%d) changed net %d's counters: established %llu->%llu "
				  "time_wait %llu->%llu bind_buckets %llu->%llu",
				  call, err, n, (unsigned long long)b->established,
				  (unsigned long long)now.established, (unsigned long long)b->time_wait,
				  (unsigned long long)now.time_wait, (unsigned long long)b->bind_buckets,
				  (unsigned long long)now.bind_buckets);
	}
}

/* A socket call on handle @i: on failure, the socket's state and local name must be unchanged. */
static void sock_call(struct input *in, int kind, int i)
{
	struct socktab_sock *sk = socks[i].sk;
	struct sockaddr_storage a, before, after;
	socklen_t lb = sizeof(before), la = sizeof(after), len;
	static const char *const names[] = { "bind", "connect", "listen", "set_state" };
	static const int backlogs[] = { -1, 0, 1, 16, 0x7fffffff, 4097, -2, 5 };
	/* Mostly the states an embedding stack moves a connection through; then the rest. */
	static const int states[] = {
		SOCKTAB_TCP_ESTABLISHED, SOCKTAB_TCP_ESTABLISHED, SOCKTAB_TCP_FIN_WAIT1,
		SOCKTAB_TCP_FIN_WAIT2,	 SOCKTAB_TCP_CLOSING,	  SOCKTAB_TCP_CLOSE_WAIT,
		SOCKTAB_TCP_LAST_ACK,	 SOCKTAB_TCP_SYN_RECV,	  SOCKTAB_TCP_SYN_SENT,
		SOCKTAB_TCP_CLOSE,	 SOCKTAB_TCP_LISTEN,	  SOCKTAB_TCP_TIME_WAIT,
		0,			 -1,			  12,
		255,
	};
	int st = socktab_get_state(sk), err = 0, eb, ea, n = socks[i].net, state = 0;
	int num0 = socktab__sk_num(sk);
	bool locked0 = !socks[i].udp && (sk->userlocks & SOCKTAB__BINDADDR_LOCK),
	     saddr_any0 = socktab__skf(sk, SOCKTAB__SKF_SADDR_ANY);
	int dev0 = sock_dev(sk), dev1, l3 = sk_bucket_l3mdev(sk);
	struct snap s;
	struct tuple t0;
	bool had_tuple = !socks[i].udp && socktab__ehash_hashed(sk) &&
			 st != SOCKTAB_TCP_LISTEN && sock_tuple(sk, &t0);

	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));
	memset(&a, 0, sizeof(a));
	eb = socktab_getsockname(sk, (struct sockaddr *)&before, &lb);
	take_snap(&s);
	switch (kind) {
	case 0:
		len = pick_addr(in, n, sock_family(i), &a);
		err = socktab_bind(sk, u8(in) == 0xff ? NULL : (struct sockaddr *)&a, len);
		break;
	case 1:
		len = pick_addr(in, n, sock_family(i), &a);
		err = socktab_connect(sk, (struct sockaddr *)&a, len);
		break;
	case 2:
		err = socktab_listen(sk, backlogs[u8(in) % 8]);
		break;
	default:
		state = states[u8(in) % 16];
		err = socktab_set_state(sk, state);
	}
	if (trace)
		fprintf(stderr, "op %d: %s(socket %d) = %d\n", cur_op, names[kind], i, err);
	if (err > 0)
		violation("%s returned %d", names[kind], err);
	dev1 = sock_dev(sk);
	if (!err) {
		bool ambiguous;

		/* tcp_time_wait() for a held socket: an entry takes over its 4-tuple and device. */
		if (kind == 3 && state == SOCKTAB_TCP_TIME_WAIT && had_tuple &&
		    !note_new_tw(n, &t0, dev0, l3, &ambiguous) && !ambiguous)
			violation("set_state(TIME_WAIT) made no TIME_WAIT entry");
		/* A UDP disconnect drops the device binding, a TCP one keeps it (R75, R89). */
		if (kind == 1 && a.ss_family == AF_UNSPEC && dev1 != (socks[i].udp ? 0 : dev0))
			violation("%s disconnect left device %d (was %d)",
				  socks[i].udp ? "UDP" : "TCP", dev1, dev0);
		return;
	}
	/*
	 * A failed call keeps the device binding, except that the scope id of a link-local
	 * address binds the socket before anything can fail (R86, R96).
	 */
	if (dev1 != dev0) {
		const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&a;
		bool scoped = kind <= 1 && a.ss_family == AF_INET6 &&
			      a6->sin6_addr.s6_addr[0] == 0xfe &&
			      (a6->sin6_addr.s6_addr[1] & 0xc0) == 0x80 &&
			      (int)a6->sin6_scope_id == dev1;

		if (!scoped)
			violation("failed %s (%d) changed the device from %d to %d", names[kind],
				  err, dev0, dev1);
	}
	/*
	 * Like the kernel (inet_dgram_connect autobinds before the protocol's connect), a UDP
	 * connect() that fails may leave the port it auto-bound: one exception, counted by
	 * udp_autobind_kept.
	 */
	bool autobind = socks[i].udp && kind == 1 && !eb &&
			((struct sockaddr_in *)&before)->sin_port == 0 &&
			socktab__sk_num(sk) != 0;

	udp_autobind_kept += autobind;
	/* The other: R104's role lock refuses listen() on a socket that has been active after
	 * listen() got its port, which a socket that had none keeps. */
	if (!socks[i].udp && kind == 2 && err == -EINVAL && !num0 && socktab__sk_num(sk))
		autobind = true;
	/* And a TCP connect() failing in its port search gives back a port bind(0) gave, as the
	 * kernel's tcp_set_state(CLOSE) does (getsockname still shows it). */
	if (!socks[i].udp && kind == 1 && num0 && !socktab__sk_num(sk) &&
	    !(sk->userlocks & SOCKTAB__BINDPORT_LOCK))
		autobind = true;
	check_unchanged(&s, names[kind], err, autobind);
	ea = socktab_getsockname(sk, (struct sockaddr *)&after, &la);
	/*
	 * The kernel's __inet_bind() zeroes inet_rcv_saddr when get_port() fails: a socket that
	 * kept its address from an earlier bind (a reset listener or connection, bind() again)
	 * reports the wildcard address with its old port after the failed bind. socktab copies
	 * that; any other change of the name is a violation.
	 */
	const struct sockaddr_in6 *b6 = (const void *)&before, *a6 = (const void *)&after;
	bool wild = after.ss_family == AF_INET
			    ? ((const struct sockaddr_in *)&after)->sin_addr.s_addr == 0
			    : socktab__v6_is_any(&a6->sin6_addr);
	bool unbound_addr = kind == 0 && !eb && !ea && la == lb &&
			    before.ss_family == after.ss_family && b6->sin6_port == a6->sin6_port &&
			    wild;
	/*
	 * A TCP socket with a locked address but no source (bound to a broadcast address, or to
	 * the wildcard after bind(addr, 0) with IP_BIND_ADDRESS_NO_PORT): a connect() that fails
	 * after its route keeps the route's source, as the kernel's reset leaves a locked address
	 * alone (R104). Its port stays.
	 */
	bool wild0 = before.ss_family == AF_INET
			     ? ((const struct sockaddr_in *)&before)->sin_addr.s_addr == 0
			     : socktab__v6_is_any(&b6->sin6_addr);
	bool route_src = kind == 1 && locked0 && (saddr_any0 || wild0) && !eb && !ea && la == lb &&
			 b6->sin6_port == a6->sin6_port;

	if (socktab_get_state(sk) != st || ea != eb || la != lb ||
	    (!autobind && !unbound_addr && !route_src && memcmp(&before, &after, lb))) {
		char nb[INET6_ADDRSTRLEN] = "?", na[INET6_ADDRSTRLEN] = "?";

		if (before.ss_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)&before)->sin_addr, nb,
				  sizeof(nb));
		else
			inet_ntop(AF_INET6, &b6->sin6_addr, nb, sizeof(nb));
		if (after.ss_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)&after)->sin_addr, na,
				  sizeof(na));
		else
			inet_ntop(AF_INET6, &a6->sin6_addr, na, sizeof(na));
		/* sin_port and sin6_port share their offset. */
		violation("failed %s (%d) changed the socket: state %d -> %d, name %s:%u -> %s:%u",
			  names[kind], err, st, socktab_get_state(sk), nb, ntohs(b6->sin6_port),
			  na, ntohs(a6->sin6_port));
	}
}

/* ---------------------------------------------------------------- devices */

/* The kernel's dev_valid_name(), as socktab_dev_add() documents it. */
static bool name_valid(const char *name)
{
	size_t len = strlen(name);

	if (!len || len >= SOCKTAB_IFNAMSIZ || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	return !strpbrk(name, "/: \t\n");
}

/* The live device named @name: its ifindex (lo: 1), or 0. */
static int mdev_by_name(int n, const char *name)
{
	if (!strcmp(name, "lo"))
		return LO;
	for (int k = 0; k < nets[n].ndevs; k++)
		if (nets[n].devs[k].alive && !strcmp(nets[n].devs[k].name, name))
			return nets[n].devs[k].ifindex;
	return 0;
}

static bool in_prefix(const struct in6_addr *a, const struct in6_addr *b, int family, int plen)
{
	int bits = family == AF_INET ? 96 + plen : plen;

	for (int k = 0; k < 16; k++, bits -= 8) {
		uint8_t m = bits >= 8 ? 0xff : bits <= 0 ? 0 : (uint8_t)(0xff << (8 - bits));

		if ((a->s6_addr[k] ^ b->s6_addr[k]) & m)
			return false;
	}
	return true;
}

/*
 * The device table against the model: flags, masters, names and indexes of lo and of every
 * device ever made (deleted ones are -ENODEV); and R83 for the IPv4 addresses the fuzzer uses:
 * one is local in the main table exactly when a device outside any VRF holds it, or lo holds a
 * prefix around it.
 */
static void check_devs(int n)
{
	struct socktab_net *net = nets[n].net;
	char name[SOCKTAB_IFNAMSIZ];

	if (socktab_dev_flags(net, LO) != (int)(SOCKTAB_DEV_UP | SOCKTAB_DEV_LOOPBACK) ||
	    socktab_dev_master(net, LO) != 0 || socktab_dev_index(net, "lo") != LO)
		violation("lo changed: flags %d", socktab_dev_flags(net, LO));
	for (int k = 0; k < nets[n].ndevs; k++) {
		const struct mdev *d = &nets[n].devs[k];
		int fl = d->alive ? (d->up ? (int)SOCKTAB_DEV_UP : 0) |
					    (d->vrf ? (int)SOCKTAB_DEV_VRF : 0)
				  : -ENODEV;
		int ms = d->alive ? (d->vrf ? d->ifindex : d->master) : -ENODEV;
		int nm = socktab_dev_name(net, d->ifindex, name, sizeof(name));

		if (socktab_dev_flags(net, d->ifindex) != fl ||
		    socktab_dev_master(net, d->ifindex) != ms ||
		    (d->alive ? nm || strcmp(name, d->name) ||
					socktab_dev_index(net, d->name) != d->ifindex
			      : nm != -ENODEV))
			violation("device %d (%s): flags %d master %d name %d, model %d %d",
				  d->ifindex, d->name, socktab_dev_flags(net, d->ifindex),
				  socktab_dev_master(net, d->ifindex), nm, fl, ms);
	}
	for (int k = 0; k < 8; k++) {
		struct in6_addr a;
		struct socktab_route_result res;
		bool local = false, bcast = false;
		int r;

		memset(&a, 0, sizeof(a));
		inet_pton(AF_INET, dev_v4[k], &a.s6_addr32[3]);
		for (int j = 0; j < nets[n].naddrs; j++) {
			const struct maddr *m = &nets[n].addrs[j];
			const struct mdev *d = mdev_get(n, m->ifindex);
			if (m->family != AF_INET)
				continue;
			/* Some subnet's broadcast address too: which route wins is not ours
			 * to say. */
			if (m->plen < 31 &&
			    (ntohl(m->a.s6_addr32[3]) | (m->plen ? ~0u >> m->plen : ~0u)) ==
				    ntohl(a.s6_addr32[3]))
				bcast = true;
			if (m->ifindex == LO)
				local |= in_prefix(&m->a, &a, AF_INET, m->plen);
			else
				local |= d && !d->vrf && !d->master &&
					 m->a.s6_addr32[3] == a.s6_addr32[3];
		}
		if (bcast)
			continue;
		r = socktab_route_lookup(net, AF_INET, &a.s6_addr32[3], 0, &res);
		if (local != (!r && res.type == SOCKTAB_RTN_LOCAL))
			violation("%s is %slocal (route lookup %d, type %d), model %d", dev_v4[k],
				  local ? "not " : "", r, r ? 0 : res.type, local);
	}
}

static void forget_addrs(int n, int ifindex, int family)
{
	for (int j = 0; j < nets[n].naddrs;)
		if (nets[n].addrs[j].ifindex == ifindex &&
		    (!family || nets[n].addrs[j].family == family))
			nets[n].addrs[j] = nets[n].addrs[--nets[n].naddrs];
		else
			j++;
}

static void expect(const char *call, int got, int want)
{
	if (got != want)
		violation("%s returned %d, model %d", call, got, want);
}

static int dev_add_checked(int n, const char *name, bool vrf, uint32_t table, bool up)
{
	struct socktab_net *net = nets[n].net;
	struct mdev *slot = NULL;
	int want = 1, r;

	for (int k = 0; k < nets[n].ndevs && !slot; k++)
		if (!nets[n].devs[k].alive)
			slot = &nets[n].devs[k];
	if (nets[n].ndevs < MAX_DEVS)
		slot = &nets[n].devs[nets[n].ndevs];
	if (!slot)
		return -1; /* the model is full of live devices */
	if (vrf && (!table || table == 254 || table == 255))
		want = -EINVAL;
	else if (!name_valid(name))
		want = -EINVAL;
	else if (mdev_by_name(n, name))
		want = -EEXIST;
	r = vrf ? socktab_dev_add_vrf(net, name, table, up) : socktab_dev_add(net, name, up);
	if (trace)
		fprintf(stderr, "op %d: dev_add(%s, vrf %d, table %u, up %d) = %d\n", cur_op, name,
			vrf, table, up, r);
	if (want < 0) {
		expect("socktab_dev_add", r, want);
		return r;
	}
	if (r <= nets[n].max_ifindex)
		violation("socktab_dev_add(%s) returned %d, not a new ifindex above %d", name, r,
			  nets[n].max_ifindex);
	nets[n].max_ifindex = r;
	if (slot == &nets[n].devs[nets[n].ndevs])
		nets[n].ndevs++;
	memset(slot, 0, sizeof(*slot));
	slot->ifindex = r;
	snprintf(slot->name, sizeof(slot->name), "%s", name);
	slot->alive = true;
	slot->vrf = vrf;
	slot->up = up;
	return r;
}

static int set_master_checked(int n, int ifindex, int master)
{
	struct mdev *d = mdev_get(n, ifindex), *m = mdev_get(n, master);
	int want = 0, r;

	if (!d && ifindex != LO)
		want = -ENODEV;
	else if (!d || d->vrf)
		want = -EINVAL;
	else if (master && !m && master != LO)
		want = -ENODEV;
	else if (master && (!m || !m->vrf))
		want = -EINVAL;
	r = socktab_dev_set_master(nets[n].net, ifindex, master);
	expect("socktab_dev_set_master", r, want);
	if (!r)
		d->master = master;
	return r;
}

/*
 * Add or delete an address with socktab_addr_add/_del, the result predicted by the model:
 * -EINVAL for a bad family, length or address, -ENODEV, -EEXIST (IPv6: the same address;
 * IPv4: the same address and prefix), -EADDRNOTAVAIL; deleting a primary IPv4 address takes
 * its subnet's secondaries along.
 */
static void addr_checked(int n, bool add, int ifindex, int family, const struct in6_addr *a,
			 int plen)
{
	const void *p = family == AF_INET ? (const void *)&a->s6_addr32[3] : (const void *)a;
	uint32_t h = ntohl(a->s6_addr32[3]);
	bool bad = family == AF_INET
			   ? plen < 0 || plen > 32 || !h || h >> 28 == 0xe || h == 0xffffffffu
			   : family != AF_INET6 || plen < 0 || plen > 128 ||
				     socktab__v6_is_any(a) || a->s6_addr[0] == 0xff ||
				     socktab__v6_is_mapped(a);
	int want = 0, found = -1, r;
	bool secondary = false;

	if (bad)
		want = -EINVAL;
	else if (ifindex != LO && !mdev_get(n, ifindex))
		want = -ENODEV;
	for (int j = 0; !want && j < nets[n].naddrs; j++) {
		const struct maddr *m = &nets[n].addrs[j];
		bool same = !memcmp(&m->a, a, 16);

		if (m->ifindex != ifindex || m->family != family)
			continue;
		if (!add) {
			if (same && m->plen == plen)
				found = j;
			continue;
		}
		if (family == AF_INET6 && same)
			want = -EEXIST;
		if (family == AF_INET && m->plen == plen && in_prefix(&m->a, a, AF_INET, plen)) {
			if (same)
				want = -EEXIST;
			secondary = true;
		}
	}
	if (!want && !add && found < 0)
		want = -EADDRNOTAVAIL;
	if (!want && add && nets[n].naddrs == MAX_ADDRS)
		return;
	r = add ? socktab_addr_add(nets[n].net, ifindex, family, p, plen)
		: socktab_addr_del(nets[n].net, ifindex, family, p, plen);
	if (trace)
		fprintf(stderr, "op %d: addr_%s(dev %d, family %d, plen %d) = %d\n", cur_op,
			add ? "add" : "del", ifindex, family, plen, r);
	expect(add ? "socktab_addr_add" : "socktab_addr_del", r, want);
	if (r)
		return;
	if (add) {
		struct maddr *m = &nets[n].addrs[nets[n].naddrs++];

		m->ifindex = ifindex;
		m->family = family;
		m->plen = plen;
		m->a = *a;
		m->secondary = secondary;
		return;
	}
	struct maddr gone = nets[n].addrs[found];

	nets[n].addrs[found] = nets[n].addrs[--nets[n].naddrs];
	for (int j = 0; family == AF_INET && !gone.secondary && j < nets[n].naddrs;) {
		const struct maddr *m = &nets[n].addrs[j];

		if (m->secondary && m->ifindex == ifindex && m->family == AF_INET &&
		    m->plen == gone.plen && in_prefix(&m->a, &gone.a, AF_INET, gone.plen))
			nets[n].addrs[j] = nets[n].addrs[--nets[n].naddrs];
		else
			j++;
	}
}

static void addr_str(int n, bool add, int ifindex, const char *s, int plen)
{
	struct in6_addr a;
	int family = strchr(s, ':') ? AF_INET6 : AF_INET;

	memset(&a, 0, sizeof(a));
	inet_pton(family, s, family == AF_INET ? (void *)&a.s6_addr32[3] : (void *)&a);
	addr_checked(n, add, ifindex, family, &a, plen);
}

/*
 * The default net's devices, so that short inputs reach them: d0 and d1 (up, with one
 * link-local address on both), a VRF v0 (table 10) and its slave d2.
 */
static void default_devices(int n)
{
	int d0 = dev_add_checked(n, "d0", false, 0, true);
	int d1 = dev_add_checked(n, "d1", false, 0, true);
	int v0 = dev_add_checked(n, "v0", true, 10, true);
	int d2 = dev_add_checked(n, "d2", false, 0, true);

	if (d0 < 0 || d1 < 0 || v0 < 0 || d2 < 0 || set_master_checked(n, d2, v0))
		violation("the default devices could not be made");
	addr_str(n, true, d0, "192.0.2.1", 24);
	addr_str(n, true, d0, "2001:db8::1", 64);
	addr_str(n, true, d0, "fe80::1", 64);
	addr_str(n, true, d1, "198.51.100.1", 24);
	addr_str(n, true, d1, "fe80::1", 64);
	addr_str(n, true, d2, "203.0.113.1", 24);
	addr_str(n, true, d2, "2001:db8:1::1", 64);
	check_devs(n);
}

/* A device of the net for device calls: lo, one of the net's (live or deleted), or none. */
static int pick_dev(int n, uint8_t c)
{
	if (c % 8 == 0)
		return LO;
	if (c % 8 == 1)
		return NO_DEV;
	if (!nets[n].ndevs)
		return LO;
	return nets[n].devs[(c >> 3) % nets[n].ndevs].ifindex;
}

static void op_dev(struct input *in)
{
	static const char *const names[] = { "d0", "d1", "d2", "d3", "v1", "lo", "",
					      "a/b", "0123456789abcdef", "012345678901234", ".",
					      "d0 " };
	static const uint32_t tables[] = { 10, 11, 12, 0, 254, 255, 10, 0xffffffffu };
	int n = pick_net(in);
	uint8_t c = u8(in), x = u8(in), y = u8(in);
	int ifindex, want, r;
	struct mdev *d;

	if (n < 0)
		return;
	switch (c % 8) {
	case 0:
	case 1:
		dev_add_checked(n, names[x % 12], false, 0, y & 1);
		break;
	case 2:
		dev_add_checked(n, names[x % 12], true, tables[y % 8], (y >> 3) & 1);
		break;
	case 3:
		ifindex = pick_dev(n, x);
		d = mdev_get(n, ifindex);
		r = socktab_dev_del(nets[n].net, ifindex);
		expect("socktab_dev_del", r, ifindex == LO ? -EINVAL : d ? 0 : -ENODEV);
		if (r)
			break;
		d->alive = false;
		d->up = false;
		for (int k = 0; k < nets[n].ndevs; k++)
			if (nets[n].devs[k].master == ifindex)
				nets[n].devs[k].master = 0;
		forget_addrs(n, ifindex, 0);
		break;
	case 4:
	case 5:
		ifindex = pick_dev(n, x);
		d = mdev_get(n, ifindex);
		want = ifindex == LO ? (y & 1 ? 0 : -EINVAL) : d ? 0 : -ENODEV;
		r = socktab_dev_set_up(nets[n].net, ifindex, y & 1);
		expect("socktab_dev_set_up", r, want);
		if (r || !d)
			break;
		if (!(y & 1) && d->up)
			forget_addrs(n, ifindex, AF_INET6); /* addrconf_ifdown (R84) */
		d->up = y & 1;
		break;
	default:
		set_master_checked(n, pick_dev(n, x), y & 1 ? 0 : pick_dev(n, (uint8_t)(y >> 1)));
	}
	check_devs(n);
}

static void op_addr(struct input *in)
{
	static const char *const bad4[] = { "0.0.0.0", "224.0.0.1", "255.255.255.255", "10.1.2.3" };
	static const char *const bad6[] = { "::", "ff02::1", "::ffff:192.0.2.1", "2001:db8:ff::1" };
	int n = pick_net(in);
	uint8_t c = u8(in), x = u8(in), y = u8(in);
	int ifindex, family, plen;
	struct in6_addr a;

	if (n < 0)
		return;
	ifindex = pick_dev(n, x);
	if ((c & 6) == 6 && nets[n].naddrs) { /* delete one the model has (or a neighbour) */
		const struct maddr *m = &nets[n].addrs[y % nets[n].naddrs];

		addr_checked(n, false, c & 8 ? ifindex : m->ifindex, m->family, &m->a,
			     c & 16 ? m->plen + 1 : m->plen);
		check_devs(n);
		return;
	}
	family = c & 1 ? AF_INET6 : AF_INET;
	memset(&a, 0, sizeof(a));
	if (family == AF_INET) {
		inet_pton(AF_INET, c & 0x80 ? bad4[y % 4] : dev_v4[y % 8], &a.s6_addr32[3]);
		plen = c & 0x40 ? (int)(y >> 3) % 40 - 2 : dev_plens4[(y >> 3) % 4];
	} else {
		inet_pton(AF_INET6, c & 0x80 ? bad6[y % 4] : dev_v6[y % 8], &a);
		plen = c & 0x40 ? (int)(y >> 3) % 140 - 2 : dev_plens6[(y >> 3) % 4];
	}
	if ((c & 0x30) == 0x30)
		family = (int)(y >> 5) * 3; /* 0, 3, 6, ...: no address family */
	addr_checked(n, !(c & 2), ifindex, family, &a, plen);
	check_devs(n);
}

/*
 * Device options on a socket: SO_BINDTOIFINDEX (any index, none, a deleted or unknown one,
 * negative), SO_BINDTODEVICE (names, with any optlen), IP(V6)_FREEBIND and IP(V6)_TRANSPARENT.
 * R89: an index >= 0 is taken without looking for a device, a name must name a live one
 * (ENODEV), "" or optlen 0 unbinds, and only the first binding is free (EPERM without
 * net_raw). Read back: the index as stored, the name or ENODEV for a stale index. A failed
 * call changes nothing.
 */
static void op_sockdev(struct input *in)
{
	static const char *const names[] = { "d0", "d1", "d2", "v0", "lo", "", "nope",
					      "0123456789abcdef" };
	int i = pick_sock(in), n, dev0, dev1, want = 0, want_dev, r;
	uint8_t c = u8(in), v = u8(in);
	struct socktab_sock *sk;
	char buf[SOCKTAB_IFNAMSIZ + 4], name[SOCKTAB_IFNAMSIZ];
	socklen_t len;
	struct snap s;

	if (i < 0)
		return;
	sk = socks[i].sk;
	n = socks[i].net;
	dev0 = sock_dev(sk);
	want_dev = dev0;
	take_snap(&s);
	switch (c % 6) {
	case 0:
	case 1: {
		int idx = pick_ifindex(n, v, true);

		len = c & 0x40 ? (socklen_t)(c >> 3) % 4 : sizeof(int);
		r = socktab_setsockopt(sk, SOL_SOCKET, SO_BINDTOIFINDEX, &idx, len);
		if (len < sizeof(int))
			want = -EINVAL;
		else if (dev0 && !nets[n].net_raw)
			want = -EPERM;
		else if (idx < 0)
			want = -EINVAL;
		else
			want_dev = idx;
		break;
	}
	case 2:
	case 3: {
		static const socklen_t lens[] = { 0, 1, 2, 3, 15, 16, 20, 0 };
		const char *nm = names[v % 8];
		int idx;

		memset(buf, 0, sizeof(buf));
		memcpy(buf, nm, strlen(nm));
		len = c & 0x40 ? lens[(c >> 3) % 8] : (socklen_t)strlen(nm) + (c >> 7);
		/* What socktab reads: at most IFNAMSIZ - 1 bytes, up to a NUL. */
		memset(name, 0, sizeof(name));
		memcpy(name, buf, len < SOCKTAB_IFNAMSIZ - 1 ? len : SOCKTAB_IFNAMSIZ - 1);
		idx = name[0] ? mdev_by_name(n, name) : 0;
		r = socktab_setsockopt(sk, SOL_SOCKET, SO_BINDTODEVICE, buf, len);
		if (name[0] && !idx)
			want = -ENODEV;
		else if (dev0 && !nets[n].net_raw)
			want = -EPERM;
		else
			want_dev = idx;
		break;
	}
	case 4: {
		int on = v & 1;

		r = socktab_setsockopt(sk, c & 0x80 ? IPPROTO_IPV6 : IPPROTO_IP,
				       c & 0x80 ? IPV6_FREEBIND : IP_FREEBIND, &on, sizeof(on));
		/* the IPv6 level exists on AF_INET6 sockets only (do_ipv6_setsockopt) */
		want = c & 0x80 && sock_family(i) != AF_INET6 ? -ENOPROTOOPT : 0;
		break;
	}
	default: {
		int on = v & 1;

		r = socktab_setsockopt(sk, c & 0x80 ? IPPROTO_IPV6 : IPPROTO_IP,
				       c & 0x80 ? IPV6_TRANSPARENT : IP_TRANSPARENT, &on,
				       sizeof(on));
		if (c & 0x80 && sock_family(i) != AF_INET6)
			want = -ENOPROTOOPT; /* IPv6 level on IPv4 */
		else
			want = on && !nets[n].net_raw ? -EPERM : 0;
	}
	}
	if (trace)
		fprintf(stderr, "op %d: sockdev %d on socket %d (device %d) = %d\n", cur_op,
			c % 6, i, dev0, r);
	expect("setsockopt", r, want);
	dev1 = sock_dev(sk);
	if (r)
		want_dev = dev0;
	if (dev1 != want_dev)
		violation("socket %d is bound to device %d after setsockopt (%d), model %d", i,
			  dev1, r, want_dev);
	if (r)
		check_unchanged(&s, "setsockopt", r, false);
	/* SO_BINDTODEVICE reads the name back: none, the live device's, or ENODEV (R89). */
	len = sizeof(name);
	memset(name, 0, sizeof(name));
	r = socktab_getsockopt(sk, SOL_SOCKET, SO_BINDTODEVICE, name, &len);
	if (!dev1 ? r || len : dev1 == LO ? r || strcmp(name, "lo")
		: mdev_get(n, dev1) ? r || strcmp(name, mdev_get(n, dev1)->name)
				    : r != -ENODEV)
		violation("SO_BINDTODEVICE of a socket bound to %d read back %d, '%.16s' (%u)",
			  dev1, r, name, len);
}

/* The fuzzing thread goes online or offline (socktab/net.h): every call must behave the same on
 * an online thread, the lookups' sections nest in its own, and net_free passes a quiescent
 * state instead of waiting for it. */
static bool online;

static void toggle_online(void)
{
	int r;

	if (online) {
		socktab_thread_offline();
		online = false;
		return;
	}
	if ((r = socktab_thread_online()))
		violation("socktab_thread_online() returned %d", r);
	online = r == 0;
}

static void run_op(struct input *in)
{
	uint8_t op = u8(in);
	int i;

	if (trace)
		fprintf(stderr, "op %d: kind %d, %d sockets, %d TIME_WAIT\n", cur_op, op % 20, nsocks,
			ntw);
	switch (op % 20) {
	case 0:
		op_net_new(in);
		break;
	case 1: {
		uint8_t b = u8(in);

		if (b % 8 == 0) /* rare: a freed net loses all its sockets */
			op_net_free(in);
		else if (b % 8 == 1) /* the ops that follow run on an online thread, or not */
			toggle_online();
		break;
	}
	case 2:
	case 3:
		op_socket(in);
		break;
	case 4:
	case 5:
	case 6:
	case 7:
	case 8:
	case 9:
	case 10:
		if ((i = pick_sock(in)) >= 0) {
			int kind = (op % 20 - 4) % 4;

			/* set_state mostly on a connected socket: random picks rarely are. */
			for (int k = 0; kind == 3 && k < nsocks && !(op & 0x80); k++)
				if (socktab__ehash_hashed(socks[(i + k) % nsocks].sk)) {
					i = (i + k) % nsocks;
					break;
				}
			sock_call(in, kind, i);
		}
		break;
	case 11:
		op_close(in);
		break;
	case 12:
		if ((i = pick_sock(in)) >= 0)
			op_setsockopt(in, i);
		break;
	case 13:
		if ((i = pick_sock(in)) >= 0)
			op_getsockopt(in, i);
		break;
	case 14:
		if ((i = pick_sock(in)) >= 0)
			op_child(in, i);
		break;
	case 15:
		op_lookup(in);
		break;
	case 16:
		op_sysctl(in);
		break;
	case 17:
		op_settings(in);
		break;
	case 18:
		op_time(in);
		break;
	default: /* devices, addresses and device options */
		switch (u8(in) % 4) {
		case 0:
			op_dev(in);
			break;
		case 1:
			op_addr(in);
			break;
		default:
			op_sockdev(in);
		}
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	socktab_thread_register();
	trace = getenv("FUZZ_API_TRACE") != NULL;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };

	memset(nets, 0, sizeof(nets));
	memset(socks, 0, sizeof(socks)); /* nothing of one input may leak into the next */
	nsocks = 0;
	ntw = 0;
	nets_made = 0;
	/* Every input starts with one small net so that short inputs reach the socket calls. */
	{
		/* 4 ehash slots, 2 locks, 1 bind slot, ports 40000-40003, timestamps on,
		 * TIME_WAIT 100 ms, variant defaults. */
		struct input first = { (const uint8_t *)"\x02\x01\x18\x41\x0a\x01\x01", 7 };

		op_net_new(&first);
		if (!nets[0].net)
			violation("the default net could not be created");
		default_devices(0);
	}
	for (cur_op = 0; in.n && cur_op < MAX_OPS; cur_op++) {
		run_op(&in);
		for (int n = 0; n < MAX_NETS; n++)
			if (nets[n].net)
				check_net(n);
	}
	for (int n = 0; n < MAX_NETS; n++)
		if (nets[n].net)
			socktab_net_free(nets[n].net);
	if (online)
		toggle_online();
	return 0;
}
