// SPDX-License-Identifier: BSD-2-Clause
/* libFuzzer harness: arbitrary bytes through read's decompression
 * (probe/decomp.c): gzip, zstd, or neither (the bytes replayed as they came),
 * read back in reads of varying sizes as libpcap's fread's would ask, from a
 * stream that can be put back at its start or not.  Invariants: a stream that
 * is not compressed comes back byte for byte; a compressed one never gives
 * more than the bound the harness sets, nor a read longer than asked; an
 * error leaves a reason.  The first input byte picks the read sizes, whether
 * the stream is seekable and whether a thread inflates it ahead; the rest is
 * the stream. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../probe/decomp.h"

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_decomp: invariant broken: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[1 << 16];
	char err[256];
	struct gs_decomp *d;
	FILE *in, *z;
	size_t total = 0, step;
	bool seekable;
	if (size < 1)
		return 0;
	seekable = data[0] & 1;
	/* bit 1: inflated on a thread ahead of the reader */
	step = 1 + ((size_t)data[0] >> 2) * 193; /* 1 .. 12160 bytes a read */
	data++;
	size--;
	/* (fmemopen refuses an empty buffer: an empty stream is /dev/null) */
	if (!(in = size ? fmemopen((void *)(uintptr_t)data, size, "rb") : fopen("/dev/null", "rb")))
		return 0;
	err[0] = '\0';
	if (gs_decomp_open(in, seekable, (data[-1] & 2) != 0, "in", &z, &d, err, sizeof err) != 0) {
		/* (only a compression it names, or no memory) */
		fclose(in);
		return 0;
	}
	for (;;) {
		size_t got = fread(out, 1, step, z);
		check(got <= step, "a read longer than asked");
		if (gs_decomp_kind(d) == GS_DECOMP_NONE)
			check(total + got <= size && memcmp(out, data + total, got) == 0,
			      "a stream that is not compressed comes back as it is");
		total += got;
		/* a small input may inflate a lot: a bound keeps the harness fast */
		if (got == 0 || total > (64u << 20))
			break;
	}
	if (gs_decomp_kind(d) == GS_DECOMP_NONE && !seekable)
		check(total == size, "every byte of a stream that is not compressed");
	if (ferror(z))
		check(gs_decomp_why(d) != NULL, "an error has its reason");
	fclose(z);
	return 0;
}
