/* SPDX-License-Identifier: BSD-2-Clause */
/* The dispatch hook (sk_lookup.c): the net's callbacks, run at the listener / unconnected step. */
#ifndef SOCKTAB_SRC_SK_LOOKUP_H
#define SOCKTAB_SRC_SK_LOOKUP_H

#include "socktab/sk_lookup.h"

#include "net.h"

/* The hooks' verdict "drop" as a lookup result (never a socket's address). */
#define SOCKTAB__SK_LOOKUP_DROP ((struct socktab_sock *)(uintptr_t)1)

/* A net's callbacks, in attach order: replaced whole under the settings lock, freed after a
 * grace period. */
struct socktab__sk_lookup_array {
	struct rcu_head rcu;
	uint32_t n;                        /* (c) */
	struct {
		/* (c, but NULL once detached in place) */
		_Atomic(socktab_sk_lookup_fn) fn;
		void *arg;                 /* (c) */
		int id;                    /* (settings lock) socktab_sk_lookup_attach()'s return;
					    * 0 once detached in place */
	} cb[];
};

/* Are callbacks attached? The one test the packet path pays when none are: a byte of the
 * net's first line, which the table hashes read anyway, and a branch taken the same way every
 * time. It may lag the list by a moment: the run treats a NULL list as "pass". */
static inline bool socktab__sk_lookup_on(const struct socktab_net *net)
{
	return atomic_load_explicit(&((struct socktab_net *)net)->sk_lookup_on,
				    memory_order_relaxed) != 0;
}

/*
 * Run @net's callbacks for a packet (R127, R128): NULL when they pass without a selection,
 * SOCKTAB__SK_LOOKUP_DROP when they drop, else the socket the packet goes to, which is the
 * selected one or (R129), unless the selection asked for no reuseport, the member its reuseport
 * group picks for @rp_hash (the table's reuseport hash of the 4-tuple). @v6: @saddr and @daddr
 * are struct in6_addr, else uint32_t (network order); @sport network order, @hnum host order.
 * Not referenced. Caller is inside an RCU read-side section.
 */
struct socktab_sock *socktab__sk_lookup_run_rcu(struct socktab_net *net, int proto, bool v6,
						const void *saddr, uint16_t sport,
						const void *daddr, uint16_t hnum, int dif,
						uint32_t rp_hash);

/* Free the callbacks of a net being freed (no lookup runs any more). */
void socktab__sk_lookup_free(struct socktab_net *net);

#endif /* SOCKTAB_SRC_SK_LOOKUP_H */
