/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab bench connect: the cost of connect() toward one destination as the ephemeral range
 * fills up.
 *
 * For each variant and occupancy F, a fresh net is created and F of the range is pre-filled with
 * connections from 127.0.0.1 to 127.0.0.1:80 (with -6: IPv6 sockets from ::1 to [::1]:80, whose
 * connect() hashes and checks IPv6 4-tuples, as tcp_crr -6). The pre-fill takes ports in the order the kernel's
 * walk would (every port of the low end's parity first, from a random start, then the other
 * parity), pinning each socket's port with a one-port IP_LOCAL_PORT_RANGE so filling costs O(1)
 * per socket whatever the variant. Then cycles of socket() + connect() + abortive close() run,
 * and only connect() is timed. The N timed cycles of each (variant, occupancy) are split over R
 * rounds, and every round visits every row in turn (a fresh, pre-filled net each time, plus a few
 * untimed warm-up cycles), so a burst of load on a shared machine spreads over all rows instead
 * of inflating one. ports_tried counts candidates examined during the timed cycles only.
 * Output: parameters, then neper-style key=value lines per row, then a summary table with the
 * cliff ratio (cost at F vs at the first occupancy of the sweep).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/resource.h>

#include <arpa/inet.h>

#include "bench.h"
#include "opt.h"
#include "socktab/socktab.h"

static long involuntary_csw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nivcsw;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void help(void)
{
	printf("usage: socktab bench connect [-6] [--range LO-HI] [--occupancy F | --sweep F1,F2,...]\n"
	       "                             [--variant socktab|linux|linux-6.1|all] [-N CONNECTS]\n"
	       "                             [--seed S] [--rounds R] [--plot FILE.png]\n"
	       "defaults: --range 32768-60999 --sweep 0,0.5,0.95 --variant all -N 2000 --rounds 5\n"
	       "-6, --ipv6: IPv6 sockets from ::1 to [::1]:80 (else 127.0.0.1 to 127.0.0.1:80).\n"
	       "Prints connect_ns_mean, connect_ns_median, connect_ns_p99 and ports_tried_mean per "
	       "variant and occupancy. --plot draws connect_ns_mean vs occupancy, one line per\n"
	       "variant, log y axis (gnuplot).\n");
}

struct result {
	double mean, median, p99, tried;
	int failures;
	uint64_t *lat;    /* every timed connect() of the row, all rounds */
	int nlat;
	uint64_t tried_sum;
	long preempted;   /* involuntary context switches during the timed cycles */
};

/* Untimed cycles per round, until WARMUP cycles or WARMUP_NS have run: the first few hundred
 * connects after a large pre-fill touch cold memory (new bind buckets, allocator) on every
 * variant; the cap keeps the slow variants' warm-up short. */
#define WARMUP 200
#define WARMUP_NS 20000000ull

/* The destination of @family's connections, [::1]:80 or 127.0.0.1:80, in @dst; its length. */
static socklen_t dst_of(int family, struct sockaddr_storage *dst)
{
	memset(dst, 0, sizeof(*dst));
	if (family == AF_INET6) {
		struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)dst;

		d6->sin6_family = AF_INET6;
		d6->sin6_port = htons(80);
		d6->sin6_addr = in6addr_loopback;
		return sizeof(*d6);
	}
	struct sockaddr_in *d4 = (struct sockaddr_in *)dst;

	d4->sin_family = AF_INET;
	d4->sin_port = htons(80);
	d4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sizeof(*d4);
}

/* One round of one row: a fresh net, pre-filled to @occ, then WARMUP + @n cycles of @family's
 * sockets. */
static int run_one(int family, enum socktab_variant v, int lo, int hi, double occ, int n,
		   uint64_t seed, struct result *res)
{
	struct socktab_net_params p;
	struct socktab_net *net;
	struct socktab_sock **fill;
	struct socktab_net_stats st0, st1;
	struct sockaddr_storage dst;
	socklen_t dlen = dst_of(family, &dst);
	uint64_t *lat;
	int size = hi - lo + 1, nfill = (int)(occ * size + 0.5), k = 0;
	struct linger lg = { 1, 0 };

	socktab_net_params_init(&p);
	p.port_low = (uint16_t)lo;
	p.port_high = (uint16_t)hi;
	p.variant = v;
	p.fixed_secret = 1;
	memcpy(p.secret, &seed, sizeof(seed));
	net = socktab_net_new(&p);
	if (!net)
		return -errno;
	if (nfill > size)
		nfill = size;
	fill = calloc((size_t)nfill + 1, sizeof(*fill));
	lat = res->lat + res->nlat;
	if (!fill) {
		socktab_net_free(net);
		return -ENOMEM;
	}
	/* Kernel order: same parity as lo first, from a seeded start, then the other parity. */
	uint32_t start = (uint32_t)(seed * 2654435761u) % (uint32_t)size;

	for (int parity = 0; parity < 2 && k < nfill; parity++)
		for (int j = 0; j < size && k < nfill; j++) {
			int off = (int)((start + (uint32_t)j) % (uint32_t)size);

			if ((off & 1) != parity)
				continue;
			uint32_t port = (uint32_t)(lo + off);
			uint32_t range = port << 16 | port;
			struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, family);

			/* IP_LOCAL_PORT_RANGE is an IPPROTO_IP option on IPv6 sockets too. */
			if (!sk || socktab_setsockopt(sk, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &range,
						      sizeof(range)) ||
			    socktab_connect(sk, (struct sockaddr *)&dst, dlen)) {
				fprintf(stderr, "bench connect: pre-fill failed at port %u\n", port);
				if (sk)
					socktab_close(sk);
				break;
			}
			fill[k++] = sk;
		}
	uint64_t warm_end = now_ns() + WARMUP_NS;

	for (int i = -WARMUP; i < n; i++) {
		struct socktab_sock *sk;
		uint64_t t0, t1;
		int err;

		if (i < 0 && now_ns() > warm_end)
			i = 0;
		sk = socktab_socket(net, SOCKTAB_TCP, family);
		if (!sk)
			return -ENOMEM;
		if (i == 0) {
			socktab_net_stats(net, &st0);
			res->preempted -= involuntary_csw();
		}
		socktab_setsockopt(sk, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		t0 = now_ns();
		err = socktab_connect(sk, (struct sockaddr *)&dst, dlen);
		t1 = now_ns();
		if (i >= 0) {
			lat[i] = t1 - t0;
			if (err)
				res->failures++;
		}
		socktab_close(sk);
	}
	res->preempted += involuntary_csw();
	socktab_net_stats(net, &st1);
	res->nlat += n;
	res->tried_sum += st1.connect_ports_tried - st0.connect_ports_tried;
	for (int i = 0; i < k; i++)
		socktab_close(fill[i]);
	free(fill);
	socktab_net_free(net);
	return 0;
}

/* Mean, median, p99 and ports tried per timed connect() over all rounds of a row. */
static void finish(struct result *r)
{
	double sum = 0;
	int n = r->nlat;

	for (int i = 0; i < n; i++)
		sum += (double)r->lat[i];
	qsort(r->lat, (size_t)n, sizeof(*r->lat), cmp_u64);
	r->mean = sum / n;
	r->median = (double)r->lat[(size_t)(n - 1) / 2];
	r->p99 = (double)r->lat[(size_t)((n - 1) * 0.99)];
	r->tried = (double)r->tried_sum / n;
}

int bench_connect_measure(int variant, int lo, int hi, double occ, int n, int rounds,
			  uint64_t seed, double *mean_ns, double *tried)
{
	struct result r = { 0 };
	int err = 0;

	r.lat = calloc((size_t)n, sizeof(uint64_t));
	if (!r.lat)
		return -ENOMEM;
	if (rounds > n)
		rounds = n;
	for (int rd = 0; rd < rounds && !err; rd++)
		err = run_one(AF_INET, bench_variants[variant].v, lo, hi, occ,
			      n / rounds + (rd == rounds - 1 ? n % rounds : 0), seed, &r);
	if (!err) {
		finish(&r);
		*mean_ns = r.mean;
		*tried = r.tried;
	}
	free(r.lat);
	return err;
}

int bench_connect_main(int argc, char **argv)
{
	enum { O_RANGE = 256, O_OCC, O_SWEEP, O_VARIANT, O_ROUNDS, O_PLOT, O_SEED, O_IPV6 };
	static const struct option longopts[] = {
		{ "range", required_argument, NULL, O_RANGE },
		{ "occupancy", required_argument, NULL, O_OCC },
		{ "sweep", required_argument, NULL, O_SWEEP },
		{ "variant", required_argument, NULL, O_VARIANT },
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "plot", required_argument, NULL, O_PLOT },
		{ "seed", required_argument, NULL, O_SEED },
		{ "ipv6", no_argument, NULL, O_IPV6 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const variant_names[] = { "socktab", "linux", "linux-6.1", "all", NULL };
	const struct opt_parser op = { "socktab bench connect", "h6N:", longopts };
	int lo = 32768, hi = 60999, n = 2000, rounds = 5, variant = 3, family = AF_INET, c;
	const char *plot = NULL;
	uint64_t seed = (uint64_t)time(NULL);
	double occ[32] = { 0, 0.5, 0.95 };
	int nocc = 3;

	opt_start();
	while ((c = opt_next(&op, argc, argv)) != -1) {
		int bad = 0;

		switch (c) {
		case 'h':
			help();
			return 0;
		case '6':
		case O_IPV6:
			family = AF_INET6;
			break;
		case O_RANGE:
			bad = opt_port_range(&op, "--range", optarg, &lo, &hi);
			break;
		case O_OCC:
			bad = opt_real(&op, "--occupancy", optarg, 0, 1, &occ[0]);
			nocc = 1;
			break;
		case O_SWEEP:
			bad = opt_real_list(&op, "--sweep", optarg, 0, 1, occ, 32, &nocc);
			break;
		case O_VARIANT:
			bad = opt_choice(&op, "--variant", optarg, variant_names, &variant);
			break;
		case 'N':
			bad = opt_count_int(&op, "-N", optarg, 1, 10000000, &n);
			break;
		case O_ROUNDS:
			bad = opt_count_int(&op, "--rounds", optarg, 1, 1000, &rounds);
			break;
		case O_PLOT:
			plot = optarg;
			bad = opt_output_file(&op, "--plot", plot);
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
	int vsel[3], nv = 0;

	for (int j = 0; j < 3; j++)
		if (variant == 3 || variant == j)
			vsel[nv++] = j;

	if (rounds > n)
		rounds = n;
	socktab_thread_register();
	printf("# socktab bench connect\nseed=%llu\nrange=%d-%d\nconnects=%d\nrounds=%d\n"
	       "warmup_per_round=%d cycles or %llu ms\n",
	       (unsigned long long)seed, lo, hi, n, rounds, WARMUP,
	       (unsigned long long)(WARMUP_NS / 1000000));
	printf("family=%s\ndestination=%s\nprefill=kernel-order\n",
	       family == AF_INET6 ? "ipv6" : "ipv4",
	       family == AF_INET6 ? "[::1]:80" : "127.0.0.1:80");
	static struct result res[3][32];
	int err = 0;

	for (int a = 0; a < nv; a++)
		for (int b = 0; b < nocc; b++) {
			res[a][b] = (struct result){ 0 };
			res[a][b].lat = calloc((size_t)n, sizeof(uint64_t));
			if (!res[a][b].lat)
				err = -ENOMEM;
		}
	/* Warm-up (discarded): page in the pool, tables and code so the first row is not
	 * penalised. */
	struct result warm = { 0 };

	warm.lat = calloc((size_t)n, sizeof(uint64_t));
	if (!warm.lat)
		err = -ENOMEM;
	if (!err)
		err = run_one(family, bench_variants[vsel[0]].v, lo, hi, occ[0], n / rounds, seed,
			      &warm);
	free(warm.lat);
	if (err) {
		fprintf(stderr, "bench connect: %s\n", strerror(-err));
		socktab_thread_unregister();
		return 1;
	}

	/* Round-robin over the rows; the last round takes the remainder of N. */
	for (int rd = 0; rd < rounds && !err; rd++)
		for (int a = 0; a < nv && !err; a++)
			for (int b = 0; b < nocc && !err; b++) {
				int cnt = n / rounds + (rd == rounds - 1 ? n % rounds : 0);

				err = run_one(family, bench_variants[vsel[a]].v, lo, hi, occ[b],
					      cnt, seed, &res[a][b]);
			}
	if (err) {
		fprintf(stderr, "bench connect: %s\n", strerror(-err));
		socktab_thread_unregister();
		return 1;
	}
	for (int a = 0; a < nv; a++)
		for (int b = 0; b < nocc; b++) {
			struct result *r = &res[a][b];

			finish(r);
			printf("\nvariant=%s\nfamily=%s\noccupancy=%.4f\nconnect_ns_mean=%.1f\n"
			       "connect_ns_median=%.1f\nconnect_ns_p99=%.1f\n"
			       "ports_tried_mean=%.2f\n"
			       "connects_per_sec=%.0f\nfailures=%d\ninvoluntary_csw=%ld\n",
			       bench_variants[vsel[a]].name, family == AF_INET6 ? "ipv6" : "ipv4",
			       occ[b], r->mean, r->median, r->p99,
			       r->tried, 1e9 / r->mean, r->failures, r->preempted);
		}
	printf("\n%-10s %9s %15s %17s %14s %12s %9s %6s\n", "variant", "occupancy",
	       "connect_ns_mean", "connect_ns_median", "connect_ns_p99", "ports_tried", "vs_first",
	       "invcsw");
	for (int a = 0; a < nv; a++)
		for (int b = 0; b < nocc; b++)
			printf("%-10s %9.2f %15.1f %17.1f %14.1f %12.2f %8.2fx %6ld\n",
			       bench_variants[vsel[a]].name, occ[b], res[a][b].mean,
			       res[a][b].median, res[a][b].p99, res[a][b].tried,
			       res[a][b].mean / res[a][0].mean, res[a][b].preempted);
	for (int a = 0; a < nv; a++)
		for (int b = 0; b < nocc; b++)
			free(res[a][b].lat);
	socktab_thread_unregister();
	if (plot) {
		static struct bench_plot pl;
		char title[128];

		snprintf(title, sizeof(title),
			 "socktab bench connect%s: connect() cost vs occupancy (range %d-%d)",
			 family == AF_INET6 ? " -6" : "", lo, hi);
		pl = (struct bench_plot){ .title = title,
					  .xlabel = "occupancy of the ephemeral range toward one "
						    "destination",
					  .ylabel = "connect() ns (mean)",
					  .logy = true };
		for (int a = 0; a < nv && a < BENCH_PLOT_MAX_SERIES; a++) {
			pl.name[a] = bench_variants[vsel[a]].name;
			pl.npoints[a] = nocc < BENCH_PLOT_MAX_POINTS ? nocc : BENCH_PLOT_MAX_POINTS;
			for (int b = 0; b < pl.npoints[a]; b++) {
				pl.x[a][b] = occ[b];
				pl.y[a][b] = res[a][b].mean;
			}
			pl.nseries++;
		}
		if (bench_plot_png(&pl, plot))
			return 1;
	}
	return 0;
}
