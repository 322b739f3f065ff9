/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * RSS-aware connect() port choice, opt-in.
 *
 * A NIC with receive-side scaling hashes each incoming packet's 4-tuple with the Toeplitz hash
 * under a secret key and steers it to the queue RETA[hash & (reta_len - 1)]. A per-core stack
 * wants the replies to its own connections on its own queue, so it asks connect() for a local
 * port whose reply tuple (source = the peer, destination = us) lands there.
 * Toeplitz is linear over GF(2): hash(fixed part ^ port part) = hash(fixed) ^ hash(port part).
 * socktab_net_set_rss() precomputes, for the destination-port bytes of the IPv4 and IPv6 inputs,
 * the contribution of every byte value (2 bytes x 256 values x 2 families = 4 KiB); connect()
 * hashes the fixed part once and tests each candidate port with two loads and two XORs.
 * The filter sits in front of the kernel's walk, so every other rule (range, parity, reserved,
 * bind()-owned, 4-tuple uniqueness, TIME_WAIT) is untouched; -EADDRNOTAVAIL means no usable port
 * maps to the queue. Departure: the kernel has no such option.
 * Context: the RSS state is published with RCU and replaced whole; readers use it under RCU.
 */
#include <stdlib.h>

#include "rss.h"

struct socktab__rss {
	uint32_t reta_mask;           /* (c) */
	uint32_t nslots;              /* (c) distinct queues in the RETA */
	uint32_t lo4[256], hi4[256];  /* (c) IPv4: contribution of the dst-port bytes at 10, 11 */
	uint32_t lo6[256], hi6[256];  /* (c) IPv6: at 34, 35 */
	uint8_t key[40];              /* (c) */
	struct rcu_head rcu;
	uint16_t reta[];              /* (c) */
};

uint32_t socktab_rss_hash(const uint8_t *key, size_t key_len, const void *input, size_t len)
{
	const uint8_t *in = input;
	uint32_t h = 0, v;
	size_t kbit = 32; /* next key bit to shift into the window */

	if (!key || !input || key_len < 4 || len + 4 > key_len)
		return 0;
	v = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 | (uint32_t)key[2] << 8 | key[3];
	for (size_t i = 0; i < len; i++) {
		for (int b = 7; b >= 0; b--, kbit++) {
			if ((in[i] >> b) & 1)
				h ^= v;
			v = v << 1 | ((key[kbit / 8] >> (7 - kbit % 8)) & 1);
		}
	}
	return h;
}

static void rss_free_rcu(struct rcu_head *head)
{
	struct socktab__rss *r = caa_container_of(head, struct socktab__rss, rcu);

	socktab__rcu_cb_enter(r);
	free(r);
}

int socktab_net_set_rss(struct socktab_net *net, const uint8_t *key, size_t key_len,
			const uint16_t *reta, uint32_t reta_len)
{
	struct socktab__rss *r = NULL, *old;

	if (!net)
		return -EINVAL;
	if (key) {
		uint8_t buf[36];

		/* 40 bytes cover the IPv6 input (36) plus the 32-bit window; RETA: power of two. */
		if (key_len < 40 || !reta || !reta_len || reta_len > 65536 ||
		    (reta_len & (reta_len - 1)))
			return -EINVAL;
		r = calloc(1, sizeof(*r) + reta_len * sizeof(r->reta[0]));
		if (!r)
			return -ENOMEM;
		memcpy(r->key, key, 40);
		memcpy(r->reta, reta, reta_len * sizeof(r->reta[0]));
		r->reta_mask = reta_len - 1;
		for (uint32_t i = 0; i < reta_len; i++) {
			uint32_t j = 0;

			while (j < i && reta[j] != reta[i])
				j++;
			r->nslots += j == i;
		}
		for (int b = 0; b < 256; b++) {
			memset(buf, 0, sizeof(buf));
			buf[10] = (uint8_t)b;
			r->hi4[b] = socktab_rss_hash(r->key, 40, buf, 12);
			buf[10] = 0;
			buf[11] = (uint8_t)b;
			r->lo4[b] = socktab_rss_hash(r->key, 40, buf, 12);
			buf[11] = 0;
			buf[34] = (uint8_t)b;
			r->hi6[b] = socktab_rss_hash(r->key, 40, buf, 36);
			buf[34] = 0;
			buf[35] = (uint8_t)b;
			r->lo6[b] = socktab_rss_hash(r->key, 40, buf, 36);
		}
	} else if (key_len || reta || reta_len) {
		return -EINVAL;
	}
	old = atomic_exchange_explicit(&net->rss, r, memory_order_acq_rel);
	if (old)
		socktab__call_rcu(old, &old->rcu, rss_free_rcu);
	return 0;
}

/* net_free: the last reader is gone. */
void socktab__rss_free(struct socktab_net *net)
{
	free(atomic_exchange_explicit(&net->rss, NULL, memory_order_relaxed));
}

/*
 * Prepare the per-connect filter for @sk (its addresses and remote port are set). Returns
 * false when @sk asked for no queue. Caller is inside an RCU read-side section and keeps it
 * while using @f.
 */
bool socktab__rss_filter_init_rcu(struct socktab_net *net, const struct socktab_sock *sk,
			      struct socktab__rss_filter *f)
{
	struct socktab__rss *r;

	SOCKTAB__ASSERT_RCU();
	if (!socktab__skf(sk, SOCKTAB__SKF_RSS))
		return false;
	r = atomic_load_explicit(&net->rss, memory_order_acquire);
	f->rss = r;
	f->queue = sk->cold->rss_queue;
	if (!r)
		return true; /* asked for a queue without RSS configured: nothing matches */
	if (RD(sk->v4key)) {
		uint8_t in[12] = { 0 };
		uint32_t ra = socktab__sk_daddr(sk), la = socktab__sk_rcv_saddr(sk);
		uint16_t rp = socktab__sk_dport(sk);

		memcpy(in, &ra, 4);
		memcpy(in + 4, &la, 4);
		memcpy(in + 8, &rp, 2);
		f->base = socktab_rss_hash(r->key, 40, in, 12);
		f->lo = r->lo4;
		f->hi = r->hi4;
	} else {
		uint8_t in[36] = { 0 };
		struct in6_addr ra = socktab__sk_v6_daddr(sk), la = socktab__sk_v6_saddr(sk);
		uint16_t rp = socktab__sk_dport(sk);

		memcpy(in, &ra, 16);
		memcpy(in + 16, &la, 16);
		memcpy(in + 32, &rp, 2);
		f->base = socktab_rss_hash(r->key, 40, in, 36);
		f->lo = r->lo6;
		f->hi = r->hi6;
	}
	return true;
}

bool socktab__rss_port_ok(const struct socktab__rss_filter *f, uint16_t port)
{
	uint32_t h;

	if (!f->rss)
		return false;
	h = f->base ^ f->hi[port >> 8] ^ f->lo[port & 0xff];
	return f->rss->reta[h & f->rss->reta_mask] == f->queue;
}

int socktab_net_rss_stats(struct socktab_net *net, struct socktab_rss_stats *st)
{
	struct socktab__rss *r;

	if (!net || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->connect_rss_rejected = RD(net->n_rss_rejected);
	socktab__rcu_read_lock();
	r = atomic_load_explicit(&net->rss, memory_order_acquire);
	if (r) {
		st->queues = r->nslots;
		st->state_bytes = sizeof(*r) + (r->reta_mask + 1ull) * sizeof(r->reta[0]);
	}
	socktab__rcu_read_unlock();
	return 0;
}
