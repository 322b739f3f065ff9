/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SO_ATTACH_REUSEPORT_CBPF / SO_DETACH_REUSEPORT_BPF (R108-R111): the kernel's errno rules, the
 * programs socktab refuses (ancillary loads), the member a program picks from the thread's
 * payload, the fallback to the hash, a leaving member, a group that grows, a program attached
 * before bind/listen, and lookups racing a program's replacement.
 */
#include <linux/filter.h>
#include <pthread.h>

#include "check.h"
#include "reuseport.h"

static int attach(struct socktab_sock *sk, const struct sock_filter *f, unsigned short n)
{
	struct sock_fprog fp = { .len = n, .filter = (struct sock_filter *)f };

	return socktab_setsockopt(sk, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &fp, sizeof(fp));
}

static int attach_const(struct socktab_sock *sk, uint32_t k)
{
	const struct sock_filter f[] = { { BPF_RET | BPF_K, 0, 0, k } };

	return attach(sk, f, 1);
}

static int attach_byte(struct socktab_sock *sk, uint32_t off)
{
	const struct sock_filter f[] = {
		{ BPF_LD | BPF_B | BPF_ABS, 0, 0, off },
		{ BPF_RET | BPF_A, 0, 0, 0 },
	};

	return attach(sk, f, 2);
}

static int detach(struct socktab_sock *sk)
{
	return check_setint(sk, SOL_SOCKET, SO_DETACH_REUSEPORT_BPF, 0);
}

static struct socktab_sock *udp_member(struct socktab_net *net, int port)
{
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_UDP, AF_INET);

	check_setint(sk, SOL_SOCKET, SO_REUSEPORT, 1);
	if (check_bind4(sk, "127.0.0.1", port)) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

static struct socktab_sock *lookup_udp(struct socktab_net *net, int sport, int dport)
{
	struct socktab_sock *sk =
		socktab_lookup_udp4(net, check_ip4("127.0.0.1"), htons((uint16_t)sport), check_ip4("127.0.0.1"),
				    htons((uint16_t)dport), SOCKTAB_LOOPBACK_IFINDEX, 0);

	socktab_sock_put(sk); /* only compared; the sockets stay open */
	return sk;
}

/* R108, R111: the errors, each leaving the socket as it was. */
TEST(errors)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *s = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	struct socktab_sock *r = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	struct socktab_sock *t = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	const struct sock_filter noret[] = { { BPF_LD | BPF_IMM, 0, 0, 1 } };
	const struct sock_filter div0[] = { { BPF_ALU | BPF_DIV | BPF_K, 0, 0, 0 },
					    { BPF_RET | BPF_A, 0, 0, 0 } };
	const struct sock_filter shift[] = { { BPF_ALU | BPF_LSH | BPF_K, 0, 0, 32 },
					     { BPF_RET | BPF_A, 0, 0, 0 } };
	const struct sock_filter uninit[] = { { BPF_LD | BPF_MEM, 0, 0, 2 },
					      { BPF_RET | BPF_A, 0, 0, 0 } };
	const struct sock_filter jump[] = { { BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0 },
					    { BPF_RET | BPF_A, 0, 0, 0 } };
	const struct sock_filter cpu[] = { { BPF_LD | BPF_W | BPF_ABS, 0, 0, SKF_AD_OFF + SKF_AD_CPU },
					   { BPF_RET | BPF_A, 0, 0, 0 } };
	const struct sock_filter net_off[] = { { BPF_LD | BPF_B | BPF_ABS, 0, 0, SKF_NET_OFF + 9 },
					       { BPF_RET | BPF_A, 0, 0, 0 } };
	const struct sock_filter stored[] = { { BPF_ST, 0, 0, 3 }, { BPF_LD | BPF_MEM, 0, 0, 3 },
					      { BPF_RET | BPF_A, 0, 0, 0 } };
	struct sock_fprog fp = { .len = 1, .filter = NULL };
	int v = 0;
	socklen_t n = sizeof(v);

	/* No SO_REUSEPORT: -EINVAL before and after bind; detach too. */
	CHECK_EQ(attach_const(s, 0), -EINVAL);
	CHECK_EQ(detach(s), -EINVAL);
	CHECK_EQ(check_bind4(s, "127.0.0.1", 7001), 0);
	CHECK_EQ(attach_const(s, 0), -EINVAL);
	/* SO_REUSEPORT, no group yet: detach -ENOENT; bad programs -EINVAL. */
	check_setint(r, SOL_SOCKET, SO_REUSEPORT, 1);
	CHECK_EQ(detach(r), -ENOENT);
	CHECK_EQ(attach(r, noret, 0), -EINVAL);
	CHECK_EQ(socktab_setsockopt(r, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &fp, sizeof(fp)),
		 -EINVAL);
	CHECK_EQ(socktab_setsockopt(r, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &fp, 4), -EINVAL);
	CHECK_EQ(socktab_setsockopt(r, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, NULL, sizeof(fp)),
		 -EINVAL);
	CHECK_EQ(attach(r, noret, 1), -EINVAL);
	CHECK_EQ(attach(r, div0, 2), -EINVAL);
	CHECK_EQ(attach(r, shift, 2), -EINVAL);
	CHECK_EQ(attach(r, uninit, 2), -EINVAL);
	CHECK_EQ(attach(r, jump, 2), -EINVAL);
	CHECK(!atomic_load(&r->cold->reuseport_cb)); /* nothing was made */
	/* The kernel runs ancillary loads and header offsets: they attach (R108). */
	CHECK_EQ(attach(r, cpu, 2), 0);
	CHECK(atomic_load(&r->cold->reuseport_cb)); /* a group of its own (R109) */
	CHECK_EQ(attach(r, net_off, 2), 0);
	CHECK_EQ(attach(r, stored, 3), 0);
	CHECK_EQ(detach(r), 0);
	CHECK_EQ(detach(r), -ENOENT);
	/* Neither option can be read. */
	CHECK_EQ(socktab_getsockopt(r, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &v, &n), -ENOPROTOOPT);
	CHECK_EQ(socktab_getsockopt(r, SOL_SOCKET, SO_DETACH_REUSEPORT_BPF, &v, &n), -ENOPROTOOPT);
	/* TCP: a listener without SO_REUSEPORT is in a table without a group. */
	CHECK_EQ(check_bind4(t, "127.0.0.1", 7002), 0);
	CHECK_EQ(socktab_listen(t, 16), 0);
	CHECK_EQ(attach_const(t, 0), -EINVAL);
	CHECK_EQ(socktab_set_rx_payload(NULL, 1), -EINVAL);
	CHECK_EQ(socktab_set_rx_payload(NULL, 0), 0);
	socktab_close(s);
	socktab_close(r);
	socktab_close(t);
	socktab_net_free(net);
}

/* R110: the program's value is the member's index; out of range, the hash decides. */
TEST(select_by_payload)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *m[4], *byhash[16];
	unsigned char pl[4] = { 0xaa, 0xbb, 0xcc, 0 };

	for (int i = 0; i < 4; i++)
		CHECK((m[i] = udp_member(net, 7100)));
	for (int i = 0; i < 16; i++)
		byhash[i] = lookup_udp(net, 40000 + i, 7100);
	CHECK_EQ(attach_byte(m[2], 3), 0);
	for (int i = 0; i < 4; i++) {
		pl[3] = (unsigned char)i;
		CHECK_EQ(socktab_set_rx_payload(pl, sizeof(pl)), 0);
		for (int s = 0; s < 16; s++)
			CHECK(lookup_udp(net, 40000 + s, 7100) == m[i]);
	}
	/* Out of range: each 4-tuple gets its hash pick, as with no program. */
	pl[3] = 4;
	for (int s = 0; s < 16; s++)
		CHECK(lookup_udp(net, 40000 + s, 7100) == byhash[s]);
	/* A load past the payload ends the program with 0; no payload is an empty one. */
	CHECK_EQ(socktab_set_rx_payload(pl, 3), 0);
	CHECK(lookup_udp(net, 40000, 7100) == m[0]);
	CHECK_EQ(socktab_set_rx_payload(NULL, 0), 0);
	CHECK(lookup_udp(net, 40001, 7100) == m[0]);
	/* A new program replaces the old; detach restores the hash. */
	CHECK_EQ(attach_const(m[0], 1), 0);
	CHECK(lookup_udp(net, 40002, 7100) == m[1]);
	CHECK_EQ(detach(m[3]), 0);
	for (int s = 0; s < 16; s++)
		CHECK(lookup_udp(net, 40000 + s, 7100) == byhash[s]);
	/* A leaving member's slot goes to the last one. */
	CHECK_EQ(attach_const(m[0], 0), 0);
	socktab_close(m[0]);
	CHECK(lookup_udp(net, 40000, 7100) == m[3]);
	CHECK_EQ(attach_const(m[1], 2), 0);
	CHECK(lookup_udp(net, 40000, 7100) == m[2]);
	for (int i = 1; i < 4; i++)
		socktab_close(m[i]);
	socktab_net_free(net);
}

/* The program survives the group's growth past 128 members (a new array takes it over). */
TEST(growth_keeps_program)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *m[130];

	CHECK((m[0] = udp_member(net, 7200)));
	CHECK_EQ(attach_const(m[0], 129), 0);
	for (int i = 1; i < 130; i++)
		CHECK((m[i] = udp_member(net, 7200)));
	CHECK(lookup_udp(net, 40000, 7200) == m[129]);
	for (int i = 0; i < 130; i++)
		socktab_close(m[i]);
	socktab_net_free(net);
}

/* R109: attached before listen, the group made for it stays when the socket starts the group,
 * and later listeners join it, program included. While it holds that group, a TCP socket's
 * bind and listen conflict with every SO_REUSEPORT owner of the address and port (R42's
 * reuseport_cb_ok): one attached after its bind cannot listen beside the group. */
TEST(attach_before_listen)
{
	struct socktab_net *net = socktab_net_new(NULL);
	struct socktab_sock *l[3];

	for (int i = 0; i < 3; i++) {
		l[i] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		check_setint(l[i], SOL_SOCKET, SO_REUSEPORT, 1);
		if (i == 0)
			CHECK_EQ(attach_const(l[0], 1), 0);
		CHECK_EQ(check_bind4(l[i], "127.0.0.1", 7300), 0);
		CHECK_EQ(socktab_listen(l[i], 16), 0);
	}
	/* l0's program picks index 1 (l1). */
	for (int s = 0; s < 8; s++) {
		struct socktab_sock *sk = socktab_lookup_tcp4(
			net, check_ip4("127.0.0.1"), htons((uint16_t)(41000 + s)), check_ip4("127.0.0.1"),
			htons(7300), SOCKTAB_LOOPBACK_IFINDEX, 0);

		CHECK(sk == l[1]);
		socktab_sock_put(sk);
	}
	/* Bound, then attached: alone on its port it listens, starting its group; beside the
	 * group's listeners its own group makes listen() fail. */
	struct socktab_sock *y = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	check_setint(y, SOL_SOCKET, SO_REUSEPORT, 1);
	CHECK_EQ(check_bind4(y, "127.0.0.1", 7301), 0);
	CHECK_EQ(attach_const(y, 0), 0);
	CHECK_EQ(socktab_listen(y, 16), 0);
	socktab_close(y);
	y = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	check_setint(y, SOL_SOCKET, SO_REUSEPORT, 1);
	CHECK_EQ(check_bind4(y, "127.0.0.1", 7300), 0);
	CHECK_EQ(attach_const(y, 0), 0);
	CHECK_EQ(socktab_listen(y, 16), -EADDRINUSE);
	socktab_close(y);
	/* A socket closed before it ever listened leaves its own group behind it. */
	struct socktab_sock *x = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	check_setint(x, SOL_SOCKET, SO_REUSEPORT, 1);
	CHECK_EQ(attach_const(x, 0), 0);
	socktab_close(x);
	for (int i = 0; i < 3; i++)
		socktab_close(l[i]);
	socktab_net_free(net);
}

/* Lookups race the replacement of the group's program: every pick is one of the programs'.
 * The negative control: the -Dnaive_order=true build publishes a program before writing its
 * instructions, and lookups that run the unwritten program pick members no program names. */
static struct socktab_net *race_net;
static struct socktab_sock *race_m[3];
static _Atomic int race_stop;

static void *race_reader(void *arg)
{
	unsigned char pl[1] = { 1 };
	long bad = 0;

	(void)arg;
	socktab_thread_register();
	socktab_set_rx_payload(pl, sizeof(pl));
	while (!atomic_load(&race_stop)) {
		struct socktab_sock *sk = lookup_udp(race_net, 42000, 7400);

		bad += sk != race_m[1] && sk != race_m[2];
	}
	socktab_thread_unregister();
	return (void *)bad;
}

TEST(replace_races_lookups)
{
	pthread_t th;
	void *bad;

	race_net = socktab_net_new(NULL);
	for (int i = 0; i < 3; i++)
		CHECK((race_m[i] = udp_member(race_net, 7400)));
	CHECK_EQ(attach_const(race_m[0], 2), 0);
	CHECK_EQ(pthread_create(&th, NULL, race_reader, NULL), 0);
	for (int i = 0; i < 2000; i++)
		CHECK_EQ(i % 2 ? attach_const(race_m[1], 2) : attach_byte(race_m[2], 0), 0);
	atomic_store(&race_stop, 1);
	pthread_join(th, &bad);
	CHECK_EQ((long)bad, 0L);
	for (int i = 0; i < 3; i++)
		socktab_close(race_m[i]);
	socktab_net_free(race_net);
}

CHECK_MAIN(errors, select_by_payload, growth_keeps_program, attach_before_listen,
	   replace_races_lookups)
