/* SPDX-License-Identifier: BSD-2-Clause */
/* Number and list parsing for the command line: end pointer and range checked. */
#ifndef GS_OPTS_H
#define GS_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Decimal integer in [min, max]; a k/m/g suffix (x1024) when `size` is set. */
bool gs_parse_u64(const char *s, uint64_t min, uint64_t max, bool size, uint64_t *out);
/* Seconds with an optional fraction ("1.5"), as nanoseconds, in [0, max_ns]. */
bool gs_parse_seconds(const char *s, int64_t max_ns, int64_t *out);

/* Every comma-separated list of the command line goes through this: items are
 * cut at the commas and handed, NUL-terminated, to `item`, which returns NULL
 * when it takes the item or what is wrong with it ("not a port").  An empty
 * item (a comma at the start or the end, two in a row, or an empty list) and
 * an item longer than GS_LIST_ITEM_MAX are refused.  false: `why` holds one
 * line saying which item and why (the caller prefixes the option). */
#define GS_LIST_ITEM_MAX 63
typedef const char *(*gs_list_item_fn)(void *arg, const char *item);
bool gs_parse_list(const char *s, gs_list_item_fn item, void *arg, char *why, size_t whylen);

/* "2809,683,10000-10010" into a 65536-bit map (cleared first). */
bool gs_parse_ports(const char *s, uint8_t bitmap[8192], char *why, size_t whylen);
/* "1234,5678" appended to pids[*n] (up to max), each 1..2^31-1. */
bool gs_parse_pids(const char *s, uint32_t *pids, uint32_t *n, uint32_t max, char *why, size_t whylen);

/* True when `out` and stderr are the same terminal: a progress line on stderr and the
 * rows written to `out` share the screen. */
bool gs_same_terminal(FILE *out);

#endif
