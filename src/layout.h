/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Cache-line budget of the lookup paths, checked at compile time (net.c includes this file).
 * docs/design.md ("Cache lines per lookup") counts the lines each lookup touches;
 * these assertions keep that count true when someone adds or moves a field. `make layout` prints
 * pahole's view of the same structs.
 *
 * Objects come from pool slabs aligned to SOCKTAB__CACHELINE with the object stride a multiple of
 * it (pool.c), so an offset below 64 is in the object's first line.
 */
#ifndef SOCKTAB_SRC_LAYOUT_H
#define SOCKTAB_SRC_LAYOUT_H

#include <stddef.h>

#include "net.h"
#include "sock.h"
#include "udp.h"
#include "bind.h"

/* The byte after @field of @type. */
#define SOCKTAB__END(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

_Static_assert(SOCKTAB__CACHELINE == 64, "the budget below is counted in 64-byte lines");

/* Chains link sockets by their first member: a node pointer is the socket pointer
 * (socktab__node_sk). */
_Static_assert(offsetof(struct socktab_sock, node) == 0, "node must be the first member");

/*
 * Established and listener lookups (ehash.h socktab__match4, listen.c score): per chain entry
 * they read the link, the cached hash, the key words, state, v4key, family, v6only, the bound
 * device and the net tag (and the flag byte that says whether SO_INCOMING_CPU is set; only then
 * the value, in the cold part), and for a hit the refcount (referenced lookups only). All of it is the
 * socket's one line: one line per entry walked. The net pointer (slab header) is read only by a
 * net past the 255th sharing its tables, the IPv6 key only for IPv6 entries: one line more per
 * IPv6 entry compared, whose address socktab__sk_v6() takes from the entry's address and its
 * slab's header line (one per 2 MiB slab, in the cache), not from the entry's line, so the two
 * misses overlap.
 */
_Static_assert(sizeof(struct socktab_sock) == SOCKTAB__CACHELINE,
	       "a socket's hot part is one line");
_Static_assert(_Alignof(struct socktab_sock) <= SOCKTAB__CACHELINE, "socket line alignment");

/* The caller's area starts on the next line: a stack's per-packet state is one more line. */
_Static_assert(sizeof(struct socktab_sock) % SOCKTAB__CACHELINE == 0, "caller area line-aligned");

/*
 * Memory per socket: the line, the caller's area, and a cold part of at most 96 bytes for a TCP
 * IPv4 socket (plus the IPv6 key for AF_INET6, plus the UDP links for UDP): 56 bytes of control
 * state and the socket's own lock. A lock of its own, not a stripe shared with other sockets,
 * keeps the lines a control call writes with the thread that uses the socket. An AF_INET6
 * socket's key and cold part fit in 128 bytes (four 32-byte units).
 */
_Static_assert(sizeof(struct socktab__sk_cold) - sizeof(pthread_mutex_t) <= 56,
	       "cold part of a socket, its lock aside");
_Static_assert(sizeof(struct socktab__v6key) + sizeof(struct socktab__sk_cold) <= 128,
	       "an IPv6 socket's key and cold part: four 32-byte units");
_Static_assert(sizeof(struct socktab__v6key) == 32, "IPv6 key");

/* The slab header is the slab's first line, and socktab__sk_v6()'s reciprocal
 * (SOCKTAB__V6_RECIP_SHIFT) is exact only for offsets and strides below 2^21. */
_Static_assert(sizeof(struct socktab__slab_hdr) <= SOCKTAB__CACHELINE, "slab header: one line");
_Static_assert(SOCKTAB__SLAB_BYTES <= ((size_t)1 << 21) &&
		       2 * 21 <= SOCKTAB__V6_RECIP_SHIFT && 21 + SOCKTAB__V6_RECIP_SHIFT - 6 < 64,
	       "the IPv6 key's index by reciprocal: exact, and the product fits 64 bits");

/* A TIME_WAIT entry: 128 bytes for IPv4 (two lines), 160 for IPv6 (stride 192). */
_Static_assert(sizeof(struct socktab__tw) == 128, "an IPv4 TIME_WAIT entry is two lines");
_Static_assert(offsetof(struct socktab__tw, sk) == 0, "an entry starts with the socket line");
_Static_assert(sizeof(struct socktab__tw6) <= 192, "an IPv6 TIME_WAIT entry is three lines");
_Static_assert(SOCKTAB__TW_PRIV >= SOCKTAB_TW_PRIV_MAX, "TIME_WAIT caller area");

/* Bucket heads: one word each; an ehash slot is a compressed head of four bytes and its chain's
 * second-entry hint (nulls.h), eight bytes as the kernel's bare hlist_nulls_head, so a line holds
 * eight slots and a lookup reads one. */
_Static_assert(sizeof(struct socktab__hhead) == sizeof(void *), "a bucket head is one word");
_Static_assert(sizeof(((struct socktab__tables *)0)->ehash[0]) == 8,
	       "ehash slot is a compressed head and its hint: no lock or counter beside them");

/*
 * UDP (R79): the hash2 slot keeps hash4_cnt beside its chain head, so a lookup on a port with no
 * connected socket pays no extra line for the hash4 check. A slot is 16 bytes, 16-aligned (udp.c
 * puts hash2 first after a line-aligned header), so head and hash4_cnt share a line in every
 * slot.
 */
_Static_assert(sizeof(struct socktab__uslot2) == 16 && _Alignof(struct socktab__uslot2) == 16,
	       "a hash2 slot is 16 bytes and never straddles a line");
_Static_assert(SOCKTAB__END(struct socktab__uslot2, hash4_cnt) <= 16, "hash4_cnt in the slot");

/* Bind and UDP slots are bare heads: their locks are striped elsewhere. */
_Static_assert(sizeof(struct socktab__bhead) == sizeof(void *), "a bhash slot is one word");
_Static_assert(sizeof(struct socktab__lhead) == sizeof(void *), "an lhash2 slot is one word");

/* The net fields every lookup reads first (ehash, secrets, variant flag): its first line. */
_Static_assert(SOCKTAB__END(struct socktab_net, tab) <= 64, "net: tables pointer first");
_Static_assert(SOCKTAB__END(struct socktab_net, ehash) <= 64, "net: ehash slots");
_Static_assert(SOCKTAB__END(struct socktab_net, ehash_mask) <= 64, "net: ehash mask");
_Static_assert(SOCKTAB__END(struct socktab_net, ehash_secret) <= 64, "net: ehash secret");
_Static_assert(SOCKTAB__END(struct socktab_net, ehash6_secret) <= 64, "net: ehash6 secret");
_Static_assert(SOCKTAB__END(struct socktab_net, ipv6_hash_secret) <= 64, "net: ipv6 secret");
_Static_assert(SOCKTAB__END(struct socktab_net, hash_mix) <= 64, "net: netns mix");
_Static_assert(SOCKTAB__END(struct socktab_net, lport_inside) <= 64, "net: variant flag");
_Static_assert(SOCKTAB__END(struct socktab_net, has_priv) <= 64, "net: caller-area flag");
_Static_assert(SOCKTAB__END(struct socktab_net, tag) <= 64, "net: tag among sharing nets");

/* Bind buckets live in blocks of the bucket cache (pool.c), each bucket's reclaim link first. */
_Static_assert(sizeof(struct socktab__tb) <= SOCKTAB__BUCKET_BYTES, "port bucket in a block");
_Static_assert(sizeof(struct socktab__tb2) <= SOCKTAB__BUCKET_BYTES, "address bucket in a block");
_Static_assert(offsetof(struct socktab__tb, rcu) == 0, "a port bucket begins with its link");
_Static_assert(offsetof(struct socktab__tb2, rcu) == 0, "an address bucket begins with its link");

#endif /* SOCKTAB_SRC_LAYOUT_H */
