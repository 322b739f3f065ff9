/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab replay, socktab backend: one socktab_net per case (defaults, like a fresh kernel
 * namespace), sockets through the public API, and the loopback model (loopback.c) for what the
 * kernel would do around the tables: SYN delivery, accept queues, FIN/RST to the peer.
 * UDP sockets go through the same model (loopback.c): datagrams are queued on the socket
 * socktab_lookup_udp4/6 picks; TCP-only calls give the kernel's errors on them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loopback.h"
#include "script.h"
#include "socktab/socktab.h"

struct sctx {
	struct socktab_net *net;
	const void *payload;      /* the next datagram's payload (NULL: "x") */
	size_t payload_len;
	struct socktab_sock **sk; /* slot -> socket; a replaced socket stays open in the net */
	int fastopen;             /* net.ipv4.tcp_fastopen: bit 0 enables the client side */
};

static struct socktab_sock *S(void *ctx, int slot)
{
	return ((struct sctx *)ctx)->sk[slot];
}

static int s_sysctl(void *ctx, const char *key, const char *value)
{
	struct sctx *c = ctx;
	int err = socktab_net_sysctl(c->net, key, value);

	if (!err && !strcmp(key, "net.ipv4.tcp_fastopen"))
		c->fastopen = atoi(value);
	if (!err)
		lb_sysctl(key, value);
	return -err;
}

static int s_socket(void *ctx, int slot, int udp, int family, int uid)
{
	struct sctx *c = ctx;
	struct socktab_sock *sk;

	sk = socktab_socket(c->net, udp ? SOCKTAB_UDP : SOCKTAB_TCP, family);
	if (!sk)
		return errno;
	lb_attach(sk, c->net);
	if (uid) {
		int err = socktab_setsockopt(sk, SOCKTAB_SOL, SOCKTAB_SO_UID, &uid, sizeof(uid));

		if (err) {
			socktab_close(sk);
			return -err;
		}
	}
	c->sk[slot] = sk;
	return 0;
}

static int s_setsockopt(void *ctx, int slot, int level, int name, const void *val, socklen_t len)
{
	return -socktab_setsockopt(S(ctx, slot), level, name, val, len);
}

static int s_getsockopt(void *ctx, int slot, int level, int name, void *val, socklen_t *len)
{
	/* SO_ERROR is the harness's: errors come from the loopback model's RSTs. */
	if (level == SOL_SOCKET && name == SO_ERROR && *len >= sizeof(int)) {
		int e = lb_take_error(S(ctx, slot));

		memcpy(val, &e, sizeof(e));
		*len = sizeof(int);
		return 0;
	}
	return -socktab_getsockopt(S(ctx, slot), level, name, val, len);
}

static int s_bind(void *ctx, int slot, const struct sockaddr *sa, socklen_t len)
{
	return -socktab_bind(S(ctx, slot), sa, len);
}

static int s_listen(void *ctx, int slot, int backlog)
{
	return -socktab_listen(S(ctx, slot), backlog);
}

static int s_connect(void *ctx, int slot, const struct sockaddr *sa, socklen_t len)
{
	return -lb_connect(S(ctx, slot), sa, len);
}

static int s_accept(void *ctx, int slot, int newslot)
{
	struct socktab_sock *child;
	int err = lb_accept(S(ctx, slot), &child);

	if (err)
		return -err;
	/* accept() gives the child the uid of the process that accepts (sock_graft): the runner's,
	 * as on the kernel backend, where only socket() runs under another uid. */
	err = socktab_setsockopt(child, SOCKTAB_SOL, SOCKTAB_SO_UID, &(int){ (int)geteuid() },
				 sizeof(int));
	if (err)
		return err;
	((struct sctx *)ctx)->sk[newslot] = child;
	return 0;
}

static void s_tick(void *ctx)
{
	(void)ctx;
	lb_tick();
}

static void s_payload(void *ctx, const void *data, size_t len)
{
	((struct sctx *)ctx)->payload = data;
	((struct sctx *)ctx)->payload_len = len;
}

static int s_sendto(void *ctx, int slot, const struct sockaddr *sa, socklen_t len)
{
	struct sctx *c = ctx;

	if (socktab_sock_proto(S(ctx, slot)) == SOCKTAB_UDP)
		return -lb_udp_sendto(S(ctx, slot), sa, len, c->payload ? c->payload : "x",
				      c->payload ? c->payload_len : 1);
	/* TCP ignores a sendto() address on a connected socket. */
	(void)sa;
	(void)len;
	return -lb_send(S(ctx, slot));
}

static int s_fastopen(void *ctx, int slot, const struct sockaddr *sa, socklen_t len)
{
	struct sctx *c = ctx;

	/* UDP ignores MSG_FASTOPEN: an empty datagram is sent. */
	if (socktab_sock_proto(S(ctx, slot)) == SOCKTAB_UDP)
		return -lb_udp_sendto(S(ctx, slot), sa, len, NULL, 0);
	/* tcp_sendmsg_fastopen(): client TFO off, or an AF_UNSPEC address: EOPNOTSUPP. */
	if (!(c->fastopen & 1) || sa->sa_family == AF_UNSPEC)
		return EOPNOTSUPP;
	return -lb_connect(S(ctx, slot), sa, len);
}

static int s_close(void *ctx, int slot)
{
	struct sctx *c = ctx;
	int err = lb_close(c->sk[slot]);

	c->sk[slot] = NULL;
	return -err;
}

static int s_getsockname(void *ctx, int slot, struct sockaddr_storage *ss)
{
	socklen_t l = sizeof(*ss);

	return -socktab_getsockname(S(ctx, slot), (struct sockaddr *)ss, &l);
}

static int s_getpeername(void *ctx, int slot, struct sockaddr_storage *ss)
{
	socklen_t l = sizeof(*ss);

	return -socktab_getpeername(S(ctx, slot), (struct sockaddr *)ss, &l);
}

static int s_state(void *ctx, int slot, int *state)
{
	int st = socktab_get_state(S(ctx, slot));

	/* TCP_INFO on a datagram socket: ip_getsockopt / ipv6_getsockopt refuse the level. */
	if (socktab_sock_proto(S(ctx, slot)) == SOCKTAB_UDP)
		return socktab_sock_family(S(ctx, slot)) == AF_INET ? EOPNOTSUPP : ENOPROTOOPT;
	if (st < 0)
		return -st;
	*state = st;
	return 0;
}

static int s_readable(void *ctx, const int *slots, int n, int expect, int *count)
{
	(void)expect; /* the model delivers synchronously: nothing to wait for */
	*count = 0;
	for (int i = 0; i < n; i++)
		*count += lb_readable(S(ctx, slots[i]));
	return 0;
}

/* Devices and addresses through socktab's device API (socktab/dev.h): a dummy device is a plain
 * device, up from the start; names resolve to the net's ifindexes. */
static int s_link(void *ctx, enum rp_linkop what, const char *dev)
{
	struct sctx *c = ctx;
	int idx;

	if (what == RP_LINK_ADD) {
		idx = socktab_dev_add(c->net, dev, 1);
		return idx < 0 ? -idx : 0;
	}
	idx = socktab_dev_index(c->net, dev);
	if (idx < 0)
		return -idx;
	if (what == RP_LINK_DEL)
		return -socktab_dev_del(c->net, idx);
	return -socktab_dev_set_up(c->net, idx, what == RP_LINK_UP);
}

static int s_addr_change(void *ctx, int add, const struct rp_addr *a, int plen, const char *dev)
{
	struct sctx *c = ctx;
	int idx = socktab_dev_index(c->net, dev);

	if (idx < 0)
		return -idx;
	return add ? -socktab_addr_add(c->net, idx, a->family, a->bytes, plen)
		   : -socktab_addr_del(c->net, idx, a->family, a->bytes, plen);
}

static int s_dev_index(void *ctx, const char *dev)
{
	return socktab_dev_index(((struct sctx *)ctx)->net, dev);
}

/* cpu N: the receiving CPU of the lookups the following statements make (the loopback model
 * runs them on this thread). A CPU the machine lacks is refused as the kernel backend's
 * sched_setaffinity() refuses it. */
static int s_set_cpu(void *ctx, int cpu)
{
	(void)ctx;
	if (cpu >= sysconf(_SC_NPROCESSORS_ONLN))
		return EINVAL;
	return -socktab_set_rx_cpu(cpu);
}

static const struct rp_backend socktab_backend = {
	.name = "socktab",
	.sysctl = s_sysctl,
	.socket = s_socket,
	.setsockopt = s_setsockopt,
	.getsockopt = s_getsockopt,
	.bind = s_bind,
	.listen = s_listen,
	.connect = s_connect,
	.accept = s_accept,
	.sendto = s_sendto,
	.payload = s_payload,
	.fastopen = s_fastopen,
	.close = s_close,
	.getsockname = s_getsockname,
	.getpeername = s_getpeername,
	.state = s_state,
	.readable = s_readable,
	.link = s_link,
	.addr_change = s_addr_change,
	.dev_index = s_dev_index,
	.set_cpu = s_set_cpu,
	.tick = s_tick,
};

int rp_socktab_run_case(const struct rp_script *s, const struct rp_case *c, rp_emit_fn emit,
			void *arg)
{
	struct socktab_net_params p;
	struct sctx ctx = { .fastopen = 1 }; /* kernel default: client-side TFO enabled */

	socktab_thread_register();
	socktab_net_params_init(&p);
	p.sock_priv_size = lb_priv_size();
	/* Small tables: a script holds a handful of sockets, table sizes change no outcome, and
	 * a net with default-size tables costs milliseconds to create and free per case. */
	p.ehash_entries = 1024;
	p.ehash_locks = 64;
	p.bhash_entries = 1024;
	p.udp_hash_entries = 128; /* the kernel's per-netns minimum: ports share chains */
	ctx.net = socktab_net_new(&p);
	for (int kv = 0; ctx.net && kv < SOCKTAB_KV_COUNT; kv++) {
		int on = c->when[kv] >= 0 ? c->when[kv] : rp_kvariant[kv];

		if (on >= 0)
			socktab_net_set_kernel_variant(ctx.net, kv, on);
	}
	ctx.sk = calloc((size_t)s->nnames + 1, sizeof(*ctx.sk));
	if (!ctx.net || !ctx.sk) {
		fprintf(stderr, "socktab replay: socktab_net_new: %s\n", strerror(errno));
		if (ctx.net)
			socktab_net_free(ctx.net);
		free(ctx.sk);
		socktab_thread_unregister();
		return -1;
	}
	/* Each case starts, as a kernel case's fresh process does, on no CPU in particular. */
	socktab_set_rx_cpu(-1);
	lb_case_begin(rp_connect_wait_ms());
	rp_exec_case(s, c, &socktab_backend, &ctx, emit, arg);
	lb_case_end();
	socktab_set_rx_cpu(-1);
	socktab_net_free(ctx.net);
	free(ctx.sk);
	socktab_thread_unregister();
	return 0;
}
