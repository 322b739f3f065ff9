/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef SOCKTAB_CLI_H
#define SOCKTAB_CLI_H

int socktab_cli_bench_connect(int argc, char **argv);
int socktab_cli_bench_crr(int argc, char **argv);
int socktab_cli_bench_lookup(int argc, char **argv);
int socktab_cli_bench_tour(int argc, char **argv);
int socktab_cli_bench_rss(int argc, char **argv);
int socktab_cli_bench_udp(int argc, char **argv);
int socktab_cli_replay(int argc, char **argv);

#endif
