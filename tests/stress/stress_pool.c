/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stress: the pool's lock-free hand-back (src/pool.c). Objects freed after a grace period go
 * back onto a returned stack (the freeing thread's cache's, or the pool's) from the call_rcu
 * thread, which takes no lock; the cache's owner takes its stack whole without a lock, and a
 * thread that finds the pool empty takes another cache's or the pool's. Several threads open
 * sockets of one pool and close them in waves (each fills its hand to a random size, then
 * empties it), so the free lists run dry and allocations take returned stacks while batches are
 * being pushed.
 *
 * Checked while running: no socket is handed out while another thread holds it. Each thread
 * stamps a word of a socket's caller area with its own mark when socktab_socket() returns it
 * and reads it back before close(); socktab_socket() zeroes the area, so a socket handed to a
 * second thread loses the first one's mark. The negative control: the -Dnaive_order=true build
 * run with SOCKTAB_NAIVE_POOL set (as meson runs this test) pushes with a load and a store
 * instead of a compare-and-swap, and hands sockets out twice (a build with assertions stops at
 * the second hand-out of a free object first). Bounded by --duration seconds.
 * Prints a summary line and "N passed, M failed".
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "socktab/socktab.h"
#include "stress.h"

#define NT 3
#define HAND 256

static struct socktab_net *net;
static _Atomic int stop;
static _Atomic uint64_t n_opens, n_closes, n_waves, n_violations;

static void violation(const char *what, int t)
{
	atomic_fetch_add(&n_violations, 1);
	fprintf(stderr, "stress_pool: VIOLATION: %s (thread %d)\n", what, t);
}

static _Atomic uint64_t *mark_of(struct socktab_sock *sk)
{
	return (_Atomic uint64_t *)socktab_sock_priv(sk);
}

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg, n = 0;
	struct socktab_sock *hand[HAND];
	uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1), seq = 0;

	socktab_thread_register();
	while (!atomic_load(&stop)) {
		int goal = 1 + (int)(stress_rand(&rng) % HAND);

		atomic_fetch_add(&n_waves, 1);
		while (n < goal && !atomic_load(&stop)) {
			struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
			uint64_t mine = (uint64_t)(t + 1) << 48 | ++seq;

			if (!sk) {
				violation("socktab_socket failed", t);
				break;
			}
			atomic_fetch_add(&n_opens, 1);
			if (atomic_exchange(mark_of(sk), mine) != 0)
				violation("a new socket's caller area was not zero", t);
			hand[n++] = sk;
		}
		while (n > 0) {
			int k = (int)(stress_rand(&rng) % (uint64_t)n);
			struct socktab_sock *sk = hand[k];

			hand[k] = hand[--n];
			if ((atomic_exchange(mark_of(sk), 0) >> 48) != (uint64_t)(t + 1)) {
				/* Another thread holds it too: leave it to net_free, stop. */
				violation("socket handed out to two threads", t);
				atomic_store(&stop, 1);
				continue;
			}
			socktab_close(sk);
			atomic_fetch_add(&n_closes, 1);
		}
	}
	socktab_thread_unregister();
	return NULL;
}

int main(int argc, char **argv)
{
	struct socktab_net_params p;
	pthread_t th[NT];
	double duration = 3;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--duration") && i + 1 < argc) {
			duration = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: stress_pool [--duration S]\n");
			return 2;
		}
	}
	if (duration <= 0 || duration > 3600) {
		fprintf(stderr, "usage: stress_pool [--duration S]\n");
		return 2;
	}
	socktab_thread_register();
	stress_net_params(&p);
	p.sock_priv_size = sizeof(uint64_t);
	net = socktab_net_new(&p);
	if (!net) {
		fprintf(stderr, "stress_pool: cannot create the net\n");
		return 1;
	}
	for (int t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
	for (double left = duration; left > 0 && !atomic_load(&stop); left -= 0.01)
		stress_sleep(left < 0.01 ? left : 0.01);
	atomic_store(&stop, 1);
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	printf("stress_pool: duration=%.1fs opens=%llu closes=%llu waves=%llu violations=%llu\n",
	       duration, (unsigned long long)atomic_load(&n_opens),
	       (unsigned long long)atomic_load(&n_closes), (unsigned long long)atomic_load(&n_waves),
	       (unsigned long long)atomic_load(&n_violations));
	uint64_t v = atomic_load(&n_violations);

	/* A socket held twice means a corrupt pool: its teardown could loop or wait forever. */
	if (!v)
		socktab_net_free(net);
	socktab_thread_unregister();

	/* One check, as the other stress tests count themselves; the summary line has the rest. */
	printf("%d passed, %d failed\n", v ? 0 : 1, v ? 1 : 0);
	return v ? 1 : 0;
}
