/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * torture: reader threads look sockets up while writer threads change the tables, with a model
 * on the side; one summary line at the end. A white-box test: the end checks read the pool.
 *
 *   build/torture [--threads N] [--duration S] [--seed X]
 *
 * N writers and N readers (default 2 each), one listener-group churn thread and one device churn
 * thread share one net with small tables (stress_net_params in tests/common/stress.h: long
 * chains, shared buckets), ports 40000-40999, TIME_WAIT of 20 ms with tw_reuse (entries expire
 * and are taken over all the time), and a type-stable pool (a closed socket's memory is handed
 * out again at once). The net has devices: d0 (192.0.2.1/24, 2001:db8::1/64), d1
 * (198.51.100.1/24, 2001:db8:1::1/64), a VRF "blue" with its slave d2 (203.0.113.1/24,
 * 2001:db8:2::1/64), and d3, whose addresses and state the device churn thread keeps changing
 * (with a device x0 coming and going) while the others bind, connect and look up.
 *
 * Each slot has a profile: its sockets are unbound on lo's addresses, or bound with
 * SO_BINDTOIFINDEX to d0, d1, d2 or blue and use that device's addresses and peers; traffic to
 * them arrives on (lo, 0), (d0, 0), (d1, 0), or (d2, blue) for the last two (R91, R99). Each
 * writer owns slots of three kinds and moves each through its life:
 *   CONN    socket (v4 or v6), connect() to 4 peers of the profile (127.0.0.1-4 or ::1 for lo)
 *           ports 1000-1003, ESTABLISHED, then a graceful close (TIME_WAIT), an abortive close
 *           (SO_LINGER 0) or a reset (tcp_done) and close; across a graceful close the slot
 *           stays present (K_CLOSING): its 4-tuple must be found, as the connection or as its
 *           TIME_WAIT entry, by every lookup that overlapped no other change of the slot;
 *   LISTEN  bind the profile's address (or the wildcard) port P (owned by the writer), listen,
 *           a child from a peer arriving on the profile's device, then abortive closes; P must
 *           be bindable again at once every time (it was released);
 *   UDP     bind the profile's address port Q (owned), connect to a peer, re-connect,
 *           disconnect (unbound ones only: a disconnect drops the device, R75), close; Q must
 *           be bindable again at once.
 * A slot publishes what is present with a sequence counter, odd while the writer changes it
 * (tests/common/stress.h). A reader that reads the same even value before and after a lookup
 * knows the slot's socket was there for the whole lookup. Three lookups in four arrive on the
 * profile's device: the lookup must return exactly the slot's socket (a connected UDP socket
 * must not answer another source). One in four arrives on a device those sockets must not take
 * (R92: another device, lo, an unknown one, or VRF traffic for unbound ones): the lookup must
 * return nothing, since no other socket has those keys. Every non-NULL result must carry the
 * key asked for and be bound to a device that takes the ingress device, unless its owner
 * closed it meanwhile. The churn thread replaces, one at a time, members of a SO_REUSEPORT
 * group of four listeners on 127.0.0.1:9000; a listener lookup that overlapped at most one
 * replacement must find a member (one that overlapped more may rightly miss).
 *
 * At the end, with every thread stopped: net counters equal the model (established = connected
 * CONN and child slots, UDP hashed = bound UDP slots, hashed4 = those with a hash4 entry, stale
 * or not); then everything is closed, TIME_WAIT entries expire, and every counter is zero,
 * every pool object is back in the pool with no reference (leaked counts those that are not),
 * and every port of the range and of the writers is bindable again.
 *
 * Prints "torture: ... violations=V leaked=L" and "N passed, M failed"; exit status 1 on any
 * violation or leak, or when no device-bound slot was checked.
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

/* K_CLOSING: a K_CONN slot whose connection is closing gracefully; its 4-tuple must be found
 * all the while, as the connection or as the TIME_WAIT entry that replaces it. */
enum { K_EMPTY, K_CONN, K_LISTEN, K_UDP, K_CLOSING };

/*
 * Where a slot's sockets live: unbound on lo's addresses, or bound (SO_BINDTOIFINDEX) to a
 * device of the net with its addresses, and the ingress device (dif, sdif) of their traffic.
 */
enum { P_LO, P_D0, P_D1, P_D2, P_VRF, NPROF };
#define NCAND 7 /* ingress devices a lookup may claim (setup_profiles) */

struct prof {
	const char *name;
	int dev;                  /* SO_BINDTOIFINDEX, 0: none */
	int dif, sdif;            /* ingress device of traffic to these sockets, and its VRF */
	uint32_t laddr;           /* address listeners and UDP sockets bind, network order */
	bool wild;                /* listeners bind the wildcard instead */
	uint32_t peer;            /* first of 4 peers to connect to (network order) */
	struct in6_addr peer6;    /* the IPv6 peer, if v6 */
	bool v6;
	/* Ingress devices whose traffic these sockets must never take (R92). */
	int nwrong;
	int wrong_dif[NCAND], wrong_sdif[NCAND];
};

static struct prof profs[NPROF];

struct slot {
	_Atomic uint32_t seq;     /* odd while the writer changes the slot */
	_Atomic int kind;         /* what is present; K_EMPTY: nothing */
	_Atomic int child;        /* K_LISTEN: a child connection is present */
	_Atomic int connected;    /* K_UDP: connected to (raddr, rport) */
	_Atomic int in4;          /* K_UDP: has a hash4 entry, stale or not (R74, R75) */
	_Atomic int family;       /* K_CONN */
	_Atomic uint32_t laddr[4], raddr[4]; /* IPv6 words; IPv4 in word 3 */
	_Atomic uint32_t lport, rport;       /* network order */
	_Atomic(struct socktab_sock *) sk, csk;
	_Atomic uint64_t closing_ns; /* K_CLOSING: when the close began */
	/* set before the threads start */
	int type;                 /* K_CONN, K_LISTEN or K_UDP: what this slot holds when full */
	uint16_t port;            /* K_LISTEN, K_UDP: the writer-owned port */
	const struct prof *prof;  /* where its sockets live */
};

static struct socktab_net *net;
static struct slot slots[MAX_THREADS * SLOTS_PER_WRITER];
static int nthreads = 2;
static _Atomic int stop;
static _Atomic uint64_t n_ops, n_lookups, n_checked, n_hits, n_violations, n_listener_lookups;
static _Atomic uint64_t n_udp_lookups, n_connect_fail;
static _Atomic uint64_t n_dev_checked, n_wrong_dev, n_dev_churn;

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

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A closing connection is checked for this long after its close began: a quarter of its
 * TIME_WAIT entry's 20 ms, so the entry cannot have expired. */
#define CLOSING_CHECK_NS 5000000ull

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

/* A socket of @proto and @family bound to the slot profile's device. */
static struct socktab_sock *prof_socket(const struct prof *p, int proto, int family)
{
	struct socktab_sock *sk = socktab_socket(net, proto, family);

	if (sk && p->dev &&
	    socktab_setsockopt(sk, SOL_SOCKET, SO_BINDTOIFINDEX, &p->dev, sizeof(p->dev))) {
		violation("SO_BINDTOIFINDEX %d failed", p->dev);
		socktab_close(sk);
		return NULL;
	}
	return sk;
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
		int mode = (int)(stress_rand(rng) % 3);

		if (mode == 0 && socktab_get_state(sk) == SOCKTAB_TCP_ESTABLISHED) {
			/* Graceful (ESTABLISHED -> TIME_WAIT): the slot stays present across the
			 * close, and is emptied only after it. (A SYN_SENT one leaves no entry.) */
			begin(s);
			atomic_store(&s->kind, K_CLOSING);
			atomic_store(&s->closing_ns, now_ns());
			end(s);
			close_mode(sk, mode);
			begin(s);
			atomic_store(&s->kind, K_EMPTY);
			atomic_store(&s->sk, NULL);
			end(s);
			return;
		}
		begin(s);
		atomic_store(&s->kind, K_EMPTY);
		atomic_store(&s->sk, NULL);
		close_mode(sk, mode);
		end(s);
		return;
	}
	const struct prof *p = s->prof;
	bool v6 = p->v6 && stress_rand(rng) % 4 == 0;
	uint16_t dport = htons((uint16_t)(1000 + stress_rand(rng) % 4));
	struct sockaddr_storage d;
	socklen_t dl;

	memset(&d, 0, sizeof(d));
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&d;

		a->sin6_family = AF_INET6;
		a->sin6_addr = p->peer6;
		a->sin6_port = dport;
		dl = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&d;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(ntohl(p->peer) + (uint32_t)(stress_rand(rng) % 4));
		a->sin_port = dport;
		dl = sizeof(*a);
	}
	sk = prof_socket(p, SOCKTAB_TCP, v6 ? AF_INET6 : AF_INET);
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
	const struct prof *p = s->prof;
	struct socktab_sock *sk = atomic_load(&s->sk), *c = atomic_load(&s->csk);
	struct sockaddr_in l = { .sin_family = AF_INET, .sin_port = htons(s->port) };

	l.sin_addr.s_addr = p->wild ? 0 : p->laddr;
	if (!sk) {
		sk = prof_socket(p, SOCKTAB_TCP, AF_INET);
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

		/* The SYN: from the profile's second peer to its address, on its device. */
		r.sin_addr.s_addr = htonl(ntohl(p->peer) + 1);
		r.sin_port = htons((uint16_t)(30000 + stress_rand(rng) % 30000));
		l.sin_addr.s_addr = p->laddr;
		begin(s);
		c = socktab_sock_new_child(sk, (struct sockaddr *)&l, (struct sockaddr *)&r,
					   sizeof(r), p->dif, p->sdif);
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
		sk = prof_socket(s->prof, SOCKTAB_UDP, AF_INET);
		if (!sk) {
			violation("UDP socket() failed: %s", strerror(errno));
			return;
		}
		a.sin_addr.s_addr = s->prof->laddr;
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
		atomic_store(&s->in4, 0);
		atomic_store(&s->sk, sk);
		atomic_store(&s->kind, K_UDP);
		end(s);
		return;
	}
	int step = (int)(stress_rand(rng) % 4);

	/* A disconnect would also drop the device binding (R75): a bound one re-connects. */
	if (step == 2 && s->prof->dev)
		step = 1;
	begin(s);
	switch (step) {
	case 0:
	case 1: /* connect, or re-connect to another peer: moves between hash2/hash4 chains */
		a.sin_addr.s_addr = htonl(ntohl(s->prof->peer) + 2);
		a.sin_port = htons((uint16_t)(7000 + stress_rand(rng) % 8));
		if (socktab_connect(sk, (struct sockaddr *)&a, sizeof(a))) {
			violation("UDP connect failed");
			atomic_store(&s->connected, 0);
			break;
		}
		publish_names(s, sk, true);
		atomic_store(&s->connected, 1);
		atomic_store(&s->in4, 1);
		break;
	case 2: /* disconnect: bind() named the port, so it stays */
		a.sin_family = AF_UNSPEC;
		if (socktab_connect(sk, (struct sockaddr *)&a, sizeof(a)))
			violation("UDP disconnect failed");
		atomic_store(&s->connected, 0);
		/* With its address locked too, its hash4 entry stays, stale (R75). */
		if (!s->prof->laddr)
			atomic_store(&s->in4, 0);
		break;
	default:
		atomic_store(&s->kind, K_EMPTY);
		atomic_store(&s->sk, NULL);
		atomic_store(&s->connected, 0);
		atomic_store(&s->in4, 0);
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

/* inet_bound_dev_eq (R92) with the l3mdev_accept sysctls off, as the torture's net has them. */
static bool dev_ok(int bound, int dif, int sdif)
{
	return bound ? bound == dif || bound == sdif : !sdif;
}

/*
 * The ingress device of a lookup of slot @s: mostly the right one for its profile, one time in
 * four one whose traffic its sockets must not take. Returns whether it is a wrong one.
 */
static bool pick_ingress(const struct slot *s, uint64_t *rng, int *dif, int *sdif)
{
	const struct prof *p = s->prof;
	uint64_t r = stress_rand(rng);

	if (r % 4 || !p->nwrong) {
		*dif = p->dif;
		*sdif = p->sdif;
		return false;
	}
	*dif = p->wrong_dif[(r >> 8) % (uint64_t)p->nwrong];
	*sdif = p->wrong_sdif[(r >> 8) % (uint64_t)p->nwrong];
	atomic_fetch_add_explicit(&n_wrong_dev, 1, memory_order_relaxed);
	return true;
}

/* A result's device must take the ingress device, unless the owner closed it after the lookup
 * took its reference (see left_tables). */
static void check_dev(const struct slot *s, struct socktab_sock *f, int dif, int sdif,
		      const char *what)
{
	if (f && !dev_ok((int)RD(f->bound_dev_if), dif, sdif) && !left_tables(f))
		violation("%s lookup on dif %d sdif %d returned a socket bound to device %d (slot "
			  "profile %s)", what, dif, sdif, (int)RD(f->bound_dev_if), s->prof->name);
}

/* One more lookup checked against a stable slot; dev_checked counts device-bound ones. */
static void count_checked(const struct slot *s)
{
	atomic_fetch_add_explicit(&n_checked, 1, memory_order_relaxed);
	if (s->prof->dev)
		atomic_fetch_add_explicit(&n_dev_checked, 1, memory_order_relaxed);
}

static void check_conn(struct slot *s, uint64_t *rng)
{
	struct snap n;
	bool negative = stress_rand(rng) % 8 == 0;
	struct socktab_sock *f;
	int dif, sdif;
	bool wrong = pick_ingress(s, rng, &dif, &sdif);

	take(s, &n);
	if (negative) /* port 999 is never a destination: nobody holds this tuple */
		n.rport = htons(999);
	if (n.family == AF_INET)
		f = socktab_lookup_tcp4(net, n.raddr[3], n.rport, n.laddr[3], n.lport, dif, sdif);
	else
		f = socktab_lookup_tcp6(net, (const struct in6_addr *)n.raddr, n.rport,
					(const struct in6_addr *)n.laddr, n.lport, dif, sdif);
	bool st = stable(s, &n);

	atomic_fetch_add_explicit(&n_lookups, 1, memory_order_relaxed);
	if (f) {
		atomic_fetch_add_explicit(&n_hits, 1, memory_order_relaxed);
		if (negative)
			violation("lookup found a tuple nobody connected");
		else if (!tcp_key(f, n.family, n.raddr, n.rport, n.laddr, n.lport) &&
			 !left_tables(f))
			violation("TCP lookup returned a socket whose key does not match");
		check_dev(s, f, dif, sdif, "TCP");
	}
	if (st && n.kind == K_CLOSING && !negative &&
	    now_ns() - atomic_load(&s->closing_ns) < CLOSING_CHECK_NS) {
		/* The connection or its TIME_WAIT entry, on the devices that take the connection;
		 * nothing on the others. Checked only well inside the entry's 20 ms, before the
		 * reaper may rightly remove it. */
		count_checked(s);
		if (wrong ? f != NULL
			  : !f || (f != n.sk && (socktab_get_state(f) != SOCKTAB_TCP_TIME_WAIT ||
						 !tcp_key(f, n.family, n.raddr, n.rport, n.laddr,
							  n.lport))))
			violation("a closing connection (profile %s) present for the whole lookup "
				  "on dif %d sdif %d: got %p (state %d), expected it or its "
				  "TIME_WAIT entry", s->prof->name, dif, sdif, (void *)f,
				  f ? socktab_get_state(f) : -1);
	}
	if (st && n.kind == K_CONN && !negative) {
		/* Its own device finds it; no other entry has its 4-tuple on a device that takes
		 * a wrong ingress device. */
		struct socktab_sock *expect = wrong ? NULL : n.sk;

		count_checked(s);
		if (f != expect)
			violation("a connection (profile %s) present for the whole lookup on "
				  "dif %d sdif %d: got %p, expected %p", s->prof->name, dif, sdif,
				  (void *)f, (void *)expect);
	}
	socktab_sock_put(f);
}

static void check_listen(struct slot *s, uint64_t *rng)
{
	const struct prof *p = s->prof;
	struct snap n;
	struct socktab_sock *f;
	int dif, sdif;
	bool wrong = pick_ingress(s, rng, &dif, &sdif);

	take(s, &n);
	if (stress_rand(rng) % 2) {
		f = socktab_lookup_listener4(net, htonl(ntohl(p->peer) + 8), htons(12345), p->laddr,
					     htons(s->port), dif, sdif);
		bool st = stable(s, &n);

		atomic_fetch_add_explicit(&n_listener_lookups, 1, memory_order_relaxed);
		if (f && (socktab__sk_num(f) != s->port ||
			  socktab__sk_rcv_saddr(f) != (p->wild ? 0 : p->laddr)) && !left_tables(f))
			violation("listener lookup returned a socket whose key does not match");
		check_dev(s, f, dif, sdif, "listener");
		if (st && n.kind == K_LISTEN) {
			count_checked(s);
			if (f != (wrong ? NULL : n.sk))
				violation("listener %u (profile %s) present for the whole "
					  "lookup on dif %d sdif %d: got %p, expected %p", s->port,
					  p->name, dif, sdif, (void *)f,
					  (void *)(wrong ? NULL : n.sk));
		}
		socktab_sock_put(f);
		return;
	}
	uint32_t laddr[4] = { 0, 0, 0, p->laddr };

	f = socktab_lookup_established4(net, n.raddr[3], n.rport, laddr[3], htons(s->port), dif,
					sdif);
	bool st = stable(s, &n);

	atomic_fetch_add_explicit(&n_lookups, 1, memory_order_relaxed);
	if (f && !tcp_key(f, AF_INET, n.raddr, n.rport, laddr, htons(s->port)) && !left_tables(f))
		violation("child lookup returned a socket whose key does not match");
	check_dev(s, f, dif, sdif, "child");
	if (st && n.kind == K_LISTEN && n.child) {
		count_checked(s);
		if (f != (wrong ? NULL : n.csk))
			violation("a child (profile %s) present for the whole lookup on dif %d "
				  "sdif %d: got %p", p->name, dif, sdif, (void *)f);
	}
	socktab_sock_put(f);
}

static void check_udp(struct slot *s, uint64_t *rng)
{
	const struct prof *p = s->prof;
	struct snap n;
	bool from_peer;
	uint32_t src;
	uint16_t sport;
	struct socktab_sock *f;
	int dif, sdif;
	bool wrong = pick_ingress(s, rng, &dif, &sdif);

	take(s, &n);
	from_peer = n.connected && stress_rand(rng) % 2;
	src = from_peer ? n.raddr[3] : htonl(ntohl(p->peer) + 4);
	sport = from_peer ? n.rport : htons((uint16_t)(40000 + stress_rand(rng) % 1000));
	f = socktab_lookup_udp4(net, src, sport, p->laddr, htons(s->port), dif, sdif);
	bool st = stable(s, &n);

	atomic_fetch_add_explicit(&n_udp_lookups, 1, memory_order_relaxed);
	if (f && socktab__sk_num(f) != s->port && !left_tables(f))
		violation("UDP lookup returned a socket on another port");
	check_dev(s, f, dif, sdif, "UDP");
	if (st && n.kind == K_UDP) {
		count_checked(s);
		/* Only this socket is bound to the port: it answers unless it is connected to
		 * someone else, or the datagram came in on a device it does not take. */
		struct socktab_sock *expect = (!n.connected || from_peer) && !wrong ? n.sk : NULL;

		if (f != expect)
			violation("UDP lookup (profile %s, dif %d sdif %d) from %s got %p, "
				  "expected %p (connected=%d)", p->name, dif, sdif,
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
		udp4 += k == K_UDP && atomic_load(&s->in4);
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

/* ---------------------------------------------------------------- devices */

static int dev_d0, dev_d1, dev_d2, dev_blue, dev_d3;
static uint64_t dev_seed;

static uint32_t ip4(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

static int addr4(int dev, const char *s, int plen)
{
	uint32_t a = ip4(s);

	return socktab_addr_add(net, dev, AF_INET, &a, plen);
}

static int addr6(int dev, const char *s, int plen)
{
	struct in6_addr a;

	inet_pton(AF_INET6, s, &a);
	return socktab_addr_add(net, dev, AF_INET6, &a, plen);
}

/*
 * The net's devices: d0 (192.0.2.1/24, 2001:db8::1/64), d1 (198.51.100.1/24,
 * 2001:db8:1::1/64), a VRF "blue" (table 10) with its slave d2 (203.0.113.1/24,
 * 2001:db8:2::1/64), and d3, which the device churn thread keeps changing.
 */
static int setup_devices(void)
{
	dev_d0 = socktab_dev_add(net, "d0", 1);
	dev_d1 = socktab_dev_add(net, "d1", 1);
	dev_blue = socktab_dev_add_vrf(net, "blue", 10, 1);
	dev_d2 = socktab_dev_add(net, "d2", 1);
	dev_d3 = socktab_dev_add(net, "d3", 1);
	if (dev_d0 < 0 || dev_d1 < 0 || dev_blue < 0 || dev_d2 < 0 || dev_d3 < 0 ||
	    socktab_dev_set_master(net, dev_d2, dev_blue) || addr4(dev_d0, "192.0.2.1", 24) ||
	    addr6(dev_d0, "2001:db8::1", 64) || addr4(dev_d1, "198.51.100.1", 24) ||
	    addr6(dev_d1, "2001:db8:1::1", 64) || addr4(dev_d2, "203.0.113.1", 24) ||
	    addr6(dev_d2, "2001:db8:2::1", 64))
		return -1;
	return 0;
}

/* Fill the profiles (see struct prof) once the devices exist. */
static void setup_profiles(void)
{
	/* Every ingress device a lookup may claim; each profile gets those it must not take. */
	const int cand[NCAND][2] = { { SOCKTAB_LOOPBACK_IFINDEX, 0 }, { dev_d0, 0 }, { dev_d1, 0 },
				{ dev_d2, 0 }, { dev_d2, dev_blue }, { 4242, 0 },
				{ dev_d0, dev_blue } };
	const struct {
		const char *name;
		int dev, dif, sdif;
		const char *laddr;
		bool wild;
		const char *peer, *peer6;
	} def[NPROF] = {
		{ "lo", 0, SOCKTAB_LOOPBACK_IFINDEX, 0, "127.0.0.1", false, "127.0.0.1", "::1" },
		{ "d0", dev_d0, dev_d0, 0, "192.0.2.1", true, "192.0.2.100", "2001:db8::100" },
		{ "d1", dev_d1, dev_d1, 0, "198.51.100.1", false, "198.51.100.100",
		  "2001:db8:1::100" },
		{ "d2", dev_d2, dev_d2, dev_blue, "203.0.113.1", true, "203.0.113.100",
		  "2001:db8:2::100" },
		/* Bound to the VRF: takes d2's traffic through sdif (R99). Other peers than d2's,
		 * so that no 4-tuple is shared with a d2-bound socket, which also takes it. */
		{ "blue", dev_blue, dev_d2, dev_blue, "203.0.113.1", false, "203.0.113.150", NULL },
	};

	for (int k = 0; k < NPROF; k++) {
		struct prof *p = &profs[k];

		p->name = def[k].name;
		p->dev = def[k].dev;
		p->dif = def[k].dif;
		p->sdif = def[k].sdif;
		p->laddr = ip4(def[k].laddr);
		p->wild = def[k].wild;
		p->peer = ip4(def[k].peer);
		p->v6 = def[k].peer6 != NULL;
		if (p->v6)
			inet_pton(AF_INET6, def[k].peer6, &p->peer6);
		p->nwrong = 0;
		for (int c = 0; c < NCAND; c++)
			if (!dev_ok(p->dev, cand[c][0], cand[c][1])) {
				p->wrong_dif[p->nwrong] = cand[c][0];
				p->wrong_sdif[p->nwrong] = cand[c][1];
				p->nwrong++;
			}
	}
}

/*
 * Device churn: while sockets are bound, connected and looked up, d3 gains and loses
 * addresses and goes down and up, and a device x0 comes and goes (a bounded number of times,
 * like every loop here). None of this touches the
 * profiles' devices, so no socket's lookups may change.
 */
#define MAX_DEV_CYCLES 200

static void *dev_churn(void *arg)
{
	uint64_t rng = dev_seed | 1;
	int x0 = 0, cycles = 0;

	(void)arg;
	socktab_thread_register();
	while (!atomic_load(&stop)) {
		int err = 0;

		switch (stress_rand(&rng) % 4) {
		case 0:
			if (addr4(dev_d3, "198.18.0.1", 24) == -EEXIST) {
				uint32_t a = ip4("198.18.0.1");

				err = socktab_addr_del(net, dev_d3, AF_INET, &a, 24);
			}
			break;
		case 1:
			if (addr6(dev_d3, "2001:db8:ff::1", 64) == -EEXIST) {
				struct in6_addr a;

				inet_pton(AF_INET6, "2001:db8:ff::1", &a);
				err = socktab_addr_del(net, dev_d3, AF_INET6, &a, 64);
			}
			break;
		case 2:
			err = socktab_dev_set_up(net, dev_d3, (int)(stress_rand(&rng) & 1));
			break;
		default:
			if (x0 > 0) {
				err = socktab_dev_del(net, x0);
				x0 = 0;
			} else if (cycles < MAX_DEV_CYCLES) {
				x0 = socktab_dev_add(net, "x0", 1);
				err = x0 < 0 ? x0 : 0;
				cycles++;
			}
		}
		if (err)
			violation("device churn call failed: %s", strerror(-err));
		atomic_fetch_add_explicit(&n_dev_churn, 1, memory_order_relaxed);
		stress_sleep(0.0002);
	}
	socktab_thread_unregister();
	return NULL;
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
	pthread_t wt[MAX_THREADS], rt[MAX_THREADS], ct, dt;
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
	if (opt_no_operands(&op, argc, argv))
		return 2;

	socktab_thread_register();
	stress_net_params(&p);
	p.udp_hash_entries = 128;
	net = socktab_net_new(&p);
	if (!net) {
		perror("torture: socktab_net_new");
		return 1;
	}
	if (setup_devices()) {
		fprintf(stderr, "torture: the devices could not be set up\n");
		return 1;
	}
	setup_profiles();
	for (int w = 0; w < nthreads; w++)
		for (int i = 0; i < SLOTS_PER_WRITER; i++) {
			struct slot *s = &slots[w * SLOTS_PER_WRITER + i];

			s->type = i < NCONN ? K_CONN : i < NCONN + NLISTEN ? K_LISTEN : K_UDP;
			s->prof = &profs[(w + i) % NPROF];
			s->port = (uint16_t)((s->type == K_LISTEN ? LISTEN_PORT_BASE : UDP_PORT_BASE) +
					     64 * w + i);
		}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	group.net = net;
	group.seed = seed * 7919 + 1;
	pthread_create(&ct, NULL, stress_group_churn, &group);
	dev_seed = seed * 0x2545f4914f6cdd1dull + 3;
	pthread_create(&dt, NULL, dev_churn, NULL);
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
	pthread_join(dt, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	check_counts();
	uint64_t leaked = drain_and_count_leaks();

	check_ports();
	struct socktab_net_stats st;

	socktab_net_stats(net, &st);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	printf("torture: seed=%llu threads=%d duration_s=%.1f ops=%llu lookups=%llu "
	       "listener_lookups=%llu udp_lookups=%llu checked=%llu hits=%llu connect_fail=%llu "
	       "tw_recycled=%llu churn_steps=%llu dev_checked=%llu wrong_dev_lookups=%llu "
	       "dev_churn=%llu violations=%llu leaked=%llu\n",
	       (unsigned long long)seed, nthreads, secs, (unsigned long long)n_ops,
	       (unsigned long long)n_lookups,
	       (unsigned long long)n_listener_lookups, (unsigned long long)n_udp_lookups,
	       (unsigned long long)n_checked, (unsigned long long)n_hits,
	       (unsigned long long)n_connect_fail, (unsigned long long)st.tw_recycled,
	       (unsigned long long)group.steps, (unsigned long long)n_dev_checked,
	       (unsigned long long)n_wrong_dev, (unsigned long long)n_dev_churn,
	       (unsigned long long)n_violations,
	       (unsigned long long)leaked);
	socktab_net_free(net);
	socktab_thread_unregister();
	bool ok = n_violations == 0 && leaked == 0 && n_checked > 0 && n_dev_checked > 0 &&
		  n_wrong_dev > 0;

	printf("%d passed, %d failed\n", ok, !ok);
	return ok ? 0 : 1;
}
