/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stress: lookups never miss a live connection while a writer moves it from one table entry to
 * another. One writer thread drives one transition of one 4-tuple again and again; one reader
 * thread looks the 4-tuple up the whole time: with a reference, inside an RCU read-side section
 * without one, and (TCP) as a burst of four keys (IPv4) or a batch of four (IPv6), in turn.
 *
 * The writer keeps a generation counter: odd while the 4-tuple must be found (from the moment it
 * is published until the writer starts to remove its last entry), even otherwise. A reader that
 * reads the same odd generation before and after a lookup knows the connection existed, in one
 * entry or another, for the whole lookup: NULL is a miss, a listener is a miss that the stack
 * would hand to the listener, and anything else with another key is a wrong socket.
 *
 * Cases (--case):
 *   close           ESTABLISHED -> TIME_WAIT by close() (client, port chosen by connect())
 *   close-bound     the same with a port bind() locked
 *   close-server    the same for a child created from a listener (server side)
 *   setstate        FIN_WAIT1 -> TIME_WAIT by socktab_set_state() on a held socket, then close()
 *   setstate-bound  the same with a port bind() locked
 *   takeover        TIME_WAIT -> a new connection on the same 4-tuple (bound port, tw_reuse),
 *                   then close() back to TIME_WAIT: the 4-tuple is never without an entry
 *   child           a listener gets a child for the 4-tuple (the child must win)
 *   request         a SYN makes a request entry (TCP_NEW_SYN_RECV), whose final ACK makes the
 *                   child take its place in ehash (socktab_req_promote): the request, then the
 *                   child, never neither (nor the listener, which would answer with a RST)
 *   migrate         with tcp_migrate_req, a SO_REUSEPORT listener with a request (even cycles)
 *                   or an unaccepted child (odd cycles) closes: they move to the other member of
 *                   its group and the 4-tuple is found throughout
 *   udp-connect     a SO_REUSEPORT group of two on one port; one member connects to a peer and
 *                   must never get a datagram of another peer from the moment its connect()
 *                   starts rewriting its key (hook in udp.c) until it is closed; a third of the
 *                   lookups are batches (socktab_lookup_batch4/6, socktab_lookup_mixed) that
 *                   walk the hash4 chains of the smallest UDP table, crowded by connected
 *                   sockets on another port
 * --family 4|6, --slots N (ehash slots; 1 crowds every entry into one chain, with fresh entries
 * put in front of the 4-tuple's so it is never first), --duration S (bounded also by an op cap).
 * Prints one summary line with the counts, then "N passed, M failed"; exit status 1 on any miss.
 * Built with meson -Dnaive_order=true (the negative control), every case must fail.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "socktab/socktab.h"
#include "sock.h"
#include "stress.h"
#include "udp.h"

#define MAX_CYCLES 50000000ull
#define LPORT 45000   /* a bound client's port, a listener's port, the UDP group's port */
#define RPORT 7000    /* the peer's port */
#define OTHER 7100    /* fillers' and the other UDP peer's port */

enum kind { CLOSE, CLOSE_BOUND, CLOSE_SERVER, SETSTATE, SETSTATE_BOUND, TAKEOVER, CHILD, UDP,
	    REQUEST, MIGRATE };
static const char *const names[] = { "close", "close-bound", "close-server", "setstate",
				     "setstate-bound", "takeover", "child", "udp-connect",
				     "request", "migrate" };

static enum kind kind;
static int family = 4;
static uint32_t slots = 64;
static double duration = 3;
static struct socktab_net *net;
static _Atomic int stop, ready;
static _Atomic uint64_t gen;       /* odd: the 4-tuple must be found */
static _Atomic uint64_t cycles;
/* The 4-tuple of the generation, as a segment carries it: src = the peer, dst = us. */
static _Atomic uint32_t cur_lport, cur_rport; /* network order */
static _Atomic(struct socktab_sock *) udp_connecting; /* udp-connect: the member that connects */
#define UDP_FILLERS 300
#define FILLER_PEER 20000 /* the fillers' peers' first port */
static struct socktab_sock *udp_fillers[UDP_FILLERS]; /* udp-connect: on port LPORT + 1 */
static struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;
static _Atomic uint64_t n_lookups, n_checked, n_null, n_listener, n_wrong, n_misrouted;
static _Atomic uint64_t n_ref, n_rcu, n_burst;

static void die(const char *what, int err)
{
	fprintf(stderr, "stress_transitions: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(2);
}

static socklen_t mkaddr(struct sockaddr_storage *ss, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (family == 4) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a->sin_port = htons(port);
		return sizeof(*a);
	}
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

	a->sin6_family = AF_INET6;
	a->sin6_addr = lo6;
	a->sin6_port = htons(port);
	return sizeof(*a);
}

static struct socktab_sock *tcp_socket(bool reuse)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, family == 4 ? AF_INET : AF_INET6);
	int one = 1;

	if (!sk)
		die("socket", errno);
	if (reuse && socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		die("SO_REUSEADDR", EINVAL);
	return sk;
}

/* bind() or connect() @sk to the loopback address on @port; any error ends the run. */
static void xaddr(int (*call)(struct socktab_sock *, const struct sockaddr *, socklen_t),
		  const char *what, struct socktab_sock *sk, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len = mkaddr(&ss, port);
	int err = call(sk, (struct sockaddr *)&ss, len);

	if (err)
		die(what, err);
}

#define xbind(sk, port) xaddr(socktab_bind, "bind", sk, port)
#define xconnect(sk, port) xaddr(socktab_connect, "connect", sk, port)

static uint16_t local_port(struct socktab_sock *sk)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (socktab_getsockname(sk, (struct sockaddr *)&ss, &len))
		die("getsockname", EINVAL);
	return family == 4 ? ((struct sockaddr_in *)&ss)->sin_port
			   : ((struct sockaddr_in6 *)&ss)->sin6_port;
}

/* Closes without a TIME_WAIT entry (SO_LINGER 0): fillers and children leave at once. */
static void abort_close(struct socktab_sock *sk)
{
	struct linger lg = { 1, 0 };

	socktab_setsockopt(sk, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	socktab_close(sk);
}

static void set_state(struct socktab_sock *sk, int st)
{
	int err = socktab_set_state(sk, st);

	if (err)
		die("set_state", err);
}

static void publish(uint16_t lport_n, uint16_t rport_n)
{
	atomic_store(&cur_lport, lport_n);
	atomic_store(&cur_rport, rport_n);
	atomic_fetch_add(&gen, 1); /* odd */
}

static void unpublish(void)
{
	atomic_fetch_add(&gen, 1); /* even */
}

/* Let the reader run a few lookups against the current entry. A window of a few hundred
 * iterations can be shorter than one lookup on a slow build (TSan, valgrind), where the reader
 * would never finish a lookup inside a published generation; so one linger in sixteen, while
 * the 4-tuple is published, also waits (at most 2 ms) until the reader has checked one. */
static void linger_a_little(uint64_t *rng)
{
	uint64_t r = stress_rand(rng);

	for (volatile unsigned i = (unsigned)(r % 512); i; i--)
		;
	if ((r >> 32) % 16 == 0 && (atomic_load(&gen) & 1)) {
		uint64_t c0 = atomic_load(&n_checked);
		struct timespec t0, t;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			if (atomic_load(&n_checked) != c0 || atomic_load(&stop))
				break;
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 2000000L);
	}
}

/* Remove the TIME_WAIT entry of the published 4-tuple (after unpublish()). */
static void kill_tw(uint16_t lport_n, uint16_t rport_n)
{
	struct socktab_sock *tw;

	if (family == 4)
		tw = socktab_lookup_established4(net, htonl(INADDR_LOOPBACK), rport_n,
						 htonl(INADDR_LOOPBACK), lport_n, 0, 0);
	else
		tw = socktab_lookup_established6(net, &lo6, rport_n, &lo6, lport_n, 0, 0);
	if (!tw || !socktab_sock_tw(tw))
		die("no TIME_WAIT entry after close", ENOENT);
	socktab_tw_kill(socktab_sock_tw(tw));
	socktab_sock_put(tw);
}

/* --slots 1: a fresh entry in front of the 4-tuple's, the oldest of four closed. */
static struct socktab_sock *fillers[4];
static unsigned nfill;

static void crowd(void)
{
	struct socktab_sock *f;

	if (slots != 1)
		return;
	if (fillers[nfill % 4])
		abort_close(fillers[nfill % 4]);
	f = tcp_socket(false);
	xconnect(f, OTHER);
	set_state(f, SOCKTAB_TCP_ESTABLISHED);
	fillers[nfill++ % 4] = f;
}

static void client_cycle(uint64_t *rng)
{
	bool bound = kind == CLOSE_BOUND || kind == SETSTATE_BOUND;
	struct socktab_sock *sk = tcp_socket(bound);
	uint16_t lp;

	if (bound)
		xbind(sk, LPORT);
	xconnect(sk, RPORT);
	set_state(sk, SOCKTAB_TCP_ESTABLISHED);
	crowd();
	lp = local_port(sk);
	publish(lp, htons(RPORT));
	linger_a_little(rng);
	if (kind == SETSTATE || kind == SETSTATE_BOUND) {
		set_state(sk, SOCKTAB_TCP_FIN_WAIT1);
		set_state(sk, SOCKTAB_TCP_TIME_WAIT);
		linger_a_little(rng);
	}
	socktab_close(sk);
	linger_a_little(rng);
	unpublish();
	kill_tw(lp, htons(RPORT));
}

static struct socktab_sock *listener;

static void server_cycle(uint64_t *rng, bool to_tw)
{
	struct sockaddr_storage l, r;
	uint16_t rp = (uint16_t)(20000 + stress_rand(rng) % 20000);
	socklen_t len = mkaddr(&l, LPORT);
	struct socktab_sock *child;

	mkaddr(&r, rp);
	child = socktab_sock_new_child(listener, (struct sockaddr *)&l, (struct sockaddr *)&r, len,
				       0, 0);
	if (!child)
		die("new_child", errno);
	set_state(child, SOCKTAB_TCP_ESTABLISHED);
	crowd();
	publish(htons(LPORT), htons(rp));
	linger_a_little(rng);
	if (!to_tw) {
		unpublish();
		abort_close(child);
		return;
	}
	socktab_close(child);
	linger_a_little(rng);
	unpublish();
	kill_tw(htons(LPORT), htons(rp));
}

static struct socktab_sock *rp_listener(void)
{
	struct socktab_sock *l = tcp_socket(false);
	struct sockaddr_storage a;
	socklen_t len = mkaddr(&a, LPORT);
	int one = 1;

	if (socktab_setsockopt(l, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    socktab_bind(l, (struct sockaddr *)&a, len) || socktab_listen(l, 128))
		die("reuseport listener", EINVAL);
	return l;
}

/* request: SYN -> request entry -> child (the final ACK) -> accepted and closed. migrate: a
 * listener of the group with a request or an unaccepted child closes; both move to @listener,
 * the member that stays. */
static void request_cycle(uint64_t *rng, bool migrate)
{
	struct sockaddr_storage l, r;
	uint16_t rp = (uint16_t)(20000 + stress_rand(rng) % 20000);
	socklen_t len = mkaddr(&l, LPORT);
	struct socktab_sock *owner = migrate ? rp_listener() : listener, *req, *child = NULL, *a;
	bool promote = !migrate || (atomic_load(&cycles) & 1);
	int err;

	mkaddr(&r, rp);
	req = socktab_req_new(owner, (struct sockaddr *)&l, (struct sockaddr *)&r, len, 0, 0);
	if (!req)
		die("req_new", errno);
	if (migrate && promote && (err = socktab_req_promote(req, SOCKTAB_TCP_ESTABLISHED, &child)))
		die("req_promote", err);
	crowd();
	publish(htons(LPORT), htons(rp));
	linger_a_little(rng);
	if (migrate) {
		socktab_close(owner); /* tcp_migrate_req: everything moves to @listener */
	} else if ((err = socktab_req_promote(req, SOCKTAB_TCP_ESTABLISHED, &child))) {
		die("req_promote", err);
	}
	linger_a_little(rng);
	if (promote) {
		a = socktab_accept(listener);
		if (a != child)
			die("accept did not return the child", EINVAL);
		unpublish();
		abort_close(child);
		socktab_sock_put(child);
	} else {
		socktab_rcu_read_lock();
		a = socktab_req_listener(req);
		socktab_rcu_read_unlock();
		if (a != listener)
			die("the request did not migrate", EINVAL);
		unpublish();
		if ((err = socktab_req_drop(req)))
			die("req_drop", err);
	}
	socktab_sock_put(req);
}

/* takeover: the 4-tuple always has an entry: a connection, then its TIME_WAIT entry, then the
 * next connection that takes the entry over. */
static struct socktab_sock *tk_sk;

static void takeover_cycle(uint64_t *rng)
{
	struct socktab_sock *sk;

	socktab_close(tk_sk); /* -> TIME_WAIT */
	linger_a_little(rng);
	sk = tcp_socket(true);
	xbind(sk, LPORT);
	xconnect(sk, RPORT); /* takes the entry over */
	set_state(sk, SOCKTAB_TCP_ESTABLISHED);
	crowd();
	tk_sk = sk;
	linger_a_little(rng);
}

/* udp-connect */
static struct socktab_sock *udp_keep;

static struct socktab_sock *udp_member(void)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_UDP, family == 4 ? AF_INET : AF_INET6);
	int one = 1;

	if (!sk)
		die("udp socket", errno);
	if (socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)))
		die("SO_REUSEPORT", EINVAL);
	xbind(sk, LPORT);
	return sk;
}

/* Called by udp.c when the member's connect() starts rewriting its key. */
static void on_udp_connect(struct socktab_sock *sk)
{
	if (sk == atomic_load(&udp_connecting))
		atomic_fetch_add_explicit(&gen, 1, memory_order_seq_cst); /* odd */
}

static void udp_cycle(uint64_t *rng)
{
	struct socktab_sock *c = udp_member();

	atomic_store(&udp_connecting, c);
	xconnect(c, RPORT); /* the hook makes the generation odd */
	if (!(atomic_load(&gen) & 1))
		die("connect hook not called", EINVAL);
	linger_a_little(rng);
	unpublish();
	socktab_close(c);
}

static void *writer(void *arg)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	struct timespec t0, t;

	(void)arg;
	socktab_thread_register();
	if (kind == MIGRATE) {
		if (socktab_net_sysctl(net, "net.ipv4.tcp_migrate_req", "1"))
			die("tcp_migrate_req", EINVAL);
		listener = rp_listener();
	} else if (kind == CLOSE_SERVER || kind == CHILD || kind == REQUEST) {
		struct sockaddr_storage l;
		socklen_t len = mkaddr(&l, LPORT);

		listener = tcp_socket(false);
		if (socktab_bind(listener, (struct sockaddr *)&l, len) || socktab_listen(listener, 128))
			die("listener", EINVAL);
	} else if (kind == TAKEOVER) {
		tk_sk = tcp_socket(true);
		xbind(tk_sk, LPORT);
		xconnect(tk_sk, RPORT);
		set_state(tk_sk, SOCKTAB_TCP_ESTABLISHED);
		publish(htons(LPORT), htons(RPORT)); /* odd for the whole run */
	} else if (kind == UDP) {
		for (int j = 0; j < UDP_FILLERS; j++) {
			struct socktab_sock *f = socktab_socket(net, SOCKTAB_UDP,
								family == 4 ? AF_INET : AF_INET6);
			int one = 1;

			if (!f || socktab_setsockopt(f, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
				die("udp filler", EINVAL);
			xbind(f, LPORT + 1);
			xconnect(f, (uint16_t)(FILLER_PEER + j));
			udp_fillers[j] = f;
		}
		udp_keep = udp_member();
		atomic_store(&socktab__udp_connect_hook, on_udp_connect);
		publish(htons(LPORT), htons(OTHER)); /* only the tuple's ports; made even at once */
		unpublish();
	}
	atomic_store(&ready, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (atomic_load(&cycles) < MAX_CYCLES) {
		switch (kind) {
		case CLOSE:
		case CLOSE_BOUND:
		case SETSTATE:
		case SETSTATE_BOUND:
			client_cycle(&rng);
			break;
		case CLOSE_SERVER:
			server_cycle(&rng, true);
			break;
		case CHILD:
			server_cycle(&rng, false);
			break;
		case TAKEOVER:
			takeover_cycle(&rng);
			break;
		case UDP:
			udp_cycle(&rng);
			break;
		case REQUEST:
		case MIGRATE:
			request_cycle(&rng, kind == MIGRATE);
			break;
		}
		atomic_fetch_add_explicit(&cycles, 1, memory_order_relaxed);
		socktab_net_tick(net);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >= duration)
			break;
	}
	atomic_store(&stop, 1);
	socktab_thread_unregister();
	return NULL;
}

/* The expected key, and what a result is. */
static void classify(struct socktab_sock *r, uint16_t lp, uint16_t rp, bool sure)
{
	if (!sure)
		return;
	atomic_fetch_add_explicit(&n_checked, 1, memory_order_relaxed);
	if (!r) {
		atomic_fetch_add_explicit(&n_null, 1, memory_order_relaxed);
		return;
	}
	if (kind == UDP) {
		if (r == atomic_load(&udp_connecting))
			atomic_fetch_add_explicit(&n_misrouted, 1, memory_order_relaxed);
		return;
	}
	if (socktab_get_state(r) == SOCKTAB_TCP_LISTEN) {
		atomic_fetch_add_explicit(&n_listener, 1, memory_order_relaxed);
		return;
	}
	if (socktab__sk_num(r) != ntohs(lp) || socktab__sk_dport(r) != rp) {
		/* A socket that gave its port back after its TIME_WAIT entry took over is still the
		 * connection; anything else with another key is wrong. */
		if (!(socktab__sk_num(r) == 0 && socktab__sk_dport(r) == rp))
			atomic_fetch_add_explicit(&n_wrong, 1, memory_order_relaxed);
	}
}

static struct socktab_sock *lookup(bool ref, uint16_t lp, uint16_t rp)
{
	uint32_t lo4 = htonl(INADDR_LOOPBACK);

	if (kind == UDP) {
		/* A datagram from another peer (ports OTHER..OTHER+63: the reuseport hash picks
		 * either member), which only the kept member may take. */
		uint16_t sp = htons((uint16_t)(OTHER + (rp & 63)));

		if (family == 4)
			return ref ? socktab_lookup_udp4(net, lo4, sp, lo4, lp, 0, 0)
				   : socktab_lookup_udp4_rcu(net, lo4, sp, lo4, lp, 0, 0);
		return ref ? socktab_lookup_udp6(net, &lo6, sp, &lo6, lp, 0, 0)
			   : socktab_lookup_udp6_rcu(net, &lo6, sp, &lo6, lp, 0, 0);
	}
	if (family == 4)
		return ref ? socktab_lookup_tcp4(net, lo4, rp, lo4, lp, 0, 0)
			   : socktab_lookup_tcp4_rcu(net, lo4, rp, lo4, lp, 0, 0);
	return ref ? socktab_lookup_tcp6(net, &lo6, rp, &lo6, lp, 0, 0)
		   : socktab_lookup_tcp6_rcu(net, &lo6, rp, &lo6, lp, 0, 0);
}

/* Four copies of the 4-tuple through socktab_lookup_tcp_burst(): each result is classified. */
static void burst_lookup(uint16_t lp, uint16_t rp, bool sure_before, uint64_t g1)
{
	uint32_t lo4 = htonl(INADDR_LOOPBACK);
	struct socktab_tuple4 k[4];
	struct socktab_sock *out[4];
	bool sure;

	for (int j = 0; j < 4; j++)
		k[j] = (struct socktab_tuple4){ lo4, lo4, rp, lp, 0, 0 };
	socktab_lookup_tcp_burst(net, k, 4, out, 0);
	sure = sure_before && atomic_fetch_add_explicit(&gen, 0, memory_order_seq_cst) == g1;
	for (int j = 0; j < 4; j++) {
		classify(out[j], lp, rp, sure);
		socktab_sock_put(out[j]);
	}
	atomic_fetch_add_explicit(&n_burst, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n_lookups, 4, memory_order_relaxed);
}

/* IPv6: four copies of the 4-tuple through socktab_lookup_batch6() (referenced), each result
 * classified; the kind must name what the entry is. */
static void batch6_lookup(uint16_t lp, uint16_t rp, bool sure_before, uint64_t g1)
{
	struct socktab_tuple6 k[4];
	struct socktab_hit out[4];
	bool sure;

	for (int j = 0; j < 4; j++)
		k[j] = (struct socktab_tuple6){ lo6, lo6, rp, lp, 0, 0 };
	socktab_lookup_batch6(net, SOCKTAB_TCP, k, 4, out, 0);
	sure = sure_before && atomic_fetch_add_explicit(&gen, 0, memory_order_seq_cst) == g1;
	for (int j = 0; j < 4; j++) {
		classify(out[j].sk, lp, rp, sure);
		int st = out[j].sk ? socktab_get_state(out[j].sk) : 0;

		/* (A socket closed since the lookup, such as a migrate case's listener, has no
		 * state left to compare with.) */
		if (out[j].sk && st > 0 && out[j].kind != (socktab_sock_tw(out[j].sk) ? SOCKTAB_HIT_TIME_WAIT
				     : st == SOCKTAB_TCP_LISTEN	     ? SOCKTAB_HIT_LISTENER
				     : st == SOCKTAB_TCP_NEW_SYN_RECV ? SOCKTAB_HIT_REQUEST
								       : SOCKTAB_HIT_ESTABLISHED))
			atomic_fetch_add_explicit(&n_wrong, 1, memory_order_relaxed);
		socktab_sock_put(out[j].sk);
	}
	atomic_fetch_add_explicit(&n_burst, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n_lookups, 4, memory_order_relaxed);
}

/* udp-connect: datagrams of four other peers through socktab_lookup_batch4/6() or
 * socktab_lookup_mixed() in turn, referenced or not, each result held to the single lookup's
 * rule. The UDP table has 128 slots and UDP_FILLERS connected sockets on another port, so the
 * batch walks hash4 chains of several entries, beside or through the connecting member's. */
static void udp_batch_lookup(uint16_t lp, uint64_t i)
{
	uint64_t g1 = atomic_load_explicit(&gen, memory_order_seq_cst);
	uint32_t lo4 = htonl(INADDR_LOOPBACK);
	struct socktab_tuple4 k4[4];
	struct socktab_tuple6 k6[4];
	struct socktab_key km[4];
	struct socktab_hit out[4];
	bool ref = (i >> 1) & 1, mixed = (i >> 2) & 1, sure;
	unsigned int flags = ref ? 0 : SOCKTAB_LOOKUP_NOREF;
	int r;

	for (int j = 0; j < 4; j++) {
		uint16_t sp = htons((uint16_t)(OTHER + ((i + (uint64_t)j * 17) & 63)));

		k4[j] = (struct socktab_tuple4){ lo4, lo4, sp, lp, 0, 0 };
		k6[j] = (struct socktab_tuple6){ lo6, lo6, sp, lp, 0, 0 };
		memset(&km[j], 0, sizeof(km[j]));
		km[j].proto = SOCKTAB_UDP;
		km[j].family = family == 4 ? AF_INET : AF_INET6;
		if (family == 4) {
			km[j].saddr.v4 = lo4;
			km[j].daddr.v4 = lo4;
		} else {
			km[j].saddr.v6 = lo6;
			km[j].daddr.v6 = lo6;
		}
		km[j].sport = sp;
		km[j].dport = lp;
	}
	if (!ref)
		socktab_rcu_read_lock();
	if (mixed)
		r = socktab_lookup_mixed(net, km, 4, 0, 0, out, flags);
	else if (family == 4)
		r = socktab_lookup_batch4(net, SOCKTAB_UDP, k4, 4, out, flags);
	else
		r = socktab_lookup_batch6(net, SOCKTAB_UDP, k6, 4, out, flags);
	if (r < 0)
		die(mixed ? "socktab_lookup_mixed" : "socktab_lookup_batch", -r);
	sure = (g1 & 1) && atomic_fetch_add_explicit(&gen, 0, memory_order_seq_cst) == g1;
	for (int j = 0; j < (mixed ? r : 4); j++) {
		classify(out[j].sk, lp, 0, sure || !out[j].sk); /* the kept member is always there */
		if (out[j].sk == udp_keep && out[j].kind != SOCKTAB_HIT_UDP)
			atomic_fetch_add_explicit(&n_wrong, 1, memory_order_relaxed);
		if (ref)
			socktab_sock_put(out[j].sk);
	}
	if (!ref)
		socktab_rcu_read_unlock();
	atomic_fetch_add_explicit(&n_burst, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n_lookups, 4, memory_order_relaxed);
}

static void *reader(void *arg)
{
	uint64_t i = 0;

	(void)arg;
	socktab_thread_register();
	while (!atomic_load(&ready) && !atomic_load(&stop))
		;
	while (!atomic_load(&stop)) {
		uint64_t g1 = atomic_load_explicit(&gen, memory_order_seq_cst);
		uint16_t lp = (uint16_t)atomic_load(&cur_lport), rp = (uint16_t)atomic_load(&cur_rport);
		bool ref = ++i & 1, sure;
		struct socktab_sock *r;

		if (kind == UDP && i % 3 == 0) {
			udp_batch_lookup(lp, i);
			continue;
		}
		if (kind != UDP && i % 3 == 0) {
			if (family == 4)
				burst_lookup(lp, rp, g1 & 1, g1);
			else
				batch6_lookup(lp, rp, g1 & 1, g1);
			continue;
		}
		if (kind == UDP)
			rp = (uint16_t)(i >> 1); /* the source port's offset (lookup()) */
		if (!ref)
			socktab_rcu_read_lock();
		r = lookup(ref, lp, rp);
		/* A release RMW of 0 keeps the lookup's loads before the second read (stress.h). */
		sure = (g1 & 1) && atomic_fetch_add_explicit(&gen, 0, memory_order_seq_cst) == g1;
		if (kind == UDP && !r)
			sure = true; /* the kept member is always there */
		classify(r, lp, rp, sure);
		if (ref)
			socktab_sock_put(r);
		else
			socktab_rcu_read_unlock();
		atomic_fetch_add_explicit(ref ? &n_ref : &n_rcu, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&n_lookups, 1, memory_order_relaxed);
	}
	socktab_thread_unregister();
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: stress_transitions --case NAME [--family 4|6] [--slots N] "
			"[--duration S]\ncases:");
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		fprintf(stderr, " %s", names[i]);
	fprintf(stderr, "\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct socktab_net_params p;
	pthread_t w, r;
	bool have_case = false;
	uint64_t miss;

	for (int i = 1; i < argc; i += 2) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;

		if (!v)
			usage();
		if (!strcmp(argv[i], "--case")) {
			for (unsigned k = 0; k < sizeof(names) / sizeof(names[0]); k++)
				if (!strcmp(v, names[k])) {
					kind = (enum kind)k;
					have_case = true;
				}
			if (!have_case)
				usage();
		} else if (!strcmp(argv[i], "--family")) {
			family = atoi(v);
			if (family != 4 && family != 6)
				usage();
		} else if (!strcmp(argv[i], "--slots")) {
			slots = (uint32_t)strtoul(v, &end, 10);
			if (*end || !slots || slots > 65536)
				usage();
		} else if (!strcmp(argv[i], "--duration")) {
			duration = strtod(v, &end);
			if (*end || !(duration > 0 && duration <= 3600))
				usage();
		} else {
			usage();
		}
	}
	if (!have_case)
		usage();
	socktab_thread_register();
	socktab_net_params_init(&p);
	p.ehash_entries = slots;
	p.ehash_locks = slots < 4 ? slots : 4;
	p.tw_len_ms = 600000; /* entries never expire during a run: only the writer removes them */
	p.tw_reuse = 1;
	if (kind == UDP)
		p.udp_hash_entries = 128; /* the smallest: long hash4 chains for the batch readers */
	net = socktab_net_new(&p);
	if (!net)
		die("socktab_net_new", errno);
	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&w, NULL, writer, NULL);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	atomic_store(&socktab__udp_connect_hook, NULL);
	miss = n_null + n_listener + n_wrong + n_misrouted;
	printf("stress_transitions: case=%s family=%d slots=%u cycles=%llu lookups=%llu (ref %llu, "
	       "rcu %llu, bursts/batches of 4 %llu) checked=%llu null=%llu listener=%llu wrong=%llu "
	       "misrouted=%llu\n",
	       names[kind], family, slots, (unsigned long long)cycles,
	       (unsigned long long)n_lookups, (unsigned long long)n_ref, (unsigned long long)n_rcu,
	       (unsigned long long)n_burst,
	       (unsigned long long)n_checked, (unsigned long long)n_null,
	       (unsigned long long)n_listener, (unsigned long long)n_wrong,
	       (unsigned long long)n_misrouted);
	for (unsigned i = 0; i < 4; i++)
		if (fillers[i])
			abort_close(fillers[i]);
	if (tk_sk)
		abort_close(tk_sk);
	if (listener)
		socktab_close(listener);
	if (udp_keep)
		socktab_close(udp_keep);
	for (int j = 0; j < UDP_FILLERS; j++)
		if (udp_fillers[j])
			socktab_close(udp_fillers[j]);
	socktab_net_free(net);
	socktab_thread_unregister();
	if (!n_checked) {
		printf("0 passed, 1 failed\n");
		fprintf(stderr, "stress_transitions: no lookup was checked\n");
		return 1;
	}
	printf("%d passed, %d failed\n", miss ? 0 : 1, miss ? 1 : 0);
	return miss ? 1 : 0;
}
