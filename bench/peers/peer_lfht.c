/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * liburcu's lock-free resizable hash table (cds_lfht, liburcu-cds) as a lookup peer, with the
 * urcu-memb flavour socktab uses. Nodes embed the key (12 bytes for IPv4, 37 for IPv6); the hash
 * is a 64-bit mix of the key words (cds_lfht takes the hash from the caller). Lookups run under rcu_read_lock, as a packet path
 * would; no reference is taken (RCU alone protects the node).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include "peers.h"

/* A node: the list node, the value, then the key's bytes (40 bytes in all with the 12-byte IPv4
 * key, 64 with the 37-byte IPv6 one). */
struct lnode {
	struct cds_lfht_node node;
	void *val;
	unsigned char key[];
};

struct ltable {
	struct cds_lfht *ht;
	unsigned char *nodes; /* one allocation for all nodes, node_size bytes each */
	size_t key_len, node_size;
	uint64_t n, used;
	int (*match)(struct cds_lfht_node *node, const void *key);
};

static unsigned long key_hash4(const void *kp)
{
	struct peer_key k;
	uint64_t h;

	memcpy(&k, kp, sizeof(k));
	h = ((uint64_t)k.saddr << 32 | k.daddr) * 0x9e3779b97f4a7c15ull;
	h ^= ((uint64_t)k.sport << 16 | k.dport) * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (unsigned long)(h ^ (h >> 32));
}

/* The IPv6 key's 37 bytes: its four 8-byte words of addresses and its ports and protocol, each
 * multiplied in, then the same finish as key_hash4(). */
static unsigned long key_hash6(const void *kp)
{
	const unsigned char *b = kp;
	uint64_t w, h = 0;

	for (int i = 0; i < 4; i++) {
		memcpy(&w, b + 8 * i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, b + 32, PEER_KEY6_LEN - 32);
	h ^= w * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (unsigned long)(h ^ (h >> 32));
}

static unsigned long key_hash(const struct ltable *t, const void *k)
{
	return t->key_len == PEER_KEY6_LEN ? key_hash6(k) : key_hash4(k);
}

static int match4(struct cds_lfht_node *node, const void *key)
{
	return !memcmp(caa_container_of(node, struct lnode, node)->key, key,
		       sizeof(struct peer_key));
}

static int match6(struct cds_lfht_node *node, const void *key)
{
	return !memcmp(caa_container_of(node, struct lnode, node)->key, key, PEER_KEY6_LEN);
}

static size_t node_size(size_t key_len)
{
	return (sizeof(struct lnode) + key_len + 7) & ~(size_t)7;
}

static void *lf_create(uint64_t n, size_t key_len)
{
	struct ltable *t = calloc(1, sizeof(*t));
	unsigned long size = 1;

	if (!t)
		return NULL;
	if (key_len != sizeof(struct peer_key) && key_len != PEER_KEY6_LEN) {
		fprintf(stderr, "lfht: no hash for %zu-byte keys\n", key_len);
		free(t);
		return NULL;
	}
	while (size < n)
		size <<= 1;
	t->key_len = key_len;
	t->node_size = node_size(key_len);
	t->match = key_len == PEER_KEY6_LEN ? match6 : match4;
	t->nodes = calloc(n ? n : 1, t->node_size);
	t->ht = cds_lfht_new_flavor(size, size, 0, 0, &urcu_memb_flavor, NULL);
	if (!t->nodes || !t->ht) {
		fprintf(stderr, "lfht: out of memory\n");
		free(t->nodes);
		free(t);
		return NULL;
	}
	t->n = n;
	return t;
}

static int lf_insert(void *tp, const void *k, void *val)
{
	struct ltable *t = tp;
	struct lnode *n;
	struct cds_lfht_node *ret;

	if (t->used == t->n)
		return -ENOSPC;
	n = (struct lnode *)(t->nodes + t->used * t->node_size);
	cds_lfht_node_init(&n->node);
	memcpy(n->key, k, t->key_len);
	n->val = val;
	unsigned long h = key_hash(t, k);

	urcu_memb_read_lock();
	ret = cds_lfht_add_unique(t->ht, h, t->match, k, &n->node);
	urcu_memb_read_unlock();
	if (ret != &n->node)
		return -EEXIST;
	t->used++;
	return 0;
}

static void *lf_lookup(void *tp, const void *k)
{
	struct ltable *t = tp;
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;
	void *val = NULL;

	urcu_memb_read_lock();
	cds_lfht_lookup(t->ht, key_hash(t, k), t->match, k, &it);
	node = cds_lfht_iter_get_node(&it);
	if (node)
		val = caa_container_of(node, struct lnode, node)->val;
	urcu_memb_read_unlock();
	return val;
}

static void lf_destroy(void *tp)
{
	struct ltable *t = tp;
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;

	urcu_memb_read_lock();
	cds_lfht_for_each(t->ht, &it, node)
		cds_lfht_del(t->ht, node);
	urcu_memb_read_unlock();
	urcu_memb_synchronize_rcu();
	cds_lfht_destroy(t->ht, NULL);
	free(t->nodes);
	free(t);
}

/* One node per entry (in one array: 40 bytes for IPv4, 64 for IPv6) and pow2(n) 16-byte bucket
 * nodes. */
static uint64_t lf_bytes_estimate(uint64_t n, size_t key_len)
{
	uint64_t p2 = 1;

	while (p2 < n)
		p2 <<= 1;
	return p2 * 16 + n * (node_size(key_len) + 8) + (16u << 20);
}

const struct peer_ops peer_lfht = {
	.name = "lfht",
	.create = lf_create,
	.insert = lf_insert,
	.lookup = lf_lookup,
	.lookup_burst = NULL,
	.burst_max = 0,
	.destroy = lf_destroy,
	.bytes_estimate = lf_bytes_estimate,
};
