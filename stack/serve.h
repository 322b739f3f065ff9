/* SPDX-License-Identifier: BSD-2-Clause */
/* `socktab serve`: a userspace TCP/UDP/ICMP endpoint on a TUN device, demultiplexed by
 * socktab (stack/stack.h has the map of the stack). */
#ifndef SOCKTAB_SERVE_H
#define SOCKTAB_SERVE_H

/* The command's entry point: argv[0] is "serve". Exit status 0, 1 (setup failed) or 2 (bad
 * usage). */
int serve_main(int argc, char **argv);

#endif
