/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab bench scale: how socktab's work grows with threads. For each thread count of
 * --threads, in turn:
 *   lookup  established lookups by T reader threads at once over one table (bench lookup's
 *           socktab row: online threads, no reference), and the same table's one-thread rate
 *           from the same run;
 *   crr     neper's tcp_crr by T threads over two shared nets (bench crr's socktab variant) at
 *           -F flows; with --rounds R, R rounds of -l seconds each, every round visiting the
 *           thread counts in turn (in reverse order every other round), so a change of the
 *           machine's speed, which on a shared virtual machine comes and goes over seconds,
 *           falls on each count alike. A count's figure is the median of its rounds, and
 *           crr_scaling_2 the median of the rounds' own ratios (two threads over the same
 *           round's one thread), with the smallest and largest beside it;
 *   kernel  the live kernel's own tcp_crr churn with the same threads, flows and port range
 *           (bench kernel-crr, as root: the process moves into a network namespace of its own).
 * Per thread count: the total, the total per thread, and the efficiency against one thread
 * (total / (T x the one-thread figure)). The two-thread rows also give `lookup_scaling_2` and
 * `crr_scaling_2` (two threads' total over one thread's). A library built with
 * -Dcontention_counters=true also gives crr's lock acquisitions per transaction and those that
 * found the lock taken (socktab_thread_counters()). On a machine with fewer CPUs than
 * threads the threads share them: the efficiency then shows what oversubscription costs, and
 * cpus= says how many there were.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/socket.h>

#include "bench.h"
#include "opt.h"

#define MAX_COUNTS 16
#define MAX_ROUNDS 25

struct scale_row {
	int threads;
	double lookup, lookup_1thread; /* lookups/s: T threads' total; one thread, same run */
	double lookup_w, writer_ops;   /* lookups/s with one writer beside; its connections/s */
	bool lookup_counted;           /* per lookup, readers only and with the writer: */
	double lookup_rmw, lookup_stores, lookup_locks, lookup_w_rmw, lookup_w_stores;
	double crr;                    /* transactions/s, T threads' total: median of the rounds */
	double crr_round[MAX_ROUNDS];  /* each round's */
	double line_round[MAX_ROUNDS]; /* each round's line transfer (bench_line_transfer_ns) */
	uint64_t crr_wire_errors, crr_connect_errors;
	bool counted;
	double crr_locks, crr_contended; /* per transaction (contention_counters builds) */
	double crr_rmw, crr_stores, crr_taken;
	double connect95_locks; /* locks per connect() with 95 % of the range taken (counted) */
	double kernel_crr;               /* the live kernel's churn, same threads and flows; 0: not run */
};

/* A crr run of @threads threads as the scale rows take it (the socktab variant). */
static void crr_cfg(struct bench_crr_cfg *cc, int threads, int flows, double seconds,
		    uint64_t seed, int family, bool ppt, bool shares, bool incpu)
{
	bench_crr_cfg_init(cc);
	cc->threads = threads;
	cc->flows = flows < threads ? threads : flows;
	cc->seconds = seconds;
	cc->seed = seed;
	cc->family = family;
	cc->port_per_thread = ppt;
	cc->port_shares = shares;
	cc->incoming_cpu = incpu;
	cc->variant = bench_variant_find("socktab");
}

struct spread {
	double min, max;
};

/* The median of @in[0..n), n <= MAX_ROUNDS (the mean of the middle two for an even n), and
 * the smallest and largest in *@sp when it is not NULL. */
static double median(const double *in, int n, struct spread *sp)
{
	double v[MAX_ROUNDS];

	memcpy(v, in, (size_t)n * sizeof(*v));
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	if (sp) {
		sp->min = v[0];
		sp->max = v[n - 1];
	}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* crr_scaling_2_rounds=: each round's ratio, with what a line between the two threads' cores
 * cost in that round (where the host had the vCPUs). */
static void crr_rounds_out(struct bench_out *o, const struct scale_row *two,
			   const struct scale_row *one, int rounds)
{
	char buf[MAX_ROUNDS * 20] = "";
	size_t n = 0;

	for (int rd = 0; rd < rounds && n < sizeof(buf); rd++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%.2f@%.0fns", rd ? "," : "",
				      one->crr_round[rd] > 0
					      ? two->crr_round[rd] / one->crr_round[rd]
					      : 0,
				      two->line_round[rd]);
	bench_out_str(o, "crr_scaling_2_rounds", buf);
}

static void help(void)
{
	printf("usage: socktab bench scale [--threads 1,2,...] [-6] [-F FLOWS] [-l SECONDS]\n"
	       "                           [--sockets N] [--touch BYTES] [--seed S] [--json]\n"
	       "                           [--no-kernel] [--port-per-thread] [--port-shares]\n"
	       "                           [--incoming-cpu] [--rounds R]\n"
	       "defaults: --threads 1,2 -F 1000 -l 2 --sockets 250000 --touch 64 --rounds 1\n"
	       "For each thread count: established lookups by that many reader threads (socktab's\n"
	       "table, online threads, no reference) and neper tcp_crr by that many threads over\n"
	       "two shared nets (-F flows, -l seconds, the socktab variant). Prints each total,\n"
	       "per thread, and the efficiency against one thread; lookup_scaling_2 and\n"
	       "crr_scaling_2 are two threads' totals over one thread's.\n"
	       "--rounds R: crr runs R rounds of -l seconds per thread count, the counts taking\n"
	       "turns round by round; each count's total is the median of its rounds and\n"
	       "crr_scaling_2 the median of the rounds' two-over-one ratios (crr_scaling_2_min=,\n"
	       "crr_scaling_2_max= beside it), so a machine whose speed drifts moves both alike;\n"
	       "crr_scaling_2_rounds= lists each round's ratio with what a cache line took\n"
	       "between the two threads' cores then (where the host had the vCPUs).\n"
	       "-6: IPv6 crr (both hosts ::1). As root, the live kernel's own crr churn runs\n"
	       "beside (bench kernel-crr: same threads, flows and port range, in a namespace of\n"
	       "its own; crr_vs_kernel is socktab's over the kernel's); --no-kernel leaves it out.\n"
	       "--port-per-thread: crr's thread i has a listener of its own on port 12867+i, as the\n"
	       "kernel's churn has (else all share port 12867's bind buckets).\n"
	       "--port-shares: crr's thread i connects with port share i, as bench crr's.\n"
	       "--incoming-cpu: crr's thread i names receive CPU i and its listener has\n"
	       "SO_INCOMING_CPU i, as bench crr's.\n");
}

int bench_scale_main(int argc, char **argv)
{
	enum { O_THREADS = 256, O_SOCKETS, O_TOUCH, O_SEED, O_JSON, O_NO_KERNEL, O_PPT, O_ROUNDS,
	       O_SHARES, O_INCPU };
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, O_THREADS },
		{ "sockets", required_argument, NULL, O_SOCKETS },
		{ "touch", required_argument, NULL, O_TOUCH },
		{ "seed", required_argument, NULL, O_SEED },
		{ "json", no_argument, NULL, O_JSON },
		{ "no-kernel", no_argument, NULL, O_NO_KERNEL },
		{ "port-per-thread", no_argument, NULL, O_PPT },
		{ "port-shares", no_argument, NULL, O_SHARES },
		{ "incoming-cpu", no_argument, NULL, O_INCPU },
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct opt_parser op = { "socktab bench scale", "h6F:l:", longopts };
	int counts[MAX_COUNTS] = { 1, 2 }, ncounts = 2, flows = 1000, family = AF_INET, touch = 64;
	int opt, err = 0, rounds = 1;
	bool kernel = true, ppt = false, shares = false, incpu = false;
	double seconds = 2, one_crr = 0, scaling2 = 0;
	struct spread spread = { 0, 0 };
	int one = -1;
	uint64_t sockets = 250000, seed = (uint64_t)time(NULL);
	struct scale_row rows[MAX_COUNTS];
	static struct bench_crr_result acc[MAX_COUNTS]; /* each count's rounds, merged */
	struct bench_out o = { 0 };

	opt_start();
	while ((opt = opt_next(&op, argc, argv)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'h':
			help();
			return 0;
		case '6':
			family = AF_INET6;
			break;
		case 'F':
			bad = opt_count_int(&op, "-F", optarg, 1, 65535, &flows);
			break;
		case 'l':
			bad = opt_real(&op, "-l", optarg, 0.05, 3600, &seconds);
			break;
		case O_THREADS:
			bad = opt_count_list(&op, "--threads", optarg, 1, 64, counts, MAX_COUNTS,
					     &ncounts);
			break;
		case O_SOCKETS:
			bad = opt_count(&op, "--sockets", optarg, 1000, 1u << 24, &sockets);
			break;
		case O_TOUCH:
			bad = opt_count_int(&op, "--touch", optarg, 0, 256, &touch);
			break;
		case O_SEED:
			bad = opt_seed(&op, "--seed", optarg, &seed);
			break;
		case O_JSON:
			o.json = true;
			break;
		case O_NO_KERNEL:
			kernel = false;
			break;
		case O_PPT:
			ppt = true;
			break;
		case O_SHARES:
			shares = true;
			break;
		case O_INCPU:
			incpu = true;
			break;
		case O_ROUNDS:
			bad = opt_count_int(&op, "--rounds", optarg, 1, MAX_ROUNDS, &rounds);
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
	memset(rows, 0, sizeof(rows));
	memset(acc, 0, sizeof(acc));
	for (int i = 0; i < ncounts && !err; i++) {
		struct scale_row *r = &rows[i];
		struct bench_lookup_cfg lc = { .sockets = sockets, .burst = 1, .seed = seed,
					       .rounds = 3, .touch = touch, .threads = counts[i],
					       .lookups = 2000000 };
		struct bench_lookup_result lr;

		r->threads = counts[i];
		if (counts[i] == 1 && one < 0)
			one = i;
		fprintf(stderr, "scale: %d thread%s: lookups\n", counts[i], counts[i] > 1 ? "s" : "");
		if ((err = bench_lookup_run(&lc, BENCH_TABLE_SOCKTAB, &lr)))
			break;
		r->lookup = lr.lookups_per_sec;
		r->lookup_1thread = counts[i] > 1 ? lr.lookups_per_sec_1thread : lr.lookups_per_sec;
		r->lookup_counted = lr.counted && lr.reader_ops;
		if (r->lookup_counted) {
			r->lookup_rmw = (double)lr.reader_rmw / (double)lr.reader_ops;
			r->lookup_stores = (double)lr.reader_stores / (double)lr.reader_ops;
			r->lookup_locks = (double)lr.reader_locks / (double)lr.reader_ops;
		}
		fprintf(stderr, "scale: %d reader thread%s and a writer: lookups\n", counts[i],
			counts[i] > 1 ? "s" : "");
		lc.writer = true;
		if ((err = bench_lookup_run(&lc, BENCH_TABLE_SOCKTAB, &lr)))
			break;
		r->lookup_w = lr.lookups_per_sec;
		r->writer_ops = lr.writer_ops_per_sec;
		if (r->lookup_counted && lr.counted && lr.reader_ops) {
			r->lookup_w_rmw = (double)lr.reader_rmw / (double)lr.reader_ops;
			r->lookup_w_stores = (double)lr.reader_stores / (double)lr.reader_ops;
		}
	}
	/* crr: the thread counts take turns round by round, forwards then backwards. */
	for (int rd = 0; rd < rounds && !err; rd++)
		for (int k = 0; k < ncounts && !err; k++) {
			int i = rd % 2 ? ncounts - 1 - k : k;
			struct bench_crr_cfg cc;
			struct bench_crr_result cr;

			fprintf(stderr, "scale: %d thread%s: crr -F %d -l %g (round %d/%d)\n",
				counts[i], counts[i] > 1 ? "s" : "", flows, seconds, rd + 1, rounds);
			crr_cfg(&cc, counts[i], flows, seconds, seed + (uint64_t)rd, family, ppt,
				shares, incpu);
			if ((err = bench_crr_run(&cc, &cr)))
				break;
			rows[i].crr_round[rd] = cr.throughput;
			rows[i].line_round[rd] = cr.line_ns;
			bench_crr_merge(&acc[i], &cr);
		}
	for (int i = 0; i < ncounts && !err; i++) {
		struct scale_row *r = &rows[i];
		const struct bench_crr_result *cr = &acc[i];
		struct bench_crr_cfg cc;

		r->crr = median(r->crr_round, rounds, NULL);
		r->crr_wire_errors = cr->wire_errors;
		r->crr_connect_errors = cr->connect_errors;
		r->counted = cr->counted && cr->transactions;
		crr_cfg(&cc, counts[i], flows, seconds, seed, family, ppt, shares, incpu);
		if (r->counted) {
			/* connect() under port pressure: crr with flows holding 95 % of the range. */
			struct bench_crr_result c95;

			r->crr_locks = (double)cr->locks / (double)cr->transactions;
			r->crr_contended = (double)cr->locks_contended / (double)cr->transactions;
			r->crr_rmw = (double)cr->rmw / (double)cr->transactions;
			r->crr_stores = (double)cr->stores / (double)cr->transactions;
			r->crr_taken = (double)cr->lines_taken / (double)cr->transactions;
			cc.flows = (int)(0.95 * (cc.hi - cc.lo + 1));
			cc.seconds = 0.5;
			fprintf(stderr, "scale: %d thread%s: crr -F %d (95 %% of the ports)\n",
				counts[i], counts[i] > 1 ? "s" : "", cc.flows);
			if ((err = bench_crr_run(&cc, &c95)))
				break;
			r->connect95_locks = c95.counted_connects ? (double)c95.connect_locks /
									  (double)c95.counted_connects
								  : 0;
			crr_cfg(&cc, counts[i], flows, seconds, seed, family, ppt, shares, incpu);
		}
		if (kernel) {
			struct bench_kcrr_result kr;
			int kerr;

			fprintf(stderr, "scale: %d thread%s: the kernel's crr -F %d -l %g\n", counts[i],
				counts[i] > 1 ? "s" : "", cc.flows, seconds);
			kerr = bench_kernel_crr_run(counts[i], cc.flows, seconds, cc.lo, cc.hi, family,
						    &kr);
			if (kerr) {
				fprintf(stderr, "scale: the kernel's crr not run: %s\n",
					strerror(-kerr));
				kernel = false;
			} else {
				r->kernel_crr = kr.throughput;
			}
		}
	}
	if (!err && one >= 0) {
		one_crr = rows[one].crr;
		for (int i = 0; i < ncounts; i++) {
			double q[MAX_ROUNDS];

			if (rows[i].threads != 2)
				continue;
			for (int rd = 0; rd < rounds; rd++)
				q[rd] = rows[one].crr_round[rd] > 0
						? rows[i].crr_round[rd] / rows[one].crr_round[rd]
						: 0;
			scaling2 = median(q, rounds, &spread);
		}
	}
	socktab_thread_unregister();
	if (err) {
		fprintf(stderr, "bench scale: %s\n", strerror(-err));
		return 1;
	}
	for (int i = 0; i < ncounts; i++) {
		const struct scale_row *r = &rows[i];
		/* Lookups compare with the same run's one thread (the same table, the same rounds). */
		double l1 = r->lookup_1thread;
		char key[64];

		bench_out_begin(&o);
		bench_out_str(&o, "test", "socktab_scale");
		bench_out_u64(&o, "seed", seed);
		bench_out_u64(&o, "cpus", (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
		bench_out_u64(&o, "threads", (uint64_t)r->threads);
		bench_out_str(&o, "crr_family", family == AF_INET6 ? "ipv6" : "ipv4");
		bench_out_u64(&o, "crr_flows", (uint64_t)flows);
		bench_out_str(&o, "crr_listener_ports", ppt ? "per_thread" : "shared");
		bench_out_str(&o, "crr_port_shares", shares ? "per_thread" : "none");
		bench_out_str(&o, "crr_incoming_cpu", incpu ? "per_thread" : "none");
		bench_out_dbl(&o, "lookup_per_sec", "%.0f", r->lookup);
		bench_out_dbl(&o, "lookup_per_thread", "%.0f", r->lookup / r->threads);
		bench_out_dbl(&o, "lookup_1thread_same_run", "%.0f", r->lookup_1thread);
		bench_out_dbl(&o, "lookup_efficiency", "%.2f",
			      l1 > 0 ? r->lookup / (r->threads * l1) : 0);
		bench_out_dbl(&o, "lookup_with_writer_per_sec", "%.0f", r->lookup_w);
		bench_out_dbl(&o, "lookup_with_writer_vs_without", "%.2f",
			      r->lookup > 0 ? r->lookup_w / r->lookup : 0);
		bench_out_dbl(&o, "writer_connections_per_sec", "%.0f", r->writer_ops);
		if (r->lookup_counted) {
			/* A shared write: an atomic read-modify-write or a store to an atomic
			 * object (memory another thread reads). */
			bench_out_dbl(&o, "lookup_atomics_per_op", "%.3f", r->lookup_rmw);
			bench_out_dbl(&o, "lookup_shared_writes_per_op", "%.3f",
				      r->lookup_rmw + r->lookup_stores);
			bench_out_dbl(&o, "lookup_locks_per_op", "%.3f", r->lookup_locks);
			bench_out_dbl(&o, "lookup_with_writer_atomics_per_op", "%.3f",
				      r->lookup_w_rmw);
			bench_out_dbl(&o, "lookup_with_writer_shared_writes_per_op", "%.3f",
				      r->lookup_w_rmw + r->lookup_w_stores);
		} else {
			bench_out_str(&o, "lookup_atomics_per_op",
				      "not counted (meson -Dcontention_counters=true)");
		}
		bench_out_dbl(&o, "crr_per_sec", "%.0f", r->crr);
		bench_out_dbl(&o, "crr_per_thread", "%.0f", r->crr / r->threads);
		if (one_crr > 0)
			bench_out_dbl(&o, "crr_efficiency", "%.2f",
				      r->crr / (r->threads * one_crr));
		bench_out_u64(&o, "crr_wire_errors", r->crr_wire_errors);
		bench_out_u64(&o, "crr_connect_errors", r->crr_connect_errors);
		if (r->kernel_crr > 0) {
			bench_out_dbl(&o, "kernel_crr_per_sec", "%.0f", r->kernel_crr);
			bench_out_dbl(&o, "crr_vs_kernel", "%.2f", r->crr / r->kernel_crr);
		}
		if (r->counted) {
			bench_out_dbl(&o, "crr_locks_per_op", "%.2f", r->crr_locks);
			bench_out_dbl(&o, "crr_contended_locks_per_op", "%.4f", r->crr_contended);
			bench_out_dbl(&o, "crr_atomics_per_op", "%.2f", r->crr_rmw);
			bench_out_dbl(&o, "crr_shared_writes_per_op", "%.2f",
				      r->crr_rmw + r->crr_stores);
			bench_out_dbl(&o, "crr_lines_taken_per_op", "%.2f", r->crr_taken);
			bench_out_dbl(&o, "connect_locks_per_op", "%.2f", r->connect95_locks);
		} else {
			bench_out_str(&o, "crr_locks_per_op",
				      "not counted (meson -Dcontention_counters=true)");
		}
		if (r->threads == 2) {
			snprintf(key, sizeof(key), "lookup_scaling_2");
			bench_out_dbl(&o, key, "%.2f", l1 > 0 ? r->lookup / l1 : 0);
			if (one_crr > 0) {
				bench_out_dbl(&o, "crr_scaling_2", "%.2f", scaling2);
				bench_out_dbl(&o, "crr_scaling_2_min", "%.2f", spread.min);
				bench_out_dbl(&o, "crr_scaling_2_max", "%.2f", spread.max);
				bench_out_u64(&o, "crr_rounds", (uint64_t)rounds);
				crr_rounds_out(&o, r, &rows[one], rounds);
			}
		}
		bench_out_end(&o);
	}
	if (!o.json) {
		printf("\n%7s | %14s | %12s | %10s | %12s | %10s | %10s | %12s\n", "threads",
		       "lookups/s", "per thread", "efficiency", "crr trans/s", "per thread",
		       "efficiency", "kernel crr/s");
		for (int i = 0; i < ncounts; i++) {
			const struct scale_row *r = &rows[i];
			double l1 = r->lookup_1thread;

			printf("%7d | %14.0f | %12.0f | %10.2f | %12.0f | %10.0f | %10.2f | %12.0f\n",
			       r->threads, r->lookup, r->lookup / r->threads,
			       l1 > 0 ? r->lookup / (r->threads * l1) : 0, r->crr,
			       r->crr / r->threads,
			       one_crr > 0 ? r->crr / (r->threads * one_crr) : 0, r->kernel_crr);
		}
	}
	return 0;
}
