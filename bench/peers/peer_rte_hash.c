/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DPDK's rte_hash (Debian libdpdk-dev) as a lookup peer, in lock-free reader mode
 * (RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF: readers take no lock, writers are serialised by the
 * caller), with DPDK's default hash function for the build (CRC32 on SSE4.2 x86). The EAL runs
 * in-process without hugepages, PCI or shared config files (--no-huge --no-pci --no-shconf;
 * --in-memory is refused with --no-huge), one lcore, memory sized
 * from the table. --burst uses rte_hash_lookup_bulk_data (at most RTE_HASH_LOOKUP_BULK_MAX).
 * The key is the caller's bytes: 12 for IPv4, 37 for IPv6 (peers.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_log.h>

#include "peers.h"

static int eal_up;

static int eal_init(uint64_t n, size_t key_len)
{
	char mem[32];
	char *argv[] = { "socktab-bench", "--no-huge", "--no-pci", "--no-shconf", "--no-telemetry",
			 "-l", "0", "-m", mem, "--log-level=lib.eal:error", NULL };

	if (eal_up)
		return 0;
	/* Per entry its key slot (the pointer and the key, rounded up to 16 bytes) and 64 bytes
	 * for its bucket share, its free-slot ring entry and headroom (96 bytes with the 12-byte
	 * key); plus 128 MiB. */
	uint64_t slot = (8 + key_len + 15) & ~(uint64_t)15;

	snprintf(mem, sizeof(mem), "%llu",
		 (unsigned long long)(n * (slot + 64) / (1 << 20) + 128));
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		fprintf(stderr, "rte_hash: rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	eal_up = 1;
	return 0;
}

static void *rh_create(uint64_t n, size_t key_len)
{
	static int serial;
	char name[32];
	struct rte_hash_parameters p = {
		.name = name,
		.entries = (uint32_t)(n < 64 ? 64 : n),
		.key_len = (uint32_t)key_len,
		.hash_func = NULL, /* DPDK's default */
		.socket_id = 0,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF,
	};
	struct rte_hash *h;

	if (eal_init(n, key_len))
		return NULL;
	snprintf(name, sizeof(name), "socktab_bench_%d", serial++);
	h = rte_hash_create(&p);
	if (!h)
		fprintf(stderr, "rte_hash: rte_hash_create failed: %s\n", rte_strerror(rte_errno));
	return h;
}

static int rh_insert(void *t, const void *k, void *val)
{
	int r = rte_hash_add_key_data(t, k, val);

	return r < 0 ? r : 0;
}

static void *rh_lookup(void *t, const void *k)
{
	void *val;

	return rte_hash_lookup_data(t, k, &val) >= 0 ? val : NULL;
}

static void rh_lookup_burst(void *t, const void *keys, size_t stride, int n, void **vals)
{
	const void *kp[RTE_HASH_LOOKUP_BULK_MAX];
	uint64_t hits = 0;

	for (int i = 0; i < n; i++)
		kp[i] = (const unsigned char *)keys + (size_t)i * stride;
	rte_hash_lookup_bulk_data(t, kp, (uint32_t)n, &hits, vals);
	for (int i = 0; i < n; i++)
		if (!(hits >> i & 1))
			vals[i] = NULL;
}

static void rh_destroy(void *t)
{
	rte_hash_free(t);
}

/* rte_cuckoo_hash's layout: pow2(n) / 8 buckets of 64 bytes, n + 1 key slots of the data
 * pointer and the key rounded up to 16 bytes (32 for the 12-byte key, 48 for the 37-byte one), a
 * free-slot ring of pow2(n) 4-byte entries; plus the EAL's own heap. */
static uint64_t rh_bytes_estimate(uint64_t n, size_t key_len)
{
	uint64_t p2 = 1, slot = (8 + key_len + 15) & ~(uint64_t)15;

	while (p2 < n)
		p2 <<= 1;
	return p2 * 16 + n * (slot + 8) + (64u << 20);
}

const struct peer_ops peer_rte_hash = {
	.name = "rte_hash",
	.create = rh_create,
	.insert = rh_insert,
	.lookup = rh_lookup,
	.lookup_burst = rh_lookup_burst,
	.burst_max = RTE_HASH_LOOKUP_BULK_MAX,
	.destroy = rh_destroy,
	.bytes_estimate = rh_bytes_estimate,
};
