/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab bench tour: every experiment and every peer comparison, reproduced in one run (what
 * `make run` runs; well under 90 s on two cores). One row per experiment: what the upstream kernel
 * change measured, the pair of configurations socktab compares, and the ratio measured now (after
 * over before, so > 1 means the change helps here too). Rows, by the name printed as row=:
 *   000  RCU pre-check before the locked 4-tuple check: crr, linux-6.1 -> linux-6.1 + pre-check
 *   002  lport added after hashing, one hash per connect(): crr, pre-check + lport inside ->
 *        pre-check + lport after (= the linux variant)
 *   001  hashinfo reached through the netns: lookups in a net with its own tables -> a net
 *        sharing another's tables (socktab always reaches the tables through the net)
 *   003  UDP 4-tuple hash: `bench udp --connected 500`, hash4 off -> on (run as a child process;
 *        the row is left out when this build has no `bench udp`)
 *   peers  socktab's established lookup vs DPDK rte_hash and liburcu cds_lfht (socktab / peer)
 *   cliff  connect() at 95 % of the range toward one destination, linux -> socktab, and crr at
 *        -F 20000 (71 %), linux -> socktab
 * Each figure is one run on this machine; compare ratios, not absolute numbers, with the
 * upstream measurements' 240-core hosts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/wait.h>

#include "bench.h"
#include "opt.h"

struct row {
	const char *id, *seed, *pair, *bench;
	double ratio;
	char note[160];
	bool skipped;
};

static void set_row(struct row *r, const char *id, const char *seed, const char *pair,
		    const char *bench, double ratio)
{
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->seed = seed;
	r->pair = pair;
	r->bench = bench;
	r->ratio = ratio;
}

/* A thread's time per transaction over the ports its connect() examined: the walk's cost per
 * candidate once the walk dominates (high occupancy). */
static double ns_per_port(const struct bench_crr_result *r, int threads)
{
	return r->throughput > 0 && r->ports_tried_mean > 0
		       ? threads * 1e9 / r->throughput / r->ports_tried_mean
		       : 0;
}

/* Run `socktab bench udp ...` as a child and read hash4_speedup= from its output. */
static int udp_speedup(uint64_t seed, double *ratio)
{
	char cmd[256], line[256];
	FILE *f;
	int found = 0, st;

	snprintf(cmd, sizeof(cmd),
		 "/proc/%d/exe bench udp --connected 500 --hash4 both -l 2 --seed %llu 2>/dev/null",
		 (int)getpid(), (unsigned long long)seed);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "hash4_speedup=%lf", ratio) == 1)
			found = 1;
	st = pclose(f);
	return found && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -ENOENT;
}

/* One round of one crr configuration, merged into @acc. */
static int crr(const struct bench_crr_cfg *base, const char *variant, int precheck, int inside,
	       struct bench_crr_result *acc)
{
	struct bench_crr_cfg c = *base;
	static struct bench_crr_result one;
	int err;

	c.variant = bench_variant_find(variant);
	c.rcu_precheck = precheck;
	c.lport_inside = inside;
	fprintf(stderr, "tour: crr -T %d -F %d --variant %s%s%s\n", c.threads, c.flows, variant,
		precheck >= 0 ? (precheck ? " --rcu-precheck on" : " --rcu-precheck off") : "",
		inside >= 0 ? (inside ? " --lport-hash inside" : " --lport-hash after") : "");
	if (!(err = bench_crr_run(&c, &one)))
		bench_crr_merge(acc, &one);
	return err;
}

int bench_tour_main(int argc, char **argv)
{
	enum { O_SEED = 256, O_SOCKETS };
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, O_SEED },
		{ "sockets", required_argument, NULL, O_SOCKETS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct opt_parser op = { "socktab bench tour", "hl:", longopts };
	uint64_t seed = (uint64_t)time(NULL), sockets = 250000;
	double crr_s = 2;
	struct bench_crr_cfg cc;
	static struct bench_crr_result a, b, l, s; /* linux-6.1, +pre-check, linux, socktab */
	struct row rows[8];
	int nrows = 0, err = 0, opt;
	uint64_t t0 = bench_now_ns();

	opt_start();
	while ((opt = opt_next(&op, argc, argv)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'h':
			printf("usage: socktab bench tour [--seed S] [-l CRR_SECONDS] [--sockets N]\n"
			       "Reproduces every seed experiment and peer comparison in one run "
			       "(defaults: -l 2, --sockets 250000).\n");
			return 0;
		case O_SEED:
			bad = opt_seed(&op, "--seed", optarg, &seed);
			break;
		case 'l':
			bad = opt_real(&op, "-l", optarg, 0.001, 60, &crr_s);
			break;
		case O_SOCKETS:
			bad = opt_count(&op, "--sockets", optarg, 1000, 1u << 24, &sockets);
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
	socktab_thread_register();
	printf("# socktab bench tour\nseed=%llu\ncrr=-T 2 -F 20000 -l %g --range 32768-60999\n"
	       "lookup=--sockets %llu\nconnect=--occupancy 0.95 --range 32768-60999\n",
	       (unsigned long long)seed, crr_s, (unsigned long long)sockets);
	fflush(stdout);

	/* crr at the upstream measurements' port pressure: four configurations, visited in turn
	 * over two rounds so a burst of load on a shared machine spreads over all of them. */
	bench_crr_cfg_init(&cc);
	cc.threads = 2;
	cc.flows = 20000;
	cc.seconds = crr_s / 2;
	cc.seed = seed;
	for (int rd = 0; rd < 2; rd++)
		if ((err = crr(&cc, "linux-6.1", -1, -1, &a)) ||
		    (err = crr(&cc, "linux-6.1", 1, -1, &b)) || (err = crr(&cc, "linux", -1, -1, &l)) ||
		    (err = crr(&cc, "socktab", -1, -1, &s)))
			goto out;
	set_row(&rows[nrows], "pre-check", "RCU pre-check: tcp_crr -F 20000 +35 %",
				    "linux-6.1 -> +rcu-precheck", "crr -T 2 -F 20000",
				    b.throughput / a.throughput );
	snprintf(rows[nrows].note, sizeof(rows[nrows].note),
		 "%.0f -> %.0f trans/s; ports tried %.0f -> %.0f; ns/port %.0f -> %.0f",
		 a.throughput, b.throughput, a.ports_tried_mean, b.ports_tried_mean,
		 ns_per_port(&a, cc.threads), ns_per_port(&b, cc.threads));
	nrows++;
	set_row(&rows[nrows], "lport after hash", "lport after hash: tcp_crr -F 30000 +129 %",
				    "lport inside -> after", "crr -T 2 -F 20000",
				    l.throughput / b.throughput );
	snprintf(rows[nrows].note, sizeof(rows[nrows].note),
		 "%.0f -> %.0f trans/s; ports tried %.0f -> %.0f; ns/port %.0f -> %.0f",
		 b.throughput, l.throughput, b.ports_tried_mean, l.ports_tried_mean,
		 ns_per_port(&b, cc.threads), ns_per_port(&l, cc.threads));
	nrows++;

	/* Row 001 (tables reached through the net) and the peers: every table built, then timed
	 * in turn (median of 5 rounds). */
	{
		struct bench_lookup_cfg lc = { .sockets = sockets, .lookups = 2 * sockets,
					       .burst = 1, .seed = seed, .rounds = 5 };
		enum bench_table which[BENCH_TABLE_COUNT];
		struct bench_lookup_result got[BENCH_TABLE_COUNT];
		int nw = 0;
		double sp;

		if (lc.lookups < 1000000)
			lc.lookups = 1000000;
		for (int t = 0; t < BENCH_TABLE_COUNT; t++) {
			if (t == BENCH_TABLE_SOCKTAB_REF) /* no row of its own */
				continue;
			if (bench_table_available((enum bench_table)t))
				which[nw++] = (enum bench_table)t;
			else
				fprintf(stderr, "tour: peer %s not built in; its row is left out\n",
					bench_table_name((enum bench_table)t));
		}
		fprintf(stderr, "tour: lookup --sockets %llu (socktab, shared tables, peers)\n",
			(unsigned long long)sockets);
		if ((err = bench_lookup_run_many(&lc, which, nw, got)))
			goto out;
		/* which[0] and which[1] are always socktab and socktab-shared. */
		struct bench_lookup_result *own = &got[0], *shared = &got[1];

		set_row(&rows[nrows], "per-netns tables", "hashinfo via netns: no netperf change",
			"own tables -> shared tables", "lookup", shared->lookups_per_sec /
								 own->lookups_per_sec);
		snprintf(rows[nrows].note, sizeof(rows[nrows].note),
			 "%.0f -> %.0f lookups/s; one DRAM miss ~%.0f ns", own->lookups_per_sec,
			 shared->lookups_per_sec, bench_mem_latency_ns(own->bytes, seed));
		nrows++;

		fprintf(stderr, "tour: udp --connected 500 --hash4 both\n");
		set_row(&rows[nrows], "UDP hash4", "UDP hash4: 500 connected, 6.5x pps", "hash4 off -> on",
			"udp --connected 500", 0);
		if (udp_speedup(seed, &sp)) {
			rows[nrows].skipped = true;
			snprintf(rows[nrows].note, sizeof(rows[nrows].note),
				 "left out: this build has no working `bench udp`");
		} else {
			rows[nrows].ratio = sp;
			snprintf(rows[nrows].note, sizeof(rows[nrows].note),
				 "lookups/s with / without hash4");
		}
		nrows++;

		for (int i = 2; i < nw; i++) {
			struct bench_lookup_result *peer = &got[i];
			bool rte = which[i] == BENCH_TABLE_RTE_HASH;

			set_row(&rows[nrows], "peer",
				rte ? "DPDK rte_hash (lock-free readers)" : "liburcu cds_lfht",
				rte ? "rte_hash -> socktab" : "lfht -> socktab", "lookup",
				peer->skipped ? 0 : own->lookups_per_sec / peer->lookups_per_sec);
			if (peer->skipped) {
				/* The peer could not be built (memory): its row says why. */
				rows[nrows].skipped = true;
				snprintf(rows[nrows].note, sizeof(rows[nrows].note), "left out: %s",
					 peer->why);
			} else {
				snprintf(rows[nrows].note, sizeof(rows[nrows].note),
					 "%.0f vs %.0f lookups/s; %.0f vs %.0f MB",
					 own->lookups_per_sec, peer->lookups_per_sec,
					 own->bytes / 1048576.0, peer->bytes / 1048576.0);
			}
			nrows++;
		}
	}

	/* The connect() cliff: 95 % of the range toward one destination. */
	{
		double ln, lt, sn, st;

		fprintf(stderr, "tour: connect --occupancy 0.95 (linux, socktab)\n");
		if ((err = bench_connect_measure(bench_variant_find("linux"), 32768, 60999, 0.95, 300,
						 3, seed, &ln, &lt)) ||
		    (err = bench_connect_measure(bench_variant_find("socktab"), 32768, 60999, 0.95,
						 3000, 3, seed, &sn, &st)))
			goto out;
		set_row(&rows[nrows], "cliff", "connect() walk at 95 % occupancy",
					    "linux -> socktab", "connect --occupancy 0.95",
					    ln / sn );
		snprintf(rows[nrows].note, sizeof(rows[nrows].note),
			 "%.0f -> %.0f ns per connect(); ports tried %.0f -> %.0f", ln, sn, lt, st);
		nrows++;
		set_row(&rows[nrows], "cliff", "the same under tcp_crr at 71 %",
					    "linux -> socktab", "crr -T 2 -F 20000",
					    s.throughput / l.throughput );
		snprintf(rows[nrows].note, sizeof(rows[nrows].note),
			 "%.0f -> %.0f trans/s; ports tried %.0f -> %.0f", l.throughput,
			 s.throughput, l.ports_tried_mean, s.ports_tried_mean);
		nrows++;
	}
out:
	socktab_thread_unregister();
	if (err) {
		fprintf(stderr, "bench tour: %s\n", strerror(-err));
		return 1;
	}
	for (int i = 0; i < nrows; i++) {
		if (rows[i].skipped)
			printf("\nrow=%s\nskipped=%s\n", rows[i].id, rows[i].note);
		else
			printf("\nrow=%s\npair=%s\nbench=%s\nratio=%.2f\n", rows[i].id, rows[i].pair,
			       rows[i].bench, rows[i].ratio);
	}
	printf("\n%-16s | %-42s | %-28s | %-24s | %7s | %s\n", "row", "what the netdev thread measured",
	       "pair (before -> after)", "socktab bench", "ratio", "figures");
	for (int i = 0; i < nrows; i++) {
		if (rows[i].skipped)
			printf("%-16s | %-42s | %-28s | %-24s | %7s | %s\n", rows[i].id, rows[i].seed,
			       rows[i].pair, rows[i].bench, "-", rows[i].note);
		else
			printf("%-16s | %-42s | %-28s | %-24s | %6.2fx | %s\n", rows[i].id,
			       rows[i].seed, rows[i].pair, rows[i].bench, rows[i].ratio,
			       rows[i].note);
	}
	printf("\ntour_seconds=%.1f\n", (double)(bench_now_ns() - t0) / 1e9);
	return 0;
}
