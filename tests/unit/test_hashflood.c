/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hash flooding: an attacker who knows the ehash function and a zero (unkeyed) secret picks SYN
 * sources (remote address in 127/8, remote port) whose 4-tuples toward one listener all land in
 * one ehash slot. The same tuples are then inserted as children into a net with a random secret.
 *
 * With the zero secret every tuple shares one chain (each lookup walks all of them); with the
 * random secret the chains look like n balls in m bins: mean length over non-empty slots
 * lambda / (1 - e^-lambda) with lambda = n / m, and a maximum of a handful. The test prints
 * both and asserts the keyed maximum stays below a bound whose chance of being exceeded by
 * random placement is under 1e-8 (so a failure means the secret does not reach the hash).
 * Internal access (src headers) reads the chains and the hash function.
 */
#include <math.h>
#include <time.h>

#include "check.h"
#include "net.h"

#define SLOTS 4096
#define NTUPLES 2000
#define LPORT 5000
#define MAX_CHAIN_BOUND 12 /* P(some slot >= 12 | 2000 balls, 4096 bins) ~ 1.5e-9 */

struct tuple {
	uint32_t raddr; /* network order */
	uint16_t rport; /* network order */
};

static struct tuple tuples[NTUPLES];

static struct socktab_net *flood_net(int zero_secret)
{
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	p.ehash_entries = SLOTS;
	p.ehash_locks = 64;
	p.fixed_secret = zero_secret; /* p.secret is all zeros after params_init */
	memset(p.secret, 0, sizeof(p.secret));
	return socktab_net_new(&p);
}

/* The attacker's offline search: tuples whose zero-secret hash hits slot @target. */
static int find_colliding(struct socktab_net *zero, uint32_t target)
{
	uint32_t laddr = htonl(0x7f000001);
	int n = 0;

	/* Bounded: 2^24 addresses x 64 ports, far more than the ~8M tries needed. */
	for (uint32_t a = 2; a < (1u << 24) && n < NTUPLES; a++) {
		for (uint32_t port = 1024; port < 1024 + 64 && n < NTUPLES; port++) {
			uint32_t raddr = htonl(0x7f000000 | a);
			uint16_t rport = htons((uint16_t)port);
			uint32_t h = socktab__ehashfn4(zero, laddr, LPORT, raddr, rport);

			if ((h & (SLOTS - 1)) == target) {
				tuples[n].raddr = raddr;
				tuples[n].rport = rport;
				n++;
			}
		}
	}
	return n;
}

struct chains {
	int max, nonempty, total;
	double mean; /* over non-empty slots */
};

static struct chains measure(struct socktab_net *net)
{
	struct socktab__tables *t = net->tab;
	struct chains c = { 0, 0, 0, 0 };

	for (uint32_t i = 0; i <= t->ehash_mask; i++) {
		int len = 0;

		/* Bounded by the number of sockets in the net. */
		for (uintptr_t p = socktab__chead_load(&t->ehash[i].head, memory_order_relaxed);
		     !socktab__is_nulls(p) && len <= NTUPLES;
		     p = atomic_load(&((struct socktab_sock *)p)->node.next))
			len++;
		if (len > c.max)
			c.max = len;
		if (len) {
			c.nonempty++;
			c.total += len;
		}
	}
	c.mean = c.nonempty ? (double)c.total / c.nonempty : 0;
	return c;
}

static int insert_all(struct socktab_net *net, struct socktab_sock **listener)
{
	struct sockaddr_in l = check_sin("127.0.0.1", LPORT);

	*listener = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	if (!*listener || socktab_bind(*listener, (struct sockaddr *)&l, sizeof(l)) ||
	    socktab_listen(*listener, 128))
		return -1;
	for (int i = 0; i < NTUPLES; i++) {
		struct sockaddr_in r = { .sin_family = AF_INET, .sin_port = tuples[i].rport };

		r.sin_addr.s_addr = tuples[i].raddr;
		if (!socktab_sock_new_child(*listener, (struct sockaddr *)&l, (struct sockaddr *)&r,
					    sizeof(r), SOCKTAB_LOOPBACK_IFINDEX, 0))
			return -1;
	}
	return 0;
}

/* Mean ns of one established lookup of the tuple inserted first (deepest in its chain). */
static double lookup_ns(struct socktab_net *net)
{
	struct timespec a, b;
	const int reps = 2000;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < reps; i++) {
		struct socktab_sock *sk = socktab_lookup_established4(
			net, tuples[0].raddr, tuples[0].rport, htonl(0x7f000001), htons(LPORT), SOCKTAB_LOOPBACK_IFINDEX, 0);

		if (!sk)
			return -1;
		socktab_sock_put(sk);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / reps;
}

TEST(keyed_chains_stay_short)
{
	struct socktab_net *zero = flood_net(1), *keyed = flood_net(0);
	struct socktab_sock *lz, *lk;
	double lambda = (double)NTUPLES / SLOTS;
	double expect_mean = lambda / (1 - exp(-lambda));

	CHECK(zero && keyed);
	CHECK_EQ(find_colliding(zero, 1234), NTUPLES);
	CHECK_EQ(insert_all(zero, &lz), 0);
	CHECK_EQ(insert_all(keyed, &lk), 0);

	struct chains cz = measure(zero), ck = measure(keyed);
	double nz = lookup_ns(zero), nk = lookup_ns(keyed);

	printf("hashflood: %d adversarial 4-tuples, %d slots (lambda %.3f)\n", NTUPLES, SLOTS,
	       lambda);
	printf("hashflood: zero secret:   max_chain=%d mean_chain=%.2f nonempty=%d lookup_ns=%.0f\n",
	       cz.max, cz.mean, cz.nonempty, nz);
	printf("hashflood: random secret: max_chain=%d mean_chain=%.2f nonempty=%d lookup_ns=%.0f\n",
	       ck.max, ck.mean, ck.nonempty, nk);
	printf("hashflood: expected with random placement: mean_chain=%.2f nonempty=%.0f "
	       "max_chain<%d (p>1-1e-8)\n",
	       expect_mean, SLOTS * (1 - exp(-lambda)), MAX_CHAIN_BOUND);
	/* The tuples are adversarial: unkeyed, they all share one chain. */
	CHECK_EQ(cz.max, NTUPLES);
	CHECK_EQ(ck.total, NTUPLES);
	CHECK(ck.max < MAX_CHAIN_BOUND);
	/* Mean within 15 % of balls-in-bins (its standard error here is about 2 %). */
	CHECK(fabs(ck.mean - expect_mean) < 0.15 * expect_mean);
	socktab_net_free(zero);
	socktab_net_free(keyed);
}

CHECK_MAIN(keyed_chains_stay_short)
