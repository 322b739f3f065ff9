/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * setsockopt(2) / getsockopt(2): one table row per option, with the kernel's reading of the
 * caller's buffer for its level (R65, R67, R87, R89):
 *   SOL_SOCKET ints need 4 bytes (sock_setsockopt); a shorter get copies the low bytes;
 *   IPPROTO_IP ints take 4 bytes, or 1 byte when fewer are given (do_ip_setsockopt), and a get
 *   shorter than 4 returns 1 byte; IP_FREEBIND/IP_TRANSPARENT refuse 0 bytes, while
 *   IP_BIND_ADDRESS_NO_PORT takes 0 bytes as 0;
 *   IPPROTO_IPV6 ints need 4 bytes and exist on AF_INET6 sockets only (-ENOPROTOOPT).
 * IP_FREEBIND and IPV6_FREEBIND set one flag, IP_TRANSPARENT and IPV6_TRANSPARENT another
 * (R87). SO_BINDTODEVICE takes a name (truncated to IFNAMSIZ - 1; "" or 0 bytes unbinds; an
 * unknown name is -ENODEV), SO_BINDTOIFINDEX any index >= 0 without checking it exists; both may
 * change a nonzero binding only with CAP_NET_RAW (R89). SO_INCOMING_CPU takes any int, on any
 * socket in any state (R105). SO_ATTACH_REUSEPORT_CBPF takes exactly one struct sock_fprog and
 * SO_DETACH_REUSEPORT_BPF any int (R108, R111); neither can be read back (-ENOPROTOOPT).
 * SOCKTAB_SO_REUSEPORT_ID takes -1..65535 at any time, SOCKTAB_SO_REUSEPORT_GEN is read only
 * (R132, R134).
 */
#include <limits.h>

#include <linux/filter.h>

#include "bind.h"
#include "dev.h"
#include "reqsk.h"
#include "reuseport.h"
#include "sock.h"
#include "udp.h"

enum optkind {
	OPT_SOCK_INT,   /* SOL_SOCKET int */
	OPT_IP_INT,     /* IPPROTO_IP int, 1 byte accepted */
	OPT_IP6_INT,    /* IPPROTO_IPV6 int, AF_INET6 sockets only */
	OPT_RAW,        /* the row reads the buffer itself */
};

struct opt {
	int level, name;
	enum optkind kind;
	int minlen;     /* OPT_IP_INT: shortest optlen accepted */
	/* Caller holds the socket lock. NULL: not settable / not readable (-ENOPROTOOPT). */
	int (*set)(struct socktab_sock *sk, int v, const void *optval, socklen_t optlen);
	int (*get)(struct socktab_sock *sk, int *v, void *optval, socklen_t *optlen);
};

/* ---- setters and getters ---- */

static int set_reuseaddr(struct socktab_sock *sk, int v, const void *p, socklen_t n)
{
	(void)p, (void)n;
	WR(sk->reuse, v != 0);
	return 0;
}

static int get_reuseaddr(struct socktab_sock *sk, int *v, void *p, socklen_t *n)
{
	(void)p, (void)n;
	*v = RD(sk->reuse);
	return 0;
}

static int set_reuseport(struct socktab_sock *sk, int v, const void *p, socklen_t n)
{
	(void)p, (void)n;
	WR(sk->reuseport, v != 0);
	return 0;
}

static int get_reuseport(struct socktab_sock *sk, int *v, void *p, socklen_t *n)
{
	(void)p, (void)n;
	*v = RD(sk->reuseport);
	return 0;
}

static int set_broadcast(struct socktab_sock *sk, int v, const void *p, socklen_t n)
{
	(void)p, (void)n;
	socktab__skf_set(sk, SOCKTAB__SKF_BROADCAST, v != 0);
	return 0;
}

static int get_broadcast(struct socktab_sock *sk, int *v, void *p, socklen_t *n)
{
	(void)p, (void)n;
	*v = socktab__skf(sk, SOCKTAB__SKF_BROADCAST);
	return 0;
}

static int get_error(struct socktab_sock *sk, int *v, void *p, socklen_t *n)
{
	(void)sk, (void)p, (void)n;
	*v = 0; /* socktab moves no data: no error is ever pending */
	return 0;
}

static int get_acceptconn(struct socktab_sock *sk, int *v, void *p, socklen_t *n)
{
	(void)p, (void)n;
	*v = RD(sk->state) == SOCKTAB_TCP_LISTEN;
	return 0;
}

static int set_linger(struct socktab_sock *sk, int v, const void *optval, socklen_t optlen)
{
	struct linger lg;

	(void)v;
	if (!optval || optlen < (socklen_t)sizeof(lg))
		return -EINVAL;
	memcpy(&lg, optval, sizeof(lg));
	socktab__skf_set(sk, SOCKTAB__SKF_LINGER, lg.l_onoff != 0);
	/* sk_setsockopt(): off keeps the time; on takes l_linger as an unsigned count of seconds,
	 * so a negative one is past MAX_SCHEDULE_TIMEOUT, lingering for ever (not 0: no RST). */
	if (lg.l_onoff)
		sk->cold->linger_secs = lg.l_linger < 0 ? INT_MAX : lg.l_linger;
	return 0;
}

static int put_bytes(void *optval, socklen_t *optlen, const void *src, socklen_t n)
{
	if (!optval || !optlen)
		return -EINVAL;
	if (*optlen < n)
		n = *optlen;
	memcpy(optval, src, n);
	*optlen = n;
	return 0;
}

static int get_linger(struct socktab_sock *sk, int *v, void *optval, socklen_t *optlen)
{
	struct linger lg = { .l_onoff = socktab__skf(sk, SOCKTAB__SKF_LINGER),
			     .l_linger = sk->cold->linger_secs };

	(void)v;
	return put_bytes(optval, optlen, &lg, sizeof(lg));
}

/* sock_bindtoindex_locked(): a nonzero binding changes only with CAP_NET_RAW. */
static int bind_to_index(struct socktab_sock *sk, int ifindex)
{
	if (RD(sk->bound_dev_if) && !socktab__sk_net(sk)->net_raw)
		return -EPERM;
	if (ifindex < 0)
		return -EINVAL;
	WR(sk->bound_dev_if, (uint32_t)ifindex);
	if (socktab__sk_proto(sk) == SOCKTAB_UDP)
		socktab__udp_rehash(sk); /* sk->sk_prot->rehash(), which TCP has not */
	return 0;
}

static int set_bindtodevice(struct socktab_sock *sk, int v, const void *optval, socklen_t optlen)
{
	char name[SOCKTAB_IFNAMSIZ] = { 0 };
	int ifindex = 0;

	(void)v;
	if (optlen > SOCKTAB_IFNAMSIZ - 1)
		optlen = SOCKTAB_IFNAMSIZ - 1;
	if (optlen && !optval)
		return -EINVAL;
	memcpy(name, optval, optlen);
	if (name[0]) {
		ifindex = socktab_dev_index(socktab__sk_net(sk), name);
		if (ifindex < 0)
			return -ENODEV;
	}
	return bind_to_index(sk, ifindex);
}

static int get_bindtodevice(struct socktab_sock *sk, int *v, void *optval, socklen_t *optlen)
{
	char name[SOCKTAB_IFNAMSIZ];
	int dev = (int)RD(sk->bound_dev_if);

	(void)v;
	if (!optval || !optlen || *optlen < SOCKTAB_IFNAMSIZ)
		return -EINVAL;
	if (!dev) {
		*optlen = 0;
		return 0;
	}
	if (socktab_dev_name(socktab__sk_net(sk), dev, name, sizeof(name)))
		return -ENODEV;
	return put_bytes(optval, optlen, name, (socklen_t)strlen(name) + 1);
}

static int set_bindtoifindex(struct socktab_sock *sk, int v, const void *p, socklen_t n)
{
	(void)p, (void)n;
	return bind_to_index(sk, v);
}

static int get_bindtoifindex(struct socktab_sock *sk, int *v, void *p, socklen_t *n)
{
	(void)p, (void)n;
	*v = (int)RD(sk->bound_dev_if);
	return 0;
}

static int set_bind_address_no_port(struct socktab_sock *sk, int v, const void *p, socklen_t n)
{
	(void)p, (void)n;
	socktab__skf_set(sk, SOCKTAB__SKF_NO_PORT, v != 0);
	return 0;
}

static int get_bind_address_no_port(struct socktab_sock *sk, int *v, void *p, socklen_t *n)
{
	(void)p, (void)n;
	*v = socktab__skf(sk, SOCKTAB__SKF_NO_PORT);
	return 0;
}

static int set_freebind(struct socktab_sock *sk, int v, const void *p, socklen_t n)
{
	(void)p, (void)n;
	socktab__skf_set(sk, SOCKTAB__SKF_FREEBIND, v != 0);
	return 0;
}

static int get_freebind(struct socktab_sock *sk, int *v, void *p, socklen_t *n)
{
	(void)p, (void)n;
	*v = socktab__skf(sk, SOCKTAB__SKF_FREEBIND);
	return 0;
}

static int set_transparent(struct socktab_sock *sk, int v, const void *p, socklen_t n)
{
	(void)p, (void)n;
	if (v && !socktab__sk_net(sk)->net_raw)
		return -EPERM; /* needs CAP_NET_RAW or CAP_NET_ADMIN */
	socktab__skf_set(sk, SOCKTAB__SKF_TRANSPARENT, v != 0);
	return 0;
}

static int get_transparent(struct socktab_sock *sk, int *v, void *p, socklen_t *n)
{
	(void)p, (void)n;
	*v = socktab__skf(sk, SOCKTAB__SKF_TRANSPARENT);
	return 0;
}

static int set_local_port_range(struct socktab_sock *sk, int v, const void *optval,
				socklen_t optlen)
{
	uint32_t r;
	uint16_t lo, hi;

	(void)v;
	if (!optval || optlen != (socklen_t)sizeof(r))
		return -EINVAL;
	memcpy(&r, optval, sizeof(r));
	lo = (uint16_t)(r & 0xffff);
	hi = (uint16_t)(r >> 16);
	if (lo && hi && lo > hi)
		return -EINVAL;
	sk->cold->local_port_range = r;
	return 0;
}

static int get_local_port_range(struct socktab_sock *sk, int *v, void *optval, socklen_t *optlen)
{
	(void)v;
	return put_bytes(optval, optlen, &sk->cold->local_port_range, sizeof(uint32_t));
}

static int set_v6only(struct socktab_sock *sk, int v, const void *p, socklen_t n)
{
	(void)p, (void)n;
	if (socktab__sk_num(sk) || socktab__sk_bl(sk)->tb2)
		return -EINVAL; /* R67: not once the socket has a port */
	sk->v6only = v != 0;
	return 0;
}

static int get_v6only(struct socktab_sock *sk, int *v, void *p, socklen_t *n)
{
	(void)p, (void)n;
	*v = sk->v6only;
	return 0;
}

/* sk_setsockopt(): any int, unchecked (a negative one names no CPU); the reuseport group
 * counts its members that name one (R35). */
static int set_incoming_cpu(struct socktab_sock *sk, int v, const void *p, socklen_t n)
{
	(void)p, (void)n;
	socktab__reuseport_set_incoming_cpu(sk, v);
	return 0;
}

static int get_incoming_cpu(struct socktab_sock *sk, int *v, void *p, socklen_t *n)
{
	(void)p, (void)n;
	*v = socktab__sk_incoming_cpu(sk);
	return 0;
}

/* sk_setsockopt: 4 bytes at least (the generic int read), then exactly one sock_fprog. */
static int set_attach_cbpf(struct socktab_sock *sk, int v, const void *p, socklen_t n)
{
	struct sock_fprog fp;

	(void)v;
	if (!p || n < (socklen_t)sizeof(int) || n != (socklen_t)sizeof(fp))
		return -EINVAL;
	memcpy(&fp, p, sizeof(fp));
	return socktab__reuseport_attach_cbpf(sk, fp.filter, fp.len);
}

static int set_detach_bpf(struct socktab_sock *sk, int v, const void *p, socklen_t n)
{
	(void)v, (void)p, (void)n;
	return socktab__reuseport_detach_prog(sk);
}

static int set_uid(struct socktab_sock *sk, int v, const void *p, socklen_t n)
{
	(void)p, (void)n;
	if (v < 0)
		return -EINVAL;
	/* A listener's child: the kernel's accept() gives it the accepting process's uid. */
	if (socktab__sk_proto(sk) == SOCKTAB_TCP && (RD(sk->tw_flags) & SOCKTAB__SOCKF_CHILD)) {
		socktab__bind_set_uid(sk, (uid_t)v);
		return 0;
	}
	if (socktab__sk_num(sk) || socktab__sk_bl(sk)->tb2 || RD(sk->state) != SOCKTAB_TCP_CLOSE)
		return -EINVAL;
	sk->uid = (uid_t)v;
	return 0;
}

static int get_uid(struct socktab_sock *sk, int *v, void *p, socklen_t *n)
{
	(void)p, (void)n;
	*v = (int)sk->uid;
	return 0;
}

/* R132: socktab's own; any int from -1 to 65535, at any time. */
static int set_rp_id(struct socktab_sock *sk, int v, const void *p, socklen_t n)
{
	int err;

	(void)p, (void)n;
	/* The id lives beside a listener's queues (reqsk.h): a socket that takes one gets them. */
	if (v >= 0 && v <= SOCKTAB__RP_ID_MAX && (err = socktab__listenq_prepare(sk)))
		return err;
	return socktab__reuseport_set_id(sk, v);
}

static int get_rp_id(struct socktab_sock *sk, int *v, void *p, socklen_t *n)
{
	(void)p, (void)n;
	*v = socktab__sk_rp_id(sk);
	return 0;
}

/* R134: read only, a uint64_t. */
static int get_rp_gen(struct socktab_sock *sk, int *v, void *optval, socklen_t *optlen)
{
	uint64_t gen;
	int err;

	(void)v;
	if (!optval || !optlen || *optlen < (socklen_t)sizeof(gen))
		return -EINVAL;
	err = socktab__reuseport_gen(sk, &gen);
	if (err)
		return err;
	return put_bytes(optval, optlen, &gen, sizeof(gen));
}

static const struct opt opts[] = {
	{ SOL_SOCKET, SO_REUSEADDR, OPT_SOCK_INT, 0, set_reuseaddr, get_reuseaddr },
	{ SOL_SOCKET, SO_REUSEPORT, OPT_SOCK_INT, 0, set_reuseport, get_reuseport },
	{ SOL_SOCKET, SO_BROADCAST, OPT_SOCK_INT, 0, set_broadcast, get_broadcast },
	{ SOL_SOCKET, SO_ERROR, OPT_SOCK_INT, 0, NULL, get_error },
	{ SOL_SOCKET, SO_ACCEPTCONN, OPT_SOCK_INT, 0, NULL, get_acceptconn },
	{ SOL_SOCKET, SO_LINGER, OPT_RAW, 0, set_linger, get_linger },
	{ SOL_SOCKET, SO_BINDTODEVICE, OPT_RAW, 0, set_bindtodevice, get_bindtodevice },
	{ SOL_SOCKET, SO_BINDTOIFINDEX, OPT_SOCK_INT, 0, set_bindtoifindex, get_bindtoifindex },
	{ SOL_SOCKET, SO_INCOMING_CPU, OPT_SOCK_INT, 0, set_incoming_cpu, get_incoming_cpu },
	{ SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, OPT_RAW, 0, set_attach_cbpf, NULL },
	{ SOL_SOCKET, SO_DETACH_REUSEPORT_BPF, OPT_SOCK_INT, 0, set_detach_bpf, NULL },
	{ IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, OPT_IP_INT, 0, set_bind_address_no_port,
	  get_bind_address_no_port },
	{ IPPROTO_IP, IP_FREEBIND, OPT_IP_INT, 1, set_freebind, get_freebind },
	{ IPPROTO_IP, IP_TRANSPARENT, OPT_IP_INT, 1, set_transparent, get_transparent },
	{ IPPROTO_IP, IP_LOCAL_PORT_RANGE, OPT_RAW, 0, set_local_port_range, get_local_port_range },
	{ IPPROTO_IPV6, IPV6_V6ONLY, OPT_IP6_INT, 0, set_v6only, get_v6only },
	{ IPPROTO_IPV6, IPV6_FREEBIND, OPT_IP6_INT, 0, set_freebind, get_freebind },
	{ IPPROTO_IPV6, IPV6_TRANSPARENT, OPT_IP6_INT, 0, set_transparent, get_transparent },
	{ SOCKTAB_SOL, SOCKTAB_SO_UID, OPT_SOCK_INT, 0, set_uid, get_uid },
	{ SOCKTAB_SOL, SOCKTAB_SO_REUSEPORT_ID, OPT_SOCK_INT, 0, set_rp_id, get_rp_id },
	{ SOCKTAB_SOL, SOCKTAB_SO_REUSEPORT_GEN, OPT_RAW, 0, NULL, get_rp_gen },
};

static const struct opt *find_opt(const struct socktab_sock *sk, int level, int name)
{
	if (level == IPPROTO_IPV6 && sk->family != AF_INET6)
		return NULL;
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (opts[i].level == level && opts[i].name == name)
			return &opts[i];
	return NULL;
}

/* The int an option's buffer holds, read as the kernel reads that level. */
static int read_int(const struct opt *o, const void *optval, socklen_t optlen, int *v)
{
	*v = 0;
	if (o->kind == OPT_RAW)
		return 0;
	if (o->kind == OPT_IP_INT && optlen < (socklen_t)sizeof(int)) {
		if ((int)optlen < o->minlen)
			return -EINVAL;
		if (optlen > 0) {
			if (!optval)
				return -EINVAL;
			*v = *(const unsigned char *)optval;
		}
		return 0;
	}
	if (!optval || optlen < (socklen_t)sizeof(int))
		return -EINVAL;
	memcpy(v, optval, sizeof(int));
	return 0;
}

int socktab_setsockopt(struct socktab_sock *sk, int level, int optname, const void *optval,
		       socklen_t optlen)
{
	const struct opt *o;
	int err, v;

	err = socktab__sk_lock_open(sk);
	if (err)
		return err;
	o = find_opt(sk, level, optname);
	if (!o || !o->set)
		err = -ENOPROTOOPT;
	else if (!(err = read_int(o, optval, optlen, &v)))
		err = o->set(sk, v, optval, optlen);
	socktab__unlock(socktab__sk_lock(sk));
	return err;
}

int socktab_getsockopt(struct socktab_sock *sk, int level, int optname, void *optval,
		       socklen_t *optlen)
{
	const struct opt *o;
	int err, v = 0;

	err = socktab__sk_lock_open(sk);
	if (err)
		return err;
	o = find_opt(sk, level, optname);
	if (!o && sk->family == AF_INET && level != SOL_SOCKET && level != IPPROTO_IP &&
	    level != SOCKTAB_SOL) {
		err = -EOPNOTSUPP; /* ip_getsockopt: any level but SOL_IP */
	} else if (!o || !o->get) {
		err = -ENOPROTOOPT;
	} else if (o->kind == OPT_RAW) {
		err = o->get(sk, &v, optval, optlen);
	} else if (!optval || !optlen) {
		err = -EINVAL;
	} else if (!(err = o->get(sk, &v, optval, optlen))) {
		/* A short IP-level get returns one byte (ip_getsockopt); others truncate. */
		if (o->kind != OPT_SOCK_INT && *optlen > 0 && *optlen < (socklen_t)sizeof(int) &&
		    v >= 0 && v <= 255) {
			*(unsigned char *)optval = (unsigned char)v;
			*optlen = 1;
		} else {
			err = put_bytes(optval, optlen, &v, sizeof(v));
		}
	}
	socktab__unlock(socktab__sk_lock(sk));
	return err;
}
