/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stress: a listener's children joining and leaving its port's kids shards (src/bind.c) from
 * several threads at once. Each maker thread makes children of one listener (they go to its
 * shard) and hands them to a closer thread, which closes them as soon as it gets them, so every
 * shard keeps emptying and filling again: a maker's join that finds its shard with an owner
 * takes only the shard's lock, while the closer's leave of the shard's last owner takes the
 * port's bhash lock as well and clears the shard's bit in the bucket. A checker thread takes the
 * bhash lock and each shard's lock in turn, as every walk of the bucket's owners does, and checks
 * that a shard has owners exactly when its bit says so (a join that decided it was not the first
 * before taking the shard's lock could put a child in a shard the bucket no longer knows of, and
 * the port's bind checks would not see it), and that each shard's list is whole: every member
 * linked back to where it hangs, naming the bucket and the shard. A binder thread meanwhile
 * binds fresh sockets to the port, whose conflict checks walk the shards as they change: each
 * must fail with EADDRINUSE (the listener owns the port). At the end, with every child and the
 * listener closed, the bucket must be gone and a plain bind() must get the port.
 * The negative-control build (-Dnaive_order=true, SOCKTAB_NAIVE_KIDS=1) looks at the shard
 * before taking its lock, with a widened window: this test must fail there.
 * --wildcard: the listener is bound to 0.0.0.0, so the children own the port in their address's
 * bucket (127.0.0.1), which they keep alive and which goes when the closer empties every shard,
 * and each thread's joins look it up without a lock (under RCU) while it may be going.
 * [--wildcard] --duration S (bounded also by a cap on children; where S has not brought the
 * counts the verdict needs, on a loaded machine, it runs on until they are reached or five
 * times S has passed). Prints one summary line, then
 * "N passed, M failed"; exit status 1 on any failure.
 */
#include <sched.h>

#include "stress.h"

#include "bind.h"
#include "net.h"

#define LPORT 47100
#define MAKERS 2
#define QUEUE 4
#define MAX_KIDS 20000000ull

static struct socktab_net *net;
static struct socktab_sock *listener;
static _Atomic int stop;
static double duration = 2;
static bool wildcard;
static _Atomic uint64_t n_made, n_closed, n_checks, n_violations, n_binds, n_bad;

/* Both sides must have happened many times: children made, checks and binds made. */
static bool enough_done(void)
{
	return atomic_load(&n_made) > (wildcard ? 100u : 1000u) && atomic_load(&n_checks) > 100 &&
	       atomic_load(&n_binds) > 100;
}

/* The children a maker hands to the closer. */
struct handoff {
	pthread_mutex_t lock;
	struct socktab_sock *q[QUEUE];
	unsigned int n;
	int id;
};

static struct handoff hand[MAKERS];

static void bad(const char *what, int err)
{
	if (atomic_fetch_add(&n_bad, 1) < 10)
		fprintf(stderr, "stress_kids: %s: %s\n", what, strerror(err < 0 ? -err : err));
}

static void *maker(void *arg)
{
	struct handoff *h = arg;
	struct sockaddr_in local = stress_sin4("127.0.0.1", LPORT);
	/* Remote ports of its own: maker i takes 10000 + i * 20000 on, cycling. */
	unsigned int next = 0;

	socktab_thread_register();
	while (!atomic_load(&stop) && atomic_load(&n_made) < MAX_KIDS) {
		struct sockaddr_in remote;
		struct socktab_sock *c;
		bool full;

		pthread_mutex_lock(&h->lock);
		full = h->n == QUEUE;
		pthread_mutex_unlock(&h->lock);
		if (full)
			continue;
		remote = stress_sin4("127.0.0.2", (uint16_t)(10000 + h->id * 20000 + next));
		next = (next + 1) % 20000;
		c = socktab_sock_new_child(listener, (struct sockaddr *)&local,
					   (struct sockaddr *)&remote, sizeof(local), 1, 0);
		if (!c) {
			bad("new_child", errno);
			continue;
		}
		atomic_fetch_add(&n_made, 1);
		pthread_mutex_lock(&h->lock);
		h->q[h->n++] = c;
		pthread_mutex_unlock(&h->lock);
	}
	socktab_thread_unregister();
	return NULL;
}

/* Close every child handed over so far; true if there was one. */
static bool close_handed(void)
{
	bool any = false;

	for (int i = 0; i < MAKERS; i++) {
		struct socktab_sock *q[QUEUE];
		unsigned int n;

		pthread_mutex_lock(&hand[i].lock);
		n = hand[i].n;
		memcpy(q, hand[i].q, n * sizeof(q[0]));
		hand[i].n = 0;
		pthread_mutex_unlock(&hand[i].lock);
		for (unsigned int j = 0; j < n; j++) {
			int err = socktab_close(q[j]);

			if (err)
				bad("close", err);
			atomic_fetch_add(&n_closed, 1);
			any = true;
		}
	}
	return any;
}

static void *closer(void *arg)
{
	(void)arg;
	socktab_thread_register();
	while (!atomic_load(&stop))
		close_handed();
	socktab_thread_unregister();
	return NULL;
}

/* bind() of fresh sockets to the listener's address and port: EADDRINUSE every time. */
static void *binder(void *arg)
{
	struct sockaddr_in a = stress_sin4("127.0.0.1", LPORT);

	(void)arg;
	socktab_thread_register();
	while (!atomic_load(&stop)) {
		struct socktab_sock *b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		int err = b ? socktab_bind(b, (struct sockaddr *)&a, sizeof(a)) : -ENOMEM;

		if (err != -EADDRINUSE)
			bad("bind beside the listener", err ? err : EINVAL);
		if (b)
			socktab_close(b);
		atomic_fetch_add(&n_binds, 1);
		sched_yield();
	}
	socktab_thread_unregister();
	return NULL;
}

/* Caller holds the bhash lock. Shard by shard under its lock: owners exactly where the bit is
 * set, and each list whole. */
static void check_bucket(struct socktab__tb2 *tb2)
{
	struct socktab__kids *k = atomic_load(&tb2->kids);

	for (int i = 0; k && i < SOCKTAB__KID_SHARDS; i++) {
		struct socktab_sock **at = &k->s[i].head;
		bool live;

		pthread_mutex_lock(&k->s[i].lock);
		live = (tb2->kid_live >> i) & 1;
		if (live != (k->s[i].head != NULL))
			atomic_fetch_add(&n_violations, 1);
		for (struct socktab_sock *o = *at; o; at = &socktab__sk_bl(o)->next, o = *at)
			if (socktab__sk_bl(o)->pprev != at || socktab__sk_bl(o)->tb2 != tb2 ||
			    o->cold->kid != i + 1)
				atomic_fetch_add(&n_violations, 1);
		pthread_mutex_unlock(&k->s[i].lock);
	}
}

/* Every address bucket of the port (the listener's, and with --wildcard the children's, which
 * comes and goes), under the bhash lock. The listener keeps the port's bucket, @arg. */
static void *checker(void *arg)
{
	struct socktab__tb *tb = arg;
	struct socktab__bhead *head = socktab__bhash_head(net, LPORT);
	pthread_mutex_t *lock = socktab__bhead_lock(net->tab, head);

	socktab_thread_register();
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(lock);
		for (struct socktab__tb2 *tb2 = tb->tb2_list; tb2; tb2 = tb2->tb_next)
			check_bucket(tb2);
		pthread_mutex_unlock(lock);
		atomic_fetch_add(&n_checks, 1);
		/* Leave the lock to the makers' and the closer's first and last joins a while. */
		sched_yield();
	}
	socktab_thread_unregister();
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = stress_sin4("127.0.0.1", LPORT), la;
	struct socktab_net_params p;
	struct socktab_net_stats st;
	struct socktab_sock *b;
	pthread_t m[MAKERS], c, k, bd;
	struct timespec t0;
	uint64_t buckets;
	int bind_err;
	bool ok;

	if (argc > 1 && !strcmp(argv[1], "--wildcard")) {
		wildcard = true;
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	if (stress_parse_duration(argc, argv, "stress_kids", &duration))
		return 2;
	socktab_thread_register();
	socktab_net_params_init(&p);
	net = socktab_net_new(&p);
	if (!net)
		return 2;
	socktab_net_stats(net, &st);
	buckets = st.bind_buckets;
	listener = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	la = wildcard ? stress_sin4("0.0.0.0", LPORT) : a;
	if (!listener || socktab_bind(listener, (struct sockaddr *)&la, sizeof(la)) ||
	    socktab_listen(listener, 4096)) {
		fprintf(stderr, "stress_kids: cannot make a listener\n");
		return 2;
	}
	for (int i = 0; i < MAKERS; i++) {
		pthread_mutex_init(&hand[i].lock, NULL);
		hand[i].id = i;
		pthread_create(&m[i], NULL, maker, &hand[i]);
	}
	pthread_create(&c, NULL, closer, NULL);
	/* The listener keeps its bucket while the checker reads it. */
	pthread_create(&k, NULL, checker, socktab__sk_bl(listener)->tb2->tb);
	pthread_create(&bd, NULL, binder, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (atomic_load(&n_made) < MAX_KIDS &&
	       (!stress_elapsed(&t0, duration) ||
		(!enough_done() && !stress_elapsed(&t0, 5 * duration)))) {
		struct timespec nap = { 0, 10 * 1000 * 1000 };

		nanosleep(&nap, NULL);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < MAKERS; i++)
		pthread_join(m[i], NULL);
	pthread_join(c, NULL);
	pthread_join(k, NULL);
	pthread_join(bd, NULL);
	close_handed();
	socktab_close(listener);
	socktab_net_stats(net, &st);
	b = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	bind_err = b ? socktab_bind(b, (struct sockaddr *)&a, sizeof(a)) : -ENOMEM;
	ok = !n_bad && !n_violations && st.bind_buckets == buckets && !bind_err &&
	     n_made == n_closed && enough_done();
	printf("stress_kids: children=%llu closed=%llu checks=%llu binds=%llu violations=%llu "
	       "bad=%llu; buckets left: %lld; bind after: %d\n",
	       (unsigned long long)n_made, (unsigned long long)n_closed,
	       (unsigned long long)n_checks, (unsigned long long)n_binds,
	       (unsigned long long)n_violations, (unsigned long long)n_bad,
	       (long long)(st.bind_buckets - buckets), bind_err);
	return stress_finish(net, b, ok);
}
