/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stress: RSS-aware connect() from several threads toward one destination, each thread on its
 * own queue (with --per-queue 2, two threads on each), each keeping its share of the queue's
 * ports between 80 % and full (abortive closes and graceful ones that leave TIME_WAIT entries of
 * 20 ms, reaped or taken over), while another thread ticks the net and keeps replacing the RSS
 * state with an equal one (the per-queue summaries of src/rss.c are rebuilt under the workers'
 * feet).
 *
 * Checked while running: every port lands on the thread's queue and is not one a thread holds
 * already; with one thread per queue, a thread is told -EADDRNOTAVAIL only when its live
 * sockets plus the net's TIME_WAIT entries (counted before a second try) cover its queue's whole
 * share, since no other thread can hold a port of its queue. Every --pause-ms milliseconds, and
 * at exit, every thread parks and the summaries must agree with the busy-port index bit for
 * bit: a summary bit left wrong by two changes of one word that raced (src/rss.c's re-reads)
 * lives only until the next change of a port it covers, so the test looks often. Two threads
 * on a queue change the same summary bits under different stripe locks, which the hook's
 * re-check puts right. The negative control: the -Dnaive_order=true build fills a summary set
 * without re-reading a word that changed, and syncs a bit without the re-check; both modes fail
 * the pauses' check there. Bounded by --duration seconds. Prints a summary line and
 * "N passed, M failed".
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "portmap.h"
#include "socktab/socktab.h"
#include "stress.h"

#define NQ 4
#define RETA_N 128
#define LO 40000
#define HI 40999

static const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static struct socktab_net *net;
static uint16_t reta[RETA_N];
static int share[NQ], per_queue = 1;
static _Atomic int owner[HI - LO + 1]; /* 1 + the worker holding the port's socket, or 0 */
static _Atomic int stop, parked, release, pause_req, paused;
static _Atomic uint64_t n_connects, n_fails, n_retried, n_tw, n_replaced, n_violations;
static _Atomic uint64_t n_checks, n_bad_bits;

static void violation(const char *what, int q, int port)
{
	atomic_fetch_add(&n_violations, 1);
	fprintf(stderr, "stress_rss: VIOLATION: %s (queue %d, port %d)\n", what, q, port);
}

static int port_queue(int port)
{
	uint8_t in[12];
	uint32_t a = htonl(0x7f000001);
	uint16_t dp = htons(80), lp = htons((uint16_t)port);

	memcpy(in, &a, 4);
	memcpy(in + 4, &a, 4);
	memcpy(in + 8, &dp, 2);
	memcpy(in + 10, &lp, 2);
	return reta[socktab_rss_hash(ms_key, sizeof(ms_key), in, 12) & (RETA_N - 1)];
}

static struct socktab_sock *connect_q(int q, int *err)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(80) };
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	if (!sk) {
		*err = -ENOMEM;
		return NULL;
	}
	dst.sin_addr.s_addr = htonl(0x7f000001);
	socktab_sock_set_rss_queue(sk, q);
	*err = socktab_connect(sk, (struct sockaddr *)&dst, sizeof(dst));
	if (*err) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

static int sock_port(struct socktab_sock *sk)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	return socktab_getsockname(sk, (struct sockaddr *)&a, &len) ? -1 : ntohs(a.sin_port);
}

/* Park while main checks the summaries at rest. */
static void pause_point(void)
{
	if (!atomic_load(&pause_req))
		return;
	atomic_fetch_add(&paused, 1);
	while (atomic_load(&pause_req))
		stress_sleep(0.0002);
	atomic_fetch_sub(&paused, 1);
}

static uint64_t time_wait_now(void)
{
	struct socktab_net_stats st;

	socktab_net_stats(net, &st);
	return st.time_wait;
}

static void *worker(void *arg)
{
	int w = (int)(intptr_t)arg, q = w % NQ, n = 0, err;
	struct socktab_sock *mine[HI - LO + 1];
	int port_of[HI - LO + 1], want = share[q] / per_queue;
	uint64_t rng = 0x2545f4914f6cdd1dull * (uint64_t)(w + 1);
	struct linger lg = { 1, 0 };

	socktab_thread_register();
	while (!atomic_load(&stop)) {
		pause_point();
		uint64_t r = stress_rand(&rng);
		int goal = want - (int)(r % (uint64_t)(want / 5 + 1));

		if (n < goal || (r >> 20) % 8 == 0) {
			struct socktab_sock *sk = connect_q(q, &err);

			if (!sk) {
				uint64_t tw = time_wait_now();

				if (err != -EADDRNOTAVAIL) {
					violation("connect failed with another errno", q, err);
					continue;
				}
				atomic_fetch_add(&n_retried, 1);
				sk = connect_q(q, &err);
				if (!sk) {
					atomic_fetch_add(&n_fails, 1);
					/* Only when no other thread holds ports of the queue. */
					if (per_queue == 1 && (uint64_t)n + tw < (uint64_t)share[q])
						violation("EADDRNOTAVAIL with a free port on the queue",
							  q, n);
					continue;
				}
			}
			int port = sock_port(sk);

			atomic_fetch_add(&n_connects, 1);
			if (port < LO || port > HI || port_queue(port) != q)
				violation("port off the range or the queue", q, port);
			else if (atomic_exchange(&owner[port - LO], w + 1))
				violation("port handed out twice", q, port);
			mine[n] = sk;
			port_of[n++] = port;
		} else if (n) {
			int k = (int)((r >> 32) % (uint64_t)n);

			if (port_of[k] >= LO && port_of[k] <= HI)
				atomic_store(&owner[port_of[k] - LO], 0);
			if ((r >> 8) % 4 == 0) {
				socktab_set_state(mine[k], SOCKTAB_TCP_ESTABLISHED);
				socktab_set_state(mine[k], SOCKTAB_TCP_CLOSING);
				atomic_fetch_add(&n_tw, 1);
			} else {
				socktab_setsockopt(mine[k], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			}
			socktab_close(mine[k]);
			mine[k] = mine[--n];
			port_of[k] = port_of[n];
		}
	}
	/* Hold the sockets while main checks the summaries at rest. */
	atomic_fetch_add(&parked, 1);
	while (!atomic_load(&release))
		stress_sleep(0.001);
	for (int i = 0; i < n; i++) {
		socktab_setsockopt(mine[i], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		socktab_close(mine[i]);
	}
	socktab_thread_unregister();
	return NULL;
}

/* Ticks the net and replaces its RSS state with an equal one. */
static void *ticker(void *arg)
{
	(void)arg;
	socktab_thread_register();
	for (int i = 0; !atomic_load(&stop); i++) {
		pause_point();
		socktab_net_tick(net);
		if (i % 20 == 19) {
			if (socktab_net_set_rss(net, ms_key, sizeof(ms_key), reta, RETA_N))
				violation("set_rss failed", -1, 0);
			atomic_fetch_add(&n_replaced, 1);
		}
		stress_sleep(0.001);
	}
	socktab_thread_unregister();
	return NULL;
}

int main(int argc, char **argv)
{
	struct socktab_net_params p;
	pthread_t th[2 * NQ + 1];
	int nw;
	double duration = 3, pause_ms = 2, elapsed = 0;
	uint32_t nsets, bad;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--duration") && i + 1 < argc) {
			duration = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--pause-ms") && i + 1 < argc) {
			pause_ms = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--per-queue") && i + 1 < argc) {
			per_queue = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: stress_rss [--duration S] [--pause-ms MS] [--per-queue 1|2]\n");
			return 2;
		}
	}
	if (duration <= 0 || duration > 3600 || pause_ms < 1 || pause_ms > 3600e3 ||
	    per_queue < 1 || per_queue > 2) {
		fprintf(stderr, "usage: stress_rss [--duration S] [--pause-ms MS] [--per-queue 1|2]\n");
		return 2;
	}
	nw = NQ * per_queue;
	socktab_thread_register();
	stress_net_params(&p);
	p.port_low = LO;
	p.port_high = HI;
	net = socktab_net_new(&p);
	for (int i = 0; i < RETA_N; i++)
		reta[i] = (uint16_t)(i % NQ);
	if (!net || socktab_net_set_rss(net, ms_key, sizeof(ms_key), reta, RETA_N)) {
		fprintf(stderr, "stress_rss: cannot create the net\n");
		return 1;
	}
	for (int port = LO; port <= HI; port++)
		share[port_queue(port)]++;
	for (int w = 0; w < nw; w++)
		pthread_create(&th[w], NULL, worker, (void *)(intptr_t)w);
	pthread_create(&th[nw], NULL, ticker, NULL);
	/* Time only while running: the pauses do not count. */
	while (elapsed < duration) {
		double step = pause_ms / 1000 < duration - elapsed ? pause_ms / 1000
								  : duration - elapsed;

		stress_sleep(step);
		elapsed += step;
		if (elapsed >= duration)
			break;
		atomic_store(&pause_req, 1);
		while (atomic_load(&paused) < nw + 1)
			stress_sleep(0.0002);
		bad = socktab__portmap_rss_check(net, &nsets);
		atomic_fetch_add(&n_checks, 1);
		if (bad) {
			atomic_fetch_add(&n_bad_bits, bad);
			violation("summary bits disagree with the index (pause)", -1, (int)bad);
		}
		atomic_store(&pause_req, 0);
		while (atomic_load(&paused))
			stress_sleep(0.0002);
	}
	atomic_store(&stop, 1);
	/* At rest with the workers' sockets still open: check the summaries, then let the
	 * workers close everything. */
	pthread_join(th[nw], NULL);
	while (atomic_load(&parked) < nw)
		stress_sleep(0.001);
	bad = socktab__portmap_rss_check(net, &nsets);
	atomic_fetch_add(&n_checks, 1);
	if (bad) {
		atomic_fetch_add(&n_bad_bits, bad);
		violation("summary bits disagree with the index", -1, (int)bad);
	}
	atomic_store(&release, 1);
	for (int w = 0; w < nw; w++)
		pthread_join(th[w], NULL);
	printf("stress_rss: duration=%.1fs connects=%llu eaddrnotavail=%llu retried=%llu "
	       "time_wait=%llu rss_replaced=%llu checks=%llu bad_bits=%llu summary_sets_at_end=%u "
	       "violations=%llu\n",
	       duration, (unsigned long long)atomic_load(&n_connects),
	       (unsigned long long)atomic_load(&n_fails), (unsigned long long)atomic_load(&n_retried),
	       (unsigned long long)atomic_load(&n_tw), (unsigned long long)atomic_load(&n_replaced),
	       (unsigned long long)atomic_load(&n_checks),
	       (unsigned long long)atomic_load(&n_bad_bits), nsets,
	       (unsigned long long)atomic_load(&n_violations));
	socktab_net_free(net);
	socktab_thread_unregister();
	uint64_t v = atomic_load(&n_violations);

	/* One check, as the other stress tests count themselves; the summary line has the rest. */
	printf("%d passed, %d failed\n", v ? 0 : 1, v ? 1 : 0);
	return v ? 1 : 0;
}
