/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stress: request entries under concurrent control calls. A SO_REUSEPORT group of two listens on
 * one port with net.ipv4.tcp_migrate_req set: the member that stays (B) and one (A) that the
 * writer makes listen, fills with requests and stops again and again, so its requests migrate
 * to B
 * while the other thread works on them. The writer hands each request to the worker through a
 * ring of slots; the worker promotes it, drops it, or retransmits and then drops it, accepts
 * B's children and closes them, and asks the SYN verdict meanwhile. Every call must succeed or
 * give one of the errors its contract allows (a promotion may meet a full accept queue, a
 * request dropped at a close without a target is gone), and at the end, with every request and
 * child handed back, the net must hold no request, no connection and B's queues must be empty,
 * and the pools must have reused their objects: a reference left behind on each of millions of
 * requests or children would have taken thousands of slabs.
 * --duration S (bounded also by a cycle cap). Prints one summary line with the counts, then
 * "N passed, M failed"; exit status 1 on any failure.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "socktab/socktab.h"
#include "stress.h"

#define LPORT 46000
#define NSLOTS 64
#define PER_CYCLE 24
#define MAX_CYCLES 10000000ull

static struct socktab_net *net;
static struct socktab_sock *b_listener;
static struct socktab_sock *_Atomic slots[NSLOTS];
static _Atomic int stop;
static double duration = 3;
static _Atomic uint64_t n_cycles, n_reqs, n_promoted, n_full, n_gone, n_dropped, n_accepted,
	n_verdicts, n_bad;

static void bad(const char *what, int err)
{
	if (atomic_fetch_add(&n_bad, 1) < 10)
		fprintf(stderr, "stress_reqsk: %s: %s\n", what, strerror(err < 0 ? -err : err));
}

static struct sockaddr_in sin4(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static struct socktab_sock *rp_listener(void)
{
	struct socktab_sock *l = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct sockaddr_in a = sin4(LPORT);
	int one = 1;

	if (!l || socktab_setsockopt(l, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    socktab_bind(l, (struct sockaddr *)&a, sizeof(a)) || socktab_listen(l, 16)) {
		fprintf(stderr, "stress_reqsk: cannot make a listener\n");
		exit(2);
	}
	return l;
}

/* Drop a request the caller holds and release it: 0 or -ENOENT (gone already) are fine. */
static void drop_put(struct socktab_sock *r)
{
	int err = socktab_req_drop(r);

	if (err && err != -ENOENT)
		bad("req_drop", err);
	atomic_fetch_add(err ? &n_gone : &n_dropped, 1);
	socktab_sock_put(r);
}

static void *writer(void *arg)
{
	struct timespec t0;
	uint32_t rport = 1024;

	(void)arg;
	socktab_thread_register();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* A listens, fills, and stops (a move to CLOSE is a listener's stop, as close() is) on one
	 * socket: the port stays bound (bind() locked it), and no bind() runs beside the worker's
	 * closes of children on the same port. */
	struct socktab_sock *a = rp_listener();

	while (atomic_load(&n_cycles) < MAX_CYCLES && !stress_elapsed(&t0, duration)) {
		if (atomic_load(&n_cycles) && socktab_listen(a, 16))
			bad("listen again", EINVAL);

		for (int i = 0; i < PER_CYCLE; i++) {
			struct sockaddr_in l = sin4(LPORT), r;
			struct socktab_sock *req, *none = NULL;

			rport = rport >= 65535 ? 1024 : rport + 1;
			r = sin4((uint16_t)rport);
			req = socktab_req_new(a, (struct sockaddr *)&l, (struct sockaddr *)&r,
					      sizeof(l), 0, 0);
			if (!req) {
				if (errno != EADDRINUSE) /* a 4-tuple still live from a lap ago */
					bad("req_new", errno);
				continue;
			}
			atomic_fetch_add(&n_reqs, 1);
			for (int t = 0; t < 64; t++) {
				none = NULL;
				if (atomic_compare_exchange_strong(&slots[rport % NSLOTS], &none,
								   req)) {
					req = NULL;
					break;
				}
				sched_yield();
			}
			if (req)
				drop_put(req); /* the worker is far behind: drop it here */
		}
		/* Its requests and children migrate to B. */
		if (socktab_set_state(a, SOCKTAB_TCP_CLOSE))
			bad("stop", EINVAL);
		atomic_fetch_add(&n_cycles, 1);
	}
	socktab_close(a);
	atomic_store(&stop, 1);
	socktab_thread_unregister();
	return NULL;
}

static void accept_all(void)
{
	struct socktab_sock *c;

	while ((c = socktab_accept(b_listener))) {
		struct linger lg = { 1, 0 };

		socktab_setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		if (socktab_close(c))
			bad("close child", EINVAL);
		atomic_fetch_add(&n_accepted, 1);
	}
	if (errno != EAGAIN)
		bad("accept", errno);
}

static void work(struct socktab_sock *r, uint64_t *rng)
{
	struct socktab_sock *child;
	int err;

	switch (stress_rand(rng) % 4) {
	case 0:
	case 1:
		err = socktab_req_promote(r, SOCKTAB_TCP_ESTABLISHED, &child);
		if (!err) {
			atomic_fetch_add(&n_promoted, 1);
			socktab_sock_put(child);
			socktab_sock_put(r);
			return;
		}
		if (err == -EAGAIN)
			atomic_fetch_add(&n_full, 1);
		else if (err != -ENOENT)
			bad("req_promote", err);
		break;
	case 2:
		err = socktab_req_retransmit(r);
		if (err < 0 && err != -ENOENT)
			bad("req_retransmit", err);
		break;
	default:
		break;
	}
	drop_put(r);
}

static void *worker(void *arg)
{
	uint64_t rng = 0x2545f4914f6cdd1dull, i = 0;

	(void)arg;
	socktab_thread_register();
	while (!atomic_load(&stop)) {
		struct socktab_sock *r = atomic_exchange(&slots[i++ % NSLOTS], NULL);

		if (r)
			work(r, &rng);
		if (i % 16 == 0) {
			int v = socktab_syn_decide(b_listener, 0);

			if (v < 0)
				bad("syn_decide", v);
			atomic_fetch_add(&n_verdicts, 1);
			accept_all();
		}
	}
	socktab_thread_unregister();
	return NULL;
}

int main(int argc, char **argv)
{
	struct socktab_net_params p;
	struct socktab_net_stats st;
	struct socktab_listen_info li;
	pthread_t w, k;
	bool ok;

	if (stress_parse_duration(argc, argv, "stress_reqsk", &duration))
		return 2;
	socktab_thread_register();
	socktab_net_params_init(&p);
	p.ehash_entries = 1024;
	net = socktab_net_new(&p);
	if (!net || socktab_net_sysctl(net, "net.ipv4.tcp_migrate_req", "1")) {
		fprintf(stderr, "stress_reqsk: no net\n");
		return 2;
	}
	b_listener = rp_listener();
	pthread_create(&w, NULL, writer, NULL);
	pthread_create(&k, NULL, worker, NULL);
	pthread_join(w, NULL);
	pthread_join(k, NULL);
	for (int i = 0; i < NSLOTS; i++) {
		struct socktab_sock *r = atomic_exchange(&slots[i], NULL);

		if (r)
			drop_put(r);
	}
	accept_all();
	/* Every request was promoted (and its child accepted and closed) or dropped. */
	socktab_listen_info(b_listener, &li);
	socktab_net_stats(net, &st);
	ok = !n_bad && !li.qlen && !li.young && !li.ack_backlog && !st.requests &&
	     !st.established && n_promoted == n_accepted && n_reqs && n_promoted &&
	     st.pool_slabs <= 16;
	printf("stress_reqsk: cycles=%llu requests=%llu promoted=%llu accept_full=%llu "
	       "gone=%llu dropped=%llu accepted=%llu verdicts=%llu bad=%llu; left: qlen=%u "
	       "young=%u ack_backlog=%u requests=%llu established=%llu slabs=%llu\n",
	       (unsigned long long)n_cycles, (unsigned long long)n_reqs,
	       (unsigned long long)n_promoted, (unsigned long long)n_full,
	       (unsigned long long)n_gone, (unsigned long long)n_dropped,
	       (unsigned long long)n_accepted, (unsigned long long)n_verdicts,
	       (unsigned long long)n_bad, li.qlen, li.young, li.ack_backlog,
	       (unsigned long long)st.requests, (unsigned long long)st.established,
	       (unsigned long long)st.pool_slabs);
	socktab_close(b_listener);
	socktab_net_free(net);
	socktab_thread_unregister();
	printf("%d passed, %d failed\n", ok, !ok);
	return ok ? 0 : 1;
}
