/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Cache-line budget of the lookup paths, checked at compile time (net.c includes this file). docs/design.md ("Cache lines per lookup") counts the lines each lookup touches;
 * these assertions keep that count true when someone adds or moves a field. `make layout` prints
 * pahole's view of the same structs.
 *
 * Socket objects come from pool slabs aligned to SOCKTAB__CACHELINE with the object size rounded
 * up to it (pool.c), so an offset below 64 is in the object's first line.
 */
#ifndef SOCKTAB_SRC_LAYOUT_H
#define SOCKTAB_SRC_LAYOUT_H

#include <stddef.h>

#include "net.h"
#include "sock.h"
#include "udp.h"

/* The byte after @field of @type. */
#define SOCKTAB__END(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

_Static_assert(SOCKTAB__CACHELINE == 64, "the budget below is counted in 64-byte lines");

/* Chains link sockets by their first member: a node pointer is the socket pointer
 * (socktab__node_sk). */
_Static_assert(offsetof(struct socktab_sock, node) == 0, "node must be the first member");

/*
 * Established lookup (ehash.c ehash_lookup/match4): per chain entry it reads the link, the cached
 * hash, the key words, state, v4key, family, the bound device and the net, then takes a
 * reference. All of it in line 0: one line per entry walked.
 */
_Static_assert(SOCKTAB__END(struct socktab_sock, node) <= 64, "ehash link in line 0");
_Static_assert(SOCKTAB__END(struct socktab_sock, hash) <= 64, "cached hash in line 0");
_Static_assert(SOCKTAB__END(struct socktab_sock, refcnt) <= 64, "refcount in line 0");
_Static_assert(SOCKTAB__END(struct socktab_sock, addrpair) <= 64, "v4 address key in line 0");
_Static_assert(SOCKTAB__END(struct socktab_sock, portpair) <= 64, "port key in line 0");
_Static_assert(SOCKTAB__END(struct socktab_sock, state) <= 64, "state in line 0");
_Static_assert(SOCKTAB__END(struct socktab_sock, v4key) <= 64, "v4key in line 0");
_Static_assert(SOCKTAB__END(struct socktab_sock, family) <= 64, "family in line 0");
_Static_assert(SOCKTAB__END(struct socktab_sock, bound_dev_if) <= 64, "device in line 0");
_Static_assert(SOCKTAB__END(struct socktab_sock, net) <= 64, "net in line 0");

/* IPv6 keys are compared only for IPv6 lookups: lines 0 and 1, never a third. */
_Static_assert(SOCKTAB__END(struct socktab_sock, v6_daddr) <= 128, "v6 remote key in lines 0-1");
_Static_assert(SOCKTAB__END(struct socktab_sock, v6_saddr) <= 128, "v6 local key in lines 0-1");

/* Bucket heads: one word each, so a line holds eight ehash slots and a lookup reads one. */
_Static_assert(sizeof(struct socktab__hhead) == sizeof(void *), "a bucket head is one word");
_Static_assert(sizeof(((struct socktab__tables *)0)->ehash[0]) == sizeof(void *),
	       "ehash slot is a bare head: no lock or counter beside it");

/*
 * UDP (R79): the hash2 slot keeps hash4_cnt beside its chain head, so a lookup on a port with no
 * connected socket pays no extra line for the hash4 check. Within the slot they are 16 bytes
 * apart.
 * The slot is cache-line aligned and one line long, so this holds for every slot of the array
 * (udp.c carves hash2 at a 64-byte boundary: the hash array before it is n * 56 bytes, n a
 * multiple of 8).
 */
_Static_assert(sizeof(struct socktab__uslot2) == SOCKTAB__CACHELINE &&
		       _Alignof(struct socktab__uslot2) == SOCKTAB__CACHELINE,
	       "a hash2 slot is exactly one cache line");
_Static_assert(SOCKTAB__END(struct socktab__uslot2, hash4_cnt) -
			       offsetof(struct socktab__uslot2, head) <= 16,
	       "hash4_cnt within 16 bytes of its hash2 head");

/* The net fields every lookup reads first (tables pointer, secrets, variant flag): 64 bytes. */
_Static_assert(SOCKTAB__END(struct socktab_net, tab) <= 64, "net: tables pointer first");
_Static_assert(SOCKTAB__END(struct socktab_net, ehash_secret) <= 64, "net: ehash secret");
_Static_assert(SOCKTAB__END(struct socktab_net, ehash6_secret) <= 64, "net: ehash6 secret");
_Static_assert(SOCKTAB__END(struct socktab_net, ipv6_hash_secret) <= 64, "net: ipv6 secret");
_Static_assert(SOCKTAB__END(struct socktab_net, hash_mix) <= 64, "net: netns mix");
_Static_assert(SOCKTAB__END(struct socktab_net, lport_inside) <= 64, "net: variant flag");

#endif /* SOCKTAB_SRC_LAYOUT_H */
