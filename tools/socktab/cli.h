/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef SOCKTAB_CLI_H
#define SOCKTAB_CLI_H

int socktab_cli_replay(int argc, char **argv);

#endif
