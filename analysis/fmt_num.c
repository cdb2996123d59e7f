/* SPDX-License-Identifier: BSD-2-Clause */
/* Two digits per division by 100 from a table: half the divisions of the
 * digit-by-digit loop, and no temporary buffer since the length is known first. */
#include "fmt_num.h"

#include <string.h>

const char gs_fmt_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

size_t gs_fmt_u64(char *dst, uint64_t v)
{
	return gs_fmt_u64_inline(dst, v);
}

void gs_fmt_9digits(char *dst, uint32_t v)
{
	/* 32-bit arithmetic and fixed positions: 1 + 4 pairs, no loop */
	gs_fmt_9digits_inline(dst, v);
}

size_t gs_fmt_u8(char *dst, uint8_t v)
{
	if (v >= 100) {
		dst[0] = (char)('0' + v / 100);
		memcpy(dst + 1, gs_fmt_pairs + 2 * (v % 100), 2);
		return 3;
	}
	if (v >= 10) {
		memcpy(dst, gs_fmt_pairs + 2 * v, 2);
		return 2;
	}
	dst[0] = (char)('0' + v);
	return 1;
}

size_t gs_fmt_fixed(char *dst, int64_t v, int dec)
{
	unsigned nd = dec == 9 ? 9 : 3;
	uint64_t div = nd == 9 ? 1000000000u : 1000u, u;
	size_t n = 0;
	if (v < 0) {
		dst[n++] = '-';
		/* |INT64_MIN| does not fit an int64_t: negate in unsigned arithmetic */
		u = (uint64_t)(-(v + 1)) + 1;
	} else {
		u = (uint64_t)v;
	}
	n += gs_fmt_u64(dst + n, u / div);
	dst[n++] = '.';
	if (nd == 9) {
		gs_fmt_9digits(dst + n, (uint32_t)(u % div));
	} else {
		uint32_t f = (uint32_t)(u % div);
		dst[n] = (char)('0' + f / 100);
		memcpy(dst + n + 1, gs_fmt_pairs + 2 * (f % 100), 2);
	}
	return n + nd;
}
