/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by the multi-threaded tests (tests/stress): a seeded generator, the sequence
 * counter that tells a reader whether a writer's slot stayed unchanged for a whole lookup, the
 * small-table net they all stress, and a SO_REUSEPORT listener group that one thread keeps
 * replacing while readers look it up.
 *
 * The sequence counter is a seqlock without data: a writer makes it odd (stress_write_begin),
 * changes the slot and its sockets, and makes it even again (stress_write_end). A reader that
 * reads the same even value before and after a lookup (stress_read_begin, stress_read_stable)
 * knows that nothing of the slot changed while the lookup ran, so the lookup must have seen
 * exactly what the slot publishes.
 */
#ifndef SOCKTAB_TEST_STRESS_H
#define SOCKTAB_TEST_STRESS_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "socktab/socktab.h"

/* IPv4 address literal @a and @port (host order) as a sockaddr_in. */
static inline struct sockaddr_in stress_sin4(const char *a, uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, a, &s.sin_addr);
	return s;
}

/* The end of a stress program: closes @b (when not NULL), frees @net, unregisters the thread,
 * prints the one check's verdict. Returns the exit status. */
static inline int stress_finish(struct socktab_net *net, struct socktab_sock *b, bool ok)
{
	if (b)
		socktab_close(b);
	socktab_net_free(net);
	socktab_thread_unregister();
	printf("%d passed, %d failed\n", ok, !ok);
	return ok ? 0 : 1;
}

/* The option of a program whose only one is --duration S (0 < S <= 3600, seconds): 0 with
 * *@d set, or 2 after the usage line on stderr. */
static inline int stress_parse_duration(int argc, char **argv, const char *prog, double *d)
{
	for (int i = 1; i < argc; i += 2) {
		char *end;

		if (strcmp(argv[i], "--duration") || i + 1 >= argc ||
		    !((*d = strtod(argv[i + 1], &end)) > 0 && *d <= 3600) || *end) {
			fprintf(stderr, "usage: %s [--duration S]\n", prog);
			return 2;
		}
	}
	return 0;
}

/* Have @d seconds passed since @t0 (CLOCK_MONOTONIC)? */
static inline bool stress_elapsed(const struct timespec *t0, double d)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9 >= d;
}

/* xorshift64: fast, reproducible from the seed; @s must not be zero. */
static inline uint64_t stress_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static inline void stress_write_begin(_Atomic uint32_t *seq)
{
	atomic_fetch_add_explicit(seq, 1, memory_order_acq_rel);
}

static inline void stress_write_end(_Atomic uint32_t *seq)
{
	atomic_fetch_add_explicit(seq, 1, memory_order_release);
}

/* The counter before a lookup; read the slot's fields after it. */
static inline uint32_t stress_read_begin(_Atomic uint32_t *seq)
{
	return atomic_load_explicit(seq, memory_order_acquire);
}

/* Was the slot unchanged, and not changing, since stress_read_begin() returned @s1? */
static inline bool stress_read_stable(_Atomic uint32_t *seq, uint32_t s1)
{
	/* The lookup's loads must not pass the second read of the counter. A release RMW of 0
	 * orders them (a fence would do, but TSan does not model fences). */
	return !(s1 & 1) && atomic_fetch_add_explicit(seq, 0, memory_order_acq_rel) == s1;
}

/*
 * The net every stress test churns: small tables (64 ehash slots, 64 bind slots: long chains,
 * buckets shared by unrelated ports), ports 40000-40999, TIME_WAIT of 20 ms with tw_reuse, so
 * entries expire and are taken over all the time.
 */
static inline void stress_net_params(struct socktab_net_params *p)
{
	socktab_net_params_init(p);
	p->ehash_entries = 64;
	p->ehash_locks = 4;
	p->bhash_entries = 64;
	p->port_low = 40000;
	p->port_high = 40999;
	p->tw_len_ms = 20;
	p->tw_reuse = 1;
	p->tw_reuse_delay_ms = 1;
}

/* Sleep @seconds, resuming after signals. */
static inline void stress_sleep(double seconds)
{
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * A SO_REUSEPORT group of STRESS_GROUP_SIZE listeners on 127.0.0.1:port. stress_group_churn()
 * (a thread) sets it up, then closes and replaces one member at a time until @stop is set, so at
 * least three members always listen.
 */
#define STRESS_GROUP_SIZE 4

struct stress_group {
	struct socktab_net *net;
	uint16_t port;                 /* host order */
	uint64_t seed;                 /* nonzero */
	_Atomic uint64_t *ops;         /* counts each replacement, or NULL */
	void (*violation)(const char *what);
	_Atomic int ready;             /* the group is set up */
	_Atomic int stop;              /* set by the test: close the group and return */
	_Atomic uint64_t steps;        /* replacements so far */
};

/* One member: socket, SO_REUSEPORT, bind, listen. */
static inline struct socktab_sock *stress_group_member(struct stress_group *g)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(g->port) };
	struct socktab_sock *sk = socktab_socket(g->net, SOCKTAB_TCP, AF_INET);
	int one = 1;

	a.sin_addr.s_addr = htonl(0x7f000001);
	if (sk)
		socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (!sk || socktab_bind(sk, (struct sockaddr *)&a, sizeof(a)) || socktab_listen(sk, 8))
		g->violation(atomic_load(&g->ready) ? "group listener re-listen failed"
						    : "group listener setup failed");
	return sk;
}

static inline void *stress_group_churn(void *arg)
{
	struct stress_group *g = arg;
	struct socktab_sock *l[STRESS_GROUP_SIZE];
	uint64_t rng = g->seed | 1;

	socktab_thread_register();
	for (int i = 0; i < STRESS_GROUP_SIZE; i++)
		l[i] = stress_group_member(g);
	atomic_store(&g->ready, 1);
	while (!atomic_load(&g->stop)) {
		int i = (int)(stress_rand(&rng) % STRESS_GROUP_SIZE);

		if (l[i])
			socktab_close(l[i]);
		l[i] = stress_group_member(g);
		atomic_fetch_add(&g->steps, 1);
		if (g->ops)
			atomic_fetch_add_explicit(g->ops, 1, memory_order_relaxed);
	}
	for (int i = 0; i < STRESS_GROUP_SIZE; i++)
		if (l[i])
			socktab_close(l[i]);
	socktab_thread_unregister();
	return NULL;
}

/*
 * A listener lookup of the group from 127.0.0.2 and a random port. *sure: at most one
 * replacement (one close, one listen) overlapped the lookup, so three members listened for all
 * of it and a miss is a violation; a reader preempted for longer may rightly miss. The caller
 * checks the key of the result and drops its reference.
 */
static inline struct socktab_sock *stress_group_lookup(struct stress_group *g, uint64_t *rng,
						       bool *sure)
{
	uint16_t sport = (uint16_t)(stress_rand(rng) & 0xffff);
	uint64_t g0 = atomic_load(&g->steps);
	struct socktab_sock *f = socktab_lookup_listener4(g->net, htonl(0x7f000002), htons(sport),
							  htonl(0x7f000001), htons(g->port), SOCKTAB_LOOPBACK_IFINDEX, 0);

	*sure = atomic_load(&g->steps) - g0 <= 1;
	return f;
}

#endif
