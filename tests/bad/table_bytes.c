/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/bad/table_bytes.c: the bytes of the tables giopscope sizes from its limits.
 *
 *   table_bytes MAX_FLOWS MAX_OPEN_CALLS     prints: flows_bytes calls_bytes
 *
 * The same arithmetic as gs_engine_new() (analysis/engine.c), with the sizes of the
 * structures as compiled: the flow table, its LRU links, its index and the message-head
 * pool, and the side tables allocated on demand within the same bound (message logs, lists of
 * retransmitted ranges: as many as head slots); the call pool, its index and
 * its heaps. Built and run by
 * tests/integration/scale_hostile.sh to derive the memory bound its cases assert;
 * it includes the stages' headers (analysis/flows.h, calls.h), so a larger struct moves the
 * bound with it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "calls.h"
#include "engine.h"
#include "flows.h"

static unsigned long long pow2_at_least(unsigned long long n)
{
	unsigned long long p = 16;
	while (p < n && p < (1ull << 31))
		p <<= 1;
	return p;
}

int main(int argc, char **argv)
{
	struct gs_config c;
	if (argc != 3) {
		fputs("usage: table_bytes MAX_FLOWS MAX_OPEN_CALLS\n", stderr);
		return 2;
	}
	gs_config_default(&c);
	unsigned long long f = strtoull(argv[1], NULL, 10), n = strtoull(argv[2], NULL, 10);
	unsigned long long head_slots = f / 8 < 256 ? 256 : f / 8;
	unsigned long long flows = f * (sizeof(struct gs_flow) + sizeof(struct gs_lru)) + pow2_at_least(f * 2) * sizeof(uint32_t) +
				   head_slots * c.head_max + head_slots * sizeof(uint32_t) +
				   head_slots * sizeof(struct gs_msglog) +
				   head_slots * GS_RTX_PENDING * sizeof(struct gs_range);
	/* a call slot, its side record (taken by calls with a reply or evidence), the
	 * index and the one array both heaps share */
	unsigned long long calls = n * (sizeof(struct gs_ocall) + sizeof(struct gs_cext)) +
				   pow2_at_least(n * 2) * sizeof(uint32_t) + n * sizeof(struct gs_heap_ent);
	printf("%llu %llu\n", flows, calls);
	return 0;
}
