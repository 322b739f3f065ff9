/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stress: reader threads look up while writer threads connect, establish and close (graceful,
 * leaving short TIME_WAIT entries that expire and get recycled, or abortive), and one thread
 * keeps replacing members of a SO_REUSEPORT listener group. Half the lookups take a reference,
 * half rely on an RCU read-side section alone (and read the socket's caller data inside it).
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

#include <arpa/inet.h>

#include "sock.h"
#include "socktab/socktab.h"
#include "stress.h"

#define SLOTS_PER_WRITER 48
#define MAX_WRITERS 8
#define MAX_OPS 20000000ull
#define GROUP_PORT 9000

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
static _Atomic int stop;
static _Atomic uint64_t n_lookups, n_hits, n_checked, n_ops, n_violations, n_connect_fail;
static _Atomic uint64_t n_listener_lookups, n_norefs;

static void violation(const char *what)
{
	atomic_fetch_add(&n_violations, 1);
	fprintf(stderr, "stress: VIOLATION: %s\n", what);
}

/* Four SO_REUSEPORT listeners on 127.0.0.1:9000, replaced one at a time: a lookup never misses. */
static struct stress_group group = { .port = GROUP_PORT, .seed = 0x5eed, .ops = &n_ops,
				     .violation = violation };

static void *writer(void *arg)
{
	int w = (int)(intptr_t)arg;
	uint64_t rng = 0x1234567ull * (uint64_t)(w + 1);
	struct linger lg = { 1, 0 };

	socktab_thread_register();
	while (!atomic_load(&stop) && atomic_load(&n_ops) < MAX_OPS) {
		int i = (int)(stress_rand(&rng) % SLOTS_PER_WRITER);
		struct slot *s = &slots[w * SLOTS_PER_WRITER + i];
		struct socktab_sock *sk = atomic_load(&s->sk);

		if (sk) {
			/* Mark absent, then close. */
			stress_write_begin(&s->seq);
			atomic_store(&s->present, 0);
			atomic_store(&s->sk, NULL);
			stress_write_end(&s->seq);
			if (stress_rand(&rng) & 1)
				socktab_setsockopt(sk, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			socktab_close(sk);
		} else {
			struct sockaddr_in dst = { .sin_family = AF_INET };
			struct sockaddr_in me;
			socklen_t len = sizeof(me);

			dst.sin_addr.s_addr = htonl(0x7f000001 + (uint32_t)(stress_rand(&rng) % 4));
			dst.sin_port = htons((uint16_t)(1000 + stress_rand(&rng) % 4));
			sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
			/* The connection's own state, written plainly as a stack writes it: a
			 * reader holding the socket without a reference reads it (see reader). */
			if (sk)
				*(uint64_t *)socktab_sock_priv(sk) = stress_rand(&rng) | 1;
			if (!sk || socktab_connect(sk, (struct sockaddr *)&dst, sizeof(dst))) {
				atomic_fetch_add(&n_connect_fail, 1);
				if (sk)
					socktab_close(sk);
				continue;
			}
			socktab_set_state(sk, SOCKTAB_TCP_ESTABLISHED);
			socktab_getsockname(sk, (struct sockaddr *)&me, &len);
			stress_write_begin(&s->seq);
			atomic_store(&s->raddr, dst.sin_addr.s_addr);
			atomic_store(&s->rport, dst.sin_port);
			atomic_store(&s->laddr, me.sin_addr.s_addr);
			atomic_store(&s->lport, me.sin_port);
			atomic_store(&s->sk, sk);
			atomic_store(&s->present, 1);
			stress_write_end(&s->seq);
		}
		atomic_fetch_add_explicit(&n_ops, 1, memory_order_relaxed);
	}
	socktab_thread_unregister();
	return NULL;
}

static void check_listener(uint64_t *rng)
{
	bool sure;
	struct socktab_sock *f = stress_group_lookup(&group, rng, &sure);

	atomic_fetch_add_explicit(&n_listener_lookups, 1, memory_order_relaxed);
	if (!f && sure) {
		violation("listener lookup missed while three listeners were up");
		return;
	}
	if (!f)
		return;
	/* The key, not the state: the churn thread may close it right after the lookup. */
	if (socktab__sk_num(f) != GROUP_PORT || socktab__sk_rcv_saddr(f) != htonl(0x7f000001)) {
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
		if (atomic_load(&group.ready) && stress_rand(&rng) % 8 == 0) {
			check_listener(&rng);
			continue;
		}
		struct slot *s = &slots[stress_rand(&rng) % (uint64_t)nslots];
		uint32_t s1 = stress_read_begin(&s->seq);
		int present = atomic_load(&s->present);
		uint32_t raddr = atomic_load(&s->raddr), laddr = atomic_load(&s->laddr);
		uint16_t rport = (uint16_t)atomic_load(&s->rport);
		uint16_t lport = (uint16_t)atomic_load(&s->lport);
		struct socktab_sock *expect = atomic_load(&s->sk);

		if (stress_rand(&rng) % 8 == 0) /* a tuple that is never connected: port 999 */
			rport = htons(999);
		/* Half the lookups take no reference: the RCU section alone keeps the socket,
		 * while writers close sockets concurrently. Its caller data must still be the
		 * connection's (a nonzero cookie), never a reused socket's: a socket freed and
		 * reused inside the section would also show as a data race under TSan. */
		bool norefs = stress_rand(&rng) & 1;
		struct socktab_sock *f;

		if (norefs) {
			socktab_rcu_read_lock();
			f = socktab_lookup_tcp4_rcu(net, raddr, rport, laddr, lport,
						    SOCKTAB_LOOPBACK_IFINDEX, 0);
			/* A socket (not a TIME_WAIT entry, which has no caller data and may die in
			 * the section) keeps its data even once closed: only reuse, which the
			 * section forbids, would clear it. */
			int st = f ? socktab_get_state(f) : 0;

			if (st > 0 && st != SOCKTAB_TCP_TIME_WAIT &&
			    !*(volatile uint64_t *)socktab_sock_priv(f))
				violation("an RCU-scoped lookup result lost its caller data");
			atomic_fetch_add_explicit(&n_norefs, 1, memory_order_relaxed);
		} else {
			f = socktab_lookup_tcp4(net, raddr, rport, laddr, lport,
						SOCKTAB_LOOPBACK_IFINDEX, 0);
		}
		bool st = stress_read_stable(&s->seq, s1);

		atomic_fetch_add_explicit(&n_lookups, 1, memory_order_relaxed);
		if (f) {
			atomic_fetch_add_explicit(&n_hits, 1, memory_order_relaxed);
			if (RD(f->addrpair) != ((uint64_t)raddr | (uint64_t)laddr << 32) ||
			    RD(f->portpair) != ((uint32_t)rport | (uint32_t)ntohs(lport) << 16))
				violation("lookup returned a socket whose key does not match");
			if (rport == htons(999))
				violation("lookup found a tuple nobody connected");
		}
		if (st && present && rport != htons(999)) {
			atomic_fetch_add_explicit(&n_checked, 1, memory_order_relaxed);
			if (f != expect)
				violation("a socket present for the whole lookup was missed");
		}
		if (norefs)
			socktab_rcu_read_unlock();
		else if (f)
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
	stress_net_params(&p);
	p.sock_priv_size = sizeof(uint64_t);
	net = socktab_net_new(&p);
	if (!net) {
		perror("socktab_net_new");
		return 1;
	}
	group.net = net;
	pthread_create(&th[2 * MAX_WRITERS], NULL, stress_group_churn, &group);
	for (int i = 0; i < nwriters; i++)
		pthread_create(&th[i], NULL, writer, (void *)(intptr_t)i);
	for (int i = 0; i < nreaders; i++)
		pthread_create(&th[nwriters + i], NULL, reader, (void *)(intptr_t)i);
	stress_sleep(duration);
	atomic_store(&stop, 1);
	for (int i = 0; i < nwriters + nreaders; i++)
		pthread_join(th[i], NULL);
	atomic_store(&group.stop, 1); /* readers are done: the listeners may go now */
	pthread_join(th[2 * MAX_WRITERS], NULL);
	/* Drain: close what is left; TIME_WAIT entries expire; every count must reach zero. */
	for (int i = 0; i < nwriters * SLOTS_PER_WRITER; i++)
		if (slots[i].sk)
			socktab_close(slots[i].sk);
	stress_sleep(0.05);
	socktab_net_tick(net);
	socktab_net_stats(net, &st);
	uint64_t leaked = st.established + st.time_wait + st.bind_buckets;

	printf("stress_ehash: ops=%llu lookups=%llu rcu_lookups=%llu listener_lookups=%llu "
	       "hits=%llu checked=%llu connect_fail=%llu tw_recycled=%llu violations=%llu "
	       "leaked=%llu\n",
	       (unsigned long long)n_ops, (unsigned long long)n_lookups,
	       (unsigned long long)n_norefs,
	       (unsigned long long)n_listener_lookups,
	       (unsigned long long)n_hits, (unsigned long long)n_checked,
	       (unsigned long long)n_connect_fail, (unsigned long long)st.tw_recycled,
	       (unsigned long long)n_violations, (unsigned long long)leaked);
	socktab_net_free(net);
	socktab_thread_unregister();
	int ok = n_violations == 0 && leaked == 0 && n_checked > 0 && n_norefs > 0;

	printf("%d passed, %d failed\n", ok, !ok);
	return ok ? 0 : 1;
}
