/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab: the Linux kernel's TCP/UDP socket tables as a userspace C library. This umbrella
 * header includes every public header:
 *   socktab/version.h  version macros and socktab_version()
 *   socktab/types.h    handles, protocols, TCP states, option names
 *   socktab/net.h      network namespaces, settings, counters, thread registration
 *   socktab/sock.h     the socket calls (socket, bind, listen, connect, close, options, names)
 *   socktab/lookup.h   the packet path: TCP and UDP lookups
 *   socktab/udp.h      UDP's sendto() side, the hash4 switch and counters
 *   socktab/dev.h      devices, addresses and routes
 *   socktab/diag.h     socket dumps (what ss shows)
 *   socktab/sk_lookup.h the dispatch hook: callbacks that pick a packet's socket (sk_lookup)
 *
 * Error policy: every int-returning function returns 0 (or a non-negative value where stated) on
 * success and a negative errno on failure; a failed call leaves every table exactly as it was
 * (docs/errors.md lists the kernel-conformant exceptions). Constructors return NULL and set
 * errno. A lookup miss is NULL, not an error.
 *
 * Threads and RCU: socktab uses liburcu's urcu-memb flavour. Every thread that calls any socktab
 * function other than socktab_net_params_init() and socktab_version() must first call
 * socktab_thread_register() (and socktab_thread_unregister() before it exits). Lookups are
 * lock-free and may run on any registered thread concurrently with control calls on other
 * threads. Control calls (bind, connect, close, setsockopt...) on *different* sockets may run
 * concurrently; they take per-bucket locks. Calls on the *same* socket are serialised by a
 * per-socket lock. A poll-mode thread may go online (socktab_thread_online()) and announce
 * quiescent states instead of opening read-side sections. Each function's comment ends with its
 * Context: what it needs and takes.
 *
 * Rule numbers (R1...) in the comments refer to docs/rules.md, which states the kernel behaviour
 * each one names.
 */
#ifndef SOCKTAB_SOCKTAB_H
#define SOCKTAB_SOCKTAB_H

#include "socktab/version.h"
#include "socktab/types.h"
#include "socktab/net.h"
#include "socktab/sock.h"
#include "socktab/lookup.h"
#include "socktab/udp.h"
#include "socktab/dev.h"
#include "socktab/diag.h"
#include "socktab/sk_lookup.h"

#endif /* SOCKTAB_SOCKTAB_H */
