/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab bench rss: what RSS-aware port choice costs over a plain connect(), and whether every
 * chosen port lands on its queue. One net (socktab variant), a range pre-filled to the given
 * occupancy toward 127.0.0.1:80 (ports pinned with one-port IP_LOCAL_PORT_RANGE, kernel order:
 * same parity as the low end first), RSS with the Microsoft verification key and a RETA of
 * 128 entries over Q queues; then rounds alternate N plain and N RSS connect()+abortive close
 * cycles (random queue per connect), timing connect() only. The queue of each RSS choice is
 * re-derived with the plain byte-wise Toeplitz hash.
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

static const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void help(void)
{
	printf("usage: socktab bench rss [--queues Q] [--occupancy F] [--range LO-HI] "
	       "[-N CONNECTS] [--rounds R] [--seed S]\n"
	       "defaults: --queues 16 --occupancy 0.5 --range 32768-60999 -N 2000 "
	       "--rounds 5\n");
}

int bench_rss_main(int argc, char **argv)
{
	enum { O_QUEUES = 256, O_OCC, O_RANGE, O_ROUNDS, O_SEED };
	static const struct option longopts[] = {
		{ "queues", required_argument, NULL, O_QUEUES },
		{ "occupancy", required_argument, NULL, O_OCC },
		{ "range", required_argument, NULL, O_RANGE },
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "seed", required_argument, NULL, O_SEED },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct opt_parser op = { "socktab bench rss", "hN:", longopts };
	int lo = 32768, hi = 60999, n = 2000, queues = 16, rounds = 5, opt;
	double occ = 0.5;
	uint64_t seed = (uint64_t)time(NULL);
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(80) };
	struct linger lg = { 1, 0 };

	opt_start();
	while ((opt = opt_next(&op, argc, argv)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'h':
			help();
			return 0;
		case O_QUEUES:
			bad = opt_count_int(&op, "--queues", optarg, 1, 128, &queues);
			break;
		case O_OCC:
			bad = opt_real(&op, "--occupancy", optarg, 0, 0.95, &occ);
			break;
		case O_RANGE:
			bad = opt_port_range(&op, "--range", optarg, &lo, &hi);
			break;
		case 'N':
			bad = opt_count_int(&op, "-N", optarg, 1, 1000000, &n);
			break;
		case O_ROUNDS:
			bad = opt_count_int(&op, "--rounds", optarg, 1, 100, &rounds);
			break;
		case O_SEED:
			bad = opt_seed(&op, "--seed", optarg, &seed);
			break;
		default:
			return 2;
		}
		if (bad)
			return 2;
	}
	if (optind < argc) {
		opt_fail(&op, "unexpected argument '%s'", argv[optind]);
		return 2;
	}
	if (n < rounds) {
		opt_fail(&op, "-N: %d connects for %d rounds (each round needs one)", n, rounds);
		return 2;
	}
	socktab_thread_register();
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct socktab_net_params p;

	socktab_net_params_init(&p);
	p.port_low = (uint16_t)lo;
	p.port_high = (uint16_t)hi;
	p.fixed_secret = 1;
	memcpy(p.secret, &seed, sizeof(seed));
	struct socktab_net *net = socktab_net_new(&p);
	uint16_t reta[128];

	for (int i = 0; i < 128; i++)
		reta[i] = (uint16_t)(i % queues);
	if (!net || socktab_net_set_rss(net, ms_key, sizeof(ms_key), reta, 128)) {
		fprintf(stderr, "bench rss: cannot create the net\n");
		return 1;
	}
	int size = hi - lo + 1, nfill = (int)(occ * size), k = 0;
	struct socktab_sock **fill = calloc((size_t)nfill + 1, sizeof(*fill));

	for (int parity = 0; parity < 2 && k < nfill; parity++)
		for (int off = parity; off < size && k < nfill; off += 2) {
			uint32_t port = (uint32_t)(lo + off), r = port << 16 | port;
			struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

			socktab_setsockopt(sk, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &r, sizeof(r));
			if (socktab_connect(sk, (struct sockaddr *)&dst, sizeof(dst))) {
				socktab_close(sk);
				continue;
			}
			fill[k++] = sk;
		}
	double sum[2] = { 0, 0 };
	long cnt[2] = { 0, 0 }, on_queue = 0, fails = 0;
	uint64_t rng = seed | 1;

	for (int r = 0; r < rounds; r++)
		for (int mode = 0; mode < 2; mode++)
			for (int i = 0; i < n / rounds; i++) {
				struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
				int q = -1;

				rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
				if (mode)
					q = (int)(rng % (uint64_t)queues);
				socktab_sock_set_rss_queue(sk, q);
				socktab_setsockopt(sk, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
				uint64_t t0 = now_ns();
				int err = socktab_connect(sk, (struct sockaddr *)&dst, sizeof(dst));
				uint64_t t1 = now_ns();

				if (err) {
					fails++;
				} else {
					sum[mode] += (double)(t1 - t0);
					cnt[mode]++;
				}
				if (!err && mode) {
					struct sockaddr_in me;
					socklen_t len = sizeof(me);
					uint8_t in[12];

					socktab_getsockname(sk, (struct sockaddr *)&me, &len);
					memcpy(in, &dst.sin_addr, 4);
					memcpy(in + 4, &me.sin_addr, 4);
					memcpy(in + 8, &dst.sin_port, 2);
					memcpy(in + 10, &me.sin_port, 2);
					on_queue += reta[socktab_rss_hash(ms_key, 40, in, 12) & 127] == q;
				}
				socktab_close(sk);
			}
	printf("# socktab bench rss\nseed=%llu\nrange=%d-%d\noccupancy=%.2f\nqueues=%d\n"
	       "reta_size=128\nconnects_per_mode=%ld\n",
	       (unsigned long long)seed, lo, hi, occ, queues, cnt[0]);
	printf("connect_ns_mean_plain=%.1f\nconnect_ns_mean_rss=%.1f\nrss_cost_ratio=%.2f\n"
	       "rss_on_queue_pct=%.2f\nfailures=%ld\n",
	       sum[0] / (double)cnt[0], sum[1] / (double)cnt[1],
	       (sum[1] / (double)cnt[1]) / (sum[0] / (double)cnt[0]),
	       100.0 * (double)on_queue / (double)cnt[1], fails);
	for (int i = 0; i < k; i++)
		socktab_close(fill[i]);
	free(fill);
	socktab_net_free(net);
	socktab_thread_unregister();
	return 0;
}
