/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stable reuseport member ids and the group generation (R132-R135): Linux's reshuffle on a
 * restart stays the default; with ids, a restart (a member leaves, a new one joins with its id)
 * moves no other member's traffic, for the selector's value and for the hash, TCP and UDP; the
 * generation changes on every membership change and only then; bad input changes nothing.
 */
#include <linux/filter.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdbool.h>

#include "check.h"

#define N 4
#define FLOWS 256

/* A = payload[0]; return A: the member (or id) named by the datagram's first byte. */
static int attach_byte0(struct socktab_sock *sk)
{
	struct sock_filter f[] = {
		{ BPF_LD | BPF_B | BPF_ABS, 0, 0, 0 },
		{ BPF_RET | BPF_A, 0, 0, 0 },
	};
	struct sock_fprog fp = { .len = 2, .filter = f };

	return socktab_setsockopt(sk, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &fp, sizeof(fp));
}

static int set_id(struct socktab_sock *sk, int id)
{
	return socktab_setsockopt(sk, SOCKTAB_SOL, SOCKTAB_SO_REUSEPORT_ID, &id, sizeof(id));
}

static int get_gen(struct socktab_sock *sk, uint64_t *gen)
{
	socklen_t n = sizeof(*gen);

	return socktab_getsockopt(sk, SOCKTAB_SOL, SOCKTAB_SO_REUSEPORT_GEN, gen, &n);
}

/* A member on 127.0.0.1:@port (UDP bound, or TCP listening) with stable id @id (-1: none). */
static struct socktab_sock *member(struct socktab_net *net, int proto, int port, int id)
{
	struct socktab_sock *sk = socktab_socket(net, proto, AF_INET);

	if (check_setint(sk, SOL_SOCKET, SO_REUSEPORT, 1) || (id >= 0 && set_id(sk, id)) ||
	    check_bind4(sk, "127.0.0.1", port) || (proto == SOCKTAB_TCP && socktab_listen(sk, 8))) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

/* Where flow @i (source port 20000 + i) to port @port goes; @byte is its payload's first byte. */
static struct socktab_sock *flow(struct socktab_net *net, int proto, int port, int i, int byte)
{
	unsigned char pkt[4] = { (unsigned char)byte, 1, 2, 3 };
	struct socktab_sock *sk;

	socktab_set_rx_payload(pkt, sizeof(pkt));
	if (proto == SOCKTAB_UDP)
		sk = socktab_lookup_udp4(net, check_ip4("127.0.0.2"), htons((uint16_t)(20000 + i)),
					 check_ip4("127.0.0.1"), htons((uint16_t)port), 1, 0);
	else
		sk = socktab_lookup_tcp4(net, check_ip4("127.0.0.2"), htons((uint16_t)(20000 + i)),
					 check_ip4("127.0.0.1"), htons((uint16_t)port), 1, 0);
	socktab_set_rx_payload(NULL, 0);
	socktab_sock_put(sk);
	return sk;
}

/* R35 kept: without ids, a restart moves another member's traffic (the last member fills the
 * leaver's place), exactly as Linux does. */
TEST(linux_default_reshuffles)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *m[N], *fresh;

	for (int i = 0; i < N; i++) {
		m[i] = member(net, SOCKTAB_UDP, 4433, -1);
		CHECK(m[i]);
	}
	CHECK_EQ(attach_byte0(m[0]), 0);
	for (int i = 0; i < N; i++)
		CHECK(flow(net, SOCKTAB_UDP, 4433, 0, i) == m[i]);
	CHECK_EQ(socktab_close(m[1]), 0);
	fresh = member(net, SOCKTAB_UDP, 4433, -1);
	CHECK(fresh);
	CHECK(flow(net, SOCKTAB_UDP, 4433, 0, 1) == m[3]); /* the last member moved into slot 1 */
	CHECK(flow(net, SOCKTAB_UDP, 4433, 0, 3) == fresh);
	for (int i = 0; i < N; i++)
		if (i != 1)
			socktab_close(m[i]);
	socktab_close(fresh);
	socktab_net_free(net);
}

/* R133: with ids the selector's value names the id; a restart of one member leaves the others'
 * traffic where it was, and the newcomer with the id gets its traffic back. */
TEST(selector_by_id)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *m[N], *fresh;

	for (int i = 0; i < N; i++) {
		/* joined in reverse id order: positions and ids differ */
		m[i] = member(net, SOCKTAB_UDP, 4433, N - 1 - i);
		CHECK(m[i]);
	}
	CHECK_EQ(attach_byte0(m[0]), 0);
	for (int i = 0; i < N; i++)
		CHECK(flow(net, SOCKTAB_UDP, 4433, i, N - 1 - i) == m[i]);
	CHECK_EQ(socktab_close(m[1]), 0); /* id 2 leaves */
	for (int i = 0; i < N; i++) {
		struct socktab_sock *got = flow(net, SOCKTAB_UDP, 4433, i, N - 1 - i);

		if (i == 1)
			CHECK(got == m[0] || got == m[2] || got == m[3]); /* id 2 absent: the hash */
		else
			CHECK(got == m[i]);
	}
	/* an id no member has, and one past the slots: the hash, never NULL */
	CHECK(flow(net, SOCKTAB_UDP, 4433, 9, 200) != NULL);
	fresh = member(net, SOCKTAB_UDP, 4433, 2);
	CHECK(fresh);
	CHECK(flow(net, SOCKTAB_UDP, 4433, 1, 2) == fresh);
	CHECK(flow(net, SOCKTAB_UDP, 4433, 0, 3) == m[0]);
	CHECK(flow(net, SOCKTAB_UDP, 4433, 2, 1) == m[2]);
	CHECK(flow(net, SOCKTAB_UDP, 4433, 3, 0) == m[3]);
	for (int i = 0; i < N; i++)
		if (i != 1)
			socktab_close(m[i]);
	socktab_close(fresh);
	socktab_net_free(net);
}

/* R133: by hash, TCP and UDP: while a member is away only its own flows move, and once a member
 * with its id is back every flow goes where it went before. */
TEST(hash_by_id)
{
	for (int proto = SOCKTAB_TCP; proto <= SOCKTAB_UDP; proto++) {
		struct socktab_net *net = socktab_net_new(NULL);
		struct socktab_sock *m[N];
		int before[FLOWS], moved = 0, owned = 0;

		for (int i = 0; i < N; i++) {
			m[i] = member(net, proto, 8443, i);
			CHECK(m[i]);
		}
		for (int f = 0; f < FLOWS; f++) {
			struct socktab_sock *got = flow(net, proto, 8443, f, 0);

			before[f] = -1;
			for (int i = 0; i < N; i++)
				if (got == m[i])
					before[f] = i;
			CHECK(before[f] >= 0);
			owned += before[f] == 2;
		}
		CHECK(owned > 0 && owned < FLOWS);
		CHECK_EQ(socktab_close(m[2]), 0);
		for (int f = 0; f < FLOWS; f++) {
			struct socktab_sock *got = flow(net, proto, 8443, f, 0);

			CHECK(got != NULL && got != m[2]);
			if (before[f] != 2)
				CHECK(got == m[before[f]]);
			moved += got != m[before[f]];
		}
		CHECK_EQ(moved, owned);
		/* the restart: a new socket with id 2, and every flow is back where it was */
		m[2] = member(net, proto, 8443, 2);
		CHECK(m[2]);
		for (int f = 0; f < FLOWS; f++)
			CHECK(flow(net, proto, 8443, f, 0) == m[before[f]]);
		for (int i = 0; i < N; i++)
			socktab_close(m[i]);
		socktab_net_free(net);
	}
}

/* R134: a new, larger generation on each join, leave and id change, and only then; never
 * repeated by a group made after the last one died. */
TEST(generation)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a = member(net, SOCKTAB_UDP, 5000, -1), *b, *lone;
	uint64_t g0, g1, g2, g3, g4, g5;

	CHECK(a);
	lone = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	CHECK_EQ(get_gen(lone, &g0), -ENOENT);
	CHECK_EQ(get_gen(a, &g0), 0);
	b = member(net, SOCKTAB_UDP, 5000, -1);
	CHECK(b);
	CHECK_EQ(get_gen(a, &g1), 0);
	CHECK(g1 > g0);
	CHECK_EQ(get_gen(b, &g2), 0);
	CHECK_EQ(g2, g1); /* one group, one generation */
	(void)flow(net, SOCKTAB_UDP, 5000, 0, 0);
	CHECK_EQ(get_gen(a, &g2), 0);
	CHECK_EQ(g2, g1); /* a lookup changes nothing */
	CHECK_EQ(set_id(b, 7), 0);
	CHECK_EQ(get_gen(a, &g3), 0);
	CHECK(g3 > g2);
	CHECK_EQ(set_id(b, 7), 0); /* the same id again: no change */
	CHECK_EQ(get_gen(a, &g4), 0);
	CHECK_EQ(g4, g3);
	CHECK_EQ(set_id(a, 7), -EEXIST); /* refused: no change */
	CHECK_EQ(get_gen(a, &g4), 0);
	CHECK_EQ(g4, g3);
	CHECK_EQ(socktab_close(b), 0);
	CHECK_EQ(get_gen(a, &g4), 0);
	CHECK(g4 > g3);
	CHECK_EQ(socktab_close(a), 0);
	a = member(net, SOCKTAB_UDP, 5000, -1);
	CHECK(a);
	CHECK_EQ(get_gen(a, &g5), 0);
	CHECK(g5 > g4);
	socktab_close(a);
	socktab_close(lone);
	socktab_net_free(net);
}

/* R132, R135: bad ids and duplicates are refused with nothing changed. */
TEST(bad_input)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *a = member(net, SOCKTAB_TCP, 6000, 1);
	struct socktab_sock *dup = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	struct socktab_sock *udup = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	struct socktab_sock *u = member(net, SOCKTAB_UDP, 6000, 1);
	uint64_t gen, gen2;
	socklen_t n = 4;
	int v = 0;

	CHECK(a && dup && udup && u);
	CHECK_EQ(set_id(dup, -2), -EINVAL);
	CHECK_EQ(set_id(dup, 65536), -EINVAL);
	CHECK_EQ(socktab_getsockopt(dup, SOCKTAB_SOL, SOCKTAB_SO_REUSEPORT_ID, &v, &n), 0);
	CHECK_EQ(v, -1);
	CHECK_EQ(get_gen(a, &gen), 0);
	/* a listener with an id its group has: listen() refused, the group as it was */
	CHECK_EQ(check_setint(dup, SOL_SOCKET, SO_REUSEPORT, 1), 0);
	CHECK_EQ(set_id(dup, 1), 0);
	CHECK_EQ(check_bind4(dup, "127.0.0.1", 6000), 0);
	CHECK_EQ(socktab_listen(dup, 8), -EEXIST);
	CHECK_EQ(get_gen(a, &gen2), 0);
	CHECK_EQ(gen2, gen);
	for (int f = 0; f < 32; f++)
		CHECK(flow(net, SOCKTAB_TCP, 6000, f, 0) == a);
	/* a UDP bind likewise: unbound after */
	CHECK_EQ(check_setint(udup, SOL_SOCKET, SO_REUSEPORT, 1), 0);
	CHECK_EQ(set_id(udup, 1), 0);
	CHECK_EQ(check_bind4(udup, "127.0.0.1", 6000), -EEXIST);
	CHECK_EQ(check_port(udup), 0);
	for (int f = 0; f < 32; f++)
		CHECK(flow(net, SOCKTAB_UDP, 6000, f, 0) == u);
	/* with a free id the same socket joins */
	CHECK_EQ(set_id(udup, 2), 0);
	CHECK_EQ(check_bind4(udup, "127.0.0.1", 6000), 0);
	/* the generation is read only and needs 8 bytes */
	n = 4;
	CHECK_EQ(socktab_getsockopt(u, SOCKTAB_SOL, SOCKTAB_SO_REUSEPORT_GEN, &gen, &n), -EINVAL);
	CHECK_EQ(socktab_setsockopt(u, SOCKTAB_SOL, SOCKTAB_SO_REUSEPORT_GEN, &v, sizeof(v)),
		 -ENOPROTOOPT);
	socktab_close(a);
	socktab_close(dup);
	socktab_close(udup);
	socktab_close(u);
	socktab_net_free(net);
}

/* The slots follow the group into its larger copy (more than 128 members), and a member's id
 * may change while it is in the group. */
TEST(growth_and_change)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *m[130];

	for (int i = 0; i < 130; i++) {
		m[i] = member(net, SOCKTAB_UDP, 7000, 129 - i);
		CHECK(m[i]);
	}
	CHECK_EQ(attach_byte0(m[0]), 0);
	CHECK(flow(net, SOCKTAB_UDP, 7000, 0, 5) == m[124]);
	CHECK(flow(net, SOCKTAB_UDP, 7000, 0, 129) == m[0]);
	CHECK_EQ(set_id(m[0], 200), 0);
	CHECK(flow(net, SOCKTAB_UDP, 7000, 0, 200) == m[0]);
	for (int f = 0; f < 64; f++) /* id 129 is free now: the hash's pick (as past the span) */
		CHECK(flow(net, SOCKTAB_UDP, 7000, f, 129) == flow(net, SOCKTAB_UDP, 7000, f, 250));
	CHECK_EQ(set_id(m[1], 129), 0); /* taken back by another member */
	CHECK(flow(net, SOCKTAB_UDP, 7000, 0, 129) == m[1]);
	CHECK(flow(net, SOCKTAB_UDP, 7000, 0, 5) == m[124]);
	CHECK_EQ(set_id(m[124], -1), 0);
	CHECK(flow(net, SOCKTAB_UDP, 7000, 0, 5) != m[124]); /* no id: out of the selection */
	for (int i = 0; i < 130; i++)
		socktab_close(m[i]);
	socktab_net_free(net);
}

/* Restarts and slot growth against lookups: a member that never leaves (id 60000) gets every
 * datagram naming it, and a datagram naming the restarting member (id 1) always reaches some
 * member. The writer restarts id 1 and moves a third member to a new largest id, each move a
 * larger copy of 60000-odd slots. The negative control: the -Dnaive_order=true build copies
 * the slots after publishing the larger array, and a lookup meeting the copy half done sends
 * id 60000's datagram to the hash. */
struct race {
	struct socktab_net *net;
	struct socktab_sock *stay;
	atomic_int stop, wrong, none, lookups;
};

static struct socktab_sock *flow16(struct socktab_net *net, int i, int id)
{
	unsigned char pkt[4] = { (unsigned char)(id >> 8), (unsigned char)id, 0, 0 };
	struct in6_addr src, dst;
	struct socktab_sock *sk;

	inet_pton(AF_INET6, "2001:db8::2", &src);
	inet_pton(AF_INET6, "::1", &dst);
	socktab_set_rx_payload(pkt, sizeof(pkt));
	sk = socktab_lookup_udp6(net, &src, htons((uint16_t)(20000 + i)), &dst, htons(9443), 1,
				 0);
	socktab_set_rx_payload(NULL, 0);
	socktab_sock_put(sk);
	return sk;
}

static void *race_reader(void *p)
{
	struct race *r = p;

	socktab_thread_register();
	for (int i = 0; !atomic_load(&r->stop); i++) {
		if (flow16(r->net, i & 255, 60000) != r->stay)
			atomic_fetch_add(&r->wrong, 1);
		if (!flow16(r->net, i & 255, 1))
			atomic_fetch_add(&r->none, 1);
		atomic_fetch_add(&r->lookups, 1);
	}
	socktab_thread_unregister();
	return NULL;
}

/* An AF_INET6 member on [::1]:9443 with id @id: AF_INET6 reuseport sockets join the hash2 chain
 * at its tail (R103), so the first member created stays the one the walk scores first and hands
 * to the group; a member being closed is never the walk's winner (it would take the datagram
 * itself once it has left the group, as in the kernel). */
static struct socktab_sock *member6(struct socktab_net *net, int id)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_UDP, AF_INET6);

	if (check_setint(sk, SOL_SOCKET, SO_REUSEPORT, 1) || set_id(sk, id) ||
	    check_bind6(sk, "::1", 9443)) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

TEST(restart_races_lookups)
{
	/* A = payload[0..1] (network order); return A */
	struct sock_filter f[] = {
		{ BPF_LD | BPF_H | BPF_ABS, 0, 0, 0 },
		{ BPF_RET | BPF_A, 0, 0, 0 },
	};
	struct sock_fprog fp = { .len = 2, .filter = f };
	struct race r = { .net = socktab_net_new(NULL) };
	struct socktab_sock *restarting, *mover;
	pthread_t t;

	r.stay = member6(r.net, 60000);
	restarting = member6(r.net, 1);
	mover = member6(r.net, 60001);
	CHECK(r.stay && restarting && mover);
	CHECK_EQ(socktab_setsockopt(r.stay, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &fp, sizeof(fp)),
		 0);
	CHECK_EQ(pthread_create(&t, NULL, race_reader, &r), 0);
	while (!atomic_load(&r.lookups))
		sched_yield();
	for (int i = 0; i < 200; i++) {
		CHECK_EQ(socktab_close(restarting), 0);
		restarting = member6(r.net, 1);
		CHECK(restarting);
		CHECK_EQ(set_id(mover, 60002 + i), 0);
	}
	atomic_store(&r.stop, 1);
	pthread_join(t, NULL);
	printf("200 restarts and slot copies against %d lookups: %d to the wrong member, %d to "
	       "none\n", atomic_load(&r.lookups), atomic_load(&r.wrong), atomic_load(&r.none));
	CHECK_EQ(atomic_load(&r.wrong), 0);
	CHECK_EQ(atomic_load(&r.none), 0);
	socktab_close(r.stay);
	socktab_close(restarting);
	socktab_close(mover);
	socktab_net_free(r.net);
}

CHECK_MAIN(linux_default_reshuffles, selector_by_id, hash_by_id, generation, bad_input,
	   growth_and_change, restart_races_lookups)
