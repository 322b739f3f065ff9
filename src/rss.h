/* SPDX-License-Identifier: BSD-2-Clause */
/* RSS-aware port choice (rss.c). */
#ifndef SOCKTAB_SRC_RSS_H
#define SOCKTAB_SRC_RSS_H

#include "net.h"

struct socktab__rss;

/* A connect()'s RSS filter: the Toeplitz hash of its reply tuple minus the port. */
struct socktab__rss_filter {
	const struct socktab__rss *rss;
	uint16_t queue;
	uint32_t base;                     /* Toeplitz hash of the reply tuple without the port */
	const uint32_t *lo, *hi;           /* contributions of the port's low and high byte */
};
/* False when @sk asks for no queue or the net has no RSS state. Caller is inside an RCU
 * read-side section, which must last as long as the filter is used. */
bool socktab__rss_filter_init_rcu(struct socktab_net *net, const struct socktab_sock *sk,
				  struct socktab__rss_filter *f);
bool socktab__rss_port_ok(const struct socktab__rss_filter *f, uint16_t port);
/* Free the net's RSS state (net teardown). */
void socktab__rss_free(struct socktab_net *net);

#endif /* SOCKTAB_SRC_RSS_H */
