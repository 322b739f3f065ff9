/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Randomness: secrets come from getrandom(); the cheap per-call draws of the port walks (the
 * kernel's get_random_u32_below()) come from a per-thread xorshift generator seeded from it.
 * getrandom() only fails before the kernel's pool is ready or on a signal; then a time-seeded
 * generator fills in rather than leaving predictable zeros.
 */
#include <sys/random.h>
#include <time.h>

#include "common.h"

static uint64_t fallback_seed(const void *p)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^ (uintptr_t)p;
}

void socktab__random_bytes(void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n <= 0) {
			uint64_t t = fallback_seed(p);

			for (size_t i = 0; i < len; i++) {
				t = t * 6364136223846793005ull + 1442695040888963407ull;
				p[i] = (unsigned char)(t >> 56);
			}
			return;
		}
		p += n;
		len -= (size_t)n;
	}
}

static _Thread_local uint64_t rng_state;

uint32_t socktab__random_below(uint32_t n)
{
	uint64_t x = rng_state;

	while (!x)
		socktab__random_bytes(&x, sizeof(x));
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return (uint32_t)(((x >> 32) * (uint64_t)n) >> 32);
}

void socktab__random_seed(uint64_t seed)
{
	rng_state = seed;
}
