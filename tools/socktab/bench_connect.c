/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab bench connect: the cost of connect() toward one destination as the ephemeral range
 * fills up.
 *
 * For each variant and occupancy F, a fresh net is created and F of the range is pre-filled with
 * connections from 127.0.0.1 to 127.0.0.1:80. The pre-fill takes ports in the order the kernel's
 * walk would (every port of the low end's parity first, from a random start, then the other
 * parity), pinning each socket's port with a one-port IP_LOCAL_PORT_RANGE so filling costs O(1)
 * per socket whatever the variant. Then N cycles of socket() + connect() + abortive close() run,
 * and only connect() is timed. Output: parameters, then neper-style key=value lines per run, then
 * a summary table with the cliff ratio (cost at F vs at the first occupancy of the sweep).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "cli.h"
#include "socktab/socktab.h"

struct variant {
	const char *name;
	enum socktab_variant v;
};

static const struct variant variants[] = {
	{ "socktab", SOCKTAB_VARIANT_SOCKTAB },
	{ "linux", SOCKTAB_VARIANT_LINUX },
	{ "linux-6.1", SOCKTAB_VARIANT_LINUX_6_1 },
};

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
	printf("usage: socktab bench connect [--range LO-HI] [--occupancy F | --sweep F1,F2,...]\n"
	       "                             [--variant socktab|linux|linux-6.1|all] [-N CONNECTS]\n"
	       "                             [--seed S]\n"
	       "defaults: --range 32768-60999 --sweep 0,0.5,0.95 --variant all -N 2000\n"
	       "Prints connect_ns_mean, connect_ns_p99 and ports_tried_mean per variant and "
	       "occupancy.\n");
}

struct result {
	double mean, p99, tried;
	int failures;
};

static int run_one(enum socktab_variant v, int lo, int hi, double occ, int n, uint64_t seed,
		   struct result *res)
{
	struct socktab_net_params p;
	struct socktab_net *net;
	struct socktab_sock **fill;
	struct socktab_net_stats st0, st1;
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(80) };
	uint64_t *lat;
	int size = hi - lo + 1, nfill = (int)(occ * size + 0.5), k = 0;
	struct linger lg = { 1, 0 };

	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
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
	lat = calloc((size_t)n, sizeof(*lat));
	if (!fill || !lat) {
		free(fill);
		free(lat);
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
			struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);

			if (!sk || socktab_setsockopt(sk, IPPROTO_IP, IP_LOCAL_PORT_RANGE, &range,
						      sizeof(range)) ||
			    socktab_connect(sk, (struct sockaddr *)&dst, sizeof(dst))) {
				fprintf(stderr, "bench connect: pre-fill failed at port %u\n", port);
				if (sk)
					socktab_close(sk);
				break;
			}
			fill[k++] = sk;
		}
	socktab_net_stats(net, &st0);
	res->failures = 0;
	for (int i = 0; i < n; i++) {
		struct socktab_sock *sk = socktab_socket(net, SOCKTAB_TCP, AF_INET);
		uint64_t t0, t1;
		int err;

		if (!sk)
			return -ENOMEM;
		socktab_setsockopt(sk, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		t0 = now_ns();
		err = socktab_connect(sk, (struct sockaddr *)&dst, sizeof(dst));
		t1 = now_ns();
		lat[i] = t1 - t0;
		if (err)
			res->failures++;
		socktab_close(sk);
	}
	socktab_net_stats(net, &st1);
	double sum = 0;

	for (int i = 0; i < n; i++)
		sum += (double)lat[i];
	qsort(lat, (size_t)n, sizeof(*lat), cmp_u64);
	res->mean = sum / n;
	res->p99 = (double)lat[(size_t)((n - 1) * 0.99)];
	res->tried = (double)(st1.connect_ports_tried - st0.connect_ports_tried) / n;
	for (int i = 0; i < k; i++)
		socktab_close(fill[i]);
	free(fill);
	free(lat);
	socktab_net_free(net);
	return 0;
}

int socktab_cli_bench_connect(int argc, char **argv)
{
	int lo = 32768, hi = 60999, n = 2000;
	char sweep_buf[256] = "0,0.5,0.95";
	const char *variant = "all";
	uint64_t seed = (uint64_t)time(NULL);
	double occ[32];
	int nocc = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			help();
			return 0;
		} else if (!strcmp(a, "--range") && v) {
			if (sscanf(v, "%d-%d", &lo, &hi) != 2 || lo < 1 || hi > 65535 || hi < lo) {
				fprintf(stderr, "bench connect: bad --range '%s'\n", v);
				return 2;
			}
			i++;
		} else if ((!strcmp(a, "--occupancy") || !strcmp(a, "--sweep")) && v) {
			snprintf(sweep_buf, sizeof(sweep_buf), "%s", v);
			i++;
		} else if (!strcmp(a, "--variant") && v) {
			variant = v;
			i++;
		} else if (!strcmp(a, "-N") && v) {
			n = atoi(v);
			if (n < 1 || n > 10000000) {
				fprintf(stderr, "bench connect: bad -N '%s'\n", v);
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--seed") && v) {
			seed = strtoull(v, NULL, 0);
			i++;
		} else {
			fprintf(stderr, "bench connect: unknown or incomplete option '%s'\n", a);
			return 2;
		}
	}
	for (char *tok = strtok(sweep_buf, ","); tok && nocc < 32; tok = strtok(NULL, ",")) {
		char *end;
		double f = strtod(tok, &end);

		if (*end || f < 0 || f > 1) {
			fprintf(stderr, "bench connect: bad occupancy '%s' (0..1)\n", tok);
			return 2;
		}
		occ[nocc++] = f;
	}
	if (!nocc)
		return 2;
	int vsel[3], nv = 0;

	for (int j = 0; j < 3; j++)
		if (!strcmp(variant, "all") || !strcmp(variant, variants[j].name))
			vsel[nv++] = j;
	if (!nv) {
		fprintf(stderr, "bench connect: unknown variant '%s'\n", variant);
		return 2;
	}

	socktab_thread_register();
	printf("# socktab bench connect\nseed=%llu\nrange=%d-%d\nconnects=%d\n",
	       (unsigned long long)seed, lo, hi, n);
	printf("destination=127.0.0.1:80\nprefill=kernel-order\n");
	struct result res[3][32];

	/* Warm-up (discarded): page in the pool, tables and code so the first row is not penalised. */
	if (run_one(variants[vsel[0]].v, lo, hi, occ[0], n, seed, &res[0][0])) {
		socktab_thread_unregister();
		return 1;
	}

	for (int a = 0; a < nv; a++)
		for (int b = 0; b < nocc; b++) {
			struct result *r = &res[a][b];
			int err = run_one(variants[vsel[a]].v, lo, hi, occ[b], n, seed, r);

			if (err) {
				fprintf(stderr, "bench connect: %s\n", strerror(-err));
				socktab_thread_unregister();
				return 1;
			}
			fprintf(stderr, "bench connect: variant=%s occupancy=%.2f done\n",
				variants[vsel[a]].name, occ[b]);
			printf("\nvariant=%s\noccupancy=%.4f\nconnect_ns_mean=%.1f\nconnect_ns_p99=%.1f\n"
			       "ports_tried_mean=%.2f\nconnects_per_sec=%.0f\nfailures=%d\n",
			       variants[vsel[a]].name, occ[b], r->mean, r->p99, r->tried,
			       1e9 / r->mean, r->failures);
		}
	printf("\n%-10s %9s %14s %14s %12s %10s\n", "variant", "occupancy", "connect_ns_mean",
	       "connect_ns_p99", "ports_tried", "vs_first");
	for (int a = 0; a < nv; a++)
		for (int b = 0; b < nocc; b++)
			printf("%-10s %9.2f %14.1f %14.1f %12.2f %9.2fx\n", variants[vsel[a]].name,
			       occ[b], res[a][b].mean, res[a][b].p99, res[a][b].tried,
			       res[a][b].mean / res[a][0].mean);
	socktab_thread_unregister();
	return 0;
}
