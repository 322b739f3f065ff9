/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stress: UDP lookups race rehashes. One port P, a small table (128 slots, so ports and
 * addresses share chains):
 *   W        bound 0.0.0.0:P, never changes (every lookup has at least this answer);
 *   S[i]     bound 127.0.0.1:P and connected to 127.0.0.2:(10000 + i), never change;
 *   C[w][j]  churn sockets of writer w, bound 0.0.0.0:P: connect() to one of their own peers
 *            127.0.0.3:(20000 + 16 * id + x) (moving from the wildcard hash2 chain to the
 *            127.0.0.1 chain and into hash4), re-connect, disconnect (moving back), or close and
 *            reopen (the object returns to the pool after a grace period).
 * All sockets set SO_REUSEADDR. A toggler flips the hash4 switch now and then.
 * Each churn socket has a sequence counter (odd while it changes) and publishes which peer it is
 * connected to. Readers check, for lookups of a stable peer: exactly S[i]; of a churn peer or an
 * unknown one: never NULL, never a stable socket; a churn socket that stayed connected to the
 * peer for the whole lookup (its sequence did not move) is the answer; a churn socket that stayed
 * connected to another peer never is (a key that does not match).
 * Bounded by --duration seconds. Prints a summary line and "N passed, M failed".
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "sock.h"
#include "socktab/socktab.h"
#include "stress.h"

#define PORT 7000
#define NSTABLE 8
#define NWRITERS 2
#define PER_WRITER 6
#define NCHURN (NWRITERS * PER_WRITER)
#define NREADERS 2
#define PEERS 16

struct churn {
	_Atomic uint32_t seq;
	_Atomic int peer;                 /* x connected to, -1: unconnected */
	_Atomic(struct socktab_sock *) sk;
};

static struct socktab_net *net;
static struct socktab_sock *W, *S[NSTABLE];
static struct churn C[NCHURN];
static _Atomic int stop;
static _Atomic uint64_t n_lookups, n_strict, n_writes, n_violations, n_toggles;

static void violation(const char *what, int id)
{
	if (atomic_fetch_add(&n_violations, 1) < 10)
		fprintf(stderr, "stress_udp: VIOLATION: %s (%d)\n", what, id);
}

static uint32_t ip(const char *a)
{
	uint32_t v;

	inet_pton(AF_INET, a, &v);
	return v;
}

static struct socktab_sock *new_sock(const char *addr)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	int one = 1;

	if (!sk)
		abort();
	a.sin_addr.s_addr = ip(addr);
	socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (socktab_bind(sk, (struct sockaddr *)&a, sizeof(a)))
		abort();
	return sk;
}

static int connect_to(struct socktab_sock *sk, const char *addr, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	a.sin_addr.s_addr = ip(addr);
	return socktab_connect(sk, (struct sockaddr *)&a, sizeof(a));
}

static void *writer(void *arg)
{
	int w = (int)(intptr_t)arg;
	uint64_t rs = 0x9e3779b97f4a7c15ull * (uint64_t)(w + 1);

	socktab_thread_register();
	while (!atomic_load(&stop)) {
		int id = w * PER_WRITER + (int)(stress_rand(&rs) % PER_WRITER);
		int r = (int)(stress_rand(&rs) % 16);
		struct churn *c = &C[id];
		struct socktab_sock *sk = atomic_load_explicit(&c->sk, memory_order_relaxed);
		int x = (int)(stress_rand(&rs) % PEERS), peer = -1;

		atomic_store_explicit(&c->seq, atomic_load_explicit(&c->seq, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		atomic_thread_fence(memory_order_release);
		if (r == 0) {
			socktab_close(sk);
			atomic_store_explicit(&c->sk, new_sock("0.0.0.0"), memory_order_relaxed);
		} else if (r < 10) {
			if (connect_to(sk, "127.0.0.3", 20000 + PEERS * id + x))
				violation("connect failed", id);
			peer = x;
		} else {
			struct sockaddr un = { .sa_family = AF_UNSPEC };

			socktab_connect(sk, &un, sizeof(un));
		}
		atomic_store_explicit(&c->peer, peer, memory_order_relaxed);
		atomic_store_explicit(&c->seq, atomic_load_explicit(&c->seq, memory_order_relaxed) + 1,
				      memory_order_release);
		atomic_fetch_add_explicit(&n_writes, 1, memory_order_relaxed);
	}
	socktab_thread_unregister();
	return NULL;
}

static void *toggler(void *arg)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	(void)arg;
	socktab_thread_register();
	for (int on = 0; !atomic_load(&stop); on ^= 1) {
		socktab_net_set_udp_hash4(net, on);
		atomic_fetch_add(&n_toggles, 1);
		nanosleep(&ts, NULL);
	}
	socktab_net_set_udp_hash4(net, 1);
	socktab_thread_unregister();
	return NULL;
}

static bool is_stable(const struct socktab_sock *r)
{
	for (int i = 0; i < NSTABLE; i++)
		if (r == S[i])
			return true;
	return false;
}

static void *reader(void *arg)
{
	uint64_t rs = 0xda942042e4dd58b5ull * (uint64_t)((intptr_t)arg + 1);
	uint32_t s1[NCHURN], s2[NCHURN];
	int p1[NCHURN];
	struct socktab_sock *k1[NCHURN];

	socktab_thread_register();
	while (!atomic_load(&stop)) {
		int kind = (int)(stress_rand(&rs) % 3), i = (int)(stress_rand(&rs) % NSTABLE);
		int id = (int)(stress_rand(&rs) % NCHURN), x = (int)(stress_rand(&rs) % PEERS);
		uint32_t saddr;
		uint16_t sport;
		bool steady[NCHURN];
		struct socktab_sock *r;

		if (kind == 0) {
			saddr = ip("127.0.0.2");
			sport = htons((uint16_t)(10000 + i));
		} else if (kind == 1) {
			saddr = ip("127.0.0.3");
			sport = htons((uint16_t)(20000 + PEERS * id + x));
		} else {
			saddr = ip("127.0.0.9");
			sport = htons((uint16_t)(1 + (stress_rand(&rs) % 60000)));
		}
		for (int k = 0; k < NCHURN; k++) {
			s1[k] = atomic_load_explicit(&C[k].seq, memory_order_acquire);
			p1[k] = atomic_load_explicit(&C[k].peer, memory_order_relaxed);
			k1[k] = atomic_load_explicit(&C[k].sk, memory_order_relaxed);
		}
		r = socktab_lookup_udp4(net, saddr, sport, ip("127.0.0.1"), htons(PORT), SOCKTAB_LOOPBACK_IFINDEX, 0);
		atomic_thread_fence(memory_order_acquire);
		for (int k = 0; k < NCHURN; k++) {
			s2[k] = atomic_load_explicit(&C[k].seq, memory_order_relaxed);
			steady[k] = s1[k] == s2[k] && !(s1[k] & 1);
		}
		atomic_fetch_add_explicit(&n_lookups, 1, memory_order_relaxed);
		if (!r) {
			violation("lookup found nothing although W always matches", kind);
			continue;
		}
		if (kind == 0) {
			if (r != S[i])
				violation("stable 4-tuple did not return its connected socket", i);
		} else if (is_stable(r)) {
			violation("a socket connected to another peer was returned", kind);
		} else {
			/* Only churn socket `id` may connect to this peer; it must win if it was
			 * connected to it for the whole lookup. */
			if (kind == 1 && steady[id] && p1[id] == x) {
				if (r != k1[id])
					violation("connected churn socket missed", id);
				atomic_fetch_add_explicit(&n_strict, 1, memory_order_relaxed);
			}
			for (int k = 0; k < NCHURN; k++) {
				if (r != k1[k] || !steady[k] || p1[k] < 0)
					continue;
				atomic_fetch_add_explicit(&n_strict, 1, memory_order_relaxed);
				if (!(kind == 1 && k == id && p1[k] == x))
					violation("returned a socket whose key does not match", k);
			}
		}
		socktab_sock_put(r);
	}
	socktab_thread_unregister();
	return NULL;
}

int main(int argc, char **argv)
{
	struct socktab_net_params p;
	pthread_t wt[NWRITERS], rt[NREADERS], tt;
	double duration = 3;
	struct timespec ts;
	struct socktab_udp_stats st;
	bool ok;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--duration") && i + 1 < argc) {
			duration = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: stress_udp [--duration S]\n");
			return 2;
		}
	}
	if (duration <= 0 || duration > 3600) {
		fprintf(stderr, "usage: stress_udp [--duration S]\n");
		return 2;
	}
	socktab_thread_register();
	socktab_net_params_init(&p);
	p.udp_hash_entries = 128;
	net = socktab_net_new(&p);
	if (!net) {
		perror("socktab_net_new");
		return 1;
	}
	W = new_sock("0.0.0.0");
	for (int i = 0; i < NSTABLE; i++) {
		S[i] = new_sock("127.0.0.1");
		if (connect_to(S[i], "127.0.0.2", 10000 + i))
			abort();
	}
	for (int k = 0; k < NCHURN; k++) {
		atomic_init(&C[k].sk, new_sock("0.0.0.0"));
		atomic_init(&C[k].peer, -1);
	}
	for (int i = 0; i < NWRITERS; i++)
		pthread_create(&wt[i], NULL, writer, (void *)(intptr_t)i);
	for (int i = 0; i < NREADERS; i++)
		pthread_create(&rt[i], NULL, reader, (void *)(intptr_t)i);
	pthread_create(&tt, NULL, toggler, NULL);
	ts.tv_sec = (time_t)duration;
	ts.tv_nsec = (long)((duration - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < NWRITERS; i++)
		pthread_join(wt[i], NULL);
	for (int i = 0; i < NREADERS; i++)
		pthread_join(rt[i], NULL);
	pthread_join(tt, NULL);
	/* Invariant at exit: hash4 holds exactly the connected sockets. */
	socktab_udp_stats(net, &st);
	{
		uint64_t connected = NSTABLE;

		for (int k = 0; k < NCHURN; k++)
			connected += atomic_load(&C[k].peer) >= 0;
		if (st.hashed4 != connected)
			violation("hash4_cnt does not count the connected sockets", (int)st.hashed4);
		if (st.hashed != 1 + NSTABLE + NCHURN)
			violation("primary counts do not match the open sockets", (int)st.hashed);
	}
	socktab_net_free(net);
	socktab_thread_unregister();
	ok = atomic_load(&n_violations) == 0;
	printf("stress_udp: duration=%.1fs writes=%llu lookups=%llu strict_checks=%llu "
	       "hash4_toggles=%llu violations=%llu\n",
	       duration, (unsigned long long)n_writes, (unsigned long long)n_lookups,
	       (unsigned long long)n_strict, (unsigned long long)n_toggles,
	       (unsigned long long)n_violations);
	printf("%d passed, %d failed\n", ok, !ok);
	return ok ? 0 : 1;
}
