/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SO_INCOMING_CPU follows the traffic (R107, the kernel's sk_incoming_cpu_update()): every form
 * of the established lookup and of the UDP lookup gives a connection it finds the receiving CPU
 * of the looking-up thread; request and TIME_WAIT entries, listeners and unconnected UDP sockets
 * keep what they have; no reuseport count moves. The value's flag bits stay in step with it
 * (R106), for small and large CPU numbers, and when setsockopt() and receipts on other threads
 * write it at once.
 */
#include <pthread.h>
#include <sched.h>

#include "check.h"
#include "reuseport.h"

static int incpu(struct socktab_sock *sk)
{
	int v = -99;
	socklen_t n = sizeof(v);

	return socktab_getsockopt(sk, SOL_SOCKET, SO_INCOMING_CPU, &v, &n) ? -99 : v;
}

/* The SO_INCOMING_CPU bits of @sk's flag byte agree with the value in its cold part (white
 * box). */
static bool flags_agree(struct socktab_sock *sk)
{
	uint8_t f = atomic_load(&sk->tw_flags) & (SOCKTAB__SOCKF_INCPU | SOCKTAB__SOCKF_CPU);

	return f == socktab__incpu_flags(atomic_load(&sk->cold->incoming_cpu));
}

/* A listener on 127.0.0.1:@port naming CPU @cpu (-1: none), with SO_REUSEPORT if @rp. */
static struct socktab_sock *listener4(struct socktab_net *net, int port, int cpu, int rp)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	if (rp)
		check_setint(sk, SOL_SOCKET, SO_REUSEPORT, 1);
	if (cpu != -1)
		check_setint(sk, SOL_SOCKET, SO_INCOMING_CPU, cpu);
	if (check_bind4(sk, "127.0.0.1", port) || socktab_listen(sk, 128)) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

/* An established child of @ln from 127.0.0.2:@rport, made on receiving CPU @cpu. */
static struct socktab_sock *child4(struct socktab_sock *ln, int lport, int rport, int cpu)
{
	struct sockaddr_in l = check_sin("127.0.0.1", lport), r = check_sin("127.0.0.2", rport);
	struct socktab_sock *c;

	socktab_set_rx_cpu(cpu);
	c = socktab_sock_new_child(ln, (struct sockaddr *)&l, (struct sockaddr *)&r, sizeof(l),
				   SOCKTAB_LOOPBACK_IFINDEX, 0);
	socktab_set_rx_cpu(-1);
	if (c && socktab_set_state(c, SOCKTAB_TCP_ESTABLISHED)) {
		socktab_close(c);
		return NULL;
	}
	return c;
}

static struct socktab_tuple4 tuple4(int rport, int lport)
{
	return (struct socktab_tuple4){ check_ip4("127.0.0.2"), check_ip4("127.0.0.1"), htons((uint16_t)rport),
					htons((uint16_t)lport), SOCKTAB_LOOPBACK_IFINDEX, 0 };
}

/* R107: each IPv4 form of the established lookup sets the value to the thread's CPU; the
 * listener a miss falls back to keeps its own. */
TEST(tcp4_every_form)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *ln = listener4(net, 8800, 9, 0), *c, *got, *out[2];
	struct socktab_tuple4 k[2] = { tuple4(40000, 8800), tuple4(40001, 8800) };
	struct socktab_hit hits[2];
	uint32_t r = check_ip4("127.0.0.2"), l = check_ip4("127.0.0.1");
	int cpu = 0;

	CHECK(ln);
	c = child4(ln, 8800, 40000, 3);
	CHECK(c);
	CHECK_EQ(incpu(c), 3);
	CHECK(flags_agree(c));
#define NEXT() CHECK_EQ(socktab_set_rx_cpu(++cpu), 0)
	NEXT();
	got = socktab_lookup_tcp4(net, r, k[0].sport, l, k[0].dport, SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(got == c);
	socktab_sock_put(got);
	CHECK_EQ(incpu(c), cpu);
	NEXT();
	got = socktab_lookup_established4(net, r, k[0].sport, l, k[0].dport,
					  SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(got == c);
	socktab_sock_put(got);
	CHECK_EQ(incpu(c), cpu);
	NEXT();
	got = socktab_lookup_tcp(net, AF_INET, &r, k[0].sport, &l, k[0].dport,
				 SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(got == c);
	socktab_sock_put(got);
	CHECK_EQ(incpu(c), cpu);
	NEXT();
	socktab_rcu_read_lock();
	got = socktab_lookup_tcp4_rcu(net, r, k[0].sport, l, k[0].dport, SOCKTAB_LOOPBACK_IFINDEX,
				      0);
	socktab_rcu_read_unlock();
	CHECK(got == c);
	CHECK_EQ(incpu(c), cpu);
	NEXT();
	socktab_rcu_read_lock();
	got = socktab_lookup_established4_rcu(net, r, k[0].sport, l, k[0].dport,
					      SOCKTAB_LOOPBACK_IFINDEX, 0);
	socktab_rcu_read_unlock();
	CHECK(got == c);
	CHECK_EQ(incpu(c), cpu);
	/* The bursts: key 1 has no connection and finds the listener. */
	NEXT();
	CHECK_EQ(socktab_lookup_tcp_burst(net, k, 2, out, 0), 2);
	CHECK(out[0] == c && out[1] == ln);
	socktab_sock_put(out[0]);
	socktab_sock_put(out[1]);
	CHECK_EQ(incpu(c), cpu);
	NEXT();
	socktab_rcu_read_lock();
	CHECK_EQ(socktab_lookup_tcp_burst(net, k, 2, out, SOCKTAB_LOOKUP_NOREF), 2);
	socktab_rcu_read_unlock();
	CHECK_EQ(incpu(c), cpu);
	NEXT();
	CHECK_EQ(socktab_lookup_batch4(net, SOCKTAB_TCP, k, 2, hits, 0), 2);
	CHECK(hits[0].sk == c && hits[0].kind == SOCKTAB_HIT_ESTABLISHED);
	CHECK(hits[1].sk == ln && hits[1].kind == SOCKTAB_HIT_LISTENER);
	socktab_sock_put(hits[0].sk);
	socktab_sock_put(hits[1].sk);
	CHECK_EQ(incpu(c), cpu);
	NEXT();
	socktab_rcu_read_lock();
	CHECK_EQ(socktab_lookup_batch4(net, SOCKTAB_TCP, k, 2, hits,
				       SOCKTAB_LOOKUP_NOREF | SOCKTAB_LOOKUP_ESTABLISHED), 1);
	socktab_rcu_read_unlock();
	CHECK_EQ(incpu(c), cpu);
	CHECK(flags_agree(c));
	/* The listener was found by every one of them, and keeps its value. */
	CHECK_EQ(incpu(ln), 9);
	/* The same CPU again: nothing to store, nothing changes. */
	got = socktab_lookup_tcp4(net, r, k[0].sport, l, k[0].dport, SOCKTAB_LOOPBACK_IFINDEX, 0);
	socktab_sock_put(got);
	CHECK_EQ(incpu(c), cpu);
#undef NEXT
	socktab_set_rx_cpu(-1);
	socktab_close(c);
	socktab_close(ln);
	socktab_net_free(net);
}

/* R107, IPv6: the v6 forms and the IPv6 batch, and an IPv4 connection through the v6 form. */
TEST(tcp6_forms)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *ln = socktab_socket(net, SOCKTAB_TCP, AF_INET6), *c, *got;
	struct sockaddr_in6 la = check_sin6("::1", 8810), ra = check_sin6("::1", 41000);
	struct in6_addr a = check_ip6("::1");
	struct socktab_tuple6 k = { a, a, htons(41000), htons(8810), SOCKTAB_LOOPBACK_IFINDEX, 0 };
	struct socktab_hit hit;

	CHECK(ln);
	CHECK_EQ(check_bind6(ln, "::1", 8810), 0);
	CHECK_EQ(socktab_listen(ln, 16), 0);
	socktab_set_rx_cpu(0);
	c = socktab_sock_new_child(ln, (struct sockaddr *)&la, (struct sockaddr *)&ra, sizeof(la),
				   SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(c);
	CHECK_EQ(socktab_set_state(c, SOCKTAB_TCP_ESTABLISHED), 0);
	CHECK_EQ(incpu(c), 0);
	socktab_set_rx_cpu(1);
	got = socktab_lookup_tcp6(net, &a, htons(41000), &a, htons(8810), SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(got == c);
	socktab_sock_put(got);
	CHECK_EQ(incpu(c), 1);
	socktab_set_rx_cpu(2);
	socktab_rcu_read_lock();
	got = socktab_lookup_established6_rcu(net, &a, htons(41000), &a, htons(8810),
					      SOCKTAB_LOOPBACK_IFINDEX, 0);
	socktab_rcu_read_unlock();
	CHECK(got == c);
	CHECK_EQ(incpu(c), 2);
	socktab_set_rx_cpu(3);
	CHECK_EQ(socktab_lookup_batch6(net, SOCKTAB_TCP, &k, 1, &hit, 0), 1);
	CHECK(hit.sk == c);
	socktab_sock_put(hit.sk);
	CHECK_EQ(incpu(c), 3);
	CHECK_EQ(incpu(ln), -1);
	socktab_set_rx_cpu(-1);
	socktab_close(c);
	socktab_close(ln);
	socktab_net_free(net);
}

/* R107: request and TIME_WAIT entries have no SO_INCOMING_CPU: a lookup that finds one writes
 * nothing (a TIME_WAIT entry's flag byte keeps its substate and timestamp bit). */
TEST(entries_left_alone)
{
	struct socktab_net_params p;
	struct socktab_net *net;
	struct socktab_sock *ln, *c, *req, *got;
	struct sockaddr_in l = check_sin("127.0.0.1", 8820), r = check_sin("127.0.0.2", 42001);
	uint32_t rem = check_ip4("127.0.0.2"), loc = check_ip4("127.0.0.1");
	uint8_t f;

	socktab_net_params_init(&p);
	p.tw_len_ms = 600000;
	net = socktab_net_new(&p);
	ln = listener4(net, 8820, 4, 0);
	CHECK(ln);
	req = socktab_req_new(ln, (struct sockaddr *)&l, (struct sockaddr *)&r, sizeof(l),
			      SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(req);
	c = child4(ln, 8820, 42000, 5);
	CHECK(c);
	CHECK_EQ(socktab_set_state(c, SOCKTAB_TCP_FIN_WAIT2), 0);
	CHECK_EQ(socktab_set_state(c, SOCKTAB_TCP_TIME_WAIT), 0);
	for (int cpu = 0; cpu < 40; cpu += 13) {
		socktab_set_rx_cpu(cpu);
		got = socktab_lookup_tcp4(net, rem, htons(42001), loc, htons(8820),
					  SOCKTAB_LOOPBACK_IFINDEX, 0);
		CHECK(got == req);
		f = atomic_load(&got->tw_flags);
		socktab_sock_put(got);
		CHECK_EQ(f, 0);
		got = socktab_lookup_tcp4(net, rem, htons(42000), loc, htons(8820),
					  SOCKTAB_LOOPBACK_IFINDEX, 0);
		CHECK(got && socktab_sock_tw(got));
		f = atomic_load(&got->tw_flags);
		CHECK_EQ(f & ~(SOCKTAB__TWF_SUBSTATE | SOCKTAB__TWF_TS | SOCKTAB__TWF_ONLIST), 0);
		CHECK_EQ(socktab_tw_substate(socktab_sock_tw(got)), SOCKTAB_TCP_TIME_WAIT);
		socktab_sock_put(got);
	}
	CHECK_EQ(incpu(ln), 4);
	socktab_set_rx_cpu(-1);
	socktab_req_drop(req);
	socktab_sock_put(req);
	socktab_close(ln);
	socktab_net_free(net);
}

/* R106, R107: the flag bits follow the value through receipts and setsockopt(), for CPUs
 * written in the line (0 to SOCKTAB__SOCKF_CPU_MAX) and above; the socket's other flags stay. */
TEST(flag_bits)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *ln = listener4(net, 8830, -1, 0), *c, *got;
	static const int cpus[] = { 1000, 7, 0, SOCKTAB__SOCKF_CPU_MAX,
				    SOCKTAB__SOCKF_CPU_MAX + 1, 65535, 2147483647, 1 };
	uint32_t r = check_ip4("127.0.0.2"), l = check_ip4("127.0.0.1");
	uint8_t other;

	CHECK(ln);
	c = child4(ln, 8830, 43000, 2);
	CHECK(c);
	other = atomic_load(&c->tw_flags) & ~(SOCKTAB__SOCKF_INCPU | SOCKTAB__SOCKF_CPU);
	CHECK(other & SOCKTAB__SOCKF_ACTIVE); /* a child of a listener (R104) */
	CHECK_EQ(check_setint(c, SOL_SOCKET, SO_INCOMING_CPU, -1), 0);
	CHECK_EQ(atomic_load(&c->tw_flags) & SOCKTAB__SOCKF_INCPU, 0);
	for (size_t i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++) {
		CHECK_EQ(socktab_set_rx_cpu(cpus[i]), 0);
		got = socktab_lookup_established4(net, r, htons(43000), l, htons(8830),
						  SOCKTAB_LOOPBACK_IFINDEX, 0);
		CHECK(got == c);
		socktab_sock_put(got);
		CHECK_EQ(incpu(c), cpus[i]);
		CHECK(atomic_load(&c->tw_flags) & SOCKTAB__SOCKF_INCPU); /* -1 to a CPU: set */
		CHECK(flags_agree(c));
		CHECK_EQ(atomic_load(&c->tw_flags) & ~(SOCKTAB__SOCKF_INCPU | SOCKTAB__SOCKF_CPU),
			 other);
		/* setsockopt() in between: a value below 0, then one that the next receipt
		 * overwrites */
		CHECK_EQ(check_setint(c, SOL_SOCKET, SO_INCOMING_CPU, i % 2 ? -5 : 12), 0);
		CHECK_EQ(incpu(c), i % 2 ? -5 : 12);
		CHECK(flags_agree(c));
	}
	socktab_set_rx_cpu(-1);
	socktab_close(c);
	socktab_close(ln);
	socktab_net_free(net);
}

/* R107: a thread that names no CPU gives the one it runs on. */
TEST(default_cpu)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *ln = listener4(net, 8840, -1, 0), *c, *got;
	cpu_set_t one, old;
	int here;

	CHECK(ln);
	c = child4(ln, 8840, 44000, 77);
	CHECK(c);
	CHECK_EQ(sched_getaffinity(0, sizeof(old), &old), 0);
	here = sched_getcpu();
	CHECK(here >= 0);
	CPU_ZERO(&one);
	CPU_SET(here, &one);
	CHECK_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
	CHECK_EQ(socktab__rx_cpu_now(), here);
	CHECK_EQ(socktab_set_rx_cpu(-1), 0);
	got = socktab_lookup_tcp4(net, check_ip4("127.0.0.2"), htons(44000), check_ip4("127.0.0.1"),
				  htons(8840), SOCKTAB_LOOPBACK_IFINDEX, 0);
	sched_setaffinity(0, sizeof(old), &old);
	CHECK(got == c);
	socktab_sock_put(got);
	CHECK_EQ(incpu(c), here);
	socktab_close(c);
	socktab_close(ln);
	socktab_net_free(net);
}

/* R107: a connection's receipts move no reuseport count: the children of a group's member are
 * in no group. */
TEST(group_count_untouched)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *m0 = listener4(net, 8850, -1, 1), *m1 = listener4(net, 8850, -1, 1);
	struct socktab_sock *c, *got;
	struct socktab__reuseport *g;

	CHECK(m0 && m1);
	g = atomic_load(&m0->cold->reuseport_cb);
	CHECK(g && g == atomic_load(&m1->cold->reuseport_cb));
	c = child4(m0, 8850, 45000, 1);
	CHECK(c);
	CHECK_EQ(check_setint(c, SOL_SOCKET, SO_INCOMING_CPU, -1), 0);
	CHECK_EQ(atomic_load(&g->incoming_cpu), 0);
	socktab_set_rx_cpu(0);
	got = socktab_lookup_tcp4(net, check_ip4("127.0.0.2"), htons(45000), check_ip4("127.0.0.1"),
				  htons(8850), SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(got == c);
	socktab_sock_put(got);
	CHECK_EQ(incpu(c), 0);
	CHECK_EQ(atomic_load(&g->incoming_cpu), 0);
	CHECK_EQ(incpu(m0), -1);
	CHECK_EQ(incpu(m1), -1);
	socktab_set_rx_cpu(-1);
	socktab_close(c);
	socktab_close(m0);
	socktab_close(m1);
	socktab_net_free(net);
}

static struct socktab_sock *lookup_udp(struct socktab_net *net, const char *src, int sport,
				       int dport)
{
	struct socktab_sock *sk =
		socktab_lookup_udp4(net, check_ip4(src), htons((uint16_t)sport), check_ip4("127.0.0.1"),
				    htons((uint16_t)dport), SOCKTAB_LOOPBACK_IFINDEX, 0);

	socktab_sock_put(sk);
	return sk;
}

/* R107: a connected UDP socket takes the CPU of each datagram, found through hash4 or by
 * scoring, single or batch; an unconnected one keeps its value. */
TEST(udp)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *u = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	struct socktab_sock *w = socktab_socket(net, SOCKTAB_UDP, AF_INET), *got;
	struct socktab_tuple4 k[2] = {
		{ check_ip4("127.0.0.2"), check_ip4("127.0.0.1"), htons(46000), htons(8860),
		  SOCKTAB_LOOPBACK_IFINDEX, 0 },
		{ check_ip4("127.0.0.3"), check_ip4("127.0.0.1"), htons(46001), htons(8861),
		  SOCKTAB_LOOPBACK_IFINDEX, 0 },
	};
	struct socktab_hit hits[2];

	CHECK(u && w);
	CHECK_EQ(check_bind4(u, "127.0.0.1", 8860), 0);
	CHECK_EQ(check_connect4(u, "127.0.0.2", 46000), 0);
	CHECK_EQ(check_bind4(w, "0.0.0.0", 8861), 0);
	CHECK_EQ(check_setint(w, SOL_SOCKET, SO_INCOMING_CPU, 9), 0);
	CHECK_EQ(check_setint(u, SOL_SOCKET, SO_INCOMING_CPU, 9), 0);
	CHECK_EQ(incpu(u), 9);
	socktab_set_rx_cpu(1);
	CHECK(lookup_udp(net, "127.0.0.2", 46000, 8860) == u);
	CHECK_EQ(incpu(u), 1);
	CHECK(lookup_udp(net, "127.0.0.3", 46001, 8861) == w);
	CHECK_EQ(incpu(w), 9);
	/* hash4 off: the connected socket wins the scoring */
	CHECK_EQ(socktab_net_set_udp_hash4(net, 0), 0);
	socktab_set_rx_cpu(20);
	socktab_rcu_read_lock();
	got = socktab_lookup_udp4_rcu(net, check_ip4("127.0.0.2"), htons(46000), check_ip4("127.0.0.1"),
				      htons(8860), SOCKTAB_LOOPBACK_IFINDEX, 0);
	socktab_rcu_read_unlock();
	CHECK(got == u);
	CHECK_EQ(incpu(u), 20);
	CHECK(flags_agree(u));
	CHECK_EQ(socktab_net_set_udp_hash4(net, 1), 0);
	socktab_set_rx_cpu(4);
	CHECK_EQ(socktab_lookup_batch4(net, SOCKTAB_UDP, k, 2, hits, 0), 2);
	CHECK(hits[0].sk == u && hits[0].kind == SOCKTAB_HIT_UDP_CONNECTED);
	CHECK(hits[1].sk == w && hits[1].kind == SOCKTAB_HIT_UDP);
	socktab_sock_put(hits[0].sk);
	socktab_sock_put(hits[1].sk);
	CHECK_EQ(incpu(u), 4);
	CHECK_EQ(incpu(w), 9);
	/* Disconnected (it keeps the address and port it bound): left alone from then on. */
	CHECK_EQ(socktab_connect(u, &(struct sockaddr){ .sa_family = AF_UNSPEC },
				 sizeof(struct sockaddr)),
		 0);
	socktab_set_rx_cpu(5);
	CHECK(lookup_udp(net, "127.0.0.2", 46000, 8860) == u);
	CHECK_EQ(incpu(u), 4);
	socktab_set_rx_cpu(-1);
	socktab_close(u);
	socktab_close(w);
	socktab_net_free(net);
}

/* setsockopt() on one thread, receipts on CPUs 3 and 300 on two others, all at once: once they
 * stop, the flag bits agree with the value, and the value is one that a writer wrote. */
struct racer {
	struct socktab_net *net;
	int cpu;
	_Atomic int *stop;
	_Atomic long lookups;
};

static void *race_lookups(void *arg)
{
	struct racer *r = arg;
	uint32_t rem = check_ip4("127.0.0.2"), loc = check_ip4("127.0.0.1");

	socktab_thread_register();
	socktab_set_rx_cpu(r->cpu);
	while (!atomic_load(r->stop)) {
		socktab_rcu_read_lock();
		(void)socktab_lookup_established4_rcu(r->net, rem, htons(47000), loc, htons(8870),
						      SOCKTAB_LOOPBACK_IFINDEX, 0);
		socktab_rcu_read_unlock();
		atomic_fetch_add(&r->lookups, 1);
	}
	socktab_thread_unregister();
	return NULL;
}

TEST(concurrent_writers)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *ln = listener4(net, 8870, -1, 0), *c;
	static const int vals[] = { -7, 2, 40000, -1, SOCKTAB__SOCKF_CPU_MAX,
				    SOCKTAB__SOCKF_CPU_MAX + 1 };
	_Atomic int stop = 0;
	struct racer rs[2] = { { net, 3, &stop, 0 }, { net, 300, &stop, 0 } };
	pthread_t th[2];
	int v, last;

	CHECK(ln);
	c = child4(ln, 8870, 47000, 0);
	CHECK(c);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, race_lookups, &rs[i]), 0);
	/* 20000 writes at least, and until each reader has looked up 20000 times. */
	for (int i = 0;; i++) {
		check_setint(c, SOL_SOCKET, SO_INCOMING_CPU, vals[i % 6]);
		if (i % 1000 == 0)
			sched_yield();
		if (i >= 20000 && atomic_load(&rs[0].lookups) >= 20000 &&
		    atomic_load(&rs[1].lookups) >= 20000) {
			last = vals[i % 6];
			break;
		}
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK(flags_agree(c));
	v = incpu(c);
	CHECK(v == 3 || v == 300 || v == last);
	socktab_close(c);
	socktab_close(ln);
	socktab_net_free(net);
}

CHECK_MAIN(tcp4_every_form, tcp6_forms, entries_left_alone, flag_bits, default_cpu,
	   group_count_untouched, udp, concurrent_writers)
