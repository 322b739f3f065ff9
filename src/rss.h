/* SPDX-License-Identifier: BSD-2-Clause */
/* RSS-aware port choice and the per-queue summaries of a destination's free ports (rss.c). */
#ifndef SOCKTAB_SRC_RSS_H
#define SOCKTAB_SRC_RSS_H

#include "net.h"

struct socktab__rss;
struct socktab__rssidx;

/* A connect()'s RSS filter: the Toeplitz hash of its reply tuple minus the port. */
struct socktab__rss_filter {
	struct socktab__rss *rss;
	uint16_t queue;
	int slot;                          /* dense number of @queue among the RETA's, or -1 */
	uint32_t queues;                   /* the RETA's distinct queues, at least 1 */
	uint32_t base;                     /* Toeplitz hash of the reply tuple without the port */
	const uint32_t *lo, *hi;           /* contributions of the port's low and high byte */
};
/* False when @sk asks for no queue. With no RSS state in the net, true with slot -1: no port
 * passes. Caller is inside an RCU read-side section, which must last as long as the filter is
 * used. */
bool socktab__rss_filter_init_rcu(struct socktab_net *net, const struct socktab_sock *sk,
				  struct socktab__rss_filter *f);
bool socktab__rss_port_ok(const struct socktab__rss_filter *f, uint16_t port);
/* Free the net's RSS state (net teardown). */
void socktab__rss_free(struct socktab_net *net);

/*
 * Per-queue summaries of one destination's free ports, over the busy-port bitmap of its
 * portmap (65536 bits, bit p set iff port p is busy). new: NULL when @f has no RSS state or a
 * queue count past the limit, or on allocation failure; the caller publishes the result, then
 * calls fill for the ports it will search, [lo, hi]. sync: port @port of @bits changed.
 * next_word: the first 64-port word in [w, wend] that holds a free port of parity @par (-1:
 * either) on queue slot @slot, or a number past wend. free: at once (never published, or a
 * grace period passed); retire: after a grace period. Context: new, fill, next_word and sync
 * under RCU; sync runs under the port's ehash stripe lock, fill under none; both only write the
 * summaries (atomics).
 */
struct socktab__rssidx *socktab__rssidx_new(struct socktab_net *net,
					    const struct socktab__rss_filter *f);
void socktab__rssidx_fill(struct socktab__rssidx *ri, const _Atomic uint64_t *bits, uint16_t lo,
			  uint16_t hi);
void socktab__rssidx_sync(struct socktab__rssidx *ri, const _Atomic uint64_t *bits,
			  uint16_t port);
uint32_t socktab__rssidx_next_word(const struct socktab__rssidx *ri, int slot, uint32_t w,
				   uint32_t wend, int par);
/* Does @ri summarise for @f's RSS state (the one connect() filters with)? */
bool socktab__rssidx_matches(const struct socktab__rssidx *ri,
			     const struct socktab__rss_filter *f);
/* Summary bits over [lo, hi] that disagree with @bits: 0 at rest (tests). */
uint32_t socktab__rssidx_check(const struct socktab__rssidx *ri, const _Atomic uint64_t *bits,
			       uint16_t lo, uint16_t hi);
bool socktab__rssidx_live(const struct socktab__rssidx *ri);
void socktab__rssidx_free(struct socktab__rssidx *ri);
void socktab__rssidx_retire(struct socktab__rssidx *ri);

#endif /* SOCKTAB_SRC_RSS_H */
