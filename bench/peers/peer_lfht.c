/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * liburcu's lock-free resizable hash table (cds_lfht, liburcu-cds) as a lookup peer, with the
 * urcu-memb flavour socktab uses. Nodes embed the key; the hash is a 64-bit mix of the key words
 * (cds_lfht takes the hash from the caller). Lookups run under rcu_read_lock, as a packet path
 * would; no reference is taken (RCU alone protects the node).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include "peers.h"

struct lnode {
	struct cds_lfht_node node;
	struct peer_key key;
	void *val;
};

struct ltable {
	struct cds_lfht *ht;
	struct lnode *nodes; /* one allocation for all nodes */
	uint64_t n, used;
};

static unsigned long key_hash(const struct peer_key *k)
{
	uint64_t h = ((uint64_t)k->saddr << 32 | k->daddr) * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)k->sport << 16 | k->dport) * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (unsigned long)(h ^ (h >> 32));
}

static int match(struct cds_lfht_node *node, const void *key)
{
	const struct lnode *n = caa_container_of(node, struct lnode, node);

	return !memcmp(&n->key, key, sizeof(n->key));
}

static void *lf_create(uint64_t n)
{
	struct ltable *t = calloc(1, sizeof(*t));
	unsigned long size = 1;

	if (!t)
		return NULL;
	while (size < n)
		size <<= 1;
	t->nodes = calloc(n ? n : 1, sizeof(*t->nodes));
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

static int lf_insert(void *tp, const struct peer_key *k, void *val)
{
	struct ltable *t = tp;
	struct lnode *n;
	struct cds_lfht_node *ret;

	if (t->used == t->n)
		return -ENOSPC;
	n = &t->nodes[t->used];
	cds_lfht_node_init(&n->node);
	n->key = *k;
	n->val = val;
	unsigned long h = key_hash(k);

	urcu_memb_read_lock();
	ret = cds_lfht_add_unique(t->ht, h, match, k, &n->node);
	urcu_memb_read_unlock();
	if (ret != &n->node)
		return -EEXIST;
	t->used++;
	return 0;
}

static void *lf_lookup(void *tp, const struct peer_key *k)
{
	struct ltable *t = tp;
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;
	void *val = NULL;

	urcu_memb_read_lock();
	cds_lfht_lookup(t->ht, key_hash(k), match, k, &it);
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

/* One 40-byte node per entry (in one array) and pow2(n) 16-byte bucket nodes. */
static uint64_t lf_bytes_estimate(uint64_t n)
{
	uint64_t p2 = 1;

	while (p2 < n)
		p2 <<= 1;
	return p2 * 16 + n * 48 + (16u << 20);
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
