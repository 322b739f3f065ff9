/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SO_INCOMING_CPU (R105-R107): the option's values and errors, the per-thread receiving CPU, the
 * reuseport group's count of members that name a CPU (join, set, unset, leave, growth), and the
 * lookups it changes: the listener and UDP score bonus, the group's preference, connected UDP
 * members, and a child's CPU.
 */
#include <pthread.h>
#include <sched.h>

#include "check.h"
#include "reuseport.h"

static int getint(struct socktab_sock *sk, int *v)
{
	socklen_t n = sizeof(*v);

	return socktab_getsockopt(sk, SOL_SOCKET, SO_INCOMING_CPU, v, &n);
}

static int incpu(struct socktab_sock *sk)
{
	int v = -99;

	return getint(sk, &v) ? -99 : v;
}

/* The group count of @sk's reuseport group, or -1 when it is in none (white box). */
static int group_count(struct socktab_sock *sk)
{
	struct socktab__reuseport *g = atomic_load(&sk->cold->reuseport_cb);

	return g ? (int)atomic_load(&g->incoming_cpu) : -1;
}

static struct socktab_sock *listener4(struct socktab_net *net, int port, int cpu)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	check_setint(sk, SOL_SOCKET, SO_REUSEPORT, 1);
	if (cpu != -1)
		check_setint(sk, SOL_SOCKET, SO_INCOMING_CPU, cpu);
	if (check_bind4(sk, "127.0.0.1", port) || socktab_listen(sk, 128)) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

static struct socktab_sock *lookup_tcp(struct socktab_net *net, int sport, int dport)
{
	struct socktab_sock *sk =
		socktab_lookup_tcp4(net, check_ip4("127.0.0.1"), htons((uint16_t)sport), check_ip4("127.0.0.1"),
				    htons((uint16_t)dport), SOCKTAB_LOOPBACK_IFINDEX, 0);

	socktab_sock_put(sk); /* the pointer is only compared; the sockets stay open */
	return sk;
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

/* R105: any int is kept and read back; fewer than 4 bytes is -EINVAL and changes nothing. */
TEST(option_values)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *t = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *u = socktab_socket(net, SOCKTAB_UDP, AF_INET6);
	static const int vals[] = { 0, 1, 5, 100000, -5, -1, -2147483647 - 1, 2147483647 };
	unsigned char two[2] = { 1, 0 };
	char big[8];
	int v;

	CHECK_EQ(incpu(t), -1);
	CHECK_EQ(incpu(u), -1);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		CHECK_EQ(check_setint(t, SOL_SOCKET, SO_INCOMING_CPU, vals[i]), 0);
		CHECK_EQ(incpu(t), vals[i]);
		CHECK_EQ(check_setint(u, SOL_SOCKET, SO_INCOMING_CPU, vals[i]), 0);
		CHECK_EQ(incpu(u), vals[i]);
	}
	CHECK_EQ(check_setint(t, SOL_SOCKET, SO_INCOMING_CPU, 3), 0);
	CHECK_EQ(socktab_setsockopt(t, SOL_SOCKET, SO_INCOMING_CPU, two, sizeof(two)), -EINVAL);
	CHECK_EQ(socktab_setsockopt(t, SOL_SOCKET, SO_INCOMING_CPU, NULL, 4), -EINVAL);
	CHECK_EQ(incpu(t), 3);
	v = 9;
	memcpy(big, &v, sizeof(v));
	memset(big + 4, 0x7f, 4);
	CHECK_EQ(socktab_setsockopt(t, SOL_SOCKET, SO_INCOMING_CPU, big, sizeof(big)), 0);
	CHECK_EQ(incpu(t), 9);
	CHECK_EQ(check_setint(NULL, SOL_SOCKET, SO_INCOMING_CPU, 1), -EINVAL);
	socktab_close(t);
	socktab_close(u);
	socktab_net_free(net);
}

static void *other_thread(void *arg)
{
	int *out = arg;

	out[0] = socktab_get_rx_cpu();   /* the default: this thread's CPU */
	out[1] = sched_getcpu();
	socktab_set_rx_cpu(11);          /* never seen by the main thread */
	out[2] = socktab_get_rx_cpu();
	return NULL;
}

/* socktab_set_rx_cpu(): per thread; -1 is the scheduler's CPU; below -1 is refused. */
TEST(rx_cpu_per_thread)
{
	pthread_t th;
	cpu_set_t one, old;
	int got[3];

	/* Pin this thread so that sched_getcpu() cannot change between two reads. */
	CHECK_EQ(sched_getaffinity(0, sizeof(old), &old), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	CHECK_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
	CHECK_EQ(socktab_set_rx_cpu(-1), 0);
	CHECK_EQ(socktab_get_rx_cpu(), sched_getcpu());
	CHECK_EQ(socktab_set_rx_cpu(5), 0);
	CHECK_EQ(socktab_get_rx_cpu(), 5);
	CHECK_EQ(socktab_set_rx_cpu(-2), -EINVAL);
	CHECK_EQ(socktab_set_rx_cpu(-2147483647 - 1), -EINVAL);
	CHECK_EQ(socktab_get_rx_cpu(), 5); /* unchanged */
	CHECK_EQ(pthread_create(&th, NULL, other_thread, got), 0);
	pthread_join(th, NULL);
	CHECK_EQ(got[0], got[1]);
	CHECK_EQ(got[2], 11);
	CHECK_EQ(socktab_get_rx_cpu(), 5);
	CHECK_EQ(socktab_set_rx_cpu(-1), 0);
	CHECK_EQ(socktab_get_rx_cpu(), sched_getcpu());
	sched_setaffinity(0, sizeof(old), &old);
}

/* R106: the group counts members naming a CPU on join, set, unset and leave, across growth. */
TEST(group_counts)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *m[140];

	m[0] = listener4(net, 8200, 3); /* set before listen: counted when the group starts */
	CHECK(m[0]);
	CHECK_EQ(group_count(m[0]), 1);
	m[1] = listener4(net, 8200, -1);
	CHECK(m[1]);
	CHECK_EQ(group_count(m[1]), 1);
	CHECK_EQ(check_setint(m[1], SOL_SOCKET, SO_INCOMING_CPU, 0), 0); /* set in the group */
	CHECK_EQ(group_count(m[0]), 2);
	CHECK_EQ(check_setint(m[1], SOL_SOCKET, SO_INCOMING_CPU, 7), 0); /* CPU to CPU: no change */
	CHECK_EQ(group_count(m[0]), 2);
	CHECK_EQ(check_setint(m[1], SOL_SOCKET, SO_INCOMING_CPU, -3), 0); /* unset */
	CHECK_EQ(group_count(m[0]), 1);
	CHECK_EQ(check_setint(m[1], SOL_SOCKET, SO_INCOMING_CPU, -1), 0); /* none to none */
	CHECK_EQ(group_count(m[0]), 1);
	/* Past 128 members the group is copied: the count goes with it. */
	for (int i = 2; i < 140; i++) {
		m[i] = listener4(net, 8200, i % 2 ? 1 : -1);
		CHECK(m[i]);
	}
	CHECK_EQ(group_count(m[0]), 1 + 69);
	CHECK_EQ(group_count(m[139]), 70);
	/* Leaving takes the member's count with it; a member without a CPU takes none. */
	socktab_close(m[0]);
	CHECK_EQ(group_count(m[1]), 69);
	socktab_close(m[1]);
	CHECK_EQ(group_count(m[2]), 69);
	for (int i = 2; i < 140; i++)
		socktab_close(m[i]);
	socktab_net_free(net);
}

/* R35, R106: a group hands everything to a member on the receiving CPU; with none there, or
 * with no member naming a CPU, the pick is the hash's. */
TEST(group_prefers_cpu)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *m[4], *plain[400];

	for (int i = 0; i < 4; i++) {
		m[i] = listener4(net, 8300, -1);
		CHECK(m[i]);
	}
	for (int s = 0; s < 400; s++)
		plain[s] = lookup_tcp(net, 20000 + s, 8300);
	CHECK_EQ(check_setint(m[2], SOL_SOCKET, SO_INCOMING_CPU, 6), 0);
	CHECK_EQ(socktab_set_rx_cpu(6), 0);
	for (int s = 0; s < 400; s++)
		CHECK(lookup_tcp(net, 20000 + s, 8300) == m[2]);
	/* Another CPU: no member on it, so the first the hash's walk meets, i.e. the hash pick. */
	CHECK_EQ(socktab_set_rx_cpu(7), 0);
	for (int s = 0; s < 400; s++)
		CHECK(lookup_tcp(net, 20000 + s, 8300) == plain[s]);
	/* Unset: selection by hash alone again. */
	CHECK_EQ(check_setint(m[2], SOL_SOCKET, SO_INCOMING_CPU, -1), 0);
	CHECK_EQ(socktab_set_rx_cpu(6), 0);
	for (int s = 0; s < 400; s++)
		CHECK(lookup_tcp(net, 20000 + s, 8300) == plain[s]);
	/* Two members on CPU 6: the first of them from the hash's index. */
	CHECK_EQ(check_setint(m[1], SOL_SOCKET, SO_INCOMING_CPU, 6), 0);
	CHECK_EQ(check_setint(m[3], SOL_SOCKET, SO_INCOMING_CPU, 6), 0);
	int hits[4] = { 0 };

	for (int s = 0; s < 400; s++) {
		struct socktab_sock *f = lookup_tcp(net, 20000 + s, 8300);

		CHECK(f == m[1] || f == m[3]);
		hits[f == m[1] ? 1 : 3]++;
	}
	CHECK(hits[1] > 50 && hits[3] > 50);
	socktab_set_rx_cpu(-1);
	for (int i = 0; i < 4; i++)
		socktab_close(m[i]);
	socktab_net_free(net);
}

/* R31, R106: without SO_REUSEPORT, the CPU bonus breaks a tie between two wildcard listeners:
 * lo-bound l1 (2 + 1) and l2, unbound after listen() (1 + 1), first in the chain. */
TEST(listener_bonus)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *l1 = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *l2 = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	int d1 = socktab_dev_add(net, "d1", 1);

	CHECK(d1 > 0);
	CHECK_EQ(check_setint(l1, SOL_SOCKET, SO_BINDTOIFINDEX, SOCKTAB_LOOPBACK_IFINDEX), 0);
	CHECK_EQ(check_bind4(l1, "0.0.0.0", 8400), 0);
	CHECK_EQ(socktab_listen(l1, 16), 0);
	CHECK_EQ(check_setint(l2, SOL_SOCKET, SO_BINDTOIFINDEX, d1), 0);
	CHECK_EQ(check_bind4(l2, "0.0.0.0", 8400), 0);
	CHECK_EQ(socktab_listen(l2, 16), 0);
	CHECK_EQ(check_setint(l2, SOL_SOCKET, SO_BINDTOIFINDEX, 0), 0);
	CHECK(lookup_tcp(net, 30000, 8400) == l1);
	CHECK_EQ(check_setint(l2, SOL_SOCKET, SO_INCOMING_CPU, 1), 0);
	CHECK_EQ(socktab_set_rx_cpu(1), 0);
	CHECK(lookup_tcp(net, 30000, 8400) == l2);
	CHECK_EQ(socktab_set_rx_cpu(0), 0);
	CHECK(lookup_tcp(net, 30000, 8400) == l1);
	/* The bonus never outweighs a better match: l1 with the CPU too scores 4. */
	CHECK_EQ(check_setint(l1, SOL_SOCKET, SO_INCOMING_CPU, 1), 0);
	CHECK_EQ(socktab_set_rx_cpu(1), 0);
	CHECK(lookup_tcp(net, 30000, 8400) == l1);
	socktab_set_rx_cpu(-1);
	socktab_close(l1);
	socktab_close(l2);
	socktab_net_free(net);
}

static struct socktab_sock *udp4(struct socktab_net *net, int rp, int cpu, int port)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_UDP, AF_INET);

	check_setint(sk, SOL_SOCKET, rp ? SO_REUSEPORT : SO_REUSEADDR, 1);
	if (cpu != -1)
		check_setint(sk, SOL_SOCKET, SO_INCOMING_CPU, cpu);
	if (check_bind4(sk, "127.0.0.1", port)) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

/* R71, R106: UDP, two equal sockets: the CPU bonus beats the chain order. */
TEST(udp_bonus)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *u1 = udp4(net, 0, 0, 8500), *u2 = udp4(net, 0, -1, 8500);

	CHECK(u1 && u2);
	CHECK_EQ(socktab_set_rx_cpu(0), 0);
	CHECK(lookup_udp(net, "127.0.0.1", 40000, 8500) == u1);
	CHECK_EQ(socktab_set_rx_cpu(1), 0);
	CHECK(lookup_udp(net, "127.0.0.1", 40000, 8500) == u2); /* the newer is first */
	/* A connected socket (4 + 4 more) wins for its peer whatever the CPU. */
	CHECK_EQ(socktab_set_rx_cpu(0), 0);
	struct sockaddr_in peer = check_sin("127.0.0.2", 41000);

	CHECK_EQ(socktab_connect(u2, (struct sockaddr *)&peer, sizeof(peer)), 0);
	CHECK(lookup_udp(net, "127.0.0.2", 41000, 8500) == u2);
	CHECK(lookup_udp(net, "127.0.0.1", 40000, 8500) == u1);
	socktab_set_rx_cpu(-1);
	socktab_close(u1);
	socktab_close(u2);
	socktab_net_free(net);
}

/* R35, R36, R106: a UDP group prefers the member on the receiving CPU; a member that
 * connected has left it (has_conns stays), and takes only its peer's datagrams. */
TEST(udp_group)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *g0 = udp4(net, 1, 0, 8600), *g1 = udp4(net, 1, 1, 8600);
	struct socktab_sock *g2 = udp4(net, 1, 1, 8600);
	struct sockaddr_in peer = check_sin("127.0.0.2", 42000);

	CHECK(g0 && g1 && g2);
	CHECK_EQ(group_count(g0), 3);
	CHECK_EQ(socktab_set_rx_cpu(0), 0);
	for (int s = 0; s < 200; s++)
		CHECK(lookup_udp(net, "127.0.0.1", 30000 + s, 8600) == g0);
	CHECK_EQ(socktab_connect(g2, (struct sockaddr *)&peer, sizeof(peer)), 0);
	CHECK_EQ(group_count(g2), -1); /* connected: out of the group */
	CHECK_EQ(group_count(g0), 2);
	CHECK_EQ(socktab_set_rx_cpu(1), 0);
	for (int s = 0; s < 200; s++)
		CHECK(lookup_udp(net, "127.0.0.1", 30000 + s, 8600) == g1);
	CHECK(lookup_udp(net, "127.0.0.2", 42000, 8600) == g2);
	/* With hash4 off, the connected socket is found by scoring past the group's pick. */
	CHECK_EQ(socktab_net_set_udp_hash4(net, 0), 0);
	CHECK(lookup_udp(net, "127.0.0.2", 42000, 8600) == g2);
	CHECK(lookup_udp(net, "127.0.0.1", 30001, 8600) == g1);
	socktab_set_rx_cpu(-1);
	socktab_close(g0);
	socktab_close(g1);
	socktab_close(g2);
	socktab_net_free(net);
}

/* R107: a child names the receiving CPU of the thread that made it, not the listener's value. */
TEST(child_cpu)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *ln = listener4(net, 8700, 9), *child;
	struct sockaddr_in local = check_sin("127.0.0.1", 8700), remote = check_sin("127.0.0.1", 43000);

	CHECK(ln);
	CHECK_EQ(socktab_set_rx_cpu(4), 0);
	child = socktab_sock_new_child(ln, (struct sockaddr *)&local, (struct sockaddr *)&remote,
				       sizeof(local), SOCKTAB_LOOPBACK_IFINDEX, 0);
	CHECK(child);
	CHECK_EQ(incpu(child), 4);
	CHECK_EQ(incpu(ln), 9);
	CHECK_EQ(group_count(ln), 1); /* the child is in no group and changes no count */
	socktab_set_rx_cpu(-1);
	socktab_close(child);
	socktab_close(ln);
	socktab_net_free(net);
}

CHECK_MAIN(option_values, rx_cpu_per_thread, group_counts, group_prefers_cpu, listener_bonus,
	   udp_bonus, udp_group, child_cpu)
