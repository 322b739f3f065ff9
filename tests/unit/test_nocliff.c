/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * connect() without the cliff: the socktab variant, searching through its per-destination
 * port index (src/portmap.c), picks the port the kernel's walk (the linux variant) picks whenever
 * no TIME_WAIT entry is involved, keeps the kernel's rules otherwise, and frees its memory.
 */
#include <pthread.h>

#include "check.h"
#include "portmap.h"

#define LO 40000
#define HI 40999
#define NDEST 4
#define MAXOPEN 4096
/* A net range of 512 ports: a walk over it builds an index at PM_BUILD (32) entries toward a
 * destination, and the sketch counts every entry (it samples only from 1024 ports up). */
#define NLO 32768
#define NHI 33279

static uint64_t xs(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Destinations: 0 and 1 are one destination (IPv4 and v4-mapped from an IPv6 socket). */
static int dest_connect(struct socktab_sock *sk, int d)
{
	switch (d) {
	case 0:
		return check_connect4(sk, "127.0.0.1", 80);
	case 1:
		return check_connect6(sk, "::ffff:127.0.0.1", 80);
	case 2:
		return check_connect6(sk, "::1", 80);
	default:
		return check_connect4(sk, "127.0.0.1", 81);
	}
}

static int dest_family(int d)
{
	return d == 0 || d == 3 ? AF_INET : AF_INET6;
}

static int dest_key(int d)
{
	return d == 1 ? 0 : d;
}

static int set_range(struct socktab_sock *sk, uint32_t lo, uint32_t hi)
{
	uint32_t range = hi << 16 | lo;

	return socktab_setsockopt(sk, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &range, sizeof(range));
}

static void abort_close(struct socktab_sock *sk)
{
	struct linger lg = { 1, 0 };

	socktab_setsockopt(sk, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	socktab_close(sk);
}

struct twin {
	struct socktab_sock *a, *b;
	int dest, port;
	bool bound; /* bound to lo */
};

static struct twin open_[MAXOPEN];
/* Holders of each 4-tuple: bit 0 unbound, bit 1 bound to lo. An unbound connect() may share a
 * 4-tuple with a device-bound holder (R94); a lo-bound one conflicts with both kinds. */
static unsigned char busy[NDEST][65536];

/* Apply the same setup to both nets: reserved ports and ports bound by bind() (R55, R66). */
static int setup(struct socktab_net *net, struct socktab_sock **bound)
{
	if (socktab_net_sysctl(net, "net.ipv4.ip_local_reserved_ports", "40010-40019,40500,40999"))
		return -1;
	bound[0] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	bound[1] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	bound[2] = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
	if (!bound[0] || !bound[1] || !bound[2])
		return -1;
	if (check_bind4(bound[0], "127.0.0.1", 40100) || check_bind4(bound[1], "0.0.0.0", 40201) ||
	    check_bind6(bound[2], "::1", 40302))
		return -1;
	return 0;
}

/*
 * The differential test: a linux net and a socktab net with the same secrets, clock and random
 * draws run the same script of connects (four destinations, some with IP_LOCAL_PORT_RANGE, a few
 * bound to a device) and abortive closes, while the target occupancy of the hot destination moves
 * through 30 %, 90 %, 99 %, exhaustion and back, and the net's range widens half way (the index
 * is rebuilt for the new range); every connect must give the same result and the same port.
 */
TEST(same_ports_as_linux)
{
	static const double target[] = { 0.3, 0.9, 0.99, 1.01, 0.5, 0.97, 0.2, 0.995 };
	uint64_t clk = 5000000000ull, rng = 88172645463325252ull;
	struct socktab_net *a = check_keyed_net(SOCKTAB_VARIANT_LINUX, LO, HI, &clk, 7);
	struct socktab_net *b = check_keyed_net(SOCKTAB_VARIANT_SOCKTAB, LO, HI, &clk, 7);
	struct socktab_sock *ba[3], *bb[3];
	struct socktab_net_stats sa, sb;
	int nopen = 0, nhot = 0, connects = 0, fails = 0, max_index = 0;

	CHECK(a && b);
	CHECK_EQ(setup(a, ba), 0);
	CHECK_EQ(setup(b, bb), 0);
	memset(busy, 0, sizeof(busy));
	int lo = LO, hi = HI;

	for (size_t ph = 0; ph < sizeof(target) / sizeof(target[0]); ph++) {
		int goal = (int)(target[ph] * (hi - lo + 1));

		if (ph == 4) {
			lo = LO - 200;
			hi = HI + 200;
			CHECK_EQ(socktab_net_set_port_range(a, lo, hi), 0);
			CHECK_EQ(socktab_net_set_port_range(b, lo, hi), 0);
		}

		for (int step = 0; step < 1500; step++) {
			uint64_t r = xs(&rng);
			int d = (int)(r % 10 < 7 ? (r >> 8) % 2 : 2 + (r >> 8) % 2);
			bool do_connect = dest_key(d) == 0 ? nhot < goal : (r >> 16) % 3 != 0;

			if (r % 97 == 0)
				clk += 10000000000ull; /* a new 10-s slot: new offsets (R10) */
			if (do_connect && nopen < MAXOPEN) {
				struct twin *t = &open_[nopen];
				uint64_t seed = xs(&rng);
				int ea, eb;

				t->a = socktab_socket(a, SOCKTAB_TCP, dest_family(d));
				t->b = socktab_socket(b, SOCKTAB_TCP, dest_family(d));
				CHECK(t->a && t->b);
				if ((r >> 24) % 8 == 0) { /* R64: per-socket range, step 1 */
					uint32_t slo = LO + (uint32_t)((r >> 32) % 700);

					CHECK_EQ(set_range(t->a, slo, slo + 250), 0);
					CHECK_EQ(set_range(t->b, slo, slo + 250), 0);
				}
				t->bound = (r >> 24) % 50 == 1;
				if (t->bound) { /* SO_BINDTODEVICE: the plain walk */
					CHECK_EQ(check_setint(t->a, SOL_SOCKET, SO_BINDTOIFINDEX,
							      1), 0);
					CHECK_EQ(check_setint(t->b, SOL_SOCKET, SO_BINDTOIFINDEX,
							      1), 0);
				}
				socktab__random_seed(seed);
				ea = dest_connect(t->a, d);
				socktab__random_seed(seed);
				eb = dest_connect(t->b, d);
				CHECK_EQ(eb, ea);
				connects++;
				if (ea) {
					CHECK_EQ(ea, -EADDRNOTAVAIL);
					fails++;
					socktab_close(t->a);
					socktab_close(t->b);
					continue;
				}
				t->port = check_port(t->a);
				CHECK_EQ(check_port(t->b), t->port);
				CHECK(t->port >= lo && t->port <= hi);
				CHECK(t->port < 40010 || t->port > 40019);
				CHECK(t->port != 40100 && t->port != 40201 && t->port != 40302);
				t->dest = dest_key(d);
				CHECK_EQ(busy[t->dest][t->port] & (t->bound ? 3 : 1), 0);
				busy[t->dest][t->port] |= t->bound ? 2 : 1;
				nhot += t->dest == 0;
				nopen++;
			} else if (nopen) {
				int k = (int)((r >> 40) % (uint64_t)nopen);
				struct twin *t = &open_[k];

				busy[t->dest][t->port] &= (unsigned char)~(t->bound ? 2 : 1);
				nhot -= t->dest == 0;
				abort_close(t->a);
				abort_close(t->b);
				open_[k] = open_[--nopen];
			}
			uint32_t ni;
			uint64_t bytes;

			socktab__portmap_stats(b, &ni, &bytes);
			if ((int)ni > max_index)
				max_index = (int)ni;
		}
	}
	socktab_net_stats(a, &sa);
	socktab_net_stats(b, &sb);
	printf("same_ports_as_linux: %d connects (%d EADDRNOTAVAIL), ports tried linux %llu, "
	       "socktab %llu, max indexes %d\n",
	       connects, fails, (unsigned long long)sa.connect_ports_tried,
	       (unsigned long long)sb.connect_ports_tried, max_index);
	CHECK(connects > 5000);
	CHECK(fails > 0);
	CHECK(max_index >= 1);
	CHECK(sb.connect_ports_tried * 4 < sa.connect_ports_tried);
	uint32_t marked;

	CHECK_EQ(socktab__portmap_summary_check(b, &marked), 0);
	for (int k = 0; k < nopen; k++) {
		abort_close(open_[k].a);
		abort_close(open_[k].b);
	}
	for (int k = 0; k < 3; k++) {
		socktab_close(ba[k]);
		socktab_close(bb[k]);
	}
	uint32_t ni;
	uint64_t bytes;

	socktab__portmap_stats(b, &ni, &bytes);
	CHECK_EQ(ni, 0);
	socktab_net_free(a);
	socktab_net_free(b);
}

/* R58: -EADDRNOTAVAIL exactly when every usable port toward the destination is taken. */
TEST(exhaustion_exact)
{
	uint64_t clk = 1, rng = 12345;
	struct socktab_net *net = check_keyed_net(SOCKTAB_VARIANT_SOCKTAB, 41000, 41299, &clk, 3);
	struct socktab_sock *s[300];
	int usable = 300 - 5, n = 0;

	CHECK(net);
	CHECK_EQ(socktab_net_sysctl(net, "net.ipv4.ip_local_reserved_ports", "41100-41104"), 0);
	for (;;) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		int err = check_connect4(sk, "127.0.0.1", 80);

		if (err) {
			CHECK_EQ(err, -EADDRNOTAVAIL);
			socktab_close(sk);
			break;
		}
		s[n++] = sk;
		CHECK(n <= usable);
	}
	CHECK_EQ(n, usable);
	/* Free ports one at a time: each is found at once, and only it. */
	for (int round = 0; round < 50; round++) {
		int k = (int)(xs(&rng) % (uint64_t)n), port = check_port(s[k]);
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

		abort_close(s[k]);
		CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), 0);
		CHECK_EQ(check_port(sk), port);
		s[k] = sk;
		sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), -EADDRNOTAVAIL);
		socktab_close(sk);
	}
	for (int k = 0; k < n; k++)
		abort_close(s[k]);
	socktab_net_free(net);
}

/* R61 under the index: free ports go first; TIME_WAIT holders are recycled under tw_reuse once
 * no free port is left, and not before the reuse delay. */
TEST(tw_reuse_recycling)
{
	uint64_t clk = 1000000000ull;
	struct socktab_net *net = check_keyed_net(SOCKTAB_VARIANT_SOCKTAB, 42000, 42099, &clk, 5);
	struct socktab_sock *s[100], *extra[60];
	struct socktab_net_stats st;
	uint32_t ni;
	uint64_t bytes;

	CHECK(net);
	CHECK_EQ(socktab_net_set_tw_reuse(net, 1), 0);
	for (int k = 0; k < 100; k++) {
		s[k] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(s[k], "127.0.0.1", 80), 0);
		CHECK_EQ(socktab_set_state(s[k], SOCKTAB_TCP_ESTABLISHED), 0);
	}
	socktab__portmap_stats(net, &ni, &bytes);
	CHECK_EQ(ni, 1);
	/* 50 go to TIME_WAIT (graceful close), 50 are closed abortively. */
	for (int k = 0; k < 100; k++) {
		if (k % 2) {
			abort_close(s[k]);
		} else {
			/* both FINs seen: TIME_WAIT substate, which tw_reuse may take over */
			CHECK_EQ(socktab_set_state(s[k], SOCKTAB_TCP_CLOSING), 0);
			socktab_close(s[k]);
		}
	}
	socktab_net_stats(net, &st);
	CHECK_EQ(st.time_wait, 50);
	clk += 2000000000ull; /* past tw_reuse_delay: every entry could be taken over */
	for (int k = 0; k < 50; k++) {
		extra[k] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(extra[k], "127.0.0.1", 80), 0);
	}
	socktab_net_stats(net, &st);
	CHECK_EQ(st.tw_recycled, 0); /* the 50 free ports went first */
	for (int k = 50; k < 60; k++) {
		extra[k] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(extra[k], "127.0.0.1", 80), 0);
	}
	socktab_net_stats(net, &st);
	CHECK_EQ(st.tw_recycled, 10);
	CHECK_EQ(st.time_wait, 40);
	/* Without tw_reuse the remaining holders stay busy (R61). */
	CHECK_EQ(socktab_net_set_tw_reuse(net, 0), 0);
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

	CHECK_EQ(check_connect4(sk, "127.0.0.1", 80), -EADDRNOTAVAIL);
	socktab_close(sk);
	for (int k = 0; k < 60; k++)
		abort_close(extra[k]);
	socktab_net_free(net);
}

/* The index appears at PM_BUILD entries toward a destination and is freed below PM_FREE. */
TEST(index_freed_below_threshold)
{
	uint64_t clk = 1;
	struct socktab_net *net = check_keyed_net(SOCKTAB_VARIANT_SOCKTAB, NLO, NHI, &clk, 9);
	struct socktab_sock *s4[100], *s6[100];
	uint32_t ni;
	uint64_t bytes;

	CHECK(net);
	for (int k = 0; k < 100; k++) {
		s4[k] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		s6[k] = socktab_socket(net, SOCKTAB_TCP, AF_INET6);
		CHECK_EQ(check_connect4(s4[k], "127.0.0.1", 80), 0);
		CHECK_EQ(check_connect6(s6[k], "::1", 80), 0);
		socktab__portmap_stats(net, &ni, &bytes);
		CHECK_EQ(ni, k < 32 ? 0 : 2);
	}
	printf("index_freed_below_threshold: %llu bytes for 2 hot destinations\n",
	       (unsigned long long)bytes);
	CHECK(bytes <= 2 * (8192 + 384));
	for (int k = 0; k < 100; k++) {
		abort_close(s4[k]);
		socktab__portmap_stats(net, &ni, &bytes);
		CHECK_EQ(ni, k < 84 ? 2 : 1); /* 16 left: kept; 15 left: freed */
	}
	for (int k = 0; k < 100; k++)
		abort_close(s6[k]);
	socktab__portmap_stats(net, &ni, &bytes);
	CHECK_EQ(ni, 0);
	CHECK_EQ(bytes, 0);
	socktab_net_free(net);
}

/*
 * A destination that was hot and cooled gets its index back at PM_BUILD entries again, not
 * sooner: the sketch counts what the destination holds, not what it held while its index
 * counted it. Three cycles of 100 connections up and all of them down again.
 */
TEST(sketch_forgets_a_cooled_index)
{
	uint64_t clk = 1;
	struct socktab_net *net = check_keyed_net(SOCKTAB_VARIANT_SOCKTAB, NLO, NHI, &clk, 9);
	struct socktab_sock *s4[100];
	uint32_t ni;
	uint64_t bytes;

	CHECK(net);
	for (int cycle = 0; cycle < 3; cycle++) {
		for (int k = 0; k < 100; k++) {
			s4[k] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
			CHECK_EQ(check_connect4(s4[k], "127.0.0.1", 80), 0);
			socktab__portmap_stats(net, &ni, &bytes);
			CHECK_EQ(ni, k < 32 ? 0 : 1);
		}
		for (int k = 0; k < 100; k++)
			abort_close(s4[k]);
		socktab__portmap_stats(net, &ni, &bytes);
		CHECK_EQ(ni, 0);
	}
	socktab_net_free(net);
}

/* The sum of the net's sketch cells: 0 whenever the net holds no ehash entry. */
static int64_t sketch_sum(struct socktab_net *net)
{
	int64_t sum = 0;

	for (int r = 0; r < 2; r++)
		for (int i = 0; i < SOCKTAB__PM_SKETCH; i++)
			sum += (int32_t)atomic_load(&net->pm_sketch[r][i]);
	return sum;
}

/* Sockets @from to @to - 1 of @low, bound to 127.0.0.1:20000 + k (below the range), connect to
 * 127.0.0.1:80. */
static void connect_from_below(struct socktab_net *net, struct socktab_sock **low, int from,
			       int to)
{
	for (int k = from; k < to; k++) {
		low[k] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK(low[k]);
		CHECK_EQ(check_bind4(low[k], "127.0.0.1", 20000 + k), 0);
		CHECK_EQ(check_connect4(low[k], "127.0.0.1", 80), 0);
	}
}

/* 40 sockets from the range connect to 127.0.0.1:80: the destination's index appears at
 * PM_BUILD of them. */
static void connect_until_indexed(struct socktab_net *net, struct socktab_sock **s4)
{
	uint32_t ni;
	uint64_t bytes;

	for (int k = 0; k < 40; k++) {
		s4[k] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(s4[k], "127.0.0.1", 80), 0);
		socktab__portmap_stats(net, &ni, &bytes);
		CHECK_EQ(ni, k < 32 ? 0 : 1);
	}
}

/*
 * An entry whose local port is outside the net's range is not counted toward an index (connect()
 * never examines its port): 50 sockets bound below the range connect to one destination, and the
 * connect()s from the range that follow build no index on their count, none that would be
 * dropped at once and remembered as a false one (pm_memo stays empty); the index appears at
 * PM_BUILD entries from the range, as for a destination without them. Ten more below the range
 * connect while the index is LIVE (the index's own then); every unlink takes off what its link
 * put in, so the sketch is back at 0 once all are gone, after the index has gone too.
 */
TEST(sketch_skips_ports_outside_the_range)
{
	uint64_t clk = 1;
	struct socktab_net *net = check_keyed_net(SOCKTAB_VARIANT_SOCKTAB, NLO, NHI, &clk, 9);
	struct socktab_sock *low[60], *s4[40];
	uint32_t ni;
	uint64_t bytes;

	CHECK(net);
	connect_from_below(net, low, 0, 50);
	CHECK_EQ(sketch_sum(net), 0);
	connect_until_indexed(net, s4);
	for (int i = 0; i < SOCKTAB__PM_BUCKETS; i++)
		CHECK_EQ(atomic_load(&net->pm_memo[i]), 0);
	connect_from_below(net, low, 50, 60);
	for (int k = 0; k < 40; k++)
		abort_close(s4[k]);
	socktab__portmap_stats(net, &ni, &bytes);
	CHECK_EQ(ni, 0);
	for (int k = 0; k < 60; k++)
		abort_close(low[k]);
	CHECK_EQ(sketch_sum(net), 0);
	socktab_net_free(net);
}

/*
 * Whether an entry was counted is decided when it is linked: 50 entries below the range, the
 * range widened over them, the entries gone, the range back. The sketch is at 0 (an unlink that
 * read the range again would take off 100 that were never put in) and the destination's index
 * appears at PM_BUILD entries, as before.
 */
TEST(sketch_counts_as_linked_across_range_changes)
{
	uint64_t clk = 1;
	struct socktab_net *net = check_keyed_net(SOCKTAB_VARIANT_SOCKTAB, NLO, NHI, &clk, 9);
	struct socktab_sock *low[50], *s4[40];

	CHECK(net);
	connect_from_below(net, low, 0, 50);
	CHECK_EQ(socktab_net_set_port_range(net, 20000, NHI), 0);
	for (int k = 0; k < 50; k++)
		abort_close(low[k]);
	CHECK_EQ(socktab_net_set_port_range(net, NLO, NHI), 0);
	CHECK_EQ(sketch_sum(net), 0);
	connect_until_indexed(net, s4);
	for (int k = 0; k < 40; k++)
		abort_close(s4[k]);
	CHECK_EQ(sketch_sum(net), 0);
	socktab_net_free(net);
}

/* Is the entry of ehash hash @h one of those the sketch and the index count at rate @s? (The
 * rule of portmap.c: the golden-ratio product of the hash in the lowest 1/s of 32 bits.) */
static bool sampled(uint32_t h, uint32_t s)
{
	return (uint64_t)(uint32_t)(h * 0x9e3779b1u) * s < (1ull << 32);
}

/*
 * The kernel's default range (28,232 ports): an index is built at one entry in 16 of its ports
 * (1,764), the sketch and the index count one entry in 32 (by hash), and the index goes below
 * half the build count (882). 2,600 connect()s toward one destination and all closed again:
 * before the index the sketch's two rows hold exactly the sampled entries; the index appears at
 * the connect() that finds 56 of them (56 x 32 >= 1,764), goes at the close that leaves 27
 * (27 x 32 < 882), and the sketch is back at 0.
 */
TEST(sketch_samples_a_wide_range)
{
	uint64_t clk = 1;
	struct socktab_net *net = check_keyed_net(SOCKTAB_VARIANT_SOCKTAB, 32768, 60999, &clk, 9);
	static struct socktab_sock *s4[2600];
	int nsampled = 0, built = -1, freed = -1;
	uint32_t ni;
	uint64_t bytes;

	CHECK(net);
	socktab__random_seed(9);
	for (int k = 0; k < 2600; k++) {
		bool before = nsampled >= 56; /* what the connect() below finds */

		s4[k] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(s4[k], "127.0.0.1", 80), 0);
		socktab__portmap_stats(net, &ni, &bytes);
		CHECK_EQ(ni, before ? 1 : 0);
		if (ni && built < 0)
			built = k;
		if (!ni)
			CHECK_EQ(sketch_sum(net), 2 * (int64_t)(nsampled +
							   sampled(atomic_load(&s4[k]->hash), 32)));
		nsampled += sampled(atomic_load(&s4[k]->hash), 32);
	}
	printf("sketch_samples_a_wide_range: index at %d entries, %d of 2600 sampled\n", built,
	       nsampled);
	CHECK(built > 0);
	for (int k = 0; k < 2600; k++) {
		nsampled -= sampled(atomic_load(&s4[k]->hash), 32);
		abort_close(s4[k]);
		socktab__portmap_stats(net, &ni, &bytes);
		CHECK_EQ(ni, nsampled >= 28 ? 1 : 0);
		if (!ni && freed < 0)
			freed = 2600 - k - 1;
	}
	printf("sketch_samples_a_wide_range: index gone at %d entries left\n", freed);
	CHECK_EQ(sketch_sum(net), 0);
	socktab_net_free(net);
}

/*
 * A word that fills is marked full by the next search that crosses it, not by the connect()
 * that fills it, and an unlink that frees a port of a marked word clears its mark: the 256 even
 * ports of a 512-port range (eight words) taken, the words that later searches crossed are
 * marked; one more connect() (an odd port) crosses all eight and marks them; a close on an even
 * port clears one. No mark ever says full of a word that is not.
 */
TEST(search_marks_full_words)
{
	uint64_t clk = 1;
	struct socktab_net *net = check_keyed_net(SOCKTAB_VARIANT_SOCKTAB, NLO, NHI, &clk, 9);
	static struct socktab_sock *s4[257];
	uint32_t marked;

	CHECK(net);
	for (int k = 0; k < 256; k++) {
		s4[k] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		CHECK_EQ(check_connect4(s4[k], "127.0.0.1", 80), 0);
		CHECK_EQ(check_port(s4[k]) % 2, 0);
	}
	CHECK_EQ(socktab__portmap_summary_check(net, &marked), 0);
	CHECK(marked < 8);
	s4[256] = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	CHECK_EQ(check_connect4(s4[256], "127.0.0.1", 80), 0);
	CHECK_EQ(check_port(s4[256]) % 2, 1);
	CHECK_EQ(socktab__portmap_summary_check(net, &marked), 0);
	CHECK_EQ(marked, 8);
	abort_close(s4[0]);
	CHECK_EQ(socktab__portmap_summary_check(net, &marked), 0);
	CHECK_EQ(marked, 7);
	for (int k = 1; k < 257; k++)
		abort_close(s4[k]);
	socktab_net_free(net);
}

/* Many threads connect and close toward one destination: ports unique, never a false failure
 * (the range never fills), index consistent (run under TSan by hand: build-tsan/test_nocliff). */
struct thr {
	struct socktab_net *net;
	int id;
	int failures;
};

static _Atomic unsigned char owner_of[65536];
static _Atomic uint32_t max_index_seen;

static void *worker(void *arg)
{
	struct thr *t = arg;
	struct socktab_sock *mine[150] = { 0 };
	uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(t->id + 1);

	socktab_thread_register();
	for (int op = 0; op < 6000; op++) {
		int k = (int)(xs(&rng) % 150);

		if (mine[k]) {
			int p = check_port(mine[k]);

			atomic_store(&owner_of[p], 0);
			abort_close(mine[k]);
			mine[k] = NULL;
			continue;
		}
		mine[k] = socktab_socket(t->net, SOCKTAB_TCP, AF_INET);
		if (check_connect4(mine[k], "127.0.0.1", 80)) {
			t->failures++;
			socktab_close(mine[k]);
			mine[k] = NULL;
			continue;
		}
		unsigned char prev = 0;
		uint32_t ni;
		uint64_t bytes;

		socktab__portmap_stats(t->net, &ni, &bytes);
		if (ni > atomic_load(&max_index_seen))
			atomic_store(&max_index_seen, ni);

		if (!atomic_compare_exchange_strong(&owner_of[check_port(mine[k])], &prev,
						    (unsigned char)(t->id + 1)))
			t->failures += 1000; /* two live sockets on one 4-tuple */
	}
	for (int k = 0; k < 150; k++)
		if (mine[k]) {
			atomic_store(&owner_of[check_port(mine[k])], 0);
			abort_close(mine[k]);
		}
	socktab_thread_unregister();
	return NULL;
}

TEST(concurrent_unique)
{
	uint64_t clk = 1;
	struct socktab_net *net = check_keyed_net(SOCKTAB_VARIANT_SOCKTAB, 43000, 43799, &clk, 11);
	struct thr t[4];
	pthread_t th[4];
	uint32_t ni;
	uint64_t bytes;

	CHECK(net);
	for (int k = 0; k < 4; k++) {
		t[k] = (struct thr){ net, k, 0 };
		CHECK_EQ(pthread_create(&th[k], NULL, worker, &t[k]), 0);
	}
	for (int k = 0; k < 4; k++)
		pthread_join(th[k], NULL);
	for (int k = 0; k < 4; k++)
		CHECK_EQ(t[k].failures, 0);
	CHECK_EQ(atomic_load(&max_index_seen), 1); /* the searches went through the index */
	socktab__portmap_stats(net, &ni, &bytes);
	CHECK_EQ(ni, 0);
	socktab_net_free(net);
}

/*
 * The sketch's hand-back under races: four threads each connect twelve sockets to one
 * destination of a 512-port range and close them again, 12,000 times, so the destination's
 * index is built and dropped over and over while other threads' hooks run; three such nets in
 * turn. A hook that saw the index LIVE may add to its @sdelta after the drop handed it back; the
 * index's free callback hands that back too, so once every entry is gone the sketch sums to 0,
 * and no summary bit says full of a word that is not. Without the second hand-back a net ended
 * at -6 to +6 in about three runs of four (each of the three nets a chance to see it).
 */
static struct socktab_net *balance_net;
static _Atomic int balance_failures; /* connect()s that failed (the range never fills) */

static void *balance_worker(void *arg)
{
	struct socktab_sock *mine[12];

	(void)arg;
	socktab_thread_register();
	for (int round = 0; round < 12000; round++) {
		for (int k = 0; k < 12; k++) {
			mine[k] = socktab_socket(balance_net, SOCKTAB_TCP, AF_INET);
			if (!mine[k] || check_connect4(mine[k], "127.0.0.1", 80))
				atomic_fetch_add(&balance_failures, 1);
		}
		for (int k = 0; k < 12; k++)
			if (mine[k])
				abort_close(mine[k]);
	}
	socktab_thread_unregister();
	return NULL;
}

TEST(sketch_balanced_under_races)
{
	for (int n = 0; n < 3; n++) {
		uint64_t clk = 1;
		pthread_t th[4];
		uint32_t ni, marked;
		uint64_t bytes;

		balance_net = check_keyed_net(SOCKTAB_VARIANT_SOCKTAB, NLO, NHI, &clk, 9);
		CHECK(balance_net);
		for (int k = 0; k < 4; k++)
			CHECK_EQ(pthread_create(&th[k], NULL, balance_worker, NULL), 0);
		for (int k = 0; k < 4; k++)
			CHECK_EQ(pthread_join(th[k], NULL), 0);
		CHECK_EQ(atomic_load(&balance_failures), 0);
		socktab__portmap_stats(balance_net, &ni, &bytes);
		CHECK_EQ(ni, 0);
		CHECK_EQ(socktab__portmap_summary_check(balance_net, &marked), 0);
		/* The last index's free callback has run after a barrier (the net's teardown
		 * waits for it too). */
		socktab__rcu_barrier();
		CHECK_EQ(sketch_sum(balance_net), 0);
		socktab_net_free(balance_net);
	}
}

CHECK_MAIN(same_ports_as_linux, exhaustion_exact, tw_reuse_recycling, index_freed_below_threshold,
	   sketch_forgets_a_cooled_index, sketch_skips_ports_outside_the_range,
	   sketch_counts_as_linked_across_range_changes, sketch_samples_a_wide_range,
	   search_marks_full_words, sketch_balanced_under_races,
	   concurrent_unique)
