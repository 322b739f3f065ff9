/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab bench crr: neper's tcp_crr (connect, 1-byte request, 1-byte response, close, per
 * transaction) over socktab's tables, between two hosts.
 *
 * Two hosts: a client net and a server net share nothing but "the wire". Both hosts call
 * themselves 127.0.0.1 (each net is its own namespace), so a segment from (127.0.0.1, sport) to
 * (127.0.0.1, dport) is delivered by socktab_lookup_tcp4(, SOCKTAB_LOOPBACK_IFINDEX, 0) in the
 * *receiving* net: that lookup is the whole wire. With -6 both hosts are ::1 and the wire is
 * socktab_lookup_tcp6(), as neper's tcp_crr -6 runs. The server net has one SO_REUSEPORT listener per thread on 127.0.0.1:12867
 * (neper's data port); the SYN's listener lookup picks one by the reuseport hash.
 *
 * Each thread owns FLOWS/THREADS flows and recycles them one at a time, round robin. One
 * transaction on a flow, timed from the close to the response (neper's crr latency runs from one
 * response to the next, which is the same span):
 *   close   client close(); RST (SO_LINGER {1, 0}, default) -> server lookup finds the child,
 *           which goes to CLOSE (tcp_done) and is closed. With --time-wait: FIN -> server lookup,
 *           child to CLOSE_WAIT and closed (LAST_ACK, no TIME_WAIT), its FIN -> client lookup
 *           finds the client's TIME_WAIT entry.
 *   connect socket(), socktab_connect() (the variant's port choice; SYN_SENT in the client's
 *           ehash), SYN -> server lookup (established miss, then the listener, which is used
 *           inside the read-side section without a reference, as the kernel does), child from
 *           socktab_sock_new_child(, SOCKTAB_LOOPBACK_IFINDEX, 0); SYN-ACK -> client lookup (SYN_SENT -> ESTABLISHED); ACK ->
 *           server lookup (child -> ESTABLISHED, accepted).
 *   request server lookup finds the child; response: client lookup finds the client socket.
 * Every lookup's answer is checked against the socket the model expects (wire_errors counts
 * mismatches). One thread runs both ends of its flows, so no queue is shared between threads;
 * the nets are shared by all threads, as the kernel's tables are shared by all CPUs.
 *
 * The F flows are opened before the clock starts, in the kernel walk's order (every port of the
 * low end's parity from a seeded start, then the other parity), each pinned with a one-port
 * IP_LOCAL_PORT_RANGE so the set-up costs O(1) per flow whatever the variant; recycled
 * connections choose their port normally. FLOWS out of the range's size is the port pressure.
 *
 * The walk's cost depends on how far the run has got through its flows: the flows are recycled
 * in the order they were opened, and once the recycling reaches the flows that hold a port of
 * the second parity, each of their connect()s first examines every port of the first parity
 * (all taken). A run of -N transactions goes through the same flows whatever the variant's
 * speed, a run of -l seconds does not (a faster variant gets further). To keep -N runs
 * comparable, their warm-up is a count as well (1 % of the thread's transactions, at most one
 * pass over its flows), and the nets' clock starts at a fixed value when the run begins: the
 * connect() offset is re-keyed every 10 s of that clock (RFC 6056's time slot), so with the
 * system clock a run would re-key at a moment that varies from run to run.
 *
 * With two threads or more, the flows on first-parity ports still depend on timing: a connect()
 * is cheap when it finds a port another thread has just freed near the offset, and how often that
 * happens depends on how fast the threads walk relative to the rest of a transaction, so two
 * variants give different ports tried even at the same -N. --full-walk recycles the flows on
 * second-parity ports first: each of their connect()s frees a second-parity port and examines
 * every first-parity port (all taken, none freed meanwhile) before it finds a free one of the
 * second parity, whatever the threads' timing. That holds for the first FLOWS - RANGE/2
 * transactions (full_walk_transactions=, warm-up included); with -N at most that, every variant
 * examines the same ports.
 *
 * --paired MS (two threads or more, -l mode): one run measures how the threads scale. Thread 0
 * runs throughout; the others run only in every other phase of MS milliseconds and sleep in
 * 0.1-ms naps between, so phases of thread 0 alone and phases of all threads take turns. Each
 * transaction counts in the phase it ends in; paired_scaling is all threads' rate over thread 0's
 * alone. On a shared virtual machine the memory system's speed drifts over seconds with the
 * neighbours' load (single-thread runs of the same binary here differ by 2x from one second to
 * the next), so two runs at -T 1 and -T 2 compare two machines; phases a few tens of ms apart
 * see the same one.
 *
 * Output: seed and parameters, then neper's tcp_crr client keys (utime/stime, num_transactions,
 * latency_* in seconds, num_samples, correlation_coefficient, throughput), then socktab's own:
 * ports_tried_mean (candidate ports examined per connect), connect_errors, wire_errors.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "bench.h"
#include "opt.h"

#define CRR_PORT 12867
#define SNAP_NS 100000000ull /* throughput snapshot interval (neper's interval is 1 s) */
#define MAX_THREADS 64

struct flow {
	struct socktab_sock *c, *s; /* client socket, server child; NULL when closed */
	uint16_t cport;             /* client port, network order */
};

struct crr_ctx;

/* One per thread, each on cache lines of its own: the counters below are written every
 * transaction, and a neighbour's writes to a shared line would be measured as contention. */
struct crr_thread {
	_Alignas(64) pthread_t tid;
	struct crr_ctx *ctx;
	struct flow *flows;
	int nflows, next;
	uint64_t quota;  /* -N mode: transactions left */
	uint64_t transactions, connect_errors, wire_errors;
	struct bench_histo histo;
	uint64_t *snap_t, *snap_n;
	int nsnap, maxsnap;
	uint64_t t_end; /* when the thread's last transaction ended */
	uint64_t warmup; /* -N mode: untimed transactions before the measurement */
	uint16_t port;   /* the server port of its flows (host order) */
	unsigned int share, shares; /* its connect() port share (shares 1: none) */
	bool counted;    /* socktab_thread_counts() counts in this build */
	uint64_t locks, locks_contended, rmw, stores, taken; /* while measured */
	uint64_t counted_connects, connect_locks; /* measured connect()s, the locks they took */
	uint64_t ph_n[2]; /* --paired: transactions that ended in a phase of thread 0 alone, of all */
};

/* What every transaction reads comes first; the lines the threads write are their own (th[])
 * or apart (the progress count, whose adds would otherwise take the read lines away). */
struct crr_ctx {
	const struct bench_crr_cfg *cfg;
	struct socktab_net *cli, *srv;
	uint32_t loop;             /* 127.0.0.1, network order */
	struct in6_addr loop6;     /* ::1 */
	int family;                /* AF_INET or AF_INET6 */
	uint64_t clock0;           /* bench_now_ns() when the run began (the nets' clock) */
	atomic_bool stop;
	_Alignas(64) atomic_int phase; /* --paired: 0 thread 0 alone, 1 all threads (a line apart:
					* every transaction reads it, the phase changes write it) */
	_Alignas(64) struct socktab_sock *listeners[MAX_THREADS];
	struct crr_thread th[MAX_THREADS];
	pthread_barrier_t ready, go;
	atomic_int finished;
	_Alignas(64) atomic_uint_fast64_t done; /* transactions so far, for progress */
};

/* The nets' clock: 1000 s (a multiple of the 10-s time slot) when the run begins, so a run's
 * first 10 s share one connect() offset key. */
static uint64_t crr_clock(void *arg)
{
	const struct crr_ctx *x = arg;

	return 1000000000000ull + (bench_now_ns() - x->clock0);
}

void bench_crr_cfg_init(struct bench_crr_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->threads = 1;
	c->flows = 1;
	c->seconds = 3;
	c->lo = 32768;
	c->hi = 60999;
	c->rcu_precheck = -1;
	c->lport_inside = -1;
	c->seed = 1;
	c->warmup_s = 0.1;
	c->family = AF_INET;
}

/* ---- the wire ---- */

/* A segment from (127.0.0.1, @sport) to (127.0.0.1, @dport), delivered in @net. */
static struct socktab_sock *wire(struct crr_ctx *x, struct socktab_net *net, uint16_t sport,
				 uint16_t dport)
{
	if (x->family == AF_INET6)
		return socktab_lookup_tcp6(net, &x->loop6, sport, &x->loop6, dport,
					   SOCKTAB_LOOPBACK_IFINDEX, 0);
	return socktab_lookup_tcp4(net, x->loop, sport, x->loop, dport, SOCKTAB_LOOPBACK_IFINDEX, 0);
}

/* wire() inside the caller's read-side section, without a reference: a SYN's listener, as the
 * kernel's receive path takes it (listeners are freed after a grace period, and
 * __inet_lookup_skb() takes no reference on one). */
static struct socktab_sock *wire_rcu(struct crr_ctx *x, struct socktab_net *net, uint16_t sport,
				     uint16_t dport)
{
	if (x->family == AF_INET6)
		return socktab_lookup_tcp6_rcu(net, &x->loop6, sport, &x->loop6, dport,
					       SOCKTAB_LOOPBACK_IFINDEX, 0);
	return socktab_lookup_tcp4_rcu(net, x->loop, sport, x->loop, dport,
				       SOCKTAB_LOOPBACK_IFINDEX, 0);
}

/* Deliver and check that @want gets it; then move it to @state (0: leave it). */
static void deliver(struct crr_thread *t, struct socktab_net *net, uint16_t sport, uint16_t dport,
		    struct socktab_sock *want, int state)
{
	struct socktab_sock *sk = wire(t->ctx, net, sport, dport);

	if (sk != want)
		t->wire_errors++;
	if (sk)
		socktab_sock_put(sk);
	if (sk == want && state)
		socktab_set_state(want, state);
}

/* The loopback address of the run's family and port @port_be in @ss; returns its length. */
static socklen_t addr(const struct crr_ctx *x, struct sockaddr_storage *ss, uint16_t port_be)
{
	memset(ss, 0, sizeof(*ss));
	if (x->family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = x->loop6;
		s6->sin6_port = port_be;
		return sizeof(*s6);
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	s4->sin_family = AF_INET;
	s4->sin_addr.s_addr = x->loop;
	s4->sin_port = port_be;
	return sizeof(*s4);
}

/* The port of @ss (either family), network order. */
static uint16_t addr_port(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)ss)->sin6_port
					 : ((const struct sockaddr_in *)ss)->sin_port;
}

static void close_flow(struct crr_thread *t, struct flow *f)
{
	struct crr_ctx *x = t->ctx;
	uint16_t lport = htons(t->port);

	/*
	 * The segment is delivered before the client's port is released: tcp_close() sends it
	 * before tcp_set_state(TCP_CLOSE), and on loopback the peer processes it at once. The
	 * other order lets another thread's connect() take the port while the old child still
	 * holds the 4-tuple on the server, and that SYN would find the child.
	 */
	if (!x->cfg->time_wait) {
		/* RST: tcp_reset() -> tcp_done() on the child, then the server closes it. */
		deliver(t, x->srv, f->cport, lport, f->s, SOCKTAB_TCP_CLOSE);
		socktab_close(f->c);
		socktab_close(f->s);
	} else {
		/* FIN: the child reads end of stream, closes (LAST_ACK), its FIN reaches the
		 * client's TIME_WAIT entry. */
		deliver(t, x->srv, f->cport, lport, f->s, SOCKTAB_TCP_CLOSE_WAIT);
		socktab_close(f->c);
		socktab_close(f->s);
		struct socktab_sock *tw = wire(x, x->cli, lport, f->cport);

		if (!tw || socktab_get_state(tw) != SOCKTAB_TCP_TIME_WAIT)
			t->wire_errors++;
		if (tw)
			socktab_sock_put(tw);
	}
	f->c = NULL;
	f->s = NULL;
}

/* connect() + handshake + request + response. @pin: a port to force (set-up), or 0. */
static int open_flow(struct crr_thread *t, struct flow *f, uint16_t pin)
{
	static const struct linger lg0 = { 1, 0 };
	struct crr_ctx *x = t->ctx;
	uint16_t lport = htons(t->port);
	struct sockaddr_storage dst, local, remote;
	socklen_t len = sizeof(local), alen;
	struct socktab_sock *c, *ln, *child;
	int err;

	c = socktab_socket(x->cli, SOCKTAB_TCP, x->family);
	if (!c)
		return -errno;
	if (!x->cfg->time_wait)
		socktab_setsockopt(c, SOL_SOCKET, SO_LINGER, &lg0, sizeof(lg0));
	if (pin) {
		uint32_t range = (uint32_t)pin << 16 | pin;

		socktab_setsockopt(c, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &range, sizeof(range));
	}
	alen = addr(x, &dst, lport);
	struct socktab_thread_counts c0, c1;
	bool counting = t->counted && !pin && !socktab_thread_counts(&c0);

	err = socktab_connect(c, (struct sockaddr *)&dst, alen);
	if (counting && !socktab_thread_counts(&c1)) {
		t->counted_connects++;
		t->connect_locks += c1.locks - c0.locks;
	}
	if (err) {
		socktab_close(c);
		t->connect_errors++;
		return err;
	}
	socktab_getsockname(c, (struct sockaddr *)&local, &len);
	f->c = c;
	f->cport = addr_port(&local);
	/* SYN: no established entry, so the listener lookup answers; the listener is used
	 * inside the read-side section, without a reference, as the kernel uses it. Every
	 * thread's SYNs reach every listener of the group (the reuseport hash picks), so a
	 * reference would be two atomic writes per transaction to a line all threads write. */
	socktab_rcu_read_lock();
	ln = wire_rcu(x, x->srv, f->cport, lport);
	if (!ln || socktab_get_state(ln) != SOCKTAB_TCP_LISTEN) {
		socktab_rcu_read_unlock();
		t->wire_errors++;
		socktab_close(c);
		f->c = NULL;
		return -ECONNREFUSED;
	}
	alen = addr(x, &local, lport);
	addr(x, &remote, f->cport);
	child = socktab_sock_new_child(ln, (struct sockaddr *)&local, (struct sockaddr *)&remote,
				       alen, SOCKTAB_LOOPBACK_IFINDEX, 0);
	socktab_rcu_read_unlock();
	if (!child) {
		err = -errno;
		t->wire_errors++;
		socktab_close(c);
		f->c = NULL;
		return err;
	}
	if (!x->cfg->time_wait)
		socktab_setsockopt(child, SOL_SOCKET, SO_LINGER, &lg0, sizeof(lg0));
	f->s = child;
	deliver(t, x->cli, lport, f->cport, c, SOCKTAB_TCP_ESTABLISHED);     /* SYN-ACK */
	deliver(t, x->srv, f->cport, lport, child, SOCKTAB_TCP_ESTABLISHED); /* ACK */
	deliver(t, x->srv, f->cport, lport, child, 0);                       /* request */
	deliver(t, x->cli, lport, f->cport, c, 0);                           /* response */
	return 0;
}

/* One transaction on the thread's next flow; returns its latency in ns. */
static uint64_t transact(struct crr_thread *t)
{
	struct flow *f = &t->flows[t->next];
	uint64_t t0 = bench_now_ns();

	if (++t->next == t->nflows)
		t->next = 0;
	if (f->c)
		close_flow(t, f);
	open_flow(t, f, 0);
	return bench_now_ns() - t0;
}

static void snapshot(struct crr_thread *t, uint64_t now)
{
	if (t->nsnap < t->maxsnap) {
		t->snap_t[t->nsnap] = now;
		t->snap_n[t->nsnap] = t->transactions;
		t->nsnap++;
	}
}

static void *crr_thread_main(void *arg)
{
	struct crr_thread *t = arg;
	struct crr_ctx *x = t->ctx;
	uint64_t warm_end, last_snap;

	socktab_thread_register();
	if (socktab_thread_set_port_share(t->share, t->shares)) {
		fprintf(stderr, "bench crr: socktab_thread_set_port_share(%u, %u) failed\n",
			t->share, t->shares);
		exit(1);
	}
	if (x->cfg->incoming_cpu && socktab_set_rx_cpu((int)(t - x->th))) {
		fprintf(stderr, "bench crr: socktab_set_rx_cpu failed\n");
		exit(1);
	}
	warm_end = bench_now_ns() + (uint64_t)(x->cfg->warmup_s * 1e9);
	/* Warm-up: untimed, at most one pass over the flows; bounded by time in -l mode, by a
	 * count in -N mode (the same for every variant: see the top comment). */
	if (x->cfg->transactions)
		for (uint64_t i = 0; i < t->warmup; i++)
			transact(t);
	else
		for (int i = 0; i < t->nflows && bench_now_ns() < warm_end; i++)
			transact(t);
	t->connect_errors = t->wire_errors = 0;
	pthread_barrier_wait(&x->ready);
	pthread_barrier_wait(&x->go);
	struct socktab_thread_counts c0, c1;

	t->counted = socktab_thread_counts(&c0) == 0;
	last_snap = bench_now_ns();
	snapshot(t, last_snap);
	while (!atomic_load_explicit(&x->stop, memory_order_relaxed)) {
		if (x->cfg->transactions && t->transactions >= t->quota)
			break;
		if (x->cfg->paired_ms > 0 && t != &x->th[0] &&
		    !atomic_load_explicit(&x->phase, memory_order_relaxed)) {
			struct timespec nap = { 0, 100000 };

			nanosleep(&nap, NULL);
			continue;
		}
		uint64_t ns = transact(t);

		t->ph_n[atomic_load_explicit(&x->phase, memory_order_relaxed)]++;
		bench_histo_add(&t->histo, ns);
		/* The progress count is shared by every thread: add to it every 64th time only. */
		if (++t->transactions % 64 == 0)
			atomic_fetch_add_explicit(&x->done, 64, memory_order_relaxed);
		uint64_t now = bench_now_ns();

		if (now - last_snap >= SNAP_NS) {
			snapshot(t, now);
			last_snap = now;
		}
	}
	t->t_end = bench_now_ns();
	if (t->counted && socktab_thread_counts(&c1) == 0) {
		t->locks = c1.locks - c0.locks;
		t->locks_contended = c1.locks_contended - c0.locks_contended;
		t->rmw = c1.atomic_rmw - c0.atomic_rmw;
		t->stores = c1.atomic_stores - c0.atomic_stores;
		t->taken = c1.lines_taken - c0.lines_taken;
	}
	snapshot(t, t->t_end);
	atomic_fetch_add(&x->finished, 1);
	socktab_thread_unregister();
	return NULL;
}

/* paired_scaling from the phases' counts and times (0 when a phase never ran). */
static void paired_rate(struct bench_crr_result *r)
{
	double solo = r->paired_s[0] > 0 ? (double)r->paired_n[0] / r->paired_s[0] : 0;
	double all = r->paired_s[1] > 0 ? (double)r->paired_n[1] / r->paired_s[1] : 0;

	r->paired_scaling = solo > 0 ? all / solo : 0;
}

/* Least-squares slope of transactions against time, and the correlation coefficient. */
static void regress(const struct crr_thread *t, double *slope, double *r)
{
	double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0, n = t->nsnap;

	*slope = 0;
	*r = 1;
	if (t->nsnap < 3)
		return;
	for (int i = 0; i < t->nsnap; i++) {
		double xv = (double)(t->snap_t[i] - t->snap_t[0]) / 1e9, yv = (double)t->snap_n[i];

		sx += xv;
		sy += yv;
		sxx += xv * xv;
		syy += yv * yv;
		sxy += xv * yv;
	}
	double cov = sxy - sx * sy / n, vx = sxx - sx * sx / n, vy = syy - sy * sy / n;

	if (vx > 0)
		*slope = cov / vx;
	if (vx > 0 && vy > 0)
		*r = cov / sqrt(vx * vy);
}

static struct socktab_net *make_net(struct crr_ctx *x, uint64_t salt)
{
	const struct bench_crr_cfg *c = x->cfg;
	struct socktab_net_params p;
	uint64_t s = c->seed ^ salt;

	socktab_net_params_init(&p);
	p.clock = crr_clock;
	p.clock_arg = x;
	p.port_low = (uint16_t)c->lo;
	p.port_high = (uint16_t)c->hi;
	p.variant = bench_variants[c->variant].v;
	p.rcu_precheck = c->rcu_precheck;
	p.lport_hash_inside = c->lport_inside;
	p.fixed_secret = 1;
	for (int i = 0; i < 4; i++) {
		uint64_t w = bench_rand(&s);

		memcpy(p.secret + 8 * i, &w, 8);
	}
	if ((uint32_t)c->flows * 2 > 65536)
		p.ehash_entries = 1u << 20;
	return socktab_net_new(&p);
}

/* Open the flows before the clock starts, in the kernel walk's order (see the top comment).
 * Flow k goes to thread k % THREADS. Returns how many flows took a first-parity port in *nfirst. */
static int prefill(struct crr_ctx *x, uint32_t *nfirst)
{
	const struct bench_crr_cfg *c = x->cfg;
	uint32_t size = (uint32_t)(c->hi - c->lo + 1), k = 0;
	uint64_t s = c->seed;
	uint32_t start = (uint32_t)(bench_rand(&s) % size);

	for (int parity = 0; parity < 2; parity++) {
		if (parity == 1)
			*nfirst = k;
		for (uint32_t j = 0; j < size && k < (uint32_t)c->flows; j++) {
			uint32_t off = (start + j) % size;

			if ((int)(off & 1) != parity)
				continue;
			struct crr_thread *t = &x->th[k % (uint32_t)c->threads];
			int err = open_flow(t, &t->flows[k / (uint32_t)c->threads],
					    (uint16_t)(c->lo + (int)off));

			if (err) {
				fprintf(stderr, "bench crr: opening flow %u: %s\n", k,
					strerror(-err));
				return err;
			}
			k++;
		}
	}
	return 0;
}

int bench_crr_run(const struct bench_crr_cfg *c, struct bench_crr_result *r)
{
	struct crr_ctx *x;
	struct socktab_net_stats st0, st1;
	struct bench_progress prog;
	int err = 0, size = c->hi - c->lo + 1;
	uint64_t t_start, t_end;

	if (c->threads < 1 || c->threads > MAX_THREADS || c->flows < c->threads) {
		fprintf(stderr, "bench crr: need 1 <= THREADS <= %d and FLOWS >= THREADS\n",
			MAX_THREADS);
		return -EINVAL;
	}
	if (c->flows > size) {
		fprintf(stderr, "bench crr: %d flows do not fit in the %d-port range\n", c->flows,
			size);
		return -EINVAL;
	}
	memset(r, 0, sizeof(*r));
	x = aligned_alloc(_Alignof(struct crr_ctx), sizeof(*x)); /* th[] is cache-line aligned */
	if (!x)
		return -ENOMEM;
	memset(x, 0, sizeof(*x));
	x->cfg = c;
	x->loop = htonl(INADDR_LOOPBACK);
	x->loop6 = in6addr_loopback;
	x->family = c->family;
	x->clock0 = bench_now_ns();
	x->cli = make_net(x, 0x636c69);
	x->srv = make_net(x, 0x737276);
	if (!x->cli || !x->srv) {
		err = -errno;
		fprintf(stderr, "bench crr: socktab_net_new: %s\n", strerror(errno));
		goto out_nets;
	}
	for (int i = 0; i < c->threads; i++) {
		static const int one = 1;
		struct sockaddr_storage sa;
		struct socktab_sock *ln = socktab_socket(x->srv, SOCKTAB_TCP, c->family);
		uint16_t port = (uint16_t)(CRR_PORT + (c->port_per_thread ? i : 0));
		socklen_t salen = addr(x, &sa, htons(port));

		if (c->wildcard) {
			/* 0.0.0.0 or ::, the port alone */
			if (c->family == AF_INET6)
				((struct sockaddr_in6 *)&sa)->sin6_addr = in6addr_any;
			else
				((struct sockaddr_in *)&sa)->sin_addr.s_addr = htonl(INADDR_ANY);
		}

		if (!ln || socktab_setsockopt(ln, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
		    (c->incoming_cpu &&
		     socktab_setsockopt(ln, SOL_SOCKET, SO_INCOMING_CPU, &i, sizeof(i))) ||
		    socktab_bind(ln, (struct sockaddr *)&sa, salen) ||
		    socktab_listen(ln, 4096)) {
			fprintf(stderr, "bench crr: listener %d failed\n", i);
			err = -EINVAL;
			goto out_nets;
		}
		x->listeners[i] = ln;
	}
	int maxsnap = (int)(c->transactions ? 100000 : c->seconds * 1e9 / SNAP_NS + 16);

	for (int i = 0; i < c->threads; i++) {
		struct crr_thread *t = &x->th[i];

		t->ctx = x;
		t->port = (uint16_t)(CRR_PORT + (c->port_per_thread ? i : 0));
		t->share = 0;
		t->shares = 1;
		while (c->port_shares && (int)t->shares < c->threads)
			t->shares *= 2;
		if (c->port_shares)
			t->share = (unsigned int)i;
		t->nflows = c->flows / c->threads + (i < c->flows % c->threads);
		t->flows = calloc((size_t)t->nflows, sizeof(*t->flows));
		t->maxsnap = maxsnap;
		t->snap_t = calloc((size_t)maxsnap, sizeof(uint64_t));
		t->snap_n = calloc((size_t)maxsnap, sizeof(uint64_t));
		t->quota = c->transactions / (uint64_t)c->threads +
			   (i < (int)(c->transactions % (uint64_t)c->threads));
		t->warmup = t->quota / 100 < (uint64_t)t->nflows ? t->quota / 100
								 : (uint64_t)t->nflows;
		bench_histo_init(&t->histo);
		if (!t->flows || !t->snap_t || !t->snap_n) {
			err = -ENOMEM;
			goto out_threads;
		}
	}
	uint32_t nfirst;

	if ((err = prefill(x, &nfirst)))
		goto out_threads;
	if (c->full_walk) {
		/* Each thread starts recycling at its first flow on a second-parity port. */
		for (int i = 0; i < c->threads; i++) {
			uint32_t j = (nfirst + (uint32_t)(c->threads - 1 - i)) /
				     (uint32_t)c->threads;

			x->th[i].next = j < (uint32_t)x->th[i].nflows ? (int)j : 0;
		}
		r->full_walk_transactions = (uint64_t)c->flows - nfirst;
	}
	pthread_barrier_init(&x->ready, NULL, (unsigned)c->threads + 1);
	pthread_barrier_init(&x->go, NULL, (unsigned)c->threads + 1);
	/* Where the host has the vCPUs now decides what the threads' shared lines cost. */
	if (c->threads > 1)
		r->line_ns = bench_line_transfer_ns();
	for (int i = 0; i < c->threads; i++)
		pthread_create(&x->th[i].tid, NULL, crr_thread_main, &x->th[i]);
	pthread_barrier_wait(&x->ready);
	socktab_net_stats(x->cli, &st0);
	bench_cpu_times(&r->utime[0], &r->stime[0]);
	t_start = bench_now_ns();
	pthread_barrier_wait(&x->go);
	bench_progress_init(&prog, 1500000000ull);
	uint64_t ph_start = t_start, ph_ns = (uint64_t)(c->paired_ms * 1e6);

	for (;;) {
		struct timespec ts = { 0, ph_ns && ph_ns < 5000000 ? (long)ph_ns : 5000000 };
		uint64_t now;

		nanosleep(&ts, NULL);
		now = bench_now_ns();
		if (atomic_load(&x->finished) == c->threads)
			break;
		if (!c->transactions && now - t_start >= (uint64_t)(c->seconds * 1e9))
			atomic_store(&x->stop, true);
		if (ph_ns && (now - ph_start >= ph_ns || atomic_load(&x->stop))) {
			int ph = atomic_load(&x->phase);

			r->paired_s[ph] += (double)(now - ph_start) / 1e9;
			ph_start = now;
			if (atomic_load(&x->stop))
				ph_ns = 0; /* the last transactions end in the phase they began in */
			else
				atomic_store(&x->phase, !ph);
		}
		if (c->progress)
			bench_progress(&prog, "crr %s -F %d: %llu transactions",
				       bench_variants[c->variant].name, c->flows,
				       (unsigned long long)atomic_load(&x->done));
	}
	bench_cpu_times(&r->utime[1], &r->stime[1]);
	socktab_net_stats(x->cli, &st1);
	t_end = t_start;
	for (int i = 0; i < c->threads; i++) {
		pthread_join(x->th[i].tid, NULL);
		if (x->th[i].t_end > t_end)
			t_end = x->th[i].t_end; /* the 5 ms poll above would round it up */
	}
	pthread_barrier_destroy(&x->ready);
	pthread_barrier_destroy(&x->go);
	if (c->threads > 1) {
		double after = bench_line_transfer_ns();

		if (after > r->line_ns)
			r->line_ns = after;
	}

	r->elapsed_s = (double)(t_end - t_start) / 1e9;
	r->correlation = 1;
	bench_histo_init(&r->histo);
	for (int i = 0; i < c->threads; i++) {
		struct crr_thread *t = &x->th[i];
		double slope, rr;

		r->transactions += t->transactions;
		r->counted = t->counted;
		r->locks += t->locks;
		r->locks_contended += t->locks_contended;
		r->rmw += t->rmw;
		r->stores += t->stores;
		r->lines_taken += t->taken;
		r->counted_connects += t->counted_connects;
		r->connect_locks += t->connect_locks;
		r->paired_n[0] += t->ph_n[0];
		r->paired_n[1] += t->ph_n[1];
		r->connect_errors += t->connect_errors;
		r->wire_errors += t->wire_errors;
		r->num_samples += t->nsnap;
		bench_histo_merge(&r->histo, &t->histo);
		regress(t, &slope, &rr);
		r->throughput += slope;
		if (rr < r->correlation)
			r->correlation = rr;
	}
	paired_rate(r);
	if (r->throughput <= 0 && r->elapsed_s > 0)
		r->throughput = (double)r->transactions / r->elapsed_s;
	{
		uint64_t connects = st1.connects - st0.connects;
		uint64_t tried = st1.connect_ports_tried - st0.connect_ports_tried;

		/* Failed connects examine candidates too: count them in the mean. */
		connects += r->connect_errors;
		r->ports_tried = tried;
		r->connects = connects;
		r->ports_tried_mean = connects ? (double)tried / (double)connects : 0;
	}
	r->rounds = 1;
	r->rcu_precheck = c->rcu_precheck >= 0 ? c->rcu_precheck
					       : bench_variants[c->variant].v != SOCKTAB_VARIANT_LINUX_6_1;
	r->lport_inside = c->lport_inside >= 0 ? c->lport_inside
					       : bench_variants[c->variant].v == SOCKTAB_VARIANT_LINUX_6_1;
out_threads:
	for (int i = 0; i < c->threads; i++) {
		free(x->th[i].flows);
		free(x->th[i].snap_t);
		free(x->th[i].snap_n);
	}
out_nets:
	/* socktab_net_free() closes every socket left: the flows and the listeners. */
	if (x->cli)
		socktab_net_free(x->cli);
	if (x->srv)
		socktab_net_free(x->srv);
	free(x);
	return err;
}

void bench_crr_merge(struct bench_crr_result *acc, const struct bench_crr_result *r)
{
	if (!acc->rounds) {
		*acc = *r;
		return;
	}
	double tp = acc->throughput * acc->elapsed_s + r->throughput * r->elapsed_s;

	acc->transactions += r->transactions;
	acc->locks += r->locks;
	acc->locks_contended += r->locks_contended;
	acc->rmw += r->rmw;
	acc->stores += r->stores;
	acc->lines_taken += r->lines_taken;
	acc->counted_connects += r->counted_connects;
	acc->connect_locks += r->connect_locks;
	for (int p = 0; p < 2; p++) {
		acc->paired_n[p] += r->paired_n[p];
		acc->paired_s[p] += r->paired_s[p];
	}
	paired_rate(acc);
	if (r->line_ns > acc->line_ns)
		acc->line_ns = r->line_ns;
	acc->connect_errors += r->connect_errors;
	acc->wire_errors += r->wire_errors;
	acc->elapsed_s += r->elapsed_s;
	acc->throughput = acc->elapsed_s > 0 ? tp / acc->elapsed_s : 0;
	if (r->correlation < acc->correlation)
		acc->correlation = r->correlation;
	acc->ports_tried += r->ports_tried;
	acc->connects += r->connects;
	acc->ports_tried_mean = acc->connects ? (double)acc->ports_tried / (double)acc->connects : 0;
	acc->utime[1] += r->utime[1] - r->utime[0];
	acc->stime[1] += r->stime[1] - r->stime[0];
	acc->num_samples += r->num_samples;
	bench_histo_merge(&acc->histo, &r->histo);
	acc->rounds += r->rounds;
}

/* ---- CLI ---- */

static void help(void)
{
	printf("usage: socktab bench crr [-6] [--port-per-thread] [--port-shares] [--incoming-cpu]\n"
	       "                         [--wildcard] [-T THREADS]\n"
	       "                         [-F FLOWS | --sweep F1,F2,...]\n"
	       "                         [-l SECONDS | -N TRANSACTIONS] [--range LO-HI]\n"
	       "                         [--variant socktab|linux|linux-6.1|all]\n"
	       "                         [--rcu-precheck on|off] [--lport-hash inside|after]\n"
	       "                         [--time-wait] [--full-walk] [-p 50,90,99] [--seed S]\n"
	       "                         [--json] [--rounds R] [--plot FILE.png] [--paired MS]\n"
	       "defaults: -T 1 -F THREADS -l 3 --range 32768-60999 --variant all -p 50,90,99\n"
	       "          --rounds 3 when several variants or flow counts run, else 1\n"
	       "neper tcp_crr over two socktab nets (client, server); prints neper's client keys,\n"
	       "-6: both hosts are ::1 (IPv6 keys and hashes), as tcp_crr -6; else 127.0.0.1.\n"
	       "--port-per-thread: thread i's flows go to a listener of its own on port 12867+i\n"
	       "(else one SO_REUSEPORT listener per thread, all on 12867, whose bind buckets every\n"
	       "child of every thread shares), as bench kernel-crr's threads have.\n"
	       "--port-shares: thread i's connect()s take port share i of T rounded up to a power\n"
	       "of two (socktab_thread_set_port_share), every variant; port_shares= says which.\n"
	       "--incoming-cpu: thread i's lookups name receive CPU i (socktab_set_rx_cpu) and\n"
	       "listener i has SO_INCOMING_CPU i, so the SO_REUSEPORT group gives thread i's\n"
	       "SYNs to its own listener (R35); incoming_cpu= says whether.\n"
	       "--wildcard: the listeners are bound to 0.0.0.0 (-6: ::) rather than the loopback\n"
	       "address, so each child owns the port in its own address's bind bucket.\n"
	       "--paired MS (-T 2 or more, -l): thread 0 runs alone and all threads run in turns\n"
	       "of MS ms; paired_scaling= is all threads' rate over thread 0's alone, both from\n"
	       "the same seconds of the same run.\n"
	       "then ports_tried_mean. --sweep runs each flow count; --plot draws throughput vs\n"
	       "flows, one line per variant (gnuplot). With R rounds, -l and -N are split over R\n"
	       "runs per row, visited in turn (fresh nets each), so load bursts on a shared\n"
	       "machine spread over every row; each row's figures merge its rounds.\n"
	       "--full-walk recycles the flows on second-parity ports first: for the first\n"
	       "FLOWS - RANGE/2 transactions every connect() examines every first-parity port,\n"
	       "whatever the threads' timing, so -N runs of two variants examine the same ports.\n");
}

static void print_result(struct bench_out *o, const struct bench_crr_cfg *c,
			 const struct bench_crr_result *r, const double *pct, int npct)
{
	char buf[64];

	bench_out_begin(o);
	bench_out_str(o, "test", "socktab_tcp_crr");
	bench_out_u64(o, "seed", c->seed);
	bench_out_str(o, "variant", bench_variants[c->variant].name);
	bench_out_str(o, "rcu_precheck", r->rcu_precheck ? "on" : "off");
	bench_out_str(o, "lport_hash", r->lport_inside ? "inside" : "after");
	bench_out_str(o, "family", c->family == AF_INET6 ? "ipv6" : "ipv4");
	bench_out_str(o, "listener_ports", c->port_per_thread ? "per_thread" : "shared");
	bench_out_str(o, "port_shares", c->port_shares ? "per_thread" : "none");
	bench_out_str(o, "incoming_cpu", c->incoming_cpu ? "per_thread" : "none");
	bench_out_str(o, "listener_address", c->wildcard ? "wildcard" : "loopback");
	bench_out_u64(o, "num_threads", (uint64_t)c->threads);
	bench_out_u64(o, "num_flows", (uint64_t)c->flows);
	snprintf(buf, sizeof(buf), "%d-%d", c->lo, c->hi);
	bench_out_str(o, "port_range", buf);
	bench_out_dbl(o, "occupancy", "%.4f", (double)c->flows / (c->hi - c->lo + 1));
	bench_out_str(o, "close", c->time_wait ? "fin_time_wait" : "rst");
	if (c->full_walk)
		bench_out_u64(o, "full_walk_transactions", r->full_walk_transactions);
	if (c->transactions)
		bench_out_u64(o, "test_transactions", c->transactions * (uint64_t)r->rounds);
	else
		bench_out_dbl(o, "test_length", "%.3f", c->seconds * r->rounds);
	bench_out_u64(o, "rounds", (uint64_t)r->rounds);
	bench_out_dbl(o, "utime_start", "%.6f", r->utime[0]);
	bench_out_dbl(o, "utime_end", "%.6f", r->utime[1]);
	bench_out_dbl(o, "stime_start", "%.6f", r->stime[0]);
	bench_out_dbl(o, "stime_end", "%.6f", r->stime[1]);
	bench_out_u64(o, "num_transactions", r->transactions);
	bench_out_dbl(o, "latency_min", "%.9f", r->histo.count ? (double)r->histo.min / 1e9 : 0);
	bench_out_dbl(o, "latency_max", "%.9f", (double)r->histo.max / 1e9);
	bench_out_dbl(o, "latency_mean", "%.9f", bench_histo_mean(&r->histo) / 1e9);
	bench_out_dbl(o, "latency_stddev", "%.9f", bench_histo_stddev(&r->histo) / 1e9);
	for (int i = 0; i < npct; i++) {
		snprintf(buf, sizeof(buf), "latency_p%g", pct[i]);
		bench_out_dbl(o, buf, "%.9f", bench_histo_percentile(&r->histo, pct[i]) / 1e9);
	}
	bench_out_u64(o, "num_samples", (uint64_t)r->num_samples);
	bench_out_dbl(o, "time_end", "%.9f", r->elapsed_s);
	bench_out_dbl(o, "correlation_coefficient", "%.2f", r->correlation);
	bench_out_dbl(o, "throughput", "%.2f", r->throughput);
	bench_out_dbl(o, "ports_tried_mean", "%.2f", r->ports_tried_mean);
	bench_out_u64(o, "connect_errors", r->connect_errors);
	bench_out_u64(o, "wire_errors", r->wire_errors);
	if (r->line_ns > 0)
		bench_out_dbl(o, "line_transfer_ns", "%.0f", r->line_ns);
	if (c->paired_ms > 0) {
		bench_out_dbl(o, "paired_phase_ms", "%g", c->paired_ms);
		bench_out_dbl(o, "paired_thread0_alone_per_sec", "%.0f",
			      r->paired_s[0] > 0 ? (double)r->paired_n[0] / r->paired_s[0] : 0);
		bench_out_dbl(o, "paired_all_threads_per_sec", "%.0f",
			      r->paired_s[1] > 0 ? (double)r->paired_n[1] / r->paired_s[1] : 0);
		bench_out_dbl(o, "paired_scaling", "%.2f", r->paired_scaling);
	}
	if (r->counted && r->transactions) {
		bench_out_dbl(o, "locks_per_transaction", "%.2f",
			      (double)r->locks / (double)r->transactions);
		bench_out_dbl(o, "contended_locks_per_transaction", "%.4f",
			      (double)r->locks_contended / (double)r->transactions);
		bench_out_dbl(o, "atomic_rmw_per_transaction", "%.2f",
			      (double)r->rmw / (double)r->transactions);
		bench_out_dbl(o, "atomic_stores_per_transaction", "%.2f",
			      (double)r->stores / (double)r->transactions);
		bench_out_dbl(o, "lines_taken_per_transaction", "%.2f",
			      (double)r->lines_taken / (double)r->transactions);
		if (r->counted_connects)
			bench_out_dbl(o, "locks_per_connect", "%.2f",
				      (double)r->connect_locks / (double)r->counted_connects);
	}
	bench_out_end(o);
}

int bench_crr_main(int argc, char **argv)
{
	enum { O_SWEEP = 256, O_RANGE, O_VARIANT, O_PRECHECK, O_LPORT, O_SEED, O_PLOT, O_ROUNDS,
	       O_JSON, O_TIME_WAIT, O_FULL_WALK, O_PORT_PER_THREAD, O_PAIRED, O_PORT_SHARES,
	       O_INCOMING_CPU, O_WILDCARD };
	static const struct option longopts[] = {
		{ "sweep", required_argument, NULL, O_SWEEP },
		{ "range", required_argument, NULL, O_RANGE },
		{ "variant", required_argument, NULL, O_VARIANT },
		{ "rcu-precheck", required_argument, NULL, O_PRECHECK },
		{ "lport-hash", required_argument, NULL, O_LPORT },
		{ "seed", required_argument, NULL, O_SEED },
		{ "plot", required_argument, NULL, O_PLOT },
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "json", no_argument, NULL, O_JSON },
		{ "time-wait", no_argument, NULL, O_TIME_WAIT },
		{ "full-walk", no_argument, NULL, O_FULL_WALK },
		{ "port-per-thread", no_argument, NULL, O_PORT_PER_THREAD },
		{ "port-shares", no_argument, NULL, O_PORT_SHARES },
		{ "incoming-cpu", no_argument, NULL, O_INCOMING_CPU },
		{ "wildcard", no_argument, NULL, O_WILDCARD },
		{ "paired", required_argument, NULL, O_PAIRED },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const variant_names[] = { "socktab", "linux", "linux-6.1", "all", NULL };
	static const char *const off_on[] = { "off", "on", NULL };
	static const char *const after_inside[] = { "after", "inside", NULL };
	const struct opt_parser op = { "socktab bench crr", "h6T:F:l:N:p:", longopts };
	struct bench_crr_cfg c;
	struct bench_out o = { 0 };
	const char *plot = NULL;
	double pct[16] = { 50, 90, 99 };
	int npct = 3, flows[BENCH_PLOT_MAX_POINTS], nflows = 0, rounds = 0, variant = 3, opt;
	uint64_t trans;

	bench_crr_cfg_init(&c);
	c.seed = (uint64_t)time(NULL);
	c.progress = true;
	opt_start();
	while ((opt = opt_next(&op, argc, argv)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'h':
			help();
			return 0;
		case O_JSON:
			o.json = true;
			break;
		case O_TIME_WAIT:
			c.time_wait = true;
			break;
		case O_FULL_WALK:
			c.full_walk = true;
			break;
		case '6':
			c.family = AF_INET6;
			break;
		case O_PORT_PER_THREAD:
			c.port_per_thread = true;
			break;
		case O_PORT_SHARES:
			c.port_shares = true;
			break;
		case O_INCOMING_CPU:
			c.incoming_cpu = true;
			break;
		case O_WILDCARD:
			c.wildcard = true;
			break;
		case O_PAIRED:
			bad = opt_real(&op, "--paired", optarg, 1, 10000, &c.paired_ms);
			break;
		case 'T':
			bad = opt_count_int(&op, "-T", optarg, 1, MAX_THREADS, &c.threads);
			break;
		case 'F':
		case O_SWEEP:
			bad = opt_count_list(&op, opt == 'F' ? "-F" : "--sweep", optarg, 1, 65535,
					     flows, BENCH_PLOT_MAX_POINTS, &nflows);
			break;
		case 'l':
			bad = opt_real(&op, "-l", optarg, 0.001, 86400, &c.seconds);
			c.transactions = 0; /* the last of -l and -N wins */
			break;
		case 'N':
			bad = opt_count(&op, "-N", optarg, 1, 1000000000, &trans);
			if (!bad)
				c.transactions = trans;
			break;
		case O_RANGE:
			bad = opt_port_range(&op, "--range", optarg, &c.lo, &c.hi);
			break;
		case O_VARIANT:
			bad = opt_choice(&op, "--variant", optarg, variant_names, &variant);
			break;
		case O_PRECHECK:
			bad = opt_choice(&op, "--rcu-precheck", optarg, off_on, &c.rcu_precheck);
			break;
		case O_LPORT:
			bad = opt_choice(&op, "--lport-hash", optarg, after_inside, &c.lport_inside);
			break;
		case 'p':
			bad = opt_real_list(&op, "-p", optarg, 0, 100, pct, 16, &npct);
			break;
		case O_SEED:
			bad = opt_seed(&op, "--seed", optarg, &c.seed);
			break;
		case O_PLOT:
			plot = optarg;
			bad = opt_output_file(&op, "--plot", plot);
			break;
		case O_ROUNDS:
			bad = opt_count_int(&op, "--rounds", optarg, 1, 100, &rounds);
			break;
		default:
			return 2;
		}
		if (bad)
			return 2;
	}
	if (opt_no_operands(&op, argc, argv))
		return 2;
	if (c.paired_ms > 0 && (c.threads < 2 || c.transactions)) {
		opt_fail(&op, "--paired: needs -T 2 or more and -l (thread 0 alone against all)");
		return 2;
	}
	if (!nflows) /* one flow per thread */
		flows[nflows++] = c.threads;
	for (int b = 0; b < nflows; b++) {
		if (flows[b] < c.threads) {
			opt_fail(&op, "-F: %d flows for %d threads (each thread needs a flow)",
				 flows[b], c.threads);
			return 2;
		}
		if (flows[b] > c.hi - c.lo + 1) {
			opt_fail(&op, "-F: %d flows do not fit in the %d-port range %d-%d", flows[b],
				 c.hi - c.lo + 1, c.lo, c.hi);
			return 2;
		}
	}
	int vsel[3], nv = 0;

	for (int j = 0; j < 3; j++)
		if (variant == 3 || variant == j)
			vsel[nv++] = j;
	static struct bench_crr_result res[3][BENCH_PLOT_MAX_POINTS], one;
	int rc = 0;
	struct bench_progress prog;

	if (!rounds)
		rounds = nv * nflows > 1 ? 3 : 1;
	if (c.transactions && c.transactions < (uint64_t)rounds)
		rounds = (int)c.transactions;
	c.seconds /= rounds;
	c.transactions /= (uint64_t)rounds;
	/* Each run must hold both phases at least once, else the all-threads rate reads 0. */
	if (c.paired_ms > 0 && 2 * c.paired_ms > 1000 * c.seconds) {
		fprintf(stderr, "socktab bench crr: --paired %g: a run of %g s (-l over %d round%s) "
			"holds no second phase; give at most %g\n", c.paired_ms, c.seconds, rounds,
			rounds == 1 ? "" : "s", 500 * c.seconds);
		return 2;
	}
	c.progress = false;
	bench_progress_init(&prog, 1500000000ull);
	socktab_thread_register();
	for (int rd = 0; rd < rounds && !rc; rd++)
		for (int b = 0; b < nflows && !rc; b++)
			for (int a = 0; a < nv && !rc; a++) {
				c.flows = flows[b];
				c.variant = vsel[a];
				if (bench_crr_run(&c, &one))
					rc = 1;
				else
					bench_crr_merge(&res[a][b], &one);
				bench_progress(&prog, "crr round %d/%d: %s -F %d: %.0f trans/s", rd + 1,
					       rounds, bench_variants[vsel[a]].name, flows[b],
					       one.throughput);
			}
	for (int b = 0; b < nflows && !rc; b++)
		for (int a = 0; a < nv; a++) {
			c.flows = flows[b];
			c.variant = vsel[a];
			print_result(&o, &c, &res[a][b], pct, npct);
		}
	bench_out_finish(&o);
	socktab_thread_unregister();
	if (rc)
		return rc;
	if (!o.json && (nv > 1 || nflows > 1)) {
		int base = -1;

		for (int a = 0; a < nv; a++)
			if (!strcmp(bench_variants[vsel[a]].name, "linux"))
				base = a;
		printf("\n%-10s %7s %9s %13s %12s %14s %12s\n", "variant", "flows", "occupancy",
		       "throughput", "latency_p50", "ports_tried", "vs_linux");
		for (int b = 0; b < nflows; b++)
			for (int a = 0; a < nv; a++) {
				const struct bench_crr_result *r = &res[a][b];

				printf("%-10s %7d %9.3f %13.0f %12.9f %14.2f", bench_variants[vsel[a]].name,
				       flows[b], (double)flows[b] / (c.hi - c.lo + 1), r->throughput,
				       bench_histo_percentile(&r->histo, 50) / 1e9,
				       r->ports_tried_mean);
				if (base >= 0 && res[base][b].throughput > 0)
					printf(" %11.2fx", r->throughput / res[base][b].throughput);
				printf("\n");
			}
	}
	if (plot) {
		struct bench_plot pl = { .title = "socktab bench crr: tcp_crr throughput vs flows",
					 .xlabel = "flows (open connections toward one server port)",
					 .ylabel = "transactions/s",
					 .logy = true };

		for (int a = 0; a < nv; a++) {
			pl.name[a] = bench_variants[vsel[a]].name;
			pl.npoints[a] = nflows;
			for (int b = 0; b < nflows; b++) {
				pl.x[a][b] = flows[b];
				pl.y[a][b] = res[a][b].throughput;
			}
		}
		pl.nseries = nv;
		if (bench_plot_png(&pl, plot))
			return 1;
	}
	return 0;
}
