/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab's benchmarks (`socktab bench NAME`): the entry point of each, called by the CLI with
 * argv[0] = NAME, and the measurements behind crr, connect and lookup, callable without their
 * output so `socktab bench tour` can run them side by side.
 *
 * The benchmarks use socktab's public API only.
 */
#ifndef SOCKTAB_BENCH_H
#define SOCKTAB_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"

/* ---- entry points: parse the options, run, print; exit status (2: bad usage) ---- */
int bench_batch_main(int argc, char **argv);
int bench_connect_main(int argc, char **argv);
int bench_crr_main(int argc, char **argv);
int bench_scale_main(int argc, char **argv);
int bench_kernel_crr_main(int argc, char **argv);
int bench_lookup_main(int argc, char **argv);
int bench_poll_main(int argc, char **argv);
int bench_rss_main(int argc, char **argv);
int bench_tour_main(int argc, char **argv);
int bench_udp_main(int argc, char **argv);

/* ---- crr (crr.c) ---- */
struct bench_crr_cfg {
	int threads, flows;
	double seconds;         /* time mode when transactions == 0 */
	uint64_t transactions;  /* -N: total over all threads */
	int lo, hi;             /* client ephemeral range */
	int variant;            /* index into bench_variants */
	int rcu_precheck;       /* -1: from the variant */
	int lport_inside;       /* -1: from the variant */
	bool time_wait;         /* graceful close (TIME_WAIT on the client) instead of RST */
	uint64_t seed;
	double warmup_s;        /* -l mode: seconds of untimed transactions per thread first */
	bool progress;          /* progress lines on stderr */
	bool full_walk;         /* recycle the flows on second-parity ports first (crr.c) */
	int family;             /* AF_INET (127.0.0.1) or AF_INET6 (::1) */
	bool port_per_thread;   /* thread i's flows go to a listener of its own on port 12867 + i */
	bool port_shares;       /* thread i connects with port share i of the threads' count
				 * rounded up to a power of two (socktab_thread_set_port_share) */
	bool incoming_cpu;      /* thread i's lookups name receive CPU i (socktab_set_rx_cpu) and
				 * listener i has SO_INCOMING_CPU i */
	bool wildcard;          /* listeners bound to 0.0.0.0 / :: instead of the loopback address */
	double paired_ms;       /* > 0: thread 0 alone and all threads take turns in phases of this
				 * many ms (crr.c); the result's paired_* figures */
};

struct bench_crr_result {
	uint64_t transactions, connect_errors, wire_errors;
	double elapsed_s, throughput, correlation, ports_tried_mean;
	uint64_t ports_tried, connects; /* raw counts behind ports_tried_mean */
	int rounds;                     /* runs merged into this result */
	double utime[2], stime[2];
	int num_samples;
	struct bench_histo histo;
	int rcu_precheck, lport_inside; /* the switches in effect */
	uint64_t full_walk_transactions; /* with full_walk: how many transactions the flows on
					  * second-parity ports give (see crr.c) */
	bool counted;                    /* the library counts (-Dcontention_counters) */
	uint64_t locks, locks_contended; /* the workers' lock acquisitions while measured */
	uint64_t rmw, stores;            /* their atomic read-modify-writes and stores */
	uint64_t lines_taken;            /* their writes to lines another thread wrote last */
	uint64_t counted_connects, connect_locks; /* their connect()s, the locks those took */
	/* With paired_ms: transactions and seconds of the phases where thread 0 ran alone [0] and
	 * where every thread ran [1]; paired_scaling is the [1] rate over the [0] rate. */
	uint64_t paired_n[2];
	double paired_s[2], paired_scaling;
	double line_ns; /* two threads or more: bench_line_transfer_ns() before and after the run,
			 * the larger (of every merged run); 0: not measured */
};

void bench_crr_cfg_init(struct bench_crr_cfg *c);
/* One run: fresh nets, set-up, warm-up, measurement. 0 or a negative errno (message on stderr). */
int bench_crr_run(const struct bench_crr_cfg *c, struct bench_crr_result *r);
/* Add run @r into @acc (zeroed before the first): counts and histograms add up, throughput is
 * weighted by time, CPU times add up (acc's start values are the first run's). */
void bench_crr_merge(struct bench_crr_result *acc, const struct bench_crr_result *r);

/* ---- the kernel's own crr (kcrr.c) ---- */
struct bench_kcrr_result {
	uint64_t transactions, errors;
	double throughput; /* transactions/s, the threads' sum */
};
/* One run of the live kernel's tcp_crr churn (kcrr.c) in a new network namespace, which the
 * calling process then stays in. 0, -EPERM without the right to make one, or a negative errno. */
int bench_kernel_crr_run(int threads, int flows, double seconds, int lo, int hi, int family,
			 struct bench_kcrr_result *r);

/* ---- connect (connect.c) ---- */
/* Mean connect() ns and ports tried at occupancy @occ, measured as `bench connect` does. */
int bench_connect_measure(int variant, int lo, int hi, double occ, int n, int rounds,
			  uint64_t seed, double *mean_ns, double *tried);

/* ---- lookup (lookup.c) ---- */
enum bench_table {
	BENCH_TABLE_SOCKTAB,        /* RCU-scoped lookups, no reference, on an online thread */
	BENCH_TABLE_SOCKTAB_SHARED, /* socktab net whose tables are shared with another net */
	BENCH_TABLE_SOCKTAB_REF,    /* socktab's table, referenced lookups (lookup + sock_put) */
	BENCH_TABLE_SOCKTAB_SECTIONS, /* socktab's table, one read-side section per lookup */
	BENCH_TABLE_RTE_HASH,
	BENCH_TABLE_LFHT,
	BENCH_TABLE_COUNT,
};
const char *bench_table_name(enum bench_table t);
bool bench_table_available(enum bench_table t);
/* socktab, socktab-shared, socktab-ref and socktab-sections: socktab tables (they have
 * listeners). */
bool bench_table_is_socktab(enum bench_table t);

enum bench_lookup_mode {
	BENCH_LOOKUP_ESTABLISHED, /* lookups of established 4-tuples (--misses: absent ones) */
	BENCH_LOOKUP_LISTENER,    /* SYN flood: random 4-tuples toward one listener (socktab only) */
};

struct bench_lookup_cfg {
	uint64_t sockets, lookups;
	int burst;      /* 1: single lookups */
	int misses_pct; /* share of lookups for keys not in the table */
	uint64_t seed;
	int rounds;     /* timed rounds per table, tables in turn; the median counts */
	bool progress;
	int touch;      /* bytes of the connection's own state read after each hit (0..256) */
	int slots_per_socket; /* socktab's ehash: pow2 >= this x sockets slots (0: 2) */
	int threads;    /* reader threads (0 or 1: the calling thread only) */
	int mode;       /* enum bench_lookup_mode */
	bool writer;    /* socktab tables: a writer thread churns connections beside the readers */
};
struct bench_lookup_result {
	double lookups_per_sec, ns_per_lookup; /* threads > 1: the N threads' aggregate */
	double lookups_per_sec_1thread;        /* threads > 1: one thread, same run */
	double scaling;                        /* threads > 1: aggregate / one thread */
	double threads_cpu_share; /* threads > 1: CPU time the readers got over threads x wall
				   * time (median round); below 1: they waited for a CPU */
	uint64_t hits, bytes; /* hits seen (one-thread rounds); memory the table took (RSS delta) */
	double bytes_per_socket; /* bytes / sockets */
	double build_s;          /* seconds to build the table */
	bool burst_native;    /* the table's own batch lookup was used */
	int rounds;
	bool skipped;         /* the table could not be built (a peer only); why says why */
	char why[160];
	/* The reader threads' rounds (threads > 1 or writer): lookups, and the library's counts
	 * over them when it counts (-Dcontention_counters); the writer's connections per second. */
	bool counted;
	uint64_t reader_ops, reader_locks, reader_rmw, reader_stores;
	double writer_ops_per_sec;
	/* socktab's table, one thread, no writer: the 16-chain pointer chase over as much memory
	 * as the table took, timed right after the table's pass in every round (median, ns per
	 * load), and the pass's ns per lookup over two such loads, round by round (median, least,
	 * most); 0 where not measured. */
	double mem_parallel_ns, vs_burst_limit, vs_burst_limit_min, vs_burst_limit_max;
};
/* Build table @t with the cfg's sockets, time its lookups. 0 or negative errno. */
int bench_lookup_run(const struct bench_lookup_cfg *c, enum bench_table t,
		     struct bench_lookup_result *r);
/* Build the @n tables @t, then time them in turn (c->rounds rounds); r[i] for t[i]. A peer that
 * cannot be built (memory, its own limits) is skipped (r[i].skipped); socktab failing is an
 * error. */
int bench_lookup_run_many(const struct bench_lookup_cfg *c, const enum bench_table *t, int n,
			  struct bench_lookup_result *r);

/* Memory of socktab's TIME_WAIT entries, measured in a child process (bench_lookup_timewait). */
struct bench_timewait_result {
	uint64_t entries;       /* TIME_WAIT entries counted (socktab_net_stats) */
	uint64_t bytes;         /* RSS growth while they were made */
	uint64_t pool_socks;    /* the net's pool objects at the end (live + free) */
	double bytes_per_entry; /* RSS growth per entry over the second half of them */
	double bytes_per_entry_all; /* bytes / entries */
	char why[160];          /* non-empty: not measured, and why */
};
/* Make @n TIME_WAIT entries in a fresh net configured as bench lookup's socktab table (@c's
 * touch sets the caller data size) and measure their RSS. Runs in a child process, so call it
 * before this process registers with RCU or starts other threads. 0 or negative errno. */
int bench_lookup_timewait(const struct bench_lookup_cfg *c, uint64_t n,
			  struct bench_timewait_result *r);
/* Mean ns of one dependent load in a random pointer chase over @bytes. */
double bench_mem_latency_ns(uint64_t bytes, uint64_t seed);
/* The same chase by 16 independent chains at once, ns per load: the machine's
 * memory-level-parallelism limit over that much memory (bench lookup's mem_parallel_ns). */
double bench_mem_parallel_ns(uint64_t bytes, uint64_t seed);

#endif
