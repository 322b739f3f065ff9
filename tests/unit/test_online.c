/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Online threads (socktab_thread_online, socktab/net.h): a thread that holds one read-side
 * section from one quiescent state to the next. What must hold:
 *   - no grace period ends, and so no closed socket's memory is reused, before every online
 *     thread passed a quiescent state (the waiting cases below);
 *   - an online thread may call the control functions, and the calls that wait for a grace
 *     period pass a quiescent state instead of waiting for the thread itself;
 *   - the refusals (not registered, already online, inside a section of its own).
 * The negative control: the -Dnaive_order=true build run with SOCKTAB_NAIVE_ONLINE=1 goes online
 * without a section; grace_waits_for_online, memory_kept_until_quiescent and
 * results_survive_churn then fail.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static struct socktab_net *new_net(size_t priv)
{
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	p.ehash_entries = 1024;
	p.sock_priv_size = priv;
	p.port_low = 40000;
	p.port_high = 40999;
	return socktab_net_new(&p);
}

static int no_op_cb(struct socktab_sk_lookup *ctx, void *arg)
{
	(void)ctx;
	(void)arg;
	return SOCKTAB_SK_PASS;
}

/* ---- refusals ---- */

static void *unregistered_main(void *arg)
{
	*(int *)arg = socktab_thread_online();
	return NULL;
}

TEST(refusals)
{
	pthread_t t;
	int got = 0;

	/* A thread that never registered. */
	CHECK_EQ(pthread_create(&t, NULL, unregistered_main, &got), 0);
	pthread_join(t, NULL);
	CHECK_EQ(got, -EPERM);

	CHECK_EQ(socktab_thread_online(), 0);
	CHECK_EQ(socktab_thread_online(), -EALREADY);
	socktab_thread_offline();
	socktab_thread_offline(); /* not online: nothing to do */
	socktab_quiescent_state();

	socktab_rcu_read_lock();
	CHECK_EQ(socktab_thread_online(), -EBUSY);
	socktab_rcu_read_unlock();
	CHECK_EQ(socktab_thread_online(), 0);
	socktab_thread_offline();
}

/* ---- grace periods wait for an online thread ---- */

struct holder {
	pthread_t th;
	struct socktab_net *net;
	struct socktab_sock *look;   /* what to look up and hold (memory_kept_until_quiescent) */
	_Atomic int ready, go_quiet, quiet_done, stop;
	_Atomic uint64_t cookie_seen; /* the looked-up socket's caller data, read while online */
	int online_err;
	bool unregister_online;      /* leave by unregistering, still online */
};

static void *holder_main(void *arg)
{
	struct holder *h = arg;

	socktab_thread_register();
	h->online_err = socktab_thread_online();
	if (h->look) {
		struct sockaddr_in me, peer;
		socklen_t l1 = sizeof(me), l2 = sizeof(peer);
		struct socktab_sock *f;

		socktab_getsockname(h->look, (struct sockaddr *)&me, &l1);
		socktab_getpeername(h->look, (struct sockaddr *)&peer, &l2);
		f = socktab_lookup_established4_rcu(h->net, peer.sin_addr.s_addr, peer.sin_port,
						    me.sin_addr.s_addr, me.sin_port,
						    SOCKTAB_LOOPBACK_IFINDEX, 0);
		if (f)
			atomic_store(&h->cookie_seen, *(volatile uint64_t *)socktab_sock_priv(f));
	}
	atomic_store(&h->ready, 1);
	while (!atomic_load(&h->go_quiet))
		sleep_ms(1);
	atomic_store(&h->quiet_done, 1);
	socktab_quiescent_state();
	while (!atomic_load(&h->stop))
		sleep_ms(1);
	if (!h->unregister_online)
		socktab_thread_offline();
	socktab_thread_unregister();
	return NULL;
}

static void holder_start(struct holder *h)
{
	pthread_create(&h->th, NULL, holder_main, h);
	while (!atomic_load(&h->ready))
		sleep_ms(1);
}

struct waiter {
	_Atomic int done;
};

/* socktab_net_free() of a net of its own: it waits for a grace period. */
static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct socktab_net *net;

	socktab_thread_register();
	net = new_net(0);
	if (net)
		socktab_net_free(net);
	atomic_store(&w->done, 1);
	socktab_thread_unregister();
	return NULL;
}

TEST(grace_waits_for_online)
{
	struct holder h = { 0 };
	struct waiter w = { 0 };
	pthread_t wt;

	holder_start(&h);
	CHECK_EQ(h.online_err, 0);
	pthread_create(&wt, NULL, waiter_main, &w);
	sleep_ms(200);
	/* The online thread has not passed a quiescent state: the wait must still be on. */
	CHECK_EQ(atomic_load(&w.done), 0);
	atomic_store(&h.go_quiet, 1);
	for (uint64_t t0 = now_ms(); !atomic_load(&w.done) && now_ms() - t0 < 10000;)
		sleep_ms(1);
	CHECK_EQ(atomic_load(&w.done), 1);
	CHECK_EQ(atomic_load(&h.quiet_done), 1);
	pthread_join(wt, NULL);
	atomic_store(&h.stop, 1);
	pthread_join(h.th, NULL);
}

/* Unregistering an online thread takes it offline: grace periods no longer wait for it. */
TEST(unregister_goes_offline)
{
	struct holder h = { .unregister_online = true };
	struct socktab_net *net;

	holder_start(&h);
	atomic_store(&h.go_quiet, 1);
	atomic_store(&h.stop, 1);
	pthread_join(h.th, NULL);
	net = new_net(0);
	CHECK(net != NULL);
	socktab_net_free(net); /* would wait forever for a section left open */
}

/*
 * A socket an online thread found keeps its memory until that thread's quiescent state: closed
 * meanwhile, it is not handed out again however many sockets are opened after it.
 */
TEST(memory_kept_until_quiescent)
{
	enum { OPENS = 4000, MORE = 256 };
	struct socktab_net *net = new_net(sizeof(uint64_t));
	static struct socktab_sock *opened[OPENS], *more[MORE];
	struct socktab_sock *s;
	struct holder h = { .net = net };
	int reused = 0;

	CHECK(net != NULL);
	for (int i = 0; i < MORE; i++)
		more[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	s = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(s != NULL);
	*(uint64_t *)socktab_sock_priv(s) = 0xc0ffee;
	CHECK_EQ(check_connect4(s, "127.0.0.1", 8080), 0);
	CHECK_EQ(socktab_set_state(s, SOCKTAB_TCP_ESTABLISHED), 0);
	h.look = s;
	holder_start(&h);
	CHECK_EQ(atomic_load(&h.cookie_seen), 0xc0ffee);
	socktab_close(s);
	/* Closed sockets go to the reclaim worker in batches of 64: these fill S's batch. */
	for (int i = 0; i < MORE; i++)
		if (more[i])
			socktab_close(more[i]);
	/* Let the worker run: were the grace period over, S would be back in the pool. */
	sleep_ms(100);
	for (int i = 0; i < OPENS; i++) {
		opened[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK(opened[i] != NULL);
		if (opened[i] == s)
			reused++;
	}
	CHECK_EQ(reused, 0);
	atomic_store(&h.go_quiet, 1);
	atomic_store(&h.stop, 1);
	pthread_join(h.th, NULL);
	for (int i = 0; i < OPENS; i++)
		if (opened[i])
			socktab_close(opened[i]);
	socktab_net_free(net);
}

/* ---- what an online thread may call ---- */

TEST(control_calls_while_online)
{
	struct socktab_net *net = new_net(0), *other = new_net(0);
	struct socktab_sock *s, *f;
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	int id;

	CHECK(net && other);
	CHECK_EQ(socktab_thread_online(), 0);
	s = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK(s != NULL);
	CHECK_EQ(check_connect4(s, "127.0.0.1", 8080), 0);
	CHECK_EQ(socktab_set_state(s, SOCKTAB_TCP_ESTABLISHED), 0);
	CHECK_EQ(socktab_getsockname(s, (struct sockaddr *)&me, &len), 0);
	/* No socktab_rcu_read_lock(): the online thread is inside a section. */
	f = socktab_lookup_established4_rcu(net, htonl(INADDR_LOOPBACK), htons(8080),
					    me.sin_addr.s_addr, me.sin_port,
					    SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(f == s);
	CHECK_EQ(socktab_sock_hold(f), 0);
	socktab_sock_put(f);
	socktab_quiescent_state();
	/* The calls that wait for a grace period pass a quiescent state instead of waiting for
	 * this very thread. */
	id = socktab_sk_lookup_attach(net, no_op_cb, NULL);
	CHECK(id > 0);
	CHECK_EQ(socktab_sk_lookup_detach(net, id), 0);
	socktab_net_free(other);
	/* Inside a section of its own, the wait would wait for that section. */
	id = socktab_sk_lookup_attach(net, no_op_cb, NULL);
	socktab_rcu_read_lock();
	CHECK_EQ(socktab_sk_lookup_detach(net, id), -EDEADLK);
	socktab_rcu_read_unlock();
	CHECK_EQ(socktab_sk_lookup_detach(net, id), 0);
	socktab_close(s);
	socktab_thread_offline();
	socktab_net_free(net);
}

/* ---- a bounded race: online readers against closing writers ---- */

#define RACE_SLOTS 64

struct race {
	struct socktab_net *net;
	_Atomic(struct socktab_sock *) sk[RACE_SLOTS];
	_Atomic uint32_t raddr[RACE_SLOTS], rport[RACE_SLOTS], laddr[RACE_SLOTS], lport[RACE_SLOTS];
	_Atomic int stop;
	_Atomic uint64_t held, lost, batches;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Keep every slot connected: close a random one, open a new one in its place. */
static void *race_writer(void *arg)
{
	struct race *r = arg;
	uint64_t rng = 0x2545f4914f6cdd1dull;
	struct linger lg = { 1, 0 };

	socktab_thread_register();
	while (!atomic_load(&r->stop)) {
		int i = (int)(rnd(&rng) % RACE_SLOTS);
		struct socktab_sock *old = atomic_exchange(&r->sk[i], NULL), *s;
		struct sockaddr_in me;
		socklen_t len = sizeof(me);

		if (old) {
			socktab_setsockopt(old, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			socktab_close(old); /* abortive: no TIME_WAIT entry takes its tuple */
		}
		s = socktab_socket(r->net, SOCKTAB_TCP, AF_INET);
		if (!s)
			continue;
		*(uint64_t *)socktab_sock_priv(s) = rnd(&rng) | 1;
		if (check_connect4(s, "127.0.0.1", 8000 + i) ||
		    socktab_set_state(s, SOCKTAB_TCP_ESTABLISHED) ||
		    socktab_getsockname(s, (struct sockaddr *)&me, &len)) {
			socktab_close(s);
			continue;
		}
		atomic_store(&r->raddr[i], htonl(INADDR_LOOPBACK));
		atomic_store(&r->rport[i], htons((uint16_t)(8000 + i)));
		atomic_store(&r->laddr[i], me.sin_addr.s_addr);
		atomic_store(&r->lport[i], me.sin_port);
		atomic_store(&r->sk[i], s);
	}
	socktab_thread_unregister();
	return NULL;
}

/*
 * Look up batches of slots with no section, keep each result and its caller data, spin a while
 * (the writer closes and reopens meanwhile), then check every kept socket still has the same
 * caller data before the quiescent state: a socket reused early would have been zeroed.
 */
static void *race_reader(void *arg)
{
	struct race *r = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)&rng;
	struct socktab_sock *kept[16];
	uint64_t seen[16];

	socktab_thread_register();
	socktab_thread_online();
	while (!atomic_load(&r->stop)) {
		int n = 0;

		for (int k = 0; k < 16; k++) {
			int i = (int)(rnd(&rng) % RACE_SLOTS);
			struct socktab_sock *f = socktab_lookup_established4_rcu(
				r->net, atomic_load(&r->raddr[i]), (uint16_t)atomic_load(&r->rport[i]),
				atomic_load(&r->laddr[i]), (uint16_t)atomic_load(&r->lport[i]),
				SOCKTAB_LOOPBACK_IFINDEX, 0);
			void *priv = f ? socktab_sock_priv(f) : NULL;

			if (priv) {
				kept[n] = f;
				seen[n++] = *(volatile uint64_t *)priv;
			}
		}
		for (uint64_t t0 = now_ms(); now_ms() - t0 < 10;)
			;
		for (int k = 0; k < n; k++) {
			if (*(volatile uint64_t *)socktab_sock_priv(kept[k]) != seen[k])
				atomic_fetch_add(&r->lost, 1);
		}
		atomic_fetch_add(&r->held, (uint64_t)n);
		atomic_fetch_add(&r->batches, 1);
		socktab_quiescent_state();
	}
	socktab_thread_offline();
	socktab_thread_unregister();
	return NULL;
}

TEST(results_survive_churn)
{
	struct race *r = calloc(1, sizeof(*r));
	pthread_t w, rd;

	CHECK(r != NULL);
	r->net = new_net(sizeof(uint64_t));
	CHECK(r->net != NULL);
	pthread_create(&w, NULL, race_writer, r);
	pthread_create(&rd, NULL, race_reader, r);
	sleep_ms(1000);
	atomic_store(&r->stop, 1);
	pthread_join(w, NULL);
	pthread_join(rd, NULL);
	printf("results_survive_churn: batches=%llu held=%llu lost=%llu\n",
	       (unsigned long long)r->batches, (unsigned long long)r->held,
	       (unsigned long long)r->lost);
	CHECK(r->held > 0);
	CHECK_EQ(r->lost, 0);
	for (int i = 0; i < RACE_SLOTS; i++)
		if (r->sk[i])
			socktab_close(r->sk[i]);
	socktab_net_free(r->net);
	free(r);
}

CHECK_MAIN(refusals, grace_waits_for_online, unregister_goes_offline, memory_kept_until_quiescent,
	   control_calls_while_online, results_survive_churn)
