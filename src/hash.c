/* SPDX-License-Identifier: BSD-2-Clause */
/* SipHash-2-4 (Aumasson and Bernstein), written for socktab from the paper's description. */
#include "hash.h"

#include <string.h>

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
