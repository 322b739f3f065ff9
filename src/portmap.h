/* SPDX-License-Identifier: BSD-2-Clause */
/* The per-destination index of busy local ports that lets connect() skip its walk (portmap.c). */
#ifndef SOCKTAB_SRC_PORTMAP_H
#define SOCKTAB_SRC_PORTMAP_H

#include "net.h"

struct socktab__portmap;

/* ehash choke-point hooks. Caller holds the ehash lock of sk->hash. */
void socktab__portmap_ehash_add_locked(struct socktab_sock *sk);
void socktab__portmap_ehash_del_locked(struct socktab__tables *t, struct socktab_sock *sk);
/* @new replaces @old in ehash with the same 4-tuple and device: it takes over how @old was
 * counted. Caller holds the ehash lock of their hash. */
void socktab__portmap_ehash_pass_locked(const struct socktab_sock *old, struct socktab_sock *new);
/* The index of sk's destination, built if it is hot for a walk over [low, high] that examines
 * one port in @queues, at least 1 (an RSS connect(): the queues of the RETA; else 1). Caller is
 * inside an RCU read-side section. */
struct socktab__portmap *socktab__portmap_get_rcu(struct socktab_net *net, struct socktab_sock *sk,
						 uint32_t hash0, int low, int high,
						 uint32_t queues);
struct socktab__rss_filter;
struct socktab__rssidx;
/* An RSS connect()'s view of one index: its filter and the per-queue summaries (rss.c). */
struct socktab__portmap_rss {
	const struct socktab__rss_filter *f;
	const struct socktab__rssidx *ri;
};
/* The summaries of @pm for @f, built if missing; false: filter each candidate instead.
 * Caller is inside an RCU read-side section and holds sk's lock only. */
bool socktab__portmap_rss_get_rcu(struct socktab_net *net, struct socktab__portmap *pm,
				  const struct socktab__rss_filter *f, struct socktab__portmap_rss *q);
/* The next position >= @i whose port is neither busy nor reserved (with @q: and on its queue;
 * *rejected counts the free ports of other queues tested on the way). */
uint32_t socktab__portmap_next(struct socktab__portmap *pm, struct socktab_net *net,
			       const struct socktab__portmap_rss *q, uint32_t base, uint32_t high,
			       uint32_t remaining, uint32_t step, uint32_t i, uint64_t *rejected);
/* Summary bits of the net's live per-queue summaries that disagree with their index (tests,
 * at rest); *nsets: how many sets were checked. */
uint32_t socktab__portmap_rss_check(struct socktab_net *net, uint32_t *nsets);
/* Summary bits of the net's indexes that say full of a word that is not (tests, at rest);
 * *marked: how many bits say full. */
uint32_t socktab__portmap_summary_check(struct socktab_net *net, uint32_t *marked);
/* Live indexes and their bytes (tests, benchmarks). */
void socktab__portmap_stats(struct socktab_net *net, uint32_t *nindex, uint64_t *bytes);

#endif /* SOCKTAB_SRC_PORTMAP_H */
