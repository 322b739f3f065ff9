/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab bench rss: what RSS-aware port choice costs, and whether every chosen port lands on
 * its queue. One net (socktab variant) per measurement, RSS with the Microsoft verification key
 * and a RETA of 128 entries over Q queues (entry i -> queue i % Q), connects toward
 * 127.0.0.1:80, connect() alone timed, each followed by an abortive close so the occupancy
 * holds; the queue of each RSS choice is re-derived with the plain byte-wise Toeplitz hash.
 *
 * Default (the share experiment): for Q = 4 and 16 (or --queues Q), the cost of a connect() to
 * queue 0 when that queue's share of the range (the ports whose reply lands on it) is empty,
 * and when --share of it (default 95 %) is taken by connections of that queue; rounds alternate
 * between the two nets. Prints both means, their ratio (full_vs_empty), the candidates tried
 * and passed over by the filter per connect, and the bytes of the per-queue summaries.
 * --occupancy F (the mixed experiment): the range pre-filled to F over all queues (ports pinned
 * with one-port IP_LOCAL_PORT_RANGE, kernel order: same parity as the low end first); rounds
 * alternate N plain and N RSS connect()s (random queue per connect).
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

#define RETA_SIZE 128

static void help(void)
{
	printf("usage: socktab bench rss [--queues Q] [--share F | --occupancy F] [--range LO-HI]\n"
	       "                         [-N CONNECTS] [--rounds R] [--seed S]\n"
	       "default: the share experiment, Q = 4 and 16, --share 0.95, -N 20000 per point\n"
	       "--occupancy F: the mixed experiment (plain vs RSS at F over all queues), -N 2000,\n"
	       "  --queues 16\n"
	       "both: --range 32768-60999 --rounds 5\n");
}

/* The queue a reply to @sk (connected to @dst) lands on, by the plain hash. */
static int reply_queue(struct socktab_sock *sk, const struct sockaddr_in *dst,
		       const uint16_t *reta)
{
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	uint8_t in[12];

	socktab_getsockname(sk, (struct sockaddr *)&me, &len);
	memcpy(in, &dst->sin_addr, 4);
	memcpy(in + 4, &me.sin_addr, 4);
	memcpy(in + 8, &dst->sin_port, 2);
	memcpy(in + 10, &me.sin_port, 2);
	return reta[socktab_rss_hash(ms_key, 40, in, 12) & (RETA_SIZE - 1)];
}

static struct socktab_net *rss_net(int lo, int hi, uint64_t seed, const uint16_t *reta)
{
	struct socktab_net_params p;
	struct socktab_net *net;

	socktab_net_params_init(&p);
	p.port_low = (uint16_t)lo;
	p.port_high = (uint16_t)hi;
	p.fixed_secret = 1;
	memcpy(p.secret, &seed, sizeof(seed));
	net = socktab_net_new(&p);
	if (net && socktab_net_set_rss(net, ms_key, sizeof(ms_key), reta, RETA_SIZE)) {
		socktab_net_free(net);
		net = NULL;
	}
	return net;
}

/* A connect() to @dst on queue @q (-1: none); the socket, or NULL with *err set. */
static struct socktab_sock *rss_connect(struct socktab_net *net, const struct sockaddr_in *dst,
					int q, bool linger0, uint64_t *ns, int *err)
{
	struct linger lg = { 1, 0 };
	struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
	uint64_t t0, t1;

	if (!sk) {
		*err = -ENOMEM;
		return NULL;
	}
	socktab_sock_set_rss_queue(sk, q);
	if (linger0)
		socktab_setsockopt(sk, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	t0 = bench_now_ns();
	*err = socktab_connect(sk, (const struct sockaddr *)dst, sizeof(*dst));
	t1 = bench_now_ns();
	if (ns)
		*ns = t1 - t0;
	if (*err) {
		socktab_close(sk);
		return NULL;
	}
	return sk;
}

/* What one state (empty or full) of the share experiment measured. */
struct share_point {
	struct socktab_net *net;
	struct bench_histo h;
	double sum_ns;
	long connects, fails, on_queue;
	uint64_t tried, rejected;
};

/* @n connect()+close cycles to queue @q on @pt's net; counters from the net's stats. */
static void share_measure(struct share_point *pt, const struct sockaddr_in *dst, int q, int n,
			  const uint16_t *reta)
{
	struct socktab_net_stats s0, s1;
	struct socktab_rss_stats r0, r1;

	socktab_net_stats(pt->net, &s0);
	socktab_net_rss_stats(pt->net, &r0);
	for (int i = 0; i < n; i++) {
		uint64_t ns;
		int err;
		struct socktab_sock *sk = rss_connect(pt->net, dst, q, true, &ns, &err);

		if (!sk) {
			pt->fails++;
			continue;
		}
		pt->connects++;
		pt->sum_ns += (double)ns;
		bench_histo_add(&pt->h, ns);
		pt->on_queue += reply_queue(sk, dst, reta) == q;
		socktab_close(sk);
	}
	socktab_net_stats(pt->net, &s1);
	socktab_net_rss_stats(pt->net, &r1);
	pt->tried += s1.connect_ports_tried - s0.connect_ports_tried;
	pt->rejected += r1.connect_rss_rejected - r0.connect_rss_rejected;
}

static double per(double x, long n)
{
	return n ? x / (double)n : 0;
}

/* The share experiment for @queues queues. 0, or 1 when a net could not be made. */
static int share_run(int queues, int lo, int hi, double share, int n, int rounds, uint64_t seed)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(80) };
	struct share_point pt[2]; /* 0: the queue's share empty, 1: filled to @share */
	struct socktab_rss_stats rs;
	struct socktab_sock **fill;
	uint16_t reta[RETA_SIZE];
	int share_ports = 0, target, k = 0, q = 0, err;
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	const char *name[2] = { "empty", "full" };

	for (int i = 0; i < RETA_SIZE; i++)
		reta[i] = (uint16_t)(i % queues);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(pt, 0, sizeof(pt));
	for (int s = 0; s < 2; s++) {
		bench_histo_init(&pt[s].h);
		pt[s].net = rss_net(lo, hi, seed, reta);
		if (!pt[s].net) {
			fprintf(stderr, "bench rss: cannot create the net\n");
			return 1;
		}
	}
	/* The queue's share: the ports of the range whose reply lands on it, for the local
	 * address connect() picks toward the destination. */
	struct socktab_sock *probe = rss_connect(pt[0].net, &dst, -1, true, NULL, &err);

	if (!probe) {
		fprintf(stderr, "bench rss: connect: %s\n", strerror(-err));
		return 1;
	}
	socktab_getsockname(probe, (struct sockaddr *)&me, &len);
	socktab_close(probe);
	for (int port = lo; port <= hi; port++) {
		uint8_t in[12];
		uint16_t p16 = htons((uint16_t)port);

		memcpy(in, &dst.sin_addr, 4);
		memcpy(in + 4, &me.sin_addr, 4);
		memcpy(in + 8, &dst.sin_port, 2);
		memcpy(in + 10, &p16, 2);
		share_ports += reta[socktab_rss_hash(ms_key, 40, in, 12) & (RETA_SIZE - 1)] == q;
	}
	target = (int)(share * share_ports);
	fill = calloc((size_t)target + 1, sizeof(*fill));
	if (!fill)
		return 1;
	while (k < target) {
		fill[k] = rss_connect(pt[1].net, &dst, q, true, NULL, &err);
		if (!fill[k])
			break;
		k++;
	}
	for (int r = 0; r < rounds; r++)
		for (int s = 0; s < 2; s++)
			share_measure(&pt[s], &dst, q, n / rounds, reta);
	socktab_net_rss_stats(pt[1].net, &rs);

	printf("share_ports_q%d=%d\nfilled_q%d=%d\n", queues, share_ports, queues, k);
	for (int s = 0; s < 2; s++) {
		printf("connect_ns_mean_%s_q%d=%.1f\nconnect_ns_p50_%s_q%d=%.1f\n"
		       "connect_ns_p99_%s_q%d=%.1f\nports_tried_mean_%s_q%d=%.2f\n"
		       "rss_rejected_mean_%s_q%d=%.2f\n",
		       name[s], queues, per(pt[s].sum_ns, pt[s].connects), name[s], queues,
		       bench_histo_percentile(&pt[s].h, 50), name[s], queues,
		       bench_histo_percentile(&pt[s].h, 99), name[s], queues,
		       per((double)pt[s].tried, pt[s].connects), name[s], queues,
		       per((double)pt[s].rejected, pt[s].connects));
	}
	double ratio = per(pt[1].sum_ns, pt[1].connects) / per(pt[0].sum_ns, pt[0].connects);

	printf("full_vs_empty_q%d=%.2f\nfull_vs_empty_p50_q%d=%.2f\nrss_on_queue_pct_q%d=%.2f\n"
	       "failures_q%d=%ld\n"
	       "index_bytes_q%d=%llu\nindexes_q%d=%llu\nindex_bytes_per_destination_q%d=%llu\n"
	       "rss_state_bytes_q%d=%llu\n",
	       queues, ratio, queues,
	       bench_histo_percentile(&pt[1].h, 50) / bench_histo_percentile(&pt[0].h, 50), queues,
	       100.0 * per((double)(pt[0].on_queue + pt[1].on_queue),
			   pt[0].connects + pt[1].connects),
	       queues, pt[0].fails + pt[1].fails, queues, (unsigned long long)rs.index_bytes,
	       queues, (unsigned long long)rs.indexes, queues,
	       (unsigned long long)(rs.indexes ? rs.index_bytes / rs.indexes : 0), queues,
	       (unsigned long long)rs.state_bytes);
	fflush(stdout);
	for (int i = 0; i < k; i++)
		socktab_close(fill[i]);
	free(fill);
	for (int s = 0; s < 2; s++)
		socktab_net_free(pt[s].net);
	return 0;
}

/* The mixed experiment: plain vs RSS connect()s at @occ over all queues. */
static int mixed_run(int queues, int lo, int hi, double occ, int n, int rounds, uint64_t seed)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(80) };
	uint16_t reta[RETA_SIZE];

	for (int i = 0; i < RETA_SIZE; i++)
		reta[i] = (uint16_t)(i % queues);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct socktab_net *net = rss_net(lo, hi, seed, reta);

	if (!net) {
		fprintf(stderr, "bench rss: cannot create the net\n");
		return 1;
	}
	int size = hi - lo + 1, nfill = (int)(occ * size), k = 0;
	struct socktab_sock **fill = calloc((size_t)nfill + 1, sizeof(*fill));

	if (!fill)
		return 1;
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
				int q = -1, err;
				uint64_t ns;

				rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
				if (mode)
					q = (int)(rng % (uint64_t)queues);
				struct socktab_sock *sk = rss_connect(net, &dst, q, true, &ns, &err);

				if (!sk) {
					fails++;
					continue;
				}
				sum[mode] += (double)ns;
				cnt[mode]++;
				if (mode)
					on_queue += reply_queue(sk, &dst, reta) == q;
				socktab_close(sk);
			}
	printf("occupancy=%.2f\nqueues=%d\nconnects_per_mode=%ld\n", occ, queues, cnt[0]);
	printf("connect_ns_mean_plain=%.1f\nconnect_ns_mean_rss=%.1f\nrss_cost_ratio=%.2f\n"
	       "rss_on_queue_pct=%.2f\nfailures=%ld\n",
	       per(sum[0], cnt[0]), per(sum[1], cnt[1]), per(sum[1], cnt[1]) / per(sum[0], cnt[0]),
	       100.0 * per((double)on_queue, cnt[1]), fails);
	for (int i = 0; i < k; i++)
		socktab_close(fill[i]);
	free(fill);
	socktab_net_free(net);
	return 0;
}

int bench_rss_main(int argc, char **argv)
{
	enum { O_QUEUES = 256, O_OCC, O_SHARE, O_RANGE, O_ROUNDS, O_SEED };
	static const struct option longopts[] = {
		{ "queues", required_argument, NULL, O_QUEUES },
		{ "occupancy", required_argument, NULL, O_OCC },
		{ "share", required_argument, NULL, O_SHARE },
		{ "range", required_argument, NULL, O_RANGE },
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "seed", required_argument, NULL, O_SEED },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct opt_parser op = { "socktab bench rss", "hN:", longopts };
	int lo = 32768, hi = 60999, n = -1, queues = 0, rounds = 5, opt, rc = 0;
	double occ = -1, share = 0.95;
	bool share_set = false;
	uint64_t seed = (uint64_t)time(NULL);
	char cpu[128];

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
		case O_SHARE:
			bad = opt_real(&op, "--share", optarg, 0, 0.99, &share);
			share_set = true;
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
	if (opt_no_operands(&op, argc, argv))
		return 2;
	if (occ >= 0 && share_set) {
		opt_fail(&op, "--share and --occupancy: one experiment at a time");
		return 2;
	}
	if (n < 0)
		n = occ >= 0 ? 2000 : 20000;
	if (n < rounds) {
		opt_fail(&op, "-N: %d connects for %d rounds (each round needs one)", n, rounds);
		return 2;
	}
	socktab_thread_register();
	bench_cpu_model(cpu, sizeof(cpu));
	printf("# socktab bench rss: %s\ncpu=%s\nseed=%llu\nrange=%d-%d\nreta_size=%d\nrounds=%d\n",
	       occ >= 0 ? "plain vs RSS connect() at an occupancy over all queues"
			: "connect() to a queue whose share of the range is empty, then full",
	       cpu, (unsigned long long)seed, lo, hi, RETA_SIZE, rounds);
	if (occ >= 0) {
		rc = mixed_run(queues ? queues : 16, lo, hi, occ, n, rounds, seed);
	} else {
		static const int qs[] = { 4, 16 };

		printf("share=%.2f\nconnects_per_point=%d\n", share, n / rounds * rounds);
		for (size_t i = 0; i < 2 && !rc; i++)
			if (!queues || queues == qs[i])
				rc = share_run(qs[i], lo, hi, share, n, rounds, seed);
		if (queues && queues != 4 && queues != 16 && !rc)
			rc = share_run(queues, lo, hi, share, n, rounds, seed);
	}
	socktab_thread_unregister();
	return rc;
}
