/* SPDX-License-Identifier: BSD-2-Clause */
/* Deterministic random numbers for the capture generator: the same seed gives the
 * same capture byte for byte, so a benchmark figure can name the file it came from. */
#ifndef GEN_RNG_H
#define GEN_RNG_H

#include <math.h>
#include <stdint.h>

struct rng {
	uint64_t s[4];
};

static inline uint64_t rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256**: fast and good enough for a workload; seeded through splitmix64 so
 * that nearby seeds give unrelated streams. */
static inline void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		r->s[i] = z ^ (z >> 31);
	}
}

static inline uint64_t rng_u64(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return out;
}

/* uniform in [0, n); the modulo bias is irrelevant at the sizes used here */
static inline uint32_t rng_below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)((rng_u64(r) >> 32) % n) : 0;
}

/* uniform in [lo, hi] */
static inline uint32_t rng_range(struct rng *r, uint32_t lo, uint32_t hi)
{
	return lo + rng_below(r, hi - lo + 1);
}

/* uniform double in [0, 1) */
static inline double rng_unit(struct rng *r)
{
	return (double)(rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
}

static inline int rng_chance(struct rng *r, double p)
{
	return rng_unit(r) < p;
}

/* exponential with the given mean (inter-arrival times) */
static inline double rng_exp(struct rng *r, double mean)
{
	return -mean * log(1.0 - rng_unit(r));
}

/* log-normal-ish: median m, spread s (sigma of the log); the sum of four uniforms
 * stands in for a normal, which is plenty for service times */
static inline double rng_lognorm(struct rng *r, double m, double s)
{
	double z = (rng_unit(r) + rng_unit(r) + rng_unit(r) + rng_unit(r) - 2.0) * 1.732;
	return m * exp(s * z);
}

#endif
