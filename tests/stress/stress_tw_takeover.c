/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stress: a new connection of a listener taking over a TIME_WAIT entry of its 4-tuple (R56, R61)
 * while another thread kills that entry. A child's or a request's insertion checks and inserts
 * under the 4-tuple's ehash lock only, and takes the entry out of its bind bucket afterwards,
 * under the port's bhash lock (reqsk.c, hash_new_entry()); a socktab_tw_kill() of the same entry
 * can come in between, take it out of the bucket itself and count it gone. The takeover must then
 * leave the count alone, or one TIME_WAIT entry comes off it twice (the count wraps below zero).
 *
 * The maker thread cycles one 4-tuple through child -> ESTABLISHED -> server's close (TIME_WAIT,
 * the peer's FIN seen) -> a new child that takes the entry over, and so on; the killer thread
 * looks the 4-tuple up and kills every TIME_WAIT entry it finds. A kill may meet an entry
 * already taken over (-EINVAL), and a new child an entry already killed (no takeover). At the
 * end, with every socket closed and every entry killed, the net must count no TIME_WAIT entry
 * and no connection, and the port must be free for a plain bind().
 * The negative-control build (-Dnaive_order=true, SOCKTAB_NAIVE_TAKEOVER=1) widens the window
 * and drops the takeover's check: this test must fail there.
 * --duration S (bounded also by a cycle cap). Prints one summary line, then
 * "N passed, M failed"; exit status 1 on any failure.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "socktab/socktab.h"
#include "stress.h"

#define LPORT 47000
#define RPORT 9
#define MAX_CYCLES 20000000ull

static struct socktab_net *net;
static struct socktab_sock *listener;
static _Atomic int stop;
static double duration = 2;
static _Atomic uint64_t n_cycles, n_kills, n_kill_gone, n_bad;

static void bad(const char *what, int err)
{
	if (atomic_fetch_add(&n_bad, 1) < 10)
		fprintf(stderr, "stress_tw_takeover: %s: %s\n", what,
			strerror(err < 0 ? -err : err));
}

/* The entry of the cycled 4-tuple, referenced, or NULL. */
static struct socktab_sock *lookup(void)
{
	return socktab_lookup_established4(net, htonl(0x7f000002), htons(RPORT),
					   htonl(INADDR_LOOPBACK), htons(LPORT), 1, 0);
}

static void *maker(void *arg)
{
	struct sockaddr_in local = stress_sin4("127.0.0.1", LPORT);
	struct sockaddr_in remote = stress_sin4("127.0.0.2", RPORT);
	struct timespec t0;

	(void)arg;
	socktab_thread_register();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (atomic_load(&n_cycles) < MAX_CYCLES && !stress_elapsed(&t0, duration)) {
		struct socktab_sock *tw, *c;
		int err;

		c = socktab_sock_new_child(listener, (struct sockaddr *)&local,
					   (struct sockaddr *)&remote, sizeof(local), 1, 0);
		if (!c) {
			bad("new_child", errno);
			continue;
		}
		if ((err = socktab_set_state(c, SOCKTAB_TCP_ESTABLISHED)))
			bad("set_state", err);
		/* The server closes first: a TIME_WAIT entry, which the peer's FIN moves on. */
		if ((err = socktab_close(c)))
			bad("close", err);
		tw = lookup();
		if (tw) {
			struct socktab_tw *t = socktab_sock_tw(tw);

			/* The killer may have killed it already: -EINVAL is its contract then. */
			if (t) {
				err = socktab_tw_fin(t);
				if (err && err != -EINVAL)
					bad("tw_fin", err);
			}
			socktab_sock_put(tw);
		}
		atomic_fetch_add(&n_cycles, 1);
	}
	atomic_store(&stop, 1);
	socktab_thread_unregister();
	return NULL;
}

static void *killer(void *arg)
{
	(void)arg;
	socktab_thread_register();
	while (!atomic_load(&stop)) {
		struct socktab_sock *tw = lookup();
		struct socktab_tw *t = tw ? socktab_sock_tw(tw) : NULL;

		if (t) {
			int err = socktab_tw_kill(t);

			if (err && err != -EINVAL)
				bad("tw_kill", err);
			atomic_fetch_add(err ? &n_kill_gone : &n_kills, 1);
		}
		if (tw)
			socktab_sock_put(tw);
	}
	socktab_thread_unregister();
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = stress_sin4("127.0.0.1", LPORT);
	struct socktab_net_params p;
	struct socktab_net_stats st;
	struct socktab_sock *tw, *b;
	pthread_t m, k;
	bool ok;
	int bind_err;

	if (stress_parse_duration(argc, argv, "stress_tw_takeover", &duration))
		return 2;
	socktab_thread_register();
	socktab_net_params_init(&p);
	p.ehash_entries = 1024;
	net = socktab_net_new(&p);
	listener = net ? socktab_socket(net, SOCKTAB_TCP, AF_INET) : NULL;
	if (!listener || socktab_bind(listener, (struct sockaddr *)&a, sizeof(a)) ||
	    socktab_listen(listener, 16)) {
		fprintf(stderr, "stress_tw_takeover: cannot make a listener\n");
		return 2;
	}
	pthread_create(&m, NULL, maker, NULL);
	pthread_create(&k, NULL, killer, NULL);
	pthread_join(m, NULL);
	pthread_join(k, NULL);
	tw = lookup();
	if (tw) {
		if (socktab_sock_tw(tw) && socktab_tw_kill(socktab_sock_tw(tw)))
			bad("last tw_kill", EINVAL);
		socktab_sock_put(tw);
	}
	socktab_close(listener);
	socktab_net_stats(net, &st);
	/* The port's owner list and the count are right only if no entry left its bucket
	 * twice: a plain bind() gets the port. */
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	bind_err = b ? socktab_bind(b, (struct sockaddr *)&a, sizeof(a)) : -ENOMEM;
	/* Both sides of the race must have happened: entries taken over (the net's count, which
	 * only a takeover that found its entry still there adds to) and entries killed. */
	ok = !n_bad && !st.time_wait && !st.established && !bind_err && st.tw_recycled && n_kills;
	printf("stress_tw_takeover: cycles=%llu takeovers=%llu kills=%llu kills_too_late=%llu "
	       "bad=%llu; left: time_wait=%llu established=%llu; bind after: %d\n",
	       (unsigned long long)n_cycles, (unsigned long long)st.tw_recycled,
	       (unsigned long long)n_kills, (unsigned long long)n_kill_gone,
	       (unsigned long long)n_bad, (unsigned long long)st.time_wait,
	       (unsigned long long)st.established, bind_err);
	return stress_finish(net, b, ok);
}
