/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Peer tables for `socktab bench lookup`: the same established 4-tuples, looked up in another
 * library's hash table. Each peer maps a 12-byte key to a pointer. A peer is compiled only when
 * its package is present (meson defines SOCKTAB_HAVE_RTE_HASH / SOCKTAB_HAVE_LFHT).
 */
#ifndef SOCKTAB_BENCH_PEERS_H
#define SOCKTAB_BENCH_PEERS_H

#include <stdint.h>

/* An IPv4 4-tuple as a packet carries it (network order), 12 bytes, no padding. */
struct peer_key {
	uint32_t saddr, daddr;
	uint16_t sport, dport;
};

struct peer_ops {
	const char *name;
	/* A table for @n entries, or NULL (message on stderr). */
	void *(*create)(uint64_t n);
	/* 0 or a negative errno. */
	int (*insert)(void *t, const struct peer_key *k, void *val);
	/* The value, or NULL. Called from any number of threads at once, each registered with
	 * socktab_thread_register() (which registers it with liburcu's urcu-memb flavour, the one
	 * lfht reads under), while no insert runs. */
	void *(*lookup)(void *t, const struct peer_key *k);
	/* The peer's own batch lookup (NULL if it has none): vals[i] for keys[i], NULL on miss. */
	void (*lookup_burst)(void *t, const struct peer_key *keys, int n, void **vals);
	int burst_max;
	void (*destroy)(void *t);
	/* Bytes the table will take for @n entries (a generous estimate, before building it, so
	 * the benchmark can skip a table that would not fit in memory). */
	uint64_t (*bytes_estimate)(uint64_t n);
};

#ifdef SOCKTAB_HAVE_RTE_HASH
extern const struct peer_ops peer_rte_hash;
#endif
#ifdef SOCKTAB_HAVE_LFHT
extern const struct peer_ops peer_lfht;
#endif

#endif
