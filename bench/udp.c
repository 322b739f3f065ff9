/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab bench udp: the UDP 4-tuple hash experiment, before and after. One local (address, port),
 * 127.0.0.1:8000, holds N sockets each connected to its own peer (and M unconnected ones, all
 * with SO_REUSEADDR); the loop looks up datagrams from those N peers and from U peers nobody is
 * connected to, round-robin, with socktab_lookup_udp4(, SOCKTAB_LOOPBACK_IFINDEX, 0) (+ socktab_sock_put()). With --hash4
 * both, rounds of the two modes alternate in one run (the switch only tells lookups whether to
 * consult hash4), each mode's throughput is the median of its rounds, and hash4_speedup is
 * on / off. Without hash4 every lookup scores the whole hash2 chain of the port (N + M sockets);
 * with it a connected peer costs one short hash4 chain.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "bench.h"
#include "opt.h"
#include "socktab/socktab.h"

#define MAX_ROUNDS 4096

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: socktab bench udp --connected N [--unconnected M] [--unknown U]\n"
		"                         [--hash4 on|off|both] [-l SECONDS] [--slots S] [--seed S]\n"
		"Lookups of datagrams to one UDP (address, port) holding N connected sockets (to\n"
		"distinct peers) and M unconnected ones, from the N peers and U unknown peers\n"
		"(default 1), round-robin. Prints neper-style key=value lines: throughput= (lookups\n"
		"per second, median of the rounds) per mode and, with --hash4 both (default),\n"
		"hash4_speedup= (on / off, same run). -l: total seconds (default 2).\n");
}

struct key {
	uint32_t saddr;
	uint16_t sport;
};

struct tally {
	uint64_t lookups, hit_connected, hit_other, miss;
	double rate[MAX_ROUNDS];
	int rounds;
};

/* One timed round of @n lookups starting at key *pos. Returns lookups per second. */
static double round_run(struct socktab_net *net, const struct key *keys, size_t nkeys,
			size_t *pos, uint64_t n, struct socktab_sock *const *conn, size_t nconn,
			struct tally *t)
{
	uint32_t daddr = htonl(0x7f000001);
	uint16_t dport = htons(8000);
	uint64_t t0 = now_ns(), hits = 0, conn_hits = 0, miss = 0;
	size_t p = *pos;

	for (uint64_t i = 0; i < n; i++) {
		struct socktab_sock *sk =
			socktab_lookup_udp4(net, keys[p].saddr, keys[p].sport, daddr, dport, SOCKTAB_LOOPBACK_IFINDEX, 0);

		if (!sk) {
			miss++;
		} else {
			/* connected peers come first in keys[]: key p belongs to conn[p] */
			if (p < nconn && sk == conn[p])
				conn_hits++;
			hits++;
			socktab_sock_put(sk);
		}
		if (++p == nkeys)
			p = 0;
	}
	uint64_t dt = now_ns() - t0;

	*pos = p;
	t->lookups += n;
	t->hit_connected += conn_hits;
	t->hit_other += hits - conn_hits;
	t->miss += miss;
	return dt ? (double)n * 1e9 / (double)dt : 0;
}

static int add_sock(struct socktab_net *net, struct socktab_sock **out, uint32_t peer,
		    uint16_t pport)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(8000) };
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_UDP, AF_INET);
	int one = 1, err;

	if (!sk)
		return -errno;
	a.sin_addr.s_addr = htonl(0x7f000001);
	socktab_setsockopt(sk, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	err = socktab_bind(sk, (struct sockaddr *)&a, sizeof(a));
	if (!err && peer) {
		a.sin_addr.s_addr = peer;
		a.sin_port = pport;
		err = socktab_connect(sk, (struct sockaddr *)&a, sizeof(a));
	}
	if (err) {
		socktab_close(sk);
		return err;
	}
	*out = sk;
	return 0;
}

int bench_udp_main(int argc, char **argv)
{
	enum { O_CONNECTED = 256, O_UNCONNECTED, O_UNKNOWN, O_SLOTS, O_SEED, O_HASH4 };
	static const struct option longopts[] = {
		{ "connected", required_argument, NULL, O_CONNECTED },
		{ "unconnected", required_argument, NULL, O_UNCONNECTED },
		{ "unknown", required_argument, NULL, O_UNKNOWN },
		{ "slots", required_argument, NULL, O_SLOTS },
		{ "seed", required_argument, NULL, O_SEED },
		{ "hash4", required_argument, NULL, O_HASH4 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* --hash4: index + 1 is the set of modes (bit 0: on, bit 1: off) */
	static const char *const hash4_names[] = { "on", "off", "both", NULL };
	const struct opt_parser op = { "socktab bench udp", "hl:", longopts };
	long nconn = -1, nunconn = 0, nunknown = 1, slots = 16384;
	uint64_t seed = 1;
	double seconds = 2;
	int modes = 3, opt, v;
	struct socktab_net_params p;
	struct socktab_net *net;
	struct socktab_sock **conn, **unconn;
	struct key *keys;
	struct tally T[2];
	size_t nkeys, pos = 0;
	int rc = 0;

	opt_start();
	while ((opt = opt_next(&op, argc, argv)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case O_CONNECTED:
			bad = opt_count_int(&op, "--connected", optarg, 0, 200000, &v);
			nconn = v;
			break;
		case O_UNCONNECTED:
			bad = opt_count_int(&op, "--unconnected", optarg, 0, 200000, &v);
			nunconn = v;
			break;
		case O_UNKNOWN:
			bad = opt_count_int(&op, "--unknown", optarg, 0, 60000, &v);
			nunknown = v;
			break;
		case O_SLOTS:
			bad = opt_count_int(&op, "--slots", optarg, 1, 65536, &v);
			slots = v;
			break;
		case O_SEED:
			bad = opt_seed(&op, "--seed", optarg, &seed);
			break;
		case 'l':
			bad = opt_real(&op, "-l", optarg, 0.001, 3600, &seconds);
			break;
		case O_HASH4:
			bad = opt_choice(&op, "--hash4", optarg, hash4_names, &modes);
			modes++;
			break;
		default:
			return 2;
		}
		if (bad)
			return 2;
	}
	if (opt_no_operands(&op, argc, argv))
		return 2;
	if (nconn < 0) {
		opt_fail(&op, "--connected N is required");
		return 2;
	}
	if (nconn + nunknown == 0) {
		opt_fail(&op, "--connected 0 needs --unknown 1 or more (lookups need a peer)");
		return 2;
	}

	socktab_thread_register();
	socktab_net_params_init(&p);
	p.udp_hash_entries = (uint32_t)slots;
	p.fixed_secret = 1;
	for (size_t i = 0; i < sizeof(p.secret); i++)
		p.secret[i] = (uint8_t)((seed >> (8 * (i % 8))) + i * 131u);
	net = socktab_net_new(&p);
	conn = calloc((size_t)nconn + 1, sizeof(*conn));
	unconn = calloc((size_t)nunconn + 1, sizeof(*unconn));
	nkeys = (size_t)(nconn + nunknown);
	keys = calloc(nkeys, sizeof(*keys));
	if (!net || !conn || !unconn || !keys) {
		fprintf(stderr, "socktab bench udp: out of memory\n");
		return 1;
	}
	/* Peers: 127.2.x.y : 10000 + (i % 50000), distinct 4-tuples. */
	for (long i = 0; i < nconn; i++) {
		uint32_t peer = htonl(0x7f020000u + (uint32_t)(i / 50000));
		uint16_t pport = htons((uint16_t)(10000 + i % 50000));
		int err = add_sock(net, &conn[i], peer, pport);

		if (err) {
			fprintf(stderr, "socktab bench udp: connected socket %ld: %s\n", i,
				strerror(-err));
			return 1;
		}
		keys[i] = (struct key){ peer, pport };
	}
	for (long i = 0; i < nunconn; i++) {
		int err = add_sock(net, &unconn[i], 0, 0);

		if (err) {
			fprintf(stderr, "socktab bench udp: unconnected socket %ld: %s\n", i,
				strerror(-err));
			return 1;
		}
	}
	for (long i = 0; i < nunknown; i++) /* 127.3.0.1 : 5000 + i: nobody's peer */
		keys[nconn + i] = (struct key){ htonl(0x7f030001u), htons((uint16_t)(5000 + i)) };

	/* Calibrate a round to about 5 ms in the slower mode, then alternate the modes. */
	memset(T, 0, sizeof(T));
	socktab_net_set_udp_hash4(net, !(modes & 1));
	double r0 = round_run(net, keys, nkeys, &pos, 2000, conn, (size_t)nconn, &T[1]);
	uint64_t per_round = (uint64_t)(r0 * 0.005) + 1;
	int nmodes = modes == 3 ? 2 : 1;
	int rounds = (int)(seconds / 0.005 / nmodes);

	if (rounds < 3)
		rounds = 3;
	if (rounds > MAX_ROUNDS)
		rounds = MAX_ROUNDS;
	memset(T, 0, sizeof(T));
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 2; k++) {
			int m = (r & 1) ? 1 - k : k; /* ABBA order: drift hits both modes alike */

			if (!(modes & (1 << m)))
				continue;
			socktab_net_set_udp_hash4(net, m == 0);
			T[m].rate[T[m].rounds++] = round_run(net, keys, nkeys, &pos, per_round, conn,
							     (size_t)nconn, &T[m]);
		}
	}

	printf("benchmark=udp_lookup\nseed=%llu\nconnected=%ld\nunconnected=%ld\nunknown_peers=%ld\n"
	       "slots=%ld\nrounds=%d\nlookups_per_round=%llu\n",
	       (unsigned long long)seed, nconn, nunconn, nunknown, slots, rounds,
	       (unsigned long long)per_round);
	double med[2] = { 0, 0 };

	for (int m = 0; m < 2; m++) {
		if (!(modes & (1 << m)))
			continue;
		qsort(T[m].rate, (size_t)T[m].rounds, sizeof(double), bench_cmp_double);
		med[m] = T[m].rate[T[m].rounds / 2];
		printf("\nhash4=%s\nthroughput=%.0f\nlookup_ns=%.1f\nthroughput_min=%.0f\n"
		       "throughput_max=%.0f\nlookups=%llu\nhit_connected=%llu\nhit_unconnected=%llu\n"
		       "miss=%llu\n",
		       m == 0 ? "on" : "off", med[m], 1e9 / med[m], T[m].rate[0],
		       T[m].rate[T[m].rounds - 1], (unsigned long long)T[m].lookups,
		       (unsigned long long)T[m].hit_connected, (unsigned long long)T[m].hit_other,
		       (unsigned long long)T[m].miss);
		/* every connected peer must reach its own socket in both modes */
		if (T[m].hit_connected + T[m].hit_other + T[m].miss != T[m].lookups)
			rc = 1;
	}
	if (modes == 3)
		printf("\nhash4_speedup=%.3f\n", med[0] / med[1]);
	for (long i = 0; i < nconn; i++)
		socktab_close(conn[i]);
	for (long i = 0; i < nunconn; i++)
		socktab_close(unconn[i]);
	socktab_net_free(net);
	socktab_thread_unregister();
	free(conn);
	free(unconn);
	free(keys);
	return rc;
}
