/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hash functions (docs/rules.md, hashing and secrets). Table hashes use Bob Jenkins' lookup3
 * ("jhash"), keyed by a per-net secret plus the net's hash mix, with the structure of R3/R4/R7/R8
 * (the local port of an established key is added after hashing, R3). The connect() port offset
 * (R10, RFC 6056 alg. 4) uses SipHash-2-4 under its own 128-bit per-net key. Written for socktab
 * from the published algorithm descriptions.
 */
#ifndef SOCKTAB_SRC_HASH_H
#define SOCKTAB_SRC_HASH_H

#include <stddef.h>
#include <stdint.h>

#define SOCKTAB__JHASH_INITVAL 0xdeadbeefu

static inline uint32_t socktab__rol32(uint32_t x, unsigned k)
{
	return (x << k) | (x >> (32 - k));
}

#define SOCKTAB__JHASH_MIX(a, b, c)                                                                \
	do {                                                                                       \
		a -= c; a ^= socktab__rol32(c, 4);  c += b;                                        \
		b -= a; b ^= socktab__rol32(a, 6);  a += c;                                        \
		c -= b; c ^= socktab__rol32(b, 8);  b += a;                                        \
		a -= c; a ^= socktab__rol32(c, 16); c += b;                                        \
		b -= a; b ^= socktab__rol32(a, 19); a += c;                                        \
		c -= b; c ^= socktab__rol32(b, 4);  b += a;                                        \
	} while (0)

#define SOCKTAB__JHASH_FINAL(a, b, c)                                                              \
	do {                                                                                       \
		c ^= b; c -= socktab__rol32(b, 14);                                                \
		a ^= c; a -= socktab__rol32(c, 11);                                                \
		b ^= a; b -= socktab__rol32(a, 25);                                                \
		c ^= b; c -= socktab__rol32(b, 16);                                                \
		a ^= c; a -= socktab__rol32(c, 4);                                                 \
		b ^= a; b -= socktab__rol32(a, 14);                                                \
		c ^= b; c -= socktab__rol32(b, 24);                                                \
	} while (0)

static inline uint32_t socktab__jhash_3words(uint32_t a, uint32_t b, uint32_t c, uint32_t iv)
{
	iv += SOCKTAB__JHASH_INITVAL + (3u << 2);
	a += iv;
	b += iv;
	c += iv;
	SOCKTAB__JHASH_FINAL(a, b, c);
	return c;
}

static inline uint32_t socktab__jhash_1word(uint32_t a, uint32_t iv)
{
	uint32_t b = 0, c = 0;

	iv += SOCKTAB__JHASH_INITVAL + (1u << 2);
	a += iv;
	b += iv;
	c += iv;
	SOCKTAB__JHASH_FINAL(a, b, c);
	return c;
}

/* lookup3 hashword() over @n 32-bit words. */
static inline uint32_t socktab__jhash2(const uint32_t *k, uint32_t n, uint32_t iv)
{
	uint32_t a, b, c;

	a = b = c = SOCKTAB__JHASH_INITVAL + (n << 2) + iv;
	while (n > 3) {
		a += k[0];
		b += k[1];
		c += k[2];
		SOCKTAB__JHASH_MIX(a, b, c);
		n -= 3;
		k += 3;
	}
	switch (n) {
	case 3:
		c += k[2];
		/* fall through */
	case 2:
		b += k[1];
		/* fall through */
	case 1:
		a += k[0];
		SOCKTAB__JHASH_FINAL(a, b, c);
		break;
	default:
		break;
	}
	return c;
}

/* SipHash-2-4 of @len bytes under the 128-bit key @key (two little-endian 64-bit halves). */
uint64_t socktab__siphash(const void *data, size_t len, const uint64_t key[2]);

#endif /* SOCKTAB_SRC_HASH_H */
