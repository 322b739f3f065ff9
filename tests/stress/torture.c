/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * torture: reader threads look sockets up while writer threads change the tables, with a model
 * on the side; one summary line at the end. A white-box test: the end checks read the pool.
 *
 *   build/torture [--threads N] [--duration S] [--seed X]
 *
 * N writers and N readers (default 2 each) and one listener-group churn thread share one net
 * with small tables (stress_net_params in tests/common/stress.h: long chains, shared buckets),
 * ports 40000-40999, TIME_WAIT of 20 ms with tw_reuse (entries expire and are taken over all the
 * time), and a type-stable pool (a closed socket's memory is handed out again at once).
 *
 * Each writer owns slots of three kinds and moves each through its life:
 *   CONN    socket (v4 or v6), connect() to 127.0.0.1-4 or ::1 ports 1000-1003, ESTABLISHED,
 *           then a graceful close (TIME_WAIT), an abortive close (SO_LINGER 0) or a reset
 *           (tcp_done) and close;
 *   LISTEN  bind 127.0.0.1:P (P owned by the writer), listen, a child from 127.0.0.2, then
 *           abortive closes; P must be bindable again at once every time (it was released);
 *   UDP     bind 127.0.0.1:Q (owned), connect to 127.0.0.3 peers, re-connect, disconnect, close;
 *           Q must be bindable again at once.
 * A slot publishes what is present with a sequence counter, odd while the writer changes it
 * (tests/common/stress.h). A reader that reads the same even value before and after a lookup
 * knows the slot's socket was there for the whole lookup: the lookup must return exactly it (a
 * connected UDP socket must not answer another source). Every non-NULL result must carry
 * the key asked for. The churn thread replaces, one at a time, members of a SO_REUSEPORT group of
 * four listeners on 127.0.0.1:9000; a listener lookup that overlapped at most one replacement
 * must find a member (one that overlapped more may rightly miss).
 *
 * At the end, with every thread stopped: net counters equal the model (established = connected
 * CONN and child slots, UDP hashed/hashed4 = bound/connected UDP slots); then everything is
 * closed, TIME_WAIT entries expire, and every counter is zero, every pool object is back in the
 * pool with no reference (leaked counts those that are not), and every port of the range and
 * of the writers is bindable again.
 *
 * Prints "torture: ... violations=V leaked=L" and "N passed, M failed"; exit status 1 on any
 * violation or leak.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "net.h"
#include "opt.h"
#include "socktab/socktab.h"
#include "stress.h"

#define MAX_THREADS 8
#define NCONN 24
#define NLISTEN 4
#define NUDP 4
#define SLOTS_PER_WRITER (NCONN + NLISTEN + NUDP)
#define LISTEN_PORT_BASE 20000 /* writer w, listener slot i: LISTEN_PORT_BASE + 64 * w + i */
#define UDP_PORT_BASE 25000
#define GROUP_PORT 9000

enum { K_EMPTY, K_CONN, K_LISTEN, K_UDP };

struct slot {
	_Atomic uint32_t seq;     /* odd while the writer changes the slot */
	_Atomic int kind;         /* what is present; K_EMPTY: nothing */
	_Atomic int child;        /* K_LISTEN: a child connection is present */
	_Atomic int connected;    /* K_UDP: connected to (raddr, rport) */
	_Atomic int family;       /* K_CONN */
	_Atomic uint32_t laddr[4], raddr[4]; /* IPv6 words; IPv4 in word 3 */
	_Atomic uint32_t lport, rport;       /* network order */
	_Atomic(struct socktab_sock *) sk, csk;
	/* writer-private */
	int type;                 /* K_CONN, K_LISTEN or K_UDP: what this slot holds when full */
	uint16_t port;            /* K_LISTEN, K_UDP: the writer-owned port */
};

static struct socktab_net *net;
static struct slot slots[MAX_THREADS * SLOTS_PER_WRITER];
static int nthreads = 2;
static _Atomic int stop;
static _Atomic uint64_t n_ops, n_lookups, n_checked, n_hits, n_violations, n_listener_lookups;
static _Atomic uint64_t n_udp_lookups, n_connect_fail;

static void violation(const char *fmt, ...)
{
	va_list ap;

	/* Print the first few in full; the count says how many there were. */
	if (atomic_fetch_add(&n_violations, 1) < 20) {
		fprintf(stderr, "torture: VIOLATION: ");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}

static void group_violation(const char *what)
{
	violation("%s", what);
}

/* A SO_REUSEPORT group of four listeners on 127.0.0.1:GROUP_PORT, members replaced one at a
 * time; a listener lookup that overlapped at most one replacement must find a member. */
static struct stress_group group = { .port = GROUP_PORT, .ops = &n_ops,
				     .violation = group_violation };

/* ---------------------------------------------------------------- writer side */

static void begin(struct slot *s)
{
	stress_write_begin(&s->seq);
}

static void end(struct slot *s)
{
	stress_write_end(&s->seq);
}

static void store_addr(_Atomic uint32_t dst[4], const struct sockaddr_storage *ss, uint32_t *port)
{
	uint32_t w[4] = { 0, 0, 0, 0 };

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;

		w[3] = a->sin_addr.s_addr;
		*port = a->sin_port;
	} else {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;

		memcpy(w, &a->sin6_addr, 16);
		*port = a->sin6_port;
	}
	for (int i = 0; i < 4; i++)
		atomic_store(&dst[i], w[i]);
}

/* Publish @sk's names into the slot (inside begin/end). */
static void publish_names(struct slot *s, struct socktab_sock *sk, bool peer)
{
	struct sockaddr_storage l, r;
	socklen_t ll = sizeof(l), rl = sizeof(r);
	uint32_t lp = 0, rp = 0;

	memset(&l, 0, sizeof(l));
	memset(&r, 0, sizeof(r));
	if (socktab_getsockname(sk, (struct sockaddr *)&l, &ll))
		violation("getsockname failed on a live socket");
	store_addr(s->laddr, &l, &lp);
	atomic_store(&s->lport, lp);
	if (peer) {
		if (socktab_sock_peer(sk, (struct sockaddr *)&r, &rl))
			violation("no peer on a connected socket");
		store_addr(s->raddr, &r, &rp);
		atomic_store(&s->rport, rp);
	}
}

static void close_mode(struct socktab_sock *sk, int mode)
{
	static const struct linger lg = { 1, 0 };

	if (mode == 1)
		socktab_setsockopt(sk, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	else if (mode == 2)
		socktab_set_state(sk, SOCKTAB_TCP_CLOSE); /* a reset: tcp_done, then close */
	if (socktab_close(sk))
		violation("close of an open socket failed");
}

static void conn_step(struct slot *s, uint64_t *rng)
{
	struct socktab_sock *sk = atomic_load(&s->sk);

	if (sk) {
		begin(s);
		atomic_store(&s->kind, K_EMPTY);
		atomic_store(&s->sk, NULL);
		close_mode(sk, (int)(stress_rand(rng) % 3));
		end(s);
		return;
	}
	bool v6 = stress_rand(rng) % 4 == 0;
	uint16_t dport = htons((uint16_t)(1000 + stress_rand(rng) % 4));
	struct sockaddr_storage d;
	socklen_t dl;

	memset(&d, 0, sizeof(d));
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&d;

		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		a->sin6_port = dport;
		dl = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&d;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(0x7f000001 + (uint32_t)(stress_rand(rng) % 4));
		a->sin_port = dport;
		dl = sizeof(*a);
	}
	sk = socktab_socket(net, SOCKTAB_TCP, v6 ? AF_INET6 : AF_INET);
	if (!sk) {
		violation("socket() failed: %s", strerror(errno));
		return;
	}
	begin(s);
	if (socktab_connect(sk, (struct sockaddr *)&d, dl)) {
		/* The range toward one destination can be full of TIME_WAIT entries. */
		atomic_fetch_add(&n_connect_fail, 1);
		socktab_close(sk);
		end(s);
		return;
	}
	if (stress_rand(rng) % 8)
		socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED);
	atomic_store(&s->family, v6 ? AF_INET6 : AF_INET);
	publish_names(s, sk, true);
	atomic_store(&s->sk, sk);
	atomic_store(&s->kind, K_CONN);
	end(s);
}

static void listen_step(struct slot *s, uint64_t *rng)
{
	struct socktab_sock *sk = atomic_load(&s->sk), *c = atomic_load(&s->csk);
	struct sockaddr_in l = { .sin_family = AF_INET, .sin_port = htons(s->port) };

	l.sin_addr.s_addr = htonl(0x7f000001);
	if (!sk) {
		sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		if (!sk) {
			violation("socket() failed: %s", strerror(errno));
			return;
		}
		begin(s);
		int err = socktab_bind(sk, (struct sockaddr *)&l, sizeof(l));

		if (err || socktab_listen(sk, 16)) {
			violation("released port %u not bindable/listenable again: %s", s->port,
				  strerror(-err));
			socktab_close(sk);
			end(s);
			return;
		}
		publish_names(s, sk, false);
		atomic_store(&s->sk, sk);
		atomic_store(&s->kind, K_LISTEN);
		end(s);
		return;
	}
	if (!c) {
		struct sockaddr_in r = { .sin_family = AF_INET };

		r.sin_addr.s_addr = htonl(0x7f000002);
		r.sin_port = htons((uint16_t)(30000 + stress_rand(rng) % 30000));
		begin(s);
		c = socktab_sock_new_child(sk, (struct sockaddr *)&l, (struct sockaddr *)&r,
					   sizeof(r), SOCKTAB_LOOPBACK_IFINDEX, 0);
		if (!c) {
			violation("child of listener %u failed: %s", s->port, strerror(errno));
			end(s);
			return;
		}
		socktab_set_state(c, SOCKTAB_TCP_ESTABLISHED);
		for (int i = 0; i < 3; i++)
			atomic_store(&s->raddr[i], 0);
		atomic_store(&s->raddr[3], r.sin_addr.s_addr);
		atomic_store(&s->rport, r.sin_port);
		atomic_store(&s->csk, c);
		atomic_store(&s->child, 1);
		end(s);
		return;
	}
	begin(s);
	atomic_store(&s->child, 0);
	atomic_store(&s->csk, NULL);
	/* Abortive: no TIME_WAIT keeps the port, so the next bind must succeed at once. */
	close_mode(c, 1);
	if (stress_rand(rng) % 2) {
		atomic_store(&s->kind, K_EMPTY);
		atomic_store(&s->sk, NULL);
		close_mode(sk, 0);
	}
	end(s);
}

static void udp_step(struct slot *s, uint64_t *rng)
{
	struct socktab_sock *sk = atomic_load(&s->sk);
	struct sockaddr_in a = { .sin_family = AF_INET };

	if (!sk) {
		sk = socktab_socket(net, SOCKTAB_UDP, AF_INET);
		if (!sk) {
			violation("UDP socket() failed: %s", strerror(errno));
			return;
		}
		a.sin_addr.s_addr = htonl(0x7f000001);
		a.sin_port = htons(s->port);
		begin(s);
		int err = socktab_bind(sk, (struct sockaddr *)&a, sizeof(a));

		if (err) {
			violation("released UDP port %u not bindable again: %s", s->port,
				  strerror(-err));
			socktab_close(sk);
			end(s);
			return;
		}
		publish_names(s, sk, false);
		atomic_store(&s->connected, 0);
		atomic_store(&s->sk, sk);
		atomic_store(&s->kind, K_UDP);
		end(s);
		return;
	}
	begin(s);
	switch (stress_rand(rng) % 4) {
	case 0:
	case 1: /* connect, or re-connect to another peer: moves between hash2/hash4 chains */
		a.sin_addr.s_addr = htonl(0x7f000003);
		a.sin_port = htons((uint16_t)(7000 + stress_rand(rng) % 8));
		if (socktab_connect(sk, (struct sockaddr *)&a, sizeof(a))) {
			violation("UDP connect failed");
			atomic_store(&s->connected, 0);
			break;
		}
		publish_names(s, sk, true);
		atomic_store(&s->connected, 1);
		break;
	case 2: /* disconnect: bind() named the port, so it stays */
		a.sin_family = AF_UNSPEC;
		if (socktab_connect(sk, (struct sockaddr *)&a, sizeof(a)))
			violation("UDP disconnect failed");
		atomic_store(&s->connected, 0);
		break;
	default:
		atomic_store(&s->kind, K_EMPTY);
		atomic_store(&s->sk, NULL);
		atomic_store(&s->connected, 0);
		if (socktab_close(sk))
			violation("UDP close failed");
	}
	end(s);
}

struct writer_arg {
	int w;
	uint64_t seed;
};

static struct writer_arg wargs[MAX_THREADS];

static void *writer(void *arg)
{
	const struct writer_arg *a = arg;
	int w = a->w;
	uint64_t rng = a->seed | 1; /* xorshift state must not be zero */

	socktab_thread_register();
	while (!atomic_load(&stop)) {
		int i = (int)(stress_rand(&rng) % SLOTS_PER_WRITER);
		struct slot *s = &slots[w * SLOTS_PER_WRITER + i];

		switch (s->type) {
		case K_CONN:
			conn_step(s, &rng);
			break;
		case K_LISTEN:
			listen_step(s, &rng);
			break;
		default:
			udp_step(s, &rng);
		}
		atomic_fetch_add_explicit(&n_ops, 1, memory_order_relaxed);
	}
	socktab_thread_unregister();
	return NULL;
}

/* ---------------------------------------------------------------- reader side */

struct snap {
	uint32_t seq;
	int kind, child, connected, family;
	uint32_t laddr[4], raddr[4];
	uint16_t lport, rport;
	struct socktab_sock *sk, *csk;
};

static void take(struct slot *s, struct snap *n)
{
	n->seq = stress_read_begin(&s->seq);
	n->kind = atomic_load(&s->kind);
	n->child = atomic_load(&s->child);
	n->connected = atomic_load(&s->connected);
	n->family = atomic_load(&s->family);
	for (int i = 0; i < 4; i++) {
		n->laddr[i] = atomic_load(&s->laddr[i]);
		n->raddr[i] = atomic_load(&s->raddr[i]);
	}
	n->lport = (uint16_t)atomic_load(&s->lport);
	n->rport = (uint16_t)atomic_load(&s->rport);
	n->sk = atomic_load(&s->sk);
	n->csk = atomic_load(&s->csk);
}

/* Was the slot unchanged, and not changing, for the whole lookup? */
static bool stable(struct slot *s, const struct snap *n)
{
	return stress_read_stable(&s->seq, n->seq);
}

/*
 * A result whose key no longer matches is wrong only if it is still in the tables: the owner may
 * reset or close it right after the lookup took its reference (sk_done and close unhash before
 * they clear the key, so a cleared key read here comes with the unhash). A freed and reused
 * object is hashed again under its new key, so it still counts.
 */
static bool left_tables(const struct socktab_sock *f)
{
	if (socktab__sk_proto(f) == SOCKTAB_UDP) /* (c) while we hold a reference */
		return !socktab__hnode_hashed(&socktab__sk_udp(f)->node1);
	return !socktab__hnode_hashed(&f->node);
}

/* Does TCP entry @f carry the key (remote -> local) of the snapshot? */
static bool tcp_key(const struct socktab_sock *f, int family, const uint32_t *raddr,
		    uint16_t rport, const uint32_t *laddr, uint16_t lport)
{
	if (RD(f->portpair) != ((uint32_t)rport | (uint32_t)ntohs(lport) << 16))
		return false;
	if (family == AF_INET)
		return RD(f->v4key) &&
		       RD(f->addrpair) == ((uint64_t)raddr[3] | (uint64_t)laddr[3] << 32);
	struct in6_addr r = socktab__sk_v6_daddr(f), l = socktab__sk_v6_saddr(f);

	return !RD(f->v4key) && !memcmp(&r, raddr, 16) && !memcmp(&l, laddr, 16);
}

static void check_conn(struct slot *s, uint64_t *rng)
{
	struct snap n;
	bool negative = stress_rand(rng) % 8 == 0;
	struct socktab_sock *f;

	take(s, &n);
	if (negative) /* port 999 is never a destination: nobody holds this tuple */
		n.rport = htons(999);
	if (n.family == AF_INET)
		f = socktab_lookup_tcp4(net, n.raddr[3], n.rport, n.laddr[3], n.lport, SOCKTAB_LOOPBACK_IFINDEX, 0);
	else
		f = socktab_lookup_tcp6(net, (const struct in6_addr *)n.raddr, n.rport,
					(const struct in6_addr *)n.laddr, n.lport, SOCKTAB_LOOPBACK_IFINDEX, 0);
	bool st = stable(s, &n);

	atomic_fetch_add_explicit(&n_lookups, 1, memory_order_relaxed);
	if (f) {
		atomic_fetch_add_explicit(&n_hits, 1, memory_order_relaxed);
		if (negative)
			violation("lookup found a tuple nobody connected");
		else if (!tcp_key(f, n.family, n.raddr, n.rport, n.laddr, n.lport) &&
			 !left_tables(f))
			violation("TCP lookup returned a socket whose key does not match");
	}
	if (st && n.kind == K_CONN && !negative) {
		atomic_fetch_add_explicit(&n_checked, 1, memory_order_relaxed);
		if (f != n.sk)
			violation("a connection present for the whole lookup was missed (got %p)",
				  (void *)f);
	}
	socktab_sock_put(f);
}

static void check_listen(struct slot *s, uint64_t *rng)
{
	struct snap n;
	struct socktab_sock *f;

	take(s, &n);
	if (stress_rand(rng) % 2) {
		f = socktab_lookup_listener4(net, htonl(0x7f000009), htons(12345), htonl(0x7f000001),
					     htons(s->port), SOCKTAB_LOOPBACK_IFINDEX, 0);
		bool st = stable(s, &n);

		atomic_fetch_add_explicit(&n_listener_lookups, 1, memory_order_relaxed);
		if (f && (socktab__sk_num(f) != s->port ||
			  socktab__sk_rcv_saddr(f) != htonl(0x7f000001)) && !left_tables(f))
			violation("listener lookup returned a socket whose key does not match");
		if (st && n.kind == K_LISTEN) {
			atomic_fetch_add_explicit(&n_checked, 1, memory_order_relaxed);
			if (f != n.sk)
				violation("listener %u present for the whole lookup was missed",
					  s->port);
		}
		socktab_sock_put(f);
		return;
	}
	uint32_t laddr[4] = { 0, 0, 0, htonl(0x7f000001) };

	f = socktab_lookup_established4(net, n.raddr[3], n.rport, laddr[3], htons(s->port), SOCKTAB_LOOPBACK_IFINDEX, 0);
	bool st = stable(s, &n);

	atomic_fetch_add_explicit(&n_lookups, 1, memory_order_relaxed);
	if (f && !tcp_key(f, AF_INET, n.raddr, n.rport, laddr, htons(s->port)) && !left_tables(f))
		violation("child lookup returned a socket whose key does not match");
	if (st && n.kind == K_LISTEN && n.child) {
		atomic_fetch_add_explicit(&n_checked, 1, memory_order_relaxed);
		if (f != n.csk)
			violation("a child present for the whole lookup was missed");
	}
	socktab_sock_put(f);
}

static void check_udp(struct slot *s, uint64_t *rng)
{
	struct snap n;
	bool from_peer;
	uint32_t src;
	uint16_t sport;
	struct socktab_sock *f;

	take(s, &n);
	from_peer = n.connected && stress_rand(rng) % 2;
	src = from_peer ? n.raddr[3] : htonl(0x7f000005);
	sport = from_peer ? n.rport : htons((uint16_t)(40000 + stress_rand(rng) % 1000));
	f = socktab_lookup_udp4(net, src, sport, htonl(0x7f000001), htons(s->port), SOCKTAB_LOOPBACK_IFINDEX, 0);
	bool st = stable(s, &n);

	atomic_fetch_add_explicit(&n_udp_lookups, 1, memory_order_relaxed);
	if (f && socktab__sk_num(f) != s->port && !left_tables(f))
		violation("UDP lookup returned a socket on another port");
	if (st && n.kind == K_UDP) {
		atomic_fetch_add_explicit(&n_checked, 1, memory_order_relaxed);
		/* Only this socket is bound to the port: it answers unless it is connected to
		 * someone else. */
		struct socktab_sock *expect = !n.connected || from_peer ? n.sk : NULL;

		if (f != expect)
			violation("UDP lookup from %s got %p, expected %p (connected=%d)",
				  from_peer ? "the peer" : "a stranger", (void *)f, (void *)expect,
				  n.connected);
	}
	socktab_sock_put(f);
}

static void check_group(uint64_t *rng)
{
	bool sure;
	struct socktab_sock *f = stress_group_lookup(&group, rng, &sure);

	atomic_fetch_add_explicit(&n_listener_lookups, 1, memory_order_relaxed);
	if (!f && sure)
		violation("group listener lookup missed while three members listened");
	if (f && (socktab__sk_num(f) != GROUP_PORT || socktab__sk_rcv_saddr(f) != htonl(0x7f000001)) &&
	    !left_tables(f))
		violation("group listener lookup returned a socket whose key does not match");
	socktab_sock_put(f);
}

static void *reader(void *arg)
{
	uint64_t rng = (uint64_t)(uintptr_t)arg;
	int nslots = nthreads * SLOTS_PER_WRITER;

	socktab_thread_register();
	while (!atomic_load(&stop)) {
		if (atomic_load(&group.ready) && stress_rand(&rng) % 8 == 0) {
			check_group(&rng);
			continue;
		}
		struct slot *s = &slots[stress_rand(&rng) % (uint64_t)nslots];

		switch (s->type) {
		case K_CONN:
			check_conn(s, &rng);
			break;
		case K_LISTEN:
			check_listen(s, &rng);
			break;
		default:
			check_udp(s, &rng);
		}
	}
	socktab_thread_unregister();
	return NULL;
}

/* ---------------------------------------------------------------- end checks */

static bool port_bindable(int proto, uint16_t port)
{
	struct socktab_sock *sk = socktab_socket(net, proto, AF_INET);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int err;

	if (!sk)
		return false;
	a.sin_addr.s_addr = htonl(0x7f000001);
	err = socktab_bind(sk, (struct sockaddr *)&a, sizeof(a));
	socktab_close(sk);
	return err == 0;
}

/* Counters against the model, with every thread stopped. */
static void check_counts(void)
{
	uint64_t est = 0, udp = 0, udp4 = 0;
	struct socktab_net_stats st;
	struct socktab_udp_stats us;

	for (int i = 0; i < nthreads * SLOTS_PER_WRITER; i++) {
		struct slot *s = &slots[i];
		int k = atomic_load(&s->kind);

		est += k == K_CONN || (k == K_LISTEN && atomic_load(&s->child));
		udp += k == K_UDP;
		udp4 += k == K_UDP && atomic_load(&s->connected);
	}
	socktab_net_stats(net, &st);
	socktab_udp_stats(net, &us);
	if (st.established != est || us.hashed != udp || us.hashed4 != udp4)
		violation("counters established=%llu udp=%llu udp4=%llu, model %llu %llu %llu",
			  (unsigned long long)st.established, (unsigned long long)us.hashed,
			  (unsigned long long)us.hashed4, (unsigned long long)est,
			  (unsigned long long)udp, (unsigned long long)udp4);
}

/* Close everything, let TIME_WAIT expire, and count what is left. */
/* A pool object still referenced or not back on its free list. */
static void count_live(struct socktab_sock *sk, void *arg)
{
	if (atomic_load(&sk->refcnt) || !(atomic_load(&sk->kind) & SOCKTAB__IN_POOL))
		++*(uint64_t *)arg;
}

static uint64_t drain_and_count_leaks(void)
{
	struct socktab_net_stats st;
	struct socktab_udp_stats us;
	uint64_t leaked = 0;

	for (int i = 0; i < nthreads * SLOTS_PER_WRITER; i++) {
		struct socktab_sock *c = atomic_load(&slots[i].csk), *sk = atomic_load(&slots[i].sk);

		if (c)
			socktab_close(c);
		if (sk)
			socktab_close(sk);
	}
	/* Bounded wait: TIME_WAIT entries live 20 ms (stress_net_params). */
	for (int k = 0; k < 100; k++) {
		stress_sleep(0.01);
		socktab_net_tick(net);
		socktab_net_stats(net, &st);
		if (!st.time_wait)
			break;
	}
	/* Sockets go back to the pool after a grace period, in batches: hand over the batch in
	 * progress and wait for the callbacks. */
	for (int k = 0; k < SOCKTAB__K_NR; k++)
		socktab__pool_flush(&net->pools[k]);
	urcu_memb_synchronize_rcu();
	urcu_memb_barrier();
	socktab_net_stats(net, &st);
	socktab_udp_stats(net, &us);
	leaked = st.established + st.time_wait + st.bind_buckets + us.hashed + us.hashed4;
	for (int k = 0; k < SOCKTAB__K_NR; k++)
		socktab__pool_walk(&net->pools[k], count_live, &leaked);
	return leaked;
}

static void check_ports(void)
{
	int bad = 0;

	for (int p = 40000; p <= 40999; p++)
		bad += !port_bindable(SOCKTAB_TCP, (uint16_t)p);
	for (int w = 0; w < nthreads; w++)
		for (int i = 0; i < 64; i++) {
			bad += !port_bindable(SOCKTAB_TCP, (uint16_t)(LISTEN_PORT_BASE + 64 * w + i));
			bad += !port_bindable(SOCKTAB_UDP, (uint16_t)(UDP_PORT_BASE + 64 * w + i));
		}
	bad += !port_bindable(SOCKTAB_TCP, GROUP_PORT);
	if (bad)
		violation("%d released ports are not bindable at the end", bad);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: torture [--threads N (1-%d, default 2)] [--duration S (default 10)]"
		   " [--seed X]\n"
		   "N writer and N reader threads plus a listener-group churn thread; prints one\n"
		   "summary line (ops, lookups, violations, leaked) and 'N passed, M failed'.\n",
		MAX_THREADS);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "duration", required_argument, NULL, 'd' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct opt_parser op = { "torture", "h", longopts };
	double duration = 10;
	uint64_t seed = 1;
	pthread_t wt[MAX_THREADS], rt[MAX_THREADS], ct;
	struct socktab_net_params p;
	struct timespec t0, t1;
	int c;

	opt_start();
	while ((c = opt_next(&op, argc, argv)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 't':
			if (opt_count_int(&op, "--threads", optarg, 1, MAX_THREADS, &nthreads))
				return 2;
			break;
		case 'd':
			if (opt_real(&op, "--duration", optarg, 0.001, 86400, &duration))
				return 2;
			break;
		case 's':
			if (opt_seed(&op, "--seed", optarg, &seed))
				return 2;
			break;
		default:
			return 2;
		}
	}
	if (optind < argc) {
		opt_fail(&op, "unexpected argument '%s'", argv[optind]);
		return 2;
	}

	socktab_thread_register();
	stress_net_params(&p);
	p.udp_hash_entries = 128;
	net = socktab_net_new(&p);
	if (!net) {
		perror("torture: socktab_net_new");
		return 1;
	}
	for (int w = 0; w < nthreads; w++)
		for (int i = 0; i < SLOTS_PER_WRITER; i++) {
			struct slot *s = &slots[w * SLOTS_PER_WRITER + i];

			s->type = i < NCONN ? K_CONN : i < NCONN + NLISTEN ? K_LISTEN : K_UDP;
			s->port = (uint16_t)((s->type == K_LISTEN ? LISTEN_PORT_BASE : UDP_PORT_BASE) +
					     64 * w + i);
		}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	group.net = net;
	group.seed = seed * 7919 + 1;
	pthread_create(&ct, NULL, stress_group_churn, &group);
	for (int i = 0; i < nthreads; i++) {
		wargs[i].w = i;
		wargs[i].seed = seed * 0x9e3779b97f4a7c15ull + (uint64_t)i + 1;
		pthread_create(&wt[i], NULL, writer, &wargs[i]);
		pthread_create(&rt[i], NULL, reader,
			       (void *)(uintptr_t)((seed ^ 0xabcdef1ull) * (uint64_t)(i + 7) | 1));
	}
	stress_sleep(duration);
	atomic_store(&stop, 1);
	for (int i = 0; i < nthreads; i++) {
		pthread_join(wt[i], NULL);
		pthread_join(rt[i], NULL);
	}
	atomic_store(&group.stop, 1); /* readers are done: the group may go now */
	pthread_join(ct, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	check_counts();
	uint64_t leaked = drain_and_count_leaks();

	check_ports();
	struct socktab_net_stats st;

	socktab_net_stats(net, &st);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	printf("torture: seed=%llu threads=%d duration_s=%.1f ops=%llu lookups=%llu "
	       "listener_lookups=%llu udp_lookups=%llu checked=%llu hits=%llu connect_fail=%llu "
	       "tw_recycled=%llu churn_steps=%llu violations=%llu leaked=%llu\n",
	       (unsigned long long)seed, nthreads, secs, (unsigned long long)n_ops,
	       (unsigned long long)n_lookups,
	       (unsigned long long)n_listener_lookups, (unsigned long long)n_udp_lookups,
	       (unsigned long long)n_checked, (unsigned long long)n_hits,
	       (unsigned long long)n_connect_fail, (unsigned long long)st.tw_recycled,
	       (unsigned long long)group.steps, (unsigned long long)n_violations,
	       (unsigned long long)leaked);
	socktab_net_free(net);
	socktab_thread_unregister();
	bool ok = n_violations == 0 && leaked == 0 && n_checked > 0;

	printf("%d passed, %d failed\n", ok, !ok);
	return ok ? 0 : 1;
}
