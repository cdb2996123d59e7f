/* Number and list parsing for the command line: end pointer and range checked. */
#ifndef GS_OPTS_H
#define GS_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Decimal integer in [min, max]; a k/m/g suffix (x1024) when `size` is set. */
bool gs_parse_u64(const char *s, uint64_t min, uint64_t max, bool size, uint64_t *out);
/* Seconds with an optional fraction ("1.5"), as nanoseconds, in [0, max_ns]. */
bool gs_parse_seconds(const char *s, int64_t max_ns, int64_t *out);
/* "2809,683,10000-10010" into a 65536-bit map. */
bool gs_parse_ports(const char *s, uint8_t bitmap[8192]);

/* True when `out` and stderr are the same terminal: a progress line on stderr and the
 * rows written to `out` share the screen. */
bool gs_same_terminal(FILE *out);

#endif
