/* SPDX-License-Identifier: BSD-2-Clause */
/* The per-destination index of busy local ports that lets connect() skip its walk (portmap.c). */
#ifndef SOCKTAB_SRC_PORTMAP_H
#define SOCKTAB_SRC_PORTMAP_H

#include "net.h"

struct socktab__portmap;

/* ehash choke-point hooks. Caller holds the ehash lock of sk->hash. */
void socktab__portmap_ehash_add_locked(struct socktab_sock *sk);
void socktab__portmap_ehash_del_locked(struct socktab__tables *t, struct socktab_sock *sk);
/* The index of sk's destination, built if it is hot. Caller is inside an RCU read-side section. */
struct socktab__portmap *socktab__portmap_get_rcu(struct socktab_net *net, struct socktab_sock *sk,
						 uint32_t hash0, int low, int high);
/* The next position >= @i whose port is neither busy nor reserved. */
uint32_t socktab__portmap_next(const struct socktab__portmap *pm, struct socktab_net *net,
			       uint32_t base, uint32_t high, uint32_t remaining, uint32_t step,
			       uint32_t i);
/* Live indexes and their bytes (tests, benchmarks). */
void socktab__portmap_stats(struct socktab_net *net, uint32_t *nindex, uint64_t *bytes);

#endif /* SOCKTAB_SRC_PORTMAP_H */
