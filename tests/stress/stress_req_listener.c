/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stress: socktab_req_listener() on requests whose listeners close under them. A writer makes a
 * listener, stamps its caller area with a generation, makes requests of it (each stamped with
 * the same generation in its own area) and hands them to a reader through a ring of slots, then
 * closes the listener, which drops the requests the reader still holds; it also opens and closes
 * a batch of plain sockets every cycle, so a closed listener's memory goes back to the pool after
 * its grace period and is soon another socket's. The reader keeps each request for a while and
 * asks for its listener again and again, each time inside a read-side section: the answer must
 * be NULL or a listener whose stamp is the request's, never the memory of a listener that closed
 * and became another socket (a stamp of 0 or of a later generation).
 * --duration S. Prints one summary line, then "N passed, M failed"; exit status 1 on failure.
 */
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

#define LPORT 46100
#define NSLOTS 64
#define PER_CYCLE 8
#define CHURN 64  /* plain sockets opened and closed per cycle: one batch of the pool */
#define HELD 256  /* requests the reader holds at once */

static struct socktab_net *net;
static struct socktab_sock *_Atomic slots[NSLOTS];
static _Atomic int stop;
static double duration = 3;
static _Atomic uint64_t n_cycles, n_reqs, n_asked, n_named, n_null, n_bad;

static void bad(const char *what, long long a, long long b)
{
	if (atomic_fetch_add(&n_bad, 1) < 10)
		fprintf(stderr, "stress_req_listener: %s: %lld, want %lld\n", what, a, b);
}

static struct sockaddr_in sin4(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static void *writer(void *arg)
{
	struct timespec t0;
	uint32_t gen = 0, rport = 1024;
	int one = 1;

	(void)arg;
	socktab_thread_register();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stress_elapsed(&t0, duration)) {
		struct socktab_sock *l = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		struct sockaddr_in a = sin4(LPORT);

		if (!l) {
			bad("socket", errno, 0);
			break;
		}
		gen++;
		memcpy(socktab_sock_priv(l), &gen, sizeof(gen));
		if (socktab_setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    socktab_bind(l, (struct sockaddr *)&a, sizeof(a)) || socktab_listen(l, 64)) {
			bad("listener", -1, 0);
			socktab_close(l);
			break;
		}
		for (int i = 0; i < PER_CYCLE; i++) {
			struct sockaddr_in r;
			struct socktab_sock *req, *none;

			rport = rport >= 65535 ? 1024 : rport + 1;
			r = sin4((uint16_t)rport);
			req = socktab_req_new(l, (struct sockaddr *)&a, (struct sockaddr *)&r,
					      sizeof(a), 0, 0);
			if (!req) {
				bad("req_new", errno, 0);
				continue;
			}
			memcpy(socktab_req_priv(req), &gen, sizeof(gen));
			atomic_fetch_add(&n_reqs, 1);
			none = NULL;
			/* Handed over (seq_cst: the stamps above come with it), or dropped here. */
			if (!atomic_compare_exchange_strong(&slots[rport % NSLOTS], &none, req))
				socktab_sock_put(req);
		}
		/* Until the reader has once found a listener open, give it a moment (bounded) to
		 * ask before the close: on a loaded machine it may otherwise only ever see closed
		 * ones, and the run would check one answer of the two. */
		if (!atomic_load(&n_named)) {
			uint64_t asked = atomic_load(&n_asked);

			for (int w = 0; w < 1000 && atomic_load(&n_asked) == asked &&
					!atomic_load(&n_named); w++)
				sched_yield();
		}
		/* The close drops every request of l; the reader may still hold them. */
		if (socktab_close(l))
			bad("close", -1, 0);
		for (int i = 0; i < CHURN; i++) {
			struct socktab_sock *s = socktab_socket(net, SOCKTAB_TCP, AF_INET);

			if (s)
				socktab_close(s);
		}
		atomic_fetch_add(&n_cycles, 1);
	}
	atomic_store(&stop, 1);
	socktab_thread_unregister();
	return NULL;
}

/* Ask for @r's listener inside a section; it must be NULL or carry @r's stamp. */
static void ask(struct socktab_sock *r)
{
	uint32_t want, got;
	struct socktab_sock *l;

	memcpy(&want, socktab_req_priv(r), sizeof(want));
	socktab_rcu_read_lock();
	l = socktab_req_listener(r);
	if (l) {
		memcpy(&got, socktab_sock_priv(l), sizeof(got));
		if (got != want)
			bad("the listener's stamp", got, want);
	}
	socktab_rcu_read_unlock();
	atomic_fetch_add(l ? &n_named : &n_null, 1);
	atomic_fetch_add(&n_asked, 1);
}

static void *reader(void *arg)
{
	struct socktab_sock *held[HELD] = { 0 };
	uint64_t i = 0, k = 0;

	(void)arg;
	socktab_thread_register();
	while (!atomic_load(&stop)) {
		struct socktab_sock *r = atomic_exchange(&slots[i++ % NSLOTS], NULL);

		if (r) {
			/* Keep it, giving back the oldest one held. */
			if (held[k % HELD])
				socktab_sock_put(held[k % HELD]);
			held[k++ % HELD] = r;
		}
		for (int j = 0; j < HELD; j += 17)
			if (held[(i + (uint64_t)j) % HELD])
				ask(held[(i + (uint64_t)j) % HELD]);
		if (i % 64 == 0)
			sched_yield();
	}
	for (int j = 0; j < HELD; j++)
		if (held[j]) {
			ask(held[j]);
			socktab_sock_put(held[j]);
		}
	socktab_thread_unregister();
	return NULL;
}

int main(int argc, char **argv)
{
	struct socktab_net_params p;
	struct socktab_net_stats st;
	pthread_t w, r;
	bool ok;

	if (stress_parse_duration(argc, argv, "stress_req_listener", &duration))
		return 2;
	socktab_thread_register();
	socktab_net_params_init(&p);
	p.ehash_entries = 1024;
	p.sock_priv_size = 8;
	p.req_priv_size = 4;
	net = socktab_net_new(&p);
	if (!net) {
		fprintf(stderr, "stress_req_listener: no net\n");
		return 2;
	}
	pthread_create(&w, NULL, writer, NULL);
	pthread_create(&r, NULL, reader, NULL);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	for (int i = 0; i < NSLOTS; i++) {
		struct socktab_sock *s = atomic_exchange(&slots[i], NULL);

		if (s) {
			ask(s);
			socktab_sock_put(s);
		}
	}
	socktab_net_stats(net, &st);
	/* Every listener closed, so every request was dropped with it. */
	ok = !n_bad && n_cycles && n_named && n_null && !st.requests;
	printf("stress_req_listener: cycles=%llu requests=%llu asked=%llu named=%llu null=%llu "
	       "bad=%llu; left: requests=%llu\n",
	       (unsigned long long)n_cycles, (unsigned long long)n_reqs,
	       (unsigned long long)n_asked, (unsigned long long)n_named,
	       (unsigned long long)n_null, (unsigned long long)n_bad,
	       (unsigned long long)st.requests);
	socktab_net_free(net);
	socktab_thread_unregister();
	printf("%d passed, %d failed\n", ok, !ok);
	return ok ? 0 : 1;
}
