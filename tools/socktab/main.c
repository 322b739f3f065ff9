/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab: the command-line front door. It only dispatches: each command is a library of its own
 * (bench/: the benchmarks, replay/: the conformance harness), and all of them use socktab's
 * public API only. Lists only commands that work.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "replay.h"
#include "serve.h"
#include "socktab/socktab.h"

/* A command or a benchmark: its name, its entry point (argv[0] is the name), one line on it. */
struct cmd {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *what;
};

static const struct cmd benchmarks[] = {
	{ "batch", bench_batch_main,
	  "a poll loop's lookups: one per section vs socktab_lookup_batch4/6" },
	{ "connect", bench_connect_main,
	  "connect() cost vs port occupancy toward one destination" },
	{ "crr", bench_crr_main, "neper tcp_crr between a client net and a server net" },
	{ "kernel-crr", bench_kernel_crr_main,
	  "the live kernel's tcp_crr churn in its own namespace (root): crr's anchor" },
	{ "lookup", bench_lookup_main,
	  "established lookups: socktab vs DPDK rte_hash and liburcu lfht" },
	{ "poll", bench_poll_main,
	  "longest call of a poll loop: budgeted TIME_WAIT expiry, reserved socket memory" },
	{ "rss", bench_rss_main,
	  "RSS-aware connect(): cost with the queue's share empty and 95 % full" },
	{ "scale", bench_scale_main, "lookups and tcp_crr by 1, 2, ... threads: efficiency" },
	{ "tour", bench_tour_main, "every experiment and peer in one run (what `make run` runs)" },
	{ "udp", bench_udp_main, "UDP lookups with and without the 4-tuple hash" },
};

#define NBENCH (sizeof(benchmarks) / sizeof(benchmarks[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"usage: socktab <command> [options]\n"
		"\n"
		"commands:\n"
		"  bench batch [--sockets N] [--batch B] [--touch BYTES] [--kind K]\n"
		"                 a poll loop's lookups: one per read-side section vs\n"
		"                 socktab_lookup_batch4/6\n"
		"  bench connect [--range LO-HI] [--occupancy F | --sweep F1,F2,...]\n"
		"                [--variant socktab|linux|linux-6.1|all] [-N CONNECTS] [--seed S]\n"
		"                 connect() cost vs port occupancy toward one destination\n"
		"  bench crr [-T THREADS] [-F FLOWS] [-l SECONDS | -N TRANSACTIONS] [--variant V]\n"
		"                 neper tcp_crr between a client net and a server net\n"
		"  bench kernel-crr [-6] [-T THREADS] [-F FLOWS] [-l SECONDS] [--range LO-HI]\n"
		"                 the live kernel's tcp_crr churn in its own namespace (root)\n"
		"  bench lookup [--sockets N] [--peer socktab|rte_hash|lfht|all] [--burst B]\n"
		"                 established lookups: socktab vs DPDK rte_hash and liburcu lfht\n"
		"  bench poll [--entries N] [--budget B] [--children N] [--rounds R]\n"
		"                 longest call of a poll loop: budgeted TIME_WAIT expiry,\n"
		"                 reserved socket memory\n"
		"  bench rss [--queues Q] [--share F | --occupancy F] [-N CONNECTS] [--seed S]\n"
		"                 RSS-aware connect(): cost with the queue's share empty and\n"
		"                 95 %% full (4 and 16 queues); --occupancy: vs a plain connect()\n"
		"  bench scale [--threads 1,2,...] [-F FLOWS] [-l SECONDS] [--no-kernel]\n"
		"                 lookups and tcp_crr by 1, 2, ... threads: efficiency\n"
		"  bench tour [--seed S] [-N CRR_TRANSACTIONS] [--sockets N]\n"
		"                 every experiment and peer in one run (what `make run` runs)\n"
		"  bench udp --connected N [--unconnected M] [--hash4 on|off|both] [-l SECONDS]\n"
		"                 UDP lookups with and without the 4-tuple hash\n"
		"  replay [--backend socktab|kernel|both] [-q] [--case SUBSTR] FILE...\n"
		"  replay --random N [--seed S] [-v]\n"
		"                 run .sock conformance scripts on socktab and the live kernel\n"
		"  serve (--tun DEV | --xdp DEV) --peer-addr A/P --addr A\n"
		"        [--tcp-echo|--http|--udp-echo|--sockperf PORT]...\n"
		"        [--connect ADDR:PORT --flows N [--crr]] [--duration S]\n"
		"        [--xdp-mode auto|skb|native] [--xdp-queue Q] [--lookup batch|single]\n"
		"                 a TCP/UDP/ICMP endpoint on a TUN device, or with --xdp on an\n"
		"                 AF_XDP socket, demultiplexed by socktab\n"
		"  version        print the version (and the library's, if it differs)\n"
		"  help           this text\n"
		"\n"
		"Run 'socktab bench --help' for the benchmarks, and\n"
		"'socktab bench <benchmark> --help', 'socktab replay --help' or\n"
		"'socktab serve --help' for details; 'man socktab' for all of it.\n");
}

/*
 * "socktab MAJOR.MINOR" when the library the program runs with (socktab_version(): the loaded
 * one's own string) is the one its headers came from; otherwise both in full, "socktab 0.1.0
 * (library 0.2.0)", so a mismatched build or install shows itself.
 */
static int version(void)
{
	const char *lib = socktab_version();

	if (lib && !strcmp(lib, SOCKTAB_VERSION_STRING))
		printf("socktab %d.%d\n", SOCKTAB_VERSION_MAJOR, SOCKTAB_VERSION_MINOR);
	else
		printf("socktab %s (library %s)\n", SOCKTAB_VERSION_STRING, lib ? lib : "unknown");
	return 0;
}

/* "connect, crr, ...": the benchmarks' names. */
static const char *bench_names(void)
{
	static char buf[128];
	size_t n = 0;

	for (size_t i = 0; i < NBENCH && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? ", " : "",
				      benchmarks[i].name);
	return buf;
}

static int bench(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "socktab bench: which benchmark? (%s)\n", bench_names());
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		printf("usage: socktab bench <benchmark> [options]\n\nbenchmarks:\n");
		for (size_t i = 0; i < NBENCH; i++)
			printf("  %-8s %s\n", benchmarks[i].name, benchmarks[i].what);
		printf("\nRun 'socktab bench <benchmark> --help' for its options.\n");
		return 0;
	}
	for (size_t i = 0; i < NBENCH; i++)
		if (!strcmp(argv[1], benchmarks[i].name))
			return benchmarks[i].main(argc - 1, argv + 1);
	fprintf(stderr, "socktab bench: unknown benchmark '%s' (available: %s)\n", argv[1],
		bench_names());
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "socktab: which command? (bench, replay, serve, version, help)\n");
		return 2;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version"))
		return version();
	if (!strcmp(argv[1], "bench"))
		return bench(argc - 1, argv + 1);
	if (!strcmp(argv[1], "replay"))
		return rp_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "serve"))
		return serve_main(argc - 1, argv + 1);
	fprintf(stderr, "socktab: unknown command '%s' (commands: bench, replay, serve, version, help)\n",
		argv[1]);
	return 2;
}
