/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sharing the device with the kernel (share.c): `socktab serve --xdp DEV` on a device whose
 * IPv4 address the kernel holds too. docs/sharing.md has the whole recipe.
 */
#ifndef SOCKTAB_STACK_SHARE_H
#define SOCKTAB_STACK_SHARE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stack.h"

/* After the net is made, before any socket: when the kernel holds --addr on --xdp DEV, load the
 * steering program, split the ephemeral ports with the kernel, and set the port feed (keys to
 * the program's map, a kernel placeholder socket per key). 0 (sharing or not), -1 on error. */
int share_open(struct stack *st);
/* Is the device shared (share_open() found the kernel's address and loaded the program)? */
bool share_active(void);
/* Attach the steering program to the device and put the AF_XDP socket @xsk_fd in its map
 * (queue cfg.xdp_queue). 0 or -1 (said on stderr). */
int share_attach(struct stack *st, int xsk_fd);
/* The kernel's link address of neighbour @ip of @family (AF_INET: its ARP table; AF_INET6: its
 * IPv6 neighbour table, read over rtnetlink), asking the kernel to resolve it when it has none
 * (ARP, neighbour discovery): 0 with @mac filled, or -1. It never blocks. */
int share_neigh(int family, const union st_addr *ip, uint8_t mac[6]);
/* share_* counters (program verdicts, placeholders, refusals) as name=value lines. */
void share_print_stats(FILE *f);
/* Detach the program, clear the feed, close the placeholders. */
void share_close(struct stack *st);

#endif
