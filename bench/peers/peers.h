/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Peer tables for `socktab bench lookup`: the same established 4-tuples, looked up in another
 * library's hash table. Each peer maps a fixed-length key of bytes to a pointer: the 12-byte IPv4
 * key (struct peer_key) or, with -6, the 37-byte IPv6 key (struct peer_key6). A peer is compiled
 * only when its package is present (meson defines SOCKTAB_HAVE_RTE_HASH / SOCKTAB_HAVE_LFHT).
 */
#ifndef SOCKTAB_BENCH_PEERS_H
#define SOCKTAB_BENCH_PEERS_H

#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>

/* An IPv4 4-tuple as a packet carries it (network order), 12 bytes, no padding. */
struct peer_key {
	uint32_t saddr, daddr;
	uint16_t sport, dport;
};

/* An IPv6 flow key: the first PEER_KEY6_LEN bytes (addresses, ports, then the protocol byte,
 * IPPROTO_TCP) are the key, laid out as DPDK's l3fwd keys IPv6 flows (struct ipv6_5tuple,
 * 16 + 16 + 2 + 2 + 1 bytes, packed); the 3 bytes after it are padding, always zero, so an array
 * of keys keeps its addresses 4-byte aligned (socktab's lookups take them in place). Network
 * order. */
struct peer_key6 {
	struct in6_addr saddr, daddr;
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t pad[3];
};
#define PEER_KEY6_LEN 37

struct peer_ops {
	const char *name;
	/* A table for @n entries of @key_len-byte keys (sizeof(struct peer_key) or
	 * PEER_KEY6_LEN), or NULL (message on stderr). */
	void *(*create)(uint64_t n, size_t key_len);
	/* 0 or a negative errno. @k: the table's key_len bytes. */
	int (*insert)(void *t, const void *k, void *val);
	/* The value, or NULL. Called from any number of threads at once, each registered with
	 * socktab_thread_register() (which registers it with liburcu's urcu-memb flavour, the one
	 * lfht reads under), while no insert runs. */
	void *(*lookup)(void *t, const void *k);
	/* The peer's own batch lookup (NULL if it has none): vals[i] for the key at
	 * keys + i * stride, NULL on miss. */
	void (*lookup_burst)(void *t, const void *keys, size_t stride, int n, void **vals);
	int burst_max;
	void (*destroy)(void *t);
	/* Bytes the table will take for @n entries of @key_len-byte keys (a generous estimate,
	 * before building it, so the benchmark can skip a table that would not fit in memory). */
	uint64_t (*bytes_estimate)(uint64_t n, size_t key_len);
};

#ifdef SOCKTAB_HAVE_RTE_HASH
extern const struct peer_ops peer_rte_hash;
#endif
#ifdef SOCKTAB_HAVE_LFHT
extern const struct peer_ops peer_lfht;
#endif

#endif
