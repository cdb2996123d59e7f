/* SPDX-License-Identifier: BSD-2-Clause */
/* Decimal formatting for the per-call rows, without printf.
 *
 * snprintf parses its format and goes through stdio's string streams for every
 * field: on a CSV row of fifteen numbers that was most of the writer's time.
 * These write straight into a caller's buffer, which must have room for the
 * stated maximum, and never NUL-terminate (rows are lengths, not C strings).
 */
#ifndef GS_FMT_NUM_H
#define GS_FMT_NUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* "18446744073709551615" */
#define GS_FMT_U64_MAX 20
/* "-9223372036.854775808" (ns as seconds) and "-9223372036854775.808" (ns as
 * microseconds) are the longest: a sign, 10 or 16 integer digits, '.', 9 or 3 */
#define GS_FMT_FIXED_MAX 21
/* "255" */
#define GS_FMT_U8_MAX 3

/* v in decimal; returns the length (1..GS_FMT_U64_MAX). */
size_t gs_fmt_u64(char *dst, uint64_t v);
/* The same, inline, for a writer's per-row loop (sink_pairs.c): "00".."99" */
extern const char gs_fmt_pairs[201];
static inline __attribute__((always_inline)) size_t gs_fmt_u64_inline(char *dst, uint64_t v)
{
	unsigned n = 1;
	char *end;
	for (uint64_t w = v;;) {
		if (w < 10)
			break;
		if (w < 100) {
			n += 1;
			break;
		}
		if (w < 1000) {
			n += 2;
			break;
		}
		if (w < 10000) {
			n += 3;
			break;
		}
		w /= 10000;
		n += 4;
	}
	end = dst + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		end -= 2;
		memcpy(end, gs_fmt_pairs + 2 * r, 2);
	}
	if (v >= 10)
		memcpy(end - 2, gs_fmt_pairs + 2 * v, 2);
	else
		end[-1] = (char)('0' + v);
	return n;
}
/* exactly 9 digits of v (< 10^9), inline */
static inline __attribute__((always_inline)) void gs_fmt_9digits_inline(char *dst, uint32_t v)
{
	uint32_t hi = v / 10000, lo = v % 10000;
	dst[0] = (char)('0' + hi / 10000);
	hi %= 10000;
	memcpy(dst + 1, gs_fmt_pairs + 2 * (hi / 100), 2);
	memcpy(dst + 3, gs_fmt_pairs + 2 * (hi % 100), 2);
	memcpy(dst + 5, gs_fmt_pairs + 2 * (lo / 100), 2);
	memcpy(dst + 7, gs_fmt_pairs + 2 * (lo % 100), 2);
}
/* v in decimal (1..GS_FMT_U8_MAX bytes). */
size_t gs_fmt_u8(char *dst, uint8_t v);
/* exactly 9 digits of v (< 10^9), leading zeros kept: a time stamp's nanoseconds */
void gs_fmt_9digits(char *dst, uint32_t v);
/* ns with `dec` decimals, 9 (seconds.nanoseconds) or 3 (microseconds.nnn):
 * the integer part of |v| / 10^dec, '.', then exactly `dec` digits, with a
 * leading '-' when v < 0 (so -1 ns is "-0.000000001").  Any other dec is
 * treated as 3.  Returns the length (at most GS_FMT_FIXED_MAX). */
size_t gs_fmt_fixed(char *dst, int64_t v, int dec);

/* The word for n of something in the text people read: "1 call", "2 calls",
 * "0 calls" (fprintf(f, "%llu %s", n, gs_plural(n, "call", "calls"))). */
static inline const char *gs_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

#endif
