/* SPDX-License-Identifier: BSD-2-Clause */
/* The engine's tables sized by a limit (--max-flows, --max-open-calls, ...):
 * the limit is a ceiling, not memory taken up front.  A table is address space
 * reserved for it (mmap MAP_NORESERVE: not charged against the host's commit
 * limit), its pages zero until first written and made resident only then, as
 * the table fills; so a limit larger than the host's memory (--max-memory 64g
 * on a 24 GiB host) no longer fails at start, and memory still follows what
 * the input needs (calloc gave that too, but asked the kernel for the whole
 * size as committed memory first, which a large limit was refused). */
#ifndef GS_TABLE_MEM_H
#define GS_TABLE_MEM_H

#include <stddef.h>
#include <stdint.h>

/* The size of an open-addressing index for n entries: the power of two at
 * least n, 16 at least, 2^31 at most (the tables and the memory bound's
 * arithmetic use the same). */
static inline uint32_t gs_table_pow2(uint64_t n)
{
	uint32_t p = 16;
	while (p < n && p < (1u << 31))
		p <<= 1;
	return p;
}

/* `bytes` of zeroes, 64-byte aligned; NULL when even the address space is not
 * there.  Freed with gs_table_free (NULL is fine). */
void *gs_table_new(size_t bytes);
void gs_table_free(void *p);

#endif
