/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stress: reader threads look up while writer threads connect, establish and close (graceful,
 * leaving short TIME_WAIT entries that expire and get recycled, or abortive), and one thread
 * keeps replacing members of a SO_REUSEPORT listener group. Sockets return to
 * the type-stable pool at once, so readers meet recycled objects.
 *
 * Each writer owns slots; a slot has a sequence counter (odd while it changes) and, when even and
 * marked present, the 4-tuple of an ESTABLISHED socket. A reader that sees the same even sequence
 * before and after a lookup knows the socket was present for the whole lookup: the lookup must
 * return exactly it. Every non-NULL result must carry the key that was asked for. Bounded by
 * --duration seconds and by an op cap. Prints one summary line; exit status 1 on any violation.
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

#define SLOTS_PER_WRITER 48
#define MAX_WRITERS 8
#define MAX_OPS 20000000ull

struct slot {
	_Atomic uint32_t seq;
	_Atomic int present;
	_Atomic uint32_t raddr, laddr;  /* network order */
	_Atomic uint32_t rport, lport;  /* network order */
	_Atomic(struct socktab_sock *) sk;
};

static struct socktab_net *net;
static struct slot slots[MAX_WRITERS * SLOTS_PER_WRITER];
static int nwriters = 2, nreaders = 2;
static _Atomic int stop, stop_churn;
static _Atomic uint64_t n_lookups, n_hits, n_checked, n_ops, n_violations, n_connect_fail;
static _Atomic uint64_t n_listener_lookups, churn_steps;
static _Atomic int listeners_ready;

static uint64_t xs(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static void violation(const char *what)
{
	atomic_fetch_add(&n_violations, 1);
	fprintf(stderr, "stress: VIOLATION: %s\n", what);
}

static void *writer(void *arg)
{
	int w = (int)(intptr_t)arg;
	uint64_t rng = 0x1234567ull * (uint64_t)(w + 1);
	struct linger lg = { 1, 0 };

	socktab_thread_register();
	while (!atomic_load(&stop) && atomic_load(&n_ops) < MAX_OPS) {
		struct slot *s = &slots[w * SLOTS_PER_WRITER + (int)(xs(&rng) % SLOTS_PER_WRITER)];
		struct socktab_sock *sk = atomic_load(&s->sk);

		if (sk) {
			/* Mark absent, then close. */
			atomic_fetch_add_explicit(&s->seq, 1, memory_order_acq_rel);
			atomic_store(&s->present, 0);
			atomic_store(&s->sk, NULL);
			atomic_fetch_add_explicit(&s->seq, 1, memory_order_release);
			if (xs(&rng) & 1)
				socktab_setsockopt(sk, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			socktab_close(sk);
		} else {
			struct sockaddr_in dst = { .sin_family = AF_INET };
			struct sockaddr_in me;
			socklen_t len = sizeof(me);

			dst.sin_addr.s_addr = htonl(0x7f000001 + (uint32_t)(xs(&rng) % 4));
			dst.sin_port = htons((uint16_t)(1000 + xs(&rng) % 4));
			sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
			if (!sk || socktab_connect(sk, (struct sockaddr *)&dst, sizeof(dst))) {
				atomic_fetch_add(&n_connect_fail, 1);
				if (sk)
					socktab_close(sk);
				continue;
			}
			socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED);
			socktab_getsockname(sk, (struct sockaddr *)&me, &len);
			atomic_fetch_add_explicit(&s->seq, 1, memory_order_acq_rel);
			atomic_store(&s->raddr, dst.sin_addr.s_addr);
			atomic_store(&s->rport, dst.sin_port);
			atomic_store(&s->laddr, me.sin_addr.s_addr);
			atomic_store(&s->lport, me.sin_port);
			atomic_store(&s->sk, sk);
			atomic_store(&s->present, 1);
			atomic_fetch_add_explicit(&s->seq, 1, memory_order_release);
		}
		atomic_fetch_add_explicit(&n_ops, 1, memory_order_relaxed);
	}
	socktab_thread_unregister();
	return NULL;
}

/*
 * Listener churn: four SO_REUSEPORT listeners on 127.0.0.1:9000; one at a time is closed and
 * replaced, so at least three are always listening and a listener lookup must never miss.
 */
#define LISTENERS 4
static void *listener_churn(void *arg)
{
	struct socktab_sock *l[LISTENERS];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9000) };
	uint64_t rng = 0x5eed;
	int one = 1;

	(void)arg;
	socktab_thread_register();
	a.sin_addr.s_addr = htonl(0x7f000001);
	for (int i = 0; i < LISTENERS; i++) {
		l[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		socktab_setsockopt(l[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
		if (socktab_bind(l[i], (struct sockaddr *)&a, sizeof(a)) || socktab_listen(l[i], 8))
			violation("listener setup failed");
	}
	atomic_store(&listeners_ready, 1);
	while (!atomic_load(&stop_churn)) {
		int i = (int)(xs(&rng) % LISTENERS);

		socktab_close(l[i]);
		l[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		socktab_setsockopt(l[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
		if (socktab_bind(l[i], (struct sockaddr *)&a, sizeof(a)) || socktab_listen(l[i], 8))
			violation("listener re-listen failed");
		atomic_fetch_add(&churn_steps, 1);
		atomic_fetch_add_explicit(&n_ops, 1, memory_order_relaxed);
	}
	for (int i = 0; i < LISTENERS; i++)
		socktab_close(l[i]);
	socktab_thread_unregister();
	return NULL;
}

static void check_listener(uint64_t *rng)
{
	uint16_t sport = (uint16_t)(xs(rng) & 0xffff);
	uint64_t g0 = atomic_load(&churn_steps);
	struct socktab_sock *f = socktab_lookup_listener4(net, htonl(0x7f000002), htons(sport),
							  htonl(0x7f000001), htons(9000));
	/* Three listeners were up for the whole lookup only if at most one churn step (one close,
	 * one listen) overlapped it; a reader preempted for longer may rightly miss. */
	bool sure = atomic_load(&churn_steps) - g0 <= 1;

	atomic_fetch_add_explicit(&n_listener_lookups, 1, memory_order_relaxed);
	if (!f && sure) {
		violation("listener lookup missed while three listeners were up");
		return;
	}
	if (!f)
		return;
	/* The key, not the state: the churn thread may close it right after the lookup. */
	if (socktab__sk_num(f) != 9000 || socktab__sk_rcv_saddr(f) != htonl(0x7f000001)) {
		fprintf(stderr, "stress: got num=%u state=%u\n", socktab__sk_num(f), RD(f->state));
		violation("listener lookup returned a socket whose key does not match");
	}
	socktab_sock_put(f);
}

static void *reader(void *arg)
{
	uint64_t rng = 0xabcdef1ull * (uint64_t)((intptr_t)arg + 7);
	int nslots = nwriters * SLOTS_PER_WRITER;

	socktab_thread_register();
	while (!atomic_load(&stop)) {
		if (atomic_load(&listeners_ready) && xs(&rng) % 8 == 0) {
			check_listener(&rng);
			continue;
		}
		struct slot *s = &slots[xs(&rng) % (uint64_t)nslots];
		uint32_t s1 = atomic_load_explicit(&s->seq, memory_order_acquire);
		int present = atomic_load(&s->present);
		uint32_t raddr = atomic_load(&s->raddr), laddr = atomic_load(&s->laddr);
		uint16_t rport = (uint16_t)atomic_load(&s->rport);
		uint16_t lport = (uint16_t)atomic_load(&s->lport);
		struct socktab_sock *expect = atomic_load(&s->sk);

		if (xs(&rng) % 8 == 0) /* a tuple that is never connected: port 999 */
			rport = htons(999);
		struct socktab_sock *f = socktab_lookup_tcp4(net, raddr, rport, laddr, lport);
		uint32_t s2 = atomic_load_explicit(&s->seq, memory_order_acquire);

		atomic_fetch_add_explicit(&n_lookups, 1, memory_order_relaxed);
		if (f) {
			atomic_fetch_add_explicit(&n_hits, 1, memory_order_relaxed);
			if (RD(f->addrpair) != ((uint64_t)raddr | (uint64_t)laddr << 32) ||
			    RD(f->portpair) != ((uint32_t)rport | (uint32_t)ntohs(lport) << 16))
				violation("lookup returned a socket whose key does not match");
			if (rport == htons(999))
				violation("lookup found a tuple nobody connected");
		}
		if (s1 == s2 && !(s1 & 1) && present && rport != htons(999)) {
			atomic_fetch_add_explicit(&n_checked, 1, memory_order_relaxed);
			if (f != expect)
				violation("a socket present for the whole lookup was missed");
		}
		if (f)
			socktab_sock_put(f);
	}
	socktab_thread_unregister();
	return NULL;
}

int main(int argc, char **argv)
{
	double duration = 3;
	pthread_t th[2 * MAX_WRITERS + 1];
	struct socktab_net_params p;
	struct socktab_net_stats st;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--duration"))
			duration = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--writers"))
			nwriters = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--readers"))
			nreaders = atoi(argv[i + 1]);
	}
	if (duration <= 0 || duration > 3600 || nwriters < 1 || nwriters > MAX_WRITERS ||
	    nreaders < 1 || nreaders > MAX_WRITERS) {
		fprintf(stderr, "usage: stress_ehash [--duration S] [--writers N] [--readers N]\n");
		return 2;
	}
	socktab_thread_register();
	socktab_net_params_init(&p);
	p.ehash_entries = 64; /* short table: long chains, frequent slot sharing */
	p.ehash_locks = 4;
	p.bhash_entries = 64;
	p.port_low = 40000;
	p.port_high = 40999;
	p.tw_len_ms = 20;
	p.tw_reuse = 1;
	p.tw_reuse_delay_ms = 1;
	net = socktab_net_new(&p);
	if (!net) {
		perror("socktab_net_new");
		return 1;
	}
	pthread_create(&th[2 * MAX_WRITERS], NULL, listener_churn, NULL);
	for (int i = 0; i < nwriters; i++)
		pthread_create(&th[i], NULL, writer, (void *)(intptr_t)i);
	for (int i = 0; i < nreaders; i++)
		pthread_create(&th[nwriters + i], NULL, reader, (void *)(intptr_t)i);
	struct timespec ts = { (time_t)duration, (long)((duration - (time_t)duration) * 1e9) };

	nanosleep(&ts, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < nwriters + nreaders; i++)
		pthread_join(th[i], NULL);
	atomic_store(&stop_churn, 1); /* readers are done: the listeners may go now */
	pthread_join(th[2 * MAX_WRITERS], NULL);
	/* Drain: close what is left; TIME_WAIT entries expire; every count must reach zero. */
	for (int i = 0; i < nwriters * SLOTS_PER_WRITER; i++)
		if (slots[i].sk)
			socktab_close(slots[i].sk);
	struct timespec w = { 0, 50 * 1000 * 1000 };

	nanosleep(&w, NULL);
	socktab_net_tick(net);
	socktab_net_stats(net, &st);
	uint64_t leaked = st.established + st.time_wait + st.bind_buckets;

	printf("stress_ehash: ops=%llu lookups=%llu listener_lookups=%llu hits=%llu checked=%llu "
	       "connect_fail=%llu tw_recycled=%llu violations=%llu leaked=%llu\n",
	       (unsigned long long)n_ops, (unsigned long long)n_lookups,
	       (unsigned long long)n_listener_lookups,
	       (unsigned long long)n_hits, (unsigned long long)n_checked,
	       (unsigned long long)n_connect_fail, (unsigned long long)st.tw_recycled,
	       (unsigned long long)n_violations, (unsigned long long)leaked);
	socktab_net_free(net);
	socktab_thread_unregister();
	int ok = n_violations == 0 && leaked == 0 && n_checked > 0;

	printf("%d passed, %d failed\n", ok, !ok);
	return ok ? 0 : 1;
}
