/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab_thread_counts(): in a library built with -Dcontention_counters=true, a lookup of every
 * form that takes no reference (established, listener, UDP; single, batch, mixed by protocol)
 * takes no lock, does no atomic read-modify-write and stores to no atomic object, and a
 * referenced one does exactly the two read-modify-writes of its reference; the control calls
 * around them do count (so a counter stuck at zero fails). In a build without counting the call
 * answers -ENOTSUP and leaves its argument alone; NULL is -EINVAL either way. And
 * socktab_rcu_stats(): callbacks queued, run (never more than queued) and grace-period waits.
 */
#include <pthread.h>

#include "check.h"

#define NCONN 64

struct fixture {
	struct socktab_net *net;
	struct socktab_sock *ln, *conn[NCONN], *udp;
};

/* A listener on 127.0.0.1:80 with NCONN established children from 10.0.0.i:1000 + i, and a UDP
 * socket bound to 127.0.0.1:53. */
static void setup(struct fixture *f)
{
	struct sockaddr_in la = check_sin("127.0.0.1", 80);

	memset(f, 0, sizeof(*f));
	f->net = check_net(32768, 60999, NULL);
	CHECK(f->net != NULL);
	f->ln = socktab_socket(f->net, SOCKTAB_TCP, AF_INET);
	CHECK(f->ln != NULL);
	CHECK_EQ(check_bind4(f->ln, "127.0.0.1", 80), 0);
	CHECK_EQ(socktab_listen(f->ln, 128), 0);
	for (int i = 0; i < NCONN; i++) {
		struct sockaddr_in ra = check_sin("10.0.0.0", 1000 + i);

		ra.sin_addr.s_addr = htonl(0x0a000000u + (uint32_t)i + 1);
		f->conn[i] = socktab_sock_new_child(f->ln, (struct sockaddr *)&la,
						    (struct sockaddr *)&ra, sizeof(ra),
						    SOCKTAB_LOOPBACK_IFINDEX, 0);
		CHECK(f->conn[i] != NULL);
		CHECK_EQ(socktab_set_state(f->conn[i], SOCKTAB_TCP_ESTABLISHED), 0);
	}
	f->udp = socktab_socket(f->net, SOCKTAB_UDP, AF_INET);
	CHECK(f->udp != NULL);
	CHECK_EQ(check_bind4(f->udp, "127.0.0.1", 53), 0);
}

static void teardown(struct fixture *f)
{
	for (int i = 0; i < NCONN; i++)
		socktab_close(f->conn[i]);
	socktab_close(f->ln);
	socktab_close(f->udp);
	socktab_net_free(f->net);
}

static struct socktab_tuple4 key(int i, uint16_t dport)
{
	return (struct socktab_tuple4){ htonl(0x0a000000u + (uint32_t)i + 1), check_ip4("127.0.0.1"),
					htons((uint16_t)(1000 + i)), htons(dport),
					SOCKTAB_LOOPBACK_IFINDEX, 0 };
}

/* The calling thread's counts since @c0 (all ones if they cannot be read: every check fails). */
static struct socktab_thread_counts since(const struct socktab_thread_counts *c0)
{
	struct socktab_thread_counts c1, d;

	if (socktab_thread_counts(&c1)) {
		memset(&d, 0xff, sizeof(d));
		return d;
	}
	d.locks = c1.locks - c0->locks;
	d.locks_contended = c1.locks_contended - c0->locks_contended;
	d.atomic_rmw = c1.atomic_rmw - c0->atomic_rmw;
	d.atomic_stores = c1.atomic_stores - c0->atomic_stores;
	d.lines_taken = c1.lines_taken - c0->lines_taken;
	return d;
}

TEST(counts_errors)
{
	struct socktab_thread_counts c;

	CHECK_EQ(socktab_thread_counts(NULL), -EINVAL);
	memset(&c, 0x5a, sizeof(c));
	int err = socktab_thread_counts(&c);

	if (err == -ENOTSUP) {
		/* Not a counting build: nothing written. */
		CHECK_EQ(c.locks, 0x5a5a5a5a5a5a5a5aull);
		CHECK_EQ(c.reserved[2], 0x5a5a5a5a5a5a5a5aull);
		return;
	}
	CHECK_EQ(err, 0);
	CHECK_EQ(c.reserved[0], 0);
	CHECK_EQ(c.reserved[2], 0);
}

TEST(lookups_write_nothing)
{
	struct socktab_thread_counts c0, d;
	struct socktab_tuple4 k[NCONN + 2];
	struct socktab_hit out[NCONN + 2];
	struct fixture f;
	int found = 0;

	if (socktab_thread_counts(&c0) == -ENOTSUP)
		return; /* counted only with -Dcontention_counters=true */
	/* Every connection takes this thread's receiving CPU when made, so the lookups below
	 * find it unchanged (a flow that moves CPU is written once, as in the kernel: R107). */
	CHECK_EQ(socktab_set_rx_cpu(0), 0);
	setup(&f);
	for (int i = 0; i < NCONN; i++)
		k[i] = key(i, 80);
	k[NCONN] = key(NCONN + 5, 80); /* a SYN: the listener */
	k[NCONN + 1] = key(NCONN + 6, 81); /* nothing */

	socktab_rcu_read_lock();
	CHECK_EQ(socktab_thread_counts(&c0), 0);
	for (int i = 0; i < NCONN + 2; i++) {
		found += socktab_lookup_tcp4_rcu(f.net, k[i].saddr, k[i].sport, k[i].daddr,
						 k[i].dport, k[i].dif, 0) != NULL;
		found += socktab_lookup_established4_rcu(f.net, k[i].saddr, k[i].sport,
							 k[i].daddr, k[i].dport, k[i].dif,
							 0) != NULL;
		found += socktab_lookup_one4(f.net, SOCKTAB_TCP, &k[i], &out[0],
					     SOCKTAB_LOOKUP_NOREF) == 1;
	}
	found += socktab_lookup_batch4(f.net, SOCKTAB_TCP, k, NCONN + 2, out,
				       SOCKTAB_LOOKUP_NOREF);
	struct socktab_tuple4 u = { check_ip4("10.9.9.9"), check_ip4("127.0.0.1"), htons(4000),
				    htons(53), SOCKTAB_LOOPBACK_IFINDEX, 0 };

	found += socktab_lookup_udp4_rcu(f.net, u.saddr, u.sport, u.daddr, u.dport, u.dif, 0) !=
		 NULL;
	found += socktab_lookup_batch4(f.net, SOCKTAB_UDP, &u, 1, out, SOCKTAB_LOOKUP_NOREF);
	d = since(&c0);
	socktab_rcu_read_unlock();
	/* tcp4 finds all but the last, established the connections, one4 as tcp4; the batch as
	 * one4; UDP twice. */
	CHECK_EQ(found, (NCONN + 1) + NCONN + (NCONN + 1) + (NCONN + 1) + 2);
	CHECK_EQ(d.locks, 0);
	CHECK_EQ(d.atomic_rmw, 0);
	CHECK_EQ(d.atomic_stores, 0);
	CHECK_EQ(d.lines_taken, 0);

	/* A referenced lookup: the reference's increment, then the put's decrement. */
	CHECK_EQ(socktab_thread_counts(&c0), 0);
	struct socktab_sock *sk = socktab_lookup_established4(f.net, k[3].saddr, k[3].sport,
							     k[3].daddr, k[3].dport, k[3].dif, 0);

	CHECK(sk == f.conn[3]);
	socktab_sock_put(sk);
	d = since(&c0);
	CHECK_EQ(d.locks, 0);
	CHECK_EQ(d.atomic_rmw, 2);
	CHECK_EQ(d.atomic_stores, 0);

	/* The control: a connect() locks and stores. */
	struct socktab_sock *c = socktab_socket(f.net, SOCKTAB_TCP, AF_INET);

	CHECK(c != NULL);
	CHECK_EQ(socktab_thread_counts(&c0), 0);
	CHECK_EQ(check_connect4(c, "127.0.0.1", 5000), 0);
	d = since(&c0);
	CHECK(d.locks >= 3);
	CHECK(d.atomic_stores > 0);
	socktab_close(c);
	teardown(&f);
	CHECK_EQ(socktab_set_rx_cpu(-1), 0);
}

struct closer {
	struct socktab_sock **sk;
	int n;
	struct socktab_thread_counts d;
};

static void *close_them(void *arg)
{
	struct closer *cl = arg;
	struct socktab_thread_counts c0;

	socktab_thread_register();
	if (socktab_thread_counts(&c0) == 0) {
		for (int i = 0; i < cl->n; i++)
			socktab_close(cl->sk[i]);
		cl->d = since(&c0);
	}
	socktab_thread_unregister();
	return NULL;
}

/* lines_taken: a thread that closes sockets another thread made and bound writes lines that
 * thread wrote last (the socket locks, the bind buckets): at least one per socket; the thread
 * that made them, closing as many of its own, takes almost none (a counter that counted every
 * write would give it as many as the other). */
TEST(lines_taken_across_threads)
{
	struct socktab_thread_counts c0;
	struct socktab_sock *sk[32];
	struct closer cl = { sk, 16, { 0 } };
	pthread_t th;

	if (socktab_thread_counts(&c0) == -ENOTSUP)
		return;
	struct socktab_net *net = check_net(32768, 60999, NULL);

	CHECK(net != NULL);
	for (int i = 0; i < 32; i++) {
		sk[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK(sk[i] != NULL);
		CHECK_EQ(check_bind4(sk[i], "127.0.0.1", 7000 + i), 0);
	}
	CHECK_EQ(pthread_create(&th, NULL, close_them, &cl), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	CHECK(cl.d.locks >= 16);
	CHECK(cl.d.lines_taken >= 16);
	CHECK(cl.d.lines_taken <= cl.d.locks + cl.d.atomic_rmw + cl.d.atomic_stores);
	/* The same closes by the thread that made the sockets. */
	struct closer own = { sk + 16, 16, { 0 } };

	CHECK_EQ(socktab_thread_counts(&c0), 0);
	for (int i = 0; i < own.n; i++)
		socktab_close(own.sk[i]);
	own.d = since(&c0);
	printf("lines_taken_across_threads: 16 closes take %llu lines in another thread, %llu in "
	       "their own\n", (unsigned long long)cl.d.lines_taken,
	       (unsigned long long)own.d.lines_taken);
	CHECK(own.d.locks >= 16);
	CHECK(own.d.lines_taken * 4 < cl.d.lines_taken);
	socktab_net_free(net);
}

/* socktab_rcu_stats(): closing sockets queues reclamation callbacks (a batch per 64 of a pool),
 * a net's free waits for grace periods and for every callback, and no callback runs twice. */
TEST(rcu_stats_count)
{
	struct socktab_rcu_stats a, b;
	struct socktab_net *net = check_net(32768, 60999, NULL);

	CHECK_EQ(socktab_rcu_stats(NULL), -EINVAL);
	CHECK(net != NULL);
	CHECK_EQ(socktab_rcu_stats(&a), 0);
	CHECK(a.callbacks_run <= a.callbacks_queued);
	for (int i = 0; i < 200; i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

		CHECK(sk != NULL);
		CHECK_EQ(socktab_close(sk), 0);
	}
	CHECK_EQ(socktab_rcu_stats(&b), 0);
	CHECK(b.callbacks_queued >= a.callbacks_queued + 3); /* 200 sockets: three full batches */
	socktab_net_free(net);
	CHECK_EQ(socktab_rcu_stats(&a), 0);
	CHECK(a.waits >= b.waits + 2);                    /* a grace period, then the callbacks */
	CHECK(a.callbacks_run >= b.callbacks_queued);    /* every callback queued before ran */
	CHECK(a.callbacks_run <= a.callbacks_queued);
	CHECK_EQ(a.reserved[0], 0);
	CHECK_EQ(a.reserved[4], 0);
}

CHECK_MAIN(counts_errors, lookups_write_nothing, lines_taken_across_threads, rcu_stats_count)
