/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The table hashes (R1-R8: ehash, bhash, portaddr) keyed by a net's secrets, and SipHash-2-4
 * (Aumasson and Bernstein), written for socktab from the paper's description. The IPv4 ehash
 * hash is inline in net.h: every IPv4 lookup pays it.
 */
#include <string.h>

#include "net.h"

static inline uint64_t rol64(uint64_t x, unsigned k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t load_le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

#define SIPROUND(v0, v1, v2, v3)                                                                   \
	do {                                                                                       \
		v0 += v1; v1 = rol64(v1, 13); v1 ^= v0; v0 = rol64(v0, 32);                        \
		v2 += v3; v3 = rol64(v3, 16); v3 ^= v2;                                            \
		v0 += v3; v3 = rol64(v3, 21); v3 ^= v0;                                            \
		v2 += v1; v1 = rol64(v1, 17); v1 ^= v2; v2 = rol64(v2, 32);                        \
	} while (0)

uint64_t socktab__siphash(const void *data, size_t len, const uint64_t key[2])
{
	const unsigned char *p = data;
	uint64_t v0 = 0x736f6d6570736575ull ^ key[0];
	uint64_t v1 = 0x646f72616e646f6dull ^ key[1];
	uint64_t v2 = 0x6c7967656e657261ull ^ key[0];
	uint64_t v3 = 0x7465646279746573ull ^ key[1];
	size_t full = len & ~(size_t)7;
	unsigned char tail[8] = { 0 };
	uint64_t m;

	for (size_t i = 0; i < full; i += 8) {
		m = load_le64(p + i);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	memcpy(tail, p + full, len - full);
	m = load_le64(tail) | ((uint64_t)(len & 0xff) << 56);
	v3 ^= m;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= m;
	v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- table hashes ---- */

uint32_t socktab__ehashfn6(const struct socktab_net *net, const struct in6_addr *laddr,
			   uint16_t lport, const struct in6_addr *faddr, uint16_t fport_be)
{
	uint32_t fhash = socktab__jhash2(faddr->s6_addr32, 4, net->ipv6_hash_secret);
	uint32_t iv = net->ehash6_secret + net->hash_mix;

	if (net->lport_inside)
		return socktab__jhash_3words(laddr->s6_addr32[3], fhash,
					     ((uint32_t)lport << 16) | fport_be, iv);
	return lport + socktab__jhash_3words(laddr->s6_addr32[3], fhash, fport_be, iv);
}

/* The ehash hash of @sk's 4-tuple with local port @lport (R5: IPv4 key or IPv6 key). */
uint32_t socktab__sk_ehashfn(const struct socktab_net *net, const struct socktab_sock *sk,
			     uint16_t lport)
{
	if (RD(sk->v4key))
		return socktab__ehashfn4(net, socktab__sk_rcv_saddr(sk), lport,
					 socktab__sk_daddr(sk), socktab__sk_dport(sk));
	struct in6_addr l = socktab__sk_v6_saddr(sk), f = socktab__sk_v6_daddr(sk);

	return socktab__ehashfn6(net, &l, lport, &f, socktab__sk_dport(sk));
}

uint32_t socktab__bhashfn(const struct socktab_net *net, uint16_t port)
{
	return (uint32_t)port + net->hash_mix;
}

/* R7: v4 and v4-mapped share a bucket, as do 0.0.0.0 and ::. */
uint32_t socktab__portaddr_hash(const struct socktab_net *net, const struct in6_addr *a,
				uint16_t port)
{
	if (socktab__v6_is_any(a))
		return socktab__portaddr_hash4(net, 0, port);
	if (socktab__v6_is_mapped(a))
		return socktab__portaddr_hash4(net, a->s6_addr32[3], port);
	return socktab__jhash2(a->s6_addr32, 4, net->hash_mix) ^ port;
}
