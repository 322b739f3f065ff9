/* SPDX-License-Identifier: BSD-2-Clause */
/* socktab: command-line front end. Lists only subcommands that work. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "replay.h"
#include "socktab/socktab.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: socktab <command> [options]\n"
		"\n"
		"commands:\n"
		"  bench connect [--range LO-HI] [--occupancy F | --sweep F1,F2,...]\n"
		"                [--variant socktab|linux|linux-6.1|all] [-N CONNECTS] [--seed S]\n"
		"                 connect() cost vs port occupancy toward one destination\n"
		"  bench crr [-T THREADS] [-F FLOWS] [-l SECONDS | -N TRANSACTIONS] [--variant V]\n"
		"                 neper tcp_crr between a client net and a server net\n"
		"  bench lookup [--sockets N] [--peer socktab|rte_hash|lfht|all] [--burst B]\n"
		"                 established lookups: socktab vs DPDK rte_hash and liburcu lfht\n"
		"  bench tour [--seed S]\n"
		"                 every seed experiment and peer in one run (what `make run` runs)\n"
		"  bench rss [--queues Q] [--occupancy F] [-N CONNECTS] [--seed S]\n"
		"                 RSS-aware port choice: cost vs a plain connect(), queue hits\n"
		"  bench udp --connected N [--unconnected M] [--hash4 on|off|both] [-l SECONDS]\n"
		"                 UDP lookups with and without the 4-tuple hash (seed 003)\n"
		"  replay [--backend socktab|kernel|both] [-q] [--case SUBSTR] FILE...\n"
		"  replay --random N [--seed S]\n"
		"                 run .sock conformance scripts on socktab and the live kernel\n"
		"  version        print the library version\n"
		"  help           this text\n"
		"\n"
		"Run 'socktab bench <benchmark> --help' for details.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		usage(stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("socktab %d.%d\n", SOCKTAB_VERSION_MAJOR, SOCKTAB_VERSION_MINOR);
		return 0;
	}
	if (!strcmp(argv[1], "replay"))
		return rp_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bench")) {
		if (argc >= 3 && !strcmp(argv[2], "connect"))
			return bench_connect_main(argc - 2, argv + 2);
		if (argc >= 3 && !strcmp(argv[2], "rss"))
			return bench_rss_main(argc - 2, argv + 2);
		if (argc >= 3 && !strcmp(argv[2], "crr"))
			return bench_crr_main(argc - 2, argv + 2);
		if (argc >= 3 && !strcmp(argv[2], "lookup"))
			return bench_lookup_main(argc - 2, argv + 2);
		if (argc >= 3 && !strcmp(argv[2], "tour"))
			return bench_tour_main(argc - 2, argv + 2);
		if (argc >= 3 && !strcmp(argv[2], "udp"))
			return bench_udp_main(argc - 2, argv + 2);
		fprintf(stderr, "socktab bench: unknown benchmark '%s' (available: connect, crr, "
			"lookup, rss, tour, udp)\n",
			argc >= 3 ? argv[2] : "");
		return 2;
	}
	fprintf(stderr, "socktab: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
