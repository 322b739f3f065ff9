/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab bench tour: every experiment and every peer comparison, reproduced in one run (what
 * `make run` runs; well under 90 s on two cores). One row per experiment: what the upstream kernel
 * change measured, the pair of configurations socktab compares, and the ratio measured now (after
 * over before, so > 1 means the change helps here too). Rows, by the name printed as row=:
 *   000  RCU pre-check before the locked 4-tuple check: crr, linux-6.1 -> linux-6.1 + pre-check
 *   002  lport added after hashing, one hash per connect(): crr, pre-check + lport inside ->
 *        pre-check + lport after (= the linux variant)
 *        Both rows again over IPv6 (crr -6, both hosts ::1), as the seeds also ran tcp_crr -6.
 *        Each crr pair runs the same connection sequence: same seed, same transaction count
 *        (not the same time: a faster variant would get further through the flows, where
 *        connect() examines more ports), and --full-walk, so every measured connect() examines
 *        every port of the first parity whatever the two threads' timing (crr.c). The row prints
 *        ports tried and ns per port tried on both sides, and a WARNING: line when ports tried
 *        differ by more than 5 %: then the ratio is not the change alone.
 *   001  hashinfo reached through the netns: lookups in a net with its own tables -> a net
 *        sharing another's tables (socktab always reaches the tables through the net)
 *   003  UDP 4-tuple hash: `bench udp --connected 500`, hash4 off -> on (run as a child process;
 *        the row is left out when this build has no `bench udp`)
 *   peers  socktab's established lookup vs DPDK rte_hash and liburcu cds_lfht (socktab / peer)
 *   cliff  connect() at 95 % of the range toward one destination, linux -> socktab, and crr at
 *        -F 20000 (71 %), linux -> socktab (the same crr runs)
 * Each figure is one run on this machine; compare ratios, not absolute numbers, with the
 * upstream measurements' 240-core hosts.
 */
#include <errno.h>
#include <math.h>
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
	/* crr rows: the two sides, and a WARNING: line when they are not comparable */
	const struct bench_crr_result *before, *after;
	char warn[240];
};

/* Ports tried per connect() may differ this much (relative) inside a seed row's pair. */
#define PORTS_TRIED_TOLERANCE 0.05

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

/* Transactions per second of a fixed-count crr result: its transactions over the rounds'
 * elapsed time (bench crr's neper-style slope needs many 100-ms snapshots, which a short round
 * does not give). */
static double crr_rate(const struct bench_crr_result *r)
{
	return r->elapsed_s > 0 ? (double)r->transactions / r->elapsed_s : 0;
}

/* CPU time (every thread of the process: the two crr threads, RCU's callbacks) per transaction
 * over the ports its connect() examined: the walk's cost per candidate once the walk dominates
 * (high occupancy). Unlike the transactions per second, it does not move with the share of the
 * CPUs the machine's other work leaves to the run. */
static double ns_per_port(const struct bench_crr_result *r)
{
	double cpu = r->utime[1] - r->utime[0] + r->stime[1] - r->stime[0];

	return r->transactions && r->ports_tried_mean > 0
		       ? cpu * 1e9 / (double)r->transactions / r->ports_tried_mean
		       : 0;
}

/* Run `socktab bench udp ...` as a child and read hash4_speedup= from its output. */
static int udp_speedup(uint64_t seed, double *ratio)
{
	char cmd[256], line[256];
	FILE *f;
	int found = 0, st;

	snprintf(cmd, sizeof(cmd),
		 "/proc/%d/exe bench udp --connected 500 --hash4 both -l 1 --seed %llu 2>/dev/null",
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

/* A crr row: the throughput ratio (after / before) and both sides' figures. A seed row's pair
 * also gets the per-port ratio and a WARNING: when ports tried per connect() differ by more
 * than PORTS_TRIED_TOLERANCE. */
static void crr_row(struct row *r, const char *id, const char *seed, const char *pair,
		    const char *bench, const struct bench_crr_result *b,
		    const struct bench_crr_result *a, bool seed_pair)
{
	double nb = ns_per_port(b), na = ns_per_port(a);
	double lo = fmin(b->ports_tried_mean, a->ports_tried_mean);
	double hi = fmax(b->ports_tried_mean, a->ports_tried_mean);

	set_row(r, id, seed, pair, bench, crr_rate(b) > 0 ? crr_rate(a) / crr_rate(b) : 0);
	if (!seed_pair) {
		snprintf(r->note, sizeof(r->note), "%.0f -> %.0f trans/s; ports tried %.0f -> %.0f",
			 crr_rate(b), crr_rate(a), b->ports_tried_mean, a->ports_tried_mean);
		return;
	}
	r->before = b;
	r->after = a;
	snprintf(r->note, sizeof(r->note),
		 "%.0f -> %.0f trans/s; ports tried %.0f -> %.0f; ns/port %.1f -> %.1f (%.2fx)",
		 crr_rate(b), crr_rate(a), b->ports_tried_mean, a->ports_tried_mean, nb, na,
		 na > 0 ? nb / na : 0);
	if (lo <= 0 || (hi - lo) / lo > PORTS_TRIED_TOLERANCE) {
		snprintf(r->warn, sizeof(r->warn),
			 "WARNING: row %s, pair %s: ports tried per connect() %.1f vs %.1f differ "
			 "by %.1f %% (more than %.0f %%): its ratio is not the change alone",
			 id, pair, b->ports_tried_mean, a->ports_tried_mean,
			 lo > 0 ? 100 * (hi - lo) / lo : 100.0, 100 * PORTS_TRIED_TOLERANCE);
		fprintf(stderr, "%s\n", r->warn);
	}
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
	fprintf(stderr, "tour: crr%s -T %d -F %d -N %llu --full-walk --variant %s%s%s\n",
		c.family == AF_INET6 ? " -6" : "", c.threads, c.flows, (unsigned long long)c.transactions, variant,
		precheck >= 0 ? (precheck ? " --rcu-precheck on" : " --rcu-precheck off") : "",
		inside >= 0 ? (inside ? " --lport-hash inside" : " --lport-hash after") : "");
	if ((err = bench_crr_run(&c, &one)))
		return err;
	if (one.full_walk_transactions < c.transactions + c.transactions / 100)
		fprintf(stderr,
			"tour: %llu transactions a round is more than the %llu whose connect() walks "
			"every first-parity port; ports tried may differ inside a pair\n",
			(unsigned long long)c.transactions,
			(unsigned long long)one.full_walk_transactions);
	bench_crr_merge(acc, &one);
	return 0;
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
	const struct opt_parser op = { "socktab bench tour", "hN:", longopts };
	uint64_t seed = (uint64_t)time(NULL), sockets = 250000;
	/* Transactions per crr configuration, over CRR_ROUNDS rounds: sized so the whole tour
	 * stays under 15 s on two loaded vCPUs (linux-6.1, the slowest, does some 1,000
	 * transactions a second there), each round within the 5,884 transactions of -F 20000
	 * whose connect() walks every first-parity port. */
	uint64_t crr_n = 4800;
	enum { CRR_ROUNDS = 4 };
	struct bench_crr_cfg cc;
	static struct bench_crr_result a, b, l, s; /* linux-6.1, +pre-check, linux, socktab */
	static struct bench_crr_result a6, b6, l6; /* the seed rows again over IPv6 */
	struct bench_crr_cfg cc6;
	struct row rows[10];
	int nrows = 0, err = 0, opt;
	uint64_t t0 = bench_now_ns();

	opt_start();
	while ((opt = opt_next(&op, argc, argv)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'h':
			printf("usage: socktab bench tour [--seed S] [-N CRR_TRANSACTIONS] [--sockets N]\n"
			       "Reproduces every seed experiment and peer comparison in one run "
			       "(defaults: -N 4800, --sockets 250000).\n"
			       "Each crr configuration runs CRR_TRANSACTIONS transactions (4 rounds), the\n"
			       "same for every variant; up to 23,000 keep every connect() on the full\n"
			       "walk of the first parity.\n");
			return 0;
		case O_SEED:
			bad = opt_seed(&op, "--seed", optarg, &seed);
			break;
		case 'N':
			bad = opt_count(&op, "-N", optarg, CRR_ROUNDS, 1000000, &crr_n);
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
	if (opt_no_operands(&op, argc, argv))
		return 2;
	socktab_thread_register();
	printf("# socktab bench tour\nseed=%llu\n"
	       "crr=-T 2 -F 20000 -N %llu --full-walk --rounds %d --range 32768-60999\n"
	       "lookup=--sockets %llu\nconnect=--occupancy 0.95 --range 32768-60999\n",
	       (unsigned long long)seed, (unsigned long long)crr_n, CRR_ROUNDS,
	       (unsigned long long)sockets);
	fflush(stdout);

	/* crr at the upstream measurements' port pressure: four configurations, each the same
	 * transactions from the same state, visited in turn over CRR_ROUNDS rounds so a burst of
	 * load on a shared machine spreads over all of them. */
	bench_crr_cfg_init(&cc);
	cc.threads = 2;
	cc.flows = 20000;
	cc.transactions = crr_n / CRR_ROUNDS;
	cc.full_walk = true;
	cc.seed = seed;
	/* The seeds ran tcp_crr over IPv6 too (-6): the same three configurations on ::1. */
	cc6 = cc;
	cc6.family = AF_INET6;
	for (int rd = 0; rd < CRR_ROUNDS; rd++)
		if ((err = crr(&cc, "linux-6.1", -1, -1, &a)) ||
		    (err = crr(&cc, "linux-6.1", 1, -1, &b)) || (err = crr(&cc, "linux", -1, -1, &l)) ||
		    (err = crr(&cc, "socktab", -1, -1, &s)) ||
		    (err = crr(&cc6, "linux-6.1", -1, -1, &a6)) ||
		    (err = crr(&cc6, "linux-6.1", 1, -1, &b6)) ||
		    (err = crr(&cc6, "linux", -1, -1, &l6)))
			goto out;
	crr_row(&rows[nrows++], "pre-check", "RCU pre-check: tcp_crr -F 20000 +35 %",
		"linux-6.1 -> +rcu-precheck", "crr -T 2 -F 20000", &a, &b, true);
	crr_row(&rows[nrows++], "lport after hash", "lport after hash: tcp_crr -F 30000 +129 %",
		"lport inside -> after", "crr -T 2 -F 20000", &b, &l, true);
	crr_row(&rows[nrows++], "pre-check v6", "RCU pre-check: tcp_crr -6, same thread",
		"linux-6.1 -> +rcu-precheck", "crr -6 -T 2 -F 20000", &a6, &b6, true);
	crr_row(&rows[nrows++], "lport after v6", "lport after hash: tcp_crr -6 -F 30000",
		"lport inside -> after", "crr -6 -T 2 -F 20000", &b6, &l6, true);

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
			if (t == BENCH_TABLE_SOCKTAB_REF || t == BENCH_TABLE_SOCKTAB_SECTIONS)
				continue; /* no row of its own */
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
		/* socktab examines one port where linux walks the first parity: that is the
		 * row's point, so it is no seed pair (no ports-tried check). */
		crr_row(&rows[nrows++], "cliff", "the same under tcp_crr at 71 %",
			"linux -> socktab", "crr -T 2 -F 20000", &l, &s, false);
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
		if (rows[i].before) {
			const struct bench_crr_result *side[2] = { rows[i].before, rows[i].after };
			double ns[2];

			for (int k = 0; k < 2; k++) {
				const char *w = k ? "after" : "before";

				ns[k] = ns_per_port(side[k]);
				printf("transactions_%s=%llu\nthroughput_%s=%.0f\n"
				       "ports_tried_%s=%.2f\nns_per_port_%s=%.1f\n",
				       w, (unsigned long long)side[k]->transactions, w,
				       crr_rate(side[k]), w, side[k]->ports_tried_mean, w, ns[k]);
			}
			printf("per_port_ratio=%.2f\n", ns[1] > 0 ? ns[0] / ns[1] : 0);
		}
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
	for (int i = 0; i < nrows; i++)
		if (rows[i].warn[0])
			printf("\n%s\n", rows[i].warn);
	printf("\ntour_seconds=%.1f\n", (double)(bench_now_ns() - t0) / 1e9);
	return 0;
}
