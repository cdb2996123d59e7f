/* SPDX-License-Identifier: BSD-2-Clause */
/* The hash of a TCP connection: the same for both of its directions.
 *
 * The flow table (flows.c) starts its lookup there, and read --threads
 * (probe/read_shards.c) picks a connection's engine from it: one function, so
 * a connection is one key wherever it is looked up. */
#ifndef GS_FLOW_HASH_H
#define GS_FLOW_HASH_H

#include <stdint.h>
#include <string.h>

static inline uint64_t gs_load64(const uint8_t *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
	return w;
}

/* One end, mixed on its own (address and port together, not linearly: two
 * connections that swap their ports between the same hosts hash apart).
 * `addr` is 16 bytes, an IPv4 address in the first 4 and zeros after. */
static inline uint64_t gs_flow_end_hash(const uint8_t *addr, uint16_t port, uint8_t family)
{
	uint64_t x = gs_load64(addr) ^ (gs_load64(addr + 8) * 0x9e3779b97f4a7c15ULL) ^
		     ((uint64_t)port << 8 | family);
	x *= 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 31);
}

/* The two ends' sum mixed down to 32 bits. */
static inline uint32_t gs_flow_hash_fold(uint64_t x)
{
	uint32_t h = (uint32_t)(x >> 32) ^ (uint32_t)x;
	h ^= h >> 16;
	h *= 0x7feb352dU;
	h ^= h >> 15;
	h *= 0x846ca68bU;
	h ^= h >> 16;
	return h;
}

/* The two ends summed: both directions hash alike without ordering the ends
 * first, then mixed down to 32 bits. */
static inline uint32_t gs_flow_hash(const uint8_t *src, uint16_t sport, const uint8_t *dst, uint16_t dport,
				    uint8_t family)
{
	return gs_flow_hash_fold(gs_flow_end_hash(src, sport, family) + gs_flow_end_hash(dst, dport, family));
}

/* gs_flow_hash of an IPv4 connection, the addresses read as they are in the
 * packet (4 bytes each), without making them 16 (read --threads: every
 * record of a walk). */
static inline uint32_t gs_flow_hash_v4(const uint8_t *src4, uint16_t sport, const uint8_t *dst4, uint16_t dport)
{
	uint8_t a[8] = { 0 }, b[8] = { 0 };
	uint64_t xa, xb;
	memcpy(a, src4, 4);
	memcpy(b, dst4, 4);
	/* gs_flow_end_hash with the address's last 8 bytes zero */
	xa = (gs_load64(a) ^ ((uint64_t)sport << 8 | 4)) * 0xbf58476d1ce4e5b9ULL;
	xb = (gs_load64(b) ^ ((uint64_t)dport << 8 | 4)) * 0xbf58476d1ce4e5b9ULL;
	return gs_flow_hash_fold((xa ^ (xa >> 31)) + (xb ^ (xb >> 31)));
}

#endif
