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
 *   socktab/feed.h     the port feed: the ports a net owns, told as they change (steering)
 *
 * Error policy: every int-returning function returns 0 (or a non-negative value where stated) on
 * success and a negative errno on failure; a failed call leaves every table exactly as it was
 * (docs/errors.md lists the kernel-conformant exceptions). Constructors return NULL and set
 * errno. A lookup miss is NULL, not an error.
 *
 * Threads and RCU: socktab uses liburcu's urcu-memb flavour. Every thread that calls a socktab
 * function whose Context is not "any thread, registered or not" must first call
 * socktab_thread_register() (and socktab_thread_unregister() before it exits). Lookups are
 * lock-free and may run on any registered thread concurrently with control calls on other
 * threads. Control calls (bind, connect, close, setsockopt...) on *different* sockets may run
 * concurrently; they take per-bucket locks. Calls on the *same* socket are serialised by a
 * per-socket lock. A poll-mode thread may go online (socktab_thread_online()) and announce
 * quiescent states instead of opening read-side sections.
 *
 * Contexts: each function's comment states where it may run with one of these seven sentences,
 * word for word, as the first sentence of its Context; a second sentence may follow (the locks
 * the call takes, what its arguments must be). A comment that covers several declarations (up
 * to the next blank line or comment) states one Context for all of them.
 *   Context: any thread, registered or not.
 *     Needs no registration: it may run on any thread, inside a read-side section and a
 *     dispatch callback too.
 *   Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
 *     It only reads, or holds a leaf lock briefly, and never waits for a grace period.
 *   Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
 *   callback.
 *     It takes socket or table locks, or changes a setting: fine inside a section (a poll
 *     loop's around a burst of packets), but a dispatch callback runs while the lookup's caller
 *     may hold locks of its own, so there it could deadlock.
 *   Context: registered thread, only inside an RCU read-side section.
 *     What it returns, or the argument it takes without a reference, is valid only until that
 *     section ends.
 *   Context: inside a dispatch callback only.
 *     Only with the context a running callback was given (socktab/sk_lookup.h).
 *   Context: registered thread, outside any RCU read-side section of its own; waits for a grace
 *   period.
 *     It blocks until every reader that might still see what it removed has finished.
 *   Context: registered thread, outside any RCU read-side section of its own.
 *     It ends or changes the thread's part in RCU.
 * An RCU read-side section is one opened with socktab_rcu_read_lock(), an online thread's from
 * one quiescent state to the next, or the lookup's a dispatch callback runs in. "A section of
 * its own" is any of these but an online thread's, which the calls of the last two sentences
 * leave on their way (a quiescent state). docs/concurrency.md, "What may run inside a
 * read-side section", gives the reasons. Builds with -Dpacket_path_checks=true check what the
 * code can: the calls of "only inside" stop (assert) outside a section; those of "outside any
 * section of its own" refuse or stop inside one (as each says); the calls of "not inside a
 * dispatch callback" that take a lock or change something print which and abort inside one.
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
#include "socktab/feed.h"

#endif /* SOCKTAB_SOCKTAB_H */
