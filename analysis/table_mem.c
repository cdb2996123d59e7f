// SPDX-License-Identifier: BSD-2-Clause
#include "table_mem.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

/* The mapping's length is kept in a 64-byte head before the table (the
 * table stays 64-byte aligned: the mapping is page-aligned). */
enum { HEAD = 64 };

void *gs_table_new(size_t bytes)
{
	size_t len;
	uint8_t *p;
	if (bytes > SIZE_MAX - HEAD)
		return NULL;
	len = bytes + HEAD;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, &len, sizeof len);
	return p + HEAD;
}

void gs_table_free(void *p)
{
	size_t len;
	if (!p)
		return;
	memcpy(&len, (uint8_t *)p - HEAD, sizeof len);
	munmap((uint8_t *)p - HEAD, len);
}
